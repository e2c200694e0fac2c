/* fuzz_alloc.c — harness 6: allocation failures injected through the allocator hook.
 *
 * Input: a 16-bit N and a mode byte (bit 0: every allocation from the N-th on fails,
 * else only the N-th; bits 1-2 scenario: 0 a server fed a fuzz_program, 1 a client fed a
 * fuzz_program, 2-3 a client/server round trip in lenient mode), then the scenario's own
 * input. The session must return errors cleanly — SPEEDY_ERR_* codes, a fatal error stays
 * fatal — and once deleted hold no memory. */
#include <string.h>

#include "fuzz_program.h"
#include "fuzz_roundtrip_driver.h"

static fuzz_program program;
static fuzz_endpoint ep;

static void feed_program(fuzz_input *in, speedy_role role) {
  uint8_t cfg = fuzz_u8(in);
  speedy_protocol protocol = fuzz_protocol_of((uint8_t)(cfg & 3));
  uint32_t requests = role == SPEEDY_ROLE_CLIENT ? 1 + (cfg >> 5) % 4u : 0;
  fuzz_program_init(&program, protocol, role, requests);
  fuzz_program_build(&program, in, 64);

  memset(&ep, 0, sizeof(ep));
  ep.respond = (cfg >> 2) & 1;
  ep.body_len = ep.respond ? 3000 : 0;
  ep.manual_flow = (cfg >> 3) & 1;
  speedy_options *options = NULL;
  /* speedy_options_new uses malloc, not the hook: only the session's allocations fail. */
  options = fuzz_options_new((cfg >> 4) & 1);
  int rv = fuzz_endpoint_open(&ep, protocol, role, options);
  speedy_options_del(options);
  if (rv != 0) {
    if (rv != SPEEDY_ERR_NOMEM) fuzz_fail("speedy_session_new: %s", speedy_strerror(rv));
    fuzz_alloc_check_empty("failed speedy_session_new");
    fuzz_program_free(&program);
    return;
  }
  for (uint32_t i = 0; i < requests; i++) {
    int32_t id = speedy_submit_request(ep.session, 3, fuzz_request_headers, 5, NULL, NULL, NULL);
    if (id < 0 && id != SPEEDY_ERR_NOMEM)
      fuzz_fail("submit_request under allocation failure: %s", speedy_strerror(id));
  }
  (void)fuzz_endpoint_drain(&ep, NULL);
  int64_t fatal = 0;
  size_t at = 0;
  for (size_t i = 0; i < program.n_frames; i++) {
    size_t end = program.ends[i];
    if (end <= at) continue;
    int64_t got = fuzz_endpoint_recv(&ep, program.bytes.data + at, end - at);
    if (fatal != 0 && got != fatal)
      fuzz_fail("recv after fatal %s returned %lld", speedy_strerror((int)fatal), (long long)got);
    if (got < 0) {
      if (!speedy_error_is_fatal((int)got))
        fuzz_fail("recv returned the non-fatal %s", speedy_strerror((int)got));
      fatal = got;
    }
    at = end;
    (void)fuzz_endpoint_drain(&ep, NULL);
  }
  fuzz_endpoint_close(&ep);
  fuzz_alloc_check_empty("session under allocation failure");
  fuzz_program_free(&program);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  fuzz_input in;
  fuzz_input_init(&in, data, size);
  uint16_t n = fuzz_u16(&in);
  uint8_t mode = fuzz_u8(&in);
  fuzz_alloc_reset();
  fuzz_alloc_fail_at((size_t)n + 1, mode & 1);
  switch ((mode >> 1) & 3) {
  case 0:
    feed_program(&in, SPEEDY_ROLE_SERVER);
    break;
  case 1:
    feed_program(&in, SPEEDY_ROLE_CLIENT);
    break;
  default:
    fuzz_roundtrip_run(&in, 0);
    break;
  }
  return 0;
}
