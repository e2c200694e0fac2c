/* test_http_spdy.c — HTTP over SPDY (SPDY/3 3.2) and HTTP/2: requests from header
 * blocks, response and push headers, Content-Length against DATA, the body adapter;
 * HTTP/1.1 request filling; the upload sink. libspeedy hands a SPDY request over with
 * HTTP/2's names (:authority, no :version), so these feed those.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "http_spdy.h"
#include "http_testutil.h"
#include "http_upload.h"

static int feed(http_request *request, const char *name, const char *value) {
  speedy_header h = {name, strlen(name), value, strlen(value)};
  return http_spdy_request_header(request, &h);
}

static void feed_required(http_request *request) {
  feed(request, ":method", "GET");
  feed(request, ":path", "/index.html");
  feed(request, ":authority", "example.com:8443"); /* :host on SPDY's wire */
  feed(request, ":scheme", "https");
}

Test(spdy_request, complete_header_block_fills_the_request) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, "accept", "*/*");
  cr_assert_eq(http_spdy_request_finish(&request, 1), 0);
  cr_expect_str_eq(request.method, "GET");
  cr_expect_str_eq(request.path, "/index.html");
  cr_expect_str_eq(request.authority, "example.com:8443");
  cr_expect_str_eq(request.scheme, "https");
  cr_expect_str_eq(request.version, "HTTP/1.1", "what SPDY's :version says, for the log");
  cr_expect_str_eq(http_headers_get(&request.headers, "accept"), "*/*");
  cr_expect_eq(request.has_body, 0);
  http_request_free(&request);
}

/* An HTTP/2 request whose fields libspeedy has checked (fields_checked, as speedyd sets
 * it) fills the same request without scanning them again; one that is not marked is
 * still checked here (a CR in a value is a 400). */
Test(spdy_request, h2_fields_checked_by_the_engine_fill_the_same_request) {
  for (int checked = 0; checked <= 1; checked++) {
    http_request request;
    http_request_init(&request, HTTP_PROTO_H2, 0, 0);
    request.fields_checked = checked;
    feed_required(&request);
    feed(&request, "accept", "*/*");
    feed(&request, "cookie", "a=1");
    feed(&request, "cookie", "b=2");
    feed(&request, "content-length", "0");
    cr_assert_eq(http_spdy_request_finish(&request, 1), 0, "checked %d", checked);
    cr_expect_str_eq(request.method, "GET");
    cr_expect_str_eq(request.path, "/index.html");
    cr_expect_str_eq(request.authority, "example.com:8443");
    cr_expect_str_eq(request.scheme, "https");
    cr_expect_str_eq(http_headers_get(&request.headers, "accept"), "*/*");
    cr_expect_str_eq(http_headers_get(&request.headers, "cookie"), "a=1; b=2");
    cr_expect_eq(request.content_length, 0);
    http_request_free(&request);
  }
  http_request request;
  http_request_init(&request, HTTP_PROTO_H2, 0, 0);
  feed_required(&request);
  cr_assert_eq(feed(&request, "x-bad", "a\rb"), HTTP_ERR_BAD_REQUEST, "not marked: checked");
  http_request_free(&request);
}

Test(spdy_request, each_missing_required_header_is_a_400) {
  static const char *const names[] = {":method", ":path", ":authority", ":scheme"};
  static const char *const values[] = {"GET", "/", "example.com", "http"};
  for (size_t skip = 0; skip < 4; skip++) {
    http_request request;
    http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
    for (size_t i = 0; i < 4; i++)
      if (i != skip) feed(&request, names[i], values[i]);
    int rv = http_spdy_request_finish(&request, 1);
    cr_expect_eq(rv, HTTP_ERR_BAD_REQUEST, "without %s", names[skip]);
    cr_expect_eq(http_err_status(rv), 400);
    http_request_free(&request);
  }
}

