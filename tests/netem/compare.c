/* compare.c — the emulator against the kernel's own shapers, and several links at once.
 *
 * The kernel path is client namespace — veth — router namespace — veth — server
 * namespace, with the shaping (tbf) or the loss (iptables statistic) on the router, so
 * that the queue is not on the sending host (where TCP Small Queues would keep it short).
 * Veth frames carry a 14-byte Ethernet header that tbf counts, so the emulator's IP rate
 * and queue are scaled by 1500/1514 for a like-for-like comparison.
 */
#define _GNU_SOURCE
#include "compare.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "helpers.h"
#include "ns.h"
#include "tcp.h"

typedef struct router {
  char ns[3][NETEM_NS_NAME_MAX]; /* client, router, server */
  int made;
} router;

static void router_remove(router *r) {
  for (int i = 0; i < r->made; i++) netem_ns_delete(r->ns[i]);
  r->made = 0;
}

/* Runs a command inside a namespace through `ip netns exec`. */
static int ns_exec(const char *ns, const char *const *command, char *err, size_t errlen) {
  const char *argv[24] = {"ip", "netns", "exec", ns};
  size_t n = 4;
  for (size_t i = 0; command[i] != NULL && n < 23; i++) argv[n++] = command[i];
  argv[n] = NULL;
  return netem_ip_run(argv, NULL, err, errlen);
}

static int ns_batch(const char *ns, const char *batch, char *err, size_t errlen) {
  const char *argv[] = {"ip", "-n", ns, NULL};
  return netem_ip_run(argv, batch, err, errlen);
}

/* Sets a sysctl (and the TCP settings if tcp is given) inside a namespace. */
static int ns_sysctls(const char *ns, const netem_tcp_config *tcp, bool forward, char *err,
                      size_t errlen) {
  int fd = netem_ns_open(ns), home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  int rc = fd >= 0 && home >= 0 ? netem_ns_enter(fd) : -1;
  if (rc == 0) {
    if (tcp != NULL)
      rc = netem_tcp_apply(tcp, err, errlen);
    else
      rc = netem_sysctl_set("net/ipv6/conf/default/disable_ipv6", "1");
    if (rc == 0 && forward) rc = netem_sysctl_set("net/ipv4/ip_forward", "1");
    if (netem_ns_enter(home) != 0) abort();
  }
  if (fd >= 0) close(fd);
  if (home >= 0) close(home);
  if (rc != 0 && err[0] == '\0') snprintf(err, errlen, "cannot set sysctls in %s", ns);
  return rc;
}

/* Builds the three namespaces. Returns 0, or -1 with err set (and everything removed). */
static int router_build(router *r, const char *tag, char *err, size_t errlen) {
  static const char *const roles[3] = {"c", "r", "s"};
  memset(r, 0, sizeof *r);
  err[0] = '\0';
  netem_tcp_config tcp;
  netem_tcp_preset(&tcp, "modern");
  for (int i = 0; i < 3; i++) {
    char name_tag[32];
    snprintf(name_tag, sizeof name_tag, "%s-%s", tag, roles[i]);
    netem_ns_make_name(r->ns[i], name_tag);
    if (netem_ns_add(r->ns[i], err, errlen) != 0) goto fail;
    r->made++;
    if (ns_sysctls(r->ns[i], i == 1 ? NULL : &tcp, i == 1, err, errlen) != 0) goto fail;
  }
  char batch[1024];
  snprintf(batch, sizeof batch,
           "link set lo up\n"
           "link add vrc type veth peer name vc netns %s\n"
           "link add vrs type veth peer name vs netns %s\n"
           "link set vrc up\nlink set vrs up\n"
           "addr add 198.18.1.1/24 dev vrc\naddr add 198.19.1.1/24 dev vrs\n",
           r->ns[0], r->ns[2]);
  if (ns_batch(r->ns[1], batch, err, errlen) != 0) goto fail;
  if (ns_batch(r->ns[0],
               "link set lo up\nlink set vc up\naddr add 198.18.1.2/24 dev vc\n"
               "route add default via 198.18.1.1\n",
               err, errlen) != 0)
    goto fail;
  if (ns_batch(r->ns[2],
               "link set lo up\nlink set vs up\naddr add 198.19.1.2/24 dev vs\n"
               "route add default via 198.19.1.1\n",
               err, errlen) != 0)
    goto fail;
  /* Without segmentation offloads, as on the emulator's TUN devices: one segment per
   * GSO packet (iproute2), and ethtool where it is installed. */
  static const char *const gso[4][2] = {{"0", "vc"}, {"1", "vrc"}, {"1", "vrs"}, {"2", "vs"}};
  for (int i = 0; i < 4; i++) {
    char line[96];
    snprintf(line, sizeof line, "link set dev %s gso_max_segs 1\n", gso[i][1]);
    char ignored[64];
    ns_batch(r->ns[gso[i][0][0] - '0'], line, ignored, sizeof ignored);
  }
  static const char *const devices[4][2] = {{"0", "vc"}, {"1", "vrc"}, {"1", "vrs"}, {"2", "vs"}};
  for (int i = 0; i < 4; i++) {
    const char *command[] = {"ethtool", "-K",  devices[i][1], "tso", "off",
                             "gso",     "off", "gro",         "off", NULL};
    char ignored[64];
    ns_exec(r->ns[devices[i][0][0] - '0'], command, ignored, sizeof ignored);
  }
  return 0;
fail:
  router_remove(r);
  return -1;
}

