/* fuzz_roundtrip_driver.h — a libspeedy client and server talking to each other, driven by
 * fuzz input (used by fuzz_roundtrip and fuzz_alloc).
 *
 * The input is a list of operations: submit requests (headers and body sizes from the
 * input), responses, pushes, HEADERS, resets, pings, SETTINGS, WINDOW_UPDATEs, GOAWAY,
 * resume deferred bodies, consume (manual flow control), advance the clock, and pump
 * bytes between the two sessions in chunks of a chosen size.
 *
 * strict = 1 (fuzz_roundtrip): two speedy sessions must never disagree. Any recv error,
 * any GOAWAY other than one the application asked for, any RST_STREAM the engine sent on
 * its own with a status that accuses the peer, a body byte that differs from what the
 * sender wrote, or a stream that ended normally with fewer or more bytes than the sender's
 * body aborts.
 * strict = 0 (fuzz_alloc): errors are expected (allocation failures); only crashes,
 * sanitizer reports, invalid return codes and leaks count.
 */
#ifndef SPEEDY_FUZZ_ROUNDTRIP_DRIVER_H
#define SPEEDY_FUZZ_ROUNDTRIP_DRIVER_H

#include "fuzz_common.h"

void fuzz_roundtrip_run(fuzz_input *in, int strict);
/* The same between two HTTP/2 sessions (fuzz_h2_roundtrip): requests with a method from
 * the input, 1xx responses, bodies that end with trailers, HTTP/2's settings, PRIORITY_UPDATE,
 * GOAWAY with any reason and debug data. Strict also requires every stream to end once
 * the server has answered every request and both sides are pumped dry. */
void fuzz_roundtrip_run_h2(fuzz_input *in, int strict);

#endif
