/* rawframe.c — SPDY frames built byte by byte for hostile-input tests (see rawframe.h). */
#include "rawframe.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdblock.h"
#include "pair.h"
#include "testutil.h"

/* ---- bytes ----------------------------------------------------------------------------- */

void raw_buf_init(raw_buf *b) { memset(b, 0, sizeof(*b)); }

void raw_buf_free(raw_buf *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

static void raw_reserve(raw_buf *b, size_t n) {
  cr_assert(n <= SIZE_MAX / 2 - b->len, "raw_buf: %zu more bytes is absurd", n);
  if (b->cap - b->len >= n) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) cap *= 2;
  b->data = realloc(b->data, cap);
  cr_assert_not_null(b->data);
  b->cap = cap;
}

void raw_put(raw_buf *b, const void *bytes, size_t n) {
  raw_reserve(b, n);
  if (n > 0) memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

void raw_put_fill(raw_buf *b, uint8_t byte, size_t n) {
  raw_reserve(b, n);
  memset(b->data + b->len, byte, n);
  b->len += n;
}

void raw_put_u8(raw_buf *b, uint8_t v) { raw_put(b, &v, 1); }

void raw_put_u16(raw_buf *b, uint16_t v) {
  uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
  raw_put(b, p, 2);
}

void raw_put_u24(raw_buf *b, uint32_t v) {
  uint8_t p[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  raw_put(b, p, 3);
}

void raw_put_u32(raw_buf *b, uint32_t v) {
  uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  raw_put(b, p, 4);
}

/* ---- frame headers and fixed frames ---------------------------------------------------- */

void raw_control_header(raw_buf *b, unsigned version, unsigned type, uint8_t flags,
                        uint32_t length) {
  raw_put_u16(b, (uint16_t)(0x8000u | (version & 0x7fffu)));
  raw_put_u16(b, (uint16_t)type);
  raw_put_u8(b, flags);
  raw_put_u24(b, length & 0xffffffu);
}

void raw_data_header(raw_buf *b, uint32_t stream_id, uint8_t flags, uint32_t length) {
  raw_put_u32(b, stream_id & 0x7fffffffu);
  raw_put_u8(b, flags);
  raw_put_u24(b, length & 0xffffffu);
}

void raw_data(raw_buf *b, uint32_t stream_id, uint8_t flags, const void *payload, size_t len) {
  cr_assert(len <= 0xffffff);
  raw_data_header(b, stream_id, flags, (uint32_t)len);
  if (payload != NULL) {
    raw_put(b, payload, len);
    return;
  }
  raw_reserve(b, len);
  for (size_t i = 0; i < len; i++) b->data[b->len + i] = (uint8_t)(i % 251);
  b->len += len;
}

void raw_rst_stream(raw_buf *b, unsigned version, uint32_t stream_id, uint32_t status) {
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_RST_STREAM, 0, 8);
  raw_put_u32(b, stream_id);
  raw_put_u32(b, status);
}

void raw_ping(raw_buf *b, unsigned version, uint32_t id) {
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_PING, 0, 4);
  raw_put_u32(b, id);
}

void raw_goaway(raw_buf *b, unsigned version, uint32_t last_good, uint32_t status) {
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_GOAWAY, 0, version == 2 ? 4 : 8);
  raw_put_u32(b, last_good);
  if (version != 2) raw_put_u32(b, status);
}

void raw_window_update(raw_buf *b, unsigned version, uint32_t stream_id, uint32_t delta) {
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 0, 8);
  raw_put_u32(b, stream_id);
  raw_put_u32(b, delta);
}

void raw_noop(raw_buf *b) { raw_control_header(b, 2, SPEEDY_SPDY_FRAME_NOOP, 0, 0); }

