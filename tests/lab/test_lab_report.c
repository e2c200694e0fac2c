/* test_lab_report.c — `speedy lab report`'s figures from a canned results file
 * (tests/lab/data/results-canned.jsonl: two pages, cable, http1-fcfs against spdy-multi,
 * two repetitions each, one invalid load): every column of the table checked by hand. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define CLOSE(a, b, eps) (fabs((a) - (b)) <= (eps))

static report r;

static void build(void) {
  const char *src = getenv("SPEEDY_SOURCE_DIR");
  cr_assert_not_null(src, "SPEEDY_SOURCE_DIR must name the source tree");
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/tests/lab/data/results-canned.jsonl", src);
  cr_assert_eq(report_build(path, 1, &r, err, sizeof err), 0, "%s", err);
}

static void teardown(void) { report_free(&r); }

static size_t config_index(const char *name) {
  for (size_t c = 0; c < r.n_configs; c++)
    if (strcmp(r.configs[c], name) == 0) return c;
  cr_assert_fail("no configuration %s", name);
  return 0;
}

TestSuite(report, .init = build, .fini = teardown);

Test(report, invalid_loads_are_counted_and_left_out) {
  cr_assert_eq(r.n_loads, 9);
  cr_assert_eq(r.n_invalid, 1);
  size_t h = config_index("http1-fcfs");
  cr_assert(CLOSE(report_cell_at(&r, 0, h, 0)->plt_ms, 1010, 1e-9), "mean of 1000 and 1020");
}

Test(report, baseline_is_http1_fcfs) {
  cr_assert_str_eq(r.configs[r.baseline], "http1-fcfs");
  cr_assert_eq(r.n_groups, 1);
  cr_assert_str_eq(r.groups[0], "cable, loss 0%, TLS off");
}

Test(report, mean_and_median_over_pages) {
  const report_row *row = report_row_at(&r, 0, config_index("http1-fcfs"));
  cr_assert_eq(row->pages, 2);
  cr_assert(CLOSE(row->mean_ms, (1010 + 4040) / 2.0, 1e-9));
  cr_assert(CLOSE(row->median_ms, (1010 + 4040) / 2.0, 1e-9));
}

Test(report, white_paper_metric_is_one_minus_ratio_of_means) {
  const report_row *row = report_row_at(&r, 0, config_index("spdy-multi"));
  cr_assert(CLOSE(row->paper_metric, 1 - (505.0 + 3232.0) / (1010.0 + 4040.0), 1e-9), "%f",
            row->paper_metric);
}

Test(report, paired_ratio_is_a_geometric_mean_with_its_interval) {
  const report_row *row = report_row_at(&r, 0, config_index("spdy-multi"));
  cr_assert(row->has_ratio);
  cr_assert(CLOSE(row->ratio.estimate, sqrt(0.5 * 0.8), 1e-9), "%f", row->ratio.estimate);
  cr_assert(row->ratio.low >= 0.5 - 1e-9 && row->ratio.high <= 0.8 + 1e-9);
}

Test(report, ratio_to_bound_and_share_recovered) {
  const report_row *h = report_row_at(&r, 0, config_index("http1-fcfs"));
  const report_row *s = report_row_at(&r, 0, config_index("spdy-multi"));
  cr_assert(CLOSE(h->bound_ratio, 2.02, 1e-9), "%f", h->bound_ratio);
  cr_assert(CLOSE(s->recovered, (5050.0 - 3737.0) / (5050.0 - 2500.0), 1e-9), "%f", s->recovered);
}
