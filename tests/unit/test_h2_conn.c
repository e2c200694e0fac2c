/* test_h2_conn.c — RFC 9113 conformance of the connection: the preface (3.4), frames and
 * their size (4.1, 4.2), field blocks (4.3), error handling (5.4), extensibility (5.5),
 * SETTINGS (6.5), PING (6.7) and GOAWAY (6.8). Raw bytes written from the RFC's text are
 * fed to a session; what it sends back is split into frames and checked.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2raw.h"
#include "session_int.h"
#include "testutil.h"

#define PING 0x6
#define SETTINGS 0x4
#define GOAWAY 0x7

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- 3.4 the connection preface --------------------------------------------------------- */

Test(h2_preface, s3_4_server_sends_settings_first_and_acks_the_clients) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 1);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig.in, NULL, NULL, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_geq(out.n, 2);
  cr_assert(out.frames[0].hd.type == SETTINGS && !(out.frames[0].hd.flags & 1),
            "the server's preface is a SETTINGS frame");
  cr_assert(out.frames[1].hd.type == SETTINGS && (out.frames[1].hd.flags & 1) &&
                out.frames[1].hd.length == 0,
            "then the acknowledgement of the client's");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_client_sends_the_preface_then_settings) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 1);
  size_t len;
  uint8_t *out = test_drain(rig.peer, &len);
  cr_assert_geq(len, SPEEDY_H2_PREFACE_LEN + 9);
  cr_assert(memcmp(out, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24) == 0);
  cr_assert_eq(out[24 + 3], SETTINGS, "SETTINGS right after the preface");
  cr_assert_eq(out[24 + 4], 0);
  free(out);
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_invalid_preface_is_a_connection_error_without_goaway) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 1);
  const char *http1 = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  raw_put(&rig.in, http1, strlen(http1));
  int64_t rv = h2_rig_feed(&rig, 0);
  cr_assert_eq(rv, SPEEDY_ERR_PROTOCOL);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_null(h2_output_find(&out, GOAWAY, 0), "no GOAWAY to a peer that is not HTTP/2");
  h2_output_free(&out);
  cr_assert_eq(speedy_session_want_read(rig.peer->session), 0);
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_preface_and_settings_byte_by_byte) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 1);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig.in, (uint16_t[]){3}, (uint32_t[]){10}, 1);
  cr_assert_geq(h2_rig_feed(&rig, 1), 0);
  cr_assert(test_log_has(rig.peer, "setting 4=10 flags=0"), "log:\n%s", rig.peer->log);
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_a_first_frame_other_than_settings_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 1);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_ping(&rig.in, 0, "12345678");
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "PING before SETTINGS");
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_a_settings_ack_as_first_frame_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 1);
  h2_settings_ack(&rig.in);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "ACK as a preface");
  h2_rig_close(&rig);
}

Test(h2_preface, s3_4_the_server_preface_must_be_settings_for_a_client) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 1);
  h2_window_update(&rig.in, 0, 100);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR,
                   "WINDOW_UPDATE as a preface");
  h2_rig_close(&rig);
}

Test(h2_preface, detect_h2_preface_tells_it_from_http1_and_spdy) {
  cr_assert_eq(speedy_detect_h2_preface((const uint8_t *)SPEEDY_H2_PREFACE, 24), 1);
  cr_assert_eq(speedy_detect_h2_preface((const uint8_t *)"PRI * HT", 8), 0);
  cr_assert_eq(speedy_detect_h2_preface((const uint8_t *)"GET / HTTP/1.1", 14), -1);
  cr_assert_eq(speedy_detect_h2_preface((const uint8_t *)"\x80\x03\x00\x01", 4), -1);
  cr_assert_eq(speedy_detect_h2_preface(NULL, 0), 0);
  cr_assert_str_eq(speedy_protocol_name(SPEEDY_PROTOCOL_H2), "h2");
  speedy_protocol p;
  cr_assert_eq(speedy_protocol_from_name("h2", 2, &p), 0);
  cr_assert_eq(p, SPEEDY_PROTOCOL_H2);
}

/* ---- 4.1, 4.2 frames -------------------------------------------------------------------- */

