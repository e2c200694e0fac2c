/* hostile_server.c — a SPDY/3 (and HTTP/1.1) server that misbehaves on purpose, for the
 * tests of `speedy get` against hostile servers (tests/hostile-client/run.sh).
 *
 *   hostile_server CASE [--tls CERT KEY] [--count N] [--content-length N] [--no-length]
 *
 * Listens on 127.0.0.1 port 0, prints "port N" on stdout, then serves connections one at
 * a time with the scripted misbehaviour of CASE. What the client sent back (its resets by
 * status, GOAWAY) is printed on stderr as one "stats ..." line per connection, for the
 * test to check. Exits when stdin closes (the test's end) or after 60 s (SIGALRM).
 *
 * Frames are built with libspeedy's own encoders (lib/frame.h) and header blocks are
 * serialised and compressed here, by hand, with the SPDY/3 dictionary — so a block may
 * hold what the engine's encoder would refuse (NUL, control bytes, a zlib bomb). Reading
 * parses just enough of the client's frames to follow flow control and count resets.
 *
 * Cases (SPDY/3 wire version; the client speaks SPDY/3.1 in plaintext by default):
 *   push-flood        answers stream 1 after pushing --count streams (default 10,000)
 *   push-other-origin pushes two resources of other origins, then answers "ok"
 *   push-names        pushes resources whose names try to leave the download directory
 *   endless-body      a 200 whose DATA never ends (flow control respected); without
 *                     content-length, or with --content-length N
 *   endless-body-http1 the same over HTTP/1.1 (chunked, or --content-length N); ALPN
 *                     offers only http/1.1; plaintext speaks HTTP/1.1 to --http1 clients
 *   no-status         a SYN_REPLY without :status, then a body
 *   zlib-bomb         a SYN_REPLY whose header block inflates to 16 MiB
 *   goaway            GOAWAY (last good stream 0) as soon as the connection opens
 *   silent            reads the request and never answers
 *   truncate          (TLS) content-length 100,000, 5,000 bytes, then the TCP connection
 *                     closed without close_notify; SPDY by ALPN
 *   truncate-http1    the same over HTTP/1.1 (ALPN offers only http/1.1); with
 *                     --no-length the body is delimited by the connection's end instead
 */
#define _GNU_SOURCE /* memmem, accept4 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "frame.h"
#include "hdblock.h"

#define IN_CAP 65536
#define MAX_DATA 16384

/* ---- output buffers ------------------------------------------------------------------ */

typedef struct obuf {
  uint8_t *data;
  size_t len, cap;
} obuf;

static void die(const char *what) {
  fprintf(stderr, "hostile_server: %s\n", what);
  exit(1);
}

static void ob_reserve(obuf *b, size_t n) {
  if (n <= b->cap - b->len) return;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap - b->len < n) {
    if (cap > SIZE_MAX / 2) die("buffer too large");
    cap *= 2;
  }
  uint8_t *p = realloc(b->data, cap);
  if (!p) die("out of memory");
  b->data = p;
  b->cap = cap;
}

