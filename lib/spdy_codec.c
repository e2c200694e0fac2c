/* spdy_codec.c — the SPDY codec (SPDY/2, /3, /3.1) behind the session core: its tables of
 * capabilities, what opens a session, header lists laid out as NV blocks when submitted,
 * queued frames written when serialised (header blocks compressed then, in output order),
 * and the SPDY/3 or /3.1 autodetection.
 *
 * Neutral values (codec.h) become SPDY's here: close reasons are SPDY's RST_STREAM
 * statuses already (the HTTP/2-only ones become PROTOCOL_ERROR), GOAWAY has three
 * statuses, settings ids 1-8 are SPDY's own. The input side is spdy_codec_recv.c.
 */
#include <stdio.h>
#include <string.h>

#include "session_int.h"

static spdy_codec_state *state(speedy_session *session) { return &session->wire.spdy; }

static int is_spdy(const speedy_session *session) {
  return session->codec == &speedy_codec_spdy2 || session->codec == &speedy_codec_spdy3 ||
         session->codec == &speedy_codec_spdy31;
}

/* ---- neutral values on the wire ---------------------------------------------------- */

static uint32_t rst_status(const speedy_session *session, uint32_t reason) {
  uint32_t max = session->wire.spdy.wire_version == 2 ? SPEEDY_RST_FLOW_CONTROL_ERROR
                                                      : SPEEDY_RST_FRAME_TOO_LARGE;
  return reason >= 1 && reason <= max ? reason : SPEEDY_RST_PROTOCOL_ERROR;
}

static uint32_t goaway_status(uint32_t reason) {
  if (reason == SPEEDY_RST_NONE) return SPDY_GOAWAY_OK;
  return reason == SPEEDY_RST_INTERNAL_ERROR ? SPDY_GOAWAY_INTERNAL_ERROR
                                             : SPDY_GOAWAY_PROTOCOL_ERROR;
}

/* Wire priority for an urgency: SPDY/2 has four levels. */
static uint8_t urgency_to_wire(const speedy_session *session, int urgency) {
  if (urgency < 0) urgency = 0;
  if (urgency > 7) urgency = 7;
  return (uint8_t)(session->wire.spdy.wire_version == 2 ? urgency / 2 : urgency);
}

static int reason_allowed(const speedy_session *session, uint32_t reason) {
  uint32_t max = session->wire.spdy.wire_version == 2 ? SPEEDY_RST_FLOW_CONTROL_ERROR
                                                      : SPEEDY_RST_FRAME_TOO_LARGE;
  return reason <= max;
}

static int check_settings(const speedy_session *session, const speedy_setting *settings, size_t n) {
  (void)session;
  for (size_t i = 0; i < n; i++) {
    if (settings[i].id == 0 || settings[i].id > 0xffffff) return SPEEDY_ERR_INVALID_ARGUMENT;
    if (settings[i].id >= SPEEDY_SETTINGS_HEADER_TABLE_SIZE &&
        settings[i].id <= SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES)
      return SPEEDY_ERR_INVALID_ARGUMENT; /* HTTP/2's names: SPDY has no such settings */
    if (settings[i].id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE &&
        settings[i].value > SPEEDY_MAX_WINDOW_SIZE)
      return SPEEDY_ERR_INVALID_ARGUMENT;
  }
  return 0;
}

static int frame_type(const speedy_outframe *frame) {
  switch (frame->kind) {
  case SPEEDY_OUT_HEADERS:
    if (frame->role == SPEEDY_BLOCK_REQUEST || frame->role == SPEEDY_BLOCK_PUSH)
      return SPEEDY_SPDY_FRAME_SYN_STREAM;
    return frame->role == SPEEDY_BLOCK_RESPONSE ? SPEEDY_SPDY_FRAME_SYN_REPLY
                                                : SPEEDY_SPDY_FRAME_HEADERS;
  case SPEEDY_OUT_RST:
    return SPEEDY_SPDY_FRAME_RST_STREAM;
  case SPEEDY_OUT_SETTINGS:
    return SPEEDY_SPDY_FRAME_SETTINGS;
  case SPEEDY_OUT_PING:
  case SPEEDY_OUT_PING_ACK:
    return SPEEDY_SPDY_FRAME_PING;
  case SPEEDY_OUT_GOAWAY:
    return SPEEDY_SPDY_FRAME_GOAWAY;
  default:
    return SPEEDY_SPDY_FRAME_WINDOW_UPDATE;
  }
}

