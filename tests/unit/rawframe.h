/* rawframe.h — SPDY frames built byte by byte, for hostile-input tests.
 *
 * Nothing here validates: every length, count, id and version is written exactly as the
 * test says, so a test can make any field lie. Header blocks are serialised by hand and
 * compressed by the test's own zlib stream (raw_deflater), which plays the peer's side of
 * the shared compression context — with the version's dictionary, another one, none, or
 * not at all. raw_parse splits what a session sends back into frames, so a test can
 * assert on the RST_STREAM or GOAWAY it produced; raw_rig bundles a session under test
 * (a test_peer from pair.h) with our side of the wire, and raw_expect_* state the
 * protocol's answers.
 *
 * Memory comes from plain malloc (not the counting allocator): raw buffers belong to the
 * test. Failures inside these helpers are Criterion assertions.
 */
#ifndef SPEEDY_TEST_RAWFRAME_H
#define SPEEDY_TEST_RAWFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "frame.h"
#include "speedy/speedy.h"

/* A growable byte string. Zero-initialise it (or raw_buf_init); free with raw_buf_free. */
typedef struct raw_buf {
  uint8_t *data;
  size_t len, cap;
} raw_buf;

void raw_buf_init(raw_buf *b);
void raw_buf_free(raw_buf *b);
void raw_put(raw_buf *b, const void *bytes, size_t n);
void raw_put_fill(raw_buf *b, uint8_t byte, size_t n);
void raw_put_u8(raw_buf *b, uint8_t v);
void raw_put_u16(raw_buf *b, uint16_t v);
void raw_put_u24(raw_buf *b, uint32_t v);
void raw_put_u32(raw_buf *b, uint32_t v);

/* ---- frame headers and fixed frames ---------------------------------------------------- */

/* The 8-byte control frame header: C bit, 15-bit version (any value), type, flags, and a
 * 24-bit length that need not match what follows. */
void raw_control_header(raw_buf *b, unsigned version, unsigned type, uint8_t flags,
                        uint32_t length);
/* The 8-byte DATA header (stream_id's top bit is cleared: it is the C bit). */
void raw_data_header(raw_buf *b, uint32_t stream_id, uint8_t flags, uint32_t length);
/* A whole DATA frame; payload NULL means bytes i % 251. */
void raw_data(raw_buf *b, uint32_t stream_id, uint8_t flags, const void *payload, size_t len);

void raw_rst_stream(raw_buf *b, unsigned version, uint32_t stream_id, uint32_t status);
void raw_ping(raw_buf *b, unsigned version, uint32_t id);
/* v2: 4-byte payload (last-good id only); v3: last-good id and status. */
void raw_goaway(raw_buf *b, unsigned version, uint32_t last_good, uint32_t status);
void raw_window_update(raw_buf *b, unsigned version, uint32_t stream_id, uint32_t delta);
/* NOOP (SPDY/2): an empty control frame of type 5. */
void raw_noop(raw_buf *b);
/* CREDENTIAL (SPDY/3): slot, proof, then each certificate with its 32-bit length. */
void raw_credential(raw_buf *b, uint16_t slot, const uint8_t *proof, size_t proof_len,
                    const uint8_t *const *certs, const size_t *cert_lens, size_t n_certs);
/* One SETTINGS entry in the version's layout (v2: id little-endian, then flags). */
void raw_settings_entry(raw_buf *b, unsigned version, uint32_t id, uint8_t flags, uint32_t value);
/* A whole SETTINGS frame with a truthful count and length. */
void raw_settings(raw_buf *b, unsigned version, uint8_t frame_flags, const speedy_setting *entries,
                  size_t n);

/* ---- header blocks --------------------------------------------------------------------- */

/* One field as it goes on the wire (v2 names like "url" are written as given). Values may
 * hold NUL when value_len says so; value_len 0 with a value takes strlen. */
typedef struct raw_header {
  const char *name;
  const char *value;
  size_t value_len;
} raw_header;

