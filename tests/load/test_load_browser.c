/* test_load_browser.c — Chromium's request headers for a plan (src/load/load_browser.c):
 * how each way a page body asks for a resource shows in Sec-Fetch-*, Accept, Origin and
 * Referer, what a redirect keeps, and how sites are told apart. The values are those
 * Chromium 156 sent in the lab (its net logs).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_browser.h"

#define RESOURCE(id, host, method, path, type, parent, status, size, redirect, headers)            \
  "{\"id\": " #id ", \"host\": " #host ", \"method\": \"" method "\", \"path\": \"" path           \
  "\", \"type\": \"" type "\", \"parent\": " #parent ", \"discover_offset\": -1,"                  \
  " \"request_headers\": " headers ", \"status\": " #status ", \"response_headers\": [],"          \
  " \"body_size\": " #size ", \"redirect_to\": " #redirect "}"

/* www and static share a site; cdn.other.test is another. */
/* clang-format off */
static const char plan_text[] =
    "{\"format\": \"speedy-lab-plan/1\", \"source\": \"t.har\", \"page\": \"p\", \"seed\": 1,"
    " \"hosts\": [{\"name\": \"www.example.co.uk\", \"port\": 443},"
    "             {\"name\": \"static.example.co.uk\", \"port\": 443},"
    "             {\"name\": \"cdn.other.test\", \"port\": 443}],"
    " \"resources\": ["
    RESOURCE(0, 0, "GET", "/", "document", -1, 301, 0, 1,
             "[[\"User-Agent\", \"Recorded/1.0\"], [\"Cookie\", \"a=b\"]]") ","
    RESOURCE(1, 0, "GET", "/home#top", "document", 0, 200, 5000, -1, "[]") ","
    RESOURCE(2, 1, "GET", "/a.css", "css", 1, 200, 100, -1, "[]") ","
    RESOURCE(3, 2, "GET", "/bg.png", "image", 2, 200, 100, -1, "[]") ","
    RESOURCE(4, 1, "GET", "/f.woff2", "font", 2, 200, 100, -1, "[]") ","
    RESOURCE(5, 0, "GET", "/s.js", "script", 1, 200, 100, -1, "[[\"Cookie\", \"c=d\"]]") ","
    RESOURCE(6, 0, "GET", "/i.png", "image", 5, 200, 100, -1, "[]") ","
    RESOURCE(7, 2, "GET", "/x.json", "other", 1, 200, 100, -1, "[]") ","
    RESOURCE(8, 0, "POST", "/beacon", "other", 1, 204, 0, -1, "[]") ","
    RESOURCE(9, 2, "GET", "/frame", "document", 1, 200, 100, -1, "[]") ","
    RESOURCE(10, 2, "GET", "/in-frame.png", "image", 9, 200, 100, -1, "[]") ","
    RESOURCE(11, 0, "GET", "/pixel.gif", "image", 1, 200, 0, -1, "[]") ","
    RESOURCE(12, 0, "GET", "/old.js", "script", 1, 302, 0, 13, "[]") ","
    RESOURCE(13, 2, "GET", "/new.js", "script", 12, 200, 100, -1, "[]") ","
    RESOURCE(14, 1, "GET", "/same-site-frame", "document", 1, 200, 100, -1, "[]") ","
    RESOURCE(15, 2, "GET", "/in-same-site-frame.png", "image", 14, 200, 100, -1, "[]") ","
    RESOURCE(16, 0, "GET", "/back-home", "document", 9, 200, 100, -1, "[]") ","
    RESOURCE(17, 0, "GET", "/ad.js", "script", 9, 200, 100, -1, "[]") ","
    RESOURCE(18, 2, "GET", "/moved-frame", "document", 1, 302, 0, 19, "[]") ","
    RESOURCE(19, 0, "GET", "/moved-here", "document", 18, 200, 100, -1, "[]") ","
    RESOURCE(20, 0, "GET", "/in-moved.png", "image", 19, 200, 100, -1, "[]") ","
    RESOURCE(21, 0, "GET", "/more1.png", "image", 1, 200, 100, -1, "[]") ","
    RESOURCE(22, 0, "GET", "/more2.png", "image", 1, 200, 100, -1, "[]") ","
    RESOURCE(23, 0, "GET", "/more3.png", "image", 1, 200, 100, -1, "[]") ","
    RESOURCE(24, 0, "GET", "/more4.png", "image", 1, 200, 100, -1, "[]") ","
    RESOURCE(25, 0, "GET", "/more5.png", "image", 1, 200, 100, -1, "[]") ","
    RESOURCE(26, 0, "GET", "/more6.png", "image", 1, 200, 100, -1, "[]")
    "]}";
