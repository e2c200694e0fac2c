/* fuzz_http1.c — harness `http1`: speedyd's HTTP/1.1 request path fed arbitrary client
 * bytes, with no sockets: llhttp (strict, as speedyd configures it) driving
 * src/http/http_request.c through the same callbacks as src/speedyd/speedyd_h1.c, then the
 * parsers speedyd applies to a finished request's header values.
 *
 * speedyd_h1.c's callbacks are static and tied to its connection (io_conn, the server's
 * configuration), so the glue is mirrored here step for step: header fields collected in
 * pieces, the header budget, the bounds on names, URL and chunk extensions, the obs-fold
 * and "name :" defences, the pause at each message's end (pipelining), and the answer that
 * ends the connection after an error or without keep-alive. Keep it in step with
 * speedyd_h1.c.
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
#include <llhttp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "http_date.h"
#include "http_docroot.h"
#include "http_err.h"
#include "http_range.h"
#include "http_request.h"
#include "http_static.h"

/* speedyd_h1.c's bounds. */
#define H1_MAX_NAME 256u
#define H1_MAX_CHUNK_EXTENSIONS 4096u

typedef struct h1_driver {
  llhttp_t parser;
  llhttp_settings_t settings;
  size_t max_header_bytes;
  http_request request;
  int error; /* HTTP_ERR_* from a callback: answered, then the connection ends */
  int closed;
  char name[H1_MAX_NAME];
  size_t name_len;
  char *value;
  size_t value_len, value_cap;
  int in_value;
  size_t header_bytes;
  char *url;
  size_t url_len;
  uint64_t body_bytes, body_hash;
  int had_headers;
  int keep_alive;
  const uint8_t *in_start;
  uint8_t in_prev;
  size_t chunk_extension_bytes;
  uint64_t requests;
  const uint8_t *input; /* every client byte, for the substring checks */
  size_t input_len;
  fuzz_log log;
} h1_driver;

static h1_driver *driver_of(llhttp_t *p) { return p->data; }

static int fail(h1_driver *d, int err) {
  if (d->error == 0) d->error = err;
  return -1;
}

/* ---- the callbacks of speedyd_h1.c ---- */

static int commit_header(h1_driver *d) {
  if (!d->in_value) return 0;
  d->in_value = 0;
  if (memchr(d->name, ' ', d->name_len) != NULL || memchr(d->name, '\t', d->name_len) != NULL)
    return fail(d, HTTP_ERR_BAD_REQUEST);
  int rv = http_request_add_header(&d->request, d->name, d->name_len, d->value ? d->value : "",
                                   d->value_len);
  d->name_len = 0;
  d->value_len = 0;
  return rv == 0 ? 0 : fail(d, rv);
}

static int budget(h1_driver *d, size_t len, int err) {
  size_t max = d->max_header_bytes;
  if (len > max || d->header_bytes > max - len) return fail(d, err);
  d->header_bytes += len;
  return 0;
}

static int on_message_begin(llhttp_t *p) {
  h1_driver *d = driver_of(p);
  d->header_bytes = 0;
  d->chunk_extension_bytes = 0;
  return 0;
}

static int on_chunk_extension(llhttp_t *p, const char *at, size_t len) {
  (void)at;
  h1_driver *d = driver_of(p);
  if (len > H1_MAX_CHUNK_EXTENSIONS - d->chunk_extension_bytes)
    return fail(d, HTTP_ERR_BAD_REQUEST);
  d->chunk_extension_bytes += len;
  return 0;
}

