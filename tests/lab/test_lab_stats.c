/* test_lab_stats.c — the report's statistics (stats.c) and the physical lower bound
 * (bound.c): exact values on small inputs, the bootstrap reproducible from its seed. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>

#include "bound.h"
#include "stats.h"

#define CLOSE(a, b, eps) (fabs((a) - (b)) <= (eps))

Test(stats, mean_and_median_of_odd_and_even_counts) {
  double odd[] = {5, 1, 3}, even[] = {4, 1, 3, 2};
  cr_assert(CLOSE(lab_stats_mean(odd, 3), 3, 1e-12));
  cr_assert(CLOSE(lab_stats_median(odd, 3), 3, 1e-12), "median of 5,1,3 is 3");
  cr_assert(CLOSE(lab_stats_median(even, 4), 2.5, 1e-12), "median of 4,1,3,2 is 2.5");
  cr_assert(odd[0] == 5 && odd[1] == 1, "the median leaves its input unchanged");
}

Test(stats, geometric_mean_weighs_halving_and_doubling_alike) {
  double v[] = {0.5, 2.0};
  cr_assert(CLOSE(lab_stats_geomean(v, 2), 1.0, 1e-12));
  double bad[] = {1.0, 0.0};
  cr_assert_eq(lab_stats_geomean(bad, 2), 0, "a value <= 0 has no geometric mean");
}

Test(stats, bootstrap_is_reproducible_from_its_seed) {
  double v[] = {0.61, 0.72, 0.55, 0.93, 0.81, 0.67, 0.74, 1.02};
  lab_ci a, b, c;
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 8, 2000, 42, &a), 0);
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 8, 2000, 42, &b), 0);
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 8, 2000, 43, &c), 0);
  cr_assert(a.low == b.low && a.high == b.high, "same seed, same interval");
  cr_assert(a.low != c.low || a.high != c.high, "another seed draws other resamples");
}

Test(stats, bootstrap_interval_contains_the_estimate) {
  double v[] = {0.61, 0.72, 0.55, 0.93, 0.81, 0.67, 0.74, 1.02};
  lab_ci ci;
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 8, 2000, 1, &ci), 0);
  cr_assert(CLOSE(ci.estimate, lab_stats_geomean(v, 8), 1e-12));
  cr_assert(ci.low < ci.estimate && ci.estimate < ci.high, "%.3f < %.3f < %.3f", ci.low,
            ci.estimate, ci.high);
  cr_assert(ci.low >= 0.55 && ci.high <= 1.02, "inside the data's range");
}

Test(stats, bootstrap_of_one_value_has_zero_width) {
  double v[] = {0.8};
  lab_ci ci;
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 1, 100, 1, &ci), 0);
  cr_assert(ci.low == ci.high && CLOSE(ci.low, 0.8, 1e-12));
}

Test(stats, bootstrap_refuses_empty_or_non_positive_input) {
  double v[] = {1.0, -1.0};
  lab_ci ci;
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 0, 100, 1, &ci), -1);
  cr_assert_eq(lab_stats_bootstrap_geomean(v, 2, 100, 1, &ci), -1);
}

/* A document with a CSS child whose font is its child: depth 3; a redirect first: 4. */
static json_t *plan_with_chain(int redirect) {
  const char *text = redirect ? "{\"hosts\":[{\"name\":\"a.test\",\"port\":80}],\"resources\":["
                                "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "r\",\"parent\":-1,\"body_size\":0,\"redirect_to\":1,\"request_"
                                "headers\":[],\"response_headers\":[]},"
                                "{\"id\":1,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "\",\"parent\":-1,\"body_size\":14600,\"redirect_to\":-1,\"request_"
                                "headers\":[],\"response_headers\":[]},"
                                "{\"id\":2,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "a.css\",\"parent\":1,\"body_size\":1000,\"redirect_to\":-1,"
                                "\"request_headers\":[],\"response_headers\":[]},"
                                "{\"id\":3,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "f.woff\",\"parent\":2,\"body_size\":400,\"redirect_to\":-1,"
                                "\"request_headers\":[],\"response_headers\":[]}]}"
                              : "{\"hosts\":[{\"name\":\"a.test\",\"port\":80}],\"resources\":["
                                "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "\",\"parent\":-1,\"body_size\":14600,\"redirect_to\":-1,\"request_"
                                "headers\":[],\"response_headers\":[]},"
                                "{\"id\":1,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "a.css\",\"parent\":0,\"body_size\":1000,\"redirect_to\":-1,"
                                "\"request_headers\":[],\"response_headers\":[]},"
                                "{\"id\":2,\"host\":0,\"method\":\"GET\",\"path\":\"/"
                                "f.woff\",\"parent\":1,\"body_size\":400,\"redirect_to\":-1,"
                                "\"request_headers\":[],\"response_headers\":[]}]}";
  json_t *plan = json_loads(text, 0, NULL);
  cr_assert_not_null(plan);
  return plan;
}

