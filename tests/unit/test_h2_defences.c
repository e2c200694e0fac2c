/* test_h2_defences.c — HTTP/2's defences, on by default (RFC 9113 10.5 and the attacks
 * known since): CONTINUATION floods, oversized and bomb field blocks (10.5.1), rapid reset,
 * floods of frames that need an answer (SETTINGS, PING, those answered with RST_STREAM)
 * or that carry nothing, and the budgets refilling with the application's clock.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2raw.h"
#include "testutil.h"

#define HEADERS 0x1
#define CONTINUATION 0x9

static void server(h2_rig *rig) { h2_rig_open(rig, SPEEDY_ROLE_SERVER, NULL, 0); }

static speedy_options *options(void) { return raw_options_new(); }

Test(h2_defences, continuation_flood_ends_the_session_with_enhance_your_calm) {
  h2_rig rig;
  server(&rig);
  raw_buf block = {0};
  h2_field f[] = {{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(&rig, f, 4, &block);
  h2_frame_header(&rig.in, (uint32_t)block.len, HEADERS, 0x1, 1);
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  for (int i = 0; i < 100; i++) { /* one-octet fragments of a never-ending field */
    h2_frame_header(&rig.in, 1, CONTINUATION, 0, 1);
    raw_put_u8(&rig.in, 0);
  }
  int64_t rv = h2_rig_feed(&rig, 0);
  cr_assert_eq(rv, SPEEDY_ERR_FLOOD);
  h2_expect_goaway(&rig, rv, SPEEDY_H2_ENHANCE_YOUR_CALM, "100 CONTINUATION frames");
  h2_rig_close(&rig);
}

Test(h2_defences, the_continuation_cap_is_an_option) {
  speedy_options *o = options();
  speedy_options_set_max_continuations(o, 2);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  raw_buf block = {0};
  h2_field f[] = {{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/"}};
  h2_rig_block(&rig, f, 4, &block);
  size_t third = block.len / 3;
  h2_frame_header(&rig.in, (uint32_t)third, HEADERS, 0x1, 1);
  raw_put(&rig.in, block.data, third);
  h2_frame_header(&rig.in, (uint32_t)third, CONTINUATION, 0, 1);
  raw_put(&rig.in, block.data + third, third);
  h2_frame_header(&rig.in, (uint32_t)(block.len - 2 * third), CONTINUATION, 0x4, 1);
  raw_put(&rig.in, block.data + 2 * third, block.len - 2 * third);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "two CONTINUATION frames");
  cr_assert(test_log_has(rig.peer, "begin 1 request"));
  h2_frame_header(&rig.in, 0, HEADERS, 0x1, 3);
  for (int i = 0; i < 3; i++) h2_frame_header(&rig.in, 0, CONTINUATION, 0, 3);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "three");
  raw_buf_free(&block);
  h2_rig_close(&rig);
}

