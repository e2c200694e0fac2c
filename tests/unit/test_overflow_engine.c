/* test_overflow_engine.c — length arithmetic on peer-supplied sizes in the engine's two
 * parsers, at and around the boundaries where it could wrap:
 *   lib/frame.c    the 24-bit frame length, SETTINGS count x 8, fixed-size frames
 *                  (RST_STREAM, GOAWAY, PING, WINDOW_UPDATE) too short or too long, the
 *                  fixed part of SYN_STREAM / SYN_REPLY / HEADERS, CREDENTIAL lengths, and
 *                  window deltas past 2^31-1;
 *   lib/hdblock.c  pair counts and name/value lengths of 0xFFFF / 0xFFFFFFFF, lengths that
 *                  wrap a 32-bit offset, the 4 GiB block bound, and the inflated-size cap.
 * Each case checks the error value, that nothing is read past the buffer (the sanitizer
 * build), and with the counting allocator (testutil.h) that a lying size costs no
 * allocation of its size.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "hdblock.h"
#include "pair.h"
#include "rawframe.h"
#include "testutil.h"

static const speedy_protocol all_versions[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                               SPEEDY_PROTOCOL_SPDY3_1};
#define N_VERSIONS (sizeof(all_versions) / sizeof(all_versions[0]))
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* A zeroed buffer of len bytes (len may be 0) for decoders that must look only at len. */
static uint8_t *zeroed(size_t len) {
  uint8_t *p = calloc(len > 0 ? len : 1, 1);
  cr_assert_not_null(p);
  return p;
}

/* Growth of the counting allocator's peak since `before` (a peak_bytes reading). */
static size_t peak_growth(size_t before) {
  size_t now = test_alloc_get()->peak_bytes;
  return now > before ? now - before : 0;
}

/* ---- lib/frame.c: the common header ------------------------------------------------ */

Test(overflow_frame, header_length_uses_all_24_bits_and_nothing_more) {
  const uint8_t control[SPDY_FRAME_HEADER_LEN] = {0x80, 0x03, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff};
  spdy_frame_hd hd;
  spdy_frame_hd_decode(control, &hd);
  cr_assert_eq(hd.length, 0xffffffu, "length 0x%x, expected 0xffffff", hd.length);
  cr_assert_eq(hd.flags, 0xff, "the flags byte must not leak into the length");
  const uint8_t data[SPDY_FRAME_HEADER_LEN] = {0x7f, 0xff, 0xff, 0xff, 0x01, 0xff, 0xff, 0xff};
  spdy_frame_hd_decode(data, &hd);
  cr_assert_eq(hd.length, 0xffffffu);
  cr_assert_eq(hd.stream_id, 0x7fffffff, "a DATA stream id is 31 bits, never negative");
}

Test(overflow_frame, control_frame_of_length_0xffffff_is_refused_before_buffering) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    size_t peak_before = test_alloc_get()->peak_bytes;
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SYN_STREAM, 0, 0xffffff);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_lt(peak_growth(peak_before), 4096, "%s: a 16 MiB length allocated %zu bytes",
                 rig.name, peak_growth(peak_before));
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_FRAME_TOO_LARGE, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM of length 0xffffff");
    raw_rig_close(&rig);
  }
}

/* A SETTINGS frame whose payload is exactly payload_len bytes: a count, whole entries of an
 * id the session ignores, and filler that completes the length. */
static void put_settings_of_length(raw_rig *rig, uint32_t payload_len) {
  uint32_t entries = (payload_len - 4) / 8;
  raw_control_header(&rig->in, rig->version, SPEEDY_SPDY_FRAME_SETTINGS, 0, payload_len);
  raw_put_u32(&rig->in, entries);
  for (uint32_t i = 0; i < entries; i++) raw_settings_entry(&rig->in, rig->version, 200, 0, i);
  raw_put_fill(&rig->in, 0, payload_len - 4 - 8 * entries);
}

