/* har_fix.c — repairs what real HAR recordings get wrong, so the rest of the lab can trust
 * sizes, start times and redirect targets (the rules are in docs/lab.md, "Input").
 *
 * - Sizes: running totals per connection are detected (the per-connection difference
 *   matches Content-Length more often than the recorded value does) and undone; a
 *   Content-Length header wins wherever present.
 * - Start times in whole seconds: rebuilt from the file's finish order and each entry's
 *   time, staying inside the recorded second.
 * - Redirects: the target is redirectURL, or Location when redirectURL is empty, resolved
 *   against the request URL.
 * - Cold cache: a 304 is replayed as a 200 with the size of a recorded copy of the same
 *   URL when the file has one, and left out otherwise; status 0 and non-http(s) URLs are
 *   left out.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "har.h"

/* A Content-Length header's value, or -1 when absent or not a plain number. */
static int64_t content_length(const lab_entry *e) {
  const lab_header *h =
      lab_header_find(e->response_headers, e->n_response_headers, "content-length");
  if (h == NULL) return -1;
  const char *p = h->value;
  while (*p == ' ' || *p == '\t') p++;
  if (!isdigit((unsigned char)*p)) return -1;
  int64_t v = 0;
  for (; isdigit((unsigned char)*p); p++) {
    if (v > (INT64_MAX - 9) / 10) return -1;
    v = v * 10 + (*p - '0');
  }
  while (*p == ' ' || *p == '\t') p++;
  return *p == '\0' ? v : -1;
}

/* The recorded body size: bodySize, else content.size (-1 when neither). An answer from
 * the browser's cache has no bytes on the wire (bodySize 0 or -1) but the body's own:
 * content.size then. */
static int64_t recorded_size(const lab_entry *e) {
  if (e->recorded_body_size >= 0 && !(e->flags & LAB_FLAG_FROM_CACHE)) return e->recorded_body_size;
  return e->recorded_content_size >= 0 ? e->recorded_content_size : -1;
}

/* Responses that never carry a body whatever their headers say. */
static int bodiless(const lab_entry *e) {
  return e->status == 304 || e->status == 204 || (e->status >= 100 && e->status < 200) ||
         strcmp(e->method, "HEAD") == 0;
}

/* prev[i]: the previous entry (file order) on entry i's connection, or SIZE_MAX. */
static size_t *previous_on_connection(const lab_har *har) {
  size_t n = har->n_entries;
  size_t *prev = malloc((n > 0 ? n : 1) * sizeof *prev);
  if (prev == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    prev[i] = SIZE_MAX;
    const char *c = har->entries[i].connection;
    if (c[0] == '\0') continue;
    /* Quadratic in the worst case but files hold at most a few thousand entries and a
     * connection's previous entry is usually close. */
    for (size_t j = i; j-- > 0;) {
      if (strcmp(har->entries[j].connection, c) == 0) {
        prev[i] = j;
        break;
      }
    }
  }
  return prev;
}

static int fix_sizes(lab_har *har) {
  size_t *prev = previous_on_connection(har);
  if (prev == NULL) return -1;
  /* Detection: over entries with Content-Length and a previous entry on the connection,
   * does the recorded value or the difference match Content-Length more often? */
  size_t raw_matches = 0, delta_matches = 0;
  for (size_t i = 0; i < har->n_entries; i++) {
    const lab_entry *e = &har->entries[i];
    int64_t cl = content_length(e), now = recorded_size(e);
    if (cl <= 0 || now < 0 || prev[i] == SIZE_MAX || bodiless(e)) continue;
    int64_t before = recorded_size(&har->entries[prev[i]]);
    if (now == cl) raw_matches++;
    if (before >= 0 && now - before == cl) delta_matches++;
  }
  har->running_total_sizes = delta_matches > raw_matches;

  for (size_t i = 0; i < har->n_entries; i++) {
    lab_entry *e = &har->entries[i];
    int64_t cl = content_length(e), now = recorded_size(e), derived = -1;
    lab_size_source source = LAB_SIZE_UNKNOWN;
    if (now >= 0) {
      if (har->running_total_sizes && prev[i] != SIZE_MAX) {
        int64_t before = recorded_size(&har->entries[prev[i]]);
        if (before >= 0 && now >= before) {
          derived = now - before;
          source = LAB_SIZE_CONNECTION_DELTA;
        }
      } else {
        derived = now;
        source = har->running_total_sizes ? LAB_SIZE_CONNECTION_DELTA : LAB_SIZE_RECORDED;
      }
    }
    if (cl >= 0 && derived >= 0 && !bodiless(e)) {
      har->n_size_compared++;
      if (derived == cl) har->n_size_matches++;
    }
    if (bodiless(e)) {
      e->body_size = 0;
      e->size_source = derived >= 0 ? source : LAB_SIZE_RECORDED;
    } else if (cl >= 0) {
      e->body_size = cl;
      e->size_source = LAB_SIZE_CONTENT_LENGTH;
    } else {
      e->body_size = derived;
      e->size_source = source;
    }
  }
  free(prev);
  return 0;
}

