/* load_spdy.c — the loader's SPDY and HTTP/2: one libspeedy client session per connection group,
 * every requestable resource submitted at once with its type's urgency (document 0, CSS
 * and script 1, font 2, image 4, other 5), wide receive windows, pushes matched to the
 * plan by host and path and used instead of a request, X-Subresources hints.
 *
 * Header-compression figures: the SYN_STREAM / SYN_REPLY / HEADERS frames as sent and
 * received (8-byte frame header plus payload, compressed by the session's zlib context),
 * or HTTP/2's HEADERS, PUSH_PROMISE and CONTINUATION frames (9-byte header plus HPACK
 * payload), counted through the frame trace. Where the two protocols' fields differ,
 * http_client.h decides.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_client.h"
#include "http_ows.h"
#include "io_session.h"
#include "load_int.h"

#define MAX_SPDY_HEADERS (LOAD_PLAN_MAX_HEADERS + 8)
#define DEFAULT_URGENCY 3 /* RFC 9218 4.1: a request without a priority field */

/* HTTP/2 frame types that carry a field block (RFC 9113 6.2, 6.6, 6.10). */

static speedy_protocol protocol_of(const load_conn *conn) {
  speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
  (void)io_proto_session(conn->proto, &protocol);
  return protocol;
}

static int stream_resource(speedy_session *s, int32_t stream_id) {
  void *p = speedy_session_get_stream_user_data(s, stream_id);
  return p ? (int)((intptr_t)p - 1) : -1;
}

static void copy_value(load_push_headers *push, char *dst, size_t cap, const speedy_header *h) {
  size_t n = h->value_len < cap - 1 ? h->value_len : cap - 1;
  memcpy(dst, h->value, n);
  dst[n] = '\0';
  if (n < h->value_len) push->bad = 1;
}

/* Submits resource id. Returns 0, or -1 when the session takes no more streams. */
static int submit(load_conn *conn, int id) {
  load_run *run = conn->run;
  const load_resource *r = &run->plan->resources[id];
  speedy_header h[MAX_SPDY_HEADERS];
  size_t n = 0;
  char authority[300];
  load_authority(run, id, authority, sizeof(authority));
  const char *scheme = run->opt->tls ? "https" : "http";
  speedy_protocol protocol = protocol_of(conn);
  n = http_client_request_pseudo(r->method, scheme, authority, r->path, h);
  for (size_t i = 0; i < r->n_request_headers && n < MAX_SPDY_HEADERS; i++) {
    const load_header *rh = &r->request_headers[i];
    size_t name_len = strlen(rh->name), value_len = strlen(rh->value);
    const char *value = rh->value;
    http_trim_ows(&value, &value_len);
    /* an empty value cannot be joined with a repeated name, nor sent over SPDY/2 */
    if (value_len == 0 ||
        http_client_is_connection_field(protocol, rh->name, name_len, value, value_len))
      continue;
    h[n++] = (speedy_header){rh->name, name_len, value, value_len};
  }
  int urgency = load_type_urgency(r->type);
  char priority[8];
  if (r->browser_priority && protocol == SPEEDY_PROTOCOL_H2) {
    /* --chromium-headers: Chromium's field, which leaves out u=3 (the default) and says
     * nothing at all for u=3 without incremental */
    urgency = r->browser_urgency;
    int len = 0;
    if (urgency != DEFAULT_URGENCY)
      len = snprintf(priority, sizeof(priority), r->browser_incremental ? "u=%d, i" : "u=%d",
                     urgency);
    else if (r->browser_incremental)
      len = snprintf(priority, sizeof(priority), "i");
    if (len > 0 && n < MAX_SPDY_HEADERS)
      h[n++] = (speedy_header){"priority", 8, priority, (size_t)len};
  }
  int32_t stream_id =
      speedy_submit_request(conn->session, urgency, h, n, NULL, NULL, (void *)(intptr_t)(id + 1));
  if (stream_id == SPEEDY_ERR_STREAM_ID_EXHAUSTED || stream_id == SPEEDY_ERR_SESSION_CLOSING ||
      stream_id == SPEEDY_ERR_TOO_MANY_STREAMS)
    return -1;
  if (stream_id < 0) {
    load_fail(run, id, "cannot send the request: %s", speedy_strerror(stream_id));
    return 0;
  }
  run->fetch[id].conn = conn;
  run->fetch[id].stream_id = stream_id;
  load_sched_requested(run->sched, id, conn->index, load_now_ms(run));
  if (run->opt->verbose)
    fprintf(stderr, "speedy load: conn %d > #%d stream %d urgency %d %s%s\n", conn->index, id,
            (int)stream_id, urgency, authority, r->path);
  return 0;
}

