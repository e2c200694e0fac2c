/* test_flow.c — flow control between client and server sessions in memory: bodies of
 * every awkward size both ways, windows respected exactly (checked frame by frame by the
 * trace in pair.c), SETTINGS_INITIAL_WINDOW_SIZE on open streams, the v3.1 session window,
 * and manual flow control. */
#include <criterion/criterion.h>
#include <string.h>

#include "frame.h"
#include "pair.h"
#include "testutil.h"

#define KiB 1024u
#define MiB (1024u * 1024u)

static const speedy_protocol all_versions[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                               SPEEDY_PROTOCOL_SPDY3_1};
static const speedy_protocol windowed_versions[] = {SPEEDY_PROTOCOL_SPDY3, SPEEDY_PROTOCOL_SPDY3_1};

static speedy_options *new_options(void) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  return options;
}

/* A traced peer; options (may be NULL) are consumed. */
static test_peer *traced_peer(speedy_protocol protocol, speedy_role role, speedy_options *options) {
  if (options == NULL) options = new_options();
  test_peer *peer = test_peer_new(protocol, role, options);
  speedy_options_del(options);
  test_peer_trace(peer);
  return peer;
}

static void delete_pair(test_peer *client, test_peer *server) {
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "%zu blocks leaked", test_alloc_live());
}

static void assert_no_violation(const test_peer *peer, const char *who) {
  cr_assert_eq(peer->flow_violations, 0, "%s: %zu window violations, first: %s", who,
               peer->flow_violations, peer->flow_error);
}

static void assert_body(test_peer *peer, int32_t id, size_t size, const char *what) {
  test_stream_rx *rx = test_rx(peer, id);
  cr_assert_eq(rx->len, size, "%s: %zu body bytes, expected %zu", what, rx->len, size);
  for (size_t i = 0; i < size; i++)
    if (rx->data[i] != (uint8_t)(i % 251)) cr_assert_fail("%s: body byte %zu differs", what, i);
}

/* ---- bodies of every size, both directions ----------------------------------------- */

/* Server answer to a POST: an empty 200 once the whole body is in. */
static void respond_empty(test_peer *server, int32_t id) {
  server->response_size = 0;
  test_respond_default(server, id);
}