Test(h2_frames, s4_1_undefined_flags_are_ignored) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 8, PING, 0x16, 0); /* not ACK */
  raw_put(&rig.in, "flagged!", 8);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *ack = h2_output_find(&out, PING, 0);
  cr_assert(ack != NULL && ack->hd.flags == 1 && memcmp(ack->payload, "flagged!", 8) == 0);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_frames, s4_1_the_reserved_bit_of_a_stream_id_is_ignored) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  raw_buf block = {0};
  h2_field fields[] = {
      {":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(&rig, fields, 4, &block);
  h2_frame_header(&rig.in, (uint32_t)block.len, 0x1, 0x5, 0x80000001u);
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "R bit set");
  cr_assert(test_log_has(rig.peer, "begin 1 request"));
  h2_rig_close(&rig);
}

Test(h2_frames, s4_1_s5_5_an_unknown_frame_type_is_ignored) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 5, 0xfa, 0xff, 7);
  raw_put(&rig.in, "hello", 5);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "unknown type");
  h2_expect_alive(&rig, "after an unknown frame");
  h2_rig_close(&rig);
}

Test(h2_frames, s4_2_data_of_16384_octets_is_accepted) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/upload", 1);
  h2_data(&rig.in, 1, 0x1, NULL, 16384, 0);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "16,384-octet DATA");
  cr_assert_eq(test_rx(rig.peer, 1)->len, 16384);
  h2_rig_close(&rig);
}

Test(h2_frames, s4_2_data_over_max_frame_size_is_a_frame_size_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/upload", 1);
  h2_data(&rig.in, 1, 0, NULL, 16385, 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_FRAME_SIZE_ERROR, "16,385-octet DATA");
  h2_expect_alive(&rig, "after the oversized DATA");
  h2_rig_close(&rig);
}

Test(h2_frames, s4_2_headers_over_max_frame_size_is_a_connection_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 16385, 0x1, 0x4, 1);
  raw_put_fill(&rig.in, 0, 16385);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "16,385 HEADERS");
  h2_rig_close(&rig);
}

Test(h2_frames, s4_2_settings_over_max_frame_size_is_a_connection_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 16386, SETTINGS, 0, 0);
  raw_put_fill(&rig.in, 0, 16386);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "big SETTINGS");
  h2_rig_close(&rig);
}

static speedy_options *options_with_frame_size(uint32_t size) {
  speedy_options *options = raw_options_new();
  speedy_options_set_max_frame_size(options, size);
  return options;
}

/* 4.2 with 6.5.3: our larger SETTINGS_MAX_FRAME_SIZE holds once acknowledged. */
Test(h2_frames, s4_2_larger_frames_are_accepted_once_our_setting_is_acknowledged) {
  speedy_options *options = options_with_frame_size(32768);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
  h2_rig_get(&rig, 1, "/upload", 1);
  h2_data(&rig.in, 1, 0x1, NULL, 30000, 0);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "30,000-octet DATA after the ACK");
  cr_assert_eq(test_rx(rig.peer, 1)->len, 30000);
  h2_rig_close(&rig);
}

Test(h2_frames, s4_2_larger_frames_before_the_acknowledgement_are_refused) {
  speedy_options *options = options_with_frame_size(32768);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 1);
  speedy_options_del(options);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig.in, NULL, NULL, 0);
  h2_frame_header(&rig.in, 20000, PING, 0, 0); /* any frame; PING is also the wrong size */
  raw_put_fill(&rig.in, 0, 20000);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "before the ACK");
  h2_rig_close(&rig);
}

/* 4.2, 6.5.2: our DATA frames stay within the peer's SETTINGS_MAX_FRAME_SIZE. */
Test(h2_frames, s4_2_our_data_frames_follow_the_peers_max_frame_size) {
  speedy_options *options = raw_options_new();
  speedy_options_set_data_frame_size(options, 1 << 20);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
  h2_settings(&rig.in, (uint16_t[]){0x5, 0x4}, (uint32_t[]){20000, 1 << 20}, 2);
  h2_window_update(&rig.in, 0, 1 << 20);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  test_body *body = test_peer_body(rig.peer, NULL, 100000);
  cr_assert_eq(speedy_submit_response(rig.peer->session, 1,
                                      (speedy_header[]){{":status", 7, "200", 3}}, 1,
                                      test_body_read, body),
               0);
  h2_output out;
  h2_output_take(&out, &rig);
  size_t total = 0, frames = 0;
  for (size_t i = 0; i < out.n; i++) {
    if (out.frames[i].hd.type != 0x0) continue;
    cr_assert_leq(out.frames[i].hd.length, 20000);
    total += out.frames[i].hd.length;
    frames++;
  }
  cr_assert_eq(total, 100000);
  cr_assert_eq(frames, 5);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* ---- 4.3 field blocks ------------------------------------------------------------------- */

Test(h2_fieldblock, s4_3_a_block_that_does_not_decode_is_a_compression_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 1, 0x1, 0x5, 1);
  raw_put_u8(&rig.in, 0x80); /* indexed field 0: no such index (RFC 7541 6.1) */
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_COMPRESSION_ERROR, "index 0");
  h2_rig_close(&rig);
}

