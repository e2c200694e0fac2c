/* test_http_overflow.c — length arithmetic on peer-supplied sizes in speedy_http, at and
 * around the 64-bit boundaries:
 *   http_request.c   Content-Length (UINT64_MAX, UINT64_MAX + 1, INT64_MAX, signs, spaces,
 *                    hex) and the body check against a declared length;
 *   http_range.c     Range numbers past UINT64_MAX, suffix ranges, ranges at the last byte
 *                    of the largest representation, many ranges;
 *   http_upload.c    the upload limit against declared and received lengths;
 *   http_manifest.c  the push manifest's line, file, per-page and page-count limits.
 * The HTTP/1.1 wire (llhttp's chunk sizes and Content-Length) is covered end to end by
 * tests/speedyd/test_h1_overflow.sh.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "http_err.h"
#include "http_manifest.h"
#include "http_range.h"
#include "http_request.h"
#include "http_upload.h"

/* ---- Content-Length ------------------------------------------------------------------ */

/* Adds one Content-Length field to a fresh HTTP/1.1 request; returns the result and the
 * length it recorded. */
static int add_content_length(const char *value, int64_t *recorded) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_HTTP11, 0, 0);
  int rv = http_request_add_header(&request, "Content-Length", 14, value, strlen(value));
  *recorded = request.content_length;
  http_request_free(&request);
  return rv;
}

static void expect_content_length_refused(const char *value) {
  int64_t recorded;
  cr_assert_eq(add_content_length(value, &recorded), HTTP_ERR_BAD_REQUEST,
               "Content-Length '%s' was accepted", value);
  cr_assert_eq(recorded, -1, "Content-Length '%s' was recorded as %lld", value,
               (long long)recorded);
}

Test(overflow_content_length, uint64_max_is_refused) {
  expect_content_length_refused("18446744073709551615");
}

Test(overflow_content_length, uint64_max_plus_one_is_refused) {
  expect_content_length_refused("18446744073709551616");
}

Test(overflow_content_length, int64_max_is_refused_as_longer_than_18_digits) {
  expect_content_length_refused("9223372036854775807");
  expect_content_length_refused("9223372036854775808");
}

Test(overflow_content_length, eighteen_nines_are_the_largest_length_accepted) {
  int64_t recorded;
  cr_assert_eq(add_content_length("999999999999999999", &recorded), 0);
  cr_assert_eq(recorded, 999999999999999999LL);
  expect_content_length_refused("1000000000000000000");
}

Test(overflow_content_length, leading_zeros_count_towards_the_18_digits) {
  int64_t recorded;
  cr_assert_eq(add_content_length("000000000000000005", &recorded), 0);
  cr_assert_eq(recorded, 5);
  expect_content_length_refused("0000000000000000005");
}

Test(overflow_content_length, a_sign_is_refused) {
  expect_content_length_refused("+5");
  expect_content_length_refused("-1");
  expect_content_length_refused("-0");
  expect_content_length_refused("+18446744073709551615");
}

Test(overflow_content_length, surrounding_spaces_are_allowed_but_not_inner_ones) {
  int64_t recorded;
  cr_assert_eq(add_content_length("  \t42 \t", &recorded), 0, "optional whitespace");
  cr_assert_eq(recorded, 42);
  expect_content_length_refused("4 2");
  expect_content_length_refused(" ");
  expect_content_length_refused("");
}

Test(overflow_content_length, hex_exponents_and_lists_are_refused) {
  expect_content_length_refused("0x10");
  expect_content_length_refused("1e3");
  expect_content_length_refused("5, 5");
  expect_content_length_refused("5.0");
}

