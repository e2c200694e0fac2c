/* fuzz_hdblock.c — harness 7: header-block decompression and parsing (lib/hdblock.c)
 * directly, for SPDY/2 and SPDY/3 layouts.
 *
 * Input: a mode byte (bit 0: version 2 or 3; bit 1: a 256-byte block cap instead of
 * 64 KiB; bits 2-3 what to do; bits 4-6 the compressors' window, 2^15 down to 2^9 — the
 * inflater keeps only the window the peer's zlib header declares; bit 7 level 9 instead
 * of 6), then blocks, each a 16-bit length and its bytes:
 *   0  the bytes are compressed blocks from a peer: inflate each with one context in
 *      turn (as a session does), parse what inflates;
 *   1  the bytes are inflated blocks: parse each;
 *   2  the bytes are plain blocks: the peer compresses them with the version's dictionary,
 *      our inflater must give back exactly those bytes (or refuse them as too large), and
 *      they are parsed;
 *   3  the bytes describe header lists: spdy_hdblock_deflate compresses each, then it is
 *      inflated and parsed; what was accepted on the way out must come back field by
 *      field on the way in (names in first-appearance order, repeated names' values in
 *      order), or the sender and the receiver disagree.
 */
#include <string.h>

#include "fuzz_common.h"
#include "hdblock.h"

#define MAX_FIELDS 64

typedef struct emitted {
  fuzz_buf names, values; /* each field appended with its length first */
  size_t n;
  int fail_after; /* emit returns an error after this many fields (0: never) */
} emitted;

static int emit(void *ctx, const speedy_header *h) {
  emitted *e = ctx;
  if (h->name_len == 0) fuzz_fail("parse emitted an empty name");
  for (size_t i = 0; i < h->name_len; i++)
    if (h->name[i] == 0 || (h->name[i] >= 'A' && h->name[i] <= 'Z'))
      fuzz_fail("parse emitted a name with NUL or upper case");
  if (memchr(h->value, 0, h->value_len) != NULL) fuzz_fail("parse emitted a value with NUL");
  uint32_t len = (uint32_t)h->name_len;
  fuzz_put(&e->names, &len, sizeof(len));
  fuzz_put(&e->names, h->name, h->name_len);
  len = (uint32_t)h->value_len;
  fuzz_put(&e->values, &len, sizeof(len));
  fuzz_put(&e->values, h->value, h->value_len);
  e->n++;
  if (e->fail_after != 0 && e->n >= (size_t)e->fail_after) return SPEEDY_ERR_CALLBACK_FAILURE;
  return 0;
}

static void emitted_free(emitted *e) {
  fuzz_buf_free(&e->names);
  fuzz_buf_free(&e->values);
}

static int parse(int version, speedy_mem *mem, const uint8_t *block, size_t len, emitted *e) {
  int rv = spdy_hdblock_parse(version, mem, block, len, emit, e);
  if (rv != 0 && rv != SPEEDY_ERR_INVALID_HEADER && rv != SPEEDY_ERR_NOMEM &&
      rv != SPEEDY_ERR_CALLBACK_FAILURE)
    fuzz_fail("spdy_hdblock_parse returned %s", speedy_strerror(rv));
  if (rv == SPEEDY_ERR_INVALID_HEADER && e->n != 0)
    fuzz_fail("an invalid block emitted %zu fields before being refused", e->n);
  return rv;
}

/* The application's name for a wire name (SPDY/2 maps its pseudo-header names). */
static void application_name(int version, const char *name, size_t len, const char **out,
                             size_t *out_len) {
  static const char *const v2[][2] = {{"method", ":method"},   {"url", ":path"},
                                      {"version", ":version"}, {"host", ":host"},
                                      {"scheme", ":scheme"},   {"status", ":status"}};
  *out = name;
  *out_len = len;
  if (version != 2) return;
  for (size_t i = 0; i < 6; i++) {
    const char *wire = v2[i][0];
    const char *app = v2[i][1];
    /* :path goes out as url, and url comes back as :path. */
    if ((len == strlen(wire) && memcmp(name, wire, len) == 0) ||
        (len == strlen(app) && memcmp(name, app, len) == 0)) {
      *out = app;
      *out_len = strlen(app);
    }
  }
}

