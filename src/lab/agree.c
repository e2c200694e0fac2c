/* agree.c — `speedy lab agree RUN1 RUN2`: do two runs of the same matrix agree?
 *
 * The lab's own repeatability check (docs/lab.md, "Repeatability"). For every link group
 * and configuration found in both results files, over the pages both have a valid load
 * of: the geometric mean of the per-page mean page load time in each run. Loss-free
 * groups agree when the two geometric means are within the tolerance (default 5 %) of
 * each other; groups with loss, where a lost SYN or tail costs whole seconds, agree when
 * the two bootstrap 95 % confidence intervals overlap. Exit status 0 when everything
 * agrees, 1 when something does not (or nothing could be compared), 2 on bad usage.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "report.h"

#define AGREE_RESAMPLES 2000u

/* Index of name in names[0..n), or n. */
static size_t find_name(char *const *names, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return n;
}

/* One group and configuration compared; returns 1 when they agree, 0 when not, -1 when
 * there was nothing to compare (no page in both). */
static int compare_cell(const report *a, const report *b, size_t ga, size_t gb, size_t ca,
                        size_t cb, double tolerance, uint64_t seed, FILE *out) {
  double *va = calloc(a->n_pages ? a->n_pages : 1, sizeof(double));
  double *vb = calloc(a->n_pages ? a->n_pages : 1, sizeof(double));
  if (va == NULL || vb == NULL) {
    free(va);
    free(vb);
    return -1;
  }
  size_t n = 0;
  double loss = 0;
  for (size_t p = 0; p < a->n_pages; p++) {
    size_t pb = find_name(b->pages, b->n_pages, a->pages[p]);
    if (pb == b->n_pages) continue;
    const report_cell *x = report_cell_at(a, ga, ca, p);
    const report_cell *y = report_cell_at(b, gb, cb, pb);
    if (!x->present || !y->present || x->plt_ms <= 0 || y->plt_ms <= 0) continue;
    const json_t *link = x->first != NULL ? json_object_get(x->first, "link") : NULL;
    double line_loss = json_number_value(json_object_get(link, "loss"));
    if (line_loss > loss) loss = line_loss;
    va[n] = x->plt_ms;
    vb[n] = y->plt_ms;
    n++;
  }
  int verdict = -1;
  if (n > 0) {
    lab_ci ca_ci, cb_ci;
    int rv = lab_stats_bootstrap_geomean(va, n, AGREE_RESAMPLES, seed, &ca_ci);
    if (rv == 0) rv = lab_stats_bootstrap_geomean(vb, n, AGREE_RESAMPLES, seed + 1, &cb_ci);
    if (rv == 0) {
      double ratio = cb_ci.estimate / ca_ci.estimate;
      if (loss > 0)
        verdict = ca_ci.low <= cb_ci.high && cb_ci.low <= ca_ci.high;
      else
        verdict = fabs(ratio - 1.0) <= tolerance;
      fprintf(out, "%-34s %-14s %5zu %9.1f (%7.1f-%7.1f) %9.1f (%7.1f-%7.1f) %+6.1f%%  %s %s\n",
              a->groups[ga], a->configs[ca], n, ca_ci.estimate, ca_ci.low, ca_ci.high,
              cb_ci.estimate, cb_ci.low, cb_ci.high, (ratio - 1.0) * 100.0,
              loss > 0 ? "CIs" : "gm ", verdict ? "agree" : "DIFFER");
    }
  }
  free(va);
  free(vb);
  return verdict;
}

static void agree_usage(FILE *out) {
  fprintf(out,
          "Usage: speedy lab agree [--tolerance PCT] [--seed N] RUN1 RUN2\n"
          "Whether two results files of the same matrix agree (docs/lab.md, "
          "\"Repeatability\"):\n"
          "per link group and configuration, the geometric mean over the pages both runs\n"
          "have of the page load time; loss-free groups must be within the tolerance, groups\n"
          "with loss must have overlapping bootstrap 95%% confidence intervals.\n\n"
          "  -t, --tolerance PCT  loss-free groups: largest difference in percent (default 5)\n"
          "  -s, --seed N         bootstrap seed (default 1)\n"
          "  -h, --help           this help\n"
          "Exit status: 0 all agree, 1 some differ or nothing to compare, 2 bad usage.\n");
}

int lab_agree_main(int argc, char **argv) {
  static const struct option long_options[] = {{"tolerance", required_argument, NULL, 't'},
                                               {"seed", required_argument, NULL, 's'},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  double tolerance = 0.05;
  uint64_t seed = 1;
  int c;
  char *end;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":t:s:h", long_options, NULL)) != -1) {
    switch (c) {
    case 't':
      tolerance = strtod(optarg, &end) / 100.0;
      if (end == optarg || *end != '\0' || !(tolerance > 0) || tolerance > 1) {
        fprintf(stderr,
                "speedy lab agree: bad --tolerance '%s': expected a percentage in "
                "(0, 100]\n",
                optarg);
        return 2;
      }
      break;
    case 's':
      seed = strtoull(optarg, &end, 10);
      if (end == optarg || *end != '\0' || optarg[0] == '-') {
        fprintf(stderr, "speedy lab agree: bad --seed '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      agree_usage(stdout);
      return 0;
    case ':':
      fprintf(stderr, "speedy lab agree: %s needs a value\n", argv[optind - 1]);
      return 2;
    default:
      fprintf(stderr, "speedy lab agree: unknown option '%s' (try --help)\n", argv[optind - 1]);
      return 2;
    }
  }
  if (optind + 2 != argc) {
    fprintf(stderr, "speedy lab agree: want two results files (try 'speedy lab agree --help')\n");
    return 2;
  }
  report a, b;
  char err[512];
  if (report_build(argv[optind], seed, &a, err, sizeof err) != 0) {
    fprintf(stderr, "speedy lab agree: %s\n", err);
    return 1;
  }
  if (report_build(argv[optind + 1], seed, &b, err, sizeof err) != 0) {
    fprintf(stderr, "speedy lab agree: %s\n", err);
    report_free(&a);
    return 1;
  }
  printf("%-34s %-14s %5s %29s %29s %7s\n", "link group", "config", "pages",
         "run 1 geomean ms (95% CI)", "run 2 geomean ms (95% CI)", "diff");
  size_t compared = 0, differ = 0;
  for (size_t ga = 0; ga < a.n_groups; ga++) {
    size_t gb = find_name(b.groups, b.n_groups, a.groups[ga]);
    if (gb == b.n_groups) continue;
    for (size_t ca = 0; ca < a.n_configs; ca++) {
      size_t cb = find_name(b.configs, b.n_configs, a.configs[ca]);
      if (cb == b.n_configs) continue;
      int verdict = compare_cell(&a, &b, ga, gb, ca, cb, tolerance, seed, stdout);
      if (verdict < 0) continue;
      compared++;
      if (!verdict) differ++;
    }
  }
  report_free(&a);
  report_free(&b);
  if (compared == 0) {
    fprintf(stderr, "speedy lab agree: no link group, configuration and page in both runs\n");
    return 1;
  }
  printf("%zu compared, %zu differ (loss-free: geometric means within %.1f%%; with loss: "
         "confidence intervals overlap)\n",
         compared, differ, tolerance * 100.0);
  return differ ? 1 : 0;
}
