/* get_main.c — `speedy get URL...`: options, grouping URLs by origin (one SPDY session
 * per origin, or up to N HTTP/1.1 connections), the event loop, the per-URL summary and
 * the exit status (0 all fetched, 1 any URL failed — each failure named —, 2 bad usage).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "get.h"
#include "get_int.h"

#define GET_PROGRAM "speedy get"

#define DEFAULT_STREAM_WINDOW (2u << 20)
#define DEFAULT_SESSION_WINDOW (10u << 20)
#define DEFAULT_MAX_PUSHES 32
#define MAX_BODY (1u << 30)
#define MAX_SESSIONS_PER_ORIGIN 8 /* the first plus retries and stream-id rollovers */

int64_t get_now_ns(void) { return (int64_t)uv_hrtime(); }

static void usage(FILE *f) {
  fprintf(f,
          "Usage: speedy get [OPTION]... URL...\n"
          "Fetch URLs over SPDY (or HTTP/1.1). URLs of one origin share one SPDY session.\n\n"
          "Protocol:\n"
          "      --spdy=VERSION       speak SPDY 3.1, 3 or 2 (default: negotiate by ALPN/NPN over\n"
          "                           TLS, preferring 3.1; SPDY/3.1 on http:// URLs)\n"
          "      --http1              speak HTTP/1.1 (keep-alive) instead of SPDY\n"
          "      --http1-connections N  HTTP/1.1 connections per origin (default 6, max %d)\n"
          "      --priority N         SPDY urgency of requests, 0 (highest) to 7 (default 3)\n"
          "      --no-push            refuse server push (announces MAX_CONCURRENT_STREAMS 0)\n"
          "      --max-pushes N       pushed streams accepted per session (default %d)\n"
          "      --window BYTES       SPDY/3+ stream receive window (default %u)\n"
          "      --session-window BYTES  SPDY/3.1 session receive window (default %u)\n"
          "Request:\n"
          "  -H, --header 'Name: value'  add a request header (repeatable)\n"
          "      --data @FILE         POST the contents of FILE (to every URL)\n"
          "Output (bodies go to stdout, in command-line order, unless):\n"
          "  -o, --output FILE        write the next URL's body to FILE ('-': stdout); repeatable\n"
          "  -O, --remote-name        save bodies under the URL's base name in the current dir\n"
          "  -d, --dir DIR            save bodies and pushed resources under DIR (implies -O)\n"
          "                           Names are reduced to safe base names; files are never\n"
          "                           overwritten and links never followed. Without -O or -d,\n"
          "                           pushed resources are listed, not saved.\n"
          "  -v, --verbose            print every frame (and decoded headers) to stderr\n"
          "  -s, --silent             no summary on stderr\n"
          "TLS and network:\n"
          "  -k, --insecure           do not verify the server's certificate or host name\n"
          "      --cacert FILE        trust the CA certificates in FILE (default: system store)\n"
          "      --resolve HOST:PORT:ADDR  connect to ADDR for HOST:PORT (the host name is still\n"
          "                           sent and verified)\n"
          "      --connect-timeout S  connect + TLS handshake limit in seconds (default 10)\n"
          "      --max-time S         limit for the whole run in seconds (default: none)\n"
          "      --max-filesize BYTES  fail a body (or a push) larger than BYTES, with K, M or G\n"
          "                           for KiB, MiB, GiB (default: no limit)\n"
          "  -h, --help               this help\n"
          "  -V, --version            print the version\n\n"
          "Exit status: 0 every URL fetched with a status below 400, 1 any URL failed (each\n"
          "failure is named on stderr), 2 bad usage.\n",
          GET_MAX_CONNS, DEFAULT_MAX_PUSHES, DEFAULT_STREAM_WINDOW, DEFAULT_SESSION_WINDOW);
}

/* Parses a non-negative integer option within [min, max]. */
static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *out) {
  uint64_t value;
  if (cli_parse_u64(s, min, max, &value) != 0) return -1;
  *out = (unsigned long)value;
  return 0;
}

