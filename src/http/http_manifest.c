/* http_manifest.c — push manifest parsing, lookup and the hint header values. */
#define _GNU_SOURCE
#include "http_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http_err.h"

typedef struct manifest_page {
  char *path;
  http_manifest_entry entries[HTTP_MANIFEST_MAX_PER_PAGE];
  size_t count;
} manifest_page;

struct http_manifest {
  manifest_page *pages;
  size_t count;
  size_t capacity;
};

void http_manifest_del(http_manifest *manifest) {
  if (manifest == NULL) return;
  for (size_t i = 0; i < manifest->count; i++) {
    free(manifest->pages[i].path);
    for (size_t j = 0; j < manifest->pages[i].count; j++) free(manifest->pages[i].entries[j].path);
  }
  free(manifest->pages);
  free(manifest);
}

static int fail(int rv, char *error, size_t error_cap, const char *name, size_t line,
                const char *format, ...) __attribute__((format(printf, 6, 7)));

static int fail(int rv, char *error, size_t error_cap, const char *name, size_t line,
                const char *format, ...) {
  if (error == NULL || error_cap == 0) return rv;
  int n = snprintf(error, error_cap, "%s:%zu: ", name, line);
  if (n >= 0 && (size_t)n < error_cap) {
    va_list args;
    va_start(args, format);
    vsnprintf(error + n, error_cap - (size_t)n, format, args);
    va_end(args);
  }
  return rv;
}

/* Why path cannot be a same-origin path in the manifest, or NULL when it can. */
static const char *path_problem(const char *path) {
  if (path[0] != '/') return "must begin with '/' (same-origin paths only, no scheme or host)";
  if (path[1] == '/') return "must not begin with '//' (that names another host)";
  for (const char *p = path; *p != '\0'; p++) {
    unsigned char c = (unsigned char)*p;
    if (c < 0x21 || c > 0x7e) return "contains a control, space or non-ASCII byte";
    if (strchr("\"<>\\,#", c) != NULL) return "contains one of \" < > \\ , # (percent-encode it)";
  }
  const char *segment = path;
  while ((segment = strstr(segment, "/..")) != NULL) {
    if (segment[3] == '/' || segment[3] == '\0' || segment[3] == '?')
      return "contains a '..' segment";
    segment += 3;
  }
  return NULL;
}

static manifest_page *find_page(const http_manifest *manifest, const char *path, size_t len) {
  for (size_t i = 0; i < manifest->count; i++) {
    manifest_page *page = &manifest->pages[i];
    if (strlen(page->path) == len && memcmp(page->path, path, len) == 0) return page;
  }
  return NULL;
}

/* One (page, resource, urgency) triple added. Returns 0 or an error (message written). */
static int add_entry(http_manifest *manifest, const char *page_path, const char *resource,
                     int urgency, const char *name, size_t line, char *error, size_t error_cap) {
  manifest_page *page = find_page(manifest, page_path, strlen(page_path));
  if (page == NULL) {
    if (manifest->count >= HTTP_MANIFEST_MAX_PAGES)
      return fail(HTTP_ERR_LIMIT, error, error_cap, name, line, "more than %u pages",
                  HTTP_MANIFEST_MAX_PAGES);
    if (manifest->count == manifest->capacity) {
      size_t capacity = manifest->capacity == 0 ? 8 : manifest->capacity * 2;
      manifest_page *pages = realloc(manifest->pages, capacity * sizeof(*pages));
      if (pages == NULL) return HTTP_ERR_NOMEM;
      manifest->pages = pages;
      manifest->capacity = capacity;
    }
    page = &manifest->pages[manifest->count];
    memset(page, 0, sizeof(*page));
    page->path = strdup(page_path);
    if (page->path == NULL) return HTTP_ERR_NOMEM;
    manifest->count++;
  }
  for (size_t i = 0; i < page->count; i++)
    if (strcmp(page->entries[i].path, resource) == 0)
      return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line,
                  "resource %s is already listed for page %s", resource, page_path);
  if (page->count >= HTTP_MANIFEST_MAX_PER_PAGE)
    return fail(HTTP_ERR_LIMIT, error, error_cap, name, line, "more than %u resources for page %s",
                HTTP_MANIFEST_MAX_PER_PAGE, page_path);
  char *copy = strdup(resource);
  if (copy == NULL) return HTTP_ERR_NOMEM;
  page->entries[page->count++] = (http_manifest_entry){copy, urgency};
  return 0;
}

