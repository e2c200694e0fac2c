/* hpack_encode_stories.c — encodes hpack-test-case's raw-data stories with our HPACK
 * encoder (its default policy) and writes them as hpack-test-case stories, for a decoder
 * we did not write to check (tests/hpack/check_python_hpack.py).
 *
 *   hpack_encode_stories RAW_DIR OUT_DIR
 *
 * Exit status: 0, 1 when a story cannot be read or written, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "hpack_story.h"

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: hpack_encode_stories RAW_DIR OUT_DIR\n");
    return 2;
  }
  char **paths;
  int n = hpack_story_list(argv[1], &paths);
  if (n <= 0) {
    fprintf(stderr, "hpack_encode_stories: no stories in %s\n", argv[1]);
    return 1;
  }
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  int status = 0;
  for (int i = 0; i < n && status == 0; i++) {
    hpack_story story;
    char err[512];
    if (hpack_story_load(paths[i], &story, err, sizeof err) != 0) {
      fprintf(stderr, "hpack_encode_stories: %s\n", err);
      status = 1;
      break;
    }
    speedy_hpack_encoder *e;
    if (speedy_hpack_encoder_new(&mem, &e) != 0) {
      hpack_story_free(&story);
      status = 1;
      break;
    }
    uint8_t **wire = calloc(story.n_cases + 1, sizeof *wire);
    size_t *wire_len = calloc(story.n_cases + 1, sizeof *wire_len);
    for (size_t c = 0; c < story.n_cases && status == 0; c++) {
      const hpack_story_case *k = &story.cases[c];
      size_t bound = speedy_hpack_encode_bound(e, k->fields, k->n_fields);
      wire[c] = malloc(bound ? bound : 1);
      int64_t len = speedy_hpack_encode(e, k->fields, k->n_fields, wire[c], bound);
      if (len < 0) {
        fprintf(stderr, "hpack_encode_stories: %s, case %zu: %s\n", paths[i], c,
                speedy_hpack_strerror((int)len));
        status = 1;
      } else {
        wire_len[c] = (size_t)len;
      }
    }
    if (status == 0) {
      const char *base = strrchr(paths[i], '/');
      char out[4096];
      snprintf(out, sizeof out, "%s/%s", argv[2], base ? base + 1 : paths[i]);
      if (hpack_story_write(out, "Encoded by speedy's HPACK encoder (lib/hpack.c).", &story, wire,
                            wire_len) != 0) {
        fprintf(stderr, "hpack_encode_stories: cannot write %s\n", out);
        status = 1;
      }
    }
    for (size_t c = 0; c < story.n_cases; c++) free(wire[c]);
    free(wire);
    free(wire_len);
    speedy_hpack_encoder_del(e);
    hpack_story_free(&story);
  }
  hpack_story_list_free(paths, n);
  return status;
}
