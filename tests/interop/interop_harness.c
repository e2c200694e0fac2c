/* interop_harness.c — runs node's spdy-transport (tests/interop/peer.js) against a speedy
 * session: the child process and its pipes, the byte pump with its deadline, and the
 * callbacks that record what the session saw. See interop_harness.h.
 */
#define _GNU_SOURCE

#include "interop_harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef INTEROP_SOURCE_DIR
#define INTEROP_SOURCE_DIR "."
#endif

/* ---- Shared body contents -------------------------------------------------------- */

uint8_t interop_pattern_byte(uint64_t i, uint64_t n) {
  uint32_t x = (uint32_t)(i + n) * 2654435761u;
  return (uint8_t)(x >> 24);
}

uint32_t interop_fnv1a(uint32_t h, const uint8_t *bytes, size_t len) {
  for (size_t i = 0; i < len; i++) {
    h ^= bytes[i];
    h *= 0x01000193u;
  }
  return h;
}

/* ---- Finding the node side ------------------------------------------------------- */

const char *interop_source_dir(void) {
  const char *dir = getenv("SPEEDY_SOURCE_DIR");
  return dir && *dir ? dir : INTEROP_SOURCE_DIR;
}

static const char *node_program(void) {
  const char *node = getenv("SPEEDY_NODE");
  return node && *node ? node : "node";
}

/* 1 when program names an executable file, directly or through PATH. */
static int program_exists(const char *program) {
  if (strchr(program, '/')) return access(program, X_OK) == 0;
  const char *path = getenv("PATH");
  if (!path) return 0;
  char candidate[4096];
  while (*path) {
    const char *colon = strchr(path, ':');
    size_t len = colon ? (size_t)(colon - path) : strlen(path);
    int n = snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, path, program);
    if (n > 0 && (size_t)n < sizeof candidate && access(candidate, X_OK) == 0) return 1;
    if (!colon) break;
    path = colon + 1;
  }
  return 0;
}

const char *interop_skip_reason(void) {
  static char reason[4300];
  char file[4096];
  if (!program_exists(node_program())) {
    snprintf(reason, sizeof reason,
             "node (%s) not found; install Node.js (scripts/install-deps) or set SPEEDY_NODE",
             node_program());
    return reason;
  }
  snprintf(file, sizeof file, "%s/tests/interop/peer.js", interop_source_dir());
  if (access(file, R_OK) != 0) {
    snprintf(reason, sizeof reason, "%s not found; set SPEEDY_SOURCE_DIR", file);
    return reason;
  }
  snprintf(file, sizeof file, "%s/node_modules/spdy-transport/package.json", interop_source_dir());
  if (access(file, R_OK) != 0) {
    snprintf(reason, sizeof reason,
             "%s not found; run `npm ci --ignore-scripts` in %s (scripts/install-deps does)", file,
             interop_source_dir());
    return reason;
  }
  return NULL;
}

int interop_main(int argc, char *argv[]) {
  const char *why = interop_skip_reason();
  if (why) {
    fprintf(stderr, "%s: skipped: %s\n", argv[0], why);
    return 77;
  }
  struct criterion_test_set *tests = criterion_initialize();
  int result = 0;
  if (criterion_handle_args(argc, argv, true)) result = !criterion_run_all_tests(tests);
  criterion_finalize(tests);
  return result;
}

/* ---- Recording what the session saw ---------------------------------------------- */

void interop_app_fail(interop_app *app, const char *fmt, ...) {
  size_t used = strlen(app->failures);
  app->n_failures++;
  if (used + 2 >= sizeof app->failures) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(app->failures + used, sizeof app->failures - used - 1, fmt, ap);
  va_end(ap);
  used = strlen(app->failures);
  if (used + 1 < sizeof app->failures) {
    app->failures[used] = '\n';
    app->failures[used + 1] = '\0';
  }
}

