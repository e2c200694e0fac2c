/* bench_spdy.c — a `speedy bench` connection speaking SPDY/2, /3, /3.1 or HTTP/2: one
 * libspeedy client session, up to -m streams at a time, each stream a slot of the connection
 * (its stream user data). Output is pulled from the session when the connection has
 * room, as in `speedy get`. Pushes are refused (MAX_CONCURRENT_STREAMS 0 towards us; for
 * HTTP/2 also ENABLE_PUSH 0). Where the protocols' fields differ, http_client.h decides.
 *
 * Header and data bytes are counted as h2load counts them: the frame trace gives each
 * received field block's compressed size, on_header the decoded size, on_data_chunk DATA.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_int.h"
#include "http_client.h"
#include "io_session.h"

/* HTTP/2 frame types that carry a response's field block (RFC 9113 6.2, 6.10). */

static speedy_protocol protocol_of(const bench_conn *conn) {
  speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
  (void)io_proto_session(conn->proto, &protocol);
  return protocol;
}

/* The request on stream id: its user data, or (once the engine has let go of the stream)
 * the slot that remembers the id. */
static bench_req *req_of(bench_conn *conn, int32_t id) {
  bench_req *req = speedy_session_get_stream_user_data(conn->session, id);
  if (req) return req;
  for (int i = 0; i < conn->n_slots; i++)
    if (conn->slots[i].in_use && conn->slots[i].stream_id == id) return &conn->slots[i];
  return NULL;
}

static int on_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)s, (void)associated_id;
  bench_conn *conn = user;
  /* an HTTP/2 1xx head is not the response: its :status is not the one to check */
  conn->informational_id = kind == SPEEDY_HEADERS_INFORMATIONAL ? id : 0;
  if (kind != SPEEDY_HEADERS_RESPONSE && kind != SPEEDY_HEADERS_INFORMATIONAL) return 0;
  bench_req *req = req_of(user, id);
  if (req && !req->t_first) req->t_first = bench_now_ns();
  return 0;
}

static int on_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  (void)s;
  bench_conn *conn = user;
  bench_conn_stats(conn)->header_bytes_decoded += h->name_len + h->value_len;
  bench_req *req = req_of(user, id);
  if (!req || conn->informational_id == id) return 0;
  if (h->name_len == 7 && memcmp(h->name, ":status", 7) == 0) {
    req->status = http_client_parse_status(h->value, h->value_len);
  } else if (h->name_len == 14 && memcmp(h->name, "content-length", 14) == 0) {
    uint64_t v = 0;
    size_t i = 0;
    for (; i < h->value_len && i < 19 && h->value[i] >= '0' && h->value[i] <= '9'; i++)
      v = v * 10 + (uint64_t)(h->value[i] - '0');
    if (i > 0 && i == h->value_len) {
      req->content_length = v;
      req->has_length = 1;
    } else {
      req->status = -1; /* an unusable Content-Length fails the check on status */
    }
  }
  return 0;
}

static int on_data_chunk(speedy_session *s, int32_t id, const uint8_t *data, size_t len,
                         void *user) {
  (void)s;
  bench_conn_stats(user)->data_bytes_in += len;
  bench_req *req = req_of(user, id);
  if (!req) return 0;
  if (!req->t_first) req->t_first = bench_now_ns();
  bench_request_body(req, data, len);
  return 0;
}

static int on_stream_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  bench_conn *conn = user;
  bench_req *req = req_of(conn, id);
  if (!req) return 0;
  int64_t now = bench_now_ns();
  if (status == SPEEDY_RST_NONE)
    bench_request_done(conn, req, now);
  else if (status != SPEEDY_RST_REFUSED_STREAM || bench_request_retry(conn, req) != 0)
    bench_request_failed(conn, req, BENCH_ERR_RESET, now);
  return 0;
}

static int on_headers_end(speedy_session *s, int32_t id, int end_stream, void *user) {
  (void)s, (void)end_stream;
  bench_conn *conn = user;
  if (conn->informational_id == id) conn->informational_id = 0;
  return 0;
}

/* Received field blocks, compressed: SPDY's SYN_REPLY and HEADERS, HTTP/2's HEADERS and
 * CONTINUATION (frame payloads, as h2load counts HEADERS). */
