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
 * Request smuggling shapes (docs/security.md): llhttp (strict) already refuses
 * Content-Length with Transfer-Encoding, duplicate Content-Lengths and a
 * Transfer-Encoding whose last coding is not chunked; we add a 400 for obsolete line
 * folding and for whitespace before a field's colon, which llhttp 8 lets through, and
 * cap chunk extensions (llhttp streams them; we count them). A request's headers must
 * arrive whole within --header-timeout of its first byte (slowloris); a connection
 * answers at most H1_MAX_REQUESTS requests; under memory pressure new requests get 503.
 *
 * Bodies are read into the connection's output (io_conn_write copies; TLS must see
 * plaintext anyway) up to io_conn_room() per turn, so a slow reader costs a bounded
 * buffer, not the whole file. Plaintext file bodies of H1_SENDFILE_MIN bytes or more go
 * out with sendfile(2) instead (io_conn_sendfile, on a dup of the body's descriptor, so
 * the answer can finish while the kernel still sends): no copy through user space. Small
 * ones are cheaper copied: head and body leave in one write.
 */
#include <fcntl.h>
#include <llhttp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_err.h"
#include "speedyd.h"

/* Longest header name we accept (431 beyond); values are bounded by the header budget. */
#define H1_MAX_NAME 256u
#define H1_OUT_CHUNK 16384u
/* File bodies at least this long go out with sendfile (plaintext only). */
#define H1_SENDFILE_MIN 16384u
/* Chunk extensions of one message (they mean nothing to us; llhttp does not buffer them). */
#define H1_MAX_CHUNK_EXTENSIONS 4096u
/* Requests on one connection (pipelined or not); then "Connection: close". */
#define H1_MAX_REQUESTS 10000u

typedef enum h1_state { H1_READING, H1_WRITING, H1_CLOSING } h1_state;

typedef struct speedyd_h1_conn {
  speedyd_conn *base;
  llhttp_t parser;
  llhttp_settings_t settings;
  h1_state state;
  http_request request;
  http_response response;
  http_upload *upload;
  int error; /* HTTP_ERR_* found while parsing: answer it, then close */
  int keep_alive;
  int paused; /* the parser returned HPE_PAUSED and needs llhttp_resume */
  int had_headers;
  int is_head;
  /* header field being collected (llhttp may deliver it in pieces) */
  char name[H1_MAX_NAME];
  size_t name_len;
  char *value;
  size_t value_len, value_cap;
  int in_value;
  size_t header_bytes; /* request line + header bytes of this request */
  char *url;
  size_t url_len;
  /* output */
  char *head;
  size_t head_len, head_sent;
  uint64_t body_in, body_out, bytes_out;
  uint64_t sequence; /* requests on this connection, for the log's stream column */
  /* defences */
  const uint8_t *in_start; /* the buffer llhttp is parsing, for the obs-fold check */
  uint8_t in_prev;         /* the byte before in_start ('\n' at the start) */
  size_t chunk_extension_bytes;
  int64_t request_start_ns; /* first byte of the request being read; 0: none yet */
  int overloaded;           /* memory pressure when the headers completed: 503 */
} speedyd_h1_conn;

/* Body bytes on their way from a file or the cache into the connection's output (which
 * copies them): one buffer per thread, so an idle connection carries none. */
static _Thread_local uint8_t h1_chunk[H1_OUT_CHUNK];

static speedyd_h1_conn *conn_of(llhttp_t *p) { return p->data; }

static int fail(speedyd_h1_conn *h, int err) {
  if (h->error == 0) h->error = err;
  return -1;
}

/* ---- header collection ---- */

