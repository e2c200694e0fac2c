/* test_hostile_session.c — a session fed hand-built hostile bytes: truncated frames, lying
 * lengths, bad versions, unknown types, bad stream ids, misplaced DATA, window overflow.
 * Each case checks the protocol's answer (the RST_STREAM or GOAWAY the session sends,
 * decoded from its output), the value speedy_session_recv returns as spdy.h documents it,
 * and that nothing leaks.
 *
 * More in test_hostile_session2.c (floods, SETTINGS quirks, CREDENTIAL, callbacks,
 * byte-at-a-time equivalence, allocation failures) and test_hostile_session3.c (zlib,
 * header fields).
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

/* ---- helpers ------------------------------------------------------------------------- */

/* Appends a GET with FIN on stream_id. */
static void put_get(raw_rig *rig, uint32_t stream_id) {
  raw_get(&rig->in, &rig->deflater, rig->version, SPDY_FLAG_FIN, stream_id, "/");
}

/* ---- truncated frames ------------------------------------------------------------------ */

/* A client's varied, valid byte stream: requests, a body, SETTINGS, PING, WINDOW_UPDATE. */
static void build_valid_client_stream(raw_rig *rig) {
  speedy_setting settings[] = {{SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 50},
                               {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 100000}};
  raw_settings(&rig->in, rig->version, 0, settings, 2);
  raw_get(&rig->in, &rig->deflater, rig->version, 0, 1, "/upload");
  raw_data(&rig->in, 1, 0, NULL, 100);
  raw_ping(&rig->in, rig->version, 1);
  raw_data(&rig->in, 1, SPDY_FLAG_FIN, NULL, 37);
  put_get(rig, 3);
  if (rig->version >= 3) raw_window_update(&rig->in, rig->version, 3, 1000);
  raw_rst_stream(&rig->in, rig->version, 3, SPEEDY_RST_CANCEL);
}

Test(hostile_truncation, every_cut_of_a_valid_stream_waits_for_more) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    /* The reference: everything in one buffer. */
    raw_rig ref;
    raw_rig_open(&ref, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    build_valid_client_stream(&ref);
    raw_buf whole = {0};
    raw_put(&whole, ref.in.data, ref.in.len);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&ref, &fed), (int64_t)fed, "%s: the valid stream failed",
                 ref.name);
    char *want_log = raw_coalesced_log(ref.peer);
    size_t want_len;
    uint8_t *want_out = test_drain(ref.peer, &want_len);
    cr_assert(test_log_has(ref.peer, "dataend 1 len=137"), "%s log:\n%s", ref.name, ref.peer->log);
    raw_rig_close(&ref);

    for (size_t cut = 0; cut <= whole.len; cut++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      int64_t rv = speedy_session_recv(rig.peer->session, whole.data, cut);
      cr_assert_eq(rv, (int64_t)cut, "%s: cut at %zu: recv returned %lld", rig.name, cut,
                   (long long)rv);
      cr_assert(speedy_session_want_read(rig.peer->session), "%s: cut at %zu: stopped reading",
                rig.name, cut);
      rv = speedy_session_recv(rig.peer->session, whole.data + cut, whole.len - cut);
      cr_assert_eq(rv, (int64_t)(whole.len - cut), "%s: rest after cut %zu: %lld", rig.name, cut,
                   (long long)rv);
      char *log = raw_coalesced_log(rig.peer);
      cr_assert_str_eq(log, want_log, "%s: cut at %zu changed the events", rig.name, cut);
      free(log);
      size_t out_len;
      uint8_t *out = test_drain(rig.peer, &out_len);
      cr_assert(out_len == want_len && memcmp(out, want_out, out_len) == 0,
                "%s: cut at %zu changed the output", rig.name, cut);
      free(out);
      raw_rig_close(&rig);
    }
    free(want_log);
    free(want_out);
    raw_buf_free(&whole);
  }
}

