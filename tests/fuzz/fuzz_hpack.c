/* fuzz_hpack.c — harness 8: HPACK (lib/hpack.c, lib/hpack_huffman.c) directly.
 *
 * Input: a mode byte — bit 0: decode or round trip; bits 1-2: the decoder's header-list
 * cap (64 KiB, 256 octets, 4 KiB, none); bit 3: strings capped at 100 octets instead of
 * 64 KiB; bits 4-5: the encoder's Huffman choice (shorter, always, never, shorter) — then:
 *
 *   decode: pieces of header blocks from a peer, each a control byte (bit 0: the block
 *     ends with this piece; bit 1: first the SETTINGS table size changes to a 16-bit value
 *     that follows; bits 2-5: cut the piece into that many parts for the second decoder),
 *     a 16-bit length and the bytes. Two decoders read the same blocks, one a piece per
 *     call, the other in parts cut at positions the input chooses: they must return the
 *     same results, emit the same fields and keep the same table. Every emitted field
 *     respects the header-list cap; a fatal error sticks.
 *
 *   round trip: header lists built from the input (names from a table of interesting ones
 *     or raw bytes, raw values, sensitive flags), each preceded by a control byte (bit 0:
 *     the peer's table size changes first, to a 16-bit value that follows; bit 1: decode a
 *     byte at a time; bit 2: our encoder's own limit changes). Our encoder encodes, our
 *     decoder must give back exactly the list, with never-indexed exactly where the policy
 *     or the caller asked for it, and both tables must agree.
 *
 * Every allocation goes through the counting allocator; nothing may be left at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "hpack.h"

/* What a decoder emitted: count, hash of every field, octets counted against the cap. */
typedef struct emit_log {
  uint64_t fields;
  uint64_t hash;
  uint64_t list_bytes;
  uint64_t cap;
} emit_log;

static int log_field(void *user, const speedy_hpack_field *f) {
  emit_log *log = user;
  if ((f->name_len > 0 && f->name == NULL) || (f->value_len > 0 && f->value == NULL))
    fuzz_fail("a field was emitted with a NULL name or value");
  log->fields++;
  log->list_bytes += f->name_len + f->value_len + 32;
  if (log->list_bytes > log->cap)
    fuzz_fail("emitted %llu octets of header list past the cap %llu",
              (unsigned long long)log->list_bytes, (unsigned long long)log->cap);
  uint64_t lens[3] = {f->name_len, f->value_len, f->flags};
  log->hash = fuzz_hash(log->hash, lens, sizeof lens);
  if (f->name_len) log->hash = fuzz_hash(log->hash, f->name, f->name_len);
  if (f->value_len) log->hash = fuzz_hash(log->hash, f->value, f->value_len);
  return 0;
}

static const uint32_t list_caps[4] = {65536, 256, 4096, UINT32_MAX};

static speedy_hpack_decoder *new_decoder(speedy_mem *mem, uint8_t mode) {
  speedy_hpack_decoder *d;
  if (speedy_hpack_decoder_new(mem, &d) != 0) fuzz_fail("decoder_new failed");
  speedy_hpack_decoder_set_max_header_list_size(d, list_caps[(mode >> 1) & 3]);
  speedy_hpack_decoder_set_max_string_length(d, (mode & 8) ? 100 : 65536);
  return d;
}

static int fatal(int rc) { return rc < 0 && rc != SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE; }

