/* test_http_date.c — HTTP dates: IMF-fixdate formatting and the three parsed forms. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <string.h>

#include "http_date.h"
#include "http_err.h"

static int64_t parse(const char *text) {
  int64_t t = -1;
  cr_assert_eq(http_date_parse(text, strlen(text), &t), 0, "'%s' did not parse", text);
  return t;
}

static void expect_invalid(const char *text) {
  int64_t t = 42;
  cr_expect_eq(http_date_parse(text, strlen(text), &t), HTTP_ERR_SYNTAX, "'%s' parsed", text);
  cr_expect_eq(t, 42);
}

Test(date, imf_fixdate_is_formatted) {
  char out[HTTP_DATE_SIZE];
  http_date_format(784111777, out);
  cr_expect_str_eq(out, "Sun, 06 Nov 1994 08:49:37 GMT");
  http_date_format(0, out);
  cr_expect_str_eq(out, "Thu, 01 Jan 1970 00:00:00 GMT");
  http_date_format(951782400, out);
  cr_expect_str_eq(out, "Tue, 29 Feb 2000 00:00:00 GMT");
}

Test(date, log_timestamp_is_formatted) {
  char out[HTTP_LOG_DATE_SIZE];
  http_date_format_log(784111777, out);
  cr_expect_str_eq(out, "06/Nov/1994:08:49:37 +0000");
}

Test(date, the_three_forms_parse_to_the_same_time) {
  cr_expect_eq(parse("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777);
  cr_expect_eq(parse("Sunday, 06-Nov-94 08:49:37 GMT"), 784111777);
  cr_expect_eq(parse("Sun Nov  6 08:49:37 1994"), 784111777);
  cr_expect_eq(parse("  Sun, 06 Nov 1994 08:49:37 GMT "), 784111777);
}

Test(date, rfc850_two_digit_years_pivot_at_70) {
  cr_expect_eq(parse("Thursday, 01-Jan-70 00:00:00 GMT"), 0);
  cr_expect_eq(parse("Saturday, 01-Jan-00 00:00:00 GMT"), 946684800);
}

Test(date, formatted_dates_parse_back) {
  static const int64_t times[] = {0, 68169600, 951782400, 1700000000, 4102444799};
  for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
    char out[HTTP_DATE_SIZE];
    http_date_format(times[i], out);
    cr_expect_eq(parse(out), times[i], "%s", out);
  }
}

Test(date, malformed_dates_are_refused) {
  expect_invalid("");
  expect_invalid("Sun, 06 Nov 1994 08:49:37"); /* no GMT */
  expect_invalid("Sun, 06 Nov 1994 08:49:37 UTC");
  expect_invalid("Sun, 6 Nov 1994 08:49:37 GMT");  /* one-digit day in fixdate */
  expect_invalid("Sun, 31 Feb 1994 08:49:37 GMT"); /* no such day */
  expect_invalid("Sun, 29 Feb 1900 08:49:37 GMT"); /* 1900 is not a leap year */
  expect_invalid("Sun, 06 Foo 1994 08:49:37 GMT");
  expect_invalid("Sun, 06 Nov 1994 24:00:00 GMT");
  expect_invalid("Sun, 06 Nov 1994 08:49:37 GMT junk");
  expect_invalid("Sun Nov 6 08:49:37 1994"); /* asctime pads the day with a space */
  expect_invalid("1994-11-06T08:49:37Z");
}
