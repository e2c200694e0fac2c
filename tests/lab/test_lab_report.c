/* test_lab_report.c — `speedy lab report`'s figures from a canned results file
 * (tests/lab/data/results-canned.jsonl: two pages, cable, http1-fcfs against spdy-multi,
 * two repetitions each, one invalid load): every column of the table checked by hand. Then
 * the sweeps (tests/lab/data/results-sweeps.jsonl, described at suite `sweeps`, and small
 * files written by the tests): which settings make a sweep, and every point's figures. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

Test(report, results_without_sweeps_print_no_sweep) {
  cr_assert_eq(r.n_sweeps, 0, "one loss, one RTT, one queue per link: no sweep");
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  report_print(out, &r);
  fclose(out);
  cr_assert_null(strstr(text, "Sweep"), "%s", text);
  free(text);
}

/* Sweeps: tests/lab/data/results-sweeps.jsonl, two pages, http1-fcfs and spdy-multi. Per
 * link setting, PLT(http1) is 1000·f on page a and 4000·f on page b (geometric mean 2000·f)
 * and spdy-multi is s times that (ratio s):
 *
 *   cable, TLS off   loss 0,  RTT 28,  default queue   f 1    s 0.5  (page a: 900, 1100 and
 *                                                                     an invalid 1e6)
 *                    loss 1%, RTT 28                   f 2    s 0.6
 *                    loss 2%, RTT 28                   f 3    s 0.7
 *                    loss 0,  RTT 20  ("cable-20")     f 0.8  s 0.45
 *                    loss 0,  RTT 100 ("cable-100")    f 2.5  s 0.4  (default queue: 50 kB)
 *                    loss 2%, RTT 100                  f 50   s 2    (in no sweep)
 *                    loss 0,  RTT 28,  queue 64 kB     f 0.95 s 0.7  (only the queue sweep)
 *                    loss 0,  RTT 28,  queue 1 MB      f 0.9  s 0.8  (only the queue sweep)
 *   cable, TLS on    loss 0,  RTT 20                   f 10   s 0.9  (another family)
 *   dsl, TLS off     loss 0,  RTT 50                   f 1.5  s 0.5  (one setting: no sweep)
 */
static report sw;

static void build_sweeps(void) {
  const char *src = getenv("SPEEDY_SOURCE_DIR");
  cr_assert_not_null(src, "SPEEDY_SOURCE_DIR must name the source tree");
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/tests/lab/data/results-sweeps.jsonl", src);
  cr_assert_eq(report_build(path, 1, &sw, err, sizeof err), 0, "%s", err);
}

static void free_sweeps(void) { report_free(&sw); }

static size_t sweep_config(const report *rep, const char *name) {
  for (size_t c = 0; c < rep->n_configs; c++)
    if (strcmp(rep->configs[c], name) == 0) return c;
  cr_assert_fail("no configuration %s", name);
  return 0;
}

static const report_sweep *sweep_named(const report *rep, const char *family, report_variable v) {
  for (size_t i = 0; i < rep->n_sweeps; i++)
    if (strcmp(rep->sweeps[i].family, family) == 0 && rep->sweeps[i].variable == v)
      return &rep->sweeps[i];
  cr_assert_fail("no %s sweep in %s (%zu sweeps)", report_variable_name(v), family, rep->n_sweeps);
  return NULL;
}

/* Each point's geometric-mean PLT of both configurations and the ratio of spdy-multi. */
static void assert_points(const report_sweep *s, size_t n, const double *value, const double *http1,
                          const double *spdy, const double *ratio) {
  size_t h = sweep_config(&sw, "http1-fcfs"), m = sweep_config(&sw, "spdy-multi");
  cr_assert_eq(s->n_points, n, "%s: %zu points, want %zu", report_variable_name(s->variable),
               s->n_points, n);
  for (size_t k = 0; k < n; k++) {
    const report_sweep_point *p = &s->points[k];
    cr_assert(CLOSE(p->value, value[k], 1e-9), "point %zu: value %g, want %g", k, p->value,
              value[k]);
    cr_assert_eq(p->pages, 2);
    cr_assert(CLOSE(p->plt_ms[h], http1[k], 1e-6), "at %g: http1-fcfs %f, want %f", value[k],
              p->plt_ms[h], http1[k]);
    cr_assert(CLOSE(p->plt_ms[m], spdy[k], 1e-6), "at %g: spdy-multi %f, want %f", value[k],
              p->plt_ms[m], spdy[k]);
    cr_assert(CLOSE(p->ratio[m], ratio[k], 1e-9), "at %g: ratio %f, want %f", value[k], p->ratio[m],
              ratio[k]);
    cr_assert_eq(p->paired[m], 2);
  }
}