Test(overflow_frame, control_frame_at_max_recv_control_frame_is_accepted) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    speedy_options *options = raw_options_new();
    speedy_options_set_max_recv_control_frame(options, 4 + 8 * 100);
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, options);
    speedy_options_del(options);
    put_settings_of_length(&rig, 4 + 8 * 100);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: a frame of exactly the maximum: %lld", rig.name,
                 (long long)rv);
    raw_expect_session_works(&rig, 1, "after a frame of the maximum length");
    raw_rig_close(&rig);
  }
}

Test(overflow_frame, control_frame_one_byte_over_max_recv_control_frame_is_refused) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    speedy_options *options = raw_options_new();
    speedy_options_set_max_recv_control_frame(options, 4 + 8 * 100);
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, options);
    speedy_options_del(options);
    raw_rig_discard_output(&rig);
    /* Only the header: the refusal must not wait for the payload. */
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 4 + 8 * 100 + 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_FRAME_TOO_LARGE, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SETTINGS one byte over the maximum");
    raw_rig_close(&rig);
  }
}

Test(overflow_frame, data_frame_of_length_0xffffff_resets_its_stream_without_buffering) {
  /* SPDY/3: the stream's 64 KiB window is the bound (3.1 refuses at the session window). */
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, NULL);
  raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/upload");
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  raw_rig_discard_output(&rig);
  size_t peak_before = test_alloc_get()->peak_bytes;
  raw_data_header(&rig.in, 1, 0, 0xffffff);
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_FLOW_CONTROL_ERROR,
                          "DATA of length 0xffffff on a 64 KiB window");
  /* The payload is skipped as it arrives, never held. */
  uint8_t chunk[65536];
  memset(chunk, 0x80, sizeof(chunk));
  for (size_t left = 0xffffff; left > 0;) {
    size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
    cr_assert_eq(speedy_session_recv(rig.peer->session, chunk, n), (int64_t)n);
    left -= n;
  }
  cr_assert_lt(peak_growth(peak_before), 4096, "skipping 16 MiB allocated %zu bytes",
               peak_growth(peak_before));
  raw_expect_session_works(&rig, 3, "after a 16 MiB DATA frame");
  raw_rig_close(&rig);
}

Test(overflow_frame, data_frame_of_length_0xffffff_breaks_the_spdy31_session_window) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/upload");
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  raw_rig_discard_output(&rig);
  raw_data_header(&rig.in, 1, 0, 0xffffff);
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                           "DATA of length 0xffffff on a 64 KiB session window");
  raw_rig_close(&rig);
}

/* ---- lib/frame.c: SETTINGS count x 8 ---------------------------------------------------- */

Test(overflow_frame, settings_count_whose_byte_size_wraps_32_bits_is_refused) {
  /* 8 * count mod 2^32 equals the bytes present: 0, 8, 16 and 0xfffffff8. */
  const struct {
    uint32_t count;
    size_t entries_len;
  } cases[] = {{0x20000000u, 0}, {0x20000001u, 8}, {0x20000002u, 16}, {0x3fffffffu, 0xfffff8}};
  for (size_t i = 0; i < N_OF(cases); i++) {
    size_t len = 4 + cases[i].entries_len;
    uint8_t *payload = zeroed(len);
    spdy_put_u32(payload, cases[i].count);
    uint32_t count = 12345;
    cr_assert_eq(spdy_frame_decode_settings(payload, len, &count), SPEEDY_ERR_PROTOCOL,
                 "count 0x%x with %zu entry bytes was accepted", cases[i].count,
                 cases[i].entries_len);
    cr_assert_eq(count, 12345, "count written on error");
    free(payload);
  }
}

Test(overflow_frame, settings_count_0xffffffff_is_refused_at_every_short_length) {
  const size_t lengths[] = {0, 3, 4, 12, 4 + 8 * 1000};
  for (size_t i = 0; i < N_OF(lengths); i++) {
    uint8_t *payload = zeroed(lengths[i] > 4 ? lengths[i] : 4);
    spdy_put_u32(payload, 0xffffffffu);
    uint32_t count;
    cr_assert_eq(spdy_frame_decode_settings(payload, lengths[i], &count), SPEEDY_ERR_PROTOCOL,
                 "length %zu", lengths[i]);
    free(payload);
  }
}