/* clang-format on */

static load_plan *chromium_plan(int tls) {
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(load_plan_parse(plan_text, strlen(plan_text), &plan, err, sizeof(err)), 0, "%s",
               err);
  cr_assert_eq(load_browser_set_chromium_headers(plan, tls), 0);
  return plan;
}

/* The value of name in resource id's headers, or NULL; a name given twice fails. */
static const char *field(const load_plan *plan, int id, const char *name) {
  const load_resource *r = &plan->resources[id];
  const char *value = NULL;
  for (size_t i = 0; i < r->n_request_headers; i++)
    if (strcmp(r->request_headers[i].name, name) == 0) {
      cr_assert_null(value, "#%d: %s twice", id, name);
      value = r->request_headers[i].value;
    }
  return value;
}

static void expect(const load_plan *plan, int id, const char *name, const char *want) {
  const char *got = field(plan, id, name);
  if (want == NULL) {
    cr_assert_null(got, "#%d: %s: '%s', want none", id, name, got);
    return;
  }
  cr_assert_not_null(got, "#%d: no %s, want '%s'", id, name, want);
  cr_assert_str_eq(got, want, "#%d: %s: '%s', want '%s'", id, name, got, want);
}

static void expect_fetch(const load_plan *plan, int id, const char *site, const char *mode,
                         const char *dest) {
  expect(plan, id, "sec-fetch-site", site);
  expect(plan, id, "sec-fetch-mode", mode);
  expect(plan, id, "sec-fetch-dest", dest);
}

Test(load_browser, the_navigation_and_its_redirect) {
  load_plan *plan = chromium_plan(1);
  for (int id = 0; id <= 1; id++) {
    expect_fetch(plan, id, "none", "navigate", "document");
    expect(plan, id, "sec-fetch-user", "?1");
    expect(plan, id, "upgrade-insecure-requests", "1");
    expect(plan, id, "referer", NULL);
    expect(plan, id, "cookie", NULL);
    expect(plan, id, "accept",
           "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,"
           "image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7");
    expect(plan, id, "user-agent",
           "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
           "HeadlessChrome/156.0.0.0 Safari/537.36");
    expect(plan, id, "sec-ch-ua", "\"Not:A-Brand\";v=\"8\", \"Chromium\";v=\"156\"");
    expect(plan, id, "sec-ch-ua-mobile", "?0");
    expect(plan, id, "sec-ch-ua-platform", "\"Linux\"");
    expect(plan, id, "pragma", "no-cache");
    expect(plan, id, "cache-control", "no-cache");
    expect(plan, id, "accept-encoding", "gzip, deflate, br, zstd");
    expect(plan, id, "accept-language", "en-US,en;q=0.9");
  }
  cr_assert_eq(plan->resources[0].n_request_headers, 14); /* and Host, Connection */
  load_plan_del(plan);
}

