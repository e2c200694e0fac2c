/* load_sched.h — the loader's discovery model and dispatch order, as pure logic: which
 * resources are requestable now and which one a connection should ask for next.
 *
 * No sockets and no clock: the caller reports events (a response's body bytes so far, a
 * response complete, a push, a hint) with the current time in milliseconds, and asks for
 * the next request of a connection group. The same object records every resource's times
 * for the result.
 *
 * Discovery (docs/lab-loader.md):
 * - A resource's gate is the redirect leading to it (its target is discovered when that
 *   redirect's response is complete), otherwise its parent. Resources without a gate are
 *   discovered when the load starts.
 * - With an HTML parent (discover_offset >= 0) a child is discovered when the parent's body
 *   holds discover_offset bytes (0: as soon as the response headers arrive); with -1, when
 *   the parent's response is complete. A child whose parent failed is discovered then, so
 *   that the load still ends (and is marked invalid).
 * - It becomes requestable start_delay ms after its discovery.
 * - A push (matched by host and path) makes a resource active without a request; a hint
 *   (X-Subresources) makes it requestable at once.
 */
#ifndef SPEEDY_LOAD_SCHED_H
#define SPEEDY_LOAD_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "load_plan.h"

typedef enum load_dispatch {
  LOAD_DISPATCH_FCFS = 0,    /* in the order resources became requestable */
  LOAD_DISPATCH_PRIORITY = 1 /* by type urgency, then that order */
} load_dispatch;

typedef enum load_state {
  LOAD_WAITING = 0, /* not discovered yet */
  LOAD_DELAYED,     /* discovered, waiting for start_delay */
  LOAD_READY,       /* requestable, not requested */
  LOAD_ACTIVE,      /* requested (or pushed), response not complete */
  LOAD_DONE,        /* response complete */
  LOAD_FAILED
} load_state;

/* What the scheduler knows of one resource. Times are ms from the start of the load,
 * -1 when the event did not happen. */
typedef struct load_entry {
  load_state state;
  int group;          /* connection group: the host (multi-domain), 0 (single) or the
                         host's coalesced group (load_sched_set_groups); in the second
                         partition (load_sched_set_partitions) that plus the base count */
  uint64_t ready_seq; /* order of becoming requestable */
  double discovered_ms, ready_ms, start_ms, first_byte_ms, end_ms;
  uint64_t bytes;    /* body bytes received */
  int status;        /* received status, 0 until known */
  int pushed;        /* delivered by server push */
  int hinted;        /* made requestable by an X-Subresources hint */
  int attempts;      /* requests sent (a retry after a dropped connection adds one) */
  int connection;    /* index of the connection it arrived on, -1 */
  int held;          /* READY but held back by the delayable limit (not offered yet) */
  int limited;       /* let go by the delayable limit: counts against it until it ends */
  int waiting;       /* held and looked at: in the queue until a request ends */
  size_t next_child; /* progress cursor into its discovery list */
  char error[160];
} load_entry;

typedef struct load_sched load_sched;

/* Creates a scheduler over plan (which must outlive it). single: every host in group 0.
 * Returns NULL when out of memory. */
load_sched *load_sched_new(const load_plan *plan, load_dispatch dispatch, int single);
void load_sched_del(load_sched *sched);

/* Groups other than one per host or one for all (coalescing: hosts that share an address):
 * host_group[h] is host h's group, 0 to n_groups - 1. Call before load_sched_start.
 * Returns 0, or -1 (nothing changed) when a group is out of range. */
int load_sched_set_groups(load_sched *sched, const int *host_group, int n_groups);
/* Splits every group in two network partitions: resource i goes to its group's second one
 * when cross[i] is 1 (a copy of cross, n_resources entries, is kept: load_sched_set_groups
 * keeps the split). Group g + base (base: load_sched_base_groups) is group g's second
 * partition, at the same address and under the same name. Call once, before
 * load_sched_start. Returns 0, or -1 (nothing changed) when out of memory or called again. */
int load_sched_set_partitions(load_sched *sched, const unsigned char *cross);
/* Number of groups (hosts, 1 in single-domain mode, or load_sched_set_groups's; twice that
 * with partitions). */
