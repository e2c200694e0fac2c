/* host.c — host names as the lab keeps them: one spelling per host, whatever the
 * recording wrote (docs/lab.md, "Hosts").
 *
 * A URL's host becomes: percent-escapes decoded; lower case; without a trailing dot;
 * internationalised labels as A-labels (RFC 3492 punycode behind "xn--", the code points
 * lower-cased by a simple rule, not IDNA2008's full mapping and normalisation); IPv6
 * literals in brackets in RFC 5952 text (inet_ntop). The lab never resolves a name: this
 * makes "WWW.Example.COM." and "www.example.com" one host, and gives the page plan, the
 * replay certificate, the Host header and the replay server's lookup one spelling to
 * agree on.
 */
#define _POSIX_C_SOURCE 200809L
#include "host.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define MAX_NAME 253u  /* RFC 1035 2.3.4, without the trailing dot */
#define MAX_LABEL 63u  /* the same, per label */
#define MAX_POINTS 64u /* code points in one label before encoding */

static int hex_value(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Decodes UTF-8 into code points. Returns the count, or -1 (invalid, or over max). */
static long utf8_decode(const unsigned char *s, size_t n, uint32_t *out, size_t max) {
  size_t count = 0;
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    uint32_t cp;
    size_t extra;
    if (c < 0x80) {
      cp = c, extra = 0;
    } else if (c >= 0xC2 && c <= 0xDF) {
      cp = c & 0x1F, extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      cp = c & 0x0F, extra = 2;
    } else if (c >= 0xF0 && c <= 0xF4) {
      cp = c & 0x07, extra = 3;
    } else {
      return -1;
    }
    if (extra > n - i - 1) return -1;
    for (size_t k = 1; k <= extra; k++) {
      if ((s[i + k] & 0xC0) != 0x80) return -1;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    /* Overlong forms, surrogates and code points past U+10FFFF. */
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return -1;
    if (count == max) return -1;
    out[count++] = cp;
    i += extra + 1;
  }
  return (long)count;
}

/* Lower case for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic capitals: what
 * recorded URLs hold in practice (browsers record A-labels anyway). */
static uint32_t simple_lower(uint32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c >= 0x100 && c <= 0x17F && c != 0x130 && c != 0x138 && c != 0x149 && c != 0x17F) {
    /* Pairs: even capital, odd small — except 0x139-0x148 and 0x179-0x17E, odd capital. */
    int odd_capital = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E);
    if (odd_capital ? (c & 1) == 1 : (c & 1) == 0) return c + 1;
    return c;
  }
  if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

/* RFC 3492 6.1. */
static uint32_t adapt(uint32_t delta, uint32_t points, int first) {
  delta = first ? delta / 700 : delta / 2;
  delta += delta / points;
  uint32_t k = 0;
  while (delta > ((36 - 1) * 26) / 2) {
    delta /= 36 - 1;
    k += 36;
  }
  return k + (36 - 1 + 1) * delta / (delta + 38);
}

static char digit(uint32_t d) { return (char)(d < 26 ? 'a' + d : '0' + (d - 26)); }

/* RFC 3492 6.3: the punycode of n code points into out (no "xn--"). Returns the length,
 * or -1 when it does not fit or overflows. */
static long punycode_encode(const uint32_t *in, size_t n, char *out, size_t size) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (in[i] >= 0x80) continue;
    if (o == size) return -1;
    out[o++] = (char)in[i];
  }
  size_t basic = o;
  if (basic > 0) {
    if (o == size) return -1;
    out[o++] = '-';
  }
  uint32_t code = 0x80, delta = 0, bias = 72;
  for (size_t handled = basic; handled < n;) {
    uint32_t next = UINT32_MAX;
    for (size_t i = 0; i < n; i++)
      if (in[i] >= code && in[i] < next) next = in[i];
    if ((uint64_t)(next - code) * (handled + 1) > UINT32_MAX - delta) return -1;
    delta += (next - code) * (uint32_t)(handled + 1);
    code = next;
    for (size_t i = 0; i < n; i++) {
      if (in[i] < code && ++delta == 0) return -1;
      if (in[i] != code) continue;
      uint32_t q = delta;
      for (uint32_t k = 36;; k += 36) {
        uint32_t t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (q < t) break;
        if (o == size) return -1;
        out[o++] = digit(t + (q - t) % (36 - t));
        q = (q - t) / (36 - t);
      }
      if (o == size) return -1;
      out[o++] = digit(q);
      bias = adapt(delta, (uint32_t)handled + 1, handled == basic);
      delta = 0;
      handled++;
    }
    delta++;
    code++;
  }
  return (long)o;
}

