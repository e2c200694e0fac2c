/* test_lab_shapes.c — the shapes of browser HARs that broke replays (issue 16, section 2),
 * one behaviour each, on small HARs built here: which page is the first, why a page is
 * skipped, what is left out of a plan and why, how redirects that a replay cannot tell
 * from their targets are handled, hosts in every spelling, and plans of every shape read
 * by the loader's and the replay server's own readers. The generated stress corpus
 * (tests/lab/stress/make_corpus.py, $SPEEDY_STRESS_CORPUS) is checked at the end. */
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

#define DOC "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

/* One entry of a test HAR. */
typedef struct shape {
  double at_ms;
  const char *method, *url;
  int status;
  const char *mime;
  long size;
  const char *page;          /* pageref, or NULL */
  const char *accept;        /* NULL: "* / *" */
  const char *referer;       /* NULL: none */
  const char *location;      /* response Location, or NULL */
  const char *extra;         /* JSON object merged into the entry, or NULL */
  const char *extra_headers; /* JSON array of request headers appended, or NULL */
} shape;

/* A HAR of the entries (and pages "p1", "p2", ... when n_pages > 0), loaded. */
static lab_har *har_of(const shape *entries, size_t n, size_t n_pages) {
  json_t *list = json_array(), *pages = json_array();
  for (size_t p = 0; p < n_pages; p++) {
    char id[16];
    snprintf(id, sizeof id, "p%zu", p + 1);
    json_array_append_new(pages, json_pack("{s:s, s:s, s:s}", "id", id, "title", id,
                                           "startedDateTime", "2012-06-12T10:00:00.000Z"));
  }
  for (size_t i = 0; i < n; i++) {
    const shape *s = &entries[i];
    char started[64];
    snprintf(started, sizeof started, "2012-06-12T10:00:%02d.%03dZ", (int)(s->at_ms / 1000),
             (int)s->at_ms % 1000);
    json_t *request_headers =
        json_pack("[{s:s, s:s}]", "name", "Accept", "value", s->accept ? s->accept : "*/*");
    if (s->referer)
      json_array_append_new(request_headers,
                            json_pack("{s:s, s:s}", "name", "Referer", "value", s->referer));
    if (s->extra_headers) {
      json_t *more = json_loads(s->extra_headers, 0, NULL);
      cr_assert_not_null(more, "extra_headers of entry %zu", i);
      json_array_extend(request_headers, more);
      json_decref(more);
    }
    json_t *response_headers = json_pack("[{s:s, s:s}]", "name", "Content-Type", "value",
                                         s->mime ? s->mime : "text/plain");
    if (s->location)
      json_array_append_new(response_headers,
                            json_pack("{s:s, s:s}", "name", "Location", "value", s->location));
    json_t *e = json_pack(
        "{s:s, s:f, s:{s:s, s:s, s:s, s:o, s:i}, s:{s:i, s:s, s:s, s:o, s:{s:I, s:s}, s:s, "
        "s:I}, s:{s:f, s:f, s:f}}",
        "startedDateTime", started, "time", 40.0, "request", "method",
        s->method ? s->method : "GET", "url", s->url, "httpVersion", "HTTP/1.1", "headers",
        request_headers, "bodySize", 0, "response", "status", s->status, "statusText", "",
        "httpVersion", "HTTP/1.1", "headers", response_headers, "content", "size",
        (json_int_t)s->size, "mimeType", s->mime ? s->mime : "", "redirectURL", "", "bodySize",
        (json_int_t)s->size, "timings", "send", 1.0, "wait", 30.0, "receive", 9.0);
    cr_assert_not_null(e, "entry %zu", i);
    if (s->page) json_object_set_new(e, "pageref", json_string(s->page));
    if (s->extra) {
      json_t *more = json_loads(s->extra, 0, NULL);
      cr_assert_not_null(more, "extra of entry %zu", i);
      json_object_update(e, more);
      json_decref(more);
    }
    json_array_append_new(list, e);
  }
  json_t *root = json_pack("{s:{s:s, s:{s:s}, s:o, s:o}}", "log", "version", "1.2", "creator",
                           "name", "test", "pages", pages, "entries", list);
  char *text = json_dumps(root, 0), err[512];
  json_decref(root);
  lab_har *har = lab_test_load_string("shape.har", text, err, sizeof err);
  free(text);
  cr_assert_not_null(har, "%s", err);
  return har;
}