Test(overflow_content_length, a_second_different_length_is_refused) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_HTTP11, 0, 0);
  cr_assert_eq(http_request_add_header(&request, "content-length", 14, "999999999999999999", 18),
               0);
  cr_assert_eq(http_request_add_header(&request, "content-length", 14, "999999999999999998", 18),
               HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

Test(overflow_content_length, body_check_compares_without_wrapping) {
  http_request request;
  http_request_init(&request, HTTP_PROTO_SPDY3, 0, 0);
  cr_assert_eq(http_request_add_header(&request, "content-length", 14, "999999999999999999", 18),
               0);
  cr_assert_eq(http_request_check_body(&request, 999999999999999999ULL, 1), 0);
  cr_assert_eq(http_request_check_body(&request, 1000000000000000000ULL, 0), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_request_check_body(&request, UINT64_MAX, 0), HTTP_ERR_BAD_REQUEST);
  cr_assert_eq(http_request_check_body(&request, 0, 1), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

/* ---- Range ------------------------------------------------------------------------- */

/* Parses value for a representation of size bytes; on a satisfiable answer checks the
 * promise of http_range.h without wrapping: 1 <= length <= size - first. */
static http_range_result range(const char *value, uint64_t size, uint64_t *first,
                               uint64_t *length) {
  *first = *length = 12345;
  http_range_result r = http_range_parse(value, size, first, length);
  if (r == HTTP_RANGE_SATISFIABLE) {
    cr_assert_lt(*first, size, "'%s': first %llu past size %llu", value, (unsigned long long)*first,
                 (unsigned long long)size);
    cr_assert(*length >= 1 && *length <= size - *first, "'%s': length %llu from %llu of %llu",
              value, (unsigned long long)*length, (unsigned long long)*first,
              (unsigned long long)size);
  }
  return r;
}

Test(overflow_range, last_byte_uint64_max_means_to_the_end) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=0-18446744073709551615", 1000, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_assert(first == 0 && length == 1000);
}

Test(overflow_range, last_byte_past_uint64_max_means_to_the_end) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=10-99999999999999999999999", 1000, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_assert(first == 10 && length == 990);
}

Test(overflow_range, first_byte_uint64_max_is_unsatisfiable) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=18446744073709551615-", 1000, &first, &length),
               HTTP_RANGE_UNSATISFIABLE);
  cr_assert_eq(range("bytes=18446744073709551615-18446744073709551615", 1000, &first, &length),
               HTTP_RANGE_UNSATISFIABLE);
}

Test(overflow_range, first_byte_past_uint64_max_is_unsatisfiable) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=18446744073709551616-", 1000, &first, &length),
               HTTP_RANGE_UNSATISFIABLE);
  cr_assert_eq(
      range("bytes=18446744073709551616-18446744073709551617", UINT64_MAX, &first, &length),
      HTTP_RANGE_UNSATISFIABLE);
}

Test(overflow_range, suffix_of_uint64_max_or_more_is_the_whole_representation) {
  const char *values[] = {"bytes=-18446744073709551615", "bytes=-18446744073709551616",
                          "bytes=-999999999999999999999999999999"};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    uint64_t first, length;
    cr_assert_eq(range(values[i], 1000, &first, &length), HTTP_RANGE_SATISFIABLE, "%s", values[i]);
    cr_assert(first == 0 && length == 1000, "%s: %llu+%llu", values[i], (unsigned long long)first,
              (unsigned long long)length);
  }
}

/* RFC 9110 14.1.1: a suffix of zero is unsatisfiable; any other suffix of an empty
 * representation is satisfiable but not expressible: no range (the whole, empty). */
Test(overflow_range, suffix_of_zero_is_unsatisfiable_and_of_an_empty_representation_none) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=-0", 1000, &first, &length), HTTP_RANGE_UNSATISFIABLE);
  cr_assert_eq(range("bytes=-18446744073709551615", 0, &first, &length), HTTP_RANGE_NONE);
  cr_assert_eq(range("bytes=0-", 0, &first, &length), HTTP_RANGE_UNSATISFIABLE);
}

Test(overflow_range, whole_of_the_largest_representation_has_length_uint64_max) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=0-", UINT64_MAX, &first, &length), HTTP_RANGE_SATISFIABLE);
  cr_assert(first == 0 && length == UINT64_MAX);
  cr_assert_eq(range("bytes=-18446744073709551615", UINT64_MAX, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_assert(first == 0 && length == UINT64_MAX);
}

Test(overflow_range, last_byte_of_the_largest_representation_is_one_byte) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=18446744073709551614-", UINT64_MAX, &first, &length),
               HTTP_RANGE_SATISFIABLE);
  cr_assert(first == UINT64_MAX - 1 && length == 1);
  cr_assert_eq(
      range("bytes=18446744073709551614-18446744073709551615", UINT64_MAX, &first, &length),
      HTTP_RANGE_SATISFIABLE);
  cr_assert(first == UINT64_MAX - 1 && length == 1);
  cr_assert_eq(range("bytes=-1", UINT64_MAX, &first, &length), HTTP_RANGE_SATISFIABLE);
  cr_assert(first == UINT64_MAX - 1 && length == 1);
}

