/* pair.c — in-memory SPDY endpoints with recording callbacks (see pair.h). */
#include "pair.h"

#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

void test_log_add(test_peer *peer, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n >= sizeof(line)) n = sizeof(line) - 1;
  if (peer->log_len + (size_t)n + 2 > peer->log_cap) {
    size_t cap = peer->log_cap ? peer->log_cap * 2 : 4096;
    while (cap < peer->log_len + (size_t)n + 2) cap *= 2;
    peer->log = realloc(peer->log, cap);
    cr_assert_not_null(peer->log);
    peer->log_cap = cap;
  }
  memcpy(peer->log + peer->log_len, line, (size_t)n);
  peer->log_len += (size_t)n;
  peer->log[peer->log_len++] = '\n';
  peer->log[peer->log_len] = '\0';
}

int test_log_has(const test_peer *peer, const char *line) {
  if (peer->log == NULL) return 0;
  size_t n = strlen(line);
  for (const char *p = peer->log; (p = strstr(p, line)) != NULL; p++)
    if ((p == peer->log || p[-1] == '\n') && p[n] == '\n') return 1;
  return 0;
}

test_stream_rx *test_rx(test_peer *peer, int32_t stream_id) {
  for (size_t i = 0; i < peer->n_rx; i++)
    if (peer->rx[i].id == stream_id) return &peer->rx[i];
  if (peer->n_rx == peer->cap_rx) {
    peer->cap_rx = peer->cap_rx ? peer->cap_rx * 2 : 16;
    peer->rx = realloc(peer->rx, peer->cap_rx * sizeof(*peer->rx));
    cr_assert_not_null(peer->rx);
  }
  test_stream_rx *rx = &peer->rx[peer->n_rx++];
  memset(rx, 0, sizeof(*rx));
  rx->id = stream_id;
  return rx;
}

static const char *kind_name(speedy_headers_kind kind) {
  switch (kind) {
  case SPEEDY_HEADERS_REQUEST:
    return "request";
  case SPEEDY_HEADERS_RESPONSE:
    return "response";
  case SPEEDY_HEADERS_PUSH:
    return "push";
  case SPEEDY_HEADERS_EXTRA:
    return "extra";
  case SPEEDY_HEADERS_INFORMATIONAL:
    return "informational";
  }
  return "?";
}

static int on_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind, int32_t assoc,
                            void *user) {
  (void)s;
  test_peer *peer = user;
  if (kind == SPEEDY_HEADERS_PUSH)
    test_log_add(peer, "begin %d push assoc=%d", id, assoc);
  else
    test_log_add(peer, "begin %d %s", id, kind_name(kind));
  if (peer->on_begin != NULL) peer->on_begin(peer, id, kind, assoc);
  return 0;
}

static int on_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  (void)s;
  test_log_add(user, "header %d %.*s=%.*s", id, (int)h->name_len, h->name, (int)h->value_len,
               h->value);
  return 0;
}

static int on_headers_end(speedy_session *s, int32_t id, int end_stream, void *user) {
  (void)s;
  test_peer *peer = user;
  test_log_add(peer, "end %d fin=%d", id, end_stream);
  if (end_stream) test_rx(peer, id)->fin = 1;
  if (peer->on_request != NULL && speedy_session_role(s) == SPEEDY_ROLE_SERVER) {
    /* answer once the request is complete (headers with FIN, else at data end) */
    if (end_stream) peer->on_request(peer, id);
  }
  return 0;
}

