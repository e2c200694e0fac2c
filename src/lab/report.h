/* report.h — `speedy lab report RESULTS [--html FILE]`: the original experiment's table
 * from the results of `speedy lab run` (report.c), the sweeps over loss, RTT and queue size
 * (report_sweep.c), the loader against Chromium (report_validate.c), and the
 * self-contained HTML report with SVG charts (report_html.c).
 * Internal to those files and the tests.
 */
#ifndef SPEEDY_LAB_REPORT_H
#define SPEEDY_LAB_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "stats.h"

#define REPORT_MAX_CONFIGS 24

/* One page in one link group and configuration: the mean over its valid repetitions. */
typedef struct report_cell {
  int present;
  double plt_ms, plt_cutoff_ms, bound_ms;
  double plt_median_ms;  /* the median over the repetitions (the loader against Chromium) */
  double plt_half_ms[2]; /* with 2 or more: the medians of the odd- and even-numbered
                            repetitions in the results' order (a client against itself) */
  double request_header_bytes, response_header_bytes;
  /* Chromium's loads: its renderer's main thread up to the load event (browser_work), the
   * means over the repetitions that report it (work_loads of them). */
  double work_tasks_ms, work_script_ms, work_style_layout_ms;
  int work_loads;
  int repetitions;
  const json_t *first; /* the first valid load (for the waterfall), owned by report.lines */
} report_cell;

/* Per link group and configuration: the table's row. Every figure is over the group's
 * comparable pages — those with a valid load in every configuration the group ran — so
 * that configurations are compared on the same pages; valid_* are over the
 * configuration's own valid pages, for what the comparison leaves out. */
typedef struct report_row {
  size_t pages; /* pages in the figures: the group's comparable pages this row has */
  double mean_ms, median_ms;
  double paper_metric; /* 1 - mean(config) / mean(baseline), over pages both have */
  lab_ci ratio;        /* geometric mean of per-page config / baseline, 95% CI */
  double bound_ratio;  /* geometric mean of per-page PLT / lower bound */
  double recovered;    /* (mean baseline - mean config) / (mean baseline - mean bound) */
  size_t paired;       /* pages in the ratio */
  int has_ratio;
  size_t valid_pages; /* pages with a valid load of this configuration */
  double valid_mean_ms, valid_median_ms;
} report_row;

/* A reason and how often it was seen (invalid loads, skipped pages, requests left out). */
typedef struct report_reason {
  char *reason;
  size_t count;
  char *example; /* the key of the first load or page with it */
} report_reason;

/* The link of a result line, as the sweeps see it. */
typedef struct report_link {
  char profile[32]; /* without the "-RTT" suffix `speedy lab run --rtt` adds */
  double loss;      /* a fraction */
  double rtt_ms;
  double queue_bytes; /* link.queue_down_bytes (the default when the line has none) */
  int queue_default;  /* queue_bytes is the link's default, one BDP (netem's rule) */
} report_link;

/* Returns 0, or -1 when the line has no link (`speedy load`'s own lines). */
int report_link_of(const json_t *line, report_link *out);

/* "24 kB", "1 MB", "1500 B" (decimal, as --queue's suffixes). */
void report_format_bytes(double bytes, char *out, size_t size);

typedef enum report_variable {
  REPORT_LOSS,
  REPORT_RTT,
  REPORT_QUEUE,
  REPORT_N_VARIABLES
} report_variable;

/* "loss", "RTT", "queue". */
const char *report_variable_name(report_variable v);

/* One value of a swept variable, the others held. Per configuration: the geometric mean
 * over pages of the page's mean PLT, and of the per-page ratio to the baseline. */
typedef struct report_sweep_point {
  double value;      /* loss as a fraction, RTT in ms, queue in bytes */
  int queue_default; /* the queue is the link's default (its size follows the RTT) */
  size_t pages;      /* pages with a valid load of any configuration */
  double plt_ms[REPORT_MAX_CONFIGS]; /* 0: no valid load */
  size_t n_pages[REPORT_MAX_CONFIGS];
  double ratio[REPORT_MAX_CONFIGS]; /* 0: no page with both */
  size_t paired[REPORT_MAX_CONFIGS];
  size_t comparable; /* pages valid in every configuration at this value: the figures' */
} report_sweep_point;

