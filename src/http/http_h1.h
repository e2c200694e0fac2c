/* http_h1.h — reading HTTP/1.1 requests from a byte stream: llhttp (strict: no lenient
 * modes) turned into http_request values, with the bounds and the request-smuggling
 * defences speedyd applies (docs/security.md). No sockets: speedyd's HTTP/1.1 connections
 * and the fuzz harness `http1` drive the same reader.
 *
 * One request at a time: when a request is complete, feeding stops there (HTTP_H1_MESSAGE)
 * and the rest of the bytes stay with the caller until it has answered and called
 * http_h1_reader_next — pipelining with answers in order. Request bodies (Content-Length or
 * chunked, decoded) go to on_body as they arrive.
 *
 * Bounds: the request target HTTP_REQUEST_MAX_LINE (414), header names HTTP_H1_MAX_NAME and
 * the header fields together max_header_bytes (431), chunk extensions
 * HTTP_H1_MAX_CHUNK_EXTENSIONS per message (400). Refused with 400 besides what llhttp
 * refuses (Content-Length with Transfer-Encoding, duplicate Content-Lengths, a last
 * transfer coding other than chunked, ...): obsolete line folding and whitespace before a
 * field's colon, which llhttp 8 lets through. */
#ifndef SPEEDY_HTTP_H1_H
#define SPEEDY_HTTP_H1_H

#include <llhttp.h>
#include <stddef.h>
#include <stdint.h>

#include "http_request.h"

#define HTTP_H1_MAX_NAME 256u
#define HTTP_H1_MAX_CHUNK_EXTENSIONS 4096u

typedef struct http_h1_reader http_h1_reader;

typedef struct http_h1_callbacks {
  /* The request's line and headers are complete and checked (reader->request). Return 0,
   * or an HTTP_ERR_* to refuse it (answered, then the connection ends). May be NULL. */
  int (*on_headers)(http_h1_reader *reader, void *user);
  /* A piece of the body, chunked coding removed. Return 0 or an HTTP_ERR_*. May be NULL. */
  int (*on_body)(http_h1_reader *reader, const uint8_t *at, size_t len, void *user);
} http_h1_callbacks;

typedef enum http_h1_event {
  HTTP_H1_MORE,    /* every byte consumed; no complete request yet */
  HTTP_H1_MESSAGE, /* a request is complete: answer it, then http_h1_reader_next */
  HTTP_H1_ERROR    /* reader->error says what to answer; then end the connection */
} http_h1_event;

struct http_h1_reader {
  http_request request; /* the request being read or answered */
  int error;            /* HTTP_ERR_* once the stream is refused */
  int malformed;        /* the refusal was llhttp's: the bytes are not HTTP/1.1 */
  int keep_alive;       /* valid at HTTP_H1_MESSAGE */
  int chunked;          /* the request's body is chunked */
  int had_headers;      /* this request's headers are complete */
  int started;          /* a byte of this request has been read */
  size_t header_bytes;  /* request target + header bytes of this request */
  size_t url_len;
  /* private */
  llhttp_t parser;
  llhttp_settings_t settings;
  const http_h1_callbacks *callbacks;
  void *user;
  size_t max_header_bytes;
  int tls;
  int paused;
  char name[HTTP_H1_MAX_NAME];
  size_t name_len;
  char *value;
  size_t value_len, value_cap;
  int in_value;
  char *url;
  const uint8_t *in_start; /* the buffer being parsed, for the obs-fold check */
  uint8_t in_prev;         /* the byte before in_start ('\n' at the start) */
  size_t chunk_extension_bytes;
};

/* tls: the connection's scheme is https. callbacks must outlive the reader. */
void http_h1_reader_init(http_h1_reader *reader, size_t max_header_bytes, int tls,
                         const http_h1_callbacks *callbacks, void *user);
void http_h1_reader_free(http_h1_reader *reader);

/* Reads from data; *consumed gets the bytes used (all of them unless a request completed).
 * After HTTP_H1_ERROR nothing more is read. */
http_h1_event http_h1_reader_feed(http_h1_reader *reader, const uint8_t *data, size_t len,
                                  size_t *consumed);

/* After answering a request (HTTP_H1_MESSAGE): forget it and read the next. */
void http_h1_reader_next(http_h1_reader *reader);

/* llhttp's reason for refusing the bytes (reader->malformed), for logs. */
const char *http_h1_reader_error_reason(const http_h1_reader *reader);

#endif
