/* test_http_gzip.c — gzip Content-Encoding: precompressed siblings, on-the-fly
 * compression, Accept-Encoding (q=0), Range without gzip, and the cache's bounds.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "http_err.h"
#include "http_gzip.h"
#include "http_testutil.h"

static temp_root T;
static http_static_options options;
static http_gzip_cache *cache;
static char text[20000];

static void setup(void) {
  temp_root_make(&T, HTTP_SYMLINKS_NONE);
  cr_assert_eq(http_gzip_cache_new(&cache, 0, 0), 0);
  options = (http_static_options){.docroot = &T.docroot, .gzip = 1, .gzip_cache = cache};
  for (size_t i = 0; i < sizeof(text) - 1; i++) text[i] = "spdy speeds the web. "[i % 21];
  text[sizeof(text) - 1] = '\0';
  temp_root_write_str(&T, "app.js", text);
  temp_root_set_mtime(&T, "app.js", 1000000000);
}
static void teardown(void) {
  http_gzip_cache_del(cache);
  temp_root_remove(&T);
}

TestSuite(gzip, .init = setup, .fini = teardown, .timeout = 30);

static const char *header(http_response *response, const char *name) {
  return http_headers_get(&response->headers, name);
}

/* Inflates a gzip member; returns the length or -1. */
static long gunzip(const uint8_t *in, size_t len, char *out, size_t cap) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return -1;
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.avail_in = (uInt)len;
  zs.next_out = (Bytef *)out;
  zs.avail_out = (uInt)cap;
  int rv = inflate(&zs, Z_FINISH);
  long produced = (long)zs.total_out;
  inflateEnd(&zs);
  return rv == Z_STREAM_END ? produced : -1;
}

static uint8_t body[65536];
static char plain[65536];

Test(gzip, compressible_type_is_compressed_on_the_fly) {
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip, deflate", NULL);
  cr_assert_eq(response.status, 200);
  cr_expect_str_eq(header(&response, "content-encoding"), "gzip");
  cr_expect_str_eq(header(&response, "vary"), "Accept-Encoding");
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_assert_gt(n, 0);
  cr_expect_lt(n, (int64_t)strlen(text));
  char length[24];
  snprintf(length, sizeof(length), "%lld", (long long)n);
  cr_expect_str_eq(header(&response, "content-length"), length);
  cr_assert_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), (long)strlen(text));
  cr_expect_eq(memcmp(plain, text, strlen(text)), 0);
  http_response_free(&response);
}

Test(gzip, etag_of_the_gzip_form_differs_from_the_identity_one) {
  http_response zipped, identity;
  test_serve(&options, &zipped, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  test_serve(&options, &identity, "GET", "/app.js", NULL);
  cr_expect_null(header(&identity, "content-encoding"));
  cr_expect_str_eq(header(&identity, "vary"), "Accept-Encoding");
  cr_expect_str_neq(header(&zipped, "etag"), header(&identity, "etag"));
  http_response_free(&zipped);
  http_response_free(&identity);
}

Test(gzip, q_zero_refuses_gzip) {
  static const char *const refusals[] = {"gzip;q=0", "gzip; q=0.000, identity", "*;q=0", "identity",
                                         "br, gzip;q=0, *"};
  for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
    http_response response;
    test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", refusals[i], NULL);
    cr_expect_null(header(&response, "content-encoding"), "Accept-Encoding: %s", refusals[i]);
    http_response_free(&response);
  }
  cr_expect(http_static_accepts_gzip("gzip;q=0.001"));
  cr_expect(http_static_accepts_gzip("*"));
  cr_expect(http_static_accepts_gzip("x-gzip"));
  cr_expect_not(http_static_accepts_gzip(NULL));
}

/* RFC 9110 5.3: Accept-Encoding on several lines is one list. */
Test(gzip, accept_encoding_on_two_lines_is_one_list) {
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "br", "Accept-Encoding",
             "gzip", NULL);
  cr_expect_str_eq(header(&response, "content-encoding"), "gzip");
  http_response_free(&response);
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "*", "Accept-Encoding",
             "gzip;q=0", NULL);
  cr_expect_null(header(&response, "content-encoding"));
  http_response_free(&response);
}

Test(gzip, incompressible_type_is_never_gzipped) {
  temp_root_write_str(&T, "image.png", text);
  http_response response;
  test_serve(&options, &response, "GET", "/image.png", "Accept-Encoding", "gzip", NULL);
  cr_expect_null(header(&response, "content-encoding"));
  cr_expect_null(header(&response, "vary"));
  http_response_free(&response);
}

Test(gzip, range_request_gets_the_identity_form) {
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", "Range", "bytes=0-3",
             NULL);
  cr_expect_eq(response.status, 206);
  cr_expect_null(header(&response, "content-encoding"));
  cr_expect_eq(test_read_body(&response, body, sizeof(body)), 4);
  cr_expect_eq(memcmp(body, "spdy", 4), 0);
  http_response_free(&response);
}

