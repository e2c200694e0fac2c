/* test_hpack.c — HPACK (lib/hpack.c, lib/hpack_huffman.c) against RFC 7541 and against
 * encoders and decoders this project did not write.
 *
 * - Every example of RFC 7541 Appendix C, byte for byte: encoded by us (given the
 *   example's indexing and Huffman choices) and decoded by us, whole and a byte at a
 *   time, with both dynamic tables checked after every block.
 * - The static table and the Huffman code against the RFC's own text.
 * - Every story of every encoder in hpack-test-case (nghttp2, go-hpack, python-hpack)
 *   decodes to its headers; every raw-data story encoded by us decodes back in our
 *   decoder and in nghttp2's inflater, and nghttp2's deflater's output decodes in ours.
 *   (tests/hpack/check_python_hpack.py does the same with python-hpack's decoder.)
 * - Hostile input: integers, truncation at every octet, bad indices, size updates,
 *   Huffman EOS and padding, the header-list cap against an HPACK bomb, allocation
 *   failure.
 *
 * The stories are read from ../shared at run time; tests that need them skip without.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "testutil.h"

/* Defined by tests/hpack/CMakeLists.txt, which links the story reader (jansson). */
#ifdef SPEEDY_HPACK_STORIES
#include "../hpack/hpack_story.h"
#endif

#ifdef SPEEDY_HAVE_NGHTTP2
#include <nghttp2/nghttp2.h>
#endif

/* ---- helpers ------------------------------------------------------------------------ */

typedef struct got_field {
  uint8_t *name, *value;
  size_t name_len, value_len;
  unsigned flags;
} got_field;

typedef struct got_list {
  got_field *fields;
  size_t n, cap;
  uint64_t list_bytes; /* name + value + 32 per field */
  int fail_at;         /* 1-based field whose callback fails with -42; 0 never */
} got_list;

static int collect(void *user, const speedy_hpack_field *f) {
  got_list *g = user;
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 16;
    g->fields = realloc(g->fields, g->cap * sizeof *g->fields);
    cr_assert_not_null(g->fields);
  }
  got_field *c = &g->fields[g->n++];
  c->name = malloc(f->name_len + 1);
  c->value = malloc(f->value_len + 1);
  cr_assert(c->name != NULL && c->value != NULL);
  if (f->name_len) memcpy(c->name, f->name, f->name_len);
  if (f->value_len) memcpy(c->value, f->value, f->value_len);
  c->name[f->name_len] = c->value[f->value_len] = 0;
  c->name_len = f->name_len;
  c->value_len = f->value_len;
  c->flags = f->flags;
  g->list_bytes += f->name_len + f->value_len + 32;
  if (g->fail_at != 0 && (size_t)g->fail_at == g->n) return -42;
  return 0;
}

static void got_reset(got_list *g) {
  for (size_t i = 0; i < g->n; i++) {
    free(g->fields[i].name);
    free(g->fields[i].value);
  }
  g->n = 0;
  g->list_bytes = 0;
}

static void got_free(got_list *g) {
  got_reset(g);
  free(g->fields);
  memset(g, 0, sizeof *g);
}

static int bytes_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len) {
  return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

/* Compares what was decoded with the fields expected; where names the case. */
static void check_fields(const got_list *g, const speedy_hpack_field *want, size_t n,
                         const char *where) {
  cr_assert_eq(g->n, n, "%s: %zu fields decoded, %zu expected", where, g->n, n);
  for (size_t i = 0; i < n; i++) {
    cr_assert(
        bytes_equal(g->fields[i].name, g->fields[i].name_len, want[i].name, want[i].name_len) &&
            bytes_equal(g->fields[i].value, g->fields[i].value_len, want[i].value,
                        want[i].value_len),
        "%s: field %zu is \"%.*s: %.*s\", expected \"%.*s: %.*s\"", where, i,
        (int)g->fields[i].name_len, g->fields[i].name, (int)g->fields[i].value_len,
        g->fields[i].value, (int)want[i].name_len, want[i].name, (int)want[i].value_len,
        want[i].value);
  }
}

/* Hex with optional spaces into out; returns the octets. */
static size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  int half = -1;
  for (const char *p = hex; *p; p++) {
    int v;
    if (*p >= '0' && *p <= '9')
      v = *p - '0';
    else if (*p >= 'a' && *p <= 'f')
      v = *p - 'a' + 10;
    else
      continue;
    if (half < 0) {
      half = v;
    } else {
      out[n++] = (uint8_t)(half << 4 | v);
      half = -1;
    }
  }
  return n;
}

static void hexdump(const uint8_t *p, size_t n, char *out, size_t out_size) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < out_size; i++)
    k += (size_t)snprintf(out + k, out_size - k, "%02x", p[i]);
  out[k] = 0;
}

static speedy_hpack_field field_of(const char *name, const char *value, unsigned flags) {
  return (speedy_hpack_field){(const uint8_t *)name, strlen(name), (const uint8_t *)value,
                              strlen(value), flags};
}

static speedy_mem test_mem;

static void mem_setup(void) { test_alloc_mem(&test_mem); }

static void mem_check(void) {
  cr_assert_eq(test_alloc_live(), 0, "%zu blocks leaked", test_alloc_live());
}

static speedy_hpack_decoder *decoder_new(void) {
  speedy_hpack_decoder *d;
  cr_assert_eq(speedy_hpack_decoder_new(&test_mem, &d), 0);
  return d;
}

static speedy_hpack_encoder *encoder_new(void) {
  speedy_hpack_encoder *e;
  cr_assert_eq(speedy_hpack_encoder_new(&test_mem, &e), 0);
  return e;
}

/* Encodes into a buffer of the bound's size; returns the length. */
static size_t encode(speedy_hpack_encoder *e, const speedy_hpack_field *fields, size_t n,
                     uint8_t **out) {
  size_t bound = speedy_hpack_encode_bound(e, fields, n);
  cr_assert_gt(bound, 0);
  *out = malloc(bound);
  int64_t len = speedy_hpack_encode(e, fields, n, *out, bound);
  cr_assert_geq(len, 0, "encode: %s", speedy_hpack_strerror((int)len));
  return (size_t)len;
}

/* Decodes one whole block, or a byte at a time when bytewise. */
static int decode(speedy_hpack_decoder *d, const uint8_t *in, size_t len, got_list *g,
                  int bytewise) {
  if (!bytewise) return speedy_hpack_decode(d, in, len, 1, collect, g);
  for (size_t i = 0; i < len; i++) {
    int rc = speedy_hpack_decode(d, in + i, 1, 0, collect, g);
    if (rc != 0) return rc;
  }
  return speedy_hpack_decode(d, NULL, 0, 1, collect, g);
}

/* ---- RFC 7541 Appendix C.1: integers ------------------------------------------------ */

static void check_integer(uint32_t value, unsigned prefix, const char *hex) {
  uint8_t want[8], got[8];
  size_t want_len = unhex(hex, want);
  size_t len = speedy_hpack_int_encode(got, value, prefix, 0);
  cr_assert(bytes_equal(got, len, want, want_len), "%u with a %u-bit prefix", value, prefix);
  uint32_t back = 0;
  cr_assert_eq(speedy_hpack_int_decode(want, want_len, prefix, UINT32_MAX, &back), (int)want_len);
  cr_assert_eq(back, value);
  /* Every shorter input is incomplete, not wrong. */
  for (size_t cut = 0; cut < want_len; cut++)
    cr_assert_eq(speedy_hpack_int_decode(want, cut, prefix, UINT32_MAX, &back), 0);
}

Test(hpack, c_1_1_encoding_10_using_a_5_bit_prefix_rfc7541) { check_integer(10, 5, "0a"); }
Test(hpack, c_1_2_encoding_1337_using_a_5_bit_prefix_rfc7541) { check_integer(1337, 5, "1f9a0a"); }
Test(hpack, c_1_3_encoding_42_at_an_octet_boundary_rfc7541) { check_integer(42, 8, "2a"); }

Test(hpack, integers_keep_the_first_octets_high_bits) {
  uint8_t out[8];
  cr_assert_eq(speedy_hpack_int_encode(out, 10, 5, 0xe0), 1);
  cr_assert_eq(out[0], 0xea);
  uint32_t v;
  cr_assert_eq(speedy_hpack_int_decode(out, 1, 5, UINT32_MAX, &v), 1);
  cr_assert_eq(v, 10);
}

