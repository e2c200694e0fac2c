/* http_body.c — response body sources: memory, file ranges, shared buffers, callbacks.
 *
 * One struct with a kind tag: the server asks for the kind only through
 * http_body_file_range (sendfile), everything else goes through http_body_read.
 */
#define _GNU_SOURCE
#include "http_body.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_err.h"

typedef enum body_kind { BODY_MEMORY, BODY_FILE, BODY_CALLBACK } body_kind;

struct http_body {
  body_kind kind;
  int64_t length; /* total, -1 unknown */
  /* BODY_MEMORY */
  const uint8_t *data;
  void *owned; /* freed with free() */
  void (*release)(void *);
  void *release_context;
  /* BODY_MEMORY and BODY_FILE */
  uint64_t position; /* next byte to deliver, relative to data / absolute in the file */
  uint64_t remaining;
  /* BODY_FILE */
  int fd;
  /* BODY_CALLBACK */
  http_body_pull_fn pull;
  void *context;
  void (*free_context)(void *);
  int finished;
  int in_room; /* placed in an http_body_room: not freed by http_body_del */
  int lent;    /* BODY_MEMORY: data and lent_room octets before it are writable */
  size_t lent_room;
};

_Static_assert(sizeof(struct http_body) <= HTTP_BODY_ROOM, "HTTP_BODY_ROOM holds a body");

static void body_init(http_body *body, body_kind kind) {
  memset(body, 0, sizeof(*body));
  body->kind = kind;
  body->fd = -1;
}

static http_body *body_alloc(body_kind kind) {
  http_body *body = malloc(sizeof(*body));
  if (body != NULL) body_init(body, kind);
  return body;
}

int http_body_new_owned(http_body **out, void *data, size_t len) {
  if (out == NULL || (data == NULL && len > 0) || len > INT64_MAX) {
    free(data);
    return HTTP_ERR_INVALID_ARGUMENT;
  }
  http_body *body = body_alloc(BODY_MEMORY);
  if (body == NULL) {
    free(data);
    return HTTP_ERR_NOMEM;
  }
  body->data = data;
  body->owned = data;
  body->length = (int64_t)len;
  body->remaining = len;
  *out = body;
  return 0;
}

int http_body_new_memory(http_body **out, const void *data, size_t len) {
  if (out == NULL || (data == NULL && len > 0)) return HTTP_ERR_INVALID_ARGUMENT;
  void *copy = malloc(len == 0 ? 1 : len);
  if (copy == NULL) return HTTP_ERR_NOMEM;
  if (len > 0) memcpy(copy, data, len);
  return http_body_new_owned(out, copy, len);
}

static int borrowed(http_body **out, http_body_room *room, const void *data, size_t len,
                    void (*release)(void *), void *release_context) {
  http_body *body = NULL;
  int rv = HTTP_ERR_INVALID_ARGUMENT;
  if (out == NULL || (data == NULL && len > 0) || len > INT64_MAX) goto fail;
  rv = HTTP_ERR_NOMEM;
  if (room != NULL) {
    body = (http_body *)(void *)room->bytes;
    body_init(body, BODY_MEMORY);
    body->in_room = 1;
  } else {
    body = body_alloc(BODY_MEMORY);
  }
  if (body == NULL) goto fail;
  body->data = data;
  body->length = (int64_t)len;
  body->remaining = len;
  body->release = release;
  body->release_context = release_context;
  *out = body;
  return 0;
fail:
  if (release != NULL) release(release_context);
  return rv;
}

int http_body_new_borrowed(http_body **out, const void *data, size_t len, void (*release)(void *),
                           void *release_context) {
  return borrowed(out, NULL, data, len, release, release_context);
}

int http_body_new_borrowed_in(http_body **out, http_body_room *room, const void *data, size_t len,
                              void (*release)(void *), void *release_context) {
  if (room == NULL) {
    if (release != NULL) release(release_context);
    return HTTP_ERR_INVALID_ARGUMENT;
  }
  return borrowed(out, room, data, len, release, release_context);
}

int http_body_new_file(http_body **out, int fd, uint64_t offset, uint64_t length) {
  if (out == NULL || fd < 0 || offset > INT64_MAX || length > INT64_MAX - offset) {
    if (fd >= 0) close(fd);
    return HTTP_ERR_INVALID_ARGUMENT;
  }
  http_body *body = body_alloc(BODY_FILE);
  if (body == NULL) {
    close(fd);
    return HTTP_ERR_NOMEM;
  }
  body->fd = fd;
  body->position = offset;
  body->remaining = length;
  body->length = (int64_t)length;
  *out = body;
  return 0;
}

