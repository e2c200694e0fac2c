/* pair.h — in-memory SPDY endpoints for engine tests.
 *
 * A test_peer wraps one speedy_session with recording callbacks: every event becomes a
 * line in a text log ("begin 1 request", "header 1 :method=GET", "data 1 5", ...) and
 * body bytes are collected per stream. test_pump moves bytes between two peers in chunks
 * of a chosen size (1 = byte at a time) until both are quiet, so a test can compare the
 * logs of one-buffer and byte-at-a-time runs.
 *
 * Sessions use the counting allocator: after deleting every peer a test asserts
 * test_alloc_live() == 0.
 */
#ifndef SPEEDY_TEST_PAIR_H
#define SPEEDY_TEST_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "speedy/speedy.h"

/* A body served from memory (or generated: data == NULL gives bytes i % 251). */
typedef struct test_body {
  const uint8_t *data;
  size_t len;
  size_t offset;
  int defer_once; /* first read answers SPEEDY_ERR_DEFERRED */
} test_body;

/* Bytes received on one stream. */
typedef struct test_stream_rx {
  int32_t id;
  uint8_t *data;
  size_t len, cap;
  uint32_t close_status; /* valid when closed */
  int closed;
  int fin;
} test_stream_rx;

typedef struct test_peer test_peer;
typedef void (*test_request_fn)(test_peer *peer, int32_t stream_id);
/* Called after a header block's start was logged (test_peer.on_begin). */
typedef void (*test_begin_fn)(test_peer *peer, int32_t stream_id, speedy_headers_kind kind,
                              int32_t associated_id);

/* One frame seen by the frame trace (test_peer.trace). For received control frames the
 * stream id is taken from the trace summary ("stream=N"). delta: WINDOW_UPDATE only. */
typedef struct test_frame_rec {
  int sent;
  int type;
  uint8_t flags;
  int32_t stream_id;
  uint32_t length;
  uint32_t delta;
  char summary[64]; /* the trace's summary, truncated */
} test_frame_rec;

/* Flow-control account of one stream (id 0: the whole session) kept by the trace. */
typedef struct test_flow {
  int32_t id;
  uint64_t data_sent, data_recv; /* DATA payload bytes */
  uint64_t wu_sent, wu_recv;     /* WINDOW_UPDATE deltas */
  uint32_t frames_sent, frames_recv;
  int64_t min_send_window; /* smallest engine send window seen after a DATA frame */
} test_flow;

struct test_peer {
  speedy_session *session;
  char *log;
  size_t log_len, log_cap;
  int log_data;      /* 1: log every data chunk ("data <id> <n>") */
  int coalesce_data; /* 1: merge consecutive chunks of one stream in the log */
  test_stream_rx *rx;
  size_t n_rx, cap_rx;
  test_request_fn on_request; /* server: called at the end of request headers */
  size_t response_size;       /* default responder: body size */
  test_body **bodies;         /* bodies handed to sources, freed with the peer */
  size_t n_bodies, cap_bodies;
  int pause_data;   /* on_data_chunk returns SPEEDY_ERR_PAUSE */
  int consume_data; /* on_data_chunk credits the chunk (speedy_session_consume) */
  uint32_t pings_acked;
  int goaway_seen;
  int32_t goaway_last_good;
  uint32_t goaway_status;
  int32_t *data_order; /* stream id of every DATA chunk received, in order */
  size_t n_data_order, cap_data_order;
  /* Frame trace and window checks (off unless test_peer_trace was called). */
  int trace;
  test_frame_rec *frames;
  size_t n_frames, cap_frames;
  test_flow *flows;
  size_t n_flows, cap_flows;
  uint32_t flow_stream_window; /* per-stream window this peer granted (receiver check) */
  uint32_t flow_max_frame;     /* largest DATA payload this peer may send; 0: unchecked */
  int flow_allow_negative;     /* 1: a send window below 0 is expected (SETTINGS cut) */
  size_t flow_violations;
  char flow_error[256]; /* the first violation */
  test_begin_fn on_begin;
  /* Zero-copy output: what on_send_data wrote (frame header + payload), in order. */
  uint8_t *side;
  size_t side_len, side_cap;
};

