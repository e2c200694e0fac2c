/* test_io.c — the shared I/O layer on loopback: an echo server and a client in one
 * libuv loop, over plaintext and TLS (certificates made at test time by gencerts.sh).
 *
 * Covers negotiation (ALPN by the server's preference, NPN for a TLS 1.2 client offering
 * only NPN, TLS without either), verification (unknown CA, wrong host name, insecure),
 * the plaintext sniff, port 0 on IPv4 and IPv6, a large echo through backpressure (the
 * server consumes only what it has room to echo), the connection limit and the handshake
 * timeout.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "io.h"
#include "io_int.h"

static char cert_dir[512];

static void make_certs(void) {
  const char *src = getenv("SPEEDY_SOURCE_DIR");
  const char *build = getenv("SPEEDY_BUILD_DIR");
  cr_assert(src && build, "SPEEDY_SOURCE_DIR and SPEEDY_BUILD_DIR must be set (run via ctest)");
  snprintf(cert_dir, sizeof(cert_dir), "%s/tests/io/certs", build);
  char cmd[1400];
  snprintf(cmd, sizeof(cmd), "sh '%s/tests/io/gencerts.sh' '%s'", src, cert_dir);
  cr_assert_eq(system(cmd), 0, "gencerts.sh failed");
}

static const char *cert_path(const char *name) {
  static char paths[4][600];
  static int next;
  char *p = paths[next++ % 4];
  snprintf(p, sizeof(paths[0]), "%s/%s", cert_dir, name);
  return p;
}

/* ---- One test's world ----------------------------------------------------------- */

typedef struct world {
  uv_loop_t loop;
  uv_timer_t deadline;
  io_listener *listener;
  io_tls *server_tls, *client_tls;
  io_config server_config, client_config;
  const char *server_name;
  const char *addr;
  /* client side */
  size_t to_send, sent, received;
  int client_open, client_closed, client_status;
  int client_paused; /* reads nothing until the server has held input back */
  io_proto client_proto;
  io_negotiation client_how;
  char client_detail[256];
  int bad_byte;
  uv_timer_t resume_timer;
  io_conn *client;
  /* server side */
  int server_open, server_closed, server_status;
  io_proto server_proto;
  io_negotiation server_how;
  int saw_backpressure; /* the server had less room than input and held the rest */
  int count_eofs;       /* the server counts on_eof and closes 50 ms after the first */
  int server_eofs;
  io_conn *server_conn;
  uv_timer_t eof_timer;
  int accepted;
  int raw_client; /* connect a bare TCP socket instead of an io_conn client */
  uv_tcp_t raw;
  uv_connect_t raw_req;
  const char *raw_bytes; /* sent by the raw client */
  size_t raw_len;
  struct proxy *proxy; /* records TLS record sizes from server to client */
  /* framed: the server echoes in frames of varying size through io_conn_write_framed, a
   * 9-octet head and the rest lent from a buffer (the lent octets checked afterwards) */
  int framed, lent_clobbered;
  /* io_conn_is_bulk and io_conn_room of each side when it opened */
  int server_bulk, client_bulk;
  size_t server_room, client_room;
  size_t frames, one_record_frames[1024], n_one_record;
} world;

static uint8_t pattern_byte(size_t i) { return (uint8_t)((i * 2654435761u) >> 24); }

static void on_deadline(uv_timer_t *t) {
  world *w = t->data;
  uv_stop(&w->loop);
}

/* The echo of data[0..len) in frames (a 9-octet head, the rest lent): their sizes cycle
 * through several that fit a record and some that do not. */
static void server_write_framed(world *w, io_conn *conn, const uint8_t *data, size_t len) {
  static const size_t sizes[] = {16384, 9 + 4096, 9 + 10000, 100, 16385, 20000, 9 + 4095};
  static uint8_t lent[16 + 20000];
  static const uint8_t before[16] = "lent, not theirs";
  while (len > 0) {
    size_t n = sizes[w->frames++ % (sizeof(sizes) / sizeof(sizes[0]))];
    if (n > len) n = len;
    if (n <= 9) {
      cr_assert_eq(io_conn_write(conn, data, n), 0);
    } else {
      memcpy(lent, before, 16);
      memcpy(lent + 16, data + 9, n - 9);
      cr_assert_eq(io_conn_write_framed(conn, data, 9, lent + 16, n - 9), 0);
      if (memcmp(lent, before, 16) != 0) w->lent_clobbered = 1;
      if (n - 9 >= 4096 && n <= IO_TLS_RECORD_MAX && w->n_one_record < 1024)
        w->one_record_frames[w->n_one_record++] = n;
    }
    data += n;
    len -= n;
  }
}

static void on_resume(uv_timer_t *t) {
  world *w = t->data;
  if (w->client && !w->client_closed) io_conn_pause_read(w->client, 0);
  uv_close((uv_handle_t *)t, NULL);
}

/* Server: echo, consuming only what there is room to echo; the rest is held by the I/O
 * layer until on_writable resumes reading. */
static size_t server_read(io_conn *conn, const uint8_t *data, size_t len, void *user) {
  world *w = user;
  size_t room = io_conn_room(conn);
  size_t n = len < room ? len : room;
  if (n < len && !w->saw_backpressure) {
    w->saw_backpressure = 1;
    /* The paused client drains from now on (from the loop, not from this callback). */
    if (w->client_paused) uv_timer_start(&w->resume_timer, on_resume, 0, 0);
  }
  if (w->framed)
    server_write_framed(w, conn, data, n);
  else
    cr_assert_eq(io_conn_write(conn, data, n), 0);
  if (n < len) io_conn_want_writable(conn);
  return n;
}

static void server_writable(io_conn *conn, size_t room, void *user) {
  (void)room, (void)user;
  io_conn_pause_read(conn, 0);
}

