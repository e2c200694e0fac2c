/* h2_codec.c — the HTTP/2 codec (RFC 9113) behind the session core: its table, what
 * opens a session (the client preface and SETTINGS, 3.4), header lists the application
 * submits (checked by the rules we hold the peer to, h2_message.c), queued frames written
 * when serialised (field blocks HPACK-encoded in output order and split into CONTINUATION
 * frames above the peer's SETTINGS_MAX_FRAME_SIZE), our settings taking effect when
 * acknowledged (6.5.3) and the acknowledgement's timeout, and the graceful shutdown of
 * 6.8. The input side is h2_codec_recv.c.
 */
#include <stdio.h>
#include <string.h>

#include "fieldset.h"
#include "session_int.h"

static speedy_h2_state *state(speedy_session *session) { return &session->wire.h2; }

const uint8_t speedy_h2_shutdown_opaque[8] = {'s', 'h', 'u', 't', 'd', 'o', 'w', 'n'};

/* ---- neutral values on the wire ---------------------------------------------------- */

/* Neutral reasons are speedy_rst_status values; HTTP/2 has its own codes (7). */
uint32_t speedy_h2_code_of(uint32_t reason) {
  switch (reason) {
  case SPEEDY_RST_NONE:
    return SPEEDY_H2_NO_ERROR;
  case SPEEDY_RST_REFUSED_STREAM:
    return SPEEDY_H2_REFUSED_STREAM;
  case SPEEDY_RST_CANCEL:
    return SPEEDY_H2_CANCEL;
  case SPEEDY_RST_INTERNAL_ERROR:
    return SPEEDY_H2_INTERNAL_ERROR;
  case SPEEDY_RST_FLOW_CONTROL_ERROR:
    return SPEEDY_H2_FLOW_CONTROL_ERROR;
  case SPEEDY_RST_STREAM_ALREADY_CLOSED:
    return SPEEDY_H2_STREAM_CLOSED;
  case SPEEDY_RST_FRAME_TOO_LARGE:
    return SPEEDY_H2_FRAME_SIZE_ERROR;
  case SPEEDY_RST_SETTINGS_TIMEOUT:
    return SPEEDY_H2_SETTINGS_TIMEOUT;
  case SPEEDY_RST_COMPRESSION_ERROR:
    return SPEEDY_H2_COMPRESSION_ERROR;
  case SPEEDY_RST_CONNECT_ERROR:
    return SPEEDY_H2_CONNECT_ERROR;
  case SPEEDY_RST_ENHANCE_YOUR_CALM:
    return SPEEDY_H2_ENHANCE_YOUR_CALM;
  case SPEEDY_RST_INADEQUATE_SECURITY:
    return SPEEDY_H2_INADEQUATE_SECURITY;
  case SPEEDY_RST_HTTP_1_1_REQUIRED:
    return SPEEDY_H2_HTTP_1_1_REQUIRED;
  default: /* PROTOCOL_ERROR, and SPDY's INVALID_STREAM, STREAM_IN_USE ... */
    return SPEEDY_H2_PROTOCOL_ERROR;
  }
}

uint32_t speedy_h2_reason_of(uint32_t code) {
  static const uint32_t reasons[] = {SPEEDY_RST_NONE,
                                     SPEEDY_RST_PROTOCOL_ERROR,
                                     SPEEDY_RST_INTERNAL_ERROR,
                                     SPEEDY_RST_FLOW_CONTROL_ERROR,
                                     SPEEDY_RST_SETTINGS_TIMEOUT,
                                     SPEEDY_RST_STREAM_ALREADY_CLOSED,
                                     SPEEDY_RST_FRAME_TOO_LARGE,
                                     SPEEDY_RST_REFUSED_STREAM,
                                     SPEEDY_RST_CANCEL,
                                     SPEEDY_RST_COMPRESSION_ERROR,
                                     SPEEDY_RST_CONNECT_ERROR,
                                     SPEEDY_RST_ENHANCE_YOUR_CALM,
                                     SPEEDY_RST_INADEQUATE_SECURITY,
                                     SPEEDY_RST_HTTP_1_1_REQUIRED};
  /* 7: an unknown code must trigger nothing special; it may be taken as INTERNAL_ERROR. */
  return code < sizeof(reasons) / sizeof(reasons[0]) ? reasons[code] : SPEEDY_RST_INTERNAL_ERROR;
}

uint16_t speedy_h2_setting_of(uint32_t id) {
  switch (id) {
  case SPEEDY_SETTINGS_HEADER_TABLE_SIZE:
    return SPEEDY_H2_SETTINGS_HEADER_TABLE_SIZE;
  case SPEEDY_SETTINGS_ENABLE_PUSH:
    return SPEEDY_H2_SETTINGS_ENABLE_PUSH;
  case SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS:
    return SPEEDY_H2_SETTINGS_MAX_CONCURRENT_STREAMS;
  case SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE:
    return SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE;
  case SPEEDY_SETTINGS_MAX_FRAME_SIZE:
    return SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE;
  case SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE:
    return SPEEDY_H2_SETTINGS_MAX_HEADER_LIST_SIZE;
  case SPEEDY_SETTINGS_ENABLE_CONNECT_PROTOCOL:
    return SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL;
  case SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES:
    return SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES;
  default:
    return 0;
  }
}

