/* test_frame.c — unit tests of lib/frame.c, the SPDY wire format.
 *
 * Three kinds of test: byte vectors written out by hand from the specification text
 * (SPDY/3: draft-mbelshe-httpbis-spdy-00 section 2; SPDY/2: the Chromium draft 2 page),
 * encode -> decode round trips of every frame type in versions 2 and 3, and hostile
 * payloads (every truncated length, lying counts and lengths). Payloads under test are
 * copied into heap blocks of exactly their length, so a decoder reading one byte too far
 * is caught by the sanitizer build.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "rawframe.h"

static const int versions[] = {2, 3};
#define N_VERSIONS (sizeof versions / sizeof versions[0])

/* A heap copy of exactly len bytes. For len 0 it is malloc(0), whose block the sanitizer
 * also guards; only where malloc(0) gives NULL does it fall back to one byte. */
static uint8_t *exact_copy(const uint8_t *src, size_t len) {
  uint8_t *copy = malloc(len);
  if (copy == NULL && len == 0) copy = malloc(1);
  cr_assert_not_null(copy, "malloc failed");
  if (len > 0) memcpy(copy, src, len);
  return copy;
}

/* Decodes the common header of a frame we encoded and checks it against what the encoder
 * returned: a control frame of this version and type whose length covers the rest. */
static void expect_control_header(const uint8_t *frame, size_t written, int version, int type) {
  spdy_frame_hd hd;
  spdy_frame_hd_decode(frame, &hd);
  cr_assert(hd.is_control, "expected a control frame");
  cr_assert_eq(hd.version, version, "version: expected %d, got %u", version, hd.version);
  cr_assert_eq(hd.type, type, "type: expected %d, got %u", type, hd.type);
  cr_assert_eq((size_t)hd.length + SPDY_FRAME_HEADER_LEN, written,
               "length field %u does not match the %zu bytes written", hd.length, written);
}

/* ---- Common frame header ----------------------------------------------------------- */

Test(frame_hd, control_frame_header_yields_version_type_flags_length) {
  /* SPDY/3 SYN_STREAM, FLAG_FIN, length 10. */
  const uint8_t in[8] = {0x80, 0x03, 0x00, 0x01, 0x01, 0x00, 0x00, 0x0a};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(in, &hd);
  cr_assert(hd.is_control);
  cr_assert_eq(hd.version, 3);
  cr_assert_eq(hd.type, SPEEDY_SPDY_FRAME_SYN_STREAM);
  cr_assert_eq(hd.flags, SPDY_FLAG_FIN);
  cr_assert_eq(hd.length, 10);
  cr_assert_eq(hd.stream_id, 0, "control frames carry no stream id in the header");
}

Test(frame_hd, data_frame_header_yields_stream_id_flags_length) {
  const uint8_t in[8] = {0x00, 0x00, 0x01, 0x03, 0x01, 0x01, 0x02, 0x03};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(in, &hd);
  cr_assert_not(hd.is_control);
  cr_assert_eq(hd.stream_id, 0x103);
  cr_assert_eq(hd.type, SPEEDY_SPDY_FRAME_DATA);
  cr_assert_eq(hd.flags, SPDY_FLAG_FIN);
  cr_assert_eq(hd.length, 0x010203);
}

