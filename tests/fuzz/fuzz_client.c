/* fuzz_client.c — harness 2: libspeedy in the client role fed arbitrary bytes.
 *
 * Input: a configuration byte (as fuzz_server: protocol, options), a request byte (bits
 * 0-2: the client first opens 1-8 requests, streams 1, 3, ...; bits 3-5: the first
 * carries a body), then the bytes a server would send, fed in one buffer. Seeds are
 * node's recorded server streams. */
#include "fuzz_session_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  fuzz_session_config c;
  fuzz_session_config_decode(&c, SPEEDY_ROLE_CLIENT, data[0], data[1]);
  fuzz_session_run(&c, data + 2, size - 2, NULL, 0);
  return 0;
}
