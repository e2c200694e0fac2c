/* fuzz_http1.c — harness `http1`: speedyd's HTTP/1.1 request path fed arbitrary client
 * bytes, with no sockets: src/http/http_h1.c (llhttp, strict, with speedyd's bounds and
 * defences — the same reader speedyd_h1.c drives) filling src/http/http_request.c, then the
 * parsers speedyd applies to a finished request's header values. As speedyd does, each
 * complete request is answered before the rest of the bytes are fed again (pipelining),
 * and an error or a request without keep-alive ends the connection.
 *
 * Input: one configuration byte (bits 0-1: --max-header-bytes 32 KiB (the default), 256,
 * 1 KiB or 8 KiB), a 16-bit cut position (big-endian, taken modulo the client bytes' length
 * + 1), then the bytes a client sends. They are fed in one piece and again in two pieces
 * cut at that position: both runs must answer the same requests with the same headers and
 * bodies, and end with an error (any: 400, 414, 431) after the same requests.
 *
 * Checked for every request answered: method, path and version present; the path is bytes
 * of the input and as long as the URL received; HTTP/1.1 has an authority; header names
 * lower-case without space, tab or ':' after the first byte, values without CR, LF or NUL;
 * the header budget and counts held; a chunked request declares no Content-Length and a
 * Content-Length request's body has exactly that length. Then, on the header values:
 * Range (http_range_parse for several representation sizes: a satisfiable range lies
 * inside the representation), the dates (http_date_parse; a parsed date formatted with
 * http_date_format parses back to the same instant), Accept-Encoding, If-None-Match, and
 * the path through the docroot wall (http_docroot_decode_path: a decoded path is relative,
 * with no empty, "." or ".." segment, and fits its buffer). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "http_date.h"
#include "http_docroot.h"
#include "http_err.h"
#include "http_range.h"
#include "http_request.h"
#include "http_static.h"

#include "http_h1.h"

typedef struct h1_driver {
  http_h1_reader reader;
  size_t max_header_bytes;
  int closed;
  uint64_t body_bytes, body_hash;
  uint64_t requests;
  const uint8_t *input; /* every client byte, for the substring checks */
  size_t input_len;
  fuzz_log log;
} h1_driver;

static int on_body(http_h1_reader *reader, const uint8_t *at, size_t len, void *user) {
  (void)reader;
  h1_driver *d = user;
  d->body_bytes += len;
  d->body_hash = fuzz_hash(d->body_hash, at, len);
  return 0;
}

static const http_h1_callbacks driver_callbacks = {.on_headers = NULL, .on_body = on_body};

/* ---- checks on an answered request ---- */

static int contains(const uint8_t *haystack, size_t len, const char *needle, size_t needle_len) {
  return needle_len == 0 || memmem(haystack, len, needle, needle_len) != NULL;
}

static void check_range(const char *value) {
  static const uint64_t sizes[] = {
      0, 1, 2, 10, 1000, 65536, (uint64_t)1 << 32, UINT64_MAX - 1, UINT64_MAX};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    uint64_t first = 0, length = 0;
    http_range_result result = http_range_parse(value, sizes[i], &first, &length);
    if (result == HTTP_RANGE_SATISFIABLE &&
        (length == 0 || first >= sizes[i] || length > sizes[i] - first))
      fuzz_fail("range \"%.60s\" of %llu bytes gave first %llu length %llu", value,
                (unsigned long long)sizes[i], (unsigned long long)first,
                (unsigned long long)length);
    if (result != HTTP_RANGE_NONE && result != HTTP_RANGE_SATISFIABLE &&
        result != HTTP_RANGE_UNSATISFIABLE && result != HTTP_RANGE_MULTIPLE)
      fuzz_fail("range \"%.60s\": result %d", value, (int)result);
  }
}

static void check_date(const char *value) {
  int64_t t;
  if (http_date_parse(value, strlen(value), &t) != 0) return;
  char text[HTTP_DATE_SIZE];
  http_date_format(t, text);
  int64_t again;
  if (http_date_parse(text, strlen(text), &again) != 0 || again != t)
    fuzz_fail("date \"%.60s\" parsed as %lld, formatted \"%s\", parsed back differently", value,
              (long long)t, text);
}

