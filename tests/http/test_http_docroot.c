/* test_http_docroot.c — the docroot wall: every way out is refused, with openat2 and with
 * the component-at-a-time fallback (suites docroot_wall and docroot_wall_fallback run
 * the same checks).
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "http_err.h"
#include "http_testutil.h"

static temp_root T;
static int use_openat2 = 1;

static void setup(void) { temp_root_make(&T, HTTP_SYMLINKS_NONE); }
static void teardown(void) { temp_root_remove(&T); }

static void use_policy(http_symlink_policy policy) {
  http_docroot_close(&T.docroot);
  cr_assert_eq(http_docroot_open(&T.docroot, T.root, policy), 0);
  if (!use_openat2) http_docroot_set_openat2(&T.docroot, 0);
}

static int serve_status(const char *path, char *body, size_t cap) {
  http_static_options options = {.docroot = &T.docroot};
  if (!use_openat2) http_docroot_set_openat2(&T.docroot, 0);
  http_response response;
  test_serve(&options, &response, "GET", path, NULL);
  int status = response.status;
  if (body != NULL) {
    int64_t n = test_read_body(&response, (uint8_t *)body, cap - 1);
    body[n > 0 ? n : 0] = '\0';
  }
  http_response_free(&response);
  return status;
}

static void expect(const char *path, int status) {
  int got = serve_status(path, NULL, 0);
  cr_expect_eq(got, status, "GET %s: expected %d, got %d (%s)", path, status, got,
               use_openat2 ? "openat2" : "fallback");
}

/* Each check runs twice: once through openat2, once through the fallback walk. */
#define WALL(name)                                                                                 \
  static void name(void);                                                                          \
  Test(docroot_wall, name, .init = setup, .fini = teardown, .timeout = 10) {                       \
    use_openat2 = 1;                                                                               \
    name();                                                                                        \
  }                                                                                                \
  Test(docroot_wall_fallback, name, .init = setup, .fini = teardown, .timeout = 10) {              \
    use_openat2 = 0;                                                                               \
    name();                                                                                        \
  }                                                                                                \
  static void name(void)

WALL(dotdot_segment_is_400) {
  temp_root_write_str(&T, "index.html", "home");
  expect("/../outside/secret.txt", 400);
  expect("/..", 400);
}

WALL(dotdot_after_a_directory_is_400) {
  temp_root_mkdir(&T, "a");
  expect("/a/../../outside/secret.txt", 400);
  expect("/a/..", 400);
}

WALL(percent_encoded_dotdot_is_400) {
  expect("/%2e%2e/outside/secret.txt", 400);
  expect("/%2E%2E/outside/secret.txt", 400);
  expect("/.%2e/outside/secret.txt", 400);
}

WALL(percent_encoded_slash_is_400) {
  temp_root_mkdir(&T, "a");
  temp_root_write_str(&T, "a/b", "b");
  expect("/..%2foutside%2fsecret.txt", 400);
  expect("/a%2Fb", 400);
  expect("/a/b", 200);
}

WALL(nul_byte_is_400) {
  temp_root_write_str(&T, "a.txt", "a");
  char out[64];
  cr_expect_eq(http_docroot_decode_path("/a.txt\0.png", 11, out, sizeof(out), NULL),
               HTTP_ERR_BAD_REQUEST);
  http_request request;
  http_request_init(&request, HTTP_PROTO_HTTP11, 0, 0);
  cr_expect_eq(http_request_set_path(&request, "/a.txt\0.png", 11), HTTP_ERR_BAD_REQUEST);
  http_request_free(&request);
}

WALL(percent_00_is_400) {
  temp_root_write_str(&T, "a.txt", "a");
  expect("/a.txt%00.png", 400);
  expect("/a.txt%00", 400);
}

WALL(absolute_paths_are_refused) {
  expect("//etc/passwd", 400);
  expect("etc/passwd", 400);
  expect("http://example.com/etc/passwd", 400);
  int fd;
  struct stat st;
  cr_expect_eq(http_docroot_open_file(&T.docroot, "/etc/passwd", &fd, &st), HTTP_ERR_FORBIDDEN);
}

WALL(symlink_out_of_docroot_is_refused) {
  char target[400];
  snprintf(target, sizeof(target), "%s/secret.txt", T.outside);
  temp_root_symlink(&T, target, "absolute.txt");
  temp_root_symlink(&T, "../outside/secret.txt", "relative.txt");
  temp_root_symlink(&T, "../outside", "outdir");
  expect("/absolute.txt", 403);
  expect("/relative.txt", 403);
  expect("/outdir/secret.txt", 403);
  use_policy(HTTP_SYMLINKS_INSIDE); /* following links inside does not open the wall */
  expect("/absolute.txt", 403);
  expect("/relative.txt", 403);
  expect("/outdir/secret.txt", 403);
}

