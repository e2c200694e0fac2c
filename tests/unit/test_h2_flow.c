/* test_h2_flow.c — RFC 9113 conformance of flow control (5.2, 6.9): WINDOW_UPDATE's rules,
 * both windows on receipt and when sending, SETTINGS_INITIAL_WINDOW_SIZE changes (6.9.2,
 * 6.9.3), and what padding and closed streams count.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2raw.h"
#include "testutil.h"

#define DATA 0x0
#define WINDOW_UPDATE 0x8

static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void server(h2_rig *rig) { h2_rig_open(rig, SPEEDY_ROLE_SERVER, NULL, 0); }

/* A server whose application credits received DATA itself (speedy_session_consume). */
static void manual_server(h2_rig *rig) {
  speedy_options *options = raw_options_new();
  speedy_options_set_manual_flow_control(options, 1);
  h2_rig_open(rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
}

/* Sum of the WINDOW_UPDATE increments on stream_id in out. */
static uint64_t credit(const h2_output *out, int32_t stream_id) {
  uint64_t sum = 0;
  for (size_t i = 0; i < out->n; i++)
    if (out->frames[i].hd.type == WINDOW_UPDATE && out->frames[i].hd.stream_id == stream_id)
      sum += u32(out->frames[i].payload) & 0x7fffffff;
  return sum;
}

/* DATA payload octets sent on stream_id (-1: all) in out. */
static uint64_t data_sent(const h2_output *out, int32_t stream_id) {
  uint64_t sum = 0;
  for (size_t i = 0; i < out->n; i++)
    if (out->frames[i].hd.type == DATA &&
        (stream_id < 0 || out->frames[i].hd.stream_id == stream_id))
      sum += out->frames[i].hd.length;
  return sum;
}

/* The server answers stream id with size bytes of data (NULL: a pattern) read by read. */
static void respond_body(h2_rig *rig, int32_t id, const uint8_t *data, size_t size,
                         speedy_data_read_fn read) {
  test_body *body = test_peer_body(rig->peer, data, size);
  cr_assert_eq(speedy_submit_response(rig->peer->session, id,
                                      (speedy_header[]){{":status", 7, "200", 3}}, 1, read, body),
               0);
}

/* The server answers stream id with a body of size. */
static void respond_with(h2_rig *rig, int32_t id, size_t size) {
  respond_body(rig, id, NULL, size, test_body_read);
}

/* ---- WINDOW_UPDATE ---------------------------------------------------------------------- */

Test(h2_flow, s6_9_window_update_of_0_on_the_connection_is_protocol_error) {
  h2_rig rig;
  server(&rig);
  h2_window_update(&rig.in, 0, 0);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_PROTOCOL_ERROR, "WU 0 on 0");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_window_update_of_0_on_a_stream_is_a_stream_error) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  h2_window_update(&rig.in, 1, 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_PROTOCOL_ERROR, "WU 0 on 1");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_window_update_of_another_length_is_a_frame_size_error) {
  h2_rig rig;
  server(&rig);
  h2_frame_header(&rig.in, 3, WINDOW_UPDATE, 0, 0);
  raw_put_fill(&rig.in, 1, 3);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FRAME_SIZE_ERROR, "3-octet WU");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_the_reserved_bit_of_an_increment_is_ignored) {
  h2_rig rig;
  server(&rig);
  h2_window_update(&rig.in, 0, 0x80000000u | 100);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "R bit in the increment");
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 0), 65535 + 100);
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_1_a_connection_window_past_2_31_is_flow_control_error) {
  h2_rig rig;
  server(&rig);
  h2_window_update(&rig.in, 0, 0x7fffffff);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FLOW_CONTROL_ERROR, "2^31-1 + 65,535");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_1_a_stream_window_past_2_31_is_a_stream_flow_control_error) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  h2_window_update(&rig.in, 1, 0x7fffffff);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_FLOW_CONTROL_ERROR, "stream overflow");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_1_the_window_may_reach_exactly_2_31_minus_1) {
  h2_rig rig;
  server(&rig);
  h2_window_update(&rig.in, 0, 0x7fffffff - 65535);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "exactly 2^31-1");
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 0), 0x7fffffff);
  h2_rig_close(&rig);
}

/* ---- receiving within our windows ------------------------------------------------------- */

