/* speedy.h — the public API of libspeedy, a sans-I/O SPDY/2, /3, /3.1 and HTTP/2 protocol engine.
 *
 * The engine never touches a socket or a clock. The application feeds it the bytes it
 * read (speedy_session_recv), asks it for the bytes to write (speedy_session_send), and
 * hears about streams through callbacks. Everything a peer can send is validated here;
 * a peer's mistake becomes the protocol's answer (RST_STREAM or GOAWAY), never a crash.
 *
 * Conventions
 * - Functions return 0 or a negative SPEEDY_ERR_* code, or a non-negative count (int64_t)
 *   or stream id (int32_t) on success. Error codes are stable and never renumbered.
 * - Objects are opaque and come in *_new / *_del pairs; the caller owns what *_new gives.
 * - Header names and values handed to callbacks point into the library's memory and are
 *   valid only during the callback. Headers passed to speedy_submit_* are copied.
 * - Time comes only from speedy_session_set_now(); the library reads no clock.
 *
 * Calling from inside callbacks: speedy_submit_*, speedy_session_resume_data,
 * speedy_session_consume and the stream user-data functions may be called from any
 * callback. speedy_session_recv, speedy_session_send and speedy_session_del must not.
 *
 * Protocols share one API and one set of field names, HTTP/2's: ":method", ":scheme",
 * ":authority", ":path" in requests, ":status" (three digits) in responses. A SPDY session
 * writes SPDY's names on the wire (":host", ":version: HTTP/1.1", ":status: 200 OK"; for
 * SPDY/2 "method", "url", "version", "host", "scheme", "status") and hands them back in
 * HTTP/2's (SPDY/3's names are still accepted when submitted).
 * Priority is an urgency 0 (most urgent) to 7; SPDY/2's 0-3 maps onto it (urgency / 2 on the
 * wire, wire * 2 on receipt), HTTP/2 carries it as RFC 9218's priority field.
 *
 * Reasons, settings and frame types: the speedy_rst_status reasons and speedy_settings_id ids
 * are the same names for every protocol. For SPDY they are the wire values; for HTTP/2 the
 * library maps them to RFC 9113's error codes and settings (the HTTP/2-only ones are at the
 * end of each list). Frame types in on_frame and on_frame_not_sent are the session
 * protocol's own (speedy_protocol_frame_type_name names them).
 */
#ifndef SPEEDY_SPEEDY_H
#define SPEEDY_SPEEDY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SPEEDY_BUILDING_LIBRARY)
#define SPEEDY_API __attribute__((visibility("default")))
#else
#define SPEEDY_API
#endif

/* Library version: compile-time macros and the runtime string. */
#define SPEEDY_VERSION_MAJOR 0
#define SPEEDY_VERSION_MINOR 1
#define SPEEDY_VERSION_PATCH 0
#define SPEEDY_VERSION_STRING "0.1.0"
#define SPEEDY_VERSION_NUM                                                                         \
  ((SPEEDY_VERSION_MAJOR << 16) | (SPEEDY_VERSION_MINOR << 8) | SPEEDY_VERSION_PATCH)

/* Returns the runtime library version, e.g. "0.1.0". */
SPEEDY_API const char *speedy_version(void);

/* ---- Errors ------------------------------------------------------------------------ */

/* Library error codes. Negative; never renumbered. Fatal ones end the session. */
enum speedy_error {
  SPEEDY_OK = 0,
  SPEEDY_ERR_INVALID_ARGUMENT = -501,       /* a caller passed something impossible */
  SPEEDY_ERR_NOMEM = -502,                  /* the allocator said no (fatal) */
  SPEEDY_ERR_DEFERRED = -503,               /* data source: nothing ready yet, resume later */
  SPEEDY_ERR_PAUSE = -504,                  /* data callback: stop recv, return consumed bytes */
  SPEEDY_ERR_CALLBACK_FAILURE = -505,       /* a callback failed (fatal) */
  SPEEDY_ERR_PROTOCOL = -506,               /* the peer broke the protocol; GOAWAY queued (fatal) */
  SPEEDY_ERR_COMPRESSION = -507,            /* a header block did not inflate (fatal) */
  SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE = -508, /* inflated header block over the cap (fatal) */
  SPEEDY_ERR_FRAME_TOO_LARGE = -509,     /* a control frame over the configured maximum (fatal) */
  SPEEDY_ERR_UNSUPPORTED_VERSION = -510, /* control frame of another SPDY version (fatal) */
  SPEEDY_ERR_FLOW_CONTROL = -511,        /* session window violated (fatal) */
  SPEEDY_ERR_STREAM_NOT_FOUND = -512,    /* no open stream with that id */
  SPEEDY_ERR_STREAM_CLOSED = -513,       /* the stream can no longer send */
  SPEEDY_ERR_STREAM_ID_EXHAUSTED = -514, /* no stream ids left on this session */
  SPEEDY_ERR_SESSION_CLOSING = -515,     /* GOAWAY sent or received: no new streams */
  SPEEDY_ERR_INVALID_STATE = -516,       /* not allowed in this stream or session state */
  SPEEDY_ERR_INVALID_HEADER = -517,      /* submitted headers break the spec's rules */
  SPEEDY_ERR_FLOOD = -518,               /* peer made us queue too many control frames (fatal) */
  SPEEDY_ERR_WINDOW_OVERFLOW = -519,     /* window update would exceed 2^31-1 */
  SPEEDY_ERR_TOO_MANY_STREAMS = -520,    /* our own queue of pending streams is full */
  SPEEDY_ERR_SETTINGS_TIMEOUT = -521     /* HTTP/2: our SETTINGS went unacknowledged (fatal) */
};

/* Returns a sentence describing any SPEEDY_ERR_* code (never NULL). */
SPEEDY_API const char *speedy_strerror(int error);

/* Returns 1 when the error ends the session (the caller should flush and close). */
SPEEDY_API int speedy_error_is_fatal(int error);

/* ---- Protocol constants ------------------------------------------------------------ */