static void transfer(speedy_protocol protocol, size_t size, int post) {
  const char *name = speedy_protocol_name(protocol);
  test_peer *client = traced_peer(protocol, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = traced_peer(protocol, SPEEDY_ROLE_SERVER, NULL);
  client->flow_max_frame = server->flow_max_frame = 16384;
  server->on_request = post ? respond_empty : test_respond_default;
  server->response_size = size;
  int32_t id = post ? test_post(client, "/upload", size) : test_get(client, "/file", 3);
  cr_assert_eq(id, 1);
  int64_t moved = test_pump(client, server, 1400); /* MTU-sized pieces */
  cr_assert_geq(moved, 0, "%s: pump: %s", name, speedy_strerror((int)moved));
  test_peer *sender = post ? client : server, *receiver = post ? server : client;
  assert_body(receiver, 1, size, name);
  cr_assert(test_rx(client, 1)->closed && test_rx(server, 1)->closed, "%s: stream open", name);
  cr_assert_eq(test_rx(client, 1)->close_status, SPEEDY_RST_NONE);
  cr_assert_eq(test_rx(server, 1)->close_status, SPEEDY_RST_NONE);
  assert_no_violation(sender, name);
  assert_no_violation(receiver, name);
  test_flow *sent = test_flow_of(sender, 1);
  cr_assert_eq(sent->data_sent, size, "%s: %llu bytes sent", name,
               (unsigned long long)sent->data_sent);
  if (size == 0)
    cr_assert_eq(sent->frames_sent, 0, "%s: an empty body needs no DATA frame", name);
  else
    cr_assert_geq(sent->frames_sent, (size + 16383) / 16384);
  /* SPDY/2 receivers may send WINDOW_UPDATE too (for spdy-transport), but v2 senders
   * never wait for one, so the body may be complete before it would go out. */
  if (size > 65536 && protocol != SPEEDY_PROTOCOL_SPDY2) {
    cr_assert_gt(test_flow_of(receiver, 1)->wu_sent, 0, "%s: window never reopened", name);
  }
  if (protocol == SPEEDY_PROTOCOL_SPDY3_1) cr_assert_eq(test_flow_of(sender, 0)->data_sent, size);
  delete_pair(client, server);
}

static void transfer_every_version(size_t size, int post) {
  for (size_t v = 0; v < 3; v++) transfer(all_versions[v], size, post);
}

Test(flow, response_body_0_bytes_every_version) { transfer_every_version(0, 0); }
Test(flow, response_body_1_byte_every_version) { transfer_every_version(1, 0); }
Test(flow, response_body_64KiB_minus_1_every_version) { transfer_every_version(65535, 0); }
Test(flow, response_body_64KiB_every_version) { transfer_every_version(65536, 0); }
Test(flow, response_body_64KiB_plus_1_every_version) { transfer_every_version(65537, 0); }
Test(flow, response_body_10MiB_every_version) { transfer_every_version(10 * MiB, 0); }
Test(flow, post_body_0_bytes_every_version) { transfer_every_version(0, 1); }
Test(flow, post_body_1_byte_every_version) { transfer_every_version(1, 1); }
Test(flow, post_body_64KiB_minus_1_every_version) { transfer_every_version(65535, 1); }
Test(flow, post_body_64KiB_every_version) { transfer_every_version(65536, 1); }
Test(flow, post_body_64KiB_plus_1_every_version) { transfer_every_version(65537, 1); }
Test(flow, post_body_10MiB_every_version) { transfer_every_version(10 * MiB, 1); }

/* ---- small receive windows --------------------------------------------------------- */

Test(flow, client_with_4KiB_stream_window_never_receives_more_than_granted) {
  for (size_t v = 0; v < 2; v++) {
    speedy_protocol protocol = windowed_versions[v];
    speedy_options *options = new_options();
    speedy_options_set_stream_window(options, 4096);
    test_peer *client = traced_peer(protocol, SPEEDY_ROLE_CLIENT, options);
    test_peer *server = traced_peer(protocol, SPEEDY_ROLE_SERVER, NULL);
    client->flow_stream_window = 4096;
    server->flow_max_frame = 4096; /* a frame never exceeds the window */
    server->on_request = test_respond_default;
    server->response_size = 65537;
    test_get(client, "/file", 3);
    cr_assert_geq(test_pump(client, server, 1000), 0);
    assert_body(client, 1, 65537, speedy_protocol_name(protocol));
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    cr_assert(test_log_has(server, "setting 7=4096 flags=0"), "server log:\n%s", server->log);
    cr_assert_geq(test_flow_of(server, 1)->frames_sent, 65537 / 4096);
    delete_pair(client, server);
  }
}

Test(flow, server_with_4KiB_stream_window_never_receives_more_than_granted) {
  for (size_t v = 0; v < 2; v++) {
    speedy_protocol protocol = windowed_versions[v];
    speedy_options *options = new_options();
    speedy_options_set_stream_window(options, 4096);
    test_peer *client = traced_peer(protocol, SPEEDY_ROLE_CLIENT, NULL);
    test_peer *server = traced_peer(protocol, SPEEDY_ROLE_SERVER, options);
    server->flow_stream_window = 4096;
    client->flow_max_frame = 4096;
    server->on_request = respond_empty;
    /* The server's SETTINGS must reach the client before its first DATA (SPDY has no
     * SETTINGS acknowledgement; a body sent earlier may use the default window). */
    cr_assert_geq(test_pump(server, client, 65536), 0);
    test_post(client, "/upload", 65537);
    cr_assert_geq(test_pump(client, server, 1000), 0);
    assert_body(server, 1, 65537, speedy_protocol_name(protocol));
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    delete_pair(client, server);
  }
}

/* ---- SETTINGS_INITIAL_WINDOW_SIZE on open streams ---------------------------------- */

/* Client with manual flow control; server sending body_size on stream 1 until blocked. */
static void start_blocked_response(speedy_protocol protocol, size_t body_size, test_peer **client,
                                   test_peer **server) {
  speedy_options *options = new_options();
  speedy_options_set_manual_flow_control(options, 1);
  *client = traced_peer(protocol, SPEEDY_ROLE_CLIENT, options);
  *server = traced_peer(protocol, SPEEDY_ROLE_SERVER, NULL);
  (*server)->on_request = test_respond_default;
  (*server)->response_size = body_size;
  cr_assert_eq(test_get(*client, "/big", 3), 1);
  cr_assert_geq(test_pump(*client, *server, 65536), 0);
  cr_assert_eq(test_flow_of(*server, 1)->data_sent, 65536, "sent %llu before blocking",
               (unsigned long long)test_flow_of(*server, 1)->data_sent);
  cr_assert_eq(speedy_session_send_window((*server)->session, 1), 0);
  cr_assert_eq(test_frames_count(*client, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, -1), 0);
}

/* Consumes whatever arrived and pumps until the body is complete. */
static void finish_manual(test_peer *client, test_peer *server, int32_t id, size_t size,
                          size_t *consumed) {
  for (int i = 0; i < 100000 && test_rx(client, id)->len < size; i++) {
    size_t have = test_rx(client, id)->len;
    if (have > *consumed) {
      cr_assert_eq(speedy_session_consume(client->session, id, have - *consumed), 0);
      *consumed = have;
    }
    cr_assert_geq(test_pump(client, server, 65536), 0);
  }
  assert_body(client, id, size, "manual");
}

Test(flow, settings_window_cut_makes_open_stream_window_negative_and_sender_waits) {
  for (size_t v = 0; v < 2; v++) {
    test_peer *client, *server;
    start_blocked_response(windowed_versions[v], 300000, &client, &server);
    server->flow_allow_negative = 1;
    speedy_setting cut = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 16384};
    cr_assert_eq(speedy_submit_settings(client->session, 0, &cut, 1), 0);
    client->flow_stream_window = 16384;
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert(test_log_has(server, "setting 7=16384 flags=0"));
    /* SPDY/3 2.6.8: 0 + (16384 - 65536) */
    cr_assert_eq(speedy_session_send_window(server->session, 1), -49152);
    cr_assert_eq(test_flow_of(server, 1)->data_sent, 65536, "sent with a negative window");
    /* WINDOW_UPDATE of 65536 leaves 16384: exactly that much more, then it waits again. */
    cr_assert_eq(speedy_session_consume(client->session, 1, 65536), 0);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(test_flow_of(server, 1)->data_sent, 65536 + 16384);
    cr_assert_eq(speedy_session_send_window(server->session, 1), 0);
    cr_assert_eq(test_flow_of(server, 1)->min_send_window, 0,
                 "a window below 0 was used for sending");
    size_t consumed = 65536;
    finish_manual(client, server, 1, 300000, &consumed);
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    delete_pair(client, server);
  }
}

