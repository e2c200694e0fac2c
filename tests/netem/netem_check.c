/* netem_check.c — validation tests of the link emulator, one behaviour per subcommand:
 *
 *   netem_check goodput PROFILE DIR   bulk TCP goodput within 5% of rate x payload share
 *   netem_check rtt PROFILE           idle probe RTT within 1 ms of RTT + serialization (+ the
 *                                     host's own probe RTT and the forwarder's lateness, measured)
 *   netem_check slowstart IW          transfer times match the slow-start model within 10%
 *   netem_check loss                  measured loss inside the 99% binomial interval
 *   netem_check burst_loss            Gilbert–Elliott: loss rate and mean burst length
 *   netem_check queue_limit           queue drops exactly when the limit is exceeded
 *   netem_check saturated_uplink      a download under a saturated uplink completes
 *   netem_check checksum              payloads arrive intact, both directions, with loss
 *   netem_check parallel              four links at once each keep their rate
 *   netem_check echo-server | probe   commands for the CLI test (probe.c)
 *
 * The kernel comparisons (tbf, iptables statistic) are in compare.c. Exit status: 0 pass,
 * 1 fail, 77 skipped (not root, no TUN, no `ip netns`). Every check prints its measured
 * numbers and the link statistics; every link is stopped (namespaces removed) before exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "helpers.h"
#include "model.h"
#include "probe.h"

#define PAYLOAD_SHARE (1448.0 / 1500.0) /* TCP with timestamps in a 1,500-byte packet */

/* Fails unless the emulator itself lost nothing it should not have. */
static int check_clean(netem_link *link, const char *label) {
  netem_stats s;
  netem_stats_read(link, &s);
  test_print_stats(link, label);
  if (s.forwarder_error[0] != '\0') {
    printf("FAIL: %s: the forwarding thread stopped: %s\n", label, s.forwarder_error);
    return 1;
  }
  uint64_t tun = s.down.tun_drops + s.up.tun_drops;
  uint64_t overflow = s.down.overflow_drops + s.up.overflow_drops;
  if (tun > 0 || overflow > 0) {
    printf("FAIL: %s: TUN drops %" PRIu64 ", emulator buffer overflows %" PRIu64
           " (must both be 0)\n",
           label, tun, overflow);
    return 1;
  }
  return 0;
}

static netem_config profile_config(const char *profile) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  if (netem_config_profile(&config, profile) != 0) test_fail("unknown profile %s", profile);
  return config;
}

static int check_goodput_once(const char *profile, const char *dir_name, int last);

/* A saturating TCP flow now and then has a second overflow and recovery inside the
 * measured window (about 1 run in 10 on dsl down, −10 %): that is TCP's sawtooth, not the
 * emulator. Up to 3 runs; one within 5 % passes. An emulator whose rate is off fails all 3. */
static int check_goodput(const char *profile, const char *dir_name) {
  for (int attempt = 1; attempt < 3; attempt++) {
    if (check_goodput_once(profile, dir_name, 0) == 0) return 0;
    printf("goodput %s %s: attempt %d outside 5%%; again\n", profile, dir_name, attempt);
  }
  return check_goodput_once(profile, dir_name, 1);
}

/* One run; with last, failures end the test (test_fail), otherwise they return 1. */
static int check_goodput_once(const char *profile, const char *dir_name, int last) {
  netem_dir dir = strcmp(dir_name, "up") == 0 ? NETEM_DIR_UP : NETEM_DIR_DOWN;
  netem_config config = profile_config(profile);
  uint64_t rate = dir == NETEM_DIR_DOWN ? config.down.rate_bps : config.up.rate_bps;
  /* Measure over the last 3.5 s, after 2.5 s of slow start, queue filling and the
   * recovery from the first queue overflow. */
  uint64_t skip = rate / 8u * 5u / 2u;
  uint64_t bytes = skip + rate / 8u * 7u / 2u;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  test_transfer t;
  int rc = test_transfer_run(&path, dir, bytes, skip, 30.0, &t);
  double goodput = test_transfer_goodput(&t);
  double expected = (double)rate * PAYLOAD_SHARE;
  double error = goodput / expected - 1.0;
  printf("goodput %s %s: %" PRIu64 " bytes, %.0f bit/s measured, %.0f expected (%.1f%% of "
         "IP rate x 1448/1500), error %+.2f%%\n",
         profile, dir_name, t.bytes, goodput, expected, 100.0 * goodput / (double)rate,
         100.0 * error);
  int failed = check_clean(link, "goodput");
  test_path_close(&path);
  netem_stop(link);
  if (rc != 0 || !t.intact)
    test_fail("transfer did not complete intact (rc %d, %" PRIu64 " bytes)", rc, t.bytes);
  if (fabs(error) > 0.05) {
    if (!last) return 1;
    test_fail("goodput %.0f bit/s is not within 5%% of %.0f bit/s", goodput, expected);
  }
  return failed;
}