/* Parses one line (NUL-terminated, no newline). */
static int parse_line(http_manifest *manifest, char *text, const char *name, size_t line,
                      char *error, size_t error_cap) {
  char *fields[4];
  size_t count = 0;
  char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\0' || *p == '#') break;
    if (count == 4) break;
    fields[count++] = p;
    while (*p != '\0' && *p != ' ' && *p != '\t') p++;
    if (*p != '\0') *p++ = '\0';
  }
  if (count == 0) return 0; /* blank or comment */
  if (count < 2)
    return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line,
                "expected PAGE RESOURCE [URGENCY], found one field");
  if (count > 3)
    return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line,
                "expected PAGE RESOURCE [URGENCY], found more than three fields");
  for (size_t i = 0; i < 2; i++) {
    const char *problem = path_problem(fields[i]);
    if (problem != NULL)
      return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line, "%s %s %s",
                  i == 0 ? "page" : "resource", fields[i], problem);
  }
  if (strcmp(fields[0], fields[1]) == 0)
    return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line, "page %s lists itself as a resource",
                fields[0]);
  int urgency = HTTP_MANIFEST_DEFAULT_URGENCY;
  if (count == 3) {
    if (fields[2][0] < '0' || fields[2][0] > '7' || fields[2][1] != '\0')
      return fail(HTTP_ERR_SYNTAX, error, error_cap, name, line,
                  "urgency must be a digit 0-7, found '%s'", fields[2]);
    urgency = fields[2][0] - '0';
  }
  return add_entry(manifest, fields[0], fields[1], urgency, name, line, error, error_cap);
}

