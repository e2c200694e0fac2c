/* http_manifest.h — the push manifest: for a page, the resources to push or hint.
 *
 * The file format is described in docs/push-manifest.md. In short, one line per
 * (page, resource):
 *     # comment
 *     /index.html   /css/site.css   0
 *     /index.html   /js/app.js          (urgency defaults to 3)
 * Paths are same-origin absolute paths (they begin with one '/'); urgency is 0 (most
 * urgent) to 7, the SPDY/3 priority scale (the server maps it down for SPDY/2).
 *
 * Limits: HTTP_MANIFEST_MAX_LINE bytes per line, HTTP_MANIFEST_MAX_PER_PAGE resources per
 * page, HTTP_MANIFEST_MAX_PAGES pages, HTTP_MANIFEST_MAX_FILE bytes per file. Errors read
 * "FILE:LINE: message".
 */
#ifndef SPEEDY_HTTP_MANIFEST_H
#define SPEEDY_HTTP_MANIFEST_H

#include <stddef.h>

#include "http_response.h"

#define HTTP_MANIFEST_MAX_LINE 1024u
#define HTTP_MANIFEST_MAX_PER_PAGE 32u
#define HTTP_MANIFEST_MAX_PAGES 4096u
#define HTTP_MANIFEST_MAX_FILE (1024u * 1024u)
#define HTTP_MANIFEST_DEFAULT_URGENCY 3

typedef struct http_manifest_entry {
  char *path;  /* "/css/site.css" */
  int urgency; /* 0 (most urgent) .. 7 */
} http_manifest_entry;

typedef struct http_manifest http_manifest;

/* Parses text[0..len) (name is used in messages). Returns 0 and *out (free with
 * http_manifest_del), HTTP_ERR_SYNTAX or HTTP_ERR_LIMIT with "name:line: message" in
 * error (error_cap bytes, NUL-terminated; error may be NULL), or HTTP_ERR_NOMEM. */
int http_manifest_parse(const char *name, const char *text, size_t len, http_manifest **out,
                        char *error, size_t error_cap);
/* Reads and parses file path. As above, plus HTTP_ERR_IO ("path: strerror"). */
int http_manifest_load(const char *path, http_manifest **out, char *error, size_t error_cap);
void http_manifest_del(http_manifest *manifest);

/* The resources listed for page (page_len bytes, compared exactly; pass the request path
 * without its query), in file order. Returns their count (0 when none) and points
 * *entries at them (valid until http_manifest_del). */
size_t http_manifest_lookup(const http_manifest *manifest, const char *page, size_t page_len,
                            const http_manifest_entry **entries);
/* Pages in the manifest (for statistics and tests). */
size_t http_manifest_pages(const http_manifest *manifest);

/* Hint header values (malloc'd; the caller frees them). Returns 0 or HTTP_ERR_NOMEM.
 *   X-Subresources (the seed's name): "/a.css, /b.js"
 *   Link:                             "</a.css>; rel=preload; as=style, </b.js>; ..."
 *     (as= from the extension: style, script, image, font (+ crossorigin), fetch for
 *     json, none otherwise) */
int http_manifest_format_subresources(const http_manifest_entry *entries, size_t count, char **out);
int http_manifest_format_link(const http_manifest_entry *entries, size_t count, char **out);
/* Adds both headers (x-subresources and link) to response; nothing when count is 0. */
int http_manifest_add_hints(const http_manifest_entry *entries, size_t count,
                            http_response *response);

#endif
