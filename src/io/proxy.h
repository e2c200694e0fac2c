/* proxy.h — the PROXY protocol (HAProxy's proxy-protocol.txt, versions 1 and 2): the
 * header an L4 load balancer sends before a connection's own bytes to say whose
 * connection it relays.
 *
 * Pure functions over a byte buffer: no sockets, no allocation, no uv.h (the fuzz harness
 * links this file alone). conn.c keeps a proxied connection's first bytes and calls
 * io_proxy_parse on all of them after every read until it is done or fails. The parser
 * reads from the start every time and checks the bytes in the order they arrive, so
 * feeding one byte at a time ends exactly as feeding the whole buffer does.
 */
#ifndef SPEEDY_IO_PROXY_H
#define SPEEDY_IO_PROXY_H

#include <stddef.h>
#include <stdint.h>

/* io_proxy_parse's results. */
#define IO_PROXY_DONE 1      /* a whole, valid header: see the io_proxy_result */
#define IO_PROXY_NEED_MORE 0 /* valid so far: call again with more bytes */
#define IO_PROXY_ERROR (-1)  /* not a valid header: drop the connection (error says why) */

/* A version 1 line with its CRLF is at most this long (spec 2.1: "PROXY UNKNOWN" with
 * two full IPv6 addresses and ports). */
#define IO_PROXY_V1_MAX 107
/* A version 2 header (16 bytes + its length field) is refused above this: the addresses
 * take at most 216 bytes (AF_UNIX), the rest are TLVs (ALPN, authority, TLS details, a
 * unique id of at most 128 bytes ...); a peer must not make us wait for 64 KiB. */
#define IO_PROXY_V2_MAX 4096

/* One end of the relayed connection. */
typedef struct io_proxy_address {
  int family;       /* 4 (IPv4) or 6 (IPv6) */
  uint8_t addr[16]; /* network order; IPv4 uses the first 4 bytes */
  uint16_t port;
} io_proxy_address;

typedef struct io_proxy_result {
  size_t header_len; /* bytes of the header; the connection's own bytes follow */
  int version;       /* 1 or 2 */
  /* 1: source and destination are the relayed connection's (TCP over IPv4 or IPv6).
   * 0: v1 UNKNOWN, v2 LOCAL (the balancer's own health check), or a v2 family or
   * transport we do not use (UNSPEC, UDP, AF_UNIX): the spec says to keep the socket's
   * own addresses then. */
  int has_addresses;
  io_proxy_address source, destination;
  const char *error; /* after IO_PROXY_ERROR: a phrase saying what was wrong */
} io_proxy_result;

/* Parses the PROXY header at the start of data (len bytes: everything received so far).
 * Returns IO_PROXY_DONE and fills *out, IO_PROXY_NEED_MORE (*out untouched), or
 * IO_PROXY_ERROR and sets only out->error (a static string). Bytes that cannot begin a
 * header are refused as soon as they are seen; a v1 line without CRLF in 107 bytes and a
 * v2 header longer than IO_PROXY_V2_MAX as soon as that is known. v2 TLVs are checked
 * to fit the header and otherwise skipped. */
int io_proxy_parse(const uint8_t *data, size_t len, io_proxy_result *out);

/* Writes the address as "1.2.3.4:80" or "[2001:db8::1]:80" (the form io_conn_peer uses)
 * into out (out_len bytes, 64 is always enough). Returns 0, or -1 when it does not fit
 * (out is then ""). */
int io_proxy_format_address(const io_proxy_address *address, char *out, size_t out_len);

#endif /* SPEEDY_IO_PROXY_H */
