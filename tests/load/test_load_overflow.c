/* test_load_overflow.c — the loader's plan reader (src/load/load_plan.c) at the boundaries
 * of its numbers: body_size and discover_offset of 2^64 - 1, 2^63 and INT64_MAX, negative;
 * start_delay at and past its hour; ids and ports past their ranges; the count and length
 * limits (hosts, resources, header fields, path, method, file size); and the scheduler
 * (load_sched.c) with an offset no body reaches.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load_plan.h"
#include "load_sched.h"

#define PLAN_HEAD                                                                                  \
  "{\"format\": \"speedy-lab-plan/1\", \"hosts\": [{\"name\": \"a.test\", \"port\": 80}], "        \
  "\"resources\": ["

/* The document, then a child whose field `key` is the JSON text value. */
static char *plan_with(const char *key, const char *value) {
  static const char *const keys[] = {"id",     "host",      "parent",     "discover_offset",
                                     "status", "body_size", "redirect_to"};
  static const char *const defaults[] = {"1", "0", "0", "5", "200", "10", "-1"};
  char fields[512] = "";
  for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
    char one[160];
    snprintf(one, sizeof(one), "\"%s\": %s, ", keys[i],
             strcmp(keys[i], key) == 0 ? value : defaults[i]);
    strcat(fields, one);
  }
  const char *delay = strcmp(key, "start_delay") == 0 ? value : "0";
  size_t cap = 1024 + strlen(fields) + strlen(delay);
  char *text = malloc(cap);
  cr_assert_not_null(text);
  snprintf(text, cap,
           "%s{\"id\": 0, \"host\": 0, \"method\": \"GET\", \"path\": \"/\", \"type\": "
           "\"document\", \"parent\": -1, \"discover_offset\": -1, \"request_headers\": [], "
           "\"status\": 200, \"body_size\": 100, \"redirect_to\": -1}, "
           "{%s\"method\": \"GET\", \"path\": \"/a.css\", \"type\": \"css\", "
           "\"start_delay\": %s, \"request_headers\": []}]}",
           PLAN_HEAD, fields, delay);
  return text;
}

static load_plan *parse_ok(char *text) {
  char err[400] = "";
  load_plan *plan = NULL;
  int rv = load_plan_parse(text, strlen(text), &plan, err, sizeof(err));
  cr_assert_eq(rv, 0, "expected the plan to load, got: %s", err);
  free(text);
  return plan;
}

static void parse_fails(char *text, const char *expected) {
  char err[400] = "";
  load_plan *plan = NULL;
  int rv = load_plan_parse(text, strlen(text), &plan, err, sizeof(err));
  cr_assert_eq(rv, -1, "expected a refusal containing '%s'", expected);
  cr_assert_null(plan);
  cr_assert_not_null(strstr(err, expected), "message '%s' lacks '%s'", err, expected);
  free(text);
}

/* ---- body_size ------------------------------------------------------------------------ */

Test(overflow_load_plan, body_size_2_pow_64_minus_1_is_a_json_error) {
  parse_fails(plan_with("body_size", "18446744073709551615"), "line 1, column");
}

Test(overflow_load_plan, body_size_2_pow_63_is_a_json_error) {
  parse_fails(plan_with("body_size", "9223372036854775808"), "line 1, column");
}

Test(overflow_load_plan, body_size_int64_max_is_the_largest_accepted) {
  load_plan *plan = parse_ok(plan_with("body_size", "9223372036854775807"));
  cr_assert_eq(plan->resources[1].body_size, (uint64_t)INT64_MAX);
  load_plan_del(plan);
}

Test(overflow_load_plan, negative_body_size_is_refused) {
  parse_fails(plan_with("body_size", "-1"), "resources[1].body_size: -1 is out of range");
  parse_fails(plan_with("body_size", "-9223372036854775808"), "resources[1].body_size:");
}

Test(overflow_load_plan, fractional_body_size_is_refused) {
  parse_fails(plan_with("body_size", "10.5"), "resources[1].body_size: expected an integer");
  parse_fails(plan_with("body_size", "1e3"), "resources[1].body_size: expected an integer");
}

/* ---- discover_offset and start_delay --------------------------------------------------- */

Test(overflow_load_plan, discover_offset_int64_max_is_accepted_and_2_pow_63_is_not) {
  load_plan *plan = parse_ok(plan_with("discover_offset", "9223372036854775807"));
  cr_assert_eq(plan->resources[1].discover_offset, INT64_MAX);
  load_plan_del(plan);
  parse_fails(plan_with("discover_offset", "9223372036854775808"), "line 1, column");
}

Test(overflow_load_plan, discover_offset_below_minus_1_is_refused) {
  parse_fails(plan_with("discover_offset", "-2"), "resources[1].discover_offset: -2 is out of");
  parse_fails(plan_with("discover_offset", "-9223372036854775808"),
              "resources[1].discover_offset:");
}

