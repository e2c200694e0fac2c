/* fuzz_roundtrip_driver.c — client and server sessions driven by fuzz input (see
 * fuzz_roundtrip_driver.h). One driver for SPDY and HTTP/2: the operations, the byte pump
 * and the checks are shared; what differs (header names, the statuses an engine may send,
 * the settings, HTTP/2's 1xx, trailers, PRIORITY_UPDATE and GOAWAY with an error) is chosen
 * by rt.h2. The SPDY input format is unchanged by the HTTP/2 additions. */
#include "fuzz_roundtrip_driver.h"

#include <stdio.h>
#include <string.h>

#define RT_MAX_STREAMS 128
#define RT_MAX_BODIES 256
/* Operations between two full pumps: each makes at most one frame the other side owes an
 * answer (a PING, a request over its concurrency limit refused, SETTINGS), so fewer than
 * the flood cap (16 with small limits) keeps a correct peer from reaching it. */
#define RT_OPS_BETWEEN_PUMPS 32
#define RT_OPS_BETWEEN_PUMPS_SMALL 12

/* A stream either side opened, and what its sender promised to write. */
typedef struct rt_stream {
  int32_t id;
  int has_request_body, has_response_body;
  uint64_t request_len, response_len; /* bytes the client / the server will send */
  int responded;
  int windows_opened; /* finish_streams: bit 0 the client's window, bit 1 the server's */
} rt_stream;

typedef struct rt_state {
  fuzz_endpoint client, server;
  int strict;
  speedy_protocol protocol;
  rt_stream streams[RT_MAX_STREAMS];
  size_t n_streams;
  fuzz_body bodies[RT_MAX_BODIES];
  size_t n_bodies;
  int goaway_submitted[2]; /* by the client, by the server */
  int resets_submitted;
  int h2;                          /* SPEEDY_PROTOCOL_H2 */
  int untracked;                   /* a stream found no slot in streams[] */
  int small_window[2];             /* the client / server set INITIAL_WINDOW_SIZE below 65,535 */
  uint8_t trailers[RT_MAX_BODIES]; /* HTTP/2: the body ends with trailers */
  int64_t now;
  int ops_between_pumps; /* RT_OPS_BETWEEN_PUMPS or, with small limits, _SMALL */
} rt_state;

static rt_state rt; /* large: kept off the stack */

static const char *side_name(const fuzz_endpoint *ep) {
  return ep->role == SPEEDY_ROLE_CLIENT ? "client" : "server";
}

static rt_stream *find_stream(int32_t id) {
  for (size_t i = 0; i < rt.n_streams; i++)
    if (rt.streams[i].id == id) return &rt.streams[i];
  return NULL;
}

static rt_stream *add_stream(int32_t id) {
  if (rt.n_streams == RT_MAX_STREAMS) {
    rt.untracked = 1;
    return NULL;
  }
  rt_stream *s = &rt.streams[rt.n_streams++];
  memset(s, 0, sizeof(*s));
  s->id = id;
  return s;
}

static rt_stream *pick_stream(fuzz_input *in) {
  if (rt.n_streams == 0) return NULL;
  return &rt.streams[fuzz_u8(in) % rt.n_streams];
}

/* A body of a size from the input (NULL: no body). */
static fuzz_body *pick_body(fuzz_input *in) {
  static const uint32_t sizes[] = {0, 1, 17, 1000, 16384, 65535, 65536, 100000};
  uint8_t sel = fuzz_u8(in);
  if (sel % 8 == 0 || rt.n_bodies == RT_MAX_BODIES) return NULL;
  fuzz_body *b = &rt.bodies[rt.n_bodies++];
  memset(b, 0, sizeof(*b));
  b->len = sel < 128 ? sizes[sel % 8] : (uint64_t)fuzz_u16(&*in);
  b->defer_every = (sel >> 4) % 4 == 3 ? 2 : 0;
  b->nocopy = (sel >> 3) & 1; /* zero-copy: on_send_data writes the frames */
  rt.trailers[b - rt.bodies] = rt.h2 && (fuzz_u8(in) & 1);
  return b;
}

