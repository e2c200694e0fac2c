/* test_hostile_hdblock.c — header blocks from a peer that means harm (lib/hdblock.c):
 * zlib bombs, corrupt, truncated and wrongly-keyed streams, lying counts and lengths,
 * forbidden names and values, blocks with tens of thousands of fields, and allocation
 * failure at every step.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "hdblock.h"
#include "testutil.h"

/* ---- helpers ------------------------------------------------------------------------ */

/* A serialised (uncompressed) block under construction, in plain test memory. */
typedef struct block_builder {
  int version;
  uint8_t *bytes;
  size_t len;
  size_t cap;
} block_builder;

static void builder_put(block_builder *b, const void *bytes, size_t len) {
  if (b->len + len > b->cap) {
    b->cap = (b->len + len) * 2;
    b->bytes = realloc(b->bytes, b->cap);
    cr_assert_not_null(b->bytes);
  }
  if (len > 0) memcpy(b->bytes + b->len, bytes, len);
  b->len += len;
}

static void builder_length(block_builder *b, uint32_t n) {
  uint8_t bytes[4] = {(uint8_t)(n >> 24), (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};
  if (b->version == 2)
    builder_put(b, bytes + 2, 2);
  else
    builder_put(b, bytes, 4);
}

static void builder_field(block_builder *b, const void *name, size_t name_len, const void *value,
                          size_t value_len) {
  builder_length(b, (uint32_t)name_len);
  builder_put(b, name, name_len);
  builder_length(b, (uint32_t)value_len);
  builder_put(b, value, value_len);
}

static block_builder builder_start(int version, uint32_t count) {
  block_builder b = {version, NULL, 0, 0};
  builder_length(&b, count);
  return b;
}

/* One field with C-string name and value. */
static block_builder block_one(int version, const char *name, size_t name_len, const char *value,
                               size_t value_len) {
  block_builder b = builder_start(version, 1);
  builder_field(&b, name, name_len, value, value_len);
  return b;
}

static int count_emit(void *ctx, const speedy_header *header) {
  (void)header;
  (*(size_t *)ctx)++;
  return 0;
}

static int parse_block(const block_builder *b, size_t *emitted) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  size_t count = 0;
  int rv = spdy_hdblock_parse(b->version, &mem, b->bytes, b->len, count_emit, &count);
  if (emitted != NULL) *emitted = count;
  cr_assert_eq(test_alloc_live(), 0);
  return rv;
}

static void expect_invalid(block_builder b, const char *what) {
  size_t emitted = 0;
  int rv = parse_block(&b, &emitted);
  cr_expect_eq(rv, SPEEDY_ERR_INVALID_HEADER, "%s: parse returned %d", what, rv);
  cr_expect_eq(emitted, 0, "%s: nothing emitted", what);
  free(b.bytes);
}

/* Compresses in with a peer's own zlib stream: the dictionary, then deflate(flush).
 * Returns the compressed bytes (malloc'd) and their length. */
static uint8_t *peer_compress(const uint8_t *dict, size_t dict_len, const uint8_t *in,
                              size_t in_len, int flush, size_t *out_len) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  cr_assert_eq(deflateInit2(&zs, 9, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY), Z_OK);
  if (dict != NULL) cr_assert_eq(deflateSetDictionary(&zs, dict, (uInt)dict_len), Z_OK);
  size_t cap = deflateBound(&zs, in_len) + 64;
  uint8_t *out = malloc(cap);
  cr_assert_not_null(out);
  zs.next_in = (Bytef *)in;
  zs.avail_in = (uInt)in_len;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  int rv = deflate(&zs, flush);
  cr_assert(rv == Z_OK || rv == Z_STREAM_END, "deflate: %d", rv);
  cr_assert_eq(zs.avail_in, 0);
  *out_len = cap - zs.avail_out;
  deflateEnd(&zs);
  return out;
}

static const uint8_t *dict_of(int version) {
  return version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
}
static size_t dict_len_of(int version) {
  return version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
}

