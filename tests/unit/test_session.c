/* test_session.c — client and server sessions talking in memory: requests, responses,
 * bodies, push, every version. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "pair.h"
#include "testutil.h"

static const spdy_protocol all_versions[] = {SPDY_PROTOCOL_SPDY2, SPDY_PROTOCOL_SPDY3,
                                             SPDY_PROTOCOL_SPDY3_1};

static void get_roundtrip(spdy_protocol protocol, size_t size, size_t chunk) {
  test_peer *client = test_peer_new(protocol, SPDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(protocol, SPDY_ROLE_SERVER, NULL);
  server->on_request = test_respond_default;
  server->response_size = size;
  int32_t id = test_get(client, "/index.html", 3);
  cr_assert_eq(id, 1);
  cr_assert_geq(test_pump(client, server, chunk), 0);
  cr_assert(test_log_has(server, "begin 1 request"), "server log:\n%s", server->log);
  cr_assert(test_log_has(server, "header 1 :method=GET"), "server log:\n%s", server->log);
  cr_assert(test_log_has(server, "header 1 :path=/index.html"));
  cr_assert(test_log_has(server, "header 1 user-agent=speedy-test"));
  cr_assert(test_log_has(server, "end 1 fin=1"));
  cr_assert(test_log_has(client, "begin 1 response"), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "header 1 :status=200 OK"));
  test_stream_rx *rx = test_rx(client, 1);
  cr_assert_eq(rx->len, size, "body length %zu, expected %zu", rx->len, size);
  for (size_t i = 0; i < size; i++)
    if (rx->data[i] != (uint8_t)(i % 251)) cr_assert_fail("body byte %zu differs", i);
  cr_assert(rx->closed);
  cr_assert_eq(rx->close_status, SPDY_RST_NONE);
  cr_assert(test_log_has(server, "close 1 NONE"), "server log:\n%s", server->log);
  cr_assert_eq(spdy_session_open_streams(client->session), 0);
  cr_assert_eq(spdy_session_open_streams(server->session), 0);
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "%zu blocks leaked", test_alloc_live());
}

Test(session, get_with_body_every_version) {
  for (size_t v = 0; v < 3; v++) get_roundtrip(all_versions[v], 1000, 65536);
}

Test(session, get_without_body_every_version) {
  for (size_t v = 0; v < 3; v++) get_roundtrip(all_versions[v], 0, 65536);
}

Test(session, byte_at_a_time_every_version) {
  for (size_t v = 0; v < 3; v++) get_roundtrip(all_versions[v], 3000, 1);
}

Test(session, settings_announced_at_start) {
  test_peer *client = test_peer_new(SPDY_PROTOCOL_SPDY3_1, SPDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(SPDY_PROTOCOL_SPDY3_1, SPDY_ROLE_SERVER, NULL);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "setting 4=100 flags=0"), "client log:\n%s", client->log);
  cr_assert_eq(spdy_session_remote_setting(client->session, SPDY_SETTINGS_MAX_CONCURRENT_STREAMS),
               100);
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0);
}
