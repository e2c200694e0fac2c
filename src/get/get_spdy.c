/* get_spdy.c — `speedy get` over SPDY and HTTP/2: one libspeedy client session per connection,
 * requests of one origin multiplexed on it, responses to their outputs, pushes checked
 * (same origin, a cap, response headers in the SYN_STREAM or a later HEADERS frame, a
 * push for a resource already requested adopted and the request cancelled), streams
 * refused by REFUSED_STREAM or a GOAWAY put back for one retry on a new session.
 *
 * Output is pulled: the engine produces frames only when the connection has room
 * (get_spdy_writable), so priorities hold below us.
 *
 * SPDY and HTTP/2 share this file: the engine speaks both through one API, and where their
 * header fields differ (:host and :version, or :authority; ":status: 200 OK" or "200")
 * http_client.h decides.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "get_int.h"
#include "http_client.h"
#include "io_session.h"

#define MAX_REQUEST_HEADERS (GET_MAX_HEADERS + 12)

/* Resets we queued and the server has not read yet, past which we stop reading from it: a
 * server pushing streams we refuse (or that provokes CANCELs) without reading our resets
 * would otherwise grow our queue of them without end. */
#define MAX_UNSENT_RESETS 256
/* Input is handed to the engine in slices of this size, so the check above bites early. */
#define RECV_SLICE 4096

static get_run *run_of(get_conn *conn) { return conn->origin->run; }

/* The engine's protocol for the connection's (a SPDY version, or HTTP/2). */
static speedy_protocol protocol_of(const get_conn *conn) {
  speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
  (void)io_proto_session(conn->proto, &protocol);
  return protocol;
}

static void submit_rst(get_conn *conn, int32_t id, uint32_t status) {
  if (speedy_submit_rst(conn->session, id, status) == 0) conn->resets_unsent++;
}

/* Stops a transfer the job no longer wants (it failed): the stream is cancelled. */
static void cancel_job(get_conn *conn, get_job *job) {
  if (job->conn != conn) return;
  speedy_session_set_stream_user_data(conn->session, job->stream_id, NULL);
  job->conn = NULL;
  submit_rst(conn, job->stream_id, SPEEDY_RST_CANCEL);
}

static void copy_value(get_push_headers *push, char *dst, size_t cap, const speedy_header *h) {
  size_t n = h->value_len < cap - 1 ? h->value_len : cap - 1;
  memcpy(dst, h->value, n);
  dst[n] = '\0';
  if (n < h->value_len) push->bad = 1; /* too long to be ours */
}

/* ---- Request bodies ---------------------------------------------------------------- */