uint32_t speedy_h2_setting_id_of(uint16_t setting) {
  static const uint32_t ids[] = {0,
                                 SPEEDY_SETTINGS_HEADER_TABLE_SIZE,
                                 SPEEDY_SETTINGS_ENABLE_PUSH,
                                 SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS,
                                 SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE,
                                 SPEEDY_SETTINGS_MAX_FRAME_SIZE,
                                 SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE,
                                 0,
                                 SPEEDY_SETTINGS_ENABLE_CONNECT_PROTOCOL,
                                 SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES};
  return setting < sizeof(ids) / sizeof(ids[0]) ? ids[setting] : 0;
}

static int reason_allowed(const speedy_session *session, uint32_t reason) {
  (void)session;
  return reason <= SPEEDY_RST_HTTP_1_1_REQUIRED;
}

static int frame_type(const speedy_outframe *frame) {
  switch (frame->kind) {
  case SPEEDY_OUT_HEADERS:
    return frame->role == SPEEDY_BLOCK_PROMISE ? SPEEDY_H2_FRAME_PUSH_PROMISE
                                               : SPEEDY_H2_FRAME_HEADERS;
  case SPEEDY_OUT_RST:
    return SPEEDY_H2_FRAME_RST_STREAM;
  case SPEEDY_OUT_SETTINGS:
  case SPEEDY_OUT_SETTINGS_ACK:
    return SPEEDY_H2_FRAME_SETTINGS;
  case SPEEDY_OUT_PING:
  case SPEEDY_OUT_PING_ACK:
    return SPEEDY_H2_FRAME_PING;
  case SPEEDY_OUT_GOAWAY:
    return SPEEDY_H2_FRAME_GOAWAY;
  case SPEEDY_OUT_PRIORITY_UPDATE:
    return SPEEDY_H2_FRAME_PRIORITY_UPDATE;
  default:
    return SPEEDY_H2_FRAME_WINDOW_UPDATE;
  }
}

static void data_header(uint8_t *out, int32_t stream_id, int end_stream, uint32_t length) {
  speedy_h2_encode_data_hd(out, stream_id, length, end_stream);
}

/* Settings we can send, and their values (6.5.2). */
static int check_settings(const speedy_session *session, const speedy_setting *settings, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint32_t v = settings[i].value;
    switch (speedy_h2_setting_of(settings[i].id)) {
    case 0:
      return SPEEDY_ERR_INVALID_ARGUMENT;
    case SPEEDY_H2_SETTINGS_ENABLE_PUSH:
      if (v > 1 || (v == 1 && session->role == SPEEDY_ROLE_SERVER))
        return SPEEDY_ERR_INVALID_ARGUMENT;
      break;
    case SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE:
      if (v > SPEEDY_H2_MAX_WINDOW) return SPEEDY_ERR_INVALID_ARGUMENT;
      break;
    case SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE:
      if (v < SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE || v > SPEEDY_H2_MAX_MAX_FRAME_SIZE ||
          v > session->options.max_frame_size)
        return SPEEDY_ERR_INVALID_ARGUMENT; /* our input buffer is sized by the option */
      break;
    case SPEEDY_H2_SETTINGS_HEADER_TABLE_SIZE:
      if (v > 1024 * 1024) return SPEEDY_ERR_INVALID_ARGUMENT;
      break;
    case SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL: /* we do not carry tunnels */
      return SPEEDY_ERR_INVALID_ARGUMENT;
    case SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES:
      if (v > 1) return SPEEDY_ERR_INVALID_ARGUMENT;
      break;
    default:
      break;
    }
  }
  /* Each SETTINGS waits for its acknowledgement in a short queue. */
  size_t waiting = session->wire.h2.n_sent;
  for (const speedy_outframe *f = session->ctrl_head; f != NULL; f = f->next)
    waiting += f->kind == SPEEDY_OUT_SETTINGS;
  return waiting < SPEEDY_H2_MAX_UNACKED_SETTINGS ? 0 : SPEEDY_ERR_INVALID_STATE;
}

/* ---- header lists the application submits ----------------------------------------- */

/* A laid-out list: the field records (with a spare one for the priority field), then the
 * names and values they point at, behind the frame record. */
typedef struct h2_layout {
  size_t n_fields;
  uint8_t has_priority; /* the list carries a priority field */
  speedy_hpack_field fields[];
} h2_layout;

static int name_is(const speedy_header *h, const char *name) {
  size_t len = strlen(name);
  return h->name_len == len && memcmp(h->name, name, len) == 0;
}

/* Checks a list by the rules of kind, pseudo-header fields first as they will go, and
 * lays it out in a frame of role. extra (may be NULL) is one more field put first. */
