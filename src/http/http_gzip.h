/* http_gzip.h — gzip compression of files on the fly, with a bounded cache.
 *
 * The cost is bounded three ways: files above max_file_bytes are never compressed on the
 * fly (they are sent as they are unless a precompressed FILE.gz exists); compressed
 * results are cached up to max_total_bytes (least recently used out first) and at most
 * HTTP_GZIP_MAX_ENTRIES entries; a file whose gzip form is not smaller is remembered as
 * such (a small entry), so it is not compressed again.
 *
 * Entries are keyed by (device, inode, size, mtime): a changed file gets a new key and
 * its old entry ages out. Bodies hand out references to cached buffers, so an entry
 * evicted while being sent stays alive until its last body is freed, and the cache may
 * be freed before the bodies. Not thread-safe: one cache per event loop.
 */
#ifndef SPEEDY_HTTP_GZIP_H
#define SPEEDY_HTTP_GZIP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "http_body.h"

#define HTTP_GZIP_DEFAULT_MAX_TOTAL (32u * 1024u * 1024u)
#define HTTP_GZIP_DEFAULT_MAX_FILE (1024u * 1024u)
#define HTTP_GZIP_MAX_ENTRIES 4096u

typedef struct http_gzip_cache http_gzip_cache;

/* 0 selects the defaults above. The caller frees the cache with http_gzip_cache_del.
 * Returns 0 or HTTP_ERR_NOMEM. */
int http_gzip_cache_new(http_gzip_cache **out, size_t max_total_bytes, size_t max_file_bytes);
void http_gzip_cache_del(http_gzip_cache *cache);

/* A body with the gzip form of the regular file fd (whose fstat is st; fd stays the
 * caller's). Returns 0 and *body (the caller owns it) and *length (its size);
 * HTTP_ERR_TOO_LARGE when the file is above the per-file bound; HTTP_ERR_LIMIT when
 * gzip does not make it smaller (send it as it is); HTTP_ERR_TRUNCATED when the file is
 * shorter than st says (it shrank); HTTP_ERR_IO; HTTP_ERR_NOMEM. */
int http_gzip_cache_body(http_gzip_cache *cache, int fd, const struct stat *st, http_body **body,
                         uint64_t *length);

/* Bytes held by cached entries, and their count (for tests and statistics). */
size_t http_gzip_cache_bytes(const http_gzip_cache *cache);
size_t http_gzip_cache_entries(const http_gzip_cache *cache);
/* How many times the cache compressed something (hits do not count). */
uint64_t http_gzip_cache_compressions(const http_gzip_cache *cache);

/* Compresses in[0..len) into a gzip member (level 6). *out is malloc'd; the caller frees
 * it. Returns 0, HTTP_ERR_NOMEM or HTTP_ERR_IO (zlib failure). */
int http_gzip_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len);

#endif
