/* h2_frame.h — HTTP/2 wire format (RFC 9113 §4 and §6, RFC 9218 §7.1): the 9-byte frame
 * header, every frame type's payload decoded and checked, and encoders.
 *
 * Pure functions over byte buffers, like frame.c for SPDY: they know nothing of sessions
 * or stream states. A decoder checks everything the frame alone can show (its length,
 * its stream identifier, its padding, the values it carries) and says how the receiver
 * must answer a violation: as a connection error or as a stream error, with the RFC's
 * error code. What a frame means for the streams (§5.1) is the session's business.
 * Field blocks inside HEADERS, PUSH_PROMISE and CONTINUATION are handed over as
 * (pointer, length), still HPACK-encoded; hpack.c decodes them.
 */
#ifndef SPEEDY_LIB_H2_FRAME_H
#define SPEEDY_LIB_H2_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "speedy/speedy.h"

#define SPEEDY_H2_FRAME_HEADER_LEN 9
#define SPEEDY_H2_MAX_STREAM_ID 0x7fffffff
#define SPEEDY_H2_MAX_WINDOW 0x7fffffff
#define SPEEDY_H2_DEFAULT_WINDOW 65535
#define SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE 16384
#define SPEEDY_H2_MAX_MAX_FRAME_SIZE 16777215
#define SPEEDY_H2_DEFAULT_HEADER_TABLE_SIZE 4096

/* The client connection preface (§3.4), before its first SETTINGS frame. */
#define SPEEDY_H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define SPEEDY_H2_PREFACE_LEN 24

/* Frame types and flags: speedy.h (speedy_h2_frame_type, SPEEDY_H2_FLAG_*). */

/* Error codes (§7). */
typedef enum speedy_h2_error_code {
  SPEEDY_H2_NO_ERROR = 0x0,
  SPEEDY_H2_PROTOCOL_ERROR = 0x1,
  SPEEDY_H2_INTERNAL_ERROR = 0x2,
  SPEEDY_H2_FLOW_CONTROL_ERROR = 0x3,
  SPEEDY_H2_SETTINGS_TIMEOUT = 0x4,
  SPEEDY_H2_STREAM_CLOSED = 0x5,
  SPEEDY_H2_FRAME_SIZE_ERROR = 0x6,
  SPEEDY_H2_REFUSED_STREAM = 0x7,
  SPEEDY_H2_CANCEL = 0x8,
  SPEEDY_H2_COMPRESSION_ERROR = 0x9,
  SPEEDY_H2_CONNECT_ERROR = 0xa,
  SPEEDY_H2_ENHANCE_YOUR_CALM = 0xb,
  SPEEDY_H2_INADEQUATE_SECURITY = 0xc,
  SPEEDY_H2_HTTP_1_1_REQUIRED = 0xd
} speedy_h2_error_code;

/* Settings (§6.5.2; ENABLE_CONNECT_PROTOCOL: RFC 8441; NO_RFC7540_PRIORITIES: RFC 9218). */
typedef enum speedy_h2_setting_id {
  SPEEDY_H2_SETTINGS_HEADER_TABLE_SIZE = 0x1,
  SPEEDY_H2_SETTINGS_ENABLE_PUSH = 0x2,
  SPEEDY_H2_SETTINGS_MAX_CONCURRENT_STREAMS = 0x3,
  SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE = 0x4,
  SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE = 0x5,
  SPEEDY_H2_SETTINGS_MAX_HEADER_LIST_SIZE = 0x6,
  SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL = 0x8,
  SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES = 0x9
} speedy_h2_setting_id;

/* A decoder's verdict: 0, or a negative value naming the error and its scope. */
#define SPEEDY_H2_CONNECTION_ERROR(code) (-(int)(0x1000u | (unsigned)(code)))
#define SPEEDY_H2_STREAM_ERROR(code) (-(int)(0x2000u | (unsigned)(code)))
#define SPEEDY_H2_VERDICT_IS_CONNECTION(v) ((v) < 0 && ((unsigned)-(v)&0x1000u) != 0)
#define SPEEDY_H2_VERDICT_CODE(v) ((speedy_h2_error_code)((unsigned)-(v)&0xffu))

typedef struct speedy_h2_frame_hd {
  uint32_t length; /* payload bytes after the 9-byte header (24 bits) */
  uint8_t type;
  uint8_t flags;
  int32_t stream_id; /* the reserved bit is ignored on receipt (§4.1) */
} speedy_h2_frame_hd;

void speedy_h2_frame_hd_decode(const uint8_t in[SPEEDY_H2_FRAME_HEADER_LEN],
                               speedy_h2_frame_hd *out);
/* Writes the 9-byte header. length must fit 24 bits, stream_id 31. */
void speedy_h2_frame_hd_encode(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], uint32_t length,
                               uint8_t type, uint8_t flags, int32_t stream_id);

/* Whether a frame of this header, larger than the size we allow, is a connection error
 * (frames that change connection state: field blocks, SETTINGS, or any frame on stream 0)
 * or only its stream's (§4.2). Returns the verdict for an oversized frame. */
int speedy_h2_frame_too_large(const speedy_h2_frame_hd *hd);

