/* spdy.h — the public API of libspdy, a sans-I/O SPDY/2, /3, /3.1 and HTTP/2 protocol engine.
 *
 * The engine never touches a socket or a clock. The application feeds it the bytes it
 * read (spdy_session_recv), asks it for the bytes to write (spdy_session_send), and
 * hears about streams through callbacks. Everything a peer can send is validated here;
 * a peer's mistake becomes the protocol's answer (RST_STREAM or GOAWAY), never a crash.
 *
 * Conventions
 * - Functions return 0 or a negative SPDY_ERR_* code, or a non-negative count (int64_t)
 *   or stream id (int32_t) on success. Error codes are stable and never renumbered.
 * - Objects are opaque and come in *_new / *_del pairs; the caller owns what *_new gives.
 * - Header names and values handed to callbacks point into the library's memory and are
 *   valid only during the callback. Headers passed to spdy_submit_* are copied.
 * - Time comes only from spdy_session_set_now(); the library reads no clock.
 *
 * Calling from inside callbacks: spdy_submit_*, spdy_session_resume_data,
 * spdy_session_consume and the stream user-data functions may be called from any
 * callback. spdy_session_recv, spdy_session_send and spdy_session_del must not.
 *
 * Protocol versions share one API: applications use the SPDY/3 header names for every SPDY
 * version (":method", ":path", ":version", ":host", ":scheme"; ":status", ":version"); for
 * a SPDY/2 session the library translates to and from "method", "url", "version", "host",
 * "scheme", "status". HTTP/2 sessions (SPDY_PROTOCOL_H2) use HTTP/2's names: ":method",
 * ":scheme", ":authority", ":path" in requests, ":status" (three digits) in responses.
 * Priority is an urgency 0 (most urgent) to 7; SPDY/2's 0-3 maps onto it (urgency / 2 on the
 * wire, wire * 2 on receipt), HTTP/2 carries it as RFC 9218's priority field.
 *
 * Reasons, settings and frame types: the spdy_rst_status reasons and spdy_settings_id ids
 * are the same names for every protocol. For SPDY they are the wire values; for HTTP/2 the
 * library maps them to RFC 9113's error codes and settings (the HTTP/2-only ones are at the
 * end of each list). Frame types in on_frame and on_frame_not_sent are the session
 * protocol's own (spdy_protocol_frame_type_name names them).
 */
#ifndef SPDY_SPDY_H
#define SPDY_SPDY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SPDY_BUILDING_LIBRARY)
#define SPDY_API __attribute__((visibility("default")))
#else
#define SPDY_API
#endif

/* Library version: compile-time macros and the runtime string. */
#define SPDY_VERSION_MAJOR 0
#define SPDY_VERSION_MINOR 1
#define SPDY_VERSION_PATCH 0
#define SPDY_VERSION_STRING "0.1.0"
#define SPDY_VERSION_NUM                                                                           \
  ((SPDY_VERSION_MAJOR << 16) | (SPDY_VERSION_MINOR << 8) | SPDY_VERSION_PATCH)

/* Returns the runtime library version, e.g. "0.1.0". */
SPDY_API const char *spdy_version(void);

/* ---- Errors ------------------------------------------------------------------------ */

/* Library error codes. Negative; never renumbered. Fatal ones end the session. */
enum spdy_error {
  SPDY_OK = 0,
  SPDY_ERR_INVALID_ARGUMENT = -501,       /* a caller passed something impossible */
  SPDY_ERR_NOMEM = -502,                  /* the allocator said no (fatal) */
  SPDY_ERR_DEFERRED = -503,               /* data source: nothing ready yet, resume later */
  SPDY_ERR_PAUSE = -504,                  /* data callback: stop recv, return consumed bytes */
  SPDY_ERR_CALLBACK_FAILURE = -505,       /* a callback failed (fatal) */
  SPDY_ERR_PROTOCOL = -506,               /* the peer broke the protocol; GOAWAY queued (fatal) */
  SPDY_ERR_COMPRESSION = -507,            /* a header block did not inflate (fatal) */
  SPDY_ERR_HEADER_BLOCK_TOO_LARGE = -508, /* inflated header block over the cap (fatal) */
  SPDY_ERR_FRAME_TOO_LARGE = -509,        /* a control frame over the configured maximum (fatal) */
  SPDY_ERR_UNSUPPORTED_VERSION = -510,    /* control frame of another SPDY version (fatal) */
  SPDY_ERR_FLOW_CONTROL = -511,           /* session window violated (fatal) */
  SPDY_ERR_STREAM_NOT_FOUND = -512,       /* no open stream with that id */
  SPDY_ERR_STREAM_CLOSED = -513,          /* the stream can no longer send */
  SPDY_ERR_STREAM_ID_EXHAUSTED = -514,    /* no stream ids left on this session */
  SPDY_ERR_SESSION_CLOSING = -515,        /* GOAWAY sent or received: no new streams */
  SPDY_ERR_INVALID_STATE = -516,          /* not allowed in this stream or session state */
  SPDY_ERR_INVALID_HEADER = -517,         /* submitted headers break the spec's rules */
  SPDY_ERR_FLOOD = -518,                  /* peer made us queue too many control frames (fatal) */
  SPDY_ERR_WINDOW_OVERFLOW = -519,        /* window update would exceed 2^31-1 */
  SPDY_ERR_TOO_MANY_STREAMS = -520,       /* our own queue of pending streams is full */
  SPDY_ERR_SETTINGS_TIMEOUT = -521        /* HTTP/2: our SETTINGS went unacknowledged (fatal) */
};

