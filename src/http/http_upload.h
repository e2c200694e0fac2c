/* http_upload.h — the upload sink: POST bodies to a configured path, echoed or counted.
 *
 * So that uploads can be tested, a POST to options.path (e.g. "/upload"; the query is
 * ignored when matching) is not a file request: the server feeds its body here.
 *   ECHO:    the answer is 200 with the body received (Content-Type copied from the
 *            request, else application/octet-stream). The body is held in memory, so
 *            max_bytes bounds it.
 *   DISCARD: the body is counted and dropped; the answer is 200 with
 *            {"received": N} (application/json).
 * The answer is given at the end of the body, because only then is it known whether
 * the body matched its Content-Length (SPDY/3 3.2.1: a mismatch is a 400).
 *
 * Use:  if (http_upload_matches(&opts, req)) {
 *         rv = http_upload_begin(&up, &opts, req);      // 413 early on a large CL
 *         for each DATA chunk: rv = http_upload_feed(up, data, len);   // 400/413
 *         at the end:          rv = http_upload_finish(up, &response);  // 200 or 400
 *         http_upload_del(up);
 *       }
 * Any error: answer http_response_set_error_from(&response, rv, NULL) (and for a SPDY
 * stream still receiving, stop reading its body). Other methods on the path get 405
 * (Allow: POST) from http_upload_check_method.
 */
#ifndef SPEEDY_HTTP_UPLOAD_H
#define SPEEDY_HTTP_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "http_request.h"
#include "http_response.h"

typedef enum http_upload_mode { HTTP_UPLOAD_DISCARD = 0, HTTP_UPLOAD_ECHO = 1 } http_upload_mode;

typedef struct http_upload_options {
  const char *path; /* NULL: no upload sink */
  http_upload_mode mode;
  uint64_t max_bytes; /* a larger body is 413; 0: unlimited in DISCARD, 16 MiB in ECHO */
} http_upload_options;

#define HTTP_UPLOAD_DEFAULT_ECHO_MAX (16u * 1024u * 1024u)

typedef struct http_upload http_upload;

/* 1 when request's path (without query) is the upload path. */
int http_upload_matches(const http_upload_options *options, const http_request *request);
/* 0 for POST; otherwise HTTP_ERR_METHOD (answer 405 with Allow: POST). */
int http_upload_check_method(const http_request *request);

/* Starts a sink for request (options and request are read now, not kept).
 * Returns 0, HTTP_ERR_TOO_LARGE (declared Content-Length above the limit) or
 * HTTP_ERR_NOMEM. The caller frees *out with http_upload_del. */
int http_upload_begin(http_upload **out, const http_upload_options *options,
                      const http_request *request);
/* Feeds body bytes. Returns 0, HTTP_ERR_TOO_LARGE, HTTP_ERR_BAD_REQUEST (more than the
 * declared Content-Length) or HTTP_ERR_NOMEM. */
int http_upload_feed(http_upload *upload, const uint8_t *data, size_t len);
/* The body ended: fills response (reset first) with the 200 answer. Returns 0,
 * HTTP_ERR_BAD_REQUEST (fewer bytes than Content-Length) or HTTP_ERR_NOMEM. */
int http_upload_finish(http_upload *upload, http_response *response);
uint64_t http_upload_received(const http_upload *upload);
void http_upload_del(http_upload *upload);

#endif
