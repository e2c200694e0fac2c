/* report_html.c — the self-contained HTML report of `speedy lab report --html` (report.h):
 * inline CSS and inline SVG only, so it opens with no network access.
 *
 *   1. per link group, the geometric-mean ratio to HTTP/1.1 of every configuration as bars
 *      with their 95% confidence intervals (whiskers), a line at 1;
 *   2. per link group, the CDF of the per-page ratios, one step line per configuration;
 *   3. per swept variable (report_sweep.c), a table and a line chart: x the variable, y
 *      the geometric-mean ratio to HTTP/1.1 (page load time when there is no ratio), one
 *      line with points per configuration;
 *   4. per page, a waterfall of HTTP/1.1 and one of SPDY (multi-domain) on one time axis,
 *      from the per-resource timings of the first valid load of each (report_waterfall.c).
 * Between the link groups and the sweeps, SPDY and HTTP/2 side by side, the loader against
 * Chromium (report_validate.c) and "Left out of the figures": every exclusion with
 * its reason, as in the text report.
 * Every chart is an <svg> with class "chart" and a <title>; text is XML-escaped. Colours
 * per configuration are style="" properties, not presentation attributes, where a class
 * rule could override them.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_html.h"
#include "report_validate.h"

static const char *const COLOURS[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                      "#59a14f", "#edc948", "#b07aa1", "#ff9da7"};

void report_html_escape(FILE *f, const char *s) {
  for (; s && *s; s++) {
    switch (*s) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    default:
      if ((unsigned char)*s >= 0x20 || *s == '\n') fputc(*s, f);
    }
  }
}

/* A chart's heading: what it shows in bold, then for which links on a line of its own (two
 * parts joined by a comma when `also` is given), so that neither runs past the chart. */
static void put_heading(FILE *f, const char *what, const char *which, const char *also) {
  fputs("<text class=\"head\" x=\"10\" y=\"18\">", f);
  report_html_escape(f, what);
  fputs("</text>\n<text class=\"sub\" x=\"10\" y=\"35\">", f);
  report_html_escape(f, which);
  if (also != NULL) {
    fputs(", ", f);
    report_html_escape(f, also);
  }
  fputs("</text>\n", f);
}

static double max_ratio(const report *r, size_t g) {
  double m = 1.0;
  for (size_t c = 0; c < r->n_configs; c++) {
    const report_row *row = report_row_at(r, g, c);
    if (row->has_ratio && row->ratio.high > m) m = row->ratio.high;
  }
  return m * 1.1;
}

static void bars_chart(FILE *f, const report *r, size_t g) {
  const int W = 640, H = 316, left = 110, right = 20, top = 46, bottom = 40;
  double top_value = max_ratio(r, g);
  double plot_h = H - top - bottom, plot_w = W - left - right;
  size_t n = 0;
  for (size_t c = 0; c < r->n_configs; c++) n += report_row_at(r, g, c)->has_ratio;
  if (n == 0) return;
  fprintf(
      f,
      "<svg class=\"chart bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>Page load time relative to HTTP/1.1, ",
      W, H, W, H);
  report_html_escape(f, r->groups[g]);
  fputs("</title>\n", f);
  put_heading(f, "Geometric mean of page load time ÷ HTTP/1.1, with 95% CI", r->groups[g], NULL);
  /* axis and ticks */
  for (int t = 0; t <= 4; t++) {
    double v = top_value * t / 4, y = top + plot_h - plot_h * v / top_value;
    fprintf(f,
            "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
            "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.2f</text>\n",
            left, y, W - right, y, left - 6, y + 4, v);
  }
  double one = top + plot_h - plot_h / top_value;
  fprintf(f, "<line class=\"one\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n", left, one,
          W - right, one);
  double slot = plot_w / (double)n;
  size_t k = 0;
  for (size_t c = 0; c < r->n_configs; c++) {
    const report_row *row = report_row_at(r, g, c);
    if (!row->has_ratio) continue;
    double x = left + slot * (double)k + slot * 0.15, w = slot * 0.7;
    double y = top + plot_h - plot_h * row->ratio.estimate / top_value;
    double ylo = top + plot_h - plot_h * row->ratio.low / top_value;
    double yhi = top + plot_h - plot_h * row->ratio.high / top_value;
    fprintf(f,
            "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
            "<title>%s: %.3f (%.3f–%.3f), %zu pages</title></rect>\n",
            x, y, w, top + plot_h - y, COLOURS[c % 8], r->configs[c], row->ratio.estimate,
            row->ratio.low, row->ratio.high, row->paired);
    fprintf(f,
            "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            x + w / 2, ylo, x + w / 2, yhi, x + w / 4, ylo, x + 3 * w / 4, ylo, x + w / 4, yhi,
            x + 3 * w / 4, yhi);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"label\" text-anchor=\"middle\">%s</text>\n",
            x + w / 2, H - bottom + 16, r->configs[c]);
    k++;
  }
  fprintf(f, "</svg>\n");
}