/* Returns a sentence describing any SPDY_ERR_* code (never NULL). */
SPDY_API const char *spdy_strerror(int error);

/* Returns 1 when the error ends the session (the caller should flush and close). */
SPDY_API int spdy_error_is_fatal(int error);

/* ---- Protocol constants ------------------------------------------------------------ */

/* The protocol a session speaks; chosen at creation. Values are stable. */
typedef enum spdy_protocol {
  SPDY_PROTOCOL_SPDY2 = 2,
  SPDY_PROTOCOL_SPDY3 = 3,
  SPDY_PROTOCOL_SPDY3_1 = 31
} spdy_protocol;

/* HTTP/2 (RFC 9113), "h2" in ALPN; also used for prior-knowledge cleartext (h2c). Not an
 * enumerator, so that switches over the SPDY versions keep compiling under -Wswitch; it
 * joins the enumeration with the protocol-neutral API. */
#define SPDY_PROTOCOL_H2 ((spdy_protocol)20)

/* Returns "spdy/2", "spdy/3", "spdy/3.1" or "h2" (the ALPN/NPN id), or NULL. */
SPDY_API const char *spdy_protocol_name(spdy_protocol protocol);

/* Parses an ALPN/NPN protocol id; returns 0 and sets *out, or SPDY_ERR_INVALID_ARGUMENT. */
SPDY_API int spdy_protocol_from_name(const char *name, size_t len, spdy_protocol *out);

typedef enum spdy_role { SPDY_ROLE_CLIENT = 0, SPDY_ROLE_SERVER = 1 } spdy_role;

/* Why a stream ended: RST_STREAM status codes (SPDY's values; HTTP/2 maps them to its error
 * codes, and those it adds follow SPDY's), a type apart from library errors. */
typedef enum spdy_rst_status {
  SPDY_RST_NONE = 0, /* in on_stream_close: the stream ended normally */
  SPDY_RST_PROTOCOL_ERROR = 1,
  SPDY_RST_INVALID_STREAM = 2,
  SPDY_RST_REFUSED_STREAM = 3,
  SPDY_RST_UNSUPPORTED_VERSION = 4,
  SPDY_RST_CANCEL = 5,
  SPDY_RST_INTERNAL_ERROR = 6,
  SPDY_RST_FLOW_CONTROL_ERROR = 7,
  SPDY_RST_STREAM_IN_USE = 8,         /* v3+ */
  SPDY_RST_STREAM_ALREADY_CLOSED = 9, /* v3+ */
  SPDY_RST_INVALID_CREDENTIALS = 10,  /* v3 only */
  SPDY_RST_FRAME_TOO_LARGE = 11,      /* v3+; HTTP/2 FRAME_SIZE_ERROR */
  SPDY_RST_SETTINGS_TIMEOUT = 12,     /* HTTP/2 only, from here on */
  SPDY_RST_COMPRESSION_ERROR = 13,
  SPDY_RST_CONNECT_ERROR = 14,
  SPDY_RST_ENHANCE_YOUR_CALM = 15,
  SPDY_RST_INADEQUATE_SECURITY = 16,
  SPDY_RST_HTTP_1_1_REQUIRED = 17
} spdy_rst_status;

/* Returns the spec's name of a RST_STREAM status ("CANCEL"), or "UNKNOWN". */
SPDY_API const char *spdy_rst_status_name(uint32_t status);

/* GOAWAY status codes (v3, v3.1; SPDY/2 GOAWAY carries none and reports OK). HTTP/2:
 * NO_ERROR, PROTOCOL_ERROR and INTERNAL_ERROR have these values; any other code received
 * is reported as PROTOCOL_ERROR, and spdy_session_goaway_reason tells which it was. */
typedef enum spdy_goaway_status {
  SPDY_GOAWAY_OK = 0,
  SPDY_GOAWAY_PROTOCOL_ERROR = 1,
  SPDY_GOAWAY_INTERNAL_ERROR = 2
} spdy_goaway_status;

/* SETTINGS ids. */
typedef enum spdy_settings_id {
  SPDY_SETTINGS_UPLOAD_BANDWIDTH = 1,
  SPDY_SETTINGS_DOWNLOAD_BANDWIDTH = 2,
  SPDY_SETTINGS_ROUND_TRIP_TIME = 3,
  SPDY_SETTINGS_MAX_CONCURRENT_STREAMS = 4,
  SPDY_SETTINGS_CURRENT_CWND = 5,
  SPDY_SETTINGS_DOWNLOAD_RETRANS_RATE = 6,
  SPDY_SETTINGS_INITIAL_WINDOW_SIZE = 7,
  SPDY_SETTINGS_CLIENT_CERTIFICATE_VECTOR_SIZE = 8,
  /* HTTP/2 only (RFC 9113 6.5.2, RFC 9218 2.1; a SPDY session refuses them with
   * SPDY_ERR_INVALID_ARGUMENT); an HTTP/2 session also knows MAX_CONCURRENT_STREAMS and
   * INITIAL_WINDOW_SIZE above, and refuses SPDY's others. */
  SPDY_SETTINGS_HEADER_TABLE_SIZE = 0x101,
  SPDY_SETTINGS_ENABLE_PUSH = 0x102,
  SPDY_SETTINGS_MAX_FRAME_SIZE = 0x103,
  SPDY_SETTINGS_MAX_HEADER_LIST_SIZE = 0x104,
  SPDY_SETTINGS_ENABLE_CONNECT_PROTOCOL = 0x105,
  SPDY_SETTINGS_NO_RFC7540_PRIORITIES = 0x106
} spdy_settings_id;
#define SPDY_SETTINGS_MAX_ID 8

