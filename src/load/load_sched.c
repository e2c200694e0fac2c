/* load_sched.c — discovery and dispatch order of the page loader (see load_sched.h).
 *
 * Each resource's children (the resources it gates) are kept in one array sorted by the
 * body offset that discovers them, so a body progress report walks a cursor forward
 * instead of scanning the page. Choosing the next request scans the group's resources:
 * pages have hundreds of resources, and the scan keeps the order rules in one place.
 */
#include "load_sched.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

struct load_sched {
  const load_plan *plan;
  load_dispatch dispatch;
  int groups;
  int base_groups;      /* groups before the split in partitions */
  unsigned char *cross; /* per resource: in its group's second partition; NULL: no split */
  load_entry *entries;
  int *gate;            /* per resource: the gating resource or -1 */
  uint64_t *offset_key; /* per resource: bytes of the gate that discover it (UINT64_MAX:
                           when the gate completes) */
  int *children;        /* resource ids sorted by (gate, offset_key, id) */
  size_t *first_child;  /* per resource + 1: start of its run in children */
  uint64_t seq;
  /* load_sched_set_delayable_limit: 0 off; scratch of load_sched_release */
  int delayable_limit;
  int *host_in_flight;        /* per host */
  struct held *held;          /* per resource at most */
  unsigned char *prioritized; /* per group: its server takes priorities (nothing held) */
  int rescan;                 /* a request ended or was raised: the held ones are looked at */
  int image_boost;            /* load_sched_set_image_boost */
  int layout_sheet;           /* image_boost: the sheet the page's parser waits for, or -1 */
  int document;               /* resource 0's final redirect target: the page's document */
  unsigned char *in_view;     /* image_boost, per resource: a background image whose element
                                 the page's first screen shows (page_elements_in_view) */
  int blocking_css;           /* load_sched_set_blocking_css */
  double document_delay_ms;   /* load_sched_set_document_delay */
  double frame_delay_ms;      /* load_sched_set_frame_delay */
  double request_spacing_ms;  /* load_sched_set_request_spacing */
  double next_request_ms;     /* request_spacing: the earliest the next request may be ready */
  double jitter_ms;           /* load_sched_set_jitter */
  rng_gen jitter_rng;         /* its draws */
  unsigned char *parked;      /* per resource: its gate's bytes found it, the parser not yet */
  int *runs_after;            /* per script: the style sheet it waits for to run, or -1 */
  size_t n_parked;
};

/* A held resource in load_sched_release's order. */
typedef struct held {
  int urgency;
  uint64_t seq;
  int id;
} held;

/* A sort key of the children array (qsort has no context argument). */
typedef struct child_key {
  int gate;
  uint64_t offset;
  int id;
} child_key;

static int child_cmp(const void *a, const void *b) {
  const child_key *x = a, *y = b;
  if (x->gate != y->gate) return x->gate < y->gate ? -1 : 1;
  if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
  return x->id < y->id ? -1 : x->id > y->id;
}