Test(overflow_load_plan, start_delay_of_an_hour_is_accepted_and_more_is_refused) {
  load_plan *plan = parse_ok(plan_with("start_delay", "3600000"));
  cr_assert_float_eq(plan->resources[1].start_delay_ms, 3.6e6, 1e-9);
  load_plan_del(plan);
  parse_fails(plan_with("start_delay", "3600000.001"), "resources[1].start_delay: expected");
  parse_fails(plan_with("start_delay", "1e308"), "resources[1].start_delay: expected");
  parse_fails(plan_with("start_delay", "-1e-300"), "resources[1].start_delay: expected");
}

/* ---- indexes and ports ---------------------------------------------------------------- */

Test(overflow_load_plan, id_that_wraps_an_int_is_refused) {
  parse_fails(plan_with("id", "4294967297"), "resources[1].id: 4294967297 is out of range");
}

Test(overflow_load_plan, parent_and_redirect_past_32_bits_are_refused) {
  parse_fails(plan_with("parent", "4294967296"), "resources[1].parent:");
  parse_fails(plan_with("redirect_to", "-4294967296"), "resources[1].redirect_to:");
}

Test(overflow_load_plan, status_that_wraps_an_int_to_200_is_refused) {
  parse_fails(plan_with("status", "4294967496"), "resources[1].status:");
}

Test(overflow_load_plan, port_past_65535_is_refused) {
  char *text = plan_with("body_size", "10");
  char *port = strstr(text, "\"port\": 80");
  cr_assert_not_null(port);
  size_t cap = strlen(text) + 16;
  char *bad = malloc(cap);
  cr_assert_not_null(bad);
  snprintf(bad, cap, "%.*s\"port\": 4294967376%s", (int)(port - text), text, port + 10);
  free(text);
  parse_fails(bad, "hosts[0].port: 4294967376 is out of range 1..65535");
}

/* ---- counts and lengths ----------------------------------------------------------------- */

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

Test(overflow_load_plan, one_host_over_the_maximum_is_refused) {
  parse_fails(repeated("{\"format\": \"speedy-lab-plan/1\", \"hosts\": [", "{}",
                       LOAD_PLAN_MAX_HOSTS + 1, "], \"resources\": []}"),
              "hosts: expected an array of 1 to 250 hosts");
}

Test(overflow_load_plan, one_resource_over_the_maximum_is_refused) {
  parse_fails(repeated(PLAN_HEAD, "{}", LOAD_PLAN_MAX_RESOURCES + 1, "]}"),
              "resources: expected an array of 1 to 20000 resources");
}

/* The plan with the child's request_headers replaced by `headers` (JSON array text). */
static char *with_headers(char *headers) {
  char *text = plan_with("body_size", "10");
  const char *slot = "\"request_headers\": []}]}";
  char *at = strstr(text, slot);
  cr_assert_not_null(at);
  size_t cap = strlen(text) + strlen(headers) + 64;
  char *out = malloc(cap);
  cr_assert_not_null(out);
  snprintf(out, cap, "%.*s\"request_headers\": %s}]}", (int)(at - text), text, headers);
  free(text);
  free(headers);
  return out;
}

Test(overflow_load_plan, header_fields_stop_at_the_maximum) {
  load_plan *plan =
      parse_ok(with_headers(repeated("[", "[\"x-a\", \"b\"]", LOAD_PLAN_MAX_HEADERS, "]")));
  cr_assert_eq(plan->resources[1].n_request_headers, LOAD_PLAN_MAX_HEADERS);
  load_plan_del(plan);
  parse_fails(with_headers(repeated("[", "[\"x-a\", \"b\"]", LOAD_PLAN_MAX_HEADERS + 1, "]")),
              "resources[1].request_headers: more than 128 headers");
}

/* "[[\"x-a\", \"<n bytes>\"]]" */
static char *header_of_value_length(size_t n) {
  char *text = malloc(n + 32);
  cr_assert_not_null(text);
  strcpy(text, "[[\"x-a\", \"");
  memset(text + strlen(text), 'v', n);
  strcpy(text + 10 + n, "\"]]");
  return text;
}

Test(overflow_load_plan, header_value_of_64_kib_is_accepted_and_one_byte_more_refused) {
  load_plan *plan = parse_ok(with_headers(header_of_value_length(65536)));
  cr_assert_eq(strlen(plan->resources[1].request_headers[0].value), 65536);
  load_plan_del(plan);
  parse_fails(with_headers(header_of_value_length(65537)),
              "resources[1].request_headers[0]: header value");
}