Test(hostile_truncation, a_lone_partial_frame_produces_nothing) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    put_get(&rig, 1);
    size_t fed = rig.in.len - 1; /* all but the last byte of the SYN_STREAM */
    int64_t rv = speedy_session_recv(rig.peer->session, rig.in.data, fed);
    cr_assert_eq(rv, (int64_t)fed);
    cr_assert(rig.peer->log == NULL, "%s: events from an incomplete frame:\n%s", rig.name,
              rig.peer->log);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0, "%s: output for an incomplete frame", rig.name);
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

/* ---- lying lengths --------------------------------------------------------------------- */

Test(hostile_length, control_length_beyond_the_payload_waits_then_is_judged_whole) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    /* SETTINGS claiming 1,000 bytes, carrying a count of 1 and one entry. */
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 1000);
    raw_put_u32(&rig.in, 1);
    raw_settings_entry(&rig.in, rig.version, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 7);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: a long frame must wait, not fail", rig.name);
    cr_assert(rig.peer->log == NULL, "%s: the setting applied early:\n%s", rig.name, rig.peer->log);
    cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), -1);
    size_t len;
    uint8_t *out = test_drain(rig.peer, &len);
    cr_assert_eq(len, 0, "%s: output while waiting", rig.name);
    free(out);
    /* The rest arrives: 1,000 bytes hold no count of 1, so the frame is malformed. */
    raw_put_fill(&rig.in, 0, 1000 - 12);
    rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SETTINGS count vs a longer length");
    raw_rig_close(&rig);
  }
}

/* One control frame whose length is not what its type needs. */
typedef struct bad_length {
  unsigned type;
  uint32_t length;
  const char *what;
} bad_length;

Test(hostile_length, control_length_outside_the_fixed_size_is_protocol_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    unsigned version = all_versions[v] == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
    const bad_length cases[] = {
        {SPEEDY_SPDY_FRAME_SYN_STREAM, 9, "SYN_STREAM shorter than its fixed part"},
        {SPEEDY_SPDY_FRAME_SYN_STREAM, 0, "empty SYN_STREAM"},
        {SPEEDY_SPDY_FRAME_SYN_REPLY, version == 2 ? 5 : 3,
         "SYN_REPLY shorter than its fixed part"},
        {SPEEDY_SPDY_FRAME_HEADERS, version == 2 ? 5 : 3, "HEADERS shorter than its fixed part"},
        {SPEEDY_SPDY_FRAME_RST_STREAM, 7, "RST_STREAM of 7 bytes"},
        {SPEEDY_SPDY_FRAME_RST_STREAM, 12, "RST_STREAM of 12 bytes"},
        {SPEEDY_SPDY_FRAME_SETTINGS, 3, "SETTINGS shorter than its count"},
        {SPEEDY_SPDY_FRAME_SETTINGS, 0, "empty SETTINGS"},
        {SPEEDY_SPDY_FRAME_PING, 3, "PING of 3 bytes"},
        {SPEEDY_SPDY_FRAME_PING, 8, "PING of 8 bytes"},
        {SPEEDY_SPDY_FRAME_GOAWAY, version == 2 ? 3 : 7, "GOAWAY too short"},
        {SPEEDY_SPDY_FRAME_GOAWAY, version == 2 ? 6 : 12, "GOAWAY too long"},
        {SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 7, "WINDOW_UPDATE of 7 bytes"},
        {SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 9, "WINDOW_UPDATE of 9 bytes"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
      if (cases[i].type == SPEEDY_SPDY_FRAME_WINDOW_UPDATE && version == 2)
        continue; /* unknown in v2 */
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      /* A stream first, so the GOAWAY must name it as last-good. */
      put_get(&rig, 1);
      raw_control_header(&rig.in, version, cases[i].type, 0, cases[i].length);
      raw_put_fill(&rig.in, 0, cases[i].length);
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                               cases[i].what);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_length, settings_count_disagreeing_with_length_is_protocol_error) {
  const uint32_t counts[] = {2, 0, 0x20000001u /* 8 * count wraps to 8 in 32 bits */, 0xffffffffu};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t i = 0; i <= sizeof(counts) / sizeof(counts[0]); i++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      if (i < sizeof(counts) / sizeof(counts[0])) {
        raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 12);
        raw_put_u32(&rig.in, counts[i]);
        raw_settings_entry(&rig.in, rig.version, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 7);
      } else {
        /* A length that is no whole number of entries. */
        raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 4 + 8 + 3);
        raw_put_u32(&rig.in, 1);
        raw_settings_entry(&rig.in, rig.version, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 7);
        raw_put_fill(&rig.in, 0, 3);
      }
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                               "SETTINGS count disagreeing with length");
      cr_assert_eq(speedy_session_remote_setting(rig.peer->session, 4), -1,
                   "%s: a malformed SETTINGS frame was applied", rig.name);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_length, nv_count_lying_resets_the_stream_and_the_session_continues) {
  const uint32_t lies[] = {7, 100, 0, 0xffff, 0xffffffffu};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_header fields[6];
      size_t n = raw_request_headers(rig.version, "/", fields);
      raw_buf plain = {0};
      raw_nv_block(&plain, rig.version, fields, n);
      /* Overwrite the count (v2: 16 bits; v3: 32 bits). */
      raw_buf count = {0};
      raw_nv_length(&count, rig.version, lies[i]);
      memcpy(plain.data, count.data, count.len);
      char what[64];
      snprintf(what, sizeof(what), "NV count %u for 6 fields", lies[i]);
      raw_expect_block_resets_stream(&rig, &plain, what);
      raw_buf_free(&count);
      raw_buf_free(&plain);
      raw_rig_close(&rig);
    }
  }
}

