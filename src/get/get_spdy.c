/* get_spdy.c — `speedy get` over SPDY: one libspdy client session per connection,
 * requests of one origin multiplexed on it, responses to their outputs, pushes checked
 * (same origin, a cap, response headers in the SYN_STREAM or a later HEADERS frame, a
 * push for a resource already requested adopted and the request cancelled), streams
 * refused by REFUSED_STREAM or a GOAWAY put back for one retry on a new session.
 *
 * Output is pulled: the engine produces frames only when the connection has room
 * (get_spdy_writable), so priorities hold below us.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "get_int.h"

#define MAX_REQUEST_HEADERS (GET_MAX_HEADERS + 12)

/* Resets we queued and the server has not read yet, past which we stop reading from it: a
 * server pushing streams we refuse (or that provokes CANCELs) without reading our resets
 * would otherwise grow our queue of them without end. */
#define MAX_UNSENT_RESETS 256
/* Input is handed to the engine in slices of this size, so the check above bites early. */
#define RECV_SLICE 4096

static get_run *run_of(get_conn *conn) { return conn->origin->run; }

static void submit_rst(get_conn *conn, int32_t id, uint32_t status) {
  if (spdy_submit_rst(conn->session, id, status) == 0) conn->resets_unsent++;
}

static int parse_status(const char *v, size_t len) {
  int status = 0;
  size_t i = 0;
  for (; i < len && i < 3 && v[i] >= '0' && v[i] <= '9'; i++) status = status * 10 + (v[i] - '0');
  return i == 3 ? status : -1;
}

static int is_connection_header(const char *name) {
  static const char *const banned[] = {"connection", "host", "keep-alive", "proxy-connection",
                                       "transfer-encoding"};
  for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
    if (strcmp(name, banned[i]) == 0) return 1;
  return 0;
}

static void copy_value(get_push_headers *push, char *dst, size_t cap, const spdy_header *h) {
  size_t n = h->value_len < cap - 1 ? h->value_len : cap - 1;
  memcpy(dst, h->value, n);
  dst[n] = '\0';
  if (n < h->value_len) push->bad = 1; /* too long to be ours */
}

/* ---- Request bodies ---------------------------------------------------------------- */

static int64_t read_body(spdy_session *s, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  (void)s, (void)stream_id;
  get_job *job = source;
  get_run *run = run_of(user);
  size_t left = run->body_len - job->body_off;
  size_t n = left < len ? left : len;
  memcpy(buf, run->body + job->body_off, n);
  job->body_off += n;
  if (job->body_off == run->body_len) *flags |= SPDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

/* ---- Submitting -------------------------------------------------------------------- */

static int has_header(const get_options *opt, const char *name) {
  for (int i = 0; i < opt->n_headers; i++)
    if (strcmp(opt->headers[i].name, name) == 0) return 1;
  return 0;
}

static void trace_headers(const char *dir, int32_t id, const spdy_header *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    fprintf(stderr, "%s [%d] ", dir, (int)id);
    get_out_escaped(stderr, h[i].name, h[i].name_len);
    fputs(": ", stderr);
    get_out_escaped(stderr, h[i].value, h[i].value_len);
    fputc('\n', stderr);
  }
}

/* Submits one waiting job. Returns 0, or -1 when this session takes no more streams. */
static int submit_job(get_conn *conn, get_job *job) {
  get_run *run = run_of(conn);
  const get_options *opt = run->opt;
  get_origin *origin = conn->origin;
  spdy_header h[MAX_REQUEST_HEADERS];
  size_t n = 0;
  int post = run->body != NULL;
  char length[24];
#define ADD(nm, val) (h[n++] = (spdy_header){nm, strlen(nm), val, strlen(val)})
  ADD(":method", post ? "POST" : "GET");
  ADD(":path", job->path);
  ADD(":version", "HTTP/1.1");
  ADD(":host", origin->authority);
  ADD(":scheme", origin->scheme);
  if (!has_header(opt, "user-agent")) ADD("user-agent", "speedy/" SPEEDY_GET_VERSION);
  if (!has_header(opt, "accept")) ADD("accept", "*/*");
  if (post) {
    snprintf(length, sizeof(length), "%zu", run->body_len);
    ADD("content-length", length);
    if (!has_header(opt, "content-type")) ADD("content-type", "application/octet-stream");
  }
#undef ADD
  for (int i = 0; i < opt->n_headers; i++)
    if (!is_connection_header(opt->headers[i].name) &&
        !(post && strcmp(opt->headers[i].name, "content-length") == 0))
      h[n++] = opt->headers[i];
  job->body_off = 0;
  int32_t id =
      spdy_submit_request(conn->session, opt->priority, h, n, post ? read_body : NULL, job, job);
  if (id == SPDY_ERR_STREAM_ID_EXHAUSTED || id == SPDY_ERR_SESSION_CLOSING ||
      id == SPDY_ERR_TOO_MANY_STREAMS)
    return -1;
  if (id < 0) {
    get_job_fail(job, "cannot send the request: %s", spdy_strerror(id));
    return 0;
  }
  if (opt->verbose) trace_headers(">", id, h, n);
  job->state = JOB_ACTIVE;
  job->attempts++;
  job->stream_id = id;
  job->conn = conn;
  job->status = 0;
  job->bytes = 0;
  job->has_length = 0;
  job->t_first = 0;
  if (!job->t_start) job->t_start = get_now_ns();
  return 0;
}

