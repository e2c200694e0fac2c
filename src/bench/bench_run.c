/* bench_run.c — one thread of `speedy bench`: its own uv loop, its connections, the
 * request schedule, verification of every response, warm-up, the stop time, the hard
 * deadline and --hold.
 *
 * Schedule. Closed loop (the default): each connection keeps up to -m requests in flight
 * and sends the next one when one finishes; with -n each connection owns an equal share
 * of the count, so every connection carries traffic and the total is exact. Open loop
 * (--rate): request k is due at start + k / rate, whatever the server does; a due request
 * waits for a free stream or pipeline slot, and its latency counts from when it was due,
 * so a stalled server cannot hide its queue (no coordinated omission).
 *
 * The schedule starts once the initial connections are set up (connection set-up time is
 * reported apart); requests due before the end of --warmup are sent but not measured.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bench_int.h"
#include "http_client.h"

#define MAX_CONNECTING 256 /* connection attempts in progress at once, per thread */
#define MAX_RETRIES 4096   /* open loop: requests waiting to be sent again */

struct bench_shared {
  int threads;
  atomic_int holding;
  atomic_uint_fast64_t done;          /* requests finished (ok or failed), warm-up included */
  atomic_uint_fast64_t measured_done; /* of which measured: the progress against -n */
  atomic_int reported;                /* a connection failure was printed: one line a run */
};

enum thread_state { RUNNING, DONE, HOLDING, CLOSING };

struct bench_thread {
  const bench_options *opt;
  bench_thread_args *args;
  bench_stats *stats;
  uv_loop_t loop;
  io_tls *tls;
  int tick_fd; /* open loop: a timerfd for the next due request (libuv's timers
                  have 1 ms steps: too coarse for due times) */
  uv_poll_t tick;
  uv_timer_t stop;     /* -D: end of the measured window; --hold: end of the hold */
  uv_timer_t deadline; /* --max-time */
  uv_timer_t progress; /* thread 0 on a terminal */
  int timers_open;
  int show_progress;
  enum thread_state state;
  bench_conn **conns;
  int n_conns;
  int live;            /* connections not yet closed */
  int initial_pending; /* initial connections not yet open or failed */
  int connecting;      /* initial connections being set up now */
  int next_initial;
  int started;
  int reconnects_left;
  uint64_t stream_retries_left; /* bench_request_retry's budget */
  int64_t t_start, t_measure, t_stop;
  uint64_t outstanding; /* -n: measured requests not yet finished (ok or failed) */
  uint64_t quota_left;  /* open loop with -n: measured requests not yet sent */
  uint64_t in_flight;
  uint64_t next_due; /* open loop: index of the next scheduled request */
  int64_t period_ns;
  int64_t retries[MAX_RETRIES]; /* open loop: due times of requests to send again */
  int n_retries;
  uint64_t sample_counter;
  unsigned path_counter;
  int rr;
  uint64_t done_unpublished, measured_done_unpublished;
  /* request fields of each path: [0] for SPDY, [1] for HTTP/2 */
  /* One list per path for every protocol: libspeedy maps HTTP/2's names for SPDY. */
  speedy_header session_headers[BENCH_MAX_PATHS][HTTP_CLIENT_MAX_PSEUDO + 2];
  size_t n_session_headers;
  char *http1_requests[BENCH_MAX_PATHS];
  size_t http1_lengths[BENCH_MAX_PATHS];
  char user_agent[32];
};

static void thread_check_finish(bench_thread *th);
static void thread_pump(bench_thread *th, int64_t now);
static int conn_start(bench_thread *th, int index, uint64_t quota, int initial);

int64_t bench_now_ns(void) { return (int64_t)uv_hrtime(); }

const char *bench_error_name(bench_error kind) {
  static const char *const names[BENCH_ERR_COUNT] = {"connect",  "tls",     "status", "length",
                                                     "size",     "content", "reset",  "closed",
                                                     "protocol", "timeout"};
  return (unsigned)kind < BENCH_ERR_COUNT ? names[kind] : "unknown";
}

bench_shared *bench_shared_new(int threads) {
  bench_shared *shared = calloc(1, sizeof(*shared));
  if (!shared) return NULL;
  shared->threads = threads;
  atomic_init(&shared->holding, 0);
  atomic_init(&shared->done, 0);
  atomic_init(&shared->measured_done, 0);
  atomic_init(&shared->reported, 0);
  return shared;
}

void bench_shared_del(bench_shared *shared) { free(shared); }

