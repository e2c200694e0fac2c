/* test_load_sched.c — the loader's discovery model and dispatch order
 * (src/load/load_sched.c) as pure logic: plans built in memory, time passed by hand.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_sched.h"

#define MAX_RES 16

/* An in-memory plan: resource i on host hosts[i], of type types[i], gated as given. */
typedef struct fixture {
  load_plan plan;
  load_host hosts[2];
  load_resource res[MAX_RES];
  char paths[MAX_RES][16];
} fixture;

static fixture fx;

static void plan_init(size_t n) {
  memset(&fx, 0, sizeof(fx));
  fx.hosts[0] = (load_host){"www.example.test", 80};
  fx.hosts[1] = (load_host){"cdn.example.test", 80};
  fx.plan.hosts = fx.hosts;
  fx.plan.n_hosts = 2;
  fx.plan.resources = fx.res;
  fx.plan.n_resources = n;
  for (size_t i = 0; i < n; i++) {
    snprintf(fx.paths[i], sizeof(fx.paths[i]), "/r%zu", i);
    fx.res[i] = (load_resource){.id = (int)i,
                                .path = fx.paths[i],
                                .method = "GET",
                                .type = LOAD_TYPE_OTHER,
                                .parent = i ? 0 : -1,
                                .discover_offset = -1,
                                .status = 200,
                                .body_size = 1000,
                                .redirect_to = -1};
  }
  fx.res[0].type = LOAD_TYPE_DOCUMENT;
}

static load_state state(const load_sched *s, int id) { return load_sched_entry(s, id)->state; }

/* Requests everything READY in group 0, in dispatch order; returns how many. */
static int drain(load_sched *s, int *order, double now) {
  int n = 0, id;
  while ((id = load_sched_peek(s, 0)) >= 0) {
    load_sched_requested(s, id, 0, now);
    order[n++] = id;
  }
  return n;
}

Test(load_sched, only_the_roots_are_requestable_at_the_start) {
  plan_init(3);
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  cr_assert_eq(state(s, 0), LOAD_READY);
  cr_assert_eq(state(s, 1), LOAD_WAITING);
  cr_assert_eq(load_sched_peek(s, 0), 0);
  load_sched_del(s);
}

/* Only the page is known at first: other roots are found with its first bytes (a
 * browser finds them in the page, where the replay names them), unless the page's first
 * resource is no document (a recording without it: every root starts with the load). */
Test(load_sched, other_roots_are_found_with_the_pages_first_bytes) {
  plan_init(3);
  fx.res[2].parent = -1;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  cr_assert_eq(state(s, 2), LOAD_WAITING, "a root other than the page started with the load");
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 7);
  cr_assert_eq(state(s, 2), LOAD_READY);
  cr_assert_float_eq(load_sched_entry(s, 2)->discovered_ms, 7, 1e-9);
  load_sched_del(s);
  fx.res[0].type = LOAD_TYPE_IMAGE;
  s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  cr_assert_eq(state(s, 2), LOAD_READY, "no page: every root starts with the load");
  load_sched_del(s);
}

Test(load_sched, html_child_waits_for_its_offset_in_the_parent_body) {
  plan_init(2);
  fx.res[1].discover_offset = 500;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 10);
  load_sched_body(s, 0, 499, 20);
  cr_assert_eq(state(s, 1), LOAD_WAITING, "discovered before 500 bytes arrived");
  load_sched_body(s, 0, 500, 30);
  cr_assert_eq(state(s, 1), LOAD_READY);
  cr_assert_float_eq(load_sched_entry(s, 1)->discovered_ms, 30, 1e-9);
  load_sched_del(s);
}

Test(load_sched, offset_zero_child_is_discovered_with_the_response_headers) {
  plan_init(2);
  fx.res[1].discover_offset = 0;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  cr_assert_eq(state(s, 1), LOAD_WAITING, "discovered before any response");
  load_sched_headers(s, 0, 200, 5);
  cr_assert_eq(state(s, 1), LOAD_READY);
  load_sched_del(s);
}

Test(load_sched, css_or_script_child_waits_for_the_whole_parent) {
  plan_init(3);
  fx.res[1].type = LOAD_TYPE_CSS;
  fx.res[1].discover_offset = 0;
  fx.res[2].parent = 1; /* an image the stylesheet names */
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  load_sched_requested(s, 1, 0, 2);
  load_sched_headers(s, 1, 200, 3);
  load_sched_body(s, 1, 999, 4);
  cr_assert_eq(state(s, 2), LOAD_WAITING);
  load_sched_complete(s, 1, 5);
  cr_assert_eq(state(s, 2), LOAD_READY);
  load_sched_del(s);
}

Test(load_sched, start_delay_holds_a_discovered_resource_until_its_time) {
  plan_init(2);
  fx.res[1].discover_offset = 0;
  fx.res[1].start_delay_ms = 100;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 10);
  cr_assert_eq(state(s, 1), LOAD_DELAYED);
  cr_assert_float_eq(load_sched_next_wakeup(s), 110, 1e-9);
  load_sched_advance(s, 109);
  cr_assert_eq(load_sched_peek(s, 0), -1);
  load_sched_advance(s, 110);
  cr_assert_eq(load_sched_peek(s, 0), 1);
  cr_assert_float_eq(load_sched_next_wakeup(s), -1, 1e-9);
  load_sched_del(s);
}

