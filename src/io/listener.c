/* listener.c — listening sockets (IPv4/IPv6, port 0, SO_REUSEADDR; SO_REUSEPORT groups
 * for multi-process servers), the connection limit, plus the small shared pieces of the
 * I/O layer: defaults, names, error strings and the plaintext protocol sniff.
 */
#include <errno.h>
#include <fcntl.h>
#include <speedy/speedy.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io_int.h"

struct io_listener {
  uv_tcp_t tcp;
  io_tls *tls;
  io_config config;
  io_on_accept_fn on_accept;
  io_on_dropped_fn on_dropped;
  void *user;
  io_conn *awaiting; /* proxy_protocol: accepted, header not read yet (linked by conn.c) */
  uint32_t live;
  uint64_t refused;
  int port;
  int closing;       /* io_listener_close was called */
  int handle_closed; /* the uv handle is closed */
  /* A connection we cannot take (no memory) is accepted into this and closed: libuv stops
   * watching the listener until its pending connection is accepted. */
  uv_tcp_t spare;
  int spare_busy; /* spare is closing */
};

void io_config_init(io_config *c) {
  memset(c, 0, sizeof(*c));
  c->handshake_timeout_ms = 10000;
  c->idle_timeout_ms = 120000;
  c->close_linger_ms = 2000;
  c->out_high_water = 65536;
  c->read_size = IO_READ_MAX;
  c->bulk_rtt_us = 1000;
  c->read_pause_bytes = 262144;
  c->notsent_lowat = 16384;
  c->tls_young_bytes = 65536;
  c->tls_young_record = 1360;
  c->max_connections = 10000;
  c->plaintext_v3 = IO_PROTO_SPDY3_1;
  c->sniff_plaintext = 1;
}

const char *io_strerror(int error) {
  switch (error) {
  case 0:
    return "success";
  case IO_ERR_TLS:
    return "TLS failure";
  case IO_ERR_TLS_VERIFY:
    return "the certificate did not verify";
  case IO_ERR_NO_PROTOCOL:
    return "no common protocol";
  case IO_ERR_HANDSHAKE_TIMEOUT:
    return "connection or handshake timed out";
  case IO_ERR_IDLE_TIMEOUT:
    return "connection idle for too long";
  case IO_ERR_CONFIG:
    return "bad TLS configuration";
  case IO_ERR_PEER_TLS:
    return "the server answered with TLS: use https:// (or --tls)";
  case IO_ERR_PROXY:
    return "bad PROXY protocol header";
  default:
    return error < 0 && error > -4200 ? uv_strerror(error) : "unknown error";
  }
}

const char *io_proto_name(io_proto proto) {
  switch (proto) {
  case IO_PROTO_HTTP1:
    return "http/1.1";
  case IO_PROTO_SPDY2:
    return "spdy/2";
  case IO_PROTO_SPDY3:
    return "spdy/3";
  case IO_PROTO_SPDY3_1:
    return "spdy/3.1";
  case IO_PROTO_H2:
    return "h2";
  default:
    return "unknown";
  }
}

io_proto io_proto_from_name(const char *name, size_t len) {
  static const io_proto all[] = {IO_PROTO_HTTP1, IO_PROTO_SPDY2, IO_PROTO_SPDY3, IO_PROTO_SPDY3_1,
                                 IO_PROTO_H2};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
    const char *known = io_proto_name(all[i]);
    if (strlen(known) == len && memcmp(known, name, len) == 0) return all[i];
  }
  return IO_PROTO_UNKNOWN;
}

const char *io_negotiation_name(io_negotiation how) {
  switch (how) {
  case IO_NEG_ALPN:
    return "ALPN";
  case IO_NEG_NPN:
    return "NPN";
  case IO_NEG_TLS_DEFAULT:
    return "TLS without ALPN/NPN";
  case IO_NEG_PLAINTEXT:
    return "plaintext";
  default:
    return "none";
  }
}

