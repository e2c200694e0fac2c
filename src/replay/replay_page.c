/* replay_page.c — page bodies for a browser (docs/lab-replay.md, "Page bodies"): recordings
 * hold no bodies, so a plan with "bodies": "page" makes its documents, style sheets and
 * scripts out of its dependency graph, so that a real browser fetches what was recorded.
 *
 *   document   <link rel=stylesheet>, <script src>, <img>, <iframe> per child in plan
 *              order, each placed at its discover_offset; fonts, non-GET and other
 *              children by an inline fetch(); then one element per resource that a style
 *              sheet names (class r<id>) so that its background or font is used
 *   css        @import for style sheets, .r<id>{background-image:url()} for images and the
 *              rest, @font-face plus .r<id>{font-family} for fonts
 *   script     inserts its children when it runs: script and link elements, Image,
 *              iframe, fetch()
 *
 * URLs are scheme-relative and port-less ("//host/path"): the browser keeps the page's
 * scheme, and the lab serves every host on one port. A one-host plan names every resource
 * under the page's host ("//page-host/.host/3/path" for host 3's /path, replay.h). Each body is
 * padded with spaces to the recorded size; markup that does not fit makes it longer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_err.h"
#include "replay.h"

#define PAGE_BODY_MAX_IN_PLACE ((uint64_t)32 << 20) /* larger bodies ignore offsets */

typedef struct text {
  char *buf;
  size_t len, cap;
  int failed;
} text;