/* A block with the request fields, then one more field whose name or value length is
 * length while only `actual` bytes follow. */
static void build_block_with_lying_field(unsigned version, int lie_in_value, uint32_t length,
                                         size_t actual, raw_buf *plain) {
  raw_header fields[6];
  size_t n = raw_request_headers(version, "/", fields);
  raw_nv_length(plain, version, (uint32_t)n + 1);
  for (size_t i = 0; i < n; i++) {
    raw_nv_string(plain, version, fields[i].name, strlen(fields[i].name));
    raw_nv_string(plain, version, fields[i].value, strlen(fields[i].value));
  }
  if (lie_in_value) raw_nv_string(plain, version, "x-lie", 5);
  raw_nv_length(plain, version, length);
  raw_put_fill(plain, 'a', actual);
}

Test(hostile_length, nv_name_length_past_the_end_resets_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    unsigned version = all_versions[v] == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
    const uint32_t lengths[] = {11, 1000, version == 2 ? 0xffffu : 0xffffffffu,
                                version == 2 ? 0x8000u : 0x80000000u};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_buf plain = {0};
      build_block_with_lying_field(version, 0, lengths[i], 10, &plain);
      char what[64];
      snprintf(what, sizeof(what), "NV name length %u with 10 bytes left", lengths[i]);
      raw_expect_block_resets_stream(&rig, &plain, what);
      raw_buf_free(&plain);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_length, nv_value_length_past_the_end_resets_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    unsigned version = all_versions[v] == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
    const uint32_t lengths[] = {11, 1000, version == 2 ? 0xffffu : 0xffffffffu,
                                version == 2 ? 0xfffeu : 0xfffffffcu};
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_buf plain = {0};
      build_block_with_lying_field(version, 1, lengths[i], 10, &plain);
      char what[64];
      snprintf(what, sizeof(what), "NV value length %u with 10 bytes left", lengths[i]);
      raw_expect_block_resets_stream(&rig, &plain, what);
      raw_buf_free(&plain);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_length, nv_block_cut_inside_a_length_field_resets_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_buf plain = {0};
    raw_nv_block(&plain, rig.version, fields, n);
    raw_nv_length(&plain, rig.version, 0); /* trailing bytes after the last field */
    plain.len -= 1;                        /* ... and cut inside them */
    raw_expect_block_resets_stream(&rig, &plain, "NV block with a partial trailing length");
    raw_buf_free(&plain);
    raw_rig_close(&rig);
  }
}