Test(spdy_request, connection_specific_headers_are_ignored) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  cr_expect_eq(feed(&request, "connection", "close"), 0);
  cr_expect_eq(feed(&request, "host", "evil.example"), 0);
  cr_expect_eq(feed(&request, "keep-alive", "300"), 0);
  cr_expect_eq(feed(&request, "proxy-connection", "keep-alive"), 0);
  cr_expect_eq(feed(&request, "transfer-encoding", "chunked"), 0);
  cr_assert_eq(http_spdy_request_finish(&request, 1), 0);
  cr_expect_eq(request.headers.count, 0);
  cr_expect_str_eq(request.authority, "example.com:8443", ":host (:authority) is authoritative");
  http_request_free(&request);
}

Test(spdy_request, several_cookie_values_are_joined_with_semicolons) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, "cookie", "a=1");
  feed(&request, "cookie", "b=2");
  feed(&request, "cookie", "c=3");
  cr_assert_eq(http_spdy_request_finish(&request, 1), 0);
  cr_expect_str_eq(http_headers_get(&request.headers, "cookie"), "a=1; b=2; c=3");
  cr_expect_eq(request.headers.count, 1);
  http_request_free(&request);
}

Test(spdy_request, unknown_or_repeated_pseudo_header_is_a_400) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, ":method", "POST");
  cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, ":version", "HTTP/1.1"); /* libspeedy keeps SPDY's to itself */
  cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

Test(spdy_request, spdy2_absolute_url_gives_scheme_host_and_path) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY2, 0, 0);
  feed(&request, ":method", "GET");
  feed(&request, ":path", "http://example.com:8080/a/b?c=d");
  cr_assert_eq(http_spdy_request_finish(&request, 0), 0);
  cr_expect_str_eq(request.path, "/a/b?c=d");
  cr_expect_str_eq(request.authority, "example.com:8080");
  cr_expect_str_eq(request.scheme, "http");
  cr_expect_eq(request.has_body, 1);
  http_request_free(&request);
}

Test(spdy_request, oversized_headers_are_a_431) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 100, 0);
  feed_required(&request);
  char big[200];
  memset(big, 'v', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  feed(&request, "x-big", big);
  int rv = http_spdy_request_finish(&request, 1);
  cr_expect_eq(rv, HTTP_ERR_HEADERS_TOO_LARGE);
  cr_expect_eq(http_err_status(rv), 431);
  http_request_free(&request);
}

Test(spdy_request, content_length_must_match_the_data_received) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, "content-length", "10");
  cr_assert_eq(http_spdy_request_finish(&request, 0), 0);
  cr_expect_eq(http_request_check_body(&request, 4, 0), 0);
  cr_expect_eq(http_request_check_body(&request, 11, 0), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_request_check_body(&request, 9, 1), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_request_check_body(&request, 10, 1), 0);
  http_request_free(&request);
}

Test(spdy_request, bad_content_length_is_a_400) {
  static const char *const bad[] = {"abc", "-1", "1 2", "", "99999999999999999999"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    http_request request;
    http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
    feed_required(&request);
    feed(&request, "content-length", bad[i]);
    cr_expect_eq(http_spdy_request_finish(&request, 0), HTTP_ERR_BAD_REQUEST, "'%s'", bad[i]);
    http_request_free(&request);
  }
}

Test(spdy_response, status_is_three_digits_and_connection_headers_are_dropped) {
  http_response response;
  http_response_init(&response);
  http_headers_add_str(&response.headers, "content-type", "text/plain");
  http_headers_add_str(&response.headers, "connection", "keep-alive");
  http_headers_add_str(&response.headers, "transfer-encoding", "chunked");
  http_headers_add_str(&response.headers, "keep-alive", "timeout=5");
  http_headers_add_str(&response.headers, "set-cookie", "a=1");
  http_headers_add_str(&response.headers, "set-cookie", "b=2");
  http_spdy_headers out;
  cr_assert_eq(http_spdy_response_headers(&response, HTTP_PROTO_SPDY3, &out), 0);
  cr_assert_eq(out.count, 4, "libspeedy adds SPDY's :version");
  cr_expect_str_eq(out.list[0].name, ":status");
  cr_expect_eq(out.list[0].value_len, 3, "libspeedy adds SPDY's reason phrase");
  cr_expect_eq(memcmp(out.list[0].value, "200", 3), 0);
  cr_expect_str_eq(out.list[1].name, "content-type");
  cr_expect_str_eq(out.list[2].name, "set-cookie", "each Set-Cookie value stays separate");
  cr_expect_str_eq(out.list[3].name, "set-cookie");
  http_spdy_headers_free(&out);
  http_response_free(&response);
}

