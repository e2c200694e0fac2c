/* http_request.c — filling and checking the protocol-neutral request. */
#define _GNU_SOURCE
#include "http_request.h"

#include <stdlib.h>
#include <string.h>

#include "http_err.h"

const char *http_protocol_name(http_protocol protocol) {
  switch (protocol) {
  case HTTP_PROTO_HTTP10:
    return "http/1.0";
  case HTTP_PROTO_HTTP11:
    return "http/1.1";
  case HTTP_PROTO_SPDY2:
    return "spdy/2";
  case HTTP_PROTO_SPDY3:
    return "spdy/3";
  case HTTP_PROTO_SPDY31:
    return "spdy/3.1";
  case HTTP_PROTO_H2:
    return "h2";
  }
  return "-";
}

void http_request_init(http_request *request, http_protocol protocol, size_t max_header_bytes,
                       size_t max_headers) {
  memset(request, 0, sizeof(*request));
  request->protocol = protocol;
  request->content_length = -1;
  http_headers_init(&request->headers,
                    max_header_bytes != 0 ? max_header_bytes
                                          : HTTP_REQUEST_DEFAULT_MAX_HEADER_BYTES,
                    max_headers != 0 ? max_headers : HTTP_REQUEST_DEFAULT_MAX_HEADERS);
}

void http_request_free(http_request *request) {
  /* method, path, authority, scheme and version live in the header list's chunks. */
  http_headers_free(&request->headers);
  request->method = request->path = request->authority = request->scheme = NULL;
  request->version = NULL;
}

static int remember(http_request *request, int rv) {
  if (rv != 0 && request->error == 0) request->error = rv;
  return rv;
}

/* Replaces *field with a copy of value, accounting the line bound. */
static int set_field(http_request *request, char **field, const char *value, size_t len) {
  if (value == NULL || len == 0) return remember(request, HTTP_ERR_BAD_REQUEST);
  if (!request->fields_checked &&
      (memchr(value, '\0', len) != NULL || memchr(value, '\r', len) != NULL ||
       memchr(value, '\n', len) != NULL))
    return remember(request, HTTP_ERR_BAD_REQUEST);
  size_t old = *field == NULL ? 0 : strlen(*field);
  size_t used = request->line_bytes - old;
  if (len > HTTP_REQUEST_MAX_LINE || used > HTTP_REQUEST_MAX_LINE - len)
    return remember(request, HTTP_ERR_URI_TOO_LONG);
  /* Carved from the header list's chunks (one allocation for a whole request, not one per
   * field). A replaced value's bytes stay there until the request is freed: what a peer
   * can pile up that way is bounded by the header block or request line it sent. */
  char *copy = http_headers_strdup(&request->headers, value, len);
  if (copy == NULL) return remember(request, HTTP_ERR_NOMEM);
  *field = copy;
  request->line_bytes = used + len;
  return 0;
}

int http_request_set_method(http_request *request, const char *value, size_t len) {
  return set_field(request, &request->method, value, len);
}
int http_request_set_path(http_request *request, const char *value, size_t len) {
  return set_field(request, &request->path, value, len);
}
int http_request_set_authority(http_request *request, const char *value, size_t len) {
  return set_field(request, &request->authority, value, len);
}
int http_request_set_scheme(http_request *request, const char *value, size_t len) {
  return set_field(request, &request->scheme, value, len);
}
int http_request_set_version(http_request *request, const char *value, size_t len) {
  return set_field(request, &request->version, value, len);
}

/* RFC 9110 7.2: Host = uri-host [ ":" port ], a reg-name (unreserved, pct-encoded,
 * sub-delims), an IPv4 address or a bracketed IP literal: nothing else may appear (RFC
 * 9112 3.2: an invalid Host value is a 400). */
static int host_value_valid(const char *value, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)value[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          strchr("-._~%!$&'()*+,;=:[]", c) != NULL) ||
        c == '\0')
      return 0;
  }
  return 1;
}

/* Content-Length: 1*DIGIT, at most 18 digits (no overflow of int64). Optional
 * whitespace around it is tolerated. */
static int parse_content_length(const char *value, size_t len, int64_t *out) {
  size_t i = 0, end = len;
  while (i < end && (value[i] == ' ' || value[i] == '\t')) i++;
  while (end > i && (value[end - 1] == ' ' || value[end - 1] == '\t')) end--;
  if (i == end || end - i > 18) return HTTP_ERR_BAD_REQUEST;
  int64_t n = 0;
  for (; i < end; i++) {
    if (value[i] < '0' || value[i] > '9') return HTTP_ERR_BAD_REQUEST;
    n = n * 10 + (value[i] - '0');
  }
  *out = n;
  return 0;
}

int http_request_add_header(http_request *request, const char *name, size_t name_len,
                            const char *value, size_t value_len) {
  if (request->error != 0) return request->error;
  if (name == NULL || (value == NULL && value_len > 0))
    return remember(request, HTTP_ERR_INVALID_ARGUMENT);
  if (name_len > 0 && name[0] == ':') return remember(request, HTTP_ERR_BAD_REQUEST);
  if (name_len == 14 && http_headers_name_equal(name, name_len, "content-length")) {
    int64_t n;
    int rv = parse_content_length(value, value_len, &n);
    if (rv != 0) return remember(request, rv);
    if (request->content_length >= 0 && request->content_length != n)
      return remember(request, HTTP_ERR_BAD_REQUEST); /* two different lengths */
    request->content_length = n;
  }
  if (name_len == 6 && http_headers_name_equal(name, name_len, "cookie")) {
    /* SPDY/3 3.2.1 (and RFC 6265 5.4): several Cookie values become one, "; "-joined. */
    for (size_t i = 0; i < request->headers.count; i++) {
      if (strcmp(request->headers.items[i].name, "cookie") == 0)
        return remember(request,
                        http_headers_append_value(&request->headers, i, "; ", value, value_len));
    }
  }
  if ((request->protocol == HTTP_PROTO_HTTP10 || request->protocol == HTTP_PROTO_HTTP11) &&
      name_len == 4 && http_headers_name_equal(name, name_len, "host")) {
    /* RFC 9112 3.2: two Host fields or an invalid one are a 400; an absolute-form
     * target (set after the fields) wins over Host. */
    if (http_headers_get(&request->headers, "host") != NULL || !host_value_valid(value, value_len))
      return remember(request, HTTP_ERR_BAD_REQUEST);
    if (request->authority == NULL) {
      int rv = set_field(request, &request->authority, value, value_len);
      if (rv != 0) return rv;
    }
  }
  if (request->fields_checked)
    return remember(request,
                    http_headers_add_checked(&request->headers, name, name_len, value, value_len));
  return remember(request, http_headers_add(&request->headers, name, name_len, value, value_len));
}

int http_request_finish(http_request *request) {
  if (request->error != 0) return request->error;
  if (request->method == NULL || request->path == NULL)
    return remember(request, HTTP_ERR_BAD_REQUEST);
  if (request->protocol == HTTP_PROTO_HTTP11 && request->authority == NULL)
    return remember(request, HTTP_ERR_BAD_REQUEST); /* RFC 7230 5.4 */
  return 0;
}

int http_request_check_body(const http_request *request, uint64_t received, int complete) {
  if (request->content_length < 0) return 0;
  uint64_t declared = (uint64_t)request->content_length;
  if (received > declared) return HTTP_ERR_BAD_REQUEST;
  if (complete && received != declared) return HTTP_ERR_BAD_REQUEST;
  return 0;
}

size_t http_request_path_length(const http_request *request) {
  if (request->path == NULL) return 0;
  return strcspn(request->path, "?#");
}
