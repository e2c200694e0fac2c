/* session_int.h — the session's private state, shared by the session modules:
 *
 *   options.c       spdy_options and spdy_callbacks objects
 *   stream.c        stream table (hash by id) and stream lifetime
 *   session.c       create/delete, accessors, submit functions, control-frame queue
 *   session_recv.c  input: frame parser state machine and what each frame means
 *   session_send.c  output: control frames first, then DATA by priority and flow control
 *
 * Nothing here is public. Pointers to streams are never held across an application
 * callback: callbacks may reset or close streams, so code looks streams up again by id.
 */
#ifndef SPDY_LIB_SESSION_INT_H
#define SPDY_LIB_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "frame.h"
#include "hdblock.h"
#include "mem.h"
#include "spdy/spdy.h"

#define SPDY_URGENCY_LEVELS 8
#define SPDY_DEFAULT_WINDOW 65536
#define SPDY_MAX_OUTSTANDING_PINGS 8

struct spdy_options {
  spdy_mem mem; /* allocator hooks (in_use unused here) */
  uint32_t max_recv_control_frame;
  uint32_t max_header_block;
  uint32_t data_frame_size;
  uint32_t stream_window;
  uint32_t session_window;
  uint32_t max_concurrent_streams;
  int manual_flow_control;
  uint32_t max_queued_control_frames;
  uint32_t max_pending_streams;
  int deflate_level;
  int deflate_window_bits;
  int deflate_mem_level;
  int send_initial_settings;
  int frame_summaries; /* format on_frame's summary */
  int v3_autodetect;   /* SPDY/3.1 sessions start undecided between 3 and 3.1 */
};

struct spdy_callbacks {
  spdy_on_begin_headers_fn on_begin_headers;
  spdy_on_header_fn on_header;
  spdy_on_headers_end_fn on_headers_end;
  spdy_on_data_chunk_fn on_data_chunk;
  spdy_on_data_end_fn on_data_end;
  spdy_on_stream_close_fn on_stream_close;
  spdy_on_ping_ack_fn on_ping_ack;
  spdy_on_goaway_fn on_goaway;
  spdy_on_setting_fn on_setting;
  spdy_on_frame_fn on_frame;
  spdy_on_send_data_fn on_send_data;
  spdy_on_window_update_fn on_window_update;
  spdy_on_frame_not_sent_fn on_frame_not_sent;
};

void spdy_options_init_default(spdy_options *options);

/* Where a stream's outgoing body stands. */
typedef enum spdy_data_state {
  SPDY_DATA_NONE = 0, /* no body to send (or not yet submitted) */
  SPDY_DATA_WAITING,  /* body submitted; its opening frame is not serialised yet */
  SPDY_DATA_ACTIVE,   /* in the scheduler */
  SPDY_DATA_DEFERRED, /* source said not ready: waits for resume_data */
  SPDY_DATA_BLOCKED   /* flow control window exhausted: waits for WINDOW_UPDATE */
} spdy_data_state;

typedef struct spdy_stream spdy_stream;
struct spdy_stream {
  int32_t id;
  int32_t associated_id;
  uint8_t urgency;       /* 0 most urgent .. 7 */
  uint8_t local_closed;  /* we sent FIN, or we may never send (inbound push) */
  uint8_t remote_closed; /* peer sent FIN, or it may never send (our push) */
  uint8_t locally_initiated;
  uint8_t opened_on_wire;  /* our SYN_STREAM was serialised (locally initiated) */
  uint8_t reply_done;      /* server: SYN_REPLY submitted; client: SYN_REPLY received */
  uint8_t response_seen;   /* client: :status received (SYN_REPLY or push HEADERS) */
  uint8_t data_state;      /* spdy_data_state */
  uint8_t waiting_slot;    /* ours, its SYN_STREAM waits for a concurrency slot */
  uint32_t headers_queued; /* header-bearing frames queued, not yet serialised: a stream
                            * done in both directions closes only when they are out */
  int64_t send_window;     /* may go negative after SETTINGS (v3 2.6.8) */
  int64_t recv_window;     /* what the peer may still send on this stream */
  uint32_t recv_unacked;   /* consumed, not yet returned with WINDOW_UPDATE */
  spdy_data_read_fn read_fn;
  void *source;
  void *user;
  spdy_stream *hash_next;               /* stream table chain */
  spdy_stream *sched_prev, *sched_next; /* urgency list while ACTIVE */
};

/* A control frame waiting to be serialised. Header-bearing frames carry their header
 * list checked and laid out as the uncompressed block; it is compressed only when the
 * frame is serialised, in output order. */
