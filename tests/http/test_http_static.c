/* test_http_static.c — static file answers: types, index and redirects, validators and
 * 304, HEAD, ranges, errors, and a file that shrinks while it is sent.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "http_date.h"
#include "http_err.h"
#include "http_mime.h"
#include "http_range.h"
#include "http_testutil.h"

static temp_root T;
static http_static_options options;

static void setup(void) {
  temp_root_make(&T, HTTP_SYMLINKS_NONE);
  options = (http_static_options){.docroot = &T.docroot};
  temp_root_write_str(&T, "index.html", "<h1>home</h1>");
  temp_root_write_str(&T, "digits.txt", "0123456789");
  temp_root_set_mtime(&T, "digits.txt", 784111777); /* Sun, 06 Nov 1994 08:49:37 GMT */
}
static void teardown(void) { temp_root_remove(&T); }

TestSuite(static_files, .init = setup, .fini = teardown, .timeout = 20);

static const char *header(http_response *response, const char *name) {
  return http_headers_get(&response->headers, name);
}

Test(static_files, content_type_follows_the_extension_table) {
  static const char *const table[][2] = {{"a.html", "text/html; charset=utf-8"},
                                         {"a.css", "text/css; charset=utf-8"},
                                         {"a.js", "text/javascript; charset=utf-8"},
                                         {"a.json", "application/json"},
                                         {"a.png", "image/png"},
                                         {"a.jpg", "image/jpeg"},
                                         {"a.gif", "image/gif"},
                                         {"a.svg", "image/svg+xml"},
                                         {"a.ico", "image/x-icon"},
                                         {"a.woff", "font/woff"},
                                         {"a.woff2", "font/woff2"},
                                         {"a.txt", "text/plain; charset=utf-8"},
                                         {"a.xml", "application/xml"},
                                         {"a.pdf", "application/pdf"},
                                         {"a.wasm", "application/wasm"},
                                         {"a.mp4", "video/mp4"},
                                         {"a.webp", "image/webp"},
                                         {"a.HTML", "text/html; charset=utf-8"},
                                         {"a.unknown", "application/octet-stream"},
                                         {"noextension", "application/octet-stream"},
                                         {"dir.d/file", "application/octet-stream"}};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
    cr_expect_str_eq(http_mime_type(table[i][0]), table[i][1], "type of %s", table[i][0]);
}

Test(static_files, served_file_carries_type_length_and_validators) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", NULL);
  cr_assert_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-type"), "text/plain; charset=utf-8");
  cr_expect_str_eq(header(&response, "content-length"), "10");
  cr_expect_str_eq(header(&response, "last-modified"), "Sun, 06 Nov 1994 08:49:37 GMT");
  cr_expect_str_eq(header(&response, "accept-ranges"), "bytes");
  const char *etag = header(&response, "etag");
  cr_assert_not_null(etag);
  cr_expect_eq(etag[0], '"');
  cr_expect_eq(etag[strlen(etag) - 1], '"');
  cr_expect_eq(strncmp(etag, "\"a-", 3), 0, "ETag starts with the size in hex: %s", etag);
  uint8_t body[32];
  cr_expect_eq(test_read_body(&response, body, sizeof(body)), 10);
  cr_expect_eq(memcmp(body, "0123456789", 10), 0);
  http_response_free(&response);
}

Test(static_files, etag_changes_when_the_file_changes) {
  http_response first, second;
  test_serve(&options, &first, "GET", "/digits.txt", NULL);
  temp_root_write_str(&T, "digits.txt", "01234567890");
  test_serve(&options, &second, "GET", "/digits.txt", NULL);
  cr_expect_str_neq(header(&first, "etag"), header(&second, "etag"));
  http_response_free(&first);
  http_response_free(&second);
}

Test(static_files, directory_is_served_by_its_index_html) {
  http_response response;
  test_serve(&options, &response, "GET", "/", NULL);
  cr_assert_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-type"), "text/html; charset=utf-8");
  uint8_t body[64];
  cr_expect_eq(test_read_body(&response, body, sizeof(body)), 13);
  http_response_free(&response);
}

