/* test_session.c — client and server sessions talking in memory: requests, responses,
 * bodies, push, every version. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>

#include "pair.h"
#include "session_int.h"
#include "testutil.h"

static const speedy_protocol all_versions[] = {SPEEDY_PROTOCOL_SPDY2, SPEEDY_PROTOCOL_SPDY3,
                                               SPEEDY_PROTOCOL_SPDY3_1};

static void get_roundtrip(speedy_protocol protocol, size_t size, size_t chunk) {
  test_peer *client = test_peer_new(protocol, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(protocol, SPEEDY_ROLE_SERVER, NULL);
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
  /* The wire says "200 OK" (SPDY); the application sees HTTP/2's three digits. */
  cr_assert(test_log_has(client, "header 1 :status=200"), "client log:\n%s", client->log);
  cr_assert(!test_log_has(client, "header 1 :status=200 OK"));
  cr_assert(!test_log_has(client, "header 1 :version="), "SPDY's :version is not passed on");
  test_stream_rx *rx = test_rx(client, 1);
  cr_assert_eq(rx->len, size, "body length %zu, expected %zu", rx->len, size);
  for (size_t i = 0; i < size; i++)
    if (rx->data[i] != (uint8_t)(i % 251)) cr_assert_fail("body byte %zu differs", i);
  cr_assert(rx->closed);
  cr_assert_eq(rx->close_status, SPEEDY_RST_NONE);
  cr_assert(test_log_has(server, "close 1 NONE"), "server log:\n%s", server->log);
  cr_assert_eq(speedy_session_open_streams(client->session), 0);
  cr_assert_eq(speedy_session_open_streams(server->session), 0);
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
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, NULL);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert(test_log_has(client, "setting 4=100 flags=0"), "client log:\n%s", client->log);
  cr_assert_eq(
      speedy_session_remote_setting(client->session, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS), 100);
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0);
}

/* speedy_options_set_frame_summaries(0): on_frame still sees every frame, without text. */
Test(session, frame_summaries_can_be_turned_off) {
  speedy_options *quiet;
  cr_assert_eq(speedy_options_new(&quiet), 0);
  test_alloc_install(quiet);
  speedy_options_set_frame_summaries(quiet, 0);
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, quiet);
  speedy_options_del(quiet);
  test_peer_trace(client);
  test_peer_trace(server);
  server->on_request = test_respond_default;
  cr_assert_eq(test_get(client, "/", 3), 1);
  cr_assert_geq(test_pump(client, server, 65536), 0);
  cr_assert_eq(test_frames_count(server, 0, SPEEDY_SPDY_FRAME_SYN_STREAM, 1), 1);
  cr_assert_eq(test_frames_count(server, 1, SPEEDY_SPDY_FRAME_SYN_REPLY, 1), 1);
  cr_assert_geq(test_frames_count(server, 1, SPEEDY_SPDY_FRAME_SETTINGS, 0), 1);
  for (size_t i = 0; i < server->n_frames; i++)
    cr_assert_str_empty(server->frames[i].summary, "server frame %zu (type %d): '%s'", i,
                        (int)server->frames[i].type, server->frames[i].summary);
  int described = 0;
  for (size_t i = 0; i < client->n_frames; i++) {
    const test_frame_rec *f = &client->frames[i];
    if (f->type == SPEEDY_SPDY_FRAME_SYN_STREAM || f->type == SPEEDY_SPDY_FRAME_SETTINGS)
      described += f->summary[0] != '\0';
  }
  cr_assert_geq(described, 2, "the client (default options) describes its frames");
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0);
}

/* on_stream_close is where applications free per-stream data: it must still be readable. */
static int user_data_seen;
static int read_user_data_on_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)status, (void)user;
  if (speedy_session_get_stream_user_data(s, id) == &user_data_seen) user_data_seen++;
  return 0;
}

