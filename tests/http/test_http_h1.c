/* test_http_h1.c — the HTTP/1.1 request reader (src/http/http_h1.c): pipelined requests
 * one at a time, bodies (Content-Length and chunked), keep-alive, the bounds and the
 * smuggling shapes it refuses, and the same answers whether bytes come at once or one by
 * one. speedyd's connections (tests/speedyd, tests/attacks) and the fuzz harness `http1`
 * drive the same code over sockets and arbitrary bytes. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "http_err.h"
#include "http_h1.h"

/* What a connection saw: one line per answered request, then the error if any. */
typedef struct seen {
  char log[4096];
  size_t len;
  size_t body;
  int refuse_headers; /* on_headers returns this */
  char fields[512];   /* per request: authority, Content-Length, header count */
  size_t fields_len;
} seen;

static int on_headers(http_h1_reader *reader, void *user) {
  (void)reader;
  return ((seen *)user)->refuse_headers;
}

static int on_body(http_h1_reader *reader, const uint8_t *at, size_t len, void *user) {
  (void)reader;
  (void)at;
  ((seen *)user)->body += len;
  return 0;
}

static const http_h1_callbacks callbacks = {on_headers, on_body};

/* Feeds text in pieces of `piece` bytes (0: at once) as a connection would: after each
 * complete request the rest is fed again. Returns the reader's error (0: none). */
static int run(const char *text, size_t piece, size_t max_header_bytes, seen *s) {
  http_h1_reader reader;
  http_h1_reader_init(&reader, max_header_bytes, 0, &callbacks, s);
  const uint8_t *data = (const uint8_t *)text;
  size_t len = strlen(text), at = 0, held = 0; /* held: bytes handed over, not consumed */
  int error = 0, closed = 0;
  while (!closed && (at < len || held > 0)) {
    size_t give = held;
    if (give == 0) give = piece == 0 || len - at < piece ? len - at : piece;
    size_t consumed = 0;
    http_h1_event event = http_h1_reader_feed(&reader, data + at, give, &consumed);
    cr_assert_leq(consumed, give);
    at += consumed;
    held = give - consumed;
    if (event == HTTP_H1_MORE) continue;
    if (event == HTTP_H1_ERROR) {
      error = reader.error;
      break;
    }
    const http_request *r = &reader.request;
    s->len +=
        (size_t)snprintf(s->log + s->len, sizeof(s->log) - s->len, "%s %s body=%zu keep-alive=%d\n",
                         r->method, r->path, s->body, reader.keep_alive);
    s->body = 0;
    s->fields_len +=
        (size_t)snprintf(s->fields + s->fields_len, sizeof(s->fields) - s->fields_len,
                         "authority=%s cl=%lld fields=%zu\n", r->authority ? r->authority : "-",
                         (long long)r->content_length, r->headers.count);
    closed = !reader.keep_alive;
    http_h1_reader_next(&reader);
  }
  http_h1_reader_free(&reader);
  return error;
}

static void same_at_once_and_byte_by_byte(const char *text, const char *expected_log,
                                          int expected_error) {
  for (size_t piece = 0; piece <= 1; piece++) {
    seen s = {0};
    int error = run(text, piece, 8192, &s);
    cr_expect_eq(error, expected_error, "piece %zu: error %d, expected %d", piece, error,
                 expected_error);
    cr_expect_str_eq(s.log, expected_log, "piece %zu", piece);
  }
}

Test(http_h1, pipelined_requests_come_one_at_a_time) {
  same_at_once_and_byte_by_byte("GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
                                "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
                                "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n"
                                "GET /d HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
                                "GET /never HTTP/1.1\r\nHost: h\r\n\r\n",
                                "GET /a body=0 keep-alive=1\n"
                                "POST /b body=5 keep-alive=1\n"
                                "PUT /c body=5 keep-alive=1\n"
                                "GET /d body=0 keep-alive=0\n",
                                0);
}

