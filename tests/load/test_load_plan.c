/* test_load_plan.c — the loader's plan reader (src/load/load_plan.c): what it accepts,
 * what it refuses (with the field named), and the cleaning it does on request headers.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_plan.h"

/* A two-host, three-resource plan: prefix + the third resource + suffix. */
static const char *const plan_prefix =
    "{\"format\": \"speedy-lab-plan/1\", \"source\": \"t.har\", \"page\": \"first page\","
    " \"seed\": 3,"
    " \"hosts\": [{\"name\": \"www.example.test\", \"port\": 80},"
    "             {\"name\": \"cdn.example.test\", \"port\": 8080}],"
    " \"resources\": ["
    "  {\"id\": 0, \"host\": 0, \"method\": \"GET\", \"path\": \"/\", \"type\": \"document\","
    "   \"parent\": -1, \"discover_offset\": 0, \"start_delay\": 0.0,"
    "   \"request_headers\": [[\"User-Agent\", \"Mozilla/5.0\"], [\"accept\", \"text/html\"],"
    "                         [\"connection\", \"keep-alive\"], [\"host\", \"x\"]],"
    "   \"status\": 200, \"response_headers\": [], \"body_size\": 1000, \"redirect_to\": -1,"
    "   \"after_cutoff\": false},"
    "  {\"id\": 1, \"host\": 1, \"method\": \"GET\", \"path\": \"/a.css?v=1\", \"type\": \"css\","
    "   \"parent\": 0, \"discover_offset\": 500, \"start_delay\": 12.5, \"request_headers\": [],"
    "   \"status\": 200, \"response_headers\": [], \"body_size\": 10, \"redirect_to\": -1,"
    "   \"after_cutoff\": true},"
    "  ";
static const char *const plan_suffix = " ]}";

static const char *const third_ok =
    "{\"id\": 2, \"host\": 1, \"method\": \"GET\", \"path\": \"/b.png\", \"type\": \"image\","
    " \"parent\": 1, \"discover_offset\": -1, \"start_delay\": 0, \"request_headers\": [],"
    " \"status\": 200, \"response_headers\": [], \"body_size\": 0, \"redirect_to\": -1,"
    " \"after_cutoff\": false}";

static int parse_with(const char *third, load_plan **plan, char *err, size_t err_len) {
  size_t cap = strlen(plan_prefix) + strlen(third) + strlen(plan_suffix) + 1;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  snprintf(text, cap, "%s%s%s", plan_prefix, third, plan_suffix);
  int rv = load_plan_parse(text, strlen(text), plan, err, err_len);
  free(text);
  return rv;
}

/* Parses with a third resource that must be refused; returns the error. */
static void expect_refused(const char *third, const char *needle) {
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(parse_with(third, &plan, err, sizeof(err)), -1, "accepted: %s", third);
  cr_assert_null(plan);
  cr_assert(strstr(err, needle) != NULL, "error '%s' does not mention '%s'", err, needle);
}

Test(load_plan, reads_every_field_of_a_valid_plan) {
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(parse_with(third_ok, &plan, err, sizeof(err)), 0, "%s", err);
  cr_assert_str_eq(plan->source, "t.har");
  cr_assert_eq(plan->seed, 3);
  cr_assert_eq(plan->n_hosts, 2);
  cr_assert_str_eq(plan->hosts[1].name, "cdn.example.test");
  cr_assert_eq(plan->hosts[1].port, 8080);
  cr_assert_eq(plan->n_resources, 3);
  const load_resource *css = &plan->resources[1];
  cr_assert_eq(css->host, 1);
  cr_assert_str_eq(css->path, "/a.css?v=1");
  cr_assert_eq(css->type, LOAD_TYPE_CSS);
  cr_assert_eq(css->parent, 0);
  cr_assert_eq(css->discover_offset, 500);
  cr_assert_float_eq(css->start_delay_ms, 12.5, 1e-9);
  cr_assert_eq(css->body_size, 10);
  cr_assert(css->after_cutoff);
  cr_assert_eq(plan->resources[2].discover_offset, -1);
  load_plan_del(plan);
}