TestSuite(sweeps, .init = build_sweeps, .fini = free_sweeps);

Test(sweeps, one_per_swept_variable_and_only_in_the_family_that_varies) {
  cr_assert_eq(sw.n_sweeps, 3, "loss, RTT and queue of cable with TLS off; got %zu", sw.n_sweeps);
  for (size_t i = 0; i < sw.n_sweeps; i++) {
    cr_assert_str_eq(sw.sweeps[i].family, "cable, TLS off");
    cr_assert_eq(sw.sweeps[i].variable, (report_variable)i, "in the order loss, RTT, queue");
  }
}

Test(sweeps, loss_sweep_holds_rtt_and_queue_at_their_most_common_value) {
  const report_sweep *s = sweep_named(&sw, "cable, TLS off", REPORT_LOSS);
  cr_assert_str_eq(s->held, "RTT 28 ms, queue 24 kB (one BDP)");
  assert_points(s, 3, (double[]){0, 0.01, 0.02}, (double[]){2000, 4000, 6000},
                (double[]){1000, 2400, 4200}, (double[]){0.5, 0.6, 0.7});
}

Test(sweeps, rtt_sweep_joins_the_renamed_profiles_and_keeps_the_default_queue) {
  const report_sweep *s = sweep_named(&sw, "cable, TLS off", REPORT_RTT);
  cr_assert_str_eq(s->held, "loss 0%, queue one BDP");
  assert_points(s, 3, (double[]){20, 28, 100}, (double[]){1600, 2000, 5000},
                (double[]){720, 1000, 2000}, (double[]){0.45, 0.5, 0.4});
}

Test(sweeps, queue_sweep_holds_loss_and_rtt) {
  const report_sweep *s = sweep_named(&sw, "cable, TLS off", REPORT_QUEUE);
  cr_assert_str_eq(s->held, "loss 0%, RTT 28 ms");
  assert_points(s, 3, (double[]){24000, 64000, 1e6}, (double[]){2000, 1900, 1800},
                (double[]){1000, 1330, 1440}, (double[]){0.5, 0.7, 0.8});
  cr_assert(s->points[0].queue_default && !s->points[1].queue_default &&
            !s->points[2].queue_default);
}

Test(sweeps, repetitions_are_averaged_and_invalid_loads_left_out) {
  const report_sweep *s = sweep_named(&sw, "cable, TLS off", REPORT_LOSS);
  /* Page a: (900 + 1100) / 2, not the invalid 1e6: sqrt(1000 * 4000). */
  cr_assert(CLOSE(s->points[0].plt_ms[sweep_config(&sw, "http1-fcfs")], 2000, 1e-6));
}

Test(sweeps, groups_differing_only_in_queue_are_named_by_it) {
  int bdp = 0, mb = 0;
  for (size_t g = 0; g < sw.n_groups; g++) {
    bdp |= strcmp(sw.groups[g], "cable, loss 0%, TLS off, queue 24 kB (one BDP)") == 0;
    mb |= strcmp(sw.groups[g], "cable, loss 0%, TLS off, queue 1 MB") == 0;
    cr_assert_neq(strcmp(sw.groups[g], "cable, loss 0%, TLS off"), 0, "queues mixed in a group");
  }
  cr_assert(bdp && mb);
  cr_assert_eq(sw.n_groups, 10);
}

