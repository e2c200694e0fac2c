/* speedyd_spdy.c — a SPDY or HTTP/2 connection: one libspeedy session driven by one io_conn.
 *
 * SPDY/2, /3, /3.1 and HTTP/2 take the same path: libspeedy gives every protocol the same
 * callbacks, and the differences of names (:host or :authority, ":status: 200 OK" or
 * "200") are http_spdy.c's, keyed on the request's protocol. What HTTP/2 adds here: a
 * client may refuse push (SETTINGS_ENABLE_PUSH 0), informational 103 Early Hints go
 * before a hinted page, and the flood meter reads HTTP/2's frame types.
 *
 * Input: every byte read goes to speedy_session_recv; the callbacks build an http_request
 * per stream (bounded by --max-header-bytes), feed request bodies to the upload sink and
 * answer when the request is complete. Output is pulled, and only in on_writable, up to
 * io_conn_room(): the engine produces frames just as fast as the socket takes them, so a
 * large low-priority body cannot fill the kernel's buffers ahead of an urgent stream
 * (together with TCP_NOTSENT_LOWAT and small TLS records in the I/O layer).
 *
 * Streams: request streams are the client's (odd); pushed streams ours (even). Each has
 * an sd_stream holding its request, response and body; it is freed in on_stream_close
 * (or when the connection closes: speedy_session_del calls no callbacks).
 *
 * Defences (docs/security.md): the session allocates through the connection's memory
 * budget and new streams are refused (REFUSED_STREAM) under memory pressure; frames that
 * cost work without carrying a request (PING, SETTINGS, tiny or surplus WINDOW_UPDATEs,
 * empty DATA, unknown frames, HEADERS after the request, resets either way) fill a flood
 * meter that ends the connection with GOAWAY when it overflows; a frame must arrive
 * whole within --header-timeout of its first byte (DATA: 1 KiB at least per period), so
 * a peer dripping bytes cannot hold a connection forever.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "http_spdy.h"
#include "io_session.h"
#include "speedyd.h"

typedef struct sd_stream sd_stream;

/* How many pushed resources a connection remembers. */
#define SD_PUSH_MEMORY 64

typedef struct speedyd_spdy_conn {
  speedyd_conn *base;
  speedy_session *session;
  sd_stream *streams; /* every stream with user data, for cleanup */
  sd_stream *last;    /* the stream stream_get found last (callbacks come field by field) */
  int peer_eof;
  int closing; /* fatal error or finished: flush and close */
  int goaway_sent;
  int had_request;
  int flooded;            /* a flood meter overflowed (1: the connection's, 2: its address's) */
  unsigned settings_seen; /* SETTINGS frames received (the first is free) */
  speedyd_glitch_meter glitches;
  int64_t window_updates_owed; /* DATA frames sent + streams, minus WINDOW_UPDATEs received */
  /* The slow-peer deadline: the engine's input counters at the last progress, and when
   * the frame in progress last made some (0 at a frame boundary). */
  uint64_t frames_seen;
  uint64_t data_seen;
  int64_t partial_since_ns;
  /* Resources already pushed on this connection (hashes of authority and path, a ring):
   * a page requested again is not followed by the same pushes. */
  uint64_t pushed[SD_PUSH_MEMORY];
  unsigned n_pushed;
  /* Plaintext version 3 under --plaintext-v3 auto: the session tells SPDY/3 from 3.1 by
   * the peer's flow control; when the peer gives no sign while DATA waits, this timer
   * settles it (speedy_session_protocol_undecided). */
  uv_timer_t v3_timer;
  int v3_timer_on;
  int v3_wait_state; /* the undecided state seen at the last tick */
  unsigned v3_wait_ticks;
} speedyd_spdy_conn;

/* How often an undecided session is looked at, and after how many looks in the same
 * waiting state it is settled: a 3.1 peer returns session credit within a round trip of
 * consuming half the window, so a second without a sign means it will not come. */
#define SD_V3_TICK_MS 250u
#define SD_V3_SETTLE_TICKS 4u

/* Most output taken from the engine at a time. */
#define SD_OUTPUT_SLICE 16384u
/* DATA frames of a body in memory at least this long skip the engine's output buffer. */
#define SD_NOCOPY_MIN 4096u

/* HEADERS frames after the request on one stream: beyond this the stream is reset. */
#define SD_MAX_HEADER_FRAMES 8
/* Our accounting of a stream record and each header field it stores. */
#define SD_STREAM_CHARGE (sizeof(sd_stream) + 1024u)
#define SD_FIELD_CHARGE 64u
/* Fields and bytes of names and values a stream record holds without an allocation. */
#define SD_FIELD_ROOM 8
#define SD_TEXT_ROOM 160

struct sd_stream {
  speedyd_spdy_conn *conn;
  sd_stream *prev, *next;
  int32_t id;
  int urgency;
  int is_push;
  int responded;
  int request_done; /* header block of the request ended */
  http_request request;
  http_response response;
  http_upload *upload;
  uint64_t body_in, body_out, bytes_out;
  uint64_t charged;         /* bytes of the connection's budget this stream holds */
  uint64_t upload_charged;  /* its echoed upload body's (speedyd_budget_charge_upload) */
  int header_frames;        /* HEADERS frames received after the request */
  const uint8_t *unwritten; /* a zero-copy DATA frame's payload, written by on_send_data */
  uint8_t *unwritten_lent;  /* the same when lent, writable, with room for the frame header */
  /* Room for the request's fields (http_headers_give_room), last and left uninitialised:
   * a typical request's fit, so the record is its only allocation (within glibc's
   * per-thread cache, 1,032 bytes in all). */
  http_header field_room[SD_FIELD_ROOM];
  _Alignas(max_align_t) char text_room[SD_TEXT_ROOM];
};