static double entry_duration(const lab_entry *e) {
  if (e->time_ms >= 0) return e->time_ms;
  const lab_timings *t = &e->timings;
  double parts[] = {t->blocked, t->dns, t->connect, t->send, t->wait, t->receive};
  double sum = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (parts[i] > 0) sum += parts[i];
  return sum;
}

/* Whole-second starts, file in finish order: each finish is at least the previous one, so
 * start = max(recorded start + time, previous finish) - time, kept inside the recorded
 * second (clamped, and counted, when the order cannot be kept). */
static void fix_starts(lab_har *har) {
  double previous_finish = 0;
  for (size_t i = 0; i < har->n_entries; i++) {
    lab_entry *e = &har->entries[i];
    double recorded = e->recorded_start_ms - har->epoch_ms;
    double duration = entry_duration(e);
    double start = recorded;
    if (har->whole_second_starts) {
      double finish = recorded + duration;
      if (i > 0 && previous_finish > finish) finish = previous_finish;
      start = finish - duration;
      if (start > recorded + 999) {
        start = recorded + 999;
        har->n_start_clamped++;
      }
      if (start != recorded) e->flags |= LAB_FLAG_START_REBUILT;
    }
    e->start_ms = start;
    e->end_ms = start + duration;
    if (i == 0 || e->end_ms > previous_finish) previous_finish = e->end_ms;
  }
}

/* A redirect must finish before its target is requested: a target (the next entry of that
 * URL in file order) rebuilt to start earlier is moved to the redirect's end. Chains are
 * handled in file order, which is their order. Runs after the flags (document-like). */
static void fix_causal_order_pass(lab_har *har) {
  for (size_t i = 0; i < har->n_entries; i++) {
    const lab_entry *r = &har->entries[i];
    if (r->location == NULL) continue;
    for (size_t j = 0; j < har->n_entries; j++) {
      lab_entry *t = &har->entries[j];
      if (j == i || t->recorded_start_ms < r->recorded_start_ms ||
          !lab_url_same(t->url, r->location))
        continue;
      if (t->start_ms < r->end_ms) {
        double duration = t->end_ms - t->start_ms;
        t->start_ms = r->end_ms;
        t->end_ms = t->start_ms + duration;
        t->flags |= LAB_FLAG_START_REBUILT;
      }
      break;
    }
  }
  /* Nor can a resource be requested before the document that names it as Referer (the
   * latest recorded document request of that URL). */
  for (size_t i = 0; i < har->n_entries; i++) {
    lab_entry *e = &har->entries[i];
    const lab_header *ref = lab_header_find(e->request_headers, e->n_request_headers, "referer");
    if (ref == NULL || ref->value_len == 0) continue;
    const lab_entry *parent = NULL;
    for (size_t j = 0; j < har->n_entries; j++) {
      const lab_entry *d = &har->entries[j];
      if (j != i && (d->flags & LAB_FLAG_DOCUMENT_LIKE) && d->location == NULL &&
          d->recorded_start_ms <= e->recorded_start_ms && strcmp(d->url, ref->value) == 0 &&
          (parent == NULL || d->recorded_start_ms >= parent->recorded_start_ms))
        parent = d;
    }
    if (parent != NULL && e->start_ms < parent->start_ms) {
      double duration = e->end_ms - e->start_ms;
      e->start_ms = parent->start_ms;
      e->end_ms = e->start_ms + duration;
      e->flags |= LAB_FLAG_START_REBUILT;
    }
  }
}

/* Moving one entry can break the other rule for another: a few passes settle chains. */
static void fix_redirect_order(lab_har *har) {
  for (int pass = 0; pass < 4; pass++) fix_causal_order_pass(har);
}

static int has_non_ascii(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x80 || (c < 0x20 && c != '\t') || c == 0x7f) return 1;
  }
  return 0;
}

static unsigned header_flags(const lab_header *h, size_t n) {
  unsigned flags = 0;
  for (size_t i = 0; i < n; i++)
    if (has_non_ascii(h[i].name, h[i].name_len) || has_non_ascii(h[i].value, h[i].value_len))
      flags |= LAB_FLAG_NON_ASCII;
  return flags;
}