load_sched *load_sched_new(const load_plan *plan, load_dispatch dispatch, int single) {
  size_t n = plan->n_resources;
  load_sched *s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->plan = plan;
  s->dispatch = dispatch;
  s->layout_sheet = -1;
  s->groups = s->base_groups = single ? 1 : (int)plan->n_hosts;
  s->entries = calloc(n, sizeof(*s->entries));
  s->gate = malloc(n * sizeof(*s->gate));
  s->offset_key = malloc(n * sizeof(*s->offset_key));
  s->children = malloc(n * sizeof(*s->children));
  s->first_child = calloc(n + 2, sizeof(*s->first_child));
  s->host_in_flight = calloc(plan->n_hosts + 1, sizeof(*s->host_in_flight));
  s->held = malloc((n + 1) * sizeof(*s->held));
  s->prioritized = calloc(2 * plan->n_hosts + 1, 1); /* groups <= hosts, twice when split */
  s->parked = calloc(n + 1, 1);
  s->runs_after = malloc((n + 1) * sizeof(*s->runs_after));
  if (!s->entries || !s->gate || !s->offset_key || !s->children || !s->first_child ||
      !s->host_in_flight || !s->held || !s->prioritized || !s->parked || !s->runs_after) {
    load_sched_del(s);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    const load_resource *r = &plan->resources[i];
    s->gate[i] = r->parent;
    s->offset_key[i] = r->discover_offset < 0 ? UINT64_MAX : (uint64_t)r->discover_offset;
    load_entry *e = &s->entries[i];
    e->group = single ? 0 : r->host;
    e->discovered_ms = e->ready_ms = e->start_ms = e->first_byte_ms = e->end_ms = -1;
    e->connection = -1;
    s->runs_after[i] = -1;
  }
  /* A browser knows only the page's address at first: the plan's other roots (resources
   * nothing was found to load) are found in the page, with its first bytes — where the
   * replay's page bodies name them for Chromium (docs/lab-loader.md, "Discovery"). */
  if (n > 0 && plan->resources[0].parent < 0 && plan->resources[0].type == LOAD_TYPE_DOCUMENT)
    for (size_t i = 1; i < n; i++)
      if (s->gate[i] < 0) {
        s->gate[i] = 0;
        s->offset_key[i] = 0;
      }
  for (size_t i = n; i-- > 0;) { /* the lowest-numbered redirect gates its target */
    int target = plan->resources[i].redirect_to;
    if (target >= 0) {
      s->gate[target] = (int)i;
      s->offset_key[target] = UINT64_MAX;
    }
  }
  child_key *keys = malloc(n * sizeof(*keys));
  if (!keys) {
    load_sched_del(s);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) keys[i] = (child_key){s->gate[i], s->offset_key[i], (int)i};
  qsort(keys, n, sizeof(*keys), child_cmp);
  for (size_t i = 0; i < n; i++) s->children[i] = keys[i].id;
  free(keys);
  /* first_child[g + 1] is where gate g's run starts (g = -1 uses index 0). */
  size_t at = 0;
  for (int g = -1; g < (int)n; g++) {
    while (at < n && s->gate[s->children[at]] < g) at++;
    s->first_child[g + 1] = at;
  }
  s->first_child[n + 1] = n;
  return s;
}

void load_sched_del(load_sched *s) {
  if (!s) return;
  free(s->entries);
  free(s->gate);
  free(s->offset_key);
  free(s->children);
  free(s->first_child);
  free(s->host_in_flight);
  free(s->held);
  free(s->prioritized);
  free(s->cross);
  free(s->parked);
  free(s->runs_after);
  free(s->in_view);
  free(s);
}

int load_sched_set_groups(load_sched *s, const int *host_group, int n_groups) {
  if (n_groups < 1) return -1;
  for (size_t h = 0; h < s->plan->n_hosts; h++)
    if (host_group[h] < 0 || host_group[h] >= n_groups) return -1;
  for (size_t i = 0; i < s->plan->n_resources; i++)
    s->entries[i].group =
        host_group[s->plan->resources[i].host] + (s->cross && s->cross[i] ? n_groups : 0);
  s->base_groups = n_groups;
  s->groups = s->cross ? 2 * n_groups : n_groups;
  return 0;
}

int load_sched_set_partitions(load_sched *s, const unsigned char *cross) {
  size_t n = s->plan->n_resources;
  if (s->cross) return -1;
  s->cross = malloc(n ? n : 1);
  if (!s->cross) return -1;
  memcpy(s->cross, cross, n);
  for (size_t i = 0; i < n; i++) s->entries[i].group += s->cross[i] ? s->base_groups : 0;
  s->groups = 2 * s->base_groups;
  return 0;
}

int load_sched_groups(const load_sched *s) { return s->groups; }

int load_sched_base_groups(const load_sched *s) { return s->base_groups; }

const load_entry *load_sched_entry(const load_sched *s, int id) {
  return id >= 0 && (size_t)id < s->plan->n_resources ? &s->entries[id] : NULL;
}

static int parser_at_end(const load_sched *s, int doc);