/* The median probe RTT over an unlimited link without delay: what the test's own threads,
 * the network stacks and the TUN devices add on this host, right now. */
static double host_overhead_ns(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  test_echo *echo = test_echo_start(&path);
  enum { N = 20 };
  uint64_t rtt[N];
  int answered = test_probe(&path, N, 32, 60, rtt);
  test_echo_stop(echo);
  test_path_close(&path);
  netem_stop(link);
  if (answered != N) test_fail("%d of %d probes answered on an unlimited link", answered, N);
  return (double)test_median(rtt, N);
}

static int check_rtt_once(const char *profile, int last);

/* On a busy virtual machine the threads (probe, echo and even the SCHED_FIFO forwarder)
 * are now and then held off the CPU for a few milliseconds in bursts, and 6 to 8 of 20
 * probes come back late together (seen in CI: the forwarder's p99 lateness 2.6-4.4 ms in
 * that run against 0.06 ms at p50).
 * Up to 3 runs, as for goodput; one that holds passes. A wrong delay fails all 3. */
static int check_rtt(const char *profile) {
  for (int attempt = 1; attempt < 3; attempt++) {
    if (check_rtt_once(profile, 0) == 0) return 0;
    printf("rtt %s: attempt %d outside the bounds; again\n", profile, attempt);
  }
  return check_rtt_once(profile, 1);
}

/* One run; with last, failures end the test (test_fail), otherwise they return 1. */
static int check_rtt_once(const char *profile, int last) {
  double overhead = strcmp(profile, "none") == 0 ? 0 : host_overhead_ns();
  netem_config config;
  if (strcmp(profile, "none") == 0) {
    netem_config_init(&config); /* the host's own overhead: unlimited, no delay */
    config.seed = 1;
  } else {
    config = profile_config(profile);
  }
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  test_echo *echo = test_echo_start(&path);
  enum { COUNT = 20, PAYLOAD = 32 };
  uint64_t rtt[COUNT];
  int answered = test_probe(&path, COUNT, PAYLOAD, 60, rtt);
  test_echo_stop(echo);
  netem_stats s;
  netem_stats_read(link, &s);
  int failed = check_clean(link, "rtt");
  test_path_close(&path);
  netem_stop(link);
  if (answered != COUNT) test_fail("%d of %d probes answered on a lossless link", answered, COUNT);
  uint32_t ip_len = 20 + 8 + PAYLOAD;
  double expected = (double)netem_config_rtt_ns(&config) + test_ser_ns(config.up.rate_bps, ip_len) +
                    test_ser_ns(config.down.rate_bps, ip_len);
  /* The forwarding thread writes each packet a little after its model time; that wake-up
   * lateness is measured and bounded on its own (netem's lateness figures, the lab's
   * --lateness). Here it is taken out, so the check is about the model, also on a host
   * whose timers run late. */
  double late = (double)(s.down.lateness.p50_ns + s.up.lateness.p50_ns);
  printf("rtt %s: forwarding lateness p50 %.3f ms down + %.3f ms up, added to the expected\n",
         profile, (double)s.down.lateness.p50_ns / 1e6, (double)s.up.lateness.p50_ns / 1e6);
  expected += late;
  /* Likewise the host's own round trip (host_overhead_ns), measured just before. */
  if (overhead > 0)
    printf("rtt %s: host overhead %.3f ms (probe median without the emulator's delay), added "
           "to the expected\n",
           profile, overhead / 1e6);
  expected += overhead;
  uint64_t min = UINT64_MAX, max = 0;
  printf("rtt %s: probes (ms):", profile);
  for (int i = 0; i < COUNT; i++) printf(" %.3f", (double)rtt[i] / 1e6);
  printf("\n");
  for (int i = 0; i < COUNT; i++) {
    min = rtt[i] < min ? rtt[i] : min;
    max = rtt[i] > max ? rtt[i] : max;
  }
  double median = (double)test_median(rtt, COUNT);
  printf("rtt %s: %d-byte probe (IP %u bytes): median %.3f ms, min %.3f, max %.3f; expected "
         "%.3f ms (RTT + serialization both ways); error %+.3f ms\n",
         profile, PAYLOAD, ip_len, median / 1e6, (double)min / 1e6, (double)max / 1e6,
         expected / 1e6, (median - expected) / 1e6);
  if (fabs(median - expected) > 1e6) {
    if (!last) return 1;
    test_fail("median RTT %.3f ms is not within 1 ms of %.3f ms", median / 1e6, expected / 1e6);
  }
  int within = 0;
  for (int i = 0; i < COUNT; i++) within += fabs((double)rtt[i] - expected) <= 1e6;
  printf("rtt %s: %d of %d probes within 1 ms\n", profile, within, COUNT);
  /* The median is the measure; the share guards against a bimodal result. Single
   * outliers come from the test's own threads being scheduled late on a busy machine. */
  if (within < COUNT * 8 / 10) {
    if (!last) return 1;
    test_fail("only %d of %d probes within 1 ms of %.3f ms", within, COUNT, expected / 1e6);
  }
  return failed;
}

