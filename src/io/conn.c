/* conn.c — one connection: a uv_tcp_t, optional TLS through memory BIOs, coalesced
 * output, read backpressure, the handshake / idle / linger timer, and a clean close.
 *
 * Output path: io_conn_write appends plaintext to out_plain; once per loop turn a uv_idle
 * handle flushes: with TLS the plaintext is cut into records (small ones while the
 * connection is young), the ciphertext appended to out_wire as the SSL writes it (a
 * BIO of our own, io_tls_wire_bio_new: no memory BIO to copy it from); then the bytes waiting
 * are written at once (uv_try_write) and only what the socket did not take moves into
 * `inflight` for one uv_write. One write is in flight at a time, so
 * io_conn_room() sees everything the kernel has not taken yet; with TCP_NOTSENT_LOWAT the
 * kernel takes little beyond what it can send, and priorities chosen above us hold.
 *
 * Files (plaintext only): io_conn_sendfile queues one file range after the bytes already
 * appended; bytes appended after it wait in out_after. The flush sends the range with
 * sendfile(2) straight from the page cache once out_plain is out; when the socket is full
 * (EAGAIN) it reads one small piece into `inflight` and hands it to uv_write, whose
 * completion says the socket has room again (libuv has no "writable" event for a stream
 * we also write to). sendfile returning 0 before the end means the file shrank: the
 * Content-Length promise is broken, so the connection is aborted (UV_EIO).
 *
 * PROXY protocol (io_config.proxy_protocol): an accepted connection first reads the
 * header into in_hold (proxy.c parses it), is unknown to the caller meanwhile (the
 * listener keeps it in its `awaiting` list), takes the client's address from the header
 * as its peer, and only then goes to the listener's on_accept; the bytes after the header
 * are handled as if they had just been read (TLS handshake or sniff).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "io_int.h"
#include "proxy.h"

enum conn_state {
  STATE_CONNECTING,  /* client: TCP connect in progress */
  STATE_HANDSHAKING, /* TLS handshake, or sniffing the first plaintext bytes */
  STATE_OPEN,        /* protocol known, bytes flow */
  STATE_CLOSING,     /* io_conn_close: sending what is left, then close_notify and FIN */
  STATE_LINGER,      /* FIN sent: discarding input until EOF or the linger timer */
  STATE_CLOSED       /* handles closing; on_close fires when all are closed */
};

#define TLS_PLAIN_CHUNK 16384    /* SSL_read's output: one record at most */
#define BUF_KEEP_MAX (1u << 20)  /* output buffers larger than this are freed when empty */
#define IO_TLS_DIRECT_MIN 16384u /* TLS writes of a full record or more: encrypted in place */
#define IO_FRAME_HEAD_MAX 16     /* io_conn_write_framed: the longest head it places */
#define IO_TLS_FRAMED_MIN 4096u  /* ... and the shortest payload worth a record of its own */

struct io_conn {
  uv_tcp_t tcp;
  uv_idle_t idle;   /* the once-per-turn flush */
  uv_timer_t timer; /* handshake, idle or linger deadline */
  uv_connect_t connect_req;
  uv_write_t write_req;
  uv_shutdown_t shutdown_req;
  uv_loop_t *loop;
  io_conn_callbacks cb;
  void *user;
  io_config config;
  io_listener *listener;

  io_tls *tls;
  SSL *ssl;
  BIO *rbio; /* network -> SSL */
  BIO *wbio; /* SSL -> network */

  enum conn_state state;
  io_proto proto;
  io_negotiation how;
  int close_status;
  int handles_open;  /* handles still to be closed before on_close */
  int reading;       /* uv_read_start is active */
  int bulk;          /* a short round trip: larger queues (conn_choose_queues) */
  int user_paused;   /* io_conn_pause_read(1), or on_read consumed less than it got */
  int write_active;  /* a uv_write is in flight */
  int want_writable; /* on_writable requested */
  int shutdown_sent; /* TLS close_notify queued */
  int fin_sent;      /* uv_shutdown requested */
  int idle_active;
  int held;            /* io_conn_hold_then_abort: never read, aborted at the timer */
  int peer_eof;        /* the peer finished sending */
  int eof_reported;    /* on_eof was called (once: close_notify, then the FIN, say it twice) */
  int clean_eof;       /* ...and said so properly: TLS close_notify (or a FIN without TLS) */
  int client;          /* made by io_conn_connect (not accepted) */
  int heard;           /* bytes came from the peer (the first ones are checked, see on_read) */
  int awaiting_header; /* proxy_protocol: the PROXY header is not read yet (no on_accept) */
  int in_awaiting;     /* linked in the listener's awaiting list */
  io_conn *awaiting_prev, *awaiting_next;

  io_buf out_plain;     /* appended plaintext not yet encrypted / written */
  io_buf out_wire;      /* ciphertext not yet written (TLS only) */
  io_buf inflight;      /* the bytes of the uv_write in flight */
  size_t inflight_sent; /* of which uv_try_write already sent this many */
  io_buf in_hold;       /* input not yet consumed by on_read (paused, or sniffing) */
  io_buf out_after;     /* appended while a file range is queued: goes after it */
  int file_fd;          /* io_conn_sendfile's range (owned), or -1 */
  uint64_t file_offset, file_left;

  uint64_t bytes_in, bytes_out, tls_plain_written;
  uint64_t last_activity_ms;
  uint32_t idle_timeout_ms;
  char peer[64];
  char detail[256];
};

/* The socket read buffer, shared by every connection of the thread: libuv calls on_alloc
 * and then on_read for one stream at a time, and on_read copies whatever it keeps
 * (in_hold), so nothing points into it between reads. Idle connections hold no read
 * buffer at all. */
static _Thread_local uint8_t read_buf[IO_READ_MAX];

static void conn_schedule(io_conn *c);
static void conn_flush(io_conn *c);
static void conn_send_file(io_conn *c);
static void on_write(uv_write_t *req, int status);
static void conn_update_reading(io_conn *c);
static void conn_finish(io_conn *c, int status);
static void conn_deliver(io_conn *c);
static void on_idle(uv_idle_t *idle);

/* ---- Buffers --------------------------------------------------------------------- */