static int64_t read_body(speedy_session *s, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  (void)s, (void)stream_id;
  get_job *job = source;
  get_run *run = run_of(user);
  size_t left = run->body_len - job->body_off; /* run->has_body */
  size_t n = left < len ? left : len;
  memcpy(buf, run->body + job->body_off, n);
  job->body_off += n;
  if (job->body_off == run->body_len) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

/* ---- Submitting -------------------------------------------------------------------- */

static int has_header(const get_options *opt, const char *name) {
  for (int i = 0; i < opt->n_headers; i++)
    if (strcmp(opt->headers[i].name, name) == 0) return 1;
  return 0;
}

size_t get_spdy_request_headers(const get_conn *conn, const get_job *job, speedy_header *h,
                                char *length_buf, size_t length_buf_len) {
  const get_run *run = run_of((get_conn *)conn);
  const get_options *opt = run->opt;
  const get_origin *origin = conn->origin;
  speedy_protocol protocol = protocol_of(conn);
  size_t n =
      http_client_request_pseudo(run->method, origin->scheme, origin->authority, job->path, h);
#define ADD(nm, val) (h[n++] = (speedy_header){nm, strlen(nm), val, strlen(val)})
  if (!has_header(opt, "user-agent")) ADD("user-agent", "speedy/" SPEEDY_GET_VERSION);
  if (!has_header(opt, "accept")) ADD("accept", "*/*");
  if (opt->compressed && !has_header(opt, "accept-encoding"))
    ADD("accept-encoding", "gzip, deflate");
  if (opt->range[0] && !has_header(opt, "range")) ADD("range", opt->range);
  if (run->has_body) {
    snprintf(length_buf, length_buf_len, "%zu", run->body_len);
    ADD("content-length", length_buf);
    if (!has_header(opt, "content-type")) ADD("content-type", "application/x-www-form-urlencoded");
  }
#undef ADD
  for (int i = 0; i < opt->n_headers; i++) {
    const speedy_header *given = &opt->headers[i];
    if (!http_client_is_connection_field(protocol, given->name, given->name_len, given->value,
                                         given->value_len) &&
        !(run->has_body && strcmp(given->name, "content-length") == 0))
      h[n++] = *given;
  }
  return n;
}

/* Submits one waiting job. Returns 0, or -1 when this session takes no more streams. */
static int submit_job(get_conn *conn, get_job *job) {
  get_run *run = run_of(conn);
  speedy_header h[MAX_REQUEST_HEADERS];
  char length[24];
  size_t n = get_spdy_request_headers(conn, job, h, length, sizeof(length));
  job->body_off = 0;
  int32_t id = speedy_submit_request(conn->session, run->opt->priority, h, n,
                                     run->has_body ? read_body : NULL, job, job);
  if (id == SPEEDY_ERR_STREAM_ID_EXHAUSTED || id == SPEEDY_ERR_SESSION_CLOSING ||
      id == SPEEDY_ERR_TOO_MANY_STREAMS)
    return -1;
  if (id < 0) {
    get_job_fail(job, "cannot send the request: %s", speedy_strerror(id));
    return 0;
  }
  job->state = JOB_ACTIVE;
  job->attempts++;
  job->stream_id = id;
  job->conn = conn;
  get_resp_reset(job);
  if (!job->t_start) job->t_start = get_now_ns();
  return 0;
}

static void submit_waiting(get_conn *conn) {
  for (get_job *j = conn->origin->jobs; j && !conn->dead; j = j->next)
    if (j->state == JOB_WAITING && submit_job(conn, j) != 0) conn->dead = 1;
}

/* ---- Engine callbacks -------------------------------------------------------------- */

static int on_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)s, (void)associated_id;
  get_conn *conn = user;
  /* HTTP/2's 1xx responses (103 Early Hints ...) come before the final one: shown by -v,
   * not taken for the response */
  conn->informational_id = kind == SPEEDY_HEADERS_INFORMATIONAL ? id : 0;
  if (kind == SPEEDY_HEADERS_PUSH) { /* a new push: its own fields (the buffer is reused) */
    get_push_headers *push = &conn->push;
    uint8_t *fields = push->fields;
    size_t cap = push->fields_cap;
    memset(push, 0, sizeof(*push));
    push->fields = fields;
    push->fields_cap = cap;
  }
  return 0;
}

/* Keeps a field of a push being announced, to be noted on its job if it is accepted.
 * Past GET_MAX_HEAD the push is marked bad (and refused). */
static void keep_push_field(get_push_headers *push, const speedy_header *h) {
  size_t need = 8 + h->name_len + h->value_len;
  if (push->bad || need > GET_MAX_HEAD - push->fields_len) {
    push->bad = 1;
    return;
  }
  if (push->fields_len + need > push->fields_cap) {
    size_t cap = push->fields_cap ? push->fields_cap : 1024;
    while (cap < push->fields_len + need) cap *= 2;
    uint8_t *p = realloc(push->fields, cap);
    if (!p) {
      push->bad = 1;
      return;
    }
    push->fields = p;
    push->fields_cap = cap;
  }
  uint8_t *at = push->fields + push->fields_len;
  uint32_t name_len = (uint32_t)h->name_len, value_len = (uint32_t)h->value_len;
  memcpy(at, &name_len, 4);
  memcpy(at + 4, h->name, name_len);
  memcpy(at + 4 + name_len, &value_len, 4);
  memcpy(at + 8 + name_len, h->value, value_len);
  push->fields_len += need;
}