static int lay_out(speedy_session *session, speedy_h2_message_kind kind, speedy_block_role role,
                   const speedy_header *extra, const speedy_header *headers, size_t n,
                   speedy_h2_message *message, speedy_outframe **out) {
  size_t total = n + (extra != NULL), bytes = 0, list_size = 0;
  for (size_t i = 0; i < n; i++) {
    if (headers[i].name_len > SIZE_MAX / 4 || headers[i].value_len > SIZE_MAX / 4 ||
        bytes > SIZE_MAX / 2)
      return SPEEDY_ERR_INVALID_HEADER;
    bytes += headers[i].name_len + headers[i].value_len;
  }
  if (extra != NULL) bytes += extra->name_len + extra->value_len;
  list_size = bytes + 32 * total; /* 6.5.2: as SETTINGS_MAX_HEADER_LIST_SIZE counts */
  if (list_size > state(session)->peer_max_header_list || list_size > (size_t)16 * 1024 * 1024)
    return SPEEDY_ERR_INVALID_HEADER;
  speedy_h2_message_begin(message, kind);
  size_t record = sizeof(h2_layout) + (total + 1) * sizeof(speedy_hpack_field);
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_HEADERS, record + bytes);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->role = (uint8_t)role;
  frame->n_headers = total;
  h2_layout *layout = (h2_layout *)(void *)frame->block;
  layout->has_priority = 0;
  uint8_t *at = frame->block + record;
  size_t k = 0;
  /* Two passes: pseudo-header fields, then the others, each in the order given. */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < total; i++) {
      const speedy_header *h = extra != NULL ? (i == 0 ? extra : &headers[i - 1]) : &headers[i];
      int pseudo = speedy_h2_is_pseudo((const uint8_t *)h->name, h->name_len);
      if (pseudo != (pass == 0)) continue;
      speedy_hpack_field *f = &layout->fields[k++];
      at = speedy_field_lay_out(f, h, at);
      if (name_is(h, "priority")) layout->has_priority = 1;
      speedy_h2_message_field(message, f->name, f->name_len, f->value, f->value_len);
    }
  }
  layout->n_fields = total;
  if (speedy_h2_message_end(message) != 0) {
    speedy_outframe_free(session, frame);
    return SPEEDY_ERR_INVALID_HEADER;
  }
  *out = frame;
  return 0;
}

static int prepare_block(speedy_session *session, speedy_block_role role,
                         const speedy_header *headers, size_t n, speedy_outframe **out) {
  speedy_h2_message_kind kind = role == SPEEDY_BLOCK_REQUEST ? SPEEDY_H2_MSG_REQUEST
                                : role == SPEEDY_BLOCK_EXTRA ? SPEEDY_H2_MSG_TRAILERS
                                                             : SPEEDY_H2_MSG_RESPONSE;
  speedy_h2_message message;
  int rv = lay_out(session, kind, role, NULL, headers, n, &message, out);
  if (rv != 0) return rv;
  int ok = 1;
  if (role == SPEEDY_BLOCK_REQUEST)
    /* We carry no tunnels: CONNECT is refused here, and an authority is required. */
    ok =
        message.method != SPEEDY_H2_METHOD_CONNECT && (message.pseudo & SPEEDY_H2_PSEUDO_AUTHORITY);
  else if (role == SPEEDY_BLOCK_RESPONSE)
    ok = message.status >= 200;
  else if (role == SPEEDY_BLOCK_INFORMATIONAL)
    ok = message.status < 200;
  if (!ok) {
    speedy_outframe_free(session, *out);
    *out = NULL;
    return SPEEDY_ERR_INVALID_HEADER;
  }
  (*out)->head_request = message.method == SPEEDY_H2_METHOD_HEAD;
  /* RFC 9110 6.4.1: a 204 or 304 has no content, and the peer resets DATA after one. */
  (*out)->no_content =
      role == SPEEDY_BLOCK_RESPONSE && (message.status == 204 || message.status == 304);
  return 0;
}

/* A final response from a prepared set: the frame holds a reference instead of a copy
 * (fieldset.c checked the fields once, as lay_out would). */
static int prepare_fieldset(speedy_session *session, speedy_fieldset *set, speedy_outframe **out) {
  if (set->list_size > state(session)->peer_max_header_list) return SPEEDY_ERR_INVALID_HEADER;
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_HEADERS, 0);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->role = SPEEDY_BLOCK_RESPONSE;
  frame->n_headers = set->n;
  frame->no_content = set->no_content;
  speedy_fieldset_retain(set);
  frame->fieldset = set;
  *out = frame;
  return 0;
}

static int prepare_push(speedy_session *session, const speedy_header *request, size_t n_request,
                        const speedy_header *response, size_t n_response, speedy_outframe **promise,
                        speedy_outframe **open) {
  if (!state(session)->peer_push) return SPEEDY_ERR_INVALID_STATE; /* ENABLE_PUSH = 0 */
  static const speedy_header get = {":method", 7, "GET", 3};
  const speedy_header *extra = &get;
  for (size_t i = 0; i < n_request; i++)
    if (name_is(&request[i], ":method")) extra = NULL;
  speedy_h2_message message;
  int rv = lay_out(session, SPEEDY_H2_MSG_PROMISE, SPEEDY_BLOCK_PROMISE, extra, request, n_request,
                   &message, promise);
  if (rv != 0) return rv;
  rv = lay_out(session, SPEEDY_H2_MSG_RESPONSE, SPEEDY_BLOCK_PUSH, NULL, response, n_response,
               &message, open);
  if (rv == 0 && message.status < 200) {
    speedy_outframe_free(session, *open);
    rv = SPEEDY_ERR_INVALID_HEADER;
  } else if (rv == 0) {
    (*open)->no_content = message.status == 204 || message.status == 304;
  }
  if (rv != 0) {
    speedy_outframe_free(session, *promise);
    *promise = *open = NULL;
  }
  return rv;
}

