/* http_static.h — static files: a GET or HEAD request in, a complete response out.
 *
 * http_static_serve answers from the docroot (http_docroot.h for the wall):
 *   - GET and HEAD only; other methods get 405 with "Allow: GET, HEAD".
 *   - A directory is served by its index file ("index.html"); a directory path without
 *     the trailing slash is redirected (301, Location: the path with '/' and the query)
 *     as nginx does; a directory without an index is 404 (no listings).
 *   - Content-Type by extension (http_mime.h), Content-Length, Last-Modified
 *     (IMF-fixdate), a strong ETag "<size>-<mtime ns>-<inode>" in hex (the gzip form
 *     made on the fly adds "-gz"; a precompressed FILE.gz has its own ETag), Accept-Ranges.
 *   - 412 first (RFC 9110 13.2.2) when If-Match matches no tag (strong comparison, or
 *     "*"), or, only when there is no If-Match, If-Unmodified-Since is older than the
 *     file; then 304 when If-None-Match matches (a list, weak comparison, or "*"), or,
 *     only when there is no If-None-Match, when If-Modified-Since is not older than it.
 *     A list field sent on several lines counts as one list (If-Match, If-None-Match,
 *     Accept-Encoding).
 *   - A single Range (http_range.h) on GET: 206 with Content-Range, or 416 with
 *     Content-Range "bytes * /size"; several ranges get the whole file (200), and so does
 *     a suffix range of an empty file (satisfiable, yet not expressible). If-Range
 *     that does not equal the ETag or Last-Modified makes the Range ignored.
 *   - gzip for compressible types when the request accepts it (Accept-Encoding with q>0,
 *     "q=0" refuses): a precompressed FILE.gz when it passes the same wall, is a regular
 *     file and is not older than FILE; otherwise compressed on the fly through the
 *     bounded cache when one is given. Vary: Accept-Encoding on every compressible type.
 *     Range requests always get the uncompressed representation (no gzip with Range).
 *   - HEAD gets GET's headers and no body.
 * Errors become small HTML answers (400, 403, 404, 405, 412, 414, 500).
 */
#ifndef SPEEDY_HTTP_STATIC_H
#define SPEEDY_HTTP_STATIC_H

#include "http_docroot.h"
#include "http_gzip.h"
#include "http_request.h"
#include "http_response.h"

typedef struct http_static_options {
  const http_docroot *docroot;
  const char *index_name;      /* NULL: "index.html" */
  int gzip;                    /* 1: gzip compressible types for clients that accept it */
  http_gzip_cache *gzip_cache; /* NULL: only precompressed FILE.gz siblings are used */
} http_static_options;

/* Fills response (initialised by the caller) for request. Returns 0 whenever response
 * holds an answer (error answers included), or HTTP_ERR_NOMEM (answer 500 if you can). */
int http_static_serve(const http_static_options *options, const http_request *request,
                      http_response *response);

/* 1 when an Accept-Encoding value (NULL: absent) allows gzip: "gzip" or "x-gzip" with
 * q > 0, or "*" with q > 0 when gzip is not listed. Absent means no. */
int http_static_accepts_gzip(const char *accept_encoding);

/* 1 when an If-None-Match value matches etag (with its quotes): "*", or any entity tag of
 * the list equal to etag under weak comparison (W/ prefixes ignored). */
int http_static_etag_matches(const char *if_none_match, const char *etag);

#endif
