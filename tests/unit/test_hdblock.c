/* test_hdblock.c — name/value header blocks (lib/hdblock.c): the dictionaries, the wire
 * format of both versions, the SPDY/2 name mapping, joining and splitting repeated names,
 * and the shared zlib contexts across many blocks. Hostile input is in
 * test_hostile_hdblock.c.
 *
 * No per-test .timeout here (CTest bounds the program): with them and --jobs=2,
 * Criterion's runner leaked 48 bytes in about half the runs under LeakSanitizer. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "frame.h"
#include "hdblock.h"
#include "testutil.h"

#define MAX_BLOCK 65536

/* ---- helpers ------------------------------------------------------------------------ */

#define H(n, v)                                                                                    \
  { n, sizeof(n) - 1, v, sizeof(v) - 1 }

/* What the parser emitted, copied out. */
typedef struct captured {
  size_t count;
  char names[64][64];
  char values[64][256];
  size_t value_lens[64];
  int fail_at; /* 1-based call that returns -42; 0 never */
} captured;

static int capture(void *ctx, const speedy_header *header) {
  captured *c = ctx;
  cr_assert_lt(c->count, 64, "too many fields emitted");
  cr_assert_lt(header->name_len, 64);
  cr_assert_lt(header->value_len, 256);
  memcpy(c->names[c->count], header->name, header->name_len);
  c->names[c->count][header->name_len] = 0;
  if (header->value_len > 0) memcpy(c->values[c->count], header->value, header->value_len);
  c->values[c->count][header->value_len] = 0;
  c->value_lens[c->count] = header->value_len;
  c->count++;
  if (c->fail_at != 0 && (size_t)c->fail_at == c->count) return -42;
  return 0;
}

static int count_only(void *ctx, const speedy_header *header) {
  (void)header;
  (*(size_t *)ctx)++;
  return 0;
}

static int contains(const uint8_t *bytes, size_t len, const char *needle, size_t n) {
  for (size_t i = 0; i + n <= len; i++)
    if (memcmp(bytes + i, needle, n) == 0) return 1;
  return 0;
}

static void expect_field(const captured *c, size_t i, const char *name, const char *value) {
  cr_assert_lt(i, c->count, "field %zu missing (only %zu emitted)", i, c->count);
  cr_expect_str_eq(c->names[i], name, "field %zu: name %s, expected %s", i, c->names[i], name);
  cr_expect_str_eq(c->values[i], value, "field %zu (%s): value %s, expected %s", i, name,
                   c->values[i], value);
}

/* Contexts of one direction: our deflater and the peer's inflater. */
typedef struct direction {
  speedy_mem mem;
  spdy_hdblock_deflater deflater;
  spdy_hdblock_inflater inflater;
  speedy_buf out;
} direction;

static void direction_init(direction *dir, int version) {
  test_alloc_mem(&dir->mem);
  cr_assert_eq(spdy_hdblock_deflater_init(&dir->deflater, &dir->mem, version, 6, 11, 5), 0);
  cr_assert_eq(spdy_hdblock_inflater_init(&dir->inflater, &dir->mem, version, MAX_BLOCK), 0);
  speedy_buf_init(&dir->out, 1 << 20);
}

static void direction_free(direction *dir) {
  spdy_hdblock_deflater_free(&dir->deflater);
  spdy_hdblock_inflater_free(&dir->inflater, &dir->mem);
  speedy_buf_free(&dir->out, &dir->mem);
}

/* Deflates headers, inflates the result; returns the inflated block (valid until the next
 * inflate) and leaves out empty. */
static void send_block(direction *dir, const speedy_header *headers, size_t n,
                       const uint8_t **block, size_t *block_len) {
  speedy_buf_reset(&dir->out);
  cr_assert_eq(spdy_hdblock_deflate(&dir->deflater, &dir->mem, &dir->out, headers, n), 0);
  cr_assert_gt(speedy_buf_len(&dir->out), 0);
  int rv = spdy_hdblock_inflate(&dir->inflater, &dir->mem, speedy_buf_head(&dir->out),
                                speedy_buf_len(&dir->out), block, block_len);
  cr_assert_eq(rv, 0, "inflate returned %d", rv);
  speedy_buf_reset(&dir->out);
}

/* Compresses bytes with plain zlib as a peer would: its own stream, the dictionary, one
 * sync flush. Returns the compressed length. */
static size_t plain_zlib_compress(const uint8_t *dict, size_t dict_len, const uint8_t *in,
                                  size_t in_len, uint8_t *out, size_t cap) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  cr_assert_eq(deflateInit2(&zs, 9, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  cr_assert_eq(deflateSetDictionary(&zs, dict, (uInt)dict_len), Z_OK);
  zs.next_in = (Bytef *)in;
  zs.avail_in = (uInt)in_len;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  cr_assert_eq(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
  cr_assert_eq(zs.avail_in, 0);
  cr_assert_gt(zs.avail_out, 0, "test buffer too small");
  size_t len = cap - zs.avail_out;
  deflateEnd(&zs);
  return len;
}

/* Inflates one of our blocks with plain zlib and the given dictionary. */
static size_t plain_zlib_inflate(const uint8_t *dict, size_t dict_len, const uint8_t *in,
                                 size_t in_len, uint8_t *out, size_t cap) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  cr_assert_eq(inflateInit(&zs), Z_OK);
  zs.next_in = (Bytef *)in;
  zs.avail_in = (uInt)in_len;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  int rv = inflate(&zs, Z_SYNC_FLUSH);
  cr_assert_eq(rv, Z_NEED_DICT);
  cr_assert_eq(inflateSetDictionary(&zs, dict, (uInt)dict_len), Z_OK);
  rv = inflate(&zs, Z_SYNC_FLUSH);
  cr_assert(rv == Z_OK || rv == Z_BUF_ERROR, "inflate: %d", rv);
  cr_assert_eq(zs.avail_in, 0);
  size_t len = cap - zs.avail_out;
  inflateEnd(&zs);
  return len;
}

static int compressed_then_check(int version, const speedy_header *headers, size_t n,
                                 const uint8_t *expected, size_t expected_len) {
  direction dir;
  direction_init(&dir, version);
  cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, headers, n), 0);
  uint8_t plain[1024];
  const uint8_t *dict = version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
  size_t dict_len = version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
  size_t len = plain_zlib_inflate(dict, dict_len, speedy_buf_head(&dir.out),
                                  speedy_buf_len(&dir.out), plain, sizeof(plain));
  cr_expect_eq(len, expected_len, "serialised %zu bytes, expected %zu", len, expected_len);
  int same = len == expected_len && memcmp(plain, expected, len) == 0;
  direction_free(&dir);
  cr_expect_eq(test_alloc_live(), 0);
  return same;
}