static void server_open(io_conn *conn, void *user) {
  world *w = user;
  w->server_open = 1;
  w->server_proto = io_conn_protocol(conn);
  w->server_how = io_conn_negotiation(conn);
  w->server_bulk = io_conn_is_bulk(conn);
  w->server_room = io_conn_room(conn);
}

static void server_close(io_conn *conn, int status, void *user) {
  (void)conn;
  world *w = user;
  w->server_closed++;
  w->server_status = status;
  if (w->listener && !w->raw_client && w->client_closed) {
    io_listener_close(w->listener);
    w->listener = NULL;
  }
}

static void on_eof_timer(uv_timer_t *t) {
  world *w = t->data;
  io_conn_close(w->server_conn);
  uv_close((uv_handle_t *)t, NULL);
}

/* The peer's end, counted; the connection stays open a while (a server still answering
 * a half-closed client), then closes. */
static void server_eof_counted(io_conn *conn, void *user) {
  world *w = user;
  if (w->server_eofs++ > 0) return;
  w->server_conn = conn;
  uv_timer_init(&w->loop, &w->eof_timer);
  w->eof_timer.data = w;
  uv_timer_start(&w->eof_timer, on_eof_timer, 50, 0);
}

static void on_accept(io_listener *l, io_conn *conn, void *user) {
  (void)l;
  world *w = user;
  w->accepted++;
  io_conn_callbacks cb = {.on_open = server_open,
                          .on_read = server_read,
                          .on_eof = w->count_eofs ? server_eof_counted : NULL,
                          .on_writable = server_writable,
                          .on_close = server_close};
  io_conn_set_callbacks(conn, &cb, w);
}

/* Client: send the pattern as room allows, check the echo, close when all came back. */
static void client_fill(io_conn *conn, world *w, size_t room) {
  uint8_t chunk[8192];
  while (room > 0 && w->sent < w->to_send) {
    size_t n = w->to_send - w->sent;
    if (n > sizeof(chunk)) n = sizeof(chunk);
    if (n > room) n = room;
    for (size_t i = 0; i < n; i++) chunk[i] = pattern_byte(w->sent + i);
    cr_assert_eq(io_conn_write(conn, chunk, n), 0);
    w->sent += n;
    room -= n;
  }
  if (w->sent < w->to_send) io_conn_want_writable(conn);
}

static void client_writable(io_conn *conn, size_t room, void *user) {
  client_fill(conn, user, room);
}

static void client_open(io_conn *conn, void *user) {
  world *w = user;
  w->client_open = 1;
  w->client_proto = io_conn_protocol(conn);
  w->client_how = io_conn_negotiation(conn);
  w->client_bulk = io_conn_is_bulk(conn);
  w->client_room = io_conn_room(conn);
  if (w->client_paused) { /* do not drain until the server must hold back */
    io_conn_pause_read(conn, 1);
    uv_timer_init(&w->loop, &w->resume_timer);
    w->resume_timer.data = w;
  }
  if (w->to_send == 0) {
    io_conn_close(conn);
    return;
  }
  io_conn_want_writable(conn);
}

static size_t client_read(io_conn *conn, const uint8_t *data, size_t len, void *user) {
  world *w = user;
  for (size_t i = 0; i < len; i++)
    if (data[i] != pattern_byte(w->received + i)) w->bad_byte = 1;
  w->received += len;
  if (w->received >= w->to_send) io_conn_close(conn);
  return len;
}

static void client_close(io_conn *conn, int status, void *user) {
  world *w = user;
  w->client_closed = 1;
  w->client_status = status;
  w->client = NULL;
  snprintf(w->client_detail, sizeof(w->client_detail), "%s", io_conn_error_detail(conn));
  if (w->listener && (w->server_closed || !w->accepted)) {
    io_listener_close(w->listener);
    w->listener = NULL;
  }
}

static void world_init(world *w) {
  memset(w, 0, sizeof(*w));
  cr_assert_eq(uv_loop_init(&w->loop), 0);
  uv_timer_init(&w->loop, &w->deadline);
  w->deadline.data = w;
  uv_timer_start(&w->deadline, on_deadline, 10000, 0);
  uv_unref((uv_handle_t *)&w->deadline);
  io_config_init(&w->server_config);
  io_config_init(&w->client_config);
  w->addr = "127.0.0.1";
  w->server_name = "localhost";
}

static void server_tls(world *w, const char *const *protocols, size_t n, unsigned flags) {
  char err[256] = "";
  int rv = io_tls_server_new(&w->server_tls, cert_path("server.pem"), cert_path("server.key"),
                             protocols, n, flags, err, sizeof(err));
  cr_assert_eq(rv, 0, "server TLS: %s", err);
}

static void client_tls(world *w, const char *ca, const char *const *protocols, size_t n,
                       unsigned flags) {
  char err[256] = "";
  int rv = io_tls_client_new(&w->client_tls, ca ? cert_path(ca) : NULL, protocols, n, flags, err,
                             sizeof(err));
  cr_assert_eq(rv, 0, "client TLS: %s", err);
}

static void on_raw_connect(uv_connect_t *req, int status) {
  world *w = req->data;
  cr_assert_eq(status, 0);
  if (w->raw_bytes) {
    static uv_write_t wr;
    uv_buf_t b = uv_buf_init((char *)w->raw_bytes, (unsigned)w->raw_len);
    uv_write(&wr, (uv_stream_t *)&w->raw, &b, 1, NULL);
  }
}

static void raw_close_when_server_done(uv_timer_t *t) {
  world *w = t->data;
  if (w->server_closed || w->server_open) {
    if (!uv_is_closing((uv_handle_t *)&w->raw)) uv_close((uv_handle_t *)&w->raw, NULL);
    if (w->listener) io_listener_close(w->listener);
    w->listener = NULL;
    uv_close((uv_handle_t *)t, NULL);
  }
}