/* Requested as a document: Firefox, Chrome and IE send Accept: text/html... for top-level
 * documents and frames. X-Requested-With is not a counter-sign: in the corpus, LinkedIn's
 * and the New York Times' page navigations carry it with a document's Accept. */
static int document_like(const lab_entry *e) {
  if (strcmp(e->method, "GET") != 0 && strcmp(e->method, "POST") != 0) return 0;
  const lab_header *accept = lab_header_find(e->request_headers, e->n_request_headers, "accept");
  if (accept != NULL) return strncasecmp(accept->value, "text/html", 9) == 0;
  return strncasecmp(e->mime_type, "text/html", 9) == 0;
}

static int fix_flags_and_urls(lab_har *har) {
  for (size_t i = 0; i < har->n_entries; i++) {
    lab_entry *e = &har->entries[i];
    if (lab_url_parse(har, e->url, &e->parsed) != 0) e->flags |= LAB_FLAG_BAD_URL;
    if (has_non_ascii(e->url, strlen(e->url))) e->flags |= LAB_FLAG_NON_ASCII;
    e->flags |= header_flags(e->request_headers, e->n_request_headers);
    e->flags |= header_flags(e->response_headers, e->n_response_headers);
    if (lab_header_find(e->request_headers, e->n_request_headers, "if-none-match") != NULL ||
        lab_header_find(e->request_headers, e->n_request_headers, "if-modified-since") != NULL)
      e->flags |= LAB_FLAG_CONDITIONAL;
    if (e->status == 304) e->flags |= LAB_FLAG_NOT_MODIFIED;
    if (e->status == 0) e->flags |= LAB_FLAG_STATUS_ZERO;
    if ((strcmp(e->method, "POST") == 0 || strcmp(e->method, "PUT") == 0) && e->post_data == NULL)
      e->flags |= LAB_FLAG_POST_NO_BODY;
    if (document_like(e)) e->flags |= LAB_FLAG_DOCUMENT_LIKE;
    if (e->from_cache) e->flags |= LAB_FLAG_FROM_CACHE;
    for (size_t j = 0; j < i; j++) {
      if (strcmp(har->entries[j].url, e->url) == 0) {
        e->flags |= LAB_FLAG_REPEATED_URL;
        break;
      }
    }
    if (e->status >= 300 && e->status < 400 && e->status != 304) {
      const char *target = e->redirect_url;
      if (target[0] == '\0') {
        const lab_header *loc =
            lab_header_find(e->response_headers, e->n_response_headers, "location");
        if (loc != NULL && loc->value_len > 0) {
          target = loc->value;
          e->flags |= LAB_FLAG_LOCATION_USED;
        }
      }
      if (target[0] != '\0' && !(e->flags & LAB_FLAG_BAD_URL)) {
        e->location = lab_url_resolve(har, e->url, target);
        if (e->location != NULL) e->flags |= LAB_FLAG_REDIRECT;
      }
    }
  }
  return 0;
}

/* Cold replay: what happens to each entry. */
static void fix_replay(lab_har *har) {
  for (size_t i = 0; i < har->n_entries; i++) {
    lab_entry *e = &har->entries[i];
    e->replay = LAB_REPLAY_AS_RECORDED;
    e->replay_status = e->status;
    e->replay_size = e->body_size >= 0 ? e->body_size : 0;
    e->cached_copy = SIZE_MAX;
    if (e->flags & (LAB_FLAG_STATUS_ZERO | LAB_FLAG_BAD_URL)) {
      e->replay = LAB_REPLAY_LEFT_OUT;
      e->replay_size = -1;
    } else if (e->flags & LAB_FLAG_NOT_MODIFIED) {
      /* The browser held a copy; a recorded 200 of the same URL tells its size. */
      for (size_t j = 0; j < har->n_entries; j++) {
        const lab_entry *c = &har->entries[j];
        if (c->status == 200 && c->body_size >= 0 && strcmp(c->url, e->url) == 0) {
          e->replay = LAB_REPLAY_AS_200_CACHED;
          e->replay_status = 200;
          e->replay_size = c->body_size;
          e->cached_copy = j;
          break;
        }
      }
      if (e->replay != LAB_REPLAY_AS_200_CACHED) {
        e->replay = LAB_REPLAY_LEFT_OUT;
        e->replay_size = -1;
      }
    }
  }
}

int lab_har_fix(lab_har *har) {
  har->n_size_matches = har->n_size_compared = har->n_start_clamped = 0;
  for (size_t i = 0; i < har->n_entries; i++) har->entries[i].flags = 0;
  if (fix_flags_and_urls(har) != 0 || fix_sizes(har) != 0) return -1;
  fix_starts(har);
  fix_redirect_order(har);
  fix_replay(har);
  return 0;
}
