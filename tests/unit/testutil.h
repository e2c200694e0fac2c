/* testutil.h — shared support for the unit tests: a counting, failure-injecting allocator
 * and helpers to read the shared corpus.
 *
 * Every test that creates a session passes test_alloc_options() (or installs the hooks on
 * its own options) and checks test_alloc_live() == 0 after deleting it, so a leak inside
 * the engine or zlib fails the test even without the sanitizers.
 */
#ifndef SPEEDY_TESTUTIL_H
#define SPEEDY_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "speedy/speedy.h"

/* The counting allocator. State is per process (Criterion runs each test in its own). */
typedef struct test_alloc_stats {
  size_t live_blocks; /* allocated and not yet freed */
  size_t live_bytes;
  size_t total_allocs;
  size_t peak_bytes;
} test_alloc_stats;

void *test_alloc_malloc(size_t size, void *user);
void *test_alloc_realloc(void *ptr, size_t size, void *user);
void test_alloc_free(void *ptr, void *user);
const test_alloc_stats *test_alloc_get(void);
/* Number of blocks still allocated through the hooks. */
size_t test_alloc_live(void);
/* Make the n-th allocation from now (1 = the next) and every later one fail; 0 = never. */
void test_alloc_fail_after(size_t n);

/* Installs the counting hooks on options. */
void test_alloc_install(speedy_options *options);
/* A speedy_mem using the counting hooks (for module tests below the session). */
void test_alloc_mem(speedy_mem *mem);

/* Path of ../shared (SPEEDY_SHARED_DIR), or NULL when it is absent. */
const char *test_shared_dir(void);

#endif
