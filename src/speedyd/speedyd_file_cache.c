/* speedyd_file_cache.c — --file-cache BYTES: a bounded in-memory copy of small hot files
 * and the answer http_static built for them, so a repeated GET costs one fstatat instead
 * of openat + fstat + pread + close.
 *
 * What is cached: a 200 answer of http_static_serve to a GET without Range or conditional
 * headers, whose body is a whole regular file of at most max_entry bytes, and that cannot
 * depend on Accept-Encoding (the type is not compressible, on-the-fly gzip is off, or the
 * client did not accept gzip — only those clients are answered from it). Anything else
 * goes to http_static every time, so 304s, 206s and gzip stay exactly as they were.
 * HTTP/1.x answers of SPEEDYD_SENDFILE_MIN bytes or more are left to http_static too:
 * sendfile sends them from the page cache without a copy, which beats copying ours.
 *
 * Freshness: the key is the raw request path; a hit is used only when fstatat of the
 * decoded path beneath the docroot still finds the same file: device, inode, size,
 * mtime and ctime (a chmod changes ctime, so a file made unreadable is not served from
 * here). The path reaches the same inode http_static once opened under its symlink
 * rules, so the bytes were already allowed for this URL. A changed file is a miss and
 * replaces the entry. With --file-cache-valid MS (as nginx's open_file_cache_valid) a
 * check stands for MS milliseconds: hits within it skip the fstatat, and a file changed
 * meanwhile is served as it was for at most that long.
 *
 * SPDY and HTTP/2 answers need no copy of the fields: each entry keeps them laid out
 * once as the list the engine takes (:status 200, the fields, then Date and Server, which
 * point at speedyd_serve_date's buffer), so a hit submits that list as it is.
 *
 * Memory: entries (bytes + headers) stay within max_bytes, least recently used evicted
 * first. An entry is reference-counted: a response still sending it keeps it alive after
 * eviction. One cache per worker process (no sharing, no locks).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http_date.h"
#include "http_mime.h"
#include "http_spdy.h"
#include "speedyd.h"

#define CACHE_BUCKETS 1024u
#define CACHE_ENTRY_MAX (256u * 1024u) /* largest file kept (and max_bytes / 8) */
#define CACHE_REL_MAX 4096u
#define CACHE_HEAD_ROOM 16u /* octets lent before an entry's bytes (a frame header's) */

typedef struct cache_entry cache_entry;
struct cache_entry {
  cache_entry *hash_next;
  cache_entry *lru_prev, *lru_next; /* lru_prev: more recently used */
  char *key;
  size_t key_len;
  uint64_t hash;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  int64_t checked_ns; /* when the file was last found unchanged (monotonic) */
  http_headers headers;
  /* The SPDY/HTTP/2 head: :status, headers' fields, Date, Server (NULL: a field whose
   * sending differs between protocols; such an entry is answered through headers). */
  speedy_header *wire_fields;
  size_t n_wire_fields;
  /* wire_fields prepared for the engine (speedy_fieldset_new) with the Date of
   * fieldset_date; made again when the second changes. NULL until the first answer. */
  speedy_fieldset *fieldset;
  char fieldset_date[HTTP_DATE_SIZE];
  /* The file's bytes (data) with CACHE_HEAD_ROOM octets before them (memory): the bodies
   * made from them are lent to their writers (http_body_lend), who place a frame header
   * just before a payload for the moment of a TLS write. */
  uint8_t *memory, *data;
  size_t charge;
  unsigned refs; /* 1 while in the cache, +1 per body borrowing data */
};

struct speedyd_file_cache {
  cache_entry *buckets[CACHE_BUCKETS];
  cache_entry *lru_head, *lru_tail; /* head: most recently used */
  uint64_t max_bytes, used, max_entry;
  int64_t valid_ns; /* --file-cache-valid: a check stands this long; 0: every hit checks */
  uint64_t hits, misses;
};

static uint64_t hash_key(const char *key, size_t len) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)key[i]) * 1099511628211ull;
  return h;
}

static void entry_unref(void *context) {
  cache_entry *e = context;
  if (--e->refs > 0) return;
  http_headers_free(&e->headers);
  free(e->wire_fields);
  speedy_fieldset_release(e->fieldset);
  free(e->memory);
  free(e->key);
  free(e);
}

