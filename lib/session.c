/* session.c — session lifetime, accessors, the queue of frames to send, flow-control
 * credit and the budgets that meter a peer: the protocol-neutral parts of a session.
 *
 * Frames are queued in neutral terms (codec.h) and written by the codec when they are
 * serialised. The speedy_submit_* functions live in submit.c, input in session_recv.c and
 * the codecs, output in session_send.c.
 */
#include <string.h>

#include "session_int.h"

/* ---- the queue --------------------------------------------------------------------- */

speedy_outframe *speedy_outframe_new(speedy_session *session, int kind, size_t extra) {
  if (extra > SIZE_MAX - sizeof(speedy_outframe)) return NULL;
  speedy_outframe *frame = speedy_mem_malloc(&session->mem, sizeof(speedy_outframe) + extra);
  if (frame == NULL) return NULL;
  memset(frame, 0, sizeof(*frame));
  frame->kind = (uint8_t)kind;
  if (extra > 0) {
    frame->block = (uint8_t *)(frame + 1);
    frame->block_len = extra;
  }
  return frame;
}

void speedy_outframe_free(speedy_session *session, speedy_outframe *frame) {
  speedy_fieldset_release(frame->fieldset);
  speedy_mem_free(&session->mem, frame);
}

int speedy_queue_control(speedy_session *session, speedy_outframe *frame, int peer_owed) {
  if (peer_owed) {
    if (session->n_ctrl_owed >= session->options.max_queued_control_frames) {
      speedy_outframe_free(session, frame);
      return SPEEDY_ERR_FLOOD;
    }
    frame->peer_owed = 1;
    session->n_ctrl_owed++;
  }
  if (frame->kind == SPEEDY_OUT_HEADERS) {
    speedy_stream *stream = speedy_stream_find(session, frame->stream_id);
    if (stream != NULL) stream->headers_queued++;
  }
  frame->next = NULL;
  if (session->ctrl_tail != NULL)
    session->ctrl_tail->next = frame;
  else
    session->ctrl_head = frame;
  session->ctrl_tail = frame;
  return 0;
}

int speedy_queue_priority_update(speedy_session *session, int32_t stream_id, uint8_t urgency,
                                 int incremental) {
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_PRIORITY_UPDATE, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->stream_id = stream_id;
  frame->urgency = urgency;
  frame->flags = incremental ? 1 : 0;
  return speedy_queue_control(session, frame, 0);
}

int speedy_queue_rst(speedy_session *session, int32_t stream_id, uint32_t reason, int peer_owed) {
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_RST, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->stream_id = stream_id;
  frame->reason = reason;
  int rv = speedy_queue_control(session, frame, peer_owed);
  speedy_stream *stream = rv == 0 ? speedy_stream_find(session, stream_id) : NULL;
  if (stream != NULL) stream->reset_sent = 1;
  return rv;
}

int speedy_queue_window_update(speedy_session *session, int32_t stream_id, uint32_t delta) {
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_WINDOW_UPDATE, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->stream_id = stream_id;
  frame->value = delta;
  return speedy_queue_control(session, frame, 0);
}

int speedy_queue_goaway(speedy_session *session, uint32_t reason, const char *debug) {
  return speedy_queue_goaway_bytes(session, reason, (const uint8_t *)debug,
                                   debug != NULL ? strlen(debug) : 0);
}

int speedy_queue_goaway_bytes(speedy_session *session, uint32_t reason, const uint8_t *debug,
                              size_t debug_len) {
  if (session->goaway_sent) return 0;
  if (debug_len > SPEEDY_GOAWAY_DEBUG_MAX) debug_len = SPEEDY_GOAWAY_DEBUG_MAX;
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_GOAWAY, debug_len);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->value = (uint32_t)session->last_recv_stream_id;
  frame->reason = reason;
  if (debug_len > 0) memcpy(frame->block, debug, debug_len);
  session->goaway_sent = 1;
  session->goaway_draining = 0;
  return speedy_queue_control(session, frame, 0);
}

int speedy_session_fail_debug(speedy_session *session, int error, uint32_t reason,
                              const char *debug) {
  if (session->fatal_error == 0) {
    session->fatal_error = error;
    /* Without memory we cannot even queue the GOAWAY; the caller closes anyway. */
    (void)speedy_queue_goaway(session, reason, debug);
  }
  return error;
}

