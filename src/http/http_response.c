/* http_response.c — building responses: statuses, bodies, error pages, HTTP/1.x heads. */
#define _GNU_SOURCE
#include "http_response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"
#include "speedy/speedy.h"

const char *http_status_reason(int status) {
  const char *reason = speedy_status_reason(status);
  return reason != NULL ? reason : "Unknown";
}

void http_response_init(http_response *response) {
  response->status = 200;
  http_headers_init(&response->headers, 0, 0);
  response->body = NULL;
}

void http_response_free(http_response *response) {
  http_headers_free(&response->headers);
  http_body_del(response->body);
  response->body = NULL;
}

void http_response_reset(http_response *response, int status) {
  http_response_free(response);
  response->status = status;
}

void http_response_set_body(http_response *response, http_body *body) {
  if (response->body != body) http_body_del(response->body);
  response->body = body;
}

int http_response_set_borrowed_body(http_response *response, const void *data, size_t len,
                                    void (*release)(void *), void *release_context) {
  http_body_del(response->body); /* it may be in the room */
  response->body = NULL;
  http_body *body;
  int rv =
      http_body_new_borrowed_in(&body, &response->body_room, data, len, release, release_context);
  if (rv == 0) response->body = body;
  return rv;
}

int http_response_set_body_bytes(http_response *response, const char *type, const void *data,
                                 size_t len) {
  http_body *body;
  int rv = http_body_new_memory(&body, data, len);
  if (rv != 0) return rv;
  http_response_set_body(response, body);
  char length[24];
  snprintf(length, sizeof(length), "%zu", len);
  rv = http_headers_set(&response->headers, "content-length", length);
  if (rv == 0 && type != NULL) rv = http_headers_set(&response->headers, "content-type", type);
  return rv;
}

void http_response_drop_body(http_response *response) {
  http_body_del(response->body);
  response->body = NULL;
}

int http_response_set_error(http_response *response, int status, const char *allow) {
  http_response_reset(response, status);
  char page[256];
  const char *reason = http_status_reason(status);
  int n = snprintf(page, sizeof(page),
                   "<!DOCTYPE html>\n<html><head><title>%d %s</title></head>"
                   "<body><h1>%d %s</h1></body></html>\n",
                   status, reason, status, reason);
  if (n < 0 || (size_t)n >= sizeof(page)) return HTTP_ERR_INVALID_ARGUMENT;
  int rv = http_response_set_body_bytes(response, "text/html; charset=utf-8", page, (size_t)n);
  if (rv == 0 && allow != NULL) rv = http_headers_set(&response->headers, "allow", allow);
  return rv;
}

int http_response_set_error_from(http_response *response, int err, const char *allow) {
  return http_response_set_error(response, http_err_status(err), allow);
}

int http_response_format_http1(const http_response *response, const char *version,
                               const char *extra, char **out, size_t *len) {
  if (version == NULL || out == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  const char *reason = http_status_reason(response->status);
  char status_line[64];
  int n = snprintf(status_line, sizeof(status_line), " %d %s\r\n", response->status, reason);
  if (n < 0 || (size_t)n >= sizeof(status_line)) return HTTP_ERR_INVALID_ARGUMENT;
  /* Sizes are bounded by what we hold in memory, so these sums cannot wrap. */
  size_t total = strlen(version) + (size_t)n + 2 + (extra != NULL ? strlen(extra) : 0);
  for (size_t i = 0; i < response->headers.count; i++)
    total += response->headers.items[i].name_len + response->headers.items[i].value_len + 4;
  char *head = malloc(total + 1);
  if (head == NULL) return HTTP_ERR_NOMEM;
  size_t pos = 0;
#define PUT(s, l) (memcpy(head + pos, (s), (l)), pos += (l))
  PUT(version, strlen(version));
  PUT(status_line, (size_t)n);
  for (size_t i = 0; i < response->headers.count; i++) {
    const http_header *h = &response->headers.items[i];
    PUT(h->name, h->name_len);
    PUT(": ", 2);
    PUT(h->value, h->value_len);
    PUT("\r\n", 2);
  }
  if (extra != NULL) PUT(extra, strlen(extra));
  PUT("\r\n", 2);
#undef PUT
  head[pos] = '\0';
  *out = head;
  if (len != NULL) *len = pos;
  return 0;
}
