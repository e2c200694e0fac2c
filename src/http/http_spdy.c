/* http_spdy.c — the HTTP mapping of SPDY (SPDY/3 3.2) and HTTP/2 (RFC 9113 8.3): request
 * headers in, response and push headers out, and the data source adapter for http_body.
 *
 * libspeedy gives and takes HTTP/2's names for every protocol (:authority, a three-digit
 * :status, no :version; it speaks SPDY's :host, :version and "200 OK" on the wire), so
 * the differences left here are few, keyed on request->protocol or the protocol given:
 * SPDY/2's absolute url, HTTP/2's Host standing for a missing :authority, the fields
 * HTTP/2 forbids, and a promise's :method. (HTTP/2's own message rules, such as the
 * connection-specific fields, are enforced by libspeedy before we see a field.)
 */
#define _GNU_SOURCE
#include "http_spdy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "http_ows.h"

enum { SEEN_METHOD = 1u << 0, SEEN_PATH = 1u << 1, SEEN_HOST = 1u << 2, SEEN_SCHEME = 1u << 3 };

/* The pseudo-header fields of a request (RFC 9113 8.3.1; ":protocol" is RFC 8441's
 * CONNECT, which libspeedy refuses before us). */
typedef struct pseudo_name {
  const char *name;
  size_t len;
  unsigned bit;
} pseudo_name;
static const pseudo_name request_pseudo[] = {{":method", 7, SEEN_METHOD},
                                             {":path", 5, SEEN_PATH},
                                             {":authority", 10, SEEN_HOST},
                                             {":scheme", 7, SEEN_SCHEME}};

int http_spdy_is_connection_header(const char *name, size_t len) {
  /* By length and first letter first: every field of every request passes here. */
  int first = len > 0 ? (name[0] | 0x20) : 0;
  switch (len) {
  case 4:
    return first == 'h' && http_headers_name_equal(name, len, "host");
  case 10:
    return (first == 'c' && http_headers_name_equal(name, len, "connection")) ||
           (first == 'k' && http_headers_name_equal(name, len, "keep-alive"));
  case 16:
    return first == 'p' && http_headers_name_equal(name, len, "proxy-connection");
  case 17:
    return first == 't' && http_headers_name_equal(name, len, "transfer-encoding");
  default:
    return 0;
  }
}

/* The pseudo-header field of a checked HTTP/2 request, by length (libspeedy let only
 * :method, :scheme, :authority and :path through). */
static unsigned checked_pseudo_bit(const char *name, size_t len) {
  switch (len) {
  case 5:
    return SEEN_PATH;
  case 10:
    return SEEN_HOST;
  case 7:
    return name[1] == 'm' ? SEEN_METHOD : SEEN_SCHEME;
  default:
    return 0;
  }
}

static int remember(http_request *request, int rv) {
  if (rv != 0 && request->error == 0) request->error = rv;
  return rv;
}

/* SPDY/2 may send url as an absolute URL ("http://host:port/path"): keep its scheme and
 * host (where :scheme and :host did not say otherwise) and the path. */
static int set_url(http_request *request, const char *value, size_t len) {
  const char *separator = len > 0 && value[0] != '/' ? strstr(value, "://") : NULL;
  if (separator == NULL || (size_t)(separator - value) >= len)
    return http_request_set_path(request, value, len);
  size_t scheme_len = (size_t)(separator - value);
  const char *host = separator + 3;
  size_t rest = len - scheme_len - 3;
  const char *slash = memchr(host, '/', rest);
  size_t host_len = slash != NULL ? (size_t)(slash - host) : rest;
  if (scheme_len == 0 || host_len == 0) return remember(request, HTTP_ERR_BAD_REQUEST);
  int rv = 0;
  if (!(request->pseudo_seen & SEEN_SCHEME))
    rv = http_request_set_scheme(request, value, scheme_len);
  if (rv == 0 && !(request->pseudo_seen & SEEN_HOST))
    rv = http_request_set_authority(request, host, host_len);
  if (rv != 0) return rv;
  if (slash == NULL) return http_request_set_path(request, "/", 1);
  return http_request_set_path(request, slash, rest - host_len);
}