Test(h2_flow, s6_9_1_data_past_the_connection_window_is_flow_control_error) {
  speedy_options *options = raw_options_new();
  speedy_options_set_manual_flow_control(options, 1); /* nothing consumed, nothing returned */
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
  for (uint32_t id = 1; id <= 11; id += 2) h2_rig_get(&rig, id, "/", 1);
  /* 6 streams x 16,384 octets = 98,304 > 65,535, each stream within its own window. */
  for (uint32_t id = 1; id <= 11; id += 2) h2_data(&rig.in, id, 0, NULL, 16384, 0);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FLOW_CONTROL_ERROR, "connection window");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_1_data_past_a_stream_window_is_a_stream_flow_control_error) {
  speedy_options *options = raw_options_new();
  speedy_options_set_stream_window(options, 1000);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_SERVER, options, 0);
  speedy_options_del(options);
  h2_rig_get(&rig, 1, "/", 1);
  h2_data(&rig.in, 1, 0, NULL, 1001, 0);
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_FLOW_CONTROL_ERROR, "1,001 in 1,000");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_2_both_windows_start_at_65535) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 0), 65535);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 1), 65535);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 0), 65535);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 1), 65535);
  /* 65,535 octets exactly are accepted on a stream. */
  for (int i = 0; i < 3; i++) h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  h2_data(&rig.in, 1, 0x1, NULL, 65535 - 3 * 16384, 0);
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "65,535 octets");
  cr_assert_eq(test_rx(rig.peer, 1)->len, 65535);
  h2_rig_close(&rig);
}

/* 6.9: we return credit as the application consumes (half a window at a time). */
Test(h2_flow, s6_9_received_data_is_credited_back_on_both_windows) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  for (int i = 0; i < 3; i++) h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  /* Credit goes back once half a window is due: after the second frame. */
  cr_assert_eq(credit(&out, 1), 32768, "the stream: %llu", (unsigned long long)credit(&out, 1));
  cr_assert_eq(credit(&out, 0), 32768, "the connection: %llu", (unsigned long long)credit(&out, 0));
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* WINDOW_UPDATE frames on stream_id in out. */
static size_t updates(const h2_output *out, int32_t stream_id) {
  size_t n = 0;
  for (size_t i = 0; i < out->n; i++)
    n += out->frames[i].hd.type == WINDOW_UPDATE && out->frames[i].hd.stream_id == stream_id;
  return n;
}

/* A window the application widened is returned at half of its size, not of the initial
 * window: else every DATA frame costs a WINDOW_UPDATE, and a client that has closed the
 * stream while its last frames were in flight meets them as a flood (found by
 * fuzz_h2_roundtrip). The connection's window likewise. */
Test(h2_flow, s6_9_a_widened_window_is_credited_back_at_half_its_size) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_window_update(rig.peer->session, 1, 1 << 20), 0);
  cr_assert_eq(speedy_submit_window_update(rig.peer->session, 0, 1 << 20), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  for (int i = 0; i < 40; i++) h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output_take(&out, &rig);
  uint32_t half = (65535 + (1 << 20)) / 2;
  cr_assert_eq(updates(&out, 1), 1, "the stream: %zu updates", updates(&out, 1));
  cr_assert_geq(credit(&out, 1), half);
  cr_assert_eq(updates(&out, 0), 1, "the connection: %zu updates", updates(&out, 0));
  cr_assert_geq(credit(&out, 0), half);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_flow, s6_1_padding_counts_against_both_windows_and_is_credited) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  h2_data(&rig.in, 1, 0, NULL, 16000, 255);
  h2_data(&rig.in, 1, 0, NULL, 16000, 255);
  h2_data(&rig.in, 1, 0, NULL, 1000, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(test_rx(rig.peer, 1)->len, 33000);
  h2_output out;
  h2_output_take(&out, &rig);
  uint64_t counted = 2 * (16000 + 256) + 1000;
  cr_assert_eq(credit(&out, 0), counted, "%llu", (unsigned long long)credit(&out, 0));
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_manual_flow_control_credits_only_what_the_application_consumed) {
  h2_rig rig;
  manual_server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  for (int i = 0; i < 3; i++) h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(credit(&out, 1), 0);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_consume(rig.peer->session, 1, 40000), 0);
  h2_output_take(&out, &rig);
  cr_assert_eq(credit(&out, 1), 40000);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* The application can consume only what it was given: more would widen the peer's window
 * past what it sent, and past 2^31-1 a strict peer resets the stream (found by
 * fuzz_h2_roundtrip: a client that had announced a 2^31-1 window consumed bytes of a
 * stream with no DATA yet, and its WINDOW_UPDATE overflowed the server's window). */
Test(h2_flow, s6_9_1_manual_credit_is_capped_at_the_data_received) {
  h2_rig rig;
  manual_server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  h2_rig_get(&rig, 3, "/", 1);
  h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_consume(rig.peer->session, 3, 40000), 0, "nothing received");
  cr_assert_eq(speedy_session_consume(rig.peer->session, 1, 40000), 0);
  cr_assert_eq(speedy_session_consume(rig.peer->session, 1, 40000), 0, "all consumed");
  h2_output_take(&out, &rig);
  cr_assert_eq(credit(&out, 3), 0);
  cr_assert_eq(credit(&out, 1), 32768, "%llu", (unsigned long long)credit(&out, 1));
  cr_assert_eq(credit(&out, 0), 32768, "%llu", (unsigned long long)credit(&out, 0));
  h2_output_free(&out);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 1), 65535);
  h2_rig_close(&rig);
}

