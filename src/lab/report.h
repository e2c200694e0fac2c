/* report.h — `speedy lab report RESULTS [--html FILE]`: the original experiment's table
 * from the results of `speedy lab run` (report.c), and the self-contained HTML report
 * with SVG charts (report_html.c). Internal to those two files and the tests.
 */
#ifndef SPEEDY_LAB_REPORT_H
#define SPEEDY_LAB_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "stats.h"

#define REPORT_MAX_CONFIGS 16

/* One page in one link group and configuration: the mean over its valid repetitions. */
typedef struct report_cell {
  int present;
  double plt_ms, plt_cutoff_ms, bound_ms;
  double request_header_bytes, response_header_bytes;
  int repetitions;
  const json_t *first; /* the first valid load (for the waterfall), owned by report.lines */
} report_cell;

/* Per link group and configuration: the table's row. */
typedef struct report_row {
  size_t pages; /* pages with a valid load */
  double mean_ms, median_ms;
  double paper_metric; /* 1 - mean(config) / mean(baseline), over pages both have */
  lab_ci ratio;        /* geometric mean of per-page config / baseline, 95% CI */
  double bound_ratio;  /* geometric mean of per-page PLT / lower bound */
  double recovered;    /* (mean baseline - mean config) / (mean baseline - mean bound) */
  size_t paired;       /* pages in the ratio */
  int has_ratio;
} report_row;

typedef struct report {
  json_t *lines; /* every parsed result line */
  size_t n_loads, n_invalid, n_lateness;
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
} report;

/* Reads a results file and computes every figure (bootstrap with seed). Returns 0, or -1
 * with a reason in err. Free with report_free. */
int report_build(const char *results, uint64_t seed, report *out, char *err, size_t err_size);
void report_free(report *r);

report_cell *report_cell_at(const report *r, size_t group, size_t config, size_t page);
report_row *report_row_at(const report *r, size_t group, size_t config);

/* The text tables. */
void report_print(FILE *out, const report *r);

/* The HTML report: self-contained (no external resources), SVG charts. Returns 0 or -1. */
int report_write_html(const report *r, const char *file);

/* `speedy lab report`: argv[0] is "report". */
int lab_report_main(int argc, char **argv);

#endif
