/* fuzz_har.c — harness `har`: the lab's HAR path fed arbitrary bytes as a HAR file:
 * lab_har_load_buffer (jansson, the loader, then lab_har_fix) → lab_pages_extract →
 * lab_plan_build for each page, and every plan built goes through both plan readers.
 *
 * Input: the bytes of a HAR file (JSON), as `speedy lab` would read them from disk.
 *
 * Checked: a refused file leaves one NUL-terminated error line naming the file; a loaded
 * one has entries in file order with a method, a parsed URL (lower-case host, a path
 * starting with '/', a port 1-65535) unless flagged bad, a redirect target exactly when
 * flagged as a redirect, and a replay decision that agrees with its size and cached copy.
 * lab_har_fix run again gives the same derived fields (it is called by the loader and
 * must be idempotent). Pages: every entry in at most one page (all of them, with the
 * unassigned ones, in pageref mode), the document one of the page's entries exactly when
 * it is not missing, parents earlier in the page, discovery shares in [0, 1], the cutoff
 * count matching its flags. Plans: a plan the lab writes must be accepted by
 * replay_plan_parse (speedyd --replay) and load_plan_parse (speedy load), with the same
 * number of resources — otherwise a recording would produce a plan its own tools refuse.
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "har.h"
#include "load_plan.h"
#include "page.h"
#include "plan.h"
#include "replay.h"

/* Pages planned per input: enough to reach every code path, bounded for speed. */
#define HAR_MAX_PLANNED_PAGES 8

static void check_entries(const lab_har *har) {
  for (size_t i = 0; i < har->n_entries; i++) {
    const lab_entry *e = &har->entries[i];
    if (e->index != i) fuzz_fail("entry %zu has index %zu", i, e->index);
    if (e->method == NULL || e->method[0] == '\0' || e->url == NULL)
      fuzz_fail("entry %zu without method or URL", i);
    if (!(e->flags & LAB_FLAG_BAD_URL)) {
      const lab_url *u = &e->parsed;
      if (u->host == NULL || u->host[0] == '\0' || u->path == NULL || u->path[0] != '/' ||
          u->port < 1 || u->port > 65535)
        fuzz_fail("entry %zu: URL %.80s parsed badly", i, e->url);
      for (const char *p = u->host; *p; p++)
        if (*p >= 'A' && *p <= 'Z') fuzz_fail("entry %zu: host %.80s not lower case", i, u->host);
    }
    if ((e->location != NULL) != ((e->flags & LAB_FLAG_REDIRECT) != 0))
      fuzz_fail("entry %zu: location %s but flags %#x", i, e->location ? "set" : "unset", e->flags);
    if (e->body_size < -1) fuzz_fail("entry %zu: body size %lld", i, (long long)e->body_size);
    switch (e->replay) {
    case LAB_REPLAY_AS_RECORDED:
      if (e->replay_size < 0)
        fuzz_fail("entry %zu replayed with size %lld", i, (long long)e->replay_size);
      break;
    case LAB_REPLAY_AS_200_CACHED:
      if (e->cached_copy >= har->n_entries || e->replay_status != 200 || e->replay_size < 0)
        fuzz_fail("entry %zu: cached copy %zu, status %d", i, e->cached_copy, e->replay_status);
      break;
    case LAB_REPLAY_LEFT_OUT:
      if (e->replay_size != -1) fuzz_fail("entry %zu left out with a size", i);
      break;
    default:
      fuzz_fail("entry %zu: replay %d", i, (int)e->replay);
    }
  }
}

/* The fields lab_har_fix derives, for the idempotence check. */
typedef struct derived {
  int64_t body_size;
  lab_size_source size_source;
  double start_ms, end_ms;
  unsigned flags;
  lab_replay replay;
  int replay_status;
  int64_t replay_size;
  size_t cached_copy;
  int has_location;
} derived;

static derived derived_of(const lab_entry *e) {
  derived d;
  memset(&d, 0, sizeof(d));
  d.body_size = e->body_size;
  d.size_source = e->size_source;
  d.start_ms = e->start_ms;
  d.end_ms = e->end_ms;
  d.flags = e->flags;
  d.replay = e->replay;
  d.replay_status = e->replay_status;
  d.replay_size = e->replay_size;
  d.cached_copy = e->cached_copy;
  d.has_location = e->location != NULL;
  return d;
}

static int same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static void check_fix_idempotent(lab_har *har) {
  size_t n = har->n_entries;
  derived *before = malloc((n ? n : 1) * sizeof(*before));
  const char **locations = malloc((n ? n : 1) * sizeof(*locations));
  if (before == NULL || locations == NULL) fuzz_fail("out of memory");
  for (size_t i = 0; i < n; i++) {
    before[i] = derived_of(&har->entries[i]);
    locations[i] = har->entries[i].location;
  }
  int whole = har->whole_second_starts, running = har->running_total_sizes;
  size_t clamped = har->n_start_clamped, matches = har->n_size_matches;
  if (lab_har_fix(har) != 0) fuzz_fail("lab_har_fix failed the second time");
  for (size_t i = 0; i < n; i++) {
    derived after = derived_of(&har->entries[i]);
    const derived *b = &before[i];
    if (after.body_size != b->body_size || after.size_source != b->size_source ||
        !same_double(after.start_ms, b->start_ms) || !same_double(after.end_ms, b->end_ms) ||
        after.flags != b->flags || after.replay != b->replay ||
        after.replay_status != b->replay_status || after.replay_size != b->replay_size ||
        after.cached_copy != b->cached_copy || after.has_location != b->has_location ||
        (locations[i] != NULL && strcmp(locations[i], har->entries[i].location) != 0))
      fuzz_fail("lab_har_fix again changed entry %zu (start %g -> %g, flags %#x -> %#x)", i,
                b->start_ms, after.start_ms, b->flags, after.flags);
  }
  if (whole != har->whole_second_starts || running != har->running_total_sizes ||
      clamped != har->n_start_clamped || matches != har->n_size_matches)
    fuzz_fail("lab_har_fix again changed the file's findings");
  free(before);
  free(locations);
}

