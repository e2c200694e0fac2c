/* test_replay_plan.c — the page plan loader (src/replay/replay_plan.c): a valid plan and
 * what it keeps, every validation error with its message, host and resource lookup. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "replay.h"

/* A plan with one resource whose fields can be replaced: RESOURCE(fields) builds it. */
#define PLAN_HEAD                                                                                  \
  "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,"                                                  \
  "\"hosts\":[{\"name\":\"www.Example.test\",\"port\":80},{\"name\":\"cdn.example.test\","         \
  "\"port\":443}],\"resources\":["
#define GOOD_RESOURCE                                                                              \
  "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/\",\"type\":\"document\","                  \
  "\"parent\":-1,\"discover_offset\":0,\"start_delay\":0.0,\"request_headers\":[],"                \
  "\"status\":200,\"response_headers\":[[\"content-type\",\"text/html\"]],"                        \
  "\"body_size\":10,\"redirect_to\":-1,\"after_cutoff\":false}"

static replay_plan *parse_ok(const char *text) {
  char err[512] = "";
  replay_plan *plan = NULL;
  int rv = replay_plan_parse(&plan, text, strlen(text), "t.json", err, sizeof(err));
  cr_assert_eq(rv, 0, "expected the plan to load, got: %s", err);
  return plan;
}

/* Asserts that text is refused with a message containing expected. */
static void parse_fails(const char *text, const char *expected) {
  char err[512] = "";
  replay_plan *plan = NULL;
  int rv = replay_plan_parse(&plan, text, strlen(text), "t.json", err, sizeof(err));
  cr_assert_eq(rv, -1, "expected a refusal containing '%s'", expected);
  cr_assert_null(plan);
  cr_assert(strstr(err, expected) != NULL, "message '%s' lacks '%s'", err, expected);
  cr_assert(strncmp(err, "t.json: ", 8) == 0, "message '%s' does not name the file", err);
}

/* A one-resource plan with `field` (a JSON "key":value) replacing the default's. */
static void resource_fails(const char *key, const char *value, const char *expected) {
  char resource[1024], text[2048];
  const char *good = GOOD_RESOURCE;
  char pattern[64];
  snprintf(pattern, sizeof(pattern), "\"%s\":", key);
  const char *at = strstr(good, pattern);
  cr_assert_not_null(at, "test bug: no field %s", key);
  const char *end = at + strlen(pattern);
  int depth = 0;
  while (*end != '\0' && (depth > 0 || (*end != ',' && *end != '}'))) {
    if (*end == '[') depth++;
    if (*end == ']') depth--;
    end++;
  }
  snprintf(resource, sizeof(resource), "%.*s%s%s%s", (int)(at - good), good, pattern, value, end);
  snprintf(text, sizeof(text), "%s%s]}", PLAN_HEAD, resource);
  parse_fails(text, expected);
}

Test(replay_plan, valid_plan_keeps_hosts_and_resources) {
  replay_plan *plan = parse_ok(PLAN_HEAD GOOD_RESOURCE "]}");
  cr_assert_eq(replay_plan_seed(plan), 1);
  cr_assert_eq(replay_plan_host_count(plan), 2);
  cr_assert_str_eq(replay_plan_host(plan, 0)->name, "www.example.test"); /* lower-cased */
  cr_assert_eq(replay_plan_host(plan, 1)->port, 443);
  cr_assert_eq(replay_plan_resource_count(plan), 1);
  const replay_resource *r = replay_plan_resource(plan, 0);
  cr_assert_eq(r->status, 200);
  cr_assert_eq(r->body_size, 10);
  cr_assert_eq(r->redirect_to, -1);
  cr_assert_str_eq(http_headers_get(&r->response_headers, "content-type"), "text/html");
  replay_plan_del(plan);
}