static void run_decode(speedy_mem *mem, uint8_t mode, fuzz_input *in) {
  speedy_hpack_decoder *whole = new_decoder(mem, mode), *split = new_decoder(mem, mode);
  emit_log whole_log = {0, FUZZ_HASH_INIT, 0, list_caps[(mode >> 1) & 3]};
  emit_log split_log = whole_log;
  int broken = 0;
  for (int pieces = 0; pieces < 256 && !fuzz_input_done(in) && !broken; pieces++) {
    uint8_t control = fuzz_u8(in);
    int end = control & 1;
    if (control & 2) {
      uint16_t size = fuzz_u16(in);
      speedy_hpack_decoder_set_max_table_size(whole, size);
      speedy_hpack_decoder_set_max_table_size(split, size);
    }
    const uint8_t *bytes;
    size_t len = fuzz_take(in, fuzz_u16(in), &bytes);
    int rc_whole = speedy_hpack_decode(whole, bytes, len, end, log_field, &whole_log);
    /* The same piece cut in parts at positions taken from the input. */
    size_t parts = (control >> 2) & 15, at = 0;
    int rc_split = 0;
    for (size_t p = 1; p < parts && at < len && rc_split == 0; p++) {
      size_t cut = at + fuzz_below(in, (uint32_t)(len - at + 1));
      rc_split = speedy_hpack_decode(split, bytes + at, cut - at, 0, log_field, &split_log);
      at = cut;
    }
    if (rc_split == 0)
      rc_split = speedy_hpack_decode(split, bytes + at, len - at, end, log_field, &split_log);
    if (rc_whole != rc_split)
      fuzz_fail("one piece gave %s, the same bytes in %zu parts %s",
                speedy_hpack_strerror(rc_whole), parts, speedy_hpack_strerror(rc_split));
    if (whole_log.fields != split_log.fields || whole_log.hash != split_log.hash)
      fuzz_fail("one piece emitted %llu fields, the same bytes in parts %llu (or others)",
                (unsigned long long)whole_log.fields, (unsigned long long)split_log.fields);
    if (speedy_hpack_decoder_table_size(whole) != speedy_hpack_decoder_table_size(split) ||
        speedy_hpack_decoder_entries(whole) != speedy_hpack_decoder_entries(split))
      fuzz_fail("the two decoders' tables differ");
    if (speedy_hpack_decoder_table_size(whole) > speedy_hpack_decoder_table_max(whole))
      fuzz_fail("table of %zu octets over its maximum %u", speedy_hpack_decoder_table_size(whole),
                speedy_hpack_decoder_table_max(whole));
    if (end) whole_log.list_bytes = split_log.list_bytes = 0;
    if (fatal(rc_whole)) {
      if (speedy_hpack_decode(whole, (const uint8_t *)"\x82", 1, 1, log_field, &whole_log) !=
          rc_whole)
        fuzz_fail("a decoder that failed with %s accepted more", speedy_hpack_strerror(rc_whole));
      broken = 1;
    }
  }
  speedy_hpack_decoder_del(whole);
  speedy_hpack_decoder_del(split);
}

/* Names worth meeting: the static table's, the policy's, and a few of our own. */
static const char *const names[] = {":authority",
                                    ":method",
                                    ":path",
                                    ":scheme",
                                    ":status",
                                    "accept",
                                    "accept-encoding",
                                    "authorization",
                                    "cache-control",
                                    "content-length",
                                    "content-type",
                                    "cookie",
                                    "date",
                                    "etag",
                                    "if-none-match",
                                    "last-modified",
                                    "location",
                                    "proxy-authorization",
                                    "referer",
                                    "set-cookie",
                                    "user-agent",
                                    "x-custom",
                                    "x-forwarded-for",
                                    ""};
#define N_NAMES (sizeof names / sizeof names[0])

typedef struct expect_log {
  const speedy_hpack_field *want;
  size_t n, next;
} expect_log;

static int sensitive(const speedy_hpack_field *f) {
  if (f->flags & SPEEDY_HPACK_NEVER_INDEXED) return 1;
  if (f->name_len == 6 && memcmp(f->name, "cookie", 6) == 0) return f->value_len < 20;
  return (f->name_len == 13 && memcmp(f->name, "authorization", 13) == 0) ||
         (f->name_len == 19 && memcmp(f->name, "proxy-authorization", 19) == 0);
}

static int expect_field(void *user, const speedy_hpack_field *f) {
  expect_log *log = user;
  if (log->next >= log->n) fuzz_fail("decoded more fields than were encoded (%zu)", log->n);
  const speedy_hpack_field *w = &log->want[log->next++];
  if (f->name_len != w->name_len || f->value_len != w->value_len ||
      (f->name_len && memcmp(f->name, w->name, f->name_len) != 0) ||
      (f->value_len && memcmp(f->value, w->value, f->value_len) != 0))
    fuzz_fail("field %zu came back as \"%.*s\" (%zu octets of value), sent \"%.*s\" (%zu)",
              log->next - 1, (int)f->name_len, (const char *)f->name, f->value_len,
              (int)w->name_len, (const char *)w->name, w->value_len);
  unsigned want_flags = sensitive(w) ? SPEEDY_HPACK_NEVER_INDEXED : 0;
  if (f->flags != want_flags)
    fuzz_fail("field %zu (%.*s) came back with flags %u, expected %u", log->next - 1,
              (int)w->name_len, (const char *)w->name, f->flags, want_flags);
  return 0;
}

