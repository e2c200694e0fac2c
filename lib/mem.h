/* mem.h — the allocator hook: the only way lib/ allocates memory.
 *
 * A spdy_mem carries the application's malloc/realloc/free and counts the bytes held, so
 * spdy_session_memory() is true and tests can inject failures. zlib is handed the same
 * hook (spdy_mem_zalloc / spdy_mem_zfree), so its state is counted too.
 */
#ifndef SPDY_LIB_MEM_H
#define SPDY_LIB_MEM_H

#include <stddef.h>

#include "spdy/spdy.h"

typedef struct spdy_mem {
  spdy_malloc_fn malloc_fn;
  spdy_realloc_fn realloc_fn; /* may be NULL */
  spdy_free_fn free_fn;
  void *user;
  size_t in_use; /* bytes currently held through this hook (headers included) */
} spdy_mem;

/* The system allocator (malloc/realloc/free). */
void spdy_mem_init_default(spdy_mem *mem);

/* Returns NULL on failure or when size is 0 plus a failed hook. Memory from these
 * functions must be freed with spdy_mem_free on the same spdy_mem. */
void *spdy_mem_malloc(spdy_mem *mem, size_t size);
void *spdy_mem_calloc(spdy_mem *mem, size_t count, size_t size);
/* Like realloc: on failure returns NULL and leaves ptr untouched. */
void *spdy_mem_realloc(spdy_mem *mem, void *ptr, size_t size);
void spdy_mem_free(spdy_mem *mem, void *ptr);

/* zlib's alloc_func / free_func, with opaque = the spdy_mem. */
void *spdy_mem_zalloc(void *opaque, unsigned items, unsigned size);
void spdy_mem_zfree(void *opaque, void *ptr);

#endif