/* Names for traces ("HEADERS", "ENABLE_PUSH", "FLOW_CONTROL_ERROR"); "UNKNOWN" if none. */
const char *speedy_h2_frame_type_name(unsigned type);
const char *speedy_h2_setting_name(unsigned id);
const char *speedy_h2_error_name(unsigned code);

/* ---- decoding (payload: hd->length bytes after the header) ---- */

typedef struct speedy_h2_data {
  const uint8_t *data; /* after the pad length, before the padding */
  size_t data_len;
  uint32_t flow_len; /* counted against flow control: the whole payload (§6.1) */
} speedy_h2_data;
int speedy_h2_decode_data(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                          speedy_h2_data *out);

/* RFC 7540 priority fields, parsed so they can be checked and then ignored (§5.3.2). */
typedef struct speedy_h2_priority_fields {
  uint8_t present;
  uint8_t exclusive;
  int32_t depends_on;
  uint8_t weight; /* wire value: weight - 1 */
} speedy_h2_priority_fields;

typedef struct speedy_h2_headers {
  speedy_h2_priority_fields priority;
  const uint8_t *block; /* field block fragment */
  size_t block_len;
} speedy_h2_headers;
int speedy_h2_decode_headers(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                             speedy_h2_headers *out);

int speedy_h2_decode_priority(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                              speedy_h2_priority_fields *out);

int speedy_h2_decode_rst_stream(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                uint32_t *error_code);

/* SETTINGS: checks the frame and every value (§6.5, §6.5.2); entries are then read with
 * speedy_h2_settings_entry, i from 0 to hd->length / 6. role_is_client: the receiver's
 * role (a client refuses ENABLE_PUSH = 1). */
int speedy_h2_decode_settings(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                              int role_is_client);
void speedy_h2_settings_entry(const uint8_t *payload, size_t i, uint16_t *id, uint32_t *value);

typedef struct speedy_h2_push_promise {
  int32_t promised_stream_id;
  const uint8_t *block;
  size_t block_len;
} speedy_h2_push_promise;
int speedy_h2_decode_push_promise(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                  speedy_h2_push_promise *out);

int speedy_h2_decode_ping(const speedy_h2_frame_hd *hd, const uint8_t *payload, uint8_t opaque[8]);

typedef struct speedy_h2_goaway {
  int32_t last_stream_id;
  uint32_t error_code;
  const uint8_t *debug;
  size_t debug_len;
} speedy_h2_goaway;
int speedy_h2_decode_goaway(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                            speedy_h2_goaway *out);

int speedy_h2_decode_window_update(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                   uint32_t *increment);

int speedy_h2_decode_continuation(const speedy_h2_frame_hd *hd);

typedef struct speedy_h2_priority_update {
  int32_t prioritized_stream_id;
  const uint8_t *field_value; /* the Priority Field Value (RFC 9218 §4), ASCII */
  size_t field_value_len;
} speedy_h2_priority_update;
int speedy_h2_decode_priority_update(const speedy_h2_frame_hd *hd, const uint8_t *payload,
                                     speedy_h2_priority_update *out);

/* ---- encoding: each writes into out and returns the bytes written ---- */

/* DATA header for data_len bytes (padding is not used when sending). */
size_t speedy_h2_encode_data_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                uint32_t data_len, int end_stream);
/* The HEADERS / PUSH_PROMISE / CONTINUATION header before a fragment of fragment_len
 * bytes; PUSH_PROMISE also writes its 4-byte promised stream id (13 bytes in all). */
size_t speedy_h2_encode_headers_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                   uint32_t fragment_len, uint8_t flags);
size_t speedy_h2_encode_push_promise_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4],
                                        int32_t stream_id, int32_t promised_stream_id,
                                        uint32_t fragment_len, int end_headers);
size_t speedy_h2_encode_continuation_hd(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN], int32_t stream_id,
                                        uint32_t fragment_len, int end_headers);
size_t speedy_h2_encode_priority(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 5], int32_t stream_id,
                                 const speedy_h2_priority_fields *priority);
size_t speedy_h2_encode_rst_stream(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4], int32_t stream_id,
                                   uint32_t error_code);
/* SETTINGS with n entries (out: 9 + 6n bytes), or its ACK (n = 0, ack = 1). */
size_t speedy_h2_encode_settings(uint8_t *out, const uint16_t *ids, const uint32_t *values,
                                 size_t n, int ack);
size_t speedy_h2_encode_ping(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 8], const uint8_t opaque[8],
                             int ack);
/* GOAWAY with debug data (out: 17 + debug_len bytes). */
size_t speedy_h2_encode_goaway(uint8_t *out, int32_t last_stream_id, uint32_t error_code,
                               const uint8_t *debug, size_t debug_len);
size_t speedy_h2_encode_window_update(uint8_t out[SPEEDY_H2_FRAME_HEADER_LEN + 4],
                                      int32_t stream_id, uint32_t increment);
/* PRIORITY_UPDATE (out: 13 + value_len bytes). */
size_t speedy_h2_encode_priority_update(uint8_t *out, int32_t prioritized_stream_id,
                                        const char *value, size_t value_len);

#endif
