/* load_browser.c — Chromium's request headers and network partitions for a plan
 * (load_browser.h).
 *
 * What Chromium 156 sent in the lab (its net logs, HTTP/1.1 and HTTP/2, cache disabled by
 * the driver): Pragma and Cache-Control "no-cache", the client hints sec-ch-ua,
 * sec-ch-ua-mobile and sec-ch-ua-platform, its User-Agent, an Accept per destination,
 * Sec-Fetch-Site/-Mode/-Dest (-User on the page's navigation, -Storage-Access "none" on
 * cross-site requests), Upgrade-Insecure-Requests on navigations, Origin on CORS requests
 * to another origin and on every non-GET, Referer under the default policy
 * (strict-origin-when-cross-origin: the full URL to the same origin, the origin alone
 * elsewhere), Accept-Encoding and Accept-Language — about 700 bytes of HTTP/1.1 per
 * request. Over HTTP/2 its priority field (RFC 9218) too, kept beside the headers
 * (load_resource.browser_*: the loader writes it only over HTTP/2).
 *
 * How a resource is asked for follows the replay's page bodies (src/replay/replay_page.c):
 * resource 0 is the navigation; a document elsewhere is a frame; a style sheet's children
 * are @import (style), @font-face (font, CORS) and url() (image); a document's or a script's
 * children are elements (style, script, image, iframe), fonts and "other" a credentialed
 * CORS fetch() or preload (empty), any method but GET a no-cors fetch(). A redirect's target
 * is asked for as its source was. Where the replay would fetch() an image without bytes or
 * a document answered 204/205, so does this.
 *
 * The network partition of each request (--chromium-sockets): whether the frame that asks
 * is of another site than the page, as in Chromium's NetworkAnonymizationKey.
 *
 * What the load event waits for (--load-event): not a fetch() nor a preload as fetch (its
 * 48 loads of flickr.com in the validation: the load event 3-5 ms after the last other
 * resource ended, every time, whether its preloaded fetch ended before or up to 420 ms
 * after it).
 *
 * Same-site without the public suffix list: the registrable domain is taken as the last two
 * labels, three when the last is a two-letter country code under a common second level
 * (co.uk, com.au, ne.jp, ...); an IP literal is its own site.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include "load_browser.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_HOPS 20               /* redirects followed, as the replay's page bodies do */
#define MAX_BROWSER_HEADERS 18    /* fields one request gets, at most */
#define CHROMIUM_BOOSTED_IMAGES 5 /* a document's first images asked for at u=2 */

static const char user_agent[] = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, "
                                 "like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";
static const char client_hint_ua[] = "\"Not:A-Brand\";v=\"8\", \"Chromium\";v=\"156\"";
static const char accept_document[] =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,"
    "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7";
static const char accept_image[] =
    "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8";
static const char accept_style[] = "text/css,*/*;q=0.1";

typedef enum destination {
  DEST_DOCUMENT,
  DEST_IFRAME,
  DEST_STYLE,
  DEST_SCRIPT,
  DEST_IMAGE,
  DEST_FONT,
  DEST_EMPTY
} destination;

static const char *const destination_names[] = {"document", "iframe", "style", "script",
                                                "image",    "font",   "empty"};

/* How a request chain (a resource and the redirects that follow it) is asked for. */
typedef struct request_kind {
  destination dest;
  int cors;      /* mode "cors" (else "navigate" for documents and frames, else "no-cors") */
  int top;       /* the page's navigation */
  int initiator; /* the document that asks (a resource index), -1 for the navigation */
  int referrer;  /* the resource whose URL is the Referer, -1 for none */
} request_kind;

/* ---- Sites ------------------------------------------------------------------------- */

static int is_ip_literal(const char *name) {
  if (name[0] == '[') return 1;
  for (const char *p = name; *p; p++)
    if ((*p < '0' || *p > '9') && *p != '.') return 0;
  return 1;
}

/* The registrable domain of name (a suffix of it), approximated as the file's comment says. */
static const char *registrable_domain(const char *name) {
  if (is_ip_literal(name)) return name;
  size_t len = strlen(name);
  if (len > 0 && name[len - 1] == '.') len--;
  size_t dots[3];
  size_t n_dots = 0;
  for (size_t i = len; i-- > 0 && n_dots < 3;)
    if (name[i] == '.') dots[n_dots++] = i;
  if (n_dots < 2) return name;
  size_t last_len = len - dots[0] - 1;
  size_t second_len = dots[0] - dots[1] - 1;
  const char *second = name + dots[1] + 1;
  static const char *const second_levels[] = {"co",  "com", "net", "org", "ac",
                                              "gov", "edu", "ne",  "or",  "go"};
  int country_second = 0;
  for (size_t i = 0; last_len == 2 && i < sizeof(second_levels) / sizeof(second_levels[0]); i++)
    if (strlen(second_levels[i]) == second_len &&
        strncasecmp(second, second_levels[i], second_len) == 0)
      country_second = 1;
  if (!country_second) return name + dots[1] + 1;
  return n_dots == 3 ? name + dots[2] + 1 : name;
}

