/* http_range.h — the Range request header (RFC 7233), one byte range at a time.
 *
 * Only a single range is served: "bytes=a-b", "bytes=a-" and "bytes=-n". A request for
 * several ranges is answered with the whole representation (200), which RFC 7233 3.1
 * permits ("a server MAY ignore the Range header field"); multipart/byteranges is not
 * produced. Numbers are parsed into uint64 with overflow checks: a last-byte-pos too
 * large for uint64 means "to the end", a first-byte-pos too large can never be satisfied,
 * a suffix length too large means "the whole file".
 */
#ifndef SPEEDY_HTTP_RANGE_H
#define SPEEDY_HTTP_RANGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum http_range_result {
  HTTP_RANGE_NONE = 0,          /* no usable Range (absent, malformed, other unit; a suffix of
                                   an empty representation, RFC 9110 14.1.1): 200 */
  HTTP_RANGE_SATISFIABLE = 1,   /* *first and *length describe the range: 206 */
  HTTP_RANGE_UNSATISFIABLE = 2, /* 416 with Content-Range: bytes * / size */
  HTTP_RANGE_MULTIPLE = 3       /* several ranges: served as 200 with the whole file */
} http_range_result;

/* Interprets value (the Range field; NULL when absent) for a representation of size
 * bytes. On HTTP_RANGE_SATISFIABLE, 1 <= *length and *first + *length <= size. */
http_range_result http_range_parse(const char *value, uint64_t size, uint64_t *first,
                                   uint64_t *length);

#endif