void load_spdy_submit(load_conn *conn) {
  load_run *run = conn->run;
  int id, submitted = 0;
  while (!conn->dead && (id = load_sched_peek(run->sched, conn->group->index)) >= 0) {
    if (submit(conn, id) != 0) {
      conn->dead = 1; /* a new session takes the rest */
      break;
    }
    submitted = 1;
  }
  if (submitted) {
    conn->used = 1;
    io_conn_want_writable(conn->io);
  }
}

/* ---- Engine callbacks -------------------------------------------------------------- */

static int on_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)s, (void)associated_id;
  load_conn *conn = user;
  /* HTTP/2's 1xx heads come before the response: not its status */
  conn->informational_id = kind == SPEEDY_HEADERS_INFORMATIONAL ? id : 0;
  if (kind == SPEEDY_HEADERS_PUSH) memset(&conn->push, 0, sizeof(conn->push));
  return 0;
}

static int on_header(speedy_session *s, int32_t stream_id, const speedy_header *h, void *user) {
  load_conn *conn = user;
  load_run *run = conn->run;
  int id = stream_resource(s, stream_id);
  if (conn->informational_id == stream_id) {
    /* 103 Early Hints (RFC 8297): a browser preloads what its Link names */
    if (id >= 0 && h->name_len == 4 && memcmp(h->name, "link", 4) == 0)
      load_link_hints(run, id, h->value, h->value_len);
    return 0;
  }
  if (id < 0) { /* a push being announced */
    if (h->name_len == 5 && memcmp(h->name, ":path", 5) == 0)
      copy_value(&conn->push, conn->push.path, sizeof(conn->push.path), h);
    else if (http_client_is_authority(h->name, h->name_len))
      copy_value(&conn->push, conn->push.host, sizeof(conn->push.host), h);
    else if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0)
      conn->push.status = http_client_parse_status(h->value, h->value_len);
    return 0;
  }
  if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0) {
    int status = http_client_parse_status(h->value, h->value_len);
    load_sched_headers(run->sched, id, status > 0 ? status : 0, load_now_ms(run));
  } else if (h->name_len == 14 && memcmp(h->name, "x-subresources", 14) == 0) {
    load_hints(run, id, h->value, h->value_len);
  } else if (h->name_len == 4 && memcmp(h->name, "link", 4) == 0) {
    load_link_hints(run, id, h->value, h->value_len);
  }
  if (h->name[0] != ':')
    load_note_response_header(run, id, h->name, h->name_len, h->value, h->value_len);
  return 0;
}

/* SPDY/2 names a pushed resource by its absolute URL (draft 2, 3.3.1). */
static void split_absolute_url(load_push_headers *push) {
  const char *p = push->path;
  size_t skip = strncmp(p, "https://", 8) == 0 ? 8 : strncmp(p, "http://", 7) == 0 ? 7 : 0;
  if (skip == 0) return;
  size_t host_len = strcspn(p + skip, "/");
  if (host_len == 0 || host_len >= sizeof(push->host) || p[skip + host_len] != '/') {
    push->bad = 1;
    return;
  }
  memcpy(push->host, p + skip, host_len);
  push->host[host_len] = '\0';
  memmove(push->path, p + skip + host_len, strlen(p + skip + host_len) + 1);
}

/* A push: use it for the plan's resource with this host and path when that resource has
 * not been answered yet (a request already sent without a response is cancelled), refuse
 * it otherwise. */