Test(frame_hd, version_is_15_bits_under_the_control_bit) {
  const uint8_t in[8] = {0xff, 0xff, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(in, &hd);
  cr_assert(hd.is_control);
  cr_assert_eq(hd.version, 0x7fff, "got version 0x%x", hd.version);
}

Test(frame_hd, data_stream_id_is_31_bits_under_the_control_bit) {
  const uint8_t in[8] = {0x7f, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(in, &hd);
  cr_assert_not(hd.is_control);
  cr_assert_eq(hd.stream_id, SPDY_MAX_STREAM_ID);
}

Test(frame_hd, length_uses_all_24_bits) {
  const uint8_t in[8] = {0x80, 0x02, 0x00, 0x04, 0x00, 0xff, 0xff, 0xff};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(in, &hd);
  cr_assert_eq(hd.length, SPDY_MAX_FRAME_LENGTH);
}

Test(frame_hd, control_header_encodes_to_spec_bytes) {
  uint8_t out[8];
  spdy_frame_hd_encode_control(out, 2, SPEEDY_SPDY_FRAME_SETTINGS,
                               SPEEDY_SPDY_SETTINGS_FLAG_CLEAR_SETTINGS, 0x0a0b0c);
  const uint8_t expected[8] = {0x80, 0x02, 0x00, 0x04, 0x01, 0x0a, 0x0b, 0x0c};
  cr_assert_arr_eq(out, expected, 8);
}

Test(frame_hd, data_header_round_trips_with_control_bit_clear) {
  uint8_t out[8];
  spdy_frame_hd_encode_data(out, SPDY_MAX_STREAM_ID, SPDY_FLAG_FIN, SPDY_MAX_FRAME_LENGTH);
  cr_assert_eq(out[0] & 0x80, 0, "C bit must be 0 on a DATA frame");
  spdy_frame_hd hd;
  spdy_frame_hd_decode(out, &hd);
  cr_assert_not(hd.is_control);
  cr_assert_eq(hd.stream_id, SPDY_MAX_STREAM_ID);
  cr_assert_eq(hd.flags, SPDY_FLAG_FIN);
  cr_assert_eq(hd.length, SPDY_MAX_FRAME_LENGTH);
}

/* ---- SYN_STREAM -------------------------------------------------------------------- */

Test(syn_stream, v3_spec_bytes_decode) {
  /* Stream 1, associated 0, priority 3 (011 00000), slot 5, a 2-byte block. */
  const uint8_t payload[] = {0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
                             0x00, 0x00, 0x60, 0x05, 0xaa, 0xbb};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_syn_stream s;
  cr_assert_eq(spdy_frame_decode_syn_stream(3, in, sizeof payload, &s), 0);
  cr_assert_eq(s.stream_id, 1);
  cr_assert_eq(s.associated_id, 0);
  cr_assert_eq(s.priority, 3);
  cr_assert_eq(s.slot, 5);
  cr_assert_eq(s.block, in + 10, "block must start after the 10 fixed bytes");
  cr_assert_eq(s.block_len, 2);
  free(in);
}

Test(syn_stream, v2_priority_is_top_2_bits_and_no_slot) {
  /* Stream 2, associated 1, priority 2 (10 000000), unused byte 0xff must be ignored. */
  const uint8_t payload[] = {0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x01, 0x80, 0xff};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_syn_stream s;
  cr_assert_eq(spdy_frame_decode_syn_stream(2, in, sizeof payload, &s), 0);
  cr_assert_eq(s.stream_id, 2);
  cr_assert_eq(s.associated_id, 1);
  cr_assert_eq(s.priority, 2);
  cr_assert_eq(s.slot, 0, "SPDY/2 has no slot: got %u", s.slot);
  cr_assert_eq(s.block_len, 0);
  free(in);
}

Test(syn_stream, reserved_and_unused_bits_are_ignored) {
  /* X bits set on both ids; v3 priority 7 with all 5 unused bits set. */
  const uint8_t payload[] = {0x80, 0x00, 0x00, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_syn_stream s;
  cr_assert_eq(spdy_frame_decode_syn_stream(3, in, sizeof payload, &s), 0);
  cr_assert_eq(s.stream_id, 3);
  cr_assert_eq(s.associated_id, SPDY_MAX_STREAM_ID);
  cr_assert_eq(s.priority, 7);
  free(in);
}

Test(syn_stream, round_trips_every_priority_in_v2_and_v3) {
  const uint8_t block[] = {1, 2, 3, 4, 5};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    int version = versions[v];
    uint8_t max_priority = version == 2 ? 3 : 7;
    for (uint8_t priority = 0; priority <= max_priority; priority++) {
      uint8_t frame[64];
      size_t n = spdy_frame_encode_syn_stream_prefix(frame, version, SPDY_FLAG_UNIDIRECTIONAL,
                                                     SPDY_MAX_STREAM_ID, 7, priority, sizeof block);
      cr_assert_eq(n, SPDY_FRAME_HEADER_LEN + SPDY_SYN_STREAM_FIXED_LEN);
      memcpy(frame + n, block, sizeof block);
      expect_control_header(frame, n + sizeof block, version, SPEEDY_SPDY_FRAME_SYN_STREAM);
      cr_assert_eq(frame[4], SPDY_FLAG_UNIDIRECTIONAL);
      spdy_syn_stream s;
      cr_assert_eq(spdy_frame_decode_syn_stream(version, frame + 8, n - 8 + sizeof block, &s), 0);
      cr_assert_eq(s.stream_id, SPDY_MAX_STREAM_ID);
      cr_assert_eq(s.associated_id, 7);
      cr_assert_eq(s.priority, priority, "v%d: priority %u came back as %u", version, priority,
                   s.priority);
      cr_assert_eq(s.block_len, sizeof block);
      cr_assert_arr_eq(s.block, block, sizeof block);
    }
  }
}

Test(syn_stream, encoder_writes_zero_reserved_bits_and_slot) {
  uint8_t frame[18];
  spdy_frame_encode_syn_stream_prefix(frame, 3, 0, 1, 0, 0, 0);
  const uint8_t expected[18] = {0x80, 0x03, 0x00, 0x01, 0x00, 0x00, 0x00, 0x0a, 0x00,
                                0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  cr_assert_arr_eq(frame, expected, sizeof expected);
}

Test(syn_stream, rejects_every_truncated_length) {
  const uint8_t payload[SPDY_SYN_STREAM_FIXED_LEN] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t len = 0; len < sizeof payload; len++) {
      uint8_t *in = exact_copy(payload, len);
      spdy_syn_stream s;
      cr_assert_eq(spdy_frame_decode_syn_stream(versions[v], in, len, &s), SPEEDY_ERR_PROTOCOL,
                   "v%d: a %zu-byte SYN_STREAM was accepted", versions[v], len);
      free(in);
    }
  }
}

/* ---- SYN_REPLY and HEADERS --------------------------------------------------------- */

Test(stream_headers, v2_syn_reply_skips_16_unused_bits) {
  const uint8_t payload[] = {0x00, 0x00, 0x00, 0x05, 0xff, 0xff, 0xcc};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_stream_headers h;
  cr_assert_eq(spdy_frame_decode_syn_reply(2, in, sizeof payload, &h), 0);
  cr_assert_eq(h.stream_id, 5);
  cr_assert_eq(h.block, in + 6, "v2 block starts after 6 bytes");
  cr_assert_eq(h.block_len, 1);
  free(in);
}

Test(stream_headers, v3_headers_block_follows_stream_id) {
  const uint8_t payload[] = {0x80, 0x00, 0x00, 0x05, 0xcc, 0xdd};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_stream_headers h;
  cr_assert_eq(spdy_frame_decode_headers(3, in, sizeof payload, &h), 0);
  cr_assert_eq(h.stream_id, 5, "X bit must be masked");
  cr_assert_eq(h.block, in + 4, "v3 block starts after 4 bytes");
  cr_assert_eq(h.block_len, 2);
  free(in);
}

Test(stream_headers, syn_reply_and_headers_round_trip_in_v2_and_v3) {
  const int types[] = {SPEEDY_SPDY_FRAME_SYN_REPLY, SPEEDY_SPDY_FRAME_HEADERS};
  const uint8_t block[] = {9, 8, 7};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t t = 0; t < 2; t++) {
      int version = versions[v];
      uint8_t frame[32];
      memset(frame, 0xee, sizeof frame); /* unused bits must be written, not left over */
      size_t n = spdy_frame_encode_stream_headers_prefix(frame, version, types[t], SPDY_FLAG_FIN,
                                                         42, sizeof block);
      cr_assert_eq(n, SPDY_FRAME_HEADER_LEN + (size_t)SPDY_SYN_REPLY_FIXED_LEN(version));
      if (version == 2) cr_assert(frame[12] == 0 && frame[13] == 0, "v2 unused bits not 0");
      memcpy(frame + n, block, sizeof block);
      expect_control_header(frame, n + sizeof block, version, types[t]);
      cr_assert_eq(frame[4], SPDY_FLAG_FIN);
      spdy_stream_headers h;
      size_t len = n - 8 + sizeof block;
      int rc = types[t] == SPEEDY_SPDY_FRAME_SYN_REPLY
                   ? spdy_frame_decode_syn_reply(version, frame + 8, len, &h)
                   : spdy_frame_decode_headers(version, frame + 8, len, &h);
      cr_assert_eq(rc, 0);
      cr_assert_eq(h.stream_id, 42);
      cr_assert_eq(h.block_len, sizeof block);
      cr_assert_arr_eq(h.block, block, sizeof block);
    }
  }
}

