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
  speedy_header headers[] = {{":status", 7, "200", 3},
                             {"content-type", 12, "text/plain", 10},
                             {"content-length", 14, length, strlen(length)}};
  test_body *body = size > 0 ? test_peer_body(server, NULL, size) : NULL;
  int rv = speedy_submit_response(server->session, id, headers, 3,
                                  body != NULL ? test_body_read : NULL, body);
  cr_assert_eq(rv, 0, "submit_response: %s", speedy_strerror(rv));
}

static void respond_default(test_peer *server, int32_t id) {
  respond(server, id, server->response_size);
}

static int32_t get(test_peer *client, const char *path, int urgency) {
  speedy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, path, strlen(path)}};
  int32_t id = speedy_submit_request(client->session, urgency, headers, 4, NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  return id;
}

static void new_pair(speedy_options *client_options, speedy_options *server_options,
                     test_peer **client, test_peer **server) {
  *client = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, client_options);
  *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, server_options);
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
  cr_assert_geq(moved, 0, "pump: %s", speedy_strerror((int)moved));
  cr_assert(test_log_has(server, "begin 1 request"), "server log:\n%s", server->log);
  cr_assert(test_log_has(server, "header 1 :path=/index.html"));
  cr_assert(test_log_has(client, "header 1 :status=200"), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "dataend 1 len=1000"), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "close 1 NONE"));
  cr_assert(test_log_has(server, "close 1 NONE"));
  delete_pair(client, server);
}

/* speedy_header_compressor for HTTP/2 counts exactly the HEADERS a session sends. */
Test(h2_session, header_compressor_counts_what_an_h2_session_sends) {
  static const char *const paths[] = {"/", "/style.css", "/img/logo.png", "/style.css"};
  h2_rig rig;
  h2_rig_open(&rig, SPEEDY_ROLE_CLIENT, NULL, 0);
  speedy_header_compressor *compressor;
  cr_assert_eq(speedy_header_compressor_new(&compressor, SPEEDY_PROTOCOL_H2, NULL), 0);
  for (size_t i = 0; i < 4; i++) {
    speedy_header headers[] = {{":method", 7, "GET", 3},
                               {":scheme", 7, "https", 5},
                               {":authority", 10, "example.test", 12},
                               {":path", 5, paths[i], strlen(paths[i])},
                               {"user-agent", 10, "speedy-test", 11}};
    cr_assert_gt(speedy_submit_request(rig.peer->session, 3, headers, 5, NULL, NULL, NULL), 0);
    h2_output out;
    h2_output_take(&out, &rig);
    cr_assert_eq(out.n, 1);
    int64_t counted = speedy_header_compressor_frame_size(compressor, 0, headers, 5);
    cr_assert_eq(counted, (int64_t)(9 + out.frames[0].hd.length), "request %zu: %lld, sent %u", i,
                 (long long)counted, 9 + out.frames[0].hd.length);
    h2_output_free(&out);
  }
  speedy_header bad[] = {{":status", 7, "200", 3}};
  cr_assert_eq(speedy_header_compressor_frame_size(compressor, 0, bad, 1),
               SPEEDY_ERR_INVALID_HEADER, "a request with :status breaks 8.3");
  speedy_header_compressor_del(compressor);
  h2_rig_close(&rig);
}

/* Many streams, bodies both ways, every byte split: the logs of a one-buffer and a
 * byte-at-a-time run agree. */
static int64_t upload_body(speedy_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                           void *source, void *user) {
  return test_body_read(s, id, buf, len, flags, source, user);
}

static int compare_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The log's lines but data chunks, sorted (streams interleave differently when input is
 * split). */