/* A small valid block, compressed as a peer would (sync flush). */
static uint8_t *valid_compressed(int version, size_t *len) {
  block_builder b = builder_start(version, 2);
  builder_field(&b, ":method", 7, "GET", 3);
  builder_field(&b, "user-agent", 10, "hostile/1.0 (testing)", 21);
  uint8_t *out =
      peer_compress(dict_of(version), dict_len_of(version), b.bytes, b.len, Z_SYNC_FLUSH, len);
  free(b.bytes);
  return out;
}

/* Inflates in with a fresh inflater; returns the result and frees everything. */
static int inflate_fresh(int version, uint32_t max_block, const uint8_t *in, size_t in_len) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, version, max_block), 0);
  const uint8_t *out = NULL;
  size_t out_len = 0;
  int rv = spdy_hdblock_inflate(&inf, &mem, in, in_len, &out, &out_len);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  return rv;
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* ---- zlib bombs --------------------------------------------------------------------- */

/* 10 MB of one byte in a single value: about 10 KB compressed. */
static uint8_t *bomb(int version, size_t *len) {
  size_t value_len = 10 * 1000 * 1000;
  if (version == 2) value_len = 65535; /* a v2 length field holds no more; still 16x */
  block_builder b = builder_start(version, 1);
  builder_length(&b, 1);
  builder_put(&b, "x", 1);
  builder_length(&b, (uint32_t)value_len);
  uint8_t *zeros = calloc(1, value_len);
  cr_assert_not_null(zeros);
  builder_put(&b, zeros, value_len);
  free(zeros);
  uint8_t *out =
      peer_compress(dict_of(version), dict_len_of(version), b.bytes, b.len, Z_SYNC_FLUSH, len);
  free(b.bytes);
  return out;
}

Test(hostile_hdblock, zlib_bomb_is_refused_before_64KiB_inflated, .timeout = 20) {
  size_t len;
  uint8_t *in = bomb(3, &len);
  cr_assert_lt(len, 20000, "the bomb is small: %zu bytes", len);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 65536), 0);
  const uint8_t *out;
  size_t out_len;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, in, len, &out, &out_len),
               SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  cr_assert_leq(inf.zs.total_out, 65536 + 1, "inflated %lu bytes", inf.zs.total_out);
  cr_assert_lt(inf.zs.total_in, len, "stopped before the end of the bomb");
  cr_assert_lt(test_alloc_get()->peak_bytes, 2 * 65536, "peak %zu bytes",
               test_alloc_get()->peak_bytes);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  free(in);
}

Test(hostile_hdblock, zlib_bomb_with_small_cap_costs_only_the_cap, .timeout = 20) {
  size_t len;
  uint8_t *in = bomb(3, &len);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 4096), 0);
  const uint8_t *out;
  size_t out_len;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, in, len, &out, &out_len),
               SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  cr_assert_leq(inf.zs.total_out, 4096 + 1);
  cr_assert_leq(inf.scratch.capacity, 4096);
  /* zlib's own state and 32 KiB window are fixed costs; the block adds the cap at most. */
  cr_assert_lt(test_alloc_get()->peak_bytes, 48 * 1024 + 2 * 4096, "peak %zu bytes",
               test_alloc_get()->peak_bytes);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  free(in);
}

Test(hostile_hdblock, v2_zlib_bomb_is_refused, .timeout = 20) {
  size_t len;
  uint8_t *in = bomb(2, &len);
  cr_assert_eq(inflate_fresh(2, 16384, in, len), SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  free(in);
}

static block_builder block_of_size(int version, size_t size) {
  size_t width = version == 2 ? 2 : 4;
  size_t value_len = size - 3 * width - 1;
  char *value = malloc(value_len);
  cr_assert_not_null(value);
  memset(value, 'v', value_len);
  block_builder b = block_one(version, "x", 1, value, value_len);
  free(value);
  cr_assert_eq(b.len, size);
  return b;
}

Test(hostile_hdblock, block_of_exactly_the_cap_is_accepted) {
  block_builder b = block_of_size(3, 1000);
  size_t len;
  uint8_t *in = peer_compress(dict_of(3), dict_len_of(3), b.bytes, b.len, Z_SYNC_FLUSH, &len);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 1000), 0);
  const uint8_t *out;
  size_t out_len;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, in, len, &out, &out_len), 0);
  cr_assert_eq(out_len, 1000);
  cr_assert_eq(memcmp(out, b.bytes, 1000), 0);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  free(in);
  free(b.bytes);
}

