/* test_netem_overflow.c — `speedy netem`'s numeric options (src/netem/cli.c) at and past
 * their bounds, and the default queue (model.c) at the largest rate and round trip they
 * allow: rates of 20 digits, 1 Tbit/s and just over, infinity and NaN; queue sizes of
 * 2^64 - 1, 2^30 and one more; packet counts and initcwnd that would wrap 32 bits; times
 * past an hour; seeds with a sign or past 2^64.
 *
 * Every run ends with an option that is always refused (--loss-dir sideways), so
 * netem_cli_main returns 2 before it could build a link even when run as root; the message
 * on stderr tells which option was refused. No root, namespaces or TUN device needed.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"
#include "netem.h"
#include "netem_cli.h"

static char messages[4096];

/* Runs `netem OPTION VALUE --loss-dir sideways` and returns the option netem_cli_main
 * refused ("down", "queue", ... from its message), in a static buffer. */
static const char *refused_option(const char *option, const char *value) {
  char opt[64], val[128], dir[] = "--loss-dir", sideways[] = "sideways", name[] = "netem";
  snprintf(opt, sizeof(opt), "%s", option);
  snprintf(val, sizeof(val), "%s", value);
  char *argv[] = {name, opt, val, dir, sideways, NULL};
  char path[] = "/tmp/speedy-netem-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  unlink(path);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  cr_assert_geq(saved, 0);
  dup2(fd, STDERR_FILENO);
  optind = 0; /* getopt starts over */
  int rv = netem_cli_main(5, argv);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  ssize_t n = pread(fd, messages, sizeof(messages) - 1, 0);
  close(fd);
  messages[n > 0 ? n : 0] = '\0';
  cr_assert_eq(rv, 2, "%s %s: exit status %d, expected 2 (bad usage); stderr: %s", option, value,
               rv, messages);
  static char which[32];
  /* cli_option_error's one style: "speedy netem: bad --OPTION 'VALUE': expected ..." */
  const char *at = strstr(messages, "speedy netem: bad --");
  cr_assert_not_null(at, "%s %s: no 'bad --OPTION' message: %s", option, value, messages);
  sscanf(at + strlen("speedy netem: bad --"), "%31[a-z-]", which);
  return which;
}

static void expect_refused(const char *option, const char *value) {
  cr_assert_str_eq(refused_option(option, value), option + 2, "%s %s was accepted", option, value);
}

static void expect_accepted(const char *option, const char *value) {
  cr_assert_str_eq(refused_option(option, value), "loss-dir", "%s %s was refused", option, value);
}

/* ---- rates ------------------------------------------------------------------------------ */

Test(overflow_netem_cli, rate_of_twenty_digits_kbit_is_refused) {
  expect_refused("--down", "99999999999999999999kbit");
  expect_refused("--up", "99999999999999999999kbit");
}

Test(overflow_netem_cli, rate_of_1_tbit_is_the_largest_accepted) {
  expect_accepted("--down", "1000G");
  expect_accepted("--down", "1000000000000");
  expect_refused("--down", "1000.001G");
  expect_refused("--down", "1000000000001");
}

Test(overflow_netem_cli, rate_of_2_pow_64_bit_is_refused) {
  expect_refused("--down", "18446744073709551616");
  expect_refused("--up", "18446744073709551615bps");
}

Test(overflow_netem_cli, infinite_nan_and_out_of_range_rates_are_refused) {
  expect_refused("--down", "inf");
  expect_refused("--down", "nan");
  expect_refused("--down", "1e309");
  expect_refused("--down", "-1");
  expect_refused("--down", "-0.5M");
}

/* ---- queue and counts ------------------------------------------------------------------- */

Test(overflow_netem_cli, queue_of_2_pow_64_minus_1_is_refused) {
  expect_refused("--queue", "18446744073709551615");
  expect_refused("--queue", "18446744073709551616");
}

Test(overflow_netem_cli, queue_of_2_pow_30_is_the_largest_accepted) {
  expect_accepted("--queue", "1073741824");
  expect_refused("--queue", "1073741825");
  expect_accepted("--queue", "1024M");
  expect_refused("--queue", "1074M");
}