static int commit_header(speedyd_h1_conn *h) {
  if (!h->in_value) return 0;
  h->in_value = 0;
  /* "Host : x" — whitespace before the colon (RFC 9112 5.1: must be a 400). */
  if (memchr(h->name, ' ', h->name_len) != NULL || memchr(h->name, '\t', h->name_len) != NULL)
    return fail(h, HTTP_ERR_BAD_REQUEST);
  int rv = http_request_add_header(&h->request, h->name, h->name_len, h->value ? h->value : "",
                                   h->value_len);
  h->name_len = 0;
  h->value_len = 0;
  return rv == 0 ? 0 : fail(h, rv);
}

static int budget(speedyd_h1_conn *h, size_t len, int err) {
  size_t max = h->base->server->config.max_header_bytes;
  if (len > max || h->header_bytes > max - len) return fail(h, err);
  h->header_bytes += len;
  return 0;
}

static int on_message_begin(llhttp_t *p) {
  speedyd_h1_conn *h = conn_of(p);
  h->header_bytes = 0;
  h->chunk_extension_bytes = 0;
  return 0;
}

static int on_chunk_extension(llhttp_t *p, const char *at, size_t len) {
  (void)at;
  speedyd_h1_conn *h = conn_of(p);
  if (len > H1_MAX_CHUNK_EXTENSIONS - h->chunk_extension_bytes)
    return fail(h, HTTP_ERR_BAD_REQUEST);
  h->chunk_extension_bytes += len;
  return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len) {
  speedyd_h1_conn *h = conn_of(p);
  if (len > HTTP_REQUEST_MAX_LINE - h->url_len) return fail(h, HTTP_ERR_URI_TOO_LONG);
  char *grown = realloc(h->url, h->url_len + len + 1);
  if (grown == NULL) return fail(h, HTTP_ERR_NOMEM);
  h->url = grown;
  memcpy(h->url + h->url_len, at, len);
  h->url_len += len;
  return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  speedyd_h1_conn *h = conn_of(p);
  if (commit_header(h) != 0) return -1;
  if (budget(h, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > sizeof(h->name) - h->name_len) return fail(h, HTTP_ERR_HEADERS_TOO_LARGE);
  memcpy(h->name + h->name_len, at, len);
  h->name_len += len;
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  speedyd_h1_conn *h = conn_of(p);
  /* A value piece right after a line break is a folded continuation line (obs-fold,
   * RFC 9112 5.2: reject with 400). Ordinary values follow "name:" and spaces. */
  const uint8_t *piece = (const uint8_t *)at;
  uint8_t before = piece > h->in_start ? piece[-1] : h->in_prev;
  if (len > 0 && before == '\n') return fail(h, HTTP_ERR_BAD_REQUEST);
  h->in_value = 1;
  if (budget(h, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > h->value_cap - h->value_len) {
    size_t cap = h->value_cap ? h->value_cap : 256;
    while (cap - h->value_len < len) cap *= 2; /* bounded by the header budget */
    char *grown = realloc(h->value, cap);
    if (grown == NULL) return fail(h, HTTP_ERR_NOMEM);
    h->value = grown;
    h->value_cap = cap;
  }
  if (len > 0) memcpy(h->value + h->value_len, at, len); /* value is NULL until needed */
  h->value_len += len;
  return 0;
}

static int on_headers_complete(llhttp_t *p) {
  speedyd_h1_conn *h = conn_of(p);
  speedyd_server *server = h->base->server;
  if (commit_header(h) != 0) return -1;
  http_request *r = &h->request;
  r->protocol = p->http_major == 1 && p->http_minor == 0 ? HTTP_PROTO_HTTP10 : HTTP_PROTO_HTTP11;
  const char *method = llhttp_method_name((llhttp_method_t)p->method);
  char version[16];
  snprintf(version, sizeof(version), "HTTP/%u.%u", p->http_major, p->http_minor);
  int rv = http_request_set_method(r, method, strlen(method));
  if (rv == 0) rv = http_request_set_path(r, h->url ? h->url : "", h->url_len);
  if (rv == 0) rv = http_request_set_version(r, version, strlen(version));
  if (rv == 0)
    rv = http_request_set_scheme(r, io_conn_is_tls(h->base->io) ? "https" : "http",
                                 io_conn_is_tls(h->base->io) ? 5 : 4);
  r->has_body = (p->flags & F_CHUNKED) != 0 || r->content_length > 0;
  if (rv == 0) rv = http_request_finish(r);
  if (rv != 0) return fail(h, rv);
  h->had_headers = 1;
  h->request_start_ns = 0;
  h->is_head = strcmp(r->method, "HEAD") == 0;
  if (speedyd_budget_pressure(&h->base->budget)) {
    h->overloaded = 1; /* answered 503 once the message is read */
    return 0;
  }
  io_conn_set_idle_timeout(h->base->io, server->config.idle_timeout_ms);
  if (speedyd_serve_is_upload(server, r) && strcmp(r->method, "POST") == 0) {
    rv = http_upload_begin(&h->upload, &server->upload_options, r);
    if (rv != 0) return fail(h, rv);
    const char *expect = http_headers_get(&r->headers, "expect");
    if (expect != NULL && strcasecmp(expect, "100-continue") == 0)
      io_conn_write(h->base->io, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  }
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  speedyd_h1_conn *h = conn_of(p);
  h->body_in += len;
  if (h->upload != NULL && !h->overloaded) {
    int rv = http_upload_feed(h->upload, (const uint8_t *)at, len);
    if (rv != 0) return fail(h, rv);
  }
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  speedyd_h1_conn *h = conn_of(p);
  h->keep_alive = llhttp_should_keep_alive(p);
  return HPE_PAUSED; /* answer this one before looking at the next */
}

/* ---- answers ---- */

static void reset_request(speedyd_h1_conn *h) {
  http_request_free(&h->request);
  http_request_init(&h->request, HTTP_PROTO_HTTP11, h->base->server->config.max_header_bytes, 0);
  http_response_free(&h->response);
  http_response_init(&h->response);
  http_upload_del(h->upload);
  h->upload = NULL;
  free(h->head);
  h->head = NULL;
  h->head_len = h->head_sent = 0;
  h->url_len = 0;
  h->name_len = h->value_len = 0;
  h->in_value = 0;
  h->header_bytes = 0;
  h->body_in = h->body_out = h->bytes_out = 0;
  h->had_headers = 0;
  h->is_head = 0;
  h->overloaded = 0;
  h->request_start_ns = 0;
}

/* Builds the answer to the current request (or to h->error) and starts writing it. */
static void start_answer(speedyd_h1_conn *h) {
  speedyd_server *server = h->base->server;
  h->sequence++;
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
    speedyd_serve_static(server, &h->request, &h->response);
  }
  if (server->shutting_down || h->sequence >= H1_MAX_REQUESTS) h->keep_alive = 0;
  speedyd_serve_common_headers(&h->response);
  speedyd_push_add_hints(server, &h->request, &h->response);
  if (h->is_head) http_response_drop_body(&h->response);
  /* Every answer has a Content-Length (bodies of unknown length are not produced). */
  const char *extra =
      h->keep_alive
          ? (h->request.protocol == HTTP_PROTO_HTTP10 ? "connection: keep-alive\r\n" : NULL)
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
  if (h->request.method != NULL || h->error != 0) {
    speedyd_log_access(server, h->base, &h->request, h->response.status, h->body_out,
                       h->request.protocol == HTTP_PROTO_HTTP10 ? "http/1.0" : "http/1.1",
                       (int64_t)h->sequence, h->body_in, h->bytes_out);
  }
  if (!h->keep_alive || h->error != 0) {
    h->state = H1_CLOSING;
    io_conn_close(h->base->io);
    return;
  }
  reset_request(h);
  h->state = H1_READING;
  if (h->paused) {
    h->paused = 0;
    llhttp_resume(&h->parser);
  }
  io_conn_pause_read(h->base->io, 0); /* the pipelined rest, if any, comes again */
}

/* Hands the rest of a file body to the I/O layer's sendfile. Returns 1 when it did. */
static int send_file_body(speedyd_h1_conn *h, io_conn *io, http_body *body) {
  int fd;
  uint64_t offset, length;
  if (io_conn_is_tls(io) || http_body_file_range(body, &fd, &offset, &length) != 0 ||
      length < H1_SENDFILE_MIN)
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
  if (h->had_headers || timeout_ms == 0) return 0;
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
  h->in_start = data;
  llhttp_errno_t err = llhttp_execute(&h->parser, (const char *)data, len);
  if (err == HPE_OK) {
    if (len > 0) h->in_prev = data[len - 1];
    if (h->error == 0) return len;
  } else if (err == HPE_PAUSED) {
    h->paused = 1;
    size_t consumed = (size_t)(llhttp_get_error_pos(&h->parser) - (const char *)data);
    if (consumed > len) consumed = len;
    if (consumed > 0) h->in_prev = data[consumed - 1];
    start_answer(h);
    return consumed;
  }
  if (h->error == 0) {
    char reason[128];
    speedyd_log_error(h->base->server, io_conn_peer(io), "bad HTTP/1.1 request: %s",
                      speedyd_log_escape(llhttp_get_error_reason(&h->parser),
                                         strlen(llhttp_get_error_reason(&h->parser)), reason,
                                         sizeof(reason)));
    h->error = HTTP_ERR_BAD_REQUEST;
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
  http_request_free(&h->request);
  free(h->url);
  free(h->value);
  speedyd_conn *base = h->base;
  speedyd_budget_release(&base->budget, sizeof(*h));
  free(h);
  speedyd_conn_closed(base);
}

static void on_shutdown(speedyd_conn *c) {
  speedyd_h1_conn *h = c->impl;
  /* Idle between requests: close now; otherwise after the answer in flight. */
  if (h->state == H1_READING && !h->had_headers && h->url_len == 0) {
    h->state = H1_CLOSING;
    io_conn_close(c->io);
  } else {
    h->keep_alive = 0;
  }
}

static int conn_idle(const speedyd_conn *c) {
  const speedyd_h1_conn *h = c->impl;
  return h->state == H1_READING && !h->had_headers && h->url_len == 0 && h->request_start_ns == 0;
}

int speedyd_h1_start(speedyd_conn *c) {
  if (speedyd_budget_charge(&c->budget, sizeof(speedyd_h1_conn)) != 0) return HTTP_ERR_LIMIT;
  speedyd_h1_conn *h = calloc(1, sizeof(*h));
  if (h == NULL) {
    speedyd_budget_release(&c->budget, sizeof(speedyd_h1_conn));
    return HTTP_ERR_NOMEM;
  }
  h->base = c;
  h->in_prev = '\n';
  llhttp_settings_init(&h->settings);
  h->settings.on_message_begin = on_message_begin;
  h->settings.on_url = on_url;
  h->settings.on_header_field = on_header_field;
  h->settings.on_header_value = on_header_value;
  h->settings.on_headers_complete = on_headers_complete;
  h->settings.on_body = on_body;
  h->settings.on_message_complete = on_message_complete;
  h->settings.on_chunk_extension_name = on_chunk_extension;
  h->settings.on_chunk_extension_value = on_chunk_extension;
  llhttp_init(&h->parser, HTTP_REQUEST, &h->settings);
  h->parser.data = h;
  http_request_init(&h->request, HTTP_PROTO_HTTP11, c->server->config.max_header_bytes, 0);
  http_response_init(&h->response);
  c->impl = h;
  c->shutdown = on_shutdown;
  c->idle = conn_idle;
  const io_conn_callbacks callbacks = {
      .on_read = on_read, .on_eof = on_eof, .on_writable = on_writable, .on_close = on_close};
  io_conn_set_callbacks(c->io, &callbacks, h);
  return 0;
}