/* ---- A TCP relay that notes the size of every TLS record the server sends ---------- */

typedef struct proxy {
  uv_loop_t *loop;
  uv_tcp_t listener, down, up; /* down: to the client; up: to the server */
  uv_connect_t connect_req;
  struct sockaddr_in server;
  int port, closing;
  uint8_t header[5];
  size_t header_len, body_left;
  uint32_t records[4096]; /* application-data record lengths, in order */
  size_t n_records;
  uint8_t client_head[5]; /* the client's first record: header, then its full size */
  size_t client_head_len, client_first_record;
  /* corrupt: flip a byte of the client's second application-data record (TLS 1.3: the
   * first after its Finished) */
  int corrupt, corrupted;
  uint8_t c_header[5];
  size_t c_header_len, c_body_left, c_app_records;
} proxy;

typedef struct relay_write {
  uv_write_t req;
  char data[];
} relay_write;

static void relay_written(uv_write_t *req, int status) {
  (void)status;
  free(req);
}

static void relay_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)h;
  buf->base = malloc(suggested);
  buf->len = buf->base ? suggested : 0;
}

static void proxy_close(proxy *p) {
  if (p->closing) return;
  p->closing = 1;
  uv_close((uv_handle_t *)&p->down, NULL);
  uv_close((uv_handle_t *)&p->up, NULL);
  uv_close((uv_handle_t *)&p->listener, NULL);
}

static void relay(proxy *p, uv_stream_t *to, const char *data, size_t len) {
  relay_write *w = malloc(sizeof(*w) + len);
  cr_assert(w);
  memcpy(w->data, data, len);
  uv_buf_t b = uv_buf_init(w->data, (unsigned)len);
  if (uv_write(&w->req, to, &b, 1, relay_written) != 0) {
    free(w);
    proxy_close(p);
  }
}

/* Walks the server's bytes record by record (5-byte header: type, version, length). */
static void note_records(proxy *p, const uint8_t *data, size_t len) {
  while (len > 0) {
    if (p->body_left == 0) {
      p->header[p->header_len++] = *data++;
      len--;
      if (p->header_len == 5) {
        p->body_left = ((size_t)p->header[3] << 8) | p->header[4];
        p->header_len = 0;
        if (p->header[0] == 23 && p->n_records < 4096)
          p->records[p->n_records++] = (uint32_t)p->body_left;
      }
      continue;
    }
    size_t n = len < p->body_left ? len : p->body_left;
    data += n;
    len -= n;
    p->body_left -= n;
  }
}

static void on_up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  proxy *p = s->data;
  if (n > 0) {
    note_records(p, (const uint8_t *)buf->base, (size_t)n);
    relay(p, (uv_stream_t *)&p->down, buf->base, (size_t)n);
  } else if (n < 0) {
    proxy_close(p);
  }
  free(buf->base);
}

/* Walks the client's bytes record by record and, when asked, flips one byte of its second
 * application-data record. */
static void corrupt_client_record(proxy *p, uint8_t *data, size_t len) {
  while (len > 0) {
    if (p->c_body_left == 0) {
      p->c_header[p->c_header_len++] = *data++;
      len--;
      if (p->c_header_len == 5) {
        p->c_body_left = ((size_t)p->c_header[3] << 8) | p->c_header[4];
        p->c_header_len = 0;
        if (p->c_header[0] == 23) p->c_app_records++;
      }
      continue;
    }
    if (p->corrupt && !p->corrupted && p->c_header[0] == 23 && p->c_app_records == 2) {
      data[0] ^= 0x01;
      p->corrupted = 1;
    }
    size_t n = len < p->c_body_left ? len : p->c_body_left;
    data += n;
    len -= n;
    p->c_body_left -= n;
  }
}

static void on_down_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
  proxy *p = s->data;
  if (n > 0) corrupt_client_record(p, (uint8_t *)buf->base, (size_t)n);
  for (ssize_t i = 0; i < n && p->client_head_len < 5; i++) {
    p->client_head[p->client_head_len++] = (uint8_t)buf->base[i];
    if (p->client_head_len == 5)
      p->client_first_record = 5 + (((size_t)p->client_head[3] << 8) | p->client_head[4]);
  }
  if (n > 0)
    relay(p, (uv_stream_t *)&p->up, buf->base, (size_t)n);
  else if (n < 0)
    proxy_close(p);
  free(buf->base);
}

static void on_up_connected(uv_connect_t *req, int status) {
  proxy *p = req->data;
  cr_assert_eq(status, 0);
  uv_read_start((uv_stream_t *)&p->up, relay_alloc, on_up_read);
  uv_read_start((uv_stream_t *)&p->down, relay_alloc, on_down_read);
}

static void on_proxy_connection(uv_stream_t *server, int status) {
  proxy *p = server->data;
  cr_assert_eq(status, 0);
  cr_assert_eq(uv_accept(server, (uv_stream_t *)&p->down), 0);
  p->connect_req.data = p;
  uv_tcp_connect(&p->connect_req, &p->up, (struct sockaddr *)&p->server, on_up_connected);
}

static void proxy_start(proxy *p, uv_loop_t *loop, int server_port) {
  p->loop = loop;
  uv_ip4_addr("127.0.0.1", server_port, &p->server);
  uv_tcp_init(loop, &p->listener);
  uv_tcp_init(loop, &p->down);
  uv_tcp_init(loop, &p->up);
  p->listener.data = p->down.data = p->up.data = p;
  struct sockaddr_in any;
  uv_ip4_addr("127.0.0.1", 0, &any);
  cr_assert_eq(uv_tcp_bind(&p->listener, (struct sockaddr *)&any, 0), 0);
  cr_assert_eq(uv_listen((uv_stream_t *)&p->listener, 4, on_proxy_connection), 0);
  struct sockaddr_storage bound;
  int len = sizeof(bound);
  uv_tcp_getsockname(&p->listener, (struct sockaddr *)&bound, &len);
  p->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
}

