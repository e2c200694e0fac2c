/* test_h2_frame.c — the HTTP/2 wire format (lib/h2_frame.c), one test per rule of RFC 9113
 * §4 and §6 (and RFC 9218 §7.1) that a frame alone can break; each test's name carries
 * its section. Byte layouts are written out from the RFC's figures. */
#include <criterion/criterion.h>
#include <string.h>

#include "h2_frame.h"

#define CONN(code) SPEEDY_H2_CONNECTION_ERROR(SPEEDY_H2_##code)
#define STREAM(code) SPEEDY_H2_STREAM_ERROR(SPEEDY_H2_##code)

static speedy_h2_frame_hd hd_of(uint32_t length, uint8_t type, uint8_t flags, int32_t id) {
  return (speedy_h2_frame_hd){.length = length, .type = type, .flags = flags, .stream_id = id};
}

static void assert_verdict(int got, int want, const char *what) {
  cr_assert_eq(got, want, "%s: verdict %s %s, expected %s %s", what,
               got == 0                               ? "ok"
               : SPEEDY_H2_VERDICT_IS_CONNECTION(got) ? "connection"
                                                      : "stream",
               got == 0 ? "" : speedy_h2_error_name(SPEEDY_H2_VERDICT_CODE(got)),
               want == 0                               ? "ok"
               : SPEEDY_H2_VERDICT_IS_CONNECTION(want) ? "connection"
                                                       : "stream",
               want == 0 ? "" : speedy_h2_error_name(SPEEDY_H2_VERDICT_CODE(want)));
}

/* ---- §4.1 frame header ---- */

Test(h2_frame, s4_1_header_round_trips_and_ignores_the_reserved_bit) {
  uint8_t wire[9];
  speedy_h2_frame_hd_encode(wire, 0x123456, SPEEDY_H2_FRAME_HEADERS, 0x25, 0x7ffffffe);
  static const uint8_t want[9] = {0x12, 0x34, 0x56, 0x01, 0x25, 0x7f, 0xff, 0xff, 0xfe};
  cr_assert_arr_eq(wire, want, 9);
  wire[5] |= 0x80; /* reserved bit set by the peer */
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  cr_assert_eq(hd.length, 0x123456);
  cr_assert_eq(hd.type, SPEEDY_H2_FRAME_HEADERS);
  cr_assert_eq(hd.flags, 0x25);
  cr_assert_eq(hd.stream_id, 0x7ffffffe, "the reserved bit must be ignored on receipt");
}

Test(h2_frame, s4_2_oversized_frames_altering_connection_state_are_connection_errors) {
  speedy_h2_frame_hd hd;
  hd = hd_of(20000, SPEEDY_H2_FRAME_DATA, 0, 1);
  assert_verdict(speedy_h2_frame_too_large(&hd), STREAM(FRAME_SIZE_ERROR), "DATA");
  hd = hd_of(20000, SPEEDY_H2_FRAME_PRIORITY, 0, 1);
  assert_verdict(speedy_h2_frame_too_large(&hd), STREAM(FRAME_SIZE_ERROR), "PRIORITY");
  /* 6.4, 6.9: RST_STREAM and WINDOW_UPDATE of another length; PING, GOAWAY and
   * PRIORITY_UPDATE belong on stream 0. */
  static const uint8_t connection_types[] = {
      SPEEDY_H2_FRAME_HEADERS,  SPEEDY_H2_FRAME_PUSH_PROMISE,  SPEEDY_H2_FRAME_CONTINUATION,
      SPEEDY_H2_FRAME_SETTINGS, SPEEDY_H2_FRAME_RST_STREAM,    SPEEDY_H2_FRAME_PING,
      SPEEDY_H2_FRAME_GOAWAY,   SPEEDY_H2_FRAME_WINDOW_UPDATE, SPEEDY_H2_FRAME_PRIORITY_UPDATE};
  for (size_t i = 0; i < sizeof(connection_types); i++) {
    hd = hd_of(20000, connection_types[i], 0, 1);
    assert_verdict(speedy_h2_frame_too_large(&hd), CONN(FRAME_SIZE_ERROR),
                   speedy_h2_frame_type_name(connection_types[i]));
  }
  hd = hd_of(20000, 0xfa, 0, 0); /* any frame on stream 0 */
  assert_verdict(speedy_h2_frame_too_large(&hd), CONN(FRAME_SIZE_ERROR), "unknown on stream 0");
}

