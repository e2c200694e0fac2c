/* page.c — page extraction, the end-of-load cutoff and the dependency graph (page.h).
 *
 * Without log.pages, pages are found in start order (rebuilt starts, ties by file order):
 *  1. The first page begins with the first entry. If it is a document request (Accept:
 *     text/html..., not XHR) it is the document; its redirects are followed (an empty
 *     redirectURL means Location). A redirect whose target was never recorded, or a
 *     document nothing names as Referer (a script or meta-refresh redirect), is followed
 *     by the next document request without a Referer. If the first entry is not a
 *     document request, the document is missing and its URL is the Referer of the first
 *     entry.
 *  2. A later document request D whose Referer is the current page (or empty) starts a
 *     new page when it is a navigation, not a frame: after D's response, the old page and
 *     its frames are no longer named as Referer (an unloaded page sends nothing), while D
 *     (or its redirect target) is. Counted over navigation_window_ms; "no longer" allows
 *     two stragglers plus one per ten new-page entries.
 *  3. An entry naming as Referer a URL never seen before (not recorded, not named by the
 *     current page) starts a page whose document is missing, under the same test.
 * A page is every entry from its first request to the next page's first request.
 */
#define _POSIX_C_SOURCE 200809L
#include "page.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lab_page_options_default(lab_page_options *options) {
  options->cutoff_idle_ms = 2000;
  options->script_window_ms = 100;
  options->navigation_window_ms = 10000;
}

/* ---- Entry kinds ------------------------------------------------------------------- */

static int path_ends_with(const lab_entry *e, const char *suffix) {
  if (e->flags & LAB_FLAG_BAD_URL) return 0;
  size_t path_len = strcspn(e->parsed.path, "?");
  size_t n = strlen(suffix);
  return path_len >= n && strncasecmp(e->parsed.path + path_len - n, suffix, n) == 0;
}

int lab_entry_is_script(const lab_entry *e) {
  if (e->mime_type[0] != '\0' &&
      (strstr(e->mime_type, "javascript") != NULL || strstr(e->mime_type, "ecmascript") != NULL))
    return 1;
  return path_ends_with(e, ".js");
}

int lab_entry_is_css(const lab_entry *e) {
  if (strncasecmp(e->mime_type, "text/css", 8) == 0) return 1;
  return path_ends_with(e, ".css");
}

int lab_entry_is_html(const lab_entry *e) {
  if (strncasecmp(e->mime_type, "text/html", 9) == 0) return 1;
  if (strncasecmp(e->mime_type, "application/xhtml", 17) == 0) return 1;
  return e->mime_type[0] == '\0' && (e->flags & LAB_FLAG_DOCUMENT_LIKE);
}

static const char *referer(const lab_entry *e) {
  const lab_header *h = lab_header_find(e->request_headers, e->n_request_headers, "referer");
  return h != NULL && h->value_len > 0 ? h->value : NULL;
}

/* ---- String sets (small: linear search) --------------------------------------------- */

typedef struct url_set {
  const char **urls;
  size_t n, cap;
} url_set;

static int set_has(const url_set *s, const char *url) {
  if (url == NULL) return 0;
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(s->urls[i], url) == 0 || lab_url_same(s->urls[i], url)) return 1;
  return 0;
}

static int set_add(url_set *s, const char *url) {
  if (url == NULL || set_has(s, url)) return 0;
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    const char **urls = realloc(s->urls, cap * sizeof *urls);
    if (urls == NULL) return -1;
    s->urls = urls;
    s->cap = cap;
  }
  s->urls[s->n++] = url;
  return 0;
}

static void set_clear(url_set *s) { s->n = 0; }
static void set_free(url_set *s) { free(s->urls); }

/* ---- Start order --------------------------------------------------------------------- */

static const lab_har *sort_har; /* qsort has no context argument; extraction is not reentrant */