Test(hpack, integers_round_trip_for_every_prefix_up_to_2_to_the_32) {
  const uint32_t values[] = {0,         1,     6,       7,         30,        31,
                             126,       127,   128,     254,       255,       256,
                             16383,     16384, 2097151, 268435455, 268435456, UINT32_MAX - 1,
                             UINT32_MAX};
  for (unsigned prefix = 1; prefix <= 8; prefix++) {
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
      uint8_t out[8];
      size_t len = speedy_hpack_int_encode(out, values[i], prefix, 0);
      cr_assert_leq(len, 6);
      uint32_t back;
      cr_assert_eq(speedy_hpack_int_decode(out, len, prefix, UINT32_MAX, &back), (int)len,
                   "%u, prefix %u", values[i], prefix);
      cr_assert_eq(back, values[i]);
    }
  }
}

/* ---- RFC 7541 Appendix C.2-C.6: representations and sequences ------------------------ */

typedef struct example_field {
  const char *name, *value;
  unsigned flags; /* the example's choice, given to the encoder */
} example_field;

typedef struct example_block {
  example_field fields[8];
  const char *hex;
  const char *table[8]; /* "name: value", newest first */
  size_t table_size;
} example_block;

static size_t example_fields(const example_block *b, speedy_hpack_field *out) {
  size_t n = 0;
  for (; n < 8 && b->fields[n].name != NULL; n++)
    out[n] = field_of(b->fields[n].name, b->fields[n].value, b->fields[n].flags);
  return n;
}

static void check_table(size_t entries, size_t size, const speedy_hpack_field *got_entries,
                        const example_block *b, const char *who, size_t block) {
  size_t want_entries = 0;
  while (want_entries < 8 && b->table[want_entries] != NULL) want_entries++;
  cr_assert_eq(entries, want_entries, "%s, block %zu: %zu entries, expected %zu", who, block + 1,
               entries, want_entries);
  cr_assert_eq(size, b->table_size, "%s, block %zu: table size %zu, expected %zu", who, block + 1,
               size, b->table_size);
  for (size_t i = 0; i < entries; i++) {
    char text[512];
    snprintf(text, sizeof text, "%.*s: %.*s", (int)got_entries[i].name_len, got_entries[i].name,
             (int)got_entries[i].value_len, got_entries[i].value);
    cr_assert_str_eq(text, b->table[i], "%s, block %zu, entry %zu", who, block + 1, i + 1);
  }
}

static void check_decoder_table(const speedy_hpack_decoder *d, const example_block *b,
                                const char *who, size_t block) {
  speedy_hpack_field entries[8];
  size_t n = speedy_hpack_decoder_entries(d);
  for (size_t i = 0; i < n && i < 8; i++)
    cr_assert_eq(speedy_hpack_decoder_entry(d, i, &entries[i]), 0);
  check_table(n, speedy_hpack_decoder_table_size(d), entries, b, who, block);
}

static void check_encoder_table(const speedy_hpack_encoder *e, const example_block *b,
                                size_t block) {
  speedy_hpack_field entries[8];
  size_t n = speedy_hpack_encoder_entries(e);
  for (size_t i = 0; i < n && i < 8; i++)
    cr_assert_eq(speedy_hpack_encoder_entry(e, i, &entries[i]), 0);
  check_table(n, speedy_hpack_encoder_table_size(e), entries, b, "encoder", block);
}

/* Runs an example's blocks through one encoder and two decoders (whole blocks; a byte at a
 * time), on one connection. */
static void run_example(const example_block *blocks, size_t n_blocks, speedy_hpack_huffman mode,
                        uint32_t table_size) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_encoder_set_huffman(e, mode);
  speedy_hpack_decoder *whole = decoder_new(), *bytewise = decoder_new();
  if (table_size != SPEEDY_HPACK_DEFAULT_TABLE_SIZE) {
    cr_assert_eq(speedy_hpack_encoder_set_initial_table_size(e, table_size), 0);
    cr_assert_eq(speedy_hpack_decoder_set_initial_table_size(whole, table_size), 0);
    cr_assert_eq(speedy_hpack_decoder_set_initial_table_size(bytewise, table_size), 0);
  }
  for (size_t b = 0; b < n_blocks; b++) {
    speedy_hpack_field fields[8];
    size_t n = example_fields(&blocks[b], fields);
    uint8_t want[512];
    size_t want_len = unhex(blocks[b].hex, want);

    uint8_t *out;
    size_t len = encode(e, fields, n, &out);
    char got_hex[1100], want_hex[1100];
    hexdump(out, len, got_hex, sizeof got_hex);
    hexdump(want, want_len, want_hex, sizeof want_hex);
    cr_assert(bytes_equal(out, len, want, want_len), "block %zu encoded as %s, expected %s", b + 1,
              got_hex, want_hex);
    free(out);
    check_encoder_table(e, &blocks[b], b);

    got_list g = {0};
    cr_assert_eq(decode(whole, want, want_len, &g, 0), 0, "block %zu", b + 1);
    check_fields(&g, fields, n, "decoded whole");
    for (size_t i = 0; i < n; i++)
      cr_assert_eq(g.fields[i].flags & SPEEDY_HPACK_NEVER_INDEXED,
                   fields[i].flags & SPEEDY_HPACK_NEVER_INDEXED, "field %zu's never-indexed flag",
                   i);
    check_decoder_table(whole, &blocks[b], "decoder (whole)", b);
    got_reset(&g);
    cr_assert_eq(decode(bytewise, want, want_len, &g, 1), 0, "block %zu, a byte at a time", b + 1);
    check_fields(&g, fields, n, "decoded a byte at a time");
    check_decoder_table(bytewise, &blocks[b], "decoder (a byte at a time)", b);
    got_free(&g);
  }
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(whole);
  speedy_hpack_decoder_del(bytewise);
  mem_check();
}

#define IDX SPEEDY_HPACK_INDEX

Test(hpack, c_2_1_literal_field_with_indexing_rfc7541) {
  const example_block b[] = {{{{"custom-key", "custom-header", IDX}},
                              "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
                              {"custom-key: custom-header"},
                              55}};
  run_example(b, 1, SPEEDY_HPACK_HUFFMAN_NEVER, 4096);
}

Test(hpack, c_2_2_literal_field_without_indexing_rfc7541) {
  const example_block b[] = {{{{":path", "/sample/path", SPEEDY_HPACK_NO_INDEX}},
                              "040c 2f73 616d 706c 652f 7061 7468",
                              {NULL},
                              0}};
  run_example(b, 1, SPEEDY_HPACK_HUFFMAN_NEVER, 4096);
}

Test(hpack, c_2_3_literal_field_never_indexed_rfc7541) {
  const example_block b[] = {{{{"password", "secret", SPEEDY_HPACK_NEVER_INDEXED}},
                              "1008 7061 7373 776f 7264 0673 6563 7265 74",
                              {NULL},
                              0}};
  run_example(b, 1, SPEEDY_HPACK_HUFFMAN_NEVER, 4096);
}

Test(hpack, c_2_4_indexed_field_rfc7541) {
  const example_block b[] = {{{{":method", "GET", 0}}, "82", {NULL}, 0}};
  run_example(b, 1, SPEEDY_HPACK_HUFFMAN_NEVER, 4096);
}

#define C3_FIELDS_1                                                                                \
  {                                                                                                \
    {":method", "GET", 0}, {":scheme", "http", 0}, {":path", "/", 0}, {                            \
      ":authority", "www.example.com", IDX                                                         \
    }                                                                                              \
  }
#define C3_FIELDS_2                                                                                \
  {                                                                                                \
    {":method", "GET", 0}, {":scheme", "http", 0}, {":path", "/", 0},                              \
        {":authority", "www.example.com", 0}, {                                                    \
      "cache-control", "no-cache", IDX                                                             \
    }                                                                                              \
  }
#define C3_FIELDS_3                                                                                \
  {                                                                                                \
    {":method", "GET", 0}, {":scheme", "https", 0}, {":path", "/index.html", 0},                   \
        {":authority", "www.example.com", 0}, {                                                    \
      "custom-key", "custom-value", IDX                                                            \
    }                                                                                              \
  }
#define C3_TABLE_1 {":authority: www.example.com"}, 57
#define C3_TABLE_2 {"cache-control: no-cache", ":authority: www.example.com"}, 110
#define C3_TABLE_3                                                                                 \
  {"custom-key: custom-value", "cache-control: no-cache", ":authority: www.example.com"}, 164

Test(hpack, c_3_request_without_huffman_rfc7541) {
  const example_block b[] = {
      {C3_FIELDS_1, "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d", C3_TABLE_1},
      {C3_FIELDS_2, "8286 84be 5808 6e6f 2d63 6163 6865", C3_TABLE_2},
      {C3_FIELDS_3, "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
       C3_TABLE_3},
  };
  run_example(b, 3, SPEEDY_HPACK_HUFFMAN_NEVER, 4096);
}

