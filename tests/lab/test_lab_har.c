/* test_lab_har.c — HAR loading on synthetic files: errors name the file and the position or
 * field, and every odd case (status 0, POST without body, non-ASCII, repeated URLs, 304s,
 * redirects, pages) has a defined result. No corpus needed.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "har.h"
#include "lab_testutil.h"
#include "page.h"

/* One entry as JSON; extra is spliced into the entry object, headers into the response. */
#define ENTRY(started, method, url, status, req_headers, resp_headers, extra)                      \
  "{\"startedDateTime\": \"" started "\", \"time\": 100, \"request\": {\"method\": \"" method      \
  "\", \"url\": \"" url "\", \"httpVersion\": \"HTTP/1.1\", \"headers\": [" req_headers            \
  "], \"bodySize\": 0}, \"response\": {\"status\": " status ", \"statusText\": \"\", "             \
  "\"httpVersion\": \"HTTP/1.1\", \"headers\": [" resp_headers "], \"content\": {\"size\": 10, "   \
  "\"mimeType\": \"text/html\"}, \"redirectURL\": \"\", \"bodySize\": 10}, \"timings\": "          \
  "{\"send\": 0, \"wait\": 100, \"receive\": 0}, \"connection\": \"1\"" extra "}"
#define HAR(entries)                                                                               \
  "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"test\"}, \"entries\": [" entries "]" \
  "}"                                                                                              \
  "}"
#define ACCEPT_HTML "{\"name\": \"Accept\", \"value\": \"text/html,*/*\"}"

static lab_har *load_ok(const char *json) {
  char err[512];
  lab_har *har = lab_test_load_string("test.har", json, err, sizeof err);
  cr_assert_not_null(har, "expected the HAR to load, got: %s", err);
  return har;
}

static void load_fails(const char *json, const char *expected_fragment) {
  char err[512] = "";
  lab_har *har = lab_test_load_string("bad.har", json, err, sizeof err);
  cr_assert_null(har, "expected a load error containing \"%s\"", expected_fragment);
  cr_assert_not_null(strstr(err, expected_fragment), "error \"%s\" should contain \"%s\"", err,
                     expected_fragment);
  cr_assert_eq(strchr(err, '\n'), NULL, "the error is one line: \"%s\"", err);
}

Test(har_errors, syntax_error_names_file_line_and_column) {
  load_fails("{\"log\": {\n  \"entries\": [\n    {,}\n  ]}}", "bad.har:3:6: ");
}

Test(har_errors, truncated_file_is_a_syntax_error_at_its_end) {
  const char *full = HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/", "200", "", "", ""));
  char *cut = strndup(full, strlen(full) / 2);
  char err[512] = "";
  lab_har *har = NULL;
  cr_assert_neq(lab_har_load_buffer("cut.har", cut, strlen(cut), &har, err, sizeof err), 0);
  cr_assert(strncmp(err, "cut.har:1:", 10) == 0, "error names file and line: %s", err);
  cr_assert_not_null(strstr(err, "premature end of input"), "says why: %s", err);
  free(cut);
}