/* The protocol a session speaks; chosen at creation. Values are stable. */
typedef enum speedy_protocol {
  SPEEDY_PROTOCOL_SPDY2 = 2,
  SPEEDY_PROTOCOL_SPDY3 = 3,
  SPEEDY_PROTOCOL_H2 =
      20, /* HTTP/2 (RFC 9113): "h2" in ALPN, also cleartext with prior knowledge */
  SPEEDY_PROTOCOL_SPDY3_1 = 31
} speedy_protocol;

/* Returns "spdy/2", "spdy/3", "spdy/3.1" or "h2" (the ALPN/NPN id), or NULL. */
SPEEDY_API const char *speedy_protocol_name(speedy_protocol protocol);

/* Parses an ALPN/NPN protocol id; returns 0 and sets *out, or SPEEDY_ERR_INVALID_ARGUMENT. */
SPEEDY_API int speedy_protocol_from_name(const char *name, size_t len, speedy_protocol *out);

typedef enum speedy_role { SPEEDY_ROLE_CLIENT = 0, SPEEDY_ROLE_SERVER = 1 } speedy_role;

/* Why a stream ended: RST_STREAM status codes (SPDY's values; HTTP/2 maps them to its error
 * codes, and those it adds follow SPDY's), a type apart from library errors. */
typedef enum speedy_rst_status {
  SPEEDY_RST_NONE = 0, /* in on_stream_close: the stream ended normally */
  SPEEDY_RST_PROTOCOL_ERROR = 1,
  SPEEDY_RST_INVALID_STREAM = 2,
  SPEEDY_RST_REFUSED_STREAM = 3,
  SPEEDY_RST_UNSUPPORTED_VERSION = 4,
  SPEEDY_RST_CANCEL = 5,
  SPEEDY_RST_INTERNAL_ERROR = 6,
  SPEEDY_RST_FLOW_CONTROL_ERROR = 7,
  SPEEDY_RST_STREAM_IN_USE = 8,         /* v3+ */
  SPEEDY_RST_STREAM_ALREADY_CLOSED = 9, /* v3+ */
  SPEEDY_RST_INVALID_CREDENTIALS = 10,  /* v3 only */
  SPEEDY_RST_FRAME_TOO_LARGE = 11,      /* v3+; HTTP/2 FRAME_SIZE_ERROR */
  SPEEDY_RST_SETTINGS_TIMEOUT = 12,     /* HTTP/2 only, from here on */
  SPEEDY_RST_COMPRESSION_ERROR = 13,
  SPEEDY_RST_CONNECT_ERROR = 14,
  SPEEDY_RST_ENHANCE_YOUR_CALM = 15,
  SPEEDY_RST_INADEQUATE_SECURITY = 16,
  SPEEDY_RST_HTTP_1_1_REQUIRED = 17
} speedy_rst_status;

/* Returns RFC 9110's reason phrase for an HTTP status code ("Not Found"), or NULL for a
 * code it does not name. A SPDY session adds it to a three-digit :status it sends. */
SPEEDY_API const char *speedy_status_reason(int status);

/* Returns the spec's name of a RST_STREAM status ("CANCEL"), or "UNKNOWN". */
SPEEDY_API const char *speedy_rst_status_name(uint32_t status);

/* SETTINGS ids. */
typedef enum speedy_settings_id {
  SPEEDY_SETTINGS_UPLOAD_BANDWIDTH = 1,
  SPEEDY_SETTINGS_DOWNLOAD_BANDWIDTH = 2,
  SPEEDY_SETTINGS_ROUND_TRIP_TIME = 3,
  SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS = 4,
  SPEEDY_SETTINGS_CURRENT_CWND = 5,
  SPEEDY_SETTINGS_DOWNLOAD_RETRANS_RATE = 6,
  SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE = 7,
  SPEEDY_SETTINGS_CLIENT_CERTIFICATE_VECTOR_SIZE = 8,
  /* HTTP/2 only (RFC 9113 6.5.2, RFC 9218 2.1; a SPDY session refuses them with
   * SPEEDY_ERR_INVALID_ARGUMENT); an HTTP/2 session also knows MAX_CONCURRENT_STREAMS and
   * INITIAL_WINDOW_SIZE above, and refuses SPDY's others. */
  SPEEDY_SETTINGS_HEADER_TABLE_SIZE = 0x101,
  SPEEDY_SETTINGS_ENABLE_PUSH = 0x102,
  SPEEDY_SETTINGS_MAX_FRAME_SIZE = 0x103,
  SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE = 0x104,
  SPEEDY_SETTINGS_ENABLE_CONNECT_PROTOCOL = 0x105,
  SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES = 0x106
} speedy_settings_id;
#define SPEEDY_SETTINGS_MAX_ID 8

/* Flags of one SETTINGS entry, and of the SETTINGS frame. */
#define SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE 0x01
#define SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED 0x02
#define SPEEDY_SPDY_SETTINGS_FLAG_CLEAR_SETTINGS 0x01

/* Control frame types, as on the wire. DATA is reported as SPEEDY_SPDY_FRAME_DATA. */
typedef enum speedy_spdy_frame_type {
  SPEEDY_SPDY_FRAME_DATA = 0,
  SPEEDY_SPDY_FRAME_SYN_STREAM = 1,
  SPEEDY_SPDY_FRAME_SYN_REPLY = 2,
  SPEEDY_SPDY_FRAME_RST_STREAM = 3,
  SPEEDY_SPDY_FRAME_SETTINGS = 4,
  SPEEDY_SPDY_FRAME_NOOP = 5,
  SPEEDY_SPDY_FRAME_PING = 6,
  SPEEDY_SPDY_FRAME_GOAWAY = 7,
  SPEEDY_SPDY_FRAME_HEADERS = 8,
  SPEEDY_SPDY_FRAME_WINDOW_UPDATE = 9,
  SPEEDY_SPDY_FRAME_CREDENTIAL = 10
} speedy_spdy_frame_type;

/* HTTP/2's frame types (RFC 9113 6; PRIORITY_UPDATE: RFC 9218 7.1), as on_frame reports
 * them for an HTTP/2 session; other types are ignored (5.5). */