/* Flags of one SETTINGS entry, and of the SETTINGS frame. */
#define SPDY_SETTINGS_FLAG_PERSIST_VALUE 0x01
#define SPDY_SETTINGS_FLAG_PERSISTED 0x02
#define SPDY_SETTINGS_FLAG_CLEAR_SETTINGS 0x01

/* Control frame types, as on the wire. DATA is reported as SPDY_FRAME_DATA. */
typedef enum spdy_frame_type {
  SPDY_FRAME_DATA = 0,
  SPDY_FRAME_SYN_STREAM = 1,
  SPDY_FRAME_SYN_REPLY = 2,
  SPDY_FRAME_RST_STREAM = 3,
  SPDY_FRAME_SETTINGS = 4,
  SPDY_FRAME_NOOP = 5,
  SPDY_FRAME_PING = 6,
  SPDY_FRAME_GOAWAY = 7,
  SPDY_FRAME_HEADERS = 8,
  SPDY_FRAME_WINDOW_UPDATE = 9,
  SPDY_FRAME_CREDENTIAL = 10
} spdy_frame_type;

/* Returns "SYN_STREAM" etc., or "UNKNOWN". */
SPDY_API const char *spdy_frame_type_name(int type);
/* The same for a protocol's own frame types: HTTP/2's "HEADERS", "PUSH_PROMISE" ... */
SPDY_API const char *spdy_protocol_frame_type_name(spdy_protocol protocol, int type);

/* Looks at the first bytes of a plaintext connection. Returns 2 or 3 for a SPDY control
 * frame of that version (3 also means 3.1), 0 when more bytes are needed (fewer than 4),
 * or -1 when the bytes are not SPDY (for example an HTTP/1.1 request line). */
SPDY_API int spdy_detect_version(const uint8_t *bytes, size_t len);

/* Looks at the first bytes of a plaintext connection for HTTP/2's client preface: 1 when
 * they are it, 0 when more bytes are needed to tell (they match so far), -1 when not. */
SPDY_API int spdy_detect_h2_preface(const uint8_t *bytes, size_t len);

/* One header field. Submitted headers are copied; received ones are valid during the
 * callback only. Names are lower case. */
typedef struct spdy_header {
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
} spdy_header;

/* One SETTINGS entry, for spdy_submit_settings. */
typedef struct spdy_setting {
  uint32_t id;   /* spdy_settings_id */
  uint8_t flags; /* SPDY_SETTINGS_FLAG_* */
  uint32_t value;
} spdy_setting;

typedef struct spdy_session spdy_session;
typedef struct spdy_options spdy_options;
typedef struct spdy_callbacks spdy_callbacks;

/* ---- Options ----------------------------------------------------------------------- */

/* Creates options holding the defaults below; the caller frees them with
 * spdy_options_del. A session copies what it needs: options may be freed after
 * spdy_session_new. Returns 0 or SPDY_ERR_NOMEM. */
SPDY_API int spdy_options_new(spdy_options **out);
SPDY_API void spdy_options_del(spdy_options *options);

/* Allocator hook: every allocation of the session, zlib's included, goes through it.
 * realloc_fn may be NULL (the library then uses malloc_fn + copy + free_fn). */
typedef void *(*spdy_malloc_fn)(size_t size, void *user);
typedef void *(*spdy_realloc_fn)(void *ptr, size_t size, void *user);
typedef void (*spdy_free_fn)(void *ptr, void *user);
SPDY_API void spdy_options_set_allocator(spdy_options *options, spdy_malloc_fn malloc_fn,
                                         spdy_realloc_fn realloc_fn, spdy_free_fn free_fn,
                                         void *user);

/* Largest control frame payload accepted from the peer (default 65,536 + 1,024 bytes).
 * A larger one ends the session with GOAWAY PROTOCOL_ERROR. */
SPDY_API void spdy_options_set_max_recv_control_frame(spdy_options *options, uint32_t bytes);

/* Cap on one inflated header block (default 65,536). Exceeding it is a session error. */
SPDY_API void spdy_options_set_max_header_block(spdy_options *options, uint32_t bytes);

/* Payload size of the DATA frames we send (default 16,384; 1 .. 16,777,215). Smaller
 * frames let a high-priority stream overtake sooner. */
SPDY_API void spdy_options_set_data_frame_size(spdy_options *options, uint32_t bytes);

/* Our receive window per stream (v3, v3.1, HTTP/2; default 65,536, or HTTP/2's 65,535). A
 * non-default value is announced in the first SETTINGS frame as INITIAL_WINDOW_SIZE (for
 * HTTP/2 it applies once the peer acknowledged it). */
SPDY_API void spdy_options_set_stream_window(spdy_options *options, uint32_t bytes);

/* Our receive window for the whole session (v3.1, HTTP/2; default 65,536, or HTTP/2's
 * 65,535). A larger value is announced with a WINDOW_UPDATE on stream 0 at session start. */
