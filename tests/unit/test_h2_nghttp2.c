/* test_h2_nghttp2.c — our HTTP/2 sessions against libnghttp2's (a peer this project did not
 * write, linked into this test only), client and server in both directions, exchanging
 * bytes in memory: many streams, uploads and downloads across window sizes, push,
 * trailers, informational responses, settings changes, GOAWAY, resets, CONTINUATION,
 * padding. nghttp2 checks the HTTP messaging rules of what we send (8.1.1); every
 * test also checks what our session reported.
 */
#include <criterion/criterion.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "testutil.h"

/* ---- the nghttp2 side ------------------------------------------------------------------ */

#define NG_MAX_STREAMS 2048

typedef struct ng_stream {
  int32_t id;
  int status;        /* :status of the final response (client), 0 before */
  int informational; /* 1xx responses seen */
  int pushed;        /* a pushed stream (client) */
  uint64_t body;     /* DATA octets received */
  uint32_t check;    /* a sum of the octets, to compare with the sent pattern */
  int trailers;      /* a trailer section arrived */
  int closed;
  uint32_t close_code;
  char path[64];
  size_t header_bytes;      /* name + value octets of the last block */
  char priority[16];        /* a priority field's value */
  char priority_update[16]; /* the last PRIORITY_UPDATE's value for this stream */
} ng_stream;

typedef struct ng_peer {
  nghttp2_session *session;
  int server;
  ng_stream streams[NG_MAX_STREAMS];
  size_t n_streams;
  /* Server behaviour. */
  size_t response_size;
  int send_trailers;    /* responses end with a trailer section */
  int send_early_hints; /* a 103 before every response */
  int push_path;        /* push /pushed.css with every response to /index.html */
  int big_headers;      /* responses carry ~40 KiB of fields (CONTINUATION) */
  int defer_responses;  /* do not answer from the callback */
  size_t pad;           /* padding for every padded frame */
  int goaway_seen;
  int32_t goaway_last;
  uint32_t goaway_code;
  size_t sent_offset[NG_MAX_STREAMS]; /* body octets sent, by stream index */
  size_t body_size[NG_MAX_STREAMS];
  size_t settings_acks; /* SETTINGS ACKs received */
} ng_peer;

static ng_stream *ng_stream_of(ng_peer *p, int32_t id) {
  for (size_t i = 0; i < p->n_streams; i++)
    if (p->streams[i].id == id) return &p->streams[i];
  cr_assert_lt(p->n_streams, NG_MAX_STREAMS);
  ng_stream *s = &p->streams[p->n_streams++];
  memset(s, 0, sizeof(*s));
  s->id = id;
  return s;
}

static size_t ng_index(ng_peer *p, int32_t id) {
  return (size_t)(ng_stream_of(p, id) - p->streams);
}

static uint8_t pattern(size_t i) { return (uint8_t)(i % 251); }

static ssize_t ng_read_body(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                            size_t length, uint32_t *data_flags, nghttp2_data_source *source,
                            void *user) {
  (void)session, (void)source;
  ng_peer *p = user;
  size_t i = ng_index(p, stream_id);
  size_t left = p->body_size[i] - p->sent_offset[i];
  size_t n = left < length ? left : length;
  for (size_t k = 0; k < n; k++) buf[k] = pattern(p->sent_offset[i] + k);
  p->sent_offset[i] += n;
  if (p->sent_offset[i] == p->body_size[i]) {
    *data_flags |= NGHTTP2_DATA_FLAG_EOF;
    if (p->send_trailers) {
      *data_flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
      nghttp2_nv trailer[] = {{(uint8_t *)"x-sum", (uint8_t *)"42", 5, 2, NGHTTP2_NV_FLAG_NONE}};
      cr_assert_eq(nghttp2_submit_trailer(session, stream_id, trailer, 1), 0);
    }
  }
  return (ssize_t)n;
}

#define NV(n, v)                                                                                   \
  { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

static char big_value[4096];

static void ng_respond(ng_peer *p, int32_t id) {
  char length[32];
  snprintf(length, sizeof(length), "%zu", p->response_size);
  ng_stream *s = ng_stream_of(p, id);
  if (p->send_early_hints) {
    nghttp2_nv hints[] = {NV(":status", "103"), NV("link", "</style.css>; rel=preload")};
    cr_assert_eq(nghttp2_submit_headers(p->session, NGHTTP2_FLAG_NONE, id, NULL, hints, 2, NULL),
                 0);
  }
  if (p->push_path && strcmp(s->path, "/index.html") == 0) {
    nghttp2_nv promise[] = {NV(":method", "GET"), NV(":scheme", "https"),
                            NV(":authority", "example.test"), NV(":path", "/pushed.css")};
    int32_t promised =
        nghttp2_submit_push_promise(p->session, NGHTTP2_FLAG_NONE, id, promise, 4, NULL);
    cr_assert_gt(promised, 0, "push_promise: %s", nghttp2_strerror(promised));
    size_t k = ng_index(p, promised);
    p->body_size[k] = 333;
    nghttp2_nv head[] = {NV(":status", "200"), NV("content-length", "333")};
    nghttp2_data_provider prd = {.read_callback = ng_read_body};
    int saved = p->send_trailers;
    p->send_trailers = 0;
    cr_assert_eq(nghttp2_submit_response(p->session, promised, head, 2, &prd), 0);
    p->send_trailers = saved;
  }
  nghttp2_nv head[3 + 10] = {NV(":status", "200"), NV("content-type", "text/plain")};
  size_t n = 2;
  if (!p->send_trailers) head[n++] = (nghttp2_nv)NV("content-length", length);
  if (p->big_headers) {
    memset(big_value, 'x', sizeof(big_value) - 1);
    static char names[10][8];
    for (int k = 0; k < 10; k++) {
      snprintf(names[k], sizeof(names[k]), "x-big%d", k);
      head[n++] = (nghttp2_nv){(uint8_t *)names[k], (uint8_t *)big_value, strlen(names[k]),
                               sizeof(big_value) - 1, NGHTTP2_NV_FLAG_NO_INDEX};
    }
  }
  size_t i = ng_index(p, id);
  p->body_size[i] = p->response_size;
  nghttp2_data_provider prd = {.read_callback = ng_read_body};
  int rv = nghttp2_submit_response(p->session, id, head, n,
                                   p->response_size > 0 || p->send_trailers ? &prd : NULL);
  cr_assert_eq(rv, 0, "submit_response: %s", nghttp2_strerror(rv));
  if (p->send_trailers && p->response_size == 0) {
    /* the provider still runs once to end the (empty) body */
  }
}

static int ng_on_begin_headers(nghttp2_session *session, const nghttp2_frame *frame, void *user) {
  (void)session;
  ng_peer *p = user;
  int32_t id = frame->hd.type == NGHTTP2_PUSH_PROMISE ? frame->push_promise.promised_stream_id
                                                      : frame->hd.stream_id;
  ng_stream *s = ng_stream_of(p, id);
  if (frame->hd.type == NGHTTP2_PUSH_PROMISE) s->pushed = 1;
  s->header_bytes = 0;
  return 0;
}

static int ng_on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                        size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                        void *user) {
  (void)session, (void)flags;
  ng_peer *p = user;
  int32_t id = frame->hd.type == NGHTTP2_PUSH_PROMISE ? frame->push_promise.promised_stream_id
                                                      : frame->hd.stream_id;
  ng_stream *s = ng_stream_of(p, id);
  s->header_bytes += namelen + valuelen;
  if (namelen == 8 && memcmp(name, "priority", 8) == 0)
    snprintf(s->priority, sizeof(s->priority), "%.*s", (int)valuelen, value);
  if (namelen == 5 && memcmp(name, ":path", 5) == 0)
    snprintf(s->path, sizeof(s->path), "%.*s", (int)valuelen, value);
  if (namelen == 7 && memcmp(name, ":status", 7) == 0) {
    int status = atoi((const char *)value);
    if (status >= 100 && status < 200)
      s->informational++;
    else
      s->status = status;
  }
  if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_HEADERS &&
      namelen > 0 && name[0] != ':')
    s->trailers = 1;
  return 0;
}

