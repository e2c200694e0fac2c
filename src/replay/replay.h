/* replay.h — the page-load lab's replay server side: a page plan (docs/lab-formats.md,
 * "speedy-lab-plan/1") loaded and checked, and the answers it implies.
 *
 *   replay_plan.c   loading (jansson), validation with messages naming the field, lookup
 *                   of (host, method, path) → resource
 *   replay_body.c   the deterministic body bytes, the http_body that pulls them, and
 *                   replay_serve: one http_request → one http_response
 *   replay_page.c   page bodies for a browser ("bodies": "page"): markup naming the children
 *   replay_site.c   replay_write_site: the same bytes as plain files for any web server
 *
 * speedyd --replay PLAN answers through replay_serve (src/speedyd/speedyd_serve.c);
 * docs/lab-replay.md describes the behaviour, the byte generator and the site layout.
 * Nothing here opens sockets or keeps per-request state: a plan is read-only once loaded.
 */
#ifndef SPEEDY_REPLAY_H
#define SPEEDY_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "http_request.h"
#include "http_response.h"

#define REPLAY_PLAN_FORMAT "speedy-lab-plan/1"

/* Bounds on what a plan may contain (anything larger is refused with a message). */
#define REPLAY_MAX_HOSTS 4096u
#define REPLAY_MAX_RESOURCES 200000u
#define REPLAY_MAX_HEADERS 256u /* response header fields per resource */
#define REPLAY_MAX_PATH 8192u   /* HTTP_REQUEST_MAX_LINE: a longer path cannot arrive */
#define REPLAY_MAX_HOST_NAME 253u
#define REPLAY_MAX_BODY_SIZE ((uint64_t)1 << 40) /* 1 TiB: far above any page */

typedef struct replay_host {
  char *name; /* lower-cased, as recorded otherwise */
  int port;   /* 1 to 65535 */
} replay_host;

typedef struct replay_resource {
  uint32_t id; /* == its index in the plan */
  uint32_t host;
  char *method;
  char *path; /* path and query as sent */
  int status;
  http_headers response_headers; /* recorded, minus hop-by-hop, content-length and
                                    content-encoding (removed at load time) */
  uint64_t body_size;
  int64_t redirect_to; /* id of the target, or -1 */
  /* The loader's fields, kept for page bodies (replay_page.c): */
  int kind;               /* REPLAY_KIND_*, from "type" (other when absent or unknown) */
  int64_t parent;         /* "parent": the resource that makes this one requestable, or -1 */
  double discover_offset; /* "discover_offset": bytes of an HTML parent, or -1 */
} replay_resource;

enum {
  REPLAY_KIND_OTHER,
  REPLAY_KIND_DOCUMENT,
  REPLAY_KIND_CSS,
  REPLAY_KIND_SCRIPT,
  REPLAY_KIND_FONT,
  REPLAY_KIND_IMAGE
};

typedef struct replay_plan replay_plan;

/* Loads and validates the plan in file. On success *out owns everything (free it with
 * replay_plan_del). On failure returns -1 and writes one line into err (err_len bytes)
 * naming the file, and the JSON position or the field: "p.json: resources[3].status:
 * expected an integer from 200 to 599, got 42". */
int replay_plan_load(replay_plan **out, const char *file, char *err, size_t err_len);
/* The same from memory; name is used in messages. */
int replay_plan_parse(replay_plan **out, const char *text, size_t len, const char *name, char *err,
                      size_t err_len);
void replay_plan_del(replay_plan *plan);

uint64_t replay_plan_seed(const replay_plan *plan);
/* 1 when the plan asks for page bodies ("bodies": "page", docs/lab-replay.md): documents,
 * style sheets and scripts whose markup makes a browser fetch their children. */
int replay_plan_page_bodies(const replay_plan *plan);
/* 1 when page bodies name every resource under one host name ("one_host": true,
 * docs/lab-replay.md, "One host"): the page's (resource 0's). A resource of another host h
 * is named "//<page host>/.host/<h><path>", which the replay answers as h's <path>; a
 * browser then keys every request to one origin, as the loader's single configurations
 * put every host on one connection. */
int replay_plan_one_host(const replay_plan *plan);
size_t replay_plan_page_host(const replay_plan *plan);
#define REPLAY_ONE_HOST_PREFIX "/.host/"
#define REPLAY_ONE_HOST_PREFIX_MAX 32
/* The host whose name a URL for r carries, and the prefix of its path (written into
 * prefix, "" when none): r's own host and "", or in a one-host plan the page's host and
 * "/.host/<r's host>" for a resource of another host. NULL when r's host is unknown. */
const replay_host *replay_url_host(const replay_plan *plan, const replay_resource *r,
                                   char prefix[REPLAY_ONE_HOST_PREFIX_MAX]);
/* The resource a one-host path names ("/.host/3/b.js": host 3's GET /b.js), or NULL when
 * the plan is not one-host or the path is not of that form. */
const replay_resource *replay_plan_find_one_host(const replay_plan *plan, const char *method,
                                                 const char *path);
size_t replay_plan_host_count(const replay_plan *plan);
const replay_host *replay_plan_host(const replay_plan *plan, size_t index);
size_t replay_plan_resource_count(const replay_plan *plan);
const replay_resource *replay_plan_resource(const replay_plan *plan, size_t index);

