/* lab_testutil.c — see lab_testutil.h. */
#define _POSIX_C_SOURCE 200809L
#include "lab_testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *lab_test_corpus_path(const char *name, char *buf, size_t size) {
  const char *shared = getenv("SPEEDY_SHARED_DIR");
  if (shared == NULL || shared[0] == '\0')
    cr_skip_test("SPEEDY_SHARED_DIR is not set: the HAR corpus is not available");
  snprintf(buf, size, "%s/corpus/har/%s", shared, name);
  struct stat st;
  if (stat(buf, &st) != 0) cr_skip_test("corpus file %s is not there", buf);
  return buf;
}

lab_har *lab_test_load_corpus(const char *name) {
  char path[1024], err[512];
  lab_test_corpus_path(name, path, sizeof path);
  lab_har *har = NULL;
  cr_assert_eq(lab_har_load(path, &har, err, sizeof err), 0, "loading %s: %s", name, err);
  return har;
}

lab_har *lab_test_load_string(const char *name, const char *json, char *err, size_t err_size) {
  lab_har *har = NULL;
  if (lab_har_load_buffer(name, json, strlen(json), &har, err, err_size) != 0) return NULL;
  return har;
}

const lab_entry *lab_test_entry_by_url(const lab_har *har, const char *url) {
  for (size_t i = 0; i < har->n_entries; i++)
    if (strcmp(har->entries[i].url, url) == 0) return &har->entries[i];
  return NULL;
}