int io_sniff_protocol(const uint8_t *bytes, size_t len, io_proto v3_protocol, io_proto *out) {
  int preface = speedy_detect_h2_preface(bytes, len);
  if (preface == 0) return 0; /* "PRI * HTTP/2.0..." so far */
  if (preface == 1) {
    *out = IO_PROTO_H2;
    return 1;
  }
  int version = speedy_detect_spdy_version(bytes, len);
  if (version == 0) return 0;
  if (version == 2)
    *out = IO_PROTO_SPDY2;
  else if (version == 3)
    *out = v3_protocol == IO_PROTO_SPDY3 ? IO_PROTO_SPDY3 : IO_PROTO_SPDY3_1;
  else
    *out = IO_PROTO_HTTP1;
  return 1;
}

static void listener_maybe_free(io_listener *l) {
  if (l->closing && l->handle_closed && l->live == 0 && !l->spare_busy) free(l);
}

void io_listener_conn_gone(io_listener *l) {
  l->live--;
  listener_maybe_free(l);
}

io_conn **io_listener_awaiting(io_listener *l) { return &l->awaiting; }

void io_listener_accepted(io_listener *l, io_conn *conn) {
  if (l->closing) { /* a PROXY header completed after io_listener_close */
    io_conn_abort(conn, UV_ECANCELED);
    return;
  }
  if (l->on_accept) l->on_accept(l, conn, l->user);
  io_conn_begin_accepted(conn);
}

void io_listener_dropped(io_listener *l, const char *peer, int status, const char *detail) {
  if (!l->closing && l->on_dropped) l->on_dropped(l, peer, status, detail, l->user);
}

void io_listener_set_on_dropped(io_listener *l, io_on_dropped_fn on_dropped) {
  l->on_dropped = on_dropped;
}

static void on_refused_closed(uv_handle_t *handle) { free(handle); }

static void on_spare_closed(uv_handle_t *handle) {
  io_listener *l = handle->data;
  l->spare_busy = 0;
  listener_maybe_free(l);
}

/* Takes the pending connection (if it is still pending) and closes it, with no memory of
 * its own. */
static void drop_pending(io_listener *l, uv_stream_t *server) {
  if (l->spare_busy || uv_tcp_init(server->loop, &l->spare) != 0) return;
  l->spare.data = l;
  l->spare_busy = 1;
  if (uv_accept(server, (uv_stream_t *)&l->spare) == 0) l->refused++;
  uv_close((uv_handle_t *)&l->spare, on_spare_closed);
}

static void on_connection(uv_stream_t *server, int status) {
  io_listener *l = server->data;
  if (status < 0 || l->closing) return;
  if (l->config.max_connections && l->live >= l->config.max_connections) {
    /* Over the limit: take the connection off the queue and close it at once, so the
     * backlog cannot fill with clients that wait forever. */
    uv_tcp_t *extra = malloc(sizeof(*extra));
    if (!extra) {
      drop_pending(l, server);
      return;
    }
    uv_tcp_init(server->loop, extra);
    if (uv_accept(server, (uv_stream_t *)extra) == 0) l->refused++;
    uv_close((uv_handle_t *)extra, on_refused_closed);
    return;
  }
  io_conn *conn = io_conn_accept(server, &l->config, l->tls, l);
  if (!conn) { /* no memory, or TLS would not start: the connection is not left pending */
    drop_pending(l, server);
    return;
  }
  l->live++;
  /* With the PROXY protocol, conn.c calls io_listener_accepted once the header is read. */
  if (!l->config.proxy_protocol) io_listener_accepted(l, conn);
}

static int parse_addr(const char *addr, int port, struct sockaddr_storage *ss) {
  if (port < 0 || port > 65535) return UV_EINVAL;
  if (uv_ip4_addr(addr, port, (struct sockaddr_in *)ss) != 0 &&
      uv_ip6_addr(addr, port, (struct sockaddr_in6 *)ss) != 0)
    return UV_EINVAL;
  return 0;
}

static io_listener *listener_alloc(uv_loop_t *loop, io_tls *tls, const io_config *config,
                                   io_on_accept_fn on_accept, void *user, int *rv) {
  io_listener *l = calloc(1, sizeof(*l));
  if (!l) {
    *rv = UV_ENOMEM;
    return NULL;
  }
  l->tls = tls;
  if (config)
    l->config = *config;
  else
    io_config_init(&l->config);
  l->on_accept = on_accept;
  l->user = user;
  *rv = uv_tcp_init(loop, &l->tcp);
  if (*rv) {
    free(l);
    return NULL;
  }
  l->tcp.data = l;
  return l;
}