static void data_header(uint8_t *out, int32_t stream_id, int end_stream, uint32_t length) {
  spdy_frame_hd_encode_data(out, stream_id, end_stream ? SPDY_FLAG_FIN : 0, length);
}

/* ---- header lists ------------------------------------------------------------------ */

static int name_is(const speedy_header *h, const char *name) {
  size_t len = strlen(name);
  return h->name_len == len && memcmp(h->name, name, len) == 0;
}

static const speedy_header *find_header(const speedy_header *headers, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (name_is(&headers[i], name)) return &headers[i];
  return NULL;
}

/* Checks what the peer would check and what the block's encoder will (the same rules,
 * spdy_hdblock_measure): fields well formed, repeated names joinable, the compressed block
 * able to fit one frame, required pseudo-headers present (required: NULL-terminated
 * list). A list refused here never reaches the compressor, where a refusal would end
 * the session. *serialised: the uncompressed block's size. */
static int validate_headers(speedy_session *session, const speedy_header *headers, size_t n,
                            const char *const *required, size_t *serialised) {
  int rv =
      spdy_hdblock_measure(state(session)->wire_version, &session->mem, headers, n, serialised);
  if (rv == SPEEDY_ERR_FRAME_TOO_LARGE ||
      (rv == 0 && spdy_hdblock_compressed_max(*serialised) >
                      SPDY_MAX_FRAME_LENGTH - SPDY_SYN_STREAM_FIXED_LEN))
    return SPEEDY_ERR_INVALID_HEADER;
  if (rv != 0) return rv;
  for (; required != NULL && *required != NULL; required++)
    if (find_header(headers, n, *required) == NULL) return SPEEDY_ERR_INVALID_HEADER;
  return 0;
}

/* A header-bearing frame: headers (checked by validate_headers, which measured them as
 * serialised bytes) laid out as the uncompressed block behind the record. */
static int block_frame(speedy_session *session, speedy_block_role role,
                       const speedy_header *headers, size_t n_headers, size_t serialised,
                       speedy_outframe **out) {
  speedy_outframe *frame = speedy_outframe_new(session, SPEEDY_OUT_HEADERS, serialised);
  if (frame == NULL) return SPEEDY_ERR_NOMEM;
  frame->role = (uint8_t)role;
  frame->n_headers = n_headers;
  int rv = spdy_hdblock_serialise(state(session)->wire_version, &session->mem, headers, n_headers,
                                  frame->block, serialised);
  if (rv != 0) {
    speedy_outframe_free(session, frame);
    return rv;
  }
  *out = frame;
  return 0;
}

/* ---- HTTP/2's names in SPDY's ------------------------------------------------------ */

/* A header list the application gave with HTTP/2's names, in SPDY/3's: :authority becomes
 * :host, :version is added (HTTP/1.1) where SPDY requires it, and a three-digit :status
 * gains its reason phrase. Lists already in SPDY/3's names pass as they are. */
#define SPDY_STATUS_MAX 64 /* "NNN " and the longest reason phrase */
/* Lists up to this long are mapped on the stack (a response or request head is); longer
 * ones in an allocation that lives for the submit call. */
#define SPDY_NAMES_ON_STACK 32

typedef struct spdy_names {
  const speedy_header *list; /* the list to lay out: the application's, or a mapped copy */
  size_t n;
  speedy_header *fields; /* the copy when allocated, else NULL */
  speedy_header stack[SPDY_NAMES_ON_STACK + 1];
  char status[SPDY_STATUS_MAX]; /* "200 OK" */
} spdy_names;

static int spdy_names_from(speedy_session *session, const speedy_header *headers, size_t n,
                           int request, spdy_names *out) {
  out->list = headers;
  out->n = n;
  out->fields = NULL;
  const speedy_header *authority = find_header(headers, n, ":authority");
  const speedy_header *status = request ? NULL : find_header(headers, n, ":status");
  const char *reason = NULL;
  if (status != NULL && status->value_len == 3) {
    int code = 0;
    for (size_t i = 0; i < 3; i++)
      code = code * 10 +
             (status->value[i] >= '0' && status->value[i] <= '9' ? status->value[i] - '0' : -1000);
    reason = code >= 0 ? speedy_status_reason(code) : NULL;
  }
  int add_version = find_header(headers, n, ":version") == NULL &&
                    (request ? find_header(headers, n, ":method") != NULL : status != NULL);
  if (authority == NULL && reason == NULL && !add_version) return 0;
  speedy_header *fields = out->stack;
  if (n > SPDY_NAMES_ON_STACK) {
    fields = speedy_mem_malloc(&session->mem, (n + 1) * sizeof(speedy_header));
    if (fields == NULL) return SPEEDY_ERR_NOMEM;
    out->fields = fields;
  }
  char *status_value = out->status;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    fields[k] = headers[i];
    if (&headers[i] == authority) {
      fields[k].name = ":host";
      fields[k].name_len = 5;
    } else if (&headers[i] == status && reason != NULL) {
      int len = snprintf(status_value, SPDY_STATUS_MAX, "%.3s %s", status->value, reason);
      fields[k].value = status_value;
      fields[k].value_len = (size_t)len;
    }
    k++;
  }
  if (add_version) fields[k++] = (speedy_header){":version", 8, "HTTP/1.1", 8};
  out->list = fields;
  out->n = k;
  return 0;
}

