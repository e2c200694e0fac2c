/* interop_harness.h — shared by the interop drivers: runs tests/interop/peer.js (node's
 * spdy-transport) as a child process, pumps bytes between it and a speedy session over
 * pipes under a hard deadline, and records what the tests check: header blocks, body
 * contents, SETTINGS, PINGs, GOAWAY and a trace of every frame.
 *
 * The contract with peer.js (paths, headers, bodies) is the same on both sides:
 * GET /bytes/N answers N bytes of interop_pattern(N) with two set-cookie values;
 * POST /upload answers "<length> <fnv1a hex>" of what it received; GET /index.html
 * pushes /pushed.js. See the scenario comments in peer.js.
 */
#ifndef SPEEDY_INTEROP_HARNESS_H
#define SPEEDY_INTEROP_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "speedy/speedy.h"

#define INTEROP_HOST "interop.test"
#define INTEROP_PUSH_PATH "/pushed.js"
#define INTEROP_PUSH_BODY 5000u
#define INTEROP_INDEX_BODY 2000u
#define INTEROP_LARGE_BODY 204800u  /* /bytes/204800: past every 64 KiB window */
#define INTEROP_UPLOAD_BODY 102400u /* POST /upload */
/* A passing exchange takes well under a second; 10 s per test keeps a binary of 21
 * stalled tests (2 at a time) inside CTest's 120 s. node gives up a second earlier so
 * that its own account of what it was waiting for reaches the report. */
#define INTEROP_DEADLINE_MS 10000
#define INTEROP_NODE_DEADLINE_MS "9000"
#define INTEROP_FNV_INIT 0x811c9dc5u

/* SETTINGS each role announces in the "settings" scenario (peer.js uses the same). */
#define INTEROP_CLIENT_MAX_STREAMS 7u
#define INTEROP_CLIENT_WINDOW 262144u
#define INTEROP_SERVER_MAX_STREAMS 9u
#define INTEROP_SERVER_WINDOW 131072u

/* Byte i of the body of n bytes: the top byte of (i + n) * 2654435761 mod 2^32. */
uint8_t interop_pattern_byte(uint64_t i, uint64_t n);
/* FNV-1a over len bytes, continuing from h (start with INTEROP_FNV_INIT). */
uint32_t interop_fnv1a(uint32_t h, const uint8_t *bytes, size_t len);

/* NULL when node, peer.js and node_modules/spdy-transport are all there; otherwise why
 * the interop tests cannot run. */
const char *interop_skip_reason(void);
/* The source tree (SPEEDY_SOURCE_DIR, else the tree this was built from). */
const char *interop_source_dir(void);

/* main() of a driver: exits 77 (CTest's skip) with the reason when the node side is
 * missing, otherwise runs the Criterion tests. */
int interop_main(int argc, char *argv[]);

/* ---- What one stream saw ---------------------------------------------------------- */

#define INTEROP_MAX_STREAMS 16
#define INTEROP_MAX_HEADERS 48
#define INTEROP_NAME_MAX 64
#define INTEROP_VALUE_MAX 256
#define INTEROP_BODY_KEEP 256 /* first bytes of each body kept verbatim */

typedef struct interop_header {
  char name[INTEROP_NAME_MAX];
  char value[INTEROP_VALUE_MAX];
} interop_header;

/* An outgoing body: n bytes of interop_pattern(n), or the text when text_len > 0. */
typedef struct interop_body {
  uint64_t size;
  uint64_t offset;
  char text[128];
  size_t text_len;
} interop_body;

typedef struct interop_stream {
  int32_t id;
  char path[64];            /* the request's :path, for the tests' own use */
  speedy_headers_kind kind; /* of the first header block */
  int32_t associated_id;    /* pushes */
  interop_header headers[INTEROP_MAX_HEADERS];
  size_t n_headers;
  int headers_truncated; /* a field did not fit: checks on it are void */
  int header_blocks;
  int remote_done; /* the peer half-closed (FIN on headers or DATA) */
  uint64_t body_len;
  uint32_t body_fnv;
  uint8_t body_head[INTEROP_BODY_KEEP];
  uint64_t expect_pattern; /* check the body against interop_pattern(n) when set */
  int has_expect;
  int64_t pattern_mismatch; /* first byte off the pattern, or -1 */
  int closed;
  uint32_t close_status;
  interop_body out; /* what we send on it */
} interop_stream;

/* ---- One speedy session and what it saw ------------------------------------------- */

typedef struct interop_app interop_app;

