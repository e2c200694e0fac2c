/* test_hostile_session3.c — hostile input, third part: broken zlib data (garbage, corrupt
 * deflate blocks, missing sync flush, wrong dictionary), zlib bombs and oversized blocks,
 * and header fields that break the rules (duplicate, upper-case, empty or NUL names,
 * malformed values, missing required headers). Session errors are checked by the GOAWAY
 * sent and the value speedy_session_recv returns; stream errors by the RST_STREAM sent and a
 * request that still works afterwards (proof that the zlib contexts stayed in step).
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

/* Appends a GET with FIN on stream_id. */
static void put_get(raw_rig *rig, uint32_t stream_id) {
  raw_get(&rig->in, &rig->deflater, rig->version, SPDY_FLAG_FIN, stream_id, "/");
}

/* ---- zlib ------------------------------------------------------------------------------ */

/* A SYN_STREAM on stream 3 (after a good one on 1) carrying block as its compressed bytes;
 * expects the session error error. */
static void expect_block_is_session_error(raw_rig *rig, const raw_buf *block, int error,
                                          const char *what) {
  put_get(rig, 1);
  raw_syn_stream(&rig->in, rig->version, SPDY_FLAG_FIN, 3, 0, 3, block->data, block->len);
  size_t fed;
  int64_t rv = raw_rig_feed_all(rig, &fed);
  raw_expect_session_error(rig, rv, error, 1, SPDY_GOAWAY_PROTOCOL_ERROR, what);
  cr_assert(!test_log_has(rig->peer, "begin 3 request"), "%s: the block was delivered", what);
}

Test(hostile_zlib, garbage_block_is_compression_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_buf block = {0};
    for (int i = 0; i < 64; i++) raw_put_u8(&block, (uint8_t)(i * 37 + 11));
    expect_block_is_session_error(&rig, &block, SPEEDY_ERR_COMPRESSION, "garbage header block");
    raw_buf_free(&block);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, corrupted_deflate_data_is_compression_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    /* The second block of the context, compressed properly, then damaged in its middle:
     * a reserved block type (BTYPE 11) where the deflate data starts. */
    raw_deflater scratch;
    raw_deflater_init_version(&scratch, rig.version);
    raw_buf first = {0};
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_deflate_nv(&scratch, rig.version, fields, n, &first);
    /* Keep rig.deflater in step for stream 1, as expect_block_is_session_error sends it. */
    raw_buf block = {0};
    raw_deflate_nv(&scratch, rig.version, fields, n, &block);
    raw_deflater_free(&scratch);
    block.data[0] = 0xff; /* BFINAL=1, BTYPE=11: invalid */
    expect_block_is_session_error(&rig, &block, SPEEDY_ERR_COMPRESSION, "corrupted deflate block");
    raw_buf_free(&first);
    raw_buf_free(&block);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, block_without_a_sync_flush_is_compression_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    /* A fresh context's first block, cut in half: the zlib header and part of the data,
     * no sync flush. Sent as stream 1, so the inflater sees its very first bytes. */
    raw_deflater d;
    raw_deflater_init_version(&d, rig.version);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_buf plain = {0}, block = {0};
    raw_nv_block(&plain, rig.version, fields, n);
    raw_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    raw_deflater_free(&d);
    block.len /= 2; /* stop in the middle of the compressed data */
    raw_syn_stream(&rig.in, rig.version, SPDY_FLAG_FIN, 1, 0, 3, block.data, block.len);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_COMPRESSION, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "block without its sync flush");
    raw_buf_free(&plain);
    raw_buf_free(&block);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, block_ending_the_zlib_stream_is_compression_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_buf plain = {0}, block = {0};
    raw_nv_block(&plain, rig.version, fields, n);
    raw_deflate(&rig.deflater, plain.data, plain.len, Z_FINISH, &block);
    raw_syn_stream(&rig.in, rig.version, SPDY_FLAG_FIN, 1, 0, 3, block.data, block.len);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_COMPRESSION, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "block with Z_FINISH");
    raw_buf_free(&plain);
    raw_buf_free(&block);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, block_with_the_wrong_dictionary_is_compression_error) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_deflater wrong;
    raw_deflater_init(&wrong, rig.version == 2 ? RAW_DICT_V3 : RAW_DICT_V2, 6);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_syn_stream_nv(&rig.in, &wrong, rig.version, SPDY_FLAG_FIN, 1, 0, 3, fields, n);
    raw_deflater_free(&wrong);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_COMPRESSION, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "block compressed with the other version's dictionary");
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, stored_and_dictionary_less_blocks_are_accepted) {
  const raw_dictionary kinds[] = {RAW_DICT_NONE, RAW_DICT_V2 /* replaced per version */};
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t k = 0; k < 2; k++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_deflater_free(&rig.deflater);
      /* No dictionary at level 6, or the right dictionary at level 0 (stored blocks:
       * the "uncompressed" peer). */
      raw_dictionary dict = kinds[k] == RAW_DICT_NONE ? RAW_DICT_NONE
                            : rig.version == 2        ? RAW_DICT_V2
                                                      : RAW_DICT_V3;
      raw_deflater_init(&rig.deflater, dict, k == 0 ? 6 : 0);
      put_get(&rig, 1);
      size_t fed;
      cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed, "%s: variant %zu refused", rig.name,
                   k);
      cr_assert(test_log_has(rig.peer, "end 1 fin=1"), "%s log:\n%s", rig.name, rig.peer->log);
      raw_expect_session_works(&rig, 3, "second block of the same kind");
      raw_rig_close(&rig);
    }
  }
}