/* ---- serialising ------------------------------------------------------------------- */

static void trace_sent(speedy_session *session, int type, uint8_t flags, int32_t stream_id,
                       uint32_t length, const char *summary) {
  speedy_trace(session, 1, type, flags, stream_id, length, summary);
}

/* Keeps block as set's encoding while the encoder stays where it is (serialise_block). */
static void remember_block(speedy_h2_state *h2, speedy_fieldset *set, const uint8_t *block,
                           size_t len) {
  if (h2->memo_set != set) {
    speedy_fieldset_retain(set);
    speedy_fieldset_release(h2->memo_set);
    h2->memo_set = set;
  }
  speedy_hpack_encoder_mark(h2->encoder, &h2->memo_mark);
  memcpy(h2->memo, block, len);
  h2->memo_len = (uint32_t)len;
}

static void forget_block(speedy_h2_state *h2) {
  speedy_fieldset_release(h2->memo_set);
  h2->memo_set = NULL;
  h2->memo_len = 0;
}

/* A field block: framed into the output as HEADERS (or PUSH_PROMISE) and CONTINUATION
 * frames of at most the peer's frame size. A block that surely fits one frame (the usual
 * case) is HPACK-encoded straight behind its frame header; a larger one goes through the
 * scratch buffer, given back at once (it would be a busy session's only spare copy). */
static int serialise_block(speedy_session *session, speedy_outframe *frame) {
  speedy_h2_state *h2 = state(session);
  const speedy_hpack_field *fields;
  const speedy_hpack_hint *hints = NULL;
  size_t n;
  char priority[8];
  if (frame->fieldset != NULL) {
    fields = frame->fieldset->fields;
    hints = frame->fieldset->hints;
    n = frame->fieldset->n;
  } else {
    h2_layout *layout = (h2_layout *)(void *)frame->block;
    n = layout->n_fields;
    /* RFC 9218: a request's urgency, unless the application gave a priority field. */
    if (frame->role == SPEEDY_BLOCK_REQUEST && frame->urgency != SPEEDY_PRIORITY_DEFAULT_URGENCY &&
        !layout->has_priority) {
      snprintf(priority, sizeof(priority), "u=%u", (unsigned)frame->urgency);
      layout->fields[n++] = (speedy_hpack_field){(const uint8_t *)"priority", 8,
                                                 (const uint8_t *)priority, strlen(priority), 0};
    }
    fields = layout->fields;
  }
  size_t bound = speedy_hpack_encode_bound(h2->encoder, fields, n);
  int promise = frame->role == SPEEDY_BLOCK_PROMISE;
  size_t max_fragment = session->send_max_frame - (promise ? 4 : 0);
  size_t frames = bound / max_fragment + 1;
  if (bound == 0 || bound > h2->scratch.limit) return SPEEDY_ERR_FRAME_TOO_LARGE;
  int direct = bound <= max_fragment;
  size_t first_head = SPEEDY_H2_FRAME_HEADER_LEN + (promise ? 4 : 0);
  /* Room first, in both buffers: once the block is encoded it must go out whole, or the
   * peer's decoder falls out of step. */
  speedy_buf_reset(&h2->scratch);
  int rv = direct ? 0 : speedy_buf_reserve(&h2->scratch, &session->mem, bound);
  if (rv == 0)
    rv = speedy_buf_reserve(&session->outbuf, &session->mem,
                            bound + frames * SPEEDY_H2_FRAME_HEADER_LEN + 4);
  if (rv != 0) return rv;
  uint8_t *block =
      direct ? speedy_buf_tail(&session->outbuf) + first_head : speedy_buf_tail(&h2->scratch);
  int64_t len;
  if (frame->fieldset != NULL && frame->fieldset == h2->memo_set &&
      speedy_hpack_encoder_at_mark(h2->encoder, &h2->memo_mark)) {
    memcpy(block, h2->memo, h2->memo_len); /* the encoding would be these octets again */
    len = h2->memo_len;
  } else {
    speedy_hpack_mark before;
    speedy_hpack_encoder_mark(h2->encoder, &before);
    len = speedy_hpack_encode_hinted(h2->encoder, fields, hints, n, block, bound);
    if (len < 0) {
      speedy_buf_shrink(&h2->scratch, &session->mem, 0);
      return len == SPEEDY_HPACK_ERR_NOMEM ? SPEEDY_ERR_NOMEM : SPEEDY_ERR_COMPRESSION;
    }
    if (frame->fieldset != NULL && (size_t)len <= sizeof(h2->memo) &&
        speedy_hpack_encoder_at_mark(h2->encoder, &before))
      remember_block(h2, frame->fieldset, block, (size_t)len);
  }
  size_t done = 0;
  int first = 1;
  char summary[64] = "";
  if (session->options.frame_summaries && session->callbacks.on_frame != NULL)
    snprintf(summary, sizeof(summary), "headers=%zu", n);
  do {
    size_t take = (size_t)len - done < max_fragment ? (size_t)len - done : max_fragment;
    int last = done + take == (size_t)len;
    uint8_t *out = speedy_buf_tail(&session->outbuf);
    size_t head;
    uint8_t flags = last ? SPEEDY_H2_FLAG_END_HEADERS : 0;
    int type = SPEEDY_H2_FRAME_CONTINUATION;
    int32_t on_stream = promise ? frame->associated_id : frame->stream_id;
    if (first && promise) {
      head =
          speedy_h2_encode_push_promise_hd(out, on_stream, frame->stream_id, (uint32_t)take, last);
      type = SPEEDY_H2_FRAME_PUSH_PROMISE;
    } else if (first) {
      if (frame->end_stream) flags |= SPEEDY_H2_FLAG_END_STREAM;
      head = speedy_h2_encode_headers_hd(out, on_stream, (uint32_t)take, flags);
      type = SPEEDY_H2_FRAME_HEADERS;
    } else {
      head = speedy_h2_encode_continuation_hd(out, on_stream, (uint32_t)take, last);
    }
    if (!direct) memcpy(out + head, block + done, take);
    speedy_buf_commit(&session->outbuf, head + take);
    trace_sent(session, type, flags, on_stream,
               (uint32_t)(head + take - SPEEDY_H2_FRAME_HEADER_LEN), first ? summary : "");
    done += take;
    first = 0;
  } while (done < (size_t)len);
  speedy_buf_shrink(&h2->scratch, &session->mem, 0);
  return 0;
}

