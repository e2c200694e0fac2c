/* http_docroot.h — the docroot wall: request paths decoded and files opened beneath an
 * open directory handle, never outside it.
 *
 * Two steps:
 *   1. http_docroot_decode_path turns the raw request path into a relative path with no
 *      way out: percent-decoded; %00 and NUL refused; an encoded '/' (%2F) refused (it
 *      would make a segment that is not one); "." and ".." segments refused; empty
 *      segments ("//", which would make the rest absolute) refused; a path that does not
 *      start with '/' refused (all 400). A segment starting with '.' (a dotfile or dot
 *      directory) is 404: hidden, not forbidden.
 *   2. http_docroot_open opens it beneath the docroot handle: openat2 with RESOLVE_BENEATH
 *      and RESOLVE_NO_MAGICLINKS (and RESOLVE_NO_SYMLINKS under HTTP_SYMLINKS_NONE), or,
 *      where openat2 is missing (ENOSYS), one component at a time with O_NOFOLLOW,
 *      resolving symlinks ourselves under HTTP_SYMLINKS_INSIDE. Never realpath then open.
 *      The open uses O_NONBLOCK, so a FIFO cannot block it; then fstat: only regular files
 *      and directories are returned, anything else (FIFO, device, socket) is 403.
 */
#ifndef SPEEDY_HTTP_DOCROOT_H
#define SPEEDY_HTTP_DOCROOT_H

#include <stddef.h>
#include <sys/stat.h>

typedef enum http_symlink_policy {
  HTTP_SYMLINKS_NONE = 0,   /* no symlink is followed (default) */
  HTTP_SYMLINKS_INSIDE = 1, /* symlinks are followed while they stay beneath the docroot */
  HTTP_SYMLINKS_ANY = 2     /* symlinks are followed anywhere (explicitly allowed) */
} http_symlink_policy;

typedef struct http_docroot {
  int dir_fd; /* owned; O_DIRECTORY */
  http_symlink_policy symlinks;
  int use_openat2; /* 1 when the kernel has openat2 (probed at open) */
} http_docroot;

/* Longest relative path we resolve (bytes, without the NUL). */
#define HTTP_DOCROOT_MAX_PATH 4095

/* Opens directory path as the docroot. Returns 0, or HTTP_ERR_IO with errno set. */
int http_docroot_open(http_docroot *docroot, const char *path, http_symlink_policy symlinks);
/* Uses dir_fd (taking ownership) as the docroot. */
int http_docroot_from_fd(http_docroot *docroot, int dir_fd, http_symlink_policy symlinks);
void http_docroot_close(http_docroot *docroot);
/* Tests only: 0 forces the component-at-a-time fallback even when openat2 exists. */
void http_docroot_set_openat2(http_docroot *docroot, int use);

/* Decodes raw[0..raw_len) (the path without its query) into out (a relative path with no
 * leading '/', "" for the root, NUL-terminated). *trailing_slash is set to 1 when the
 * raw path ended with '/'. Returns 0, HTTP_ERR_BAD_REQUEST, HTTP_ERR_NOT_FOUND (a dot
 * segment) or HTTP_ERR_URI_TOO_LONG (longer than cap - 1). */
int http_docroot_decode_path(const char *raw, size_t raw_len, char *out, size_t cap,
                             int *trailing_slash);

/* Opens relative path rel (from http_docroot_decode_path) beneath the docroot. On
 * success *fd is a regular file or a directory (O_RDONLY | O_NONBLOCK | O_CLOEXEC; the
 * caller closes it) and *st its fstat. Returns 0, HTTP_ERR_NOT_FOUND, HTTP_ERR_FORBIDDEN
 * (outside the docroot, a refused symlink, not a regular file or directory, no
 * permission), HTTP_ERR_URI_TOO_LONG or HTTP_ERR_IO. */
int http_docroot_open_file(const http_docroot *docroot, const char *rel, int *fd, struct stat *st);

#endif