Test(load_browser, elements_of_the_document) {
  load_plan *plan = chromium_plan(1);
  expect_fetch(plan, 2, "same-site", "no-cors", "style");
  expect(plan, 2, "accept", "text/css,*/*;q=0.1");
  expect(plan, 2, "referer", "https://www.example.co.uk/"); /* another origin: origin only */
  expect(plan, 2, "sec-fetch-storage-access", NULL);
  expect(plan, 2, "upgrade-insecure-requests", NULL);
  expect(plan, 2, "sec-fetch-user", NULL);
  expect_fetch(plan, 5, "same-origin", "no-cors", "script");
  expect(plan, 5, "accept", "*/*");
  expect(plan, 5, "referer", "https://www.example.co.uk/home"); /* no fragment */
  expect(plan, 5, "cookie", NULL);
  expect(plan, 5, "origin", NULL);
  /* what a script inserts is the document's, not the script's */
  expect_fetch(plan, 6, "same-origin", "no-cors", "image");
  expect(plan, 6, "accept",
         "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8");
  expect(plan, 6, "referer", "https://www.example.co.uk/home");
  load_plan_del(plan);
}

Test(load_browser, what_a_style_sheet_names) {
  load_plan *plan = chromium_plan(1);
  expect_fetch(plan, 3, "cross-site", "no-cors", "image");
  expect(plan, 3, "referer", "https://static.example.co.uk/");
  expect(plan, 3, "sec-fetch-storage-access", "none");
  expect_fetch(plan, 4, "same-site", "cors", "font");
  expect(plan, 4, "referer", "https://static.example.co.uk/a.css");
  expect(plan, 4, "origin", "https://www.example.co.uk");
  load_plan_del(plan);
}

Test(load_browser, fetches_frames_and_redirects) {
  load_plan *plan = chromium_plan(0);
  expect_fetch(plan, 7, "cross-site", "cors", "empty");
  expect(plan, 7, "origin", "http://www.example.co.uk");
  expect(plan, 7, "referer", "http://www.example.co.uk/");
  expect(plan, 7, "sec-fetch-storage-access", "none");
  expect_fetch(plan, 8, "same-origin", "no-cors", "empty"); /* not GET: Origin even here */
  expect(plan, 8, "origin", "http://www.example.co.uk");
  expect_fetch(plan, 9, "cross-site", "navigate", "iframe");
  expect(plan, 9, "upgrade-insecure-requests", "1");
  expect(plan, 9, "sec-fetch-user", NULL);
  expect_fetch(plan, 10, "same-origin", "no-cors", "image"); /* the frame's own origin */
  expect(plan, 10, "referer", "http://cdn.other.test/frame");
  /* an image without bytes is fetched, as the replay's page asks for it */
  expect_fetch(plan, 11, "same-origin", "cors", "empty");
  /* a redirect's target is asked for as its source, the least related hop's site */
  expect_fetch(plan, 12, "same-origin", "no-cors", "script");
  expect_fetch(plan, 13, "cross-site", "no-cors", "script");
  expect(plan, 13, "referer", "http://www.example.co.uk/");
  load_plan_del(plan);
}

Test(load_browser, sites) {
  load_host www = {"www.example.com", 443}, img = {"img.example.com", 443};
  load_host www8443 = {"www.example.com", 8443}, other = {"example.org", 443};
  load_host uk1 = {"a.example.co.uk", 443}, uk2 = {"b.example.co.uk", 443};
  load_host uk3 = {"other.co.uk", 443}, ip1 = {"198.18.0.1", 443}, ip2 = {"198.18.0.2", 443};
  load_host dot = {"www.example.com.", 443};
  cr_assert_str_eq(load_browser_site(&www, &www), "same-origin");
  cr_assert_str_eq(load_browser_site(&www, &dot), "same-origin");
  cr_assert_str_eq(load_browser_site(&www, &img), "same-site");
  cr_assert_str_eq(load_browser_site(&www, &www8443), "same-site");
  cr_assert_str_eq(load_browser_site(&www, &other), "cross-site");
  cr_assert_str_eq(load_browser_site(&uk1, &uk2), "same-site");
  cr_assert_str_eq(load_browser_site(&uk1, &uk3), "cross-site");
  cr_assert_str_eq(load_browser_site(&ip1, &ip2), "cross-site");
  cr_assert_str_eq(load_browser_site(&ip1, &ip1), "same-origin");
}