Test(h2_fieldblock, s4_3_another_frame_inside_a_field_block_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  raw_buf block = {0};
  h2_field fields[] = {
      {":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(&rig, fields, 4, &block);
  h2_frame_header(&rig.in, (uint32_t)block.len, 0x1, 0x1, 1); /* no END_HEADERS */
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  h2_ping(&rig.in, 0, "between!");
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "PING mid-block");
  h2_rig_close(&rig);
}

/* 4.3.1: a block on a stream we reset is still decoded, so the table stays in step. */
Test(h2_fieldblock, s4_3_1_a_block_for_a_reset_stream_still_updates_the_table) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_rst(rig.peer->session, 1, SPEEDY_RST_CANCEL), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  /* Trailers sent before the peer saw our reset, with a field indexed into its table. */
  speedy_hpack_field trailer = {(const uint8_t *)"x-remember", 10, (const uint8_t *)"me", 2,
                                SPEEDY_HPACK_INDEX};
  uint8_t buf[64];
  int64_t n = speedy_hpack_encode(rig.encoder, &trailer, 1, buf, sizeof(buf));
  cr_assert_gt(n, 0);
  h2_frame_header(&rig.in, (uint32_t)n, 0x1, 0x5, 1);
  raw_put(&rig.in, buf, (size_t)n);
  /* A new request refers to that entry: index 62. */
  h2_field fields[] = {
      {":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/b"}};
  raw_buf block = {0};
  h2_rig_block(&rig, fields, 4, &block);
  raw_put_u8(&block, 0x80 | 62);
  h2_frame_header(&rig.in, (uint32_t)block.len, 0x1, 0x5, 3);
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "trailers after our RST, then a request");
  cr_assert(test_log_has(rig.peer, "header 3 x-remember=me"), "log:\n%s", rig.peer->log);
  h2_rig_close(&rig);
}

/* ---- 5.4 error handling ----------------------------------------------------------------- */

Test(h2_errors, s5_4_1_goaway_names_the_last_stream_processed_and_why) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/", 0);
  h2_rig_get(&rig, 3, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_frame_header(&rig.in, 8, PING, 0, 1); /* PING on a stream */
  raw_put(&rig.in, "abcdefgh", 8);
  cr_assert_eq(h2_rig_feed(&rig, 0), SPEEDY_ERR_PROTOCOL);
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *g = h2_output_find(&out, GOAWAY, 0);
  cr_assert_not_null(g);
  cr_assert_eq(u32(g->payload) & 0x7fffffff, 3, "last stream 3");
  cr_assert_eq(u32(g->payload + 4), SPEEDY_H2_PROTOCOL_ERROR);
  cr_assert_gt(g->hd.length, 8, "debug data says why");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_errors, s5_4_1_after_a_connection_error_input_is_refused) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 4, 0x8, 0, 0);
  raw_put_u32(&rig.in, 0);
  int64_t rv = h2_rig_feed(&rig, 0);
  h2_expect_goaway(&rig, rv, SPEEDY_H2_PROTOCOL_ERROR, "WINDOW_UPDATE 0 on the connection");
  h2_ping(&rig.in, 0, "ignored!");
  cr_assert_eq(h2_rig_feed(&rig, 0), rv, "the same error again");
  h2_rig_close(&rig);
}