static int ng_on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame, void *user) {
  (void)session;
  ng_peer *p = user;
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    p->goaway_seen = 1;
    p->goaway_last = frame->goaway.last_stream_id;
    p->goaway_code = frame->goaway.error_code;
  }
  if (frame->hd.type == NGHTTP2_SETTINGS && (frame->hd.flags & NGHTTP2_FLAG_ACK))
    p->settings_acks++;
  if (frame->hd.type == NGHTTP2_PRIORITY_UPDATE) {
    const nghttp2_ext_priority_update *update = frame->ext.payload;
    ng_stream *s = ng_stream_of(p, update->stream_id);
    size_t n = update->field_value_len < sizeof(s->priority_update) - 1
                   ? update->field_value_len
                   : sizeof(s->priority_update) - 1;
    memcpy(s->priority_update, update->field_value, n);
    s->priority_update[n] = 0;
  }
  /* A server answers once the request is complete. */
  if (p->server && !p->defer_responses &&
      (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM))
    ng_respond(p, frame->hd.stream_id);
  return 0;
}

static int ng_on_data(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                      const uint8_t *data, size_t len, void *user) {
  (void)session, (void)flags;
  ng_peer *p = user;
  ng_stream *s = ng_stream_of(p, stream_id);
  for (size_t i = 0; i < len; i++)
    if (data[i] != pattern(s->body + i)) s->check++;
  s->body += len;
  return 0;
}

static int ng_on_close(nghttp2_session *session, int32_t stream_id, uint32_t error_code,
                       void *user) {
  (void)session;
  ng_peer *p = user;
  ng_stream *s = ng_stream_of(p, stream_id);
  s->closed = 1;
  s->close_code = error_code;
  return 0;
}

static ssize_t ng_padding(nghttp2_session *session, const nghttp2_frame *frame,
                          size_t max_payloadlen, void *user) {
  (void)session;
  ng_peer *p = user;
  size_t want = frame->hd.length + p->pad;
  return (ssize_t)(want < max_payloadlen ? want : max_payloadlen);
}

static ng_peer *ng_new(int server, const nghttp2_settings_entry *settings, size_t n) {
  ng_peer *p = calloc(1, sizeof(*p));
  cr_assert_not_null(p);
  p->server = server;
  p->response_size = 100;
  nghttp2_session_callbacks *cbs;
  cr_assert_eq(nghttp2_session_callbacks_new(&cbs), 0);
  nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, ng_on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(cbs, ng_on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, ng_on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, ng_on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cbs, ng_on_close);
  nghttp2_session_callbacks_set_select_padding_callback(cbs, ng_padding);
  /* PRIORITY_UPDATE reaches on_frame_recv only when asked for. */
  nghttp2_option *option;
  cr_assert_eq(nghttp2_option_new(&option), 0);
  nghttp2_option_set_builtin_recv_extension_type(option, NGHTTP2_PRIORITY_UPDATE);
  int rv = server ? nghttp2_session_server_new2(&p->session, cbs, p, option)
                  : nghttp2_session_client_new2(&p->session, cbs, p, option);
  cr_assert_eq(rv, 0);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(cbs);
  nghttp2_settings_entry defaults[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100}};
  if (settings == NULL) settings = defaults, n = 1;
  cr_assert_eq(nghttp2_submit_settings(p->session, NGHTTP2_FLAG_NONE, settings, n), 0);
  return p;
}

static void ng_del(ng_peer *p) {
  nghttp2_session_del(p->session);
  free(p);
}

/* Everything nghttp2 has to say, fed to our session in chunks. Returns the last recv
 * result (or 0). */
static int64_t ng_flush_to(ng_peer *theirs, test_peer *ours, size_t chunk) {
  for (;;) {
    const uint8_t *data;
    ssize_t n = nghttp2_session_mem_send(theirs->session, &data);
    cr_assert_geq(n, 0, "nghttp2 send: %s", nghttp2_strerror((int)n));
    if (n == 0) return 0;
    int64_t fed = test_feed(ours, data, (size_t)n, chunk);
    if (fed < 0) return fed;
  }
}

/* At most max octets of our output, fed to nghttp2. Returns the count. */
static int64_t ours_to_ng(test_peer *ours, ng_peer *theirs, size_t max) {
  uint8_t buf[16384];
  int64_t n = speedy_session_send(ours->session, buf, max < sizeof(buf) ? max : sizeof(buf));
  cr_assert_geq(n, 0, "send: %s", speedy_strerror((int)n));
  if (n > 0) cr_assert_eq(nghttp2_session_mem_recv(theirs->session, buf, (size_t)n), n);
  return n;
}

/* Moves bytes both ways until neither side has anything to say. Returns 0, or our
 * session's error. */