Test(replay_plan, hop_by_hop_length_and_coding_headers_are_dropped) {
  replay_plan *plan = parse_ok(
      PLAN_HEAD "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/\",\"status\":200,"
                "\"response_headers\":[[\"connection\",\"close\"],[\"keep-alive\",\"t=5\"],"
                "[\"transfer-encoding\",\"chunked\"],[\"content-length\",\"99\"],"
                "[\"content-encoding\",\"gzip\"],[\":status\",\"200\"],[\"set-cookie\",\"a=1\"],"
                "[\"set-cookie\",\"b=2\"]],\"body_size\":5}]}");
  const replay_resource *r = replay_plan_resource(plan, 0);
  cr_assert_eq(r->response_headers.count, 2, "only the two set-cookie fields stay");
  cr_assert_str_eq(r->response_headers.items[1].value, "b=2");
  replay_plan_del(plan);
}

Test(replay_plan, other_format_version_is_refused_by_name) {
  parse_fails("{\"format\":\"speedy-lab-plan/2\",\"seed\":1,\"hosts\":[],\"resources\":[]}",
              "format is \"speedy-lab-plan/2\", this program reads \"speedy-lab-plan/1\"");
}

Test(replay_plan, missing_format_is_refused) { parse_fails("{\"seed\":1}", "missing \"format\""); }

Test(replay_plan, json_syntax_error_gives_line_and_column) {
  parse_fails("{\"format\":\n\"speedy-lab-plan/1\",,}", "line 2, column");
}

Test(replay_plan, duplicate_key_is_refused) {
  parse_fails("{\"format\":\"speedy-lab-plan/1\",\"format\":\"speedy-lab-plan/1\"}", "duplicate");
}

Test(replay_plan, seed_must_be_an_integer) {
  parse_fails("{\"format\":\"speedy-lab-plan/1\",\"seed\":\"1\",\"hosts\":[],\"resources\":[]}",
              "plan.seed: expected an integer from 0 to");
}

Test(replay_plan, hosts_must_be_a_non_empty_array) {
  parse_fails("{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":{},\"resources\":[]}",
              "hosts: expected an array, got an object");
  parse_fails("{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[],\"resources\":[]}",
              "hosts: expected 1 to");
}

Test(replay_plan, host_port_out_of_range_is_refused) {
  parse_fails(
      "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a\",\"port\":0}],"
      "\"resources\":[]}",
      "hosts[0].port: expected an integer from 1 to 65535, got 0");
}

Test(replay_plan, host_name_with_a_slash_is_refused) {
  parse_fails(
      "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a/b\",\"port\":80}],"
      "\"resources\":[]}",
      "hosts[0].name: 'a/b' is not a host name");
}

Test(replay_plan, body_size_as_a_string_is_refused_with_its_type) {
  resource_fails("body_size", "\"10\"",
                 "resources[0].body_size: expected an integer from 0 to "
                 "1099511627776, got a string");
}

Test(replay_plan, negative_body_size_is_refused) {
  resource_fails("body_size", "-1", "resources[0].body_size: expected an integer");
}

Test(replay_plan, fractional_status_is_refused) {
  resource_fails("status", "200.5",
                 "resources[0].status: expected an integer from 200 to 599, "
                 "got a fractional number");
}

Test(replay_plan, status_0_is_refused) {
  resource_fails("status", "0", "resources[0].status: expected an integer from 200 to 599, got 0");
}

Test(replay_plan, id_that_is_not_the_index_is_refused) {
  char text[2048];
  snprintf(text, sizeof(text), "%s%s,%s]}", PLAN_HEAD, GOOD_RESOURCE,
           "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/x\",\"status\":200,"
           "\"response_headers\":[],\"body_size\":0}");
  parse_fails(text, "resources[1].id: is 0, but ids are the resources' indexes (expected 1)");
}

Test(replay_plan, host_index_out_of_range_is_refused) {
  resource_fails("host", "2", "resources[0].host: expected an integer from 0 to 1, got 2");
}

Test(replay_plan, path_without_a_slash_is_refused) {
  resource_fails("path", "\"index.html\"", "resources[0].path: 'index.html' is not a path");
}

Test(replay_plan, path_with_a_space_is_refused) {
  resource_fails("path", "\"/a b\"", "is not a path");
}

Test(replay_plan, method_must_be_a_token) {
  resource_fails("method", "\"GE T\"", "resources[0].method: 'GE T' is not an HTTP method");
  resource_fails("method", "7", "resources[0].method: expected a string, got an integer");
}