/* ---- streams ---- */

static sd_stream *stream_new(speedyd_spdy_conn *conn, int32_t id) {
  if (speedyd_budget_charge(&conn->base->budget, SD_STREAM_CHARGE) != 0) return NULL;
  sd_stream *s = malloc(sizeof(*s));
  if (s != NULL) memset(s, 0, offsetof(sd_stream, field_room));
  if (s == NULL) {
    speedyd_budget_release(&conn->base->budget, SD_STREAM_CHARGE);
    return NULL;
  }
  s->charged = SD_STREAM_CHARGE;
  s->conn = conn;
  s->id = id;
  http_protocol proto = HTTP_PROTO_SPDY31;
  switch (speedy_session_protocol(conn->session)) {
  case SPEEDY_PROTOCOL_SPDY2:
    proto = HTTP_PROTO_SPDY2;
    break;
  case SPEEDY_PROTOCOL_SPDY3:
    proto = HTTP_PROTO_SPDY3;
    break;
  case SPEEDY_PROTOCOL_SPDY3_1:
    proto = HTTP_PROTO_SPDY31;
    break;
  case SPEEDY_PROTOCOL_H2:
    proto = HTTP_PROTO_H2;
    break;
  }
  http_request_init(&s->request, proto, conn->base->server->config.max_header_bytes, 0);
  http_headers_give_room(&s->request.headers, s->field_room, SD_FIELD_ROOM, s->text_room,
                         sizeof(s->text_room));
  s->request.fields_checked = proto == HTTP_PROTO_H2; /* libspeedy checked HTTP/2's */
  http_response_init(&s->response);
  s->next = conn->streams;
  if (conn->streams != NULL) conn->streams->prev = s;
  conn->streams = s;
  return s;
}

static void stream_del(sd_stream *s) {
  speedyd_spdy_conn *conn = s->conn;
  if (conn->last == s) conn->last = NULL;
  if (s->prev != NULL)
    s->prev->next = s->next;
  else
    conn->streams = s->next;
  if (s->next != NULL) s->next->prev = s->prev;
  http_upload_del(s->upload);
  http_request_free(&s->request);
  http_response_free(&s->response);
  speedyd_budget_release(&conn->base->budget, s->charged);
  speedyd_budget_release_upload(&conn->base->budget, s->upload_charged);
  free(s);
}

static sd_stream *stream_get(speedyd_spdy_conn *conn, int32_t id) {
  if (conn->last != NULL && conn->last->id == id) return conn->last;
  sd_stream *s = speedy_session_get_stream_user_data(conn->session, id);
  if (s != NULL) conn->last = s;
  return s;
}

/* The body of a response, pulled by the engine (counts what was sent). A body in memory
 * (the file cache's) is not copied into the engine's output: the frame's payload goes from
 * the body straight into the connection (on_send_data), when the frame is large enough
 * for that to save more than the extra writes cost. */
static int64_t stream_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf,
                                size_t len, uint32_t *flags, void *source, void *user) {
  sd_stream *s = source;
  const uint8_t *span;
  uint8_t *lent;
  size_t left, room;
  if (len >= SD_NOCOPY_MIN && http_body_memory_span(s->response.body, &span, &left) == 0 &&
      left >= SD_NOCOPY_MIN) {
    size_t n = left < len ? left : len;
    /* Over TLS a payload lent with room for its frame header leaves with it as one
     * record (io_conn_write_framed), when the frame fits one. */
    size_t head = speedy_session_data_header_length(session);
    s->unwritten_lent = NULL;
    if (io_conn_is_tls(s->conn->base->io) &&
        http_body_lent_span(s->response.body, &lent, &left, &room) == 0 && room >= head)
      s->unwritten_lent = lent;
    if (s->unwritten_lent && n > IO_TLS_RECORD_MAX - head) n = IO_TLS_RECORD_MAX - head;
    s->unwritten = span;
    http_body_advance(s->response.body, n);
    if (n == left) *flags |= SPEEDY_DATA_FLAG_EOF;
    *flags |= SPEEDY_DATA_FLAG_NO_COPY;
    s->body_out += n;
    return (int64_t)n;
  }
  int64_t n = http_spdy_body_read(session, stream_id, buf, len, flags, s->response.body, user);
  if (n > 0) s->body_out += (uint64_t)n;
  if (n < 0 && n != SPEEDY_ERR_DEFERRED) {
    speedyd_log_error(s->conn->base->server, io_conn_peer(s->conn->base->io),
                      "stream %d: body of %s failed: %s", (int)stream_id,
                      s->request.path ? "the response" : "a push", http_strerror((int)n));
  }
  return n;
}

/* A zero-copy DATA frame's turn (stream_body_read): its header, then its payload. */
static int on_send_data(speedy_session *session, int32_t stream_id, const uint8_t *frame_header,
                        size_t length, void *source, void *user) {
  (void)stream_id;
  speedyd_spdy_conn *conn = user;
  sd_stream *s = source;
  if (s == NULL || s->unwritten == NULL) return -1;
  size_t head = speedy_session_data_header_length(session);
  int rv;
  if (s->unwritten_lent != NULL)
    rv = io_conn_write_framed(conn->base->io, frame_header, head, s->unwritten_lent, length);
  else if ((rv = io_conn_write(conn->base->io, frame_header, head)) == 0)
    rv = io_conn_write(conn->base->io, s->unwritten, length);
  s->unwritten = NULL;
  s->unwritten_lent = NULL;
  return rv == 0 ? 0 : -1;
}

