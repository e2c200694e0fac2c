/* bench_main.c — `speedy bench URL...`: options and --help, the URLs (one origin), the
 * address (--resolve), the split of connections, requests and rate over -t threads (each
 * with its own uv loop and connections, bench_run.c), the merged result, its report and
 * the exit status (0 every request answered and verified, 1 any error, 2 bad usage).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "bench_int.h"
#include "cli.h"
#include "io_session.h"

#define BENCH_PROGRAM "speedy bench"

#define DEFAULT_REQUESTS 1000
#define MAX_REQUESTS (UINT64_C(1) << 40)
#define DEFAULT_MAX_TIME_N 600.0 /* seconds, with -n */
#define DEFAULT_STREAM_WINDOW (16u << 20)
#define DEFAULT_SESSION_WINDOW (64u << 20)
/* Our requests repeat: level 1 compresses them nearly as well as 6 for less of the CPU the
 * server under test shares with us (the server's inflating does not depend on it). */
#define DEFAULT_HEADER_COMPRESSION 1

static void usage(FILE *f) {
  fprintf(
      f,
      "Usage: speedy bench [OPTION]... URL...\n"
      "Load an HTTP/2, SPDY or HTTP/1.1 server and report throughput, latency and errors\n"
      "(with the figures h2load reports: requests, traffic, header bytes). URLs\n"
      "must share one origin; requests go to them in turn. Every response is verified:\n"
      "status 2xx, body size equal to Content-Length and to the URL's first response,\n"
      "and, on a sample, the content (a hash of the first response).\n\n"
      "Load:\n"
      "  -c, --connections N   connections (default 1, max %d)\n"
      "  -m, --streams N       concurrent streams per connection (HTTP/2, SPDY), or pipelining\n"
      "                        depth (HTTP/1.1) (default 1, max %d)\n"
      "  -n, --requests N      measured requests in all (default %d; with -c, an equal\n"
      "                        share per connection)\n"
      "  -D, --duration S      run for S seconds instead of -n\n"
      "  -t, --threads N       threads, each with its own loop and connections (default 1)\n"
      "      --rate R          open loop: send R requests/s in all at constant arrival\n"
      "                        times; latency counts from each request's due time\n"
      "                        (default: closed loop)\n"
      "      --warmup S        send for S seconds before measuring (default 0)\n"
      "      --max-time S      hard limit of the whole run (default %.0f with -n, the\n"
      "                        duration + warm-up + 30 with -D)\n"
      "Protocol:\n"
      "      --proto PROTO     h2, h2c (HTTP/2 with prior knowledge on http://), spdy/3.1,\n"
      "                        spdy/3, spdy/2 or http/1.1; over TLS only PROTO is offered\n"
      "                        (default: offer h2, spdy/3.1, spdy/3, spdy/2, http/1.1 by\n"
      "                        ALPN and speak what the server chose; SPDY/3.1 on http://)\n"
      "      --spdy=VERSION    the same as --proto spdy/VERSION: 3.1, 3 or 2\n"
      "      --http1           the same as --proto http/1.1 (keep-alive, -m pipelining)\n"
      "      --npn             TLS: offer the protocol by NPN only (caps TLS at 1.2)\n"
      "      --window BYTES    SPDY/3+ stream receive window (default %u)\n"
      "      --session-window BYTES  SPDY/3.1 session receive window (default %u)\n"
      "      --header-compression LEVEL  zlib level of our SPDY request headers, 0-9\n"
      "                        (default %d: cheap for the load generator)\n"
      "TLS and network:\n"
      "  -k, --insecure        do not verify the server's certificate or host name\n"
      "      --cacert FILE     trust the CA certificates in FILE (default: system store)\n"
      "      --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT\n"
      "      --connect-timeout S  connect + TLS handshake limit (default 10)\n"
      "      --read-size BYTES  most bytes per read(2), 1024 to %u (default %u: the\n"
      "                        fewest reads; h2load reads 8192)\n"
      "Verification and output:\n"
      "      --verify-every N  hash every Nth body against the first (default 100; 0:\n"
      "                        sizes only)\n"
      "      --json            print the result as one JSON object\n"
      "  -q, --quiet           no progress and no connection messages on stderr\n"
      "      --hold S          keep the connections open and idle S seconds after the\n"
      "                        last response (to measure a server's memory per\n"
      "                        connection) (default 0)\n"
      "      --ready-file FILE write FILE once every connection is idle in --hold\n"
      "  -h, --help            this help\n"
      "  -V, --version         print the version\n\n"
      "Exit status: 0 every request answered and verified, 1 any error (each kind\n"
      "counted), 2 bad usage.\n",
      BENCH_MAX_CONNECTIONS, BENCH_MAX_STREAMS, DEFAULT_REQUESTS, DEFAULT_MAX_TIME_N,
      DEFAULT_STREAM_WINDOW, DEFAULT_SESSION_WINDOW, DEFAULT_HEADER_COMPRESSION, IO_READ_MAX,
      IO_READ_MAX);
}

