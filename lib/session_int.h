/* session_int.h — the session core's private state, shared by the core modules and the
 * codecs (codec.h says who owns what):
 *
 *   options.c       speedy_options and speedy_callbacks objects
 *   stream.c        stream table (hash by id) and stream lifetime
 *   session.c       create/delete, accessors, the frame queue, credit, budgets
 *   submit.c        every speedy_submit_* function
 *   session_recv.c  what received frames mean, in protocol-neutral helpers for codecs
 *   session_send.c  output: queued frames first (each checked again), then DATA by
 *                   urgency within flow control
 *
 * Nothing here is public. Pointers to streams are never held across an application
 * callback: callbacks may reset or close streams, so code looks streams up again by id.
 */
#ifndef SPEEDY_LIB_SESSION_INT_H
#define SPEEDY_LIB_SESSION_INT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "codec.h"
#include "h2_codec.h"
#include "mem.h"
#include "spdy_codec.h"
#include "speedy/speedy.h"

#define SPEEDY_URGENCY_LEVELS 8
#define SPEEDY_DEFAULT_WINDOW 65536
#define SPEEDY_MAX_WINDOW_SIZE 0x7fffffff
#define SPEEDY_MAX_OUTSTANDING_PINGS 8
#define SPEEDY_MAX_DATA_HEADER_LEN 9
/* Settings a session remembers: SPDY's ids 1-8, then the HTTP/2-only ones. */
#define SPEEDY_SETTING_SLOTS (SPEEDY_SETTINGS_MAX_ID + 1 + 6)
/* Streams whose closing the session remembers (how it ended), and apart from them the
 * streams we reset: other streams closing never push those out, so frames the peer sent
 * before it saw our RST_STREAM are ignored even when many streams close meanwhile. The
 * resets' memory starts inside the session and grows, once a session has reset more
 * streams than that (a client cancelling a page's requests), up to SPEEDY_RESET_MEMORY_MAX
 * ids (2 KiB). */
#define SPEEDY_CLOSED_MEMORY 32
#define SPEEDY_RESET_MEMORY 32
#define SPEEDY_RESET_MEMORY_MAX 512

struct speedy_options {
  speedy_mem mem; /* allocator hooks (in_use unused here) */
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
  uint8_t stream_window_set, session_window_set; /* else HTTP/2 keeps its 65,535 */
  /* HTTP/2 */
  uint32_t max_frame_size;    /* SETTINGS_MAX_FRAME_SIZE we announce */
  uint32_t header_table_size; /* SETTINGS_HEADER_TABLE_SIZE we announce */
  int enable_push;            /* client: accept pushes */
  uint32_t max_continuations; /* CONTINUATION frames in one field block */
  int64_t settings_timeout_ns;
  uint32_t reset_burst, reset_rate;             /* rapid-reset budget */
  uint32_t empty_frame_burst, empty_frame_rate; /* frames that carry nothing */
};

struct speedy_callbacks {
  speedy_on_begin_headers_fn on_begin_headers;
  speedy_on_header_fn on_header;
  speedy_on_headers_end_fn on_headers_end;
  speedy_on_data_chunk_fn on_data_chunk;
  speedy_on_data_end_fn on_data_end;
  speedy_on_stream_close_fn on_stream_close;
  speedy_on_ping_ack_fn on_ping_ack;
  speedy_on_goaway_fn on_goaway;
  speedy_on_setting_fn on_setting;
  speedy_on_frame_fn on_frame;
  speedy_on_send_data_fn on_send_data;
  speedy_on_window_update_fn on_window_update;
  speedy_on_frame_not_sent_fn on_frame_not_sent;
};

void speedy_options_init_default(speedy_options *options);

/* Where a stream's outgoing body stands. */
typedef enum speedy_data_state {
  SPEEDY_DATA_NONE = 0, /* no body to send (or not yet submitted) */
  SPEEDY_DATA_WAITING,  /* body submitted; its opening frame is not serialised yet */
  SPEEDY_DATA_ACTIVE,   /* in the scheduler */
  SPEEDY_DATA_DEFERRED, /* source said not ready: waits for resume_data */
  SPEEDY_DATA_BLOCKED   /* flow control window exhausted: waits for WINDOW_UPDATE */
} speedy_data_state;

