/* test_hpack_tables.c — HPACK's dynamic tables and limits, both ends (lib/hpack.c):
 *
 * - Hostile input to the decoder: integers, bad indices, size updates (4.2, 6.3),
 *   eviction (4.3, 4.4), Huffman errors in a block, truncation at every octet, the string
 *   limit, the header-list cap against an HPACK bomb, callback and allocation failure.
 * - The encoder's policy: what it never indexes, what it does not index, Huffman only when
 *   shorter, repeats as indices, no allocation per field, table size updates signalled,
 *   and random fields through small tables keeping both ends in step.
 *
 * Suite `hpack`, like test_hpack.c and test_hpack_stories.c; helpers in hpack_testutil.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "hpack_testutil.h"
#include "testutil.h"

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

/* A block of size updates only ends the interval too: a later reduction is signalled by
 * an update down to it, not to the smallest size before that block. */
Test(hpack, a_block_of_size_updates_only_ends_the_interval_rfc7541_4_2) {
  mem_setup();
  got_list g = {0};
  speedy_hpack_decoder *d = decoder_new();
  speedy_hpack_decoder_set_max_table_size(d, 1000);
  cr_assert_eq(decode(d, (const uint8_t *)"\x3f\xc9\x07", 3, &g, 0), 0); /* to 1,000 */
  speedy_hpack_decoder_set_max_table_size(d, 4096);
  cr_assert_eq(decode(d, (const uint8_t *)"\x3f\xe1\x1f", 3, &g, 0), 0); /* to 4,096 */
  speedy_hpack_decoder_set_max_table_size(d, 3000);
  cr_assert_eq(decode(d, (const uint8_t *)"\x3f\x99\x17\x82", 4, &g, 0), 0); /* to 3,000 */
  cr_assert_eq(speedy_hpack_decoder_table_max(d), 3000);
  /* One still owed after an empty block carries over to the next. */
  speedy_hpack_decoder_set_max_table_size(d, 100);
  cr_assert_eq(decode(d, (const uint8_t *)"", 0, &g, 0), 0);
  speedy_hpack_decoder_set_max_table_size(d, 3000);
  cr_assert_eq(decode(d, (const uint8_t *)"\x82", 1, &g, 0), SPEEDY_HPACK_ERR_SIZE_UPDATE);
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

/* Prepared fields (speedy_hpack_hint_init, speedy_hpack_encode_hinted) give the octets
 * and the table that the same fields give unprepared, block after block, in every
 * Huffman mode, with flags, the policy's names, static matches and eviction. */
Test(hpack, prepared_fields_encode_as_the_same_octets_and_table) {
  static char long_value[2001]; /* 2,000 octets and the NUL field_of looks for */
  memset(long_value, 'x', sizeof(long_value) - 1);
  speedy_hpack_field fields[] = {
      field_of(":status", "200", 0),
      field_of(":status", "418", 0),
      field_of("content-type", "text/html; charset=utf-8", 0),
      field_of("content-length", "12345", 0),
      field_of("etag", "\"abc\"", 0),
      field_of("cookie", "id=1", 0),
      field_of("cookie", "session=0123456789abcdef0123456789", 0),
      field_of("authorization", "Basic Zm9vOmJhcg==", 0),
      field_of("x-custom", "value", SPEEDY_HPACK_NEVER_INDEXED),
      field_of("x-plain", "no index", SPEEDY_HPACK_NO_INDEX),
      field_of("x-forced", "index", SPEEDY_HPACK_INDEX),
      field_of("x-empty", "", 0),
      field_of("x-long", long_value, 0),
      field_of("server", "speedyd/0.1.0", 0),
  };
  size_t n = sizeof(fields) / sizeof(fields[0]);
  speedy_hpack_hint hints[sizeof(fields) / sizeof(fields[0])];
  uint8_t *storage[sizeof(fields) / sizeof(fields[0])];
  for (size_t i = 0; i < n; i++) {
    size_t need = speedy_hpack_hint_storage(&fields[i]);
    cr_assert_gt(need, 0);
    storage[i] = malloc(need);
    speedy_hpack_hint_init(&fields[i], &hints[i], storage[i]);
    cr_assert_eq(hints[i].name_literal_len + hints[i].value_literal_len, need);
  }
  speedy_hpack_huffman modes[] = {SPEEDY_HPACK_HUFFMAN_SHORTER, SPEEDY_HPACK_HUFFMAN_ALWAYS,
                                  SPEEDY_HPACK_HUFFMAN_NEVER};
  speedy_mem mem;
  test_alloc_mem(&mem);
  for (size_t m = 0; m < 3; m++) {
    speedy_hpack_encoder *plain, *prepared;
    cr_assert_eq(speedy_hpack_encoder_new(&mem, &plain), 0);
    cr_assert_eq(speedy_hpack_encoder_new(&mem, &prepared), 0);
    speedy_hpack_encoder_set_huffman(plain, modes[m]);
    speedy_hpack_encoder_set_huffman(prepared, modes[m]);
    /* Blocks of every window of the list, so fields meet each other's entries. */
    for (size_t start = 0; start < n; start++) {
      for (size_t len = 1; start + len <= n; len += 3) {
        size_t bound = speedy_hpack_encode_bound(plain, fields + start, len);
        uint8_t *a = malloc(bound), *b = malloc(bound);
        int64_t got_a = speedy_hpack_encode(plain, fields + start, len, a, bound);
        int64_t got_b =
            speedy_hpack_encode_hinted(prepared, fields + start, hints + start, len, b, bound);
        cr_assert_gt(got_a, 0);
        cr_assert_eq(got_a, got_b, "mode %zu, fields %zu+%zu: %lld octets, prepared %lld", m, start,
                     len, (long long)got_a, (long long)got_b);
        cr_assert_eq(memcmp(a, b, (size_t)got_a), 0, "mode %zu, fields %zu+%zu differ", m, start,
                     len);
        cr_assert_eq(speedy_hpack_encoder_entries(plain), speedy_hpack_encoder_entries(prepared));
        cr_assert_eq(speedy_hpack_encoder_table_size(plain),
                     speedy_hpack_encoder_table_size(prepared));
        free(a);
        free(b);
      }
    }
    speedy_hpack_encoder_del(plain);
    speedy_hpack_encoder_del(prepared);
  }
  for (size_t i = 0; i < n; i++) free(storage[i]);
  cr_assert_eq(test_alloc_live(), 0);
}
