/* h2raw.c — HTTP/2 frames built byte by byte, the rig around a session under test, and
 * its output split into frames (see h2raw.h). Frame layouts follow RFC 9113 section 6.
 */
#include "h2raw.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ---- frames ---------------------------------------------------------------------------- */

void h2_frame_header(raw_buf *b, uint32_t length, uint8_t type, uint8_t flags, uint32_t stream_id) {
  raw_put_u24(b, length);
  raw_put_u8(b, type);
  raw_put_u8(b, flags);
  raw_put_u32(b, stream_id);
}

void h2_settings(raw_buf *b, const uint16_t *ids, const uint32_t *values, size_t n) {
  h2_frame_header(b, (uint32_t)(6 * n), 0x4, 0, 0);
  for (size_t i = 0; i < n; i++) {
    raw_put_u16(b, ids[i]);
    raw_put_u32(b, values[i]);
  }
}

void h2_settings_ack(raw_buf *b) { h2_frame_header(b, 0, 0x4, 0x1, 0); }

void h2_ping(raw_buf *b, int ack, const char opaque[8]) {
  h2_frame_header(b, 8, 0x6, ack ? 0x1 : 0, 0);
  raw_put(b, opaque, 8);
}

void h2_window_update(raw_buf *b, uint32_t stream_id, uint32_t increment) {
  h2_frame_header(b, 4, 0x8, 0, stream_id);
  raw_put_u32(b, increment);
}

void h2_rst_stream(raw_buf *b, uint32_t stream_id, uint32_t code) {
  h2_frame_header(b, 4, 0x3, 0, stream_id);
  raw_put_u32(b, code);
}

void h2_goaway(raw_buf *b, uint32_t last_stream_id, uint32_t code, const char *debug) {
  size_t debug_len = debug != NULL ? strlen(debug) : 0;
  h2_frame_header(b, (uint32_t)(8 + debug_len), 0x7, 0, 0);
  raw_put_u32(b, last_stream_id);
  raw_put_u32(b, code);
  raw_put(b, debug, debug_len);
}

void h2_data(raw_buf *b, uint32_t stream_id, uint8_t flags, const void *payload, size_t len,
             int pad) {
  size_t total = len + (pad > 0 ? 1 + (size_t)pad : 0);
  h2_frame_header(b, (uint32_t)total, 0x0, (uint8_t)(flags | (pad > 0 ? 0x8 : 0)), stream_id);
  if (pad > 0) raw_put_u8(b, (uint8_t)pad);
  if (payload != NULL)
    raw_put(b, payload, len);
  else
    for (size_t i = 0; i < len; i++) raw_put_u8(b, (uint8_t)(i % 251));
  if (pad > 0) raw_put_fill(b, 0, (size_t)pad);
}

void h2_priority(raw_buf *b, uint32_t stream_id, uint32_t depends_on, uint8_t weight) {
  h2_frame_header(b, 5, 0x2, 0, stream_id);
  raw_put_u32(b, depends_on);
  raw_put_u8(b, weight);
}

void h2_priority_update(raw_buf *b, uint32_t prioritized, const char *value) {
  size_t len = strlen(value);
  h2_frame_header(b, (uint32_t)(4 + len), 0x10, 0, 0);
  raw_put_u32(b, prioritized);
  raw_put(b, value, len);
}

/* ---- the rig --------------------------------------------------------------------------- */

static void *plain_malloc(size_t size, void *user) {
  (void)user;
  return malloc(size);
}
static void *plain_realloc(void *ptr, size_t size, void *user) {
  (void)user;
  return realloc(ptr, size);
}
static void plain_free(void *ptr, void *user) {
  (void)user;
  free(ptr);
}

