/* bench_http1.c — a `speedy bench` connection speaking HTTP/1.1 with keep-alive and
 * pipelining: up to -m requests written back to back, responses parsed in order by llhttp
 * and matched to the ring of slots in send order. llhttp holds each body to its
 * Content-Length, so a short body shows as a connection closed mid-response and a long
 * one as a parse error of the next response; a Content-Length that changed between
 * responses of one URL is caught by the size check against the first fetch. A response
 * with neither Content-Length nor chunked coding ends with the connection (RFC 9112 6.3
 * item 8) — over TLS only with close_notify, or it may have been cut short. Interim
 * responses (1xx but 101) are skipped and 204 and 304 end at their head, as h2load does
 * (RFC 9110 15.2, RFC 9112 6.3).
 */
#include <string.h>

#include "bench_int.h"
#include "http_client.h"

static bench_conn *conn_of(llhttp_t *parser) { return parser->data; }

static bench_req *head_req(bench_conn *conn) {
  if (conn->in_flight == 0) return NULL;
  bench_req *req = &conn->slots[conn->ring_head];
  return req->in_use ? req : NULL;
}

static int on_message_begin(llhttp_t *p) {
  bench_req *req = head_req(conn_of(p));
  if (!req) return -1;                              /* a response nobody asked for */
  if (!req->t_first) req->t_first = bench_now_ns(); /* an interim response's counts */
  return 0;
}

static int on_headers_complete(llhttp_t *p) {
  bench_conn *conn = conn_of(p);
  bench_req *req = head_req(conn);
  if (!req) return -1;
  if (http_client_is_interim(p->status_code)) {
    conn->interim = 1;
    return 1; /* no body; the final response follows */
  }
  req->status = p->status_code;
  if (!http_client_status_has_body(p->status_code)) return 1; /* 204, 304: whatever it says */
  if (p->flags & F_CONTENT_LENGTH) {
    req->has_length = 1;
    req->content_length = p->content_length;
  }
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  bench_req *req = head_req(conn_of(p));
  if (!req) return -1;
  bench_request_body(req, (const uint8_t *)at, len);
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  bench_conn *conn = conn_of(p);
  bench_req *req = head_req(conn);
  if (!req) return -1;
  if (conn->interim) {
    conn->interim = 0;
    return 0;
  }
  conn->ring_head = (conn->ring_head + 1) % conn->n_slots;
  bench_request_done(conn, req, bench_now_ns());
  if (!llhttp_should_keep_alive(p)) conn->dead = 1;
  return 0;
}

int bench_http1_start(bench_conn *conn) {
  llhttp_settings_init(&conn->settings);
  conn->settings.on_message_begin = on_message_begin;
  conn->settings.on_headers_complete = on_headers_complete;
  conn->settings.on_body = on_body;
  conn->settings.on_message_complete = on_message_complete;
  llhttp_init(&conn->parser, HTTP_RESPONSE, &conn->settings);
  conn->parser.data = conn;
  conn->ring_head = 0;
  return 0;
}

int bench_http1_send(bench_conn *conn, bench_req *req) {
  size_t len;
  const char *bytes = bench_http1_request(conn, req->path, &len);
  return io_conn_write(conn->io, bytes, len) == 0 ? 0 : -1;
}

size_t bench_http1_read(bench_conn *conn, const uint8_t *data, size_t len) {
  if (!conn->parser.data || conn->closing) return len;
  llhttp_errno_t err = llhttp_execute(&conn->parser, (const char *)data, len);
  if (err != HPE_OK) {
    int64_t now = bench_now_ns();
    bench_req *req = head_req(conn);
    if (req) bench_request_failed(conn, req, BENCH_ERR_PROTOCOL, now);
    /* the requests behind it are failed as CLOSED when the connection goes */
    conn->dead = 1;
    conn->closing = 1;
    io_conn_abort(conn->io, UV_EPROTO);
  }
  return len;
}

void bench_http1_closed(bench_conn *conn, int status) {
  if (status != UV_EOF || !conn->parser.data || conn->closing || head_req(conn) == NULL) return;
  if (!io_conn_peer_closed_cleanly(conn->io)) return; /* TLS without close_notify */
  /* completes a close-delimited body (on_message_complete); anything else is left to
   * fail as closed */
  (void)llhttp_finish(&conn->parser);
}