/* FNV-1a over the authority and the path: identifies a pushed resource. */
static uint64_t push_key(const char *authority, const char *path) {
  uint64_t h = 14695981039346656037u;
  for (const char *p = authority; *p != '\0'; p++) h = (h ^ (uint8_t)*p) * 1099511628211u;
  h = (h ^ ' ') * 1099511628211u;
  for (const char *p = path; *p != '\0'; p++) h = (h ^ (uint8_t)*p) * 1099511628211u;
  return h;
}

/* Records key; returns 1 when it was already pushed on this connection. */
static int push_seen(speedyd_spdy_conn *conn, uint64_t key) {
  unsigned n = conn->n_pushed < SD_PUSH_MEMORY ? conn->n_pushed : SD_PUSH_MEMORY;
  for (unsigned i = 0; i < n; i++)
    if (conn->pushed[i] == key) return 1;
  conn->pushed[conn->n_pushed++ % SD_PUSH_MEMORY] = key;
  return 0;
}

static int is_h2(const speedyd_spdy_conn *conn) {
  return speedy_session_protocol(conn->session) == SPEEDY_PROTOCOL_H2;
}

/* 1 when pages on this connection are followed by their pushes: --push, not shutting
 * down, and a client that takes them. */
static int push_allowed(speedyd_spdy_conn *conn) {
  speedyd_server *server = conn->base->server;
  if (!server->config.push || server->shutting_down) return 0;
  /* SPDY has no push opt-out but this: MAX_CONCURRENT_STREAMS 0 (SPDY/3 2.6.4); HTTP/2
   * has it too (RFC 9113 5.1.2) besides SETTINGS_ENABLE_PUSH 0 (6.5.2). The client's
   * SETTINGS come before its first request (3.4), so they are known by now. */
  if (speedy_session_remote_setting(conn->session, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS) == 0)
    return 0;
  return !is_h2(conn) ||
         speedy_session_remote_setting(conn->session, SPEEDY_SETTINGS_ENABLE_PUSH) != 0;
}

/* Hints for s's page (manifest entries, GET answered 200): under --hint, X-Subresources
 * and Link on its answer, and over HTTP/2 a 103 Early Hints (RFC 8297) with the same Link
 * before it. Under --push an HTTP/2 client that refuses push gets those hints instead
 * (browsers act on 103 and Link, and no longer take pushes). SPDY has no 1xx answers. */
static void hint_resources(speedyd_spdy_conn *conn, sd_stream *s, int pushing) {
  speedyd_server *server = conn->base->server;
  int h2 = is_h2(conn);
  if (!server->config.hint && !(h2 && server->config.push && !pushing)) return;
  const http_manifest_entry *entries;
  size_t n = speedyd_push_entries(server, &s->request, &s->response, &entries);
  if (n == 0 || http_manifest_add_hints(entries, n, &s->response) != 0 || !h2) return;
  http_response early;
  http_spdy_headers headers;
  if (speedyd_push_early_hints(&s->response, &early) == 0 &&
      http_spdy_response_headers(&early, HTTP_PROTO_H2, &headers) == 0) {
    /* A failure leaves the final answer, with its Link, to do the hinting. */
    (void)speedy_submit_headers(conn->session, s->id, headers.list, headers.count, 0);
    http_spdy_headers_free(&headers);
  }
  http_response_free(&early);
}

/* Pushes the manifest's resources for s's page (before its SYN_REPLY and body; for
 * HTTP/2, PUSH_PROMISEs before the page's HEADERS). */
static void push_resources(speedyd_spdy_conn *conn, sd_stream *page) {
  speedyd_server *server = conn->base->server;
  if (page->request.scheme == NULL || page->request.authority == NULL) return;
  const http_manifest_entry *entries;
  size_t n = speedyd_push_entries(server, &page->request, &page->response, &entries);
  for (size_t i = 0; i < n; i++) {
    if (!speedyd_push_path_ok(entries[i].path)) continue;
    if (push_seen(conn, push_key(page->request.authority, entries[i].path))) continue;
    sd_stream *s = stream_new(conn, 0);
    if (s == NULL) return;
    s->is_push = 1;
    s->urgency = entries[i].urgency;
    if (speedyd_push_request(&page->request, entries[i].path, page->request.protocol,
                             &s->request) != 0) {
      http_request_init(&s->request, page->request.protocol, 0, 0);
      stream_del(s);
      continue;
    }
    speedyd_serve_static(server, &s->request, &s->response);
    if (s->response.status != 200 || s->response.body == NULL) {
      stream_del(s); /* only resources that exist are pushed */
      continue;
    }
    speedyd_serve_common_headers(&s->response);
    http_spdy_headers request_headers, response_headers;
    if (http_spdy_push_headers(
            page->request.protocol, page->request.scheme, page->request.authority, entries[i].path,
            http_headers_get(&s->request.headers, "accept-encoding"), &request_headers) != 0) {
      stream_del(s);
      return;
    }
    if (http_spdy_response_headers(&s->response, s->request.protocol, &response_headers) != 0) {
      http_spdy_headers_free(&request_headers);
      stream_del(s);
      return;
    }
    int32_t id = speedy_submit_push(conn->session, page->id, s->urgency, request_headers.list,
                                    request_headers.count, response_headers.list,
                                    response_headers.count, stream_body_read, s, s);
    http_spdy_headers_free(&request_headers);
    http_spdy_headers_free(&response_headers);
    if (id < 0) {
      stream_del(s);
      /* closing, out of ids, queue full, HTTP/2 push refused meanwhile */
      if (id != SPEEDY_ERR_INVALID_HEADER) return;
      continue;
    }
    s->id = id;
    s->responded = 1;
  }
}

