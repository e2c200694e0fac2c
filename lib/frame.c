/* frame.c — SPDY wire format: encode and decode every frame of every version.
 *
 * Pure functions over byte buffers. Knows nothing of sessions, streams or sockets;
 * session.c decides what a frame means (stream id 0, a zero delta, an unknown SETTINGS id
 * are its business). Header blocks are handed over still compressed; hdblock.c deals with
 * them.
 *
 * Decoders check sizes only, and never read outside [payload, payload + len). Every
 * length comparison is written as "need <= what is left" so that nothing a peer sends can
 * make the arithmetic wrap. On error the output arguments are left untouched.
 *
 * Encoders trust their caller (the session or a test): the values they are given are our
 * own, so a length that does not fit the 24-bit field is an assert, not an error value.
 * Reserved bits (the X bit before stream ids and deltas, unused bits after the priority)
 * are written as 0 and ignored on decode.
 */
#include "frame.h"

#include <assert.h>
#include <string.h>

#define SPEEDY_STREAM_ID_MASK 0x7fffffffu
#define SPEEDY_VERSION_MASK 0x7fffu
#define SPEEDY_CONTROL_BIT 0x80u

#define SPEEDY_RST_STREAM_LEN 8
#define SPEEDY_PING_LEN 4
#define SPEEDY_WINDOW_UPDATE_LEN 8
#define SPDY_GOAWAY_V2_LEN 4
#define SPDY_GOAWAY_V3_LEN 8
#define SPEEDY_SETTINGS_COUNT_LEN 4
#define SPEEDY_SETTINGS_ENTRY_LEN 8
#define SPEEDY_CREDENTIAL_FIXED_LEN 6 /* slot (2) + proof length (4) */
#define SPEEDY_CREDENTIAL_CERT_LEN_LEN 4

/* Only for asserts: a macro, so NDEBUG builds have no unused function. */
#define VERSION_IS_KNOWN(version) ((version) == 2 || (version) == 3)

static uint32_t get_u24(const uint8_t *p) {
  return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static void put_u24(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 16);
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)v;
}

/* A 31-bit field after a reserved bit: the reserved bit is ignored. */
static int32_t get_u31(const uint8_t *p) {
  return (int32_t)(spdy_get_u32(p) & SPEEDY_STREAM_ID_MASK);
}

/* Writes a 31-bit field with its reserved bit cleared. */
static void put_u31(uint8_t *p, uint32_t v) { spdy_put_u32(p, v & SPEEDY_STREAM_ID_MASK); }

/* ---- Common header ----------------------------------------------------------------- */

void spdy_frame_hd_decode(const uint8_t in[SPDY_FRAME_HEADER_LEN], spdy_frame_hd *out) {
  out->is_control = (in[0] & SPEEDY_CONTROL_BIT) != 0;
  if (out->is_control) {
    out->version = (uint16_t)(spdy_get_u16(in) & SPEEDY_VERSION_MASK);
    out->type = spdy_get_u16(in + 2);
    out->stream_id = 0;
  } else {
    out->version = 0;
    out->type = SPEEDY_SPDY_FRAME_DATA;
    out->stream_id = get_u31(in);
  }
  out->flags = in[4];
  out->length = get_u24(in + 5);
}

void spdy_frame_hd_encode_control(uint8_t out[SPDY_FRAME_HEADER_LEN], int version, int type,
                                  uint8_t flags, uint32_t length) {
  assert(version > 0 && (unsigned)version <= SPEEDY_VERSION_MASK);
  assert(type >= 0 && type <= 0xffff);
  assert(length <= SPDY_MAX_FRAME_LENGTH);
  uint16_t first =
      (uint16_t)((SPEEDY_CONTROL_BIT << 8) | ((unsigned)version & SPEEDY_VERSION_MASK));
  spdy_put_u16(out, first);
  spdy_put_u16(out + 2, (uint16_t)type);
  out[4] = flags;
  put_u24(out + 5, length);
}

void spdy_frame_hd_encode_data(uint8_t out[SPDY_FRAME_HEADER_LEN], int32_t stream_id, uint8_t flags,
                               uint32_t length) {
  assert(stream_id >= 0);
  assert(length <= SPDY_MAX_FRAME_LENGTH);
  put_u31(out, (uint32_t)stream_id); /* clears the C bit too */
  out[4] = flags;
  put_u24(out + 5, length);
}

/* ---- SYN_STREAM -------------------------------------------------------------------- */