/* ---- §6.1 DATA ---- */

Test(h2_frame, s6_1_data_padding_is_stripped_and_counted_for_flow_control) {
  static const uint8_t payload[] = {3, 'a', 'b', 0, 0, 0};
  speedy_h2_frame_hd hd = hd_of(sizeof(payload), SPEEDY_H2_FRAME_DATA, SPEEDY_H2_FLAG_PADDED, 1);
  speedy_h2_data data;
  assert_verdict(speedy_h2_decode_data(&hd, payload, &data), 0, "padded DATA");
  cr_assert_eq(data.data_len, 2);
  cr_assert_eq(memcmp(data.data, "ab", 2), 0);
  cr_assert_eq(data.flow_len, 6, "the whole payload counts against the window");
}

Test(h2_frame, s6_1_data_on_stream_0_is_a_connection_protocol_error) {
  speedy_h2_frame_hd hd = hd_of(0, SPEEDY_H2_FRAME_DATA, 0, 0);
  speedy_h2_data data;
  assert_verdict(speedy_h2_decode_data(&hd, NULL, &data), CONN(PROTOCOL_ERROR), "DATA on 0");
}

Test(h2_frame, s6_1_data_padding_as_long_as_the_payload_is_a_protocol_error) {
  static const uint8_t payload[] = {3, 0, 0};
  speedy_h2_frame_hd hd = hd_of(sizeof(payload), SPEEDY_H2_FRAME_DATA, SPEEDY_H2_FLAG_PADDED, 1);
  speedy_h2_data data;
  assert_verdict(speedy_h2_decode_data(&hd, payload, &data), CONN(PROTOCOL_ERROR), "pad 3 of 3");
  static const uint8_t exact[] = {2, 0, 0};
  hd.length = sizeof(exact);
  assert_verdict(speedy_h2_decode_data(&hd, exact, &data), 0, "pad 2 of 3 leaves 0 data bytes");
  cr_assert_eq(data.data_len, 0);
}

Test(h2_frame, s6_1_padded_data_without_a_pad_length_byte_is_a_frame_size_error) {
  speedy_h2_frame_hd hd = hd_of(0, SPEEDY_H2_FRAME_DATA, SPEEDY_H2_FLAG_PADDED, 1);
  speedy_h2_data data;
  assert_verdict(speedy_h2_decode_data(&hd, NULL, &data), CONN(FRAME_SIZE_ERROR), "empty padded");
}

/* ---- §6.2 HEADERS ---- */

Test(h2_frame, s6_2_headers_with_padding_and_priority_yields_the_fragment) {
  static const uint8_t payload[] = {2, 0x80, 0, 0, 3, 15, 0x82, 0x86, 0, 0};
  speedy_h2_frame_hd hd = hd_of(sizeof(payload), SPEEDY_H2_FRAME_HEADERS,
                                SPEEDY_H2_FLAG_PADDED | SPEEDY_H2_FLAG_PRIORITY, 5);
  speedy_h2_headers h;
  assert_verdict(speedy_h2_decode_headers(&hd, payload, &h), 0, "HEADERS");
  cr_assert(h.priority.present && h.priority.exclusive);
  cr_assert_eq(h.priority.depends_on, 3);
  cr_assert_eq(h.priority.weight, 15);
  cr_assert_eq(h.block_len, 2);
  cr_assert_eq(h.block[0], 0x82);
}

Test(h2_frame, s6_2_headers_on_stream_0_is_a_connection_protocol_error) {
  speedy_h2_frame_hd hd = hd_of(1, SPEEDY_H2_FRAME_HEADERS, SPEEDY_H2_FLAG_END_HEADERS, 0);
  speedy_h2_headers h;
  static const uint8_t payload[] = {0x82};
  assert_verdict(speedy_h2_decode_headers(&hd, payload, &h), CONN(PROTOCOL_ERROR), "on 0");
}