static int on_url(llhttp_t *p, const char *at, size_t len) {
  h1_driver *d = driver_of(p);
  if (len > HTTP_REQUEST_MAX_LINE - d->url_len) return fail(d, HTTP_ERR_URI_TOO_LONG);
  char *grown = realloc(d->url, d->url_len + len + 1);
  if (grown == NULL) return fail(d, HTTP_ERR_NOMEM);
  d->url = grown;
  memcpy(d->url + d->url_len, at, len);
  d->url_len += len;
  return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  h1_driver *d = driver_of(p);
  if (commit_header(d) != 0) return -1;
  if (budget(d, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > sizeof(d->name) - d->name_len) return fail(d, HTTP_ERR_HEADERS_TOO_LARGE);
  memcpy(d->name + d->name_len, at, len);
  d->name_len += len;
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  h1_driver *d = driver_of(p);
  const uint8_t *piece = (const uint8_t *)at;
  uint8_t before = piece > d->in_start ? piece[-1] : d->in_prev;
  if (len > 0 && before == '\n') return fail(d, HTTP_ERR_BAD_REQUEST); /* obs-fold */
  d->in_value = 1;
  if (budget(d, len, HTTP_ERR_HEADERS_TOO_LARGE) != 0) return -1;
  if (len > d->value_cap - d->value_len) {
    size_t cap = d->value_cap ? d->value_cap : 256;
    while (cap - d->value_len < len) cap *= 2;
    char *grown = realloc(d->value, cap);
    if (grown == NULL) return fail(d, HTTP_ERR_NOMEM);
    d->value = grown;
    d->value_cap = cap;
  }
  /* llhttp announces an empty value with len 0; d->value may still be NULL then, and
   * NULL + 0 is undefined (speedyd_h1.c has the same memcpy: see docs/fuzzing.md). */
  if (len > 0) memcpy(d->value + d->value_len, at, len);
  d->value_len += len;
  return 0;
}

static int on_headers_complete(llhttp_t *p) {
  h1_driver *d = driver_of(p);
  if (commit_header(d) != 0) return -1;
  http_request *r = &d->request;
  r->protocol = p->http_major == 1 && p->http_minor == 0 ? HTTP_PROTO_HTTP10 : HTTP_PROTO_HTTP11;
  const char *method = llhttp_method_name((llhttp_method_t)p->method);
  char version[16];
  snprintf(version, sizeof(version), "HTTP/%u.%u", p->http_major, p->http_minor);
  int rv = http_request_set_method(r, method, strlen(method));
  if (rv == 0) rv = http_request_set_path(r, d->url ? d->url : "", d->url_len);
  if (rv == 0) rv = http_request_set_version(r, version, strlen(version));
  if (rv == 0) rv = http_request_set_scheme(r, "http", 4);
  r->has_body = (p->flags & F_CHUNKED) != 0 || r->content_length > 0;
  if (rv == 0) rv = http_request_finish(r);
  if (rv != 0) return fail(d, rv);
  d->had_headers = 1;
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  h1_driver *d = driver_of(p);
  d->body_bytes += len;
  d->body_hash = fuzz_hash(d->body_hash, at, len);
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  h1_driver *d = driver_of(p);
  d->keep_alive = llhttp_should_keep_alive(p);
  return HPE_PAUSED;
}

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
  const http_request *r = &d->request;
  if (r->method == NULL || r->path == NULL || r->version == NULL)
    fuzz_fail("request answered without method, path or version");
  if (!contains(d->input, d->input_len, r->method, strlen(r->method)))
    fuzz_fail("method %s is not in the input", r->method);
  size_t path_len = strlen(r->path);
  if (path_len != d->url_len || !contains(d->input, d->input_len, r->path, path_len))
    fuzz_fail("path \"%.60s\" (%zu bytes) is not the URL received (%zu bytes)", r->path, path_len,
              d->url_len);
  if (strncmp(r->version, "HTTP/", 5) != 0) fuzz_fail("version %s", r->version);
  if (r->protocol == HTTP_PROTO_HTTP11 && r->authority == NULL)
    fuzz_fail("HTTP/1.1 request without an authority");
  if (d->header_bytes > d->max_header_bytes)
    fuzz_fail("header bytes %zu over the budget %zu", d->header_bytes, d->max_header_bytes);
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
  int chunked = (d->parser.flags & F_CHUNKED) != 0;
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

static void reset_request(h1_driver *d) {
  http_request_free(&d->request);
  http_request_init(&d->request, HTTP_PROTO_HTTP11, d->max_header_bytes, 0);
  d->url_len = 0;
  d->name_len = d->value_len = 0;
  d->in_value = 0;
  d->header_bytes = 0;
  d->body_bytes = 0;
  d->body_hash = FUZZ_HASH_INIT;
  d->had_headers = 0;
}

/* What speedyd does when a message is complete or an error was found: answer, then close
 * or go on with the next request. */
static void answer(h1_driver *d, llhttp_errno_t err) {
  d->requests++;
  if (d->error != 0) {
    /* Which error is found first may depend on the cut (llhttp reports a bad byte before
     * handing over the span before it; in two pieces our span checks run first: 431
     * instead of 400, say). Both answers end the connection: only the fact is compared. */
    (void)err;
    fuzz_log_add(&d->log, "error");
    d->closed = 1;
    return;
  }
  check_request(d);
  const http_request *r = &d->request;
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
      (unsigned long long)d->body_bytes, (unsigned long long)d->body_hash, d->keep_alive);
  if (!d->keep_alive) {
    d->closed = 1;
    return;
  }
  reset_request(d);
  llhttp_resume(&d->parser);
}

