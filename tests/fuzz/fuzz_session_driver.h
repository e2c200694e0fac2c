/* fuzz_session_driver.h — the common body of the harnesses that feed one session bytes
 * from a peer (fuzz_server, fuzz_client, fuzz_frames).
 *
 * A configuration byte chooses the protocol and options; a client first opens requests
 * (so responses, pushes and DATA have streams to land on); then the bytes are fed in the
 * chosen pieces, output is drained after each piece, and the invariants every input must
 * keep are checked: recv consumes what it was given or returns a stable SPEEDY_ERR_*, a
 * fatal error stays fatal, memory accounting is exact, and once the session is deleted
 * the counting allocator holds nothing.
 */
#ifndef SPEEDY_FUZZ_SESSION_DRIVER_H
#define SPEEDY_FUZZ_SESSION_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

/* The configuration byte. */
typedef struct fuzz_session_config {
  speedy_protocol protocol;
  speedy_role role;
  int respond; /* server: answer each request (with a body when body_len > 0) */
  uint32_t body_len;
  int manual_flow;
  int small_limits;
  uint32_t requests; /* client: requests opened before any input (1..8) */
  uint32_t post_len; /* client: the first request carries a body of this size (0: GET) */
} fuzz_session_config;

/* Decodes cfg (bits 0-1 protocol, 2 respond, 3 manual flow, 4 small limits, 5-7 body
 * size) and, for a client, req (bits 0-2 requests - 1, 3-5 body of the first request). */
void fuzz_session_config_decode(fuzz_session_config *c, speedy_role role, uint8_t cfg, uint8_t req);

/* Feeds bytes (split after each offset in ends, n_ends of them; the last piece ends at
 * len) to a fresh session with that configuration and checks the invariants. */
void fuzz_session_run(const fuzz_session_config *c, const uint8_t *bytes, size_t len,
                      const size_t *ends, size_t n_ends);

#endif