/* Laid out by Chromium, which raises it to medium priority (load_sched_set_image_boost): an
 * <img> of the page's own document (not a frame's, nor a script's Image()) that the
 * document's parser has reached: before the style sheet it waits for (update_layout); or
 * the background image of a page's style sheet whose element is on the first screen, once
 * the parser has reached the end of the body, where that element stands. */
static int laid_out_image(const load_sched *s, int id) {
  if (!s->image_boost) return 0;
  int gate = s->gate[id];
  uint64_t at = s->offset_key[id];
  if (s->in_view && s->in_view[id]) /* its element stands at the end of the body */
    return s->entries[id].state != LOAD_WAITING && parser_at_end(s, s->document);
  if (gate < 0 || at == UINT64_MAX || s->entries[id].state == LOAD_WAITING ||
      load_plan_final_target(s->plan, gate) != s->document)
    return 0;
  int sheet = s->layout_sheet;
  return sheet < 0 || at < s->offset_key[sheet] || (at == s->offset_key[sheet] && id < sheet);
}

/* Below medium priority in Chromium (delayable): an element asked for as an image (what
 * its redirects end in decides, as the replay's page bodies do) until it is laid out;
 * otherwise what Chromium's priority field says (load_browser: u=2 low, a document's later
 * style sheets among them, u=3 lowest, async scripts), or without it every script. */
static int delayable(const load_sched *s, int id) {
  load_type t = load_plan_reference_type(s->plan, id);
  if (t == LOAD_TYPE_IMAGE) return !laid_out_image(s, id);
  const load_resource *r = &s->plan->resources[id];
  return r->browser_priority ? r->browser_urgency >= 2 : t == LOAD_TYPE_SCRIPT;
}

/* Chromium's priority of a delayable request while it waits: its queue takes low ones
 * (u=2) before lowest ones, each in the order they were made. */
static int waiting_urgency(const load_sched *s, int id) {
  const load_resource *r = &s->plan->resources[id];
  return r->browser_priority ? r->browser_urgency : 3;
}

static void update_layout(load_sched *s);

static void make_ready(load_sched *s, int id, double now) {
  load_entry *e = &s->entries[id];
  e->state = LOAD_READY;
  update_layout(s);
  int gate = s->gate[id];
  if (gate >= 0 && s->plan->resources[gate].redirect_to == id) {
    /* The request that was redirected goes on: it is not held again (and counts against the
     * limit if its first hop did). */
    e->held = 0;
    e->limited = s->entries[gate].limited;
  } else {
    e->held = s->delayable_limit > 0 && delayable(s, id);
  }
  e->waiting = 0;
  e->ready_ms = now;
  e->ready_seq = ++s->seq;
}

/* How long after now the parser of id's document can ask for it (load_sched_set_document_delay):
 * 0 when id is no document's reference or the wait is over. */
static double document_wait(const load_sched *s, int id, double now) {
  int gate = s->gate[id];
  if (s->document_delay_ms <= 0 || gate < 0) return 0;
  const load_resource *g = &s->plan->resources[gate];
  double first_byte = s->entries[gate].first_byte_ms;
  if (g->type != LOAD_TYPE_DOCUMENT || g->redirect_to == id || first_byte < 0) return 0;
  double wait = first_byte + s->document_delay_ms - now;
  return wait > 0 ? wait : 0;
}

/* A frame: a GET some document or script names that loads as a document (not the target
 * of a redirect, which the browser follows by itself). */
static int is_frame(const load_sched *s, int id) {
  int gate = s->gate[id];
  return gate >= 0 && s->plan->resources[gate].redirect_to != id &&
         strcmp(s->plan->resources[id].method, "GET") == 0 &&
         load_plan_reference_type(s->plan, id) == LOAD_TYPE_DOCUMENT;
}

int load_sched_is_cross_site_frame(const load_sched *s, int id) {
  return s->cross != NULL && id >= 0 && (size_t)id < s->plan->n_resources && s->cross[id] &&
         is_frame(s, id);
}