static void cdf_chart(FILE *f, const report *r, size_t g) {
  const int W = 640, H = 316, left = 60, right = 140, top = 46, bottom = 40;
  double lo = 1, hi = 1;
  int any = 0;
  for (size_t c = 0; c < r->n_configs; c++) {
    size_t n = r->n_ratios[g * r->n_configs + c];
    const double *v = r->ratios[g * r->n_configs + c];
    if (n == 0 || c == r->baseline) continue;
    any = 1;
    if (v[0] < lo) lo = v[0];
    if (v[n - 1] > hi) hi = v[n - 1];
  }
  if (!any) return;
  lo = floor(lo * 10) / 10;
  hi = ceil(hi * 10) / 10;
  if (hi - lo < 0.2) hi = lo + 0.2;
  double plot_w = W - left - right, plot_h = H - top - bottom;
  fprintf(
      f,
      "<svg class=\"chart cdf\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>CDF of per-page ratios, ",
      W, H, W, H);
  report_html_escape(f, r->groups[g]);
  fputs("</title>\n", f);
  put_heading(f, "Share of pages with page load time ÷ HTTP/1.1 at most x", r->groups[g], NULL);
  for (int t = 0; t <= 4; t++) {
    double y = top + plot_h - plot_h * t / 4, x = left + plot_w * t / 4;
    fprintf(f,
            "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%d%%</text>"
            "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%.2f</text>\n",
            left, y, left + plot_w, y, left - 6, y + 4, t * 25, x, H - bottom + 16,
            lo + (hi - lo) * t / 4);
  }
  size_t legend = 0;
  for (size_t c = 0; c < r->n_configs; c++) {
    size_t n = r->n_ratios[g * r->n_configs + c];
    const double *v = r->ratios[g * r->n_configs + c];
    if (n == 0 || c == r->baseline) continue;
    fprintf(f, "<polyline class=\"cdf-line\" fill=\"none\" stroke=\"%s\" points=\"",
            COLOURS[c % 8]);
    double prev_y = top + plot_h;
    fprintf(f, "%.1f,%.1f", left + plot_w * (v[0] - lo) / (hi - lo), prev_y);
    for (size_t i = 0; i < n; i++) {
      double x = left + plot_w * (v[i] - lo) / (hi - lo);
      double y = top + plot_h - plot_h * (double)(i + 1) / (double)n;
      fprintf(f, " %.1f,%.1f %.1f,%.1f", x, prev_y, x, y);
      prev_y = y;
    }
    fprintf(f, "\"><title>%s</title></polyline>\n", r->configs[c]);
    /* A style, not a fill attribute: the .label rule would override an attribute. */
    fprintf(f, "<text x=\"%.1f\" y=\"%zu\" class=\"label\" style=\"fill:%s\">%s</text>\n",
            left + plot_w + 10, (size_t)top + 14 * legend++ + 10, COLOURS[c % 8], r->configs[c]);
  }
  fprintf(f, "</svg>\n");
}

double report_html_nice_step(double top, int ticks) {
  double raw = top / ticks, unit = pow(10, floor(log10(raw)));
  static const double steps[] = {1, 2, 2.5, 5, 10};
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
    if (steps[i] * unit >= raw) return steps[i] * unit;
  return 10 * unit;
}

/* x of a sweep's value: linear from 0 for loss (in %) and RTT, logarithmic for the queue. */
typedef struct sweep_axis {
  int log_scale;
  double lo, hi, left, width;
  double step; /* linear: between ticks */
} sweep_axis;

