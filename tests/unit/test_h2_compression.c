/* test_h2_compression.c — RFC 7541 (HPACK) as an HTTP/2 session lives it (RFC 9113 4.3):
 * decoding errors are connection errors COMPRESSION_ERROR, the dynamic table size follows
 * SETTINGS_HEADER_TABLE_SIZE in both directions at the right moment (RFC 7541 4.2, 6.3),
 * and both ends' tables stay in step across blocks. The codec's own tests are test_hpack*.c.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2raw.h"
#include "session_int.h"
#include "testutil.h"

#define HEADERS 0x1

static void server(h2_rig *rig) { h2_rig_open(rig, SPEEDY_ROLE_SERVER, NULL, 0); }

/* Queues HEADERS on stream_id made of a request's first octets, then raw octets. */
static void request_with_raw(h2_rig *rig, uint32_t stream_id, const uint8_t *raw, size_t n) {
  raw_buf block = {0};
  h2_field fields[] = {
      {":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(rig, fields, 4, &block);
  raw_put(&block, raw, n);
  h2_frame_header(&rig->in, (uint32_t)block.len, HEADERS, 0x5, stream_id);
  raw_put(&rig->in, block.data, block.len);
  raw_buf_free(&block);
}

Test(h2_hpack, rfc7541_s6_1_index_0_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  request_with_raw(&rig, 1, (const uint8_t[]){0x80}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "index 0");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s2_3_3_an_index_past_both_tables_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  request_with_raw(&rig, 1, (const uint8_t[]){0xff, 0x10}, 2); /* index 127 + 16 */
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "index 143");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s6_3_a_size_update_after_a_field_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  request_with_raw(&rig, 1, (const uint8_t[]){0x20}, 1); /* size update 0 after fields */
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "late size update");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s4_2_a_size_update_above_our_setting_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  /* 0x3f 0xe1 0x1f: a size update to 4,096 + ... = 8,192 > the 4,096 we allow. */
  uint8_t update[] = {0x3f, 0xe1, 0x3f};
  h2_frame_header(&rig.in, 3, HEADERS, 0x5, 1);
  raw_put(&rig.in, update, 3);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "8,192 > 4,096");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s5_2_a_huffman_string_with_eos_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  /* literal without indexing, new name, Huffman length 4: all ones holds EOS. */
  uint8_t raw[] = {0x00, 0x84, 0xff, 0xff, 0xff, 0xff, 0x01, 'v'};
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "EOS in a string");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s5_1_an_integer_past_2_32_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  uint8_t raw[] = {0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "huge integer");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s3_a_block_cut_inside_a_representation_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  uint8_t raw[] = {0x40, 0x05, 'x'}; /* a name of 5 octets with one present */
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "truncated");
  h2_rig_close(&rig);
}

/* 2.3: entries the peer indexes are used by later blocks, on any stream. */
Test(h2_hpack, rfc7541_s2_3_indexed_entries_carry_across_streams) {
  h2_rig rig;
  server(&rig);
  speedy_hpack_field first[] = {
      {(const uint8_t *)":method", 7, (const uint8_t *)"GET", 3, 0},
      {(const uint8_t *)":scheme", 7, (const uint8_t *)"https", 5, 0},
      {(const uint8_t *)":authority", 10, (const uint8_t *)"a.test", 6, SPEEDY_HPACK_INDEX},
      {(const uint8_t *)":path", 5, (const uint8_t *)"/one", 4, 0},
      {(const uint8_t *)"x-session", 9, (const uint8_t *)"abc", 3, SPEEDY_HPACK_INDEX}};
  for (uint32_t id = 1; id <= 5; id += 2) {
    uint8_t buf[512];
    int64_t n = speedy_hpack_encode(rig.encoder, first, 5, buf, sizeof(buf));
    cr_assert_gt(n, 0);
    h2_frame_header(&rig.in, (uint32_t)n, HEADERS, 0x5, id);
    raw_put(&rig.in, buf, (size_t)n);
  }
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "three requests sharing entries");
  cr_assert(test_log_has(rig.peer, "header 5 x-session=abc"));
  cr_assert(test_log_has(rig.peer, "header 5 :authority=a.test"));
  h2_rig_close(&rig);
}

/* 4.2 with RFC 9113 6.5.3: our smaller SETTINGS_HEADER_TABLE_SIZE binds the peer once it is
 * acknowledged; its next block must then start with a size update. */
Test(h2_hpack, rfc7541_s4_2_our_smaller_table_needs_a_size_update_after_the_ack) {
  speedy_options *options = raw_options_new();
  speedy_options_set_header_table_size(options, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0); /* our SETTINGS acknowledged */
  speedy_options_del(options);
  h2_rig_get(&rig, 1, "/", 0); /* without a size update */
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "no size update");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s4_2_a_size_update_to_our_smaller_table_is_accepted) {
  speedy_options *options = raw_options_new();
  speedy_options_set_header_table_size(options, 100);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
  speedy_hpack_encoder_set_peer_max_table_size(rig.encoder, 100);
  h2_rig_get(&rig, 1, "/", 0);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "size update to 100");
  cr_assert_eq(speedy_hpack_decoder_table_max(rig.peer->session->wire.h2.decoder), 100);
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s4_2_before_the_ack_the_old_table_size_holds) {
  speedy_options *options = raw_options_new();
  speedy_options_set_header_table_size(options, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 1);
  speedy_options_del(options);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig.in, NULL, NULL, 0);
  h2_rig_get(&rig, 1, "/", 0); /* the peer has not seen our 0 yet */
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "a block before the ACK");
  cr_assert(test_log_has(rig.peer, "begin 1 request"));
  h2_rig_close(&rig);
}

