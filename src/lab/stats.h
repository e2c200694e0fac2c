/* stats.h — the statistics of the lab's report: means, medians, geometric means and a
 * percentile-bootstrap confidence interval of the geometric mean. Pure functions; the
 * bootstrap's generator is seeded by the caller so a report is reproducible.
 */
#ifndef SPEEDY_LAB_STATS_H
#define SPEEDY_LAB_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Arithmetic mean of v[0..n); 0 when n is 0. */
double lab_stats_mean(const double *v, size_t n);

/* Median of v[0..n) (the mean of the two middle values when n is even); v is not
 * changed; 0 when n is 0 or out of memory. */
double lab_stats_median(const double *v, size_t n);

/* Geometric mean of v[0..n), all of which must be > 0; 0 when n is 0 or any is <= 0. */
double lab_stats_geomean(const double *v, size_t n);

typedef struct lab_ci {
  double estimate, low, high; /* the geometric mean and its interval */
} lab_ci;

/* Percentile bootstrap of the geometric mean of v[0..n) (all > 0): `resamples` resamples
 * of n values drawn with replacement, the 2.5th and 97.5th percentiles of their geometric
 * means. n == 1 gives a zero-width interval. Returns 0, or -1 (n == 0, a value <= 0, or
 * out of memory). */
int lab_stats_bootstrap_geomean(const double *v, size_t n, unsigned resamples, uint64_t seed,
                                lab_ci *out);

/* The p-th quantile (0..1) of sorted[0..n), linear between order statistics. */
double lab_stats_quantile_sorted(const double *sorted, size_t n, double p);

#endif