Test(har_errors, syntax_error_in_a_file_names_its_path) {
  char path[] = "/tmp/lab_test_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  const char *text = "{\"log\": {\"entries\": [}}\n";
  cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  char err[512], expected[64];
  lab_har *har = NULL;
  int rc = lab_har_load(path, &har, err, sizeof err);
  unlink(path);
  snprintf(expected, sizeof expected, "%s:1:", path);
  cr_assert_neq(rc, 0);
  cr_assert(strncmp(err, expected, strlen(expected)) == 0, "got: %s", err);
}

Test(har_errors, missing_file_names_its_path) {
  char err[512];
  lab_har *har = NULL;
  cr_assert_neq(lab_har_load("/nonexistent/x.har", &har, err, sizeof err), 0);
  cr_assert_str_eq(err, "/nonexistent/x.har: No such file or directory");
}

Test(har_errors, wrong_type_names_the_field) {
  load_fails("{\"log\": {\"entries\": [{\"startedDateTime\": \"2012-11-03T13:34:16Z\", "
             "\"request\": {\"method\": \"GET\", \"url\": 42}, \"response\": {\"status\": 200}}]}}",
             "bad.har: log.entries[0].request.url is a number, not a string");
}

Test(har_errors, status_as_string_is_refused) {
  load_fails("{\"log\": {\"entries\": [{\"startedDateTime\": \"2012-11-03T13:34:16Z\", "
             "\"request\": {\"method\": \"GET\", \"url\": \"http://a.test/\"}, "
             "\"response\": {\"status\": \"200\"}}]}}",
             "log.entries[0].response.status is a string, not a status code");
}

Test(har_errors, headers_not_an_array_is_refused) {
  load_fails("{\"log\": {\"entries\": [{\"startedDateTime\": \"2012-11-03T13:34:16Z\", "
             "\"request\": {\"method\": \"GET\", \"url\": \"http://a.test/\", \"headers\": {}}, "
             "\"response\": {\"status\": 200}}]}}",
             "log.entries[0].request.headers is an object, not an array");
}

Test(har_errors, entries_missing_is_refused) {
  load_fails("{\"log\": {\"version\": \"1.2\"}}", "bad.har: log.entries is missing");
}

Test(har_errors, bad_date_is_refused) {
  load_fails(HAR(ENTRY("yesterday", "GET", "http://a.test/", "200", "", "", "")),
             "log.entries[0].startedDateTime \"yesterday\" is not an ISO 8601 date");
}

Test(har_load, empty_entries_give_no_pages) {
  lab_har *har = load_ok(HAR(""));
  cr_assert_eq(har->n_entries, 0);
  lab_page_options options;
  lab_page_options_default(&options);
  lab_page_set set;
  cr_assert_eq(lab_pages_extract(har, &options, &set), 0);
  cr_assert_eq(set.n_pages, 0);
  lab_pages_free(&set);
  lab_har_free(har);
}

Test(har_load, url_is_parsed_into_scheme_host_port_path) {
  lab_har *har =
      load_ok(HAR(ENTRY("2012-11-03T13:34:16.250+01:00", "GET",
                        "https://User@Example.TEST:8443/a/b?q=1#frag", "200", "", "", "")));
  const lab_entry *e = &har->entries[0];
  cr_assert_str_eq(e->parsed.scheme, "https");
  cr_assert_str_eq(e->parsed.host, "example.test");
  cr_assert_eq(e->parsed.port, 8443);
  cr_assert_str_eq(e->parsed.path, "/a/b?q=1");
  cr_assert_eq(har->whole_second_starts, 0, "a fraction was recorded");
  lab_har_free(har);
}

Test(har_load, status_zero_is_left_out_of_the_replay) {
  lab_har *har =
      load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/", "0", "", "", "")));
  cr_assert(har->entries[0].flags & LAB_FLAG_STATUS_ZERO);
  cr_assert_eq(har->entries[0].replay, LAB_REPLAY_LEFT_OUT);
  lab_har_free(har);
}

Test(har_load, post_without_body_is_flagged_and_replayed_empty) {
  lab_har *har =
      load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "POST", "http://a.test/p", "200", "", "", "")));
  cr_assert(har->entries[0].flags & LAB_FLAG_POST_NO_BODY);
  cr_assert_eq(har->entries[0].replay, LAB_REPLAY_AS_RECORDED);
  lab_har_free(har);
}

Test(har_load, non_ascii_url_and_header_load_and_are_flagged) {
  lab_har *har = load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/caf\u00e9", "200",
                                   "{\"name\": \"X-Name\", \"value\": \"M\\u00fcller\"}", "", "")));
  const lab_entry *e = &har->entries[0];
  cr_assert(e->flags & LAB_FLAG_NON_ASCII);
  cr_assert_str_eq(e->parsed.path, "/caf\xc3\xa9");
  cr_assert_str_eq(e->request_headers[0].value, "M\xc3\xbcller");
  lab_har_free(har);
}

Test(har_load, invalid_utf8_is_a_positioned_error) {
  load_fails("{\"log\": {\"entries\": [\"\xff\"]}}", "bad.har:1:");
}

Test(har_load, repeated_url_is_flagged_on_the_second) {
  lab_har *har = load_ok(
      HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/x", "200", "", "", "") "," ENTRY(
          "2012-11-03T13:34:17Z", "GET", "http://a.test/x", "200", "", "", "")));
  cr_assert_eq(har->entries[0].flags & LAB_FLAG_REPEATED_URL, 0);
  cr_assert(har->entries[1].flags & LAB_FLAG_REPEATED_URL);
  cr_assert_eq(har->entries[1].replay, LAB_REPLAY_AS_RECORDED, "both are replayed");
  lab_har_free(har);
}

