/* test_lab_bound_dns.c — the lower bound (bound.c) with the loader's emulated DNS
 * (--dns-rtt): the origin's one lookup is added, once, whatever the number of hosts, and
 * nothing changes without it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>

#include "bound.h"

#define CLOSE(a, b, eps) (fabs((a) - (b)) <= (eps))

/* A document on host 0 with children on hosts 1 and 2 and a grandchild back on host 1:
 * three hosts, depth 3, every chain link a host change. */
static json_t *three_host_plan(void) {
  json_t *plan = json_loads(
      "{\"hosts\":[{\"name\":\"www.a.test\",\"port\":80},{\"name\":\"cdn.a.test\",\"port\":80},"
      "{\"name\":\"ads.b.test\",\"port\":80}],\"resources\":["
      "{\"host\":0,\"parent\":-1,\"body_size\":20000},"
      "{\"host\":1,\"parent\":0,\"body_size\":5000},"
      "{\"host\":2,\"parent\":0,\"body_size\":3000},"
      "{\"host\":1,\"parent\":2,\"body_size\":1000}]}",
      0, NULL);
  cr_assert_not_null(plan);
  return plan;
}

Test(bound_dns, no_lookup_leaves_the_bound_as_it_was) {
  lab_plan_summary s = {.depth = 3, .min_bytes_down = 16480, .min_bytes_up = 54};
  lab_bound_link link = {.rtt_ms = 100, .down_bps = 100e6, .up_bps = 100e6};
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 100 + 300, 1e-9), "got %f", lab_bound_ms(&s, &link));
}

Test(bound_dns, the_lookup_comes_before_the_connection_set_up) {
  lab_plan_summary s = {.depth = 3, .min_bytes_down = 16480, .min_bytes_up = 54};
  lab_bound_link link = {.rtt_ms = 100, .down_bps = 100e6, .up_bps = 100e6, .dns_ms = 200};
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 200 + 100 + 300, 1e-9), "lookup + TCP + 3 RTTs: %f",
            lab_bound_ms(&s, &link));
  link.tls_round_trips = 2;
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 200 + 300 + 300, 1e-9), "and TLS 1.2's two: %f",
            lab_bound_ms(&s, &link));
}

Test(bound_dns, the_lookup_adds_to_a_bandwidth_bound_page_too) {
  lab_plan_summary s = {.depth = 3, .min_bytes_down = 1000000, .min_bytes_up = 2000};
  lab_bound_link link = {.rtt_ms = 50, .down_bps = 2e6, .up_bps = 375e3, .dns_ms = 120};
  /* 120 (lookup) + 50 (set-up) + 50 + 8,000,000 bits / 2 Mbit/s */
  cr_assert(CLOSE(lab_bound_ms(&s, &link), 120 + 4100, 1e-9), "got %f", lab_bound_ms(&s, &link));
}

Test(bound_dns, many_hosts_still_add_one_lookup) {
  json_t *plan = three_host_plan();
  lab_plan_summary s;
  char err[128];
  cr_assert_eq(lab_plan_summarize(plan, &s, err, sizeof err), 0, "%s", err);
  cr_assert_eq(s.n_hosts, 3);
  lab_bound_link without = {.rtt_ms = 28, .down_bps = 4e6, .up_bps = 1e6};
  lab_bound_link with = without;
  with.dns_ms = 300;
  /* single-domain configurations look up the origin alone, and the bound serves them too */
  cr_assert(CLOSE(lab_bound_ms(&s, &with) - lab_bound_ms(&s, &without), 300, 1e-9),
            "three hosts, one lookup: %f - %f", lab_bound_ms(&s, &with),
            lab_bound_ms(&s, &without));
  json_decref(plan);
}