Test(h2_errors, s5_4_2_a_stream_error_leaves_other_streams_alone) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/a", 1);
  h2_rig_get(&rig, 3, "/b", 1);
  h2_window_update(&rig.in, 1, 0); /* a stream error on 1 */
  h2_data(&rig.in, 3, 0x1, "ok", 2, 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_PROTOCOL_ERROR, "WINDOW_UPDATE 0");
  cr_assert(test_log_has(rig.peer, "dataend 3 len=2"), "log:\n%s", rig.peer->log);
  cr_assert(test_log_has(rig.peer, "close 1 PROTOCOL_ERROR"));
  h2_rig_close(&rig);
}

/* ---- 5.5 extensibility ------------------------------------------------------------------ */

Test(h2_extensibility, s5_5_an_unknown_frame_inside_a_field_block_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  raw_buf block = {0};
  h2_field fields[] = {
      {":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(&rig, fields, 4, &block);
  h2_frame_header(&rig.in, (uint32_t)block.len, 0x1, 0x1, 1);
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  h2_frame_header(&rig.in, 0, 0xbb, 0, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "unknown mid-block");
  h2_rig_close(&rig);
}

Test(h2_extensibility, s5_5_unknown_settings_are_ignored) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x7777, 0x3}, (uint32_t[]){42, 9}, 2);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "unknown setting");
  cr_assert(test_log_has(rig.peer, "setting 4=9 flags=0"), "the known one applied");
  h2_rig_close(&rig);
}

/* ---- 6.5 SETTINGS ----------------------------------------------------------------------- */

Test(h2_settings, s6_5_settings_are_acknowledged) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x3}, (uint32_t[]){50}, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(out.n, 1);
  cr_assert(out.frames[0].hd.type == SETTINGS && out.frames[0].hd.flags == 1 &&
            out.frames[0].hd.length == 0);
  h2_output_free(&out);
  cr_assert_eq(
      speedy_session_remote_setting(rig.peer->session, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS), 50);
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_an_ack_with_a_payload_is_a_frame_size_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 6, SETTINGS, 1, 0);
  raw_put_u16(&rig.in, 3);
  raw_put_u32(&rig.in, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "ACK with payload");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_settings_on_a_stream_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 0, SETTINGS, 0, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "SETTINGS on 1");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_a_length_not_a_multiple_of_6_is_a_frame_size_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 3, SETTINGS, 0, 0);
  raw_put_fill(&rig.in, 0, 3);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "3-octet SETTINGS");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_2_enable_push_other_than_0_or_1_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x2}, (uint32_t[]){2}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "ENABLE_PUSH=2");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_2_a_client_refuses_enable_push_1_from_a_server) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x2}, (uint32_t[]){1}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "server ENABLE_PUSH=1");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_2_initial_window_size_above_2_31_is_flow_control_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){0x80000000u}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FLOW_CONTROL_ERROR, "2^31 window");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_2_max_frame_size_below_16384_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x5}, (uint32_t[]){16383}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "frame size 16383");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_2_max_frame_size_above_2_24_minus_1_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x5}, (uint32_t[]){16777216}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "frame size 2^24");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_3_values_are_processed_in_order_the_last_wins) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x4, 0x4}, (uint32_t[]){1, 100}, 2);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(
      speedy_session_remote_setting(rig.peer->session, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE), 100);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 1), 100);
  h2_rig_close(&rig);
}

/* 6.5.3: our SETTINGS holds from the peer's acknowledgement: before it, a stream window of
 * 65,535; after it, the smaller one we asked for. */
