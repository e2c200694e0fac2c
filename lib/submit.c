/* submit.c — every speedy_submit_* function: what the application asks the session to send.
 *
 * Submitting never writes bytes: it queues a frame (header lists checked and laid out by
 * the codec, compressed later in output order) or attaches a body source to a stream.
 * Streams we open beyond the peer's MAX_CONCURRENT_STREAMS wait in the pending queue with
 * their opening frame already built; stream ids are assigned at submit time and pending
 * streams start in id order, so ids on the wire always increase.
 */
#include <string.h>

#include "fieldset.h"
#include "session_int.h"

/* Fields the codec cannot even look at. */
static int check_list(const speedy_header *headers, size_t n) {
  if (n > 0 && headers == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < n; i++)
    if (headers[i].name == NULL || headers[i].name_len == 0 ||
        (headers[i].value == NULL && headers[i].value_len > 0))
      return SPEEDY_ERR_INVALID_HEADER;
  return 0;
}

static int prepare(speedy_session *session, speedy_block_role role, const speedy_header *headers,
                   size_t n, speedy_outframe **out) {
  int rv = check_list(headers, n);
  return rv != 0 ? rv : session->codec->prepare_block(session, role, headers, n, out);
}

static int can_open_stream(const speedy_session *session) {
  if (session->fatal_error != 0 || session->goaway_sent || session->goaway_draining ||
      session->goaway_received)
    return SPEEDY_ERR_SESSION_CLOSING;
  if (session->next_stream_id > SPEEDY_MAX_WINDOW_SIZE) return SPEEDY_ERR_STREAM_ID_EXHAUSTED;
  if (session->n_pending >= session->options.max_pending_streams &&
      session->n_local_open - session->n_pending >= session->remote_max_concurrent)
    return SPEEDY_ERR_TOO_MANY_STREAMS;
  return 0;
}

static uint8_t clamp_urgency(int urgency) {
  return (uint8_t)(urgency < 0 ? 0 : urgency > 7 ? 7 : urgency);
}

/* Opens a locally initiated stream: its opening frame goes out now or waits for a
 * concurrency slot; a promise (HTTP/2 push) goes out at once. Takes ownership of both. */
static int32_t open_local_stream(speedy_session *session, speedy_outframe *syn,
                                 speedy_outframe *promise, int urgency, speedy_data_read_fn read_fn,
                                 void *source, void *stream_user) {
  int32_t id = (int32_t)session->next_stream_id;
  speedy_pending *pending = speedy_mem_calloc(&session->mem, 1, sizeof(*pending));
  speedy_stream *stream = pending != NULL ? speedy_stream_create(session, id, 1) : NULL;
  if (stream == NULL) {
    speedy_mem_free(&session->mem, pending);
    speedy_outframe_free(session, syn);
    if (promise != NULL) speedy_outframe_free(session, promise);
    return SPEEDY_ERR_NOMEM;
  }
  session->next_stream_id += 2;
  stream->urgency = clamp_urgency(urgency);
  stream->incremental = session->caps.incremental_default;
  stream->user = stream_user;
  stream->read_fn = read_fn;
  stream->source = source;
  stream->data_state = read_fn != NULL ? SPEEDY_DATA_WAITING : SPEEDY_DATA_NONE;
  if (read_fn == NULL) stream->local_closed = 1;
  stream->head_request = syn->head_request;
  if (syn->role == SPEEDY_BLOCK_PUSH) {
    stream->remote_closed = 1; /* a push is one-way */
    stream->associated_id = syn->associated_id;
  }
  syn->stream_id = id;
  stream->waiting_slot = 1;
  if (promise != NULL) {
    stream->reserved = 1;
    promise->stream_id = id;
    int rv = speedy_queue_control(session, promise, 0);
    if (rv != 0) {
      speedy_mem_free(&session->mem, pending);
      speedy_outframe_free(session, syn);
      (void)speedy_stream_close(session, stream, SPEEDY_RST_INTERNAL_ERROR);
      return rv;
    }
  }
  pending->syn = syn;
  if (session->pending_tail != NULL)
    session->pending_tail->next = pending;
  else
    session->pending_head = pending;
  session->pending_tail = pending;
  session->n_pending++;
  int rv = speedy_session_start_pending(session);
  return rv != 0 ? rv : id;
}

