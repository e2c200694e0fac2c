/* fuzz_proxy.c — harness `proxy`: the PROXY protocol parser (src/io/proxy.c) that a
 * ,proxy listener of speedyd runs on a connection's first bytes, fed arbitrary bytes.
 *
 * Input: the bytes a balancer (or anyone who reaches the port) sends. They are parsed
 * whole and, as a connection receiving one byte per read would, every prefix in turn
 * until the first answer: both must end the same way (the same status, the same header
 * and addresses, or the same reason). Checked besides: nothing waits for more beyond the
 * bounds (a v1 line of 107 bytes, a v2 header of IO_PROXY_V2_MAX); a v1 header ends with
 * CRLF and a v2 header is 16 bytes plus its length field; an error has a reason; every
 * address formats (io_proxy_format_address, as io_conn_peer shows it); and a header with
 * addresses, written again from the result (v1 text or v2 binary), parses to the same
 * result.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"
#include "proxy.h"

static int same_address(const io_proxy_address *a, const io_proxy_address *b) {
  return a->family == b->family && a->port == b->port && memcmp(a->addr, b->addr, 16) == 0;
}

static int same_result(const io_proxy_result *a, const io_proxy_result *b) {
  return a->header_len == b->header_len && a->version == b->version &&
         a->has_addresses == b->has_addresses &&
         (!a->has_addresses ||
          (same_address(&a->source, &b->source) && same_address(&a->destination, &b->destination)));
}

static void check_address(const io_proxy_address *a) {
  if (a->family != 4 && a->family != 6) fuzz_fail("address family %d", a->family);
  if (a->family == 4)
    for (size_t i = 4; i < 16; i++)
      if (a->addr[i] != 0) fuzz_fail("IPv4 address with bytes past the fourth");
  char text[64];
  if (io_proxy_format_address(a, text, sizeof(text)) != 0 || text[0] == '\0')
    fuzz_fail("an address that does not format");
}

/* The header written again from the result: v1 text, or v2 binary without TLVs. */
static size_t rewrite(const io_proxy_result *r, uint8_t *out, size_t cap) {
  if (r->version == 1) {
    char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
    int af = r->source.family == 4 ? AF_INET : AF_INET6;
    if (inet_ntop(af, r->source.addr, src, sizeof(src)) == NULL ||
        inet_ntop(af, r->destination.addr, dst, sizeof(dst)) == NULL)
      fuzz_fail("inet_ntop failed");
    int n = snprintf((char *)out, cap, "PROXY TCP%d %s %s %u %u\r\n", r->source.family, src, dst,
                     (unsigned)r->source.port, (unsigned)r->destination.port);
    if (n < 0 || (size_t)n >= cap) fuzz_fail("v1 rewrite does not fit");
    return (size_t)n;
  }
  static const uint8_t signature[12] = {0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d,
                                        0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a};
  size_t alen = r->source.family == 4 ? 4 : 16;
  size_t block = 2 * alen + 4;
  memcpy(out, signature, 12);
  out[12] = 0x21;
  out[13] = r->source.family == 4 ? 0x11 : 0x21;
  out[14] = 0;
  out[15] = (uint8_t)block;
  memcpy(out + 16, r->source.addr, alen);
  memcpy(out + 16 + alen, r->destination.addr, alen);
  out[16 + 2 * alen] = (uint8_t)(r->source.port >> 8);
  out[17 + 2 * alen] = (uint8_t)r->source.port;
  out[18 + 2 * alen] = (uint8_t)(r->destination.port >> 8);
  out[19 + 2 * alen] = (uint8_t)r->destination.port;
  return 16 + block;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  io_proxy_result whole;
  memset(&whole, 0, sizeof(whole));
  int status = io_proxy_parse(data, size, &whole);

  /* One byte at a time: the first answer that is not NEED_MORE. */
  int bytewise = IO_PROXY_NEED_MORE;
  size_t decided_at = size;
  io_proxy_result step;
  memset(&step, 0, sizeof(step));
  for (size_t n = 1; n <= size; n++) {
    bytewise = io_proxy_parse(data, n, &step);
    if (bytewise != IO_PROXY_NEED_MORE) {
      decided_at = n;
      break;
    }
  }
  if (bytewise != status)
    fuzz_fail("whole buffer %d, one byte at a time %d (after %zu bytes)", status, bytewise,
              decided_at);

  switch (status) {
  case IO_PROXY_NEED_MORE:
    if (size >= IO_PROXY_V2_MAX || (size > 0 && data[0] == 'P' && size >= IO_PROXY_V1_MAX))
      fuzz_fail("still waiting after %zu bytes", size);
    break;
  case IO_PROXY_ERROR:
    if (whole.error == NULL || whole.error[0] == '\0') fuzz_fail("an error without a reason");
    if (step.error == NULL || strcmp(step.error, whole.error) != 0)
      fuzz_fail("reasons differ: \"%s\" whole, \"%s\" byte by byte", whole.error,
                step.error ? step.error : "(none)");
    break;
  case IO_PROXY_DONE: {
    if (!same_result(&whole, &step) || decided_at != whole.header_len)
      fuzz_fail("byte by byte: done after %zu bytes, the whole buffer's header is %zu", decided_at,
                whole.header_len);
    if (whole.header_len == 0 || whole.header_len > size)
      fuzz_fail("header length %zu", whole.header_len);
    if (whole.version == 1) {
      if (whole.header_len > IO_PROXY_V1_MAX || data[whole.header_len - 2] != '\r' ||
          data[whole.header_len - 1] != '\n')
        fuzz_fail("v1 header of %zu bytes without CRLF at its end", whole.header_len);
    } else if (whole.version == 2) {
      if (whole.header_len > IO_PROXY_V2_MAX || whole.header_len < 16 ||
          whole.header_len != 16u + ((size_t)data[14] << 8 | data[15]))
        fuzz_fail("v2 header of %zu bytes", whole.header_len);
    } else {
      fuzz_fail("version %d", whole.version);
    }
    if (!whole.has_addresses) break;
    check_address(&whole.source);
    check_address(&whole.destination);
    if (whole.source.family != whole.destination.family) fuzz_fail("mixed families");
    uint8_t again[128];
    size_t n = rewrite(&whole, again, sizeof(again));
    io_proxy_result reparsed;
    if (io_proxy_parse(again, n, &reparsed) != IO_PROXY_DONE)
      fuzz_fail("the header written again is refused: %s", reparsed.error);
    reparsed.header_len = whole.header_len; /* TLVs and spellings differ */
    if (!same_result(&whole, &reparsed)) fuzz_fail("the header written again reads differently");
    break;
  }
  default:
    fuzz_fail("status %d", status);
  }
  return 0;
}