const bench_options *bench_conn_options(const bench_conn *conn) { return conn->thread->opt; }

bench_stats *bench_conn_stats(const bench_conn *conn) { return conn->thread->stats; }

const speedy_header *bench_spdy_headers(const bench_conn *conn, int path, size_t *n) {
  *n = conn->thread->n_session_headers;
  return conn->thread->session_headers[path];
}

const char *bench_http1_request(const bench_conn *conn, int path, size_t *len) {
  *len = conn->thread->http1_lengths[path];
  return conn->thread->http1_requests[path];
}

static int is_n_mode(const bench_thread *th) { return th->opt->requests > 0; }

/* ---- Verification and recording ---------------------------------------------------- */

/* FNV-1a: independent of how the body was cut into chunks. Only sampled bodies pay. */
void bench_request_body(bench_req *req, const uint8_t *data, size_t len) {
  req->body += len;
  if (!req->hashing) return;
  uint64_t h = req->hash;
  for (size_t i = 0; i < len; i++) h = (h ^ data[i]) * 0x100000001b3ull;
  req->hash = h;
}

static void publish_done(bench_thread *th, int force) {
  if (th->done_unpublished >= 64 || (force && th->done_unpublished)) {
    atomic_fetch_add(&th->args->shared->done, th->done_unpublished);
    atomic_fetch_add(&th->args->shared->measured_done, th->measured_done_unpublished);
    th->done_unpublished = 0;
    th->measured_done_unpublished = 0;
  }
}

/* req no longer hashes for its path's reference (it ended, failed or goes again). */
static void drop_ref_hasher(bench_thread *th, bench_req *req) {
  if (!req->ref_hasher) return;
  req->ref_hasher = 0;
  th->stats->refs[req->path].hasher_out = 0;
}

static void request_release(bench_conn *conn, bench_req *req) {
  bench_thread *th = conn->thread;
  drop_ref_hasher(th, req);
  req->in_use = 0;
  conn->in_flight--;
  th->in_flight--;
  if (req->measured && is_n_mode(th)) th->outstanding--;
  th->done_unpublished++;
  if (req->measured) th->measured_done_unpublished++;
  publish_done(th, 0);
}

void bench_request_failed(bench_conn *conn, bench_req *req, bench_error kind, int64_t now) {
  (void)now;
  bench_stats *st = conn->thread->stats;
  if (!req->in_use) return;
  st->failed++;
  st->errors[kind]++;
  if (req->measured) st->measured_failed++;
  request_release(conn, req);
}

void bench_request_done(bench_conn *conn, bench_req *req, int64_t now) {
  bench_thread *th = conn->thread;
  bench_stats *st = th->stats;
  bench_error kind = BENCH_ERR_COUNT;
  bench_reference *ref = &st->refs[req->path];
  conn->responses++;
  st->status_classes[req->status >= 100 && req->status <= 599 ? req->status / 100 : 0]++;
  if (req->status < 200 || req->status > 299) {
    kind = BENCH_ERR_STATUS;
  } else if (req->has_length && req->body != req->content_length) {
    kind = BENCH_ERR_LENGTH;
  } else if (!ref->have) {
    ref->have = 1;
    ref->size = req->body;
    ref->have_hash = req->hashing;
    ref->hash = req->hash;
  } else if (req->body != ref->size) {
    kind = BENCH_ERR_SIZE;
  } else if (req->hashing) {
    if (!ref->have_hash) {
      ref->have_hash = 1;
      ref->hash = req->hash;
    } else if (req->hash != ref->hash) {
      kind = BENCH_ERR_CONTENT;
    }
  }
  if (kind != BENCH_ERR_COUNT) {
    bench_request_failed(conn, req, kind, now);
    return;
  }
  st->ok++;
  if (th->t_stop > 0 && th->opt->rate <= 0 && now >= th->t_measure && now <= th->t_stop) {
    st->window_ok++;
    st->window_body_bytes += req->body;
  }
  if (req->measured) {
    st->measured_ok++;
    st->body_bytes += req->body;
    bench_hist_record(&st->latency, now - req->t_intended);
    if (req->t_first) bench_hist_record(&st->ttfb, req->t_first - req->t_sent);
    if (now > st->t_last_done) st->t_last_done = now;
  } else {
    st->warmup_requests++;
  }
  request_release(conn, req);
}

/* ---- Sending ----------------------------------------------------------------------- */

