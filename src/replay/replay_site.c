/* replay_site.c — replay_write_site: a plan's bodies as plain files, so that an
 * independent server (nginx) can serve the bytes speedyd --replay sends.
 *
 * Layout (docs/lab-replay.md): DIR/<host>/<path> for a path that is safe as a file name
 * (DIR/<host>/<path>index.html when it ends in '/'); every other request target — a query
 * string, '%' escapes, characters a server or shell would treat specially, dot segments,
 * a name that is both a file and a directory — goes to DIR/<host>/_replay/<id>. The
 * file DIR/replay-site.map lists, in nginx `map` syntax keyed by "$host$request_uri",
 * every target whose file is not the target itself. A repeated URL is written once, from
 * its first resource, as replay_serve answers it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

#define MAPPED_DIR "_replay"
#define MAP_FILE "replay-site.map"
#define CHUNK 65536
#define MAX_SEGMENT 200

typedef struct site_entry {
  const replay_resource *resource;
  char *file; /* "<host>/<name>" relative to DIR; NULL: not written (a repeat) */
  int mapped; /* listed in the map: 1 not a plain name, 2 a plain name in conflict */
} site_entry;

static int site_fail(char *err, size_t err_len, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int site_fail(char *err, size_t err_len, const char *format, ...) {
  if (err != NULL && err_len > 0) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(err, err_len, format, ap);
    va_end(ap);
  }
  return -1;
}

/* Characters that mean nothing special to a file system, a shell glob, nginx's config
 * syntax or URL decoding: letters, digits and "-._~!&'()*+,;=:@/". No '%' (a server
 * decodes it), no '$' (nginx variables), no '?' or '#'. */
static int safe_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("-._~!&'()*+,;=:@/", c) != NULL);
}

/* The plain file name for path (without the leading '/'), or NULL when it must be
 * mapped. Allocated; the caller frees. */
static char *plain_name(const char *path) {
  size_t len = strlen(path);
  if (len < 1 || path[0] != '/' || len > 1024) return NULL;
  const char *p = path + 1;
  /* Segments: non-empty, not starting with '.' (no "..", no hidden files, which servers
   * refuse), bounded, and the first is not our own directory. */
  const char *segment = p;
  for (const char *c = p;; c++) {
    if (*c == '/' || *c == '\0') {
      size_t n = (size_t)(c - segment);
      int last = *c == '\0';
      if (n == 0 && !(last && c == path + len)) return NULL; /* "//" */
      if (n > 0 && (segment[0] == '.' || n > MAX_SEGMENT)) return NULL;
      if (segment == p && n == strlen(MAPPED_DIR) && memcmp(segment, MAPPED_DIR, n) == 0)
        return NULL;
      if (last) break;
      segment = c + 1;
    } else if (!safe_char((unsigned char)*c)) {
      return NULL;
    }
  }
  int directory = path[len - 1] == '/';
  size_t out_len = len - 1 + (directory ? strlen("index.html") : 0);
  char *out = malloc(out_len + 1);
  if (out == NULL) return NULL;
  memcpy(out, p, len - 1);
  if (directory) memcpy(out + len - 1, "index.html", strlen("index.html"));
  out[out_len] = '\0';
  return out;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Marks as mapped every plain name that another entry also uses, or that is a directory
 * of another's name ("a" and "a/b"). names is sorted in place. */
static void mark_conflicts(site_entry *entries, size_t n, char **names, size_t n_names) {
  qsort(names, n_names, sizeof(*names), compare_names);
  for (size_t i = 0; i < n; i++) {
    if (entries[i].file == NULL || entries[i].mapped) continue;
    const char *name = entries[i].file;
    size_t len = strlen(name);
    char *key = malloc(len + 2);
    if (key == NULL) {
      entries[i].mapped = 2; /* out of memory: the map is always correct */
      continue;
    }
    memcpy(key, name, len);
    key[len] = '/';
    key[len + 1] = '\0';
    /* Lower bound of name, then count equal names and look at the first "name/...". */
    size_t lo = 0, hi = n_names;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(names[mid], name) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    size_t equal = 0;
    while (lo + equal < n_names && strcmp(names[lo + equal], name) == 0) equal++;
    lo = 0, hi = n_names;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (strcmp(names[mid], key) < 0)
        lo = mid + 1;
      else
        hi = mid;
    }
    int is_directory = lo < n_names && strncmp(names[lo], key, len + 1) == 0;
    if (equal > 1 || is_directory) entries[i].mapped = 2;
    free(key);
  }
}