static void spdy_names_free(speedy_session *session, spdy_names *names) {
  if (names->fields != NULL) speedy_mem_free(&session->mem, names->fields);
  names->fields = NULL;
}

static int prepare_block(speedy_session *session, speedy_block_role role,
                         const speedy_header *application, size_t n_application,
                         speedy_outframe **out) {
  static const char *const request_v3[] = {":method", ":path",   ":version",
                                           ":host",   ":scheme", NULL};
  static const char *const request_v2[] = {":method", ":path", ":version", NULL};
  static const char *const response[] = {":status", ":version", NULL};
  spdy_names names;
  int rv =
      spdy_names_from(session, application, n_application, role == SPEEDY_BLOCK_REQUEST, &names);
  if (rv != 0) return rv;
  const speedy_header *headers = names.list;
  size_t n_headers = names.n;
  const char *const *required = NULL;
  if (role == SPEEDY_BLOCK_REQUEST)
    required = state(session)->wire_version == 2 ? request_v2 : request_v3;
  else if (role == SPEEDY_BLOCK_RESPONSE)
    required = response;
  size_t serialised = 0;
  if (required == NULL && role != SPEEDY_BLOCK_EXTRA)
    rv = SPEEDY_ERR_INVALID_STATE; /* SPDY has no promises or informational responses */
  else
    rv = validate_headers(session, headers, n_headers, required, &serialised);
  if (rv == 0) rv = block_frame(session, role, headers, n_headers, serialised, out);
  spdy_names_free(session, &names);
  return rv;
}

/* Everything goes in the SYN_STREAM: the URL (v3 3.3.1 requires :scheme, :host and :path
 * there) and the response headers too. v3 allows the latter in a later HEADERS frame, but
 * deployed clients (node's spdy-transport among them) require :status in the SYN_STREAM.
 * SPDY/2 wants an absolute url instead of scheme, host and path. */
static int prepare_push_named(speedy_session *session, const speedy_header *request,
                              size_t n_request, const speedy_header *response, size_t n_response,
                              speedy_outframe **open);

static int prepare_push(speedy_session *session, const speedy_header *request, size_t n_request,
                        const speedy_header *response, size_t n_response, speedy_outframe **promise,
                        speedy_outframe **open) {
  *promise = NULL;
  spdy_names request_names, response_names;
  int rv = spdy_names_from(session, request, n_request, 1, &request_names);
  if (rv != 0) return rv;
  rv = spdy_names_from(session, response, n_response, 0, &response_names);
  if (rv == 0)
    rv = prepare_push_named(session, request_names.list, request_names.n, response_names.list,
                            response_names.n, open);
  spdy_names_free(session, &request_names);
  spdy_names_free(session, &response_names);
  return rv;
}