Test(h2_defences, s10_5_1_an_assembled_block_over_the_cap_ends_the_session) {
  speedy_options *o = options();
  speedy_options_set_max_header_block(o, 4096);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  h2_frame_header(&rig.in, 4000, HEADERS, 0x1, 1);
  raw_put_fill(&rig.in, 0x82, 4000); /* ":method: GET" over and over */
  h2_frame_header(&rig.in, 4000, CONTINUATION, 0x4, 1);
  raw_put_fill(&rig.in, 0x82, 4000);
  int64_t rv = h2_rig_feed(&rig, 0);
  cr_assert_eq(rv, SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  h2_expect_goaway(&rig, rv, SPEEDY_H2_ENHANCE_YOUR_CALM, "8,000 octets of block");
  h2_rig_close(&rig);
}

/* 10.5.1: a small block that decodes to a huge list (one big indexed field repeated) is
 * refused by the header-list cap; the table stays in step and the session goes on. */
Test(h2_defences, s10_5_1_an_hpack_bomb_resets_its_stream_and_the_session_goes_on) {
  h2_rig rig;
  server(&rig);
  static char big[3000];
  memset(big, 'b', sizeof(big) - 1);
  speedy_hpack_field fields[] = {
      {(const uint8_t *)":method", 7, (const uint8_t *)"GET", 3, 0},
      {(const uint8_t *)":scheme", 7, (const uint8_t *)"https", 5, 0},
      {(const uint8_t *)":authority", 10, (const uint8_t *)"a", 1, 0},
      {(const uint8_t *)":path", 5, (const uint8_t *)"/", 1, 0},
      {(const uint8_t *)"x-bomb", 6, (const uint8_t *)big, sizeof(big) - 1, SPEEDY_HPACK_INDEX}};
  uint8_t buf[8192];
  int64_t n = speedy_hpack_encode(rig.encoder, fields, 5, buf, sizeof(buf));
  cr_assert_gt(n, 0);
  raw_buf block = {0};
  raw_put(&block, buf, (size_t)n);
  for (int i = 0; i < 1000; i++) raw_put_u8(&block, 0x80 | 62); /* 3 KiB each: 3 MB */
  h2_frame_header(&rig.in, (uint32_t)block.len, HEADERS, 0x5, 1);
  raw_put(&rig.in, block.data, block.len);
  raw_buf_free(&block);
  h2_rig_get(&rig, 3, "/after", 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_ENHANCE_YOUR_CALM, "a 3 MB list");
  cr_assert(!test_log_has(rig.peer, "begin 1 request"));
  cr_assert(test_log_has(rig.peer, "begin 3 request"), "the table stayed in step");
  cr_assert_lt(speedy_session_memory(rig.peer->session), 1 << 20, "memory stayed small");
  h2_rig_close(&rig);
}

/* CVE-2023-44487: streams opened and reset at once spend the reset budget. */
Test(h2_defences, rapid_reset_ends_the_session_with_enhance_your_calm) {
  speedy_options *o = options();
  speedy_options_set_reset_budget(o, 50, 10);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (uint32_t id = 1; id < 2 * 60; id += 2) {
    h2_rig_get(&rig, id, "/", 0);
    h2_rst_stream(&rig.in, id, SPEEDY_H2_CANCEL);
  }
  int64_t rv = h2_rig_feed(&rig, 0);
  cr_assert_eq(rv, SPEEDY_ERR_FLOOD);
  h2_expect_goaway(&rig, rv, SPEEDY_H2_ENHANCE_YOUR_CALM, "60 resets, budget 50");
  h2_rig_close(&rig);
}

Test(h2_defences, the_reset_budget_refills_with_the_applications_clock) {
  speedy_options *o = options();
  speedy_options_set_reset_budget(o, 20, 10);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  int64_t now = 1000000000;
  uint32_t id = 1;
  for (int second = 0; second < 10; second++) { /* 10 a second: as fast as it refills */
    speedy_session_set_now(rig.peer->session, now);
    for (int i = 0; i < 10; i++, id += 2) {
      h2_rig_get(&rig, id, "/", 0);
      h2_rst_stream(&rig.in, id, SPEEDY_H2_CANCEL);
    }
    cr_assert_geq(h2_rig_feed(&rig, 0), 0, "second %d", second);
    now += 1000000000;
  }
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_null(h2_output_find(&out, 0x7, 0), "100 resets over 10 s: within the budget");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* Streams we must reset for the peer's mistakes spend the same budget (CVE-2019-9514). */
Test(h2_defences, resets_the_peer_provokes_spend_the_budget_too) {
  speedy_options *o = options();
  speedy_options_set_reset_budget(o, 30, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (uint32_t id = 1; id < 2 * 40; id += 2) {
    h2_rig_get(&rig, id, "/", 1);
    h2_window_update(&rig.in, id, 0); /* a stream error each */
  }
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "40 provoked resets");
  h2_rig_close(&rig);
}

/* CVE-2019-9512: PINGs from a peer that does not read are capped by what we owe. */
Test(h2_defences, a_ping_flood_is_capped_by_the_owed_frame_limit) {
  speedy_options *o = options();
  speedy_options_set_max_queued_control_frames(o, 100);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (int i = 0; i < 150; i++) h2_ping(&rig.in, 0, "flooding");
  int64_t rv = h2_rig_feed(&rig, 0);
  cr_assert_eq(rv, SPEEDY_ERR_FLOOD);
  h2_expect_goaway(&rig, rv, SPEEDY_H2_ENHANCE_YOUR_CALM, "150 PINGs unread");
  h2_rig_close(&rig);
}

/* CVE-2019-9515: SETTINGS from a peer that does not read, likewise. */
Test(h2_defences, a_settings_flood_is_capped_by_the_owed_frame_limit) {
  speedy_options *o = options();
  speedy_options_set_max_queued_control_frames(o, 100);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (int i = 0; i < 150; i++) h2_settings(&rig.in, NULL, NULL, 0);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "150 SETTINGS");
  h2_rig_close(&rig);
}

Test(h2_defences, pings_from_a_peer_that_reads_are_fine) {
  speedy_options *o = options();
  speedy_options_set_max_queued_control_frames(o, 100);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (int round = 0; round < 10; round++) {
    for (int i = 0; i < 50; i++) h2_ping(&rig.in, 0, "fine....");
    cr_assert_geq(h2_rig_feed(&rig, 0), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    cr_assert_eq(h2_output_count(&out, 0x6), 50);
    h2_output_free(&out);
  }
  h2_rig_close(&rig);
}

/* CVE-2019-9518: empty DATA frames cost nothing to send and something to process. */
Test(h2_defences, empty_data_frames_spend_the_empty_frame_budget) {
  speedy_options *o = options();
  speedy_options_set_empty_frame_budget(o, 100, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  h2_rig_get(&rig, 1, "/", 1);
  for (int i = 0; i < 200; i++) h2_data(&rig.in, 1, 0, "", 0, 0);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "200 empty DATA");
  h2_rig_close(&rig);
}

Test(h2_defences, an_empty_data_frame_that_ends_the_stream_is_not_counted) {
  speedy_options *o = options();
  speedy_options_set_empty_frame_budget(o, 5, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (uint32_t id = 1; id < 40; id += 2) {
    h2_rig_get(&rig, id, "/", 1);
    h2_data(&rig.in, id, 0x1, "", 0, 0);
  }
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "20 empty DATA with END_STREAM");
  h2_rig_close(&rig);
}

Test(h2_defences, priority_and_unknown_frames_spend_the_empty_frame_budget) {
  speedy_options *o = options();
  speedy_options_set_empty_frame_budget(o, 100, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  for (int i = 0; i < 60; i++) {
    h2_priority(&rig.in, 3, 0, 1);
    h2_frame_header(&rig.in, 0, 0xee, 0, 0);
  }
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "120 of nothing");
  h2_rig_close(&rig);
}

Test(h2_defences, window_updates_for_closed_streams_spend_the_empty_frame_budget) {
  speedy_options *o = options();
  speedy_options_set_empty_frame_budget(o, 100, 0);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, o, 0);
  speedy_options_del(o);
  h2_rig_get(&rig, 1, "/", 0);
  h2_rst_stream(&rig.in, 1, SPEEDY_H2_CANCEL);
  for (int i = 0; i < 150; i++) h2_window_update(&rig.in, 1, 1000);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_ENHANCE_YOUR_CALM, "150 useless WU");
  h2_rig_close(&rig);
}

