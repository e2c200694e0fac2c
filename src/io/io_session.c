/* io_session.c — a session's output moved into a connection (see io_session.h). */
#include "io_session.h"

/* Unbounded pumps still take output a slice at a time: asked for everything at once, the
 * engine would lay out every stream's data in its buffer. */
#define IO_SESSION_SLICE 16384u

int io_proto_session(io_proto proto, speedy_protocol *out) {
  switch (proto) {
  case IO_PROTO_SPDY2:
    *out = SPEEDY_PROTOCOL_SPDY2;
    return 1;
  case IO_PROTO_SPDY3:
    *out = SPEEDY_PROTOCOL_SPDY3;
    return 1;
  case IO_PROTO_SPDY3_1:
    *out = SPEEDY_PROTOCOL_SPDY3_1;
    return 1;
  case IO_PROTO_H2:
    *out = SPEEDY_PROTOCOL_H2;
    return 1;
  default:
    return 0;
  }
}

io_proto io_proto_of_session(speedy_protocol protocol) {
  switch (protocol) {
  case SPEEDY_PROTOCOL_SPDY2:
    return IO_PROTO_SPDY2;
  case SPEEDY_PROTOCOL_SPDY3:
    return IO_PROTO_SPDY3;
  case SPEEDY_PROTOCOL_SPDY3_1:
    return IO_PROTO_SPDY3_1;
  case SPEEDY_PROTOCOL_H2:
    return IO_PROTO_H2;
  }
  return IO_PROTO_UNKNOWN;
}

io_pump_result io_session_pump(io_conn *conn, speedy_session *session, size_t room, int unbounded,
                               size_t slice, int *error, size_t *sent) {
  size_t moved = 0;
  io_pump_result result = IO_PUMP_IDLE;
  for (;;) {
    if (!unbounded && room == 0) {
      if (speedy_session_want_write(session)) {
        io_conn_want_writable(conn);
        result = IO_PUMP_FULL;
      }
      break;
    }
    size_t take = unbounded ? IO_SESSION_SLICE : room;
    if (slice != 0 && take > slice) take = slice;
    const uint8_t *p;
    /* A zero-copy body's frames are written into conn by on_send_data during the peek. */
    size_t unsent_before = io_conn_unsent(conn);
    int64_t n = speedy_session_peek_output(session, &p, take);
    size_t unsent_after = io_conn_unsent(conn);
    size_t written = unsent_after > unsent_before ? unsent_after - unsent_before : 0;
    moved += written;
    if (!unbounded) room -= written < room ? written : room;
    if (n < 0) {
      if (error != NULL) *error = (int)n;
      result = IO_PUMP_SESSION_ERROR;
      break;
    }
    if (n == 0) {
      if (written > 0) continue;
      break;
    }
    if (io_conn_write(conn, p, (size_t)n) != 0) {
      result = IO_PUMP_WRITE_ERROR;
      break;
    }
    speedy_session_consume_output(session, (size_t)n);
    moved += (size_t)n;
    if (!unbounded) room -= (size_t)n;
  }
  if (sent != NULL) *sent = moved;
  return result;
}