/* Listens on the bound handle and learns its port; on failure closes the listener. */
static int listener_start(io_listener *l, io_listener **out) {
  int rv = uv_listen((uv_stream_t *)&l->tcp, 511, on_connection);
  if (rv == 0) {
    struct sockaddr_storage bound;
    int len = sizeof(bound);
    rv = uv_tcp_getsockname(&l->tcp, (struct sockaddr *)&bound, &len);
    if (rv == 0)
      l->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                  : ((struct sockaddr_in *)&bound)->sin_port);
  }
  if (rv) {
    l->live = 0;
    io_listener_close(l);
    return rv;
  }
  *out = l;
  return 0;
}

int io_listener_new(io_listener **out, uv_loop_t *loop, const char *addr, int port, io_tls *tls,
                    const io_config *config, io_on_accept_fn on_accept, void *user) {
  struct sockaddr_storage ss;
  if ((tls && !tls->server) || parse_addr(addr, port, &ss) != 0) return UV_EINVAL;
  int rv;
  io_listener *l = listener_alloc(loop, tls, config, on_accept, user, &rv);
  if (!l) return rv;
  /* libuv sets SO_REUSEADDR on bind for TCP on Unix. */
  rv = uv_tcp_bind(&l->tcp, (const struct sockaddr *)&ss, 0);
  if (rv) {
    io_listener_close(l);
    return rv;
  }
  return listener_start(l, out);
}

int io_listen_socket_new(const char *addr, int port, int *fd_out, int *port_out) {
  struct sockaddr_storage ss;
  if (parse_addr(addr, port, &ss) != 0) return UV_EINVAL;
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  int on = 1;
  socklen_t len =
      ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0 ||
      bind(fd, (const struct sockaddr *)&ss, len) != 0) {
    int rv = -errno;
    close(fd);
    return rv;
  }
  struct sockaddr_storage bound;
  socklen_t bound_len = sizeof(bound);
  if (getsockname(fd, (struct sockaddr *)&bound, &bound_len) != 0) {
    int rv = -errno;
    close(fd);
    return rv;
  }
  /* SO_REUSEPORT would let us join another server's group on this port (same user)
   * and share its connections. A probe without SO_REUSEPORT tells: its bind fails only
   * when some socket listens there (ours do not listen yet). */
  int probe = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int rv = probe < 0 ? -errno : 0;
  if (rv == 0 && (setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) != 0 ||
                  bind(probe, (const struct sockaddr *)&bound, bound_len) != 0))
    rv = -errno;
  if (probe >= 0) close(probe);
  if (rv != 0) {
    close(fd);
    return rv;
  }
  *port_out = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
  *fd_out = fd;
  return 0;
}

int io_listener_open(io_listener **out, uv_loop_t *loop, int fd, io_tls *tls,
                     const io_config *config, io_on_accept_fn on_accept, void *user) {
  if (fd < 0) return UV_EINVAL;
  int rv = tls && !tls->server ? UV_EINVAL : 0;
  io_listener *l = rv ? NULL : listener_alloc(loop, tls, config, on_accept, user, &rv);
  if (!l) {
    close(fd);
    return rv;
  }
  rv = uv_tcp_open(&l->tcp, fd);
  if (rv) {
    close(fd); /* not taken by the handle */
    io_listener_close(l);
    return rv;
  }
  return listener_start(l, out);
}

int io_listener_port(const io_listener *l) { return l->port; }
uint32_t io_listener_connections(const io_listener *l) { return l->live; }
uint64_t io_listener_refused(const io_listener *l) { return l->refused; }

static void on_listener_closed(uv_handle_t *handle) {
  io_listener *l = handle->data;
  l->handle_closed = 1;
  listener_maybe_free(l);
}

void io_listener_close(io_listener *l) {
  if (l->closing) return;
  l->closing = 1;
  /* Connections still reading their PROXY header are the listener's alone: nobody else
   * would end them before the handshake timeout. */
  while (l->awaiting != NULL) io_conn_abort(l->awaiting, UV_ECANCELED);
  uv_close((uv_handle_t *)&l->tcp, on_listener_closed);
}