Test(static_files, directory_without_trailing_slash_redirects_301) {
  temp_root_mkdir(&T, "docs");
  temp_root_write_str(&T, "docs/index.html", "docs");
  http_response response;
  test_serve(&options, &response, "GET", "/docs?x=1", NULL);
  cr_expect_eq(response.status, 301);
  cr_expect_str_eq(header(&response, "location"), "/docs/?x=1");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/docs/", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
}

Test(static_files, directory_without_index_is_404) {
  temp_root_mkdir(&T, "empty");
  http_response response;
  test_serve(&options, &response, "GET", "/empty/", NULL);
  cr_expect_eq(response.status, 404);
  http_response_free(&response);
}

/* Out of file descriptors is a temporary condition of the server: 503, not 500 (each
 * Criterion test runs in its own process, so the lowered limit stays here). */
Test(static_files, out_of_file_descriptors_is_503) {
  int fds[2];
  cr_assert_eq(pipe(fds), 0);
  struct rlimit limit;
  cr_assert_eq(getrlimit(RLIMIT_NOFILE, &limit), 0);
  limit.rlim_cur = (rlim_t)fds[1] + 1; /* every descriptor up to the newest is taken */
  cr_assert_eq(setrlimit(RLIMIT_NOFILE, &limit), 0);
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", NULL);
  cr_expect_eq(response.status, 503);
  http_response_free(&response);
  close(fds[1]); /* one free again: the same request is served */
  test_serve(&options, &response, "GET", "/digits.txt", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
  close(fds[0]);
}

Test(static_files, file_with_trailing_slash_is_404) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt/", NULL);
  cr_expect_eq(response.status, 404);
  http_response_free(&response);
}

Test(static_files, other_methods_get_405_with_allow) {
  http_response response;
  test_serve(&options, &response, "DELETE", "/digits.txt", NULL);
  cr_expect_eq(response.status, 405);
  cr_expect_str_eq(header(&response, "allow"), "GET, HEAD");
  http_response_free(&response);
}

Test(static_files, error_answers_have_a_small_html_body) {
  http_response response;
  test_serve(&options, &response, "GET", "/missing", NULL);
  cr_assert_eq(response.status, 404);
  cr_expect_str_eq(header(&response, "content-type"), "text/html; charset=utf-8");
  char body[512];
  int64_t n = test_read_body(&response, (uint8_t *)body, sizeof(body) - 1);
  cr_assert_gt(n, 0);
  body[n] = '\0';
  cr_expect_not_null(strstr(body, "404 Not Found"));
  char length[16];
  snprintf(length, sizeof(length), "%lld", (long long)n);
  cr_expect_str_eq(header(&response, "content-length"), length);
  http_response_free(&response);
}

Test(static_files, each_error_status_has_its_page) {
  static const int statuses[] = {400, 403, 404, 405, 413, 431, 500};
  for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
    http_response response;
    http_response_init(&response);
    cr_assert_eq(http_response_set_error(&response, statuses[i], NULL), 0);
    cr_expect_eq(response.status, statuses[i]);
    cr_expect_not_null(response.body);
    cr_expect_str_neq(http_status_reason(statuses[i]), "Unknown");
    http_response_free(&response);
  }
}

Test(static_files, head_has_get_headers_and_no_body) {
  http_response response;
  test_serve(&options, &response, "HEAD", "/digits.txt", NULL);
  cr_expect_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-length"), "10");
  cr_expect_not_null(header(&response, "etag"));
  cr_expect_null(response.body);
  http_response_free(&response);
}

Test(static_files, if_none_match_with_the_etag_gives_304) {
  http_response first, second;
  test_serve(&options, &first, "GET", "/digits.txt", NULL);
  char list[200];
  snprintf(list, sizeof(list), "\"nope\", W/%s", header(&first, "etag"));
  test_serve(&options, &second, "GET", "/digits.txt", "If-None-Match", list, NULL);
  cr_expect_eq(second.status, 304);
  cr_expect_null(second.body);
  cr_expect_str_eq(header(&second, "etag"), header(&first, "etag"));
  http_response_free(&first);
  http_response_free(&second);
}

Test(static_files, if_none_match_star_gives_304) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "If-None-Match", "*", NULL);
  cr_expect_eq(response.status, 304);
  http_response_free(&response);
}

