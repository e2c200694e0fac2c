/* buf.c — growable, capped byte buffer (see buf.h). */
#include "buf.h"

#include <string.h>

void speedy_buf_init(speedy_buf *buf, size_t limit) {
  buf->data = NULL;
  buf->start = buf->end = buf->capacity = 0;
  buf->limit = limit;
  buf->regrow = 0;
}

void speedy_buf_free(speedy_buf *buf, speedy_mem *mem) {
  speedy_mem_free(mem, buf->data);
  buf->data = NULL;
  buf->start = buf->end = buf->capacity = 0;
}

int speedy_buf_reserve(speedy_buf *buf, speedy_mem *mem, size_t n) {
  if (buf->capacity - buf->end >= n) return 0;
  size_t used = buf->end - buf->start;
  if (n > buf->limit || used > buf->limit - n) return SPEEDY_ERR_FRAME_TOO_LARGE;
  if (buf->start > 0) { /* slide unconsumed bytes down before growing */
    memmove(buf->data, buf->data + buf->start, used);
    buf->start = 0;
    buf->end = used;
    if (buf->capacity - buf->end >= n) return 0;
  }
  size_t want = used + n;
  size_t grown = buf->capacity >= 256 ? buf->capacity : buf->regrow > 256 ? buf->regrow : 256;
  while (grown < want) grown = grown > SIZE_MAX / 2 ? want : grown * 2;
  if (grown > buf->limit) grown = buf->limit;
  uint8_t *data = speedy_mem_realloc(mem, buf->data, grown);
  if (data == NULL) return SPEEDY_ERR_NOMEM;
  buf->data = data;
  buf->capacity = grown;
  return 0;
}

int speedy_buf_append(speedy_buf *buf, speedy_mem *mem, const void *bytes, size_t n) {
  int rv = speedy_buf_reserve(buf, mem, n);
  if (rv != 0) return rv;
  if (n > 0) memcpy(buf->data + buf->end, bytes, n);
  buf->end += n;
  return 0;
}

void speedy_buf_consume(speedy_buf *buf, size_t n) {
  buf->start += n;
  if (buf->start >= buf->end) buf->start = buf->end = 0;
}

void speedy_buf_shrink(speedy_buf *buf, speedy_mem *mem, size_t keep) {
  if (buf->start == buf->end && buf->capacity > keep) {
    size_t held = buf->capacity;
    speedy_buf_free(buf, mem);
    /* Given back for being idle, it comes back as it was; for being too large, small. */
    buf->regrow = keep > 0 ? 0 : held < SPEEDY_BUF_REGROW_MAX ? held : SPEEDY_BUF_REGROW_MAX;
  }
}