enum {
  OPT_SPDY = 256,
  OPT_HTTP1,
  OPT_HTTP1_CONNS,
  OPT_PRIORITY,
  OPT_NO_PUSH,
  OPT_MAX_PUSHES,
  OPT_WINDOW,
  OPT_SESSION_WINDOW,
  OPT_DATA,
  OPT_CACERT,
  OPT_RESOLVE,
  OPT_CONNECT_TIMEOUT,
  OPT_MAX_TIME,
  OPT_MAX_FILESIZE
};

static const struct option long_options[] = {
    {"spdy", required_argument, NULL, OPT_SPDY},
    {"http1", no_argument, NULL, OPT_HTTP1},
    {"http1-connections", required_argument, NULL, OPT_HTTP1_CONNS},
    {"priority", required_argument, NULL, OPT_PRIORITY},
    {"no-push", no_argument, NULL, OPT_NO_PUSH},
    {"max-pushes", required_argument, NULL, OPT_MAX_PUSHES},
    {"window", required_argument, NULL, OPT_WINDOW},
    {"session-window", required_argument, NULL, OPT_SESSION_WINDOW},
    {"header", required_argument, NULL, 'H'},
    {"data", required_argument, NULL, OPT_DATA},
    {"output", required_argument, NULL, 'o'},
    {"remote-name", no_argument, NULL, 'O'},
    {"dir", required_argument, NULL, 'd'},
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
  opt->headers[opt->n_headers++] = (spdy_header){name, name_len, value, strlen(value)};
  return 0;
}

/* Returns 0, or the exit status for a usage error (2) / --help or --version (-1 → 0). */
static int parse_options(get_options *opt, int argc, char **argv) {
  int c;
  unsigned long v;
  optind = 1;
  while ((c = getopt_long(argc, argv, "H:o:Od:vskhV", long_options, NULL)) != -1) {
    switch (c) {
    case OPT_SPDY: {
      spdy_protocol protocol;
      if (cli_parse_spdy_version(optarg, &protocol) != 0)
        return cli_usage_error(GET_PROGRAM, "--spdy must be 3.1, 3 or 2, not '%s'", optarg);
      opt->spdy = (io_proto)protocol; /* io_proto uses spdy_protocol's values */
    } break;
    case OPT_HTTP1:
      opt->http1 = 1;
      break;
    case OPT_HTTP1_CONNS:
      if (parse_uint(optarg, 1, GET_MAX_CONNS, &v))
        return cli_usage_error(GET_PROGRAM, "bad --http1-connections '%s'", optarg);
      opt->http1_conns = (int)v;
      break;
    case OPT_PRIORITY:
      if (parse_uint(optarg, 0, 7, &v))
        return cli_usage_error(GET_PROGRAM, "--priority must be 0-7, not '%s'", optarg);
      opt->priority = (int)v;
      break;
    case OPT_NO_PUSH:
      opt->no_push = 1;
      break;
    case OPT_MAX_PUSHES:
      if (parse_uint(optarg, 0, 1000, &v))
        return cli_usage_error(GET_PROGRAM, "bad --max-pushes '%s'", optarg);
      opt->max_pushes = (uint32_t)v;
      break;
    case OPT_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_usage_error(GET_PROGRAM, "bad --window '%s' (65536 to 2^31-1)", optarg);
      opt->stream_window = (uint32_t)v;
      break;
    case OPT_SESSION_WINDOW:
      if (parse_uint(optarg, 65536, 0x7fffffff, &v))
        return cli_usage_error(GET_PROGRAM, "bad --session-window '%s' (65536 to 2^31-1)", optarg);
      opt->session_window = (uint32_t)v;
      break;
    case 'H':
      if (add_header(opt, optarg))
        return cli_usage_error(GET_PROGRAM, "bad -H '%s' (want 'Name: value')", optarg);
      break;
    case OPT_DATA:
      if (optarg[0] != '@' || optarg[1] == '\0')
        return cli_usage_error(GET_PROGRAM, "--data takes @FILE, not '%s'", optarg);
      opt->data_file = optarg + 1;
      break;
    case 'o':
      if (opt->n_outputs >= (int)(sizeof(opt->outputs) / sizeof(opt->outputs[0])))
        return cli_usage_error(GET_PROGRAM, "too many -o options%s", "");
      opt->outputs[opt->n_outputs++] = optarg;
      break;
    case 'O':
      opt->remote_name = 1;
      break;
    case 'd':
      opt->dir = optarg;
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
      if (opt->n_resolve >= GET_MAX_RESOLVE ||
          get_resolve_parse(optarg, &opt->resolve[opt->n_resolve]))
        return cli_usage_error(GET_PROGRAM, "bad --resolve '%s' (want HOST:PORT:ADDR)", optarg);
      opt->n_resolve++;
      break;
    case OPT_CONNECT_TIMEOUT:
      if (parse_uint(optarg, 1, 3600, &v))
        return cli_usage_error(GET_PROGRAM, "bad --connect-timeout '%s'", optarg);
      opt->connect_timeout_ms = (uint32_t)v * 1000;
      break;
    case OPT_MAX_TIME:
      if (parse_uint(optarg, 1, 86400, &v))
        return cli_usage_error(GET_PROGRAM, "bad --max-time '%s'", optarg);
      opt->max_time_ms = (uint32_t)v * 1000;
      break;
    case OPT_MAX_FILESIZE:
      if (parse_size(optarg, &opt->max_filesize))
        return cli_usage_error(GET_PROGRAM, "bad --max-filesize '%s' (BYTES, or with K, M or G)",
                               optarg);
      break;
    case 'h':
      usage(stdout);
      return -1;
    case 'V':
      printf("speedy get %s (libspdy %s)\n", SPEEDY_GET_VERSION, spdy_version());
      return -1;
    default:
      return cli_usage_error(GET_PROGRAM, "%s", "unknown option");
    }
  }
  if (optind >= argc) return cli_usage_error(GET_PROGRAM, "%s", "no URL given");
  if (opt->http1 && opt->spdy)
    return cli_usage_error(GET_PROGRAM, "%s", "--http1 and --spdy exclude each other");
  if (opt->n_outputs > argc - optind)
    return cli_usage_error(GET_PROGRAM, "%s", "more -o options than URLs");
  return 0;
}