/* Our SETTINGS: on the wire in HTTP/2's ids, and remembered until acknowledged. */
static int serialise_settings(speedy_session *session, const speedy_outframe *frame) {
  speedy_h2_state *h2 = state(session);
  uint16_t ids[SPEEDY_SETTINGS_MAX_ID + 1];
  uint32_t values[SPEEDY_SETTINGS_MAX_ID + 1];
  for (size_t i = 0; i < frame->n_settings; i++) {
    ids[i] = speedy_h2_setting_of(frame->settings[i].id);
    values[i] = frame->settings[i].value;
  }
  uint8_t bytes[SPEEDY_H2_FRAME_HEADER_LEN + 6 * (SPEEDY_SETTINGS_MAX_ID + 1)];
  size_t len = speedy_h2_encode_settings(bytes, ids, values, frame->n_settings, 0);
  if (h2->sent == NULL) {
    h2->sent = speedy_mem_malloc(&session->mem,
                                 SPEEDY_H2_MAX_UNACKED_SETTINGS * sizeof(speedy_h2_sent_settings));
    if (h2->sent == NULL) return SPEEDY_ERR_NOMEM;
  }
  int rv = speedy_buf_append(&session->outbuf, &session->mem, bytes, len);
  if (rv != 0) return rv;
  speedy_h2_sent_settings *sent =
      &h2->sent[(h2->sent_head + h2->n_sent) % SPEEDY_H2_MAX_UNACKED_SETTINGS];
  memcpy(sent->settings, frame->settings, frame->n_settings * sizeof(speedy_setting));
  sent->n = frame->n_settings;
  sent->sent_ns = session->now_ns;
  h2->n_sent++;
  char summary[64] = "";
  if (session->options.frame_summaries)
    snprintf(summary, sizeof(summary), "entries=%u", (unsigned)frame->n_settings);
  trace_sent(session, SPEEDY_H2_FRAME_SETTINGS, 0, 0, (uint32_t)(len - SPEEDY_H2_FRAME_HEADER_LEN),
             summary);
  return 0;
}

