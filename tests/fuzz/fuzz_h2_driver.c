/* fuzz_h2_driver.c — one HTTP/2 session fed a peer's bytes, three times (see fuzz_h2_driver.h). */
#include "fuzz_h2_driver.h"

#include <stdio.h>
#include <string.h>

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

void fuzz_h2_config_decode(fuzz_h2_config *c, speedy_role role, uint8_t cfg, uint8_t req,
                           uint8_t split) {
  static const uint32_t body_sizes[] = {0, 1, 100, 16384, 70000, 0, 5, 200000};
  memset(c, 0, sizeof(*c));
  c->role = role;
  c->respond = cfg & 1;
  c->extras = (cfg >> 1) & 1;
  c->manual_flow = (cfg >> 2) & 1;
  c->small_limits = (cfg >> 3) & 1;
  c->body_len = body_sizes[(cfg >> 4) & 7];
  c->requests = 1 + (req & 7u);
  c->post_len = body_sizes[(req >> 3) & 7];
  c->piece = 1 + (size_t)split;
}

/* ---- the application ------------------------------------------------------------------- */

typedef struct h2_app {
  const fuzz_h2_config *c;
  speedy_session *session;
  fuzz_log log;
  fuzz_body bodies[FUZZ_ENDPOINT_BODIES];
  size_t n_bodies;
  int pushed;
} h2_app;

static fuzz_body *new_body(h2_app *app, int32_t id, uint64_t len) {
  if (app->n_bodies == FUZZ_ENDPOINT_BODIES) return NULL;
  fuzz_body *body = &app->bodies[app->n_bodies++];
  memset(body, 0, sizeof(*body));
  body->stream_id = id;
  body->len = len;
  return body;
}

/* The body source of answers with trailers: they go from its last read. */
static int64_t read_then_trailers(speedy_session *s, int32_t id, uint8_t *buf, size_t len,
                                  uint32_t *flags, void *source, void *user) {
  int64_t n = fuzz_body_read(s, id, buf, len, flags, source, user);
  if (n >= 0 && (*flags & SPEEDY_DATA_FLAG_EOF)) {
    static const speedy_header trailers[] = {{"x-checksum", 10, "0", 1}};
    *flags |= SPEEDY_DATA_FLAG_NO_END_STREAM;
    int rv = speedy_submit_headers(s, id, trailers, 1, 1);
    /* A peer whose SETTINGS_MAX_HEADER_LIST_SIZE is below these trailers' 43 octets
     * (RFC 9113 6.5.2: name + value + 32) cannot take them: refused, rightly. */
    int64_t peer_max = speedy_session_remote_setting(s, SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE);
    int too_large_for_peer = rv == SPEEDY_ERR_INVALID_HEADER && peer_max >= 0 && peer_max < 43;
    if (rv != 0 && rv != SPEEDY_ERR_NOMEM && !too_large_for_peer)
      fuzz_fail("trailers from the read callback: %s", speedy_strerror(rv));
  }
  return n;
}

static void answer(h2_app *app, int32_t id) {
  static const speedy_header hints[] = {{":status", 7, "103", 3},
                                        {"link", 4, "</s>; rel=preload", 17}};
  static const speedy_header head[] = {{":status", 7, "200", 3}, {"server", 6, "fuzz", 4}};
  static const speedy_header push_request[] = {
      {":scheme", 7, "https", 5}, {":authority", 10, "fuzz.test", 9}, {":path", 5, "/pushed", 7}};
  speedy_session *s = app->session;
  /* Refusals (closed streams, push off, memory) are all fine: the peer may be anything. */
  if (app->c->extras) {
    (void)speedy_submit_headers(s, id, hints, 2, 0);
    if (!app->pushed) {
      app->pushed = 1;
      fuzz_body *pushed = new_body(app, 0, 300);
      (void)speedy_submit_push(s, id, 5, push_request, 3, head, 2,
                               pushed != NULL ? fuzz_body_read : NULL, pushed, NULL);
    }
  }
  fuzz_body *body = app->c->body_len > 0 ? new_body(app, id, app->c->body_len) : NULL;
  speedy_data_read_fn read = app->c->extras ? read_then_trailers : fuzz_body_read;
  (void)speedy_submit_response(s, id, head, 2, body != NULL ? read : NULL, body);
}

static int on_begin(speedy_session *s, int32_t id, speedy_headers_kind kind, int32_t assoc,
                    void *u) {
  (void)s;
  h2_app *app = u;
  fuzz_log_add(&app->log, "begin %d kind=%d assoc=%d", (int)id, (int)kind, (int)assoc);
  return 0;
}