/* ---- dictionaries ------------------------------------------------------------------- */

Test(hdblock, v2_dictionary_is_907_bytes_with_adler32_dfa251b2) {
  cr_assert_eq(spdy_hdblock_dict_v2_len, 907);
  uLong adler = adler32(adler32(0, Z_NULL, 0), spdy_hdblock_dict_v2, 907);
  cr_assert_eq(adler, 0xdfa251b2UL, "adler32 %#lx", adler);
}

Test(hdblock, v2_dictionary_is_the_text_and_its_final_nul) {
  cr_assert_eq(memcmp(spdy_hdblock_dict_v2, "optionsgetheadpostput", 21), 0);
  cr_assert_eq(memcmp(spdy_hdblock_dict_v2 + 907 - 17, "statusversionurl", 17), 0,
               "ends with statusversionurl and a NUL");
  cr_assert_eq(memchr(spdy_hdblock_dict_v2, 0, 906), NULL, "no NUL before the last byte");
}

Test(hdblock, v3_dictionary_is_1423_bytes_with_adler32_e3c6a7c2) {
  cr_assert_eq(spdy_hdblock_dict_v3_len, 1423);
  uLong adler = adler32(adler32(0, Z_NULL, 0), spdy_hdblock_dict_v3, 1423);
  cr_assert_eq(adler, 0xe3c6a7c2UL, "adler32 %#lx", adler);
}

Test(hdblock, v3_dictionary_starts_with_options_entry_and_ends_with_enq) {
  cr_assert_eq(memcmp(spdy_hdblock_dict_v3, "\0\0\0\7options\0\0\0\4head", 19), 0);
  cr_assert_eq(memcmp(spdy_hdblock_dict_v3 + 1423 - 7, ",enq=0.", 7), 0);
}

Test(hdblock, zlib_header_names_the_version_dictionary) {
  static const speedy_header headers[] = {H("a", "b")};
  static const uint8_t v2_id[4] = {0xdf, 0xa2, 0x51, 0xb2};
  static const uint8_t v3_id[4] = {0xe3, 0xc6, 0xa7, 0xc2};
  for (int version = 2; version <= 3; version++) {
    direction dir;
    direction_init(&dir, version);
    cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, headers, 1), 0);
    const uint8_t *p = speedy_buf_head(&dir.out);
    cr_assert_eq(p[0] & 0x0f, 8, "CM is deflate");
    cr_assert_neq(p[1] & 0x20, 0, "FDICT set");
    cr_assert_eq(((unsigned)p[0] << 8 | p[1]) % 31, 0, "FCHECK");
    cr_assert_eq(memcmp(p + 2, version == 2 ? v2_id : v3_id, 4), 0, "DICTID of v%d", version);
    direction_free(&dir);
  }
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- wire format -------------------------------------------------------------------- */

Test(hdblock, v3_block_has_32_bit_lengths_in_submission_order) {
  static const speedy_header headers[] = {H(":method", "GET"), H("accept", "*/*")};
  static const uint8_t expected[] = "\0\0\0\2"
                                    "\0\0\0\7:method\0\0\0\3GET"
                                    "\0\0\0\6accept\0\0\0\3*/*";
  cr_assert(compressed_then_check(3, headers, 2, expected, sizeof(expected) - 1));
}

Test(hdblock, v2_block_has_16_bit_lengths_and_v2_names) {
  static const speedy_header headers[] = {H(":method", "GET"),       H(":path", "/"),
                                          H(":version", "HTTP/1.1"), H(":host", "h"),
                                          H(":scheme", "https"),     H(":status", "200 OK")};
  static const uint8_t expected[] = "\0\6"
                                    "\0\6method\0\3GET"
                                    "\0\3url\0\1/"
                                    "\0\7version\0\10HTTP/1.1"
                                    "\0\4host\0\1h"
                                    "\0\6scheme\0\5https"
                                    "\0\6status\0\6"
                                    "200 OK";
  cr_assert(compressed_then_check(2, headers, 6, expected, sizeof(expected) - 1));
}

Test(hdblock, v3_keeps_pseudo_header_names) {
  static const speedy_header headers[] = {H(":path", "/x")};
  static const uint8_t expected[] = "\0\0\0\1\0\0\0\5:path\0\0\0\2/x";
  cr_assert(compressed_then_check(3, headers, 1, expected, sizeof(expected) - 1));
}

Test(hdblock, repeated_names_are_joined_with_nul_where_first_seen) {
  static const speedy_header headers[] = {H("set-cookie", "a=1"), H("x", "y"),
                                          H("set-cookie", "b=2"), H("set-cookie", "c=3")};
  static const uint8_t expected[] = "\0\0\0\2"
                                    "\0\0\0\12set-cookie\0\0\0\13a=1\0b=2\0c=3"
                                    "\0\0\0\1x\0\0\0\1y";
  cr_assert(compressed_then_check(3, headers, 4, expected, sizeof(expected) - 1));
}