int io_buf_reserve(io_buf *buf, size_t more) {
  if (more <= buf->cap - buf->len) return 0;
  if (more > SIZE_MAX / 2 - buf->len) return UV_ENOMEM;
  size_t cap = buf->cap ? buf->cap : buf->regrow ? buf->regrow : 4096;
  while (cap - buf->len < more) cap *= 2;
  uint8_t *data = realloc(buf->data, cap);
  if (!data) return UV_ENOMEM;
  buf->data = data;
  buf->cap = cap;
  return 0;
}

int io_buf_append(io_buf *buf, const void *data, size_t len) {
  if (len == 0) return 0;
  int rv = io_buf_reserve(buf, len);
  if (rv) return rv;
  memcpy(buf->data + buf->len, data, len);
  buf->len += len;
  return 0;
}

void io_buf_drop(io_buf *buf, size_t n) {
  if (n >= buf->len) {
    buf->len = 0;
    return;
  }
  memmove(buf->data, buf->data + n, buf->len - n);
  buf->len -= n;
}

void io_buf_free(io_buf *buf) {
  free(buf->data);
  buf->data = NULL;
  buf->len = buf->cap = buf->regrow = 0;
}

void io_buf_release(io_buf *buf) {
  size_t cap = buf->cap;
  io_buf_free(buf);
  buf->regrow = cap <= BUF_KEEP_MAX ? cap : 0;
}

/* Frees an empty buffer's memory when it grew large (one big response must not pin
 * megabytes per idle connection). */
static void buf_trim(io_buf *buf) {
  if (buf->len == 0 && buf->cap > BUF_KEEP_MAX) io_buf_free(buf);
}

/* ---- Creation -------------------------------------------------------------------- */

static io_conn *conn_alloc(uv_loop_t *loop, const io_config *config, io_tls *tls) {
  io_conn *c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->loop = loop;
  if (config)
    c->config = *config;
  else
    io_config_init(&c->config);
  c->tls = tls;
  c->file_fd = -1;
  c->idle_timeout_ms = c->config.idle_timeout_ms;
  if (uv_tcp_init(loop, &c->tcp) != 0) {
    free(c);
    return NULL;
  }
  uv_idle_init(loop, &c->idle);
  uv_timer_init(loop, &c->timer);
  c->tcp.data = c->idle.data = c->timer.data = c;
  c->connect_req.data = c->write_req.data = c->shutdown_req.data = c;
  c->handles_open = 3;
  c->state = STATE_CONNECTING;
  return c;
}

static void on_timer(uv_timer_t *timer);

static void conn_arm_timer(io_conn *c, uint32_t ms) {
  uv_timer_stop(&c->timer);
  if (ms) uv_timer_start(&c->timer, on_timer, ms, 0);
}

static void conn_touch(io_conn *c) { c->last_activity_ms = uv_now(c->loop); }

/* io_config.bulk_rtt_us: a connection whose handshake's round trip was shorter queues
 * IO_BULK_FACTOR times more, in user space and in the kernel. TCP_NOTSENT_LOWAT and a
 * small high-water mark keep a priority's effect prompt on a link where queued bytes take
 * time to leave; on loopback or a LAN they take microseconds, and the small queues only
 * cost wakeups and write calls (speedyd with 100 connections of 100 KiB answers on
 * loopback: 0.81-1.00 of h2o's rate with them, 0.85-1.31 with these; docs/performance.md,
 * "larger queues where the round trip is short"). */
static void conn_choose_queues(io_conn *c, uv_os_fd_t fd) {
#ifdef TCP_INFO
  struct tcp_info info;
  socklen_t len = sizeof(info);
  if (c->config.bulk_rtt_us == 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 ||
      info.tcpi_rtt == 0 || info.tcpi_rtt >= c->config.bulk_rtt_us)
    return;
  c->bulk = 1;
  uint32_t *sizes[] = {&c->config.out_high_water, &c->config.notsent_lowat,
                       &c->config.read_pause_bytes};
  for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
    *sizes[i] = *sizes[i] > UINT32_MAX / IO_BULK_FACTOR ? UINT32_MAX : *sizes[i] * IO_BULK_FACTOR;
#else
  (void)c;
  (void)fd;
#endif
}

static void conn_set_socket_options(io_conn *c) {
  uv_tcp_nodelay(&c->tcp, 1);
  uv_os_fd_t fd;
  int have_fd = uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0;
  if (have_fd) conn_choose_queues(c, fd);
#ifdef TCP_NOTSENT_LOWAT
  if (c->config.notsent_lowat && have_fd) {
    int lowat = (int)c->config.notsent_lowat;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof(lowat));
  }
#endif
  struct sockaddr_storage ss;
  int len = sizeof(ss);
  c->peer[0] = '\0';
  if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
    char ip[INET6_ADDRSTRLEN] = "";
    if (ss.ss_family == AF_INET6) {
      const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&ss;
      uv_ip6_name(a, ip, sizeof(ip));
      snprintf(c->peer, sizeof(c->peer), "[%s]:%u", ip, (unsigned)ntohs(a->sin6_port));
    } else {
      const struct sockaddr_in *a = (const struct sockaddr_in *)&ss;
      uv_ip4_name(a, ip, sizeof(ip));
      snprintf(c->peer, sizeof(c->peer), "%s:%u", ip, (unsigned)ntohs(a->sin_port));
    }
  }
}

static int conn_setup_tls(io_conn *c, const char *server_name) {
  c->ssl = io_tls_ssl_new(c->tls, server_name, c->detail, sizeof(c->detail));
  if (!c->ssl) return IO_ERR_TLS;
  c->rbio = BIO_new(BIO_s_mem());
  c->wbio = io_tls_wire_bio_new(c->tls, &c->out_wire);
  if (!c->rbio || !c->wbio) {
    BIO_free(c->rbio);
    BIO_free(c->wbio);
    c->rbio = c->wbio = NULL;
    return UV_ENOMEM;
  }
  BIO_set_mem_eof_return(c->rbio, -1);
  SSL_set_bio(c->ssl, c->rbio, c->wbio);
  return 0;
}

