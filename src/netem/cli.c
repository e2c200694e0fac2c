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

#include "cli.h"
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
          "exit with the client's status. A server that exits before it listens is reported\n"
          "with its exit status and the client is not run. Without a client command: keep the\n"
          "link up until SIGINT/SIGTERM (enter a side with `ip netns exec NAME ...`).\n"
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
          "Exit status: the client command's; 1 if the link fails or the server command exits\n"
          "before it opens a socket (the client is then not run), 2 for bad usage.\n");
}

#define RATE_ACCEPTED "a rate in bit/s up to 1000G, with an optional suffix k, M or G"
#define TIME_ACCEPTED "a time up to 3600s in ms, or with a suffix s, ms or us"

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

/* What waiting for the server ended with. */
typedef enum server_wait {
  SERVER_LISTENS,   /* a listening TCP or bound UDP socket on the server side */
  SERVER_SLOW,      /* neither before the time was up */
  SERVER_EXITED,    /* the server ended (left for the caller to reap) */
  SERVER_SIGNALLED, /* SIGINT, SIGTERM or SIGHUP arrived (taken: the caller acts on it) */
} server_wait;

/* Waits until the server side has a listening TCP socket or a bound UDP socket, the server
 * exits, one of the signals in `watched` (blocked) arrives, or the time is up. Between looks
 * at the socket tables it sleeps in sigtimedwait(), so a server that ends or a Ctrl-C ends
 * the wait at once (SIGCHLD is watched too), and the looks, which cost a read of
 * /proc/net/tcp each, come at 1, 2, 4 ... ms, then every 50 ms: no core spent polling. */
static server_wait wait_for_listener(netem_link *link, pid_t server, double seconds,
                                     const sigset_t *watched, int *signal_out) {
  if (netem_enter(link, NETEM_SIDE_SERVER) != 0) return SERVER_SLOW;
  int tcp_fd = open("/proc/thread-self/net/tcp", O_RDONLY | O_CLOEXEC);
  int udp_fd = open("/proc/thread-self/net/udp", O_RDONLY | O_CLOEXEC);
  netem_leave(link);
  server_wait result = SERVER_SLOW;
  uint64_t deadline = netem_now_ns() + (uint64_t)(seconds * 1e9), pause_ns = 1000000;
  char text[8192];
  while (tcp_fd >= 0 && udp_fd >= 0) {
    ssize_t n = pread(tcp_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    /* st column 0A is TCP_LISTEN */
    if (strstr(text, " 0A ") != NULL) {
      result = SERVER_LISTENS;
      break;
    }
    n = pread(udp_fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    if (strchr(text, '\n') != NULL && strchr(strchr(text, '\n') + 1, ':') != NULL) {
      result = SERVER_LISTENS;
      break;
    }
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)server, &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == server) {
      result = SERVER_EXITED;
      break;
    }
    uint64_t now = netem_now_ns();
    if (now >= deadline) break;
    uint64_t sleep_ns = deadline - now < pause_ns ? deadline - now : pause_ns;
    struct timespec timeout = {.tv_sec = (time_t)(sleep_ns / 1000000000u),
                               .tv_nsec = (long)(sleep_ns % 1000000000u)};
    int sig = sigtimedwait(watched, &info, &timeout);
    if (sig > 0 && sig != SIGCHLD) {
      *signal_out = sig;
      result = SERVER_SIGNALLED;
      break;
    }
    if (pause_ns < 50000000u) pause_ns *= 2;
  }
  if (tcp_fd >= 0) close(tcp_fd);
  if (udp_fd >= 0) close(udp_fd);
  return result;
}

