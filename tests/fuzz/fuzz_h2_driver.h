/* fuzz_h2_driver.h — the common body of the HTTP/2 harnesses (fuzz_h2_server,
 * fuzz_h2_client): one SPEEDY_PROTOCOL_H2 session fed a peer's bytes.
 *
 * A configuration byte chooses the options and what the application does (answer
 * requests, with trailers or a 103 first, push, consume DATA itself); a client first opens
 * requests. The input is fed three times to fresh sessions: in pieces of a size the input
 * chooses with output drained after each, then in one buffer and in those pieces with
 * output drained only at the end — those two must tell the application the same story.
 * Every run checks the invariants of fuzz_session_driver.h too: recv consumes everything
 * or returns a fatal SPEEDY_ERR_* that stays, the memory figure is exact, nothing leaks.
 */
#ifndef SPEEDY_FUZZ_H2_DRIVER_H
#define SPEEDY_FUZZ_H2_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

typedef struct fuzz_h2_config {
  speedy_role role;
  int respond;      /* server: answer each request */
  int extras;       /* server: a 103 before, trailers after, a push with each answer */
  int manual_flow;  /* the application consumes DATA itself */
  int small_limits; /* small windows, frames, caps and budgets */
  uint32_t body_len;
  uint32_t requests; /* client: requests opened first (1..8) */
  uint32_t post_len; /* client: the first carries a body of this size */
  size_t piece;      /* the second run's piece size (1..256) */
} fuzz_h2_config;

/* cfg: bit 0 respond, 1 extras, 2 manual flow, 3 small limits, 4-6 body size; req: bits
 * 0-2 requests - 1, 3-5 the first request's body; split: the piece size - 1. */
void fuzz_h2_config_decode(fuzz_h2_config *c, speedy_role role, uint8_t cfg, uint8_t req,
                           uint8_t split);

/* Runs the input (a server session gets the client preface first) and checks it. */
void fuzz_h2_run(const fuzz_h2_config *c, const uint8_t *bytes, size_t len);

#endif
