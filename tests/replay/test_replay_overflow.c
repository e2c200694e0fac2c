/* test_replay_overflow.c — the replay server's plan reader (src/replay/replay_plan.c) and
 * what it serves (replay_body.c) at the boundaries of its numbers: body_size of 2^64 - 1,
 * 2^63 - 1, REPLAY_MAX_BODY_SIZE and one more, negative and fractional; ids, hosts,
 * statuses, redirects and ports past their ranges; the count limits on hosts, resources
 * and header fields; and a body of the maximum size served without holding it.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_body.h"
#include "replay.h"

#define PLAN_HEAD                                                                                  \
  "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a.test\",\"port\":80}],"    \
  "\"resources\":["

/* One resource with field `key` set to the JSON text value (or the defaults). */
static char *plan_with(const char *key, const char *value) {
  static const char *const keys[] = {"id", "host", "status", "body_size", "redirect_to"};
  static const char *const defaults[] = {"0", "0", "200", "10", "-1"};
  char fields[512] = "";
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char one[160];
    snprintf(one, sizeof(one), "\"%s\":%s,", keys[i],
             strcmp(keys[i], key) == 0 ? value : defaults[i]);
    strcat(fields, one);
  }
  size_t cap = strlen(PLAN_HEAD) + strlen(fields) + 128;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  snprintf(text, cap, "%s{%s\"method\":\"GET\",\"path\":\"/\",\"response_headers\":[]}]}",
           PLAN_HEAD, fields);
  return text;
}

static replay_plan *parse_ok(char *text) {
  char err[512] = "";
  replay_plan *plan = NULL;
  int rv = replay_plan_parse(&plan, text, strlen(text), "o.json", err, sizeof(err));
  cr_assert_eq(rv, 0, "expected the plan to load, got: %s", err);
  free(text);
  return plan;
}

static void parse_fails(char *text, const char *expected) {
  char err[512] = "";
  replay_plan *plan = NULL;
  int rv = replay_plan_parse(&plan, text, strlen(text), "o.json", err, sizeof(err));
  cr_assert_eq(rv, -1, "expected a refusal containing '%s'", expected);
  cr_assert_null(plan);
  cr_assert_not_null(strstr(err, expected), "message '%s' lacks '%s'", err, expected);
  free(text);
}

/* ---- body_size ------------------------------------------------------------------------ */

Test(overflow_replay_plan, body_size_2_pow_64_minus_1_is_a_json_error) {
  parse_fails(plan_with("body_size", "18446744073709551615"), "o.json: line 1, column");
}

Test(overflow_replay_plan, body_size_int64_max_is_refused_with_the_range) {
  parse_fails(plan_with("body_size", "9223372036854775807"),
              "resources[0].body_size: expected an integer from 0 to 1099511627776, got "
              "9223372036854775807");
}

Test(overflow_replay_plan, body_size_at_the_maximum_is_accepted) {
  replay_plan *plan = parse_ok(plan_with("body_size", "1099511627776"));
  cr_assert_eq(replay_plan_resource(plan, 0)->body_size, REPLAY_MAX_BODY_SIZE);
  replay_plan_del(plan);
}

Test(overflow_replay_plan, body_size_one_over_the_maximum_is_refused) {
  parse_fails(plan_with("body_size", "1099511627777"), "resources[0].body_size: expected");
}

Test(overflow_replay_plan, negative_body_sizes_are_refused) {
  parse_fails(plan_with("body_size", "-1"), "resources[0].body_size: expected");
  parse_fails(plan_with("body_size", "-9223372036854775808"), "resources[0].body_size: expected");
}

Test(overflow_replay_plan, fractional_and_exponent_body_sizes_are_refused) {
  parse_fails(plan_with("body_size", "10.0"), "got a fractional number");
  parse_fails(plan_with("body_size", "1e3"), "got a fractional number");
}

/* ---- the other numbers ---------------------------------------------------------------- */

Test(overflow_replay_plan, id_past_32_bits_is_refused) {
  parse_fails(plan_with("id", "4294967296"), "resources[0].id: expected an integer from 0 to 0");
  parse_fails(plan_with("id", "-1"), "resources[0].id: expected");
}

Test(overflow_replay_plan, host_index_past_32_bits_is_refused) {
  parse_fails(plan_with("host", "4294967296"), "resources[0].host: expected");
  parse_fails(plan_with("host", "-9223372036854775808"), "resources[0].host: expected");
}

Test(overflow_replay_plan, status_that_wraps_an_int_to_200_is_refused) {
  parse_fails(plan_with("status", "4294967496"), "resources[0].status: expected");
}

Test(overflow_replay_plan, redirect_to_int64_max_is_refused) {
  parse_fails(plan_with("redirect_to", "9223372036854775807"), "resources[0].redirect_to:");
}

