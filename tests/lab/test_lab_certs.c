/* test_lab_certs.c — the replay's leaf certificate (lab_run_certs, run_load.c) names every
 * host of a page in the form a client checks: IPv4 and IPv6 literals as IP entries, names
 * in their canonical spelling and as the plan spells them, however many and however long;
 * a leaf made for other hosts is made again. Checked with `openssl x509 -checkhost` and
 * `-checkip` (skipped without openssl). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

static char dir[64];

static void make_dir(void) {
  if (system("command -v openssl >/dev/null 2>&1") != 0) cr_skip_test("no openssl");
  snprintf(dir, sizeof dir, "/tmp/speedy-certs-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
}

static void remove_dir(void) {
  if (dir[0] == '\0') return;
  char command[128];
  snprintf(command, sizeof command, "rm -rf '%s'", dir);
  cr_assert_eq(system(command), 0);
}

TestSuite(certs, .init = make_dir, .fini = remove_dir, .timeout = 60);

/* A plan with these hosts (names, port 443); its leaf under dir/page. */
static void make_leaf(const char *const *names, size_t n) {
  json_t *hosts = json_array();
  for (size_t i = 0; i < n; i++)
    json_array_append_new(hosts, json_pack("{s:s, s:i}", "name", names[i], "port", 443));
  json_t *plan = json_pack("{s:o}", "hosts", hosts);
  char ca[128], page[128], err[512];
  snprintf(ca, sizeof ca, "%s/ca", dir);
  snprintf(page, sizeof page, "%s/page", dir);
  cr_assert_eq(lab_run_certs(ca, page, plan, err, sizeof err), 0, "%s", err);
  json_decref(plan);
}

/* 1 when the page's leaf passes `openssl x509 -check<kind> value`. */
static int leaf_covers(const char *kind, const char *value) {
  char command[512];
  snprintf(command, sizeof command,
           "openssl x509 -in '%s/page/leaf.pem' -noout -check%s '%s' | grep -q ' does match'", dir,
           kind, value);
  return system(command) == 0;
}

Test(certs, ip_literals_are_ip_entries) {
  const char *hosts[] = {"www.ipv4.test", "193.164.197.30", "[2001:db8::20]", "172.19.77.100"};
  make_leaf(hosts, 4);
  cr_assert(leaf_covers("ip", "193.164.197.30"));
  cr_assert(leaf_covers("ip", "172.19.77.100"));
  cr_assert(leaf_covers("ip", "2001:db8::20"));
  cr_assert(leaf_covers("ip", "2001:db8:0:0::20"), "the same address in another text");
  cr_assert(leaf_covers("host", "www.ipv4.test"));
  cr_assert(!leaf_covers("ip", "192.0.2.99"), "only the page's addresses");
}

Test(certs, every_spelling_a_plan_may_hold) {
  const char *hosts[] = {"WWW.Example.TEST.", "cdn.example.test", "xn--bcher-kva.test",
                         "shard_1.example.test"};
  make_leaf(hosts, 4);
  cr_assert(leaf_covers("host", "www.example.test"), "canonical");
  cr_assert(leaf_covers("host", "www.example.test."), "as the plan spells it");
  cr_assert(leaf_covers("host", "WWW.EXAMPLE.TEST"), "case never matters");
  cr_assert(leaf_covers("host", "xn--bcher-kva.test"));
  cr_assert(leaf_covers("host", "shard_1.example.test"));
  cr_assert(!leaf_covers("host", "other.example.test"));
}

Test(certs, many_long_names_all_fit) {
  /* 150 names of 90 bytes: 14 kB of subjectAltName. */
  char(*names)[96] = calloc(150, sizeof *names);
  const char *hosts[150];
  for (int i = 0; i < 150; i++) {
    snprintf(names[i], sizeof names[i],
             "shard-%03d.a-rather-long-content-delivery-network-name.static-assets.many.test", i);
    hosts[i] = names[i];
  }
  make_leaf(hosts, 150);
  cr_assert(leaf_covers("host", names[0]));
  cr_assert(leaf_covers("host", names[149]), "the last of 150 names");
  free(names);
}

Test(certs, a_leaf_for_other_hosts_is_made_again) {
  const char *first[] = {"a.example.test"};
  make_leaf(first, 1);
  cr_assert(leaf_covers("host", "a.example.test"));
  const char *second[] = {"b.example.test", "192.0.2.7"};
  make_leaf(second, 2); /* the same page directory: a resumed run's page 0 may be another */
  cr_assert(leaf_covers("host", "b.example.test"));
  cr_assert(leaf_covers("ip", "192.0.2.7"));
  cr_assert(!leaf_covers("host", "a.example.test"));
}