int spdy_frame_decode_syn_stream(int version, const uint8_t *payload, size_t len,
                                 spdy_syn_stream *out) {
  assert(VERSION_IS_KNOWN(version));
  if (len < SPDY_SYN_STREAM_FIXED_LEN) return SPEEDY_ERR_PROTOCOL;
  spdy_syn_stream frame;
  frame.stream_id = get_u31(payload);
  frame.associated_id = get_u31(payload + 4);
  if (version == 2) {
    /* SPDY/2: 2-bit priority, 14 unused bits; no slot. */
    frame.priority = (uint8_t)(payload[8] >> 6);
    frame.slot = 0;
  } else {
    /* SPDY/3 2.6.1: 3-bit priority, 5 unused bits, 8-bit slot. */
    frame.priority = (uint8_t)(payload[8] >> 5);
    frame.slot = payload[9];
  }
  frame.block = payload + SPDY_SYN_STREAM_FIXED_LEN;
  frame.block_len = len - SPDY_SYN_STREAM_FIXED_LEN;
  *out = frame;
  return 0;
}

size_t spdy_frame_encode_syn_stream_prefix(uint8_t *out, int version, uint8_t flags,
                                           int32_t stream_id, int32_t associated_id,
                                           uint8_t priority, size_t block_len) {
  assert(VERSION_IS_KNOWN(version));
  assert(stream_id >= 0 && associated_id >= 0);
  assert(block_len <= SPDY_MAX_FRAME_LENGTH - SPDY_SYN_STREAM_FIXED_LEN);
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_SYN_STREAM, flags,
                               (uint32_t)(SPDY_SYN_STREAM_FIXED_LEN + block_len));
  uint8_t *p = out + SPDY_FRAME_HEADER_LEN;
  put_u31(p, (uint32_t)stream_id);
  put_u31(p + 4, (uint32_t)associated_id);
  if (version == 2) {
    assert(priority <= 3);
    p[8] = (uint8_t)((priority & 0x3u) << 6);
  } else {
    assert(priority <= 7);
    p[8] = (uint8_t)((priority & 0x7u) << 5);
  }
  p[9] = 0; /* v2: unused; v3: slot 0, no client certificate */
  return SPDY_FRAME_HEADER_LEN + SPDY_SYN_STREAM_FIXED_LEN;
}

/* ---- SYN_REPLY and HEADERS --------------------------------------------------------- */

/* Both frames: stream id, (v2: 16 unused bits,) header block. */
static int decode_stream_headers(int version, const uint8_t *payload, size_t len,
                                 spdy_stream_headers *out) {
  assert(VERSION_IS_KNOWN(version));
  size_t fixed = SPDY_SYN_REPLY_FIXED_LEN(version);
  if (len < fixed) return SPEEDY_ERR_PROTOCOL;
  out->stream_id = get_u31(payload);
  out->block = payload + fixed;
  out->block_len = len - fixed;
  return 0;
}

int spdy_frame_decode_syn_reply(int version, const uint8_t *payload, size_t len,
                                spdy_stream_headers *out) {
  return decode_stream_headers(version, payload, len, out);
}

int spdy_frame_decode_headers(int version, const uint8_t *payload, size_t len,
                              spdy_stream_headers *out) {
  return decode_stream_headers(version, payload, len, out);
}

size_t spdy_frame_encode_stream_headers_prefix(uint8_t *out, int version, int type, uint8_t flags,
                                               int32_t stream_id, size_t block_len) {
  assert(VERSION_IS_KNOWN(version));
  assert(type == SPEEDY_SPDY_FRAME_SYN_REPLY || type == SPEEDY_SPDY_FRAME_HEADERS);
  assert(stream_id >= 0);
  size_t fixed = type == SPEEDY_SPDY_FRAME_SYN_REPLY ? SPDY_SYN_REPLY_FIXED_LEN(version)
                                                     : SPDY_HEADERS_FIXED_LEN(version);
  assert(block_len <= SPDY_MAX_FRAME_LENGTH - fixed);
  spdy_frame_hd_encode_control(out, version, type, flags, (uint32_t)(fixed + block_len));
  uint8_t *p = out + SPDY_FRAME_HEADER_LEN;
  put_u31(p, (uint32_t)stream_id);
  if (fixed > 4) memset(p + 4, 0, fixed - 4); /* v2: 16 unused bits */
  return SPDY_FRAME_HEADER_LEN + fixed;
}

/* ---- RST_STREAM -------------------------------------------------------------------- */