int speedy_session_fail(speedy_session *session, int error, uint32_t reason) {
  return speedy_session_fail_debug(session, error, reason, NULL);
}

/* ---- flow control, settings, budgets ----------------------------------------------- */

int speedy_session_return_session_credit(speedy_session *session) {
  uint64_t window = (uint64_t)session->options.session_window + session->session_recv_granted;
  if (session->hold_session_credit || session->session_recv_unacked < window / 2) return 0;
  uint32_t delta = session->session_recv_unacked;
  int rv = speedy_queue_window_update(session, 0, delta);
  if (rv != 0) return rv;
  session->session_recv_window += delta;
  session->session_recv_unacked = 0;
  return 0;
}

/* Credit is returned once half of the window the stream has is due: half of the initial
 * window plus what the application granted, not of the initial one alone. A stream the
 * application widened would otherwise return every DATA frame with its own
 * WINDOW_UPDATE, and a peer that has closed the stream meets them as a flood. */
static int credit_due(const speedy_session *session, const speedy_stream *stream) {
  return stream->recv_unacked >=
         ((uint64_t)session->local_initial_window + stream->recv_granted) / 2;
}

int speedy_session_credit(speedy_session *session, int32_t stream_id, size_t n) {
  if (n == 0) return 0;
  if (session->caps.session_window) {
    session->session_recv_unacked += (uint32_t)n;
    int rv = speedy_session_return_session_credit(session);
    if (rv != 0) return rv;
  }
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL || stream->remote_closed) return 0;
  stream->recv_unacked += (uint32_t)n;
  if (credit_due(session, stream)) {
    uint32_t delta = stream->recv_unacked;
    /* SPDY/2 has no flow control, but node's spdy-transport applies v3's to v2 and stalls
     * after 64 KiB without WINDOW_UPDATE; other v2 peers ignore the frame type. */
    int rv = speedy_queue_window_update(session, stream_id, delta);
    if (rv != 0) return rv;
    if (session->caps.flow_control) stream->recv_window += delta;
    stream->recv_unacked = 0;
  }
  return 0;
}