Test(hpack, c_4_request_with_huffman_rfc7541) {
  const example_block b[] = {
      {C3_FIELDS_1, "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff", C3_TABLE_1},
      {C3_FIELDS_2, "8286 84be 5886 a8eb 1064 9cbf", C3_TABLE_2},
      {C3_FIELDS_3, "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", C3_TABLE_3},
  };
  run_example(b, 3, SPEEDY_HPACK_HUFFMAN_ALWAYS, 4096);
}

#define DATE_1 "Mon, 21 Oct 2013 20:13:21 GMT"
#define DATE_2 "Mon, 21 Oct 2013 20:13:22 GMT"
#define LOCATION "https://www.example.com"
#define COOKIE "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1"
#define C5_FIELDS_1                                                                                \
  {                                                                                                \
    {":status", "302", IDX}, {"cache-control", "private", IDX}, {"date", DATE_1, IDX}, {           \
      "location", LOCATION, IDX                                                                    \
    }                                                                                              \
  }
#define C5_FIELDS_2                                                                                \
  {                                                                                                \
    {":status", "307", IDX}, {"cache-control", "private", IDX}, {"date", DATE_1, IDX}, {           \
      "location", LOCATION, IDX                                                                    \
    }                                                                                              \
  }
#define C5_FIELDS_3                                                                                \
  {                                                                                                \
    {":status", "200", IDX}, {"cache-control", "private", IDX}, {"date", DATE_2, IDX},             \
        {"location", LOCATION, IDX}, {"content-encoding", "gzip", IDX}, {                          \
      "set-cookie", COOKIE, IDX                                                                    \
    }                                                                                              \
  }
#define C5_TABLE_1                                                                                 \
  {"location: " LOCATION, "date: " DATE_1, "cache-control: private", ":status: 302"}, 222
#define C5_TABLE_2                                                                                 \
  {":status: 307", "location: " LOCATION, "date: " DATE_1, "cache-control: private"}, 222
#define C5_TABLE_3 {"set-cookie: " COOKIE, "content-encoding: gzip", "date: " DATE_2}, 215

Test(hpack, c_5_response_without_huffman_rfc7541) {
  const example_block b[] = {
      {C5_FIELDS_1,
       "4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133"
       "2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70"
       "6c65 2e63 6f6d",
       C5_TABLE_1},
      {C5_FIELDS_2, "4803 3330 37c1 c0bf", C5_TABLE_2},
      {C5_FIELDS_3,
       "88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d"
       "54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049"
       "5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31",
       C5_TABLE_3},
  };
  run_example(b, 3, SPEEDY_HPACK_HUFFMAN_NEVER, 256);
}

Test(hpack, c_6_response_with_huffman_rfc7541) {
  const example_block b[] = {
      {C5_FIELDS_1,
       "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6"
       "2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
       C5_TABLE_1},
      {C5_FIELDS_2, "4883 640e ffc1 c0bf", C5_TABLE_2},
      {C5_FIELDS_3,
       "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab"
       "77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f"
       "9587 3160 65c0 03ed 4ee5 b106 3d50 07",
       C5_TABLE_3},
  };
  run_example(b, 3, SPEEDY_HPACK_HUFFMAN_ALWAYS, 256);
}

Test(hpack, c_3_blocks_split_at_every_octet_decode_the_same) {
  const char *hex[] = {"8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d",
                       "8286 84be 5808 6e6f 2d63 6163 6865",
                       "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65"};
  mem_setup();
  uint8_t blocks[3][64];
  size_t lens[3];
  for (int i = 0; i < 3; i++) lens[i] = unhex(hex[i], blocks[i]);
  /* The third block cut in two at every point, after the first two. */
  for (size_t cut = 0; cut <= lens[2]; cut++) {
    speedy_hpack_decoder *d = decoder_new();
    got_list g = {0};
    cr_assert_eq(decode(d, blocks[0], lens[0], &g, 0), 0);
    cr_assert_eq(decode(d, blocks[1], lens[1], &g, 0), 0);
    got_reset(&g);
    cr_assert_eq(speedy_hpack_decode(d, blocks[2], cut, 0, collect, &g), 0, "cut at %zu", cut);
    cr_assert_eq(speedy_hpack_decode(d, blocks[2] + cut, lens[2] - cut, 1, collect, &g), 0);
    cr_assert_eq(g.n, 5, "cut at %zu: %zu fields", cut, g.n);
    cr_assert_str_eq((char *)g.fields[4].value, "custom-value");
    cr_assert_eq(speedy_hpack_decoder_table_size(d), 164);
    got_free(&g);
    speedy_hpack_decoder_del(d);
  }
  mem_check();
}

/* ---- Against the RFC's text ------------------------------------------------------------ */

static FILE *open_rfc(void) {
  const char *shared = test_shared_dir();
  if (shared == NULL) return NULL;
  char path[4096];
  snprintf(path, sizeof path, "%s/spec/h2/rfc7541-hpack.md", shared);
  return fopen(path, "r");
}

Test(hpack, static_table_is_appendix_a_of_rfc7541) {
  FILE *f = open_rfc();
  if (f == NULL) cr_skip_test("../shared/spec/h2/rfc7541-hpack.md is absent");
  char line[512];
  unsigned seen = 0;
  int in_appendix = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "## Appendix A", 13) == 0) in_appendix = 1;
    if (strncmp(line, "## Appendix B", 13) == 0) break;
    unsigned index;
    char name[128], value[128] = "";
    if (!in_appendix || sscanf(line, "| %u | %127s | %127[^|]", &index, name, value) < 2) continue;
    size_t vlen = strlen(value);
    while (vlen > 0 && value[vlen - 1] == ' ') value[--vlen] = 0;
    speedy_hpack_field s;
    cr_assert_eq(speedy_hpack_static_entry(index, &s), 0, "index %u", index);
    cr_assert(bytes_equal(s.name, s.name_len, (const uint8_t *)name, strlen(name)) &&
                  bytes_equal(s.value, s.value_len, (const uint8_t *)value, vlen),
              "static entry %u is \"%.*s: %.*s\", the RFC says \"%s: %s\"", index, (int)s.name_len,
              s.name, (int)s.value_len, s.value, name, value);
    seen++;
  }
  fclose(f);
  cr_assert_eq(seen, SPEEDY_HPACK_STATIC_ENTRIES, "read %u rows of Appendix A", seen);
  speedy_hpack_field s;
  cr_assert_eq(speedy_hpack_static_entry(0, &s), SPEEDY_HPACK_ERR_INDEX);
  cr_assert_eq(speedy_hpack_static_entry(62, &s), SPEEDY_HPACK_ERR_INDEX);
}

Test(hpack, huffman_codes_are_appendix_b_of_rfc7541) {
  FILE *f = open_rfc();
  if (f == NULL) cr_skip_test("../shared/spec/h2/rfc7541-hpack.md is absent");
  char line[512];
  int in_appendix = 0, seen = 0;
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, "## Appendix B", 13) == 0) in_appendix = 1;
    if (strncmp(line, "## Appendix C", 13) == 0) break;
    /* "    'a' ( 97)  |00011    3  [ 5]": "(NNN)" then the bits from the next '|' (the
     * symbols '(' and '|' appear quoted before). */
    char *bar = NULL, *open = line;
    unsigned parsed;
    int consumed = 0;
    for (; in_appendix && (open = strchr(open, '(')) != NULL; open++) {
      if (sscanf(open, "(%u)%n", &parsed, &consumed) == 1 && consumed > 0 &&
          (bar = strchr(open + consumed, '|')) != NULL)
        break;
    }
    if (!in_appendix || open == NULL || bar == NULL) continue;
    unsigned sym = (unsigned)strtoul(open + 1, NULL, 10);
    if (sym > 255) continue; /* EOS: tested below */
    char bits[64];
    size_t n = 0;
    for (char *p = bar; *p && *p != ' ' && n < 40; p++)
      if (*p == '0' || *p == '1') bits[n++] = *p;
    /* The symbol alone, padded: the code then the padding's ones. */
    uint8_t sym_byte = (uint8_t)sym, out[8];
    size_t len = speedy_hpack_huffman_encode(out, &sym_byte, 1);
    cr_assert_eq(len, (n + 7) / 8, "symbol %u: %zu octets for %zu bits", sym, len, n);
    for (size_t i = 0; i < len * 8; i++) {
      int bit = (out[i / 8] >> (7 - i % 8)) & 1;
      int want = i < n ? bits[i] - '0' : 1;
      cr_assert_eq(bit, want, "symbol %u, bit %zu", sym, i);
    }
    uint8_t back[8];
    cr_assert_eq(speedy_hpack_huffman_decode(back, sizeof back, out, len), 1, "symbol %u", sym);
    cr_assert_eq(back[0], sym_byte);
    seen++;
  }
  fclose(f);
  cr_assert_eq(seen, 256, "read %d rows of Appendix B", seen);
}