Test(load_sched, redirect_target_waits_for_the_complete_redirect) {
  plan_init(3);
  fx.res[1].discover_offset = 0; /* /r1 redirects to /r2 */
  fx.res[1].status = 302;
  fx.res[1].redirect_to = 2;
  fx.res[2].discover_offset = 0; /* its parent alone would discover it at once */
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  cr_assert_eq(state(s, 1), LOAD_READY);
  cr_assert_eq(state(s, 2), LOAD_WAITING, "target discovered before its redirect");
  load_sched_requested(s, 1, 0, 2);
  load_sched_headers(s, 1, 302, 3);
  cr_assert_eq(state(s, 2), LOAD_WAITING, "target discovered before the redirect completed");
  load_sched_complete(s, 1, 4);
  cr_assert_eq(state(s, 2), LOAD_READY);
  load_sched_del(s);
}

Test(load_sched, fcfs_requests_in_discovery_order_whatever_the_type) {
  plan_init(4);
  fx.res[1].type = LOAD_TYPE_IMAGE;
  fx.res[1].discover_offset = 100;
  fx.res[2].type = LOAD_TYPE_SCRIPT;
  fx.res[2].discover_offset = 200;
  fx.res[3].type = LOAD_TYPE_CSS;
  fx.res[3].discover_offset = 300;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1000, 5); /* all three discovered in one read */
  int order[4];
  cr_assert_eq(drain(s, order, 6), 3);
  cr_assert_eq(order[0], 1);
  cr_assert_eq(order[1], 2);
  cr_assert_eq(order[2], 3);
  load_sched_del(s);
}

/* Requests everything READY in any group, in dispatch order, releasing held ones first. */
static int drain_all(load_sched *s, int *order, double now) {
  int n = 0, id;
  load_sched_release(s);
  for (int g = 0; g < load_sched_groups(s); g++)
    while ((id = load_sched_peek(s, g)) >= 0) {
      load_sched_requested(s, id, 0, now);
      order[n++] = id;
    }
  return n;
}

/* Chromium's ResourceScheduler: images and scripts wait while `limit` of them are in
 * flight (released and not complete); style sheets, fonts and the rest never wait. */
Test(load_sched, the_delayable_limit_holds_images_and_scripts_not_css_or_fonts) {
  plan_init(8);
  load_type types[] = {LOAD_TYPE_DOCUMENT, LOAD_TYPE_IMAGE, LOAD_TYPE_SCRIPT, LOAD_TYPE_IMAGE,
                       LOAD_TYPE_CSS,      LOAD_TYPE_IMAGE, LOAD_TYPE_FONT,   LOAD_TYPE_OTHER};
  for (int i = 1; i < 8; i++) {
    fx.res[i].type = types[i];
    fx.res[i].discover_offset = 100 * i;
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 2);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1000, 5);
  int order[8];
  cr_assert_eq(drain_all(s, order, 6), 5, "two delayable ones and the three others");
  int want[] = {1, 2, 4, 6, 7};
  for (int i = 0; i < 5; i++) cr_assert_eq(order[i], want[i], "position %d: got %d", i, order[i]);
  cr_expect(load_sched_entry(s, 3)->held && load_sched_entry(s, 5)->held);
  cr_expect_eq(drain_all(s, order, 7), 0, "nothing more while two are in flight");
  load_sched_complete(s, 4, 8); /* a style sheet ending frees nothing */
  cr_expect_eq(drain_all(s, order, 8), 0);
  load_sched_complete(s, 2, 9); /* a script ending lets the next image go, in order */
  cr_assert_eq(drain_all(s, order, 9), 1);
  cr_expect_eq(order[0], 3);
  load_sched_fail(s, 1, "reset", 10); /* so does a failure */
  cr_assert_eq(drain_all(s, order, 10), 1);
  cr_expect_eq(order[0], 5);
  load_sched_del(s);
}

/* A host with six requests in flight gets no delayable one; another host's may pass it. */
Test(load_sched, a_busy_host_is_skipped_and_the_next_hosts_image_goes) {
  plan_init(9);
  for (int i = 1; i < 9; i++) {
    fx.res[i].type = i <= 6 ? LOAD_TYPE_CSS : LOAD_TYPE_IMAGE;
    fx.res[i].discover_offset = 10 * i;
  }
  fx.res[8].host = 1;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 10);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_complete(s, 0, 5); /* host 0: six style sheets, then an image; host 1: an image */
  int order[9];
  cr_assert_eq(drain_all(s, order, 6), 7);
  cr_expect_eq(order[6], 8, "the other host's image, got %d", order[6]);
  cr_expect(load_sched_entry(s, 7)->held, "host 0 has six in flight");
  load_sched_complete(s, 1, 7);
  cr_assert_eq(drain_all(s, order, 7), 1);
  cr_expect_eq(order[0], 7);
  load_sched_del(s);
}

/* A server known to take priorities (an HTTP/2 session of it is open) gets its held images
 * at the next moment Chromium looks at its queue (a request ends; not the session opening),
 * and those it gets from then on do not count against the other servers' limit; the one
 * the limit let go before it was known counts until it ends (Chromium's ResourceScheduler
 * keeps the class a request started with). */
