/* test_header_compressor.c — speedy_header_compressor_* (the public header-compression API
 * the lab measures with) counts exactly the bytes a session sends for the same lists. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "pair.h"
#include "rawframe.h"
#include "testutil.h"

static const speedy_protocol all_versions[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                               SPEEDY_PROTOCOL_SPDY3_1};

/* The bytes of every SYN_STREAM the session sent, in order. */
static size_t syn_stream_sizes(test_peer *client, size_t *sizes, size_t max) {
  size_t len = 0, n_syn = 0;
  uint8_t *out = test_drain(client, &len);
  raw_frame frames[16];
  size_t n = raw_parse(out, len, frames, 16);
  for (size_t i = 0; i < n && n_syn < max; i++)
    if (frames[i].hd.is_control && frames[i].hd.type == SPEEDY_SPDY_FRAME_SYN_STREAM)
      sizes[n_syn++] = 8 + frames[i].hd.length;
  free(out);
  return n_syn;
}

Test(header_compressor, counts_what_a_session_sends_for_the_same_requests_every_version) {
  static const char *const paths[] = {"/", "/style.css", "/img/logo.png"};
  for (size_t v = 0; v < 3; v++) {
    test_peer *client = test_peer_new(all_versions[v], SPEEDY_ROLE_CLIENT, NULL);
    speedy_header_compressor *compressor = NULL;
    cr_assert_eq(speedy_header_compressor_new(&compressor, all_versions[v], NULL), 0);
    int64_t expected[3];
    for (size_t i = 0; i < 3; i++) {
      speedy_header headers[] = {
          {":method", 7, "GET", 3},       {":path", 5, paths[i], strlen(paths[i])},
          {":version", 8, "HTTP/1.1", 8}, {":host", 5, "example.test", 12},
          {":scheme", 7, "https", 5},     {"user-agent", 10, "speedy-test", 11}};
      cr_assert_gt(speedy_submit_request(client->session, 3, headers, 6, NULL, NULL, NULL), 0);
      expected[i] = speedy_header_compressor_frame_size(compressor, 0, headers, 6);
      cr_assert_gt(expected[i], 0);
    }
    size_t sizes[3];
    cr_assert_eq(syn_stream_sizes(client, sizes, 3), 3);
    for (size_t i = 0; i < 3; i++)
      cr_assert_eq((int64_t)sizes[i], expected[i],
                   "%s: request %zu: session sent %zu bytes, the compressor counted %lld",
                   speedy_protocol_name(all_versions[v]), i, sizes[i], (long long)expected[i]);
    cr_assert(expected[1] < expected[0], "the shared context makes later blocks smaller");
    speedy_header_compressor_del(compressor);
    test_peer_del(client);
  }
}

Test(header_compressor, a_list_the_protocol_cannot_carry_is_refused_and_the_context_survives) {
  speedy_header_compressor *compressor = NULL;
  cr_assert_eq(speedy_header_compressor_new(&compressor, SPEEDY_PROTOCOL_SPDY3_1, NULL), 0);
  speedy_header bad[] = {{"Upper-Case", 10, "x", 1}};
  cr_assert_eq(speedy_header_compressor_frame_size(compressor, 1, bad, 1),
               SPEEDY_ERR_INVALID_HEADER);
  speedy_header good[] = {{":status", 7, "200", 3}, {":version", 8, "HTTP/1.1", 8}};
  cr_assert_gt(speedy_header_compressor_frame_size(compressor, 1, good, 2), 12);
  speedy_header_compressor_del(compressor);
  cr_assert_eq(speedy_header_compressor_new(NULL, SPEEDY_PROTOCOL_SPDY3, NULL),
               SPEEDY_ERR_INVALID_ARGUMENT);
}