int spdy_frame_decode_rst_stream(const uint8_t *payload, size_t len, int32_t *stream_id,
                                 uint32_t *status) {
  if (len != SPEEDY_RST_STREAM_LEN) return SPEEDY_ERR_PROTOCOL;
  *stream_id = get_u31(payload);
  *status = spdy_get_u32(payload + 4);
  return 0;
}

size_t spdy_frame_encode_rst_stream(uint8_t *out, int version, int32_t stream_id, uint32_t status) {
  assert(stream_id >= 0);
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_RST_STREAM, 0,
                               SPEEDY_RST_STREAM_LEN);
  put_u31(out + SPDY_FRAME_HEADER_LEN, (uint32_t)stream_id);
  spdy_put_u32(out + SPDY_FRAME_HEADER_LEN + 4, status);
  return SPDY_FRAME_HEADER_LEN + SPEEDY_RST_STREAM_LEN;
}

/* ---- SETTINGS ---------------------------------------------------------------------- */

int spdy_frame_decode_settings(const uint8_t *payload, size_t len, uint32_t *count) {
  if (len < SPEEDY_SETTINGS_COUNT_LEN) return SPEEDY_ERR_PROTOCOL;
  uint32_t n = spdy_get_u32(payload);
  size_t entries_len = len - SPEEDY_SETTINGS_COUNT_LEN;
  /* Compare by division: 8 * n could wrap in 32 bits for a lying count. */
  if (entries_len % SPEEDY_SETTINGS_ENTRY_LEN != 0) return SPEEDY_ERR_PROTOCOL;
  if (entries_len / SPEEDY_SETTINGS_ENTRY_LEN != n) return SPEEDY_ERR_PROTOCOL;
  *count = n;
  return 0;
}

void spdy_frame_settings_entry(int version, const uint8_t *payload, uint32_t index,
                               speedy_setting *out) {
  assert(VERSION_IS_KNOWN(version));
  const uint8_t *p =
      payload + SPEEDY_SETTINGS_COUNT_LEN + (size_t)index * SPEEDY_SETTINGS_ENTRY_LEN;
  if (version == 2) {
    /* SPDY/2 quirk: the 24-bit id is little-endian, then the flags. */
    out->id = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
    out->flags = p[3];
  } else {
    out->flags = p[0];
    out->id = get_u24(p + 1);
  }
  out->value = spdy_get_u32(p + 4);
}

size_t spdy_frame_encode_settings(uint8_t *out, int version, uint8_t flags,
                                  const speedy_setting *settings, size_t n) {
  assert(VERSION_IS_KNOWN(version));
  assert(n <= (SPDY_MAX_FRAME_LENGTH - SPEEDY_SETTINGS_COUNT_LEN) / SPEEDY_SETTINGS_ENTRY_LEN);
  size_t payload_len = SPEEDY_SETTINGS_COUNT_LEN + n * SPEEDY_SETTINGS_ENTRY_LEN;
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_SETTINGS, flags,
                               (uint32_t)payload_len);
  uint8_t *p = out + SPDY_FRAME_HEADER_LEN;
  spdy_put_u32(p, (uint32_t)n);
  p += SPEEDY_SETTINGS_COUNT_LEN;
  for (size_t i = 0; i < n; i++, p += SPEEDY_SETTINGS_ENTRY_LEN) {
    uint32_t id = settings[i].id;
    assert(id <= 0xffffff); /* the session refuses wider ids before they get here */
    if (version == 2) {
      p[0] = (uint8_t)id;
      p[1] = (uint8_t)(id >> 8);
      p[2] = (uint8_t)(id >> 16);
      p[3] = settings[i].flags;
    } else {
      p[0] = settings[i].flags;
      put_u24(p + 1, id & 0xffffffu);
    }
    spdy_put_u32(p + 4, settings[i].value);
  }
  return SPDY_FRAME_HEADER_LEN + payload_len;
}

/* ---- NOOP, PING -------------------------------------------------------------------- */

int spdy_frame_decode_ping(const uint8_t *payload, size_t len, uint32_t *id) {
  if (len != SPEEDY_PING_LEN) return SPEEDY_ERR_PROTOCOL;
  *id = spdy_get_u32(payload);
  return 0;
}

size_t spdy_frame_encode_ping(uint8_t *out, int version, uint32_t id) {
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_PING, 0, SPEEDY_PING_LEN);
  spdy_put_u32(out + SPDY_FRAME_HEADER_LEN, id);
  return SPDY_FRAME_HEADER_LEN + SPEEDY_PING_LEN;
}

/* ---- GOAWAY ------------------------------------------------------------------------ */