Test(h2_settings, s6_5_3_our_initial_window_takes_effect_when_acknowledged) {
  speedy_options *options = raw_options_new();
  speedy_options_set_stream_window(options, 1000);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 1);
  speedy_options_del(options);
  raw_put(&rig.in, SPEEDY_H2_PREFACE, SPEEDY_H2_PREFACE_LEN);
  h2_settings(&rig.in, NULL, NULL, 0);
  h2_rig_get(&rig, 1, "/", 1);
  h2_data(&rig.in, 1, 0, NULL, 5000, 0); /* within 65,535: fine before the ACK */
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "5,000 octets before the ACK");
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 1), 65535 - 5000);
  h2_settings_ack(&rig.in);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  /* Moved by the difference (1,000 - 65,535), and the 5,000 octets consumed are returned
   * now that they pass half the new window: 60,535 - 64,535 + 5,000. */
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 1), 1000, "window %lld",
               (long long)speedy_session_recv_window(rig.peer->session, 1));
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *wu = h2_output_find(&out, 0x8, 1);
  cr_assert(wu != NULL && u32(wu->payload) == 5000, "the credit due goes out at once");
  h2_output_free(&out);
  h2_data(&rig.in, 1, 0, NULL, 2000, 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_FLOW_CONTROL_ERROR, "past the window");
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_3_unacknowledged_settings_time_out) {
  speedy_options *options = raw_options_new();
  speedy_options_set_settings_timeout(options, 5000000000);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, options, 1);
  speedy_options_del(options);
  cr_assert_eq(speedy_session_set_now(rig.peer->session, 1000), 0);
  size_t len;
  free(test_drain(rig.peer, &len)); /* our SETTINGS goes out at t=1000 */
  rig.preface_skipped = 1;
  cr_assert_eq(speedy_session_set_now(rig.peer->session, 4000000000), 0);
  cr_assert_eq(speedy_session_set_now(rig.peer->session, 6000001001), SPEEDY_ERR_SETTINGS_TIMEOUT);
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *g = h2_output_find(&out, GOAWAY, 0);
  cr_assert_not_null(g);
  cr_assert_eq(u32(g->payload + 4), SPEEDY_H2_SETTINGS_TIMEOUT);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_recv(rig.peer->session, NULL, 0), SPEEDY_ERR_SETTINGS_TIMEOUT);
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_3_acknowledged_settings_do_not_time_out) {
  speedy_options *options = raw_options_new();
  speedy_options_set_settings_timeout(options, 1000);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, options, 0);
  speedy_options_del(options);
  cr_assert_eq(speedy_session_set_now(rig.peer->session, 1000000000), 0);
  h2_rig_close(&rig);
}

Test(h2_settings, s6_5_our_submitted_settings_use_http2_ids) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  speedy_setting s[] = {{SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 7},
                        {SPEEDY_SETTINGS_HEADER_TABLE_SIZE, 0, 8192}};
  cr_assert_eq(speedy_submit_settings(rig.peer->session, 0, s, 2), 0);
  speedy_setting bad[] = {{SPEEDY_SETTINGS_ROUND_TRIP_TIME, 0, 7}};
  cr_assert_eq(speedy_submit_settings(rig.peer->session, 0, bad, 1), SPEEDY_ERR_INVALID_ARGUMENT,
               "a SPDY-only setting");
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *f = h2_output_find(&out, SETTINGS, 0);
  cr_assert(f != NULL && f->hd.length == 12);
  cr_assert(f->payload[0] == 0 && f->payload[1] == 3 && u32(f->payload + 2) == 7);
  cr_assert(f->payload[6] == 0 && f->payload[7] == 1 && u32(f->payload + 8) == 8192);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* ---- 6.7 PING --------------------------------------------------------------------------- */

Test(h2_ping, s6_7_a_ping_is_answered_with_ack_and_the_same_data) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_expect_alive(&rig, "PING");
  h2_rig_close(&rig);
}

Test(h2_ping, s6_7_a_ping_ack_is_not_answered) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_ping(&rig.in, 1, "unasked!");
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(out.n, 0);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_ping, s6_7_ping_on_a_stream_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 8, PING, 0, 3);
  raw_put_fill(&rig.in, 0, 8);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "PING on 3");
  h2_rig_close(&rig);
}

Test(h2_ping, s6_7_ping_of_another_length_is_a_frame_size_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 6, PING, 0, 0);
  raw_put_fill(&rig.in, 0, 6);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "6-octet PING");
  h2_rig_close(&rig);
}

Test(h2_ping, s6_7_our_ping_comes_back_with_its_round_trip) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  speedy_session_set_now(rig.peer->session, 100);
  uint32_t id;
  cr_assert_eq(speedy_submit_ping(rig.peer->session, &id), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *p = h2_output_find(&out, PING, 0);
  cr_assert(p != NULL && p->hd.flags == 0);
  char opaque[8];
  memcpy(opaque, p->payload, 8);
  h2_output_free(&out);
  speedy_session_set_now(rig.peer->session, 350);
  h2_ping(&rig.in, 1, opaque);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  char line[64];
  snprintf(line, sizeof(line), "pingack %u rtt=250", id);
  cr_assert(test_log_has(rig.peer, line), "log:\n%s", rig.peer->log);
  h2_rig_close(&rig);
}

/* ---- 6.8 GOAWAY ------------------------------------------------------------------------- */

