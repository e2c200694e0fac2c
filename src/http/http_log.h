/* http_log.h — access log lines: the combined log format plus protocol, stream and bytes.
 *
 *   PEER - - [DATE] "METHOD PATH VERSION" STATUS BODY_BYTES "REFERER" "USER_AGENT" PROTOCOL STREAM
 * IN OUT
 *
 * e.g.  127.0.0.1 - - [06/Nov/1994:08:49:37 +0000] "GET /a.css HTTP/1.1" 200 512 "-"
 *       "curl/8.0" spdy/3.1 5 0 742
 * (one line). BODY_BYTES is the response body sent ("-" when 0, as Apache's %b); STREAM
 * is the SPDY stream id, or the request's sequence number on an HTTP/1.1 connection;
 * IN is request body bytes received and OUT all bytes sent for the response (headers
 * included, as the server counts them). Absent strings are "-".
 *
 * Every byte that came from a peer (method, path, version, referer, user agent) is
 * escaped: bytes below 0x20, 0x7f and above, '"' and '\' become \xHH, so a line can
 * neither be split nor forged, and nothing reaches a terminal unescaped. Each such field
 * is cut at HTTP_LOG_MAX_FIELD input bytes (marked with "...").
 */
#ifndef SPEEDY_HTTP_LOG_H
#define SPEEDY_HTTP_LOG_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_LOG_MAX_FIELD 1024u
/* A buffer this large always holds a whole line (every field at its maximum). */
#define HTTP_LOG_LINE_MAX (6u * 4u * HTTP_LOG_MAX_FIELD + 256u)

typedef struct http_log_entry {
  const char *peer; /* "192.0.2.1" or "2001:db8::1" (escaped like the rest) */
  int64_t time;     /* seconds since the epoch */
  const char *method;
  const char *path;
  const char *version; /* "HTTP/1.1" */
  int status;
  uint64_t body_bytes;
  const char *referer;
  const char *user_agent;
  const char *protocol; /* "spdy/3.1", "http/1.1" */
  int64_t stream_id;
  uint64_t bytes_in;
  uint64_t bytes_out;
} http_log_entry;

/* Escapes in[0..len) into out (cap bytes, NUL-terminated, never overflowing; cut at a
 * whole escape). Returns the length written. */
size_t http_log_escape(const char *in, size_t len, char *out, size_t cap);

/* Formats entry as one line ending in '\n' into out (cap bytes; HTTP_LOG_LINE_MAX is
 * always enough). Returns the length, or 0 when cap is too small. */
size_t http_log_format(const http_log_entry *entry, char *out, size_t cap);

#endif
