/* speedyd_h1.c — an HTTP/1.1 connection: llhttp (strict: no lenient modes) ↔ io_conn.
 *
 * One request at a time, which gives pipelining with in-order answers for free: when a
 * request is complete the parser pauses and on_read returns the count it consumed, so
 * the I/O layer holds the pipelined rest (and stops reading) until the answer has been
 * written; then parsing resumes where it stopped. Request bodies (Content-Length or
 * chunked; llhttp decodes chunks) stream into the upload sink as they arrive.
 *
 * Limits: the request target is bounded by HTTP_REQUEST_MAX_LINE (414), header fields by
 * --max-header-bytes (431), upload bodies by the sink (413). A parse error is a 400.
 * After any of these the answer carries "Connection: close" and the connection ends.
 *
 * Requests are read by src/http/http_h1.c (llhttp, strict, with the bounds and the
 * request-smuggling defences of docs/security.md). A request's headers must
 * arrive whole within --header-timeout of its first byte (slowloris); a connection
 * answers at most H1_MAX_REQUESTS requests; under memory pressure new requests get 503.
 *
 * Bodies are read into the connection's output (io_conn_write copies; TLS must see
 * plaintext anyway) up to io_conn_room() per turn, so a slow reader costs a bounded
 * buffer, not the whole file. Plaintext file bodies of SPEEDYD_SENDFILE_MIN bytes or more go
 * out with sendfile(2) instead (io_conn_sendfile, on a dup of the body's descriptor, so
 * the answer can finish while the kernel still sends): no copy through user space. Small
 * ones are cheaper copied: head and body leave in one write.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_err.h"
#include "http_h1.h"
#include "speedyd.h"

#define H1_OUT_CHUNK 16384u
/* Requests on one connection (pipelined or not); then "Connection: close". */
#define H1_MAX_REQUESTS 10000u

typedef enum h1_state { H1_READING, H1_WRITING, H1_CLOSING } h1_state;

typedef struct speedyd_h1_conn {
  speedyd_conn *base;
  http_h1_reader reader; /* its request is the one being read or answered */
  h1_state state;
  http_response response;
  http_upload *upload;
  uint64_t upload_charged; /* its echoed body's bytes on the budget */
  int error;               /* HTTP_ERR_* to answer, then close */
  int keep_alive;
  int is_head;
  /* output */
  char *head;
  size_t head_len, head_sent;
  uint64_t body_in, body_out, bytes_out;
  uint64_t sequence; /* requests on this connection, for the log's stream column */
  /* defences */
  int64_t request_start_ns; /* first byte of the request being read; 0: none yet */
  int overloaded;           /* memory pressure when the headers completed: 503 */
} speedyd_h1_conn;

/* Body bytes on their way from a file or the cache into the connection's output (which
 * copies them): one buffer per thread, so an idle connection carries none. */
static _Thread_local uint8_t h1_chunk[H1_OUT_CHUNK];

/* ---- the request reader's callbacks ---- */