SPDY_API void spdy_options_set_session_window(spdy_options *options, uint32_t bytes);

/* 1: a SPDY/3.1 session starts undecided between SPDY/3 and SPDY/3.1 (default 0). For
 * plaintext servers: without TLS there is no negotiation, and both versions say 3 on the
 * wire, but a SPDY/3 peer has no session window and stalls a sender that waits for one.
 * Until the peer shows which it speaks, the session sends within both versions' rules
 * (the 3.1 session window limits DATA; no WINDOW_UPDATE on stream 0 goes out) and
 * settles on what the peer does:
 * - a WINDOW_UPDATE on stream 0 (only 3.1 has one)                         -> SPDY/3.1;
 * - DATA past the 3.1 session window we announced (a 3.1 peer cannot)     -> SPDY/3;
 * - our session window used up, and the peer's stream WINDOW_UPDATEs returned
 *   half of it without one on stream 0 (a 3.1 peer sends that by then)    -> SPDY/3.
 * A peer that announced large stream windows may give none of these signals before our
 * session window runs out; the application can then settle the session itself
 * (spdy_session_settle_protocol, after a timeout of its choosing). Ignored for other
 * protocols. spdy_session_protocol reports SPDY3_1 until settled. */
SPDY_API void spdy_options_set_v3_autodetect(spdy_options *options, int enable);

/* Streams the peer may have open towards us (default 100). Announced in the first
 * SETTINGS frame; SYN_STREAMs beyond it are refused with REFUSED_STREAM. */
SPDY_API void spdy_options_set_max_concurrent_streams(spdy_options *options, uint32_t n);

/* 1: the application credits received DATA itself with spdy_session_consume. 0 (the
 * default): credited as soon as on_data_chunk returns. */
SPDY_API void spdy_options_set_manual_flow_control(spdy_options *options, int manual);

/* Control frames we may owe the peer before it is treated as a flood (default 1,000):
 * past this, the session ends with GOAWAY and SPDY_ERR_FLOOD. */
SPDY_API void spdy_options_set_max_queued_control_frames(spdy_options *options, uint32_t n);

/* Streams submitted beyond the peer's MAX_CONCURRENT_STREAMS wait in a queue of this
 * length (default 65,536); submits past it fail with SPDY_ERR_TOO_MANY_STREAMS. */
SPDY_API void spdy_options_set_max_pending_streams(spdy_options *options, uint32_t n);

/* zlib parameters for our header compression (defaults: level 6, windowBits 13,
 * memLevel 4 — chosen by bench/engine on the HAR corpus). Returns SPDY_ERR_INVALID_ARGUMENT
 * when out of zlib's ranges (level 0-9, windowBits 9-15, memLevel 1-9). */
SPDY_API int spdy_options_set_deflate_params(spdy_options *options, int level, int window_bits,
                                             int mem_level);

/* The zlib parameters options would use (options NULL: the defaults). */
SPDY_API void spdy_options_get_deflate_params(const spdy_options *options, int *level,
                                              int *window_bits, int *mem_level);

/* Only the zlib level of our header compression (0-9), windowBits and memLevel kept: 1 is
 * faster and compresses a little less, 0 stores blocks uncompressed (the dictionary still
 * names the stream). Returns SPDY_ERR_INVALID_ARGUMENT outside 0-9. */
SPDY_API int spdy_options_set_deflate_level(spdy_options *options, int level);

/* 0: do not send an initial SETTINGS frame even when options differ from the defaults. */
SPDY_API void spdy_options_set_send_initial_settings(spdy_options *options, int send);

/* 0: on_frame gets an empty summary instead of a formatted one (default 1). Formatting
 * costs a snprintf per frame; a server that only counts frames turns it off. */
SPDY_API void spdy_options_set_frame_summaries(spdy_options *options, int on);

/* ---- HTTP/2 options (ignored by SPDY sessions) ---- */

/* SETTINGS_MAX_FRAME_SIZE we announce: the largest frame the peer may send us once it
 * acknowledged it (default 16,384; 16,384 .. 16,777,215). */
SPDY_API void spdy_options_set_max_frame_size(spdy_options *options, uint32_t bytes);
/* SETTINGS_HEADER_TABLE_SIZE we announce: the HPACK table the peer may use towards us
 * (default 4,096; at most 1 MiB). */
SPDY_API void spdy_options_set_header_table_size(spdy_options *options, uint32_t bytes);
/* Client: 0 refuses server push (SETTINGS_ENABLE_PUSH = 0: a PUSH_PROMISE is then a
 * connection error). Default 1. */
SPDY_API void spdy_options_set_push(spdy_options *options, int enable);
/* CONTINUATION frames one field block may take (default 32); more ends the session with
 * GOAWAY ENHANCE_YOUR_CALM and SPDY_ERR_FLOOD. The block's assembled size is capped by
 * spdy_options_set_max_header_block. */
SPDY_API void spdy_options_set_max_continuations(spdy_options *options, uint32_t n);
/* How long our SETTINGS may go unacknowledged, on the clock of spdy_session_set_now
 * (default 10 s; 0: forever). Past it the session ends with GOAWAY SETTINGS_TIMEOUT and
 * SPDY_ERR_SETTINGS_TIMEOUT. */