Test(stream_headers, rejects_every_truncated_length) {
  const uint8_t payload[6] = {0, 0, 0, 1, 0, 0};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    int version = versions[v];
    size_t fixed = SPDY_SYN_REPLY_FIXED_LEN(version);
    for (size_t len = 0; len < fixed; len++) {
      uint8_t *in = exact_copy(payload, len);
      spdy_stream_headers h;
      cr_assert_eq(spdy_frame_decode_syn_reply(version, in, len, &h), SPEEDY_ERR_PROTOCOL,
                   "v%d: %zu-byte SYN_REPLY accepted", version, len);
      cr_assert_eq(spdy_frame_decode_headers(version, in, len, &h), SPEEDY_ERR_PROTOCOL,
                   "v%d: %zu-byte HEADERS accepted", version, len);
      free(in);
    }
  }
}

/* ---- RST_STREAM -------------------------------------------------------------------- */

Test(rst_stream, v3_cancel_of_stream_1_matches_spec_bytes) {
  const uint8_t wire[16] = {0x80, 0x03, 0x00, 0x03, 0x00, 0x00, 0x00, 0x08,
                            0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x05};
  uint8_t out[16];
  cr_assert_eq(spdy_frame_encode_rst_stream(out, 3, 1, SPEEDY_RST_CANCEL), sizeof wire);
  cr_assert_arr_eq(out, wire, sizeof wire);

  uint8_t *in = exact_copy(wire + 8, 8);
  int32_t stream_id = -1;
  uint32_t status = 0;
  cr_assert_eq(spdy_frame_decode_rst_stream(in, 8, &stream_id, &status), 0);
  cr_assert_eq(stream_id, 1);
  cr_assert_eq(status, SPEEDY_RST_CANCEL);
  free(in);
}