/* Three digits for every code HTTP can carry; a code outside them (replayed HARs carry
 * what browsers recorded) goes to SPDY as "NNNN Reason", and HTTP/2 cannot say it. */
Test(spdy_response, status_outside_three_digits_reaches_spdy_only) {
  const struct {
    int status;
    const char *spdy; /* NULL: refused for HTTP/2 as well as given as it is */
  } cases[] = {{200, "200"},     {404, "404"},           {100, "100"},      {999, "999"},
               {0, "0 Unknown"}, {1000, "1000 Unknown"}, {-5, "-5 Unknown"}};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    http_response response;
    http_response_init(&response);
    response.status = cases[i].status;
    http_spdy_headers out;
    cr_assert_eq(http_spdy_response_headers(&response, HTTP_PROTO_SPDY3, &out), 0);
    cr_expect_eq(out.list[0].value_len, strlen(cases[i].spdy), "status %d", cases[i].status);
    cr_expect_eq(memcmp(out.list[0].value, cases[i].spdy, strlen(cases[i].spdy)), 0,
                 "status %d: '%s'", cases[i].status, out.list[0].value);
    http_spdy_headers_free(&out);
    int three_digits = cases[i].status >= 100 && cases[i].status <= 999;
    cr_expect_eq(http_spdy_response_headers(&response, HTTP_PROTO_H2, &out),
                 three_digits ? 0 : HTTP_ERR_INVALID_ARGUMENT, "status %d over HTTP/2",
                 cases[i].status);
    if (three_digits) http_spdy_headers_free(&out);
    http_response_free(&response);
  }
}

Test(spdy_response, values_lose_their_surrounding_spaces) {
  http_response response;
  http_response_init(&response);
  http_headers_add_str(&response.headers, "set-cookie", "a=1; expires=Thu, 09-Jan-2014 GMT  ");
  http_headers_add_str(&response.headers, "x-tab", "\t v \t");
  for (int h2 = 0; h2 < 2; h2++) {
    http_spdy_headers out;
    cr_assert_eq(http_spdy_response_headers(&response, h2 ? HTTP_PROTO_H2 : HTTP_PROTO_SPDY3, &out),
                 0);
    cr_assert_eq(out.count, 3);
    cr_expect_eq(out.list[1].value_len, strlen("a=1; expires=Thu, 09-Jan-2014 GMT"));
    cr_expect_eq(out.list[2].value_len, 1);
    cr_expect_eq(out.list[2].value[0], 'v');
    http_spdy_headers_free(&out);
  }
  http_response_free(&response);
}

Test(spdy_response, more_fields_than_the_inline_list_holds_are_all_listed) {
  http_response response;
  http_response_init(&response);
  char name[16];
  for (int i = 0; i < 3 * HTTP_SPDY_INLINE_HEADERS; i++) {
    snprintf(name, sizeof name, "x-h%d", i);
    cr_assert_eq(http_headers_add_str(&response.headers, name, "v"), 0);
  }
  http_spdy_headers out;
  cr_assert_eq(http_spdy_response_headers(&response, HTTP_PROTO_SPDY3, &out), 0);
  cr_assert_eq(out.count, 1 + 3 * HTTP_SPDY_INLINE_HEADERS);
  cr_expect_str_eq(out.list[out.count - 1].name, "x-h47");
  http_spdy_headers_free(&out);
  http_response_free(&response);
}

Test(spdy_response, push_request_headers_name_the_resource) {
  http_spdy_headers out;
  cr_assert_eq(
      http_spdy_push_headers(HTTP_PROTO_SPDY3, "https", "example.com", "/a.css", "gzip", &out), 0);
  cr_assert_eq(out.count, 3);
  cr_expect_str_eq(out.list[0].name, ":scheme");
  cr_expect_str_eq(out.list[2].value, "/a.css");
  http_spdy_headers_free(&out);
}

/* ---- HTTP/2 (RFC 9113 8.3): the same functions with HTTP/2's names ---- */