void speedy_session_apply_local_settings(speedy_session *session, const speedy_setting *settings,
                                         size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (settings[i].id == SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS)
      session->options.max_concurrent_streams = settings[i].value;
    if (settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE && session->caps.flow_control) {
      int64_t delta = (int64_t)settings[i].value - session->local_initial_window;
      session->local_initial_window = settings[i].value;
      if (settings[i].value > session->max_local_initial_window)
        session->max_local_initial_window = settings[i].value;
      for (uint32_t b = 0; b < session->n_buckets; b++)
        for (speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
          s->recv_window += delta;
      /* A smaller window lowers the threshold of credit returns: what is already due goes
       * now, or a peer whose window went negative would wait for it forever. */
      for (uint32_t b = 0; b < session->n_buckets; b++)
        for (speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
          if (!s->remote_closed && s->recv_unacked > 0 && credit_due(session, s) &&
              speedy_queue_window_update(session, s->id, s->recv_unacked) == 0) {
            s->recv_window += s->recv_unacked;
            s->recv_unacked = 0;
          }
    }
  }
}

int speedy_setting_slot(uint32_t id) {
  if (id >= 1 && id <= SPEEDY_SETTINGS_MAX_ID) return (int)id;
  if (id >= SPEEDY_SETTINGS_HEADER_TABLE_SIZE && id <= SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES)
    return (int)(id - SPEEDY_SETTINGS_HEADER_TABLE_SIZE) + SPEEDY_SETTINGS_MAX_ID + 1;
  return -1;
}

int speedy_budget_take(speedy_session *session, speedy_budget *budget) {
  if (budget->rate > 0 && session->now_ns > budget->refilled_ns) {
    uint64_t elapsed = (uint64_t)(session->now_ns - budget->refilled_ns);
    /* Bounded before multiplying: past a full refill the bucket is simply full. */
    uint64_t full_ns = ((uint64_t)budget->burst / budget->rate + 1) * 1000000000u;
    if (elapsed >= full_ns) {
      budget->tokens = budget->burst;
      budget->refilled_ns = session->now_ns;
    } else {
      uint64_t add = elapsed * budget->rate / 1000000000u;
      if (add > 0) {
        uint64_t tokens = (uint64_t)budget->tokens + add;
        budget->tokens = tokens > budget->burst ? budget->burst : (uint32_t)tokens;
        budget->refilled_ns += (int64_t)(add * 1000000000u / budget->rate);
      }
    }
  }
  if (budget->tokens == 0) return 0;
  budget->tokens--;
  return 1;
}

static void budget_init(speedy_budget *budget, uint32_t burst, uint32_t rate, int64_t now_ns) {
  budget->tokens = burst;
  budget->burst = burst;
  budget->rate = rate;
  budget->refilled_ns = now_ns;
}

void speedy_session_trim_idle(speedy_session *session) {
  if (session->n_streams != 0 || session->in_recv) return;
  speedy_buf_shrink(&session->inbuf, &session->mem, 0);
  if (session->codec->idle != NULL) session->codec->idle(session);
}

void speedy_trace(speedy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                  uint32_t length, const char *summary) {
  if (session->callbacks.on_frame != NULL)
    session->callbacks.on_frame(session, sent, type, flags, stream_id, length,
                                summary != NULL ? summary : "", session->user);
}

int speedy_session_is_peer_id(const speedy_session *session, int32_t id) {
  /* Clients open odd streams, servers even ones. */
  return (id & 1) == (session->role == SPEEDY_ROLE_SERVER ? 1 : 0);
}

/* ---- lifetime ---------------------------------------------------------------------- */

const speedy_codec *speedy_codec_for(speedy_protocol protocol) {
  switch (protocol) {
  case SPEEDY_PROTOCOL_H2:
    return &speedy_h2_codec;
  case SPEEDY_PROTOCOL_SPDY2:
    return &speedy_codec_spdy2;
  case SPEEDY_PROTOCOL_SPDY3:
    return &speedy_codec_spdy3;
  case SPEEDY_PROTOCOL_SPDY3_1:
    return &speedy_codec_spdy31;
  default:
    return NULL;
  }
}

int speedy_session_new(speedy_session **out, speedy_protocol protocol, speedy_role role,
                       const speedy_callbacks *callbacks, const speedy_options *options,
                       void *user) {
  const speedy_codec *codec = speedy_codec_for(protocol);
  if (out == NULL || codec == NULL || (role != SPEEDY_ROLE_CLIENT && role != SPEEDY_ROLE_SERVER))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_options defaults;
  if (options == NULL) {
    speedy_options_init_default(&defaults);
    options = &defaults;
  }
  speedy_mem mem = options->mem;
  mem.in_use = 0;
  speedy_session *session = speedy_mem_calloc(&mem, 1, sizeof(*session));
  if (session == NULL) return SPEEDY_ERR_NOMEM;
  session->mem = mem;
  session->mem.in_use = mem.in_use;
  session->options = *options;
  if (callbacks != NULL) session->callbacks = *callbacks;
  session->user = user;
  session->protocol = protocol;
  session->role = role;
  session->codec = codec;
  session->caps = codec->caps;
  session->next_stream_id = role == SPEEDY_ROLE_CLIENT ? 1 : 2;
  session->next_ping_id = role == SPEEDY_ROLE_CLIENT ? 1 : 2;
  session->remote_max_concurrent = UINT32_MAX;
  session->remote_initial_window = session->caps.default_window;
  session->send_max_frame = session->caps.max_frame_payload;
  for (int i = 0; i < SPEEDY_SETTING_SLOTS; i++) session->remote_settings[i] = -1;
  session->session_send_window = session->caps.default_window;
  session->session_recv_window = session->caps.default_window;
  /* Our stream window is in force at once, unless the peer must acknowledge it first. */
  session->local_initial_window = session->caps.flow_control && !session->caps.settings_acked
                                      ? options->stream_window
                                      : session->caps.default_window;
  session->max_local_initial_window = session->local_initial_window > session->caps.default_window
                                          ? session->local_initial_window
                                          : session->caps.default_window;
  budget_init(&session->reset_budget, options->reset_burst, options->reset_rate, 0);
  budget_init(&session->empty_frame_budget, options->empty_frame_burst, options->empty_frame_rate,
              0);
  speedy_buf_init(&session->outbuf, (size_t)0xffffff + 2 * 1024 * 1024);
  speedy_buf_init(&session->inbuf, options->max_recv_control_frame);

  int rv = speedy_stream_table_init(session);
  if (rv == 0) rv = codec->init(session);
  if (rv == 0) rv = codec->start(session);
  if (rv != 0) {
    speedy_session_del(session);
    return rv;
  }
  *out = session;
  return 0;
}

static void free_pending(speedy_session *session, speedy_pending *pending) {
  speedy_outframe_free(session, pending->syn);
  speedy_mem_free(&session->mem, pending);
}

void speedy_session_del(speedy_session *session) {
  if (session == NULL) return;
  while (session->ctrl_head != NULL) {
    speedy_outframe *next = session->ctrl_head->next;
    speedy_outframe_free(session, session->ctrl_head);
    session->ctrl_head = next;
  }
  while (session->pending_head != NULL) {
    speedy_pending *next = session->pending_head->next;
    free_pending(session, session->pending_head);
    session->pending_head = next;
  }
  if (session->buckets != NULL) speedy_stream_free_all(session);
  speedy_stream_table_free(session);
  speedy_stream_forget_resets(session);
  session->codec->free(session);
  speedy_buf_free(&session->outbuf, &session->mem);
  speedy_buf_free(&session->inbuf, &session->mem);
  speedy_mem mem = session->mem;
  speedy_mem_free(&mem, session);
}

/* ---- accessors --------------------------------------------------------------------- */

speedy_protocol speedy_session_protocol(const speedy_session *session) { return session->protocol; }
speedy_role speedy_session_role(const speedy_session *session) { return session->role; }

uint64_t speedy_session_recv_frames(const speedy_session *session) { return session->recv_frames; }

uint64_t speedy_session_recv_data_bytes(const speedy_session *session) {
  return session->recv_data_bytes;
}

int speedy_session_recv_in_frame(const speedy_session *session) {
  return session->codec->recv_in_frame(session);
}

void *speedy_session_user_data(const speedy_session *session) { return session->user; }
int speedy_session_set_now(speedy_session *session, int64_t now_ns) {
  session->now_ns = now_ns;
  if (session->fatal_error != 0 || session->codec->tick == NULL) return 0;
  return session->codec->tick(session);
}

size_t speedy_session_data_header_length(const speedy_session *session) {
  return session->caps.data_header_len;
}

int64_t speedy_session_goaway_reason(const speedy_session *session, const uint8_t **debug,
                                     size_t *debug_len) {
  if (debug != NULL) *debug = session->goaway_debug;
  if (debug_len != NULL) *debug_len = session->goaway_debug_len;
  return session->goaway_received ? (int64_t)session->goaway_reason : -1;
}

int speedy_session_set_stream_user_data(speedy_session *session, int32_t stream_id, void *data) {
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  stream->user = data;
  return 0;
}

void *speedy_session_get_stream_user_data(const speedy_session *session, int32_t stream_id) {
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream != NULL) return stream->user;
  if (stream_id != 0 && stream_id == session->closing_stream_id)
    return session->closing_stream_user;
  return NULL;
}

