/* report_sweep.c — the sweeps of `speedy lab report` (report.h): the white paper's curves
 * of page load time against packet loss, round-trip time and queue size.
 *
 * A family is a link profile (without the "-RTT" suffix `speedy lab run --rtt` gives it)
 * and TLS on or off. A family's valid loads fall on link settings (loss, RTT, queue); a
 * variable that takes more than one value in a family is swept: its values are the
 * settings whose other two variables equal their most common value in the family — the
 * value found in the most distinct settings, the smallest on a tie — so a sweep never mixes
 * loads that differ in anything but the swept variable. A grid of RTT × loss gives the RTT
 * curve at the smallest loss and the loss curve at the smallest RTT.
 *
 * The queue is keyed by its setting, not its size: the default queue (one BDP, which grows
 * with the RTT) is one setting, "one BDP", so an RTT sweep with the default queue is not a
 * queue sweep as well; a --queue size is its own setting. A default queue that has the size
 * of a --queue used elsewhere in the family is the same link and counts as that size.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h" /* netem_model_default_queue_bytes: the emulator's own rule */
#include "report.h"

const char *report_variable_name(report_variable v) {
  return v == REPORT_LOSS ? "loss" : v == REPORT_RTT ? "RTT" : "queue";
}

void report_format_bytes(double bytes, char *out, size_t size) {
  if (bytes >= 1e6)
    snprintf(out, size, "%g MB", bytes / 1e6);
  else if (bytes >= 1e3)
    snprintf(out, size, "%g kB", bytes / 1e3);
  else
    snprintf(out, size, "%.0f B", bytes);
}

int report_link_of(const json_t *line, report_link *out) {
  const json_t *link = json_object_get(line, "link");
  if (!json_is_object(link)) return -1;
  memset(out, 0, sizeof *out);
  const char *profile = json_string_value(json_object_get(link, "profile"));
  snprintf(out->profile, sizeof out->profile, "%s", profile ? profile : "no link");
  out->loss = json_number_value(json_object_get(link, "loss"));
  out->rtt_ms = json_number_value(json_object_get(link, "rtt_ms"));
  /* `speedy lab run --rtt` names the link "<profile>-<RTT as an integer>". */
  char *dash = strrchr(out->profile, '-');
  if (dash != NULL && dash[1] != '\0' && strspn(dash + 1, "0123456789") == strlen(dash + 1) &&
      strtod(dash + 1, NULL) == floor(out->rtt_ms))
    *dash = '\0';
  double down_bps = json_number_value(json_object_get(link, "down_bps"));
  double rtt_ns = out->rtt_ms > 0 ? round(out->rtt_ms * 1e6) : 0;
  double standard = (double)netem_model_default_queue_bytes(
      down_bps > 0 && down_bps < 1e15 ? (uint64_t)down_bps : 0,
      rtt_ns < 1e15 ? (uint64_t)rtt_ns : 0);
  const json_t *queue = json_object_get(link, "queue_down_bytes");
  /* 0 (or nothing) is the emulator's "default". */
  out->queue_bytes = json_number_value(queue) > 0 ? json_number_value(queue) : standard;
  out->queue_default = fabs(out->queue_bytes - standard) < 0.5;
  return 0;
}

static int same(double a, double b) { return fabs(a - b) <= 1e-9 * fmax(1, fabs(a)); }

void report_sweep_format_value(const report_sweep *s, const report_sweep_point *p, char *out,
                               size_t size) {
  if (s->variable == REPORT_LOSS) {
    snprintf(out, size, "%g%%", p->value * 100);
  } else if (s->variable == REPORT_RTT) {
    snprintf(out, size, "%g ms", p->value);
  } else {
    char bytes[32];
    report_format_bytes(p->value, bytes, sizeof bytes);
    snprintf(out, size, "%s%s", bytes, p->queue_default ? " (one BDP)" : "");
  }
}

/* A valid load with a link. */
typedef struct observation {
  size_t family, setting, page, config;
  double plt_ms;
  report_link link;
  double value[REPORT_N_VARIABLES]; /* queue: 0 for the default setting, else the size */
} observation;

/* A family's link setting. */
typedef struct setting {
  size_t family;
  double value[REPORT_N_VARIABLES];
  double queue_bytes; /* the size, also for the default */
} setting;

typedef struct accumulator {
  double sum;
  size_t n;
} accumulator;

typedef struct sweep_state {
  const report *r;
  observation *obs;
  size_t n_obs;
  char **families;
  size_t n_families;
  setting *settings;
  size_t n_settings;
  accumulator *acc; /* [setting][config][page]: the page's valid repetitions */
} sweep_state;