static int exchange(test_peer *ours, ng_peer *theirs, size_t chunk) {
  uint8_t buf[16384];
  for (int round = 0; round < 4000000; round++) {
    int moved = 0;
    for (;;) {
      size_t cap = chunk < sizeof(buf) ? chunk : sizeof(buf);
      int64_t n = speedy_session_send(ours->session, buf, cap);
      if (n < 0) return (int)n;
      if (n == 0) break;
      ssize_t fed = nghttp2_session_mem_recv(theirs->session, buf, (size_t)n);
      cr_assert_eq(fed, n, "nghttp2 refused our bytes: %s", nghttp2_strerror((int)fed));
      moved = 1;
    }
    for (;;) {
      const uint8_t *data;
      ssize_t n = nghttp2_session_mem_send(theirs->session, &data);
      cr_assert_geq(n, 0, "nghttp2 send: %s", nghttp2_strerror((int)n));
      if (n == 0) break;
      int64_t fed = test_feed(ours, data, (size_t)n, chunk);
      if (fed < 0) return (int)fed;
      moved = 1;
    }
    if (!moved) return 0;
  }
  cr_assert_fail("the exchange never went quiet");
  return 0;
}

/* ---- our side -------------------------------------------------------------------------- */

static size_t our_response_size = 100;
static int our_trailers, our_early_hints, our_push;
static speedy_fieldset *our_set; /* answer with this prepared head instead of a list */

/* A body whose last read also submits the trailers (from inside the callback). */
static int64_t read_with_trailers(speedy_session *session, int32_t stream_id, uint8_t *buf,
                                  size_t len, uint32_t *flags, void *source, void *user) {
  int64_t n = test_body_read(session, stream_id, buf, len, flags, source, user);
  if (*flags & SPEEDY_DATA_FLAG_EOF) {
    *flags |= SPEEDY_DATA_FLAG_NO_END_STREAM;
    speedy_header trailers[] = {{"x-checksum", 10, "abc123", 6}};
    int rv = speedy_submit_headers(session, stream_id, trailers, 1, 1);
    cr_assert_eq(rv, 0, "trailers from the read callback: %s", speedy_strerror(rv));
  }
  return n;
}

static void our_respond(test_peer *server, int32_t id) {
  char length[32];
  snprintf(length, sizeof(length), "%zu", our_response_size);
  if (our_early_hints) {
    speedy_header hints[] = {{":status", 7, "103", 3}, {"link", 4, "</a.css>; rel=preload", 21}};
    cr_assert_eq(speedy_submit_headers(server->session, id, hints, 2, 0), 0);
  }
  if (our_push && id == 1) {
    speedy_header request[] = {{":scheme", 7, "https", 5},
                               {":authority", 10, "example.test", 12},
                               {":path", 5, "/pushed.js", 10}};
    speedy_header response[] = {{":status", 7, "200", 3}, {"content-length", 14, "500", 3}};
    test_body *pushed = test_peer_body(server, NULL, 500);
    int32_t promised = speedy_submit_push(server->session, id, 2, request, 3, response, 2,
                                          test_body_read, pushed, NULL);
    cr_assert_gt(promised, 0, "submit_push: %s", speedy_strerror(promised));
  }
  speedy_header headers[] = {{":status", 7, "200", 3},
                             {"content-type", 12, "text/plain", 10},
                             {"content-length", 14, length, strlen(length)}};
  test_body *body = test_peer_body(server, NULL, our_response_size);
  int rv = our_set != NULL
               ? speedy_submit_response_fieldset(server->session, id, our_set, test_body_read, body)
               : speedy_submit_response(server->session, id, headers, our_trailers ? 2 : 3,
                                        our_trailers ? read_with_trailers : test_body_read, body);
  cr_assert_eq(rv, 0, "submit_response: %s", speedy_strerror(rv));
}

/* ---- nghttp2 client, our server -------------------------------------------------------- */

static int32_t ng_get(ng_peer *p, const char *path) {
  nghttp2_nv nva[] = {NV(":method", "GET"), NV(":scheme", "https"),
                      NV(":authority", "example.test"), NV(":path", path)};
  int32_t id = nghttp2_submit_request(p->session, NULL, nva, 4, NULL, NULL);
  cr_assert_gt(id, 0, "nghttp2_submit_request: %s", nghttp2_strerror(id));
  snprintf(ng_stream_of(p, id)->path, sizeof(ng_stream_of(p, id)->path), "%s", path);
  return id;
}

Test(h2_nghttp2, s8_1_nghttp2_client_gets_from_our_server) {
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = our_respond;
  our_response_size = 1000;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t id = ng_get(client, "/index.html");
  cr_assert_eq(exchange(server, client, 16384), 0);
  ng_stream *s = ng_stream_of(client, id);
  cr_assert_eq(s->status, 200, "status %d; server log:\n%s", s->status, server->log);
  cr_assert_eq(s->body, 1000);
  cr_assert_eq(s->check, 0);
  cr_assert(s->closed && s->close_code == 0);
  cr_assert(test_log_has(server, "header 1 :authority=example.test"));
  ng_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(h2_nghttp2, s8_1_nghttp2_client_reads_our_prepared_responses) {
  speedy_header head[] = {{":status", 7, "200", 3},
                          {"content-type", 12, "text/plain", 10},
                          {"content-length", 14, "700", 3},
                          {"x-served-by", 11, "a prepared set", 14}};
  cr_assert_eq(speedy_fieldset_new(head, 4, &our_set), 0);
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = our_respond;
  our_response_size = 700;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t ids[20];
  for (int i = 0; i < 20; i++) ids[i] = ng_get(client, "/cached.txt");
  cr_assert_eq(exchange(server, client, 1000), 0);
  for (int i = 0; i < 20; i++) {
    ng_stream *s = ng_stream_of(client, ids[i]);
    cr_assert_eq(s->status, 200, "stream %d: status %d", (int)ids[i], s->status);
    cr_assert_eq(s->body, 700);
    cr_assert_eq(s->check, 0);
    /* every field arrived, the same octets each time (the later ones from the table) */
    cr_assert_eq(s->header_bytes, 7 + 3 + 12 + 10 + 14 + 3 + 11 + 14, "stream %d: %zu octets",
                 (int)ids[i], s->header_bytes);
    cr_assert(s->closed && s->close_code == 0);
  }
  speedy_fieldset_release(our_set);
  our_set = NULL;
  ng_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(h2_nghttp2, s8_1_our_client_gets_from_nghttp2_server) {
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->response_size = 200000;
  speedy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, "/big", 4}};
  int32_t id = speedy_submit_request(client->session, 3, headers, 4, NULL, NULL, NULL);
  cr_assert_eq(id, 1);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "exchange: %s; log:\n%s", speedy_strerror(rv), client->log);
  cr_assert(test_log_has(client, "header 1 :status=200"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "dataend 1 len=200000"), "log:\n%s", client->log);
  test_stream_rx *rx = test_rx(client, 1);
  for (size_t i = 0; i < rx->len; i++) cr_assert_eq(rx->data[i], pattern(i));
  ng_del(server);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- more: nghttp2 client, our server ------------------------------------------------- */

