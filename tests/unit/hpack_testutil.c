/* hpack_testutil.c — what the HPACK tests (test_hpack*.c) share: a decoder callback that
 * collects the fields, comparisons, hex, encoders and decoders on the counting allocator,
 * encode and decode in one call, and a small deterministic generator.
 */
#include "hpack_testutil.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

int collect(void *user, const speedy_hpack_field *f) {
  got_list *g = user;
  if (g->n == g->cap) {
    g->cap = g->cap ? g->cap * 2 : 16;
    g->fields = realloc(g->fields, g->cap * sizeof *g->fields);
    cr_assert_not_null(g->fields);
  }
  got_field *c = &g->fields[g->n++];
  c->name = malloc(f->name_len + 1);
  c->value = malloc(f->value_len + 1);
  cr_assert(c->name != NULL && c->value != NULL);
  if (f->name_len) memcpy(c->name, f->name, f->name_len);
  if (f->value_len) memcpy(c->value, f->value, f->value_len);
  c->name[f->name_len] = c->value[f->value_len] = 0;
  c->name_len = f->name_len;
  c->value_len = f->value_len;
  c->flags = f->flags;
  g->list_bytes += f->name_len + f->value_len + 32;
  if (g->fail_at != 0 && (size_t)g->fail_at == g->n) return -42;
  return 0;
}

void got_reset(got_list *g) {
  for (size_t i = 0; i < g->n; i++) {
    free(g->fields[i].name);
    free(g->fields[i].value);
  }
  g->n = 0;
  g->list_bytes = 0;
}

void got_free(got_list *g) {
  got_reset(g);
  free(g->fields);
  memset(g, 0, sizeof *g);
}

int bytes_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len) {
  return a_len == b_len && (a_len == 0 || memcmp(a, b, a_len) == 0);
}

/* Compares what was decoded with the fields expected; where names the case. */
void check_fields(const got_list *g, const speedy_hpack_field *want, size_t n, const char *where) {
  cr_assert_eq(g->n, n, "%s: %zu fields decoded, %zu expected", where, g->n, n);
  for (size_t i = 0; i < n; i++) {
    cr_assert(
        bytes_equal(g->fields[i].name, g->fields[i].name_len, want[i].name, want[i].name_len) &&
            bytes_equal(g->fields[i].value, g->fields[i].value_len, want[i].value,
                        want[i].value_len),
        "%s: field %zu is \"%.*s: %.*s\", expected \"%.*s: %.*s\"", where, i,
        (int)g->fields[i].name_len, g->fields[i].name, (int)g->fields[i].value_len,
        g->fields[i].value, (int)want[i].name_len, want[i].name, (int)want[i].value_len,
        want[i].value);
  }
}

/* Hex with optional spaces into out; returns the octets. */
size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  int half = -1;
  for (const char *p = hex; *p; p++) {
    int v;
    if (*p >= '0' && *p <= '9')
      v = *p - '0';
    else if (*p >= 'a' && *p <= 'f')
      v = *p - 'a' + 10;
    else
      continue;
    if (half < 0) {
      half = v;
    } else {
      out[n++] = (uint8_t)(half << 4 | v);
      half = -1;
    }
  }
  return n;
}

speedy_hpack_field field_of(const char *name, const char *value, unsigned flags) {
  return (speedy_hpack_field){(const uint8_t *)name, strlen(name), (const uint8_t *)value,
                              strlen(value), flags};
}

static speedy_mem test_mem;

void mem_setup(void) { test_alloc_mem(&test_mem); }

void mem_check(void) { cr_assert_eq(test_alloc_live(), 0, "%zu blocks leaked", test_alloc_live()); }

speedy_hpack_decoder *decoder_new(void) {
  speedy_hpack_decoder *d;
  cr_assert_eq(speedy_hpack_decoder_new(&test_mem, &d), 0);
  return d;
}

speedy_hpack_encoder *encoder_new(void) {
  speedy_hpack_encoder *e;
  cr_assert_eq(speedy_hpack_encoder_new(&test_mem, &e), 0);
  return e;
}

/* Encodes into a buffer of the bound's size; returns the length. */
size_t encode(speedy_hpack_encoder *e, const speedy_hpack_field *fields, size_t n, uint8_t **out) {
  size_t bound = speedy_hpack_encode_bound(e, fields, n);
  cr_assert_gt(bound, 0);
  *out = malloc(bound);
  int64_t len = speedy_hpack_encode(e, fields, n, *out, bound);
  cr_assert_geq(len, 0, "encode: %s", speedy_hpack_strerror((int)len));
  return (size_t)len;
}

/* Decodes one whole block, or a byte at a time when bytewise. */
int decode(speedy_hpack_decoder *d, const uint8_t *in, size_t len, got_list *g, int bytewise) {
  if (!bytewise) return speedy_hpack_decode(d, in, len, 1, collect, g);
  for (size_t i = 0; i < len; i++) {
    int rc = speedy_hpack_decode(d, in + i, 1, 0, collect, g);
    if (rc != 0) return rc;
  }
  return speedy_hpack_decode(d, NULL, 0, 1, collect, g);
}

/* A small deterministic generator. */
uint64_t rng_state;
uint32_t rng(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}