/* Listens, connects, runs the loop to completion, frees everything. */
static void world_run(world *w) {
  int rv = io_listener_new(&w->listener, &w->loop, w->addr, 0, w->server_tls, &w->server_config,
                           on_accept, w);
  cr_assert_eq(rv, 0, "listen: %s", io_strerror(rv));
  int port = io_listener_port(w->listener);
  cr_assert(port > 0, "port 0 must be replaced by the bound port");
  struct sockaddr_storage ss;
  if (strchr(w->addr, ':'))
    uv_ip6_addr(w->addr, port, (struct sockaddr_in6 *)&ss);
  else
    uv_ip4_addr(w->addr, port, (struct sockaddr_in *)&ss);
  if (w->proxy) {
    proxy_start(w->proxy, &w->loop, port);
    uv_ip4_addr("127.0.0.1", w->proxy->port, (struct sockaddr_in *)&ss);
  }
  uv_timer_t poll_timer;
  if (w->raw_client) {
    uv_tcp_init(&w->loop, &w->raw);
    w->raw_req.data = w;
    uv_tcp_connect(&w->raw_req, &w->raw, (struct sockaddr *)&ss, on_raw_connect);
    uv_timer_init(&w->loop, &poll_timer);
    poll_timer.data = w;
    uv_timer_start(&poll_timer, raw_close_when_server_done, 20, 20);
  } else {
    io_conn_callbacks cb = {.on_open = client_open,
                            .on_read = client_read,
                            .on_writable = client_writable,
                            .on_close = client_close};
    rv = io_conn_connect(&w->client, &w->loop, (struct sockaddr *)&ss, w->client_tls,
                         w->server_name, &w->client_config, &cb, w);
    cr_assert_eq(rv, 0, "connect: %s", io_strerror(rv));
  }
  uv_run(&w->loop, UV_RUN_DEFAULT);
  cr_assert(w->listener == NULL, "the loop stopped at the deadline, not at completion");
  uv_close((uv_handle_t *)&w->deadline, NULL);
  if (w->proxy) proxy_close(w->proxy);
  uv_run(&w->loop, UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(&w->loop), 0, "handles left open on the loop");
  io_tls_del(w->server_tls);
  io_tls_del(w->client_tls);
}

TestSuite(io, .init = make_certs, .timeout = 30);

Test(io, plaintext_echo_on_port_0_ipv4) {
  world w;
  world_init(&w);
  w.to_send = 100000;
  world_run(&w);
  cr_expect_eq(w.client_status, 0, "client close status %s", io_strerror(w.client_status));
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
  cr_expect_eq(w.server_how, IO_NEG_PLAINTEXT);
  cr_expect_eq(w.server_proto, IO_PROTO_HTTP1, "pattern bytes are not SPDY: HTTP/1.1");
  cr_expect_eq(w.server_status, UV_EOF, "the server saw the client's EOF");
}

/* io_config.bulk_rtt_us: a loopback round trip is microseconds, so both ends queue
 * IO_BULK_FACTOR times more (out_high_water, and in the kernel TCP_NOTSENT_LOWAT); with
 * the threshold at 0 neither does. The echo is checked either way. */
Test(io, a_loopback_connection_queues_more) {
  world w;
  world_init(&w);
  w.to_send = 300000;
  world_run(&w);
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
  cr_expect(w.server_bulk && w.client_bulk, "a loopback handshake is under 1 ms");
  cr_expect_eq(w.server_room, 65536 * IO_BULK_FACTOR);
  cr_expect_eq(w.client_room, 65536 * IO_BULK_FACTOR);
  world_init(&w);
  w.to_send = 300000;
  w.server_config.bulk_rtt_us = w.client_config.bulk_rtt_us = 0;
  world_run(&w);
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
  cr_expect(!w.server_bulk && !w.client_bulk);
  cr_expect_eq(w.server_room, 65536);
  cr_expect_eq(w.client_room, 65536);
}

Test(io, plaintext_echo_ipv6) {
  world w;
  world_init(&w);
  w.addr = "::1";
  w.to_send = 5000;
  io_listener *probe;
  if (io_listener_new(&probe, &w.loop, "::1", 0, NULL, NULL, NULL, NULL) != 0)
    cr_skip_test("no IPv6 loopback here");
  io_listener_close(probe);
  world_run(&w);
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
}

Test(io, alpn_picks_the_servers_first_choice) {
  world w;
  world_init(&w);
  const char *offer[] = {"spdy/2", "http/1.1", "spdy/3.1"};
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", offer, 3, 0);
  w.to_send = 1000;
  world_run(&w);
  cr_expect_eq(w.client_status, 0, "%s: %s", io_strerror(w.client_status), w.client_detail);
  cr_expect_eq(w.client_how, IO_NEG_ALPN);
  cr_expect_eq(w.client_proto, IO_PROTO_SPDY3_1, "got %s", io_proto_name(w.client_proto));
  cr_expect_eq(w.server_proto, IO_PROTO_SPDY3_1);
  cr_expect_eq(w.received, w.to_send);
}