static test_peer *our_server(speedy_options *options) {
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, options);
  server->on_request = our_respond;
  return server;
}

static void finish(test_peer *ours, ng_peer *theirs) {
  ng_del(theirs);
  test_peer_del(ours);
  cr_assert_eq(test_alloc_live(), 0, "leaked %zu blocks", test_alloc_live());
}

Test(h2_nghttp2, s5_1_2_nghttp2_client_opens_500_streams_within_our_limit_of_100) {
  test_peer *server = our_server(NULL);
  our_response_size = 3000;
  ng_peer *client = ng_new(0, NULL, 0);
  for (int i = 0; i < 500; i++) ng_get(client, "/many");
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "exchange: %s", speedy_strerror(rv));
  for (size_t i = 0; i < client->n_streams; i++) {
    ng_stream *s = &client->streams[i];
    cr_assert(s->closed && s->close_code == 0 && s->status == 200 && s->body == 3000 &&
                  s->check == 0,
              "stream %d: closed=%d code=%u status=%d body=%llu", (int)s->id, s->closed,
              s->close_code, s->status, (unsigned long long)s->body);
  }
  cr_assert_eq(client->n_streams, 500);
  finish(server, client);
}

/* Uploads of every size through our receive windows, small to large. */
Test(h2_nghttp2, s6_9_nghttp2_uploads_through_our_windows_of_every_size) {
  static const uint32_t windows[] = {1, 1000, 65535, 1 << 20};
  static const size_t sizes[] = {0, 1, 16383, 16384, 65535, 65536, 200001};
  for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
    speedy_options *options = NULL;
    cr_assert_eq(speedy_options_new(&options), 0);
    test_alloc_install(options);
    speedy_options_set_stream_window(options, windows[w]);
    speedy_options_set_session_window(options, windows[w] > 65536 ? windows[w] : 65536);
    test_peer *server = our_server(options);
    speedy_options_del(options);
    our_response_size = 10;
    ng_peer *client = ng_new(0, NULL, 0);
    int32_t ids[16];
    size_t n = sizeof(sizes) / sizeof(sizes[0]);
    for (size_t i = 0; i < n; i++) {
      nghttp2_nv nva[] = {NV(":method", "POST"), NV(":scheme", "https"),
                          NV(":authority", "example.test"), NV(":path", "/upload")};
      nghttp2_data_provider prd = {.read_callback = ng_read_body};
      ids[i] = nghttp2_submit_request(client->session, NULL, nva, 4, &prd, NULL);
      cr_assert_gt(ids[i], 0);
      client->body_size[ng_index(client, ids[i])] = sizes[i];
    }
    int rv = exchange(server, client, 4096);
    cr_assert_eq(rv, 0, "window %u: %s", windows[w], speedy_strerror(rv));
    for (size_t i = 0; i < n; i++) {
      test_stream_rx *rx = test_rx(server, ids[i]);
      cr_assert_eq(rx->len, sizes[i], "window %u, stream %d: %zu of %zu octets", windows[w],
                   (int)ids[i], rx->len, sizes[i]);
      for (size_t k = 0; k < rx->len; k++) cr_assert_eq(rx->data[k], pattern(k));
      cr_assert_eq(ng_stream_of(client, ids[i])->status, 200);
    }
    finish(server, client);
  }
}

Test(h2_nghttp2, s8_4_our_server_pushes_to_nghttp2) {
  test_peer *server = our_server(NULL);
  our_push = 1;
  our_response_size = 100;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t id = ng_get(client, "/index.html");
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert_eq(ng_stream_of(client, id)->status, 200);
  ng_stream *pushed = ng_stream_of(client, 2);
  cr_assert(pushed->pushed, "nghttp2 saw no PUSH_PROMISE; server log:\n%s", server->log);
  cr_assert_eq(pushed->status, 200);
  cr_assert_eq(pushed->body, 500);
  cr_assert(pushed->closed && pushed->close_code == 0);
  finish(server, client);
}

Test(h2_nghttp2, s8_4_nghttp2_with_push_disabled_gets_no_promise) {
  test_peer *server = our_server(NULL);
  nghttp2_settings_entry no_push[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0}};
  ng_peer *client = ng_new(0, no_push, 1);
  ng_get(client, "/a");
  cr_assert_eq(exchange(server, client, 16384), 0);
  speedy_header request[] = {
      {":scheme", 7, "https", 5}, {":authority", 10, "example.test", 12}, {":path", 5, "/p", 2}};
  speedy_header response[] = {{":status", 7, "200", 3}};
  /* The request stream is closed by now; a new one stays open for the attempt. */
  server->on_request = NULL;
  int32_t id = ng_get(client, "/b");
  cr_assert_eq(exchange(server, client, 16384), 0);
  int32_t rv =
      speedy_submit_push(server->session, id, 3, request, 3, response, 1, NULL, NULL, NULL);
  cr_assert_eq(rv, SPEEDY_ERR_INVALID_STATE, "push with ENABLE_PUSH=0: %d", rv);
  finish(server, client);
}

Test(h2_nghttp2, s8_1_our_server_sends_trailers_to_nghttp2) {
  test_peer *server = our_server(NULL);
  our_trailers = 1;
  our_response_size = 70000;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t id = ng_get(client, "/t");
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  ng_stream *s = ng_stream_of(client, id);
  cr_assert(s->trailers && s->body == 70000 && s->closed && s->close_code == 0,
            "trailers=%d body=%llu closed=%d code=%u", s->trailers, (unsigned long long)s->body,
            s->closed, s->close_code);
  finish(server, client);
}

