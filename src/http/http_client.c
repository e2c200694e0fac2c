/* http_client.c — where SPDY's and HTTP/2's request and response fields differ, for the
 * clients (see http_client.h). */
#include "http_client.h"

#include <string.h>

static int is_h2(speedy_protocol protocol) { return protocol == SPEEDY_PROTOCOL_H2; }

static speedy_header field(const char *name, const char *value) {
  return (speedy_header){name, strlen(name), value, strlen(value)};
}

static int equals(const char *s, size_t len, const char *literal) {
  return len == strlen(literal) && memcmp(s, literal, len) == 0;
}

size_t http_client_request_pseudo(const char *method, const char *scheme, const char *authority,
                                  const char *path, speedy_header *out) {
  size_t n = 0;
  out[n++] = field(":method", method);
  out[n++] = field(":scheme", scheme);
  out[n++] = field(":authority", authority);
  out[n++] = field(":path", path);
  return n;
}

int http_client_is_connection_field(speedy_protocol protocol, const char *name, size_t name_len,
                                    const char *value, size_t value_len) {
  static const char *const banned[] = {"connection", "host", "keep-alive", "proxy-connection",
                                       "transfer-encoding"};
  for (size_t i = 0; i < sizeof(banned) / sizeof(banned[0]); i++)
    if (equals(name, name_len, banned[i])) return 1;
  if (!is_h2(protocol)) return 0;
  if (equals(name, name_len, "upgrade")) return 1;
  return equals(name, name_len, "te") && !equals(value, value_len, "trailers");
}

int http_client_is_authority(const char *name, size_t name_len) {
  return equals(name, name_len, ":authority");
}

int http_client_parse_status(const char *value, size_t len) {
  if (len != 3) return -1;
  int status = 0;
  for (size_t i = 0; i < 3; i++) {
    if (value[i] < '0' || value[i] > '9') return -1;
    status = status * 10 + (value[i] - '0');
  }
  return status < 100 ? -1 : status;
}

int http_client_is_interim(int status) { return status >= 100 && status < 200 && status != 101; }

int http_client_status_has_body(int status) {
  return !(status >= 100 && status < 200) && status != 204 && status != 304;
}

const char *http_client_version_label(speedy_protocol protocol) {
  switch (protocol) {
  case SPEEDY_PROTOCOL_H2:
    return "HTTP/2";
  case SPEEDY_PROTOCOL_SPDY2:
    return "SPDY/2";
  case SPEEDY_PROTOCOL_SPDY3:
    return "SPDY/3";
  default:
    return "SPDY/3.1";
  }
}

size_t http_client_default_protocols(int npn_only, const char **out) {
  static const char *const all[] = {"h2", "spdy/3.1", "spdy/3", "spdy/2", "http/1.1"};
  size_t first = npn_only ? 1 : 0, n = 0;
  for (size_t i = first; i < sizeof(all) / sizeof(all[0]); i++) out[n++] = all[i];
  return n;
}