typedef struct speedy_stream speedy_stream;
struct speedy_stream {
  int32_t id;
  int32_t associated_id;
  uint8_t urgency;       /* 0 most urgent .. 7 */
  uint8_t incremental;   /* shares its urgency round-robin (RFC 9218) */
  uint8_t local_closed;  /* we sent FIN, or we may never send (inbound push) */
  uint8_t remote_closed; /* peer sent FIN, or it may never send (our push) */
  uint8_t locally_initiated;
  uint8_t opened_on_wire;  /* our opening header block was serialised (locally initiated) */
  uint8_t reply_done;      /* server: response submitted; client: SYN_REPLY received */
  uint8_t response_seen;   /* client: final :status received */
  uint8_t reserved;        /* HTTP/2: promised, its response headers not yet sent or seen */
  uint8_t reset_sent;      /* we queued RST_STREAM for it */
  uint8_t data_state;      /* speedy_data_state */
  uint8_t waiting_slot;    /* ours, its opening frame waits for a concurrency slot */
  uint8_t head_request;    /* client: we asked with HEAD (the response has no content) */
  uint8_t no_content;      /* the received message may not carry content (204, 304, HEAD) */
  uint8_t priority_owed;   /* waiting_slot: 0x80 | incremental << 3 | urgency, a
                            * PRIORITY_UPDATE to send after its opening HEADERS */
  uint32_t headers_queued; /* header-bearing frames queued, not yet serialised: a stream
                            * done in both directions closes only when they are out */
  int64_t content_length;  /* received content-length, -1 when none */
  uint64_t data_received;  /* DATA payload received */
  int64_t send_window;     /* may go negative after SETTINGS */
  int64_t recv_window;     /* what the peer may still send on this stream */
  uint32_t recv_unacked;   /* consumed, not yet returned with WINDOW_UPDATE */
  uint32_t recv_granted;   /* window the application added beyond the initial one: credit
                            * returns are due at half of initial + granted */
  uint32_t recv_held;      /* manual flow control: DATA delivered, not yet consumed */
  speedy_data_read_fn read_fn;
  void *source;
  void *user;
  speedy_stream *hash_next;               /* stream table chain */
  speedy_stream *sched_prev, *sched_next; /* urgency list while ACTIVE */
};

/* A frame waiting to be serialised, in neutral terms (codec.h). Header-bearing frames
 * carry their header list checked and laid out by the codec; it is compressed only when
 * the frame is serialised, in output order. */
struct speedy_outframe {
  speedy_outframe *next;
  uint8_t kind;       /* speedy_out_kind */
  uint8_t role;       /* SPEEDY_OUT_HEADERS: speedy_block_role */
  uint8_t end_stream; /* SPEEDY_OUT_HEADERS: the block ends our side of the stream */
  uint8_t peer_owed;  /* counted against max_queued_control_frames */
  uint8_t urgency;    /* opening blocks: the stream's urgency */
  uint8_t flags;      /* SPEEDY_OUT_SETTINGS: the frame flags the application gave */
  uint8_t n_settings;
  uint8_t has_value;    /* SETTINGS_ACK: value is a table size to apply then; PING: opaque */
  uint8_t head_request; /* a request with the HEAD method (its response has no content) */
  uint8_t no_content;   /* HTTP/2: a 204 or 304 response, which no DATA may follow */
  int32_t stream_id;
  int32_t associated_id;     /* pushes and promises: the stream they belong to */
  uint32_t reason;           /* RST, GOAWAY: speedy_rst_status */
  uint32_t value;            /* delta, ping id, last stream id, table size */
  uint32_t smallest_value;   /* SETTINGS_ACK: the smallest table size the frame gave */
  uint8_t opaque[8];         /* HTTP/2 PING payload */
  uint8_t *block;            /* laid-out header list or debug data (after the record) */
  speedy_fieldset *fieldset; /* HEADERS of a prepared response: a reference, released
                                with the frame */
  size_t block_len;          /* 0 and NULL for fixed frames */
  size_t n_headers;          /* fields submitted (for the trace) */
  speedy_setting settings[SPEEDY_SETTINGS_MAX_ID + 1];
};

/* A stream of ours waiting for a concurrency slot; its opening frame is kept here. */
typedef struct speedy_pending speedy_pending;
struct speedy_pending {
  speedy_pending *next;
  speedy_outframe *syn; /* its opening header block, owned */
};

/* A token bucket: burst tokens, refilled at rate per second of the application's clock. */
typedef struct speedy_budget {
  uint32_t tokens;
  uint32_t burst;
  uint32_t rate;
  int64_t refilled_ns;
} speedy_budget;

typedef struct speedy_ping_record {
  uint32_t id;
  int64_t sent_ns;
} speedy_ping_record;

struct speedy_session {
  speedy_mem mem;
  speedy_options options;
  speedy_callbacks callbacks;
  void *user;
  speedy_protocol protocol;
  speedy_role role;
  const speedy_codec *codec;
  speedy_codec_caps caps; /* the codec's, copied at creation */
  int64_t now_ns;