typedef struct spdy_outframe spdy_outframe;
struct spdy_outframe {
  spdy_outframe *next;
  uint8_t type; /* spdy_frame_type */
  uint8_t flags;
  uint8_t peer_owed; /* counted against max_queued_control_frames */
  uint8_t priority;  /* SYN_STREAM: wire priority */
  int32_t stream_id;
  int32_t associated_id;
  uint8_t *block;   /* the uncompressed header block (after the record, one allocation) */
  size_t block_len; /* 0 and NULL for fixed frames */
  size_t n_headers; /* fields submitted (for the trace) */
  size_t fixed_len; /* pre-encoded frame for frames without header blocks */
  uint8_t fixed[8 + 4 + 8 * (SPDY_SETTINGS_MAX_ID + 1)];
};

/* A stream of ours waiting for a concurrency slot; its SYN frame is kept here. */
typedef struct spdy_pending spdy_pending;
struct spdy_pending {
  spdy_pending *next;
  spdy_outframe *syn; /* its SYN_STREAM, owned */
};

/* Input parser states. */
typedef enum spdy_recv_state {
  SPDY_RECV_HEAD,    /* collecting the 8-byte frame header */
  SPDY_RECV_CONTROL, /* collecting a control frame's payload into inbuf */
  SPDY_RECV_DATA,    /* passing DATA payload to the application */
  SPDY_RECV_DISCARD, /* skipping a payload (unknown type, dead stream) */
  SPDY_RECV_DEAD     /* after a fatal error: input is ignored */
} spdy_recv_state;

typedef struct spdy_ping_record {
  uint32_t id;
  int64_t sent_ns;
} spdy_ping_record;

struct spdy_session {
  spdy_mem mem;
  spdy_options options;
  spdy_callbacks callbacks;
  void *user;
  spdy_protocol protocol;
  spdy_role role;
  int wire_version; /* 2 or 3 */
  int64_t now_ns;

  /* Header compression: one context per direction. */
  spdy_hdblock_deflater deflater;
  spdy_hdblock_inflater inflater;

  /* Streams. */
  spdy_stream **buckets;
  spdy_stream *last_found; /* spdy_stream_find's last answer (callbacks ask for one stream
                            * many times in a row); NULL once that stream is unlinked */
  uint32_t n_buckets;      /* power of two */
  uint32_t n_streams;
  uint32_t n_local_open;          /* streams we initiated that count against the peer's limit */
  uint32_t n_remote_open;         /* streams the peer initiated that count against ours */
  int64_t next_stream_id;         /* 64 bits: it passes 2^31-1 once the ids run out */
  int32_t last_recv_stream_id;    /* highest peer stream we processed (GOAWAY last-good) */
  int32_t highest_peer_stream_id; /* highest peer stream id seen, processed or ignored */
  int32_t highest_local_id_sent;

  /* Peer's settings as applied. */
  uint32_t remote_max_concurrent;
  int64_t remote_initial_window;
  int64_t remote_settings[SPDY_SETTINGS_MAX_ID + 1]; /* -1: never sent */

  /* Flow control, session level (v3.1). */
  int64_t session_send_window;
  int64_t session_recv_window;
  uint32_t session_recv_unacked;
  /* Undecided between SPDY/3 and /3.1 (spdy_options_set_v3_autodetect): protocol says
   * 3.1, no WINDOW_UPDATE on stream 0 goes out, and stream credit the peer returned
   * is counted as evidence. */
  uint8_t v3_undecided;
  uint64_t v3_stream_credit;
  uint32_t local_initial_window; /* our stream receive window */
  /* The largest initial window the peer may still believe in: the protocol's 64 KiB or
   * the largest we announced. SPDY has no SETTINGS acknowledgement, so DATA sent before
   * the peer saw a smaller window must not be punished (see begin_data). */
  uint32_t max_local_initial_window;

  /* Output. */
  spdy_buf outbuf;
  spdy_outframe *ctrl_head, *ctrl_tail;
  uint32_t n_ctrl_owed;
  spdy_pending *pending_head, *pending_tail;
  uint32_t n_pending;
  spdy_stream *sched_head[SPDY_URGENCY_LEVELS];
  spdy_stream *sched_tail[SPDY_URGENCY_LEVELS];
  uint32_t n_sched;
  /* A zero-copy DATA frame decided while output was still buffered. */
  int32_t nocopy_stream_id;
  size_t nocopy_len;
  uint8_t nocopy_header[SPDY_FRAME_HEADER_LEN];
  void *nocopy_source;
  uint8_t send_holding; /* spdy_session_send holds copied bytes not yet written */