/* Prints how a command ended: "exited with status N" or "was killed by signal N (NAME)". */
static void report_end(const char *what, int wstatus) {
  if (WIFEXITED(wstatus))
    fprintf(stderr, ME ": %s exited with status %d", what, WEXITSTATUS(wstatus));
  else
    fprintf(stderr, ME ": %s was killed by signal %d (%s)", what, WTERMSIG(wstatus),
            strsignal(WTERMSIG(wstatus)));
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
  /* '+': stop at the first non-option, so the client command keeps its own options; ':' and
   * opterr 0: our own messages, in the one style. */
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "+:p:s:qh", options, NULL)) != -1) {
    switch (opt) {
    case 'p':
      if (netem_config_profile(config, optarg) != 0)
        return cli_option_error(ME, "profile", optarg, "one of %s", netem_profile_names());
      break;
    case OPT_DOWN:
      if (parse_rate(optarg, &config->down.rate_bps) != 0)
        return cli_option_error(ME, "down", optarg, "%s", RATE_ACCEPTED);
      snprintf(config->profile, sizeof config->profile, "custom");
      break;
    case OPT_UP:
      if (parse_rate(optarg, &config->up.rate_bps) != 0)
        return cli_option_error(ME, "up", optarg, "%s", RATE_ACCEPTED);
      snprintf(config->profile, sizeof config->profile, "custom");
      break;
    case OPT_RTT:
      if (parse_time(optarg, &rtt) != 0)
        return cli_option_error(ME, "rtt", optarg, "%s", TIME_ACCEPTED);
      break;
    case OPT_JITTER:
      if (parse_time(optarg, &jitter) != 0)
        return cli_option_error(ME, "jitter", optarg, "%s", TIME_ACCEPTED);
      break;
    case OPT_REORDER:
      config->reorder = true;
      break;
    case OPT_LOSS: {
      char *end;
      loss = strtod(optarg, &end);
      if (end == optarg || (strcmp(end, "") != 0 && strcmp(end, "%") != 0) ||
          !(loss >= 0 && loss <= 100))
        return cli_option_error(ME, "loss", optarg, "a percentage from 0 to 100");
      break;
    }
    case OPT_BURST: {
      char *end;
      burst = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(burst >= 0 && burst <= 1e6))
        return cli_option_error(ME, "burst", optarg,
                                "a mean burst length from 0 to 1000000 packets");
      break;
    }
    case OPT_LOSS_DIR:
      if (strcmp(optarg, "both") != 0 && strcmp(optarg, "down") != 0 && strcmp(optarg, "up") != 0)
        return cli_option_error(ME, "loss-dir", optarg, "both, down or up");
      loss_dir = optarg;
      break;
    case OPT_QUEUE:
      if (parse_count(optarg, 1u << 30, &queue) != 0 || queue < NETEM_MTU)
        return cli_option_error(ME, "queue", optarg,
                                "bytes from %d to 1073741824, with an optional suffix k or M",
                                NETEM_MTU);
      break;
    case OPT_QUEUE_PACKETS:
      if (parse_count(optarg, 60000, &queue_packets) != 0 || queue_packets < 1)
        return cli_option_error(ME, "queue-packets", optarg, "1 to 60000 packets");
      break;
    case OPT_SERVERS:
      if (parse_count(optarg, NETEM_MAX_SERVER_ADDRS, &value) != 0 || value < 1)
        return cli_option_error(ME, "servers", optarg, "1 to %d", NETEM_MAX_SERVER_ADDRS);
      config->server_addrs = (unsigned)value;
      break;
    case OPT_SEED: {
      /* strtoull takes a sign ("-1" is 2^64 - 1) and leading spaces: a digit first. */
      char *end = optarg;
      errno = 0;
      if (optarg[0] >= '0' && optarg[0] <= '9') config->seed = strtoull(optarg, &end, 0);
      if (optarg[0] < '0' || optarg[0] > '9' || errno != 0 || end == optarg || *end != '\0')
        return cli_option_error(ME, "seed", optarg,
                                "an unsigned number below 2^64, decimal or 0x hexadecimal");
      break;
    }
    case OPT_NO_REALTIME:
      config->realtime = false;
      break;
    case OPT_TCP:
      if (netem_tcp_preset(&config->tcp, optarg) != 0)
        return cli_option_error(ME, "tcp", optarg, "modern or 2009");
      break;
    case OPT_CC:
      if (strlen(optarg) == 0 || strlen(optarg) >= sizeof config->tcp.congestion_control)
        return cli_option_error(ME, "cc", optarg,
                                "a congestion control name of 1 to %zu characters",
                                sizeof config->tcp.congestion_control - 1);
      cc = optarg;
      break;
    case OPT_INITCWND:
      if (parse_count(optarg, 1000, &value) != 0 || value < 1)
        return cli_option_error(ME, "initcwnd", optarg, "1 to 1000 packets");
      initcwnd = (int)value;
      break;
    case OPT_SSAI:
      if (strcmp(optarg, "0") != 0 && strcmp(optarg, "1") != 0)
        return cli_option_error(ME, "slow-start-after-idle", optarg, "0 or 1");
      ssai = optarg[0] - '0';
      break;
    case 's':
      run->server_cmd = optarg;
      break;
    case OPT_SERVER_WAIT: {
      char *end;
      run->server_wait = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(run->server_wait >= 0 && run->server_wait <= 600))
        return cli_option_error(ME, "server-wait", optarg, "seconds from 0 to 600");
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
    case ':':
      return cli_usage_error(ME, "option '%s' needs a value", argv[optind - 1]);
    default:
      if (strncmp(argv[optind - 1], "--", 2) == 0 || optopt <= 0 || optopt >= 256)
        return cli_usage_error(ME, "unknown option '%s'", argv[optind - 1]);
      return cli_usage_error(ME, "unknown option '-%c'", optopt);
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
    int sig = 0;
    switch (client_argv != NULL ? wait_for_listener(link, server, run.server_wait, &watched, &sig)
                                : SERVER_LISTENS) {
    case SERVER_LISTENS:
      break;
    case SERVER_SLOW:
      if (!run.quiet)
        fprintf(stderr, ME ": the server has not opened a socket after %.1f s; going on\n",
                run.server_wait);
      break;
    case SERVER_EXITED: {
      /* A client would only fail against it, and hide why. */
      int wstatus = 0;
      waitpid(server, &wstatus, 0);
      server = -1;
      report_end("the server command", wstatus);
      fprintf(stderr, " before it opened a socket; the client was not run\n");
      exit_status = 1;
      goto done;
    }
    case SERVER_SIGNALLED:
      fprintf(stderr, ME ": %s: stopping the link\n", strsignal(sig));
      exit_status = 1;
      goto done;
    }
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
    int wstatus;
    /* A server that ends by itself is told (its exit status says why); the link stays. */
    if (server > 0 && waitpid(server, &wstatus, WNOHANG) == server) {
      server = -1;
      report_end("the server command", wstatus);
      fputc('\n', stderr);
    }
    if (client > 0 && waitpid(client, &wstatus, WNOHANG) == client) {
      if (WIFEXITED(wstatus)) {
        exit_status = WEXITSTATUS(wstatus);
      } else {
        report_end(client_argv[0], wstatus);
        fputc('\n', stderr);
        exit_status = 1;
      }
      break;
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