/* Chromium's network partition (--chromium-sockets): a request is in the cross-site one when
 * the frame that asks is of another site than the page, whatever host it goes to; a frame's
 * navigation is in the partition of the frame it makes, hop by hop. */
Test(load_browser, network_partitions_follow_the_asking_frame) {
  load_plan *plan = chromium_plan(1);
  unsigned char cross[27];
  cr_assert_eq(plan->n_resources, sizeof(cross));
  cr_assert_eq(load_browser_cross_site_frames(plan, cross), 0);
  static const unsigned char want[27] = {
      [9] = 1,  /* the frame on cdn.other.test */
      [10] = 1, /* its image */
      [17] = 1, /* its script, from the page's own host */
      [18] = 1, /* a frame's first hop, to cdn.other.test */
  };
  /* 0: the page's navigation and its redirect (0, 1); what the page's document asks for,
   * on any host (2-8, 11-13); a frame of the page's site (14) and its image (15); a frame
   * of the page's site inside the cross-site one (16); the second hop of a frame, back on
   * the page's host (19), and that frame's image (20). */
  for (int i = 0; i < 27; i++)
    cr_expect_eq(cross[i], want[i], "#%d: cross-site partition %d, want %d", i, cross[i], want[i]);
  load_plan_del(plan);
}

/* Chromium's HTTP/2 priority field (what it sent a probe server), urgency and incremental
 * per resource. */
Test(load_browser, chromium_priorities_by_the_way_a_resource_is_asked_for) {
  load_plan *plan = chromium_plan(1);
  static const struct {
    int urgency, incremental;
  } want[27] = {
      {0, 1}, {0, 1}, /* the navigation and its redirect */
      {0, 0},         /* a style sheet */
      {3, 1},         /* its url() image */
      {0, 0},         /* its @font-face font */
      {3, 0},         /* an async script */
      {2, 1},         /* the document's first image element (a script's child) */
      {1, 1}, {1, 1}, /* a fetch(), a POST fetch() */
      {0, 1}, {1, 1}, /* a frame, its first image (before any style sheet of the frame) */
      {1, 1},         /* an image without bytes: a fetch() */
      {3, 0}, {3, 0}, /* a redirected script, both hops */
      {0, 1}, {1, 1}, {0, 1}, {3, 0}, {0, 1}, {0, 1}, {1, 1}, /* frames, their images, a script */
      {2, 1}, {2, 1}, {2, 1}, {2, 1},                         /* the document's 2nd to 5th images */
      {3, 1}, {3, 1},                                         /* its 6th and 7th */
  };
  cr_assert_eq(plan->n_resources, 27);
  for (int i = 0; i < 27; i++) {
    const load_resource *r = &plan->resources[i];
    cr_expect(r->browser_priority, "#%d: no priority set", i);
    cr_expect_eq(r->browser_urgency, want[i].urgency, "#%d: u=%d, want %d", i, r->browser_urgency,
                 want[i].urgency);
    cr_expect_eq(r->browser_incremental, want[i].incremental, "#%d: incremental %d, want %d", i,
                 r->browser_incremental, want[i].incremental);
  }
  load_plan_del(plan);
}

/* Where an element stands in its document's body (the plan's order): in Chromium's net logs
 * an image element before the document's first style sheet went at u=1 (laid out before it
 * was asked for), and a second or later style sheet at u=2 once an image came before it. */