SPDY_API void spdy_options_set_settings_timeout(spdy_options *options, int64_t timeout_ns);
/* Rapid reset defence: streams the peer may reset (or make us reset) in a burst, refilled
 * at per_second on the clock of spdy_session_set_now (default 1,000 and 100). Past it the
 * session ends with GOAWAY ENHANCE_YOUR_CALM and SPDY_ERR_FLOOD. */
SPDY_API void spdy_options_set_reset_budget(spdy_options *options, uint32_t burst,
                                            uint32_t per_second);
/* Frames that carry nothing (DATA and field-block fragments that are empty and end
 * nothing, PRIORITY, WINDOW_UPDATE for closed streams, unknown types) the peer may send in
 * a burst, refilled at per_second (default 1,000 and 100); past it as above. (Frames that
 * need an answer — SETTINGS, PING, those answered with RST_STREAM — are capped by
 * spdy_options_set_max_queued_control_frames.) */
SPDY_API void spdy_options_set_empty_frame_budget(spdy_options *options, uint32_t burst,
                                                  uint32_t per_second);

/* ---- Callbacks --------------------------------------------------------------------- */

/* What a header block means, in on_begin_headers. */
typedef enum spdy_headers_kind {
  SPDY_HEADERS_REQUEST = 1,      /* server: a SYN_STREAM (HTTP/2: HEADERS) opened a stream */
  SPDY_HEADERS_RESPONSE = 2,     /* client: SYN_REPLY; HTTP/2: the final response, a
                                    pushed stream's included */
  SPDY_HEADERS_PUSH = 3,         /* client: a pushed stream's SYN_STREAM (request headers;
                                    for SPDY/2 its response headers too); HTTP/2: the
                                    PUSH_PROMISE's request */
  SPDY_HEADERS_EXTRA = 4,        /* a HEADERS frame: a SPDY push's response headers,
                                    trailers */
  SPDY_HEADERS_INFORMATIONAL = 5 /* client, HTTP/2: a 1xx response (103 Early Hints ...)
                                    before the final one */
} spdy_headers_kind;

/* Every callback returns 0, or a negative value to fail the session
 * (SPDY_ERR_CALLBACK_FAILURE), except where noted. user is the session's user data. */

/* A header block starts on stream_id. For SPDY_HEADERS_PUSH, associated_id is the
 * stream the push belongs to (0 otherwise). */
typedef int (*spdy_on_begin_headers_fn)(spdy_session *session, int32_t stream_id,
                                        spdy_headers_kind kind, int32_t associated_id, void *user);
/* One header field. Values the peer joined with NUL are delivered one call per value. */
typedef int (*spdy_on_header_fn)(spdy_session *session, int32_t stream_id,
                                 const spdy_header *header, void *user);
/* The header block ended; end_stream is 1 when the peer also half-closed. */
typedef int (*spdy_on_headers_end_fn)(spdy_session *session, int32_t stream_id, int end_stream,
                                      void *user);
/* Body bytes. May return SPDY_ERR_PAUSE: spdy_session_recv then returns early with the
 * bytes consumed so far (this chunk included). */
typedef int (*spdy_on_data_chunk_fn)(spdy_session *session, int32_t stream_id, const uint8_t *data,
                                     size_t len, void *user);
/* The peer half-closed the stream with a DATA frame's FIN (after the last chunk). */
typedef int (*spdy_on_data_end_fn)(spdy_session *session, int32_t stream_id, void *user);
/* The stream is gone: status SPDY_RST_NONE when both sides finished, otherwise the
 * RST_STREAM status sent or received. spdy_session_get_stream_user_data still returns
 * the stream's user data during this call (and NULL afterwards): free it here. */
typedef int (*spdy_on_stream_close_fn)(spdy_session *session, int32_t stream_id, uint32_t status,
                                       void *user);
/* Our PING came back; rtt_ns uses the clock given to spdy_session_set_now. */
typedef int (*spdy_on_ping_ack_fn)(spdy_session *session, uint32_t ping_id, int64_t rtt_ns,
                                   void *user);
/* The peer sent GOAWAY: streams above last_good_id were not processed and are closed
 * with REFUSED_STREAM; retry them elsewhere. status: spdy_goaway_status. */
typedef int (*spdy_on_goaway_fn)(spdy_session *session, int32_t last_good_id, uint32_t status,
                                 void *user);
/* One SETTINGS entry from the peer (after the library applied it). */
typedef int (*spdy_on_setting_fn)(spdy_session *session, uint32_t id, uint8_t flags, uint32_t value,
                                  void *user);
/* The peer sent WINDOW_UPDATE: delta more bytes may be sent on stream_id (0: the v3.1
 * session window). Called after the window was updated, for frames that were accepted
 * (a delta of 0 included) — servers use it to meter abusive updates. */
typedef int (*spdy_on_window_update_fn)(spdy_session *session, int32_t stream_id, uint32_t delta,
                                        void *user);
/* Frame trace: every frame received (sent = 0) or sent (sent = 1). summary is a short
 * readable description of the frame-specific fields ("status=CANCEL", "delta=4096"), or
 * "" with spdy_options_set_frame_summaries(options, 0). Return value ignored. */
typedef void (*spdy_on_frame_fn)(spdy_session *session, int sent, spdy_frame_type type,
                                 uint8_t flags, int32_t stream_id, uint32_t length,
                                 const char *summary, void *user);
/* A queued frame was dropped when it came to be serialised, because what it belonged to
 * is gone: its stream was closed or reset while the frame waited, or a GOAWAY (sent or
 * received) forbids opening the stream. reason is a SPDY_ERR_* code
 * (SPDY_ERR_STREAM_CLOSED, SPDY_ERR_SESSION_CLOSING). Return value ignored. */