Test(load_sched, a_server_known_to_take_priorities_is_not_held) {
  plan_init(7);
  for (int i = 1; i < 7; i++) {
    fx.res[i].type = LOAD_TYPE_IMAGE;
    fx.res[i].discover_offset = 0;
    fx.res[i].host = i <= 3 ? 0 : 1; /* three images on each host */
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 1);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1, 5);
  int order[7];
  cr_assert_eq(drain_all(s, order, 6), 1, "one image while no server is known");
  cr_expect_eq(order[0], 1);
  cr_assert(!load_sched_is_prioritized(s, 0));
  load_sched_set_prioritized(s, 0); /* host 0's session is open */
  cr_assert(load_sched_is_prioritized(s, 0) && !load_sched_is_prioritized(s, 1));
  cr_expect_eq(drain_all(s, order, 7), 0, "nobody looked at the queue yet");
  load_sched_complete(s, 0, 7); /* a request ends: the queue is looked at */
  cr_assert_eq(drain_all(s, order, 7), 2, "host 0's other two; host 1's wait for image 1");
  cr_expect(order[0] == 2 && order[1] == 3, "got %d %d", order[0], order[1]);
  cr_expect(load_sched_entry(s, 4)->held, "image 1, let go by the limit, is still in flight");
  load_sched_complete(s, 2, 8); /* host 0's later images free nothing: they never counted */
  cr_expect_eq(drain_all(s, order, 8), 0);
  load_sched_complete(s, 1, 9);
  cr_assert_eq(drain_all(s, order, 9), 1, "host 1's first, once image 1 has ended");
  cr_expect_eq(order[0], 4);
  cr_expect(load_sched_entry(s, 5)->held && load_sched_entry(s, 6)->held, "host 1 is not known");
  load_sched_set_prioritized(s, 7); /* not a group: ignored */
  cr_expect_eq(drain_all(s, order, 10), 0);
  load_sched_del(s);
}

/* With Chromium's priorities (load_browser): a style sheet it asks for at low priority (u=2)
 * is delayable too; its queue takes low before lowest, each in the order found, and the
 * first request the limit stops ends the look — a known server's request behind it waits. */
Test(load_sched, the_queue_takes_low_before_lowest_and_stops_at_the_first_the_limit_stops) {
  plan_init(7);
  load_type types[] = {LOAD_TYPE_DOCUMENT, LOAD_TYPE_IMAGE, LOAD_TYPE_SCRIPT, LOAD_TYPE_CSS,
                       LOAD_TYPE_IMAGE,    LOAD_TYPE_CSS,   LOAD_TYPE_IMAGE};
  int urgency[] = {0, 3, 3, 2, 3, 0, 2}, host[] = {0, 1, 1, 0, 0, 0, 0};
  for (int i = 0; i < 7; i++) {
    fx.res[i].type = types[i];
    fx.res[i].discover_offset = i ? 10 * i : -1;
    fx.res[i].host = host[i];
    fx.res[i].browser_priority = 1;
    fx.res[i].browser_urgency = (unsigned char)urgency[i];
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 1);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1000, 5);
  int order[7];
  cr_assert_eq(drain_all(s, order, 6), 2, "image 1, and the u=0 style sheet");
  cr_expect(order[0] == 5 && order[1] == 1, "got %d %d (group 0's first)", order[0], order[1]);
  cr_expect(load_sched_entry(s, 3)->held, "a u=2 style sheet is delayable");
  load_sched_complete(s, 1, 6);
  cr_assert_eq(drain_all(s, order, 6), 1);
  cr_expect_eq(order[0], 3, "low before lowest: the sheet, not script 2 found before it");
  load_sched_set_prioritized(s, 0);
  load_sched_complete(s, 5, 7); /* 6 (low, known server) goes; 2 (unknown) stops the look */
  cr_assert_eq(drain_all(s, order, 7), 1);
  cr_expect_eq(order[0], 6);
  cr_expect(load_sched_entry(s, 4)->held, "a known server's image behind the stop waits");
  load_sched_complete(s, 3, 8); /* the sheet let go by the limit ends: 2, then 4 */
  cr_assert_eq(drain_all(s, order, 8), 2);
  cr_expect(order[0] == 4 && order[1] == 2, "got %d %d (group 0's first)", order[0], order[1]);
  load_sched_del(s);
}

/* A reference asked for as what its redirects end in: a "document" that redirects to an
 * image is an <img> in the replay's page, so delayable; its target is the same request
 * going on, not held again, and keeps its place in the limit. */
Test(load_sched, a_redirect_to_an_image_is_delayable_and_its_target_goes_on) {
  plan_init(4);
  fx.res[1].type = LOAD_TYPE_DOCUMENT;
  fx.res[1].status = 302;
  fx.res[1].redirect_to = 2;
  fx.res[1].discover_offset = 10;
  fx.res[2].type = LOAD_TYPE_IMAGE;
  fx.res[2].parent = 1;
  fx.res[3].type = LOAD_TYPE_IMAGE;
  fx.res[3].discover_offset = 20;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 1);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1000, 5);
  int order[4];
  cr_assert_eq(drain_all(s, order, 6), 1);
  cr_expect_eq(order[0], 1);
  cr_expect(load_sched_entry(s, 3)->held, "the redirect holds the one place");
  load_sched_complete(s, 1, 7);
  cr_assert_eq(drain_all(s, order, 7), 1);
  cr_expect_eq(order[0], 2, "the target goes on at once");
  cr_expect(load_sched_entry(s, 3)->held, "and keeps the place");
  load_sched_complete(s, 2, 8);
  cr_assert_eq(drain_all(s, order, 8), 1);
  cr_expect_eq(order[0], 3);
  load_sched_del(s);
}

/* --boost-images: an <img> of the page's document leaves the limit once the parser has
 * reached it — at once before the first style sheet, when the sheet has loaded behind it
 * (also while in flight: it then frees its place). A script's Image() and a frame's image
 * stay in the limit, and so does a style sheet's background image while the document is
 * still arriving. Without the boost all count. */