/* ---- Jobs and origins -------------------------------------------------------------- */

static get_job *job_alloc(get_origin *origin, const char *url, char *path) {
  get_job *job = calloc(1, sizeof(*job));
  if (!job) return NULL;
  job->origin = origin;
  job->url = strdup(url);
  job->path = path;
  job->fd = -1;
  job->index = -1;
  if (!job->url) {
    free(job);
    return NULL;
  }
  get_job **tail = &origin->jobs;
  while (*tail) tail = &(*tail)->next;
  *tail = job;
  return job;
}

get_job *get_job_new_push(get_origin *origin, const char *path) {
  char *p = strdup(path);
  size_t url_len = strlen(origin->scheme) + strlen(origin->authority) + strlen(path) + 8;
  char *url = malloc(url_len);
  if (!p || !url) {
    free(p);
    free(url);
    return NULL;
  }
  snprintf(url, url_len, "%s://%s%s", origin->scheme, origin->authority, path);
  get_job *job = job_alloc(origin, url, p);
  free(url);
  if (!job) {
    free(p);
    return NULL;
  }
  job->pushed = 1;
  job->state = JOB_ACTIVE;
  job->t_start = get_now_ns();
  return job;
}

void get_job_fail(get_job *job, const char *fmt, ...) {
  if (job->state == JOB_FAILED) return;
  job->state = JOB_FAILED;
  job->t_end = get_now_ns();
  if (!job->error[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->error, sizeof(job->error), fmt, ap);
    va_end(ap);
  }
  get_out_finish(job->origin->run, job);
}

void get_job_done(get_job *job) {
  if (job->state == JOB_DONE || job->state == JOB_FAILED) return;
  job->state = JOB_DONE;
  job->t_end = get_now_ns();
  if (job->has_length && job->bytes != job->content_length) {
    job->state = JOB_ACTIVE;
    get_job_fail(job, "body of %llu bytes, content-length said %llu",
                 (unsigned long long)job->bytes, (unsigned long long)job->content_length);
    return;
  }
  get_out_finish(job->origin->run, job);
}