/* A memory BIO keeps the largest buffer it ever held (the handshake's flights, a burst of
 * records) after it is read empty; an idle connection gives the read side's back by
 * swapping in a fresh BIO, which allocates only when bytes come. (The write side appends
 * to out_wire directly: io_tls_wire_bio_new.) */
static int conn_renew_rbio(io_conn *c) {
  BUF_MEM *held = NULL;
  if (BIO_ctrl_pending(c->rbio) > 0 || BIO_get_mem_ptr(c->rbio, &held) != 1 || held == NULL ||
      held->max == 0)
    return 0;
  BIO *fresh = BIO_new(BIO_s_mem());
  if (!fresh) return UV_ENOMEM;
  BIO_set_mem_eof_return(fresh, -1);
  SSL_set0_rbio(c->ssl, fresh); /* frees the old one */
  c->rbio = fresh;
  return 0;
}

/* The protocol is known: report it and let bytes flow. */
static void conn_open(io_conn *c, io_proto proto, io_negotiation how) {
  c->proto = proto;
  c->how = how;
  c->state = STATE_OPEN;
  conn_touch(c);
  conn_arm_timer(c, c->idle_timeout_ms);
  if (c->cb.on_open) c->cb.on_open(c, c->user);
  conn_update_reading(c);
  conn_schedule(c);
}

/* ---- Input ----------------------------------------------------------------------- */

/* Keeps input on_read did not take; it is delivered again after a resume. */
static void conn_hold(io_conn *c, const uint8_t *data, size_t len) {
  if (c->state == STATE_OPEN && io_buf_append(&c->in_hold, data, len) != 0)
    conn_finish(c, UV_ENOMEM);
}

/* Hands bytes to on_read; keeps (and pauses on) what it did not consume. */
static void conn_hand_over(io_conn *c, const uint8_t *data, size_t len) {
  if (c->in_hold.len > 0 || c->user_paused || c->state != STATE_OPEN) {
    conn_hold(c, data, len);
    return;
  }
  size_t used = c->cb.on_read(c, data, len, c->user);
  if (used < len) {
    c->user_paused = 1;
    conn_hold(c, data + used, len - used);
  }
}

/* The peer finished sending: on_eof once (or, without one, the close). */
static void conn_report_eof(io_conn *c) {
  if (c->eof_reported) return;
  c->eof_reported = 1;
  if (c->cb.on_eof) {
    c->cb.on_eof(c, c->user);
  } else {
    c->close_status = UV_EOF;
    io_conn_close(c);
  }
}

/* Delivers held input and, with TLS, decrypts what the read BIO holds. */
static void conn_deliver(io_conn *c) {
  if (c->state != STATE_OPEN || c->user_paused) return;
  if (c->in_hold.len > 0) {
    io_buf held = c->in_hold; /* on_read may hold new bytes: start a fresh buffer */
    c->in_hold = (io_buf){0};
    size_t used = c->cb.on_read(c, held.data, held.len, c->user);
    if (used < held.len) {
      c->user_paused = 1;
      io_buf rest = c->in_hold; /* bytes held meanwhile go after the unconsumed ones */
      c->in_hold = (io_buf){0};
      conn_hold(c, held.data + used, held.len - used);
      conn_hold(c, rest.data, rest.len);
      io_buf_free(&rest);
    }
    io_buf_free(&held);
    if (c->state != STATE_OPEN || c->user_paused) return;
  }
  if (!c->ssl) return;
  size_t wire_before = c->out_wire.len; /* what SSL_read writes itself (alerts, KeyUpdate) */
  uint8_t plain[TLS_PLAIN_CHUNK] IO_UNINITIALIZED; /* SSL_read fills what it returns */
  while (c->state == STATE_OPEN && !c->user_paused) {
    ERR_clear_error();
    int n = SSL_read(c->ssl, plain, sizeof(plain));
    if (n > 0) {
      c->bytes_in += (uint64_t)n;
      conn_hand_over(c, plain, (size_t)n);
      continue;
    }
    int err = SSL_get_error(c->ssl, n);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      if (conn_renew_rbio(c) != 0)
        conn_finish(c, UV_ENOMEM);
      else if (c->out_wire.len > wire_before)
        conn_schedule(c); /* a reply of TLS's own goes out now, not with our next write */
      break;
    }
    if (err == SSL_ERROR_ZERO_RETURN) { /* close_notify (SSL_read says so every time) */
      c->clean_eof = 1;
      conn_report_eof(c);
      break;
    }
    int status = io_tls_failure(c->ssl, c->detail, sizeof(c->detail));
    conn_flush(c); /* best effort: the alert (bad_record_mac, RFC 8446 5.2) */
    conn_finish(c, status);
    break;
  }
}

static void conn_handshake(io_conn *c) {
  ERR_clear_error();
  int rv = SSL_do_handshake(c->ssl);
  if (rv == 1) {
    io_proto proto;
    io_negotiation how;
    io_tls_negotiated(c->ssl, &proto, &how);
    conn_open(c, proto, how);
    return;
  }
  int err = SSL_get_error(c->ssl, rv);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    conn_schedule(c); /* handshake bytes to send */
    return;
  }
  int status = io_tls_failure(c->ssl, c->detail, sizeof(c->detail));
  conn_flush(c); /* best effort: the alert */
  conn_finish(c, status);
}

static void conn_sniff(io_conn *c, const uint8_t *data, size_t len) {
  if (io_buf_append(&c->in_hold, data, len) != 0) {
    conn_finish(c, UV_ENOMEM);
    return;
  }
  io_proto proto;
  if (!io_sniff_protocol(c->in_hold.data, c->in_hold.len, c->config.plaintext_v3, &proto)) return;
  conn_open(c, proto, IO_NEG_PLAINTEXT);
  conn_deliver(c);
}

/* ---- Plaintext and TLS on the wrong side ------------------------------------------- */

/* A TLS record header as a server's first bytes: alert (21) or handshake (22), major
 * version 3. Neither SPDY (a control frame starts with 0x80, and no data frame comes
 * first) nor HTTP/1.1 ("HTTP/") can begin so. Decided on the bytes there are: a record
 * header is never split on its way to us in practice, and one byte already tells. */