Test(overflow_frame, settings_with_the_most_entries_a_24_bit_length_holds_is_accepted) {
  const uint32_t most = (SPDY_MAX_FRAME_LENGTH - 4) / 8; /* 2,097,147 */
  size_t len = 4 + (size_t)most * 8;
  cr_assert_leq(len, SPDY_MAX_FRAME_LENGTH);
  uint8_t *payload = zeroed(len);
  spdy_put_u32(payload, most);
  uint32_t count = 0;
  cr_assert_eq(spdy_frame_decode_settings(payload, len, &count), 0);
  cr_assert_eq(count, most);
  speedy_setting last;
  spdy_frame_settings_entry(3, payload, most - 1, &last); /* the last entry is in bounds */
  cr_assert_eq(last.value, 0);
  spdy_put_u32(payload, most + 1);
  cr_assert_eq(spdy_frame_decode_settings(payload, len, &count), SPEEDY_ERR_PROTOCOL,
               "one entry more than the bytes hold");
  free(payload);
}

/* ---- lib/frame.c: fixed-size frames -------------------------------------------------- */

/* Lengths around the fixed sizes, and the 24-bit maximum. */
static const size_t odd_lengths[] = {0, 1, 3, 4, 5, 7, 8, 9, 12, 16, 0xffffff};

Test(overflow_frame, rst_stream_of_any_length_but_8_is_refused) {
  for (size_t i = 0; i < N_OF(odd_lengths); i++) {
    uint8_t *payload = zeroed(odd_lengths[i]);
    int32_t id = -1;
    uint32_t status = 77;
    int rv = spdy_frame_decode_rst_stream(payload, odd_lengths[i], &id, &status);
    cr_assert_eq(rv, odd_lengths[i] == 8 ? 0 : SPEEDY_ERR_PROTOCOL, "length %zu", odd_lengths[i]);
    if (rv != 0) cr_assert(id == -1 && status == 77, "outputs written on error");
    free(payload);
  }
}

Test(overflow_frame, goaway_v2_takes_4_or_8_bytes_and_refuses_other_lengths) {
  for (size_t i = 0; i < N_OF(odd_lengths); i++) {
    uint8_t *payload = zeroed(odd_lengths[i]);
    int32_t last = -1;
    uint32_t status = 77;
    int ok = odd_lengths[i] == 4 || odd_lengths[i] == 8;
    cr_assert_eq(spdy_frame_decode_goaway(2, payload, odd_lengths[i], &last, &status),
                 ok ? 0 : SPEEDY_ERR_PROTOCOL, "v2 length %zu", odd_lengths[i]);
    free(payload);
  }
}

Test(overflow_frame, goaway_v3_of_any_length_but_8_is_refused) {
  for (size_t i = 0; i < N_OF(odd_lengths); i++) {
    uint8_t *payload = zeroed(odd_lengths[i]);
    int32_t last = -1;
    uint32_t status = 77;
    cr_assert_eq(spdy_frame_decode_goaway(3, payload, odd_lengths[i], &last, &status),
                 odd_lengths[i] == 8 ? 0 : SPEEDY_ERR_PROTOCOL, "v3 length %zu", odd_lengths[i]);
    free(payload);
  }
}

Test(overflow_frame, ping_of_any_length_but_4_is_refused) {
  for (size_t i = 0; i < N_OF(odd_lengths); i++) {
    uint8_t *payload = zeroed(odd_lengths[i]);
    uint32_t id = 77;
    cr_assert_eq(spdy_frame_decode_ping(payload, odd_lengths[i], &id),
                 odd_lengths[i] == 4 ? 0 : SPEEDY_ERR_PROTOCOL, "length %zu", odd_lengths[i]);
    free(payload);
  }
}

Test(overflow_frame, window_update_of_any_length_but_8_is_refused) {
  for (size_t i = 0; i < N_OF(odd_lengths); i++) {
    uint8_t *payload = zeroed(odd_lengths[i]);
    int32_t id;
    uint32_t delta;
    cr_assert_eq(spdy_frame_decode_window_update(payload, odd_lengths[i], &id, &delta),
                 odd_lengths[i] == 8 ? 0 : SPEEDY_ERR_PROTOCOL, "length %zu", odd_lengths[i]);
    free(payload);
  }
}