/* ---- Huffman ----------------------------------------------------------------------------- */

Test(hpack, huffman_round_trips_every_octet_in_every_position) {
  uint8_t src[600], code[3000], back[1100];
  for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 7 + i / 256);
  for (size_t len = 0; len <= sizeof src; len += (len < 40 ? 1 : 37)) {
    size_t n = speedy_hpack_huffman_encode(code, src, len);
    cr_assert_eq(n, speedy_hpack_huffman_length(src, len));
    cr_assert_leq(len, speedy_hpack_huffman_decoded_max(n));
    int64_t got = speedy_hpack_huffman_decode(back, sizeof back, code, n);
    cr_assert_eq(got, (int64_t)len, "length %zu", len);
    cr_assert(bytes_equal(back, (size_t)got, src, len));
  }
}

Test(hpack, huffman_string_containing_eos_is_an_error_rfc7541_5_2) {
  /* EOS is 30 ones: four octets of ones hold it whole. */
  uint8_t eos[] = {0xff, 0xff, 0xff, 0xff}, out[16];
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, eos, 4), SPEEDY_HPACK_ERR_HUFFMAN);
  /* 'a' (00011) then EOS then padding. */
  uint8_t a_eos[] = {0x1f, 0xff, 0xff, 0xff, 0xff};
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, a_eos, 5), SPEEDY_HPACK_ERR_HUFFMAN);
}

Test(hpack, huffman_padding_over_7_bits_is_an_error_rfc7541_5_2) {
  uint8_t out[16];
  uint8_t a_padded_3[] = {0x1f}; /* 'a' + 111: valid */
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, a_padded_3, 1), 1);
  uint8_t a_padded_11[] = {0x1f, 0xff}; /* 'a' + 11 ones */
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, a_padded_11, 2),
               SPEEDY_HPACK_ERR_HUFFMAN);
  uint8_t only_padding[] = {0xff}; /* 8 ones and nothing else */
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, only_padding, 1),
               SPEEDY_HPACK_ERR_HUFFMAN);
}

Test(hpack, huffman_padding_not_all_ones_is_an_error_rfc7541_5_2) {
  uint8_t out[16];
  uint8_t a_zeros[] = {0x18}; /* 'a' + 000 */
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, a_zeros, 1), SPEEDY_HPACK_ERR_HUFFMAN);
  uint8_t a_mixed[] = {0x1d}; /* 'a' + 101 */
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, a_mixed, 1), SPEEDY_HPACK_ERR_HUFFMAN);
}

Test(hpack, huffman_decode_refuses_a_short_output_buffer) {
  uint8_t code[16], out[4];
  size_t n = speedy_hpack_huffman_encode(code, (const uint8_t *)"example", 7);
  cr_assert_eq(speedy_hpack_huffman_decode(out, sizeof out, code, n),
               SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL);
}

/* ---- Hostile input ------------------------------------------------------------------- */

/* Decodes hex as one block with a fresh decoder; returns the result. */
static int decode_hex(const char *hex, got_list *g) {
  uint8_t in[256];
  size_t len = unhex(hex, in);
  speedy_hpack_decoder *d = decoder_new();
  int rc = speedy_hpack_decode(d, in, len, 1, collect, g);
  if (rc < 0 && rc != SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE) {
    /* Fatal errors stick. */
    cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x82", 1, 1, collect, g), rc);
  }
  speedy_hpack_decoder_del(d);
  return rc;
}

Test(hpack, integer_over_2_to_the_32_is_an_error) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("ff ff ff ff ff 0f", &g), SPEEDY_HPACK_ERR_INTEGER);
  cr_assert_eq(decode_hex("40 7f ff ff ff ff 7f", &g), SPEEDY_HPACK_ERR_INTEGER);
  cr_assert_eq(decode_hex("3f ff ff ff ff 7f", &g), SPEEDY_HPACK_ERR_INTEGER);
  uint32_t v;
  const uint8_t big[] = {0x1f, 0xe0, 0xff, 0xff, 0xff, 0x0f}; /* 31 + 2^32 - 32 = 2^32 - 1 */
  cr_assert_eq(speedy_hpack_int_decode(big, sizeof big, 5, UINT32_MAX, &v), 6);
  cr_assert_eq(v, UINT32_MAX);
  const uint8_t over[] = {0x1f, 0xe1, 0xff, 0xff, 0xff, 0x0f}; /* 2^32 */
  cr_assert_eq(speedy_hpack_int_decode(over, sizeof over, 5, UINT32_MAX, &v),
               SPEEDY_HPACK_ERR_INTEGER);
  got_free(&g);
  mem_check();
}

Test(hpack, integer_with_overlong_zero_octets_is_an_error) {
  mem_setup();
  got_list g = {0};
  /* Index 127 + 0 spelled with five continuation octets is the limit; six is refused. */
  cr_assert_eq(decode_hex("ff 80 80 80 80 00", &g), SPEEDY_HPACK_ERR_INDEX);
  cr_assert_eq(decode_hex("ff 80 80 80 80 80 00", &g), SPEEDY_HPACK_ERR_INTEGER);
  got_free(&g);
  mem_check();
}

Test(hpack, index_0_is_an_error_rfc7541_6_1) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("80", &g), SPEEDY_HPACK_ERR_INDEX);
  cr_assert_eq(g.n, 0);
  got_free(&g);
  mem_check();
}

Test(hpack, index_past_the_tables_is_an_error_rfc7541_2_3_3) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("bd", &g), 0); /* 61, the last static entry */
  cr_assert_eq(decode_hex("be", &g), SPEEDY_HPACK_ERR_INDEX);
  cr_assert_eq(decode_hex("7e 01 61", &g), SPEEDY_HPACK_ERR_INDEX);    /* name index 62 */
  cr_assert_eq(decode_hex("0f 2f 01 61", &g), SPEEDY_HPACK_ERR_INDEX); /* name index 62 */
  /* One entry: 62 is valid, 63 is not. */
  cr_assert_eq(decode_hex("40 01 61 01 62 be", &g), 0);
  cr_assert_eq(decode_hex("40 01 61 01 62 bf", &g), SPEEDY_HPACK_ERR_INDEX);
  got_free(&g);
  mem_check();
}