static int on_headers(http_h1_reader *reader, void *user) {
  speedyd_h1_conn *h = user;
  speedyd_server *server = h->base->server;
  http_request *r = &reader->request;
  h->request_start_ns = 0;
  h->is_head = strcmp(r->method, "HEAD") == 0;
  if (speedyd_budget_pressure(&h->base->budget)) {
    h->overloaded = 1; /* answered 503 once the message is read */
    return 0;
  }
  io_conn_set_idle_timeout(h->base->io, server->config.idle_timeout_ms);
  if (speedyd_serve_is_upload(server, r) && strcmp(r->method, "POST") == 0) {
    int rv = http_upload_begin(&h->upload, &server->upload_options, r);
    if (rv != 0) return rv;
  } else if (r->content_length > (int64_t)SPEEDYD_MAX_DROPPED_BODY) {
    return HTTP_ERR_TOO_LARGE;
  }
  /* RFC 9110 10.1.1: content that waits for a 100 is asked for at once (its answer comes
   * after it, read); an HTTP/1.0 request's expectation is ignored. */
  const char *expect = http_headers_get(&r->headers, "expect");
  if (r->has_body && r->protocol == HTTP_PROTO_HTTP11 && expect != NULL &&
      strcasecmp(expect, "100-continue") == 0)
    io_conn_write(h->base->io, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  return 0;
}

static int on_body(http_h1_reader *reader, const uint8_t *at, size_t len, void *user) {
  (void)reader;
  speedyd_h1_conn *h = user;
  h->body_in += len;
  if (h->upload != NULL && !h->overloaded) {
    if (speedyd_budget_charge_upload(&h->base->budget, len) != 0) return HTTP_ERR_UNAVAILABLE;
    h->upload_charged += len;
    return http_upload_feed(h->upload, at, len);
  }
  return h->upload == NULL && h->body_in > SPEEDYD_MAX_DROPPED_BODY ? HTTP_ERR_TOO_LARGE : 0;
}

static const http_h1_callbacks reader_callbacks = {.on_headers = on_headers, .on_body = on_body};

/* ---- answers ---- */

/* Forgets the answered request (the reader goes on to the next one). */
static void reset_request(speedyd_h1_conn *h) {
  http_h1_reader_next(&h->reader);
  http_response_free(&h->response);
  http_response_init(&h->response);
  http_upload_del(h->upload);
  h->upload = NULL;
  speedyd_budget_release_upload(&h->base->budget, h->upload_charged);
  h->upload_charged = 0;
  free(h->head);
  h->head = NULL;
  h->head_len = h->head_sent = 0;
  h->body_in = h->body_out = h->bytes_out = 0;
  h->is_head = 0;
  h->overloaded = 0;
  h->request_start_ns = 0;
}

/* Builds the answer to the current request (or to h->error) and starts writing it. */
static void start_answer(speedyd_h1_conn *h) {
  speedyd_server *server = h->base->server;
  h->sequence++;
  http_request *request = &h->reader.request;
  if (h->error != 0) {
    speedyd_serve_error(&h->response, h->error);
    h->keep_alive = 0;
  } else if (h->overloaded) {
    if (http_response_set_error(&h->response, 503, NULL) != 0)
      http_response_reset(&h->response, 503);
    h->keep_alive = 0;
  } else if (h->upload != NULL) {
    int rv = http_upload_finish(h->upload, &h->response);
    if (rv != 0) speedyd_serve_error(&h->response, rv);
  } else {
    speedyd_serve_static(server, request, &h->response);
  }
  if (server->shutting_down || h->sequence >= H1_MAX_REQUESTS) h->keep_alive = 0;
  speedyd_serve_common_headers(&h->response);
  speedyd_push_add_hints(server, request, &h->response);
  if (h->is_head) http_response_drop_body(&h->response);
  /* Every answer has a Content-Length (bodies of unknown length are not produced). */
  const char *extra =
      h->keep_alive ? (request->protocol == HTTP_PROTO_HTTP10 ? "connection: keep-alive\r\n" : NULL)
                    : "connection: close\r\n";
  if (http_response_format_http1(&h->response, "HTTP/1.1", extra, &h->head, &h->head_len) != 0) {
    io_conn_abort(h->base->io, UV_ENOMEM);
    h->state = H1_CLOSING;
    return;
  }
  h->state = H1_WRITING;
  io_conn_want_writable(h->base->io);
}

static void finish_answer(speedyd_h1_conn *h) {
  speedyd_server *server = h->base->server;
  const http_request *request = &h->reader.request;
  if (request->method != NULL || h->error != 0) {
    speedyd_log_access(server, h->base, request, h->response.status, h->body_out,
                       request->protocol == HTTP_PROTO_HTTP10 ? "http/1.0" : "http/1.1",
                       (int64_t)h->sequence, h->body_in, h->bytes_out);
  }
  if (!h->keep_alive || h->error != 0) {
    h->state = H1_CLOSING;
    io_conn_close(h->base->io);
    return;
  }
  reset_request(h);
  h->state = H1_READING;
  io_conn_pause_read(h->base->io, 0); /* the pipelined rest, if any, comes again */
}

/* Hands the rest of a file body to the I/O layer's sendfile. Returns 1 when it did. */
static int send_file_body(speedyd_h1_conn *h, io_conn *io, http_body *body) {
  int fd;
  uint64_t offset, length;
  if (io_conn_is_tls(io) || http_body_file_range(body, &fd, &offset, &length) != 0 ||
      length < SPEEDYD_SENDFILE_MIN)
    return 0;
  int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0 || io_conn_sendfile(io, copy, offset, length) != 0) return 0; /* copy it */
  http_body_advance(body, length);
  h->body_out += length;
  h->bytes_out += length;
  return 1;
}

static void on_writable(io_conn *io, size_t room, void *user) {
  speedyd_h1_conn *h = user;
  if (h->state != H1_WRITING) return;
  while (room > 0 && h->head_sent < h->head_len) {
    size_t n = h->head_len - h->head_sent;
    if (n > room) n = room;
    if (io_conn_write(io, h->head + h->head_sent, n) != 0) return;
    h->head_sent += n;
    h->bytes_out += n;
    room -= n;
  }
  http_body *body = h->response.body;
  if (body != NULL && h->head_sent == h->head_len && send_file_body(h, io, body)) body = NULL;
  while (room > 0 && body != NULL) {
    size_t want = room < sizeof(h1_chunk) ? room : sizeof(h1_chunk);
    int eof = 0;
    int64_t n = http_body_read(body, h1_chunk, want, &eof);
    if (n < 0) {
      /* The Content-Length promise cannot be kept (a file shrank): end the connection. */
      speedyd_log_error(h->base->server, io_conn_peer(io), "body failed: %s",
                        http_strerror((int)n));
      h->state = H1_CLOSING;
      io_conn_abort(io, UV_EIO);
      return;
    }
    if (n > 0 && io_conn_write(io, h1_chunk, (size_t)n) != 0) return;
    h->body_out += (uint64_t)n;
    h->bytes_out += (uint64_t)n;
    room -= (size_t)n;
    if (eof)
      body = NULL;
    else if (n == 0)
      break;
  }
  if (h->head_sent < h->head_len || body != NULL) {
    io_conn_want_writable(io);
    return;
  }
  finish_answer(h);
}

