/* fuzz_program.h — structure-aware input: fuzz bytes read as a program of operations that
 * build SPDY frames as a peer would send them.
 *
 * Random bytes almost never form a zlib stream with the SPDY dictionary, so a plain
 * harness never gets past the header-block inflater. Here header lists are taken from the
 * input (names from a table of interesting ones or raw bytes, values likewise), serialised
 * in the version's layout and compressed by the peer's own deflater with the right
 * dictionary — so they reach the parser, validation and the stream state machine. Every
 * frame type is built, with fields from the input (stream ids chosen among the ones in
 * use, new ones, small and arbitrary values), plus deliberately broken compression,
 * unknown types, wrong versions and raw bytes.
 *
 * The result is one byte string and the offsets where frames end, so a harness can feed
 * it frame by frame, in one buffer or split anywhere.
 */
#ifndef SPEEDY_FUZZ_PROGRAM_H
#define SPEEDY_FUZZ_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

#define FUZZ_PROGRAM_MAX_OPS 256
#define FUZZ_PROGRAM_RECENT 8

typedef struct fuzz_program {
  speedy_protocol protocol;
  unsigned version;                     /* wire version */
  speedy_role target_role;              /* role of the session that will read the bytes */
  fuzz_deflater deflater;               /* the peer's side of the header compression */
  uint32_t next_peer_id;                /* next stream id the peer would open */
  uint32_t recent[FUZZ_PROGRAM_RECENT]; /* stream ids in play */
  size_t n_recent;
  fuzz_buf bytes;
  size_t ends[FUZZ_PROGRAM_MAX_OPS]; /* bytes.len after each frame */
  size_t n_frames;
} fuzz_program;

/* Prepares a program for a session of protocol/role. requests_open: how many requests the
 * session under test (a client) has already opened (stream ids 1, 3, ...). */
void fuzz_program_init(fuzz_program *p, speedy_protocol protocol, speedy_role target_role,
                       uint32_t requests_open);
/* Reads operations from in until it is exhausted or max_ops frames were built. */
void fuzz_program_build(fuzz_program *p, fuzz_input *in, size_t max_ops);
void fuzz_program_free(fuzz_program *p);

#endif