Test(overflow_range, last_before_first_is_ignored_even_near_uint64_max) {
  uint64_t first, length;
  cr_assert_eq(
      range("bytes=18446744073709551615-18446744073709551614", UINT64_MAX, &first, &length),
      HTTP_RANGE_NONE);
  cr_assert_eq(range("bytes=5-4", 1000, &first, &length), HTTP_RANGE_NONE);
}

Test(overflow_range, signs_and_hex_are_not_numbers) {
  uint64_t first, length;
  cr_assert_eq(range("bytes=+5-", 1000, &first, &length), HTTP_RANGE_NONE);
  cr_assert_eq(range("bytes=-+5", 1000, &first, &length), HTTP_RANGE_NONE);
  cr_assert_eq(range("bytes=0x10-", 1000, &first, &length), HTTP_RANGE_NONE);
  cr_assert_eq(range("bytes=--5", 1000, &first, &length), HTTP_RANGE_NONE);
}

Test(overflow_range, ten_thousand_ranges_are_answered_with_the_whole_file) {
  size_t cap = 10000 * 32 + 16;
  char *value = malloc(cap);
  cr_assert_not_null(value);
  size_t len = (size_t)snprintf(value, cap, "bytes=");
  for (unsigned i = 0; i < 10000; i++)
    len += (size_t)snprintf(value + len, cap - len, "%s18446744073709551615-%u", i ? "," : "", i);
  uint64_t first, length;
  cr_assert_eq(range(value, 1000, &first, &length), HTTP_RANGE_MULTIPLE);
  free(value);
}

/* ---- Uploads ------------------------------------------------------------------------- */

/* A POST to /upload declaring content_length (NULL: none). */
static void upload_request(http_request *request, const char *content_length) {
  http_request_init(request, HTTP_PROTO_HTTP11, 0, 0);
  cr_assert_eq(http_request_set_method(request, "POST", 4), 0);
  cr_assert_eq(http_request_set_path(request, "/upload", 7), 0);
  if (content_length != NULL)
    cr_assert_eq(http_request_add_header(request, "content-length", 14, content_length,
                                         strlen(content_length)),
                 0);
}

static int begin(http_upload_mode mode, uint64_t max, const char *content_length,
                 http_upload **out) {
  http_upload_options options = {"/upload", mode, max};
  http_request request;
  upload_request(&request, content_length);
  *out = NULL;
  int rv = http_upload_begin(out, &options, &request);
  http_request_free(&request);
  return rv;
}

Test(overflow_upload, declared_length_of_eighteen_nines_is_413_before_any_byte) {
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_ECHO, 0, "999999999999999999", &upload), HTTP_ERR_TOO_LARGE);
  cr_assert_null(upload);
  cr_assert_eq(begin(HTTP_UPLOAD_DISCARD, 1u << 20, "999999999999999999", &upload),
               HTTP_ERR_TOO_LARGE);
  cr_assert_null(upload);
}

Test(overflow_upload, declared_length_at_the_limit_is_accepted_and_one_more_is_413) {
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_DISCARD, 1000, "1000", &upload), 0);
  http_upload_del(upload);
  cr_assert_eq(begin(HTTP_UPLOAD_DISCARD, 1000, "1001", &upload), HTTP_ERR_TOO_LARGE);
}

Test(overflow_upload, echo_limit_of_uint64_max_still_grows_with_the_bytes) {
  /* The limit is clamped to what memory could hold; a small body still works. */
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_ECHO, UINT64_MAX, NULL, &upload), 0);
  uint8_t data[100];
  memset(data, 'u', sizeof(data));
  cr_assert_eq(http_upload_feed(upload, data, sizeof(data)), 0);
  cr_assert_eq(http_upload_received(upload), 100);
  http_response response;
  http_response_init(&response);
  cr_assert_eq(http_upload_finish(upload, &response), 0);
  cr_assert_eq(response.status, 200);
  http_response_free(&response);
  http_upload_del(upload);
}