/* Slowloris: a request's headers must be whole within --header-timeout of its first
 * byte, however the bytes trickle in (the idle timeout only sees silence). */
static int headers_too_slow(speedyd_h1_conn *h) {
  uint32_t timeout_ms = h->base->server->config.header_timeout_ms;
  if (h->reader.had_headers || timeout_ms == 0) return 0;
  int64_t now = speedyd_now_ns();
  if (h->request_start_ns == 0) h->request_start_ns = now;
  return now - h->request_start_ns > (int64_t)timeout_ms * 1000000;
}

static size_t on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  speedyd_h1_conn *h = user;
  if (h->state == H1_CLOSING) return len;
  if (h->state != H1_READING) return 0; /* answering: hold the rest (pipelining) */
  if (headers_too_slow(h)) {
    speedyd_log_error(h->base->server, io_conn_peer(io),
                      "too slow: request headers took longer than --header-timeout");
    h->state = H1_CLOSING;
    io_conn_abort(io, UV_ECANCELED);
    return len;
  }
  size_t consumed = 0;
  http_h1_event event = http_h1_reader_feed(&h->reader, data, len, &consumed);
  if (event == HTTP_H1_MORE) return consumed;
  if (event == HTTP_H1_MESSAGE) {
    h->keep_alive = h->reader.keep_alive;
    start_answer(h);
    return consumed;
  }
  h->error = h->reader.error;
  if (h->reader.malformed) {
    const char *why = http_h1_reader_error_reason(&h->reader);
    char reason[128];
    speedyd_log_error(h->base->server, io_conn_peer(io), "bad HTTP/1.1 request: %s",
                      speedyd_log_escape(why, strlen(why), reason, sizeof(reason)));
  }
  /* A request we must refuse and close for (malformed, too large, smuggling shapes) costs
   * its address as a broken SPDY session does: a peer that reconnects to send the next
   * one is a flood (bytes that are not HTTP at all land here too). */
  (void)speedyd_addr_glitch(h->base->server, h->base->addr, SPEEDYD_ADDR_ERROR_COST);
  start_answer(h);
  return len;
}

static void on_eof(io_conn *io, void *user) {
  speedyd_h1_conn *h = user;
  /* A client that half-closes after its requests still gets its answers. */
  if (h->state == H1_READING)
    io_conn_close(io);
  else
    h->keep_alive = 0;
}

static void on_close(io_conn *io, int status, void *user) {
  speedyd_h1_conn *h = user;
  if (status != 0 && status != UV_EOF && status != UV_ECONNRESET && status != UV_EIO) {
    const char *detail = io_conn_error_detail(io);
    speedyd_log_error(h->base->server, io_conn_peer(io), "connection closed: %s%s%s",
                      io_strerror(status), detail[0] ? ": " : "", detail);
  }
  reset_request(h);
  http_h1_reader_free(&h->reader);
  speedyd_conn *base = h->base;
  speedyd_budget_release(&base->budget, sizeof(*h));
  free(h);
  speedyd_conn_closed(base);
}

static void on_shutdown(speedyd_conn *c) {
  speedyd_h1_conn *h = c->impl;
  /* Idle between requests: close now; otherwise after the answer in flight. */
  if (h->state == H1_READING && !h->reader.had_headers && h->reader.url_len == 0) {
    h->state = H1_CLOSING;
    io_conn_close(c->io);
  } else {
    h->keep_alive = 0;
  }
}

static int conn_idle(const speedyd_conn *c) {
  const speedyd_h1_conn *h = c->impl;
  return h->state == H1_READING && !h->reader.had_headers && h->reader.url_len == 0 &&
         h->request_start_ns == 0;
}

int speedyd_h1_start(speedyd_conn *c) {
  if (speedyd_budget_charge(&c->budget, sizeof(speedyd_h1_conn)) != 0) return HTTP_ERR_LIMIT;
  speedyd_h1_conn *h = calloc(1, sizeof(*h));
  if (h == NULL) {
    speedyd_budget_release(&c->budget, sizeof(speedyd_h1_conn));
    return HTTP_ERR_NOMEM;
  }
  h->base = c;
  http_h1_reader_init(&h->reader, c->server->config.max_header_bytes, io_conn_is_tls(c->io),
                      &reader_callbacks, h);
  http_response_init(&h->response);
  c->impl = h;
  c->shutdown = on_shutdown;
  c->idle = conn_idle;
  const io_conn_callbacks callbacks = {
      .on_read = on_read, .on_eof = on_eof, .on_writable = on_writable, .on_close = on_close};
  io_conn_set_callbacks(c->io, &callbacks, h);
  return 0;
}
