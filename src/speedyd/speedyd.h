/* speedyd.h — the server's internal interfaces: configuration, server state, the
 * connection list and the modules that share them.
 *
 *   main.c            process life: options → listeners → privileges → loop → shutdown
 *   speedyd_opts.c    command line parsing and --help
 *   speedyd_serve.c   one complete request → one http_response (static files, uploads,
 *                     common headers); the same for SPDY, HTTP/2 and HTTP/1.1
 *   speedyd_spdy.c    a SPDY or HTTP/2 connection: libspeedy session ↔ io_conn
 *   speedyd_h1.c      an HTTP/1.1 connection: llhttp ↔ io_conn
 *   speedyd_push.c    server push and hint from the push manifest
 *   speedyd_log.c     access and error logs
 *   speedyd_file_cache.c --file-cache: small hot files and their answers in memory
 *   speedyd_workers.c the master of --workers N > 1: sockets, fork, signals, restarts
 *   speedyd_limits.c  defences: per-address connection counts, eviction of idle
 *                     connections, memory budgets, the flood ("glitch") meter
 *
 * Everything runs on one libuv loop thread; nothing here is thread-safe. Several workers
 * are separate processes (speedyd_workers.c), each with its own copy of all of this.
 */
#ifndef SPEEDYD_H
#define SPEEDYD_H

#include <speedy/speedy.h>
#include <stdint.h>
#include <stdio.h>

#include "http_docroot.h"
#include "http_gzip.h"
#include "http_log.h"
#include "http_manifest.h"
#include "http_request.h"
#include "http_response.h"
#include "http_static.h"
#include "http_upload.h"
#include "io.h"
#include "replay.h"

#ifndef SPEEDYD_VERSION
#define SPEEDYD_VERSION "0.0.0"
#endif

#define SPEEDYD_MAX_LISTENS 16
#define SPEEDYD_MAX_PROTOCOLS 5
#define SPEEDYD_MAX_WORKERS 256

/* Exit codes (STYLE.md): the work failed, or the command line was wrong. */
#define SPEEDYD_EXIT_FAILURE 1
#define SPEEDYD_EXIT_USAGE 2

/* zlib level of the SPDY header blocks speedyd sends unless --header-compression says
 * otherwise. zlib's levels 1-3 match without lazy evaluation and cost about half of level
 * 6's CPU on typical response blocks (deflating them was a third of speedyd's CPU on
 * 1 KiB files at level 6); 3 searches deepest of them and compresses the corpus's
 * response headers 1.9 points less than 6 (docs/performance.md). Clients keep libspeedy's
 * default of 6: request bytes go up the slow link. */
#define SPEEDYD_HEADER_COMPRESSION 3

typedef struct speedyd_listen {
  char addr[64]; /* "0.0.0.0", "::1", ... */
  int port;      /* 0: any free port (see --port-file) */
  int tls;
  int proxy; /* ",proxy": connections begin with a PROXY protocol header (v1 or v2) */
} speedyd_listen;

typedef struct speedyd_config {
  speedyd_listen listens[SPEEDYD_MAX_LISTENS];
  size_t n_listens;
  const char *cert_file, *key_file, *docroot;
  const char *manifest_file;
  int push, hint;
  const char *upload_path;
  http_upload_mode upload_mode;
  uint64_t upload_max;
  const char *user;
  const char *protocols[SPEEDYD_MAX_PROTOCOLS]; /* ALPN ids in preference order */
  size_t n_protocols;
  io_proto plaintext_v3;
  int plaintext_v3_auto; /* plaintext version-3 sessions tell SPDY/3 from 3.1 themselves */
  uint32_t handshake_timeout_ms, header_timeout_ms, idle_timeout_ms, shutdown_timeout_ms;
  uint32_t max_connections;
  uint32_t max_streams; /* SPDY MAX_CONCURRENT_STREAMS we announce */
  uint32_t data_frame_size;
  int header_compression;    /* zlib level of the SPDY header blocks we send (0-9) */
  uint32_t max_header_bytes; /* request header fields, names + values */
  const char *access_log, *error_log;
  int allow_symlinks;
  int gzip;
  const char *port_file;
  /* Defences (speedyd_limits.c, docs/security.md). */
  uint32_t max_connections_per_address;
  uint32_t address_glitch_burst;  /* flood meter per IP address (0: off) */
  uint64_t max_memory;            /* whole server: libspeedy + our own buffers, bytes */
  uint64_t max_connection_memory; /* one connection, bytes */
  /* The lab's replay (docs/lab-replay.md). */
  const char *replay_file;      /* --replay PLAN: answer from a page plan, not a docroot */
  int replay_host_index;        /* --replay-host-index N; -1: the host the authority names */
  int tls_max_1_2;              /* --tls-max 1.2 */
  int tls_no_resumption;        /* --no-tls-resumption */
  uint32_t workers;             /* --workers N; 0: one per CPU */
  uint64_t file_cache;          /* --file-cache BYTES per worker; 0: off */
  uint32_t file_cache_valid_ms; /* --file-cache-valid: how long a freshness check stands */
} speedyd_config;