static int looks_like_tls_record(const uint8_t *data, size_t len) {
  return len >= 1 && (data[0] == 0x15 || data[0] == 0x16) && (len < 2 || data[1] == 0x03);
}

/* Whether a client's first bytes may begin a TLS handshake: a handshake record (22), or
 * the SSLv2-compatible ClientHello (high bit set, message type 1 in the third byte) that
 * OpenSSL still parses. A SPDY control frame (0x80 0x03 0x00 ...) or an HTTP request
 * is neither. */
static int may_begin_tls_handshake(const uint8_t *data, size_t len) {
  if (len == 0 || data[0] == 0x16) return 1;
  if (data[0] & 0x80) return len < 3 || data[2] == 0x01;
  return 0;
}

/* A client spoke plaintext to a TLS port. OpenSSL would read the frame's bytes as a record
 * header and wait for as many bytes as its "length" says, until the handshake timeout;
 * the client would hang as long and then see the connection close. Instead: a fatal
 * unexpected_message alert at once (a client of ours recognises it and says "use
 * https://"), our FIN, and a short linger for the client's end. */
static void conn_refuse_plaintext(io_conn *c) {
  static const uint8_t alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x0a};
  snprintf(c->detail, sizeof(c->detail), "the client does not speak TLS (plaintext on a TLS port)");
  c->close_status = IO_ERR_TLS;
  if (io_buf_append(&c->out_wire, alert, sizeof(alert)) != 0) {
    conn_finish(c, UV_ENOMEM);
    return;
  }
  c->shutdown_sent = 1; /* no TLS session: no close_notify */
  c->state = STATE_CLOSING;
  conn_arm_timer(c, c->config.close_linger_ms ? c->config.close_linger_ms : 1);
  conn_update_reading(c);
  conn_schedule(c);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  const io_conn *c = handle->data;
  unsigned size = c->config.read_size;
  if (size < 1024 || size > sizeof(read_buf)) size = sizeof(read_buf);
  *buf = uv_buf_init((char *)read_buf, size);
}

/* ---- PROXY protocol ---------------------------------------------------------------- */

static void conn_awaiting_unlink(io_conn *c) {
  if (!c->in_awaiting) return;
  io_conn **head = io_listener_awaiting(c->listener);
  if (c->awaiting_prev != NULL)
    c->awaiting_prev->awaiting_next = c->awaiting_next;
  else
    *head = c->awaiting_next;
  if (c->awaiting_next != NULL) c->awaiting_next->awaiting_prev = c->awaiting_prev;
  c->awaiting_prev = c->awaiting_next = NULL;
  c->in_awaiting = 0;
}

static void conn_input(io_conn *c, const uint8_t *data, size_t len);

/* Bytes of a connection still waiting for its PROXY header. Kept until the header is
 * whole (io_proxy_parse bounds it: at most IO_PROXY_V2_MAX bytes plus one read), then
 * the client's address becomes the peer, the listener's on_accept runs, and what followed
 * the header is handled like fresh input. */
static void conn_read_header(io_conn *c, const uint8_t *data, size_t len) {
  if (io_buf_append(&c->in_hold, data, len) != 0) {
    conn_finish(c, UV_ENOMEM);
    return;
  }
  io_proxy_result header;
  int rv = io_proxy_parse(c->in_hold.data, c->in_hold.len, &header);
  if (rv == IO_PROXY_NEED_MORE) return;
  if (rv == IO_PROXY_ERROR) {
    snprintf(c->detail, sizeof(c->detail), "%s", header.error);
    conn_finish(c, IO_ERR_PROXY);
    return;
  }
  if (header.has_addresses) (void)io_proxy_format_address(&header.source, c->peer, sizeof(c->peer));
  c->awaiting_header = 0;
  conn_awaiting_unlink(c);
  io_buf got = c->in_hold; /* the TLS or sniffing path starts from an empty hold */
  c->in_hold = (io_buf){0};
  io_listener_accepted(c->listener, c);
  if (!c->held && c->state != STATE_CLOSED && got.len > header.header_len)
    conn_input(c, got.data + header.header_len, got.len - header.header_len);
  io_buf_free(&got);
}

static void on_peer_eof(io_conn *c) {
  c->peer_eof = 1;
  if (!c->ssl) c->clean_eof = 1; /* with TLS only close_notify counts (see above) */
  uv_read_stop((uv_stream_t *)&c->tcp);
  c->reading = 0;
  if (c->state == STATE_LINGER) {
    conn_finish(c, c->close_status);
  } else if (c->state == STATE_OPEN) {
    conn_report_eof(c);
  } else if (c->state != STATE_CLOSING) {
    /* A proxied connection that ends inside its header is a broken header; one that
     * ends before sending anything (a balancer's TCP check) is just an end. */
    if (c->awaiting_header && c->in_hold.len > 0) {
      snprintf(c->detail, sizeof(c->detail), "the connection ended inside the header");
      conn_finish(c, IO_ERR_PROXY);
      return;
    }
    conn_finish(c, UV_EOF);
  }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buf) {
  io_conn *c = stream->data;
  if (nread == 0) return;
  if (nread < 0) {
    if (nread == UV_EOF)
      on_peer_eof(c);
    else
      conn_finish(c, (int)nread);
    return;
  }
  conn_touch(c);
  if (c->awaiting_header && c->state == STATE_HANDSHAKING)
    conn_read_header(c, (const uint8_t *)buf->base, (size_t)nread);
  else
    conn_input(c, (const uint8_t *)buf->base, (size_t)nread);
  /* A short read drained the socket (libuv reads no more this turn): answer now, while
   * what the input touched is still in the processor's caches, rather than after every
   * other connection's input of the turn. Two workers sharing two cores with their
   * clients spent 9 % less CPU per answer (docs/performance.md). on_idle ends by updating
   * the reading state, as the other branch does. */
  if (c->state == STATE_CLOSED) return;
  if (c->idle_active && (size_t)nread < buf->len)
    on_idle(&c->idle);
  else
    conn_update_reading(c);
}