int http_body_new_callback(http_body **out, http_body_pull_fn pull, void *context,
                           void (*free_context)(void *), int64_t length) {
  if (out == NULL || pull == NULL || length < -1) {
    if (free_context != NULL) free_context(context);
    return HTTP_ERR_INVALID_ARGUMENT;
  }
  http_body *body = body_alloc(BODY_CALLBACK);
  if (body == NULL) {
    if (free_context != NULL) free_context(context);
    return HTTP_ERR_NOMEM;
  }
  body->pull = pull;
  body->context = context;
  body->free_context = free_context;
  body->length = length;
  *out = body;
  return 0;
}

static int64_t read_file(http_body *body, uint8_t *buf, size_t len, int *eof) {
  size_t want = body->remaining < len ? (size_t)body->remaining : len;
  if (want == 0) {
    *eof = 1;
    return 0;
  }
  ssize_t got;
  do {
    got = pread(body->fd, buf, want, (off_t)body->position);
  } while (got < 0 && errno == EINTR);
  if (got < 0) return errno == EAGAIN ? HTTP_ERR_NOT_READY : HTTP_ERR_IO;
  if (got == 0) return HTTP_ERR_TRUNCATED; /* the file shrank below its promised length */
  body->position += (uint64_t)got;
  body->remaining -= (uint64_t)got;
  *eof = body->remaining == 0;
  return got;
}

int64_t http_body_read(http_body *body, uint8_t *buf, size_t len, int *eof) {
  if (body == NULL || eof == NULL || (buf == NULL && len > 0)) return HTTP_ERR_INVALID_ARGUMENT;
  *eof = 0;
  switch (body->kind) {
  case BODY_MEMORY: {
    size_t n = body->remaining < len ? (size_t)body->remaining : len;
    if (n > 0) memcpy(buf, body->data + body->position, n);
    body->position += n;
    body->remaining -= n;
    *eof = body->remaining == 0;
    return (int64_t)n;
  }
  case BODY_FILE:
    return read_file(body, buf, len, eof);
  case BODY_CALLBACK: {
    if (body->finished) {
      *eof = 1;
      return 0;
    }
    int64_t n = body->pull(body->context, buf, len, eof);
    if (n > (int64_t)len) return HTTP_ERR_IO; /* a broken producer: never overrun buf */
    if (n >= 0 && *eof) body->finished = 1;
    return n;
  }
  }
  return HTTP_ERR_INVALID_ARGUMENT;
}

int64_t http_body_length(const http_body *body) { return body == NULL ? -1 : body->length; }

int64_t http_body_remaining(const http_body *body) {
  if (body == NULL || body->kind == BODY_CALLBACK) return -1;
  return (int64_t)body->remaining;
}

int http_body_memory_span(const http_body *body, const uint8_t **data, size_t *len) {
  if (body == NULL || body->kind != BODY_MEMORY || body->remaining > SIZE_MAX)
    return HTTP_ERR_INVALID_ARGUMENT;
  *data = body->data + body->position;
  *len = (size_t)body->remaining;
  return 0;
}

int http_body_lend(http_body *body, size_t room) {
  if (body == NULL || body->kind != BODY_MEMORY) return HTTP_ERR_INVALID_ARGUMENT;
  body->lent = 1;
  body->lent_room = room;
  return 0;
}

int http_body_lent_span(http_body *body, uint8_t **data, size_t *len, size_t *room) {
  if (body == NULL || body->kind != BODY_MEMORY || !body->lent || body->remaining > SIZE_MAX)
    return HTTP_ERR_INVALID_ARGUMENT;
  /* the owner lent these bytes as writable: only the body's own view of them is const */
  *data = (uint8_t *)(uintptr_t)(body->data + body->position);
  *len = (size_t)body->remaining;
  *room = body->lent_room + (size_t)body->position;
  return 0;
}

int http_body_file_range(const http_body *body, int *fd, uint64_t *offset, uint64_t *length) {
  if (body == NULL || body->kind != BODY_FILE) return HTTP_ERR_INVALID_ARGUMENT;
  if (fd != NULL) *fd = body->fd;
  if (offset != NULL) *offset = body->position;
  if (length != NULL) *length = body->remaining;
  return 0;
}

void http_body_advance(http_body *body, uint64_t n) {
  if (body == NULL || body->kind == BODY_CALLBACK) return;
  if (n > body->remaining) n = body->remaining;
  body->position += n;
  body->remaining -= n;
}

void http_body_del(http_body *body) {
  if (body == NULL) return;
  if (body->fd >= 0) close(body->fd);
  free(body->owned);
  if (body->release != NULL) body->release(body->release_context);
  if (body->free_context != NULL) body->free_context(body->context);
  if (!body->in_room) free(body);
}