Test(h2_frame, s6_2_headers_padding_beyond_the_payload_is_a_protocol_error) {
  static const uint8_t payload[] = {5, 0, 0, 0, 1, 16, 0x82};
  speedy_h2_frame_hd hd = hd_of(sizeof(payload), SPEEDY_H2_FRAME_HEADERS,
                                SPEEDY_H2_FLAG_PADDED | SPEEDY_H2_FLAG_PRIORITY, 3);
  speedy_h2_headers h;
  assert_verdict(speedy_h2_decode_headers(&hd, payload, &h), CONN(PROTOCOL_ERROR), "pad 5");
}

Test(h2_frame, s6_2_headers_too_short_for_its_priority_fields_is_a_frame_size_error) {
  static const uint8_t payload[] = {0, 0, 0};
  speedy_h2_frame_hd hd =
      hd_of(sizeof(payload), SPEEDY_H2_FRAME_HEADERS, SPEEDY_H2_FLAG_PRIORITY, 3);
  speedy_h2_headers h;
  assert_verdict(speedy_h2_decode_headers(&hd, payload, &h), CONN(FRAME_SIZE_ERROR), "3 bytes");
}

Test(h2_frame, s5_3_1_headers_depending_on_its_own_stream_is_a_stream_error) {
  static const uint8_t payload[] = {0, 0, 0, 3, 16, 0x82};
  speedy_h2_frame_hd hd =
      hd_of(sizeof(payload), SPEEDY_H2_FRAME_HEADERS, SPEEDY_H2_FLAG_PRIORITY, 3);
  speedy_h2_headers h;
  assert_verdict(speedy_h2_decode_headers(&hd, payload, &h), STREAM(PROTOCOL_ERROR), "self");
}

/* ---- §6.3 PRIORITY ---- */

Test(h2_frame, s6_3_priority_of_other_than_5_bytes_is_a_stream_frame_size_error) {
  static const uint8_t payload[6] = {0};
  speedy_h2_priority_fields p;
  speedy_h2_frame_hd hd = hd_of(6, SPEEDY_H2_FRAME_PRIORITY, 0, 1);
  assert_verdict(speedy_h2_decode_priority(&hd, payload, &p), STREAM(FRAME_SIZE_ERROR), "6");
  hd.length = 4;
  assert_verdict(speedy_h2_decode_priority(&hd, payload, &p), STREAM(FRAME_SIZE_ERROR), "4");
  hd.length = 5;
  assert_verdict(speedy_h2_decode_priority(&hd, payload, &p), 0, "5");
}

Test(h2_frame, s6_3_priority_on_stream_0_is_a_connection_protocol_error) {
  static const uint8_t payload[5] = {0, 0, 0, 1, 16};
  speedy_h2_priority_fields p;
  speedy_h2_frame_hd hd = hd_of(5, SPEEDY_H2_FRAME_PRIORITY, 0, 0);
  assert_verdict(speedy_h2_decode_priority(&hd, payload, &p), CONN(PROTOCOL_ERROR), "on 0");
}

/* ---- §6.4 RST_STREAM ---- */

Test(h2_frame, s6_4_rst_stream_rules) {
  static const uint8_t payload[5] = {0, 0, 0, 8, 0};
  uint32_t code = 0;
  speedy_h2_frame_hd hd = hd_of(4, SPEEDY_H2_FRAME_RST_STREAM, 0, 1);
  assert_verdict(speedy_h2_decode_rst_stream(&hd, payload, &code), 0, "RST_STREAM");
  cr_assert_eq(code, SPEEDY_H2_CANCEL);
  hd.stream_id = 0;
  assert_verdict(speedy_h2_decode_rst_stream(&hd, payload, &code), CONN(PROTOCOL_ERROR), "on 0");
  hd = hd_of(5, SPEEDY_H2_FRAME_RST_STREAM, 0, 1);
  assert_verdict(speedy_h2_decode_rst_stream(&hd, payload, &code), CONN(FRAME_SIZE_ERROR), "5");
}

/* ---- §6.5 SETTINGS ---- */

