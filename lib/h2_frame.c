/* h2_frame.c — HTTP/2 wire format: the frame header, each frame type's payload checked
 * and decoded, and encoders (see h2_frame.h). Each check cites its section of RFC 9113
 * (or RFC 9218 for PRIORITY_UPDATE); lengths are compared before anything is read, and
 * nothing is read outside [payload, payload + hd->length).
 */
#include "h2_frame.h"

#include <string.h>

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static int32_t get_stream_id(const uint8_t *p) { return (int32_t)(get_u32(p) & 0x7fffffffu); }

#define CONN(code) SPEEDY_H2_CONNECTION_ERROR(SPEEDY_H2_##code)
#define STREAM(code) SPEEDY_H2_STREAM_ERROR(SPEEDY_H2_##code)

/* ---- frame header ---- */

void speedy_h2_frame_hd_decode(const uint8_t in[SPEEDY_H2_FRAME_HEADER_LEN],
                               speedy_h2_frame_hd *out) {
  out->length = (uint32_t)in[0] << 16 | (uint32_t)in[1] << 8 | in[2];
  out->type = in[3];
  out->flags = in[4];
  out->stream_id = get_stream_id(in + 5); /* §4.1: the reserved bit is ignored */
}

void speedy_h2_frame_hd_encode(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], uint32_t length,
                               uint8_t type, uint8_t flags, int32_t stream_id) {
  out[0] = (uint8_t)(length >> 16);
  out[1] = (uint8_t)(length >> 8);
  out[2] = (uint8_t)length;
  out[3] = type;
  out[4] = flags;
  put_u32(out + 5, (uint32_t)stream_id & 0x7fffffffu);
}

int speedy_h2_frame_too_large(const speedy_h2_frame_hd *hd) {
  /* §4.2: a frame that could alter the whole connection's state is a connection error; so
   * is an RST_STREAM or WINDOW_UPDATE of another length than 4 (§6.4, §6.9), and a PING,
   * GOAWAY or PRIORITY_UPDATE (which belong on stream 0). DATA and PRIORITY concern their
   * stream alone (and a type we do not know is ignored before this). */
  int connection = hd->stream_id == 0;
  switch (hd->type) {
  case SPEEDY_H2_FRAME_HEADERS:
  case SPEEDY_H2_FRAME_PUSH_PROMISE:
  case SPEEDY_H2_FRAME_CONTINUATION:
  case SPEEDY_H2_FRAME_SETTINGS:
  case SPEEDY_H2_FRAME_RST_STREAM:
  case SPEEDY_H2_FRAME_PING:
  case SPEEDY_H2_FRAME_GOAWAY:
  case SPEEDY_H2_FRAME_WINDOW_UPDATE:
  case SPEEDY_H2_FRAME_PRIORITY_UPDATE:
    connection = 1;
    break;
  default:
    break;
  }
  return connection ? CONN(FRAME_SIZE_ERROR) : STREAM(FRAME_SIZE_ERROR);
}

/* ---- names ---- */

const char *speedy_h2_frame_type_name(unsigned type) {
  static const char *const names[] = {"DATA",          "HEADERS",      "PRIORITY", "RST_STREAM",
                                      "SETTINGS",      "PUSH_PROMISE", "PING",     "GOAWAY",
                                      "WINDOW_UPDATE", "CONTINUATION"};
  if (type < sizeof(names) / sizeof(names[0])) return names[type];
  return type == SPEEDY_H2_FRAME_PRIORITY_UPDATE ? "PRIORITY_UPDATE" : "UNKNOWN";
}

const char *speedy_h2_setting_name(unsigned id) {
  switch (id) {
  case SPEEDY_H2_SETTINGS_HEADER_TABLE_SIZE:
    return "HEADER_TABLE_SIZE";
  case SPEEDY_H2_SETTINGS_ENABLE_PUSH:
    return "ENABLE_PUSH";
  case SPEEDY_H2_SETTINGS_MAX_CONCURRENT_STREAMS:
    return "MAX_CONCURRENT_STREAMS";
  case SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE:
    return "INITIAL_WINDOW_SIZE";
  case SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE:
    return "MAX_FRAME_SIZE";
  case SPEEDY_H2_SETTINGS_MAX_HEADER_LIST_SIZE:
    return "MAX_HEADER_LIST_SIZE";
  case SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL:
    return "ENABLE_CONNECT_PROTOCOL";
  case SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES:
    return "NO_RFC7540_PRIORITIES";
  default:
    return "UNKNOWN";
  }
}

