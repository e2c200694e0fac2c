/* stats.c — means, medians, geometric means and the bootstrap confidence interval used by
 * `speedy lab report` (stats.h). Geometric means are taken in log space so that ratios
 * above and below 1 weigh the same, and pages differing in size by orders of magnitude
 * count alike.
 */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

double lab_stats_mean(const double *v, size_t n) {
  if (n == 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++) sum += v[i];
  return sum / (double)n;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double lab_stats_quantile_sorted(const double *sorted, size_t n, double p) {
  if (n == 0) return 0;
  if (p <= 0) return sorted[0];
  if (p >= 1) return sorted[n - 1];
  double at = p * (double)(n - 1);
  size_t i = (size_t)at;
  double frac = at - (double)i;
  if (i + 1 >= n) return sorted[n - 1];
  return sorted[i] + frac * (sorted[i + 1] - sorted[i]);
}

double lab_stats_median(const double *v, size_t n) {
  if (n == 0) return 0;
  double *copy = malloc(n * sizeof *copy);
  if (copy == NULL) return 0;
  memcpy(copy, v, n * sizeof *copy);
  qsort(copy, n, sizeof *copy, compare_double);
  double m = lab_stats_quantile_sorted(copy, n, 0.5);
  free(copy);
  return m;
}

double lab_stats_geomean(const double *v, size_t n) {
  if (n == 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(v[i] > 0)) return 0;
    sum += log(v[i]);
  }
  return exp(sum / (double)n);
}

int lab_stats_bootstrap_geomean(const double *v, size_t n, unsigned resamples, uint64_t seed,
                                lab_ci *out) {
  if (n == 0 || resamples == 0) return -1;
  double *logs = malloc(n * sizeof *logs);
  double *means = malloc(resamples * sizeof *means);
  if (logs == NULL || means == NULL) {
    free(logs);
    free(means);
    return -1;
  }
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (!(v[i] > 0)) {
      free(logs);
      free(means);
      return -1;
    }
    logs[i] = log(v[i]);
    sum += logs[i];
  }
  rng_gen rng;
  rng_seed(&rng, seed);
  for (unsigned r = 0; r < resamples; r++) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += logs[rng_below(&rng, n)];
    means[r] = s / (double)n;
  }
  qsort(means, resamples, sizeof *means, compare_double);
  out->estimate = exp(sum / (double)n);
  out->low = exp(lab_stats_quantile_sorted(means, resamples, 0.025));
  out->high = exp(lab_stats_quantile_sorted(means, resamples, 0.975));
  free(logs);
  free(means);
  return 0;
}