/* ---- versions -------------------------------------------------------------------------- */

Test(hostile_version, control_frame_of_the_other_version_is_unsupported_version) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1);
    unsigned other = rig.version == 2 ? 3 : 2;
    raw_deflater other_deflater;
    raw_deflater_init_version(&other_deflater, other);
    raw_get(&rig.in, &other_deflater, other, SPDY_FLAG_FIN, 3, "/other");
    raw_deflater_free(&other_deflater);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_UNSUPPORTED_VERSION, 1,
                             SPDY_GOAWAY_PROTOCOL_ERROR, "SYN_STREAM of the other version");
    cr_assert(!test_log_has(rig.peer, "begin 3 request"));
    raw_rig_close(&rig);
  }
}

Test(hostile_version, versions_0_1_4_and_32767_are_unsupported) {
  const unsigned bad[] = {0, 1, 4, 0x7fff};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_ping(&rig.in, bad[i], 1); /* even a frame without a header block */
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      char what[48];
      snprintf(what, sizeof(what), "PING of version %u", bad[i]);
      raw_expect_session_error(&rig, rv, SPEEDY_ERR_UNSUPPORTED_VERSION, 0,
                               SPDY_GOAWAY_PROTOCOL_ERROR, what);
      raw_rig_close(&rig);
    }
  }
}

/* ---- unknown control frames ------------------------------------------------------------ */

Test(hostile_unknown, unknown_control_types_are_ignored) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    const unsigned types[] = {0, 11, 12, 100, 0xffff};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
      raw_control_header(&rig.in, rig.version, types[i], 0xff, 20);
      raw_put_fill(&rig.in, 0xee, 20);
    }
    /* Types of other versions are unknown here: NOOP past v2, WINDOW_UPDATE in v2,
     * CREDENTIAL outside v3. Malformed on purpose: their payload must not be read. */
    unsigned foreign[2];
    size_t n_foreign = 0;
    if (rig.version >= 3) foreign[n_foreign++] = SPEEDY_SPDY_FRAME_NOOP;
    if (rig.version == 2) foreign[n_foreign++] = SPEEDY_SPDY_FRAME_WINDOW_UPDATE;
    if (rig.protocol != SPEEDY_PROTOCOL_SPDY3) foreign[n_foreign++] = SPEEDY_SPDY_FRAME_CREDENTIAL;
    for (size_t i = 0; i < n_foreign; i++) {
      raw_control_header(&rig.in, rig.version, foreign[i], 0, 3);
      raw_put_fill(&rig.in, 1, 3);
    }
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: unknown frames: %lld", rig.name, (long long)rv);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0, "%s: unknown frames were answered", rig.name);
    raw_output_free(&out);
    cr_assert(rig.peer->log == NULL, "%s: events for unknown frames:\n%s", rig.name, rig.peer->log);
    raw_expect_session_works(&rig, 1, "after unknown frames");
    raw_rig_close(&rig);
  }
}

Test(hostile_unknown, noop_is_accepted_in_v2) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY2, SPEEDY_ROLE_SERVER, NULL);
  raw_control_header(&rig.in, 2, SPEEDY_SPDY_FRAME_NOOP, 0, 0);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  raw_expect_session_works(&rig, 1, "after NOOP");
  raw_rig_close(&rig);
}

Test(hostile_unknown, huge_unknown_frame_is_skipped_not_buffered) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rig_discard_output(&rig);
    size_t idle = speedy_session_memory(rig.peer->session);
    /* 16 MiB - 1, far over max_recv_control_frame (66,560 by default). */
    raw_control_header(&rig.in, rig.version, 0x4242, 0, 0xffffff);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    uint8_t chunk[65536];
    memset(chunk, 0x80, sizeof(chunk)); /* looks like control frame headers: must be skipped */
    size_t left = 0xffffff;
    size_t peak = 0;
    while (left > 0) {
      size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
      int64_t rv = speedy_session_recv(rig.peer->session, chunk, n);
      cr_assert_eq(rv, (int64_t)n, "%s: while skipping: %lld", rig.name, (long long)rv);
      size_t now = speedy_session_memory(rig.peer->session);
      if (now > peak) peak = now;
      left -= n;
    }
    cr_assert_leq(peak, idle + 1024, "%s: skipping grew the session from %zu to %zu bytes",
                  rig.name, idle, peak);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0);
    raw_output_free(&out);
    raw_expect_session_works(&rig, 1, "after a 16 MiB unknown frame");
    raw_rig_close(&rig);
  }
}

