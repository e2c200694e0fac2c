/* test_h2_session.c — HTTP/2 sessions of ours talking to each other in memory through the
 * public API: requests and responses, bodies across window sizes, push, trailers,
 * informational responses, priorities, settings, graceful shutdown. (Against a peer we did
 * not write: test_h2_nghttp2.c; byte-level conformance: test_h2_conn.c and the others.)
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h2raw.h"
#include "pair.h"
#include "testutil.h"

static void respond(test_peer *server, int32_t id, size_t size) {
  char length[32];
  snprintf(length, sizeof(length), "%zu", size);
  spdy_header headers[] = {{":status", 7, "200", 3},
                           {"content-type", 12, "text/plain", 10},
                           {"content-length", 14, length, strlen(length)}};
  test_body *body = size > 0 ? test_peer_body(server, NULL, size) : NULL;
  int rv = spdy_submit_response(server->session, id, headers, 3,
                                body != NULL ? test_body_read : NULL, body);
  cr_assert_eq(rv, 0, "submit_response: %s", spdy_strerror(rv));
}

static void respond_default(test_peer *server, int32_t id) {
  respond(server, id, server->response_size);
}

static int32_t get(test_peer *client, const char *path, int urgency) {
  spdy_header headers[] = {{":method", 7, "GET", 3},
                           {":scheme", 7, "https", 5},
                           {":authority", 10, "example.test", 12},
                           {":path", 5, path, strlen(path)}};
  int32_t id = spdy_submit_request(client->session, urgency, headers, 4, NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", spdy_strerror(id));
  return id;
}

static void new_pair(spdy_options *client_options, spdy_options *server_options, test_peer **client,
                     test_peer **server) {
  *client = test_peer_new(SPDY_PROTOCOL_H2, SPDY_ROLE_CLIENT, client_options);
  *server = test_peer_new(SPDY_PROTOCOL_H2, SPDY_ROLE_SERVER, server_options);
  (*server)->on_request = respond_default;
}

static void delete_pair(test_peer *client, test_peer *server) {
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "leaked %zu blocks", test_alloc_live());
}

Test(h2_session, s8_1_a_get_and_its_response_go_both_ways) {
  test_peer *client, *server;
  new_pair(NULL, NULL, &client, &server);
  server->response_size = 1000;
  int32_t id = get(client, "/index.html", 3);
  cr_assert_eq(id, 1);
  int64_t moved = test_pump(client, server, 65536);
  cr_assert_geq(moved, 0, "pump: %s", spdy_strerror((int)moved));
  cr_assert(test_log_has(server, "begin 1 request"), "server log:\n%s", server->log);
  cr_assert(test_log_has(server, "header 1 :path=/index.html"));
  cr_assert(test_log_has(client, "header 1 :status=200"), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "dataend 1 len=1000"), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "close 1 NONE"));
  cr_assert(test_log_has(server, "close 1 NONE"));
  delete_pair(client, server);
}

/* spdy_header_compressor for HTTP/2 counts exactly the HEADERS a session sends. */
Test(h2_session, header_compressor_counts_what_an_h2_session_sends) {
  static const char *const paths[] = {"/", "/style.css", "/img/logo.png", "/style.css"};
  h2_rig rig;
  h2_rig_open(&rig, SPDY_ROLE_CLIENT, NULL, 0);
  spdy_header_compressor *compressor;
  cr_assert_eq(spdy_header_compressor_new(&compressor, SPDY_PROTOCOL_H2, NULL), 0);
  for (size_t i = 0; i < 4; i++) {
    spdy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, paths[i], strlen(paths[i])},
                             {"user-agent", 10, "speedy-test", 11}};
    cr_assert_gt(spdy_submit_request(rig.peer->session, 3, headers, 5, NULL, NULL, NULL), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    cr_assert_eq(out.n, 1);
    int64_t counted = spdy_header_compressor_frame_size(compressor, 0, headers, 5);
    cr_assert_eq(counted, (int64_t)(9 + out.frames[0].hd.length), "request %zu: %lld, sent %u", i,
                 (long long)counted, 9 + out.frames[0].hd.length);
    h2_output_free(&out);
  }
  spdy_header bad[] = {{":status", 7, "200", 3}};
  cr_assert_eq(spdy_header_compressor_frame_size(compressor, 0, bad, 1), SPDY_ERR_INVALID_HEADER,
               "a request with :status breaks 8.3");
  spdy_header_compressor_del(compressor);
  h2_rig_close(&rig);
}
