/* fuzz_h2_frames.c — the HTTP/2 frame parser alone (lib/h2_frame.c): the 9-byte header and
 * every frame type's decoder, without a session in front of them.
 *
 * Input: a configuration byte (bit 0: the receiver is a client, for SETTINGS' ENABLE_PUSH),
 * then frames, each a 9-byte header followed by its payload. A length past the input's end
 * is cut to what is left (a session reads whole frames only). Each payload is copied into
 * a heap block of exactly its size, so ASan reports any read outside it.
 *
 * Checks, for every frame:
 *  - the header decodes and encodes back to its bytes (the reserved bit cleared);
 *  - the decoder's verdict is the one RFC 9113 (RFC 9218 for PRIORITY_UPDATE) gives,
 *    computed again here from the text, with the same error code and scope;
 *  - what a decoder returns lies inside the payload, and the lengths add up (fields +
 *    padding + pad length octet = the frame's length);
 *  - where an encoder exists, encode(decode(x)) gives x back, less what the encoder never
 *    writes (padding, flags it does not know, reserved bits).
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "h2_frame.h"

#define CONN(code) SPEEDY_H2_CONNECTION_ERROR(SPEEDY_H2_##code)
#define STREAM(code) SPEEDY_H2_STREAM_ERROR(SPEEDY_H2_##code)
#define HD_LEN SPEEDY_H2_FRAME_HEADER_LEN

typedef struct frame_case {
  speedy_h2_frame_hd hd;
  const uint8_t *header; /* the 9 input bytes */
  const uint8_t *payload;
  size_t length; /* == hd.length */
  int role_is_client;
} frame_case;

static uint32_t read_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void expect_verdict(const frame_case *f, int got, int want) {
  if (got != want)
    fuzz_fail("%s on stream %d, length %zu, flags 0x%02x: verdict %d, RFC 9113 says %d",
              speedy_h2_frame_type_name(f->hd.type), (int)f->hd.stream_id, f->length, f->hd.flags,
              got, want);
}

/* [p, p + n) lies inside the payload. */
static void expect_inside(const frame_case *f, const uint8_t *p, size_t n, const char *what) {
  if (n == 0 && p == NULL) return;
  if (p < f->payload || n > f->length || (size_t)(p - f->payload) > f->length - n)
    fuzz_fail("%s: %s (%zu bytes at offset %td) outside the %zu-byte payload",
              speedy_h2_frame_type_name(f->hd.type), what, n, p - f->payload, f->length);
}

/* The encoder wrote the input's header, with only the flags in `kept`. */
static void expect_header(const frame_case *f, const uint8_t *encoded, uint8_t kept,
                          const char *encoder) {
  uint8_t want[HD_LEN];
  memcpy(want, f->header, HD_LEN);
  want[4] &= kept;
  want[5] &= 0x7f;
  if (memcmp(encoded, want, HD_LEN) != 0)
    fuzz_fail("%s: the frame header does not come back", encoder);
}

static void expect_bytes(const uint8_t *got, const uint8_t *want, size_t n, const char *encoder) {
  if (n > 0 && memcmp(got, want, n) != 0) fuzz_fail("%s: the payload does not come back", encoder);
}

/* §6.1, §6.2, §6.6: Pad Length, then `fixed` octets of the frame's own fields, then the
 * padding. Returns the verdict; *head and *pad say where the fields begin and how much
 * padding follows them. */
static int model_padding(const frame_case *f, size_t fixed, size_t *head, size_t *pad) {
  *head = 0;
  *pad = 0;
  if (f->hd.flags & SPEEDY_H2_FLAG_PADDED) {
    if (f->length == 0) return CONN(FRAME_SIZE_ERROR);
    *head = 1;
    *pad = f->payload[0];
  }
  if (f->length < *head + fixed) return CONN(FRAME_SIZE_ERROR);
  if (*head + fixed + *pad > f->length) return CONN(PROTOCOL_ERROR);
  return 0;
}

static void check_data(const frame_case *f) {
  speedy_h2_data out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_data(&f->hd, f->payload, &out);
  size_t head, pad;
  int want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR) : model_padding(f, 0, &head, &pad);
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  expect_inside(f, out.data, out.data_len, "data");
  if (out.data != f->payload + head || head + out.data_len + pad != f->length)
    fuzz_fail("DATA: %zu data bytes at offset %td with %zu of padding in %zu", out.data_len,
              out.data - f->payload, pad, f->length);
  if (out.flow_len != f->hd.length)
    fuzz_fail("DATA: flow_len %u, length %u", out.flow_len, f->hd.length);
  uint8_t hd[HD_LEN];
  if (speedy_h2_encode_data_hd(hd, f->hd.stream_id, (uint32_t)out.data_len,
                               f->hd.flags & SPEEDY_H2_FLAG_END_STREAM) != HD_LEN)
    fuzz_fail("speedy_h2_encode_data_hd: not 9 bytes");
  if (!(f->hd.flags & SPEEDY_H2_FLAG_PADDED))
    expect_header(f, hd, SPEEDY_H2_FLAG_END_STREAM, "speedy_h2_encode_data_hd");
}