/* A count or length field of the version's width (v2: 16 bits, v3: 32 bits). */
void raw_nv_length(raw_buf *b, unsigned version, uint32_t v);
/* A length field followed by the bytes. */
void raw_nv_string(raw_buf *b, unsigned version, const void *bytes, size_t len);
/* count, then every field, uncompressed and unvalidated. */
void raw_nv_block(raw_buf *b, unsigned version, const raw_header *headers, size_t n);

/* Request headers of a GET in the version's names (v2: method url version host scheme,
 * v3: the same with a colon and :path). Returns the count written to out (at most 6). */
size_t raw_request_headers(unsigned version, const char *path, raw_header out[6]);
/* Response headers (status version, or :status :version). Returns the count (2). */
size_t raw_response_headers(unsigned version, raw_header out[2]);

/* The peer's compression context for one direction. */
typedef enum raw_dictionary {
  RAW_DICT_NONE = 0, /* plain zlib, no preset dictionary */
  RAW_DICT_V2 = 2,
  RAW_DICT_V3 = 3
} raw_dictionary;

typedef struct raw_deflater {
  z_stream zs;
  int ready;
} raw_deflater;

/* level 0 gives stored (uncompressed) blocks; 9 the smallest output. */
void raw_deflater_init(raw_deflater *d, raw_dictionary dictionary, int level);
/* The usual peer: the version's dictionary, level 6. */
void raw_deflater_init_version(raw_deflater *d, unsigned version);
void raw_deflater_free(raw_deflater *d);
/* Compresses in (len may be 0) and appends the result to out, ending with flush
 * (Z_SYNC_FLUSH as SPDY requires, or Z_NO_FLUSH / Z_FINISH for broken peers). */
void raw_deflate(raw_deflater *d, const void *in, size_t len, int flush, raw_buf *out);
/* Serialises and compresses a header block with a sync flush. */
void raw_deflate_nv(raw_deflater *d, unsigned version, const raw_header *headers, size_t n,
                    raw_buf *out);

/* ---- header-bearing frames ------------------------------------------------------------- */

/* Frames around an already compressed (or deliberately broken) block. */
void raw_syn_stream(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                    uint32_t associated_id, uint8_t priority, const void *block, size_t block_len);
void raw_syn_reply(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                   const void *block, size_t block_len);
void raw_headers(raw_buf *b, unsigned version, uint8_t flags, uint32_t stream_id, const void *block,
                 size_t block_len);

/* The same with the fields compressed by d (which must match the version). */
void raw_syn_stream_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                       uint32_t stream_id, uint32_t associated_id, uint8_t priority,
                       const raw_header *headers, size_t n);
void raw_syn_reply_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                      uint32_t stream_id, const raw_header *headers, size_t n);
void raw_headers_nv(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags,
                    uint32_t stream_id, const raw_header *headers, size_t n);
/* A GET for path from a client: SYN_STREAM with the version's request headers. */
void raw_get(raw_buf *b, raw_deflater *d, unsigned version, uint8_t flags, uint32_t stream_id,
             const char *path);

/* ---- reading frames back --------------------------------------------------------------- */

typedef struct raw_frame {
  spdy_frame_hd hd;
  const uint8_t *payload; /* hd.length bytes, inside the parsed buffer */
} raw_frame;

/* Splits bytes into whole frames (asserting that they are whole); stores up to max of
 * them and returns how many there are. */
size_t raw_parse(const uint8_t *bytes, size_t len, raw_frame *out, size_t max);

/* ---- a session under test, fed raw bytes ------------------------------------------------ */

struct test_peer;

/* One test_peer (pair.h) plus our side of the wire: the deflater that compresses the
 * header blocks we send it, and the bytes queued for the next feed. */
typedef struct raw_rig {
  speedy_protocol protocol;
  unsigned version; /* wire version: 2 or 3 */
  struct test_peer *peer;
  raw_deflater deflater;
  raw_buf in;
  char name[16]; /* "spdy/3.1", for failure messages */
} raw_rig;