Test(overflow_frame, short_goaway_and_rst_stream_end_the_session) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    const unsigned types[] = {SPEEDY_SPDY_FRAME_GOAWAY, SPEEDY_SPDY_FRAME_RST_STREAM};
    for (size_t t = 0; t < N_OF(types); t++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_rig_discard_output(&rig);
      raw_control_header(&rig.in, rig.version, types[t], 0, 3);
      raw_put_fill(&rig.in, 0, 3);
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                               types[t] == SPEEDY_SPDY_FRAME_GOAWAY ? "GOAWAY of 3 bytes"
                                                                    : "RST_STREAM of 3 bytes");
      raw_rig_close(&rig);
    }
  }
}

/* ---- lib/frame.c: header-bearing frames shorter than their fixed part ---------------- */

Test(overflow_frame, syn_stream_shorter_than_its_10_fixed_bytes_is_refused) {
  for (int version = 2; version <= 3; version++) {
    uint8_t payload[SPDY_SYN_STREAM_FIXED_LEN] = {0};
    for (size_t len = 0; len < SPDY_SYN_STREAM_FIXED_LEN; len++) {
      spdy_syn_stream syn;
      cr_assert_eq(spdy_frame_decode_syn_stream(version, payload, len, &syn), SPEEDY_ERR_PROTOCOL,
                   "v%d SYN_STREAM of %zu bytes", version, len);
    }
    spdy_syn_stream syn;
    cr_assert_eq(spdy_frame_decode_syn_stream(version, payload, sizeof(payload), &syn), 0);
    cr_assert_eq(syn.block_len, 0, "exactly the fixed part leaves an empty block");
  }
}

Test(overflow_frame, syn_reply_and_headers_shorter_than_their_fixed_part_are_refused) {
  for (int version = 2; version <= 3; version++) {
    size_t fixed = SPDY_SYN_REPLY_FIXED_LEN(version);
    uint8_t payload[8] = {0};
    for (size_t len = 0; len <= fixed; len++) {
      spdy_stream_headers reply, headers;
      int want = len < fixed ? SPEEDY_ERR_PROTOCOL : 0;
      cr_assert_eq(spdy_frame_decode_syn_reply(version, payload, len, &reply), want,
                   "v%d SYN_REPLY of %zu bytes", version, len);
      cr_assert_eq(spdy_frame_decode_headers(version, payload, len, &headers), want,
                   "v%d HEADERS of %zu bytes", version, len);
      if (want == 0) cr_assert_eq(reply.block_len, 0);
    }
  }
}

Test(overflow_frame, syn_stream_shorter_than_its_fixed_part_ends_the_session) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SYN_STREAM, 0, 9);
    raw_put_u32(&rig.in, 1);
    raw_put_fill(&rig.in, 0, 5);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM of 9 bytes");
    raw_rig_close(&rig);
  }
}

/* ---- lib/frame.c: CREDENTIAL lengths --------------------------------------------------- */

/* A CREDENTIAL payload: slot 1, a proof length field, proof_bytes bytes, then what `tail`
 * holds (certificate length fields and bytes). */
static size_t credential_payload(uint8_t *out, uint32_t proof_len, size_t proof_bytes,
                                 const uint8_t *tail, size_t tail_len) {
  spdy_put_u16(out, 1);
  spdy_put_u32(out + 2, proof_len);
  memset(out + 6, 'p', proof_bytes);
  if (tail_len > 0) memcpy(out + 6 + proof_bytes, tail, tail_len);
  return 6 + proof_bytes + tail_len;
}

Test(overflow_frame, credential_proof_length_past_the_payload_is_refused) {
  const uint32_t lies[] = {5, 0x7fffffffu, 0xfffffffau, 0xffffffffu};
  for (size_t i = 0; i < N_OF(lies); i++) {
    uint8_t payload[16];
    size_t len = credential_payload(payload, lies[i], 4, NULL, 0);
    spdy_credential c;
    cr_assert_eq(spdy_frame_decode_credential(payload, len, &c), SPEEDY_ERR_PROTOCOL,
                 "proof length 0x%x with 4 bytes present", lies[i]);
  }
}

