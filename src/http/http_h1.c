/* http_h1.c — HTTP/1.1 requests from a byte stream through llhttp (see http_h1.h). */
#include "http_h1.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_err.h"

static http_h1_reader *reader_of(llhttp_t *p) { return p->data; }

static int fail(http_h1_reader *r, int err) {
  if (r->error == 0) r->error = err;
  return -1;
}

/* ---- header collection (llhttp may deliver a name or value in pieces) ---- */

static int commit_header(http_h1_reader *r) {
  if (!r->in_value) return 0;
  r->in_value = 0;
  /* "Host : x" — whitespace before the colon (RFC 9112 5.1: must be a 400). */
  if (memchr(r->name, ' ', r->name_len) != NULL || memchr(r->name, '\t', r->name_len) != NULL)
    return fail(r, HTTP_ERR_BAD_REQUEST);
  int rv = http_request_add_header(&r->request, r->name, r->name_len, r->value ? r->value : "",
                                   r->value_len);
  r->name_len = 0;
  r->value_len = 0;
  return rv == 0 ? 0 : fail(r, rv);
}

static int budget(http_h1_reader *r, size_t len, int err) {
  size_t max = r->max_header_bytes;
  if (len > max || r->header_bytes > max - len) return fail(r, err);
  r->header_bytes += len;
  return 0;
}

static int on_message_begin(llhttp_t *p) {
  http_h1_reader *r = reader_of(p);
  r->header_bytes = 0;
  r->chunk_extension_bytes = 0;
  r->started = 1;
  return 0;
}

static int on_chunk_extension(llhttp_t *p, const char *at, size_t len) {
  (void)at;
  http_h1_reader *r = reader_of(p);
  if (len > HTTP_H1_MAX_CHUNK_EXTENSIONS - r->chunk_extension_bytes)
    return fail(r, HTTP_ERR_BAD_REQUEST);
  r->chunk_extension_bytes += len;
  return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len) {
  http_h1_reader *r = reader_of(p);
  if (len > HTTP_REQUEST_MAX_LINE - r->url_len) return fail(r, HTTP_ERR_URI_TOO_LONG);
  char *grown = realloc(r->url, r->url_len + len + 1);
  if (grown == NULL) return fail(r, HTTP_ERR_NOMEM);
  r->url = grown;
  memcpy(r->url + r->url_len, at, len);
  r->url_len += len;
  return 0;
}

/* Fields after the headers are a chunked body's trailer section. They are counted against
 * the header budget and dropped: merged into the request they could change what was
 * already decided from the headers — a trailer Content-Length or Host (RFC 9112 7.1.2;
 * http1 fuzz finding). */