/* Mode 3: header list -> deflate -> inflate -> parse, compared with the list. */
static void round_trip(int version, speedy_mem *mem, spdy_hdblock_deflater *d,
                       spdy_hdblock_inflater *inf, fuzz_input *in, int *broken) {
  static const char *const names[] = {":method",    ":path",  "url",   ":status", "x-a", "cookie",
                                      "set-cookie", "accept", ":host", "host",    "a"};
  speedy_header headers[MAX_FIELDS];
  size_t n = fuzz_u8(in) % MAX_FIELDS;
  for (size_t i = 0; i < n; i++) {
    uint8_t sel = fuzz_u8(in);
    const uint8_t *bytes;
    size_t len;
    if (sel < 160) {
      headers[i].name = names[sel % 11];
      headers[i].name_len = strlen(names[sel % 11]);
    } else {
      len = fuzz_take(in, sel % 8, &bytes);
      headers[i].name = (const char *)bytes;
      headers[i].name_len = len;
    }
    len = fuzz_take(in, fuzz_u8(in) % 24, &bytes);
    headers[i].value = (const char *)bytes;
    headers[i].value_len = len;
  }
  speedy_buf out;
  speedy_buf_init(&out, 1u << 20);
  int rv = spdy_hdblock_deflate(d, mem, &out, headers, n);
  if (rv != 0) {
    if (rv == SPEEDY_ERR_COMPRESSION || rv == SPEEDY_ERR_NOMEM) *broken = 1;
    if (rv != SPEEDY_ERR_INVALID_HEADER && rv != SPEEDY_ERR_NOMEM && rv != SPEEDY_ERR_COMPRESSION &&
        rv != SPEEDY_ERR_FRAME_TOO_LARGE)
      fuzz_fail("spdy_hdblock_deflate returned %s", speedy_strerror(rv));
    speedy_buf_free(&out, mem);
    return;
  }
  const uint8_t *plain;
  size_t plain_len;
  rv = spdy_hdblock_inflate(inf, mem, speedy_buf_head(&out), speedy_buf_len(&out), &plain,
                            &plain_len);
  speedy_buf_free(&out, mem);
  if (rv == SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE || rv == SPEEDY_ERR_NOMEM) {
    *broken = 1;
    return;
  }
  if (rv != 0) fuzz_fail("our own deflated block did not inflate: %s", speedy_strerror(rv));
  emitted e = {0};
  rv = parse(version, mem, plain, plain_len, &e);
  if (rv != 0)
    fuzz_fail("a block spdy_hdblock_deflate accepted (%zu fields) does not parse: %s", n,
              speedy_strerror(rv));
  /* Expected: names in first-appearance order, each with its values in order. */
  fuzz_buf want_names = {0}, want_values = {0};
  size_t want_n = 0;
  for (size_t i = 0; i < n; i++) {
    const char *ni;
    size_t li;
    application_name(version, headers[i].name, headers[i].name_len, &ni, &li);
    int seen = 0;
    for (size_t k = 0; k < i && !seen; k++) {
      const char *nk;
      size_t lk;
      application_name(version, headers[k].name, headers[k].name_len, &nk, &lk);
      seen = lk == li && memcmp(nk, ni, li) == 0;
    }
    if (seen) continue;
    for (size_t j = i; j < n; j++) {
      const char *nj;
      size_t lj;
      application_name(version, headers[j].name, headers[j].name_len, &nj, &lj);
      if (lj != li || memcmp(nj, ni, li) != 0) continue;
      uint32_t len = (uint32_t)li;
      fuzz_put(&want_names, &len, sizeof(len));
      fuzz_put(&want_names, ni, li);
      len = (uint32_t)headers[j].value_len;
      fuzz_put(&want_values, &len, sizeof(len));
      fuzz_put(&want_values, headers[j].value, headers[j].value_len);
      want_n++;
    }
  }
  if (want_n != e.n || want_names.len != e.names.len || want_values.len != e.values.len ||
      (want_names.len > 0 && memcmp(want_names.data, e.names.data, want_names.len) != 0) ||
      (want_values.len > 0 && memcmp(want_values.data, e.values.data, want_values.len) != 0))
    fuzz_fail("header list changed on the way through deflate/inflate/parse: %zu fields sent, "
              "%zu expected back, %zu came back",
              n, want_n, e.n);
  fuzz_buf_free(&want_names);
  fuzz_buf_free(&want_values);
  emitted_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fuzz_input in;
  fuzz_input_init(&in, data, size);
  uint8_t mode_byte = fuzz_u8(&in);
  int version = (mode_byte & 1) ? 3 : 2;
  uint32_t max_block = (mode_byte & 2) ? 256 : 65536;
  int mode = (mode_byte >> 2) & 3;

  fuzz_alloc_reset();
  speedy_mem mem = {fuzz_alloc_malloc, fuzz_alloc_realloc, fuzz_alloc_free, NULL, 0};
  spdy_hdblock_inflater inf;
  spdy_hdblock_deflater d;
  memset(&inf, 0, sizeof(inf));
  memset(&d, 0, sizeof(d));
  if (spdy_hdblock_inflater_init(&inf, &mem, version, max_block) != 0)
    fuzz_fail("inflater_init failed");
  int window_bits = 15 - ((mode_byte >> 4) & 7) % 7;
  int level = (mode_byte & 128) ? 9 : 6;
  if (mode == 3 && spdy_hdblock_deflater_init(&d, &mem, version, level, window_bits, 5) != 0)
    fuzz_fail("deflater_init failed");
  fuzz_deflater peer;
  fuzz_deflater_init2(&peer, version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3, level, window_bits, 8);

  int broken = 0;
  for (int blocks = 0; blocks < 64 && !fuzz_input_done(&in) && !broken; blocks++) {
    if (mode == 3) {
      round_trip(version, &mem, &d, &inf, &in, &broken);
      continue;
    }
    const uint8_t *bytes;
    size_t len = fuzz_take(&in, fuzz_u16(&in), &bytes);
    emitted e = {0};
    e.fail_after = (int)(len % 7 == 3 ? 2 : 0);
    if (mode == 1) {
      (void)parse(version, &mem, bytes, len, &e);
    } else {
      fuzz_buf compressed = {0};
      const uint8_t *in_bytes = bytes;
      size_t in_len = len;
      if (mode == 2) {
        fuzz_deflate(&peer, bytes, len, Z_SYNC_FLUSH, &compressed);
        in_bytes = compressed.data;
        in_len = compressed.len;
        /* zlib emits nothing for a second sync flush without input in between; a session
         * reads a zero-length block as "no block", so there is nothing to inflate. */
        if (in_len == 0) {
          fuzz_buf_free(&compressed);
          emitted_free(&e);
          continue;
        }
      }
      const uint8_t *plain;
      size_t plain_len;
      int rv = spdy_hdblock_inflate(&inf, &mem, in_bytes, in_len, &plain, &plain_len);
      if (rv == 0) {
        if (plain_len > max_block)
          fuzz_fail("inflated %zu bytes past the cap %u", plain_len, max_block);
        if (mode == 2 && (plain_len != len || (len > 0 && memcmp(plain, bytes, len) != 0)))
          fuzz_fail("inflate gave %zu bytes back for %zu compressed by the peer", plain_len, len);
        (void)parse(version, &mem, plain, plain_len, &e);
      } else {
        if (mode == 2 && rv != SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE)
          fuzz_fail("a block compressed by a correct peer did not inflate: %s",
                    speedy_strerror(rv));
        if (rv != SPEEDY_ERR_COMPRESSION && rv != SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE &&
            rv != SPEEDY_ERR_NOMEM)
          fuzz_fail("spdy_hdblock_inflate returned %s", speedy_strerror(rv));
        const uint8_t *again;
        size_t again_len;
        if (spdy_hdblock_inflate(&inf, &mem, in_bytes, in_len, &again, &again_len) !=
            SPEEDY_ERR_COMPRESSION)
          fuzz_fail("an inflater that failed once accepted more input");
        broken = 1;
      }
      fuzz_buf_free(&compressed);
    }
    emitted_free(&e);
  }
  fuzz_deflater_free(&peer);
  spdy_hdblock_inflater_free(&inf, &mem);
  if (mode == 3) spdy_hdblock_deflater_free(&d);
  fuzz_alloc_check_empty("hdblock");
  return 0;
}