WALL(symlink_out_of_docroot_is_followed_when_allowed) {
  temp_root_symlink(&T, "../outside/secret.txt", "relative.txt");
  temp_root_symlink(&T, "../outside", "outdir");
  use_policy(HTTP_SYMLINKS_ANY);
  char body[64];
  cr_expect_eq(serve_status("/relative.txt", body, sizeof(body)), 200);
  cr_expect_str_eq(body, "top secret\n");
  expect("/outdir/secret.txt", 200);
}

WALL(symlink_inside_is_refused_by_default) {
  temp_root_write_str(&T, "real.txt", "real");
  temp_root_mkdir(&T, "sub");
  temp_root_write_str(&T, "sub/file.txt", "file");
  temp_root_symlink(&T, "real.txt", "alias.txt");
  temp_root_symlink(&T, "sub", "subalias");
  expect("/alias.txt", 403);
  expect("/subalias/file.txt", 403);
  expect("/real.txt", 200);
}

WALL(symlink_inside_is_followed_when_allowed) {
  temp_root_write_str(&T, "real.txt", "real");
  temp_root_mkdir(&T, "sub");
  temp_root_write_str(&T, "sub/file.txt", "file");
  temp_root_symlink(&T, "real.txt", "alias.txt");
  temp_root_symlink(&T, "sub", "subalias");
  temp_root_symlink(&T, "../real.txt", "sub/up.txt");
  use_policy(HTTP_SYMLINKS_INSIDE);
  char body[64];
  cr_expect_eq(serve_status("/alias.txt", body, sizeof(body)), 200);
  cr_expect_str_eq(body, "real");
  expect("/subalias/file.txt", 200);
  expect("/sub/up.txt", 200);
}

WALL(symlink_loop_is_refused) {
  temp_root_symlink(&T, "loop2", "loop1");
  temp_root_symlink(&T, "loop1", "loop2");
  use_policy(HTTP_SYMLINKS_INSIDE);
  expect("/loop1", 403);
}

WALL(dotfiles_are_hidden) {
  temp_root_write_str(&T, ".env", "SECRET=1");
  temp_root_mkdir(&T, ".git");
  temp_root_write_str(&T, ".git/config", "[core]");
  expect("/.env", 404);
  expect("/.git/config", 404);
  expect("/%2eenv", 404);
}

WALL(fifo_is_403_without_blocking) {
  cr_assert_eq(mkfifo(temp_root_path(&T, "pipe"), 0644), 0);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  expect("/pipe", 403);
  clock_gettime(CLOCK_MONOTONIC, &end);
  cr_expect_lt(end.tv_sec - start.tv_sec, 2, "the FIFO open blocked");
}

WALL(device_node_through_symlink_is_refused) {
  temp_root_symlink(&T, "/dev/null", "null");
  expect("/null", 403);
  use_policy(HTTP_SYMLINKS_ANY); /* even where symlinks may lead anywhere */
  expect("/null", 403);
}

WALL(missing_file_is_404) {
  expect("/nothing.html", 404);
  expect("/no/such/dir.html", 404);
}

Test(docroot_path, decoding_keeps_ordinary_escapes) {
  char out[64];
  int slash = 0;
  cr_assert_eq(http_docroot_decode_path("/a%20b/c+d.txt", 14, out, sizeof(out), &slash), 0);
  cr_expect_str_eq(out, "a b/c+d.txt");
  cr_expect_eq(slash, 0);
  cr_assert_eq(http_docroot_decode_path("/dir/", 5, out, sizeof(out), &slash), 0);
  cr_expect_str_eq(out, "dir");
  cr_expect_eq(slash, 1);
  cr_assert_eq(http_docroot_decode_path("/", 1, out, sizeof(out), &slash), 0);
  cr_expect_str_eq(out, "");
  cr_expect_eq(slash, 1);
}

Test(docroot_path, bad_percent_escapes_are_400) {
  char out[64];
  cr_expect_eq(http_docroot_decode_path("/a%2", 4, out, sizeof(out), NULL), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_docroot_decode_path("/a%zz", 5, out, sizeof(out), NULL), HTTP_ERR_BAD_REQUEST);
  cr_expect_eq(http_docroot_decode_path("/./a", 4, out, sizeof(out), NULL), HTTP_ERR_BAD_REQUEST);
}

Test(docroot_path, overlong_path_is_414) {
  char raw[5000];
  raw[0] = '/';
  memset(raw + 1, 'a', sizeof(raw) - 1);
  char out[HTTP_DOCROOT_MAX_PATH + 1];
  cr_expect_eq(http_docroot_decode_path(raw, sizeof(raw), out, sizeof(out), NULL),
               HTTP_ERR_URI_TOO_LONG);
}