/* Notes the kept fields of the push on its job: status, lengths, the head for -i. */
static void replay_push_fields(get_conn *conn, get_job *job) {
  const uint8_t *p = conn->push.fields, *end = p + conn->push.fields_len;
  while (p < end) {
    uint32_t name_len, value_len;
    memcpy(&name_len, p, 4);
    const char *name = (const char *)p + 4;
    memcpy(&value_len, p + 4 + name_len, 4);
    const char *value = (const char *)p + 8 + name_len;
    p += 8 + name_len + value_len;
    static const char *const request_only[] = {":path",   ":host",   ":authority",
                                               ":scheme", ":method", ":url"};
    int skip = 0;
    for (size_t i = 0; i < sizeof(request_only) / sizeof(request_only[0]); i++)
      skip |= strlen(request_only[i]) == name_len && memcmp(request_only[i], name, name_len) == 0;
    if (skip) continue;
    get_resp_note(job, name, name_len, value, value_len);
    if (get_resp_head_field(job, name, name_len, value, value_len) != 0) return;
  }
}

static int on_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  get_conn *conn = user;
  if (run_of(conn)->opt->verbose) get_trace_headers(h, 1);
  get_job *job = speedy_session_get_stream_user_data(s, id);
  if (job) {
    if (job->state != JOB_ACTIVE || conn->informational_id == id) return 0;
    get_resp_note(job, h->name, h->name_len, h->value, h->value_len);
    if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0)
      job->status = http_client_parse_status(h->value, h->value_len);
    if (!job->head_done && get_resp_head_field(job, h->name, h->name_len, h->value, h->value_len))
      cancel_job(conn, job);
    return 0;
  }
  if (id % 2 != 0) return 0; /* a stream we gave up */
  /* a push being announced: collect what we must check, and keep every field */
  if (h->name_len == 5 && memcmp(h->name, ":path", 5) == 0)
    copy_value(&conn->push, conn->push.path, sizeof(conn->push.path), h);
  else if (http_client_is_authority(h->name, h->name_len))
    copy_value(&conn->push, conn->push.host, sizeof(conn->push.host), h);
  else if (h->name_len == 7 && memcmp(h->name, ":scheme", 7) == 0)
    copy_value(&conn->push, conn->push.scheme, sizeof(conn->push.scheme), h);
  keep_push_field(&conn->push, h);
  return 0;
}

/* Once the head carries a status: -i / -I output, --fail, --compressed, --max-filesize
 * against the announced length. Returns 0 (a failed job's stream is cancelled). */
static int head_maybe_done(get_conn *conn, get_job *job) {
  if (job->head_done || job->status <= 0 || job->state != JOB_ACTIVE) return 0;
  if (!job->t_first) job->t_first = get_now_ns();
  char line[96]; /* "SPDY/3.1 200 OK" (SPDY's wire carries the reason), "HTTP/2 200" */
  speedy_protocol protocol = protocol_of(conn);
  const char *reason = protocol == SPEEDY_PROTOCOL_H2 ? NULL : speedy_status_reason(job->status);
  snprintf(line, sizeof(line), "%s %s%s%s", http_client_version_label(protocol), job->status_text,
           reason ? " " : "", reason ? reason : "");
  if (get_job_check_size(job, 0) != 0 || get_resp_head_done(job, line) != 0) cancel_job(conn, job);
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
      speedy_session_set_stream_user_data(conn->session, j->stream_id, NULL);
      j->conn = NULL;
      submit_rst(conn, j->stream_id, SPEEDY_RST_CANCEL);
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
    if (run->opt->verbose) get_trace_note(run, "[%d] %s: reset", (int)id, why);
    submit_rst(conn, id, SPEEDY_RST_REFUSED_STREAM);
    return 0;
  }
  int duplicate;
  get_job *job = adopt_request(conn, conn->push.path, &duplicate);
  if (duplicate) {
    if (run->opt->verbose)
      get_trace_note(run, "[%d] push of a resource already fetched: cancel", (int)id);
    submit_rst(conn, id, SPEEDY_RST_CANCEL);
    return 0;
  }
  if (job) {
    if (run->opt->verbose) get_trace_note(run, "[%d] push adopted for %s", (int)id, job->url);
    job->state = JOB_ACTIVE;
    job->attempts++;
    job->stream_id = id;
    job->conn = conn;
    if (!job->t_start) job->t_start = get_now_ns();
  } else {
    job = get_job_new_push(origin, conn->push.path);
    if (!job) return SPEEDY_ERR_NOMEM;
    job->conn = conn;
    job->stream_id = id;
  }
  get_resp_reset(job);
  speedy_session_set_stream_user_data(conn->session, id, job);
  /* the SYN_STREAM's own fields: SPDY/2 (and some servers) put the response's there */
  replay_push_fields(conn, job);
  return head_maybe_done(conn, job);
}

