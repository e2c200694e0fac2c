/* h2_message.c — HTTP/2 message rules (RFC 9113 8.1-8.5), field by field (see
 * h2_message.h). Each check cites its section.
 */
#include "h2_message.h"

#include "hpack.h"

#include <stdint.h>
#include <string.h>

static int name_is(const uint8_t *name, size_t len, const char *want) {
  size_t n = strlen(want);
  return len == n && memcmp(name, want, n) == 0;
}

static int malformed(speedy_h2_message *m, const char *why) {
  if (!m->malformed) m->why = why;
  m->malformed = 1;
  return -1;
}

void speedy_h2_message_begin(speedy_h2_message *m, speedy_h2_message_kind kind) {
  memset(m, 0, sizeof(*m));
  m->kind = kind;
  m->content_length = -1;
  m->priority.urgency = SPEEDY_PRIORITY_DEFAULT_URGENCY;
}

/* 8.2.1: the octets a field name may hold after its first: none of 0x00-0x20, upper case,
 * 0x7f-0xff or the colon. A table, so that the loop below is one load per octet (names
 * are checked on every field sent and received). */
#define NAME_OCTET(c) ((c) > 0x20 && (c) < 0x7f && !((c) >= 0x41 && (c) <= 0x5a) && (c) != ':')
#define NAME_OCTETS4(c) NAME_OCTET(c), NAME_OCTET(c + 1), NAME_OCTET(c + 2), NAME_OCTET(c + 3)
#define NAME_OCTETS16(c)                                                                           \
  NAME_OCTETS4(c), NAME_OCTETS4(c + 4), NAME_OCTETS4(c + 8), NAME_OCTETS4(c + 12)
#define NAME_OCTETS64(c)                                                                           \
  NAME_OCTETS16(c), NAME_OCTETS16(c + 16), NAME_OCTETS16(c + 32), NAME_OCTETS16(c + 48)
static const uint8_t name_octet_ok[256] = {NAME_OCTETS64(0), NAME_OCTETS64(64), NAME_OCTETS64(128),
                                           NAME_OCTETS64(192)};

/* Word-at-a-time tests on the eight octets of w (each exact as a yes/no): one of them is
 * b; one is below n (n <= 0x80). */
static int word_has_octet(uint64_t w, uint8_t b);
static int word_has_below(uint64_t w, uint8_t n) {
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  return ((w - ones * n) & ~w & highs) != 0;
}

/* 1 when one of the eight octets of w may not be in a field name after its first (see
 * name_octet_ok): 0x80-0xff, 0x7f, ':', 0x00-0x20 or upper case. */
static int word_has_bad_name_octet(uint64_t w) {
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  if (w & highs) return 1;
  uint64_t upper = (w + ones * (0x80 - 'A')) & ~(w + ones * (0x7f - 'Z')) & highs;
  return upper != 0 || word_has_octet(w, 0x7f) || word_has_octet(w, ':') || word_has_below(w, 0x21);
}

/* 8.2.1: no 0x00-0x20, no upper case, no 0x7f-0xff; a colon only as a pseudo-header
 * field's first character (and not alone). Eight octets at a time; short names by table. */
static int name_valid(const uint8_t *name, size_t len) {
  if (len == 0 || (len == 1 && name[0] == ':')) return 0;
  size_t start = name[0] == ':';
  if (len - start >= 8) { /* words, the last one overlapping the one before */
    uint64_t w;
    for (size_t i = start; len - i >= 8; i += 8) {
      memcpy(&w, name + i, 8);
      if (word_has_bad_name_octet(w)) return 0;
    }
    memcpy(&w, name + len - 8, 8);
    return !word_has_bad_name_octet(w);
  }
  unsigned ok = 1;
  for (size_t i = start; i < len; i++) ok &= name_octet_ok[name[i]];
  return ok != 0;
}

/* 1 when one of the eight octets of w is b. (w ^ b...) has a zero octet exactly then, and
 * (x - 0x01...) & ~x & 0x80... is non-zero exactly when x has one. */