int64_t speedy_session_remote_setting(const speedy_session *session, uint32_t id) {
  int slot = speedy_setting_slot(id);
  return slot >= 0 ? session->remote_settings[slot] : -1;
}

int64_t speedy_session_send_window(const speedy_session *session, int32_t stream_id) {
  if (stream_id == 0) return session->caps.session_window ? session->session_send_window : -1;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  return stream != NULL ? stream->send_window : -1;
}

int64_t speedy_session_recv_window(const speedy_session *session, int32_t stream_id) {
  if (stream_id == 0) return session->caps.session_window ? session->session_recv_window : -1;
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  return stream != NULL ? stream->recv_window : -1;
}

uint32_t speedy_session_open_streams(const speedy_session *session) {
  return session->n_streams - session->n_pending;
}

uint32_t speedy_session_pending_streams(const speedy_session *session) {
  return session->n_pending;
}

size_t speedy_session_memory(const speedy_session *session) { return session->mem.in_use; }

int speedy_session_want_read(const speedy_session *session) {
  if (session->fatal_error != 0) return 0;
  /* After GOAWAY in either direction the session ends once its streams have. */
  if ((session->goaway_sent || session->goaway_received) && session->n_streams == 0) return 0;
  return 1;
}

int speedy_session_want_write(const speedy_session *session) {
  if (speedy_buf_len(&session->outbuf) > 0 || session->ctrl_head != NULL ||
      session->nocopy_stream_id != 0)
    return 1;
  if (session->fatal_error != 0) return 0;
  for (int u = 0; u < SPEEDY_URGENCY_LEVELS; u++)
    if (session->sched_head[u] != NULL &&
        (!session->caps.session_window || session->session_send_window > 0))
      return 1;
  return 0;
}