static void on_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t stream_id,
                     uint32_t length, const char *summary, void *user) {
  (void)s, (void)flags, (void)stream_id, (void)summary;
  bench_conn *conn = user;
  if (sent) return;
  int block = conn->proto == IO_PROTO_H2
                  ? type == SPEEDY_H2_FRAME_HEADERS || type == SPEEDY_H2_FRAME_CONTINUATION
                  : type == SPEEDY_SPDY_FRAME_SYN_REPLY || type == SPEEDY_SPDY_FRAME_HEADERS;
  if (block) bench_conn_stats(conn)->header_bytes_in += length;
}

static int on_goaway(speedy_session *s, int32_t last_good_id, uint32_t status, void *user) {
  (void)s, (void)last_good_id, (void)status;
  bench_conn *conn = user;
  conn->dead = 1; /* no new streams here; the thread reconnects when work is left */
  conn->goaway = 1;
  return 0;
}

int bench_spdy_start(bench_conn *conn) {
  const bench_options *opt = bench_conn_options(conn);
  speedy_callbacks *cb = NULL;
  speedy_options *so = NULL;
  if (speedy_callbacks_new(&cb) != 0 || speedy_options_new(&so) != 0) {
    speedy_callbacks_del(cb);
    return -1;
  }
  speedy_callbacks_set_on_begin_headers(cb, on_begin_headers);
  speedy_callbacks_set_on_header(cb, on_header);
  speedy_callbacks_set_on_data_chunk(cb, on_data_chunk);
  speedy_callbacks_set_on_stream_close(cb, on_stream_close);
  speedy_callbacks_set_on_goaway(cb, on_goaway);
  speedy_callbacks_set_on_headers_end(cb, on_headers_end);
  speedy_callbacks_set_on_frame(cb, on_frame);
  speedy_options_set_frame_summaries(so, 0); /* only lengths are counted */
  speedy_options_set_stream_window(so, opt->stream_window);
  speedy_options_set_session_window(so, opt->session_window);
  speedy_options_set_max_concurrent_streams(so, 0);
  speedy_options_set_push(so, 0);
  (void)speedy_options_set_deflate_level(so, opt->header_compression); /* 0-9: checked */
  int rv = speedy_session_new(&conn->session, protocol_of(conn), SPEEDY_ROLE_CLIENT, cb, so, conn);
  speedy_callbacks_del(cb);
  speedy_options_del(so);
  if (rv != 0) return -1;
  speedy_session_set_now(conn->session, bench_now_ns());
  io_conn_want_writable(conn->io);
  return 0;
}

int bench_spdy_send(bench_conn *conn, bench_req *req) {
  size_t n;
  const speedy_header *h = bench_spdy_headers(conn, req->path, &n);
  int32_t id = speedy_submit_request(conn->session, 3, h, n, NULL, NULL, req);
  if (id < 0) return -1;
  req->stream_id = id;
  io_conn_want_writable(conn->io);
  return 0;
}

void bench_spdy_writable(bench_conn *conn, size_t room) {
  if (!conn->session) return;
  if (io_session_pump(conn->io, conn->session, room, 0, 0, NULL, NULL) == IO_PUMP_SESSION_ERROR) {
    conn->dead = 1;
    io_conn_abort(conn->io, UV_EPROTO);
  }
}

size_t bench_spdy_read(bench_conn *conn, const uint8_t *data, size_t len) {
  if (!conn->session) return len;
  speedy_session_set_now(conn->session, bench_now_ns());
  int64_t rv = speedy_session_recv(conn->session, data, len);
  if (rv < 0) {
    int64_t now = bench_now_ns();
    for (int i = 0; i < conn->n_slots; i++)
      if (conn->slots[i].in_use)
        bench_request_failed(conn, &conn->slots[i], BENCH_ERR_PROTOCOL, now);
    conn->dead = 1;
    bench_spdy_writable(conn, io_conn_room(conn->io) + 4096); /* the GOAWAY, if any */
    io_conn_close(conn->io);
    conn->closing = 1;
    return len;
  }
  io_conn_want_writable(conn->io);
  return (size_t)rv;
}

void bench_spdy_goaway(bench_conn *conn) {
  if (!conn->session) return;
  speedy_submit_goaway(conn->session, SPEEDY_RST_NONE, NULL, 0);
  bench_spdy_writable(conn, io_conn_room(conn->io) + 4096);
}

void bench_spdy_closed(bench_conn *conn) {
  speedy_session_del(conn->session);
  conn->session = NULL;
}
