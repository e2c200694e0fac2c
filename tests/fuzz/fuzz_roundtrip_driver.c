/* fuzz_roundtrip_driver.c — client and server sessions driven by fuzz input (see
 * fuzz_roundtrip_driver.h). */
#include "fuzz_roundtrip_driver.h"

#include <stdio.h>
#include <string.h>

#define RT_MAX_STREAMS 128
#define RT_MAX_BODIES 256
#define RT_OPS_BETWEEN_PUMPS 32

/* A stream either side opened, and what its sender promised to write. */
typedef struct rt_stream {
  int32_t id;
  int has_request_body, has_response_body;
  uint64_t request_len, response_len; /* bytes the client / the server will send */
  int responded;
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
  int64_t now;
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
  if (rt.n_streams == RT_MAX_STREAMS) return NULL;
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
  return b;
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
      SPEEDY_RST_UNSUPPORTED_VERSION,   SPEEDY_RST_INVALID_CREDENTIALS};
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

/* One send of at most chunk bytes from `from`, fed to `to`. Returns the bytes moved. */
static int64_t step(fuzz_endpoint *from, fuzz_endpoint *to, size_t chunk) {
  static uint8_t buf[65536];
  if (chunk > sizeof(buf)) chunk = sizeof(buf);
  int64_t n = speedy_session_send(from->session, buf, chunk);
  check_error(from, n, "send");
  if (n <= 0) return 0;
  int64_t got = fuzz_endpoint_recv(to, buf, (size_t)n);
  check_error(to, got, "recv");
  if (got >= 0 && got != n) fuzz_fail("recv consumed %lld of %lld", (long long)got, (long long)n);
  return n;
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

static void op_request(fuzz_input *in) {
  speedy_header headers[9];
  memcpy(headers, fuzz_request_headers, sizeof(fuzz_request_headers));
  size_t n = 5 + extra_headers(in, headers + 5, 4);
  uint8_t urgency = fuzz_u8(in) % 8;
  fuzz_body *body = pick_body(in);
  int32_t id = speedy_submit_request(rt.client.session, urgency, headers, n,
                                     body ? fuzz_body_read : NULL, body, NULL);
  check_error(&rt.client,
              id == SPEEDY_ERR_INVALID_HEADER || id == SPEEDY_ERR_SESSION_CLOSING ||
                      id == SPEEDY_ERR_TOO_MANY_STREAMS
                  ? 0
                  : id,
              "submit_request");
  if (id <= 0) return;
  rt_stream *s = add_stream(id);
  if (s != NULL && body != NULL) {
    s->has_request_body = 1;
    s->request_len = body->len;
  }
}

static void op_response(fuzz_input *in) {
  static const char *const statuses[] = {"200", "204", "404", "500 Internal Server Error"};
  rt_stream *s = pick_stream(in);
  if (s == NULL || (s->id & 1) == 0) return;
  speedy_header headers[6];
  memcpy(headers, fuzz_response_headers, sizeof(fuzz_response_headers));
  const char *status = statuses[fuzz_u8(in) % 4];
  headers[0].value = status;
  headers[0].value_len = strlen(status);
  size_t n = 2 + extra_headers(in, headers + 2, 4);
  fuzz_body *body = pick_body(in);
  int rv = speedy_submit_response(rt.server.session, s->id, headers, n,
                                  body ? fuzz_body_read : NULL, body);
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
  speedy_header request[3] = {
      {":scheme", 7, "https", 5}, {":host", 5, "fuzz.test", 9}, {":path", 5, path, strlen(path)}};
  speedy_header response[6];
  memcpy(response, fuzz_response_headers, sizeof(fuzz_response_headers));
  size_t n = 2 + extra_headers(in, response + 2, 4);
  fuzz_body *body = pick_body(in);
  int32_t id = speedy_submit_push(rt.server.session, assoc->id, fuzz_u8(in) % 8, request, 3,
                                  response, n, body ? fuzz_body_read : NULL, body, NULL);
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

static void run_ops(fuzz_input *in) {
  static const size_t chunks[] = {1, 7, 64, 1000, 16384, 65536, 3, 100000};
  int since_pump = 0;
  while (!fuzz_input_done(in)) {
    uint8_t op = fuzz_u8(in);
    switch (op % 14) {
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
    default:
      pump(chunks[(op >> 4) % 8], 1 + fuzz_u8(in) % 64);
      since_pump = 0;
      break;
    }
    /* Bound what piles up unsent, so a flood cap is never reached by a correct peer. */
    if (++since_pump >= RT_OPS_BETWEEN_PUMPS) {
      pump(65536, 1000);
      since_pump = 0;
    }
  }
  for (int i = 0; i < 8; i++) {
    resume_all();
    pump(65536, 10000);
  }
}

void fuzz_roundtrip_run(fuzz_input *in, int strict) {
  memset(&rt, 0, sizeof(rt));
  rt.strict = strict;
  uint8_t cfg = fuzz_u8(in);
  rt.protocol = fuzz_protocol_of((uint8_t)(cfg & 3));
  int small = (cfg >> 2) & 1;
  rt.client.manual_flow = (cfg >> 3) & 1;
  rt.server.manual_flow = (cfg >> 4) & 1;
  rt.client.check_pattern = rt.server.check_pattern = 1;
  rt.client.close_hook = rt.server.close_hook = close_hook;

  speedy_options *options = fuzz_options_new(small);
  if ((cfg >> 5) & 1) (void)speedy_options_set_deflate_params(options, 9, 15, 9);
  if ((cfg >> 6) & 1) speedy_options_set_session_window(options, 1u << 20);
  int rc = fuzz_endpoint_open(&rt.client, rt.protocol, SPEEDY_ROLE_CLIENT, options);
  int rs = fuzz_endpoint_open(&rt.server, rt.protocol, SPEEDY_ROLE_SERVER, options);
  speedy_options_del(options);
  if (rc == 0 && rs == 0) {
    run_ops(in);
  } else if (strict || (rc != 0 && rc != SPEEDY_ERR_NOMEM) || (rs != 0 && rs != SPEEDY_ERR_NOMEM)) {
    fuzz_fail("speedy_session_new: %s / %s", speedy_strerror(rc), speedy_strerror(rs));
  }
  fuzz_endpoint_close(&rt.client);
  fuzz_endpoint_close(&rt.server);
  fuzz_alloc_check_empty("round trip");
}