static void feed_h2_required(http_request *request) {
  feed(request, ":method", "GET");
  feed(request, ":scheme", "https");
  feed(request, ":authority", "example.com:8443");
  feed(request, ":path", "/index.html");
}

Test(h2_request, authority_is_the_authority_and_version_is_http_2) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_H2, 0, 0);
  feed_h2_required(&request);
  feed(&request, "host", "other.example");
  feed(&request, "accept", "*/*");
  cr_assert_eq(http_spdy_request_finish(&request, 0), 0);
  cr_expect_str_eq(request.authority, "example.com:8443", ":authority wins over Host");
  cr_expect_str_eq(request.path, "/index.html");
  cr_expect_str_eq(request.scheme, "https");
  cr_expect_str_eq(request.version, "HTTP/2.0");
  cr_expect_null(http_headers_get(&request.headers, "host"));
  cr_expect_eq(request.has_body, 1);
  http_request_free(&request);
}

Test(h2_request, host_stands_for_a_missing_authority) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_H2, 0, 0);
  feed(&request, ":method", "GET");
  feed(&request, ":scheme", "http");
  feed(&request, ":path", "/");
  feed(&request, "host", "example.org");
  cr_assert_eq(http_spdy_request_finish(&request, 1), 0);
  cr_expect_str_eq(request.authority, "example.org");
  http_request_free(&request);
}

Test(h2_request, no_authority_at_all_is_still_a_request) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_H2, 0, 0);
  feed(&request, ":method", "GET");
  feed(&request, ":scheme", "http");
  feed(&request, ":path", "/");
  cr_expect_eq(http_spdy_request_finish(&request, 1), 0);
  cr_expect_null(request.authority);
  http_request_free(&request);
}

Test(h2_request, each_missing_required_pseudo_header_is_a_400) {
  static const char *const names[] = {":method", ":scheme", ":path"};
  static const char *const values[] = {"GET", "http", "/"};
  for (size_t skip = 0; skip < 3; skip++) {
    http_request request;
    http_request_init(&request, HTTP_PROTO_H2, 0, 0);
    feed(&request, ":authority", "example.com");
    for (size_t i = 0; i < 3; i++)
      if (i != skip) feed(&request, names[i], values[i]);
    cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST, "without %s",
                 names[skip]);
    http_request_free(&request);
  }
}

Test(h2_request, spdy_pseudo_headers_are_unknown_ones) {
  static const char *const spdy_only[] = {":host", ":version"};
  for (size_t i = 0; i < 2; i++) {
    http_request request;
    http_request_init(&request, HTTP_PROTO_H2, 0, 0);
    feed_h2_required(&request);
    feed(&request, spdy_only[i], "x");
    cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST, "%s", spdy_only[i]);
    http_request_free(&request);
  }
  /* And the other way round: :authority means nothing to SPDY. */
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  feed_required(&request);
  feed(&request, ":authority", "example.com");
  cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

Test(h2_request, absolute_path_is_not_taken_apart) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_H2, 0, 0);
  feed(&request, ":method", "GET");
  feed(&request, ":scheme", "http");
  feed(&request, ":authority", "a.example");
  feed(&request, ":path", "http://b.example/x");
  cr_expect_eq(http_spdy_request_finish(&request, 1), HTTP_ERR_BAD_REQUEST);
  cr_expect_str_eq(request.authority, "a.example");
  http_request_free(&request);
}

Test(h2_response, status_is_three_digits_without_version_or_reason) {
  http_response response;
  http_response_init(&response);
  response.status = 404;
  http_headers_add_str(&response.headers, "content-type", "text/html");
  http_headers_add_str(&response.headers, "connection", "close");
  http_headers_add_str(&response.headers, "upgrade", "h2c");
  http_headers_add_str(&response.headers, "te", "trailers");
  http_spdy_headers out;
  cr_assert_eq(http_spdy_response_headers(&response, HTTP_PROTO_H2, &out), 0);
  cr_assert_eq(out.count, 2);
  cr_expect_str_eq(out.list[0].name, ":status");
  cr_expect_eq(out.list[0].value_len, 3);
  cr_expect_eq(memcmp(out.list[0].value, "404", 3), 0);
  cr_expect_str_eq(out.list[1].name, "content-type");
  http_spdy_headers_free(&out);
  http_response_free(&response);
}

