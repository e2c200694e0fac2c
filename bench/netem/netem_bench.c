/* netem_bench.c — figures of the link emulator (needs root; prints, never judges):
 *
 *   1. CPU time of the forwarding thread per forwarded 1,500-byte packet, at a paced rate
 *      the thread can sustain;
 *   2. the highest packet rate one emulator sustains with 1,500-byte packets (an
 *      unlimited link flooded by a UDP sender: forwarded packets per second);
 *   3. wake-up lateness (p50/p99/max over all links) with 1, 2, 4 and 8 links running at
 *      once, each carrying a bulk TCP download over the cable profile.
 *
 * Usage: netem_bench [--quick]   (--quick: shorter runs, for a smoke test)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "netem.h"

static double seconds_scale = 1.0;

static netem_link *bench_link(const netem_config *config) {
  netem_link *link;
  char err[512];
  if (netem_start(config, &link, err, sizeof err) != 0) {
    fprintf(stderr, "netem_bench: %s\n", err);
    exit(1);
  }
  return link;
}

static int side_socket(netem_link *link, netem_side side, int type) {
  if (netem_enter(link, side) != 0) return -1;
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (netem_leave(link) != 0) abort();
  return fd;
}

static void sleep_ns(uint64_t ns) {
  struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
  nanosleep(&ts, NULL);
}

/* Sends 1,472-byte datagrams (1,500-byte IP packets) from the server side to the client
 * for `duration_ns`, `pps` per second (0: as fast as possible). Returns packets sent. */