static size_t intern_family(sweep_state *st, const char *name) {
  for (size_t i = 0; i < st->n_families; i++)
    if (strcmp(st->families[i], name) == 0) return i;
  char **grown = realloc(st->families, (st->n_families + 1) * sizeof *grown);
  if (grown == NULL) return SIZE_MAX;
  st->families = grown;
  if ((grown[st->n_families] = strdup(name)) == NULL) return SIZE_MAX;
  return st->n_families++;
}

static size_t intern_setting(sweep_state *st, const observation *o) {
  for (size_t i = 0; i < st->n_settings; i++) {
    const setting *s = &st->settings[i];
    if (s->family == o->family && same(s->value[0], o->value[0]) &&
        same(s->value[1], o->value[1]) && same(s->value[2], o->value[2]))
      return i;
  }
  setting *grown = realloc(st->settings, (st->n_settings + 1) * sizeof *grown);
  if (grown == NULL) return SIZE_MAX;
  st->settings = grown;
  setting *s = &grown[st->n_settings];
  s->family = o->family;
  memcpy(s->value, o->value, sizeof s->value);
  s->queue_bytes = o->link.queue_bytes;
  return st->n_settings++;
}

/* The valid loads, their families and settings. */
static int collect(sweep_state *st) {
  const report *r = st->r;
  size_t i;
  const json_t *line;
  st->obs = calloc(json_array_size(r->lines) + 1, sizeof *st->obs);
  if (st->obs == NULL) return -1;
  json_array_foreach(r->lines, i, line) {
    observation *o = &st->obs[st->n_obs];
    if (!json_is_true(json_object_get(line, "valid")) || report_link_of(line, &o->link) != 0)
      continue;
    const char *config = report_config_of(line), *page = report_page_of(line);
    for (o->config = 0; o->config < r->n_configs; o->config++)
      if (strcmp(r->configs[o->config], config) == 0) break;
    for (o->page = 0; o->page < r->n_pages; o->page++)
      if (strcmp(r->pages[o->page], page) == 0) break;
    if (o->config == r->n_configs || o->page == r->n_pages) continue;
    char family[96];
    snprintf(family, sizeof family, "%s, TLS %s", o->link.profile,
             json_is_true(json_object_get(line, "tls")) ? "on" : "off");
    if ((o->family = intern_family(st, family)) == SIZE_MAX) return -1;
    o->plt_ms = json_number_value(json_object_get(line, "plt_ms"));
    o->value[REPORT_LOSS] = o->link.loss;
    o->value[REPORT_RTT] = o->link.rtt_ms;
    o->value[REPORT_QUEUE] = o->link.queue_default ? 0 : o->link.queue_bytes;
    st->n_obs++;
  }
  /* A default queue of the size of a --queue in the same family is that queue. The
   * explicit sizes are few (one per run): collect them first. */
  observation **explicit = calloc(st->n_obs + 1, sizeof *explicit);
  size_t n_explicit = 0;
  if (explicit == NULL) return -1;
  for (size_t a = 0; a < st->n_obs; a++) {
    observation *o = &st->obs[a];
    int known = o->link.queue_default;
    for (size_t b = 0; b < n_explicit && !known; b++)
      known = explicit[b] -> family == o -> family &&same(explicit[b] -> value[REPORT_QUEUE],
                                                          o -> value[REPORT_QUEUE]);
    if (!known) explicit[n_explicit++] = o;
  }
  for (size_t a = 0; a < st->n_obs; a++) {
    observation *o = &st->obs[a];
    for (size_t b = 0; b < n_explicit && o->link.queue_default; b++)
      if (explicit[b] -> family == o -> family && same(explicit[b] -> value[REPORT_QUEUE],
                                                       o -> link.queue_bytes)) {
        o->value[REPORT_QUEUE] = o->link.queue_bytes;
        break;
      }
  }
  free(explicit);
  for (size_t a = 0; a < st->n_obs; a++)
    if ((st->obs[a].setting = intern_setting(st, &st->obs[a])) == SIZE_MAX) return -1;
  size_t n_cells = st->n_settings * r->n_configs * r->n_pages;
  st->acc = calloc(n_cells ? n_cells : 1, sizeof *st->acc);
  if (st->acc == NULL) return -1;
  for (size_t a = 0; a < st->n_obs; a++) {
    const observation *o = &st->obs[a];
    accumulator *cell = &st->acc[(o->setting * r->n_configs + o->config) * r->n_pages + o->page];
    cell->sum += o->plt_ms;
    cell->n++;
  }
  return 0;
}

/* The most common value of variable v over the family's settings (in the most settings;
 * the smallest on a tie); sets *distinct to the number of values. */
