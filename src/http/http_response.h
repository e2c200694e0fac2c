/* http_response.h — the protocol-neutral response: status, header fields and a body.
 *
 * The static file handler and the upload sink fill an http_response; the server turns it
 * into a SYN_REPLY (http_spdy_response_headers) or an HTTP/1.1 head
 * (http_response_format_http1) and then pulls the body (http_body.h).
 *
 * Header names are lower-case. Content-Length is always present when the length is known
 * (also for HEAD, where body is NULL). The response never contains connection-specific
 * fields (Connection, Keep-Alive, Transfer-Encoding...): the HTTP/1.1 writer adds what its
 * connection needs; the SPDY mapping would drop them anyway (SPDY/3 3.2.2).
 */
#ifndef SPEEDY_HTTP_RESPONSE_H
#define SPEEDY_HTTP_RESPONSE_H

#include <stddef.h>

#include "http_body.h"
#include "http_headers.h"

typedef struct http_response {
  int status;               /* 200, 404, ... */
  http_headers headers;     /* lower-case names, unbounded (we write them) */
  http_body *body;          /* owned; NULL: no body (HEAD, 304, or an empty reply) */
  http_body_room body_room; /* where http_response_set_borrowed_body places it */
} http_response;

/* The reason phrase of a status ("Not Found"), or "Unknown" for codes not in the table. */
const char *http_status_reason(int status);

/* Status 200, no headers, no body. */
void http_response_init(http_response *response);
/* Frees headers and body; the response may be initialised again. */
void http_response_free(http_response *response);
/* Forgets headers and body (freeing them) and sets status. */
void http_response_reset(http_response *response, int status);

/* Takes ownership of body (freeing any previous one). body may be NULL. */
void http_response_set_body(http_response *response, http_body *body);
/* len bytes at data as the body, owned by someone else (release(release_context) when the
 * body is freed, and on error), placed inside the response: no allocation. Returns 0 or
 * HTTP_ERR_INVALID_ARGUMENT. The response must not be moved while it has this body. */
int http_response_set_borrowed_body(http_response *response, const void *data, size_t len,
                                    void (*release)(void *release_context), void *release_context);
/* A copy of data as the body, with Content-Type type (NULL: none) and Content-Length. */
int http_response_set_body_bytes(http_response *response, const char *type, const void *data,
                                 size_t len);
/* For HEAD: frees the body, keeping every header (Content-Length included). */
void http_response_drop_body(http_response *response);

/* An error answer: resets the response, status, a small HTML body saying
 * "<status> <reason>", Content-Type and Content-Length; allow (for 405) becomes the Allow
 * field when not NULL. Returns 0 or HTTP_ERR_NOMEM. */
int http_response_set_error(http_response *response, int status, const char *allow);
/* http_response_set_error(response, http_err_status(err), allow). */
int http_response_set_error_from(http_response *response, int err, const char *allow);

/* The HTTP/1.x head: "<version> <status> <reason>\r\n", every field as "name: value\r\n"
 * (each Set-Cookie on its own line), then extra (may be NULL: e.g. the writer's
 * "connection: keep-alive\r\n") and the final "\r\n". *out is malloc'd (NUL-terminated;
 * the caller frees it). Returns 0 or HTTP_ERR_NOMEM. */
int http_response_format_http1(const http_response *response, const char *version,
                               const char *extra, char **out, size_t *len);

#endif
