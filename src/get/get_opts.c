/* get_opts.c — the options of `speedy get`: --help, parsing and checking every option
 * (bad values reported in the one style of cli_option_error), and the request body that
 * --data / --data-binary describe. Options follow curl's where curl has them.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "get_int.h"
#include "io_session.h"

#define GET_PROGRAM "speedy get"

#define DEFAULT_STREAM_WINDOW (2u << 20)
#define DEFAULT_SESSION_WINDOW (10u << 20)
#define DEFAULT_MAX_PUSHES 32
#define DEFAULT_CONNECT_TIMEOUT_S 10
#define DEFAULT_HTTP1_CONNS 6
#define DEFAULT_PRIORITY 3
#define MAX_BODY (1u << 30)
#define MAX_OUTPUTS ((int)(sizeof(((get_options *)0)->outputs) / sizeof(const char *)))

static void usage(FILE *f) {
  fprintf(
      f,
      "Usage: speedy get [OPTION]... URL...\n"
      "Fetch URLs over HTTP/2, SPDY or HTTP/1.1, much as curl does. URLs of one origin share\n"
      "one HTTP/2 or SPDY session. See speedy-get(1).\n\n"
      "Protocol:\n"
      "      --proto PROTO        speak h2, h2c (HTTP/2 with prior knowledge on http://),\n"
      "                           spdy/3.1, spdy/3, spdy/2 or http/1.1; over TLS only PROTO\n"
      "                           is offered (default: offer h2, spdy/3.1, spdy/3, spdy/2,\n"
      "                           http/1.1 by ALPN and speak what the server chose;\n"
      "                           SPDY/3.1 on http:// URLs)\n"
      "      --spdy=VERSION       the same as --proto spdy/VERSION: 3.1, 3 or 2\n"
      "      --http1              the same as --proto http/1.1 (keep-alive)\n"
      "      --npn                TLS: offer the protocols by NPN only, not ALPN; caps TLS at\n"
      "                           1.2, for servers that speak SPDY only over NPN (default: ALPN,\n"
      "                           and NPN when TLS 1.2 is used)\n"
      "      --http1-connections N  HTTP/1.1 connections per origin, 1 to %d (default %d)\n"
      "      --priority N         urgency of requests, 0 (highest) to 7: SPDY's priority,\n"
      "                           HTTP/2's priority field (default %d)\n"
      "      --no-push            refuse server push (announces MAX_CONCURRENT_STREAMS 0)\n"
      "                           (default: pushes accepted)\n"
      "      --max-pushes N       pushed streams accepted per session, 0 to 1000 (default %d)\n"
      "      --window BYTES       SPDY/3+ stream receive window (default %u)\n"
      "      --session-window BYTES  SPDY/3.1 session receive window (default %u)\n"
      "Request:\n"
      "  -X, --request METHOD     request method (default: GET; POST with --data; HEAD with -I)\n"
      "  -H, --header 'Name: value'  add a request header, repeatable (default: none)\n"
      "      --data TEXT|@FILE|@-  send TEXT, or FILE's (stdin's) contents with CR and LF\n"
      "                           removed, by POST unless -X, as application/x-www-form-\n"
      "                           urlencoded unless -H Content-Type; repeated --data and\n"
      "                           --data-binary are joined with '&' (default: no body)\n"
      "      --data-binary TEXT|@FILE|@-  the same, with the bytes kept as they are (default:\n"
      "                           no body)\n"
      "  -r, --range RANGE        ask for part of the body: A-B, A- or -N (the last N bytes),\n"
      "                           or several joined by commas (default: the whole body)\n"
      "      --compressed         ask for gzip or deflate (Accept-Encoding) and decode the body\n"
      "                           (default: off: bodies are written as received)\n"
      "Output (bodies go to stdout, in command-line order, unless):\n"
      "  -o, --output FILE        write the next URL's body to FILE ('-': stdout); repeatable\n"
      "                           (default: stdout)\n"
      "  -O, --remote-name        save bodies under the URL's base name in the current dir\n"
      "                           (default: off)\n"
      "  -d, --dir DIR            save bodies and pushed resources under DIR, created if\n"
      "                           missing; implies -O; also --output-dir; not curl's -d (that\n"
      "                           is --data) (default: the current directory with -O). Names\n"
      "                           are reduced to safe base names; files are never overwritten\n"
      "                           and links never followed. Without -O or -d, pushed\n"
      "                           resources are listed, not saved.\n"
      "  -i, --include            write the response's status line and headers before its body\n"
      "                           (default: off)\n"
      "  -I, --head               send HEAD and write only the status line and headers\n"
      "                           (default: off)\n"
      "  -f, --fail               a status of 400 or more fails the URL: nothing written, exit\n"
      "                           status 1 (default: off: such bodies are written, exit 0)\n"
      "  -v, --verbose            trace to stderr: every SPDY frame with a timestamp, its flags,\n"
      "                           settings and header fields; HTTP/1.1 requests and response\n"
      "                           heads (default: off)\n"
      "  -s, --silent             no progress meter and no summary; failures are still named\n"
      "                           (default: summary on stderr; the meter when stderr is a\n"
      "                           terminal and no body goes to the terminal)\n"
      "TLS and network:\n"
      "  -k, --insecure           do not verify the server's certificate or host name\n"
      "                           (default: verify)\n"
      "      --cacert FILE        trust the CA certificates in FILE (default: system store)\n"
      "      --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (the host name is still\n"
      "                           sent and verified); up to %d (default: DNS)\n"
      "      --connect-timeout S  connect + TLS handshake limit, 1 to 3600 s (default %d)\n"
      "      --max-time S         limit for the whole run, 1 to 86400 s (default: none)\n"
      "      --max-filesize BYTES  fail a body (or a push) larger than BYTES, with K, M or G\n"
      "                           for KiB, MiB, GiB (default: no limit)\n"
      "  -h, --help               this help\n"
      "  -V, --version            print the version\n\n"
      "Exit status: 0 every URL fetched (a status of 400 or more too, unless --fail), 1 any\n"
      "URL failed (each failure is named on stderr), 2 bad usage.\n",
      GET_MAX_CONNS, DEFAULT_HTTP1_CONNS, DEFAULT_PRIORITY, DEFAULT_MAX_PUSHES,
      DEFAULT_STREAM_WINDOW, DEFAULT_SESSION_WINDOW, GET_MAX_RESOLVE, DEFAULT_CONNECT_TIMEOUT_S);
}

enum {
  OPT_SPDY = 256,
  OPT_PROTO,
  OPT_HTTP1,
  OPT_HTTP1_CONNS,
  OPT_NPN,
  OPT_PRIORITY,
  OPT_NO_PUSH,
  OPT_MAX_PUSHES,
  OPT_WINDOW,
  OPT_SESSION_WINDOW,
  OPT_DATA,
  OPT_DATA_BINARY,
  OPT_COMPRESSED,
  OPT_CACERT,
  OPT_RESOLVE,
  OPT_CONNECT_TIMEOUT,
  OPT_MAX_TIME,
  OPT_MAX_FILESIZE
};

static const struct option long_options[] = {
    {"proto", required_argument, NULL, OPT_PROTO},
    {"spdy", required_argument, NULL, OPT_SPDY},
    {"http1", no_argument, NULL, OPT_HTTP1},
    {"http1-connections", required_argument, NULL, OPT_HTTP1_CONNS},
    {"npn", no_argument, NULL, OPT_NPN},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"no-push", no_argument, NULL, OPT_NO_PUSH},
    {"max-pushes", required_argument, NULL, OPT_MAX_PUSHES},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"session-window", required_argument, NULL, OPT_SESSION_WINDOW},
    {"request", required_argument, NULL, 'X'},
    {"header", required_argument, NULL, 'H'},
    {"data", required_argument, NULL, OPT_DATA},
    {"data-binary", required_argument, NULL, OPT_DATA_BINARY},
    {"range", required_argument, NULL, 'r'},
    {"compressed", no_argument, NULL, OPT_COMPRESSED},
    {"output", required_argument, NULL, 'o'},
    {"remote-name", no_argument, NULL, 'O'},
    {"dir", required_argument, NULL, 'd'},
    {"output-dir", required_argument, NULL, 'd'},
    {"include", no_argument, NULL, 'i'},
    {"head", no_argument, NULL, 'I'},
    {"fail", no_argument, NULL, 'f'},
    {"verbose", no_argument, NULL, 'v'},
    {"silent", no_argument, NULL, 's'},
    {"insecure", no_argument, NULL, 'k'},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"resolve", required_argument, NULL, OPT_RESOLVE},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"max-filesize", required_argument, NULL, OPT_MAX_FILESIZE},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

/* Parses a non-negative integer option within [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out) {
  uint64_t value;
  if (cli_parse_u64(s, min, max, &value) != 0) return -1;
  *out = (unsigned long)value;
  return 0;
}

/* Parses BYTES[K|M|G] (binary multiples) into 1 .. 2^62. */
static int parse_size(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *s == '-' || v == 0) return -1;
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k')
    shift = 10;
  else if (*end == 'M' || *end == 'm')
    shift = 20;
  else if (*end == 'G' || *end == 'g')
    shift = 30;
  if (shift) end++;
  if (*end != '\0' || v > (UINT64_C(1) << 62) >> shift) return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