typedef enum speedy_h2_frame_type {
  SPEEDY_H2_FRAME_DATA = 0x0,
  SPEEDY_H2_FRAME_HEADERS = 0x1,
  SPEEDY_H2_FRAME_PRIORITY = 0x2,
  SPEEDY_H2_FRAME_RST_STREAM = 0x3,
  SPEEDY_H2_FRAME_SETTINGS = 0x4,
  SPEEDY_H2_FRAME_PUSH_PROMISE = 0x5,
  SPEEDY_H2_FRAME_PING = 0x6,
  SPEEDY_H2_FRAME_GOAWAY = 0x7,
  SPEEDY_H2_FRAME_WINDOW_UPDATE = 0x8,
  SPEEDY_H2_FRAME_CONTINUATION = 0x9,
  SPEEDY_H2_FRAME_PRIORITY_UPDATE = 0x10
} speedy_h2_frame_type;

/* HTTP/2's frame flags; each is defined only for some types (RFC 9113 6). */
#define SPEEDY_H2_FLAG_END_STREAM 0x01  /* DATA, HEADERS */
#define SPEEDY_H2_FLAG_ACK 0x01         /* SETTINGS, PING */
#define SPEEDY_H2_FLAG_END_HEADERS 0x04 /* HEADERS, PUSH_PROMISE, CONTINUATION */
#define SPEEDY_H2_FLAG_PADDED 0x08      /* DATA, HEADERS, PUSH_PROMISE */
#define SPEEDY_H2_FLAG_PRIORITY 0x20    /* HEADERS */

/* Returns "SYN_STREAM" etc., or "UNKNOWN". */
SPEEDY_API const char *speedy_spdy_frame_type_name(int type);
/* The same for a protocol's own frame types: HTTP/2's "HEADERS", "PUSH_PROMISE" ... */
SPEEDY_API const char *speedy_protocol_frame_type_name(speedy_protocol protocol, int type);

/* Looks at the first bytes of a plaintext connection. Returns 2 or 3 for a SPDY control
 * frame of that version (3 also means 3.1), 0 when more bytes are needed (fewer than 4),
 * or -1 when the bytes are not SPDY (for example an HTTP/1.1 request line). */
SPEEDY_API int speedy_detect_spdy_version(const uint8_t *bytes, size_t len);

/* Looks at the first bytes of a plaintext connection for HTTP/2's client preface: 1 when
 * they are it, 0 when more bytes are needed to tell (they match so far), -1 when not. */
SPEEDY_API int speedy_detect_h2_preface(const uint8_t *bytes, size_t len);

/* One header field. Submitted headers are copied; received ones are valid during the
 * callback only. Names are lower case. */
typedef struct speedy_header {
  const char *name;
  size_t name_len;
  const char *value;
  size_t value_len;
} speedy_header;

/* One SETTINGS entry, for speedy_submit_settings. */
typedef struct speedy_setting {
  uint32_t id;   /* speedy_settings_id */
  uint8_t flags; /* SPEEDY_SPDY_SETTINGS_FLAG_* */
  uint32_t value;
} speedy_setting;

typedef struct speedy_session speedy_session;
typedef struct speedy_options speedy_options;
typedef struct speedy_callbacks speedy_callbacks;

/* ---- Options ----------------------------------------------------------------------- */

/* Creates options holding the defaults below; the caller frees them with
 * speedy_options_del. A session copies what it needs: options may be freed after
 * speedy_session_new. Returns 0 or SPEEDY_ERR_NOMEM. */
SPEEDY_API int speedy_options_new(speedy_options **out);
SPEEDY_API void speedy_options_del(speedy_options *options);

/* Allocator hook: every allocation of the session, zlib's included, goes through it.
 * realloc_fn may be NULL (the library then uses malloc_fn + copy + free_fn). */
typedef void *(*speedy_malloc_fn)(size_t size, void *user);
typedef void *(*speedy_realloc_fn)(void *ptr, size_t size, void *user);
typedef void (*speedy_free_fn)(void *ptr, void *user);
SPEEDY_API void speedy_options_set_allocator(speedy_options *options, speedy_malloc_fn malloc_fn,
                                             speedy_realloc_fn realloc_fn, speedy_free_fn free_fn,
                                             void *user);

/* Largest control frame payload accepted from the peer (default 65,536 + 1,024 bytes).
 * A larger one ends the session with GOAWAY PROTOCOL_ERROR. */
SPEEDY_API void speedy_options_set_max_recv_control_frame(speedy_options *options, uint32_t bytes);

/* Cap on one inflated header block (default 65,536). Exceeding it is a session error. */
SPEEDY_API void speedy_options_set_max_header_block(speedy_options *options, uint32_t bytes);

/* Payload size of the DATA frames we send (default 16,384; 1 .. 16,777,215). Smaller
 * frames let a high-priority stream overtake sooner. */
SPEEDY_API void speedy_options_set_data_frame_size(speedy_options *options, uint32_t bytes);

/* Our receive window per stream (v3, v3.1, HTTP/2; default 65,536, or HTTP/2's 65,535). A
 * non-default value is announced in the first SETTINGS frame as INITIAL_WINDOW_SIZE (for
 * HTTP/2 it applies once the peer acknowledged it). */
SPEEDY_API void speedy_options_set_stream_window(speedy_options *options, uint32_t bytes);

/* Our receive window for the whole session (v3.1, HTTP/2; default 65,536, or HTTP/2's
 * 65,535). A larger value is announced with a WINDOW_UPDATE on stream 0 at session start. */
SPEEDY_API void speedy_options_set_session_window(speedy_options *options, uint32_t bytes);

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
 * (speedy_session_settle_protocol, after a timeout of its choosing). Ignored for other
 * protocols. speedy_session_protocol reports SPDY3_1 until settled. */
SPEEDY_API void speedy_options_set_v3_autodetect(speedy_options *options, int enable);

/* Streams the peer may have open towards us (default 100). Announced in the first
 * SETTINGS frame; SYN_STREAMs beyond it are refused with REFUSED_STREAM. */
