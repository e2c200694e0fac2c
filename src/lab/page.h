/* page.h — pages of a HAR recording: which entries make up each page load, where the load
 * ends (the end-of-load cutoff), and which resource each one depends on.
 *
 * Extraction (docs/lab.md, "Pages"): log.pages/pageref when the file has them; otherwise
 * the first document (after its redirects) and everything up to the next top-level
 * navigation, found from document requests and the old page's Referers dying out.
 */
#ifndef SPEEDY_LAB_PAGE_H
#define SPEEDY_LAB_PAGE_H

#include <stddef.h>

#include "har.h"

#define LAB_NO_ENTRY ((size_t)-1)

typedef struct lab_page_options {
  double cutoff_idle_ms;       /* load ends after this much network idle; <= 0: no cutoff */
  double script_window_ms;     /* a resource starting this soon after a script ended is its child */
  double navigation_window_ms; /* how far ahead a navigation's Referers are counted */
} lab_page_options;

/* Defaults: 2,000 ms idle, 100 ms script window, 10,000 ms navigation window. */
void lab_page_options_default(lab_page_options *options);

typedef struct lab_page {
  size_t *entries; /* indices into har->entries, in start order */
  size_t n_entries;
  size_t document;          /* har entry of the final document, or LAB_NO_ENTRY when missing */
  const char *document_url; /* the document's URL (named by its resources' Referer) */
  int document_missing;     /* the recording lacks the page's HTML */
  const char *pageref;      /* log.pages id when the page came from there */
  /* End-of-load cutoff: entries starting after cutoff_ms are excluded. */
  unsigned char *after_cutoff; /* per page entry: 1 when excluded by the cutoff */
  size_t n_after_cutoff;
  double cutoff_ms;   /* relative to the file; a very large value when nothing is cut */
  double load_ms;     /* first start to last end, every entry */
  double load_ms_cut; /* the same without the entries after the cutoff */
  /* Dependencies, per page entry: an index into entries[], or LAB_NO_ENTRY (a root). */
  size_t *parent;           /* Referer / _initiator / redirect, else the document */
  size_t *parent_estimated; /* as parent, with script children estimated from timing */
  double *discovery;        /* share of the parent's body needed before it can be requested */
} lab_page;

typedef struct lab_page_set {
  lab_page *pages;
  size_t n_pages;
  size_t n_unassigned; /* entries in no page (pageref naming no page, or absent with pages) */
} lab_page_set;

/* Splits har into pages. Returns 0, or -1 when out of memory. Free with lab_pages_free. */
int lab_pages_extract(const lab_har *har, const lab_page_options *options, lab_page_set *out);
void lab_pages_free(lab_page_set *set);

/* Why page cannot be replayed as a page load, written into buf; NULL when it can. A page
 * from log.pages needs a document request (its first, after redirects; one without an
 * answer gives way to a later one); any page's document must have been answered with a
 * status below 400 that the cold replay can send (a 304 needs a recorded copy). Pages found
 * without log.pages may miss their document (some recorders lose it): they are replayed. */
const char *lab_page_skip_reason(const lab_har *har, const lab_page *page, char *buf, size_t size);

/* The first page that lab_page_skip_reason lets through, or set->n_pages when none: what
 * the lab means by a recording's "first page". */
size_t lab_pages_first_usable(const lab_har *har, const lab_page_set *set);

/* Is the entry a script / a style sheet / an HTML document (by MIME type, else by URL)? */
int lab_entry_is_script(const lab_entry *e);
int lab_entry_is_css(const lab_entry *e);
int lab_entry_is_html(const lab_entry *e);

#endif