Test(load_sched, laid_out_image_elements_leave_the_delayable_limit) {
  for (int boost = 0; boost <= 1; boost++) {
    plan_init(10);
    load_type types[] = {LOAD_TYPE_DOCUMENT, LOAD_TYPE_IMAGE,  LOAD_TYPE_CSS,   LOAD_TYPE_IMAGE,
                         LOAD_TYPE_IMAGE,    LOAD_TYPE_SCRIPT, LOAD_TYPE_IMAGE, LOAD_TYPE_IMAGE,
                         LOAD_TYPE_DOCUMENT, LOAD_TYPE_IMAGE};
    int offsets[] = {-1, 5, 10, 20, -1, 50, 60, -1, 70, 0};
    for (int i = 1; i < 10; i++) {
      fx.res[i].type = types[i];
      fx.res[i].discover_offset = offsets[i];
    }
    fx.res[4].parent = 2; /* named by the style sheet: found when it completes */
    fx.res[7].parent = 5; /* the script's Image(): found when it has run */
    fx.res[9].parent = 8; /* a frame's image, at the frame's first byte */
    load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
    load_sched_set_delayable_limit(s, 1);
    load_sched_set_image_boost(s, boost);
    load_sched_start(s, 0);
    load_sched_requested(s, 0, 0, 0);
    load_sched_body(s, 0, 1000, 5);
    load_sched_advance(s, 5);
    int order[10];
    int got = drain_all(s, order, 6);
    if (!boost) {
      cr_assert_eq(got, 3, "the first image, the style sheet, the frame: got %d", got);
      cr_expect(order[0] == 1 && order[1] == 2 && order[2] == 8, "got %d %d %d", order[0], order[1],
                order[2]);
      load_sched_complete(s, 2, 20);
      cr_expect_eq(drain_all(s, order, 21), 0, "image 1 holds the one place");
      load_sched_del(s);
      continue;
    }
    /* image 1 comes before the sheet: laid out at once, it takes no place; image 3 waits
     * behind the sheet and takes the one place, image 6 and the script are held */
    cr_assert_eq(got, 4, "images 1 and 3, the style sheet, the frame: got %d", got);
    cr_expect(order[0] == 1 && order[1] == 2 && order[2] == 3 && order[3] == 8, "got %d %d %d %d",
              order[0], order[1], order[2], order[3]);
    cr_expect(load_sched_entry(s, 6)->held && load_sched_entry(s, 5)->held);
    load_sched_body(s, 8, 1000, 7); /* the frame finds its image: held, no place */
    cr_expect_eq(drain_all(s, order, 8), 0);
    cr_expect(load_sched_entry(s, 9)->held, "a frame's image is not the page's");
    load_sched_complete(s, 2, 20); /* the sheet has loaded: the parser passes 3 and 6 */
    got = drain_all(s, order, 21);
    cr_assert_eq(got, 2, "image 6 and, in 3's place, the script: got %d", got);
    cr_expect(order[0] == 5 && order[1] == 6, "got %d %d", order[0], order[1]);
    cr_expect(load_sched_entry(s, 4)->held, "the background image: the document is arriving");
    load_sched_complete(s, 1, 22); /* laid-out images free no place */
    load_sched_complete(s, 3, 22);
    load_sched_complete(s, 6, 22);
    cr_expect_eq(drain_all(s, order, 23), 0, "the script is in flight");
    load_sched_complete(s, 5, 24); /* runs: finds image 7 */
    cr_assert_eq(drain_all(s, order, 25), 1, "one place: the frame's image, held first");
    cr_expect_eq(order[0], 9);
    cr_expect(load_sched_entry(s, 4)->held && load_sched_entry(s, 7)->held);
    load_sched_complete(s, 9, 26);
    cr_assert_eq(drain_all(s, order, 27), 1);
    cr_expect_eq(order[0], 4);
    load_sched_complete(s, 4, 28);
    cr_assert_eq(drain_all(s, order, 29), 1);
    cr_expect_eq(order[0], 7, "the script's image last");
    load_sched_del(s);
  }
}

/* --boost-images: the background images of the page's style sheets whose elements (at the
 * end of the replay's body, 35 px apart below the frames' rows) are on the first screen of
 * 437 px leave the limit once the document has arrived and its sheets have loaded; those
 * below it, and a frame's sheet's, stay in it. */