int speedy_session_resume_data(speedy_session *session, int32_t stream_id) {
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return SPEEDY_ERR_STREAM_NOT_FOUND;
  if (stream->data_state != SPEEDY_DATA_DEFERRED) return SPEEDY_ERR_INVALID_STATE;
  speedy_sched_add(session, stream);
  return 0;
}

int speedy_session_consume(speedy_session *session, int32_t stream_id, size_t n) {
  if (!session->options.manual_flow_control) return SPEEDY_ERR_INVALID_STATE;
  if (stream_id < 0) return SPEEDY_ERR_INVALID_ARGUMENT;
  /* Only what was delivered and not yet consumed: more would widen the peer's windows
   * past what it sent (and past 2^31-1, a FLOW_CONTROL_ERROR). A closed stream's bytes
   * were credited to the connection when it closed. */
  speedy_stream *stream = speedy_stream_find(session, stream_id);
  if (stream == NULL) return 0;
  if (n > stream->recv_held) n = stream->recv_held;
  if (n == 0) return 0;
  stream->recv_held -= (uint32_t)n;
  /* From on_data_chunk, for the frame being read: credited with the frame's end, so the
   * WINDOW_UPDATEs do not depend on where the input was split (as without this option). */
  if (session->in_data_chunk && stream_id == session->data_stream_id) {
    session->data_credit += (uint32_t)n;
    return 0;
  }
  return speedy_session_credit(session, stream_id, n);
}

/* ---- pending streams ---------------------------------------------------------------- */

int speedy_session_start_pending(speedy_session *session) {
  /* After a GOAWAY from the peer no stream of ours may open: the waiting ones are
   * refused (the GOAWAY closes them), never started by a slot that closing freed. */
  if (session->goaway_received || session->fatal_error != 0) return 0;
  while (session->pending_head != NULL &&
         session->n_local_open - session->n_pending < session->remote_max_concurrent) {
    speedy_pending *pending = session->pending_head;
    session->pending_head = pending->next;
    if (session->pending_head == NULL) session->pending_tail = NULL;
    session->n_pending--;
    speedy_stream *stream = speedy_stream_find(session, pending->syn->stream_id);
    if (stream != NULL) stream->waiting_slot = 0;
    int rv = speedy_queue_control(session, pending->syn, 0);
    speedy_mem_free(&session->mem, pending);
    if (rv == 0 && stream != NULL && stream->priority_owed) { /* after the HEADERS */
      rv = speedy_queue_priority_update(session, stream->id, stream->priority_owed & 7,
                                        (stream->priority_owed >> 3) & 1);
      stream->priority_owed = 0;
    }
    if (rv != 0) return rv;
  }
  return 0;
}

int speedy_session_drop_pending(speedy_session *session, int32_t stream_id) {
  for (speedy_pending **link = &session->pending_head; *link != NULL; link = &(*link)->next) {
    speedy_pending *pending = *link;
    if (pending->syn->stream_id != stream_id) continue;
    *link = pending->next;
    if (session->pending_tail == pending) {
      session->pending_tail = NULL;
      for (speedy_pending *p = session->pending_head; p != NULL; p = p->next)
        session->pending_tail = p;
    }
    session->n_pending--;
    free_pending(session, pending);
    return 1;
  }
  return 0;
}