Test(hpack, size_update_above_the_settings_maximum_is_an_error_rfc7541_6_3) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("3f e1 1f 82", &g), 0); /* 4096 */
  cr_assert_eq(decode_hex("3f e2 1f 82", &g), SPEEDY_HPACK_ERR_TABLE_SIZE);
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 65536);
  uint8_t in[8];
  size_t len = speedy_hpack_int_encode(in, 65536, 5, 0x20);
  cr_assert_eq(speedy_hpack_decode(d, in, len, 1, collect, &g), 0);
  cr_assert_eq(speedy_hpack_decoder_table_max(d), 65536);
  len = speedy_hpack_int_encode(in, 65537, 5, 0x20);
  cr_assert_eq(speedy_hpack_decode(d, in, len, 1, collect, &g), SPEEDY_HPACK_ERR_TABLE_SIZE);
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, size_update_after_a_field_is_an_error_rfc7541_4_2) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("20 3f e1 1f 82", &g), 0); /* two at the start: fine */
  cr_assert_eq(decode_hex("82 20", &g), SPEEDY_HPACK_ERR_SIZE_UPDATE);
  /* Also when the field came in an earlier piece of the block. */
  speedy_hpack_decoder *d = decoder_new();
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x82", 1, 0, collect, &g), 0);
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x20", 1, 1, collect, &g),
               SPEEDY_HPACK_ERR_SIZE_UPDATE);
  speedy_hpack_decoder_del(d);
  /* The next block may start with one again. */
  d = decoder_new();
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x82", 1, 1, collect, &g), 0);
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x20\x82", 2, 1, collect, &g), 0);
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, size_update_is_required_after_settings_shrink_the_table_rfc7541_4_2) {
  mem_setup();
  got_list g = {0};
  uint8_t in[16];
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 1024);
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\x82", 1, 1, collect, &g),
               SPEEDY_HPACK_ERR_SIZE_UPDATE);
  speedy_hpack_decoder_del(d);

  d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 1024);
  size_t len = speedy_hpack_int_encode(in, 1024, 5, 0x20);
  in[len++] = 0x82;
  cr_assert_eq(speedy_hpack_decode(d, in, len, 1, collect, &g), 0);
  cr_assert_eq(speedy_hpack_decoder_table_max(d), 1024);
  speedy_hpack_decoder_del(d);

  /* Down to 0 and back to 4096 between two blocks: the smallest must be signalled. */
  d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 0);
  speedy_hpack_decoder_set_max_table_size(d, 4096);
  cr_assert_eq(decode(d, (const uint8_t *)"\x3f\xe1\x1f\x82", 4, &g, 0),
               SPEEDY_HPACK_ERR_SIZE_UPDATE);
  speedy_hpack_decoder_del(d);
  d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 0);
  speedy_hpack_decoder_set_max_table_size(d, 4096);
  cr_assert_eq(decode(d, (const uint8_t *)"\x20\x3f\xe1\x1f\x82", 5, &g, 0), 0);
  /* Larger settings need no update. */
  speedy_hpack_decoder_set_max_table_size(d, 8192);
  cr_assert_eq(decode(d, (const uint8_t *)"\x82", 1, &g, 0), 0);
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, size_update_evicts_and_zero_empties_the_table_rfc7541_4_3) {
  mem_setup();
  got_list g = {0};
  speedy_hpack_decoder *d = decoder_new();
  uint8_t in[64];
  size_t len = unhex("40 01 61 01 62 40 01 63 01 64", in); /* a: b (34), c: d (34) */
  cr_assert_eq(decode(d, in, len, &g, 0), 0);
  cr_assert_eq(speedy_hpack_decoder_table_size(d), 68);
  cr_assert_eq(decode(d, (const uint8_t *)"\x3f\x04", 2, &g, 0), 0); /* 35: keeps c: d */
  cr_assert_eq(speedy_hpack_decoder_entries(d), 1);
  speedy_hpack_field f;
  cr_assert_eq(speedy_hpack_decoder_entry(d, 0, &f), 0);
  cr_assert(bytes_equal(f.name, f.name_len, (const uint8_t *)"c", 1));
  cr_assert_eq(decode(d, (const uint8_t *)"\x20", 1, &g, 0), 0);
  cr_assert_eq(speedy_hpack_decoder_entries(d), 0);
  cr_assert_eq(speedy_hpack_decoder_table_size(d), 0);
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, entry_larger_than_the_table_empties_it_rfc7541_4_4) {
  mem_setup();
  got_list g = {0};
  speedy_hpack_decoder *d = decoder_new();
  uint8_t in[64];
  size_t len = unhex("3f 21 40 01 61 01 62", in); /* max 64; a: b */
  cr_assert_eq(decode(d, in, len, &g, 0), 0);
  cr_assert_eq(speedy_hpack_decoder_entries(d), 1);
  len = unhex("40 01 61 20 6161616161616161616161616161616161616161616161616161616161616161", in);
  cr_assert_eq(decode(d, in, len, &g, 0), 0); /* 1 + 32 + 32 > 64 */
  cr_assert_eq(speedy_hpack_decoder_entries(d), 0);
  cr_assert_eq(g.n, 2, "the field is still emitted");
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, new_entry_may_name_the_entry_it_evicts_rfc7541_4_4) {
  mem_setup();
  got_list g = {0};
  speedy_hpack_decoder *d = decoder_new();
  uint8_t in[64];
  /* max 70; "custom: one" (41); then literal with name index 62 (that entry) and value
   * "two": adding 41 more evicts the entry the name comes from. */
  size_t len = unhex("3f 27 40 06 637573746f6d 03 6f6e65", in);
  cr_assert_eq(decode(d, in, len, &g, 0), 0);
  len = unhex("7e 03 74776f be", in);
  cr_assert_eq(decode(d, in, len, &g, 0), 0);
  cr_assert_eq(g.n, 3);
  cr_assert_str_eq((char *)g.fields[1].name, "custom");
  cr_assert_str_eq((char *)g.fields[2].name, "custom");
  cr_assert_str_eq((char *)g.fields[2].value, "two");
  cr_assert_eq(speedy_hpack_decoder_entries(d), 1);
  speedy_hpack_decoder_del(d);
  got_free(&g);
  mem_check();
}

Test(hpack, empty_name_and_value_are_an_entry_of_32_octets) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_field f = field_of("", "", SPEEDY_HPACK_INDEX);
  for (int round = 0; round < 2; round++) {
    uint8_t *out;
    size_t len = encode(e, &f, 1, &out);
    if (round == 1) cr_assert(len == 1 && out[0] == 0xbe, "the second time, index 62");
    got_list g = {0};
    cr_assert_eq(decode(d, out, len, &g, 0), 0);
    check_fields(&g, &f, 1, "empty field");
    cr_assert_eq(speedy_hpack_decoder_table_size(d), 32);
    cr_assert_eq(speedy_hpack_encoder_table_size(e), 32);
    free(out);
    got_free(&g);
  }
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
  mem_check();
}

Test(hpack, huffman_errors_in_a_block_are_compression_errors) {
  mem_setup();
  got_list g = {0};
  cr_assert_eq(decode_hex("04 84 ff ff ff ff", &g), SPEEDY_HPACK_ERR_HUFFMAN); /* EOS */
  cr_assert_eq(decode_hex("04 82 1f ff", &g), SPEEDY_HPACK_ERR_HUFFMAN);       /* 11 ones */
  cr_assert_eq(decode_hex("04 81 18", &g), SPEEDY_HPACK_ERR_HUFFMAN);          /* zeros */
  cr_assert_eq(decode_hex("00 81 18 01 61", &g), SPEEDY_HPACK_ERR_HUFFMAN);    /* in a name */
  cr_assert_eq(decode_hex("04 81 1f", &g), 0);
  cr_assert_str_eq((char *)g.fields[0].value, "a");
  got_free(&g);
  mem_check();
}

Test(hpack, truncated_block_at_every_octet_is_an_error_or_a_shorter_list) {
  mem_setup();
  /* C.6.1's fields, and where each representation ends. */
  uint8_t in[128];
  size_t len = unhex("4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0"
                     "82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
                     in);
  const size_t ends[] = {0, 4, 11, 35, 54};
  cr_assert_eq(len, 54);
  for (size_t cut = 0; cut <= len; cut++) {
    speedy_hpack_decoder *d = decoder_new();
    speedy_hpack_decoder_set_initial_table_size(d, 256);
    got_list g = {0};
    size_t whole = 0;
    int boundary = 0;
    for (size_t k = 0; k < 5; k++)
      if (ends[k] <= cut) whole = k;
    for (size_t k = 0; k < 5; k++) boundary |= ends[k] == cut;
    int rc = speedy_hpack_decode(d, in, cut, 1, collect, &g);
    if (boundary) {
      cr_assert_eq(rc, 0, "cut at %zu", cut);
    } else {
      cr_assert_eq(rc, SPEEDY_HPACK_ERR_TRUNCATED, "cut at %zu: %s", cut,
                   speedy_hpack_strerror(rc));
    }
    cr_assert_eq(g.n, whole, "cut at %zu: %zu fields emitted, %zu complete", cut, g.n, whole);
    got_free(&g);
    speedy_hpack_decoder_del(d);
    /* The same when the block's end comes as an empty last piece. */
    d = decoder_new();
    speedy_hpack_decoder_set_initial_table_size(d, 256);
    cr_assert_eq(speedy_hpack_decode(d, in, cut, 0, collect, &g), 0);
    rc = speedy_hpack_decode(d, NULL, 0, 1, collect, &g);
    cr_assert_eq(rc, boundary ? 0 : SPEEDY_HPACK_ERR_TRUNCATED, "cut at %zu, then the end", cut);
    cr_assert_eq(g.n, whole);
    got_free(&g);
    speedy_hpack_decoder_del(d);
  }
  mem_check();
}

Test(hpack, string_longer_than_the_limit_is_refused_before_it_is_held) {
  mem_setup();
  got_list g = {0};
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_string_length(d, 100);
  uint8_t in[16];
  size_t len = unhex("04 7f 7f", in); /* a 254-octet value, only its header present */
  cr_assert_eq(speedy_hpack_decode(d, in, len, 0, collect, &g), SPEEDY_HPACK_ERR_STRING_TOO_LONG);
  speedy_hpack_decoder_del(d);
  cr_assert_lt(test_alloc_get()->peak_bytes, 4096);
  got_free(&g);
  mem_check();
}

