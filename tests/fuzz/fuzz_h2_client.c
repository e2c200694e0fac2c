/* fuzz_h2_client.c — libspeedy's HTTP/2 session in the client role fed arbitrary bytes.
 *
 * Input: a configuration byte (fuzz_h2_driver.h), a request byte (bits 0-2: the client
 * opens 1-8 requests first, streams 1, 3, ...; bits 3-5: the first carries a body), a
 * piece size byte, then what a server sends (its SETTINGS first), fed in one buffer and
 * again in pieces. Seeds: nghttp2's server streams (responses, push, trailers, 103,
 * CONTINUATION, padding, GOAWAY) and frames built from RFC 9113's text. */
#include "fuzz_h2_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  fuzz_h2_config c;
  fuzz_h2_config_decode(&c, SPEEDY_ROLE_CLIENT, data[0], data[1], data[2]);
  fuzz_h2_run(&c, data + 3, size - 3);
  return 0;
}
