/* test_interop_client.c — speedy as the client, node's spdy-transport (peer.js) as the
 * server, in memory over pipes: every scenario in SPDY/2, /3 and /3.1. speedy's side is
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

static void expect_header(interop_app *app, const interop_stream *stream, const char *name,
                          size_t index, const char *want) {
  const char *got = interop_stream_header(stream, name, index);
  if (!got || strcmp(got, want) != 0) {
    interop_app_fail(app, "stream %d (%s): %s[%zu] is %s%s%s, expected \"%s\"", (int)stream->id,
                     stream->path, name, index, got ? "\"" : "", got ? got : "missing",
                     got ? "\"" : "", want);
  }
}

/* spdy-transport sends ":status: 200 OK"; libspeedy hands over the three digits. */
static void expect_status_200(interop_app *app, const interop_stream *stream) {
  const char *status = interop_stream_header(stream, ":status", 0);
  if (!status || strcmp(status, "200") != 0) {
    interop_app_fail(app, "stream %d (%s): :status is %s, expected 200", (int)stream->id,
                     stream->path, status ? status : "missing");
  }
  if (stream->headers_truncated) {
    interop_app_fail(app, "stream %d: a header did not fit the test's buffers", (int)stream->id);
  }
}

/* Submits a request as peer.js's client would. body_size > 0 sends a pattern body
 * (POST). expect_body >= 0 checks the response body against the pattern of that size. */
static interop_stream *submit(interop_app *app, const char *method, const char *path,
                              uint64_t body_size, int64_t expect_body) {
  interop_stream *stream = interop_app_new_stream(app);
  char length[24];
  cr_assert_not_null(stream, "%s", app->failures);
  snprintf(stream->path, sizeof stream->path, "%s", path);
  snprintf(length, sizeof length, "%" PRIu64, body_size);
  speedy_header headers[12];
  size_t n = 0;
  /* HTTP/2's names: libspeedy writes SPDY's (:host, :version) for spdy-transport. */
  headers[n++] = header(":method", method);
  headers[n++] = header(":scheme", "https");
  headers[n++] = header(":authority", INTEROP_HOST);
  headers[n++] = header(":path", path);
  headers[n++] = header("user-agent", "speedy-interop/1");
  headers[n++] = header("accept", "*/*");
  if (body_size) {
    headers[n++] = header("content-type", "application/octet-stream");
    headers[n++] = header("content-length", length);
  } else {
    /* Two fields of one name: the library joins them with NUL on the wire. */
    headers[n++] = header("x-multi", "one");
    headers[n++] = header("x-multi", "two");
  }
  stream->out.size = body_size;
  int32_t id = speedy_submit_request(app->session, 3, headers, n,
                                     body_size ? interop_body_read : NULL, &stream->out, NULL);
  cr_assert_gt(id, 0, "speedy_submit_request(%s %s): %s", method, path, speedy_strerror(id));
  cr_assert_eq(id % 2, 1, "a client's stream id must be odd, got %d", (int)id);
  stream->id = id;
  stream->has_expect = expect_body >= 0;
  stream->expect_pattern = expect_body >= 0 ? (uint64_t)expect_body : 0;
  return stream;
}

static void check_bytes_response(interop_app *app, const interop_stream *stream) {
  char length[24];
  snprintf(length, sizeof length, "%" PRIu64, stream->expect_pattern);
  expect_status_200(app, stream);
  expect_header(app, stream, "content-type", 0, "application/octet-stream");
  /* spdy-transport joins the set-cookie array with NUL: one call per value, in order. */
  expect_header(app, stream, "set-cookie", 0, "a=1; Path=/");
  expect_header(app, stream, "set-cookie", 1, "b=2; Path=/");
  expect_header(app, stream, "x-body-length", 0, length);
  interop_stream_check_pattern(app, stream, stream->path);
}