/* s cannot be answered (rv: why): a reset instead. */
static void answer_failed(speedyd_spdy_conn *conn, sd_stream *s, int rv) {
  speedyd_log_error(conn->base->server, io_conn_peer(conn->base->io),
                    "stream %d: cannot answer: %s", (int)s->id,
                    rv < -100 ? speedy_strerror(rv) : http_strerror(rv));
  speedy_submit_rst(conn->session, s->id, SPEEDY_RST_INTERNAL_ERROR);
}

/* Submits the head — fields (n of them), or set when it is not NULL — and s->response's
 * body as s's answer. */
static void submit_answer(speedyd_spdy_conn *conn, sd_stream *s, const speedy_header *fields,
                          size_t n, speedy_fieldset *set) {
  int has_body = s->response.body != NULL;
  speedy_data_read_fn read_fn = has_body ? stream_body_read : NULL;
  int rv =
      set != NULL
          ? speedy_submit_response_fieldset(conn->session, s->id, set, read_fn, has_body ? s : NULL)
          : speedy_submit_response(conn->session, s->id, fields, n, read_fn, has_body ? s : NULL);
  if (rv != 0) answer_failed(conn, s, rv);
  io_conn_want_writable(conn->base->io);
}

/* Sends s->response as the SYN_REPLY and body of s. */
static void respond(speedyd_spdy_conn *conn, sd_stream *s) {
  if (s->responded) return;
  s->responded = 1;
  /* HEAD: no content, whoever made the answer (errors carry a small page otherwise). */
  if (s->request.method != NULL && strcmp(s->request.method, "HEAD") == 0)
    http_response_drop_body(&s->response);
  speedyd_serve_common_headers(&s->response);
  int pushing = push_allowed(conn);
  hint_resources(conn, s, pushing);
  /* Pushes go first: their SYN_STREAMs must precede any of the page's content that could
   * let the client discover them (SPDY/3 3.3.1; RFC 9113 8.4.1 says the same of
   * PUSH_PROMISE). */
  if (pushing) push_resources(conn, s);
  http_spdy_headers headers;
  int rv = http_spdy_response_headers(&s->response, s->request.protocol, &headers);
  if (rv != 0) {
    answer_failed(conn, s, rv);
    io_conn_want_writable(conn->base->io);
    return;
  }
  submit_answer(conn, s, headers.list, headers.count, NULL);
  http_spdy_headers_free(&headers);
}

static void respond_error(speedyd_spdy_conn *conn, sd_stream *s, int err) {
  if (s->responded) return;
  http_upload_del(s->upload);
  s->upload = NULL;
  speedyd_budget_release_upload(&conn->base->budget, s->upload_charged);
  s->upload_charged = 0;
  speedyd_serve_error(&s->response, err);
  respond(conn, s);
}

/* ---- engine callbacks ---- */

static int on_begin_headers(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)session, (void)associated_id;
  speedyd_spdy_conn *conn = user;
  if (kind != SPEEDY_HEADERS_REQUEST) {
    /* Trailers are ignored; HEADERS piled on a stream are capped (SPDY has no
     * CONTINUATION, so each is a whole block and only the count needs a bound; libspeedy
     * bounds HTTP/2's CONTINUATIONs and allows only one trailer section). */
    sd_stream *s = stream_get(conn, stream_id);
    if (s != NULL && ++s->header_frames > SD_MAX_HEADER_FRAMES)
      speedy_submit_rst(conn->session, stream_id, SPEEDY_RST_PROTOCOL_ERROR);
    return 0;
  }
  /* Under memory pressure new work is refused; the client may retry it later. */
  sd_stream *s = speedyd_budget_pressure(&conn->base->budget) ? NULL : stream_new(conn, stream_id);
  if (s == NULL) {
    speedy_submit_rst(conn->session, stream_id, SPEEDY_RST_REFUSED_STREAM);
    return 0;
  }
  if (speedy_session_set_stream_user_data(conn->session, stream_id, s) != 0) {
    stream_del(s);
    return 0;
  }
  conn->had_request = 1;
  return 0;
}

static int on_header(speedy_session *session, int32_t stream_id, const speedy_header *header,
                     void *user) {
  (void)session;
  sd_stream *s = stream_get(user, stream_id);
  if (s == NULL || s->request_done) return 0;
  uint64_t charge = SD_FIELD_CHARGE + header->name_len + header->value_len;
  if (speedyd_budget_charge(&s->conn->base->budget, charge) != 0) {
    /* The request would not fit the budget: a 431 answer, nothing more stored. */
    s->request.error = HTTP_ERR_HEADERS_TOO_LARGE;
    return 0;
  }
  s->charged += charge;
  (void)http_spdy_request_header(&s->request, header); /* sticky: answered at the end */
  return 0;
}

static void body_ended(speedyd_spdy_conn *conn, sd_stream *s);