static double most_common(const sweep_state *st, size_t family, report_variable v,
                          size_t *distinct) {
  double best = 0;
  size_t best_count = 0;
  *distinct = 0;
  for (size_t i = 0; i < st->n_settings; i++) {
    const setting *s = &st->settings[i];
    if (s->family != family) continue;
    size_t count = 0, first = i;
    for (size_t j = 0; j < st->n_settings; j++)
      if (st->settings[j].family == family && same(st->settings[j].value[v], s->value[v])) {
        if (count++ == 0) first = j;
      }
    if (first != i) continue; /* counted at its first setting */
    (*distinct)++;
    if (count > best_count || (count == best_count && s->value[v] < best))
      best = s->value[v], best_count = count;
  }
  return best;
}

static int compare_points(const void *a, const void *b) {
  double x = ((const report_sweep_point *)a)->value, y = ((const report_sweep_point *)b)->value;
  return (x > y) - (x < y);
}

static double accumulated_mean(const sweep_state *st, size_t at, size_t config, size_t page) {
  const accumulator *a = &st->acc[(at * st->r->n_configs + config) * st->r->n_pages + page];
  return a->n > 0 ? a->sum / (double)a->n : 0;
}

/* The figures of one setting. */
static int point_of(const sweep_state *st, size_t setting_index, report_variable v,
                    report_sweep_point *p) {
  const report *r = st->r;
  const setting *s = &st->settings[setting_index];
  double *plt = calloc(r->n_pages + 1, sizeof *plt), *ratio = calloc(r->n_pages + 1, sizeof *ratio);
  if (plt == NULL || ratio == NULL) {
    free(plt);
    free(ratio);
    return -1;
  }
  memset(p, 0, sizeof *p);
  p->value = v == REPORT_QUEUE ? s->queue_bytes : s->value[v];
  p->queue_default = s->value[REPORT_QUEUE] == 0;
  for (size_t page = 0; page < r->n_pages; page++)
    for (size_t c = 0; c < r->n_configs; c++)
      if (accumulated_mean(st, setting_index, c, page) > 0) {
        p->pages++;
        break;
      }
  /* The configurations at this value, and the pages valid in every one of them: a curve
   * compares configurations, so each point is over the same pages for all. */
  int present[REPORT_MAX_CONFIGS] = {0};
  for (size_t c = 0; c < r->n_configs; c++)
    for (size_t page = 0; page < r->n_pages && !present[c]; page++)
      present[c] = accumulated_mean(st, setting_index, c, page) > 0;
  unsigned char *common = calloc(r->n_pages + 1, 1);
  if (common == NULL) {
    free(plt);
    free(ratio);
    return -1;
  }
  for (size_t page = 0; page < r->n_pages; page++) {
    common[page] = 1;
    for (size_t c = 0; c < r->n_configs; c++)
      if (present[c] && accumulated_mean(st, setting_index, c, page) <= 0) common[page] = 0;
    p->comparable += common[page];
  }
  for (size_t c = 0; c < r->n_configs; c++) {
    size_t n = 0, paired = 0;
    for (size_t page = 0; page < r->n_pages; page++) {
      double mine = accumulated_mean(st, setting_index, c, page);
      double base = accumulated_mean(st, setting_index, r->baseline, page);
      if (mine <= 0 || !common[page]) continue;
      plt[n++] = mine;
      if (base > 0) ratio[paired++] = mine / base;
    }
    p->plt_ms[c] = lab_stats_geomean(plt, n);
    p->n_pages[c] = n;
    p->ratio[c] = lab_stats_geomean(ratio, paired);
    p->paired[c] = paired;
  }
  free(common);
  free(plt);
  free(ratio);
  return 0;
}