/* Reactions of a test: the peer finished sending on a stream / a stream closed. */
typedef struct interop_hooks {
  void (*on_remote_done)(interop_app *app, interop_stream *stream);
  void (*on_stream_closed)(interop_app *app, interop_stream *stream);
} interop_hooks;

#define INTEROP_TRACE_LINES 80
#define INTEROP_MAX_SETTINGS 32

struct interop_app {
  speedy_session *session;
  speedy_protocol protocol;
  speedy_role role;
  const char *scenario;
  interop_hooks hooks;
  /* Bodies of streams the peer opens are checked against interop_pattern of this size:
   * requests (server role) and pushes (client role). */
  uint64_t expect_request_body;
  uint64_t expect_push_body;
  interop_stream streams[INTEROP_MAX_STREAMS];
  size_t n_streams;
  int goaway_seen;
  int32_t goaway_last_good;
  uint32_t goaway_status;
  int goaway_sent;
  struct {
    uint32_t id;
    uint8_t flags;
    uint32_t value;
  } settings[INTEROP_MAX_SETTINGS];
  size_t n_settings;
  int pings_acked;
  int frames_sent[11]; /* by control frame type; [0] counts DATA frames */
  int frames_received[11];
  char failures[2048]; /* what went wrong in callbacks, one line each */
  size_t n_failures;
  char trace[INTEROP_TRACE_LINES][128];
  size_t trace_total;
};

/* Creates app->session for protocol and role with the harness's callbacks; options
 * may be NULL. Returns 0 or a negative SPEEDY_ERR_*. */
int interop_app_init(interop_app *app, speedy_protocol protocol, speedy_role role,
                     const char *scenario, const interop_hooks *hooks,
                     const speedy_options *options);
void interop_app_free(interop_app *app);

/* Notes a failure (printf-style); tests assert app->n_failures == 0. */
void interop_app_fail(interop_app *app, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A fresh stream record (id 0 until the caller sets it), or NULL when all are used. */
interop_stream *interop_app_new_stream(interop_app *app);
interop_stream *interop_app_find_stream(interop_app *app, int32_t id);
/* Streams that closed, and those among them that closed with a status other than NONE. */
size_t interop_app_closed_streams(const interop_app *app);
size_t interop_app_reset_streams(const interop_app *app);
/* The last value the peer sent for a SETTINGS id, or -1. */
int64_t interop_app_setting(const interop_app *app, uint32_t id);

/* The index-th value (0 first) of header name on the stream, or NULL. */
const char *interop_stream_header(const interop_stream *stream, const char *name, size_t index);
/* Checks that the body matched interop_pattern(n) in length and content; notes a
 * failure naming what otherwise. Returns 1 when it matched. */
int interop_stream_check_pattern(interop_app *app, const interop_stream *stream, const char *what);

/* The data source for interop_body (source = the interop_body). */
int64_t interop_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                          uint32_t *flags, void *source, void *user);

/* The last frames of the trace, oldest first, one per line, into out. */
void interop_app_trace(const interop_app *app, char *out, size_t cap);

/* ---- The node peer --------------------------------------------------------------- */

typedef struct interop_peer {
  pid_t pid;
  int to_child;   /* the child's stdin */
  int from_child; /* the child's stdout */
  int result_fd;  /* the child's fd 3 */
  int out_eof;
  int result_eof;
  char result[8192]; /* the JSON line peer.js wrote */
  size_t result_len;
  int result_complete;
  int exit_status; /* from waitpid, after interop_run */
  /* Input framing, for precise reports: where each frame from node started. */
  uint64_t in_offset;
  uint64_t frame_left;
  uint8_t hd[8];
  size_t hd_len;
  char in_frames[16][96];
  size_t in_frames_total;
} interop_peer;

/* Starts `node peer.js --role <peer_role> --version V --scenario S`. Returns 0, or -1
 * with err filled. */
int interop_peer_start(interop_peer *peer, const char *peer_role, speedy_protocol protocol,
                       const char *scenario, char *err, size_t err_cap);

/* 1 when peer.js reported "ok":true. */
int interop_peer_ok(const interop_peer *peer);

/* Pumps bytes between app->session and the peer until done(app) holds, the peer has
 * reported and all our output is written; then closes the peer's stdin and reaps it.
 * Returns 0, or -1 with a report in err (what failed, the frame trace, the peer's
 * verdict). Stops early when the peer reports a failure or exits. */
int interop_run(interop_app *app, interop_peer *peer, int (*done)(interop_app *app), char *err,
                size_t err_cap);

/* Kills and reaps the peer if it is still running (safe to call twice). */
void interop_peer_stop(interop_peer *peer);

#endif