/* ---- shared measurement: goodput and probe RTT under load --------------------------- */

typedef struct probe_job {
  const test_path *path;
  uint64_t rtt[40];
  int count;
} probe_job;

static void *probe_main(void *arg) {
  probe_job *job = arg;
  struct timespec warmup = {.tv_nsec = 800000000};
  nanosleep(&warmup, NULL);
  test_probe(job->path, job->count, 32, 50, job->rtt);
  return NULL;
}

typedef struct load_result {
  double goodput_bps, rtt_mean_ms;
  int answered;
  bool ok;
} load_result;

static load_result measure_under_load(const test_path *path, uint64_t bytes, uint64_t skip) {
  load_result result = {0};
  test_echo *echo = test_echo_start(path);
  probe_job job = {.path = path, .count = 30};
  pthread_t thread;
  pthread_create(&thread, NULL, probe_main, &job);
  test_transfer t;
  result.ok = test_transfer_run(path, NETEM_DIR_DOWN, bytes, skip, 60.0, &t) == 0 && t.intact;
  pthread_join(thread, NULL);
  test_echo_stop(echo);
  result.goodput_bps = test_transfer_goodput(&t);
  double sum = 0;
  for (int i = 0; i < job.count; i++)
    if (job.rtt[i] > 0) {
      sum += (double)job.rtt[i] / 1e6;
      result.answered++;
    }
  result.rtt_mean_ms = result.answered > 0 ? sum / result.answered : 0;
  return result;
}

/* Queueing under a fixed overload: a UDP stream at 110% of the bottleneck keeps the queue
 * at its limit whatever TCP would do; each datagram carries its send time, and the mean
 * one-way delay of those delivered after the first second is the full-queue delay. */
typedef struct overload_sink {
  int fd;
  uint64_t start_ns, end_ns;
  double delay_sum_ms;
  uint64_t delivered, measured;
} overload_sink;

static void *overload_sink_main(void *arg) {
  overload_sink *sink = arg;
  uint8_t buf[2048];
  for (;;) {
    uint64_t now = netem_now_ns();
    if (now > sink->end_ns) break;
    struct pollfd p = {.fd = sink->fd, .events = POLLIN};
    if (poll(&p, 1, 20) != 1) continue;
    ssize_t n = recv(sink->fd, buf, sizeof buf, MSG_DONTWAIT);
    uint64_t sent;
    if (n < (ssize_t)sizeof sent) continue;
    memcpy(&sent, buf, sizeof sent);
    now = netem_now_ns();
    sink->delivered++;
    if (sent >= sink->start_ns + 1000000000u) {
      sink->delay_sum_ms += (double)(now - sent) / 1e6;
      sink->measured++;
    }
  }
  return NULL;
}

