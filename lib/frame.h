/* frame.h — SPDY wire format: encode and decode every frame of every version.
 *
 * Pure functions over byte buffers. Knows nothing of sessions, streams or sockets;
 * session code decides what a frame means. Header blocks inside SYN_STREAM, SYN_REPLY and
 * HEADERS are handed over as (pointer, length) still compressed; hdblock.c deals with them.
 *
 * "version" below is the wire version: 2 or 3 (SPDY/3.1 says 3 on the wire).
 * Decoders return 0 or SPEEDY_ERR_PROTOCOL when the payload's size or contents cannot be
 * a frame of that type; they never read outside [payload, payload + len).
 */
#ifndef SPDY_LIB_FRAME_H
#define SPDY_LIB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "speedy/speedy.h"

#define SPDY_FRAME_HEADER_LEN 8
#define SPDY_MAX_STREAM_ID 0x7fffffff
#define SPDY_MAX_FRAME_LENGTH 0xffffff /* 24-bit length field */
#define SPDY_MAX_WINDOW 0x7fffffff

#define SPDY_FLAG_FIN 0x01
#define SPDY_FLAG_UNIDIRECTIONAL 0x02

/* Fixed part of header-bearing frames, before the header block. */
#define SPDY_SYN_STREAM_FIXED_LEN 10 /* stream id, assoc id, priority/unused/slot */
#define SPDY_SYN_REPLY_FIXED_LEN(v) ((v) == 2 ? 6 : 4)
#define SPDY_HEADERS_FIXED_LEN(v) ((v) == 2 ? 6 : 4)

/* The 8-byte common header of every frame. */
typedef struct spdy_frame_hd {
  int is_control;
  uint16_t version;  /* control frames */
  uint16_t type;     /* control frames */
  int32_t stream_id; /* DATA frames */
  uint8_t flags;
  uint32_t length; /* payload bytes after the 8-byte header */
} spdy_frame_hd;

void spdy_frame_hd_decode(const uint8_t in[SPDY_FRAME_HEADER_LEN], spdy_frame_hd *out);
void spdy_frame_hd_encode_control(uint8_t out[SPDY_FRAME_HEADER_LEN], int version, int type,
                                  uint8_t flags, uint32_t length);
void spdy_frame_hd_encode_data(uint8_t out[SPDY_FRAME_HEADER_LEN], int32_t stream_id, uint8_t flags,
                               uint32_t length);

/* SYN_STREAM. priority is the wire value (v2: 0-3, v3: 0-7). */
typedef struct spdy_syn_stream {
  int32_t stream_id;
  int32_t associated_id;
  uint8_t priority;
  uint8_t slot;         /* v3 only */
  const uint8_t *block; /* compressed header block */
  size_t block_len;
} spdy_syn_stream;
int spdy_frame_decode_syn_stream(int version, const uint8_t *payload, size_t len,
                                 spdy_syn_stream *out);
/* Writes the frame header and the fixed part (8 + 10 bytes) for a block of block_len. */
size_t spdy_frame_encode_syn_stream_prefix(uint8_t *out, int version, uint8_t flags,
                                           int32_t stream_id, int32_t associated_id,
                                           uint8_t priority, size_t block_len);

/* SYN_REPLY and HEADERS share one layout (v2 adds 16 unused bits). */
typedef struct spdy_stream_headers {
  int32_t stream_id;
  const uint8_t *block;
  size_t block_len;
} spdy_stream_headers;
int spdy_frame_decode_syn_reply(int version, const uint8_t *payload, size_t len,
                                spdy_stream_headers *out);
int spdy_frame_decode_headers(int version, const uint8_t *payload, size_t len,
                              spdy_stream_headers *out);
/* type is SPEEDY_SPDY_FRAME_SYN_REPLY or SPEEDY_SPDY_FRAME_HEADERS; writes 8 + fixed bytes. */
size_t spdy_frame_encode_stream_headers_prefix(uint8_t *out, int version, int type, uint8_t flags,
                                               int32_t stream_id, size_t block_len);

/* RST_STREAM: 8-byte payload. */
int spdy_frame_decode_rst_stream(const uint8_t *payload, size_t len, int32_t *stream_id,
                                 uint32_t *status);
size_t spdy_frame_encode_rst_stream(uint8_t *out, int version, int32_t stream_id, uint32_t status);

/* SETTINGS: a count, then 8-byte entries (v2: 24-bit id little-endian, then flags; v3:
 * flags, then 24-bit id big-endian). decode checks len == 4 + 8 * count. */
int spdy_frame_decode_settings(const uint8_t *payload, size_t len, uint32_t *count);
void spdy_frame_settings_entry(int version, const uint8_t *payload, uint32_t index,
                               speedy_setting *out);
/* Writes a whole SETTINGS frame; returns its length (8 + 4 + 8 * n). */
size_t spdy_frame_encode_settings(uint8_t *out, int version, uint8_t flags,
                                  const speedy_setting *settings, size_t n);

/* PING: 4-byte id. */
int spdy_frame_decode_ping(const uint8_t *payload, size_t len, uint32_t *id);
size_t spdy_frame_encode_ping(uint8_t *out, int version, uint32_t id);

/* GOAWAY status codes on SPDY/3's wire (SPDY/2 carries none). */
#define SPDY_GOAWAY_OK 0
#define SPDY_GOAWAY_PROTOCOL_ERROR 1
#define SPDY_GOAWAY_INTERNAL_ERROR 2

/* GOAWAY: last-good-stream-id (v2: 4 bytes), + status (v3: 8 bytes). */
int spdy_frame_decode_goaway(int version, const uint8_t *payload, size_t len, int32_t *last_good_id,
                             uint32_t *status);
size_t spdy_frame_encode_goaway(uint8_t *out, int version, int32_t last_good_id, uint32_t status);

/* WINDOW_UPDATE: stream id and 31-bit delta. */
int spdy_frame_decode_window_update(const uint8_t *payload, size_t len, int32_t *stream_id,
                                    uint32_t *delta);
size_t spdy_frame_encode_window_update(uint8_t *out, int version, int32_t stream_id,
                                       uint32_t delta);

/* CREDENTIAL (v3): slot, proof, certificate chain. Checked for internal consistency
 * (every length inside the payload, at least one certificate); the session then ignores
 * it. */
typedef struct spdy_credential {
  uint16_t slot;
  const uint8_t *proof;
  size_t proof_len;
  uint32_t n_certificates;
} spdy_credential;
int spdy_frame_decode_credential(const uint8_t *payload, size_t len, spdy_credential *out);
/* Big-endian helpers. */
static inline uint32_t spdy_get_u32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline uint16_t spdy_get_u16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline void spdy_put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
static inline void spdy_put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

#endif