static void check_upload_response(interop_app *app, const interop_stream *stream) {
  char want[64];
  uint32_t fnv = INTEROP_FNV_INIT;
  for (uint64_t i = 0; i < INTEROP_UPLOAD_BODY; i++) {
    uint8_t b = interop_pattern_byte(i, INTEROP_UPLOAD_BODY);
    fnv = interop_fnv1a(fnv, &b, 1);
  }
  snprintf(want, sizeof want, "%u %08" PRIx32, INTEROP_UPLOAD_BODY, fnv);
  expect_status_200(app, stream);
  size_t len = stream->body_len < sizeof stream->body_head ? (size_t)stream->body_len : 0;
  if (len != strlen(want) || memcmp(stream->body_head, want, len) != 0) {
    interop_app_fail(app,
                     "POST /upload: node answered \"%.*s\" (%" PRIu64 " bytes), expected \"%s\"",
                     (int)len, (const char *)stream->body_head, stream->body_len, want);
  }
}

static void check_push(interop_app *app, interop_stream *stream) {
  const interop_stream *index = NULL;
  for (size_t i = 0; i < app->n_streams; i++) {
    if (strcmp(app->streams[i].path, "/index.html") == 0) index = &app->streams[i];
  }
  if (!index || stream->associated_id != index->id) {
    interop_app_fail(app, "push stream %d: associated with %d, expected the /index.html stream",
                     (int)stream->id, (int)stream->associated_id);
  }
  if (stream->id % 2 != 0) {
    interop_app_fail(app, "push stream id %d is odd", (int)stream->id);
  }
  snprintf(stream->path, sizeof stream->path, "push %s", INTEROP_PUSH_PATH);
  expect_header(app, stream, ":scheme", 0, "https");
  expect_header(app, stream, ":authority", 0, INTEROP_HOST); /* :host on the wire */
  expect_header(app, stream, ":path", 0, INTEROP_PUSH_PATH);
  /* spdy-transport puts the response fields into the pushed SYN_STREAM too. */
  expect_status_200(app, stream);
  expect_header(app, stream, "content-type", 0, "application/javascript");
  expect_header(app, stream, "x-pushed", 0, "yes");
  interop_stream_check_pattern(app, stream, "push /pushed.js");
}

static void client_on_remote_done(interop_app *app, interop_stream *stream) {
  if (stream->kind == SPEEDY_HEADERS_PUSH) {
    check_push(app, stream);
  } else if (stream->kind != SPEEDY_HEADERS_RESPONSE) {
    interop_app_fail(app, "stream %d: the peer finished a stream of kind %d", (int)stream->id,
                     (int)stream->kind);
  } else if (strcmp(stream->path, "/upload") == 0) {
    check_upload_response(app, stream);
  } else if (strcmp(stream->path, "/index.html") == 0) {
    expect_status_200(app, stream);
    interop_stream_check_pattern(app, stream, "GET /index.html");
  } else {
    check_bytes_response(app, stream);
  }
}

/* goaway_client: once the one exchange is over, say GOAWAY. */
static void client_on_stream_closed(interop_app *app, interop_stream *stream) {
  if (strcmp(app->scenario, "goaway_client") != 0 || app->goaway_sent) return;
  (void)stream;
  app->goaway_sent = 1;
  int rc = speedy_submit_goaway(app->session, SPEEDY_RST_NONE, NULL, 0);
  if (rc != 0) interop_app_fail(app, "speedy_submit_goaway: %s", speedy_strerror(rc));
}

static const interop_hooks client_hooks = {
    .on_remote_done = client_on_remote_done,
    .on_stream_closed = client_on_stream_closed,
};