typedef void (*spdy_on_frame_not_sent_fn)(spdy_session *session, spdy_frame_type type,
                                          int32_t stream_id, int reason, void *user);
/* Zero-copy DATA: a data source set SPDY_DATA_FLAG_NO_COPY. The application must write
 * the frame header (8 bytes for SPDY, 9 for HTTP/2: spdy_session_data_header_length) and
 * then `length` body bytes from its own source, in that order, before any further output
 * of spdy_session_send. */
typedef int (*spdy_on_send_data_fn)(spdy_session *session, int32_t stream_id,
                                    const uint8_t *frame_header, size_t length, void *source,
                                    void *user);

SPDY_API int spdy_callbacks_new(spdy_callbacks **out);
SPDY_API void spdy_callbacks_del(spdy_callbacks *callbacks);
SPDY_API void spdy_callbacks_set_on_begin_headers(spdy_callbacks *c, spdy_on_begin_headers_fn fn);
SPDY_API void spdy_callbacks_set_on_header(spdy_callbacks *c, spdy_on_header_fn fn);
SPDY_API void spdy_callbacks_set_on_headers_end(spdy_callbacks *c, spdy_on_headers_end_fn fn);
SPDY_API void spdy_callbacks_set_on_data_chunk(spdy_callbacks *c, spdy_on_data_chunk_fn fn);
SPDY_API void spdy_callbacks_set_on_data_end(spdy_callbacks *c, spdy_on_data_end_fn fn);
SPDY_API void spdy_callbacks_set_on_stream_close(spdy_callbacks *c, spdy_on_stream_close_fn fn);
SPDY_API void spdy_callbacks_set_on_ping_ack(spdy_callbacks *c, spdy_on_ping_ack_fn fn);
SPDY_API void spdy_callbacks_set_on_goaway(spdy_callbacks *c, spdy_on_goaway_fn fn);
SPDY_API void spdy_callbacks_set_on_setting(spdy_callbacks *c, spdy_on_setting_fn fn);
SPDY_API void spdy_callbacks_set_on_frame(spdy_callbacks *c, spdy_on_frame_fn fn);
SPDY_API void spdy_callbacks_set_on_send_data(spdy_callbacks *c, spdy_on_send_data_fn fn);
SPDY_API void spdy_callbacks_set_on_window_update(spdy_callbacks *c, spdy_on_window_update_fn fn);
SPDY_API void spdy_callbacks_set_on_frame_not_sent(spdy_callbacks *c, spdy_on_frame_not_sent_fn fn);

/* ---- Bodies by pull ---------------------------------------------------------------- */

#define SPDY_DATA_FLAG_EOF 0x01     /* this read ends the body (FIN goes with it) */
#define SPDY_DATA_FLAG_NO_COPY 0x02 /* the application writes the payload (on_send_data) */
/* With EOF: the body ends but the stream does not; trailers follow with
 * spdy_submit_headers(..., end_stream = 1), from this very call of the read callback or
 * later. (Trailers submitted from the callback also end the body: that call must set EOF.) */
#define SPDY_DATA_FLAG_NO_END_STREAM 0x04

/* Called when the stream may send: copy up to `len` bytes into buf and return the count
 * (set SPDY_DATA_FLAG_EOF in *flags on the last read; 0 bytes with EOF is fine). With
 * SPDY_DATA_FLAG_NO_COPY, write nothing, return the count the application will write in
 * on_send_data. Return SPDY_ERR_DEFERRED when nothing is ready (call
 * spdy_session_resume_data later), or any other negative value to reset the stream with
 * INTERNAL_ERROR. */
typedef int64_t (*spdy_data_read_fn)(spdy_session *session, int32_t stream_id, uint8_t *buf,
                                     size_t len, uint32_t *flags, void *source, void *user);

/* ---- Header compression on its own ------------------------------------------------ */

/* One direction's header compression without a session, for measuring what header frames
 * cost (the lab's header figures): header lists go through the same validation, layout
 * and compression context a session's output does, in the order given.
 * spdy_header_compressor_new: protocol picks the version's block format and dictionary;
 * options (may be NULL) gives the allocator and the deflate parameters. The caller owns
 * the compressor and deletes it with spdy_header_compressor_del. */
typedef struct spdy_header_compressor spdy_header_compressor;
SPDY_API int spdy_header_compressor_new(spdy_header_compressor **out, spdy_protocol protocol,
                                        const spdy_options *options);
SPDY_API void spdy_header_compressor_del(spdy_header_compressor *compressor);
/* Compresses the list as the next block of this context and returns the bytes of the
 * frame a session would send for it: frame header, fixed fields (SYN_STREAM's for a
 * request, SYN_REPLY's when response is 1) and the block; for HTTP/2, HEADERS and the
 * CONTINUATION frames a 16,384-octet frame size needs, the block HPACK-encoded (4,096-octet
 * table). SPDY_ERR_INVALID_HEADER, with the context untouched, for a list the protocol
 * cannot carry (HTTP/2: a message its rules refuse). */
SPDY_API int64_t spdy_header_compressor_frame_size(spdy_header_compressor *compressor, int response,
                                                   const spdy_header *headers, size_t n);

/* ---- Sessions ---------------------------------------------------------------------- */

