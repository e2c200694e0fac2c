/* codec.h — what a wire protocol supplies to the session core.
 *
 * The core (session.c, submit.c, session_recv.c, session_send.c, stream.c) owns what every
 * protocol shares: the allocator, buffers, the stream table, the scheduler, flow-control
 * credit, the queue of frames we owe or were asked to send and its flood cap, output
 * slicing and the options. A codec owns the wire: framing, header compression, what
 * settings mean and the rules of stream states. The codec is chosen when the session is
 * made (speedy_codec_for) and its capabilities are copied into session->caps then, so the
 * core asks "is there a session window?", never "which version is this?".
 *
 * Values inside the core are protocol-neutral; only codecs know wire numbers:
 * - why a stream or a session ends: speedy_rst_status (SPDY's RST_STREAM numbers are its
 *   values, the HTTP/2-only reasons extend it); each codec maps it to its error codes;
 * - settings: speedy_settings_id (SPDY's ids, plus the HTTP/2-only ids), mapped likewise;
 * - frames: the core queues a speedy_outframe of a speedy_out_kind; the codec writes it.
 * The public API speaks the same neutral names, so renaming them (spdy_ -> speedy_) is
 * mechanical.
 */
#ifndef SPEEDY_LIB_CODEC_H
#define SPEEDY_LIB_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "speedy/speedy.h"

typedef struct speedy_outframe speedy_outframe;

/* Frames the core queues. */
typedef enum speedy_out_kind {
  SPEEDY_OUT_HEADERS = 1,    /* a header block on stream_id; role says what it does */
  SPEEDY_OUT_RST,            /* reason */
  SPEEDY_OUT_SETTINGS,       /* settings[n_settings]; flags: SPDY's frame flags */
  SPEEDY_OUT_SETTINGS_ACK,   /* HTTP/2 */
  SPEEDY_OUT_PING,           /* value: our ping id */
  SPEEDY_OUT_PING_ACK,       /* the peer's ping answered: value (SPDY id), opaque (HTTP/2) */
  SPEEDY_OUT_GOAWAY,         /* value: last stream id; reason; block: debug data */
  SPEEDY_OUT_WINDOW_UPDATE,  /* value: delta */
  SPEEDY_OUT_PRIORITY_UPDATE /* HTTP/2: stream_id's urgency, flags 1: incremental */
} speedy_out_kind;

/* What a header block does. */
typedef enum speedy_block_role {
  SPEEDY_BLOCK_REQUEST = 1,   /* opens a stream we initiate */
  SPEEDY_BLOCK_PUSH,          /* opens a stream we push (SPDY: its SYN_STREAM with the request
                               and response; HTTP/2: the pushed response's HEADERS) */
  SPEEDY_BLOCK_PROMISE,       /* HTTP/2: a push's request, PUSH_PROMISE on associated_id */
  SPEEDY_BLOCK_RESPONSE,      /* the final response to a peer's stream */
  SPEEDY_BLOCK_INFORMATIONAL, /* a 1xx response before it (HTTP/2) */
  SPEEDY_BLOCK_EXTRA          /* more headers, or trailers */
} speedy_block_role;

/* Capabilities: fixed when the session is made. (The one exception is a SPDY/3.1 session
 * that settles as SPDY/3: speedy_options_set_v3_autodetect; it loses its session window.) */
typedef struct speedy_codec_caps {
  uint8_t flow_control;        /* stream windows are enforced (not SPDY/2) */
  uint8_t session_window;      /* a window for the whole session too (SPDY/3.1, HTTP/2) */
  uint8_t settings_acked;      /* our settings take effect when acknowledged (HTTP/2) */
  uint8_t informational;       /* 1xx responses may precede the final one (HTTP/2) */
  uint8_t extra_headers;       /* header blocks that do not end the stream may follow the
                                  first (SPDY); else only trailers (HTTP/2) */
  uint8_t incremental_default; /* streams of one urgency take turns frame by frame (SPDY);
                                  0: one after another unless incremental (RFC 9218) */
  uint8_t data_header_len;     /* bytes of a DATA frame's header: 8 or 9 */
  uint32_t default_window;     /* initial stream and session windows */
  uint32_t max_frame_payload;  /* the most one frame may carry before the peer says more */
} speedy_codec_caps;

