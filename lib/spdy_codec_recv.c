/* spdy_codec_recv.c — the SPDY codec's input side: a frame parser that accepts bytes in
 * any split, and what every SPDY frame means for the session and its streams (through the
 * core's helpers, session_int.h).
 *
 * Control frames are collected whole (up to max_recv_control_frame) and then processed;
 * DATA payload is passed to the application as it arrives, never buffered. Every header
 * block is inflated, whatever becomes of its stream, so the shared zlib context stays in
 * step with the peer's. A peer's stream error becomes RST_STREAM; a session error becomes
 * GOAWAY and a fatal return value.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "session_int.h"

/* ---- small helpers ----------------------------------------------------------------- */

static spdy_codec_state *state(speedy_session *session) { return &session->wire.spdy; }
static int version_of(const speedy_session *session) { return session->wire.spdy.wire_version; }

static int fail_protocol(speedy_session *session) {
  return speedy_session_fail(session, SPEEDY_ERR_PROTOCOL, SPEEDY_RST_PROTOCOL_ERROR);
}

static int fail_with(speedy_session *session, int error) {
  return speedy_session_fail_with(session, error);
}

/* Urgency for a wire priority: SPDY/2's 0-3 spread over 0-7. */
static uint8_t urgency_from_wire(const speedy_session *session, uint8_t priority) {
  return (uint8_t)(version_of(session) == 2 ? (priority & 3) * 2 : priority & 7);
}

static int is_peer_id(const speedy_session *session, int32_t id) {
  return speedy_session_is_peer_id(session, id);
}

/* Did this id ever name a stream (now gone)? Frames for such streams are ignored;
 * frames for ids never used are answered with INVALID_STREAM. */
static int id_was_used(const speedy_session *session, int32_t id) {
  if (is_peer_id(session, id)) return id <= session->highest_peer_stream_id;
  return id < session->next_stream_id;
}

/* Version-dependent status for "this stream already finished sending". */
static uint32_t already_closed_status(const speedy_session *session) {
  return version_of(session) >= 3 ? SPEEDY_RST_STREAM_ALREADY_CLOSED : SPEEDY_RST_PROTOCOL_ERROR;
}

/* Resets a stream for the peer's mistake: RST_STREAM (counted against the flood cap),
 * then the stream is closed. */
static int reset_stream(speedy_session *session, int32_t stream_id, uint32_t status) {
  return speedy_session_reset_stream(session, stream_id, status);
}

/* A stream the peer can know: ours once its SYN_STREAM went out (one waiting for a
 * concurrency slot does not exist for the peer yet), or one of the peer's. */
static speedy_stream *find_known(speedy_session *session, int32_t id) {
  speedy_stream *stream = speedy_stream_find(session, id);
  if (stream != NULL && stream->locally_initiated && !stream->opened_on_wire) return NULL;
  return stream;
}

/* A frame arrived for a stream we do not have. */
static int unknown_stream(speedy_session *session, int32_t stream_id) {
  if (id_was_used(session, stream_id)) return 0;
  int rv = speedy_queue_rst(session, stream_id, SPEEDY_RST_INVALID_STREAM, 1);
  return rv != 0 ? fail_with(session, rv) : 0;
}

/* Reports a received frame to on_frame; the summary is formatted only when someone
 * listens and wants it. */
__attribute__((format(printf, 3, 4))) static void
trace_recv(speedy_session *session, int32_t stream_id, const char *format, ...) {
  if (session->callbacks.on_frame == NULL) return;
  char summary[64] = "";
  if (session->options.frame_summaries) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(summary, sizeof(summary), format, ap);
    va_end(ap);
  }
  const spdy_frame_hd *f = &state(session)->frame;
  speedy_trace(session, 0, f->is_control ? f->type : SPEEDY_SPDY_FRAME_DATA, f->flags,
               f->is_control ? stream_id : f->stream_id, f->length, summary);
}

/* ---- header blocks ----------------------------------------------------------------- */

/* Names whose presence matters to validation. */
enum {
  HAVE_METHOD = 1 << 0,
  HAVE_PATH = 1 << 1,
  HAVE_VERSION = 1 << 2,
  HAVE_HOST = 1 << 3,
  HAVE_SCHEME = 1 << 4,
  HAVE_STATUS = 1 << 5
};