Test(flow, settings_window_raise_unblocks_a_blocked_stream_without_window_update) {
  for (size_t v = 0; v < 2; v++) {
    speedy_protocol protocol = windowed_versions[v];
    test_peer *client, *server;
    start_blocked_response(protocol, 300000, &client, &server);
    if (protocol == SPEEDY_PROTOCOL_SPDY3_1) /* keep the session window out of the way */
      cr_assert_eq(speedy_submit_window_update(client->session, 0, 1 * MiB), 0);
    speedy_setting raise = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 131072};
    cr_assert_eq(speedy_submit_settings(client->session, 0, &raise, 1), 0);
    client->flow_stream_window = 131072;
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(test_flow_of(server, 1)->data_sent, 131072);
    cr_assert_eq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 1), 0);
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    delete_pair(client, server);
  }
}

/* The peer moves every stream window by the change: a rise that would take a window we
 * granted past 2^31-1 is refused at submit (the peer would have to reset the stream with
 * FLOW_CONTROL_ERROR — round-trip fuzz finding), and nothing is sent. */
Test(flow, settings_window_raise_past_the_maximum_is_refused_at_submit) {
  for (size_t v = 0; v < 2; v++) {
    test_peer *client, *server;
    start_blocked_response(windowed_versions[v], 300000, &client, &server);
    /* 64 KiB arrived and nothing was consumed: granting 128 KiB leaves 128 KiB open. */
    cr_assert_eq(speedy_submit_window_update(client->session, 1, 131072), 0);
    /* A new initial window V moves it to 131072 + V - 65536: at most 2^31-1. */
    uint32_t largest = 0x7fffffff - 131072 + 65536;
    speedy_setting raise = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0x7fffffff};
    cr_assert_eq(speedy_submit_settings(client->session, 0, &raise, 1), SPEEDY_ERR_WINDOW_OVERFLOW);
    raise.value = largest + 1;
    cr_assert_eq(speedy_submit_settings(client->session, 0, &raise, 1), SPEEDY_ERR_WINDOW_OVERFLOW);
    raise.value = largest;
    cr_assert_eq(speedy_submit_settings(client->session, 0, &raise, 1), 0);
    client->flow_stream_window = largest;
    cr_assert_geq(test_move(client, server, 65536), 0);
    cr_assert_eq(speedy_session_send_window(server->session, 1), 0x7fffffff);
    cr_assert_eq(test_frames_count(server, 0, SPEEDY_SPDY_FRAME_SETTINGS, -1), 1 + 1,
                 "only the accepted SETTINGS arrived (after the initial one)");
    if (windowed_versions[v] == SPEEDY_PROTOCOL_SPDY3_1)
      cr_assert_eq(speedy_submit_window_update(client->session, 0, 1 * MiB), 0);
    size_t consumed = 0;
    finish_manual(client, server, 1, 300000, &consumed);
    cr_assert_eq(test_frames_count(server, 1, SPEEDY_SPDY_FRAME_RST_STREAM, -1), 0);
    cr_assert_eq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_RST_STREAM, -1), 0);
    delete_pair(client, server);
  }
}