Test(session, stream_user_data_is_readable_in_on_stream_close) {
  speedy_options *options;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  speedy_callbacks *callbacks;
  cr_assert_eq(speedy_callbacks_new(&callbacks), 0);
  speedy_callbacks_set_on_stream_close(callbacks, read_user_data_on_close);
  speedy_session *client;
  cr_assert_eq(speedy_session_new(&client, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, callbacks,
                                  options, NULL),
               0);
  speedy_header request[] = {{":method", 7, "GET", 3},
                             {":path", 5, "/", 1},
                             {":version", 8, "HTTP/1.1", 8},
                             {":host", 5, "h", 1},
                             {":scheme", 7, "https", 5}};
  int32_t id = speedy_submit_request(client, 3, request, 5, NULL, NULL, &user_data_seen);
  cr_assert_gt(id, 0);
  cr_assert_eq(speedy_submit_rst(client, id, SPEEDY_RST_CANCEL), 0);
  cr_assert_eq(user_data_seen, 1, "user data was not readable during on_stream_close");
  cr_assert_null(speedy_session_get_stream_user_data(client, id), "stream outlived its close");
  speedy_session_del(client);
  speedy_callbacks_del(callbacks);
  speedy_options_del(options);
  cr_assert_eq(test_alloc_live(), 0);
}

/* Stream ids are 31 bits and never reused: after 2^31-1 a session can open no more, and
 * says so (a client then opens a new session). */
Test(session, stream_ids_run_out_with_a_clear_error) {
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, NULL);
  client->session->next_stream_id = 0x7ffffffd; /* two ids left: ...fd and ...ff */
  cr_assert_eq(test_get(client, "/a", 3), 0x7ffffffd);
  cr_assert_eq(test_get(client, "/b", 3), 0x7fffffff);
  speedy_header request[] = {{":method", 7, "GET", 3},
                             {":path", 5, "/c", 2},
                             {":version", 8, "HTTP/1.1", 8},
                             {":host", 5, "h", 1},
                             {":scheme", 7, "https", 5}};
  cr_assert_eq(speedy_submit_request(client->session, 3, request, 5, NULL, NULL, NULL),
               SPEEDY_ERR_STREAM_ID_EXHAUSTED);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

/* What the header-block encoder would refuse is refused at submit time, and the session
 * carries on: a refusal at send time would end it (fuzz finding: a repeated name with an
 * empty value, which cannot be joined with NUL separators, passed submit and broke the
 * session when compressed). */