Test(h2_response, informational_status_and_impossible_ones) {
  http_response response;
  http_response_init(&response);
  response.status = 103;
  http_headers_add_str(&response.headers, "link", "</a.css>; rel=preload; as=style");
  http_spdy_headers out;
  cr_assert_eq(http_spdy_response_headers(&response, HTTP_PROTO_H2, &out), 0);
  cr_expect_eq(memcmp(out.list[0].value, "103", 3), 0);
  cr_expect_str_eq(out.list[1].name, "link");
  http_spdy_headers_free(&out);
  response.status = 1000;
  cr_expect_eq(http_spdy_response_headers(&response, HTTP_PROTO_H2, &out),
               HTTP_ERR_INVALID_ARGUMENT);
  response.status = 99;
  cr_expect_eq(http_spdy_response_headers(&response, HTTP_PROTO_H2, &out),
               HTTP_ERR_INVALID_ARGUMENT);
  http_response_free(&response);
}

Test(h2_response, push_request_is_a_get_with_authority) {
  http_spdy_headers out;
  cr_assert_eq(http_spdy_push_headers(HTTP_PROTO_H2, "https", "example.com", "/a.css", NULL, &out),
               0);
  cr_assert_eq(out.count, 4);
  cr_expect_str_eq(out.list[0].name, ":method");
  cr_expect_str_eq(out.list[0].value, "GET");
  cr_expect_str_eq(out.list[2].name, ":authority");
  cr_expect_str_eq(out.list[2].value, "example.com");
  cr_expect_str_eq(out.list[3].value, "/a.css");
  http_spdy_headers_free(&out);
  /* The answer pushed varies on Accept-Encoding: the promise carries the page's. */
  cr_assert_eq(
      http_spdy_push_headers(HTTP_PROTO_H2, "https", "example.com", "/a.css", "gzip, br", &out), 0);
  cr_assert_eq(out.count, 5);
  cr_expect_str_eq(out.list[4].name, "accept-encoding");
  cr_expect_str_eq(out.list[4].value, "gzip, br");
  http_spdy_headers_free(&out);
}

Test(spdy_response, body_adapter_maps_eof_not_ready_and_errors) {
  http_body *body;
  cr_assert_eq(http_body_new_memory(&body, "hello", 5), 0);
  uint8_t buf[8];
  uint32_t flags = 0;
  cr_expect_eq(http_spdy_body_read(NULL, 1, buf, 3, &flags, body, NULL), 3);
  cr_expect_eq(flags & SPEEDY_DATA_FLAG_EOF, 0);
  cr_expect_eq(http_spdy_body_read(NULL, 1, buf, 8, &flags, body, NULL), 2);
  cr_expect_eq(flags & SPEEDY_DATA_FLAG_EOF, SPEEDY_DATA_FLAG_EOF);
  http_body_del(body);
}

static int64_t never_ready(void *context, uint8_t *buf, size_t len, int *eof);

/* A body in memory shows its unread bytes for a zero-copy writer; advancing moves them
 * on; a file or callback body has none to show. */
Test(spdy_response, a_memory_body_shows_its_unread_bytes) {
  http_body *body;
  cr_assert_eq(http_body_new_memory(&body, "hello", 5), 0);
  const uint8_t *span;
  size_t left;
  cr_assert_eq(http_body_memory_span(body, &span, &left), 0);
  cr_expect_eq(left, 5);
  cr_expect_eq(memcmp(span, "hello", 5), 0);
  http_body_advance(body, 3);
  cr_assert_eq(http_body_memory_span(body, &span, &left), 0);
  cr_expect_eq(left, 2);
  cr_expect_eq(memcmp(span, "lo", 2), 0);
  http_body_advance(body, 9);
  cr_assert_eq(http_body_memory_span(body, &span, &left), 0);
  cr_expect_eq(left, 0);
  http_body_del(body);
  cr_assert_eq(http_body_new_callback(&body, never_ready, NULL, NULL, -1), 0);
  cr_expect_eq(http_body_memory_span(body, &span, &left), HTTP_ERR_INVALID_ARGUMENT);
  http_body_del(body);
}