static void check_priority_bytes(const speedy_h2_priority_fields *p, const uint8_t *bytes,
                                 int32_t stream_id) {
  if (!p->present) fuzz_fail("priority fields not marked present");
  uint8_t frame[HD_LEN + 5];
  if (speedy_h2_encode_priority(frame, stream_id, p) != HD_LEN + 5)
    fuzz_fail("speedy_h2_encode_priority: not 14 bytes");
  expect_bytes(frame + HD_LEN, bytes, 5, "speedy_h2_encode_priority");
}

static void check_headers(const frame_case *f) {
  speedy_h2_headers out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_headers(&f->hd, f->payload, &out);
  int prioritised = (f->hd.flags & SPEEDY_H2_FLAG_PRIORITY) != 0;
  size_t head = 0, pad = 0, fixed = prioritised ? 5 : 0;
  int want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR) : model_padding(f, fixed, &head, &pad);
  if (want == 0 && prioritised &&
      (int32_t)(read_u32(f->payload + head) & 0x7fffffffu) == f->hd.stream_id)
    want = STREAM(PROTOCOL_ERROR); /* RFC 7540 §5.3.1: a stream cannot depend on itself */
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  expect_inside(f, out.block, out.block_len, "field block");
  if (out.block != f->payload + head + fixed || head + fixed + out.block_len + pad != f->length)
    fuzz_fail("HEADERS: a %zu-byte block at offset %td with %zu of padding in %zu", out.block_len,
              out.block - f->payload, pad, f->length);
  if (prioritised) {
    check_priority_bytes(&out.priority, f->payload + head, f->hd.stream_id);
  } else if (out.priority.present) {
    fuzz_fail("HEADERS: priority present without the PRIORITY flag");
  }
  uint8_t hd[HD_LEN];
  speedy_h2_encode_headers_hd(hd, f->hd.stream_id, (uint32_t)out.block_len, f->hd.flags);
  if (!(f->hd.flags & (SPEEDY_H2_FLAG_PADDED | SPEEDY_H2_FLAG_PRIORITY)))
    expect_header(f, hd, SPEEDY_H2_FLAG_END_STREAM | SPEEDY_H2_FLAG_END_HEADERS,
                  "speedy_h2_encode_headers_hd");
}

static void check_priority(const frame_case *f) {
  speedy_h2_priority_fields out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_priority(&f->hd, f->payload, &out);
  int want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR)
             : f->length != 5     ? STREAM(FRAME_SIZE_ERROR)
             : (int32_t)(read_u32(f->payload) & 0x7fffffffu) == f->hd.stream_id
                 ? STREAM(PROTOCOL_ERROR)
                 : 0;
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  uint8_t frame[HD_LEN + 5];
  speedy_h2_encode_priority(frame, f->hd.stream_id, &out);
  expect_header(f, frame, 0, "speedy_h2_encode_priority");
  expect_bytes(frame + HD_LEN, f->payload, 5, "speedy_h2_encode_priority");
}

static void check_rst_stream(const frame_case *f) {
  uint32_t code = 0;
  int rv = speedy_h2_decode_rst_stream(&f->hd, f->payload, &code);
  int want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR)
             : f->length != 4     ? CONN(FRAME_SIZE_ERROR)
                                  : 0;
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  uint8_t frame[HD_LEN + 4];
  speedy_h2_encode_rst_stream(frame, f->hd.stream_id, code);
  expect_header(f, frame, 0, "speedy_h2_encode_rst_stream");
  expect_bytes(frame + HD_LEN, f->payload, 4, "speedy_h2_encode_rst_stream");
}