static void submit_waiting(get_conn *conn) {
  for (get_job *j = conn->origin->jobs; j && !conn->dead; j = j->next)
    if (j->state == JOB_WAITING && submit_job(conn, j) != 0) conn->dead = 1;
}

/* ---- Engine callbacks -------------------------------------------------------------- */

static int on_begin_headers(spdy_session *s, int32_t id, spdy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)s, (void)id, (void)associated_id;
  get_conn *conn = user;
  if (kind == SPDY_HEADERS_PUSH) memset(&conn->push, 0, sizeof(conn->push));
  return 0;
}

static void note_header(get_job *job, const spdy_header *h) {
  if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0) {
    job->status = parse_status(h->value, h->value_len);
  } else if (h->name_len == 14 && memcmp(h->name, "content-length", 14) == 0) {
    char v[24];
    size_t n = h->value_len < sizeof(v) - 1 ? h->value_len : sizeof(v) - 1;
    memcpy(v, h->value, n);
    v[n] = '\0';
    char *end;
    unsigned long long len = strtoull(v, &end, 10);
    if (n > 0 && *end == '\0' && v[0] != '-') {
      job->content_length = len;
      job->has_length = 1;
    }
  }
}

static int on_header(spdy_session *s, int32_t id, const spdy_header *h, void *user) {
  get_conn *conn = user;
  if (run_of(conn)->opt->verbose) trace_headers("<", id, h, 1);
  get_job *job = spdy_session_get_stream_user_data(s, id);
  if (job) {
    note_header(job, h);
    return 0;
  }
  /* a push being announced: collect what we must check */
  if (h->name_len == 5 && memcmp(h->name, ":path", 5) == 0)
    copy_value(&conn->push, conn->push.path, sizeof(conn->push.path), h);
  else if (h->name_len == 5 && memcmp(h->name, ":host", 5) == 0)
    copy_value(&conn->push, conn->push.host, sizeof(conn->push.host), h);
  else if (h->name_len == 7 && memcmp(h->name, ":scheme", 7) == 0)
    copy_value(&conn->push, conn->push.scheme, sizeof(conn->push.scheme), h);
  else if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0)
    conn->push.status = parse_status(h->value, h->value_len);
  return 0;
}

/* A push for a URL we asked for and whose response has not started: use the push, cancel
 * the request. Returns the adopted job or NULL; sets *duplicate when the request's own
 * response is already under way (or done): then the push is the transfer to cancel. */
static get_job *adopt_request(get_conn *conn, const char *path, int *duplicate) {
  *duplicate = 0;
  for (get_job *j = conn->origin->jobs; j; j = j->next) {
    if (strcmp(j->path, path) != 0) continue;
    if (j->pushed || j->state == JOB_DONE || (j->state == JOB_ACTIVE && (j->status || j->bytes))) {
      *duplicate = 1;
      return NULL;
    }
    if (j->state == JOB_WAITING) return j;
    if (j->state == JOB_ACTIVE && j->conn == conn && j->status == 0 && j->bytes == 0) {
      spdy_session_set_stream_user_data(conn->session, j->stream_id, NULL);
      j->conn = NULL;
      submit_rst(conn, j->stream_id, SPDY_RST_CANCEL);
      return j;
    }
  }
  return NULL;
}

/* SPDY/2 pushes name the resource by an absolute URL (draft 2, 3.3.1): split it into
 * :scheme, :host and :path so that the same checks apply. */