static int word_has_octet(uint64_t w, uint8_t b) {
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  uint64_t x = w ^ (ones * b);
  return ((x - ones) & ~x & highs) != 0;
}

/* 8.2.1: no NUL, LF or CR anywhere; no SP or HTAB at either end. Values are most of the
 * octets of every header block sent and received, so they are scanned eight at a time. */
static int value_has_bad_word(uint64_t w) {
  return word_has_octet(w, 0) | word_has_octet(w, '\n') | word_has_octet(w, '\r');
}

static int value_valid(const uint8_t *value, size_t len) {
  if (len >= 8) { /* words, the last one overlapping the one before */
    uint64_t w;
    for (size_t i = 0; len - i >= 8; i += 8) {
      memcpy(&w, value + i, 8);
      if (value_has_bad_word(w)) return 0;
    }
    memcpy(&w, value + len - 8, 8);
    if (value_has_bad_word(w)) return 0;
  } else {
    for (size_t i = 0; i < len; i++)
      if (value[i] == 0 || value[i] == '\n' || value[i] == '\r') return 0;
  }
  if (len > 0 &&
      (value[0] == ' ' || value[0] == '\t' || value[len - 1] == ' ' || value[len - 1] == '\t'))
    return 0;
  return 1;
}

static int equal_nocase(const uint8_t *a, size_t len, const char *b) {
  if (len != strlen(b)) return 0;
  for (size_t i = 0; i < len; i++) {
    uint8_t c = a[i];
    if (c >= 'A' && c <= 'Z') c = (uint8_t)(c - 'A' + 'a');
    if (c != (uint8_t)b[i]) return 0;
  }
  return 1;
}

/* The eight octets of w with ASCII upper case made lower case: bit 5 is set in each octet
 * from 'A' to 'Z' (an octet with its high bit set is left alone). */
static uint64_t word_lower(uint64_t w) {
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  uint64_t low7 = w & (ones * 0x7f);
  uint64_t at_least_a = low7 + ones * (0x80 - 'A'); /* high bit: octet >= 'A' */
  uint64_t above_z = low7 + ones * (0x7f - 'Z');    /* high bit: octet > 'Z' */
  uint64_t upper = at_least_a & ~above_z & ~w & highs;
  return w | (upper >> 2);
}

/* A hash of the lower-cased value, eight octets at a time: the request's authority,
 * remembered without a copy so that a later host field can be compared with it (8.3.1).
 * Values differing in one octet never collide (each step is a bijection of the state); a
 * collision otherwise could only let a differing host through, which the rule allows
 * (it is a SHOULD). */
static uint64_t authority_hash(const uint8_t *value, size_t len) {
  uint64_t h = 0xcbf29ce484222325u ^ len;
  size_t i = 0;
  for (; len - i >= 8; i += 8) {
    uint64_t w;
    memcpy(&w, value + i, 8);
    h = (h ^ word_lower(w)) * 0x100000001b3u;
  }
  if (i < len) { /* the last octets, little-endian in a word */
    uint64_t w = 0;
    for (unsigned k = 0; i + k < len; k++) w |= (uint64_t)value[i + k] << (8 * k);
    h = (h ^ word_lower(w)) * 0x100000001b3u;
  }
  return h;
}