static int parse_seconds(const char *s, double min, double max, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end != '\0' || !isfinite(v) || v < min || v > max) return -1;
  *out = v;
  return 0;
}

/* ---- URLs -------------------------------------------------------------------------- */

/* Splits scheme://host[:port]/path into opt (first URL) or checks it has the same origin.
 * Returns 0 or -1 with a reason in err. */
static int parse_url(bench_options *opt, const char *url, char *err, size_t err_len) {
  const char *p;
  char scheme[8];
  int port;
  if (strncmp(url, "https://", 8) == 0) {
    snprintf(scheme, sizeof(scheme), "https");
    port = 443;
    p = url + 8;
  } else if (strncmp(url, "http://", 7) == 0) {
    snprintf(scheme, sizeof(scheme), "http");
    port = 80;
    p = url + 7;
  } else {
    snprintf(err, err_len, "only http:// and https:// URLs are supported");
    return -1;
  }
  size_t auth_len = strcspn(p, "/?#");
  char authority[300], host[256];
  if (auth_len == 0 || auth_len >= sizeof(authority) || memchr(p, '@', auth_len)) {
    snprintf(err, err_len, "bad host");
    return -1;
  }
  memcpy(authority, p, auth_len);
  authority[auth_len] = '\0';
  const char *port_str = NULL;
  size_t host_len;
  const char *host_start = authority;
  if (authority[0] == '[') {
    const char *close = strchr(authority, ']');
    if (!close || (close[1] != '\0' && close[1] != ':')) {
      snprintf(err, err_len, "bad [IPv6] host");
      return -1;
    }
    host_start = authority + 1;
    host_len = (size_t)(close - host_start);
    if (close[1] == ':') port_str = close + 2;
  } else {
    const char *colon = strchr(authority, ':');
    host_len = colon ? (size_t)(colon - authority) : auth_len;
    if (colon) port_str = colon + 1;
  }
  if (host_len == 0 || host_len >= sizeof(host)) {
    snprintf(err, err_len, "bad host");
    return -1;
  }
  for (size_t i = 0; i < host_len; i++) host[i] = (char)tolower((unsigned char)host_start[i]);
  host[host_len] = '\0';
  for (size_t i = 0; i < auth_len; i++)
    if ((unsigned char)authority[i] <= 0x20 || (unsigned char)authority[i] >= 0x7f) {
      snprintf(err, err_len, "bad character in host");
      return -1;
    }
  if (port_str) {
    uint64_t v;
    if (cli_parse_u64(port_str, 1, 65535, &v) != 0) {
      snprintf(err, err_len, "bad port");
      return -1;
    }
    port = (int)v;
  }
  const char *rest = p + auth_len;
  size_t rest_len = strcspn(rest, "#");
  char *path = malloc(rest_len + 2);
  if (!path) {
    snprintf(err, err_len, "out of memory");
    return -1;
  }
  size_t off = rest_len == 0 || rest[0] != '/' ? 1 : 0;
  path[0] = '/';
  memcpy(path + off, rest, rest_len);
  path[off + rest_len] = '\0';
  for (const char *c = path; *c; c++)
    if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f) {
      free(path);
      snprintf(err, err_len, "spaces and control characters must be percent-encoded");
      return -1;
    }
  if (opt->n_paths == 0) {
    snprintf(opt->scheme, sizeof(opt->scheme), "%s", scheme);
    snprintf(opt->host, sizeof(opt->host), "%s", host);
    snprintf(opt->authority, sizeof(opt->authority), "%s", authority);
    opt->port = port;
    opt->tls = strcmp(scheme, "https") == 0;
  } else if (strcmp(opt->scheme, scheme) != 0 || strcmp(opt->host, host) != 0 ||
             opt->port != port) {
    free(path);
    snprintf(err, err_len, "every URL must have the origin of the first");
    return -1;
  }
  opt->paths[opt->n_paths++] = path;
  return 0;
}

