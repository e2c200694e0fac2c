/* test_cli_overflow.c — cli_parse_u64 (src/cli/cli.c), the numeric option parser of
 * speedyd, speedy get, speedy load and speedy bench, around UINT64_MAX and against what
 * strtoull would let through: a sign ("-1" is 2^64 - 1 to strtoull), leading or trailing
 * space, hex, exponents, suffixes. Here rather than in a tests/cli/ of its own: the loader
 * is one of its users, and this directory already builds against it.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

static void expect_value(const char *text, uint64_t want) {
  uint64_t out = 42;
  cr_assert_eq(cli_parse_u64(text, 0, UINT64_MAX, &out), 0, "'%s' was refused", text);
  cr_assert_eq(out, want, "'%s' gave %llu", text, (unsigned long long)out);
}

static void expect_refused_in(const char *text, uint64_t min, uint64_t max) {
  uint64_t out = 42;
  cr_assert_eq(cli_parse_u64(text, min, max, &out), -1, "'%s' was accepted as %llu",
               text != NULL ? text : "(null)", (unsigned long long)out);
  cr_assert_eq(out, 42, "*out written on error");
}

static void expect_refused(const char *text) { expect_refused_in(text, 0, UINT64_MAX); }

Test(overflow_cli, uint64_max_is_accepted) { expect_value("18446744073709551615", UINT64_MAX); }

Test(overflow_cli, uint64_max_plus_one_is_refused) { expect_refused("18446744073709551616"); }

Test(overflow_cli, far_past_uint64_max_is_refused) {
  expect_refused("99999999999999999999999999999999999999");
  expect_refused("36893488147419103232"); /* 2^65: would wrap to 0 */
  expect_refused("18446744073709551617"); /* 2^64 + 1: would wrap to 1 */
}

Test(overflow_cli, leading_zeros_do_not_count_as_magnitude) {
  expect_value("0000000000000000000000018446744073709551615", UINT64_MAX);
  expect_value("000", 0);
}

Test(overflow_cli, a_leading_minus_is_refused_not_wrapped) {
  expect_refused("-1");
  expect_refused("-0");
  expect_refused("-18446744073709551615");
  expect_refused("-18446744073709551616");
}

Test(overflow_cli, a_leading_plus_is_refused) {
  expect_refused("+1");
  expect_refused("+18446744073709551615");
}

Test(overflow_cli, whitespace_anywhere_is_refused) {
  expect_refused(" 1");
  expect_refused("\t1");
  expect_refused("\n1");
  expect_refused("1 ");
  expect_refused("1\n");
  expect_refused("1 000");
}

Test(overflow_cli, hex_octal_exponents_and_suffixes_are_not_decimal) {
  expect_refused("0x10");
  expect_refused("0X10");
  expect_value("010", 10); /* decimal, not octal */
  expect_refused("1e3");
  expect_refused("1.0");
  expect_refused("1k");
  expect_refused("18446744073709551615k");
}

Test(overflow_cli, empty_and_null_are_refused) {
  expect_refused("");
  expect_refused(NULL);
}

Test(overflow_cli, bounds_are_inclusive_at_both_ends) {
  uint64_t out = 0;
  cr_assert_eq(cli_parse_u64("5", 5, 5, &out), 0);
  cr_assert_eq(out, 5);
  expect_refused_in("4", 5, 5);
  expect_refused_in("6", 5, 5);
  cr_assert_eq(cli_parse_u64("18446744073709551615", UINT64_MAX, UINT64_MAX, &out), 0);
  expect_refused_in("18446744073709551615", 0, UINT64_MAX - 1);
  expect_refused_in("18446744073709551614", UINT64_MAX, UINT64_MAX);
  expect_refused_in("0", 1, UINT64_MAX);
}