Test(bound, depth_counts_the_longest_chain_of_parents) {
  json_t *plan = plan_with_chain(0);
  lab_plan_summary s;
  char err[128];
  cr_assert_eq(lab_plan_summarize(plan, &s, err, sizeof err), 0, "%s", err);
  cr_assert_eq(s.depth, 3);
  cr_assert_eq(s.body_bytes, 16000u);
  /* 14,600 bytes = 10 segments, 1,000 = 1, 400 = 1: 12 TCP/IP headers of 40 bytes. */
  cr_assert_eq(s.min_bytes_down, 16000u + 12 * 40);
  cr_assert_eq(s.min_bytes_up, 3 * 18u);
  json_decref(plan);
}

Test(bound, a_redirect_gates_its_target) {
  json_t *plan = plan_with_chain(1);
  lab_plan_summary s;
  char err[128];
  cr_assert_eq(lab_plan_summarize(plan, &s, err, sizeof err), 0, "%s", err);
  cr_assert_eq(s.depth, 4, "redirect, document, CSS, font: depth %u", s.depth);
  json_decref(plan);
}

Test(bound, a_cycle_is_an_error) {
  json_t *plan = json_loads("{\"hosts\":[{\"name\":\"a\",\"port\":80}],\"resources\":["
                            "{\"parent\":1,\"body_size\":1},{\"parent\":0,\"body_size\":1}]}",
                            0, NULL);
  lab_plan_summary s;
  char err[128] = "";
  cr_assert_eq(lab_plan_summarize(plan, &s, err, sizeof err), -1);
  cr_assert_not_null(strstr(err, "cycle"), "%s", err);
  json_decref(plan);
}

Test(bound, chain_dominates_a_small_page_on_a_fast_link) {
  lab_plan_summary s = {.depth = 3, .min_bytes_down = 16480, .min_bytes_up = 54};
  lab_bound_link link = {.rtt_ms = 100, .down_bps = 100e6, .up_bps = 100e6, .tls_round_trips = 0};
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 100 + 300, 1e-9), "TCP set-up + 3 RTTs");
  link.tls_round_trips = 2;
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 300 + 300, 1e-9), "TLS 1.2 adds two RTTs");
}

Test(bound, bandwidth_dominates_a_large_page_on_a_slow_link) {
  lab_plan_summary s = {.depth = 3, .min_bytes_down = 1000000, .min_bytes_up = 2000};
  lab_bound_link link = {.rtt_ms = 50, .down_bps = 2e6, .up_bps = 375e3, .tls_round_trips = 0};
  /* 50 (set-up) + 50 + 8,000,000 bits / 2 Mbit/s = 4,100 ms */
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 4100, 1e-9), "got %f", lab_bound_ms(&s, &link));
}

Test(bound, uplink_dominates_when_requests_outweigh_the_page) {
  lab_plan_summary s = {.depth = 1, .min_bytes_down = 1000, .min_bytes_up = 375000};
  lab_bound_link link = {.rtt_ms = 50, .down_bps = 2e6, .up_bps = 375e3, .tls_round_trips = 0};
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 50 + 50 + 8000, 1e-9));
}
