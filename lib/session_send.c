/* session_send.c — the output side: serialises queued frames through the codec
 * (compressing header blocks in exactly the order they go out), then DATA strictly by
 * urgency — round-robin among incremental streams of equal urgency, one after another for
 * the others — one frame at a time, never past a flow-control window.
 *
 * Frames are produced only while the caller asks for more bytes than are buffered, so
 * the buffer never runs far ahead of the socket and a newly urgent stream waits at most
 * one DATA frame.
 */
#include <stdio.h>
#include <string.h>

#include "session_int.h"

/* ---- scheduler --------------------------------------------------------------------- */

/* Streams of one urgency form a list: those sent one after another (not incremental,
 * RFC 9218 4.2) first, by stream id, then the incremental ones, which take turns. */
void speedy_sched_add(speedy_session *session, speedy_stream *stream) {
  int u = stream->urgency;
  stream->data_state = SPEEDY_DATA_ACTIVE;
  speedy_stream *before = NULL; /* insert before this one; NULL: at the tail */
  if (!stream->incremental) {
    /* From the tail back: answers mostly become ready in id order, so a new one usually
     * goes last (a scan from the head cost a walk of every active stream per answer). */
    speedy_stream *after = session->sched_tail[u];
    while (after != NULL && (after->incremental || after->id > stream->id))
      after = after->sched_prev;
    before = after != NULL ? after->sched_next : session->sched_head[u];
  }
  stream->sched_next = before;
  stream->sched_prev = before != NULL ? before->sched_prev : session->sched_tail[u];
  if (stream->sched_prev != NULL)
    stream->sched_prev->sched_next = stream;
  else
    session->sched_head[u] = stream;
  if (before != NULL)
    before->sched_prev = stream;
  else
    session->sched_tail[u] = stream;
}

/* Unlinks an ACTIVE stream; the caller sets its next data_state. */
void speedy_sched_remove(speedy_session *session, speedy_stream *stream) {
  int u = stream->urgency;
  if (stream->sched_prev != NULL)
    stream->sched_prev->sched_next = stream->sched_next;
  else
    session->sched_head[u] = stream->sched_next;
  if (stream->sched_next != NULL)
    stream->sched_next->sched_prev = stream->sched_prev;
  else
    session->sched_tail[u] = stream->sched_prev;
  stream->sched_prev = stream->sched_next = NULL;
  stream->data_state = SPEEDY_DATA_NONE;
}

/* After a frame, an incremental stream goes to the back of its urgency list (round robin);
 * one sent in order keeps its place until it is done. */
static void sched_rotate(speedy_session *session, speedy_stream *stream) {
  if (!stream->incremental || session->sched_tail[stream->urgency] == stream) return;
  speedy_sched_remove(session, stream);
  speedy_sched_add(session, stream);
}

/* ---- queued frames ------------------------------------------------------------------ */

static int is_opening(const speedy_outframe *frame) {
  return frame->kind == SPEEDY_OUT_HEADERS &&
         (frame->role == SPEEDY_BLOCK_REQUEST || frame->role == SPEEDY_BLOCK_PUSH);
}

/* What serialising a header block means for its stream. */
static int after_header_frame(speedy_session *session, const speedy_outframe *frame) {
  speedy_stream *stream = speedy_stream_find(session, frame->stream_id);
  if (stream == NULL) return 0; /* reset while the frame was queued */
  if (!speedy_session_is_peer_id(session, frame->stream_id) &&
      frame->stream_id > session->highest_local_on_wire)
    session->highest_local_on_wire = frame->stream_id;
  /* A promise puts the stream's id on the wire; it opens with its own header block. */
  if (frame->role == SPEEDY_BLOCK_PROMISE) {
    stream->opened_on_wire = 1;
    return 0;
  }
  if (is_opening(frame)) {
    stream->opened_on_wire = 1;
    stream->reserved = 0;
  }
  /* The body may start once the opening frame is out. */
  int opening = frame->role == SPEEDY_BLOCK_RESPONSE || is_opening(frame);
  if (opening && stream->data_state == SPEEDY_DATA_WAITING) speedy_sched_add(session, stream);
  /* Done in both directions: it waited only for this frame to go out. */
  return speedy_stream_close_if_done(session, stream);
}

