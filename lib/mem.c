/* mem.c — the allocator hook with byte accounting (see mem.h).
 *
 * Each block carries a small header recording its size, so frees can be accounted
 * without help from the application's allocator.
 */
#include "mem.h"

#include <stdlib.h>
#include <string.h>

/* Header in front of every block; max_align_t keeps the user part aligned. */
typedef union speedy_mem_block {
  size_t size;
  max_align_t align;
} speedy_mem_block;

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

void speedy_mem_init_default(speedy_mem *mem) {
  mem->malloc_fn = default_malloc;
  mem->realloc_fn = default_realloc;
  mem->free_fn = default_free;
  mem->user = NULL;
  mem->in_use = 0;
}

void *speedy_mem_malloc(speedy_mem *mem, size_t size) {
  if (size > SIZE_MAX - sizeof(speedy_mem_block)) return NULL;
  size_t total = sizeof(speedy_mem_block) + size;
  speedy_mem_block *block = mem->malloc_fn(total, mem->user);
  if (block == NULL) return NULL;
  block->size = size;
  mem->in_use += total;
  return block + 1;
}

void *speedy_mem_calloc(speedy_mem *mem, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size) return NULL;
  void *p = speedy_mem_malloc(mem, count * size);
  if (p != NULL) memset(p, 0, count * size);
  return p;
}

void *speedy_mem_realloc(speedy_mem *mem, void *ptr, size_t size) {
  if (ptr == NULL) return speedy_mem_malloc(mem, size);
  if (size > SIZE_MAX - sizeof(speedy_mem_block)) return NULL;
  speedy_mem_block *old = (speedy_mem_block *)ptr - 1;
  size_t old_size = old->size;
  if (mem->realloc_fn == NULL) {
    void *fresh = speedy_mem_malloc(mem, size);
    if (fresh == NULL) return NULL;
    memcpy(fresh, ptr, old_size < size ? old_size : size);
    speedy_mem_free(mem, ptr);
    return fresh;
  }
  speedy_mem_block *block = mem->realloc_fn(old, sizeof(speedy_mem_block) + size, mem->user);
  if (block == NULL) return NULL;
  block->size = size;
  mem->in_use = mem->in_use - old_size + size;
  return block + 1;
}

void speedy_mem_free(speedy_mem *mem, void *ptr) {
  if (ptr == NULL) return;
  speedy_mem_block *block = (speedy_mem_block *)ptr - 1;
  mem->in_use -= sizeof(speedy_mem_block) + block->size;
  mem->free_fn(block, mem->user);
}

void *speedy_mem_zalloc(void *opaque, unsigned items, unsigned size) {
  return speedy_mem_calloc(opaque, items, size);
}

void speedy_mem_zfree(void *opaque, void *ptr) { speedy_mem_free(opaque, ptr); }
