/* http_range.c — single byte-range parsing with overflow-proof arithmetic. */
#define _GNU_SOURCE
#include "http_range.h"

#include <string.h>
#include <strings.h>

/* Parses 1*DIGIT at *p. Returns 1 and *out (UINT64_MAX with *overflow = 1 when the
 * number does not fit), or 0 when there is no digit. */
static int parse_number(const char **p, uint64_t *out, int *overflow) {
  const char *s = *p;
  uint64_t n = 0;
  *overflow = 0;
  if (*s < '0' || *s > '9') return 0;
  for (; *s >= '0' && *s <= '9'; s++) {
    unsigned digit = (unsigned)(*s - '0');
    if (n > (UINT64_MAX - digit) / 10) *overflow = 1;
    if (!*overflow) n = n * 10 + digit;
  }
  *out = *overflow ? UINT64_MAX : n;
  *p = s;
  return 1;
}

static void skip_spaces(const char **p) {
  while (**p == ' ' || **p == '\t') (*p)++;
}

http_range_result http_range_parse(const char *value, uint64_t size, uint64_t *first,
                                   uint64_t *length) {
  if (value == NULL) return HTTP_RANGE_NONE;
  const char *p = value;
  skip_spaces(&p);
  if (strncasecmp(p, "bytes", 5) != 0) return HTTP_RANGE_NONE;
  p += 5;
  skip_spaces(&p);
  if (*p != '=') return HTTP_RANGE_NONE;
  p++;
  skip_spaces(&p);
  if (strchr(p, ',') != NULL) {
    /* Several ranges (or an empty list element): the whole file. */
    return HTTP_RANGE_MULTIPLE;
  }
  uint64_t a = 0, b = 0;
  int a_overflow = 0, b_overflow = 0;
  int have_a = parse_number(&p, &a, &a_overflow);
  skip_spaces(&p);
  if (*p != '-') return HTTP_RANGE_NONE;
  p++;
  skip_spaces(&p);
  int have_b = parse_number(&p, &b, &b_overflow);
  skip_spaces(&p);
  if (*p != '\0' || (!have_a && !have_b)) return HTTP_RANGE_NONE;

  if (!have_a) {
    /* bytes=-n: the last n bytes (all of them when n >= size). */
    if (b == 0) return HTTP_RANGE_UNSATISFIABLE;
    /* RFC 9110 14.1.1: satisfiable for an empty file, yet no Content-Range can say so:
     * the whole (empty) file. */
    if (size == 0) return HTTP_RANGE_NONE;
    uint64_t n = b > size ? size : b;
    *first = size - n;
    *length = n;
    return HTTP_RANGE_SATISFIABLE;
  }
  if (have_b && b < a) return HTTP_RANGE_NONE; /* RFC 7233 2.1: invalid, ignored */
  if (a_overflow || a >= size) return HTTP_RANGE_UNSATISFIABLE;
  uint64_t last = size - 1;
  if (have_b && !b_overflow && b < last) last = b;
  *first = a;
  *length = last - a + 1; /* a <= last < size: no wrap */
  return HTTP_RANGE_SATISFIABLE;
}
