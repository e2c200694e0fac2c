/* test_hpack.c — HPACK (lib/hpack.c, lib/hpack_huffman.c) against RFC 7541's own text:
 *
 * - Every example of RFC 7541 Appendix C, byte for byte: encoded by us (given the
 *   example's indexing and Huffman choices) and decoded by us, whole and a byte at a
 *   time, with both dynamic tables checked after every block; the integers of C.1.
 * - The static table and the Huffman code against the RFC's own text (Appendices A, B).
 * - Huffman: every octet in every position, EOS and padding (5.2).
 *
 * The other HPACK tests: test_hpack_tables.c (hostile input to the decoder, the encoder's
 * policy) and test_hpack_stories.c (hpack-test-case, nghttp2). All are suite `hpack`;
 * what they share is in hpack_testutil.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "hpack_testutil.h"
#include "testutil.h"

static void hexdump(const uint8_t *p, size_t n, char *out, size_t out_size) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < out_size; i++)
    k += (size_t)snprintf(out + k, out_size - k, "%02x", p[i]);
  out[k] = 0;
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