Test(sweeps, text_report_has_a_table_per_sweep) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  report_print(out, &sw);
  fclose(out);
  cr_assert_not_null(strstr(text, "Sweep of loss: cable, TLS off (RTT 28 ms, queue 24 kB (one "
                                  "BDP))\n"),
                     "%s", text);
  cr_assert_not_null(strstr(text, "\nloss               pages       http1-fcfs       spdy-multi\n"
                                  "0%                   2/2             2000     1000 (0.500)\n"
                                  "1%                   2/2             4000     2400 (0.600)\n"),
                     "%s", text);
  cr_assert_not_null(strstr(text, "\n100 ms               2/2             5000     2000 (0.400)\n"),
                     "%s", text);
  cr_assert_not_null(strstr(text, "\n1 MB                 2/2             1800     1440 (0.800)\n"),
                     "%s", text);
  free(text);
}

/* Results written by the test itself: one page, http1-fcfs, one line per link setting. */
static void build_lines(report *rep, const char *const *links, const double *plt, size_t n) {
  char path[] = "/tmp/speedy-sweep-XXXXXX", err[256];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  cr_assert_not_null(f);
  for (size_t i = 0; i < n; i++)
    fprintf(f,
            "{\"format\": \"speedy-lab-result/1\", \"page\": \"p\", \"config\": \"http1-fcfs\", "
            "\"tls\": false, \"valid\": true, \"plt_ms\": %g, \"link\": {%s}}\n",
            plt[i], links[i]);
  fclose(f);
  int rc = report_build(path, 1, rep, err, sizeof err);
  unlink(path);
  cr_assert_eq(rc, 0, "%s", err);
}

#define DSL "\"profile\": \"dsl\", \"down_bps\": 2000000, \"up_bps\": 375000, "

Test(sweep_grid, a_tie_holds_the_smallest_value) {
  /* RTT {50, 100} x loss {0, 1%}: the loss curve at RTT 50, the RTT curve at loss 0. */
  const char *links[] = {
      DSL "\"rtt_ms\": 50, \"loss\": 0, \"queue_down_bytes\": 24000",
      DSL "\"rtt_ms\": 50, \"loss\": 0.01, \"queue_down_bytes\": 24000",
      "\"profile\": \"dsl-100\", \"down_bps\": 2000000, \"rtt_ms\": 100, \"loss\": 0, "
      "\"queue_down_bytes\": 25000",
      "\"profile\": \"dsl-100\", \"down_bps\": 2000000, \"rtt_ms\": 100, \"loss\": 0.01, "
      "\"queue_down_bytes\": 25000",
  };
  report rep;
  build_lines(&rep, links, (double[]){100, 200, 300, 400}, 4);
  cr_assert_eq(rep.n_sweeps, 2, "loss and RTT, no queue sweep; got %zu", rep.n_sweeps);
  const report_sweep *loss = sweep_named(&rep, "dsl, TLS off", REPORT_LOSS);
  const report_sweep *rtt = sweep_named(&rep, "dsl, TLS off", REPORT_RTT);
  cr_assert_str_eq(loss->held, "RTT 50 ms, queue 24 kB (one BDP)");
  cr_assert(loss->n_points == 2 && CLOSE(loss->points[1].plt_ms[0], 200, 1e-9));
  cr_assert_str_eq(rtt->held, "loss 0%, queue one BDP");
  cr_assert(rtt->n_points == 2 && CLOSE(rtt->points[1].plt_ms[0], 300, 1e-9));
  report_free(&rep);
}

Test(sweep_grid, a_queue_option_equal_to_the_default_is_one_setting) {
  /* `--rtt 20,50,100,200 --queue 24k` on dsl: at 20 and 50 ms 24 kB is also the default. */
  const char *links[] = {
      "\"profile\": \"dsl-20\", \"down_bps\": 2000000, \"rtt_ms\": 20, \"queue_down_bytes\": 24000",
      "\"profile\": \"dsl-50\", \"down_bps\": 2000000, \"rtt_ms\": 50, \"queue_down_bytes\": 24000",
      "\"profile\": \"dsl-100\", \"down_bps\": 2000000, \"rtt_ms\": 100, \"queue_down_bytes\": "
      "24000",
      "\"profile\": \"dsl-200\", \"down_bps\": 2000000, \"rtt_ms\": 200, \"queue_down_bytes\": "
      "24000",
  };
  report rep;
  build_lines(&rep, links, (double[]){100, 200, 300, 400}, 4);
  cr_assert_eq(rep.n_sweeps, 1, "one RTT sweep; got %zu", rep.n_sweeps);
  const report_sweep *rtt = sweep_named(&rep, "dsl, TLS off", REPORT_RTT);
  cr_assert_eq(rtt->n_points, 4);
  cr_assert_str_eq(rtt->held, "loss 0%, queue 24 kB");
  report_free(&rep);
}