Test(rst_stream, round_trips_in_v2_and_v3) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    uint8_t frame[16];
    size_t n = spdy_frame_encode_rst_stream(frame, versions[v], SPDY_MAX_STREAM_ID,
                                            SPEEDY_RST_FLOW_CONTROL_ERROR);
    expect_control_header(frame, n, versions[v], SPEEDY_SPDY_FRAME_RST_STREAM);
    int32_t stream_id;
    uint32_t status;
    cr_assert_eq(spdy_frame_decode_rst_stream(frame + 8, n - 8, &stream_id, &status), 0);
    cr_assert_eq(stream_id, SPDY_MAX_STREAM_ID);
    cr_assert_eq(status, SPEEDY_RST_FLOW_CONTROL_ERROR);
  }
}

Test(rst_stream, reserved_bit_of_stream_id_is_ignored) {
  const uint8_t payload[8] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01};
  int32_t stream_id;
  uint32_t status;
  cr_assert_eq(spdy_frame_decode_rst_stream(payload, 8, &stream_id, &status), 0);
  cr_assert_eq(stream_id, SPDY_MAX_STREAM_ID);
}

Test(rst_stream, rejects_every_length_but_8) {
  const uint8_t payload[9] = {0, 0, 0, 1, 0, 0, 0, 5, 0};
  for (size_t len = 0; len <= sizeof payload; len++) {
    if (len == 8) continue;
    uint8_t *in = exact_copy(payload, len);
    int32_t stream_id = 77;
    uint32_t status = 77;
    cr_assert_eq(spdy_frame_decode_rst_stream(in, len, &stream_id, &status), SPEEDY_ERR_PROTOCOL,
                 "%zu-byte RST_STREAM accepted", len);
    cr_assert(stream_id == 77 && status == 77, "outputs written on error");
    free(in);
  }
}

/* ---- SETTINGS ---------------------------------------------------------------------- */

Test(settings, v2_entry_id_is_little_endian_then_flags) {
  /* MAX_CONCURRENT_STREAMS = 100, PERSIST_VALUE: id bytes 04 00 00, flags 01. */
  const uint8_t payload[12] = {0x00, 0x00, 0x00, 0x01, 0x04, 0x00,
                               0x00, 0x01, 0x00, 0x00, 0x00, 0x64};
  uint8_t *in = exact_copy(payload, sizeof payload);
  uint32_t count = 0;
  cr_assert_eq(spdy_frame_decode_settings(in, sizeof payload, &count), 0);
  cr_assert_eq(count, 1);
  speedy_setting s;
  spdy_frame_settings_entry(2, in, 0, &s);
  cr_assert_eq(s.id, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, "got id 0x%x", s.id);
  cr_assert_eq(s.flags, SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE);
  cr_assert_eq(s.value, 100);
  free(in);
}

Test(settings, v3_entry_is_flags_then_big_endian_id) {
  /* INITIAL_WINDOW_SIZE = 65536, PERSISTED: flags 02, id bytes 00 00 07. */
  const uint8_t payload[12] = {0x00, 0x00, 0x00, 0x01, 0x02, 0x00,
                               0x00, 0x07, 0x00, 0x01, 0x00, 0x00};
  uint8_t *in = exact_copy(payload, sizeof payload);
  uint32_t count = 0;
  cr_assert_eq(spdy_frame_decode_settings(in, sizeof payload, &count), 0);
  cr_assert_eq(count, 1);
  speedy_setting s;
  spdy_frame_settings_entry(3, in, 0, &s);
  cr_assert_eq(s.id, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, "got id 0x%x", s.id);
  cr_assert_eq(s.flags, SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED);
  cr_assert_eq(s.value, 65536);
  free(in);
}

Test(settings, encoder_writes_v2_and_v3_entry_layouts) {
  const speedy_setting one = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS,
                              SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE, 100};
  uint8_t v2[20], v3[20];
  cr_assert_eq(spdy_frame_encode_settings(v2, 2, 0, &one, 1), 20);
  cr_assert_eq(spdy_frame_encode_settings(v3, 3, 0, &one, 1), 20);
  const uint8_t v2_entry[8] = {0x04, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x64};
  const uint8_t v3_entry[8] = {0x01, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x64};
  cr_assert_arr_eq(v2 + 12, v2_entry, 8, "v2 entry: 24-bit id little-endian, then flags");
  cr_assert_arr_eq(v3 + 12, v3_entry, 8, "v3 entry: flags, then 24-bit id big-endian");
}