static int serialise(speedy_session *session, speedy_outframe *frame) {
  if (frame->kind == SPEEDY_OUT_HEADERS) return serialise_block(session, frame);
  if (frame->kind == SPEEDY_OUT_SETTINGS) return serialise_settings(session, frame);
  uint8_t bytes[SPEEDY_H2_FRAME_HEADER_LEN + 8 + SPEEDY_GOAWAY_DEBUG_MAX];
  uint8_t opaque[8] = {0};
  size_t len = 0;
  char summary[64] = "";
  int describe = session->callbacks.on_frame != NULL && session->options.frame_summaries;
  uint8_t flags = 0;
  switch (frame->kind) {
  case SPEEDY_OUT_RST:
    len = speedy_h2_encode_rst_stream(bytes, frame->stream_id, speedy_h2_code_of(frame->reason));
    if (describe)
      snprintf(summary, sizeof(summary), "stream=%d error=%s", (int)frame->stream_id,
               speedy_h2_error_name(speedy_h2_code_of(frame->reason)));
    break;
  case SPEEDY_OUT_SETTINGS_ACK:
    /* The peer's new table size holds from its acknowledgement on (RFC 7541 4.2): blocks
     * serialised before this frame used the old one. */
    if (frame->has_value) {
      speedy_hpack_encoder *encoder = state(session)->encoder;
      if (frame->smallest_value < frame->value)
        speedy_hpack_encoder_set_peer_max_table_size(encoder, frame->smallest_value);
      speedy_hpack_encoder_set_peer_max_table_size(encoder, frame->value);
    }
    len = speedy_h2_encode_settings(bytes, NULL, NULL, 0, 1);
    flags = SPEEDY_H2_FLAG_ACK;
    if (describe) snprintf(summary, sizeof(summary), "ack");
    break;
  case SPEEDY_OUT_PING:
    if (frame->has_value) { /* the shutdown's */
      memcpy(opaque, frame->opaque, 8);
    } else { /* the application's id, in the last four octets */
      opaque[4] = (uint8_t)(frame->value >> 24);
      opaque[5] = (uint8_t)(frame->value >> 16);
      opaque[6] = (uint8_t)(frame->value >> 8);
      opaque[7] = (uint8_t)frame->value;
    }
    len = speedy_h2_encode_ping(bytes, opaque, 0);
    if (describe) snprintf(summary, sizeof(summary), "id=%u", frame->value);
    break;
  case SPEEDY_OUT_PING_ACK:
    len = speedy_h2_encode_ping(bytes, frame->opaque, 1);
    flags = SPEEDY_H2_FLAG_ACK;
    if (describe) snprintf(summary, sizeof(summary), "ack");
    break;
  case SPEEDY_OUT_GOAWAY:
    len = speedy_h2_encode_goaway(bytes, (int32_t)frame->value, speedy_h2_code_of(frame->reason),
                                  frame->block, frame->block_len);
    if (describe)
      snprintf(summary, sizeof(summary), "last_stream=%u error=%s", frame->value,
               speedy_h2_error_name(speedy_h2_code_of(frame->reason)));
    break;
  case SPEEDY_OUT_PRIORITY_UPDATE: {
    /* RFC 9218 4: the priority field's value, as a structured field dictionary. */
    char value[8];
    int n =
        snprintf(value, sizeof(value), frame->flags ? "u=%u, i" : "u=%u", (unsigned)frame->urgency);
    len = speedy_h2_encode_priority_update(bytes, frame->stream_id, value, (size_t)n);
    if (describe) snprintf(summary, sizeof(summary), "stream=%d %s", (int)frame->stream_id, value);
    break;
  }
  default:
    len = speedy_h2_encode_window_update(bytes, frame->stream_id, frame->value);
    if (describe)
      snprintf(summary, sizeof(summary), "stream=%d delta=%u", (int)frame->stream_id, frame->value);
    break;
  }
  int rv = speedy_buf_append(&session->outbuf, &session->mem, bytes, len);
  if (rv == 0)
    trace_sent(session, frame_type(frame), flags, frame->stream_id,
               (uint32_t)(len - SPEEDY_H2_FRAME_HEADER_LEN), summary);
  return rv;
}

/* What may no longer go out though the core allows it. */
static int check_frame(const speedy_session *session, const speedy_outframe *frame) {
  /* A stream of ours the peer never saw is idle to it: a RST_STREAM there would be its
   * connection error (5.1). */
  if (frame->kind == SPEEDY_OUT_RST && !speedy_session_is_peer_id(session, frame->stream_id) &&
      frame->stream_id > session->highest_local_on_wire)
    return SPEEDY_ERR_STREAM_CLOSED;
  /* Nor a PRIORITY_UPDATE: the peer may count idle streams against its concurrency limit
   * (RFC 9218 7.1). A waiting stream's follows its HEADERS; one whose HEADERS was dropped
   * (a GOAWAY arrived meanwhile) has nothing to prioritise. */
  if (frame->kind == SPEEDY_OUT_PRIORITY_UPDATE &&
      frame->stream_id > session->highest_local_on_wire)
    return SPEEDY_ERR_STREAM_CLOSED;
  /* Nor a WINDOW_UPDATE: on a stream idle to the peer it is a connection error (6.9). */
  if (frame->kind == SPEEDY_OUT_WINDOW_UPDATE && frame->stream_id != 0 &&
      !speedy_session_is_peer_id(session, frame->stream_id) &&
      frame->stream_id > session->highest_local_on_wire)
    return SPEEDY_ERR_STREAM_CLOSED;
  /* The client turned push off since the promise was submitted. */
  if (frame->kind == SPEEDY_OUT_HEADERS && frame->role == SPEEDY_BLOCK_PROMISE &&
      !session->wire.h2.peer_push)
    return SPEEDY_ERR_INVALID_STATE;
  return 0;
}

/* ---- settings acknowledged, timeouts, shutdown ------------------------------------- */