static int on_headers_end(speedy_session *session, int32_t stream_id, int end_stream, void *user) {
  (void)session;
  speedyd_spdy_conn *conn = user;
  sd_stream *s = stream_get(conn, stream_id);
  if (s == NULL) return 0;
  if (s->request_done) { /* trailers: with END_STREAM they end the body (RFC 9113 8.1) */
    if (end_stream && !s->responded) body_ended(conn, s);
    return 0;
  }
  s->request_done = 1;
  speedyd_server *server = conn->base->server;
  io_conn_set_idle_timeout(conn->base->io, server->config.idle_timeout_ms);
  int rv = http_spdy_request_finish(&s->request, end_stream);
  if (rv != 0) {
    respond_error(conn, s, rv); /* a 400 reply, not a reset (SPDY/3 3.2.1) */
    return 0;
  }
  if (speedyd_serve_is_upload(server, &s->request) && s->request.method != NULL &&
      strcmp(s->request.method, "POST") == 0) {
    rv = http_upload_begin(&s->upload, &server->upload_options, &s->request);
    if (rv != 0) {
      respond_error(conn, s, rv);
      return 0;
    }
    if (end_stream) {
      rv = http_upload_finish(s->upload, &s->response);
      if (rv != 0)
        respond_error(conn, s, rv);
      else
        respond(conn, s);
    }
    return 0;
  }
  /* Everything else is answered now; a body sent with it is read and dropped. Without
   * hints or pushes to add, a cached file's answer comes with its head laid out. */
  if (!server->config.hint && !server->config.push) {
    speedy_fieldset *set;
    if (speedyd_serve_static_fields(server, &s->request, &s->response, &set)) {
      s->responded = 1;
      submit_answer(conn, s, NULL, 0, set);
      return 0;
    }
  } else {
    speedyd_serve_static(server, &s->request, &s->response);
  }
  respond(conn, s);
  return 0;
}

static int on_data_chunk(speedy_session *session, int32_t stream_id, const uint8_t *data,
                         size_t len, void *user) {
  (void)session;
  speedyd_spdy_conn *conn = user;
  sd_stream *s = stream_get(conn, stream_id);
  if (s == NULL) return 0;
  if (len > UINT64_MAX - s->body_in) len = 0; /* cannot happen; keeps the sum exact */
  s->body_in += len;
  if (s->upload == NULL && s->body_in > SPEEDYD_MAX_DROPPED_BODY) {
    speedy_submit_rst(conn->session, stream_id, SPEEDY_RST_CANCEL);
    io_conn_want_writable(conn->base->io);
    return 0;
  }
  if (s->responded) return 0;
  int rv = http_request_check_body(&s->request, s->body_in, 0);
  if (rv == 0 && s->upload != NULL) {
    if (speedyd_budget_charge_upload(&conn->base->budget, len) != 0)
      rv = HTTP_ERR_UNAVAILABLE;
    else
      s->upload_charged += len;
  }
  if (rv == 0 && s->upload != NULL) rv = http_upload_feed(s->upload, data, len);
  if (rv != 0) respond_error(conn, s, rv);
  return 0;
}

/* The request's body ended (its last DATA frame, or trailers): the upload is answered. */
static void body_ended(speedyd_spdy_conn *conn, sd_stream *s) {
  int rv = http_request_check_body(&s->request, s->body_in, 1);
  if (rv == 0 && s->upload != NULL) rv = http_upload_finish(s->upload, &s->response);
  if (rv != 0)
    respond_error(conn, s, rv);
  else
    respond(conn, s);
}

static int on_data_end(speedy_session *session, int32_t stream_id, void *user) {
  (void)session;
  speedyd_spdy_conn *conn = user;
  sd_stream *s = stream_get(conn, stream_id);
  if (s == NULL || s->responded) return 0;
  body_ended(conn, s);
  return 0;
}

/* s's access-log line with status (what was sent of its answer so far). */
static void log_stream(speedyd_spdy_conn *conn, const sd_stream *s, int status) {
  speedyd_log_access(conn->base->server, conn->base, &s->request, status, s->body_out,
                     speedy_protocol_name(speedy_session_protocol(conn->session)), s->id,
                     s->body_in, s->bytes_out);
}

static int on_stream_close(speedy_session *session, int32_t stream_id, uint32_t status,
                           void *user) {
  (void)session;
  speedyd_spdy_conn *conn = user;
  sd_stream *s = stream_get(conn, stream_id);
  /* Older libspeedy dropped the user data before this callback: find ours by id then. */
  if (s == NULL)
    for (s = conn->streams; s != NULL && s->id != stream_id;) s = s->next;
  if (s == NULL) return 0;
  speedyd_server *server = conn->base->server;
  if (s->responded && s->request.method != NULL) log_stream(conn, s, s->response.status);
  if (status != SPEEDY_RST_NONE && status != SPEEDY_RST_CANCEL && s->responded) {
    speedyd_log_error(server, io_conn_peer(conn->base->io), "stream %d closed: %s", (int)stream_id,
                      speedy_rst_status_name(status));
  }
  stream_del(s);
  return 0;
}

/* glitch_cost for HTTP/2. libspeedy has its own budgets for empty frames, resets and
 * queued answers; this meter adds the address-wide view. */
static unsigned glitch_cost_h2(speedyd_spdy_conn *conn, int sent, int type, uint8_t flags,
                               uint32_t length) {
  if (sent) {
    if (type == SPEEDY_H2_FRAME_DATA) conn->window_updates_owed++;
    if (type == SPEEDY_H2_FRAME_HEADERS || type == SPEEDY_H2_FRAME_PUSH_PROMISE)
      conn->window_updates_owed += 2;
    return type == SPEEDY_H2_FRAME_RST_STREAM;
  }
  switch (type) {
  case SPEEDY_H2_FRAME_DATA:
    return length == 0 && !(flags & SPEEDY_H2_FLAG_END_STREAM);
  case SPEEDY_H2_FRAME_SETTINGS:
    /* The client's first SETTINGS and its ACKs of ours are part of every connection. */
    return !(flags & SPEEDY_H2_FLAG_ACK) && conn->settings_seen++ > 0;
  case SPEEDY_H2_FRAME_HEADERS: /* requests; trailers and more are counted in on_begin_headers */
  case SPEEDY_H2_FRAME_CONTINUATION: /* capped per block by libspeedy */
  case SPEEDY_H2_FRAME_GOAWAY:
  case SPEEDY_H2_FRAME_WINDOW_UPDATE: /* charged in on_window_update */
    return 0;
  default:
    return 1; /* PING, PRIORITY, RST_STREAM, PRIORITY_UPDATE, unknown types */
  }
}