void raw_credential(raw_buf *b, uint16_t slot, const uint8_t *proof, size_t proof_len,
                    const uint8_t *const *certs, const size_t *cert_lens, size_t n_certs) {
  size_t payload = 2 + 4 + proof_len;
  for (size_t i = 0; i < n_certs; i++) payload += 4 + cert_lens[i];
  raw_control_header(b, 3, SPEEDY_SPDY_FRAME_CREDENTIAL, 0, (uint32_t)payload);
  raw_put_u16(b, slot);
  raw_put_u32(b, (uint32_t)proof_len);
  raw_put(b, proof, proof_len);
  for (size_t i = 0; i < n_certs; i++) {
    raw_put_u32(b, (uint32_t)cert_lens[i]);
    raw_put(b, certs[i], cert_lens[i]);
  }
}

void raw_settings_entry(raw_buf *b, unsigned version, uint32_t id, uint8_t flags, uint32_t value) {
  if (version == 2) {
    uint8_t p[4] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), flags};
    raw_put(b, p, 4);
  } else {
    raw_put_u8(b, flags);
    raw_put_u24(b, id);
  }
  raw_put_u32(b, value);
}

void raw_settings(raw_buf *b, unsigned version, uint8_t frame_flags, const speedy_setting *entries,
                  size_t n) {
  cr_assert(n <= (0xffffff - 4) / 8);
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_SETTINGS, frame_flags, (uint32_t)(4 + 8 * n));
  raw_put_u32(b, (uint32_t)n);
  for (size_t i = 0; i < n; i++)
    raw_settings_entry(b, version, entries[i].id, entries[i].flags, entries[i].value);
}

/* ---- header blocks --------------------------------------------------------------------- */

void raw_nv_length(raw_buf *b, unsigned version, uint32_t v) {
  if (version == 2)
    raw_put_u16(b, (uint16_t)v);
  else
    raw_put_u32(b, v);
}

void raw_nv_string(raw_buf *b, unsigned version, const void *bytes, size_t len) {
  raw_nv_length(b, version, (uint32_t)len);
  raw_put(b, bytes, len);
}

static size_t value_length(const raw_header *h) {
  if (h->value_len > 0 || h->value == NULL) return h->value_len;
  return strlen(h->value);
}

void raw_nv_block(raw_buf *b, unsigned version, const raw_header *headers, size_t n) {
  raw_nv_length(b, version, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    raw_nv_string(b, version, headers[i].name, strlen(headers[i].name));
    raw_nv_string(b, version, headers[i].value, value_length(&headers[i]));
  }
}

size_t raw_request_headers(unsigned version, const char *path, raw_header out[6]) {
  int v2 = version == 2;
  size_t n = 0;
  out[n++] = (raw_header){v2 ? "method" : ":method", "GET", 0};
  out[n++] = (raw_header){v2 ? "url" : ":path", path, 0};
  out[n++] = (raw_header){v2 ? "version" : ":version", "HTTP/1.1", 0};
  out[n++] = (raw_header){v2 ? "host" : ":host", "example.test", 0};
  out[n++] = (raw_header){v2 ? "scheme" : ":scheme", "https", 0};
  out[n++] = (raw_header){"user-agent", "rawframe", 0};
  return n;
}

size_t raw_response_headers(unsigned version, raw_header out[2]) {
  int v2 = version == 2;
  out[0] = (raw_header){v2 ? "status" : ":status", "200 OK", 0};
  out[1] = (raw_header){v2 ? "version" : ":version", "HTTP/1.1", 0};
  return 2;
}

void raw_deflater_init(raw_deflater *d, raw_dictionary dictionary, int level) {
  memset(d, 0, sizeof(*d));
  int rv = deflateInit2(&d->zs, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY);
  cr_assert_eq(rv, Z_OK, "deflateInit2: %d", rv);
  if (dictionary != RAW_DICT_NONE) {
    const uint8_t *dict = dictionary == RAW_DICT_V2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
    size_t len = dictionary == RAW_DICT_V2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
    rv = deflateSetDictionary(&d->zs, dict, (uInt)len);
    cr_assert_eq(rv, Z_OK, "deflateSetDictionary: %d", rv);
  }
  d->ready = 1;
}

void raw_deflater_init_version(raw_deflater *d, unsigned version) {
  raw_deflater_init(d, version == 2 ? RAW_DICT_V2 : RAW_DICT_V3, 6);
}

void raw_deflater_free(raw_deflater *d) {
  if (d->ready) deflateEnd(&d->zs);
  d->ready = 0;
}