static int model_settings(const frame_case *f) {
  if (f->hd.stream_id != 0) return CONN(PROTOCOL_ERROR);
  if (f->hd.flags & SPEEDY_H2_FLAG_ACK) return f->length == 0 ? 0 : CONN(FRAME_SIZE_ERROR);
  if (f->length % 6 != 0) return CONN(FRAME_SIZE_ERROR);
  for (size_t at = 0; at < f->length; at += 6) {
    unsigned id = (unsigned)f->payload[at] << 8 | f->payload[at + 1];
    uint32_t value = read_u32(f->payload + at + 2);
    if (id == SPEEDY_H2_SETTINGS_ENABLE_PUSH && (value > 1 || (f->role_is_client && value == 1)))
      return CONN(PROTOCOL_ERROR);
    if (id == SPEEDY_H2_SETTINGS_INITIAL_WINDOW_SIZE && value > 0x7fffffffu)
      return CONN(FLOW_CONTROL_ERROR);
    if (id == SPEEDY_H2_SETTINGS_MAX_FRAME_SIZE && (value < 16384 || value > 16777215))
      return CONN(PROTOCOL_ERROR);
    if ((id == SPEEDY_H2_SETTINGS_ENABLE_CONNECT_PROTOCOL ||
         id == SPEEDY_H2_SETTINGS_NO_RFC7540_PRIORITIES) &&
        value > 1)
      return CONN(PROTOCOL_ERROR);
  }
  return 0;
}

static void check_settings(const frame_case *f) {
  int rv = speedy_h2_decode_settings(&f->hd, f->payload, f->role_is_client);
  expect_verdict(f, rv, model_settings(f));
  if (rv != 0) return;
  int ack = (f->hd.flags & SPEEDY_H2_FLAG_ACK) != 0;
  size_t n = ack ? 0 : f->length / 6;
  uint16_t *ids = malloc((n > 0 ? n : 1) * sizeof(*ids));
  uint32_t *values = malloc((n > 0 ? n : 1) * sizeof(*values));
  uint8_t *frame = malloc(HD_LEN + 6 * n);
  if (ids == NULL || values == NULL || frame == NULL) fuzz_fail("out of memory");
  for (size_t i = 0; i < n; i++) speedy_h2_settings_entry(f->payload, i, &ids[i], &values[i]);
  if (speedy_h2_encode_settings(frame, ids, values, n, ack) != HD_LEN + 6 * n)
    fuzz_fail("speedy_h2_encode_settings: wrong size");
  expect_header(f, frame, SPEEDY_H2_FLAG_ACK, "speedy_h2_encode_settings");
  expect_bytes(frame + HD_LEN, f->payload, 6 * n, "speedy_h2_encode_settings");
  free(ids);
  free(values);
  free(frame);
}

static void check_push_promise(const frame_case *f) {
  speedy_h2_push_promise out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_push_promise(&f->hd, f->payload, &out);
  size_t head = 0, pad = 0;
  int want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR) : model_padding(f, 4, &head, &pad);
  if (want == 0) {
    uint32_t promised = read_u32(f->payload + head) & 0x7fffffffu;
    if (promised == 0 || promised % 2 != 0) want = CONN(PROTOCOL_ERROR); /* §5.1.1 */
  }
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  expect_inside(f, out.block, out.block_len, "field block");
  if (out.block != f->payload + head + 4 || head + 4 + out.block_len + pad != f->length)
    fuzz_fail("PUSH_PROMISE: a %zu-byte block at offset %td with %zu of padding in %zu",
              out.block_len, out.block - f->payload, pad, f->length);
  uint8_t frame[HD_LEN + 4];
  speedy_h2_encode_push_promise_hd(frame, f->hd.stream_id, out.promised_stream_id,
                                   (uint32_t)out.block_len,
                                   f->hd.flags & SPEEDY_H2_FLAG_END_HEADERS);
  if (!(f->hd.flags & SPEEDY_H2_FLAG_PADDED)) {
    expect_header(f, frame, SPEEDY_H2_FLAG_END_HEADERS, "speedy_h2_encode_push_promise_hd");
    uint8_t promised[4];
    memcpy(promised, f->payload, 4);
    promised[0] &= 0x7f;
    expect_bytes(frame + HD_LEN, promised, 4, "speedy_h2_encode_push_promise_hd");
  }
}

static void check_ping(const frame_case *f) {
  uint8_t opaque[8];
  int rv = speedy_h2_decode_ping(&f->hd, f->payload, opaque);
  int want = f->hd.stream_id != 0 ? CONN(PROTOCOL_ERROR)
             : f->length != 8     ? CONN(FRAME_SIZE_ERROR)
                                  : 0;
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  uint8_t frame[HD_LEN + 8];
  speedy_h2_encode_ping(frame, opaque, f->hd.flags & SPEEDY_H2_FLAG_ACK);
  expect_header(f, frame, SPEEDY_H2_FLAG_ACK, "speedy_h2_encode_ping");
  expect_bytes(frame + HD_LEN, f->payload, 8, "speedy_h2_encode_ping");
}