Test(sweep_link, profile_loses_the_suffix_of_its_rtt_only) {
  report_link link;
  json_t *line = json_pack("{s:{s:s, s:f}}", "link", "profile", "dsl-100", "rtt_ms", 100.0);
  cr_assert_eq(report_link_of(line, &link), 0);
  cr_assert_str_eq(link.profile, "dsl");
  json_decref(line);
  line = json_pack("{s:{s:s, s:f}}", "link", "profile", "dsl-100", "rtt_ms", 50.0);
  cr_assert_eq(report_link_of(line, &link), 0);
  cr_assert_str_eq(link.profile, "dsl-100");
  json_decref(line);
}

Test(sweep_link, default_queue_is_one_bdp_with_a_floor_of_16_packets) {
  report_link link;
  json_t *line = json_pack("{s:{s:s, s:i, s:f, s:i}}", "link", "profile", "cable", "down_bps",
                           4000000, "rtt_ms", 100.0, "queue_down_bytes", 50000);
  cr_assert_eq(report_link_of(line, &link), 0);
  cr_assert(link.queue_default && CLOSE(link.queue_bytes, 50000, 1e-9), "4 Mbit/s x 100 ms");
  json_decref(line);
  line = json_pack("{s:{s:s, s:i, s:f, s:i}}", "link", "profile", "cable", "down_bps", 4000000,
                   "rtt_ms", 100.0, "queue_down_bytes", 1000000);
  cr_assert_eq(report_link_of(line, &link), 0);
  cr_assert(!link.queue_default, "--queue 1M");
  json_decref(line);
  line = json_pack("{s:{s:s, s:i, s:f}}", "link", "profile", "cable", "down_bps", 4000000, "rtt_ms",
                   28.0);
  cr_assert_eq(report_link_of(line, &link), 0);
  cr_assert(link.queue_default && CLOSE(link.queue_bytes, 24000, 1e-9), "none recorded: the floor");
  json_decref(line);
  line = json_pack("{s:n}", "link");
  cr_assert_eq(report_link_of(line, &link), -1, "speedy load's null link");
  json_decref(line);
}

Test(report, loads_with_dns_lookups_form_their_own_group) {
  char path[] = "/tmp/speedy-report-dns-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  for (int dns = 0; dns <= 200; dns += 200)
    for (int rep = 1; rep <= 2; rep++)
      fprintf(f,
              "{\"format\":\"speedy-lab-result/1\",\"page\":\"a\",\"config\":\"http1-fcfs\","
              "\"protocol\":\"http/1.1\",\"mode\":\"multi-domain\",\"dispatch\":\"fcfs\","
              "\"tls\":false,\"link\":{\"profile\":\"cable\",\"rtt_ms\":28,\"loss\":0},"
              "\"settings\":{\"dns_rtt_ms\":%d},\"repetition\":%d,\"valid\":true,"
              "\"plt_ms\":%d,\"plt_cutoff_ms\":%d,\"lower_bound_ms\":100,"
              "\"key\":\"a|%d|%d\"}\n",
              dns, rep, 1000 + dns, 1000 + dns, dns, rep);
  fclose(f);
  report built;
  char err[256];
  cr_assert_eq(report_build(path, 1, &built, err, sizeof err), 0, "%s", err);
  unlink(path);
  cr_assert_eq(built.n_groups, 2);
  cr_expect_str_eq(built.groups[0], "cable, loss 0%, TLS off");
  cr_expect_str_eq(built.groups[1], "cable, loss 0%, TLS off, DNS 200 ms");
  report_free(&built);
}

/* ---- figures over comparable pages, and what they leave out ---------------------------- */