static char *sorted_lines(char *log) {
  size_t n = 0, cap = 64;
  char **lines = malloc(cap * sizeof(*lines));
  for (char *line = strtok(log, "\n"); line != NULL; line = strtok(NULL, "\n")) {
    if (strncmp(line, "data ", 5) == 0) continue; /* chunks follow the split */
    if (n == cap) lines = realloc(lines, (cap *= 2) * sizeof(*lines));
    lines[n++] = line;
  }
  qsort(lines, n, sizeof(*lines), compare_lines);
  size_t total = 1;
  for (size_t i = 0; i < n; i++) total += strlen(lines[i]) + 1;
  char *out = malloc(total), *at = out;
  for (size_t i = 0; i < n; i++) at += sprintf(at, "%s\n", lines[i]);
  *at = '\0';
  free(lines);
  free(log);
  return out;
}

static void echo_size(test_peer *server, int32_t id) { respond(server, id, 1000 + (size_t)id * 7); }

Test(h2_session, s5_2_many_streams_up_and_down_in_any_split) {
  char *logs[2];
  for (int split = 0; split < 2; split++) {
    test_peer *client, *server;
    new_pair(NULL, NULL, &client, &server);
    server->on_request = echo_size;
    for (int i = 0; i < 20; i++) {
      speedy_header h[] = {{":method", 7, "POST", 4},
                           {":scheme", 7, "https", 5},
                           {":authority", 10, "example.test", 12},
                           {":path", 5, "/up", 3}};
      test_body *body = test_peer_body(client, NULL, 3000 * (size_t)i);
      cr_assert_gt(
          speedy_submit_request(client->session, i % 8, h, 4, i ? upload_body : NULL, body, NULL),
          0);
    }
    int64_t moved = test_pump(client, server, split ? 1 : 65536);
    cr_assert_geq(moved, 0, "%s", speedy_strerror((int)moved));
    for (int32_t id = 1; id < 40; id += 2) {
      cr_assert_eq(test_rx(server, id)->len, 3000 * (size_t)(id / 2));
      cr_assert_eq(test_rx(client, id)->len, 1000 + (size_t)id * 7);
      cr_assert(test_rx(client, id)->closed && test_rx(client, id)->close_status == 0);
    }
    logs[split] = sorted_lines(raw_coalesced_log(server));
    delete_pair(client, server);
  }
  cr_assert_str_eq(logs[0], logs[1], "the same events, whatever their interleaving");
  free(logs[0]);
  free(logs[1]);
}

static void push_then_respond(test_peer *server, int32_t id) {
  speedy_header req[] = {{":scheme", 7, "https", 5},
                         {":authority", 10, "example.test", 12},
                         {":path", 5, "/app.js", 7}};
  speedy_header resp[] = {{":status", 7, "200", 3}, {"content-length", 14, "4000", 4}};
  int32_t pushed = speedy_submit_push(server->session, id, 1, req, 3, resp, 2, test_body_read,
                                      test_peer_body(server, NULL, 4000), NULL);
  cr_assert_eq(pushed, 2, "submit_push: %s", speedy_strerror(pushed));
  respond(server, id, 100);
}

Test(h2_session, s8_4_a_push_from_our_server_to_our_client) {
  test_peer *client, *server;
  new_pair(NULL, NULL, &client, &server);
  server->on_request = push_then_respond;
  get(client, "/", 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "begin 2 push assoc=1"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "header 2 :method=GET"));
  cr_assert(test_log_has(client, "begin 2 response"));
  cr_assert(test_log_has(client, "dataend 2 len=4000"));
  cr_assert(test_log_has(client, "close 2 NONE"));
  cr_assert(test_log_has(server, "close 2 NONE"));
  delete_pair(client, server);
}

static int64_t body_then_trailers(speedy_session *s, int32_t id, uint8_t *buf, size_t len,
                                  uint32_t *flags, void *source, void *user) {
  int64_t n = test_body_read(s, id, buf, len, flags, source, user);
  if (*flags & SPEEDY_DATA_FLAG_EOF) *flags |= SPEEDY_DATA_FLAG_NO_END_STREAM;
  return n;
}