/* options NULL: defaults with the counting allocator. The peer logs every data chunk. */
void raw_rig_open(raw_rig *rig, speedy_protocol protocol, speedy_role role,
                  speedy_options *options);
/* Deletes the peer and asserts that the counting allocator has nothing left. */
void raw_rig_close(raw_rig *rig);
/* Feeds rig->in in chunks of chunk bytes, empties it, and returns test_feed's result. */
int64_t raw_rig_feed(raw_rig *rig, size_t chunk);
/* A client rig whose GET on stream 1 is already out (and its output dropped), so
 * SYN_REPLY, DATA and pushes for stream 1 make sense. */
void raw_rig_open_client_with_get(raw_rig *rig, speedy_protocol protocol);
/* Queues a SYN_STREAM on stream_id whose block is plain, compressed with the rig's context. */
void raw_rig_syn_block(raw_rig *rig, uint8_t flags, uint32_t stream_id, const raw_buf *plain);
/* Feeds everything queued in one buffer; *fed says how much that was. */
int64_t raw_rig_feed_all(raw_rig *rig, size_t *fed);
/* Drops whatever the session has to say so far (its initial SETTINGS, for instance). */
void raw_rig_discard_output(raw_rig *rig);
/* Options with the counting allocator installed (the caller deletes them). */
speedy_options *raw_options_new(void);

/* The peer's log with consecutive "data <id> <n>" lines of one stream merged, so logs of
 * runs that split DATA differently compare equal. The caller frees it. */
char *raw_coalesced_log(const struct test_peer *peer);

/* ---- what a session sent back ----------------------------------------------------------- */

typedef struct raw_output {
  uint8_t *bytes;
  size_t len;
  raw_frame *frames;
  size_t n;
} raw_output;

/* Drains everything the peer (or a bare session) has to send and splits it into frames. */
void raw_output_take(raw_output *out, struct test_peer *peer);
void raw_output_take_session(raw_output *out, speedy_session *session);
void raw_output_free(raw_output *out);
/* Frames of a type (SPEEDY_SPDY_FRAME_DATA counts DATA frames). */
size_t raw_output_count(const raw_output *out, unsigned type);

/* Assertions; what names the situation in the failure message. */
void raw_expect_rst(const raw_output *out, int32_t stream_id, uint32_t status, const char *what);
void raw_expect_no_rst(const raw_output *out, const char *what);
/* Exactly one GOAWAY, with last_good (and status in v3; v2 has none). */
void raw_expect_goaway(const raw_output *out, unsigned version, int32_t last_good, uint32_t status,
                       const char *what);
void raw_expect_no_goaway(const raw_output *out, const char *what);
/* A session error: recv returned error, GOAWAY with last_good and status went out, the
 * session reads no more and repeats the error. Takes (and frees) the output. */
void raw_expect_session_error(raw_rig *rig, int64_t rv, int error, int32_t last_good,
                              uint32_t status, const char *what);
/* A stream error: recv consumed everything, RST_STREAM with status went out, no GOAWAY. */
void raw_expect_stream_error(raw_rig *rig, int64_t rv, size_t fed, int32_t stream_id,
                             uint32_t status, const char *what);
/* A stream error for a header block: block_plain (uncompressed, built by the caller) goes
 * out compressed as a SYN_STREAM with FIN on stream 1 of a server rig; it must be reset
 * with PROTOCOL_ERROR without reaching the application, and a GET on stream 3 must then
 * work — proof that the block was inflated and the zlib contexts stayed in step. */
void raw_expect_block_resets_stream(raw_rig *rig, const raw_buf *block_plain, const char *what);
/* The session still works: a GET on stream_id (odd, above every id used) is delivered. */
void raw_expect_session_works(raw_rig *rig, uint32_t stream_id, const char *what);

#endif
