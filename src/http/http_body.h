/* http_body.h — response body sources with one pull interface for SPDY and HTTP/1.1.
 *
 * A body is read by pulling: http_body_read copies up to len bytes and says when the
 * body ends. That maps one to one onto libspeedy's speedy_data_read_fn (see
 * http_spdy_body_read in http_spdy.h, which is that adapter):
 *   bytes > 0 or 0 with *eof      -> the count, SPEEDY_DATA_FLAG_EOF when *eof
 *   HTTP_ERR_NOT_READY             -> SPEEDY_ERR_DEFERRED (resume the stream later)
 *   any other negative value       -> reset the stream (SPDY) / close the connection
 *                                     without finishing the body (HTTP/1.1)
 * An HTTP/1.1 writer may instead ask http_body_file_range for (fd, offset, length) when
 * the body is a plain range of an open file, hand that to sendfile(2), and report what
 * was sent with http_body_advance. A file that shrinks while being sent ends the body
 * with an error: http_body_read returns HTTP_ERR_TRUNCATED when read hits end of file
 * early; a sendfile writer sees sendfile return 0 before `length` bytes and must treat
 * it the same way (close the connection; the Content-Length promise is broken).
 *
 * Bodies are single-reader, single-threaded objects. The caller of a constructor owns
 * the body and frees it with http_body_del (an http_response frees its own body).
 */
#ifndef SPEEDY_HTTP_BODY_H
#define SPEEDY_HTTP_BODY_H

#include <stddef.h>
#include <stdint.h>

typedef struct http_body http_body;

/* A body producing bytes from the caller's code: return a count (set *eof on the last
 * chunk), HTTP_ERR_NOT_READY, or another negative error. */
typedef int64_t (*http_body_pull_fn)(void *context, uint8_t *buf, size_t len, int *eof);

/* A copy of data[0..len). */
int http_body_new_memory(http_body **out, const void *data, size_t len);
/* Takes ownership of data (malloc'd; freed with free()). On error data is freed too. */
int http_body_new_owned(http_body **out, void *data, size_t len);
/* length bytes of fd from offset. Takes ownership of fd (closed by http_body_del, and on
 * error). The range must not wrap (offset + length <= INT64_MAX). */
int http_body_new_file(http_body **out, int fd, uint64_t offset, uint64_t length);
/* len bytes at data, owned by someone else: release(release_context) is called once
 * when the body is freed (also on error). Used for shared cached buffers. */
int http_body_new_borrowed(http_body **out, const void *data, size_t len,
                           void (*release)(void *release_context), void *release_context);
/* Room for a body inside another object (an http_response has one): a body placed there
 * costs no allocation of its own, and is read beside its owner. */
#define HTTP_BODY_ROOM 128
typedef union http_body_room {
  long double align_ld;
  void *align_p;
  unsigned char bytes[HTTP_BODY_ROOM];
} http_body_room;
/* http_body_new_borrowed with the body placed in room (which must outlive it):
 * http_body_del then releases the bytes and frees nothing. */
int http_body_new_borrowed_in(http_body **out, http_body_room *room, const void *data, size_t len,
                              void (*release)(void *release_context), void *release_context);
/* Bytes from pull(context, ...); free_context(context) when freed (may be NULL). length
 * is the total when known (Content-Length), -1 otherwise. */
int http_body_new_callback(http_body **out, http_body_pull_fn pull, void *context,
                           void (*free_context)(void *context), int64_t length);

/* Copies up to len bytes into buf. Returns the count (possibly 0 with *eof = 1 at the
 * end; *eof is set to 1 on the read that delivers the last byte), HTTP_ERR_NOT_READY,
 * HTTP_ERR_TRUNCATED (a file ended early) or HTTP_ERR_IO. */
int64_t http_body_read(http_body *body, uint8_t *buf, size_t len, int *eof);

/* The total length (what Content-Length says), or -1 when unknown. */
int64_t http_body_length(const http_body *body);
/* Bytes not yet read (a file range's or memory body's), or -1 when unknown. */
int64_t http_body_remaining(const http_body *body);

/* When the body is bytes in memory: points *data at the next unread byte and sets *len to
 * the count still unread; returns 0 (the bytes stay valid until the body is freed). A
 * writer may send them itself and report them with http_body_advance. Otherwise
 * HTTP_ERR_INVALID_ARGUMENT. */
int http_body_memory_span(const http_body *body, const uint8_t **data, size_t *len);

/* The owner of a borrowed memory body says its bytes, and the `room` octets before them,
 * are writable memory it lends to the body's writer: the writer may change octets before
 * the span for the moment of one write (a frame header placed just before its payload)
 * and must put them back before it returns to the event loop. Nothing in this process may
 * read the bytes meanwhile (bodies are single-threaded). HTTP_ERR_INVALID_ARGUMENT for a
 * body not in memory. */
int http_body_lend(http_body *body, size_t room);
/* http_body_memory_span for a lent body, writable: *room is the count of octets before
 * *data that may be changed that way (the lent room and what was already read).
 * HTTP_ERR_INVALID_ARGUMENT when the body is not lent memory. */
int http_body_lent_span(http_body *body, uint8_t **data, size_t *len, size_t *room);

/* When the body is a range of a file: the fd, the offset of the next unsent byte and the
 * count still to send; returns 0. Otherwise HTTP_ERR_INVALID_ARGUMENT. The fd stays
 * owned by the body. */
int http_body_file_range(const http_body *body, int *fd, uint64_t *offset, uint64_t *length);
/* Marks n bytes as sent outside http_body_read (sendfile). n larger than what remains
 * is clamped. */
void http_body_advance(http_body *body, uint64_t n);

void http_body_del(http_body *body);

#endif