typedef struct planned {
  lab_har *har;
  lab_page_set pages;
  size_t first; /* lab_pages_first_usable */
  json_t *plan; /* of the first usable page, or NULL */
} planned;

static planned plan_first(const shape *entries, size_t n, size_t n_pages) {
  planned p = {.har = har_of(entries, n, n_pages)};
  lab_page_options o;
  lab_page_options_default(&o);
  cr_assert_eq(lab_pages_extract(p.har, &o, &p.pages), 0);
  p.first = lab_pages_first_usable(p.har, &p.pages);
  char err[512];
  lab_plan_options po = {.flat_graph = 0, .seed = 3};
  if (p.first < p.pages.n_pages) {
    p.plan = lab_plan_page(p.har, &p.pages, p.first, &po, err, sizeof err);
    cr_assert_not_null(p.plan, "%s", err);
  }
  return p;
}

static void planned_free(planned *p) {
  json_decref(p->plan);
  lab_pages_free(&p->pages);
  lab_har_free(p->har);
}

static const json_t *resource(const json_t *plan, size_t i) {
  const json_t *r = json_array_get(json_object_get(plan, "resources"), i);
  cr_assert_not_null(r, "no resource %zu", i);
  return r;
}

static json_int_t field(const json_t *plan, size_t i, const char *name) {
  return json_integer_value(json_object_get(resource(plan, i), name));
}

static const char *text_field(const json_t *plan, size_t i, const char *name) {
  return json_string_value(json_object_get(resource(plan, i), name));
}

static json_int_t left_out(const json_t *plan, const char *reason) {
  return json_integer_value(json_object_get(json_object_get(plan, "left_out"), reason));
}

/* The plan as text through both readers: neither may refuse it. */
static void both_readers_accept(const json_t *plan) {
  char *text = json_dumps(plan, JSON_COMPACT), err[512];
  load_plan *lp = NULL;
  replay_plan *rp = NULL;
  cr_assert_eq(load_plan_parse(text, strlen(text), &lp, err, sizeof err), 0,
               "the loader refuses the plan: %s", err);
  cr_assert_eq(replay_plan_parse(&rp, text, strlen(text), "plan", err, sizeof err), 0,
               "the replay server refuses the plan: %s", err);
  load_plan_del(lp);
  replay_plan_del(rp);
  free(text);
}

static const char *host_name(const json_t *plan, json_int_t host) {
  return json_string_value(
      json_object_get(json_array_get(json_object_get(plan, "hosts"), (size_t)host), "name"));
}

/* ---- which page is the first ---------------------------------------------------------- */

Test(first_page, a_leftover_beacon_page_is_skipped_with_its_reason) {
  shape e[] = {
      {0, NULL, "http://prev.test/beacon?unload=1", 0, NULL, 0, "p1", NULL,
       "http://prev.test/article", NULL, NULL, NULL},
      {200, NULL, "http://www.a.test/", 200, "text/html", 9000, "p2", DOC, NULL, NULL, NULL, NULL},
      {350, NULL, "http://www.a.test/a.png", 200, "image/png", 3000, "p2", NULL,
       "http://www.a.test/", NULL, NULL, NULL},
  };
  planned p = plan_first(e, 3, 2);
  cr_assert_eq(p.first, 1, "the first page with a document is the second");
  char why[400];
  cr_assert_not_null(lab_page_skip_reason(p.har, &p.pages.pages[0], why, sizeof why));
  cr_assert(strstr(why, "no document") != NULL, "%s", why);
  cr_assert_str_eq(json_string_value(json_object_get(p.plan, "page")), "page 2");
  cr_assert_str_eq(text_field(p.plan, 0, "path"), "/");
  planned_free(&p);
}

Test(first_page, a_page_of_xhr_and_pings_has_no_document) {
  shape e[] = {
      {0, NULL, "https://prev.test/ping", 204, NULL, 0, "p1", NULL, NULL, NULL, NULL, NULL},
      {5, NULL, "https://prev.test/api", 200, "application/json", 300, "p1", NULL, NULL, NULL, NULL,
       NULL},
      {300, NULL, "https://b.test/", 200, "text/html", 9000, "p2", DOC, NULL, NULL, NULL, NULL},
  };
  planned p = plan_first(e, 3, 2);
  cr_assert_eq(p.first, 1);
  planned_free(&p);
}