/* DATA of a stream that closes before the application consumed it still took the
 * connection window: the peer gets it back when the stream closes, or the connection
 * would stall on dead streams. Consuming it afterwards does nothing. */
Test(h2_flow, s6_9_unconsumed_data_of_a_closed_stream_returns_to_the_connection) {
  h2_rig rig;
  manual_server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  h2_data(&rig.in, 1, 0, NULL, 16384, 0);
  h2_rst_stream(&rig.in, 1, 0x8);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(credit(&out, 0), 32768, "%llu", (unsigned long long)credit(&out, 0));
  h2_output_free(&out);
  cr_assert_eq(speedy_session_consume(rig.peer->session, 1, 32768), 0);
  h2_output_take(&out, &rig);
  cr_assert_eq(credit(&out, 0), 0, "credited twice");
  h2_output_free(&out);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 0), 65535);
  h2_rig_close(&rig);
}

/* Credit the application gives from on_data_chunk goes back with the frame's end, so the
 * WINDOW_UPDATEs do not depend on how the input was cut (found by fuzz_split). */
Test(h2_flow, s6_9_manual_credit_from_the_data_callback_does_not_depend_on_input_cuts) {
  for (size_t chunk = 0; chunk <= 1; chunk++) {
    h2_rig rig;
    manual_server(&rig);
    rig.peer->consume_data = 1;
    h2_rig_get(&rig, 1, "/", 1);
    cr_assert_geq(h2_rig_feed(&rig, 0), 0);
    for (int i = 0; i < 2; i++) h2_data(&rig.in, 1, 0, NULL, 16384, 0);
    cr_assert_geq(h2_rig_feed(&rig, chunk), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    cr_assert_eq(credit(&out, 1), 32768, "fed %s: %llu", chunk ? "an octet at a time" : "whole",
                 (unsigned long long)credit(&out, 1));
    h2_output_free(&out);
    h2_rig_close(&rig);
  }
}

Test(h2_flow, s5_2_a_larger_connection_window_is_opened_at_the_start) {
  speedy_options *options = raw_options_new();
  speedy_options_set_session_window(options, 1 << 20);
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, options, 1);
  speedy_options_del(options);
  h2_output out;
  h2_output_take(&out, &rig);
  const h2_out_frame *wu = h2_output_find(&out, WINDOW_UPDATE, 0);
  cr_assert_not_null(wu);
  cr_assert_eq(u32(wu->payload), (1u << 20) - 65535);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 0), 1 << 20);
  h2_rig_close(&rig);
}

/* ---- sending within the peer's windows -------------------------------------------------- */

Test(h2_flow, s6_9_1_we_stop_at_the_peers_stream_window_and_resume_on_update) {
  h2_rig rig;
  server(&rig);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){1000}, 1);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  respond_with(&rig, 1, 5000);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, 1), 1000);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 1), 0);
  h2_window_update(&rig.in, 1, 4000);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, 1), 4000);
  cr_assert(out.frames[out.n - 1].hd.flags & 0x1, "END_STREAM with the last");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_1_we_stop_at_the_connection_window_and_resume_on_update) {
  h2_rig rig;
  server(&rig);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){1 << 20}, 1);
  h2_rig_get(&rig, 1, "/", 0);
  h2_rig_get(&rig, 3, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  respond_with(&rig, 1, 50000);
  respond_with(&rig, 3, 50000);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, -1), 65535);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_want_write(rig.peer->session), 0, "nothing to write until credit");
  h2_window_update(&rig.in, 0, 100000);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, -1), 100000 - 65535);
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* 6.9.2: a new SETTINGS_INITIAL_WINDOW_SIZE moves every open stream's window, below 0 too. */
Test(h2_flow, s6_9_2_an_initial_window_change_moves_open_streams_windows) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  respond_with(&rig, 1, 70000);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, 1), 65535);
  h2_output_free(&out);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){60000}, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 1), -5535);
  h2_window_update(&rig.in, 1, 6000);
  h2_window_update(&rig.in, 0, 10000);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output_take(&out, &rig);
  cr_assert_eq(data_sent(&out, 1), 465, "6,000 - 5,535");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_2_an_initial_window_change_past_2_31_is_flow_control_error) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  respond_with(&rig, 1, 10); /* the stream still sends: its window counts */
  h2_window_update(&rig.in, 1, 0x7fffffff - 65535);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){65536}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FLOW_CONTROL_ERROR, "window past 2^31");
  h2_rig_close(&rig);
}

