/* proxy.c — parsing the PROXY protocol header, versions 1 (text) and 2 (binary). See
 * proxy.h; section numbers below are those of HAProxy's proxy-protocol.txt.
 *
 * Checks run in the order the bytes arrive (the signature, then a v2 header's version,
 * command, family and length, then the whole header), so that a buffer fed one byte at
 * a time fails at the same byte and with the same reason as the whole buffer.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* inet_pton, inet_ntop */
#endif
#include "proxy.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v2_signature[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                         0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
static const char v1_prefix[] = "PROXY ";
#define V1_PREFIX_LEN 6
#define V2_FIXED_LEN 16

static int fail(io_proxy_result *out, const char *why) {
  out->error = why;
  return IO_PROXY_ERROR;
}

/* ---- Version 1 ------------------------------------------------------------------- */

/* The next space-delimited token of line[*pos..end): sets *start and *len and moves *pos
 * past it and one following space. Returns 0, or -1 when the token is empty (two spaces
 * in a row, or nothing left). */
static int next_token(const char *line, size_t end, size_t *pos, const char **start, size_t *len) {
  size_t i = *pos;
  while (i < end && line[i] != ' ') i++;
  if (i == *pos) return -1;
  *start = line + *pos;
  *len = i - *pos;
  *pos = i < end ? i + 1 : i;
  return 0;
}

/* Decimal 0..max without leading zeroes (2.1: "heading zeroes are not permitted"). */
static int parse_decimal(const char *text, size_t len, unsigned max, unsigned *out) {
  if (len == 0 || len > 5 || (len > 1 && text[0] == '0')) return -1;
  unsigned value = 0;
  for (size_t i = 0; i < len; i++) {
    if (text[i] < '0' || text[i] > '9') return -1;
    value = value * 10 + (unsigned)(text[i] - '0');
  }
  if (value > max) return -1;
  *out = value;
  return 0;
}

/* "a.b.c.d", exactly four decimals 0..255 without leading zeroes. Written out rather
 * than left to inet_pton, whose acceptance of forms like "01.2.3.4" varies by C library. */
static int parse_ipv4(const char *text, size_t len, uint8_t out[4]) {
  size_t start = 0;
  for (int part = 0; part < 4; part++) {
    size_t end = start;
    while (end < len && text[end] != '.') end++;
    unsigned value;
    if (parse_decimal(text + start, end - start, 255, &value) != 0) return -1;
    out[part] = (uint8_t)value;
    if (part < 3 && end == len) return -1;
    start = end + 1;
  }
  return start == len + 1 ? 0 : -1;
}

/* Hex groups and colons ("::" once), an IPv4 tail allowed, 128 bits in all. */
static int parse_ipv6(const char *text, size_t len, uint8_t out[16]) {
  char copy[48];
  if (len == 0 || len >= sizeof(copy)) return -1;
  for (size_t i = 0; i < len; i++) {
    char c = text[i];
    int hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex && c != ':' && c != '.') return -1;
  }
  memcpy(copy, text, len);
  copy[len] = '\0';
  return inet_pton(AF_INET6, copy, out) == 1 ? 0 : -1;
}

/* The line before its CRLF: "PROXY " PROTOCOL [" " SRC " " DST " " SPORT " " DPORT]. */
static int parse_v1_line(const char *line, size_t end, io_proxy_result *out) {
  size_t pos = V1_PREFIX_LEN;
  const char *token;
  size_t token_len;
  if (next_token(line, end, &pos, &token, &token_len) != 0)
    return fail(out, "v1: no protocol after \"PROXY \"");
  if (token_len == 7 && memcmp(token, "UNKNOWN", 7) == 0) {
    /* 2.1: the rest of an UNKNOWN line is ignored; the socket's addresses stand. */
    memset(out, 0, sizeof(*out));
    out->version = 1;
    out->header_len = end + 2;
    return IO_PROXY_DONE;
  }
  int family;
  if (token_len == 4 && memcmp(token, "TCP4", 4) == 0)
    family = 4;
  else if (token_len == 4 && memcmp(token, "TCP6", 4) == 0)
    family = 6;
  else
    return fail(out, "v1: the protocol is not TCP4, TCP6 or UNKNOWN");

  io_proxy_address source = {.family = family}, destination = {.family = family};
  io_proxy_address *ends[2] = {&source, &destination};
  for (int i = 0; i < 2; i++) {
    if (next_token(line, end, &pos, &token, &token_len) != 0)
      return fail(out, "v1: an address is missing or not delimited by one space");
    int bad = family == 4 ? parse_ipv4(token, token_len, ends[i]->addr)
                          : parse_ipv6(token, token_len, ends[i]->addr);
    if (bad) return fail(out, family == 4 ? "v1: bad IPv4 address" : "v1: bad IPv6 address");
  }
  for (int i = 0; i < 2; i++) {
    unsigned port;
    if (next_token(line, end, &pos, &token, &token_len) != 0)
      return fail(out, "v1: a port is missing or not delimited by one space");
    if (parse_decimal(token, token_len, 65535, &port) != 0)
      return fail(out, "v1: bad port (0-65535, no leading zeroes)");
    ends[i]->port = (uint16_t)port;
  }
  if (pos != end || line[end - 1] == ' ') return fail(out, "v1: more fields than TCP4/TCP6 carry");
  memset(out, 0, sizeof(*out));
  out->version = 1;
  out->header_len = end + 2;
  out->has_addresses = 1;
  out->source = source;
  out->destination = destination;
  return IO_PROXY_DONE;
}