static int scan_emit(void *ctx, const speedy_header *h) {
  static const struct {
    const char *name;
    size_t len;
    int bit;
  } known[] = {{":method", 7, HAVE_METHOD},   {":path", 5, HAVE_PATH},
               {":version", 8, HAVE_VERSION}, {":host", 5, HAVE_HOST},
               {":scheme", 7, HAVE_SCHEME},   {":status", 7, HAVE_STATUS}};
  int *found = ctx;
  if (h->name_len == 0 || h->name[0] != ':') return 0;
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
    if (h->name_len == known[i].len && memcmp(h->name, known[i].name, known[i].len) == 0)
      *found |= known[i].bit;
  return 0;
}

typedef struct emit_ctx {
  speedy_session *session;
  int32_t stream_id;
} emit_ctx;

/* The application sees HTTP/2's names whatever the protocol: :host is :authority,
 * :version (always HTTP/1.1 in practice) is not passed on, and :status is its three
 * digits ("200 OK" arrives as "200"). Validation (scan_emit) saw SPDY's names. */
static int deliver_emit(void *ctx, const speedy_header *h) {
  emit_ctx *e = ctx;
  speedy_header field = *h;
  if (field.name_len == 8 && memcmp(field.name, ":version", 8) == 0) return 0;
  if (field.name_len == 5 && memcmp(field.name, ":host", 5) == 0) {
    field.name = ":authority";
    field.name_len = 10;
  } else if (field.name_len == 7 && memcmp(field.name, ":status", 7) == 0 && field.value_len > 3 &&
             field.value[3] == ' ') {
    field.value_len = 3;
  }
  return speedy_session_emit_field(e->session, e->stream_id, &field);
}

/* The inflated block of the current frame. */
typedef struct header_block {
  const uint8_t *data;
  size_t len;
} header_block;

/* Inflates the compressed block (always: see the file comment). */
static int inflate_block(speedy_session *session, const uint8_t *in, size_t in_len,
                         header_block *out) {
  out->data = NULL;
  out->len = 0;
  if (in_len == 0) return 0; /* no block: zlib untouched on both ends */
  int rv = spdy_hdblock_inflate(&state(session)->inflater, &session->mem, in, in_len, &out->data,
                                &out->len);
  return rv != 0 ? fail_with(session, rv) : 0;
}

/* Validates a block. Returns a mask of HAVE_* bits, SPEEDY_ERR_INVALID_HEADER or a fatal
 * error. An empty block is valid and has nothing. */
static int scan_block(speedy_session *session, const header_block *block) {
  int found = 0;
  if (block->len == 0) return 0;
  int rv = spdy_hdblock_parse(version_of(session), &session->mem, block->data, block->len,
                              scan_emit, &found);
  if (rv == SPEEDY_ERR_INVALID_HEADER) return rv;
  return rv != 0 ? fail_with(session, rv) : found;
}

/* on_begin_headers, the fields, on_headers_end. */
static int emit_block(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                      int32_t associated_id, const header_block *block, int end_stream) {
  int rv = speedy_session_emit_begin(session, stream_id, kind, associated_id);
  if (rv != 0) return rv;
  if (block->len > 0) {
    emit_ctx ctx = {session, stream_id};
    rv =
        spdy_hdblock_emit_checked(version_of(session), block->data, block->len, deliver_emit, &ctx);
    if (rv != 0) return fail_with(session, rv);
  }
  return speedy_session_emit_end(session, stream_id, end_stream);
}

/* Closes the stream if both directions are done, after callbacks that may have closed it. */
static int settle_stream(speedy_session *session, int32_t stream_id) {
  return speedy_session_settle_stream(session, stream_id);
}

/* ---- SYN_STREAM, SYN_REPLY, HEADERS ------------------------------------------------ */