SPEEDY_API void speedy_options_set_max_concurrent_streams(speedy_options *options, uint32_t n);

/* 1: the application credits received DATA itself with speedy_session_consume. 0 (the
 * default): credited as soon as on_data_chunk returns. */
SPEEDY_API void speedy_options_set_manual_flow_control(speedy_options *options, int manual);

/* Control frames we may owe the peer before it is treated as a flood (default 1,000):
 * past this, the session ends with GOAWAY and SPEEDY_ERR_FLOOD. */
SPEEDY_API void speedy_options_set_max_queued_control_frames(speedy_options *options, uint32_t n);

/* Streams submitted beyond the peer's MAX_CONCURRENT_STREAMS wait in a queue of this
 * length (default 65,536); submits past it fail with SPEEDY_ERR_TOO_MANY_STREAMS. */
SPEEDY_API void speedy_options_set_max_pending_streams(speedy_options *options, uint32_t n);

/* zlib parameters for our header compression (defaults: level 6, windowBits 13,
 * memLevel 4 — chosen by bench/engine on the HAR corpus). Returns SPEEDY_ERR_INVALID_ARGUMENT
 * when out of zlib's ranges (level 0-9, windowBits 9-15, memLevel 1-9). */
SPEEDY_API int speedy_options_set_deflate_params(speedy_options *options, int level,
                                                 int window_bits, int mem_level);

/* The zlib parameters options would use (options NULL: the defaults). */
SPEEDY_API void speedy_options_get_deflate_params(const speedy_options *options, int *level,
                                                  int *window_bits, int *mem_level);

/* Only the zlib level of our header compression (0-9), windowBits and memLevel kept: 1 is
 * faster and compresses a little less, 0 stores blocks uncompressed (the dictionary still
 * names the stream). Returns SPEEDY_ERR_INVALID_ARGUMENT outside 0-9. */
SPEEDY_API int speedy_options_set_deflate_level(speedy_options *options, int level);

/* 0: do not send an initial SETTINGS frame even when options differ from the defaults. */
SPEEDY_API void speedy_options_set_send_initial_settings(speedy_options *options, int send);

/* 0: on_frame gets an empty summary instead of a formatted one (default 1). Formatting
 * costs a snprintf per frame; a server that only counts frames turns it off. */
SPEEDY_API void speedy_options_set_frame_summaries(speedy_options *options, int on);

/* ---- HTTP/2 options (ignored by SPDY sessions) ---- */

/* SETTINGS_MAX_FRAME_SIZE we announce: the largest frame the peer may send us once it
 * acknowledged it (default 16,384; 16,384 .. 16,777,215). */
SPEEDY_API void speedy_options_set_max_frame_size(speedy_options *options, uint32_t bytes);
/* SETTINGS_HEADER_TABLE_SIZE we announce: the HPACK table the peer may use towards us
 * (default 4,096; at most 1 MiB). */
SPEEDY_API void speedy_options_set_header_table_size(speedy_options *options, uint32_t bytes);
/* Client: 0 refuses server push (SETTINGS_ENABLE_PUSH = 0: a PUSH_PROMISE is then a
 * connection error). Default 1. */
SPEEDY_API void speedy_options_set_push(speedy_options *options, int enable);
/* CONTINUATION frames one field block may take (default 32); more ends the session with
 * GOAWAY ENHANCE_YOUR_CALM and SPEEDY_ERR_FLOOD. The block's assembled size is capped by
 * speedy_options_set_max_header_block. */
SPEEDY_API void speedy_options_set_max_continuations(speedy_options *options, uint32_t n);
/* How long our SETTINGS may go unacknowledged, on the clock of speedy_session_set_now
 * (default 10 s; 0: forever). Past it the session ends with GOAWAY SETTINGS_TIMEOUT and
 * SPEEDY_ERR_SETTINGS_TIMEOUT. */
SPEEDY_API void speedy_options_set_settings_timeout(speedy_options *options, int64_t timeout_ns);
/* Rapid reset defence: streams the peer may reset (or make us reset) in a burst, refilled
 * at per_second on the clock of speedy_session_set_now (default 1,000 and 100). Past it the
 * session ends with GOAWAY ENHANCE_YOUR_CALM and SPEEDY_ERR_FLOOD. */
SPEEDY_API void speedy_options_set_reset_budget(speedy_options *options, uint32_t burst,
                                                uint32_t per_second);
/* Frames that carry nothing (DATA and field-block fragments that are empty and end
 * nothing, PRIORITY, WINDOW_UPDATE for closed streams, unknown types) the peer may send in
 * a burst, refilled at per_second (default 1,000 and 100); past it as above. (Frames that
 * need an answer — SETTINGS, PING, those answered with RST_STREAM — are capped by
 * speedy_options_set_max_queued_control_frames.) */
SPEEDY_API void speedy_options_set_empty_frame_budget(speedy_options *options, uint32_t burst,
                                                      uint32_t per_second);

/* ---- Callbacks --------------------------------------------------------------------- */

/* What a header block means, in on_begin_headers. */
typedef enum speedy_headers_kind {
  SPEEDY_HEADERS_REQUEST = 1,      /* server: a SYN_STREAM (HTTP/2: HEADERS) opened a stream */
  SPEEDY_HEADERS_RESPONSE = 2,     /* client: SYN_REPLY; HTTP/2: the final response, a
                                    pushed stream's included */
  SPEEDY_HEADERS_PUSH = 3,         /* client: a pushed stream's SYN_STREAM (request headers;
                                    for SPDY/2 its response headers too); HTTP/2: the
                                    PUSH_PROMISE's request */
  SPEEDY_HEADERS_EXTRA = 4,        /* a HEADERS frame: a SPDY push's response headers,
                                    trailers */
  SPEEDY_HEADERS_INFORMATIONAL = 5 /* client, HTTP/2: a 1xx response (103 Early Hints ...)
                                    before the final one */
} speedy_headers_kind;

/* Every callback returns 0, or a negative value to fail the session
 * (SPEEDY_ERR_CALLBACK_FAILURE), except where noted. user is the session's user data. */