static void lru_unlink(speedyd_file_cache *cache, cache_entry *e) {
  if (e->lru_prev != NULL)
    e->lru_prev->lru_next = e->lru_next;
  else
    cache->lru_head = e->lru_next;
  if (e->lru_next != NULL)
    e->lru_next->lru_prev = e->lru_prev;
  else
    cache->lru_tail = e->lru_prev;
  e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(speedyd_file_cache *cache, cache_entry *e) {
  e->lru_next = cache->lru_head;
  e->lru_prev = NULL;
  if (cache->lru_head != NULL)
    cache->lru_head->lru_prev = e;
  else
    cache->lru_tail = e;
  cache->lru_head = e;
}

static void entry_remove(speedyd_file_cache *cache, cache_entry *e) {
  cache_entry **p = &cache->buckets[e->hash % CACHE_BUCKETS];
  while (*p != e) p = &(*p)->hash_next;
  *p = e->hash_next;
  lru_unlink(cache, e);
  cache->used -= e->charge;
  entry_unref(e);
}

static cache_entry *entry_find(speedyd_file_cache *cache, const char *key, size_t len,
                               uint64_t hash) {
  for (cache_entry *e = cache->buckets[hash % CACHE_BUCKETS]; e != NULL; e = e->hash_next)
    if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0) return e;
  return NULL;
}

int speedyd_file_cache_new(speedyd_file_cache **out, uint64_t max_bytes, uint32_t valid_ms) {
  speedyd_file_cache *cache = calloc(1, sizeof(*cache));
  if (cache == NULL) return -1;
  cache->max_bytes = max_bytes;
  cache->valid_ns = (int64_t)valid_ms * 1000000;
  cache->max_entry = max_bytes / 8 < CACHE_ENTRY_MAX ? max_bytes / 8 : CACHE_ENTRY_MAX;
  *out = cache;
  return 0;
}

void speedyd_file_cache_del(speedyd_file_cache *cache) {
  if (cache == NULL) return;
  while (cache->lru_head != NULL) entry_remove(cache, cache->lru_head);
  free(cache);
}

/* The time validity checks count in: the loop's (read once per loop turn), not a clock
 * call per request. */
static int64_t cache_now_ns(const speedyd_server *server) {
  return server->loop != NULL ? (int64_t)uv_now(server->loop) * 1000000 : speedyd_now_ns();
}

/* The decoded path of a cacheable request into rel, or -1 when the request must go to
 * http_static (a method, a header or a variant the cache does not keep). */
static int cacheable_request(const speedyd_server *server, const http_request *request, char *rel,
                             size_t cap) {
  static const char *const bypass[] = {"range",    "if-none-match",       "if-modified-since",
                                       "if-match", "if-unmodified-since", "if-range"};
  if (request->method == NULL || request->path == NULL ||
      (strcmp(request->method, "GET") != 0 && strcmp(request->method, "HEAD") != 0))
    return -1;
  /* One pass over the request's fields (names are lower-case): only names beginning as
   * a bypass name does are compared. */
  const char *accept_encoding = NULL;
  for (size_t i = 0; i < request->headers.count; i++) {
    const http_header *h = &request->headers.items[i];
    if (h->name[0] == 'a' && accept_encoding == NULL &&
        http_headers_name_equal(h->name, h->name_len, "accept-encoding"))
      accept_encoding = h->value;
    if (h->name[0] != 'r' && h->name[0] != 'i') continue;
    for (size_t k = 0; k < sizeof(bypass) / sizeof(bypass[0]); k++)
      if (http_headers_name_equal(h->name, h->name_len, bypass[k])) return -1;
  }
  int trailing_slash = 0;
  if (http_docroot_decode_path(request->path, http_request_path_length(request), rel, cap,
                               &trailing_slash) != 0 ||
      trailing_slash || rel[0] == '\0')
    return -1;
  if (server->config.gzip && http_mime_compressible(http_mime_type(rel)) &&
      http_static_accepts_gzip(accept_encoding))
    return -1; /* this client may get gzip: http_static decides */
  return 0;
}

/* 1 when an HTTP/1.x answer of size bytes is better sent by sendfile than from memory. */
static int left_to_sendfile(const http_request *request, uint64_t size) {
  return (request->protocol == HTTP_PROTO_HTTP10 || request->protocol == HTTP_PROTO_HTTP11) &&
         size >= SPEEDYD_SENDFILE_MIN;
}