interop_stream *interop_app_new_stream(interop_app *app) {
  if (app->n_streams >= INTEROP_MAX_STREAMS) {
    interop_app_fail(app, "more than %d streams", INTEROP_MAX_STREAMS);
    return NULL;
  }
  interop_stream *stream = &app->streams[app->n_streams++];
  memset(stream, 0, sizeof *stream);
  stream->body_fnv = INTEROP_FNV_INIT;
  stream->pattern_mismatch = -1;
  return stream;
}

interop_stream *interop_app_find_stream(interop_app *app, int32_t id) {
  for (size_t i = 0; i < app->n_streams; i++) {
    if (app->streams[i].id == id) return &app->streams[i];
  }
  return NULL;
}

size_t interop_app_closed_streams(const interop_app *app) {
  size_t n = 0;
  for (size_t i = 0; i < app->n_streams; i++) n += app->streams[i].closed != 0;
  return n;
}

size_t interop_app_reset_streams(const interop_app *app) {
  size_t n = 0;
  for (size_t i = 0; i < app->n_streams; i++) {
    n += app->streams[i].closed && app->streams[i].close_status != SPEEDY_RST_NONE;
  }
  return n;
}

int64_t interop_app_setting(const interop_app *app, uint32_t id) {
  int64_t value = -1;
  for (size_t i = 0; i < app->n_settings; i++) {
    if (app->settings[i].id == id) value = app->settings[i].value;
  }
  return value;
}

const char *interop_stream_header(const interop_stream *stream, const char *name, size_t index) {
  for (size_t i = 0; i < stream->n_headers; i++) {
    if (strcmp(stream->headers[i].name, name) == 0 && index-- == 0) {
      return stream->headers[i].value;
    }
  }
  return NULL;
}

int interop_stream_check_pattern(interop_app *app, const interop_stream *stream, const char *what) {
  if (stream->body_len != stream->expect_pattern) {
    interop_app_fail(app, "%s (stream %d): body is %llu bytes, expected %llu", what,
                     (int)stream->id, (unsigned long long)stream->body_len,
                     (unsigned long long)stream->expect_pattern);
    return 0;
  }
  if (stream->pattern_mismatch >= 0) {
    interop_app_fail(app, "%s (stream %d): body differs from the pattern at byte %lld", what,
                     (int)stream->id, (long long)stream->pattern_mismatch);
    return 0;
  }
  return 1;
}

static void copy_bounded(char *dst, size_t cap, const char *src, size_t len, int *truncated) {
  if (len >= cap) {
    len = cap - 1;
    *truncated = 1;
  }
  memcpy(dst, src, len);
  dst[len] = '\0';
}

static void trace_add(interop_app *app, const char *line) {
  char *slot = app->trace[app->trace_total % INTEROP_TRACE_LINES];
  snprintf(slot, sizeof app->trace[0], "%s", line);
  app->trace_total++;
}

