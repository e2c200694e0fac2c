/* test_interop_server.c — speedy as the server, node's spdy-transport (peer.js) as the
 * client, in memory over pipes: every scenario in SPDY/2, /3 and /3.1. speedy's side is
 * checked here; node's side checks what it received and reports (peer.js).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interop_harness.h"

static speedy_header header(const char *name, const char *value) {
  speedy_header h = {name, strlen(name), value, strlen(value)};
  return h;
}

/* N of a "/bytes/N" path (at most 7 digits), or -1. */
static int64_t bytes_path_size(const char *path) {
  const char *prefix = "/bytes/";
  if (!path || strncmp(path, prefix, strlen(prefix)) != 0) return -1;
  const char *digits = path + strlen(prefix);
  size_t len = strlen(digits);
  if (len == 0 || len > 7 || strspn(digits, "0123456789") != len) return -1;
  return strtoll(digits, NULL, 10);
}

static void expect_header(interop_app *app, const interop_stream *stream, const char *name,
                          size_t index, const char *want) {
  const char *got = interop_stream_header(stream, name, index);
  if (!got || strcmp(got, want) != 0) {
    interop_app_fail(app, "stream %d: %s[%zu] is %s%s%s, expected \"%s\"", (int)stream->id, name,
                     index, got ? "\"" : "", got ? got : "missing", got ? "\"" : "", want);
  }
}

/* What every request of peer.js's client carries. */
static void check_request_headers(interop_app *app, const interop_stream *stream,
                                  const char *method, int with_multi) {
  expect_header(app, stream, ":method", 0, method);
  /* SPDY's :host arrives as :authority, and :version stays inside libspeedy. */
  expect_header(app, stream, ":authority", 0, INTEROP_HOST);
  expect_header(app, stream, ":scheme", 0, "https");
  if (interop_stream_header(stream, ":version", 0) != NULL)
    interop_app_fail(app, "stream %d: :version was passed on", (int)stream->id);
  if (!interop_stream_header(stream, "user-agent", 0)) {
    interop_app_fail(app, "stream %d: no user-agent", (int)stream->id);
  }
  if (with_multi) {
    /* spdy-transport joins the array ['one', 'two'] with NUL: one call per value. */
    expect_header(app, stream, "x-multi", 0, "one");
    expect_header(app, stream, "x-multi", 1, "two");
  }
  if (stream->headers_truncated) {
    interop_app_fail(app, "stream %d: a header did not fit the test's buffers", (int)stream->id);
  }
}

static void respond_bytes(interop_app *app, interop_stream *stream, uint64_t n) {
  char length[24];
  snprintf(length, sizeof length, "%" PRIu64, n);
  const speedy_header headers[] = {
      header(":status", "200"),
      header("content-type", "application/octet-stream"),
      header("set-cookie", "a=1; Path=/"),
      header("set-cookie", "b=2; Path=/"),
      header("x-body-length", length),
      header("server", "speedy-interop"),
  };
  stream->out.size = n;
  stream->out.offset = 0;
  /* An empty body rides on the SYN_REPLY's FIN; the others come from the data source. */
  int rc =
      speedy_submit_response(app->session, stream->id, headers, sizeof headers / sizeof headers[0],
                             n ? interop_body_read : NULL, &stream->out);
  if (rc != 0) {
    interop_app_fail(app, "speedy_submit_response(stream %d): %s", (int)stream->id,
                     speedy_strerror(rc));
  }
}

static void respond_text(interop_app *app, interop_stream *stream, const char *status,
                         const char *text) {
  const speedy_header headers[] = {
      header(":status", status),
      header("content-type", "text/plain"),
  };
  snprintf(stream->out.text, sizeof stream->out.text, "%s", text);
  stream->out.text_len = strlen(stream->out.text);
  stream->out.size = stream->out.text_len;
  stream->out.offset = 0;
  int rc =
      speedy_submit_response(app->session, stream->id, headers, sizeof headers / sizeof headers[0],
                             interop_body_read, &stream->out);
  if (rc != 0) {
    interop_app_fail(app, "speedy_submit_response(stream %d): %s", (int)stream->id,
                     speedy_strerror(rc));
  }
}

