/* session_recv.c — the input side's protocol-neutral part: speedy_session_recv hands bytes
 * to the codec's parser, and the codec calls these helpers for what frames mean to
 * streams, windows and the application (session_int.h lists them).
 *
 * DATA payload is passed to the application as it arrives, never buffered. A peer's
 * stream error becomes RST_STREAM; a session error becomes GOAWAY and a fatal return value.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "session_int.h"

int speedy_session_fail_with(speedy_session *session, int error) {
  if (error == SPEEDY_ERR_CALLBACK_FAILURE || error == SPEEDY_ERR_NOMEM)
    return speedy_session_fail(session, error, SPEEDY_RST_INTERNAL_ERROR);
  if (error == SPEEDY_ERR_FLOOD)
    return speedy_session_fail(session, error, SPEEDY_RST_ENHANCE_YOUR_CALM);
  return speedy_session_fail(session, error, SPEEDY_RST_PROTOCOL_ERROR);
}

static int fail_callback(speedy_session *session) {
  return speedy_session_fail(session, SPEEDY_ERR_CALLBACK_FAILURE, SPEEDY_RST_INTERNAL_ERROR);
}

int speedy_session_reset_stream(speedy_session *session, int32_t stream_id, uint32_t reason) {
  int rv = speedy_queue_rst(session, stream_id, reason, 1);
  if (rv != 0) return speedy_session_fail_with(session, rv);
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return 0;
  speedy_session_drop_pending(session, stream_id);
  rv = speedy_stream_close(session, stream, reason);
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

void speedy_session_trace_recv(speedy_session *session, int type, uint8_t flags, int32_t stream_id,
                               uint32_t length, const char *format, ...) {
  if (session->callbacks.on_frame == NULL) return;
  char summary[64] = "";
  if (session->options.frame_summaries) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(summary, sizeof(summary), format, ap);
    va_end(ap);
  }
  speedy_trace(session, 0, type, flags, stream_id, length, summary);
}

/* ---- header blocks ----------------------------------------------------------------- */

int speedy_session_emit_begin(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                              int32_t associated_id) {
  const speedy_callbacks *cb = &session->callbacks;
  if (cb->on_begin_headers != NULL &&
      cb->on_begin_headers(session, stream_id, kind, associated_id, session->user) != 0)
    return fail_callback(session);
  return 0;
}

int speedy_session_emit_field(speedy_session *session, int32_t stream_id,
                              const speedy_header *field) {
  if (session->callbacks.on_header == NULL) return 0;
  if (session->callbacks.on_header(session, stream_id, field, session->user) != 0)
    return fail_callback(session);
  return 0;
}

int speedy_session_emit_end(speedy_session *session, int32_t stream_id, int end_stream) {
  const speedy_callbacks *cb = &session->callbacks;
  if (cb->on_headers_end != NULL &&
      cb->on_headers_end(session, stream_id, end_stream, session->user) != 0)
    return fail_callback(session);
  return 0;
}