static void split_absolute_url(get_push_headers *push) {
  const char *p = push->path;
  size_t skip = strncmp(p, "https://", 8) == 0 ? 8 : strncmp(p, "http://", 7) == 0 ? 7 : 0;
  if (skip == 0) return;
  size_t host_len = strcspn(p + skip, "/");
  if (host_len == 0 || host_len >= sizeof(push->host) || p[skip + host_len] != '/') {
    push->bad = 1;
    return;
  }
  snprintf(push->scheme, sizeof(push->scheme), "%.*s", (int)(skip - 3), p);
  memcpy(push->host, p + skip, host_len);
  push->host[host_len] = '\0';
  memmove(push->path, p + skip + host_len, strlen(p + skip + host_len) + 1);
}

/* Counts a refused push for the summary; the first few of another origin or with a bad
 * :path are kept by name (a flood of them costs a counter, not memory). */
static void note_refused_push(get_conn *conn, int kind, const char *why) {
  get_origin *origin = conn->origin;
  const get_push_headers *push = &conn->push;
  origin->pushes_refused[kind]++;
  if (kind == PUSH_OVER_MAX || origin->n_refused_named >= GET_REFUSED_NAMED) return;
  origin->refused_named_kind[origin->n_refused_named] = kind;
  snprintf(origin->refused_named[origin->n_refused_named++], sizeof(origin->refused_named[0]),
           "%.7s://%.100s%.200s: %.60s", push->scheme[0] ? push->scheme : "?",
           push->host[0] ? push->host : "?", push->path, why);
}

static int accept_push(get_conn *conn, int32_t id) {
  get_run *run = run_of(conn);
  get_origin *origin = conn->origin;
  const char *why = NULL;
  split_absolute_url(&conn->push);
  if (run->opt->no_push) {
    why = "push refused (--no-push)";
  } else if (++conn->pushes_seen > run->opt->max_pushes) {
    why = "over --max-pushes";
    note_refused_push(conn, PUSH_OVER_MAX, why);
  } else if (conn->push.bad || conn->push.path[0] != '/') {
    why = "push without a valid :path";
    note_refused_push(conn, PUSH_BAD_PATH, why);
  } else if (strcmp(conn->push.scheme, origin->scheme) != 0 ||
             strcasecmp(conn->push.host, origin->authority) != 0) {
    why = "push from another origin";
    note_refused_push(conn, PUSH_OTHER_ORIGIN, why);
  }
  if (why) {
    if (run->opt->verbose) fprintf(stderr, "* [%d] %s: reset\n", (int)id, why);
    submit_rst(conn, id, SPDY_RST_REFUSED_STREAM);
    return 0;
  }
  int duplicate;
  get_job *job = adopt_request(conn, conn->push.path, &duplicate);
  if (duplicate) {
    if (run->opt->verbose)
      fprintf(stderr, "* [%d] push of a resource already fetched: cancel\n", (int)id);
    submit_rst(conn, id, SPDY_RST_CANCEL);
    return 0;
  }
  if (job) {
    if (run->opt->verbose) fprintf(stderr, "* [%d] push adopted for %s\n", (int)id, job->url);
    job->state = JOB_ACTIVE;
    job->attempts++;
    job->stream_id = id;
    job->conn = conn;
    job->bytes = 0;
    if (!job->t_start) job->t_start = get_now_ns();
  } else {
    job = get_job_new_push(origin, conn->push.path);
    if (!job) return SPDY_ERR_NOMEM;
    job->conn = conn;
    job->stream_id = id;
  }
  job->status = conn->push.status > 0 ? conn->push.status : 0; /* SPDY/2: in the SYN_STREAM */
  spdy_session_set_stream_user_data(conn->session, id, job);
  return 0;
}

static int on_headers_end(spdy_session *s, int32_t id, int end_stream, void *user) {
  (void)end_stream;
  get_conn *conn = user;
  get_job *job = spdy_session_get_stream_user_data(s, id);
  if (!job) {
    if (id % 2 == 0) return accept_push(conn, id);
    return 0;
  }
  if (!job->t_first && job->status > 0) job->t_first = get_now_ns();
  if (job->state == JOB_ACTIVE && get_job_check_size(job, 0) != 0) {
    spdy_session_set_stream_user_data(s, id, NULL);
    job->conn = NULL;
    submit_rst(conn, id, SPDY_RST_CANCEL);
  }
  return 0;
}