Test(static_files, if_none_match_with_another_etag_gives_200) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "If-None-Match", "\"other\"",
             "If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT", NULL);
  cr_expect_eq(response.status, 200, "If-Modified-Since must be ignored beside If-None-Match");
  http_response_free(&response);
}

Test(static_files, if_modified_since_not_older_gives_304) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "If-Modified-Since",
             "Sun, 06 Nov 1994 08:49:37 GMT", NULL);
  cr_expect_eq(response.status, 304);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Modified-Since",
             "Sunday, 06-Nov-94 08:49:38 GMT", NULL);
  cr_expect_eq(response.status, 304);
  http_response_free(&response);
}

Test(static_files, if_modified_since_older_gives_200) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "If-Modified-Since",
             "Sun Nov  6 08:49:36 1994", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Modified-Since", "garbage", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
}

/* RFC 9110 13.1.1, 13.1.4, 13.2.2: If-Match (strong comparison) and If-Unmodified-Since
 * come first: false gives 412 whatever If-None-Match or Range say. */
Test(static_files, if_match_and_if_unmodified_since_give_412_when_false) {
  http_response first, response;
  test_serve(&options, &first, "GET", "/digits.txt", NULL);
  const char *etag = header(&first, "etag");
  char weak[200];
  snprintf(weak, sizeof(weak), "W/%s", etag);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Match", "\"nope\"", "Range",
             "bytes=0-1", "If-None-Match", "*", NULL);
  cr_expect_eq(response.status, 412);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Match", weak, NULL);
  cr_expect_eq(response.status, 412, "a weak tag never matches If-Match");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Match", "\"nope\"", "If-Match", etag,
             "Range", "bytes=0-1", NULL);
  cr_expect_eq(response.status, 206, "If-Match on two lines is one list");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Match", "*", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Unmodified-Since",
             "Sun, 06 Nov 1994 08:49:36 GMT", NULL);
  cr_expect_eq(response.status, 412, "modified one second after the date");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Unmodified-Since",
             "Sun, 06 Nov 1994 08:49:37 GMT", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "If-Match", etag, "If-Unmodified-Since",
             "Sun, 06 Nov 1994 08:49:36 GMT", NULL);
  cr_expect_eq(response.status, 200, "If-Unmodified-Since is ignored beside If-Match");
  http_response_free(&response);
  http_response_free(&first);
}

/* RFC 9110 5.3: If-None-Match on several lines is one list. */
Test(static_files, if_none_match_on_two_lines_is_one_list) {
  http_response first, second;
  test_serve(&options, &first, "GET", "/digits.txt", NULL);
  test_serve(&options, &second, "GET", "/digits.txt", "If-None-Match", "\"zzz\"", "If-None-Match",
             header(&first, "etag"), NULL);
  cr_expect_eq(second.status, 304);
  http_response_free(&first);
  http_response_free(&second);
}

/* RFC 9110 14.1.1: a suffix range of an empty file is satisfiable, but no Content-Range
 * can express it: the whole (empty) file, 200. */
Test(static_files, a_suffix_range_of_an_empty_file_gets_the_empty_file) {
  temp_root_write_str(&T, "empty.txt", "");
  http_response response;
  test_serve(&options, &response, "GET", "/empty.txt", "Range", "bytes=-1", NULL);
  cr_expect_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-length"), "0");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/empty.txt", "Range", "bytes=0-", NULL);
  cr_expect_eq(response.status, 416);
  http_response_free(&response);
}

/* Serves /digits.txt with a Range header; returns the status, body in out. */
static int range_request(const char *range, char *out, size_t cap, char *content_range,
                         size_t content_range_cap) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "Range", range, NULL);
  int status = response.status;
  int64_t n = test_read_body(&response, (uint8_t *)out, cap - 1);
  out[n > 0 ? n : 0] = '\0';
  const char *value = header(&response, "content-range");
  snprintf(content_range, content_range_cap, "%s", value != NULL ? value : "");
  http_response_free(&response);
  return status;
}