const char *speedy_h2_error_name(unsigned code) {
  static const char *const names[] = {"NO_ERROR",
                                      "PROTOCOL_ERROR",
                                      "INTERNAL_ERROR",
                                      "FLOW_CONTROL_ERROR",
                                      "SETTINGS_TIMEOUT",
                                      "STREAM_CLOSED",
                                      "FRAME_SIZE_ERROR",
                                      "REFUSED_STREAM",
                                      "CANCEL",
                                      "COMPRESSION_ERROR",
                                      "CONNECT_ERROR",
                                      "ENHANCE_YOUR_CALM",
                                      "INADEQUATE_SECURITY",
                                      "HTTP_1_1_REQUIRED"};
  return code < sizeof(names) / sizeof(names[0]) ? names[code] : "UNKNOWN";
}

/* ---- decoding ---- */

/* Strips the Pad Length field and the padding of a PADDED frame. fixed: bytes of the
 * frame's own fields after the pad length. *start, *len: what lies between them.
 * §6.1, §6.2, §6.6: padding as long as the payload or longer is a PROTOCOL_ERROR. */
static int strip_padding(const speedy_h2_frame_hd *hd, const uint8_t *payload, size_t fixed,
                         const uint8_t **start, size_t *len) {
  size_t length = hd->length, pad = 0, head = 0;
  if (hd->flags & SPEEDY_H2_FLAG_PADDED) {
    if (length < 1) return CONN(FRAME_SIZE_ERROR);
    pad = payload[0];
    head = 1;
  }
  if (length - head < fixed) return CONN(FRAME_SIZE_ERROR);
  if (pad > length - head - fixed) return CONN(PROTOCOL_ERROR);
  *start = payload + head;
  *len = length - head - pad;
  return 0;
}

int speedy_h2_decode_data(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                          speedy_h2_data *out) {
  if (hd->stream_id == 0) return CONN(PROTOCOL_ERROR); /* §6.1 */
  const uint8_t *start;
  size_t len;
  int rv = strip_padding(hd, payload, 0, &start, &len);
  if (rv != 0) return rv;
  out->data = start;
  out->data_len = len;
  out->flow_len = hd->length;
  return 0;
}

static void read_priority(const uint8_t *p, speedy_h2_priority_fields *out) {
  uint32_t dependency = get_u32(p);
  out->present = 1;
  out->exclusive = (uint8_t)(dependency >> 31);
  out->depends_on = (int32_t)(dependency & 0x7fffffffu);
  out->weight = p[4];
}

int speedy_h2_decode_headers(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                             speedy_h2_headers *out) {
  if (hd->stream_id == 0) return CONN(PROTOCOL_ERROR); /* §6.2 */
  int prioritised = (hd->flags & SPEEDY_H2_FLAG_PRIORITY) != 0;
  const uint8_t *start;
  size_t len;
  int rv = strip_padding(hd, payload, prioritised ? 5 : 0, &start, &len);
  if (rv != 0) return rv;
  memset(&out->priority, 0, sizeof(out->priority));
  if (prioritised) {
    read_priority(start, &out->priority);
    start += 5;
    len -= 5;
    /* §5.3.1 of RFC 7540, kept by h2spec: a stream cannot depend on itself. */
    if (out->priority.depends_on == hd->stream_id) return STREAM(PROTOCOL_ERROR);
  }
  out->block = start;
  out->block_len = len;
  return 0;
}

int speedy_h2_decode_priority(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                              speedy_h2_priority_fields *out) {
  if (hd->stream_id == 0) return CONN(PROTOCOL_ERROR);  /* §6.3 */
  if (hd->length != 5) return STREAM(FRAME_SIZE_ERROR); /* §6.3 */
  read_priority(payload, out);
  if (out->depends_on == hd->stream_id) return STREAM(PROTOCOL_ERROR);
  return 0;
}

int speedy_h2_decode_rst_stream(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                uint32_t *error_code) {
  if (hd->stream_id == 0) return CONN(PROTOCOL_ERROR); /* §6.4 */
  if (hd->length != 4) return CONN(FRAME_SIZE_ERROR);  /* §6.4 */
  *error_code = get_u32(payload);
  return 0;
}

void speedy_h2_settings_entry(const uint8_t *payload, size_t i, uint16_t *id, uint32_t *value) {
  const uint8_t *p = payload + 6 * i;
  *id = (uint16_t)(p[0] << 8 | p[1]);
  *value = get_u32(p + 2);
}