/* The receiver of SETTINGS takes the first value of an id, the sender applied the last:
 * [2^31-1, 1000] left the client granting 1000 while the server counted 2^31-1, and a
 * WINDOW_UPDATE then made the server reset the stream (round-trip fuzz finding). An id
 * listed twice is refused at submit and nothing is sent. */
Test(flow, settings_naming_an_id_twice_is_refused_at_submit) {
  for (size_t v = 0; v < 2; v++) {
    test_peer *client, *server;
    start_blocked_response(windowed_versions[v], 300000, &client, &server);
    speedy_setting twice[] = {{SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0x7fffffff},
                              {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 10},
                              {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 1000}};
    cr_assert_eq(speedy_submit_settings(client->session, 0, twice, 3), SPEEDY_ERR_INVALID_ARGUMENT);
    cr_assert_eq(speedy_session_recv_window(client->session, 1), 0, "own window untouched");
    cr_assert_eq(speedy_submit_settings(client->session, 0, twice, 2), 0);
    cr_assert_geq(test_move(client, server, 65536), 0);
    cr_assert_eq(test_frames_count(server, 0, SPEEDY_SPDY_FRAME_SETTINGS, -1), 1 + 1,
                 "only the accepted SETTINGS arrived (after the initial one)");
    cr_assert_eq(speedy_session_send_window(server->session, 1), 0x7fffffff - 65536);
    cr_assert_eq(speedy_session_recv_window(client->session, 1), 0x7fffffff - 65536);
    delete_pair(client, server);
  }
}

/* A stream one side has finished sending on keeps flowing the other way when SETTINGS
 * raise the initial window past what its (unused) window can take: the raise is not
 * refused at submit for it, and the receiver of the SETTINGS does not reset it. */