static double axis_unit(const report_sweep *s, double value) {
  return s->variable == REPORT_LOSS ? value * 100 : value;
}

static double axis_x(const sweep_axis *a, double unit) {
  double v = a->log_scale ? log(unit) : unit;
  return a->left + a->width * (v - a->lo) / (a->hi - a->lo);
}

static void sweep_chart(FILE *f, const report *r, const report_sweep *s) {
  const int W = 640, H = 316, left = 60, right = 140, top = 46, bottom = 46;
  double plot_w = W - left - right, plot_h = H - top - bottom;
  /* y: the ratio when any configuration has one, else the page load time. */
  int ratio = 0;
  for (size_t c = 0; c < r->n_configs; c++)
    for (size_t k = 0; k < s->n_points; k++)
      ratio |= c != r->baseline && s->points[k].paired[c] > 0;
  double y_top = ratio ? 1 : 0;
  for (size_t c = 0; c < r->n_configs; c++)
    for (size_t k = 0; k < s->n_points; k++) {
      double v = ratio ? s->points[k].ratio[c] : s->points[k].plt_ms[c];
      if ((!ratio || c != r->baseline) && v > y_top) y_top = v;
    }
  if (y_top <= 0) return;
  double y_step = report_html_nice_step(y_top * 1.05, 5);
  y_top = ceil(y_top * 1.05 / y_step) * y_step;
  int y_ticks = (int)lround(y_top / y_step);
  sweep_axis ax = {.log_scale = s->variable == REPORT_QUEUE, .left = left, .width = plot_w};
  double first = axis_unit(s, s->points[0].value);
  double last = axis_unit(s, s->points[s->n_points - 1].value);
  if (ax.log_scale) { /* sizes are > 0; a margin of 5% of the range each side */
    double margin = (log(last) - log(first)) * 0.05;
    ax.lo = log(first) - margin, ax.hi = log(last) + margin;
    if (!(ax.hi > ax.lo)) ax.lo -= 1, ax.hi += 1;
  } else {
    ax.step = report_html_nice_step(last > 0 ? last : 1, 5);
    ax.lo = 0, ax.hi = ceil(last / ax.step - 1e-9) * ax.step;
    if (ax.hi <= 0) ax.hi = ax.step;
  }
  const char *what = ratio ? "page load time ÷ HTTP/1.1" : "page load time (ms)";
  fprintf(
      f,
      "<svg class=\"chart sweep\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
      "viewBox=\"0 0 %d %d\" role=\"img\">\n<title>Sweep of %s, %s: ",
      W, H, W, H, report_variable_name(s->variable), what);
  report_html_escape(f, s->family);
  fputs(", ", f);
  report_html_escape(f, s->held);
  char head[128];
  snprintf(head, sizeof head, "Geometric mean of %s against %s", what,
           report_variable_name(s->variable));
  fputs("</title>\n", f);
  put_heading(f, head, s->family, s->held);
  for (int t = 0; t <= y_ticks; t++) {
    double v = y_step * t, y = top + plot_h - plot_h * v / y_top;
    fprintf(f,
            "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
            "<text x=\"%d\" y=\"%.1f\" class=\"tick\" text-anchor=\"end\">%.*f</text>\n",
            left, y, left + plot_w, y, left - 6, y + 4, ratio ? 2 : 0, v);
  }
  /* x ticks: round steps on a linear axis, the values themselves on the queue's log axis
   * (a label closer than 40 px to the last one is left out). */
  double last_label = -1e9;
  for (size_t t = 0; t < (ax.log_scale ? s->n_points : 64); t++) {
    double unit;
    char label[32];
    if (ax.log_scale) {
      unit = s->points[t].value;
      report_format_bytes(unit, label, sizeof label);
    } else {
      unit = ax.step * (double)t;
      if (unit > ax.hi + ax.step * 1e-6) break;
      snprintf(label, sizeof label, "%g", unit);
    }
    double x = axis_x(&ax, unit);
    fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", x, top, x,
            top + plot_h);
    if (x - last_label >= 40) {
      fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\" text-anchor=\"middle\">%s</text>", x,
              top + plot_h + 16, label);
      last_label = x;
    }
    fputc('\n', f);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\" text-anchor=\"middle\">%s</text>\n",
          left + plot_w / 2, H - 6,
          s->variable == REPORT_LOSS  ? "packet loss (%)"
          : s->variable == REPORT_RTT ? "round-trip time (ms)"
                                      : "queue size (bytes, log scale)");
  if (ratio) {
    double one = top + plot_h - plot_h / y_top;
    fprintf(f, "<line class=\"one\" x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", left, one,
            left + plot_w, one);
  }
  /* Lines first, then every point over them, then the legend. */
  for (int pass = 0; pass < 3; pass++) {
    size_t legend = 0;
    for (size_t c = 0; c < r->n_configs; c++) {
      if (ratio && c == r->baseline) continue;
      size_t n = 0;
      for (size_t k = 0; k < s->n_points; k++)
        n += (ratio ? s->points[k].paired[c] : s->points[k].n_pages[c]) > 0;
      if (n == 0 || (pass == 0 && n < 2)) continue;
      if (pass == 0)
        fprintf(f,
                "<polyline class=\"sweep-line\" fill=\"none\" style=\"stroke:%s;stroke-width:2\" "
                "points=\"",
                COLOURS[c % 8]);
      for (size_t k = 0, drawn = 0; k < s->n_points && pass < 2; k++) {
        const report_sweep_point *p = &s->points[k];
        double v = ratio ? p->ratio[c] : p->plt_ms[c];
        if ((ratio ? p->paired[c] : p->n_pages[c]) == 0) continue;
        double x = axis_x(&ax, axis_unit(s, p->value)), y = top + plot_h - plot_h * v / y_top;
        if (pass == 0) {
          fprintf(f, "%s%.1f,%.1f", drawn++ ? " " : "", x, y);
          continue;
        }
        char value[64];
        report_sweep_format_value(s, p, value, sizeof value);
        fprintf(f,
                "<circle class=\"point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" style=\"fill:%s\">"
                "<title>%s at %s: %.*f, %zu pages</title></circle>\n",
                x, y, COLOURS[c % 8], r->configs[c], value, ratio ? 3 : 0, v,
                ratio ? p->paired[c] : p->n_pages[c]);
      }
      if (pass == 0) fprintf(f, "\"><title>%s</title></polyline>\n", r->configs[c]);
      if (pass == 2)
        fprintf(f, "<text x=\"%.1f\" y=\"%zu\" class=\"label\" style=\"fill:%s\">%s</text>\n",
                left + plot_w + 10, (size_t)top + 14 * legend++ + 10, COLOURS[c % 8],
                r->configs[c]);
    }
  }
  fprintf(f, "</svg>\n");
}