static void check_pages(const lab_har *har, const lab_page_set *set) {
  unsigned char *seen = calloc(har->n_entries ? har->n_entries : 1, 1);
  if (seen == NULL) fuzz_fail("out of memory");
  size_t total = 0;
  for (size_t p = 0; p < set->n_pages; p++) {
    const lab_page *page = &set->pages[p];
    size_t cut = 0;
    int document_found = 0;
    for (size_t i = 0; i < page->n_entries; i++) {
      size_t e = page->entries[i];
      if (e >= har->n_entries) fuzz_fail("page %zu: entry %zu of %zu", p, e, har->n_entries);
      if (seen[e]) fuzz_fail("entry %zu is in two pages", e);
      seen[e] = 1;
      if (e == page->document) document_found = 1;
      if (page->parent[i] != LAB_NO_ENTRY && page->parent[i] >= i)
        fuzz_fail("page %zu: entry %zu has parent %zu, not earlier", p, i, page->parent[i]);
      if (page->parent_estimated[i] != LAB_NO_ENTRY && page->parent_estimated[i] >= i)
        fuzz_fail("page %zu: entry %zu has estimated parent %zu", p, i, page->parent_estimated[i]);
      if (!(page->discovery[i] >= 0 && page->discovery[i] <= 1))
        fuzz_fail("page %zu: entry %zu discovery %g", p, i, page->discovery[i]);
      if (page->after_cutoff[i] > 1) fuzz_fail("after_cutoff %u", page->after_cutoff[i]);
      cut += page->after_cutoff[i];
    }
    total += page->n_entries;
    if (cut != page->n_after_cutoff)
      fuzz_fail("page %zu: %zu entries after the cutoff, counted %zu", p, cut,
                page->n_after_cutoff);
    if (page->document_missing != (page->document == LAB_NO_ENTRY))
      fuzz_fail("page %zu: document %zu but missing %d", p, page->document, page->document_missing);
    if (page->document != LAB_NO_ENTRY && !document_found)
      fuzz_fail("page %zu: document %zu is not one of its entries", p, page->document);
    if (page->document_url == NULL) fuzz_fail("page %zu without a document URL", p);
  }
  if (total + set->n_unassigned != har->n_entries)
    fuzz_fail("%zu entries in pages + %zu unassigned != %zu entries", total, set->n_unassigned,
              har->n_entries);
  free(seen);
}

/* A plan the lab builds goes through the replay server's and the loader's readers. */
static void check_plan(const json_t *plan) {
  char *text = json_dumps(plan, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  if (text == NULL) fuzz_fail("json_dumps of a built plan failed");
  size_t len = strlen(text);
  size_t n_resources = json_array_size(json_object_get(plan, "resources"));
  char err[512];
  replay_plan *replay = NULL;
  if (replay_plan_parse(&replay, text, len, "built.json", err, sizeof(err)) != 0)
    fuzz_fail("the replay server refuses a plan the lab built: %s\n%.4000s", err, text);
  if (replay_plan_resource_count(replay) != n_resources)
    fuzz_fail("replay plan has %zu resources, built %zu", replay_plan_resource_count(replay),
              n_resources);
  replay_plan_del(replay);
  load_plan *load = NULL;
  if (load_plan_parse(text, len, &load, err, sizeof(err)) != 0)
    fuzz_fail("the loader refuses a plan the lab built: %s\n%.4000s", err, text);
  if (load->n_resources != n_resources)
    fuzz_fail("load plan has %zu resources, built %zu", load->n_resources, n_resources);
  load_plan_del(load);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char name[] = "fuzz.har";
  char err[512];
  memset(err, 0x55, sizeof(err));
  lab_har *har = NULL;
  if (lab_har_load_buffer(name, (const char *)data, size, &har, err, sizeof(err)) != 0) {
    if (memchr(err, '\0', sizeof(err)) == NULL || strncmp(err, name, strlen(name)) != 0)
      fuzz_fail("a refused file's error is not one line naming the file: %.80s", err);
    return 0;
  }
  check_entries(har);
  check_fix_idempotent(har);

  lab_page_options options;
  lab_page_options_default(&options);
  lab_page_set pages;
  if (lab_pages_extract(har, &options, &pages) != 0) fuzz_fail("lab_pages_extract failed");
  check_pages(har, &pages);

  for (size_t p = 0; p < pages.n_pages && p < HAR_MAX_PLANNED_PAGES; p++) {
    for (int flat = 0; flat <= 1; flat++) {
      lab_plan_options plan_options = {.flat_graph = flat, .seed = 1};
      json_t *plan = lab_plan_build(har, &pages, p, &plan_options, err, sizeof(err));
      if (plan == NULL) continue; /* nothing to replay, too many hosts: said in err */
      check_plan(plan);
      json_decref(plan);
    }
  }
  lab_pages_free(&pages);
  lab_har_free(har);
  return 0;
}
