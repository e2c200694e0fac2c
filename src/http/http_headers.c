/* http_headers.c — ordered, bounded header field lists with lower-case names, their
 * strings carved from a few chunks per list. */
#define _GNU_SOURCE
#include "http_headers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"

static char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

int http_headers_name_equal(const char *a, size_t a_len, const char *b) {
  /* One pass, no strlen: most names differ in their first bytes. */
  size_t i = 0;
  for (; i < a_len; i++)
    if (b[i] == '\0' || ascii_lower(a[i]) != ascii_lower(b[i])) return 0;
  return b[i] == '\0';
}

/* Names and values are carved from chunks: the first holds a typical request's fields;
 * each further one doubles, up to CHUNK_MAX (larger strings get a chunk of their own). */
#define CHUNK_FIRST 960u /* with the chunk header, within glibc's per-thread cache (1,032 B) */
#define CHUNK_MAX 16384u

struct http_headers_chunk {
  http_headers_chunk *next;
  size_t used, cap;
  char data[];
};

/* n bytes from the newest chunk, or from a new one. NULL: no memory. */
static char *carve(http_headers *headers, size_t n) {
  http_headers_chunk *c = headers->chunks;
  if (c != NULL && n <= c->cap - c->used) {
    char *p = c->data + c->used;
    c->used += n;
    return p;
  }
  size_t cap = c == NULL || c->cap < CHUNK_FIRST / 2 ? CHUNK_FIRST
               : c->cap < CHUNK_MAX                  ? c->cap * 2
                                                     : CHUNK_MAX;
  if (cap < n) cap = n;
  if (cap > SIZE_MAX - sizeof(http_headers_chunk)) return NULL;
  http_headers_chunk *fresh = malloc(sizeof(http_headers_chunk) + cap);
  if (fresh == NULL) return NULL;
  fresh->cap = cap;
  fresh->used = n;
  /* A large one-off string goes behind the current chunk, which keeps its free room. */
  if (c != NULL && cap - n < c->cap - c->used) {
    fresh->next = c->next;
    c->next = fresh;
  } else {
    fresh->next = c;
    headers->chunks = fresh;
  }
  return fresh->data;
}

char *http_headers_strdup(http_headers *headers, const char *s, size_t len) {
  if (len == SIZE_MAX) return NULL;
  char *copy = carve(headers, len + 1);
  if (copy == NULL) return NULL;
  if (len > 0) memcpy(copy, s, len);
  copy[len] = '\0';
  return copy;
}

void http_headers_init(http_headers *headers, size_t max_bytes, size_t max_count) {
  memset(headers, 0, sizeof(*headers));
  headers->max_bytes = max_bytes;
  headers->max_count = max_count;
}

void http_headers_give_room(http_headers *headers, http_header *items, size_t n_items, void *bytes,
                            size_t n_bytes) {
  if (headers->count != 0 || headers->items != NULL || headers->chunks != NULL || items == NULL ||
      n_items == 0 || bytes == NULL || n_bytes <= sizeof(http_headers_chunk))
    return;
  headers->room_items = headers->items = items;
  headers->room_count = headers->capacity = n_items;
  http_headers_chunk *chunk = bytes;
  chunk->next = NULL;
  chunk->used = 0;
  chunk->cap = n_bytes - sizeof(http_headers_chunk);
  headers->room_chunk = headers->chunks = chunk;
}

void http_headers_free(http_headers *headers) {
  while (headers->chunks != NULL) {
    http_headers_chunk *next = headers->chunks->next;
    if (headers->chunks != headers->room_chunk) free(headers->chunks);
    headers->chunks = next;
  }
  if (headers->items != headers->room_items) free(headers->items);
  headers->items = headers->room_items;
  headers->count = headers->bytes = 0;
  headers->capacity = headers->room_count;
  if (headers->room_chunk != NULL) {
    headers->room_chunk->used = 0;
    headers->room_chunk->next = NULL;
    headers->chunks = headers->room_chunk;
  }
}