int get_job_check_size(get_job *job, uint64_t n) {
  uint64_t max = job->origin->run->opt->max_filesize;
  if (max == 0) return 0;
  if (job->has_length && job->content_length > max) {
    get_job_fail(job, "content-length %llu exceeds --max-filesize %llu",
                 (unsigned long long)job->content_length, (unsigned long long)max);
    return -1;
  }
  if (job->bytes > max || n > max - job->bytes) {
    get_job_fail(job, "body larger than --max-filesize %llu bytes: stopped",
                 (unsigned long long)max);
    return -1;
  }
  return 0;
}

/* ---- Connections ------------------------------------------------------------------- */

static size_t conn_on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  (void)io;
  get_conn *conn = user;
  return conn->session ? get_spdy_read(conn, data, len) : get_http1_read(conn, data, len);
}

static void conn_on_writable(io_conn *io, size_t room, void *user) {
  (void)io;
  get_conn *conn = user;
  if (conn->session) get_spdy_writable(conn, room);
}

static void conn_on_open(io_conn *io, void *user) {
  get_conn *conn = user;
  get_origin *origin = conn->origin;
  const get_options *opt = origin->run->opt;
  conn->open = 1;
  conn->t_open = get_now_ns();
  conn->how = io_conn_negotiation(io);
  conn->proto = io_conn_protocol(io);
  if (!io_conn_is_tls(io))
    conn->proto = opt->http1 ? IO_PROTO_HTTP1 : opt->spdy ? opt->spdy : IO_PROTO_SPDY3_1;
  if (origin->sessions == 1 || origin->connect_ns == 0)
    origin->connect_ns = conn->t_open - conn->t_connect;
  origin->proto = conn->proto;
  origin->how = conn->how;
  origin->tls_version = io_conn_is_tls(io) ? io_conn_tls_version(io) : NULL;
  if (opt->verbose)
    fprintf(stderr, "* %s://%s: %s negotiated by %s%s%s\n", origin->scheme, origin->authority,
            io_proto_name(conn->proto), io_negotiation_name(conn->how),
            io_conn_is_tls(io) ? ", " : "", io_conn_is_tls(io) ? io_conn_tls_version(io) : "");
  int rv = conn->proto == IO_PROTO_HTTP1 ? get_http1_start(conn) : get_spdy_start(conn);
  if (rv != 0) io_conn_abort(io, rv);
}

static void conn_on_close(io_conn *io, int status, void *user) {
  get_conn *conn = user;
  get_origin *origin = conn->origin;
  conn->closed = 1;
  if (!conn->open && status != 0) {
    const char *detail = io_conn_error_detail(io);
    snprintf(origin->error, sizeof(origin->error), "cannot connect to %s:%d: %s%s%s", origin->host,
             origin->port, io_strerror(status), detail[0] ? ": " : "", detail);
  }
  if (conn->session)
    get_spdy_closed(conn, status);
  else
    get_http1_closed(conn, status);
  for (int i = 0; i < origin->n_conns; i++)
    if (origin->conns[i] == conn) {
      origin->conns[i] = origin->conns[--origin->n_conns];
      break;
    }
  free(conn);
  get_origin_progress(origin);
}

static int origin_connect(get_origin *origin) {
  get_run *run = origin->run;
  if (origin->n_conns >= GET_MAX_CONNS) return -1;
  get_conn *conn = calloc(1, sizeof(*conn));
  if (!conn) return -1;
  conn->origin = origin;
  conn->t_connect = get_now_ns();
  io_config config;
  io_config_init(&config);
  config.handshake_timeout_ms = run->opt->connect_timeout_ms;
  config.idle_timeout_ms = 0;
  config.close_linger_ms = 200;
  static const io_conn_callbacks callbacks = {.on_open = conn_on_open,
                                              .on_read = conn_on_read,
                                              .on_writable = conn_on_writable,
                                              .on_close = conn_on_close};
  int https = strcmp(origin->scheme, "https") == 0;
  int rv = io_conn_connect(&conn->io, run->loop, (struct sockaddr *)&origin->addr,
                           https ? run->tls : NULL, origin->host, &config, &callbacks, conn);
  if (rv) {
    snprintf(origin->error, sizeof(origin->error), "cannot connect to %s:%d: %s", origin->host,
             origin->port, io_strerror(rv));
    free(conn);
    return -1;
  }
  origin->conns[origin->n_conns++] = conn;
  origin->sessions++;
  return 0;
}