Test(h2_session, s8_1_trailers_after_a_body_submitted_later) {
  test_peer *client, *server;
  new_pair(NULL, NULL, &client, &server);
  server->on_request = NULL;
  get(client, "/", 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  speedy_header head[] = {{":status", 7, "200", 3}, {"trailer", 7, "x-sum", 5}};
  cr_assert_eq(speedy_submit_response(server->session, 1, head, 2, body_then_trailers,
                                      test_peer_body(server, NULL, 20000)),
               0);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "dataend 1 len=20000") == 0, "the body ended, not the stream");
  speedy_header trailer[] = {{"x-sum", 5, "1234", 4}};
  cr_assert_eq(speedy_submit_headers(server->session, 1, trailer, 1, 1), 0);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "begin 1 extra"));
  cr_assert(test_log_has(client, "header 1 x-sum=1234"));
  cr_assert(test_log_has(client, "end 1 fin=1"));
  cr_assert_eq(test_rx(client, 1)->len, 20000);
  cr_assert(test_log_has(client, "close 1 NONE"));
  delete_pair(client, server);
}

Test(h2_session, s6_8_our_server_shuts_down_our_client_gracefully) {
  test_peer *client, *server;
  new_pair(NULL, NULL, &client, &server);
  server->on_request = NULL;
  get(client, "/a", 3);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert_eq(speedy_submit_goaway(server->session, SPEEDY_RST_NONE, NULL, 0), 0);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "goaway 2147483647 0"), "log:\n%s", client->log);
  cr_assert(test_log_has(client, "goaway 1 0"));
  respond(server, 1, 10);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "dataend 1 len=10"));
  cr_assert_eq(speedy_session_want_read(server->session), 0);
  cr_assert_eq(speedy_session_want_read(client->session), 0);
  delete_pair(client, server);
}

/* speedy_options_set_max_pending_streams and MAX_CONCURRENT_STREAMS: 300 requests through a
 * limit of 10, zero-copy bodies on the way back. */
static void respond_nocopy(test_peer *server, int32_t id) {
  speedy_header h[] = {{":status", 7, "200", 3}};
  cr_assert_eq(speedy_submit_response(server->session, id, h, 1, test_body_read_nocopy,
                                      test_peer_body(server, NULL, 5000)),
               0);
}

Test(h2_session, s5_1_2_300_requests_through_a_limit_of_10_with_zero_copy_bodies) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  speedy_options_set_max_concurrent_streams(options, 10);
  test_peer *client, *server;
  new_pair(NULL, options, &client, &server);
  speedy_options_del(options);
  server->on_request = respond_nocopy;
  cr_assert_eq(speedy_session_data_header_length(server->session), 9);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  for (int i = 0; i < 300; i++) get(client, "/n", i % 8);
  int64_t moved = test_pump_peek(client, server, 65536);
  cr_assert_geq(moved, 0, "%s", speedy_strerror((int)moved));
  for (int32_t id = 1; id < 600; id += 2)
    cr_assert_eq(test_rx(client, id)->len, 5000, "stream %d", (int)id);
  delete_pair(client, server);
}

/* The settings names of one protocol are refused by the other. */
Test(h2_session, settings_names_of_the_other_protocol_are_refused) {
  test_peer *spdy = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  speedy_setting h2_only = {SPEEDY_SETTINGS_HEADER_TABLE_SIZE, 0, 100};
  cr_assert_eq(speedy_submit_settings(spdy->session, 0, &h2_only, 1), SPEEDY_ERR_INVALID_ARGUMENT);
  speedy_setting shared = {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, 10};
  cr_assert_eq(speedy_submit_settings(spdy->session, 0, &shared, 1), 0);
  test_peer_del(spdy);
  test_peer *h2 = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, NULL);
  speedy_setting spdy_only = {SPEEDY_SETTINGS_CURRENT_CWND, 0, 10};
  cr_assert_eq(speedy_submit_settings(h2->session, 0, &spdy_only, 1), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(speedy_submit_settings(h2->session, 0, &shared, 1), 0);
  test_peer_del(h2);
  cr_assert_eq(test_alloc_live(), 0);
}