static int accept_push(load_conn *conn, int32_t stream_id) {
  load_run *run = conn->run;
  speedy_session *s = conn->session;
  split_absolute_url(&conn->push);
  int host = conn->push.bad
                 ? -1
                 : load_plan_find_host(run->plan, conn->push.host, strlen(conn->push.host));
  int id = -1;
  if (host >= 0 && load_host_group(run, host) == conn->group->base) {
    id = load_sched_find_unrequested(run->sched, host, conn->push.path);
    if (id < 0) { /* requested already: take the push if no response has started */
      int any = load_sched_find(run->sched, host, conn->push.path);
      const load_entry *e = load_sched_entry(run->sched, any);
      if (e && e->state == LOAD_ACTIVE && !e->pushed && e->status == 0 && e->bytes == 0 &&
          run->fetch[any].conn == conn) {
        speedy_session_set_stream_user_data(s, run->fetch[any].stream_id, NULL);
        speedy_submit_rst(s, run->fetch[any].stream_id, SPEEDY_RST_CANCEL);
        id = any;
      }
    }
  }
  if (id < 0) {
    if (run->opt->verbose)
      fprintf(stderr, "speedy load: push %d of %s%s refused (not wanted)\n", (int)stream_id,
              conn->push.host, conn->push.path);
    speedy_submit_rst(s, stream_id, SPEEDY_RST_CANCEL);
    return 0;
  }
  double now = load_now_ms(run);
  load_sched_pushed(run->sched, id, conn->index, now);
  run->fetch[id].conn = conn;
  run->fetch[id].stream_id = stream_id;
  run->pushes++;
  speedy_session_set_stream_user_data(s, stream_id, (void *)(intptr_t)(id + 1));
  if (conn->push.status > 0) load_sched_headers(run->sched, id, conn->push.status, now);
  if (run->opt->verbose)
    fprintf(stderr, "speedy load: conn %d < push #%d stream %d %s\n", conn->index, id,
            (int)stream_id, conn->push.path);
  return 0;
}

static int on_headers_end(speedy_session *s, int32_t stream_id, int end_stream, void *user) {
  (void)end_stream;
  load_conn *conn = user;
  if (conn->informational_id == stream_id) {
    conn->informational_id = 0;
    return 0;
  }
  if (stream_resource(s, stream_id) < 0 && stream_id % 2 == 0) return accept_push(conn, stream_id);
  return 0;
}

static int on_data_chunk(speedy_session *s, int32_t stream_id, const uint8_t *data, size_t len,
                         void *user) {
  (void)data;
  load_conn *conn = user;
  int id = stream_resource(s, stream_id);
  if (id < 0) return 0;
  const load_entry *e = load_sched_entry(conn->run->sched, id);
  if (e->state != LOAD_ACTIVE) return 0;
  load_sched_body(conn->run->sched, id, e->bytes + len, load_now_ms(conn->run));
  return 0;
}

/* The resource on stream_id of this connection (on_stream_close cannot use the stream's
 * user data: the stream is unlinked before the callback). */
static int resource_on_stream(load_conn *conn, int32_t stream_id) {
  load_run *run = conn->run;
  for (size_t i = 0; i < run->plan->n_resources; i++)
    if (run->fetch[i].conn == conn && run->fetch[i].stream_id == stream_id) return (int)i;
  return -1;
}

static int on_stream_close(speedy_session *s, int32_t stream_id, uint32_t status, void *user) {
  (void)s;
  load_conn *conn = user;
  load_run *run = conn->run;
  int id = resource_on_stream(conn, stream_id);
  if (id < 0) return 0;
  run->fetch[id].conn = NULL;
  const load_entry *e = load_sched_entry(run->sched, id);
  if (e->state != LOAD_ACTIVE) return 0;
  if (status == SPEEDY_RST_NONE) {
    if (e->status <= 0)
      load_fail(run, id, "stream ended without a :status");
    else
      load_sched_complete(run->sched, id, load_now_ms(run));
    return 0;
  }
  if (status == SPEEDY_RST_REFUSED_STREAM && !e->pushed && e->attempts < 2 && e->bytes == 0) {
    load_sched_requeue(run->sched, id); /* not processed: once more on a new session */
    conn->dead = 1;
    return 0;
  }
  load_fail(run, id, "stream reset: %s", speedy_rst_status_name(status));
  return 0;
}

static int on_goaway(speedy_session *s, int32_t last_good_id, uint32_t status, void *user) {
  (void)s, (void)last_good_id, (void)status;
  load_conn *conn = user;
  conn->dead = 1;
  return 0;
}

static void on_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t stream_id,
                     uint32_t length, const char *summary, void *user) {
  (void)flags, (void)summary;
  load_conn *conn = user;
  load_run *run = conn->run;
  int t = type;
  int block = conn->proto == IO_PROTO_H2
                  ? (t == SPEEDY_H2_FRAME_HEADERS || t == SPEEDY_H2_FRAME_PUSH_PROMISE ||
                     t == SPEEDY_H2_FRAME_CONTINUATION)
                  : (type == SPEEDY_SPDY_FRAME_SYN_STREAM || type == SPEEDY_SPDY_FRAME_SYN_REPLY ||
                     type == SPEEDY_SPDY_FRAME_HEADERS);
  if (!block) return;
  uint64_t bytes = speedy_session_data_header_length(s) + (uint64_t)length; /* 8 or 9 */
  if (sent) {
    run->request_header_bytes += bytes;
    int id = resource_on_stream(conn, stream_id);
    if (id >= 0) run->fetch[id].request_header_bytes += bytes;
  } else {
    run->response_header_bytes += bytes;
    int id = stream_resource(conn->session, stream_id);
    if (id >= 0) run->fetch[id].response_header_bytes += bytes;
  }
}