static void origin_fail_waiting(get_origin *origin, const char *why) {
  for (get_job *j = origin->jobs; j; j = j->next)
    if (j->state == JOB_WAITING || j->state == JOB_ACTIVE) get_job_fail(j, "%s", why);
}

void get_origin_progress(get_origin *origin) {
  get_run *run = origin->run;
  int waiting = 0, active = 0;
  for (get_job *j = origin->jobs; j; j = j->next) {
    if (j->state == JOB_WAITING) waiting++;
    if (j->state == JOB_ACTIVE) active++;
  }
  if (run->deadline_hit) {
    origin_fail_waiting(origin, "timed out (--max-time)");
    for (int i = 0; i < origin->n_conns; i++) io_conn_abort(origin->conns[i]->io, UV_ETIMEDOUT);
    return;
  }
  if (waiting == 0 && active == 0) {
    for (int i = 0; i < origin->n_conns; i++) {
      get_conn *c = origin->conns[i];
      if (c->session && c->open && !c->closed && !c->goaway_sent) {
        c->goaway_sent = 1;
        c->dead = 1;
        spdy_submit_goaway(c->session, SPDY_GOAWAY_OK);
        get_spdy_writable(c, io_conn_room(c->io) + 4096); /* out before the close */
      }
      io_conn_close(c->io);
    }
    return;
  }
  if (waiting == 0) return;
  int is_http1 = run->opt->http1 || origin->proto == IO_PROTO_HTTP1;
  int live = 0;
  for (int i = 0; i < origin->n_conns; i++)
    if (!origin->conns[i]->dead) live++;
  if (is_http1) {
    for (int i = 0; i < origin->n_conns; i++) get_http1_next(origin->conns[i]);
    int want = run->opt->http1_conns;
    /* count again: next() may have taken jobs */
    waiting = 0;
    for (get_job *j = origin->jobs; j; j = j->next) waiting += j->state == JOB_WAITING;
    while (waiting > 0 && live < want && origin->error[0] == '\0') {
      if (origin->sessions >= MAX_SESSIONS_PER_ORIGIN + want || origin_connect(origin) != 0) break;
      live++;
      waiting--;
    }
  } else if (live == 0) {
    if (origin->error[0] == '\0' && origin->sessions < MAX_SESSIONS_PER_ORIGIN)
      origin_connect(origin);
  }
  live = 0;
  for (int i = 0; i < origin->n_conns; i++)
    if (!origin->conns[i]->dead) live++;
  if (live == 0 && origin->n_conns == 0)
    origin_fail_waiting(origin,
                        origin->error[0] ? origin->error : "no connection left to retry on");
}

static void on_deadline(uv_timer_t *timer) {
  get_run *run = timer->data;
  run->deadline_hit = 1;
  for (get_origin *o = run->origins; o; o = o->next) get_origin_progress(o);
}

/* ---- The run ----------------------------------------------------------------------- */