/* Creates a session. callbacks and options are copied (options may be NULL for the
 * defaults). user is passed to every callback. The caller frees it with spdy_session_del.
 * Returns 0, SPDY_ERR_INVALID_ARGUMENT or SPDY_ERR_NOMEM. */
SPDY_API int spdy_session_new(spdy_session **out, spdy_protocol protocol, spdy_role role,
                              const spdy_callbacks *callbacks, const spdy_options *options,
                              void *user);
/* Frees the session, its streams and its zlib contexts. No callbacks are called. */
SPDY_API void spdy_session_del(spdy_session *session);

/* Feeds bytes read from the peer. Returns the number consumed (all of them unless a
 * data callback paused), or a negative error: fatal errors leave a GOAWAY queued when the
 * protocol calls for one — send it, then close. */
SPDY_API int64_t spdy_session_recv(spdy_session *session, const uint8_t *data, size_t len);

/* Copies up to `cap` bytes of output into buf. Returns the count (0: nothing to send
 * now) or a negative fatal error. */
SPDY_API int64_t spdy_session_send(spdy_session *session, uint8_t *buf, size_t cap);

/* Zero-copy output: points *out at up to `max` pending bytes inside the library and
 * returns their count (0: nothing to send). The bytes stay valid until the next call
 * into the session; mark what was written with spdy_session_consume_output. */
SPDY_API int64_t spdy_session_peek_output(spdy_session *session, const uint8_t **out, size_t max);
SPDY_API void spdy_session_consume_output(spdy_session *session, size_t n);

/* 1 while the session still expects input / has or may produce output. When both are 0
 * the session is finished and the connection can be closed. */
SPDY_API int spdy_session_want_read(const spdy_session *session);
SPDY_API int spdy_session_want_write(const spdy_session *session);

/* Sets the session's monotonic clock (nanoseconds): PING round trips, the HTTP/2 SETTINGS
 * timeout and the budgets of the defences. Returns 0, or SPDY_ERR_SETTINGS_TIMEOUT when
 * our HTTP/2 SETTINGS went unacknowledged too long: the session then ends (GOAWAY queued;
 * send it and close). */
SPDY_API int spdy_session_set_now(spdy_session *session, int64_t now_ns);

SPDY_API spdy_protocol spdy_session_protocol(const spdy_session *session);
SPDY_API spdy_role spdy_session_role(const spdy_session *session);
/* Bytes of a DATA frame's header: 8 for SPDY, 9 for HTTP/2. */
SPDY_API size_t spdy_session_data_header_length(const spdy_session *session);
/* The peer's last GOAWAY: its reason (spdy_rst_status; SPDY_RST_NONE for NO_ERROR) and,
 * for HTTP/2, its debug data (at most 128 octets kept; valid until the next call into the
 * session). Returns -1 if no GOAWAY came. */
SPDY_API int64_t spdy_session_goaway_reason(const spdy_session *session, const uint8_t **debug,
                                            size_t *debug_len);
/* Input progress, for a server that times out peers trickling a frame (slowloris):
 * frames whose header has been read so far, DATA payload bytes read (delivered or
 * discarded), and 1 while part of a frame has been read but not all of it. */
SPDY_API uint64_t spdy_session_recv_frames(const spdy_session *session);
SPDY_API uint64_t spdy_session_recv_data_bytes(const spdy_session *session);
SPDY_API int spdy_session_recv_in_frame(const spdy_session *session);
/* 0 once a session made with spdy_options_set_v3_autodetect has settled between SPDY/3
 * and /3.1 (and always for other sessions); while undecided:
 * 2 — our DATA waits only for the 3.1 session window: if no WINDOW_UPDATE comes for a
 *     while, the peer is SPDY/3 with large stream windows (settle as SPDY3);
 * 3 — the peer used the whole 64 KiB session window with a stream still open: if no more
 *     DATA comes for a while, it waits for our session WINDOW_UPDATE (settle as SPDY3_1);
 * 1 — otherwise. An application timer (a second is generous) settles on 2 and 3. */
SPDY_API int spdy_session_protocol_undecided(const spdy_session *session);
/* Settles an undecided session as SPDY_PROTOCOL_SPDY3 or SPDY_PROTOCOL_SPDY3_1.
 * SPDY_ERR_INVALID_STATE if it is not undecided, SPDY_ERR_INVALID_ARGUMENT for another
 * protocol. */
SPDY_API int spdy_session_settle_protocol(spdy_session *session, spdy_protocol protocol);
SPDY_API void *spdy_session_user_data(const spdy_session *session);

/* Per-stream user data. set returns SPDY_ERR_STREAM_NOT_FOUND for unknown streams. */
SPDY_API int spdy_session_set_stream_user_data(spdy_session *session, int32_t stream_id,
                                               void *data);
SPDY_API void *spdy_session_get_stream_user_data(const spdy_session *session, int32_t stream_id);

/* The last value the peer sent for a SETTINGS id, or -1 if it never sent one. */
SPDY_API int64_t spdy_session_remote_setting(const spdy_session *session, uint32_t id);

/* Send windows (what we may still send) and receive windows (what the peer may still
 * send). stream_id 0 means the session window (v3.1). Negative when unknown. */
SPDY_API int64_t spdy_session_send_window(const spdy_session *session, int32_t stream_id);
SPDY_API int64_t spdy_session_recv_window(const spdy_session *session, int32_t stream_id);

