/* test_hostile_session2.c — hostile input, second part: SETTINGS and PING floods, SETTINGS
 * quirks, CREDENTIAL, failing callbacks, byte-at-a-time equivalence and allocation
 * failures. Each case checks the protocol's answer decoded from the session's output, the
 * value speedy_session_recv returns, and that nothing leaks. (Also: test_hostile_session.c
 * and test_hostile_session3.c.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "rawframe.h"
#include "testutil.h"

static const speedy_protocol all_versions[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                               SPEEDY_PROTOCOL_SPDY3_1};
#define N_VERSIONS 3

static void put_get(raw_rig *rig, uint32_t stream_id, uint8_t flags) {
  raw_get(&rig->in, &rig->deflater, rig->version, flags, stream_id, "/");
}

/* ---- floods ----------------------------------------------------------------------------- */

Test(hostile_flood, ten_thousand_settings_frames_owe_nothing_and_hold_no_memory) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    /* Settle the input buffer's size with one frame first. */
    speedy_setting one = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 1};
    raw_settings(&rig.in, rig.version, 0, &one, 1);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    size_t idle = speedy_session_memory(rig.peer->session);
    size_t peak = idle;
    for (uint32_t i = 0; i < 10000; i++) {
      speedy_setting s[2] = {{SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 100 + i},
                             {SPEEDY_SETTINGS_ROUND_TRIP_TIME, 0, i}};
      raw_settings(&rig.in, rig.version, 0, s, 2);
      if (rig.in.len >= 16384 || i == 9999) {
        int64_t rv = raw_rig_feed_all(&rig, &fed);
        cr_assert_eq(rv, (int64_t)fed, "%s: SETTINGS flood: %lld", rig.name, (long long)rv);
        size_t now = speedy_session_memory(rig.peer->session);
        if (now > peak) peak = now;
      }
    }
    cr_assert_leq(peak, idle + 256, "%s: 10,000 SETTINGS frames grew the session %zu -> %zu",
                  rig.name, idle, peak);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 100 + 9999);
    cr_assert_eq(speedy_session_want_write(rig.peer->session), 0, "%s: output owed", rig.name);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0, "%s: SETTINGS were answered with %zu frames", rig.name, out.n);
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

/* Queues count PINGs with client (odd) ids. */
static void put_pings(raw_rig *rig, uint32_t count) {
  for (uint32_t i = 0; i < count; i++) raw_ping(&rig->in, rig->version, 2 * i + 1);
}

Test(hostile_flood, ping_flood_without_reading_hits_the_owed_frame_cap) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    size_t idle = speedy_session_memory(rig.peer->session);
    put_pings(&rig, 10000);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    size_t held = speedy_session_memory(rig.peer->session);
    /* 1,000 owed echoes (the default cap) of a few hundred bytes each, no more. */
    cr_assert_leq(held, idle + 1000 * 256, "%s: a PING flood holds %zu bytes", rig.name,
                  held - idle);
    raw_output out;
    raw_output_take(&out, rig.peer);
    size_t echoes = raw_output_count(&out, SPEEDY_SPDY_FRAME_PING);
    cr_assert_eq(echoes, 1000, "%s: %zu PINGs echoed before the cap, expected 1,000", rig.name,
                 echoes);
    char context[64];
    snprintf(context, sizeof(context), "PING flood (%s)", rig.name);
    raw_expect_goaway(&out, rig.version, 0, SPDY_GOAWAY_PROTOCOL_ERROR, context);
    raw_output_free(&out);
    cr_assert_eq(rv, SPEEDY_ERR_FLOOD, "%s: recv returned %lld", rig.name, (long long)rv);
    cr_assert_eq(speedy_session_want_read(rig.peer->session), 0);
    raw_rig_close(&rig);
  }
}

Test(hostile_flood, pings_with_output_drained_between_are_no_flood) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    size_t echoes = 0;
    for (uint32_t i = 0; i < 10000; i++) {
      raw_ping(&rig.in, rig.version, 2 * i + 1);
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      cr_assert_eq(rv, (int64_t)fed, "%s: PING %u: %lld", rig.name, i, (long long)rv);
      uint8_t buf[64];
      int64_t n = speedy_session_send(rig.peer->session, buf, sizeof(buf));
      cr_assert_eq(n, 12, "%s: echo of PING %u: %lld bytes", rig.name, i, (long long)n);
      uint32_t id;
      cr_assert_eq(spdy_frame_decode_ping(buf + 8, 4, &id), 0);
      cr_assert_eq(id, 2 * i + 1);
      echoes++;
    }
    cr_assert_eq(echoes, 10000);
    raw_rig_close(&rig);
  }
}

