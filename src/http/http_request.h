/* http_request.h — the protocol-neutral request: what SPDY, HTTP/2 and HTTP/1.1 all deliver.
 *
 * The server fills one http_request per stream (SPDY, HTTP/2) or per request (HTTP/1.1):
 *   - SPDY and HTTP/2: http_spdy_request_header for every header the engine delivers,
 *     then http_spdy_request_finish at the end of the header block (http_spdy.h);
 *   - HTTP/1.1: http_request_set_* for the request line, http_request_add_header for
 *     every header line, then http_request_finish.
 * Header errors are sticky: the first one is kept in `error` and returned again by the
 * finishing call, so a callback-driven parser can just keep going and answer at the end
 * (http_err_status(error) is the status: 400 or 431).
 */
#ifndef SPEEDY_HTTP_REQUEST_H
#define SPEEDY_HTTP_REQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "http_headers.h"

typedef enum http_protocol {
  HTTP_PROTO_HTTP10 = 1,
  HTTP_PROTO_HTTP11 = 2,
  HTTP_PROTO_SPDY2 = 3,
  HTTP_PROTO_SPDY3 = 4,
  HTTP_PROTO_SPDY31 = 5,
  HTTP_PROTO_H2 = 6 /* HTTP/2, over TLS (h2) or cleartext (h2c) */
} http_protocol;

/* "http/1.0", "http/1.1", "spdy/2", "spdy/3", "spdy/3.1", "h2" (the ALPN names), or "-". */
const char *http_protocol_name(http_protocol protocol);

/* Default bounds on the request's header fields (names + values; count). */
#define HTTP_REQUEST_DEFAULT_MAX_HEADER_BYTES (32u * 1024u)
#define HTTP_REQUEST_DEFAULT_MAX_HEADERS 128u
/* Bound on method, path, authority, scheme and version together. */
#define HTTP_REQUEST_MAX_LINE 8192u

typedef struct http_request {
  http_protocol protocol;
  char *method;           /* "GET"; NULL until set */
  char *path;             /* the raw request target as received: "/a%20b?q=1" */
  char *authority;        /* SPDY :host, HTTP/2 :authority (else Host), or HTTP/1.1 Host */
  char *scheme;           /* "http" / "https"; NULL when not known */
  char *version;          /* "HTTP/1.1"; "HTTP/2.0" for HTTP/2 (for the access log) */
  size_t line_bytes;      /* accounted against HTTP_REQUEST_MAX_LINE */
  http_headers headers;   /* ordinary fields, lower-case names; Cookie values joined "; " */
  int64_t content_length; /* -1: none declared */
  int has_body;           /* 1 when a body follows the headers */
  int error;              /* first HTTP_ERR_* seen while filling; 0 when none */
  unsigned pseudo_seen;   /* http_spdy.c's bookkeeping of :method, :path, ... received */
  /* Set by the caller for fields an HTTP/2 engine delivered: libspeedy has checked them
   * (RFC 9113 8.2.1: lower-case names of allowed octets, no NUL, CR or LF in values), so
   * they are copied without being scanned again. 0 (as init leaves it): checked here. */
  int fields_checked;
} http_request;

/* An empty request. max_header_bytes / max_headers 0 select the defaults above. */
void http_request_init(http_request *request, http_protocol protocol, size_t max_header_bytes,
                       size_t max_headers);
/* Frees what the request holds; it may be initialised again. */
void http_request_free(http_request *request);

/* Request-line pieces (copied). Each returns 0, HTTP_ERR_BAD_REQUEST (NUL, CR or LF
 * inside, empty), HTTP_ERR_URI_TOO_LONG (the line bound) or HTTP_ERR_NOMEM. */
int http_request_set_method(http_request *request, const char *value, size_t len);
int http_request_set_path(http_request *request, const char *value, size_t len);
int http_request_set_authority(http_request *request, const char *value, size_t len);
int http_request_set_scheme(http_request *request, const char *value, size_t len);
int http_request_set_version(http_request *request, const char *value, size_t len);

/* One ordinary header field as received over HTTP/1.1 (or any protocol once pseudo and
 * connection-specific fields are sorted out). Cookie fields are joined into one with
 * "; "; Content-Length is parsed (a bad or conflicting value is a 400); over HTTP/1.x,
 * Host also sets the authority. Returns 0 or the (sticky) error. */
int http_request_add_header(http_request *request, const char *name, size_t name_len,
                            const char *value, size_t value_len);

/* HTTP/1.x: the headers are complete. Requires method and path (and Host for
 * HTTP/1.1). has_body is the caller's (chunked or Content-Length > 0). Returns 0 or
 * the sticky error. */
int http_request_finish(http_request *request);

/* Request-body length check (SPDY/3 3.2.1: a Content-Length that disagrees with the DATA
 * received is a 400). complete = 0 while data is still arriving: an error only when
 * more than declared has arrived; complete = 1 at the end: an error unless equal.
 * Returns 0 or HTTP_ERR_BAD_REQUEST; always 0 when no Content-Length was declared. */
int http_request_check_body(const http_request *request, uint64_t received, int complete);

/* The path without its query string (and fragment): a pointer into request->path and a
 * length. */
size_t http_request_path_length(const http_request *request);

#endif