/* Body source: fuzz_body_read, and for HTTP/2 bodies chosen to, trailers from the last
 * read (RFC 9113 8.1: a HEADERS frame with END_STREAM after the DATA). */
static int64_t body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  int64_t n = fuzz_body_read(session, stream_id, buf, len, flags, source, user);
  fuzz_body *b = source;
  if (n < 0 || !(*flags & SPEEDY_DATA_FLAG_EOF) || !rt.trailers[b - rt.bodies]) return n;
  static const speedy_header trailers[] = {{"x-checksum", 10, "0", 1},
                                           {"server-timing", 13, "total;dur=1", 11}};
  int rv = speedy_submit_headers(session, stream_id, trailers, 2, 1);
  if (rv == 0) {
    *flags |= SPEEDY_DATA_FLAG_NO_END_STREAM;
  } else if (rv != SPEEDY_ERR_NOMEM) {
    /* A peer's MAX_HEADER_LIST_SIZE below the trailers' size refuses them rightly. */
    int64_t peer_max = speedy_session_remote_setting(session, SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE);
    if (rt.strict && !(rv == SPEEDY_ERR_INVALID_HEADER && peer_max >= 0 && peer_max < 120))
      fuzz_fail("trailers from the body's last read: %s", speedy_strerror(rv));
  }
  return n;
}

/* Extra header fields after the required ones; names and values from a table or the
 * input (the engine must refuse what the peer would refuse, at submit time). */
static size_t extra_headers(fuzz_input *in, speedy_header *out, size_t max) {
  static const char *const names[] = {"accept",     "cookie",     "x-a",          "x-b",
                                      "set-cookie", "user-agent", "content-type", "etag"};
  static const char *const values[] = {"1", "text/html", "a=b; c=d", "x", "gzip, deflate"};
  size_t n = fuzz_u8(in) % 4;
  if (n > max) n = max;
  for (size_t i = 0; i < n; i++) {
    uint8_t sel = fuzz_u8(in);
    if (sel < 224) {
      const char *name = names[sel % 8];
      const char *value = values[(sel / 8) % 5];
      out[i] = (speedy_header){name, strlen(name), value, strlen(value)};
    } else {
      const uint8_t *bytes;
      size_t len = fuzz_take(in, 1 + sel % 8, &bytes);
      const uint8_t *vbytes;
      size_t vlen = fuzz_take(in, fuzz_u8(in) % 16, &vbytes);
      out[i] = (speedy_header){(const char *)bytes, len, (const char *)vbytes, vlen};
    }
  }
  return n;
}

/* ---- checks on what the sessions did --------------------------------------------- */

static void check_error(const fuzz_endpoint *ep, int64_t rv, const char *what) {
  if (rv >= 0) return;
  if (rv < -520 || rv > -501) fuzz_fail("%s %s returned %lld", side_name(ep), what, (long long)rv);
  if (rt.strict)
    fuzz_fail("%s %s failed between two speedy sessions: %s\nclient events:\n%s\nserver "
              "events:\n%s",
              side_name(ep), what, speedy_strerror((int)rv), rt.client.log.text,
              rt.server.log.text);
}

/* The receiving side closed a stream: a normal end means every body byte arrived. */
static void close_hook(fuzz_endpoint *ep, int32_t id, uint32_t status, uint64_t received) {
  if (!rt.strict || status != SPEEDY_RST_NONE || received == UINT64_MAX) return;
  rt_stream *s = find_stream(id);
  if (s == NULL) return;
  uint64_t expected = ep->role == SPEEDY_ROLE_CLIENT ? s->response_len : s->request_len;
  if (received != expected)
    fuzz_fail("%s: stream %d ended normally with %llu body bytes, the sender wrote %llu",
              side_name(ep), (int)id, (unsigned long long)received, (unsigned long long)expected);
}