Test(io, alpn_server_order_is_configurable) {
  world w;
  world_init(&w);
  const char *server_order[] = {"http/1.1", "spdy/2"};
  server_tls(&w, server_order, 2, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  world_run(&w);
  cr_expect_eq(w.client_proto, IO_PROTO_HTTP1, "got %s", io_proto_name(w.client_proto));
}

Test(io, npn_only_tls12_client_gets_spdy3) {
  world w;
  world_init(&w);
  const char *offer[] = {"spdy/3"};
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", offer, 1, IO_TLS_NO_ALPN | IO_TLS_MAX_1_2);
  w.to_send = 1000;
  world_run(&w);
  cr_expect_eq(w.client_status, 0, "%s: %s", io_strerror(w.client_status), w.client_detail);
  cr_expect_eq(w.client_how, IO_NEG_NPN, "how: %s", io_negotiation_name(w.client_how));
  cr_expect_eq(w.client_proto, IO_PROTO_SPDY3);
  cr_expect_eq(w.server_how, IO_NEG_NPN);
  cr_expect_eq(w.server_proto, IO_PROTO_SPDY3);
}

Test(io, tls_without_alpn_or_npn_is_http1) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, IO_TLS_NO_ALPN | IO_TLS_NO_NPN);
  world_run(&w);
  cr_expect_eq(w.client_how, IO_NEG_TLS_DEFAULT);
  cr_expect_eq(w.client_proto, IO_PROTO_HTTP1);
}

/* RFC 7301 3.2: an ALPN offer that shares nothing with our list ends the handshake with
 * no_application_protocol, on both sides (not HTTP/1.1 by default). */
Test(io, alpn_without_a_common_protocol_ends_the_handshake) {
  world w;
  world_init(&w);
  const char *server_list[] = {"h2", "spdy/3.1"};
  const char *offer[] = {"spdy/2"};
  server_tls(&w, server_list, 2, 0);
  client_tls(&w, "ca.pem", offer, 1, IO_TLS_NO_NPN);
  w.to_send = 10;
  world_run(&w);
  cr_expect_not(w.client_open);
  cr_expect_not(w.server_open);
  cr_expect_eq(w.client_status, IO_ERR_NO_PROTOCOL, "status %s (%s)", io_strerror(w.client_status),
               w.client_detail);
  cr_expect(strstr(w.client_detail, "none of the protocols offered") != NULL, "detail: %s",
            w.client_detail);
}

/* RFC 8446 5.2: a record that does not decrypt ends the connection with bad_record_mac,
 * and the alert reaches the peer (it was dropped with the connection). */
Test(io, a_record_that_does_not_decrypt_is_answered_with_bad_record_mac) {
  world w;
  world_init(&w);
  static proxy p;
  memset(&p, 0, sizeof(p));
  p.corrupt = 1;
  w.proxy = &p;
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  w.to_send = 100000;
  world_run(&w);
  cr_assert(p.corrupted, "no record was corrupted");
  cr_expect_neq(w.client_status, 0);
  cr_expect(strstr(w.client_detail, "bad record mac") != NULL, "client: %s (%s)",
            io_strerror(w.client_status), w.client_detail);
}

/* A verifying client with no server name would check nothing but the chain: refused. */
Test(io, a_verified_connection_needs_the_servers_name) {
  uv_loop_t loop;
  cr_assert_eq(uv_loop_init(&loop), 0);
  io_tls *tls = NULL;
  char err[256] = "";
  cr_assert_eq(io_tls_client_new(&tls, cert_path("ca.pem"), NULL, 0, 0, err, sizeof(err)), 0, "%s",
               err);
  struct sockaddr_in addr;
  uv_ip4_addr("127.0.0.1", 9, &addr);
  io_conn_callbacks cb = {.on_read = client_read};
  io_conn *conn = NULL;
  cr_expect_eq(io_conn_connect(&conn, &loop, (struct sockaddr *)&addr, tls, NULL, NULL, &cb, NULL),
               IO_ERR_TLS);
  cr_expect_null(conn);
  uv_run(&loop, UV_RUN_DEFAULT);
  cr_assert_eq(uv_loop_close(&loop), 0);
  io_tls_del(tls);
}

/* RFC 6125 6.4.3: "*" only as a whole left-most label; "w*.example.test" does not cover
 * www.example.test (as for connection reuse, io_tls_peer_names). */
Test(io, a_partial_wildcard_certificate_does_not_verify) {
  world w;
  world_init(&w);
  char err[256] = "";
  cr_assert_eq(io_tls_server_new(&w.server_tls, cert_path("wild.pem"), cert_path("wild.key"), NULL,
                                 0, 0, err, sizeof(err)),
               0, "%s", err);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  w.server_name = "www.example.test";
  world_run(&w);
  cr_expect_not(w.client_open);
  cr_expect_eq(w.client_status, IO_ERR_TLS_VERIFY, "status %s (%s)", io_strerror(w.client_status),
               w.client_detail);
}

/* on_eof comes once, though TLS says close_notify on every read after it and the FIN
 * comes later. */
Test(io, the_peers_end_is_reported_once) {
  for (int tls = 0; tls <= 1; tls++) {
    world w;
    world_init(&w);
    if (tls) {
      server_tls(&w, NULL, 0, 0);
      client_tls(&w, "ca.pem", NULL, 0, 0);
    }
    w.count_eofs = 1;
    w.to_send = 5000;
    world_run(&w);
    cr_expect_eq(w.received, w.to_send);
    cr_expect_eq(w.server_eofs, 1, "%s: on_eof %d times", tls ? "TLS" : "plaintext", w.server_eofs);
  }
}

Test(io, unknown_ca_fails_verification) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "other-ca.pem", NULL, 0, 0);
  w.to_send = 10;
  world_run(&w);
  cr_expect_not(w.client_open);
  cr_expect_eq(w.client_status, IO_ERR_TLS_VERIFY, "status %s (%s)", io_strerror(w.client_status),
               w.client_detail);
  cr_expect(strstr(w.client_detail, "certificate") != NULL, "detail: %s", w.client_detail);
}

Test(io, wrong_host_name_fails_verification) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  w.server_name = "www.example.com";
  world_run(&w);
  cr_expect_not(w.client_open);
  cr_expect_eq(w.client_status, IO_ERR_TLS_VERIFY, "status %s (%s)", io_strerror(w.client_status),
               w.client_detail);
}