/* ---- stream ids ------------------------------------------------------------------------ */

Test(hostile_ids, syn_stream_with_stream_id_0_is_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 0);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM on stream 0");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, data_on_stream_0_is_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1);
    raw_data(&rig.in, 0, 0, NULL, 10);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "DATA on stream 0");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, rst_stream_on_stream_0_is_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_rst_stream(&rig.in, rig.version, 0, SPEEDY_RST_CANCEL);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "RST_STREAM on stream 0");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, syn_stream_reusing_an_open_id_is_stream_in_use) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1); /* stays open: the server has not answered */
    put_get(&rig, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    uint32_t status = rig.version >= 3 ? SPEEDY_RST_STREAM_IN_USE : SPEEDY_RST_PROTOCOL_ERROR;
    raw_expect_stream_error(&rig, rv, fed, 1, status, "second SYN_STREAM on open stream 1");
    raw_expect_session_works(&rig, 3, "after a reused open id");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, syn_stream_reusing_a_closed_id_is_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    rig.peer->on_request = test_respond_default;
    rig.peer->response_size = 0;
    put_get(&rig, 1);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    raw_rig_discard_output(&rig); /* the reply goes out and stream 1 closes */
    cr_assert(test_log_has(rig.peer, "close 1 NONE"), "%s log:\n%s", rig.name, rig.peer->log);
    put_get(&rig, 1);
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM reusing closed stream 1");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, decreasing_syn_stream_ids_are_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 5);
    put_get(&rig, 3);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 5, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM 3 after 5");
    cr_assert(!test_log_has(rig.peer, "begin 3 request"));
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, server_refuses_even_syn_stream_from_client) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1);
    put_get(&rig, 2);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "client-opened stream with an even id");
    raw_rig_close(&rig);
  }
}

/* A pushed stream's SYN_STREAM from the server (version-appropriate headers). */
static void put_push(raw_rig *rig, uint32_t stream_id, uint32_t associated_id) {
  raw_header fields[5];
  size_t n = 0;
  if (rig->version == 2) {
    fields[n++] = (raw_header){"url", "https://example.test/pushed.css", 0};
    fields[n++] = (raw_header){"status", "200 OK", 0};
    fields[n++] = (raw_header){"version", "HTTP/1.1", 0};
  } else {
    fields[n++] = (raw_header){":scheme", "https", 0};
    fields[n++] = (raw_header){":host", "example.test", 0};
    fields[n++] = (raw_header){":path", "/pushed.css", 0};
  }
  raw_syn_stream_nv(&rig->in, &rig->deflater, rig->version, SPDY_FLAG_UNIDIRECTIONAL, stream_id,
                    associated_id, 0, fields, n);
}

Test(hostile_ids, client_refuses_odd_push_from_server) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open_client_with_get(&rig, all_versions[v]);
    put_push(&rig, 2, 1); /* a valid push first: the last-good id becomes 2 */
    put_push(&rig, 3, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 2, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "server-opened stream with an odd id");
    cr_assert(test_log_has(rig.peer, "begin 2 push assoc=1"), "%s log:\n%s", rig.name,
              rig.peer->log);
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, push_without_associated_stream_is_session_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open_client_with_get(&rig, all_versions[v]);
    put_push(&rig, 2, 0);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_PROTOCOL, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "push with associated id 0");
    raw_rig_close(&rig);
  }
}