int speedy_session_settle_stream(speedy_session *session, int32_t stream_id) {
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return 0;
  int rv = speedy_stream_close_if_done(session, stream);
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

/* ---- DATA -------------------------------------------------------------------------- */

void speedy_session_data_start(speedy_session *session, int32_t stream_id, uint32_t payload,
                               int deliver) {
  session->data_stream_id = stream_id;
  session->payload_left = payload;
  session->data_deliver = (uint8_t)(deliver != 0);
  session->data_credit = 0;
}

int speedy_session_data_chunk(speedy_session *session, const uint8_t *p, size_t n) {
  int32_t id = session->data_stream_id;
  int paused = 0;
  speedy_stream *stream = session->data_deliver ? speedy_stream_find(session, id) : NULL;
  if (stream == NULL) { /* not delivered, or reset by a callback during this frame */
    session->data_deliver = 0;
    session->data_credit += (uint32_t)n; /* dead stream: only the session window */
    return 0;
  }
  /* Manual flow control: what the application may consume (speedy_session_consume credits
   * no more, or the peer's window would pass what it sent and 2^31-1). */
  if (session->options.manual_flow_control) stream->recv_held += (uint32_t)n;
  if (session->callbacks.on_data_chunk != NULL && n > 0) {
    session->in_data_chunk = 1;
    int rv = session->callbacks.on_data_chunk(session, id, p, n, session->user);
    session->in_data_chunk = 0;
    if (rv == SPEEDY_ERR_PAUSE)
      paused = 1;
    else if (rv != 0)
      return fail_callback(session);
  }
  if (!session->options.manual_flow_control) session->data_credit += (uint32_t)n;
  return paused ? SPEEDY_ERR_PAUSE : 0;
}

int speedy_session_data_end(speedy_session *session, int end_stream, uint32_t extra_credit) {
  int32_t id = session->data_stream_id;
  /* Credit once per frame, so WINDOW_UPDATEs do not depend on how input was split. */
  int rv = speedy_session_credit(session, id, (size_t)session->data_credit + extra_credit);
  session->data_credit = 0;
  if (rv != 0) return speedy_session_fail_with(session, rv);
  if (!end_stream || !session->data_deliver) return 0;
  speedy_stream *stream = speedy_stream_find(session, id);
  if (stream == NULL) return 0;
  stream->remote_closed = 1;
  if (session->callbacks.on_data_end != NULL &&
      session->callbacks.on_data_end(session, id, session->user) != 0)
    return fail_callback(session);
  return speedy_session_settle_stream(session, id);
}

/* ---- PING, GOAWAY, windows, settings ----------------------------------------------- */

int speedy_session_ping_acked(speedy_session *session, uint32_t id) {
  for (int i = 0; i < SPEEDY_MAX_OUTSTANDING_PINGS; i++) {
    if (session->pings[i].id != id || id == 0) continue;
    int64_t rtt = session->now_ns - session->pings[i].sent_ns;
    session->pings[i].id = 0;
    if (session->callbacks.on_ping_ack != NULL &&
        session->callbacks.on_ping_ack(session, id, rtt, session->user) != 0)
      return fail_callback(session);
    break;
  }
  return 0; /* an answer to a ping we never sent is ignored */
}

int speedy_session_goaway_received(speedy_session *session, int32_t last_id) {
  session->goaway_received = 1;
  if (session->callbacks.on_goaway != NULL &&
      session->callbacks.on_goaway(session, last_id, session->goaway_reason, session->user) != 0)
    return fail_callback(session);
  /* Our streams above last_id were never processed, and those still waiting for a slot
   * never will be (none may open now, whatever last_id says): refuse them so they can be
   * retried. Collect ids in small batches because closing changes the table. */
  for (;;) {
    int32_t batch[32];
    size_t n = 0;
    for (uint32_t b = 0; b < session->n_buckets && n < 32; b++)
      for (speedy_stream *s = session->buckets[b]; s != NULL && n < 32; s = s->hash_next)
        if (s->locally_initiated && (s->id > last_id || s->waiting_slot)) batch[n++] = s->id;
    if (n == 0) break;
    for (size_t i = 0; i < n; i++) {
      speedy_stream *s = speedy_stream_find(session, batch[i]);
      if (s == NULL) continue;
      speedy_session_drop_pending(session, batch[i]);
      int rv = speedy_stream_close(session, s, SPEEDY_RST_REFUSED_STREAM);
      if (rv != 0) return speedy_session_fail_with(session, rv);
    }
  }
  return 0;
}

int speedy_session_window_update(speedy_session *session, int32_t stream_id, uint32_t delta) {
  if (stream_id == 0) {
    session->session_send_window += delta;
  } else {
    speedy_stream *stream = speedy_stream_find(session, stream_id);
    if (stream == NULL) return 0;
    stream->send_window += delta;
    if (stream->data_state == SPEEDY_DATA_BLOCKED && stream->send_window > 0)
      speedy_sched_add(session, stream);
  }
  if (session->callbacks.on_window_update != NULL &&
      session->callbacks.on_window_update(session, stream_id, delta, session->user) != 0)
    return fail_callback(session);
  return 0;
}

int32_t speedy_session_peer_initial_window(speedy_session *session, uint32_t value,
                                           int count_finished) {
  int64_t delta = (int64_t)value - session->remote_initial_window;
  session->remote_initial_window = value;
  int32_t overflowed = 0;
  for (uint32_t b = 0; b < session->n_buckets; b++) {
    for (speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next) {
      s->send_window += delta; /* may go negative */
      if ((count_finished || !s->local_closed) && s->send_window > SPEEDY_MAX_WINDOW_SIZE)
        overflowed = s->id;
      if (s->data_state == SPEEDY_DATA_BLOCKED && s->send_window > 0) speedy_sched_add(session, s);
    }
  }
  return overflowed;
}

int speedy_session_peer_max_concurrent(speedy_session *session, uint32_t value) {
  session->remote_max_concurrent = value;
  int rv = speedy_session_start_pending(session);
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

int speedy_session_report_setting(speedy_session *session, uint32_t id, uint8_t flags,
                                  uint32_t value) {
  if (session->callbacks.on_setting != NULL &&
      session->callbacks.on_setting(session, id, flags, value, session->user) != 0)
    return fail_callback(session);
  return 0;
}

/* ---- the entry point --------------------------------------------------------------- */

int64_t speedy_session_recv(speedy_session *session, const uint8_t *data, size_t len) {
  if (session == NULL || (data == NULL && len > 0)) return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->fatal_error != 0) return session->fatal_error;
  session->in_recv = 1;
  int64_t rv = session->codec->recv(session, data, len);
  session->in_recv = 0;
  speedy_session_trim_idle(session);
  return rv;
}
