/* test_lab_plan.c — HAR pages to page plans (plan.c): the conversion rules on synthetic
 * HARs, and every corpus file's first page accepted by the loader's and the replay
 * server's own plan readers (skipped without $SPEEDY_SHARED_DIR). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab_testutil.h"
#include "load_plan.h"
#include "page.h"
#include "plan.h"
#include "replay.h"

#define ENTRY(started, url, status, req_headers, resp_headers, mime, size)                         \
  "{\"startedDateTime\": \"" started "\", \"time\": 50, \"request\": {\"method\": \"GET\", "       \
  "\"url\": \"" url "\", \"httpVersion\": \"HTTP/1.1\", \"headers\": [" req_headers "], "          \
  "\"bodySize\": 0}, \"response\": {\"status\": " status ", \"statusText\": \"\", "                \
  "\"httpVersion\": \"HTTP/1.1\", \"headers\": [" resp_headers "], \"content\": {\"size\": " size  \
  ", \"mimeType\": \"" mime "\"}, \"redirectURL\": \"\", \"bodySize\": " size "}, \"timings\": "   \
  "{\"send\": 0, \"wait\": 50, \"receive\": 0}, \"connection\": \"1\"}"
#define HAR(entries)                                                                               \
  "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\"}, \"entries\": [" entries "]}}"
#define H(n, v) "{\"name\": \"" n "\", \"value\": \"" v "\"}"
#define DOC_REQ                                                                                    \
  H("Accept", "text/html,*/*") ", " H("Host", "a.test") ", " H("Connection", "keep-alive")
#define REF(u) H("Referer", u)

static json_t *plan_of(const char *json) {
  char err[512];
  lab_har *har = lab_test_load_string("t.har", json, err, sizeof err);
  cr_assert_not_null(har, "%s", err);
  lab_page_options o;
  lab_page_options_default(&o);
  lab_page_set pages;
  cr_assert_eq(lab_pages_extract(har, &o, &pages), 0);
  lab_plan_options po = {.flat_graph = 0, .seed = 5};
  json_t *plan = lab_plan_build(har, &pages, 0, &po, err, sizeof err);
  cr_assert_not_null(plan, "%s", err);
  lab_pages_free(&pages);
  lab_har_free(har);
  return plan;
}

static const json_t *resource(const json_t *plan, size_t i) {
  const json_t *r = json_array_get(json_object_get(plan, "resources"), i);
  cr_assert_not_null(r, "resource %zu", i);
  return r;
}

static const char *header(const json_t *list, const char *name) {
  size_t i;
  const json_t *pair;
  json_array_foreach(list, i, pair) if (strcmp(json_string_value(json_array_get(pair, 0)), name) ==
                                        0) return json_string_value(json_array_get(pair, 1));
  return NULL;
}

static const char *const PAGE = HAR(ENTRY(
    "2012-11-03T13:34:16.000Z", "http://a.test/", "301", DOC_REQ,
    H("Location", "http://www.a.test/") ", " H("Content-Length", "0"), "text/html",
    "0") "," ENTRY("2012-11-03T13:34:16.060Z", "http://www.a.test/", "200",
                   DOC_REQ ", " H("If-None-Match", "\\\"x\\\""),
                   H("Content-Type", "text/html") ", " H("Transfer-Encoding", "chunked") ", " H(
                       "Content-Encoding", "gzip"),
                   "text/html",
                   "10000") "," ENTRY("2012-11-03T13:34:16.120Z", "http://cdn.a.test/s.css", "200",
                                      REF("http://www.a.test/"), H("Content-Type", "text/css"),
                                      "text/css",
                                      "2000") "," ENTRY("2012-11-03T13:34:16.130Z",
                                                        "http://cdn.a.test/caf\xc3\xa9 1.png",
                                                        "200", REF("http://www.a.test/"),
                                                        H("Content-Type", "image/png"), "image/png",
                                                        "3000") "," ENTRY("2012-11-03T13:34:16."
                                                                          "250Z",
                                                                          "http://cdn.a.test/"
                                                                          "f.woff",
                                                                          "200",
                                                                          REF("http://cdn.a.test/"
                                                                              "s.css"),
                                                                          H("Content-Type",
                                                                            "application/"
                                                                            "font-woff"),
                                                                          "application/font-woff",
                                                                          "400"));

Test(plan, redirect_points_at_its_target_which_waits_for_it) {
  json_t *plan = plan_of(PAGE);
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 0), "redirect_to")), 1);
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 1), "parent")), 0);
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 1), "discover_offset")), -1);
  cr_assert_null(header(json_object_get(resource(plan, 0), "response_headers"), "location"),
                 "the replay server adds Location itself");
  json_decref(plan);
}

