/* fieldset.h — speedy_fieldset: a response head checked and laid out once, submitted many
 * times (see speedy.h, "Prepared responses"). Shared by sessions: immutable after
 * speedy_fieldset_new, kept alive by a reference count that submissions hold until their
 * frame is serialised or dropped.
 */
#ifndef SPEEDY_LIB_FIELDSET_H
#define SPEEDY_LIB_FIELDSET_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "hpack.h"
#include "speedy/speedy.h"

struct speedy_fieldset {
  atomic_size_t refs;
  size_t n;
  /* The fields in the order given, for codecs that check and lay out a list on every
   * submission (SPDY). */
  speedy_header *headers;
  /* HTTP/2: the same fields for HPACK in HTTP/2's order (pseudo-header fields first),
   * each with its hint. */
  speedy_hpack_field *fields;
  speedy_hpack_hint *hints;
  size_t list_size;     /* as SETTINGS_MAX_HEADER_LIST_SIZE counts it (RFC 9113 6.5.2) */
  uint16_t status;      /* the final status, 200-599 */
  uint8_t no_content;   /* a 204 or 304: no body may follow (RFC 9110 6.4.1) */
  uint8_t has_priority; /* a priority field among them */
};

/* Copies h's name and value to at, one after the other, and points f at the copies (no
 * flags). Returns the end of what was written. Shared by the HTTP/2 codec's lay-out of a
 * submitted list and speedy_fieldset_new. */
uint8_t *speedy_field_lay_out(speedy_hpack_field *f, const speedy_header *h, uint8_t *at);

/* Takes one more reference (a submission's). */
void speedy_fieldset_retain(speedy_fieldset *set);

#endif