/* GET /index.html: push /pushed.js first (so the client knows of it before it could ask),
 * then answer. */
static void respond_index_with_push(interop_app *app, interop_stream *stream) {
  interop_stream *pushed = interop_app_new_stream(app);
  if (!pushed) return;
  const speedy_header request[] = {
      header(":method", "GET"), /* spdy-transport refuses a SYN_STREAM without it */
      header(":scheme", "https"),
      header(":authority", INTEROP_HOST),
      header(":path", INTEROP_PUSH_PATH),
  };
  const speedy_header response[] = {
      header(":status", "200"),
      header("content-type", "application/javascript"),
      header("x-pushed", "yes"),
  };
  pushed->out.size = INTEROP_PUSH_BODY;
  int32_t id = speedy_submit_push(
      app->session, stream->id, 3, request, sizeof request / sizeof request[0], response,
      sizeof response / sizeof response[0], interop_body_read, &pushed->out, NULL);
  if (id <= 0) {
    interop_app_fail(app, "speedy_submit_push(associated %d): %s", (int)stream->id,
                     speedy_strerror(id));
    pushed->id = -1;
    return;
  }
  pushed->id = id;
  pushed->kind = SPEEDY_HEADERS_PUSH;
  pushed->associated_id = stream->id;
  const speedy_header headers[] = {
      header(":status", "200"),
      header("content-type", "text/html"),
  };
  stream->out.size = INTEROP_INDEX_BODY;
  int rc =
      speedy_submit_response(app->session, stream->id, headers, sizeof headers / sizeof headers[0],
                             interop_body_read, &stream->out);
  if (rc != 0) {
    interop_app_fail(app, "speedy_submit_response(stream %d): %s", (int)stream->id,
                     speedy_strerror(rc));
  }
}

/* The request is complete: answer it as peer.js's server would. */
static void server_on_remote_done(interop_app *app, interop_stream *stream) {
  if (stream->kind != SPEEDY_HEADERS_REQUEST) {
    interop_app_fail(app, "stream %d: the peer finished a stream of kind %d", (int)stream->id,
                     (int)stream->kind);
    return;
  }
  const char *method = interop_stream_header(stream, ":method", 0);
  const char *path = interop_stream_header(stream, ":path", 0);
  int64_t n = bytes_path_size(path);
  if (method && strcmp(method, "GET") == 0 && n >= 0) {
    check_request_headers(app, stream, "GET", 1);
    if (stream->body_len != 0) {
      interop_app_fail(app, "GET %s carried %" PRIu64 " body bytes", path, stream->body_len);
    }
    respond_bytes(app, stream, (uint64_t)n);
  } else if (method && strcmp(method, "POST") == 0 && path && strcmp(path, "/upload") == 0) {
    char text[64];
    check_request_headers(app, stream, "POST", 0);
    interop_stream_check_pattern(app, stream, "POST /upload");
    snprintf(text, sizeof text, "%" PRIu64 " %08" PRIx32, stream->body_len, stream->body_fnv);
    respond_text(app, stream, "200", text);
  } else if (method && strcmp(method, "GET") == 0 && path && strcmp(path, "/index.html") == 0) {
    check_request_headers(app, stream, "GET", 1);
    respond_index_with_push(app, stream);
  } else {
    interop_app_fail(app, "unexpected request %s %s", method ? method : "(no :method)",
                     path ? path : "(no :path)");
    respond_text(app, stream, "404", "not found");
  }
}

/* goaway_server: once the one exchange is over, say GOAWAY. */
static void server_on_stream_closed(interop_app *app, interop_stream *stream) {
  if (strcmp(app->scenario, "goaway_server") != 0 || stream->kind != SPEEDY_HEADERS_REQUEST ||
      app->goaway_sent) {
    return;
  }
  app->goaway_sent = 1;
  int rc = speedy_submit_goaway(app->session, SPEEDY_RST_NONE, NULL, 0);
  if (rc != 0) interop_app_fail(app, "speedy_submit_goaway: %s", speedy_strerror(rc));
}

