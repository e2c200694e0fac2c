/* report_validate.h — "The loader against Chromium" in `speedy lab report` (text and HTML):
 * how closely `speedy load`'s page load times follow the browser's on the same pages, links
 * and replays (report_validate.c). Internal to the report's files and the tests.
 */
#ifndef SPEEDY_LAB_REPORT_VALIDATE_H
#define SPEEDY_LAB_REPORT_VALIDATE_H

#include <stdio.h>

#include "report.h"

/* A page is "within" when |loader − Chromium| ≤ 10% of Chromium's page load time. */
#define REPORT_VALIDATE_TOLERANCE 0.10

/* Is loader / chromium (a ratio of page load times) within REPORT_VALIDATE_TOLERANCE of 1?
 * A rounding error's worth over the boundary still counts (1100 ms against 1000 ms is). */
int report_validate_within(double ratio);

/* One page of a pair: the medians over its valid repetitions of each client. */
typedef struct report_validate_page {
  size_t page; /* index into report.pages */
  double loader_ms, chromium_ms;
  double ratio; /* loader ÷ Chromium */
  int within;
} report_validate_page;

/* A configuration of the loader and its Chromium twin in one link group (link, loss, TLS),
 * over the pages valid in both. */
typedef struct report_validate_pair {
  size_t group;
  size_t loader, chromium; /* indices into report.configs */
  report_validate_page *pages;
  size_t n_pages;
  size_t within;       /* pages within ±10% */
  double median_ratio; /* of the per-page ratios */
  /* Each client against itself, [0] the loader, [1] Chromium: of these pages, those it
   * loaded twice or more, and those whose odd-numbered loads' median lies within ±10% of
   * the even-numbered ones' — how closely the repetitions let two medians agree. */
  size_t self_pages[2], self_within[2];
  /* What the loader does not model: Chromium's own work up to the load event (its
   * renderer's main thread: every task, script, style and layout), over the pages whose
   * loads report it (work_pages) — medians of the per-page means, and of their share of the
   * page's median page load time — beside the median of Chromium's minus the loader's page
   * load time over every page of the pair. */
  size_t work_pages;
  double work_tasks_ms, work_script_ms, work_style_layout_ms, work_share;
  double gap_ms;
} report_validate_pair;

/* The configurations of one link group ordered by mean page load time, per client, over the
 * pages valid in every configuration of both (the group's pairs, by the loader's names). */
typedef struct report_validate_order {
  size_t group;
  size_t n;                               /* configurations (pairs), at least two */
  size_t pair[REPORT_MAX_CONFIGS];        /* indices into report_validation.pairs */
  double loader_ms[REPORT_MAX_CONFIGS];   /* the means, by pair */
  double chromium_ms[REPORT_MAX_CONFIGS]; /* the means, by pair */
  size_t by_loader[REPORT_MAX_CONFIGS];   /* pair's positions 0..n-1, fastest first */
  size_t by_chromium[REPORT_MAX_CONFIGS]; /* pair's positions 0..n-1, fastest first */
  size_t pages;                           /* the common pages (0: no order) */
  size_t comparisons, alike;              /* pairs of configurations, and those ordered alike */
} report_validate_order;

typedef struct report_validation {
  report_validate_pair *pairs; /* by group, then configuration */
  size_t n_pairs;
  report_validate_order *orders; /* groups with at least two pairs */
  size_t n_orders;
} report_validation;

/* Fills out from r (none when r has no configuration with both clients). Returns 0, or -1
 * out of memory. Free with report_validate_free. */
int report_validate_build(const report *r, report_validation *out);
void report_validate_free(report_validation *v);

/* Sorts the positions 0..n-1 by means[position], fastest first (ties keep their order). */
void report_validate_rank(const double *means, size_t n, size_t *order);

/* Pairs i < j of positions that means_a and means_b order alike (a tie is an order of its
 * own); the number of such pairs is n(n-1)/2 when the orders agree. */
size_t report_validate_alike(const double *means_a, const double *means_b, size_t n);

/* The section in text and in HTML: nothing when the validation has no pair. Returns 0, or
 * -1 out of memory. */
int report_validate_print(FILE *out, const report *r);
int report_validate_html(FILE *f, const report *r);

#endif