static int pseudo_field(speedy_h2_message *m, const uint8_t *name, size_t name_len,
                        const uint8_t *value, size_t value_len) {
  /* 8.3: pseudo-header fields before regular ones, none in trailers, each at most once,
   * only those defined for the message's kind. */
  if (m->kind == SPEEDY_H2_MSG_TRAILERS) return malformed(m, "pseudo-header field in trailers");
  if (m->regular_seen) return malformed(m, "pseudo-header field after a regular field");
  int request = m->kind == SPEEDY_H2_MSG_REQUEST || m->kind == SPEEDY_H2_MSG_PROMISE;
  uint8_t bit = 0;
  if (request && name_is(name, name_len, ":method"))
    bit = SPEEDY_H2_PSEUDO_METHOD;
  else if (request && name_is(name, name_len, ":scheme"))
    bit = SPEEDY_H2_PSEUDO_SCHEME;
  else if (request && name_is(name, name_len, ":authority"))
    bit = SPEEDY_H2_PSEUDO_AUTHORITY;
  else if (request && name_is(name, name_len, ":path"))
    bit = SPEEDY_H2_PSEUDO_PATH;
  else if (!request && name_is(name, name_len, ":status"))
    bit = SPEEDY_H2_PSEUDO_STATUS;
  else
    return malformed(m, "unknown or misplaced pseudo-header field");
  if (m->pseudo & bit) return malformed(m, "repeated pseudo-header field");
  m->pseudo |= bit;
  switch (bit) {
  case SPEEDY_H2_PSEUDO_METHOD:
    if (value_len == 0) return malformed(m, "empty :method");
    m->method = name_is(value, value_len, "GET")       ? SPEEDY_H2_METHOD_GET
                : name_is(value, value_len, "HEAD")    ? SPEEDY_H2_METHOD_HEAD
                : name_is(value, value_len, "CONNECT") ? SPEEDY_H2_METHOD_CONNECT
                                                       : SPEEDY_H2_METHOD_OTHER;
    break;
  case SPEEDY_H2_PSEUDO_PATH:
    m->path_empty = value_len == 0;
    break;
  case SPEEDY_H2_PSEUDO_AUTHORITY:
    m->authority_hash = authority_hash(value, value_len);
    break;
  case SPEEDY_H2_PSEUDO_STATUS: /* 8.3.2: the three-digit status code */
    if (value_len != 3) return malformed(m, ":status is not three digits");
    for (size_t i = 0; i < 3; i++)
      if (value[i] < '0' || value[i] > '9') return malformed(m, ":status is not three digits");
    m->status = (uint16_t)((value[0] - '0') * 100 + (value[1] - '0') * 10 + (value[2] - '0'));
    if (m->status < 100) return malformed(m, ":status below 100");
    break;
  default:
    break;
  }
  return 0;
}

/* content-length: digits only; a repeated field must repeat the value (RFC 9110 8.6). */
static int content_length_field(speedy_h2_message *m, const uint8_t *value, size_t len) {
  if (len == 0 || len > 18) return malformed(m, "bad content-length");
  int64_t n = 0;
  for (size_t i = 0; i < len; i++) {
    if (value[i] < '0' || value[i] > '9') return malformed(m, "bad content-length");
    n = n * 10 + (value[i] - '0');
  }
  if (m->content_length >= 0 && m->content_length != n)
    return malformed(m, "conflicting content-length");
  m->content_length = n;
  return 0;
}

int speedy_h2_name_octets_ok(const uint8_t *name, size_t len) { return name_valid(name, len); }
int speedy_h2_value_octets_ok(const uint8_t *value, size_t len) { return value_valid(value, len); }

int speedy_h2_message_field(speedy_h2_message *m, const uint8_t *name, size_t name_len,
                            const uint8_t *value, size_t value_len) {
  return speedy_h2_message_field_judged(m, name, name_len, value, value_len, 0);
}