Test(h2_goaway, s6_8_goaway_on_a_stream_is_protocol_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 8, GOAWAY, 0, 1);
  raw_put_fill(&rig.in, 0, 8);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "GOAWAY on 1");
  h2_rig_close(&rig);
}

Test(h2_goaway, s6_8_a_goaway_shorter_than_8_octets_is_a_frame_size_error) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_frame_header(&rig.in, 4, GOAWAY, 0, 0);
  raw_put_fill(&rig.in, 0, 4);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "4-octet GOAWAY");
  h2_rig_close(&rig);
}

Test(h2_goaway, s6_8_streams_above_the_last_id_are_refused_for_retry) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  int32_t a = h2_rig_client_get(&rig, "/a");
  int32_t b = h2_rig_client_get(&rig, "/b");
  h2_goaway(&rig.in, (uint32_t)a, SPEEDY_H2_NO_ERROR, "maintenance");
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  char line[64];
  snprintf(line, sizeof(line), "close %d REFUSED_STREAM", (int)b);
  cr_assert(test_log_has(rig.peer, line), "log:\n%s", rig.peer->log);
  snprintf(line, sizeof(line), "goaway %d 0", (int)a);
  cr_assert(test_log_has(rig.peer, line));
  const uint8_t *debug;
  size_t debug_len;
  cr_assert_eq(speedy_session_goaway_reason(rig.peer->session, &debug, &debug_len),
               SPEEDY_RST_NONE);
  cr_assert(debug_len == 11 && memcmp(debug, "maintenance", 11) == 0);
  h2_rig_close(&rig);
}

/* 6.8: after a graceful GOAWAY (2^31-1) our requests waiting for a concurrency slot can
 * never open: they are refused for retry at once, not left waiting. */
Test(h2_goaway, s6_8_requests_waiting_for_a_slot_are_refused_by_any_goaway) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  h2_settings(&rig.in, (uint16_t[]){0x3}, (uint32_t[]){1}, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  int32_t a = h2_rig_client_get(&rig, "/a");
  speedy_header h[] = {{":method", 7, "GET", 3},
                       {":scheme", 7, "https", 5},
                       {":authority", 10, "a", 1},
                       {":path", 5, "/b", 2}};
  int32_t b = speedy_submit_request(rig.peer->session, 3, h, 4, NULL, NULL, NULL);
  cr_assert_gt(b, a);
  cr_assert_eq(speedy_session_pending_streams(rig.peer->session), 1);
  h2_goaway(&rig.in, 0x7fffffff, SPEEDY_H2_NO_ERROR, NULL);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  char line[64];
  snprintf(line, sizeof(line), "close %d REFUSED_STREAM", (int)b);
  cr_assert(test_log_has(rig.peer, line), "log:\n%s", rig.peer->log);
  cr_assert_eq(speedy_session_pending_streams(rig.peer->session), 0);
  h2_rig_response(&rig, (uint32_t)a, "200", 0, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_want_read(rig.peer->session), 0, "nothing left to wait for");
  h2_rig_close(&rig);
}

Test(h2_goaway, s6_8_no_new_stream_opens_after_a_goaway) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  h2_goaway(&rig.in, 0, SPEEDY_H2_ENHANCE_YOUR_CALM, NULL);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  char line[32];
  snprintf(line, sizeof(line), "goaway 0 %u", (unsigned)SPEEDY_RST_ENHANCE_YOUR_CALM);
  cr_assert(test_log_has(rig.peer, line), "on_goaway reports the reason: %s", rig.peer->log);
  cr_assert_eq(speedy_session_goaway_reason(rig.peer->session, NULL, NULL),
               SPEEDY_RST_ENHANCE_YOUR_CALM);
  speedy_header h[] = {{":method", 7, "GET", 3},
                       {":scheme", 7, "https", 5},
                       {":authority", 10, "a", 1},
                       {":path", 5, "/", 1}};
  cr_assert_eq(speedy_submit_request(rig.peer->session, 3, h, 4, NULL, NULL, NULL),
               SPEEDY_ERR_SESSION_CLOSING);
  cr_assert_eq(speedy_session_want_read(rig.peer->session), 0, "nothing left to wait for");
  h2_rig_close(&rig);
}

