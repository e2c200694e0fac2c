/* session.c — session lifetime, accessors, the control-frame queue and every
 * spdy_submit_* function.
 *
 * Submitting never writes bytes: it queues a frame (header lists copied, compressed later
 * in output order by session_send.c) or attaches a body source to a stream. Streams we
 * open beyond the peer's MAX_CONCURRENT_STREAMS wait in the pending queue with their
 * SYN frame already built; stream ids are assigned at submit time and pending streams
 * start in id order, so ids on the wire always increase.
 */
#include <string.h>

#include "session_int.h"

/* ---- control queue ----------------------------------------------------------------- */

spdy_outframe *spdy_outframe_new(spdy_session *session, int type) {
  spdy_outframe *frame = spdy_mem_malloc(&session->mem, sizeof(spdy_outframe));
  if (frame == NULL) return NULL;
  memset(frame, 0, sizeof(*frame));
  frame->type = (uint8_t)type;
  return frame;
}

/* A header-bearing frame: headers (checked by validate_headers, which measured them as
 * serialised bytes) laid out as the uncompressed block behind the record. */
static int outframe_new_headers(spdy_session *session, int type, const spdy_header *headers,
                                size_t n_headers, size_t serialised, spdy_outframe **out) {
  if (serialised > SIZE_MAX - sizeof(spdy_outframe)) return SPDY_ERR_NOMEM;
  spdy_outframe *frame = spdy_mem_malloc(&session->mem, sizeof(spdy_outframe) + serialised);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  memset(frame, 0, sizeof(*frame));
  frame->type = (uint8_t)type;
  frame->block = (uint8_t *)(frame + 1);
  frame->block_len = serialised;
  frame->n_headers = n_headers;
  int rv = spdy_hdblock_serialise(session->wire_version, &session->mem, headers, n_headers,
                                  frame->block, serialised);
  if (rv != 0) {
    spdy_mem_free(&session->mem, frame);
    return rv;
  }
  *out = frame;
  return 0;
}

void spdy_outframe_free(spdy_session *session, spdy_outframe *frame) {
  spdy_mem_free(&session->mem, frame);
}