static int same_name(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 0 && a[la - 1] == '.') la--;
  if (lb > 0 && b[lb - 1] == '.') lb--;
  return la == lb && strncasecmp(a, b, la) == 0;
}

const char *load_browser_site(const load_host *a, const load_host *b) {
  if (a->port == b->port && same_name(a->name, b->name)) return "same-origin";
  if (same_name(registrable_domain(a->name), registrable_domain(b->name))) return "same-site";
  return "cross-site";
}

static int site_rank(const char *site) {
  return strcmp(site, "same-origin") == 0 ? 0 : strcmp(site, "same-site") == 0 ? 1 : 2;
}

/* ---- How each resource is asked for ------------------------------------------------ */

/* head starts a request chain (no redirect leads to it). */
static request_kind kind_of(const load_plan *plan, const load_resource *head) {
  request_kind k = {DEST_EMPTY, 0, 0, -1, -1};
  if (head->id == 0) {
    k.dest = DEST_DOCUMENT;
    k.top = 1;
    return k;
  }
  int from = load_plan_referencing(plan, head->id);
  k.initiator = load_plan_document_of(plan, from);
  k.referrer = k.initiator;
  load_type type = load_plan_reference_type(plan, head->id);
  if (plan->resources[from].type == LOAD_TYPE_CSS && from != k.initiator) {
    k.referrer = from;
    k.dest = type == LOAD_TYPE_CSS ? DEST_STYLE : type == LOAD_TYPE_FONT ? DEST_FONT : DEST_IMAGE;
    k.cors = k.dest == DEST_FONT;
    return k;
  }
  if (strcmp(head->method, "GET") != 0) return k; /* a no-cors fetch() */
  switch (type) {
  case LOAD_TYPE_DOCUMENT:
    k.dest = DEST_IFRAME;
    break;
  case LOAD_TYPE_CSS:
    k.dest = DEST_STYLE;
    break;
  case LOAD_TYPE_SCRIPT:
    k.dest = DEST_SCRIPT;
    break;
  case LOAD_TYPE_IMAGE:
    k.dest = DEST_IMAGE;
    break;
  default:
    k.cors = 1; /* fetch() or a preload as fetch, credentials included */
  }
  return k;
}

/* ---- Header lists ------------------------------------------------------------------ */

typedef struct header_list {
  load_header fields[MAX_BROWSER_HEADERS];
  size_t n;
  int failed;
} header_list;

static void add(header_list *l, const char *name, const char *value) {
  if (l->failed || l->n == MAX_BROWSER_HEADERS) {
    l->failed = 1;
    return;
  }
  char *n = strdup(name), *v = strdup(value);
  if (!n || !v) {
    free(n);
    free(v);
    l->failed = 1;
    return;
  }
  l->fields[l->n++] = (load_header){n, v};
}

static void origin_of(const load_plan *plan, const char *scheme, int host, char *out, size_t len) {
  const load_host *h = &plan->hosts[host];
  if (h->port == 80 || h->port == 443)
    snprintf(out, len, "%s://%s", scheme, h->name);
  else
    snprintf(out, len, "%s://%s:%d", scheme, h->name, h->port);
}