static int prepare_push_named(speedy_session *session, const speedy_header *request,
                              size_t n_request, const speedy_header *response, size_t n_response,
                              speedy_outframe **open) {
  static const char *const required_request[] = {":scheme", ":host", ":path", NULL};
  static const char *const required_response[] = {":status", ":version", NULL};
  int version = state(session)->wire_version;
  size_t serialised = 0;
  int rv = validate_headers(session, request, n_request, required_request, &serialised);
  if (rv == 0) rv = validate_headers(session, response, n_response, required_response, &serialised);
  if (rv != 0) return rv;
  size_t n_all = n_request + n_response;
  size_t url_len = 0;
  const speedy_header *scheme = find_header(request, n_request, ":scheme");
  const speedy_header *host = find_header(request, n_request, ":host");
  const speedy_header *path = find_header(request, n_request, ":path");
  if (version == 2) url_len = scheme->value_len + 3 + host->value_len + path->value_len;
  speedy_header *all = speedy_mem_malloc(&session->mem, n_all * sizeof(speedy_header) + url_len);
  if (all == NULL) return SPEEDY_ERR_NOMEM;
  size_t k = 0;
  if (version == 2) {
    char *url = (char *)(all + n_all);
    size_t pos = 0;
    memcpy(url + pos, scheme->value, scheme->value_len), pos += scheme->value_len;
    memcpy(url + pos, "://", 3), pos += 3;
    memcpy(url + pos, host->value, host->value_len), pos += host->value_len;
    memcpy(url + pos, path->value, path->value_len), pos += path->value_len;
    all[k++] = (speedy_header){":path", 5, url, url_len};
  }
  /* One :version: the response's (required above); a pseudo-header named twice would be
   * refused by the block's encoder, as a receiver refuses it. */
  const speedy_header *request_version = find_header(request, n_request, ":version");
  for (size_t i = 0; i < n_request; i++)
    if ((version != 2 || &request[i] != path) && &request[i] != request_version)
      all[k++] = request[i];
  for (size_t i = 0; i < n_response; i++) all[k++] = response[i];
  /* Each half was valid; together they must be too (a field name in both halves is
   * joined, a pseudo-header refused). */
  rv = validate_headers(session, all, k, NULL, &serialised);
  if (rv == 0) rv = block_frame(session, SPEEDY_BLOCK_PUSH, all, k, serialised, open);
  speedy_mem_free(&session->mem, all);
  return rv;
}

/* ---- serialising ------------------------------------------------------------------- */

/* A header-bearing frame: prefix, then the block compressed straight into the output
 * buffer, then the prefix is filled in with the compressed length. */
static int serialise_header_frame(speedy_session *session, speedy_outframe *frame) {
  int version = state(session)->wire_version;
  int syn = frame->role == SPEEDY_BLOCK_REQUEST || frame->role == SPEEDY_BLOCK_PUSH;
  int type = frame_type(frame);
  uint8_t flags = frame->end_stream ? SPDY_FLAG_FIN : 0;
  if (frame->role == SPEEDY_BLOCK_PUSH) flags |= SPDY_FLAG_UNIDIRECTIONAL;
  uint8_t priority = urgency_to_wire(session, frame->urgency);
  size_t prefix = SPDY_FRAME_HEADER_LEN +
                  (syn ? SPDY_SYN_STREAM_FIXED_LEN : (size_t)SPDY_SYN_REPLY_FIXED_LEN(version));
  int rv = speedy_buf_reserve(&session->outbuf, &session->mem, prefix);
  if (rv != 0) return rv;
  /* Offsets, not pointers: the buffer may slide or move while the block is appended. */
  size_t offset = speedy_buf_len(&session->outbuf);
  speedy_buf_commit(&session->outbuf, prefix);
  rv = spdy_hdblock_deflate_serialised(&state(session)->deflater, &session->mem, &session->outbuf,
                                       frame->block, frame->block_len);
  if (rv != 0) {
    session->outbuf.end = session->outbuf.start + offset; /* take the prefix back */
    return rv;
  }
  size_t block_len = speedy_buf_len(&session->outbuf) - offset - prefix;
  if (block_len + prefix - SPDY_FRAME_HEADER_LEN > SPDY_MAX_FRAME_LENGTH)
    return SPEEDY_ERR_FRAME_TOO_LARGE;
  uint8_t *at = speedy_buf_head(&session->outbuf) + offset;
  if (syn)
    spdy_frame_encode_syn_stream_prefix(at, version, flags, frame->stream_id, frame->associated_id,
                                        priority, block_len);
  else
    spdy_frame_encode_stream_headers_prefix(at, version, type, flags, frame->stream_id, block_len);
  if (session->callbacks.on_frame == NULL) return 0;
  char summary[64] = "";
  int describe = session->options.frame_summaries;
  if (describe && syn)
    snprintf(summary, sizeof(summary), "assoc=%d pri=%u headers=%zu", (int)frame->associated_id,
             (unsigned)priority, frame->n_headers);
  else if (describe)
    snprintf(summary, sizeof(summary), "headers=%zu", frame->n_headers);
  speedy_trace(session, 1, type, flags, frame->stream_id,
               (uint32_t)(block_len + prefix - SPDY_FRAME_HEADER_LEN), summary);
  return 0;
}

