/* h2_codec_recv.c — the HTTP/2 codec's input side: a parser that accepts bytes in any
 * split (the client preface, 9-octet frame headers, payloads), field blocks reassembled
 * from HEADERS or PUSH_PROMISE and CONTINUATION frames and HPACK-decoded as they come,
 * the stream states of RFC 9113 5.1, flow control (5.2, 6.9), the message rules of 8
 * (h2_message.c) and the defences: caps on CONTINUATION frames and field blocks, budgets
 * for resets and for frames that carry nothing, the owed-frame cap of the core.
 *
 * A frame's own checks are h2_frame.c's; what the frame means is here, through the core's
 * helpers (session_int.h). A stream error becomes RST_STREAM (5.4.2), a connection error
 * GOAWAY with the last stream we processed and a short reason as debug data (5.4.1).
 */
#include <string.h>

#include "session_int.h"

static speedy_h2_state *state(speedy_session *session) { return &session->wire.h2; }

/* ---- errors ------------------------------------------------------------------------ */

static int error_of_code(uint32_t code) {
  switch (code) {
  case SPEEDY_H2_FLOW_CONTROL_ERROR:
    return SPEEDY_ERR_FLOW_CONTROL;
  case SPEEDY_H2_FRAME_SIZE_ERROR:
    return SPEEDY_ERR_FRAME_TOO_LARGE;
  case SPEEDY_H2_COMPRESSION_ERROR:
    return SPEEDY_ERR_COMPRESSION;
  case SPEEDY_H2_ENHANCE_YOUR_CALM:
    return SPEEDY_ERR_FLOOD;
  default:
    return SPEEDY_ERR_PROTOCOL;
  }
}

/* 5.4.1: GOAWAY with the code and why, and the session reads no more. */
static int connection_error(speedy_session *session, uint32_t code, const char *why) {
  return speedy_session_fail_debug(session, error_of_code(code), speedy_h2_reason_of(code), why);
}

/* 5.4.2: RST_STREAM. Every reset the peer causes spends the rapid-reset budget. */
static int stream_error(speedy_session *session, int32_t stream_id, uint32_t code) {
  if (!speedy_budget_take(session, &session->reset_budget))
    return connection_error(session, SPEEDY_H2_ENHANCE_YOUR_CALM, "too many stream resets");
  int known = speedy_stream_find(session, stream_id) != NULL;
  int rv = speedy_session_reset_stream(session, stream_id, speedy_h2_reason_of(code));
  /* 5.1: frames the peer sent before it saw our RST_STREAM are ignored, also on a stream
   * refused or reset before it was ever opened (DATA after a REFUSED_STREAM request). */
  if (rv == 0 && !known) speedy_stream_remember_reset(session, stream_id);
  return rv;
}

/* A decoder's verdict (h2_frame.h). */
static int verdict(speedy_session *session, int v, int32_t stream_id, const char *why) {
  if (v == 0) return 0;
  if (SPEEDY_H2_VERDICT_IS_CONNECTION(v))
    return connection_error(session, SPEEDY_H2_VERDICT_CODE(v), why);
  return stream_error(session, stream_id, SPEEDY_H2_VERDICT_CODE(v));
}

/* A frame that carries nothing costs the peer a token. */
static int charge_empty(speedy_session *session) {
  if (speedy_budget_take(session, &session->empty_frame_budget)) return 0;
  return connection_error(session, SPEEDY_H2_ENHANCE_YOUR_CALM, "too many frames carrying nothing");
}

#define TRACE(session, ...)                                                                        \
  speedy_session_trace_recv((session), state(session)->frame.type, state(session)->frame.flags,    \
                            state(session)->frame.stream_id, state(session)->frame.length,         \
                            __VA_ARGS__)

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- stream states (5.1) ----------------------------------------------------------- */

typedef enum stream_status { STREAM_IDLE, STREAM_KNOWN, STREAM_CLOSED } stream_status;

/* Where a frame's stream stands, as the peer can know it. */
static stream_status classify(speedy_session *session, int32_t id, speedy_stream **out,
                              int *reset_by_us) {
  *out = NULL;
  *reset_by_us = 0;
  speedy_stream *stream = speedy_stream_find(session, id);
  if (stream != NULL) {
    if (stream->locally_initiated && !stream->opened_on_wire) return STREAM_IDLE; /* unseen */
    *out = stream;
    return STREAM_KNOWN;
  }
  if (speedy_session_is_peer_id(session, id) ? id > session->highest_peer_stream_id
                                             : id > session->highest_local_on_wire)
    return STREAM_IDLE;
  (void)speedy_stream_closed_recently(session, id, reset_by_us);
  /* 6.8: a peer's stream above the last id of our GOAWAY was ignored, not refused: frames
   * the peer sent on it before it saw the GOAWAY are discarded as for a stream we reset,
   * never answered with RST_STREAM (one per DATA frame in flight) or a connection error. */
  if (session->goaway_sent && speedy_session_is_peer_id(session, id) &&
      id > session->last_recv_stream_id)
    *reset_by_us = 1;
  return STREAM_CLOSED;
}

/* RFC 9218: a stream's priority changes; the scheduler places it again. */
static void set_priority(speedy_session *session, speedy_stream *stream, speedy_priority priority) {
  int active = stream->data_state == SPEEDY_DATA_ACTIVE;
  if (active) speedy_sched_remove(session, stream);
  stream->urgency = priority.urgency;
  stream->incremental = priority.incremental;
  if (active) speedy_sched_add(session, stream);
}

