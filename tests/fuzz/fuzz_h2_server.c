/* fuzz_h2_server.c — libspeedy's HTTP/2 session in the server role fed arbitrary bytes.
 *
 * Input: a configuration byte (fuzz_h2_driver.h: answer requests, with a 103, trailers
 * and a push; manual flow control; small limits; body size), a piece size byte, then
 * what a client sends after its connection preface (which the harness sends first), fed
 * in one buffer and again in pieces. Seeds: nghttp2's client streams, and frames built
 * from RFC 9113's text (gen_h2_corpus.c). */
#include "fuzz_h2_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  fuzz_h2_config c;
  fuzz_h2_config_decode(&c, SPEEDY_ROLE_SERVER, data[0], 0, data[1]);
  fuzz_h2_run(&c, data + 2, size - 2);
  return 0;
}