Test(hostile_flood, owed_frame_cap_is_configurable) {
  speedy_options *options = raw_options_new();
  speedy_options_set_max_queued_control_frames(options, 10);
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, options);
  speedy_options_del(options);
  raw_rig_discard_output(&rig);
  put_pings(&rig, 10);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed, "10 owed frames are within a cap of 10");
  put_pings(&rig, 1);
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  cr_assert_eq(rv, SPEEDY_ERR_FLOOD, "the 11th owed frame: %lld", (long long)rv);
  raw_output out;
  raw_output_take(&out, rig.peer);
  cr_assert_eq(raw_output_count(&out, SPEEDY_SPDY_FRAME_PING), 10);
  raw_expect_goaway(&out, 3, 0, SPDY_GOAWAY_PROTOCOL_ERROR, "11 PINGs with a cap of 10");
  raw_output_free(&out);
  raw_rig_close(&rig);
}

Test(hostile_flood, resets_owed_for_data_on_unknown_streams_hit_the_cap) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    for (uint32_t i = 0; i < 1001; i++) raw_data(&rig.in, 2 * i + 101, 0, NULL, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, SPEEDY_ERR_FLOOD, "%s: 1,001 owed RST_STREAMs: %lld", rig.name, (long long)rv);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(raw_output_count(&out, SPEEDY_SPDY_FRAME_RST_STREAM), 1000, "%s", rig.name);
    raw_expect_goaway(&out, rig.version, 0, SPDY_GOAWAY_PROTOCOL_ERROR, "RST_STREAM flood");
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

/* ---- SETTINGS quirks --------------------------------------------------------------------- */

Test(hostile_settings, persist_flags_from_a_client_are_accepted) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    speedy_setting s[] = {
        {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE, 10},
        {SPEEDY_SETTINGS_ROUND_TRIP_TIME, SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED, 40},
        {SPEEDY_SETTINGS_UPLOAD_BANDWIDTH, 0xff, 1000}};
    raw_settings(&rig.in, rig.version, SPEEDY_SPDY_SETTINGS_FLAG_CLEAR_SETTINGS, s, 3);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: %lld", rig.name, (long long)rv);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 10);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 3), 40);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 1), 1000);
    cr_assert(test_log_has(rig.peer, "setting 4=10 flags=1"), "%s log:\n%s", rig.name,
              rig.peer->log);
    raw_output out;
    raw_output_take(&out, rig.peer);
    raw_expect_no_goaway(&out, "persisted settings from a client");
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

Test(hostile_settings, same_id_twice_in_one_frame_keeps_the_first_value) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    speedy_setting s[] = {{SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 10},
                          {SPEEDY_SETTINGS_ROUND_TRIP_TIME, 0, 5},
                          {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 20}};
    raw_settings(&rig.in, rig.version, 0, s, 3);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 10, "%s: got %lld", rig.name,
                 (long long)speedy_session_remote_setting(rig.peer->session, 4));
    cr_assert(!test_log_has(rig.peer, "setting 4=20 flags=0"), "%s log:\n%s", rig.name,
              rig.peer->log);
    /* A later frame may change it. */
    speedy_setting later = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 30};
    raw_settings(&rig.in, rig.version, 0, &later, 1);
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 30);
    raw_rig_close(&rig);
  }
}

Test(hostile_settings, initial_window_size_above_2_31_is_session_error) {
  for (size_t v = 1; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1, 0);
    speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0x80000000u};
    raw_settings(&rig.in, 3, 0, &s, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "INITIAL_WINDOW_SIZE 2^31");
    raw_rig_close(&rig);
  }
}

Test(hostile_settings, initial_window_size_is_ignored_in_v2) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY2, SPEEDY_ROLE_SERVER, NULL);
  speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0xffffffffu};
  raw_settings(&rig.in, 2, 0, &s, 1);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed, "v2 has no flow control to break");
  raw_rig_close(&rig);
}

Test(hostile_settings, initial_window_size_overflowing_an_open_stream_resets_it) {
  for (size_t v = 1; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1, 0);
    put_get(&rig, 3, 0);
    raw_window_update(&rig.in, 3, 1, 0x7fffffffu - 65536); /* stream 1 at 2^31 - 1 */
    speedy_setting s = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 65537};
    raw_settings(&rig.in, 3, 0, &s, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_FLOW_CONTROL_ERROR,
                            "INITIAL_WINDOW_SIZE pushing stream 1 past 2^31 - 1");
    cr_assert_eq(speedy_session_send_window(rig.peer->session, 3), 65537,
                 "stream 3 follows the new initial window");
    raw_rig_close(&rig);
  }
}

Test(hostile_settings, v2_setting_ids_are_little_endian) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY2, SPEEDY_ROLE_SERVER, NULL);
  /* By hand: count 2; id 4 as 04 00 00, flags 0, value 77; then id 4 written big-endian
   * (00 00 04 = id 0x040000, unknown) with value 99. */
  /* clang-format off */
  static const uint8_t frame[] = {0x80, 0x02, 0x00, 0x04, 0x00, 0x00, 0x00, 0x14,
                                  0x00, 0x00, 0x00, 0x02,
                                  0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 77,
                                  0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 99};
  /* clang-format on */
  raw_put(&rig.in, frame, sizeof(frame));
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 77,
               "id 04 00 00 is MAX_CONCURRENT_STREAMS in v2");
  cr_assert(test_log_has(rig.peer, "setting 4=77 flags=0"), "log:\n%s", rig.peer->log);
  cr_assert(!test_log_has(rig.peer, "setting 4=99 flags=0"), "log:\n%s", rig.peer->log);
  raw_rig_close(&rig);
}