int32_t speedy_submit_request(speedy_session *session, int urgency, const speedy_header *headers,
                              size_t n_headers, speedy_data_read_fn read_fn, void *source,
                              void *stream_user) {
  if (session == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPEEDY_ROLE_CLIENT) return SPEEDY_ERR_INVALID_STATE;
  speedy_outframe *syn = NULL;
  int rv = prepare(session, SPEEDY_BLOCK_REQUEST, headers, n_headers, &syn);
  if (rv != 0) return rv;
  rv = can_open_stream(session);
  if (rv != 0) {
    speedy_outframe_free(session, syn);
    return rv;
  }
  syn->end_stream = read_fn == NULL;
  syn->urgency = clamp_urgency(urgency);
  return open_local_stream(session, syn, NULL, urgency, read_fn, source, stream_user);
}

/* Answers stream_id with headers, or with set when it is not NULL. */
static int respond(speedy_session *session, int32_t stream_id, const speedy_header *headers,
                   size_t n_headers, speedy_fieldset *set, speedy_data_read_fn read_fn,
                   void *source) {
  if (session == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPEEDY_ROLE_SERVER) return SPEEDY_ERR_INVALID_STATE;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  if (stream->locally_initiated || stream->reply_done) return SPEEDY_ERR_INVALID_STATE;
  if (stream->local_closed) return SPEEDY_ERR_STREAM_CLOSED;
  speedy_outframe *reply = NULL;
  int rv;
  if (set != NULL && session->codec->prepare_fieldset != NULL)
    rv = session->codec->prepare_fieldset(session, set, &reply);
  else if (set != NULL)
    rv = prepare(session, SPEEDY_BLOCK_RESPONSE, set->headers, set->n, &reply);
  else
    rv = prepare(session, SPEEDY_BLOCK_RESPONSE, headers, n_headers, &reply);
  if (rv != 0) return rv;
  if (read_fn != NULL && reply->no_content) { /* the peer would reset the stream */
    speedy_outframe_free(session, reply);
    return SPEEDY_ERR_INVALID_HEADER;
  }
  reply->stream_id = stream_id;
  reply->end_stream = read_fn == NULL;
  rv = speedy_queue_control(session, reply, 0);
  if (rv != 0) return rv;
  stream->reply_done = 1;
  stream->read_fn = read_fn;
  stream->source = source;
  if (read_fn != NULL) {
    stream->data_state = SPEEDY_DATA_WAITING;
  } else {
    stream->local_closed = 1; /* closes for good once the response is serialised */
  }
  return 0;
}

int speedy_submit_response(speedy_session *session, int32_t stream_id, const speedy_header *headers,
                           size_t n_headers, speedy_data_read_fn read_fn, void *source) {
  return respond(session, stream_id, headers, n_headers, NULL, read_fn, source);
}

