/* h2_codec.h — the HTTP/2 codec's state inside a session (RFC 9113).
 *
 *   h2_codec.c       the codec table, session start (preface, SETTINGS), header lists
 *                    the application submits, serialising queued frames (HPACK in output
 *                    order, field blocks split into CONTINUATION frames), settings
 *                    acknowledgement and its timeout, graceful shutdown
 *   h2_codec_recv.c  the input parser: frames, field blocks reassembled from
 *                    CONTINUATION frames, stream states (5.1), flow control (5.2, 6.9),
 *                    the defences
 *
 * Wire format: h2_frame.c; header compression: hpack.c; message rules: h2_message.c;
 * priorities: priority.c.
 */
#ifndef SPEEDY_LIB_H2_CODEC_H
#define SPEEDY_LIB_H2_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "h2_frame.h"
#include "h2_message.h"
#include "hpack.h"
#include "priority.h"
#include "speedy/speedy.h"

/* Input parser states. */
typedef enum speedy_h2_recv_state {
  SPEEDY_H2_RECV_PREFACE,  /* server: the client's 24-octet preface */
  SPEEDY_H2_RECV_HEAD,     /* the 9-octet frame header */
  SPEEDY_H2_RECV_PAYLOAD,  /* a frame's payload, collected whole (all but DATA) */
  SPEEDY_H2_RECV_DATA_PAD, /* a padded DATA frame's Pad Length octet */
  SPEEDY_H2_RECV_DATA,     /* DATA payload, passed on as it comes */
  SPEEDY_H2_RECV_PADDING,  /* DATA padding, skipped */
  SPEEDY_H2_RECV_DISCARD   /* a payload skipped (unknown frame type) */
} speedy_h2_recv_state;

/* Our SETTINGS frames the peer has not acknowledged yet, oldest first. */
#define SPEEDY_H2_MAX_UNACKED_SETTINGS 8

typedef struct speedy_h2_sent_settings {
  speedy_setting settings[SPEEDY_SETTINGS_MAX_ID + 1]; /* neutral ids */
  uint8_t n;
  int64_t sent_ns; /* when it was serialised */
} speedy_h2_sent_settings;

/* What becomes of a field block being received. */
typedef enum speedy_h2_block_fate {
  SPEEDY_H2_BLOCK_DELIVER = 1, /* to the application, if the message is well formed */
  SPEEDY_H2_BLOCK_DISCARD,     /* decoded for the HPACK state only */
  SPEEDY_H2_BLOCK_RESET        /* decoded, then the stream is reset with reset_reason */
} speedy_h2_block_fate;

/* A field block from HEADERS or PUSH_PROMISE to its END_HEADERS. */
typedef struct speedy_h2_block {
  uint8_t active;     /* CONTINUATION frames are expected */
  uint8_t promise;    /* PUSH_PROMISE (else HEADERS) */
  uint8_t end_stream; /* the HEADERS frame had END_STREAM */
  uint8_t fate;       /* speedy_h2_block_fate */
  uint8_t opens;      /* HEADERS opening a peer stream */
  uint32_t reset_reason;
  int32_t stream_id;   /* the frame's stream */
  int32_t promised_id; /* PUSH_PROMISE */
  uint32_t continuations;
  size_t fragment_bytes; /* compressed octets so far */
  speedy_h2_message message;
  size_t n_fields;
  uint8_t has_update;     /* a PRIORITY_UPDATE came before the stream opened */
  speedy_priority update; /* ... saying this (it overrides the priority field) */
  uint8_t rfc7540_order;  /* the HEADERS placed the stream under another (RFC 7540 5.3) */
} speedy_h2_block;

/* A priority the client gave a stream before opening it (RFC 9218 7.1). */
typedef struct speedy_h2_idle_priority {
  int32_t id;
  speedy_priority priority;
} speedy_h2_idle_priority;

/* The longest field block kept for reuse (speedy_h2_state.memo). */
#define SPEEDY_H2_MEMO_MAX 96

typedef struct speedy_h2_state {
  speedy_hpack_encoder *encoder;
  speedy_hpack_decoder *decoder;
  /* Input. */
  speedy_h2_recv_state recv_state;
  uint8_t preface_got;   /* octets of the client preface matched (server) */
  uint8_t settings_seen; /* the peer's first SETTINGS (its preface) arrived */
  uint8_t head[SPEEDY_H2_FRAME_HEADER_LEN];
  uint8_t head_len;
  speedy_h2_frame_hd frame;
  uint32_t pad_left;   /* DATA padding still to skip */
  uint32_t pad_credit; /* octets of this DATA frame that were padding */
  speedy_h2_block block;
  speedy_buf fields; /* the block's decoded fields: u32 name length, u32 value length, bytes */
  /* Our settings as acknowledged, and those in flight. */
  uint32_t recv_max_frame;
  uint8_t local_push;            /* client: the server may push (our ENABLE_PUSH as acknowledged) */
  speedy_h2_sent_settings *sent; /* SPEEDY_H2_MAX_UNACKED_SETTINGS of them while n_sent > 0,
                                  * else NULL: they are a rare frame's */
  uint8_t sent_head, n_sent;
  /* The peer's settings. */
  uint8_t peer_push;    /* server: the client accepts pushes */
  uint8_t peer_rfc9218; /* server: the client sent SETTINGS_NO_RFC7540_PRIORITIES = 1 */
  uint32_t peer_max_header_list;
  /* Output: an encoded field block on its way into frames. */
  speedy_buf scratch;
  /* The last field set (speedy_fieldset, retained) whose encoding left the encoder as it
   * was, and that block: the next answer from the same set, with the encoder still at the
   * mark, is the same octets (a cached file's head, answer after answer). */
  struct speedy_fieldset *memo_set;
  speedy_hpack_mark memo_mark;
  uint32_t memo_len;
  uint8_t memo[SPEEDY_H2_MEMO_MAX];
  /* Graceful shutdown: the PING sent after GOAWAY(2^31-1) is out. */
  uint8_t shutdown_ping;
  /* Priorities of streams not open yet (PRIORITY_UPDATE before HEADERS): at most our
   * MAX_CONCURRENT_STREAMS, counting the open ones (RFC 9218 7.1). */
  speedy_h2_idle_priority *idle;
  uint32_t n_idle, cap_idle;
} speedy_h2_state;

struct speedy_session;
/* The parser (h2_codec_recv.c), and whether it is inside a frame. */
int64_t speedy_h2_codec_recv(struct speedy_session *session, const uint8_t *in, size_t len);
int speedy_h2_codec_recv_in_frame(const struct speedy_session *session);
/* Neutral reasons and HTTP/2 error codes (h2_codec.c). */
uint32_t speedy_h2_code_of(uint32_t reason);
uint32_t speedy_h2_reason_of(uint32_t code);
/* Neutral settings ids and HTTP/2's: 0 when it has none. */
uint16_t speedy_h2_setting_of(uint32_t id);
uint32_t speedy_h2_setting_id_of(uint16_t setting);
/* Our oldest unacknowledged SETTINGS was acknowledged: its values take effect. */
int speedy_h2_settings_acked(struct speedy_session *session);
/* The PING of a graceful shutdown came back: the final GOAWAY goes. */
int speedy_h2_shutdown_acked(struct speedy_session *session);
/* The opaque data of the graceful shutdown's PING. */
extern const uint8_t speedy_h2_shutdown_opaque[8];

#endif