/* What a frame costs on the flood meter: work for us without a request in it.
 * WINDOW_UPDATEs are charged in on_window_update, which has their delta. */
static unsigned glitch_cost(speedyd_spdy_conn *conn, int sent, int type, uint8_t flags,
                            uint32_t length) {
  if (is_h2(conn)) return glitch_cost_h2(conn, sent, type, flags, length);
  if (sent) {
    if (type == SPEEDY_SPDY_FRAME_DATA) conn->window_updates_owed++;
    if (type == SPEEDY_SPDY_FRAME_SYN_REPLY || type == SPEEDY_SPDY_FRAME_SYN_STREAM)
      conn->window_updates_owed += 2;
    return type == SPEEDY_SPDY_FRAME_RST_STREAM; /* provoked resets ("MadeYouReset") */
  }
  switch (type) {
  case SPEEDY_SPDY_FRAME_DATA:
    return length == 0 && !(flags & 0x01); /* FLAG_FIN (2.2.2) */
  case SPEEDY_SPDY_FRAME_SETTINGS:
    /* Every client opens with one: only the ones after it are work without a request
     * (else 10,000 clients behind one address would fill its meter by connecting). */
    return conn->settings_seen++ > 0;
  case SPEEDY_SPDY_FRAME_SYN_STREAM:
  case SPEEDY_SPDY_FRAME_GOAWAY:
  case SPEEDY_SPDY_FRAME_WINDOW_UPDATE:
    return 0;
  default:
    return 1; /* PING, SETTINGS, NOOP, RST_STREAM, HEADERS, unknown types */
  }
}

/* Adds cost to the connection's flood meter and to its address's (which all connections
 * from that address share); past either budget the session goes away. */
static void charge_glitches(speedyd_spdy_conn *conn, unsigned cost) {
  if (cost == 0 || conn->flooded) return;
  int over_conn = speedyd_glitch(&conn->glitches, speedyd_now_ns(), cost);
  int over_addr = speedyd_addr_glitch(conn->base->server, conn->base->addr, cost);
  if (over_conn || over_addr) {
    conn->flooded = over_addr ? 2 : 1;
    /* HTTP/2 says ENHANCE_YOUR_CALM; SPDY has only PROTOCOL_ERROR, which the engine sends. */
    static const uint8_t why[] = "flood";
    speedy_submit_goaway(conn->session, SPEEDY_RST_ENHANCE_YOUR_CALM, why, sizeof(why) - 1);
  }
}

static void on_frame(speedy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                     uint32_t length, const char *summary, void *user) {
  (void)session, (void)summary;
  speedyd_spdy_conn *conn = user;
  charge_glitches(conn, glitch_cost(conn, sent, type, flags, length));
  /* The bytes a stream sent are for the access log only: no lookup per frame without one. */
  if (!sent || stream_id == 0 || conn->base->server->access_log == NULL) return;
  sd_stream *s = stream_get(user, stream_id);
  if (s != NULL)
    s->bytes_out += speedy_session_data_header_length(conn->session) + (uint64_t)length;
}

/* A client credits what it received, in sizable steps: tiny deltas (a window opened a
 * byte at a time) and more updates than we sent DATA frames are abuse. */
static int on_window_update(speedy_session *session, int32_t stream_id, uint32_t delta,
                            void *user) {
  (void)session, (void)stream_id;
  speedyd_spdy_conn *conn = user;
  unsigned cost = delta < 1024;
  if (--conn->window_updates_owed < -64) cost++;
  charge_glitches(conn, cost);
  return 0;
}

/* ---- I/O ---- */

/* Closes when the session is over, or the peer has left and nothing is in flight, or the
 * peer has left and what remains can only move with its help: a stream waits for its
 * WINDOW_UPDATE or for the rest of an upload, which a closed side never sends (without
 * this such connections sat in CLOSE-WAIT until --idle-timeout). After our GOAWAY the
 * session says when it is over: an HTTP/2 one only once the PING of its two-phase
 * shutdown came back and the final GOAWAY went out (closing at the first idle moment
 * before that reset requests the client sent before it saw the first GOAWAY). */
static void maybe_close(speedyd_spdy_conn *conn) {
  int finished =
      !speedy_session_want_read(conn->session) && !speedy_session_want_write(conn->session);
  int idle = speedy_session_open_streams(conn->session) == 0 &&
             speedy_session_pending_streams(conn->session) == 0;
  int stuck = conn->peer_eof && !speedy_session_want_write(conn->session);
  if (finished || conn->closing || stuck || (conn->peer_eof && idle)) io_conn_close(conn->base->io);
}

