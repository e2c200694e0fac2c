/* spdy_codec.h — the SPDY codec's state inside a session (SPDY/2, /3 and /3.1).
 *
 *   spdy_codec.c       the codec tables, session start, what the application submits
 *                      (header lists laid out as NV blocks), serialising queued frames
 *   spdy_codec_recv.c  the input parser and what each SPDY frame means
 *
 * Wire format: frame.c; header blocks and their zlib contexts: hdblock.c.
 */
#ifndef SPDY_LIB_SPDY_CODEC_H
#define SPDY_LIB_SPDY_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "hdblock.h"

/* Input parser states. */
typedef enum spdy_recv_state {
  SPDY_RECV_HEAD,    /* collecting the 8-byte frame header */
  SPDY_RECV_CONTROL, /* collecting a control frame's payload into inbuf */
  SPDY_RECV_DATA,    /* passing DATA payload to the application */
  SPDY_RECV_DISCARD  /* skipping a payload (unknown type) */
} spdy_recv_state;

typedef struct spdy_codec_state {
  int wire_version; /* 2 or 3 */
  /* Header compression: one context per direction. */
  spdy_hdblock_deflater deflater;
  spdy_hdblock_inflater inflater;
  /* Undecided between SPDY/3 and /3.1 (speedy_options_set_v3_autodetect): the session
   * says 3.1, no WINDOW_UPDATE on stream 0 goes out, and stream credit the peer returned
   * is counted as evidence. */
  uint8_t v3_undecided;
  uint64_t v3_stream_credit;
  /* Input. */
  spdy_recv_state recv_state;
  uint8_t head[SPDY_FRAME_HEADER_LEN];
  size_t head_len;
  spdy_frame_hd frame;
} spdy_codec_state;

/* Settles an undecided session as SPDY/3 or /3.1 (spdy_codec.c). */
struct speedy_session;
int spdy_codec_settle(struct speedy_session *session, speedy_protocol protocol);
/* Settles an undecided session as SPDY/3 if our session window is used up and the peer
 * returned half of it in stream credit without a session WINDOW_UPDATE, which a 3.1 peer
 * sends by then. */
int spdy_codec_settle_by_credit(struct speedy_session *session);
/* The SPDY codec's parser (spdy_codec_recv.c), and whether it is inside a frame. */
int64_t spdy_codec_recv(struct speedy_session *session, const uint8_t *in, size_t len);
int spdy_codec_recv_in_frame(const struct speedy_session *session);

#endif