Test(hostile_settings, v3_setting_ids_are_big_endian) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, NULL);
  /* clang-format off */
  static const uint8_t frame[] = {0x80, 0x03, 0x00, 0x04, 0x00, 0x00, 0x00, 0x14,
                                  0x00, 0x00, 0x00, 0x02,
                                  0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 99,
                                  0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 77};
  /* clang-format on */
  raw_put(&rig.in, frame, sizeof(frame));
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), 77);
  raw_rig_close(&rig);
}

Test(hostile_settings, unknown_setting_ids_are_ignored) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 4 + 3 * 8);
    raw_put_u32(&rig.in, 3);
    raw_settings_entry(&rig.in, rig.version, 0, 0, 1);
    raw_settings_entry(&rig.in, rig.version, 9, 0, 2);
    raw_settings_entry(&rig.in, rig.version, 0xffffff, 0, 3);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    cr_assert(rig.peer->log == NULL, "%s: unknown settings reported:\n%s", rig.name, rig.peer->log);
    raw_rig_close(&rig);
  }
}

/* ---- CREDENTIAL ---------------------------------------------------------------------------- */

static void put_credential(raw_buf *b) {
  static const uint8_t proof[] = {1, 2, 3, 4, 5};
  static const uint8_t cert1[] = {0x30, 0x03, 0x02, 0x01, 0x01};
  static const uint8_t cert2[] = {0x30, 0x00};
  const uint8_t *const certs[] = {cert1, cert2};
  const size_t lens[] = {sizeof(cert1), sizeof(cert2)};
  raw_credential(b, 1, proof, sizeof(proof), certs, lens, 2);
}

/* CREDENTIAL payloads that break its rules. */
static void put_bad_credential(raw_buf *b, unsigned version, int which) {
  if (which == 0) { /* no certificate */
    raw_control_header(b, version, SPEEDY_SPDY_FRAME_CREDENTIAL, 0, 6 + 2);
    raw_put_u16(b, 1);
    raw_put_u32(b, 2);
    raw_put_u16(b, 0xabcd);
  } else if (which == 1) { /* proof longer than the frame */
    raw_control_header(b, version, SPEEDY_SPDY_FRAME_CREDENTIAL, 0, 6 + 4);
    raw_put_u16(b, 1);
    raw_put_u32(b, 0xffffffffu);
    raw_put_u32(b, 0);
  } else { /* certificate longer than the frame */
    raw_control_header(b, version, SPEEDY_SPDY_FRAME_CREDENTIAL, 0, 6 + 1 + 4 + 2);
    raw_put_u16(b, 1);
    raw_put_u32(b, 1);
    raw_put_u8(b, 9);
    raw_put_u32(b, 3);
    raw_put_u16(b, 0x3000);
  }
}

Test(hostile_credential, valid_credential_in_v3_is_ignored) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, NULL);
  raw_rig_discard_output(&rig);
  put_credential(&rig.in);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  raw_output out;
  raw_output_take(&out, rig.peer);
  cr_assert_eq(out.n, 0, "CREDENTIAL was answered");
  raw_output_free(&out);
  raw_rig_close(&rig);
}

Test(hostile_credential, malformed_credential_in_v3_is_session_error) {
  for (int which = 0; which < 3; which++) {
    raw_rig rig;
    raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, NULL);
    put_bad_credential(&rig.in, 3, which);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    const char *what[] = {"CREDENTIAL without certificates", "CREDENTIAL proof past the end",
                          "CREDENTIAL certificate past the end"};
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             what[which]);
    raw_rig_close(&rig);
  }
}