static void sweep_section(FILE *f, const report *r) {
  if (r->n_sweeps == 0) return;
  fprintf(f,
          "<h2>Sweeps</h2>\n<p>One variable of the link at a time; the others held at "
          "their most common value in the link profile (docs/lab.md, \"Report\"). Cells: "
          "geometric mean over pages of the page load time in ms, and of the per-page ratio "
          "to %s.</p>\n",
          r->configs[r->baseline]);
  for (size_t i = 0; i < r->n_sweeps; i++) {
    const report_sweep *s = &r->sweeps[i];
    fprintf(f, "<h3>%s: ", report_variable_name(s->variable));
    report_html_escape(f, s->family);
    fputs(", ", f);
    report_html_escape(f, s->held);
    fprintf(f, "</h3>\n<table><tr><th>%s</th><th>pages</th>", report_variable_name(s->variable));
    int shown[REPORT_MAX_CONFIGS] = {0};
    for (size_t c = 0; c < r->n_configs; c++) {
      for (size_t k = 0; k < s->n_points; k++) shown[c] |= s->points[k].n_pages[c] > 0;
      if (shown[c]) fprintf(f, "<th>%s</th>", r->configs[c]);
    }
    fprintf(f, "</tr>\n");
    for (size_t k = 0; k < s->n_points; k++) {
      const report_sweep_point *p = &s->points[k];
      char value[64];
      report_sweep_format_value(s, p, value, sizeof value);
      fprintf(f, "<tr><td>%s</td><td>%zu</td>", value, p->pages);
      for (size_t c = 0; c < r->n_configs; c++) {
        if (!shown[c]) continue;
        if (p->n_pages[c] == 0)
          fprintf(f, "<td>–</td>");
        else if (p->paired[c] > 0 && c != r->baseline)
          fprintf(f, "<td>%.0f (%.3f)</td>", p->plt_ms[c], p->ratio[c]);
        else
          fprintf(f, "<td>%.0f</td>", p->plt_ms[c]);
      }
      fprintf(f, "</tr>\n");
    }
    fprintf(f, "</table>\n");
    sweep_chart(f, r, s);
  }
}