/* A PRIORITY_UPDATE for a stream not opened yet waits for its HEADERS. */
static int remember_idle_priority(speedy_session *session, int32_t id, speedy_priority priority) {
  speedy_h2_state *h2 = state(session);
  for (uint32_t i = 0; i < h2->n_idle; i++)
    if (h2->idle[i].id == id) {
      h2->idle[i].priority = priority;
      return 0;
    }
  /* RFC 9218 7.1: prioritised idle streams and open ones within MAX_CONCURRENT_STREAMS. */
  if ((uint64_t)session->n_remote_open + h2->n_idle >= session->options.max_concurrent_streams)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR,
                            "PRIORITY_UPDATE for too many idle streams");
  if (h2->n_idle == h2->cap_idle) {
    uint32_t cap = h2->cap_idle ? h2->cap_idle * 2 : 8;
    speedy_h2_idle_priority *grown =
        speedy_mem_realloc(&session->mem, h2->idle, cap * sizeof(*grown));
    if (grown == NULL) return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
    h2->idle = grown;
    h2->cap_idle = cap;
  }
  h2->idle[h2->n_idle++] = (speedy_h2_idle_priority){id, priority};
  return 0;
}

/* Stream id opens: its buffered priority, if any, is taken; those of lower ids the client
 * skipped are dropped (5.1.1: those streams are closed now). */
static int take_idle_priority(speedy_session *session, int32_t id, speedy_priority *out) {
  speedy_h2_state *h2 = state(session);
  int found = 0;
  for (uint32_t i = 0; i < h2->n_idle;) {
    if (h2->idle[i].id > id) {
      i++;
      continue;
    }
    if (h2->idle[i].id == id) {
      *out = h2->idle[i].priority;
      found = 1;
    }
    h2->idle[i] = h2->idle[--h2->n_idle];
  }
  return found;
}

/* ---- field blocks ------------------------------------------------------------------ */

/* HPACK hands over each field: checked by the message rules, kept for delivery. */
static int collect_field(void *user, const speedy_hpack_field *field) {
  speedy_session *session = user;
  speedy_h2_state *h2 = state(session);
  speedy_h2_block *b = &h2->block;
  if (b->fate != SPEEDY_H2_BLOCK_DELIVER || b->message.malformed) return 0;
  if (speedy_h2_message_field_judged(&b->message, field->name, field->name_len, field->value,
                                     field->value_len, field->flags) != 0)
    return 0; /* malformed: the stream is reset once the block is decoded */
  size_t need = 8 + field->name_len + field->value_len;
  int rv = speedy_buf_reserve(&h2->fields, &session->mem, need);
  if (rv == SPEEDY_ERR_NOMEM) return SPEEDY_HPACK_ERR_NOMEM;
  if (rv != 0) { /* past what the header-list cap allows: the decoder says so too */
    b->fate = SPEEDY_H2_BLOCK_RESET;
    b->reset_reason = SPEEDY_H2_ENHANCE_YOUR_CALM;
    return 0;
  }
  uint8_t *at = speedy_buf_tail(&h2->fields);
  uint32_t lens[2] = {(uint32_t)field->name_len, (uint32_t)field->value_len};
  memcpy(at, lens, 8);
  memcpy(at + 8, field->name, field->name_len);
  if (field->value_len > 0) memcpy(at + 8 + field->name_len, field->value, field->value_len);
  speedy_buf_commit(&h2->fields, need);
  b->n_fields++;
  return 0;
}

static void block_begin(speedy_session *session, int32_t stream_id, int promise, int end_stream,
                        speedy_h2_message_kind kind) {
  speedy_h2_state *h2 = state(session);
  memset(&h2->block, 0, sizeof(h2->block));
  h2->block.stream_id = stream_id;
  h2->block.promise = (uint8_t)promise;
  h2->block.end_stream = (uint8_t)(end_stream != 0);
  h2->block.fate = SPEEDY_H2_BLOCK_DELIVER;
  speedy_h2_message_begin(&h2->block.message, kind);
  speedy_buf_reset(&h2->fields);
}

static void block_reset(speedy_session *session, int32_t stream_id, uint32_t code) {
  speedy_h2_block *b = &state(session)->block;
  if (b->fate == SPEEDY_H2_BLOCK_DISCARD) return;
  b->fate = SPEEDY_H2_BLOCK_RESET;
  b->reset_reason = code;
  if (b->promise) b->promised_id = stream_id;
}

/* on_begin_headers, the collected fields, on_headers_end. */
static int emit_block(speedy_session *session, int32_t id, speedy_headers_kind kind, int32_t assoc,
                      int end_stream) {
  speedy_h2_state *h2 = state(session);
  int rv = speedy_session_emit_begin(session, id, kind, assoc);
  const uint8_t *p = speedy_buf_head(&h2->fields);
  for (size_t i = 0; rv == 0 && i < h2->block.n_fields; i++) {
    uint32_t lens[2];
    memcpy(lens, p, 8);
    speedy_header h = {(const char *)p + 8, lens[0], (const char *)p + 8 + lens[0], lens[1]};
    rv = speedy_session_emit_field(session, id, &h);
    p += 8 + (size_t)lens[0] + lens[1];
  }
  return rv != 0 ? rv : speedy_session_emit_end(session, id, end_stream);
}

/* 8.1.1: content-length against the DATA received, when the message may have content. */
static int content_length_wrong(const speedy_stream *stream) {
  return stream->content_length >= 0 && !stream->no_content &&
         (uint64_t)stream->content_length != stream->data_received;
}