Test(h2_nghttp2, s8_1_our_server_sends_103_early_hints_to_nghttp2) {
  test_peer *server = our_server(NULL);
  our_early_hints = 1;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t id = ng_get(client, "/hints");
  cr_assert_eq(exchange(server, client, 16384), 0);
  ng_stream *s = ng_stream_of(client, id);
  cr_assert_eq(s->informational, 1);
  cr_assert_eq(s->status, 200);
  cr_assert(s->closed && s->close_code == 0);
  finish(server, client);
}

/* nghttp2 changes its settings while our server sends: windows shrink and grow, frames
 * grow, its HPACK table goes to 0 and back. */
Test(h2_nghttp2, s6_5_3_nghttp2_changes_settings_mid_download) {
  test_peer *server = our_server(NULL);
  our_response_size = 300000;
  ng_peer *client = ng_new(0, NULL, 0);
  for (int i = 0; i < 5; i++) ng_get(client, "/s");
  for (int i = 0; i < 3; i++) { /* a little of the download first */
    ours_to_ng(server, client, 4096);
    cr_assert_geq(ng_flush_to(client, server, 4096), 0);
  }
  nghttp2_settings_entry small[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 100},
                                    {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 0},
                                    {NGHTTP2_SETTINGS_MAX_FRAME_SIZE, 20000}};
  cr_assert_eq(nghttp2_submit_settings(client->session, NGHTTP2_FLAG_NONE, small, 3), 0);
  int first = exchange(server, client, 1000);
  cr_assert_eq(first, 0, "%s; log:\n%s", speedy_strerror(first), server->log);
  for (int i = 0; i < 3; i++) ng_get(client, "/s2");
  nghttp2_settings_entry large[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20},
                                    {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 8192}};
  cr_assert_eq(nghttp2_submit_settings(client->session, NGHTTP2_FLAG_NONE, large, 2), 0);
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert_eq(client->n_streams, 8);
  for (size_t i = 0; i < client->n_streams; i++)
    cr_assert(client->streams[i].body == 300000 && client->streams[i].check == 0 &&
                  client->streams[i].close_code == 0,
              "stream %d: %llu octets", (int)client->streams[i].id,
              (unsigned long long)client->streams[i].body);
  cr_assert_eq(speedy_session_remote_setting(server->session, SPEEDY_SETTINGS_MAX_FRAME_SIZE),
               20000);
  finish(server, client);
}

/* RFC 7541 4.2: nghttp2 sets its HPACK table to 0 and back to 4,096 in one SETTINGS frame
 * after our responses filled it; it empties its table and expects our next block to say
 * so (an update to 0 first): its decoder refuses anything else. */
Test(h2_nghttp2, rfc7541_s4_2_table_size_0_then_back_in_one_settings_frame) {
  test_peer *server = our_server(NULL);
  our_response_size = 100;
  ng_peer *client = ng_new(0, NULL, 0);
  for (int i = 0; i < 3; i++) ng_get(client, "/s");
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  nghttp2_settings_entry twice[] = {{NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 0},
                                    {NGHTTP2_SETTINGS_HEADER_TABLE_SIZE, 4096}};
  cr_assert_eq(nghttp2_submit_settings(client->session, NGHTTP2_FLAG_NONE, twice, 2), 0);
  rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  for (int i = 0; i < 3; i++) ng_get(client, "/s2");
  rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s; log:\n%s", speedy_strerror(rv), server->log);
  cr_assert_eq(client->n_streams, 6);
  for (size_t i = 0; i < client->n_streams; i++)
    cr_assert(client->streams[i].body == 100 && client->streams[i].close_code == 0,
              "stream %d: %llu octets, code %u", (int)client->streams[i].id,
              (unsigned long long)client->streams[i].body, client->streams[i].close_code);
  finish(server, client);
}

/* 6.8: our server's graceful shutdown: GOAWAY(2^31-1), PING, then the real last stream;
 * what was in flight completes. */
Test(h2_nghttp2, s6_8_our_server_shuts_down_gracefully) {
  test_peer *server = our_server(NULL);
  server->on_request = NULL;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t a = ng_get(client, "/a");
  cr_assert_eq(exchange(server, client, 16384), 0);
  cr_assert_eq(speedy_submit_goaway(server->session, SPEEDY_RST_NONE, NULL, 0), 0);
  uint8_t warning[256];
  int64_t n = speedy_session_send(server->session, warning, sizeof(warning));
  cr_assert_gt(n, 0);
  /* A request nghttp2 sent before the warning reached it. */
  int32_t b = ng_get(client, "/b");
  const uint8_t *data;
  ssize_t m = nghttp2_session_mem_send(client->session, &data);
  cr_assert_gt(m, 0);
  uint8_t request[1024];
  cr_assert_lt((size_t)m, sizeof(request));
  memcpy(request, data, (size_t)m);
  cr_assert_eq(nghttp2_session_mem_recv(client->session, warning, (size_t)n), n);
  cr_assert(client->goaway_seen);
  cr_assert_eq(client->goaway_last, 0x7fffffff, "the first GOAWAY says 2^31-1");
  cr_assert_geq(test_feed(server, request, (size_t)m, (size_t)m), 0);
  cr_assert_eq(exchange(server, client, 16384), 0); /* the PING's answer, the final GOAWAY */
  cr_assert_eq(client->goaway_last, b, "the final GOAWAY names the last stream: %d",
               client->goaway_last);
  cr_assert(test_log_has(server, "begin 3 request"), "b was accepted: %s", server->log);
  int32_t c = ng_get(client, "/c"); /* after GOAWAY nghttp2 opens nothing */
  our_response_size = 5;
  our_respond(server, a);
  our_respond(server, b);
  cr_assert_eq(exchange(server, client, 16384), 0);
  cr_assert_eq(ng_stream_of(client, a)->status, 200);
  cr_assert_eq(ng_stream_of(client, b)->status, 200);
  cr_assert_eq(ng_stream_of(client, c)->status, 0);
  cr_assert_eq(speedy_session_want_read(server->session), 0, "done once the streams are");
  finish(server, client);
}

Test(h2_nghttp2, s6_4_nghttp2_cancels_one_download_the_others_finish) {
  test_peer *server = our_server(NULL);
  our_response_size = 500000;
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t a = ng_get(client, "/a"), b = ng_get(client, "/b");
  for (int i = 0; i < 4; i++) {
    ours_to_ng(server, client, 4096);
    cr_assert_geq(ng_flush_to(client, server, 4096), 0);
  }
  cr_assert_eq(nghttp2_submit_rst_stream(client->session, NGHTTP2_FLAG_NONE, a, NGHTTP2_CANCEL), 0);
  cr_assert_eq(exchange(server, client, 16384), 0);
  cr_assert(test_log_has(server, "close 1 CANCEL"), "log:\n%s", server->log);
  cr_assert_eq(ng_stream_of(client, b)->body, 500000);
  cr_assert_eq(ng_stream_of(client, b)->close_code, 0);
  finish(server, client);
}