Test(hostile_hdblock, block_one_byte_over_the_cap_is_refused) {
  block_builder b = block_of_size(3, 1001);
  size_t len;
  uint8_t *in = peer_compress(dict_of(3), dict_len_of(3), b.bytes, b.len, Z_SYNC_FLUSH, &len);
  cr_assert_eq(inflate_fresh(3, 1000, in, len), SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  free(in);
  free(b.bytes);
}

/* ---- broken zlib streams ------------------------------------------------------------ */

Test(hostile_hdblock, empty_compressed_block_is_a_compression_error) {
  cr_assert_eq(inflate_fresh(3, 65536, (const uint8_t *)"", 0), SPEEDY_ERR_COMPRESSION);
}

Test(hostile_hdblock, bytes_that_are_not_zlib_are_a_compression_error) {
  static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x01, 0x02};
  cr_assert_eq(inflate_fresh(3, 65536, garbage, sizeof(garbage)), SPEEDY_ERR_COMPRESSION);
}

Test(hostile_hdblock, zlib_header_with_bad_check_bits_is_a_compression_error) {
  size_t len;
  uint8_t *in = valid_compressed(3, &len);
  in[1] ^= 0x01; /* FCHECK no longer makes the header a multiple of 31 */
  cr_assert_eq(inflate_fresh(3, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, corrupt_deflate_data_is_a_compression_error) {
  size_t len;
  uint8_t *in = valid_compressed(3, &len);
  in[6] = 0x06; /* first block: BFINAL 0, BTYPE 11 (reserved) */
  cr_assert_eq(inflate_fresh(3, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, block_keyed_to_the_v2_dictionary_is_refused_by_v3) {
  size_t len;
  uint8_t *in = valid_compressed(2, &len);
  cr_assert_eq(inflate_fresh(3, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, block_keyed_to_the_v3_dictionary_is_refused_by_v2) {
  size_t len;
  uint8_t *in = valid_compressed(3, &len);
  cr_assert_eq(inflate_fresh(2, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, block_keyed_to_another_dictionary_is_refused) {
  static const uint8_t plain[] = "\0\0\0\1\0\0\0\1a\0\0\0\1b";
  size_t len;
  uint8_t *in = peer_compress((const uint8_t *)"not the spdy dictionary", 23, plain,
                              sizeof(plain) - 1, Z_SYNC_FLUSH, &len);
  cr_assert_eq(inflate_fresh(3, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, block_without_a_dictionary_still_inflates) {
  /* Not what the spec says, but unambiguous: zlib names no dictionary, so none is used. */
  static const uint8_t plain[] = "\0\0\0\1\0\0\0\1a\0\0\0\1b";
  size_t len;
  uint8_t *in = peer_compress(NULL, 0, plain, sizeof(plain) - 1, Z_SYNC_FLUSH, &len);
  cr_assert_eq(inflate_fresh(3, 65536, in, len), 0);
  free(in);
}

Test(hostile_hdblock, truncated_block_is_a_compression_error) {
  size_t len;
  uint8_t *in = valid_compressed(3, &len);
  cr_assert_eq(inflate_fresh(3, 65536, in, len), 0, "the whole block is fine");
  for (size_t cut = 1; cut <= 6; cut++)
    cr_expect_eq(inflate_fresh(3, 65536, in, len - cut), SPEEDY_ERR_COMPRESSION,
                 "block without its last %zu bytes", cut);
  cr_expect_eq(inflate_fresh(3, 65536, in, len / 2), SPEEDY_ERR_COMPRESSION, "half a block");
  free(in);
}

Test(hostile_hdblock, bytes_after_the_sync_flush_are_a_compression_error) {
  size_t len;
  uint8_t *in = valid_compressed(3, &len);
  uint8_t *longer = malloc(len + 1);
  cr_assert_not_null(longer);
  memcpy(longer, in, len);
  longer[len] = 0x00; /* starts another stored block that never completes */
  cr_assert_eq(inflate_fresh(3, 65536, longer, len + 1), SPEEDY_ERR_COMPRESSION);
  free(longer);
  free(in);
}

Test(hostile_hdblock, finished_zlib_stream_is_a_compression_error) {
  static const uint8_t plain[] = "\0\0\0\1\0\0\0\1a\0\0\0\1b";
  size_t len;
  uint8_t *in = peer_compress(dict_of(3), dict_len_of(3), plain, sizeof(plain) - 1, Z_FINISH, &len);
  cr_assert_eq(inflate_fresh(3, 65536, in, len), SPEEDY_ERR_COMPRESSION);
  free(in);
}

Test(hostile_hdblock, context_stays_unusable_after_an_error) {
  size_t len;
  uint8_t *good = valid_compressed(3, &len);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 65536), 0);
  const uint8_t *out;
  size_t out_len;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, good, len - 2, &out, &out_len),
               SPEEDY_ERR_COMPRESSION);
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, good, len, &out, &out_len), SPEEDY_ERR_COMPRESSION);
  spdy_hdblock_inflater_free(&inf, &mem);
  cr_assert_eq(test_alloc_live(), 0);
  free(good);
}

/* ---- counts and lengths that lie ---------------------------------------------------- */

Test(hostile_hdblock, count_larger_than_the_fields_present) {
  block_builder b = builder_start(3, 5);
  builder_field(&b, "a", 1, "b", 1);
  expect_invalid(b, "count 5, one field");
}

Test(hostile_hdblock, huge_count_is_refused_without_allocating) {
  block_builder b = builder_start(3, 0xffffffffu);
  builder_field(&b, "a", 1, "b", 1);
  size_t allocs = test_alloc_get()->total_allocs;
  expect_invalid(b, "count 2^32-1");
  cr_assert_eq(test_alloc_get()->total_allocs, allocs);
  block_builder b2 = builder_start(2, 0xffff);
  builder_field(&b2, "a", 1, "b", 1);
  expect_invalid(b2, "v2 count 65535");
}

Test(hostile_hdblock, count_just_past_what_fits_is_refused_without_allocating) {
  block_builder b = builder_start(3, 0);
  for (int i = 0; i < 100; i++) builder_field(&b, "name", 4, "v", 1);
  uint32_t count = (uint32_t)((b.len - 4) / (4 + 1 + 4) + 1); /* more than can fit */
  b.bytes[0] = (uint8_t)(count >> 24);
  b.bytes[1] = (uint8_t)(count >> 16);
  b.bytes[2] = (uint8_t)(count >> 8);
  b.bytes[3] = (uint8_t)count;
  size_t allocs = test_alloc_get()->total_allocs;
  expect_invalid(b, "count one past the most fields the bytes could hold");
  cr_assert_eq(test_alloc_get()->total_allocs, allocs, "no index for a lying count");
}

Test(hostile_hdblock, count_smaller_than_the_fields_present) {
  block_builder b = builder_start(3, 1);
  builder_field(&b, "a", 1, "b", 1);
  builder_field(&b, "c", 1, "d", 1);
  expect_invalid(b, "trailing field");
}

Test(hostile_hdblock, block_shorter_than_its_count_field) {
  block_builder b = {3, NULL, 0, 0};
  builder_put(&b, "\0\0\0", 3);
  expect_invalid(b, "three bytes");
  block_builder b2 = {2, NULL, 0, 0};
  builder_put(&b2, "\0", 1);
  expect_invalid(b2, "one byte (v2)");
  block_builder empty = {3, NULL, 0, 0};
  expect_invalid(empty, "empty block");
}

Test(hostile_hdblock, name_length_past_the_end) {
  block_builder b = builder_start(3, 1);
  builder_length(&b, 100);
  builder_put(&b, "abc", 3);
  expect_invalid(b, "name length 100, 3 bytes left");
  block_builder huge = builder_start(3, 1);
  builder_length(&huge, 0xffffffffu);
  builder_put(&huge, "abc\0\0\0\0", 7);
  expect_invalid(huge, "name length 2^32-1");
}

Test(hostile_hdblock, value_length_past_the_end) {
  block_builder b = builder_start(3, 1);
  builder_length(&b, 1);
  builder_put(&b, "a", 1);
  builder_length(&b, 0xfffffff0u);
  builder_put(&b, "xyz", 3);
  expect_invalid(b, "value length near 2^32");
  block_builder v2 = builder_start(2, 1);
  builder_length(&v2, 1);
  builder_put(&v2, "a", 1);
  builder_length(&v2, 0xffff);
  builder_put(&v2, "xyz", 3);
  expect_invalid(v2, "v2 value length 65535");
}

Test(hostile_hdblock, value_length_field_cut_short) {
  block_builder b = builder_start(3, 1);
  builder_length(&b, 1);
  builder_put(&b, "a", 1);
  builder_put(&b, "\0\0", 2);
  expect_invalid(b, "half a length field");
}

/* ---- names and values the spec forbids ---------------------------------------------- */

Test(hostile_hdblock, zero_length_name) {
  expect_invalid(block_one(3, "", 0, "v", 1), "empty name");
  expect_invalid(block_one(2, "", 0, "v", 1), "empty name (v2)");
}

Test(hostile_hdblock, upper_case_name) {
  expect_invalid(block_one(3, "Host", 4, "v", 1), "Host");
  expect_invalid(block_one(2, "accepT", 6, "v", 1), "accepT (v2)");
}

Test(hostile_hdblock, nul_in_name) { expect_invalid(block_one(3, "a\0b", 3, "v", 1), "a NUL b"); }

Test(hostile_hdblock, duplicate_names) {
  block_builder b = builder_start(3, 3);
  builder_field(&b, "a", 1, "1", 1);
  builder_field(&b, "b", 1, "2", 1);
  builder_field(&b, "a", 1, "3", 1);
  expect_invalid(b, "a twice");
}

Test(hostile_hdblock, v2_url_and_colon_path_are_duplicates) {
  block_builder b = builder_start(2, 2);
  builder_field(&b, "url", 3, "/a", 2);
  builder_field(&b, ":path", 5, "/b", 2);
  expect_invalid(b, "url and :path");
}

Test(hostile_hdblock, nul_at_value_start) {
  expect_invalid(block_one(3, "a", 1, "\0x", 2), "leading NUL");
}

Test(hostile_hdblock, nul_at_value_end) {
  expect_invalid(block_one(3, "a", 1, "x\0", 2), "trailing NUL");
}

Test(hostile_hdblock, doubled_nul_in_value) {
  expect_invalid(block_one(3, "a", 1, "x\0\0y", 4), "two NULs");
  expect_invalid(block_one(2, "a", 1, "x\0\0y", 4), "two NULs (v2)");
}

Test(hostile_hdblock, value_of_only_nul) {
  expect_invalid(block_one(3, "a", 1, "\0", 1), "a lone NUL");
}

Test(hostile_hdblock, v2_empty_value) {
  expect_invalid(block_one(2, "a", 1, "", 0), "empty value (v2)");
}

/* ---- many fields -------------------------------------------------------------------- */

/* Distinct lower-case names: "aaaa", "aaab", ... */
static void field_name(size_t i, char name[4]) {
  for (int k = 3; k >= 0; k--) {
    name[k] = (char)('a' + i % 26);
    i /= 26;
  }
}

static block_builder many_fields(int version, size_t n, size_t duplicate_of) {
  block_builder b = builder_start(version, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    char name[4];
    field_name(i == n - 1 && duplicate_of < n ? duplicate_of : i, name);
    builder_field(&b, name, 4, "v", 1);
  }
  return b;
}

Test(hostile_hdblock, fifty_thousand_fields_parse_well_under_a_second, .timeout = 20) {
  block_builder b = many_fields(3, 50000, SIZE_MAX);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  size_t emitted = 0;
  cr_assert_eq(parse_block(&b, &emitted), 0);
  double elapsed = seconds_since(&start);
  cr_assert_eq(emitted, 50000);
  cr_assert_lt(elapsed, 0.5, "took %.3f s", elapsed);
  free(b.bytes);
}

Test(hostile_hdblock, duplicate_among_fifty_thousand_fields_is_found, .timeout = 20) {
  block_builder b = many_fields(3, 50000, 12345);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  size_t emitted = 0;
  cr_assert_eq(parse_block(&b, &emitted), SPEEDY_ERR_INVALID_HEADER);
  double elapsed = seconds_since(&start);
  cr_assert_eq(emitted, 0);
  cr_assert_lt(elapsed, 0.5, "took %.3f s", elapsed);
  free(b.bytes);
}

/* As many fields as a 64 KiB cap admits, through the inflater as a peer would send them. */
static void most_fields_in_64KiB(int version) {
  size_t field = version == 2 ? 2 + 4 + 2 + 1 : 4 + 4 + 4 + 1;
  size_t width = version == 2 ? 2 : 4;
  size_t n = (65536 - width) / field;
  for (int with_duplicate = 0; with_duplicate <= 1; with_duplicate++) {
    block_builder b = many_fields(version, n, with_duplicate ? 0 : SIZE_MAX);
    cr_assert_leq(b.len, 65536);
    size_t len;
    uint8_t *in =
        peer_compress(dict_of(version), dict_len_of(version), b.bytes, b.len, Z_SYNC_FLUSH, &len);
    speedy_mem mem;
    test_alloc_mem(&mem);
    spdy_hdblock_inflater inf;
    cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, version, 65536), 0);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    const uint8_t *out;
    size_t out_len;
    cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, in, len, &out, &out_len), 0);
    size_t emitted = 0;
    int rv = spdy_hdblock_parse(version, &mem, out, out_len, count_emit, &emitted);
    double elapsed = seconds_since(&start);
    cr_assert_eq(rv, with_duplicate ? SPEEDY_ERR_INVALID_HEADER : 0, "%zu fields", n);
    cr_assert_eq(emitted, with_duplicate ? 0 : n);
    cr_assert_lt(elapsed, 0.5, "took %.3f s", elapsed);
    spdy_hdblock_inflater_free(&inf, &mem);
    cr_assert_eq(test_alloc_live(), 0);
    free(in);
    free(b.bytes);
  }
}