/* 6.8: GOAWAY(2^31-1), PING; when the PING comes back, GOAWAY with the last stream. A
 * request that crossed the first GOAWAY is served. */
Test(h2_goaway, s6_8_graceful_shutdown_warns_then_names_the_last_stream) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_goaway(rig.peer->session, SPEEDY_RST_NONE, NULL, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(out.n, 2);
  cr_assert_eq(out.frames[0].hd.type, GOAWAY);
  cr_assert_eq(u32(out.frames[0].payload), 0x7fffffffu);
  cr_assert_eq(u32(out.frames[0].payload + 4), SPEEDY_H2_NO_ERROR);
  cr_assert_eq(out.frames[1].hd.type, PING);
  char opaque[8];
  memcpy(opaque, out.frames[1].payload, 8);
  h2_output_free(&out);
  h2_rig_get(&rig, 3, "/crossed", 0); /* sent before the client saw the warning */
  h2_ping(&rig.in, 1, opaque);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert(test_log_has(rig.peer, "begin 3 request"));
  h2_output_take(&out, &rig);
  const h2_out_frame *g = h2_output_find(&out, GOAWAY, 0);
  cr_assert_not_null(g, "the final GOAWAY");
  cr_assert_eq(u32(g->payload), 3);
  h2_output_free(&out);
  h2_rig_get(&rig, 5, "/late", 0); /* after the final GOAWAY: ignored */
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "a stream above the last");
  cr_assert(!test_log_has(rig.peer, "begin 5 request"));
  cr_assert(speedy_session_want_read(rig.peer->session), "streams 1 and 3 still to answer");
  h2_rig_close(&rig);
}

/* 6.8: a request that crossed our GOAWAY is ignored, and so is the rest of it — its DATA and
 * trailers, sent before the client saw the GOAWAY — without a RST_STREAM per frame (a body
 * in flight would exhaust the owed-frame cap: found by fuzz_h2_roundtrip) or a connection
 * error for the trailers. */
Test(h2_goaway, s6_8_data_and_trailers_of_an_ignored_stream_are_discarded) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_goaway(rig.peer->session, SPEEDY_RST_INTERNAL_ERROR, NULL, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  h2_rig_get(&rig, 3, "/crossed", 1); /* with a body */
  for (int i = 0; i < 40; i++) h2_data(&rig.in, 3, 0, NULL, 16, i % 2 ? 3 : 0);
  h2_field trailers[] = {{"x-checksum", "0"}};
  h2_rig_headers(&rig, 3, SPEEDY_H2_FLAG_END_STREAM, trailers, 1);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "the rest of a stream after GOAWAY");
  cr_assert(!test_log_has(rig.peer, "begin 3 request"));
  h2_rig_close(&rig);
}

/* 6.8: a stream above our last-stream-id is ignored, but its block still updates HPACK. */
Test(h2_goaway, s6_8_ignored_streams_still_update_the_hpack_table) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, NULL, 0);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_goaway(rig.peer->session, SPEEDY_RST_PROTOCOL_ERROR, NULL, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  speedy_hpack_field f[] = {
      {(const uint8_t *)":method", 7, (const uint8_t *)"GET", 3, 0},
      {(const uint8_t *)":scheme", 7, (const uint8_t *)"https", 5, 0},
      {(const uint8_t *)":authority", 10, (const uint8_t *)"a", 1, 0},
      {(const uint8_t *)":path", 5, (const uint8_t *)"/x", 2, 0},
      {(const uint8_t *)"x-kept", 6, (const uint8_t *)"1", 1, SPEEDY_HPACK_INDEX}};
  uint8_t buf[1024];
  int64_t n = speedy_hpack_encode(rig.encoder, f, 5, buf, sizeof(buf));
  cr_assert_gt(n, 0);
  h2_frame_header(&rig.in, (uint32_t)n, 0x1, 0x5, 3);
  raw_put(&rig.in, buf, (size_t)n);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "a stream after GOAWAY");
  cr_assert(!test_log_has(rig.peer, "begin 3 request"));
  size_t ours = speedy_hpack_encoder_entries(rig.encoder);
  cr_assert_gt(ours, 0);
  cr_assert_eq(speedy_hpack_decoder_entries(rig.peer->session->wire.h2.decoder), ours,
               "the ignored block's indexed fields are in the session's table too");
  h2_rig_close(&rig);
}