Test(overflow_frame, credential_certificate_length_past_the_payload_is_refused) {
  /* 0xfffffffc + the 4 bytes of the length field wraps to 0 in 32 bits. */
  const uint32_t lies[] = {4, 0xfffffffcu, 0xffffffffu};
  for (size_t i = 0; i < N_OF(lies); i++) {
    uint8_t tail[7];
    spdy_put_u32(tail, lies[i]);
    memset(tail + 4, 'c', 3);
    uint8_t payload[32];
    size_t len = credential_payload(payload, 2, 2, tail, sizeof(tail));
    spdy_credential c;
    cr_assert_eq(spdy_frame_decode_credential(payload, len, &c), SPEEDY_ERR_PROTOCOL,
                 "certificate length 0x%x with 3 bytes present", lies[i]);
  }
}

Test(overflow_frame, credential_lengths_that_end_exactly_at_the_payload_end_are_accepted) {
  uint8_t tail[4 + 3];
  spdy_put_u32(tail, 3);
  memset(tail + 4, 'c', 3);
  uint8_t payload[32];
  size_t len = credential_payload(payload, 2, 2, tail, sizeof(tail));
  spdy_credential c;
  cr_assert_eq(spdy_frame_decode_credential(payload, len, &c), 0);
  cr_assert_eq(c.proof_len, 2);
  cr_assert_eq(c.n_certificates, 1);
  /* The proof taking every byte leaves no certificate: refused, not read past. */
  len = credential_payload(payload, 9, 9, NULL, 0);
  cr_assert_eq(spdy_frame_decode_credential(payload, len, &c), SPEEDY_ERR_PROTOCOL);
}

/* ---- lib/frame.c + session: window deltas ------------------------------------------------ */

Test(overflow_frame, window_update_past_2_31_minus_1_resets_the_stream) {
  const speedy_protocol versions[] = {SPEEDY_PROTOCOL_SPDY3, SPEEDY_PROTOCOL_SPDY3_1};
  for (size_t v = 0; v < N_OF(versions); v++) {
    raw_rig rig;
    raw_rig_open(&rig, versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/");
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    raw_rig_discard_output(&rig);
    /* 64 KiB + (2^31 - 1 - 65536) = 2^31 - 1: allowed; one more is not. */
    raw_window_update(&rig.in, rig.version, 1, 0x7fffffffu - 65536u);
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed, "%s: reaching 2^31-1 exactly",
                 rig.name);
    raw_output out;
    raw_output_take(&out, rig.peer);
    raw_expect_no_rst(&out, "window of exactly 2^31-1");
    raw_output_free(&out);
    raw_window_update(&rig.in, rig.version, 1, 1);
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_FLOW_CONTROL_ERROR, "window of 2^31");
    raw_rig_close(&rig);
  }
}

Test(overflow_frame, session_window_update_past_2_31_minus_1_ends_the_spdy31_session) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  raw_rig_discard_output(&rig);
  raw_window_update(&rig.in, rig.version, 0, 0x7fffffffu); /* 64 KiB + 2^31 - 1 */
  size_t fed;
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                           "session window past 2^31-1");
  raw_rig_close(&rig);
}

Test(overflow_frame, initial_window_setting_of_0xffffffff_ends_the_session) {
  const speedy_protocol versions[] = {SPEEDY_PROTOCOL_SPDY3, SPEEDY_PROTOCOL_SPDY3_1};
  for (size_t v = 0; v < N_OF(versions); v++) {
    raw_rig rig;
    raw_rig_open(&rig, versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0xffffffffu};
    raw_settings(&rig.in, rig.version, 0, &s, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "INITIAL_WINDOW_SIZE 0xffffffff");
    raw_rig_close(&rig);
  }
}

/* ---- lib/hdblock.c: the parser --------------------------------------------------------- */

static size_t width_of(int version) { return version == 2 ? 2 : 4; }