/* options may be NULL: defaults plus the counting allocator. The peer keeps nothing of
 * options after creation. */
test_peer *test_peer_new(speedy_protocol protocol, speedy_role role, speedy_options *options);
/* Deletes the session and the peer. */
void test_peer_del(test_peer *peer);

/* Body source reading a test_body (source). */
int64_t test_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                       uint32_t *flags, void *source, void *user);
/* A body owned by the peer: data copied by reference (must outlive the peer) or NULL. */
test_body *test_peer_body(test_peer *peer, const uint8_t *data, size_t len);

/* The default responder: 200 with response_size bytes (generated). */
void test_respond_default(test_peer *peer, int32_t stream_id);

/* Client: a GET for path with urgency; returns the stream id. body_len > 0 adds a body. */
int32_t test_get(test_peer *client, const char *path, int urgency);
int32_t test_post(test_peer *client, const char *path, size_t body_len);

/* Moves bytes both ways in chunks of at most chunk bytes until neither side has output
 * (bounded by a round limit). Returns the total bytes moved, or a negative error from recv/send. */
int64_t test_pump(test_peer *a, test_peer *b, size_t chunk);

/* Feeds raw bytes to a peer in chunks; returns the last recv result (bytes or error). */
int64_t test_feed(test_peer *peer, const uint8_t *bytes, size_t len, size_t chunk);

/* Takes all pending output of a peer into a malloc'd buffer (caller frees). */
uint8_t *test_drain(test_peer *peer, size_t *len);

test_stream_rx *test_rx(test_peer *peer, int32_t stream_id);
/* 1 if the log contains the line (exact line match). */
int test_log_has(const test_peer *peer, const char *line);
/* Appends a line to the log (printf style). */
void test_log_add(test_peer *peer, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- frame trace, window checks, stepping (flow/priority/stream tests) ---- */

/* Starts recording every frame of the peer and checking windows on every DATA frame:
 * as sender, the engine's stream (and v3.1 session) send window never below 0 and always
 * equal to a model built from the trace (initial + WINDOW_UPDATEs - DATA); as receiver,
 * never more unacknowledged DATA than flow_stream_window (set it when the peer's options
 * change the stream window) and, for v3.1, than the 64 KiB session window plus the
 * WINDOW_UPDATEs it sent. Violations are counted in flow_violations. Call it before the
 * peer sends or receives anything: the models start from the session's first frame. */
void test_peer_trace(test_peer *peer);
/* The account of stream_id (0: the session), created empty when unknown. */
test_flow *test_flow_of(test_peer *peer, int32_t stream_id);
/* Number of traced frames matching sent (0/1), type and stream_id (-1: any stream). */
size_t test_frames_count(const test_peer *peer, int sent, int type, int32_t stream_id);

/* Moves what `from` has to say into `to` (one direction, until from is quiet). */
int64_t test_move(test_peer *from, test_peer *to, size_t chunk);
/* One speedy_session_send of at most max bytes from `from`, fed to `to`; returns the count. */
int64_t test_step(test_peer *from, test_peer *to, size_t max);

/* Zero-copy body source: like test_body_read, but sets SPEEDY_DATA_FLAG_NO_COPY; the
 * peer's on_send_data then appends the frame header and the payload to peer->side. */
int64_t test_body_read_nocopy(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                              uint32_t *flags, void *source, void *user);
/* Like test_pump, but output is taken with speedy_session_peek_output and
 * speedy_session_consume_output; zero-copy bytes (peer->side) are delivered in order. */
int64_t test_pump_peek(test_peer *a, test_peer *b, size_t chunk);

#endif