Test(load_sched, a_sheets_background_images_on_the_first_screen_leave_the_limit) {
  plan_init(12);
  fx.res[1].type = LOAD_TYPE_CSS;
  fx.res[1].discover_offset = 10;
  fx.res[2].type = LOAD_TYPE_DOCUMENT; /* a frame: its row puts the first element at 255 px */
  fx.res[2].discover_offset = 20;
  fx.res[3].type = LOAD_TYPE_CSS; /* the frame's style sheet */
  fx.res[3].parent = 2;
  fx.res[4].type = LOAD_TYPE_IMAGE; /* named by the frame's sheet: its element is first */
  fx.res[4].parent = 3;
  for (int i = 5; i < 12; i++) { /* the page sheet's, at 290, 325, ... 500 px */
    fx.res[i].type = LOAD_TYPE_IMAGE;
    fx.res[i].parent = 1;
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_delayable_limit(s, 1);
  cr_assert_eq(load_sched_set_image_boost(s, 1), 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 500, 5);
  int order[12];
  cr_assert_eq(drain_all(s, order, 5), 2, "the style sheet and the frame");
  load_sched_complete(s, 1, 20); /* finds 5-11; the document is still arriving */
  cr_assert_eq(drain_all(s, order, 20), 1, "one place, nothing laid out yet");
  cr_expect_eq(order[0], 5);
  load_sched_complete(s, 2, 21);
  cr_assert_eq(drain_all(s, order, 21), 1);
  cr_expect_eq(order[0], 3);
  load_sched_complete(s, 3, 22); /* finds 4: held, the frame's */
  cr_expect_eq(drain_all(s, order, 22), 0);
  load_sched_complete(s, 0, 30); /* the parser reaches the elements: 5-9 are on the screen */
  int got = drain_all(s, order, 30);
  cr_assert_eq(got, 5, "images 6 to 9, and 10 in 5's place: got %d", got);
  for (int k = 0; k < 5; k++) cr_expect_eq(order[k], 6 + k);
  cr_expect(load_sched_entry(s, 11)->held, "below the screen");
  cr_expect(load_sched_entry(s, 4)->held, "a frame's sheet applies to the frame");
  load_sched_complete(s, 5, 31);
  cr_expect_eq(drain_all(s, order, 31), 0, "image 5 held no place");
  load_sched_complete(s, 10, 32);
  cr_assert_eq(drain_all(s, order, 32), 1);
  cr_expect_eq(order[0], 11, "the queue in the order found");
  load_sched_del(s);
}

/* Chromium's parser waits for each style sheet of the body (with its @imports); its
 * preload scanner does not: frames and inline fetch()es behind a sheet, and the images
 * a sheet names (used by elements at the end of the body), wait for the parser; a script
 * that loads while the parser waits runs when that sheet has loaded. */
Test(load_sched, blocking_css_holds_what_only_the_parser_finds_until_the_sheets_load) {
  for (int blocking = 0; blocking <= 1; blocking++) {
    plan_init(12);
    static const struct {
      load_type type;
      int parent;
      double offset;
    } page[12] = {
        {LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_CSS, 0, 100},    {LOAD_TYPE_IMAGE, 0, 200},
        {LOAD_TYPE_DOCUMENT, 0, 300}, {LOAD_TYPE_OTHER, 0, 400},  {LOAD_TYPE_CSS, 0, 500},
        {LOAD_TYPE_DOCUMENT, 0, 600}, {LOAD_TYPE_IMAGE, 1, -1},   {LOAD_TYPE_CSS, 1, -1},
        {LOAD_TYPE_DOCUMENT, 0, 350}, {LOAD_TYPE_SCRIPT, 0, 450}, {LOAD_TYPE_IMAGE, 10, -1}};
    for (int i = 0; i < 12; i++) {
      fx.res[i].type = page[i].type;
      fx.res[i].parent = page[i].parent;
      fx.res[i].discover_offset = page[i].offset;
    }
    fx.res[4].method = "POST"; /* an inline script's fetch() */
    fx.res[9].status = 204;    /* a frame that would end in no content: a preload instead */
    load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
    load_sched_set_blocking_css(s, blocking);
    load_sched_start(s, 0);
    load_sched_requested(s, 0, 0, 0);
    load_sched_body(s, 0, 1000, 5);
    load_sched_complete(s, 0, 6);
    int order[12];
    int got = drain(s, order, 6);
    if (!blocking) {
      cr_expect_eq(got, 8, "without it every child of the page is found with the bytes");
      load_sched_complete(s, 10, 7);
      cr_expect_eq(state(s, 11), LOAD_READY, "and a script's when it has loaded");
      load_sched_del(s);
      continue;
    }
    cr_assert_eq(got, 5, "the preload scanner's: sheets, image, script, the 204 frame");
    cr_expect(order[0] == 1 && order[1] == 2 && order[2] == 9 && order[3] == 10 && order[4] == 5,
              "got %d %d %d %d %d", order[0], order[1], order[2], order[3], order[4]);
    load_sched_complete(s, 1, 10); /* finds its @import; its image waits for the body's end */
    cr_assert_eq(drain(s, order, 10), 1);
    cr_expect_eq(order[0], 8);
    cr_expect_eq(state(s, 3), LOAD_WAITING, "the sheet is not loaded while its @import loads");
    cr_expect_eq(state(s, 7), LOAD_WAITING);
    load_sched_complete(s, 10, 11); /* the script has loaded, the parser waits for sheet 1 */
    cr_expect_eq(state(s, 11), LOAD_WAITING, "the script waits for the sheet to run");
    load_sched_complete(s, 8, 12); /* sheet 1 loaded: the parser runs to sheet 5 */
    cr_assert_eq(drain(s, order, 12), 3, "the frame and the fetch() between the sheets");
    cr_expect(order[0] == 3 && order[1] == 4 && order[2] == 11, "got %d %d %d", order[0], order[1],
              order[2]);
    cr_expect_eq(load_sched_entry(s, 3)->discovered_ms, 12);
    cr_expect_eq(state(s, 6), LOAD_WAITING, "behind sheet 5");
    load_sched_complete(s, 5, 15); /* the body's end: the frame, then the sheet's image */
    cr_assert_eq(drain(s, order, 15), 2);
    cr_expect(order[0] == 6 && order[1] == 7, "got %d %d", order[0], order[1]);
    cr_expect_eq(load_sched_entry(s, 7)->discovered_ms, 15);
    load_sched_del(s);
  }
}

/* One resource of a redirected page (redirected_page). */
typedef struct page_resource {
  load_type type;
  int parent;
  double offset;
} page_resource;

/* A plan of n resources whose first (the address typed) redirects to the second (the page). */
static void redirected_page(const page_resource *page, int n) {
  plan_init((size_t)n);
  for (int i = 0; i < n; i++) {
    fx.res[i].type = page[i].type;
    fx.res[i].parent = page[i].parent;
    fx.res[i].discover_offset = page[i].offset;
  }
  fx.res[0].status = 302;
  fx.res[0].redirect_to = 1;
}

/* Chromium asks for a document's references some 20 ms after its first byte (the
 * navigation's commit, the parser's start): with a document delay the references found
 * before then wait until then, later ones go at once, a redirect's target does not wait, and
 * a frame's references wait for the frame's own first byte. */
Test(load_sched, a_document_delay_holds_its_references_until_after_its_first_byte) {
  for (int delay = 0; delay <= 20; delay += 20) {
    static const page_resource page[7] = {
        {LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_IMAGE, 1, 0},
        {LOAD_TYPE_CSS, 1, 500},      {LOAD_TYPE_DOCUMENT, 1, 100}, {LOAD_TYPE_IMAGE, 4, 0},
        {LOAD_TYPE_SCRIPT, 3, -1}};
    redirected_page(page, 7);
    load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
    load_sched_set_document_delay(s, delay);
    load_sched_start(s, 0);
    int order[7];
    cr_assert_eq(drain(s, order, 0), 1);
    load_sched_headers(s, 0, 302, 30);
    load_sched_complete(s, 0, 31);
    load_sched_advance(s, 31);
    cr_assert_eq(drain(s, order, 31), 1, "a redirect's target goes at once");
    cr_expect_eq(order[0], 1);
    load_sched_body(s, 1, 200, 60); /* the image at 0 and the frame at 100 are found */
    load_sched_advance(s, 60);
    if (delay == 0) {
      cr_expect_eq(drain(s, order, 60), 2, "without a delay, with the bytes");
      load_sched_del(s);
      continue;
    }
    cr_expect_eq(drain(s, order, 60), 0, "nothing before the parser starts");
    cr_expect_eq(load_sched_entry(s, 2)->discovered_ms, 60, "found with the bytes all the same");
    cr_expect_eq(load_sched_next_wakeup(s), 80, "ready 20 ms after the first byte");
    load_sched_advance(s, 80);
    cr_assert_eq(drain(s, order, 80), 2);
    cr_expect(order[0] == 2 && order[1] == 4, "in the order found: got %d %d", order[0], order[1]);
    load_sched_body(s, 1, 600, 90); /* found after the parser started: at once */
    cr_assert_eq(drain(s, order, 90), 1);
    cr_expect_eq(order[0], 3);
    load_sched_complete(s, 3, 95); /* a style sheet's reference: no document delay */
    cr_assert_eq(drain(s, order, 95), 1);
    cr_expect_eq(order[0], 6);
    load_sched_body(s, 4, 10, 100); /* the frame's first byte: its image waits for 120 */
    load_sched_advance(s, 100);
    cr_expect_eq(drain(s, order, 100), 0);
    load_sched_advance(s, 120);
    cr_assert_eq(drain(s, order, 120), 1);
    cr_expect_eq(order[0], 5);
    load_sched_del(s);
  }
}

/* Chromium navigates a frame from its browser process, some 15 ms after its renderer found
 * it: with a frame delay a frame (a document's or a script's) is asked for that much later
 * than another reference found with it, on top of the document delay; a redirect's target
 * and the other references do not wait for it. */
Test(load_sched, a_frame_delay_holds_frames_only) {
  for (int document_delay = 0; document_delay <= 20; document_delay += 20) {
    static const page_resource page[6] = {
        {LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_IMAGE, 1, 0},
        {LOAD_TYPE_DOCUMENT, 1, 0},   {LOAD_TYPE_SCRIPT, 1, 0},     {LOAD_TYPE_DOCUMENT, 4, -1}};
    redirected_page(page, 6);
    load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
    load_sched_set_document_delay(s, document_delay);
    load_sched_set_frame_delay(s, 15);
    load_sched_start(s, 0);
    int order[6];
    cr_assert_eq(drain(s, order, 0), 1);
    load_sched_headers(s, 0, 302, 30);
    load_sched_complete(s, 0, 31);
    load_sched_advance(s, 31);
    cr_assert_eq(drain(s, order, 31), 1, "a redirect's target is no frame");
    cr_expect_eq(order[0], 1);
    load_sched_body(s, 1, 200, 60); /* the image, the frame and the script are found */
    double others = 60 + document_delay, frame = others + 15;
    load_sched_advance(s, others);
    cr_assert_eq(drain(s, order, others), 2, "delay %d: the image and the script", document_delay);
    cr_expect(order[0] == 2 && order[1] == 4, "got %d %d", order[0], order[1]);
    cr_expect_eq(load_sched_next_wakeup(s), frame, "the frame 15 ms after them");
    load_sched_advance(s, frame - 1);
    cr_expect_eq(drain(s, order, frame - 1), 0);
    load_sched_advance(s, frame);
    cr_assert_eq(drain(s, order, frame), 1);
    cr_expect_eq(order[0], 3);
    load_sched_complete(s, 4, 100); /* the script inserts a frame: 15 ms */
    load_sched_advance(s, 100);
    cr_expect_eq(drain(s, order, 100), 0);
    cr_expect_eq(load_sched_next_wakeup(s), 115);
    load_sched_advance(s, 115);
    cr_assert_eq(drain(s, order, 115), 1);
    cr_expect_eq(order[0], 5);
    load_sched_del(s);
  }
}

/* Chromium creates the requests found together about one a millisecond: with a request
 * spacing each is created that long after the one before it, in the order found, and a
 * frame is navigated its delay after that; a redirect's target is not spaced, and a
 * request found once the spacing has passed goes at once. */
Test(load_sched, a_request_spacing_asks_one_request_after_another) {
  static const page_resource page[6] = {{LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_DOCUMENT, -1, -1},
                                        {LOAD_TYPE_IMAGE, 1, 0},      {LOAD_TYPE_DOCUMENT, 1, 0},
                                        {LOAD_TYPE_SCRIPT, 1, 0},     {LOAD_TYPE_IMAGE, 4, -1}};
  redirected_page(page, 6);
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_frame_delay(s, 15);
  load_sched_set_request_spacing(s, 2);
  load_sched_start(s, 0);
  int order[6];
  cr_assert_eq(drain(s, order, 0), 1, "the page's document at once");
  load_sched_headers(s, 0, 302, 30);
  load_sched_complete(s, 0, 31);
  load_sched_advance(s, 31);
  cr_assert_eq(drain(s, order, 31), 1, "a redirect's target at once");
  load_sched_body(s, 1, 200, 60); /* the image, the frame and the script are found */
  load_sched_advance(s, 60);
  cr_assert_eq(drain(s, order, 60), 1, "the image first");
  cr_expect_eq(order[0], 2);
  cr_expect_eq(load_sched_next_wakeup(s), 64, "the script 4 ms after it, behind the frame");
  load_sched_advance(s, 63);
  cr_expect_eq(drain(s, order, 63), 0);
  load_sched_advance(s, 64);
  cr_assert_eq(drain(s, order, 64), 1);
  cr_expect_eq(order[0], 4);
  cr_expect_eq(load_sched_next_wakeup(s), 77, "the frame created at 62, navigated at 77");
  load_sched_advance(s, 77);
  cr_assert_eq(drain(s, order, 77), 1);
  cr_expect_eq(order[0], 3);
  load_sched_complete(s, 4, 100); /* the script's image, found well after: at once */
  load_sched_advance(s, 100);
  cr_assert_eq(drain(s, order, 100), 1);
  cr_expect_eq(order[0], 5);
  load_sched_del(s);
}

/* The ready times of the eight images a page's first bytes find, with a jitter of 10 ms
 * drawn from seed (and a spacing of 1 ms when spaced). */
static void jittered(uint64_t seed, int spaced, double *ready) {
  page_resource page[10] = {{LOAD_TYPE_DOCUMENT, -1, -1}, {LOAD_TYPE_DOCUMENT, -1, -1}};
  for (int i = 2; i < 10; i++) page[i] = (page_resource){LOAD_TYPE_IMAGE, 1, 0};
  redirected_page(page, 10);
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_set_jitter(s, 10, seed);
  if (spaced) load_sched_set_request_spacing(s, 1);
  load_sched_start(s, 0);
  int order[10];
  drain(s, order, 0);
  load_sched_headers(s, 0, 302, 30);
  load_sched_complete(s, 0, 30);
  load_sched_advance(s, 30);
  load_sched_body(s, 1, 200, 100); /* the images are found at 100 */
  for (int i = 2; i < 10; i++) ready[i - 2] = load_sched_entry(s, i)->ready_ms;
  load_sched_del(s);
}

/* A jitter delays each request found by a draw in [0, ms) of its own: the same seed draws
 * the same delays, another seed others; with a spacing they stay in the order found. */
Test(load_sched, a_jitter_delays_each_request_by_a_draw_the_seed_repeats) {
  double a[8], again[8], other[8], spaced[8];
  jittered(1, 0, a);
  jittered(1, 0, again);
  jittered(2, 0, other);
  jittered(3, 1, spaced);
  int distinct = 0, differ = 0;
  for (int i = 0; i < 8; i++) {
    cr_expect(a[i] >= 100 && a[i] < 110, "image %d ready at %f", i, a[i]);
    cr_expect_eq(a[i], again[i], "the same seed, the same draw");
    differ += a[i] != other[i];
    distinct += i > 0 && a[i] != a[0];
    if (i > 0) cr_expect_geq(spaced[i], spaced[i - 1] + 1, "spaced: in order, 1 ms apart");
  }
  cr_expect_gt(distinct, 0, "each request draws its own delay");
  cr_expect_gt(differ, 0, "another seed draws other delays");
  cr_expect(spaced[0] >= 100 && spaced[0] < 110, "%f", spaced[0]);
}

/* Without a limit nothing is held (the default). */
Test(load_sched, without_a_delayable_limit_nothing_is_held) {
  plan_init(13);
  for (int i = 1; i < 13; i++) {
    fx.res[i].type = LOAD_TYPE_IMAGE;
    fx.res[i].discover_offset = 0;
    fx.res[i].host = i % 2;
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1, 5);
  int order[13];
  cr_expect_eq(drain_all(s, order, 6), 12);
  load_sched_del(s);
}

Test(load_sched, priority_dispatch_puts_css_and_script_before_fonts_images_and_others) {
  plan_init(6);
  load_type types[] = {LOAD_TYPE_DOCUMENT, LOAD_TYPE_OTHER,  LOAD_TYPE_IMAGE,
                       LOAD_TYPE_FONT,     LOAD_TYPE_SCRIPT, LOAD_TYPE_CSS};
  for (int i = 1; i < 6; i++) {
    fx.res[i].type = types[i];
    fx.res[i].discover_offset = 100 * i;
  }
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_PRIORITY, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_body(s, 0, 1000, 5);
  int order[6];
  cr_assert_eq(drain(s, order, 6), 5);
  int want[] = {4, 5, 3, 2, 1}; /* script and css by discovery order, then font, image, other */
  for (int i = 0; i < 5; i++) cr_assert_eq(order[i], want[i], "position %d: got %d", i, order[i]);
  load_sched_del(s);
}

Test(load_sched, groups_are_hosts_in_multi_domain_and_one_in_single_domain) {
  plan_init(2);
  fx.res[1].host = 1;
  fx.res[1].discover_offset = 0;
  load_sched *multi = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched *single = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 1);
  cr_assert_eq(load_sched_groups(multi), 2);
  cr_assert_eq(load_sched_groups(single), 1);
  cr_assert_eq(load_sched_entry(multi, 1)->group, 1);
  cr_assert_eq(load_sched_entry(single, 1)->group, 0);
  load_sched_start(multi, 0);
  load_sched_requested(multi, 0, 0, 0);
  load_sched_headers(multi, 0, 200, 1);
  cr_assert_eq(load_sched_peek(multi, 0), -1);
  cr_assert_eq(load_sched_peek(multi, 1), 1);
  load_sched_del(multi);
  load_sched_del(single);
}