Test(h2_frame, s6_5_settings_round_trip_in_order) {
  uint8_t wire[9 + 18];
  const uint16_t ids[] = {SPEEDY_H2_SETTINGS_MAX_CONCURRENT_STREAMS,
                          SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE, 0x4242};
  const uint32_t values[] = {100, 1 << 20, 7};
  cr_assert_eq(speedy_h2_encode_settings(wire, ids, values, 3, 0), sizeof(wire));
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  assert_verdict(speedy_h2_decode_settings(&hd, wire + 9, 0), 0, "SETTINGS with an unknown id");
  for (size_t i = 0; i < 3; i++) {
    uint16_t id;
    uint32_t value;
    speedy_h2_settings_entry(wire + 9, i, &id, &value);
    cr_assert_eq(id, ids[i]);
    cr_assert_eq(value, values[i]);
  }
}

Test(h2_frame, s6_5_settings_ack_with_a_payload_is_a_frame_size_error) {
  static const uint8_t payload[6] = {0};
  speedy_h2_frame_hd hd = hd_of(6, SPEEDY_H2_FRAME_SETTINGS, SPEEDY_H2_FLAG_ACK, 0);
  assert_verdict(speedy_h2_decode_settings(&hd, payload, 0), CONN(FRAME_SIZE_ERROR), "ACK 6");
  hd.length = 0;
  assert_verdict(speedy_h2_decode_settings(&hd, payload, 0), 0, "empty ACK");
}

Test(h2_frame, s6_5_settings_on_a_stream_is_a_connection_protocol_error) {
  speedy_h2_frame_hd hd = hd_of(0, SPEEDY_H2_FRAME_SETTINGS, 0, 1);
  assert_verdict(speedy_h2_decode_settings(&hd, NULL, 0), CONN(PROTOCOL_ERROR), "on 1");
}

Test(h2_frame, s6_5_settings_length_not_a_multiple_of_6_is_a_frame_size_error) {
  static const uint8_t payload[7] = {0};
  speedy_h2_frame_hd hd = hd_of(7, SPEEDY_H2_FRAME_SETTINGS, 0, 0);
  assert_verdict(speedy_h2_decode_settings(&hd, payload, 0), CONN(FRAME_SIZE_ERROR), "7");
}

static int settings_verdict(uint16_t id, uint32_t value, int role_is_client) {
  uint8_t wire[9 + 6];
  speedy_h2_encode_settings(wire, &id, &value, 1, 0);
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  return speedy_h2_decode_settings(&hd, wire + 9, role_is_client);
}

Test(h2_frame, s6_5_2_enable_push_other_than_0_or_1_is_a_protocol_error) {
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_ENABLE_PUSH, 2, 0), CONN(PROTOCOL_ERROR), "2");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_ENABLE_PUSH, 1, 0), 0, "1 to a server");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_ENABLE_PUSH, 0, 1), 0, "0 to a client");
}

Test(h2_frame, s6_5_2_a_client_receiving_enable_push_1_is_a_protocol_error) {
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_ENABLE_PUSH, 1, 1), CONN(PROTOCOL_ERROR),
                 "server announced push");
}

Test(h2_frame, s6_5_2_initial_window_above_2_31_minus_1_is_a_flow_control_error) {
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE, 0x80000000u, 0),
                 CONN(FLOW_CONTROL_ERROR), "2^31");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE, 0x7fffffffu, 0), 0,
                 "2^31-1");
}

Test(h2_frame, s6_5_2_max_frame_size_outside_16384_to_2_24_minus_1_is_a_protocol_error) {
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE, 16383, 0),
                 CONN(PROTOCOL_ERROR), "16383");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE, 16777216, 0),
                 CONN(PROTOCOL_ERROR), "2^24");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE, 16384, 0), 0, "16384");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE, 16777215, 0), 0, "2^24-1");
}

Test(h2_frame, rfc9218_s2_1_no_rfc7540_priorities_other_than_0_or_1_is_a_protocol_error) {
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES, 2, 0),
                 CONN(PROTOCOL_ERROR), "2");
  assert_verdict(settings_verdict(SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES, 1, 0), 0, "1");
}

/* ---- §6.6 PUSH_PROMISE ---- */