static int on_data_chunk(speedy_session *s, int32_t id, const uint8_t *data, size_t len,
                         void *user) {
  test_peer *peer = user;
  test_stream_rx *rx = test_rx(peer, id);
  if (rx->len + len > rx->cap) {
    size_t cap = rx->cap ? rx->cap : 1024;
    while (cap < rx->len + len) cap *= 2;
    rx->data = realloc(rx->data, cap);
    cr_assert_not_null(rx->data);
    rx->cap = cap;
  }
  memcpy(rx->data + rx->len, data, len);
  rx->len += len;
  if (peer->n_data_order == peer->cap_data_order) {
    peer->cap_data_order = peer->cap_data_order ? peer->cap_data_order * 2 : 256;
    peer->data_order = realloc(peer->data_order, peer->cap_data_order * sizeof(int32_t));
    cr_assert_not_null(peer->data_order);
  }
  peer->data_order[peer->n_data_order++] = id;
  if (peer->log_data) test_log_add(peer, "data %d %zu", id, len);
  if (peer->consume_data) cr_assert_eq(speedy_session_consume(s, id, len), 0);
  return peer->pause_data ? SPEEDY_ERR_PAUSE : 0;
}

static int on_data_end(speedy_session *s, int32_t id, void *user) {
  test_peer *peer = user;
  test_stream_rx *rx = test_rx(peer, id);
  rx->fin = 1;
  test_log_add(peer, "dataend %d len=%zu", id, rx->len);
  if (peer->on_request != NULL && speedy_session_role(s) == SPEEDY_ROLE_SERVER)
    peer->on_request(peer, id);
  return 0;
}

static int on_stream_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  test_peer *peer = user;
  test_stream_rx *rx = test_rx(peer, id);
  rx->closed = 1;
  rx->close_status = status;
  test_log_add(peer, "close %d %s", id, speedy_rst_status_name(status));
  return 0;
}

static int on_ping_ack(speedy_session *s, uint32_t id, int64_t rtt, void *user) {
  (void)s;
  test_peer *peer = user;
  peer->pings_acked++;
  test_log_add(peer, "pingack %u rtt=%lld", id, (long long)rtt);
  return 0;
}

static int on_goaway(speedy_session *s, int32_t last_good, uint32_t status, void *user) {
  (void)s;
  test_peer *peer = user;
  peer->goaway_seen = 1;
  peer->goaway_last_good = last_good;
  peer->goaway_status = status;
  test_log_add(peer, "goaway %d %u", last_good, status);
  return 0;
}

static void on_frame_not_sent(speedy_session *s, int type, int32_t id, int reason, void *user) {
  (void)s;
  test_log_add(user, "notsent %s %d %s", speedy_spdy_frame_type_name(type), id,
               reason == SPEEDY_ERR_STREAM_CLOSED     ? "STREAM_CLOSED"
               : reason == SPEEDY_ERR_SESSION_CLOSING ? "SESSION_CLOSING"
                                                      : "other");
}

static int on_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *user) {
  (void)s;
  test_log_add(user, "setting %u=%u flags=%u", id, value, (unsigned)flags);
  return 0;
}

static void on_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user);
static int on_send_data(speedy_session *s, int32_t id, const uint8_t *frame_header, size_t length,
                        void *source, void *user);

test_peer *test_peer_new(speedy_protocol protocol, speedy_role role, speedy_options *options) {
  test_peer *peer = calloc(1, sizeof(*peer));
  cr_assert_not_null(peer);
  speedy_callbacks *cb;
  cr_assert_eq(speedy_callbacks_new(&cb), 0);
  speedy_callbacks_set_on_begin_headers(cb, on_begin_headers);
  speedy_callbacks_set_on_header(cb, on_header);
  speedy_callbacks_set_on_headers_end(cb, on_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, on_data_chunk);
  speedy_callbacks_set_on_data_end(cb, on_data_end);
  speedy_callbacks_set_on_stream_close(cb, on_stream_close);
  speedy_callbacks_set_on_ping_ack(cb, on_ping_ack);
  speedy_callbacks_set_on_goaway(cb, on_goaway);
  speedy_callbacks_set_on_setting(cb, on_setting);
  speedy_callbacks_set_on_frame_not_sent(cb, on_frame_not_sent);
  speedy_callbacks_set_on_frame(cb, on_frame);         /* records only when peer->trace */
  speedy_callbacks_set_on_send_data(cb, on_send_data); /* zero-copy bodies: peer->side */
  speedy_options *own = NULL;
  if (options == NULL) {
    cr_assert_eq(speedy_options_new(&own), 0);
    test_alloc_install(own);
    options = own;
  }
  int rv = speedy_session_new(&peer->session, protocol, role, cb, options, peer);
  cr_assert_eq(rv, 0, "speedy_session_new: %s", speedy_strerror(rv));
  speedy_options_del(own);
  speedy_callbacks_del(cb);
  peer->response_size = 100;
  return peer;
}

