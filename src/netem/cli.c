/* cli.c — the `speedy netem` command: options, running a server and a client command on
 * the two sides of a link, signals, and the statistics printed at exit.
 */
#define _GNU_SOURCE
#include "netem_cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "netem.h"

#define ME "speedy netem"

static void usage(FILE *out) {
  fprintf(out,
          "Usage: speedy netem [OPTION]... [--server 'CMD'] [-- CLIENT-CMD [ARG]...]\n"
          "Emulate a network link between two network namespaces (needs root).\n"
          "\n"
          "With a client command: start the server command (if any) on the server side, wait\n"
          "until it listens, run the client command on the client side, stop the server and\n"
          "exit with the client's status. Without one: keep the link up until SIGINT/SIGTERM\n"
          "(enter a side with `ip netns exec NAME ...`).\n"
          "Commands see SPEEDY_NETEM_CLIENT_ADDR, SPEEDY_NETEM_SERVER_ADDR and\n"
          "SPEEDY_NETEM_SERVER_ADDRS. The client is 198.18.0.1, servers 198.19.0.1, ...\n"
          "\n"
          "Link (per direction; down = server to client):\n"
          "  -p, --profile NAME     dsl, cable, 3g or lte (default: unlimited, no delay)\n"
          "      --down RATE        downlink rate in bit/s, suffix k, M or G (e.g. 2M)\n"
          "      --up RATE          uplink rate in bit/s\n"
          "      --rtt TIME         round-trip propagation delay, split evenly (e.g. 50ms)\n"
          "      --jitter TIME      extra one-way delay uniform in [-TIME, +TIME] (default 0)\n"
          "      --reorder          let jitter reorder packets (default: keep order)\n"
          "      --loss PERCENT     random loss per packet (default 0)\n"
          "      --burst N          mean loss burst length in packets (Gilbert-Elliott);\n"
          "                         default 1: independent (Bernoulli) losses\n"
          "      --loss-dir DIR     directions the loss applies to: both, down, up (default both)\n"
          "      --queue BYTES      drop-tail queue limit in bytes, suffix k or M\n"
          "                         (default: one bandwidth-delay product, at least 16 packets)\n"
          "      --queue-packets N  queue limit in packets instead (dummynet's default is 50)\n"
          "      --servers N        number of server addresses (default 1)\n"
          "      --seed N           loss and jitter seed (default: random, printed)\n"
          "      --no-realtime      do not ask for SCHED_FIFO for the forwarding thread\n"
          "TCP (both namespaces):\n"
          "      --tcp PRESET       modern (default) or 2009: initcwnd 3, no RACK, early\n"
          "                         retransmit, ECN or Fast Open\n"
          "      --cc NAME          congestion control (default cubic)\n"
          "      --initcwnd N       initial congestion window in packets (default 10)\n"
          "      --slow-start-after-idle 0|1  (default 1)\n"
          "Commands and output:\n"
          "  -s, --server CMD       server command, run with /bin/sh -c on the server side\n"
          "      --server-wait SEC  how long to wait for the server to listen (default 5)\n"
          "      --stats-json FILE  write statistics as JSON to FILE at exit\n"
          "  -q, --quiet            print no link description or statistics\n"
          "  -h, --help             this help\n"
          "\n"
          "Exit status: the client command's; 1 if the link fails, 2 for bad usage.\n");
}

/* Parses "2M", "375k", "1.5M", "100000": bits per second. */
static int parse_rate(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || !(value >= 0)) return -1;
  double scale = 1;
  if (*end == 'k' || *end == 'K')
    scale = 1e3, end++;
  else if (*end == 'M')
    scale = 1e6, end++;
  else if (*end == 'G')
    scale = 1e9, end++;
  if (strcmp(end, "") != 0 && strcmp(end, "bit") != 0 && strcmp(end, "bps") != 0) return -1;
  value *= scale;
  if (value > 1e12) return -1;
  *out = (uint64_t)llround(value);
  return 0;
}