Test(static_files, range_first_to_last_gives_206) {
  char body[32], content_range[64];
  cr_expect_eq(range_request("bytes=2-4", body, sizeof(body), content_range, 64), 206);
  cr_expect_str_eq(body, "234");
  cr_expect_str_eq(content_range, "bytes 2-4/10");
}

Test(static_files, range_open_ended_gives_206_to_the_end) {
  char body[32], content_range[64];
  cr_expect_eq(range_request("bytes=7-", body, sizeof(body), content_range, 64), 206);
  cr_expect_str_eq(body, "789");
  cr_expect_str_eq(content_range, "bytes 7-9/10");
}

Test(static_files, range_suffix_gives_the_last_bytes) {
  char body[32], content_range[64];
  cr_expect_eq(range_request("bytes=-3", body, sizeof(body), content_range, 64), 206);
  cr_expect_str_eq(body, "789");
  cr_expect_eq(range_request("bytes=-300", body, sizeof(body), content_range, 64), 206);
  cr_expect_str_eq(body, "0123456789");
}

Test(static_files, range_with_huge_last_byte_is_clamped) {
  char body[32], content_range[64];
  cr_expect_eq(
      range_request("bytes=0-99999999999999999999999", body, sizeof(body), content_range, 64), 206);
  cr_expect_str_eq(content_range, "bytes 0-9/10");
  cr_expect_eq(range_request("bytes=5-18446744073709551615", body, sizeof(body), content_range, 64),
               206);
  cr_expect_str_eq(content_range, "bytes 5-9/10");
}

Test(static_files, range_with_huge_first_byte_is_416) {
  char body[512], content_range[64];
  cr_expect_eq(range_request("bytes=18446744073709551615-", body, sizeof(body), content_range, 64),
               416);
  cr_expect_str_eq(content_range, "bytes */10");
  cr_expect_eq(
      range_request("bytes=99999999999999999999999-", body, sizeof(body), content_range, 64), 416);
  cr_expect_eq(range_request("bytes=-18446744073709551616", body, sizeof(body), content_range, 64),
               206);
}

Test(static_files, range_beyond_the_end_is_416) {
  char body[512], content_range[64];
  cr_expect_eq(range_request("bytes=10-", body, sizeof(body), content_range, 64), 416);
  cr_expect_str_eq(content_range, "bytes */10");
  cr_expect_eq(range_request("bytes=-0", body, sizeof(body), content_range, 64), 416);
}

Test(static_files, several_ranges_get_the_whole_file) {
  char body[32], content_range[64];
  cr_expect_eq(range_request("bytes=0-1,4-5", body, sizeof(body), content_range, 64), 200);
  cr_expect_str_eq(body, "0123456789");
  cr_expect_str_eq(content_range, "");
}

Test(static_files, malformed_range_is_ignored) {
  char body[32], content_range[64];
  cr_expect_eq(range_request("bytes=5-2", body, sizeof(body), content_range, 64), 200);
  cr_expect_eq(range_request("items=0-1", body, sizeof(body), content_range, 64), 200);
  cr_expect_eq(range_request("bytes=x-1", body, sizeof(body), content_range, 64), 200);
}

Test(static_files, if_range_mismatch_serves_the_whole_file) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "Range", "bytes=0-1", "If-Range",
             "\"stale\"", NULL);
  cr_expect_eq(response.status, 200);
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/digits.txt", "Range", "bytes=0-1", "If-Range",
             "Sun, 06 Nov 1994 08:49:37 GMT", NULL);
  cr_expect_eq(response.status, 206);
  http_response_free(&response);
}

Test(static_files, head_ignores_range) {
  http_response response;
  test_serve(&options, &response, "HEAD", "/digits.txt", "Range", "bytes=0-1", NULL);
  cr_expect_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-length"), "10");
  http_response_free(&response);
}