static const interop_hooks server_hooks = {
    .on_remote_done = server_on_remote_done,
    .on_stream_closed = server_on_stream_closed,
};

static int three_streams_closed(interop_app *app) { return interop_app_closed_streams(app) == 3; }
static int two_streams_closed(interop_app *app) { return interop_app_closed_streams(app) == 2; }
static int one_stream_closed(interop_app *app) { return interop_app_closed_streams(app) == 1; }
static int client_settings_seen(interop_app *app) {
  return one_stream_closed(app) &&
         interop_app_setting(app, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS) ==
             INTEROP_CLIENT_MAX_STREAMS &&
         interop_app_setting(app, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE) == INTEROP_CLIENT_WINDOW;
}
static int two_pings_acked(interop_app *app) { return app->pings_acked >= 2; }
static int goaway_seen_after_one(interop_app *app) {
  return app->goaway_seen && one_stream_closed(app);
}
static int goaway_sent_after_one(interop_app *app) {
  return app->goaway_sent && one_stream_closed(app);
}

static char report[65536];

/* The app of the running test, freed by finish() or, when an assertion ended the test
 * early, by the fixture. */
static interop_app *current_app;

/* Runs scenario against peer.js's client; setup may submit frames first. Asserts that
 * the exchange completed, node was satisfied, no callback noted a failure and no stream
 * was reset. The caller frees the result with finish(). */
static interop_app *run(speedy_protocol protocol, const char *scenario, int (*done)(interop_app *),
                        void (*setup)(interop_app *)) {
  interop_app *app = calloc(1, sizeof *app);
  interop_peer peer;
  cr_assert_not_null(app, "out of memory");
  current_app = app;
  int rc = interop_app_init(app, protocol, SPEEDY_ROLE_SERVER, scenario, &server_hooks, NULL);
  cr_assert_eq(rc, 0, "speedy_session_new: %s", speedy_strerror(rc));
  if (setup) setup(app);
  cr_assert_eq(interop_peer_start(&peer, "client", protocol, scenario, report, sizeof report), 0,
               "%s", report);
  rc = interop_run(app, &peer, done, report, sizeof report);
  cr_assert_eq(rc, 0, "%s", report);
  cr_assert(interop_peer_ok(&peer), "node's verdict: %s", peer.result);
  cr_assert_eq(app->n_failures, 0, "speedy's side noted failures:\n%s", app->failures);
  cr_assert_eq(interop_app_reset_streams(app), 0, "a stream was reset; trace:\n%s",
               (interop_app_trace(app, report, sizeof report), report));
  return app;
}

static void finish(interop_app *app) {
  interop_app_free(app);
  free(app);
  current_app = NULL;
}

static void free_current_app(void) {
  if (current_app) finish(current_app);
}

static int has_flow_control(speedy_protocol protocol) { return protocol != SPEEDY_PROTOCOL_SPDY2; }

#define EACH_VERSION(name, fn)                                                                     \
  Test(speedy_server, name##_spdy2, .timeout = 60, .fini = free_current_app) {                     \
    fn(SPEEDY_PROTOCOL_SPDY2);                                                                     \
  }                                                                                                \
  Test(speedy_server, name##_spdy3, .timeout = 60, .fini = free_current_app) {                     \
    fn(SPEEDY_PROTOCOL_SPDY3);                                                                     \
  }                                                                                                \
  Test(speedy_server, name##_spdy31, .timeout = 60, .fini = free_current_app) {                    \
    fn(SPEEDY_PROTOCOL_SPDY3_1);                                                                   \
  }

/* get: three GETs with several headers; bodies of 0 B, 1 KiB and 200 KiB with two
 * set-cookie values reach node intact. In v3 the 200 KiB body cannot pass without node's
 * WINDOW_UPDATEs. */