Test(hostile_credential, credential_outside_v3_is_an_unknown_frame) {
  const speedy_protocol others[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3_1};
  for (size_t v = 0; v < 2; v++) {
    raw_rig rig;
    raw_rig_open(&rig, others[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    for (int which = 0; which < 3; which++) put_bad_credential(&rig.in, rig.version, which);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed, "%s: CREDENTIAL must be skipped",
                 rig.name);
    raw_expect_session_works(&rig, 1, "after CREDENTIAL frames");
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0);
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

/* ---- callbacks that fail ------------------------------------------------------------------ */

enum failing_callback {
  FAIL_BEGIN_HEADERS,
  FAIL_HEADER,
  FAIL_HEADERS_END,
  FAIL_DATA_CHUNK,
  FAIL_DATA_END,
  FAIL_STREAM_CLOSE,
  FAIL_SETTING,
  FAIL_PING_ACK,
  FAIL_GOAWAY,
  FAIL_COUNT
};

static const char *const failing_names[] = {"on_begin_headers", "on_header",   "on_headers_end",
                                            "on_data_chunk",    "on_data_end", "on_stream_close",
                                            "on_setting",       "on_ping_ack", "on_goaway"};

typedef struct failing {
  int which;
  int calls; /* times the failing callback ran */
} failing;

static int fail_if(void *user, int which) {
  failing *f = user;
  if (f->which != which) return 0;
  f->calls++;
  return -1;
}

static int cb_begin(speedy_session *s, int32_t id, speedy_headers_kind k, int32_t a, void *user) {
  (void)s, (void)id, (void)k, (void)a;
  return fail_if(user, FAIL_BEGIN_HEADERS);
}
static int cb_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  (void)s, (void)id, (void)h;
  return fail_if(user, FAIL_HEADER);
}
static int cb_headers_end(speedy_session *s, int32_t id, int fin, void *user) {
  (void)s, (void)id, (void)fin;
  return fail_if(user, FAIL_HEADERS_END);
}
static int cb_data(speedy_session *s, int32_t id, const uint8_t *d, size_t n, void *user) {
  (void)s, (void)id, (void)d, (void)n;
  return fail_if(user, FAIL_DATA_CHUNK);
}
static int cb_data_end(speedy_session *s, int32_t id, void *user) {
  (void)s, (void)id;
  return fail_if(user, FAIL_DATA_END);
}
static int cb_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s, (void)id, (void)status;
  return fail_if(user, FAIL_STREAM_CLOSE);
}
static int cb_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *user) {
  (void)s, (void)id, (void)flags, (void)value;
  return fail_if(user, FAIL_SETTING);
}
static int cb_ping(speedy_session *s, uint32_t id, int64_t rtt, void *user) {
  (void)s, (void)id, (void)rtt;
  return fail_if(user, FAIL_PING_ACK);
}
static int cb_goaway(speedy_session *s, int32_t last, uint32_t status, void *user) {
  (void)s, (void)last, (void)status;
  return fail_if(user, FAIL_GOAWAY);
}

static speedy_session *failing_session(speedy_protocol protocol, failing *f) {
  speedy_callbacks *cb;
  cr_assert_eq(speedy_callbacks_new(&cb), 0);
  speedy_callbacks_set_on_begin_headers(cb, cb_begin);
  speedy_callbacks_set_on_header(cb, cb_header);
  speedy_callbacks_set_on_headers_end(cb, cb_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, cb_data);
  speedy_callbacks_set_on_data_end(cb, cb_data_end);
  speedy_callbacks_set_on_stream_close(cb, cb_close);
  speedy_callbacks_set_on_setting(cb, cb_setting);
  speedy_callbacks_set_on_ping_ack(cb, cb_ping);
  speedy_callbacks_set_on_goaway(cb, cb_goaway);
  speedy_options *options = raw_options_new();
  speedy_session *session = NULL;
  cr_assert_eq(speedy_session_new(&session, protocol, SPEEDY_ROLE_SERVER, cb, options, f), 0);
  speedy_options_del(options);
  speedy_callbacks_del(cb);
  return session;
}

Test(hostile_callbacks, every_failing_callback_is_callback_failure_with_goaway) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    unsigned version = all_versions[v] == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
    for (int which = 0; which < FAIL_COUNT; which++) {
      failing f = {which, 0};
      speedy_session *session = failing_session(all_versions[v], &f);
      uint32_t ping_id = 0;
      cr_assert_eq(speedy_submit_ping(session, &ping_id), 0);
      raw_output start;
      raw_output_take_session(&start, session);
      raw_output_free(&start);
      /* Input that reaches every callback in turn: the failing one stops it. */
      raw_deflater d;
      raw_deflater_init_version(&d, version);
      raw_buf in = {0};
      speedy_setting s = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 10};
      raw_settings(&in, version, 0, &s, 1);
      raw_get(&in, &d, version, 0, 1, "/");
      raw_data(&in, 1, SPDY_FLAG_FIN, NULL, 10);
      raw_rst_stream(&in, version, 1, SPEEDY_RST_CANCEL);
      raw_ping(&in, version, ping_id);
      raw_goaway(&in, version, 0, SPDY_GOAWAY_OK);
      raw_deflater_free(&d);
      int64_t rv = speedy_session_recv(session, in.data, in.len);
      cr_assert_eq(rv, SPEEDY_ERR_CALLBACK_FAILURE, "v%u: failing %s: recv returned %lld", version,
                   failing_names[which], (long long)rv);
      cr_assert_eq(f.calls, 1, "v%u: %s ran %d times", version, failing_names[which], f.calls);
      raw_output out;
      raw_output_take_session(&out, session);
      char what[64];
      snprintf(what, sizeof(what), "v%u: failing %s", version, failing_names[which]);
      int32_t last_good = which == FAIL_SETTING ? 0 : 1;
      raw_expect_goaway(&out, version, last_good, SPDY_GOAWAY_INTERNAL_ERROR, what);
      raw_output_free(&out);
      cr_assert_eq(speedy_session_recv(session, in.data, 1), SPEEDY_ERR_CALLBACK_FAILURE);
      raw_buf_free(&in);
      speedy_session_del(session);
      cr_assert_eq(test_alloc_live(), 0, "%s: leak", what);
    }
  }
}