Test(first_page, documents_answered_404_or_not_at_all_are_skipped) {
  shape e[] = {
      {0, NULL, "http://f.test/missing", 404, "text/html", 900, "p1", DOC, NULL, NULL, NULL, NULL},
      {500, NULL, "http://f.test/slow", 0, NULL, 0, "p2", DOC, NULL, NULL, NULL, NULL},
      {2000, NULL, "http://f.test/", 200, "text/html", 7000, "p3", DOC, NULL, NULL, NULL, NULL},
  };
  planned p = plan_first(e, 3, 3);
  cr_assert_eq(p.first, 2);
  char why[400];
  lab_page_skip_reason(p.har, &p.pages.pages[0], why, sizeof why);
  cr_assert(strstr(why, "answered 404") != NULL, "%s", why);
  lab_page_skip_reason(p.har, &p.pages.pages[1], why, sizeof why);
  cr_assert(strstr(why, "no answer (status 0)") != NULL, "%s", why);
  planned_free(&p);
}

Test(first_page, an_aborted_document_gives_way_to_the_retry) {
  shape e[] = {
      {0, NULL, "http://r.test/", 0, NULL, 0, "p1", DOC, NULL, NULL, NULL, NULL},
      {320, NULL, "http://r.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {450, NULL, "http://r.test/a.png", 200, "image/png", 5000, "p1", NULL, "http://r.test/", NULL,
       NULL, NULL},
  };
  planned p = plan_first(e, 3, 1);
  cr_assert_eq(p.first, 0);
  cr_assert_eq(p.pages.pages[0].document, 1, "the answered request is the document");
  cr_assert_eq(field(p.plan, 0, "status"), 200);
  cr_assert_eq(left_out(p.plan, "no answer (status 0)"), 1);
  planned_free(&p);
}

Test(first_page, pages_without_pagerefs_are_found_by_the_heuristic) {
  shape e[] = {
      {0, NULL, "http://n.test/", 200, "text/html", 9000, NULL, DOC, NULL, NULL, NULL, NULL},
      {150, NULL, "http://n.test/a.css", 200, "text/css", 3000, NULL, NULL, "http://n.test/", NULL,
       NULL, NULL},
  };
  planned p = plan_first(e, 2, 1);
  cr_assert_eq(p.pages.n_pages, 1);
  cr_assert_eq(p.pages.pages[0].n_entries, 2, "no entry names log.pages[0]: all are found");
  cr_assert_eq(p.pages.n_unassigned, 0);
  cr_assert_not_null(p.plan);
  planned_free(&p);
}

/* ---- what a plan leaves out, and what it replays --------------------------------------- */

Test(shapes, requests_left_out_are_counted_by_reason) {
  shape e[] = {
      {0, NULL, "https://m.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {100, NULL, "data:image/png;base64,iVBORw0KGgo=", 200, "image/png", 8, "p1", NULL, NULL, NULL,
       NULL, NULL},
      {110, NULL, "blob:https://m.test/7f3c1d2e", 200, "image/png", 500, "p1", NULL, NULL, NULL,
       NULL, NULL},
      {120, NULL, "wss://rt.m.test/socket", 101, NULL, 0, "p1", NULL, NULL, NULL, NULL, NULL},
      {130, NULL, "https://rt.m.test/ws", 101, NULL, 0, "p1", NULL, NULL, NULL, NULL, NULL},
      {140, NULL, "https://t.m.test/t.js", 0, NULL, 0, "p1", NULL, NULL, NULL, NULL, NULL},
      {150, NULL, "https://m.test/thumb.jpg", 304, "image/jpeg", 0, "p1", NULL, NULL, NULL, NULL,
       NULL},
      {160, NULL, "https://m.test/a.css", 200, "text/css", 2000, "p1", NULL, "https://m.test/",
       NULL, NULL, NULL},
  };
  planned p = plan_first(e, 8, 1);
  cr_assert_eq(json_array_size(json_object_get(p.plan, "resources")), 2);
  cr_assert_eq(left_out(p.plan, "data: URL"), 1);
  cr_assert_eq(left_out(p.plan, "blob: URL"), 1);
  cr_assert_eq(left_out(p.plan, "websocket"), 2, "wss: and an https entry answered 101");
  cr_assert_eq(left_out(p.plan, "no answer (status 0)"), 1);
  cr_assert_eq(left_out(p.plan, "304 without a recorded copy"), 1);
  both_readers_accept(p.plan);
  planned_free(&p);
}