/* Server: a request opened a stream. */
static int deliver_request(speedy_session *session) {
  speedy_h2_block *b = &state(session)->block;
  speedy_h2_message *m = &b->message;
  int32_t id = b->stream_id;
  if (speedy_h2_message_end(m) != 0) return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  /* 8.5: well formed, but we carry no tunnels: refused before anyone acted on it. */
  if (m->method == SPEEDY_H2_METHOD_CONNECT)
    return stream_error(session, id, SPEEDY_H2_REFUSED_STREAM);
  if (b->end_stream && m->content_length > 0) /* 8.1.1: no DATA can follow */
    return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  /* 5.1.2: beyond our limit: refused, so the client may retry. */
  if (session->n_remote_open >= session->options.max_concurrent_streams)
    return stream_error(session, id, SPEEDY_H2_REFUSED_STREAM);
  speedy_stream *stream = speedy_stream_create(session, id, 0);
  if (stream == NULL) return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
  session->last_recv_stream_id = id;
  /* RFC 9218 7: a PRIORITY_UPDATE is the latest signal and overrides the field. */
  speedy_priority priority = b->has_update ? b->update : m->priority;
  stream->urgency = priority.urgency;
  stream->incremental = priority.incremental;
  /* No signal of either scheme from a client that did not say it left RFC 7540's (RFC 9218
   * 2.1): RFC 7540's default, every stream a child of the root with the same weight (5.3.5),
   * so the answers share the connection, as libnghttp2 and h2o serve such a client. */
  if (!b->has_update && !m->has_priority && !b->rfc7540_order && !state(session)->peer_rfc9218)
    stream->incremental = 1;
  stream->content_length = m->content_length;
  stream->remote_closed = b->end_stream;
  int rv = emit_block(session, id, SPEEDY_HEADERS_REQUEST, 0, b->end_stream);
  return rv != 0 ? rv : speedy_session_settle_stream(session, id);
}

/* Client: a promised request reserved a stream (8.4). */
static int deliver_promise(speedy_session *session) {
  speedy_h2_block *b = &state(session)->block;
  int32_t id = b->promised_id;
  if (speedy_h2_message_end(&b->message) != 0)
    return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  if (session->n_remote_open >= session->options.max_concurrent_streams)
    return stream_error(session, id, SPEEDY_H2_REFUSED_STREAM);
  speedy_stream *stream = speedy_stream_create(session, id, 0);
  if (stream == NULL) return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
  session->last_recv_stream_id = id;
  stream->associated_id = b->stream_id;
  stream->local_closed = 1; /* the client never sends on a push */
  stream->reserved = 1;
  stream->head_request = b->message.method == SPEEDY_H2_METHOD_HEAD;
  return emit_block(session, id, SPEEDY_HEADERS_PUSH, b->stream_id, 0);
}

/* A block on a stream both sides know: a response (informational or final) or trailers. */
static int deliver_on_stream(speedy_session *session) {
  speedy_h2_block *b = &state(session)->block;
  speedy_h2_message *m = &b->message;
  int32_t id = b->stream_id;
  speedy_stream *stream = speedy_stream_find(session, id);
  if (stream == NULL) return 0;
  if (speedy_h2_message_end(m) != 0) return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  stream->reserved = 0; /* 5.1: any HEADERS opens a reserved stream, a 1xx one too */
  speedy_headers_kind kind;
  if (m->kind == SPEEDY_H2_MSG_RESPONSE) {
    if (m->status < 200) { /* 8.1: interim; one with END_STREAM is malformed */
      if (b->end_stream) return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
      return emit_block(session, id, SPEEDY_HEADERS_INFORMATIONAL, 0, 0);
    }
    stream->response_seen = 1;
    stream->no_content = stream->head_request || m->status == 204 || m->status == 304;
    stream->content_length = m->content_length;
    kind = SPEEDY_HEADERS_RESPONSE;
  } else {
    /* 8.1: trailers end the stream, and the content before them matched its length. */
    if (!b->end_stream || content_length_wrong(stream))
      return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
    kind = SPEEDY_HEADERS_EXTRA;
  }
  if (b->end_stream && content_length_wrong(stream))
    return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  if (b->end_stream) stream->remote_closed = 1;
  int rv = emit_block(session, id, kind, 0, b->end_stream);
  return rv != 0 ? rv : speedy_session_settle_stream(session, id);
}

static int block_end(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  speedy_h2_block *b = &h2->block;
  int rv = 0;
  if (b->fate == SPEEDY_H2_BLOCK_RESET)
    rv = stream_error(session, b->promise ? b->promised_id : b->stream_id, b->reset_reason);
  else if (b->fate == SPEEDY_H2_BLOCK_DELIVER)
    rv = b->promise ? deliver_promise(session)
         : b->opens ? deliver_request(session)
                    : deliver_on_stream(session);
  speedy_buf_reset(&h2->fields);
  if (session->n_streams == 0) speedy_buf_shrink(&h2->fields, &session->mem, 0);
  return rv;
}

/* One fragment of the block, decoded at once so nothing compressed is kept. */
static int block_fragment(speedy_session *session, const uint8_t *data, size_t len,
                          int end_headers) {
  speedy_h2_state *h2 = state(session);
  speedy_h2_block *b = &h2->block;
  b->fragment_bytes += len;
  /* The assembled block's cap: no legitimate block of the header-list size we allow needs
   * more octets than the list itself (every field costs 32 in the list). */
  if (b->fragment_bytes > (size_t)session->options.max_header_block + 1024)
    return speedy_session_fail_debug(session, SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE,
                                     SPEEDY_RST_ENHANCE_YOUR_CALM, "field block too large");
  int rv = speedy_hpack_decode(h2->decoder, data, len, end_headers, collect_field, session);
  if (rv == SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE) {
    /* The decoder stays in step; only this message is refused (10.5.1). */
    if (b->fate == SPEEDY_H2_BLOCK_DELIVER)
      block_reset(session, b->promise ? b->promised_id : b->stream_id, SPEEDY_H2_ENHANCE_YOUR_CALM);
  } else if (rv == SPEEDY_HPACK_ERR_NOMEM) {
    return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
  } else if (rv < 0) { /* 4.3: a block we cannot decode is a connection error */
    return connection_error(session, SPEEDY_H2_COMPRESSION_ERROR, speedy_hpack_strerror(rv));
  }
  b->active = !end_headers;
  return end_headers ? block_end(session) : 0;
}