bench_req *bench_conn_slot_free(bench_conn *conn) {
  if (conn->in_flight >= conn->n_slots) return NULL;
  if (conn->proto == IO_PROTO_HTTP1) {
    bench_req *req = &conn->slots[(conn->ring_head + conn->in_flight) % conn->n_slots];
    return req->in_use ? NULL : req;
  }
  for (int i = 0; i < conn->n_slots; i++)
    if (!conn->slots[i].in_use) return &conn->slots[i];
  return NULL;
}

static int conn_usable(const bench_conn *conn) {
  return conn && conn->opened && !conn->closing && !conn->dead;
}

/* Sends one request on conn (retry: one sent before, already counted against the
 * quotas). Returns 0, or -1 when the connection took none. */
static int conn_issue(bench_conn *conn, int64_t t_intended, int64_t now, int retry) {
  bench_thread *th = conn->thread;
  bench_req *req = bench_conn_slot_free(conn);
  if (!req) return -1;
  memset(req, 0, sizeof(*req));
  req->in_use = 1;
  req->measured = t_intended >= th->t_measure;
  req->path = (int)(th->path_counter++ % (unsigned)th->opt->n_paths);
  req->t_intended = t_intended;
  req->t_sent = now;
  req->hash = 0xcbf29ce484222325ull;
  /* One request at a time hashes for a path without a reference hash (not every request
   * in flight until the first ends: with -c 100 -m 100 that was 10,000 hashed bodies);
   * after that, every --verify-every'th. */
  bench_reference *ref = &th->stats->refs[req->path];
  req->ref_hasher = !ref->have_hash && !ref->hasher_out;
  if (req->ref_hasher) ref->hasher_out = 1;
  req->hashing = req->ref_hasher ||
                 (th->opt->verify_every && ++th->sample_counter % th->opt->verify_every == 0);
  conn->in_flight++;
  th->in_flight++;
  if (req->measured && !retry) {
    bench_stats *st = th->stats;
    if (!st->sends) st->t_first_send = now;
    st->t_last_send = now;
    st->sends++;
    if (th->opt->rate > 0) bench_hist_record(&st->send_lag, now - t_intended);
    if (is_n_mode(th) && th->opt->rate <= 0) conn->quota--;
    if (is_n_mode(th) && th->opt->rate > 0) th->quota_left--;
  }
  int rv = conn->proto == IO_PROTO_HTTP1 ? bench_http1_send(conn, req) : bench_spdy_send(conn, req);
  if (rv != 0) {
    bench_request_failed(conn, req, BENCH_ERR_PROTOCOL, now);
    conn->dead = 1;
  }
  return 0;
}

static int closed_loop_may_send(const bench_thread *th, const bench_conn *conn, int64_t now) {
  if (now < th->t_measure) return 1; /* warm-up */
  if (is_n_mode(th)) return conn->quota > 0;
  return now < th->t_stop;
}

static void conn_pump(bench_conn *conn, int64_t now) {
  bench_thread *th = conn->thread;
  while (conn_usable(conn) && conn->in_flight < conn->n_slots &&
         closed_loop_may_send(th, conn, now))
    if (conn_issue(conn, now, now, 0) != 0) break;
}

static void on_timer(uv_timer_t *timer) {
  bench_thread *th = timer->data;
  thread_pump(th, bench_now_ns());
  thread_check_finish(th);
}

static void on_tick(uv_poll_t *poll, int status, int events) {
  (void)status, (void)events;
  bench_thread *th = poll->data;
  uint64_t expirations;
  ssize_t got = read(th->tick_fd, &expirations, sizeof(expirations)); /* EAGAIN: spurious */
  (void)got;
  thread_pump(th, bench_now_ns());
  thread_check_finish(th);
}

