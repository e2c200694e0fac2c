/* bench_int.h — internals of `speedy bench`, shared by the files of src/bench/.
 *
 *   bench_main.c    options, --help, URLs, threads, the merged result and exit status
 *   bench_run.c     one thread: its loop, connections, the request schedule (closed or
 *                   open loop), verification, warm-up, deadline and hold
 *   bench_spdy.c    a connection speaking SPDY or HTTP/2 (libspeedy client session)
 *   bench_http1.c   a connection speaking HTTP/1.1 with pipelining (llhttp)
 *   bench_report.c  the human summary and --json
 *   bench_hist.c    the latency histogram
 */
#ifndef SPEEDY_BENCH_INT_H
#define SPEEDY_BENCH_INT_H

#include <llhttp.h>
#include <speedy/speedy.h>
#include <stdint.h>
#include <sys/socket.h>

#include "bench_hist.h"
#include "io.h"

#define BENCH_MAX_PATHS 64
#define BENCH_MAX_THREADS 64
#define BENCH_MAX_CONNECTIONS 100000
#define BENCH_MAX_STREAMS 1000

/* Every request ends exactly once: ok, or failed with one of these kinds. */
typedef enum bench_error {
  BENCH_ERR_CONNECT = 0, /* the connection could not be made (TCP) */
  BENCH_ERR_TLS,         /* TLS handshake or negotiation failed */
  BENCH_ERR_STATUS,      /* status outside 2xx */
  BENCH_ERR_LENGTH,      /* body size differs from Content-Length */
  BENCH_ERR_SIZE,        /* body size differs from the first fetch of that URL */
  BENCH_ERR_CONTENT,     /* sampled body differs from the first fetch (hash) */
  BENCH_ERR_RESET,       /* SPDY stream reset (or refused) */
  BENCH_ERR_CLOSED,      /* connection closed or failed with the request in flight */
  BENCH_ERR_PROTOCOL,    /* unparsable response or SPDY session error */
  BENCH_ERR_TIMEOUT,     /* not finished when --max-time ran out */
  BENCH_ERR_COUNT
} bench_error;

const char *bench_error_name(bench_error kind);

typedef struct bench_options {
  /* target: every URL shares one origin */
  char scheme[8];
  char host[256];
  char authority[300]; /* for :host / Host */
  int port;
  int tls;
  char *paths[BENCH_MAX_PATHS];
  int n_paths;
  struct sockaddr_storage addr;
  char resolve_host[256];
  int resolve_port;
  char resolve_addr[64];
  /* load */
  int connections;   /* -c */
  int streams;       /* -m */
  int threads;       /* -t */
  uint64_t requests; /* -n (0: duration mode) */
  double duration_s; /* -D */
  double warmup_s;
  double max_time_s; /* hard limit of the whole run */
  double rate;       /* --rate (0: closed loop) */
  /* protocol */
  io_proto proto; /* --proto: 0 negotiate (TLS) or SPDY/3.1 (http://); or forced */
  int http1;
  int npn; /* --npn: offer NPN only (TLS 1.2) */
  int insecure;
  const char *cacert;
  uint32_t connect_timeout_ms;
  uint32_t stream_window, session_window;
  int header_compression; /* zlib level of our SPDY request headers */
  uint32_t read_size;     /* --read-size: most bytes per read(2) (IO_READ_MAX) */
  /* verification and output */
  uint32_t verify_every;
  int json;
  int quiet;
  double hold_s;
  const char *ready_file;
} bench_options;

/* What the first complete response of a URL looked like (per thread). */
typedef struct bench_reference {
  int have;
  int have_hash;
  int hasher_out; /* a request in flight hashes its body to become the reference */
  uint64_t size;
  uint64_t hash;
} bench_reference;

/* Counts and histograms of one thread; merged at the end. */
typedef struct bench_stats {
  bench_hist latency;  /* from intended send to last byte, measured requests */
  bench_hist ttfb;     /* from actual send to first response byte */
  bench_hist connect;  /* connect start to open (TLS handshake included) */
  bench_hist send_lag; /* open loop: actual send minus intended send */
  uint64_t ok, failed, errors[BENCH_ERR_COUNT];
  uint64_t status_classes[6]; /* responses by status: [1] 1xx ... [5] 5xx, [0] any other */
  uint64_t measured_ok, measured_failed;
  uint64_t body_bytes; /* measured, completed */
  /* Closed loop with -D: answers completed inside the measured window, whenever sent (as
   * h2load counts; measured requests sent near its end complete after it, and requests
   * sent in the warm-up inside it) */
  uint64_t window_ok, window_body_bytes;
  uint64_t wire_bytes_in; /* plaintext read, all connections, whole run */
  /* SPDY and HTTP/2, whole run, as h2load counts them: response field blocks as received
   * (frame payloads, compressed) and decoded (names plus values), DATA payload bytes */
  uint64_t header_bytes_in, header_bytes_decoded, data_bytes_in;
  uint64_t warmup_requests;
  uint64_t reconnects;
  uint64_t retried; /* requests sent again: refused streams, HTTP/1.1 unanswered pipeline */
  uint64_t connections_opened;
  int64_t t_measure;                 /* start of the measured window */
  int64_t t_last_done;               /* last measured completion */
  int64_t t_first_send, t_last_send; /* measured requests */
  uint64_t sends;
  uint64_t unsent_due; /* open loop with -D: requests due before the end but never sent */
  io_proto proto;
  io_negotiation how;
  const char *tls_version;
  bench_reference refs[BENCH_MAX_PATHS];
} bench_stats;

