/* test_http_log.c — access log lines: the combined format plus protocol, stream and
 * bytes, and escaping of every peer-controlled byte.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <string.h>

#include "http_log.h"

static http_log_entry sample(void) {
  return (http_log_entry){.peer = "192.0.2.7",
                          .time = 784111777,
                          .method = "GET",
                          .path = "/a.css",
                          .version = "HTTP/1.1",
                          .status = 200,
                          .body_bytes = 512,
                          .referer = "http://example.com/",
                          .user_agent = "curl/8.0",
                          .protocol = "spdy/3.1",
                          .stream_id = 5,
                          .bytes_in = 0,
                          .bytes_out = 742};
}

static char line[HTTP_LOG_LINE_MAX];

Test(access_log, line_has_the_combined_format_and_the_extra_fields) {
  http_log_entry entry = sample();
  size_t n = http_log_format(&entry, line, sizeof(line));
  cr_expect_str_eq(line, "192.0.2.7 - - [06/Nov/1994:08:49:37 +0000] \"GET /a.css HTTP/1.1\" "
                         "200 512 \"http://example.com/\" \"curl/8.0\" spdy/3.1 5 0 742\n");
  cr_expect_eq(n, strlen(line));
}

Test(access_log, absent_fields_and_empty_bodies_are_dashes) {
  http_log_entry entry = sample();
  entry.referer = NULL;
  entry.user_agent = "";
  entry.body_bytes = 0;
  http_log_format(&entry, line, sizeof(line));
  cr_expect_not_null(strstr(line, "\" 200 - \"-\" \"-\" "), "%s", line);
}

Test(access_log, control_bytes_quotes_and_backslashes_are_escaped) {
  http_log_entry entry = sample();
  entry.path = "/a\"b\\c\nd\x1b[31m\x7f\xff";
  entry.user_agent = "evil\r\n127.0.0.1 - - [forged]";
  http_log_format(&entry, line, sizeof(line));
  cr_expect_not_null(strstr(line, "\"GET /a\\x22b\\x5cc\\x0ad\\x1b[31m\\x7f\\xff HTTP/1.1\""), "%s",
                     line);
  cr_expect_not_null(strstr(line, "\"evil\\x0d\\x0a127.0.0.1 - - [forged]\""), "%s", line);
  cr_expect_eq(strchr(line, '\n'), line + strlen(line) - 1, "one line only");
}

Test(access_log, escape_never_overflows_and_cuts_at_a_whole_escape) {
  char out[8];
  size_t n = http_log_escape("ab\n", 3, out, sizeof(out));
  cr_expect_eq(n, 6);
  cr_expect_str_eq(out, "ab\\x0a");
  n = http_log_escape("\n\n", 2, out, 6);
  cr_expect_str_eq(out, "\\x0a");
  cr_expect_eq(n, 4);
}

Test(access_log, long_fields_are_cut_and_the_line_still_fits) {
  static char huge[10000];
  memset(huge, '\n', sizeof(huge) - 1);
  http_log_entry entry = sample();
  entry.path = huge;
  entry.user_agent = huge;
  entry.referer = huge;
  entry.method = huge;
  size_t n = http_log_format(&entry, line, sizeof(line));
  cr_assert_gt(n, 0);
  cr_expect_not_null(strstr(line, "..."));
  cr_expect_lt(n, sizeof(line));
}

Test(access_log, too_small_buffer_gives_nothing) {
  http_log_entry entry = sample();
  char small[20];
  cr_expect_eq(http_log_format(&entry, small, sizeof(small)), 0);
  cr_expect_str_eq(small, "");
}