int speedy_h2_decode_settings(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                              int role_is_client) {
  if (hd->stream_id != 0) return CONN(PROTOCOL_ERROR); /* §6.5 */
  if (hd->flags & SPEEDY_H2_FLAG_ACK) return hd->length == 0 ? 0 : CONN(FRAME_SIZE_ERROR);
  if (hd->length % 6 != 0) return CONN(FRAME_SIZE_ERROR);
  for (size_t i = 0; i < hd->length / 6; i++) {
    uint16_t id;
    uint32_t value;
    speedy_h2_settings_entry(payload, i, &id, &value);
    switch (id) { /* §6.5.2 */
    case SPEEDY_H2_SETTINGS_ENABLE_PUSH:
      if (value > 1 || (role_is_client && value == 1)) return CONN(PROTOCOL_ERROR);
      break;
    case SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE:
      if (value > SPEEDY_H2_MAX_WINDOW) return CONN(FLOW_CONTROL_ERROR);
      break;
    case SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE:
      if (value < SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE || value > SPEEDY_H2_MAX_MAX_FRAME_SIZE)
        return CONN(PROTOCOL_ERROR);
      break;
    case SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL: /* RFC 8441 §3 */
    case SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES:   /* RFC 9218 §2.1 */
      if (value > 1) return CONN(PROTOCOL_ERROR);
      break;
    default:
      break; /* unknown settings are ignored */
    }
  }
  return 0;
}

int speedy_h2_decode_push_promise(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                  speedy_h2_push_promise *out) {
  if (hd->stream_id == 0) return CONN(PROTOCOL_ERROR); /* §6.6 */
  const uint8_t *start;
  size_t len;
  int rv = strip_padding(hd, payload, 4, &start, &len);
  if (rv != 0) return rv;
  out->promised_stream_id = get_stream_id(start);
  /* §5.1.1: a server-initiated stream has an even, non-zero id. */
  if (out->promised_stream_id == 0 || out->promised_stream_id % 2 != 0) return CONN(PROTOCOL_ERROR);
  out->block = start + 4;
  out->block_len = len - 4;
  return 0;
}

int speedy_h2_decode_ping(const speedy_h2_frame_hd *hd, const uint8_t *payload, uint8_t opaque[8]) {
  if (hd->stream_id != 0) return CONN(PROTOCOL_ERROR); /* §6.7 */
  if (hd->length != 8) return CONN(FRAME_SIZE_ERROR);
  memcpy(opaque, payload, 8);
  return 0;
}

int speedy_h2_decode_goaway(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                            speedy_h2_goaway *out) {
  if (hd->stream_id != 0) return CONN(PROTOCOL_ERROR); /* §6.8 */
  if (hd->length < 8) return CONN(FRAME_SIZE_ERROR);   /* §4.2: too small */
  out->last_stream_id = get_stream_id(payload);
  out->error_code = get_u32(payload + 4);
  out->debug = payload + 8;
  out->debug_len = hd->length - 8;
  return 0;
}

int speedy_h2_decode_window_update(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                   uint32_t *increment) {
  if (hd->length != 4) return CONN(FRAME_SIZE_ERROR); /* §6.9 */
  *increment = get_u32(payload) & 0x7fffffffu;
  /* §6.9: an increment of 0 is a stream error, or a connection error on stream 0. */
  if (*increment == 0) return hd->stream_id == 0 ? CONN(PROTOCOL_ERROR) : STREAM(PROTOCOL_ERROR);
  return 0;
}

int speedy_h2_decode_continuation(const speedy_h2_frame_hd *hd) {
  return hd->stream_id == 0 ? CONN(PROTOCOL_ERROR) : 0; /* §6.10 */
}

int speedy_h2_decode_priority_update(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                     speedy_h2_priority_update *out) {
  if (hd->stream_id != 0) return CONN(PROTOCOL_ERROR); /* RFC 9218 §7.1 */
  if (hd->length < 4) return CONN(FRAME_SIZE_ERROR);
  out->prioritized_stream_id = get_stream_id(payload);
  if (out->prioritized_stream_id == 0) return CONN(PROTOCOL_ERROR);
  out->field_value = payload + 4;
  out->field_value_len = hd->length - 4;
  return 0;
}

/* ---- encoding ---- */

size_t speedy_h2_encode_data_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                uint32_t data_len, int end_stream) {
  speedy_h2_frame_hd_encode(out, data_len, SPEEDY_H2_FRAME_DATA,
                            end_stream ? SPEEDY_H2_FLAG_END_STREAM : 0, stream_id);
  return SPEEDY_H2_FRAME_HEADER_LEN;
}

size_t speedy_h2_encode_headers_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                   uint32_t fragment_len, uint8_t flags) {
  speedy_h2_frame_hd_encode(out, fragment_len, SPEEDY_H2_FRAME_HEADERS,
                            flags & (SPEEDY_H2_FLAG_END_STREAM | SPEEDY_H2_FLAG_END_HEADERS),
                            stream_id);
  return SPEEDY_H2_FRAME_HEADER_LEN;
}