static void ob_put(obuf *b, const void *bytes, size_t n) {
  ob_reserve(b, n);
  if (n) memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

static void ob_put_u32(obuf *b, uint32_t v) {
  uint8_t p[4];
  spdy_put_u32(p, v);
  ob_put(b, p, 4);
}

/* ---- one client connection ----------------------------------------------------------- */

typedef struct peer {
  int fd;
  SSL *ssl;
  int http1;
  int gone; /* the client closed, or a read / write failed */
  uint8_t in[IN_CAP];
  size_t in_len;
  size_t skip; /* bytes of an oversized frame still to discard */
  int32_t request_id;
  int64_t initial_window, stream_window, session_window;
  uint64_t rst_by_status[16], rst_total, goaways, bytes_sent;
  z_stream zs; /* our header compression context */
  char authority[64];
} peer;

static void on_frame(peer *p, const spdy_frame_hd *hd, const uint8_t *payload) {
  if (!hd->is_control) return; /* the client's DATA: nothing to do */
  uint32_t len = hd->length;
  switch (hd->type) {
  case SPEEDY_SPDY_FRAME_SYN_STREAM:
    if (len >= 4 && p->request_id == 0) {
      p->request_id = (int32_t)(spdy_get_u32(payload) & 0x7fffffff);
      p->stream_window = p->initial_window;
    }
    break;
  case SPEEDY_SPDY_FRAME_RST_STREAM:
    if (len >= 8) {
      uint32_t status = spdy_get_u32(payload + 4);
      p->rst_by_status[status < 16 ? status : 0]++;
      p->rst_total++;
    }
    break;
  case SPEEDY_SPDY_FRAME_SETTINGS:
    if (len >= 4) {
      uint32_t n = spdy_get_u32(payload);
      for (uint32_t i = 0; i < n && i < (len - 4) / 8; i++) {
        const uint8_t *e = payload + 4 + 8 * i;
        uint32_t id = spdy_get_u32(e) & 0xffffff;
        uint32_t value = spdy_get_u32(e + 4);
        if (id == SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE) {
          p->stream_window += (int64_t)value - p->initial_window;
          p->initial_window = value;
        }
      }
    }
    break;
  case SPEEDY_SPDY_FRAME_WINDOW_UPDATE:
    if (len >= 8) {
      int32_t id = (int32_t)(spdy_get_u32(payload) & 0x7fffffff);
      uint32_t delta = spdy_get_u32(payload + 4) & 0x7fffffff;
      if (id == 0) p->session_window += delta;
      if (id != 0 && id == p->request_id) p->stream_window += delta;
    }
    break;
  case SPEEDY_SPDY_FRAME_GOAWAY:
    p->goaways++;
    break;
  default:
    break;
  }
}

/* Splits what arrived into frames (SPDY) or finds the end of the request head (HTTP). */
static void parse_input(peer *p) {
  if (p->http1) {
    if (p->request_id == 0 && p->in_len >= 4 && memmem(p->in, p->in_len, "\r\n\r\n", 4) != NULL)
      p->request_id = 1;
    if (p->in_len > IN_CAP / 2) p->in_len = 0; /* the head was seen or never will be */
    return;
  }
  size_t off = 0;
  for (;;) {
    if (p->skip) {
      size_t n = p->in_len - off < p->skip ? p->in_len - off : p->skip;
      off += n;
      p->skip -= n;
      if (p->skip) break;
    }
    if (p->in_len - off < SPDY_FRAME_HEADER_LEN) break;
    spdy_frame_hd hd;
    spdy_frame_hd_decode(p->in + off, &hd);
    if (hd.length > IN_CAP - SPDY_FRAME_HEADER_LEN) { /* too big for us: skip it */
      off += SPDY_FRAME_HEADER_LEN;
      p->skip = hd.length;
      continue;
    }
    if (p->in_len - off - SPDY_FRAME_HEADER_LEN < hd.length) break;
    on_frame(p, &hd, p->in + off + SPDY_FRAME_HEADER_LEN);
    off += SPDY_FRAME_HEADER_LEN + hd.length;
  }
  memmove(p->in, p->in + off, p->in_len - off);
  p->in_len -= off;
}

/* Reads whatever the client has sent (never blocks). */
static void peer_read(peer *p) {
  while (!p->gone && p->in_len < IN_CAP) {
    ssize_t n;
    if (p->ssl) {
      ERR_clear_error();
      int r = SSL_read(p->ssl, p->in + p->in_len, (int)(IN_CAP - p->in_len));
      if (r <= 0) {
        int err = SSL_get_error(p->ssl, r);
        if (err != SSL_ERROR_WANT_READ && err != SSL_ERROR_WANT_WRITE) p->gone = 1;
        break;
      }
      n = r;
    } else {
      n = read(p->fd, p->in + p->in_len, IN_CAP - p->in_len);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      if (n <= 0) {
        p->gone = 1;
        break;
      }
    }
    p->in_len += (size_t)n;
    parse_input(p);
  }
}

/* Waits up to ms (-1: forever) for input, and reads it. */
static void peer_pump(peer *p, int ms, short extra_events) {
  struct pollfd pfd = {.fd = p->fd, .events = POLLIN | extra_events};
  if (p->ssl && SSL_pending(p->ssl) > 0) ms = 0;
  int n = poll(&pfd, 1, ms);
  if (n < 0 && errno != EINTR) p->gone = 1;
  if (n > 0 && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) peer_read(p);
}

/* Writes everything, reading (and parsing) the client's input while the socket is full.
 * Returns 0, or -1 once the client is gone. */
static int peer_send(peer *p, const void *data, size_t len) {
  const uint8_t *b = data;
  while (len > 0 && !p->gone) {
    ssize_t n;
    if (p->ssl) {
      ERR_clear_error();
      int r = SSL_write(p->ssl, b, len > INT32_MAX ? INT32_MAX : (int)len);
      if (r <= 0) {
        int err = SSL_get_error(p->ssl, r);
        if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
          peer_pump(p, 1000, POLLOUT);
          continue;
        }
        p->gone = 1;
        break;
      }
      n = r;
    } else {
      n = send(p->fd, b, len, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        peer_pump(p, 1000, POLLOUT);
        continue;
      }
      if (n <= 0) {
        p->gone = 1;
        break;
      }
    }
    b += n;
    len -= (size_t)n;
    p->bytes_sent += (uint64_t)n;
  }
  return p->gone ? -1 : 0;
}