Test(replay_plan, response_headers_must_be_pairs_of_strings) {
  resource_fails("response_headers", "[[\"a\"]]",
                 "resources[0].response_headers[0]: expected "
                 "[name, value]");
  resource_fails("response_headers", "[[\"a\",1]]", "expected [name, value]");
  resource_fails("response_headers", "{}", "response_headers: expected an array");
}

Test(replay_plan, upper_case_header_name_is_refused) {
  resource_fails("response_headers", "[[\"Content-Type\",\"x\"]]",
                 "is not a lower-case field name");
}

Test(replay_plan, header_value_with_newline_is_refused) {
  resource_fails("response_headers", "[[\"x\",\"a\\r\\nb: c\"]]", "free of CR, LF and NUL");
}

Test(replay_plan, body_on_a_304_is_refused) {
  char text[2048];
  snprintf(text, sizeof(text), "%s%s]}", PLAN_HEAD,
           "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/\",\"status\":304,"
           "\"response_headers\":[],\"body_size\":10}");
  parse_fails(text, "resources[0].body_size: a 304 answer has no body");
}

Test(replay_plan, redirect_to_on_a_200_is_refused) {
  char text[2048];
  snprintf(text, sizeof(text), "%s%s,%s]}", PLAN_HEAD, GOOD_RESOURCE,
           "{\"id\":1,\"host\":0,\"method\":\"GET\",\"path\":\"/x\",\"status\":200,"
           "\"response_headers\":[],\"body_size\":0,\"redirect_to\":0}");
  parse_fails(text, "resources[1].redirect_to: set to 0 but status 200 is not a redirect");
}

Test(replay_plan, redirect_to_out_of_range_is_refused) {
  resource_fails("redirect_to", "5", "resources[0].redirect_to: expected an integer from -1 to 0");
}

Test(replay_plan, loader_field_types_are_checked) {
  resource_fails("after_cutoff", "1", "resources[0].after_cutoff: expected a boolean");
  resource_fails("start_delay", "\"0\"", "resources[0].start_delay: expected a number");
  resource_fails("type", "3", "resources[0].type: expected a string");
}

Test(replay_plan, missing_required_field_is_named) {
  parse_fails(PLAN_HEAD "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/\",\"status\":200,"
                        "\"body_size\":1}]}",
              "resources[0]: missing \"response_headers\"");
}

Test(replay_plan, unreadable_file_is_named) {
  char err[512] = "";
  replay_plan *plan = NULL;
  cr_assert_eq(replay_plan_load(&plan, "/nonexistent/plan.json", err, sizeof(err)), -1);
  cr_assert(strstr(err, "/nonexistent/plan.json: ") == err, "got '%s'", err);
}

Test(replay_plan, find_host_ignores_case_port_and_trailing_dot) {
  replay_plan *plan = parse_ok(PLAN_HEAD GOOD_RESOURCE "]}");
  cr_assert_eq(replay_plan_find_host(plan, "www.example.test"), 0);
  cr_assert_eq(replay_plan_find_host(plan, "WWW.EXAMPLE.TEST:8080"), 0);
  cr_assert_eq(replay_plan_find_host(plan, "cdn.example.test.:443"), 1);
  cr_assert_eq(replay_plan_find_host(plan, "other.test"), -1);
  cr_assert_eq(replay_plan_find_host(plan, "www.example.test:x"), -1);
  replay_plan_del(plan);
}

Test(replay_plan, find_host_prefers_the_matching_port) {
  replay_plan *plan = parse_ok(
      "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a.test\",\"port\":80},"
      "{\"name\":\"a.test\",\"port\":8080},{\"name\":\"[::1]\",\"port\":443}],\"resources\":[]}");
  cr_assert_eq(replay_plan_find_host(plan, "a.test:8080"), 1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:9"), 0);
  cr_assert_eq(replay_plan_find_host(plan, "[::1]:443"), 2);
  cr_assert_eq(replay_plan_find_host(plan, "[::1]"), 2);
  replay_plan_del(plan);
}

/* A client names neither 80 nor 443 in Host: an authority without a port is for the host
 * on 80 or 443 of that name, not for one on another port listed first. */
Test(replay_plan, find_host_without_a_port_finds_the_default_port) {
  replay_plan *plan = parse_ok(
      "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"a.test\",\"port\":8080},"
      "{\"name\":\"a.test\",\"port\":80},{\"name\":\"a.test\",\"port\":443}],\"resources\":[]}");
  cr_assert_eq(replay_plan_find_host(plan, "a.test"), 1);
  cr_assert_eq(replay_plan_find_host(plan, "A.TEST."), 1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:80"), 1);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:443"), 2);
  cr_assert_eq(replay_plan_find_host(plan, "a.test:8080"), 0);
  replay_plan_del(plan);
}