int http_manifest_parse(const char *name, const char *text, size_t len, http_manifest **out,
                        char *error, size_t error_cap) {
  if (name == NULL || (text == NULL && len > 0) || out == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  if (error != NULL && error_cap > 0) error[0] = '\0';
  if (len > HTTP_MANIFEST_MAX_FILE)
    return fail(HTTP_ERR_LIMIT, error, error_cap, name, 0, "file larger than %u bytes",
                HTTP_MANIFEST_MAX_FILE);
  http_manifest *manifest = calloc(1, sizeof(*manifest));
  if (manifest == NULL) return HTTP_ERR_NOMEM;
  char buffer[HTTP_MANIFEST_MAX_LINE + 1];
  size_t position = 0, line = 0;
  int rv = 0;
  while (position < len && rv == 0) {
    line++;
    const char *start = text + position;
    const char *newline = memchr(start, '\n', len - position);
    size_t line_len = newline != NULL ? (size_t)(newline - start) : len - position;
    position += line_len + (newline != NULL);
    if (line_len > 0 && start[line_len - 1] == '\r') line_len--; /* CRLF files */
    if (line_len > HTTP_MANIFEST_MAX_LINE) {
      rv = fail(HTTP_ERR_LIMIT, error, error_cap, name, line, "line longer than %u bytes",
                HTTP_MANIFEST_MAX_LINE);
      break;
    }
    if (memchr(start, '\0', line_len) != NULL) {
      rv = fail(HTTP_ERR_SYNTAX, error, error_cap, name, line, "NUL byte in line");
      break;
    }
    memcpy(buffer, start, line_len);
    buffer[line_len] = '\0';
    rv = parse_line(manifest, buffer, name, line, error, error_cap);
  }
  if (rv != 0) {
    http_manifest_del(manifest);
    return rv;
  }
  *out = manifest;
  return 0;
}

int http_manifest_load(const char *path, http_manifest **out, char *error, size_t error_cap) {
  if (path == NULL || out == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (error != NULL && error_cap > 0) snprintf(error, error_cap, "%s: %s", path, strerror(errno));
    return HTTP_ERR_IO;
  }
  size_t cap = HTTP_MANIFEST_MAX_FILE + 1, len = 0;
  char *text = malloc(cap);
  if (text == NULL) {
    close(fd);
    return HTTP_ERR_NOMEM;
  }
  for (;;) {
    ssize_t n = read(fd, text + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (error != NULL && error_cap > 0)
        snprintf(error, error_cap, "%s: %s", path, strerror(errno));
      free(text);
      close(fd);
      return HTTP_ERR_IO;
    }
    if (n == 0 || (len += (size_t)n) == cap) break;
  }
  close(fd);
  int rv = http_manifest_parse(path, text, len, out, error, error_cap);
  free(text);
  return rv;
}

size_t http_manifest_lookup(const http_manifest *manifest, const char *page, size_t page_len,
                            const http_manifest_entry **entries) {
  *entries = NULL;
  if (manifest == NULL || page == NULL) return 0;
  const manifest_page *found = find_page(manifest, page, page_len);
  if (found == NULL) return 0;
  *entries = found->entries;
  return found->count;
}

size_t http_manifest_pages(const http_manifest *manifest) {
  return manifest == NULL ? 0 : manifest->count;
}

/* The Link preload "as" attributes for a path, by extension ("" when none fits). */
static const char *preload_attributes(const char *path) {
  size_t len = strcspn(path, "?");
  const char *dot = NULL;
  for (size_t i = 0; i < len; i++) {
    if (path[i] == '.') dot = path + i;
    if (path[i] == '/') dot = NULL;
  }
  if (dot == NULL) return "";
  size_t extension_len = len - (size_t)(dot + 1 - path);
  static const struct {
    const char *extension;
    const char *attributes;
  } table[] = {{"css", "; as=style"},
               {"js", "; as=script"},
               {"mjs", "; as=script"},
               {"png", "; as=image"},
               {"jpg", "; as=image"},
               {"jpeg", "; as=image"},
               {"gif", "; as=image"},
               {"svg", "; as=image"},
               {"webp", "; as=image"},
               {"ico", "; as=image"},
               {"json", "; as=fetch; crossorigin"},
               {"woff", "; as=font; crossorigin"},
               {"woff2", "; as=font; crossorigin"}};
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
    if (strlen(table[i].extension) == extension_len &&
        strncasecmp(dot + 1, table[i].extension, extension_len) == 0)
      return table[i].attributes;
  return "";
}

/* Joins one formatted item per entry with ", ". link selects the Link form. */
static int format_list(const http_manifest_entry *entries, size_t count, int link, char **out) {
  size_t total = 1;
  for (size_t i = 0; i < count; i++)
    total +=
        strlen(entries[i].path) + 2 + (link ? 16 + strlen(preload_attributes(entries[i].path)) : 0);
  char *text = malloc(total);
  if (text == NULL) return HTTP_ERR_NOMEM;
  size_t pos = 0;
  for (size_t i = 0; i < count; i++) {
    int n = link ? snprintf(text + pos, total - pos, "%s<%s>; rel=preload%s", i > 0 ? ", " : "",
                            entries[i].path, preload_attributes(entries[i].path))
                 : snprintf(text + pos, total - pos, "%s%s", i > 0 ? ", " : "", entries[i].path);
    if (n < 0 || (size_t)n >= total - pos) {
      free(text);
      return HTTP_ERR_INVALID_ARGUMENT; /* cannot happen: total counts every byte */
    }
    pos += (size_t)n;
  }
  text[pos] = '\0';
  *out = text;
  return 0;
}

int http_manifest_format_subresources(const http_manifest_entry *entries, size_t count,
                                      char **out) {
  return format_list(entries, count, 0, out);
}

int http_manifest_format_link(const http_manifest_entry *entries, size_t count, char **out) {
  return format_list(entries, count, 1, out);
}

int http_manifest_add_hints(const http_manifest_entry *entries, size_t count,
                            http_response *response) {
  if (count == 0) return 0;
  char *subresources = NULL, *link = NULL;
  int rv = http_manifest_format_subresources(entries, count, &subresources);
  if (rv == 0) rv = http_manifest_format_link(entries, count, &link);
  if (rv == 0) rv = http_headers_add_str(&response->headers, "x-subresources", subresources);
  if (rv == 0) rv = http_headers_add_str(&response->headers, "link", link);
  free(subresources);
  free(link);
  return rv;
}
