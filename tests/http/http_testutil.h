/* http_testutil.h — support for the speedy_http tests: temporary docroots (created under
 * a mkdtemp directory, removed afterwards) and one-call request/response helpers.
 */
#ifndef SPEEDY_HTTP_TESTUTIL_H
#define SPEEDY_HTTP_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "http_docroot.h"
#include "http_request.h"
#include "http_response.h"
#include "http_static.h"

typedef struct temp_root {
  char base[256];    /* the mkdtemp directory */
  char root[300];    /* base/www: the docroot */
  char outside[300]; /* base/outside: a sibling the wall must keep out */
  http_docroot docroot;
} temp_root;

/* Creates base, base/www and base/outside (with outside/secret.txt), and opens the
 * docroot with policy. Fails the test on error. */
void temp_root_make(temp_root *t, http_symlink_policy policy);
/* Closes the docroot and removes base recursively (symlinks are removed, not followed). */
void temp_root_remove(temp_root *t);
/* Writes len bytes to root/rel (parents must exist). */
void temp_root_write(temp_root *t, const char *rel, const void *data, size_t len);
void temp_root_write_str(temp_root *t, const char *rel, const char *text);
void temp_root_mkdir(temp_root *t, const char *rel);
/* Creates root/rel as a symlink to target (target as given: relative or absolute). */
void temp_root_symlink(temp_root *t, const char *target, const char *rel);
/* Sets root/rel's modification time (seconds since the epoch). */
void temp_root_set_mtime(temp_root *t, const char *rel, int64_t seconds);
/* root/rel as an absolute path in a static buffer (valid until the next call). */
const char *temp_root_path(temp_root *t, const char *rel);

/* A request: method, path, then header name/value pairs ending with NULL. */
void test_request(http_request *request, const char *method, const char *path, ...);
/* Serves method+path (+ header pairs, NULL-terminated) with options into response. */
void test_serve(const http_static_options *options, http_response *response, const char *method,
                const char *path, ...);
/* Reads the whole body (up to cap bytes); returns its length, or the negative error the
 * body gave. A NULL body reads as 0 bytes. */
int64_t test_read_body(http_response *response, uint8_t *buf, size_t cap);

#endif
