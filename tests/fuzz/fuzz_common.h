/* fuzz_common.h — support shared by the libspeedy fuzz harnesses in tests/fuzz/.
 *
 * Owns: the counting allocator every harness installs (with failure injection), a reader
 * that turns fuzz input into bounded fields, growable byte and text buffers, a recording
 * set of callbacks whose event log can be compared between runs, the peer's side of a
 * header-compression context (zlib with the version's dictionary) and frame builders.
 *
 * Nothing here uses Criterion: harnesses run under libFuzzer and as plain replay
 * programs. A broken invariant prints one line saying what and calls abort(), which
 * both libFuzzer and CTest report as a failure. Memory of the harness itself (buffers,
 * the peer's zlib) comes from plain malloc; only the sessions use the counting allocator.
 */
#ifndef SPEEDY_FUZZ_COMMON_H
#define SPEEDY_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "speedy/speedy.h"

/* libFuzzer's entry point, defined once per harness. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints "fuzz: <message>" to stderr and aborts. */
void fuzz_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* ---- counting allocator ------------------------------------------------------------ */

/* Resets the counters and disables failure injection. Call at the start of every input. */
void fuzz_alloc_reset(void);
/* Makes allocation number n from now (1 = the next) fail; sticky: every later one too.
 * n == 0 disables injection. */
void fuzz_alloc_fail_at(size_t n, int sticky);
/* Allocations refused so far. */
size_t fuzz_alloc_failures(void);
size_t fuzz_alloc_live_blocks(void);
size_t fuzz_alloc_live_bytes(void);
/* Aborts unless every block allocated through the hook has been freed. */
void fuzz_alloc_check_empty(const char *where);
/* Installs the hooks on options. */
void fuzz_alloc_install(speedy_options *options);
/* The hooks themselves (for module-level harnesses that build a speedy_mem). */
void *fuzz_alloc_malloc(size_t size, void *user);
void *fuzz_alloc_realloc(void *ptr, size_t size, void *user);
void fuzz_alloc_free(void *ptr, void *user);

/* ---- input reader ------------------------------------------------------------------ */

/* Reads fields from the fuzz input; past its end every read returns zeros. */
typedef struct fuzz_input {
  const uint8_t *data;
  size_t len, pos;
} fuzz_input;

void fuzz_input_init(fuzz_input *in, const uint8_t *data, size_t len);
int fuzz_input_done(const fuzz_input *in);
size_t fuzz_input_left(const fuzz_input *in);
uint8_t fuzz_u8(fuzz_input *in);
uint16_t fuzz_u16(fuzz_input *in);
uint32_t fuzz_u32(fuzz_input *in);
/* A value in [0, n) (n > 0), from one or two bytes. */
uint32_t fuzz_below(fuzz_input *in, uint32_t n);
/* Points at up to n bytes of input and consumes them; returns how many there were. */
size_t fuzz_take(fuzz_input *in, size_t n, const uint8_t **out);

/* ---- buffers ----------------------------------------------------------------------- */

typedef struct fuzz_buf {
  uint8_t *data;
  size_t len, cap;
} fuzz_buf;

void fuzz_buf_free(fuzz_buf *b);
void fuzz_put(fuzz_buf *b, const void *bytes, size_t n);
void fuzz_put_fill(fuzz_buf *b, uint8_t byte, size_t n);
void fuzz_put_u8(fuzz_buf *b, uint8_t v);
void fuzz_put_u16(fuzz_buf *b, uint16_t v);
void fuzz_put_u24(fuzz_buf *b, uint32_t v);
void fuzz_put_u32(fuzz_buf *b, uint32_t v);

/* ---- event log --------------------------------------------------------------------- */

/* What a session told its application, as text lines. Consecutive DATA chunks of one
 * stream are merged (byte count and hash), so runs that split input differently compare
 * equal. The first FUZZ_LOG_KEEP bytes are kept for a failure message; the comparison
 * uses a hash of everything and the line count. */