/* The host an authority ("www.example.com", "WWW.example.com.:8080", "[::1]:443") names.
 * Names compare case-insensitively, without a trailing dot. Of the hosts of that name: the
 * one whose port is the authority's; else one the port reaches — no port, 80 and 443 reach
 * a host on 80 or 443 (a client names neither, and the lab serves every scheme on one
 * port); else the first (the port a lab server listens on is rarely the recorded one).
 * Returns the index or -1. */
int replay_plan_find_host(const replay_plan *plan, const char *authority);
/* The resource a request for (authority, method, path) gets: the one on
 * replay_plan_find_host's host, else on another host of that name the port reaches (a
 * page with both http://x/a and https://x/b: "x" names both). NULL when none. */
const replay_resource *replay_plan_find_for(const replay_plan *plan, const char *authority,
                                            const char *method, const char *path);
/* The resource for (host, method, path): the first of the plan when a URL repeats. HEAD
 * finds a HEAD resource, else the GET one. Returns NULL when there is none. */
const replay_resource *replay_plan_find(const replay_plan *plan, size_t host, const char *method,
                                        const char *path);

/* ---- replay_body.c ---- */

/* Fills buf with bytes [offset, offset + len) of the body of resource id under seed. The
 * generator is defined in docs/lab-replay.md so that other programs can check bytes: any
 * split into chunks gives the same bytes. */
void replay_body_fill(uint64_t seed, uint64_t id, uint64_t offset, uint8_t *buf, size_t len);

/* A body of resource->body_size generated bytes, produced as the reader pulls (nothing
 * of the size of the body is allocated). Returns 0 or HTTP_ERR_NOMEM. */
int replay_body_new(http_body **out, const replay_plan *plan, const replay_resource *resource);

/* The absolute URL of a redirect target, "http://host[:port]/path", into out (out_len
 * bytes). scheme NULL: "https" for port 443, else "http". The port is left out when it is
 * 80 or 443. Returns 0, or -1 when it does not fit. */
int replay_location(const replay_plan *plan, const replay_resource *target, const char *scheme,
                    char *out, size_t out_len);

/* Answers request from the plan: host_index >= 0 serves that host whatever the
 * authority says; -1 picks the host by request->authority (a plan with one host also
 * answers requests without one). The recorded status and headers, content-length =
 * body_size, Location for a redirect_to, and the generated body (none for HEAD, 204 and
 * 304). Unknown host or path: 404. Returns 0 whenever response holds an answer, or
 * HTTP_ERR_NOMEM (answer 500 if you can). */
int replay_serve(const replay_plan *plan, int host_index, const http_request *request,
                 http_response *response);

/* ---- replay_page.c ---- */

/* Does resource get a page body (a 200 document, style sheet or script of a plan with page
 * bodies, not a redirect; or a page standing in for a redirect, below)? */
int replay_page_body_applies(const replay_plan *plan, const replay_resource *resource);
/* Does resource get an image body: a valid GIF padded to its size (an image of a plan with
 * page bodies, answered 200, of 40 bytes or more)? Generator bytes are no image: Chromium
 * stops reading an image it cannot decode, and over HTTP/1.1 closes the connection. */
int replay_page_image_applies(const replay_plan *plan, const replay_resource *resource);
/* Byte offset of the image body of size bytes: a 1 x 1 GIF whose comment extension pads
 * it to size (size >= 40). */
uint8_t replay_page_image_byte(uint64_t size, uint64_t offset);
/* A document whose recorded answer redirects to a page the recording lacks (the page
 * recorded as missing): with page bodies it is answered 200 with its page body and without
 * the Location, which would send the browser to a host the replay does not serve. The
 * loader takes the redirect's answer as the page and goes on to its children the same. */
int replay_page_stands_in(const replay_plan *plan, const replay_resource *resource);
/* The text of resource's page body: markup referencing its children in plan order, each at
 * its discover_offset when it has one, padded with spaces to body_size (longer when the
 * references do not fit). *out is malloc'd (free it), *out_len its length. Returns 0 or
 * HTTP_ERR_NOMEM. */
int replay_page_body_text(const replay_plan *plan, const replay_resource *resource, char **out,
                          size_t *out_len);
/* Is a recorded response header one that page-body plans do not send? Policies that would
 * stop the synthesized page from loading what it names (content-security-policy and its
 * report-only form, x-frame-options, cross-origin-embedder/resource/opener-policy) and
 * content-disposition (a frame would become a download). */
int replay_page_drops_header(const char *name, size_t len);
/* The Content-Type a page body is sent with: text/html, text/css or text/javascript. */
const char *replay_page_content_type(const replay_resource *resource);

/* ---- replay_site.c ---- */

/* Writes the plan's bodies as plain files beneath dir (created when missing; existing
 * files of the same names are replaced): dir/<host>/<path> for plain paths, dir/<host>/
 * _replay/<id> for the others, and dir/replay-site.map listing every request target
 * that is not its own file (docs/lab-replay.md). Returns 0 or -1 with one line in err. */
int replay_write_site(const replay_plan *plan, const char *dir, char *err, size_t err_len);

#endif