/* Reads until the client goes away. */
static void peer_hold(peer *p) {
  while (!p->gone) peer_pump(p, -1, 0);
}

static int peer_wait_request(peer *p) {
  while (!p->gone && p->request_id == 0) peer_pump(p, -1, 0);
  return p->gone ? -1 : 0;
}

/* ---- header blocks and frames ------------------------------------------------------- */

typedef struct nv {
  const char *name;
  const char *value;
  size_t value_len; /* 0: strlen(value) */
} nv;

static void deflate_into(peer *p, const void *in, size_t len, int flush, obuf *out) {
  p->zs.next_in = (Bytef *)(uintptr_t)in;
  p->zs.avail_in = (uInt)len;
  do {
    ob_reserve(out, 4096);
    p->zs.next_out = out->data + out->len;
    p->zs.avail_out = 4096;
    int rv = deflate(&p->zs, flush);
    if (rv != Z_OK && rv != Z_BUF_ERROR) die("deflate failed");
    out->len += 4096 - p->zs.avail_out;
  } while (p->zs.avail_out == 0 || p->zs.avail_in > 0);
}

/* The SPDY/3 name/value block of n fields, compressed with a sync flush. */
static void block_nv(peer *p, const nv *fields, size_t n, obuf *out) {
  obuf plain = {0};
  ob_put_u32(&plain, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    size_t vlen = fields[i].value_len ? fields[i].value_len : strlen(fields[i].value);
    ob_put_u32(&plain, (uint32_t)strlen(fields[i].name));
    ob_put(&plain, fields[i].name, strlen(fields[i].name));
    ob_put_u32(&plain, (uint32_t)vlen);
    ob_put(&plain, fields[i].value, vlen);
  }
  deflate_into(p, plain.data, plain.len, Z_SYNC_FLUSH, out);
  free(plain.data);
}

static void frame_syn_reply(obuf *out, uint8_t flags, int32_t id, const obuf *block) {
  uint8_t prefix[32];
  size_t n = spdy_frame_encode_stream_headers_prefix(prefix, 3, SPEEDY_SPDY_FRAME_SYN_REPLY, flags,
                                                     id, block->len);
  ob_put(out, prefix, n);
  ob_put(out, block->data, block->len);
}