Test(hostile_ids, push_for_an_unknown_stream_is_invalid_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open_client_with_get(&rig, all_versions[v]);
    put_push(&rig, 2, 7);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 2, SPEEDY_RST_INVALID_STREAM, "push for stream 7");
    put_push(&rig, 4, 1); /* the zlib context is still in step: a good push works */
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    cr_assert(test_log_has(rig.peer, "begin 4 push assoc=1"), "%s log:\n%s", rig.name,
              rig.peer->log);
    raw_rig_close(&rig);
  }
}

/* ---- DATA in the wrong place ----------------------------------------------------------- */

Test(hostile_data, data_on_a_never_used_stream_is_invalid_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1);
    raw_data(&rig.in, 5, 0, NULL, 10); /* the client's parity, never opened */
    raw_data(&rig.in, 2, 0, NULL, 10); /* the server's parity, never opened */
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed);
    raw_output out;
    raw_output_take(&out, rig.peer);
    raw_expect_rst(&out, 5, SPEEDY_RST_INVALID_STREAM, "DATA on unused stream 5");
    raw_expect_rst(&out, 2, SPEEDY_RST_INVALID_STREAM, "DATA on unused stream 2");
    raw_expect_no_goaway(&out, "DATA on unused streams");
    raw_output_free(&out);
    cr_assert(!test_log_has(rig.peer, "data 5 10") && !test_log_has(rig.peer, "data 2 10"));
    raw_expect_session_works(&rig, 7, "after DATA on unused streams");
    raw_rig_close(&rig);
  }
}

Test(hostile_data, data_on_a_recently_closed_stream_is_ignored) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    rig.peer->on_request = test_respond_default;
    put_get(&rig, 1);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    raw_rig_discard_output(&rig);
    cr_assert(test_log_has(rig.peer, "close 1 NONE"), "%s log:\n%s", rig.name, rig.peer->log);
    raw_data(&rig.in, 1, SPDY_FLAG_FIN, NULL, 50);
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: %lld", rig.name, (long long)rv);
    raw_output out;
    raw_output_take(&out, rig.peer);
    cr_assert_eq(out.n, 0, "%s: DATA on a closed stream was answered", rig.name);
    raw_output_free(&out);
    cr_assert(!test_log_has(rig.peer, "data 1 50"));
    raw_rig_close(&rig);
  }
}

Test(hostile_data, data_after_fin_is_stream_already_closed) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (int fin_on_data = 0; fin_on_data <= 1; fin_on_data++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      if (fin_on_data) {
        raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/");
        raw_data(&rig.in, 1, SPDY_FLAG_FIN, NULL, 5);
      } else {
        put_get(&rig, 1);
      }
      raw_data(&rig.in, 1, 0, NULL, 7); /* the stream stays open: the server has not answered */
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      uint32_t status =
          rig.version >= 3 ? SPEEDY_RST_STREAM_ALREADY_CLOSED : SPEEDY_RST_PROTOCOL_ERROR;
      raw_expect_stream_error(&rig, rv, fed, 1, status,
                              fin_on_data ? "DATA after DATA with FIN" : "DATA after SYN with FIN");
      cr_assert(!test_log_has(rig.peer, "data 1 7"), "%s: DATA after FIN delivered", rig.name);
      cr_assert(test_log_has(rig.peer, "close 1 STREAM_ALREADY_CLOSED") ||
                    test_log_has(rig.peer, "close 1 PROTOCOL_ERROR"),
                "%s log:\n%s", rig.name, rig.peer->log);
      raw_expect_session_works(&rig, 3, "after DATA past FIN");
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_data, data_before_syn_reply_on_the_client_is_protocol_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open_client_with_get(&rig, all_versions[v]);
    raw_data(&rig.in, 1, 0, NULL, 10);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_PROTOCOL_ERROR, "DATA before SYN_REPLY");
    cr_assert(test_log_has(rig.peer, "close 1 PROTOCOL_ERROR"), "%s log:\n%s", rig.name,
              rig.peer->log);
    cr_assert(!test_log_has(rig.peer, "data 1 10"));
    raw_rig_close(&rig);
  }
}