int load_sched_groups(const load_sched *sched);
/* 1 when id is the navigation of a frame whose site is not the page's (a frame, in its
 * group's second partition; load_sched_set_partitions), 0 otherwise. */
int load_sched_is_cross_site_frame(const load_sched *sched, int id);
/* Number of groups before the split in partitions (load_sched_groups without them). */
int load_sched_base_groups(const load_sched *sched);
const load_entry *load_sched_entry(const load_sched *sched, int id);

/* The load starts at now: resources without a gate are discovered. */
void load_sched_start(load_sched *sched, double now);

/* Time-driven moves: DELAYED resources whose start_delay has passed become READY. */
void load_sched_advance(load_sched *sched, double now);
/* The earliest time a DELAYED resource becomes READY, or -1 when none waits. */
double load_sched_next_wakeup(const load_sched *sched);

/* Chromium's ResourceScheduler for servers not known to take priorities (HTTP/1.1, and
 * HTTP/2 before its first session to the server is open): requests below medium priority
 * are "delayable" — images until laid out (load_sched_set_image_boost), and what
 * Chromium's priority field (load_browser) puts at u=2 or u=3: scripts (the replay's pages
 * make every script async), a document's later style sheets; without that field, images
 * and scripts. A request counts as what its redirects end in (the replay's page bodies
 * name it so). At most `limit` delayable requests are in flight at once across hosts,
 * and none more to a host that already has LOAD_SCHED_HOST_IN_FLIGHT requests of any kind
 * in flight. A delayable resource that becomes READY beyond that is held in a queue (low
 * before lowest, then in the order found) that load_sched_release looks at only after a
 * request ended or a layout raised images — not when a session opens; a held one is not
 * offered by load_sched_peek. "In flight" counts from release to the end of the response,
 * waiting for a connection included (Chromium starts a request, then the socket pool
 * queues it); a redirect's target goes on as the same request. 0 (the default): nothing
 * is held. Call before load_sched_start. */
#define LOAD_SCHED_HOST_IN_FLIGHT 6
void load_sched_set_delayable_limit(load_sched *sched, int limit);
/* The server of group takes priorities (an HTTP/2 or SPDY session of it is open, so a
 * browser knows): its resources are no longer held — new ones start at once, queued ones
 * when the queue is next looked at and reached. Those the limit let go before count in
 * flight until they end: Chromium's ResourceScheduler keeps the class a request started
 * with (its net logs: requests held until the first layout, not until the session). */
void load_sched_set_prioritized(load_sched *sched, int group);
/* 1 once load_sched_set_prioritized was called for group. */
int load_sched_is_prioritized(const load_sched *sched, int group);
/* With the delayable limit: an <img> of the page's own document is no longer delayable
 * once the document's parser has reached it (every style sheet the document links before
 * it has loaded) — Chromium lays out what its parser has built at each frame and raises
 * the images in the viewport to medium priority, out of the limit, and the replay's page
 * bodies give their images no size, so every one is in it. Its net logs (pinterest.com
 * over HTTP/2: 119 images raised 20 ms after the style sheet in front of them loaded;
 * sina.com.cn: each within a frame of being parsed) show no raise for images inserted by
 * scripts (Image(), not in the document) or a frame's images. A background image of the
 * page's style sheets is raised too when the element that uses it (at the end of the
 * replay's body, below its frames) is on the first screen, once the parser has reached
 * it. Off by default. Returns 0, or -1 when out of memory. */
int load_sched_set_image_boost(load_sched *sched, int on);
/* Chromium's parser stops at a style sheet in a document's body until the sheet (with its
 * @imports) has loaded; its preload scanner still finds images, scripts, style sheets and
 * preloads with the bytes, but a frame or an inline script's fetch() (a non-GET child) is
 * found only when the parser passes it, and a style sheet's images and fonts are asked for
 * only when the elements that use them exist — the replay's page bodies put those at the
 * end of the document, which the parser reaches once the body has arrived and all its
 * style sheets have loaded. A script that has loaded runs (and inserts its children) once
 * the style sheet its document's parser was waiting for then, if any, has loaded. With
 * this on, such resources are discovered then, not with their parent's bytes (Chromium's loads:
 * frames start within 15 ms of the last sheet before them, a sheet's images within 20 ms of the
 * document's last sheet; a script's children after the sheet that blocked the parser when it
 * loaded). Off by default. */