static int on_header(speedy_session *s, int32_t id, const speedy_header *h, void *u) {
  (void)s;
  h2_app *app = u;
  if (h->name == NULL || h->name_len == 0) fuzz_fail("on_header: empty name on stream %d", (int)id);
  /* What reaches the application obeys RFC 9113 8.2.1, always. */
  for (size_t i = 0; i < h->name_len; i++) {
    uint8_t ch = (uint8_t)h->name[i];
    if (ch <= 0x20 || (ch >= 'A' && ch <= 'Z') || ch >= 0x7f || (ch == ':' && i > 0))
      fuzz_fail("on_header: name octet %u delivered", ch);
  }
  for (size_t i = 0; i < h->value_len; i++)
    if (h->value[i] == 0 || h->value[i] == '\r' || h->value[i] == '\n')
      fuzz_fail("on_header: NUL, CR or LF in a value delivered");
  fuzz_log_add(&app->log, "header %d %.*s hash=%016llx", (int)id,
               (int)(h->name_len > 64 ? 64 : h->name_len), h->name,
               (unsigned long long)fuzz_hash(FUZZ_HASH_INIT, h->value, h->value_len));
  return 0;
}

static int on_headers_end(speedy_session *s, int32_t id, int end_stream, void *u) {
  (void)s;
  h2_app *app = u;
  fuzz_log_add(&app->log, "end %d fin=%d", (int)id, end_stream);
  if (app->c->respond && app->c->role == SPEEDY_ROLE_SERVER && (id & 1) == 1) answer(app, id);
  return 0;
}

static int on_data(speedy_session *s, int32_t id, const uint8_t *data, size_t len, void *u) {
  h2_app *app = u;
  if (len == 0) fuzz_fail("on_data_chunk with 0 bytes on stream %d", (int)id);
  /* Chunks of one stream merge into one line, as fuzz_common's endpoint logs them: the
   * split of a DATA frame is not part of the story. */
  fuzz_log *log = &app->log;
  if (log->data_stream != id) fuzz_log_flush(log);
  log->data_stream = id;
  log->data_bytes += len;
  log->data_hash = fuzz_hash(log->data_hash, data, len);
  if (app->c->manual_flow) (void)speedy_session_consume(s, id, len);
  return 0;
}

static int on_data_end(speedy_session *s, int32_t id, void *u) {
  (void)s;
  fuzz_log_add(&((h2_app *)u)->log, "data_end %d", (int)id);
  return 0;
}

static int on_close(speedy_session *s, int32_t id, uint32_t status, void *u) {
  (void)s;
  fuzz_log_add(&((h2_app *)u)->log, "close %d %s", (int)id, speedy_rst_status_name(status));
  return 0;
}

static int on_goaway(speedy_session *s, int32_t last, uint32_t status, void *u) {
  (void)s;
  fuzz_log_add(&((h2_app *)u)->log, "goaway %d %u", (int)last, status);
  return 0;
}

static int on_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *u) {
  (void)s, (void)flags;
  fuzz_log_add(&((h2_app *)u)->log, "setting %u=%u", id, value);
  return 0;
}

static int on_ping_ack(speedy_session *s, uint32_t id, int64_t rtt, void *u) {
  (void)s, (void)rtt;
  fuzz_log_add(&((h2_app *)u)->log, "ping_ack %u", id);
  return 0;
}

/* ---- one run --------------------------------------------------------------------------- */

static speedy_options *options_for(const fuzz_h2_config *c) {
  speedy_options *o = NULL;
  if (speedy_options_new(&o) != 0) fuzz_fail("speedy_options_new");
  fuzz_alloc_install(o);
  speedy_options_set_manual_flow_control(o, c->manual_flow);
  if (c->small_limits) { /* every cap within reach of short inputs */
    speedy_options_set_max_header_block(o, 1024);
    speedy_options_set_max_concurrent_streams(o, 4);
    speedy_options_set_stream_window(o, 4096);
    speedy_options_set_max_queued_control_frames(o, 16);
    speedy_options_set_data_frame_size(o, 16);
    speedy_options_set_max_continuations(o, 3);
    speedy_options_set_reset_budget(o, 8, 0);
    speedy_options_set_empty_frame_budget(o, 8, 0);
    speedy_options_set_header_table_size(o, 64);
  } else {
    speedy_options_set_session_window(o, 1 << 20);
  }
  return o;
}

static int drain(speedy_session *s) {
  uint8_t out[16384];
  for (int i = 0; i < 100000; i++) {
    int64_t n = speedy_session_send(s, out, sizeof(out));
    if (n <= 0) return (int)n;
  }
  fuzz_fail("send never ran dry");
}

static h2_app app; /* large: kept off the stack */

/* Feeds bytes in pieces of piece octets (0: one buffer) and copies the story told to
 * log_out. With drain_each, output is taken after every piece (the invariants' run);
 * otherwise only at the end, so that a run in pieces and one in one buffer see the
 * session's own queued frames go out at the same moments and may be compared. */