/* Closed-form slow start (see docs/netem.md): handshake, request, then rounds of IW·2^k
 * full segments, each round one RTT plus one segment's serialization after the previous,
 * until a round fills the pipe; from then on the rest flows at the bottleneck rate. */
static double slowstart_model_ns(const netem_config *c, int iw, uint64_t bytes) {
  double rtt = (double)netem_config_rtt_ns(c);
  double seg = test_ser_ns(c->down.rate_bps, 1500);
  double handshake = rtt + test_ser_ns(c->up.rate_bps, 60) + test_ser_ns(c->down.rate_bps, 60);
  double request = (double)c->up.delay_ns + test_ser_ns(c->up.rate_bps, 60);
  double segments = ceil((double)bytes / 1448.0);
  double t = 0, window = iw;
  for (;;) {
    if (segments <= window || window * seg >= rtt + seg)
      return handshake + request + t + (double)c->down.delay_ns + segments * seg;
    segments -= window;
    t += rtt + seg;
    window *= 2;
  }
}

static int check_slowstart(int iw) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  snprintf(config.profile, sizeof config.profile, "slowstart");
  config.down.rate_bps = 20000000;
  config.up.rate_bps = 20000000;
  config.down.delay_ns = config.up.delay_ns = 50000000;       /* 100 ms RTT: many rounds */
  config.down.queue_bytes = config.up.queue_bytes = 1u << 20; /* no drops in slow start */
  config.tcp.initcwnd = iw;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  static const uint64_t sizes[] = {1000, 10000, 30000, 100000, 300000, 1000000};
  int failed = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    test_transfer t;
    if (test_transfer_run(&path, NETEM_DIR_DOWN, sizes[i], 0, 30.0, &t) != 0 || !t.intact) {
      test_path_close(&path);
      netem_stop(link);
      test_fail("transfer of %" PRIu64 " bytes failed", sizes[i]);
    }
    double measured = (double)(t.end_ns - t.start_ns);
    double model = slowstart_model_ns(&config, iw, sizes[i]);
    double error = measured / model - 1.0;
    printf("slowstart iw %d: %7" PRIu64 " bytes in %8.2f ms, model %8.2f ms, error %+.1f%%\n", iw,
           sizes[i], measured / 1e6, model / 1e6, 100.0 * error);
    if (fabs(error) > 0.10) {
      printf("FAIL: %" PRIu64 " bytes: %.2f ms is not within 10%% of the model's %.2f ms\n",
             sizes[i], measured / 1e6, model / 1e6);
      failed = 1;
    }
  }
  failed |= check_clean(link, "slowstart");
  test_path_close(&path);
  netem_stop(link);
  return failed;
}

