/* report.c — the figures and text tables of `speedy lab report` (report.h).
 *
 * Per link group (link profile, loss, TLS) and configuration, over the pages with valid
 * loads (each page's value is the mean over its repetitions): mean and median page load
 * time; the white paper's metric 1 − mean(config) ÷ mean(HTTP/1.1); the geometric mean of
 * the per-page ratio config ÷ HTTP/1.1 with a bootstrap 95% confidence interval (pages
 * differ in size by orders of magnitude; a plain mean would be the largest page's); the
 * geometric mean of PLT ÷ lower bound; and the share of HTTP/1.1's distance to the bound
 * the configuration recovers. HTTP/1.1 is http1-fcfs (the first configuration when absent).
 * A group whose loads ran with different queue sizes is split by queue. The sweeps over
 * loss, RTT and queue size are found and printed by report_sweep.c; the loader against
 * Chromium by report_validate.c.
 */
#define _GNU_SOURCE
#include "report.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hdr.h"
#include "matrix.h"
#include "report_validate.h"
#include "run.h"

static size_t intern(char ***list, size_t *n, const char *s) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*list)[i], s) == 0) return i;
  char **grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (grown == NULL) return SIZE_MAX;
  *list = grown;
  grown[*n] = strdup(s);
  if (grown[*n] == NULL) return SIZE_MAX;
  return (*n)++;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Names that reach the HTML unescaped must be plain: [A-Za-z0-9._/-], at most 32 bytes. */
static const char *plain_config(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > 32 ||
      strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") != n)
    return "other";
  return name;
}

/* The configuration of a line: its "config", else derived from the loader's fields. */
const char *report_config_of(const json_t *line) {
  const char *c = json_string_value(json_object_get(line, "config"));
  /* Loads of --client chromium are configurations of their own beside the loader's. */
  const char *client = json_string_value(json_object_get(line, "client"));
  if (client != NULL && strcmp(client, "chromium") == 0) {
    static const char *const browser[][2] = {
        {"http1-single", "chromium-single"},       {"http1-fcfs", "chromium-fcfs"},
        {"h2-multi", "chromium-h2-multi"},         {"h2-single", "chromium-h2-single"},
        {"h2-coalesced", "chromium-h2-coalesced"}, {"h2-hint", "chromium-h2-hint"}};
    for (size_t i = 0; c != NULL && i < sizeof browser / sizeof browser[0]; i++)
      if (strcmp(c, browser[i][0]) == 0) return browser[i][1];
    return "chromium-other";
  }
  if (c != NULL) return plain_config(c);
  const char *protocol = json_string_value(json_object_get(line, "protocol"));
  const char *mode = json_string_value(json_object_get(line, "mode"));
  const char *dispatch = json_string_value(json_object_get(line, "dispatch"));
  int single = mode != NULL && strcmp(mode, "single-domain") == 0;
  if (protocol != NULL && strncmp(protocol, "http", 4) == 0)
    return single                                          ? "http1-single"
           : dispatch && strcmp(dispatch, "priority") == 0 ? "http1-prio"
                                                           : "http1-fcfs";
  int h2 = protocol != NULL && strcmp(protocol, "h2") == 0;
  if (json_is_true(json_object_get(line, "push"))) return h2 ? "h2-push" : "spdy-push";
  if (json_is_true(json_object_get(line, "hint"))) return h2 ? "h2-hint" : "spdy-hint";
  if (h2 && mode != NULL && strcmp(mode, "coalesced") == 0) return "h2-coalesced";
  if (h2) return single ? "h2-single" : "h2-multi";
  return single ? "spdy-single" : "spdy-multi";
}

const char *report_page_of(const json_t *line) {
  const char *page = json_string_value(json_object_get(line, "page"));
  if (page == NULL) page = json_string_value(json_object_get(line, "plan"));
  return page ? page : "?";
}

static void group_of(const json_t *line, char *out, size_t size) {
  const json_t *link = json_object_get(line, "link");
  const char *profile = json_string_value(json_object_get(link, "profile"));
  /* --dns-rtt changes every load time: such loads form groups of their own. */
  double dns_ms =
      json_number_value(json_object_get(json_object_get(line, "settings"), "dns_rtt_ms"));
  char dns[32] = "";
  if (dns_ms > 0) snprintf(dns, sizeof dns, ", DNS %g ms", dns_ms);
  snprintf(out, size, "%s, loss %g%%, TLS %s%s", profile ? profile : "no link",
           json_number_value(json_object_get(link, "loss")) * 100,
           json_is_true(json_object_get(line, "tls")) ? "on" : "off", dns);
}