/* ---- byte at a time ------------------------------------------------------------------------ */

typedef void (*input_builder)(raw_buf *in, raw_deflater *d, unsigned version);

/* What a run produced: the coalesced log, the output and recv's result. */
typedef struct run_result {
  char *log;
  uint8_t *out;
  size_t out_len;
  int64_t rv;
} run_result;

static void run_input(speedy_protocol protocol, speedy_role role, const raw_buf *in, size_t chunk,
                      run_result *result) {
  raw_rig rig;
  raw_rig_open(&rig, protocol, role, NULL);
  rig.peer->on_request = role == SPEEDY_ROLE_SERVER ? test_respond_default : NULL;
  if (role == SPEEDY_ROLE_CLIENT) {
    test_get(rig.peer, "/a", 3);
    test_post(rig.peer, "/b", 500);
  }
  raw_rig_discard_output(&rig);
  raw_put(&rig.in, in->data, in->len);
  result->rv = raw_rig_feed(&rig, chunk);
  result->log = raw_coalesced_log(rig.peer);
  result->out = test_drain(rig.peer, &result->out_len);
  raw_rig_close(&rig);
}

static void expect_chunking_does_not_matter(speedy_protocol protocol, speedy_role role,
                                            input_builder build, const char *what) {
  unsigned version = protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
  raw_deflater d;
  raw_deflater_init_version(&d, version);
  raw_buf in = {0};
  build(&in, &d, version);
  raw_deflater_free(&d);
  run_result whole, bytes;
  run_input(protocol, role, &in, in.len, &whole);
  run_input(protocol, role, &in, 1, &bytes);
  const char *name = speedy_protocol_name(protocol);
  cr_assert_eq(bytes.rv, whole.rv, "%s (%s): recv %lld byte by byte, %lld whole", what, name,
               (long long)bytes.rv, (long long)whole.rv);
  cr_assert_str_eq(bytes.log, whole.log, "%s (%s): events differ", what, name);
  cr_assert(bytes.out_len == whole.out_len && memcmp(bytes.out, whole.out, whole.out_len) == 0,
            "%s (%s): output differs (%zu bytes byte by byte, %zu whole)", what, name,
            bytes.out_len, whole.out_len);
  free(whole.log), free(whole.out), free(bytes.log), free(bytes.out);
  raw_buf_free(&in);
}

/* A client's varied session: several streams, bodies, trailers, SETTINGS, PING,
 * WINDOW_UPDATE, RST_STREAM and GOAWAY. */
static void build_varied_client(raw_buf *in, raw_deflater *d, unsigned version) {
  speedy_setting s[] = {{SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 50},
                        {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 200000}};
  raw_settings(in, version, 0, s, 2);
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/index.html");
  raw_get(in, d, version, 0, 3, "/upload");
  raw_data(in, 3, 0, NULL, 1000);
  raw_ping(in, version, 1);
  raw_get(in, d, version, 0, 5, "/other");
  raw_data(in, 5, 0, NULL, 300);
  raw_data(in, 3, 0, NULL, 700);
  const raw_header trailers[] = {{"x-checksum", "abc", 0}};
  raw_headers_nv(in, d, version, SPDY_FLAG_FIN, 3, trailers, 1);
  if (version >= 3) raw_window_update(in, version, 5, 4096);
  raw_rst_stream(in, version, 5, SPEEDY_RST_CANCEL);
  raw_data(in, 0x7ffffff1u, 0, NULL, 0); /* empty DATA on an unused stream */
  raw_get(in, d, version, SPDY_FLAG_FIN, 7, "/last");
  raw_goaway(in, version, 0, SPDY_GOAWAY_OK);
}

/* A server's varied session towards a client that sent GET 1 and POST 3. */
static void build_varied_server(raw_buf *in, raw_deflater *d, unsigned version) {
  speedy_setting s = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS,
                      SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE, 8};
  raw_settings(in, version, 0, &s, 1);
  raw_header response[2];
  raw_response_headers(version, response);
  raw_syn_reply_nv(in, d, version, 0, 1, response, 2);
  raw_data(in, 1, 0, NULL, 800);
  raw_header push[5];
  size_t n = 0;
  if (version == 2) {
    push[n++] = (raw_header){"url", "https://example.test/style.css", 0};
    push[n++] = (raw_header){"status", "200 OK", 0};
    push[n++] = (raw_header){"version", "HTTP/1.1", 0};
  } else {
    push[n++] = (raw_header){":scheme", "https", 0};
    push[n++] = (raw_header){":host", "example.test", 0};
    push[n++] = (raw_header){":path", "/style.css", 0};
  }
  raw_syn_stream_nv(in, d, version, SPDY_FLAG_UNIDIRECTIONAL, 2, 1, 2, push, n);
  if (version >= 3) raw_headers_nv(in, d, version, 0, 2, response, 2);
  raw_data(in, 2, SPDY_FLAG_FIN, NULL, 333);
  raw_ping(in, version, 2);
  raw_data(in, 1, 0, NULL, 200);
  const raw_header trailers[] = {{"x-trailer", "yes", 0}};
  raw_headers_nv(in, d, version, SPDY_FLAG_FIN, 1, trailers, 1);
  if (version >= 3) raw_window_update(in, version, 3, 10000);
  raw_rst_stream(in, version, 3, SPEEDY_RST_CANCEL);
  raw_goaway(in, version, 1, SPDY_GOAWAY_OK);
}