/* Loss on a fast link: with a fixed seed the result is deterministic. */
static int check_loss(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 20091113;
  config.down.rate_bps = config.up.rate_bps = 200000000;
  config.down.delay_ns = config.up.delay_ns = 1000000;
  config.down.loss = 0.01;
  config.down.queue_packets = 4096;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  const uint64_t count = 25000;
  uint64_t received = test_udp_stream(&path, NETEM_DIR_DOWN, count, 100, 50, 1000, 300);
  netem_stats s;
  netem_stats_read(link, &s);
  int failed = check_clean(link, "loss");
  test_path_close(&path);
  netem_stop(link);
  double p = config.down.loss, n = (double)count;
  double measured = 1.0 - (double)received / n;
  double half = 2.5758 * sqrt(p * (1 - p) / n);
  printf("loss: %" PRIu64 " sent, %" PRIu64 " received, measured %.4f%%, 99%% interval "
         "[%.4f%%, %.4f%%]; emulator counted %" PRIu64 " random losses, %" PRIu64 " queue drops\n",
         count, received, 100 * measured, 100 * (p - half), 100 * (p + half), s.down.random_losses,
         s.down.queue_drops);
  if (s.down.random_losses + received != count || s.down.queue_drops != 0)
    test_fail("packets went missing outside the loss model");
  if (fabs(measured - p) > half)
    test_fail("measured loss %.4f%% is outside the 99%% binomial interval", 100 * measured);
  return failed;
}

static int check_burst_loss(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 42;
  config.down.rate_bps = config.up.rate_bps = 200000000;
  config.down.loss = 0.02;
  config.down.burst = 4.0;
  config.down.queue_packets = 4096;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  const uint64_t count = 40000;
  /* The sink counts only; the burst structure is checked on the emulator's generator by
   * replaying the same model with the same seed. */
  uint64_t received = test_udp_stream(&path, NETEM_DIR_DOWN, count, 100, 50, 1000, 300);
  int failed = check_clean(link, "burst_loss");
  test_path_close(&path);
  netem_stop(link);
  netem_model model;
  netem_model_init(&model, &config.down, 0, config.seed, false);
  uint64_t lost = 0, bursts = 0, now = 0, deliver, delay;
  bool previous_lost = false;
  for (uint64_t i = 0; i < count; i++) {
    bool is_lost = netem_model_admit(&model, now, 100, &deliver, &delay) == NETEM_ADMIT_LOST;
    now += 1000000; /* never queue */
    lost += is_lost;
    bursts += is_lost && !previous_lost;
    previous_lost = is_lost;
  }
  netem_model_free(&model);
  double measured = 1.0 - (double)received / (double)count;
  double mean_burst = bursts > 0 ? (double)lost / (double)bursts : 0;
  printf("burst loss: configured 2%% in bursts of 4: measured %.3f%% on the link, model "
         "replay %.3f%% in %" PRIu64 " bursts of mean length %.2f\n",
         100 * measured, 100.0 * (double)lost / (double)count, bursts, mean_burst);
  if (count - received != lost)
    test_fail("the link lost %" PRIu64 " packets, the model replay %" PRIu64, count - received,
              lost);
  if (fabs(measured - 0.02) > 0.005 || mean_burst < 3.5 || mean_burst > 4.5)
    test_fail("loss rate or mean burst length off (want 2%% +-0.5, 4 +-0.5)");
  return failed;
}

/* Drop-tail: a burst that fits the queue loses nothing; a larger one loses exactly the
 * excess, in packets and in bytes. */
static int check_queue_limit(void) {
  int failed = 0;
  for (int in_packets = 1; in_packets >= 0; in_packets--) {
    netem_config config;
    netem_config_init(&config);
    config.seed = 1;
    config.down.rate_bps = config.up.rate_bps = 1000000; /* 8-12 ms per packet */
    config.down.delay_ns = config.up.delay_ns = 5000000;
    int payload = in_packets ? 1472 : 972; /* IP 1500 or 1000 bytes */
    uint64_t limit = in_packets ? 20 : 30;
    if (in_packets)
      config.down.queue_packets = 20;
    else
      config.down.queue_bytes = 30000;
    netem_link *link = test_link_start(&config);
    test_path path = test_path_of_link(link);
    uint64_t bursts[2] = {limit, limit + 7};
    for (int b = 0; b < 2; b++) {
      netem_stats before, after;
      netem_stats_read(link, &before);
      uint64_t received = test_udp_stream(&path, NETEM_DIR_DOWN, bursts[b], payload, 0, 0,
                                          (int)(bursts[b] * 13 + 100));
      netem_stats_read(link, &after);
      uint64_t drops = after.down.queue_drops - before.down.queue_drops;
      uint64_t want = bursts[b] - limit;
      printf("queue limit %s: burst of %" PRIu64 " -> %" PRIu64 " queue drops (want %" PRIu64
             "), %" PRIu64 " received\n",
             in_packets ? "20 packets (1500-byte)" : "30000 bytes (1000-byte packets)", bursts[b],
             drops, want, received);
      if (drops != want || received != bursts[b] - want) {
        printf("FAIL: queue drops must happen when, and only when, the limit is "
               "exceeded\n");
        failed = 1;
      }
    }
    failed |= check_clean(link, "queue_limit");
    test_path_close(&path);
    netem_stop(link);
  }
  return failed;
}