Test(io, insecure_accepts_an_unknown_ca) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "other-ca.pem", NULL, 0, IO_TLS_INSECURE);
  w.server_name = "www.example.com";
  w.to_send = 100;
  world_run(&w);
  cr_expect(w.client_open);
  cr_expect_eq(w.received, w.to_send);
}

/* The most a TCP buffer of this kind grows to by itself: the third field of
 * /proc/sys/net/ipv4/tcp_rmem or tcp_wmem (a kernel's default, when unreadable). */
static size_t tcp_buffer_max(const char *name, size_t fallback) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/sys/net/ipv4/%s", name);
  FILE *f = fopen(path, "r");
  unsigned long min, def, max;
  int got = f != NULL && fscanf(f, "%lu %lu %lu", &min, &def, &max) == 3;
  if (f != NULL) fclose(f);
  return got ? (size_t)max : fallback;
}

Test(io, tls_large_echo_through_backpressure) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  /* More than the kernel holds — the paused client's receive buffer (tcp_rmem's largest:
   * 6 MiB on older kernels, 32 MiB on newer ones) and the server's send buffer
   * (tcp_wmem's) — so that the rest must wait in the server. */
  w.to_send =
      tcp_buffer_max("tcp_rmem", 6u << 20) + tcp_buffer_max("tcp_wmem", 4u << 20) + (4u << 20);
  if (w.to_send > (128u << 20)) w.to_send = 128u << 20;
  w.client_paused = 1; /* the client drains only once the server has held input back */
  world_run(&w);
  cr_expect_eq(w.client_status, 0, "%s: %s", io_strerror(w.client_status), w.client_detail);
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
  cr_expect(w.saw_backpressure, "the server never ran out of room: no backpressure seen");
}

Test(io, tls_records_stay_small_while_the_connection_is_young) {
  world w;
  world_init(&w);
  static proxy p;
  memset(&p, 0, sizeof(p));
  w.proxy = &p;
  server_tls(&w, NULL, 0, 0);
  /* TLS 1.2: handshake records are type 22, so every type-23 record is our data. */
  client_tls(&w, "ca.pem", NULL, 0, IO_TLS_MAX_1_2);
  w.to_send = 512u << 10;
  world_run(&w);
  cr_assert_eq(w.received, w.to_send, "echo incomplete");
  cr_assert(p.n_records > 10, "only %zu records seen", p.n_records);
  size_t plain = 0, i = 0, largest_later = 0;
  /* A TLS 1.2 AEAD record adds 16 to 24 bytes; counting 16 overestimates the plaintext,
   * so the young prefix checked below is never longer than the real one. */
  const size_t overhead = 16, slack = 64;
  for (; i < p.n_records && plain + 1360 <= w.server_config.tls_young_bytes; i++) {
    cr_expect_leq(p.records[i], 1360 + slack, "young record %zu is %u bytes", i, p.records[i]);
    plain += p.records[i] > overhead ? p.records[i] - overhead : 0;
  }
  for (; i < p.n_records; i++)
    if (p.records[i] > largest_later) largest_later = p.records[i];
  cr_expect_geq(largest_later, 16384, "after the young phase records grow to 16 KiB (largest %zu)",
                largest_later);
}

Test(io, tls_framed_writes_leave_as_one_record_and_give_the_lent_octets_back) {
  world w;
  world_init(&w);
  static proxy p;
  memset(&p, 0, sizeof(p));
  w.proxy = &p;
  w.framed = 1;
  w.server_config.tls_young_bytes = 0; /* full records from the start */
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0); /* TLS 1.3: 17 octets of type and tag a record */
  w.to_send = 1u << 20;
  world_run(&w);
  cr_assert_eq(w.received, w.to_send, "echo incomplete");
  cr_expect_not(w.bad_byte, "a frame's head or payload arrived wrong");
  cr_expect_not(w.lent_clobbered, "the octets before a lent payload were not put back");
  cr_assert(w.n_one_record > 10, "only %zu frames fit a record", w.n_one_record);
  /* Every frame that fits a record is one record of its own: found in order. */
  size_t found = 0;
  for (size_t i = 0; i < p.n_records && found < w.n_one_record; i++)
    if (p.records[i] == w.one_record_frames[found] + 17) found++;
  cr_expect_eq(found, w.n_one_record, "frame %zu of %zu (%zu octets) is not one record", found,
               w.n_one_record, found < w.n_one_record ? w.one_record_frames[found] : 0);
}

Test(io, plaintext_framed_writes_arrive_whole) {
  world w;
  world_init(&w);
  w.framed = 1;
  w.to_send = 1u << 20;
  world_run(&w);
  cr_assert_eq(w.received, w.to_send, "echo incomplete");
  cr_expect_not(w.bad_byte, "a frame's head or payload arrived wrong");
  cr_expect_not(w.lent_clobbered, "the octets before a lent payload were changed");
}

/* The ClientHello of a padded client context is exactly that much longer, and the
 * server ignores the extension: the connection works as before. */
static size_t hello_size(size_t padding) {
  world w;
  world_init(&w);
  static proxy p;
  memset(&p, 0, sizeof(p));
  w.proxy = &p;
  server_tls(&w, NULL, 0, 0);
  client_tls(&w, "ca.pem", NULL, 0, 0);
  if (padding) cr_assert_eq(io_tls_client_pad_hello(w.client_tls, padding), 0);
  w.to_send = 10000;
  world_run(&w);
  cr_expect_eq(w.client_status, 0, "%s: %s", io_strerror(w.client_status), w.client_detail);
  cr_expect_eq(w.received, w.to_send);
  cr_expect_not(w.bad_byte);
  cr_expect_eq(p.client_head[0], 22, "the first record is a handshake record");
  return p.client_first_record;
}

