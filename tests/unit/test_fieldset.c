/* test_fieldset.c — prepared responses (speedy_fieldset_new,
 * speedy_submit_response_fieldset): the same octets on the wire as a submitted list,
 * over HTTP/2 and SPDY; the checks made once; the reference a submission holds.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "pair.h"
#include "testutil.h"

#define H(n, v)                                                                                    \
  { n, sizeof(n) - 1, v, sizeof(v) - 1 }

static int32_t get(test_peer *client, const char *path) {
  speedy_header headers[] = {{":method", 7, "GET", 3},
                             {":scheme", 7, "https", 5},
                             {":authority", 10, "example.test", 12},
                             {":path", 5, path, strlen(path)},
                             H("user-agent", "speedy-test")};
  int32_t id = speedy_submit_request(client->session, 3, headers, 5, NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
  return id;
}

/* Heads with a long value that fills and evicts the dynamic table, a cookie crumb the
 * policy never indexes, static matches, and fields only the dynamic table can shorten. */
static char long_value[1500];
static speedy_header head_a[] = {H(":status", "200"),
                                 H("content-type", "text/html"),
                                 H("content-length", "1000"),
                                 H("etag", "\"5f3a-1b2c\""),
                                 H("cache-control", "max-age=3600"),
                                 H("set-cookie", "id=7"),
                                 H("date", "Sat, 05 Dec 2026 00:41:00 GMT"),
                                 H("server", "speedyd/0.1.0")};
static speedy_header head_b[] = {H(":status", "404"),
                                 H("content-type", "text/plain; charset=utf-8"),
                                 {"x-long", 6, long_value, sizeof(long_value)},
                                 H("vary", "Accept-Encoding"),
                                 H("server", "speedyd/0.1.0")};
static speedy_header head_c[] = {H("content-length", "0"), /* pseudo-header field second */
                                 H(":status", "200"), H("authorization", "secret"),
                                 H("server", "speedyd/0.1.0")};

/* Which way each server answers, and with what. */
typedef struct answer_plan {
  int use_sets;
  speedy_fieldset *sets[3];
} answer_plan;
static answer_plan plans[2];
static int same_head; /* every answer from head_a: its block is reused (h2_codec's memo) */

static void answer(test_peer *server, int32_t id) {
  answer_plan *plan = &plans[server == NULL ? 0 : server->response_size];
  int which = same_head ? 0 : (id / 2) % 3; /* stream ids 1, 3, 5, 7, ...: a, b, c, a, ... */
  static speedy_header *heads[] = {head_a, head_b, head_c};
  static const size_t counts[] = {8, 5, 4};
  test_body *body = which == 0 ? test_peer_body(server, NULL, 1000) : NULL;
  int rv = plan->use_sets
               ? speedy_submit_response_fieldset(server->session, id, plan->sets[which],
                                                 body != NULL ? test_body_read : NULL, body)
               : speedy_submit_response(server->session, id, heads[which], counts[which],
                                        body != NULL ? test_body_read : NULL, body);
  cr_assert_eq(rv, 0, "answer %d: %s", (int)id, speedy_strerror(rv));
}

static void make_sets(speedy_fieldset **sets) {
  memset(long_value, 'v', sizeof(long_value));
  cr_assert_eq(speedy_fieldset_new(head_a, 8, &sets[0]), 0);
  cr_assert_eq(speedy_fieldset_new(head_b, 5, &sets[1]), 0);
  cr_assert_eq(speedy_fieldset_new(head_c, 4, &sets[2]), 0);
}

static void release_sets(speedy_fieldset **sets) {
  for (int i = 0; i < 3; i++) speedy_fieldset_release(sets[i]);
}

/* One client's requests go to two servers, one answering with lists, one with sets: the
 * two servers must write the same octets, and the client must read every answer. */