Test(flow, settings_window_raise_spares_streams_finished_in_that_direction) {
  for (size_t v = 0; v < 2; v++) {
    speedy_protocol protocol = windowed_versions[v];
    test_peer *client = traced_peer(protocol, SPEEDY_ROLE_CLIENT, NULL);
    test_peer *server = traced_peer(protocol, SPEEDY_ROLE_SERVER, NULL);
    /* A POST whose body waits: the server can open its window before the FIN. */
    speedy_header request[] = {{":method", 7, "POST", 4},
                               {":path", 5, "/up", 3},
                               {":version", 8, "HTTP/1.1", 8},
                               {":host", 5, "h", 1},
                               {":scheme", 7, "https", 5}};
    test_body *body = test_peer_body(client, NULL, 100);
    body->defer_once = 1;
    cr_assert_eq(speedy_submit_request(client->session, 3, request, 5, test_body_read, body, NULL),
                 1);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(speedy_submit_window_update(server->session, 1, 5000), 0);
    server->flow_stream_window = 65536 + 5000;
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(speedy_session_resume_data(client->session, 1), 0);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert(test_log_has(server, "dataend 1 len=100"), "server log:\n%s", server->log);
    /* Stream 1 is done client -> server: raising the initial window to 2^31-1 is fine. */
    speedy_setting raise = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 0x7fffffff};
    cr_assert_eq(speedy_submit_settings(server->session, 0, &raise, 1), 0);
    server->flow_stream_window = 0x7fffffff;
    client->flow_allow_negative = 1;
    server->response_size = 300000;
    test_respond_default(server, 1);
    if (protocol == SPEEDY_PROTOCOL_SPDY3_1)
      cr_assert_eq(speedy_submit_window_update(client->session, 0, 1 * MiB), 0);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_RST_STREAM, -1), 0,
                 "the client reset a stream it had finished sending on");
    cr_assert_eq(test_frames_count(server, 1, SPEEDY_SPDY_FRAME_RST_STREAM, -1), 0);
    assert_body(client, 1, 300000, "response after the raise");
    delete_pair(client, server);
  }
}

Test(flow, settings_window_applies_to_streams_opened_later) {
  for (size_t v = 0; v < 2; v++) {
    speedy_options *options = new_options();
    speedy_options_set_manual_flow_control(options, 1);
    test_peer *client = traced_peer(windowed_versions[v], SPEEDY_ROLE_CLIENT, options);
    test_peer *server = traced_peer(windowed_versions[v], SPEEDY_ROLE_SERVER, NULL);
    server->on_request = test_respond_default;
    server->response_size = 100000;
    speedy_setting small = {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, 8192};
    cr_assert_eq(speedy_submit_settings(client->session, 0, &small, 1), 0);
    client->flow_stream_window = 8192;
    cr_assert_geq(test_pump(client, server, 65536), 0);
    test_get(client, "/a", 3);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_eq(test_flow_of(server, 1)->data_sent, 8192);
    cr_assert_eq(test_rx(client, 1)->len, 8192);
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    delete_pair(client, server);
  }
}

/* ---- the v3.1 session window ------------------------------------------------------- */

/* v3.1 client with 1 MiB stream windows, manual flow control; two 200,000-byte answers. */
static void start_session_limited(test_peer **client, test_peer **server) {
  speedy_options *options = new_options();
  speedy_options_set_manual_flow_control(options, 1);
  speedy_options_set_stream_window(options, 1 * MiB);
  *client = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, options);
  *server = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  (*client)->flow_stream_window = 1 * MiB;
  (*server)->on_request = test_respond_default;
  (*server)->response_size = 200000;
  test_get(*client, "/a", 3);
  test_get(*client, "/b", 3);
  cr_assert_geq(test_pump(*client, *server, 65536), 0);
}

Test(flow, session_window_limits_streams_with_larger_windows_v31) {
  test_peer *client, *server;
  start_session_limited(&client, &server);
  uint64_t sent = test_flow_of(server, 1)->data_sent + test_flow_of(server, 3)->data_sent;
  cr_assert_eq(sent, 65536, "server sent %llu, the session window is 65536",
               (unsigned long long)sent);
  cr_assert_eq(speedy_session_send_window(server->session, 0), 0);
  cr_assert_gt(speedy_session_send_window(server->session, 1), 1 * MiB - 65536 - 1);
  cr_assert_gt(speedy_session_send_window(server->session, 3), 1 * MiB - 65536 - 1);
  cr_assert_eq(speedy_session_want_write(server->session), 0, "blocked yet wants to write");
  size_t consumed1 = 0, consumed3 = 0;
  for (int i = 0;
       i < 1000 && (test_rx(client, 1)->len < 200000 || test_rx(client, 3)->len < 200000); i++) {
    size_t have1 = test_rx(client, 1)->len, have3 = test_rx(client, 3)->len;
    if (have1 > consumed1) speedy_session_consume(client->session, 1, have1 - consumed1);
    if (have3 > consumed3) speedy_session_consume(client->session, 3, have3 - consumed3);
    consumed1 = have1, consumed3 = have3;
    cr_assert_geq(test_pump(client, server, 65536), 0);
  }
  assert_body(client, 1, 200000, "stream 1");
  assert_body(client, 3, 200000, "stream 3");
  assert_no_violation(client, "client");
  assert_no_violation(server, "server");
  delete_pair(client, server);
}

