/* mem.c — the allocator hook with byte accounting (see mem.h).
 *
 * Each block carries a small header recording its size, so frees can be accounted
 * without help from the application's allocator.
 */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

/* Header in front of every block; max_align_t keeps the user part aligned. */
typedef union spdy_mem_block {
  size_t size;
  max_align_t align;
} spdy_mem_block;

static void *default_malloc(size_t size, void *user) {
  (void)user;
  return malloc(size);
}

static void *default_realloc(void *ptr, size_t size, void *user) {
  (void)user;
  return realloc(ptr, size);
}

static void default_free(void *ptr, void *user) {
  (void)user;
  free(ptr);
}

void spdy_mem_init_default(spdy_mem *mem) {
  mem->malloc_fn = default_malloc;
  mem->realloc_fn = default_realloc;
  mem->free_fn = default_free;
  mem->user = NULL;
  mem->in_use = 0;
}

void *spdy_mem_malloc(spdy_mem *mem, size_t size) {
  if (size > SIZE_MAX - sizeof(spdy_mem_block)) return NULL;
  size_t total = sizeof(spdy_mem_block) + size;
  spdy_mem_block *block = mem->malloc_fn(total, mem->user);
  if (block == NULL) return NULL;
  block->size = size;
  mem->in_use += total;
  return block + 1;
}

void *spdy_mem_calloc(spdy_mem *mem, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void *p = spdy_mem_malloc(mem, count * size);
  if (p != NULL) memset(p, 0, count * size);
  return p;
}

void *spdy_mem_realloc(spdy_mem *mem, void *ptr, size_t size) {
  if (ptr == NULL) return spdy_mem_malloc(mem, size);
  if (size > SIZE_MAX - sizeof(spdy_mem_block)) return NULL;
  spdy_mem_block *old = (spdy_mem_block *)ptr - 1;
  size_t old_size = old->size;
  if (mem->realloc_fn == NULL) {
    void *fresh = spdy_mem_malloc(mem, size);
    if (fresh == NULL) return NULL;
    memcpy(fresh, ptr, old_size < size ? old_size : size);
    spdy_mem_free(mem, ptr);
    return fresh;
  }
  spdy_mem_block *block = mem->realloc_fn(old, sizeof(spdy_mem_block) + size, mem->user);
  if (block == NULL) return NULL;
  block->size = size;
  mem->in_use = mem->in_use - old_size + size;
  return block + 1;
}

void spdy_mem_free(spdy_mem *mem, void *ptr) {
  if (ptr == NULL) return;
  spdy_mem_block *block = (spdy_mem_block *)ptr - 1;
  mem->in_use -= sizeof(spdy_mem_block) + block->size;
  mem->free_fn(block, mem->user);
}

void *spdy_mem_zalloc(void *opaque, unsigned items, unsigned size) {
  return spdy_mem_calloc(opaque, items, size);
}

void spdy_mem_zfree(void *opaque, void *ptr) { spdy_mem_free(opaque, ptr); }