static int three_streams_closed(interop_app *app) { return interop_app_closed_streams(app) == 3; }
static int two_streams_closed(interop_app *app) { return interop_app_closed_streams(app) == 2; }
static int one_stream_closed(interop_app *app) { return interop_app_closed_streams(app) == 1; }
static int server_settings_seen(interop_app *app) {
  return one_stream_closed(app) &&
         interop_app_setting(app, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS) ==
             INTEROP_SERVER_MAX_STREAMS &&
         interop_app_setting(app, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE) == INTEROP_SERVER_WINDOW;
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

/* Runs scenario against peer.js's server; setup submits our side's frames. Asserts that
 * the exchange completed, node was satisfied, no callback noted a failure and no stream
 * was reset. The caller frees the result with finish(). */
static interop_app *run(speedy_protocol protocol, const char *scenario, int (*done)(interop_app *),
                        void (*setup)(interop_app *)) {
  interop_app *app = calloc(1, sizeof *app);
  interop_peer peer;
  cr_assert_not_null(app, "out of memory");
  current_app = app;
  /* A wide stream window, as speedy get uses. spdy-transport forgets a stream once its
   * response is written, though its last DATA frames are still queued; a stream
   * WINDOW_UPDATE arriving then is answered with RST_STREAM INVALID_STREAM, which overtakes
   * those frames and truncates the body. Session WINDOW_UPDATEs (3.1) still flow. */
  speedy_options *options = NULL;
  cr_assert_eq(speedy_options_new(&options), 0);
  speedy_options_set_stream_window(options, 1 << 20);
  int rc = interop_app_init(app, protocol, SPEEDY_ROLE_CLIENT, scenario, &client_hooks, options);
  speedy_options_del(options);
  cr_assert_eq(rc, 0, "speedy_session_new: %s", speedy_strerror(rc));
  if (setup) setup(app);
  cr_assert_eq(interop_peer_start(&peer, "server", protocol, scenario, report, sizeof report), 0,
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
  Test(speedy_client, name##_spdy2, .timeout = 60, .fini = free_current_app) {                     \
    fn(SPEEDY_PROTOCOL_SPDY2);                                                                     \
  }                                                                                                \
  Test(speedy_client, name##_spdy3, .timeout = 60, .fini = free_current_app) {                     \
    fn(SPEEDY_PROTOCOL_SPDY3);                                                                     \
  }                                                                                                \
  Test(speedy_client, name##_spdy31, .timeout = 60, .fini = free_current_app) {                    \
    fn(SPEEDY_PROTOCOL_SPDY3_1);                                                                   \
  }

/* get: node answers our three GETs with headers (two set-cookie values) and bodies of
 * 0 B, 1 KiB and 200 KiB. Our stream window is 1 MiB (see run()): in v3 the 200 KiB
 * arrive only if node applied our SETTINGS_INITIAL_WINDOW_SIZE (it would stall at 64 KiB
 * otherwise); in v3.1 they also need our session WINDOW_UPDATEs. */
static void submit_gets(interop_app *app) {
  submit(app, "GET", "/bytes/0", 0, 0);
  submit(app, "GET", "/bytes/1024", 0, 1024);
  submit(app, "GET", "/bytes/204800", 0, INTEROP_LARGE_BODY);
}
static void get_bodies(speedy_protocol protocol) {
  interop_app *app = run(protocol, "get", three_streams_closed, submit_gets);
  if (protocol == SPEEDY_PROTOCOL_SPDY3_1) {
    cr_expect_gt(app->frames_sent[SPEEDY_SPDY_FRAME_WINDOW_UPDATE], 0,
                 "200 KiB arrived through a 64 KiB session window without our WINDOW_UPDATE");
  }
  finish(app);
}
EACH_VERSION(node_server_answers_0_1k_200k_bodies_and_cookies, get_bodies)

/* post: our 100 KiB upload reaches node intact through its 64 KiB window (v3: we must
 * wait for its WINDOW_UPDATEs); node answers with the count and checksum. */
static void submit_post(interop_app *app) {
  submit(app, "POST", "/upload", INTEROP_UPLOAD_BODY, -1);
}
static void post_body(speedy_protocol protocol) {
  interop_app *app = run(protocol, "post", one_stream_closed, submit_post);
  if (has_flow_control(protocol)) {
    cr_expect_gt(app->frames_received[SPEEDY_SPDY_FRAME_WINDOW_UPDATE], 0,
                 "100 KiB went through node's 64 KiB window without its WINDOW_UPDATE");
  }
  finish(app);
}
EACH_VERSION(post_body_reaches_node_server_intact, post_body)

/* push: node pushes /pushed.js with our GET /index.html: we see SPEEDY_HEADERS_PUSH with
 * :scheme, :host and :path, associated with our stream, and the pushed body. */
static void submit_index(interop_app *app) {
  submit(app, "GET", "/index.html", 0, INTEROP_INDEX_BODY);
}
static void push_from_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "push", two_streams_closed, submit_index);
  size_t pushes = 0;
  for (size_t i = 0; i < app->n_streams; i++) pushes += app->streams[i].kind == SPEEDY_HEADERS_PUSH;
  cr_expect_eq(pushes, 1, "expected one pushed stream, saw %zu", pushes);
  finish(app);
}
EACH_VERSION(push_from_node_server_is_received_with_its_body, push_from_node)

/* settings: node's MAX_CONCURRENT_STREAMS and INITIAL_WINDOW_SIZE reach on_setting; ours
 * reach node (its verdict). */
static void settings_then_get(interop_app *app) {
  const speedy_setting settings[] = {
      {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, INTEROP_CLIENT_MAX_STREAMS},
      {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, INTEROP_CLIENT_WINDOW},
  };
  int rc = speedy_submit_settings(app->session, 0, settings, 2);
  cr_assert_eq(rc, 0, "speedy_submit_settings: %s", speedy_strerror(rc));
  submit(app, "GET", "/bytes/1024", 0, 1024);
}
static void settings_both_ways(speedy_protocol protocol) {
  interop_app *app = run(protocol, "settings", server_settings_seen, settings_then_get);
  cr_expect_eq(speedy_session_remote_setting(app->session, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS),
               INTEROP_SERVER_MAX_STREAMS);
  cr_expect_eq(speedy_session_remote_setting(app->session, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE),
               INTEROP_SERVER_WINDOW);
  finish(app);
}
EACH_VERSION(settings_from_node_server_reach_on_setting_and_back, settings_both_ways)

/* ping: our two PINGs come back (on_ping_ack); node's two are answered (its verdict). */
static void send_two_pings(interop_app *app) {
  for (int i = 0; i < 2; i++) {
    uint32_t id = 0;
    int rc = speedy_submit_ping(app->session, &id);
    cr_assert_eq(rc, 0, "speedy_submit_ping: %s", speedy_strerror(rc));
    cr_assert_eq(id % 2, 1, "a client's PING id must be odd, got %u", id);
  }
}
static void pings(speedy_protocol protocol) {
  interop_app *app = run(protocol, "ping", two_pings_acked, send_two_pings);
  cr_expect_eq(app->pings_acked, 2);
  finish(app);
}
EACH_VERSION(pings_are_answered_both_ways_with_node_server, pings)

/* goaway_server: node's GOAWAY after answering reaches on_goaway with last-good-stream-id
 * 1 and status OK; afterwards no new stream may start. */
static void submit_one_get(interop_app *app) { submit(app, "GET", "/bytes/1024", 0, 1024); }
static void goaway_from_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "goaway_server", goaway_seen_after_one, submit_one_get);
  cr_expect_eq(app->goaway_seen, 1);
  cr_expect_eq(app->goaway_last_good, 1);
  cr_expect_eq(app->goaway_status, SPEEDY_RST_NONE);
  const speedy_header headers[] = {
      header(":method", "GET"),      header(":path", "/late"),   header(":version", "HTTP/1.1"),
      header(":host", INTEROP_HOST), header(":scheme", "https"),
  };
  int32_t rc = speedy_submit_request(app->session, 3, headers, 5, NULL, NULL, NULL);
  cr_expect_eq(rc, SPEEDY_ERR_SESSION_CLOSING, "a request after GOAWAY returned %d (%s)", (int)rc,
               speedy_strerror(rc));
  finish(app);
}
EACH_VERSION(goaway_from_node_server_is_seen_and_closes_the_session, goaway_from_node)

/* goaway_client: our GOAWAY (OK) after the exchange reaches node (its verdict). */
static void goaway_to_node(speedy_protocol protocol) {
  interop_app *app = run(protocol, "goaway_client", goaway_sent_after_one, submit_one_get);
  cr_expect_eq(app->frames_sent[SPEEDY_SPDY_FRAME_GOAWAY], 1);
  finish(app);
}
EACH_VERSION(goaway_from_speedy_client_reaches_node_server, goaway_to_node)

int main(int argc, char *argv[]) { return interop_main(argc, argv); }