Test(io, a_padded_client_hello_weighs_the_padding_more_and_still_connects) {
  size_t plain = hello_size(0), padded = hello_size(1700);
  cr_expect(plain > 100 && plain < 1000, "a ClientHello of %zu octets", plain);
  cr_expect_eq(padded, plain + 1700, "%zu octets padded, %zu not", padded, plain);
}

Test(io, hello_padding_is_refused_out_of_bounds_on_servers_and_twice) {
  io_tls *client, *server;
  char err[256] = "";
  cr_assert_eq(io_tls_client_new(&client, NULL, NULL, 0, IO_TLS_INSECURE, err, sizeof(err)), 0);
  cr_expect_eq(io_tls_client_pad_hello(client, 3), UV_EINVAL);
  cr_expect_eq(io_tls_client_pad_hello(client, IO_TLS_HELLO_PAD_MAX + 1), UV_EINVAL);
  cr_expect_eq(io_tls_client_pad_hello(client, 4), 0, "an empty extension");
  cr_expect_eq(io_tls_client_pad_hello(client, 100), UV_EINVAL, "padded already");
  io_tls_del(client);
  cr_assert_eq(io_tls_server_new(&server, cert_path("server.pem"), cert_path("server.key"), NULL, 0,
                                 0, err, sizeof(err)),
               0, "%s", err);
  cr_expect_eq(io_tls_client_pad_hello(server, 100), UV_EINVAL);
  io_tls_del(server);
}

Test(io, sniff_tells_spdy_versions_from_http1) {
  static const uint8_t v2[] = {0x80, 0x02, 0x00, 0x04};
  static const uint8_t v3[] = {0x80, 0x03, 0x00, 0x01};
  io_proto p = IO_PROTO_UNKNOWN;
  cr_expect_eq(io_sniff_protocol(v2, 2, IO_PROTO_SPDY3_1, &p), 0, "2 bytes are not enough");
  cr_expect_eq(io_sniff_protocol(v2, 4, IO_PROTO_SPDY3_1, &p), 1);
  cr_expect_eq(p, IO_PROTO_SPDY2);
  io_sniff_protocol(v3, 4, IO_PROTO_SPDY3_1, &p);
  cr_expect_eq(p, IO_PROTO_SPDY3_1);
  io_sniff_protocol(v3, 4, IO_PROTO_SPDY3, &p);
  cr_expect_eq(p, IO_PROTO_SPDY3);
  io_sniff_protocol((const uint8_t *)"GET / HTTP/1.1\r\n", 16, IO_PROTO_SPDY3_1, &p);
  cr_expect_eq(p, IO_PROTO_HTTP1);
}

Test(io, sniff_tells_the_h2_preface_from_http1) {
  static const char preface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  io_proto p = IO_PROTO_UNKNOWN;
  cr_expect_eq(io_sniff_protocol((const uint8_t *)preface, 10, IO_PROTO_SPDY3_1, &p), 0,
               "a partial preface waits for more bytes");
  cr_expect_eq(io_sniff_protocol((const uint8_t *)preface, 24, IO_PROTO_SPDY3_1, &p), 1);
  cr_expect_eq(p, IO_PROTO_H2, "got %s", io_proto_name(p));
  cr_expect_eq(io_sniff_protocol((const uint8_t *)"PRI * HTTP/1.1\r\n", 16, IO_PROTO_SPDY3_1, &p),
               1);
  cr_expect_eq(p, IO_PROTO_HTTP1, "a request line that leaves the preface is HTTP/1.1");
  cr_expect_eq(io_proto_from_name("h2", 2), IO_PROTO_H2);
  cr_expect_str_eq(io_proto_name(IO_PROTO_H2), "h2");
}

Test(io, plaintext_server_sniffs_a_spdy3_client) {
  world w;
  world_init(&w);
  w.raw_client = 1;
  w.raw_bytes = "\x80\x03\x00\x04\x00\x00\x00\x00"; /* a SETTINGS frame header */
  w.raw_len = 8;
  world_run(&w);
  cr_expect(w.server_open);
  cr_expect_eq(w.server_proto, IO_PROTO_SPDY3_1);
  cr_expect_eq(w.server_how, IO_NEG_PLAINTEXT);
}

Test(io, silent_client_hits_the_handshake_timeout) {
  world w;
  world_init(&w);
  server_tls(&w, NULL, 0, 0);
  w.server_config.handshake_timeout_ms = 150;
  w.raw_client = 1;
  world_run(&w);
  cr_expect_not(w.server_open);
  cr_expect_eq(w.server_status, IO_ERR_HANDSHAKE_TIMEOUT, "status %s",
               io_strerror(w.server_status));
}

/* Connection limit: a listener with max_connections 1 refuses the second client. */
typedef struct limit_world {
  world *w;
  io_conn *conns[2];
  int closed;
  int statuses[2];
} limit_world;

static size_t limit_read(io_conn *c, const uint8_t *d, size_t n, void *u) {
  (void)c, (void)d, (void)u;
  return n;
}

static void limit_close(io_conn *c, int status, void *user) {
  limit_world *lw = user;
  lw->statuses[lw->closed++] = status;
  for (int i = 0; i < 2; i++)
    if (lw->conns[i] == c) lw->conns[i] = NULL;
  if (lw->closed == 1) { /* the refused one ends first; then end the accepted one */
    io_listener_close(lw->w->listener);
    lw->w->listener = NULL;
    for (int i = 0; i < 2; i++)
      if (lw->conns[i]) io_conn_close(lw->conns[i]);
  }
}

static void limit_accept(io_listener *l, io_conn *conn, void *user) {
  (void)l;
  world *w = user;
  w->accepted++;
  io_conn_callbacks cb = {.on_read = limit_read};
  io_conn_set_callbacks(conn, &cb, w);
}