Test(hostile_hdblock, v3_most_fields_a_64KiB_cap_admits, .timeout = 20) { most_fields_in_64KiB(3); }

Test(hostile_hdblock, v2_most_fields_a_64KiB_cap_admits, .timeout = 20) { most_fields_in_64KiB(2); }

Test(hostile_hdblock, thirty_thousand_joined_values_emit_one_call_each, .timeout = 20) {
  size_t n = 30000;
  size_t value_len = 2 * n - 1;
  char *value = malloc(value_len);
  cr_assert_not_null(value);
  for (size_t i = 0; i < value_len; i++) value[i] = i % 2 == 0 ? 'x' : '\0';
  block_builder b = block_one(3, "a", 1, value, value_len);
  free(value);
  size_t emitted = 0;
  cr_assert_eq(parse_block(&b, &emitted), 0);
  cr_assert_eq(emitted, n);
  free(b.bytes);
}

/* ---- allocation failure ------------------------------------------------------------- */

/* init, inflate and parse a block of 100 fields with the n-th allocation failing. */
static int receive_with_failure(size_t n, const uint8_t *in, size_t in_len) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  test_alloc_fail_after(n);
  spdy_hdblock_inflater inf;
  size_t emitted = 0;
  int rv = spdy_hdblock_inflater_init(&inf, &mem, 3, 65536);
  if (rv == 0) {
    const uint8_t *out;
    size_t out_len;
    rv = spdy_hdblock_inflate(&inf, &mem, in, in_len, &out, &out_len);
    if (rv == 0) rv = spdy_hdblock_parse(3, &mem, out, out_len, count_emit, &emitted);
    if (rv == 0) cr_assert_eq(emitted, 100);
  }
  spdy_hdblock_inflater_free(&inf, &mem);
  test_alloc_fail_after(0);
  cr_assert_eq(test_alloc_live(), 0, "leak with allocation %zu failing", n);
  return rv;
}