static void check_resets(const fuzz_endpoint *ep) {
  if (!rt.strict) return;
  /* Statuses that accuse the peer of breaking the protocol. The application only ever
   * submits REFUSED_STREAM, CANCEL and INTERNAL_ERROR. */
  static const uint32_t accusing[] = {
      SPEEDY_RST_PROTOCOL_ERROR,        SPEEDY_RST_INVALID_STREAM,
      SPEEDY_RST_FLOW_CONTROL_ERROR,    SPEEDY_RST_STREAM_IN_USE,
      SPEEDY_RST_STREAM_ALREADY_CLOSED, SPEEDY_RST_FRAME_TOO_LARGE,
      SPEEDY_RST_UNSUPPORTED_VERSION,   SPEEDY_RST_INVALID_CREDENTIALS,
      SPEEDY_RST_SETTINGS_TIMEOUT,      SPEEDY_RST_COMPRESSION_ERROR,
      SPEEDY_RST_ENHANCE_YOUR_CALM};
  for (size_t i = 0; i < sizeof(accusing) / sizeof(accusing[0]); i++)
    if (ep->rst_sent[accusing[i]] > 0)
      fuzz_fail("%s sent RST_STREAM %s to a speedy peer\nclient events:\n%s\nserver events:\n%s",
                side_name(ep), speedy_rst_status_name(accusing[i]), rt.client.log.text,
                rt.server.log.text);
  int index = ep->role == SPEEDY_ROLE_CLIENT ? 0 : 1;
  if (ep->goaway_sent > 0 && !rt.goaway_submitted[index])
    fuzz_fail("%s sent GOAWAY nobody asked for\nclient events:\n%s\nserver events:\n%s",
              side_name(ep), rt.client.log.text, rt.server.log.text);
}

/* ---- moving bytes ------------------------------------------------------------------ */

/* Bytes from `from` fed to `to`. */
static void feed(fuzz_endpoint *to, const uint8_t *bytes, size_t n) {
  int64_t got = fuzz_endpoint_recv(to, bytes, n);
  check_error(to, got, "recv");
  if (got >= 0 && (size_t)got != n) fuzz_fail("recv consumed %lld of %zu", (long long)got, n);
}

/* One send of at most chunk bytes from `from`, fed to `to`: first what on_send_data
 * wrote during the call (zero-copy frames), then what it returned. A zero-copy frame
 * counts towards chunk, so at most one frame more than chunk moves. Returns the bytes
 * moved. */
static int64_t step(fuzz_endpoint *from, fuzz_endpoint *to, size_t chunk) {
  static uint8_t buf[65536];
  if (chunk > sizeof(buf)) chunk = sizeof(buf);
  int64_t n = speedy_session_send(from->session, buf, chunk);
  check_error(from, n, "send");
  size_t side = from->side.len;
  if (side > chunk + 9 + 16384) /* the harness sends DATA frames of 16,384 at most */
    fuzz_fail("%s: on_send_data wrote %zu bytes when %zu were asked for", side_name(from), side,
              chunk);
  from->side.len = 0;
  if (side > 0) feed(to, from->side.data, side);
  if (n > 0) feed(to, buf, (size_t)n);
  return (n > 0 ? n : 0) + (int64_t)side;
}

static void pump(size_t chunk, int rounds) {
  for (int r = 0; r < rounds; r++) {
    int64_t moved = step(&rt.client, &rt.server, chunk);
    moved += step(&rt.server, &rt.client, chunk);
    if (moved == 0) break;
  }
  check_resets(&rt.client);
  check_resets(&rt.server);
}

static void resume_all(void) {
  for (size_t i = 0; i < rt.n_streams; i++) {
    (void)speedy_session_resume_data(rt.client.session, rt.streams[i].id);
    (void)speedy_session_resume_data(rt.server.session, rt.streams[i].id);
  }
}

/* ---- operations -------------------------------------------------------------------- */