static int on_syn_stream(speedy_session *session, const uint8_t *payload, size_t len) {
  spdy_syn_stream syn;
  if (spdy_frame_decode_syn_stream(version_of(session), payload, len, &syn) != 0)
    return fail_protocol(session);
  header_block block;
  int rv = inflate_block(session, syn.block, syn.block_len, &block);
  if (rv != 0) return rv;
  trace_recv(session, syn.stream_id, "stream=%d assoc=%d pri=%u", (int)syn.stream_id,
             (int)syn.associated_id, (unsigned)syn.priority);

  int32_t id = syn.stream_id;
  if (id == 0 || !is_peer_id(session, id)) return fail_protocol(session);
  if (id <= session->highest_peer_stream_id) {
    if (speedy_stream_find(session, id) != NULL)
      return reset_stream(session, id,
                          version_of(session) >= 3 ? SPEEDY_RST_STREAM_IN_USE
                                                   : SPEEDY_RST_PROTOCOL_ERROR);
    return fail_protocol(session); /* ids must increase */
  }
  session->highest_peer_stream_id = id; /* seen, even if ignored: its DATA is ignored too */
  if (session->goaway_sent) return 0;   /* after GOAWAY new streams are ignored */
  int push = session->role == SPEEDY_ROLE_CLIENT;
  if (push && syn.associated_id == 0) return fail_protocol(session); /* v3 3.3.2 */
  session->last_recv_stream_id = id;
  int required;
  if (push) {
    /* FLAG_UNIDIRECTIONAL is not required: spdy-transport pushes without it. A push is
     * one-way whatever its flags say. */
    speedy_stream *assoc = find_known(session, syn.associated_id);
    if (assoc == NULL && !is_peer_id(session, syn.associated_id) &&
        id_was_used(session, syn.associated_id))
      return reset_stream(session, id, SPEEDY_RST_CANCEL); /* crossed our end of its stream */
    if (assoc == NULL || !assoc->locally_initiated)
      return reset_stream(session, id, SPEEDY_RST_INVALID_STREAM);
    required = version_of(session) >= 3 ? HAVE_SCHEME | HAVE_HOST | HAVE_PATH
                                        : HAVE_PATH | HAVE_STATUS | HAVE_VERSION;
  } else {
    required = HAVE_METHOD | HAVE_PATH | HAVE_VERSION;
    if (version_of(session) >= 3) required |= HAVE_HOST | HAVE_SCHEME;
  }
  if (session->n_remote_open >= session->options.max_concurrent_streams)
    return reset_stream(session, id, SPEEDY_RST_REFUSED_STREAM);
  int found = scan_block(session, &block);
  if (found == SPEEDY_ERR_INVALID_HEADER || (found >= 0 && (found & required) != required))
    return reset_stream(session, id, SPEEDY_RST_PROTOCOL_ERROR);
  if (found < 0) return found;

  speedy_stream *stream = speedy_stream_create(session, id, 0);
  if (stream == NULL) return fail_with(session, SPEEDY_ERR_NOMEM);
  stream->associated_id = push ? syn.associated_id : 0;
  stream->urgency = urgency_from_wire(session, syn.priority);
  int fin = (state(session)->frame.flags & SPDY_FLAG_FIN) != 0;
  if (fin) stream->remote_closed = 1;
  if (push || (state(session)->frame.flags & SPDY_FLAG_UNIDIRECTIONAL)) stream->local_closed = 1;
  if (push && (found & HAVE_STATUS)) stream->response_seen = 1;
  rv = emit_block(session, id, push ? SPEEDY_HEADERS_PUSH : SPEEDY_HEADERS_REQUEST,
                  stream->associated_id, &block, fin);
  if (rv != 0) return rv;
  return settle_stream(session, id);
}

/* SYN_REPLY and HEADERS: headers for a stream that already exists. */
static int on_stream_headers(speedy_session *session, const uint8_t *payload, size_t len) {
  int is_reply = state(session)->frame.type == SPEEDY_SPDY_FRAME_SYN_REPLY;
  spdy_stream_headers frame;
  int rv = is_reply ? spdy_frame_decode_syn_reply(version_of(session), payload, len, &frame)
                    : spdy_frame_decode_headers(version_of(session), payload, len, &frame);
  if (rv != 0) return fail_protocol(session);
  header_block block;
  rv = inflate_block(session, frame.block, frame.block_len, &block);
  if (rv != 0) return rv;
  trace_recv(session, frame.stream_id, "stream=%d", (int)frame.stream_id);

  int32_t id = frame.stream_id;
  if (id == 0) return fail_protocol(session);
  speedy_stream *stream = find_known(session, id);
  if (stream == NULL) return unknown_stream(session, id);
  if (is_reply) {
    /* Only the server replies, and only to streams the client opened. */
    if (session->role != SPEEDY_ROLE_CLIENT || !stream->locally_initiated)
      return reset_stream(session, id, SPEEDY_RST_PROTOCOL_ERROR);
    if (stream->reply_done)
      return reset_stream(session, id,
                          version_of(session) >= 3 ? SPEEDY_RST_STREAM_IN_USE
                                                   : SPEEDY_RST_PROTOCOL_ERROR);
  }
  if (stream->remote_closed) return reset_stream(session, id, already_closed_status(session));
  int found = scan_block(session, &block);
  if (found == SPEEDY_ERR_INVALID_HEADER ||
      (is_reply && found >= 0 &&
       (found & (HAVE_STATUS | HAVE_VERSION)) != (HAVE_STATUS | HAVE_VERSION)))
    return reset_stream(session, id, SPEEDY_RST_PROTOCOL_ERROR);
  if (found < 0) return found;
  if (is_reply) stream->reply_done = 1;
  if (found & HAVE_STATUS) stream->response_seen = 1;
  int fin = (state(session)->frame.flags & SPDY_FLAG_FIN) != 0;
  if (fin) stream->remote_closed = 1;
  rv = emit_block(session, id, is_reply ? SPEEDY_HEADERS_RESPONSE : SPEEDY_HEADERS_EXTRA, 0, &block,
                  fin);
  if (rv != 0) return rv;
  return settle_stream(session, id);
}