/* 6.9.2: "any flow-control window": also that of a stream we have finished sending on. */
Test(h2_flow, s6_9_2_past_2_31_on_a_finished_stream_is_flow_control_error_too) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1); /* the client still uploads */
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_submit_response(rig.peer->session, 1,
                                      (speedy_header[]){{":status", 7, "200", 3}}, 1, NULL, NULL),
               0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  h2_window_update(&rig.in, 1, 0x7fffffff - 65535);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){65536}, 1);
  h2_expect_goaway(&rig, h2_rig_feed(&rig, 0), SPEEDY_H2_FLOW_CONTROL_ERROR, "window past 2^31");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_2_the_connection_window_is_not_moved_by_initial_window_size) {
  h2_rig rig;
  server(&rig);
  h2_settings(&rig.in, (uint16_t[]){0x4}, (uint32_t[]){10}, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 0), 65535);
  h2_rig_close(&rig);
}

/* 6.9.3: our smaller window holds once acknowledged; what is due then is returned. */
Test(h2_flow, s6_9_3_our_window_reduction_holds_from_the_acknowledgement) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 100};
  cr_assert_eq(speedy_submit_settings(rig.peer->session, 0, &s, 1), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  h2_data(&rig.in, 1, 0, NULL, 1000, 0); /* before the ACK: fine */
  h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "1,000 before the ACK");
  h2_settings_ack(&rig.in);
  h2_data(&rig.in, 1, 0, NULL, 101, 0); /* 100 - 1,000 + 1,000 credited = 100 */
  h2_expect_rst(&rig, h2_rig_feed(&rig, 0), 1, SPEEDY_H2_FLOW_CONTROL_ERROR, "101 in 100");
  h2_rig_close(&rig);
}

/* 6.9.1, 6.9.2: the peer applies our larger INITIAL_WINDOW_SIZE when it reads the SETTINGS,
 * before we see its ACK; a WINDOW_UPDATE submitted meanwhile must fit the window the peer
 * then has, or the peer resets the stream with FLOW_CONTROL_ERROR (found by
 * fuzz_h2_roundtrip: our client raised its window to 2^31-1 and opened a stream's window). */
Test(h2_flow, s6_9_1_window_update_counts_our_unacknowledged_larger_initial_window) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0x7fffffff};
  cr_assert_eq(speedy_submit_settings(rig.peer->session, 0, &s, 1), 0);
  cr_assert_eq(speedy_submit_window_update(rig.peer->session, 1, 20000), SPEEDY_ERR_WINDOW_OVERFLOW,
               "the peer's window would pass 2^31-1");
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_eq(h2_output_count(&out, 0x8), 0, "no WINDOW_UPDATE went out");
  h2_output_free(&out);
  h2_rig_close(&rig);
}

/* ... and once a lower window is acknowledged, the larger one before it no longer counts. */
Test(h2_flow, s6_9_1_window_update_forgets_a_larger_window_acknowledged_and_lowered) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  uint32_t windows[] = {0x7fffffff, 0};
  for (int i = 0; i < 2; i++) {
    speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, windows[i]};
    cr_assert_eq(speedy_submit_settings(rig.peer->session, 0, &s, 1), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    h2_output_free(&out);
    h2_settings_ack(&rig.in);
    h2_expect_quiet(&rig, h2_rig_feed(&rig, 0), "the ACK");
  }
  cr_assert_eq(speedy_submit_window_update(rig.peer->session, 1, 1 << 20), 0,
               "the peer's window is 0 now: 1 MiB fits");
  h2_rig_close(&rig);
}

Test(h2_flow, s6_9_data_for_a_closed_stream_still_counts_on_the_connection) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_data(&rig.in, 1, 0, NULL, 10000, 0); /* STREAM_CLOSED, but the octets count */
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  h2_output out;
  h2_output_take(&out, &rig);
  h2_output_free(&out);
  cr_assert_eq(speedy_session_recv_window(rig.peer->session, 0), 65535 - 10000);
  h2_rig_close(&rig);
}

/* ---- zero-copy DATA (SPEEDY_DATA_FLAG_NO_COPY) -------------------------------------- */