size_t speedy_h2_encode_push_promise_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4],
                                        int32_t stream_id, int32_t promised_stream_id,
                                        uint32_t fragment_len, int end_headers) {
  speedy_h2_frame_hd_encode(out, fragment_len + 4, SPEEDY_H2_FRAME_PUSH_PROMISE,
                            end_headers ? SPEEDY_H2_FLAG_END_HEADERS : 0, stream_id);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN, (uint32_t)promised_stream_id & 0x7fffffffu);
  return SPEEDY_H2_FRAME_HEADER_LEN + 4;
}

size_t speedy_h2_encode_continuation_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                        uint32_t fragment_len, int end_headers) {
  speedy_h2_frame_hd_encode(out, fragment_len, SPEEDY_H2_FRAME_CONTINUATION,
                            end_headers ? SPEEDY_H2_FLAG_END_HEADERS : 0, stream_id);
  return SPEEDY_H2_FRAME_HEADER_LEN;
}

size_t speedy_h2_encode_priority(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 5], int32_t stream_id,
                                 const speedy_h2_priority_fields *priority) {
  speedy_h2_frame_hd_encode(out, 5, SPEEDY_H2_FRAME_PRIORITY, 0, stream_id);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN,
          ((uint32_t)priority->depends_on & 0x7fffffffu) | (priority->exclusive ? 0x80000000u : 0));
  out[SPEEDY_H2_FRAME_HEADER_LEN + 4] = priority->weight;
  return SPEEDY_H2_FRAME_HEADER_LEN + 5;
}

size_t speedy_h2_encode_rst_stream(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4], int32_t stream_id,
                                   uint32_t error_code) {
  speedy_h2_frame_hd_encode(out, 4, SPEEDY_H2_FRAME_RST_STREAM, 0, stream_id);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN, error_code);
  return SPEEDY_H2_FRAME_HEADER_LEN + 4;
}

size_t speedy_h2_encode_settings(uint8_t *out, const uint16_t *ids, const uint32_t *values,
                                 size_t n, int ack) {
  if (ack) n = 0;
  speedy_h2_frame_hd_encode(out, (uint32_t)(6 * n), SPEEDY_H2_FRAME_SETTINGS,
                            ack ? SPEEDY_H2_FLAG_ACK : 0, 0);
  uint8_t *p = out + SPEEDY_H2_FRAME_HEADER_LEN;
  for (size_t i = 0; i < n; i++, p += 6) {
    p[0] = (uint8_t)(ids[i] >> 8);
    p[1] = (uint8_t)ids[i];
    put_u32(p + 2, values[i]);
  }
  return SPEEDY_H2_FRAME_HEADER_LEN + 6 * n;
}

size_t speedy_h2_encode_ping(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 8], const uint8_t opaque[8],
                             int ack) {
  speedy_h2_frame_hd_encode(out, 8, SPEEDY_H2_FRAME_PING, ack ? SPEEDY_H2_FLAG_ACK : 0, 0);
  memcpy(out + SPEEDY_H2_FRAME_HEADER_LEN, opaque, 8);
  return SPEEDY_H2_FRAME_HEADER_LEN + 8;
}

size_t speedy_h2_encode_goaway(uint8_t *out, int32_t last_stream_id, uint32_t error_code,
                               const uint8_t *debug, size_t debug_len) {
  speedy_h2_frame_hd_encode(out, (uint32_t)(8 + debug_len), SPEEDY_H2_FRAME_GOAWAY, 0, 0);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN, (uint32_t)last_stream_id & 0x7fffffffu);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN + 4, error_code);
  if (debug_len > 0) memcpy(out + SPEEDY_H2_FRAME_HEADER_LEN + 8, debug, debug_len);
  return SPEEDY_H2_FRAME_HEADER_LEN + 8 + debug_len;
}

size_t speedy_h2_encode_window_update(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4],
                                      int32_t stream_id, uint32_t increment) {
  speedy_h2_frame_hd_encode(out, 4, SPEEDY_H2_FRAME_WINDOW_UPDATE, 0, stream_id);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN, increment & 0x7fffffffu);
  return SPEEDY_H2_FRAME_HEADER_LEN + 4;
}

size_t speedy_h2_encode_priority_update(uint8_t *out, int32_t prioritized_stream_id,
                                        const char *value, size_t value_len) {
  speedy_h2_frame_hd_encode(out, (uint32_t)(4 + value_len), SPEEDY_H2_FRAME_PRIORITY_UPDATE, 0, 0);
  put_u32(out + SPEEDY_H2_FRAME_HEADER_LEN, (uint32_t)prioritized_stream_id & 0x7fffffffu);
  if (value_len > 0) memcpy(out + SPEEDY_H2_FRAME_HEADER_LEN + 4, value, value_len);
  return SPEEDY_H2_FRAME_HEADER_LEN + 4 + value_len;
}