/* ---- HEADERS, PUSH_PROMISE, CONTINUATION ------------------------------------------- */

static int on_headers(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  int32_t id = f->stream_id;
  speedy_h2_headers hd;
  int v = speedy_h2_decode_headers(f, payload, &hd);
  if (SPEEDY_H2_VERDICT_IS_CONNECTION(v)) return verdict(session, v, id, "bad HEADERS frame");
  TRACE(session, "stream=%d", (int)id);
  int end_headers = (f->flags & SPEEDY_H2_FLAG_END_HEADERS) != 0;
  int end_stream = (f->flags & SPEEDY_H2_FLAG_END_STREAM) != 0;
  if (v != 0) { /* a sound frame whose stream depends on itself: its block still decodes */
    size_t pad = 0, head = 5;
    if (f->flags & SPEEDY_H2_FLAG_PADDED) pad = payload[0], head++;
    hd.block = payload + head;
    hd.block_len = f->length - head - pad;
  }
  if (hd.block_len == 0 && !end_headers && !end_stream) {
    int rv = charge_empty(session);
    if (rv != 0) return rv;
  }
  speedy_stream *stream;
  int by_us;
  stream_status status = classify(session, id, &stream, &by_us);
  speedy_h2_message_kind kind = SPEEDY_H2_MSG_TRAILERS;
  if (status == STREAM_IDLE) {
    /* 5.1: only a client opens a stream with HEADERS, on an odd id above all before. */
    if (session->role != SPEEDY_ROLE_SERVER || !speedy_session_is_peer_id(session, id))
      return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "HEADERS on an idle stream");
    session->highest_peer_stream_id = id;
    block_begin(session, id, 0, end_stream, SPEEDY_H2_MSG_REQUEST);
    state(session)->block.opens = 1;
    state(session)->block.has_update =
        (uint8_t)take_idle_priority(session, id, &state(session)->block.update);
    state(session)->block.rfc7540_order =
        hd.priority.present && (hd.priority.exclusive || hd.priority.depends_on != 0);
    /* 6.8: after our final GOAWAY new streams are ignored (HPACK still decodes them). */
    if (session->goaway_sent) state(session)->block.fate = SPEEDY_H2_BLOCK_DISCARD;
  } else if (status == STREAM_CLOSED) {
    if (!by_us) /* 5.1: a closed stream; one never opened is out of order (5.1.1) */
      return connection_error(session,
                              speedy_stream_closed_recently(session, id, &by_us)
                                  ? SPEEDY_H2_STREAM_CLOSED
                                  : SPEEDY_H2_PROTOCOL_ERROR,
                              "HEADERS on a closed stream");
    block_begin(session, id, 0, end_stream, kind);
    state(session)->block.fate = SPEEDY_H2_BLOCK_DISCARD; /* sent before it saw our reset */
  } else {
    if (stream->reserved && stream->locally_initiated) /* reserved (local) */
      return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "HEADERS on a reserved stream");
    if (session->role == SPEEDY_ROLE_CLIENT && !stream->response_seen)
      kind = SPEEDY_H2_MSG_RESPONSE;
    block_begin(session, id, 0, end_stream, kind);
    if (stream->remote_closed) block_reset(session, id, SPEEDY_H2_STREAM_CLOSED); /* 5.1 */
  }
  if (v != 0) block_reset(session, id, SPEEDY_H2_VERDICT_CODE(v)); /* depends on itself */
  return block_fragment(session, hd.block, hd.block_len, end_headers);
}

static int on_push_promise(speedy_session *session, const uint8_t *payload) {
  speedy_h2_state *h2 = state(session);
  const speedy_h2_frame_hd *f = &h2->frame;
  /* 8.4: a client cannot push; 6.5.2: nor may a server once push is off. */
  if (session->role == SPEEDY_ROLE_SERVER)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "PUSH_PROMISE from a client");
  if (!h2->local_push)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "PUSH_PROMISE with push off");
  speedy_h2_push_promise pp;
  int v = speedy_h2_decode_push_promise(f, payload, &pp);
  if (v != 0) return verdict(session, v, f->stream_id, "bad PUSH_PROMISE frame");
  TRACE(session, "stream=%d promised=%d", (int)f->stream_id, (int)pp.promised_stream_id);
  int32_t promised = pp.promised_stream_id;
  if (promised <= session->highest_peer_stream_id) /* 5.1.1 */
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "promised stream id not new");
  session->highest_peer_stream_id = promised;
  int end_headers = (f->flags & SPEEDY_H2_FLAG_END_HEADERS) != 0;
  if (pp.block_len == 0 && !end_headers) {
    int rv = charge_empty(session);
    if (rv != 0) return rv;
  }
  speedy_stream *assoc;
  int by_us;
  stream_status status = classify(session, f->stream_id, &assoc, &by_us);
  /* 6.6: only on a request of ours the server has not finished answering. */
  int usable = status == STREAM_KNOWN && assoc->locally_initiated && !assoc->remote_closed;
  if (!usable && !(status == STREAM_CLOSED && by_us))
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "PUSH_PROMISE on a wrong stream");
  block_begin(session, f->stream_id, 1, 0, SPEEDY_H2_MSG_PROMISE);
  h2->block.promised_id = promised;
  /* Promised on a request we reset, or after our GOAWAY: not wanted. */
  if (!usable || session->goaway_sent) block_reset(session, promised, SPEEDY_H2_CANCEL);
  return block_fragment(session, pp.block, pp.block_len, end_headers);
}