/* A header block starts on stream_id. For SPEEDY_HEADERS_PUSH, associated_id is the
 * stream the push belongs to (0 otherwise). */
typedef int (*speedy_on_begin_headers_fn)(speedy_session *session, int32_t stream_id,
                                          speedy_headers_kind kind, int32_t associated_id,
                                          void *user);
/* One header field. Values the peer joined with NUL are delivered one call per value. */
typedef int (*speedy_on_header_fn)(speedy_session *session, int32_t stream_id,
                                   const speedy_header *header, void *user);
/* The header block ended; end_stream is 1 when the peer also half-closed. */
typedef int (*speedy_on_headers_end_fn)(speedy_session *session, int32_t stream_id, int end_stream,
                                        void *user);
/* Body bytes. May return SPEEDY_ERR_PAUSE: speedy_session_recv then returns early with the
 * bytes consumed so far (this chunk included). */
typedef int (*speedy_on_data_chunk_fn)(speedy_session *session, int32_t stream_id,
                                       const uint8_t *data, size_t len, void *user);
/* The peer half-closed the stream with a DATA frame's FIN (after the last chunk). */
typedef int (*speedy_on_data_end_fn)(speedy_session *session, int32_t stream_id, void *user);
/* The stream is gone: status SPEEDY_RST_NONE when both sides finished, otherwise the
 * RST_STREAM status sent or received. speedy_session_get_stream_user_data still returns
 * the stream's user data during this call (and NULL afterwards): free it here. */
typedef int (*speedy_on_stream_close_fn)(speedy_session *session, int32_t stream_id,
                                         uint32_t status, void *user);
/* Our PING came back; rtt_ns uses the clock given to speedy_session_set_now. */
typedef int (*speedy_on_ping_ack_fn)(speedy_session *session, uint32_t ping_id, int64_t rtt_ns,
                                     void *user);
/* The peer sent GOAWAY: streams above last_good_id were not processed and are closed
 * with REFUSED_STREAM; retry them elsewhere. reason: a speedy_rst_status, SPEEDY_RST_NONE
 * for a graceful one (SPDY/3's three GOAWAY statuses map to NONE, PROTOCOL_ERROR and
 * INTERNAL_ERROR; SPDY/2's GOAWAY has none and reports NONE). */
typedef int (*speedy_on_goaway_fn)(speedy_session *session, int32_t last_good_id, uint32_t reason,
                                   void *user);
/* One SETTINGS entry from the peer (after the library applied it). */
typedef int (*speedy_on_setting_fn)(speedy_session *session, uint32_t id, uint8_t flags,
                                    uint32_t value, void *user);
/* The peer sent WINDOW_UPDATE: delta more bytes may be sent on stream_id (0: the v3.1
 * session window). Called after the window was updated, for frames that were accepted
 * (a delta of 0 included) — servers use it to meter abusive updates. */
typedef int (*speedy_on_window_update_fn)(speedy_session *session, int32_t stream_id,
                                          uint32_t delta, void *user);
/* Frame trace: every frame received (sent = 0) or sent (sent = 1). type is the session
 * protocol's own frame type (speedy_spdy_frame_type for SPDY, RFC 9113's numbers for
 * HTTP/2; speedy_protocol_frame_type_name names either). summary is a short readable
 * description of the frame-specific fields ("status=CANCEL", "delta=4096"), or "" with
 * speedy_options_set_frame_summaries(options, 0). Return value ignored. */
typedef void (*speedy_on_frame_fn)(speedy_session *session, int sent, int type, uint8_t flags,
                                   int32_t stream_id, uint32_t length, const char *summary,
                                   void *user);
/* A queued frame was dropped when it came to be serialised, because what it belonged to
 * is gone: its stream was closed or reset while the frame waited, or a GOAWAY (sent or
 * received) forbids opening the stream. reason is a SPEEDY_ERR_* code
 * (SPEEDY_ERR_STREAM_CLOSED, SPEEDY_ERR_SESSION_CLOSING). Return value ignored. */
typedef void (*speedy_on_frame_not_sent_fn)(speedy_session *session, int type, int32_t stream_id,
                                            int reason, void *user);
/* Zero-copy DATA: a data source set SPEEDY_DATA_FLAG_NO_COPY. The application must write
 * the frame header (8 bytes for SPDY, 9 for HTTP/2: speedy_session_data_header_length) and
 * then `length` body bytes from its own source, in that order, before any further output
 * of speedy_session_send. */
typedef int (*speedy_on_send_data_fn)(speedy_session *session, int32_t stream_id,
                                      const uint8_t *frame_header, size_t length, void *source,
                                      void *user);

SPEEDY_API int speedy_callbacks_new(speedy_callbacks **out);
SPEEDY_API void speedy_callbacks_del(speedy_callbacks *callbacks);
SPEEDY_API void speedy_callbacks_set_on_begin_headers(speedy_callbacks *c,
                                                      speedy_on_begin_headers_fn fn);
SPEEDY_API void speedy_callbacks_set_on_header(speedy_callbacks *c, speedy_on_header_fn fn);
SPEEDY_API void speedy_callbacks_set_on_headers_end(speedy_callbacks *c,
                                                    speedy_on_headers_end_fn fn);
SPEEDY_API void speedy_callbacks_set_on_data_chunk(speedy_callbacks *c, speedy_on_data_chunk_fn fn);
SPEEDY_API void speedy_callbacks_set_on_data_end(speedy_callbacks *c, speedy_on_data_end_fn fn);
SPEEDY_API void speedy_callbacks_set_on_stream_close(speedy_callbacks *c,
                                                     speedy_on_stream_close_fn fn);