static int serialise(speedy_session *session, speedy_outframe *frame) {
  if (frame->kind == SPEEDY_OUT_HEADERS) return serialise_header_frame(session, frame);
  int version = state(session)->wire_version;
  uint8_t bytes[SPDY_FRAME_HEADER_LEN + 4 + 8 * (SPEEDY_SETTINGS_MAX_ID + 1)];
  size_t len = 0;
  char summary[64] = "";
  int describe = session->callbacks.on_frame != NULL && session->options.frame_summaries;
  uint32_t status;
  switch (frame->kind) {
  case SPEEDY_OUT_RST:
    status = rst_status(session, frame->reason);
    len = spdy_frame_encode_rst_stream(bytes, version, frame->stream_id, status);
    if (describe) snprintf(summary, sizeof(summary), "status=%s", speedy_rst_status_name(status));
    break;
  case SPEEDY_OUT_SETTINGS:
    len = spdy_frame_encode_settings(bytes, version, frame->flags, frame->settings,
                                     frame->n_settings);
    if (describe) snprintf(summary, sizeof(summary), "entries=%u", (unsigned)frame->n_settings);
    break;
  case SPEEDY_OUT_PING:
  case SPEEDY_OUT_PING_ACK:
    len = spdy_frame_encode_ping(bytes, version, frame->value);
    if (describe) snprintf(summary, sizeof(summary), "id=%u", frame->value);
    break;
  case SPEEDY_OUT_GOAWAY:
    status = goaway_status(frame->reason);
    len = spdy_frame_encode_goaway(bytes, version, (int32_t)frame->value, status);
    if (describe && version == 2) /* SPDY/2's GOAWAY has no status */
      snprintf(summary, sizeof(summary), "last_good=%u", frame->value & 0x7fffffff);
    else if (describe)
      snprintf(summary, sizeof(summary), "last_good=%u status=%u", frame->value & 0x7fffffff,
               status);
    break;
  case SPEEDY_OUT_WINDOW_UPDATE:
    len = spdy_frame_encode_window_update(bytes, version, frame->stream_id, frame->value);
    if (describe) snprintf(summary, sizeof(summary), "delta=%u", frame->value & 0x7fffffff);
    break;
  default:
    return 0; /* SPDY has no SETTINGS acknowledgement */
  }
  int rv = speedy_buf_append(&session->outbuf, &session->mem, bytes, len);
  if (rv == 0)
    speedy_trace(session, 1, frame_type(frame),
                 frame->kind == SPEEDY_OUT_SETTINGS ? frame->flags : 0, frame->stream_id,
                 (uint32_t)(len - SPDY_FRAME_HEADER_LEN), summary);
  return rv;
}

/* ---- lifetime ---------------------------------------------------------------------- */

static int init(speedy_session *session) {
  spdy_codec_state *s = state(session);
  const speedy_options *o = &session->options;
  s->wire_version = session->protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
  s->v3_undecided = session->protocol == SPEEDY_PROTOCOL_SPDY3_1 && o->v3_autodetect;
  session->hold_session_credit = s->v3_undecided;
  s->recv_state = SPDY_RECV_HEAD;
  int rv =
      spdy_hdblock_deflater_init(&s->deflater, &session->mem, s->wire_version, o->deflate_level,
                                 o->deflate_window_bits, o->deflate_mem_level);
  if (rv == 0)
    rv = spdy_hdblock_inflater_init(&s->inflater, &session->mem, s->wire_version,
                                    o->max_header_block);
  return rv;
}

static void codec_free(speedy_session *session) {
  spdy_hdblock_deflater_free(&state(session)->deflater);
  spdy_hdblock_inflater_free(&state(session)->inflater, &session->mem);
}

/* SPDY/3.1: a session window larger than the protocol's 64 KiB is announced with a
 * WINDOW_UPDATE on stream 0. */
static int announce_session_window(speedy_session *session) {
  const speedy_options *o = &session->options;
  if (!session->caps.session_window || o->session_window <= SPEEDY_DEFAULT_WINDOW) return 0;
  int rv = speedy_queue_window_update(session, 0, o->session_window - SPEEDY_DEFAULT_WINDOW);
  if (rv != 0) return rv;
  session->session_recv_window = o->session_window;
  return 0;
}

static int start(speedy_session *session) {
  const speedy_options *o = &session->options;
  if (!o->send_initial_settings) return 0;
  speedy_setting settings[2];
  size_t n = 0;
  settings[n++] =
      (speedy_setting){SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, o->max_concurrent_streams};
  if (session->caps.flow_control && o->stream_window != SPEEDY_DEFAULT_WINDOW)
    settings[n++] = (speedy_setting){SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, o->stream_window};
  int rv = speedy_submit_settings(session, 0, settings, n);
  if (rv != 0) return rv;
  return state(session)->v3_undecided ? 0 : announce_session_window(session);
}