typedef struct speedy_codec {
  const char *name; /* "spdy/3.1", "h2" */
  speedy_codec_caps caps;
  /* Codec state inside the session (compression contexts, parser): 0 or SPEEDY_ERR_NOMEM.
   * free is called whatever init returned. */
  int (*init)(speedy_session *session);
  void (*free)(speedy_session *session);
  /* Queues what opens the session (preface, first SETTINGS, session window). */
  int (*start)(speedy_session *session);
  /* Parses peer bytes: returns the count consumed (all but after a pause) or a fatal
   * error. What each frame means is done through the core's helpers (session_int.h). */
  int64_t (*recv)(speedy_session *session, const uint8_t *in, size_t len);
  /* 1 while part of a frame (or preface) has been read but not all of it. */
  int (*recv_in_frame)(const speedy_session *session);
  /* Checks a header list the application submits in this role and lays it out for the
   * queue (compressed only when serialised). *out is a SPEEDY_OUT_HEADERS frame with role set.
   * SPEEDY_ERR_INVALID_HEADER for what the protocol forbids. */
  int (*prepare_block)(speedy_session *session, speedy_block_role role,
                       const speedy_header *headers, size_t n_headers, speedy_outframe **out);
  /* A final response from a prepared set (takes a reference to it); NULL: the codec
   * takes the set's fields through prepare_block. */
  int (*prepare_fieldset)(speedy_session *session, speedy_fieldset *set, speedy_outframe **out);
  /* A push: *promise (NULL when the protocol has none) goes out at once, *open when the
   * peer's concurrency limit allows. */
  int (*prepare_push)(speedy_session *session, const speedy_header *request, size_t n_request,
                      const speedy_header *response, size_t n_response, speedy_outframe **promise,
                      speedy_outframe **open);
  /* Appends a queued frame to session->outbuf and traces it. SPEEDY_ERR_FRAME_TOO_LARGE:
   * only this frame's stream fails (nothing written, compression state untouched). */
  int (*serialise)(speedy_session *session, speedy_outframe *frame);
  /* Writes a DATA frame header of caps.data_header_len bytes. */
  void (*data_header)(uint8_t *out, int32_t stream_id, int end_stream, uint32_t length);
  /* The frame's type on the wire, as on_frame and on_frame_not_sent report it. */
  int (*frame_type)(const speedy_outframe *frame);
  /* 1 if the application may reset a stream with this reason on this protocol. */
  int (*reason_allowed)(const speedy_session *session, uint32_t reason);
  /* Checks settings the application submits: 0 or SPEEDY_ERR_INVALID_ARGUMENT. */
  int (*check_settings)(const speedy_session *session, const speedy_setting *settings, size_t n);
  /* Optional: our session send window is used up with DATA waiting. */
  int (*send_window_exhausted)(speedy_session *session);
  /* Optional: the application's clock moved (speedy_session_set_now): timeouts. */
  int (*tick)(speedy_session *session);
  /* Optional: the protocol's own check of a frame about to be serialised (after the
   * core's): 0, or why it may not go (reported to on_frame_not_sent). */
  int (*check_frame)(const speedy_session *session, const speedy_outframe *frame);
  /* Optional: a graceful shutdown (speedy_submit_goaway with OK) in the protocol's way;
   * without it one GOAWAY goes. */
  int (*shutdown)(speedy_session *session);
  /* Optional: the session has no streams and is between calls (not inside
   * speedy_session_recv): gives back what only a busy session needs. */
  void (*idle)(speedy_session *session);
} speedy_codec;

extern const speedy_codec speedy_codec_spdy2;
extern const speedy_codec speedy_codec_spdy3;
extern const speedy_codec speedy_codec_spdy31;
extern const speedy_codec speedy_h2_codec;

/* The codec of a protocol, or NULL. */
const speedy_codec *speedy_codec_for(speedy_protocol protocol);

#endif