/* 6.10: ~40 KiB of request fields arrive in HEADERS and CONTINUATION frames. */
Test(h2_nghttp2, s6_10_nghttp2_request_headers_over_continuation) {
  test_peer *server = our_server(NULL);
  ng_peer *client = ng_new(0, NULL, 0);
  memset(big_value, 'y', sizeof(big_value) - 1);
  nghttp2_nv nva[14] = {NV(":method", "GET"), NV(":scheme", "https"),
                        NV(":authority", "example.test"), NV(":path", "/big-headers")};
  char names[10][8];
  for (int k = 0; k < 10; k++) {
    snprintf(names[k], sizeof(names[k]), "x-big%d", k);
    nva[4 + k] = (nghttp2_nv){(uint8_t *)names[k], (uint8_t *)big_value, strlen(names[k]),
                              sizeof(big_value) - 1, NGHTTP2_NV_FLAG_NO_INDEX};
  }
  int32_t id = nghttp2_submit_request(client->session, NULL, nva, 14, NULL, NULL);
  cr_assert_gt(id, 0);
  cr_assert_eq(exchange(server, client, 16384), 0);
  cr_assert_eq(ng_stream_of(client, id)->status, 200, "server log:\n%.2000s", server->log);
  cr_assert(test_log_has(server, "begin 1 request"));
  finish(server, client);
}

/* 6.10 the other way: our response fields above nghttp2's frame size go in CONTINUATION. */
Test(h2_nghttp2, s6_10_our_big_response_headers_go_in_continuation) {
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, NULL);
  ng_peer *client = ng_new(0, NULL, 0);
  int32_t id = ng_get(client, "/");
  cr_assert_eq(exchange(server, client, 16384), 0);
  static char value[8000];
  memset(value, 'z', sizeof(value));
  speedy_header headers[6] = {{":status", 7, "200", 3}};
  char names[5][8];
  for (int k = 0; k < 5; k++) {
    snprintf(names[k], sizeof(names[k]), "x-z%d", k);
    headers[1 + k] = (speedy_header){names[k], strlen(names[k]), value, sizeof(value)};
  }
  cr_assert_eq(speedy_submit_response(server->session, id, headers, 6, NULL, NULL), 0);
  cr_assert_eq(exchange(server, client, 16384), 0);
  ng_stream *s = ng_stream_of(client, id);
  cr_assert_eq(s->status, 200);
  cr_assert_geq(s->header_bytes, 40000);
  finish(server, client);
}

/* 6.1, 6.2: padded DATA and HEADERS from nghttp2. */
Test(h2_nghttp2, s6_1_nghttp2_pads_its_frames) {
  test_peer *server = our_server(NULL);
  our_response_size = 10;
  ng_peer *client = ng_new(0, NULL, 0);
  client->pad = 200;
  nghttp2_nv nva[] = {NV(":method", "POST"), NV(":scheme", "https"),
                      NV(":authority", "example.test"), NV(":path", "/padded")};
  nghttp2_data_provider prd = {.read_callback = ng_read_body};
  int32_t id = nghttp2_submit_request(client->session, NULL, nva, 4, &prd, NULL);
  client->body_size[ng_index(client, id)] = 100000;
  int rv = exchange(server, client, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert_eq(test_rx(server, id)->len, 100000);
  cr_assert_eq(ng_stream_of(client, id)->status, 200);
  finish(server, client);
}

/* ---- more: our client, nghttp2 server -------------------------------------------------- */

static test_peer *our_client(speedy_options *options) {
  return test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, options);
}

static int32_t our_get(test_peer *client, const char *path, int urgency) {
  speedy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, path, strlen(path)}};
  int32_t id = speedy_submit_request(client->session, urgency, headers, 4, NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  return id;
}

static int32_t our_post(test_peer *client, const char *path, size_t size, int trailers) {
  speedy_header headers[] = {{":method", 7, "POST", 4},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, path, strlen(path)}};
  test_body *body = test_peer_body(client, NULL, size);
  int32_t id = speedy_submit_request(client->session, 3, headers, 4,
                                     trailers ? read_with_trailers : test_body_read, body, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  return id;
}

Test(h2_nghttp2, s5_1_2_our_client_queues_500_requests_behind_nghttp2s_limit_of_7) {
  test_peer *client = our_client(NULL);
  nghttp2_settings_entry limit[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 7}};
  ng_peer *server = ng_new(1, limit, 1);
  server->response_size = 777;
  cr_assert_eq(exchange(client, server, 16384), 0); /* its SETTINGS first */
  for (int i = 0; i < 500; i++) our_get(client, "/many", i % 8);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  for (int32_t id = 1; id < 1000; id += 2) {
    test_stream_rx *rx = test_rx(client, id);
    cr_assert(rx->closed && rx->close_status == SPEEDY_RST_NONE && rx->len == 777,
              "stream %d: closed=%d status=%u len=%zu", (int)id, rx->closed, rx->close_status,
              rx->len);
  }
  finish(client, server);
}

Test(h2_nghttp2, s6_9_our_client_uploads_through_nghttp2_windows) {
  static const int32_t windows[] = {1, 1000, 65535, 1 << 20};
  for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++) {
    test_peer *client = our_client(NULL);
    nghttp2_settings_entry window[] = {
        {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, (uint32_t)windows[w]}};
    ng_peer *server = ng_new(1, window, 1);
    server->response_size = 1;
    cr_assert_eq(exchange(client, server, 16384), 0);
    static const size_t sizes[] = {1, 16384, 65535, 65536, 150000};
    int32_t ids[5];
    for (size_t i = 0; i < 5; i++) ids[i] = our_post(client, "/up", sizes[i], 0);
    int rv = exchange(client, server, 8192);
    cr_assert_eq(rv, 0, "window %d: %s", windows[w], speedy_strerror(rv));
    for (size_t i = 0; i < 5; i++) {
      ng_stream *s = ng_stream_of(server, ids[i]);
      cr_assert(s->body == sizes[i] && s->check == 0, "window %d stream %d: %llu of %zu",
                windows[w], (int)ids[i], (unsigned long long)s->body, sizes[i]);
      cr_assert(test_log_has(client, "header 1 :status=200"));
    }
    finish(client, server);
  }
}