/* An HPACK bomb: one 4 KiB entry, then 20,000 one-octet references to it (80 MB). */
Test(hpack, header_list_cap_stops_a_bomb_before_it_is_inflated) {
  mem_setup();
  size_t value_len = 4000, refs = 20000;
  uint8_t *in = malloc(8 + value_len + refs);
  size_t len = 0;
  in[len++] = 0x40;
  in[len++] = 0x01;
  in[len++] = 'x';
  len += speedy_hpack_int_encode(in + len, (uint32_t)value_len, 7, 0);
  memset(in + len, 'a', value_len);
  len += value_len;
  memset(in + len, 0xbe, refs);
  len += refs;

  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_header_list_size(d, 16384);
  got_list g = {0};
  cr_assert_eq(speedy_hpack_decode(d, in, len, 1, collect, &g),
               SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE);
  cr_assert_leq(g.list_bytes, 16384, "%llu octets emitted", (unsigned long long)g.list_bytes);
  cr_assert_eq(g.n, 4, "%zu fields emitted", g.n);
  cr_assert_lt(test_alloc_get()->peak_bytes, 64 * 1024, "peak %zu octets",
               test_alloc_get()->peak_bytes);
  /* The block was still processed: the table is the peer's, and the decoder goes on. */
  got_reset(&g);
  cr_assert_eq(speedy_hpack_decode(d, (const uint8_t *)"\xbe", 1, 1, collect, &g), 0);
  cr_assert_eq(g.n, 1);
  cr_assert_eq(g.fields[0].value_len, value_len);
  got_free(&g);
  speedy_hpack_decoder_del(d);
  free(in);
  mem_check();
}

Test(hpack, header_list_cap_counts_name_value_and_32_per_field_rfc9113) {
  mem_setup();
  uint8_t in[8];
  size_t len = unhex("82 82 82", in); /* ":method: GET" = 7 + 3 + 32 = 42 each */
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_header_list_size(d, 126);
  got_list g = {0};
  cr_assert_eq(decode(d, in, len, &g, 0), 0);
  cr_assert_eq(g.n, 3);
  speedy_hpack_decoder_set_max_header_list_size(d, 125);
  got_reset(&g);
  cr_assert_eq(decode(d, in, len, &g, 0), SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE);
  cr_assert_eq(g.n, 2);
  /* The cap is per block. */
  got_reset(&g);
  cr_assert_eq(decode(d, in, 2, &g, 0), 0);
  got_free(&g);
  speedy_hpack_decoder_del(d);
  mem_check();
}

Test(hpack, callback_failure_stops_decoding_and_sticks) {
  mem_setup();
  speedy_hpack_decoder *d = decoder_new();
  got_list g = {0};
  g.fail_at = 2;
  cr_assert_eq(decode(d, (const uint8_t *)"\x82\x86\x84", 3, &g, 0), -42);
  cr_assert_eq(g.n, 2);
  cr_assert_eq(decode(d, (const uint8_t *)"\x82", 1, &g, 0), -42);
  got_free(&g);
  speedy_hpack_decoder_del(d);
  mem_check();
}

Test(hpack, allocation_failure_is_nomem_and_leaks_nothing) {
  /* A Huffman literal with indexing needs scratch, a ring and octets. */
  uint8_t in[64];
  size_t len = unhex("4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf", in);
  for (size_t n = 1; n < 8; n++) {
    mem_setup();
    speedy_hpack_decoder *d = decoder_new();
    test_alloc_fail_after(n);
    got_list g = {0};
    int rc = speedy_hpack_decode(d, in, len, 1, collect, &g);
    cr_assert(rc == 0 || rc == SPEEDY_HPACK_ERR_NOMEM, "failing allocation %zu: %s", n,
              speedy_hpack_strerror(rc));
    test_alloc_fail_after(0);
    got_free(&g);
    speedy_hpack_decoder_del(d);
    mem_check();
  }
  for (size_t n = 1; n < 8; n++) {
    mem_setup();
    speedy_hpack_encoder *e = encoder_new();
    test_alloc_fail_after(n);
    speedy_hpack_field f = field_of("custom-key", "custom-value", 0);
    uint8_t out[64];
    int64_t rc = speedy_hpack_encode(e, &f, 1, out, sizeof out);
    cr_assert(rc > 0 || rc == SPEEDY_HPACK_ERR_NOMEM);
    if (rc < 0) cr_assert_eq(speedy_hpack_encode(e, &f, 1, out, sizeof out), rc, "sticks");
    test_alloc_fail_after(0);
    speedy_hpack_encoder_del(e);
    mem_check();
  }
}

/* ---- Encoder policy ------------------------------------------------------------------ */

/* Encodes one field on a fresh encoder and decodes it; returns the first octet and the
 * decoded flags. */
static uint8_t encode_one(const char *name, const char *value, unsigned flags,
                          unsigned *decoded_flags, size_t *entries) {
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_field f = field_of(name, value, flags);
  uint8_t *out;
  size_t len = encode(e, &f, 1, &out);
  *entries = speedy_hpack_encoder_entries(e);
  speedy_hpack_decoder *d = decoder_new();
  got_list g = {0};
  cr_assert_eq(decode(d, out, len, &g, 0), 0);
  cr_assert_eq(g.n, 1);
  check_fields(&g, &f, 1, name);
  *decoded_flags = g.fields[0].flags;
  cr_assert_eq(speedy_hpack_decoder_entries(d), *entries, "tables agree");
  uint8_t first = out[0];
  free(out);
  got_free(&g);
  speedy_hpack_decoder_del(d);
  speedy_hpack_encoder_del(e);
  return first;
}

Test(hpack, encoder_sends_credentials_and_short_cookies_never_indexed) {
  mem_setup();
  unsigned flags;
  size_t entries;
  const char *sensitive[][2] = {{"authorization", "Basic dXNlcjpwYXNz"},
                                {"proxy-authorization", "Basic dXNlcjpwYXNz"},
                                {"cookie", "id=1234567"},
                                {"x-anything", "marked by the caller"}};
  for (int i = 0; i < 4; i++) {
    uint8_t first = encode_one(sensitive[i][0], sensitive[i][1],
                               i == 3 ? SPEEDY_HPACK_NEVER_INDEXED : 0, &flags, &entries);
    cr_assert_eq(first & 0xf0, 0x10, "%s: first octet %02x", sensitive[i][0], first);
    cr_assert_eq(flags, SPEEDY_HPACK_NEVER_INDEXED);
    cr_assert_eq(entries, 0);
  }
  uint8_t first = encode_one("cookie", "session=0123456789abcdef0123456789", 0, &flags, &entries);
  cr_assert_eq(first & 0xc0, 0x40, "a long cookie crumb is indexed");
  cr_assert_eq(entries, 1);
  mem_check();
}

Test(hpack, encoder_does_not_index_values_over_three_quarters_of_the_table) {
  mem_setup();
  unsigned flags;
  size_t entries;
  char value[3100];
  memset(value, 'v', sizeof value - 1);
  value[sizeof value - 1] = 0; /* 1 + 3099 + 32 > 3072 */
  uint8_t first = encode_one("x", value, 0, &flags, &entries);
  cr_assert_eq(first & 0xf0, 0x00);
  cr_assert_eq(entries, 0);
  value[3000] = 0; /* 1 + 3000 + 32 <= 3072 */
  first = encode_one("x", value, 0, &flags, &entries);
  cr_assert_eq(first & 0xc0, 0x40);
  cr_assert_eq(entries, 1);
  mem_check();
}

Test(hpack, encoder_uses_huffman_only_when_shorter) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  /* "x-a" and "307" take 18 and 17 bits: three octets either way, so raw. */
  speedy_hpack_field f = field_of("x-a", "307", SPEEDY_HPACK_NO_INDEX);
  uint8_t out[64];
  int64_t len = speedy_hpack_encode(e, &f, 1, out, sizeof out);
  cr_assert_eq(len, 1 + 1 + 3 + 1 + 3);
  cr_assert_eq(out[1], 0x03);
  cr_assert_eq(out[5], 0x03);
  /* "www.example.com": 15 octets, 12 coded (RFC 7541 C.4.1). */
  f = field_of("x-a", "www.example.com", SPEEDY_HPACK_NO_INDEX);
  len = speedy_hpack_encode(e, &f, 1, out, sizeof out);
  cr_assert_eq(len, 1 + 1 + 3 + 1 + 12);
  cr_assert_eq(out[5], 0x8c);
  speedy_hpack_encoder_del(e);
  mem_check();
}