/* Room for capacity entries: the caller's room is copied out, never realloc'ed. */
static int grow_items(http_headers *headers, size_t capacity) {
  if (capacity > SIZE_MAX / sizeof(http_header)) return HTTP_ERR_NOMEM;
  http_header *items;
  if (headers->items != NULL && headers->items == headers->room_items) {
    items = malloc(capacity * sizeof(http_header));
    if (items != NULL) memcpy(items, headers->items, headers->count * sizeof(http_header));
  } else {
    items = realloc(headers->items, capacity * sizeof(http_header));
  }
  if (items == NULL) return HTTP_ERR_NOMEM;
  headers->items = items;
  headers->capacity = capacity;
  return 0;
}

static int value_is_clean(const char *value, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (value[i] == '\0' || value[i] == '\r' || value[i] == '\n') return 0;
  return 1;
}

static int name_is_clean(const char *name, size_t len) {
  if (len == 0) return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)name[i];
    if (c <= 0x20 || c == 0x7f) return 0;
    if (c == ':' && i > 0) return 0; /* only a pseudo-header starts with ':' */
  }
  return 1;
}

/* Accounts len more bytes, or says which bound stops it. */
static int account(http_headers *headers, size_t len) {
  if (headers->max_bytes != 0 &&
      (len > headers->max_bytes || headers->bytes > headers->max_bytes - len))
    return HTTP_ERR_HEADERS_TOO_LARGE;
  return 0;
}

/* Appends a copy; `checked`: the caller vouches for the name (lower case, clean) and the
 * value (clean), so neither is scanned again. */
static int add_field(http_headers *headers, const char *name, size_t name_len, const char *value,
                     size_t value_len, int checked) {
  if (name == NULL || (value == NULL && value_len > 0)) return HTTP_ERR_INVALID_ARGUMENT;
  if (!checked && (!name_is_clean(name, name_len) || !value_is_clean(value, value_len)))
    return HTTP_ERR_BAD_REQUEST;
  if (checked && name_len == 0) return HTTP_ERR_BAD_REQUEST;
  if (name_len > SIZE_MAX / 2 - value_len) return HTTP_ERR_HEADERS_TOO_LARGE;
  int rv = account(headers, name_len + value_len);
  if (rv != 0) return rv;
  if (headers->max_count != 0 && headers->count >= headers->max_count)
    return HTTP_ERR_HEADERS_TOO_LARGE;
  if (headers->count == headers->capacity) {
    rv = grow_items(headers, headers->capacity == 0 ? 8 : headers->capacity * 2);
    if (rv != 0) return rv;
  }
  char *name_copy = carve(headers, name_len + 1 + value_len + 1);
  if (name_copy == NULL) return HTTP_ERR_NOMEM;
  char *value_copy = name_copy + name_len + 1;
  if (checked)
    memcpy(name_copy, name, name_len);
  else
    for (size_t i = 0; i < name_len; i++) name_copy[i] = ascii_lower(name[i]);
  name_copy[name_len] = '\0';
  if (value_len > 0) memcpy(value_copy, value, value_len);
  value_copy[value_len] = '\0';
  headers->items[headers->count++] = (http_header){name_copy, name_len, value_copy, value_len, 0};
  headers->bytes += name_len + value_len;
  return 0;
}

int http_headers_add(http_headers *headers, const char *name, size_t name_len, const char *value,
                     size_t value_len) {
  return add_field(headers, name, name_len, value, value_len, 0);
}

int http_headers_add_checked(http_headers *headers, const char *name, size_t name_len,
                             const char *value, size_t value_len) {
  return add_field(headers, name, name_len, value, value_len, 1);
}