int http_spdy_request_header(http_request *request, const speedy_header *header) {
  if (request->error != 0) return request->error;
  if (header == NULL || header->name == NULL || (header->value == NULL && header->value_len > 0))
    return remember(request, HTTP_ERR_INVALID_ARGUMENT);
  const char *name = header->name, *value = header->value;
  size_t name_len = header->name_len, value_len = header->value_len;
  int h2 = request->protocol == HTTP_PROTO_H2;
  if (name_len > 0 && name[0] == ':') {
    unsigned bit = request->fields_checked ? checked_pseudo_bit(name, name_len) : 0;
    for (size_t i = 0; i < sizeof(request_pseudo) / sizeof(request_pseudo[0]) && bit == 0; i++)
      if (name_len == request_pseudo[i].len &&
          http_headers_name_equal(name, name_len, request_pseudo[i].name))
        bit = request_pseudo[i].bit;
    if (bit == 0 || (request->pseudo_seen & bit)) /* unknown, or a second value */
      return remember(request, HTTP_ERR_BAD_REQUEST);
    request->pseudo_seen |= bit;
    switch (bit) {
    case SEEN_METHOD:
      return http_request_set_method(request, value, value_len);
    case SEEN_PATH:
      /* Only SPDY/2 clients sent absolute URLs; HTTP/2's :path is origin-form (8.3.1). */
      return h2 ? http_request_set_path(request, value, value_len)
                : set_url(request, value, value_len);
    case SEEN_HOST:
      return http_request_set_authority(request, value, value_len); /* wins */
    default:
      return http_request_set_scheme(request, value, value_len);
    }
  }
  /* RFC 9113 8.3.1: without :authority, Host is the authority (with it, :authority
   * rules; pseudo-header fields come first, so it has been seen by now). */
  if (h2 && !(request->pseudo_seen & SEEN_HOST) && request->authority == NULL &&
      http_headers_name_equal(name, name_len, "host"))
    return http_request_set_authority(request, value, value_len);
  /* 3.2.1: not valid in SPDY; ignored on receipt (the Host field included: :host rules). */
  if (http_spdy_is_connection_header(name, name_len)) return 0;
  return http_request_add_header(request, name, name_len, value, value_len);
}

int http_spdy_request_finish(http_request *request, int end_stream) {
  if (request->error != 0) return request->error;
  if (request->protocol == HTTP_PROTO_SPDY2 && request->scheme == NULL) {
    /* SPDY/2 clients did not always send scheme; the URL is then http. */
    int rv = http_request_set_scheme(request, "http", 4);
    if (rv != 0) return rv;
  }
  /* RFC 9113 8.3.1: :method, :scheme and :path (not empty) in every request that is not
   * CONNECT; HTTP/2's :authority is optional (Host may stand for it, or neither be sent).
   * SPDY/3 3.2.1: "If a client sends a SYN_STREAM without all of the method, host, path,
   * scheme, and version headers, the server MUST reply with a HTTP 400 Bad Request reply"
   * (libspeedy has checked :version, which it does not pass on). */
  int h2 = request->protocol == HTTP_PROTO_H2;
  if (request->method == NULL || request->path == NULL || request->scheme == NULL ||
      request->path[0] != '/' || (!h2 && request->authority == NULL))
    return remember(request, HTTP_ERR_BAD_REQUEST);
  /* The version the access log shows, as other servers log it. */
  int rv = h2 ? http_request_set_version(request, "HTTP/2.0", 8)
              : http_request_set_version(request, "HTTP/1.1", 8);
  if (rv != 0) return rv;
  request->has_body = !end_stream;
  return 0;
}

void http_spdy_headers_free(http_spdy_headers *headers) {
  if (headers->list != headers->inline_list) free(headers->list);
  headers->list = NULL;
  headers->count = 0;
}