static void get_bodies(speedy_protocol protocol) {
  interop_app *app = run(protocol, "get", three_streams_closed, NULL);
  if (has_flow_control(protocol)) {
    cr_expect_gt(app->frames_received[SPEEDY_SPDY_FRAME_WINDOW_UPDATE], 0,
                 "a 200 KiB body went through a 64 KiB window without WINDOW_UPDATE");
  }
  finish(app);
}
EACH_VERSION(node_client_gets_0_1k_200k_bodies_and_cookies, get_bodies)

/* post: 100 KiB uploaded by node arrive intact (more than our 64 KiB window: v3 needs our
 * WINDOW_UPDATEs), and node sees our count and checksum. */
static void post_body(speedy_protocol protocol) {
  interop_app *app = run(protocol, "post", one_stream_closed, NULL);
  if (has_flow_control(protocol)) {
    cr_expect_gt(app->frames_sent[SPEEDY_SPDY_FRAME_WINDOW_UPDATE], 0,
                 "100 KiB arrived through a 64 KiB window without our WINDOW_UPDATE");
  }
  finish(app);
}
EACH_VERSION(node_client_post_body_arrives_intact, post_body)

/* settings: node's MAX_CONCURRENT_STREAMS and INITIAL_WINDOW_SIZE reach on_setting; ours
 * reach node (its verdict). */
static void announce_server_settings(interop_app *app) {
  const speedy_setting settings[] = {
      {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, INTEROP_SERVER_MAX_STREAMS},
      {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, INTEROP_SERVER_WINDOW},
  };
  int rc = speedy_submit_settings(app->session, 0, settings, 2);
  cr_assert_eq(rc, 0, "speedy_submit_settings: %s", speedy_strerror(rc));
}
static void settings_both_ways(speedy_protocol protocol) {
  interop_app *app = run(protocol, "settings", client_settings_seen, announce_server_settings);
  cr_expect_eq(speedy_session_remote_setting(app->session, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS),
               INTEROP_CLIENT_MAX_STREAMS);
  cr_expect_eq(speedy_session_remote_setting(app->session, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE),
               INTEROP_CLIENT_WINDOW);
  finish(app);
}
EACH_VERSION(settings_from_node_client_reach_on_setting_and_back, settings_both_ways)

/* ping: our two PINGs come back (on_ping_ack); node's two are answered (its verdict). */
static void send_two_pings(interop_app *app) {
  for (int i = 0; i < 2; i++) {
    uint32_t id = 0;
    int rc = speedy_submit_ping(app->session, &id);
    cr_assert_eq(rc, 0, "speedy_submit_ping: %s", speedy_strerror(rc));
    cr_assert_eq(id % 2, 0, "a server's PING id must be even, got %u", id);
  }
}
static void pings(speedy_protocol protocol) {
  interop_app *app = run(protocol, "ping", two_pings_acked, send_two_pings);
  cr_expect_eq(app->pings_acked, 2);
  finish(app);
}
EACH_VERSION(pings_are_answered_both_ways_with_node_client, pings)

/* goaway_client: node's GOAWAY (OK) after its request reaches on_goaway. */
static void goaway_from_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "goaway_client", goaway_seen_after_one, NULL);
  cr_expect_eq(app->goaway_seen, 1);
  cr_expect_eq(app->goaway_status, SPEEDY_RST_NONE);
  finish(app);
}
EACH_VERSION(goaway_from_node_client_is_seen, goaway_from_node)

/* goaway_server: our GOAWAY after the exchange reaches node with last-good-stream-id 1
 * and status OK (its verdict). */
static void goaway_to_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "goaway_server", goaway_sent_after_one, NULL);
  cr_expect_eq(app->frames_sent[SPEEDY_SPDY_FRAME_GOAWAY], 1);
  finish(app);
}
EACH_VERSION(goaway_from_speedy_server_reaches_node_client, goaway_to_node)

/* push: our push of /pushed.js with GET /index.html reaches node's client with its
 * body. */
static void push_to_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "push", two_streams_closed, NULL);
  finish(app);
}
EACH_VERSION(push_from_speedy_server_reaches_node_client, push_to_node)

int main(int argc, char *argv[]) { return interop_main(argc, argv); }