/* Parses "50ms", "0.05s", "500us", "50" (milliseconds): nanoseconds. */
static int parse_time(const char *text, uint64_t *out) {
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  if (errno != 0 || end == text || !(value >= 0)) return -1;
  double scale = 1e6;
  if (strcmp(end, "s") == 0)
    scale = 1e9;
  else if (strcmp(end, "us") == 0)
    scale = 1e3;
  else if (strcmp(end, "ms") != 0 && strcmp(end, "") != 0)
    return -1;
  value *= scale;
  if (value > 3600e9) return -1;
  *out = (uint64_t)llround(value);
  return 0;
}

static int parse_count(const char *text, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  double value = strtod(text, &end);
  double scale = 1;
  if (*end == 'k' || *end == 'K')
    scale = 1e3, end++;
  else if (*end == 'M')
    scale = 1e6, end++;
  if (errno != 0 || end == text || *end != '\0' || !(value >= 0) || value * scale > (double)max)
    return -1;
  *out = (uint64_t)llround(value * scale);
  return 0;
}

static int bad_value(const char *option, const char *value) {
  fprintf(stderr, ME ": bad value for --%s: '%s' (see --help)\n", option, value);
  return 2;
}

/* Waits until the server side has a listening TCP socket or a bound UDP socket, the
 * server exits, or the time is up. Returns 0 when something listens. */
static int wait_for_listener(netem_link *link, pid_t server, double seconds) {
  if (netem_enter(link, NETEM_SIDE_SERVER) != 0) return -1;
  int tcp_fd = open("/proc/thread-self/net/tcp", O_RDONLY | O_CLOEXEC);
  int udp_fd = open("/proc/thread-self/net/udp", O_RDONLY | O_CLOEXEC);
  netem_leave(link);
  int rc = -1;
  uint64_t deadline = netem_now_ns() + (uint64_t)(seconds * 1e9);
  char text[8192];
  while (tcp_fd >= 0 && udp_fd >= 0 && netem_now_ns() < deadline) {
    ssize_t n = pread(tcp_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    /* st column 0A is TCP_LISTEN */
    if (strstr(text, " 0A ") != NULL) {
      rc = 0;
      break;
    }
    n = pread(udp_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    if (strchr(text, '\n') != NULL && strchr(strchr(text, '\n') + 1, ':') != NULL) {
      rc = 0;
      break;
    }
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)server, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == server)
      break; /* the server ended (left for the caller to reap) */
    struct timespec pause = {.tv_nsec = 2000000};
    nanosleep(&pause, NULL);
  }
  if (tcp_fd >= 0) close(tcp_fd);
  if (udp_fd >= 0) close(udp_fd);
  return rc;
}

static void describe(const netem_link *link) {
  const netem_config *c = netem_link_config(link);
  char last[16];
  netem_server_addr(link, c->server_addrs - 1, last, sizeof last);
  fprintf(stderr,
          ME ": %s link: down %" PRIu64 " bit/s, up %" PRIu64 " bit/s, RTT %.1f ms, "
             "loss down %.3f%% up %.3f%%, seed %" PRIu64 "\n",
          c->profile, c->down.rate_bps, c->up.rate_bps, (double)netem_config_rtt_ns(c) / 1e6,
          c->down.loss * 100, c->up.loss * 100, c->seed);
  for (int d = 0; d < 2; d++) {
    const netem_dir_config *dir = d == 0 ? &c->down : &c->up;
    if (dir->queue_packets > 0)
      fprintf(stderr, ME ": %s queue limit %u packets\n", d == 0 ? "down" : "up",
              dir->queue_packets);
    else
      fprintf(stderr, ME ": %s queue limit %" PRIu64 " bytes\n", d == 0 ? "down" : "up",
              dir->queue_bytes);
  }
  fprintf(stderr,
          ME ": tcp %s: %s, initcwnd %d, slow_start_after_idle %d, ecn %d, early_retrans %d, "
             "recovery %d, fastopen %d, no_metrics_save 1\n",
          c->tcp.preset, c->tcp.congestion_control, c->tcp.initcwnd, c->tcp.slow_start_after_idle,
          c->tcp.ecn, c->tcp.early_retrans, c->tcp.recovery, c->tcp.fastopen);
  fprintf(stderr, ME ": client namespace %s (%s), server namespace %s (%s%s%s)\n",
          netem_ns_name(link, NETEM_SIDE_CLIENT), netem_client_addr(link),
          netem_ns_name(link, NETEM_SIDE_SERVER), "198.19.0.1", c->server_addrs > 1 ? " .. " : "",
          c->server_addrs > 1 ? last : "");
}