void load_sched_set_blocking_css(load_sched *sched, int on);
/* A document's references are asked for no earlier than ms after its first byte: Chromium
 * commits a navigation to its renderer and starts the parser first (its loads on this
 * project's links: a document's first reference a median 15-22 ms after its first byte,
 * frames and the page alike). A reference found later is asked for when found; a
 * redirect's target is not a reference. 0 (the default): at once. */
void load_sched_set_document_delay(load_sched *sched, double ms);
/* A frame (a GET a document or script names that loads as a document) is asked for ms later
 * than another reference found at the same moment: Chromium starts a frame's navigation in
 * its browser process, not in the renderer that found it (its lab loads: frames a median
 * 15-16 ms after the other references of a document). 0 (the default): no more wait. */
void load_sched_set_frame_delay(load_sched *sched, double ms);
/* Each request found is asked for no earlier than ms after the one found before it (after
 * its other delays): Chromium creates the requests its parser and preload scanner find
 * together about one a millisecond (its net logs: qq.com 80 within 90 ms, pinterest.com
 * 60 within 57 ms, sina.com.cn 16 within 17 ms), where the loader would send them in the
 * same instant — and open their hosts' connections in one burst on the uplink. A
 * redirect's target and the page's document are not spaced. 0 (the default): none. */
void load_sched_set_request_spacing(load_sched *sched, double ms);
/* Each request found waits a further 0 to ms (uniform, from seed), before the spacing above
 * (so requests found one after another stay in that order): a browser's renderer reaches
 * what its parser found a little sooner or later from one load to the next — Chromium's
 * requests of the same page and link begin within 20 ms of each other over four loads for
 * a quarter of them, the loader's within 10 ms — and two loads of the loader that start
 * every request at the same moment meet the same losses on a shared queue. The same seed
 * gives the same draws. 0 (the default): none. */
void load_sched_set_jitter(load_sched *sched, double ms, uint64_t seed);
/* Releases the held resources the limit now allows. Call before asking for requests. */
void load_sched_release(load_sched *sched);

/* The best READY resource of group by the dispatch policy, or -1. Does not change it. */
int load_sched_peek(const load_sched *sched, int group);
/* Number of READY resources in group (held ones are not counted). */
size_t load_sched_ready_count(const load_sched *sched, int group);

/* A request for id was sent on connection at now (READY → ACTIVE). */
void load_sched_requested(load_sched *sched, int id, int connection, double now);
/* A request that never got a response byte goes back to READY (a keep-alive connection
 * closed under it); it keeps its place in the order. */
void load_sched_requeue(load_sched *sched, int id);

/* Response events of an ACTIVE resource. headers: status known (first byte). body: total
 * body bytes so far (discovers children). complete: the response ended. */
void load_sched_headers(load_sched *sched, int id, int status, double now);
void load_sched_body(load_sched *sched, int id, uint64_t total_bytes, double now);
void load_sched_complete(load_sched *sched, int id, double now);
/* The resource failed (reason copied); its children are discovered as if it completed. */
void load_sched_fail(load_sched *sched, int id, const char *reason, double now);

/* The resource of group with this host index and path that has not been requested yet
 * (WAITING, DELAYED or READY; the lowest id), or -1. */
int load_sched_find_unrequested(const load_sched *sched, int host, const char *path);
/* Any resource with this host and path (the lowest id), or -1. */
int load_sched_find(const load_sched *sched, int host, const char *path);

/* The server pushed id (found with load_sched_find*): it becomes ACTIVE without a
 * request, on connection. A resource already ACTIVE by request is taken over (the caller
 * cancels its request). */
void load_sched_pushed(load_sched *sched, int id, int connection, double now);
/* A hint named id: if it is WAITING or DELAYED it becomes READY now. Returns 1 when it
 * changed state. */
int load_sched_hint(load_sched *sched, int id, double now);

/* 1 when every resource is DONE or FAILED. */
int load_sched_finished(const load_sched *sched);

#endif /* SPEEDY_LOAD_SCHED_H */