static uint8_t nocopy_bytes[100 * 1024];

static void respond_nocopy(h2_rig *rig, int32_t id) {
  respond_body(rig, id, nocopy_bytes, sizeof(nocopy_bytes), test_body_read_nocopy);
}

/* What on_send_data writes counts towards what the caller asked for: asked for one octet
 * at a time, a session writes one DATA frame per call, not every frame its windows allow
 * (which would defeat a server's bound on unsent output). */
Test(h2_flow, zero_copy_output_is_bounded_by_what_was_asked_for) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  respond_nocopy(&rig, 1);
  speedy_session *session = rig.peer->session;
  const uint8_t *p;
  int64_t n;
  while ((n = speedy_session_peek_output(session, &p, 1)) > 0)
    speedy_session_consume_output(session, 1); /* the HEADERS frame, an octet at a time */
  cr_assert_eq(n, 0);
  cr_assert_eq(rig.peer->side_len, 9 + 16384, "on_send_data wrote %zu octets", rig.peer->side_len);
  cr_assert(speedy_session_want_write(session), "more DATA is due");
  cr_assert_eq(speedy_session_peek_output(session, &p, 1), 0);
  cr_assert_eq(rig.peer->side_len, 2 * (9 + 16384));
  h2_rig_close(&rig);
}

/* A zero-copy frame still waiting for its turn when its stream is reset never goes out:
 * the connection window it took comes back, or every such reset would shrink the window
 * for good (the peer never counts octets it never received). */
Test(h2_flow, s6_9_a_dropped_zero_copy_frame_gives_its_connection_window_back) {
  h2_rig rig;
  server(&rig);
  h2_rig_get(&rig, 1, "/", 0);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  speedy_session *session = rig.peer->session;
  int64_t window = speedy_session_send_window(session, 0);
  respond_nocopy(&rig, 1);
  const uint8_t *p;
  cr_assert_gt(speedy_session_peek_output(session, &p, 65536), 0); /* HEADERS, DATA waits */
  cr_assert_eq(rig.peer->side_len, 0);
  cr_assert_eq(speedy_session_send_window(session, 0), window - 16384);
  h2_rst_stream(&rig.in, 1, SPEEDY_H2_CANCEL);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_send_window(session, 0), window, "%lld of %lld",
               (long long)speedy_session_send_window(session, 0), (long long)window);
  h2_output out;
  h2_output_take(&out, &rig);
  cr_assert_null(h2_output_find(&out, DATA, 1), "no DATA after the reset");
  h2_output_free(&out);
  cr_assert_eq(rig.peer->side_len, 0);
  h2_rig_close(&rig);
}

/* A request body's last zero-copy frame, still waiting behind the HEADERS frame when the
 * whole response arrives, keeps its stream until it is written: the END_STREAM it carries
 * must reach the server (found by fuzz_h2_roundtrip with zero-copy bodies; the stream was
 * closed and the frame dropped, and the server waited for the body's end for ever). */
Test(h2_flow, s8_1_a_last_zero_copy_frame_goes_out_after_the_response_ended) {
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  speedy_session *session = rig.peer->session;
  test_body *body = test_peer_body(rig.peer, nocopy_bytes, 1000);
  speedy_header post[] = {{":method", 7, "POST", 4},
                          {":scheme", 7, "https", 5},
                          {":authority", 10, "example.test", 12},
                          {":path", 5, "/upload", 7}};
  int32_t id = speedy_submit_request(session, 3, post, 4, test_body_read_nocopy, body, NULL);
  cr_assert_gt(id, 0);
  const uint8_t *p;
  int64_t n = speedy_session_peek_output(session, &p, 65536); /* HEADERS; the DATA waits */
  cr_assert_gt(n, 0);
  cr_assert_eq(rig.peer->side_len, 0);
  h2_rig_response(&rig, (uint32_t)id, "200", 0, 1);
  cr_assert_geq(h2_rig_feed(&rig, 0), 0);
  cr_assert_eq(speedy_session_open_streams(session), 1, "the stream waits for its last frame");
  speedy_session_consume_output(session, (size_t)n);
  (void)speedy_session_peek_output(session, &p, 65536);
  cr_assert_eq(rig.peer->side_len, 9 + 1000, "on_send_data wrote %zu", rig.peer->side_len);
  cr_assert_eq(rig.peer->side[3], DATA);
  cr_assert_eq(rig.peer->side[4] & 0x1, 0x1, "END_STREAM");
  cr_assert_eq(speedy_session_open_streams(session), 0, "closed once written");
  h2_rig_close(&rig);
}
