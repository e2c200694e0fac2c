/* bound.c — the physical lower bound of a page load (bound.h) and the plan summary it is
 * computed from. Only what every protocol must pay is counted: the origin's name lookup
 * (with --dns-rtt), one connection set-up, the dependency chain's round trips, and the
 * bytes no protocol can avoid sending.
 */
#include "bound.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSS 1460u
#define TCPIP_HEADER 40u
#define MIN_REQUEST_BYTES 18u /* SPDY SYN_STREAM: 8-byte frame header + 10 fixed bytes */

static uint64_t header_text_bytes(const json_t *headers) {
  uint64_t n = 0;
  size_t i;
  const json_t *pair;
  json_array_foreach(headers, i, pair) {
    const json_t *name = json_array_get(pair, 0), *value = json_array_get(pair, 1);
    if (json_is_string(name) && json_is_string(value))
      n += json_string_length(name) + 2 + json_string_length(value) + 2; /* "N: V\r\n" */
  }
  return n + 2; /* final CRLF */
}

int lab_plan_summarize(const json_t *plan, lab_plan_summary *out, char *err, size_t err_size) {
  memset(out, 0, sizeof *out);
  const json_t *hosts = json_object_get(plan, "hosts");
  const json_t *resources = json_object_get(plan, "resources");
  if (!json_is_array(hosts) || !json_is_array(resources) || json_array_size(resources) == 0) {
    snprintf(err, err_size, "not a page plan: hosts and resources must be non-empty arrays");
    return -1;
  }
  size_t n = json_array_size(resources);
  out->n_resources = n;
  out->n_hosts = json_array_size(hosts);
  long long *gate = malloc(n * sizeof *gate);
  unsigned *depth = calloc(n, sizeof *depth);
  if (gate == NULL || depth == NULL) {
    free(gate);
    free(depth);
    snprintf(err, err_size, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    const json_t *r = json_array_get(resources, i);
    json_int_t parent = json_integer_value(json_object_get(r, "parent"));
    gate[i] = parent >= 0 && (size_t)parent < n ? (long long)parent : -1;
    json_int_t size = json_integer_value(json_object_get(r, "body_size"));
    if (size > 0) {
      out->body_bytes += (uint64_t)size;
      out->min_bytes_down += (uint64_t)size + ((uint64_t)size + MSS - 1) / MSS * TCPIP_HEADER;
    }
    out->min_bytes_up += MIN_REQUEST_BYTES;
    const char *method = json_string_value(json_object_get(r, "method"));
    const char *path = json_string_value(json_object_get(r, "path"));
    const char *host = json_string_value(json_object_get(
        json_array_get(hosts, (size_t)json_integer_value(json_object_get(r, "host"))), "name"));
    /* "GET /path HTTP/1.1\r\n" + "Host: h\r\n" */
    out->http1_request_header_bytes += (method ? strlen(method) : 3) + 1 +
                                       (path ? strlen(path) : 1) + 11 + 6 +
                                       (host ? strlen(host) : 0) + 2;
    out->http1_request_header_bytes += header_text_bytes(json_object_get(r, "request_headers"));
    /* "HTTP/1.1 200 OK\r\n" approximated as 17 bytes, plus content-length */
    out->http1_response_header_bytes +=
        17 + 16 + 12 + header_text_bytes(json_object_get(r, "response_headers"));
  }
  /* A redirect gates its target (as in the loader): the target waits for it. */
  for (size_t i = 0; i < n; i++) {
    json_int_t to =
        json_integer_value(json_object_get(json_array_get(resources, i), "redirect_to"));
    if (json_is_integer(json_object_get(json_array_get(resources, i), "redirect_to")) && to >= 0 &&
        (size_t)to < n)
      gate[to] = (long long)i;
  }
  /* depth[i] = 1 + depth[gate[i]], walking each chain (bounded by n steps: a longer walk
   * is a cycle). */
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) {
    unsigned d = 0;
    long long at = (long long)i;
    size_t steps = 0;
    while (at >= 0) {
      if (depth[at] != 0) {
        d += depth[at];
        break;
      }
      d++;
      at = gate[at];
      if (++steps > n) {
        snprintf(err, err_size, "resources[%zu]: its parents and redirects form a cycle", i);
        rc = -1;
        break;
      }
    }
    depth[i] = d;
    if (d > out->depth) out->depth = d;
  }
  free(gate);
  free(depth);
  return rc;
}

double lab_bound_ms(const lab_plan_summary *page, const lab_bound_link *link) {
  double rtt = link->rtt_ms;
  double setup = rtt * (1 + (link->tls_round_trips > 0 ? link->tls_round_trips : 0));
  double chain = page->depth * rtt;
  double down =
      link->down_bps > 0 ? rtt + (double)page->min_bytes_down * 8000.0 / link->down_bps : rtt;
  double up = link->up_bps > 0 ? rtt + (double)page->min_bytes_up * 8000.0 / link->up_bps : rtt;
  double transfer = chain;
  if (down > transfer) transfer = down;
  if (up > transfer) transfer = up;
  /* One lookup, the origin's: every load waits for it before its first connection. The
   * bound is the same for every configuration of a page, and single-domain ones look up
   * no other name, so host changes along the chain add nothing here. */
  double dns = link->dns_ms > 0 ? link->dns_ms : 0;
  return dns + setup + transfer;
}