/* http://x/a and https://x/b: "x" names both hosts; each path is found on its own. */
Test(replay_plan, find_for_looks_in_every_host_the_authority_reaches) {
  replay_plan *plan = parse_ok(
      "{\"format\":\"speedy-lab-plan/1\",\"seed\":1,\"hosts\":[{\"name\":\"x.test\",\"port\":80},"
      "{\"name\":\"x.test\",\"port\":443},{\"name\":\"x.test.\",\"port\":443},"
      "{\"name\":\"x.test\",\"port\":8080}],\"resources\":["
      "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/a\",\"status\":200,"
      "\"response_headers\":[],\"body_size\":1},"
      "{\"id\":1,\"host\":1,\"method\":\"GET\",\"path\":\"/b\",\"status\":200,"
      "\"response_headers\":[],\"body_size\":2},"
      "{\"id\":2,\"host\":2,\"method\":\"GET\",\"path\":\"/c\",\"status\":200,"
      "\"response_headers\":[],\"body_size\":3},"
      "{\"id\":3,\"host\":3,\"method\":\"GET\",\"path\":\"/d\",\"status\":200,"
      "\"response_headers\":[],\"body_size\":4}]}");
  cr_assert_eq(replay_plan_find_for(plan, "x.test", "GET", "/a")->id, 0);
  cr_assert_eq(replay_plan_find_for(plan, "x.test", "GET", "/b")->id, 1);
  cr_assert_eq(replay_plan_find_for(plan, "x.test.", "GET", "/c")->id, 2, "a trailing dot");
  cr_assert_null(replay_plan_find_for(plan, "x.test", "GET", "/d"), "8080 is another server");
  cr_assert_eq(replay_plan_find_for(plan, "x.test:8080", "GET", "/d")->id, 3);
  cr_assert_null(replay_plan_find_for(plan, "x.test:8080", "GET", "/a"));
  cr_assert_null(replay_plan_find_for(plan, "y.test", "GET", "/a"));
  replay_plan_del(plan);
}

Test(replay_plan, repeated_url_finds_the_first_resource) {
  replay_plan *plan =
      parse_ok(PLAN_HEAD "{\"id\":0,\"host\":0,\"method\":\"GET\",\"path\":\"/a\",\"status\":200,"
                         "\"response_headers\":[],\"body_size\":1},"
                         "{\"id\":1,\"host\":0,\"method\":\"GET\",\"path\":\"/a\",\"status\":200,"
                         "\"response_headers\":[],\"body_size\":2},"
                         "{\"id\":2,\"host\":1,\"method\":\"GET\",\"path\":\"/a\",\"status\":200,"
                         "\"response_headers\":[],\"body_size\":3}]}");
  cr_assert_eq(replay_plan_find(plan, 0, "GET", "/a")->id, 0);
  cr_assert_eq(replay_plan_find(plan, 1, "GET", "/a")->id, 2);
  replay_plan_del(plan);
}

Test(replay_plan, head_finds_the_get_resource_and_other_methods_do_not) {
  replay_plan *plan = parse_ok(PLAN_HEAD GOOD_RESOURCE "]}");
  cr_assert_not_null(replay_plan_find(plan, 0, "HEAD", "/"));
  cr_assert_null(replay_plan_find(plan, 0, "POST", "/"));
  cr_assert_null(replay_plan_find(plan, 0, "GET", "/?x"));
  cr_assert_null(replay_plan_find(plan, 1, "GET", "/"));
  replay_plan_del(plan);
}
