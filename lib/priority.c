/* priority.c — RFC 9218 priority parameters from a Structured Fields Dictionary (see
 * priority.h). The parser follows RFC 8941 section 4.2: every member is parsed (inner
 * lists, parameters and all bare item types), so that a malformed value is refused as a
 * whole, and only u and i are kept.
 */
#include "priority.h"

typedef struct sf_input {
  const uint8_t *p;
  const uint8_t *end;
} sf_input;

/* A bare item's type and, for integers and booleans, its value. */
typedef enum sf_type { SF_INTEGER, SF_DECIMAL, SF_STRING, SF_TOKEN, SF_BYTES, SF_BOOLEAN } sf_type;

typedef struct sf_item {
  sf_type type;
  int64_t integer; /* SF_INTEGER, SF_BOOLEAN */
} sf_item;

static int at_end(const sf_input *in) { return in->p == in->end; }
static int peek(const sf_input *in) { return at_end(in) ? -1 : *in->p; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_lcalpha(int c) { return c >= 'a' && c <= 'z'; }
static int is_alpha(int c) { return is_lcalpha(c) || (c >= 'A' && c <= 'Z'); }

static void skip_sp(sf_input *in) {
  while (peek(in) == ' ') in->p++;
}

static void skip_ows(sf_input *in) {
  while (peek(in) == ' ' || peek(in) == '\t') in->p++;
}

/* tchar (RFC 9110 5.6.2). */
static int is_tchar(int c) {
  if (is_alpha(c) || is_digit(c)) return 1;
  switch (c) {
  case '!':
  case '#':
  case '$':
  case '%':
  case '&':
  case '\'':
  case '*':
  case '+':
  case '-':
  case '.':
  case '^':
  case '_':
  case '`':
  case '|':
  case '~':
    return 1;
  default:
    return 0;
  }
}

/* sf-key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ). *key_len: its
 * length (the key starts at the returned pointer). NULL when there is no key. */
static const uint8_t *parse_key(sf_input *in, size_t *key_len) {
  int c = peek(in);
  if (!is_lcalpha(c) && c != '*') return NULL;
  const uint8_t *start = in->p;
  while ((c = peek(in)) >= 0 &&
         (is_lcalpha(c) || is_digit(c) || c == '_' || c == '-' || c == '.' || c == '*'))
    in->p++;
  *key_len = (size_t)(in->p - start);
  return start;
}

static int parse_number(sf_input *in, sf_item *out) {
  int negative = 0;
  if (peek(in) == '-') {
    negative = 1;
    in->p++;
  }
  if (!is_digit(peek(in))) return -1;
  int64_t value = 0;
  size_t digits = 0, fraction = 0;
  int decimal = 0;
  for (int c; (c = peek(in)) >= 0;) {
    if (is_digit(c)) {
      if (decimal) {
        if (++fraction > 3) return -1;
      } else {
        if (++digits > 15) return -1;
        value = value * 10 + (c - '0');
      }
    } else if (c == '.' && !decimal) {
      if (digits > 12) return -1;
      decimal = 1;
    } else {
      break;
    }
    in->p++;
  }
  if (decimal && fraction == 0) return -1;
  out->type = decimal ? SF_DECIMAL : SF_INTEGER;
  out->integer = negative ? -value : value;
  return 0;
}

static int parse_string(sf_input *in) {
  in->p++; /* the opening DQUOTE */
  for (int c; (c = peek(in)) >= 0;) {
    in->p++;
    if (c == '"') return 0;
    if (c == '\\') {
      c = peek(in);
      if (c != '"' && c != '\\') return -1;
      in->p++;
    } else if (c < 0x20 || c > 0x7e) {
      return -1;
    }
  }
  return -1; /* no closing DQUOTE */
}

static int parse_bytes(sf_input *in) {
  in->p++; /* the opening colon */
  for (int c; (c = peek(in)) >= 0;) {
    in->p++;
    if (c == ':') return 0;
    if (!is_alpha(c) && !is_digit(c) && c != '+' && c != '/' && c != '=') return -1;
  }
  return -1;
}

static int parse_bare_item(sf_input *in, sf_item *out) {
  int c = peek(in);
  if (c == '-' || is_digit(c)) return parse_number(in, out);
  if (c == '"') {
    out->type = SF_STRING;
    return parse_string(in);
  }
  if (c == '*' || is_alpha(c)) {
    while ((c = peek(in)) >= 0 && (is_tchar(c) || c == ':' || c == '/')) in->p++;
    out->type = SF_TOKEN;
    return 0;
  }
  if (c == ':') {
    out->type = SF_BYTES;
    return parse_bytes(in);
  }
  if (c == '?') {
    in->p++;
    c = peek(in);
    if (c != '0' && c != '1') return -1;
    in->p++;
    out->type = SF_BOOLEAN;
    out->integer = c == '1';
    return 0;
  }
  return -1;
}

/* *( ";" *SP key [ "=" bare-item ] ), all parsed and dropped. */
static int parse_parameters(sf_input *in) {
  while (peek(in) == ';') {
    in->p++;
    skip_sp(in);
    size_t key_len;
    if (parse_key(in, &key_len) == NULL) return -1;
    if (peek(in) == '=') {
      in->p++;
      sf_item ignored;
      if (parse_bare_item(in, &ignored) != 0) return -1;
    }
  }
  return 0;
}

/* An item or an inner list; *item is set for an item (*is_item = 1). */
static int parse_member_value(sf_input *in, sf_item *item, int *is_item) {
  if (peek(in) != '(') {
    *is_item = 1;
    return parse_bare_item(in, item) != 0 ? -1 : parse_parameters(in);
  }
  *is_item = 0;
  in->p++;
  for (;;) {
    skip_sp(in);
    if (peek(in) == ')') {
      in->p++;
      return parse_parameters(in);
    }
    sf_item inner;
    if (parse_bare_item(in, &inner) != 0 || parse_parameters(in) != 0) return -1;
    int c = peek(in);
    if (c != ' ' && c != ')') return -1;
  }
}

int speedy_priority_parse(const uint8_t *value, size_t len, speedy_priority *out) {
  speedy_priority result = {SPEEDY_PRIORITY_DEFAULT_URGENCY, 0};
  *out = result;
  if (value == NULL) return len == 0 ? 0 : -1;
  sf_input in = {value, value + len};
  skip_sp(&in); /* a field value's leading and trailing spaces are not part of it */
  while (in.end > in.p && in.end[-1] == ' ') in.end--;
  while (!at_end(&in)) {
    size_t key_len;
    const uint8_t *key = parse_key(&in, &key_len);
    if (key == NULL) return -1;
    sf_item item = {SF_BOOLEAN, 1}; /* a key alone is Boolean true */
    int is_item = 1;
    if (peek(&in) == '=') {
      in.p++;
      if (parse_member_value(&in, &item, &is_item) != 0) return -1;
    } else if (parse_parameters(&in) != 0) {
      return -1;
    }
    /* The last value of a key wins; ill-typed or out-of-range values are ignored. */
    if (key_len == 1 && key[0] == 'u' && is_item && item.type == SF_INTEGER && item.integer >= 0 &&
        item.integer <= 7)
      result.urgency = (uint8_t)item.integer;
    if (key_len == 1 && key[0] == 'i' && is_item && item.type == SF_BOOLEAN)
      result.incremental = (uint8_t)item.integer;
    skip_ows(&in);
    if (at_end(&in)) break;
    if (peek(&in) != ',') return -1;
    in.p++;
    skip_ows(&in);
    if (at_end(&in)) return -1; /* a trailing comma */
  }
  *out = result;
  return 0;
}
