/* test_io_nomem.c — the I/O layer without memory at the wrong moment: a listener that
 * cannot allocate a connection for an accepted socket closes that socket and goes on
 * accepting (libuv watches a listener only while nothing is pending on it). calloc is
 * wrapped at link time (-Wl,--wrap=calloc) for this binary alone: only the I/O layer's own
 * calls go through the wrapper. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "io.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static int fail_callocs; /* the next this many callocs fail */

void *__wrap_calloc(size_t n, size_t size) {
  if (fail_callocs > 0) {
    fail_callocs--;
    return NULL;
  }
  return __real_calloc(n, size);
}

typedef struct nomem_world {
  uv_loop_t loop;
  io_listener *listener;
  int accepted;
  uv_tcp_t clients[2];
  uv_connect_t connects[2];
  int connected, closed_by_server[2];
  uv_timer_t step;
} nomem_world;

static size_t server_read(io_conn *conn, const uint8_t *data, size_t len, void *user) {
  (void)conn, (void)data, (void)user;
  return len;
}

static void on_accept(io_listener *l, io_conn *conn, void *user) {
  (void)l;
  nomem_world *w = user;
  w->accepted++;
  io_conn_callbacks cb = {.on_read = server_read};
  io_conn_set_callbacks(conn, &cb, w);
  io_conn_close(conn);
}

static void alloc_buf(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h, (void)suggested;
  static char bytes[256];
  *buf = uv_buf_init(bytes, sizeof(bytes));
}

static void on_client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  (void)buf;
  nomem_world *w = s->loop->data;
  if (n < 0) {
    w->closed_by_server[s == (uv_stream_t *)&w->clients[0] ? 0 : 1] = 1;
    uv_read_stop(s);
  }
}

static void on_connected(uv_connect_t *req, int status) {
  nomem_world *w = req->handle->loop->data;
  cr_assert_eq(status, 0, "connect: %s", uv_strerror(status));
  w->connected++;
  uv_read_start(req->handle, alloc_buf, on_client_read);
}

static void connect_client(nomem_world *w, int i) {
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", io_listener_port(w->listener), &addr);
  uv_tcp_init(&w->loop, &w->clients[i]);
  uv_tcp_connect(&w->connects[i], &w->clients[i], (const struct sockaddr *)&addr, on_connected);
}

/* Steps of the test, 100 ms apart: the second client, then the end. */
static void on_step(uv_timer_t *t) {
  nomem_world *w = t->data;
  if (w->connected == 1) {
    connect_client(w, 1);
    return;
  }
  uv_timer_stop(t);
  uv_close((uv_handle_t *)t, NULL);
  uv_close((uv_handle_t *)&w->clients[0], NULL);
  uv_close((uv_handle_t *)&w->clients[1], NULL);
  io_listener_close(w->listener);
}

Test(io_nomem, a_connection_without_memory_is_closed_and_the_next_one_accepted) {
  nomem_world w;
  memset(&w, 0, sizeof(w));
  cr_assert_eq(uv_loop_init(&w.loop), 0);
  w.loop.data = &w;
  cr_assert_eq(io_listener_new(&w.listener, &w.loop, "127.0.0.1", 0, NULL, NULL, on_accept, &w), 0);
  fail_callocs = 1; /* the first accepted socket's connection */
  connect_client(&w, 0);
  uv_timer_init(&w.loop, &w.step);
  w.step.data = &w;
  uv_timer_start(&w.step, on_step, 200, 200);
  uv_run(&w.loop, UV_RUN_DEFAULT);
  cr_expect_eq(fail_callocs, 0, "the listener never tried to allocate");
  cr_expect(w.closed_by_server[0], "the first client was not closed");
  cr_expect_eq(w.accepted, 1, "the second client was not accepted (%d)", w.accepted);
  cr_expect(w.closed_by_server[1], "the second client was not answered");
  cr_assert_eq(uv_loop_close(&w.loop), 0, "handles left open on the loop");
}