/* One result line of page, configuration and page load time (valid when reason is NULL). */
static void put_line(FILE *f, const char *page, const char *config, double plt, const char *reason,
                     const char *left_out) {
  fprintf(f,
          "{\"format\":\"speedy-lab-result/1\",\"page\":\"%s\",\"config\":\"%s\",\"tls\":true,"
          "\"link\":{\"profile\":\"dsl\",\"rtt_ms\":50,\"loss\":0},\"valid\":%s,"
          "\"invalid_reason\":\"%s\",\"plt_ms\":%g,\"plt_cutoff_ms\":%g,\"lower_bound_ms\":100,"
          "\"key\":\"%s|%s\"%s%s}\n",
          page, config, reason ? "false" : "true", reason ? reason : "", plt, plt, page, config,
          left_out ? ",\"left_out\":" : "", left_out ? left_out : "");
}

static void build_file(report *rep, void (*write)(FILE *)) {
  char path[] = "/tmp/speedy-report-pages-XXXXXX", err[256];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  write(f);
  fclose(f);
  int rc = report_build(path, 1, rep, err, sizeof err);
  unlink(path);
  cr_assert_eq(rc, 0, "%s", err);
}

/* Pages a and b valid in both; c valid only in spdy-single (HTTP/1.1's load failed). */
static void three_pages(FILE *f) {
  put_line(f, "a", "http1-fcfs", 1000, NULL, "{\"data: URL\": 2, \"websocket\": 1}");
  put_line(f, "a", "spdy-single", 800, NULL, "{\"data: URL\": 2, \"websocket\": 1}");
  put_line(f, "b", "http1-fcfs", 2000, NULL, NULL);
  put_line(f, "b", "spdy-single", 1000, NULL, NULL);
  put_line(f, "c", "http1-fcfs", 0,
           "14 of 39 resources wrong; first #3 /a.png: status 404, planned 200", NULL);
  put_line(f, "c", "spdy-single", 100, NULL, NULL);
  put_line(f, "d", "http1-fcfs", 0,
           "2 of 9 resources wrong; first #1 /b.png: status 404, planned 200", NULL);
  put_line(f, "d", "spdy-single", 0,
           "9 of 9 resources wrong; first #0 /: failed: cannot connect to 192.0.2.1: the "
           "certificate did not verify",
           NULL);
  fprintf(f, "{\"format\":\"speedy-lab-skip/1\",\"key\":\"x.har#page 1|skipped\",\"source\":"
             "\"x.har\",\"page\":\"page 1\",\"reason\":\"no document: 1 request, none a document "
             "answered (first http://p.test/beacon, status 0)\"}\n");
}

Test(report_comparable, figures_are_over_the_pages_valid_in_every_configuration) {
  report rep;
  build_file(&rep, three_pages);
  size_t h = 0, s = 1;
  cr_assert_str_eq(rep.configs[h], "http1-fcfs");
  cr_assert_eq(rep.comparable[0], 2, "a and b");
  const report_row *http1 = report_row_at(&rep, 0, h), *spdy = report_row_at(&rep, 0, s);
  cr_assert_eq(spdy->pages, 2, "c is left out of the comparison");
  cr_assert(CLOSE(spdy->mean_ms, 900, 1e-9), "(800 + 1000) / 2, not with c's 100");
  cr_assert(CLOSE(http1->mean_ms, 1500, 1e-9));
  cr_assert(CLOSE(spdy->paper_metric, 1 - 1800.0 / 3000.0, 1e-9));
  cr_assert_eq(spdy->valid_pages, 3, "its own valid pages are shown apart");
  cr_assert(CLOSE(spdy->valid_mean_ms, 1900.0 / 3, 1e-9));
  report_free(&rep);
}

