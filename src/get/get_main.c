/* get_main.c — `speedy get URL...`: grouping URLs by origin (one SPDY session per
 * origin, or up to N HTTP/1.1 connections), connections and their retries, the event loop
 * and the exit status (0 all fetched, 1 any URL failed — each failure named —, 2 bad
 * usage). Options are get_opts.c's; responses get_resp.c's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "get.h"
#include "get_int.h"
#include "http_client.h"

#define MAX_SESSIONS_PER_ORIGIN 8 /* the first plus retries and stream-id rollovers */

int64_t get_now_ns(void) { return (int64_t)uv_hrtime(); }

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
  /* 304 and 204 carry no body whatever their content-length says (RFC 9112 6.3) */
  if (job->has_length && job->bytes != job->content_length &&
      http_client_status_has_body(job->status)) {
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
    conn->proto = opt->http1 ? IO_PROTO_HTTP1 : opt->proto ? opt->proto : IO_PROTO_SPDY3_1;
  if (origin->sessions == 1 || origin->connect_ns == 0)
    origin->connect_ns = conn->t_open - conn->t_connect;
  origin->proto = conn->proto;
  origin->how = conn->how;
  origin->tls_version = io_conn_is_tls(io) ? io_conn_tls_version(io) : NULL;
  /* when TLS chose no protocol although SPDY was offered: why, and what to try (--npn) */
  snprintf(origin->hint, sizeof(origin->hint), "%s", io_conn_negotiation_hint(io));
  if (opt->verbose)
    get_trace_note(origin->run, "connection %d: %s negotiated by %s%s%s%s%s", conn->number,
                   io_proto_name(conn->proto), io_negotiation_name(conn->how),
                   io_conn_is_tls(io) ? " over " : "",
                   io_conn_is_tls(io) ? io_conn_tls_version(io) : "", origin->hint[0] ? ": " : "",
                   origin->hint);
  int rv = conn->proto == IO_PROTO_HTTP1 ? get_http1_start(conn) : get_spdy_start(conn);
  if (rv != 0) io_conn_abort(io, rv);
}

static void conn_on_close(io_conn *io, int status, void *user) {
  get_conn *conn = user;
  get_origin *origin = conn->origin;
  conn->closed = 1;
  if (origin->run->opt->verbose)
    get_trace_note(origin->run, "connection %d closed%s%s", conn->number, status ? ": " : "",
                   status ? io_strerror(status) : "");
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
  conn->number = ++run->conns_opened;
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
  if (run->opt->verbose) {
    char addr[64] = "?";
    const struct sockaddr *sa = (const struct sockaddr *)&origin->addr;
    if (sa->sa_family == AF_INET6)
      uv_ip6_name((const struct sockaddr_in6 *)sa, addr, sizeof(addr));
    else
      uv_ip4_name((const struct sockaddr_in *)sa, addr, sizeof(addr));
    get_trace_note(run, "connection %d: connecting to %s port %d for %s://%s%s", conn->number, addr,
                   origin->port, origin->scheme, origin->authority,
                   https && run->opt->npn ? " (NPN only, TLS 1.2 at most)" : "");
  }
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
        speedy_submit_goaway(c->session, SPEEDY_RST_NONE, NULL, 0);
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
    /* count again: next() may have taken jobs; a connection still opening takes one */
    waiting = 0;
    for (get_job *j = origin->jobs; j; j = j->next) waiting += j->state == JOB_WAITING;
    for (int i = 0; i < origin->n_conns; i++)
      if (!origin->conns[i]->open && !origin->conns[i]->dead) waiting--;
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
  const char *protocols[HTTP_CLIENT_MAX_OFFERED];
  size_t n = 0;
  if (opt->http1) {
    protocols[n++] = "http/1.1";
  } else if (opt->proto == IO_PROTO_H2) {
    protocols[n++] = "h2"; /* --proto h2: HTTP/2 or nothing */
  } else if (opt->proto) {
    protocols[n++] = io_proto_name(opt->proto);
    protocols[n++] = "http/1.1";
  } else {
    n = http_client_default_protocols(opt->npn, protocols);
  }
  char err[300] = "";
  /* --npn as in speedy bench: NPN only, which exists up to TLS 1.2 */
  unsigned flags =
      (opt->insecure ? IO_TLS_INSECURE : 0) | (opt->npn ? IO_TLS_NO_ALPN | IO_TLS_MAX_1_2 : 0);
  int rv = io_tls_client_new(&run->tls, opt->cacert, protocols, n, flags, err, sizeof(err));
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
      get_resp_free(j);
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

/* -d DIR: made if missing, parents too (curl's --create-dirs). */
static int make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (char *p = path + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    char saved = *p;
    *p = '\0';
    struct stat st;
    if (mkdir(path, 0755) != 0 &&
        (errno != EEXIST || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))) {
      if (errno == EEXIST) errno = ENOTDIR;
      return -1;
    }
    *p = saved;
    if (saved == '\0') return 0;
  }
}

int get_main(int argc, char **argv) {
  get_options opt;
  int status = get_opts_parse(&opt, argc, argv);
  get_run run = {.opt = &opt, .t_start = get_now_ns()};
  uv_loop_t loop;
  int loop_ready = 0;
  if (status != 0) goto out;
  status = 1;
  run.method = get_opts_method(&opt);
  run.no_body = strcmp(run.method, "HEAD") == 0;
  if (get_opts_load_body(&run) != 0) goto out;
  if (opt.dir && make_dirs(opt.dir) != 0) {
    fprintf(stderr, "speedy get: cannot create --dir %s: %s\n", opt.dir, strerror(errno));
    goto out;
  }
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
  get_progress_start(&run);
  uv_run(&loop, UV_RUN_DEFAULT);
  get_progress_stop(&run);
  status = get_summary(&run);
out:
  if (loop_ready) {
    if (opt.max_time_ms) uv_close((uv_handle_t *)&run.deadline, NULL);
    if (run.progress_on) uv_close((uv_handle_t *)&run.progress, NULL);
    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
  }
  for (int i = 0; i < opt.n_headers; i++) free((char *)opt.headers[i].name);
  run_free(&run);
  return status < 0 ? 0 : status;
}