#define FUZZ_LOG_KEEP 16384
typedef struct fuzz_log {
  char text[FUZZ_LOG_KEEP];
  size_t text_len;
  uint64_t hash;
  uint64_t lines;
  int32_t data_stream; /* pending merged DATA: stream (0: none), bytes, hash */
  uint64_t data_bytes;
  uint64_t data_hash;
} fuzz_log;

void fuzz_log_init(fuzz_log *log);
void fuzz_log_add(fuzz_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes out a pending DATA line (call before comparing). */
void fuzz_log_flush(fuzz_log *log);
int fuzz_log_equal(const fuzz_log *a, const fuzz_log *b);

/* 64-bit FNV-1a, continuing from h (start with FUZZ_HASH_INIT). */
#define FUZZ_HASH_INIT 0xcbf29ce484222325ull
uint64_t fuzz_hash(uint64_t h, const void *bytes, size_t len);

/* ---- a recording endpoint ---------------------------------------------------------- */

typedef struct fuzz_body {
  int32_t stream_id; /* for the pattern; set when the stream id is known */
  uint64_t len, offset;
  uint32_t defer_every; /* 0: never; n: every n-th read answers SPEEDY_ERR_DEFERRED */
  uint32_t reads;
  int nocopy;           /* reads set SPEEDY_DATA_FLAG_NO_COPY: on_send_data writes the bytes */
  uint64_t nocopy_from; /* offset of the zero-copy frame's first byte */
} fuzz_body;

#define FUZZ_ENDPOINT_BODIES 64

/* What a harness's session does when a peer's header block or body ends. */
typedef struct fuzz_endpoint fuzz_endpoint;
struct fuzz_endpoint {
  speedy_session *session;
  speedy_protocol protocol;
  speedy_role role;
  fuzz_log log;
  int respond;       /* server: answer every request whose headers end with a response */
  uint32_t body_len; /* ... with a body of this many bytes (0: none) */
  int check_pattern; /* abort when received DATA is not fuzz_pattern_byte of its offset */
  int manual_flow;   /* the application consumes DATA itself (speedy_session_consume) */
  /* Body bytes received per stream, for check_pattern; small open-addressed table. */
  struct fuzz_rx {
    int32_t id;
    uint64_t bytes;
  } rx[256];
  int rx_overflow; /* a stream found no slot: byte counts are incomplete */
  uint64_t rst_sent[SPEEDY_RST_HTTP_1_1_REQUIRED + 1]; /* RST_STREAM frames we sent, by
                                                        * neutral status (sent trace) */
  uint64_t goaway_sent_status[3];
  uint64_t goaway_sent;
  uint64_t callbacks;
  fuzz_body bodies[FUZZ_ENDPOINT_BODIES]; /* response bodies (respond, body_len) */
  size_t n_bodies;
  /* Called from on_stream_close after logging, with the DATA bytes this stream delivered
   * (UINT64_MAX when the pattern table could not track it). */
  void (*close_hook)(struct fuzz_endpoint *ep, int32_t stream_id, uint32_t status,
                     uint64_t bytes_received);
  void *hook_user;
  /* What on_send_data wrote (zero-copy DATA frames): it goes out before the bytes the same
   * speedy_session_send call returns. */
  fuzz_buf side;
};

/* The byte a generated body has at offset off of stream id. */
uint8_t fuzz_pattern_byte(int32_t stream_id, uint64_t off);

/* Body source: a fuzz_body (source), bytes fuzz_pattern_byte of the stream id passed. */
int64_t fuzz_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                       uint32_t *flags, void *source, void *user);

/* Creates ep->session with recording callbacks and the counting allocator. options may be
 * NULL (defaults); the allocator is installed on a copy. Returns 0 or the library error. */
int fuzz_endpoint_open(fuzz_endpoint *ep, speedy_protocol protocol, speedy_role role,
                       speedy_options *options);
