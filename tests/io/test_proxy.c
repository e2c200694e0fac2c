/* test_proxy.c — the PROXY protocol parser (src/io/proxy.c) against HAProxy's
 * proxy-protocol.txt: version 1 lines and version 2 headers, valid and malformed, each fed
 * whole and one byte at a time (both must end the same way, at the same byte).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "proxy.h"

/* The outcome of a feed: the status, after how many bytes it was decided, and the
 * result (or error phrase). */
typedef struct outcome {
  int status;
  size_t decided_at; /* bytes given when the status was returned (len for NEED_MORE) */
  io_proxy_result result;
} outcome;

/* Feeds every prefix of the buffer, as a connection that receives one byte per read
 * would, and stops at the first answer that is not NEED_MORE. */
static outcome feed_bytewise(const uint8_t *data, size_t len) {
  outcome o = {.status = IO_PROXY_NEED_MORE, .decided_at = len};
  for (size_t n = 1; n <= len; n++) {
    io_proxy_result r;
    memset(&r, 0xa5, sizeof(r)); /* NEED_MORE must leave it alone; DONE must fill it */
    int status = io_proxy_parse(data, n, &r);
    if (status == IO_PROXY_NEED_MORE) continue;
    o.status = status;
    o.decided_at = n;
    o.result = r;
    break;
  }
  return o;
}

static int same_address(const io_proxy_address *a, const io_proxy_address *b) {
  return a->family == b->family && a->port == b->port && memcmp(a->addr, b->addr, 16) == 0;
}

static int same_result(const io_proxy_result *a, const io_proxy_result *b) {
  return a->header_len == b->header_len && a->version == b->version &&
         a->has_addresses == b->has_addresses &&
         (!a->has_addresses ||
          (same_address(&a->source, &b->source) && same_address(&a->destination, &b->destination)));
}

/* Parses the whole buffer and one byte at a time, checks both agree, returns the whole
 * one's outcome. */
static outcome parse_both(const void *bytes, size_t len) {
  const uint8_t *data = bytes;
  outcome whole = {.decided_at = len};
  memset(&whole.result, 0, sizeof(whole.result));
  whole.status = io_proxy_parse(data, len, &whole.result);
  outcome bytewise = feed_bytewise(data, len);
  cr_assert_eq(bytewise.status, whole.status,
               "one byte at a time gave %d, the whole buffer %d (%s / %s)", bytewise.status,
               whole.status, bytewise.status == IO_PROXY_ERROR ? bytewise.result.error : "-",
               whole.status == IO_PROXY_ERROR ? whole.result.error : "-");
  if (whole.status == IO_PROXY_ERROR) {
    cr_assert_str_eq(bytewise.result.error, whole.result.error, "the same error reason either way");
  } else if (whole.status == IO_PROXY_DONE) {
    cr_assert_eq(bytewise.decided_at, whole.result.header_len,
                 "one byte at a time finishes at the header's last byte (%zu, header %zu)",
                 bytewise.decided_at, whole.result.header_len);
    cr_assert(same_result(&bytewise.result, &whole.result), "the same result either way");
  }
  whole.decided_at = bytewise.decided_at;
  return whole;
}

#define S(literal) literal, sizeof(literal) - 1

static outcome expect_done(const void *bytes, size_t len, size_t header_len) {
  outcome o = parse_both(bytes, len);
  cr_assert_eq(o.status, IO_PROXY_DONE, "expected a valid header, got %d (%s)", o.status,
               o.status == IO_PROXY_ERROR ? o.result.error : "need more");
  cr_assert_eq(o.result.header_len, header_len, "header of %zu bytes, expected %zu",
               o.result.header_len, header_len);
  return o;
}

/* Refused, with a reason containing `reason`, after exactly `at` bytes when fed one at a
 * time (0: do not check where). */
static void expect_error(const void *bytes, size_t len, const char *reason, size_t at) {
  outcome o = parse_both(bytes, len);
  cr_assert_eq(o.status, IO_PROXY_ERROR, "expected a refusal (%s), got %d", reason, o.status);
  cr_assert(strstr(o.result.error, reason) != NULL, "reason \"%s\", expected one with \"%s\"",
            o.result.error, reason);
  if (at) cr_assert_eq(o.decided_at, at, "refused after %zu bytes, expected %zu", o.decided_at, at);
}

static void expect_need_more(const void *bytes, size_t len) {
  outcome o = parse_both(bytes, len);
  cr_assert_eq(o.status, IO_PROXY_NEED_MORE, "expected NEED_MORE, got %d (%s)", o.status,
               o.status == IO_PROXY_ERROR ? o.result.error : "done");
}