static int on_data_chunk(spdy_session *s, int32_t id, const uint8_t *data, size_t len, void *user) {
  get_conn *conn = user;
  get_job *job = spdy_session_get_stream_user_data(s, id);
  if (!job || job->state != JOB_ACTIVE) return 0;
  if (!job->t_first) job->t_first = get_now_ns();
  if (get_job_check_size(job, len) != 0 || get_out_open(run_of(conn), job) != 0 ||
      get_out_write(run_of(conn), job, data, len) != 0) {
    spdy_session_set_stream_user_data(s, id, NULL);
    job->conn = NULL;
    submit_rst(conn, id, SPDY_RST_CANCEL);
    return 0;
  }
  job->bytes += len;
  return 0;
}

/* The job on stream id of this connection. on_stream_close cannot use the stream's user
 * data: the engine has unlinked the stream before it calls back. */
static get_job *job_on_stream(get_conn *conn, int32_t id) {
  for (get_job *j = conn->origin->jobs; j; j = j->next)
    if (j->conn == conn && j->stream_id == id && j->state == JOB_ACTIVE) return j;
  return NULL;
}

static int on_stream_close(spdy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  get_conn *conn = user;
  get_job *job = job_on_stream(conn, id);
  if (!job) return 0;
  job->conn = NULL;
  if (status == SPDY_RST_NONE) {
    if (job->status <= 0) {
      get_job_fail(job, job->status == 0 ? "stream ended without a :status"
                                         : "response with an invalid :status");
    } else if (get_out_open(run_of(conn), job) == 0) {
      get_job_done(job);
    }
    return 0;
  }
  if (status == SPDY_RST_REFUSED_STREAM && !job->pushed && job->attempts < 2 && job->bytes == 0) {
    /* Not processed by the server: once more, on a new session. */
    if (run_of(conn)->opt->verbose)
      fprintf(stderr, "* [%d] refused; retrying %s on a new session\n", (int)id, job->url);
    job->state = JOB_WAITING;
    conn->dead = 1;
    return 0;
  }
  if (status == SPDY_RST_REFUSED_STREAM && conn->goaway_seen)
    get_job_fail(job, "not processed: the server sent GOAWAY (last good stream %d)%s",
                 (int)conn->goaway_last_good, job->attempts > 1 ? " again on retry" : "");
  else if (status == SPDY_RST_PROTOCOL_ERROR && job->status == 0 && job->bytes == 0)
    /* the engine resets a reply without :status or :version; the server may also have */
    get_job_fail(job, "no valid response (a reply needs :status and :version): stream reset: %s",
                 spdy_rst_status_name(status));
  else
    get_job_fail(job, "stream reset: %s", spdy_rst_status_name(status));
  return 0;
}

static int on_goaway(spdy_session *s, int32_t last_good_id, uint32_t status, void *user) {
  (void)s;
  get_conn *conn = user;
  conn->dead = 1;
  conn->goaway_seen = 1;
  conn->goaway_last_good = last_good_id;
  if (run_of(conn)->opt->verbose)
    fprintf(stderr, "* GOAWAY: last good stream %d, status %u\n", (int)last_good_id, status);
  return 0;
}

static void on_frame(spdy_session *s, int sent, spdy_frame_type type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user) {
  (void)s, (void)user;
  fprintf(stderr, "%s %s stream=%d flags=0x%02x length=%u", sent ? ">>" : "<<",
          spdy_frame_type_name(type), (int)id, flags, length);
  if (summary && summary[0]) {
    fputc(' ', stderr);
    get_out_escaped(stderr, summary, strlen(summary));
  }
  fputc('\n', stderr);
}

/* ---- Driving the session ----------------------------------------------------------- */

