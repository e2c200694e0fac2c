/* testutil.c — counting allocator and shared-corpus lookup for unit tests. */
#include "testutil.h"

#include <stdlib.h>
#include <sys/stat.h>

typedef union test_block {
  size_t size;
  max_align_t align;
} test_block;

static test_alloc_stats stats;
static size_t fail_countdown; /* 0: never fail */

static int should_fail(void) {
  if (fail_countdown == 0) return 0;
  if (fail_countdown == 1) return 1; /* stays 1: every later allocation fails too */
  fail_countdown--;
  return 0;
}

void *test_alloc_malloc(size_t size, void *user) {
  (void)user;
  if (should_fail()) return NULL;
  test_block *b = malloc(sizeof(test_block) + size);
  if (b == NULL) return NULL;
  b->size = size;
  stats.live_blocks++;
  stats.live_bytes += size;
  stats.total_allocs++;
  if (stats.live_bytes > stats.peak_bytes) stats.peak_bytes = stats.live_bytes;
  return b + 1;
}

void *test_alloc_realloc(void *ptr, size_t size, void *user) {
  if (ptr == NULL) return test_alloc_malloc(size, user);
  if (should_fail()) return NULL;
  test_block *old = (test_block *)ptr - 1;
  size_t old_size = old->size;
  test_block *b = realloc(old, sizeof(test_block) + size);
  if (b == NULL) return NULL;
  b->size = size;
  stats.live_bytes = stats.live_bytes - old_size + size;
  stats.total_allocs++;
  if (stats.live_bytes > stats.peak_bytes) stats.peak_bytes = stats.live_bytes;
  return b + 1;
}

void test_alloc_free(void *ptr, void *user) {
  (void)user;
  if (ptr == NULL) return;
  test_block *b = (test_block *)ptr - 1;
  stats.live_blocks--;
  stats.live_bytes -= b->size;
  free(b);
}

const test_alloc_stats *test_alloc_get(void) { return &stats; }
size_t test_alloc_live(void) { return stats.live_blocks; }
void test_alloc_fail_after(size_t n) { fail_countdown = n; }

void test_alloc_install(speedy_options *options) {
  speedy_options_set_allocator(options, test_alloc_malloc, test_alloc_realloc, test_alloc_free,
                               NULL);
}

void test_alloc_mem(speedy_mem *mem) {
  mem->malloc_fn = test_alloc_malloc;
  mem->realloc_fn = test_alloc_realloc;
  mem->free_fn = test_alloc_free;
  mem->user = NULL;
  mem->in_use = 0;
}

const char *test_shared_dir(void) {
  const char *dir = getenv("SPEEDY_SHARED_DIR");
  struct stat st;
  if (dir == NULL || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
  return dir;
}
