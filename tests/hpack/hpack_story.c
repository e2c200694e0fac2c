/* hpack_story.c — reads and writes hpack-test-case stories (see hpack_story.h). */
#define _POSIX_C_SOURCE 200809L

#include "hpack_story.h"

#include <dirent.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

__attribute__((format(printf, 3, 4))) static int fail(char *err, size_t err_size,
                                                      const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(err, err_size, format, ap);
  va_end(ap);
  return -1;
}

static int hex_value(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static uint8_t *copy_bytes(const char *s, size_t len) {
  uint8_t *p = malloc(len + 1);
  if (p == NULL) return NULL;
  memcpy(p, s, len);
  p[len] = 0;
  return p;
}

static int load_case(json_t *jcase, hpack_story_case *c, char *err, size_t err_size) {
  json_t *size = json_object_get(jcase, "header_table_size");
  if (size != NULL) {
    if (!json_is_integer(size) || json_integer_value(size) < 0 ||
        json_integer_value(size) > UINT32_MAX)
      return fail(err, err_size, "bad header_table_size");
    c->has_table_size = 1;
    c->table_size = (uint32_t)json_integer_value(size);
  }
  json_t *wire = json_object_get(jcase, "wire");
  if (wire != NULL) {
    const char *hex = json_string_value(wire);
    size_t len = hex ? strlen(hex) : 1;
    if (len % 2 != 0) return fail(err, err_size, "bad wire");
    c->wire = malloc(len / 2 + 1);
    if (c->wire == NULL) return fail(err, err_size, "out of memory");
    for (size_t i = 0; i < len / 2; i++) {
      int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
      if (hi < 0 || lo < 0) return fail(err, err_size, "bad hex in wire");
      c->wire[i] = (uint8_t)(hi << 4 | lo);
    }
    c->wire_len = len / 2;
  }
  json_t *headers = json_object_get(jcase, "headers");
  if (!json_is_array(headers)) return fail(err, err_size, "no headers array");
  size_t n = json_array_size(headers);
  c->fields = calloc(n ? n : 1, sizeof *c->fields);
  if (c->fields == NULL) return fail(err, err_size, "out of memory");
  for (size_t i = 0; i < n; i++) {
    json_t *h = json_array_get(headers, i);
    if (!json_is_object(h) || json_object_size(h) != 1)
      return fail(err, err_size, "header %zu is not a one-field object", i);
    const char *name;
    json_t *value;
    json_object_foreach(h, name, value) {
      if (!json_is_string(value)) return fail(err, err_size, "header %s has no string value", name);
      speedy_hpack_field *f = &c->fields[c->n_fields++];
      f->name_len = strlen(name);
      f->name = copy_bytes(name, f->name_len);
      f->value_len = json_string_length(value);
      f->value = copy_bytes(json_string_value(value), f->value_len);
      if (f->name == NULL || f->value == NULL) return fail(err, err_size, "out of memory");
    }
  }
  return 0;
}

int hpack_story_load(const char *path, hpack_story *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (root == NULL) return fail(err, err_size, "%s:%d: %s", path, jerr.line, jerr.text);
  json_t *cases = json_object_get(root, "cases");
  int rc = 0;
  if (!json_is_array(cases)) {
    rc = fail(err, err_size, "%s: no cases array", path);
  } else {
    out->cases = calloc(json_array_size(cases) + 1, sizeof *out->cases);
    if (out->cases == NULL) rc = fail(err, err_size, "out of memory");
    for (size_t i = 0; rc == 0 && i < json_array_size(cases); i++) {
      out->n_cases++;
      char why[200];
      if (load_case(json_array_get(cases, i), &out->cases[i], why, sizeof why) != 0)
        rc = fail(err, err_size, "%s: case %zu: %s", path, i, why);
    }
  }
  json_decref(root);
  if (rc != 0) hpack_story_free(out);
  return rc;
}

void hpack_story_free(hpack_story *story) {
  for (size_t i = 0; i < story->n_cases; i++) {
    hpack_story_case *c = &story->cases[i];
    for (size_t j = 0; j < c->n_fields; j++) {
      free((void *)c->fields[j].name);
      free((void *)c->fields[j].value);
    }
    free(c->fields);
    free(c->wire);
  }
  free(story->cases);
  memset(story, 0, sizeof *story);
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int hpack_story_list(const char *dir, char ***paths) {
  DIR *d = opendir(dir);
  if (d == NULL) return -1;
  char **list = NULL;
  int n = 0, cap = 0;
  struct dirent *ent;
  while ((ent = readdir(d)) != NULL) {
    size_t len = strlen(ent->d_name);
    if (len < 6 || strcmp(ent->d_name + len - 5, ".json") != 0) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(list, (size_t)cap * sizeof *list);
      if (grown == NULL) break;
      list = grown;
    }
    size_t size = strlen(dir) + len + 2;
    list[n] = malloc(size);
    if (list[n] == NULL) break;
    snprintf(list[n], size, "%s/%s", dir, ent->d_name);
    n++;
  }
  closedir(d);
  if (n > 0) qsort(list, (size_t)n, sizeof *list, compare_strings);
  *paths = list;
  return n;
}

void hpack_story_list_free(char **paths, int n) {
  for (int i = 0; i < n; i++) free(paths[i]);
  free(paths);
}

int hpack_story_write(const char *path, const char *description, const hpack_story *story,
                      uint8_t *const *wire, const size_t *wire_len) {
  json_t *root = json_object();
  json_t *cases = json_array();
  json_object_set_new(root, "description", json_string(description));
  json_object_set_new(root, "cases", cases);
  for (size_t i = 0; i < story->n_cases; i++) {
    const hpack_story_case *c = &story->cases[i];
    json_t *jcase = json_object();
    json_object_set_new(jcase, "seqno", json_integer((json_int_t)i));
    if (i == 0 || c->has_table_size)
      json_object_set_new(jcase, "header_table_size",
                          json_integer(c->has_table_size ? c->table_size : 4096));
    char *hex = malloc(wire_len[i] * 2 + 1);
    if (hex == NULL) {
      json_decref(jcase);
      json_decref(root);
      return -1;
    }
    for (size_t k = 0; k < wire_len[i]; k++) snprintf(hex + 2 * k, 3, "%02x", wire[i][k]);
    hex[wire_len[i] * 2] = 0;
    json_object_set_new(jcase, "wire", json_string(hex));
    free(hex);
    json_t *headers = json_array();
    for (size_t j = 0; j < c->n_fields; j++) {
      json_t *h = json_object();
      json_object_setn_new(h, (const char *)c->fields[j].name, c->fields[j].name_len,
                           json_stringn((const char *)c->fields[j].value, c->fields[j].value_len));
      json_array_append_new(headers, h);
    }
    json_object_set_new(jcase, "headers", headers);
    json_array_append_new(cases, jcase);
  }
  int rc = json_dump_file(root, path, JSON_INDENT(2)) == 0 ? 0 : -1;
  json_decref(root);
  return rc;
}

const char *hpack_story_root(void) {
  static char path[4096];
  const char *shared = getenv("SPEEDY_SHARED_DIR");
  const char *candidates[2] = {shared, "../shared"};
  for (int i = 0; i < 2; i++) {
    if (candidates[i] == NULL) continue;
    snprintf(path, sizeof path, "%s/spec/h2/hpack-test-case", candidates[i]);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return path;
  }
  return NULL;
}