/* Open streams (both directions) and streams waiting for a concurrency slot. */
SPDY_API uint32_t spdy_session_open_streams(const spdy_session *session);
SPDY_API uint32_t spdy_session_pending_streams(const spdy_session *session);

/* Heap bytes the session holds right now (through the allocator hook, zlib included). */
SPDY_API size_t spdy_session_memory(const spdy_session *session);

/* Wakes a stream whose data source returned SPDY_ERR_DEFERRED. */
SPDY_API int spdy_session_resume_data(spdy_session *session, int32_t stream_id);

/* Manual flow control: the application has processed n bytes of stream_id's DATA.
 * Credits the stream and the session window and sends WINDOW_UPDATE when due. */
SPDY_API int spdy_session_consume(spdy_session *session, int32_t stream_id, size_t n);

/* ---- Submitting frames ------------------------------------------------------------- */

/* Client: opens a stream with a request. headers must include :method, :path, :version,
 * :host and :scheme (HTTP/2: :method, :scheme, :authority, :path; CONNECT is refused).
 * read_fn == NULL means no body (FIN on the SYN_STREAM). Returns the new stream id (> 0) or
 * a negative error. The stream may wait in a queue while the peer's
 * MAX_CONCURRENT_STREAMS is reached; its id is assigned now. HTTP/2: an urgency other
 * than 3 goes as a priority field ("u=N") unless headers carry one. */
SPDY_API int32_t spdy_submit_request(spdy_session *session, int urgency, const spdy_header *headers,
                                     size_t n_headers, spdy_data_read_fn read_fn, void *source,
                                     void *stream_user);

/* Server: answers stream_id. headers must include :status and :version (HTTP/2: :status,
 * three digits, not 1xx). read_fn == NULL means no body. */
SPDY_API int spdy_submit_response(spdy_session *session, int32_t stream_id,
                                  const spdy_header *headers, size_t n_headers,
                                  spdy_data_read_fn read_fn, void *source);

/* Server: pushes a resource associated with the open stream associated_id.
 * request_headers carry :scheme, :host and :path; response_headers carry :status and
 * :version. HTTP/2: :scheme, :authority, :path and :method (GET or HEAD; GET when absent)
 * go in a PUSH_PROMISE at once, :status in the pushed stream's HEADERS when the client's
 * MAX_CONCURRENT_STREAMS allows; SPDY_ERR_INVALID_STATE if the client disabled push.
 * Returns the new (even) stream id or a negative error. */
SPDY_API int32_t spdy_submit_push(spdy_session *session, int32_t associated_id, int urgency,
                                  const spdy_header *request_headers, size_t n_request,
                                  const spdy_header *response_headers, size_t n_response,
                                  spdy_data_read_fn read_fn, void *source, void *stream_user);

/* Sends a HEADERS frame on an open stream (trailers when end_stream is 1).
 * SPDY_ERR_INVALID_STATE while the stream still waits for a concurrency slot (its
 * SYN_STREAM has not gone out), and, with end_stream, while its body is being sent (a
 * body followed by trailers ends with SPDY_DATA_FLAG_NO_END_STREAM). HTTP/2 server: before
 * the response, headers with a 1xx :status (not 101) send an informational response,
 * 103 Early Hints for example. */
SPDY_API int spdy_submit_headers(spdy_session *session, int32_t stream_id,
                                 const spdy_header *headers, size_t n_headers, int end_stream);

/* Resets a stream with a RST_STREAM status. */
SPDY_API int spdy_submit_rst(spdy_session *session, int32_t stream_id, uint32_t status);

/* Sends a PING; its id is stored in *id_out when not NULL. */
SPDY_API int spdy_submit_ping(spdy_session *session, uint32_t *id_out);

/* Sends GOAWAY with our last-good-stream-id; no new streams start afterwards. Streams in
 * flight finish; the session ends when they have. HTTP/2 server with SPDY_GOAWAY_OK: a
 * graceful shutdown in two steps — GOAWAY with 2^31-1 and a PING, then, when the PING comes
 * back, GOAWAY with the last stream really accepted (streams opened meanwhile are served). */
SPDY_API int spdy_submit_goaway(spdy_session *session, uint32_t status);

/* Sends a SETTINGS frame. Our own values for MAX_CONCURRENT_STREAMS and
 * INITIAL_WINDOW_SIZE take effect at once (HTTP/2: all of them once the peer acknowledged
 * the frame; frame_flags unused; ids are the HTTP/2 ones of spdy_settings_id).
 * SPDY_ERR_WINDOW_OVERFLOW (nothing sent) when raising INITIAL_WINDOW_SIZE would take an open
 * stream's window past 2^31-1: the peer adjusts its windows by the difference and would have to
 * reset that stream. SPDY_ERR_INVALID_ARGUMENT when an id appears twice (the peer would take the
 * first value, this session the last). */
SPDY_API int spdy_submit_settings(spdy_session *session, uint8_t frame_flags,
                                  const spdy_setting *settings, size_t n_settings);

/* Opens our receive window by delta (stream_id 0: the session window, v3.1 only).
 * SPDY_ERR_INVALID_STATE for a stream still waiting for a concurrency slot. */
SPDY_API int spdy_submit_window_update(spdy_session *session, int32_t stream_id, uint32_t delta);

#ifdef __cplusplus
}
#endif

#endif /* SPDY_SPDY_H */