Test(overflow_replay_plan, seed_int64_max_is_kept_and_2_pow_64_minus_1_refused) {
  char *text = plan_with("body_size", "10");
  char *seed = strstr(text, "\"seed\":1");
  cr_assert_not_null(seed);
  size_t cap = strlen(text) + 32;
  char *big = malloc(cap);
  cr_assert_not_null(big);
  snprintf(big, cap, "%.*s\"seed\":9223372036854775807%s", (int)(seed - text), text, seed + 8);
  replay_plan *plan = parse_ok(big);
  cr_assert_eq(replay_plan_seed(plan), (uint64_t)INT64_MAX);
  replay_plan_del(plan);
  big = malloc(cap);
  cr_assert_not_null(big);
  snprintf(big, cap, "%.*s\"seed\":-1%s", (int)(seed - text), text, seed + 8);
  parse_fails(big, "plan.seed: expected an integer from 0 to");
  free(text);
}

Test(overflow_replay_plan, port_past_65535_is_refused) {
  parse_fails(strdup("{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a\","
                     "\"port\":4294967376}],\"resources\":[]}"),
              "hosts[0].port: expected an integer from 1 to 65535");
}

/* ---- counts --------------------------------------------------------------------------- */

/* "prefix" then n copies of item joined with ",", then suffix. */
static char *repeated(const char *prefix, const char *item, size_t n, const char *suffix) {
  size_t cap = strlen(prefix) + n * (strlen(item) + 1) + strlen(suffix) + 1;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  size_t at = (size_t)snprintf(text, cap, "%s", prefix);
  for (size_t i = 0; i < n; i++)
    at += (size_t)snprintf(text + at, cap - at, "%s%s", i > 0 ? "," : "", item);
  snprintf(text + at, cap - at, "%s", suffix);
  return text;
}

Test(overflow_replay_plan, one_host_over_the_maximum_is_refused_before_reading_them) {
  parse_fails(repeated("{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[", "{}",
                       REPLAY_MAX_HOSTS + 1, "],\"resources\":[]}"),
              "hosts: expected 1 to 4096 hosts, got 4097");
}

Test(overflow_replay_plan, one_resource_over_the_maximum_is_refused_before_reading_them) {
  parse_fails(repeated(PLAN_HEAD, "{}", REPLAY_MAX_RESOURCES + 1, "]}"),
              "resources: 200001 resources, at most 200000 are replayed");
}

Test(overflow_replay_plan, one_header_field_over_the_maximum_is_refused) {
  char *text = plan_with("body_size", "10");
  char *headers = strstr(text, "\"response_headers\":[]");
  cr_assert_not_null(headers);
  *headers = '\0';
  char prefix[1024];
  snprintf(prefix, sizeof(prefix), "%s\"response_headers\":[", text);
  char *big = repeated(prefix, "[\"x-a\",\"b\"]", REPLAY_MAX_HEADERS + 1, "]}]}");
  free(text);
  parse_fails(big, "resources[0].response_headers: more than 256 fields");
}

/* ---- serving the largest body ---------------------------------------------------------- */

Test(overflow_replay_serve, body_of_the_maximum_size_is_announced_not_allocated) {
  replay_plan *plan = parse_ok(plan_with("body_size", "1099511627776"));
  http_request request;
  http_request_init(&request, HTTP_PROTO_HTTP11, 0, 0);
  cr_assert_eq(http_request_set_method(&request, "GET", 3), 0);
  cr_assert_eq(http_request_set_path(&request, "/", 1), 0);
  http_response response;
  http_response_init(&response);
  cr_assert_eq(replay_serve(plan, 0, &request, &response), 0);
  cr_assert_eq(response.status, 200);
  cr_assert_str_eq(http_headers_get(&response.headers, "content-length"), "1099511627776");
  cr_assert_eq(http_body_length(response.body), (int64_t)REPLAY_MAX_BODY_SIZE);
  uint8_t chunk[16384];
  int eof = 1;
  cr_assert_eq(http_body_read(response.body, chunk, sizeof(chunk), &eof), (int64_t)sizeof(chunk));
  cr_assert_eq(eof, 0);
  http_response_free(&response);
  http_request_free(&request);
  replay_plan_del(plan);
}

Test(overflow_replay_serve, generator_bytes_at_the_end_of_64_bit_offsets_are_defined) {
  /* Any byte is computed on its own: offsets near 2^64 must not wrap into other bytes. */
  uint8_t last[8], split[8];
  replay_body_fill(1, 0, UINT64_MAX - 7, last, sizeof(last));
  replay_body_fill(1, 0, UINT64_MAX - 7, split, 3);
  replay_body_fill(1, 0, UINT64_MAX - 4, split + 3, 5);
  cr_assert_eq(memcmp(last, split, sizeof(last)), 0, "chunks near 2^64 disagree");
  uint8_t first[8];
  replay_body_fill(1, 0, 0, first, sizeof(first));
  cr_assert_neq(memcmp(first, last, sizeof(first)), 0, "the last word is not the first");
}

Test(overflow_replay_serve, authority_port_past_65535_finds_no_host) {
  replay_plan *plan = parse_ok(plan_with("body_size", "10"));
  cr_assert_eq(replay_plan_find_host(plan, "a.test:80"), 0);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:65536"), -1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:18446744073709551696"), -1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:-80"), -1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:"), -1);
  replay_plan_del(plan);
}