static int same_file(const cache_entry *e, const struct stat *st) {
  return S_ISREG(st->st_mode) && st->st_dev == e->dev && st->st_ino == e->ino &&
         st->st_size == e->size && st->st_mtim.tv_sec == e->mtime.tv_sec &&
         st->st_mtim.tv_nsec == e->mtime.tv_nsec && st->st_ctim.tv_sec == e->ctime.tv_sec &&
         st->st_ctim.tv_nsec == e->ctime.tv_nsec;
}

/* The body of an answer from e (none for HEAD: headers only, as http_static). */
static int body_from(cache_entry *e, const http_request *request, http_response *response) {
  if (strcmp(request->method, "HEAD") == 0) return 0;
  e->refs++;
  if (http_response_set_borrowed_body(response, e->data, (size_t)e->size, entry_unref, e) != 0)
    return -1; /* the release ran */
  (void)http_body_lend(response->body, CACHE_HEAD_ROOM);
  return 0;
}

static int answer_from(cache_entry *e, const http_request *request, http_response *response) {
  http_response_reset(response, 200);
  if (http_headers_append_all(&response->headers, &e->headers) != 0) return -1;
  return body_from(e, request, response);
}

/* The fresh entry for request, or NULL (not cacheable, not cached, changed or gone). */
static cache_entry *lookup(speedyd_server *server, const http_request *request) {
  speedyd_file_cache *cache = server->file_cache;
  char rel[CACHE_REL_MAX] IO_UNINITIALIZED; /* written by the path decoder before use */
  if (cache == NULL || cacheable_request(server, request, rel, sizeof(rel)) != 0) return NULL;
  /* Keyed by the decoded path: a query or another spelling of the same file finds the
   * same entry (keyed by the raw target, "?1", "?2", ... each copied the file anew). */
  size_t len = strlen(rel);
  uint64_t hash = hash_key(rel, len);
  cache_entry *e = entry_find(cache, rel, len, hash);
  if (e == NULL) {
    cache->misses++;
    return NULL;
  }
  if (left_to_sendfile(request, (uint64_t)e->size)) return NULL;
  int64_t now = cache->valid_ns > 0 ? cache_now_ns(server) : 0;
  if (cache->valid_ns == 0 || now - e->checked_ns >= cache->valid_ns) {
    struct stat st;
    if (fstatat(server->docroot.dir_fd, rel, &st, 0) != 0 || !same_file(e, &st)) {
      entry_remove(cache, e); /* changed or gone: http_static answers, and may refill */
      cache->misses++;
      return NULL;
    }
    e->checked_ns = now;
  }
  return e;
}

static void hit(speedyd_file_cache *cache, cache_entry *e) {
  lru_unlink(cache, e);
  lru_push_front(cache, e);
  cache->hits++;
}

int speedyd_file_cache_serve(speedyd_server *server, const http_request *request,
                             http_response *response) {
  cache_entry *e = lookup(server, request);
  if (e == NULL) return 0;
  if (answer_from(e, request, response) != 0) {
    http_response_reset(response, 200); /* let http_static answer instead */
    return 0;
  }
  hit(server->file_cache, e);
  return 1;
}

/* e's fieldset with this second's Date (speedy_fieldset_new checks and prepares a head
 * once a second per entry, not once an answer). NULL when there is no memory. */
static speedy_fieldset *current_fieldset(cache_entry *e) {
  const char *date = speedyd_serve_date(); /* the buffer wire_fields' Date points at */
  if (e->fieldset != NULL && memcmp(e->fieldset_date, date, HTTP_DATE_SIZE) == 0)
    return e->fieldset;
  speedy_fieldset_release(e->fieldset);
  e->fieldset = NULL;
  if (speedy_fieldset_new(e->wire_fields, e->n_wire_fields, &e->fieldset) != 0) return NULL;
  memcpy(e->fieldset_date, date, HTTP_DATE_SIZE);
  return e->fieldset;
}

int speedyd_file_cache_serve_fields(speedyd_server *server, const http_request *request,
                                    http_response *response, speedy_fieldset **set) {
  cache_entry *e = lookup(server, request);
  if (e == NULL || e->wire_fields == NULL) return 0;
  speedy_fieldset *current = current_fieldset(e);
  if (current == NULL) return 0;
  http_response_reset(response, 200);
  if (body_from(e, request, response) != 0) return 0;
  *set = current;
  hit(server->file_cache, e);
  return 1;
}

/* Lays out e's SPDY/HTTP/2 head once (see cache_entry); leaves wire_fields NULL when a
 * field would not go out the same over every protocol, or when there is no memory. */