/* A header block that inflates to `inflated` bytes of zeros from a few compressed ones. */
static void build_bomb(unsigned version, size_t inflated, raw_buf *block) {
  raw_deflater d;
  raw_deflater_init_version(&d, version);
  uint8_t *zeros = calloc(1, 65536);
  cr_assert_not_null(zeros);
  for (size_t done = 0; done < inflated; done += 65536) {
    size_t n = inflated - done < 65536 ? inflated - done : 65536;
    raw_deflate(&d, zeros, n, done + n == inflated ? Z_SYNC_FLUSH : Z_NO_FLUSH, block);
  }
  free(zeros);
  raw_deflater_free(&d);
}

Test(hostile_zlib, zlib_bomb_is_header_block_too_large_with_bounded_memory) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_buf block = {0};
    build_bomb(rig.version, 8u << 20, &block); /* 8 MiB of zeros */
    cr_assert_lt(block.len, 66560, "the bomb must fit a control frame (%zu bytes)", block.len);
    raw_syn_stream(&rig.in, rig.version, SPDY_FLAG_FIN, 1, 0, 3, block.data, block.len);
    size_t before = test_alloc_get()->live_bytes;
    size_t peak_before = test_alloc_get()->peak_bytes;
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    size_t peak = test_alloc_get()->peak_bytes;
    /* The inflate window (32 KiB) and state come on the first block; the scratch grows to
     * the 64 KiB cap; the compressed frame sits in the input buffer meanwhile. */
    size_t allowed = 2 * 65536 + 48 * 1024 + block.len;
    cr_assert(peak == peak_before || peak - before <= allowed,
              "%s: a zlib bomb cost %zu bytes (allowed %zu)", rig.name, peak - before, allowed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE, 0,
                             SPDY_GOAWAY_PROTOCOL_ERROR, "zlib bomb of 8 MiB");
    cr_assert_leq(speedy_session_memory(rig.peer->session), before + 65536 + 48 * 1024 + 16384,
                  "%s: the session holds %zu bytes after the bomb", rig.name,
                  speedy_session_memory(rig.peer->session));
    raw_buf_free(&block);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, block_inflating_to_exactly_the_cap_is_accepted_and_one_more_is_not) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (int over = 0; over <= 1; over++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_header fields[7];
      size_t n = raw_request_headers(rig.version, "/", fields);
      raw_buf plain = {0};
      raw_nv_block(&plain, rig.version, fields, n);
      size_t fixed = plain.len + (rig.version == 2 ? 4 : 8) + 7; /* + lengths + "x-large" */
      size_t value_len = 65536 - fixed + (size_t)over;
      char *value = malloc(value_len);
      cr_assert_not_null(value);
      memset(value, 'v', value_len);
      fields[n++] = (raw_header){"x-large", value, value_len};
      raw_buf_free(&plain);
      raw_nv_block(&plain, rig.version, fields, n);
      cr_assert_eq(plain.len, 65536 + (size_t)over);
      raw_rig_syn_block(&rig, SPDY_FLAG_FIN, 1, &plain);
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      if (over) {
        raw_expect_session_error(&rig, rv, SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE, 0,
                                 SPDY_GOAWAY_PROTOCOL_ERROR, "block of 64 KiB + 1");
      } else {
        cr_assert_eq(rv, (int64_t)fed, "%s: a block of exactly 64 KiB: %lld (%s)", rig.name,
                     (long long)rv, rv < 0 ? speedy_strerror((int)rv) : "");
        cr_assert(test_log_has(rig.peer, "end 1 fin=1"), "%s log:\n%s", rig.name, rig.peer->log);
      }
      free(value);
      raw_buf_free(&plain);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_zlib, oversized_control_frame_is_frame_too_large) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    put_get(&rig, 1);
    /* A header block of incompressible bytes, making the frame 66,561 bytes: one over. */
    raw_control_header(&rig.in, rig.version, SPEEDY_SPDY_FRAME_SYN_STREAM, 0, 65536 + 1024 + 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_session_error(&rig, rv, SPEEDY_ERR_FRAME_TOO_LARGE, 1, SPDY_GOAWAY_PROTOCOL_ERROR,
                             "SYN_STREAM of 66,561 bytes");
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, control_frame_limit_is_configurable) {
  speedy_options *options = raw_options_new();
  speedy_options_set_max_recv_control_frame(options, 100);
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_SERVER, options);
  speedy_options_del(options);
  raw_header fields[7];
  size_t n = raw_request_headers(3, "/", fields);
  fields[n++] = (raw_header){"x-random", "qZ8f3LkP0aW1mX7cVb2N9rT4yH6jU5eD0sG3", 0};
  raw_syn_stream_nv(&rig.in, &rig.deflater, 3, SPDY_FLAG_FIN, 1, 0, 3, fields, n);
  cr_assert_gt(rig.in.len, 108, "the frame must exceed the limit");
  size_t fed;
  int64_t rv = raw_rig_feed_all(&rig, &fed);
  raw_expect_session_error(&rig, rv, SPEEDY_ERR_FRAME_TOO_LARGE, 0, SPDY_GOAWAY_PROTOCOL_ERROR,
                           "SYN_STREAM over a 100-byte limit");
  raw_rig_close(&rig);
}