  /* Input. */
  spdy_recv_state recv_state;
  uint8_t head[SPDY_FRAME_HEADER_LEN];
  size_t head_len;
  spdy_frame_hd frame;
  spdy_buf inbuf;
  uint32_t payload_left; /* DATA / DISCARD bytes still to come */
  int32_t data_stream_id;
  uint8_t data_deliver;     /* 1: pass DATA payload to the application */
  uint8_t in_recv;          /* inside spdy_session_recv (callbacks answer peer input) */
  uint32_t data_credit;     /* bytes of this DATA frame to credit when it ends */
  uint64_t recv_frames;     /* frames whose header was read (spdy_session_recv_frames) */
  uint64_t recv_data_bytes; /* DATA payload bytes read, delivered or not */

  /* PING. */
  uint32_t next_ping_id;
  spdy_ping_record pings[SPDY_MAX_OUTSTANDING_PINGS];

  /* The stream being closed, while on_stream_close runs (its user data stays readable). */
  int32_t closing_stream_id;
  void *closing_stream_user;

  /* Shutdown. */
  uint8_t goaway_sent;
  uint8_t goaway_received;
  int fatal_error; /* 0, or the fatal SPDY_ERR_* that ended the session */
};

/* ---- stream.c ---- */
int spdy_stream_table_init(spdy_session *session);
void spdy_stream_table_free(spdy_session *session);
spdy_stream *spdy_stream_find(const spdy_session *session, int32_t id);
/* Creates and inserts a stream with windows from the current settings. */
spdy_stream *spdy_stream_create(spdy_session *session, int32_t id, int locally_initiated);
/* Removes the stream, tells the application (on_stream_close) and frees it. Returns the
 * callback's verdict (0 or SPDY_ERR_CALLBACK_FAILURE). */
int spdy_stream_close(spdy_session *session, spdy_stream *stream, uint32_t status);
/* Closes the stream if both directions are done. */
int spdy_stream_close_if_done(spdy_session *session, spdy_stream *stream);
/* Frees every stream without callbacks (session deletion). */
void spdy_stream_free_all(spdy_session *session);

/* ---- session_send.c: scheduler ---- */
void spdy_sched_add(spdy_session *session, spdy_stream *stream);
void spdy_sched_remove(spdy_session *session, spdy_stream *stream);

/* ---- session.c: queue and shared helpers ---- */
/* Allocates a zeroed control frame without a header block. NULL on NOMEM. */
spdy_outframe *spdy_outframe_new(spdy_session *session, int type);
void spdy_outframe_free(spdy_session *session, spdy_outframe *frame);
/* Appends to the control queue. peer_owed frames count towards the flood cap: returns
 * SPDY_ERR_FLOOD (frame freed) when the cap is reached. */
int spdy_queue_control(spdy_session *session, spdy_outframe *frame, int peer_owed);
int spdy_queue_rst(spdy_session *session, int32_t stream_id, uint32_t status, int peer_owed);
int spdy_queue_window_update(spdy_session *session, int32_t stream_id, uint32_t delta);
/* Queues GOAWAY once (later calls do nothing). */
int spdy_queue_goaway(spdy_session *session, uint32_t status);
/* Ends the session for a fatal error: GOAWAY with status, input ignored from now on.
 * Returns error. */
int spdy_session_fail(spdy_session *session, int error, uint32_t goaway_status);
/* Drops the pending entry of stream_id if it still waits for a slot; returns 1 if found. */
int spdy_session_drop_pending(spdy_session *session, int32_t stream_id);
/* Moves pending streams into the control queue while the peer's limit allows. */
int spdy_session_start_pending(spdy_session *session);
/* Settles an undecided session (v3_undecided) as SPDY/3 or /3.1. */
int spdy_session_settle(spdy_session *session, spdy_protocol protocol);
/* Settles an undecided session as SPDY/3 if our session window is used up and the peer
 * returned half of it in stream credit without a session WINDOW_UPDATE, which a 3.1 peer
 * sends by then. */
int spdy_session_settle_by_credit(spdy_session *session);
/* Credits consumed receive bytes; queues WINDOW_UPDATEs when half a window is due. */
int spdy_session_credit(spdy_session *session, int32_t stream_id, size_t n);
/* Wire priority for an urgency, and back. */
uint8_t spdy_urgency_to_wire(const spdy_session *session, int urgency);
uint8_t spdy_urgency_from_wire(const spdy_session *session, uint8_t priority);
/* Frame trace, if the application asked for it. */
void spdy_trace(spdy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                uint32_t length, const char *summary);

#endif
