/* fieldset.c — prepared response heads (see fieldset.h): copied into one allocation,
 * checked once against RFC 9113 section 8 as a final response, and prepared for HPACK
 * (static-table matches, hashes, Huffman-coded literals), so that an HTTP/2 submission
 * costs a reference instead of a check, a copy and an encoding of every string.
 *
 * Memory: one malloc per set (not a session's allocator: a set outlives sessions and is
 * shared by them), at most the fields' octets, their literals and three arrays of n; the
 * list is bounded like a submitted one (16 MiB as SETTINGS_MAX_HEADER_LIST_SIZE counts).
 */
#include "fieldset.h"

#include <stdlib.h>
#include <string.h>

#include "h2_message.h"

#define FIELDSET_MAX_LIST ((size_t)16 * 1024 * 1024)

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

uint8_t *speedy_field_lay_out(speedy_hpack_field *f, const speedy_header *h, uint8_t *at) {
  memcpy(at, h->name, h->name_len);
  f->name = at;
  f->name_len = h->name_len;
  at += h->name_len;
  if (h->value_len > 0) memcpy(at, h->value, h->value_len);
  f->value = at;
  f->value_len = h->value_len;
  f->flags = 0;
  return at + h->value_len;
}

int speedy_fieldset_new(const speedy_header *fields, size_t n, speedy_fieldset **out) {
  if (out == NULL || (n > 0 && fields == NULL)) return SPEEDY_ERR_INVALID_ARGUMENT;
  *out = NULL;
  if (n == 0 || n > FIELDSET_MAX_LIST / 32) return SPEEDY_ERR_INVALID_HEADER;
  size_t octets = 0, literals = 0;
  for (size_t i = 0; i < n; i++) {
    const speedy_header *h = &fields[i];
    if (h->name == NULL || h->name_len == 0 || (h->value == NULL && h->value_len > 0) ||
        h->name_len > FIELDSET_MAX_LIST || h->value_len > FIELDSET_MAX_LIST)
      return SPEEDY_ERR_INVALID_HEADER;
    octets += h->name_len + h->value_len;
    if (octets + 32 * n > FIELDSET_MAX_LIST) return SPEEDY_ERR_INVALID_HEADER;
    speedy_hpack_field f = {(const uint8_t *)h->name, h->name_len, (const uint8_t *)h->value,
                            h->value_len, 0};
    literals += speedy_hpack_hint_storage(&f);
  }
  size_t at_headers = align8(sizeof(speedy_fieldset));
  size_t at_fields = at_headers + align8(n * sizeof(speedy_header));
  size_t at_hints = at_fields + align8(n * sizeof(speedy_hpack_field));
  size_t at_octets = at_hints + align8(n * sizeof(speedy_hpack_hint));
  size_t total = at_octets + octets + literals;
  uint8_t *base = malloc(total);
  if (base == NULL) return SPEEDY_ERR_NOMEM;
  speedy_fieldset *set = (speedy_fieldset *)(void *)base;
  memset(set, 0, sizeof(*set));
  atomic_init(&set->refs, 1);
  set->n = n;
  set->headers = (speedy_header *)(void *)(base + at_headers);
  set->fields = (speedy_hpack_field *)(void *)(base + at_fields);
  set->hints = (speedy_hpack_hint *)(void *)(base + at_hints);
  set->list_size = octets + 32 * n;
  uint8_t *at = base + at_octets;
  speedy_h2_message message;
  speedy_h2_message_begin(&message, SPEEDY_H2_MSG_RESPONSE);
  size_t k = 0;
  /* Pseudo-header fields first, then the others, each in the order given (as a
   * submitted list is laid out). */
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      const speedy_header *h = &fields[i];
      if (speedy_h2_is_pseudo((const uint8_t *)h->name, h->name_len) != (pass == 0)) continue;
      speedy_hpack_field *f = &set->fields[k];
      at = speedy_field_lay_out(f, h, at);
      set->headers[i] =
          (speedy_header){(const char *)f->name, f->name_len, (const char *)f->value, f->value_len};
      if (f->name_len == 8 && memcmp(f->name, "priority", 8) == 0) set->has_priority = 1;
      speedy_h2_message_field(&message, f->name, f->name_len, f->value, f->value_len);
      k++;
    }
  }
  for (size_t i = 0; i < n; i++) {
    speedy_hpack_hint_init(&set->fields[i], &set->hints[i], at);
    at += set->hints[i].name_literal_len + set->hints[i].value_literal_len;
  }
  if (speedy_h2_message_end(&message) != 0 || message.status < 200) {
    free(base);
    return SPEEDY_ERR_INVALID_HEADER;
  }
  set->status = message.status;
  set->no_content = message.status == 204 || message.status == 304;
  *out = set;
  return 0;
}

void speedy_fieldset_retain(speedy_fieldset *set) {
  atomic_fetch_add_explicit(&set->refs, 1, memory_order_relaxed);
}

void speedy_fieldset_release(speedy_fieldset *set) {
  if (set == NULL) return;
  if (atomic_fetch_sub_explicit(&set->refs, 1, memory_order_acq_rel) == 1) free(set);
}