typedef struct bench_thread bench_thread;
typedef struct bench_conn bench_conn;

/* One request in flight: a slot of its connection. */
typedef struct bench_req {
  int in_use;
  int measured;
  int path;
  int hashing;
  int ref_hasher; /* the one request hashing to give its path the reference hash */
  int status;
  int has_length;
  int32_t stream_id;
  uint64_t content_length;
  uint64_t body;
  uint64_t hash;
  int64_t t_intended, t_sent, t_first;
} bench_req;

struct bench_conn {
  bench_thread *thread;
  io_conn *io;
  io_proto proto;
  speedy_session *session;
  llhttp_t parser;
  llhttp_settings_t settings;
  bench_req *slots; /* streams: SPDY any slot; HTTP/1.1 a ring in send order */
  int n_slots;
  int in_flight;
  int ring_head;      /* HTTP/1.1: oldest request on the wire */
  int interim;        /* HTTP/1.1: the response being read is a 1xx; the final one follows */
  uint64_t quota;     /* closed loop with -n: measured requests still to send here */
  uint64_t responses; /* complete responses received (a replacement is made only for a
                         connection that answered: no reconnect storm on refusal) */
  int index;
  int opened, closing, dead;
  int goaway;               /* the server sent GOAWAY: replaced when work is left */
  int initial;              /* one of the first -c connections, not yet open or failed */
  int32_t informational_id; /* HTTP/2: the stream whose 1xx head is arriving, or 0 */
  int64_t t_connect;
};

/* Callbacks from the protocol drivers into the thread. */
bench_req *bench_conn_slot_free(bench_conn *conn);
/* A request finished (all its body seen): verify and record, free the slot. */
void bench_request_done(bench_conn *conn, bench_req *req, int64_t now);
/* A request the server did not process: sent again (0), or not (-1: fail it). */
int bench_request_retry(bench_conn *conn, bench_req *req);
/* A request failed. */
void bench_request_failed(bench_conn *conn, bench_req *req, bench_error kind, int64_t now);
/* Body bytes of a request (counted and, when sampled, hashed). */
void bench_request_body(bench_req *req, const uint8_t *data, size_t len);
int64_t bench_now_ns(void);
const bench_options *bench_conn_options(const bench_conn *conn);
bench_stats *bench_conn_stats(const bench_conn *conn);
/* Pre-built request headers / bytes of path i. */
const speedy_header *bench_spdy_headers(const bench_conn *conn, int path, size_t *n);
const char *bench_http1_request(const bench_conn *conn, int path, size_t *len);

/* bench_spdy.c */
int bench_spdy_start(bench_conn *conn);
int bench_spdy_send(bench_conn *conn, bench_req *req); /* 0 or -1 (request failed) */
size_t bench_spdy_read(bench_conn *conn, const uint8_t *data, size_t len);
void bench_spdy_writable(bench_conn *conn, size_t room);
void bench_spdy_goaway(bench_conn *conn);
void bench_spdy_closed(bench_conn *conn);

/* bench_http1.c */
int bench_http1_start(bench_conn *conn);
int bench_http1_send(bench_conn *conn, bench_req *req);
size_t bench_http1_read(bench_conn *conn, const uint8_t *data, size_t len);
/* The connection ended (on_close's status): a response delimited by its end is complete. */
void bench_http1_closed(bench_conn *conn, int status);

/* bench_run.c: runs one thread's share to the end; fills stats. */
typedef struct bench_shared bench_shared;
typedef struct bench_thread_args {
  const bench_options *opt;
  bench_shared *shared;
  int index;
  int connections;
  uint64_t requests; /* this thread's share of -n */
  double rate;       /* this thread's share of --rate */
  bench_stats *stats;
  int status; /* 0, or 1 when the thread could not run */
} bench_thread_args;
void bench_thread_run(bench_thread_args *args);
bench_shared *bench_shared_new(int threads);
void bench_shared_del(bench_shared *shared);

/* bench_report.c */
void bench_report_text(const bench_options *opt, const bench_stats *total, double wall_s);
void bench_report_json(const bench_options *opt, const bench_stats *total, double wall_s);
uint64_t bench_errors_total(const bench_stats *stats);

#endif /* SPEEDY_BENCH_INT_H */