  /* The codec's own state. */
  union {
    spdy_codec_state spdy;
    speedy_h2_state h2;
  } wire;

  /* Streams. */
  speedy_stream **buckets;
  speedy_stream *last_found; /* speedy_stream_find's last answer (callbacks ask for one stream
                              * many times in a row); NULL once that stream is unlinked */
  uint32_t n_buckets;        /* power of two */
  uint32_t n_streams;
  uint32_t n_local_open;          /* streams we initiated that count against the peer's limit */
  uint32_t n_remote_open;         /* streams the peer initiated that count against ours */
  int64_t next_stream_id;         /* 64 bits: it passes 2^31-1 once the ids run out */
  int32_t last_recv_stream_id;    /* highest peer stream we processed (GOAWAY last-good) */
  int32_t highest_peer_stream_id; /* highest peer stream id seen, processed or ignored */
  int32_t highest_local_on_wire;  /* highest id of ours the peer has seen */
  int32_t closed[SPEEDY_CLOSED_MEMORY]; /* streams closed otherwise (ids; 0: none) */
  uint32_t closed_next;
  int32_t reset_inline[SPEEDY_RESET_MEMORY]; /* the resets' memory until it grows */
  int32_t *reset;      /* streams we sent RST_STREAM on (ids; 0: none), a ring */
  uint32_t reset_cap;  /* its size: SPEEDY_RESET_MEMORY to SPEEDY_RESET_MEMORY_MAX */
  uint32_t reset_next; /* resets remembered so far (the ring's next slot, modulo) */

  /* Peer's settings as applied. */
  uint32_t remote_max_concurrent;
  int64_t remote_initial_window;
  uint32_t send_max_frame;                       /* the largest frame payload the peer accepts */
  int64_t remote_settings[SPEEDY_SETTING_SLOTS]; /* -1: never sent */

  /* Flow control, session level. */
  int64_t session_send_window;
  int64_t session_recv_window;
  uint32_t session_recv_unacked;
  uint32_t session_recv_granted; /* added by speedy_submit_window_update(0, ...) */
  uint8_t hold_session_credit;   /* no WINDOW_UPDATE on stream 0 for now (SPDY autodetect) */
  uint32_t local_initial_window; /* our stream receive window in force */
  /* The largest initial window the peer may still believe in: the protocol's default or
   * the largest we announced. Without SETTINGS acknowledgement, DATA sent before the
   * peer saw a smaller window must not be punished (the SPDY codec's recv_window_slack). */
  uint32_t max_local_initial_window;

  /* Defences (used by codecs whose protocol calls for them). */
  speedy_budget reset_budget;
  speedy_budget empty_frame_budget;

  /* Output. */
  speedy_buf outbuf;
  speedy_outframe *ctrl_head, *ctrl_tail;
  uint32_t n_ctrl_owed;
  speedy_pending *pending_head, *pending_tail;
  uint32_t n_pending;
  speedy_stream *sched_head[SPEEDY_URGENCY_LEVELS];
  speedy_stream *sched_tail[SPEEDY_URGENCY_LEVELS];
  /* A zero-copy DATA frame decided while output was still buffered. */
  int32_t nocopy_stream_id;
  size_t nocopy_len;
  uint8_t nocopy_header[SPEEDY_MAX_DATA_HEADER_LEN];
  void *nocopy_source;
  size_t nocopy_written;     /* octets on_send_data wrote during this fill of the output */
  uint8_t send_holding;      /* speedy_session_send holds copied bytes not yet written */
  int32_t reading_stream_id; /* the stream whose read_fn is running */

  /* Input shared by codecs: one frame's payload, and the DATA frame being delivered. */
  speedy_buf inbuf;
  uint32_t payload_left; /* DATA / discarded bytes still to come */
  int32_t data_stream_id;
  uint8_t data_deliver;     /* 1: pass DATA payload to the application */
  uint8_t in_recv;          /* inside speedy_session_recv (callbacks answer peer input) */
  uint32_t data_credit;     /* bytes of this DATA frame to credit when it ends */
  uint8_t in_data_chunk;    /* inside on_data_chunk: consume of this frame waits for its end */
  uint64_t recv_frames;     /* frames whose header was read (speedy_session_recv_frames) */
  uint64_t recv_data_bytes; /* DATA payload bytes read, delivered or not */

  /* PING. */
  uint32_t next_ping_id;
  speedy_ping_record pings[SPEEDY_MAX_OUTSTANDING_PINGS];

