/* http_headers.h — an ordered list of header fields (name, value) with a size bound.
 *
 * Names are stored lower-case (SPDY requires it; HTTP/1.1 names are case-insensitive).
 * Values are stored as received, NUL-terminated for convenience; a value may not contain
 * NUL, CR or LF (SPDY uses NUL to join values, HTTP/1.1 uses CR LF to end lines). A name
 * may appear several times (Set-Cookie): each occurrence is its own entry, in order.
 *
 * Memory: names and values live in a few chunks owned by the list (a request's or
 * response's fields cost one or two allocations, not two each); removed fields leave their
 * bytes until http_headers_free. Pointers to names and values stay valid until then.
 */
#ifndef SPEEDY_HTTP_HEADERS_H
#define SPEEDY_HTTP_HEADERS_H

#include <stddef.h>

typedef struct http_header {
  char *name; /* lower-case, NUL-terminated */
  size_t name_len;
  char *value; /* NUL-terminated */
  size_t value_len;
  size_t value_room; /* bytes free after the value's NUL, for appends in place */
} http_header;

typedef struct http_headers_chunk http_headers_chunk;

typedef struct http_headers {
  http_header *items;
  http_headers_chunk *chunks; /* the newest first; names and values are carved from it */
  /* Room of the caller's (http_headers_give_room), used first and never freed here. */
  http_header *room_items;
  size_t room_count;
  http_headers_chunk *room_chunk;
  size_t count;
  size_t capacity;
  size_t bytes;     /* sum of name and value lengths */
  size_t max_bytes; /* 0: unlimited */
  size_t max_count; /* 0: unlimited */
} http_headers;

/* An empty list bounded by max_bytes (names + values) and max_count entries (0: no
 * bound). Allocates nothing. */
void http_headers_init(http_headers *headers, size_t max_bytes, size_t max_count);
/* Gives an empty list room of the caller's to start with: entries for n_items fields
 * and bytes (aligned as max_align_t, n_bytes of them) for their names and values. Both
 * stay the caller's and must outlive the list; it allocates only what does not fit. A
 * server that keeps the room inside its per-request record makes one allocation per
 * request instead of three. Ignored when the list is not empty or the room too small. */
void http_headers_give_room(http_headers *headers, http_header *items, size_t n_items, void *bytes,
                            size_t n_bytes);
/* Frees every entry; the list is empty (and still usable, with its room) afterwards. */
void http_headers_free(http_headers *headers);

/* Appends a copy of (name, value), lower-casing the name. Returns 0,
 * HTTP_ERR_BAD_REQUEST (empty name, NUL/CR/LF in name or value, space or ':' inside a
 * name after its first byte), HTTP_ERR_HEADERS_TOO_LARGE (a bound) or HTTP_ERR_NOMEM. */
int http_headers_add(http_headers *headers, const char *name, size_t name_len, const char *value,
                     size_t value_len);
/* http_headers_add for a field its caller has already checked as HTTP/2 requires
 * (RFC 9113 8.2.1: a lower-case name of allowed octets, a value without NUL, CR or LF;
 * libspeedy checks every HTTP/2 field it delivers): copied without being scanned again.
 * The same bounds and errors otherwise. */
int http_headers_add_checked(http_headers *headers, const char *name, size_t name_len,
                             const char *value, size_t value_len);
/* The same for NUL-terminated strings. */
int http_headers_add_str(http_headers *headers, const char *name, const char *value);
/* Appends copies of every field of from, in order (they were checked when added there:
 * one allocation for all their bytes, no checks again). Same bounds and errors as
 * http_headers_add; on error nothing was appended. */
int http_headers_append_all(http_headers *headers, const http_headers *from);
/* Replaces every entry named name by one entry (name, value). */
int http_headers_set(http_headers *headers, const char *name, const char *value);
/* Removes every entry named name; returns how many were removed. */
size_t http_headers_remove(http_headers *headers, const char *name);

/* The value of the first entry named name (case-insensitive), or NULL. */
const char *http_headers_get(const http_headers *headers, const char *name);
/* Index of the next entry named name at or after *position, which is advanced past it;
 * the entry, or NULL when there is none. Start with *position = 0. */
const http_header *http_headers_next(const http_headers *headers, const char *name,
                                     size_t *position);
/* Appends separator and value to the value of entry index (Cookie joining). Same errors
 * as http_headers_add. */
int http_headers_append_value(http_headers *headers, size_t index, const char *separator,
                              const char *value, size_t value_len);

/* A NUL-terminated copy of s (len bytes) carved from the list's chunks: valid until
 * http_headers_free, never freed on its own (a request's method, path, ...). NULL: no
 * memory. Not counted against the list's bounds. */
char *http_headers_strdup(http_headers *headers, const char *s, size_t len);

/* 1 when a and b (a of length a_len, b NUL-terminated) are equal ignoring ASCII case. */
int http_headers_name_equal(const char *a, size_t a_len, const char *b);

#endif