static int on_continuation(speedy_session *session, const uint8_t *payload) {
  speedy_h2_state *h2 = state(session);
  const speedy_h2_frame_hd *f = &h2->frame;
  int v = speedy_h2_decode_continuation(f);
  if (v != 0) return verdict(session, v, f->stream_id, "bad CONTINUATION frame");
  TRACE(session, "stream=%d", (int)f->stream_id);
  if (++h2->block.continuations > session->options.max_continuations)
    return connection_error(session, SPEEDY_H2_ENHANCE_YOUR_CALM, "too many CONTINUATION frames");
  int end_headers = (f->flags & SPEEDY_H2_FLAG_END_HEADERS) != 0;
  if (f->length == 0 && !end_headers) {
    int rv = charge_empty(session);
    if (rv != 0) return rv;
  }
  return block_fragment(session, payload, f->length, end_headers);
}

/* ---- the other frames -------------------------------------------------------------- */

static int on_priority(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  speedy_h2_priority_fields fields;
  int v = speedy_h2_decode_priority(f, payload, &fields);
  TRACE(session, "stream=%d", (int)f->stream_id);
  if (v != 0) return verdict(session, v, f->stream_id, "bad PRIORITY frame");
  return charge_empty(session); /* 5.3.2: RFC 7540 priorities are ignored */
}

static int on_rst_stream(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  uint32_t code;
  int v = speedy_h2_decode_rst_stream(f, payload, &code);
  if (v != 0) return verdict(session, v, f->stream_id, "bad RST_STREAM frame");
  TRACE(session, "stream=%d error=%s", (int)f->stream_id, speedy_h2_error_name(code));
  speedy_stream *stream;
  int by_us;
  stream_status status = classify(session, f->stream_id, &stream, &by_us);
  if (status == STREAM_IDLE) /* 6.4 */
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "RST_STREAM on an idle stream");
  if (status == STREAM_CLOSED) return 0;
  if (!speedy_budget_take(session, &session->reset_budget)) /* rapid reset */
    return connection_error(session, SPEEDY_H2_ENHANCE_YOUR_CALM, "too many stream resets");
  speedy_session_drop_pending(session, f->stream_id);
  int rv = speedy_stream_close(session, stream, speedy_h2_reason_of(code));
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

static int on_settings(speedy_session *session, const uint8_t *payload) {
  speedy_h2_state *h2 = state(session);
  const speedy_h2_frame_hd *f = &h2->frame;
  int v = speedy_h2_decode_settings(f, payload, session->role == SPEEDY_ROLE_CLIENT);
  if (v != 0) return verdict(session, v, 0, "bad SETTINGS frame");
  if (f->flags & SPEEDY_H2_FLAG_ACK) {
    TRACE(session, "%s", "ack");
    return speedy_h2_settings_acked(session);
  }
  TRACE(session, "entries=%u", (unsigned)(f->length / 6));
  h2->settings_seen = 1;
  uint32_t table_size = 0, smallest_table_size = UINT32_MAX;
  int has_table_size = 0;
  /* 6.5.3: in order, all of them, then the acknowledgement. */
  for (size_t i = 0; i < f->length / 6; i++) {
    uint16_t setting;
    uint32_t value;
    speedy_h2_settings_entry(payload, i, &setting, &value);
    uint32_t id = speedy_h2_setting_id_of(setting);
    if (id == 0) continue; /* unknown: ignored */
    int rv = 0;
    switch (setting) {
    case SPEEDY_H2_SETTINGS_HEADER_TABLE_SIZE:
      /* RFC 7541 4.2: the encoder signals the smallest of several, then the last. */
      table_size = value;
      if (value < smallest_table_size) smallest_table_size = value;
      has_table_size = 1;
      break;
    case SPEEDY_H2_SETTINGS_ENABLE_PUSH:
      h2->peer_push = value != 0;
      break;
    case SPEEDY_H2_SETTINGS_MAX_CONCURRENT_STREAMS:
      rv = speedy_session_peer_max_concurrent(session, value);
      break;
    case SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE:
      /* 6.9.2: every stream window moves; past 2^31-1 is a connection error. */
      if (speedy_session_peer_initial_window(session, value, 1) != 0)
        return connection_error(session, SPEEDY_H2_FLOW_CONTROL_ERROR, "window overflow");
      break;
    case SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE:
      session->send_max_frame = value;
      break;
    case SPEEDY_H2_SETTINGS_MAX_HEADER_LIST_SIZE:
      h2->peer_max_header_list = value;
      break;
    case SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES:
      h2->peer_rfc9218 = value == 1;
      break;
    default:
      break;
    }
    if (rv != 0) return rv;
    session->remote_settings[speedy_setting_slot(id)] = value;
    rv = speedy_session_report_setting(session, id, 0, value);
    if (rv != 0) return rv;
  }
  speedy_outframe *ack = speedy_outframe_new(session, SPEEDY_OUT_SETTINGS_ACK, 0);
  if (ack == NULL) return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
  ack->has_value = (uint8_t)has_table_size;
  ack->value = table_size;
  ack->smallest_value = smallest_table_size;
  int rv = speedy_queue_control(session, ack, 1);
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

static int on_ping(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  uint8_t opaque[8];
  int v = speedy_h2_decode_ping(f, payload, opaque);
  if (v != 0) return verdict(session, v, 0, "bad PING frame");
  if (f->flags & SPEEDY_H2_FLAG_ACK) {
    TRACE(session, "%s", "ack");
    if (memcmp(opaque, speedy_h2_shutdown_opaque, 8) == 0) return speedy_h2_shutdown_acked(session);
    if (get_u32(opaque) != 0) return 0; /* not one of ours */
    return speedy_session_ping_acked(session, get_u32(opaque + 4));
  }
  TRACE(session, "%s", "");
  speedy_outframe *echo = speedy_outframe_new(session, SPEEDY_OUT_PING_ACK, 0);
  if (echo == NULL) return speedy_session_fail_with(session, SPEEDY_ERR_NOMEM);
  memcpy(echo->opaque, opaque, 8);
  int rv = speedy_queue_control(session, echo, 1); /* the flood cap counts answers */
  return rv != 0 ? speedy_session_fail_with(session, rv) : 0;
}

static int on_goaway(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  speedy_h2_goaway g;
  int v = speedy_h2_decode_goaway(f, payload, &g);
  if (v != 0) return verdict(session, v, 0, "bad GOAWAY frame");
  TRACE(session, "last_stream=%d error=%s", (int)g.last_stream_id,
        speedy_h2_error_name(g.error_code));
  session->goaway_reason = speedy_h2_reason_of(g.error_code);
  size_t keep =
      g.debug_len < sizeof(session->goaway_debug) ? g.debug_len : sizeof(session->goaway_debug);
  if (keep > 0) memcpy(session->goaway_debug, g.debug, keep);
  session->goaway_debug_len = keep;
  return speedy_session_goaway_received(session, g.last_stream_id);
}

static int on_window_update(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  int32_t id = f->stream_id;
  if (f->length != 4)
    return connection_error(session, SPEEDY_H2_FRAME_SIZE_ERROR, "bad WINDOW_UPDATE");
  uint32_t increment = get_u32(payload) & 0x7fffffffu;
  TRACE(session, "stream=%d delta=%u", (int)id, increment);
  if (id == 0) { /* 6.9, 6.9.1 */
    if (increment == 0)
      return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "WINDOW_UPDATE of 0");
    if (session->session_send_window + increment > SPEEDY_MAX_WINDOW_SIZE)
      return connection_error(session, SPEEDY_H2_FLOW_CONTROL_ERROR, "window overflow");
    return speedy_session_window_update(session, 0, increment);
  }
  speedy_stream *stream;
  int by_us;
  stream_status status = classify(session, id, &stream, &by_us);
  if (status == STREAM_IDLE)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream");
  if (status == STREAM_CLOSED) return charge_empty(session); /* ignored: it carries nothing */
  if (stream->reserved && !stream->locally_initiated)        /* reserved (remote) */
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR,
                            "WINDOW_UPDATE on a reserved stream");
  if (increment == 0) return stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR);
  if (stream->send_window + increment > SPEEDY_MAX_WINDOW_SIZE)
    return stream_error(session, id, SPEEDY_H2_FLOW_CONTROL_ERROR);
  return speedy_session_window_update(session, id, increment);
}