  /* The stream being closed, while on_stream_close runs (its user data stays readable). */
  int32_t closing_stream_id;
  void *closing_stream_user;

  /* Shutdown. */
  uint8_t goaway_sent;     /* no new streams: GOAWAY queued (its final one, HTTP/2) */
  uint8_t goaway_draining; /* HTTP/2 server: GOAWAY(2^31-1) sent, the final one not yet */
  uint8_t goaway_received;
  uint32_t goaway_reason; /* the peer's last GOAWAY, neutral */
  uint8_t goaway_debug[128];
  size_t goaway_debug_len;
  int fatal_error; /* 0, or the fatal SPEEDY_ERR_* that ended the session (input ignored) */
};

/* ---- stream.c ---- */
int speedy_stream_table_init(speedy_session *session);
void speedy_stream_table_free(speedy_session *session);
speedy_stream *speedy_stream_find(const speedy_session *session, int32_t id);
/* Creates and inserts a stream with windows from the current settings. */
speedy_stream *speedy_stream_create(speedy_session *session, int32_t id, int locally_initiated);
/* Removes the stream, tells the application (on_stream_close) and frees it. Returns the
 * callback's verdict (0 or SPEEDY_ERR_CALLBACK_FAILURE). */
int speedy_stream_close(speedy_session *session, speedy_stream *stream, uint32_t status);
/* Closes the stream if both directions are done. */
int speedy_stream_close_if_done(speedy_session *session, speedy_stream *stream);
/* Frees every stream without callbacks (session deletion). */
void speedy_stream_free_all(speedy_session *session);
/* How a stream no longer in the table ended, if the session still remembers: 1 and
 * *reset_by_us, or 0. */
int speedy_stream_closed_recently(const speedy_session *session, int32_t id, int *reset_by_us);
/* Remembers id as reset by us though no stream of that id existed (refused, malformed). */
void speedy_stream_remember_reset(speedy_session *session, int32_t id);
/* Frees the resets' memory when it grew (speedy_session_del). */
void speedy_stream_forget_resets(speedy_session *session);

/* ---- session_send.c: scheduler ---- */
void speedy_sched_add(speedy_session *session, speedy_stream *stream);
void speedy_sched_remove(speedy_session *session, speedy_stream *stream);

/* ---- session.c: queue and shared helpers ---- */
/* Allocates a zeroed frame with room for extra bytes behind it (block points there when
 * extra > 0). NULL on NOMEM. */
speedy_outframe *speedy_outframe_new(speedy_session *session, int kind, size_t extra);
void speedy_outframe_free(speedy_session *session, speedy_outframe *frame);
/* Appends to the queue. peer_owed frames count towards the flood cap: returns
 * SPEEDY_ERR_FLOOD (frame freed) when the cap is reached. */
int speedy_queue_control(speedy_session *session, speedy_outframe *frame, int peer_owed);
int speedy_queue_rst(speedy_session *session, int32_t stream_id, uint32_t reason, int peer_owed);
/* HTTP/2 client: queues PRIORITY_UPDATE for one of our streams (RFC 9218 7.1). */
int speedy_queue_priority_update(speedy_session *session, int32_t stream_id, uint8_t urgency,
                                 int incremental);
int speedy_queue_window_update(speedy_session *session, int32_t stream_id, uint32_t delta);
/* Queues GOAWAY with our last processed peer stream, once (later calls do nothing). */
int speedy_queue_goaway(speedy_session *session, uint32_t reason, const char *debug);
/* The same with debug data of a given length (HTTP/2; cut to SPEEDY_GOAWAY_DEBUG_MAX). */
int speedy_queue_goaway_bytes(speedy_session *session, uint32_t reason, const uint8_t *debug,
                              size_t debug_len);
/* The most debug data a GOAWAY of ours carries. */
#define SPEEDY_GOAWAY_DEBUG_MAX 128
/* Ends the session for a fatal error: GOAWAY with reason (neutral), input ignored from
 * now on. Returns error. */
int speedy_session_fail(speedy_session *session, int error, uint32_t reason);
/* The same with a short reason for the GOAWAY's debug data (HTTP/2). */
int speedy_session_fail_debug(speedy_session *session, int error, uint32_t reason,
                              const char *debug);
/* Drops the pending entry of stream_id if it still waits for a slot; returns 1 if found. */
int speedy_session_drop_pending(speedy_session *session, int32_t stream_id);
/* Moves pending streams into the queue while the peer's limit allows. */
int speedy_session_start_pending(speedy_session *session);
/* Credits consumed receive bytes; queues WINDOW_UPDATEs when half a window is due. */
int speedy_session_credit(speedy_session *session, int32_t stream_id, size_t n);
/* Returns held-back session credit once half the session window is due. */
int speedy_session_return_session_credit(speedy_session *session);
/* Our own settings take effect (at once, or when the peer acknowledged them). */
void speedy_session_apply_local_settings(speedy_session *session, const speedy_setting *settings,
                                         size_t n);