Test(hpack, encoder_repeats_become_one_octet_indices) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_field f[] = {field_of(":authority", "www.example.com", 0),
                            field_of("user-agent", "speedy/0.1 (test)", 0),
                            field_of("x-custom", "value", 0)};
  uint8_t *out;
  size_t first = encode(e, f, 3, &out);
  free(out);
  size_t second = encode(e, f, 3, &out);
  cr_assert_eq(second, 3, "second block: %zu octets", second);
  cr_assert_eq(out[0], 0xc0); /* the oldest of three entries: 64 */
  cr_assert_eq(out[1], 0xbf);
  cr_assert_eq(out[2], 0xbe);
  cr_assert_gt(first, 20);
  free(out);
  speedy_hpack_encoder_del(e);
  mem_check();
}

/* The table's rings grow by doubling up to a bound (twice the table size for the octets,
 * one descriptor per 32 octets), never per field. */
Test(hpack, encoder_allocates_nothing_per_field_once_its_table_is_grown) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  char values[64][32];
  speedy_hpack_field f[64];
  for (int i = 0; i < 64; i++) {
    snprintf(values[i], sizeof values[i], "value-%d-%d", i, i * 7919);
    f[i] = field_of(i % 2 ? "x-odd" : "x-even", values[i], 0);
  }
  uint8_t out[8192];
  for (int round = 0; round < 4; round++)
    cr_assert_gt(speedy_hpack_encode(e, f, 64, out, sizeof out), 0);
  size_t allocations = test_alloc_get()->total_allocs;
  for (int round = 0; round < 100; round++) {
    for (int i = 0; i < 64; i++) values[i][6] = (char)('a' + round % 26);
    cr_assert_gt(speedy_hpack_encode(e, f, 64, out, sizeof out), 0);
  }
  cr_assert_leq(test_alloc_get()->total_allocs - allocations, 4, "%zu allocations for 6,400 fields",
                test_alloc_get()->total_allocs - allocations);
  size_t settled = test_alloc_get()->total_allocs;
  for (int round = 0; round < 100; round++) {
    for (int i = 0; i < 64; i++) values[i][7] = (char)('a' + round % 26);
    cr_assert_gt(speedy_hpack_encode(e, f, 64, out, sizeof out), 0);
  }
  cr_assert_eq(test_alloc_get()->total_allocs, settled);
  speedy_hpack_encoder_del(e);
  mem_check();
}

Test(hpack, encoder_refuses_an_output_buffer_under_the_bound) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_field f = field_of("custom-key", "custom-value", 0);
  uint8_t out[64];
  size_t bound = speedy_hpack_encode_bound(e, &f, 1);
  cr_assert_eq(speedy_hpack_encode(e, &f, 1, out, bound - 1), SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL);
  cr_assert_eq(speedy_hpack_encoder_entries(e), 0, "nothing changed");
  cr_assert_gt(speedy_hpack_encode(e, &f, 1, out, bound), 0);
  speedy_hpack_encoder_del(e);
  mem_check();
}

/* Encodes a request with e and decodes it with d; both tables must agree. */
static void exchange(speedy_hpack_encoder *e, speedy_hpack_decoder *d, uint8_t *first_octet) {
  speedy_hpack_field f[] = {field_of(":method", "GET", 0), field_of(":authority", "example.org", 0),
                            field_of("x-trace", "abc", 0)};
  uint8_t *out;
  size_t len = encode(e, f, 3, &out);
  if (first_octet) *first_octet = out[0];
  got_list g = {0};
  cr_assert_eq(decode(d, out, len, &g, 0), 0, "%s", "decode");
  check_fields(&g, f, 3, "exchange");
  cr_assert_eq(speedy_hpack_decoder_table_size(d), speedy_hpack_encoder_table_size(e));
  cr_assert_eq(speedy_hpack_decoder_table_max(d), speedy_hpack_encoder_table_max(e));
  free(out);
  got_free(&g);
}

Test(hpack, encoder_signals_the_peers_new_table_size_rfc7541_4_2) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_decoder *d = decoder_new();
  uint8_t first;
  exchange(e, d, &first);
  cr_assert_eq(speedy_hpack_encoder_entries(e), 2);
  /* The peer shrinks to 0 and grows back to 1024 before our next block. */
  speedy_hpack_decoder_set_max_table_size(d, 0);
  speedy_hpack_encoder_set_peer_max_table_size(e, 0);
  speedy_hpack_decoder_set_max_table_size(d, 1024);
  speedy_hpack_encoder_set_peer_max_table_size(e, 1024);
  exchange(e, d, &first);
  cr_assert_eq(first, 0x20, "first the update to 0");
  cr_assert_eq(speedy_hpack_encoder_table_max(e), 1024);
  /* The peer allows more than our limit: we stay at our limit (4096). */
  speedy_hpack_decoder_set_max_table_size(d, 65536);
  speedy_hpack_encoder_set_peer_max_table_size(e, 65536);
  exchange(e, d, &first);
  cr_assert_eq(speedy_hpack_encoder_table_max(e), 4096);
  exchange(e, d, &first);
  cr_assert_eq(first, 0x82, "no update when nothing changed");
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
  mem_check();
}

Test(hpack, encoder_table_size_limit_is_signalled_in_the_first_block) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_encoder_set_table_size_limit(e, 2048);
  speedy_hpack_decoder *d = decoder_new();
  uint8_t first;
  exchange(e, d, &first);
  cr_assert_eq(first, 0x3f);
  cr_assert_eq(speedy_hpack_decoder_table_max(d), 2048);
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
  mem_check();
}

/* A small deterministic generator. */
static uint64_t rng_state;
static uint32_t rng(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

Test(hpack, random_fields_through_small_tables_keep_both_ends_in_step) {
  mem_setup();
  rng_state = 42;
  speedy_hpack_encoder *e = encoder_new();
  speedy_hpack_decoder *d = decoder_new();
  char names[16][24], values[64][300];
  for (int i = 0; i < 16; i++) snprintf(names[i], sizeof names[i], "x-name-%d", i * 37);
  for (int i = 0; i < 64; i++) {
    size_t len = rng() % 299;
    for (size_t k = 0; k < len; k++) values[i][k] = (char)(' ' + rng() % 95);
    values[i][len] = 0;
  }
  for (int block = 0; block < 3000; block++) {
    if (block % 97 == 0) {
      uint32_t size = rng() % 4097;
      speedy_hpack_decoder_set_max_table_size(d, size);
      speedy_hpack_encoder_set_peer_max_table_size(e, size);
    }
    speedy_hpack_field f[12];
    size_t n = 1 + rng() % 12;
    for (size_t i = 0; i < n; i++)
      f[i] = field_of(names[rng() % 16], values[rng() % 64], rng() % 13 == 0 ? 1 : 0);
    uint8_t *out;
    size_t len = encode(e, f, n, &out);
    got_list g = {0};
    cr_assert_eq(decode(d, out, len, &g, block % 5 == 0), 0, "block %d", block);
    check_fields(&g, f, n, "random");
    cr_assert_eq(speedy_hpack_decoder_entries(d), speedy_hpack_encoder_entries(e));
    cr_assert_eq(speedy_hpack_decoder_table_size(d), speedy_hpack_encoder_table_size(e));
    free(out);
    got_free(&g);
  }
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
  mem_check();
}

/* ---- hpack-test-case stories ------------------------------------------------------------ */

#ifdef SPEEDY_HPACK_STORIES

typedef struct story_set {
  char **paths;
  int n;
} story_set;

static story_set stories_of(const char *encoder) {
  const char *root = hpack_story_root();
  if (root == NULL) cr_skip_test("hpack-test-case is absent (../shared/spec/h2/hpack-test-case)");
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", root, encoder);
  story_set s;
  s.n = hpack_story_list(dir, &s.paths);
  cr_assert_gt(s.n, 0, "no stories in %s", dir);
  return s;
}

static void load_story(const char *path, hpack_story *story) {
  char err[512];
  cr_assert_eq(hpack_story_load(path, story, err, sizeof err), 0, "%s", err);
}

/* Decodes every case of every story of one encoder, whole and (every third story) a byte
 * at a time. */
static void decode_stories(const char *encoder) {
  story_set set = stories_of(encoder);
  mem_setup();
  size_t cases = 0;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    for (int bytewise = 0; bytewise <= (i % 3 == 0); bytewise++) {
      speedy_hpack_decoder *d = decoder_new();
      speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
      for (size_t c = 0; c < story.n_cases; c++) {
        hpack_story_case *k = &story.cases[c];
        if (k->has_table_size) speedy_hpack_decoder_set_max_table_size(d, k->table_size);
        got_list g = {0};
        int rc = decode(d, k->wire, k->wire_len, &g, bytewise);
        char where[4400];
        snprintf(where, sizeof where, "%s, case %zu%s", set.paths[i], c,
                 bytewise ? ", a byte at a time" : "");
        cr_assert_eq(rc, 0, "%s: %s", where, speedy_hpack_strerror(rc));
        check_fields(&g, k->fields, k->n_fields, where);
        got_free(&g);
        cases++;
      }
      speedy_hpack_decoder_del(d);
    }
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  cr_assert_gt(cases, 0);
  mem_check();
}

Test(hpack, stories_encoded_by_nghttp2_decode_to_their_headers) { decode_stories("nghttp2"); }
Test(hpack, stories_encoded_by_go_hpack_decode_to_their_headers) { decode_stories("go-hpack"); }
Test(hpack, stories_encoded_by_python_hpack_decode_to_their_headers) {
  decode_stories("python-hpack");
}

Test(hpack, raw_data_stories_encoded_by_us_decode_back_in_ours) {
  story_set set = stories_of("raw-data");
  mem_setup();
  uint64_t plain = 0, packed = 0;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    speedy_hpack_encoder *e = encoder_new();
    speedy_hpack_decoder *d = decoder_new();
    speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      uint8_t *out;
      size_t len = encode(e, k->fields, k->n_fields, &out);
      got_list g = {0};
      cr_assert_eq(decode(d, out, len, &g, c % 4 == 1), 0, "%s, case %zu", set.paths[i], c);
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(speedy_hpack_decoder_table_size(d), speedy_hpack_encoder_table_size(e));
      for (size_t f = 0; f < k->n_fields; f++)
        plain += k->fields[f].name_len + k->fields[f].value_len + 4;
      packed += len;
      free(out);
      got_free(&g);
    }
    speedy_hpack_encoder_del(e);
    speedy_hpack_decoder_del(d);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  cr_assert_lt(packed, plain / 3, "%llu octets of headers took %llu", (unsigned long long)plain,
               (unsigned long long)packed);
  mem_check();
}