Test(settings, round_trip_in_v2_and_v3_keeps_every_id_byte) {
  /* 0x123456 tells every byte order apart. */
  const speedy_setting in[3] = {
      {SPEEDY_SETTINGS_UPLOAD_BANDWIDTH, 0, 1},
      {0x123456, SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED, 0xdeadbeef},
      {SPEEDY_SETTINGS_CLIENT_CERTIFICATE_VECTOR_SIZE, SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE, 0}};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    uint8_t frame[64];
    size_t n = spdy_frame_encode_settings(frame, versions[v],
                                          SPEEDY_SPDY_SETTINGS_FLAG_CLEAR_SETTINGS, in, 3);
    cr_assert_eq(n, 8 + 4 + 8 * 3);
    expect_control_header(frame, n, versions[v], SPEEDY_SPDY_FRAME_SETTINGS);
    cr_assert_eq(frame[4], SPEEDY_SPDY_SETTINGS_FLAG_CLEAR_SETTINGS);
    uint32_t count;
    cr_assert_eq(spdy_frame_decode_settings(frame + 8, n - 8, &count), 0);
    cr_assert_eq(count, 3);
    for (uint32_t i = 0; i < count; i++) {
      speedy_setting out;
      spdy_frame_settings_entry(versions[v], frame + 8, i, &out);
      cr_assert_eq(out.id, in[i].id, "v%d entry %u: id 0x%x came back as 0x%x", versions[v], i,
                   in[i].id, out.id);
      cr_assert_eq(out.flags, in[i].flags);
      cr_assert_eq(out.value, in[i].value);
    }
  }
}

Test(settings, empty_frame_has_count_0_and_length_4) {
  uint8_t frame[12];
  cr_assert_eq(spdy_frame_encode_settings(frame, 3, 0, NULL, 0), 12);
  expect_control_header(frame, 12, 3, SPEEDY_SPDY_FRAME_SETTINGS);
  uint8_t *in = exact_copy(frame + 8, 4);
  uint32_t count = 99;
  cr_assert_eq(spdy_frame_decode_settings(in, 4, &count), 0);
  cr_assert_eq(count, 0);
  free(in);
}

Test(settings, rejects_every_truncated_length) {
  const speedy_setting two[2] = {{4, 0, 100}, {7, 0, 65536}};
  uint8_t frame[28];
  size_t n = spdy_frame_encode_settings(frame, 3, 0, two, 2);
  for (size_t len = 0; len < n - 8; len++) {
    uint8_t *in = exact_copy(frame + 8, len);
    uint32_t count = 77;
    cr_assert_eq(spdy_frame_decode_settings(in, len, &count), SPEEDY_ERR_PROTOCOL,
                 "%zu-byte SETTINGS with count 2 accepted", len);
    cr_assert_eq(count, 77, "count written on error");
    free(in);
  }
}

Test(settings, rejects_count_larger_than_entries) {
  const uint8_t payload[12] = {0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
                               0x00, 0x04, 0x00, 0x00, 0x00, 0x64};
  uint8_t *in = exact_copy(payload, sizeof payload);
  uint32_t count;
  cr_assert_eq(spdy_frame_decode_settings(in, sizeof payload, &count), SPEEDY_ERR_PROTOCOL);
  free(in);
}

Test(settings, rejects_bytes_beyond_the_counted_entries) {
  const uint8_t payload[20] = {0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00,
                               0x00, 0x64, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x01};
  uint32_t count;
  cr_assert_eq(spdy_frame_decode_settings(payload, sizeof payload, &count), SPEEDY_ERR_PROTOCOL);
}

Test(settings, rejects_a_partial_entry) {
  const uint8_t payload[11] = {0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00};
  uint8_t *in = exact_copy(payload, sizeof payload);
  uint32_t count;
  cr_assert_eq(spdy_frame_decode_settings(in, sizeof payload, &count), SPEEDY_ERR_PROTOCOL);
  free(in);
}