int speedy_h2_settings_acked(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  if (h2->n_sent == 0) return 0; /* an acknowledgement we did not ask for: ignored */
  speedy_h2_sent_settings sent = h2->sent[h2->sent_head];
  h2->sent_head = (uint8_t)((h2->sent_head + 1) % SPEEDY_H2_MAX_UNACKED_SETTINGS);
  h2->n_sent--;
  if (h2->n_sent == 0) {
    speedy_mem_free(&session->mem, h2->sent);
    h2->sent = NULL;
    h2->sent_head = 0;
  }
  for (size_t i = 0; i < sent.n; i++) {
    uint32_t v = sent.settings[i].value;
    switch (sent.settings[i].id) {
    case SPEEDY_SETTINGS_HEADER_TABLE_SIZE:
      speedy_hpack_decoder_set_max_table_size(h2->decoder, v);
      break;
    case SPEEDY_SETTINGS_MAX_FRAME_SIZE:
      h2->recv_max_frame = v;
      break;
    case SPEEDY_SETTINGS_ENABLE_PUSH:
      h2->local_push = v != 0;
      break;
    default:
      break;
    }
  }
  /* MAX_CONCURRENT_STREAMS and INITIAL_WINDOW_SIZE: the core's. */
  speedy_session_apply_local_settings(session, sent.settings, sent.n);
  /* The largest window the peer may still believe: ours now, or one announced and not yet
   * acknowledged, in flight or still queued (a larger one acknowledged and lowered since
   * no longer counts). */
  uint32_t largest = session->local_initial_window;
  for (uint8_t k = 0; k < h2->n_sent; k++) {
    const speedy_h2_sent_settings *later =
        &h2->sent[(h2->sent_head + k) % SPEEDY_H2_MAX_UNACKED_SETTINGS];
    for (size_t i = 0; i < later->n; i++)
      if (later->settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE &&
          later->settings[i].value > largest)
        largest = later->settings[i].value;
  }
  for (const speedy_outframe *f = session->ctrl_head; f != NULL; f = f->next)
    if (f->kind == SPEEDY_OUT_SETTINGS)
      for (size_t i = 0; i < f->n_settings; i++)
        if (f->settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE &&
            f->settings[i].value > largest)
          largest = f->settings[i].value;
  session->max_local_initial_window = largest;
  return 0;
}

static int tick(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  int64_t timeout = session->options.settings_timeout_ns;
  if (h2->n_sent == 0 || timeout <= 0) return 0;
  if (session->now_ns - h2->sent[h2->sent_head].sent_ns <= timeout) return 0;
  return speedy_session_fail_debug(session, SPEEDY_ERR_SETTINGS_TIMEOUT,
                                   SPEEDY_RST_SETTINGS_TIMEOUT, "SETTINGS not acknowledged");
}

/* 6.8: GOAWAY with 2^31-1 warns the client; the PING's answer shows that streams it
 * opened before it saw the warning have arrived, and the real last stream goes then. */
static int graceful_shutdown(speedy_session *session) {
  if (session->role != SPEEDY_ROLE_SERVER)
    return speedy_queue_goaway(session, SPEEDY_RST_NONE, NULL);
  speedy_outframe *warning = speedy_outframe_new(session, SPEEDY_OUT_GOAWAY, 0);
  if (warning == NULL) return SPEEDY_ERR_NOMEM;
  warning->value = SPEEDY_H2_MAX_STREAM_ID;
  warning->reason = SPEEDY_RST_NONE;
  int rv = speedy_queue_control(session, warning, 0);
  if (rv != 0) return rv;
  speedy_outframe *ping = speedy_outframe_new(session, SPEEDY_OUT_PING, 0);
  if (ping == NULL) return SPEEDY_ERR_NOMEM;
  ping->has_value = 1;
  memcpy(ping->opaque, speedy_h2_shutdown_opaque, 8);
  rv = speedy_queue_control(session, ping, 0);
  if (rv != 0) return rv;
  session->goaway_draining = 1;
  state(session)->shutdown_ping = 1;
  return 0;
}

int speedy_h2_shutdown_acked(speedy_session *session) {
  if (!state(session)->shutdown_ping) return 0;
  state(session)->shutdown_ping = 0;
  return speedy_queue_goaway(session, SPEEDY_RST_NONE, NULL);
}

/* ---- lifetime ---------------------------------------------------------------------- */

static int init(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  const speedy_options *o = &session->options;
  memset(h2, 0, sizeof(*h2));
  if (speedy_hpack_encoder_new(&session->mem, &h2->encoder) != 0) return SPEEDY_ERR_NOMEM;
  if (speedy_hpack_decoder_new(&session->mem, &h2->decoder) != 0) return SPEEDY_ERR_NOMEM;
  /* 8.2.1's octet rules run once per string the peer sends, not per use of an entry. */
  speedy_hpack_decoder_set_checks(h2->decoder, speedy_h2_name_octets_ok, speedy_h2_value_octets_ok);
  speedy_hpack_decoder_set_max_header_list_size(h2->decoder, o->max_header_block);
  speedy_hpack_decoder_set_max_string_length(h2->decoder, o->max_header_block);
  h2->recv_state =
      session->role == SPEEDY_ROLE_SERVER ? SPEEDY_H2_RECV_PREFACE : SPEEDY_H2_RECV_HEAD;
  h2->recv_max_frame = SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE;
  h2->local_push = 1; /* until our ENABLE_PUSH = 0 is acknowledged */
  h2->peer_push = 1;  /* until the client's SETTINGS says otherwise */
  h2->peer_max_header_list = UINT32_MAX;
  speedy_buf_init(&h2->fields, (size_t)o->max_header_block + 4096);
  speedy_buf_init(&h2->scratch, session->outbuf.limit / 2);
  session->inbuf.limit = o->max_frame_size;
  return 0;
}