static int check_saturated_uplink(void) {
  netem_config config = profile_config("dsl");
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  const uint64_t bytes = 200000;
  test_transfer idle, loaded;
  if (test_transfer_run(&path, NETEM_DIR_DOWN, bytes, 0, 30.0, &idle) != 0) {
    test_path_close(&path);
    netem_stop(link);
    test_fail("idle download failed");
  }
  test_background *bg = test_background_upload(&path, 6000);
  struct timespec fill = {.tv_sec = 2};
  nanosleep(&fill, NULL); /* let the upload fill the uplink queue */
  int rc = test_transfer_run(&path, NETEM_DIR_DOWN, bytes, 0, 60.0, &loaded);
  uint64_t uploaded = test_background_stop(bg);
  netem_stats s;
  netem_stats_read(link, &s);
  int failed = check_clean(link, "saturated_uplink");
  test_path_close(&path);
  netem_stop(link);
  double idle_ms = (double)(idle.end_ns - idle.start_ns) / 1e6;
  double loaded_ms = (double)(loaded.end_ns - loaded.start_ns) / 1e6;
  printf("saturated uplink (dsl): %" PRIu64 "-byte download idle %.0f ms, with the uplink "
         "saturated %.0f ms: slowdown x%.2f; upload sent %" PRIu64 " bytes, uplink queueing "
         "delay mean %.0f ms max %.0f ms\n",
         bytes, idle_ms, loaded_ms, loaded_ms / idle_ms, uploaded,
         s.up.packets_out ? (double)s.up.queue_delay_sum_ns / 1e6 / (double)s.up.packets_out : 0,
         (double)s.up.queue_delay_max_ns / 1e6);
  if (rc != 0 || !loaded.intact)
    test_fail("the download under a saturated uplink did not complete intact");
  return failed;
}

static int check_checksum(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 7;
  config.down.rate_bps = config.up.rate_bps = 50000000;
  config.down.delay_ns = config.up.delay_ns = 5000000;
  config.down.loss = config.up.loss = 0.01;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  int failed = 0;
  for (int d = 0; d < 2; d++) {
    test_transfer t;
    int rc = test_transfer_run(&path, (netem_dir)d, 3000000, 0, 60.0, &t);
    printf("checksum %s: %" PRIu64 " bytes through 1%% loss, %s\n", d == 0 ? "down" : "up", t.bytes,
           rc == 0 && t.intact ? "every byte intact" : "CORRUPT OR INCOMPLETE");
    if (rc != 0 || !t.intact) failed = 1;
  }
  failed |= check_clean(link, "checksum");
  test_path_close(&path);
  netem_stop(link);
  return failed;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: netem_check TEST [ARGS]\n");
    return 2;
  }
  const char *test = argv[1];
  /* Commands run inside a link by the CLI test: no system checks, no link of their own. */
  if (strcmp(test, "echo-server") == 0) return probe_echo_server();
  if (strcmp(test, "probe") == 0 && argc >= 3)
    return probe_client(atoi(argv[2]), argc > 3 ? atoi(argv[3]) : 32);
  test_require_system(test);
  if (strcmp(test, "goodput") == 0 && argc == 4) return check_goodput(argv[2], argv[3]);
  if (strcmp(test, "rtt") == 0 && argc == 3) return check_rtt(argv[2]);
  if (strcmp(test, "slowstart") == 0 && argc == 3) return check_slowstart(atoi(argv[2]));
  if (strcmp(test, "loss") == 0) return check_loss();
  if (strcmp(test, "burst_loss") == 0) return check_burst_loss();
  if (strcmp(test, "queue_limit") == 0) return check_queue_limit();
  if (strcmp(test, "saturated_uplink") == 0) return check_saturated_uplink();
  if (strcmp(test, "checksum") == 0) return check_checksum();
  if (strcmp(test, "parallel") == 0) return compare_parallel_links(argc > 2 ? atoi(argv[2]) : 4);
  if (strcmp(test, "tbf") == 0) return compare_tbf();
  if (strcmp(test, "iptables_loss") == 0) return compare_iptables_loss();
  fprintf(stderr, "netem_check: unknown test '%s'\n", test);
  return 2;
}