Test(load_sched, coalesced_hosts_share_a_group_and_out_of_range_groups_are_refused) {
  plan_init(3);
  fx.res[1].host = 1;
  fx.res[1].discover_offset = 0;
  fx.res[2].discover_offset = 0;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  int bad[2] = {0, 2};
  cr_assert_eq(load_sched_set_groups(s, bad, 2), -1, "group 2 of 2 must be refused");
  cr_assert_eq(load_sched_groups(s), 2, "a refused map changes nothing");
  cr_assert_eq(load_sched_entry(s, 1)->group, 1);
  int both_in_one[2] = {0, 0};
  cr_assert_eq(load_sched_set_groups(s, both_in_one, 1), 0);
  cr_assert_eq(load_sched_groups(s), 1);
  cr_assert_eq(load_sched_entry(s, 1)->group, 0, "host 1 joins host 0's group");
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  int order[3];
  cr_assert_eq(drain(s, order, 1), 2, "both hosts' children are requestable in group 0");
  load_sched_del(s);
}

Test(load_sched, partitions_split_every_group_in_two_and_survive_regrouping) {
  plan_init(4);
  fx.res[1].host = 1;
  fx.res[3].host = 1;
  for (int i = 1; i < 4; i++) fx.res[i].discover_offset = 0;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  const unsigned char cross[4] = {0, 0, 1, 1}; /* 2 and 3 asked for by a cross-site frame */
  cr_assert_eq(load_sched_set_partitions(s, cross), 0);
  cr_assert_eq(load_sched_set_partitions(s, cross), -1, "partitions are set once");
  cr_assert_eq(load_sched_groups(s), 4);
  cr_assert_eq(load_sched_base_groups(s), 2);
  static const int split[4] = {0, 1, 2, 3}; /* host + 2 in the second partition */
  for (int i = 0; i < 4; i++) cr_assert_eq(load_sched_entry(s, i)->group, split[i], "#%d", i);
  int both_in_one[2] = {0, 0};
  cr_assert_eq(load_sched_set_groups(s, both_in_one, 1), 0);
  cr_assert_eq(load_sched_groups(s), 2, "one coalesced group, two partitions");
  cr_assert_eq(load_sched_base_groups(s), 1);
  static const int coalesced[4] = {0, 0, 1, 1};
  for (int i = 0; i < 4; i++) cr_assert_eq(load_sched_entry(s, i)->group, coalesced[i], "#%d", i);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  cr_assert_eq(load_sched_peek(s, 0), 1, "the page's partition has resource 1");
  cr_assert_eq(load_sched_ready_count(s, 1), 2, "the cross-site partition has 2 and 3");
  load_sched_del(s);
}

