/* http_docroot.c — the docroot wall: request path decoding and opening beneath a
 * directory handle with openat2, or component by component where openat2 is missing.
 */
#define _GNU_SOURCE
#include "http_docroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "http_err.h"

/* At most this many symlinks per lookup (the kernel's own limit is 40). */
#define MAX_SYMLINKS 40
/* At most this many directories deep while walking component by component. */
#define MAX_DEPTH 128

static int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int http_docroot_decode_path(const char *raw, size_t raw_len, char *out, size_t cap,
                             int *trailing_slash) {
  if (raw == NULL || out == NULL || cap == 0) return HTTP_ERR_INVALID_ARGUMENT;
  if (trailing_slash != NULL) *trailing_slash = 0;
  out[0] = '\0';
  if (raw_len == 0 || raw[0] != '/') return HTTP_ERR_BAD_REQUEST; /* not origin-form */
  size_t len = 0;                                                 /* bytes in out */
  size_t segment_start = 0; /* where the current segment starts in out */
  int hidden = 0;
  size_t i = 1;
  for (;;) {
    /* One segment: raw[i..] up to the next raw '/' or the end. */
    segment_start = len;
    while (i < raw_len && raw[i] != '/') {
      char c = raw[i];
      if (c == '\0') return HTTP_ERR_BAD_REQUEST;
      if (c == '%') {
        if (raw_len - i < 3) return HTTP_ERR_BAD_REQUEST;
        int high = hex_value(raw[i + 1]), low = hex_value(raw[i + 2]);
        if (high < 0 || low < 0) return HTTP_ERR_BAD_REQUEST;
        c = (char)(high * 16 + low);
        /* %00 would cut the path short; %2F would hide a '/' from the segment checks. */
        if (c == '\0' || c == '/') return HTTP_ERR_BAD_REQUEST;
        i += 3;
      } else {
        i++;
      }
      if (len >= cap - 1) return HTTP_ERR_URI_TOO_LONG;
      out[len++] = c;
    }
    size_t segment_len = len - segment_start;
    const char *segment = out + segment_start;
    int at_end = i >= raw_len;
    if (segment_len == 0) {
      if (at_end) {
        /* "/" alone, or a trailing slash after the last segment */
        if (len > 0) len--; /* drop the '/' we wrote before this empty segment */
        if (trailing_slash != NULL) *trailing_slash = 1;
        break;
      }
      return HTTP_ERR_BAD_REQUEST; /* "//": an absolute path after the first '/' */
    }
    if ((segment_len == 1 && segment[0] == '.') ||
        (segment_len == 2 && segment[0] == '.' && segment[1] == '.'))
      return HTTP_ERR_BAD_REQUEST;
    if (segment[0] == '.') hidden = 1;
    if (at_end) break;
    i++; /* the raw '/' */
    if (len >= cap - 1) return HTTP_ERR_URI_TOO_LONG;
    out[len++] = '/';
  }
  out[len] = '\0';
  if (hidden) return HTTP_ERR_NOT_FOUND;
  return 0;
}

static int open_directory_checked(int dir_fd) {
  struct stat st;
  if (fstat(dir_fd, &st) != 0) return HTTP_ERR_IO;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return HTTP_ERR_IO;
  }
  return 0;
}

static long call_openat2(int dir_fd, const char *path, struct open_how *how) {
  return syscall(SYS_openat2, dir_fd, path, how, sizeof(*how));
}

int http_docroot_from_fd(http_docroot *docroot, int dir_fd, http_symlink_policy symlinks) {
  docroot->dir_fd = -1;
  if (dir_fd < 0 || symlinks < HTTP_SYMLINKS_NONE || symlinks > HTTP_SYMLINKS_ANY)
    return HTTP_ERR_INVALID_ARGUMENT;
  int rv = open_directory_checked(dir_fd);
  if (rv != 0) {
    int saved = errno;
    close(dir_fd);
    errno = saved;
    return rv;
  }
  docroot->dir_fd = dir_fd;
  docroot->symlinks = symlinks;
  /* Probe once: ENOSYS means an old kernel (or a sandbox that hides the call). */
  struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_BENEATH};
  long fd = call_openat2(dir_fd, ".", &how);
  if (fd >= 0) close((int)fd);
  docroot->use_openat2 = !(fd < 0 && errno == ENOSYS);
  return 0;
}

