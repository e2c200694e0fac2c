/* fuzz_manifest.c — harness `manifest`: speedyd's push manifest (--push-manifest,
 * src/http/http_manifest.c) fed arbitrary bytes as the file.
 *
 * Input: the bytes of a manifest file.
 *
 * Checked: a refused file leaves a NUL-terminated "name:line: message"; a parsed one has at
 * most HTTP_MANIFEST_MAX_PAGES pages, each page found again by http_manifest_lookup with
 * at most HTTP_MANIFEST_MAX_PER_PAGE resources, every path a same-origin path ('/' then
 * visible ASCII, not "//", no ".." segment) and every urgency 0-7; the hint headers built
 * from each page's list (X-Subresources, Link) are accepted as header values (no CR, LF or
 * NUL). When the file holds no CR, the same file with CRLF line ends parses to the same
 * manifest (or fails the same way).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "http_err.h"
#include "http_manifest.h"
#include "http_response.h"

static void check_path(const char *path) {
  size_t n = strlen(path);
  if (n == 0 || path[0] != '/' || (n > 1 && path[1] == '/'))
    fuzz_fail("manifest path \"%.80s\" is not same-origin", path);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)path[i];
    if (c < 0x21 || c > 0x7e) fuzz_fail("manifest path \"%.80s\" has byte %#x", path, c);
  }
  for (const char *s = path; (s = strstr(s, "/..")) != NULL; s += 3)
    if (s[3] == '/' || s[3] == '\0' || s[3] == '?')
      fuzz_fail("manifest path \"%.80s\" has a '..' segment", path);
}

/* A summary of the manifest (pages, resources, urgencies), for comparing two parses.
 * Pages are listed by probing each resource's own page path; the hash covers everything
 * lookup returns for the page paths in the file. */
static uint64_t check_manifest(const http_manifest *m, const char *text, size_t len) {
  size_t pages = http_manifest_pages(m);
  if (pages > HTTP_MANIFEST_MAX_PAGES) fuzz_fail("%zu pages", pages);
  uint64_t hash = FUZZ_HASH_INIT;
  size_t found_pages = 0;
  /* Every first field of a line is a page candidate: look each up. */
  size_t pos = 0;
  while (pos < len) {
    const char *line = text + pos;
    const char *newline = memchr(line, '\n', len - pos);
    size_t line_len = newline != NULL ? (size_t)(newline - line) : len - pos;
    pos += line_len + (newline != NULL);
    size_t start = 0;
    while (start < line_len && (line[start] == ' ' || line[start] == '\t')) start++;
    size_t end = start;
    while (end < line_len && line[end] != ' ' && line[end] != '\t' && line[end] != '\r') end++;
    if (end == start) continue;
    const http_manifest_entry *entries;
    size_t count = http_manifest_lookup(m, line + start, end - start, &entries);
    if (count == 0) continue;
    found_pages++;
    if (count > HTTP_MANIFEST_MAX_PER_PAGE) fuzz_fail("%zu resources for a page", count);
    char page[HTTP_MANIFEST_MAX_LINE + 1];
    memcpy(page, line + start, end - start);
    page[end - start] = '\0';
    check_path(page);
    hash = fuzz_hash(hash, page, end - start + 1);
    for (size_t i = 0; i < count; i++) {
      check_path(entries[i].path);
      if (entries[i].urgency < 0 || entries[i].urgency > 7)
        fuzz_fail("urgency %d", entries[i].urgency);
      if (strcmp(entries[i].path, page) == 0) fuzz_fail("page %s lists itself", page);
      for (size_t j = 0; j < i; j++)
        if (strcmp(entries[i].path, entries[j].path) == 0)
          fuzz_fail("page %s lists %s twice", page, entries[i].path);
      hash = fuzz_hash(hash, entries[i].path, strlen(entries[i].path) + 1);
      hash = fuzz_hash(hash, &entries[i].urgency, sizeof(entries[i].urgency));
    }
    http_response response;
    http_response_init(&response);
    if (http_manifest_add_hints(entries, count, &response) != 0)
      fuzz_fail("hint headers for page %s refused", page);
    const char *link = http_headers_get(&response.headers, "link");
    const char *list = http_headers_get(&response.headers, "x-subresources");
    if (link == NULL || list == NULL || strpbrk(link, "\r\n") || strpbrk(list, "\r\n"))
      fuzz_fail("hint headers for page %s missing or broken", page);
    http_response_free(&response);
  }
  if (found_pages < pages && len > 0) {
    /* Each page was added by a line whose first field is that page: all are found (a
     * page found from several lines is counted once per line, so only "fewer" is wrong). */
    fuzz_fail("%zu pages in the manifest, %zu found by lookup", pages, found_pages);
  }
  return hash;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char error[256];
  memset(error, 0x55, sizeof(error));
  http_manifest *m = NULL;
  int rv = http_manifest_parse("fuzz.manifest", text, size, &m, error, sizeof(error));
  uint64_t hash = 0;
  if (rv != 0) {
    if (rv != HTTP_ERR_SYNTAX && rv != HTTP_ERR_LIMIT)
      fuzz_fail("http_manifest_parse returned %d", rv);
    if (memchr(error, '\0', sizeof(error)) == NULL || strncmp(error, "fuzz.manifest:", 14) != 0)
      fuzz_fail("error message not \"name:line: ...\": %.80s", error);
  } else {
    hash = check_manifest(m, text, size);
    http_manifest_del(m);
  }

  /* The same file with CRLF line ends. */
  if (memchr(data, '\r', size) != NULL) return 0;
  size_t lines = 0;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  char *crlf = malloc(size + lines + 1);
  if (crlf == NULL) fuzz_fail("out of memory");
  size_t n = 0;
  for (size_t i = 0; i < size; i++) {
    if (data[i] == '\n') crlf[n++] = '\r';
    crlf[n++] = (char)data[i];
  }
  http_manifest *m2 = NULL;
  char error2[256];
  int rv2 = http_manifest_parse("fuzz.manifest", crlf, n, &m2, error2, sizeof(error2));
  if (rv2 != rv || (rv != 0 && strcmp(error, error2) != 0))
    fuzz_fail("LF and CRLF files differ: %d \"%s\" vs %d \"%s\"", rv, rv ? error : "", rv2,
              rv2 ? error2 : "");
  if (rv2 == 0) {
    uint64_t hash2 = check_manifest(m2, crlf, n);
    if (hash2 != hash) fuzz_fail("LF and CRLF files parse to different manifests");
    http_manifest_del(m2);
  }
  free(crlf);
  return 0;
}
