/* fuzz_frames.c — harness 3: structure-aware. The input is a program (fuzz_program.h)
 * that builds frames — header lists compressed with the peer's own zlib context and the
 * version's dictionary, DATA, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE,
 * CREDENTIAL, NOOP, unknown types, wrong versions, raw bytes — and feeds them to a
 * session frame by frame, draining its output in between.
 *
 * Input: configuration byte (as fuzz_server, bit 2 also "answer requests"), request byte
 * (as fuzz_client), role byte (bit 0: 0 server, 1 client; bit 1: feed in one buffer
 * instead of frame by frame), then the program. */
#include "fuzz_program.h"
#include "fuzz_session_driver.h"

static fuzz_program program;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  speedy_role role = (data[2] & 1) ? SPEEDY_ROLE_CLIENT : SPEEDY_ROLE_SERVER;
  fuzz_session_config c;
  fuzz_session_config_decode(&c, role, data[0], data[1]);
  fuzz_input in;
  fuzz_input_init(&in, data + 3, size - 3);
  fuzz_program_init(&program, c.protocol, role, role == SPEEDY_ROLE_CLIENT ? c.requests : 0);
  fuzz_program_build(&program, &in, FUZZ_PROGRAM_MAX_OPS);
  int whole = (data[2] >> 1) & 1;
  fuzz_session_run(&c, program.bytes.data, program.bytes.len, program.ends,
                   whole ? 0 : program.n_frames);
  fuzz_program_free(&program);
  return 0;
}