/* Groups whose lines ran with more than one queue size (results of several runs with
 * different --queue in one file): their names say the queue, so that they are not mixed. */
typedef struct queue_groups {
  char **names;
  double *first;
  int *mixed;
  size_t n;
} queue_groups;

static int queue_groups_add(queue_groups *q, const char *group, double queue) {
  size_t n = q->n;
  size_t i = intern(&q->names, &q->n, group);
  if (i == SIZE_MAX) return -1;
  if (i == n) {
    double *first = realloc(q->first, q->n * sizeof *first);
    if (first == NULL) return -1;
    q->first = first;
    int *mixed = realloc(q->mixed, q->n * sizeof *mixed);
    if (mixed == NULL) return -1;
    q->mixed = mixed;
    first[i] = queue, mixed[i] = 0;
  } else if (q->first[i] != queue) {
    q->mixed[i] = 1;
  }
  return 0;
}

static void queue_groups_free(queue_groups *q) {
  for (size_t i = 0; i < q->n; i++) free(q->names[i]);
  free(q->names);
  free(q->first);
  free(q->mixed);
}

/* The line's group, with its queue when the group's lines differ in queue size. */
static void group_name(const queue_groups *q, const json_t *line, char *out, size_t size) {
  group_of(line, out, size);
  report_link link;
  for (size_t i = 0; i < q->n; i++) {
    if (strcmp(q->names[i], out) != 0 || !q->mixed[i] || report_link_of(line, &link) != 0) continue;
    char bytes[32];
    size_t len = strlen(out);
    report_format_bytes(link.queue_bytes, bytes, sizeof bytes);
    snprintf(out + len, size - len, ", queue %s%s", bytes, link.queue_default ? " (one BDP)" : "");
    return;
  }
}

report_cell *report_cell_at(const report *r, size_t g, size_t c, size_t p) {
  return &r->cells[(g * r->n_configs + c) * r->n_pages + p];
}

report_row *report_row_at(const report *r, size_t g, size_t c) {
  return &r->rows[g * r->n_configs + c];
}

static int config_rank(const char *name) {
  int c = lab_config_parse(name);
  return c < 0 ? LAB_N_CONFIGS : c;
}

static int compare_config(const void *a, const void *b) {
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  int d = config_rank(x) - config_rank(y);
  return d != 0 ? d : strcmp(x, y);
}

/* Is page p comparable in group g: a valid load of every configuration the group ran? */
static int comparable(const report *r, size_t g, size_t p) {
  int any = 0;
  for (size_t c = 0; c < r->n_configs; c++) {
    if (!r->group_config[g * r->n_configs + c]) continue;
    if (!report_cell_at(r, g, c, p)->present) return 0;
    any = 1;
  }
  return any;
}

static void compute_row(report *r, size_t g, size_t c, uint64_t seed) {
  report_row *row = report_row_at(r, g, c);
  size_t n = r->n_pages;
  double *plt = calloc(n ? n : 1, sizeof *plt), *ratio = calloc(n ? n : 1, sizeof *ratio);
  double *own = calloc(n ? n : 1, sizeof *own);
  size_t k = 0, paired = 0, n_own = 0;
  double sum_config = 0, sum_base = 0, sum_bound = 0, log_bound = 0;
  size_t n_bound = 0;
  if (plt == NULL || ratio == NULL || own == NULL) goto out;
  for (size_t p = 0; p < n; p++) {
    const report_cell *cell = report_cell_at(r, g, c, p);
    if (!cell->present) continue;
    own[n_own++] = cell->plt_ms;
    /* Figures that compare configurations: only over the pages every one of them has. */
    if (!comparable(r, g, p)) continue;
    plt[k++] = cell->plt_ms;
    if (cell->bound_ms > 0) {
      log_bound += log(cell->plt_ms / cell->bound_ms);
      n_bound++;
    }
    const report_cell *base = report_cell_at(r, g, r->baseline, p);
    if (base->present && base->plt_ms > 0 && cell->plt_ms > 0) {
      ratio[paired++] = cell->plt_ms / base->plt_ms;
      sum_config += cell->plt_ms;
      sum_base += base->plt_ms;
      sum_bound += cell->bound_ms;
    }
  }
  row->pages = k;
  row->mean_ms = lab_stats_mean(plt, k);
  row->median_ms = lab_stats_median(plt, k);
  row->bound_ratio = n_bound ? exp(log_bound / (double)n_bound) : 0;
  row->paired = paired;
  row->valid_pages = n_own;
  row->valid_mean_ms = lab_stats_mean(own, n_own);
  row->valid_median_ms = lab_stats_median(own, n_own);
  if (paired > 0) {
    row->has_ratio =
        lab_stats_bootstrap_geomean(ratio, paired, 2000, seed + g * 31 + c, &row->ratio) == 0;
    row->paper_metric = 1 - sum_config / sum_base;
    row->recovered =
        sum_base - sum_bound > 0 ? (sum_base - sum_config) / (sum_base - sum_bound) : 0;
    qsort(ratio, paired, sizeof *ratio, compare_double);
    r->ratios[g * r->n_configs + c] = ratio;
    r->n_ratios[g * r->n_configs + c] = paired;
    ratio = NULL;
  }
out:
  free(plt);
  free(ratio);
  free(own);
}

