/* test_bench_hist.c — the latency histogram of `speedy bench`: exact below 256 ns,
 * within 1/128 above, quantiles by rank, merging. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "bench_hist.h"

static bench_hist *new_hist(void) {
  bench_hist *h = malloc(sizeof(*h));
  cr_assert_not_null(h);
  bench_hist_init(h);
  return h;
}

Test(bench_hist, small_values_are_exact) {
  for (uint64_t v = 0; v < 256; v++) cr_assert_eq(bench_hist_bucket_top(bench_hist_index(v)), v);
}

Test(bench_hist, bucket_holds_value_within_one_128th) {
  for (uint64_t v = 256; v < (UINT64_C(1) << 40); v = v * 3 / 2 + 7) {
    uint64_t top = bench_hist_bucket_top(bench_hist_index(v));
    cr_assert(top >= v, "bucket top %llu below value %llu", (unsigned long long)top,
              (unsigned long long)v);
    cr_assert((double)(top - v) <= (double)v / 128.0, "bucket of %llu too wide (top %llu)",
              (unsigned long long)v, (unsigned long long)top);
  }
}

Test(bench_hist, largest_value_has_a_bucket) {
  cr_assert_eq(bench_hist_index(UINT64_MAX), BENCH_HIST_BUCKETS - 1);
  cr_assert_eq(bench_hist_bucket_top(BENCH_HIST_BUCKETS - 1), UINT64_MAX);
}

Test(bench_hist, quantiles_of_one_to_ten_thousand) {
  bench_hist *h = new_hist();
  for (int64_t v = 1; v <= 10000; v++) bench_hist_record(h, v * 1000);
  uint64_t p50 = bench_hist_quantile(h, 0.5), p99 = bench_hist_quantile(h, 0.99);
  cr_assert(p50 >= 5000000 && p50 <= 5000000 + 5000000 / 128, "p50 %llu", (unsigned long long)p50);
  cr_assert(p99 >= 9900000 && p99 <= 9900000 + 9900000 / 128, "p99 %llu", (unsigned long long)p99);
  cr_assert_eq(bench_hist_quantile(h, 1.0), 10000000);
  cr_assert_eq(h->min, 1000);
  cr_assert_eq(bench_hist_mean(h), 5000500);
  free(h);
}

Test(bench_hist, one_slow_value_shows_at_p99_9_not_p99) {
  bench_hist *h = new_hist();
  for (int i = 0; i < 999; i++) bench_hist_record(h, 1000);
  bench_hist_record(h, 1000000000);
  cr_assert_lt(bench_hist_quantile(h, 0.99), 1010);
  cr_assert_eq(bench_hist_quantile(h, 0.9999), 1000000000);
  free(h);
}

Test(bench_hist, merge_adds_counts) {
  bench_hist *a = new_hist(), *b = new_hist();
  bench_hist_record(a, 10);
  bench_hist_record(b, 20);
  bench_hist_record(b, 30);
  bench_hist_merge(a, b);
  cr_assert_eq(a->count, 3);
  cr_assert_eq(a->min, 10);
  cr_assert_eq(a->max, 30);
  cr_assert_eq(bench_hist_quantile(a, 0.5), 20);
  free(a);
  free(b);
}

Test(bench_hist, empty_and_negative) {
  bench_hist *h = new_hist();
  cr_assert_eq(bench_hist_quantile(h, 0.5), 0);
  bench_hist_record(h, -5);
  cr_assert_eq(h->max, 0);
  free(h);
}