/* Fields never sent: SPDY's connection-specific ones, and for HTTP/2 also those RFC 9113
 * 8.2.2 names (upgrade; te, which only a request may carry). */
static int not_sent(http_protocol protocol, const char *name, size_t len) {
  if (name[0] == ':' || http_spdy_is_connection_header(name, len)) return 1;
  return protocol == HTTP_PROTO_H2 && (http_headers_name_equal(name, len, "upgrade") ||
                                       http_headers_name_equal(name, len, "te"));
}

int http_spdy_response_field_sent(http_protocol protocol, const char *name, size_t len) {
  return len > 0 && !not_sent(protocol, name, len);
}

int http_spdy_response_headers(const http_response *response, http_protocol protocol,
                               http_spdy_headers *out) {
  out->list = NULL;
  out->count = 0;
  /* RFC 9113 8.3.2: the three digits and nothing else (a SPDY session adds the reason). */
  int status = response->status;
  if (status >= 100 && status <= 999) {
    out->status[0] = (char)('0' + status / 100);
    out->status[1] = (char)('0' + status / 10 % 10);
    out->status[2] = (char)('0' + status % 10);
    out->status[3] = '\0';
  } else if (protocol == HTTP_PROTO_H2) {
    return HTTP_ERR_INVALID_ARGUMENT;
  } else { /* passed to SPDY's wire as it is */
    snprintf(out->status, sizeof(out->status), "%d %s", status, http_status_reason(status));
  }
  speedy_header *list = out->inline_list;
  if (response->headers.count + 1 > HTTP_SPDY_INLINE_HEADERS) {
    list = calloc(response->headers.count + 1, sizeof(speedy_header));
    if (list == NULL) return HTTP_ERR_NOMEM;
  }
  size_t n = 0;
  list[n++] = (speedy_header){":status", 7, out->status, strlen(out->status)};
  for (size_t i = 0; i < response->headers.count; i++) {
    const http_header *h = &response->headers.items[i];
    if (not_sent(protocol, h->name, h->name_len)) continue;
    const char *value = h->value;
    size_t value_len = h->value_len;
    http_trim_ows(&value, &value_len);
    list[n++] = (speedy_header){h->name, h->name_len, value, value_len};
  }
  out->list = list;
  out->count = n;
  return 0;
}

int http_spdy_push_headers(http_protocol protocol, const char *scheme, const char *host,
                           const char *path, const char *accept_encoding, http_spdy_headers *out) {
  out->list = NULL;
  out->count = 0;
  out->status[0] = '\0';
  if (scheme == NULL || host == NULL || path == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  speedy_header *list = out->inline_list;
  size_t n = 0;
  /* A PUSH_PROMISE carries a whole request (RFC 9113 8.4): GET, safe and cacheable.
   * SPDY's push names only the resource (SPDY/3 3.3.1). */
  if (protocol == HTTP_PROTO_H2) list[n++] = (speedy_header){":method", 7, "GET", 3};
  list[n++] = (speedy_header){":scheme", 7, scheme, strlen(scheme)};
  list[n++] = (speedy_header){":authority", 10, host, strlen(host)};
  list[n++] = (speedy_header){":path", 5, path, strlen(path)};
  if (protocol == HTTP_PROTO_H2 && accept_encoding != NULL)
    list[n++] = (speedy_header){"accept-encoding", 15, accept_encoding, strlen(accept_encoding)};
  out->list = list;
  out->count = n;
  return 0;
}

int64_t http_spdy_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                            uint32_t *flags, void *source, void *user) {
  (void)session;
  (void)stream_id;
  (void)user;
  int eof = 0;
  int64_t n = http_body_read(source, buf, len, &eof);
  if (n == HTTP_ERR_NOT_READY) return SPEEDY_ERR_DEFERRED;
  if (n < 0) return n; /* an HTTP_ERR_* value: never one libspeedy gives a meaning to */
  if (eof) *flags |= SPEEDY_DATA_FLAG_EOF;
  return n;
}