static int parse_resolve(bench_options *opt, const char *arg) {
  const char *c1 = strchr(arg, ':');
  if (!c1 || c1 == arg || (size_t)(c1 - arg) >= sizeof(opt->resolve_host)) return -1;
  const char *c2 = strchr(c1 + 1, ':');
  if (!c2) return -1;
  size_t host_len = (size_t)(c1 - arg);
  for (size_t i = 0; i < host_len; i++) opt->resolve_host[i] = (char)tolower((unsigned char)arg[i]);
  opt->resolve_host[host_len] = '\0';
  char port[8];
  size_t port_len = (size_t)(c2 - c1 - 1);
  uint64_t v;
  if (port_len == 0 || port_len >= sizeof(port)) return -1;
  memcpy(port, c1 + 1, port_len);
  port[port_len] = '\0';
  if (cli_parse_u64(port, 1, 65535, &v) != 0) return -1;
  opt->resolve_port = (int)v;
  const char *addr = c2 + 1;
  size_t n = strlen(addr);
  if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
    addr++;
    n -= 2;
  }
  if (n == 0 || n >= sizeof(opt->resolve_addr)) return -1;
  memcpy(opt->resolve_addr, addr, n);
  opt->resolve_addr[n] = '\0';
  struct sockaddr_in6 probe;
  if (uv_ip4_addr(opt->resolve_addr, 1, (struct sockaddr_in *)&probe) != 0 &&
      uv_ip6_addr(opt->resolve_addr, 1, &probe) != 0)
    return -1;
  return 0;
}

static int resolve_address(bench_options *opt) {
  const char *name = opt->host;
  if (opt->resolve_host[0] && opt->resolve_port == opt->port &&
      strcmp(opt->resolve_host, opt->host) == 0)
    name = opt->resolve_addr;
  memset(&opt->addr, 0, sizeof(opt->addr));
  if (uv_ip4_addr(name, opt->port, (struct sockaddr_in *)&opt->addr) == 0) return 0;
  if (uv_ip6_addr(name, opt->port, (struct sockaddr_in6 *)&opt->addr) == 0) return 0;
  struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC};
  struct addrinfo *res = NULL;
  int rv = getaddrinfo(name, NULL, &hints, &res);
  if (rv != 0 || !res) {
    fprintf(stderr, "speedy bench: cannot resolve %s: %s\n", name, gai_strerror(rv));
    return -1;
  }
  memcpy(&opt->addr, res->ai_addr, res->ai_addrlen);
  if (opt->addr.ss_family == AF_INET6)
    ((struct sockaddr_in6 *)&opt->addr)->sin6_port = htons((uint16_t)opt->port);
  else
    ((struct sockaddr_in *)&opt->addr)->sin_port = htons((uint16_t)opt->port);
  freeaddrinfo(res);
  return 0;
}

/* ---- Options ----------------------------------------------------------------------- */