/* Bytes from the peer (after the PROXY header, if any). */
static void conn_input(io_conn *c, const uint8_t *data, size_t len) {
  if (c->state == STATE_CLOSING || c->state == STATE_LINGER) return; /* discarded */
  int first = !c->heard;
  c->heard = 1;
  if (first && c->client && !c->ssl && looks_like_tls_record(data, len)) {
    conn_finish(c, IO_ERR_PEER_TLS);
    return;
  }
  if (first && !c->client && c->ssl && !may_begin_tls_handshake(data, len)) {
    conn_refuse_plaintext(c);
    return;
  }
  if (!c->ssl) {
    c->bytes_in += len;
    if (c->state == STATE_HANDSHAKING)
      conn_sniff(c, data, len);
    else
      conn_hand_over(c, data, len);
  } else {
    if (BIO_write(c->rbio, data, (int)len) != (int)len) {
      conn_finish(c, UV_ENOMEM);
      return;
    }
    if (c->state == STATE_HANDSHAKING) conn_handshake(c);
    if (c->state == STATE_OPEN) conn_deliver(c);
  }
}

/* Reads while the peer may still send and neither the caller nor our own unsent output
 * says stop. */
static void conn_update_reading(io_conn *c) {
  int want = 0;
  if (c->peer_eof || c->held)
    want = 0;
  else
    switch (c->state) {
    case STATE_HANDSHAKING:
      want = 1;
      break;
    case STATE_OPEN:
      /* Held input (plaintext, or TLS records not yet decrypted) is delivered first: reading
       * more before it is gone would let a pipelining peer grow the hold without bound. */
      want = !c->user_paused && io_conn_unsent(c) < c->config.read_pause_bytes &&
             c->in_hold.len == 0 && (c->rbio == NULL || BIO_ctrl_pending(c->rbio) == 0);
      break;
    case STATE_CLOSING:
    case STATE_LINGER:
      want = 1;
      break;
    default:
      break;
    }
  if (want && !c->reading) {
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) == 0) c->reading = 1;
  } else if (!want && c->reading) {
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->reading = 0;
  }
}

/* ---- Output ---------------------------------------------------------------------- */

static void on_shutdown(uv_shutdown_t *req, int status) {
  io_conn *c = req->data;
  if (c->state == STATE_CLOSED) return;
  if (status < 0) {
    conn_finish(c, c->close_status);
    return;
  }
  c->state = STATE_LINGER;
  if (c->peer_eof) {
    conn_finish(c, c->close_status);
    return;
  }
  conn_arm_timer(c, c->config.close_linger_ms ? c->config.close_linger_ms : 1);
  conn_update_reading(c);
}

static void on_write(uv_write_t *req, int status) {
  io_conn *c = req->data;
  c->write_active = 0;
  c->bytes_out += c->inflight.len - c->inflight_sent;
  c->inflight.len = 0;
  c->inflight_sent = 0;
  buf_trim(&c->inflight);
  if (c->state == STATE_CLOSED) return;
  if (status < 0) {
    conn_finish(c, status);
    return;
  }
  conn_touch(c);
  conn_update_reading(c);
  conn_schedule(c);
}

/* Encrypts data[0..len) into records (their ciphertext goes to out_wire): small ones
 * while the connection is young. */
static int conn_encrypt_bytes(io_conn *c, const uint8_t *data, size_t len) {
  size_t off = 0;
  while (off < len) {
    size_t piece = 16384;
    if (c->tls_plain_written < c->config.tls_young_bytes && c->config.tls_young_record)
      piece = c->config.tls_young_record;
    if (piece > len - off) piece = len - off;
    ERR_clear_error();
    int n = SSL_write(c->ssl, data + off, (int)piece);
    if (n <= 0) return io_tls_failure(c->ssl, c->detail, sizeof(c->detail));
    off += (size_t)n;
    c->tls_plain_written += (uint64_t)n;
  }
  return 0;
}

/* Encrypts the pending plaintext. */
static int conn_encrypt(io_conn *c) {
  int rv = conn_encrypt_bytes(c, c->out_plain.data, c->out_plain.len);
  if (rv == 0) io_buf_drop(&c->out_plain, c->out_plain.len);
  return rv;
}

/* The queued file range is done (or dropped): what was appended after it comes next. */
static void conn_file_done(io_conn *c) {
  close(c->file_fd);
  c->file_fd = -1;
  c->file_left = 0;
  io_buf tmp = c->out_plain; /* empty */
  c->out_plain = c->out_after;
  c->out_after = tmp;
}

/* Sends the queued file range (out_plain is empty and no write is in flight). */
static void conn_send_file(io_conn *c) {
  uv_os_fd_t sock;
  if (uv_fileno((uv_handle_t *)&c->tcp, &sock) != 0) {
    conn_finish(c, UV_EBADF);
    return;
  }
  int progress = 0;
  while (c->file_left > 0) {
    size_t want = c->file_left < (1u << 30) ? (size_t)c->file_left : (1u << 30);
    off_t offset = (off_t)c->file_offset;
    ssize_t n = sendfile(sock, c->file_fd, &offset, want);
    if (n > 0) {
      c->file_offset += (uint64_t)n;
      c->file_left -= (uint64_t)n;
      c->bytes_out += (uint64_t)n;
      progress = 1;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      /* Full: one piece through uv_write, whose completion tells us there is room. */
      size_t piece = c->file_left < 16384 ? (size_t)c->file_left : 16384;
      int rv = io_buf_reserve(&c->inflight, piece);
      ssize_t got = rv ? -1 : pread(c->file_fd, c->inflight.data, piece, (off_t)c->file_offset);
      if (got <= 0) {
        snprintf(c->detail, sizeof(c->detail), "%s", got == 0 ? "file ended early" : "read failed");
        conn_finish(c, rv ? rv : UV_EIO);
        return;
      }
      c->inflight.len = (size_t)got;
      c->file_offset += (uint64_t)got;
      c->file_left -= (uint64_t)got;
      uv_buf_t b = uv_buf_init((char *)c->inflight.data, (unsigned)c->inflight.len);
      rv = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write);
      if (rv < 0) {
        conn_finish(c, rv);
        return;
      }
      c->write_active = 1;
      if (c->file_left == 0) conn_file_done(c);
      return;
    }
    /* 0: the file ended before the promised length (it shrank); or a real error. */
    snprintf(c->detail, sizeof(c->detail), "%s", n == 0 ? "file ended early" : "sendfile failed");
    conn_finish(c, n == 0 ? UV_EIO : -errno);
    return;
  }
  conn_file_done(c);
  /* Room opened without a uv_write completing: let on_writable see it next turn. */
  if (progress) {
    conn_touch(c);
    conn_schedule(c);
  }
}