enum {
  OPT_DOWN = 256,
  OPT_UP,
  OPT_RTT,
  OPT_JITTER,
  OPT_REORDER,
  OPT_LOSS,
  OPT_BURST,
  OPT_LOSS_DIR,
  OPT_QUEUE,
  OPT_QUEUE_PACKETS,
  OPT_SERVERS,
  OPT_SEED,
  OPT_NO_REALTIME,
  OPT_TCP,
  OPT_CC,
  OPT_INITCWND,
  OPT_SSAI,
  OPT_SERVER_WAIT,
  OPT_STATS_JSON,
};

/* Parses options into config and the run settings. Returns -1 to go on, else an exit
 * status. */
struct run_settings {
  const char *server_cmd, *stats_json;
  double server_wait;
  bool quiet;
};

static int parse_options(int argc, char **argv, netem_config *config, struct run_settings *run) {
  static const struct option options[] = {
      {"profile", required_argument, NULL, 'p'},
      {"down", required_argument, NULL, OPT_DOWN},
      {"up", required_argument, NULL, OPT_UP},
      {"rtt", required_argument, NULL, OPT_RTT},
      {"jitter", required_argument, NULL, OPT_JITTER},
      {"reorder", no_argument, NULL, OPT_REORDER},
      {"loss", required_argument, NULL, OPT_LOSS},
      {"burst", required_argument, NULL, OPT_BURST},
      {"loss-dir", required_argument, NULL, OPT_LOSS_DIR},
      {"queue", required_argument, NULL, OPT_QUEUE},
      {"queue-packets", required_argument, NULL, OPT_QUEUE_PACKETS},
      {"servers", required_argument, NULL, OPT_SERVERS},
      {"seed", required_argument, NULL, OPT_SEED},
      {"no-realtime", no_argument, NULL, OPT_NO_REALTIME},
      {"tcp", required_argument, NULL, OPT_TCP},
      {"cc", required_argument, NULL, OPT_CC},
      {"initcwnd", required_argument, NULL, OPT_INITCWND},
      {"slow-start-after-idle", required_argument, NULL, OPT_SSAI},
      {"server", required_argument, NULL, 's'},
      {"server-wait", required_argument, NULL, OPT_SERVER_WAIT},
      {"stats-json", required_argument, NULL, OPT_STATS_JSON},
      {"quiet", no_argument, NULL, 'q'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  double loss = 0, burst = 0;
  const char *loss_dir = "both", *cc = NULL;
  int initcwnd = -1, ssai = -1;
  uint64_t rtt = UINT64_MAX, jitter = 0, queue = 0, queue_packets = 0, value;
  int opt;
  /* '+': stop at the first non-option, so the client command keeps its own options. */
  while ((opt = getopt_long(argc, argv, "+p:s:qh", options, NULL)) != -1) {
    switch (opt) {
    case 'p':
      if (netem_config_profile(config, optarg) != 0) {
        fprintf(stderr, ME ": unknown profile '%s' (known: %s)\n", optarg, netem_profile_names());
        return 2;
      }
      break;
    case OPT_DOWN:
      if (parse_rate(optarg, &config->down.rate_bps) != 0) return bad_value("down", optarg);
      snprintf(config->profile, sizeof config->profile, "custom");
      break;
    case OPT_UP:
      if (parse_rate(optarg, &config->up.rate_bps) != 0) return bad_value("up", optarg);
      snprintf(config->profile, sizeof config->profile, "custom");
      break;
    case OPT_RTT:
      if (parse_time(optarg, &rtt) != 0) return bad_value("rtt", optarg);
      break;
    case OPT_JITTER:
      if (parse_time(optarg, &jitter) != 0) return bad_value("jitter", optarg);
      break;
    case OPT_REORDER:
      config->reorder = true;
      break;
    case OPT_LOSS: {
      char *end;
      loss = strtod(optarg, &end);
      if (end == optarg || (strcmp(end, "") != 0 && strcmp(end, "%") != 0) ||
          !(loss >= 0 && loss <= 100))
        return bad_value("loss", optarg);
      break;
    }
    case OPT_BURST: {
      char *end;
      burst = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(burst >= 0 && burst <= 1e6))
        return bad_value("burst", optarg);
      break;
    }
    case OPT_LOSS_DIR:
      if (strcmp(optarg, "both") != 0 && strcmp(optarg, "down") != 0 && strcmp(optarg, "up") != 0)
        return bad_value("loss-dir", optarg);
      loss_dir = optarg;
      break;
    case OPT_QUEUE:
      if (parse_count(optarg, 1u << 30, &queue) != 0 || queue < NETEM_MTU)
        return bad_value("queue", optarg);
      break;
    case OPT_QUEUE_PACKETS:
      if (parse_count(optarg, 60000, &queue_packets) != 0 || queue_packets < 1)
        return bad_value("queue-packets", optarg);
      break;
    case OPT_SERVERS:
      if (parse_count(optarg, NETEM_MAX_SERVER_ADDRS, &value) != 0 || value < 1)
        return bad_value("servers", optarg);
      config->server_addrs = (unsigned)value;
      break;
    case OPT_SEED: {
      /* strtoull takes a sign ("-1" is 2^64 - 1) and leading spaces: a digit first. */
      if (optarg[0] < '0' || optarg[0] > '9') return bad_value("seed", optarg);
      char *end;
      errno = 0;
      config->seed = strtoull(optarg, &end, 0);
      if (errno != 0 || end == optarg || *end != '\0') return bad_value("seed", optarg);
      break;
    }
    case OPT_NO_REALTIME:
      config->realtime = false;
      break;
    case OPT_TCP:
      if (netem_tcp_preset(&config->tcp, optarg) != 0) return bad_value("tcp", optarg);
      break;
    case OPT_CC:
      if (strlen(optarg) == 0 || strlen(optarg) >= sizeof config->tcp.congestion_control)
        return bad_value("cc", optarg);
      cc = optarg;
      break;
    case OPT_INITCWND:
      if (parse_count(optarg, 1000, &value) != 0 || value < 1) return bad_value("initcwnd", optarg);
      initcwnd = (int)value;
      break;
    case OPT_SSAI:
      if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0)
        return bad_value("slow-start-after-idle", optarg);
      ssai = optarg[0] - '0';
      break;
    case 's':
      run->server_cmd = optarg;
      break;
    case OPT_SERVER_WAIT: {
      char *end;
      run->server_wait = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(run->server_wait >= 0 && run->server_wait <= 600))
        return bad_value("server-wait", optarg);
      break;
    }
    case OPT_STATS_JSON:
      run->stats_json = optarg;
      break;
    case 'q':
      run->quiet = true;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      fprintf(stderr, "Try 'speedy netem --help'.\n");
      return 2;
    }
  }
  /* Options that refine a preset apply after it, whatever their order. */
  if (cc != NULL)
    snprintf(config->tcp.congestion_control, sizeof config->tcp.congestion_control, "%s", cc);
  if (initcwnd > 0) config->tcp.initcwnd = initcwnd;
  if (ssai >= 0) config->tcp.slow_start_after_idle = ssai;
  if (rtt != UINT64_MAX) {
    config->down.delay_ns = rtt / 2;
    config->up.delay_ns = rtt - rtt / 2;
  }
  config->down.jitter_ns = config->up.jitter_ns = jitter;
  if (strcmp(loss_dir, "up") != 0) config->down.loss = loss / 100.0, config->down.burst = burst;
  if (strcmp(loss_dir, "down") != 0) config->up.loss = loss / 100.0, config->up.burst = burst;
  config->down.queue_bytes = config->up.queue_bytes = queue;
  config->down.queue_packets = config->up.queue_packets = (uint32_t)queue_packets;
  return -1;
}