void interop_app_trace(const interop_app *app, char *out, size_t cap) {
  size_t used = 0;
  size_t first =
      app->trace_total > INTEROP_TRACE_LINES ? app->trace_total - INTEROP_TRACE_LINES : 0;
  if (cap == 0) return;
  out[0] = '\0';
  for (size_t i = first; i < app->trace_total && used + 1 < cap; i++) {
    int n = snprintf(out + used, cap - used, "  %s\n", app->trace[i % INTEROP_TRACE_LINES]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

static int on_begin_headers(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                            int32_t associated_id, void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (!stream) {
    stream = interop_app_new_stream(app);
    if (!stream) return 0;
    stream->id = stream_id;
    stream->kind = kind;
    stream->associated_id = associated_id;
    stream->has_expect = 1;
    stream->expect_pattern =
        kind == SPEEDY_HEADERS_PUSH ? app->expect_push_body : app->expect_request_body;
  } else if (stream->header_blocks == 0) {
    stream->kind = kind; /* a stream we opened: its first block from the peer */
    stream->associated_id = associated_id;
  }
  stream->header_blocks++;
  return 0;
}

static int on_header(speedy_session *session, int32_t stream_id, const speedy_header *header,
                     void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (!stream) {
    interop_app_fail(app, "on_header for stream %d without on_begin_headers", (int)stream_id);
    return 0;
  }
  if (stream->n_headers >= INTEROP_MAX_HEADERS) {
    stream->headers_truncated = 1;
    return 0;
  }
  interop_header *h = &stream->headers[stream->n_headers++];
  copy_bounded(h->name, sizeof h->name, header->name, header->name_len, &stream->headers_truncated);
  copy_bounded(h->value, sizeof h->value, header->value, header->value_len,
               &stream->headers_truncated);
  return 0;
}

static void remote_done(interop_app *app, interop_stream *stream) {
  if (stream->remote_done) {
    interop_app_fail(app, "stream %d: the peer half-closed it twice", (int)stream->id);
    return;
  }
  stream->remote_done = 1;
  if (app->hooks.on_remote_done) app->hooks.on_remote_done(app, stream);
}

static int on_headers_end(speedy_session *session, int32_t stream_id, int end_stream, void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (stream && end_stream) remote_done(app, stream);
  return 0;
}

static int on_data_chunk(speedy_session *session, int32_t stream_id, const uint8_t *data,
                         size_t len, void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (!stream) {
    interop_app_fail(app, "DATA for stream %d that never had headers", (int)stream_id);
    return 0;
  }
  for (size_t i = 0; i < len; i++) {
    uint64_t at = stream->body_len + i;
    if (at < INTEROP_BODY_KEEP) stream->body_head[at] = data[i];
    if (stream->has_expect && stream->pattern_mismatch < 0 &&
        (at >= stream->expect_pattern ||
         data[i] != interop_pattern_byte(at, stream->expect_pattern))) {
      stream->pattern_mismatch = (int64_t)at;
    }
  }
  stream->body_fnv = interop_fnv1a(stream->body_fnv, data, len);
  stream->body_len += len;
  return 0;
}

static int on_data_end(speedy_session *session, int32_t stream_id, void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (stream) remote_done(app, stream);
  return 0;
}

static int on_stream_close(speedy_session *session, int32_t stream_id, uint32_t status,
                           void *user) {
  (void)session;
  interop_app *app = user;
  interop_stream *stream = interop_app_find_stream(app, stream_id);
  if (!stream) {
    interop_app_fail(app, "on_stream_close for unknown stream %d (status %s)", (int)stream_id,
                     speedy_rst_status_name(status));
    return 0;
  }
  if (stream->closed) {
    interop_app_fail(app, "stream %d closed twice", (int)stream_id);
    return 0;
  }
  stream->closed = 1;
  stream->close_status = status;
  if (status != SPEEDY_RST_NONE) {
    interop_app_fail(app, "stream %d (%s) closed with RST_STREAM %s", (int)stream_id,
                     stream->path[0] ? stream->path : "opened by the peer",
                     speedy_rst_status_name(status));
  }
  if (app->hooks.on_stream_closed) app->hooks.on_stream_closed(app, stream);
  return 0;
}

static int on_ping_ack(speedy_session *session, uint32_t ping_id, int64_t rtt_ns, void *user) {
  (void)session;
  (void)ping_id;
  interop_app *app = user;
  if (rtt_ns < 0)
    interop_app_fail(app, "PING %u: negative round trip %lld ns", ping_id, (long long)rtt_ns);
  app->pings_acked++;
  return 0;
}

static int on_goaway(speedy_session *session, int32_t last_good_id, uint32_t status, void *user) {
  (void)session;
  interop_app *app = user;
  app->goaway_seen++;
  app->goaway_last_good = last_good_id;
  app->goaway_status = status;
  return 0;
}

static int on_setting(speedy_session *session, uint32_t id, uint8_t flags, uint32_t value,
                      void *user) {
  (void)session;
  interop_app *app = user;
  if (app->n_settings < INTEROP_MAX_SETTINGS) {
    app->settings[app->n_settings].id = id;
    app->settings[app->n_settings].flags = flags;
    app->settings[app->n_settings].value = value;
    app->n_settings++;
  }
  return 0;
}

static void on_frame(speedy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                     uint32_t length, const char *summary, void *user) {
  (void)session;
  interop_app *app = user;
  char line[128];
  if ((unsigned)type < 11) {
    if (sent)
      app->frames_sent[type]++;
    else
      app->frames_received[type]++;
  }
  snprintf(line, sizeof line, "%s %s stream=%d flags=0x%02x len=%u %s", sent ? "send" : "recv",
           speedy_spdy_frame_type_name(type), (int)stream_id, flags, length,
           summary ? summary : "");
  trace_add(app, line);
  /* No scenario resets a stream, and a GOAWAY of ours is always the test's own. */
  if (sent && type == SPEEDY_SPDY_FRAME_RST_STREAM) {
    interop_app_fail(app, "speedy sent RST_STREAM on stream %d: %s", (int)stream_id,
                     summary ? summary : "");
  }
  if (sent && type == SPEEDY_SPDY_FRAME_GOAWAY && !app->goaway_sent) {
    interop_app_fail(app, "speedy sent GOAWAY on its own: %s", summary ? summary : "");
  }
}

int64_t interop_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                          uint32_t *flags, void *source, void *user) {
  (void)session;
  (void)stream_id;
  (void)user;
  interop_body *body = source;
  uint64_t left = body->size - body->offset;
  size_t n = left < len ? (size_t)left : len;
  for (size_t i = 0; i < n; i++) {
    uint64_t at = body->offset + i;
    buf[i] = body->text_len ? (uint8_t)body->text[at] : interop_pattern_byte(at, body->size);
  }
  body->offset += n;
  if (body->offset == body->size) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

int interop_app_init(interop_app *app, speedy_protocol protocol, speedy_role role,
                     const char *scenario, const interop_hooks *hooks,
                     const speedy_options *options) {
  speedy_callbacks *callbacks = NULL;
  memset(app, 0, sizeof *app);
  app->expect_request_body = INTEROP_UPLOAD_BODY;
  app->expect_push_body = INTEROP_PUSH_BODY;
  app->protocol = protocol;
  app->role = role;
  app->scenario = scenario;
  if (hooks) app->hooks = *hooks;
  int rc = speedy_callbacks_new(&callbacks);
  if (rc != 0) return rc;
  speedy_callbacks_set_on_begin_headers(callbacks, on_begin_headers);
  speedy_callbacks_set_on_header(callbacks, on_header);
  speedy_callbacks_set_on_headers_end(callbacks, on_headers_end);
  speedy_callbacks_set_on_data_chunk(callbacks, on_data_chunk);
  speedy_callbacks_set_on_data_end(callbacks, on_data_end);
  speedy_callbacks_set_on_stream_close(callbacks, on_stream_close);
  speedy_callbacks_set_on_ping_ack(callbacks, on_ping_ack);
  speedy_callbacks_set_on_goaway(callbacks, on_goaway);
  speedy_callbacks_set_on_setting(callbacks, on_setting);
  speedy_callbacks_set_on_frame(callbacks, on_frame);
  rc = speedy_session_new(&app->session, protocol, role, callbacks, options, app);
  speedy_callbacks_del(callbacks);
  return rc;
}

void interop_app_free(interop_app *app) {
  if (app->session) speedy_session_del(app->session);
  app->session = NULL;
}

/* ---- The child process ----------------------------------------------------------- */

static const char *version_arg(speedy_protocol protocol) {
  switch (protocol) {
  case SPEEDY_PROTOCOL_SPDY2:
    return "2";
  case SPEEDY_PROTOCOL_SPDY3:
    return "3";
  case SPEEDY_PROTOCOL_SPDY3_1:
    return "3.1";
  case SPEEDY_PROTOCOL_H2: /* spdy-transport speaks SPDY only */
    break;
  }
  return "?";
}

/* Puts fd at target in the child, without close-on-exec. */
static int child_fd(int fd, int target) {
  if (fd == target) {
    int fl = fcntl(fd, F_GETFD);
    return fl < 0 ? -1 : fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC);
  }
  return dup2(fd, target) < 0 ? -1 : 0;
}

static int set_nonblocking(int fd) {
  int fl = fcntl(fd, F_GETFL);
  return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int interop_peer_start(interop_peer *peer, const char *peer_role, speedy_protocol protocol,
                       const char *scenario, char *err, size_t err_cap) {
  int in_pipe[2], out_pipe[2], result_pipe[2];
  char script[4096], record[4096];
  memset(peer, 0, sizeof *peer);
  peer->pid = -1;
  peer->to_child = peer->from_child = peer->result_fd = -1;
  snprintf(script, sizeof script, "%s/tests/interop/peer.js", interop_source_dir());
  record[0] = '\0';
  const char *record_dir = getenv("SPEEDY_INTEROP_RECORD_DIR");
  if (record_dir && *record_dir) {
    snprintf(record, sizeof record, "%s/live-spdy%s-%s-node-%s.bin", record_dir,
             protocol == SPEEDY_PROTOCOL_SPDY3_1 ? "31" : version_arg(protocol), scenario,
             peer_role);
  }
  /* A peer that exits early must not kill the test with SIGPIPE: EPIPE is handled. */
  signal(SIGPIPE, SIG_IGN);
  if (pipe2(in_pipe, O_CLOEXEC) != 0) goto fail_errno;
  if (pipe2(out_pipe, O_CLOEXEC) != 0) goto fail_close_in;
  if (pipe2(result_pipe, O_CLOEXEC) != 0) goto fail_close_out;
  peer->pid = fork();
  if (peer->pid < 0) goto fail_close_all;
  if (peer->pid == 0) {
    /* The child dies with the test process, whatever kills that. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (child_fd(in_pipe[0], 0) != 0 || child_fd(out_pipe[1], 1) != 0 ||
        child_fd(result_pipe[1], 3) != 0) {
      _exit(126);
    }
    const char *argv[16];
    int argc = 0;
    argv[argc++] = node_program();
    argv[argc++] = script;
    argv[argc++] = "--role";
    argv[argc++] = peer_role;
    argv[argc++] = "--version";
    argv[argc++] = version_arg(protocol);
    argv[argc++] = "--scenario";
    argv[argc++] = scenario;
    argv[argc++] = "--timeout-ms";
    argv[argc++] = INTEROP_NODE_DEADLINE_MS;
    if (record[0]) {
      argv[argc++] = "--record";
      argv[argc++] = record;
    }
    argv[argc] = NULL;
    execvp(argv[0], (char *const *)argv);
    fprintf(stderr, "interop: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(result_pipe[1]);
  peer->to_child = in_pipe[1];
  peer->from_child = out_pipe[0];
  peer->result_fd = result_pipe[0];
  if (set_nonblocking(peer->to_child) != 0 || set_nonblocking(peer->from_child) != 0 ||
      set_nonblocking(peer->result_fd) != 0) {
    snprintf(err, err_cap, "fcntl: %s", strerror(errno));
    interop_peer_stop(peer);
    return -1;
  }
  return 0;

fail_close_all:
  close(result_pipe[0]);
  close(result_pipe[1]);
fail_close_out:
  close(out_pipe[0]);
  close(out_pipe[1]);
fail_close_in:
  close(in_pipe[0]);
  close(in_pipe[1]);
fail_errno:
  snprintf(err, err_cap, "cannot start the node peer: %s", strerror(errno));
  peer->pid = -1;
  return -1;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

void interop_peer_stop(interop_peer *peer) {
  close_fd(&peer->to_child);
  close_fd(&peer->from_child);
  close_fd(&peer->result_fd);
  if (peer->pid > 0) {
    int status = 0;
    /* With its stdin closed node exits by itself; give it a moment, then insist. */
    pid_t got = 0;
    for (int i = 0; i < 200 && (got = waitpid(peer->pid, &status, WNOHANG)) == 0; i++) {
      nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 10000000}, NULL);
    }
    if (got == 0) {
      kill(peer->pid, SIGKILL);
      waitpid(peer->pid, &status, 0);
    }
    peer->exit_status = status;
    peer->pid = -1;
  }
}

int interop_peer_ok(const interop_peer *peer) {
  return peer->result_complete && strncmp(peer->result, "{\"ok\":true", 10) == 0;
}

/* ---- The pump -------------------------------------------------------------------- */

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Follows the frame boundaries of what node sends, so a failure can say which frame
 * was being decoded. */
static void note_input(interop_peer *peer, const uint8_t *bytes, size_t len) {
  size_t i = 0;
  while (i < len) {
    if (peer->frame_left > 0) {
      size_t take = (uint64_t)(len - i) < peer->frame_left ? len - i : (size_t)peer->frame_left;
      peer->frame_left -= take;
      peer->in_offset += take;
      i += take;
      continue;
    }
    peer->hd[peer->hd_len++] = bytes[i++];
    peer->in_offset++;
    if (peer->hd_len < 8) continue;
    const uint8_t *h = peer->hd;
    uint32_t length = (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
    char *slot = peer->in_frames[peer->in_frames_total % 16];
    if (h[0] & 0x80) {
      snprintf(
          slot, sizeof peer->in_frames[0],
          "@%llu control v%u type %u flags 0x%02x length %u (%02x%02x%02x%02x%02x%02x%02x%02x)",
          (unsigned long long)(peer->in_offset - 8), (unsigned)((h[0] & 0x7f) << 8 | h[1]),
          (unsigned)(h[2] << 8 | h[3]), h[4], length, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
          h[7]);
    } else {
      snprintf(slot, sizeof peer->in_frames[0], "@%llu DATA stream %u flags 0x%02x length %u",
               (unsigned long long)(peer->in_offset - 8),
               (unsigned)((uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3]),
               h[4], length);
    }
    peer->in_frames_total++;
    peer->hd_len = 0;
    peer->frame_left = length;
  }
}

static void report(interop_app *app, interop_peer *peer, char *err, size_t err_cap,
                   const char *what) {
  static char trace[INTEROP_TRACE_LINES * 130];
  char frames[16 * 100];
  size_t used = 0;
  size_t first = peer->in_frames_total > 16 ? peer->in_frames_total - 16 : 0;
  frames[0] = '\0';
  for (size_t i = first; i < peer->in_frames_total && used < sizeof frames; i++) {
    int n = snprintf(frames + used, sizeof frames - used, "  %s\n", peer->in_frames[i % 16]);
    if (n < 0) break;
    used += (size_t)n;
  }
  interop_app_trace(app, trace, sizeof trace);
  snprintf(err, err_cap,
           "SPDY/%s %s, speedy as %s: %s\n"
           "failures noted in callbacks:\n%s"
           "node's verdict: %s\n"
           "last frame headers from node (byte offset in its stream):\n%s"
           "speedy's frame trace (last %d):\n%s",
           version_arg(app->protocol), app->scenario,
           app->role == SPEEDY_ROLE_SERVER ? "server" : "client", what,
           app->failures[0] ? app->failures : "  none\n",
           peer->result_complete ? peer->result : "(none yet)", frames, INTEROP_TRACE_LINES, trace);
}

int interop_run(interop_app *app, interop_peer *peer, int (*done)(interop_app *app), char *err,
                size_t err_cap) {
  static uint8_t out[256 * 1024];
  static uint8_t in[64 * 1024];
  size_t out_len = 0, out_off = 0;
  int64_t start = monotonic_ns();
  int64_t deadline = start + (int64_t)INTEROP_DEADLINE_MS * 1000000;
  char what[512];

  for (;;) {
    int64_t now = monotonic_ns();
    speedy_session_set_now(app->session, now);
    if (now > deadline) {
      snprintf(what, sizeof what, "no result within %d ms (speedy side done: %s)",
               INTEROP_DEADLINE_MS, done(app) ? "yes" : "no");
      report(app, peer, err, err_cap, what);
      interop_peer_stop(peer);
      return -1;
    }
    if (peer->to_child >= 0) {
      if (out_off == out_len) out_off = out_len = 0;
      while (out_len < sizeof out) {
        int64_t n = speedy_session_send(app->session, out + out_len, sizeof out - out_len);
        if (n < 0) {
          snprintf(what, sizeof what, "speedy_session_send failed: %s (%d)",
                   speedy_strerror((int)n), (int)n);
          report(app, peer, err, err_cap, what);
          interop_peer_stop(peer);
          return -1;
        }
        if (n == 0) break;
        out_len += (size_t)n;
      }
    }
    if (peer->result_complete && !interop_peer_ok(peer)) {
      report(app, peer, err, err_cap, "node reported a failure");
      interop_peer_stop(peer);
      return -1;
    }
    if (app->n_failures > 0) {
      /* Every failure is final: say so now rather than at the deadline. Output still
       * pending (a RST_STREAM or GOAWAY of ours) is in the trace. */
      report(app, peer, err, err_cap, "speedy's side noted a failure");
      interop_peer_stop(peer);
      return -1;
    }
    if (peer->to_child >= 0 && out_off == out_len && peer->result_complete && done(app)) {
      close_fd(&peer->to_child); /* node's signal to exit */
    }
    if (peer->out_eof && peer->result_eof) {
      if (peer->to_child >= 0) {
        report(app, peer, err, err_cap, "node exited before the scenario finished");
        interop_peer_stop(peer);
        return -1;
      }
      break;
    }

    struct pollfd fds[3];
    nfds_t n_fds = 0;
    int at_out = -1, at_result = -1, at_in = -1;
    if (!peer->out_eof) {
      at_out = (int)n_fds;
      fds[n_fds++] = (struct pollfd){.fd = peer->from_child, .events = POLLIN};
    }
    if (!peer->result_eof) {
      at_result = (int)n_fds;
      fds[n_fds++] = (struct pollfd){.fd = peer->result_fd, .events = POLLIN};
    }
    if (peer->to_child >= 0 && out_off < out_len) {
      at_in = (int)n_fds;
      fds[n_fds++] = (struct pollfd){.fd = peer->to_child, .events = POLLOUT};
    }
    int ready = poll(fds, n_fds, 20);
    if (ready < 0 && errno != EINTR) {
      snprintf(what, sizeof what, "poll: %s", strerror(errno));
      report(app, peer, err, err_cap, what);
      interop_peer_stop(peer);
      return -1;
    }
    if (ready <= 0) continue;

    if (at_out >= 0 && fds[at_out].revents) {
      ssize_t n = read(peer->from_child, in, sizeof in);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        peer->out_eof = 1;
      } else if (n > 0) {
        note_input(peer, in, (size_t)n);
        speedy_session_set_now(app->session, monotonic_ns());
        int64_t used = speedy_session_recv(app->session, in, (size_t)n);
        if (used != n) {
          snprintf(what, sizeof what,
                   "speedy_session_recv returned %lld (%s) for %zd bytes ending at offset %llu "
                   "of node's stream",
                   (long long)used, used < 0 ? speedy_strerror((int)used) : "short count", n,
                   (unsigned long long)peer->in_offset);
          report(app, peer, err, err_cap, what);
          interop_peer_stop(peer);
          return -1;
        }
      }
    }
    if (at_result >= 0 && fds[at_result].revents) {
      char buf[1024];
      ssize_t n = read(peer->result_fd, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        peer->result_eof = 1;
      } else if (n > 0) {
        for (ssize_t i = 0; i < n && !peer->result_complete; i++) {
          if (buf[i] == '\n') {
            peer->result_complete = 1;
          } else if (peer->result_len + 1 < sizeof peer->result) {
            peer->result[peer->result_len++] = buf[i];
          }
        }
        peer->result[peer->result_len] = '\0';
      }
    }
    if (at_in >= 0 && fds[at_in].revents) {
      ssize_t n = write(peer->to_child, out + out_off, out_len - out_off);
      if (n > 0) {
        out_off += (size_t)n;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        /* node closed its stdin: it has exited or is about to; its verdict tells. */
        close_fd(&peer->to_child);
        out_off = out_len = 0;
      }
    }
  }
  if (!done(app)) {
    report(app, peer, err, err_cap, "node finished but speedy's side of the scenario did not");
    interop_peer_stop(peer);
    return -1;
  }
  interop_peer_stop(peer);
  return 0;
}
