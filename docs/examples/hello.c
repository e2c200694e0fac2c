/* hello.c — a SPDY/3.1 client and server in one process, wired together in memory.
 *
 * Shows the whole libspeedy API shape: sessions fed with bytes (speedy_session_recv), asked
 * for bytes (speedy_session_send), callbacks for what arrives, and a body served by pull.
 * Build: cc hello.c $(pkg-config --cflags --libs libspeedy) -o hello
 */
#include <speedy/speedy.h>
#include <stdio.h>
#include <string.h>

static const char page[] = "<h1>Hello over SPDY</h1>\n";

/* Body source: copies the page, then says EOF. */
static int64_t read_page(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  (void)session, (void)stream_id, (void)user;
  size_t *offset = source;
  size_t n = sizeof(page) - 1 - *offset;
  if (n > len) n = len;
  memcpy(buf, page + *offset, n);
  *offset += n;
  if (*offset == sizeof(page) - 1) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

static size_t page_offset;

/* Server: once a request's headers are complete, answer it. */
static int server_headers_end(speedy_session *session, int32_t stream_id, int end_stream,
                              void *user) {
  (void)end_stream, (void)user;
  const speedy_header response[] = {{":status", 7, "200", 3},
                                    {"content-type", 12, "text/html", 9}};
  return speedy_submit_response(session, stream_id, response, 2, read_page, &page_offset);
}

/* Client: print what arrives. */
static int client_header(speedy_session *session, int32_t stream_id, const speedy_header *h,
                         void *user) {
  (void)session, (void)user;
  printf("stream %d: %.*s: %.*s\n", (int)stream_id, (int)h->name_len, h->name,
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
  printf("libspeedy %s\n", speedy_version());
  speedy_callbacks *server_cb, *client_cb;
  if (speedy_callbacks_new(&server_cb) != 0 || speedy_callbacks_new(&client_cb) != 0) return 1;
  speedy_callbacks_set_on_headers_end(server_cb, server_headers_end);
  speedy_callbacks_set_on_header(client_cb, client_header);
  speedy_callbacks_set_on_data_chunk(client_cb, client_data);
  speedy_callbacks_set_on_stream_close(client_cb, client_close);

  int done = 0;
  speedy_session *server, *client;
  int rv = speedy_session_new(&server, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_SERVER, server_cb, NULL,
                            NULL);
  if (rv == 0)
    rv = speedy_session_new(&client, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, client_cb, NULL,
                          &done);
  speedy_callbacks_del(server_cb);
  speedy_callbacks_del(client_cb);
  if (rv != 0) {
    fprintf(stderr, "hello: %s\n", speedy_strerror(rv));
    return 1;
  }

  const speedy_header request[] = {{":method", 7, "GET", 3},
                                   {":scheme", 7, "https", 5},
                                   {":authority", 10, "localhost", 9},
                                   {":path", 5, "/", 1}};
  int32_t stream_id = speedy_submit_request(client, 0, request, 4, NULL, NULL, NULL);
  if (stream_id < 0) {
    fprintf(stderr, "hello: %s\n", speedy_strerror(stream_id));
    return 1;
  }
  for (int round = 0; round < 100 && !done; round++) {
    int64_t a = transfer(client, server), b = transfer(server, client);
    if (a < 0 || b < 0) {
      fprintf(stderr, "hello: %s\n", speedy_strerror((int)(a < 0 ? a : b)));
      return 1;
    }
  }
  speedy_session_del(client);
  speedy_session_del(server);
  return done ? 0 : 1;
}
