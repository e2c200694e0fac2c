/* http_upload.c — the upload sink: bounded echo or counting discard of POST bodies. */
#define _GNU_SOURCE
#include "http_upload.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_err.h"

struct http_upload {
  http_upload_mode mode;
  uint64_t max_bytes;     /* 0: unlimited */
  int64_t content_length; /* -1: none declared */
  uint64_t received;
  uint8_t *data; /* ECHO */
  size_t capacity;
  char *content_type; /* ECHO: the request's, or NULL */
};

int http_upload_matches(const http_upload_options *options, const http_request *request) {
  if (options == NULL || options->path == NULL || request->path == NULL) return 0;
  size_t len = http_request_path_length(request);
  return strlen(options->path) == len && memcmp(options->path, request->path, len) == 0;
}

int http_upload_check_method(const http_request *request) {
  return request->method != NULL && strcmp(request->method, "POST") == 0 ? 0 : HTTP_ERR_METHOD;
}

int http_upload_begin(http_upload **out, const http_upload_options *options,
                      const http_request *request) {
  if (out == NULL || options == NULL || request == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  uint64_t max = options->max_bytes;
  if (max == 0 && options->mode == HTTP_UPLOAD_ECHO) max = HTTP_UPLOAD_DEFAULT_ECHO_MAX;
  if (options->mode == HTTP_UPLOAD_ECHO && max > SIZE_MAX / 2) max = SIZE_MAX / 2;
  if (max != 0 && request->content_length >= 0 && (uint64_t)request->content_length > max)
    return HTTP_ERR_TOO_LARGE;
  http_upload *upload = calloc(1, sizeof(*upload));
  if (upload == NULL) return HTTP_ERR_NOMEM;
  upload->mode = options->mode;
  upload->max_bytes = max;
  upload->content_length = request->content_length;
  const char *type = http_headers_get(&request->headers, "content-type");
  if (upload->mode == HTTP_UPLOAD_ECHO && type != NULL) {
    upload->content_type = strdup(type);
    if (upload->content_type == NULL) {
      free(upload);
      return HTTP_ERR_NOMEM;
    }
  }
  *out = upload;
  return 0;
}

int http_upload_feed(http_upload *upload, const uint8_t *data, size_t len) {
  if (upload == NULL || (data == NULL && len > 0)) return HTTP_ERR_INVALID_ARGUMENT;
  if (len > UINT64_MAX - upload->received) return HTTP_ERR_TOO_LARGE;
  uint64_t total = upload->received + len;
  if (upload->content_length >= 0 && total > (uint64_t)upload->content_length)
    return HTTP_ERR_BAD_REQUEST;
  if (upload->max_bytes != 0 && total > upload->max_bytes) return HTTP_ERR_TOO_LARGE;
  if (upload->mode == HTTP_UPLOAD_ECHO && len > 0) {
    /* total <= max_bytes <= SIZE_MAX / 2, so the doubling below cannot wrap. */
    if (total > upload->capacity) {
      size_t capacity = upload->capacity == 0 ? 16384 : upload->capacity;
      while (capacity < total) capacity *= 2;
      if (upload->max_bytes != 0 && capacity > upload->max_bytes)
        capacity = (size_t)upload->max_bytes;
      uint8_t *grown = realloc(upload->data, capacity);
      if (grown == NULL) return HTTP_ERR_NOMEM;
      upload->data = grown;
      upload->capacity = capacity;
    }
    memcpy(upload->data + upload->received, data, len);
  }
  upload->received = total;
  return 0;
}

int http_upload_finish(http_upload *upload, http_response *response) {
  if (upload == NULL || response == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  if (upload->content_length >= 0 && upload->received != (uint64_t)upload->content_length)
    return HTTP_ERR_BAD_REQUEST;
  http_response_reset(response, 200);
  if (upload->mode == HTTP_UPLOAD_ECHO) {
    void *data = upload->data;
    size_t len = (size_t)upload->received;
    upload->data = NULL;
    upload->capacity = 0;
    http_body *body;
    int rv = http_body_new_owned(&body, data, len);
    if (rv != 0) return rv;
    http_response_set_body(response, body);
    char length[24];
    snprintf(length, sizeof(length), "%zu", len);
    rv = http_headers_set(&response->headers, "content-length", length);
    if (rv == 0)
      rv = http_headers_set(&response->headers, "content-type",
                            upload->content_type != NULL ? upload->content_type
                                                         : "application/octet-stream");
    return rv;
  }
  char text[48];
  int n = snprintf(text, sizeof(text), "{\"received\": %" PRIu64 "}\n", upload->received);
  return http_response_set_body_bytes(response, "application/json", text, (size_t)n);
}

uint64_t http_upload_received(const http_upload *upload) { return upload->received; }

void http_upload_del(http_upload *upload) {
  if (upload == NULL) return;
  free(upload->data);
  free(upload->content_type);
  free(upload);
}