Test(http_h1, smuggling_shapes_are_400) {
  static const char *const shapes[] = {
      /* obsolete line folding */
      "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n",
      /* whitespace before the colon */
      "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
      /* Content-Length with Transfer-Encoding (llhttp's refusal) */
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      /* two Content-Lengths */
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
  };
  for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
    same_at_once_and_byte_by_byte(shapes[i], "", HTTP_ERR_BAD_REQUEST);
}

Test(http_h1, bounds_are_431_414_and_400) {
  char big[9000];
  snprintf(big, sizeof(big), "GET / HTTP/1.1\r\nHost: h\r\nX-Big: %08190d\r\n\r\n", 0);
  same_at_once_and_byte_by_byte(big, "", HTTP_ERR_HEADERS_TOO_LARGE);

  char long_name[400];
  snprintf(long_name, sizeof(long_name), "GET / HTTP/1.1\r\nHost: h\r\n%0300d: 1\r\n\r\n", 0);
  for (char *p = long_name + 26; *p == '0'; p++) *p = 'x';
  same_at_once_and_byte_by_byte(long_name, "", HTTP_ERR_HEADERS_TOO_LARGE);

  static char long_url[HTTP_REQUEST_MAX_LINE + 64];
  memcpy(long_url, "GET /", 5);
  memset(long_url + 5, 'a', HTTP_REQUEST_MAX_LINE);
  strcpy(long_url + 5 + HTTP_REQUEST_MAX_LINE, " HTTP/1.1\r\nHost: h\r\n\r\n");
  same_at_once_and_byte_by_byte(long_url, "", HTTP_ERR_URI_TOO_LONG);

  /* Chunk extensions beyond HTTP_H1_MAX_CHUNK_EXTENSIONS: 400, without buffering them. */
  static char extensions[8192];
  int n = snprintf(extensions, sizeof(extensions),
                   "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;x=");
  memset(extensions + n, 'v', 5000);
  strcpy(extensions + n + 5000, "\r\na\r\n0\r\n\r\n");
  same_at_once_and_byte_by_byte(extensions, "", HTTP_ERR_BAD_REQUEST);
}

/* RFC 9110 7.8: Upgrade (curl --http2 sends h2c's over http://) is ignored and the
 * connection carries on in HTTP/1.1, with or without a body. */
Test(http_h1, an_upgrade_is_ignored_and_the_connection_goes_on) {
  same_at_once_and_byte_by_byte(
      "GET /a HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\n"
      "HTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
      "POST /b HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: websocket\r\n"
      "Content-Length: 2\r\n\r\nhi"
      "GET /c HTTP/1.1\r\nHost: h\r\n\r\n",
      "GET /a body=0 keep-alive=1\n"
      "POST /b body=2 keep-alive=1\n"
      "GET /c body=0 keep-alive=1\n",
      0);
}

/* RFC 9112 3.2.2: the absolute-form is accepted; its authority stands for Host. */
Test(http_h1, the_absolute_form_gives_the_path_and_the_authority) {
  seen s = {0};
  cr_assert_eq(run("GET http://x.test/index.html?a=1 HTTP/1.1\r\nHost: y.test\r\n\r\n"
                   "GET HTTPS://x.test:8443 HTTP/1.1\r\nHost: y.test\r\n\r\n"
                   "GET http://x.test?q HTTP/1.1\r\nHost: x.test\r\n\r\n",
                   0, 8192, &s),
               0);
  cr_expect_str_eq(s.log, "GET /index.html?a=1 body=0 keep-alive=1\n"
                          "GET / body=0 keep-alive=1\n"
                          "GET /?q body=0 keep-alive=1\n");
  cr_expect_str_eq(s.fields, "authority=x.test cl=-1 fields=1\n"
                             "authority=x.test:8443 cl=-1 fields=1\n"
                             "authority=x.test cl=-1 fields=1\n");
  same_at_once_and_byte_by_byte("GET http://u@x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n", "",
                                HTTP_ERR_BAD_REQUEST);
}