/* HTTP/2 request pseudo-header fields (RFC 9113 8.3.1); the method from the input. */
static size_t h2_request_headers(fuzz_input *in, speedy_header *out, char *path, size_t path_size) {
  static const char *const methods[] = {"GET", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"};
  const char *method = methods[fuzz_u8(in) % 6];
  snprintf(path, path_size, "/r/%u?q", (unsigned)fuzz_u16(in));
  out[0] = (speedy_header){":method", 7, method, strlen(method)};
  out[1] = (speedy_header){":scheme", 7, "https", 5};
  out[2] = (speedy_header){":authority", 10, "fuzz.test", 9};
  out[3] = (speedy_header){":path", 5, path, strlen(path)};
  return 4;
}

static void op_request(fuzz_input *in) {
  speedy_header headers[9];
  char path[24];
  size_t n;
  if (rt.h2) {
    n = h2_request_headers(in, headers, path, sizeof(path));
  } else {
    memcpy(headers, fuzz_request_headers, sizeof(fuzz_request_headers));
    n = 5;
  }
  n += extra_headers(in, headers + n, 4);
  uint8_t urgency = fuzz_u8(in) % 8;
  fuzz_body *body = pick_body(in);
  int32_t id = speedy_submit_request(rt.client.session, urgency, headers, n,
                                     body ? body_read : NULL, body, NULL);
  check_error(&rt.client,
              id == SPEEDY_ERR_INVALID_HEADER || id == SPEEDY_ERR_SESSION_CLOSING ||
                      id == SPEEDY_ERR_TOO_MANY_STREAMS
                  ? 0
                  : id,
              "submit_request");
  if (id <= 0) {
    if (body != NULL) rt.n_bodies--; /* not handed over: reuse the slot */
    return;
  }
  rt_stream *s = add_stream(id);
  if (s != NULL && body != NULL) {
    s->has_request_body = 1;
    s->request_len = body->len;
  }
}

/* :status 200 and, for SPDY, :version (HTTP/2 has no :version, RFC 9113 8.3.2). */
static size_t response_head(speedy_header *out) {
  static const speedy_header h2_head[] = {{":status", 7, "200", 3}, {"server", 6, "fuzz", 4}};
  memcpy(out, rt.h2 ? h2_head : fuzz_response_headers, sizeof(fuzz_response_headers));
  return 2;
}

static void op_response(fuzz_input *in) {
  static const char *const statuses[] = {"200", "204", "404", "500 Internal Server Error"};
  static const char *const h2_statuses[] = {"200", "204", "404", "500"};
  rt_stream *s = pick_stream(in);
  if (s == NULL || (s->id & 1) == 0) return;
  speedy_header headers[6];
  size_t n = response_head(headers);
  const char *status = (rt.h2 ? h2_statuses : statuses)[fuzz_u8(in) % 4];
  headers[0].value = status;
  headers[0].value_len = strlen(status);
  n += extra_headers(in, headers + n, 4);
  fuzz_body *body = pick_body(in);
  int rv =
      speedy_submit_response(rt.server.session, s->id, headers, n, body ? body_read : NULL, body);
  if (rv == 0) {
    s->responded = 1;
    s->has_response_body = body != NULL;
    s->response_len = body != NULL ? body->len : 0;
  } else if (body != NULL) {
    rt.n_bodies--; /* not handed over: reuse the slot */
  }
}

static void op_push(fuzz_input *in) {
  rt_stream *assoc = pick_stream(in);
  if (assoc == NULL) return;
  char path[24];
  snprintf(path, sizeof(path), "/push/%u", (unsigned)fuzz_u16(in));
  speedy_header request[4] = {{":scheme", 7, "https", 5},
                              {":host", 5, "fuzz.test", 9},
                              {":path", 5, path, strlen(path)},
                              {":method", 7, "GET", 3}};
  if (rt.h2) request[1] = (speedy_header){":authority", 10, "fuzz.test", 9};
  speedy_header response[6];
  size_t n = response_head(response);
  n += extra_headers(in, response + n, 4);
  fuzz_body *body = pick_body(in);
  int32_t id = speedy_submit_push(rt.server.session, assoc->id, fuzz_u8(in) % 8, request,
                                  rt.h2 ? 4 : 3, response, n, body ? body_read : NULL, body, NULL);
  if (id <= 0) {
    if (body != NULL) rt.n_bodies--;
    return;
  }
  rt_stream *s = add_stream(id);
  if (s != NULL) {
    s->responded = 1;
    s->has_response_body = body != NULL;
    s->response_len = body != NULL ? body->len : 0;
  }
}

static fuzz_endpoint *pick_side(fuzz_input *in) {
  return fuzz_u8(in) & 1 ? &rt.server : &rt.client;
}

static void op_headers(fuzz_input *in) {
  fuzz_endpoint *ep = pick_side(in);
  rt_stream *s = pick_stream(in);
  if (s == NULL) return;
  speedy_header headers[4];
  size_t n = extra_headers(in, headers, 4);
  int end = fuzz_u8(in) & 1;
  if (rt.h2 && (end || ep == &rt.client)) {
    end = 1; /* HTTP/2 has HEADERS after the first only as trailers (RFC 9113 8.1) */
  } else if (rt.h2) {
    /* A server's informational response before the final one (RFC 9113 8.1). */
    static const char *const informational[] = {"100", "103", "102", "199"};
    const char *status = informational[fuzz_u8(in) % 4];
    headers[0] = (speedy_header){":status", 7, status, 3};
    if (n == 0) n = 1;
  }
  (void)speedy_submit_headers(ep->session, s->id, headers, n, end);
}

static void op_rst(fuzz_input *in) {
  static const uint32_t polite[] = {SPEEDY_RST_CANCEL, SPEEDY_RST_REFUSED_STREAM,
                                    SPEEDY_RST_INTERNAL_ERROR};
  fuzz_endpoint *ep = pick_side(in);
  rt_stream *s = pick_stream(in);
  uint8_t sel = fuzz_u8(in);
  uint32_t status = rt.strict ? polite[sel % 3] : 1u + sel % 11u;
  int32_t id = s != NULL ? s->id : (int32_t)(sel % 8);
  if (speedy_submit_rst(ep->session, id, status) == 0) rt.resets_submitted++;
}

static void op_settings(fuzz_input *in) {
  static const uint32_t windows[] = {1, 1000, 65535, 65536, 1u << 20, 0x7fffffff};
  fuzz_endpoint *ep = pick_side(in);
  speedy_setting settings[4];
  size_t n = fuzz_u8(in) % 5;
  for (size_t i = 0; i < n; i++) {
    uint8_t sel = fuzz_u8(in);
    settings[i].flags = 0;
    switch (sel % 4) {
    case 0:
      settings[i].id = SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS;
      settings[i].value = fuzz_u8(in) % 16;
      break;
    case 1:
      settings[i].id = SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE;
      settings[i].value = windows[(sel / 4) % 6];
      break;
    default:
      settings[i].id = 1 + sel % 8;
      if (settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE) settings[i].id = 3;
      settings[i].value = fuzz_u32(in);
      break;
    }
  }
  (void)speedy_submit_settings(ep->session, 0, settings, n);
}

/* HTTP/2 settings (neutral ids), values legal and edge and sometimes out of range, which
 * speedy_submit_settings must refuse. */
static void op_h2_settings(fuzz_input *in) {
  static const uint32_t windows[] = {0, 1, 1000, 65535, 65536, 1u << 20, 0x7fffffff, 0x80000000u};
  static const uint32_t tables[] = {0, 64, 4096, 65536};
  static const uint32_t frames[] = {16384, 16385, 65536, 16777215, 16383, 16777216};
  fuzz_endpoint *ep = pick_side(in);
  speedy_setting settings[8];
  size_t n = fuzz_u8(in) % 5;
  for (size_t i = 0; i < n; i++) {
    uint8_t sel = fuzz_u8(in);
    settings[i].flags = 0;
    switch (sel % 8) {
    case 0:
      settings[i].id = SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS;
      settings[i].value = fuzz_u8(in) % 16;
      break;
    case 1:
      settings[i].id = SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE;
      settings[i].value = windows[(sel / 8) % 8];
      break;
    case 2:
      settings[i].id = SPEEDY_SETTINGS_HEADER_TABLE_SIZE;
      settings[i].value = tables[(sel / 8) % 4];
      break;
    case 3:
      settings[i].id = SPEEDY_SETTINGS_MAX_FRAME_SIZE;
      settings[i].value = frames[(sel / 8) % 6];
      break;
    case 4:
      settings[i].id = SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE;
      settings[i].value = sel < 128 ? 65536 : fuzz_u16(in);
      break;
    case 5:
      settings[i].id = SPEEDY_SETTINGS_ENABLE_PUSH;
      settings[i].value = (sel / 8) % 3;
      break;
    case 6:
      settings[i].id = SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES;
      settings[i].value = (sel / 8) % 3;
      break;
    default:
      settings[i].id = fuzz_u16(in);
      settings[i].value = fuzz_u32(in);
      break;
    }
  }
  if (speedy_submit_settings(ep->session, 0, settings, n) != 0) return;
  for (size_t i = 0; i < n; i++)
    if (settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE && settings[i].value < 65535)
      rt.small_window[ep->role == SPEEDY_ROLE_CLIENT ? 0 : 1] = 1;
}

static void op_priority_update(fuzz_input *in) {
  rt_stream *s = pick_stream(in);
  uint8_t sel = fuzz_u8(in);
  int32_t id = s != NULL ? s->id : (int32_t)(sel % 8);
  (void)speedy_submit_priority_update(rt.client.session, id, (uint8_t)(sel % 9), (sel >> 4) & 1);
}

static void op_window_update(fuzz_input *in) {
  fuzz_endpoint *ep = pick_side(in);
  rt_stream *s = pick_stream(in);
  uint8_t sel = fuzz_u8(in);
  int32_t id = sel < 64 || s == NULL ? 0 : s->id;
  uint32_t delta = sel & 1 ? fuzz_u16(in) : fuzz_u32(in);
  (void)speedy_submit_window_update(ep->session, id, delta);
}

static void op_goaway(fuzz_input *in) {
  fuzz_endpoint *ep = pick_side(in);
  if (rt.h2) {
    /* Any reason, even one out of range (refused), and debug data of any length: at most
     * 128 octets are sent. */
    uint32_t reason = fuzz_u8(in) % (SPEEDY_RST_HTTP_1_1_REQUIRED + 2u);
    const uint8_t *debug;
    size_t debug_len = fuzz_take(in, fuzz_u8(in), &debug);
    int rv = speedy_submit_goaway(ep->session, reason, debug_len > 0 ? debug : NULL, debug_len);
    if (rv == 0) rt.goaway_submitted[ep->role == SPEEDY_ROLE_CLIENT ? 0 : 1] = 1;
    return;
  }
  uint32_t reason = rt.strict ? SPEEDY_RST_NONE : fuzz_u8(in) % (SPEEDY_RST_HTTP_1_1_REQUIRED + 1u);
  uint8_t debug[8] = "fuzzing";
  if (speedy_submit_goaway(ep->session, reason, debug, fuzz_u8(in) % sizeof(debug)) == 0)
    rt.goaway_submitted[ep->role == SPEEDY_ROLE_CLIENT ? 0 : 1] = 1;
}

static void op_consume(fuzz_input *in) {
  fuzz_endpoint *ep = pick_side(in);
  rt_stream *s = pick_stream(in);
  if (s != NULL) (void)speedy_session_consume(ep->session, s->id, fuzz_u16(in));
}

/* HTTP/2, strict: the server answers every request still unanswered, every body source
 * stops deferring, and then every stream must end — both sessions pumped dry hold no stream.
 * Streams still waiting for a concurrency slot (the peer allowed 0) may wait for ever, rightly. */
static void finish_streams(void) {
  /* Every body's bytes are ready now: one resume must take each to its end. */
  for (size_t i = 0; i < rt.n_bodies; i++) rt.bodies[i].defer_every = 0;
  /* Streams waiting for a concurrency slot reach the server only as others end: rounds of
   * answering and pumping until a round finds nothing left to do. */
  for (size_t round = 0; round < rt.n_streams + 8; round++) {
    int acted = 0;
    for (size_t i = 0; i < rt.n_streams; i++) {
      rt_stream *s = &rt.streams[i];
      /* A side that set a small INITIAL_WINDOW_SIZE opens each window itself: automatic
       * flow control only gives back what was received — nothing with 0, a byte per round
       * trip with 1, more rounds than the pump runs for a large body. */
      for (int side = 0; side < 2; side++) {
        speedy_session *session = side == 0 ? rt.client.session : rt.server.session;
        if (rt.small_window[side] && !(s->windows_opened & (1 << side)) &&
            speedy_submit_window_update(session, s->id, 1 << 20) == 0) {
          s->windows_opened |= 1 << side;
          acted = 1;
        }
      }
      if ((s->id & 1) == 0 || s->responded) continue;
      speedy_header headers[2];
      size_t n = response_head(headers);
      int rv = speedy_submit_response(rt.server.session, s->id, headers, n, NULL, NULL);
      if (rv == 0) {
        s->responded = 1; /* response_len stays 0: no body */
        acted = 1;
      } else if (rv == SPEEDY_ERR_INVALID_HEADER) { /* over the client's header list size */
        (void)speedy_submit_rst(rt.server.session, s->id, SPEEDY_RST_REFUSED_STREAM);
        s->responded = 1;
        acted = 1;
      }
    }
    resume_all();
    pump(65536, 10000);
    if (!acted && round >= 8) break;
  }
  if (rt.untracked || speedy_session_pending_streams(rt.client.session) > 0 ||
      speedy_session_pending_streams(rt.server.session) > 0)
    return;
  uint32_t client_open = speedy_session_open_streams(rt.client.session);
  uint32_t server_open = speedy_session_open_streams(rt.server.session);
  if (client_open > 0 || server_open > 0) {
    for (size_t i = 0; i < rt.n_streams; i++) {
      int32_t id = rt.streams[i].id;
      int64_t client_window = speedy_session_send_window(rt.client.session, id);
      int64_t server_window = speedy_session_send_window(rt.server.session, id);
      if (client_window >= 0 || server_window >= 0)
        fprintf(stderr, "open: stream %d, send windows: client %lld, server %lld\n", (int)id,
                (long long)client_window, (long long)server_window);
    }
    fuzz_fail("streams that never end: %u open on the client, %u on the server\nclient "
              "events:\n%s\nserver events:\n%s",
              client_open, server_open, rt.client.log.text, rt.server.log.text);
  }
}

static void run_ops(fuzz_input *in) {
  static const size_t chunks[] = {1, 7, 64, 1000, 16384, 65536, 3, 100000};
  int since_pump = 0;
  while (!fuzz_input_done(in)) {
    uint8_t op = fuzz_u8(in);
    switch (op % (rt.h2 ? 15 : 14)) {
    case 0:
    case 1:
      op_request(in);
      break;
    case 2:
    case 3:
      op_response(in);
      break;
    case 4:
      op_push(in);
      break;
    case 5:
      op_headers(in);
      break;
    case 6:
      op_rst(in);
      break;
    case 7:
      (void)speedy_submit_ping(pick_side(in)->session, NULL);
      break;
    case 8:
      if (rt.h2)
        op_h2_settings(in);
      else
        op_settings(in);
      break;
    case 9:
      op_window_update(in);
      break;
    case 10:
      op_goaway(in);
      break;
    case 11:
      op_consume(in);
      break;
    case 12: {
      fuzz_endpoint *ep = pick_side(in);
      rt_stream *s = pick_stream(in);
      if (s != NULL) (void)speedy_session_resume_data(ep->session, s->id);
      rt.now += fuzz_u16(in);
      speedy_session_set_now(rt.client.session, rt.now);
      speedy_session_set_now(rt.server.session, rt.now);
      break;
    }
    case 14: /* HTTP/2 only */
      op_priority_update(in);
      break;
    default:
      pump(chunks[(op >> 4) % 8], 1 + fuzz_u8(in) % 64);
      since_pump = 0;
      break;
    }
    /* Bound what piles up unsent, so a flood cap is never reached by a correct peer. */
    if (++since_pump >= rt.ops_between_pumps) {
      pump(65536, 1000);
      since_pump = 0;
    }
  }
  for (int i = 0; i < 8; i++) {
    resume_all();
    pump(65536, 10000);
  }
  if (rt.h2 && rt.strict) finish_streams();
}

/* Opens both endpoints with options (the client's may differ), runs the operations,
 * closes and checks for leaks. */
static void run_sessions(fuzz_input *in, speedy_options *client_options,
                         speedy_options *server_options) {
  int rc = fuzz_endpoint_open(&rt.client, rt.protocol, SPEEDY_ROLE_CLIENT, client_options);
  int rs = fuzz_endpoint_open(&rt.server, rt.protocol, SPEEDY_ROLE_SERVER, server_options);
  if (rc == 0 && rs == 0) {
    run_ops(in);
  } else if (rt.strict || (rc != 0 && rc != SPEEDY_ERR_NOMEM) ||
             (rs != 0 && rs != SPEEDY_ERR_NOMEM)) {
    fuzz_fail("speedy_session_new: %s / %s", speedy_strerror(rc), speedy_strerror(rs));
  }
  fuzz_endpoint_close(&rt.client);
  fuzz_endpoint_close(&rt.server);
  fuzz_alloc_check_empty("round trip");
}

void fuzz_roundtrip_run_h2(fuzz_input *in, int strict) {
  memset(&rt, 0, sizeof(rt));
  rt.strict = strict;
  rt.h2 = 1;
  rt.protocol = SPEEDY_PROTOCOL_H2;
  uint8_t cfg = fuzz_u8(in);
  int small = (cfg >> 2) & 1;
  rt.ops_between_pumps = small ? RT_OPS_BETWEEN_PUMPS_SMALL : RT_OPS_BETWEEN_PUMPS;
  rt.client.manual_flow = (cfg >> 3) & 1;
  rt.server.manual_flow = (cfg >> 4) & 1;
  rt.client.check_pattern = rt.server.check_pattern = 1;
  rt.client.close_hook = rt.server.close_hook = close_hook;
  speedy_options *server_options = fuzz_options_new(small);
  if ((cfg >> 6) & 1) speedy_options_set_session_window(server_options, 1u << 20);
  if ((cfg >> 7) & 1) speedy_options_set_header_table_size(server_options, 64);
  speedy_options *client_options = fuzz_options_new(small);
  if ((cfg >> 6) & 1) speedy_options_set_session_window(client_options, 1u << 20);
  if ((cfg >> 5) & 1) speedy_options_set_push(client_options, 0);
  run_sessions(in, client_options, server_options);
  speedy_options_del(client_options);
  speedy_options_del(server_options);
}

void fuzz_roundtrip_run(fuzz_input *in, int strict) {
  memset(&rt, 0, sizeof(rt));
  rt.strict = strict;
  uint8_t cfg = fuzz_u8(in);
  rt.protocol = fuzz_protocol_of((uint8_t)(cfg & 3));
  int small = (cfg >> 2) & 1;
  rt.ops_between_pumps = small ? RT_OPS_BETWEEN_PUMPS_SMALL : RT_OPS_BETWEEN_PUMPS;
  rt.client.manual_flow = (cfg >> 3) & 1;
  rt.server.manual_flow = (cfg >> 4) & 1;
  rt.client.check_pattern = rt.server.check_pattern = 1;
  rt.client.close_hook = rt.server.close_hook = close_hook;

  speedy_options *options = fuzz_options_new(small);
  if ((cfg >> 5) & 1) (void)speedy_options_set_deflate_params(options, 9, 15, 9);
  if ((cfg >> 6) & 1) speedy_options_set_session_window(options, 1u << 20);
  run_sessions(in, options, options);
  speedy_options_del(options);
}