/* Every frame is checked again when it is serialised, not only when it was submitted:
 * while it waited its stream may have been closed or reset, or a GOAWAY may have been
 * sent or received. Returns 0 if the frame may go out, or why it may not:
 * - header blocks: their stream must still exist (a frame on a closed stream is the
 *   peer's protocol error), and no new stream opens after the peer's GOAWAY; a promise
 *   goes only on a stream we have not finished;
 * - WINDOW_UPDATE for a stream the peer has finished sending on is useless, and strict
 *   peers (spdy-transport) answer it with RST_STREAM INVALID_STREAM.
 * Header blocks are compressed only here, so a dropped frame leaves the compression
 * context untouched. */
static int frame_check_at_serialisation(const speedy_session *session,
                                        const speedy_outframe *frame) {
  const speedy_stream *stream;
  switch (frame->kind) {
  case SPEEDY_OUT_HEADERS:
    if (is_opening(frame) && session->goaway_received) return SPEEDY_ERR_SESSION_CLOSING;
    if (frame->role == SPEEDY_BLOCK_PROMISE) {
      if (session->goaway_received) return SPEEDY_ERR_SESSION_CLOSING;
      stream = speedy_stream_find(session, frame->associated_id);
      if (stream == NULL || stream->local_closed) return SPEEDY_ERR_STREAM_CLOSED;
    }
    return speedy_stream_find(session, frame->stream_id) != NULL ? 0 : SPEEDY_ERR_STREAM_CLOSED;
  case SPEEDY_OUT_WINDOW_UPDATE:
    if (frame->stream_id == 0) return 0;
    stream = speedy_stream_find(session, frame->stream_id);
    return stream == NULL || stream->remote_closed ? SPEEDY_ERR_STREAM_CLOSED : 0;
  default:
    return 0;
  }
}

static int serialise_control(speedy_session *session, speedy_outframe *frame) {
  if (frame->kind == SPEEDY_OUT_HEADERS) {
    speedy_stream *stream = speedy_stream_find(session, frame->stream_id);
    if (stream != NULL && stream->headers_queued > 0) stream->headers_queued--;
  }
  int rv = frame_check_at_serialisation(session, frame);
  if (rv == 0 && session->codec->check_frame != NULL)
    rv = session->codec->check_frame(session, frame);
  if (rv != 0) {
    if (session->callbacks.on_frame_not_sent != NULL)
      session->callbacks.on_frame_not_sent(session, session->codec->frame_type(frame),
                                           frame->stream_id, rv, session->user);
    /* A stream that can no longer open is refused, so the application may retry it. */
    speedy_stream *stream = speedy_stream_find(session, frame->stream_id);
    if (rv == SPEEDY_ERR_SESSION_CLOSING && stream != NULL)
      return speedy_stream_close(session, stream, SPEEDY_RST_REFUSED_STREAM);
    if (frame->role == SPEEDY_BLOCK_PROMISE && stream != NULL)
      return speedy_stream_close(session, stream, SPEEDY_RST_CANCEL); /* never promised */
    return 0;
  }
  rv = session->codec->serialise(session, frame);
  if (frame->kind != SPEEDY_OUT_HEADERS) return rv;
  if (rv == SPEEDY_ERR_FRAME_TOO_LARGE) {
    /* The block did not fit and compression was not touched: only this stream fails. */
    speedy_stream *stream = speedy_stream_find(session, frame->stream_id);
    rv = stream != NULL && stream->opened_on_wire
             ? speedy_queue_rst(session, frame->stream_id, SPEEDY_RST_INTERNAL_ERROR, 0)
             : 0;
    if (rv == 0 && stream != NULL)
      rv = speedy_stream_close(session, stream, SPEEDY_RST_INTERNAL_ERROR);
    return rv;
  }
  return rv == 0 ? after_header_frame(session, frame) : rv;
}

/* ---- DATA -------------------------------------------------------------------------- */

static speedy_stream *next_data_stream(const speedy_session *session) {
  for (int u = 0; u < SPEEDY_URGENCY_LEVELS; u++)
    if (session->sched_head[u] != NULL) return session->sched_head[u];
  return NULL;
}

/* Hands a zero-copy frame to the application. A stream whose last frame this was closes
 * only now, because on_stream_close may free the source on_send_data still needs. The
 * octets the application wrote count towards what speedy_session_peek_output was asked
 * for (session->nocopy_written), so zero-copy output is bounded like copied output. */