SPEEDY_API void speedy_callbacks_set_on_ping_ack(speedy_callbacks *c, speedy_on_ping_ack_fn fn);
SPEEDY_API void speedy_callbacks_set_on_goaway(speedy_callbacks *c, speedy_on_goaway_fn fn);
SPEEDY_API void speedy_callbacks_set_on_setting(speedy_callbacks *c, speedy_on_setting_fn fn);
SPEEDY_API void speedy_callbacks_set_on_frame(speedy_callbacks *c, speedy_on_frame_fn fn);
SPEEDY_API void speedy_callbacks_set_on_send_data(speedy_callbacks *c, speedy_on_send_data_fn fn);
SPEEDY_API void speedy_callbacks_set_on_window_update(speedy_callbacks *c,
                                                      speedy_on_window_update_fn fn);
SPEEDY_API void speedy_callbacks_set_on_frame_not_sent(speedy_callbacks *c,
                                                       speedy_on_frame_not_sent_fn fn);

/* ---- Bodies by pull ---------------------------------------------------------------- */

#define SPEEDY_DATA_FLAG_EOF 0x01     /* this read ends the body (FIN goes with it) */
#define SPEEDY_DATA_FLAG_NO_COPY 0x02 /* the application writes the payload (on_send_data) */
/* With EOF: the body ends but the stream does not; trailers follow with
 * speedy_submit_headers(..., end_stream = 1), from this very call of the read callback or
 * later. (Trailers submitted from the callback also end the body: that call must set EOF.) */
#define SPEEDY_DATA_FLAG_NO_END_STREAM 0x04

/* Called when the stream may send: copy up to `len` bytes into buf and return the count
 * (set SPEEDY_DATA_FLAG_EOF in *flags on the last read; 0 bytes with EOF is fine). With
 * SPEEDY_DATA_FLAG_NO_COPY, write nothing, return the count the application will write in
 * on_send_data. Return SPEEDY_ERR_DEFERRED when nothing is ready (call
 * speedy_session_resume_data later), or any other negative value to reset the stream with
 * INTERNAL_ERROR. */
typedef int64_t (*speedy_data_read_fn)(speedy_session *session, int32_t stream_id, uint8_t *buf,
                                       size_t len, uint32_t *flags, void *source, void *user);

/* ---- Header compression on its own ------------------------------------------------ */

/* One direction's header compression without a session, for measuring what header frames
 * cost (the lab's header figures): header lists go through the same validation, layout
 * and compression context a session's output does, in the order given.
 * speedy_header_compressor_new: protocol picks the version's block format and dictionary;
 * options (may be NULL) gives the allocator and the deflate parameters. The caller owns
 * the compressor and deletes it with speedy_header_compressor_del. */
typedef struct speedy_header_compressor speedy_header_compressor;
SPEEDY_API int speedy_header_compressor_new(speedy_header_compressor **out,
                                            speedy_protocol protocol,
                                            const speedy_options *options);
SPEEDY_API void speedy_header_compressor_del(speedy_header_compressor *compressor);
/* Compresses the list as the next block of this context and returns the bytes of the
 * frame a session would send for it: frame header, fixed fields (SYN_STREAM's for a
 * request, SYN_REPLY's when response is 1) and the block; for HTTP/2, HEADERS and the
 * CONTINUATION frames a 16,384-octet frame size needs, the block HPACK-encoded (4,096-octet
 * table). SPEEDY_ERR_INVALID_HEADER, with the context untouched, for a list the protocol
 * cannot carry (HTTP/2: a message its rules refuse). */
SPEEDY_API int64_t speedy_header_compressor_frame_size(speedy_header_compressor *compressor,
                                                       int response, const speedy_header *headers,
                                                       size_t n);

/* ---- Sessions ---------------------------------------------------------------------- */

/* Creates a session. callbacks and options are copied (options may be NULL for the
 * defaults). user is passed to every callback. The caller frees it with speedy_session_del.
 * Returns 0, SPEEDY_ERR_INVALID_ARGUMENT or SPEEDY_ERR_NOMEM. */
SPEEDY_API int speedy_session_new(speedy_session **out, speedy_protocol protocol, speedy_role role,
                                  const speedy_callbacks *callbacks, const speedy_options *options,
                                  void *user);
/* Frees the session, its streams and its zlib contexts. No callbacks are called. */
SPEEDY_API void speedy_session_del(speedy_session *session);

/* Feeds bytes read from the peer. Returns the number consumed (all of them unless a
 * data callback paused), or a negative error: fatal errors leave a GOAWAY queued when the
 * protocol calls for one — send it, then close. */
SPEEDY_API int64_t speedy_session_recv(speedy_session *session, const uint8_t *data, size_t len);

/* Copies up to `cap` bytes of output into buf. Returns the count (0: nothing to send
 * now) or a negative fatal error. Octets written by on_send_data during the call count
 * towards cap (a zero-copy session may return 0 having written them: ask
 * speedy_session_want_write whether more is due). */
SPEEDY_API int64_t speedy_session_send(speedy_session *session, uint8_t *buf, size_t cap);

/* Zero-copy output: points *out at up to `max` pending bytes inside the library and
 * returns their count (0: nothing to send). The bytes stay valid until the next call
 * into the session; mark what was written with speedy_session_consume_output. As with
 * speedy_session_send, octets on_send_data wrote during the call count towards max. */
SPEEDY_API int64_t speedy_session_peek_output(speedy_session *session, const uint8_t **out,
                                              size_t max);
SPEEDY_API void speedy_session_consume_output(speedy_session *session, size_t n);

/* 1 while the session still expects input / has or may produce output. When both are 0
 * the session is finished and the connection can be closed. */
SPEEDY_API int speedy_session_want_read(const speedy_session *session);
SPEEDY_API int speedy_session_want_write(const speedy_session *session);

/* Sets the session's monotonic clock (nanoseconds): PING round trips, the HTTP/2 SETTINGS
 * timeout and the budgets of the defences. Returns 0, or SPEEDY_ERR_SETTINGS_TIMEOUT when
 * our HTTP/2 SETTINGS went unacknowledged too long: the session then ends (GOAWAY queued;
 * send it and close). */
SPEEDY_API int speedy_session_set_now(speedy_session *session, int64_t now_ns);

