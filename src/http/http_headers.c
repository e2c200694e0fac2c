/* http_headers.c — ordered, bounded header field lists with lower-case names. */
#define _GNU_SOURCE
#include "http_headers.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"

static char ascii_lower(char c) { return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c; }

int http_headers_name_equal(const char *a, size_t a_len, const char *b) {
  size_t b_len = strlen(b);
  if (a_len != b_len) return 0;
  for (size_t i = 0; i < a_len; i++)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return 0;
  return 1;
}

void http_headers_init(http_headers *headers, size_t max_bytes, size_t max_count) {
  memset(headers, 0, sizeof(*headers));
  headers->max_bytes = max_bytes;
  headers->max_count = max_count;
}

void http_headers_free(http_headers *headers) {
  for (size_t i = 0; i < headers->count; i++) {
    free(headers->items[i].name);
    free(headers->items[i].value);
  }
  free(headers->items);
  headers->items = NULL;
  headers->count = headers->capacity = headers->bytes = 0;
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

int http_headers_add(http_headers *headers, const char *name, size_t name_len, const char *value,
                     size_t value_len) {
  if (name == NULL || (value == NULL && value_len > 0)) return HTTP_ERR_INVALID_ARGUMENT;
  if (!name_is_clean(name, name_len) || !value_is_clean(value, value_len))
    return HTTP_ERR_BAD_REQUEST;
  if (name_len > SIZE_MAX / 2 - value_len) return HTTP_ERR_HEADERS_TOO_LARGE;
  int rv = account(headers, name_len + value_len);
  if (rv != 0) return rv;
  if (headers->max_count != 0 && headers->count >= headers->max_count)
    return HTTP_ERR_HEADERS_TOO_LARGE;
  if (headers->count == headers->capacity) {
    size_t capacity = headers->capacity == 0 ? 8 : headers->capacity * 2;
    if (capacity > SIZE_MAX / sizeof(http_header)) return HTTP_ERR_NOMEM;
    http_header *items = realloc(headers->items, capacity * sizeof(http_header));
    if (items == NULL) return HTTP_ERR_NOMEM;
    headers->items = items;
    headers->capacity = capacity;
  }
  char *name_copy = malloc(name_len + 1);
  char *value_copy = malloc(value_len + 1);
  if (name_copy == NULL || value_copy == NULL) {
    free(name_copy);
    free(value_copy);
    return HTTP_ERR_NOMEM;
  }
  for (size_t i = 0; i < name_len; i++) name_copy[i] = ascii_lower(name[i]);
  name_copy[name_len] = '\0';
  if (value_len > 0) memcpy(value_copy, value, value_len);
  value_copy[value_len] = '\0';
  headers->items[headers->count++] = (http_header){name_copy, name_len, value_copy, value_len};
  headers->bytes += name_len + value_len;
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
      free(h->name);
      free(h->value);
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
  char *joined = realloc(h->value, new_len + 1);
  if (joined == NULL) return HTTP_ERR_NOMEM;
  memcpy(joined + h->value_len, separator, separator_len);
  if (value_len > 0) memcpy(joined + h->value_len + separator_len, value, value_len);
  joined[new_len] = '\0';
  h->value = joined;
  h->value_len = new_len;
  headers->bytes += separator_len + value_len;
  return 0;
}