static void same_octets(speedy_protocol protocol) {
  test_peer *client = test_peer_new(protocol, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *servers[2];
  for (int i = 0; i < 2; i++) {
    servers[i] = test_peer_new(protocol, SPEEDY_ROLE_SERVER, NULL);
    servers[i]->response_size = (size_t)i; /* selects plans[i] in answer() */
    servers[i]->on_request = answer;
  }
  plans[0].use_sets = 0;
  plans[1].use_sets = 1;
  make_sets(plans[1].sets);
  for (int round = 0; round < 4; round++) {
    for (int k = 0; k < 6; k++) get(client, "/index.html");
    size_t len;
    uint8_t *requests = test_drain(client, &len);
    uint8_t *out[2];
    size_t out_len[2];
    for (int i = 0; i < 2; i++) {
      cr_assert_eq(test_feed(servers[i], requests, len, 65536), (int64_t)len);
      out[i] = test_drain(servers[i], &out_len[i]);
    }
    cr_assert_eq(out_len[0], out_len[1], "round %d: %zu octets from a list, %zu from a set", round,
                 out_len[0], out_len[1]);
    size_t at = 0;
    while (at < out_len[0] && out[0][at] == out[1][at]) at++;
    cr_assert_eq(at, out_len[0], "round %d: the octets differ from offset %zu of %zu", round, at,
                 out_len[0]);
    cr_assert_eq(test_feed(client, out[1], out_len[1], 65536), (int64_t)out_len[1]);
    free(requests);
    free(out[0]);
    free(out[1]);
  }
  /* The last round's answers, as the client read them. */
  if (!same_head) {
    cr_assert(test_log_has(client, "header 45 :status=404"), "client log:\n%s", client->log);
    cr_assert(test_log_has(client, "header 47 authorization=secret"), "client log:\n%s",
              client->log);
  } else {
    cr_assert(test_log_has(client, "header 45 :status=200"), "client log:\n%s", client->log);
    cr_assert(test_log_has(client, "header 47 etag=\"5f3a-1b2c\""), "client log:\n%s", client->log);
  }
  cr_assert(test_log_has(client, "header 43 etag=\"5f3a-1b2c\""), "client log:\n%s", client->log);
  cr_assert_eq(test_rx(client, 43)->len, 1000);
  release_sets(plans[1].sets);
  test_peer_del(servers[0]);
  test_peer_del(servers[1]);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

Test(fieldset, h2_a_set_goes_out_as_the_same_octets_as_its_list) {
  same_octets(SPEEDY_PROTOCOL_H2);
}

/* The same head answer after answer: from the second answer on the encoder is left as it
 * was, and the block is reused instead of encoded again; it must stay the octets the list
 * gives, and the client must read each. */
Test(fieldset, h2_a_set_answered_again_and_again_goes_out_as_its_list_does) {
  same_head = 1;
  same_octets(SPEEDY_PROTOCOL_H2);
  same_head = 0;
}

Test(fieldset, spdy3_1_a_set_goes_out_as_the_same_octets_as_its_list) {
  same_octets(SPEEDY_PROTOCOL_SPDY3_1);
}

Test(fieldset, spdy2_a_set_goes_out_as_the_same_octets_as_its_list) {
  same_octets(SPEEDY_PROTOCOL_SPDY2);
}

Test(fieldset, a_set_is_checked_once_as_a_final_response) {
  speedy_fieldset *set = NULL;
  speedy_header upper[] = {H(":status", "200"), H("Content-Type", "text/html")};
  speedy_header connection[] = {H(":status", "200"), H("connection", "close")};
  speedy_header no_status[] = {H("content-type", "text/html")};
  speedy_header informational[] = {H(":status", "103"), H("link", "</a.css>; rel=preload")};
  speedy_header request_field[] = {H(":status", "200"), H(":path", "/")};
  speedy_header bad_value[] = {H(":status", "200"), H("x-a", "one\r\ntwo")};
  speedy_header null_name[] = {{NULL, 0, "x", 1}};
  struct {
    const speedy_header *fields;
    size_t n;
    const char *what;
  } refused[] = {{upper, 2, "an upper-case name"},
                 {connection, 2, "connection"},
                 {no_status, 1, "no :status"},
                 {informational, 2, "a 1xx"},
                 {request_field, 2, "a request's field"},
                 {bad_value, 2, "CR LF in a value"},
                 {null_name, 1, "a NULL name"},
                 {upper, 0, "no fields"}};
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
    cr_assert_eq(speedy_fieldset_new(refused[i].fields, refused[i].n, &set),
                 SPEEDY_ERR_INVALID_HEADER, "%s was not refused", refused[i].what);
    cr_assert_null(set);
  }
  cr_assert_eq(speedy_fieldset_new(NULL, 2, &set), SPEEDY_ERR_INVALID_ARGUMENT);
  cr_assert_eq(speedy_fieldset_new(upper, 1, NULL), SPEEDY_ERR_INVALID_ARGUMENT);
  speedy_fieldset_release(NULL); /* does nothing */
}

static speedy_fieldset *no_content_set;

static void answer_no_content(test_peer *server, int32_t id) {
  test_body *body = test_peer_body(server, NULL, 10);
  /* 204 has no content: with a body the submission is refused, without it goes. */
  cr_assert_eq(
      speedy_submit_response_fieldset(server->session, id, no_content_set, test_body_read, body),
      SPEEDY_ERR_INVALID_HEADER);
  cr_assert_eq(speedy_submit_response_fieldset(server->session, id, no_content_set, NULL, NULL), 0);
  /* The set can go at once: the queued frame holds its own reference. */
  speedy_fieldset_release(no_content_set);
  no_content_set = NULL;
  cr_assert_eq(speedy_submit_response_fieldset(server->session, id, NULL, NULL, NULL),
               SPEEDY_ERR_INVALID_ARGUMENT);
}

Test(fieldset, h2_204_with_a_body_is_refused_and_a_set_may_be_released_after_submitting) {
  speedy_header head[] = {H(":status", "204"), H("server", "speedyd")};
  cr_assert_eq(speedy_fieldset_new(head, 2, &no_content_set), 0);
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, NULL);
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = answer_no_content;
  int32_t id = get(client, "/nothing");
  cr_assert_geq(test_pump(client, server, 16384), 0);
  cr_assert_null(no_content_set);
  char line[64];
  snprintf(line, sizeof(line), "header %d :status=204", (int)id);
  cr_assert(test_log_has(client, line), "client log:\n%s", client->log);
  cr_assert(test_log_has(client, "header 1 server=speedyd"), "client log:\n%s", client->log);
  test_peer_del(server);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}