void h2_rig_open(h2_rig *rig, speedy_role role, speedy_options *options, int raw) {
  memset(rig, 0, sizeof(*rig));
  rig->role = role;
  rig->mem = (speedy_mem){plain_malloc, plain_realloc, plain_free, NULL, 0};
  cr_assert_eq(speedy_hpack_encoder_new(&rig->mem, &rig->encoder), 0);
  cr_assert_eq(speedy_hpack_decoder_new(&rig->mem, &rig->decoder), 0);
  rig->peer = test_peer_new(SPEEDY_PROTOCOL_H2, role, options);
  rig->peer->log_data = 1;
  if (raw) return;
  /* Our preface (as a client) or our SETTINGS (as a server), then theirs acknowledged. */
  if (role == SPEEDY_ROLE_SERVER) raw_put(&rig->in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig->in, NULL, NULL, 0);
  int64_t rv = h2_rig_feed(rig, 0);
  cr_assert_geq(rv, 0, "handshake: recv %lld (%s)", (long long)rv, speedy_strerror((int)rv));
  h2_output out;
  h2_output_take(&out, rig);
  cr_assert_geq(out.n, 2, "handshake: the session's SETTINGS and its ACK of ours");
  cr_assert_eq(out.frames[0].hd.type, 0x4, "handshake: the first frame is SETTINGS (3.4)");
  cr_assert_eq(out.frames[0].hd.flags & 0x1, 0);
  cr_assert_not_null(h2_output_find(&out, 0x4, 0));
  h2_output_free(&out);
  h2_settings_ack(&rig->in);
  rv = h2_rig_feed(rig, 0);
  cr_assert_geq(rv, 0, "handshake: SETTINGS ACK: %lld", (long long)rv);
  h2_output_take(&out, rig);
  h2_output_free(&out);
}

void h2_rig_close(h2_rig *rig) {
  test_peer_del(rig->peer);
  speedy_hpack_encoder_del(rig->encoder);
  speedy_hpack_decoder_del(rig->decoder);
  raw_buf_free(&rig->in);
  cr_assert_eq(test_alloc_live(), 0, "the session leaked %zu blocks", test_alloc_live());
}

int64_t h2_rig_feed(h2_rig *rig, size_t chunk) {
  int64_t rv = test_feed(rig->peer, rig->in.data, rig->in.len, chunk == 0 ? rig->in.len : chunk);
  if (rig->in.len == 0) rv = 0;
  rig->in.len = 0;
  return rv;
}

void h2_rig_block(h2_rig *rig, const h2_field *fields, size_t n, raw_buf *block) {
  speedy_hpack_field list[64];
  cr_assert(n <= 64);
  for (size_t i = 0; i < n; i++)
    list[i] = (speedy_hpack_field){(const uint8_t *)fields[i].name, strlen(fields[i].name),
                                   (const uint8_t *)fields[i].value, strlen(fields[i].value),
                                   SPEEDY_HPACK_NO_INDEX};
  size_t bound = speedy_hpack_encode_bound(rig->encoder, list, n);
  uint8_t *out = malloc(bound + 1);
  cr_assert_not_null(out);
  int64_t len = speedy_hpack_encode(rig->encoder, list, n, out, bound);
  cr_assert_geq(len, 0);
  raw_put(block, out, (size_t)len);
  free(out);
}

void h2_rig_headers(h2_rig *rig, uint32_t stream_id, uint8_t flags, const h2_field *fields,
                    size_t n) {
  raw_buf block = {0};
  h2_rig_block(rig, fields, n, &block);
  h2_frame_header(&rig->in, (uint32_t)block.len, 0x1, (uint8_t)(flags | 0x4), stream_id);
  raw_put(&rig->in, block.data, block.len);
  raw_buf_free(&block);
}

void h2_rig_get(h2_rig *rig, uint32_t stream_id, const char *path, int body) {
  h2_field fields[] = {{":method", body ? "POST" : "GET"},
                       {":scheme", "https"},
                       {":authority", "example.test"},
                       {":path", path}};
  h2_rig_headers(rig, stream_id, body ? 0 : 0x1, fields, 4);
}