/* One label of a name into out (at most MAX_LABEL bytes). Returns its length or -1. */
static long canonical_label(const unsigned char *label, size_t n, char *out) {
  if (n == 0) return -1;
  int ascii = 1;
  for (size_t i = 0; i < n; i++) ascii &= label[i] < 0x80;
  if (ascii) {
    if (n > MAX_LABEL) return -1;
    for (size_t i = 0; i < n; i++) {
      unsigned char c = label[i];
      if (c >= 'A' && c <= 'Z') c = (unsigned char)(c + 32);
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) return -1;
      out[i] = (char)c;
    }
    return (long)n;
  }
  uint32_t points[MAX_POINTS];
  long count = utf8_decode(label, n, points, MAX_POINTS);
  if (count <= 0) return -1;
  for (long i = 0; i < count; i++) {
    points[i] = simple_lower(points[i]);
    /* ASCII in an IDN label follows the same rule as in any other. */
    if (points[i] < 0x80 && !((points[i] >= 'a' && points[i] <= 'z') ||
                              (points[i] >= '0' && points[i] <= '9') || points[i] == '-'))
      return -1;
    if (points[i] < 0x80) continue;
    /* Spaces, controls and the like are no letters of any script. */
    if (points[i] < 0xA1 || points[i] == 0xAD || (points[i] >= 0x2000 && points[i] <= 0x206F) ||
        points[i] == 0x3000 || points[i] == 0xFEFF)
      return -1;
  }
  memcpy(out, "xn--", 4);
  long encoded = punycode_encode(points, (size_t)count, out + 4, MAX_LABEL - 4);
  return encoded < 0 ? -1 : encoded + 4;
}

int lab_host_canonical(const char *host, size_t len, char *out, size_t out_size) {
  unsigned char raw[LAB_HOST_MAX_INPUT];
  size_t n = 0;
  if (len == 0 || len >= sizeof raw || out_size < 2) return -1;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)host[i];
    if (c == '%') {
      int hi = i + 2 < len ? hex_value((unsigned char)host[i + 1]) : -1;
      int lo = hi >= 0 ? hex_value((unsigned char)host[i + 2]) : -1;
      if (lo < 0 || (hi == 0 && lo == 0)) return -1;
      c = (unsigned char)(hi * 16 + lo);
      i += 2;
    }
    raw[n++] = c;
  }
  if (raw[0] == '[') {
    /* An IPv6 literal; a zone ("%25eth0") names an interface of the recording machine. */
    char inner[64], text[INET6_ADDRSTRLEN];
    unsigned char addr[16];
    if (n < 3 || raw[n - 1] != ']' || n - 2 >= sizeof inner) return -1;
    memcpy(inner, raw + 1, n - 2);
    inner[n - 2] = '\0';
    if (inet_pton(AF_INET6, inner, addr) != 1 ||
        inet_ntop(AF_INET6, addr, text, sizeof text) == NULL)
      return -1;
    size_t text_len = strlen(text);
    if (text_len + 3 > out_size) return -1;
    out[0] = '[';
    memcpy(out + 1, text, text_len);
    out[text_len + 1] = ']';
    out[text_len + 2] = '\0';
    return 0;
  }
  if (n > 1 && raw[n - 1] == '.') n--; /* "example.com." is example.com */
  size_t o = 0;
  char label[MAX_LABEL + 1];
  for (size_t start = 0; start <= n;) {
    const unsigned char *dot = memchr(raw + start, '.', n - start);
    size_t end = dot != NULL ? (size_t)(dot - raw) : n;
    long label_len = canonical_label(raw + start, end - start, label);
    if (label_len < 0 || o + (size_t)label_len + 1 > MAX_NAME + 1 ||
        o + (size_t)label_len + 1 >= out_size)
      return -1;
    if (o > 0) out[o++] = '.';
    memcpy(out + o, label, (size_t)label_len);
    o += (size_t)label_len;
    start = end + 1;
  }
  if (o > MAX_NAME) return -1;
  out[o] = '\0';
  return 0;
}

int lab_host_is_ip(const char *host) {
  unsigned char addr[16];
  if (host[0] == '[') return 1; /* only literals are bracketed */
  return inet_pton(AF_INET, host, addr) == 1;
}