Test(shapes, answers_from_the_browser_cache_are_replayed_with_their_size) {
  shape e[] = {
      {0, NULL, "https://c.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {100, NULL, "https://c.test/app.css", 200, "text/css", 12000, "p1", NULL, NULL, NULL,
       "{\"_fromCache\": \"memory\", \"response\": {\"status\": 200, \"bodySize\": 0, "
       "\"content\": {\"size\": 12000, \"mimeType\": \"text/css\"}, \"headers\": []}}",
       NULL},
  };
  planned p = plan_first(e, 2, 1);
  cr_assert_eq(field(p.plan, 1, "body_size"), 12000, "a cold load fetches the cached body");
  planned_free(&p);
}

Test(shapes, pseudo_headers_never_reach_the_plan) {
  shape e[] = {
      {0, NULL, "https://h2.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL,
       "[{\"name\": \":authority\", \"value\": \"h2.test\"}, {\"name\": \":method\", \"value\": "
       "\"GET\"}, {\"name\": \":path\", \"value\": \"/\"}, {\"name\": \":scheme\", \"value\": "
       "\"https\"}]"},
  };
  planned p = plan_first(e, 1, 1);
  size_t i;
  const json_t *pair;
  json_array_foreach(json_object_get(resource(p.plan, 0), "request_headers"), i, pair)
      cr_assert_neq(json_string_value(json_array_get(pair, 0))[0], ':', "%s",
                    json_string_value(json_array_get(pair, 0)));
  both_readers_accept(p.plan);
  planned_free(&p);
}

Test(shapes, no_body_for_204_and_a_304_with_a_copy_is_a_200) {
  shape e[] = {
      {0, NULL, "http://s.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {100, NULL, "http://s.test/a.png", 200, "image/png", 4000, "p1", NULL, NULL, NULL, NULL,
       NULL},
      {200, NULL, "http://s.test/beacon", 204, NULL, 0, "p1", NULL, NULL, NULL, NULL, NULL},
      {300, NULL, "http://s.test/a.png", 304, "image/png", 0, "p1", NULL, NULL, NULL, NULL, NULL},
  };
  planned p = plan_first(e, 4, 1);
  cr_assert_eq(field(p.plan, 2, "status"), 204);
  cr_assert_eq(field(p.plan, 2, "body_size"), 0);
  cr_assert_eq(field(p.plan, 3, "status"), 200);
  cr_assert_eq(field(p.plan, 3, "body_size"), 4000);
  both_readers_accept(p.plan);
  planned_free(&p);
}

Test(shapes, duplicate_urls_with_different_answers_are_answered_alike) {
  shape e[] = {
      {0, NULL, "http://d.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {100, NULL, "http://d.test/api", 200, "application/json", 500, "p1", NULL, NULL, NULL, NULL,
       NULL},
      {400, NULL, "http://d.test/api", 404, "application/json", 200, "p1", NULL, NULL, NULL, NULL,
       NULL},
  };
  planned p = plan_first(e, 3, 1);
  cr_assert_eq(field(p.plan, 2, "repeat_of"), 1);
  cr_assert_eq(field(p.plan, 2, "status"), 200, "the server answers a URL with its first answer");
  cr_assert_eq(field(p.plan, 2, "body_size"), 500);
  planned_free(&p);
}

/* ---- redirects ---------------------------------------------------------------------- */

Test(redirects, http_to_https_of_the_same_url_is_left_out) {
  shape e[] = {
      {0, NULL, "http://mix.test/", 301, "text/html", 0, "p1", DOC, NULL, "https://mix.test/", NULL,
       NULL},
      {60, NULL, "https://mix.test/", 200, "text/html", 14000, "p1", DOC, NULL, NULL, NULL, NULL},
      {200, NULL, "http://mix.test/a.png", 200, "image/png", 3000, "p1", NULL, "https://mix.test/",
       NULL, NULL, NULL},
  };
  planned p = plan_first(e, 3, 1);
  cr_assert_eq(left_out(p.plan, "redirect to the same request"), 1);
  cr_assert_eq(field(p.plan, 0, "status"), 200, "the target stands for both");
  cr_assert_eq(field(p.plan, 0, "body_size"), 14000);
  cr_assert_eq(field(p.plan, 1, "parent"), 0);
  planned_free(&p);
}