static void syn_reply(peer *p, obuf *out, uint8_t flags, const nv *fields, size_t n) {
  obuf block = {0};
  block_nv(p, fields, n, &block);
  frame_syn_reply(out, flags, p->request_id, &block);
  free(block.data);
}

static void push_stream(peer *p, obuf *out, int32_t id, const nv *fields, size_t n) {
  obuf block = {0};
  block_nv(p, fields, n, &block);
  uint8_t prefix[32];
  size_t len = spdy_frame_encode_syn_stream_prefix(prefix, 3, SPDY_FLAG_UNIDIRECTIONAL, id,
                                                   p->request_id, 0, block.len);
  ob_put(out, prefix, len);
  ob_put(out, block.data, block.len);
  free(block.data);
}

static void data_frame(obuf *out, int32_t id, uint8_t flags, const void *bytes, size_t len) {
  uint8_t hd[SPDY_FRAME_HEADER_LEN];
  spdy_frame_hd_encode_data(hd, id, flags, (uint32_t)len);
  ob_put(out, hd, sizeof(hd));
  ob_put(out, bytes, len);
}

/* A push of path with a small body: SYN_STREAM + DATA with FIN. */
static void push_small(peer *p, obuf *out, int32_t id, const char *scheme, const char *host,
                       const char *path, size_t path_len, const nv *extra, size_t n_extra) {
  nv fields[8] = {{":scheme", scheme, 0},
                  {":host", host, 0},
                  {":path", path, path_len},
                  {":status", "200", 0},
                  {":version", "HTTP/1.1", 0}};
  size_t n = 5;
  for (size_t i = 0; i < n_extra && n < 8; i++) fields[n++] = extra[i];
  push_stream(p, out, id, fields, n);
  data_frame(out, id, SPDY_FLAG_FIN, "pushed\n", 7);
}

static const nv ok_reply[] = {
    {":status", "200", 0}, {":version", "HTTP/1.1", 0}, {"content-type", "text/plain", 0}};

/* ---- the cases ----------------------------------------------------------------------- */

static void case_push_flood(peer *p, long count) {
  obuf out = {0};
  syn_reply(p, &out, 0, ok_reply, 3);
  for (long i = 0; i < count && !p->gone; i++) {
    char path[32];
    snprintf(path, sizeof(path), "/push/%ld", i);
    push_small(p, &out, (int32_t)(2 + 2 * i), "http", p->authority, path, 0, NULL, 0);
    if (out.len >= 65536) {
      peer_send(p, out.data, out.len);
      out.len = 0;
    }
  }
  data_frame(&out, p->request_id, SPDY_FLAG_FIN, "main body\n", 10);
  peer_send(p, out.data, out.len);
  free(out.data);
  peer_hold(p);
}

static void case_push_other_origin(peer *p) {
  obuf out = {0};
  syn_reply(p, &out, 0, ok_reply, 3);
  push_small(p, &out, 2, "http", "evil.example", "/evil.js", 0, NULL, 0);
  push_small(p, &out, 4, "https", p->authority, "/other-scheme.js", 0, NULL, 0);
  data_frame(&out, p->request_id, SPDY_FLAG_FIN, "ok\n", 3);
  peer_send(p, out.data, out.len);
  free(out.data);
  peer_hold(p);
}

static void case_push_names(peer *p) {
  static const struct {
    const char *path;
    size_t len; /* 0: strlen */
  } names[] = {{"/../escape-dotdot", 0},
               {"/..%2fescape-pct", 0},
               {"/%2e%2e%2fescape-pct-dots", 0},
               {"/a/../../escape-inner", 0},
               {"/etc/escape-abs", 0},
               {"//etc/escape-double-slash", 0},
               {"/x\x01\n\x1b[31mescape-ctl", 0},
               {"/nul\0/../escape-nul", 19},
               {"/..", 0},
               {"/.hidden-escape", 0},
               {"../escape-relative", 0},
               {"/dir\\..\\escape-backslash", 0}};
  static const nv disposition[] = {
      {"content-disposition", "attachment; filename=\"../../escape-disposition\"", 0}};
  obuf out = {0};
  syn_reply(p, &out, 0, ok_reply, 3);
  int32_t id = 2;
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++, id += 2)
    push_small(p, &out, id, "http", p->authority, names[i].path, names[i].len, disposition, 1);
  data_frame(&out, p->request_id, SPDY_FLAG_FIN, "ok\n", 3);
  peer_send(p, out.data, out.len);
  free(out.data);
  peer_hold(p);
}