/* ---- header fields ---------------------------------------------------------------------- */

/* The request fields plus extra, as a SYN_STREAM on stream 1 that must be reset. */
static void expect_fields_reset_stream(speedy_protocol protocol, const raw_header *extra,
                                       size_t n_extra, const char *what) {
  raw_rig rig;
  raw_rig_open(&rig, protocol, SPEEDY_ROLE_SERVER, NULL);
  raw_header fields[12];
  size_t n = raw_request_headers(rig.version, "/", fields);
  for (size_t i = 0; i < n_extra; i++) fields[n++] = extra[i];
  raw_buf plain = {0};
  raw_nv_block(&plain, rig.version, fields, n);
  raw_expect_block_resets_stream(&rig, &plain, what);
  raw_buf_free(&plain);
  raw_rig_close(&rig);
}

Test(hostile_headers, duplicate_names_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    const raw_header twice[] = {{"accept", "text/html", 0}, {"accept", "text/plain", 0}};
    expect_fields_reset_stream(all_versions[v], twice, 2, "a name twice");
    const raw_header again[] = {{"user-agent", "second", 0}};
    expect_fields_reset_stream(all_versions[v], again, 1, "user-agent twice");
  }
  /* SPDY/2 "url" and ":path" are one name to the application. */
  const raw_header path_v2[] = {{":path", "/other", 0}};
  expect_fields_reset_stream(SPEEDY_PROTOCOL_SPDY2, path_v2, 1, "url and :path in v2");
}

Test(hostile_headers, upper_case_names_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    const raw_header upper[] = {{"Accept", "text/html", 0}};
    expect_fields_reset_stream(all_versions[v], upper, 1, "upper-case name");
    const raw_header inner[] = {{"x-fooBar", "1", 0}};
    expect_fields_reset_stream(all_versions[v], inner, 1, "name with an upper-case letter");
  }
}