static int on_headers_end(speedy_session *s, int32_t id, int end_stream, void *user) {
  (void)end_stream;
  get_conn *conn = user;
  if (conn->informational_id == id) {
    conn->informational_id = 0;
    return 0;
  }
  get_job *job = speedy_session_get_stream_user_data(s, id);
  if (!job) {
    if (id % 2 == 0) return accept_push(conn, id);
    return 0;
  }
  return head_maybe_done(conn, job);
}

static int on_data_chunk(speedy_session *s, int32_t id, const uint8_t *data, size_t len,
                         void *user) {
  get_conn *conn = user;
  get_job *job = speedy_session_get_stream_user_data(s, id);
  if (!job || job->state != JOB_ACTIVE) return 0;
  if (!job->head_done && job->status > 0 && head_maybe_done(conn, job) != 0) return 0;
  if (get_resp_body(job, data, len) != 0) cancel_job(conn, job);
  return 0;
}

/* The job on stream id of this connection. on_stream_close cannot use the stream's user
 * data: the engine has unlinked the stream before it calls back. */
static get_job *job_on_stream(get_conn *conn, int32_t id) {
  for (get_job *j = conn->origin->jobs; j; j = j->next)
    if (j->conn == conn && j->stream_id == id && j->state == JOB_ACTIVE) return j;
  return NULL;
}

static int on_stream_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  get_conn *conn = user;
  get_job *job = job_on_stream(conn, id);
  if (!job) return 0;
  job->conn = NULL;
  if (status == SPEEDY_RST_NONE) {
    if (job->status <= 0) {
      get_job_fail(job, job->status == 0 ? "stream ended without a :status"
                                         : "response with an invalid :status");
    } else {
      if (!job->head_done) head_maybe_done(conn, job);
      if (job->state == JOB_ACTIVE) get_resp_end(job);
    }
    return 0;
  }
  if (status == SPEEDY_RST_REFUSED_STREAM && !job->pushed && job->attempts < 2 && job->bytes == 0) {
    /* Not processed by the server: once more, on a new session. */
    if (run_of(conn)->opt->verbose)
      get_trace_note(run_of(conn), "[%d] refused; retrying %s on a new session", (int)id, job->url);
    job->state = JOB_WAITING;
    conn->dead = 1;
    return 0;
  }
  if (status == SPEEDY_RST_REFUSED_STREAM && conn->goaway_seen)
    get_job_fail(job, "not processed: the server sent GOAWAY (last good stream %d)%s",
                 (int)conn->goaway_last_good, job->attempts > 1 ? " again on retry" : "");
  else if (status == SPEEDY_RST_PROTOCOL_ERROR && job->status == 0 && job->bytes == 0)
    /* the engine resets a reply without :status or :version; the server may also have */
    get_job_fail(job, "no valid response (a reply needs :status%s): stream reset: %s",
                 conn->proto == IO_PROTO_H2 ? "" : " and :version", speedy_rst_status_name(status));
  else
    get_job_fail(job, "stream reset: %s", speedy_rst_status_name(status));
  return 0;
}