Test(overflow_netem_cli, negative_nan_and_unit_less_huge_queues_are_refused) {
  expect_refused("--queue", "-1");
  expect_refused("--queue", "nan");
  expect_refused("--queue", "inf");
  expect_refused("--queue", "1e400");
  expect_refused("--queue", "2G");
}

Test(overflow_netem_cli, queue_packets_that_would_wrap_32_bits_are_refused) {
  expect_accepted("--queue-packets", "60000");
  expect_refused("--queue-packets", "60001");
  expect_refused("--queue-packets", "4294967297");
  expect_refused("--queue-packets", "-0");
}

Test(overflow_netem_cli, initcwnd_and_servers_that_would_wrap_are_refused) {
  expect_refused("--initcwnd", "4294967297");
  expect_refused("--initcwnd", "2147483648");
  expect_refused("--servers", "4294967297");
  expect_accepted("--servers", "4096");
  expect_refused("--servers", "4097");
}

/* ---- times ------------------------------------------------------------------------------- */

Test(overflow_netem_cli, rtt_of_an_hour_is_the_largest_accepted) {
  expect_accepted("--rtt", "3600s");
  expect_refused("--rtt", "3600.001s");
  expect_refused("--rtt", "18446744073709551615ms");
  expect_refused("--rtt", "1e309");
}

Test(overflow_netem_cli, jitter_past_an_hour_is_refused) {
  expect_refused("--jitter", "18446744073709551615us");
  expect_refused("--jitter", "inf");
}

Test(overflow_netem_cli, server_wait_past_600_s_is_refused) {
  expect_refused("--server-wait", "601");
  expect_refused("--server-wait", "1e309");
  expect_refused("--server-wait", "nan");
}

/* ---- seeds ------------------------------------------------------------------------------- */

Test(overflow_netem_cli, seed_of_2_pow_64_minus_1_is_accepted_and_2_pow_64_refused) {
  expect_accepted("--seed", "18446744073709551615");
  expect_refused("--seed", "18446744073709551616");
}

Test(overflow_netem_cli, seed_with_a_sign_or_space_is_refused) {
  /* strtoull takes "-1" as 2^64 - 1: a typo would give another seed than meant. */
  expect_refused("--seed", "-1");
  expect_refused("--seed", "+1");
  expect_refused("--seed", " 1");
  expect_refused("--seed", "-18446744073709551615");
}

/* ---- the default queue at the largest options ----------------------------------------------- */

Test(overflow_netem_model, default_queue_at_1_tbit_and_an_hour_is_one_bdp) {
  /* 10^12 bit/s x 3,600 s / 8 = 4.5 x 10^14 bytes; the plain product overflows 64 bits. */
  cr_assert_eq(netem_model_default_queue_bytes(1000000000000ull, 3600000000000ull),
               450000000000000ull);
}

Test(overflow_netem_model, default_queue_at_100_gbit_and_an_hour_is_one_bdp) {
  cr_assert_eq(netem_model_default_queue_bytes(100000000000ull, 3600000000000ull),
               45000000000000ull);
}

Test(overflow_netem_model, default_queue_keeps_its_exact_value_for_ordinary_links) {
  /* The same values as before the overflow fix (the lab's results depend on them). */
  cr_assert_eq(netem_model_default_queue_bytes(20000000, 100000000), 250000);
  cr_assert_eq(netem_model_default_queue_bytes(375000, 50000000), 16u * NETEM_MTU);
  cr_assert_eq(netem_model_default_queue_bytes(12345678, 123456789),
               (12345678ull / 8u) * (123456789ull / 1000u) / 1000000u);
}

Test(overflow_netem_model, default_queue_saturates_instead_of_wrapping) {
  cr_assert_eq(netem_model_default_queue_bytes(UINT64_MAX, UINT64_MAX), UINT64_MAX);
  uint64_t q = netem_model_default_queue_bytes(UINT64_MAX, 1000000000ull); /* 1 s */
  cr_assert_geq(q, UINT64_MAX / 8 / 2, "2^64 bit/s for 1 s is 2^61 bytes, got %llu",
                (unsigned long long)q);
}

Test(overflow_netem_model, serialization_of_the_largest_packet_at_1_bit_per_second) {
  /* len * 8 * 10^9 for len = 2^31 - 1 is below 2^64. */
  cr_assert_eq(netem_model_serialization_ns(1, 0x7fffffffu), 0x7fffffffull * 8u * 1000000000u);
}