int http_docroot_open(http_docroot *docroot, const char *path, http_symlink_policy symlinks) {
  docroot->dir_fd = -1;
  if (path == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return HTTP_ERR_IO;
  return http_docroot_from_fd(docroot, fd, symlinks);
}

void http_docroot_close(http_docroot *docroot) {
  if (docroot->dir_fd >= 0) close(docroot->dir_fd);
  docroot->dir_fd = -1;
}

void http_docroot_set_openat2(http_docroot *docroot, int use) { docroot->use_openat2 = use != 0; }

static int errno_to_err(int error) {
  switch (error) {
  case ENOENT:
  case ENOTDIR:
    return HTTP_ERR_NOT_FOUND;
  case ELOOP: /* a symlink where none may be followed, or too many */
  case EXDEV: /* RESOLVE_BENEATH: the lookup would leave the docroot */
  case EACCES:
  case EPERM:
  case ENXIO: /* a socket or a device without its driver */
  case ENODEV:
  case ETXTBSY:
    return HTTP_ERR_FORBIDDEN;
  case ENAMETOOLONG:
    return HTTP_ERR_URI_TOO_LONG;
  case EMFILE: /* out of descriptors: busy now, not broken (503) */
  case ENFILE:
    return HTTP_ERR_UNAVAILABLE;
  default:
    return HTTP_ERR_IO;
  }
}

#define FILE_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

static int open_with_openat2(const http_docroot *docroot, const char *rel, int *fd) {
  struct open_how how = {.flags = FILE_FLAGS, .resolve = RESOLVE_NO_MAGICLINKS};
  /* Under HTTP_SYMLINKS_ANY the lexical path is already clean (no "..", not absolute),
   * so only a symlink can lead out, and that is what the option allows. */
  if (docroot->symlinks != HTTP_SYMLINKS_ANY) how.resolve |= RESOLVE_BENEATH;
  if (docroot->symlinks == HTTP_SYMLINKS_NONE) how.resolve |= RESOLVE_NO_SYMLINKS;
  long result;
  do {
    result = call_openat2(docroot->dir_fd, rel[0] != '\0' ? rel : ".", &how);
  } while (result < 0 && (errno == EINTR || errno == EAGAIN));
  if (result < 0) return errno_to_err(errno);
  *fd = (int)result;
  return 0;
}

/* The walk's state: the directories opened so far (stack[0] is the docroot, not ours)
 * and the path still to resolve. */
typedef struct walk {
  int stack[MAX_DEPTH + 1];
  int depth;
  char path[2 * (HTTP_DOCROOT_MAX_PATH + 1)];
  size_t position; /* next unresolved byte of path */
  int links;
} walk;

static void walk_release(walk *w) {
  while (w->depth > 0) close(w->stack[w->depth--]);
}

/* Replaces the component just read (a symlink) by its target: path becomes
 * target + "/" + the rest. */
static int walk_splice_link(walk *w, const char *name) {
  char target[HTTP_DOCROOT_MAX_PATH + 1];
  if (++w->links > MAX_SYMLINKS) return HTTP_ERR_FORBIDDEN;
  ssize_t n = readlinkat(w->stack[w->depth], name, target, sizeof(target));
  if (n < 0) return errno_to_err(errno);
  if ((size_t)n >= sizeof(target)) return HTTP_ERR_FORBIDDEN;
  if (n == 0 || target[0] == '/') return HTTP_ERR_FORBIDDEN; /* absolute: leaves the wall */
  size_t rest = strlen(w->path + w->position);
  size_t needed = (size_t)n + (rest > 0 ? 1 + rest : 0);
  if (needed >= sizeof(w->path)) return HTTP_ERR_URI_TOO_LONG;
  char joined[sizeof(w->path)];
  memcpy(joined, target, (size_t)n);
  if (rest > 0) {
    joined[n] = '/';
    memcpy(joined + n + 1, w->path + w->position, rest);
  }
  joined[needed] = '\0';
  memcpy(w->path, joined, needed + 1);
  w->position = 0;
  return 0;
}

/* Without openat2: one component at a time, each with O_NOFOLLOW, so no lookup ever
 * crosses a symlink the kernel resolved for us. */
static int open_by_components(const http_docroot *docroot, const char *rel, int *fd) {
  if (docroot->symlinks == HTTP_SYMLINKS_ANY) {
    int result;
    do {
      result = openat(docroot->dir_fd, rel[0] != '\0' ? rel : ".", FILE_FLAGS);
    } while (result < 0 && errno == EINTR);
    if (result < 0) return errno_to_err(errno);
    *fd = result;
    return 0;
  }
  walk walk_state; /* about 9 KiB of stack: fine for a lookup, and reentrant */
  walk *w = &walk_state;
  size_t rel_len = strlen(rel);
  if (rel_len > HTTP_DOCROOT_MAX_PATH) return HTTP_ERR_URI_TOO_LONG;
  memcpy(w->path, rel, rel_len + 1);
  w->position = 0;
  w->depth = 0;
  w->links = 0;
  w->stack[0] = docroot->dir_fd;
  for (;;) {
    char *name = w->path + w->position;
    size_t name_len = strcspn(name, "/");
    int last = name[name_len] == '\0';
    w->position += name_len + (last ? 0 : 1);
    if (!last) name[name_len] = '\0';
    if (name_len == 0 || strcmp(name, ".") == 0) {
      if (!last) continue;
      name = ".";
    } else if (strcmp(name, "..") == 0) {
      /* Only a symlink target can bring ".." here: it may not climb above the docroot. */
      if (w->depth == 0) {
        walk_release(w);
        return HTTP_ERR_FORBIDDEN;
      }
      close(w->stack[w->depth--]);
      if (!last) continue;
      name = ".";
    }
    int flags = last ? FILE_FLAGS | O_NOFOLLOW : O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    int next;
    do {
      next = openat(w->stack[w->depth], name, flags);
    } while (next < 0 && errno == EINTR);
    if (next < 0) {
      int error = errno;
      struct stat st;
      if ((error == ELOOP || error == ENOTDIR) &&
          fstatat(w->stack[w->depth], name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        int rv = docroot->symlinks == HTTP_SYMLINKS_INSIDE ? walk_splice_link(w, name)
                                                           : HTTP_ERR_FORBIDDEN;
        if (rv != 0) {
          walk_release(w);
          return rv;
        }
        continue;
      }
      walk_release(w);
      return errno_to_err(error);
    }
    if (last) {
      walk_release(w);
      *fd = next;
      return 0;
    }
    if (w->depth >= MAX_DEPTH) {
      close(next);
      walk_release(w);
      return HTTP_ERR_URI_TOO_LONG;
    }
    w->stack[++w->depth] = next;
  }
}

int http_docroot_open_file(const http_docroot *docroot, const char *rel, int *fd, struct stat *st) {
  if (docroot == NULL || docroot->dir_fd < 0 || rel == NULL || fd == NULL || st == NULL)
    return HTTP_ERR_INVALID_ARGUMENT;
  if (rel[0] == '/') return HTTP_ERR_FORBIDDEN;
  int opened = -1;
  int rv = HTTP_ERR_IO;
  if (docroot->use_openat2) {
    rv = open_with_openat2(docroot, rel, &opened);
    if (rv == HTTP_ERR_IO && errno == ENOSYS) rv = open_by_components(docroot, rel, &opened);
  } else {
    rv = open_by_components(docroot, rel, &opened);
  }
  if (rv != 0) return rv;
  if (fstat(opened, st) != 0) {
    close(opened);
    return HTTP_ERR_IO;
  }
  if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
    close(opened); /* FIFO, device, socket: never served */
    return HTTP_ERR_FORBIDDEN;
  }
  *fd = opened;
  return 0;
}