/* 4.2: the peer's SETTINGS_HEADER_TABLE_SIZE binds our encoder from our ACK on: the next
 * block we send starts with a size update, and the table we use never exceeds it. */
Test(h2_hpack, rfc7541_s4_2_the_peers_table_size_binds_our_encoder_after_our_ack) {
  h2_rig rig;
  server(&rig);
  h2_settings(&rig.in, (uint16_t[]){0x1}, (uint32_t[]){0}, 1);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_hpack_decoder_set_max_table_size(rig.decoder, 0);
  speedy_header h[] = {{":status", 7, "200", 3}, {"x-would-index", 13, "yes", 3}};
  cr_assert_eq(speedy_submit_response(rig.peer->session, 1, h, 2, NULL, NULL), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(out.frames[0].hd.type, 0x4, "the ACK first");
  cr_assert_eq(out.frames[0].hd.flags, 1);
  cr_assert_eq(out.frames[1].hd.type, HEADERS);
  cr_assert_eq(out.frames[1].payload[0], 0x20, "a size update to 0 opens the block");
  char *fields = h2_output_fields(&rig, &out, 1);
  cr_assert(strstr(fields, "x-would-index: yes") != NULL);
  free(fields);
  h2_output_free(&out);
  cr_assert_eq(speedy_hpack_encoder_table_size(rig.peer->session->wire.h2.encoder), 0);
  h2_rig_close(&rig);
}

/* 4.2 with RFC 9113 6.5.3: two HEADER_TABLE_SIZE in one SETTINGS frame (0, then 4,096) are
 * two changes: after a response has filled our table, the next block must signal 0 first
 * (the table emptied), then 4,096, as nghttp2's decoder expects. */
Test(h2_hpack, rfc7541_s4_2_the_smallest_of_one_frames_table_sizes_is_signalled) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  h2_rig_get(&rig, 3, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_header h[] = {{":status", 7, "200", 3}, {"x-would-index", 13, "yes", 3}};
  cr_assert_eq(speedy_submit_response(rig.peer->session, 1, h, 2, NULL, NULL), 0);
  h2_output first;
  h2_output_take(&first, &rig);
  free(h2_output_fields(&rig, &first, 0));
  h2_output_free(&first);
  cr_assert_gt(speedy_hpack_encoder_table_size(rig.peer->session->wire.h2.encoder), 0);
  h2_settings(&rig.in, (uint16_t[]){0x1, 0x1}, (uint32_t[]){0, 4096}, 2);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_hpack_decoder_set_max_table_size(rig.decoder, 0);
  speedy_hpack_decoder_set_max_table_size(rig.decoder, 4096);
  cr_assert_eq(speedy_submit_response(rig.peer->session, 3, h, 2, NULL, NULL), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(out.frames[0].hd.type, 0x4, "the ACK first");
  cr_assert_eq(out.frames[1].hd.type, HEADERS);
  cr_assert_eq(out.frames[1].payload[0], 0x20, "a size update to 0 opens the block");
  char *fields = h2_output_fields(&rig, &out, 1); /* decodes: the table stayed in step */
  cr_assert(strstr(fields, "x-would-index: yes") != NULL);
  free(fields);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* Our encoder indexes what repeats: a second response is smaller, and decodes the same. */
Test(h2_hpack, rfc7541_s2_3_our_encoder_tables_repeat_fields) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  h2_rig_get(&rig, 3, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_header h[] = {{":status", 7, "200", 3},
                       {"server", 6, "speedy/0.1 (test)", 17},
                       {"content-type", 12, "text/html; charset=utf-8", 24}};
  uint32_t sizes[2];
  for (int32_t id = 1; id <= 3; id += 2) {
    cr_assert_eq(speedy_submit_response(rig.peer->session, id, h, 3, NULL, NULL), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    sizes[id / 2] = out.frames[0].hd.length;
    char *fields = h2_output_fields(&rig, &out, 0);
    cr_assert_str_eq(fields, ":status: 200\nserver: speedy/0.1 (test)\n"
                             "content-type: text/html; charset=utf-8\n");
    free(fields);
    h2_output_free(&out);
  }
  cr_assert_lt(sizes[1], sizes[0], "second %u, first %u", sizes[1], sizes[0]);
  h2_rig_close(&rig);
}

/* 5.2: padding longer than 7 bits is a decoding error. "a" is 00011 (5 bits); 0x1f 0xff
 * pads it with 11 ones. */
Test(h2_hpack, rfc7541_s5_2_huffman_padding_over_7_bits_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  uint8_t raw[] = {0x00, 0x01, 'x', 0x82, 0x1f, 0xff};
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "11-bit padding");
  h2_rig_close(&rig);
}

/* 5.2: padding is the most significant bits of EOS, all ones: zeros are an error. */
Test(h2_hpack, rfc7541_s5_2_huffman_padding_with_zeros_is_a_compression_error) {
  h2_rig rig;
  server(&rig);
  uint8_t raw[] = {0x00, 0x01, 'x', 0x81, 0x18}; /* 00011 then 000 */
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "zero padding");
  h2_rig_close(&rig);
}

Test(h2_hpack, rfc7541_s5_2_a_correctly_padded_huffman_string_is_accepted) {
  h2_rig rig;
  server(&rig);
  uint8_t raw[] = {0x00, 0x01, 'x', 0x81, 0x1f}; /* 00011 then 111: "a" */
  request_with_raw(&rig, 1, raw, sizeof(raw));
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "\"a\" Huffman-coded");
  cr_assert(test_log_has(rig.peer, "header 1 x=a"), "log:\n%s", rig.peer->log);
  h2_rig_close(&rig);
}