Test(hostile_hdblock, allocation_failure_anywhere_in_receiving_is_nomem, .timeout = 30) {
  block_builder b = many_fields(3, 100, SIZE_MAX);
  size_t len;
  uint8_t *in = peer_compress(dict_of(3), dict_len_of(3), b.bytes, b.len, Z_SYNC_FLUSH, &len);
  size_t n = 1;
  for (; n < 1000; n++) {
    int rv = receive_with_failure(n, in, len);
    if (rv == 0) break;
    cr_assert_eq(rv, SPEEDY_ERR_NOMEM, "allocation %zu failing gave %d", n, rv);
  }
  cr_assert_lt(n, 1000, "never succeeded");
  cr_assert_gt(n, 3, "init, inflate and parse all allocate");
  free(in);
  free(b.bytes);
}

/* init and deflate 100 fields with the n-th allocation failing. */
static int send_with_failure(size_t n, const speedy_header *headers, size_t n_headers) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  test_alloc_fail_after(n);
  spdy_hdblock_deflater d;
  speedy_buf out;
  speedy_buf_init(&out, 1 << 20);
  int rv = spdy_hdblock_deflater_init(&d, &mem, 3, 6, 11, 5);
  if (rv == 0) rv = spdy_hdblock_deflate(&d, &mem, &out, headers, n_headers);
  if (rv == 0) cr_assert_gt(speedy_buf_len(&out), 0);
  spdy_hdblock_deflater_free(&d);
  speedy_buf_free(&out, &mem);
  test_alloc_fail_after(0);
  cr_assert_eq(test_alloc_live(), 0, "leak with allocation %zu failing", n);
  return rv;
}