static void put_length(uint8_t *p, int version, uint32_t v) {
  if (version == 2)
    spdy_put_u16(p, (uint16_t)v);
  else
    spdy_put_u32(p, v);
}

static int count_fields(void *ctx, const speedy_header *header) {
  (void)header;
  (*(size_t *)ctx)++;
  return 0;
}

/* Parses with the counting allocator; returns the result and, in *allocs, how many
 * allocations the parse made. Nothing may be emitted unless it succeeds. */
static int parse_counted(int version, const uint8_t *block, size_t len, size_t *allocs) {
  speedy_mem mem;
  test_alloc_mem(&mem);
  size_t before = test_alloc_get()->total_allocs;
  size_t emitted = 0;
  int rv = spdy_hdblock_parse(version, &mem, block, len, count_fields, &emitted);
  if (allocs != NULL) *allocs = test_alloc_get()->total_allocs - before;
  if (rv != 0) cr_assert_eq(emitted, 0, "fields emitted from a refused block");
  cr_assert_eq(test_alloc_live(), 0, "the parse leaked");
  return rv;
}

Test(overflow_hdblock, pair_count_at_the_field_maximum_is_refused_without_allocating) {
  for (int version = 2; version <= 3; version++) {
    uint32_t counts[] = {version == 2 ? 0xffffu : 0xffffffffu, version == 2 ? 0x8000u : 0x80000000u,
                         65, 2};
    for (size_t i = 0; i < N_OF(counts); i++) {
      /* The count, then one well-formed field "a" = "b". */
      uint8_t block[4 + 4 + 1 + 4 + 1];
      size_t w = width_of(version), len = 0;
      put_length(block, version, counts[i]);
      len += w;
      put_length(block + len, version, 1);
      len += w;
      block[len++] = 'a';
      put_length(block + len, version, 1);
      len += w;
      block[len++] = 'b';
      size_t allocs;
      cr_assert_eq(parse_counted(version, block, len, &allocs), SPEEDY_ERR_INVALID_HEADER,
                   "v%d count 0x%x for one field", version, counts[i]);
      cr_assert_eq(allocs, 0, "v%d count 0x%x allocated before refusing", version, counts[i]);
    }
  }
}

Test(overflow_hdblock, pair_index_is_bounded_by_the_block_length) {
  /* As many fields as the bytes could hold (9 bytes each in v3), all empty names: the index
   * is allocated (count > 64) but costs no more than the block itself. */
  const uint32_t count = 1000;
  size_t len = 4 + 9 * (size_t)count;
  uint8_t *block = zeroed(len);
  spdy_put_u32(block, count);
  size_t peak_before = test_alloc_get()->peak_bytes;
  cr_assert_eq(parse_counted(3, block, len, NULL), SPEEDY_ERR_INVALID_HEADER);
  cr_assert_leq(peak_growth(peak_before), len + 64, "an index of %zu bytes for a %zu-byte block",
                peak_growth(peak_before), len);
  free(block);
}

/* A block holding `count` = 1 and one field whose name (or value) length field says
 * `length` while `actual` bytes follow. */
static size_t block_with_length(uint8_t *block, int version, int in_value, uint32_t length,
                                size_t actual) {
  size_t w = width_of(version), len = 0;
  put_length(block, version, 1);
  len += w;
  if (in_value) {
    put_length(block + len, version, 1);
    len += w;
    block[len++] = 'n';
  }
  put_length(block + len, version, length);
  len += w;
  memset(block + len, 'x', actual);
  return len + actual;
}

Test(overflow_hdblock, name_length_at_the_field_maximum_is_refused) {
  for (int version = 2; version <= 3; version++) {
    uint32_t lengths[] = {version == 2 ? 0xffffu : 0xffffffffu,
                          version == 2 ? 0xfffeu : 0xfffffffeu, 11};
    for (size_t i = 0; i < N_OF(lengths); i++) {
      uint8_t block[64];
      size_t len = block_with_length(block, version, 0, lengths[i], 10);
      cr_assert_eq(parse_counted(version, block, len, NULL), SPEEDY_ERR_INVALID_HEADER,
                   "v%d name length 0x%x with 10 bytes", version, lengths[i]);
    }
  }
}