/* A borrowed body its owner lends shows its unread bytes as writable, with the room
 * before them: the lent room, then also what was read; a body not lent shows none. */
Test(spdy_response, a_lent_body_shows_its_bytes_and_the_room_before_them) {
  static uint8_t memory[16 + 5] = "................hello";
  http_body *body;
  cr_assert_eq(http_body_new_borrowed(&body, memory + 16, 5, NULL, NULL), 0);
  uint8_t *span;
  size_t left, room;
  cr_expect_eq(http_body_lent_span(body, &span, &left, &room), HTTP_ERR_INVALID_ARGUMENT);
  cr_assert_eq(http_body_lend(body, 16), 0);
  cr_assert_eq(http_body_lent_span(body, &span, &left, &room), 0);
  cr_expect_eq(span, memory + 16);
  cr_expect_eq(left, 5);
  cr_expect_eq(room, 16);
  http_body_advance(body, 3);
  cr_assert_eq(http_body_lent_span(body, &span, &left, &room), 0);
  cr_expect_eq(span, memory + 19);
  cr_expect_eq(left, 2);
  cr_expect_eq(room, 19);
  http_body_del(body);
  cr_assert_eq(http_body_new_callback(&body, never_ready, NULL, NULL, -1), 0);
  cr_expect_eq(http_body_lend(body, 16), HTTP_ERR_INVALID_ARGUMENT);
  cr_expect_eq(http_body_lent_span(body, &span, &left, &room), HTTP_ERR_INVALID_ARGUMENT);
  http_body_del(body);
}

static int64_t never_ready(void *context, uint8_t *buf, size_t len, int *eof) {
  (void)context, (void)buf, (void)len, (void)eof;
  return HTTP_ERR_NOT_READY;
}

Test(spdy_response, body_not_ready_defers_the_stream) {
  http_body *body;
  cr_assert_eq(http_body_new_callback(&body, never_ready, NULL, NULL, -1), 0);
  uint8_t buf[8];
  uint32_t flags = 0;
  cr_expect_eq(http_spdy_body_read(NULL, 1, buf, 8, &flags, body, NULL), SPEEDY_ERR_DEFERRED);
  http_body_del(body);
}