/* Parses argv into config (defaults first). Returns 0 to run, or an exit code: 0 after
 * --help / --version (*done set to 1), SPEEDYD_EXIT_USAGE after a one-line message. */
int speedyd_opts_parse(speedyd_config *config, int argc, char **argv, int *done);

typedef struct speedyd_conn speedyd_conn;
typedef struct speedyd_addr_table speedyd_addr_table;
typedef struct speedyd_addr speedyd_addr;
typedef struct speedyd_file_cache speedyd_file_cache;

typedef struct speedyd_server {
  speedyd_config config;
  uv_loop_t *loop;
  http_docroot docroot;
  http_gzip_cache *gzip_cache;
  speedyd_file_cache *file_cache; /* --file-cache; NULL: off */
  http_manifest *manifest;
  replay_plan *replay; /* --replay; NULL: static files */
  http_static_options static_options;
  http_upload_options upload_options;
  io_tls *tls;
  io_listener *listeners[SPEEDYD_MAX_LISTENS];
  size_t n_listeners;
  FILE *access_log, *error_log;
  speedyd_conn *conns;      /* every live connection, newest first */
  speedyd_conn *conns_tail; /* the oldest */
  uint64_t n_conns;
  uint64_t n_evicting; /* aborted to make room, on_close not yet reported */
  uint32_t n_held;     /* refused connections of flooding addresses, held unread */
  speedyd_addr_table *addrs;
  uint64_t mem_used; /* accounted bytes (speedyd_budget_*) of every connection */
  int shutting_down;
  uv_signal_t sigterm, sigint;
  uv_timer_t shutdown_timer;
  uint64_t next_conn_id;
  int worker_id; /* 1..N in a worker of --workers N > 1; 0: single process */
} speedyd_server;

/* Memory accounted to one connection: libspeedy's allocations through the allocator hook
 * (zlib included) and what speedyd charges for its own buffers. */
typedef struct speedyd_budget {
  speedyd_server *server;
  uint64_t used;
  uint64_t upload_used; /* echoed upload bodies held (speedyd_budget_charge_upload) */
} speedyd_budget;

/* The protocol-neutral part of a connection; the protocol module owns the rest. */
struct speedyd_conn {
  speedyd_server *server;
  io_conn *io;
  speedyd_conn *prev, *next;
  void *impl;                         /* speedyd_spdy_conn / speedyd_h1_conn */
  void (*shutdown)(speedyd_conn *c);  /* server is stopping: finish in-flight work */
  int (*idle)(const speedyd_conn *c); /* 1: no request in flight (may be evicted) */
  speedyd_budget budget;
  int evicted;
  char peer_ip[64];   /* for the access log: the address without port */
  speedyd_addr *addr; /* its entry in the per-address table, or NULL when that is off */
  uint64_t id;
};

/* Called by a protocol module's on_close: unlinks and frees c. */
void speedyd_conn_closed(speedyd_conn *c);

/* Protocol modules: take over a connection whose protocol is now known. */
int speedyd_spdy_start(speedyd_conn *c, speedy_protocol protocol);
int speedyd_h1_start(speedyd_conn *c);

/* ---- main.c and speedyd_workers.c ---- */

/* One event loop (see main.c). Returns the exit status. */
int speedyd_run(speedyd_server *server, int *fds, int ready_fd);
/* Prints "speedyd: listening on 127.0.0.1:40123 (plaintext), [::1]:8443 (TLS)" on stderr
 * with the bound ports (port 0 replaced by the one chosen). */
void speedyd_print_listening(const speedyd_server *server);
/* Writes config.listens[].port to --port-file. Returns 0 or -1 after a message. */
int speedyd_write_port_file(speedyd_server *server);
int speedyd_drop_privileges(const char *user);
int speedyd_harden_process(void);
/* The master of n_workers > 1 workers (speedyd_workers.c). Returns the exit status; in a
 * worker process it returns the worker's status with *child set to 1 (the caller then
 * frees what main.c loaded and exits with it). */
int speedyd_workers_run(speedyd_server *server, unsigned n_workers, int *child);

/* ---- speedyd_limits.c ---- */