/* A table of reasons: each reason (escaped: it comes from the results), how often, and an
 * example (a load's key or a page). */
static void reasons_table(FILE *f, const char *what, const report_reason *reasons, size_t n) {
  if (n == 0) return;
  fprintf(f, "<table class=\"exclusions\"><tr><th>%s</th><th>count</th><th>for example</th></tr>\n",
          what);
  for (size_t i = 0; i < n; i++) {
    fputs("<tr><td>", f);
    report_html_escape(f, reasons[i].reason);
    fprintf(f, "</td><td>%zu</td><td>", reasons[i].count);
    report_html_escape(f, reasons[i].example);
    fputs("</td></tr>\n", f);
  }
  fputs("</table>\n", f);
}

/* "Left out of the figures", as in the text report: the invalid loads, the pages valid in
 * some configurations only, the pages not replayed and the requests left out of the
 * replays, each with its reason. */
static void exclusions_section(FILE *f, const report *r) {
  fprintf(f, "<h2>Left out of the figures</h2>\n<p>Invalid loads: %zu of %zu (%.1f%% valid).</p>\n",
          r->n_invalid, r->n_loads,
          r->n_loads ? 100.0 * (double)(r->n_loads - r->n_invalid) / (double)r->n_loads : 0.0);
  reasons_table(f, "why the load is invalid", r->invalid, r->n_invalid_reasons);
  size_t partial = 0;
  for (size_t g = 0; g < r->n_groups; g++) partial += report_partial_pages(r, g) > 0;
  if (partial > 0) {
    fputs("<p>Pages valid in some configurations only (left out of their link group's "
          "figures):</p>\n<table class=\"exclusions\"><tr><th>link group</th><th>pages</th></tr>\n",
          f);
    for (size_t g = 0; g < r->n_groups; g++) {
      size_t n = report_partial_pages(r, g);
      if (n == 0) continue;
      fputs("<tr><td>", f);
      report_html_escape(f, r->groups[g]);
      fprintf(f, "</td><td>%zu</td></tr>\n", n);
    }
    fputs("</table>\n", f);
  }
  fprintf(f, "<p>Pages not replayed: %zu.</p>\n", r->n_skipped);
  reasons_table(f, "why the page is not replayed", r->skipped, r->n_skipped_reasons);
  fprintf(f, "<p>Requests of replayed pages left out of every replay: %zu.</p>\n", r->n_left_out);
  reasons_table(f, "why the request is left out", r->left_out, r->n_left_out_reasons);
}

/* SPDY and HTTP/2 side by side (report_side_by_side), when the results have both. */
static void side_by_side_section(FILE *f, const report *r) {
  report_pair pairs[REPORT_MAX_PAIRS];
  size_t n = report_side_by_side(r, pairs, REPORT_MAX_PAIRS);
  if (n == 0) return;
  fprintf(f, "<h2>SPDY and HTTP/2 side by side</h2>\n<p>Pages valid in both; mean page load "
             "time, and the geometric mean of the per-page ratio h2 ÷ SPDY.</p>\n<table><tr>"
             "<th>link</th><th>SPDY</th><th>HTTP/2</th><th>pages</th><th>SPDY ms</th>"
             "<th>h2 ms</th><th>h2 ÷ SPDY</th></tr>\n");
  for (size_t i = 0; i < n; i++) {
    fprintf(f, "<tr><td>");
    report_html_escape(f, r->groups[pairs[i].group]);
    fprintf(f,
            "</td><td>%s</td><td>%s</td><td>%zu</td><td>%.0f</td><td>%.0f</td><td>%.3f</td></tr>\n",
            pairs[i].spdy, pairs[i].h2, pairs[i].pages, pairs[i].spdy_ms, pairs[i].h2_ms,
            pairs[i].ratio);
  }
  fprintf(f, "</table>\n");
}