Test(load_sched, a_pushed_resource_is_never_requested) {
  plan_init(2);
  fx.res[1].discover_offset = 500;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  int id = load_sched_find_unrequested(s, 0, "/r1");
  cr_assert_eq(id, 1);
  load_sched_pushed(s, id, 0, 1);
  cr_assert_eq(load_sched_find_unrequested(s, 0, "/r1"), -1);
  load_sched_body(s, 0, 1000, 2); /* its discovery comes later */
  cr_assert_eq(load_sched_peek(s, 0), -1, "pushed resource offered for a request");
  cr_assert(load_sched_entry(s, 1)->pushed);
  cr_assert_eq(load_sched_entry(s, 1)->attempts, 0);
  load_sched_del(s);
}

Test(load_sched, a_hint_makes_an_undiscovered_resource_requestable_at_once) {
  plan_init(3);
  fx.res[2].parent = 1;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  cr_assert_eq(load_sched_hint(s, 2, 3), 1);
  cr_assert_eq(load_sched_peek(s, 0), 2);
  cr_assert(load_sched_entry(s, 2)->hinted);
  load_sched_requested(s, 2, 0, 4);
  cr_assert_eq(load_sched_hint(s, 2, 5), 0, "a requested resource cannot be hinted again");
  load_sched_del(s);
}