int get_spdy_start(get_conn *conn) {
  get_run *run = run_of(conn);
  const get_options *opt = run->opt;
  spdy_callbacks *cb;
  spdy_options *so;
  if (spdy_callbacks_new(&cb) != 0) return UV_ENOMEM;
  if (spdy_options_new(&so) != 0) {
    spdy_callbacks_del(cb);
    return UV_ENOMEM;
  }
  spdy_callbacks_set_on_begin_headers(cb, on_begin_headers);
  spdy_callbacks_set_on_header(cb, on_header);
  spdy_callbacks_set_on_headers_end(cb, on_headers_end);
  spdy_callbacks_set_on_data_chunk(cb, on_data_chunk);
  spdy_callbacks_set_on_stream_close(cb, on_stream_close);
  spdy_callbacks_set_on_goaway(cb, on_goaway);
  if (opt->verbose) spdy_callbacks_set_on_frame(cb, on_frame);
  spdy_options_set_stream_window(so, opt->stream_window);
  spdy_options_set_session_window(so, opt->session_window);
  /* Streams the server may open towards us are exactly its pushes. */
  spdy_options_set_max_concurrent_streams(so, opt->no_push ? 0 : opt->max_pushes);
  int rv =
      spdy_session_new(&conn->session, (spdy_protocol)conn->proto, SPDY_ROLE_CLIENT, cb, so, conn);
  spdy_callbacks_del(cb);
  spdy_options_del(so);
  if (rv != 0) return UV_ENOMEM;
  spdy_session_set_now(conn->session, get_now_ns());
  submit_waiting(conn);
  io_conn_want_writable(conn->io);
  return 0;
}

static void check_finished(get_conn *conn) {
  if (!spdy_session_want_read(conn->session) && !spdy_session_want_write(conn->session)) {
    conn->dead = 1;
    io_conn_close(conn->io);
  }
}

void get_spdy_writable(get_conn *conn, size_t room) {
  if (!conn->session || conn->closed) return;
  while (room > 0) {
    const uint8_t *p;
    int64_t n = spdy_session_peek_output(conn->session, &p, room);
    if (n < 0) {
      io_conn_abort(conn->io, UV_EPROTO);
      return;
    }
    if (n == 0) break;
    if (io_conn_write(conn->io, p, (size_t)n) != 0) return;
    spdy_session_consume_output(conn->session, (size_t)n);
    room -= (size_t)n;
  }
  if (room == 0 && spdy_session_want_write(conn->session)) {
    io_conn_want_writable(conn->io);
  } else {
    conn->resets_unsent = 0; /* every queued frame went out */
    if (conn->read_paused && !conn->closed) {
      conn->read_paused = 0;
      io_conn_pause_read(conn->io, 0);
    }
  }
  check_finished(conn);
}

size_t get_spdy_read(get_conn *conn, const uint8_t *data, size_t len) {
  spdy_session_set_now(conn->session, get_now_ns());
  size_t used = 0;
  int64_t rv = 0;
  while (used < len) {
    size_t n = len - used < RECV_SLICE ? len - used : RECV_SLICE;
    rv = spdy_session_recv(conn->session, data + used, n);
    if (rv < 0) break;
    used += (size_t)rv;
    if ((size_t)rv < n) break; /* the engine stopped early: hand back the rest */
    if (conn->resets_unsent > MAX_UNSENT_RESETS) {
      get_spdy_writable(conn, io_conn_room(conn->io));
      if (conn->resets_unsent > MAX_UNSENT_RESETS) { /* resumed by get_spdy_writable */
        conn->read_paused = 1;
        break;
      }
    }
  }
  if (rv < 0) {
    const char *why = spdy_strerror((int)rv);
    for (get_job *j = conn->origin->jobs; j; j = j->next)
      if (j->conn == conn && j->state == JOB_ACTIVE) get_job_fail(j, "session error: %s", why);
    conn->dead = 1;
    get_spdy_writable(conn, io_conn_room(conn->io) + 65536); /* the GOAWAY, if any */
    io_conn_close(conn->io);
    return len;
  }
  if (!conn->dead) submit_waiting(conn);
  io_conn_want_writable(conn->io);
  get_origin_progress(conn->origin);
  return used; /* fewer than len: io pauses reading and keeps the rest */
}

void get_spdy_closed(get_conn *conn, int status) {
  for (get_job *j = conn->origin->jobs; j; j = j->next) {
    if (j->conn != conn || j->state != JOB_ACTIVE) continue;
    j->conn = NULL;
    if (!j->pushed && j->bytes == 0 && j->status == 0 && j->attempts < 2 && conn->dead) {
      j->state = JOB_WAITING; /* the session was going away: retry once */
      continue;
    }
    if (j->has_length)
      get_job_fail(j, "connection closed before the response ended (%llu of %llu bytes): %s",
                   (unsigned long long)j->bytes, (unsigned long long)j->content_length,
                   status ? io_strerror(status) : "closed");
    else
      get_job_fail(j, "connection closed before the response ended (%llu bytes): %s",
                   (unsigned long long)j->bytes, status ? io_strerror(status) : "closed");
  }
  spdy_session_del(conn->session);
  conn->session = NULL;
}