Test(hdblock, empty_header_list_is_a_count_of_zero) {
  static const uint8_t expected[] = "\0\0\0\0";
  cr_assert(compressed_then_check(3, NULL, 0, expected, 4));
}

Test(hdblock, v3_empty_value_is_allowed) {
  static const speedy_header headers[] = {H("pragma", "")};
  static const uint8_t expected[] = "\0\0\0\1\0\0\0\6pragma\0\0\0\0";
  cr_assert(compressed_then_check(3, headers, 1, expected, sizeof(expected) - 1));
}

/* ---- round trips -------------------------------------------------------------------- */

Test(hdblock, v3_round_trip_delivers_every_field) {
  static const speedy_header headers[] = {H(":method", "GET"),       H(":path", "/index.html"),
                                          H(":version", "HTTP/1.1"), H(":host", "example.org"),
                                          H(":scheme", "https"),     H("user-agent", "speedy/0.1")};
  direction dir;
  direction_init(&dir, 3);
  const uint8_t *block;
  size_t len;
  send_block(&dir, headers, 6, &block, &len);
  cr_assert_eq(len, spdy_hdblock_serialised_size(3, headers, 6));
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &dir.mem, block, len, capture, &c), 0);
  cr_assert_eq(c.count, 6);
  for (size_t i = 0; i < 6; i++) expect_field(&c, i, headers[i].name, headers[i].value);
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, v2_round_trip_maps_pseudo_headers_both_ways) {
  static const speedy_header headers[] = {H(":status", "200 OK"), H(":version", "HTTP/1.1"),
                                          H("content-type", "text/html")};
  direction dir;
  direction_init(&dir, 2);
  const uint8_t *block;
  size_t len;
  send_block(&dir, headers, 3, &block, &len);
  cr_assert_eq(len, spdy_hdblock_serialised_size(2, headers, 3));
  cr_assert(contains(block, len, "\0\6status", 8), "v2 name on the wire");
  cr_assert_not(contains(block, len, ":status", 7), "no v3 name on the wire");
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(2, &dir.mem, block, len, capture, &c), 0);
  cr_assert_eq(c.count, 3);
  expect_field(&c, 0, ":status", "200 OK");
  expect_field(&c, 1, ":version", "HTTP/1.1");
  expect_field(&c, 2, "content-type", "text/html");
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, joined_values_come_back_one_call_each_in_order) {
  static const speedy_header headers[] = {H("via", "1"), H("b", "x"), H("via", "2"), H("via", "3")};
  direction dir;
  direction_init(&dir, 3);
  const uint8_t *block;
  size_t len;
  send_block(&dir, headers, 4, &block, &len);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &dir.mem, block, len, capture, &c), 0);
  cr_assert_eq(c.count, 4);
  expect_field(&c, 0, "via", "1");
  expect_field(&c, 1, "via", "2");
  expect_field(&c, 2, "via", "3");
  expect_field(&c, 3, "b", "x");
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

/* Both ends share one stream per direction: every block depends on all before it. */
static void many_blocks_through_one_context(int version) {
  direction dir;
  direction_init(&dir, version);
  size_t first_len = 0, last_len = 0;
  for (int i = 0; i < 50; i++) {
    char path[32];
    int path_len = snprintf(path, sizeof(path), "/item/%d", i);
    speedy_header headers[] = {H(":method", "GET"),
                               {":path", 5, path, (size_t)path_len},
                               H(":host", "example.org"),
                               H("cookie", "session=0123456789abcdef"),
                               H("accept-language", "en-GB,en;q=0.8")};
    speedy_buf_reset(&dir.out);
    cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, headers, 5), 0);
    if (i == 0) first_len = speedy_buf_len(&dir.out);
    last_len = speedy_buf_len(&dir.out);
    const uint8_t *block;
    size_t len;
    cr_assert_eq(spdy_hdblock_inflate(&dir.inflater, &dir.mem, speedy_buf_head(&dir.out),
                                      speedy_buf_len(&dir.out), &block, &len),
                 0, "block %d", i);
    captured c = {0};
    cr_assert_eq(spdy_hdblock_parse(version, &dir.mem, block, len, capture, &c), 0);
    cr_assert_eq(c.count, 5);
    expect_field(&c, 1, ":path", path);
    expect_field(&c, 3, "cookie", "session=0123456789abcdef");
  }
  cr_expect_lt(last_len * 2, first_len, "later blocks reuse the context (%zu vs %zu bytes)",
               last_len, first_len);
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, v3_fifty_blocks_in_sequence_share_the_context) { many_blocks_through_one_context(3); }

Test(hdblock, v2_fifty_blocks_in_sequence_share_the_context) { many_blocks_through_one_context(2); }

