/* http_client.h — the header fields an HTTP client sends and reads over SPDY and HTTP/2.
 *
 * libspeedy gives and takes HTTP/2's names (RFC 9113 8.3) for every protocol: a request
 * carries :method, :scheme, :authority and :path, a response's :status is three digits,
 * and there is no :version (a SPDY session writes SPDY's :host, :version and "200 OK" on
 * the wire and reads them back as HTTP/2's). What is left to tell apart is here: the
 * fields HTTP/2 forbids, and the protocol's name in a status line.
 *
 * `speedy get`, `speedy bench` and `speedy load` share one session path for both.
 * Pure functions: no allocation, no I/O.
 */
#ifndef SPEEDY_HTTP_CLIENT_H
#define SPEEDY_HTTP_CLIENT_H

#include <speedy/speedy.h>
#include <stddef.h>

/* Pseudo-header fields of a request, at most. */
#define HTTP_CLIENT_MAX_PSEUDO 4

/* Writes the pseudo-header fields of a request into out (at least HTTP_CLIENT_MAX_PSEUDO
 * entries), pointing at the strings given (which must outlive the list): :method :scheme
 * :authority :path, the order nghttp2 and browsers use. Returns how many were written. */
size_t http_client_request_pseudo(const char *method, const char *scheme, const char *authority,
                                  const char *path, speedy_header *out);

/* 1 when a request field (name in lower case) must not be sent on protocol: the
 * connection-specific fields connection, host (the authority is a pseudo-header),
 * keep-alive, proxy-connection and transfer-encoding; for HTTP/2 also upgrade, and te with
 * any value other than "trailers" (RFC 9113 8.2.2). 0 otherwise. */
int http_client_is_connection_field(speedy_protocol protocol, const char *name, size_t name_len,
                                    const char *value, size_t value_len);

/* 1 when a pushed request's field name is its authority (":authority"). */
int http_client_is_authority(const char *name, size_t name_len);

/* Parses a response's :status value: exactly three digits (RFC 9113 8.3.2; libspeedy has
 * taken SPDY's reason phrase off). Returns the status (100 to 999), or -1. */
int http_client_parse_status(const char *value, size_t len);

/* 1 for an interim response's status, a 1xx other than 101: the final one follows (RFC
 * 9110 15.2). */
int http_client_is_interim(int status);

/* 0 when a response with this status has no content whatever its Content-Length says
 * (RFC 9112 6.3: 1xx, 204, 304; a response to HEAD too, which the caller knows). */
int http_client_status_has_body(int status);

/* The protocol's name in a status line: "HTTP/2", "SPDY/3.1", "SPDY/3", "SPDY/2". */
const char *http_client_version_label(speedy_protocol protocol);

/* Protocols a client offers over TLS when none is forced, best first, at most. */
#define HTTP_CLIENT_MAX_OFFERED 5

/* Writes the ALPN ids a client offers by default into out (at least
 * HTTP_CLIENT_MAX_OFFERED entries): "h2", "spdy/3.1", "spdy/3", "spdy/2", "http/1.1"; with
 * npn_only the same without "h2" (HTTP/2 is negotiated by ALPN alone, RFC 9113 3.2).
 * Returns how many. */
size_t http_client_default_protocols(int npn_only, const char **out);

#endif /* SPEEDY_HTTP_CLIENT_H */