Test(h2_frame, s6_6_push_promise_round_trip) {
  uint8_t wire[13 + 2];
  speedy_h2_encode_push_promise_hd(wire, 1, 2, 2, 1);
  wire[13] = 0x82, wire[14] = 0x84;
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  cr_assert_eq(hd.length, 6);
  cr_assert_eq(hd.flags, SPEEDY_H2_FLAG_END_HEADERS);
  speedy_h2_push_promise pp;
  assert_verdict(speedy_h2_decode_push_promise(&hd, wire + 9, &pp), 0, "PUSH_PROMISE");
  cr_assert_eq(pp.promised_stream_id, 2);
  cr_assert_eq(pp.block_len, 2);
}

Test(h2_frame, s6_6_push_promise_on_stream_0_or_promising_an_odd_id_is_a_protocol_error) {
  static const uint8_t even[] = {0, 0, 0, 2}, odd[] = {0, 0, 0, 3}, zero[] = {0, 0, 0, 0};
  speedy_h2_push_promise pp;
  speedy_h2_frame_hd hd = hd_of(4, SPEEDY_H2_FRAME_PUSH_PROMISE, SPEEDY_H2_FLAG_END_HEADERS, 0);
  assert_verdict(speedy_h2_decode_push_promise(&hd, even, &pp), CONN(PROTOCOL_ERROR), "on 0");
  hd.stream_id = 1;
  assert_verdict(speedy_h2_decode_push_promise(&hd, odd, &pp), CONN(PROTOCOL_ERROR), "odd");
  assert_verdict(speedy_h2_decode_push_promise(&hd, zero, &pp), CONN(PROTOCOL_ERROR), "zero");
  hd.length = 3;
  assert_verdict(speedy_h2_decode_push_promise(&hd, even, &pp), CONN(FRAME_SIZE_ERROR), "3");
}

/* ---- §6.7 PING ---- */