static void discover(load_sched *s, int id, double now) {
  load_entry *e = &s->entries[id];
  if (e->state != LOAD_WAITING) return; /* pushed or hinted already */
  e->discovered_ms = now;
  double delay = s->plan->resources[id].start_delay_ms;
  double wait = document_wait(s, id, now);
  if (wait > delay) delay = wait;
  int gate = s->gate[id];
  if (s->jitter_ms > 0)
    delay += rng_uniform(&s->jitter_rng) * s->jitter_ms; /* before the spacing: in order */
  if (s->request_spacing_ms > 0 && gate >= 0 && s->plan->resources[gate].redirect_to != id) {
    double at = now + delay; /* created one after another, in the order they are found */
    if (at < s->next_request_ms) at = s->next_request_ms;
    s->next_request_ms = at + s->request_spacing_ms;
    delay = at - now;
  }
  if (s->frame_delay_ms > 0 && is_frame(s, id)) delay += s->frame_delay_ms; /* then navigated */
  if (delay > 0) {
    e->state = LOAD_DELAYED;
    e->ready_ms = now + delay;
  } else {
    make_ready(s, id, now);
  }
}

/* ---- Style sheets that block the parser (load_sched_set_blocking_css) ---------------- */

static int finished(const load_entry *e) {
  return e->state == LOAD_DONE || e->state == LOAD_FAILED;
}

/* A style sheet has loaded: its redirect chain's end is complete, and so is every sheet it
 * @imports (a plan's parents come before their children: the recursion ends). */
static int sheet_loaded(const load_sched *s, int id) {
  int sheet = load_plan_final_target(s->plan, id);
  if (!finished(&s->entries[sheet])) return 0;
  for (size_t i = s->first_child[sheet + 1]; i < s->first_child[sheet + 2]; i++) {
    int child = s->children[i];
    if (load_plan_reference_type(s->plan, child) == LOAD_TYPE_CSS && !sheet_loaded(s, child))
      return 0;
  }
  return 1;
}

/* A child of a document's body that is a linked style sheet (a GET the page names with
 * <link rel=stylesheet>) and has not loaded yet: the parser waits for it. */
static int sheet_loading(const load_sched *s, int child) {
  return load_plan_reference_type(s->plan, child) == LOAD_TYPE_CSS &&
         strcmp(s->plan->resources[child].method, "GET") == 0 && !sheet_loaded(s, child);
}

/* Document doc's parser has passed the place (offset, id) of its body: every style sheet the
 * body links before that place has loaded. (offset UINT64_MAX, id INT_MAX: the end.) */
static int parser_passed(const load_sched *s, int doc, uint64_t offset, int id) {
  for (size_t i = s->first_child[doc + 1]; i < s->first_child[doc + 2]; i++) {
    int sheet = s->children[i];
    uint64_t at = s->offset_key[sheet];
    if (at == UINT64_MAX || at > offset || (at == offset && sheet >= id)) break;
    if (sheet_loading(s, sheet)) return 0;
  }
  return 1;
}

/* Document doc has arrived and its parser has passed its whole body: the elements at the
 * end of the body exist. */
static int parser_at_end(const load_sched *s, int doc) {
  return finished(&s->entries[doc]) && parser_passed(s, doc, UINT64_MAX, INT_MAX);
}

/* May child, which its gate's bytes (or completion) have found, be discovered now? Only the
 * parser acts on a frame or an inline script's fetch(): they wait until it has passed every
 * style sheet before them. A style sheet's image or font is asked for when an element uses
 * it: the elements stand at the end of the document's body, which the parser reaches when
 * the body has arrived and all its style sheets have loaded. */
static int parser_found(const load_sched *s, int child) {
  int gate = s->gate[child];
  if (!s->blocking_css || gate < 0) return 1;
  const load_resource *g = &s->plan->resources[gate];
  if (g->redirect_to == child) return 1;
  load_type type = load_plan_reference_type(s->plan, child);
  if (s->offset_key[child] == UINT64_MAX) {
    if (g->type == LOAD_TYPE_SCRIPT)
      return s->runs_after[gate] < 0 || sheet_loaded(s, s->runs_after[gate]);
    if (g->type != LOAD_TYPE_CSS || type == LOAD_TYPE_CSS) return 1;
    return parser_at_end(s, load_plan_document_of(s->plan, gate));
  }
  if (g->type != LOAD_TYPE_DOCUMENT) return 1;
  if (strcmp(s->plan->resources[child].method, "GET") == 0 && type != LOAD_TYPE_DOCUMENT)
    return 1; /* the preload scanner finds it with the bytes */
  return parser_passed(s, gate, s->offset_key[child], child);
}