/* ---- other control frames ---------------------------------------------------------- */

static int on_rst_stream(speedy_session *session, const uint8_t *payload, size_t len) {
  int32_t id;
  uint32_t status;
  if (spdy_frame_decode_rst_stream(payload, len, &id, &status) != 0) return fail_protocol(session);
  trace_recv(session, id, "stream=%d status=%s", (int)id, speedy_rst_status_name(status));
  if (id == 0) return fail_protocol(session);
  speedy_stream *stream = speedy_stream_find(session, id);
  if (stream == NULL) return 0; /* never answer a RST_STREAM */
  speedy_session_drop_pending(session, id);
  int rv = speedy_stream_close(session, stream, status != 0 ? status : SPEEDY_RST_PROTOCOL_ERROR);
  return rv != 0 ? fail_with(session, rv) : 0;
}

/* SETTINGS_INITIAL_WINDOW_SIZE changes every open stream's send window (v3 2.6.4). A
 * window past 2^31-1 resets its stream with FLOW_CONTROL_ERROR — unless we have finished
 * sending on it: that window is never used again, and a reset would throw away what the
 * peer is still sending us. */
static int apply_initial_window(speedy_session *session, uint32_t value) {
  if (value > SPEEDY_MAX_WINDOW_SIZE)
    return speedy_session_fail(session, SPEEDY_ERR_FLOW_CONTROL, SPEEDY_RST_PROTOCOL_ERROR);
  int32_t overflowed = speedy_session_peer_initial_window(session, value, 0); /* may go negative */
  /* Overflow needs a window near 2^31 already; reset such streams one at a time, since
   * closing changes the table under the loop. */
  while (overflowed != 0) {
    int rv = reset_stream(session, overflowed, SPEEDY_RST_FLOW_CONTROL_ERROR);
    if (rv != 0) return rv;
    overflowed = 0;
    for (uint32_t b = 0; b < session->n_buckets && overflowed == 0; b++)
      for (speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
        if (!s->local_closed && s->send_window > SPEEDY_MAX_WINDOW_SIZE) overflowed = s->id;
  }
  return 0;
}

static int on_settings(speedy_session *session, const uint8_t *payload, size_t len) {
  uint32_t count;
  if (spdy_frame_decode_settings(payload, len, &count) != 0) return fail_protocol(session);
  trace_recv(session, 0, "entries=%u", count);
  uint32_t seen = 0; /* the first value of an id in one frame wins */
  for (uint32_t i = 0; i < count; i++) {
    speedy_setting entry;
    spdy_frame_settings_entry(version_of(session), payload, i, &entry);
    if (entry.id == 0 || entry.id > SPEEDY_SETTINGS_MAX_ID) continue; /* unknown: ignored */
    if (seen & (1u << entry.id)) continue;
    seen |= 1u << entry.id;
    session->remote_settings[entry.id] = entry.value;
    int rv = 0;
    if (entry.id == SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS) {
      rv = speedy_session_peer_max_concurrent(session, entry.value);
      if (rv != 0) return rv;
    } else if (entry.id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE && version_of(session) >= 3) {
      rv = apply_initial_window(session, entry.value);
      if (rv != 0) return rv;
    }
    rv = speedy_session_report_setting(session, entry.id, entry.flags, entry.value);
    if (rv != 0) return rv;
  }
  return 0;
}

static int on_ping(speedy_session *session, const uint8_t *payload, size_t len) {
  uint32_t id;
  if (spdy_frame_decode_ping(payload, len, &id) != 0) return fail_protocol(session);
  trace_recv(session, 0, "id=%u", id);
  int ours = (id & 1) == (session->role == SPEEDY_ROLE_CLIENT ? 1u : 0u);
  if (ours) return speedy_session_ping_acked(session, id);
  speedy_outframe *echo = speedy_outframe_new(session, SPEEDY_OUT_PING_ACK, 0);
  if (echo == NULL) return fail_with(session, SPEEDY_ERR_NOMEM);
  echo->value = id;
  int rv = speedy_queue_control(session, echo, 1);
  return rv != 0 ? fail_with(session, rv) : 0;
}

static int on_goaway(speedy_session *session, const uint8_t *payload, size_t len) {
  int32_t last_good;
  uint32_t status;
  if (spdy_frame_decode_goaway(version_of(session), payload, len, &last_good, &status) != 0)
    return fail_protocol(session);
  if (version_of(session) == 2) /* SPDY/2's GOAWAY has no status */
    trace_recv(session, 0, "last_good=%d", (int)last_good);
  else
    trace_recv(session, 0, "last_good=%d status=%u", (int)last_good, status);
  session->goaway_reason = status == SPDY_GOAWAY_OK               ? SPEEDY_RST_NONE
                           : status == SPDY_GOAWAY_INTERNAL_ERROR ? SPEEDY_RST_INTERNAL_ERROR
                                                                  : SPEEDY_RST_PROTOCOL_ERROR;
  return speedy_session_goaway_received(session, last_good);
}

static int on_window_update(speedy_session *session, const uint8_t *payload, size_t len) {
  int32_t id;
  uint32_t delta;
  if (spdy_frame_decode_window_update(payload, len, &id, &delta) != 0)
    return fail_protocol(session);
  trace_recv(session, id, "stream=%d delta=%u", (int)id, delta);
  if (id == 0 && state(session)->v3_undecided) {
    int rv = spdy_codec_settle(session, SPEEDY_PROTOCOL_SPDY3_1); /* only 3.1 has one */
    if (rv != 0) return fail_with(session, rv);
  }
  if (id != 0 && state(session)->v3_undecided) state(session)->v3_stream_credit += delta;
  if (id == 0) {
    if (!session->caps.session_window) return 0; /* no session window in v3 */
    if (session->session_send_window + delta > SPEEDY_MAX_WINDOW_SIZE)
      return speedy_session_fail(session, SPEEDY_ERR_FLOW_CONTROL, SPEEDY_RST_PROTOCOL_ERROR);
  } else {
    speedy_stream *stream = speedy_stream_find(session, id);
    if (stream == NULL) return 0; /* finished streams may still be credited: ignore */
    if (stream->send_window + delta > SPEEDY_MAX_WINDOW_SIZE)
      return reset_stream(session, id, SPEEDY_RST_FLOW_CONTROL_ERROR);
  }
  return speedy_session_window_update(session, id, delta);
}

static int on_credential(speedy_session *session, const uint8_t *payload, size_t len) {
  spdy_credential credential;
  if (spdy_frame_decode_credential(payload, len, &credential) != 0) return fail_protocol(session);
  trace_recv(session, 0, "slot=%u", (unsigned)credential.slot);
  return 0; /* validated and ignored: speedy does not use client certificate slots */
}

/* ---- the parser -------------------------------------------------------------------- */

/* Is this control type one we process in this version? Others are skipped. */
static int known_control(const speedy_session *session, uint16_t type) {
  switch (type) {
  case SPEEDY_SPDY_FRAME_SYN_STREAM:
  case SPEEDY_SPDY_FRAME_SYN_REPLY:
  case SPEEDY_SPDY_FRAME_RST_STREAM:
  case SPEEDY_SPDY_FRAME_SETTINGS:
  case SPEEDY_SPDY_FRAME_PING:
  case SPEEDY_SPDY_FRAME_GOAWAY:
  case SPEEDY_SPDY_FRAME_HEADERS:
    return 1;
  case SPEEDY_SPDY_FRAME_NOOP:
    return version_of(session) == 2;
  case SPEEDY_SPDY_FRAME_WINDOW_UPDATE:
    return version_of(session) >= 3;
  case SPEEDY_SPDY_FRAME_CREDENTIAL:
    return session->protocol == SPEEDY_PROTOCOL_SPDY3;
  default:
    return 0;
  }
}

static int process_control(speedy_session *session, const uint8_t *payload, size_t len) {
  switch (state(session)->frame.type) {
  case SPEEDY_SPDY_FRAME_SYN_STREAM:
    return on_syn_stream(session, payload, len);
  case SPEEDY_SPDY_FRAME_SYN_REPLY:
  case SPEEDY_SPDY_FRAME_HEADERS:
    return on_stream_headers(session, payload, len);
  case SPEEDY_SPDY_FRAME_RST_STREAM:
    return on_rst_stream(session, payload, len);
  case SPEEDY_SPDY_FRAME_SETTINGS:
    return on_settings(session, payload, len);
  case SPEEDY_SPDY_FRAME_PING:
    return on_ping(session, payload, len);
  case SPEEDY_SPDY_FRAME_GOAWAY:
    return on_goaway(session, payload, len);
  case SPEEDY_SPDY_FRAME_WINDOW_UPDATE:
    return on_window_update(session, payload, len);
  case SPEEDY_SPDY_FRAME_CREDENTIAL:
    return on_credential(session, payload, len);
  default:
    trace_recv(session, 0, "%s", "");
    return 0; /* NOOP */
  }
}

/* How far a stream may overrun its receive window without being reset. SPDY has no
 * SETTINGS acknowledgement: after we lower INITIAL_WINDOW_SIZE (or start below the
 * default 64 KiB), the peer may already have sent DATA under the larger window it knew.
 * The windows themselves stay exact (they may go negative; WINDOW_UPDATEs follow
 * consumption); only the reset threshold allows for the larger window, so what a peer can
 * make us hold stays bounded by the largest window it could have believed. */
static int64_t recv_window_slack(const speedy_session *session) {
  return (int64_t)session->max_local_initial_window - session->local_initial_window;
}

/* Decides what to do with a DATA frame from its header. */
static int begin_data(speedy_session *session) {
  const spdy_frame_hd *f = &state(session)->frame;
  int32_t id = f->stream_id;
  trace_recv(session, 0, "%s", "");
  if (id == 0) return fail_protocol(session);
  state(session)->recv_state = SPDY_RECV_DATA;
  speedy_session_data_start(session, id, f->length, 0);
  if (session->caps.session_window) {
    /* Every DATA byte counts against the session window, even for dead streams. A
     * violation is a session error: GOAWAY PROTOCOL_ERROR (3.1 has no better code). */
    if (f->length > session->session_recv_window && state(session)->v3_undecided) {
      /* Past the 3.1 session window we announced: only a SPDY/3 peer does that. */
      int rv = spdy_codec_settle(session, SPEEDY_PROTOCOL_SPDY3);
      if (rv != 0) return fail_with(session, rv);
    } else if (f->length > session->session_recv_window) {
      return speedy_session_fail(session, SPEEDY_ERR_FLOW_CONTROL, SPEEDY_RST_PROTOCOL_ERROR);
    } else {
      session->session_recv_window -= f->length;
    }
  }
  speedy_stream *stream = find_known(session, id);
  if (stream == NULL) return unknown_stream(session, id);
  uint32_t status = 0;
  if (stream->remote_closed)
    status = already_closed_status(session);
  else if (session->role == SPEEDY_ROLE_CLIENT && !stream->response_seen)
    status = SPEEDY_RST_PROTOCOL_ERROR; /* DATA before the response headers */
  else if (session->caps.flow_control &&
           f->length > stream->recv_window + recv_window_slack(session))
    status = SPEEDY_RST_FLOW_CONTROL_ERROR;
  if (status != 0) return reset_stream(session, id, status);
  if (session->caps.flow_control) stream->recv_window -= f->length;
  session->data_deliver = 1;
  return 0;
}

/* The last payload byte of a DATA frame has been handled. */
static int end_data(speedy_session *session) {
  state(session)->recv_state = SPDY_RECV_HEAD;
  return speedy_session_data_end(session, (state(session)->frame.flags & SPDY_FLAG_FIN) != 0, 0);
}

/* A frame header is complete: check it and choose the next state. */
static int begin_frame(speedy_session *session) {
  spdy_codec_state *st = state(session);
  spdy_frame_hd *f = &st->frame;
  spdy_frame_hd_decode(st->head, f);
  st->head_len = 0;
  session->recv_frames++;
  if (!f->is_control) return begin_data(session);
  if (f->version != st->wire_version)
    return speedy_session_fail(session, SPEEDY_ERR_UNSUPPORTED_VERSION, SPEEDY_RST_PROTOCOL_ERROR);
  if (!known_control(session, f->type)) {
    /* Unknown control frames are ignored (v3 2.2.1); their payload is skipped unread. */
    trace_recv(session, 0, "ignored");
    st->recv_state = SPDY_RECV_DISCARD;
    session->payload_left = f->length;
    return 0;
  }
  if (f->length > session->options.max_recv_control_frame)
    return speedy_session_fail(session, SPEEDY_ERR_FRAME_TOO_LARGE, SPEEDY_RST_PROTOCOL_ERROR);
  st->recv_state = SPDY_RECV_CONTROL;
  speedy_buf_reset(&session->inbuf);
  return 0;
}

static int64_t recv_bytes(speedy_session *session, const uint8_t *data, size_t len);

int spdy_codec_recv_in_frame(const speedy_session *session) {
  return session->wire.spdy.recv_state != SPDY_RECV_HEAD || session->wire.spdy.head_len > 0;
}

int64_t spdy_codec_recv(speedy_session *session, const uint8_t *data, size_t len) {
  int64_t rv = recv_bytes(session, data, len);
  /* Decided once the whole read is processed: a 3.1 peer writes its stream and session
   * WINDOW_UPDATEs together, and may put either first. */
  if (rv >= 0) {
    int settled = spdy_codec_settle_by_credit(session);
    if (settled != 0) rv = fail_with(session, settled);
  }
  return rv;
}

/* The parser loop. */
static int64_t recv_bytes(speedy_session *session, const uint8_t *data, size_t len) {
  spdy_codec_state *st = state(session);
  size_t pos = 0;
  for (;;) {
    int rv = 0;
    if (session->fatal_error != 0) return session->fatal_error; /* input ignored */
    switch (st->recv_state) {
    case SPDY_RECV_HEAD: {
      if (pos == len) return (int64_t)pos;
      size_t take = SPDY_FRAME_HEADER_LEN - st->head_len;
      if (take > len - pos) take = len - pos;
      memcpy(st->head + st->head_len, data + pos, take);
      st->head_len += take;
      pos += take;
      if (st->head_len == SPDY_FRAME_HEADER_LEN) rv = begin_frame(session);
      break;
    }
    case SPDY_RECV_CONTROL: {
      size_t have = speedy_buf_len(&session->inbuf);
      size_t take = st->frame.length - have;
      if (take > len - pos) take = len - pos;
      if (take > 0) {
        rv = speedy_buf_append(&session->inbuf, &session->mem, data + pos, take);
        if (rv != 0) return fail_with(session, rv);
        pos += take;
      }
      if (speedy_buf_len(&session->inbuf) < st->frame.length) return (int64_t)pos;
      st->recv_state = SPDY_RECV_HEAD;
      rv = process_control(session, speedy_buf_head(&session->inbuf),
                           speedy_buf_len(&session->inbuf));
      speedy_buf_reset(&session->inbuf);
      if (session->n_streams == 0) speedy_buf_shrink(&session->inbuf, &session->mem, 0);
      /* A large inflated block is not kept around for the next, usually small, one. */
      speedy_buf_reset(&st->inflater.scratch);
      speedy_buf_shrink(&st->inflater.scratch, &session->mem, 4096);
      break;
    }
    case SPDY_RECV_DATA:
    case SPDY_RECV_DISCARD: {
      size_t take = session->payload_left;
      if (take > len - pos) take = len - pos;
      if (take == 0 && session->payload_left > 0) return (int64_t)pos;
      int discard = st->recv_state == SPDY_RECV_DISCARD;
      if (!st->frame.is_control) session->recv_data_bytes += take;
      if (!discard) rv = speedy_session_data_chunk(session, data + pos, take);
      pos += take;
      session->payload_left -= (uint32_t)take;
      int paused = rv == SPEEDY_ERR_PAUSE;
      if (paused) rv = 0;
      if (rv == 0 && session->payload_left == 0) {
        if (discard)
          st->recv_state = SPDY_RECV_HEAD;
        else
          rv = end_data(session);
      }
      if (rv == 0 && paused) return (int64_t)pos;
      break;
    }
    }
    if (rv != 0) return rv;
    if (session->fatal_error != 0) return session->fatal_error;
  }
}