/* Moves the engine's output into the connection, at most room bytes. */
static void produce(speedyd_spdy_conn *conn, size_t room, int unbounded) {
  /* In slices: the engine's buffer stays small (and is reused) however much room the
   * socket has, instead of growing by doublings to the whole room on every burst. */
  int error = 0;
  io_pump_result pumped = io_session_pump(conn->base->io, conn->session, room, unbounded,
                                          SD_OUTPUT_SLICE, &error, NULL);
  if (pumped == IO_PUMP_FULL) return;
  if (pumped == IO_PUMP_SESSION_ERROR)
    speedyd_log_error(conn->base->server, io_conn_peer(conn->base->io), "session: %s",
                      speedy_strerror(error));
  if (pumped < 0) conn->closing = 1;
  if (conn->flooded && !conn->closing) {
    /* Our own resets overflowed the meter (a peer provoking them): GOAWAY is queued. */
    speedyd_log_error(conn->base->server, io_conn_peer(conn->base->io),
                      conn->flooded == 2 ? "flood: its address provoked too many resets; "
                                           "GOAWAY sent, new connections refused for a while"
                                         : "flood: the peer provoked too many resets; GOAWAY sent");
    conn->closing = 1;
    if (!unbounded) {
      produce(conn, 0, 1);
      return;
    }
  }
  maybe_close(conn);
}

static void on_writable(io_conn *io, size_t room, void *user) {
  speedyd_spdy_conn *conn = user;
  /* HTTP/2 times the ACK of the SETTINGS we send from when they go out; past the
   * timeout the session ends with its GOAWAY queued, sent below. */
  int rv = speedy_session_set_now(conn->session, speedyd_now_ns());
  if (rv != 0 && !conn->closing) {
    speedyd_log_error(conn->base->server, io_conn_peer(io), "session ended: %s",
                      speedy_strerror(rv));
    conn->closing = 1;
  }
  produce(conn, room, conn->closing);
}

/* 1 when the peer has been sending one frame for longer than --header-timeout. Progress
 * is a frame begun (so the one before ended) or another KiB of DATA payload, as the
 * engine counts them: a peer trickling one frame a byte at a time makes none. */
static int too_slow(speedyd_spdy_conn *conn, int64_t now_ns) {
  uint32_t timeout_ms = conn->base->server->config.header_timeout_ms;
  uint64_t frames = speedy_session_recv_frames(conn->session);
  uint64_t data = speedy_session_recv_data_bytes(conn->session);
  int progress = frames != conn->frames_seen || data - conn->data_seen >= 1024;
  if (progress) {
    conn->frames_seen = frames;
    conn->data_seen = data;
  }
  if (!speedy_session_recv_in_frame(conn->session))
    conn->partial_since_ns = 0;
  else if (progress || conn->partial_since_ns == 0)
    conn->partial_since_ns = now_ns;
  return timeout_ms != 0 && conn->partial_since_ns != 0 &&
         now_ns - conn->partial_since_ns > (int64_t)timeout_ms * 1000000;
}

static size_t on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  speedyd_spdy_conn *conn = user;
  if (conn->closing) return len;
  int64_t now_ns = speedyd_now_ns();
  speedy_session_set_now(conn->session, now_ns);
  int64_t n = speedy_session_recv(conn->session, data, len);
  if (n >= 0 && !conn->flooded && too_slow(conn, now_ns)) {
    speedyd_log_error(conn->base->server, io_conn_peer(io),
                      "too slow: one frame took longer than --header-timeout");
    io_conn_abort(io, UV_ECANCELED);
    conn->closing = 1;
    return len;
  }
  if (n >= 0 && conn->flooded) {
    speedyd_log_error(conn->base->server, io_conn_peer(io),
                      conn->flooded == 2
                          ? "flood: too many frames without requests from this address; "
                            "GOAWAY sent, new connections refused for a while"
                          : "flood: too many frames without requests; GOAWAY sent");
    conn->closing = 1;
    produce(conn, 0, 1);
    return len;
  }
  if (n < 0) {
    char why[160];
    snprintf(why, sizeof(why), "%s", speedy_strerror((int)n));
    speedyd_log_error(conn->base->server, io_conn_peer(io), "session ended: %s", why);
    /* A session the peer broke costs its address as much as many glitches: reconnecting
     * to break the next one is a flood of its own. */
    (void)speedyd_addr_glitch(conn->base->server, conn->base->addr, SPEEDYD_ADDR_ERROR_COST);
    /* A GOAWAY is usually queued: send it (ignoring the room), then close. */
    conn->closing = 1;
    produce(conn, 0, 1);
    return len;
  }
  io_conn_want_writable(io);
  return (size_t)n;
}

static void on_eof(io_conn *io, void *user) {
  (void)io;
  speedyd_spdy_conn *conn = user;
  conn->peer_eof = 1;
  maybe_close(conn);
}

static void conn_free(speedyd_spdy_conn *conn) {
  speedyd_conn *base = conn->base;
  speedyd_budget_release(&base->budget, sizeof(*conn));
  free(conn);
  speedyd_conn_closed(base);
}

static void on_v3_timer_closed(uv_handle_t *handle) { conn_free(handle->data); }

static void v3_timer_stop(speedyd_spdy_conn *conn) {
  if (conn->v3_timer_on) uv_timer_stop(&conn->v3_timer);
}

/* Settles an undecided SPDY/3-or-3.1 session that has waited too long for a sign. */
static void on_v3_tick(uv_timer_t *timer) {
  speedyd_spdy_conn *conn = timer->data;
  int state = speedy_session_protocol_undecided(conn->session);
  if (state == 0 || conn->closing) {
    v3_timer_stop(conn);
    return;
  }
  if (state == 1 || state != conn->v3_wait_state) {
    conn->v3_wait_state = state;
    conn->v3_wait_ticks = 0;
    return;
  }
  if (++conn->v3_wait_ticks < SD_V3_SETTLE_TICKS) return;
  /* 2: our DATA waits for a session window the peer never opens (SPDY/3 with large
   * stream windows); 3: the peer waits for our session WINDOW_UPDATE (SPDY/3.1). */
  (void)speedy_session_settle_protocol(conn->session, state == 2 ? SPEEDY_PROTOCOL_SPDY3
                                                                 : SPEEDY_PROTOCOL_SPDY3_1);
  v3_timer_stop(conn);
  io_conn_want_writable(conn->base->io);
}