static void conn_flush(io_conn *c) {
  if (c->state == STATE_CLOSED || c->state == STATE_CONNECTING) return;
  if (c->ssl) {
    int rv = 0;
    if ((c->state == STATE_OPEN || c->state == STATE_CLOSING) && c->out_plain.len)
      rv = conn_encrypt(c);
    if (rv == 0 && c->state == STATE_CLOSING && !c->shutdown_sent && !c->out_plain.len) {
      c->shutdown_sent = 1;
      ERR_clear_error();
      (void)SSL_shutdown(c->ssl); /* best effort: queue close_notify */
    }
    if (rv) {
      conn_finish(c, rv);
      return;
    }
  }
  io_buf *src = c->ssl ? &c->out_wire : &c->out_plain;
  if (c->ssl == NULL && c->state == STATE_HANDSHAKING) return; /* sniffing: nothing out */
  if (!c->write_active && src->len == 0 && c->file_fd >= 0) {
    conn_send_file(c);
    if (c->state == STATE_CLOSED) return;
  }
  if (!c->write_active && src->len > 0) {
    /* Most turns' output fits the socket at once: write it now. A uv_write that
     * completes at once would still cost an epoll_ctl (libuv re-arms the watcher when its
     * write queue drains), one more system call per answer. Only a rest goes through
     * uv_write, whose callback says when the socket took it. */
    uv_buf_t now = uv_buf_init((char *)src->data, (unsigned)src->len);
    int sent = uv_try_write((uv_stream_t *)&c->tcp, &now, 1);
    if (sent < 0 && sent != UV_EAGAIN) {
      conn_finish(c, sent);
      return;
    }
    if (sent < 0) sent = 0;
    if (sent > 0) {
      c->bytes_out += (uint64_t)sent;
      conn_touch(c);
    }
    if ((size_t)sent == src->len) {
      src->len = 0;
      buf_trim(src);
      /* Room opened without a write callback: a producer waiting for it runs next. */
      if (c->want_writable || c->file_fd >= 0) conn_schedule(c);
    } else {
      io_buf tmp = c->inflight;
      c->inflight = *src;
      *src = tmp;
      src->len = 0;
      c->inflight_sent = (size_t)sent;
      uv_buf_t b =
          uv_buf_init((char *)c->inflight.data + sent, (unsigned)(c->inflight.len - (size_t)sent));
      int rv = uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &b, 1, on_write);
      if (rv < 0) {
        conn_finish(c, rv);
        return;
      }
      c->write_active = 1;
    }
  }
  if (c->state == STATE_CLOSING && !c->write_active && src->len == 0 && c->out_plain.len == 0 &&
      c->file_fd < 0 && c->out_after.len == 0 && !c->fin_sent) {
    c->fin_sent = 1;
    if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown) < 0)
      conn_finish(c, c->close_status);
  }
}

/* A connection with nothing in flight keeps no buffers: most connections of a busy server
 * are idle, and their memory is what limits how many it can hold. The next turn that has
 * work allocates again (one malloc beside a system call). */
static void conn_release_buffers(io_conn *c) {
  if (c->state != STATE_OPEN || c->write_active || c->file_fd >= 0 || c->want_writable) return;
  if (c->out_plain.len || c->out_wire.len || c->inflight.len || c->in_hold.len || c->out_after.len)
    return;
  io_buf_release(&c->out_plain);
  io_buf_release(&c->out_wire);
  io_buf_release(&c->inflight);
  io_buf_release(&c->in_hold);
  io_buf_release(&c->out_after);
}

/* The once-per-turn work: held input, on_writable, then one flush. */
static void on_idle(uv_idle_t *idle) {
  io_conn *c = idle->data;
  uv_idle_stop(&c->idle);
  c->idle_active = 0;
  if (c->state == STATE_OPEN) conn_deliver(c);
  if (c->state == STATE_OPEN && c->want_writable) {
    size_t room = io_conn_room(c);
    if (room > 0) {
      c->want_writable = 0;
      if (c->cb.on_writable) c->cb.on_writable(c, room, c->user);
    }
  }
  conn_flush(c);
  if (c->state != STATE_CLOSED) conn_update_reading(c);
  conn_release_buffers(c);
}

static void conn_schedule(io_conn *c) {
  if (c->idle_active || c->state == STATE_CLOSED) return;
  c->idle_active = 1;
  uv_idle_start(&c->idle, on_idle);
}

/* ---- Closing --------------------------------------------------------------------- */

static void on_handle_closed(uv_handle_t *handle) {
  io_conn *c = handle->data;
  if (--c->handles_open > 0) return;
  if (c->cb.on_close) c->cb.on_close(c, c->close_status, c->user);
  if (c->listener && c->awaiting_header)
    io_listener_dropped(c->listener, c->peer, c->close_status, c->detail);
  if (c->listener) io_listener_conn_gone(c->listener);
  if (c->ssl) SSL_free(c->ssl); /* frees both BIOs */
  io_buf_free(&c->out_plain);
  io_buf_free(&c->out_wire);
  io_buf_free(&c->inflight);
  io_buf_free(&c->in_hold);
  io_buf_free(&c->out_after);
  if (c->file_fd >= 0) close(c->file_fd);
  free(c);
}

/* Closes the handles; on_close(status) fires from the loop once they are closed. */
static void conn_finish(io_conn *c, int status) {
  if (c->state == STATE_CLOSED) return;
  if (status != 0) c->close_status = status;
  c->state = STATE_CLOSED;
  conn_awaiting_unlink(c);
  uv_close((uv_handle_t *)&c->tcp, on_handle_closed);
  uv_close((uv_handle_t *)&c->idle, on_handle_closed);
  uv_close((uv_handle_t *)&c->timer, on_handle_closed);
}