/* The style sheet doc's parser waits for now: the first of its body's sheets, among the
 * bytes that have arrived, that has not loaded; -1 when the parser waits for none. */
static int blocking_sheet(const load_sched *s, int doc) {
  const load_entry *d = &s->entries[doc];
  for (size_t i = s->first_child[doc + 1]; i < s->first_child[doc + 2]; i++) {
    int sheet = s->children[i];
    uint64_t at = s->offset_key[sheet];
    if (at == UINT64_MAX || (!finished(d) && at > d->bytes)) break;
    if (sheet_loading(s, sheet)) return sheet;
  }
  return -1;
}

/* Discovers the parked resources the parser has now found, in the children's order. */
static void unpark(load_sched *s, double now) {
  for (size_t i = 0; s->n_parked > 0 && i < s->plan->n_resources; i++) {
    int child = s->children[i];
    if (s->parked[child] && parser_found(s, child)) {
      s->parked[child] = 0;
      s->n_parked--;
      discover(s, child, now);
    }
  }
}

void load_sched_set_blocking_css(load_sched *s, int on) { s->blocking_css = on != 0; }

void load_sched_set_document_delay(load_sched *s, double ms) {
  s->document_delay_ms = ms > 0 ? ms : 0;
}

void load_sched_set_frame_delay(load_sched *s, double ms) { s->frame_delay_ms = ms > 0 ? ms : 0; }

void load_sched_set_request_spacing(load_sched *s, double ms) {
  s->request_spacing_ms = ms > 0 ? ms : 0;
}

void load_sched_set_jitter(load_sched *s, double ms, uint64_t seed) {
  s->jitter_ms = ms > 0 ? ms : 0;
  rng_seed(&s->jitter_rng, seed);
}

/* Discovers gate's children up to `bytes` of its body (UINT64_MAX: all of them). */
static void discover_children(load_sched *s, int gate, uint64_t bytes, double now) {
  load_entry *g = &s->entries[gate];
  size_t begin = s->first_child[gate + 1], end = s->first_child[gate + 2];
  while (begin + g->next_child < end) {
    int child = s->children[begin + g->next_child];
    if (s->offset_key[child] > bytes) break;
    g->next_child++;
    if (parser_found(s, child)) {
      discover(s, child, now);
    } else {
      s->parked[child] = 1;
      s->n_parked++;
    }
  }
}

void load_sched_start(load_sched *s, double now) {
  for (size_t i = s->first_child[0]; i < s->first_child[1]; i++) discover(s, s->children[i], now);
}

/* A resource the replay's page bodies make an element for (replay_page.c): one that a
 * style sheet answered 200 names, not itself a sheet. */
static int named_by_sheet(const load_sched *s, int id) {
  const load_resource *r = &s->plan->resources[id];
  if (r->parent < 0 || load_plan_reference_type(s->plan, id) == LOAD_TYPE_CSS) return 0;
  const load_resource *p = &s->plan->resources[r->parent];
  return p->type == LOAD_TYPE_CSS && p->status == 200 && p->redirect_to < 0;
}

/* Geometry of the replay's page body in Chromium's headless window (measured with the
 * replay's bodies: 780 x 437 px shown; frames of 304 x 154 px, two to a 158 px row; below
 * them one <p> per resource a style sheet names, in plan order, 35 px apart, the first at
 * 116 px without frames, 97 px below the last row with them). */
#define PAGE_VIEW_HEIGHT 437
#define PAGE_FIRST_ELEMENT 116
#define PAGE_ELEMENT_BELOW_FRAMES 97
#define PAGE_FRAME_ROW 158
#define PAGE_ELEMENT_PITCH 35