Test(report_comparable, every_exclusion_is_counted_with_its_reason) {
  report rep;
  build_file(&rep, three_pages);
  cr_assert_eq(rep.n_loads, 8, "the skip line is no load");
  cr_assert_eq(rep.n_invalid, 3);
  cr_assert_eq(rep.n_invalid_reasons, 2, "404s on different pages are one reason");
  cr_assert_eq(rep.invalid[0].count, 2);
  cr_assert_str_eq(rep.invalid[0].reason, "status #, planned #");
  cr_assert(strstr(rep.invalid[1].reason, "certificate did not verify") != NULL);
  cr_assert_eq(rep.n_skipped, 1);
  cr_assert(strstr(rep.skipped[0].reason, "no document") != NULL, "%s", rep.skipped[0].reason);
  cr_assert_str_eq(rep.skipped[0].example, "x.har#page 1|skipped");
  cr_assert_eq(rep.n_left_out, 3, "a's requests counted once, not once per configuration");
  cr_assert_str_eq(rep.left_out[0].reason, "data: URL");
  cr_assert_eq(rep.left_out[0].count, 2);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  report_print(out, &rep);
  fclose(out);
  cr_assert(strstr(text, "2 pages valid in every configuration") != NULL, "%s", text);
  cr_assert(strstr(text, "invalid loads: 3 of 8 (62.5% valid)") != NULL, "%s", text);
  cr_assert(strstr(text, "pages not replayed: 1") != NULL, "%s", text);
  cr_assert(strstr(text, "each configuration's own valid pages") != NULL, "%s", text);
  free(text);
  report_free(&rep);
}

/* A skip reason and an invalid reason with markup in them (they come from recordings). */
static void pages_with_markup(FILE *f) {
  three_pages(f);
  put_line(f, "e", "http1-fcfs", 0, "1 of 2 resources wrong; first #1 /x: <b>bold</b> & more",
           NULL);
  fprintf(f, "{\"format\":\"speedy-lab-skip/1\",\"key\":\"y.har#page 1|skipped\",\"source\":"
             "\"y.har\",\"page\":\"page 1\",\"reason\":\"document answered 404 <script>\"}\n");
}

Test(report_comparable, html_shows_every_exclusion_escaped) {
  report rep;
  build_file(&rep, pages_with_markup);
  char path[] = "/tmp/speedy-report-html-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_assert_eq(report_write_html(&rep, path), 0);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f);
  static char html[1 << 20];
  size_t n = fread(html, 1, sizeof html - 1, f);
  html[n] = '\0';
  fclose(f);
  unlink(path);
  report_free(&rep);
  const char *section = strstr(html, "<h2>Left out of the figures</h2>");
  cr_assert_not_null(section, "no exclusions section");
  cr_assert(strstr(section, "Invalid loads: 4 of 9 (55.6% valid).") != NULL, "%s", section);
  cr_assert(strstr(section, "<td>status #, planned #</td><td>2</td><td>c|http1-fcfs</td>") != NULL,
            "invalid loads by reason with an example: %s", section);
  cr_assert(strstr(section, "<td>dsl, loss 0%, TLS on</td><td>1</td>") != NULL,
            "c is valid in some configurations only: %s", section);
  cr_assert(strstr(section, "Pages not replayed: 2.") != NULL, "%s", section);
  cr_assert(strstr(section, "<td>x.har#page 1|skipped</td>") != NULL, "%s", section);
  cr_assert(strstr(section, "Requests of replayed pages left out of every replay: 3.") != NULL,
            "%s", section);
  cr_assert(strstr(section, "<td>data: URL</td><td>2</td><td>a</td>") != NULL, "%s", section);
  /* Escaped: nothing from the results becomes markup. */
  cr_assert(strstr(section, "&lt;b&gt;bold&lt;/b&gt; &amp; more") != NULL, "%s", section);
  cr_assert(strstr(section, "document answered 404 &lt;script&gt;") != NULL, "%s", section);
  cr_assert_null(strstr(html, "<b>"));
  cr_assert_null(strstr(html, "<script>"));
}

/* HTTP/2 beside SPDY: lines written by the test, two pages, spdy-multi and h2-multi. */
static void write_and_build(report *rep, const char *text) {
  char path[] = "/tmp/speedy-h2-XXXXXX", err[256];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
  int rc = report_build(path, 1, rep, err, sizeof err);
  unlink(path);
  cr_assert_eq(rc, 0, "%s", err);
}

#define H2_LINE(page, config, plt, req)                                                            \
  "{\"format\": \"speedy-lab-result/1\", \"page\": \"" page "\", \"config\": \"" config "\", "     \
  "\"tls\": true, \"valid\": true, \"plt_ms\": " plt ", \"request_header_bytes\": " req ", "       \
  "\"response_header_bytes\": 100, \"link\": {\"profile\": \"cable\", \"rtt_ms\": 28, "            \
  "\"loss\": 0}}\n"