Test(plan, hosts_are_listed_in_order_of_first_use) {
  json_t *plan = plan_of(PAGE);
  const json_t *hosts = json_object_get(plan, "hosts");
  cr_assert_eq(json_array_size(hosts), 3);
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(hosts, 2), "name")),
                   "cdn.a.test");
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 2), "host")), 2);
  json_decref(plan);
}

Test(plan, children_of_html_are_discovered_at_their_position) {
  json_t *plan = plan_of(PAGE);
  /* the CSS is the 1st of 2 children of a 10,000-byte document: 1/3 of it */
  json_int_t offset = json_integer_value(json_object_get(resource(plan, 2), "discover_offset"));
  cr_assert(offset > 0 && offset < 10000, "offset %lld", (long long)offset);
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 4), "parent")), 2,
               "the font is the style sheet's child");
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 4), "discover_offset")), -1,
               "a CSS child waits for the whole style sheet");
  json_decref(plan);
}

Test(plan, types_come_from_the_mime_type) {
  json_t *plan = plan_of(PAGE);
  const char *expected[] = {"document", "document", "css", "image", "font"};
  for (size_t i = 0; i < 5; i++)
    cr_assert_str_eq(json_string_value(json_object_get(resource(plan, i), "type")), expected[i]);
  json_decref(plan);
}

Test(plan, hop_by_hop_coding_and_cold_cache_headers_are_dropped) {
  json_t *plan = plan_of(PAGE);
  const json_t *doc = resource(plan, 1);
  const json_t *req = json_object_get(doc, "request_headers"),
               *resp = json_object_get(doc, "response_headers");
  cr_assert_null(header(req, "host"));
  cr_assert_null(header(req, "connection"));
  cr_assert_null(header(req, "if-none-match"), "a cold load sends no validators");
  cr_assert_str_eq(header(req, "accept"), "text/html,*/*", "names lower-cased, values kept");
  cr_assert_null(header(resp, "transfer-encoding"));
  cr_assert_null(header(resp, "content-encoding"));
  cr_assert_str_eq(header(resp, "content-type"), "text/html");
  json_decref(plan);
}

Test(plan, paths_are_percent_encoded_to_visible_ascii) {
  json_t *plan = plan_of(PAGE);
  cr_assert_str_eq(json_string_value(json_object_get(resource(plan, 3), "path")),
                   "/caf%C3%A9%201.png");
  json_decref(plan);
}

Test(plan, a_repeated_url_is_answered_like_its_first_request) {
  json_t *plan = plan_of(
      HAR(ENTRY("2012-11-03T13:34:16.000Z", "http://a.test/", "200", DOC_REQ,
                H("Content-Type", "text/html"), "text/html",
                "5000") "," ENTRY("2012-11-03T13:34:16.100Z", "http://a.test/x.js", "200",
                                  REF("http://a.test/"), "", "application/javascript",
                                  "700") "," ENTRY("2012-11-03T13:34:16.200Z", "http://a.test/x.js",
                                                   "200", REF("http://a.test/"), "",
                                                   "application/javascript", "900")));
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 2), "body_size")), 700);
  cr_assert_eq(json_integer_value(json_object_get(resource(plan, 2), "repeat_of")), 1);
  json_decref(plan);
}