/* Marks in_view: the background images of the page's own style sheets (linked or inserted
 * by its scripts, with their @imports) whose element lies on the first screen. Chromium
 * lays those out and raises them as it does <img> (its net logs: yahoo.co.jp, ebay.com,
 * pinterest.com raise every such image, nytimes.com the first of nine, the one element
 * on the screen; msn.com's, below seven frames, stay lowest; taobao.com's first, which
 * this estimate puts on the screen, did too: there the images before its first frame fill
 * a row's width). A frame's sheets apply to the frame, whose elements the page's screen
 * does not show. */
static int page_elements_in_view(load_sched *s) {
  size_t n = s->plan->n_resources;
  s->in_view = calloc(n ? n : 1, 1);
  if (!s->in_view) return -1;
  int frames = 0;
  for (size_t i = 0; i < n; i++) frames += s->gate[i] == s->document && is_frame(s, (int)i);
  int rows = (frames + 1) / 2;
  long top = rows ? PAGE_ELEMENT_BELOW_FRAMES + (long)PAGE_FRAME_ROW * rows : PAGE_FIRST_ELEMENT;
  for (size_t i = 0; i < n && top < PAGE_VIEW_HEIGHT; i++) {
    if (!named_by_sheet(s, (int)i)) continue;
    int sheet = s->plan->resources[i].parent;
    s->in_view[i] = load_plan_reference_type(s->plan, (int)i) == LOAD_TYPE_IMAGE &&
                    load_plan_document_of(s->plan, sheet) == s->document;
    top += PAGE_ELEMENT_PITCH;
  }
  return 0;
}

int load_sched_set_image_boost(load_sched *s, int on) {
  s->image_boost = on != 0;
  s->document = s->plan->n_resources > 0 ? load_plan_final_target(s->plan, 0) : 0;
  free(s->in_view);
  s->in_view = NULL;
  return s->image_boost ? page_elements_in_view(s) : 0;
}

/* Where the page's parser stands, for laid_out_image (the images it has found lie within
 * the bytes blocking_sheet looks at). */
static void update_layout(load_sched *s) {
  int sheet = s->image_boost && s->plan->n_resources > 0 ? blocking_sheet(s, s->document) : -1;
  if (sheet != s->layout_sheet) s->rescan = 1; /* a layout raised the images before it */
  s->layout_sheet = sheet;
}

void load_sched_advance(load_sched *s, double now) {
  /* In ready-time order, so that FCFS follows the delays. */
  for (;;) {
    int best = -1;
    for (size_t i = 0; i < s->plan->n_resources; i++) {
      const load_entry *e = &s->entries[i];
      if (e->state == LOAD_DELAYED && e->ready_ms <= now &&
          (best < 0 || e->ready_ms < s->entries[best].ready_ms))
        best = (int)i;
    }
    if (best < 0) return;
    double when = s->entries[best].ready_ms;
    make_ready(s, best, when);
  }
}

double load_sched_next_wakeup(const load_sched *s) {
  double best = -1;
  for (size_t i = 0; i < s->plan->n_resources; i++) {
    const load_entry *e = &s->entries[i];
    if (e->state == LOAD_DELAYED && (best < 0 || e->ready_ms < best)) best = e->ready_ms;
  }
  return best;
}

void load_sched_set_delayable_limit(load_sched *s, int limit) {
  s->delayable_limit = limit > 0 ? limit : 0;
}

