/* test_v3_detect.c — a plaintext server session that cannot know whether its peer speaks
 * SPDY/3 or SPDY/3.1 (speedy_options_set_v3_autodetect): downloads and uploads larger than
 * the 64 KiB session window complete with both kinds of client, the session settles on
 * the version the peer speaks, and never sends a SPDY/3 peer a WINDOW_UPDATE on stream 0
 * (issue 16: speedyd stalled a SPDY/3 client after 64 KiB per session). */
#include <criterion/criterion.h>
#include <string.h>

#include "pair.h"
#include "rawframe.h"
#include "testutil.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static speedy_options *new_options(void) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  return options;
}

/* client_protocol: what the client really speaks; client_window: its stream window
 * (0: the default 64 KiB). The server is a SPDY/3.1 session with autodetection. */
static void new_pair(speedy_protocol client_protocol, uint32_t client_window, test_peer **client,
                     test_peer **server) {
  speedy_options *options = new_options();
  if (client_window != 0) speedy_options_set_stream_window(options, client_window);
  *client = test_peer_new(client_protocol, SPEEDY_ROLE_CLIENT, options);
  speedy_options_del(options);
  options = new_options();
  speedy_options_set_v3_autodetect(options, 1);
  *server = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, options);
  speedy_options_del(options);
  test_peer_trace(*client);
  test_peer_trace(*server);
}

static void delete_pair(test_peer *client, test_peer *server) {
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "%zu blocks leaked", test_alloc_live());
}

static void respond_empty(test_peer *server, int32_t id) {
  server->response_size = 0;
  test_respond_default(server, id);
}

static void assert_received(test_peer *peer, int32_t id, size_t size, const char *what) {
  test_stream_rx *rx = test_rx(peer, id);
  cr_assert_eq(rx->len, size, "%s: stream %d: %zu body bytes, expected %zu", what, (int)id, rx->len,
               size);
  cr_assert(rx->closed, "%s: stream %d still open", what, (int)id);
  cr_assert_eq(rx->close_status, SPEEDY_RST_NONE, "%s: stream %d closed with %u", what, (int)id,
               rx->close_status);
}

/* A SPDY/3 peer must never see a WINDOW_UPDATE on stream 0. */
static void assert_no_session_window_update(const test_peer *server, const char *what) {
  cr_assert_eq(test_frames_count(server, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 0), 0,
               "%s: WINDOW_UPDATE on stream 0 sent to a SPDY/3 peer", what);
}

Test(v3_detect, spdy3_client_downloads_3MB_past_the_session_window) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3, 0, &client, &server);
  server->response_size = 3 * MiB;
  server->on_request = test_respond_default;
  cr_assert_eq(test_get(client, "/big", 3), 1);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(client, 1, 3 * MiB, "spdy/3 client");
  cr_assert_eq(speedy_session_protocol(server->session), SPEEDY_PROTOCOL_SPDY3);
  cr_assert_eq(speedy_session_protocol_undecided(server->session), 0);
  assert_no_session_window_update(server, "spdy/3 download");
  delete_pair(client, server);
}

/* 40 KB on stream 1, 45 KB on stream 3. */
static void respond_by_stream(test_peer *server, int32_t id) {
  server->response_size = id == 1 ? 40000 : 45000;
  test_respond_default(server, id);
}

/* The case: both at once; each stream gets 2 x 16 KiB, the client returns
 * +32768 on each, and the server settles as SPDY/3 from that credit. */
Test(v3_detect, spdy3_client_downloads_40KB_and_45KB_at_once_on_one_session) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3, 0, &client, &server);
  server->on_request = respond_by_stream;
  cr_assert_eq(test_get(client, "/a", 3), 1);
  cr_assert_eq(test_get(client, "/b", 3), 3);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(client, 1, 40000, "first file");
  assert_received(client, 3, 45000, "second file");
  cr_assert_eq(speedy_session_protocol(server->session), SPEEDY_PROTOCOL_SPDY3);
  assert_no_session_window_update(server, "spdy/3 two files");
  delete_pair(client, server);
}

/* One after the other: the first stream ends before the client returns any credit (no
 * WINDOW_UPDATE for a finished stream), the second stalls below half its window. No
 * signal comes: the session reports 2 and the application's timer settles it. */