static int emit_nocopy(speedy_session *session) {
  int32_t id = session->nocopy_stream_id;
  session->nocopy_stream_id = 0;
  if (session->callbacks.on_send_data == NULL) return SPEEDY_ERR_CALLBACK_FAILURE;
  if (session->callbacks.on_send_data(session, id, session->nocopy_header, session->nocopy_len,
                                      session->nocopy_source, session->user) != 0)
    return SPEEDY_ERR_CALLBACK_FAILURE;
  session->nocopy_written += session->caps.data_header_len + session->nocopy_len;
  speedy_stream *stream = speedy_stream_find(session, id);
  return stream != NULL ? speedy_stream_close_if_done(session, stream) : 0;
}

/* May a zero-copy frame be written now? Not while speedy_session_send holds copied bytes
 * the application has not written yet: they come first. */
static int nocopy_can_emit(const speedy_session *session) {
  return session->nocopy_stream_id != 0 && speedy_buf_len(&session->outbuf) == 0 &&
         !session->send_holding;
}

/* Produces one DATA frame. Returns 1 when it made progress, 0 when nothing can be sent,
 * or a negative fatal error. */
static int produce_data(speedy_session *session) {
  speedy_stream *stream = next_data_stream(session);
  if (stream == NULL) return 0;
  if (session->caps.session_window && session->session_send_window <= 0 &&
      session->codec->send_window_exhausted != NULL) {
    int rv = session->codec->send_window_exhausted(session);
    if (rv != 0) return rv;
  }
  int session_window = session->caps.session_window;
  if (session_window && session->session_send_window <= 0) return 0;
  int64_t max = session->options.data_frame_size;
  if (max > session->send_max_frame) max = session->send_max_frame;
  if (session->caps.flow_control) {
    if (stream->send_window <= 0) {
      speedy_sched_remove(session, stream);
      stream->data_state = SPEEDY_DATA_BLOCKED;
      return 1;
    }
    if (stream->send_window < max) max = stream->send_window;
    if (session_window && session->session_send_window < max) max = session->session_send_window;
  }
  size_t header_len = session->caps.data_header_len;
  int rv = speedy_buf_reserve(&session->outbuf, &session->mem, header_len + (size_t)max);
  if (rv != 0) return rv;
  size_t offset = speedy_buf_len(&session->outbuf);
  int32_t id = stream->id;
  uint32_t flags = 0;
  int closed_before = stream->local_closed;
  session->reading_stream_id = id;
  int64_t n = stream->read_fn(session, id, speedy_buf_tail(&session->outbuf) + header_len,
                              (size_t)max, &flags, stream->source, session->user);
  session->reading_stream_id = 0;
  stream = speedy_stream_find(session, id); /* the callback may have reset it */
  if (stream == NULL || stream->data_state != SPEEDY_DATA_ACTIVE) return 1;
  int eof = (flags & SPEEDY_DATA_FLAG_EOF) != 0;
  /* Trailers submitted from the callback end the stream; the body may not. */
  int trailers = stream->local_closed && !closed_before;
  if (trailers && !eof && n != SPEEDY_ERR_DEFERRED) n = SPEEDY_ERR_INVALID_STATE;
  /* The body ends, but the stream goes on: trailers follow (speedy_submit_headers). */
  int fin = eof && !trailers && !(flags & SPEEDY_DATA_FLAG_NO_END_STREAM);
  if (trailers && n == SPEEDY_ERR_DEFERRED) n = SPEEDY_ERR_INVALID_STATE;
  if (n == SPEEDY_ERR_DEFERRED || (n == 0 && !eof)) {
    speedy_sched_remove(session, stream);
    stream->data_state = SPEEDY_DATA_DEFERRED;
    return 1;
  }
  if (n < 0 || n > max || ((flags & SPEEDY_DATA_FLAG_NO_COPY) && session->nocopy_stream_id != 0)) {
    speedy_sched_remove(session, stream);
    rv = speedy_queue_rst(session, id, SPEEDY_RST_INTERNAL_ERROR, 0);
    if (rv != 0) return rv;
    rv = speedy_stream_close(session, stream, SPEEDY_RST_INTERNAL_ERROR);
    return rv != 0 ? rv : 1;
  }
  if (eof && !fin && n == 0) { /* nothing to send: the body just ends */
    speedy_sched_remove(session, stream);
    return 1;
  }
  if (flags & SPEEDY_DATA_FLAG_NO_COPY) {
    session->codec->data_header(session->nocopy_header, id, fin, (uint32_t)n);
    session->nocopy_stream_id = id;
    session->nocopy_len = (size_t)n;
    session->nocopy_source = stream->source;
  } else {
    session->codec->data_header(speedy_buf_head(&session->outbuf) + offset, id, fin, (uint32_t)n);
    speedy_buf_commit(&session->outbuf, header_len + (size_t)n);
  }
  stream->send_window -= n;
  if (session_window) session->session_send_window -= n;
  speedy_trace(session, 1, SPEEDY_SPDY_FRAME_DATA, fin ? 1 : 0, id, (uint32_t)n, "");
  if (eof) {
    speedy_sched_remove(session, stream);
    if (fin) stream->local_closed = 1;
    if (fin) { /* a zero-copy frame still to be written keeps it open (close_if_done) */
      rv = speedy_stream_close_if_done(session, stream);
      if (rv != 0) return rv;
    }
  } else {
    sched_rotate(session, stream);
  }
  /* A zero-copy frame behind buffered bytes waits until they are written. */
  if (nocopy_can_emit(session)) {
    rv = emit_nocopy(session);
    if (rv != 0) return rv;
  }
  return 1;
}