Test(gzip, precompressed_sibling_is_used) {
  uint8_t *packed;
  size_t packed_len;
  cr_assert_eq(http_gzip_compress((const uint8_t *)"precompressed!", 14, &packed, &packed_len), 0);
  temp_root_write(&T, "app.js.gz", packed, packed_len);
  free(packed);
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  cr_expect_str_eq(header(&response, "content-encoding"), "gzip");
  cr_expect_str_eq(header(&response, "content-type"), "text/javascript; charset=utf-8");
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_assert_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), 14);
  cr_expect_eq(memcmp(plain, "precompressed!", 14), 0);
  cr_expect_eq(http_gzip_cache_compressions(cache), 0, "no on-the-fly work with a sibling");
  http_response_free(&response);
}

Test(gzip, precompressed_sibling_older_than_the_file_is_ignored) {
  temp_root_write_str(&T, "app.js.gz", "stale");
  temp_root_set_mtime(&T, "app.js.gz", 999999999);
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_expect_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), (long)strlen(text));
  http_response_free(&response);
}

Test(gzip, precompressed_sibling_must_pass_the_wall) {
  char target[400];
  snprintf(target, sizeof(target), "%s/secret.txt", T.outside);
  temp_root_symlink(&T, target, "app.js.gz");
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_expect_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), (long)strlen(text),
               "the symlinked sibling was served");
  http_response_free(&response);
}

Test(gzip, precompressed_sibling_must_be_a_regular_file) {
  cr_assert_eq(mkfifo(temp_root_path(&T, "app.js.gz"), 0644), 0);
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  cr_expect_eq(response.status, 200);
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_expect_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), (long)strlen(text));
  http_response_free(&response);
}

Test(gzip, cached_result_is_not_compressed_again) {
  for (int i = 0; i < 3; i++) {
    http_response response;
    test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
    cr_expect_str_eq(header(&response, "content-encoding"), "gzip");
    http_response_free(&response);
  }
  cr_expect_eq(http_gzip_cache_compressions(cache), 1);
  cr_expect_eq(http_gzip_cache_entries(cache), 1);
}

Test(gzip, cache_stays_within_its_byte_bound) {
  http_gzip_cache *small;
  cr_assert_eq(http_gzip_cache_new(&small, 600, 0), 0);
  options.gzip_cache = small;
  for (int i = 0; i < 20; i++) {
    char name[32], content[20000];
    snprintf(name, sizeof(name), "f%d.css", i);
    for (size_t j = 0; j < sizeof(content) - 1; j++)
      content[j] = (char)('a' + (j * (size_t)(i + 7)) % 26);
    content[sizeof(content) - 1] = '\0';
    temp_root_write_str(&T, name, content);
    char path[40];
    snprintf(path, sizeof(path), "/%s", name);
    http_response response;
    test_serve(&options, &response, "GET", path, "Accept-Encoding", "gzip", NULL);
    cr_expect_str_eq(header(&response, "content-encoding"), "gzip");
    cr_expect_leq(http_gzip_cache_bytes(small), 600);
    http_response_free(&response);
  }
  cr_expect_lt(http_gzip_cache_entries(small), 20, "nothing was evicted");
  http_gzip_cache_del(small);
}

Test(gzip, file_above_the_per_file_bound_is_not_compressed) {
  http_gzip_cache *small;
  cr_assert_eq(http_gzip_cache_new(&small, 0, 1000), 0);
  options.gzip_cache = small;
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  cr_expect_null(header(&response, "content-encoding"));
  cr_expect_eq(http_gzip_cache_compressions(small), 0);
  http_response_free(&response);
  http_gzip_cache_del(small);
}

Test(gzip, cached_body_outlives_the_cache) {
  http_response response;
  test_serve(&options, &response, "GET", "/app.js", "Accept-Encoding", "gzip", NULL);
  http_gzip_cache_del(cache);
  cache = NULL;
  int64_t n = test_read_body(&response, body, sizeof(body));
  cr_expect_eq(gunzip(body, (size_t)n, plain, sizeof(plain)), (long)strlen(text));
  http_response_free(&response);
}

Test(gzip, file_that_shrank_before_compression_is_500) {
  /* The stat says 20000 bytes; the file now holds fewer: compression must not pad. */
  int fd = open(temp_root_path(&T, "app.js"), O_RDONLY);
  struct stat st;
  cr_assert_eq(fstat(fd, &st), 0);
  cr_assert_eq(truncate(temp_root_path(&T, "app.js"), 100), 0);
  http_body *out = NULL;
  uint64_t length;
  cr_expect_eq(http_gzip_cache_body(cache, fd, &st, &out, &length), HTTP_ERR_TRUNCATED);
  cr_expect_null(out);
  close(fd);
}