Test(session, headers_the_encoder_refuses_are_refused_at_submit) {
  for (size_t v = 0; v < 3; v++) {
    test_peer *client = test_peer_new(all_versions[v], SPEEDY_ROLE_CLIENT, NULL);
    test_peer *server = test_peer_new(all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    speedy_header request[] = {
        {":method", 7, "GET", 3}, {":path", 5, "/", 1},       {":version", 8, "HTTP/1.1", 8},
        {":host", 5, "h", 1},     {":scheme", 7, "https", 5}, {"x-a", 3, "1", 1},
        {"x-a", 3, "", 0}};
    cr_assert_eq(speedy_submit_request(client->session, 3, request, 7, NULL, NULL, NULL),
                 SPEEDY_ERR_INVALID_HEADER, "v%zu: repeated name, empty value", v);
    request[6].value = "2";
    request[6].value_len = 1;
    test_body *body = test_peer_body(client, NULL, 100); /* keeps the stream open to send */
    body->defer_once = 1;
    int32_t id = speedy_submit_request(client->session, 3, request, 7, test_body_read, body, NULL);
    cr_assert_eq(id, 1, "v%zu: the same name twice with values is fine", v);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert(test_log_has(server, "header 1 x-a=1") && test_log_has(server, "header 1 x-a=2"),
              "server log:\n%s", server->log);

    speedy_header response[] = {{":status", 7, "200", 3},
                                {":version", 8, "HTTP/1.1", 8},
                                {"set-cookie", 10, "", 0},
                                {"set-cookie", 10, "a=b", 3}};
    cr_assert_eq(speedy_submit_response(server->session, 1, response, 4, NULL, NULL),
                 SPEEDY_ERR_INVALID_HEADER);
    speedy_header push_request[] = {
        {":scheme", 7, "https", 5}, {":host", 5, "h", 1}, {":path", 5, "/p", 2}};
    cr_assert_eq(
        speedy_submit_push(server->session, 1, 3, push_request, 3, response, 4, NULL, NULL, NULL),
        SPEEDY_ERR_INVALID_HEADER);
    /* Each half of a push is valid alone; in its one SYN_STREAM the name repeats, once
     * empty (SPDY/2 refuses the empty value in the half already). */
    speedy_header push_request_dup[] = {{":scheme", 7, "https", 5},
                                        {":host", 5, "h", 1},
                                        {":path", 5, "/q", 2},
                                        {"x-d", 3, "1", 1}};
    speedy_header response_dup[] = {
        {":status", 7, "200", 3}, {":version", 8, "HTTP/1.1", 8}, {"x-d", 3, "", 0}};
    cr_assert_eq(speedy_submit_push(server->session, 1, 3, push_request_dup, 4, response_dup, 3,
                                    NULL, NULL, NULL),
                 SPEEDY_ERR_INVALID_HEADER, "v%zu: a push whose halves clash", v);
    cr_assert_eq(speedy_submit_headers(client->session, 1, response + 2, 2, 0),
                 SPEEDY_ERR_INVALID_HEADER);
    cr_assert_eq(speedy_submit_response(server->session, 1, response, 2, NULL, NULL), 0);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    cr_assert(test_log_has(client, "header 1 :status=200"), "client log:\n%s", client->log);
    cr_assert_eq(client->goaway_seen + server->goaway_seen, 0);
    test_peer_del(client);
    test_peer_del(server);
    cr_assert_eq(test_alloc_live(), 0);
  }
}

/* The deflate level alone: 0-9 accepted (the window and memLevel stay), others refused;
 * level 0 stores the block, so the same request's SYN_STREAM is longer. */
Test(session, deflate_level_alone) {
  speedy_options *options = NULL;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  cr_assert_eq(speedy_options_set_deflate_level(options, -1), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(speedy_options_set_deflate_level(options, 10), SPEEDY_ERR_INVALID_ARGUMENT);
  size_t lengths[2];
  for (int i = 0; i < 2; i++) {
    cr_assert_eq(speedy_options_set_deflate_level(options, i == 0 ? 0 : 9), 0);
    test_peer *client = test_peer_new(SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, options);
    cr_assert_eq(test_get(client, "/index.html", 3), 1);
    size_t len = 0;
    uint8_t *out = test_drain(client, &len);
    lengths[i] = len;
    free(out);
    test_peer_del(client);
  }
  cr_assert_gt(lengths[0], lengths[1] + 50, "level 0: %zu bytes, level 9: %zu", lengths[0],
               lengths[1]);
  speedy_options_del(options);
  cr_assert_eq(test_alloc_live(), 0);
}

/* A head longer than the codec maps on the stack (32 fields) is mapped to SPDY's names in
 * an allocation: every field arrives, :status with its reason phrase turned back. */
static void respond_with_40_fields(test_peer *server, int32_t id) {
  speedy_header fields[41];
  static char names[40][8];
  fields[0] = (speedy_header){":status", 7, "200", 3};
  for (int i = 0; i < 40; i++) {
    snprintf(names[i], sizeof(names[i]), "x-f%02d", i);
    fields[i + 1] = (speedy_header){names[i], strlen(names[i]), "v", 1};
  }
  cr_assert_eq(speedy_submit_response(server->session, id, fields, 41, NULL, NULL), 0);
}

Test(session, a_long_head_is_mapped_to_spdy_names_every_version) {
  for (size_t v = 0; v < 3; v++) {
    test_peer *client = test_peer_new(all_versions[v], SPEEDY_ROLE_CLIENT, NULL);
    test_peer *server = test_peer_new(all_versions[v], SPEEDY_ROLE_SERVER, NULL);
    server->on_request = respond_with_40_fields;
    int32_t id = test_get(client, "/long", 3);
    cr_assert_geq(test_pump(client, server, 65536), 0);
    char line[64];
    snprintf(line, sizeof(line), "header %d :status=200", (int)id);
    cr_assert(test_log_has(client, line), "client log:\n%s", client->log);
    snprintf(line, sizeof(line), "header %d x-f39=v", (int)id);
    cr_assert(test_log_has(client, line), "client log:\n%s", client->log);
    test_peer_del(client);
    test_peer_del(server);
    cr_assert_eq(test_alloc_live(), 0);
  }
}
