/* test_lab_host.c — one spelling per host (src/lab/host.c): case, trailing dots, IDNs
 * (RFC 3492's own samples), percent-escapes, IPv6 literals, what is refused; and URLs parsed
 * with it (har_load.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "har.h"
#include "host.h"
#include "lab_testutil.h"

static const char *canonical(const char *host) {
  static char out[LAB_HOST_MAX];
  cr_assert_eq(lab_host_canonical(host, strlen(host), out, sizeof out), 0, "'%s' refused", host);
  return out;
}

static void refused(const char *host) {
  char out[LAB_HOST_MAX];
  cr_assert_eq(lab_host_canonical(host, strlen(host), out, sizeof out), -1, "'%s' accepted as '%s'",
               host, out);
}

Test(hosts, lower_case_without_the_trailing_dot) {
  cr_assert_str_eq(canonical("WWW.Example.COM."), "www.example.com");
  cr_assert_str_eq(canonical("www.example.com"), "www.example.com");
  cr_assert_str_eq(canonical("shard_1.cdn-x.test"), "shard_1.cdn-x.test");
  cr_assert_str_eq(canonical("193.164.197.30"), "193.164.197.30");
}

Test(hosts, idn_labels_become_a_labels) {
  cr_assert_str_eq(canonical("b\u00fccher.test"), "xn--bcher-kva.test");
  cr_assert_str_eq(canonical("M\u00dcNCHEN.test."), "xn--mnchen-3ya.test");
  cr_assert_str_eq(canonical("caf\u00e9.example"), "xn--caf-dma.example");
  cr_assert_str_eq(canonical("\u4f8b\u3048.test"), "xn--r8jz45g.test");
  cr_assert_str_eq(canonical("xn--bcher-kva.test"), "xn--bcher-kva.test");
}

/* RFC 3492 7.1 (A) Arabic (Egyptian) and (B) Chinese (simplified). */
Test(hosts, punycode_of_rfc3492_samples) {
  cr_assert_str_eq(canonical("\u0644\u064a\u0647\u0645\u0627\u0628\u062a\u0643\u0644\u0645\u0648"
                             "\u0634\u0639\u0631\u0628\u064a\u061f"),
                   "xn--egbpdaj6bu4bxfgehfvwxn");
  cr_assert_str_eq(canonical("\u4ed6\u4eec\u4e3a\u4ec0\u4e48\u4e0d\u8bf4\u4e2d\u6587"),
                   "xn--ihqwcrb4cv8a8dqg056pqjye");
}

Test(hosts, percent_escapes_are_decoded_first) {
  cr_assert_str_eq(canonical("b%C3%BCcher.test"), "xn--bcher-kva.test");
  cr_assert_str_eq(canonical("%77ww.test"), "www.test");
  refused("a%00b.test");
  refused("a%2.test");
}

Test(hosts, ipv6_literals_in_rfc5952_text) {
  cr_assert_str_eq(canonical("[2001:DB8:0:0::20]"), "[2001:db8::20]");
  cr_assert_str_eq(canonical("[2001:db8::20]"), "[2001:db8::20]");
  cr_assert_str_eq(canonical("[::FFFF:192.0.2.1]"), "[::ffff:192.0.2.1]");
  refused("[2001:db8::g]");
  refused("[fe80::1%25eth0]"); /* a zone names the recording machine's interface */
  refused("[2001:db8::1");
}

Test(hosts, what_no_host_name_holds_is_refused) {
  refused("");
  refused(".");
  refused("a..test");
  refused(".a.test");
  refused("a b.test");
  refused("*.test");
  refused("a/b");
  refused("bad\xff.test"); /* invalid UTF-8 */
  char long_label[80];
  memset(long_label, 'a', 64);
  strcpy(long_label + 64, ".test");
  refused(long_label);
  char long_name[300];
  for (int i = 0; i < 60; i++) memcpy(long_name + 5 * i, "abcd.", 5);
  strcpy(long_name + 300 - 6, "test");
  refused(long_name);
}

Test(hosts, ip_literals_are_told_from_names) {
  cr_assert(lab_host_is_ip("192.0.2.1"));
  cr_assert(lab_host_is_ip("[2001:db8::1]"));
  cr_assert(!lab_host_is_ip("192.0.2.1.example"));
  cr_assert(!lab_host_is_ip("www.example.com"));
}

Test(hosts, urls_carry_the_canonical_host) {
  char err[256];
  lab_har *har = lab_test_load_string("t.har", "{\"log\": {\"entries\": []}}", err, sizeof err);
  cr_assert_not_null(har, "%s", err);
  lab_url url;
  cr_assert_eq(lab_url_parse(har, "HTTP://WWW.Upper.TEST./x?y#z", &url), 0);
  cr_assert_str_eq(url.host, "www.upper.test");
  cr_assert_eq(url.port, 80);
  cr_assert_str_eq(url.path, "/x?y");
  cr_assert_eq(lab_url_parse(har, "https://[2001:DB8::1]:8443/a", &url), 0);
  cr_assert_str_eq(url.host, "[2001:db8::1]");
  cr_assert_eq(url.port, 8443);
  cr_assert_eq(lab_url_parse(har, "http://b\u00fccher.test/", &url), 0);
  cr_assert_str_eq(url.host, "xn--bcher-kva.test");
  cr_assert_eq(lab_url_parse(har, "http://a b.test/", &url), -1, "a space is no host");
  cr_assert_eq(lab_url_parse(har, "http://[::1/", &url), -1);
  lab_har_free(har);
}