Test(hostile_chunking, byte_at_a_time_matches_one_buffer_for_a_varied_session) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    expect_chunking_does_not_matter(all_versions[v], SPEEDY_ROLE_SERVER, build_varied_client,
                                    "varied client input");
    expect_chunking_does_not_matter(all_versions[v], SPEEDY_ROLE_CLIENT, build_varied_server,
                                    "varied server input");
  }
}

/* Hostile inputs towards a server. */
static void build_bad_block_then_get(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_header fields[7];
  size_t n = raw_request_headers(version, "/", fields);
  fields[n++] = (raw_header){"Upper", "x", 0};
  raw_syn_stream_nv(in, d, version, SPDY_FLAG_FIN, 1, 0, 0, fields, n);
  raw_data(in, 1, 0, NULL, 20);
  raw_get(in, d, version, SPDY_FLAG_FIN, 3, "/ok");
}

static void build_reused_and_unknown_ids(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, 0, 1, "/");
  raw_get(in, d, version, 0, 1, "/again");
  raw_data(in, 9, SPDY_FLAG_FIN, NULL, 9);
  raw_data(in, 1, SPDY_FLAG_FIN, NULL, 9);
  raw_get(in, d, version, SPDY_FLAG_FIN, 3, "/");
  raw_get(in, d, version, SPDY_FLAG_FIN, 2, "/even");
}

static void build_other_version(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/");
  raw_ping(in, version == 2 ? 3 : 2, 1);
  raw_ping(in, version, 3);
}

static void build_corrupt_zlib(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/");
  static const uint8_t junk[] = {0x78, 0xbb, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03};
  raw_syn_stream(in, version, SPDY_FLAG_FIN, 3, 0, 0, junk, sizeof(junk));
}

static void build_bomb(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/");
  uint8_t *zeros = calloc(1, 1 << 20);
  cr_assert_not_null(zeros);
  raw_buf block = {0};
  raw_deflate(d, zeros, 1 << 20, Z_SYNC_FLUSH, &block);
  free(zeros);
  raw_syn_stream(in, version, SPDY_FLAG_FIN, 3, 0, 0, block.data, block.len);
  raw_buf_free(&block);
}

static void build_lying_settings(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/");
  raw_control_header(in, version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 12);
  raw_put_u32(in, 2);
  raw_settings_entry(in, version, 4, 0, 1);
}

static void build_ping_flood(raw_buf *in, raw_deflater *d, unsigned version) {
  (void)d;
  for (uint32_t i = 0; i < 1100; i++) raw_ping(in, version, 2 * i + 1);
}

static void build_big_unknown_then_get(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_control_header(in, version, 0x77, 0, 100000);
  raw_put_fill(in, 0x80, 100000);
  raw_get(in, d, version, SPDY_FLAG_FIN, 1, "/");
}

static void build_window_abuse(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, 0, 1, "/");
  raw_get(in, d, version, 0, 3, "/");
  if (version >= 3) {
    raw_window_update(in, version, 1, 0x7fffffffu);
    raw_data(in, 3, 0, NULL, 65537);
  }
  raw_get(in, d, version, SPDY_FLAG_FIN, 5, "/");
}

Test(hostile_chunking, byte_at_a_time_matches_one_buffer_for_hostile_inputs) {
  const struct {
    input_builder build;
    const char *what;
  } inputs[] = {
      {build_bad_block_then_get, "bad header block, then a GET"},
      {build_reused_and_unknown_ids, "reused and unknown stream ids"},
      {build_other_version, "a frame of another version"},
      {build_corrupt_zlib, "corrupt zlib data"},
      {build_bomb, "a zlib bomb"},
      {build_lying_settings, "SETTINGS with a lying count"},
      {build_ping_flood, "a PING flood"},
      {build_big_unknown_then_get, "a large unknown frame, then a GET"},
      {build_window_abuse, "window overflow and excess DATA"},
  };
  for (size_t v = 0; v < N_VERSIONS; v++)
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
      expect_chunking_does_not_matter(all_versions[v], SPEEDY_ROLE_SERVER, inputs[i].build,
                                      inputs[i].what);
}

/* Enough DATA to make the receiver return window: 3 frames of 30,000 bytes. */
static void build_large_upload(raw_buf *in, raw_deflater *d, unsigned version) {
  raw_get(in, d, version, 0, 1, "/upload");
  raw_data(in, 1, 0, NULL, 30000);
  raw_data(in, 1, 0, NULL, 30000);
  raw_data(in, 1, SPDY_FLAG_FIN, NULL, 30000);
}