static int on_priority_update(speedy_session *session, const uint8_t *payload) {
  const speedy_h2_frame_hd *f = &state(session)->frame;
  /* RFC 9218 7.1: only clients send it. */
  if (session->role == SPEEDY_ROLE_CLIENT)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "PRIORITY_UPDATE from a server");
  speedy_h2_priority_update update;
  int v = speedy_h2_decode_priority_update(f, payload, &update);
  if (v != 0) return verdict(session, v, 0, "bad PRIORITY_UPDATE frame");
  int32_t id = update.prioritized_stream_id;
  TRACE(session, "stream=%d", (int)id);
  speedy_priority priority;
  if (speedy_priority_parse(update.field_value, update.field_value_len, &priority) != 0)
    return 0; /* a value that does not parse may be ignored */
  speedy_stream *stream;
  int by_us;
  stream_status status = classify(session, id, &stream, &by_us);
  if (status == STREAM_KNOWN) {
    set_priority(session, stream, priority);
    return 0;
  }
  if (status == STREAM_CLOSED) return 0;
  if (!speedy_session_is_peer_id(session, id)) /* a push stream that does not exist yet */
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "PRIORITY_UPDATE for an idle push");
  return remember_idle_priority(session, id, priority);
}

static int process_frame(speedy_session *session, const uint8_t *payload) {
  switch (state(session)->frame.type) {
  case SPEEDY_H2_FRAME_HEADERS:
    return on_headers(session, payload);
  case SPEEDY_H2_FRAME_PRIORITY:
    return on_priority(session, payload);
  case SPEEDY_H2_FRAME_RST_STREAM:
    return on_rst_stream(session, payload);
  case SPEEDY_H2_FRAME_SETTINGS:
    return on_settings(session, payload);
  case SPEEDY_H2_FRAME_PUSH_PROMISE:
    return on_push_promise(session, payload);
  case SPEEDY_H2_FRAME_PING:
    return on_ping(session, payload);
  case SPEEDY_H2_FRAME_GOAWAY:
    return on_goaway(session, payload);
  case SPEEDY_H2_FRAME_WINDOW_UPDATE:
    return on_window_update(session, payload);
  case SPEEDY_H2_FRAME_CONTINUATION:
    return on_continuation(session, payload);
  default:
    return on_priority_update(session, payload);
  }
}

/* ---- DATA -------------------------------------------------------------------------- */

/* The length of the content in this frame is known: 8.1.1's checks. */
static int count_content(speedy_session *session, uint32_t data_len) {
  if (!session->data_deliver) return 0;
  speedy_stream *stream = speedy_stream_find(session, session->data_stream_id);
  if (stream == NULL) return 0;
  stream->data_received += data_len;
  if ((stream->no_content && data_len > 0) ||
      (stream->content_length >= 0 && !stream->no_content &&
       stream->data_received > (uint64_t)stream->content_length)) {
    session->data_deliver = 0;
    return stream_error(session, stream->id, SPEEDY_H2_PROTOCOL_ERROR);
  }
  return 0;
}