Test(hdblock, block_from_plain_zlib_with_the_dictionary_inflates) {
  for (int version = 2; version <= 3; version++) {
    const uint8_t *dict = version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
    size_t dict_len = version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
    static const uint8_t v3_plain[] = "\0\0\0\2\0\0\0\7:status\0\0\0\3"
                                      "200"
                                      "\0\0\0\3via\0\0\0\3a\0b";
    static const uint8_t v2_plain[] = "\0\2\0\6status\0\3"
                                      "200\0\3via\0\3a\0b";
    const uint8_t *plain = version == 2 ? v2_plain : v3_plain;
    size_t plain_len = version == 2 ? sizeof(v2_plain) - 1 : sizeof(v3_plain) - 1;
    uint8_t compressed[256];
    size_t compressed_len =
        plain_zlib_compress(dict, dict_len, plain, plain_len, compressed, sizeof(compressed));
    speedy_mem mem;
    test_alloc_mem(&mem);
    spdy_hdblock_inflater inf;
    cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, version, MAX_BLOCK), 0);
    const uint8_t *block;
    size_t len;
    cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, compressed, compressed_len, &block, &len), 0);
    cr_assert_eq(len, plain_len);
    cr_assert_eq(memcmp(block, plain, len), 0);
    captured c = {0};
    cr_assert_eq(spdy_hdblock_parse(version, &mem, block, len, capture, &c), 0);
    cr_assert_eq(c.count, 3);
    expect_field(&c, 0, ":status", "200");
    expect_field(&c, 1, "via", "a");
    expect_field(&c, 2, "via", "b");
    spdy_hdblock_inflater_free(&inf, &mem);
  }
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, every_deflate_setting_round_trips) {
  static const speedy_header headers[] = {H(":method", "POST"), H(":path", "/upload"),
                                          H("content-type", "application/octet-stream")};
  static const int levels[] = {0, 1, 6, 9};
  for (size_t l = 0; l < 4; l++)
    for (int window_bits = 9; window_bits <= 15; window_bits += 3)
      for (int mem_level = 1; mem_level <= 9; mem_level += 4) {
        speedy_mem mem;
        test_alloc_mem(&mem);
        spdy_hdblock_deflater d;
        spdy_hdblock_inflater inf;
        cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, levels[l], window_bits, mem_level), 0);
        cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, MAX_BLOCK), 0);
        speedy_buf out;
        speedy_buf_init(&out, 1 << 16);
        for (int i = 0; i < 3; i++) {
          speedy_buf_reset(&out);
          cr_assert_eq(spdy_hdblock_deflate(&d, &mem, &out, headers, 3), 0);
          const uint8_t *block;
          size_t len;
          cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, speedy_buf_head(&out), speedy_buf_len(&out),
                                            &block, &len),
                       0, "level %d windowBits %d memLevel %d", levels[l], window_bits, mem_level);
          size_t n = 0;
          cr_assert_eq(spdy_hdblock_parse(3, &mem, block, len, count_only, &n), 0);
          cr_assert_eq(n, 3);
        }
        speedy_buf_free(&out, &mem);
        spdy_hdblock_deflater_free(&d);
        spdy_hdblock_inflater_free(&inf, &mem);
        cr_assert_eq(test_alloc_live(), 0);
      }
}