static int write_stats_json(const char *path, const netem_config *config,
                            const netem_stats *stats) {
  FILE *out = fopen(path, "w");
  if (out == NULL) {
    fprintf(stderr, ME ": cannot open --stats-json %s: %s\n", path, strerror(errno));
    return -1;
  }
  int rc = netem_stats_print_json(out, config, stats);
  if (fclose(out) != 0 || rc != 0) {
    fprintf(stderr, ME ": cannot write --stats-json %s\n", path);
    return -1;
  }
  return 0;
}

int netem_cli_main(int argc, char **argv) {
  netem_config config;
  netem_config_init(&config);
  struct run_settings run = {.server_wait = 5.0};
  int status = parse_options(argc, argv, &config, &run);
  if (status >= 0) return status;
  char **client_argv = optind < argc ? argv + optind : NULL;

  /* Signals are taken synchronously with sigwaitinfo(), so the cleanup always runs in
   * this thread, never in a handler. */
  sigset_t watched;
  sigemptyset(&watched);
  sigaddset(&watched, SIGINT);
  sigaddset(&watched, SIGTERM);
  sigaddset(&watched, SIGHUP);
  sigaddset(&watched, SIGCHLD);
  sigprocmask(SIG_BLOCK, &watched, NULL);

  char err[512];
  netem_link *link = NULL;
  if (netem_start(&config, &link, err, sizeof err) != 0) {
    fprintf(stderr, ME ": %s\n", err);
    return 1;
  }
  if (!run.quiet) describe(link);

  int exit_status = 0;
  pid_t server = -1, client = -1;
  if (run.server_cmd != NULL) {
    char *server_argv[] = {"/bin/sh", "-c", (char *)run.server_cmd, NULL};
    if (netem_spawn(link, NETEM_SIDE_SERVER, server_argv, &server) != 0) {
      fprintf(stderr, ME ": cannot start the server command\n");
      exit_status = 1;
      goto done;
    }
    if (client_argv != NULL && wait_for_listener(link, server, run.server_wait) != 0 && !run.quiet)
      fprintf(stderr, ME ": the server has not opened a socket after %.1f s; going on\n",
              run.server_wait);
  }
  if (client_argv != NULL) {
    int rc = netem_spawn(link, NETEM_SIDE_CLIENT, client_argv, &client);
    if (rc != 0) {
      fprintf(stderr, ME ": cannot start %s: %s\n", client_argv[0], strerror(-rc));
      exit_status = 1;
      goto done;
    }
  } else if (!run.quiet) {
    fprintf(stderr, ME ": link up; stop it with Ctrl-C\n");
  }
  for (;;) {
    siginfo_t info;
    int sig = sigwaitinfo(&watched, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      fprintf(stderr, ME ": %s: stopping the link\n", strsignal(sig));
      if (client > 0) kill(-client, SIGTERM);
      exit_status = 1;
      break;
    }
    if (client > 0) {
      int wstatus;
      if (waitpid(client, &wstatus, WNOHANG) == client) {
        if (WIFEXITED(wstatus)) {
          exit_status = WEXITSTATUS(wstatus);
        } else {
          fprintf(stderr, ME ": %s was killed by %s\n", client_argv[0],
                  strsignal(WTERMSIG(wstatus)));
          exit_status = 1;
        }
        break;
      }
    }
  }
done:;
  netem_stats stats;
  if (netem_stats_read(link, &stats) != 0)
    fprintf(stderr, ME ": some statistics could not be read\n");
  if (!run.quiet) netem_stats_print(stderr, netem_link_config(link), &stats);
  if (run.stats_json != NULL &&
      write_stats_json(run.stats_json, netem_link_config(link), &stats) != 0)
    exit_status = exit_status == 0 ? 1 : exit_status;
  netem_stop(link);
  return exit_status;
}