Test(flow, window_update_on_stream_0_lets_exactly_its_delta_through_v31) {
  test_peer *client, *server;
  start_session_limited(&client, &server);
  cr_assert_eq(speedy_submit_window_update(client->session, 0, 10000), 0);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  uint64_t sent = test_flow_of(server, 1)->data_sent + test_flow_of(server, 3)->data_sent;
  cr_assert_eq(sent, 65536 + 10000);
  cr_assert_eq(test_flow_of(server, 0)->wu_recv, 10000);
  cr_assert_eq(test_frames_count(server, 0, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 1), 0);
  cr_assert_eq(test_frames_count(server, 0, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 3), 0);
  cr_assert_eq(speedy_session_send_window(server->session, 0), 0);
  assert_no_violation(client, "client");
  assert_no_violation(server, "server");
  delete_pair(client, server);
}

Test(flow, window_update_on_stream_0_is_refused_before_v31) {
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3, SPEEDY_ROLE_CLIENT, NULL);
  cr_assert_eq(speedy_submit_window_update(client->session, 0, 1000), SPEEDY_ERR_INVALID_STATE);
  cr_assert_lt(speedy_session_send_window(client->session, 0), 0, "v3 has no session window");
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(flow, session_window_option_widens_the_window_at_start_v31) {
  speedy_options *options = new_options();
  speedy_options_set_manual_flow_control(options, 1);
  speedy_options_set_stream_window(options, 1 * MiB);
  speedy_options_set_session_window(options, 1 * MiB);
  test_peer *client = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, options);
  test_peer *server = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  client->flow_stream_window = 1 * MiB;
  server->on_request = test_respond_default;
  server->response_size = 2 * MiB;
  cr_assert_eq(speedy_session_recv_window(client->session, 0), 1 * MiB);
  test_get(client, "/big", 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert_eq(test_flow_of(client, 0)->wu_sent, 1 * MiB - 65536,
               "initial WINDOW_UPDATE on stream 0 of %llu",
               (unsigned long long)test_flow_of(client, 0)->wu_sent);
  cr_assert_eq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 0), 1);
  cr_assert_eq(test_flow_of(server, 1)->data_sent, 1 * MiB, "sent %llu",
               (unsigned long long)test_flow_of(server, 1)->data_sent);
  cr_assert_eq(speedy_session_send_window(server->session, 0), 0);
  size_t consumed = 0;
  finish_manual(client, server, 1, 2 * MiB, &consumed);
  assert_no_violation(client, "client");
  assert_no_violation(server, "server");
  delete_pair(client, server);
}

Test(flow, data_for_a_reset_stream_still_counts_and_is_credited_back_v31) {
  test_peer *client = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = traced_peer(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = test_respond_default;
  server->response_size = 100000; /* more than the session window: the stream stays open */
  cr_assert_geq(test_pump(client, server, 65536), 0); /* settings */
  test_get(client, "/a", 3);
  cr_assert_geq(test_move(client, server, 65536), 0);
  /* A whole session window of DATA is on the wire when the client resets. */
  size_t len;
  uint8_t *in_flight = test_drain(server, &len);
  cr_assert_gt(len, 65536);
  cr_assert_eq(speedy_session_send_window(server->session, 0), 0);
  cr_assert_eq(speedy_submit_rst(client->session, 1, SPEEDY_RST_CANCEL), 0);
  cr_assert_eq(test_feed(client, in_flight, len, 1400), (int64_t)len);
  free(in_flight);
  cr_assert_eq(test_flow_of(client, 0)->data_recv, 65536);
  cr_assert_eq(test_rx(client, 1)->len, 0, "data of a reset stream was delivered");
  cr_assert_not(test_log_has(client, "begin 1 response"), "client log:\n%s", client->log);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert_eq(test_flow_of(client, 0)->wu_sent, 65536, "credited %llu",
               (unsigned long long)test_flow_of(client, 0)->wu_sent);
  cr_assert_eq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 1), 0);
  cr_assert_eq(speedy_session_send_window(server->session, 0), 65536);
  cr_assert_eq(speedy_session_recv_window(client->session, 0), 65536);
  cr_assert(test_log_has(server, "close 1 CANCEL"), "server log:\n%s", server->log);
  /* Had the dead bytes not been credited, this answer would stall at a zero window. */
  cr_assert_eq(test_get(client, "/b", 3), 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  assert_body(client, 3, 100000, "second answer");
  assert_no_violation(client, "client");
  assert_no_violation(server, "server");
  delete_pair(client, server);
}