Test(overflow_upload, received_bytes_at_the_limit_pass_and_one_more_is_413) {
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_ECHO, 1000, NULL, &upload), 0);
  uint8_t data[1000];
  memset(data, 'u', sizeof(data));
  cr_assert_eq(http_upload_feed(upload, data, 999), 0);
  cr_assert_eq(http_upload_feed(upload, data, 1), 0);
  cr_assert_eq(http_upload_feed(upload, data, 1), HTTP_ERR_TOO_LARGE);
  http_upload_del(upload);
}

Test(overflow_upload, bytes_past_the_declared_length_are_400) {
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_DISCARD, 0, "10", &upload), 0);
  uint8_t data[16] = {0};
  cr_assert_eq(http_upload_feed(upload, data, 10), 0);
  cr_assert_eq(http_upload_feed(upload, data, 1), HTTP_ERR_BAD_REQUEST);
  http_upload_del(upload);
}

Test(overflow_upload, discard_without_limit_counts_past_4_gib_without_wrapping) {
  /* 4 GiB of zero pages reserved, never touched by DISCARD: costs no memory. */
  if (SIZE_MAX <= UINT32_MAX) cr_skip_test("size_t is 32 bits");
  size_t big = (size_t)UINT32_MAX + 1;
  void *zeros = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (zeros == MAP_FAILED) cr_skip_test("cannot reserve 4 GiB of address space");
  http_upload *upload;
  cr_assert_eq(begin(HTTP_UPLOAD_DISCARD, 0, NULL, &upload), 0);
  cr_assert_eq(http_upload_feed(upload, zeros, big), 0);
  cr_assert_eq(http_upload_feed(upload, zeros, 2), 0);
  cr_assert_eq(http_upload_received(upload), (uint64_t)UINT32_MAX + 3);
  http_upload_del(upload);
  munmap(zeros, big);
}

/* ---- Push manifest ---------------------------------------------------------------------- */

static char manifest_error[512];

static int parse_manifest(const char *text, size_t len, http_manifest **out) {
  *out = NULL;
  manifest_error[0] = '\0';
  return http_manifest_parse("m.push", text, len, out, manifest_error, sizeof(manifest_error));
}

/* "/p /" + filler up to exactly line_len bytes, then ending (e.g. "\n" or "\r\n"). */
static char *manifest_line(size_t line_len, const char *ending, size_t *len) {
  size_t total = line_len + strlen(ending);
  char *text = malloc(total + 1);
  cr_assert_not_null(text);
  memcpy(text, "/p /", 4);
  memset(text + 4, 'r', line_len - 4);
  memcpy(text + line_len, ending, strlen(ending) + 1);
  *len = total;
  return text;
}

Test(overflow_manifest, line_of_exactly_the_maximum_is_accepted) {
  size_t len;
  char *text = manifest_line(HTTP_MANIFEST_MAX_LINE, "\n", &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), 0, "%s", manifest_error);
  http_manifest_del(m);
  free(text);
}

Test(overflow_manifest, crlf_does_not_count_towards_the_line_maximum) {
  size_t len;
  char *text = manifest_line(HTTP_MANIFEST_MAX_LINE, "\r\n", &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), 0, "%s", manifest_error);
  http_manifest_del(m);
  free(text);
}

Test(overflow_manifest, line_one_byte_over_the_maximum_is_refused) {
  size_t len;
  char *text = manifest_line(HTTP_MANIFEST_MAX_LINE + 1, "\n", &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), HTTP_ERR_LIMIT);
  cr_assert_null(m);
  cr_assert_not_null(strstr(manifest_error, "m.push:1: line longer than"), "%s", manifest_error);
  free(text);
}

Test(overflow_manifest, one_megabyte_line_without_newline_is_refused) {
  size_t len;
  char *text = manifest_line(HTTP_MANIFEST_MAX_FILE, "", &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), HTTP_ERR_LIMIT);
  cr_assert_not_null(strstr(manifest_error, "m.push:1: line longer than"), "%s", manifest_error);
  free(text);
}

