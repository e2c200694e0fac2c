/* io_session.h — the one copy of the output loop every program runs: a protocol
 * session's bytes moved into an io_conn, as much as the socket can take now.
 *
 * speedyd, `speedy get`, `speedy bench` and `speedy load` call it from their on_writable
 * callbacks; each then decides what a session error or a full socket means for it.
 */
#ifndef SPEEDY_IO_SESSION_H
#define SPEEDY_IO_SESSION_H

#include <stddef.h>

#include "io.h"
#include "speedy/speedy.h"

/* The engine's protocol for a negotiated or chosen io_proto, and back: the enums meet
 * here rather than through casts. io_proto_session returns 0 (and leaves *out) for a
 * protocol the engine does not speak (HTTP/1.1, unknown). */
int io_proto_session(io_proto proto, speedy_protocol *out);
io_proto io_proto_of_session(speedy_protocol protocol);

/* What io_session_pump did. */
typedef enum io_pump_result {
  IO_PUMP_IDLE = 0,           /* the session has nothing more to send now */
  IO_PUMP_FULL = 1,           /* room ran out with output waiting: on_writable will come */
  IO_PUMP_SESSION_ERROR = -1, /* the session failed (*error: its SPEEDY_ERR_*) */
  IO_PUMP_WRITE_ERROR = -2    /* the connection refused the bytes (closing, no memory) */
} io_pump_result;

/* Moves the session's output into conn: at most room bytes, or everything the session has
 * when unbounded (to flush a GOAWAY before closing). Output is taken in slices of at most
 * slice bytes (0: no limit when bounded, 16 KiB when unbounded), so the engine's buffer stays small
 * however much room the socket has. On IO_PUMP_FULL it has asked for on_writable
 * (io_conn_want_writable). *sent (may be NULL): bytes moved. */
io_pump_result io_session_pump(io_conn *conn, speedy_session *session, size_t room, int unbounded,
                               size_t slice, int *error, size_t *sent);

#endif