/* Adds -H 'Name: value' (name lower-cased, copied). */
static int add_header(get_options *opt, const char *arg) {
  const char *colon = strchr(arg, ':');
  if (!colon || colon == arg || opt->n_headers >= GET_MAX_HEADERS) return -1;
  size_t name_len = (size_t)(colon - arg);
  const char *value = colon + 1;
  while (*value == ' ' || *value == '\t') value++;
  char *name = malloc(name_len + 1);
  if (!name) return -1;
  for (size_t i = 0; i < name_len; i++) {
    char ch = arg[i];
    if (ch <= 0x20 || ch >= 0x7f) {
      free(name);
      return -1;
    }
    name[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
  }
  name[name_len] = '\0';
  for (const char *v = value; *v; v++)
    if ((unsigned char)*v < 0x20 && *v != '\t') {
      free(name);
      return -1;
    }
  opt->headers[opt->n_headers++] = (speedy_header){name, name_len, value, strlen(value)};
  return 0;
}

/* An HTTP method is a token (RFC 7230 3.2.6). */
static int is_token(const char *s) {
  if (*s == '\0' || strlen(s) > 32) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          strchr("!#$%&'*+-.^_`|~", *s)))
      return 0;
  return 1;
}

static const char *digits_end(const char *s) {
  while (*s >= '0' && *s <= '9') s++;
  return s;
}