Test(overflow_load_plan, path_of_16_kib_is_accepted_and_one_byte_more_refused) {
  for (size_t n = 16384; n <= 16385; n++) {
    char *path = malloc(n + 1);
    cr_assert_not_null(path);
    path[0] = '/';
    memset(path + 1, 'p', n - 1);
    path[n] = '\0';
    char *text = plan_with("body_size", "10");
    char *at = strstr(text, "\"/a.css\"");
    cr_assert_not_null(at);
    size_t cap = strlen(text) + n + 8;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    snprintf(out, cap, "%.*s\"%s\"%s", (int)(at - text), text, path, at + 8);
    free(text);
    free(path);
    if (n == 16384) {
      load_plan *plan = parse_ok(out);
      cr_assert_eq(strlen(plan->resources[1].path), 16384);
      load_plan_del(plan);
    } else {
      parse_fails(out, "resources[1].path: longer than 16384 bytes");
    }
  }
}

Test(overflow_load_plan, method_of_33_bytes_is_refused) {
  char *text = plan_with("body_size", "10");
  char *at = strstr(text, "\"GET\", \"path\": \"/a.css\"");
  cr_assert_not_null(at);
  size_t cap = strlen(text) + 64;
  char *out = malloc(cap);
  cr_assert_not_null(out);
  snprintf(out, cap, "%.*s\"%.33s\"%s", (int)(at - text), text,
           "MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM", at + 5);
  free(text);
  parse_fails(out, "resources[1].method: longer than 32 bytes");
}

/* Writes the plan padded with spaces to exactly size bytes; returns the file's path. */
static void write_plan_of_size(char *path, size_t size) {
  char *text = plan_with("body_size", "10");
  size_t len = strlen(text);
  cr_assert_leq(len, size);
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(text, 1, len, f), len);
  static char spaces[65536];
  memset(spaces, ' ', sizeof(spaces));
  for (size_t left = size - len; left > 0;) {
    size_t n = left < sizeof(spaces) ? left : sizeof(spaces);
    cr_assert_eq(fwrite(spaces, 1, n, f), n);
    left -= n;
  }
  cr_assert_eq(fclose(f), 0);
  free(text);
}

Test(overflow_load_plan, file_of_exactly_the_maximum_is_read) {
  char path[] = "/tmp/speedy-load-plan-XXXXXX";
  write_plan_of_size(path, LOAD_PLAN_MAX_FILE);
  char err[400] = "";
  load_plan *plan = NULL;
  int rv = load_plan_read(path, &plan, err, sizeof(err));
  unlink(path);
  cr_assert_eq(rv, 0, "a file of exactly %u bytes: %s", LOAD_PLAN_MAX_FILE, err);
  load_plan_del(plan);
}

Test(overflow_load_plan, file_one_byte_over_the_maximum_is_refused) {
  char path[] = "/tmp/speedy-load-plan-XXXXXX";
  write_plan_of_size(path, (size_t)LOAD_PLAN_MAX_FILE + 1);
  char err[400] = "";
  load_plan *plan = NULL;
  int rv = load_plan_read(path, &plan, err, sizeof(err));
  unlink(path);
  cr_assert_eq(rv, -1);
  cr_assert_null(plan);
  cr_assert_not_null(strstr(err, "larger than"), "%s", err);
}

/* ---- the scheduler with offsets no body reaches ------------------------------------------ */

Test(overflow_load_sched, discover_offset_int64_max_waits_for_the_whole_parent) {
  load_plan *plan = parse_ok(plan_with("discover_offset", "9223372036854775807"));
  load_sched *s = load_sched_new(plan, LOAD_DISPATCH_FCFS, 0);
  cr_assert_not_null(s);
  load_sched_start(s, 0);
  cr_assert_eq(load_sched_peek(s, 0), 0);
  load_sched_requested(s, 0, 0, 1);
  load_sched_headers(s, 0, 200, 2);
  load_sched_body(s, 0, (uint64_t)INT64_MAX - 1, 3);
  cr_assert_eq(load_sched_entry(s, 1)->state, LOAD_WAITING, "discovered before its offset");
  load_sched_body(s, 0, UINT64_MAX, 4);
  cr_assert_eq(load_sched_entry(s, 1)->state, LOAD_READY, "the offset was reached");
  load_sched_del(s);
  load_plan_del(plan);
}

Test(overflow_load_sched, discover_offset_int64_max_is_discovered_when_the_parent_completes) {
  load_plan *plan = parse_ok(plan_with("discover_offset", "9223372036854775807"));
  load_sched *s = load_sched_new(plan, LOAD_DISPATCH_FCFS, 0);
  cr_assert_not_null(s);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 1);
  load_sched_headers(s, 0, 200, 2);
  load_sched_body(s, 0, 100, 3);
  cr_assert_eq(load_sched_entry(s, 1)->state, LOAD_WAITING);
  load_sched_complete(s, 0, 4);
  cr_assert_eq(load_sched_entry(s, 1)->state, LOAD_READY);
  load_sched_del(s);
  load_plan_del(plan);
}
