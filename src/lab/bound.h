/* bound.h — the physical lower bound of a page load on a link: no protocol, however
 * clever, loads the page faster. Beside every measured load time in the report.
 *
 *   bound = DNS + set-up RTTs (TCP, plus TLS's) + max(depth × RTT,
 *                                                    RTT + bytes down ÷ downlink rate,
 *                                                    RTT + bytes up ÷ uplink rate)
 *
 * depth is the longest chain of resources each of which is discovered only from the one
 * before (parent or redirect): every link of the chain costs at least one round trip.
 * The byte counts are what every protocol must carry (bodies and the minimum framing,
 * docs/lab.md "Lower bound"), so the bound stays below any real load. DNS is the one
 * lookup every configuration waits for before its first connection, the origin's
 * (--dns-rtt; single-domain configurations look up no other name).
 */
#ifndef SPEEDY_LAB_BOUND_H
#define SPEEDY_LAB_BOUND_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* What the bound needs from a page plan (speedy-lab-plan/1). */
typedef struct lab_plan_summary {
  size_t n_resources, n_hosts;
  unsigned depth;                      /* longest gate chain, in resources (1: only the document) */
  uint64_t body_bytes;                 /* every resource's body_size */
  uint64_t min_bytes_down;             /* bodies + 40 bytes of TCP/IP header per 1,460 bytes */
  uint64_t min_bytes_up;               /* 18 bytes per request (the smallest SPDY SYN_STREAM) */
  uint64_t http1_request_header_bytes; /* request line + recorded headers as text */
  uint64_t http1_response_header_bytes; /* status line + recorded headers as text */
} lab_plan_summary;

/* Summarizes a parsed plan. Returns 0, or -1 with a reason in err (not a plan, or a
 * parent/redirect cycle). */
int lab_plan_summarize(const json_t *plan, lab_plan_summary *out, char *err, size_t err_size);

typedef struct lab_bound_link {
  double rtt_ms;
  double down_bps, up_bps; /* IP-level bits per second; 0: unlimited */
  int tls_round_trips;     /* 0 without TLS, 2 for a full TLS 1.2 handshake, 1 for TLS 1.3 */
  double dns_ms;           /* the emulated lookup before the first connection; 0: none */
} lab_bound_link;

/* The bound in milliseconds. */
double lab_bound_ms(const lab_plan_summary *page, const lab_bound_link *link);

#endif