Test(hostile_chunking, byte_at_a_time_sends_the_same_window_updates) {
  for (size_t v = 1; v < N_VERSIONS; v++)
    expect_chunking_does_not_matter(all_versions[v], SPEEDY_ROLE_SERVER, build_large_upload,
                                    "90,000-byte upload");
}

/* ---- allocation failures ------------------------------------------------------------------ */

Test(hostile_alloc, session_creation_survives_every_allocation_failure) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (int role = 0; role <= 1; role++) {
      speedy_options *options = raw_options_new();
      speedy_options_set_stream_window(options, 1 << 20); /* adds initial frames to queue */
      speedy_options_set_session_window(options, 1 << 22);
      int created = 0;
      for (size_t n = 1; n < 500 && !created; n++) {
        test_alloc_fail_after(n);
        speedy_session *session = NULL;
        int rv =
            speedy_session_new(&session, all_versions[v], (speedy_role)role, NULL, options, NULL);
        test_alloc_fail_after(0);
        if (rv == 0) {
          created = 1;
          speedy_session_del(session);
        } else {
          cr_assert_eq(rv, SPEEDY_ERR_NOMEM, "allocation %zu failing: %s", n, speedy_strerror(rv));
          cr_assert_null(session, "a failed speedy_session_new set *out");
        }
        cr_assert_eq(test_alloc_live(), 0, "allocation %zu failing: %zu blocks leaked", n,
                     test_alloc_live());
      }
      cr_assert(created, "speedy_session_new never succeeded");
      speedy_options_del(options);
    }
  }
}

/* Responds with a 3,000-byte body, tolerating an allocator that says no. */
static void respond_tolerant(test_peer *peer, int32_t stream_id) {
  speedy_header headers[] = {{":status", 7, "200 OK", 6}, {":version", 8, "HTTP/1.1", 8}};
  test_body *body = test_peer_body(peer, NULL, 3000);
  int rv = speedy_submit_response(peer->session, stream_id, headers, 2, test_body_read, body);
  if (rv != 0) test_log_add(peer, "respond %d failed %d", stream_id, rv);
}

/* Checks that bytes a session produced are whole frames of its version. */
static void expect_well_formed(const uint8_t *bytes, size_t len, unsigned version,
                               const char *what) {
  size_t pos = 0;
  while (pos < len) {
    cr_assert_geq(len - pos, 8, "%s: output ends inside a frame header", what);
    spdy_frame_hd hd;
    spdy_frame_hd_decode(bytes + pos, &hd);
    if (hd.is_control)
      cr_assert_eq(hd.version, version, "%s: control frame of version %u at offset %zu", what,
                   (unsigned)hd.version, pos);
    pos += 8;
    cr_assert_geq(len - pos, hd.length, "%s: output ends inside a frame", what);
    pos += hd.length;
  }
}

/* Moves output between two peers; every chunk must be well formed. Returns the first
 * error of either side, or 0 when both are quiet. */
static int64_t pump_checked(test_peer *a, test_peer *b, unsigned version, const char *what) {
  for (int round = 0; round < 1000; round++) {
    int moved = 0;
    test_peer *ends[2][2] = {{a, b}, {b, a}};
    for (int e = 0; e < 2; e++) {
      size_t len;
      uint8_t *bytes = test_drain(ends[e][0], &len);
      expect_well_formed(bytes, len, version, what);
      int64_t rv = len > 0 ? test_feed(ends[e][1], bytes, len, len) : 0;
      free(bytes);
      if (rv < 0) return rv;
      moved |= len > 0;
    }
    if (!moved) return 0;
  }
  cr_assert_fail("%s: the exchange did not settle", what);
  return 0;
}

/* One request/response exchange (a POST with a body, a response with one) with the n-th
 * allocation from now, and every later one, failing (n = 0: none fails). Every error must
 * be SPEEDY_ERR_NOMEM, every byte sent well formed, and nothing may leak. Returns the number
 * of allocations the exchange made. */
