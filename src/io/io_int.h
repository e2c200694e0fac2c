/* io_int.h — internals shared by the files of the I/O layer (conn.c, tls.c, listener.c).
 *
 * Not for callers: the public API is io.h. The structs live here so that the listener
 * can hand accepted sockets to the connection code and the connection code can reach the
 * TLS context's SSL_CTX.
 */
#ifndef SPEEDY_IO_INT_H
#define SPEEDY_IO_INT_H

#include <openssl/ssl.h>

#include "io.h"

/* A growable byte buffer. data may be NULL while cap is 0. */
typedef struct io_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
  size_t regrow; /* released for being idle (io_buf_release): the size it comes back at */
} io_buf;

/* Makes room for `more` bytes after len; returns 0 or UV_ENOMEM. */
int io_buf_reserve(io_buf *buf, size_t more);
int io_buf_append(io_buf *buf, const void *data, size_t len);
/* Drops the first n bytes (n <= len). */
void io_buf_drop(io_buf *buf, size_t n);
void io_buf_free(io_buf *buf);
/* Frees an empty buffer's memory, remembering its size for the next reserve (a busy
 * connection's output buffer is released after every turn that empties it; grown again by
 * doubling from 4 KiB, it took four reallocations and their copies per turn). */
void io_buf_release(io_buf *buf);

#define IO_MAX_PROTOCOL_LIST 64 /* wire-format ALPN list: 4 ids fit with room */

struct io_tls {
  SSL_CTX *ctx;
  int server;
  unsigned flags;
  uint8_t protocols[IO_MAX_PROTOCOL_LIST]; /* ALPN wire format, our preference order */
  unsigned protocols_len;
  BIO_METHOD *wire;       /* io_tls_wire_bio_new's */
  uint8_t *hello_padding; /* client: io_tls_client_pad_hello's extension body (zeros) */
  size_t hello_padding_len;
};

/* Creates the SSL of one connection (client: with SNI and host name checks for
 * server_name). Returns NULL and fills err on failure. */
SSL *io_tls_ssl_new(io_tls *tls, const char *server_name, char *err, size_t err_len);

/* A write-only BIO for an SSL's output that appends the ciphertext to out (a connection's
 * out_wire) as it is produced: no memory BIO in between to copy it out of. NULL without
 * memory. The BIO does not own out. */
BIO *io_tls_wire_bio_new(io_tls *tls, io_buf *out);

/* What a finished handshake negotiated. */
void io_tls_negotiated(SSL *ssl, io_proto *proto, io_negotiation *how);
/* 1 when the verified peer certificate of a client connection names name (a host name, or
 * an IP literal, IPv6 with or without brackets); 1 without verification (insecure). */
int io_tls_peer_names(SSL *ssl, const char *name);

/* io_conn_negotiation_hint's sentence for a client whose finished handshake chose no
 * protocol: "" when tls offered no SPDY protocol. */
const char *io_tls_no_protocol_hint(const io_tls *tls, const SSL *ssl);

/* Writes the reason of the last OpenSSL failure (the error queue, or the verify result)
 * into err; returns IO_ERR_TLS_VERIFY or IO_ERR_TLS. Clears the error queue. */
int io_tls_failure(SSL *ssl, char *err, size_t err_len);

/* Listener bookkeeping used by connections that came from it. */
void io_listener_conn_gone(io_listener *listener);
/* proxy_protocol: the head of the listener's list of connections still reading their
 * header (conn.c links and unlinks them; io_listener_close aborts them). */
io_conn **io_listener_awaiting(io_listener *listener);
/* The header was read: on_accept (unless the listener is closing: then the connection
 * is aborted), then io_conn_begin_accepted. Also the path of every connection without
 * the PROXY protocol, right after accepting. */
void io_listener_accepted(io_listener *listener, io_conn *conn);
/* A connection closed before on_accept (its header failed or never came): tells the
 * listener's on_dropped, unless the listener is closing. */
void io_listener_dropped(io_listener *listener, const char *peer, int status, const char *detail);

/* Accepts a pending connection of `server` into a new io_conn and starts it (TLS accept
 * state, or sniffing). Returns it, or NULL when accepting failed (nothing to free). The
 * caller calls io_listener_accepted next, unless config->proxy_protocol: then the
 * connection reads its header first and calls io_listener_accepted itself. */
io_conn *io_conn_accept(uv_stream_t *server, const io_config *config, io_tls *tls,
                        io_listener *listener);
/* Called by the listener after on_accept set the callbacks: reading starts (or, without
 * TLS and sniffing, the connection opens at once). */
void io_conn_begin_accepted(io_conn *conn);

#endif /* SPEEDY_IO_INT_H */