static void run_once(const fuzz_h2_config *c, const uint8_t *bytes, size_t len, size_t piece,
                     int drain_each, fuzz_log *log_out) {
  fuzz_alloc_reset();
  memset(&app, 0, sizeof(app));
  app.c = c;
  fuzz_log_init(&app.log);
  speedy_callbacks *cb = NULL;
  if (speedy_callbacks_new(&cb) != 0) fuzz_fail("speedy_callbacks_new");
  speedy_callbacks_set_on_begin_headers(cb, on_begin);
  speedy_callbacks_set_on_header(cb, on_header);
  speedy_callbacks_set_on_headers_end(cb, on_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, on_data);
  speedy_callbacks_set_on_data_end(cb, on_data_end);
  speedy_callbacks_set_on_stream_close(cb, on_close);
  speedy_callbacks_set_on_goaway(cb, on_goaway);
  speedy_callbacks_set_on_setting(cb, on_setting);
  speedy_callbacks_set_on_ping_ack(cb, on_ping_ack);
  speedy_options *o = options_for(c);
  int rv = speedy_session_new(&app.session, SPEEDY_PROTOCOL_H2, c->role, cb, o, &app);
  speedy_options_del(o);
  speedy_callbacks_del(cb);
  if (rv != 0) fuzz_fail("speedy_session_new: %s", speedy_strerror(rv));
  speedy_session *s = app.session;
  size_t baseline = fuzz_alloc_live_bytes() - speedy_session_memory(s);
  if (c->role == SPEEDY_ROLE_CLIENT) {
    static const speedy_header get[] = {{":method", 7, "GET", 3},
                                        {":scheme", 7, "https", 5},
                                        {":authority", 10, "fuzz.test", 9},
                                        {":path", 5, "/", 1}};
    static const speedy_header post[] = {{":method", 7, "POST", 4},
                                         {":scheme", 7, "https", 5},
                                         {":authority", 10, "fuzz.test", 9},
                                         {":path", 5, "/up", 3}};
    for (uint32_t i = 0; i < c->requests; i++) {
      int with_body = i == 0 && c->post_len > 0;
      fuzz_body *body = with_body ? new_body(&app, 1, c->post_len) : NULL;
      int32_t id = speedy_submit_request(s, (int)(i % 8), with_body ? post : get, 4,
                                         body != NULL ? fuzz_body_read : NULL, body, NULL);
      if (id < 0) fuzz_fail("speedy_submit_request %u: %s", i, speedy_strerror(id));
    }
  } else {
    if (speedy_session_recv(s, (const uint8_t *)H2_PREFACE, 24) != 24) fuzz_fail("the preface");
  }
  if (drain(s) != 0) fuzz_fail("send failed before any input");
  int64_t fatal = 0;
  for (size_t at = 0; at < len;) {
    size_t n = piece == 0 || len - at < piece ? len - at : piece;
    int64_t got = speedy_session_recv(s, bytes + at, n);
    if (fatal != 0 && got != fatal)
      fuzz_fail("recv after fatal %s returned %lld", speedy_strerror((int)fatal), (long long)got);
    if (got < 0) {
      if (!speedy_error_is_fatal((int)got))
        fuzz_fail("recv returned the non-fatal %s", speedy_strerror((int)got));
      if (speedy_session_want_read(s)) fuzz_fail("want_read after a fatal error");
      fatal = got;
    } else if ((size_t)got != n) {
      fuzz_fail("recv consumed %lld of %zu bytes", (long long)got, n);
    }
    at += n;
    rv = drain_each || at == len ? drain(s) : 0;
    if (rv != 0 && rv != fatal && rv != SPEEDY_ERR_NOMEM)
      fuzz_fail("send returned %s (recv: %lld)", speedy_strerror(rv), (long long)fatal);
    if (fuzz_alloc_live_bytes() - speedy_session_memory(s) != baseline)
      fuzz_fail("the session's memory figure is off by %lld bytes",
                (long long)(fuzz_alloc_live_bytes() - speedy_session_memory(s)) -
                    (long long)baseline);
  }
  fuzz_log_add(&app.log, "end of input: fatal=%lld", (long long)fatal);
  fuzz_log_flush(&app.log);
  speedy_session_del(s);
  fuzz_alloc_check_empty("after speedy_session_del");
  *log_out = app.log;
}

static fuzz_log whole, pieces;

void fuzz_h2_run(const fuzz_h2_config *c, const uint8_t *bytes, size_t len) {
  run_once(c, bytes, len, c->piece, 1, &pieces); /* the invariants, output drained often */
  run_once(c, bytes, len, 0, 0, &whole);
  run_once(c, bytes, len, c->piece, 0, &pieces);
  if (!fuzz_log_equal(&whole, &pieces))
    fuzz_fail("in one buffer and in pieces of %zu the session told different stories:\n%.2000s\n"
              "---\n%.2000s",
              c->piece, whole.text, pieces.text);
}