int speedy_submit_response_fieldset(speedy_session *session, int32_t stream_id,
                                    speedy_fieldset *set, speedy_data_read_fn read_fn,
                                    void *source) {
  if (set == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  return respond(session, stream_id, NULL, 0, set, read_fn, source);
}

int32_t speedy_submit_push(speedy_session *session, int32_t associated_id, int urgency,
                           const speedy_header *request_headers, size_t n_request,
                           const speedy_header *response_headers, size_t n_response,
                           speedy_data_read_fn read_fn, void *source, void *stream_user) {
  if (session == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPEEDY_ROLE_SERVER) return SPEEDY_ERR_INVALID_STATE;
  speedy_stream *assoc = speedy_stream_find(session, associated_id);
  if (assoc == NULL || assoc->locally_initiated) return SPEEDY_ERR_STREAM_NOT_FOUND;
  if (assoc->local_closed) return SPEEDY_ERR_STREAM_CLOSED; /* before its FIN */
  int rv = check_list(request_headers, n_request);
  if (rv == 0) rv = check_list(response_headers, n_response);
  if (rv != 0) return rv;
  speedy_outframe *promise = NULL, *open = NULL;
  rv = session->codec->prepare_push(session, request_headers, n_request, response_headers,
                                    n_response, &promise, &open);
  if (rv != 0) return rv;
  rv = read_fn != NULL && open->no_content ? SPEEDY_ERR_INVALID_HEADER : can_open_stream(session);
  if (rv != 0) {
    speedy_outframe_free(session, open);
    if (promise != NULL) speedy_outframe_free(session, promise);
    return rv;
  }
  open->end_stream = read_fn == NULL;
  open->associated_id = associated_id;
  open->urgency = clamp_urgency(urgency);
  if (promise != NULL) promise->associated_id = associated_id;
  return open_local_stream(session, open, promise, urgency, read_fn, source, stream_user);
}

int speedy_submit_headers(speedy_session *session, int32_t stream_id, const speedy_header *headers,
                          size_t n_headers, int end_stream) {
  if (session == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  if (stream->local_closed) return SPEEDY_ERR_STREAM_CLOSED;
  /* Its opening frame has not gone out: a HEADERS frame would arrive first. */
  if (stream->waiting_slot) return SPEEDY_ERR_INVALID_STATE;
  /* A FIN on HEADERS would overtake the body still queued behind it — except trailers
   * from the body's own read callback, in the call that ends the body. */
  if (end_stream && stream->data_state != SPEEDY_DATA_NONE &&
      session->reading_stream_id != stream_id)
    return SPEEDY_ERR_INVALID_STATE;
  speedy_block_role role = SPEEDY_BLOCK_EXTRA;
  /* Where only trailers may follow the head (HTTP/2), a block must end the stream. */
  if (!end_stream && !session->caps.extra_headers &&
      (stream->locally_initiated || stream->reply_done))
    return SPEEDY_ERR_INVALID_STATE;
  if (!stream->locally_initiated && !stream->reply_done) {
    /* Before the response only an informational one (1xx) may go, where there are any. */
    if (!session->caps.informational || end_stream) return SPEEDY_ERR_INVALID_STATE;
    role = SPEEDY_BLOCK_INFORMATIONAL;
  }
  speedy_outframe *frame = NULL;
  int rv = prepare(session, role, headers, n_headers, &frame);
  if (rv != 0) return rv;
  frame->stream_id = stream_id;
  frame->end_stream = end_stream != 0;
  rv = speedy_queue_control(session, frame, 0);
  if (rv == 0 && end_stream) stream->local_closed = 1;
  return rv;
}

int speedy_submit_rst(speedy_session *session, int32_t stream_id, uint32_t status) {
  if (session == NULL || stream_id <= 0 || status == SPEEDY_RST_NONE ||
      !session->codec->reason_allowed(session, status))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  /* Never on the wire (no promise either): nothing to reset there. */
  if (speedy_session_drop_pending(session, stream_id) && !stream->reserved)
    return speedy_stream_close(session, stream, status);
  /* A reset submitted from a callback during speedy_session_recv answers the peer's input
   * (refusing its pushes, say): it counts against the flood cap like the engine's own. */
  int rv = speedy_queue_rst(session, stream_id, status, session->in_recv);
  if (rv == SPEEDY_ERR_FLOOD) return speedy_session_fail_with(session, rv);
  if (rv != 0) return rv;
  return speedy_stream_close(session, stream, status);
}

int speedy_submit_ping(speedy_session *session, uint32_t *id_out) {
  if (session == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  int slot = -1;
  for (int i = 0; i < SPEEDY_MAX_OUTSTANDING_PINGS; i++)
    if (session->pings[i].id == 0) {
      slot = i;
      break;
    }
  if (slot < 0) return SPEEDY_ERR_INVALID_STATE; /* too many unanswered pings */
  uint32_t id = session->next_ping_id;
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_PING, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->value = id;
  int rv = speedy_queue_control(session, frame, 0);
  if (rv != 0) return rv;
  session->next_ping_id += 2;
  if (session->next_ping_id == 0 || session->next_ping_id == 1)
    session->next_ping_id = session->role == SPEEDY_ROLE_CLIENT ? 1 : 2;
  session->pings[slot].id = id;
  session->pings[slot].sent_ns = session->now_ns;
  if (id_out != NULL) *id_out = id;
  return 0;
}

int speedy_submit_goaway(speedy_session *session, uint32_t reason, const uint8_t *debug,
                         size_t debug_len) {
  if (session == NULL || reason > SPEEDY_RST_HTTP_1_1_REQUIRED || (debug == NULL && debug_len > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->goaway_sent) return SPEEDY_ERR_SESSION_CLOSING;
  if (reason == SPEEDY_RST_NONE && session->codec->shutdown != NULL && !session->goaway_draining)
    return session->codec->shutdown(session);
  return speedy_queue_goaway_bytes(session, reason, debug, debug_len);
}

/* The peer moves every stream window by the change of INITIAL_WINDOW_SIZE: refuse a rise
 * that would take a window we granted past 2^31-1 (the peer's view of it is at most our
 * recv_window, which also counts DATA still in flight). Streams the peer has finished
 * sending on do not count: their window no longer matters to it. */
static int check_initial_window_change(const speedy_session *session,
                                       const speedy_setting *settings, size_t n_settings) {
  if (!session->caps.flow_control) return 0;
  int64_t largest_rise = 0;
  for (size_t i = 0; i < n_settings; i++) {
    if (settings[i].id != SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE) continue;
    int64_t rise = (int64_t)settings[i].value - session->local_initial_window;
    if (rise > largest_rise) largest_rise = rise;
  }
  if (largest_rise == 0) return 0;
  for (uint32_t b = 0; b < session->n_buckets; b++)
    for (const speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
      if (!s->remote_closed && s->recv_window + largest_rise > SPEEDY_MAX_WINDOW_SIZE)
        return SPEEDY_ERR_WINDOW_OVERFLOW;
  return 0;
}

int speedy_submit_settings(speedy_session *session, uint8_t frame_flags,
                           const speedy_setting *settings, size_t n_settings) {
  if (session == NULL || n_settings > SPEEDY_SETTINGS_MAX_ID + 1 ||
      (n_settings > 0 && settings == NULL))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  int rv = session->codec->check_settings(session, settings, n_settings);
  if (rv != 0) return rv;
  /* The peer honours only the first value of an id (SPDY/3 2.6.4), we would apply the
   * last: the two sides would disagree, so a list naming an id twice is refused. */
  for (size_t i = 0; i < n_settings; i++)
    for (size_t j = 0; j < i; j++)
      if (settings[j].id == settings[i].id) return SPEEDY_ERR_INVALID_ARGUMENT;
  rv = check_initial_window_change(session, settings, n_settings);
  if (rv != 0) return rv;
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_SETTINGS, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->flags = frame_flags;
  frame->n_settings = (uint8_t)n_settings;
  if (n_settings > 0) memcpy(frame->settings, settings, n_settings * sizeof(*settings));
  rv = speedy_queue_control(session, frame, 0);
  if (rv != 0) return rv;
  /* Our own limits apply from now on (the peer learns them with this frame), unless the
   * protocol has the peer acknowledge them first. */
  if (!session->caps.settings_acked) {
    speedy_session_apply_local_settings(session, settings, n_settings);
  } else {
    /* The peer applies a larger window as it reads the frame, before we see its ACK. */
    for (size_t i = 0; i < n_settings; i++)
      if (settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE &&
          settings[i].value > session->max_local_initial_window)
        session->max_local_initial_window = settings[i].value;
  }
  return 0;
}

int speedy_submit_priority_update(speedy_session *session, int32_t stream_id, uint8_t urgency,
                                  int incremental) {
  if (session == NULL || stream_id <= 0 || urgency >= SPEEDY_URGENCY_LEVELS)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  if (session->protocol != SPEEDY_PROTOCOL_H2 || session->role != SPEEDY_ROLE_CLIENT)
    return SPEEDY_ERR_INVALID_STATE;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL || speedy_session_is_peer_id(session, stream_id))
    return SPEEDY_ERR_STREAM_NOT_FOUND;
  /* Not for an idle stream of the peer's count (RFC 9218 7.1 lets it refuse more than its
   * MAX_CONCURRENT_STREAMS of them): a waiting stream's goes out after its HEADERS. */
  if (stream->waiting_slot) {
    stream->priority_owed = (uint8_t)(0x80 | (incremental ? 8 : 0) | urgency);
    return 0;
  }
  return speedy_queue_priority_update(session, stream_id, urgency, incremental);
}

static uint32_t add_capped(uint32_t a, uint32_t b) {
  return b > SPEEDY_MAX_WINDOW_SIZE - a ? SPEEDY_MAX_WINDOW_SIZE : a + b;
}

int speedy_submit_window_update(speedy_session *session, int32_t stream_id, uint32_t delta) {
  if (session == NULL || delta == 0 || delta > SPEEDY_MAX_WINDOW_SIZE || stream_id < 0)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  if (!session->caps.flow_control) return SPEEDY_ERR_INVALID_STATE;
  if (stream_id == 0) {
    if (!session->caps.session_window) return SPEEDY_ERR_INVALID_STATE;
    if (session->session_recv_window + delta > SPEEDY_MAX_WINDOW_SIZE)
      return SPEEDY_ERR_WINDOW_OVERFLOW;
    int rv = speedy_queue_window_update(session, 0, delta);
    if (rv == 0) {
      session->session_recv_window += delta;
      session->session_recv_granted = add_capped(session->session_recv_granted, delta);
    }
    return rv;
  }
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  if (stream->waiting_slot) return SPEEDY_ERR_INVALID_STATE; /* not on the wire yet */
  /* The peer may already apply a larger INITIAL_WINDOW_SIZE we announced (HTTP/2: before
   * its acknowledgement reaches us; SPDY: after we lowered it): its view of the window is
   * larger than ours by the difference, and must not pass 2^31-1 either (6.9.1). */
  int64_t slack = (int64_t)session->max_local_initial_window - session->local_initial_window;
  if (slack < 0) slack = 0;
  if (stream->recv_window + slack + delta > SPEEDY_MAX_WINDOW_SIZE)
    return SPEEDY_ERR_WINDOW_OVERFLOW;
  int rv = speedy_queue_window_update(session, stream_id, delta);
  if (rv == 0) {
    stream->recv_window += delta;
    stream->recv_granted = add_capped(stream->recv_granted, delta);
  }
  return rv;
}
