/* report_waterfall.c — the waterfalls of the HTML report (report_html.c), drawn as
 * WebPageTest and Chrome's network panel draw them: per page, one chart per configuration
 * (HTTP/1.1, then SPDY) on one time axis in ms; a row per resource, in the order the loader
 * discovered them, with its number, URL (shortened; in full in the row's <title>, shown on
 * hover), host and protocol, and a bar coloured by phase; the page load time and the lower
 * bound as vertical lines; a legend for every colour and line.
 *
 * The phases are those a result line carries (docs/lab-formats.md, "Load result"):
 *   discovered_ms to start_ms  before the request went out. On the request that opened a
 *                              connection: "connect", the connection's TCP and TLS
 *                              handshakes (one segment: the loader does not time them
 *                              apart), led by "DNS" when the run emulated lookups
 *                              (settings.dns_rtt_ms) and this was the first connection to
 *                              its name. On any other request: "queued" (no free
 *                              connection, or the dispatcher held it back).
 *   start_ms to ttfb_ms        "wait": request sent (a push: promised) to the first byte
 *   ttfb_ms to end_ms          "receive" (a pushed response in a colour of its own)
 * URLs and hosts are not in a result line: they come from the page plan, whose path
 * `speedy lab run` records in settings.loader. When it cannot be read (results copied from
 * another machine) a row shows the resource's id instead.
 *
 * Text never leaves its column: URLs, hosts and protocols are set in a monospace font and
 * shortened to the characters that fit, a non-ASCII character counted as two.
 * tests/lab/report_chromium.sh measures every text box of these charts in Chromium.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report_html.h"

/* Geometry in SVG user units (CSS px). A chart fits a 1024 px window with the body's
 * margins; the plot keeps half of its last tick label's width free on the right. */
enum {
  WF_WIDTH = 960,
  WF_ROW = 14, /* row pitch; bars are WF_BAR high, centred */
  WF_BAR = 8,
  WF_NUM_END = 30, /* row number, right-aligned */
  WF_URL_X = 36,
  WF_URL_W = 240,
  WF_HOST_X = 284,
  WF_HOST_W = 150,
  WF_PROTO_X = 442,
  WF_PROTO_W = 92,
  WF_PLOT_X = 546,
  WF_PLOT_RIGHT = 24,
};

/* One character of the 11 px monospace columns: fonts give 0.6 em (6.6 px), plus a margin. */
#define WF_MONO_CHAR 6.8
/* One character of the 11 px proportional legend labels, with a margin: DejaVu Sans, the
 * widest of the usual sans-serif fonts, averages 5.4 px over the labels. */
#define WF_LABEL_CHAR 5.8

typedef enum wf_phase {
  WF_DNS,
  WF_CONNECT,
  WF_QUEUED,
  WF_WAIT,
  WF_RECEIVE,
  WF_PUSHED,
  WF_PHASES
} wf_phase;

/* Each phase's CSS class (report_html.c's style sheet gives each its colour) and legend
 * label ("connect (TCP + TLS)" over TLS). */
static const char *const PHASE_CLASS[WF_PHASES] = {"dns",  "connect", "queued",
                                                   "wait", "recv",    "recv pushed"};
static const char *const PHASE_LABEL[WF_PHASES] = {
    "DNS (emulated lookup)",        "connect (TCP)", "queued",
    "wait (request to first byte)", "receive",       "receive (pushed)"};

typedef struct wf_row {
  size_t id;
  double discovered, start, ttfb, end; /* NAN: not in the line */
  double dns, connect, queued;         /* ms before start, in that order; 0: none */
  int pushed, connection, status;
  long long bytes;
  const char *host, *path; /* from the plan; NULL without one */
} wf_row;