static void on_close(io_conn *io, int status, void *user) {
  speedyd_spdy_conn *conn = user;
  if (status != 0 && status != UV_EOF && status != UV_ECONNRESET) {
    const char *detail = io_conn_error_detail(io);
    speedyd_log_error(conn->base->server, io_conn_peer(io), "connection closed: %s%s%s",
                      io_strerror(status), detail[0] ? ": " : "", detail);
  }
  /* The streams the connection's end cut short get their line too, as nginx logs them:
   * what was sent of an answer, or 499 for a request not answered yet. */
  for (sd_stream *s = conn->streams; s != NULL; s = s->next)
    if (s->request.method != NULL && !s->is_push)
      log_stream(conn, s, s->responded ? s->response.status : 499);
  speedy_session_del(conn->session);
  conn->session = NULL;
  while (conn->streams != NULL) stream_del(conn->streams);
  if (conn->v3_timer_on) {
    uv_timer_stop(&conn->v3_timer);
    uv_close((uv_handle_t *)&conn->v3_timer, on_v3_timer_closed); /* frees conn */
    return;
  }
  conn_free(conn);
}

static void on_shutdown(speedyd_conn *c) {
  speedyd_spdy_conn *conn = c->impl;
  if (!conn->goaway_sent) {
    conn->goaway_sent = 1;
    speedy_submit_goaway(conn->session, SPEEDY_RST_NONE, NULL, 0);
  }
  io_conn_want_writable(c->io);
}

static int conn_idle(const speedyd_conn *c) {
  const speedyd_spdy_conn *conn = c->impl;
  return speedy_session_open_streams(conn->session) == 0 &&
         speedy_session_pending_streams(conn->session) == 0;
}

int speedyd_spdy_start(speedyd_conn *c, speedy_protocol protocol) {
  speedyd_server *server = c->server;
  if (speedyd_budget_charge(&c->budget, sizeof(speedyd_spdy_conn)) != 0) return SPEEDY_ERR_NOMEM;
  speedyd_spdy_conn *conn = calloc(1, sizeof(*conn));
  if (conn == NULL) {
    speedyd_budget_release(&c->budget, sizeof(speedyd_spdy_conn));
    return SPEEDY_ERR_NOMEM;
  }
  conn->base = c;
  speedy_callbacks *cb = NULL;
  speedy_options *options = NULL;
  int rv = speedy_callbacks_new(&cb);
  if (rv == 0) rv = speedy_options_new(&options);
  if (rv == 0) {
    speedy_callbacks_set_on_begin_headers(cb, on_begin_headers);
    speedy_callbacks_set_on_header(cb, on_header);
    speedy_callbacks_set_on_headers_end(cb, on_headers_end);
    speedy_callbacks_set_on_data_chunk(cb, on_data_chunk);
    speedy_callbacks_set_on_data_end(cb, on_data_end);
    speedy_callbacks_set_on_stream_close(cb, on_stream_close);
    speedy_callbacks_set_on_frame(cb, on_frame);
    speedy_callbacks_set_on_window_update(cb, on_window_update);
    speedy_callbacks_set_on_send_data(cb, on_send_data);
    speedy_options_set_data_frame_size(options, server->config.data_frame_size);
    speedy_options_set_max_concurrent_streams(options, server->config.max_streams);
    (void)speedy_options_set_deflate_level(options, server->config.header_compression);
    speedy_options_set_frame_summaries(options, 0); /* on_frame only counts */
    /* Uploads: let a client send a few round trips' worth before we credit it. */
    speedy_options_set_stream_window(options, 256u * 1024u);
    speedy_options_set_session_window(options, 1024u * 1024u);
    if (protocol == SPEEDY_PROTOCOL_SPDY3_1 && server->config.plaintext_v3_auto &&
        !io_conn_is_tls(c->io))
      speedy_options_set_v3_autodetect(options, 1);
    /* Every byte of the session, zlib's included, counts against the budget. */
    speedy_options_set_allocator(options, speedyd_budget_malloc, speedyd_budget_realloc,
                                 speedyd_budget_free, &c->budget);
    rv = speedy_session_new(&conn->session, protocol, SPEEDY_ROLE_SERVER, cb, options, conn);
  }
  speedy_callbacks_del(cb);
  speedy_options_del(options);
  if (rv != 0) {
    speedyd_budget_release(&c->budget, sizeof(*conn));
    free(conn);
    return rv;
  }
  /* The session's clock starts now, not at 0: HTTP/2 times its SETTINGS ACK from here. */
  (void)speedy_session_set_now(conn->session, speedyd_now_ns());
  if (speedy_session_protocol_undecided(conn->session)) {
    uv_timer_init(server->loop, &conn->v3_timer);
    conn->v3_timer.data = conn;
    conn->v3_timer_on = 1;
    uv_timer_start(&conn->v3_timer, on_v3_tick, SD_V3_TICK_MS, SD_V3_TICK_MS);
  }
  c->impl = conn;
  c->shutdown = on_shutdown;
  c->idle = conn_idle;
  const io_conn_callbacks callbacks = {
      .on_read = on_read, .on_eof = on_eof, .on_writable = on_writable, .on_close = on_close};
  io_conn_set_callbacks(c->io, &callbacks, conn);
  /* Our SETTINGS go out at once. */
  io_conn_want_writable(c->io);
  if (server->shutting_down) on_shutdown(c);
  return 0;
}
