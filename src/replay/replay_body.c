/* replay_body.c — what a replayed resource answers: generated body bytes, the http_body
 * that pulls them chunk by chunk, the Location of a redirect, and replay_serve.
 *
 * The bytes are a counter-mode generator (docs/lab-replay.md): 64-bit word i of a body is
 * mix(key + i * GOLDEN), little-endian, with key = mix(mix(seed) ^ id) and mix the
 * SplitMix64 finaliser. Any byte can be computed on its own, so a reader may pull any chunk
 * size, the HTTP/1.1 and SPDY paths produce the same bytes, and replay_write_site writes
 * files equal to what speedyd sends — without ever holding a whole body in memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "replay.h"

#define GOLDEN 0x9E3779B97F4A7C15ull

static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t body_key(uint64_t seed, uint64_t id) { return mix(mix(seed) ^ id); }

static void fill_with_key(uint64_t key, uint64_t offset, uint8_t *buf, size_t len) {
  uint64_t word_index = offset / 8;
  unsigned skip = (unsigned)(offset % 8);
  while (len > 0) {
    uint64_t w = mix(key + word_index * GOLDEN);
    for (unsigned b = skip; b < 8 && len > 0; b++, len--) *buf++ = (uint8_t)(w >> (8 * b));
    skip = 0;
    word_index++;
  }
}

void replay_body_fill(uint64_t seed, uint64_t id, uint64_t offset, uint8_t *buf, size_t len) {
  fill_with_key(body_key(seed, id), offset, buf, len);
}

typedef struct generated {
  uint64_t key;
  uint64_t offset; /* next byte to produce */
  uint64_t size;
} generated;

static int64_t generated_pull(void *context, uint8_t *buf, size_t len, int *eof) {
  generated *g = context;
  uint64_t left = g->size - g->offset;
  size_t n = left < len ? (size_t)left : len;
  if (n > INT64_MAX) n = INT64_MAX;
  fill_with_key(g->key, g->offset, buf, n);
  g->offset += n;
  *eof = g->offset == g->size;
  return (int64_t)n;
}

int replay_body_new(http_body **out, const replay_plan *plan, const replay_resource *resource) {
  generated *g = malloc(sizeof(*g));
  if (g == NULL) return HTTP_ERR_NOMEM;
  g->key = body_key(replay_plan_seed(plan), resource->id);
  g->offset = 0;
  g->size = resource->body_size;
  /* http_body_new_callback frees g on failure. */
  return http_body_new_callback(out, generated_pull, g, free, (int64_t)resource->body_size);
}

/* A page body (replay_page.c): its text, then spaces up to size. */
typedef struct page_text {
  char *text;
  size_t len;
  uint64_t offset, size;
} page_text;

static void page_text_free(void *context) {
  page_text *p = context;
  free(p->text);
  free(p);
}

static int64_t page_text_pull(void *context, uint8_t *buf, size_t len, int *eof) {
  page_text *p = context;
  uint64_t left = p->size - p->offset;
  size_t n = left < len ? (size_t)left : len;
  if (n > INT64_MAX) n = INT64_MAX;
  for (size_t i = 0; i < n; i++) {
    uint64_t o = p->offset + i;
    buf[i] = o < p->len ? (uint8_t)p->text[o] : ' ';
  }
  p->offset += n;
  *eof = p->offset == p->size;
  return (int64_t)n;
}

/* An image body (replay_page_image_byte): a GIF of the recorded size. */
typedef struct image_body {
  uint64_t offset, size;
} image_body;

static int64_t image_pull(void *context, uint8_t *buf, size_t len, int *eof) {
  image_body *b = context;
  uint64_t left = b->size - b->offset;
  size_t n = left < len ? (size_t)left : len;
  for (size_t i = 0; i < n; i++) buf[i] = replay_page_image_byte(b->size, b->offset + i);
  b->offset += n;
  *eof = b->offset == b->size;
  return (int64_t)n;
}

static int image_body_new(http_body **out, const replay_resource *resource) {
  image_body *b = calloc(1, sizeof(*b));
  if (b == NULL) return HTTP_ERR_NOMEM;
  b->size = resource->body_size;
  return http_body_new_callback(out, image_pull, b, free, (int64_t)b->size);
}

static int page_body_new(http_body **out, page_text **made, const replay_plan *plan,
                         const replay_resource *resource) {
  page_text *p = calloc(1, sizeof(*p));
  if (p == NULL) return HTTP_ERR_NOMEM;
  if (replay_page_body_text(plan, resource, &p->text, &p->len) != 0) {
    free(p);
    return HTTP_ERR_NOMEM;
  }
  p->size = p->len > resource->body_size ? p->len : resource->body_size;
  *made = p;
  return http_body_new_callback(out, page_text_pull, p, page_text_free, (int64_t)p->size);
}

