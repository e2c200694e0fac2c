/* test_http_manifest.c — push manifest parsing (valid files and each error, with
 * file:line messages), lookup, and the hint header values.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "http_manifest.h"

static char error[512];

static int parse(const char *text, http_manifest **out) {
  return http_manifest_parse("site.push", text, strlen(text), out, error, sizeof(error));
}

static void expect_error(const char *text, int rv, const char *message) {
  http_manifest *manifest = NULL;
  cr_expect_eq(parse(text, &manifest), rv, "for %s", text);
  cr_expect_null(manifest);
  cr_expect_not_null(strstr(error, message), "message '%s' lacks '%s'", error, message);
}

Test(manifest, valid_file_lists_resources_in_order_with_urgencies) {
  http_manifest *manifest;
  cr_assert_eq(parse("# the home page\n"
                     "/index.html  /css/site.css  0\n"
                     "\n"
                     "/index.html\t/js/app.js   # default urgency\r\n"
                     "/about.html /css/site.css 5\n",
                     &manifest),
               0, "%s", error);
  const http_manifest_entry *entries;
  size_t n = http_manifest_lookup(manifest, "/index.html", 11, &entries);
  cr_assert_eq(n, 2);
  cr_expect_str_eq(entries[0].path, "/css/site.css");
  cr_expect_eq(entries[0].urgency, 0);
  cr_expect_str_eq(entries[1].path, "/js/app.js");
  cr_expect_eq(entries[1].urgency, HTTP_MANIFEST_DEFAULT_URGENCY);
  cr_expect_eq(http_manifest_lookup(manifest, "/about.html", 11, &entries), 1);
  cr_expect_eq(entries[0].urgency, 5);
  cr_expect_eq(http_manifest_lookup(manifest, "/nothing", 8, &entries), 0);
  cr_expect_eq(http_manifest_pages(manifest), 2);
  http_manifest_del(manifest);
}

Test(manifest, empty_file_is_valid) {
  http_manifest *manifest;
  cr_assert_eq(parse("", &manifest), 0);
  cr_expect_eq(http_manifest_pages(manifest), 0);
  http_manifest_del(manifest);
}

Test(manifest, one_field_is_an_error_with_file_and_line) {
  expect_error("/a /b\n/index.html\n", HTTP_ERR_SYNTAX, "site.push:2: expected PAGE RESOURCE");
}

Test(manifest, four_fields_are_an_error) {
  expect_error("/a /b 1 extra\n", HTTP_ERR_SYNTAX, "site.push:1: expected PAGE RESOURCE");
}

Test(manifest, urgency_out_of_range_is_an_error) {
  expect_error("/a /b 8\n", HTTP_ERR_SYNTAX, "site.push:1: urgency must be a digit 0-7");
  expect_error("/a /b -1\n", HTTP_ERR_SYNTAX, "urgency");
  expect_error("/a /b 12\n", HTTP_ERR_SYNTAX, "urgency");
}

Test(manifest, resource_of_another_origin_is_refused) {
  expect_error("/a http://other.example/b.css\n", HTTP_ERR_SYNTAX,
               "site.push:1: resource http://other.example/b.css must begin with '/'");
  expect_error("/a //other.example/b.css\n", HTTP_ERR_SYNTAX, "must not begin with '//'");
  expect_error("index.html /b.css\n", HTTP_ERR_SYNTAX, "page index.html must begin with '/'");
}

Test(manifest, unsafe_characters_are_refused) {
  expect_error("/a /b,c\n", HTTP_ERR_SYNTAX, "percent-encode");
  expect_error("/a /b<c>\n", HTTP_ERR_SYNTAX, "percent-encode");
  expect_error("/a /caf\xc3\xa9\n", HTTP_ERR_SYNTAX, "non-ASCII");
  expect_error("/a /b/../c\n", HTTP_ERR_SYNTAX, "'..' segment");
}

Test(manifest, duplicate_resource_is_an_error) {
  expect_error("/a /b 1\n/a /b 2\n", HTTP_ERR_SYNTAX, "site.push:2: resource /b is already listed");
}

Test(manifest, page_listing_itself_is_an_error) {
  expect_error("/a /a\n", HTTP_ERR_SYNTAX, "lists itself");
}

Test(manifest, too_many_resources_for_a_page_is_an_error) {
  char text[4096] = "";
  for (unsigned i = 0; i <= HTTP_MANIFEST_MAX_PER_PAGE; i++) {
    char line[64];
    snprintf(line, sizeof(line), "/page /r%u.css\n", i);
    strcat(text, line);
  }
  expect_error(text, HTTP_ERR_LIMIT, "site.push:33: more than 32 resources for page /page");
}

Test(manifest, overlong_line_is_an_error) {
  char text[HTTP_MANIFEST_MAX_LINE + 64];
  strcpy(text, "# c\n/page /");
  size_t len = strlen(text);
  memset(text + len, 'x', HTTP_MANIFEST_MAX_LINE);
  text[len + HTTP_MANIFEST_MAX_LINE] = '\0';
  expect_error(text, HTTP_ERR_LIMIT, "site.push:2: line longer than 1024 bytes");
}

Test(manifest, nul_byte_is_an_error) {
  http_manifest *manifest = NULL;
  cr_expect_eq(http_manifest_parse("m", "/a /b\0c\n", 8, &manifest, error, sizeof(error)),
               HTTP_ERR_SYNTAX);
  cr_expect_str_eq(error, "m:1: NUL byte in line");
}

Test(manifest, missing_file_is_an_io_error_naming_it) {
  http_manifest *manifest = NULL;
  cr_expect_eq(http_manifest_load("/nonexistent/site.push", &manifest, error, sizeof(error)),
               HTTP_ERR_IO);
  cr_expect_not_null(strstr(error, "/nonexistent/site.push: "));
}

Test(manifest, hint_headers_list_the_resources) {
  http_manifest *manifest;
  cr_assert_eq(parse("/ /a.css 0\n/ /b.js 1\n/ /f.woff2\n/ /data.bin\n", &manifest), 0);
  const http_manifest_entry *entries;
  size_t n = http_manifest_lookup(manifest, "/", 1, &entries);
  http_response response;
  http_response_init(&response);
  cr_assert_eq(http_manifest_add_hints(entries, n, &response), 0);
  cr_expect_str_eq(http_headers_get(&response.headers, "x-subresources"),
                   "/a.css, /b.js, /f.woff2, /data.bin");
  cr_expect_str_eq(http_headers_get(&response.headers, "link"),
                   "</a.css>; rel=preload; as=style, </b.js>; rel=preload; as=script, "
                   "</f.woff2>; rel=preload; as=font; crossorigin, </data.bin>; rel=preload");
  http_response_free(&response);
  http_manifest_del(manifest);
}