/* The headers of resource r, asked for as kind says; site is Sec-Fetch-Site's value. */
static void build(const load_plan *plan, const load_resource *r, const request_kind *k,
                  const char *site, const char *scheme, header_list *l) {
  int navigation = k->dest == DEST_DOCUMENT || k->dest == DEST_IFRAME;
  int cross_site = strcmp(site, "cross-site") == 0;
  add(l, "pragma", "no-cache");
  add(l, "cache-control", "no-cache");
  if (navigation) {
    add(l, "sec-ch-ua", client_hint_ua);
    add(l, "sec-ch-ua-mobile", "?0");
    add(l, "sec-ch-ua-platform", "\"Linux\"");
    add(l, "upgrade-insecure-requests", "1");
    add(l, "user-agent", user_agent);
  } else {
    add(l, "sec-ch-ua-platform", "\"Linux\"");
    add(l, "user-agent", user_agent);
    add(l, "sec-ch-ua", client_hint_ua);
    add(l, "sec-ch-ua-mobile", "?0");
  }
  add(l, "accept",
      navigation              ? accept_document
      : k->dest == DEST_IMAGE ? accept_image
      : k->dest == DEST_STYLE ? accept_style
                              : "*/*");
  char origin[320];
  if (k->initiator >= 0) {
    origin_of(plan, scheme, plan->resources[k->initiator].host, origin, sizeof(origin));
    int other_origin = strcmp(site, "same-origin") != 0;
    if ((k->cors && other_origin) || strcmp(r->method, "GET") != 0) add(l, "origin", origin);
  }
  add(l, "sec-fetch-site", k->top ? "none" : site);
  add(l, "sec-fetch-mode", navigation ? "navigate" : k->cors ? "cors" : "no-cors");
  if (k->top) add(l, "sec-fetch-user", "?1");
  add(l, "sec-fetch-dest", destination_names[k->dest]);
  if (!k->top && cross_site) add(l, "sec-fetch-storage-access", "none");
  if (k->referrer >= 0) {
    const load_resource *ref = &plan->resources[k->referrer];
    char referer[320 + 16384];
    origin_of(plan, scheme, ref->host, referer, sizeof(referer));
    if (strcmp(load_browser_site(&plan->hosts[ref->host], &plan->hosts[r->host]), "same-origin") ==
        0) {
      size_t n = strlen(referer);
      snprintf(referer + n, sizeof(referer) - n, "%.*s", (int)strcspn(ref->path, "#"), ref->path);
    } else {
      strcat(referer, "/");
    }
    add(l, "referer", referer);
  }
  add(l, "accept-encoding", "gzip, deflate, br, zstd");
  add(l, "accept-language", "en-US,en;q=0.9");
}

static void clear(header_list *l) {
  for (size_t i = 0; i < l->n; i++) {
    free(l->fields[i].name);
    free(l->fields[i].value);
  }
  l->n = 0;
}

/* Per resource, the redirect that leads to it or -1: a new array (NULL when out of memory). */
static int *redirect_sources(const load_plan *plan) {
  size_t n = plan->n_resources;
  int *from = malloc((n ? n : 1) * sizeof(*from));
  if (!from) return NULL;
  for (size_t i = 0; i < n; i++) from[i] = -1;
  for (size_t i = 0; i < n; i++)
    if (plan->resources[i].redirect_to >= 0) from[plan->resources[i].redirect_to] = (int)i;
  return from;
}

/* The head of the redirect chain that ends in r (r itself when nothing redirects to it). */
static const load_resource *chain_head(const load_plan *plan, const int *redirected_from,
                                       const load_resource *r) {
  const load_resource *head = r;
  for (int hops = 0; hops < MAX_HOPS && redirected_from[head->id] >= 0; hops++)
    head = &plan->resources[redirected_from[head->id]];
  return head;
}

/* Where an element of a document's body stands among its siblings (the plan's order is the
 * body's): what Chromium's priorities depend on besides the destination. */
typedef struct element_place {
  int image_rank;   /* an image's place among its document's images, from 0; -1 none */
  int before_sheet; /* an image element before its document's first style sheet */
  int late_sheet;   /* a style sheet after the document's first one and after an image */
} element_place;

/* Chromium 156's priority over HTTP/2 (what it sent a probe server, and its net logs of the
 * validation's pages: docs/results/validation/NOTES.md): its page and frames u=0
 * incremental; style sheets and @font-face fonts u=0, but a document's second and later
 * style sheet u=2 once an image element came before it; a fetch() or preload u=1
 * incremental. Images are incremental: an image element before its document's first style
 * sheet u=1 (nothing holds the first layout, which raises the images it shows before they
 * are asked for), else the first five images of a document u=2 (Blink raises the first
 * few), later ones and a style sheet's url() images u=3 (the field says "i"). No field,
 * u=3, for async scripts (every script of the replay's page bodies). */
static void set_chromium_priority(load_resource *r, const request_kind *k, element_place at) {
  int urgency = 3, incremental = 0;
  switch (k->dest) {
  case DEST_DOCUMENT:
  case DEST_IFRAME:
    urgency = 0, incremental = 1;
    break;
  case DEST_STYLE:
    urgency = at.late_sheet ? 2 : 0;
    break;
  case DEST_FONT:
    urgency = 0;
    break;
  case DEST_IMAGE:
    urgency = at.before_sheet                                                 ? 1
              : at.image_rank >= 0 && at.image_rank < CHROMIUM_BOOSTED_IMAGES ? 2
                                                                              : 3;
    incremental = 1;
    break;
  case DEST_SCRIPT:
    break;
  case DEST_EMPTY:
    urgency = 1, incremental = 1;
    break;
  }
  r->browser_priority = 1;
  r->browser_urgency = (unsigned char)urgency;
  r->browser_incremental = (unsigned char)incremental;
}

/* Per chain head, its element_place (by id: the plan's order of discovery, the body's
 * order); a new array (NULL when out of memory). */
