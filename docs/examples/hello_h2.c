/* hello_h2.c — an HTTP/2 client and server in one process, wired together in memory.
 *
 * The same API as hello.c with SPEEDY_PROTOCOL_H2 and HTTP/2's header names; the server
 * sends a 103 Early Hints first, then the response, and ends the body with trailers
 * submitted from the body's last read.
 * Build: cc hello_h2.c $(pkg-config --cflags --libs libspeedy) -o hello_h2
 */
#include <speedy/speedy.h>
#include <stdio.h>
#include <string.h>

static const char page[] = "<h1>Hello over HTTP/2</h1>\n";

/* Body source: copies the page; its last read ends the body and sends trailers. */
static int64_t read_page(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  (void)user;
  size_t *offset = source;
  size_t n = sizeof(page) - 1 - *offset;
  if (n > len) n = len;
  memcpy(buf, page + *offset, n);
  *offset += n;
  if (*offset == sizeof(page) - 1) {
    const speedy_header trailers[] = {{"x-page-bytes", 12, "27", 2}};
    *flags |= SPEEDY_DATA_FLAG_EOF | SPEEDY_DATA_FLAG_NO_END_STREAM;
    if (speedy_submit_headers(session, stream_id, trailers, 1, 1) != 0) return -1;
  }
  return (int64_t)n;
}

static size_t page_offset;

/* Server: once a request is complete, hint at a style sheet, then answer. */
static int server_headers_end(speedy_session *session, int32_t stream_id, int end_stream,
                              void *user) {
  (void)end_stream, (void)user;
  const speedy_header hints[] = {{":status", 7, "103", 3},
                               {"link", 4, "</style.css>; rel=preload", 25}};
  const speedy_header response[] = {{":status", 7, "200", 3},
                                  {"content-type", 12, "text/html", 9}};
  int rv = speedy_submit_headers(session, stream_id, hints, 2, 0);
  return rv != 0 ? rv : speedy_submit_response(session, stream_id, response, 2, read_page,
                                             &page_offset);
}

/* Client: print what arrives. */
static int client_begin(speedy_session *session, int32_t stream_id, speedy_headers_kind kind,
                        int32_t associated_id, void *user) {
  (void)session, (void)associated_id, (void)user;
  const char *what = kind == SPEEDY_HEADERS_INFORMATIONAL ? "informational response"
                     : kind == SPEEDY_HEADERS_EXTRA       ? "trailers"
                                                        : "response";
  printf("stream %d: %s\n", (int)stream_id, what);
  return 0;
}

static int client_header(speedy_session *session, int32_t stream_id, const speedy_header *h,
                         void *user) {
  (void)session, (void)user;
  printf("stream %d:   %.*s: %.*s\n", (int)stream_id, (int)h->name_len, h->name,
         (int)h->value_len, h->value);
  return 0;
}

static int client_data(speedy_session *session, int32_t stream_id, const uint8_t *data, size_t len,
                       void *user) {
  (void)session, (void)stream_id, (void)user;
  fwrite(data, 1, len, stdout);
  return 0;
}

static int client_close(speedy_session *session, int32_t stream_id, uint32_t status, void *user) {
  (void)session;
  printf("stream %d closed: %s\n", (int)stream_id, speedy_rst_status_name(status));
  *(int *)user = 1;
  return 0;
}

/* Moves everything `from` has to send into `to`. Returns 0 or a libspeedy error. */
static int64_t transfer(speedy_session *from, speedy_session *to) {
  uint8_t buf[16384];
  int64_t n, total = 0;
  while ((n = speedy_session_send(from, buf, sizeof(buf))) > 0) {
    int64_t rv = speedy_session_recv(to, buf, (size_t)n);
    if (rv < 0) return rv;
    total += n;
  }
  return n < 0 ? n : total;
}

int main(void) {
  printf("libspeedy %s, %s\n", speedy_version(), speedy_protocol_name(SPEEDY_PROTOCOL_H2));
  speedy_callbacks *server_cb, *client_cb;
  if (speedy_callbacks_new(&server_cb) != 0 || speedy_callbacks_new(&client_cb) != 0) return 1;
  speedy_callbacks_set_on_headers_end(server_cb, server_headers_end);
  speedy_callbacks_set_on_begin_headers(client_cb, client_begin);
  speedy_callbacks_set_on_header(client_cb, client_header);
  speedy_callbacks_set_on_data_chunk(client_cb, client_data);
  speedy_callbacks_set_on_stream_close(client_cb, client_close);

  int done = 0;
  speedy_session *server, *client;
  int rv = speedy_session_new(&server, SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, server_cb, NULL, NULL);
  if (rv == 0)
    rv = speedy_session_new(&client, SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, client_cb, NULL, &done);
  speedy_callbacks_del(server_cb);
  speedy_callbacks_del(client_cb);
  if (rv != 0) {
    fprintf(stderr, "hello_h2: %s\n", speedy_strerror(rv));
    return 1;
  }

  const speedy_header request[] = {{":method", 7, "GET", 3},
                                 {":scheme", 7, "https", 5},
                                 {":authority", 10, "localhost", 9},
                                 {":path", 5, "/", 1}};
  int32_t stream_id = speedy_submit_request(client, 0, request, 4, NULL, NULL, NULL);
  if (stream_id < 0) {
    fprintf(stderr, "hello_h2: %s\n", speedy_strerror(stream_id));
    return 1;
  }
  for (int round = 0; round < 100 && !done; round++) {
    int64_t a = transfer(client, server), b = transfer(server, client);
    if (a < 0 || b < 0) {
      fprintf(stderr, "hello_h2: %s\n", speedy_strerror((int)(a < 0 ? a : b)));
      return 1;
    }
  }
  speedy_session_del(client);
  speedy_session_del(server);
  return done ? 0 : 1;
}