static size_t exchange_with_failure(speedy_protocol protocol, size_t n) {
  unsigned version = protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
  test_peer *client = test_peer_new(protocol, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(protocol, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = respond_tolerant;
  char what[64];
  snprintf(what, sizeof(what), "%s, allocation %zu failing", speedy_protocol_name(protocol), n);
  size_t allocs_before = test_alloc_get()->total_allocs;
  test_alloc_fail_after(n);
  speedy_header headers[] = {{":method", 7, "POST", 4},
                             {":path", 5, "/", 1},
                             {":version", 8, "HTTP/1.1", 8},
                             {":host", 5, "example.test", 12},
                             {":scheme", 7, "https", 5}};
  test_body *body = test_peer_body(client, NULL, 2000);
  int32_t id = speedy_submit_request(client->session, 3, headers, 5, test_body_read, body, NULL);
  int64_t rv = id < 0 ? id : pump_checked(client, server, version, what);
  test_alloc_fail_after(0);
  size_t allocs = test_alloc_get()->total_allocs - allocs_before;
  if (rv < 0)
    cr_assert_eq(rv, SPEEDY_ERR_NOMEM, "%s: error %lld (%s), expected SPEEDY_ERR_NOMEM", what,
                 (long long)rv, speedy_strerror((int)rv));
  if (n == 0) {
    test_stream_rx *rx = test_rx(client, 1);
    cr_assert(rv == 0 && rx->closed && rx->len == 3000, "%s: the exchange failed:\n%s", what,
              client->log);
  }
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "%s: %zu blocks leaked", what, test_alloc_live());
  return allocs;
}

Test(hostile_alloc, request_exchange_survives_every_allocation_failure) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    size_t needed = exchange_with_failure(all_versions[v], 0);
    cr_assert_lt(needed, 1000, "%zu allocations for one exchange", needed);
    for (size_t n = 1; n <= needed; n++) exchange_with_failure(all_versions[v], n);
  }
}

/* The varied client input fed to a server whose n-th allocation fails (n = 0: none).
 * Returns the number of allocations the run made. */
static size_t raw_input_with_failure(speedy_protocol protocol, size_t n) {
  raw_rig rig;
  raw_rig_open(&rig, protocol, SPEEDY_ROLE_SERVER, NULL);
  rig.peer->on_request = respond_tolerant;
  build_varied_client(&rig.in, &rig.deflater, rig.version);
  size_t len = rig.in.len;
  char what[64];
  snprintf(what, sizeof(what), "%s, allocation %zu failing", rig.name, n);
  size_t allocs_before = test_alloc_get()->total_allocs;
  test_alloc_fail_after(n);
  int64_t rv = raw_rig_feed(&rig, 100);
  size_t out_len;
  uint8_t *out = test_drain(rig.peer, &out_len);
  test_alloc_fail_after(0);
  size_t allocs = test_alloc_get()->total_allocs - allocs_before;
  expect_well_formed(out, out_len, rig.version, what);
  free(out);
  if (rv < 0)
    cr_assert_eq(rv, SPEEDY_ERR_NOMEM, "%s: recv returned %lld (%s)", what, (long long)rv,
                 speedy_strerror((int)rv));
  else
    cr_assert_eq(rv, (int64_t)len, "%s", what);
  if (n == 0) cr_assert(test_log_has(rig.peer, "end 7 fin=1"), "%s log:\n%s", what, rig.peer->log);
  raw_rig_close(&rig);
  return allocs;
}

Test(hostile_alloc, raw_input_survives_every_allocation_failure) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    size_t needed = raw_input_with_failure(all_versions[v], 0);
    cr_assert_lt(needed, 1000, "%zu allocations for the varied input", needed);
    for (size_t n = 1; n <= needed; n++) raw_input_with_failure(all_versions[v], n);
  }
}

/* A response whose header block needs the output buffer to grow while it is compressed:
 * incompressible values of 6,000 bytes. */
static size_t large_response_with_failure(speedy_protocol protocol, size_t n) {
  raw_rig rig;
  raw_rig_open(&rig, protocol, SPEEDY_ROLE_SERVER, NULL);
  raw_rig_discard_output(&rig);
  put_get(&rig, 1, SPDY_FLAG_FIN);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  char *noise = malloc(6000);
  cr_assert_not_null(noise);
  uint32_t x = 12345;
  for (size_t i = 0; i < 6000; i++) {
    x = x * 1103515245u + 12345u;
    noise[i] = (char)('!' + (x >> 16) % 90);
  }
  speedy_header headers[] = {
      {":status", 7, "200 OK", 6}, {":version", 8, "HTTP/1.1", 8}, {"x-noise", 7, noise, 6000}};
  cr_assert_eq(speedy_submit_response(rig.peer->session, 1, headers, 3, NULL, NULL), 0);
  free(noise);
  char what[64];
  snprintf(what, sizeof(what), "%s, allocation %zu failing", rig.name, n);
  size_t allocs_before = test_alloc_get()->total_allocs;
  test_alloc_fail_after(n);
  size_t out_len;
  uint8_t *out = test_drain(rig.peer, &out_len);
  test_alloc_fail_after(0);
  size_t allocs = test_alloc_get()->total_allocs - allocs_before;
  expect_well_formed(out, out_len, rig.version, what);
  if (n == 0) {
    raw_frame frames[4];
    size_t count = raw_parse(out, out_len, frames, 4);
    cr_assert(count == 1 && frames[0].hd.type == SPEEDY_SPDY_FRAME_SYN_REPLY, "%s", what);
  }
  free(out);
  raw_rig_close(&rig);
  return allocs;
}

Test(hostile_alloc, failed_header_compression_sends_no_partial_frame) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    size_t needed = large_response_with_failure(all_versions[v], 0);
    cr_assert_gt(needed, 0, "the large block must make the output buffer grow");
    for (size_t n = 1; n <= needed; n++) large_response_with_failure(all_versions[v], n);
  }
}
