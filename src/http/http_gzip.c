/* http_gzip.c — on-the-fly gzip with a bounded, reference-counted LRU cache. */
#define _GNU_SOURCE
#include "http_gzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "http_err.h"

/* One compressed file. Shared by the cache (while listed) and by every body reading it. */
typedef struct gzip_entry {
  struct gzip_entry *newer, *older; /* LRU list links while cached */
  dev_t device;
  ino_t inode;
  off_t size;
  struct timespec mtime;
  uint8_t *data; /* NULL for "not worth compressing" */
  size_t len;
  unsigned references; /* the cache's one, plus one per body */
  int cached;
} gzip_entry;

struct http_gzip_cache {
  gzip_entry *newest, *oldest;
  size_t bytes;
  size_t entries;
  size_t max_total;
  size_t max_file;
  uint64_t compressions;
};

int http_gzip_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len) {
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  /* windowBits 15 + 16: a gzip wrapper rather than zlib's. */
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return HTTP_ERR_NOMEM;
  uLong bound = deflateBound(&zs, (uLong)len);
  uint8_t *buf = malloc(bound > 0 ? bound : 1);
  if (buf == NULL) {
    deflateEnd(&zs);
    return HTTP_ERR_NOMEM;
  }
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.avail_in = (uInt)len;
  zs.next_out = buf;
  zs.avail_out = (uInt)bound;
  int zrv = deflate(&zs, Z_FINISH);
  size_t produced = (size_t)zs.total_out;
  deflateEnd(&zs);
  if (zrv != Z_STREAM_END) {
    free(buf);
    return HTTP_ERR_IO;
  }
  *out = buf;
  *out_len = produced;
  return 0;
}

int http_gzip_cache_new(http_gzip_cache **out, size_t max_total_bytes, size_t max_file_bytes) {
  http_gzip_cache *cache = calloc(1, sizeof(*cache));
  if (cache == NULL) return HTTP_ERR_NOMEM;
  cache->max_total = max_total_bytes != 0 ? max_total_bytes : HTTP_GZIP_DEFAULT_MAX_TOTAL;
  cache->max_file = max_file_bytes != 0 ? max_file_bytes : HTTP_GZIP_DEFAULT_MAX_FILE;
  /* zlib takes uInt lengths: never hand it more than 4 GiB at once. */
  if (cache->max_file > (size_t)UINT32_MAX / 2) cache->max_file = (size_t)UINT32_MAX / 2;
  *out = cache;
  return 0;
}

static void entry_release(void *context) {
  gzip_entry *entry = context;
  if (--entry->references == 0) {
    free(entry->data);
    free(entry);
  }
}

static void cache_unlink(http_gzip_cache *cache, gzip_entry *entry) {
  if (entry->newer != NULL)
    entry->newer->older = entry->older;
  else
    cache->newest = entry->older;
  if (entry->older != NULL)
    entry->older->newer = entry->newer;
  else
    cache->oldest = entry->newer;
  entry->newer = entry->older = NULL;
}

static void cache_push_newest(http_gzip_cache *cache, gzip_entry *entry) {
  entry->older = cache->newest;
  entry->newer = NULL;
  if (cache->newest != NULL) cache->newest->newer = entry;
  cache->newest = entry;
  if (cache->oldest == NULL) cache->oldest = entry;
}

static void cache_evict(http_gzip_cache *cache, gzip_entry *entry) {
  cache_unlink(cache, entry);
  cache->bytes -= entry->len;
  cache->entries--;
  entry->cached = 0;
  entry_release(entry);
}

void http_gzip_cache_del(http_gzip_cache *cache) {
  if (cache == NULL) return;
  while (cache->oldest != NULL) cache_evict(cache, cache->oldest);
  free(cache);
}

size_t http_gzip_cache_bytes(const http_gzip_cache *cache) { return cache->bytes; }
size_t http_gzip_cache_entries(const http_gzip_cache *cache) { return cache->entries; }
uint64_t http_gzip_cache_compressions(const http_gzip_cache *cache) { return cache->compressions; }

static int entry_matches(const gzip_entry *entry, const struct stat *st) {
  return entry->device == st->st_dev && entry->inode == st->st_ino && entry->size == st->st_size &&
         entry->mtime.tv_sec == st->st_mtim.tv_sec && entry->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/* Reads exactly len bytes of fd from offset 0. */
static int read_whole(int fd, uint8_t *buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, buf + done, len - done, (off_t)done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return HTTP_ERR_IO;
    if (n == 0) return HTTP_ERR_TRUNCATED;
    done += (size_t)n;
  }
  return 0;
}

/* A body reading entry (taking one more reference), or the entry's "not worth it". */
static int entry_body(gzip_entry *entry, http_body **body, uint64_t *length) {
  if (entry->data == NULL) return HTTP_ERR_LIMIT;
  entry->references++;
  int rv = http_body_new_borrowed(body, entry->data, entry->len, entry_release, entry);
  if (rv != 0) return rv;
  *length = entry->len;
  return 0;
}

int http_gzip_cache_body(http_gzip_cache *cache, int fd, const struct stat *st, http_body **body,
                         uint64_t *length) {
  if (cache == NULL || st == NULL || body == NULL || length == NULL || st->st_size < 0)
    return HTTP_ERR_INVALID_ARGUMENT;
  for (gzip_entry *entry = cache->newest; entry != NULL; entry = entry->older) {
    if (entry_matches(entry, st)) {
      cache_unlink(cache, entry);
      cache_push_newest(cache, entry);
      return entry_body(entry, body, length);
    }
  }
  if ((uint64_t)st->st_size > cache->max_file) return HTTP_ERR_TOO_LARGE;
  size_t size = (size_t)st->st_size;
  uint8_t *plain = malloc(size > 0 ? size : 1);
  if (plain == NULL) return HTTP_ERR_NOMEM;
  int rv = read_whole(fd, plain, size);
  uint8_t *packed = NULL;
  size_t packed_len = 0;
  if (rv == 0) rv = http_gzip_compress(plain, size, &packed, &packed_len);
  free(plain);
  if (rv != 0) return rv;
  cache->compressions++;
  gzip_entry *entry = calloc(1, sizeof(*entry));
  if (entry == NULL) {
    free(packed);
    return HTTP_ERR_NOMEM;
  }
  entry->device = st->st_dev;
  entry->inode = st->st_ino;
  entry->size = st->st_size;
  entry->mtime = st->st_mtim;
  entry->references = 1; /* ours until the cache or a body takes it */
  if (packed_len >= size) {
    free(packed); /* remembered as "not worth it": costs no buffer */
  } else {
    entry->data = packed;
    entry->len = packed_len;
  }
  if (entry->len <= cache->max_total) {
    while (cache->oldest != NULL && (cache->bytes > cache->max_total - entry->len ||
                                     cache->entries >= HTTP_GZIP_MAX_ENTRIES))
      cache_evict(cache, cache->oldest);
    cache_push_newest(cache, entry);
    cache->bytes += entry->len;
    cache->entries++;
    entry->cached = 1;
    entry->references++; /* the cache's reference */
  }
  rv = entry_body(entry, body, length);
  entry_release(entry); /* drop ours: the cache and/or the body hold it now */
  return rv;
}