void raw_deflate(raw_deflater *d, const void *in, size_t len, int flush, raw_buf *out) {
  cr_assert(d->ready, "raw_deflate on a freed deflater");
  cr_assert(len <= UINT_MAX);
  static const uint8_t nothing[1] = {0};
  d->zs.next_in = (Bytef *)(len > 0 ? in : nothing);
  d->zs.avail_in = (uInt)len;
  for (;;) {
    raw_reserve(out, 4096);
    d->zs.next_out = out->data + out->len;
    d->zs.avail_out = (uInt)(out->cap - out->len);
    uInt before = d->zs.avail_out;
    int rv = deflate(&d->zs, flush);
    out->len += before - d->zs.avail_out;
    if (rv == Z_STREAM_END) break;
    cr_assert(rv == Z_OK || rv == Z_BUF_ERROR, "deflate: %d", rv);
    if (d->zs.avail_in == 0 && d->zs.avail_out > 0) break;
  }
}

void raw_deflate_nv(raw_deflater *d, unsigned version, const raw_header *headers, size_t n,
                    raw_buf *out) {
  raw_buf plain = {0};
  raw_nv_block(&plain, version, headers, n);
  raw_deflate(d, plain.data, plain.len, Z_SYNC_FLUSH, out);
  raw_buf_free(&plain);
}

/* ---- header-bearing frames ------------------------------------------------------------- */

void raw_syn_stream(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                    uint32_t associated_id, uint8_t priority, const void *block, size_t block_len) {
  cr_assert(block_len <= 0xffffff - 10);
  raw_control_header(b, version, SPEEDY_SPDY_FRAME_SYN_STREAM, flags, (uint32_t)(10 + block_len));
  raw_put_u32(b, stream_id);
  raw_put_u32(b, associated_id);
  raw_put_u8(b, (uint8_t)(version == 2 ? (priority & 3u) << 6 : (priority & 7u) << 5));
  raw_put_u8(b, 0);
  raw_put(b, block, block_len);
}

/* SYN_REPLY and HEADERS: stream id, v2's 16 unused bits, the block. */
static void stream_headers(raw_buf *b, unsigned version, unsigned type, uint8_t flags,
                           uint32_t stream_id, const void *block, size_t block_len) {
  size_t fixed = version == 2 ? 6 : 4;
  cr_assert(block_len <= 0xffffff - fixed);
  raw_control_header(b, version, type, flags, (uint32_t)(fixed + block_len));
  raw_put_u32(b, stream_id);
  if (version == 2) raw_put_u16(b, 0);
  raw_put(b, block, block_len);
}

void raw_syn_reply(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                   const void *block, size_t block_len) {
  stream_headers(b, version, SPEEDY_SPDY_FRAME_SYN_REPLY, flags, stream_id, block, block_len);
}

void raw_headers(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id, const void *block,
                 size_t block_len) {
  stream_headers(b, version, SPEEDY_SPDY_FRAME_HEADERS, flags, stream_id, block, block_len);
}

void raw_syn_stream_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                       uint32_t stream_id, uint32_t associated_id, uint8_t priority,
                       const raw_header *headers, size_t n) {
  raw_buf block = {0};
  raw_deflate_nv(d, version, headers, n, &block);
  raw_syn_stream(b, version, flags, stream_id, associated_id, priority, block.data, block.len);
  raw_buf_free(&block);
}

void raw_syn_reply_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                      uint32_t stream_id, const raw_header *headers, size_t n) {
  raw_buf block = {0};
  raw_deflate_nv(d, version, headers, n, &block);
  raw_syn_reply(b, version, flags, stream_id, block.data, block.len);
  raw_buf_free(&block);
}

void raw_headers_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                    uint32_t stream_id, const raw_header *headers, size_t n) {
  raw_buf block = {0};
  raw_deflate_nv(d, version, headers, n, &block);
  raw_headers(b, version, flags, stream_id, block.data, block.len);
  raw_buf_free(&block);
}