/* ---- manual flow control ----------------------------------------------------------- */

Test(flow, manual_flow_control_sends_no_window_update_until_consumed) {
  for (size_t v = 0; v < 2; v++) {
    test_peer *client, *server;
    start_blocked_response(windowed_versions[v], 200000, &client, &server);
    cr_assert_eq(test_rx(client, 1)->len, 65536);
    cr_assert_eq(speedy_session_recv_window(client->session, 1), 0);
    cr_assert_eq(speedy_session_want_write(client->session), 0);
    cr_assert_eq(test_pump(client, server, 65536), 0, "bytes moved without credit");
    cr_assert_eq(speedy_session_consume(client->session, 1, 65536), 0);
    cr_assert_eq(speedy_session_want_write(client->session), 1);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert_geq(test_frames_count(client, 1, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 1), 1);
    cr_assert_eq(test_flow_of(client, 1)->wu_sent, 65536);
    cr_assert_eq(test_rx(client, 1)->len, 2 * 65536);
    size_t consumed = 65536;
    finish_manual(client, server, 1, 200000, &consumed);
    assert_no_violation(client, "client");
    assert_no_violation(server, "server");
    delete_pair(client, server);
  }
}

Test(flow, consume_is_refused_without_manual_flow_control) {
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  cr_assert_eq(speedy_session_consume(client->session, 1, 100), SPEEDY_ERR_INVALID_STATE);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

/* on_window_update reports each accepted WINDOW_UPDATE with its delta (servers meter
 * them); stream 0 is the v3.1 session window. */
static int32_t seen_update_stream = -1;
static uint32_t seen_update_delta;
static int record_window_update(speedy_session *s, int32_t stream_id, uint32_t delta, void *user) {
  (void)s, (void)user;
  seen_update_stream = stream_id;
  seen_update_delta = delta;
  return 0;
}

Test(flow, window_update_callback_reports_stream_and_delta_v31) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  speedy_callbacks *callbacks;
  cr_assert_eq(speedy_callbacks_new(&callbacks), 0);
  speedy_callbacks_set_on_window_update(callbacks, record_window_update);
  speedy_session *client;
  cr_assert_eq(speedy_session_new(&client, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, callbacks,
                                  options, NULL),
               0);
  speedy_header request[] = {{":method", 7, "POST", 4},
                             {":path", 5, "/", 1},
                             {":version", 8, "HTTP/1.1", 8},
                             {":host", 5, "h", 1},
                             {":scheme", 7, "https", 5}};
  test_body body = {.data = NULL, .len = 10};
  int32_t id = speedy_submit_request(client, 3, request, 5, test_body_read, &body, NULL);
  cr_assert_eq(id, 1);
  uint8_t frame[16];
  size_t n = spdy_frame_encode_window_update(frame, 3, id, 1000);
  cr_assert_eq(speedy_session_recv(client, frame, n), (int64_t)n);
  cr_assert_eq(seen_update_stream, 1);
  cr_assert_eq(seen_update_delta, 1000);
  cr_assert_eq(speedy_session_send_window(client, 1), 65536 + 1000);
  n = spdy_frame_encode_window_update(frame, 3, 0, 5000);
  cr_assert_eq(speedy_session_recv(client, frame, n), (int64_t)n);
  cr_assert_eq(seen_update_stream, 0);
  cr_assert_eq(seen_update_delta, 5000);
  speedy_session_del(client);
  speedy_callbacks_del(callbacks);
  speedy_options_del(options);
  cr_assert_eq(test_alloc_live(), 0);
}
