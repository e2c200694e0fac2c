/* buf.h — a growable byte buffer with a hard cap, owned by whoever embeds it.
 *
 * Used for the session's input (one control frame) and output (frames ready to send).
 * Bytes live in [data + start, data + end); consumed bytes are reclaimed by sliding the
 * rest down when space runs out, so steady traffic causes no allocations.
 */
#ifndef SPEEDY_LIB_BUF_H
#define SPEEDY_LIB_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

typedef struct speedy_buf {
  uint8_t *data;
  size_t start;    /* first unconsumed byte */
  size_t end;      /* one past the last byte */
  size_t capacity; /* allocated bytes */
  size_t limit;    /* capacity may never exceed this */
  size_t regrow;   /* capacity speedy_buf_shrink gave back (see there), or 0 */
} speedy_buf;

/* A buffer given back when idle comes back in one allocation up to this size, not by
 * doubling from 256 octets. */
#define SPEEDY_BUF_REGROW_MAX 16384u

void speedy_buf_init(speedy_buf *buf, size_t limit);
/* Frees the storage (the speedy_buf itself belongs to its embedder). */
void speedy_buf_free(speedy_buf *buf, speedy_mem *mem);

static inline size_t speedy_buf_len(const speedy_buf *buf) { return buf->end - buf->start; }
/* NULL while nothing was ever allocated (offsetting a null pointer is undefined). */
static inline uint8_t *speedy_buf_head(const speedy_buf *buf) {
  return buf->data != NULL ? buf->data + buf->start : NULL;
}
static inline uint8_t *speedy_buf_tail(const speedy_buf *buf) {
  return buf->data != NULL ? buf->data + buf->end : NULL;
}

/* Makes room for n more bytes at the tail. Returns 0, SPEEDY_ERR_NOMEM, or
 * SPEEDY_ERR_FRAME_TOO_LARGE when the buffer would pass its limit. */
int speedy_buf_reserve(speedy_buf *buf, speedy_mem *mem, size_t n);
/* Appends n bytes (reserving first). */
int speedy_buf_append(speedy_buf *buf, speedy_mem *mem, const void *bytes, size_t n);
/* Marks n bytes written at the tail (after reserve). */
static inline void speedy_buf_commit(speedy_buf *buf, size_t n) { buf->end += n; }
/* Drops n bytes from the head; an emptied buffer rewinds to offset 0. */
void speedy_buf_consume(speedy_buf *buf, size_t n);
/* Empties the buffer, keeping its storage. */
static inline void speedy_buf_reset(speedy_buf *buf) { buf->start = buf->end = 0; }
/* Gives storage back when the buffer is empty and holds more than keep bytes, so idle
 * sessions stay small. With keep 0 (given back for being idle, not for being large) the
 * next growth takes back what it held, up to SPEEDY_BUF_REGROW_MAX, at once. */
void speedy_buf_shrink(speedy_buf *buf, speedy_mem *mem, size_t keep);

#endif