static int begin_data(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  const speedy_h2_frame_hd *f = &h2->frame;
  int32_t id = f->stream_id;
  TRACE(session, "%s", "");
  if (id == 0) return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "DATA on stream 0");
  int padded = (f->flags & SPEEDY_H2_FLAG_PADDED) != 0;
  if (padded && f->length == 0)
    return connection_error(session, SPEEDY_H2_FRAME_SIZE_ERROR, "padded DATA without pad length");
  /* 6.9.1: the whole payload counts, whatever becomes of the stream. */
  if (f->length > session->session_recv_window)
    return connection_error(session, SPEEDY_H2_FLOW_CONTROL_ERROR, "connection window exceeded");
  session->session_recv_window -= f->length;
  if (f->length == 0 && !(f->flags & SPEEDY_H2_FLAG_END_STREAM)) {
    int rv = charge_empty(session);
    if (rv != 0) return rv;
  }
  h2->pad_left = 0;
  h2->pad_credit = padded ? 1 : 0;
  speedy_session_data_start(session, id, f->length - h2->pad_credit, 0);
  h2->recv_state = padded ? SPEEDY_H2_RECV_DATA_PAD : SPEEDY_H2_RECV_DATA;
  speedy_stream *stream;
  int by_us;
  stream_status status = classify(session, id, &stream, &by_us);
  int rv = 0;
  if (status == STREAM_IDLE)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "DATA on an idle stream");
  if (status == STREAM_CLOSED) {
    if (!by_us) rv = stream_error(session, id, SPEEDY_H2_STREAM_CLOSED); /* 5.1 */
  } else if (stream->reserved) {
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "DATA on a reserved stream");
  } else if (stream->remote_closed) {
    rv = stream_error(session, id, SPEEDY_H2_STREAM_CLOSED); /* half-closed (remote) */
  } else if (session->role == SPEEDY_ROLE_CLIENT && !stream->response_seen) {
    rv = stream_error(session, id, SPEEDY_H2_PROTOCOL_ERROR); /* 8.1: before the response */
  } else if (f->length > stream->recv_window) {
    rv = stream_error(session, id, SPEEDY_H2_FLOW_CONTROL_ERROR);
  } else {
    stream->recv_window -= f->length;
    session->data_deliver = 1;
  }
  if (rv != 0 || padded) return rv;
  return count_content(session, f->length);
}

/* The Pad Length octet of a padded DATA frame. */
static int after_pad_length(speedy_session *session, uint8_t pad) {
  speedy_h2_state *h2 = state(session);
  if (pad > h2->frame.length - 1) /* 6.1: padding as long as the payload */
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "padding too long");
  session->payload_left = h2->frame.length - 1 - pad;
  h2->pad_left = pad;
  h2->pad_credit = 1u + pad;
  h2->recv_state = SPEEDY_H2_RECV_DATA;
  return count_content(session, session->payload_left);
}

static int end_data(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  h2->recv_state = SPEEDY_H2_RECV_HEAD;
  int end_stream = (h2->frame.flags & SPEEDY_H2_FLAG_END_STREAM) != 0;
  if (end_stream && session->data_deliver) {
    speedy_stream *stream = speedy_stream_find(session, session->data_stream_id);
    if (stream != NULL && content_length_wrong(stream)) { /* 8.1.1 */
      int rv = speedy_session_data_end(session, 0, h2->pad_credit);
      return rv != 0 ? rv : stream_error(session, stream->id, SPEEDY_H2_PROTOCOL_ERROR);
    }
  }
  return speedy_session_data_end(session, end_stream, h2->pad_credit);
}

/* ---- the parser -------------------------------------------------------------------- */

static int known_type(uint8_t type) {
  return type <= SPEEDY_H2_FRAME_CONTINUATION || type == SPEEDY_H2_FRAME_PRIORITY_UPDATE;
}

/* A frame header is complete: check it and choose the next state. */
static int begin_frame(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  speedy_h2_frame_hd *f = &h2->frame;
  speedy_h2_frame_hd_decode(h2->head, f);
  h2->head_len = 0;
  session->recv_frames++;
  /* 6.2, 6.10: nothing comes between the frames of one field block. */
  if (h2->block.active &&
      (f->type != SPEEDY_H2_FRAME_CONTINUATION || f->stream_id != h2->block.stream_id))
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "CONTINUATION expected");
  if (!h2->block.active && f->type == SPEEDY_H2_FRAME_CONTINUATION)
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "CONTINUATION without a block");
  /* 3.4: the peer's preface is a SETTINGS frame. */
  if (!h2->settings_seen &&
      (f->type != SPEEDY_H2_FRAME_SETTINGS || (f->flags & SPEEDY_H2_FLAG_ACK)))
    return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "SETTINGS expected first");
  if (!known_type(f->type)) { /* 5.5: ignored, and discarded unread */
    TRACE(session, "%s", "ignored");
    h2->recv_state = SPEEDY_H2_RECV_DISCARD;
    session->payload_left = f->length;
    return charge_empty(session);
  }
  if (f->length > h2->recv_max_frame) { /* 4.2 */
    int v = speedy_h2_frame_too_large(f);
    if (SPEEDY_H2_VERDICT_IS_CONNECTION(v)) return verdict(session, v, 0, "frame too large");
    if (f->type == SPEEDY_H2_FRAME_DATA) { /* still counts against the connection window */
      speedy_stream *stream;
      int by_us;
      stream_status status = classify(session, f->stream_id, &stream, &by_us);
      if (status == STREAM_IDLE)
        return connection_error(session, SPEEDY_H2_PROTOCOL_ERROR, "DATA on an idle stream");
      if (f->length > session->session_recv_window)
        return connection_error(session, SPEEDY_H2_FLOW_CONTROL_ERROR,
                                "connection window exceeded");
      session->session_recv_window -= f->length;
      speedy_session_data_start(session, f->stream_id, f->length, 0);
      h2->pad_credit = 0;
      h2->pad_left = 0;
      h2->recv_state = SPEEDY_H2_RECV_DATA;
      if (status == STREAM_CLOSED && by_us) return 0; /* crossed our reset: discarded */
    } else {
      h2->recv_state = SPEEDY_H2_RECV_DISCARD;
      session->payload_left = f->length;
    }
    return stream_error(session, f->stream_id, SPEEDY_H2_FRAME_SIZE_ERROR);
  }
  if (f->type == SPEEDY_H2_FRAME_DATA) return begin_data(session);
  h2->recv_state = SPEEDY_H2_RECV_PAYLOAD;
  speedy_buf_reset(&session->inbuf);
  return 0;
}