static void case_endless_body(peer *p, const char *content_length) {
  const nv reply[] = {{":status", "200", 0},
                      {":version", "HTTP/1.1", 0},
                      {"content-type", "application/octet-stream", 0},
                      {"content-length", content_length ? content_length : "", 0}};
  static uint8_t chunk[MAX_DATA];
  memset(chunk, 'z', sizeof(chunk));
  obuf out = {0};
  if (p->http1) { /* chunked, or a content-length, and never the end */
    char head[200];
    int n = snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\n%s%s\r\n\r\n",
                     content_length ? "Content-Length: " : "Transfer-Encoding: chunked",
                     content_length ? content_length : "");
    peer_send(p, head, (size_t)n);
    while (!p->gone) {
      out.len = 0;
      if (!content_length) ob_put(&out, "4000\r\n", 6);
      ob_put(&out, chunk, sizeof(chunk));
      if (!content_length) ob_put(&out, "\r\n", 2);
      peer_send(p, out.data, out.len);
      peer_pump(p, 0, 0);
    }
    free(out.data);
    return;
  }
  syn_reply(p, &out, 0, reply, content_length ? 4 : 3);
  peer_send(p, out.data, out.len);
  while (!p->gone) {
    int64_t room = p->stream_window < p->session_window ? p->stream_window : p->session_window;
    if (room <= 0) {
      peer_pump(p, -1, 0); /* wait for WINDOW_UPDATE */
      continue;
    }
    size_t n = room < MAX_DATA ? (size_t)room : MAX_DATA;
    out.len = 0;
    data_frame(&out, p->request_id, 0, chunk, n);
    p->stream_window -= (int64_t)n;
    p->session_window -= (int64_t)n;
    peer_send(p, out.data, out.len);
    peer_pump(p, 0, 0);
  }
  free(out.data);
}

static void case_no_status(peer *p) {
  static const nv reply[] = {{":version", "HTTP/1.1", 0}, {"content-type", "text/plain", 0}};
  obuf out = {0};
  syn_reply(p, &out, 0, reply, 2);
  data_frame(&out, p->request_id, SPDY_FLAG_FIN, "no status\n", 10);
  peer_send(p, out.data, out.len);
  free(out.data);
  peer_hold(p);
}

static void case_zlib_bomb(peer *p) {
  const uint32_t bomb = 16u << 20;
  static const uint8_t zeros[65536];
  obuf block = {0}, plain = {0};
  ob_put_u32(&plain, 3);
  ob_put_u32(&plain, 7);
  ob_put(&plain, ":status", 7);
  ob_put_u32(&plain, 3);
  ob_put(&plain, "200", 3);
  ob_put_u32(&plain, 8);
  ob_put(&plain, ":version", 8);
  ob_put_u32(&plain, 8);
  ob_put(&plain, "HTTP/1.1", 8);
  ob_put_u32(&plain, 6);
  ob_put(&plain, "x-bomb", 6);
  ob_put_u32(&plain, bomb);
  deflate_into(p, plain.data, plain.len, Z_NO_FLUSH, &block);
  for (uint32_t left = bomb; left > 0;) {
    uint32_t n = left < sizeof(zeros) ? left : (uint32_t)sizeof(zeros);
    deflate_into(p, zeros, n, Z_NO_FLUSH, &block);
    left -= n;
  }
  deflate_into(p, NULL, 0, Z_SYNC_FLUSH, &block);
  obuf out = {0};
  frame_syn_reply(&out, 0, p->request_id, &block);
  fprintf(stderr, "zlib bomb: %zu bytes inflate to %u\n", block.len, bomb);
  peer_send(p, out.data, out.len);
  free(out.data);
  free(block.data);
  free(plain.data);
  peer_hold(p);
}

