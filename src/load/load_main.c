/* load_main.c — `speedy load PLAN [options]`: options, the address of every recorded host
 * (never resolved: --host-addr, --addr-base or --single), the run, the invariant check,
 * the HAR and the result line, and the exit status.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "io_session.h"
#include "load.h"
#include "load_browser.h"
#include "load_int.h"

#define LOAD_PROGRAM "speedy load"

#define DEFAULT_CONNECTIONS 6
#define DEFAULT_PIPELINE_DEPTH 4
#define DEFAULT_STREAM_WINDOW (2u << 20)
#define DEFAULT_SESSION_WINDOW (10u << 20)
#define DEFAULT_TIMEOUT_S 120
#define MAX_HOST_ADDR_OPTIONS LOAD_PLAN_MAX_HOSTS

static void usage(FILE *f) {
  fprintf(f,
          "Usage: speedy load PLAN [OPTION]...\n"
          "Load the page of a lab page plan (speedy-lab-plan/1) like a browser and append\n"
          "one result line (speedy-lab-result/1). Recorded host names are never resolved.\n\n"
          "Where the hosts are (one of):\n"
          "      --host-addr I=ADDR:PORT  host I of the plan is at ADDR:PORT (repeatable; every\n"
          "                           host needs one)\n"
          "      --addr-base IPV4     host I is at IPV4 + I (198.19.0.1: the lab's convention)\n"
          "      --port P             port for --addr-base (default: the host's recorded port)\n"
          "      --single ADDR:PORT   single-domain: every host over this one origin\n"
          "      --coalesce           SPDY and HTTP/2: hosts at the same ADDR:PORT share one\n"
          "                           connection when its certificate names them (as browsers\n"
          "                           coalesce); without it, one connection per host\n"
          "      --dns-rtt MS         emulated DNS: wait MS ms (a lookup) before the first\n"
          "                           connection to each host name, 0 to %d (default 0: none;\n"
          "                           single-domain: only the origin's name)\n"
          "Protocol:\n"
          "      --proto PROTO        h2, h2c (the same: HTTP/2, with prior knowledge without\n"
          "                           --tls), spdy/3.1, spdy/3, spdy/2 or http/1.1; the only\n"
          "                           protocol offered over TLS (default spdy/3.1)\n"
          "      --http1              the same as --proto http/1.1\n"
          "      --spdy VERSION       the same as --proto spdy/VERSION: 3.1, 3 or 2\n"
          "      --connections N      HTTP/1.1 connections per host (default %d, max %d)\n"
          "      --dispatch POLICY    HTTP/1.1 order: fcfs (discovery order, default) or priority\n"
          "                           (document > css, script > font > image > other)\n"
          "      --delayable-limit N  at most N low-priority requests (images, scripts) in\n"
          "                           flight at once across hosts not known to take priorities\n"
          "                           (HTTP/1.1; SPDY, HTTP/2 until a session is open), the\n"
          "                           rest queued as Chromium holds them (there 10; 1 to 1000;\n"
          "                           default: no limit)\n"
          "      --boost-images       with --delayable-limit: the page's image elements are no\n"
          "                           longer held once its parser has reached them (the style\n"
          "                           sheets before them loaded), and the page's style\n"
          "                           sheets' background images on its first screen, as\n"
          "                           Chromium raises the priority of the images it lays out\n"
          "      --blocking-css       a style sheet holds its document's parser until it has\n"
          "                           loaded, as in Chromium: the frames and inline fetch()es\n"
          "                           after it, and the images and fonts style sheets name,\n"
          "                           wait for it (default: found with the bytes)\n"
          "      --load-event         the page load time ends where Chromium's load event\n"
          "                           would: fetch()es and preloads as fetch do not count\n"
          "                           (last_byte_ms still gives the last byte of all)\n"
          "      --document-delay MS  a document's references are asked for no earlier than\n"
          "                           MS ms after its first byte, as Chromium commits a\n"
          "                           navigation and starts its parser first (there about\n"
          "                           20; 0 to 10000; default 0)\n"
          "      --frame-delay MS     a frame is asked for MS ms later than another reference\n"
          "                           found at the same time, as Chromium starts a frame's\n"
          "                           navigation in its browser process (there about 15; 0\n"
          "                           to 10000; default 0)\n"
          "      --request-spacing MS each request found is asked for no earlier than MS ms\n"
          "                           after the one before it, as Chromium creates those found\n"
          "                           together about one a millisecond (0 to 1000; default 0)\n"
          "      --jitter MS          each request found waits a further 0 to MS ms, drawn\n"
          "                           afresh for each --repetition, as a browser's timing\n"
          "                           varies between loads (0 to 1000; default 0)\n"
          "      --pipeline           HTTP/1.1 pipelining, up to --pipeline-depth per connection\n"
          "      --pipeline-depth N   requests in flight per connection (default %d, max %d)\n"
          "      --window BYTES       SPDY/3+ stream receive window (default %u)\n"
          "      --session-window BYTES  SPDY/3.1 session receive window (default %u)\n"
          "TLS:\n"
          "      --tls                use TLS (SNI and verification: the recorded host name)\n"
          "      --cacert FILE        trust the CA certificates in FILE\n"
          "  -k, --insecure           do not verify certificates\n"
          "      --npn                offer the protocol by NPN only, not ALPN (caps TLS at 1.2;\n"
          "                           for servers that speak SPDY only over NPN)\n"
          "      --hello-padding BYTES  add BYTES (4 to %u) to every ClientHello, in an extension\n"
          "                           servers ignore: a browser's first flight with a\n"
          "                           post-quantum key share is about 2 KB, ours about 300 B\n"
          "Sockets:\n"
          "      --chromium-sockets   open sockets as Chromium does: two to the page's host at\n"
          "                           the start, a backup attempt 250 ms into a slow one while\n"
          "                           requests wait, and (SPDY, HTTP/2) an attempt per waiting\n"
          "                           request until the server is known to speak the protocol,\n"
          "                           the rest given up when the first opens; requests of a\n"
          "                           frame of another site apart from the page's (network\n"
          "                           partitions: a host can have two groups of sockets),\n"
          "                           and an idle one to each such frame's host (its\n"
          "                           preconnect, in another privacy mode)\n"
          "Requests:\n"
          "      --chromium-headers   send the request headers headless Chromium sends for each\n"
          "                           request in the lab (client hints, Sec-Fetch-*, Referer,\n"
          "                           no-cache, no cookies) instead of the recorded ones\n"
          "Output:\n"
          "      --result FILE        append the result line to FILE (default: stdout)\n"
          "      --har-out FILE       write a HAR 1.2 of the replayed load\n"
          "      --repetition N       repetition number recorded in the result (default 1)\n"
          "      --timeout S          limit for the whole load (default %d)\n"
          "      --strict             exit 1 when the load is invalid\n"
          "  -v, --verbose            every request, push and hint on stderr\n"
          "  -h, --help               this help\n"
          "  -V, --version            print the version\n\n"
          "Exit status: 0 the load ran (valid or not, unless --strict), 1 it could not run or\n"
          "was invalid with --strict, 2 bad usage.\n",
          LOAD_MAX_DNS_RTT_MS, DEFAULT_CONNECTIONS, LOAD_MAX_CONNS, DEFAULT_PIPELINE_DEPTH,
          LOAD_MAX_PIPELINE, DEFAULT_STREAM_WINDOW, DEFAULT_SESSION_WINDOW, IO_TLS_HELLO_PAD_MAX,
          DEFAULT_TIMEOUT_S);
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out) {
  uint64_t value;
  if (cli_parse_u64(s, min, max, &value) != 0) return -1;
  *out = (unsigned long)value;
  return 0;
}

/* "1.2.3.4:80" or "[::1]:80" → addr. Returns 0 or -1. */
static int parse_addr_port(const char *s, struct sockaddr_storage *out) {
  char host[64];
  const char *port_str;
  if (s[0] == '[') {
    const char *close = strchr(s, ']');
    if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host)) return -1;
    memcpy(host, s + 1, (size_t)(close - s - 1));
    host[close - s - 1] = '\0';
    port_str = close + 2;
  } else {
    const char *colon = strrchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof(host)) return -1;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    port_str = colon + 1;
  }
  unsigned long port;
  if (parse_uint(port_str, 1, 65535, &port)) return -1;
  memset(out, 0, sizeof(*out));
  if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)out) == 0) return 0;
  if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)out) == 0) return 0;
  return -1;
}