Test(settings, rejects_counts_whose_size_wraps_in_32_bits) {
  /* 4 + 8 * 0x20000000 is 4 modulo 2^32, and 4 + 8 * 0x20000001 is 12: a decoder that
   * computes the expected length in 32 bits would accept these. */
  const uint8_t zero_entries[4] = {0x20, 0x00, 0x00, 0x00};
  const uint8_t one_entry[12] = {0x20, 0x00, 0x00, 0x01, 0x00, 0x00,
                                 0x00, 0x04, 0x00, 0x00, 0x00, 0x64};
  const uint8_t max_count[12] = {0xff, 0xff, 0xff, 0xff, 0x00, 0x00,
                                 0x00, 0x04, 0x00, 0x00, 0x00, 0x64};
  uint32_t count = 77;
  cr_assert_eq(spdy_frame_decode_settings(zero_entries, 4, &count), SPEEDY_ERR_PROTOCOL);
  cr_assert_eq(spdy_frame_decode_settings(one_entry, 12, &count), SPEEDY_ERR_PROTOCOL);
  cr_assert_eq(spdy_frame_decode_settings(max_count, 12, &count), SPEEDY_ERR_PROTOCOL);
  cr_assert_eq(count, 77);
}

/* ---- NOOP and PING ----------------------------------------------------------------- */

Test(noop, encodes_as_v2_type_5_with_empty_payload) {
  raw_buf b = {0};
  raw_noop(&b);
  cr_assert_eq(b.len, 8);
  const uint8_t expected[8] = {0x80, 0x02, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00};
  cr_assert_arr_eq(b.data, expected, 8);
  spdy_frame_hd hd;
  spdy_frame_hd_decode(b.data, &hd);
  cr_assert(hd.is_control && hd.version == 2 && hd.type == SPEEDY_SPDY_FRAME_NOOP &&
            hd.length == 0);
  raw_buf_free(&b);
}

Test(ping, v2_spec_bytes_decode) {
  const uint8_t wire[12] = {0x80, 0x02, 0x00, 0x06, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x01};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(wire, &hd);
  cr_assert(hd.is_control && hd.version == 2 && hd.type == SPEEDY_SPDY_FRAME_PING);
  uint8_t *in = exact_copy(wire + 8, hd.length);
  uint32_t id = 0;
  cr_assert_eq(spdy_frame_decode_ping(in, hd.length, &id), 0);
  cr_assert_eq(id, 1);
  free(in);
}

Test(ping, round_trips_all_32_bits_in_v2_and_v3) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    uint8_t frame[12];
    size_t n = spdy_frame_encode_ping(frame, versions[v], 0xfedcba98);
    cr_assert_eq(n, 12);
    expect_control_header(frame, n, versions[v], SPEEDY_SPDY_FRAME_PING);
    uint32_t id;
    cr_assert_eq(spdy_frame_decode_ping(frame + 8, 4, &id), 0);
    cr_assert_eq(id, 0xfedcba98, "ping id must keep its high bit: got 0x%x", id);
  }
}

Test(ping, rejects_every_length_but_4) {
  const uint8_t payload[5] = {0, 0, 0, 1, 0};
  for (size_t len = 0; len <= sizeof payload; len++) {
    if (len == 4) continue;
    uint8_t *in = exact_copy(payload, len);
    uint32_t id = 77;
    cr_assert_eq(spdy_frame_decode_ping(in, len, &id), SPEEDY_ERR_PROTOCOL,
                 "%zu-byte PING accepted", len);
    cr_assert_eq(id, 77);
    free(in);
  }
}

/* ---- GOAWAY ------------------------------------------------------------------------ */

Test(goaway, v3_spec_bytes_carry_last_good_id_and_status) {
  const uint8_t wire[16] = {0x80, 0x03, 0x00, 0x07, 0x00, 0x00, 0x00, 0x08,
                            0x80, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x01};
  uint8_t *in = exact_copy(wire + 8, 8);
  int32_t last_good_id;
  uint32_t status;
  cr_assert_eq(spdy_frame_decode_goaway(3, in, 8, &last_good_id, &status), 0);
  cr_assert_eq(last_good_id, 9, "X bit must be masked");
  cr_assert_eq(status, SPDY_GOAWAY_PROTOCOL_ERROR);
  free(in);
}

Test(goaway, v2_spec_bytes_carry_last_good_id_only) {
  const uint8_t wire[12] = {0x80, 0x02, 0x00, 0x07, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x0b};
  uint8_t out[12];
  cr_assert_eq(spdy_frame_encode_goaway(out, 2, 11, SPDY_GOAWAY_PROTOCOL_ERROR), 12);
  cr_assert_arr_eq(out, wire, 12, "v2 GOAWAY has no status field");
  uint8_t *in = exact_copy(wire + 8, 4);
  int32_t last_good_id;
  uint32_t status = 77;
  cr_assert_eq(spdy_frame_decode_goaway(2, in, 4, &last_good_id, &status), 0);
  cr_assert_eq(last_good_id, 11);
  cr_assert_eq(status, SPDY_GOAWAY_OK);
  free(in);
}