Test(load_browser, chromium_priorities_by_the_place_in_the_body) {
  /* clang-format off */
  static const char text[] =
      "{\"format\": \"speedy-lab-plan/1\", \"source\": \"t.har\", \"page\": \"p\", \"seed\": 1,"
      " \"hosts\": [{\"name\": \"www.example.test\", \"port\": 443}],"
      " \"resources\": ["
      RESOURCE(0, 0, "GET", "/", "document", -1, 200, 5000, -1, "[]") ","
      RESOURCE(1, 0, "GET", "/1.png", "image", 0, 200, 100, -1, "[]") ","
      RESOURCE(2, 0, "GET", "/a.css", "css", 0, 200, 100, -1, "[]") ","
      RESOURCE(3, 0, "GET", "/b.css", "css", 0, 200, 100, -1, "[]") ","
      RESOURCE(4, 0, "GET", "/2.png", "image", 0, 200, 100, -1, "[]") ","
      RESOURCE(5, 0, "GET", "/s.js", "script", 0, 200, 100, -1, "[]") ","
      RESOURCE(6, 0, "GET", "/3.png", "image", 5, 200, 100, -1, "[]") ","
      RESOURCE(7, 0, "GET", "/i.css", "css", 5, 200, 100, -1, "[]") ","
      RESOURCE(8, 0, "GET", "/frame", "document", 0, 200, 100, -1, "[]") ","
      RESOURCE(9, 0, "GET", "/f1.css", "css", 8, 200, 100, -1, "[]") ","
      RESOURCE(10, 0, "GET", "/f2.css", "css", 8, 200, 100, -1, "[]") ","
      RESOURCE(11, 0, "GET", "/f.png", "image", 8, 200, 100, -1, "[]") ","
      RESOURCE(12, 0, "GET", "/f3.css", "css", 8, 200, 100, -1, "[]")
      "]}";
  /* clang-format on */
  load_plan *plan = NULL;
  char err[400] = "";
  cr_assert_eq(load_plan_parse(text, strlen(text), &plan, err, sizeof(err)), 0, "%s", err);
  cr_assert_eq(load_browser_set_chromium_headers(plan, 1), 0);
  static const struct {
    int urgency, incremental;
  } want[13] = {
      {0, 1}, /* the page */
      {1, 1}, /* an image before the first style sheet */
      {0, 0}, /* the first style sheet, though an image came before it */
      {2, 0}, /* the second, after an image */
      {2, 1}, /* an image after the first sheet: one of the first five */
      {3, 0}, /* a script */
      {2, 1}, /* its image: not an element of the body, one of the first five */
      {0, 0}, /* its style sheet: not an element of the body */
      {0, 1}, /* a frame */
      {0, 0}, /* its first style sheet */
      {0, 0}, /* its second, with no image before it */
      {2, 1}, /* its image after a sheet */
      {2, 0}, /* its third sheet, after the image */
  };
  for (int i = 0; i < 13; i++) {
    const load_resource *r = &plan->resources[i];
    cr_expect_eq(r->browser_urgency, want[i].urgency, "#%d: u=%d, want %d", i, r->browser_urgency,
                 want[i].urgency);
    cr_expect_eq(r->browser_incremental, want[i].incremental, "#%d: incremental %d, want %d", i,
                 r->browser_incremental, want[i].incremental);
  }
  load_plan_del(plan);
}

/* What Chromium's load event waits for (--load-event): everything but what the page bodies
 * ask for by fetch() or a preload as fetch. */
Test(load_browser, the_load_event_waits_for_all_but_fetches) {
  load_plan *plan = chromium_plan(1);
  unsigned char waits[27];
  cr_assert_eq(plan->n_resources, sizeof(waits));
  cr_assert_eq(load_browser_load_event_waits(plan, waits), 0);
  /* not: an "other" GET (7), a POST (8), an image without bytes (11); a style sheet's font
   * (4) is waited for */
  for (int i = 0; i < 27; i++)
    cr_expect_eq(waits[i], !(i == 7 || i == 8 || i == 11), "#%d: waits %d", i, waits[i]);
  load_plan_del(plan);
}