static void check_goaway(const frame_case *f) {
  speedy_h2_goaway out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_goaway(&f->hd, f->payload, &out);
  int want = f->hd.stream_id != 0 ? CONN(PROTOCOL_ERROR)
             : f->length < 8      ? CONN(FRAME_SIZE_ERROR)
                                  : 0;
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  expect_inside(f, out.debug, out.debug_len, "debug data");
  if (out.debug != f->payload + 8 || out.debug_len != f->length - 8)
    fuzz_fail("GOAWAY: %zu debug bytes at offset %td in %zu", out.debug_len, out.debug - f->payload,
              f->length);
  uint8_t *frame = malloc(HD_LEN + f->length);
  if (frame == NULL) fuzz_fail("out of memory");
  if (speedy_h2_encode_goaway(frame, out.last_stream_id, out.error_code, out.debug,
                              out.debug_len) != HD_LEN + f->length)
    fuzz_fail("speedy_h2_encode_goaway: wrong size");
  expect_header(f, frame, 0, "speedy_h2_encode_goaway");
  uint8_t last[4];
  memcpy(last, f->payload, 4);
  last[0] &= 0x7f;
  expect_bytes(frame + HD_LEN, last, 4, "speedy_h2_encode_goaway");
  expect_bytes(frame + HD_LEN + 4, f->payload + 4, f->length - 4, "speedy_h2_encode_goaway");
  free(frame);
}

static void check_window_update(const frame_case *f) {
  uint32_t increment = 0;
  int rv = speedy_h2_decode_window_update(&f->hd, f->payload, &increment);
  int want = 0;
  if (f->length != 4)
    want = CONN(FRAME_SIZE_ERROR);
  else if ((read_u32(f->payload) & 0x7fffffffu) == 0)
    want = f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR) : STREAM(PROTOCOL_ERROR);
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  if (increment == 0 || increment > 0x7fffffffu)
    fuzz_fail("WINDOW_UPDATE: increment %u", increment);
  uint8_t frame[HD_LEN + 4];
  speedy_h2_encode_window_update(frame, f->hd.stream_id, increment);
  expect_header(f, frame, 0, "speedy_h2_encode_window_update");
  uint8_t want_payload[4];
  memcpy(want_payload, f->payload, 4);
  want_payload[0] &= 0x7f;
  expect_bytes(frame + HD_LEN, want_payload, 4, "speedy_h2_encode_window_update");
}

static void check_continuation(const frame_case *f) {
  int rv = speedy_h2_decode_continuation(&f->hd);
  expect_verdict(f, rv, f->hd.stream_id == 0 ? CONN(PROTOCOL_ERROR) : 0);
  if (rv != 0) return;
  uint8_t hd[HD_LEN];
  speedy_h2_encode_continuation_hd(hd, f->hd.stream_id, (uint32_t)f->length,
                                   f->hd.flags & SPEEDY_H2_FLAG_END_HEADERS);
  expect_header(f, hd, SPEEDY_H2_FLAG_END_HEADERS, "speedy_h2_encode_continuation_hd");
}

static void check_priority_update(const frame_case *f) {
  speedy_h2_priority_update out;
  memset(&out, 0, sizeof(out));
  int rv = speedy_h2_decode_priority_update(&f->hd, f->payload, &out);
  int want = 0;
  if (f->hd.stream_id != 0)
    want = CONN(PROTOCOL_ERROR);
  else if (f->length < 4)
    want = CONN(FRAME_SIZE_ERROR);
  else if ((read_u32(f->payload) & 0x7fffffffu) == 0)
    want = CONN(PROTOCOL_ERROR);
  expect_verdict(f, rv, want);
  if (rv != 0) return;
  expect_inside(f, out.field_value, out.field_value_len, "priority field value");
  if (out.field_value != f->payload + 4 || out.field_value_len != f->length - 4)
    fuzz_fail("PRIORITY_UPDATE: a %zu-byte value at offset %td in %zu", out.field_value_len,
              out.field_value - f->payload, f->length);
  uint8_t *frame = malloc(HD_LEN + f->length);
  if (frame == NULL) fuzz_fail("out of memory");
  if (speedy_h2_encode_priority_update(frame, out.prioritized_stream_id,
                                       (const char *)out.field_value,
                                       out.field_value_len) != HD_LEN + f->length)
    fuzz_fail("speedy_h2_encode_priority_update: wrong size");
  expect_header(f, frame, 0, "speedy_h2_encode_priority_update");
  uint8_t id[4];
  memcpy(id, f->payload, 4);
  id[0] &= 0x7f;
  expect_bytes(frame + HD_LEN, id, 4, "speedy_h2_encode_priority_update");
  expect_bytes(frame + HD_LEN + 4, f->payload + 4, f->length - 4,
               "speedy_h2_encode_priority_update");
  free(frame);
}

