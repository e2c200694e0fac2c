/* model_check.c — the link model's arithmetic, without namespaces or root: serialization
 * time, departures from the model clock (a late arrival never lowers the rate), drop-tail
 * in packets and bytes, the default queue limit, loss rate of the generator, and jitter
 * that keeps order unless reordering is allowed. Exit 0 pass, 1 fail.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
      failures++;                                                                                  \
    }                                                                                              \
  } while (0)

static netem_dir_config link_config(uint64_t rate, uint64_t delay_ns) {
  netem_dir_config c;
  memset(&c, 0, sizeof c);
  c.rate_bps = rate;
  c.delay_ns = delay_ns;
  return c;
}

static void serialization_is_exact(void) {
  CHECK(netem_model_serialization_ns(2000000, 1500) == 6000000, "1500 B at 2 Mbit/s is 6 ms");
  CHECK(netem_model_serialization_ns(375000, 1500) == 32000000, "1500 B at 375 kbit/s is 32 ms");
  CHECK(netem_model_serialization_ns(0, 1500) == 0, "unlimited rate takes no time");
}

static void default_queue_is_bdp_with_floor(void) {
  CHECK(netem_model_default_queue_bytes(2000000, 50000000) == 24000, "dsl: floor of 16 packets");
  CHECK(netem_model_default_queue_bytes(20000000, 100000000) == 250000, "20 Mbit/s x 100 ms");
}

static void departures_follow_the_model_clock(void) {
  netem_model m;
  netem_dir_config c = link_config(2000000, 25000000);
  netem_model_init(&m, &c, 50000000, 1, false);
  uint64_t deliver[3], queued[3];
  /* Three back-to-back packets at t=0: they leave 6 ms apart. */
  for (int i = 0; i < 3; i++)
    CHECK(netem_model_admit(&m, 0, 1500, &deliver[i], &queued[i]) == NETEM_ADMIT_DELIVER,
          "admitted");
  CHECK(deliver[0] == 31000000 && deliver[1] == 37000000 && deliver[2] == 43000000,
        "deliveries at 31, 37, 43 ms, got %llu %llu %llu", (unsigned long long)deliver[0],
        (unsigned long long)deliver[1], (unsigned long long)deliver[2]);
  CHECK(queued[2] == 12000000, "the third waited 12 ms");
  /* A packet read late (at 10 ms, though the link was busy until 18 ms) still leaves
   * when the link frees: lateness of the reader does not lower the rate. */
  uint64_t d, q;
  netem_model_admit(&m, 10000000, 1500, &d, &q);
  CHECK(d == 49000000, "fourth at 49 ms, got %llu", (unsigned long long)d);
  netem_model_free(&m);
}

static void queue_limit_counts_packets_and_bytes(void) {
  netem_model m;
  netem_dir_config c = link_config(1000000, 0);
  c.queue_packets = 3;
  netem_model_init(&m, &c, 0, 1, false);
  uint64_t d, q;
  int admitted = 0;
  for (int i = 0; i < 5; i++)
    admitted += netem_model_admit(&m, 0, 1500, &d, &q) == NETEM_ADMIT_DELIVER;
  CHECK(admitted == 3, "3 of 5 fit a 3-packet queue, got %d", admitted);
  /* After the first finished (12 ms), one more fits. */
  CHECK(netem_model_admit(&m, 12000000, 1500, &d, &q) == NETEM_ADMIT_DELIVER, "room again");
  CHECK(netem_model_admit(&m, 12000000, 1500, &d, &q) == NETEM_ADMIT_QUEUE_FULL, "full again");
  netem_model_free(&m);

  c.queue_packets = 0;
  c.queue_bytes = 3000;
  netem_model_init(&m, &c, 0, 1, false);
  CHECK(netem_model_admit(&m, 0, 1000, &d, &q) == NETEM_ADMIT_DELIVER, "1000 of 3000");
  CHECK(netem_model_admit(&m, 0, 2000, &d, &q) == NETEM_ADMIT_DELIVER, "3000 of 3000");
  CHECK(netem_model_admit(&m, 0, 40, &d, &q) == NETEM_ADMIT_QUEUE_FULL, "one byte over");
  netem_model_free(&m);
}

static void loss_rate_matches(void) {
  netem_model m;
  netem_dir_config c = link_config(0, 0);
  c.loss = 0.01;
  netem_model_init(&m, &c, 0, 12345, false);
  int lost = 0;
  const int n = 200000;
  uint64_t d, q;
  for (int i = 0; i < n; i++)
    lost += netem_model_admit(&m, (uint64_t)i, 100, &d, &q) == NETEM_ADMIT_LOST;
  double half = 2.5758 * sqrt(0.01 * 0.99 / n);
  CHECK(fabs((double)lost / n - 0.01) <= half, "loss %.4f outside the 99%% interval",
        (double)lost / n);
  netem_model_free(&m);
}

static int count_reordered(bool reorder) {
  netem_model m;
  netem_dir_config c = link_config(10000000, 20000000);
  c.jitter_ns = 10000000;
  netem_model_init(&m, &c, 40000000, 3, reorder);
  uint64_t previous = 0, d, q;
  int reordered = 0;
  for (int i = 0; i < 1000; i++) {
    netem_model_admit(&m, (uint64_t)i * 1000000u, 1500, &d, &q);
    reordered += d < previous;
    previous = d;
  }
  netem_model_free(&m);
  return reordered;
}

static void jitter_keeps_order_unless_asked(void) {
  CHECK(count_reordered(false) == 0, "jitter reordered packets without --reorder");
  CHECK(count_reordered(true) > 0, "--reorder never reordered");
}

int main(void) {
  serialization_is_exact();
  default_queue_is_bdp_with_floor();
  departures_follow_the_model_clock();
  queue_limit_counts_packets_and_bytes();
  loss_rate_matches();
  jitter_keeps_order_unless_asked();
  printf("%s\n", failures == 0 ? "model: all checks passed" : "model: FAILED");
  return failures == 0 ? 0 : 1;
}
