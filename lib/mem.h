/* mem.h — the allocator hook: the only way lib/ allocates memory.
 *
 * A speedy_mem carries the application's malloc/realloc/free and counts the bytes held, so
 * speedy_session_memory() is true and tests can inject failures. zlib is handed the same
 * hook (speedy_mem_zalloc / speedy_mem_zfree), so its state is counted too.
 */
#ifndef SPEEDY_LIB_MEM_H
#define SPEEDY_LIB_MEM_H

#include <stddef.h>

#include "speedy/speedy.h"

typedef struct speedy_mem {
  speedy_malloc_fn malloc_fn;
  speedy_realloc_fn realloc_fn; /* may be NULL */
  speedy_free_fn free_fn;
  void *user;
  size_t in_use; /* bytes currently held through this hook (headers included) */
} speedy_mem;

/* The system allocator (malloc/realloc/free). */
void speedy_mem_init_default(speedy_mem *mem);

/* Returns NULL on failure or when size is 0 plus a failed hook. Memory from these
 * functions must be freed with speedy_mem_free on the same speedy_mem. */
void *speedy_mem_malloc(speedy_mem *mem, size_t size);
void *speedy_mem_calloc(speedy_mem *mem, size_t count, size_t size);
/* Like realloc: on failure returns NULL and leaves ptr untouched. */
void *speedy_mem_realloc(speedy_mem *mem, void *ptr, size_t size);
void speedy_mem_free(speedy_mem *mem, void *ptr);

/* zlib's alloc_func / free_func, with opaque = the speedy_mem. */
void *speedy_mem_zalloc(void *opaque, unsigned items, unsigned size);
void speedy_mem_zfree(void *opaque, void *ptr);

#endif