/* The sweep of variable v in a family, if there is one: appended to r->sweeps. */
static int sweep_of(sweep_state *st, report *r, size_t family, report_variable v) {
  size_t distinct;
  double held[REPORT_N_VARIABLES];
  most_common(st, family, v, &distinct);
  if (distinct < 2) return 0;
  for (int w = 0; w < REPORT_N_VARIABLES; w++)
    if (w != (int)v) held[w] = most_common(st, family, (report_variable)w, &distinct);
  report_sweep sweep;
  memset(&sweep, 0, sizeof sweep);
  sweep.points = calloc(st->n_settings, sizeof *sweep.points);
  if (sweep.points == NULL) return -1;
  size_t a_held = SIZE_MAX; /* a setting of the sweep, for the held queue's size */
  for (size_t i = 0; i < st->n_settings; i++) {
    const setting *s = &st->settings[i];
    int in = s->family == family;
    for (int w = 0; w < REPORT_N_VARIABLES && in; w++)
      if (w != (int)v && !same(s->value[w], held[w])) in = 0;
    if (!in) continue;
    if (point_of(st, i, v, &sweep.points[sweep.n_points++]) != 0) {
      free(sweep.points);
      return -1;
    }
    a_held = i;
  }
  if (sweep.n_points < 2) { /* no two settings differ in v alone */
    free(sweep.points);
    return 0;
  }
  qsort(sweep.points, sweep.n_points, sizeof *sweep.points, compare_points);
  snprintf(sweep.family, sizeof sweep.family, "%s", st->families[family]);
  sweep.variable = v;
  char parts[REPORT_N_VARIABLES][48];
  size_t n_parts = 0;
  for (int w = 0; w < REPORT_N_VARIABLES; w++) {
    if (w == (int)v) continue;
    if (w == REPORT_LOSS) {
      snprintf(parts[n_parts++], sizeof parts[0], "loss %g%%", held[w] * 100);
    } else if (w == REPORT_RTT) {
      snprintf(parts[n_parts++], sizeof parts[0], "RTT %g ms", held[w]);
    } else {
      char bytes[32];
      report_format_bytes(held[w] != 0 ? held[w] : st->settings[a_held].queue_bytes, bytes,
                          sizeof bytes);
      if (held[w] == 0 && v == REPORT_RTT)
        snprintf(parts[n_parts++], sizeof parts[0], "queue one BDP");
      else
        snprintf(parts[n_parts++], sizeof parts[0], "queue %s%s", bytes,
                 held[w] == 0 ? " (one BDP)" : "");
    }
  }
  snprintf(sweep.held, sizeof sweep.held, "%s, %s", parts[0], parts[1]);
  report_sweep *grown = realloc(r->sweeps, (r->n_sweeps + 1) * sizeof *grown);
  if (grown == NULL) {
    free(sweep.points);
    return -1;
  }
  r->sweeps = grown;
  grown[r->n_sweeps++] = sweep;
  return 0;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int report_sweeps_build(report *r) {
  sweep_state st = {.r = r};
  int rc = collect(&st);
  /* Families by name; their indexes in the settings stay valid through the order list. */
  char **order = calloc(st.n_families + 1, sizeof *order);
  if (order == NULL) rc = -1;
  for (size_t f = 0; rc == 0 && f < st.n_families; f++) order[f] = st.families[f];
  if (rc == 0) qsort(order, st.n_families, sizeof *order, compare_names);
  for (size_t k = 0; rc == 0 && k < st.n_families; k++) {
    size_t f = 0;
    while (st.families[f] != order[k]) f++;
    for (int v = 0; rc == 0 && v < REPORT_N_VARIABLES; v++)
      rc = sweep_of(&st, r, f, (report_variable)v);
  }
  free(order);
  for (size_t f = 0; f < st.n_families; f++) free(st.families[f]);
  free(st.families);
  free(st.settings);
  free(st.obs);
  free(st.acc);
  return rc;
}

void report_sweeps_free(report *r) {
  for (size_t i = 0; i < r->n_sweeps; i++) free(r->sweeps[i].points);
  free(r->sweeps);
  r->sweeps = NULL;
  r->n_sweeps = 0;
}

void report_sweeps_print(FILE *out, const report *r) {
  const char *baseline = r->n_configs ? r->configs[r->baseline] : "-";
  for (size_t i = 0; i < r->n_sweeps; i++) {
    const report_sweep *s = &r->sweeps[i];
    int shown[REPORT_MAX_CONFIGS] = {0};
    for (size_t c = 0; c < r->n_configs; c++)
      for (size_t k = 0; k < s->n_points; k++) shown[c] |= s->points[k].n_pages[c] > 0;
    fprintf(out,
            "Sweep of %s: %s (%s)\ngeometric mean over the pages valid in every configuration "
            "at that value (of all with a valid load) of page load time in ms (and of the "
            "per-page ratio to %s)\n%-16s %7s",
            report_variable_name(s->variable), s->family, s->held, baseline,
            s->variable == REPORT_LOSS  ? "loss"
            : s->variable == REPORT_RTT ? "RTT"
                                        : "queue",
            "pages");
    for (size_t c = 0; c < r->n_configs; c++)
      if (shown[c]) fprintf(out, " %16s", r->configs[c]);
    fputc('\n', out);
    for (size_t k = 0; k < s->n_points; k++) {
      const report_sweep_point *p = &s->points[k];
      char value[64];
      report_sweep_format_value(s, p, value, sizeof value);
      char pages[32];
      snprintf(pages, sizeof pages, "%zu/%zu", p->comparable, p->pages);
      fprintf(out, "%-16s %7s", value, pages);
      for (size_t c = 0; c < r->n_configs; c++) {
        char cell[48] = "-";
        if (!shown[c]) continue;
        if (p->n_pages[c] > 0 && p->paired[c] > 0 && c != r->baseline)
          snprintf(cell, sizeof cell, "%.0f (%.3f)", p->plt_ms[c], p->ratio[c]);
        else if (p->n_pages[c] > 0)
          snprintf(cell, sizeof cell, "%.0f", p->plt_ms[c]);
        fprintf(out, " %16s", cell);
      }
      fputc('\n', out);
    }
    fputc('\n', out);
  }
}