Test(h2_nghttp2, s8_1_our_client_sends_trailers_to_nghttp2) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  int32_t id = our_post(client, "/with-trailers", 40000, 1);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  ng_stream *s = ng_stream_of(server, id);
  cr_assert(s->trailers && s->body == 40000, "trailers=%d body=%llu", s->trailers,
            (unsigned long long)s->body);
  cr_assert(test_log_has(client, "close 1 NONE"));
  finish(client, server);
}

Test(h2_nghttp2, s8_4_nghttp2_pushes_to_our_client) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->push_path = 1;
  our_get(client, "/index.html", 3);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert(test_log_has(client, "begin 2 push assoc=1"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "header 2 :path=/pushed.css"));
  cr_assert(test_log_has(client, "begin 2 response"));
  cr_assert(test_log_has(client, "dataend 2 len=333"));
  cr_assert(test_log_has(client, "close 2 NONE"));
  cr_assert(test_log_has(client, "close 1 NONE"));
  finish(client, server);
}

static void refuse_pushes(test_peer *peer, int32_t id, speedy_headers_kind kind, int32_t assoc) {
  (void)assoc;
  if (kind == SPEEDY_HEADERS_PUSH)
    cr_assert_eq(speedy_submit_rst(peer->session, id, SPEEDY_RST_CANCEL), 0);
}

/* 8.4.2: a client refuses a push with CANCEL (from on_begin_headers, as it arrives); what
 * the server sent for it meanwhile is ignored. */
Test(h2_nghttp2, s8_4_our_client_refuses_a_push_with_cancel) {
  test_peer *client = our_client(NULL);
  client->on_begin = refuse_pushes;
  ng_peer *server = ng_new(1, NULL, 0);
  server->push_path = 1;
  server->response_size = 100000;
  our_get(client, "/index.html", 3);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert(test_log_has(client, "begin 2 push assoc=1"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "close 2 CANCEL"));
  cr_assert(test_log_has(client, "dataend 1 len=100000"));
  cr_assert(!test_log_has(client, "begin 2 response"), "nothing of the refused push arrives");
  finish(client, server);
}

Test(h2_nghttp2, s8_4_our_client_with_push_off_tells_nghttp2) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  speedy_options_set_push(options, 0);
  test_peer *client = our_client(options);
  speedy_options_del(options);
  ng_peer *server = ng_new(1, NULL, 0);
  server->push_path = 1;
  our_get(client, "/index.html", 3);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert(!test_log_has(client, "begin 2 push assoc=1"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "close 1 NONE"));
  finish(client, server);
}

Test(h2_nghttp2, s8_1_nghttp2_server_sends_103_then_200_then_trailers) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->send_early_hints = 1;
  server->send_trailers = 1;
  server->response_size = 20000;
  our_get(client, "/x", 3);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert(test_log_has(client, "begin 1 informational"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "header 1 :status=103"));
  cr_assert(test_log_has(client, "begin 1 response"));
  cr_assert(test_log_has(client, "begin 1 extra"));
  cr_assert(test_log_has(client, "end 1 fin=1"));
  cr_assert(test_log_has(client, "close 1 NONE"));
  cr_assert_eq(test_rx(client, 1)->len, 20000);
  finish(client, server);
}

Test(h2_nghttp2, s6_10_nghttp2_response_headers_over_continuation_and_padding) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->big_headers = 1;
  server->pad = 100;
  server->response_size = 50000;
  our_get(client, "/big", 3);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert(test_log_has(client, "header 1 :status=200"), "log:\n%.3000s", client->log);
  cr_assert_eq(test_rx(client, 1)->len, 50000);
  finish(client, server);
}

Test(h2_nghttp2, s6_10_our_big_request_headers_go_in_continuation) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  static char value[9000];
  memset(value, 'q', sizeof(value));
  speedy_header headers[8] = {{":method", 7, "GET", 3},
                              {":scheme", 7, "https", 5},
                              {":authority", 10, "example.test", 12},
                              {":path", 5, "/", 1}};
  char names[4][8];
  for (int k = 0; k < 4; k++) {
    snprintf(names[k], sizeof(names[k]), "x-q%d", k);
    headers[4 + k] = (speedy_header){names[k], strlen(names[k]), value, sizeof(value)};
  }
  int32_t id = speedy_submit_request(client->session, 3, headers, 8, NULL, NULL, NULL);
  cr_assert_gt(id, 0);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert_geq(ng_stream_of(server, id)->header_bytes, 36000);
  cr_assert(test_log_has(client, "header 1 :status=200"));
  finish(client, server);
}

/* 6.8: GOAWAY from nghttp2 with a last stream below ours: those above are refused, to be
 * retried elsewhere; those at or below finish. */
Test(h2_nghttp2, s6_8_nghttp2_goaway_refuses_our_streams_above_its_last) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->defer_responses = 1;
  for (int i = 0; i < 3; i++) our_get(client, "/g", 3);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert_eq(nghttp2_submit_goaway(server->session, NGHTTP2_FLAG_NONE, 3, NGHTTP2_NO_ERROR,
                                     (const uint8_t *)"bye", 3),
               0);
  ng_respond(server, 1);
  ng_respond(server, 3);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert(test_log_has(client, "goaway 3 0"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "close 5 REFUSED_STREAM"));
  cr_assert(test_log_has(client, "close 1 NONE"));
  cr_assert(test_log_has(client, "close 3 NONE"));
  const uint8_t *debug;
  size_t debug_len;
  cr_assert_eq(speedy_session_goaway_reason(client->session, &debug, &debug_len), SPEEDY_RST_NONE);
  cr_assert(debug_len == 3 && memcmp(debug, "bye", 3) == 0);
  cr_assert_eq(speedy_submit_request(client->session, 3,
                                     (speedy_header[]){{":method", 7, "GET", 3},
                                                       {":scheme", 7, "https", 5},
                                                       {":authority", 10, "e", 1},
                                                       {":path", 5, "/", 1}},
                                     4, NULL, NULL, NULL),
               SPEEDY_ERR_SESSION_CLOSING);
  finish(client, server);
}