/* speedyd_h1.c's on_read, looping where the I/O layer would hand back the held rest. */
static void feed(h1_driver *d, const uint8_t *data, size_t len) {
  while (!d->closed) {
    d->in_start = data;
    llhttp_errno_t err = llhttp_execute(&d->parser, (const char *)data, len);
    if (err == HPE_OK) {
      if (len > 0) d->in_prev = data[len - 1];
      if (d->error == 0) return;
    } else if (err == HPE_PAUSED) {
      const char *pos = llhttp_get_error_pos(&d->parser);
      size_t consumed = (size_t)(pos - (const char *)data);
      if (pos < (const char *)data || consumed > len)
        fuzz_fail("llhttp paused at %td of %zu bytes", pos - (const char *)data, len);
      if (consumed > 0) d->in_prev = data[consumed - 1];
      answer(d, err);
      data += consumed;
      len -= consumed;
      continue;
    }
    if (d->error == 0) d->error = HTTP_ERR_BAD_REQUEST;
    answer(d, err);
    return;
  }
}

static void driver_init(h1_driver *d, size_t max_header_bytes, const uint8_t *input,
                        size_t input_len) {
  memset(d, 0, sizeof(*d));
  d->max_header_bytes = max_header_bytes;
  d->in_prev = '\n';
  d->input = input;
  d->input_len = input_len;
  d->body_hash = FUZZ_HASH_INIT;
  fuzz_log_init(&d->log);
  llhttp_settings_init(&d->settings);
  d->settings.on_message_begin = on_message_begin;
  d->settings.on_url = on_url;
  d->settings.on_header_field = on_header_field;
  d->settings.on_header_value = on_header_value;
  d->settings.on_headers_complete = on_headers_complete;
  d->settings.on_body = on_body;
  d->settings.on_message_complete = on_message_complete;
  d->settings.on_chunk_extension_name = on_chunk_extension;
  d->settings.on_chunk_extension_value = on_chunk_extension;
  llhttp_init(&d->parser, HTTP_REQUEST, &d->settings);
  d->parser.data = d;
  http_request_init(&d->request, HTTP_PROTO_HTTP11, max_header_bytes, 0);
}

static void driver_finish(h1_driver *d) {
  fuzz_log_add(&d->log, "end: %llu answered, closed %d, had_headers %d, body %llu",
               (unsigned long long)d->requests, d->closed, d->had_headers,
               (unsigned long long)d->body_bytes);
  fuzz_log_flush(&d->log);
  http_request_free(&d->request);
  free(d->url);
  free(d->value);
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
