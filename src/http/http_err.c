/* http_err.c — error values of the speedy_http library: their statuses and sentences. */
#define _GNU_SOURCE
#include "http_err.h"

int http_err_status(int err) {
  switch (err) {
  case HTTP_ERR_BAD_REQUEST:
    return 400;
  case HTTP_ERR_FORBIDDEN:
    return 403;
  case HTTP_ERR_NOT_FOUND:
    return 404;
  case HTTP_ERR_METHOD:
    return 405;
  case HTTP_ERR_TOO_LARGE:
    return 413;
  case HTTP_ERR_URI_TOO_LONG:
    return 414;
  case HTTP_ERR_HEADERS_TOO_LARGE:
    return 431;
  case HTTP_ERR_UNAVAILABLE:
    return 503;
  default:
    return 500;
  }
}

const char *http_strerror(int err) {
  switch (err) {
  case 0:
    return "success";
  case HTTP_ERR_NOMEM:
    return "out of memory";
  case HTTP_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case HTTP_ERR_IO:
    return "input/output error";
  case HTTP_ERR_NOT_READY:
    return "body not ready";
  case HTTP_ERR_TRUNCATED:
    return "file ended before its announced length";
  case HTTP_ERR_BAD_REQUEST:
    return "bad request";
  case HTTP_ERR_FORBIDDEN:
    return "forbidden";
  case HTTP_ERR_NOT_FOUND:
    return "not found";
  case HTTP_ERR_TOO_LARGE:
    return "request body too large";
  case HTTP_ERR_HEADERS_TOO_LARGE:
    return "request headers too large";
  case HTTP_ERR_URI_TOO_LONG:
    return "request path too long";
  case HTTP_ERR_SYNTAX:
    return "syntax error";
  case HTTP_ERR_LIMIT:
    return "limit reached";
  case HTTP_ERR_METHOD:
    return "method not allowed";
  case HTTP_ERR_UNAVAILABLE:
    return "temporarily out of a resource (file descriptors)";
  default:
    return "unknown error";
  }
}