enum {
  OPT_HOST_ADDR = 256,
  OPT_ADDR_BASE,
  OPT_PORT,
  OPT_SINGLE,
  OPT_DNS_RTT,
  OPT_HTTP1,
  OPT_SPDY,
  OPT_PROTO,
  OPT_CONNECTIONS,
  OPT_DISPATCH,
  OPT_DELAYABLE_LIMIT,
  OPT_HELLO_PADDING,
  OPT_CHROMIUM_SOCKETS,
  OPT_CHROMIUM_HEADERS,
  OPT_BOOST_IMAGES,
  OPT_BLOCKING_CSS,
  OPT_LOAD_EVENT,
  OPT_DOCUMENT_DELAY,
  OPT_FRAME_DELAY,
  OPT_REQUEST_SPACING,
  OPT_JITTER,
  OPT_PIPELINE,
  OPT_PIPELINE_DEPTH,
  OPT_WINDOW,
  OPT_SESSION_WINDOW,
  OPT_TLS,
  OPT_CACERT,
  OPT_NPN,
  OPT_RESULT,
  OPT_HAR_OUT,
  OPT_REPETITION,
  OPT_TIMEOUT,
  OPT_STRICT,
  OPT_COALESCE
};

static const struct option long_options[] = {
    {"host-addr", required_argument, NULL, OPT_HOST_ADDR},
    {"addr-base", required_argument, NULL, OPT_ADDR_BASE},
    {"port", required_argument, NULL, OPT_PORT},
    {"single", required_argument, NULL, OPT_SINGLE},
    {"coalesce", no_argument, NULL, OPT_COALESCE},
    {"dns-rtt", required_argument, NULL, OPT_DNS_RTT},
    {"http1", no_argument, NULL, OPT_HTTP1},
    {"spdy", required_argument, NULL, OPT_SPDY},
    {"proto", required_argument, NULL, OPT_PROTO},
    {"connections", required_argument, NULL, OPT_CONNECTIONS},
    {"dispatch", required_argument, NULL, OPT_DISPATCH},
    {"delayable-limit", required_argument, NULL, OPT_DELAYABLE_LIMIT},
    {"pipeline", no_argument, NULL, OPT_PIPELINE},
    {"pipeline-depth", required_argument, NULL, OPT_PIPELINE_DEPTH},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"session-window", required_argument, NULL, OPT_SESSION_WINDOW},
    {"tls", no_argument, NULL, OPT_TLS},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"insecure", no_argument, NULL, 'k'},
    {"npn", no_argument, NULL, OPT_NPN},
    {"hello-padding", required_argument, NULL, OPT_HELLO_PADDING},
    {"chromium-sockets", no_argument, NULL, OPT_CHROMIUM_SOCKETS},
    {"chromium-headers", no_argument, NULL, OPT_CHROMIUM_HEADERS},
    {"boost-images", no_argument, NULL, OPT_BOOST_IMAGES},
    {"blocking-css", no_argument, NULL, OPT_BLOCKING_CSS},
    {"load-event", no_argument, NULL, OPT_LOAD_EVENT},
    {"document-delay", required_argument, NULL, OPT_DOCUMENT_DELAY},
    {"frame-delay", required_argument, NULL, OPT_FRAME_DELAY},
    {"request-spacing", required_argument, NULL, OPT_REQUEST_SPACING},
    {"jitter", required_argument, NULL, OPT_JITTER},
    {"result", required_argument, NULL, OPT_RESULT},
    {"har-out", required_argument, NULL, OPT_HAR_OUT},
    {"repetition", required_argument, NULL, OPT_REPETITION},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"strict", no_argument, NULL, OPT_STRICT},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