/* 5.1.1 from the other side: a client may use the last odd id; nothing breaks. */
Test(h2_defences, s5_1_1_the_highest_stream_id_is_served) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 0x7fffffff, "/last", 0);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "stream 2^31-1");
  cr_assert(test_log_has(rig.peer, "begin 2147483647 request"));
  h2_rig_get(&rig, 1, "/", 0);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "nothing after it");
  h2_rig_close(&rig);
}

/* Feeding one octet at a time gives the same session as one buffer. */
Test(h2_defences, input_split_anywhere_gives_the_same_result) {
  char *logs[2];
  for (int split = 0; split < 2; split++) {
    h2_rig rig;
    server(&rig);
    h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){1000}, 1);
    h2_rig_get(&rig, 1, "/a", 1);
    h2_data(&rig.in, 1, 0, NULL, 5000, 9);
    h2_ping(&rig.in, 0, "pingping");
    h2_data(&rig.in, 1, 0x1, "end", 3, 0);
    raw_buf block = {0};
    h2_field f[] = {{":method", "GET"}, {":scheme", "https"}, {":authority", "a"}, {":path", "/b"}};
    h2_rig_block(&rig, f, 4, &block);
    h2_frame_header(&rig.in, 3, HEADERS, 0x1, 3);
    raw_put(&rig.in, block.data, 3);
    h2_frame_header(&rig.in, (uint32_t)(block.len - 3), CONTINUATION, 0x4, 3);
    raw_put(&rig.in, block.data + 3, block.len - 3);
    raw_buf_free(&block);
    cr_assert_geq(h2_rig_feed(&rig, split ? 1 : 0), 0);
    logs[split] = raw_coalesced_log(rig.peer);
    h2_rig_close(&rig);
  }
  cr_assert_str_eq(logs[0], logs[1]);
  free(logs[0]);
  free(logs[1]);
}