Test(h2_frame, s6_7_ping_rules) {
  uint8_t wire[17];
  static const uint8_t opaque[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  speedy_h2_encode_ping(wire, opaque, 1);
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  cr_assert_eq(hd.flags, SPEEDY_H2_FLAG_ACK);
  uint8_t got[8];
  assert_verdict(speedy_h2_decode_ping(&hd, wire + 9, got), 0, "PING");
  cr_assert_arr_eq(got, opaque, 8);
  hd.stream_id = 1;
  assert_verdict(speedy_h2_decode_ping(&hd, wire + 9, got), CONN(PROTOCOL_ERROR), "on 1");
  hd = hd_of(7, SPEEDY_H2_FRAME_PING, 0, 0);
  assert_verdict(speedy_h2_decode_ping(&hd, wire + 9, got), CONN(FRAME_SIZE_ERROR), "7");
}

/* ---- §6.8 GOAWAY ---- */

Test(h2_frame, s6_8_goaway_carries_last_stream_id_code_and_debug_data) {
  uint8_t wire[17 + 5];
  speedy_h2_encode_goaway(wire, 41, SPEEDY_H2_ENHANCE_YOUR_CALM, (const uint8_t *)"flood", 5);
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  speedy_h2_goaway g;
  assert_verdict(speedy_h2_decode_goaway(&hd, wire + 9, &g), 0, "GOAWAY");
  cr_assert_eq(g.last_stream_id, 41);
  cr_assert_eq(g.error_code, SPEEDY_H2_ENHANCE_YOUR_CALM);
  cr_assert_eq(g.debug_len, 5);
  cr_assert_eq(memcmp(g.debug, "flood", 5), 0);
}

Test(h2_frame, s6_8_goaway_on_a_stream_or_shorter_than_8_bytes_is_an_error) {
  static const uint8_t payload[8] = {0};
  speedy_h2_goaway g;
  speedy_h2_frame_hd hd = hd_of(8, SPEEDY_H2_FRAME_GOAWAY, 0, 1);
  assert_verdict(speedy_h2_decode_goaway(&hd, payload, &g), CONN(PROTOCOL_ERROR), "on 1");
  hd = hd_of(7, SPEEDY_H2_FRAME_GOAWAY, 0, 0);
  assert_verdict(speedy_h2_decode_goaway(&hd, payload, &g), CONN(FRAME_SIZE_ERROR), "7");
}

/* ---- §6.9 WINDOW_UPDATE ---- */

Test(h2_frame, s6_9_window_update_of_0_is_a_stream_error_or_on_stream_0_a_connection_error) {
  static const uint8_t zero[4] = {0x80, 0, 0, 0}; /* the reserved bit does not count */
  uint32_t increment;
  speedy_h2_frame_hd hd = hd_of(4, SPEEDY_H2_FRAME_WINDOW_UPDATE, 0, 1);
  assert_verdict(speedy_h2_decode_window_update(&hd, zero, &increment), STREAM(PROTOCOL_ERROR),
                 "stream");
  hd.stream_id = 0;
  assert_verdict(speedy_h2_decode_window_update(&hd, zero, &increment), CONN(PROTOCOL_ERROR),
                 "connection");
}

Test(h2_frame, s6_9_window_update_of_other_than_4_bytes_is_a_frame_size_error) {
  static const uint8_t payload[5] = {0, 0, 0, 1, 0};
  uint32_t increment;
  speedy_h2_frame_hd hd = hd_of(5, SPEEDY_H2_FRAME_WINDOW_UPDATE, 0, 1);
  assert_verdict(speedy_h2_decode_window_update(&hd, payload, &increment), CONN(FRAME_SIZE_ERROR),
                 "5");
  uint8_t wire[13];
  speedy_h2_encode_window_update(wire, 3, 0x7fffffff);
  speedy_h2_frame_hd_decode(wire, &hd);
  assert_verdict(speedy_h2_decode_window_update(&hd, wire + 9, &increment), 0, "max");
  cr_assert_eq(increment, 0x7fffffffu);
}

/* ---- §6.10 CONTINUATION ---- */

Test(h2_frame, s6_10_continuation_on_stream_0_is_a_connection_protocol_error) {
  speedy_h2_frame_hd hd = hd_of(0, SPEEDY_H2_FRAME_CONTINUATION, SPEEDY_H2_FLAG_END_HEADERS, 0);
  assert_verdict(speedy_h2_decode_continuation(&hd), CONN(PROTOCOL_ERROR), "on 0");
  hd.stream_id = 1;
  assert_verdict(speedy_h2_decode_continuation(&hd), 0, "on 1");
}

/* ---- RFC 9218 §7.1 PRIORITY_UPDATE ---- */

Test(h2_frame, rfc9218_s7_1_priority_update_round_trip_and_rules) {
  uint8_t wire[13 + 7];
  speedy_h2_encode_priority_update(wire, 5, "u=1, i", 6);
  speedy_h2_frame_hd hd;
  speedy_h2_frame_hd_decode(wire, &hd);
  speedy_h2_priority_update pu;
  assert_verdict(speedy_h2_decode_priority_update(&hd, wire + 9, &pu), 0, "PRIORITY_UPDATE");
  cr_assert_eq(pu.prioritized_stream_id, 5);
  cr_assert_eq(pu.field_value_len, 6);
  cr_assert_eq(memcmp(pu.field_value, "u=1, i", 6), 0);
  hd.stream_id = 1;
  assert_verdict(speedy_h2_decode_priority_update(&hd, wire + 9, &pu), CONN(PROTOCOL_ERROR),
                 "on a stream");
  static const uint8_t zero[4] = {0};
  hd = hd_of(4, SPEEDY_H2_FRAME_PRIORITY_UPDATE, 0, 0);
  assert_verdict(speedy_h2_decode_priority_update(&hd, zero, &pu), CONN(PROTOCOL_ERROR),
                 "prioritized stream 0");
  hd.length = 3;
  assert_verdict(speedy_h2_decode_priority_update(&hd, zero, &pu), CONN(FRAME_SIZE_ERROR), "3");
}

Test(h2_frame, names_for_traces) {
  cr_assert_str_eq(speedy_h2_frame_type_name(SPEEDY_H2_FRAME_WINDOW_UPDATE), "WINDOW_UPDATE");
  cr_assert_str_eq(speedy_h2_frame_type_name(0x42), "UNKNOWN");
  cr_assert_str_eq(speedy_h2_setting_name(SPEEDY_H2_SETTINGS_MAX_HEADER_LIST_SIZE),
                   "MAX_HEADER_LIST_SIZE");
  cr_assert_str_eq(speedy_h2_error_name(SPEEDY_H2_HTTP_1_1_REQUIRED), "HTTP_1_1_REQUIRED");
  cr_assert_str_eq(speedy_h2_error_name(0xe), "UNKNOWN");
}