int http_headers_append_all(http_headers *headers, const http_headers *from) {
  if (headers == NULL || from == NULL || headers == from) return HTTP_ERR_INVALID_ARGUMENT;
  if (from->count == 0) return 0;
  size_t strings = 0;
  for (size_t i = 0; i < from->count; i++)
    strings += from->items[i].name_len + from->items[i].value_len + 2;
  int rv = account(headers, from->bytes);
  if (rv != 0) return rv;
  if (headers->max_count != 0 && from->count > headers->max_count - headers->count)
    return HTTP_ERR_HEADERS_TOO_LARGE;
  if (from->count > headers->capacity - headers->count) {
    size_t capacity = headers->count + from->count;
    rv = grow_items(headers, capacity < 8 ? 8 : capacity);
    if (rv != 0) return rv;
  }
  char *text = carve(headers, strings);
  if (text == NULL) return HTTP_ERR_NOMEM;
  for (size_t i = 0; i < from->count; i++) {
    const http_header *h = &from->items[i];
    char *name = text;
    memcpy(name, h->name, h->name_len + 1);
    char *value = name + h->name_len + 1;
    memcpy(value, h->value, h->value_len + 1);
    text = value + h->value_len + 1;
    headers->items[headers->count++] = (http_header){name, h->name_len, value, h->value_len, 0};
  }
  headers->bytes += from->bytes;
  return 0;
}

int http_headers_add_str(http_headers *headers, const char *name, const char *value) {
  if (name == NULL || value == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  return http_headers_add(headers, name, strlen(name), value, strlen(value));
}

size_t http_headers_remove(http_headers *headers, const char *name) {
  size_t kept = 0, removed = 0;
  for (size_t i = 0; i < headers->count; i++) {
    http_header *h = &headers->items[i];
    if (http_headers_name_equal(h->name, h->name_len, name)) {
      headers->bytes -= h->name_len + h->value_len;
      removed++;
    } else {
      headers->items[kept++] = *h;
    }
  }
  headers->count = kept;
  return removed;
}

int http_headers_set(http_headers *headers, const char *name, const char *value) {
  http_headers_remove(headers, name);
  return http_headers_add_str(headers, name, value);
}

const http_header *http_headers_next(const http_headers *headers, const char *name,
                                     size_t *position) {
  for (size_t i = *position; i < headers->count; i++) {
    const http_header *h = &headers->items[i];
    if (http_headers_name_equal(h->name, h->name_len, name)) {
      *position = i + 1;
      return h;
    }
  }
  *position = headers->count;
  return NULL;
}

const char *http_headers_get(const http_headers *headers, const char *name) {
  size_t position = 0;
  const http_header *h = http_headers_next(headers, name, &position);
  return h == NULL ? NULL : h->value;
}

int http_headers_append_value(http_headers *headers, size_t index, const char *separator,
                              const char *value, size_t value_len) {
  if (index >= headers->count || separator == NULL || (value == NULL && value_len > 0))
    return HTTP_ERR_INVALID_ARGUMENT;
  if (!value_is_clean(value, value_len)) return HTTP_ERR_BAD_REQUEST;
  size_t separator_len = strlen(separator);
  if (value_len > SIZE_MAX / 2 - separator_len) return HTTP_ERR_HEADERS_TOO_LARGE;
  int rv = account(headers, separator_len + value_len);
  if (rv != 0) return rv;
  http_header *h = &headers->items[index];
  size_t new_len = h->value_len + separator_len + value_len;
  char *joined = h->value;
  size_t added = separator_len + value_len;
  if (added <= h->value_room) {
    h->value_room -= added; /* in place */
  } else {
    /* Moved with as much room again, so that n appends copy O(n) bytes, not O(n^2). */
    if (new_len > (SIZE_MAX - 1) / 2) return HTTP_ERR_NOMEM;
    joined = carve(headers, 2 * new_len + 1);
    if (joined == NULL) return HTTP_ERR_NOMEM;
    memcpy(joined, h->value, h->value_len);
    h->value_room = new_len;
  }
  memcpy(joined + h->value_len, separator, separator_len);
  if (value_len > 0) memcpy(joined + h->value_len + separator_len, value, value_len);
  joined[new_len] = '\0';
  h->value = joined;
  h->value_len = new_len;
  headers->bytes += separator_len + value_len;
  return 0;
}