/* RFC 9112 3.2: a Host value that is no uri-host [":" port] is a 400. */
Test(http_h1, an_invalid_host_is_400) {
  static const char *const hosts[] = {"a b", "x@y", "x/y", "x?y", "x\\y", "\"x\""};
  for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
    char request[128];
    snprintf(request, sizeof(request), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", hosts[i]);
    same_at_once_and_byte_by_byte(request, "", HTTP_ERR_BAD_REQUEST);
  }
  seen s = {0};
  cr_assert_eq(run("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"
                   "GET / HTTP/1.1\r\nHost: xn--bcher-kva.example:443\r\n\r\n",
                   0, 8192, &s),
               0);
  cr_expect_str_eq(s.fields, "authority=[::1]:8080 cl=-1 fields=1\n"
                             "authority=xn--bcher-kva.example:443 cl=-1 fields=1\n");
}

/* RFC 9112 6.1: an HTTP/1.0 request with Transfer-Encoding has faulty framing: 400. */
Test(http_h1, transfer_encoding_in_http10_is_400) {
  same_at_once_and_byte_by_byte("POST /a HTTP/1.0\r\nConnection: keep-alive\r\n"
                                "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                                "GET /b HTTP/1.0\r\n\r\n",
                                "", HTTP_ERR_BAD_REQUEST);
}

Test(http_h1, empty_header_value_first) {
  same_at_once_and_byte_by_byte("GET /e HTTP/1.1\r\nX-Empty:\r\nHost: h\r\n\r\n",
                                "GET /e body=0 keep-alive=1\n", 0);
}

/* A chunked body's trailer fields are read, counted against the header budget and
 * dropped: a trailer Content-Length or Host must not change the request after its headers
 * were acted on (http1 fuzz finding: a chunked request ended with Content-Length 4). */
Test(http_h1, trailer_fields_do_not_reach_the_request) {
  const char *text = "POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "3\r\nabc\r\n0\r\nContent-Length: 4\r\nHost: evil\r\nX-T: 1\r\n\r\n"
                     "GET /next HTTP/1.1\r\nHost: h\r\n\r\n";
  for (size_t piece = 0; piece <= 1; piece++) {
    seen s = {0};
    cr_expect_eq(run(text, piece, 8192, &s), 0);
    cr_expect_str_eq(s.log, "POST /t body=3 keep-alive=1\nGET /next body=0 keep-alive=1\n");
    cr_expect_str_eq(s.fields, "authority=h cl=-1 fields=2\nauthority=h cl=-1 fields=1\n",
                     "piece %zu", piece);
  }
  /* Trailers past the budget: 431, as headers would be. */
  static char big[12000];
  int n = snprintf(big, sizeof(big),
                   "POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                   "1\r\na\r\n0\r\nX-Big: ");
  memset(big + n, 'v', 9000);
  strcpy(big + n + 9000, "\r\n\r\n");
  same_at_once_and_byte_by_byte(big, "", HTTP_ERR_HEADERS_TOO_LARGE);
}

Test(http_h1, a_refusal_from_on_headers_is_the_error) {
  seen s = {.refuse_headers = HTTP_ERR_TOO_LARGE};
  cr_expect_eq(run("POST /u HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\n\r\nx", 0, 8192, &s),
               HTTP_ERR_TOO_LARGE);
  cr_expect_str_eq(s.log, "");
}

Test(http_h1, bytes_that_are_not_http_are_malformed) {
  http_h1_reader reader;
  seen s = {0};
  http_h1_reader_init(&reader, 8192, 0, &callbacks, &s);
  size_t consumed;
  const char *junk = "\x16\x03\x01 not http\r\n\r\n";
  cr_assert_eq(http_h1_reader_feed(&reader, (const uint8_t *)junk, strlen(junk), &consumed),
               HTTP_H1_ERROR);
  cr_expect_eq(reader.error, HTTP_ERR_BAD_REQUEST);
  cr_expect(reader.malformed);
  cr_expect_neq(http_h1_reader_error_reason(&reader)[0], '\0');
  http_h1_reader_free(&reader);
}