Test(h2, spdy_and_h2_side_by_side_with_the_geometric_mean_of_h2_over_spdy) {
  report rep;
  /* page a: h2 0.5 of SPDY; page b: 2.0 -> geometric mean 1.000; means 1250 and 1250 */
  write_and_build(
      &rep, H2_LINE("a", "spdy-multi", "2000", "800") H2_LINE("a", "h2-multi", "1000", "600")
                H2_LINE("b", "spdy-multi", "500", "800") H2_LINE("b", "h2-multi", "1000", "600"));
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  report_print(out, &rep);
  fclose(out);
  cr_assert_not_null(strstr(text, "SPDY and HTTP/2 side by side"), "%s", text);
  cr_assert_not_null(strstr(text,
                            "cable, loss 0%, TLS on     spdy-multi    h2-multi          2      "
                            "1250      1000    1.000"),
                     "%s", text);
  cr_assert_not_null(strstr(text, "spdy-multi    zlib                  1600"), "%s", text);
  cr_assert_not_null(strstr(text, "h2-multi      HPACK                 1200"), "%s", text);
  free(text);
  char html[] = "/tmp/speedy-h2-html-XXXXXX";
  int fd = mkstemp(html);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_assert_eq(report_write_html(&rep, html), 0);
  FILE *in = fopen(html, "r");
  cr_assert_not_null(in);
  char page[65536];
  size_t got = fread(page, 1, sizeof page - 1, in);
  page[got] = '\0';
  fclose(in);
  unlink(html);
  cr_assert_not_null(strstr(page, "<h2>SPDY and HTTP/2 side by side</h2>"));
  cr_assert_not_null(strstr(page, "<td>spdy-multi</td><td>h2-multi</td><td>2</td><td>1250</td>"
                                  "<td>1000</td><td>1.000</td>"));
  report_free(&rep);
}

Test(h2, configurations_of_lines_without_a_config_field_come_from_protocol_and_mode) {
  json_t *line = json_pack("{s:s, s:s, s:b, s:b}", "protocol", "h2", "mode", "coalesced", "push", 0,
                           "hint", 0);
  cr_assert_str_eq(report_config_of(line), "h2-coalesced");
  json_object_set_new(line, "mode", json_string("single-domain"));
  cr_assert_str_eq(report_config_of(line), "h2-single");
  json_object_set_new(line, "hint", json_true());
  cr_assert_str_eq(report_config_of(line), "h2-hint");
  json_object_set_new(line, "protocol", json_string("spdy/3.1"));
  cr_assert_str_eq(report_config_of(line), "spdy-hint");
  json_decref(line);
  json_t *browser = json_pack("{s:s, s:s}", "client", "chromium", "config", "h2-coalesced");
  cr_assert_str_eq(report_config_of(browser), "chromium-h2-coalesced");
  json_decref(browser);
}

/* ---- the loader against Chromium ------------------------------------------------------- *
 * tests/lab/data/results-clients.jsonl, three repetitions per load, TLS on:
 *
 *   cable, loss 0%  page a  http1-fcfs  loader 1000 1100 5000 (median 1100)  Chromium 1000
 *                                       1050 1000 (1000): 1.100, within
 *                           h2-multi    loader 900               Chromium 950 950 940 (950)
 *                   page b  http1-fcfs  loader 2000              Chromium 2500: 0.800
 *                           h2-multi    loader 1800              Chromium 2000: 0.900, within
 *                   page c  http1-fcfs  loader 700               Chromium: every load invalid
 *                   means   loader h2-multi 1350 < http1-fcfs 1550; Chromium 1475 < 1750
 *   dsl, loss 0%    page a  http1-fcfs  3000 and 3000; h2-multi 2500 and 3300: the loader
 *                           puts h2-multi first, Chromium http1-fcfs
 *   cable, loss 1%  page a  http1-fcfs  the loader only: no pair
 */
static report clients;