enum {
  OPT_SPDY = 256,
  OPT_PROTO,
  OPT_HTTP1,
  OPT_NPN,
  OPT_WINDOW,
  OPT_SESSION_WINDOW,
  OPT_HEADER_COMPRESSION,
  OPT_CACERT,
  OPT_RESOLVE,
  OPT_CONNECT_TIMEOUT,
  OPT_READ_SIZE,
  OPT_RATE,
  OPT_WARMUP,
  OPT_MAX_TIME,
  OPT_VERIFY_EVERY,
  OPT_JSON,
  OPT_HOLD,
  OPT_READY_FILE
};

static const struct option long_options[] = {
    {"connections", required_argument, NULL, 'c'},
    {"streams", required_argument, NULL, 'm'},
    {"requests", required_argument, NULL, 'n'},
    {"duration", required_argument, NULL, 'D'},
    {"threads", required_argument, NULL, 't'},
    {"rate", required_argument, NULL, OPT_RATE},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"proto", required_argument, NULL, OPT_PROTO},
    {"spdy", required_argument, NULL, OPT_SPDY},
    {"http1", no_argument, NULL, OPT_HTTP1},
    {"npn", no_argument, NULL, OPT_NPN},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"session-window", required_argument, NULL, OPT_SESSION_WINDOW},
    {"header-compression", required_argument, NULL, OPT_HEADER_COMPRESSION},
    {"insecure", no_argument, NULL, 'k'},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"resolve", required_argument, NULL, OPT_RESOLVE},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"read-size", required_argument, NULL, OPT_READ_SIZE},
    {"verify-every", required_argument, NULL, OPT_VERIFY_EVERY},
    {"json", no_argument, NULL, OPT_JSON},
    {"quiet", no_argument, NULL, 'q'},
    {"hold", required_argument, NULL, OPT_HOLD},
    {"ready-file", required_argument, NULL, OPT_READY_FILE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* Returns 0, 2 for a usage error, or -1 for --help / --version (exit 0). */
static int parse_options(bench_options *opt, int argc, char **argv) {
  int c, have_n = 0, have_max_time = 0;
  uint64_t v;
  double d;
  optind = 1;
  opterr = 0; /* our own one-line messages below */
  while ((c = getopt_long(argc, argv, ":c:m:n:D:t:kqhV", long_options, NULL)) != -1) {
    switch (c) {
    case 'c':
      if (cli_parse_u64(optarg, 1, BENCH_MAX_CONNECTIONS, &v))
        return cli_option_error(BENCH_PROGRAM, "connections", optarg, "1 to %d",
                                BENCH_MAX_CONNECTIONS);
      opt->connections = (int)v;
      break;
    case 'm':
      if (cli_parse_u64(optarg, 1, BENCH_MAX_STREAMS, &v))
        return cli_option_error(BENCH_PROGRAM, "streams", optarg, "1 to %d", BENCH_MAX_STREAMS);
      opt->streams = (int)v;
      break;
    case 'n':
      if (cli_parse_u64(optarg, 1, MAX_REQUESTS, &v))
        return cli_option_error(BENCH_PROGRAM, "requests", optarg, "1 to %llu",
                                (unsigned long long)MAX_REQUESTS);
      opt->requests = v;
      have_n = 1;
      break;
    case 'D':
      if (parse_seconds(optarg, 0.001, 86400, &opt->duration_s))
        return cli_option_error(BENCH_PROGRAM, "duration", optarg, "seconds, 0.001 to 86400");
      break;
    case 't':
      if (cli_parse_u64(optarg, 1, BENCH_MAX_THREADS, &v))
        return cli_option_error(BENCH_PROGRAM, "threads", optarg, "1 to %d", BENCH_MAX_THREADS);
      opt->threads = (int)v;
      break;
    case OPT_RATE:
      if (parse_seconds(optarg, 0.001, 1e8, &opt->rate))
        return cli_option_error(BENCH_PROGRAM, "rate", optarg,
                                "requests per second, 0.001 to 100000000");
      break;
    case OPT_WARMUP:
      if (parse_seconds(optarg, 0, 3600, &opt->warmup_s))
        return cli_option_error(BENCH_PROGRAM, "warmup", optarg, "seconds, 0 to 3600");
      break;
    case OPT_MAX_TIME:
      if (parse_seconds(optarg, 0.001, 86400, &opt->max_time_s))
        return cli_option_error(BENCH_PROGRAM, "max-time", optarg, "seconds, 0.001 to 86400");
      have_max_time = 1;
      break;
    case OPT_SPDY: {
      speedy_protocol protocol;
      if (cli_parse_spdy_version(optarg, &protocol) != 0)
        return cli_option_error(BENCH_PROGRAM, "spdy", optarg, "3.1, 3 or 2");
      opt->proto = io_proto_of_session(protocol);
    } break;
    case OPT_PROTO: {
      speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
      int http1 = 0;
      if (cli_parse_proto(optarg, &protocol, &http1) != 0)
        return cli_option_error(BENCH_PROGRAM, "proto", optarg, CLI_PROTO_VALUES);
      opt->http1 = http1;
      opt->proto = http1 ? IO_PROTO_UNKNOWN : io_proto_of_session(protocol);
    } break;
    case OPT_HTTP1:
      opt->http1 = 1;
      break;
    case OPT_NPN:
      opt->npn = 1;
      break;
    case OPT_WINDOW:
      if (cli_parse_u64(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(BENCH_PROGRAM, "window", optarg, "bytes, 65536 to 2147483647");
      opt->stream_window = (uint32_t)v;
      break;
    case OPT_READ_SIZE:
      if (cli_parse_u64(optarg, 1024, IO_READ_MAX, &v))
        return cli_option_error(BENCH_PROGRAM, "read-size", optarg, "bytes, 1024 to 262144");
      opt->read_size = (uint32_t)v;
      break;
    case OPT_SESSION_WINDOW:
      if (cli_parse_u64(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(BENCH_PROGRAM, "session-window", optarg,
                                "bytes, 65536 to 2147483647");
      opt->session_window = (uint32_t)v;
      break;
    case OPT_HEADER_COMPRESSION:
      if (cli_parse_u64(optarg, 0, 9, &v))
        return cli_option_error(BENCH_PROGRAM, "header-compression", optarg,
                                "a zlib level, 0 to 9");
      opt->header_compression = (int)v;
      break;
    case 'k':
      opt->insecure = 1;
      break;
    case OPT_CACERT:
      opt->cacert = optarg;
      break;
    case OPT_RESOLVE:
      if (parse_resolve(opt, optarg))
        return cli_option_error(BENCH_PROGRAM, "resolve", optarg,
                                "HOST:PORT:ADDR with an IP address");
      break;
    case OPT_CONNECT_TIMEOUT:
      if (parse_seconds(optarg, 0.001, 3600, &d))
        return cli_option_error(BENCH_PROGRAM, "connect-timeout", optarg, "seconds, 0.001 to 3600");
      opt->connect_timeout_ms = (uint32_t)(d * 1000);
      break;
    case OPT_VERIFY_EVERY:
      if (cli_parse_u64(optarg, 0, 1u << 30, &v))
        return cli_option_error(BENCH_PROGRAM, "verify-every", optarg, "0 to %u", 1u << 30);
      opt->verify_every = (uint32_t)v;
      break;
    case OPT_JSON:
      opt->json = 1;
      break;
    case 'q':
      opt->quiet = 1;
      break;
    case OPT_HOLD:
      if (parse_seconds(optarg, 0, 86400, &opt->hold_s))
        return cli_option_error(BENCH_PROGRAM, "hold", optarg, "seconds, 0 to 86400");
      break;
    case OPT_READY_FILE:
      opt->ready_file = optarg;
      break;
    case 'h':
      usage(stdout);
      return -1;
    case 'V':
      printf("speedy bench %s (libspeedy %s)\n", SPEEDY_BENCH_VERSION, speedy_version());
      return -1;
    case ':':
      return cli_usage_error(BENCH_PROGRAM, "option '%s' needs a value", argv[optind - 1]);
    default:
      if (optopt > 0 && optopt < 256)
        return cli_usage_error(BENCH_PROGRAM, "unknown option '-%c'", optopt);
      return cli_usage_error(BENCH_PROGRAM, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind >= argc) return cli_usage_error(BENCH_PROGRAM, "%s", "no URL given");
  if (argc - optind > BENCH_MAX_PATHS)
    return cli_usage_error(BENCH_PROGRAM, "at most %d URLs", BENCH_MAX_PATHS);
  if (have_n && opt->duration_s > 0)
    return cli_usage_error(BENCH_PROGRAM, "%s", "-n and -D exclude each other");
  if (opt->http1 && opt->proto)
    return cli_usage_error(BENCH_PROGRAM, "%s", "--http1 and --spdy exclude each other");
  if (opt->threads > opt->connections)
    return cli_usage_error(BENCH_PROGRAM, "-t %d needs at least as many connections (-c)",
                           opt->threads);
  if (opt->duration_s == 0 && !have_n) opt->requests = DEFAULT_REQUESTS;
  if (!have_max_time)
    opt->max_time_s =
        opt->duration_s > 0 ? opt->duration_s + opt->warmup_s + 30 : DEFAULT_MAX_TIME_N;
  for (int i = optind; i < argc; i++) {
    char err[200];
    if (parse_url(opt, argv[i], err, sizeof(err)) != 0)
      return cli_usage_error(BENCH_PROGRAM, "bad URL '%s': %s", argv[i], err);
  }
  return 0;
}

/* ---- The run ----------------------------------------------------------------------- */

static void *thread_main(void *arg) {
  bench_thread_run(arg);
  return NULL;
}

/* Enough descriptors for -c connections (plus a margin), up to the hard limit. */
static void raise_fd_limit(int connections) {
  struct rlimit rl;
  rlim_t want = (rlim_t)connections + 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
  rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want)
    fprintf(stderr, "speedy bench: only %llu file descriptors allowed for %d connections\n",
            (unsigned long long)rl.rlim_cur, connections);
}

static void merge_stats(bench_stats *into, const bench_stats *from, int first) {
  bench_hist_merge(&into->latency, &from->latency);
  bench_hist_merge(&into->ttfb, &from->ttfb);
  bench_hist_merge(&into->connect, &from->connect);
  bench_hist_merge(&into->send_lag, &from->send_lag);
  into->ok += from->ok;
  into->failed += from->failed;
  for (int i = 0; i < BENCH_ERR_COUNT; i++) into->errors[i] += from->errors[i];
  for (int i = 0; i < 6; i++) into->status_classes[i] += from->status_classes[i];
  into->measured_ok += from->measured_ok;
  into->measured_failed += from->measured_failed;
  into->body_bytes += from->body_bytes;
  into->window_ok += from->window_ok;
  into->window_body_bytes += from->window_body_bytes;
  into->wire_bytes_in += from->wire_bytes_in;
  into->header_bytes_in += from->header_bytes_in;
  into->header_bytes_decoded += from->header_bytes_decoded;
  into->data_bytes_in += from->data_bytes_in;
  into->warmup_requests += from->warmup_requests;
  into->reconnects += from->reconnects;
  into->retried += from->retried;
  into->connections_opened += from->connections_opened;
  if (from->t_measure && (first || from->t_measure < into->t_measure))
    into->t_measure = from->t_measure;
  if (from->t_last_done > into->t_last_done) into->t_last_done = from->t_last_done;
  if (from->sends && (!into->sends || from->t_first_send < into->t_first_send))
    into->t_first_send = from->t_first_send;
  if (from->t_last_send > into->t_last_send) into->t_last_send = from->t_last_send;
  into->sends += from->sends;
  into->unsent_due += from->unsent_due;
  if (!into->proto && from->proto) {
    into->proto = from->proto;
    into->how = from->how;
    into->tls_version = from->tls_version;
  }
  /* The first response of a URL must be the same on every thread. */
  for (int i = 0; i < BENCH_MAX_PATHS; i++) {
    const bench_reference *a = &into->refs[i], *b = &from->refs[i];
    if (!b->have) continue;
    if (!a->have)
      into->refs[i] = *b;
    else if (a->size != b->size)
      into->errors[BENCH_ERR_SIZE]++;
    else if (a->have_hash && b->have_hash && a->hash != b->hash)
      into->errors[BENCH_ERR_CONTENT]++;
  }
}

static int run(bench_options *opt) {
  int n = opt->threads;
  bench_stats *stats = calloc((size_t)n + 1, sizeof(*stats));
  bench_thread_args *args = calloc((size_t)n, sizeof(*args));
  pthread_t *ids = calloc((size_t)n, sizeof(*ids));
  bench_shared *shared = bench_shared_new(n);
  int status = 1;
  if (!stats || !args || !ids || !shared) {
    fprintf(stderr, "speedy bench: out of memory\n");
    goto out;
  }
  raise_fd_limit(opt->connections);
  int64_t t0 = bench_now_ns();
  for (int i = 0; i < n; i++) {
    bench_stats *st = &stats[i + 1];
    bench_hist_init(&st->latency);
    bench_hist_init(&st->ttfb);
    bench_hist_init(&st->connect);
    bench_hist_init(&st->send_lag);
    args[i] = (bench_thread_args){.opt = opt,
                                  .shared = shared,
                                  .index = i,
                                  .connections = opt->connections / n + (i < opt->connections % n),
                                  .requests = opt->requests / (uint64_t)n +
                                              ((uint64_t)i < opt->requests % (uint64_t)n),
                                  .rate = opt->rate / n,
                                  .stats = st,
                                  .status = 1};
  }
  int started = 0;
  for (; started < n - 1; started++)
    if (pthread_create(&ids[started + 1], NULL, thread_main, &args[started + 1]) != 0) break;
  bench_thread_run(&args[0]);
  for (int i = 0; i < started; i++) pthread_join(ids[i + 1], NULL);
  double wall_s = (double)(bench_now_ns() - t0) / 1e9;
  bench_stats *total = &stats[0];
  bench_hist_init(&total->latency);
  bench_hist_init(&total->ttfb);
  bench_hist_init(&total->connect);
  bench_hist_init(&total->send_lag);
  for (int i = 0; i < n; i++) {
    if (i > started || args[i].status != 0) {
      fprintf(stderr, "speedy bench: thread %d could not run\n", i);
      goto out;
    }
    merge_stats(total, &stats[i + 1], i == 0);
  }
  if (opt->json)
    bench_report_json(opt, total, wall_s);
  else
    bench_report_text(opt, total, wall_s);
  fflush(stdout);
  status =
      bench_errors_total(total) == 0 && (opt->requests == 0 || total->measured_ok == opt->requests)
          ? 0
          : 1;
out:
  bench_shared_del(shared);
  free(ids);
  free(args);
  free(stats);
  return status;
}

/* A load generator frees and takes back the same buffers all the time: glibc's default of
 * returning memory above 128 KiB to the kernel at once (munmap, heap trimming) made
 * page faults and TLB flushes a sizeable part of an HTTP/1.1 run's CPU. Keep it. */
static void keep_freed_memory(void) {
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int bench_main(int argc, char **argv) {
  keep_freed_memory();
  bench_options opt = {.connections = 1,
                       .streams = 1,
                       .threads = 1,
                       .connect_timeout_ms = 10000,
                       .stream_window = DEFAULT_STREAM_WINDOW,
                       .session_window = DEFAULT_SESSION_WINDOW,
                       .header_compression = DEFAULT_HEADER_COMPRESSION,
                       .read_size = IO_READ_MAX,
                       .verify_every = 100};
  int status = parse_options(&opt, argc, argv);
  if (status == 0) status = resolve_address(&opt) == 0 ? run(&opt) : 1;
  for (int i = 0; i < opt.n_paths; i++) free(opt.paths[i]);
  return status < 0 ? 0 : status;
}