/* Arms the tick for monotonic time `due` (uv_hrtime's clock is CLOCK_MONOTONIC). */
static void tick_arm(bench_thread *th, int64_t due) {
  struct itimerspec its = {0};
  its.it_value.tv_sec = (time_t)(due / 1000000000);
  its.it_value.tv_nsec = (long)(due % 1000000000);
  if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
  timerfd_settime(th->tick_fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void tick_disarm(bench_thread *th) {
  struct itimerspec its = {0};
  if (th->tick_fd >= 0) timerfd_settime(th->tick_fd, 0, &its, NULL);
}

/* A connection with a free slot, round robin; NULL when all are full. */
static bench_conn *open_loop_conn(bench_thread *th) {
  for (int i = 0; i < th->n_conns; i++) {
    bench_conn *c = th->conns[(th->rr + i) % th->n_conns];
    if (conn_usable(c) && c->in_flight < c->n_slots) {
      th->rr = (c->index + 1) % th->n_conns;
      return c;
    }
  }
  return NULL;
}

/* Open loop: sends every request that is due, as long as some connection has room;
 * requests to send again go first. After -D no more are sent: what is still due then
 * is the server's backlog and is reported as such. */
static void open_loop_pump(bench_thread *th, int64_t now) {
  if (!is_n_mode(th) && now >= th->t_stop) return;
  while (th->n_retries > 0) {
    bench_conn *conn = open_loop_conn(th);
    if (!conn) return;
    conn_issue(conn, th->retries[--th->n_retries], now, 1);
  }
  for (;;) {
    int64_t due = th->t_start + (int64_t)th->next_due * th->period_ns;
    if (due >= th->t_measure && is_n_mode(th) && th->quota_left == 0) return;
    if (!is_n_mode(th) && due >= th->t_stop) return;
    if (due > now) {
      tick_arm(th, due);
      return;
    }
    bench_conn *conn = open_loop_conn(th);
    if (!conn) return; /* backlog: sent as soon as a slot frees */
    conn_issue(conn, due, now, 0);
    th->next_due++;
  }
}

static void thread_pump(bench_thread *th, int64_t now) {
  if (th->state != RUNNING || !th->started) return;
  if (th->opt->rate > 0) {
    open_loop_pump(th, now);
    return;
  }
  for (int i = 0; i < th->n_conns; i++)
    if (th->conns[i]) conn_pump(th->conns[i], now);
}

/* ---- Connections ------------------------------------------------------------------- */

static void conn_shutdown(bench_conn *conn) {
  if (conn->closing) return;
  conn->closing = 1;
  if (conn->session && conn->opened) bench_spdy_goaway(conn);
  io_conn_close(conn->io);
}

static void conn_after_input(bench_conn *conn, int64_t now) {
  bench_thread *th = conn->thread;
  if (th->opt->rate > 0)
    thread_pump(th, now);
  else if (th->state == RUNNING && th->started)
    conn_pump(conn, now);
  if (conn->dead && conn->in_flight == 0) conn_shutdown(conn);
  thread_check_finish(th);
}

static size_t conn_on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  (void)io;
  bench_conn *conn = user;
  size_t used = conn->proto == IO_PROTO_HTTP1 ? bench_http1_read(conn, data, len)
                                              : bench_spdy_read(conn, data, len);
  conn_after_input(conn, bench_now_ns());
  return used;
}

static void conn_on_writable(io_conn *io, size_t room, void *user) {
  (void)io;
  bench_conn *conn = user;
  if (conn->session) bench_spdy_writable(conn, room);
}

static void thread_start_schedule(bench_thread *th) {
  if (th->started || th->state != RUNNING) return;
  th->started = 1;
  th->t_start = bench_now_ns();
  th->t_measure = th->t_start + (int64_t)(th->opt->warmup_s * 1e9);
  th->stats->t_measure = th->t_measure;
  if (!is_n_mode(th)) {
    th->t_stop = th->t_measure + (int64_t)(th->opt->duration_s * 1e9);
    uint64_t ms = (uint64_t)((th->t_stop - th->t_start) / 1000000) + 1;
    uv_timer_start(&th->stop, on_timer, ms, 0);
  }
  thread_pump(th, th->t_start);
  thread_check_finish(th);
}

static uint64_t initial_quota(const bench_thread *th, int i) {
  if (!is_n_mode(th) || th->opt->rate > 0) return 0;
  uint64_t n = th->args->requests, c = (uint64_t)th->n_conns;
  return n / c + ((uint64_t)i < n % c ? 1 : 0);
}

/* Opens initial connections, at most MAX_CONNECTING at a time (a burst of thousands of
 * SYNs would overflow the server's accept queue and cost seconds of SYN retries). */
static void launch_initial(bench_thread *th) {
  while (th->state == RUNNING && th->next_initial < th->n_conns &&
         th->connecting < MAX_CONNECTING) {
    int i = th->next_initial++;
    th->connecting++;
    if (conn_start(th, i, initial_quota(th, i), 1) != 0) {
      th->connecting--;
      th->initial_pending--;
    }
  }
  if (th->initial_pending == 0) thread_start_schedule(th);
}

static void initial_resolved(bench_thread *th) {
  th->connecting--;
  th->initial_pending--;
  launch_initial(th);
}

static void conn_on_open(io_conn *io, void *user) {
  bench_conn *conn = user;
  bench_thread *th = conn->thread;
  int64_t now = bench_now_ns();
  conn->opened = 1;
  th->stats->connections_opened++;
  bench_hist_record(&th->stats->connect, now - conn->t_connect);
  conn->proto = io_conn_is_tls(io) ? io_conn_protocol(io)
                : th->opt->http1   ? IO_PROTO_HTTP1
                : th->opt->proto   ? th->opt->proto
                                   : IO_PROTO_SPDY3_1;
  if (!th->stats->proto) {
    th->stats->proto = conn->proto;
    th->stats->how = io_conn_negotiation(io);
    th->stats->tls_version = io_conn_is_tls(io) ? io_conn_tls_version(io) : NULL;
  }
  int rv = conn->proto == IO_PROTO_HTTP1 ? bench_http1_start(conn) : bench_spdy_start(conn);
  if (rv != 0) {
    conn->dead = 1;
    io_conn_abort(io, UV_ENOMEM);
  }
  if (th->started) thread_pump(th, now);
  if (conn->initial) {
    conn->initial = 0;
    initial_resolved(th);
  }
}

/* Fails `count` measured requests that were never sent. */
static void fail_unsent(bench_thread *th, uint64_t count, bench_error kind) {
  if (count == 0) return;
  th->stats->failed += count;
  th->stats->errors[kind] += count;
  th->stats->measured_failed += count;
  if (is_n_mode(th)) th->outstanding -= count;
}

/* The first connection failure of the run (of any thread) is printed: one line, so that
 * a server that refuses or drops every connection does not flood the terminal; the
 * summary counts them all. */
static int may_report(bench_thread *th) {
  if (th->opt->quiet) return 0;
  int expected = 0;
  return atomic_compare_exchange_strong(&th->args->shared->reported, &expected, 1);
}

static void report_connect_error(bench_thread *th, int status, const char *detail) {
  if (!may_report(th)) return;
  fprintf(stderr, "speedy bench: cannot connect to %s:%d: %s%s%s\n", th->opt->host, th->opt->port,
          io_strerror(status), detail[0] ? ": " : "", detail);
}

/* An open connection ended under requests in flight: why, and what the negotiation says
 * about it (a TLS handshake that chose no protocol fell back to HTTP/1.1). */
static void report_closed(bench_thread *th, const bench_conn *conn, io_conn *io, int status) {
  if (!may_report(th)) return;
  const char *detail = io_conn_error_detail(io), *hint = io_conn_negotiation_hint(io);
  fprintf(stderr, "speedy bench: connection to %s:%d ended %s: %s%s%s%s%s\n", th->opt->host,
          th->opt->port, conn->responses ? "with requests in flight" : "before any response",
          status == UV_EOF ? "the server closed it"
          : status == 0    ? "closed"
                           : io_strerror(status),
          detail[0] ? ": " : "", detail, hint[0] ? "; " : "", hint);
}

/* A connection that never opened: its share of -n fails with kind; without a share (-D,
 * --rate) the failed attempt itself is counted. */
static void connection_failed(bench_thread *th, uint64_t quota, bench_error kind) {
  if (quota)
    fail_unsent(th, quota, kind);
  else
    th->stats->errors[kind]++;
}

/* A request the server never processed goes again, on this connection while it still
 * takes requests, else on its replacement: HTTP/1.1 pipelined behind the response that
 * ended the connection (Connection: close; RFC 9112 9.3.1), a SPDY or HTTP/2 stream
 * refused (REFUSED_STREAM, or above the last stream id of a GOAWAY, which the engine
 * closes with REFUSED_STREAM: RFC 9113 8.7, SPDY/3 2.6.6). Only before any byte of its
 * answer, and at most stream_retries_left times a thread (a server that refuses every
 * stream ends as failures, not as a loop). Returns 0 when it will, -1 when it fails
 * instead. */
int bench_request_retry(bench_conn *conn, bench_req *req) {
  bench_thread *th = conn->thread;
  if (!req->in_use || req->t_first || th->state != RUNNING || th->stream_retries_left == 0)
    return -1;
  if (th->opt->rate > 0) {
    if (req->measured && th->n_retries >= MAX_RETRIES) return -1;
    if (req->measured) th->retries[th->n_retries++] = req->t_intended;
  } else if (req->measured && is_n_mode(th)) {
    conn->quota++;
  }
  th->stream_retries_left--;
  th->stats->retried++;
  drop_ref_hasher(th, req);
  req->in_use = 0;
  conn->in_flight--;
  th->in_flight--;
  return 0;
}

static void conn_on_close(io_conn *io, int status, void *user) {
  bench_conn *conn = user;
  bench_thread *th = conn->thread;
  int64_t now = bench_now_ns();
  th->stats->wire_bytes_in += io_conn_bytes_in(io);
  int tls_failure = th->opt->tls && status <= IO_ERR_TLS && status >= IO_ERR_HANDSHAKE_TIMEOUT;
  bench_error kind = th->state == CLOSING && status == UV_ETIMEDOUT ? BENCH_ERR_TIMEOUT
                     : conn->opened                                 ? BENCH_ERR_CLOSED
                     : tls_failure                                  ? BENCH_ERR_TLS
                                                                    : BENCH_ERR_CONNECT;
  if (!conn->opened && kind != BENCH_ERR_TIMEOUT)
    report_connect_error(th, status, io_conn_error_detail(io));
  if (conn->proto == IO_PROTO_HTTP1) bench_http1_closed(conn, status);
  int failed = 0;
  for (int i = 0; i < conn->n_slots; i++)
    if (conn->slots[i].in_use && (kind != BENCH_ERR_CLOSED || conn->proto != IO_PROTO_HTTP1 ||
                                  !conn->dead || bench_request_retry(conn, &conn->slots[i]) != 0)) {
      bench_request_failed(conn, &conn->slots[i], kind, now);
      failed++;
    }
  if (failed && kind == BENCH_ERR_CLOSED) report_closed(th, conn, io, status);
  if (conn->session) bench_spdy_closed(conn);
  th->conns[conn->index] = NULL;
  th->live--;
  /* a connection that answered is replaced (a server may close after every answer, as
   * with Connection: close; each one is progress), one that ended with GOAWAY alone a
   * bounded number of times, one refused at once not at all (no reconnect storm against
   * a server that refuses) */
  int was_open = conn->opened, initial = conn->initial, answered = conn->responses > 0,
      goaway = conn->goaway;
  uint64_t quota = conn->quota;
  int index = conn->index;
  free(conn->slots);
  free(conn);
  int work_left = th->state == RUNNING &&
                  (is_n_mode(th) ? th->outstanding > 0 : !th->started || now < th->t_stop);
  if (!was_open) {
    connection_failed(th, quota, kind);
  } else if (work_left && (answered || (goaway && th->reconnects_left > 0))) {
    if (!answered) th->reconnects_left--;
    th->stats->reconnects++;
    conn_start(th, index, quota, 0);
  } else {
    fail_unsent(th, quota, kind);
  }
  if (initial) initial_resolved(th);
  if (th->live == 0 && th->state == RUNNING && th->opt->rate > 0 && is_n_mode(th) &&
      th->initial_pending == 0) {
    fail_unsent(th, th->quota_left + (uint64_t)th->n_retries, kind);
    th->quota_left = 0;
    th->n_retries = 0;
  }
  thread_check_finish(th);
}

/* Starts a connection. Returns 0, or -1 when it could not even be started (its quota is
 * then failed here). */
static int conn_start(bench_thread *th, int index, uint64_t quota, int initial) {
  const bench_options *opt = th->opt;
  bench_conn *conn = calloc(1, sizeof(*conn));
  bench_req *slots = calloc((size_t)opt->streams, sizeof(*slots));
  int rv = UV_ENOMEM;
  if (conn && slots) {
    conn->thread = th;
    conn->slots = slots;
    conn->n_slots = opt->streams;
    conn->quota = quota;
    conn->index = index;
    conn->initial = initial;
    conn->t_connect = bench_now_ns();
    io_config config;
    io_config_init(&config);
    config.handshake_timeout_ms = opt->connect_timeout_ms;
    config.idle_timeout_ms = 0;
    config.close_linger_ms = 200;
    config.read_pause_bytes = 1u << 20;
    config.read_size = opt->read_size;
    static const io_conn_callbacks callbacks = {.on_open = conn_on_open,
                                                .on_read = conn_on_read,
                                                .on_writable = conn_on_writable,
                                                .on_close = conn_on_close};
    rv = io_conn_connect(&conn->io, &th->loop, (const struct sockaddr *)&opt->addr,
                         opt->tls ? th->tls : NULL, opt->host, &config, &callbacks, conn);
  }
  if (rv != 0) {
    report_connect_error(th, rv, "");
    free(slots);
    free(conn);
    connection_failed(th, quota, BENCH_ERR_CONNECT);
    return -1;
  }
  th->conns[index] = conn;
  th->live++;
  return 0;
}

/* ---- The thread's life ------------------------------------------------------------- */

static void close_timers(bench_thread *th) {
  if (!th->timers_open) return;
  th->timers_open = 0;
  tick_disarm(th);
  uv_close((uv_handle_t *)&th->tick, NULL);
  uv_close((uv_handle_t *)&th->stop, NULL);
  uv_close((uv_handle_t *)&th->deadline, NULL);
  if (th->show_progress) {
    uv_close((uv_handle_t *)&th->progress, NULL);
    fputs("\r\033[K", stderr);
  }
}

static void thread_close_all(bench_thread *th) {
  th->state = CLOSING;
  publish_done(th, 1);
  close_timers(th);
  for (int i = 0; i < th->n_conns; i++)
    if (th->conns[i]) conn_shutdown(th->conns[i]);
}

static void on_hold_end(uv_timer_t *timer) { thread_close_all(timer->data); }

static void write_ready_file(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "speedy bench: cannot write --ready-file %s\n", path);
    return;
  }
  fputs("ready\n", f);
  fclose(f);
}