static void codec_free(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  forget_block(h2);
  speedy_hpack_encoder_del(h2->encoder);
  speedy_hpack_decoder_del(h2->decoder);
  speedy_buf_free(&h2->fields, &session->mem);
  speedy_buf_free(&h2->scratch, &session->mem);
  speedy_mem_free(&session->mem, h2->idle);
  speedy_mem_free(&session->mem, h2->sent);
}

/* An idle connection keeps its HPACK tables' entries, not the buffers of the messages it
 * carried. */
static void trim_idle(speedy_session *session) {
  speedy_h2_state *h2 = state(session);
  speedy_buf_shrink(&h2->fields, &session->mem, 0);
  speedy_buf_shrink(&h2->scratch, &session->mem, 0);
  speedy_hpack_decoder_trim(h2->decoder);
  speedy_hpack_encoder_trim(h2->encoder);
  forget_block(h2);      /* an idle connection does not keep a field set alive */
  if (h2->n_sent == 0) { /* a SETTINGS that could not be serialised */
    speedy_mem_free(&session->mem, h2->sent);
    h2->sent = NULL;
  }
  if (h2->n_idle == 0 && h2->idle != NULL) {
    speedy_mem_free(&session->mem, h2->idle);
    h2->idle = NULL;
    h2->cap_idle = 0;
  }
}

static int start(speedy_session *session) {
  const speedy_options *o = &session->options;
  int rv = 0;
  if (session->role == SPEEDY_ROLE_CLIENT) /* 3.4: before anything else */
    rv = speedy_buf_append(&session->outbuf, &session->mem, SPEEDY_H2_PREFACE,
                           SPEEDY_H2_PREFACE_LEN);
  if (rv != 0) return rv;
  /* 3.4: the first frame either side sends is SETTINGS, even an empty one. */
  speedy_setting settings[SPEEDY_SETTINGS_MAX_ID + 1];
  size_t n = 0;
  settings[n++] =
      (speedy_setting){SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, o->max_concurrent_streams};
  if (o->stream_window_set && o->stream_window != SPEEDY_H2_DEFAULT_WINDOW)
    settings[n++] = (speedy_setting){SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, o->stream_window};
  if (o->header_table_size != SPEEDY_H2_DEFAULT_HEADER_TABLE_SIZE)
    settings[n++] = (speedy_setting){SPEEDY_SETTINGS_HEADER_TABLE_SIZE, 0, o->header_table_size};
  if (session->role == SPEEDY_ROLE_CLIENT && !o->enable_push)
    settings[n++] = (speedy_setting){SPEEDY_SETTINGS_ENABLE_PUSH, 0, 0};
  if (o->max_frame_size != SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE)
    settings[n++] = (speedy_setting){SPEEDY_SETTINGS_MAX_FRAME_SIZE, 0, o->max_frame_size};
  settings[n++] = (speedy_setting){SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE, 0, o->max_header_block};
  settings[n++] = (speedy_setting){SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES, 0, 1};
  rv = speedy_submit_settings(session, 0, settings, n);
  if (rv != 0) return rv;
  /* A connection window above 65,535 is opened with WINDOW_UPDATE on stream 0 (6.9.2). */
  if (o->session_window_set && o->session_window > SPEEDY_H2_DEFAULT_WINDOW) {
    rv = speedy_queue_window_update(session, 0, o->session_window - SPEEDY_H2_DEFAULT_WINDOW);
    if (rv != 0) return rv;
    session->session_recv_window = o->session_window;
  }
  return 0;
}

const speedy_codec speedy_h2_codec = {
    .name = "h2",
    .caps = {.flow_control = 1,
             .session_window = 1,
             .settings_acked = 1,
             .informational = 1,
             .incremental_default = 0,
             .extra_headers = 0,
             .data_header_len = SPEEDY_H2_FRAME_HEADER_LEN,
             .default_window = SPEEDY_H2_DEFAULT_WINDOW,
             .max_frame_payload = SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE},
    .init = init,
    .free = codec_free,
    .start = start,
    .recv = speedy_h2_codec_recv,
    .recv_in_frame = speedy_h2_codec_recv_in_frame,
    .prepare_block = prepare_block,
    .prepare_fieldset = prepare_fieldset,
    .prepare_push = prepare_push,
    .serialise = serialise,
    .data_header = data_header,
    .frame_type = frame_type,
    .reason_allowed = reason_allowed,
    .check_settings = check_settings,
    .tick = tick,
    .check_frame = check_frame,
    .shutdown = graceful_shutdown,
    .idle = trim_idle,
};