static void build_clients(void) {
  const char *src = getenv("SPEEDY_SOURCE_DIR");
  cr_assert_not_null(src, "SPEEDY_SOURCE_DIR must name the source tree");
  char path[1024], err[256];
  snprintf(path, sizeof path, "%s/tests/lab/data/results-clients.jsonl", src);
  cr_assert_eq(report_build(path, 1, &clients, err, sizeof err), 0, "%s", err);
}

static void free_clients(void) { report_free(&clients); }

TestSuite(clients, .init = build_clients, .fini = free_clients);

Test(clients, text_has_the_loader_against_chromium_per_pair_order_and_page) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  report_print(out, &clients);
  fclose(out);
  char *section = strstr(text, "The loader against Chromium");
  cr_assert_not_null(section, "%s", text);
  char *next = strstr(section, "Left out of the figures");
  cr_assert_not_null(next, "the section comes before the exclusions: %s", text);
  *next = '\0';
  cr_assert_not_null(strstr(section, "cable, loss 0%, TLS on     http1-fcfs        2         "
                                     "1 (50.0%)        0.950"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "cable, loss 0%, TLS on     h2-multi          2        "
                                     "2 (100.0%)        0.924"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "dsl, loss 0%, TLS on       h2-multi          1          "
                                     "0 (0.0%)        0.758"),
                     "%s", section);
  cr_assert_null(strstr(section, "cable, loss 1%, TLS on     http1-fcfs"),
                 "the loader alone is no pair: %s", section);
  cr_assert_not_null(
      strstr(section, "  cable, loss 0%, TLS on: h2-multi < http1-fcfs for both (2 pages)"), "%s",
      section);
  cr_assert_not_null(strstr(section, "  dsl, loss 0%, TLS on: DISAGREE: speedy load h2-multi < "
                                     "http1-fcfs, Chromium http1-fcfs < h2-multi (0 of 1 "
                                     "comparisons alike; 1 page)"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "a.har#page 1                                 cable, loss "
                                     "0%, TLS on     http1-fcfs           1100      1000   1.100 "
                                     "   yes"),
                     "the median of 1000, 1100 and 5000: %s", section);
  cr_assert_not_null(strstr(section, "b.har#page 1                                 cable, loss "
                                     "0%, TLS on     http1-fcfs           2000      2500   0.800 "
                                     "    no"),
                     "%s", section);
  cr_assert_null(strstr(section, "c.har#page 1                                 cable"),
                 "c has no valid Chromium load: %s", section);
  free(text);
}

Test(clients, html_has_the_same_tables_and_flags_the_disagreement) {
  char path[] = "/tmp/speedy-clients-html-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  cr_assert_eq(report_write_html(&clients, path), 0);
  FILE *in = fopen(path, "r");
  cr_assert_not_null(in);
  static char page[1 << 18];
  size_t got = fread(page, 1, sizeof page - 1, in);
  page[got] = '\0';
  fclose(in);
  unlink(path);
  const char *section = strstr(page, "<h2>The loader against Chromium</h2>");
  cr_assert_not_null(section, "no section");
  cr_assert_not_null(strstr(section, "<td>cable, loss 0%, TLS on</td><td>http1-fcfs</td><td>2</td>"
                                     "<td>1</td><td>50.0%</td><td>0.950</td>"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "<td>cable, loss 0%, TLS on</td><td>h2-multi &lt; "
                                     "http1-fcfs</td><td>h2-multi &lt; http1-fcfs</td><td>2</td>"
                                     "<td>yes</td>"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "<td>dsl, loss 0%, TLS on</td><td>h2-multi &lt; "
                                     "http1-fcfs</td><td>http1-fcfs &lt; h2-multi</td><td>1</td>"
                                     "<td><strong class=\"disagree\">no</strong> (0 of 1 alike)"),
                     "%s", section);
  cr_assert_not_null(strstr(section, "<td>a.har#page 1</td><td>cable, loss 0%, TLS on</td>"
                                     "<td>http1-fcfs</td><td>1100</td><td>1000</td><td>1.100</td>"
                                     "<td>yes</td>"),
                     "%s", section);
}

Test(report, no_loader_against_chromium_without_browser_loads) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  report_print(out, &r);
  fclose(out);
  cr_assert_null(strstr(text, "The loader against Chromium"), "%s", text);
  free(text);
}
