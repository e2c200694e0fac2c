/* bench_hist.c — the log-linear latency histogram of `speedy bench` (see bench_hist.h). */
#include "bench_hist.h"

#include <math.h>
#include <string.h>

void bench_hist_init(bench_hist *hist) {
  memset(hist, 0, sizeof(*hist));
  hist->min = UINT64_MAX;
}

unsigned bench_hist_index(uint64_t value) {
  if (value < 256) return (unsigned)value;
  unsigned msb = 63u - (unsigned)__builtin_clzll(value); /* 8 .. 63 */
  unsigned shift = msb - BENCH_HIST_SUB_BITS;            /* 1 .. 56 */
  unsigned top = (unsigned)(value >> shift);             /* 128 .. 255 */
  return 256u + (shift - 1u) * 128u + (top - 128u);
}

uint64_t bench_hist_bucket_top(unsigned index) {
  if (index < 256) return index;
  unsigned shift = (index - 256u) / 128u + 1u;
  uint64_t top = 128u + (index - 256u) % 128u;
  /* the bucket holds [top << shift, ((top + 1) << shift) - 1] */
  return ((top + 1u) << shift) - 1u;
}

void bench_hist_record(bench_hist *hist, int64_t value) {
  uint64_t v = value < 0 ? 0 : (uint64_t)value;
  hist->buckets[bench_hist_index(v)]++;
  hist->count++;
  hist->sum = hist->sum > UINT64_MAX - v ? UINT64_MAX : hist->sum + v;
  if (v < hist->min) hist->min = v;
  if (v > hist->max) hist->max = v;
}

void bench_hist_merge(bench_hist *into, const bench_hist *from) {
  if (from->count == 0) return;
  for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) into->buckets[i] += from->buckets[i];
  into->count += from->count;
  into->sum = into->sum > UINT64_MAX - from->sum ? UINT64_MAX : into->sum + from->sum;
  if (from->min < into->min) into->min = from->min;
  if (from->max > into->max) into->max = from->max;
}

uint64_t bench_hist_quantile(const bench_hist *hist, double q) {
  if (hist->count == 0) return 0;
  if (q <= 0.0) return hist->min;
  if (q >= 1.0) return hist->max;
  double want_f = q * (double)hist->count;
  uint64_t want = (uint64_t)want_f;
  if ((double)want < want_f) want++; /* ceil */
  if (want == 0) want = 1;
  uint64_t seen = 0;
  for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
    seen += hist->buckets[i];
    if (seen >= want) {
      uint64_t top = bench_hist_bucket_top(i);
      return top > hist->max ? hist->max : top < hist->min ? hist->min : top;
    }
  }
  return hist->max;
}

uint64_t bench_hist_mean(const bench_hist *hist) {
  return hist->count ? hist->sum / hist->count : 0;
}

/* From the buckets, each value taken as its bucket's middle: within the buckets' 1/128. */
uint64_t bench_hist_stddev(const bench_hist *hist) {
  if (hist->count < 2) return 0;
  double mean = (double)bench_hist_mean(hist), squares = 0.0;
  for (unsigned i = 0; i < BENCH_HIST_BUCKETS; i++) {
    if (hist->buckets[i] == 0) continue;
    double top = (double)bench_hist_bucket_top(i);
    double bottom = i == 0 ? 0.0 : (double)bench_hist_bucket_top(i - 1) + 1.0;
    double d = (top + bottom) / 2.0 - mean;
    squares += d * d * (double)hist->buckets[i];
  }
  return (uint64_t)sqrt(squares / (double)(hist->count - 1));
}