/* ---- public output API ------------------------------------------------------------- */

static int fill_output(speedy_session *session, size_t want) {
  session->nocopy_written = 0;
  if (nocopy_can_emit(session)) {
    int rv = emit_nocopy(session);
    if (rv != 0) return rv;
  }
  while (speedy_buf_len(&session->outbuf) + session->nocopy_written < want) {
    /* A zero-copy DATA frame the application has not written yet comes before anything
     * queued after it (trailers submitted from its read callback, say). */
    if (session->nocopy_stream_id != 0) break;
    if (session->ctrl_head != NULL) {
      speedy_outframe *frame = session->ctrl_head;
      session->ctrl_head = frame->next;
      if (session->ctrl_head == NULL) session->ctrl_tail = NULL;
      if (frame->peer_owed) session->n_ctrl_owed--;
      int rv = serialise_control(session, frame);
      speedy_outframe_free(session, frame);
      if (rv != 0) return rv;
      continue;
    }
    if (session->fatal_error != 0) break;
    int rv = produce_data(session);
    if (rv < 0) return rv;
    if (rv == 0) break;
  }
  return 0;
}

int64_t speedy_session_peek_output(speedy_session *session, const uint8_t **out, size_t max) {
  if (session == NULL || out == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  int rv = fill_output(session, max);
  if (rv != 0) {
    /* Our own failure (memory, compression, a callback): tell the peer and stop. */
    speedy_session_fail(session, rv, SPEEDY_RST_INTERNAL_ERROR);
    (void)fill_output(session, max); /* the GOAWAY, if it could be queued */
    if (speedy_buf_len(&session->outbuf) == 0) return rv;
  }
  size_t len = speedy_buf_len(&session->outbuf);
  *out = speedy_buf_head(&session->outbuf);
  return (int64_t)(len < max ? len : max);
}

void speedy_session_consume_output(speedy_session *session, size_t n) {
  size_t len = speedy_buf_len(&session->outbuf);
  speedy_buf_consume(&session->outbuf, n < len ? n : len);
  /* Idle sessions give their buffers back; busy ones keep them for reuse. */
  if (session->n_streams == 0) speedy_buf_shrink(&session->outbuf, &session->mem, 0);
  speedy_session_trim_idle(session);
}

int64_t speedy_session_send(speedy_session *session, uint8_t *buf, size_t cap) {
  if (session == NULL || (buf == NULL && cap > 0)) return SPEEDY_ERR_INVALID_ARGUMENT;
  size_t copied = 0;
  while (copied < cap) {
    const uint8_t *p;
    session->send_holding = copied > 0;
    int64_t n = speedy_session_peek_output(session, &p, cap - copied);
    if (n < 0) {
      session->send_holding = 0;
      return copied > 0 ? (int64_t)copied : n;
    }
    if (n == 0) break;
    memcpy(buf + copied, p, (size_t)n);
    copied += (size_t)n;
    speedy_session_consume_output(session, (size_t)n);
    if (session->nocopy_stream_id != 0) break; /* its turn comes in the next call */
  }
  session->send_holding = 0;
  return (int64_t)copied;
}