static element_place *element_places(const load_plan *plan, const int *redirected_from) {
  size_t n = plan->n_resources;
  element_place *at = malloc((n ? n : 1) * sizeof(*at));
  int *images = calloc(n ? n : 1, sizeof(*images));           /* per document: images so far */
  int *body_images = calloc(n ? n : 1, sizeof(*body_images)); /* per document: image elements */
  unsigned char *sheet = calloc(n ? n : 1, 1);                /* per document: a sheet seen */
  if (!at || !images || !body_images || !sheet) {
    free(at);
    at = NULL;
    goto out;
  }
  for (size_t i = 0; i < n; i++) {
    at[i] = (element_place){-1, 0, 0};
    const load_resource *r = &plan->resources[i];
    if (chain_head(plan, redirected_from, r) != r) continue;
    request_kind k = kind_of(plan, r);
    if (k.initiator < 0 || k.referrer != k.initiator) continue;
    int element = load_plan_referencing(plan, (int)i) == k.initiator; /* not a script's */
    if (k.dest == DEST_IMAGE) {
      at[i].image_rank = images[k.initiator]++;
      if (element) {
        at[i].before_sheet = !sheet[k.initiator];
        body_images[k.initiator]++;
      }
    } else if (k.dest == DEST_STYLE && element) {
      at[i].late_sheet = sheet[k.initiator] && body_images[k.initiator] > 0;
      sheet[k.initiator] = 1;
    }
  }
out:
  free(images);
  free(body_images);
  free(sheet);
  return at;
}

int load_browser_set_chromium_headers(load_plan *plan, int tls) {
  const char *scheme = tls ? "https" : "http";
  size_t n = plan->n_resources;
  int *redirected_from = redirect_sources(plan);
  if (!redirected_from) return -1;
  element_place *at = element_places(plan, redirected_from);
  if (!at) {
    free(redirected_from);
    return -1;
  }
  int rv = 0;
  for (size_t i = 0; i < n; i++) {
    load_resource *r = &plan->resources[i];
    /* the chain's head, and Sec-Fetch-Site's value: the least related hop's */
    const load_resource *head = chain_head(plan, redirected_from, r);
    const char *site = "same-origin";
    request_kind k = kind_of(plan, head);
    if (k.initiator >= 0) {
      const load_host *from = &plan->hosts[plan->resources[k.initiator].host];
      const load_resource *hop = head;
      for (int hops = 0; hops <= MAX_HOPS; hops++) {
        const char *s = load_browser_site(&plan->hosts[hop->host], from);
        if (site_rank(s) > site_rank(site)) site = s;
        if (hop == r || hop->redirect_to < 0) break;
        hop = &plan->resources[hop->redirect_to];
      }
    }
    set_chromium_priority(r, &k, at[head->id]);
    header_list l = {.n = 0};
    build(plan, r, &k, site, scheme, &l);
    load_header *fields = l.failed ? NULL : malloc(l.n * sizeof(*fields));
    if (!fields) {
      clear(&l);
      rv = -1;
      break;
    }
    memcpy(fields, l.fields, l.n * sizeof(*fields));
    for (size_t j = 0; j < r->n_request_headers; j++) {
      free(r->request_headers[j].name);
      free(r->request_headers[j].value);
    }
    free(r->request_headers);
    r->request_headers = fields;
    r->n_request_headers = l.n;
  }
  free(at);
  free(redirected_from);
  return rv;
}

/* ---- Network partitions ------------------------------------------------------------ */

int load_browser_cross_site_frames(const load_plan *plan, unsigned char *cross) {
  int *redirected_from = redirect_sources(plan);
  if (!redirected_from) return -1;
  const load_host *top = &plan->hosts[plan->resources[load_plan_final_target(plan, 0)].host];
  for (size_t i = 0; i < plan->n_resources; i++) {
    const load_resource *r = &plan->resources[i];
    request_kind k = kind_of(plan, chain_head(plan, redirected_from, r));
    /* The page's navigation is the top frame; a frame's navigation belongs to the frame it
     * makes, hop by hop (each hop's URL is the frame's origin while it is requested); any
     * other request to the document that asks. */
    const load_resource *frame = k.top || k.dest == DEST_IFRAME ? r : &plan->resources[k.initiator];
    cross[i] =
        !k.top && strcmp(load_browser_site(&plan->hosts[frame->host], top), "cross-site") == 0;
  }
  free(redirected_from);
  return 0;
}

/* ---- The load event ---------------------------------------------------------------- */

int load_browser_load_event_waits(const load_plan *plan, unsigned char *waits) {
  int *redirected_from = redirect_sources(plan);
  if (!redirected_from) return -1;
  for (size_t i = 0; i < plan->n_resources; i++) {
    request_kind k = kind_of(plan, chain_head(plan, redirected_from, &plan->resources[i]));
    waits[i] = k.top || k.dest != DEST_EMPTY;
  }
  free(redirected_from);
  return 0;
}