Test(load_plan, lowercases_names_and_drops_hop_by_hop_and_host_headers) {
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(parse_with(third_ok, &plan, err, sizeof(err)), 0, "%s", err);
  const load_resource *doc = &plan->resources[0];
  cr_assert_eq(doc->n_request_headers, 2, "connection and host must be dropped");
  cr_assert_str_eq(doc->request_headers[0].name, "user-agent");
  cr_assert_str_eq(doc->request_headers[0].value, "Mozilla/5.0");
  cr_assert_str_eq(doc->request_headers[1].name, "accept");
  load_plan_del(plan);
}

Test(load_plan, refuses_another_format_version) {
  load_plan *plan = NULL;
  char err[200];
  const char *text = "{\"format\": \"speedy-lab-plan/2\", \"hosts\": [], \"resources\": []}";
  cr_assert_eq(load_plan_parse(text, strlen(text), &plan, err, sizeof(err)), -1);
  cr_assert(strstr(err, "speedy-lab-plan/1") != NULL, "%s", err);
}

Test(load_plan, reports_json_syntax_errors_with_line_and_column) {
  load_plan *plan = NULL;
  char err[200];
  const char *text = "{\"format\":\n \"speedy-lab-plan/1\",, }";
  cr_assert_eq(load_plan_parse(text, strlen(text), &plan, err, sizeof(err)), -1);
  cr_assert(strstr(err, "line 2") != NULL, "%s", err);
}

Test(load_plan, refuses_a_host_index_out_of_range) {
  expect_refused(
      "{\"id\": 2, \"host\": 2, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "resources[2].host");
}

Test(load_plan, refuses_an_id_that_is_not_its_index) {
  expect_refused(
      "{\"id\": 1, \"host\": 0, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "resources[2].id");
}

Test(load_plan, refuses_a_path_with_a_space_or_without_a_slash) {
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"/a b\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "resources[2].path");
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"x\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "resources[2].path");
}

Test(load_plan, refuses_a_header_value_with_a_line_break) {
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0,"
      " \"request_headers\": [[\"cookie\", \"a=1\\r\\nX-Evil: 1\"]], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "request_headers[0]");
}

Test(load_plan, refuses_an_unknown_type) {
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"video\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": 1, \"redirect_to\": -1}",
      "resources[2].type");
}

Test(load_plan, refuses_a_discovery_cycle) {
  /* 2's parent is 2's own redirect target chain: 2 → redirect to 1, 1's gate becomes 2 */
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"other\","
      " \"parent\": 1, \"discover_offset\": -1, \"request_headers\": [], \"status\": 302,"
      " \"body_size\": 0, \"redirect_to\": 1}",
      "cycle");
}

Test(load_plan, refuses_a_negative_body_size) {
  expect_refused(
      "{\"id\": 2, \"host\": 0, \"method\": \"GET\", \"path\": \"/x\", \"type\": \"image\","
      " \"parent\": 0, \"discover_offset\": 0, \"request_headers\": [], \"status\": 200,"
      " \"body_size\": -5, \"redirect_to\": -1}",
      "resources[2].body_size");
}

Test(load_plan, finds_hosts_case_insensitively_ignoring_a_port) {
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(parse_with(third_ok, &plan, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(load_plan_find_host(plan, "CDN.example.test:8080", 21), 1);
  cr_assert_eq(load_plan_find_host(plan, "www.example.test", 16), 0);
  cr_assert_eq(load_plan_find_host(plan, "other.test", 10), -1);
  load_plan_del(plan);
}

Test(load_plan, urgency_orders_document_css_script_font_image_other) {
  cr_assert_eq(load_type_urgency(LOAD_TYPE_DOCUMENT), 0);
  cr_assert_eq(load_type_urgency(LOAD_TYPE_CSS), 1);
  cr_assert_eq(load_type_urgency(LOAD_TYPE_SCRIPT), 1);
  cr_assert_eq(load_type_urgency(LOAD_TYPE_FONT), 2);
  cr_assert_eq(load_type_urgency(LOAD_TYPE_IMAGE), 4);
  cr_assert_eq(load_type_urgency(LOAD_TYPE_OTHER), 5);
}

Test(load_plan, read_names_a_missing_file) {
  load_plan *plan = NULL;
  char err[200];
  cr_assert_eq(load_plan_read("/nonexistent/plan.json", &plan, err, sizeof(err)), -1);
  cr_assert(strstr(err, "No such file") != NULL, "%s", err);
}