int spdy_queue_control(spdy_session *session, spdy_outframe *frame, int peer_owed) {
  if (peer_owed) {
    if (session->n_ctrl_owed >= session->options.max_queued_control_frames) {
      spdy_outframe_free(session, frame);
      return SPDY_ERR_FLOOD;
    }
    frame->peer_owed = 1;
    session->n_ctrl_owed++;
  }
  if (frame->type == SPDY_FRAME_SYN_STREAM || frame->type == SPDY_FRAME_SYN_REPLY ||
      frame->type == SPDY_FRAME_HEADERS) {
    spdy_stream *stream = spdy_stream_find(session, frame->stream_id);
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

static spdy_outframe *fixed_frame(spdy_session *session, int type) {
  return spdy_outframe_new(session, type);
}

int spdy_queue_rst(spdy_session *session, int32_t stream_id, uint32_t status, int peer_owed) {
  spdy_outframe *frame = fixed_frame(session, SPDY_FRAME_RST_STREAM);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  frame->stream_id = stream_id;
  frame->fixed_len =
      spdy_frame_encode_rst_stream(frame->fixed, session->wire_version, stream_id, status);
  return spdy_queue_control(session, frame, peer_owed);
}

int spdy_queue_window_update(spdy_session *session, int32_t stream_id, uint32_t delta) {
  spdy_outframe *frame = fixed_frame(session, SPDY_FRAME_WINDOW_UPDATE);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  frame->stream_id = stream_id;
  frame->fixed_len =
      spdy_frame_encode_window_update(frame->fixed, session->wire_version, stream_id, delta);
  return spdy_queue_control(session, frame, 0);
}

int spdy_queue_goaway(spdy_session *session, uint32_t status) {
  if (session->goaway_sent) return 0;
  spdy_outframe *frame = fixed_frame(session, SPDY_FRAME_GOAWAY);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  frame->fixed_len = spdy_frame_encode_goaway(frame->fixed, session->wire_version,
                                              session->last_recv_stream_id, status);
  session->goaway_sent = 1;
  return spdy_queue_control(session, frame, 0);
}

int spdy_session_fail(spdy_session *session, int error, uint32_t goaway_status) {
  if (session->fatal_error == 0) {
    session->fatal_error = error;
    /* Without memory we cannot even queue the GOAWAY; the caller closes anyway. */
    (void)spdy_queue_goaway(session, goaway_status);
  }
  session->recv_state = SPDY_RECV_DEAD;
  return error;
}

/* ---- flow control and priorities --------------------------------------------------- */

/* SPDY/3.1: returns consumed session credit once half the session window is due. While
 * undecided between 3 and 3.1 it is held back: a SPDY/3 peer would take a WINDOW_UPDATE
 * on stream 0 for an error. */
static int return_session_credit(spdy_session *session) {
  if (session->v3_undecided || session->session_recv_unacked < session->options.session_window / 2)
    return 0;
  uint32_t delta = session->session_recv_unacked;
  int rv = spdy_queue_window_update(session, 0, delta);
  if (rv != 0) return rv;
  session->session_recv_window += delta;
  session->session_recv_unacked = 0;
  return 0;
}

int spdy_session_credit(spdy_session *session, int32_t stream_id, size_t n) {
  if (n == 0) return 0;
  if (session->protocol == SPDY_PROTOCOL_SPDY3_1) {
    session->session_recv_unacked += (uint32_t)n;
    int rv = return_session_credit(session);
    if (rv != 0) return rv;
  }
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL || stream->remote_closed) return 0;
  stream->recv_unacked += (uint32_t)n;
  if (stream->recv_unacked >= session->local_initial_window / 2) {
    uint32_t delta = stream->recv_unacked;
    /* SPDY/2 has no flow control, but node's spdy-transport applies v3's to v2 and stalls
     * after 64 KiB without WINDOW_UPDATE; other v2 peers ignore the frame type. */
    int rv = spdy_queue_window_update(session, stream_id, delta);
    if (rv != 0) return rv;
    if (session->wire_version >= 3) stream->recv_window += delta;
    stream->recv_unacked = 0;
  }
  return 0;
}

uint8_t spdy_urgency_to_wire(const spdy_session *session, int urgency) {
  if (urgency < 0) urgency = 0;
  if (urgency > 7) urgency = 7;
  return (uint8_t)(session->wire_version == 2 ? urgency / 2 : urgency);
}

uint8_t spdy_urgency_from_wire(const spdy_session *session, uint8_t priority) {
  return (uint8_t)(session->wire_version == 2 ? (priority & 3) * 2 : priority & 7);
}

void spdy_trace(spdy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                uint32_t length, const char *summary) {
  if (session->callbacks.on_frame != NULL)
    session->callbacks.on_frame(session, sent, (spdy_frame_type)type, flags, stream_id, length,
                                summary != NULL ? summary : "", session->user);
}

/* ---- lifetime ---------------------------------------------------------------------- */

/* SPDY/3.1: a session window larger than the protocol's 64 KiB is announced with a
 * WINDOW_UPDATE on stream 0. */
static int announce_session_window(spdy_session *session) {
  const spdy_options *o = &session->options;
  if (session->protocol != SPDY_PROTOCOL_SPDY3_1 || o->session_window <= SPDY_DEFAULT_WINDOW)
    return 0;
  int rv = spdy_queue_window_update(session, 0, o->session_window - SPDY_DEFAULT_WINDOW);
  if (rv != 0) return rv;
  session->session_recv_window = o->session_window;
  return 0;
}

static int queue_initial_frames(spdy_session *session) {
  const spdy_options *o = &session->options;
  if (!o->send_initial_settings) return 0;
  spdy_setting settings[2];
  size_t n = 0;
  settings[n++] =
      (spdy_setting){SPDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, o->max_concurrent_streams};
  if (session->wire_version >= 3 && o->stream_window != SPDY_DEFAULT_WINDOW)
    settings[n++] = (spdy_setting){SPDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, o->stream_window};
  int rv = spdy_submit_settings(session, 0, settings, n);
  if (rv != 0) return rv;
  return session->v3_undecided ? 0 : announce_session_window(session);
}

int spdy_session_settle_by_credit(spdy_session *session) {
  if (!session->v3_undecided || session->session_send_window > 0 ||
      session->v3_stream_credit < SPDY_DEFAULT_WINDOW / 2)
    return 0;
  return spdy_session_settle(session, SPDY_PROTOCOL_SPDY3);
}

int spdy_session_settle(spdy_session *session, spdy_protocol protocol) {
  if (!session->v3_undecided) return SPDY_ERR_INVALID_STATE;
  session->v3_undecided = 0;
  if (protocol == SPDY_PROTOCOL_SPDY3) {
    /* No session window: streams held back by it may send (they stayed scheduled). */
    session->protocol = SPDY_PROTOCOL_SPDY3;
    session->session_recv_unacked = 0;
    return 0;
  }
  /* SPDY/3.1 after all: announce the window and return the credit held back. */
  int rv = announce_session_window(session);
  return rv != 0 ? rv : return_session_credit(session);
}

int spdy_session_new(spdy_session **out, spdy_protocol protocol, spdy_role role,
                     const spdy_callbacks *callbacks, const spdy_options *options, void *user) {
  if (out == NULL || spdy_protocol_name(protocol) == NULL ||
      (role != SPDY_ROLE_CLIENT && role != SPDY_ROLE_SERVER))
    return SPDY_ERR_INVALID_ARGUMENT;
  spdy_options defaults;
  if (options == NULL) {
    spdy_options_init_default(&defaults);
    options = &defaults;
  }
  spdy_mem mem = options->mem;
  mem.in_use = 0;
  spdy_session *session = spdy_mem_calloc(&mem, 1, sizeof(*session));
  if (session == NULL) return SPDY_ERR_NOMEM;
  session->mem = mem;
  session->mem.in_use = mem.in_use;
  session->options = *options;
  if (callbacks != NULL) session->callbacks = *callbacks;
  session->user = user;
  session->protocol = protocol;
  session->role = role;
  session->v3_undecided = protocol == SPDY_PROTOCOL_SPDY3_1 && options->v3_autodetect;
  session->wire_version = protocol == SPDY_PROTOCOL_SPDY2 ? 2 : 3;
  session->next_stream_id = role == SPDY_ROLE_CLIENT ? 1 : 2;
  session->next_ping_id = role == SPDY_ROLE_CLIENT ? 1 : 2;
  session->remote_max_concurrent = UINT32_MAX;
  session->remote_initial_window = SPDY_DEFAULT_WINDOW;
  for (int i = 0; i <= SPDY_SETTINGS_MAX_ID; i++) session->remote_settings[i] = -1;
  session->session_send_window = SPDY_DEFAULT_WINDOW;
  session->session_recv_window = SPDY_DEFAULT_WINDOW;
  session->local_initial_window =
      session->wire_version >= 3 ? options->stream_window : SPDY_DEFAULT_WINDOW;
  session->max_local_initial_window = session->local_initial_window > SPDY_DEFAULT_WINDOW
                                          ? session->local_initial_window
                                          : SPDY_DEFAULT_WINDOW;
  spdy_buf_init(&session->outbuf, (size_t)SPDY_MAX_FRAME_LENGTH + 2 * 1024 * 1024);
  spdy_buf_init(&session->inbuf, options->max_recv_control_frame);
  session->recv_state = SPDY_RECV_HEAD;

  int rv = spdy_stream_table_init(session);
  if (rv == 0)
    rv = spdy_hdblock_deflater_init(&session->deflater, &session->mem, session->wire_version,
                                    options->deflate_level, options->deflate_window_bits,
                                    options->deflate_mem_level);
  if (rv == 0)
    rv = spdy_hdblock_inflater_init(&session->inflater, &session->mem, session->wire_version,
                                    options->max_header_block);
  if (rv == 0) rv = queue_initial_frames(session);
  if (rv != 0) {
    spdy_session_del(session);
    return rv;
  }
  *out = session;
  return 0;
}

static void free_pending(spdy_session *session, spdy_pending *pending) {
  spdy_outframe_free(session, pending->syn);
  spdy_mem_free(&session->mem, pending);
}

void spdy_session_del(spdy_session *session) {
  if (session == NULL) return;
  while (session->ctrl_head != NULL) {
    spdy_outframe *next = session->ctrl_head->next;
    spdy_outframe_free(session, session->ctrl_head);
    session->ctrl_head = next;
  }
  while (session->pending_head != NULL) {
    spdy_pending *next = session->pending_head->next;
    free_pending(session, session->pending_head);
    session->pending_head = next;
  }
  if (session->buckets != NULL) spdy_stream_free_all(session);
  spdy_stream_table_free(session);
  spdy_hdblock_deflater_free(&session->deflater);
  spdy_hdblock_inflater_free(&session->inflater, &session->mem);
  spdy_buf_free(&session->outbuf, &session->mem);
  spdy_buf_free(&session->inbuf, &session->mem);
  spdy_mem mem = session->mem;
  spdy_mem_free(&mem, session);
}

/* ---- accessors --------------------------------------------------------------------- */

spdy_protocol spdy_session_protocol(const spdy_session *session) { return session->protocol; }
spdy_role spdy_session_role(const spdy_session *session) { return session->role; }

uint64_t spdy_session_recv_frames(const spdy_session *session) { return session->recv_frames; }

uint64_t spdy_session_recv_data_bytes(const spdy_session *session) {
  return session->recv_data_bytes;
}

int spdy_session_recv_in_frame(const spdy_session *session) {
  return session->recv_state != SPDY_RECV_HEAD || session->head_len > 0;
}

int spdy_session_protocol_undecided(const spdy_session *session) {
  if (session == NULL || !session->v3_undecided) return 0;
  if (session->session_send_window <= 0)
    for (int u = 0; u < SPDY_URGENCY_LEVELS; u++)
      if (session->sched_head[u] != NULL) return 2;
  if (session->session_recv_window <= 0)
    for (uint32_t b = 0; b < session->n_buckets; b++)
      for (const spdy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
        if (!s->remote_closed) return 3;
  return 1;
}

int spdy_session_settle_protocol(spdy_session *session, spdy_protocol protocol) {
  if (session == NULL || (protocol != SPDY_PROTOCOL_SPDY3 && protocol != SPDY_PROTOCOL_SPDY3_1))
    return SPDY_ERR_INVALID_ARGUMENT;
  return spdy_session_settle(session, protocol);
}
void *spdy_session_user_data(const spdy_session *session) { return session->user; }
void spdy_session_set_now(spdy_session *session, int64_t now_ns) { session->now_ns = now_ns; }

int spdy_session_set_stream_user_data(spdy_session *session, int32_t stream_id, void *data) {
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  stream->user = data;
  return 0;
}

void *spdy_session_get_stream_user_data(const spdy_session *session, int32_t stream_id) {
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream != NULL) return stream->user;
  if (stream_id != 0 && stream_id == session->closing_stream_id)
    return session->closing_stream_user;
  return NULL;
}

int64_t spdy_session_remote_setting(const spdy_session *session, uint32_t id) {
  return id <= SPDY_SETTINGS_MAX_ID ? session->remote_settings[id] : -1;
}

int64_t spdy_session_send_window(const spdy_session *session, int32_t stream_id) {
  if (stream_id == 0)
    return session->protocol == SPDY_PROTOCOL_SPDY3_1 ? session->session_send_window : -1;
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  return stream != NULL ? stream->send_window : -1;
}

int64_t spdy_session_recv_window(const spdy_session *session, int32_t stream_id) {
  if (stream_id == 0)
    return session->protocol == SPDY_PROTOCOL_SPDY3_1 ? session->session_recv_window : -1;
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  return stream != NULL ? stream->recv_window : -1;
}

uint32_t spdy_session_open_streams(const spdy_session *session) {
  return session->n_streams - session->n_pending;
}

uint32_t spdy_session_pending_streams(const spdy_session *session) { return session->n_pending; }

size_t spdy_session_memory(const spdy_session *session) { return session->mem.in_use; }

int spdy_session_want_read(const spdy_session *session) {
  if (session->fatal_error != 0 || session->recv_state == SPDY_RECV_DEAD) return 0;
  /* After GOAWAY in either direction the session ends once its streams have. */
  if ((session->goaway_sent || session->goaway_received) && session->n_streams == 0) return 0;
  return 1;
}

int spdy_session_want_write(const spdy_session *session) {
  if (spdy_buf_len(&session->outbuf) > 0 || session->ctrl_head != NULL ||
      session->nocopy_stream_id != 0)
    return 1;
  if (session->fatal_error != 0) return 0;
  for (int u = 0; u < SPDY_URGENCY_LEVELS; u++)
    if (session->sched_head[u] != NULL &&
        (session->protocol != SPDY_PROTOCOL_SPDY3_1 || session->session_send_window > 0))
      return 1;
  return 0;
}

int spdy_session_resume_data(spdy_session *session, int32_t stream_id) {
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  if (stream->data_state != SPDY_DATA_DEFERRED) return SPDY_ERR_INVALID_STATE;
  spdy_sched_add(session, stream);
  return 0;
}

int spdy_session_consume(spdy_session *session, int32_t stream_id, size_t n) {
  if (!session->options.manual_flow_control) return SPDY_ERR_INVALID_STATE;
  if (stream_id < 0) return SPDY_ERR_INVALID_ARGUMENT;
  return spdy_session_credit(session, stream_id, n);
}

/* ---- submitting -------------------------------------------------------------------- */

static int name_is(const spdy_header *h, const char *name) {
  size_t len = strlen(name);
  return h->name_len == len && memcmp(h->name, name, len) == 0;
}

static const spdy_header *find_header(const spdy_header *headers, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (name_is(&headers[i], name)) return &headers[i];
  return NULL;
}

/* Checks what the peer would check and what the block's encoder will (the same rules,
 * spdy_hdblock_measure): fields well formed, repeated names joinable, the compressed block
 * able to fit one frame, required pseudo-headers present (required: NULL-terminated
 * list). A list refused here never reaches the compressor, where a refusal would end
 * the session. *serialised: the uncompressed block's size. */
static int validate_headers(spdy_session *session, const spdy_header *headers, size_t n,
                            const char *const *required, size_t *serialised) {
  if (n > 0 && headers == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < n; i++)
    if (headers[i].name == NULL || headers[i].name_len == 0 ||
        (headers[i].value == NULL && headers[i].value_len > 0))
      return SPDY_ERR_INVALID_HEADER;
  int rv = spdy_hdblock_measure(session->wire_version, &session->mem, headers, n, serialised);
  if (rv == SPDY_ERR_FRAME_TOO_LARGE ||
      (rv == 0 && spdy_hdblock_compressed_max(*serialised) >
                      SPDY_MAX_FRAME_LENGTH - SPDY_SYN_STREAM_FIXED_LEN))
    return SPDY_ERR_INVALID_HEADER;
  if (rv != 0) return rv;
  for (; required != NULL && *required != NULL; required++)
    if (find_header(headers, n, *required) == NULL) return SPDY_ERR_INVALID_HEADER;
  return 0;
}

static int can_open_stream(const spdy_session *session) {
  if (session->fatal_error != 0 || session->goaway_sent || session->goaway_received)
    return SPDY_ERR_SESSION_CLOSING;
  if (session->next_stream_id > SPDY_MAX_STREAM_ID) return SPDY_ERR_STREAM_ID_EXHAUSTED;
  if (session->n_pending >= session->options.max_pending_streams &&
      session->n_local_open - session->n_pending >= session->remote_max_concurrent)
    return SPDY_ERR_TOO_MANY_STREAMS;
  return 0;
}

/* Opens a locally initiated stream: its SYN frame goes out now or waits for a
 * concurrency slot. Takes ownership of syn. */
static int32_t open_local_stream(spdy_session *session, spdy_outframe *syn, int urgency,
                                 spdy_data_read_fn read_fn, void *source, void *stream_user) {
  int32_t id = (int32_t)session->next_stream_id;
  spdy_pending *pending = spdy_mem_calloc(&session->mem, 1, sizeof(*pending));
  spdy_stream *stream = pending != NULL ? spdy_stream_create(session, id, 1) : NULL;
  if (stream == NULL) {
    spdy_mem_free(&session->mem, pending);
    spdy_outframe_free(session, syn);
    return SPDY_ERR_NOMEM;
  }
  session->next_stream_id += 2;
  stream->urgency = (uint8_t)(urgency < 0 ? 0 : urgency > 7 ? 7 : urgency);
  stream->user = stream_user;
  stream->read_fn = read_fn;
  stream->source = source;
  stream->data_state = read_fn != NULL ? SPDY_DATA_WAITING : SPDY_DATA_NONE;
  if (read_fn == NULL) stream->local_closed = 1;
  if (syn->flags & SPDY_FLAG_UNIDIRECTIONAL) stream->remote_closed = 1;
  syn->stream_id = id;
  stream->waiting_slot = 1;
  pending->syn = syn;
  if (session->pending_tail != NULL)
    session->pending_tail->next = pending;
  else
    session->pending_head = pending;
  session->pending_tail = pending;
  session->n_pending++;
  int rv = spdy_session_start_pending(session);
  return rv != 0 ? rv : id;
}

int spdy_session_start_pending(spdy_session *session) {
  /* After a GOAWAY from the peer no stream of ours may open: the waiting ones are
   * refused (on_goaway closes them), never started by a slot that closing freed. */
  if (session->goaway_received || session->fatal_error != 0) return 0;
  while (session->pending_head != NULL &&
         session->n_local_open - session->n_pending < session->remote_max_concurrent) {
    spdy_pending *pending = session->pending_head;
    session->pending_head = pending->next;
    if (session->pending_head == NULL) session->pending_tail = NULL;
    session->n_pending--;
    spdy_stream *stream = spdy_stream_find(session, pending->syn->stream_id);
    if (stream != NULL) stream->waiting_slot = 0;
    int rv = spdy_queue_control(session, pending->syn, 0);
    spdy_mem_free(&session->mem, pending);
    if (rv != 0) return rv;
  }
  return 0;
}

int spdy_session_drop_pending(spdy_session *session, int32_t stream_id) {
  for (spdy_pending **link = &session->pending_head; *link != NULL; link = &(*link)->next) {
    spdy_pending *pending = *link;
    if (pending->syn->stream_id != stream_id) continue;
    *link = pending->next;
    if (session->pending_tail == pending) {
      session->pending_tail = NULL;
      for (spdy_pending *p = session->pending_head; p != NULL; p = p->next)
        session->pending_tail = p;
    }
    session->n_pending--;
    free_pending(session, pending);
    return 1;
  }
  return 0;
}

int32_t spdy_submit_request(spdy_session *session, int urgency, const spdy_header *headers,
                            size_t n_headers, spdy_data_read_fn read_fn, void *source,
                            void *stream_user) {
  static const char *const required_v3[] = {":method", ":path",   ":version",
                                            ":host",   ":scheme", NULL};
  static const char *const required_v2[] = {":method", ":path", ":version", NULL};
  if (session == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPDY_ROLE_CLIENT) return SPDY_ERR_INVALID_STATE;
  size_t serialised = 0;
  int rv = validate_headers(session, headers, n_headers,
                            session->wire_version == 2 ? required_v2 : required_v3, &serialised);
  if (rv != 0) return rv;
  rv = can_open_stream(session);
  if (rv != 0) return rv;
  spdy_outframe *syn = NULL;
  rv = outframe_new_headers(session, SPDY_FRAME_SYN_STREAM, headers, n_headers, serialised, &syn);
  if (rv != 0) return rv;
  syn->flags = read_fn == NULL ? SPDY_FLAG_FIN : 0;
  syn->priority = spdy_urgency_to_wire(session, urgency);
  return open_local_stream(session, syn, urgency, read_fn, source, stream_user);
}

int spdy_submit_response(spdy_session *session, int32_t stream_id, const spdy_header *headers,
                         size_t n_headers, spdy_data_read_fn read_fn, void *source) {
  static const char *const required[] = {":status", ":version", NULL};
  if (session == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPDY_ROLE_SERVER) return SPDY_ERR_INVALID_STATE;
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  if (stream->locally_initiated || stream->reply_done) return SPDY_ERR_INVALID_STATE;
  if (stream->local_closed) return SPDY_ERR_STREAM_CLOSED;
  size_t serialised = 0;
  int rv = validate_headers(session, headers, n_headers, required, &serialised);
  if (rv != 0) return rv;
  spdy_outframe *reply = NULL;
  rv = outframe_new_headers(session, SPDY_FRAME_SYN_REPLY, headers, n_headers, serialised, &reply);
  if (rv != 0) return rv;
  reply->stream_id = stream_id;
  reply->flags = read_fn == NULL ? SPDY_FLAG_FIN : 0;
  rv = spdy_queue_control(session, reply, 0);
  if (rv != 0) return rv;
  stream->reply_done = 1;
  stream->read_fn = read_fn;
  stream->source = source;
  if (read_fn != NULL) {
    stream->data_state = SPDY_DATA_WAITING;
  } else {
    stream->local_closed = 1; /* closes for good once the SYN_REPLY is serialised */
  }
  return 0;
}

int32_t spdy_submit_push(spdy_session *session, int32_t associated_id, int urgency,
                         const spdy_header *request_headers, size_t n_request,
                         const spdy_header *response_headers, size_t n_response,
                         spdy_data_read_fn read_fn, void *source, void *stream_user) {
  static const char *const required_request[] = {":scheme", ":host", ":path", NULL};
  static const char *const required_response[] = {":status", ":version", NULL};
  if (session == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  if (session->role != SPDY_ROLE_SERVER) return SPDY_ERR_INVALID_STATE;
  spdy_stream *assoc = spdy_stream_find(session, associated_id);
  if (assoc == NULL || assoc->locally_initiated) return SPDY_ERR_STREAM_NOT_FOUND;
  if (assoc->local_closed) return SPDY_ERR_STREAM_CLOSED; /* 3.3.1: before its FIN */
  size_t serialised = 0;
  int rv = validate_headers(session, request_headers, n_request, required_request, &serialised);
  if (rv == 0)
    rv = validate_headers(session, response_headers, n_response, required_response, &serialised);
  if (rv != 0) return rv;
  rv = can_open_stream(session);
  if (rv != 0) return rv;

  /* Everything goes in the SYN_STREAM: the URL (v3 3.3.1 requires :scheme, :host and
   * :path there) and the response headers too. v3 allows the latter in a later HEADERS
   * frame, but deployed clients (node's spdy-transport among them) require :status in the
   * SYN_STREAM. SPDY/2 wants an absolute url instead of scheme, host and path. */
  size_t n_all = n_request + n_response;
  size_t url_len = 0;
  const spdy_header *scheme = find_header(request_headers, n_request, ":scheme");
  const spdy_header *host = find_header(request_headers, n_request, ":host");
  const spdy_header *path = find_header(request_headers, n_request, ":path");
  if (session->wire_version == 2)
    url_len = scheme->value_len + 3 + host->value_len + path->value_len;
  spdy_header *all = spdy_mem_malloc(&session->mem, n_all * sizeof(spdy_header) + url_len);
  if (all == NULL) return SPDY_ERR_NOMEM;
  size_t k = 0;
  if (session->wire_version == 2) {
    char *url = (char *)(all + n_all);
    size_t pos = 0;
    memcpy(url + pos, scheme->value, scheme->value_len), pos += scheme->value_len;
    memcpy(url + pos, "://", 3), pos += 3;
    memcpy(url + pos, host->value, host->value_len), pos += host->value_len;
    memcpy(url + pos, path->value, path->value_len), pos += path->value_len;
    all[k++] = (spdy_header){":path", 5, url, url_len};
    for (size_t i = 0; i < n_request; i++)
      if (&request_headers[i] != path) all[k++] = request_headers[i];
  } else {
    for (size_t i = 0; i < n_request; i++) all[k++] = request_headers[i];
  }
  for (size_t i = 0; i < n_response; i++) all[k++] = response_headers[i];
  /* Each half was valid; together they must be too (a name in both halves is joined). */
  spdy_outframe *syn = NULL;
  rv = validate_headers(session, all, k, NULL, &serialised);
  if (rv == 0) rv = outframe_new_headers(session, SPDY_FRAME_SYN_STREAM, all, k, serialised, &syn);
  spdy_mem_free(&session->mem, all);
  if (rv != 0) return rv;
  if (read_fn == NULL) syn->flags |= SPDY_FLAG_FIN;
  syn->flags |= SPDY_FLAG_UNIDIRECTIONAL;
  syn->associated_id = associated_id;
  syn->priority = spdy_urgency_to_wire(session, urgency);
  return open_local_stream(session, syn, urgency, read_fn, source, stream_user);
}

int spdy_submit_headers(spdy_session *session, int32_t stream_id, const spdy_header *headers,
                        size_t n_headers, int end_stream) {
  if (session == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  if (stream->local_closed) return SPDY_ERR_STREAM_CLOSED;
  /* Its SYN_STREAM has not gone out: a HEADERS frame would arrive first. */
  if (stream->waiting_slot) return SPDY_ERR_INVALID_STATE;
  /* A FIN on HEADERS would overtake the body still queued behind it. */
  if (end_stream && stream->data_state != SPDY_DATA_NONE) return SPDY_ERR_INVALID_STATE;
  if (!stream->locally_initiated && !stream->reply_done) return SPDY_ERR_INVALID_STATE;
  size_t serialised = 0;
  int rv = validate_headers(session, headers, n_headers, NULL, &serialised);
  if (rv != 0) return rv;
  spdy_outframe *frame = NULL;
  rv = outframe_new_headers(session, SPDY_FRAME_HEADERS, headers, n_headers, serialised, &frame);
  if (rv != 0) return rv;
  frame->stream_id = stream_id;
  frame->flags = end_stream ? SPDY_FLAG_FIN : 0;
  rv = spdy_queue_control(session, frame, 0);
  if (rv == 0 && end_stream) stream->local_closed = 1;
  return rv;
}

int spdy_submit_rst(spdy_session *session, int32_t stream_id, uint32_t status) {
  uint32_t max_status = session != NULL && session->wire_version == 2 ? SPDY_RST_FLOW_CONTROL_ERROR
                                                                      : SPDY_RST_FRAME_TOO_LARGE;
  if (session == NULL || stream_id <= 0 || status == SPDY_RST_NONE || status > max_status)
    return SPDY_ERR_INVALID_ARGUMENT;
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  if (spdy_session_drop_pending(session, stream_id)) /* never on the wire: nothing to reset there */
    return spdy_stream_close(session, stream, status);
  /* A reset submitted from a callback during spdy_session_recv answers the peer's input
   * (refusing its pushes, say): it counts against the flood cap like the engine's own. */
  int rv = spdy_queue_rst(session, stream_id, status, session->in_recv);
  if (rv == SPDY_ERR_FLOOD) return spdy_session_fail(session, rv, SPDY_GOAWAY_PROTOCOL_ERROR);
  if (rv != 0) return rv;
  return spdy_stream_close(session, stream, status);
}

int spdy_submit_ping(spdy_session *session, uint32_t *id_out) {
  if (session == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  int slot = -1;
  for (int i = 0; i < SPDY_MAX_OUTSTANDING_PINGS; i++)
    if (session->pings[i].id == 0) {
      slot = i;
      break;
    }
  if (slot < 0) return SPDY_ERR_INVALID_STATE; /* too many unanswered pings */
  uint32_t id = session->next_ping_id;
  spdy_outframe *frame = fixed_frame(session, SPDY_FRAME_PING);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  frame->fixed_len = spdy_frame_encode_ping(frame->fixed, session->wire_version, id);
  int rv = spdy_queue_control(session, frame, 0);
  if (rv != 0) return rv;
  session->next_ping_id += 2;
  if (session->next_ping_id == 0 || session->next_ping_id == 1)
    session->next_ping_id = session->role == SPDY_ROLE_CLIENT ? 1 : 2;
  session->pings[slot].id = id;
  session->pings[slot].sent_ns = session->now_ns;
  if (id_out != NULL) *id_out = id;
  return 0;
}

int spdy_submit_goaway(spdy_session *session, uint32_t status) {
  if (session == NULL || status > SPDY_GOAWAY_INTERNAL_ERROR) return SPDY_ERR_INVALID_ARGUMENT;
  if (session->goaway_sent) return SPDY_ERR_SESSION_CLOSING;
  return spdy_queue_goaway(session, status);
}

/* The peer moves every stream window by the change of INITIAL_WINDOW_SIZE: refuse a rise
 * that would take a window we granted past 2^31-1 (the peer's view of it is at most our
 * recv_window, which also counts DATA still in flight). Streams the peer has finished
 * sending on do not count: their window no longer matters to it (see
 * apply_initial_window). */
static int check_initial_window_change(const spdy_session *session, const spdy_setting *settings,
                                       size_t n_settings) {
  if (session->wire_version < 3) return 0;
  int64_t largest_rise = 0;
  for (size_t i = 0; i < n_settings; i++) {
    if (settings[i].id != SPDY_SETTINGS_INITIAL_WINDOW_SIZE) continue;
    int64_t rise = (int64_t)settings[i].value - session->local_initial_window;
    if (rise > largest_rise) largest_rise = rise;
  }
  if (largest_rise == 0) return 0;
  for (uint32_t b = 0; b < session->n_buckets; b++)
    for (const spdy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
      if (!s->remote_closed && s->recv_window + largest_rise > SPDY_MAX_WINDOW)
        return SPDY_ERR_WINDOW_OVERFLOW;
  return 0;
}

int spdy_submit_settings(spdy_session *session, uint8_t frame_flags, const spdy_setting *settings,
                         size_t n_settings) {
  if (session == NULL || n_settings > SPDY_SETTINGS_MAX_ID + 1 ||
      (n_settings > 0 && settings == NULL))
    return SPDY_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < n_settings; i++) {
    if (settings[i].id == 0 || settings[i].id > 0xffffff) return SPDY_ERR_INVALID_ARGUMENT;
    if (settings[i].id == SPDY_SETTINGS_INITIAL_WINDOW_SIZE && settings[i].value > SPDY_MAX_WINDOW)
      return SPDY_ERR_INVALID_ARGUMENT;
    /* The peer honours only the first value of an id (v3 2.6.4), we would apply the last:
     * the two sides would disagree, so a list naming an id twice is refused. */
    for (size_t j = 0; j < i; j++)
      if (settings[j].id == settings[i].id) return SPDY_ERR_INVALID_ARGUMENT;
  }
  int rv = check_initial_window_change(session, settings, n_settings);
  if (rv != 0) return rv;
  spdy_outframe *frame = fixed_frame(session, SPDY_FRAME_SETTINGS);
  if (frame == NULL) return SPDY_ERR_NOMEM;
  frame->flags = frame_flags;
  frame->fixed_len = spdy_frame_encode_settings(frame->fixed, session->wire_version, frame_flags,
                                                settings, n_settings);
  rv = spdy_queue_control(session, frame, 0);
  if (rv != 0) return rv;
  /* Our own limits apply from now on (the peer learns them with this frame). */
  for (size_t i = 0; i < n_settings; i++) {
    if (settings[i].id == SPDY_SETTINGS_MAX_CONCURRENT_STREAMS)
      session->options.max_concurrent_streams = settings[i].value;
    if (settings[i].id == SPDY_SETTINGS_INITIAL_WINDOW_SIZE && session->wire_version >= 3) {
      int64_t delta = (int64_t)settings[i].value - session->local_initial_window;
      session->local_initial_window = settings[i].value;
      if (settings[i].value > session->max_local_initial_window)
        session->max_local_initial_window = settings[i].value;
      for (uint32_t b = 0; b < session->n_buckets; b++)
        for (spdy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
          s->recv_window += delta;
    }
  }
  return 0;
}

int spdy_submit_window_update(spdy_session *session, int32_t stream_id, uint32_t delta) {
  if (session == NULL || delta == 0 || delta > SPDY_MAX_WINDOW || stream_id < 0)
    return SPDY_ERR_INVALID_ARGUMENT;
  if (session->wire_version < 3) return SPDY_ERR_INVALID_STATE;
  if (stream_id == 0) {
    if (session->protocol != SPDY_PROTOCOL_SPDY3_1) return SPDY_ERR_INVALID_STATE;
    if (session->session_recv_window + delta > SPDY_MAX_WINDOW) return SPDY_ERR_WINDOW_OVERFLOW;
    int rv = spdy_queue_window_update(session, 0, delta);
    if (rv == 0) session->session_recv_window += delta;
    return rv;
  }
  spdy_stream *stream = spdy_stream_find(session, stream_id);
  if (stream == NULL) return SPDY_ERR_STREAM_NOT_FOUND;
  if (stream->waiting_slot) return SPDY_ERR_INVALID_STATE; /* not on the wire yet */
  if (stream->recv_window + delta > SPDY_MAX_WINDOW) return SPDY_ERR_WINDOW_OVERFLOW;
  int rv = spdy_queue_window_update(session, stream_id, delta);
  if (rv == 0) stream->recv_window += delta;
  return rv;
}