Test(goaway, v2_accepts_8_bytes_from_peers_that_add_a_status) {
  const uint8_t payload[8] = {0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x02};
  uint8_t *in = exact_copy(payload, 8);
  int32_t last_good_id;
  uint32_t status;
  cr_assert_eq(spdy_frame_decode_goaway(2, in, 8, &last_good_id, &status), 0);
  cr_assert_eq(last_good_id, 3);
  cr_assert_eq(status, SPDY_GOAWAY_OK, "SPDY/2 GOAWAY reports OK");
  free(in);
}

Test(goaway, round_trips_in_v2_and_v3) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    int version = versions[v];
    uint8_t frame[16];
    size_t n =
        spdy_frame_encode_goaway(frame, version, SPDY_MAX_STREAM_ID, SPDY_GOAWAY_INTERNAL_ERROR);
    cr_assert_eq(n, version == 2 ? 12u : 16u);
    expect_control_header(frame, n, version, SPEEDY_SPDY_FRAME_GOAWAY);
    int32_t last_good_id;
    uint32_t status;
    cr_assert_eq(spdy_frame_decode_goaway(version, frame + 8, n - 8, &last_good_id, &status), 0);
    cr_assert_eq(last_good_id, SPDY_MAX_STREAM_ID);
    cr_assert_eq(status,
                 version == 2 ? (uint32_t)SPDY_GOAWAY_OK : (uint32_t)SPDY_GOAWAY_INTERNAL_ERROR);
  }
}

Test(goaway, rejects_wrong_lengths_in_v2_and_v3) {
  const uint8_t payload[9] = {0};
  for (size_t len = 0; len <= sizeof payload; len++) {
    uint8_t *in = exact_copy(payload, len);
    int32_t last_good_id = 77;
    uint32_t status = 77;
    int rc2 = spdy_frame_decode_goaway(2, in, len, &last_good_id, &status);
    int rc3 = spdy_frame_decode_goaway(3, in, len, &last_good_id, &status);
    cr_assert_eq(rc2, (len == 4 || len == 8) ? 0 : SPEEDY_ERR_PROTOCOL,
                 "v2 %zu-byte GOAWAY: got %d", len, rc2);
    cr_assert_eq(rc3, len == 8 ? 0 : SPEEDY_ERR_PROTOCOL, "v3 %zu-byte GOAWAY: got %d", len, rc3);
    free(in);
  }
}

/* ---- WINDOW_UPDATE ----------------------------------------------------------------- */

Test(window_update, v3_spec_bytes_decode_and_mask_both_reserved_bits) {
  const uint8_t wire[16] = {0x80, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00, 0x08,
                            0x80, 0x00, 0x00, 0x03, 0x80, 0x00, 0x10, 0x00};
  uint8_t *in = exact_copy(wire + 8, 8);
  int32_t stream_id;
  uint32_t delta;
  cr_assert_eq(spdy_frame_decode_window_update(in, 8, &stream_id, &delta), 0);
  cr_assert_eq(stream_id, 3);
  cr_assert_eq(delta, 4096, "delta's X bit must be ignored: got 0x%x", delta);
  free(in);
}

Test(window_update, round_trips_in_v2_and_v3_and_writes_length_8) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    uint8_t frame[16];
    size_t n = spdy_frame_encode_window_update(frame, versions[v], 0, SPDY_MAX_WINDOW);
    cr_assert_eq(n, 16);
    expect_control_header(frame, n, versions[v], SPEEDY_SPDY_FRAME_WINDOW_UPDATE);
    cr_assert_eq(frame[12] & 0x80, 0, "reserved bit of the delta must be 0");
    int32_t stream_id = -1;
    uint32_t delta;
    cr_assert_eq(spdy_frame_decode_window_update(frame + 8, 8, &stream_id, &delta), 0);
    cr_assert_eq(stream_id, 0, "stream 0 (the session window) must survive");
    cr_assert_eq(delta, SPDY_MAX_WINDOW);
  }
}

Test(window_update, rejects_every_length_but_8) {
  const uint8_t payload[9] = {0, 0, 0, 1, 0, 0, 0x10, 0, 0};
  for (size_t len = 0; len <= sizeof payload; len++) {
    if (len == 8) continue;
    uint8_t *in = exact_copy(payload, len);
    int32_t stream_id = 77;
    uint32_t delta = 77;
    cr_assert_eq(spdy_frame_decode_window_update(in, len, &stream_id, &delta), SPEEDY_ERR_PROTOCOL,
                 "%zu-byte WINDOW_UPDATE accepted", len);
    cr_assert(stream_id == 77 && delta == 77);
    free(in);
  }
}

/* ---- CREDENTIAL -------------------------------------------------------------------- */

/* Slot 1, proof "pf", one certificate "abc". */
static const uint8_t credential_payload[] = {0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 'p', 'f',
                                             0x00, 0x00, 0x00, 0x03, 'a',  'b',  'c'};

