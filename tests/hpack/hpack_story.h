/* hpack_story.h — the stories of hpack-test-case (../shared/spec/h2/hpack-test-case):
 * reading them (jansson) for the HPACK tests and tools, and writing our own.
 *
 * A story is a sequence of cases sharing one compression context; each case has a header
 * list, and (except in raw-data/) the block an encoder made of it, and may carry the
 * SETTINGS_HEADER_TABLE_SIZE in force from that case on. The stories are MIT-licensed
 * and are read from ../shared at run time, never copied into this project.
 */
#ifndef SPEEDY_TESTS_HPACK_STORY_H
#define SPEEDY_TESTS_HPACK_STORY_H

#include <stddef.h>
#include <stdint.h>

#include "hpack.h"

typedef struct hpack_story_case {
  int has_table_size;
  uint32_t table_size;
  uint8_t *wire; /* NULL in raw-data stories */
  size_t wire_len;
  speedy_hpack_field *fields; /* names and values owned by the story */
  size_t n_fields;
} hpack_story_case;

typedef struct hpack_story {
  hpack_story_case *cases;
  size_t n_cases;
} hpack_story;

/* Reads one story file. Returns 0, or -1 with a one-line reason in err. */
int hpack_story_load(const char *path, hpack_story *out, char *err, size_t err_size);
void hpack_story_free(hpack_story *story);

/* The *.json files of dir, sorted, as malloc'd full paths (free with
 * hpack_story_list_free). Returns the count, or -1 when dir cannot be read. */
int hpack_story_list(const char *dir, char ***paths);
void hpack_story_list_free(char **paths, int n);

/* Writes a story as hpack-test-case does (description, cases with seqno, wire in hex,
 * headers), with wire[i] of wire_len[i] octets for case i. Returns 0 or -1. */
int hpack_story_write(const char *path, const char *description, const hpack_story *story,
                      uint8_t *const *wire, const size_t *wire_len);

/* The hpack-test-case directory: $SPEEDY_SHARED_DIR/spec/h2/hpack-test-case, else
 * ../shared/... from the source tree; NULL when absent. The result is static storage. */
const char *hpack_story_root(void);

#endif