Test(hostile_headers, empty_and_nul_names_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    const raw_header empty[] = {{"", "value", 0}};
    expect_fields_reset_stream(all_versions[v], empty, 1, "empty name");
    /* A NUL inside a name: built by hand since raw_header names are C strings. */
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_buf plain = {0};
    raw_nv_length(&plain, rig.version, (uint32_t)n + 1);
    for (size_t i = 0; i < n; i++) {
      raw_nv_string(&plain, rig.version, fields[i].name, strlen(fields[i].name));
      raw_nv_string(&plain, rig.version, fields[i].value, strlen(fields[i].value));
    }
    raw_nv_string(&plain, rig.version, "x\0y", 3);
    raw_nv_string(&plain, rig.version, "v", 1);
    raw_expect_block_resets_stream(&rig, &plain, "name with a NUL");
    raw_buf_free(&plain);
    raw_rig_close(&rig);
  }
}

Test(hostile_headers, malformed_nul_separated_values_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    const raw_header leading[] = {{"x-list", "\0a", 2}};
    expect_fields_reset_stream(all_versions[v], leading, 1, "value starting with NUL");
    const raw_header trailing[] = {{"x-list", "a\0", 2}};
    expect_fields_reset_stream(all_versions[v], trailing, 1, "value ending with NUL");
    const raw_header doubled[] = {{"x-list", "a\0\0b", 4}};
    expect_fields_reset_stream(all_versions[v], doubled, 1, "value with two NULs in a row");
  }
  const raw_header empty_v2[] = {{"x-empty", "", 0}};
  expect_fields_reset_stream(SPEEDY_PROTOCOL_SPDY2, empty_v2, 1, "empty value in v2");
}

/* A pseudo-header has one value: "GET\0POST" would deliver :method twice, past the check
 * that refuses a second :method field (SPDY/2's "method" alike). */
Test(hostile_headers, nul_separated_values_of_a_pseudo_header_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_header fields[6];
    size_t n = raw_request_headers(rig.version, "/", fields);
    raw_buf plain = {0};
    raw_nv_length(&plain, rig.version, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
      raw_nv_string(&plain, rig.version, fields[i].name, strlen(fields[i].name));
      int method = strcmp(fields[i].name, ":method") == 0 || strcmp(fields[i].name, "method") == 0;
      if (method)
        raw_nv_string(&plain, rig.version, "GET\0POST", 8);
      else
        raw_nv_string(&plain, rig.version, fields[i].value, strlen(fields[i].value));
    }
    raw_expect_block_resets_stream(&rig, &plain, ":method with two values");
    cr_assert(!test_log_has(rig.peer, "header 1 :method=POST"), "%s log:\n%s", rig.name,
              rig.peer->log);
    raw_buf_free(&plain);
    raw_rig_close(&rig);
  }
}

Test(hostile_headers, missing_required_request_headers_reset_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    unsigned version = all_versions[v] == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
    /* v2 requires method, url, version; v3 also :host and :scheme. */
    size_t required = version == 2 ? 3 : 5;
    for (size_t drop = 0; drop < required; drop++) {
      raw_rig rig;
      raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
      raw_header all[6], fields[6];
      size_t n = raw_request_headers(version, "/", all), k = 0;
      for (size_t i = 0; i < n; i++)
        if (i != drop) fields[k++] = all[i];
      raw_buf plain = {0};
      raw_nv_block(&plain, version, fields, k);
      char what[48];
      snprintf(what, sizeof(what), "request without %s", all[drop].name);
      raw_expect_block_resets_stream(&rig, &plain, what);
      raw_buf_free(&plain);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_headers, v3_names_in_a_v2_request_do_not_count) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY2, SPEEDY_ROLE_SERVER, NULL);
  raw_header fields[6];
  size_t n = raw_request_headers(3, "/", fields); /* ":method", ":path", ... */
  raw_buf plain = {0};
  raw_nv_block(&plain, 2, fields, n);
  raw_expect_block_resets_stream(&rig, &plain, "v2 request with v3 names");
  raw_buf_free(&plain);
  raw_rig_close(&rig);
}

Test(hostile_headers, v2_absolute_url_is_accepted) {
  raw_rig rig;
  raw_rig_open(&rig, SPEEDY_PROTOCOL_SPDY2, SPEEDY_ROLE_SERVER, NULL);
  raw_get(&rig.in, &rig.deflater, 2, SPDY_FLAG_FIN, 1, "http://example.test/a?b=c");
  size_t fed;
  cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
  cr_assert(test_log_has(rig.peer, "header 1 :path=http://example.test/a?b=c"), "log:\n%s",
            rig.peer->log);
  raw_rig_close(&rig);
}