Test(hostile_data, second_syn_reply_is_stream_in_use) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open_client_with_get(&rig, all_versions[v]);
    raw_header fields[2];
    size_t n = raw_response_headers(rig.version, fields);
    raw_syn_reply_nv(&rig.in, &rig.deflater, rig.version, 0, 1, fields, n);
    raw_syn_reply_nv(&rig.in, &rig.deflater, rig.version, 0, 1, fields, n);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    uint32_t status = rig.version >= 3 ? SPEEDY_RST_STREAM_IN_USE : SPEEDY_RST_PROTOCOL_ERROR;
    raw_expect_stream_error(&rig, rv, fed, 1, status, "second SYN_REPLY");
    raw_rig_close(&rig);
  }
}

/* A reply for our stream still waiting for a concurrency slot (the server cannot know it)
 * is dropped: the stream stays waiting, the counts stay right, and it goes out once the
 * server allows it. */
Test(hostile_data, a_reply_to_a_stream_not_yet_sent_is_dropped) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_CLIENT, NULL);
    size_t fed;
    speedy_setting none = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 0};
    raw_settings(&rig.in, rig.version, 0, &none, 1);
    cr_assert_geq(raw_rig_feed_all(&rig, &fed), 0);
    int32_t id = test_get(rig.peer, "/a", 3);
    cr_assert_eq(speedy_session_pending_streams(rig.peer->session), 1, "%s", rig.name);
    size_t len;
    free(test_drain(rig.peer, &len));
    raw_header fields[2];
    size_t n = raw_response_headers(rig.version, fields);
    raw_syn_reply_nv(&rig.in, &rig.deflater, rig.version, SPDY_FLAG_FIN, (uint32_t)id, fields, n);
    cr_assert_geq(raw_rig_feed_all(&rig, &fed), 0);
    cr_assert(!test_log_has(rig.peer, "begin 1 response"), "%s log:\n%s", rig.name, rig.peer->log);
    cr_assert_eq(speedy_session_pending_streams(rig.peer->session), 1, "%s", rig.name);
    speedy_setting some = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 100};
    raw_settings(&rig.in, rig.version, 0, &some, 1);
    cr_assert_geq(raw_rig_feed_all(&rig, &fed), 0);
    uint8_t *out = test_drain(rig.peer, &len);
    raw_frame frames[8];
    size_t count = raw_parse(out, len, frames, 8), syn = 0;
    for (size_t i = 0; i < count && i < 8; i++)
      syn += frames[i].hd.is_control && frames[i].hd.type == SPEEDY_SPDY_FRAME_SYN_STREAM;
    free(out);
    cr_assert_eq(syn, 1, "%s: the waiting request went out", rig.name);
    cr_assert_eq(speedy_session_pending_streams(rig.peer->session), 0, "%s", rig.name);
    raw_rig_close(&rig);
  }
}

/* ---- flow-control windows -------------------------------------------------------------- */

Test(hostile_window, stream_window_update_past_2_31_is_flow_control_error) {
  for (size_t v = 1; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/"); /* open: the window exists */
    raw_window_update(&rig.in, 3, 1, 0x7fffffffu - 65536);   /* exactly 2^31 - 1: fine */
    raw_window_update(&rig.in, 3, 1, 1);                     /* one past */
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_FLOW_CONTROL_ERROR,
                            "stream window above 2^31 - 1");
    raw_expect_session_works(&rig, 3, "after a stream window overflow");
    raw_rig_close(&rig);
  }
}

Test(hostile_window, session_window_update_past_2_31_is_session_error_in_v31) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  put_get(&rig, 1);
  raw_window_update(&rig.in, 3, 0, 0x7fffffffu - 65536);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed,
               "a session window of 2^31 - 1 is allowed");
  cr_assert_eq(speedy_session_send_window(rig.peer->session, 0), 0x7fffffff);
  raw_window_update(&rig.in, 3, 0, 1);
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                           "session window above 2^31 - 1");
  raw_rig_close(&rig);
}