/* Every corpus file's first page: a plan both readers accept. */
Test(plan_corpus, every_first_page_is_accepted_by_the_loader_and_the_replay_server) {
  char dir[1024];
  lab_test_corpus_path("mnot-craigslist.org.har", dir, sizeof dir);
  static const char *const files[] = {
      "icing-golem.de.har",     "icing-heise.de.har",     "icing-reddit.com.har",
      "icing-spiegel.de.har",   "icing-t-online.de.har",  "icing-vimeo.com.har",
      "icing-web.de.har",       "icing-zalando.de.har",   "mnot-amazon.com.har",
      "mnot-baidu.com.har",     "mnot-bbc.co.uk.har",     "mnot-craigslist.org.har",
      "mnot-ebay.com.har",      "mnot-facebook.com.har",  "mnot-flickr.com.har",
      "mnot-linkedin.com.har",  "mnot-msn.com.har",       "mnot-nytimes.com.har",
      "mnot-pinterest.com.har", "mnot-qq.com.har",        "mnot-sina.com.cn.har",
      "mnot-taobao.com.har",    "mnot-wikipedia.org.har", "mnot-yahoo.co.jp.har",
      "mnot-yahoo.com.har",     "mnot-yandex.ru.har",     "mnot-youtube.com.har"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    lab_har *har = lab_test_load_corpus(files[i]);
    lab_page_options o;
    lab_page_options_default(&o);
    lab_page_set pages;
    cr_assert_eq(lab_pages_extract(har, &o, &pages), 0);
    char err[512];
    for (int flat = 0; flat < 2; flat++) {
      lab_plan_options po = {.flat_graph = flat, .seed = 1};
      json_t *plan = lab_plan_build(har, &pages, 0, &po, err, sizeof err);
      cr_assert_not_null(plan, "%s: %s", files[i], err);
      char *text = json_dumps(plan, JSON_COMPACT);
      load_plan *lp = NULL;
      cr_assert_eq(load_plan_parse(text, strlen(text), &lp, err, sizeof err), 0,
                   "%s: the loader refuses the plan: %s", files[i], err);
      replay_plan *rp = NULL;
      cr_assert_eq(replay_plan_parse(&rp, text, strlen(text), files[i], err, sizeof err), 0,
                   "%s: the replay server refuses the plan: %s", files[i], err);
      cr_assert_eq(lp->n_resources, json_array_size(json_object_get(plan, "resources")));
      load_plan_del(lp);
      replay_plan_del(rp);
      free(text);
      json_decref(plan);
    }
    lab_pages_free(&pages);
    lab_har_free(har);
  }
}

#define ENTRY_AT(started, url, ip)                                                                 \
  "{\"startedDateTime\": \"" started "\", \"time\": 50, \"request\": {\"method\": \"GET\", "       \
  "\"url\": \"" url "\", \"httpVersion\": \"HTTP/1.1\", \"headers\": [" REF(                       \
      "http://www.b.test/") "], \"bodySize\": 0}, \"response\": {\"status\": 200, "                \
                            "\"statusText\": \"\", \"httpVersion\": "                              \
                            "\"HTTP/1.1\", \"headers\": [], \"content\": {\"size\": 100, "         \
                            "\"mimeType\": \"image/png\"}, "                                       \
                            "\"redirectURL\": \"\", \"bodySize\": 100}, \"timings\": {\"send\": "  \
                            "0, \"wait\": 50, "                                                    \
                            "\"receive\": 0}, \"serverIPAddress\": \"" ip                          \
                            "\", \"connection\": \"1\"}"

Test(plan, recorded_server_addresses_group_the_hosts_for_coalescing) {
  json_t *plan = plan_of(HAR(ENTRY(
      "2012-11-03T13:34:16.000Z", "http://www.b.test/", "200", DOC_REQ,
      H("Content-Type", "text/html"), "text/html",
      "1000") "," ENTRY_AT("2012-11-03T13:34:16.100Z", "http://img.b.test/1.png",
                           "192.0.2.7") "," ENTRY_AT("2012-11-03T13:34:16.110Z",
                                                     "http://x.test/2.png",
                                                     "2001:db8::9") "," ENTRY_AT("2012-11-03T13:34:"
                                                                                 "16.120Z",
                                                                                 "http://"
                                                                                 "cdn.b.test/"
                                                                                 "3.png",
                                                                                 "192.0.2.7") "," ENTRY_AT("2012-11-"
                                                                                                           "03T13:"
                                                                                                           "34:16."
                                                                                                           "130Z",
                                                                                                           "http://"
                                                                                                           "y.test/"
                                                                                                           "4.png",
                                                                                                           "not an "
                                                                                                           "addres"
                                                                                                           "s")));
  const json_t *hosts = json_object_get(plan, "hosts");
  cr_assert_eq(json_array_size(hosts), 5);
  cr_assert_null(json_object_get(json_array_get(hosts, 0), "address"), "none recorded");
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(hosts, 1), "address")),
                   "192.0.2.7");
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(hosts, 2), "address")),
                   "2001:db8::9");
  cr_assert_null(json_object_get(json_array_get(hosts, 4), "address"),
                 "a label that is no address");
  unsigned group[5];
  cr_assert_eq(lab_plan_address_groups(plan, group, 5), 4);
  cr_assert_eq(group[0], 0);
  cr_assert_eq(group[1], 1);
  cr_assert_eq(group[2], 2);
  cr_assert_eq(group[3], 1, "cdn.b.test was recorded at img.b.test's address");
  cr_assert_eq(group[4], 3);
  json_decref(plan);
}