Test(credential, spec_layout_decodes) {
  uint8_t *in = exact_copy(credential_payload, sizeof credential_payload);
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(in, sizeof credential_payload, &c), 0);
  cr_assert_eq(c.slot, 1);
  cr_assert_eq(c.proof, in + 6);
  cr_assert_eq(c.proof_len, 2);
  cr_assert_eq(c.n_certificates, 1);
  free(in);
}

Test(credential, round_trips_a_chain_of_three_certificates) {
  const uint8_t proof[5] = {1, 2, 3, 4, 5};
  const uint8_t leaf[3] = {'l', 'e', 'a'}, mid[1] = {'m'}, root[4] = {'r', 'o', 'o', 't'};
  const uint8_t *const certs[3] = {leaf, mid, root};
  const size_t cert_lens[3] = {sizeof leaf, sizeof mid, sizeof root};
  raw_buf built = {0};
  raw_credential(&built, 8, proof, sizeof proof, certs, cert_lens, 3);
  const uint8_t *frame = built.data;
  size_t n = built.len;
  cr_assert_eq(n, 8 + 2 + 4 + 5 + (4 + 3) + (4 + 1) + (4 + 4));
  expect_control_header(frame, n, 3, SPEEDY_SPDY_FRAME_CREDENTIAL);
  uint8_t *in = exact_copy(frame + 8, n - 8);
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(in, n - 8, &c), 0);
  cr_assert_eq(c.slot, 8);
  cr_assert_eq(c.proof_len, sizeof proof);
  cr_assert_arr_eq(c.proof, proof, sizeof proof);
  cr_assert_eq(c.n_certificates, 3);
  free(in);
  raw_buf_free(&built);
}

Test(credential, rejects_every_truncated_length) {
  for (size_t len = 0; len < sizeof credential_payload; len++) {
    uint8_t *in = exact_copy(credential_payload, len);
    spdy_credential c;
    memset(&c, 0x5a, sizeof c);
    spdy_credential before = c;
    cr_assert_eq(spdy_frame_decode_credential(in, len, &c), SPEEDY_ERR_PROTOCOL,
                 "%zu-byte CREDENTIAL accepted", len);
    cr_assert(memcmp(&c, &before, sizeof c) == 0, "output written on error");
    free(in);
  }
}

Test(credential, rejects_proof_length_past_the_payload) {
  uint8_t payload[sizeof credential_payload];
  memcpy(payload, credential_payload, sizeof payload);
  const uint32_t lies[] = {sizeof payload - 6 + 1, 0x7fffffff, 0xffffffff};
  for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
    spdy_put_u32(payload + 2, lies[i]);
    uint8_t *in = exact_copy(payload, sizeof payload);
    spdy_credential c;
    cr_assert_eq(spdy_frame_decode_credential(in, sizeof payload, &c), SPEEDY_ERR_PROTOCOL,
                 "proof length 0x%x accepted", lies[i]);
    free(in);
  }
}

Test(credential, rejects_certificate_length_past_the_payload) {
  uint8_t payload[sizeof credential_payload];
  memcpy(payload, credential_payload, sizeof payload);
  const uint32_t lies[] = {4, 0x7fffffff, 0xffffffff};
  for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
    spdy_put_u32(payload + 8, lies[i]);
    uint8_t *in = exact_copy(payload, sizeof payload);
    spdy_credential c;
    cr_assert_eq(spdy_frame_decode_credential(in, sizeof payload, &c), SPEEDY_ERR_PROTOCOL,
                 "certificate length 0x%x accepted", lies[i]);
    free(in);
  }
}

Test(credential, rejects_a_frame_without_certificates) {
  /* Slot 1 and a 2-byte proof that ends the payload. */
  uint8_t *in = exact_copy(credential_payload, 8);
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(in, 8, &c), SPEEDY_ERR_PROTOCOL);
  free(in);
}

Test(credential, rejects_stray_bytes_after_the_last_certificate) {
  uint8_t payload[sizeof credential_payload + 3];
  memcpy(payload, credential_payload, sizeof credential_payload);
  memset(payload + sizeof credential_payload, 0, 3); /* too short for a length field */
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(in, sizeof payload, &c), SPEEDY_ERR_PROTOCOL);
  free(in);
}

Test(credential, counts_an_empty_certificate) {
  /* Slot 2, empty proof, one zero-length certificate: consistent, if useless. */
  const uint8_t payload[10] = {0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  uint8_t *in = exact_copy(payload, sizeof payload);
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(in, sizeof payload, &c), 0);
  cr_assert_eq(c.proof_len, 0);
  cr_assert_eq(c.n_certificates, 1);
  free(in);
}