void h2_rig_response(h2_rig *rig, uint32_t stream_id, const char *status, long length,
                     int end_stream) {
  char len_text[32];
  snprintf(len_text, sizeof(len_text), "%ld", length);
  h2_field fields[] = {{":status", status}, {"content-length", len_text}};
  h2_rig_headers(rig, stream_id, end_stream ? 0x1 : 0, fields, length >= 0 ? 2 : 1);
}

int32_t h2_rig_client_get(h2_rig *rig, const char *path) {
  speedy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, path, strlen(path)}};
  int32_t id = speedy_submit_request(rig->peer->session, 3, headers, 4, NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  h2_output out;
  h2_output_take(&out, rig);
  cr_assert_not_null(h2_output_find(&out, 0x1, id), "the request's HEADERS went out");
  h2_output_free(&out);
  return id;
}

/* ---- output ---------------------------------------------------------------------------- */

void h2_output_take(h2_output *out, h2_rig *rig) {
  memset(out, 0, sizeof(*out));
  out->bytes = test_drain(rig->peer, &out->len);
  size_t pos = 0;
  if (rig->role == SPEEDY_ROLE_CLIENT && !rig->preface_skipped &&
      out->len >= SPEEDY_H2_PREFACE_LEN) {
    cr_assert(memcmp(out->bytes, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN) == 0,
              "a client starts with the connection preface (3.4)");
    pos = SPEEDY_H2_PREFACE_LEN;
    rig->preface_skipped = 1;
  }
  size_t cap = 0;
  while (pos < out->len) {
    cr_assert(out->len - pos >= SPEEDY_H2_FRAME_HEADER_LEN, "a partial frame header");
    speedy_h2_frame_hd hd;
    speedy_h2_frame_hd_decode(out->bytes + pos, &hd);
    cr_assert(out->len - pos - SPEEDY_H2_FRAME_HEADER_LEN >= hd.length, "a partial frame");
    if (out->n == cap) {
      cap = cap ? cap * 2 : 16;
      out->frames = realloc(out->frames, cap * sizeof(*out->frames));
      cr_assert_not_null(out->frames);
    }
    out->frames[out->n++] = (h2_out_frame){hd, out->bytes + pos + SPEEDY_H2_FRAME_HEADER_LEN};
    pos += SPEEDY_H2_FRAME_HEADER_LEN + hd.length;
  }
}

void h2_output_free(h2_output *out) {
  free(out->bytes);
  free(out->frames);
  memset(out, 0, sizeof(*out));
}

size_t h2_output_count(const h2_output *out, uint8_t type) {
  size_t n = 0;
  for (size_t i = 0; i < out->n; i++) n += out->frames[i].hd.type == type;
  return n;
}

const h2_out_frame *h2_output_find(const h2_output *out, uint8_t type, int32_t stream_id) {
  for (size_t i = 0; i < out->n; i++)
    if (out->frames[i].hd.type == type &&
        (stream_id < 0 || out->frames[i].hd.stream_id == stream_id))
      return &out->frames[i];
  return NULL;
}

typedef struct text {
  char *data;
  size_t len, cap;
} text;

static int append_field(void *user, const speedy_hpack_field *f) {
  text *t = user;
  size_t need = f->name_len + f->value_len + 3;
  if (t->len + need + 1 > t->cap) {
    t->cap = (t->len + need + 1) * 2;
    t->data = realloc(t->data, t->cap);
    cr_assert_not_null(t->data);
  }
  memcpy(t->data + t->len, f->name, f->name_len);
  t->len += f->name_len;
  memcpy(t->data + t->len, ": ", 2);
  t->len += 2;
  memcpy(t->data + t->len, f->value, f->value_len);
  t->len += f->value_len;
  t->data[t->len++] = '\n';
  t->data[t->len] = '\0';
  return 0;
}