static speedy_fieldset *big_set;

static void answer_big(test_peer *server, int32_t id) {
  cr_assert_eq(speedy_submit_response_fieldset(server->session, id, big_set, NULL, NULL),
               SPEEDY_ERR_INVALID_HEADER);
  speedy_header small[] = {H(":status", "500")};
  cr_assert_eq(speedy_submit_response(server->session, id, small, 1, NULL, NULL), 0);
}

Test(fieldset, h2_a_set_over_the_peers_max_header_list_size_is_refused) {
  memset(long_value, 'v', sizeof(long_value));
  speedy_header head[] = {H(":status", "200"), {"x-long", 6, long_value, sizeof(long_value)}};
  cr_assert_eq(speedy_fieldset_new(head, 2, &big_set), 0);
  test_peer *client = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, NULL);
  speedy_setting limit = {SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE, 0, 1024};
  cr_assert_eq(speedy_submit_settings(client->session, 0, &limit, 1), 0);
  test_peer *server = test_peer_new(SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, NULL);
  server->on_request = answer_big;
  cr_assert_geq(test_pump(client, server, 16384), 0); /* the client's SETTINGS arrive */
  get(client, "/big");
  cr_assert_geq(test_pump(client, server, 16384), 0);
  cr_assert(test_log_has(client, "header 1 :status=500"), "client log:\n%s", client->log);
  speedy_fieldset_release(big_set);
  test_peer_del(server);
  test_peer_del(client);
  cr_assert_eq(test_alloc_live(), 0);
}