Test(hdblock, large_value_spans_many_chunks) {
  size_t value_len = 60000;
  char *value = malloc(value_len);
  cr_assert_not_null(value);
  for (size_t i = 0; i < value_len; i++) value[i] = (char)('a' + (i * 7919 % 26));
  speedy_header headers[] = {{"cookie", 6, value, value_len}, H("x", "y")};
  direction dir;
  direction_init(&dir, 3);
  const uint8_t *block;
  size_t len;
  send_block(&dir, headers, 2, &block, &len);
  cr_assert_eq(len, 4 + 4 + 6 + 4 + value_len + 4 + 1 + 4 + 1);
  cr_assert_eq(memcmp(block + 18, value, value_len), 0);
  direction_free(&dir);
  free(value);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, hundreds_of_fields_with_repeats_round_trip) {
  enum { N = 600 };
  static speedy_header headers[N];
  static char names[N][16];
  for (size_t i = 0; i < N; i++) {
    /* 200 names, each three times, interleaved */
    int len = snprintf(names[i], sizeof(names[i]), "x-field-%zu", (size_t)(i % 200));
    headers[i] = (speedy_header){names[i], (size_t)len, names[i] + 2, (size_t)len - 2};
  }
  for (int version = 2; version <= 3; version++) {
    direction dir;
    direction_init(&dir, version);
    const uint8_t *block;
    size_t len;
    send_block(&dir, headers, N, &block, &len);
    cr_assert_eq(len, spdy_hdblock_serialised_size(version, headers, N));
    size_t width = version == 2 ? 2 : 4;
    cr_assert_eq(block[width - 1], 200 % 256, "200 distinct names");
    cr_assert_eq(block[width - 2], 0);
    size_t emitted = 0;
    cr_assert_eq(spdy_hdblock_parse(version, &dir.mem, block, len, count_only, &emitted), 0);
    cr_assert_eq(emitted, N);
    direction_free(&dir);
  }
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- laid out at submit, compressed at send ---------------------------------------- */

/* A session lays a list out when it is submitted and compresses it when sent: the bytes
 * must be those of compressing the list itself, block after block on one context. */
Test(hdblock, serialised_then_deflated_equals_deflating_the_list) {
  enum { N = 40 };
  static speedy_header big[N];
  static char names[N][16];
  for (size_t i = 0; i < N; i++) { /* more fields than the pairwise grouping takes */
    int len = snprintf(names[i], sizeof(names[i]), "x-f-%zu", i % 13);
    big[i] = (speedy_header){names[i], (size_t)len, names[i] + 1, (size_t)len - 1};
  }
  speedy_header request[] = {H(":method", "GET"),       H(":path", "/a?b=c"),
                             H(":version", "HTTP/1.1"), H(":host", "example.test"),
                             H(":scheme", "https"),     H("cookie", "a=1"),
                             H("cookie", "b=2"),        H("accept", "*/*")};
  speedy_header reply[] = {H(":status", "200 OK"), H(":version", "HTTP/1.1"), H("x", ""),
                           H("set-cookie", "s=1"), H("set-cookie", "t=2")};
  struct {
    const speedy_header *h;
    size_t n;
  } blocks[] = {{request, 8}, {reply, 5}, {big, N}, {request, 8}, {NULL, 0}, {reply, 5}};
  for (int version = 2; version <= 3; version++) {
    speedy_mem mem;
    test_alloc_mem(&mem);
    spdy_hdblock_deflater from_list, from_block;
    cr_assert_eq(spdy_hdblock_deflater_init(&from_list, &mem, version, 6, 13, 4), 0);
    cr_assert_eq(spdy_hdblock_deflater_init(&from_block, &mem, version, 6, 13, 4), 0);
    speedy_buf a, b;
    speedy_buf_init(&a, 1 << 20);
    speedy_buf_init(&b, 1 << 20);
    for (size_t k = 0; k < sizeof(blocks) / sizeof(blocks[0]); k++) {
      const speedy_header *h = blocks[k].h;
      size_t n = blocks[k].n;
      if (version == 2 && h == reply) n = 2; /* SPDY/2 refuses the empty value */
      size_t len = 0;
      cr_assert_eq(spdy_hdblock_measure(version, &mem, h, n, &len), 0, "v%d block %zu", version, k);
      cr_assert_eq(len, spdy_hdblock_serialised_size(version, h, n));
      uint8_t *flat = malloc(len);
      cr_assert_not_null(flat);
      cr_assert_eq(spdy_hdblock_serialise(version, &mem, h, n, flat, len), 0);
      /* Too little or too much room is refused, not overrun or left half-filled. */
      cr_assert_eq(spdy_hdblock_serialise(version, &mem, h, n, flat, len - 1),
                   SPEEDY_ERR_INVALID_ARGUMENT);
      speedy_buf_reset(&a);
      speedy_buf_reset(&b);
      cr_assert_eq(spdy_hdblock_deflate(&from_list, &mem, &a, h, n), 0);
      cr_assert_eq(spdy_hdblock_deflate_serialised(&from_block, &mem, &b, flat, len), 0);
      cr_assert_eq(speedy_buf_len(&a), speedy_buf_len(&b), "v%d block %zu: %zu vs %zu bytes",
                   version, k, speedy_buf_len(&a), speedy_buf_len(&b));
      cr_assert_eq(memcmp(speedy_buf_head(&a), speedy_buf_head(&b), speedy_buf_len(&a)), 0,
                   "v%d block %zu differs", version, k);
      free(flat);
    }
    speedy_buf_free(&a, &mem);
    speedy_buf_free(&b, &mem);
    spdy_hdblock_deflater_free(&from_list);
    spdy_hdblock_deflater_free(&from_block);
  }
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- what deflate refuses, before zlib is touched ----------------------------------- */

/* A refused block must leave the stream as it was: the next block still inflates. */
static void refused_then_stream_still_usable(int version, const speedy_header *bad, size_t n,
                                             int expected) {
  static const speedy_header good[] = {H(":method", "GET")};
  direction dir;
  direction_init(&dir, version);
  const uint8_t *block;
  size_t len;
  send_block(&dir, good, 1, &block, &len);
  cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, bad, n), expected);
  cr_assert_eq(speedy_buf_len(&dir.out), 0, "nothing appended");
  send_block(&dir, good, 1, &block, &len);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(version, &dir.mem, block, len, capture, &c), 0);
  expect_field(&c, 0, ":method", "GET");
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, deflate_refuses_empty_name) {
  static const speedy_header bad[] = {H("a", "1"), H("", "x")};
  refused_then_stream_still_usable(3, bad, 2, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, deflate_refuses_upper_case_name) {
  static const speedy_header bad[] = {H("Content-Type", "text/plain")};
  refused_then_stream_still_usable(3, bad, 1, SPEEDY_ERR_INVALID_HEADER);
  refused_then_stream_still_usable(2, bad, 1, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, deflate_refuses_nul_in_name) {
  static const speedy_header bad[] = {{"a\0b", 3, "v", 1}};
  refused_then_stream_still_usable(3, bad, 1, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, deflate_refuses_nul_in_submitted_value) {
  static const speedy_header bad[] = {{"a", 1, "x\0y", 3}};
  refused_then_stream_still_usable(3, bad, 1, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, deflate_refuses_empty_value_of_repeated_name) {
  static const speedy_header bad[] = {H("via", "a"), H("via", "")};
  refused_then_stream_still_usable(3, bad, 2, SPEEDY_ERR_INVALID_HEADER);
}

/* A receiver refuses a pseudo-header with NUL-separated values (it would be delivered
 * twice), so the sender must not join repeated pseudo-headers into one. */
Test(hdblock, deflate_refuses_repeated_pseudo_header) {
  static const speedy_header bad[] = {H(":method", "GET"), H(":path", "/"), H(":method", "PUT")};
  refused_then_stream_still_usable(3, bad, 3, SPEEDY_ERR_INVALID_HEADER);
}

/* SPDY/2: both spellings of the host reach the receiver as :host. */
Test(hdblock, v2_deflate_refuses_repeated_mapped_name) {
  static const speedy_header bad[] = {H(":host", "a"), H("host", "b")};
  refused_then_stream_still_usable(2, bad, 2, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, v2_deflate_refuses_empty_value) {
  static const speedy_header bad[] = {H("pragma", "")};
  refused_then_stream_still_usable(2, bad, 1, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, v2_deflate_refuses_value_over_65535_bytes) {
  static char value[65536];
  memset(value, 'v', sizeof(value));
  speedy_header bad[] = {{"a", 1, value, sizeof(value)}};
  refused_then_stream_still_usable(2, bad, 1, SPEEDY_ERR_INVALID_HEADER);
}

Test(hdblock, v2_deflate_refuses_joined_value_over_65535_bytes) {
  static char value[40000];
  memset(value, 'v', sizeof(value));
  speedy_header bad[] = {{"a", 1, value, sizeof(value)}, {"a", 1, value, sizeof(value)}};
  refused_then_stream_still_usable(2, bad, 2, SPEEDY_ERR_INVALID_HEADER);
}

/* The worst case for n serialised bytes, as hdblock.c computes it. */
static size_t worst_case(size_t n) { return n + (n + 7) / 8 + (n + 63) / 64 + 64; }

Test(hdblock, deflate_refuses_when_out_may_overflow_and_stream_stays_usable) {
  static const speedy_header headers[] = {H("a", "b")};
  direction dir;
  direction_init(&dir, 3);
  size_t serialised = spdy_hdblock_serialised_size(3, headers, 1);
  dir.out.limit = worst_case(serialised) - 1;
  cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, headers, 1),
               SPEEDY_ERR_FRAME_TOO_LARGE);
  cr_assert_eq(speedy_buf_len(&dir.out), 0);
  dir.out.limit = 1 << 20;
  const uint8_t *block;
  size_t len;
  send_block(&dir, headers, 1, &block, &len);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &dir.mem, block, len, capture, &c), 0);
  expect_field(&c, 0, "a", "b");
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

/* Random bytes do not compress: the output must still fit the bound at every setting. */
Test(hdblock, incompressible_block_fits_the_worst_case_bound) {
  static char value[20000];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof(value); i++) {
    x = x * 1103515245u + 12345u;
    value[i] = (char)(1 + (x >> 16) % 255);
  }
  speedy_header headers[] = {{"x", 1, value, sizeof(value)}};
  size_t limit = worst_case(spdy_hdblock_serialised_size(3, headers, 1));
  static const int levels[] = {0, 1, 9};
  for (size_t l = 0; l < 3; l++)
    for (int window_bits = 9; window_bits <= 15; window_bits += 6)
      for (int mem_level = 1; mem_level <= 9; mem_level += 8) {
        speedy_mem mem;
        test_alloc_mem(&mem);
        spdy_hdblock_deflater d;
        cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, levels[l], window_bits, mem_level), 0);
        speedy_buf out;
        speedy_buf_init(&out, limit);
        cr_assert_eq(spdy_hdblock_deflate(&d, &mem, &out, headers, 1), 0,
                     "level %d windowBits %d memLevel %d", levels[l], window_bits, mem_level);
        speedy_buf_free(&out, &mem);
        spdy_hdblock_deflater_free(&d);
        cr_assert_eq(test_alloc_live(), 0);
      }
}