void test_peer_del(test_peer *peer) {
  if (peer == NULL) return;
  speedy_session_del(peer->session);
  for (size_t i = 0; i < peer->n_rx; i++) free(peer->rx[i].data);
  free(peer->rx);
  free(peer->log);
  free(peer->data_order);
  free(peer->frames);
  free(peer->flows);
  free(peer->side);
  for (size_t i = 0; i < peer->n_bodies; i++) free(peer->bodies[i]);
  free(peer->bodies);
  free(peer);
}

int64_t test_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                       uint32_t *flags, void *source, void *user) {
  (void)session, (void)stream_id, (void)user;
  test_body *body = source;
  if (body->defer_once) {
    body->defer_once = 0;
    return SPEEDY_ERR_DEFERRED;
  }
  size_t n = body->len - body->offset;
  if (n > len) n = len;
  for (size_t i = 0; i < n; i++)
    buf[i] =
        body->data != NULL ? body->data[body->offset + i] : (uint8_t)((body->offset + i) % 251);
  body->offset += n;
  if (body->offset == body->len) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

test_body *test_peer_body(test_peer *peer, const uint8_t *data, size_t len) {
  /* Bodies are referenced by sessions: allocate them individually so they never move. */
  test_body *body = calloc(1, sizeof(*body));
  cr_assert_not_null(body);
  body->data = data;
  body->len = len;
  if (peer->n_bodies == peer->cap_bodies) {
    peer->cap_bodies = peer->cap_bodies ? peer->cap_bodies * 2 : 16;
    peer->bodies = realloc(peer->bodies, peer->cap_bodies * sizeof(test_body *));
    cr_assert_not_null(peer->bodies);
  }
  peer->bodies[peer->n_bodies++] = body;
  return body;
}

void test_respond_default(test_peer *peer, int32_t stream_id) {
  char length[32];
  snprintf(length, sizeof(length), "%zu", peer->response_size);
  speedy_header headers[] = {{":status", 7, "200 OK", 6},
                             {":version", 8, "HTTP/1.1", 8},
                             {"content-type", 12, "text/plain", 10},
                             {"content-length", 14, length, strlen(length)}};
  test_body *body =
      peer->response_size > 0 ? test_peer_body(peer, NULL, peer->response_size) : NULL;
  int rv = speedy_submit_response(peer->session, stream_id, headers, 4,
                                  body != NULL ? test_body_read : NULL, body);
  cr_assert_eq(rv, 0, "submit_response: %s", speedy_strerror(rv));
}

static int32_t request(test_peer *client, const char *method, const char *path, int urgency,
                       size_t body_len) {
  speedy_header headers[] = {{":method", 7, method, strlen(method)},
                             {":path", 5, path, strlen(path)},
                             {":version", 8, "HTTP/1.1", 8},
                             {":host", 5, "example.test", 12},
                             {":scheme", 7, "https", 5},
                             {"user-agent", 10, "speedy-test", 11}};
  test_body *body = body_len > 0 ? test_peer_body(client, NULL, body_len) : NULL;
  int32_t id = speedy_submit_request(client->session, urgency, headers, 6,
                                     body != NULL ? test_body_read : NULL, body, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  return id;
}

int32_t test_get(test_peer *client, const char *path, int urgency) {
  return request(client, "GET", path, urgency, 0);
}

int32_t test_post(test_peer *client, const char *path, size_t body_len) {
  return request(client, "POST", path, 3, body_len);
}

int64_t test_feed(test_peer *peer, const uint8_t *bytes, size_t len, size_t chunk) {
  size_t pos = 0;
  int64_t rv = 0;
  while (pos < len) {
    size_t n = len - pos < chunk ? len - pos : chunk;
    rv = speedy_session_recv(peer->session, bytes + pos, n);
    if (rv < 0) return rv;
    if (rv == 0 && n > 0 && !peer->pause_data) return SPEEDY_ERR_INVALID_STATE;
    pos += (size_t)rv;
  }
  return (int64_t)pos;
}

uint8_t *test_drain(test_peer *peer, size_t *len) {
  size_t cap = 4096, n = 0;
  uint8_t *out = malloc(cap);
  cr_assert_not_null(out);
  for (;;) {
    if (cap - n < 4096) {
      cap *= 2;
      out = realloc(out, cap);
      cr_assert_not_null(out);
    }
    int64_t got = speedy_session_send(peer->session, out + n, cap - n);
    if (got <= 0) break;
    n += (size_t)got;
  }
  *len = n;
  return out;
}

/* Moves what `from` has to say into `to`, chunk by chunk. */
static int64_t pump_one(test_peer *from, test_peer *to, size_t chunk) {
  uint8_t buf[65536];
  size_t cap = chunk < sizeof(buf) ? chunk : sizeof(buf);
  int64_t moved = 0;
  for (;;) {
    int64_t n = speedy_session_send(from->session, buf, cap);
    if (n < 0) return n;
    if (n == 0) return moved;
    int64_t fed = test_feed(to, buf, (size_t)n, chunk);
    if (fed < 0) return fed;
    moved += n;
  }
}

int64_t test_pump(test_peer *a, test_peer *b, size_t chunk) {
  int64_t total = 0;
  for (int round = 0; round < 1000000; round++) {
    int64_t ab = pump_one(a, b, chunk);
    if (ab < 0) return ab;
    int64_t ba = pump_one(b, a, chunk);
    if (ba < 0) return ba;
    total += ab + ba;
    if (ab == 0 && ba == 0) return total;
  }
  return total;
}

/* ---- frame trace and window checks ------------------------------------------------- */

void test_peer_trace(test_peer *peer) {
  peer->trace = 1;
  peer->flow_stream_window = 65536;
}

test_flow *test_flow_of(test_peer *peer, int32_t stream_id) {
  for (size_t i = 0; i < peer->n_flows; i++)
    if (peer->flows[i].id == stream_id) return &peer->flows[i];
  if (peer->n_flows == peer->cap_flows) {
    peer->cap_flows = peer->cap_flows ? peer->cap_flows * 2 : 16;
    peer->flows = realloc(peer->flows, peer->cap_flows * sizeof(*peer->flows));
    cr_assert_not_null(peer->flows);
  }
  test_flow *flow = &peer->flows[peer->n_flows++];
  memset(flow, 0, sizeof(*flow));
  flow->id = stream_id;
  flow->min_send_window = INT64_MAX;
  return flow;
}

size_t test_frames_count(const test_peer *peer, int sent, int type, int32_t stream_id) {
  size_t n = 0;
  for (size_t i = 0; i < peer->n_frames; i++) {
    const test_frame_rec *f = &peer->frames[i];
    if (f->sent == sent && f->type == type && (stream_id < 0 || f->stream_id == stream_id)) n++;
  }
  return n;
}

static void flow_violation(test_peer *peer, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void flow_violation(test_peer *peer, const char *fmt, ...) {
  if (peer->flow_violations++ > 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(peer->flow_error, sizeof(peer->flow_error), fmt, ap);
  va_end(ap);
}

/* Sender side: the engine's windows after a DATA frame, against the trace's model. */
static void flow_check_sent(test_peer *peer, speedy_session *s, int32_t id, uint32_t length) {
  test_flow *flow = test_flow_of(peer, id);
  test_flow *all = test_flow_of(peer, 0);
  flow->data_sent += length, flow->frames_sent++;
  all->data_sent += length, all->frames_sent++;
  if (peer->flow_max_frame != 0 && length > peer->flow_max_frame)
    flow_violation(peer, "DATA of %u bytes on stream %d, frame size %u", length, (int)id,
                   peer->flow_max_frame);
  speedy_protocol protocol = speedy_session_protocol(s);
  if (protocol == SPEEDY_PROTOCOL_SPDY2) return;
  int64_t initial = speedy_session_remote_setting(s, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE);
  if (initial < 0) initial = 65536;
  int64_t window = speedy_session_send_window(s, id);
  int64_t model = initial + (int64_t)flow->wu_recv - (int64_t)flow->data_sent;
  if (window < flow->min_send_window) flow->min_send_window = window;
  if (window != model)
    flow_violation(peer, "stream %d: engine send window %lld, trace says %lld", (int)id,
                   (long long)window, (long long)model);
  else if (window < 0 && !peer->flow_allow_negative)
    flow_violation(peer, "stream %d: sent past the window (now %lld)", (int)id, (long long)window);
  if (protocol != SPEEDY_PROTOCOL_SPDY3_1) return;
  int64_t session_window = speedy_session_send_window(s, 0);
  int64_t session_model = 65536 + (int64_t)all->wu_recv - (int64_t)all->data_sent;
  if (session_window < all->min_send_window) all->min_send_window = session_window;
  if (session_window != session_model)
    flow_violation(peer, "session: engine send window %lld, trace says %lld",
                   (long long)session_window, (long long)session_model);
  else if (session_window < 0)
    flow_violation(peer, "session: sent past the window (now %lld)", (long long)session_window);
}

/* Receiver side: never more unacknowledged DATA than this peer granted. */
static void flow_check_recv(test_peer *peer, speedy_session *s, int32_t id, uint32_t length) {
  test_flow *flow = test_flow_of(peer, id);
  test_flow *all = test_flow_of(peer, 0);
  flow->data_recv += length, flow->frames_recv++;
  all->data_recv += length, all->frames_recv++;
  speedy_protocol protocol = speedy_session_protocol(s);
  if (protocol == SPEEDY_PROTOCOL_SPDY2) return;
  if (flow->data_recv > flow->wu_sent + peer->flow_stream_window)
    flow_violation(peer, "stream %d: received %llu bytes, granted %llu", (int)id,
                   (unsigned long long)flow->data_recv,
                   (unsigned long long)(flow->wu_sent + peer->flow_stream_window));
  if (protocol == SPEEDY_PROTOCOL_SPDY3_1 && all->data_recv > all->wu_sent + 65536)
    flow_violation(peer, "session: received %llu bytes, granted %llu",
                   (unsigned long long)all->data_recv, (unsigned long long)(all->wu_sent + 65536));
}

static void on_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user) {
  test_peer *peer = user;
  if (!peer->trace) return;
  test_frame_rec rec = {sent, type, flags, id, length, 0, ""};
  snprintf(rec.summary, sizeof(rec.summary), "%s", summary);
  const char *p;
  /* Received control frames carry their stream id in the summary only. */
  if (!sent && type != SPEEDY_SPDY_FRAME_DATA && (p = strstr(summary, "stream=")) != NULL)
    rec.stream_id = (int32_t)strtol(p + 7, NULL, 10);
  if (type == SPEEDY_SPDY_FRAME_WINDOW_UPDATE && (p = strstr(summary, "delta=")) != NULL)
    rec.delta = (uint32_t)strtoul(p + 6, NULL, 10);
  if (peer->n_frames == peer->cap_frames) {
    peer->cap_frames = peer->cap_frames ? peer->cap_frames * 2 : 256;
    peer->frames = realloc(peer->frames, peer->cap_frames * sizeof(*peer->frames));
    cr_assert_not_null(peer->frames);
  }
  peer->frames[peer->n_frames++] = rec;
  if (type == SPEEDY_SPDY_FRAME_WINDOW_UPDATE) {
    test_flow *flow = test_flow_of(peer, rec.stream_id);
    if (sent)
      flow->wu_sent += rec.delta;
    else
      flow->wu_recv += rec.delta;
  } else if (type == SPEEDY_SPDY_FRAME_DATA) {
    if (sent)
      flow_check_sent(peer, s, rec.stream_id, length);
    else
      flow_check_recv(peer, s, rec.stream_id, length);
  }
}

/* ---- zero-copy bodies -------------------------------------------------------------- */

static void side_append(test_peer *peer, const uint8_t *bytes, size_t len) {
  if (peer->side_len + len > peer->side_cap) {
    size_t cap = peer->side_cap ? peer->side_cap : 4096;
    while (cap < peer->side_len + len) cap *= 2;
    peer->side = realloc(peer->side, cap);
    cr_assert_not_null(peer->side);
    peer->side_cap = cap;
  }
  memcpy(peer->side + peer->side_len, bytes, len);
  peer->side_len += len;
}

int64_t test_body_read_nocopy(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                              uint32_t *flags, void *source, void *user) {
  (void)session, (void)stream_id, (void)buf, (void)user;
  test_body *body = source;
  if (body->defer_once) {
    body->defer_once = 0;
    return SPEEDY_ERR_DEFERRED;
  }
  size_t n = body->len - body->offset;
  if (n > len) n = len;
  body->offset += n; /* on_send_data writes [offset - n, offset) before the next read */
  if (body->offset == body->len) *flags |= SPEEDY_DATA_FLAG_EOF;
  *flags |= SPEEDY_DATA_FLAG_NO_COPY;
  return (int64_t)n;
}

static int on_send_data(speedy_session *s, int32_t id, const uint8_t *frame_header, size_t length,
                        void *source, void *user) {
  (void)id;
  test_peer *peer = user;
  test_body *body = source;
  if (body == NULL || length > body->offset) return -1;
  side_append(peer, frame_header, speedy_session_data_header_length(s));
  uint8_t chunk[4096];
  size_t start = body->offset - length;
  for (size_t done = 0; done < length;) {
    size_t n = length - done < sizeof(chunk) ? length - done : sizeof(chunk);
    for (size_t i = 0; i < n; i++) {
      size_t at = start + done + i;
      chunk[i] = body->data != NULL ? body->data[at] : (uint8_t)(at % 251);
    }
    side_append(peer, chunk, n);
    done += n;
  }
  return 0;
}

/* ---- stepping ---------------------------------------------------------------------- */

int64_t test_move(test_peer *from, test_peer *to, size_t chunk) {
  return pump_one(from, to, chunk);
}

int64_t test_step(test_peer *from, test_peer *to, size_t max) {
  uint8_t buf[65536];
  int64_t n = speedy_session_send(from->session, buf, max < sizeof(buf) ? max : sizeof(buf));
  if (n <= 0) return n;
  int64_t fed = test_feed(to, buf, (size_t)n, (size_t)n);
  return fed < 0 ? fed : n;
}

static int64_t pump_peek_one(test_peer *from, test_peer *to, size_t chunk) {
  int64_t moved = 0;
  for (;;) {
    const uint8_t *out;
    int64_t n = speedy_session_peek_output(from->session, &out, chunk);
    if (n < 0) return n;
    /* Bytes on_send_data wrote during this call precede what the call returned. */
    if (from->side_len > 0) {
      int64_t fed = test_feed(to, from->side, from->side_len, chunk);
      if (fed < 0) return fed;
      moved += (int64_t)from->side_len;
      from->side_len = 0;
    }
    if (n == 0) return moved;
    int64_t fed = test_feed(to, out, (size_t)n, chunk);
    if (fed < 0) return fed;
    speedy_session_consume_output(from->session, (size_t)n);
    moved += n;
  }
}

int64_t test_pump_peek(test_peer *a, test_peer *b, size_t chunk) {
  int64_t total = 0;
  for (int round = 0; round < 1000000; round++) {
    int64_t ab = pump_peek_one(a, b, chunk);
    if (ab < 0) return ab;
    int64_t ba = pump_peek_one(b, a, chunk);
    if (ba < 0) return ba;
    total += ab + ba;
    if (ab == 0 && ba == 0) return total;
  }
  return total;
}