static void thread_check_finish(bench_thread *th) {
  if (th->state != RUNNING || !th->started || th->in_flight > 0) return;
  int64_t now = bench_now_ns();
  int finished = is_n_mode(th) ? th->outstanding == 0 : now >= th->t_stop || th->live == 0;
  if (!finished) return;
  if (th->opt->rate > 0 && !is_n_mode(th) && th->t_stop > th->t_start) {
    uint64_t due = (uint64_t)((th->t_stop - th->t_start + th->period_ns - 1) / th->period_ns);
    th->stats->unsent_due = (due > th->next_due ? due - th->next_due : 0) + (uint64_t)th->n_retries;
  }
  uv_timer_stop(&th->deadline);
  tick_disarm(th);
  if (th->opt->hold_s > 0) {
    th->state = HOLDING;
    publish_done(th, 1);
    int holding = atomic_fetch_add(&th->args->shared->holding, 1) + 1;
    if (holding == th->args->shared->threads && th->opt->ready_file)
      write_ready_file(th->opt->ready_file);
    uv_timer_start(&th->stop, on_hold_end, (uint64_t)(th->opt->hold_s * 1000), 0);
    return;
  }
  th->state = DONE;
  thread_close_all(th);
}

static void on_deadline(uv_timer_t *timer) {
  bench_thread *th = timer->data;
  if (th->state != RUNNING) return;
  int64_t now = bench_now_ns();
  if (!th->opt->quiet && th->args->index == 0)
    fprintf(stderr, "speedy bench: --max-time of %g s reached; stopping\n", th->opt->max_time_s);
  th->state = CLOSING;
  for (int i = 0; i < th->n_conns; i++) {
    bench_conn *conn = th->conns[i];
    if (!conn) continue;
    for (int s = 0; s < conn->n_slots; s++)
      if (conn->slots[s].in_use)
        bench_request_failed(conn, &conn->slots[s], BENCH_ERR_TIMEOUT, now);
    fail_unsent(th, conn->quota, BENCH_ERR_TIMEOUT);
    conn->quota = 0;
    conn->closing = 1;
    io_conn_abort(conn->io, UV_ETIMEDOUT);
  }
  fail_unsent(th, th->quota_left + (uint64_t)th->n_retries, BENCH_ERR_TIMEOUT);
  th->quota_left = 0;
  th->n_retries = 0;
  if (is_n_mode(th) && th->opt->rate <= 0 && th->outstanding > 0)
    fail_unsent(th, th->outstanding, BENCH_ERR_TIMEOUT); /* connections never started */
  publish_done(th, 1);
  close_timers(th);
}