Test(hdblock, deflate_allocates_nothing_per_block_for_ordinary_headers) {
  static const speedy_header headers[] = {H(":method", "GET"), H(":path", "/"), H("a", "1"),
                                          H("a", "2")};
  direction dir;
  direction_init(&dir, 3);
  cr_assert_eq(speedy_buf_reserve(&dir.out, &dir.mem, 4096), 0);
  size_t before = test_alloc_get()->total_allocs;
  for (int i = 0; i < 10; i++) {
    speedy_buf_reset(&dir.out);
    cr_assert_eq(spdy_hdblock_deflate(&dir.deflater, &dir.mem, &dir.out, headers, 4), 0);
  }
  cr_assert_eq(test_alloc_get()->total_allocs, before);
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- inflater memory ---------------------------------------------------------------- */

Test(hdblock, inflate_scratch_shrinks_after_a_large_block) {
  static char value[30000];
  memset(value, 'q', sizeof(value));
  speedy_header big[] = {{"x", 1, value, sizeof(value)}};
  static const speedy_header small[] = {H("a", "b")};
  direction dir;
  direction_init(&dir, 3);
  const uint8_t *block;
  size_t len;
  send_block(&dir, big, 1, &block, &len);
  cr_assert_geq(dir.inflater.scratch.capacity, sizeof(value));
  send_block(&dir, small, 1, &block, &len);
  cr_assert_leq(dir.inflater.scratch.capacity, 4096, "scratch kept at %zu bytes",
                dir.inflater.scratch.capacity);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &dir.mem, block, len, capture, &c), 0);
  expect_field(&c, 0, "a", "b");
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

/* ---- parsing ------------------------------------------------------------------------ */

Test(hdblock, v2_name_and_its_colon_form_together_are_a_duplicate) {
  static const uint8_t block[] = "\0\3"
                                 "\0\3url\0\2/a"
                                 "\0\6method\0\4HEAD"
                                 "\0\7:method\0\1x";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(2, &mem, block, sizeof(block) - 1, capture, &c),
               SPEEDY_ERR_INVALID_HEADER, "method and :method are the same name");
  cr_assert_eq(c.count, 0);
}

Test(hdblock, v2_colon_names_are_refused) {
  static const uint8_t block[] = "\0\1\0\7:method\0\3GET";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(2, &mem, block, sizeof(block) - 1, capture, &c),
               SPEEDY_ERR_INVALID_HEADER, "SPDY/2 names never start with ':'");
  cr_assert_eq(c.count, 0);
}

Test(hdblock, v2_parse_maps_names_back) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  static const uint8_t ok[] = "\0\4"
                              "\0\3url\0\2/a"
                              "\0\6status\0\3"
                              "200"
                              "\0\6custom\0\1x"
                              "\0\7version\0\10HTTP/1.1";
  cr_assert_eq(spdy_hdblock_parse(2, &mem, ok, sizeof(ok) - 1, capture, &c), 0);
  cr_assert_eq(c.count, 4);
  expect_field(&c, 0, ":path", "/a");
  expect_field(&c, 1, ":status", "200");
  expect_field(&c, 2, "custom", "x");
  expect_field(&c, 3, ":version", "HTTP/1.1");
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, v2_host_maps_to_colon_host) {
  static const uint8_t block[] = "\0\1\0\4host\0\1h";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(2, &mem, block, sizeof(block) - 1, capture, &c), 0);
  expect_field(&c, 0, ":host", "h");
}

Test(hdblock, v3_parse_keeps_names_as_sent) {
  static const uint8_t block[] = "\0\0\0\2"
                                 "\0\0\0\7:method\0\0\0\3GET"
                                 "\0\0\0\3url\0\0\0\1u";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, capture, &c), 0);
  cr_assert_eq(c.count, 2);
  expect_field(&c, 0, ":method", "GET");
  expect_field(&c, 1, "url", "u");
}

