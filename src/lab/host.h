/* host.h — the one spelling the lab keeps for a host name (host.c): lower case, no
 * trailing dot, A-labels for IDNs, bracketed RFC 5952 text for IPv6 literals.
 */
#ifndef SPEEDY_LAB_HOST_H
#define SPEEDY_LAB_HOST_H

#include <stddef.h>

/* The longest host as it may appear in a URL (percent-escapes and UTF-8 included). */
#define LAB_HOST_MAX_INPUT 1024u
/* Room for any canonical host: 253 bytes of name, or a bracketed IPv6 literal. */
#define LAB_HOST_MAX 256u

/* Writes the canonical form of the len bytes of host (a URL's host, without port or
 * userinfo) into out. Returns 0, or -1 when it is not a usable host name: empty labels,
 * bytes no host name holds (spaces, '*', controls, invalid UTF-8), a label over 63 bytes
 * or a name over 253 once encoded, an IPv6 literal that does not parse, or out too small
 * (LAB_HOST_MAX always suffices). */
int lab_host_canonical(const char *host, size_t len, char *out, size_t out_size);

/* 1 when a canonical host is an IP literal (dotted-quad IPv4 or bracketed IPv6). */
int lab_host_is_ip(const char *host);

#endif