Test(redirects, a_cookie_check_redirect_to_itself_is_left_out) {
  shape e[] = {
      {0, NULL, "https://login.test/", 302, "text/html", 0, "p1", DOC, NULL, "https://login.test/",
       NULL, NULL},
      {60, NULL, "https://login.test/", 200, "text/html", 12000, "p1", DOC, NULL, NULL, NULL, NULL},
  };
  planned p = plan_first(e, 2, 1);
  cr_assert_eq(json_array_size(json_object_get(p.plan, "resources")), 1);
  cr_assert_eq(field(p.plan, 0, "status"), 200);
  planned_free(&p);
}

Test(redirects, with_and_without_location_and_body) {
  shape e[] = {
      {0, NULL, "http://r.test/", 301, "text/html", 178, "p1", DOC, NULL, "http://www.r.test/",
       NULL, NULL},
      {50, NULL, "http://www.r.test/", 302, "text/html", 0, "p1", DOC, NULL, "/home", NULL, NULL},
      {100, NULL, "http://www.r.test/home", 200, "text/html", 15000, "p1", DOC, NULL, NULL, NULL,
       NULL},
      {250, NULL, "http://www.r.test/track", 302, "image/gif", 0, "p1", NULL,
       "http://www.r.test/home", NULL, NULL, NULL},
      {260, NULL, "http://www.r.test/img", 307, NULL, 0, "p1", NULL, "http://www.r.test/home",
       "//cdn.r.test/a.png", NULL, NULL},
      {300, NULL, "http://cdn.r.test/a.png", 200, "image/png", 9000, "p1", NULL,
       "http://www.r.test/home", NULL, NULL, NULL},
      {270, NULL, "http://www.r.test/go", 302, NULL, 0, "p1", NULL, "http://www.r.test/home",
       "http://elsewhere.test/x", NULL, NULL},
  };
  planned p = plan_first(e, 7, 1);
  cr_assert_eq(field(p.plan, 0, "redirect_to"), 1);
  cr_assert_eq(field(p.plan, 0, "body_size"), 178);
  cr_assert_eq(field(p.plan, 1, "redirect_to"), 2);
  cr_assert_eq(field(p.plan, 3, "status"), 302, "without Location: a 302 as recorded");
  cr_assert_eq(field(p.plan, 3, "redirect_to"), -1);
  cr_assert_eq(field(p.plan, 4, "redirect_to"), 6, "scheme-relative Location to another host");
  cr_assert_eq(field(p.plan, 5, "redirect_to"), -1, "its target was never recorded");
  both_readers_accept(p.plan);
  planned_free(&p);
}