Test(overflow_manifest, file_of_exactly_the_maximum_is_read_and_one_byte_more_refused) {
  char *text = malloc(HTTP_MANIFEST_MAX_FILE + 1);
  cr_assert_not_null(text);
  memset(text, '\n', HTTP_MANIFEST_MAX_FILE + 1); /* blank lines: a million of them */
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, HTTP_MANIFEST_MAX_FILE, &m), 0, "%s", manifest_error);
  http_manifest_del(m);
  cr_assert_eq(parse_manifest(text, HTTP_MANIFEST_MAX_FILE + 1, &m), HTTP_ERR_LIMIT);
  cr_assert_null(m);
  free(text);
}

Test(overflow_manifest, file_larger_than_the_maximum_is_refused_by_load) {
  char path[] = "/tmp/speedy-manifest-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  char *text = malloc(HTTP_MANIFEST_MAX_FILE + 4096);
  cr_assert_not_null(text);
  memset(text, '\n', HTTP_MANIFEST_MAX_FILE + 4096);
  cr_assert_eq(write(fd, text, HTTP_MANIFEST_MAX_FILE + 4096), HTTP_MANIFEST_MAX_FILE + 4096);
  close(fd);
  http_manifest *m = NULL;
  int rv = http_manifest_load(path, &m, manifest_error, sizeof(manifest_error));
  unlink(path);
  free(text);
  cr_assert_eq(rv, HTTP_ERR_LIMIT, "%s", manifest_error);
  cr_assert_null(m);
}

/* count lines "/p<i> /r<j>" for pages 0..pages-1 with per_page resources each. */
static char *manifest_of(unsigned pages, unsigned per_page, size_t *len) {
  size_t cap = (size_t)pages * per_page * 24 + 1;
  char *text = malloc(cap);
  cr_assert_not_null(text);
  size_t at = 0;
  for (unsigned p = 0; p < pages; p++)
    for (unsigned r = 0; r < per_page; r++)
      at += (size_t)snprintf(text + at, cap - at, "/p%u /r%u\n", p, r);
  *len = at;
  return text;
}

Test(overflow_manifest, resources_per_page_stop_at_the_maximum) {
  size_t len;
  char *text = manifest_of(1, HTTP_MANIFEST_MAX_PER_PAGE, &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), 0, "%s", manifest_error);
  const http_manifest_entry *entries;
  cr_assert_eq(http_manifest_lookup(m, "/p0", 3, &entries), HTTP_MANIFEST_MAX_PER_PAGE);
  http_manifest_del(m);
  free(text);
  text = manifest_of(1, HTTP_MANIFEST_MAX_PER_PAGE + 1, &len);
  cr_assert_eq(parse_manifest(text, len, &m), HTTP_ERR_LIMIT);
  free(text);
}

Test(overflow_manifest, pages_stop_at_the_maximum) {
  size_t len;
  char *text = manifest_of(HTTP_MANIFEST_MAX_PAGES, 1, &len);
  http_manifest *m;
  cr_assert_eq(parse_manifest(text, len, &m), 0, "%s", manifest_error);
  cr_assert_eq(http_manifest_pages(m), HTTP_MANIFEST_MAX_PAGES);
  http_manifest_del(m);
  free(text);
  text = manifest_of(HTTP_MANIFEST_MAX_PAGES + 1, 1, &len);
  cr_assert_eq(parse_manifest(text, len, &m), HTTP_ERR_LIMIT);
  cr_assert_not_null(strstr(manifest_error, "more than 4096 pages"), "%s", manifest_error);
  free(text);
}

Test(overflow_manifest, huge_urgency_is_a_syntax_error) {
  const char *values[] = {"8", "07", "-1", "18446744073709551616", "4294967303"};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    char text[96];
    int n = snprintf(text, sizeof(text), "/p /r %s\n", values[i]);
    http_manifest *m;
    cr_assert_eq(parse_manifest(text, (size_t)n, &m), HTTP_ERR_SYNTAX, "urgency %s", values[i]);
  }
}