void raw_get(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags, uint32_t stream_id,
             const char *path) {
  raw_header headers[6];
  size_t n = raw_request_headers(version, path, headers);
  raw_syn_stream_nv(b, d, version, flags, stream_id, 0, 3, headers, n);
}

/* ---- reading frames back --------------------------------------------------------------- */

size_t raw_parse(const uint8_t *bytes, size_t len, raw_frame *out, size_t max) {
  size_t pos = 0, n = 0;
  while (pos < len) {
    cr_assert(len - pos >= SPDY_FRAME_HEADER_LEN, "output ends inside a frame header at %zu", pos);
    spdy_frame_hd hd;
    spdy_frame_hd_decode(bytes + pos, &hd);
    pos += SPDY_FRAME_HEADER_LEN;
    cr_assert(len - pos >= hd.length, "output ends inside a frame payload at %zu", pos);
    if (n < max) {
      out[n].hd = hd;
      out[n].payload = bytes + pos;
    }
    n++;
    pos += hd.length;
  }
  return n;
}

/* ---- a session under test, fed raw bytes ------------------------------------------------ */

speedy_options *raw_options_new(void) {
  speedy_options *options = NULL;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  return options;
}

void raw_rig_open(raw_rig *rig, speedy_protocol protocol, speedy_role role,
                  speedy_options *options) {
  memset(rig, 0, sizeof(*rig));
  rig->protocol = protocol;
  rig->version = protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
  snprintf(rig->name, sizeof(rig->name), "%s", speedy_protocol_name(protocol));
  rig->peer = test_peer_new(protocol, role, options);
  rig->peer->log_data = 1;
  raw_deflater_init_version(&rig->deflater, rig->version);
}

void raw_rig_close(raw_rig *rig) {
  test_peer_del(rig->peer);
  rig->peer = NULL;
  raw_deflater_free(&rig->deflater);
  raw_buf_free(&rig->in);
  cr_assert_eq(test_alloc_live(), 0, "%s: %zu blocks still allocated after the session was deleted",
               rig->name, test_alloc_live());
}

int64_t raw_rig_feed(raw_rig *rig, size_t chunk) {
  int64_t rv = test_feed(rig->peer, rig->in.data, rig->in.len, chunk);
  rig->in.len = 0;
  return rv;
}

int64_t raw_rig_feed_all(raw_rig *rig, size_t *fed) {
  *fed = rig->in.len;
  return raw_rig_feed(rig, rig->in.len > 0 ? rig->in.len : 1);
}

void raw_rig_discard_output(raw_rig *rig) {
  size_t len;
  free(test_drain(rig->peer, &len));
}

void raw_rig_open_client_with_get(raw_rig *rig, speedy_protocol protocol) {
  raw_rig_open(rig, protocol, SPEEDY_ROLE_CLIENT, NULL);
  int32_t id = test_get(rig->peer, "/", 3);
  cr_assert_eq(id, 1);
  raw_rig_discard_output(rig);
}

void raw_rig_syn_block(raw_rig *rig, uint8_t flags, uint32_t stream_id, const raw_buf *plain) {
  raw_buf block = {0};
  raw_deflate(&rig->deflater, plain->data, plain->len, Z_SYNC_FLUSH, &block);
  raw_syn_stream(&rig->in, rig->version, flags, stream_id, 0, 3, block.data, block.len);
  raw_buf_free(&block);
}

/* ---- logs ------------------------------------------------------------------------------ */

/* Copies the log with consecutive "data <id> <n>" lines of one stream merged, so logs of
 * runs that split DATA differently compare equal. The caller frees it. */
