/* hpack_testutil.h — what the HPACK tests (test_hpack*.c) share: a decoder callback that
 * collects the fields, comparisons, hex, encoders and decoders on the counting allocator
 * (testutil.h), encode and decode in one call, and a small deterministic generator.
 * Failures are Criterion assertions, so these run inside a test only.
 */
#ifndef SPEEDY_TEST_HPACK_TESTUTIL_H
#define SPEEDY_TEST_HPACK_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "hpack.h"

typedef struct got_field {
  uint8_t *name, *value;
  size_t name_len, value_len;
  unsigned flags;
} got_field;

typedef struct got_list {
  got_field *fields;
  size_t n, cap;
  uint64_t list_bytes; /* name + value + 32 per field */
  int fail_at;         /* 1-based field whose callback fails with -42; 0 never */
} got_list;

/* A speedy_hpack_decode callback: appends a copy of the field to the got_list `user`. */
int collect(void *user, const speedy_hpack_field *f);
/* Empties the list (keeps its array); got_free also frees the array. */
void got_reset(got_list *g);
void got_free(got_list *g);

int bytes_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len);
/* Compares what was decoded with the fields expected; where names the case. */
void check_fields(const got_list *g, const speedy_hpack_field *want, size_t n, const char *where);
/* Hex with optional spaces into out; returns the octets. */
size_t unhex(const char *hex, uint8_t *out);
/* A field over the two strings (not copied). */
speedy_hpack_field field_of(const char *name, const char *value, unsigned flags);

/* Every test that makes an encoder or a decoder starts with mem_setup() (the counting
 * allocator) and ends with mem_check() (nothing leaked). */
void mem_setup(void);
void mem_check(void);
speedy_hpack_decoder *decoder_new(void);
speedy_hpack_encoder *encoder_new(void);

/* Encodes into a buffer of the bound's size (malloc'd into *out: the caller frees it);
 * returns the length. */
size_t encode(speedy_hpack_encoder *e, const speedy_hpack_field *fields, size_t n, uint8_t **out);
/* Decodes one whole block, or a byte at a time when bytewise. */
int decode(speedy_hpack_decoder *d, const uint8_t *in, size_t len, got_list *g, int bytewise);

/* A small deterministic generator: set rng_state, then call rng(). */
extern uint64_t rng_state;
uint32_t rng(void);

#endif