static void check_decoded_path(const http_request *r) {
  char rel[HTTP_DOCROOT_MAX_PATH + 1];
  int trailing_slash = 0;
  size_t raw_len = http_request_path_length(r);
  if (raw_len > strlen(r->path)) fuzz_fail("path length %zu beyond the path", raw_len);
  int rv = http_docroot_decode_path(r->path, raw_len, rel, sizeof(rel), &trailing_slash);
  if (rv != 0 && rv != HTTP_ERR_BAD_REQUEST && rv != HTTP_ERR_NOT_FOUND &&
      rv != HTTP_ERR_URI_TOO_LONG)
    fuzz_fail("docroot decode of \"%.60s\": unexpected error %d", r->path, rv);
  if (rv != 0) return;
  size_t len = strnlen(rel, sizeof(rel));
  if (len == sizeof(rel)) fuzz_fail("decoded path not terminated");
  if (rel[0] == '/') fuzz_fail("decoded path \"%.60s\" is absolute", rel);
  /* Segment by segment: none empty (unless the whole path is), ".", ".." or hidden. */
  if (len == 0) return;
  const char *segment = rel;
  for (;;) {
    const char *slash = strchr(segment, '/');
    size_t n = slash != NULL ? (size_t)(slash - segment) : strlen(segment);
    if (n == 0 || segment[0] == '.')
      fuzz_fail("decoded path \"%.60s\" (from \"%.60s\") has an empty or dot segment", rel,
                r->path);
    if (slash == NULL) break;
    segment = slash + 1;
  }
}

static void check_request(h1_driver *d) {
  const http_request *r = &d->reader.request;
  if (r->method == NULL || r->path == NULL || r->version == NULL)
    fuzz_fail("request answered without method, path or version");
  if (!contains(d->input, d->input_len, r->method, strlen(r->method)))
    fuzz_fail("method %s is not in the input", r->method);
  size_t path_len = strlen(r->path), url_len = d->reader.url_len;
  const char *url = d->reader.url != NULL ? d->reader.url : "";
  /* The absolute-form's path (and query) is the end of the URL, "/" put before a query. */
  int absolute = (url_len >= 7 && strncasecmp(url, "http://", 7) == 0) ||
                 (url_len >= 8 && strncasecmp(url, "https://", 8) == 0);
  int path_ok = absolute
                    ? r->path[0] == '/' && path_len <= url_len &&
                          contains(d->input, d->input_len, r->path + 1, path_len - 1)
                    : path_len == url_len && contains(d->input, d->input_len, r->path, path_len);
  if (!path_ok)
    fuzz_fail("path \"%.60s\" (%zu bytes) is not the URL received (%zu bytes)", r->path, path_len,
              url_len);
  if (strncmp(r->version, "HTTP/", 5) != 0) fuzz_fail("version %s", r->version);
  if (r->protocol == HTTP_PROTO_HTTP11 && r->authority == NULL)
    fuzz_fail("HTTP/1.1 request without an authority");
  if (d->reader.header_bytes > d->max_header_bytes)
    fuzz_fail("header bytes %zu over the budget %zu", d->reader.header_bytes, d->max_header_bytes);
  if (r->headers.count > HTTP_REQUEST_DEFAULT_MAX_HEADERS ||
      r->headers.bytes > r->headers.max_bytes)
    fuzz_fail("%zu header fields, %zu bytes: over the bounds", r->headers.count, r->headers.bytes);
  for (size_t i = 0; i < r->headers.count; i++) {
    const http_header *h = &r->headers.items[i];
    if (h->name_len == 0 || strlen(h->name) != h->name_len || strlen(h->value) != h->value_len)
      fuzz_fail("header %zu: lengths disagree with the strings", i);
    for (size_t j = 0; j < h->name_len; j++) {
      char c = h->name[j];
      if ((c >= 'A' && c <= 'Z') || c == ' ' || c == '\t' || (j > 0 && c == ':'))
        fuzz_fail("header name \"%.60s\" kept upper case, space or ':'", h->name);
    }
    if (strpbrk(h->value, "\r\n") != NULL) fuzz_fail("header %s: CR or LF in the value", h->name);
  }
  int chunked = d->reader.chunked;
  if (chunked && r->content_length >= 0)
    fuzz_fail("chunked request with Content-Length %lld", (long long)r->content_length);
  if (r->content_length < -1) fuzz_fail("content length %lld", (long long)r->content_length);
  if (!chunked && r->content_length >= 0 && d->body_bytes != (uint64_t)r->content_length)
    fuzz_fail("Content-Length %lld but %llu body bytes", (long long)r->content_length,
              (unsigned long long)d->body_bytes);

  check_range(http_headers_get(&r->headers, "range"));
  static const char *const dates[] = {"if-modified-since", "if-unmodified-since", "if-range",
                                      "date"};
  for (size_t i = 0; i < sizeof(dates) / sizeof(dates[0]); i++) {
    const char *value = http_headers_get(&r->headers, dates[i]);
    if (value != NULL) check_date(value);
  }
  int gzip = http_static_accepts_gzip(http_headers_get(&r->headers, "accept-encoding"));
  const char *inm = http_headers_get(&r->headers, "if-none-match");
  int etag = http_static_etag_matches(inm, "\"5-1a2b3c-7\"");
  if ((gzip != 0 && gzip != 1) || (etag != 0 && etag != 1))
    fuzz_fail("accepts_gzip %d, etag_matches %d", gzip, etag);
  check_decoded_path(r);
}