Test(hdblock, v3_parse_emits_empty_value_once) {
  static const uint8_t block[] = "\0\0\0\1\0\0\0\6pragma\0\0\0\0";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, capture, &c), 0);
  cr_assert_eq(c.count, 1);
  expect_field(&c, 0, "pragma", "");
  cr_assert_eq(c.value_lens[0], 0);
}

Test(hdblock, parse_splits_nul_joined_values) {
  static const uint8_t block[] = "\0\0\0\1\0\0\0\1a\0\0\0\11xx\0y\0zzzz";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, capture, &c), 0);
  cr_assert_eq(c.count, 3);
  expect_field(&c, 0, "a", "xx");
  expect_field(&c, 1, "a", "y");
  expect_field(&c, 2, "a", "zzzz");
}

Test(hdblock, parse_emits_nothing_for_a_block_invalid_at_its_end) {
  static const uint8_t block[] = "\0\0\0\2"
                                 "\0\0\0\1a\0\0\0\1x"
                                 "\0\0\0\1B\0\0\0\1y";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, capture, &c),
               SPEEDY_ERR_INVALID_HEADER);
  cr_assert_eq(c.count, 0, "validated before anything is emitted");
}

Test(hdblock, emitter_error_stops_parse_and_is_returned) {
  static const uint8_t block[] = "\0\0\0\2"
                                 "\0\0\0\1a\0\0\0\3x\0y"
                                 "\0\0\0\1b\0\0\0\1z";
  speedy_mem mem;
  test_alloc_mem(&mem);
  captured c = {0};
  c.fail_at = 2;
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, capture, &c), -42);
  cr_assert_eq(c.count, 2);
}

Test(hdblock, parse_allocates_nothing_for_ordinary_blocks) {
  static const uint8_t block[] = "\0\0\0\3"
                                 "\0\0\0\1a\0\0\0\1x"
                                 "\0\0\0\1b\0\0\0\1y"
                                 "\0\0\0\1c\0\0\0\1z";
  speedy_mem mem;
  test_alloc_mem(&mem);
  size_t n = 0;
  cr_assert_eq(spdy_hdblock_parse(3, &mem, block, sizeof(block) - 1, count_only, &n), 0);
  cr_assert_eq(n, 3);
  cr_assert_eq(test_alloc_get()->total_allocs, 0);
}

Test(hdblock, serialised_size_counts_joined_names_once) {
  static const speedy_header headers[] = {H(":path", "/"), H("a", "1"), H("a", "22")};
  /* v3: 4 + (4+5+4+1) + (4+1+4+1+1+2) */
  cr_assert_eq(spdy_hdblock_serialised_size(3, headers, 3), 4 + 14 + 13);
  /* v2: 2 + (2+3+2+1) + (2+1+2+1+1+2) */
  cr_assert_eq(spdy_hdblock_serialised_size(2, headers, 3), 2 + 8 + 9);
  cr_assert_eq(spdy_hdblock_serialised_size(3, NULL, 0), 4);
}

/* ---- arguments ---------------------------------------------------------------------- */

Test(hdblock, init_refuses_impossible_arguments) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_deflater d;
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 4, 6, 11, 5), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 10, 11, 5), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, 8, 5), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, 16, 5), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, 11, 0), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, 11, 10), SPEEDY_ERR_INVALID_ARGUMENT);
  spdy_hdblock_deflater_free(&d); /* harmless after a failed init */
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 1, MAX_BLOCK), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 0), SPEEDY_ERR_INVALID_ARGUMENT);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(spdy_hdblock_parse(5, &mem, (const uint8_t *)"", 0, count_only, NULL),
               SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(hdblock, free_twice_is_harmless) {
  direction dir;
  direction_init(&dir, 3);
  direction_free(&dir);
  direction_free(&dir);
  cr_assert_eq(test_alloc_live(), 0);
}

/* The inflater allocates the window the peer's zlib header names, not always 32 KiB: an idle
 * session's memory is mostly zlib state. */
static size_t inflater_bytes_after_one_block(int window_bits) {
  static const speedy_header headers[] = {H(":method", "GET"), H(":path", "/")};
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_deflater d;
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, window_bits, 4), 0);
  speedy_buf out;
  speedy_buf_init(&out, 1 << 16);
  cr_assert_eq(spdy_hdblock_deflate(&d, &mem, &out, headers, 2), 0);
  spdy_hdblock_deflater_free(&d);
  size_t before = test_alloc_get()->live_bytes;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, MAX_BLOCK), 0);
  const uint8_t *block;
  size_t len;
  cr_assert_eq(
      spdy_hdblock_inflate(&inf, &mem, speedy_buf_head(&out), speedy_buf_len(&out), &block, &len),
      0);
  size_t used = test_alloc_get()->live_bytes - before;
  spdy_hdblock_inflater_free(&inf, &mem);
  speedy_buf_free(&out, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  return used;
}

Test(hdblock, inflater_window_follows_the_peers_zlib_header) {
  size_t small = inflater_bytes_after_one_block(13);
  size_t large = inflater_bytes_after_one_block(15);
  /* A 2^13 window is 8 KiB, the largest 32 KiB; the rest (state, scratch) is the same. */
  cr_assert_geq(large - small, 24 * 1024, "window 2^13: %zu bytes, 2^15: %zu", small, large);
}

