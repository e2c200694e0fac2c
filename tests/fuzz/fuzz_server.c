/* fuzz_server.c — harness 1: libspeedy in the server role fed arbitrary bytes.
 *
 * Input: one configuration byte (bits 0-1 protocol: spdy/2, /3, /3.1; 2 answer requests;
 * 3 manual flow control; 4 small limits; 5-7 response body size), then the bytes a client
 * would send, fed in one buffer. Seeds are node's recorded client streams. */
#include "fuzz_session_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  fuzz_session_config c;
  fuzz_session_config_decode(&c, SPEEDY_ROLE_SERVER, data[0], 0);
  fuzz_session_run(&c, data + 1, size - 1, NULL, 0);
  return 0;
}