Test(har_load, not_modified_with_a_recorded_copy_becomes_200_of_its_size) {
  lab_har *har = load_ok(
      HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/x", "200", "",
                "{\"name\": \"Content-Length\", \"value\": \"1234\"}",
                "") "," ENTRY("2012-11-03T13:34:18Z", "GET", "http://a.test/x", "304",
                              "{\"name\": \"If-None-Match\", \"value\": \"\\\"e\\\"\"}", "", "")));
  const lab_entry *e = &har->entries[1];
  cr_assert(e->flags & LAB_FLAG_NOT_MODIFIED);
  cr_assert(e->flags & LAB_FLAG_CONDITIONAL);
  cr_assert_eq(e->replay, LAB_REPLAY_AS_200_CACHED);
  cr_assert_eq(e->replay_status, 200);
  cr_assert_eq(e->replay_size, 1234);
  lab_har_free(har);
}

Test(har_load, not_modified_without_a_copy_is_left_out) {
  lab_har *har =
      load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/x", "304", "", "", "")));
  cr_assert_eq(har->entries[0].replay, LAB_REPLAY_LEFT_OUT);
  lab_har_free(har);
}

Test(har_load, empty_redirect_url_uses_location_resolved_against_the_request) {
  lab_har *har =
      load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/dir/page", "302", "",
                        "{\"name\": \"Location\", \"value\": \"../other?x=1\"}", "")));
  const lab_entry *e = &har->entries[0];
  cr_assert(e->flags & LAB_FLAG_LOCATION_USED);
  cr_assert_str_eq(e->location, "http://a.test/other?x=1");
  lab_har_free(har);
}

Test(har_load, content_length_wins_over_recorded_size) {
  lab_har *har = load_ok(HAR(ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/", "200", "",
                                   "{\"name\": \"Content-Length\", \"value\": \"77\"}", "")));
  cr_assert_eq(har->entries[0].body_size, 77);
  cr_assert_eq(har->entries[0].size_source, LAB_SIZE_CONTENT_LENGTH);
  lab_har_free(har);
}

Test(har_load, pages_and_pageref_define_the_pages) {
  const char *json =
      "{\"log\": {\"pages\": [{\"id\": \"p1\", \"title\": \"one\", \"startedDateTime\": "
      "\"2012-11-03T13:34:16Z\"}, {\"id\": \"p2\", \"title\": \"two\"}], \"entries\": "
      "[" ENTRY("2012-11-03T13:34:16Z", "GET", "http://a.test/", "200", ACCEPT_HTML, "", ", \"pageref\": \"p1\"") "," ENTRY(
          "2012-11-03T13:34:16Z", "GET", "http://a.test/s.css", "200", "", "",
          ", \"pageref\": \"p1\"") "," ENTRY("2012-11-03T13:34:20Z", "GET", "http://a.test/two",
                                             "200", ACCEPT_HTML, "",
                                             ", \"pageref\": \"p2\"") "," ENTRY("2012-11-"
                                                                                "03T13:34:"
                                                                                "21Z",
                                                                                "GET",
                                                                                "http://"
                                                                                "a.test/"
                                                                                "lost",
                                                                                "200", "", "",
                                                                                ", "
                                                                                "\"pageref\""
                                                                                ": \"p9\"") "]}}";
  lab_har *har = load_ok(json);
  cr_assert_eq(har->n_pages, 2);
  lab_page_options options;
  lab_page_options_default(&options);
  lab_page_set set;
  cr_assert_eq(lab_pages_extract(har, &options, &set), 0);
  cr_assert_eq(set.n_pages, 2);
  cr_assert_eq(set.pages[0].n_entries, 2);
  cr_assert_str_eq(set.pages[0].pageref, "p1");
  cr_assert_eq(set.pages[0].document, 0);
  cr_assert_eq(set.pages[0].parent[1], 0, "the style sheet hangs off the document");
  cr_assert_eq(set.pages[1].n_entries, 1);
  cr_assert_str_eq(set.pages[1].document_url, "http://a.test/two");
  cr_assert_eq(set.n_unassigned, 1, "the entry naming no page is reported");
  lab_pages_free(&set);
  lab_har_free(har);
}
