/* netem.h — speedy's packet-level link emulator: the C API the `speedy netem` command and
 * the page-load lab use.
 *
 * A link is two network namespaces (client side, server side), a TUN device in each, and
 * one forwarding thread that moves IP packets between the two TUN devices through a model
 * of the link in each direction ("down" = server to client, "up" = client to server).
 * Needs root. Linux only.
 *
 *   netem_config config;
 *   netem_config_init(&config);
 *   netem_config_profile(&config, "dsl");
 *   netem_link *link;
 *   if (netem_start(&config, &link, err, sizeof err) != 0) ...;
 *   netem_spawn(link, NETEM_SIDE_SERVER, server_argv, &server_pid);
 *   ...
 *   netem_stats_read(link, &stats);
 *   netem_stop(link);   // stops the thread, kills what netem_spawn started, removes all
 *
 * Errors are values: functions return 0 or a negative errno, and fill err when given.
 */
#ifndef SPEEDY_NETEM_H
#define SPEEDY_NETEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define NETEM_MTU 1500u
#define NETEM_MAX_SERVER_ADDRS 4096u

typedef enum { NETEM_SIDE_CLIENT = 0, NETEM_SIDE_SERVER = 1 } netem_side;
typedef enum { NETEM_DIR_DOWN = 0, NETEM_DIR_UP = 1 } netem_dir; /* down: server->client */

/* One direction of the link. */
typedef struct netem_dir_config {
  uint64_t rate_bps;      /* bottleneck, IP-level bits per second; 0 = unlimited */
  uint64_t delay_ns;      /* one-way propagation delay */
  uint64_t jitter_ns;     /* extra delay uniform in [-jitter, +jitter], never below 0 */
  uint64_t queue_bytes;   /* drop-tail limit in bytes; 0 = default (BDP, >= 16 packets) */
  uint32_t queue_packets; /* if nonzero, the limit is in packets instead */
  double loss;            /* random loss probability per packet, 0..1 */
  double burst;           /* mean loss burst length (Gilbert–Elliott); <= 1: Bernoulli */
} netem_dir_config;

/* TCP settings written into both namespaces. */
typedef struct netem_tcp_config {
  char congestion_control[16]; /* "cubic" */
  int initcwnd;                /* initial congestion window, packets (route attribute) */
  int slow_start_after_idle;   /* net.ipv4.tcp_slow_start_after_idle */
  int ecn;                     /* net.ipv4.tcp_ecn */
  int early_retrans;           /* net.ipv4.tcp_early_retrans */
  int recovery;                /* net.ipv4.tcp_recovery (1 = RACK) */
  int fastopen;                /* net.ipv4.tcp_fastopen */
  char preset[16];             /* "modern" or "2009", for reports */
} netem_tcp_config;

typedef struct netem_config {
  netem_dir_config down, up;
  netem_tcp_config tcp;
  char profile[16];      /* name for reports; "custom" when hand-made */
  unsigned server_addrs; /* number of server addresses, >= 1 */
  uint64_t seed;         /* loss and jitter generator seed */
  bool reorder;          /* let jitter reorder packets */
  bool realtime;         /* try SCHED_FIFO for the forwarding thread (default true) */
} netem_config;

/* Sets defaults: unlimited rate, no delay or loss, cubic, initcwnd 10, 1 server address,
 * seed from the kernel's random source. */
void netem_config_init(netem_config *config);
/* Applies a named profile (dsl, cable, 3g, lte) to rates and delays. Returns 0 or
 * -EINVAL for an unknown name. */
int netem_config_profile(netem_config *config, const char *name);
/* Applies a TCP preset ("modern" or "2009"). Returns 0 or -EINVAL. */
int netem_tcp_preset(netem_tcp_config *tcp, const char *name);
/* The configured round-trip time (sum of both one-way delays). */
uint64_t netem_config_rtt_ns(const netem_config *config);
/* A list of the profile names, for usage text: "dsl, cable, 3g, lte". */
const char *netem_profile_names(void);