Test(hostile_window, session_window_update_in_v3_is_ignored) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, NULL);
  raw_window_update(&rig.in, 3, 0, 0x7fffffffu);
  raw_window_update(&rig.in, 3, 0, 0x7fffffffu);
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  raw_expect_session_works(&rig, 1, "after WINDOW_UPDATE on stream 0 in v3");
  raw_rig_close(&rig);
}

Test(hostile_window, data_beyond_the_stream_window_is_flow_control_error) {
  for (size_t v = 1; v < N_VERSIONS; v++) {
    /* In 3.1 the session window is opened wide so the stream window is what overflows. */
    speedy_options *options = raw_options_new();
    speedy_options_set_session_window(options, 1 << 24);
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, options);
    speedy_options_del(options);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/");
    raw_data(&rig.in, 1, 0, NULL, 65537);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_FLOW_CONTROL_ERROR,
                            "65,537 bytes in a 65,536-byte stream window");
    cr_assert(!test_log_has(rig.peer, "data 1 65537"), "%s: the excess was delivered", rig.name);
    raw_expect_session_works(&rig, 3, "after a stream window violation");
    raw_rig_close(&rig);
  }
}

Test(hostile_window, data_exactly_filling_the_stream_window_is_accepted) {
  for (size_t v = 1; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/");
    raw_data(&rig.in, 1, SPDY_FLAG_FIN, NULL, 65536);
    size_t fed;
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    cr_assert(test_log_has(rig.peer, "dataend 1 len=65536"), "%s log:\n%s", rig.name,
              rig.peer->log);
    raw_output out;
    raw_output_take(&out, rig.peer);
    raw_expect_no_rst(&out, "DATA filling the window");
    raw_expect_no_goaway(&out, "DATA filling the window");
    raw_output_free(&out);
    raw_rig_close(&rig);
  }
}

Test(hostile_window, data_beyond_the_session_window_is_session_error_in_v31) {
  /* The stream window is opened wide so only the session window can be violated. */
  speedy_options *options = raw_options_new();
  speedy_options_set_stream_window(options, 1 << 24);
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, options);
  speedy_options_del(options);
  raw_get(&rig.in, &rig.deflater, 3, 0, 1, "/");
  raw_data(&rig.in, 1, 0, NULL, 65537);
  size_t fed;
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_session_error(&rig, rv, SPEEDY_ERR_FLOW_CONTROL, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                           "65,537 bytes in a 65,536-byte session window");
  raw_rig_close(&rig);
}

Test(hostile_window, data_on_dead_streams_counts_against_and_is_credited_to_the_session_window) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  raw_rig_discard_output(&rig);
  /* 200 KiB to a never-used stream: more than the session window, credited back as it
   * is dropped, so no violation — only INVALID_STREAM resets. */
  for (int i = 0; i < 50; i++) raw_data(&rig.in, 9, 0, NULL, 4096);
  size_t fed;
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  cr_assert_eq(rv, (int64_t)fed, "dead-stream DATA within the window: %lld (%s)", (long long)rv,
               rv < 0 ? speedy_strerror((int)rv) : "");
  raw_output out;
  raw_output_take(&out, rig.peer);
  raw_expect_rst(&out, 9, SPEEDY_RST_INVALID_STREAM, "DATA on unused stream 9");
  raw_expect_no_goaway(&out, "dead-stream DATA");
  size_t credited = 0;
  for (size_t i = 0; i < out.n; i++) {
    const raw_frame *f = &out.frames[i];
    if (!f->hd.is_control || f->hd.type != SPEEDY_SPDY_FRAME_WINDOW_UPDATE) continue;
    int32_t id;
    uint32_t delta;
    cr_assert_eq(spdy_frame_decode_window_update(f->payload, f->hd.length, &id, &delta), 0);
    cr_assert_eq(id, 0, "WINDOW_UPDATE for a dead stream %d", (int)id);
    credited += delta;
  }
  cr_assert_geq(credited, 50 * 4096 - 65536, "only %zu bytes credited back", credited);
  raw_output_free(&out);
  raw_rig_close(&rig);
}