static void on_timer(uv_timer_t *timer) {
  io_conn *c = timer->data;
  switch (c->state) {
  case STATE_CONNECTING:
  case STATE_HANDSHAKING:
    if (c->awaiting_header)
      snprintf(c->detail, sizeof(c->detail), "no complete PROXY protocol header in time");
    conn_finish(c, IO_ERR_HANDSHAKE_TIMEOUT);
    break;
  case STATE_OPEN: {
    uint64_t quiet = uv_now(c->loop) - c->last_activity_ms;
    if (c->idle_timeout_ms == 0) break;
    if (quiet >= c->idle_timeout_ms)
      conn_finish(c, IO_ERR_IDLE_TIMEOUT);
    else
      conn_arm_timer(c, (uint32_t)(c->idle_timeout_ms - quiet));
    break;
  }
  case STATE_CLOSING: { /* ends when the peer stops draining our last bytes */
    uint32_t limit = c->idle_timeout_ms ? c->idle_timeout_ms : c->config.close_linger_ms;
    uint64_t quiet = uv_now(c->loop) - c->last_activity_ms;
    if (limit != 0 && quiet < limit) { /* bytes moved meanwhile: not idle */
      conn_arm_timer(c, (uint32_t)(limit - quiet));
      break;
    }
    conn_finish(c, c->close_status ? c->close_status : IO_ERR_IDLE_TIMEOUT);
    break;
  }
  case STATE_LINGER:
    conn_finish(c, c->close_status);
    break;
  case STATE_CLOSED:
    break;
  }
}

void io_conn_close(io_conn *c) {
  if (c->state == STATE_CLOSED || c->state == STATE_CLOSING || c->state == STATE_LINGER) return;
  if (c->state != STATE_OPEN) {
    conn_finish(c, c->close_status);
    return;
  }
  c->state = STATE_CLOSING;
  io_buf_free(&c->in_hold);
  /* Sending the rest is bounded too: the idle timeout (or the linger time) ends it once
   * no byte has moved for that long. */
  uint32_t limit = c->idle_timeout_ms ? c->idle_timeout_ms : c->config.close_linger_ms;
  conn_arm_timer(c, limit ? limit : 1);
  conn_update_reading(c);
  conn_schedule(c);
}

void io_conn_abort(io_conn *c, int status) { conn_finish(c, status); }

void io_conn_hold_then_abort(io_conn *c, uint32_t ms) {
  if (c->state != STATE_HANDSHAKING) {
    conn_finish(c, UV_ECANCELED);
    return;
  }
  c->held = 1;
  uv_os_fd_t fd;
  int small = 1; /* the kernel rounds it up to its minimum */
  if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0)
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  conn_update_reading(c); /* a proxied connection was reading its header */
  conn_arm_timer(c, ms ? ms : 1);
}

/* ---- Client and server start ----------------------------------------------------- */

static void on_connect(uv_connect_t *req, int status) {
  io_conn *c = req->data;
  if (c->state == STATE_CLOSED) return;
  if (status < 0) {
    conn_finish(c, status);
    return;
  }
  conn_set_socket_options(c);
  if (!c->ssl) {
    conn_open(c, IO_PROTO_UNKNOWN, IO_NEG_PLAINTEXT);
    return;
  }
  c->state = STATE_HANDSHAKING;
  SSL_set_connect_state(c->ssl);
  conn_update_reading(c);
  conn_handshake(c);
}

int io_conn_connect(io_conn **out, uv_loop_t *loop, const struct sockaddr *addr, io_tls *tls,
                    const char *server_name, const io_config *config,
                    const io_conn_callbacks *callbacks, void *user) {
  if (!callbacks || !callbacks->on_read) return UV_EINVAL;
  if (tls && tls->server) return UV_EINVAL;
  io_conn *c = conn_alloc(loop, config, tls);
  if (!c) return UV_ENOMEM;
  c->cb = *callbacks;
  c->user = user;
  c->client = 1;
  int rv = 0;
  if (tls) rv = conn_setup_tls(c, server_name);
  uv_tcp_nodelay(&c->tcp, 1);
  if (rv == 0) rv = uv_tcp_connect(&c->connect_req, &c->tcp, addr, on_connect);
  if (rv < 0) {
    /* Nothing happened yet: close quietly, the caller gets the error. */
    c->cb.on_close = NULL;
    conn_finish(c, rv);
    return rv;
  }
  conn_arm_timer(c, c->config.handshake_timeout_ms);
  *out = c;
  return 0;
}

io_conn *io_conn_accept(uv_stream_t *server, const io_config *config, io_tls *tls,
                        io_listener *listener) {
  io_conn *c = conn_alloc(server->loop, config, tls);
  if (!c) return NULL;
  int rv = uv_accept(server, (uv_stream_t *)&c->tcp);
  if (rv == 0 && tls) rv = conn_setup_tls(c, NULL);
  if (rv < 0) {
    conn_finish(c, rv);
    return NULL;
  }
  c->listener = listener;
  conn_set_socket_options(c);
  c->state = STATE_HANDSHAKING;
  if (c->ssl) SSL_set_accept_state(c->ssl);
  conn_arm_timer(c, c->config.handshake_timeout_ms);
  if (c->config.proxy_protocol && listener != NULL) {
    /* The header first; the handshake timer bounds it too. */
    io_conn **head = io_listener_awaiting(listener);
    c->awaiting_header = c->in_awaiting = 1;
    c->awaiting_next = *head;
    if (*head != NULL) (*head)->awaiting_prev = c;
    *head = c;
    conn_update_reading(c);
  }
  return c;
}

void io_conn_begin_accepted(io_conn *c) {
  if (c->state != STATE_HANDSHAKING || c->held) return;
  if (!c->cb.on_read) {
    conn_finish(c, UV_ECANCELED);
    return;
  }
  if (!c->ssl && !c->config.sniff_plaintext) {
    conn_open(c, IO_PROTO_UNKNOWN, IO_NEG_PLAINTEXT);
    return;
  }
  conn_update_reading(c);
}

/* ---- Accessors ------------------------------------------------------------------- */