static void on_progress(uv_timer_t *timer) {
  bench_thread *th = timer->data;
  uint64_t total = th->opt->requests;
  if (total == 0) { /* -D: no total to count against */
    uint64_t done = atomic_load(&th->args->shared->done);
    fprintf(stderr, "\r\033[Kspeedy bench: %llu requests done", (unsigned long long)done);
    return;
  }
  uint64_t done = atomic_load(&th->args->shared->measured_done);
  fprintf(stderr, "\r\033[Kspeedy bench: %llu of %llu requests done (%.0f%%)",
          (unsigned long long)done, (unsigned long long)total,
          100.0 * (double)done / (double)total);
}

static int thread_build_requests(bench_thread *th) {
  const bench_options *opt = th->opt;
  snprintf(th->user_agent, sizeof(th->user_agent), "speedy-bench/%s", speedy_version());
  for (int i = 0; i < opt->n_paths; i++) {
    const char *path = opt->paths[i];
    speedy_header *h = th->session_headers[i];
    size_t n_fields = http_client_request_pseudo("GET", opt->scheme, opt->authority, path, h);
    h[n_fields++] = (speedy_header){"user-agent", 10, th->user_agent, strlen(th->user_agent)};
    h[n_fields++] = (speedy_header){"accept", 6, "*/*", 3};
    th->n_session_headers = n_fields;
    size_t cap = strlen(path) + strlen(opt->authority) + 128;
    th->http1_requests[i] = malloc(cap);
    if (!th->http1_requests[i]) return -1;
    int n = snprintf(th->http1_requests[i], cap,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: %s\r\nAccept: */*\r\n\r\n", path,
                     opt->authority, th->user_agent);
    if (n < 0 || (size_t)n >= cap) return -1;
    th->http1_lengths[i] = (size_t)n;
  }
  return 0;
}

static int thread_make_tls(bench_thread *th) {
  const bench_options *opt = th->opt;
  const char *protocols[HTTP_CLIENT_MAX_OFFERED];
  size_t n = 0;
  if (opt->http1)
    protocols[n++] = "http/1.1";
  else if (opt->proto)
    protocols[n++] = io_proto_name(opt->proto);
  else
    n = http_client_default_protocols(opt->npn, protocols);
  unsigned flags =
      (opt->insecure ? IO_TLS_INSECURE : 0) | (opt->npn ? IO_TLS_NO_ALPN | IO_TLS_MAX_1_2 : 0);
  char err[300] = "";
  int rv = io_tls_client_new(&th->tls, opt->cacert, protocols, n, flags, err, sizeof(err));
  if (rv != 0) {
    fprintf(stderr, "speedy bench: %s\n", err[0] ? err : io_strerror(rv));
    return -1;
  }
  return 0;
}

void bench_thread_run(bench_thread_args *args) {
  const bench_options *opt = args->opt;
  bench_thread *th = calloc(1, sizeof(*th));
  args->status = 1;
  if (!th) return;
  th->opt = opt;
  th->args = args;
  th->stats = args->stats;
  th->n_conns = args->connections;
  th->outstanding = args->requests;
  th->quota_left = opt->rate > 0 ? args->requests : 0;
  th->reconnects_left = 4 * args->connections + 16;
  th->stream_retries_left = 16 * (uint64_t)args->connections * (uint64_t)opt->streams + 1024;
  th->period_ns = args->rate > 0 ? (int64_t)(1e9 / args->rate) : 0;
  if (th->period_ns <= 0 && args->rate > 0) th->period_ns = 1;
  th->tick_fd = -1;
  th->conns = calloc((size_t)th->n_conns, sizeof(*th->conns));
  int loop_ready = 0;
  if (!th->conns || thread_build_requests(th) != 0 || (opt->tls && thread_make_tls(th) != 0))
    goto out;
  if (uv_loop_init(&th->loop) != 0) goto out;
  loop_ready = 1;
  th->tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (th->tick_fd < 0 || uv_poll_init(&th->loop, &th->tick, th->tick_fd) != 0) {
    fprintf(stderr, "speedy bench: cannot create a timer\n");
    if (th->tick_fd >= 0) close(th->tick_fd);
    th->tick_fd = -1;
    goto out;
  }
  uv_poll_start(&th->tick, UV_READABLE, on_tick);
  uv_timer_init(&th->loop, &th->stop);
  uv_timer_init(&th->loop, &th->deadline);
  th->tick.data = th->stop.data = th->deadline.data = th;
  th->timers_open = 1;
  uv_timer_start(&th->deadline, on_deadline, (uint64_t)(opt->max_time_s * 1000), 0);
  th->show_progress = args->index == 0 && !opt->quiet && !opt->json && isatty(2);
  if (th->show_progress) {
    uv_timer_init(&th->loop, &th->progress);
    th->progress.data = th;
    uv_timer_start(&th->progress, on_progress, 1000, 1000);
  }
  th->initial_pending = th->n_conns;
  launch_initial(th);
  args->status = 0;
  uv_run(&th->loop, UV_RUN_DEFAULT);
out:
  if (loop_ready) {
    close_timers(th);
    uv_run(&th->loop, UV_RUN_DEFAULT);
    uv_loop_close(&th->loop);
  }
  if (th->tick_fd >= 0) close(th->tick_fd);
  io_tls_del(th->tls);
  for (int i = 0; i < opt->n_paths; i++) free(th->http1_requests[i]);
  free(th->conns);
  free(th);
}