/* Per-address state: how many connections an IP address has, and its flood meter, which
 * all of its connections fill together, so that reconnecting does not buy a fresh budget.
 * acquire returns 0 (with *out set, or NULL when neither limit is on), SPEEDYD_ADDR_LIMIT
 * when ip already has max_connections_per_address connections, SPEEDYD_ADDR_FLOODING
 * from its flood meter going over address_glitch_burst until it drained to half of it,
 * or -1 on no memory; release undoes it. Entries outlive their connections while their meter drains
 * (bounded in number). */
#define SPEEDYD_ADDR_LIMIT 1
#define SPEEDYD_ADDR_FLOODING 2
int speedyd_addr_acquire(speedyd_server *server, const char *ip, speedyd_addr **out);
void speedyd_addr_release(speedyd_server *server, speedyd_addr *addr);
/* Charges cost glitches to addr's meter; returns 1 when the address is over its burst
 * (the caller ends the connection). addr may be NULL (nothing to do, returns 0). */
int speedyd_addr_glitch(speedyd_server *server, speedyd_addr *addr, unsigned cost);
void speedyd_addr_table_del(speedyd_server *server);

/* A request body no upload takes is read and dropped up to this many bytes, and refused
 * beyond (HTTP/1.1: 413 and the connection closes; SPDY and HTTP/2: the stream is reset
 * with CANCEL), as nginx's client_max_body_size does by default. */
#define SPEEDYD_MAX_DROPPED_BODY (1u << 20)

/* At the connection limit: aborts the oldest idle connection (no request in flight,
 * handshakes included). Returns 1 when one was evicted, 0 when every one is busy. */
int speedyd_evict_idle(speedyd_server *server);

/* Charges n bytes to a connection's budget (and the server's). Returns 0, or -1 (nothing
 * charged) when the connection or the server would exceed its maximum. */
int speedyd_budget_charge(speedyd_budget *budget, uint64_t n);
void speedyd_budget_release(speedyd_budget *budget, uint64_t n);
/* Charges n bytes of an upload body held for its echo: the server's budget, and per
 * connection at most --upload-max (16 MiB by default) or --max-connection-memory,
 * whichever is larger, so that one connection holds one full upload but not a hundred.
 * Returns 0 (nothing charged when uploads are discarded) or -1 (answer 503). */
int speedyd_budget_charge_upload(speedyd_budget *budget, uint64_t n);
/* Gives back what speedyd_budget_charge_upload charged (the caller keeps the count). */
void speedyd_budget_release_upload(speedyd_budget *budget, uint64_t n);
/* 1 when new work should be refused: the connection or the server is above 3/4 of its
 * budget (the rest is headroom for work already accepted). */
int speedyd_budget_pressure(const speedyd_budget *budget);
/* libspeedy's allocator hook over a budget (user = the speedyd_budget). */
void *speedyd_budget_malloc(size_t size, void *user);
void *speedyd_budget_realloc(void *ptr, size_t size, void *user);
void speedyd_budget_free(void *ptr, void *user);

/* The flood meter: peer actions that cost us work but carry no request ("glitches")
 * fill it; it drains at SPEEDYD_GLITCH_RATE per second. Returns 1 once it is over
 * SPEEDYD_GLITCH_BURST: the caller ends the connection. */
#define SPEEDYD_GLITCH_BURST 1000u
#define SPEEDYD_GLITCH_RATE 100u
/* Connections from a refused (flooding) address are held unread this long before they
 * are closed, at most this many at a time (past that they are closed at once). */
#define SPEEDYD_HOLD_MS 5000u
#define SPEEDYD_MAX_HELD 256u
/* What a session ended by the peer's protocol error costs its address's meter. */
#define SPEEDYD_ADDR_ERROR_COST 100u
typedef struct speedyd_glitch_meter {
  uint64_t level; /* glitches × 1,000 */
  int64_t last_ns;
} speedyd_glitch_meter;
int speedyd_glitch(speedyd_glitch_meter *meter, int64_t now_ns, unsigned cost);

/* ---- speedyd_serve.c ---- */

/* 1 when request goes to the upload sink rather than the static files. */
int speedyd_serve_is_upload(const speedyd_server *server, const http_request *request);
/* Answers a complete request without body handling: static files, or the 405 of a
 * non-POST to the upload path. Always leaves an answer in response (500 at worst). */
void speedyd_serve_static(speedyd_server *server, const http_request *request,
                          http_response *response);