Test(static_files, range_parser_never_wraps) {
  uint64_t first = 1, length = 1;
  cr_expect_eq(http_range_parse("bytes=0-18446744073709551615", UINT64_MAX, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_expect_eq(first, 0);
  cr_expect_eq(length, UINT64_MAX);
  cr_expect_eq(http_range_parse("bytes=18446744073709551614-", UINT64_MAX, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_expect_eq(length, 1);
  cr_expect_eq(http_range_parse("bytes=-18446744073709551615", 5, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_expect_eq(first, 0);
  cr_expect_eq(length, 5);
  cr_expect_eq(http_range_parse("bytes=0-0", 0, &first, &length), HTTP_RANGE_UNSATISFIABLE);
  cr_expect_eq(http_range_parse(NULL, 5, &first, &length), HTTP_RANGE_NONE);
}

Test(static_files, file_that_shrinks_while_sent_ends_with_an_error) {
  char big[65536];
  memset(big, 'x', sizeof(big));
  temp_root_write(&T, "big.bin", big, sizeof(big));
  http_response response;
  test_serve(&options, &response, "GET", "/big.bin", NULL);
  cr_assert_eq(response.status, 200);
  uint8_t buf[4096];
  int eof = 0;
  cr_assert_eq(http_body_read(response.body, buf, sizeof(buf), &eof), 4096);
  cr_assert_eq(truncate(temp_root_path(&T, "big.bin"), 8192), 0);
  cr_expect_eq(http_body_read(response.body, buf, sizeof(buf), &eof), 4096);
  cr_expect_eq(http_body_read(response.body, buf, sizeof(buf), &eof), HTTP_ERR_TRUNCATED);
  cr_expect_eq(eof, 0);
  http_response_free(&response);
}

Test(static_files, file_body_exposes_its_range_for_sendfile) {
  http_response response;
  test_serve(&options, &response, "GET", "/digits.txt", "Range", "bytes=3-5", NULL);
  int fd = -1;
  uint64_t offset = 0, length = 0;
  cr_assert_eq(http_body_file_range(response.body, &fd, &offset, &length), 0);
  cr_expect_geq(fd, 0);
  cr_expect_eq(offset, 3);
  cr_expect_eq(length, 3);
  http_body_advance(response.body, 2);
  uint8_t buf[8];
  int eof = 0;
  cr_expect_eq(http_body_read(response.body, buf, sizeof(buf), &eof), 1);
  cr_expect_eq(buf[0], '5');
  cr_expect_eq(eof, 1);
  http_response_free(&response);
}

/* A borrowed body placed inside its response: read like any memory body, released once
 * (when replaced, reset or freed), and never freed itself (ASan would say). */
static int releases;
static void count_release(void *context) {
  (void)context;
  releases++;
}

Test(static_files, a_borrowed_body_inside_its_response_is_released_once) {
  static const char bytes[] = "0123456789";
  http_response response;
  http_response_init(&response);
  releases = 0;
  cr_assert_eq(http_response_set_borrowed_body(&response, bytes, 10, count_release, NULL), 0);
  cr_assert_not_null(response.body);
  cr_assert_eq(http_body_length(response.body), 10);
  const uint8_t *span;
  size_t left;
  cr_assert_eq(http_body_memory_span(response.body, &span, &left), 0);
  cr_assert_eq(left, 10);
  uint8_t buf[4];
  int eof = 0;
  cr_assert_eq(http_body_read(response.body, buf, sizeof(buf), &eof), 4);
  cr_assert_eq(memcmp(buf, "0123", 4), 0);
  /* Replaced by another in the same room: the first is released. */
  cr_assert_eq(http_response_set_borrowed_body(&response, bytes + 5, 5, count_release, NULL), 0);
  cr_assert_eq(releases, 1);
  cr_assert_eq(http_body_read(response.body, buf, sizeof(buf), &eof), 4);
  cr_assert_eq(memcmp(buf, "5678", 4), 0);
  http_response_reset(&response, 404);
  cr_assert_eq(releases, 2);
  cr_assert_null(response.body);
  cr_assert_eq(http_response_set_borrowed_body(&response, bytes, 10, count_release, NULL), 0);
  http_response_free(&response);
  cr_assert_eq(releases, 3);
  /* Bad arguments release too, and leave no body. */
  http_response_init(&response);
  cr_assert_eq(http_response_set_borrowed_body(&response, NULL, 3, count_release, NULL),
               HTTP_ERR_INVALID_ARGUMENT);
  cr_assert_eq(releases, 4);
  cr_assert_null(response.body);
  http_response_free(&response);
}