static void run_round_trip(speedy_mem *mem, uint8_t mode, fuzz_input *in) {
  speedy_hpack_encoder *e;
  if (speedy_hpack_encoder_new(mem, &e) != 0) fuzz_fail("encoder_new failed");
  speedy_hpack_encoder_set_huffman(e, (speedy_hpack_huffman)(((mode >> 4) & 3) % 3));
  speedy_hpack_decoder *d = new_decoder(mem, 0);
  speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
  speedy_hpack_field fields[16];
  uint8_t *out = NULL;
  for (int blocks = 0; blocks < 64 && !fuzz_input_done(in); blocks++) {
    uint8_t control = fuzz_u8(in);
    if (control & 1) {
      uint16_t size = fuzz_u16(in);
      speedy_hpack_decoder_set_max_table_size(d, size);
      speedy_hpack_encoder_set_peer_max_table_size(e, size);
    }
    if (control & 4) speedy_hpack_encoder_set_table_size_limit(e, fuzz_u16(in));
    size_t n = 1 + fuzz_u8(in) % 16;
    for (size_t i = 0; i < n; i++) {
      uint8_t selector = fuzz_u8(in);
      speedy_hpack_field *f = &fields[i];
      if (selector & 0x80) {
        f->name_len = fuzz_take(in, selector & 31, &f->name);
      } else {
        f->name = (const uint8_t *)names[selector % N_NAMES];
        f->name_len = strlen(names[selector % N_NAMES]);
      }
      uint8_t value_len = fuzz_u8(in);
      f->value_len = fuzz_take(in, value_len == 255 ? fuzz_u16(in) : value_len, &f->value);
      f->flags = (selector & 0x40) ? SPEEDY_HPACK_NEVER_INDEXED
                                   : ((selector & 0x60) == 0x20 ? SPEEDY_HPACK_NO_INDEX : 0);
    }
    size_t bound = speedy_hpack_encode_bound(e, fields, n);
    out = realloc(out, bound);
    if (out == NULL) fuzz_fail("out of memory");
    int64_t len = speedy_hpack_encode(e, fields, n, out, bound);
    if (len < 0) fuzz_fail("encode failed: %s", speedy_hpack_strerror((int)len));
    if ((size_t)len > bound)
      fuzz_fail("encoded %lld octets past the bound %zu", (long long)len, bound);
    expect_log log = {fields, n, 0};
    int rc;
    if (control & 2) {
      rc = 0;
      for (int64_t k = 0; k < len && rc == 0; k++)
        rc = speedy_hpack_decode(d, out + k, 1, 0, expect_field, &log);
      if (rc == 0) rc = speedy_hpack_decode(d, NULL, 0, 1, expect_field, &log);
    } else {
      rc = speedy_hpack_decode(d, out, (size_t)len, 1, expect_field, &log);
    }
    if (rc != 0) fuzz_fail("our decoder refused our block: %s", speedy_hpack_strerror(rc));
    if (log.next != n) fuzz_fail("%zu fields sent, %zu came back", n, log.next);
    if (speedy_hpack_decoder_table_size(d) != speedy_hpack_encoder_table_size(e) ||
        speedy_hpack_decoder_entries(d) != speedy_hpack_encoder_entries(e) ||
        speedy_hpack_decoder_table_max(d) != speedy_hpack_encoder_table_max(e))
      fuzz_fail("tables differ: encoder %zu octets in %zu entries (max %u), decoder %zu in %zu "
                "(max %u)",
                speedy_hpack_encoder_table_size(e), speedy_hpack_encoder_entries(e),
                speedy_hpack_encoder_table_max(e), speedy_hpack_decoder_table_size(d),
                speedy_hpack_decoder_entries(d), speedy_hpack_decoder_table_max(d));
  }
  free(out);
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fuzz_input in;
  fuzz_input_init(&in, data, size);
  uint8_t mode = fuzz_u8(&in);
  fuzz_alloc_reset();
  speedy_mem mem = {fuzz_alloc_malloc, fuzz_alloc_realloc, fuzz_alloc_free, NULL, 0};
  if (mode & 1)
    run_round_trip(&mem, mode, &in);
  else
    run_decode(&mem, mode, &in);
  fuzz_alloc_check_empty("hpack");
  return 0;
}