Test(overflow_hdblock, value_length_at_the_field_maximum_is_refused) {
  for (int version = 2; version <= 3; version++) {
    uint32_t lengths[] = {version == 2 ? 0xffffu : 0xffffffffu,
                          version == 2 ? 0xfffeu : 0xfffffffeu, 11};
    for (size_t i = 0; i < N_OF(lengths); i++) {
      uint8_t block[64];
      size_t len = block_with_length(block, version, 1, lengths[i], 10);
      cr_assert_eq(parse_counted(version, block, len, NULL), SPEEDY_ERR_INVALID_HEADER,
                   "v%d value length 0x%x with 10 bytes", version, lengths[i]);
    }
  }
}

Test(overflow_hdblock, name_length_that_wraps_a_32_bit_offset_is_refused) {
  /* v3: the name starts at offset 8 of a 14-byte block; 8 + 0xfffffffe wraps to 6 in 32
   * bits, inside the block, so a 32-bit "pos + name_len <= len" check would pass it. */
  uint8_t block[8 + 6];
  spdy_put_u32(block, 1);
  spdy_put_u32(block + 4, 0xfffffffeu);
  memset(block + 8, 'x', 6);
  cr_assert_eq(parse_counted(3, block, sizeof(block), NULL), SPEEDY_ERR_INVALID_HEADER);
}

Test(overflow_hdblock, value_length_that_wraps_a_32_bit_offset_is_refused) {
  /* count, name "n", a value length, 4 value bytes: the value starts at offset 13 of 17;
   * 13 + 0xfffffff7 wraps to 4 in 32 bits. */
  uint8_t block[4 + 4 + 1 + 4 + 4];
  spdy_put_u32(block, 1);
  spdy_put_u32(block + 4, 1);
  block[8] = 'n';
  spdy_put_u32(block + 9, 4);
  memset(block + 13, 'v', 4);
  cr_assert_eq(parse_counted(3, block, sizeof(block), NULL), 0, "the honest length 4");
  spdy_put_u32(block + 9, 0xfffffff7u);
  cr_assert_eq(parse_counted(3, block, sizeof(block), NULL), SPEEDY_ERR_INVALID_HEADER);
}

Test(overflow_hdblock, length_field_cut_by_the_block_end_is_refused) {
  for (int version = 2; version <= 3; version++) {
    size_t w = width_of(version);
    for (size_t cut = 1; cut < w; cut++) {
      /* count 1, name "n", then only `cut` bytes of the value's length field. */
      uint8_t block[16] = {0};
      put_length(block, version, 1);
      put_length(block + w, version, 1);
      block[2 * w] = 'n';
      size_t len = 2 * w + 1 + cut;
      cr_assert_eq(parse_counted(version, block, len, NULL), SPEEDY_ERR_INVALID_HEADER,
                   "v%d, %zu of %zu length bytes", version, cut, w);
    }
  }
}

Test(overflow_hdblock, block_longer_than_4_GiB_is_refused_before_reading) {
  /* Offsets are indexed in 32 bits; the length is checked before any byte is read (only
   * the first 8 exist here: the sanitizers would see a read past them). */
  if (SIZE_MAX <= UINT32_MAX) cr_skip_test("size_t is 32 bits");
  uint8_t block[8] = {0, 0, 0, 1, 0, 0, 0, 1};
  size_t len = (size_t)UINT32_MAX + 1;
  cr_assert_eq(parse_counted(3, block, len, NULL), SPEEDY_ERR_INVALID_HEADER);
}

/* ---- lib/hdblock.c: the inflated-size cap ------------------------------------------------ */

/* Compresses len bytes of `fill` as one block with the version's dictionary. */
static void deflate_fill(int version, uint8_t fill, size_t len, raw_buf *out) {
  raw_deflater d;
  raw_deflater_init_version(&d, (unsigned)version);
  uint8_t *plain = malloc(len > 0 ? len : 1);
  cr_assert_not_null(plain);
  memset(plain, fill, len);
  raw_deflate(&d, plain, len, Z_SYNC_FLUSH, out);
  free(plain);
  raw_deflater_free(&d);
}

