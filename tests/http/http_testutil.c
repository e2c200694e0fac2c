/* http_testutil.c — temporary docroots and request helpers for the speedy_http tests. */
#define _GNU_SOURCE
#include "http_testutil.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

void temp_root_make(temp_root *t, http_symlink_policy policy) {
  memset(t, 0, sizeof(*t));
  const char *tmp = getenv("TMPDIR");
  snprintf(t->base, sizeof(t->base), "%s/speedy-http-XXXXXX", tmp != NULL ? tmp : "/tmp");
  cr_assert_not_null(mkdtemp(t->base), "mkdtemp failed");
  snprintf(t->root, sizeof(t->root), "%s/www", t->base);
  snprintf(t->outside, sizeof(t->outside), "%s/outside", t->base);
  cr_assert_eq(mkdir(t->root, 0755), 0);
  cr_assert_eq(mkdir(t->outside, 0755), 0);
  char secret[400];
  snprintf(secret, sizeof(secret), "%s/secret.txt", t->outside);
  FILE *f = fopen(secret, "w");
  cr_assert_not_null(f);
  fputs("top secret\n", f);
  fclose(f);
  cr_assert_eq(http_docroot_open(&t->docroot, t->root, policy), 0, "docroot open failed");
}

void temp_root_remove(temp_root *t) {
  if (t->docroot.dir_fd >= 0) http_docroot_close(&t->docroot);
  if (t->base[0] != '\0') nftw(t->base, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  t->base[0] = '\0';
}

const char *temp_root_path(temp_root *t, const char *rel) {
  static char path[1024];
  snprintf(path, sizeof(path), "%s/%s", t->root, rel);
  return path;
}

void temp_root_write(temp_root *t, const char *rel, const void *data, size_t len) {
  int fd = open(temp_root_path(t, rel), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  cr_assert_geq(fd, 0, "cannot create %s", rel);
  cr_assert_eq(write(fd, data, len), (ssize_t)len);
  close(fd);
}

void temp_root_write_str(temp_root *t, const char *rel, const char *text) {
  temp_root_write(t, rel, text, strlen(text));
}

void temp_root_mkdir(temp_root *t, const char *rel) {
  cr_assert_eq(mkdir(temp_root_path(t, rel), 0755), 0, "mkdir %s", rel);
}

void temp_root_symlink(temp_root *t, const char *target, const char *rel) {
  cr_assert_eq(symlink(target, temp_root_path(t, rel)), 0, "symlink %s", rel);
}

void temp_root_set_mtime(temp_root *t, const char *rel, int64_t seconds) {
  struct timespec times[2] = {{(time_t)seconds, 0}, {(time_t)seconds, 0}};
  cr_assert_eq(utimensat(AT_FDCWD, temp_root_path(t, rel), times, 0), 0);
}

static void request_from_args(http_request *request, const char *method, const char *path,
                              va_list args) {
  http_request_init(request, HTTP_PROTO_HTTP11, 0, 0);
  cr_assert_eq(http_request_set_method(request, method, strlen(method)), 0);
  cr_assert_eq(http_request_set_path(request, path, strlen(path)), 0);
  for (;;) {
    const char *name = va_arg(args, const char *);
    if (name == NULL) break;
    const char *value = va_arg(args, const char *);
    cr_assert_eq(http_request_add_header(request, name, strlen(name), value, strlen(value)), 0);
  }
}

void test_request(http_request *request, const char *method, const char *path, ...) {
  va_list args;
  va_start(args, path);
  request_from_args(request, method, path, args);
  va_end(args);
}

void test_serve(const http_static_options *options, http_response *response, const char *method,
                const char *path, ...) {
  http_request request;
  va_list args;
  va_start(args, path);
  request_from_args(&request, method, path, args);
  va_end(args);
  http_response_init(response);
  cr_assert_eq(http_static_serve(options, &request, response), 0);
  http_request_free(&request);
}

int64_t test_read_body(http_response *response, uint8_t *buf, size_t cap) {
  if (response->body == NULL) return 0;
  size_t total = 0;
  for (int guard = 0; guard < 1000000; guard++) {
    int eof = 0;
    int64_t n = http_body_read(response->body, buf + total, cap - total, &eof);
    if (n < 0) return n;
    total += (size_t)n;
    if (eof) return (int64_t)total;
    if (total == cap) return (int64_t)total;
  }
  return -1000;
}