typedef struct addr_args {
  const char *host_addr[MAX_HOST_ADDR_OPTIONS];
  int n_host_addr;
  const char *addr_base;
  int port; /* 0: recorded */
  const char *single;
} addr_args;

/* Returns 0, 2 for bad usage, or -1 after --help / --version. */
static int parse_options(load_options *opt, addr_args *addr, int argc, char **argv) {
  int c, pipeline = 0, spdy_given = 0;
  unsigned long v;
  optind = 1;
  opterr = 0; /* our own one-line messages below */
  while ((c = getopt_long(argc, argv, ":kvhV", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_HOST_ADDR:
      if (addr->n_host_addr >= MAX_HOST_ADDR_OPTIONS)
        return cli_usage_error(LOAD_PROGRAM, "too many --host-addr");
      addr->host_addr[addr->n_host_addr++] = optarg;
      break;
    case OPT_ADDR_BASE:
      addr->addr_base = optarg;
      break;
    case OPT_PORT:
      if (parse_uint(optarg, 1, 65535, &v))
        return cli_option_error(LOAD_PROGRAM, "port", optarg, "1 to 65535");
      addr->port = (int)v;
      break;
    case OPT_SINGLE:
      addr->single = optarg;
      break;
    case OPT_COALESCE:
      opt->coalesce = 1;
      break;
    case OPT_DNS_RTT:
      if (parse_uint(optarg, 0, LOAD_MAX_DNS_RTT_MS, &v))
        return cli_option_error(LOAD_PROGRAM, "dns-rtt", optarg, "whole ms, 0 to %d",
                                LOAD_MAX_DNS_RTT_MS);
      opt->dns_rtt_ms = (uint32_t)v;
      break;
    case OPT_HTTP1:
      opt->http1 = 1;
      break;
    case OPT_SPDY:
      spdy_given = 1;
      {
        speedy_protocol protocol;
        if (cli_parse_spdy_version(optarg, &protocol) != 0)
          return cli_option_error(LOAD_PROGRAM, "spdy", optarg, "3.1, 3 or 2");
        opt->proto = io_proto_of_session(protocol);
      }
      break;
    case OPT_PROTO: {
      speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
      int http1 = 0;
      if (cli_parse_proto(optarg, &protocol, &http1) != 0)
        return cli_option_error(LOAD_PROGRAM, "proto", optarg, CLI_PROTO_VALUES);
      opt->http1 = http1;
      spdy_given = 0; /* --proto decides alone */
      if (!http1) opt->proto = io_proto_of_session(protocol);
    } break;
    case OPT_CONNECTIONS:
      if (parse_uint(optarg, 1, LOAD_MAX_CONNS, &v))
        return cli_option_error(LOAD_PROGRAM, "connections", optarg, "1 to %d", LOAD_MAX_CONNS);
      opt->connections = (int)v;
      break;
    case OPT_DISPATCH:
      if (strcmp(optarg, "fcfs") == 0)
        opt->dispatch = LOAD_DISPATCH_FCFS;
      else if (strcmp(optarg, "priority") == 0)
        opt->dispatch = LOAD_DISPATCH_PRIORITY;
      else
        return cli_option_error(LOAD_PROGRAM, "dispatch", optarg, "fcfs or priority");
      break;
    case OPT_PIPELINE:
      pipeline = 1;
      break;
    case OPT_PIPELINE_DEPTH:
      if (parse_uint(optarg, 1, LOAD_MAX_PIPELINE, &v))
        return cli_option_error(LOAD_PROGRAM, "pipeline-depth", optarg, "1 to %d",
                                LOAD_MAX_PIPELINE);
      opt->pipeline = (int)v;
      break;
    case OPT_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(LOAD_PROGRAM, "window", optarg, "bytes, 65536 to 2147483647");
      opt->stream_window = (uint32_t)v;
      break;
    case OPT_SESSION_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(LOAD_PROGRAM, "session-window", optarg,
                                "bytes, 65536 to 2147483647");
      opt->session_window = (uint32_t)v;
      break;
    case OPT_TLS:
      opt->tls = 1;
      break;
    case OPT_CACERT:
      opt->cacert = optarg;
      break;
    case 'k':
      opt->insecure = 1;
      break;
    case OPT_NPN:
      opt->npn = 1;
      break;
    case OPT_DELAYABLE_LIMIT:
      if (parse_uint(optarg, 1, 1000, &v))
        return cli_option_error(LOAD_PROGRAM, "delayable-limit", optarg, "requests, 1 to 1000");
      opt->delayable_limit = (int)v;
      break;
    case OPT_HELLO_PADDING:
      if (parse_uint(optarg, 4, IO_TLS_HELLO_PAD_MAX, &v))
        return cli_option_error(LOAD_PROGRAM, "hello-padding", optarg, "bytes, 4 to %u",
                                IO_TLS_HELLO_PAD_MAX);
      opt->hello_padding = (uint32_t)v;
      break;
    case OPT_CHROMIUM_SOCKETS:
      opt->chromium_sockets = 1;
      break;
    case OPT_CHROMIUM_HEADERS:
      opt->chromium_headers = 1;
      break;
    case OPT_BOOST_IMAGES:
      opt->boost_images = 1;
      break;
    case OPT_BLOCKING_CSS:
      opt->blocking_css = 1;
      break;
    case OPT_LOAD_EVENT:
      opt->load_event = 1;
      break;
    case OPT_DOCUMENT_DELAY:
      if (parse_uint(optarg, 0, 10000, &v))
        return cli_option_error(LOAD_PROGRAM, "document-delay", optarg, "whole ms, 0 to 10000");
      opt->document_delay_ms = (uint32_t)v;
      break;
    case OPT_FRAME_DELAY:
      if (parse_uint(optarg, 0, 10000, &v))
        return cli_option_error(LOAD_PROGRAM, "frame-delay", optarg, "whole ms, 0 to 10000");
      opt->frame_delay_ms = (uint32_t)v;
      break;
    case OPT_JITTER:
      if (parse_uint(optarg, 0, 1000, &v))
        return cli_option_error(LOAD_PROGRAM, "jitter", optarg, "whole ms, 0 to 1000");
      opt->jitter_ms = (uint32_t)v;
      break;
    case OPT_REQUEST_SPACING:
      if (parse_uint(optarg, 0, 1000, &v))
        return cli_option_error(LOAD_PROGRAM, "request-spacing", optarg, "whole ms, 0 to 1000");
      opt->request_spacing_ms = (uint32_t)v;
      break;
    case OPT_RESULT:
      opt->result_file = optarg;
      break;
    case OPT_HAR_OUT:
      opt->har_out = optarg;
      break;
    case OPT_REPETITION:
      if (parse_uint(optarg, 0, 1000000, &v))
        return cli_option_error(LOAD_PROGRAM, "repetition", optarg, "0 to 1000000");
      opt->repetition = (int)v;
      break;
    case OPT_TIMEOUT:
      if (parse_uint(optarg, 1, 86400, &v))
        return cli_option_error(LOAD_PROGRAM, "timeout", optarg, "seconds, 1 to 86400");
      opt->timeout_ms = (uint32_t)v * 1000;
      break;
    case OPT_STRICT:
      opt->strict = 1;
      break;
    case 'v':
      opt->verbose = 1;
      break;
    case 'h':
      usage(stdout);
      return -1;
    case 'V':
      printf("speedy load %s (libspeedy %s)\n", SPEEDY_LOAD_VERSION, speedy_version());
      return -1;
    case ':':
      return cli_usage_error(LOAD_PROGRAM, "option '%s' needs a value", argv[optind - 1]);
    default:
      if (optopt > 0 && optopt < 256)
        return cli_usage_error(LOAD_PROGRAM, "unknown option '-%c'", optopt);
      return cli_usage_error(LOAD_PROGRAM, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli_usage_error(LOAD_PROGRAM, optind >= argc ? "no PLAN given" : "more than one PLAN");
  opt->plan_file = argv[optind];
  if (!pipeline) opt->pipeline = 1;
  if (opt->http1 && spdy_given)
    return cli_usage_error(LOAD_PROGRAM, "--http1 and --spdy exclude each other");
  if (!opt->http1 && (pipeline || opt->dispatch == LOAD_DISPATCH_PRIORITY))
    return cli_usage_error(
        LOAD_PROGRAM,
        "--pipeline and --dispatch apply to --http1 only (SPDY and HTTP/2 always prioritise)");
  int ways = (addr->n_host_addr > 0) + (addr->addr_base != NULL) + (addr->single != NULL);
  if (ways != 1)
    return cli_usage_error(LOAD_PROGRAM,
                           "give exactly one of --host-addr, --addr-base and --single");
  if (addr->port && !addr->addr_base)
    return cli_usage_error(LOAD_PROGRAM, "--port goes with --addr-base");
  if (opt->npn && !opt->tls) return cli_usage_error(LOAD_PROGRAM, "--npn goes with --tls");
  if (opt->boost_images && opt->delayable_limit == 0)
    return cli_usage_error(LOAD_PROGRAM, "--boost-images goes with --delayable-limit");
  if (opt->hello_padding && !opt->tls)
    return cli_usage_error(LOAD_PROGRAM, "--hello-padding goes with --tls");
  if (opt->coalesce && opt->http1)
    return cli_usage_error(LOAD_PROGRAM, "--coalesce needs SPDY or HTTP/2, not --http1");
  if (opt->coalesce && addr->single)
    return cli_usage_error(LOAD_PROGRAM, "--coalesce and --single exclude each other");
  return 0;
}

/* Fills the address of every host (after the plan is known). Returns 0 or 2. */
static int set_addresses(load_options *opt, const addr_args *addr, const load_plan *plan) {
  size_t n = plan->n_hosts;
  opt->host_addr = calloc(n, sizeof(*opt->host_addr));
  opt->host_addr_set = calloc(n, 1);
  if (!opt->host_addr || !opt->host_addr_set) return 1;
  if (addr->single) {
    if (parse_addr_port(addr->single, &opt->single_addr))
      return cli_option_error(LOAD_PROGRAM, "single", addr->single, "ADDR:PORT");
    opt->single = 1;
    return 0;
  }
  if (addr->addr_base) {
    struct sockaddr_in base;
    if (uv_ip4_addr(addr->addr_base, 0, &base) != 0)
      return cli_option_error(LOAD_PROGRAM, "addr-base", addr->addr_base, "an IPv4 address");
    uint32_t first = ntohl(base.sin_addr.s_addr);
    if ((first & 0xff) + n > 255)
      return cli_option_error(LOAD_PROGRAM, "addr-base", addr->addr_base,
                              "an IPv4 address ending in at most %zu (room for %zu hosts)", 255 - n,
                              n);
    for (size_t i = 0; i < n; i++) {
      struct sockaddr_in *sin = (struct sockaddr_in *)&opt->host_addr[i];
      *sin = base;
      sin->sin_addr.s_addr = htonl(first + (uint32_t)i);
      sin->sin_port = htons((uint16_t)(addr->port ? addr->port : plan->hosts[i].port));
      opt->host_addr_set[i] = 1;
    }
    return 0;
  }
  for (int i = 0; i < addr->n_host_addr; i++) {
    const char *arg = addr->host_addr[i];
    const char *eq = strchr(arg, '=');
    char index[16];
    unsigned long h;
    if (!eq || (size_t)(eq - arg) >= sizeof(index))
      return cli_option_error(LOAD_PROGRAM, "host-addr", arg, "I=ADDR:PORT");
    memcpy(index, arg, (size_t)(eq - arg));
    index[eq - arg] = '\0';
    if (parse_uint(index, 0, n - 1, &h) || parse_addr_port(eq + 1, &opt->host_addr[h]))
      return cli_option_error(LOAD_PROGRAM, "host-addr", arg, "I=ADDR:PORT with I < %zu", n);
    opt->host_addr_set[h] = 1;
  }
  for (size_t i = 0; i < n; i++)
    if (!opt->host_addr_set[i])
      return cli_usage_error(LOAD_PROGRAM, "no --host-addr for host %zu (%s)", i,
                             plan->hosts[i].name);
  return 0;
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b) {
  if (a->ss_family != b->ss_family) return 0;
  if (a->ss_family == AF_INET) {
    const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
    return x->sin_addr.s_addr == y->sin_addr.s_addr && x->sin_port == y->sin_port;
  }
  const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
  return memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0 &&
         x->sin6_port == y->sin6_port;
}

/* --coalesce: every host joins the group of the first host at its address (groups are
 * numbered by their first host, so a host the certificate turns out not to name can
 * leave for its own group: load_run.c). Returns 0 or -1 (out of memory). */
static int set_coalesced_groups(load_run *run) {
  const load_options *opt = run->opt;
  size_t n = run->plan->n_hosts;
  run->host_group = malloc(n * sizeof(*run->host_group));
  if (!run->host_group) return -1;
  for (size_t h = 0; h < n; h++) {
    size_t first = 0;
    while (first < h && !same_addr(&opt->host_addr[first], &opt->host_addr[h])) first++;
    run->host_group[h] = (int)first;
  }
  return load_sched_set_groups(run->sched, run->host_group, (int)n);
}

/* --chromium-sockets: Chromium keys its socket pools by network partition too (the
 * NetworkAnonymizationKey: the page's site and whether the asking frame is of another site),
 * so a host that the page and a cross-site frame both use gets two groups of sockets.
 * Returns 0 or -1 (out of memory). */
static int set_partitions(load_run *run) {
  size_t n = run->plan->n_resources;
  unsigned char *cross = malloc(n ? n : 1);
  if (!cross) return -1;
  int rv = load_browser_cross_site_frames(run->plan, cross);
  if (rv == 0) rv = load_sched_set_partitions(run->sched, cross);
  free(cross);
  return rv;
}

int load_main(int argc, char **argv) {
  load_options opt = {.proto = IO_PROTO_SPDY3_1,
                      .connections = DEFAULT_CONNECTIONS,
                      .dispatch = LOAD_DISPATCH_FCFS,
                      .pipeline = DEFAULT_PIPELINE_DEPTH,
                      .stream_window = DEFAULT_STREAM_WINDOW,
                      .session_window = DEFAULT_SESSION_WINDOW,
                      .timeout_ms = DEFAULT_TIMEOUT_S * 1000,
                      .repetition = 1};
  addr_args addr = {0};
  load_run run = {.opt = &opt};
  int status = parse_options(&opt, &addr, argc, argv);
  if (status != 0) return status < 0 ? 0 : status;
  char err[400];
  if (load_plan_read(opt.plan_file, &run.plan, err, sizeof(err)) != 0) {
    fprintf(stderr, "speedy load: %s: %s\n", opt.plan_file, err);
    return 1;
  }
  if (opt.chromium_headers && load_browser_set_chromium_headers(run.plan, opt.tls) != 0) {
    fprintf(stderr, "speedy load: out of memory\n");
    status = 1;
    goto out;
  }
  status = set_addresses(&opt, &addr, run.plan);
  if (status != 0) goto out;
  status = 1;
  run.sched =
      load_sched_new(run.plan, opt.http1 ? opt.dispatch : LOAD_DISPATCH_PRIORITY, opt.single);
  run.fetch = calloc(run.plan->n_resources, sizeof(*run.fetch));
  if (!run.sched || !run.fetch || (opt.coalesce && set_coalesced_groups(&run) != 0)) {
    fprintf(stderr, "speedy load: out of memory\n");
    goto out;
  }
  /* Single-domain: every resource is the origin's, so no frame is of another site. */
  if (opt.chromium_sockets && !opt.single && set_partitions(&run) != 0) {
    fprintf(stderr, "speedy load: out of memory\n");
    goto out;
  }
  load_sched_set_delayable_limit(run.sched, opt.delayable_limit);
  if (load_sched_set_image_boost(run.sched, opt.boost_images) != 0) {
    fprintf(stderr, "speedy load: out of memory\n");
    goto out;
  }
  load_sched_set_blocking_css(run.sched, opt.blocking_css);
  load_sched_set_document_delay(run.sched, opt.document_delay_ms);
  load_sched_set_frame_delay(run.sched, opt.frame_delay_ms);
  load_sched_set_request_spacing(run.sched, opt.request_spacing_ms);
  /* One sequence of draws per repetition of a plan: loads differ, a load run again not. */
  load_sched_set_jitter(run.sched, opt.jitter_ms,
                        (uint64_t)run.plan->seed * 0x100000001b3u + (uint64_t)opt.repetition);
  if (load_run_execute(&run) != 0) goto out;
  char reason[600];
  int valid = load_result_check(&run, reason, sizeof(reason));
  if (!valid) fprintf(stderr, "speedy load: invalid load: %s\n", reason);
  if (opt.har_out && load_har_write(&run) != 0) goto out;
  if (load_result_write(&run, valid, reason) != 0) goto out;
  status = !valid && opt.strict ? 1 : 0;
out:
  for (size_t i = 0; run.fetch && i < run.plan->n_resources; i++)
    json_decref(run.fetch[i].response_headers);
  free(run.fetch);
  free(run.groups);
  free(run.host_group);
  free(run.lookups);
  free(run.frame_navs);
  io_tls_del(run.tls);
  load_sched_del(run.sched);
  load_plan_del(run.plan);
  free(opt.host_addr);
  free(opt.host_addr_set);
  return status;
}