static int parse_v1(const uint8_t *data, size_t len, io_proxy_result *out) {
  size_t n = len < IO_PROXY_V1_MAX ? len : IO_PROXY_V1_MAX;
  for (size_t i = 0; i < n; i++) {
    uint8_t c = data[i];
    if (i < V1_PREFIX_LEN) {
      if (c != (uint8_t)v1_prefix[i]) return fail(out, "no PROXY protocol header");
      continue;
    }
    if (c == '\r') {
      /* 2.1: at most 107 bytes with the CRLF, and never a lone CR or LF. */
      if (i + 2 > IO_PROXY_V1_MAX) return fail(out, "v1: no CRLF in the first 107 bytes");
      if (i + 1 == len) return IO_PROXY_NEED_MORE;
      if (data[i + 1] != '\n') return fail(out, "v1: CR without LF");
      return parse_v1_line((const char *)data, i, out);
    }
    if (c == '\n') return fail(out, "v1: LF without CR");
    if (c < 0x20 || c > 0x7e) return fail(out, "v1: a byte that is not printable US-ASCII");
  }
  if (len >= IO_PROXY_V1_MAX) return fail(out, "v1: no CRLF in the first 107 bytes");
  return IO_PROXY_NEED_MORE;
}

/* ---- Version 2 ------------------------------------------------------------------- */

static uint16_t get16(const uint8_t *p) { return (uint16_t)((unsigned)p[0] << 8 | p[1]); }

static int parse_v2(const uint8_t *data, size_t len, io_proxy_result *out) {
  for (size_t i = 0; i < len && i < sizeof(v2_signature); i++)
    if (data[i] != v2_signature[i])
      return fail(out, i == 0 ? "no PROXY protocol header" : "v2: bad signature");
  if (len <= 12) return IO_PROXY_NEED_MORE;
  /* 2.2: the version nibble must be 2; the command LOCAL (0) or PROXY (1), others are
   * dropped. */
  if (data[12] >> 4 != 2) return fail(out, "v2: version is not 2");
  int command = data[12] & 0x0f;
  if (command > 1) return fail(out, "v2: unknown command (not LOCAL or PROXY)");
  if (len <= 13) return IO_PROXY_NEED_MORE;
  /* LOCAL ignores the family byte; PROXY's family (0-3) and transport (0-2) must be
   * assigned values. */
  int family = data[13] >> 4, transport = data[13] & 0x0f;
  if (command == 1 && (family > 3 || transport > 2))
    return fail(out, "v2: unknown address family or transport");
  if (len < V2_FIXED_LEN) return IO_PROXY_NEED_MORE;
  size_t block_len = get16(data + 14);
  if (block_len > IO_PROXY_V2_MAX - V2_FIXED_LEN) return fail(out, "v2: header over 4096 bytes");
  if (len - V2_FIXED_LEN < block_len) return IO_PROXY_NEED_MORE;

  const uint8_t *block = data + V2_FIXED_LEN;
  io_proxy_result result = {.version = 2, .header_len = V2_FIXED_LEN + block_len};
  if (command == 0 || family == 0 || transport == 0) {
    /* LOCAL: the balancer's own connection; UNSPEC: the address is unknown. Either way
     * the socket's addresses stand and the block is skipped unread (2.2: the receiver
     * "must not assume zero is presented for LOCAL"). */
    *out = result;
    return IO_PROXY_DONE;
  }
  static const size_t address_len[4] = {0, 12, 36, 216}; /* 2.2: INET, INET6, UNIX */
  size_t need = address_len[family];
  if (block_len < need) return fail(out, "v2: address block shorter than its family needs");
  if (family != 3 && transport == 1) { /* TCP over IPv4 or IPv6 */
    size_t alen = family == 1 ? 4 : 16;
    result.has_addresses = 1;
    result.source.family = result.destination.family = family == 1 ? 4 : 6;
    memcpy(result.source.addr, block, alen);
    memcpy(result.destination.addr, block + alen, alen);
    result.source.port = get16(block + 2 * alen);
    result.destination.port = get16(block + 2 * alen + 2);
  }
  /* UDP and AF_UNIX are valid but mean nothing to a TCP server: 2.2 says to fall back to
   * UNSPEC (keep the socket's addresses). The TLVs after the addresses must each fit. */
  size_t pos = need;
  while (pos < block_len) {
    if (block_len - pos < 3) return fail(out, "v2: truncated TLV");
    size_t value_len = get16(block + pos + 1);
    if (value_len > block_len - pos - 3) return fail(out, "v2: TLV longer than the header");
    pos += 3 + value_len;
  }
  *out = result;
  return IO_PROXY_DONE;
}

/* ---- Entry points ---------------------------------------------------------------- */

int io_proxy_parse(const uint8_t *data, size_t len, io_proxy_result *out) {
  if (len == 0) return IO_PROXY_NEED_MORE;
  if (data[0] == (uint8_t)v1_prefix[0]) return parse_v1(data, len, out);
  if (data[0] == v2_signature[0]) return parse_v2(data, len, out);
  return fail(out, "no PROXY protocol header");
}

int io_proxy_format_address(const io_proxy_address *address, char *out, size_t out_len) {
  char ip[INET6_ADDRSTRLEN];
  int n = -1;
  if (inet_ntop(address->family == 4 ? AF_INET : AF_INET6, address->addr, ip, sizeof(ip)) != NULL)
    n = address->family == 4 ? snprintf(out, out_len, "%s:%u", ip, (unsigned)address->port)
                             : snprintf(out, out_len, "[%s]:%u", ip, (unsigned)address->port);
  if (n < 0 || (size_t)n >= out_len) {
    if (out_len > 0) out[0] = '\0';
    return -1;
  }
  return 0;
}