static uint64_t udp_flood(netem_link *link, uint64_t pps, uint64_t duration_ns) {
  int sink = side_socket(link, NETEM_SIDE_CLIENT, SOCK_DGRAM);
  int sender = side_socket(link, NETEM_SIDE_SERVER, SOCK_DGRAM);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(9)};
  inet_pton(AF_INET, netem_client_addr(link), &sa.sin_addr);
  if (sink < 0 || sender < 0 || bind(sink, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      connect(sender, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("netem_bench: udp sockets");
    exit(1);
  }
  /* The sink is never read: its drops are cheap and outside the emulator. */
  static uint8_t payload[1472];
  uint64_t start = netem_now_ns(), sent = 0;
  while (netem_now_ns() - start < duration_ns) {
    if (pps > 0) {
      uint64_t due = start + sent * 1000000000u / pps;
      uint64_t now = netem_now_ns();
      if (due > now) sleep_ns(due - now);
    }
    if (send(sender, payload, sizeof payload, 0) == (ssize_t)sizeof payload)
      sent++;
    else if (errno == ENOBUFS || errno == EAGAIN)
      sleep_ns(10000);
  }
  sleep_ns(100000000); /* let the link drain */
  close(sender);
  close(sink);
  return sent;
}

static void bench_cpu_per_packet(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  config.down.rate_bps = 1000000000; /* 1 Gbit/s: no queueing at 20,000 packets/s */
  config.down.delay_ns = config.up.delay_ns = 1000000;
  netem_link *link = bench_link(&config);
  netem_stats before, after;
  netem_stats_read(link, &before);
  uint64_t sent = udp_flood(link, 20000, (uint64_t)(2e9 * seconds_scale));
  netem_stats_read(link, &after);
  netem_stop(link);
  uint64_t forwarded = after.down.packets_out - before.down.packets_out;
  double cpu = (double)(after.forwarder_cpu_ns - before.forwarder_cpu_ns);
  printf("cpu per packet: %" PRIu64 " sent, %" PRIu64 " forwarded at 20,000 packets/s: "
         "%.2f us of forwarding-thread CPU per 1,500-byte packet; lateness p50 %.3f p99 "
         "%.3f max %.3f ms; TUN drops %" PRIu64 "\n",
         sent, forwarded, forwarded ? cpu / (double)forwarded / 1e3 : 0,
         (double)after.down.lateness.p50_ns / 1e6, (double)after.down.lateness.p99_ns / 1e6,
         (double)after.down.lateness.max_ns / 1e6, after.down.tun_drops);
}

static void bench_max_rate(void) {
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  config.down.queue_packets = 8192;
  netem_link *link = bench_link(&config); /* unlimited rate, no delay */
  netem_stats before, after;
  netem_stats_read(link, &before);
  uint64_t duration = (uint64_t)(2e9 * seconds_scale);
  uint64_t sent = udp_flood(link, 0, duration);
  netem_stats_read(link, &after);
  netem_stop(link);
  uint64_t forwarded = after.down.packets_out - before.down.packets_out;
  double elapsed = (double)(after.elapsed_ns - before.elapsed_ns) / 1e9 - 0.1;
  printf("max rate: flood of %" PRIu64 " 1,500-byte packets: %" PRIu64 " forwarded, "
         "%.0f packets/s (%.0f Mbit/s); TUN drops %" PRIu64 " (the sender outran the "
         "emulator), forwarding-thread CPU %.0f%%\n",
         sent, forwarded, (double)forwarded / elapsed, (double)forwarded * 12000.0 / elapsed / 1e6,
         after.down.tun_drops - before.down.tun_drops,
         100.0 * (double)(after.forwarder_cpu_ns - before.forwarder_cpu_ns) / 1e9 / elapsed);
}

/* ---- parallel links with bulk TCP -------------------------------------------------------- */

typedef struct bulk_job {
  netem_link *link;
  uint64_t duration_ns;
  uint64_t received, elapsed_ns;
} bulk_job;

static void *bulk_sender(void *arg) {
  int fd = *(int *)arg;
  static _Thread_local uint8_t buf[65536];
  while (send(fd, buf, sizeof buf, MSG_NOSIGNAL) > 0) {
  }
  return NULL;
}

static void *bulk_main(void *arg) {
  bulk_job *job = arg;
  char server_ip[16];
  netem_server_addr(job->link, 0, server_ip, sizeof server_ip);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(5001)};
  inet_pton(AF_INET, server_ip, &sa.sin_addr);
  int listener = side_socket(job->link, NETEM_SIDE_SERVER, SOCK_STREAM);
  int client = side_socket(job->link, NETEM_SIDE_CLIENT, SOCK_STREAM);
  if (bind(listener, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(listener, 1) != 0 ||
      connect(client, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("netem_bench: bulk sockets");
    exit(1);
  }
  int server = accept(listener, NULL, NULL);
  pthread_t thread;
  pthread_create(&thread, NULL, bulk_sender, &server);
  uint64_t start = netem_now_ns();
  static _Thread_local uint8_t buf[65536];
  while (netem_now_ns() - start < job->duration_ns) {
    struct pollfd p = {.fd = client, .events = POLLIN};
    if (poll(&p, 1, 100) == 1) {
      ssize_t n = recv(client, buf, sizeof buf, 0);
      if (n <= 0) break;
      job->received += (uint64_t)n;
    }
  }
  job->elapsed_ns = netem_now_ns() - start;
  shutdown(server, SHUT_RDWR);
  shutdown(client, SHUT_RDWR);
  pthread_join(thread, NULL);
  close(server);
  close(client);
  close(listener);
  return NULL;
}

static void bench_parallel(int count) {
  bulk_job jobs[8];
  pthread_t threads[8];
  netem_config config;
  netem_config_init(&config);
  config.seed = 1;
  netem_config_profile(&config, "cable");
  for (int i = 0; i < count; i++) {
    jobs[i] =
        (bulk_job){.link = bench_link(&config), .duration_ns = (uint64_t)(3e9 * seconds_scale)};
  }
  for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, bulk_main, &jobs[i]);
  for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
  uint64_t p50 = 0, p99 = 0, max = 0, packets = 0, tun_drops = 0;
  double goodput_min = 1e18, cpu = 0;
  for (int i = 0; i < count; i++) {
    netem_stats s;
    netem_stats_read(jobs[i].link, &s);
    p50 = s.lateness.p50_ns > p50 ? s.lateness.p50_ns : p50;
    p99 = s.lateness.p99_ns > p99 ? s.lateness.p99_ns : p99;
    max = s.lateness.max_ns > max ? s.lateness.max_ns : max;
    packets += s.lateness.count;
    tun_drops += s.down.tun_drops + s.up.tun_drops;
    cpu += (double)s.forwarder_cpu_ns;
    double goodput = (double)jobs[i].received * 8e9 / (double)jobs[i].elapsed_ns;
    goodput_min = goodput < goodput_min ? goodput : goodput_min;
    netem_stop(jobs[i].link);
  }
  printf("parallel %d: cable links with a bulk download each: lateness (worst link) p50 "
         "%.3f p99 %.3f max %.3f ms over %" PRIu64 " packets; slowest link %.2f Mbit/s "
         "(includes slow start); TUN drops %" PRIu64 "; forwarding CPU %.1f%% of one core\n",
         count, (double)p50 / 1e6, (double)p99 / 1e6, (double)max / 1e6, packets, goodput_min / 1e6,
         tun_drops, 100.0 * cpu / (3e9 * seconds_scale));
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc > 1 && strcmp(argv[1], "--quick") == 0)
    seconds_scale = 0.3;
  else if (argc > 1) {
    fprintf(stderr, "usage: netem_bench [--quick]\n");
    return 2;
  }
  if (geteuid() != 0) {
    fprintf(stderr, "netem_bench: needs root (network namespaces and TUN devices)\n");
    return 1;
  }
  bench_cpu_per_packet();
  bench_max_rate();
  for (int count = 1; count <= 8; count *= 2) bench_parallel(count);
  return 0;
}