static void expect_address(const io_proxy_address *a, const char *text) {
  char buf[64];
  cr_assert_eq(io_proxy_format_address(a, buf, sizeof(buf)), 0);
  cr_assert_str_eq(buf, text);
}

/* ---- Version 1 ------------------------------------------------------------------- */

Test(proxy_v1, tcp4_line_gives_the_addresses_and_leaves_the_request) {
  const char input[] = "PROXY TCP4 192.0.2.1 198.51.100.22 56324 443\r\nGET / HTTP/1.1\r\n\r\n";
  outcome o = expect_done(S(input), 46);
  cr_assert_eq(o.result.version, 1);
  cr_assert_eq(o.result.has_addresses, 1);
  expect_address(&o.result.source, "192.0.2.1:56324");
  expect_address(&o.result.destination, "198.51.100.22:443");
}

Test(proxy_v1, tcp6_line_gives_the_addresses) {
  outcome o = expect_done(S("PROXY TCP6 2001:db8::1 ::1 0 65535\r\n"), 36);
  cr_assert_eq(o.result.has_addresses, 1);
  cr_assert_eq(o.result.source.family, 6);
  expect_address(&o.result.source, "[2001:db8::1]:0");
  expect_address(&o.result.destination, "[::1]:65535");
}

Test(proxy_v1, longest_tcp6_line_of_104_bytes) {
  const char input[] = "PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
                       "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
  cr_assert_eq(sizeof(input) - 1, 104);
  outcome o = expect_done(S(input), 104);
  expect_address(&o.result.source, "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535");
}

Test(proxy_v1, unknown_keeps_the_socket_address) {
  outcome o = expect_done(S("PROXY UNKNOWN\r\nGET"), 15);
  cr_assert_eq(o.result.has_addresses, 0);
  o = expect_done(S("PROXY UNKNOWN whatever follows, ignored\r\n"), 41);
  cr_assert_eq(o.result.has_addresses, 0);
}

Test(proxy_v1, unknown_worst_case_of_107_bytes_is_accepted) {
  const char input[] = "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
                       "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n";
  cr_assert_eq(sizeof(input) - 1, IO_PROXY_V1_MAX);
  expect_done(S(input), IO_PROXY_V1_MAX);
}

Test(proxy_v1, line_of_108_bytes_is_refused_at_the_108th_byte) {
  const char input[] = "PROXY UNKNOWN ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff "
                       "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 655355\r\n";
  expect_error(S(input), "no CRLF in the first 107 bytes", 107);
}

Test(proxy_v1, endless_line_is_refused_after_107_bytes) {
  char input[400];
  memset(input, 'a', sizeof(input));
  memcpy(input, "PROXY UNKNOWN ", 14);
  expect_error(input, sizeof(input), "no CRLF in the first 107 bytes", 107);
}

Test(proxy_v1, incomplete_lines_need_more) {
  expect_need_more(S("P"));
  expect_need_more(S("PROXY"));
  expect_need_more(S("PROXY TCP4 192.0.2.1 198.51.100.22 56324 443"));
  expect_need_more(S("PROXY TCP4 192.0.2.1 198.51.100.22 56324 443\r"));
}