Test(http1_request, host_sets_the_authority_and_two_hosts_are_a_400) {
  http_request request;
  test_request(&request, "GET", "/", "Host", "example.com", NULL);
  cr_expect_eq(http_request_finish(&request), 0);
  cr_expect_str_eq(request.authority, "example.com");
  cr_expect_eq(http_request_add_header(&request, "Host", 4, "other", 5), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_request_finish(&request), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

Test(http1_request, http11_without_host_is_a_400) {
  http_request request;
  test_request(&request, "GET", "/", NULL);
  cr_expect_eq(http_request_finish(&request), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

Test(http1_response, head_is_formatted_with_every_set_cookie_on_its_own_line) {
  http_response response;
  http_response_init(&response);
  http_response_reset(&response, 404);
  http_headers_add_str(&response.headers, "set-cookie", "a=1");
  http_headers_add_str(&response.headers, "set-cookie", "b=2");
  char *head;
  size_t len;
  cr_assert_eq(
      http_response_format_http1(&response, "HTTP/1.1", "connection: close\r\n", &head, &len), 0);
  cr_expect_str_eq(head, "HTTP/1.1 404 Not Found\r\nset-cookie: a=1\r\nset-cookie: b=2\r\n"
                         "connection: close\r\n\r\n");
  cr_expect_eq(len, strlen(head));
  free(head);
  http_response_free(&response);
}

/* ---- uploads ----------------------------------------------------------------------- */

static void upload_request(http_request *request, const char *content_length) {
  http_request_init(request, HTTP_PROTO_SPDY3, 0, 0);
  feed(request, ":method", "POST");
  feed(request, ":path", "/upload?x=1");
  feed(request, ":authority", "h");
  feed(request, ":scheme", "http");
  if (content_length != NULL) feed(request, "content-length", content_length);
  feed(request, "content-type", "text/plain");
  cr_assert_eq(http_spdy_request_finish(request, 0), 0);
}

Test(upload, echo_returns_the_body) {
  http_upload_options options = {.path = "/upload", .mode = HTTP_UPLOAD_ECHO};
  http_request request;
  upload_request(&request, "11");
  cr_assert(http_upload_matches(&options, &request));
  cr_assert_eq(http_upload_check_method(&request), 0);
  http_upload *upload;
  cr_assert_eq(http_upload_begin(&upload, &options, &request), 0);
  cr_assert_eq(http_upload_feed(upload, (const uint8_t *)"hello ", 6), 0);
  cr_assert_eq(http_upload_feed(upload, (const uint8_t *)"world", 5), 0);
  http_response response;
  http_response_init(&response);
  cr_assert_eq(http_upload_finish(upload, &response), 0);
  cr_expect_eq(response.status, 200);
  cr_expect_str_eq(http_headers_get(&response.headers, "content-type"), "text/plain");
  cr_expect_str_eq(http_headers_get(&response.headers, "content-length"), "11");
  uint8_t buf[32];
  cr_expect_eq(test_read_body(&response, buf, sizeof(buf)), 11);
  cr_expect_eq(memcmp(buf, "hello world", 11), 0);
  http_response_free(&response);
  http_upload_del(upload);
  http_request_free(&request);
}

Test(upload, discard_counts_the_bytes) {
  http_upload_options options = {.path = "/upload", .mode = HTTP_UPLOAD_DISCARD};
  http_request request;
  upload_request(&request, NULL);
  http_upload *upload;
  cr_assert_eq(http_upload_begin(&upload, &options, &request), 0);
  uint8_t chunk[1000] = {0};
  for (int i = 0; i < 5; i++) cr_assert_eq(http_upload_feed(upload, chunk, sizeof(chunk)), 0);
  http_response response;
  http_response_init(&response);
  cr_assert_eq(http_upload_finish(upload, &response), 0);
  char buf[64];
  int64_t n = test_read_body(&response, (uint8_t *)buf, sizeof(buf) - 1);
  buf[n] = '\0';
  cr_expect_str_eq(buf, "{\"received\": 5000}\n");
  http_response_free(&response);
  http_upload_del(upload);
  http_request_free(&request);
}

Test(upload, body_shorter_or_longer_than_content_length_is_a_400) {
  http_upload_options options = {.path = "/upload", .mode = HTTP_UPLOAD_DISCARD};
  http_request request;
  upload_request(&request, "5");
  http_upload *upload;
  cr_assert_eq(http_upload_begin(&upload, &options, &request), 0);
  cr_expect_eq(http_upload_feed(upload, (const uint8_t *)"abc", 3), 0);
  http_response response;
  http_response_init(&response);
  cr_expect_eq(http_upload_finish(upload, &response), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_upload_feed(upload, (const uint8_t *)"def", 3), HTTP_ERR_BAD_REQUEST);
  http_response_free(&response);
  http_upload_del(upload);
  http_request_free(&request);
}

Test(upload, body_above_the_limit_is_a_413) {
  http_upload_options options = {.path = "/upload", .mode = HTTP_UPLOAD_ECHO, .max_bytes = 4};
  http_request request;
  upload_request(&request, "10");
  http_upload *upload = NULL;
  int rv = http_upload_begin(&upload, &options, &request);
  cr_expect_eq(rv, HTTP_ERR_TOO_LARGE, "declared length above the limit");
  cr_expect_eq(http_err_status(rv), 413);
  http_request_free(&request);
  upload_request(&request, NULL);
  cr_assert_eq(http_upload_begin(&upload, &options, &request), 0);
  cr_expect_eq(http_upload_feed(upload, (const uint8_t *)"abcde", 5), HTTP_ERR_TOO_LARGE);
  http_upload_del(upload);
  http_request_free(&request);
}

Test(upload, other_paths_and_methods_do_not_match) {
  http_upload_options options = {.path = "/upload"};
  http_request request;
  test_request(&request, "GET", "/upload", NULL);
  cr_expect(http_upload_matches(&options, &request));
  cr_expect_eq(http_err_status(http_upload_check_method(&request)), 405);
  http_request_free(&request);
  test_request(&request, "POST", "/uploads", NULL);
  cr_expect_not(http_upload_matches(&options, &request));
  http_request_free(&request);
}
