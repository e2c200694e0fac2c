/* http_mime.c — the extension to Content-Type table and the compressible-type test. */
#define _GNU_SOURCE
#include "http_mime.h"

#include <string.h>
#include <strings.h>

static const struct {
  const char *extension;
  const char *type;
} mime_table[] = {
    {"html", "text/html; charset=utf-8"},
    {"htm", "text/html; charset=utf-8"},
    {"css", "text/css; charset=utf-8"},
    {"js", "text/javascript; charset=utf-8"},
    {"mjs", "text/javascript; charset=utf-8"},
    {"json", "application/json"},
    {"png", "image/png"},
    {"jpg", "image/jpeg"},
    {"jpeg", "image/jpeg"},
    {"gif", "image/gif"},
    {"svg", "image/svg+xml"},
    {"ico", "image/x-icon"},
    {"woff", "font/woff"},
    {"woff2", "font/woff2"},
    {"txt", "text/plain; charset=utf-8"},
    {"xml", "application/xml"},
    {"pdf", "application/pdf"},
    {"wasm", "application/wasm"},
    {"mp4", "video/mp4"},
    {"webp", "image/webp"},
};

const char *http_mime_type(const char *name) {
  const char *slash = name == NULL ? NULL : strrchr(name, '/');
  const char *base = slash != NULL ? slash + 1 : name;
  const char *dot = base == NULL ? NULL : strrchr(base, '.');
  if (dot != NULL && dot != base) {
    for (size_t i = 0; i < sizeof(mime_table) / sizeof(mime_table[0]); i++)
      if (strcasecmp(dot + 1, mime_table[i].extension) == 0) return mime_table[i].type;
  }
  return "application/octet-stream";
}

int http_mime_compressible(const char *type) {
  if (type == NULL) return 0;
  static const char *const prefixes[] = {"text/", "application/json", "application/javascript",
                                         "image/svg+xml", "application/xml"};
  for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
    if (strncasecmp(type, prefixes[i], strlen(prefixes[i])) == 0) return 1;
  return 0;
}