static double number(const json_t *o, const char *key) {
  const json_t *v = json_object_get(o, key);
  return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The plan's path in the loader's command line as `speedy lab run` records it: "SPEEDY load
 * /PLAN --...". Its words are joined by spaces without quoting, so the path is everything
 * between " load /" and the first " --" (the loader's options follow it). */
static int plan_path(const json_t *line, char *out, size_t size) {
  const json_t *settings = json_object_get(line, "settings");
  const char *cmd = json_string_value(json_object_get(settings, "loader"));
  const char *p = cmd ? strstr(cmd, " load /") : NULL;
  if (p == NULL) return -1;
  p += strlen(" load ");
  const char *end = strstr(p, " --");
  size_t n = end ? (size_t)(end - p) : strlen(p);
  if (n >= size) return -1;
  memcpy(out, p, n);
  out[n] = '\0';
  return 0;
}

/* The last plan read, kept: both waterfalls of a page read the same one. */
typedef struct wf_plans {
  char path[4096];
  json_t *plan; /* NULL: unreadable */
} wf_plans;

/* The page plan of a load, or NULL when it cannot be read or is not the plan the line names
 * ("SOURCE#PAGE" in its "plan"). Owned by plans. */
static const json_t *plan_of(wf_plans *plans, const json_t *line) {
  char path[sizeof plans->path];
  if (plan_path(line, path, sizeof path) != 0) return NULL;
  if (strcmp(path, plans->path) != 0) {
    json_decref(plans->plan);
    snprintf(plans->path, sizeof plans->path, "%s", path);
    plans->plan = json_load_file(path, 0, NULL);
  }
  const json_t *plan = plans->plan;
  const char *format = json_string_value(json_object_get(plan, "format"));
  const char *source = json_string_value(json_object_get(plan, "source"));
  const char *page = json_string_value(json_object_get(plan, "page"));
  const char *name = json_string_value(json_object_get(line, "plan"));
  if (!format || strcmp(format, "speedy-lab-plan/1") != 0 || !source || !page || !name) return NULL;
  size_t n = strlen(source);
  if (strncmp(name, source, n) != 0 || name[n] != '#' || strcmp(name + n + 1, page) != 0)
    return NULL;
  return plan;
}

/* Where each row's time before start_ms went; see the file's comment. */
static void split_before_start(wf_row *rows, size_t n, int single_domain, double dns_rtt_ms) {
  /* The request that opened a connection is the first one sent on it. */
  int *opener = calloc(n ? n : 1, sizeof *opener);
  if (opener == NULL) return;
  for (size_t i = 0; i < n; i++) {
    wf_row *r = &rows[i];
    opener[i] = !r->pushed && r->connection >= 0 && !isnan(r->start);
    for (size_t j = 0; j < n && opener[i]; j++) {
      const wf_row *o = &rows[j];
      if (j != i && !o->pushed && o->connection == r->connection && !isnan(o->start) &&
          (o->start < r->start || (o->start == r->start && j < i)))
        opener[i] = 0;
    }
  }
  for (size_t i = 0; i < n; i++) {
    wf_row *r = &rows[i];
    double before = r->start - r->discovered;
    if (!(before > 0)) continue; /* also when either is missing */
    if (!opener[i]) {
      r->queued = before;
      continue;
    }
    /* One lookup per name (the document's name for a single-domain load): the first
     * connection to it waited for the lookup. */
    int first = dns_rtt_ms > 0;
    for (size_t j = 0; j < n && first; j++) {
      const wf_row *o = &rows[j];
      int same = single_domain || (r->host && o->host && strcasecmp(r->host, o->host) == 0) ||
                 (!r->host && !o->host);
      if (j != i && opener[j] && same && (o->start < r->start || (o->start == r->start && j < i)))
        first = 0;
    }
    r->dns = first ? fmin(dns_rtt_ms, before) : 0;
    r->connect = before - r->dns;
  }
  free(opener);
}

static double row_key(const wf_row *r) {
  return !isnan(r->discovered) ? r->discovered
         : !isnan(r->start)    ? r->start
         : !isnan(r->end)      ? r->end
                               : INFINITY;
}

static int compare_rows(const void *a, const void *b) {
  const wf_row *x = a, *y = b;
  double kx = row_key(x), ky = row_key(y);
  if (kx != ky) return kx < ky ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* The rows of a load, sorted by discovery. Returns NULL (n_out 0) without resources or
 * memory. The strings point into plan. Free with free(). */
static wf_row *rows_of(const json_t *line, const json_t *plan, size_t *n_out) {
  const json_t *resources = json_object_get(line, "resources");
  size_t n = json_array_size(resources);
  *n_out = 0;
  wf_row *rows = n ? calloc(n, sizeof *rows) : NULL;
  if (rows == NULL) return NULL;
  const json_t *hosts = json_object_get(plan, "hosts"),
               *planned = json_object_get(plan, "resources");
  for (size_t i = 0; i < n; i++) {
    const json_t *res = json_array_get(resources, i);
    wf_row *r = &rows[i];
    const json_t *id = json_object_get(res, "id");
    r->id = json_is_integer(id) && json_integer_value(id) >= 0 ? (size_t)json_integer_value(id) : i;
    r->discovered = number(res, "discovered_ms");
    r->start = number(res, "start_ms");
    r->ttfb = number(res, "ttfb_ms");
    r->end = number(res, "end_ms");
    /* Lines from before start_ms was written begin the bar at the first byte. */
    if (isnan(r->start)) r->start = !isnan(r->ttfb) ? r->ttfb : r->end;
    r->pushed = json_is_true(json_object_get(res, "pushed"));
    const json_t *connection = json_object_get(res, "connection");
    r->connection = json_is_integer(connection) ? (int)json_integer_value(connection) : -1;
    r->status = (int)json_integer_value(json_object_get(res, "status"));
    r->bytes = (long long)json_integer_value(json_object_get(res, "bytes"));
    const json_t *p = json_array_get(planned, r->id);
    const json_t *host = json_object_get(p, "host");
    if (p && json_is_integer(host) && json_integer_value(host) >= 0) {
      r->host = json_string_value(
          json_object_get(json_array_get(hosts, (size_t)json_integer_value(host)), "name"));
      r->path = json_string_value(json_object_get(p, "path"));
    }
    if (r->host == NULL || r->path == NULL) r->host = r->path = NULL;
  }
  const char *mode = json_string_value(json_object_get(line, "mode"));
  double dns_rtt_ms = number(json_object_get(line, "settings"), "dns_rtt_ms");
  split_before_start(rows, n, mode && strcmp(mode, "single-domain") == 0,
                     isnan(dns_rtt_ms) ? 0 : dns_rtt_ms);
  qsort(rows, n, sizeof *rows, compare_rows);
  *n_out = n;
  return rows;
}

/* Bytes of the UTF-8 character at s, and the columns it takes: ASCII one, anything else
 * two (wide glyphs, and fallbacks to proportional fonts, are wider than a cell). */
static size_t char_len(const char *s) {
  size_t n = 1;
  while (s[n] != '\0' && ((unsigned char)s[n] & 0xC0) == 0x80) n++;
  return n;
}

static size_t char_columns(const char *s) { return (unsigned char)*s < 0x80 ? 1 : 2; }

static size_t columns(const char *s) {
  size_t c = 0;
  for (; *s; s += char_len(s)) c += char_columns(s);
  return c;
}

/* s in at most max_columns: whole when it fits, else its first head_share of the columns,
 * "…" (counted as two) and its end. */
static void shorten(const char *s, size_t max_columns, double head_share, char *out, size_t size) {
  size_t len = strlen(s);
  if (columns(s) <= max_columns && len < size) {
    memcpy(out, s, len + 1);
    return;
  }
  size_t room = max_columns > 3 ? max_columns - 2 : 1;
  size_t head_room = (size_t)((double)room * head_share), tail_room = room - head_room;
  size_t head = 0, used = 0; /* bytes and columns of the head */
  while (s[head] != '\0' && used + char_columns(s + head) <= head_room) {
    used += char_columns(s + head);
    head += char_len(s + head);
  }
  /* The tail: whole characters back from the end. */
  size_t tail = len, tail_used = 0;
  while (tail > head) {
    size_t start = tail - 1;
    while (start > head && ((unsigned char)s[start] & 0xC0) == 0x80) start--;
    if (tail_used + char_columns(s + start) > tail_room) break;
    tail_used += char_columns(s + start);
    tail = start;
  }
  if (head + 3 + (len - tail) >= size) { /* cannot happen with the columns we use */
    out[0] = '\0';
    return;
  }
  memcpy(out, s, head);
  memcpy(out + head, "\xE2\x80\xA6", 3);
  memcpy(out + head + 3, s + tail, len - tail + 1);
}

/* A piece of text, shortened to width px of the monospace columns, escaped. */
static void put_column(FILE *f, const char *cls, double x, double y, const char *text, double width,
                       double head_share) {
  char shown[512];
  shorten(text, (size_t)(width / WF_MONO_CHAR), head_share, shown, sizeof shown);
  fprintf(f, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\">", cls, x, y);
  report_html_escape(f, shown);
  fputs("</text>", f);
}

/* The time axis: x of a time in ms. */
typedef struct wf_axis {
  double max_ms, step_ms, left, width;
} wf_axis;

static double axis_x(const wf_axis *a, double ms) { return a->left + a->width * ms / a->max_ms; }

static void put_segment(FILE *f, const wf_axis *a, wf_phase phase, double from, double to, double y,
                        double min_width) {
  if (isnan(from) || isnan(to)) return;
  double x0 = axis_x(a, from), w = axis_x(a, to) - x0;
  if (w < min_width) w = min_width;
  if (w <= 0) return;
  fprintf(f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>",
          PHASE_CLASS[phase], x0, y, w, WF_BAR);
}

/* The row's hover text: the full URL, what the row's columns shorten, every phase. */
static void put_row_title(FILE *f, size_t number, const wf_row *r, const char *scheme,
                          const char *protocol) {
  fprintf(f, "<title>%zu. ", number);
  if (r->path != NULL) {
    fprintf(f, "%s://", scheme);
    report_html_escape(f, r->host);
    report_html_escape(f, r->path);
    fputs("\nhost ", f);
    report_html_escape(f, r->host);
    fputs(", ", f);
  } else {
    fprintf(f, "resource #%zu (URL unknown: the page plan could not be read)\n", r->id);
  }
  report_html_escape(f, protocol);
  fprintf(f, "%s, status %d, %lld bytes, connection %d\n", r->pushed ? " push" : "", r->status,
          r->bytes, r->connection);
  if (!isnan(r->discovered)) fprintf(f, "discovered at %.1f ms; ", r->discovered);
  if (r->dns > 0) fprintf(f, "DNS %.1f ms, ", r->dns);
  if (r->connect > 0) fprintf(f, "connect %.1f ms, ", r->connect);
  if (r->queued > 0) fprintf(f, "queued %.1f ms, ", r->queued);
  if (!isnan(r->start) && !isnan(r->ttfb)) fprintf(f, "wait %.1f ms, ", r->ttfb - r->start);
  double from = !isnan(r->ttfb) ? r->ttfb : r->start;
  if (!isnan(from) && !isnan(r->end)) fprintf(f, "receive %.1f ms, ", r->end - from);
  if (!isnan(r->end))
    fprintf(f, "done at %.1f ms</title>", r->end);
  else
    fputs("not loaded</title>", f);
}

static void put_row(FILE *f, const wf_axis *a, size_t number, const wf_row *r, double y,
                    const char *scheme, const char *protocol) {
  double base = y + 10.5, bar = y + (WF_ROW - WF_BAR) / 2.0;
  fputs("<g class=\"row\">", f);
  put_row_title(f, number, r, scheme, protocol);
  fprintf(f, "<rect class=\"bg%s\" x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%d\"/>",
          number % 2 ? "" : " odd", y, WF_WIDTH, WF_ROW);
  fprintf(f, "<text class=\"num\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%zu</text>", WF_NUM_END,
          base, number);
  if (r->path != NULL) {
    put_column(f, "url", WF_URL_X, base, r->path, WF_URL_W, 0.4);
    put_column(f, "host", WF_HOST_X, base, r->host, WF_HOST_W, 0.5);
  } else {
    char id[48];
    snprintf(id, sizeof id, "resource #%zu", r->id);
    put_column(f, "url", WF_URL_X, base, id, WF_URL_W, 0.5);
  }
  char proto[64];
  snprintf(proto, sizeof proto, "%s%s", protocol, r->pushed ? " push" : "");
  put_column(f, "proto", WF_PROTO_X, base, proto, WF_PROTO_W, 1);
  if (!isnan(r->start) && !isnan(r->end)) {
    /* Before the request: DNS then connect on a connection's first request, else queued. */
    double from = r->start - r->dns - r->connect - r->queued;
    if (r->dns > 0) put_segment(f, a, WF_DNS, from, from + r->dns, bar, 0);
    if (r->connect > 0) put_segment(f, a, WF_CONNECT, from + r->dns, r->start, bar, 0);
    if (r->queued > 0) put_segment(f, a, WF_QUEUED, from, r->start, bar, 0);
    double ttfb = !isnan(r->ttfb) ? r->ttfb : r->start;
    put_segment(f, a, WF_WAIT, r->start, ttfb, bar, 0);
    /* Every loaded resource has its receive bar, however short. */
    put_segment(f, a, r->pushed ? WF_PUSHED : WF_RECEIVE, ttfb, r->end, bar, 0.5);
  }
  fputs("</g>\n", f);
}

/* The legend: a swatch per phase drawn, a stroke per vertical line. Laid out before the
 * chart is written, since its lines set where the rows begin. */
typedef struct wf_legend_item {
  const char *cls; /* the phase's class, or the line's */
  int is_line;
  char label[64];
  double x, y;
} wf_legend_item;

typedef struct wf_legend {
  wf_legend_item items[WF_PHASES + 2];
  size_t n;
  double bottom; /* baseline of its last line */
} wf_legend;

static void legend_add(wf_legend *l, const char *cls, int is_line, const char *label) {
  wf_legend_item *it = &l->items[l->n++];
  it->cls = cls;
  it->is_line = is_line;
  snprintf(it->label, sizeof it->label, "%s", label);
}

static void legend_layout(wf_legend *l, double y) {
  double x = 10;
  for (size_t i = 0; i < l->n; i++) {
    double width = 18 + WF_LABEL_CHAR * (double)columns(l->items[i].label);
    if (x + width > WF_WIDTH - 10 && x > 10) x = 10, y += 16;
    l->items[i].x = x, l->items[i].y = y;
    x += width + 12;
  }
  l->bottom = y;
}

static void legend_put(FILE *f, const wf_legend *l) {
  for (size_t i = 0; i < l->n; i++) {
    const wf_legend_item *it = &l->items[i];
    if (it->is_line)
      fprintf(f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", it->cls,
              it->x, it->y - 4, it->x + 14, it->y - 4);
    else
      fprintf(f, "<rect class=\"swatch %s\" x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"%d\"/>",
              it->cls, it->x, it->y - 8, WF_BAR);
    fprintf(f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\">", it->x + 18, it->y);
    report_html_escape(f, it->label);
    fputs("</text>\n", f);
  }
}

/* A vertical line over the rows at ms, with its hover text. */
static void put_marker(FILE *f, const wf_axis *a, const char *cls, double ms, double top,
                       double bottom, const char *what) {
  double x = round(axis_x(a, ms)); /* a 2 px line on whole pixels: crisp, not blurred */
  fprintf(f,
          "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>%s %.0f ms"
          "</title></line>\n",
          cls, x, top, x, bottom, what, ms);
}

/* The ticks' labels at baseline y, and the grid lines from top to bottom. */
static void put_ticks(FILE *f, const wf_axis *a, double y, double top, double bottom, int grid) {
  for (int t = 0; t * a->step_ms <= a->max_ms * (1 + 1e-9); t++) {
    double ms = t * a->step_ms, x = axis_x(a, ms);
    if (grid)
      fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, top,
              x, bottom);
    fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x,
            y, ms);
  }
}

/* One chart: the load `line` of configuration `config`, on the axis a. */
static void waterfall(FILE *f, wf_plans *plans, const json_t *line, const char *config,
                      const wf_axis *a) {
  const json_t *plan = plan_of(plans, line);
  size_t n;
  wf_row *rows = rows_of(line, plan, &n);
  const char *protocol = json_string_value(json_object_get(line, "protocol"));
  if (protocol == NULL) protocol = "?";
  int tls = json_is_true(json_object_get(line, "tls"));
  const char *scheme = tls ? "https" : "http";
  const char *mode = json_string_value(json_object_get(line, "mode"));
  double plt = number(line, "plt_ms"), bound = number(line, "lower_bound_ms");
  const json_t *connections = json_object_get(line, "connections");

  int seen[WF_PHASES] = {0};
  for (size_t i = 0; i < n; i++) {
    seen[WF_DNS] |= rows[i].dns > 0;
    seen[WF_CONNECT] |= rows[i].connect > 0;
    seen[WF_QUEUED] |= rows[i].queued > 0;
    seen[WF_WAIT] |= rows[i].ttfb > rows[i].start;
    seen[rows[i].pushed ? WF_PUSHED : WF_RECEIVE] |= !isnan(rows[i].end);
  }
  wf_legend legend = {.n = 0};
  for (int p = 0; p < WF_PHASES; p++)
    if (seen[p])
      legend_add(&legend, PHASE_CLASS[p], 0,
                 p == WF_CONNECT && tls ? "connect (TCP + TLS)" : PHASE_LABEL[p]);
  char label[64];
  if (!isnan(plt)) {
    snprintf(label, sizeof label, "page load time %.0f ms", plt);
    legend_add(&legend, "plt", 1, label);
  }
  if (!isnan(bound)) {
    snprintf(label, sizeof label, "lower bound %.0f ms", bound);
    legend_add(&legend, "bound", 1, label);
  }
  legend_layout(&legend, 60);
  const double heads = legend.bottom + 24, top = heads + 6, bottom = top + (double)n * WF_ROW;
  const int height = (int)ceil(bottom) + 42;

  fprintf(f,
          "<svg class=\"chart waterfall\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
          "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n<title>Waterfall, ",
          WF_WIDTH, height, WF_WIDTH, height);
  report_html_escape(f, config);
  fputs("</title>\n<text class=\"head\" x=\"10\" y=\"18\">", f);
  char text[160];
  shorten(config, 40, 1, text, sizeof text);
  report_html_escape(f, text);
  fputs(" — ", f);
  report_html_escape(f, protocol);
  fputs(tls ? ", TLS" : ", no TLS", f);
  if (mode) {
    fputs(", ", f);
    report_html_escape(f, mode);
  }
  fputs("</text>\n<text class=\"sub\" x=\"10\" y=\"38\">", f);
  if (!isnan(plt)) fprintf(f, "page load time %.0f ms, ", plt);
  if (!isnan(bound)) fprintf(f, "lower bound %.0f ms, ", bound);
  fprintf(f, "%zu resources", n);
  if (json_is_integer(connections))
    fprintf(f, " on %lld connections", (long long)json_integer_value(connections));
  if (plan == NULL) fputs("; no page plan, so no URLs", f);
  fputs("</text>\n", f);
  legend_put(f, &legend);

  fprintf(f,
          "<text class=\"colhead\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">#</text>"
          "<text class=\"colhead\" x=\"%d\" y=\"%.1f\">URL</text>"
          "<text class=\"colhead\" x=\"%d\" y=\"%.1f\">host</text>"
          "<text class=\"colhead\" x=\"%d\" y=\"%.1f\">protocol</text>\n",
          WF_NUM_END, heads, WF_URL_X, heads, WF_HOST_X, heads, WF_PROTO_X, heads);
  put_ticks(f, a, heads, top, bottom, 0);
  for (size_t i = 0; i < n; i++)
    put_row(f, a, i + 1, &rows[i], top + (double)i * WF_ROW, scheme, protocol);
  /* Grid and lines over the rows' backgrounds, the axis below them. */
  put_ticks(f, a, bottom + 14, top, bottom, 1);
  fprintf(f,
          "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time since the "
          "load started (ms)</text>\n",
          a->left + a->width / 2, bottom + 32);
  /* The dashed bound over the solid page load time: both show where they meet. */
  if (!isnan(plt)) put_marker(f, a, "plt", plt, top - 4, bottom, "page load time");
  if (!isnan(bound)) put_marker(f, a, "bound", bound, top - 4, bottom, "lower bound");
  fprintf(f, "</svg>\n");
  free(rows);
}

/* The end of a load's time line: its last byte, page load time or lower bound. */
static double load_extent(const json_t *line) {
  double end = 0;
  size_t i;
  const json_t *res;
  json_array_foreach(json_object_get(line, "resources"), i, res) {
    double e = number(res, "end_ms");
    if (e > end) end = e;
  }
  double plt = number(line, "plt_ms"), bound = number(line, "lower_bound_ms");
  if (plt > end) end = plt;
  if (bound > end) end = bound;
  return end;
}

void report_html_waterfalls(FILE *f, const report *r) {
  /* SPDY: spdy-multi, else the first spdy configuration. */
  size_t spdy = r->n_configs;
  for (size_t c = 0; c < r->n_configs; c++)
    if (strcmp(r->configs[c], "spdy-multi") == 0) spdy = c;
  for (size_t c = 0; c < r->n_configs && spdy == r->n_configs; c++)
    if (strncmp(r->configs[c], "spdy", 4) == 0) spdy = c;
  if (spdy == r->n_configs) return;
  fprintf(f,
          "<h2>Waterfalls</h2>\n<p>Per page, the first valid load of %s and of %s in the first "
          "link group holding both, on one time axis. A row per resource in the order the "
          "loader discovered them; hover over a row for its full URL and its times. Before the "
          "request: DNS and connect on the request that opened a connection, queued on the "
          "others. URLs come from the page plans the run recorded.</p>\n",
          r->configs[r->baseline], r->configs[spdy]);
  wf_plans plans = {.plan = NULL};
  for (size_t p = 0; p < r->n_pages; p++)
    for (size_t g = 0; g < r->n_groups; g++) {
      const report_cell *a = report_cell_at(r, g, r->baseline, p),
                        *b = report_cell_at(r, g, spdy, p);
      if (!a->present || !b->present || a->first == NULL || b->first == NULL) continue;
      double extent = fmax(load_extent(a->first), load_extent(b->first));
      wf_axis axis = {.left = WF_PLOT_X, .width = WF_WIDTH - WF_PLOT_X - WF_PLOT_RIGHT};
      axis.step_ms = report_html_nice_step(extent > 0 ? extent : 1, 6);
      axis.max_ms = ceil((extent > 0 ? extent : 1) / axis.step_ms - 1e-9) * axis.step_ms;
      fprintf(f, "<h3>");
      report_html_escape(f, r->pages[p]);
      fprintf(f, " — ");
      report_html_escape(f, r->groups[g]);
      fprintf(f, "</h3>\n<div class=\"waterfalls\">\n");
      waterfall(f, &plans, a->first, r->configs[r->baseline], &axis);
      waterfall(f, &plans, b->first, r->configs[spdy], &axis);
      fprintf(f, "</div>\n");
      break;
    }
  json_decref(plans.plan);
}