static void put_n(text *t, const char *s, size_t n) {
  if (t->failed) return;
  if (t->len + n + 1 > t->cap) {
    size_t cap = t->cap == 0 ? 1024 : t->cap;
    while (cap < t->len + n + 1) cap *= 2;
    char *b = realloc(t->buf, cap);
    if (b == NULL) {
      t->failed = 1;
      return;
    }
    t->buf = b;
    t->cap = cap;
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

static void put(text *t, const char *s) { put_n(t, s, strlen(s)); }

static void pad_to(text *t, uint64_t size) {
  while (!t->failed && t->len < size) {
    static const char spaces[] = "                                                            "
                                 "                                                            ";
    uint64_t n = size - t->len;
    put_n(t, spaces, n < sizeof(spaces) - 1 ? (size_t)n : sizeof(spaces) - 1);
  }
}

enum { ESC_HTML, ESC_CSS, ESC_JS };

/* "//host/path", escaped for an HTML attribute in double quotes, a CSS string in double
 * quotes or a JavaScript string in double quotes. */
static void put_url(text *t, const replay_plan *plan, const replay_resource *r, int context) {
  char prefix[REPLAY_ONE_HOST_PREFIX_MAX];
  const replay_host *h = replay_url_host(plan, r, prefix);
  put(t, "//");
  put(t, h != NULL ? h->name : "");
  put(t, prefix);
  for (const char *p = r->path; *p != '\0' && !t->failed; p++) {
    char c[8] = {*p, '\0'};
    if (context == ESC_HTML && *p == '&')
      snprintf(c, sizeof(c), "&amp;");
    else if (context == ESC_HTML && *p == '"')
      snprintf(c, sizeof(c), "&quot;");
    else if (context == ESC_HTML && *p == '<')
      snprintf(c, sizeof(c), "&lt;");
    else if (context != ESC_HTML && (*p == '"' || *p == '\\'))
      snprintf(c, sizeof(c), "\\%c", *p);
    else if (context == ESC_JS && (*p == '<' || *p == '>'))
      snprintf(c, sizeof(c), "\\x%02x", (unsigned)*p);
    put(t, c);
  }
}

static void put_id(text *t, const char *before, uint32_t id, const char *after) {
  char s[24];
  snprintf(s, sizeof(s), "%u", id);
  put(t, before);
  put(t, s);
  put(t, after);
}

/* The kind a reference to r must have: its final redirect target's (a redirect recorded
 * as "other" that leads to a document is an iframe; a document redirect that leads to
 * "other" is fetched). What Chromium would cancel (net::ERR_ABORTED, a failed load) is
 * fetched as "other" too: an image without bytes (a tracking beacon: nothing to decode),
 * a document answered 204 or 205 or without bytes (a frame navigation that ends in no
 * content is aborted). */
static int kind_of(const replay_plan *plan, const replay_resource *r) {
  const replay_resource *t = r;
  for (int hops = 0; t->redirect_to >= 0 && hops < 20; hops++) {
    const replay_resource *next = replay_plan_resource(plan, (size_t)t->redirect_to);
    if (next == NULL) break;
    t = next;
  }
  int kind = t->kind;
  if (kind == REPLAY_KIND_IMAGE && t->body_size == 0) kind = REPLAY_KIND_OTHER;
  if (kind == REPLAY_KIND_DOCUMENT && (t->status == 204 || t->status == 205 ||
                                       (t->body_size == 0 && !replay_page_body_applies(plan, t))))
    kind = REPLAY_KIND_OTHER;
  return kind;
}

static int is_get(const replay_resource *r) { return strcmp(r->method, "GET") == 0; }

/* Is c a child that parent's body must reference (not the target its redirect leads to:
 * the browser follows that by itself)? The page's first resource, when it is a root
 * document, also references the plan's other roots (resources nothing was found to load:
 * the loader starts them at once; a browser can only find them in the page). */
static int is_child(const replay_resource *parent, const replay_resource *c) {
  if (parent->id == 0 && parent->parent < 0 && parent->kind == REPLAY_KIND_DOCUMENT &&
      c->parent < 0 && c->id != 0)
    return 1;
  return c->parent == (int64_t)parent->id && parent->redirect_to != (int64_t)c->id;
}

static void put_fetch(text *t, const replay_plan *plan, const replay_resource *c) {
  put(t, "fetch(\"");
  put_url(t, plan, c, ESC_JS);
  put(t, "\",{method:\"");
  put(t, c->method); /* a token: no escaping needed */
  /* The body is read: an answer nobody reads stalls once it fills the pipe. A GET goes in
   * CORS mode (every answer lets the asking origin read it, credentials included: Chromium
   * keeps uncredentialed requests on connections of their own): in no-cors mode Chromium's
   * opaque-response blocking cancelled empty and untyped answers (net::ERR_ABORTED, a
   * failed load); other methods stay no-cors (no preflight). */
  put(t, is_get(c) ? "\",mode:\"cors\"" : "\",mode:\"no-cors\"");
  put(t, ",credentials:\"include\"}).then(function(r){return r.arrayBuffer();})"
         ".catch(function(){});");
}

/* The parser never waits: scripts are async and GET fetches are preload links, so every
 * reference takes effect when the bytes holding it arrive, as the loader discovers it. (A
 * blocking script stops the parser until it has run; the preload scanner still finds
 * scripts, style sheets and images behind it, but not frames or an inline script's
 * fetch(), which Chromium then requested up to 700 ms after the loader.) */
static void html_child(text *t, const replay_plan *plan, const replay_resource *c) {
  int kind = kind_of(plan, c);
  if (!is_get(c)) {
    put(t, "<script>");
    put_fetch(t, plan, c);
    put(t, "</script>\n");
    return;
  }
  if (kind == REPLAY_KIND_FONT || kind == REPLAY_KIND_OTHER) {
    put(t, "<link rel=\"preload\" as=\"fetch\" crossorigin=\"use-credentials\" href=\"");
    put_url(t, plan, c, ESC_HTML);
    put(t, "\">\n");
    return;
  }
  static const char *const open[] = {[REPLAY_KIND_DOCUMENT] = "<iframe src=\"",
                                     [REPLAY_KIND_CSS] = "<link rel=\"stylesheet\" href=\"",
                                     [REPLAY_KIND_SCRIPT] = "<script async src=\"",
                                     [REPLAY_KIND_IMAGE] = "<img alt=\"\" src=\""};
  static const char *const close[] = {[REPLAY_KIND_DOCUMENT] = "\"></iframe>\n",
                                      [REPLAY_KIND_CSS] = "\">\n",
                                      [REPLAY_KIND_SCRIPT] = "\"></script>\n",
                                      [REPLAY_KIND_IMAGE] = "\">\n"};
  put(t, open[kind]);
  put_url(t, plan, c, ESC_HTML);
  put(t, close[kind]);
}

static int named_by_css(const replay_plan *plan, const replay_resource *c) {
  if (c->parent < 0 || kind_of(plan, c) == REPLAY_KIND_CSS) return 0;
  const replay_resource *p = replay_plan_resource(plan, (size_t)c->parent);
  return p != NULL && p->kind == REPLAY_KIND_CSS && is_child(p, c) &&
         replay_page_body_applies(plan, p);
}

static void document_body(text *t, const replay_plan *plan, const replay_resource *r) {
  size_t n = replay_plan_resource_count(plan);
  put(t, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>replay</title></head>"
         "<body>\n<h1>replay</h1>\n"); /* text: a first contentful paint */
  int in_place = r->body_size <= PAGE_BODY_MAX_IN_PLACE;
  for (size_t i = 0; i < n; i++) {
    const replay_resource *c = replay_plan_resource(plan, i);
    if (!is_child(r, c)) continue;
    if (in_place && c->discover_offset > 0 && c->discover_offset < (double)r->body_size)
      pad_to(t, (uint64_t)c->discover_offset);
    html_child(t, plan, c);
  }
  /* Elements that make the style sheets' images and fonts used: every resource of the plan
   * a page-body style sheet names (the element may sit in a parent frame: harmless). */
  for (size_t i = 0; i < n; i++) {
    const replay_resource *c = replay_plan_resource(plan, i);
    if (named_by_css(plan, c)) put_id(t, "<p class=\"r", c->id, "\">x</p>\n");
  }
  put(t, "</body></html>\n");
}

static void css_body(text *t, const replay_plan *plan, const replay_resource *r) {
  size_t n = replay_plan_resource_count(plan);
  /* @import must come before every other rule. */
  for (size_t i = 0; i < n; i++) {
    const replay_resource *c = replay_plan_resource(plan, i);
    if (!is_child(r, c) || kind_of(plan, c) != REPLAY_KIND_CSS) continue;
    put(t, "@import url(\"");
    put_url(t, plan, c, ESC_CSS);
    put(t, "\");\n");
  }
  for (size_t i = 0; i < n; i++) {
    const replay_resource *c = replay_plan_resource(plan, i);
    if (!is_child(r, c) || kind_of(plan, c) == REPLAY_KIND_CSS) continue;
    if (kind_of(plan, c) == REPLAY_KIND_FONT) {
      put_id(t, "@font-face{font-family:\"r", c->id, "\";src:url(\"");
      put_url(t, plan, c, ESC_CSS);
      put_id(t, "\")}\n.r", c->id, "{font-family:\"r");
      put_id(t, "", c->id, "\"}\n");
    } else {
      put_id(t, ".r", c->id, "{background-image:url(\"");
      put_url(t, plan, c, ESC_CSS);
      put(t, "\")}\n");
    }
  }
}

static void script_body(text *t, const replay_plan *plan, const replay_resource *r) {
  size_t n = replay_plan_resource_count(plan);
  put(t, "(function(){var d=document,e;\n");
  for (size_t i = 0; i < n; i++) {
    const replay_resource *c = replay_plan_resource(plan, i);
    if (!is_child(r, c)) continue;
    int kind = kind_of(plan, c);
    if (!is_get(c) || kind == REPLAY_KIND_FONT || kind == REPLAY_KIND_OTHER) {
      put_fetch(t, plan, c);
      put(t, "\n");
      continue;
    }
    switch (kind) {
    case REPLAY_KIND_SCRIPT:
      put(t, "e=d.createElement(\"script\");e.src=\"");
      break;
    case REPLAY_KIND_CSS:
      put(t, "e=d.createElement(\"link\");e.rel=\"stylesheet\";e.href=\"");
      break;
    case REPLAY_KIND_DOCUMENT:
      put(t, "e=d.createElement(\"iframe\");e.src=\"");
      break;
    default:
      put(t, "e=new Image();e.src=\"");
      put_url(t, plan, c, ESC_JS);
      put(t, "\";(d.body||d.documentElement).appendChild(e);\n");
      continue;
    }
    put_url(t, plan, c, ESC_JS);
    put(t, "\";(d.head||d.body||d.documentElement).appendChild(e);\n");
  }
  put(t, "})();\n");
}

int replay_page_drops_header(const char *name, size_t len) {
  static const char *const names[] = {
      "content-security-policy", "content-security-policy-report-only", "x-frame-options",
      "content-disposition", "cross-origin-embedder-policy", "cross-origin-resource-policy",
      "cross-origin-opener-policy",
      /* replaced by "*": fetch() reads in CORS mode */
      "access-control-allow-origin", "access-control-allow-credentials"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strlen(names[i]) == len && strncasecmp(names[i], name, len) == 0) return 1;
  return 0;
}

int replay_page_image_applies(const replay_plan *plan, const replay_resource *r) {
  return replay_plan_page_bodies(plan) && r->kind == REPLAY_KIND_IMAGE && r->status == 200 &&
         r->redirect_to < 0 && r->body_size >= 40;
}

/* GIF89a, a 1 x 1 screen with a two-colour table; then a comment extension (0x21 0xfe)
 * whose sub-blocks pad the file; its terminator; one 1 x 1 image and the trailer. */
static const uint8_t gif_head[21] = {'G', 'I', 'F',  '8',  '9',  'a', 1, 0, 1,    0,   0x80,
                                     0,   0,   0xff, 0xff, 0xff, 0,   0, 0, 0x21, 0xfe};
static const uint8_t gif_tail[17] = {0, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b};

uint8_t replay_page_image_byte(uint64_t size, uint64_t offset) {
  uint64_t pad = size - sizeof(gif_head) - sizeof(gif_tail); /* the comment's sub-blocks */
  if (offset < sizeof(gif_head)) return gif_head[offset];
  uint64_t q = offset - sizeof(gif_head);
  if (q >= pad) return gif_tail[q - pad];
  /* Sub-blocks of 256 bytes (a length byte of 255 and 255 bytes); the rest in one, or,
   * when one byte would be left (a sub-block has at least two), in 255 and 2. */
  uint64_t full = pad / 256, rest = pad % 256;
  if (rest == 1) {
    full--;
    rest = 257;
  }
  if (q < full * 256) return q % 256 == 0 ? 255 : 'x';
  q -= full * 256;
  if (rest == 257) {
    if (q < 255) return q == 0 ? 254 : 'x';
    q -= 255;
    return q == 0 ? 1 : 'x';
  }
  return q == 0 ? (uint8_t)(rest - 1) : 'x';
}

int replay_page_stands_in(const replay_plan *plan, const replay_resource *r) {
  return replay_plan_page_bodies(plan) && r->kind == REPLAY_KIND_DOCUMENT && r->status >= 300 &&
         r->status <= 399 && r->status != 304 && r->redirect_to < 0;
}

int replay_page_body_applies(const replay_plan *plan, const replay_resource *r) {
  return (replay_plan_page_bodies(plan) && r->status == 200 && r->redirect_to < 0 &&
          (r->kind == REPLAY_KIND_DOCUMENT || r->kind == REPLAY_KIND_CSS ||
           r->kind == REPLAY_KIND_SCRIPT)) ||
         replay_page_stands_in(plan, r);
}

const char *replay_page_content_type(const replay_resource *r) {
  return r->kind == REPLAY_KIND_CSS      ? "text/css"
         : r->kind == REPLAY_KIND_SCRIPT ? "text/javascript"
                                         : "text/html; charset=utf-8";
}

int replay_page_body_text(const replay_plan *plan, const replay_resource *r, char **out,
                          size_t *out_len) {
  text t = {0};
  if (r->kind == REPLAY_KIND_DOCUMENT)
    document_body(&t, plan, r);
  else if (r->kind == REPLAY_KIND_CSS)
    css_body(&t, plan, r);
  else if (r->kind == REPLAY_KIND_SCRIPT)
    script_body(&t, plan, r);
  if (r->body_size <= PAGE_BODY_MAX_IN_PLACE) pad_to(&t, r->body_size);
  put(&t, ""); /* a buffer even when empty */
  if (t.failed) {
    free(t.buf);
    return HTTP_ERR_NOMEM;
  }
  *out = t.buf;
  *out_len = t.len;
  return 0;
}