char *raw_coalesced_log(const test_peer *peer) {
  const char *log = peer->log != NULL ? peer->log : "";
  size_t cap = strlen(log) + 1;
  char *out = malloc(cap);
  cr_assert_not_null(out);
  size_t len = 0;
  int pending_id = -1;
  unsigned long long pending_n = 0;
  for (const char *p = log; *p != '\0';) {
    const char *end = strchr(p, '\n');
    size_t line_len = end != NULL ? (size_t)(end - p) : strlen(p);
    int id;
    unsigned long long n;
    int is_data = sscanf(p, "data %d %llu", &id, &n) == 2;
    if (is_data && id == pending_id) {
      pending_n += n;
    } else {
      if (pending_id >= 0)
        len += (size_t)snprintf(out + len, cap - len, "data %d %llu\n", pending_id, pending_n);
      pending_id = -1;
      if (is_data) {
        pending_id = id;
        pending_n = n;
      } else {
        memcpy(out + len, p, line_len);
        len += line_len;
        out[len++] = '\n';
      }
    }
    p += line_len + (end != NULL);
  }
  if (pending_id >= 0)
    len += (size_t)snprintf(out + len, cap - len, "data %d %llu\n", pending_id, pending_n);
  out[len] = '\0';
  return out;
}

/* ---- what a session sent back ----------------------------------------------------------- */

void raw_output_take(raw_output *out, test_peer *peer) {
  raw_output_take_session(out, peer->session);
}

void raw_output_take_session(raw_output *out, speedy_session *session) {
  test_peer shim;
  memset(&shim, 0, sizeof(shim));
  shim.session = session; /* test_drain needs nothing else */
  out->bytes = test_drain(&shim, &out->len);
  size_t n = raw_parse(out->bytes, out->len, NULL, 0);
  out->frames = calloc(n + 1, sizeof(raw_frame));
  cr_assert_not_null(out->frames);
  out->n = raw_parse(out->bytes, out->len, out->frames, n);
}

void raw_output_free(raw_output *out) {
  free(out->bytes);
  free(out->frames);
  memset(out, 0, sizeof(*out));
}

size_t raw_output_count(const raw_output *out, unsigned type) {
  size_t n = 0;
  for (size_t i = 0; i < out->n; i++) {
    const spdy_frame_hd *hd = &out->frames[i].hd;
    if (type == SPEEDY_SPDY_FRAME_DATA ? !hd->is_control : hd->is_control && hd->type == type) n++;
  }
  return n;
}

void raw_expect_rst(const raw_output *out, int32_t stream_id, uint32_t status, const char *what) {
  for (size_t i = 0; i < out->n; i++) {
    const raw_frame *f = &out->frames[i];
    if (!f->hd.is_control || f->hd.type != SPEEDY_SPDY_FRAME_RST_STREAM) continue;
    int32_t id;
    uint32_t got;
    cr_assert_eq(spdy_frame_decode_rst_stream(f->payload, f->hd.length, &id, &got), 0,
                 "%s: malformed RST_STREAM sent", what);
    if (id != stream_id) continue;
    cr_assert_eq(got, status, "%s: RST_STREAM for stream %d has status %s, expected %s", what,
                 (int)stream_id, speedy_rst_status_name(got), speedy_rst_status_name(status));
    return;
  }
  cr_assert_fail("%s: no RST_STREAM for stream %d (expected %s); %zu frames sent", what,
                 (int)stream_id, speedy_rst_status_name(status), out->n);
}

void raw_expect_no_rst(const raw_output *out, const char *what) {
  size_t n = raw_output_count(out, SPEEDY_SPDY_FRAME_RST_STREAM);
  cr_assert_eq(n, 0, "%s: %zu unexpected RST_STREAM frames sent", what, n);
}

void raw_expect_goaway(const raw_output *out, unsigned version, int32_t last_good, uint32_t status,
                       const char *what) {
  size_t count = raw_output_count(out, SPEEDY_SPDY_FRAME_GOAWAY);
  cr_assert_eq(count, 1, "%s: %zu GOAWAY frames sent, expected one", what, count);
  for (size_t i = 0; i < out->n; i++) {
    const raw_frame *f = &out->frames[i];
    if (!f->hd.is_control || f->hd.type != SPEEDY_SPDY_FRAME_GOAWAY) continue;
    cr_assert_eq(f->hd.version, version, "%s: GOAWAY of version %u in a version %u session", what,
                 (unsigned)f->hd.version, version);
    int32_t got_last;
    uint32_t got_status;
    cr_assert_eq(
        spdy_frame_decode_goaway((int)version, f->payload, f->hd.length, &got_last, &got_status), 0,
        "%s: malformed GOAWAY sent", what);
    cr_assert_eq(got_last, last_good, "%s: GOAWAY last-good-stream-id %d, expected %d", what,
                 (int)got_last, (int)last_good);
    if (version >= 3)
      cr_assert_eq(got_status, status, "%s: GOAWAY status %u, expected %u", what, got_status,
                   status);
    cr_assert_eq(i, out->n - 1, "%s: GOAWAY is not the last frame sent", what);
  }
}