void io_conn_set_callbacks(io_conn *c, const io_conn_callbacks *callbacks, void *user) {
  c->cb = *callbacks;
  c->user = user;
}

void *io_conn_user(const io_conn *c) { return c->user; }

int io_conn_write(io_conn *c, const void *data, size_t len) {
  if (c->state == STATE_CLOSED || c->state == STATE_CLOSING || c->state == STATE_LINGER)
    return UV_EPIPE;
  /* A large write over TLS (a cached body's DATA frame) is encrypted from where it is,
   * after what is pending, instead of being copied into out_plain first: one copy of
   * every body byte fewer, for one more record per write. */
  if (c->ssl != NULL && c->state == STATE_OPEN && len >= IO_TLS_DIRECT_MIN &&
      c->tls_plain_written >= c->config.tls_young_bytes) {
    int rv = conn_encrypt(c);
    if (rv == 0) rv = conn_encrypt_bytes(c, data, len);
    if (rv != 0) {
      conn_finish(c, rv);
      return rv;
    }
    conn_schedule(c);
    return 0;
  }
  int rv = io_buf_append(c->file_fd >= 0 ? &c->out_after : &c->out_plain, data, len);
  if (rv) return rv;
  if (c->state == STATE_OPEN) conn_schedule(c);
  return 0;
}

int io_conn_write_framed(io_conn *c, const void *head, size_t head_len, uint8_t *body,
                         size_t body_len) {
  if (c->ssl == NULL || c->state != STATE_OPEN || head_len > IO_FRAME_HEAD_MAX ||
      head_len + body_len > IO_TLS_RECORD_MAX || body_len < IO_TLS_FRAMED_MIN ||
      c->tls_plain_written < c->config.tls_young_bytes) {
    int rv = io_conn_write(c, head, head_len);
    return rv != 0 ? rv : io_conn_write(c, body, body_len);
  }
  /* What is pending goes first, in records of its own; then the frame as one record. */
  int rv = conn_encrypt(c);
  if (rv == 0) {
    uint8_t lent[IO_FRAME_HEAD_MAX];
    uint8_t *frame = body - head_len;
    memcpy(lent, frame, head_len);
    memcpy(frame, head, head_len);
    rv = conn_encrypt_bytes(c, frame, head_len + body_len);
    memcpy(frame, lent, head_len);
  }
  if (rv != 0) {
    conn_finish(c, rv);
    return rv;
  }
  conn_schedule(c);
  return 0;
}

int io_conn_sendfile(io_conn *c, int fd, uint64_t offset, uint64_t length) {
  int rv = 0;
  if (c->state != STATE_OPEN)
    rv = UV_EPIPE;
  else if (c->ssl)
    rv = UV_ENOTSUP;
  else if (c->file_fd >= 0)
    rv = UV_EBUSY;
  else if (offset > (uint64_t)INT64_MAX || length > (uint64_t)INT64_MAX - offset)
    rv = UV_EINVAL;
  if (rv != 0 || length == 0) {
    close(fd);
    return rv;
  }
  c->file_fd = fd;
  c->file_offset = offset;
  c->file_left = length;
  conn_schedule(c);
  return 0;
}

size_t io_conn_unsent(const io_conn *c) {
  uint64_t n = (uint64_t)c->out_plain.len + c->out_wire.len + c->inflight.len - c->inflight_sent +
               c->out_after.len + c->file_left;
  return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

int io_conn_is_bulk(const io_conn *c) { return c->bulk; }

size_t io_conn_room(const io_conn *c) {
  if (c->state != STATE_OPEN) return 0;
  size_t unsent = io_conn_unsent(c);
  return unsent >= c->config.out_high_water ? 0 : c->config.out_high_water - unsent;
}

void io_conn_want_writable(io_conn *c) {
  if (c->state != STATE_OPEN && c->state != STATE_HANDSHAKING && c->state != STATE_CONNECTING)
    return;
  c->want_writable = 1;
  /* With room now, the idle pass calls back this turn; without, on_write does. */
  if (c->state == STATE_OPEN && io_conn_room(c) > 0) conn_schedule(c);
}

void io_conn_pause_read(io_conn *c, int pause) {
  c->user_paused = pause ? 1 : 0;
  if (c->state == STATE_CLOSED) return;
  conn_update_reading(c);
  if (!pause) conn_schedule(c); /* held input is delivered by the idle pass */
}

void io_conn_set_idle_timeout(io_conn *c, uint32_t ms) {
  uint32_t before = c->idle_timeout_ms;
  c->idle_timeout_ms = ms;
  if (c->state != STATE_OPEN) return;
  conn_touch(c);
  /* A timer already due no later than the new deadline stays: when it fires, on_timer
   * arms it again for the rest (servers call this on every request). */
  if (ms != 0 && before != 0 && ms >= before && uv_is_active((uv_handle_t *)&c->timer)) return;
  conn_arm_timer(c, ms);
}

io_proto io_conn_protocol(const io_conn *c) { return c->proto; }
io_negotiation io_conn_negotiation(const io_conn *c) { return c->how; }
int io_conn_is_tls(const io_conn *c) { return c->ssl != NULL; }

int io_conn_peer_names(const io_conn *c, const char *name) {
  return c->ssl == NULL || io_tls_peer_names(c->ssl, name);
}

int io_conn_is_connecting(const io_conn *c) { return c->state == STATE_CONNECTING; }

const char *io_conn_negotiation_hint(const io_conn *c) {
  if (!c->client || !c->ssl || c->how != IO_NEG_TLS_DEFAULT) return "";
  return io_tls_no_protocol_hint(c->tls, c->ssl);
}

const char *io_conn_tls_version(const io_conn *c) {
  return c->ssl ? SSL_get_version(c->ssl) : "none";
}

const char *io_conn_error_detail(const io_conn *c) { return c->detail; }
const char *io_conn_peer(const io_conn *c) { return c->peer; }
uint64_t io_conn_bytes_in(const io_conn *c) { return c->bytes_in; }
uint64_t io_conn_bytes_out(const io_conn *c) {
  return c->ssl ? c->tls_plain_written : c->bytes_out;
}

int io_conn_peer_closed_cleanly(const io_conn *conn) { return conn->clean_eof; }