static int on_goaway(speedy_session *s, int32_t last_good_id, uint32_t status, void *user) {
  (void)status;
  get_conn *conn = user;
  conn->dead = 1;
  conn->goaway_seen = 1;
  conn->goaway_last_good = last_good_id;
  if (run_of(conn)->opt->verbose) {
    const uint8_t *debug = NULL;
    size_t debug_len = 0;
    int64_t reason = speedy_session_goaway_reason(s, &debug, &debug_len);
    get_trace_note(run_of(conn), "GOAWAY: last good stream %d, %s%s%.*s", (int)last_good_id,
                   reason > 0 ? speedy_rst_status_name((uint32_t)reason) : "NO_ERROR",
                   debug_len ? ": " : "", (int)debug_len, debug ? (const char *)debug : "");
  }
  return 0;
}

static int on_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *user) {
  (void)s;
  get_trace_setting(user, id, flags, value);
  return 0;
}

/* ---- Driving the session ----------------------------------------------------------- */

int get_spdy_start(get_conn *conn) {
  get_run *run = run_of(conn);
  const get_options *opt = run->opt;
  speedy_callbacks *cb;
  speedy_options *so;
  if (speedy_callbacks_new(&cb) != 0) return UV_ENOMEM;
  if (speedy_options_new(&so) != 0) {
    speedy_callbacks_del(cb);
    return UV_ENOMEM;
  }
  speedy_callbacks_set_on_begin_headers(cb, on_begin_headers);
  speedy_callbacks_set_on_header(cb, on_header);
  speedy_callbacks_set_on_headers_end(cb, on_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, on_data_chunk);
  speedy_callbacks_set_on_stream_close(cb, on_stream_close);
  speedy_callbacks_set_on_goaway(cb, on_goaway);
  if (opt->verbose) {
    speedy_callbacks_set_on_frame(cb, get_trace_frame);
    speedy_callbacks_set_on_frame_not_sent(cb, get_trace_frame_not_sent);
    speedy_callbacks_set_on_setting(cb, on_setting);
  }
  speedy_options_set_stream_window(so, opt->stream_window);
  speedy_options_set_session_window(so, opt->session_window);
  /* Streams the server may open towards us are exactly its pushes. */
  speedy_options_set_max_concurrent_streams(so, opt->no_push ? 0 : opt->max_pushes);
  speedy_options_set_push(so, !opt->no_push); /* HTTP/2: SETTINGS_ENABLE_PUSH 0 */
  int rv = speedy_session_new(&conn->session, protocol_of(conn), SPEEDY_ROLE_CLIENT, cb, so, conn);
  speedy_callbacks_del(cb);
  speedy_options_del(so);
  if (rv != 0) return UV_ENOMEM;
  speedy_session_set_now(conn->session, get_now_ns());
  submit_waiting(conn);
  io_conn_want_writable(conn->io);
  return 0;
}

static void check_finished(get_conn *conn) {
  if (!speedy_session_want_read(conn->session) && !speedy_session_want_write(conn->session)) {
    conn->dead = 1;
    io_conn_close(conn->io);
  }
}

void get_spdy_writable(get_conn *conn, size_t room) {
  if (!conn->session || conn->closed) return;
  io_pump_result pumped = io_session_pump(conn->io, conn->session, room, 0, 0, NULL, NULL);
  if (pumped == IO_PUMP_SESSION_ERROR) {
    io_conn_abort(conn->io, UV_EPROTO);
    return;
  }
  if (pumped == IO_PUMP_WRITE_ERROR) return;
  if (pumped == IO_PUMP_IDLE) {
    conn->resets_unsent = 0; /* every queued frame went out */
    if (conn->read_paused && !conn->closed) {
      conn->read_paused = 0;
      io_conn_pause_read(conn->io, 0);
    }
  }
  check_finished(conn);
}

size_t get_spdy_read(get_conn *conn, const uint8_t *data, size_t len) {
  speedy_session_set_now(conn->session, get_now_ns());
  size_t used = 0;
  int64_t rv = 0;
  while (used < len) {
    size_t n = len - used < RECV_SLICE ? len - used : RECV_SLICE;
    rv = speedy_session_recv(conn->session, data + used, n);
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
    const char *why = speedy_strerror((int)rv);
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
  speedy_session_del(conn->session);
  conn->session = NULL;
  free(conn->push.fields);
  conn->push.fields = NULL;
}