/* ---- the connection ---- */

/* What speedyd does when a message is complete or an error was found: answer, then close
 * or go on with the next request. */
static void answer(h1_driver *d, http_h1_event event) {
  d->requests++;
  if (event == HTTP_H1_ERROR) {
    /* Which error is found first may depend on the cut (llhttp reports a bad byte before
     * handing over the span before it; in two pieces our span checks run first: 431
     * instead of 400, say). Both answers end the connection: only the fact is compared. */
    fuzz_log_add(&d->log, "error");
    d->closed = 1;
    return;
  }
  check_request(d);
  const http_request *r = &d->reader.request;
  uint64_t headers_hash = FUZZ_HASH_INIT;
  for (size_t i = 0; i < r->headers.count; i++) {
    headers_hash = fuzz_hash(headers_hash, r->headers.items[i].name, r->headers.items[i].name_len);
    headers_hash = fuzz_hash(headers_hash, "", 1);
    headers_hash =
        fuzz_hash(headers_hash, r->headers.items[i].value, r->headers.items[i].value_len + 1);
  }
  fuzz_log_add(
      &d->log,
      "request %s %.200s %s authority=%.100s headers=%zu/%016llx cl=%lld body=%llu/%016llx "
      "keep-alive=%d",
      r->method, r->path, r->version, r->authority ? r->authority : "-", r->headers.count,
      (unsigned long long)headers_hash, (long long)r->content_length,
      (unsigned long long)d->body_bytes, (unsigned long long)d->body_hash, d->reader.keep_alive);
  if (!d->reader.keep_alive) {
    d->closed = 1;
    return;
  }
  http_h1_reader_next(&d->reader);
  d->body_bytes = 0;
  d->body_hash = FUZZ_HASH_INIT;
}

/* speedyd_h1.c's on_read, looping where the I/O layer would hand back the held rest. */
static void feed(h1_driver *d, const uint8_t *data, size_t len) {
  while (!d->closed) {
    size_t consumed = 0;
    http_h1_event event = http_h1_reader_feed(&d->reader, data, len, &consumed);
    if (consumed > len) fuzz_fail("the reader consumed %zu of %zu bytes", consumed, len);
    if (event == HTTP_H1_MORE) {
      if (consumed != len) fuzz_fail("the reader wants more after %zu of %zu", consumed, len);
      return;
    }
    answer(d, event);
    data += consumed;
    len -= consumed;
  }
}

static void driver_init(h1_driver *d, size_t max_header_bytes, const uint8_t *input,
                        size_t input_len) {
  memset(d, 0, sizeof(*d));
  d->max_header_bytes = max_header_bytes;
  d->input = input;
  d->input_len = input_len;
  d->body_hash = FUZZ_HASH_INIT;
  fuzz_log_init(&d->log);
  http_h1_reader_init(&d->reader, max_header_bytes, 0, &driver_callbacks, d);
}

static void driver_finish(h1_driver *d) {
  fuzz_log_add(&d->log, "end: %llu answered, closed %d, had_headers %d, body %llu",
               (unsigned long long)d->requests, d->closed, d->reader.had_headers,
               (unsigned long long)d->body_bytes);
  fuzz_log_flush(&d->log);
  http_h1_reader_free(&d->reader);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const size_t header_budgets[4] = {HTTP_REQUEST_DEFAULT_MAX_HEADER_BYTES, 256, 1024, 8192};
  if (size < 3) return 0;
  size_t max_header_bytes = header_budgets[data[0] & 3];
  size_t cut = ((size_t)data[1] << 8 | data[2]);
  const uint8_t *input = data + 3;
  size_t len = size - 3;
  cut %= len + 1;

  static h1_driver whole, split; /* large (event logs): not on the stack */
  driver_init(&whole, max_header_bytes, input, len);
  feed(&whole, input, len);
  driver_finish(&whole);

  driver_init(&split, max_header_bytes, input, len);
  feed(&split, input, cut);
  feed(&split, input + cut, len - cut);
  driver_finish(&split);

  if (!fuzz_log_equal(&whole.log, &split.log))
    fuzz_fail("one piece and two pieces cut at %zu differ:\n--- one piece\n%.*s\n--- two "
              "pieces\n%.*s",
              cut, (int)whole.log.text_len, whole.log.text, (int)split.log.text_len,
              split.log.text);
  return 0;
}