int spdy_frame_decode_goaway(int version, const uint8_t *payload, size_t len, int32_t *last_good_id,
                             uint32_t *status) {
  assert(VERSION_IS_KNOWN(version));
  if (version == 2) {
    /* SPDY/2 defines 4 bytes; some v2 peers append a v3-style status anyway. It has no
     * meaning in v2, so it is skipped and the status reported as OK. */
    if (len != SPDY_GOAWAY_V2_LEN && len != SPDY_GOAWAY_V3_LEN) return SPEEDY_ERR_PROTOCOL;
    *last_good_id = get_u31(payload);
    *status = SPDY_GOAWAY_OK;
    return 0;
  }
  if (len != SPDY_GOAWAY_V3_LEN) return SPEEDY_ERR_PROTOCOL;
  *last_good_id = get_u31(payload);
  *status = spdy_get_u32(payload + 4);
  return 0;
}

size_t spdy_frame_encode_goaway(uint8_t *out, int version, int32_t last_good_id, uint32_t status) {
  assert(VERSION_IS_KNOWN(version));
  assert(last_good_id >= 0);
  uint32_t payload_len = version == 2 ? SPDY_GOAWAY_V2_LEN : SPDY_GOAWAY_V3_LEN;
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_GOAWAY, 0, payload_len);
  put_u31(out + SPDY_FRAME_HEADER_LEN, (uint32_t)last_good_id);
  if (version != 2) spdy_put_u32(out + SPDY_FRAME_HEADER_LEN + 4, status);
  return SPDY_FRAME_HEADER_LEN + payload_len;
}

/* ---- WINDOW_UPDATE ----------------------------------------------------------------- */

int spdy_frame_decode_window_update(const uint8_t *payload, size_t len, int32_t *stream_id,
                                    uint32_t *delta) {
  if (len != SPEEDY_WINDOW_UPDATE_LEN) return SPEEDY_ERR_PROTOCOL;
  *stream_id = get_u31(payload);
  *delta = (uint32_t)get_u31(payload + 4);
  return 0;
}

size_t spdy_frame_encode_window_update(uint8_t *out, int version, int32_t stream_id,
                                       uint32_t delta) {
  assert(stream_id >= 0);
  assert(delta <= SPDY_MAX_WINDOW);
  spdy_frame_hd_encode_control(out, version, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 0,
                               SPEEDY_WINDOW_UPDATE_LEN);
  put_u31(out + SPDY_FRAME_HEADER_LEN, (uint32_t)stream_id);
  put_u31(out + SPDY_FRAME_HEADER_LEN + 4, delta);
  return SPDY_FRAME_HEADER_LEN + SPEEDY_WINDOW_UPDATE_LEN;
}

/* ---- CREDENTIAL -------------------------------------------------------------------- */

int spdy_frame_decode_credential(const uint8_t *payload, size_t len, spdy_credential *out) {
  if (len < SPEEDY_CREDENTIAL_FIXED_LEN) return SPEEDY_ERR_PROTOCOL;
  uint16_t slot = spdy_get_u16(payload);
  uint32_t proof_len = spdy_get_u32(payload + 2);
  size_t left = len - SPEEDY_CREDENTIAL_FIXED_LEN;
  if (proof_len > left) return SPEEDY_ERR_PROTOCOL;
  const uint8_t *proof = payload + SPEEDY_CREDENTIAL_FIXED_LEN;
  const uint8_t *p = proof + proof_len;
  left -= proof_len;
  /* SPDY/3 2.6.9: certificates, each a 32-bit length and DER bytes, to the frame's end. */
  uint32_t n_certificates = 0;
  while (left > 0) {
    if (left < SPEEDY_CREDENTIAL_CERT_LEN_LEN) return SPEEDY_ERR_PROTOCOL;
    uint32_t cert_len = spdy_get_u32(p);
    p += SPEEDY_CREDENTIAL_CERT_LEN_LEN;
    left -= SPEEDY_CREDENTIAL_CERT_LEN_LEN;
    if (cert_len > left) return SPEEDY_ERR_PROTOCOL;
    p += cert_len;
    left -= cert_len;
    if (n_certificates == UINT32_MAX) return SPEEDY_ERR_PROTOCOL; /* > 16 GiB of input */
    n_certificates++;
  }
  if (n_certificates == 0) return SPEEDY_ERR_PROTOCOL;
  out->slot = slot;
  out->proof = proof;
  out->proof_len = proof_len;
  out->n_certificates = n_certificates;
  return 0;
}