/* speedyd_serve_static for a SPDY or HTTP/2 stream that gets nothing but its answer (no
 * hints or pushes to add): a file cache hit comes as a prepared head in *set (:status,
 * the file's fields, Date and Server, as http_spdy_response_headers would lay out the
 * same answer; the cache's reference: the caller submits it and keeps none) and response
 * gets only its status and body. Returns 1 then; 0 when it answered as
 * speedyd_serve_static does. */
int speedyd_serve_static_fields(speedyd_server *server, const http_request *request,
                                http_response *response, speedy_fieldset **set);
/* An error answer for err (http_err_status) into response. */
void speedyd_serve_error(http_response *response, int err);
/* The value of Server, and Date's value now (HTTP_DATE_SIZE - 1 characters in a buffer
 * whose address stays the same; its contents change once a second). */
#define SPEEDYD_SERVER_FIELD "speedyd/" SPEEDYD_VERSION
const char *speedyd_serve_date(void);
/* Adds Date and Server (every answer, every protocol). */
void speedyd_serve_common_headers(http_response *response);

/* ---- speedyd_file_cache.c ---- */

/* HTTP/1.x file bodies at least this long go out with sendfile (plaintext): the cache
 * leaves them to it, and serves HTTP/1.x only smaller files (SPDY bodies are copied
 * through the engine whatever their size, so the cache serves SPDY any file it holds). */
#define SPEEDYD_SENDFILE_MIN 16384u

/* A cache of at most max_bytes. Returns 0 or -1 (no memory). */
int speedyd_file_cache_new(speedyd_file_cache **out, uint64_t max_bytes, uint32_t valid_ms);
void speedyd_file_cache_del(speedyd_file_cache *cache);
/* Fills response from server->file_cache when it holds a fresh copy of what http_static
 * would answer. Returns 1 when it did, 0 to serve normally. */
int speedyd_file_cache_serve(speedyd_server *server, const http_request *request,
                             http_response *response);
/* speedyd_file_cache_serve with the answer's head as a prepared set (see
 * speedyd_serve_static_fields) instead of fields copied into response. Returns 1 when it
 * answered; 0 when the cache cannot (then response is as it was given). */
int speedyd_file_cache_serve_fields(speedyd_server *server, const http_request *request,
                                    http_response *response, speedy_fieldset **set);
/* After http_static_serve: keeps a copy of a cacheable answer (and switches response's
 * body to that copy). */
void speedyd_file_cache_store(speedyd_server *server, const http_request *request,
                              http_response *response);

/* ---- speedyd_push.c ---- */

/* The manifest entries for a page request that should be pushed or hinted, or 0. Only a
 * GET with a 200 answer qualifies. */
size_t speedyd_push_entries(const speedyd_server *server, const http_request *request,
                            const http_response *response, const http_manifest_entry **entries);
/* --hint: adds X-Subresources and Link to response for a page in the manifest. */
void speedyd_push_add_hints(const speedyd_server *server, const http_request *request,
                            http_response *response);
/* A same-origin push path: one leading '/', not "//", no scheme. */
int speedyd_push_path_ok(const char *path);
/* The GET request a pushed resource would have had (authority, scheme and
 * Accept-Encoding from the page's request). Returns 0 or an HTTP_ERR_*. */
int speedyd_push_request(const http_request *page, const char *path, http_protocol protocol,
                         http_request *out);
/* A 103 Early Hints answer (RFC 8297) carrying the Link field of page, an answer that got
 * its hints. out is initialised in every case (free it with http_response_free). Returns
 * 0, HTTP_ERR_INVALID_ARGUMENT when page has no Link, or HTTP_ERR_NOMEM. */
int speedyd_push_early_hints(const http_response *page, http_response *out);

/* ---- speedyd_log.c ---- */

/* Opens --access-log ("-": stdout; NULL: none) and --error-log (NULL: stderr). Returns 0
 * or -1 after printing the one-line error. */
int speedyd_log_open(speedyd_server *server);
void speedyd_log_close(speedyd_server *server);
/* One access log line (http_log_format). */
void speedyd_log_access(speedyd_server *server, const speedyd_conn *c, const http_request *request,
                        int status, uint64_t body_bytes, const char *protocol, int64_t stream_id,
                        uint64_t bytes_in, uint64_t bytes_out);
/* "[date] peer: message" to the error log; peer may be NULL. The message must not
 * contain unescaped peer bytes (use speedyd_log_escape). */
void speedyd_log_error(speedyd_server *server, const char *peer, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/* Escapes peer bytes for the logs into out (cap bytes). Returns out. */
const char *speedyd_log_escape(const void *in, size_t len, char *out, size_t cap);

/* Monotonic nanoseconds (for libspeedy's clock). */
int64_t speedyd_now_ns(void);

#endif /* SPEEDYD_H */