/* 3.4: not HTTP/2 at all, so no GOAWAY either. */
static int preface_error(speedy_session *session) {
  session->goaway_sent = 1;
  return speedy_session_fail(session, SPEEDY_ERR_PROTOCOL, SPEEDY_RST_PROTOCOL_ERROR);
}

int speedy_h2_codec_recv_in_frame(const speedy_session *session) {
  const speedy_h2_state *h2 = &session->wire.h2;
  if (h2->recv_state == SPEEDY_H2_RECV_PREFACE) return h2->preface_got > 0;
  /* A field block waiting for CONTINUATION is a frame not yet whole. */
  return h2->recv_state != SPEEDY_H2_RECV_HEAD || h2->head_len > 0 || h2->block.active;
}

int64_t speedy_h2_codec_recv(speedy_session *session, const uint8_t *data, size_t len) {
  speedy_h2_state *h2 = state(session);
  size_t pos = 0;
  for (;;) {
    int rv = 0;
    if (session->fatal_error != 0) return session->fatal_error; /* input ignored */
    switch (h2->recv_state) {
    case SPEEDY_H2_RECV_PREFACE: {
      if (pos == len) return (int64_t)pos;
      size_t take = SPEEDY_H2_PREFACE_LEN - h2->preface_got;
      if (take > len - pos) take = len - pos;
      if (memcmp(data + pos, &SPEEDY_H2_PREFACE[h2->preface_got], take) != 0)
        return preface_error(session);
      h2->preface_got = (uint8_t)(h2->preface_got + take);
      pos += take;
      if (h2->preface_got == SPEEDY_H2_PREFACE_LEN) h2->recv_state = SPEEDY_H2_RECV_HEAD;
      break;
    }
    case SPEEDY_H2_RECV_HEAD: {
      if (pos == len) return (int64_t)pos;
      size_t take = SPEEDY_H2_FRAME_HEADER_LEN - h2->head_len;
      if (take > len - pos) take = len - pos;
      memcpy(h2->head + h2->head_len, data + pos, take);
      h2->head_len = (uint8_t)(h2->head_len + take);
      pos += take;
      if (h2->head_len == SPEEDY_H2_FRAME_HEADER_LEN) rv = begin_frame(session);
      break;
    }
    case SPEEDY_H2_RECV_PAYLOAD: {
      size_t have = speedy_buf_len(&session->inbuf);
      if (have == 0 && len - pos >= h2->frame.length) {
        /* The whole payload is in the caller's bytes: read in place, never copied. */
        const uint8_t *payload = h2->frame.length > 0 ? data + pos : h2->head;
        pos += h2->frame.length;
        h2->recv_state = SPEEDY_H2_RECV_HEAD;
        rv = process_frame(session, payload);
        break;
      }
      size_t take = h2->frame.length - have;
      if (take > len - pos) take = len - pos;
      if (take > 0) {
        rv = speedy_buf_append(&session->inbuf, &session->mem, data + pos, take);
        if (rv != 0) return speedy_session_fail_with(session, rv);
        pos += take;
      }
      if (speedy_buf_len(&session->inbuf) < h2->frame.length) return (int64_t)pos;
      h2->recv_state = SPEEDY_H2_RECV_HEAD;
      /* A zero-length payload has no buffer: any non-null pointer will do. */
      const uint8_t *payload = h2->frame.length > 0 ? speedy_buf_head(&session->inbuf) : h2->head;
      rv = process_frame(session, payload);
      speedy_buf_reset(&session->inbuf);
      if (session->n_streams == 0) speedy_buf_shrink(&session->inbuf, &session->mem, 0);
      break;
    }
    case SPEEDY_H2_RECV_DATA_PAD:
      if (pos == len) return (int64_t)pos;
      session->recv_data_bytes++;
      rv = after_pad_length(session, data[pos++]);
      break;
    case SPEEDY_H2_RECV_DATA: {
      size_t take = session->payload_left;
      if (take > len - pos) take = len - pos;
      if (take == 0 && session->payload_left > 0) return (int64_t)pos;
      session->recv_data_bytes += take;
      rv = speedy_session_data_chunk(session, data + pos, take);
      pos += take;
      session->payload_left -= (uint32_t)take;
      int paused = rv == SPEEDY_ERR_PAUSE;
      if (paused) rv = 0;
      if (rv == 0 && session->payload_left == 0) {
        if (h2->pad_left > 0)
          h2->recv_state = SPEEDY_H2_RECV_PADDING;
        else
          rv = end_data(session);
      }
      if (rv == 0 && paused) return (int64_t)pos;
      break;
    }
    case SPEEDY_H2_RECV_PADDING: {
      size_t take = h2->pad_left;
      if (take > len - pos) take = len - pos;
      if (take == 0) return (int64_t)pos;
      pos += take; /* 6.1: padding need not be checked for zeros */
      session->recv_data_bytes += take;
      h2->pad_left -= (uint32_t)take;
      if (h2->pad_left == 0) rv = end_data(session);
      break;
    }
    case SPEEDY_H2_RECV_DISCARD: {
      size_t take = session->payload_left;
      if (take > len - pos) take = len - pos;
      if (take == 0 && session->payload_left > 0) return (int64_t)pos;
      pos += take;
      session->payload_left -= (uint32_t)take;
      if (session->payload_left == 0) h2->recv_state = SPEEDY_H2_RECV_HEAD;
      break;
    }
    }
    if (rv != 0) return rv;
  }
}