void fuzz_endpoint_close(fuzz_endpoint *ep);
/* Feeds bytes in one call; returns speedy_session_recv's result. */
int64_t fuzz_endpoint_recv(fuzz_endpoint *ep, const uint8_t *bytes, size_t len);
/* Takes all output into out (may be NULL: discarded). Returns 0 or the negative error. */
int fuzz_endpoint_drain(fuzz_endpoint *ep, fuzz_buf *out);

/* Options for a harness session: defaults, or small limits (1 KiB header blocks, 2 KiB
 * control frames, 4 streams, 4 KiB stream windows, 16 owed control frames, 16-byte DATA frames)
 * that make every cap reachable with short inputs. The caller deletes them. */
speedy_options *fuzz_options_new(int small_limits);

/* Aborts unless the session's own memory figure (speedy_session_memory) moved exactly as
 * the counting allocator saw: baseline is live bytes minus that figure at creation. */
void fuzz_check_accounting(const fuzz_endpoint *ep, size_t baseline, const char *where);
size_t fuzz_accounting_baseline(const fuzz_endpoint *ep);

/* Valid request headers in SPDY/3 names (the library maps them for SPDY/2). */
extern const speedy_header fuzz_request_headers[5];
extern const speedy_header fuzz_response_headers[2];

/* The protocol for a selector byte: 0 spdy/2, 1 spdy/3, 2 spdy/3.1 (mod 3). */
speedy_protocol fuzz_protocol_of(uint8_t selector);
/* Wire version of a protocol: 2 or 3. */
unsigned fuzz_wire_version(speedy_protocol protocol);

/* ---- the peer's header compression --------------------------------------------------- */

typedef enum fuzz_dictionary {
  FUZZ_DICT_NONE = 0,
  FUZZ_DICT_V2 = 2,
  FUZZ_DICT_V3 = 3
} fuzz_dictionary;

typedef struct fuzz_deflater {
  z_stream zs;
  int ready;
} fuzz_deflater;

void fuzz_deflater_init(fuzz_deflater *d, fuzz_dictionary dictionary, int level);
/* The same with a chosen window (9-15) and memory level (1-9): a peer whose zlib header
 * declares a smaller window than 32 KiB. */
void fuzz_deflater_init2(fuzz_deflater *d, fuzz_dictionary dictionary, int level, int window_bits,
                         int mem_level);
void fuzz_deflater_free(fuzz_deflater *d);
/* Compresses in and appends to out, ending with flush (Z_SYNC_FLUSH for SPDY). */
void fuzz_deflate(fuzz_deflater *d, const void *in, size_t len, int flush, fuzz_buf *out);

/* ---- frame builders (nothing validated: fields go out as given) ----------------------- */

void fuzz_control_header(fuzz_buf *b, unsigned version, unsigned type, uint8_t flags,
                         uint32_t length);
void fuzz_data_header(fuzz_buf *b, uint32_t stream_id, uint8_t flags, uint32_t length);
/* count/length field of the version's width (v2: 16 bits, v3: 32 bits). */
void fuzz_nv_length(fuzz_buf *b, unsigned version, uint32_t v);
void fuzz_nv_string(fuzz_buf *b, unsigned version, const void *bytes, size_t len);
/* SYN_STREAM / SYN_REPLY / HEADERS around an already compressed block. */
void fuzz_syn_stream(fuzz_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                     uint32_t associated_id, uint8_t priority_byte, uint8_t slot,
                     const fuzz_buf *block);
void fuzz_stream_headers(fuzz_buf *b, unsigned version, unsigned type, uint8_t flags,
                         uint32_t stream_id, const fuzz_buf *block);

/* ---- replay --------------------------------------------------------------------------- */

/* main() of the plain replay programs: runs LLVMFuzzerTestOneInput on every regular file
 * named on the command line or found (recursively) in a named directory. */
int fuzz_replay_main(int argc, char **argv);

#endif
