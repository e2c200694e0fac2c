/* test_http_client.c — the clients' fields (src/http/http_client.c): the request's
 * pseudo-header fields, the fields never sent, :status (RFC 9113 8.3). */
#include <criterion/criterion.h>
#include <string.h>

#include "http_client.h"

static void expect_field(const speedy_header *h, const char *name, const char *value) {
  cr_expect_eq(h->name_len, strlen(name), "%s: name length", name);
  cr_expect(memcmp(h->name, name, h->name_len) == 0, "expected %s", name);
  cr_expect_eq(h->value_len, strlen(value), "%s: value length", name);
  cr_expect(memcmp(h->value, value, h->value_len) == 0, "%s: expected %s", name, value);
}

Test(http_client, a_request_has_authority_and_no_version_whatever_the_protocol) {
  speedy_header h[HTTP_CLIENT_MAX_PSEUDO];
  size_t n = http_client_request_pseudo("GET", "https", "a.test:8443", "/x", h);
  cr_assert_eq(n, 4);
  expect_field(&h[0], ":method", "GET");
  expect_field(&h[1], ":scheme", "https");
  expect_field(&h[2], ":authority", "a.test:8443");
  expect_field(&h[3], ":path", "/x");
}

Test(http_client, status_is_three_digits_only) {
  cr_expect_eq(http_client_parse_status("200", 3), 200);
  cr_expect_eq(http_client_parse_status("200 OK", 6), -1,
               "a reason phrase is SPDY's, taken off by libspeedy");
  cr_expect_eq(http_client_parse_status("20", 2), -1);
  cr_expect_eq(http_client_parse_status("2000", 4), -1);
  cr_expect_eq(http_client_parse_status("099", 3), -1);
  cr_expect_eq(http_client_parse_status("2x0", 3), -1);
}

/* RFC 9110 15.2, RFC 9112 6.3: which answers are interim, and which carry no content. */
Test(http_client, interim_statuses_and_statuses_without_content) {
  cr_expect(http_client_is_interim(100));
  cr_expect(http_client_is_interim(103));
  cr_expect(!http_client_is_interim(101), "101 switches protocols: final");
  cr_expect(!http_client_is_interim(200));
  cr_expect(!http_client_status_has_body(103));
  cr_expect(!http_client_status_has_body(204));
  cr_expect(!http_client_status_has_body(304));
  cr_expect(http_client_status_has_body(200));
  cr_expect(http_client_status_has_body(404));
}

Test(http_client, connection_fields_are_never_sent) {
  cr_expect(http_client_is_connection_field(SPEEDY_PROTOCOL_H2, "connection", 10, "close", 5));
  cr_expect(http_client_is_connection_field(SPEEDY_PROTOCOL_SPDY3, "host", 4, "a", 1));
  cr_expect(http_client_is_connection_field(SPEEDY_PROTOCOL_H2, "upgrade", 7, "h2c", 3));
  cr_expect(!http_client_is_connection_field(SPEEDY_PROTOCOL_SPDY3, "upgrade", 7, "x", 1));
  cr_expect(http_client_is_connection_field(SPEEDY_PROTOCOL_H2, "te", 2, "gzip", 4));
  cr_expect(!http_client_is_connection_field(SPEEDY_PROTOCOL_H2, "te", 2, "trailers", 8),
            "RFC 9113 8.2.2: te: trailers is allowed");
  cr_expect(!http_client_is_connection_field(SPEEDY_PROTOCOL_H2, "accept", 6, "*/*", 3));
}

Test(http_client, push_authority) {
  cr_expect(http_client_is_authority(":authority", 10));
  cr_expect(!http_client_is_authority(":host", 5), "libspeedy maps SPDY's :host");
}

Test(http_client, default_offer_puts_h2_first_but_not_over_npn) {
  const char *p[HTTP_CLIENT_MAX_OFFERED];
  size_t n = http_client_default_protocols(0, p);
  cr_assert_eq(n, 5);
  cr_expect_str_eq(p[0], "h2");
  cr_expect_str_eq(p[4], "http/1.1");
  n = http_client_default_protocols(1, p);
  cr_assert_eq(n, 4);
  cr_expect_str_eq(p[0], "spdy/3.1");
}