/* ---- Driving the session ----------------------------------------------------------- */

int load_spdy_start(load_conn *conn) {
  const load_options *opt = conn->run->opt;
  speedy_callbacks *cb;
  speedy_options *so;
  if (speedy_callbacks_new(&cb) != 0) return -1;
  if (speedy_options_new(&so) != 0) {
    speedy_callbacks_del(cb);
    return -1;
  }
  speedy_callbacks_set_on_begin_headers(cb, on_begin_headers);
  speedy_callbacks_set_on_header(cb, on_header);
  speedy_callbacks_set_on_headers_end(cb, on_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, on_data_chunk);
  speedy_callbacks_set_on_stream_close(cb, on_stream_close);
  speedy_callbacks_set_on_goaway(cb, on_goaway);
  speedy_callbacks_set_on_frame(cb, on_frame);
  speedy_options_set_stream_window(so, opt->stream_window);
  speedy_options_set_session_window(so, opt->session_window);
  speedy_options_set_max_concurrent_streams(so, 1000); /* pushes */
  int rv = speedy_session_new(&conn->session, protocol_of(conn), SPEEDY_ROLE_CLIENT, cb, so, conn);
  speedy_callbacks_del(cb);
  speedy_options_del(so);
  if (rv != 0) return -1;
  speedy_session_set_now(conn->session, (int64_t)uv_hrtime());
  io_conn_want_writable(conn->io); /* SETTINGS and the session window */
  return 0;
}

void load_spdy_writable(load_conn *conn, size_t room) {
  if (!conn->session || conn->closed) return;
  io_pump_result pumped = io_session_pump(conn->io, conn->session, room, 0, 0, NULL, NULL);
  if (pumped == IO_PUMP_SESSION_ERROR) {
    io_conn_abort(conn->io, UV_EPROTO);
    return;
  }
  if (pumped == IO_PUMP_WRITE_ERROR) return;
  if (conn->goaway_sent && !speedy_session_want_write(conn->session)) io_conn_close(conn->io);
}

size_t load_spdy_read(load_conn *conn, const uint8_t *data, size_t len) {
  load_run *run = conn->run;
  speedy_session_set_now(conn->session, (int64_t)uv_hrtime());
  int64_t rv = speedy_session_recv(conn->session, data, len);
  if (rv < 0) {
    for (size_t i = 0; i < run->plan->n_resources; i++)
      if (run->fetch[i].conn == conn)
        load_fail(run, (int)i, "session error: %s", speedy_strerror((int)rv));
    conn->dead = 1;
    load_spdy_writable(conn, io_conn_room(conn->io) + 65536); /* the GOAWAY, if any */
    io_conn_close(conn->io);
    return len;
  }
  io_conn_want_writable(conn->io);
  return (size_t)rv;
}

void load_spdy_finish(load_conn *conn) {
  if (conn->goaway_sent) return;
  conn->goaway_sent = 1;
  conn->dead = 1;
  speedy_submit_goaway(conn->session, SPEEDY_RST_NONE, NULL, 0);
  load_spdy_writable(conn, io_conn_room(conn->io) + 4096);
  io_conn_close(conn->io);
}

void load_spdy_closed(load_conn *conn, int status) {
  load_run *run = conn->run;
  for (size_t i = 0; i < run->plan->n_resources; i++) {
    if (run->fetch[i].conn != conn) continue;
    run->fetch[i].conn = NULL;
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    if (e->state != LOAD_ACTIVE) continue;
    if (!e->pushed && e->bytes == 0 && e->status == 0 && e->attempts < 2 && conn->dead) {
      load_sched_requeue(run->sched, (int)i); /* the session was going away: once more */
      continue;
    }
    load_fail(run, (int)i, "connection closed: %s",
              status ? io_strerror(status) : "before the response ended");
  }
  speedy_session_del(conn->session);
  conn->session = NULL;
}