static void prepare_wire_fields(cache_entry *e) {
  const http_headers *headers = &e->headers;
  speedy_header *list = calloc(headers->count + 3, sizeof(*list));
  if (list == NULL) return;
  size_t n = 0;
  list[n++] = (speedy_header){":status", 7, "200", 3};
  for (size_t i = 0; i < headers->count; i++) {
    const http_header *h = &headers->items[i];
    if (!http_spdy_response_field_sent(HTTP_PROTO_H2, h->name, h->name_len)) {
      free(list);
      return;
    }
    /* speedyd_serve_common_headers replaces these (there are none from http_static). */
    if (strcmp(h->name, "date") == 0 || strcmp(h->name, "server") == 0) continue;
    list[n++] = (speedy_header){h->name, h->name_len, h->value, h->value_len};
  }
  list[n++] = (speedy_header){"date", 4, speedyd_serve_date(), HTTP_DATE_SIZE - 1};
  list[n++] = (speedy_header){"server", 6, SPEEDYD_SERVER_FIELD, sizeof(SPEEDYD_SERVER_FIELD) - 1};
  e->wire_fields = list;
  e->n_wire_fields = n;
}

void speedyd_file_cache_store(speedyd_server *server, const http_request *request,
                              http_response *response) {
  speedyd_file_cache *cache = server->file_cache;
  char rel[CACHE_REL_MAX];
  int fd;
  uint64_t offset, length;
  struct stat st;
  if (cache == NULL || response->status != 200 || response->body == NULL ||
      cacheable_request(server, request, rel, sizeof(rel)) != 0 ||
      http_headers_get(&response->headers, "content-encoding") != NULL ||
      http_body_file_range(response->body, &fd, &offset, &length) != 0 || offset != 0 ||
      length > cache->max_entry || left_to_sendfile(request, length) || fstat(fd, &st) != 0 ||
      !S_ISREG(st.st_mode) || (uint64_t)st.st_size != length)
    return;
  size_t key_len = strlen(rel);
  uint64_t hash = hash_key(rel, key_len);
  cache_entry *old = entry_find(cache, rel, key_len, hash);
  if (old != NULL) entry_remove(cache, old);
  cache_entry *e = calloc(1, sizeof(*e));
  if (e == NULL) return;
  e->refs = 1;
  e->key = malloc(key_len + 1);
  e->memory = malloc(CACHE_HEAD_ROOM + (size_t)length);
  e->data = e->memory != NULL ? e->memory + CACHE_HEAD_ROOM : NULL;
  http_headers_init(&e->headers, 0, 0);
  size_t got = 0;
  while (e->key != NULL && e->data != NULL && got < length) {
    ssize_t n = pread(fd, e->data + got, (size_t)length - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  size_t header_bytes = 0;
  int ok = e->key != NULL && e->data != NULL && got == length;
  for (size_t i = 0; ok && i < response->headers.count; i++) {
    const http_header *h = &response->headers.items[i];
    ok = http_headers_add(&e->headers, h->name, h->name_len, h->value, h->value_len) == 0;
    header_bytes += h->name_len + h->value_len + 32;
  }
  if (ok) prepare_wire_fields(e);
  /* the head twice (headers, fieldset with its literals) and the lists' records */
  e->charge = sizeof(*e) + key_len + CACHE_HEAD_ROOM + (size_t)length + 3 * header_bytes +
              (response->headers.count + 3) * (2 * sizeof(speedy_header) + 96);
  if (!ok || e->charge > cache->max_bytes) {
    entry_unref(e);
    return;
  }
  memcpy(e->key, rel, key_len + 1);
  e->key_len = key_len;
  e->hash = hash;
  e->dev = st.st_dev;
  e->ino = st.st_ino;
  e->size = st.st_size;
  e->mtime = st.st_mtim;
  e->ctime = st.st_ctim;
  e->checked_ns = cache->valid_ns > 0 ? cache_now_ns(server) : 0;
  while (cache->used + e->charge > cache->max_bytes && cache->lru_tail != NULL)
    entry_remove(cache, cache->lru_tail);
  e->hash_next = cache->buckets[hash % CACHE_BUCKETS];
  cache->buckets[hash % CACHE_BUCKETS] = e;
  lru_push_front(cache, e);
  cache->used += e->charge;
  /* This answer, too, comes from the copy (the file's bytes were just read). */
  e->refs++;
  if (http_response_set_borrowed_body(response, e->data, (size_t)e->size, entry_unref, e) == 0)
    (void)http_body_lend(response->body, CACHE_HEAD_ROOM);
}