/* mkdir -p of every parent of path (relative to dir_fd). */
static int make_parents(int dir_fd, char *path) {
  for (char *slash = strchr(path, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
    *slash = '\0';
    int rv = mkdirat(dir_fd, path, 0755);
    int saved = errno;
    *slash = '/';
    if (rv != 0 && saved != EEXIST) {
      errno = saved;
      return -1;
    }
  }
  return 0;
}

static int write_body(int dir_fd, char *path, const replay_plan *plan, const replay_resource *r,
                      uint8_t *chunk) {
  if (make_parents(dir_fd, path) != 0) return -1;
  int fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  for (uint64_t offset = 0; offset < r->body_size;) {
    uint64_t left = r->body_size - offset;
    size_t n = left < CHUNK ? (size_t)left : CHUNK;
    replay_body_fill(replay_plan_seed(plan), r->id, offset, chunk, n);
    for (size_t done = 0; done < n;) {
      ssize_t w = write(fd, chunk + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        int saved = w < 0 ? errno : EIO;
        close(fd);
        errno = saved;
        return -1;
      }
      done += (size_t)w;
    }
    offset += n;
  }
  return close(fd);
}

/* One nginx-quoted string: backslash before '"' and '\'. */
static void write_quoted(FILE *f, const char *a, const char *b) {
  fputc('"', f);
  for (int part = 0; part < 2; part++)
    for (const char *c = part == 0 ? a : b; *c != '\0'; c++) {
      if (*c == '"' || *c == '\\') fputc('\\', f);
      fputc(*c, f);
    }
  fputc('"', f);
}

typedef struct target_key {
  uint32_t host;
  const char *path;
  size_t index;
} target_key;

static int compare_targets(const void *a, const void *b) {
  const target_key *x = a, *y = b;
  if (x->host != y->host) return x->host < y->host ? -1 : 1;
  int c = strcmp(x->path, y->path);
  if (c != 0) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Decides every entry's file ("<host>/<name>", relative to the site directory); a
 * repeated target keeps NULL. Returns 0 or -1 (out of memory). */
static int plan_files(const replay_plan *plan, site_entry *entries, size_t n) {
  char **names = calloc(n == 0 ? 1 : n, sizeof(*names));
  target_key *keys = calloc(n == 0 ? 1 : n, sizeof(*keys));
  int rv = -1;
  if (names == NULL || keys == NULL) goto done;
  for (size_t i = 0; i < n; i++)
    keys[i] = (target_key){entries[i].resource->host, entries[i].resource->path, i};
  qsort(keys, n, sizeof(*keys), compare_targets);
  size_t n_names = 0;
  for (size_t k = 0; k < n; k++) {
    /* A repeated target (any method): the first resource is the one served. */
    if (k > 0 && keys[k - 1].host == keys[k].host && strcmp(keys[k - 1].path, keys[k].path) == 0)
      continue;
    site_entry *e = &entries[keys[k].index];
    const char *host = replay_plan_host(plan, e->resource->host)->name;
    char *plain = plain_name(e->resource->path);
    if (plain == NULL) {
      e->mapped = 1;
      if (asprintf(&e->file, "%s/" MAPPED_DIR "/%u", host, e->resource->id) < 0) e->file = NULL;
    } else {
      if (asprintf(&e->file, "%s/%s", host, plain) < 0)
        e->file = NULL;
      else
        names[n_names++] = e->file;
      free(plain);
    }
    if (e->file == NULL) goto done;
  }
  mark_conflicts(entries, n, names, n_names);
  for (size_t i = 0; i < n; i++) {
    site_entry *e = &entries[i];
    if (e->file == NULL || e->mapped != 2) continue;
    free(e->file);
    const char *host = replay_plan_host(plan, e->resource->host)->name;
    if (asprintf(&e->file, "%s/" MAPPED_DIR "/%u", host, e->resource->id) < 0) {
      e->file = NULL;
      goto done;
    }
  }
  rv = 0;
done:
  free(names);
  free(keys);
  return rv;
}

static int write_map(const replay_plan *plan, int dir_fd, const site_entry *entries, size_t n) {
  int fd = openat(dir_fd, MAP_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "w");
  if (f == NULL) {
    close(fd);
    return -1;
  }
  fprintf(f, "# speedy replay site: \"$host$request_uri\" -> file under the site directory.\n"
             "# Targets not listed are at \"/$host$uri\". See docs/lab-replay.md.\n");
  for (size_t i = 0; i < n; i++) {
    const replay_resource *r = entries[i].resource;
    const char *host = replay_plan_host(plan, r->host)->name;
    /* Listed: mapped files, and directory targets whose file gained "index.html". */
    if (entries[i].file == NULL) continue;
    size_t path_len = strlen(r->path);
    if (!entries[i].mapped && r->path[path_len - 1] != '/') continue;
    write_quoted(f, host, r->path);
    fprintf(f, " \"/%s\";\n", entries[i].file);
  }
  int failed = ferror(f);
  if (fclose(f) != 0 || failed) return -1;
  return 0;
}

int replay_write_site(const replay_plan *plan, const char *dir, char *err, size_t err_len) {
  size_t n_hosts = replay_plan_host_count(plan);
  for (size_t i = 0; i < n_hosts; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(replay_plan_host(plan, i)->name, replay_plan_host(plan, j)->name) == 0)
        return site_fail(err, err_len,
                         "cannot write the site: hosts %zu and %zu share the name %s (ports %d "
                         "and %d); a site has one directory per name",
                         j, i, replay_plan_host(plan, i)->name, replay_plan_host(plan, j)->port,
                         replay_plan_host(plan, i)->port);
  if (mkdir(dir, 0755) != 0 && errno != EEXIST)
    return site_fail(err, err_len, "cannot create %s: %s", dir, strerror(errno));
  int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return site_fail(err, err_len, "cannot open %s: %s", dir, strerror(errno));
  size_t n = replay_plan_resource_count(plan);
  site_entry *entries = calloc(n == 0 ? 1 : n, sizeof(*entries));
  uint8_t *chunk = malloc(CHUNK);
  int rv = -1;
  if (entries == NULL || chunk == NULL) {
    site_fail(err, err_len, "cannot write the site: out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) entries[i].resource = replay_plan_resource(plan, i);
  if (plan_files(plan, entries, n) != 0) {
    site_fail(err, err_len, "cannot write the site: out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    if (entries[i].file == NULL) continue;
    if (write_body(dir_fd, entries[i].file, plan, entries[i].resource, chunk) != 0) {
      site_fail(err, err_len, "cannot write %s/%s: %s", dir, entries[i].file, strerror(errno));
      goto done;
    }
  }
  /* Hosts without resources still get their directory (a server's root must exist). */
  for (size_t i = 0; i < n_hosts; i++) {
    if (mkdirat(dir_fd, replay_plan_host(plan, i)->name, 0755) != 0 && errno != EEXIST) {
      site_fail(err, err_len, "cannot create %s/%s: %s", dir, replay_plan_host(plan, i)->name,
                strerror(errno));
      goto done;
    }
  }
  if (write_map(plan, dir_fd, entries, n) != 0) {
    site_fail(err, err_len, "cannot write %s/%s: %s", dir, MAP_FILE, strerror(errno));
    goto done;
  }
  rv = 0;
done:
  if (entries != NULL)
    for (size_t i = 0; i < n; i++) free(entries[i].file);
  free(entries);
  free(chunk);
  close(dir_fd);
  return rv;
}
