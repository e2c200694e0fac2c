/* http_spdy.h — HTTP over SPDY (SPDY/3 section 3.2, and SPDY/2's equivalent) and over
 * HTTP/2 (RFC 9113 section 8): requests from SYN_STREAM / HEADERS fields, SYN_REPLY /
 * HEADERS and push fields from responses, and the body adapter.
 *
 * libspeedy already speaks SPDY/3 names to us in every version (SPDY/2's method, url,
 * version, host, scheme and status arrive as :method, :path, ...), and delivers a value
 * the peer joined with NUL as one header call per value. This module adds the HTTP rules:
 *   receipt: the connection-specific fields (connection, host, keep-alive,
 *     proxy-connection, transfer-encoding) are ignored; :host is the authority; several
 *     Cookie values are joined with "; "; unknown pseudo-headers are a 400; a SPDY/2 url
 *     that is an absolute URL gives scheme, host and path; a request without :method,
 *     :path, :version, :host and :scheme gets a 400 reply (not a reset: 3.2.1).
 *   sending: the same connection-specific fields are never sent; :status carries the
 *     reason phrase ("200 OK"); :version "HTTP/1.1"; each Set-Cookie stays its own entry
 *     (libspeedy joins same-name values with NUL on the wire).
 *   bodies: http_request_check_body (http_request.h) for Content-Length vs DATA, and
 *     http_spdy_body_read as the speedy_data_read_fn for http_body sources.
 */
#ifndef SPEEDY_HTTP_SPDY_H
#define SPEEDY_HTTP_SPDY_H

#include <speedy/speedy.h>
#include <stddef.h>

#include "http_request.h"
#include "http_response.h"

/* HTTP/2 (request->protocol HTTP_PROTO_H2; every other rule above is the same):
 *   receipt: :method, :scheme, :authority, :path are the pseudo-header fields (:host and
 *     :version are unknown ones: a 400); :authority is the authority, Host when there is
 *     no :authority; :method, :scheme and :path are required (:authority is not);
 *     version becomes "HTTP/2.0" for the access log.
 *   sending: :status is the three digits alone and there is no :version; upgrade and te
 *     are not sent either; a push's request is :method GET, :scheme, :authority, :path.
 */

/* 1 when name (any case) is a field SPDY forbids: connection, host, keep-alive,
 * proxy-connection, transfer-encoding. */
int http_spdy_is_connection_header(const char *name, size_t len);
/* 1 when a response field named name goes on the wire of protocol (0: a pseudo-header
 * name, a connection-specific field, or one of HTTP/2's forbidden ones). A field sent
 * over HTTP/2 is sent over every SPDY version too. */
int http_spdy_response_field_sent(http_protocol protocol, const char *name, size_t len);

/* Feeds one received request header (from on_header) into request. Returns 0 or the
 * sticky error (http_request.h); an error here is answered after the block ends. */
int http_spdy_request_header(http_request *request, const speedy_header *header);
/* The header block ended (on_headers_end). end_stream is 1 when the SYN_STREAM had FIN
 * (no body). Returns 0, or the error to answer (http_err_status: 400, 414, 431). */
int http_spdy_request_finish(http_request *request, int end_stream);

/* Header lists to submit: an array of speedy_header pointing into the response (or into
 * the strings given), plus storage for the :status value. Valid while those live and
 * are not changed; free with http_spdy_headers_free. */
/* Fields up to this many are listed inside the struct (no allocation). */
#define HTTP_SPDY_INLINE_HEADERS 16

typedef struct http_spdy_headers {
  speedy_header *list; /* inline, or allocated for longer lists */
  size_t count;
  char status[64]; /* :status: three digits, or SPDY's "NNNN Reason" for a code outside them */
  speedy_header inline_list[HTTP_SPDY_INLINE_HEADERS];
} http_spdy_headers;

/* Response headers (SYN_REPLY, HTTP/2 HEADERS, a push's response, an HTTP/2 1xx):
 * ":status" of three digits (libspeedy adds SPDY's reason phrase and :version), then every
 * field except the connection-specific ones (for HTTP/2 also those RFC 9113 8.2.2 names).
 * A status outside 100-999 (replayed recordings carry what browsers saw) goes to SPDY
 * as "NNNN Reason"; HTTP/2 has no way to say it: HTTP_ERR_INVALID_ARGUMENT. Else returns
 * 0 or HTTP_ERR_NOMEM. */
int http_spdy_response_headers(const http_response *response, http_protocol protocol,
                               http_spdy_headers *out);
/* A push's request headers: ":scheme", ":authority", ":path", and for HTTP/2 ":method"
 * GET first (libspeedy writes SPDY's :host, and SPDY/2's absolute url); for HTTP/2 also
 * accept_encoding when not NULL, so that the promised request is the one the pushed
 * answer (which varies on it) was made for. Returns 0 or HTTP_ERR_INVALID_ARGUMENT (a
 * NULL string). */
int http_spdy_push_headers(http_protocol protocol, const char *scheme, const char *host,
                           const char *path, const char *accept_encoding, http_spdy_headers *out);
void http_spdy_headers_free(http_spdy_headers *headers);

/* speedy_data_read_fn over an http_body (source): bytes and SPEEDY_DATA_FLAG_EOF,
 * SPEEDY_ERR_DEFERRED for HTTP_ERR_NOT_READY (call speedy_session_resume_data when the body
 * has data), and a negative value (the stream is reset with INTERNAL_ERROR) for a body
 * error such as HTTP_ERR_TRUNCATED. The body stays the caller's. */
int64_t http_spdy_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                            uint32_t *flags, void *source, void *user);

#endif