/* ---- SPDY/3 or /3.1 ---------------------------------------------------------------- */

int spdy_codec_settle_by_credit(speedy_session *session) {
  if (!state(session)->v3_undecided || session->session_send_window > 0 ||
      state(session)->v3_stream_credit < SPEEDY_DEFAULT_WINDOW / 2)
    return 0;
  return spdy_codec_settle(session, SPEEDY_PROTOCOL_SPDY3);
}

int spdy_codec_settle(speedy_session *session, speedy_protocol protocol) {
  if (!is_spdy(session) || !state(session)->v3_undecided) return SPEEDY_ERR_INVALID_STATE;
  state(session)->v3_undecided = 0;
  session->hold_session_credit = 0;
  if (protocol == SPEEDY_PROTOCOL_SPDY3) {
    /* No session window: streams held back by it may send (they stayed scheduled). The one
     * moment a session's capabilities change. */
    session->protocol = SPEEDY_PROTOCOL_SPDY3;
    session->codec = &speedy_codec_spdy3;
    session->caps = speedy_codec_spdy3.caps;
    session->session_recv_unacked = 0;
    return 0;
  }
  /* SPDY/3.1 after all: announce the window and return the credit held back. */
  int rv = announce_session_window(session);
  return rv != 0 ? rv : speedy_session_return_session_credit(session);
}

int speedy_session_protocol_undecided(const speedy_session *session) {
  if (session == NULL || !is_spdy(session) || !session->wire.spdy.v3_undecided) return 0;
  if (session->session_send_window <= 0)
    for (int u = 0; u < SPEEDY_URGENCY_LEVELS; u++)
      if (session->sched_head[u] != NULL) return 2;
  if (session->session_recv_window <= 0)
    for (uint32_t b = 0; b < session->n_buckets; b++)
      for (const speedy_stream *s = session->buckets[b]; s != NULL; s = s->hash_next)
        if (!s->remote_closed) return 3;
  return 1;
}

int speedy_session_settle_protocol(speedy_session *session, speedy_protocol protocol) {
  if (session == NULL || (protocol != SPEEDY_PROTOCOL_SPDY3 && protocol != SPEEDY_PROTOCOL_SPDY3_1))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  return spdy_codec_settle(session, protocol);
}

/* ---- the tables -------------------------------------------------------------------- */

#define SPEEDY_CODEC_FUNCTIONS                                                                     \
  .init = init, .free = codec_free, .start = start, .recv = spdy_codec_recv,                       \
  .prepare_block = prepare_block, .prepare_push = prepare_push, .serialise = serialise,            \
  .data_header = data_header, .frame_type = frame_type, .reason_allowed = reason_allowed,          \
  .check_settings = check_settings, .recv_in_frame = spdy_codec_recv_in_frame

const speedy_codec speedy_codec_spdy2 = {
    .name = "spdy/2",
    .caps = {.flow_control = 0,
             .session_window = 0,
             .incremental_default = 1,
             .extra_headers = 1,
             .data_header_len = SPDY_FRAME_HEADER_LEN,
             .default_window = SPEEDY_DEFAULT_WINDOW,
             .max_frame_payload = SPDY_MAX_FRAME_LENGTH},
    SPEEDY_CODEC_FUNCTIONS,
};

const speedy_codec speedy_codec_spdy3 = {
    .name = "spdy/3",
    .caps = {.flow_control = 1,
             .session_window = 0,
             .incremental_default = 1,
             .extra_headers = 1,
             .data_header_len = SPDY_FRAME_HEADER_LEN,
             .default_window = SPEEDY_DEFAULT_WINDOW,
             .max_frame_payload = SPDY_MAX_FRAME_LENGTH},
    SPEEDY_CODEC_FUNCTIONS,
};

const speedy_codec speedy_codec_spdy31 = {
    .name = "spdy/3.1",
    .caps = {.flow_control = 1,
             .session_window = 1,
             .incremental_default = 1,
             .extra_headers = 1,
             .data_header_len = SPDY_FRAME_HEADER_LEN,
             .default_window = SPEEDY_DEFAULT_WINDOW,
             .max_frame_payload = SPDY_MAX_FRAME_LENGTH},
    SPEEDY_CODEC_FUNCTIONS,
    .send_window_exhausted = spdy_codec_settle_by_credit,
};