static int held_cmp(const void *a, const void *b) {
  const held *x = a, *y = b;
  if (x->urgency != y->urgency) return x->urgency < y->urgency ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void load_sched_set_prioritized(load_sched *s, int group) {
  if (group >= 0 && group < s->groups) s->prioritized[group] = 1;
}

int load_sched_is_prioritized(const load_sched *s, int group) {
  return group >= 0 && group < s->groups && s->prioritized[group];
}

/* Chromium's ResourceScheduler: a request it makes starts at once unless it is delayable,
 * its server is not known to take priorities, and the limit (or its host's) is reached;
 * then it waits in a queue (low before lowest, then in the order made), which is looked at
 * only when a request ends or a layout raises images — not when a session opens (its net
 * logs: zalando.de's requests to three hosts whose sessions opened at 500 ms waited until
 * the next request ended, at 800). The scan goes down the queue: a request to a server
 * that takes priorities starts, a delayable one to another server starts if the limit
 * allows, and the first the limit stops ends the scan; one its host's limit stops is
 * passed over. */
void load_sched_release(load_sched *s) {
  if (s->delayable_limit == 0) return;
  update_layout(s);
  int scan = s->rescan;
  s->rescan = 0;
  size_t n = s->plan->n_resources, n_held = 0;
  int delayable_in_flight = 0;
  memset(s->host_in_flight, 0, s->plan->n_hosts * sizeof(*s->host_in_flight));
  for (size_t i = 0; i < n; i++) {
    load_entry *e = &s->entries[i];
    if (e->state == LOAD_READY && e->held && !delayable(s, (int)i)) {
      e->held = 0; /* raised out of the limit (load_sched_set_image_boost) */
      scan = 1;
    }
    if (e->state == LOAD_READY && e->held) {
      s->held[n_held++] = (held){0, e->ready_seq, (int)i};
    } else if (e->state == LOAD_ACTIVE || e->state == LOAD_READY) {
      s->host_in_flight[s->plan->resources[i].host]++;
      if (s->prioritized[e->group] ? e->limited : delayable(s, (int)i))
        delayable_in_flight++; /* what the limit let go counts until it ends */
    }
  }
  if (n_held == 0) return;
  /* A new request is looked at when made, in that order; the queue in its own. */
  for (size_t k = 0; scan && k < n_held; k++)
    s->held[k].urgency = waiting_urgency(s, s->held[k].id);
  qsort(s->held, n_held, sizeof(*s->held), held_cmp);
  for (size_t k = 0; k < n_held; k++) {
    int id = s->held[k].id, host = s->plan->resources[id].host;
    load_entry *e = &s->entries[id];
    if (!scan && e->waiting) continue; /* in the queue until the next scan */
    if (!s->prioritized[e->group]) {
      if (delayable_in_flight >= s->delayable_limit) {
        if (scan) break;
        e->waiting = 1;
        continue;
      }
      if (s->host_in_flight[host] >= LOAD_SCHED_HOST_IN_FLIGHT) {
        e->waiting = 1;
        continue;
      }
      e->limited = 1;
      delayable_in_flight++;
    }
    e->held = 0;
    s->host_in_flight[host]++;
  }
  /* What the scan did not reach waits in the queue too. */
  for (size_t k = 0; k < n_held; k++)
    if (s->entries[s->held[k].id].held) s->entries[s->held[k].id].waiting = 1;
}

/* 1 when a should be requested before b. */
static int before(const load_sched *s, int a, int b) {
  if (s->dispatch == LOAD_DISPATCH_PRIORITY) {
    int ua = load_type_urgency(s->plan->resources[a].type);
    int ub = load_type_urgency(s->plan->resources[b].type);
    if (ua != ub) return ua < ub;
  }
  return s->entries[a].ready_seq < s->entries[b].ready_seq;
}

int load_sched_peek(const load_sched *s, int group) {
  int best = -1;
  for (size_t i = 0; i < s->plan->n_resources; i++) {
    const load_entry *e = &s->entries[i];
    if (e->state == LOAD_READY && !e->held && e->group == group &&
        (best < 0 || before(s, (int)i, best)))
      best = (int)i;
  }
  return best;
}

size_t load_sched_ready_count(const load_sched *s, int group) {
  size_t n = 0;
  for (size_t i = 0; i < s->plan->n_resources; i++)
    n += s->entries[i].state == LOAD_READY && !s->entries[i].held && s->entries[i].group == group;
  return n;
}

void load_sched_requested(load_sched *s, int id, int connection, double now) {
  load_entry *e = &s->entries[id];
  e->state = LOAD_ACTIVE;
  e->connection = connection;
  e->attempts++;
  e->status = 0;
  e->bytes = 0;
  if (e->start_ms < 0) e->start_ms = now;
}

void load_sched_requeue(load_sched *s, int id) {
  load_entry *e = &s->entries[id];
  if (e->state != LOAD_ACTIVE) return;
  e->state = LOAD_READY; /* ready_seq kept: it goes first again */
  e->connection = -1;
}

void load_sched_headers(load_sched *s, int id, int status, double now) {
  load_entry *e = &s->entries[id];
  e->status = status;
  if (e->first_byte_ms < 0) e->first_byte_ms = now;
  discover_children(s, id, 0, now);
}

void load_sched_body(load_sched *s, int id, uint64_t total_bytes, double now) {
  load_entry *e = &s->entries[id];
  e->bytes = total_bytes;
  if (e->first_byte_ms < 0) e->first_byte_ms = now;
  /* UINT64_MAX is reserved for "complete": a body that long cannot exist */
  discover_children(s, id, total_bytes < UINT64_MAX ? total_bytes : UINT64_MAX - 1, now);
}

void load_sched_complete(load_sched *s, int id, double now) {
  load_entry *e = &s->entries[id];
  if (e->state == LOAD_DONE || e->state == LOAD_FAILED) return;
  e->state = LOAD_DONE;
  e->end_ms = now;
  s->rescan = 1;
  /* A script that has loaded runs once the style sheet its document's parser waits for,
   * if any, has loaded (a script-blocking style sheet): its children wait with it. */
  if (s->blocking_css && s->plan->resources[id].type == LOAD_TYPE_SCRIPT)
    s->runs_after[id] = blocking_sheet(s, load_plan_document_of(s->plan, id));
  discover_children(s, id, UINT64_MAX, now);
  unpark(s, now);
}

void load_sched_fail(load_sched *s, int id, const char *reason, double now) {
  load_entry *e = &s->entries[id];
  if (e->state == LOAD_DONE || e->state == LOAD_FAILED) return;
  e->state = LOAD_FAILED;
  e->end_ms = now;
  s->rescan = 1;
  size_t n = strlen(reason);
  if (n >= sizeof(e->error)) n = sizeof(e->error) - 1;
  memcpy(e->error, reason, n);
  e->error[n] = '\0';
  discover_children(s, id, UINT64_MAX, now);
  unpark(s, now);
}

int load_sched_find_unrequested(const load_sched *s, int host, const char *path) {
  for (size_t i = 0; i < s->plan->n_resources; i++) {
    const load_resource *r = &s->plan->resources[i];
    load_state st = s->entries[i].state;
    if ((st == LOAD_WAITING || st == LOAD_DELAYED || st == LOAD_READY) && r->host == host &&
        strcmp(r->path, path) == 0)
      return (int)i;
  }
  return -1;
}

int load_sched_find(const load_sched *s, int host, const char *path) {
  for (size_t i = 0; i < s->plan->n_resources; i++)
    if (s->plan->resources[i].host == host && strcmp(s->plan->resources[i].path, path) == 0)
      return (int)i;
  return -1;
}

void load_sched_pushed(load_sched *s, int id, int connection, double now) {
  load_entry *e = &s->entries[id];
  if (e->state == LOAD_WAITING) e->discovered_ms = now;
  e->state = LOAD_ACTIVE;
  e->pushed = 1;
  e->connection = connection;
  e->status = 0;
  e->bytes = 0;
  e->first_byte_ms = -1;
  e->start_ms = now;
}

int load_sched_hint(load_sched *s, int id, double now) {
  load_entry *e = &s->entries[id];
  if (e->state != LOAD_WAITING && e->state != LOAD_DELAYED) return 0;
  if (e->state == LOAD_WAITING) e->discovered_ms = now;
  e->hinted = 1;
  make_ready(s, id, now);
  return 1;
}

int load_sched_finished(const load_sched *s) {
  for (size_t i = 0; i < s->plan->n_resources; i++)
    if (s->entries[i].state != LOAD_DONE && s->entries[i].state != LOAD_FAILED) return 0;
  return 1;
}