Test(io, connection_limit_closes_the_extra_connection) {
  world w;
  world_init(&w);
  w.server_config.max_connections = 1;
  int rv = io_listener_new(&w.listener, &w.loop, "127.0.0.1", 0, NULL, &w.server_config,
                           limit_accept, &w);
  cr_assert_eq(rv, 0);
  struct sockaddr_in sin;
  uv_ip4_addr("127.0.0.1", io_listener_port(w.listener), &sin);
  limit_world lw = {.w = &w};
  io_conn_callbacks cb = {.on_read = limit_read, .on_close = limit_close};
  for (int i = 0; i < 2; i++)
    cr_assert_eq(
        io_conn_connect(&lw.conns[i], &w.loop, (struct sockaddr *)&sin, NULL, NULL, NULL, &cb, &lw),
        0);
  uv_run(&w.loop, UV_RUN_DEFAULT);
  cr_expect(w.listener == NULL, "stopped at the deadline");
  cr_expect_eq(w.accepted, 1, "exactly one connection accepted");
  cr_expect_eq(lw.closed, 2);
  cr_expect(lw.statuses[0] == UV_EOF || lw.statuses[0] == UV_ECONNRESET, "refused client status %s",
            io_strerror(lw.statuses[0]));
  cr_expect_eq(lw.statuses[1], 0, "the accepted client closed cleanly");
  uv_close((uv_handle_t *)&w.deadline, NULL);
  uv_run(&w.loop, UV_RUN_DEFAULT);
  cr_expect_eq(uv_loop_close(&w.loop), 0);
}

/* An output buffer released for being idle comes back at the size it had (one allocation
 * for a busy connection's next turn, not a doubling from 4 KiB); freed, it starts small. */
Test(io_buf, a_released_buffer_comes_back_at_its_size) {
  io_buf b = {0};
  static uint8_t bytes[50000];
  cr_assert_eq(io_buf_append(&b, bytes, sizeof(bytes)), 0);
  size_t grown = b.cap;
  cr_assert_geq(grown, sizeof(bytes));
  b.len = 0;
  io_buf_release(&b);
  cr_assert_null(b.data);
  cr_assert_eq(b.cap, 0);
  cr_assert_eq(io_buf_reserve(&b, 10), 0);
  cr_assert_eq(b.cap, grown, "came back at %zu, had %zu", b.cap, grown);
  io_buf_free(&b);
  cr_assert_eq(io_buf_reserve(&b, 10), 0);
  cr_assert_eq(b.cap, 4096);
  io_buf_free(&b);
}

/* Input from two connections read in one loop turn: each connection's answer is written
 * as soon as its input was handed over (while what the input touched is still in the
 * processor's caches), not after every other connection's input of the turn. */
typedef struct turn_world {
  io_conn *first; /* the connection read first in the turn */
  int accepted, reads;
  size_t first_unsent_at_second_read;
} turn_world;

static size_t turn_read(io_conn *conn, const uint8_t *data, size_t len, void *user) {
  turn_world *tw = user;
  if (tw->reads == 0) tw->first = conn;
  if (tw->reads == 1) tw->first_unsent_at_second_read = io_conn_unsent(tw->first);
  tw->reads++;
  cr_assert_eq(io_conn_write(conn, data, len), 0);
  return len;
}

static void turn_accept(io_listener *l, io_conn *conn, void *user) {
  (void)l;
  turn_world *tw = user;
  tw->accepted++;
  io_conn_callbacks cb = {.on_read = turn_read};
  io_conn_set_callbacks(conn, &cb, tw);
}

Test(io, each_connection_is_answered_before_the_next_ones_input) {
  world w;
  world_init(&w);
  w.server_config.sniff_plaintext = 0;
  turn_world tw = {0};
  cr_assert_eq(io_listener_new(&w.listener, &w.loop, "127.0.0.1", 0, NULL, &w.server_config,
                               turn_accept, &tw),
               0);
  struct sockaddr_in sin = {0};
  uv_ip4_addr("127.0.0.1", io_listener_port(w.listener), &sin);
  int fds[2];
  for (int i = 0; i < 2; i++) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fds[i], 0);
    cr_assert_eq(connect(fds[i], (struct sockaddr *)&sin, sizeof(sin)), 0);
  }
  for (int i = 0; i < 200 && tw.accepted < 2; i++) {
    uv_run(&w.loop, UV_RUN_NOWAIT);
    usleep(1000);
  }
  cr_assert_eq(tw.accepted, 2);
  /* Both requests wait in the kernel before the loop's next turn reads them. */
  const char request[] = "one request";
  for (int i = 0; i < 2; i++)
    cr_assert_eq(send(fds[i], request, sizeof(request), 0), (ssize_t)sizeof(request));
  usleep(20000);
  for (int i = 0; i < 200 && tw.reads < 2; i++) uv_run(&w.loop, UV_RUN_ONCE);
  cr_assert_eq(tw.reads, 2, "both inputs read");
  cr_expect_eq(tw.first_unsent_at_second_read, 0,
               "the first connection's answer (%zu octets) still waited when the second's input "
               "was read",
               tw.first_unsent_at_second_read);
  for (int i = 0; i < 2; i++) {
    char answer[sizeof(request)];
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fds[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    for (int j = 0; j < 100; j++) uv_run(&w.loop, UV_RUN_NOWAIT);
    cr_expect_eq(recv(fds[i], answer, sizeof(answer), MSG_WAITALL), (ssize_t)sizeof(answer));
    cr_expect_eq(memcmp(answer, request, sizeof(request)), 0);
    close(fds[i]);
  }
  io_listener_close(w.listener);
  uv_close((uv_handle_t *)&w.deadline, NULL);
  uv_run(&w.loop, UV_RUN_DEFAULT);
  cr_expect_eq(uv_loop_close(&w.loop), 0);
}