Test(load_sched, children_of_a_failed_parent_are_still_discovered) {
  plan_init(2);
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_fail(s, 0, "connection reset", 7);
  cr_assert_eq(state(s, 0), LOAD_FAILED);
  cr_assert_str_eq(load_sched_entry(s, 0)->error, "connection reset");
  cr_assert_eq(state(s, 1), LOAD_READY);
  load_sched_del(s);
}

Test(load_sched, a_requeued_request_goes_first_again) {
  plan_init(3);
  fx.res[1].discover_offset = 0;
  fx.res[2].discover_offset = 0;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  load_sched_requested(s, 1, 0, 2);
  load_sched_requeue(s, 1);
  cr_assert_eq(load_sched_peek(s, 0), 1);
  load_sched_requested(s, 1, 1, 3);
  cr_assert_eq(load_sched_entry(s, 1)->attempts, 2);
  cr_assert_float_eq(load_sched_entry(s, 1)->start_ms, 2, 1e-9, "first start kept");
  load_sched_del(s);
}

Test(load_sched, finished_only_when_every_resource_is_done_or_failed) {
  plan_init(2);
  fx.res[1].discover_offset = 0;
  load_sched *s = load_sched_new(&fx.plan, LOAD_DISPATCH_FCFS, 0);
  load_sched_start(s, 0);
  load_sched_requested(s, 0, 0, 0);
  load_sched_headers(s, 0, 200, 1);
  load_sched_complete(s, 0, 2);
  cr_assert_not(load_sched_finished(s));
  load_sched_requested(s, 1, 0, 3);
  load_sched_fail(s, 1, "x", 4);
  cr_assert(load_sched_finished(s));
  load_sched_del(s);
}