static int by_start(const void *a, const void *b) {
  const lab_entry *x = &sort_har->entries[*(const size_t *)a];
  const lab_entry *y = &sort_har->entries[*(const size_t *)b];
  if (x->start_ms != y->start_ms) return x->start_ms < y->start_ms ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static size_t *start_order(const lab_har *har) {
  size_t *order = malloc((har->n_entries ? har->n_entries : 1) * sizeof *order);
  if (order == NULL) return NULL;
  for (size_t i = 0; i < har->n_entries; i++) order[i] = i;
  sort_har = har;
  qsort(order, har->n_entries, sizeof *order, by_start);
  return order;
}

/* ---- Splitting --------------------------------------------------------------------- */

typedef struct splitter {
  const lab_har *har;
  const lab_page_options *options;
  const size_t *order;
  size_t n;
  url_set top;            /* the current page's document chain URLs */
  url_set frames;         /* everything the current page names or loads as a document */
  url_set seen;           /* every URL requested so far (any page) */
  url_set fresh;          /* scratch: the candidate page's URLs */
  const char *chain_next; /* awaited redirect target of the document chain */
} splitter;

static const lab_entry *at(const splitter *sp, size_t k) { return &sp->har->entries[sp->order[k]]; }

/* Collects into fresh the URL of the entry at rank k and its redirect chain's targets. */
static int collect_chain(splitter *sp, size_t k, const char *url) {
  set_clear(&sp->fresh);
  if (set_add(&sp->fresh, url) != 0) return -1;
  if (k == LAB_NO_ENTRY) return 0;
  const lab_entry *e = at(sp, k);
  for (size_t j = k + 1; e->location != NULL && j < sp->n; j++) {
    const lab_entry *t = at(sp, j);
    if (lab_url_same(t->url, e->location)) {
      if (set_add(&sp->fresh, t->url) != 0) return -1;
      e = t;
    }
  }
  if (e->location != NULL && set_add(&sp->fresh, e->location) != 0) return -1;
  return 0;
}

/* How long after a navigation's response (plus 1 s of slack) the old page is watched: a
 * frame's parent goes on loading at once, while a page named again later is a visit back. */
#define OLD_WINDOW_MS 3000.0
/* Requests longer than this (long polls, streams) do not keep a page busy. */
#define LONG_REQUEST_MS 5000.0

/* Is url requested again as a document after rank k (a frame the new page has too)? */
static int reloaded_after(const splitter *sp, size_t k, const char *url) {
  for (size_t j = k + 1; j < sp->n; j++) {
    const lab_entry *e = at(sp, j);
    if ((e->flags & LAB_FLAG_DOCUMENT_LIKE) && lab_url_same(e->url, url)) return 1;
  }
  return 0;
}

/* The navigation test of rules 2 and 3 for a candidate at rank k whose page's URLs are in
 * sp->fresh; commit_ms is when the old page would be unloaded. */
static int is_navigation(const splitter *sp, size_t k, double commit_ms, double page_start) {
  double window = sp->options->navigation_window_ms;
  double start = at(sp, k)->start_ms;
  /* Nobody clicks on a page within two seconds of asking for it; frames come that early. */
  if (start < page_start + 2000) return 0;
  size_t named_new = 0, named_old = 0;
  for (size_t j = k; j < sp->n; j++) {
    const lab_entry *e = at(sp, j);
    if (e->start_ms > commit_ms + 1000 + window) break;
    const char *ref = referer(e);
    if (ref == NULL) continue;
    if (set_has(&sp->fresh, ref)) {
      if (e->start_ms <= start + window) named_new++;
    } else if (e->start_ms > commit_ms + 1000 && e->start_ms <= commit_ms + 1000 + OLD_WINDOW_MS &&
               set_has(&sp->frames, ref) && !reloaded_after(sp, k, ref)) {
      /* 1 s of slack: rebuilt starts are only known to within their second. */
      named_old++;
    }
  }
  /* A frame is asked for while its page is busy; a click comes after a pause, or brings
   * more new requests than the old page made in the two seconds before it. */
  size_t before = 0;
  double latest_end = -INFINITY;
  for (size_t j = 0; j < k; j++) {
    const lab_entry *e = at(sp, j);
    if (e->start_ms >= start - 2000) before++;
    if (e->time_ms < LONG_REQUEST_MS && e->end_ms > latest_end) latest_end = e->end_ms;
  }
  int quiet = start - latest_end >= 500;
  if (named_new < 2 || named_old > 2 + named_new / 10) return 0;
  return quiet || (named_new >= 5 && named_new >= before);
}

/* Does anything in the current page name one of its top URLs as Referer yet? */
static int top_has_children(const splitter *sp, size_t first, size_t k) {
  for (size_t j = first; j < k; j++)
    if (set_has(&sp->top, referer(at(sp, j)))) return 1;
  return 0;
}

/* Starts a page at rank k in pages[*n_pages]. doc_url is the document's URL. */
static int page_begin(splitter *sp, lab_page *page, size_t k, const char *doc_url, int missing) {
  memset(page, 0, sizeof *page);
  page->document = missing ? LAB_NO_ENTRY : sp->order[k];
  page->document_url = doc_url;
  page->document_missing = missing;
  set_clear(&sp->top);
  set_clear(&sp->frames);
  sp->chain_next = NULL;
  if (set_add(&sp->top, doc_url) != 0 || set_add(&sp->frames, doc_url) != 0) return -1;
  if (!missing && at(sp, k)->location != NULL) {
    sp->chain_next = at(sp, k)->location;
    if (set_add(&sp->top, sp->chain_next) != 0 || set_add(&sp->frames, sp->chain_next) != 0)
      return -1;
  }
  return 0;
}

/* Rank of each page's first entry into starts[]; returns the page count or -1. */
static long split(splitter *sp, size_t *starts, lab_page *pages) {
  long n_pages = 0;
  size_t first = 0;
  for (size_t k = 0; k < sp->n; k++) {
    const lab_entry *e = at(sp, k);
    const char *ref = referer(e);
    int doc = (e->flags & LAB_FLAG_DOCUMENT_LIKE) != 0;
    lab_page *page = n_pages > 0 ? &pages[n_pages - 1] : NULL;
    if (page == NULL) {
      const char *url = doc ? e->url : (ref != NULL ? ref : e->url);
      if (page_begin(sp, &pages[0], k, url, !doc) != 0) return -1;
      starts[n_pages++] = k;
      first = k;
    } else if (page->document_missing && doc && lab_url_same(e->url, page->document_url)) {
      /* The document turns up after resources naming it (starts rebuilt within a second). */
      page->document = sp->order[k];
      page->document_missing = 0;
      sp->chain_next = e->location;
      if (set_add(&sp->top, e->location) != 0 || set_add(&sp->frames, e->location) != 0) return -1;
    } else if (sp->chain_next != NULL && lab_url_same(e->url, sp->chain_next)) {
      /* The document chain goes on: a redirect's target. */
      page->document = sp->order[k];
      page->document_url = e->url;
      page->document_missing = 0;
      sp->chain_next = e->location;
      if (set_add(&sp->top, e->url) != 0 || set_add(&sp->top, e->location) != 0 ||
          set_add(&sp->frames, e->url) != 0 || set_add(&sp->frames, e->location) != 0)
        return -1;
    } else if (doc && ref == NULL && !top_has_children(sp, first, k)) {
      /* A target never recorded, or a script/meta-refresh redirect: the next document
       * request without a Referer is the chain's continuation. */
      page->document = sp->order[k];
      page->document_url = e->url;
      page->document_missing = 0;
      sp->chain_next = e->location;
      if (set_add(&sp->top, e->url) != 0 || set_add(&sp->top, e->location) != 0 ||
          set_add(&sp->frames, e->url) != 0 || set_add(&sp->frames, e->location) != 0)
        return -1;
    } else if (doc && (ref == NULL || set_has(&sp->top, ref))) {
      if (collect_chain(sp, k, e->url) != 0) return -1;
      if (is_navigation(sp, k, e->end_ms, at(sp, first)->start_ms)) {
        if (page_begin(sp, &pages[n_pages], k, e->url, 0) != 0) return -1;
        starts[n_pages++] = k;
        first = k;
      }
    } else if (ref != NULL && !set_has(&sp->frames, ref) && !set_has(&sp->seen, ref)) {
      if (collect_chain(sp, LAB_NO_ENTRY, ref) != 0) return -1;
      if (is_navigation(sp, k, e->start_ms, at(sp, first)->start_ms)) {
        if (page_begin(sp, &pages[n_pages], k, ref, 1) != 0) return -1;
        starts[n_pages++] = k;
        first = k;
      }
    }
    if (set_add(&sp->seen, e->url) != 0) return -1;
    if (set_add(&sp->frames, ref) != 0) return -1;
    if (doc && set_add(&sp->frames, e->url) != 0) return -1;
  }
  return n_pages;
}

/* ---- Pages from log.pages ------------------------------------------------------------ */

static long split_by_pageref(const lab_har *har, const size_t *order, size_t **members,
                             size_t *counts, lab_page *pages, size_t *unassigned) {
  for (size_t k = 0; k < har->n_entries; k++) {
    const lab_entry *e = &har->entries[order[k]];
    size_t p = har->n_pages;
    for (size_t i = 0; e->pageref != NULL && i < har->n_pages; i++)
      if (strcmp(har->pages[i].id, e->pageref) == 0) p = i;
    if (p == har->n_pages) {
      (*unassigned)++;
      continue;
    }
    members[p][counts[p]++] = order[k];
  }
  for (size_t p = 0; p < har->n_pages; p++) {
    memset(&pages[p], 0, sizeof pages[p]);
    pages[p].pageref = har->pages[p].id;
    pages[p].document = LAB_NO_ENTRY;
    pages[p].document_missing = 1;
    /* The document: the first document request, after its redirects; one that got no
     * answer (status 0: the browser gave up or asked again) gives way to a later one. */
    const lab_entry *doc = NULL;
    for (size_t i = 0; i < counts[p]; i++) {
      const lab_entry *e = &har->entries[members[p][i]];
      if (doc == NULL || (doc->flags & LAB_FLAG_STATUS_ZERO)) {
        if (e->flags & LAB_FLAG_DOCUMENT_LIKE) doc = e;
      } else if (doc->location != NULL && lab_url_same(e->url, doc->location)) {
        doc = e;
      }
    }
    if (doc != NULL && doc->location == NULL) {
      pages[p].document = doc->index;
      pages[p].document_url = doc->url;
      pages[p].document_missing = 0;
    } else if (doc != NULL) {
      pages[p].document_url = doc->location;
    } else if (counts[p] > 0) {
      const char *ref = referer(&har->entries[members[p][0]]);
      pages[p].document_url = ref != NULL ? ref : har->entries[members[p][0]].url;
    } else {
      pages[p].document_url = "";
    }
  }
  return (long)har->n_pages;
}

/* ---- Cutoff and dependencies ----------------------------------------------------------- */

static void page_cutoff(const lab_har *har, const lab_page_options *options, lab_page *page) {
  double load_end = -INFINITY, first_start = INFINITY, last_end = -INFINITY,
         last_end_cut = -INFINITY;
  page->cutoff_ms = INFINITY;
  /* The idle clock starts at the document's end; without the document, at the end of the
   * first resource naming it (its own time is unknown). */
  int armed = page->document != LAB_NO_ENTRY;
  if (armed) load_end = har->entries[page->document].end_ms;
  int cut = 0;
  for (size_t i = 0; i < page->n_entries; i++) {
    const lab_entry *e = &har->entries[page->entries[i]];
    if (i == 0 || e->start_ms < first_start) first_start = e->start_ms;
    if (!armed) {
      const char *ref = referer(e);
      if (ref != NULL && lab_url_same(ref, page->document_url)) {
        armed = 1;
        load_end = e->end_ms;
      } else {
        page->after_cutoff[i] = 0;
        if (e->end_ms > last_end) last_end = e->end_ms;
        if (e->end_ms > last_end_cut) last_end_cut = e->end_ms;
        continue;
      }
    }
    if (!cut && options->cutoff_idle_ms > 0 && e->start_ms > load_end + options->cutoff_idle_ms) {
      cut = 1;
      page->cutoff_ms = load_end + options->cutoff_idle_ms;
    }
    page->after_cutoff[i] = (unsigned char)cut;
    if (cut) {
      page->n_after_cutoff++;
    } else {
      if (e->end_ms > load_end) load_end = e->end_ms;
      if (e->end_ms > last_end_cut) last_end_cut = e->end_ms;
    }
    if (e->end_ms > last_end) last_end = e->end_ms;
  }
  page->load_ms = page->n_entries > 0 ? last_end - first_start : 0;
  page->load_ms_cut = page->n_entries > 0 ? last_end_cut - first_start : 0;
}

/* The latest page entry before position i whose URL is url (documents first), or
 * LAB_NO_ENTRY. */
static size_t find_before(const lab_har *har, const lab_page *page, size_t i, const char *url) {
  size_t found = LAB_NO_ENTRY;
  for (size_t j = 0; j < i; j++) {
    const lab_entry *c = &har->entries[page->entries[j]];
    if (strcmp(c->url, url) == 0 || lab_url_same(c->url, url)) {
      if (found == LAB_NO_ENTRY || (c->flags & LAB_FLAG_DOCUMENT_LIKE) ||
          !(har->entries[page->entries[found]].flags & LAB_FLAG_DOCUMENT_LIKE))
        found = j;
    }
  }
  return found;
}

static void page_dependencies(const lab_har *har, const lab_page_options *options, lab_page *page) {
  size_t doc = LAB_NO_ENTRY;
  for (size_t i = 0; i < page->n_entries; i++)
    if (page->entries[i] == page->document) doc = i;
  for (size_t i = 0; i < page->n_entries; i++) {
    const lab_entry *e = &har->entries[page->entries[i]];
    size_t parent = LAB_NO_ENTRY;
    /* A redirect must finish before its target is requested. */
    for (size_t j = 0; j < i && parent == LAB_NO_ENTRY; j++) {
      const lab_entry *r = &har->entries[page->entries[j]];
      if (r->location != NULL && lab_url_same(r->location, e->url)) parent = j;
    }
    if (parent == LAB_NO_ENTRY && e->initiator != NULL)
      parent = find_before(har, page, i, e->initiator);
    const char *ref = referer(e);
    if (parent == LAB_NO_ENTRY && ref != NULL) parent = find_before(har, page, i, ref);
    if (parent == LAB_NO_ENTRY && i != doc && doc != LAB_NO_ENTRY && i > 0) {
      /* The chain's first redirect has no parent; everything else hangs off the page. */
      parent = doc < i ? doc : LAB_NO_ENTRY;
    }
    page->parent[i] = parent;
    page->parent_estimated[i] = parent;
    /* Script children: Referer names the page even for script-loaded resources, so a
     * resource starting right after a script of the page finished counts as its child. */
    if (parent != LAB_NO_ENTRY && parent == doc && !(e->flags & LAB_FLAG_DOCUMENT_LIKE)) {
      size_t best = LAB_NO_ENTRY;
      for (size_t j = 0; j < i; j++) {
        const lab_entry *s = &har->entries[page->entries[j]];
        if (!lab_entry_is_script(s) || s->end_ms > e->start_ms ||
            e->start_ms - s->end_ms > options->script_window_ms)
          continue;
        if (best == LAB_NO_ENTRY || s->end_ms > har->entries[page->entries[best]].end_ms) best = j;
      }
      if (best != LAB_NO_ENTRY) page->parent_estimated[i] = best;
    }
  }
  /* Discovery: an HTML parent's children are taken as spread evenly through its bytes in
   * the order they were requested; CSS, scripts and redirects must arrive whole. */
  for (size_t i = 0; i < page->n_entries; i++) {
    size_t p = page->parent[i];
    page->discovery[i] = 0;
    if (p == LAB_NO_ENTRY) continue;
    const lab_entry *pe = &har->entries[page->entries[p]];
    page->discovery[i] = 1;
    if (pe->location != NULL || !lab_entry_is_html(pe)) continue;
    size_t n = 0, position = 0;
    for (size_t j = 0; j < page->n_entries; j++) {
      if (page->parent[j] != p) continue;
      if (j < i) position++;
      n++;
    }
    page->discovery[i] = (double)(position + 1) / (double)(n + 1);
  }
}

static int page_finish(const lab_har *har, const lab_page_options *options, lab_page *page) {
  /* A document chain ending in a redirect whose target was never recorded: the document is
   * missing, and its URL is the redirect's target. */
  if (page->document != LAB_NO_ENTRY && har->entries[page->document].location != NULL) {
    page->document_url = har->entries[page->document].location;
    page->document = LAB_NO_ENTRY;
    page->document_missing = 1;
  }
  size_t n = page->n_entries ? page->n_entries : 1;
  page->after_cutoff = calloc(n, 1);
  page->parent = malloc(n * sizeof *page->parent);
  page->parent_estimated = malloc(n * sizeof *page->parent_estimated);
  page->discovery = malloc(n * sizeof *page->discovery);
  if (page->after_cutoff == NULL || page->parent == NULL || page->parent_estimated == NULL ||
      page->discovery == NULL)
    return -1;
  page_cutoff(har, options, page);
  page_dependencies(har, options, page);
  return 0;
}

/* Does log.pages hold the pages? Only when some entry names one of them: exporters that
 * write log.pages without pagerefs leave the split to the heuristic. */
static int pages_by_pageref(const lab_har *har) {
  for (size_t i = 0; i < har->n_entries; i++) {
    const char *ref = har->entries[i].pageref;
    for (size_t p = 0; ref != NULL && p < har->n_pages; p++)
      if (strcmp(har->pages[p].id, ref) == 0) return 1;
  }
  return 0;
}

int lab_pages_extract(const lab_har *har, const lab_page_options *options, lab_page_set *out) {
  memset(out, 0, sizeof *out);
  if (har->n_entries == 0) return 0;
  size_t *order = start_order(har);
  size_t n_har_pages = pages_by_pageref(har) ? har->n_pages : 0;
  size_t max_pages = n_har_pages > 0 ? n_har_pages : har->n_entries;
  size_t *starts = calloc(max_pages + 1, sizeof *starts);
  size_t *counts = calloc(max_pages, sizeof *counts);
  size_t **members = calloc(max_pages, sizeof *members);
  out->pages = calloc(max_pages, sizeof *out->pages);
  splitter sp = {har, options, order, har->n_entries, {0}, {0}, {0}, {0}, NULL};
  long n = -1;
  if (order == NULL || starts == NULL || counts == NULL || members == NULL || out->pages == NULL)
    goto done;
  if (n_har_pages > 0) {
    for (size_t p = 0; p < n_har_pages; p++) {
      members[p] = malloc(har->n_entries * sizeof **members);
      if (members[p] == NULL) goto done;
    }
    n = split_by_pageref(har, order, members, counts, out->pages, &out->n_unassigned);
    for (size_t p = 0; p < (size_t)n; p++) {
      out->pages[p].entries = members[p];
      out->pages[p].n_entries = counts[p];
      members[p] = NULL;
    }
  } else {
    n = split(&sp, starts, out->pages);
    if (n < 0) goto done;
    starts[n] = har->n_entries;
    for (size_t p = 0; p < (size_t)n; p++) {
      size_t count = starts[p + 1] - starts[p];
      out->pages[p].entries = malloc((count ? count : 1) * sizeof *out->pages[p].entries);
      if (out->pages[p].entries == NULL) {
        out->n_pages = (size_t)n;
        n = -1;
        goto done;
      }
      memcpy(out->pages[p].entries, order + starts[p], count * sizeof *order);
      out->pages[p].n_entries = count;
    }
  }
  out->n_pages = (size_t)n;
  for (size_t p = 0; p < out->n_pages; p++) {
    if (page_finish(har, options, &out->pages[p]) != 0) {
      n = -1;
      break;
    }
  }
done:
  for (size_t p = 0; members != NULL && p < n_har_pages; p++) free(members[p]);
  free(members);
  free(counts);
  free(starts);
  free(order);
  set_free(&sp.top);
  set_free(&sp.frames);
  set_free(&sp.seen);
  set_free(&sp.fresh);
  if (n < 0) {
    lab_pages_free(out);
    return -1;
  }
  return 0;
}

void lab_pages_free(lab_page_set *set) {
  for (size_t p = 0; set->pages != NULL && p < set->n_pages; p++) {
    lab_page *page = &set->pages[p];
    free(page->entries);
    free(page->after_cutoff);
    free(page->parent);
    free(page->parent_estimated);
    free(page->discovery);
  }
  free(set->pages);
  memset(set, 0, sizeof *set);
}

/* ---- Which pages can be replayed ------------------------------------------------------ */

const char *lab_page_skip_reason(const lab_har *har, const lab_page *page, char *buf, size_t size) {
  if (page->n_entries == 0) {
    snprintf(buf, size, "no requests");
    return buf;
  }
  if (page->document == LAB_NO_ENTRY) {
    /* Without log.pages a missing document is a known gap of some recorders, and the
     * page's resources are still there to replay (docs/lab.md, "Pages"). */
    if (page->pageref == NULL) return NULL;
    for (size_t i = 0; i < page->n_entries; i++) {
      const lab_entry *e = &har->entries[page->entries[i]];
      if ((e->flags & LAB_FLAG_DOCUMENT_LIKE) && e->location != NULL) {
        snprintf(buf, size,
                 "no document: the redirect to %.120s was not followed in the "
                 "recording",
                 page->document_url);
        return buf;
      }
    }
    const lab_entry *first = &har->entries[page->entries[0]];
    snprintf(buf, size,
             "no document: %zu request%s, none a document answered (first %.120s, "
             "status %d)",
             page->n_entries, page->n_entries == 1 ? "" : "s", first->url, first->status);
    return buf;
  }
  const lab_entry *doc = &har->entries[page->document];
  if (doc->flags & LAB_FLAG_STATUS_ZERO)
    snprintf(buf, size, "the document %.120s got no answer (status 0)", doc->url);
  else if (doc->flags & LAB_FLAG_BAD_URL)
    snprintf(buf, size, "the document %.120s is not an http(s) URL with a usable host", doc->url);
  else if (doc->replay == LAB_REPLAY_LEFT_OUT)
    snprintf(buf, size, "the document %.120s is a %d without a recorded copy", doc->url,
             doc->status);
  else if (doc->replay_status < 200 || doc->replay_status >= 400)
    snprintf(buf, size, "the document %.120s answered %d", doc->url, doc->replay_status);
  else
    return NULL;
  return buf;
}

size_t lab_pages_first_usable(const lab_har *har, const lab_page_set *set) {
  char reason[8];
  for (size_t p = 0; p < set->n_pages; p++)
    if (lab_page_skip_reason(har, &set->pages[p], reason, sizeof reason) == NULL) return p;
  return set->n_pages;
}