typedef struct netem_link netem_link;

/* Lateness of the forwarding thread: how long after its model departure time each packet
 * was actually written. */
typedef struct netem_lateness {
  uint64_t count;
  uint64_t p50_ns, p99_ns, max_ns;
} netem_lateness;

typedef struct netem_dir_stats {
  uint64_t packets_in, bytes_in;                   /* read from the sending side's TUN */
  uint64_t packets_out, bytes_out;                 /* written to the receiving side's TUN */
  uint64_t queue_drops;                            /* drop-tail */
  uint64_t random_losses;                          /* Bernoulli or burst */
  uint64_t overflow_drops;                         /* emulator's own buffer full (should be 0) */
  uint64_t queue_delay_sum_ns, queue_delay_max_ns; /* over forwarded packets */
  uint64_t queue_limit;                            /* bytes, or packets if queue_in_packets */
  bool queue_in_packets;
  netem_lateness lateness;
  uint64_t tun_drops; /* kernel drops on the two TUN devices this direction passes */
} netem_dir_stats;

typedef struct netem_tcp_counters {
  uint64_t active_opens, passive_opens, out_segs, retrans_segs;
  uint64_t timeouts, syn_retrans, loss_probes, fast_retrans;
} netem_tcp_counters;

typedef struct netem_stats {
  netem_dir_stats down, up;
  netem_lateness lateness;   /* both directions together */
  netem_tcp_counters tcp[2]; /* indexed by netem_side */
  uint64_t forwarder_cpu_ns; /* CPU time of the forwarding thread */
  uint64_t elapsed_ns;       /* since the link started */
  bool realtime;             /* the forwarding thread got SCHED_FIFO */
  char forwarder_error[128]; /* empty while the thread runs; else why it stopped */
} netem_stats;

/* Removes namespaces left by earlier runs whose process is gone. Returns how many. */
int netem_cleanup_stale(void);

/* Creates the namespaces, devices, addresses, routes and TCP settings and starts the
 * forwarding thread. On success *out owns everything: release with netem_stop(). */
int netem_start(const netem_config *config, netem_link **out, char *err, size_t errlen);

/* Stops the forwarding thread, ends processes started with netem_spawn (SIGTERM, then
 * SIGKILL after a grace period), closes the devices and deletes the namespaces. */
void netem_stop(netem_link *link);

/* The namespace name of a side (usable with `ip netns exec NAME`). */
const char *netem_ns_name(const netem_link *link, netem_side side);
/* Address strings: the client's, and the i-th server address (i < server_addrs). */
const char *netem_client_addr(const netem_link *link);
int netem_server_addr(const netem_link *link, unsigned i, char *buf, size_t len);
/* The configuration the link runs with (queue limits filled in). */
const netem_config *netem_link_config(const netem_link *link);

/* Starts argv (execvp) inside a side, in its own process group, with
 * SPEEDY_NETEM_CLIENT_ADDR, SPEEDY_NETEM_SERVER_ADDR and SPEEDY_NETEM_SERVER_ADDRS set.
 * The child dies with the calling thread (PR_SET_PDEATHSIG). The caller reaps it. */
int netem_spawn(netem_link *link, netem_side side, char *const argv[], pid_t *pid);

/* Moves the calling thread into a side's network namespace (netem_enter) and back to the
 * namespace it came from (netem_leave). Sockets created in between belong to the side. */
int netem_enter(netem_link *link, netem_side side);
int netem_leave(netem_link *link);

/* Snapshot of the statistics; may be called while the link runs. */
int netem_stats_read(netem_link *link, netem_stats *out);

/* Prints statistics human-readable, or as one JSON object (with the configuration). */
void netem_stats_print(FILE *out, const netem_config *config, const netem_stats *stats);
int netem_stats_print_json(FILE *out, const netem_config *config, const netem_stats *stats);

#endif