Test(redirects, the_same_path_under_two_schemes_is_one_answer) {
  shape e[] = {
      {0, NULL, "https://mix.test/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL, NULL},
      {100, NULL, "http://mix.test/same.png", 200, "image/png", 3000, "p1", NULL, NULL, NULL, NULL,
       NULL},
      {110, NULL, "https://mix.test/same.png", 200, "image/png", 5000, "p1", NULL, NULL, NULL, NULL,
       NULL},
  };
  planned p = plan_first(e, 3, 1);
  cr_assert_neq(field(p.plan, 1, "host"), field(p.plan, 2, "host"), "two hosts: two origins");
  cr_assert_eq(field(p.plan, 2, "repeat_of"), 1, "one Host and path: one answer from a server");
  cr_assert_eq(field(p.plan, 2, "body_size"), 3000);
  planned_free(&p);
}

/* ---- hosts ---------------------------------------------------------------------------- */

Test(hosts_in_plans, ip_literals_and_idns_are_planned_for_both_readers) {
  shape e[] = {
      {0, NULL, "https://[2001:DB8::44]/", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL,
       NULL},
      {100, NULL, "http://192.0.2.10/thumbs/a.jpg", 200, "image/jpeg", 3000, "p1", NULL, NULL, NULL,
       NULL, NULL},
      {110, NULL, "https://203.0.113.5:8443/cgi-bin/x", 200, "text/plain", 300, "p1", NULL, NULL,
       NULL, NULL, NULL},
      {120, NULL, "http://b\u00fccher.test/k.png", 200, "image/png", 3000, "p1", NULL, NULL, NULL,
       NULL, NULL},
  };
  planned p = plan_first(e, 4, 1);
  cr_assert_eq(json_array_size(json_object_get(p.plan, "resources")), 4, "nothing left out");
  cr_assert_str_eq(host_name(p.plan, field(p.plan, 0, "host")), "[2001:db8::44]");
  cr_assert_str_eq(host_name(p.plan, field(p.plan, 1, "host")), "192.0.2.10");
  cr_assert_str_eq(host_name(p.plan, field(p.plan, 3, "host")), "xn--bcher-kva.test");
  both_readers_accept(p.plan);
  /* The loader checks certificates against the address, without brackets. */
  char *text = json_dumps(p.plan, JSON_COMPACT), err[256];
  load_plan *lp = NULL;
  cr_assert_eq(load_plan_parse(text, strlen(text), &lp, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(lp->hosts[0].name, "[2001:db8::44]");
  cr_assert_str_eq(load_plan_server_name(lp, 0), "2001:db8::44");
  cr_assert_str_eq(load_plan_server_name(lp, 1), "192.0.2.10");
  load_plan_del(lp);
  free(text);
  planned_free(&p);
}

Test(hosts_in_plans, case_and_a_trailing_dot_make_one_host) {
  shape e[] = {
      {0, NULL, "HTTPS://WWW.Both.Test./", 200, "text/html", 9000, "p1", DOC, NULL, NULL, NULL,
       NULL},
      {100, NULL, "https://www.both.test/a.png", 200, "image/png", 3000, "p1", NULL, NULL, NULL,
       NULL, NULL},
      {110, NULL, "https://WWW.BOTH.TEST./b.png", 200, "image/png", 3000, "p1", NULL, NULL, NULL,
       NULL, NULL},
  };
  planned p = plan_first(e, 3, 1);
  cr_assert_eq(json_array_size(json_object_get(p.plan, "hosts")), 1);
  cr_assert_str_eq(host_name(p.plan, 0), "www.both.test");
  planned_free(&p);
}

/* ---- the generated stress corpus ----------------------------------------------------- */

/* Every file of tests/lab/stress/make_corpus.py's corpus: the page the lab replays first is
 * the one expect.txt names, and its plan passes both readers. */
Test(stress_corpus, first_pages_are_as_expected_and_readable) {
  const char *dir = getenv("SPEEDY_STRESS_CORPUS");
  if (dir == NULL || dir[0] == '\0') cr_skip_test("SPEEDY_STRESS_CORPUS is not set");
  char path[1200];
  snprintf(path, sizeof path, "%s/expect.txt", dir);
  json_error_t jerr;
  json_t *expect = json_load_file(path, 0, &jerr);
  cr_assert_not_null(expect, "%s: %s", path, jerr.text);
  const char *file;
  json_t *want;
  size_t files = 0;
  json_object_foreach(expect, file, want) {
    snprintf(path, sizeof path, "%s/%s", dir, file);
    char err[512];
    lab_har *har = NULL;
    cr_assert_eq(lab_har_load(path, &har, err, sizeof err), 0, "%s", err);
    lab_page_options o;
    lab_page_options_default(&o);
    lab_page_set pages;
    cr_assert_eq(lab_pages_extract(har, &o, &pages), 0);
    size_t first = lab_pages_first_usable(har, &pages);
    cr_assert_eq((json_int_t)first + 1, json_integer_value(json_object_get(want, "page")),
                 "%s: first page %zu", file, first + 1);
    lab_plan_options po = {.flat_graph = 0, .seed = 1};
    json_t *plan = lab_plan_page(har, &pages, first, &po, err, sizeof err);
    cr_assert_not_null(plan, "%s: %s", file, err);
    both_readers_accept(plan);
    json_decref(plan);
    lab_pages_free(&pages);
    lab_har_free(har);
    files++;
  }
  cr_assert_geq(files, 20, "the corpus has %zu files", files);
  json_decref(expect);
}
