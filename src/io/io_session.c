/* io_session.c — a session's output moved into a connection (see io_session.h). */
#include "io_session.h"

/* Unbounded pumps still take output a slice at a time: asked for everything at once, the
 * engine would lay out every stream's data in its buffer. */
#define IO_SESSION_SLICE 16384u

io_pump_result io_session_pump(io_conn *conn, spdy_session *session, size_t room, int unbounded,
                               size_t slice, int *error, size_t *sent) {
  size_t moved = 0;
  io_pump_result result = IO_PUMP_IDLE;
  for (;;) {
    if (!unbounded && room == 0) {
      if (spdy_session_want_write(session)) {
        io_conn_want_writable(conn);
        result = IO_PUMP_FULL;
      }
      break;
    }
    size_t take = unbounded ? IO_SESSION_SLICE : room;
    if (slice != 0 && take > slice) take = slice;
    const uint8_t *p;
    int64_t n = spdy_session_peek_output(session, &p, take);
    if (n < 0) {
      if (error != NULL) *error = (int)n;
      result = IO_PUMP_SESSION_ERROR;
      break;
    }
    if (n == 0) break;
    if (io_conn_write(conn, p, (size_t)n) != 0) {
      result = IO_PUMP_WRITE_ERROR;
      break;
    }
    spdy_session_consume_output(session, (size_t)n);
    moved += (size_t)n;
    if (!unbounded) room -= (size_t)n;
  }
  if (sent != NULL) *sent = moved;
  return result;
}