Test(hdblock, reference_beyond_the_declared_window_is_a_compression_error) {
  /* A peer compressing with a 32 KiB window but declaring 512 bytes in its zlib header:
   * the repeated 2,000-byte value is a match 2,000 bytes back, beyond what it declared. */
  char value[2000];
  for (size_t i = 0; i < sizeof(value); i++) value[i] = (char)('a' + (i * 7919 % 26));
  uint8_t block[2 * (4 + 6 + 4 + sizeof(value)) + 4];
  size_t n = 0;
  block[n++] = 0, block[n++] = 0, block[n++] = 0, block[n++] = 2;
  for (int k = 0; k < 2; k++) {
    block[n++] = 0, block[n++] = 0, block[n++] = 0, block[n++] = 6;
    memcpy(block + n, k ? "x-bbbb" : "x-aaaa", 6);
    n += 6;
    block[n++] = 0, block[n++] = 0, block[n++] = (uint8_t)(sizeof(value) >> 8);
    block[n++] = (uint8_t)(sizeof(value) & 0xff);
    memcpy(block + n, value, sizeof(value));
    n += sizeof(value);
  }
  uint8_t wire[8192];
  size_t wire_len = plain_zlib_compress(spdy_hdblock_dict_v3, spdy_hdblock_dict_v3_len, block, n,
                                        wire, sizeof(wire));
  cr_assert_lt(wire_len, n - 1000, "the second value must be a back reference");
  /* CMF: deflate, CINFO 1 (2^9 bytes); FLG keeps FDICT and its level, FCHECK recomputed. */
  wire[0] = 0x18;
  wire[1] = (uint8_t)(wire[1] & 0xe0);
  wire[1] = (uint8_t)(wire[1] + (31 - ((wire[0] * 256u + wire[1]) % 31)) % 31);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, MAX_BLOCK), 0);
  const uint8_t *out;
  size_t out_len;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, wire, wire_len, &out, &out_len),
               SPEEDY_ERR_COMPRESSION);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
}

/* Inflates one block of a stream with zlib's own wrapper (dictionary on demand). */
static size_t wrapper_inflate(z_stream *zs, const uint8_t *dict, size_t dict_len, const uint8_t *in,
                              size_t in_len, uint8_t *out, size_t cap) {
  zs->next_in = (Bytef *)in;
  zs->avail_in = (uInt)in_len;
  zs->next_out = out;
  zs->avail_out = (uInt)cap;
  int rv = inflate(zs, Z_SYNC_FLUSH);
  if (rv == Z_NEED_DICT) {
    cr_assert_eq(inflateSetDictionary(zs, dict, (uInt)dict_len), Z_OK);
    rv = inflate(zs, Z_SYNC_FLUSH);
  }
  cr_assert(rv == Z_OK || rv == Z_BUF_ERROR, "reference inflate: %d", rv);
  cr_assert_eq(zs->avail_in, 0);
  cr_assert_gt(zs->avail_out, 0);
  return cap - zs->avail_out;
}

/* The deflater runs zlib raw and writes the zlib header itself (no Adler-32 over every
 * byte): its stream must be byte for byte what zlib's own wrapper writes with the same
 * settings — header, dictionary id and every block — for each level class and window. */
Test(hdblock, raw_deflate_writes_what_the_zlib_wrapper_writes) {
  static const int levels[] = {0, 1, 3, 6, 9};
  speedy_header headers[] = {H(":method", "GET"),       H(":path", "/index.html"),
                             H(":version", "HTTP/1.1"), H(":host", "www.example.test"),
                             H(":scheme", "https"),     H("user-agent", "speedy-test/1.0"),
                             H("cookie", "a=b; c=d")};
  for (int version = 2; version <= 3; version++) {
    const uint8_t *dict = version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
    size_t dict_len = version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
    for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
      for (int window = 9; window <= 15; window += 3) {
        speedy_mem mem;
        test_alloc_mem(&mem);
        spdy_hdblock_deflater ours;
        cr_assert_eq(spdy_hdblock_deflater_init(&ours, &mem, version, levels[l], window, 5), 0);
        z_stream ref, reader;
        memset(&ref, 0, sizeof(ref));
        memset(&reader, 0, sizeof(reader));
        cr_assert_eq(deflateInit2(&ref, levels[l], Z_DEFLATED, window, 5, Z_DEFAULT_STRATEGY),
                     Z_OK);
        cr_assert_eq(deflateSetDictionary(&ref, dict, (uInt)dict_len), Z_OK);
        cr_assert_eq(inflateInit(&reader), Z_OK);
        speedy_buf out;
        speedy_buf_init(&out, 1 << 20);
        for (int block = 0; block < 4; block++) {
          headers[1].value = block % 2 ? "/a.css" : "/index.html";
          headers[1].value_len = strlen(headers[1].value);
          speedy_buf_reset(&out);
          cr_assert_eq(spdy_hdblock_deflate(&ours, &mem, &out, headers, 7), 0);
          uint8_t plain[2048], expected[4096];
          size_t plain_len = wrapper_inflate(&reader, dict, dict_len, speedy_buf_head(&out),
                                             speedy_buf_len(&out), plain, sizeof(plain));
          cr_assert_eq(plain_len, spdy_hdblock_serialised_size(version, headers, 7));
          ref.next_in = plain;
          ref.avail_in = (uInt)plain_len;
          ref.next_out = expected;
          ref.avail_out = sizeof(expected);
          cr_assert_eq(deflate(&ref, Z_SYNC_FLUSH), Z_OK);
          size_t expected_len = sizeof(expected) - ref.avail_out;
          cr_assert(expected_len == speedy_buf_len(&out) &&
                        memcmp(expected, speedy_buf_head(&out), expected_len) == 0,
                    "v%d level %d window %d block %d: %zu bytes, zlib's wrapper %zu", version,
                    levels[l], window, block, speedy_buf_len(&out), expected_len);
        }
        speedy_buf_free(&out, &mem);
        deflateEnd(&ref);
        inflateEnd(&reader);
        spdy_hdblock_deflater_free(&ours);
        cr_assert_eq(test_alloc_live(), 0);
      }
    }
  }
}
