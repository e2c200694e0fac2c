/* h2raw.h — HTTP/2 frames built byte by byte for conformance tests, written from RFC 9113
 * section 6 (not from our encoders), and what a session sends back split into frames.
 *
 * An h2_rig is a session under test (a test_peer of pair.h, SPEEDY_PROTOCOL_H2) and our side
 * of the wire: the HPACK encoder that compresses the field blocks we send it (RFC 7541's
 * context for that direction), the decoder for the blocks it sends us, and the bytes
 * queued for the next feed. Builders write exactly what the test says, so any field can
 * lie. Failures inside these helpers are Criterion assertions.
 */
#ifndef SPEEDY_TEST_H2RAW_H
#define SPEEDY_TEST_H2RAW_H

#include <stddef.h>
#include <stdint.h>

#include "h2_frame.h"
#include "hpack.h"
#include "pair.h"
#include "rawframe.h"
#include "speedy/speedy.h"

/* ---- frames ---------------------------------------------------------------------------- */

void h2_frame_header(raw_buf *b, uint32_t length, uint8_t type, uint8_t flags, uint32_t stream_id);
/* A SETTINGS frame of n (id, value) pairs. */
void h2_settings(raw_buf *b, const uint16_t *ids, const uint32_t *values, size_t n);
void h2_settings_ack(raw_buf *b);
void h2_ping(raw_buf *b, int ack, const char opaque[8]);
void h2_window_update(raw_buf *b, uint32_t stream_id, uint32_t increment);
void h2_rst_stream(raw_buf *b, uint32_t stream_id, uint32_t code);
void h2_goaway(raw_buf *b, uint32_t last_stream_id, uint32_t code, const char *debug);
/* DATA; payload NULL means bytes i % 251. pad > 0 adds PADDED with that much padding. */
void h2_data(raw_buf *b, uint32_t stream_id, uint8_t flags, const void *payload, size_t len,
             int pad);
void h2_priority(raw_buf *b, uint32_t stream_id, uint32_t depends_on, uint8_t weight);
void h2_priority_update(raw_buf *b, uint32_t prioritized, const char *value);

/* ---- the rig --------------------------------------------------------------------------- */

typedef struct h2_field {
  const char *name;
  const char *value;
} h2_field;

typedef struct h2_rig {
  test_peer *peer;
  speedy_role role; /* the session's */
  speedy_mem mem;   /* plain malloc for our side's HPACK contexts */
  speedy_hpack_encoder *encoder;
  speedy_hpack_decoder *decoder;
  raw_buf in;
  int preface_skipped; /* a client session's preface was taken off its output */
} h2_rig;

/* Opens a session of role (options NULL: defaults with the counting allocator) and, unless
 * raw is 1, completes the handshake: prefaces and SETTINGS both ways, both acknowledged,
 * output drained. */
void h2_rig_open(h2_rig *rig, speedy_role role, speedy_options *options, int raw);
/* Deletes the session and asserts that the counting allocator has nothing left. */
void h2_rig_close(h2_rig *rig);
/* Feeds rig->in in chunks of chunk bytes (0: all at once), empties it, and returns the last
 * recv result (bytes or a negative error). */
int64_t h2_rig_feed(h2_rig *rig, size_t chunk);

/* A field block of the fields, HPACK-encoded by the rig's encoder, appended to block. */
void h2_rig_block(h2_rig *rig, const h2_field *fields, size_t n, raw_buf *block);
/* HEADERS on stream_id carrying the fields, END_HEADERS added to flags, queued. */
void h2_rig_headers(h2_rig *rig, uint32_t stream_id, uint8_t flags, const h2_field *fields,
                    size_t n);
/* A GET for path on stream_id (END_STREAM unless body is 1), queued. */
void h2_rig_get(h2_rig *rig, uint32_t stream_id, const char *path, int body);
/* A response :status on stream_id (plus content-length when length >= 0), queued. */
void h2_rig_response(h2_rig *rig, uint32_t stream_id, const char *status, long length,
                     int end_stream);

/* Client session: submits a GET for path and drains its output; returns the stream id. */
int32_t h2_rig_client_get(h2_rig *rig, const char *path);

/* ---- what the session sent ------------------------------------------------------------- */

typedef struct h2_out_frame {
  speedy_h2_frame_hd hd;
  const uint8_t *payload;
} h2_out_frame;

typedef struct h2_output {
  uint8_t *bytes;
  size_t len;
  h2_out_frame *frames;
  size_t n;
} h2_output;

/* Drains the session's output and splits it into frames (asserting whole frames). */
void h2_output_take(h2_output *out, h2_rig *rig);
void h2_output_free(h2_output *out);
size_t h2_output_count(const h2_output *out, uint8_t type);
/* The first frame of type on stream_id (-1: any), or NULL. */
const h2_out_frame *h2_output_find(const h2_output *out, uint8_t type, int32_t stream_id);
/* Decodes the field block starting at HEADERS/PUSH_PROMISE frame index i (with its
 * CONTINUATION frames) with the rig's decoder into "name: value\n" lines (caller frees). */
char *h2_output_fields(h2_rig *rig, const h2_output *out, size_t i);

/* ---- the protocol's answers ------------------------------------------------------------ */

/* A connection error: recv returned a fatal error, one GOAWAY with code went out, the
 * session wants no more input. Takes the output. */
void h2_expect_goaway(h2_rig *rig, int64_t rv, uint32_t code, const char *what);
/* A stream error: recv went on, RST_STREAM on stream_id with code went out, no GOAWAY. */
void h2_expect_rst(h2_rig *rig, int64_t rv, int32_t stream_id, uint32_t code, const char *what);
/* The connection still works: a PING is answered with its ACK. */
void h2_expect_alive(h2_rig *rig, const char *what);
/* Nothing went wrong: recv consumed everything, neither RST_STREAM nor GOAWAY went out. */
void h2_expect_quiet(h2_rig *rig, int64_t rv, const char *what);

#endif