void raw_expect_no_goaway(const raw_output *out, const char *what) {
  size_t n = raw_output_count(out, SPEEDY_SPDY_FRAME_GOAWAY);
  cr_assert_eq(n, 0, "%s: unexpected GOAWAY sent", what);
}

void raw_expect_session_error(raw_rig *rig, int64_t rv, int error, int32_t last_good,
                              uint32_t status, const char *what) {
  cr_assert_eq(rv, error, "%s (%s): recv returned %lld (%s), expected %s", what, rig->name,
               (long long)rv, rv < 0 ? speedy_strerror((int)rv) : "bytes", speedy_strerror(error));
  cr_assert(speedy_error_is_fatal(error), "%s: %s should be fatal", what, speedy_strerror(error));
  raw_output out;
  raw_output_take(&out, rig->peer);
  char context[160];
  snprintf(context, sizeof(context), "%s (%s)", what, rig->name);
  raw_expect_goaway(&out, rig->version, last_good, status, context);
  raw_output_free(&out);
  cr_assert_eq(speedy_session_want_read(rig->peer->session), 0, "%s: session still wants input",
               context);
  uint8_t more[8] = {0};
  cr_assert_eq(speedy_session_recv(rig->peer->session, more, sizeof(more)), error,
               "%s: a dead session must repeat its error", context);
}

void raw_expect_stream_error(raw_rig *rig, int64_t rv, size_t fed, int32_t stream_id,
                             uint32_t status, const char *what) {
  char context[160];
  snprintf(context, sizeof(context), "%s (%s)", what, rig->name);
  cr_assert_eq(rv, (int64_t)fed, "%s: recv returned %lld (%s), expected all %zu bytes", context,
               (long long)rv, rv < 0 ? speedy_strerror((int)rv) : "bytes", fed);
  raw_output out;
  raw_output_take(&out, rig->peer);
  raw_expect_rst(&out, stream_id, status, context);
  raw_expect_no_goaway(&out, context);
  raw_output_free(&out);
}

void raw_expect_session_works(raw_rig *rig, uint32_t stream_id, const char *what) {
  char context[160];
  snprintf(context, sizeof(context), "%s (%s)", what, rig->name);
  raw_get(&rig->in, &rig->deflater, rig->version, SPDY_FLAG_FIN, stream_id, "/after");
  size_t len = rig->in.len;
  int64_t rv = raw_rig_feed(rig, len);
  cr_assert_eq(rv, (int64_t)len, "%s: a valid GET afterwards failed: %lld (%s)", context,
               (long long)rv, rv < 0 ? speedy_strerror((int)rv) : "bytes");
  char line[64];
  snprintf(line, sizeof(line), "header %u :path=/after", stream_id);
  cr_assert(test_log_has(rig->peer, line), "%s: the next GET was not delivered; log:\n%s", context,
            rig->peer->log);
  snprintf(line, sizeof(line), "end %u fin=1", stream_id);
  cr_assert(test_log_has(rig->peer, line), "%s: log:\n%s", context, rig->peer->log);
}

void raw_expect_block_resets_stream(raw_rig *rig, const raw_buf *block_plain, const char *what) {
  raw_rig_syn_block(rig, SPDY_FLAG_FIN, 1, block_plain);
  size_t fed;
  int64_t rv = raw_rig_feed_all(rig, &fed);
  raw_expect_stream_error(rig, rv, fed, 1, SPEEDY_RST_PROTOCOL_ERROR, what);
  cr_assert(!test_log_has(rig->peer, "begin 1 request"), "%s (%s): the bad request was delivered",
            what, rig->name);
  raw_expect_session_works(rig, 3, what);
}