/* ---- what the figures leave out ------------------------------------------------------- */

/* Counts reason in *list (a new entry the first time, with example). Returns 0 or -1. */
static int reason_count(report_reason **list, size_t *n, const char *reason, const char *example) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*list)[i].reason, reason) == 0) {
      (*list)[i].count++;
      return 0;
    }
  report_reason *grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  *list = grown;
  report_reason *r = &grown[*n];
  r->reason = strdup(reason);
  r->example = strdup(example != NULL ? example : "");
  r->count = 1;
  if (r->reason == NULL || r->example == NULL) {
    free(r->reason);
    free(r->example);
    return -1;
  }
  (*n)++;
  return 0;
}

static void reasons_free(report_reason *list, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(list[i].reason);
    free(list[i].example);
  }
  free(list);
}

static int by_count(const void *a, const void *b) {
  const report_reason *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->reason, y->reason);
}

/* A reason as a class, so that the same failure on different pages, resources and sizes
 * counts once: the loader's "N of M resources wrong; first #I PATH: WHAT" keeps WHAT, URLs
 * become "URL", and with numbers, digits become "#". */
static void reason_class(const char *reason, int numbers, char *out, size_t size) {
  const char *first = strstr(reason, "; first #");
  if (first != NULL) {
    const char *what = strstr(first, ": ");
    if (what != NULL) reason = what + 2;
  }
  size_t o = 0;
  for (const char *p = reason; *p != '\0' && o + 4 < size;) {
    if (strncmp(p, "http://", 7) == 0 || strncmp(p, "https://", 8) == 0) {
      memcpy(out + o, "URL", 3);
      o += 3;
      p += strcspn(p, " ,;)");
    } else if (numbers && *p >= '0' && *p <= '9') {
      out[o++] = '#';
      p += strspn(p, "0123456789.");
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = '\0';
}

/* A speedy-lab-skip/1 line. Returns 0 or -1 (out of memory). */
static int take_skip(report *r, const json_t *line) {
  const char *reason = json_string_value(json_object_get(line, "reason"));
  const char *key = json_string_value(json_object_get(line, "key"));
  char class[256];
  reason_class(reason != NULL ? reason : "no reason given", 0, class, sizeof class);
  r->n_skipped++;
  return reason_count(&r->skipped, &r->n_skipped_reasons, class, key);
}

/* A Chromium load's browser_work (its renderer's main thread up to the load event) into the
 * cell's running means; a line without it, or with a figure missing, counts for none. */
static void take_browser_work(report_cell *cell, const json_t *work) {
  const json_t *tasks = json_object_get(work, "tasks_ms"),
               *script = json_object_get(work, "script_ms"),
               *style = json_object_get(work, "style_ms"),
               *layout = json_object_get(work, "layout_ms");
  if (!json_is_number(tasks) || !json_is_number(script) || !json_is_number(style) ||
      !json_is_number(layout))
    return;
  int k = cell->work_loads++;
  cell->work_tasks_ms = (cell->work_tasks_ms * k + json_number_value(tasks)) / (k + 1);
  cell->work_script_ms = (cell->work_script_ms * k + json_number_value(script)) / (k + 1);
  cell->work_style_layout_ms =
      (cell->work_style_layout_ms * k + json_number_value(style) + json_number_value(layout)) /
      (k + 1);
}

/* The left_out counts of each page's first line (every line of a page has the same). */
static int take_left_out(report *r, const json_t *line, char ***seen, size_t *n_seen) {
  const json_t *left_out = json_object_get(line, "left_out");
  if (!json_is_object(left_out) || json_object_size(left_out) == 0) return 0;
  size_t before = *n_seen;
  if (intern(seen, n_seen, report_page_of(line)) == SIZE_MAX) return -1;
  if (*n_seen == before) return 0; /* this page's are counted */
  const char *why;
  const json_t *count;
  json_object_foreach((json_t *)left_out, why, count) {
    for (json_int_t i = 0; i < json_integer_value(count); i++) {
      if (reason_count(&r->left_out, &r->n_left_out_reasons, why, report_page_of(line)) != 0)
        return -1;
      r->n_left_out++;
    }
  }
  return 0;
}

int report_build(const char *results, uint64_t seed, report *r, char *err, size_t err_size) {
  memset(r, 0, sizeof *r);
  FILE *f = fopen(results, "r");
  if (f == NULL) {
    snprintf(err, err_size, "cannot open %s: %m", results);
    return -1;
  }
  r->lines = json_array();
  char *text = NULL;
  size_t cap = 0, lineno = 0;
  char group[256];
  while (getline(&text, &cap, f) > 0) {
    lineno++;
    if (text[strspn(text, " \t\r\n")] == '\0') continue;
    json_error_t jerr;
    json_t *line = json_loads(text, 0, &jerr);
    const char *format = json_string_value(json_object_get(line, "format"));
    if (format != NULL && strcmp(format, LAB_MATRIX_FORMAT) == 0) { /* what the run was */
      json_decref(line);
      continue;
    }
    if (format != NULL && strcmp(format, LAB_RUN_SKIP_FORMAT) == 0) {
      int rc = take_skip(r, line);
      json_decref(line);
      if (rc == 0) continue;
      snprintf(err, err_size, "out of memory");
      free(text);
      fclose(f);
      return -1;
    }
    if (line == NULL || format == NULL || strcmp(format, "speedy-lab-result/1") != 0) {
      snprintf(err, err_size, "%s:%zu: %s", results, lineno,
               line == NULL ? jerr.text
                            : "not a speedy-lab-result/1 or " LAB_RUN_SKIP_FORMAT " line");
      json_decref(line);
      free(text);
      fclose(f);
      return -1;
    }
    json_array_append_new(r->lines, line);
  }
  free(text);
  fclose(f);
  /* Names first, then the cells. */
  size_t i;
  json_t *line;
  queue_groups queues = {0};
  json_array_foreach(r->lines, i, line) {
    report_link link;
    group_of(line, group, sizeof group);
    if (report_link_of(line, &link) == 0 &&
        queue_groups_add(&queues, group, link.queue_bytes) != 0) {
      queue_groups_free(&queues);
      snprintf(err, err_size, "out of memory");
      return -1;
    }
  }
  json_array_foreach(r->lines, i, line) {
    group_name(&queues, line, group, sizeof group);
    intern(&r->pages, &r->n_pages, report_page_of(line));
    intern(&r->groups, &r->n_groups, group);
    const char *config = report_config_of(line);
    int known = 0;
    for (size_t c = 0; c < r->n_configs; c++) known |= strcmp(r->configs[c], config) == 0;
    if (!known && r->n_configs < REPORT_MAX_CONFIGS) r->configs[r->n_configs++] = strdup(config);
  }
  qsort(r->configs, r->n_configs, sizeof r->configs[0], compare_config);
  qsort(r->groups, r->n_groups, sizeof r->groups[0], compare_config); /* by name */
  r->baseline = 0;
  for (size_t c = 0; c < r->n_configs; c++)
    if (strcmp(r->configs[c], "http1-fcfs") == 0) r->baseline = c;
  size_t n_cells = r->n_groups * r->n_configs * r->n_pages;
  r->cells = calloc(n_cells ? n_cells : 1, sizeof *r->cells);
  r->rows = calloc(r->n_groups * r->n_configs + 1, sizeof *r->rows);
  r->ratios = calloc(r->n_groups * r->n_configs + 1, sizeof *r->ratios);
  r->n_ratios = calloc(r->n_groups * r->n_configs + 1, sizeof *r->n_ratios);
  r->comparable = calloc(r->n_groups + 1, sizeof *r->comparable);
  r->group_config = calloc(r->n_groups * r->n_configs + 1, 1);
  if (r->cells == NULL || r->rows == NULL || r->ratios == NULL || r->n_ratios == NULL ||
      r->comparable == NULL || r->group_config == NULL) {
    queue_groups_free(&queues);
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  char **left_out_pages = NULL;
  size_t n_left_out_pages = 0;
  int failed = 0;
  /* Each cell's page load times, for its median (freed once it is known). */
  double **samples = calloc(n_cells ? n_cells : 1, sizeof *samples);
  if (samples == NULL) failed = 1;
  json_array_foreach(r->lines, i, line) {
    r->n_loads++;
    group_name(&queues, line, group, sizeof group);
    size_t g_all = intern(&r->groups, &r->n_groups, group);
    const char *config_all = report_config_of(line);
    for (size_t c = 0; c < r->n_configs && g_all != SIZE_MAX; c++)
      if (strcmp(r->configs[c], config_all) == 0) r->group_config[g_all * r->n_configs + c] = 1;
    if (take_left_out(r, line, &left_out_pages, &n_left_out_pages) != 0) failed = 1;
    if (!json_is_true(json_object_get(line, "valid"))) {
      r->n_invalid++;
      const char *why = json_string_value(json_object_get(line, "invalid_reason"));
      char class[256], example[700];
      reason_class(why != NULL && why[0] != '\0' ? why : "no reason given", 1, class, sizeof class);
      snprintf(example, sizeof example, "%s",
               json_string_value(json_object_get(line, "key"))
                   ? json_string_value(json_object_get(line, "key"))
                   : report_page_of(line));
      if (reason_count(&r->invalid, &r->n_invalid_reasons, class, example) != 0) failed = 1;
      continue;
    }
    if (json_is_false(json_object_get(line, "lateness_ok"))) r->n_lateness++;
    const char *client = json_string_value(json_object_get(line, "client"));
    if (client == NULL || strcmp(client, "chromium") != 0) {
      r->n_loader_loads++;
      if (json_is_true(json_object_get(json_object_get(line, "settings"), "load_event")))
        r->n_loader_load_event++;
    }
    group_name(&queues, line, group, sizeof group);
    size_t p = intern(&r->pages, &r->n_pages, report_page_of(line));
    size_t g = intern(&r->groups, &r->n_groups, group);
    const char *config = report_config_of(line);
    size_t c = 0;
    while (c < r->n_configs && strcmp(r->configs[c], config) != 0) c++;
    if (c == r->n_configs) continue;
    report_cell *cell = report_cell_at(r, g, c, p);
    int k = cell->repetitions;
    double *grown = samples ? realloc(samples[cell - r->cells], (k + 1) * sizeof *grown) : NULL;
    if (grown == NULL) {
      failed = 1;
      continue;
    }
    grown[k] = json_number_value(json_object_get(line, "plt_ms"));
    samples[cell - r->cells] = grown;
    /* Running means over the repetitions. */
#define MEAN_IN(field, value) cell->field = (cell->field * k + (value)) / (k + 1)
    MEAN_IN(plt_ms, json_number_value(json_object_get(line, "plt_ms")));
    MEAN_IN(plt_cutoff_ms, json_number_value(json_object_get(line, "plt_cutoff_ms")));
    MEAN_IN(bound_ms, json_number_value(json_object_get(line, "lower_bound_ms")));
    MEAN_IN(request_header_bytes, json_number_value(json_object_get(line, "request_header_bytes")));
    MEAN_IN(response_header_bytes,
            json_number_value(json_object_get(line, "response_header_bytes")));
#undef MEAN_IN
    take_browser_work(cell, json_object_get(line, "browser_work"));
    if (cell->first == NULL) cell->first = line;
    cell->repetitions++;
    cell->present = 1;
  }
  for (size_t k = 0; samples != NULL && k < n_cells; k++) {
    size_t n = (size_t)r->cells[k].repetitions;
    if (n > 0) r->cells[k].plt_median_ms = lab_stats_median(samples[k], n);
    double *half = n >= 2 ? malloc((n + 1) / 2 * sizeof *half) : NULL;
    for (size_t h = 0; half != NULL && h < 2; h++) { /* loads 1, 3, 5, ... and 2, 4, ... */
      size_t m = 0;
      for (size_t at = h; at < n; at += 2) half[m++] = samples[k][at];
      r->cells[k].plt_half_ms[h] = lab_stats_median(half, m);
    }
    if (n >= 2 && half == NULL) failed = 1;
    free(half);
    free(samples[k]);
  }
  free(samples);
  queue_groups_free(&queues);
  for (size_t k = 0; k < n_left_out_pages; k++) free(left_out_pages[k]);
  free(left_out_pages);
  if (failed) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  /* qsort wants a valid pointer even for no elements, and an empty list has none. */
  if (r->n_invalid_reasons > 0)
    qsort(r->invalid, r->n_invalid_reasons, sizeof *r->invalid, by_count);
  if (r->n_skipped_reasons > 0)
    qsort(r->skipped, r->n_skipped_reasons, sizeof *r->skipped, by_count);
  if (r->n_left_out_reasons > 0)
    qsort(r->left_out, r->n_left_out_reasons, sizeof *r->left_out, by_count);
  for (size_t g = 0; g < r->n_groups; g++)
    for (size_t p = 0; p < r->n_pages; p++) r->comparable[g] += comparable(r, g, p) != 0;
  for (size_t g = 0; g < r->n_groups; g++)
    for (size_t c = 0; c < r->n_configs; c++) compute_row(r, g, c, seed);
  if (report_sweeps_build(r) != 0) {
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  return 0;
}

void report_free(report *r) {
  report_sweeps_free(r);
  for (size_t i = 0; i < r->n_pages; i++) free(r->pages[i]);
  for (size_t i = 0; i < r->n_groups; i++) free(r->groups[i]);
  for (size_t i = 0; i < r->n_configs; i++) free(r->configs[i]);
  for (size_t i = 0; r->ratios && i < r->n_groups * r->n_configs; i++) free(r->ratios[i]);
  free(r->pages);
  free(r->groups);
  free(r->cells);
  free(r->rows);
  free(r->ratios);
  free(r->n_ratios);
  free(r->comparable);
  free(r->group_config);
  reasons_free(r->invalid, r->n_invalid_reasons);
  reasons_free(r->skipped, r->n_skipped_reasons);
  reasons_free(r->left_out, r->n_left_out_reasons);
  json_decref(r->lines);
  memset(r, 0, sizeof *r);
}

size_t report_partial_pages(const report *r, size_t g) {
  size_t any = 0;
  for (size_t p = 0; p < r->n_pages; p++)
    for (size_t c = 0; c < r->n_configs; c++)
      if (report_cell_at(r, g, c, p)->present) {
        any++;
        break;
      }
  return any > r->comparable[g] ? any - r->comparable[g] : 0;
}

/* Every load, page and request the figures leave out, with the reason. */
static void print_exclusions(FILE *out, const report *r) {
  fprintf(out, "Left out of the figures\n");
  fprintf(out, "  invalid loads: %zu of %zu (%.1f%% valid)\n", r->n_invalid, r->n_loads,
          r->n_loads ? 100.0 * (double)(r->n_loads - r->n_invalid) / (double)r->n_loads : 0.0);
  for (size_t i = 0; i < r->n_invalid_reasons; i++)
    fprintf(out, "    %5zu  %s\n           e.g. %s\n", r->invalid[i].count, r->invalid[i].reason,
            r->invalid[i].example);
  for (size_t g = 0; g < r->n_groups; g++) {
    size_t partial = report_partial_pages(r, g);
    if (partial > 0)
      fprintf(out, "  %s: %zu page%s valid in some configurations only\n", r->groups[g], partial,
              partial == 1 ? "" : "s");
  }
  fprintf(out, "  pages not replayed: %zu\n", r->n_skipped);
  for (size_t i = 0; i < r->n_skipped_reasons; i++)
    fprintf(out, "    %5zu  %s\n           e.g. %s\n", r->skipped[i].count, r->skipped[i].reason,
            r->skipped[i].example);
  fprintf(out, "  requests of replayed pages left out of every replay: %zu\n", r->n_left_out);
  for (size_t i = 0; i < r->n_left_out_reasons; i++)
    fprintf(out, "    %5zu  %s (e.g. %s)\n", r->left_out[i].count, r->left_out[i].reason,
            r->left_out[i].example);
  fputc('\n', out);
}

/* The width of the configuration column: 13, or the longest name ("chromium-h2-coalesced"). */
static int config_width(const report *r) {
  size_t width = 13;
  for (size_t c = 0; c < r->n_configs; c++)
    if (strlen(r->configs[c]) > width) width = strlen(r->configs[c]);
  return (int)width;
}

/* What compresses a configuration's headers: zlib for SPDY, HPACK for HTTP/2, nothing for
 * HTTP/1.1 (from the name: the report's configurations are named by protocol). */
static const char *header_coding(const char *config) {
  if (strncmp(config, "spdy-", 5) == 0) return "zlib";
  if (strncmp(config, "h2-", 3) == 0 || strncmp(config, "chromium-h2-", 12) == 0) return "HPACK";
  if (strncmp(config, "http1-", 6) == 0 || strcmp(config, "chromium-fcfs") == 0 ||
      strcmp(config, "chromium-single") == 0)
    return "none";
  return "?";
}

size_t report_side_by_side(const report *r, report_pair *pairs, size_t max) {
  static const char *const twins[][2] = {{"spdy-multi", "h2-multi"},
                                         {"spdy-single", "h2-single"},
                                         {"spdy-multi", "h2-coalesced"},
                                         {"spdy-push", "h2-push"},
                                         {"spdy-hint", "h2-hint"}};
  size_t n = 0;
  for (size_t g = 0; g < r->n_groups; g++)
    for (size_t k = 0; k < sizeof twins / sizeof twins[0] && n < max; k++) {
      size_t index[2];
      int found = 0;
      for (int side = 0; side < 2; side++)
        for (size_t c = 0; c < r->n_configs; c++)
          if (strcmp(r->configs[c], twins[k][side]) == 0) index[side] = c, found++;
      if (found != 2) continue;
      report_pair pair = {.group = g, .spdy = twins[k][0], .h2 = twins[k][1]};
      double log_sum = 0;
      for (size_t p = 0; p < r->n_pages; p++) {
        const report_cell *a = report_cell_at(r, g, index[0], p);
        const report_cell *b = report_cell_at(r, g, index[1], p);
        if (!a->present || !b->present || a->plt_ms <= 0 || b->plt_ms <= 0) continue;
        pair.pages++;
        pair.spdy_ms += a->plt_ms, pair.h2_ms += b->plt_ms;
        log_sum += log(b->plt_ms / a->plt_ms);
      }
      if (pair.pages == 0) continue;
      pair.spdy_ms /= (double)pair.pages, pair.h2_ms /= (double)pair.pages;
      pair.ratio = exp(log_sum / (double)pair.pages);
      pairs[n++] = pair;
    }
  return n;
}

static void print_side_by_side(FILE *out, const report *r) {
  report_pair pairs[REPORT_MAX_PAIRS];
  size_t n = report_side_by_side(r, pairs, REPORT_MAX_PAIRS);
  if (n == 0) return;
  fprintf(out,
          "SPDY and HTTP/2 side by side (pages valid in both; mean page load time, "
          "geometric mean of per-page h2 / SPDY)\n%-26s %-13s %-13s %5s %9s %9s %8s\n",
          "link", "SPDY", "HTTP/2", "pages", "SPDY ms", "h2 ms", "h2/SPDY");
  for (size_t i = 0; i < n; i++)
    fprintf(out, "%-26.26s %-13s %-13s %5zu %9.0f %9.0f %8.3f\n", r->groups[pairs[i].group],
            pairs[i].spdy, pairs[i].h2, pairs[i].pages, pairs[i].spdy_ms, pairs[i].h2_ms,
            pairs[i].ratio);
  fputc('\n', out);
}

void report_print(FILE *out, const report *r) {
  int width = config_width(r);
  fprintf(out,
          "%zu loads, %zu invalid (left out), %zu on links over the lateness bound; %zu "
          "pages, %zu not replayed; baseline %s\n\n",
          r->n_loads, r->n_invalid, r->n_lateness, r->n_pages, r->n_skipped,
          r->n_configs ? r->configs[r->baseline] : "-");
  for (size_t g = 0; g < r->n_groups; g++) {
    size_t with_valid = 0; /* configurations with a valid page the comparison leaves out */
    for (size_t c = 0; c < r->n_configs; c++)
      with_valid += report_row_at(r, g, c)->valid_pages > report_row_at(r, g, c)->pages;
    fprintf(out, "%s: %zu page%s valid in every configuration, the figures' pages\n", r->groups[g],
            r->comparable[g], r->comparable[g] == 1 ? "" : "s");
    fprintf(out, "%-*s %5s %9s %9s %8s %23s %8s %9s\n", width, "config", "pages", "mean ms",
            "median ms", "1-mean/H", "ratio (95% CI)", "÷bound", "recovered");
    for (size_t c = 0; c < r->n_configs; c++) {
      const report_row *row = report_row_at(r, g, c);
      if (row->pages == 0) continue;
      char ci[64] = "-";
      if (row->has_ratio)
        snprintf(ci, sizeof ci, "%.3f (%.3f-%.3f)", row->ratio.estimate, row->ratio.low,
                 row->ratio.high);
      fprintf(out, "%-*s %5zu %9.0f %9.0f %7.1f%% %23s %8.2f %8.1f%%\n", width, r->configs[c],
              row->pages, row->mean_ms, row->median_ms, row->paired ? 100 * row->paper_metric : 0,
              ci, row->bound_ratio, row->paired ? 100 * row->recovered : 0);
    }
    if (with_valid > 0) {
      /* Not comparable across rows: each over its own pages. */
      fprintf(out, "each configuration's own valid pages (not comparable between rows):\n");
      for (size_t c = 0; c < r->n_configs; c++) {
        const report_row *row = report_row_at(r, g, c);
        if (row->valid_pages == 0) continue;
        fprintf(out, "%-*s %5zu %9.0f %9.0f\n", width, r->configs[c], row->valid_pages,
                row->valid_mean_ms, row->valid_median_ms);
      }
    }
    fputc('\n', out);
  }
  print_side_by_side(out, r);
  if (report_validate_print(out, r) != 0)
    fprintf(out, "The loader against Chromium: out of memory\n\n");
  print_exclusions(out, r);
  report_sweeps_print(out, r);
  /* Per page. */
  /* The link column: 26 wide, wider for the longer names of sweeps (queue, "-RTT"). */
  int link_width = 26;
  for (size_t g = 0; g < r->n_groups; g++)
    if (strlen(r->groups[g]) > (size_t)link_width) link_width = (int)strlen(r->groups[g]);
  if (link_width > 64) link_width = 64;
  fprintf(out, "Per page: mean page load time in ms (lower bound)\n%-44s %-*s", "page", link_width,
          "link");
  for (size_t c = 0; c < r->n_configs; c++) fprintf(out, " %12s", r->configs[c]);
  fputc('\n', out);
  for (size_t p = 0; p < r->n_pages; p++)
    for (size_t g = 0; g < r->n_groups; g++) {
      double bound = 0;
      int any = 0;
      for (size_t c = 0; c < r->n_configs; c++) {
        const report_cell *cell = report_cell_at(r, g, c, p);
        if (cell->present) any = 1, bound = cell->bound_ms;
      }
      if (!any) continue;
      fprintf(out, "%-44.44s %-*.*s", r->pages[p], link_width, link_width, r->groups[g]);
      for (size_t c = 0; c < r->n_configs; c++) {
        const report_cell *cell = report_cell_at(r, g, c, p);
        if (cell->present)
          fprintf(out, " %12.0f", cell->plt_ms);
        else
          fprintf(out, " %12s", "-");
      }
      fprintf(out, "  (%.0f)\n", bound);
    }
  /* Header compression, as sent: HTTP/1.1 text against SPDY's zlib and HTTP/2's HPACK. */
  double req[REPORT_MAX_CONFIGS] = {0}, resp[REPORT_MAX_CONFIGS] = {0};
  for (size_t c = 0; c < r->n_configs; c++)
    for (size_t g = 0; g < r->n_groups; g++)
      for (size_t p = 0; p < r->n_pages; p++) {
        const report_cell *cell = report_cell_at(r, g, c, p);
        if (cell->present)
          req[c] += cell->request_header_bytes, resp[c] += cell->response_header_bytes;
      }
  fprintf(out,
          "\nHeader bytes as sent (sum over pages and links of the per-page means)\n"
          "%-*s %-11s %14s %14s %11s %11s\n",
          width, "config", "compression", "request bytes", "response bytes", "req saved",
          "resp saved");
  for (size_t c = 0; c < r->n_configs; c++) {
    if (req[c] == 0 && resp[c] == 0) continue;
    fprintf(out, "%-*s %-11s %14.0f %14.0f", width, r->configs[c], header_coding(r->configs[c]),
            req[c], resp[c]);
    if (c != r->baseline && req[r->baseline] > 0)
      fprintf(out, " %10.1f%% %10.1f%%\n",
              lab_hdr_reduction((uint64_t)req[r->baseline], (uint64_t)req[c]),
              lab_hdr_reduction((uint64_t)resp[r->baseline], (uint64_t)resp[c]));
    else
      fprintf(out, " %11s %11s\n", "-", "-");
  }
}

int lab_report_main(int argc, char **argv) {
  static const struct option long_options[] = {{"html", required_argument, NULL, 'H'},
                                               {"seed", required_argument, NULL, 's'},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  const char *html = NULL;
  uint64_t seed = 1;
  int c;
  char *end;
  optind = 1;
  while ((c = getopt_long(argc, argv, "H:s:h", long_options, NULL)) != -1) {
    switch (c) {
    case 'H':
      html = optarg;
      break;
    case 's':
      seed = strtoull(optarg, &end, 10);
      if (end == optarg || *end != '\0') {
        fprintf(stderr, "speedy lab report: bad --seed '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      printf("Usage: speedy lab report [--html FILE] [--seed N] RESULTS\n"
             "The experiment's table from the results of 'speedy lab run' (docs/lab.md, "
             "\"Report\"),\na table per loss, RTT or queue size swept on one link profile, and "
             "the loader against\nChromium where the results hold both clients.\n\n"
             "  -H, --html FILE  also write a self-contained HTML report with SVG charts\n"
             "  -s, --seed N     bootstrap seed (default 1)\n"
             "  -h, --help       this help\n");
      return 0;
    default:
      return 2;
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, "speedy lab report: want one results file (try 'speedy lab report --help')\n");
    return 2;
  }
  report r;
  char err[512];
  if (report_build(argv[optind], seed, &r, err, sizeof err) != 0) {
    fprintf(stderr, "speedy lab report: %s\n", err);
    report_free(&r);
    return 1;
  }
  report_print(stdout, &r);
  int rc = 0;
  if (html != NULL && report_write_html(&r, html) != 0) {
    fprintf(stderr, "speedy lab report: cannot write %s: %m\n", html);
    rc = 1;
  }
  report_free(&r);
  return rc;
}