/* -r: "A-B" (A <= B), "A-" or "-N" (N > 0), several joined by commas, as in curl and the
 * bytes=... of RFC 7233 2.1. */
static int range_is_valid(const char *s) {
  for (;;) {
    const char *first = s, *after_first = digits_end(s);
    if (after_first - first > 18 || *after_first != '-') return 0;
    const char *last = after_first + 1, *after_last = digits_end(last);
    if (after_last - last > 18) return 0;
    if (after_first == first && after_last == last) return 0;            /* "-" */
    if (after_first == first && strtoull(last, NULL, 10) == 0) return 0; /* "-0" */
    if (after_first != first && after_last != last &&
        strtoull(first, NULL, 10) > strtoull(last, NULL, 10))
      return 0;
    if (*after_last == '\0') return 1;
    if (*after_last != ',') return 0;
    s = after_last + 1;
  }
}

const char *get_opts_method(const get_options *opt) {
  if (opt->method) return opt->method;
  if (opt->head) return "HEAD";
  return opt->n_data ? "POST" : "GET";
}

int get_opts_parse(get_options *opt, int argc, char **argv) {
  *opt = (get_options){.priority = DEFAULT_PRIORITY,
                       .max_pushes = DEFAULT_MAX_PUSHES,
                       .stream_window = DEFAULT_STREAM_WINDOW,
                       .session_window = DEFAULT_SESSION_WINDOW,
                       .connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_S * 1000,
                       .http1_conns = DEFAULT_HTTP1_CONNS};
  int c;
  unsigned long v;
  optind = 1;
  opterr = 0; /* our own messages, in the one style */
  while ((c = getopt_long(argc, argv, ":H:o:Od:X:r:iIfvskhV", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_SPDY: {
      speedy_protocol protocol;
      if (cli_parse_spdy_version(optarg, &protocol) != 0)
        return cli_option_error(GET_PROGRAM, "spdy", optarg, "3.1, 3 or 2");
      opt->proto = io_proto_of_session(protocol);
    } break;
    case OPT_PROTO: {
      speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
      int http1 = 0;
      if (cli_parse_proto(optarg, &protocol, &http1) != 0)
        return cli_option_error(GET_PROGRAM, "proto", optarg, CLI_PROTO_VALUES);
      opt->http1 = http1;
      opt->proto = http1 ? IO_PROTO_UNKNOWN : io_proto_of_session(protocol);
    } break;
    case OPT_HTTP1:
      opt->http1 = 1;
      break;
    case OPT_NPN:
      opt->npn = 1;
      break;
    case OPT_HTTP1_CONNS:
      if (parse_uint(optarg, 1, GET_MAX_CONNS, &v))
        return cli_option_error(GET_PROGRAM, "http1-connections", optarg, "1 to %d", GET_MAX_CONNS);
      opt->http1_conns = (int)v;
      break;
    case OPT_PRIORITY:
      if (parse_uint(optarg, 0, 7, &v))
        return cli_option_error(GET_PROGRAM, "priority", optarg, "0 to 7");
      opt->priority = (int)v;
      break;
    case OPT_NO_PUSH:
      opt->no_push = 1;
      break;
    case OPT_MAX_PUSHES:
      if (parse_uint(optarg, 0, 1000, &v))
        return cli_option_error(GET_PROGRAM, "max-pushes", optarg, "0 to 1000");
      opt->max_pushes = (uint32_t)v;
      break;
    case OPT_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(GET_PROGRAM, "window", optarg, "65536 to 2147483647");
      opt->stream_window = (uint32_t)v;
      break;
    case OPT_SESSION_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_option_error(GET_PROGRAM, "session-window", optarg, "65536 to 2147483647");
      opt->session_window = (uint32_t)v;
      break;
    case 'X':
      if (!is_token(optarg))
        return cli_option_error(GET_PROGRAM, "request", optarg,
                                "a method name such as GET, PUT or DELETE");
      opt->method = optarg;
      break;
    case 'H':
      if (opt->n_headers >= GET_MAX_HEADERS)
        return cli_usage_error(GET_PROGRAM, "at most %d -H options", GET_MAX_HEADERS);
      if (add_header(opt, optarg))
        return cli_option_error(GET_PROGRAM, "header", optarg, "'Name: value'");
      break;
    case OPT_DATA:
    case OPT_DATA_BINARY:
      if (opt->n_data >= GET_MAX_DATA)
        return cli_usage_error(GET_PROGRAM, "at most %d --data options", GET_MAX_DATA);
      if (strcmp(optarg, "@") == 0)
        return cli_option_error(GET_PROGRAM, c == OPT_DATA ? "data" : "data-binary", optarg,
                                "TEXT, @FILE or @-");
      opt->data[opt->n_data++] = (get_data_arg){optarg, c == OPT_DATA_BINARY};
      break;
    case 'r':
      if (!range_is_valid(optarg))
        return cli_option_error(GET_PROGRAM, "range", optarg,
                                "A-B, A- or -N, or several joined by commas");
      if (snprintf(opt->range, sizeof(opt->range), "bytes=%s", optarg) >= (int)sizeof(opt->range))
        return cli_option_error(GET_PROGRAM, "range", optarg, "at most %d characters",
                                (int)sizeof(opt->range) - 7);
      break;
    case OPT_COMPRESSED:
      opt->compressed = 1;
      break;
    case 'o':
      if (opt->n_outputs >= MAX_OUTPUTS)
        return cli_usage_error(GET_PROGRAM, "at most %d -o options", MAX_OUTPUTS);
      opt->outputs[opt->n_outputs++] = optarg;
      break;
    case 'O':
      opt->remote_name = 1;
      break;
    case 'd':
      if (optarg[0] == '\0') return cli_option_error(GET_PROGRAM, "dir", optarg, "a directory");
      opt->dir = optarg;
      break;
    case 'i':
      opt->include = 1;
      break;
    case 'I':
      opt->head = 1;
      break;
    case 'f':
      opt->fail = 1;
      break;
    case 'v':
      opt->verbose = 1;
      break;
    case 's':
      opt->quiet = 1;
      break;
    case 'k':
      opt->insecure = 1;
      break;
    case OPT_CACERT:
      opt->cacert = optarg;
      break;
    case OPT_RESOLVE:
      if (opt->n_resolve >= GET_MAX_RESOLVE)
        return cli_usage_error(GET_PROGRAM, "at most %d --resolve options", GET_MAX_RESOLVE);
      if (get_resolve_parse(optarg, &opt->resolve[opt->n_resolve]))
        return cli_option_error(GET_PROGRAM, "resolve", optarg, "HOST:PORT:ADDR");
      opt->n_resolve++;
      break;
    case OPT_CONNECT_TIMEOUT:
      if (parse_uint(optarg, 1, 3600, &v))
        return cli_option_error(GET_PROGRAM, "connect-timeout", optarg, "1 to 3600 (seconds)");
      opt->connect_timeout_ms = (uint32_t)v * 1000;
      break;
    case OPT_MAX_TIME:
      if (parse_uint(optarg, 1, 86400, &v))
        return cli_option_error(GET_PROGRAM, "max-time", optarg, "1 to 86400 (seconds)");
      opt->max_time_ms = (uint32_t)v * 1000;
      break;
    case OPT_MAX_FILESIZE:
      if (parse_size(optarg, &opt->max_filesize))
        return cli_option_error(GET_PROGRAM, "max-filesize", optarg, "BYTES, or with K, M or G");
      break;
    case 'h':
      usage(stdout);
      return -1;
    case 'V':
      printf("speedy get %s (libspeedy %s)\n", SPEEDY_GET_VERSION, speedy_version());
      return -1;
    case ':':
      return cli_usage_error(GET_PROGRAM, "option '%s' needs a value", argv[optind - 1]);
    default: /* '?' */
      if (strncmp(argv[optind - 1], "--", 2) == 0 || optopt == 0 || optopt >= 256)
        return cli_usage_error(GET_PROGRAM, "unknown option '%s'", argv[optind - 1]);
      return cli_usage_error(GET_PROGRAM, "unknown option '-%c'", optopt);
    }
  }
  if (optind >= argc) return cli_usage_error(GET_PROGRAM, "%s", "no URL given");
  if (opt->http1 && opt->proto)
    return cli_usage_error(GET_PROGRAM, "%s",
                           "--http1 (http/1.1) and --spdy or --proto exclude each other");
  if (opt->head && opt->n_data)
    return cli_usage_error(GET_PROGRAM, "%s", "-I (HEAD) and --data (a body) exclude each other");
  if (opt->n_outputs > argc - optind)
    return cli_usage_error(GET_PROGRAM, "%s", "more -o options than URLs");
  return 0;
}

/* ---- The request body -------------------------------------------------------------- */

static int append_bytes(get_run *run, size_t *cap, const void *bytes, size_t len) {
  if (len > MAX_BODY - run->body_len) return -1;
  if (run->body_len + len > *cap) {
    size_t want = *cap ? *cap : 4096;
    while (want < run->body_len + len) want *= 2;
    uint8_t *p = realloc(run->body, want);
    if (!p) return -1;
    run->body = p;
    *cap = want;
  }
  memcpy(run->body + run->body_len, bytes, len);
  run->body_len += len;
  return 0;
}

/* Appends the contents of @FILE (or stdin for "-"), dropping CR and LF unless binary. */
static int append_file(get_run *run, size_t *cap, const char *file, int binary) {
  int fd = strcmp(file, "-") == 0 ? 0 : open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, GET_PROGRAM ": cannot read --data @%s: %s\n", file, strerror(errno));
    return -1;
  }
  uint8_t buf[65536];
  int rv = 0;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fprintf(stderr, GET_PROGRAM ": cannot read --data @%s: %s\n", file, strerror(errno));
      rv = -1;
      break;
    }
    if (n == 0) break;
    size_t kept = (size_t)n;
    if (!binary) { /* curl's --data @FILE: line ends removed */
      kept = 0;
      for (ssize_t i = 0; i < n; i++)
        if (buf[i] != '\r' && buf[i] != '\n') buf[kept++] = buf[i];
    }
    if (append_bytes(run, cap, buf, kept) != 0) {
      fprintf(stderr, GET_PROGRAM ": --data @%s: more than 1 GiB, or out of memory\n", file);
      rv = -1;
      break;
    }
  }
  if (fd > 0) close(fd);
  return rv;
}

int get_opts_load_body(get_run *run) {
  const get_options *opt = run->opt;
  size_t cap = 0;
  run->has_body = opt->n_data > 0;
  for (int i = 0; i < opt->n_data; i++) {
    const get_data_arg *d = &opt->data[i];
    if (i > 0 && append_bytes(run, &cap, "&", 1) != 0) return -1;
    if (d->arg[0] == '@') {
      if (append_file(run, &cap, d->arg + 1, d->binary) != 0) return -1;
    } else if (append_bytes(run, &cap, d->arg, strlen(d->arg)) != 0) {
      fprintf(stderr, GET_PROGRAM ": --data: out of memory\n");
      return -1;
    }
  }
  return 0;
}