Test(proxy_v1, http_request_is_refused_at_its_first_byte) {
  expect_error(S("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "no PROXY protocol header", 1);
}

Test(proxy_v1, tls_client_hello_is_refused_at_its_first_byte) {
  const uint8_t hello[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc};
  expect_error(hello, sizeof(hello), "no PROXY protocol header", 1);
}

Test(proxy_v1, signature_must_be_upper_case_proxy_and_one_space) {
  expect_error(S("proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), "no PROXY protocol header", 1);
  expect_error(S("PROXYTCP4 1.2.3.4 5.6.7.8 1 2\r\n"), "no PROXY protocol header", 6);
  expect_error(S("PRONY TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), "no PROXY protocol header", 4);
}

Test(proxy_v1, unknown_protocol_is_refused) {
  expect_error(S("PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n"), "not TCP4, TCP6 or UNKNOWN", 0);
  expect_error(S("PROXY tcp4 1.2.3.4 5.6.7.8 1 2\r\n"), "not TCP4, TCP6 or UNKNOWN", 0);
  expect_error(S("PROXY UNKNOWNX\r\n"), "not TCP4, TCP6 or UNKNOWN", 0);
  expect_error(S("PROXY \r\n"), "no protocol", 0);
  expect_error(S("PROXY  TCP4 1.2.3.4 5.6.7.8 1 2\r\n"), "no protocol", 0);
}

Test(proxy_v1, fields_must_be_delimited_by_exactly_one_space) {
  expect_error(S("PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n"), "address is missing", 0);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8  1 2\r\n"), "port is missing", 0);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 \r\n"), "more fields", 0);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n"), "more fields", 0);
  expect_error(S("PROXY TCP4\tTCP4 1.2.3.4 5.6.7.8 1 2\r\n"), "v1: a byte that is not printable",
               11);
}

Test(proxy_v1, missing_fields_are_refused) {
  expect_error(S("PROXY TCP4\r\n"), "address is missing", 0);
  expect_error(S("PROXY TCP4 1.2.3.4\r\n"), "address is missing", 0);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8\r\n"), "port is missing", 0);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n"), "port is missing", 0);
}

Test(proxy_v1, bad_ipv4_addresses_are_refused) {
  static const char *const bad[] = {
      "PROXY TCP4 192.0.2.01 5.6.7.8 1 2\r\n", /* a leading zero */
      "PROXY TCP4 256.0.0.1 5.6.7.8 1 2\r\n",  "PROXY TCP4 1.2.3 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3.4.5 5.6.7.8 1 2\r\n",  "PROXY TCP4 1..3.4 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3. 5.6.7.8 1 2\r\n",     "PROXY TCP4 .1.2.3 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3.4 ::1 1 2\r\n", /* IPv6 under TCP4 */
      "PROXY TCP4 1.2.3.x 5.6.7.8 1 2\r\n",    "PROXY TCP4 1.2.3.-4 5.6.7.8 1 2\r\n",
      "PROXY TCP4 1.2.3.1000 5.6.7.8 1 2\r\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    expect_error(bad[i], strlen(bad[i]), "bad IPv4 address", 0);
}

Test(proxy_v1, bad_ipv6_addresses_are_refused) {
  static const char *const bad[] = {
      "PROXY TCP6 1.2.3.4 ::1 1 2\r\n", /* IPv4 under TCP6 */
      "PROXY TCP6 2001:db8::g ::1 1 2\r\n",       "PROXY TCP6 2001:db8:::1 ::1 1 2\r\n",
      "PROXY TCP6 1:2:3:4:5:6:7:8:9 ::1 1 2\r\n", "PROXY TCP6 1::2::3 ::1 1 2\r\n",
      "PROXY TCP6 12345::1 ::1 1 2\r\n",          "PROXY TCP6 [::1] ::1 1 2\r\n",
      "PROXY TCP6 ::1%eth0 ::1 1 2\r\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    expect_error(bad[i], strlen(bad[i]), "bad IPv6 address", 0);
}

Test(proxy_v1, bad_ports_are_refused) {
  static const char *const bad[] = {
      "PROXY TCP4 1.2.3.4 5.6.7.8 0443 2\r\n",   "PROXY TCP4 1.2.3.4 5.6.7.8 1 65536\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 1 100000\r\n", "PROXY TCP4 1.2.3.4 5.6.7.8 -1 2\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 +1 2\r\n",     "PROXY TCP4 1.2.3.4 5.6.7.8 1 2x\r\n",
      "PROXY TCP4 1.2.3.4 5.6.7.8 00 2\r\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    expect_error(bad[i], strlen(bad[i]), "bad port", 0);
}

Test(proxy_v1, lone_cr_or_lf_is_refused_where_it_is_seen) {
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX"), "CR without LF", 32);
  expect_error(S("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n"), "LF without CR", 31);
  expect_error(S("PROXY UNKNOWN\n\r\n"), "LF without CR", 14);
}

Test(proxy_v1, bytes_that_are_not_printable_ascii_are_refused) {
  const char nul[] = "PROXY TCP4 1.2.3.4\0 5.6.7.8 1 2\r\n";
  expect_error(nul, sizeof(nul) - 1, "not printable", 19);
  expect_error(S("PROXY UNKNOWN \x80\r\n"), "not printable", 15);
  expect_error(S("PROXY UNKNOWN \x7f\r\n"), "not printable", 15);
}

/* ---- Version 2 ------------------------------------------------------------------- */

#define SIG 0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a

Test(proxy_v2, proxy_tcp4_gives_the_addresses_and_leaves_the_request) {
  const uint8_t input[] = {SIG, 0x21, 0x11, 0x00, 12,   192,  0,   2,   1,   198, 51,
                           100, 22,   0xdc, 0x04, 0x01, 0xbb, 'G', 'E', 'T', ' ', '/'};
  outcome o = expect_done(input, sizeof(input), 28);
  cr_assert_eq(o.result.version, 2);
  cr_assert_eq(o.result.has_addresses, 1);
  expect_address(&o.result.source, "192.0.2.1:56324");
  expect_address(&o.result.destination, "198.51.100.22:443");
}

Test(proxy_v2, proxy_tcp6_gives_the_addresses) {
  uint8_t input[16 + 36] = {SIG, 0x21, 0x21, 0x00, 36};
  input[16] = 0x20, input[17] = 0x01, input[18] = 0x0d, input[19] = 0xb8, input[31] = 1;
  input[16 + 31] = 1; /* ::1 */
  input[48] = 0x30, input[49] = 0x39, input[50] = 0x00, input[51] = 0x50;
  outcome o = expect_done(input, sizeof(input), 52);
  cr_assert_eq(o.result.source.family, 6);
  expect_address(&o.result.source, "[2001:db8::1]:12345");
  expect_address(&o.result.destination, "[::1]:80");
}

Test(proxy_v2, local_keeps_the_socket_address_and_skips_its_block) {
  const uint8_t empty[] = {SIG, 0x20, 0x00, 0x00, 0x00, 'G'};
  outcome o = expect_done(empty, sizeof(empty), 16);
  cr_assert_eq(o.result.has_addresses, 0);
  /* 2.2: the family is ignored and the length honoured even for LOCAL. */
  const uint8_t block[] = {SIG, 0x20, 0xff, 0x00, 0x03, 1, 2, 3, 'G'};
  o = expect_done(block, sizeof(block), 19);
  cr_assert_eq(o.result.has_addresses, 0);
}

Test(proxy_v2, unspec_udp_and_unix_keep_the_socket_address) {
  const uint8_t unspec[] = {SIG, 0x21, 0x00, 0x00, 0x02, 9, 9};
  outcome o = expect_done(unspec, sizeof(unspec), 18);
  cr_assert_eq(o.result.has_addresses, 0);
  const uint8_t udp4[] = {SIG, 0x21, 0x12, 0x00, 12, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0, 2};
  o = expect_done(udp4, sizeof(udp4), 28);
  cr_assert_eq(o.result.has_addresses, 0);
  uint8_t unix_stream[16 + 216] = {SIG, 0x21, 0x31, 0x00, 216};
  o = expect_done(unix_stream, sizeof(unix_stream), sizeof(unix_stream));
  cr_assert_eq(o.result.has_addresses, 0);
}

Test(proxy_v2, tlvs_are_skipped) {
  const uint8_t input[] = {
      SIG,  0x21, 0x11, 0x00, 12 + 7 + 3 + 4, 10,   0,    0,   1,   10,  0,   0, 2,
      0,    1,    0,    2,    0x01,           0x00, 0x04, 'h', '2', 'x', 'y', /* ALPN */
      0x04, 0x00, 0x00,                                                       /* NOOP, empty */
      0xe0, 0x00, 0x01, 0x7f,                                                 /* custom */
      'G'};
  outcome o = expect_done(input, sizeof(input), sizeof(input) - 1);
  expect_address(&o.result.source, "10.0.0.1:1");
}

Test(proxy_v2, largest_header_of_4096_bytes_is_accepted) {
  static uint8_t input[IO_PROXY_V2_MAX + 1];
  const uint8_t head[] = {SIG, 0x21, 0x11, (IO_PROXY_V2_MAX - 16) >> 8,
                          (IO_PROXY_V2_MAX - 16) & 0xff};
  memcpy(input, head, sizeof(head));
  /* addresses (12), then one NOOP TLV filling the rest */
  size_t tlv_len = IO_PROXY_V2_MAX - 16 - 12 - 3;
  input[28] = 0x04, input[29] = (uint8_t)(tlv_len >> 8), input[30] = (uint8_t)tlv_len;
  input[IO_PROXY_V2_MAX] = 'G';
  expect_done(input, sizeof(input), IO_PROXY_V2_MAX);
}

Test(proxy_v2, longer_header_is_refused_once_its_length_is_known) {
  const uint8_t input[] = {
      SIG, 0x21, 0x11, (IO_PROXY_V2_MAX - 15) >> 8, (IO_PROXY_V2_MAX - 15) & 0xff, 1, 2, 3};
  expect_error(input, sizeof(input), "over 4096 bytes", 16);
  const uint8_t largest[] = {SIG, 0x20, 0x00, 0xff, 0xff};
  expect_error(largest, sizeof(largest), "over 4096 bytes", 16);
}

Test(proxy_v2, incomplete_headers_need_more) {
  const uint8_t input[] = {SIG, 0x21, 0x11, 0x00, 12,   192,  0,    2,   1,
                           198, 51,   100,  22,   0xdc, 0x04, 0x01, 0xbb};
  for (size_t n = 1; n < sizeof(input); n++) expect_need_more(input, n);
}

Test(proxy_v2, bad_signature_is_refused_at_the_first_wrong_byte) {
  const uint8_t input[] = {0x0d, 0x0a, 0x0d, 0x0a, 0x01, 0x0d, 0x0a, 0x51,
                           0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0x00, 0x00};
  expect_error(input, sizeof(input), "v2: bad signature", 5);
  const uint8_t crlf[] = {0x0d, 0x0a, 'G', 'E', 'T'};
  expect_error(crlf, sizeof(crlf), "v2: bad signature", 3);
}

Test(proxy_v2, versions_other_than_2_are_refused) {
  const uint8_t v1[] = {SIG, 0x11, 0x11, 0x00, 0x00};
  expect_error(v1, sizeof(v1), "version is not 2", 13);
  const uint8_t v3[] = {SIG, 0x31, 0x11, 0x00, 0x00};
  expect_error(v3, sizeof(v3), "version is not 2", 13);
}

Test(proxy_v2, unknown_commands_are_refused) {
  for (unsigned command = 2; command < 16; command++) {
    const uint8_t input[] = {SIG, (uint8_t)(0x20 | command), 0x11, 0x00, 0x00};
    expect_error(input, sizeof(input), "unknown command", 13);
  }
}

Test(proxy_v2, unknown_families_and_transports_are_refused) {
  const uint8_t family[] = {SIG, 0x21, 0x41, 0x00, 0x00};
  expect_error(family, sizeof(family), "unknown address family or transport", 14);
  const uint8_t transport[] = {SIG, 0x21, 0x13, 0x00, 0x00};
  expect_error(transport, sizeof(transport), "unknown address family or transport", 14);
}

Test(proxy_v2, address_blocks_shorter_than_the_family_are_refused) {
  const uint8_t tcp4[] = {SIG, 0x21, 0x11, 0x00, 11, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0};
  expect_error(tcp4, sizeof(tcp4), "shorter than its family needs", 27);
  uint8_t tcp6[16 + 35] = {SIG, 0x21, 0x21, 0x00, 35};
  expect_error(tcp6, sizeof(tcp6), "shorter than its family needs", sizeof(tcp6));
  const uint8_t tcp6_as_4[] = {SIG, 0x21, 0x21, 0x00, 12, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 0, 2};
  expect_error(tcp6_as_4, sizeof(tcp6_as_4), "shorter than its family needs", 28);
  uint8_t unix_stream[16 + 215] = {SIG, 0x21, 0x31, 0x00, 215};
  expect_error(unix_stream, sizeof(unix_stream), "shorter than its family needs",
               sizeof(unix_stream));
}

Test(proxy_v2, tlvs_that_do_not_fit_are_refused) {
  const uint8_t truncated[] = {SIG, 0x21, 0x11, 0x00, 14, 1, 2, 3,    4,   5,
                               6,   7,    8,    0,    1,  0, 2, 0x04, 0x00};
  expect_error(truncated, sizeof(truncated), "truncated TLV", sizeof(truncated));
  const uint8_t too_long[] = {SIG, 0x21, 0x11, 0x00, 16, 1, 2,    3,    4,    5,  6,
                              7,   8,    0,    1,    0,  2, 0x01, 0x00, 0x02, 'h'};
  expect_error(too_long, sizeof(too_long), "TLV longer than the header", sizeof(too_long));
  const uint8_t wraps[] = {SIG, 0x21, 0x11, 0x00, 15, 1, 2, 3,    4,    5,
                           6,   7,    8,    0,    1,  0, 2, 0x01, 0xff, 0xff};
  expect_error(wraps, sizeof(wraps), "TLV longer than the header", sizeof(wraps));
}

/* ---- Formatting ------------------------------------------------------------------ */

Test(proxy_format, short_buffers_are_refused_with_an_empty_string) {
  io_proxy_address a = {.family = 4, .addr = {192, 0, 2, 1}, .port = 65535};
  char buf[16]; /* "192.0.2.1:65535" needs 16 with its NUL */
  cr_assert_eq(io_proxy_format_address(&a, buf, sizeof(buf)), 0);
  cr_assert_str_eq(buf, "192.0.2.1:65535");
  cr_assert_eq(io_proxy_format_address(&a, buf, 15), -1);
  cr_assert_str_eq(buf, "");
}
