/* http_err.h — error values of the speedy_http library and their HTTP status codes.
 *
 * Every function of src/http/ that can fail returns 0 (or a count) on success and one of
 * these negative values on failure. The values are stable. Errors that a peer can cause
 * map to a 4xx status (http_err_status), so the server can answer them directly.
 */
#ifndef SPEEDY_HTTP_ERR_H
#define SPEEDY_HTTP_ERR_H

enum {
  HTTP_ERR_NOMEM = -1,              /* malloc failed (500) */
  HTTP_ERR_INVALID_ARGUMENT = -2,   /* a caller bug (500) */
  HTTP_ERR_IO = -3,                 /* open/read failed for a reason not the peer's (500) */
  HTTP_ERR_NOT_READY = -4,          /* a body has nothing to give now; try again later */
  HTTP_ERR_TRUNCATED = -5,          /* a file ended before its announced length (it shrank) */
  HTTP_ERR_BAD_REQUEST = -6,        /* 400 */
  HTTP_ERR_FORBIDDEN = -7,          /* 403 */
  HTTP_ERR_NOT_FOUND = -8,          /* 404 */
  HTTP_ERR_TOO_LARGE = -9,          /* 413: a request body above the configured limit */
  HTTP_ERR_HEADERS_TOO_LARGE = -10, /* 431: request headers above the configured limit */
  HTTP_ERR_URI_TOO_LONG = -11,      /* 414 */
  HTTP_ERR_SYNTAX = -12,            /* a date, manifest line, ... does not parse */
  HTTP_ERR_LIMIT = -13,             /* a configured bound was reached (not peer input) */
  HTTP_ERR_METHOD = -14,            /* 405 */
  HTTP_ERR_UNAVAILABLE = -15        /* 503: out of a resource for now (file descriptors) */
};

/* The HTTP status that answers err: 400, 403, 404, 405, 413, 414, 431, or 500 for the
 * others. */
int http_err_status(int err);

/* A short sentence for any value (unknown values included). Never NULL. */
const char *http_strerror(int err);

#endif