static int in_trailers(const http_h1_reader *r) { return r->had_headers; }

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  http_h1_reader *r = reader_of(p);
  if (in_trailers(r)) return budget(r, len, HTTP_ERR_HEADERS_TOO_LARGE);
  if (commit_header(r) != 0) return -1;
  if (budget(r, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > sizeof(r->name) - r->name_len) return fail(r, HTTP_ERR_HEADERS_TOO_LARGE);
  memcpy(r->name + r->name_len, at, len);
  r->name_len += len;
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  http_h1_reader *r = reader_of(p);
  if (in_trailers(r)) return budget(r, len, HTTP_ERR_HEADERS_TOO_LARGE);
  /* A value piece right after a line break is a folded continuation line (obs-fold,
   * RFC 9112 5.2: reject with 400). Ordinary values follow "name:" and spaces. */
  const uint8_t *piece = (const uint8_t *)at;
  uint8_t before = piece > r->in_start ? piece[-1] : r->in_prev;
  if (len > 0 && before == '\n') return fail(r, HTTP_ERR_BAD_REQUEST);
  r->in_value = 1;
  if (budget(r, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > r->value_cap - r->value_len) {
    size_t cap = r->value_cap ? r->value_cap : 256;
    while (cap - r->value_len < len) cap *= 2; /* bounded by the header budget */
    char *grown = realloc(r->value, cap);
    if (grown == NULL) return fail(r, HTTP_ERR_NOMEM);
    r->value = grown;
    r->value_cap = cap;
  }
  /* llhttp announces an empty value with len 0, and value is NULL until a first
   * non-empty one: NULL + 0 is undefined (docs/fuzzing.md, finding 1). */
  if (len > 0) memcpy(r->value + r->value_len, at, len);
  r->value_len += len;
  return 0;
}

/* The request target: origin-form as it is; absolute-form ("http://host/path?q", RFC 9112
 * 3.2.2: a server must accept it) gives its authority, which stands for Host, and its
 * path and query. */
static int set_target(http_request *req, const char *url, size_t len) {
  size_t scheme = len >= 7 && strncasecmp(url, "http://", 7) == 0    ? 7
                  : len >= 8 && strncasecmp(url, "https://", 8) == 0 ? 8
                                                                     : 0;
  if (scheme == 0) return http_request_set_path(req, url, len);
  const char *authority = url + scheme, *end = url + len, *at = authority;
  while (at < end && *at != '/' && *at != '?') at++;
  size_t authority_len = (size_t)(at - authority);
  if (authority_len == 0 || memchr(authority, '@', authority_len) != NULL)
    return HTTP_ERR_BAD_REQUEST; /* no host, or userinfo (RFC 9110 4.2.4) */
  int rv = http_request_set_authority(req, authority, authority_len);
  if (rv != 0) return rv;
  if (at == end) return http_request_set_path(req, "/", 1);
  if (*at == '/') return http_request_set_path(req, at, (size_t)(end - at));
  char *path = malloc((size_t)(end - at) + 2); /* "?q" becomes "/?q" */
  if (path == NULL) return HTTP_ERR_NOMEM;
  path[0] = '/';
  memcpy(path + 1, at, (size_t)(end - at));
  rv = http_request_set_path(req, path, (size_t)(end - at) + 1);
  free(path);
  return rv;
}

static int on_headers_complete(llhttp_t *p) {
  http_h1_reader *r = reader_of(p);
  if (commit_header(r) != 0) return -1;
  http_request *req = &r->request;
  req->protocol = p->http_major == 1 && p->http_minor == 0 ? HTTP_PROTO_HTTP10 : HTTP_PROTO_HTTP11;
  const char *method = llhttp_method_name((llhttp_method_t)p->method);
  char version[16];
  snprintf(version, sizeof(version), "HTTP/%u.%u", p->http_major, p->http_minor);
  int rv = http_request_set_method(req, method, strlen(method));
  if (rv == 0) rv = set_target(req, r->url ? r->url : "", r->url_len);
  if (rv == 0) rv = http_request_set_version(req, version, strlen(version));
  if (rv == 0) rv = http_request_set_scheme(req, r->tls ? "https" : "http", r->tls ? 5 : 4);
  r->chunked = (p->flags & F_CHUNKED) != 0;
  req->has_body = r->chunked || req->content_length > 0;
  /* RFC 9112 6.1: Transfer-Encoding in an HTTP/1.0 message means its framing is faulty
   * (a front end of 1.0 may have read it otherwise): refused, and the connection closes. */
  if (rv == 0 && req->protocol == HTTP_PROTO_HTTP10 && (p->flags & F_TRANSFER_ENCODING))
    rv = HTTP_ERR_BAD_REQUEST;
  /* RFC 9110 7.8: we switch to no other protocol (h2c comes by prior knowledge): Upgrade is
   * ignored, and the connection goes on in HTTP/1.1 (llhttp would stop after this one). */
  if (p->method != HTTP_CONNECT) p->upgrade = 0;
  if (rv == 0) rv = http_request_finish(req);
  if (rv != 0) return fail(r, rv);
  r->had_headers = 1;
  if (r->callbacks->on_headers != NULL) {
    rv = r->callbacks->on_headers(r, r->user);
    if (rv != 0) return fail(r, rv);
  }
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  http_h1_reader *r = reader_of(p);
  if (r->callbacks->on_body == NULL) return 0;
  int rv = r->callbacks->on_body(r, (const uint8_t *)at, len, r->user);
  return rv == 0 ? 0 : fail(r, rv);
}

static int on_message_complete(llhttp_t *p) {
  http_h1_reader *r = reader_of(p);
  /* What follows a CONNECT is not HTTP/1.1 (it is refused; the connection closes). */
  r->keep_alive = llhttp_should_keep_alive(p) && !p->upgrade;
  return HPE_PAUSED; /* answer this one before looking at the next */
}

/* ---- the reader ---- */

void http_h1_reader_init(http_h1_reader *reader, size_t max_header_bytes, int tls,
                         const http_h1_callbacks *callbacks, void *user) {
  memset(reader, 0, sizeof(*reader));
  reader->callbacks = callbacks;
  reader->user = user;
  reader->max_header_bytes = max_header_bytes;
  reader->tls = tls;
  reader->in_prev = '\n';
  llhttp_settings_init(&reader->settings);
  reader->settings.on_message_begin = on_message_begin;
  reader->settings.on_url = on_url;
  reader->settings.on_header_field = on_header_field;
  reader->settings.on_header_value = on_header_value;
  reader->settings.on_headers_complete = on_headers_complete;
  reader->settings.on_body = on_body;
  reader->settings.on_message_complete = on_message_complete;
  reader->settings.on_chunk_extension_name = on_chunk_extension;
  reader->settings.on_chunk_extension_value = on_chunk_extension;
  llhttp_init(&reader->parser, HTTP_REQUEST, &reader->settings);
  reader->parser.data = reader;
  http_request_init(&reader->request, HTTP_PROTO_HTTP11, max_header_bytes, 0);
}

void http_h1_reader_free(http_h1_reader *reader) {
  http_request_free(&reader->request);
  free(reader->url);
  free(reader->value);
  reader->url = NULL;
  reader->value = NULL;
}

http_h1_event http_h1_reader_feed(http_h1_reader *reader, const uint8_t *data, size_t len,
                                  size_t *consumed) {
  *consumed = len;
  if (reader->error != 0) return HTTP_H1_ERROR;
  reader->in_start = data;
  llhttp_errno_t err = llhttp_execute(&reader->parser, (const char *)data, len);
  if (err == HPE_OK) {
    if (len > 0) reader->in_prev = data[len - 1];
    if (reader->error == 0) return HTTP_H1_MORE;
  } else if (err == HPE_PAUSED) {
    reader->paused = 1;
    const char *pos = llhttp_get_error_pos(&reader->parser);
    size_t used = pos >= (const char *)data ? (size_t)(pos - (const char *)data) : len;
    if (used > len) used = len;
    if (used > 0) reader->in_prev = data[used - 1];
    *consumed = used;
    return HTTP_H1_MESSAGE;
  }
  if (reader->error == 0) { /* llhttp refused the bytes */
    reader->error = HTTP_ERR_BAD_REQUEST;
    reader->malformed = 1;
  }
  return HTTP_H1_ERROR;
}

void http_h1_reader_next(http_h1_reader *reader) {
  http_request_free(&reader->request);
  http_request_init(&reader->request, HTTP_PROTO_HTTP11, reader->max_header_bytes, 0);
  reader->url_len = 0;
  reader->name_len = reader->value_len = 0;
  reader->in_value = 0;
  reader->header_bytes = 0;
  reader->had_headers = 0;
  reader->started = 0;
  reader->chunked = 0;
  reader->keep_alive = 0;
  if (reader->paused) {
    reader->paused = 0;
    llhttp_resume(&reader->parser);
  }
}

const char *http_h1_reader_error_reason(const http_h1_reader *reader) {
  const char *reason = llhttp_get_error_reason(&reader->parser);
  return reason != NULL ? reason : "";
}