Test(hostile_hdblock, allocation_failure_anywhere_in_sending_is_nomem, .timeout = 30) {
  static speedy_header headers[100];
  static char names[100][4];
  for (size_t i = 0; i < 100; i++) {
    field_name(i % 60, names[i]); /* repeats, so joining runs too */
    headers[i] = (speedy_header){names[i], 4, "value", 5};
  }
  size_t n = 1;
  for (; n < 1000; n++) {
    int rv = send_with_failure(n, headers, 100);
    if (rv == 0) break;
    cr_assert_eq(rv, SPEEDY_ERR_NOMEM, "allocation %zu failing gave %d", n, rv);
  }
  cr_assert_lt(n, 1000, "never succeeded");
}

Test(hostile_hdblock, deflater_is_unusable_after_failing_midway) {
  static char value[8192];
  uint32_t x = 1;
  for (size_t i = 0; i < sizeof(value); i++) {
    x = x * 1103515245u + 12345u;
    value[i] = (char)('a' + (x >> 16) % 26);
  }
  speedy_header headers[] = {{"x", 1, value, sizeof(value)}};
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_deflater d;
  cr_assert_eq(spdy_hdblock_deflater_init(&d, &mem, 3, 6, 11, 5), 0);
  speedy_buf out;
  speedy_buf_init(&out, 1 << 20);
  test_alloc_fail_after(2); /* out's first allocation succeeds, its growth fails */
  cr_assert_eq(spdy_hdblock_deflate(&d, &mem, &out, headers, 1), SPEEDY_ERR_NOMEM);
  test_alloc_fail_after(0);
  cr_assert_eq(speedy_buf_len(&out), 0, "partial output taken back");
  cr_assert_eq(spdy_hdblock_deflate(&d, &mem, &out, headers, 1), SPEEDY_ERR_COMPRESSION);
  spdy_hdblock_deflater_free(&d);
  speedy_buf_free(&out, &mem);
  cr_assert_eq(test_alloc_live(), 0);
}