static int load_body(get_run *run, const char *file) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_BODY) {
    fprintf(stderr, "speedy get: cannot read --data @%s: %s\n", file,
            fd < 0 ? strerror(errno) : "not a regular file of at most 1 GiB");
    if (fd >= 0) close(fd);
    return -1;
  }
  run->body_len = (size_t)st.st_size;
  run->body = malloc(run->body_len ? run->body_len : 1);
  size_t got = 0;
  while (run->body && got < run->body_len) {
    ssize_t n = read(fd, run->body + got, run->body_len - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (!run->body || got != run->body_len) {
    fprintf(stderr, "speedy get: cannot read --data @%s\n", file);
    return -1;
  }
  return 0;
}

static get_origin *origin_find(get_run *run, const char *scheme, const char *host, int port,
                               const char *authority) {
  get_origin **tail = &run->origins;
  for (get_origin *o = run->origins; o; o = o->next) {
    if (strcmp(o->scheme, scheme) == 0 && strcmp(o->host, host) == 0 && o->port == port) return o;
    tail = &o->next;
  }
  get_origin *o = calloc(1, sizeof(*o));
  if (!o) return NULL;
  o->run = run;
  snprintf(o->scheme, sizeof(o->scheme), "%s", scheme);
  snprintf(o->host, sizeof(o->host), "%s", host);
  snprintf(o->authority, sizeof(o->authority), "%s", authority);
  o->port = port;
  *tail = o;
  return o;
}

static int make_tls(get_run *run) {
  const get_options *opt = run->opt;
  const char *protocols[2];
  size_t n = 0;
  if (opt->http1) {
    protocols[n++] = "http/1.1";
  } else if (opt->spdy) {
    protocols[n++] = io_proto_name(opt->spdy);
    protocols[n++] = "http/1.1";
  }
  char err[300] = "";
  int rv = io_tls_client_new(&run->tls, opt->cacert, n ? protocols : NULL, n,
                             opt->insecure ? IO_TLS_INSECURE : 0, err, sizeof(err));
  if (rv) {
    fprintf(stderr, "speedy get: %s\n", err[0] ? err : io_strerror(rv));
    return -1;
  }
  return 0;
}

static void run_free(get_run *run) {
  for (get_origin *o = run->origins, *next; o; o = next) {
    next = o->next;
    for (get_job *j = o->jobs, *jn; j; j = jn) {
      jn = j->next;
      if (j->fd > 1) close(j->fd);
      free(j->held);
      free(j->url);
      free(j->path);
      free(j);
    }
    free(o);
  }
  free(run->all);
  free(run->body);
  io_tls_del(run->tls);
}

int get_main(int argc, char **argv) {
  get_options opt = {.priority = 3,
                     .max_pushes = DEFAULT_MAX_PUSHES,
                     .stream_window = DEFAULT_STREAM_WINDOW,
                     .session_window = DEFAULT_SESSION_WINDOW,
                     .connect_timeout_ms = 10000,
                     .http1_conns = 6};
  int status = parse_options(&opt, argc, argv);
  get_run run = {.opt = &opt};
  uv_loop_t loop;
  int loop_ready = 0;
  if (status != 0) goto out;
  status = 1;
  if (opt.data_file && load_body(&run, opt.data_file) != 0) goto out;
  int n_urls = argc - optind;
  run.all = calloc((size_t)n_urls, sizeof(*run.all));
  if (!run.all) goto out;
  int need_tls = 0;
  for (int i = 0; i < n_urls; i++) {
    const char *url = argv[optind + i];
    char scheme[8], host[256], authority[300], err[200];
    int port;
    char *path;
    if (get_url_parse(url, scheme, sizeof(scheme), host, sizeof(host), &port, authority,
                      sizeof(authority), &path, err, sizeof(err)) != 0) {
      fprintf(stderr, "speedy get: bad URL '%s': %s\n", url, err);
      status = 2;
      goto out;
    }
    get_origin *origin = origin_find(&run, scheme, host, port, authority);
    get_job *job = origin ? job_alloc(origin, url, path) : NULL;
    if (!job) {
      free(path);
      fprintf(stderr, "speedy get: out of memory\n");
      goto out;
    }
    job->index = i;
    job->out_name = i < opt.n_outputs ? opt.outputs[i] : NULL;
    job->to_stdout = !job->out_name && !opt.remote_name && !opt.dir;
    run.all[run.n_all++] = job;
    need_tls |= strcmp(scheme, "https") == 0;
  }
  if (need_tls && make_tls(&run) != 0) goto out;
  if (uv_loop_init(&loop) != 0) goto out;
  loop_ready = 1;
  run.loop = &loop;
  for (get_origin *o = run.origins; o; o = o->next) {
    char err[400];
    if (get_url_resolve(&opt, o->host, o->port, &o->addr, err, sizeof(err)) != 0)
      snprintf(o->error, sizeof(o->error), "%s", err);
    get_origin_progress(o);
  }
  if (opt.max_time_ms) {
    uv_timer_init(&loop, &run.deadline);
    run.deadline.data = &run;
    uv_timer_start(&run.deadline, on_deadline, opt.max_time_ms, 0);
    uv_unref((uv_handle_t *)&run.deadline);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  status = get_summary(&run);
out:
  if (loop_ready) {
    if (opt.max_time_ms) uv_close((uv_handle_t *)&run.deadline, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  for (int i = 0; i < opt.n_headers; i++) free((char *)opt.headers[i].name);
  run_free(&run);
  return status < 0 ? 0 : status;
}