SPEEDY_API speedy_protocol speedy_session_protocol(const speedy_session *session);
SPEEDY_API speedy_role speedy_session_role(const speedy_session *session);
/* Bytes of a DATA frame's header: 8 for SPDY, 9 for HTTP/2. */
SPEEDY_API size_t speedy_session_data_header_length(const speedy_session *session);
/* The peer's last GOAWAY: its reason (speedy_rst_status; SPEEDY_RST_NONE for NO_ERROR) and,
 * for HTTP/2, its debug data (at most 128 octets kept; valid until the next call into the
 * session). Returns -1 if no GOAWAY came. */
SPEEDY_API int64_t speedy_session_goaway_reason(const speedy_session *session,
                                                const uint8_t **debug, size_t *debug_len);
/* Input progress, for a server that times out peers trickling a frame (slowloris):
 * frames whose header has been read so far, DATA payload bytes read (delivered or
 * discarded), and 1 while part of a frame has been read but not all of it. */
SPEEDY_API uint64_t speedy_session_recv_frames(const speedy_session *session);
SPEEDY_API uint64_t speedy_session_recv_data_bytes(const speedy_session *session);
SPEEDY_API int speedy_session_recv_in_frame(const speedy_session *session);
/* 0 once a session made with speedy_options_set_v3_autodetect has settled between SPDY/3
 * and /3.1 (and always for other sessions); while undecided:
 * 2 — our DATA waits only for the 3.1 session window: if no WINDOW_UPDATE comes for a
 *     while, the peer is SPDY/3 with large stream windows (settle as SPDY3);
 * 3 — the peer used the whole 64 KiB session window with a stream still open: if no more
 *     DATA comes for a while, it waits for our session WINDOW_UPDATE (settle as SPDY3_1);
 * 1 — otherwise. An application timer (a second is generous) settles on 2 and 3. */
SPEEDY_API int speedy_session_protocol_undecided(const speedy_session *session);
/* Settles an undecided session as SPEEDY_PROTOCOL_SPDY3 or SPEEDY_PROTOCOL_SPDY3_1.
 * SPEEDY_ERR_INVALID_STATE if it is not undecided, SPEEDY_ERR_INVALID_ARGUMENT for another
 * protocol. */
SPEEDY_API int speedy_session_settle_protocol(speedy_session *session, speedy_protocol protocol);
SPEEDY_API void *speedy_session_user_data(const speedy_session *session);

/* Per-stream user data. set returns SPEEDY_ERR_STREAM_NOT_FOUND for unknown streams. */
SPEEDY_API int speedy_session_set_stream_user_data(speedy_session *session, int32_t stream_id,
                                                   void *data);
SPEEDY_API void *speedy_session_get_stream_user_data(const speedy_session *session,
                                                     int32_t stream_id);

/* The last value the peer sent for a SETTINGS id, or -1 if it never sent one. */
SPEEDY_API int64_t speedy_session_remote_setting(const speedy_session *session, uint32_t id);

/* Send windows (what we may still send) and receive windows (what the peer may still
 * send). stream_id 0 means the session window (v3.1). Negative when unknown. */
SPEEDY_API int64_t speedy_session_send_window(const speedy_session *session, int32_t stream_id);
SPEEDY_API int64_t speedy_session_recv_window(const speedy_session *session, int32_t stream_id);

/* Open streams (both directions) and streams waiting for a concurrency slot. */
SPEEDY_API uint32_t speedy_session_open_streams(const speedy_session *session);
SPEEDY_API uint32_t speedy_session_pending_streams(const speedy_session *session);

/* Heap bytes the session holds right now (through the allocator hook, zlib included). */
SPEEDY_API size_t speedy_session_memory(const speedy_session *session);

/* Wakes a stream whose data source returned SPEEDY_ERR_DEFERRED. */
SPEEDY_API int speedy_session_resume_data(speedy_session *session, int32_t stream_id);

/* Manual flow control: the application has processed n bytes of stream_id's DATA.
 * Credits the stream and the session window and sends WINDOW_UPDATE when half of the
 * window is due. Called from on_data_chunk for that chunk's stream, the credit is given
 * when the DATA frame ends, so WINDOW_UPDATEs do not depend on how input was split.
 * n is capped at the bytes delivered and not yet consumed (more would widen the peer's
 * window past what it sent). DATA of a stream that closes unconsumed goes back to the
 * connection window when it closes; consuming a closed stream's bytes does nothing. */
SPEEDY_API int speedy_session_consume(speedy_session *session, int32_t stream_id, size_t n);

/* ---- Submitting frames ------------------------------------------------------------- */

/* Client: opens a stream with a request. headers must include :method, :scheme,
 * :authority and :path, HTTP/2's names whatever the protocol (the SPDY codec maps them;
 * CONNECT is refused).
 * read_fn == NULL means no body (FIN on the SYN_STREAM). Returns the new stream id (> 0) or
 * a negative error. The stream may wait in a queue while the peer's
 * MAX_CONCURRENT_STREAMS is reached; its id is assigned now. HTTP/2: an urgency other
 * than 3 goes as a priority field ("u=N") unless headers carry one. */
SPEEDY_API int32_t speedy_submit_request(speedy_session *session, int urgency,
                                         const speedy_header *headers, size_t n_headers,
                                         speedy_data_read_fn read_fn, void *source,
                                         void *stream_user);

/* Server: answers stream_id. headers must include :status, three digits, not 1xx (SPDY
 * adds :version and the reason phrase); SPEEDY_ERR_INVALID_HEADER for a 204 or 304 with
 * a body over HTTP/2, which has no content (RFC 9110 6.4.1). read_fn == NULL means no
 * body. */
SPEEDY_API int speedy_submit_response(speedy_session *session, int32_t stream_id,
                                      const speedy_header *headers, size_t n_headers,
                                      speedy_data_read_fn read_fn, void *source);