int speedy_h2_message_field_judged(speedy_h2_message *m, const uint8_t *name, size_t name_len,
                                   const uint8_t *value, size_t value_len, unsigned flags) {
  if (!(flags & SPEEDY_HPACK_NAME_OK) && !name_valid(name, name_len))
    return malformed(m, "invalid field name");
  if (!(flags & SPEEDY_HPACK_VALUE_OK) && !value_valid(value, value_len))
    return malformed(m, "invalid field value");
  if (name[0] == ':') return pseudo_field(m, name, name_len, value, value_len);
  m->regular_seen = 1;
  /* The names with a rule, told apart by length first (every field passes here). */
  switch (name_len) {
  case 2: /* 8.2.2: TE may only say "trailers" */
    if (name_is(name, name_len, "te") && !equal_nocase(value, value_len, "trailers"))
      return malformed(m, "te other than trailers");
    return 0;
  case 4:
    /* 8.3.1: a host field that names another entity than :authority (which came first,
     * pseudo-header fields preceding regular ones) makes the request malformed. */
    if ((m->kind == SPEEDY_H2_MSG_REQUEST || m->kind == SPEEDY_H2_MSG_PROMISE) &&
        (m->pseudo & SPEEDY_H2_PSEUDO_AUTHORITY) && name_is(name, name_len, "host") &&
        authority_hash(value, value_len) != m->authority_hash)
      return malformed(m, "host differs from :authority");
    return 0;
  case 7:  /* upgrade */
  case 10: /* connection, keep-alive */
  case 16: /* proxy-connection */
  case 17: /* transfer-encoding */
    /* 8.2.2: connection-specific fields are refused. */
    if (name_is(name, name_len, "connection") || name_is(name, name_len, "proxy-connection") ||
        name_is(name, name_len, "keep-alive") || name_is(name, name_len, "transfer-encoding") ||
        name_is(name, name_len, "upgrade"))
      return malformed(m, "connection-specific field");
    return 0;
  case 8:
    if (m->kind == SPEEDY_H2_MSG_REQUEST && name_is(name, name_len, "priority")) {
      speedy_priority priority;
      if (speedy_priority_parse(value, value_len, &priority) == 0) { /* else ignored */
        m->priority = priority;
        m->has_priority = 1;
      }
    }
    return 0;
  case 14:
    if (m->kind != SPEEDY_H2_MSG_TRAILERS && name_is(name, name_len, "content-length"))
      return content_length_field(m, value, value_len);
    return 0;
  default:
    return 0;
  }
}

int speedy_h2_message_end(speedy_h2_message *m) {
  if (m->malformed) return -1;
  switch (m->kind) {
  case SPEEDY_H2_MSG_REQUEST:
  case SPEEDY_H2_MSG_PROMISE:
    if (m->method == SPEEDY_H2_METHOD_CONNECT) {
      /* 8.5: :authority, and neither :scheme nor :path. */
      if (!(m->pseudo & SPEEDY_H2_PSEUDO_AUTHORITY) ||
          (m->pseudo & (SPEEDY_H2_PSEUDO_SCHEME | SPEEDY_H2_PSEUDO_PATH)))
        return malformed(m, "CONNECT without :authority or with :scheme or :path");
    } else {
      /* 8.3.1: exactly one :method, :scheme and :path; :path not empty. */
      uint8_t need = SPEEDY_H2_PSEUDO_METHOD | SPEEDY_H2_PSEUDO_SCHEME | SPEEDY_H2_PSEUDO_PATH;
      if ((m->pseudo & need) != need) return malformed(m, "missing request pseudo-header field");
      if (m->path_empty) return malformed(m, "empty :path");
    }
    if (m->kind == SPEEDY_H2_MSG_PROMISE) {
      /* 8.4, 8.4.1: safe and cacheable, no content, with an authority. */
      if (m->method != SPEEDY_H2_METHOD_GET && m->method != SPEEDY_H2_METHOD_HEAD)
        return malformed(m, "promised request is not GET or HEAD");
      if (m->content_length > 0) return malformed(m, "promised request with content");
      if (!(m->pseudo & SPEEDY_H2_PSEUDO_AUTHORITY))
        return malformed(m, "promised request without :authority");
    }
    return 0;
  case SPEEDY_H2_MSG_RESPONSE:
    if (!(m->pseudo & SPEEDY_H2_PSEUDO_STATUS)) return malformed(m, "missing :status");
    if (m->status == 101) return malformed(m, "101 in HTTP/2"); /* 8.6 */
    return 0;
  default:
    return 0;
  }
}