static void check_header(const frame_case *f) {
  const speedy_h2_frame_hd *hd = &f->hd;
  if (hd->length > 0xffffffu || hd->stream_id < 0)
    fuzz_fail("frame header: length %u, stream %d", hd->length, (int)hd->stream_id);
  uint8_t encoded[HD_LEN];
  speedy_h2_frame_hd_encode(encoded, hd->length, hd->type, hd->flags, hd->stream_id);
  expect_header(f, encoded, 0xff, "speedy_h2_frame_hd_encode");
  int verdict = speedy_h2_frame_too_large(hd);
  /* 4.2, 6.4, 6.9: only DATA, PRIORITY (and unknown types) concern their stream alone. */
  int stream_only =
      hd->stream_id != 0 && hd->type != SPEEDY_H2_FRAME_HEADERS &&
      hd->type != SPEEDY_H2_FRAME_PUSH_PROMISE && hd->type != SPEEDY_H2_FRAME_CONTINUATION &&
      hd->type != SPEEDY_H2_FRAME_SETTINGS && hd->type != SPEEDY_H2_FRAME_RST_STREAM &&
      hd->type != SPEEDY_H2_FRAME_PING && hd->type != SPEEDY_H2_FRAME_GOAWAY &&
      hd->type != SPEEDY_H2_FRAME_WINDOW_UPDATE && hd->type != SPEEDY_H2_FRAME_PRIORITY_UPDATE;
  int connection = !stream_only;
  expect_verdict(f, verdict, connection ? CONN(FRAME_SIZE_ERROR) : STREAM(FRAME_SIZE_ERROR));
  if (speedy_h2_frame_type_name(hd->type) == NULL) fuzz_fail("no name for type %u", hd->type);
}

static void check_frame(const frame_case *f) {
  check_header(f);
  switch (f->hd.type) {
  case SPEEDY_H2_FRAME_DATA:
    check_data(f);
    break;
  case SPEEDY_H2_FRAME_HEADERS:
    check_headers(f);
    break;
  case SPEEDY_H2_FRAME_PRIORITY:
    check_priority(f);
    break;
  case SPEEDY_H2_FRAME_RST_STREAM:
    check_rst_stream(f);
    break;
  case SPEEDY_H2_FRAME_SETTINGS:
    check_settings(f);
    break;
  case SPEEDY_H2_FRAME_PUSH_PROMISE:
    check_push_promise(f);
    break;
  case SPEEDY_H2_FRAME_PING:
    check_ping(f);
    break;
  case SPEEDY_H2_FRAME_GOAWAY:
    check_goaway(f);
    break;
  case SPEEDY_H2_FRAME_WINDOW_UPDATE:
    check_window_update(f);
    break;
  case SPEEDY_H2_FRAME_CONTINUATION:
    check_continuation(f);
    break;
  case SPEEDY_H2_FRAME_PRIORITY_UPDATE:
    check_priority_update(f);
    break;
  default:
    break; /* §5.5: unknown types are ignored; there is nothing to decode */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  int role_is_client = data[0] & 1;
  size_t at = 1;
  while (size - at >= HD_LEN) {
    frame_case f;
    memset(&f, 0, sizeof(f));
    f.role_is_client = role_is_client;
    f.header = data + at;
    speedy_h2_frame_hd_decode(f.header, &f.hd);
    at += HD_LEN;
    if (f.hd.length > size - at) {
      /* Cut to the input: the header is rewritten so the encoders' output compares. */
      static uint8_t cut[HD_LEN];
      memcpy(cut, f.header, HD_LEN);
      size_t left = size - at;
      cut[0] = (uint8_t)(left >> 16);
      cut[1] = (uint8_t)(left >> 8);
      cut[2] = (uint8_t)left;
      f.header = cut;
      speedy_h2_frame_hd_decode(f.header, &f.hd);
    }
    f.length = f.hd.length;
    /* An exact heap copy, so ASan sees any byte read past the payload; an empty payload
     * points just past a 1-byte block (malloc(0) may return NULL). */
    uint8_t *block = malloc(f.length > 0 ? f.length : 1);
    if (block == NULL) fuzz_fail("out of memory");
    if (f.length > 0) memcpy(block, data + at, f.length);
    f.payload = f.length > 0 ? block : block + 1;
    check_frame(&f);
    free(block);
    at += f.length;
  }
  return 0;
}