#ifdef SPEEDY_HAVE_NGHTTP2

/* Inflates one block with nghttp2 into g. Returns 0 or nghttp2's error. */
static int nghttp2_inflate_block(nghttp2_hd_inflater *inf, const uint8_t *in, size_t len,
                                 got_list *g) {
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t used = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, len, 1);
    if (used < 0) return (int)used;
    in += used;
    len -= (size_t)used;
    if (flags & NGHTTP2_HD_INFLATE_EMIT) {
      speedy_hpack_field f = {nv.name, nv.namelen, nv.value, nv.valuelen,
                              (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) ? SPEEDY_HPACK_NEVER_INDEXED
                                                                    : 0};
      collect(g, &f);
    }
    if (flags & NGHTTP2_HD_INFLATE_FINAL) {
      nghttp2_hd_inflate_end_headers(inf);
      return 0;
    }
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && len == 0) return -1;
  }
}

/* Our encoder against nghttp2's inflater; every few cases the peer's table size changes
 * (through 0), so our size updates are checked too. */
static void raw_data_into_nghttp2(int change_sizes) {
  story_set set = stories_of("raw-data");
  mem_setup();
  rng_state = 7;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    speedy_hpack_encoder *e = encoder_new();
    nghttp2_hd_inflater *inf;
    cr_assert_eq(nghttp2_hd_inflate_new(&inf), 0);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      if (change_sizes && c % 5 == 3) {
        size_t sizes[] = {0, 512, 4096, 100, 2048};
        size_t size = sizes[rng() % 5];
        cr_assert_eq(nghttp2_hd_inflate_change_table_size(inf, size), 0);
        speedy_hpack_encoder_set_peer_max_table_size(e, (uint32_t)size);
      }
      uint8_t *out;
      size_t len = encode(e, k->fields, k->n_fields, &out);
      got_list g = {0};
      int rc = nghttp2_inflate_block(inf, out, len, &g);
      cr_assert_eq(rc, 0, "%s, case %zu: nghttp2 says %s", set.paths[i], c, nghttp2_strerror(rc));
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(nghttp2_hd_inflate_get_dynamic_table_size(inf),
                   speedy_hpack_encoder_table_size(e), "%s, case %zu", set.paths[i], c);
      free(out);
      got_free(&g);
    }
    nghttp2_hd_inflate_del(inf);
    speedy_hpack_encoder_del(e);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  mem_check();
}

Test(hpack, raw_data_stories_encoded_by_us_decode_in_nghttp2) { raw_data_into_nghttp2(0); }
Test(hpack, size_updates_we_send_are_understood_by_nghttp2) { raw_data_into_nghttp2(1); }

static void nghttp2_into_ours(int change_sizes) {
  story_set set = stories_of("raw-data");
  mem_setup();
  rng_state = 11;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    nghttp2_hd_deflater *def;
    cr_assert_eq(nghttp2_hd_deflate_new(&def, 4096), 0);
    speedy_hpack_decoder *d = decoder_new();
    speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      if (change_sizes && c % 5 == 3) {
        size_t sizes[] = {0, 512, 4096, 100, 2048};
        size_t size = sizes[rng() % 5];
        cr_assert_eq(nghttp2_hd_deflate_change_table_size(def, size), 0);
        speedy_hpack_decoder_set_max_table_size(d, (uint32_t)size);
      }
      nghttp2_nv *nv = calloc(k->n_fields + 1, sizeof *nv);
      for (size_t f = 0; f < k->n_fields; f++)
        nv[f] = (nghttp2_nv){(uint8_t *)k->fields[f].name, (uint8_t *)k->fields[f].value,
                             k->fields[f].name_len, k->fields[f].value_len, NGHTTP2_NV_FLAG_NONE};
      size_t bound = nghttp2_hd_deflate_bound(def, nv, k->n_fields);
      uint8_t *out = malloc(bound);
      ssize_t len = nghttp2_hd_deflate_hd(def, out, bound, nv, k->n_fields);
      cr_assert_geq(len, 0);
      got_list g = {0};
      int rc = decode(d, out, (size_t)len, &g, c % 3 == 2);
      cr_assert_eq(rc, 0, "%s, case %zu: %s", set.paths[i], c, speedy_hpack_strerror(rc));
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(speedy_hpack_decoder_table_size(d),
                   nghttp2_hd_deflate_get_dynamic_table_size(def));
      free(out);
      free(nv);
      got_free(&g);
    }
    nghttp2_hd_deflate_del(def);
    speedy_hpack_decoder_del(d);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  mem_check();
}

Test(hpack, nghttp2_deflater_output_decodes_identically_in_ours) { nghttp2_into_ours(0); }
Test(hpack, nghttp2_size_updates_are_understood_by_ours) { nghttp2_into_ours(1); }

Test(hpack, never_indexed_fields_reach_nghttp2_as_never_indexed) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  nghttp2_hd_inflater *inf;
  cr_assert_eq(nghttp2_hd_inflate_new(&inf), 0);
  speedy_hpack_field f[] = {field_of("authorization", "Bearer x", 0),
                            field_of("x-secret", "42", SPEEDY_HPACK_NEVER_INDEXED),
                            field_of("x-public", "43", 0)};
  uint8_t *out;
  size_t len = encode(e, f, 3, &out);
  got_list g = {0};
  cr_assert_eq(nghttp2_inflate_block(inf, out, len, &g), 0);
  cr_assert_eq(g.n, 3);
  cr_assert_eq(g.fields[0].flags, SPEEDY_HPACK_NEVER_INDEXED);
  cr_assert_eq(g.fields[1].flags, SPEEDY_HPACK_NEVER_INDEXED);
  cr_assert_eq(g.fields[2].flags, 0);
  free(out);
  got_free(&g);
  nghttp2_hd_inflate_del(inf);
  speedy_hpack_encoder_del(e);
  mem_check();
}

#else

Test(hpack, raw_data_stories_encoded_by_us_decode_in_nghttp2) {
  cr_skip_test("libnghttp2 was not found at configure time (pkg-config libnghttp2)");
}
Test(hpack, nghttp2_deflater_output_decodes_identically_in_ours) {
  cr_skip_test("libnghttp2 was not found at configure time (pkg-config libnghttp2)");
}

#endif /* SPEEDY_HAVE_NGHTTP2 */

#else

Test(hpack, stories_decode_to_their_headers) {
  cr_skip_test("built without the story reader (tests/hpack/CMakeLists.txt, jansson)");
}

#endif /* SPEEDY_HPACK_STORIES */