int replay_location(const replay_plan *plan, const replay_resource *target, const char *scheme,
                    char *out, size_t out_len) {
  char prefix[REPLAY_ONE_HOST_PREFIX_MAX];
  const replay_host *h = replay_url_host(plan, target, prefix);
  if (h == NULL) return -1;
  if (scheme == NULL) scheme = h->port == 443 ? "https" : "http";
  char port[8] = "";
  if (h->port != 80 && h->port != 443) snprintf(port, sizeof(port), ":%d", h->port);
  int n = snprintf(out, out_len, "%s://%s%s%s%s", scheme, h->name, port, prefix, target->path);
  return n < 0 || (size_t)n >= out_len ? -1 : 0;
}

/* Copies the resource's answer into response. Returns 0 or HTTP_ERR_NOMEM. */
static int answer(const replay_plan *plan, const replay_resource *r, const http_request *request,
                  http_response *response) {
  int stands_in = replay_page_stands_in(plan, r);
  http_response_reset(response, stands_in ? 200 : r->status);
  int page_bodies = replay_plan_page_bodies(plan);
  for (size_t i = 0; i < r->response_headers.count; i++) {
    const http_header *h = &r->response_headers.items[i];
    if (page_bodies && replay_page_drops_header(h->name, h->name_len)) continue;
    /* a redirect whose target the recording lacks would take a browser off the replay */
    if (page_bodies && r->redirect_to < 0 &&
        http_headers_name_equal(h->name, h->name_len, "location"))
      continue;
    if (http_headers_add(&response->headers, h->name, h->name_len, h->value, h->value_len) != 0)
      return HTTP_ERR_NOMEM;
  }
  /* A browser fetches fonts and the page bodies' fetch() in CORS mode with credentials:
   * page bodies let the asking origin read every answer (echoed, as a server that allows
   * credentials must; "*" when the request names none). Credentials matter: Chromium keeps
   * uncredentialed requests on connections of their own. */
  if (page_bodies) {
    const char *origin = http_headers_get(&request->headers, "origin");
    int rv = http_headers_set(&response->headers, "access-control-allow-origin",
                              origin != NULL ? origin : "*");
    if (rv == 0 && origin != NULL)
      rv = http_headers_set(&response->headers, "access-control-allow-credentials", "true");
    if (rv == 0 && origin != NULL) rv = http_headers_add_str(&response->headers, "vary", "Origin");
    if (rv != 0) return HTTP_ERR_NOMEM;
  }
  uint64_t size = r->body_size;
  http_body *page = NULL;
  if (replay_page_body_applies(plan, r)) {
    page_text *made = NULL;
    if (page_body_new(&page, &made, plan, r) != 0) return HTTP_ERR_NOMEM;
    size = made->size;
    if (http_headers_set(&response->headers, "content-type", replay_page_content_type(r)) != 0) {
      http_body_del(page);
      return HTTP_ERR_NOMEM;
    }
  }
  char length[24];
  snprintf(length, sizeof(length), "%llu", (unsigned long long)size);
  if (http_headers_set(&response->headers, "content-length", length) != 0) {
    if (page != NULL) http_body_del(page);
    return HTTP_ERR_NOMEM;
  }
  if (r->redirect_to >= 0) {
    /* The scheme of the request when known: a replay over TLS redirects to https. */
    const char *scheme = request->scheme;
    if (scheme != NULL && strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
      scheme = NULL;
    char location[REPLAY_MAX_PATH + REPLAY_MAX_HOST_NAME + 64];
    const replay_resource *target = replay_plan_resource(plan, (size_t)r->redirect_to);
    if (replay_location(plan, target, scheme, location, sizeof(location)) == 0 &&
        http_headers_set(&response->headers, "location", location) != 0)
      return HTTP_ERR_NOMEM;
  }
  int no_body = (r->body_size == 0 && page == NULL) || r->status == 204 || r->status == 304 ||
                (request->method != NULL && strcmp(request->method, "HEAD") == 0);
  if (no_body || page != NULL) {
    if (page != NULL && no_body)
      http_body_del(page);
    else if (page != NULL)
      http_response_set_body(response, page);
    return 0;
  }
  http_body *body;
  if (replay_page_image_applies(plan, r) ? image_body_new(&body, r) != 0
                                         : replay_body_new(&body, plan, r) != 0)
    return HTTP_ERR_NOMEM;
  http_response_set_body(response, body);
  return 0;
}

int replay_serve(const replay_plan *plan, int host_index, const http_request *request,
                 http_response *response) {
  if (plan == NULL || request == NULL || response == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  const replay_resource *r = NULL;
  if (host_index >= 0) {
    if ((size_t)host_index < replay_plan_host_count(plan))
      r = replay_plan_find(plan, (size_t)host_index, request->method, request->path);
  } else if (request->authority != NULL) {
    r = replay_plan_find_for(plan, request->authority, request->method, request->path);
  } else if (replay_plan_host_count(plan) == 1) {
    r = replay_plan_find(plan, 0, request->method, request->path);
  }
  if (r == NULL && request->method != NULL && request->path != NULL)
    r = replay_plan_find_one_host(plan, request->method, request->path);
  if (r == NULL) return http_response_set_error(response, 404, NULL);
  int rv = answer(plan, r, request, response);
  if (rv != 0) http_response_reset(response, 500);
  return rv;
}