/* ---- Prepared responses ------------------------------------------------------------
 * A server that sends the same response head many times (a cached file's status, type,
 * length and validators) can check and lay it out once. speedy_fieldset_new copies
 * fields and checks them as speedy_submit_response checks a final response over HTTP/2
 * (RFC 9113 section 8: lower-case names, valid values, :status of 200-599, no
 * connection-specific fields); SPEEDY_ERR_INVALID_HEADER when they fail, else *out gets
 * a set with one reference, which speedy_fieldset_release drops. A set never changes and
 * may be submitted by any number of sessions, in any thread: each submission holds a
 * reference until its frame is sent or dropped, so a set may be released right after
 * submitting. Its memory comes from malloc (a set belongs to no session, so no
 * session's allocator hook sees it).
 *
 * speedy_submit_response_fieldset answers stream_id with the set's fields, as
 * speedy_submit_response would with them. Over HTTP/2 nothing is checked, copied or
 * hashed again and HPACK's string literals are coded once (the block is the same octets
 * speedy_submit_response would send); over SPDY the set's fields take the path of
 * speedy_submit_response. SPEEDY_ERR_INVALID_HEADER when the peer's
 * SETTINGS_MAX_HEADER_LIST_SIZE is below the set's size, or for a 204 or 304 with a
 * body. */
typedef struct speedy_fieldset speedy_fieldset;
SPEEDY_API int speedy_fieldset_new(const speedy_header *fields, size_t n, speedy_fieldset **out);
SPEEDY_API void speedy_fieldset_release(speedy_fieldset *set);
SPEEDY_API int speedy_submit_response_fieldset(speedy_session *session, int32_t stream_id,
                                               speedy_fieldset *set, speedy_data_read_fn read_fn,
                                               void *source);

/* Server: pushes a resource associated with the open stream associated_id.
 * request_headers carry :scheme, :host and :path; response_headers carry :status and
 * :version. HTTP/2: :scheme, :authority, :path and :method (GET or HEAD; GET when absent)
 * go in a PUSH_PROMISE at once, :status in the pushed stream's HEADERS when the client's
 * MAX_CONCURRENT_STREAMS allows; SPEEDY_ERR_INVALID_STATE if the client disabled push.
 * Returns the new (even) stream id or a negative error. */
SPEEDY_API int32_t speedy_submit_push(speedy_session *session, int32_t associated_id, int urgency,
                                      const speedy_header *request_headers, size_t n_request,
                                      const speedy_header *response_headers, size_t n_response,
                                      speedy_data_read_fn read_fn, void *source, void *stream_user);

/* Sends a HEADERS frame on an open stream (trailers when end_stream is 1).
 * SPEEDY_ERR_INVALID_STATE while the stream still waits for a concurrency slot (its
 * SYN_STREAM has not gone out), and, with end_stream, while its body is being sent (a
 * body followed by trailers ends with SPEEDY_DATA_FLAG_NO_END_STREAM). HTTP/2 server: before
 * the response, headers with a 1xx :status (not 101) send an informational response,
 * 103 Early Hints for example. */
SPEEDY_API int speedy_submit_headers(speedy_session *session, int32_t stream_id,
                                     const speedy_header *headers, size_t n_headers,
                                     int end_stream);

/* Resets a stream with a RST_STREAM status. */
SPEEDY_API int speedy_submit_rst(speedy_session *session, int32_t stream_id, uint32_t status);

/* HTTP/2 client: asks the server to serve one of our streams at another urgency (0, most
 * urgent, to 7) and, with incremental set, interleaved with others of that urgency, by
 * a PRIORITY_UPDATE frame (RFC 9218 7.1). The stream may be open or still waiting for a
 * concurrency slot (the frame then follows its HEADERS). Our own sending order does not
 * change. SPEEDY_ERR_INVALID_STATE for a server or a SPDY session (SPDY cannot
 * reprioritise a stream), SPEEDY_ERR_STREAM_NOT_FOUND for a stream not ours or gone. */
SPEEDY_API int speedy_submit_priority_update(speedy_session *session, int32_t stream_id,
                                             uint8_t urgency, int incremental);

/* Sends a PING; its id is stored in *id_out when not NULL. */
SPEEDY_API int speedy_submit_ping(speedy_session *session, uint32_t *id_out);

/* Sends GOAWAY with our last-good-stream-id; no new streams start afterwards. Streams in
 * flight finish; the session ends when they have. reason: a speedy_rst_status, NONE for a
 * graceful shutdown (SPDY/3 sends OK, PROTOCOL_ERROR or INTERNAL_ERROR, the nearest of
 * its three statuses; HTTP/2 sends the error code, ENHANCE_YOUR_CALM and
 * INADEQUATE_SECURITY included). debug (may be NULL): HTTP/2's debug data, at most 128
 * octets sent (SPDY has none). HTTP/2 server with NONE: a graceful shutdown in two steps —
 * GOAWAY with 2^31-1 and a PING, then, when the PING comes back, GOAWAY with the last
 * stream really accepted (streams opened meanwhile are served). */
SPEEDY_API int speedy_submit_goaway(speedy_session *session, uint32_t reason, const uint8_t *debug,
                                    size_t debug_len);

/* Sends a SETTINGS frame. Our own values for MAX_CONCURRENT_STREAMS and
 * INITIAL_WINDOW_SIZE take effect at once (HTTP/2: all of them once the peer acknowledged
 * the frame; frame_flags unused; ids are the HTTP/2 ones of speedy_settings_id).
 * SPEEDY_ERR_WINDOW_OVERFLOW (nothing sent) when raising INITIAL_WINDOW_SIZE would take an open
 * stream's window past 2^31-1: the peer adjusts its windows by the difference and would have to
 * reset that stream. SPEEDY_ERR_INVALID_ARGUMENT when an id appears twice (the peer would take the
 * first value, this session the last). */
SPEEDY_API int speedy_submit_settings(speedy_session *session, uint8_t frame_flags,
                                      const speedy_setting *settings, size_t n_settings);

/* Opens our receive window by delta (stream_id 0: the session window, v3.1 only).
 * SPEEDY_ERR_INVALID_STATE for a stream still waiting for a concurrency slot. */
SPEEDY_API int speedy_submit_window_update(speedy_session *session, int32_t stream_id,
                                           uint32_t delta);

#ifdef __cplusplus
}
#endif

#endif /* SPEEDY_SPEEDY_H */