static load_result measure_overload(const test_path *path, uint64_t frame_rate_bps) {
  load_result result = {0};
  double pps = (double)frame_rate_bps * 1.1 / (1514.0 * 8.0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
  inet_pton(AF_INET, path->client_ip, &sa.sin_addr);
  overload_sink sink = {.fd = test_socket(path, NETEM_SIDE_CLIENT, SOCK_DGRAM)};
  int sender = test_socket(path, NETEM_SIDE_SERVER, SOCK_DGRAM);
  if (sink.fd < 0 || sender < 0 || bind(sink.fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      connect(sender, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("overload sockets: %s", strerror(errno));
  sink.start_ns = netem_now_ns();
  sink.end_ns = sink.start_ns + 3500000000u;
  pthread_t thread;
  pthread_create(&thread, NULL, overload_sink_main, &sink);
  uint8_t buf[1472] = {0};
  uint64_t count = (uint64_t)(pps * 3.0);
  for (uint64_t i = 0; i < count; i++) {
    uint64_t due = sink.start_ns + (uint64_t)((double)i * 1e9 / pps);
    uint64_t now = netem_now_ns();
    if (due > now) {
      struct timespec pause = {.tv_sec = (time_t)((due - now) / 1000000000u),
                               .tv_nsec = (long)((due - now) % 1000000000u)};
      nanosleep(&pause, NULL);
    }
    now = netem_now_ns();
    memcpy(buf, &now, sizeof now);
    if (send(sender, buf, sizeof buf, 0) < 0 && errno != ENOBUFS) break;
  }
  pthread_join(thread, NULL);
  close(sender);
  close(sink.fd);
  result.rtt_mean_ms = sink.measured > 0 ? sink.delay_sum_ms / (double)sink.measured : 0;
  result.goodput_bps = (double)sink.delivered; /* datagrams delivered */
  result.answered = (int)sink.measured;
  result.ok = sink.measured >= 100;
  return result;
}

int compare_tbf(void) {
  const uint64_t rate = 4000000; /* tbf rate, Ethernet frames */
  const uint64_t limit = 30280;  /* tbf limit, bytes of frames: 20 full frames */
  char err[256];
  router r;
  if (router_build(&r, "tbf", err, sizeof err) != 0) {
    printf("SKIP tbf: cannot build the veth router: %s\n", err);
    return TEST_SKIP;
  }
  char rate_text[32], limit_text[32];
  snprintf(rate_text, sizeof rate_text, "%" PRIu64 "bit", rate);
  snprintf(limit_text, sizeof limit_text, "%" PRIu64, limit);
  const char *tc[] = {"tc",   "qdisc",   "add",   "dev",  "vrc",   "root",     "tbf",
                      "rate", rate_text, "burst", "1600", "limit", limit_text, NULL};
  if (ns_exec(r.ns[1], tc, err, sizeof err) != 0) {
    router_remove(&r);
    printf("SKIP tbf: the tbf qdisc is not available: %s\n", err);
    return TEST_SKIP;
  }
  const uint64_t bytes = 1800000, skip = 300000;
  test_path kernel_path = test_path_of_ns(r.ns[0], r.ns[2], "198.18.1.2", "198.19.1.2");
  load_result kernel = measure_under_load(&kernel_path, bytes, skip);
  load_result kernel_full = measure_overload(&kernel_path, rate);
  test_path_close(&kernel_path);
  router_remove(&r);

  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  config.down.rate_bps = rate * 1500 / 1514;
  config.down.queue_bytes = limit * 1500 / 1514;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  load_result emulated = measure_under_load(&path, bytes, skip);
  load_result emulated_full = measure_overload(&path, rate);
  test_print_stats(link, "tbf-emulator");
  test_path_close(&path);
  netem_stop(link);

  double goodput_error = emulated.goodput_bps / kernel.goodput_bps - 1.0;
  double full_error = emulated_full.rtt_mean_ms / kernel_full.rtt_mean_ms - 1.0;
  double delivered_error = emulated_full.goodput_bps / kernel_full.goodput_bps - 1.0;
  printf("tbf: TCP goodput kernel %.0f bit/s, emulator %.0f bit/s (%+.2f%%); probe RTT "
         "under TCP load (informative: depends on cubic's loss history) kernel %.2f ms, "
         "emulator %.2f ms\n",
         kernel.goodput_bps, emulated.goodput_bps, 100 * goodput_error, kernel.rtt_mean_ms,
         emulated.rtt_mean_ms);
  printf("tbf: UDP at 110%% of the rate: one-way delay through the full queue kernel %.2f ms "
         "(%d datagrams), emulator %.2f ms (%d datagrams) (%+.2f%%); datagrams delivered "
         "kernel %.0f, emulator %.0f (%+.2f%%)\n",
         kernel_full.rtt_mean_ms, kernel_full.answered, emulated_full.rtt_mean_ms,
         emulated_full.answered, 100 * full_error, kernel_full.goodput_bps,
         emulated_full.goodput_bps, 100 * delivered_error);
  if (!kernel.ok || !emulated.ok || !kernel_full.ok || !emulated_full.ok)
    test_fail("a transfer did not complete or too few datagrams came through");
  if (fabs(goodput_error) > 0.05) test_fail("TCP goodput differs by more than 5%%");
  if (fabs(full_error) > 0.05) test_fail("queueing delay of a full queue differs by more than 5%%");
  if (fabs(delivered_error) > 0.05)
    test_fail("UDP datagrams delivered under overload differ by more than 5%%");
  return 0;
}

int compare_iptables_loss(void) {
  const double p = 0.05;
  const uint64_t count = 200000;
  char err[256];
  router r;
  if (router_build(&r, "ipt", err, sizeof err) != 0) {
    printf("SKIP iptables_loss: cannot build the veth router: %s\n", err);
    return TEST_SKIP;
  }
  char probability[16];
  snprintf(probability, sizeof probability, "%.4f", p);
  const char *rule[] = {"iptables",  "-A", "FORWARD",   "-d",     "198.18.1.2", "-p",
                        "udp",       "-m", "statistic", "--mode", "random",     "--probability",
                        probability, "-j", "DROP",      NULL};
  if (ns_exec(r.ns[1], rule, err, sizeof err) != 0) {
    router_remove(&r);
    printf("SKIP iptables_loss: iptables with the statistic match is not available: %s\n", err);
    return TEST_SKIP;
  }
  test_path kernel_path = test_path_of_ns(r.ns[0], r.ns[2], "198.18.1.2", "198.19.1.2");
  uint64_t kernel_received =
      test_udp_stream(&kernel_path, NETEM_DIR_DOWN, count, 64, 100, 1000, 300);
  test_path_close(&kernel_path);
  router_remove(&r);

  netem_config config;
  netem_config_init(&config);
  config.seed = 99;
  config.down.rate_bps = config.up.rate_bps = 500000000;
  config.down.loss = p;
  config.down.queue_packets = 8192;
  netem_link *link = test_link_start(&config);
  test_path path = test_path_of_link(link);
  uint64_t emulated_received = test_udp_stream(&path, NETEM_DIR_DOWN, count, 64, 100, 1000, 300);
  test_print_stats(link, "iptables-emulator");
  netem_stats stats;
  netem_stats_read(link, &stats);
  test_path_close(&path);
  netem_stop(link);

  /* The loss model is compared on the packets it saw: on a loaded machine the TUN device
   * may drop a few before the emulator reads them (counted and reported above), and those
   * are not the model's doing. */
  double kernel_loss = 1.0 - (double)kernel_received / (double)count;
  double emulated_loss = stats.down.packets_in > 0
                             ? (double)stats.down.random_losses / (double)stats.down.packets_in
                             : 1.0 - (double)emulated_received / (double)count;
  printf("iptables_loss: emulator delivered %" PRIu64 " of %" PRIu64 " datagrams (%" PRIu64
         " TUN drops)\n",
         emulated_received, count, stats.down.tun_drops);
  double difference = emulated_loss / kernel_loss - 1.0;
  printf("iptables_loss: %" PRIu64 " datagrams at %.1f%%: iptables statistic lost %.3f%%, "
         "emulator %.3f%% (%+.2f%% relative)\n",
         count, 100 * p, 100 * kernel_loss, 100 * emulated_loss, 100 * difference);
  if (fabs(difference) > 0.05) test_fail("loss rates differ by more than 5%%");
  return 0;
}

/* ---- several links at once --------------------------------------------------------------- */

typedef struct parallel_job {
  netem_link *link;
  test_path path;
  uint64_t bytes, skip;
  test_transfer result;
  int rc;
} parallel_job;

static void *parallel_main(void *arg) {
  parallel_job *job = arg;
  job->rc =
      test_transfer_run(&job->path, NETEM_DIR_DOWN, job->bytes, job->skip, 60.0, &job->result);
  return NULL;
}

int compare_parallel_links(int count) {
  if (count < 1 || count > 16) test_fail("link count %d out of range", count);
  parallel_job jobs[16];
  pthread_t threads[16];
  netem_config config;
  netem_config_init(&config);
  config.seed = 5;
  netem_config_profile(&config, "cable");
  uint64_t rate = config.down.rate_bps;
  for (int i = 0; i < count; i++) {
    jobs[i].link = test_link_start(&config);
    jobs[i].path = test_path_of_link(jobs[i].link);
    jobs[i].skip = rate / 8u;       /* 1 s */
    jobs[i].bytes = rate / 8u * 4u; /* + 3 s measured */
  }
  for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, parallel_main, &jobs[i]);
  for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
  int failed = 0;
  double expected = (double)rate * 1448.0 / 1500.0;
  for (int i = 0; i < count; i++) {
    netem_stats s;
    netem_stats_read(jobs[i].link, &s);
    double goodput = test_transfer_goodput(&jobs[i].result);
    double error = goodput / expected - 1.0;
    printf("parallel link %d/%d (cable): goodput %.0f bit/s (%+.2f%%), lateness p50 %.3f "
           "p99 %.3f max %.3f ms, TUN drops %" PRIu64 "\n",
           i + 1, count, goodput, 100 * error, (double)s.lateness.p50_ns / 1e6,
           (double)s.lateness.p99_ns / 1e6, (double)s.lateness.max_ns / 1e6,
           s.down.tun_drops + s.up.tun_drops);
    if (jobs[i].rc != 0 || !jobs[i].result.intact || fabs(error) > 0.05 ||
        s.down.tun_drops + s.up.tun_drops > 0) {
      printf("FAIL: link %d: transfer rc %d, goodput error %+.2f%% (limit 5%%)\n", i + 1,
             jobs[i].rc, 100 * error);
      failed = 1;
    }
  }
  for (int i = 0; i < count; i++) {
    test_path_close(&jobs[i].path);
    netem_stop(jobs[i].link);
  }
  return failed;
}