int report_write_html(const report *r, const char *file) {
  FILE *f = fopen(file, "w");
  if (f == NULL) return -1;
  fprintf(f,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>speedy lab report</title>\n<style>\n"
          "body{font:14px/1.4 sans-serif;margin:2em;color:#222}table{border-collapse:collapse;"
          "margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
          "th:first-child,td:first-child{text-align:left}\n"
          ".exclusions td:last-child{text-align:left}.disagree{color:#c0392b}\n"
          ".grid{stroke:#ddd}.one{stroke:#444;stroke-dasharray:4 3}.ci{stroke:#222}"
          ".tick,.label{font-size:11px;fill:#444}.head{font-size:13px;font-weight:bold}"
          ".cdf-line{stroke-width:2}\n"
          /* Waterfalls (report_waterfall.c): columns in a monospace font, a colour per phase. */
          ".num,.url,.host,.proto{font-family:'DejaVu Sans Mono',monospace;font-size:11px;"
          "fill:#222}.colhead{font-size:11px;font-weight:bold;fill:#444}.sub{font-size:12px;"
          "fill:#444}.bg{fill:#fff}.bg.odd{fill:#f2f4f7}.row:hover .bg{fill:#fdefb2}"
          ".dns{fill:#139c98}.connect{fill:#f39c34}.queued{fill:#b4bbc5}.wait{fill:#6cc58a}"
          ".recv{fill:#2f7ed8}.recv.pushed{fill:#9260c8}.plt{stroke:#d62728;stroke-width:2}"
          ".bound{stroke:#333;stroke-width:2;stroke-dasharray:5 3}"
          ".waterfalls{display:flex;flex-direction:column;gap:1.5em}\n</style></head><body>\n"
          "<h1>speedy lab report</h1>\n<p>%zu loads, %zu invalid (left out), %zu on links over "
          "the lateness bound; %zu pages. Ratios are to %s, per page, geometric means with "
          "bootstrap 95%% confidence intervals. Not modelled: browser parse, layout and script "
          "time (docs/lab.md).</p>\n",
          r->n_loads, r->n_invalid, r->n_lateness, r->n_pages,
          r->n_configs ? r->configs[r->baseline] : "-");
  for (size_t g = 0; g < r->n_groups; g++) {
    fprintf(f, "<h2>");
    report_html_escape(f, r->groups[g]);
    fprintf(f, "</h2>\n<table><tr><th>config</th><th>pages</th><th>mean ms</th><th>median ms</th>"
               "<th>1 − mean ÷ HTTP/1.1</th><th>ratio (95%% CI)</th><th>÷ bound</th>"
               "<th>recovered</th></tr>\n");
    for (size_t c = 0; c < r->n_configs; c++) {
      const report_row *row = report_row_at(r, g, c);
      if (row->pages == 0) continue;
      fprintf(f, "<tr><td>%s</td><td>%zu</td><td>%.0f</td><td>%.0f</td><td>%.1f%%</td>",
              r->configs[c], row->pages, row->mean_ms, row->median_ms, 100 * row->paper_metric);
      if (row->has_ratio)
        fprintf(f, "<td>%.3f (%.3f–%.3f)</td>", row->ratio.estimate, row->ratio.low,
                row->ratio.high);
      else
        fprintf(f, "<td>–</td>");
      fprintf(f, "<td>%.2f</td><td>%.1f%%</td></tr>\n", row->bound_ratio, 100 * row->recovered);
    }
    fprintf(f, "</table>\n");
    bars_chart(f, r, g);
    cdf_chart(f, r, g);
  }
  side_by_side_section(f, r);
  if (report_validate_html(f, r) != 0) {
    fclose(f);
    return -1;
  }
  exclusions_section(f, r);
  sweep_section(f, r);
  report_html_waterfalls(f, r);
  fprintf(f, "</body></html>\n");
  return fclose(f) == 0 ? 0 : -1;
}