static void case_goaway(peer *p) {
  uint8_t frame[32];
  size_t n = spdy_frame_encode_goaway(frame, 3, 0, 0);
  peer_send(p, frame, n);
  peer_hold(p);
}

/* Closes the TCP connection under TLS without close_notify, after part of the body. */
static void case_truncate(peer *p, int no_length) {
  static uint8_t body[5000];
  memset(body, 't', sizeof(body));
  if (p->http1) {
    static const char head[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n";
    static const char head_no_length[] =
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
    if (no_length)
      peer_send(p, head_no_length, sizeof(head_no_length) - 1);
    else
      peer_send(p, head, sizeof(head) - 1);
    peer_send(p, body, sizeof(body));
  } else {
    static const nv reply[] = {
        {":status", "200", 0}, {":version", "HTTP/1.1", 0}, {"content-length", "100000", 0}};
    obuf out = {0};
    syn_reply(p, &out, 0, reply, 3);
    data_frame(&out, p->request_id, 0, body, sizeof(body));
    peer_send(p, out.data, out.len);
    free(out.data);
  }
  usleep(100 * 1000);         /* let the bytes leave before the FIN */
  shutdown(p->fd, SHUT_RDWR); /* no SSL_shutdown: no close_notify */
  p->gone = 1;
}

/* ---- the server ---------------------------------------------------------------------- */

typedef struct server_config {
  const char *name;
  long count;
  const char *content_length;
  int no_length;
  SSL_CTX *tls;
  int http1; /* ALPN offers http/1.1 only (truncate-http1) */
  int port;
} server_config;

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg) {
  (void)ssl;
  const server_config *config = arg;
  static const unsigned char spdy[] = "\x08spdy/3.1";
  static const unsigned char http1[] = "\x08http/1.1";
  const unsigned char *want = config->http1 ? http1 : spdy;
  unsigned char *selected;
  if (SSL_select_next_proto(&selected, outlen, want, 9, in, inlen) != OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

static void serve(const server_config *config, int fd, int conn_no) {
  peer *p = calloc(1, sizeof(*p));
  if (!p) die("out of memory");
  p->fd = fd;
  p->initial_window = p->stream_window = p->session_window = 65536;
  p->http1 = config->http1;
  snprintf(p->authority, sizeof(p->authority), "127.0.0.1:%d", config->port);
  if (deflateInit2(&p->zs, 9, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY) != Z_OK ||
      deflateSetDictionary(&p->zs, spdy_hdblock_dict_v3, (uInt)spdy_hdblock_dict_v3_len) != Z_OK)
    die("zlib");
  if (config->tls) {
    p->ssl = SSL_new(config->tls);
    if (!p->ssl || SSL_set_fd(p->ssl, fd) != 1) die("SSL_new");
    if (SSL_accept(p->ssl) != 1) { /* blocking handshake */
      fprintf(stderr, "stats conn=%d handshake failed\n", conn_no);
      p->gone = 1;
    }
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  const char *c = config->name;
  if (p->gone) {
  } else if (strcmp(c, "goaway") == 0) {
    case_goaway(p);
  } else if (peer_wait_request(p) != 0) {
  } else if (strcmp(c, "push-flood") == 0) {
    case_push_flood(p, config->count);
  } else if (strcmp(c, "push-other-origin") == 0) {
    case_push_other_origin(p);
  } else if (strcmp(c, "push-names") == 0) {
    case_push_names(p);
  } else if (strcmp(c, "endless-body") == 0 || strcmp(c, "endless-body-http1") == 0) {
    case_endless_body(p, config->content_length);
  } else if (strcmp(c, "no-status") == 0) {
    case_no_status(p);
  } else if (strcmp(c, "zlib-bomb") == 0) {
    case_zlib_bomb(p);
  } else if (strcmp(c, "silent") == 0) {
    peer_hold(p);
  } else if (strcmp(c, "truncate") == 0 || strcmp(c, "truncate-http1") == 0) {
    case_truncate(p, config->no_length);
  }
  fprintf(stderr,
          "stats conn=%d sent=%llu rst=%llu refused=%llu cancel=%llu protocol_error=%llu "
          "goaway=%llu\n",
          conn_no, (unsigned long long)p->bytes_sent, (unsigned long long)p->rst_total,
          (unsigned long long)p->rst_by_status[SPEEDY_RST_REFUSED_STREAM],
          (unsigned long long)p->rst_by_status[SPEEDY_RST_CANCEL],
          (unsigned long long)p->rst_by_status[SPEEDY_RST_PROTOCOL_ERROR],
          (unsigned long long)p->goaways);
  if (p->ssl) SSL_free(p->ssl); /* no SSL_shutdown: close_notify only where a case sends it */
  deflateEnd(&p->zs);
  close(fd);
  free(p);
}

static const char *const known_cases[] = {"push-flood",
                                          "push-other-origin",
                                          "push-names",
                                          "endless-body",
                                          "no-status",
                                          "zlib-bomb",
                                          "goaway",
                                          "silent",
                                          "truncate",
                                          "truncate-http1",
                                          "endless-body-http1"};

int main(int argc, char **argv) {
  server_config config = {.count = 10000};
  const char *cert = NULL, *key = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--tls") == 0 && i + 2 < argc) {
      cert = argv[++i];
      key = argv[++i];
    } else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      config.count = strtol(argv[++i], NULL, 10);
    } else if (strcmp(argv[i], "--no-length") == 0) {
      config.no_length = 1;
    } else if (strcmp(argv[i], "--content-length") == 0 && i + 1 < argc) {
      config.content_length = argv[++i];
    } else if (!config.name && argv[i][0] != '-') {
      config.name = argv[i];
    } else {
      fprintf(stderr,
              "usage: hostile_server CASE [--tls CERT KEY] [--count N] [--content-length N] "
              "[--no-length]\n");
      return 2;
    }
  }
  int known = 0;
  for (size_t i = 0; config.name && i < sizeof(known_cases) / sizeof(known_cases[0]); i++)
    known |= strcmp(config.name, known_cases[i]) == 0;
  if (!known) {
    fprintf(stderr, "hostile_server: unknown case '%s'\n", config.name ? config.name : "");
    return 2;
  }
  config.http1 =
      strcmp(config.name, "truncate-http1") == 0 || strcmp(config.name, "endless-body-http1") == 0;
  signal(SIGPIPE, SIG_IGN);
  alarm(60);
  if (cert) {
    config.tls = SSL_CTX_new(TLS_server_method());
    if (!config.tls || SSL_CTX_use_certificate_chain_file(config.tls, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(config.tls, key, SSL_FILETYPE_PEM) != 1)
      die("cannot load the certificate or key");
    SSL_CTX_set_alpn_select_cb(config.tls, alpn_select, &config);
  }
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t addr_len = sizeof(addr);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 16) != 0 ||
      getsockname(lfd, (struct sockaddr *)&addr, &addr_len) != 0)
    die("cannot listen on 127.0.0.1");
  config.port = ntohs(addr.sin_port);
  printf("port %d\n", config.port);
  fflush(stdout);
  for (int conn_no = 1;; conn_no++) {
    struct pollfd pfd[2] = {{.fd = lfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
    if (poll(pfd, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pfd[1].revents) {
      char ch;
      if (read(0, &ch, 1) <= 0) break; /* the test is over */
    }
    if (!(pfd[0].revents & POLLIN)) continue;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) continue;
    serve(&config, fd, conn_no);
    fflush(stderr);
  }
  close(lfd);
  SSL_CTX_free(config.tls);
  return 0;
}