/* One variable swept within one family (link profile and TLS). */
typedef struct report_sweep {
  char family[96]; /* "cable, TLS off" */
  report_variable variable;
  char held[128];             /* the others: "RTT 28 ms, queue 24 kB (one BDP)" */
  report_sweep_point *points; /* by value, at least two */
  size_t n_points;
} report_sweep;

/* "1%", "20 ms", "24 kB (one BDP)". */
void report_sweep_format_value(const report_sweep *s, const report_sweep_point *p, char *out,
                               size_t size);

typedef struct report {
  json_t *lines; /* every parsed result line */
  size_t n_loads, n_invalid, n_lateness;
  /* valid loads of the loader (not Chromium's), and of them those whose page load time
   * ends where Chromium's load event would (settings.load_event, speedy load --load-event) */
  size_t n_loader_loads, n_loader_load_event;
  char **pages;
  size_t n_pages;
  char **groups; /* "cable, loss 0%, TLS off" */
  size_t n_groups;
  char *configs[REPORT_MAX_CONFIGS];
  size_t n_configs;
  size_t baseline;    /* index into configs: http1-fcfs when present */
  report_cell *cells; /* [group][config][page] */
  report_row *rows;   /* [group][config] */
  double **ratios;    /* [group * n_configs + config]: the per-page ratios, sorted */
  size_t *n_ratios;
  report_sweep *sweeps; /* by family, then loss, RTT, queue */
  size_t n_sweeps;
  /* What the figures leave out, and why. */
  size_t *comparable;          /* [group]: pages valid in every configuration the group ran */
  unsigned char *group_config; /* [group * n_configs + config]: the group has lines of it */
  report_reason *invalid;      /* invalid loads by reason (numbers replaced by #) */
  size_t n_invalid_reasons;
  report_reason *skipped; /* pages not replayed (speedy-lab-skip/1 lines), by reason */
  size_t n_skipped_reasons, n_skipped;
  report_reason *left_out; /* requests of replayed pages left out of every replay */
  size_t n_left_out_reasons, n_left_out;
} report;

/* Reads a results file and computes every figure (bootstrap with seed). Returns 0, or -1
 * with a reason in err. Free with report_free. */
int report_build(const char *results, uint64_t seed, report *out, char *err, size_t err_size);
void report_free(report *r);

report_cell *report_cell_at(const report *r, size_t group, size_t config, size_t page);
report_row *report_row_at(const report *r, size_t group, size_t config);

/* SPDY and HTTP/2 side by side (report.c): per link group, a SPDY configuration and its
 * HTTP/2 twin (spdy-multi and h2-multi, spdy-single and h2-single, spdy-multi and
 * h2-coalesced, spdy-push and h2-push, spdy-hint and h2-hint) over the pages valid in
 * both: mean page load times and the geometric mean of the per-page ratio h2 / SPDY. */
typedef struct report_pair {
  size_t group;
  const char *spdy, *h2;
  size_t pages;
  double spdy_ms, h2_ms, ratio;
} report_pair;
#define REPORT_MAX_PAIRS 256
/* Fills pairs (at most max) in group order; returns how many. */
size_t report_side_by_side(const report *r, report_pair *pairs, size_t max);

/* The configuration and the page a result line belongs to (report.c). */
const char *report_config_of(const json_t *line);
const char *report_page_of(const json_t *line);

/* Finds the sweeps in r's valid lines (r's pages and configurations are known). Returns 0,
 * or -1 out of memory. Freed by report_free. */
int report_sweeps_build(report *r);
void report_sweeps_free(report *r);

/* Pages of link group g with a valid load in some of its configurations but not in all:
 * left out of the group's figures ("Left out of the figures", text and HTML). */
size_t report_partial_pages(const report *r, size_t g);

/* The text tables. */
void report_print(FILE *out, const report *r);

/* The sweep tables (part of report_print; nothing without sweeps). */
void report_sweeps_print(FILE *out, const report *r);

/* The HTML report: self-contained (no external resources), SVG charts. Returns 0 or -1. */
int report_write_html(const report *r, const char *file);

/* `speedy lab report`: argv[0] is "report". */
int lab_report_main(int argc, char **argv);

#endif