Test(h2_nghttp2, s6_4_our_client_cancels_a_download) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  server->response_size = 1000000;
  int32_t a = our_get(client, "/a", 3), b = our_get(client, "/b", 3);
  for (int i = 0; i < 4; i++) {
    ours_to_ng(client, server, 8192);
    cr_assert_geq(ng_flush_to(server, client, 4096), 0);
  }
  cr_assert_eq(speedy_submit_rst(client->session, a, SPEEDY_RST_CANCEL), 0);
  int rv = exchange(client, server, 16384);
  cr_assert_eq(rv, 0, "%s", speedy_strerror(rv));
  cr_assert_eq(ng_stream_of(server, a)->close_code, NGHTTP2_CANCEL);
  cr_assert_eq(test_rx(client, b)->len, 1000000);
  finish(client, server);
}

/* RFC 9218: our urgency travels as the priority field. */
Test(h2_nghttp2, rfc9218_s5_our_urgency_is_sent_as_the_priority_field) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  our_get(client, "/urgent", 0);
  our_get(client, "/default", 3);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert_str_eq(ng_stream_of(server, 1)->priority, "u=0");
  cr_assert_str_eq(ng_stream_of(server, 3)->priority, "", "the default urgency goes unsaid");
  finish(client, server);
}

/* RFC 9218 2.1: nghttp2's client, giving no priorities, gets RFC 7540's default (its
 * answers share the connection) until it says SETTINGS_NO_RFC7540_PRIORITIES = 1; then
 * RFC 9218's (one after another). */
Test(h2_nghttp2, rfc9218_s2_1_answers_share_unless_the_nghttp2_client_left_rfc7540) {
  for (int left = 0; left < 2; left++) {
    test_peer *server = our_server(NULL);
    our_response_size = 40000;
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1}};
    ng_peer *client = ng_new(0, settings, left ? 1 : 0);
    int32_t a = ng_get(client, "/a"), b = ng_get(client, "/b");
    cr_assert_geq(ng_flush_to(client, server, 16384), 0);
    for (int i = 0; i < 2; i++) ours_to_ng(server, client, 16384);
    uint64_t got_a = ng_stream_of(client, a)->body, got_b = ng_stream_of(client, b)->body;
    if (left)
      cr_assert(got_a > 16384 && got_b == 0, "one after another: %llu, %llu",
                (unsigned long long)got_a, (unsigned long long)got_b);
    else
      cr_assert(got_a > 0 && got_b > 0, "shared: %llu, %llu", (unsigned long long)got_a,
                (unsigned long long)got_b);
    cr_assert_eq(exchange(server, client, 16384), 0);
    cr_assert_eq(ng_stream_of(client, a)->body, 40000);
    cr_assert_eq(ng_stream_of(client, b)->body, 40000);
    finish(server, client);
  }
}

/* RFC 9218 7.1: our client changes a stream's priority after its request went out. */
Test(h2_nghttp2, rfc9218_s7_1_our_priority_update_reaches_nghttp2) {
  test_peer *client = our_client(NULL);
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, 100},
                                       {NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1}};
  ng_peer *server = ng_new(1, settings, 2);
  server->defer_responses = 1;
  int32_t a = our_get(client, "/later", 3);
  int32_t b = our_get(client, "/sooner", 3);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert_eq(speedy_submit_priority_update(client->session, a, 6, 1), 0);
  cr_assert_eq(speedy_submit_priority_update(client->session, b, 0, 0), 0);
  cr_assert_eq(exchange(client, server, 16384), 0);
  cr_assert_str_eq(ng_stream_of(server, a)->priority_update, "u=6, i");
  cr_assert_str_eq(ng_stream_of(server, b)->priority_update, "u=0");
  /* What the API refuses: a stream not ours, a bad urgency, a server. */
  cr_assert_eq(speedy_submit_priority_update(client->session, 2, 1, 0),
               SPEEDY_ERR_STREAM_NOT_FOUND);
  cr_assert_eq(speedy_submit_priority_update(client->session, a, 8, 0),
               SPEEDY_ERR_INVALID_ARGUMENT);
  test_peer *ours = our_server(NULL);
  cr_assert_eq(speedy_submit_priority_update(ours->session, 1, 1, 0), SPEEDY_ERR_INVALID_STATE);
  test_peer_del(ours);
  test_peer *spdy = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  cr_assert_eq(speedy_submit_priority_update(spdy->session, 1, 1, 0), SPEEDY_ERR_INVALID_STATE,
               "SPDY cannot reprioritise a stream");
  test_peer_del(spdy);
  finish(client, server);
}

/* RFC 9113 6.8: any error code, with debug data, in our GOAWAY. */
Test(h2_nghttp2, s6_8_our_goaway_says_enhance_your_calm) {
  test_peer *server = our_server(NULL);
  ng_peer *client = ng_new(0, NULL, 0);
  cr_assert_eq(exchange(server, client, 16384), 0);
  static const uint8_t why[] = "flood";
  cr_assert_eq(speedy_submit_goaway(server->session, SPEEDY_RST_ENHANCE_YOUR_CALM, why, 5), 0);
  cr_assert_eq(exchange(server, client, 16384), 0);
  cr_assert(client->goaway_seen);
  cr_assert_eq(client->goaway_code, NGHTTP2_ENHANCE_YOUR_CALM);
  cr_assert_eq(speedy_submit_goaway(server->session, SPEEDY_RST_NONE, NULL, 0),
               SPEEDY_ERR_SESSION_CLOSING, "one GOAWAY ends it");
  test_peer *spdy = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  cr_assert_eq(speedy_submit_goaway(spdy->session, SPEEDY_RST_HTTP_1_1_REQUIRED + 1, NULL, 0),
               SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(speedy_submit_goaway(spdy->session, SPEEDY_RST_NONE, NULL, 1),
               SPEEDY_ERR_INVALID_ARGUMENT, "debug data needs its bytes");
  test_peer_del(spdy);
  finish(server, client);
}

Test(h2_nghttp2, s6_7_pings_both_ways) {
  test_peer *client = our_client(NULL);
  ng_peer *server = ng_new(1, NULL, 0);
  speedy_session_set_now(client->session, 1000);
  uint32_t ping_id;
  cr_assert_eq(speedy_submit_ping(client->session, &ping_id), 0);
  cr_assert_eq(nghttp2_submit_ping(server->session, NGHTTP2_FLAG_NONE, NULL), 0);
  speedy_session_set_now(client->session, 1500);
  cr_assert_eq(exchange(client, server, 16384), 0);
  char line[64];
  snprintf(line, sizeof(line), "pingack %u rtt=500", ping_id);
  cr_assert(test_log_has(client, line), "log:\n%s", client->log);
  finish(client, server);
}
