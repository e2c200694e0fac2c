/* fuzz_h2_roundtrip.c — a libspeedy HTTP/2 client and server driven by the input
 * (fuzz_roundtrip_driver.h, strict mode): any protocol error between two speedy sessions
 * is a bug and aborts. Input: a configuration byte (bit 2 small limits, 3/4 manual flow
 * control on the client/server, 5 push disabled by the client, 6 a 1 MiB session window),
 * then the operations. */
#include "fuzz_roundtrip_driver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_input in;
  fuzz_input_init(&in, data, size);
  fuzz_alloc_reset();
  fuzz_roundtrip_run_h2(&in, 1);
  return 0;
}