Test(hostile_headers, syn_reply_without_status_resets_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    for (size_t drop = 0; drop < 2; drop++) {
      raw_rig rig;
      raw_rig_open_client_with_get(&rig, all_versions[v]);
      raw_header fields[2];
      raw_response_headers(rig.version, fields);
      raw_syn_reply_nv(&rig.in, &rig.deflater, rig.version, 0, 1, &fields[1 - drop], 1);
      size_t fed;
      int64_t rv = raw_rig_feed_all(&rig, &fed);
      char what[48];
      snprintf(what, sizeof(what), "SYN_REPLY without %s", fields[drop].name);
      raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_PROTOCOL_ERROR, what);
      cr_assert(!test_log_has(rig.peer, "begin 1 response"), "%s: delivered", what);
      raw_rig_close(&rig);
    }
  }
}

Test(hostile_headers, bad_headers_frame_resets_the_stream) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/");
    const raw_header upper[] = {{"X-Trailer", "1", 0}};
    raw_headers_nv(&rig.in, &rig.deflater, rig.version, SPDY_FLAG_FIN, 1, upper, 1);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    raw_expect_stream_error(&rig, rv, fed, 1, SPEEDY_RST_PROTOCOL_ERROR, "HEADERS with X-Trailer");
    raw_expect_session_works(&rig, 3, "after a bad HEADERS frame");
    raw_rig_close(&rig);
  }
}

/* ---- zlib discipline: every block is inflated ------------------------------------------- */

Test(hostile_zlib, blocks_after_our_goaway_are_still_inflated) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    cr_assert_eq(speedy_submit_goaway(rig.peer->session, SPEEDY_RST_NONE, NULL, 0), 0);
    raw_rig_discard_output(&rig);
    /* Ignored after GOAWAY, but each block must still go through the inflater: were one
     * skipped, the next would not inflate. */
    put_get(&rig, 1);
    put_get(&rig, 3);
    put_get(&rig, 5);
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: SYN_STREAMs after GOAWAY: %lld (%s)", rig.name,
                 (long long)rv, rv < 0 ? speedy_strerror((int)rv) : "");
    cr_assert(!test_log_has(rig.peer, "begin 1 request"), "%s: a stream started after GOAWAY",
              rig.name);
    raw_rig_close(&rig);
  }
}

Test(hostile_zlib, blocks_of_refused_and_unknown_streams_are_still_inflated) {
  for (size_t v = 0; v < N_VERSIONS; v++) {
    speedy_options *options = raw_options_new();
    speedy_options_set_max_concurrent_streams(options, 1);
    raw_rig rig;
    raw_rig_open(&rig, all_versions[v], SPEEDY_ROLE_SERVER, options);
    speedy_options_del(options);
    raw_get(&rig.in, &rig.deflater, rig.version, 0, 1, "/"); /* takes the only slot */
    put_get(&rig, 3);                                        /* refused */
    const raw_header extra[] = {{"x-extra", "1", 0}};
    raw_headers_nv(&rig.in, &rig.deflater, rig.version, 0, 9, extra, 1); /* unknown stream */
    put_get(&rig, 5);                                                    /* refused */
    size_t fed;
    int64_t rv = raw_rig_feed_all(&rig, &fed);
    cr_assert_eq(rv, (int64_t)fed, "%s: %lld (%s)", rig.name, (long long)rv,
                 rv < 0 ? speedy_strerror((int)rv) : "");
    raw_output out;
    raw_output_take(&out, rig.peer);
    raw_expect_rst(&out, 3, SPEEDY_RST_REFUSED_STREAM, "SYN_STREAM beyond the limit");
    raw_expect_rst(&out, 9, SPEEDY_RST_INVALID_STREAM, "HEADERS for unknown stream 9");
    raw_expect_rst(&out, 5, SPEEDY_RST_REFUSED_STREAM, "SYN_STREAM beyond the limit");
    raw_expect_no_goaway(&out, "refused streams");
    raw_output_free(&out);
    /* Close stream 1 (RST from the client) and a new request gets through. */
    raw_rst_stream(&rig.in, rig.version, 1, SPEEDY_RST_CANCEL);
    cr_assert_eq(raw_rig_feed_all(&rig, &fed), (int64_t)fed);
    raw_expect_session_works(&rig, 7, "after refused streams");
    raw_rig_close(&rig);
  }
}