/* Where a neutral setting id is remembered, or -1. */
int speedy_setting_slot(uint32_t id);
/* Takes a token from a budget, refilled by the application's clock. 1: taken; 0: empty. */
int speedy_budget_take(speedy_session *session, speedy_budget *budget);
/* With no streams, and outside speedy_session_recv (whose callbacks run while input
 * buffers are in use): gives back the empty input buffer and what the codec keeps only
 * for busy sessions, so idle sessions stay small. (The output buffer is given back when
 * the application takes the last bytes: a client that just read a response is about to
 * send its next request.) */
void speedy_session_trim_idle(speedy_session *session);
/* Frame trace, if the application asked for it. */
void speedy_trace(speedy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                  uint32_t length, const char *summary);
/* Is id one the peer opens (clients odd, servers even)? */
int speedy_session_is_peer_id(const speedy_session *session, int32_t id);

/* ---- session_recv.c: what received frames mean, for codecs ---- */
/* Ends the session for an error: callbacks and memory as INTERNAL_ERROR, a flood as
 * ENHANCE_YOUR_CALM (SPDY says PROTOCOL_ERROR), everything else as PROTOCOL_ERROR. Returns
 * error. */
int speedy_session_fail_with(speedy_session *session, int error);
/* Resets a stream for the peer's mistake: RST_STREAM (counted against the flood cap), then
 * the stream is closed if we have it. Returns 0 or a fatal error (session failed). */
int speedy_session_reset_stream(speedy_session *session, int32_t stream_id, uint32_t reason);
/* A header block for the application: on_begin_headers, then fields, then
 * on_headers_end. Returns 0 or a fatal error (session failed). */
int speedy_session_emit_begin(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                              int32_t associated_id);
int speedy_session_emit_field(speedy_session *session, int32_t stream_id,
                              const speedy_header *field);
int speedy_session_emit_end(speedy_session *session, int32_t stream_id, int end_stream);
/* Closes the stream if both directions are done, after callbacks that may have closed it. */
int speedy_session_settle_stream(speedy_session *session, int32_t stream_id);
/* A DATA frame's payload starts: deliver (1) its bytes to stream_id, or only account for
 * them (0). */
void speedy_session_data_start(speedy_session *session, int32_t stream_id, uint32_t payload,
                               int deliver);
/* Passes n payload bytes on (or drops them). Returns 0, SPEEDY_ERR_PAUSE or fatal. */
int speedy_session_data_chunk(speedy_session *session, const uint8_t *p, size_t n);
/* The DATA frame ended: credit it (plus extra bytes that were never payload, such as
 * padding), then, when end_stream, the peer's side is done. */
int speedy_session_data_end(speedy_session *session, int end_stream, uint32_t extra_credit);
/* Our PING came back (unknown ids are ignored). */
int speedy_session_ping_acked(speedy_session *session, uint32_t id);
/* The peer sent GOAWAY: on_goaway with status, then our streams above last_id are closed
 * with REFUSED_STREAM. */
int speedy_session_goaway_received(speedy_session *session, int32_t last_id);
/* Applies a WINDOW_UPDATE the codec checked (no overflow): stream 0 is the session. */
int speedy_session_window_update(speedy_session *session, int32_t stream_id, uint32_t delta);
/* The peer's INITIAL_WINDOW_SIZE: every stream's send window moves by the change. Returns
 * the id of a stream whose window passed 2^31-1, or 0: with count_finished 0 (SPDY) only
 * streams we still send on count; HTTP/2 counts every window (RFC 9113 6.9.2). */
int32_t speedy_session_peer_initial_window(speedy_session *session, uint32_t value,
                                           int count_finished);
/* The peer's MAX_CONCURRENT_STREAMS. Returns 0 or a fatal error. */
int speedy_session_peer_max_concurrent(speedy_session *session, uint32_t value);
/* on_setting for one entry the codec applied. */
int speedy_session_report_setting(speedy_session *session, uint32_t id, uint8_t flags,
                                  uint32_t value);
/* Reports a received frame to on_frame; the summary is formatted only when someone
 * listens and wants it. */
void speedy_session_trace_recv(speedy_session *session, int type, uint8_t flags, int32_t stream_id,
                               uint32_t length, const char *format, ...)
    __attribute__((format(printf, 6, 7)));

#endif