char *h2_output_fields(h2_rig *rig, const h2_output *out, size_t i) {
  text t = {calloc(1, 1), 0, 1};
  for (; i < out->n; i++) {
    const h2_out_frame *f = &out->frames[i];
    const uint8_t *p = f->payload;
    size_t len = f->hd.length;
    if (f->hd.type == 0x1 || f->hd.type == 0x5) {
      size_t pad = 0;
      if (f->hd.flags & 0x8) pad = *p++, len--;
      if (f->hd.type == 0x1 && (f->hd.flags & 0x20)) p += 5, len -= 5;
      if (f->hd.type == 0x5) p += 4, len -= 4;
      len -= pad;
    }
    int end = (f->hd.flags & 0x4) != 0;
    cr_assert_eq(speedy_hpack_decode(rig->decoder, p, len, end, append_field, &t), 0);
    if (end) break;
  }
  return t.data;
}

/* ---- expectations ---------------------------------------------------------------------- */

void h2_expect_goaway(h2_rig *rig, int64_t rv, uint32_t code, const char *what) {
  cr_assert_lt(rv, 0, "%s: recv returned %lld, expected a connection error", what, (long long)rv);
  cr_assert(speedy_error_is_fatal((int)rv), "%s: %s is not fatal", what, speedy_strerror((int)rv));
  h2_output out;
  h2_output_take(&out, rig);
  const h2_out_frame *g = h2_output_find(&out, 0x7, 0);
  cr_assert_not_null(g, "%s: no GOAWAY (expected %s)", what, speedy_h2_error_name(code));
  uint32_t got = (uint32_t)g->payload[4] << 24 | (uint32_t)g->payload[5] << 16 |
                 (uint32_t)g->payload[6] << 8 | g->payload[7];
  cr_assert_eq(got, code, "%s: GOAWAY %s, expected %s", what, speedy_h2_error_name(got),
               speedy_h2_error_name(code));
  cr_assert_eq(h2_output_count(&out, 0x7), 1, "%s: one GOAWAY", what);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_want_read(rig->peer->session), 0, "%s: still reading", what);
}

void h2_expect_rst(h2_rig *rig, int64_t rv, int32_t stream_id, uint32_t code, const char *what) {
  cr_assert_geq(rv, 0, "%s: recv returned %lld (%s), expected a stream error", what, (long long)rv,
                speedy_strerror((int)rv));
  h2_output out;
  h2_output_take(&out, rig);
  cr_assert_null(h2_output_find(&out, 0x7, 0), "%s: a GOAWAY went out", what);
  const h2_out_frame *r = h2_output_find(&out, 0x3, stream_id);
  cr_assert_not_null(r, "%s: no RST_STREAM on stream %d (expected %s)", what, (int)stream_id,
                     speedy_h2_error_name(code));
  uint32_t got = (uint32_t)r->payload[0] << 24 | (uint32_t)r->payload[1] << 16 |
                 (uint32_t)r->payload[2] << 8 | r->payload[3];
  cr_assert_eq(got, code, "%s: RST_STREAM %s, expected %s", what, speedy_h2_error_name(got),
               speedy_h2_error_name(code));
  h2_output_free(&out);
}

void h2_expect_alive(h2_rig *rig, const char *what) {
  h2_ping(&rig->in, 0, "alive?!!");
  int64_t rv = h2_rig_feed(rig, 0);
  cr_assert_geq(rv, 0, "%s: a PING after it failed: %lld", what, (long long)rv);
  h2_output out;
  h2_output_take(&out, rig);
  const h2_out_frame *ack = h2_output_find(&out, 0x6, 0);
  cr_assert(ack != NULL && (ack->hd.flags & 0x1) && memcmp(ack->payload, "alive?!!", 8) == 0,
            "%s: the connection does not answer PING", what);
  h2_output_free(&out);
}

void h2_expect_quiet(h2_rig *rig, int64_t rv, const char *what) {
  cr_assert_geq(rv, 0, "%s: recv returned %lld (%s)", what, (long long)rv,
                speedy_strerror((int)rv));
  h2_output out;
  h2_output_take(&out, rig);
  cr_assert_null(h2_output_find(&out, 0x7, 0), "%s: a GOAWAY went out", what);
  cr_assert_null(h2_output_find(&out, 0x3, -1), "%s: a RST_STREAM went out", what);
  h2_output_free(&out);
}