Test(v3_detect, spdy3_client_downloads_40KB_then_45KB_settled_by_the_application) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3, 0, &client, &server);
  server->on_request = respond_by_stream;
  cr_assert_eq(test_get(client, "/a", 3), 1);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  assert_received(client, 1, 40000, "first file");
  cr_assert_eq(test_get(client, "/b", 3), 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert_eq(test_rx(client, 3)->len, 65536 - 40000);
  cr_assert_eq(speedy_session_protocol_undecided(server->session), 2);
  cr_assert_eq(speedy_session_settle_protocol(server->session, SPEEDY_PROTOCOL_SPDY3), 0);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  assert_received(client, 3, 45000, "second file");
  assert_no_session_window_update(server, "spdy/3 two files");
  delete_pair(client, server);
}

Test(v3_detect, spdy31_client_download_settles_as_31_within_its_windows) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3_1, 0, &client, &server);
  server->response_size = 3 * MiB;
  server->on_request = test_respond_default;
  cr_assert_eq(test_get(client, "/big", 3), 1);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(client, 1, 3 * MiB, "spdy/3.1 client");
  cr_assert_eq(speedy_session_protocol(server->session), SPEEDY_PROTOCOL_SPDY3_1);
  /* The client's trace checks the 3.1 session window frame by frame. */
  cr_assert_eq(client->flow_violations, 0, "window violations: %s", client->flow_error);
  delete_pair(client, server);
}

Test(v3_detect, spdy3_client_uploads_1MB) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3, 0, &client, &server);
  server->on_request = respond_empty;
  cr_assert_eq(test_post(client, "/up", 1 * MiB), 1);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(server, 1, 1 * MiB, "spdy/3 upload");
  cr_assert_eq(speedy_session_protocol(server->session), SPEEDY_PROTOCOL_SPDY3);
  assert_no_session_window_update(server, "spdy/3 upload");
  delete_pair(client, server);
}

/* A 3.1 uploader waits for our session WINDOW_UPDATE, which an undecided session holds
 * back: it reports 3, and the application's timer settles it as 3.1. */
Test(v3_detect, spdy31_uploader_waiting_for_the_session_window_is_settled_by_the_application) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3_1, 0, &client, &server);
  server->on_request = respond_empty;
  cr_assert_eq(test_post(client, "/up", 1 * MiB), 1);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  cr_assert_eq(test_rx(server, 1)->len, 64 * KiB, "the 3.1 client stops at its session window");
  cr_assert_eq(speedy_session_protocol_undecided(server->session), 3);
  cr_assert_eq(speedy_session_settle_protocol(server->session, SPEEDY_PROTOCOL_SPDY3_1), 0);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(server, 1, 1 * MiB, "spdy/3.1 upload");
  cr_assert_eq(client->flow_violations, 0, "window violations: %s", client->flow_error);
  cr_assert_eq(speedy_session_settle_protocol(server->session, SPEEDY_PROTOCOL_SPDY3),
               SPEEDY_ERR_INVALID_STATE, "a settled session cannot change its mind");
  delete_pair(client, server);
}

/* A SPDY/3 client with a 1 MiB stream window sends no WINDOW_UPDATE before half of it has
 * arrived: the server's 64 KiB runs out first. It reports 2; settling as SPDY/3 lets the
 * download finish. */
Test(v3_detect, spdy3_client_with_a_large_window_is_settled_by_the_application) {
  test_peer *client, *server;
  new_pair(SPEEDY_PROTOCOL_SPDY3, 1 * MiB, &client, &server);
  server->response_size = 3 * MiB;
  server->on_request = test_respond_default;
  cr_assert_eq(test_get(client, "/big", 3), 1);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  cr_assert_eq(test_rx(client, 1)->len, 64 * KiB);
  cr_assert_eq(speedy_session_protocol_undecided(server->session), 2);
  cr_assert_eq(speedy_session_settle_protocol(server->session, SPEEDY_PROTOCOL_SPDY3), 0);
  cr_assert_geq(test_pump(client, server, 1400), 0);
  assert_received(client, 1, 3 * MiB, "spdy/3 client, 1 MiB window");
  assert_no_session_window_update(server, "spdy/3 large window");
  delete_pair(client, server);
}

Test(v3_detect, without_the_option_a_31_session_is_decided_from_the_start) {
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  cr_assert_eq(speedy_session_protocol_undecided(client->session), 0);
  cr_assert_eq(speedy_session_settle_protocol(client->session, SPEEDY_PROTOCOL_SPDY3),
               SPEEDY_ERR_INVALID_STATE);
  cr_assert_eq(speedy_session_settle_protocol(client->session, SPEEDY_PROTOCOL_SPDY2),
               SPEEDY_ERR_INVALID_ARGUMENT);
  test_peer_del(client);
}