/* Inflates a block of `len` bytes of 'a' under cap; returns the result. */
static int inflate_len(int version, uint32_t cap, size_t len, size_t *out_len) {
  raw_buf block = {0};
  deflate_fill(version, 'a', len, &block);
  speedy_mem mem;
  test_alloc_mem(&mem);
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, version, cap), 0);
  const uint8_t *out;
  size_t n = 0;
  int rv = spdy_hdblock_inflate(&inf, &mem, block.data, block.len, &out, &n);
  if (out_len != NULL) *out_len = n;
  spdy_hdblock_inflater_free(&inf, &mem);
  raw_buf_free(&block);
  cr_assert_eq(test_alloc_live(), 0);
  return rv;
}

Test(overflow_hdblock, block_inflating_to_exactly_the_cap_is_accepted) {
  for (int version = 2; version <= 3; version++) {
    size_t n;
    cr_assert_eq(inflate_len(version, 1024, 1024, &n), 0, "v%d", version);
    cr_assert_eq(n, 1024);
  }
}

Test(overflow_hdblock, block_inflating_to_one_byte_over_the_cap_is_refused) {
  for (int version = 2; version <= 3; version++)
    cr_assert_eq(inflate_len(version, 1024, 1025, NULL), SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE, "v%d",
                 version);
}

Test(overflow_hdblock, zlib_bomb_costs_no_more_than_the_cap) {
  /* 16 MiB of zeros compress to about 16 KiB; with a 64 KiB cap, inflating costs the cap
   * plus zlib's own state (a 32 KiB window and about 7 KiB), never the 16 MiB. */
  raw_buf block = {0};
  deflate_fill(3, 0, 16u << 20, &block);
  cr_assert_lt(block.len, 64 * 1024);
  speedy_mem mem;
  test_alloc_mem(&mem);
  size_t peak_before = test_alloc_get()->peak_bytes;
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, 65536), 0);
  const uint8_t *out;
  size_t n;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, block.data, block.len, &out, &n),
               SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE);
  cr_assert_lt(peak_growth(peak_before), 65536 + 64 * 1024, "the bomb cost %zu bytes",
               peak_growth(peak_before));
  spdy_hdblock_inflater_free(&inf, &mem);
  raw_buf_free(&block);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(overflow_hdblock, cap_of_0xffffffff_allocates_only_what_is_inflated) {
  raw_buf block = {0};
  deflate_fill(3, 'a', 100, &block);
  speedy_mem mem;
  test_alloc_mem(&mem);
  size_t peak_before = test_alloc_get()->peak_bytes;
  spdy_hdblock_inflater inf;
  cr_assert_eq(spdy_hdblock_inflater_init(&inf, &mem, 3, UINT32_MAX), 0);
  const uint8_t *out;
  size_t n;
  cr_assert_eq(spdy_hdblock_inflate(&inf, &mem, block.data, block.len, &out, &n), 0);
  cr_assert_eq(n, 100);
  cr_assert_lt(peak_growth(peak_before), 64 * 1024, "a 100-byte block cost %zu bytes",
               peak_growth(peak_before));
  spdy_hdblock_inflater_free(&inf, &mem);
  raw_buf_free(&block);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(overflow_hdblock, session_refuses_a_block_over_max_header_block) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    speedy_options *options = raw_options_new();
    speedy_options_set_max_header_block(options, 1024);
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, options);
    speedy_options_del(options);
    raw_rig_discard_output(&rig);
    /* A request whose one extra value makes the block 1 KiB and more. */
    raw_header fields[7];
    size_t n = raw_request_headers(rig.version, "/", fields);
    char big[1100];
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    fields[n++] = (raw_header){"x-big", big, 0};
    raw_syn_stream_nv(&rig.in, &rig.deflater, rig.version, SPDY_FLAG_FIN, 1, 0, 3, fields, n);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE, 0,
                             SPDY_GOAWAY_PROTOCOL_ERROR, "inflated block over 1 KiB");
    raw_rig_close(&rig);
  }
}
