/* pair.h — in-memory SPDY endpoints for engine tests.
 *
 * A test_peer wraps one spdy_session with recording callbacks: every event becomes a
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

#include "spdy/spdy.h"

/* A body served from memory (or generated: data == NULL gives bytes i % 251). */
typedef struct test_body {
  const uint8_t *data;
  size_t len;
  size_t offset;
  int defer_once; /* first read answers SPDY_ERR_DEFERRED */
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

struct test_peer {
  spdy_session *session;
  char *log;
  size_t log_len, log_cap;
  int log_data;            /* 1: log every data chunk ("data <id> <n>") */
  int coalesce_data;       /* 1: merge consecutive chunks of one stream in the log */
  test_stream_rx *rx;
  size_t n_rx, cap_rx;
  test_request_fn on_request; /* server: called at the end of request headers */
  size_t response_size;       /* default responder: body size */
  test_body **bodies;         /* bodies handed to sources, freed with the peer */
  size_t n_bodies, cap_bodies;
  int pause_data;             /* on_data_chunk returns SPDY_ERR_PAUSE */
  uint32_t pings_acked;
  int goaway_seen;
  int32_t goaway_last_good;
  uint32_t goaway_status;
  int32_t *data_order;        /* stream id of every DATA chunk received, in order */
  size_t n_data_order, cap_data_order;
};

/* options may be NULL: defaults plus the counting allocator. The peer keeps nothing of
 * options after creation. */
test_peer *test_peer_new(spdy_protocol protocol, spdy_role role, spdy_options *options);
/* Deletes the session and the peer. */
void test_peer_del(test_peer *peer);

/* Body source reading a test_body (source). */
int64_t test_body_read(spdy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
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
void test_log_add(test_peer *peer, const char *fmt, ...);

#endif
