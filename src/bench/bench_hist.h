/* bench_hist.h — a small HDR-style histogram of durations for `speedy bench`.
 *
 * Log-linear buckets: values below 256 ns are counted exactly; above, every power of two
 * is split into 128 equal buckets, so any recorded value is reported within 1/128
 * (< 0.8 %) of the truth, from 1 ns up to 2^64 ns, in a fixed 58 KiB table. No
 * allocation on the record path; histograms of several threads are merged by adding.
 *
 * Debian ships no C HdrHistogram (only the Java and Go ones), and the part we need is
 * this page of code, so it is written here rather than vendored.
 */
#ifndef SPEEDY_BENCH_HIST_H
#define SPEEDY_BENCH_HIST_H

#include <stdint.h>

#define BENCH_HIST_SUB_BITS 7
#define BENCH_HIST_BUCKETS (256 + 56 * 128)

typedef struct bench_hist {
  uint64_t count;
  uint64_t sum; /* saturating, for the mean */
  uint64_t min, max;
  uint64_t buckets[BENCH_HIST_BUCKETS];
} bench_hist;

void bench_hist_init(bench_hist *hist);
/* Records one value (nanoseconds; negative values are recorded as 0). */
void bench_hist_record(bench_hist *hist, int64_t value);
/* Adds every count of `from` into `into`. */
void bench_hist_merge(bench_hist *into, const bench_hist *from);
/* The value at quantile q (0.0 .. 1.0): the upper edge of the bucket holding the
 * ceil(q * count)-th smallest value, capped at the maximum. 0 when empty. */
uint64_t bench_hist_quantile(const bench_hist *hist, double q);
uint64_t bench_hist_mean(const bench_hist *hist);
/* The sample standard deviation (h2load's "sd"), from the buckets: 0 below two values. */
uint64_t bench_hist_stddev(const bench_hist *hist);
/* Bucket index of a value and the largest value of a bucket (exposed for tests). */
unsigned bench_hist_index(uint64_t value);
uint64_t bench_hist_bucket_top(unsigned index);

#endif /* SPEEDY_BENCH_HIST_H */
