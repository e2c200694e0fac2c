/* tls.c — TLS contexts for the I/O layer: OpenSSL 3 server and client SSL_CTX, ALPN in
 * the server's preference order, NPN for TLS 1.2 clients that offer only NPN, and the
 * client's certificate and host-name verification.
 *
 * Connections (conn.c) drive the SSL objects through memory BIOs; this file only builds
 * contexts, per-connection SSLs, and reports what a handshake negotiated or why it failed.
 *
 * Hardening (docs/security.md): TLS 1.2 at least; for TLS 1.2 only ECDHE key exchange
 * with AEAD ciphers; groups X25519 and P-256; no TLS compression, no renegotiation, no
 * 0-RTT data; record buffers released while a connection is idle; session tickets
 * encrypted with keys we rotate (one context serves every connection; workers forked
 * from it rotate in step, see the ticket ring); ALPN and NPN lists from the peer are checked whole
 * before anything is taken from them.
 */
#include <arpa/inet.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io_int.h"

static const char *const default_protocols[] = {"spdy/3.1", "spdy/3", "spdy/2", "http/1.1"};

static void set_err(char *err, size_t err_len, const char *what, const char *file) {
  if (!err || err_len == 0) return;
  unsigned long e = ERR_peek_last_error();
  char reason[160] = "";
  if (e) ERR_error_string_n(e, reason, sizeof(reason));
  snprintf(err, err_len, "%s%s%s%s%s", what, file ? " " : "", file ? file : "",
           reason[0] ? ": " : "", reason);
  ERR_clear_error();
}

/* Builds the wire-format protocol list (length-prefixed ids). */
static int set_protocols(io_tls *tls, const char *const *protocols, size_t n, char *err,
                         size_t err_len) {
  if (!protocols) {
    protocols = default_protocols;
    n = sizeof(default_protocols) / sizeof(default_protocols[0]);
  }
  tls->protocols_len = 0;
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(protocols[i]);
    if (len == 0 || len > 255 || len + 1 > IO_MAX_PROTOCOL_LIST - tls->protocols_len) {
      if (err && err_len) snprintf(err, err_len, "bad protocol list entry");
      return IO_ERR_CONFIG;
    }
    tls->protocols[tls->protocols_len++] = (uint8_t)len;
    memcpy(tls->protocols + tls->protocols_len, protocols[i], len);
    tls->protocols_len += (unsigned)len;
  }
  return 0;
}

/* A protocol list from the peer (ALPN or NPN wire format): non-empty, every entry
 * 1-255 bytes, the lengths adding up exactly. Anything else is refused whole. */
static int protocol_list_ok(const unsigned char *in, unsigned int inlen) {
  if (in == NULL || inlen == 0) return 0;
  for (unsigned j = 0; j < inlen;) {
    unsigned len = in[j];
    if (len == 0 || len > inlen - j - 1) return 0;
    j += 1u + len;
  }
  return 1;
}

/* Server ALPN: the first of our protocols that the client offers. No overlap ends the
 * handshake with no_application_protocol (RFC 7301 3.2; nginx does the same): serving
 * HTTP/1.1 instead would ignore both the client's list and ours. A client that offers no
 * ALPN at all gets HTTP/1.1 (or what NPN gives). A malformed list ends the handshake. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg) {
  (void)ssl;
  const io_tls *tls = arg;
  if (!protocol_list_ok(in, inlen)) return SSL_TLSEXT_ERR_ALERT_FATAL;
  for (unsigned i = 0; i < tls->protocols_len; i += 1u + tls->protocols[i]) {
    const uint8_t *ours = tls->protocols + i + 1;
    uint8_t ours_len = tls->protocols[i];
    for (unsigned j = 0; j < inlen;) {
      uint8_t len = in[j];
      if (len == ours_len && memcmp(in + j + 1, ours, len) == 0) {
        *out = ours;
        *outlen = ours_len;
        return SSL_TLSEXT_ERR_OK;
      }
      j += 1u + len;
    }
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL; /* OpenSSL sends no_application_protocol */
}

#ifndef OPENSSL_NO_NEXTPROTONEG
/* Server NPN: advertise our list (the client chooses). */
static int npn_advertise(SSL *ssl, const unsigned char **out, unsigned int *outlen, void *arg) {
  (void)ssl;
  const io_tls *tls = arg;
  *out = tls->protocols;
  *outlen = tls->protocols_len;
  return SSL_TLSEXT_ERR_OK;
}

/* Client NPN: pick from the server's list by our preference. */
static int npn_select(SSL *ssl, unsigned char **out, unsigned char *outlen, const unsigned char *in,
                      unsigned int inlen, void *arg) {
  (void)ssl;
  const io_tls *tls = arg;
  /* SSL_select_next_proto misreads empty lists (CVE-2024-5535): check first. */
  if (!protocol_list_ok(in, inlen)) return SSL_TLSEXT_ERR_ALERT_FATAL;
  if (SSL_select_next_proto(out, outlen, tls->protocols, tls->protocols_len, in, inlen) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_NOACK;
  return SSL_TLSEXT_ERR_OK;
}
#endif

/* ---- session tickets ---- */

/* Ticket keys: the current one encrypts, the previous one still decrypts (and asks for
 * a fresh ticket), so a rotation never throws every resumption away at once.
 *
 * Rotation is a ratchet, not fresh randomness: the keys of period e (wall-clock time /
 * TICKET_ROTATE_SECONDS) come from a secret, and the next period's secret is a hash of
 * this one (the old one is wiped). Processes forked from one context (speedyd's workers)
 * therefore rotate to the same keys at the same time without talking to each other — a
 * ticket issued by one worker resumes on any other — and a key once rotated out cannot
 * be recomputed from memory (forward secrecy for tickets older than two periods). */
#define TICKET_ROTATE_SECONDS (12 * 3600)

typedef struct ticket_key {
  unsigned char name[16];
  unsigned char aes[32];
  unsigned char hmac[32];
} ticket_key;

typedef struct ticket_ring {
  unsigned char secret[32]; /* of period `epoch` */
  int64_t epoch;
  ticket_key current, previous;
  int have_previous;
} ticket_ring;

static int64_t ticket_epoch_now(void) { return (int64_t)time(NULL) / TICKET_ROTATE_SECONDS; }

/* SHA-256(secret || label) into out (32 bytes). */
static int ticket_hash(const unsigned char secret[32], const char *label, unsigned char *out) {
  unsigned char in[32 + 16];
  size_t label_len = strlen(label);
  if (label_len > 16) return -1;
  memcpy(in, secret, 32);
  memcpy(in + 32, label, label_len);
  int ok = EVP_Digest(in, 32 + label_len, out, NULL, EVP_sha256(), NULL) == 1;
  OPENSSL_cleanse(in, sizeof(in));
  return ok ? 0 : -1;
}

static int ticket_key_derive(const unsigned char secret[32], ticket_key *key) {
  unsigned char name[32];
  if (ticket_hash(secret, "ticket name", name) != 0 ||
      ticket_hash(secret, "ticket aes", key->aes) != 0 ||
      ticket_hash(secret, "ticket hmac", key->hmac) != 0)
    return -1;
  memcpy(key->name, name, sizeof(key->name));
  return 0;
}

/* Moves the ring forward to the period of now (never backwards). */
static int ticket_ring_advance(ticket_ring *ring) {
  int64_t now = ticket_epoch_now();
  while (ring->epoch < now) {
    unsigned char next[32];
    if (ticket_hash(ring->secret, "ticket next", next) != 0) return -1;
    memcpy(ring->secret, next, sizeof(next));
    OPENSSL_cleanse(next, sizeof(next));
    ring->epoch++;
    ring->previous = ring->current;
    ring->have_previous = 1;
    if (ticket_key_derive(ring->secret, &ring->current) != 0) return -1;
  }
  return 0;
}

static int ticket_ring_index = -1;

static ticket_ring *ticket_ring_of(SSL *ssl) {
  return SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), ticket_ring_index);
}

static int ticket_mac_init(EVP_MAC_CTX *mac, const ticket_key *key) {
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, (void *)key->hmac, sizeof(key->hmac)),
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
      OSSL_PARAM_construct_end()};
  return EVP_MAC_CTX_set_params(mac, params) == 1 ? 0 : -1;
}

/* OpenSSL's ticket key callback: 1 ok, 2 ok but renew the ticket, 0 unknown key (full
 * handshake), -1 failure. */
static int ticket_key_cb(SSL *ssl, unsigned char name[16], unsigned char *iv,
                         EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *mac, int enc) {
  ticket_ring *ring = ticket_ring_of(ssl);
  if (ring == NULL || ticket_ring_advance(ring) != 0) return -1;
  if (enc) {
    const ticket_key *key = &ring->current;
    if (RAND_bytes(iv, 16) != 1) return -1;
    memcpy(name, key->name, sizeof(key->name));
    if (EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes, iv) != 1) return -1;
    return ticket_mac_init(mac, key) == 0 ? 1 : -1;
  }
  const ticket_key *key = NULL;
  int renew = 0;
  if (memcmp(name, ring->current.name, sizeof(ring->current.name)) == 0) {
    key = &ring->current;
  } else if (ring->have_previous &&
             memcmp(name, ring->previous.name, sizeof(ring->previous.name)) == 0) {
    key = &ring->previous;
    renew = 1;
  }
  if (key == NULL) return 0;
  if (EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes, iv) != 1) return -1;
  if (ticket_mac_init(mac, key) != 0) return -1;
  return renew ? 2 : 1;
}

static int tls_setup_tickets(io_tls *tls) {
  if (ticket_ring_index < 0)
    ticket_ring_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, NULL);
  if (ticket_ring_index < 0) return -1;
  ticket_ring *ring = calloc(1, sizeof(*ring));
  if (ring == NULL) return -1;
  ring->epoch = ticket_epoch_now();
  if (RAND_bytes(ring->secret, sizeof(ring->secret)) != 1 ||
      ticket_key_derive(ring->secret, &ring->current) != 0 ||
      SSL_CTX_set_ex_data(tls->ctx, ticket_ring_index, ring) != 1) {
    OPENSSL_cleanse(ring, sizeof(*ring));
    free(ring);
    return -1;
  }
  SSL_CTX_set_tlsext_ticket_key_evp_cb(tls->ctx, ticket_key_cb);
  return 0;
}

/* ---- the wire BIO: SSL output appended straight to a connection's buffer ---- */

static int wire_write(BIO *bio, const char *data, size_t len, size_t *written) {
  if (io_buf_append(BIO_get_data(bio), data, len) != 0) return 0;
  *written = len;
  return 1;
}

static long wire_ctrl(BIO *bio, int cmd, long num, void *ptr) {
  (void)bio, (void)num, (void)ptr;
  return cmd == BIO_CTRL_FLUSH ? 1 : 0; /* nothing pending: every write is taken whole */
}

static int wire_create(BIO *bio) {
  BIO_set_init(bio, 1);
  return 1;
}

static BIO_METHOD *wire_method_new(void) {
  BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "speedy wire");
  if (m == NULL) return NULL;
  if (BIO_meth_set_write_ex(m, wire_write) != 1 || BIO_meth_set_ctrl(m, wire_ctrl) != 1 ||
      BIO_meth_set_create(m, wire_create) != 1) {
    BIO_meth_free(m);
    return NULL;
  }
  return m;
}

BIO *io_tls_wire_bio_new(io_tls *tls, io_buf *out) {
  BIO *bio = BIO_new(tls->wire);
  if (bio != NULL) BIO_set_data(bio, out);
  return bio;
}

/* ---- contexts ---- */

static int tls_alloc(io_tls **out, int server, unsigned flags, const char *const *protocols,
                     size_t n, char *err, size_t err_len) {
  io_tls *tls = calloc(1, sizeof(*tls));
  if (!tls) return UV_ENOMEM;
  tls->server = server;
  tls->flags = flags;
  int rv = set_protocols(tls, protocols, n, err, err_len);
  if (rv) {
    free(tls);
    return rv;
  }
  tls->ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  tls->wire = wire_method_new();
  if (!tls->ctx || !tls->wire) {
    set_err(err, err_len, "cannot create a TLS context", NULL);
    io_tls_del(tls);
    return UV_ENOMEM;
  }
  SSL_CTX_set_min_proto_version(tls->ctx, TLS1_2_VERSION);
  if (flags & IO_TLS_MAX_1_2) SSL_CTX_set_max_proto_version(tls->ctx, TLS1_2_VERSION);
  /* Compression leaks secrets (CRIME); renegotiation is a DoS lever we do not need
   * (OpenSSL 3 refuses client-initiated renegotiation unless told to allow it). */
  SSL_CTX_set_options(tls->ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  SSL_CTX_clear_options(tls->ctx, SSL_OP_ALLOW_CLIENT_RENEGOTIATION);
  SSL_CTX_set_mode(tls->ctx, SSL_MODE_RELEASE_BUFFERS);
  /* TLS 1.2: forward secrecy and AEAD only (TLS 1.3's suites are all AEAD). */
  if (SSL_CTX_set_cipher_list(tls->ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1 ||
      SSL_CTX_set1_groups_list(tls->ctx, "X25519:P-256") != 1) {
    set_err(err, err_len, "cannot restrict ciphers and groups", NULL);
    io_tls_del(tls);
    return IO_ERR_CONFIG;
  }
  /* 0-RTT data can be replayed: never accepted (OpenSSL's default, stated). */
  SSL_CTX_set_max_early_data(tls->ctx, 0);
  SSL_CTX_set_recv_max_early_data(tls->ctx, 0);
  if (server) {
    SSL_CTX_set_options(tls->ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    if (tls_setup_tickets(tls) != 0) {
      set_err(err, err_len, "cannot set up session ticket keys", NULL);
      io_tls_del(tls);
      return UV_ENOMEM;
    }
  }
  *out = tls;
  return 0;
}

int io_tls_server_new(io_tls **out, const char *cert_file, const char *key_file,
                      const char *const *protocols, size_t n_protocols, unsigned flags, char *err,
                      size_t err_len) {
  io_tls *tls;
  int rv = tls_alloc(&tls, 1, flags, protocols, n_protocols, err, err_len);
  if (rv) return rv;
  if (SSL_CTX_use_certificate_chain_file(tls->ctx, cert_file) != 1) {
    set_err(err, err_len, "cannot load certificate", cert_file);
    io_tls_del(tls);
    return IO_ERR_CONFIG;
  }
  if (SSL_CTX_use_PrivateKey_file(tls->ctx, key_file, SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(tls->ctx) != 1) {
    set_err(err, err_len, "cannot load key", key_file);
    io_tls_del(tls);
    return IO_ERR_CONFIG;
  }
  if (flags & IO_TLS_NO_RESUMPTION) {
    /* Every connection pays a full handshake: no TLS 1.2 tickets or session IDs, no
     * TLS 1.3 tickets. */
    SSL_CTX_set_options(tls->ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(tls->ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_num_tickets(tls->ctx, 0);
  }
  if (!(flags & IO_TLS_NO_ALPN)) SSL_CTX_set_alpn_select_cb(tls->ctx, alpn_select, tls);
#ifndef OPENSSL_NO_NEXTPROTONEG
  if (!(flags & IO_TLS_NO_NPN)) SSL_CTX_set_next_protos_advertised_cb(tls->ctx, npn_advertise, tls);
#endif
  *out = tls;
  return 0;
}

int io_tls_client_new(io_tls **out, const char *ca_file, const char *const *protocols,
                      size_t n_protocols, unsigned flags, char *err, size_t err_len) {
  io_tls *tls;
  int rv = tls_alloc(&tls, 0, flags, protocols, n_protocols, err, err_len);
  if (rv) return rv;
  if (!(flags & IO_TLS_INSECURE)) {
    int ok = ca_file ? SSL_CTX_load_verify_locations(tls->ctx, ca_file, NULL)
                     : SSL_CTX_set_default_verify_paths(tls->ctx);
    if (ok != 1) {
      set_err(err, err_len, "cannot load CA certificates", ca_file);
      io_tls_del(tls);
      return IO_ERR_CONFIG;
    }
    SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_PEER, NULL);
  } else {
    SSL_CTX_set_verify(tls->ctx, SSL_VERIFY_NONE, NULL);
  }
  /* SSL_CTX_set_alpn_protos returns 0 on success (unlike most of OpenSSL). */
  if (!(flags & IO_TLS_NO_ALPN) &&
      SSL_CTX_set_alpn_protos(tls->ctx, tls->protocols, tls->protocols_len) != 0) {
    set_err(err, err_len, "cannot set ALPN protocols", NULL);
    io_tls_del(tls);
    return IO_ERR_CONFIG;
  }
#ifndef OPENSSL_NO_NEXTPROTONEG
  if (!(flags & IO_TLS_NO_NPN)) SSL_CTX_set_next_proto_select_cb(tls->ctx, npn_select, tls);
#endif
  *out = tls;
  return 0;
}

/* A GREASE extension type (RFC 8701 2): reserved, never assigned, ignored by servers. */
#define HELLO_PAD_TYPE 0x3a3a

static int hello_pad_add(SSL *ssl, unsigned type, unsigned context, const unsigned char **out,
                         size_t *outlen, X509 *x, size_t chainidx, int *alert, void *arg) {
  (void)ssl, (void)type, (void)context, (void)x, (void)chainidx, (void)alert;
  const io_tls *tls = arg;
  *out = tls->hello_padding;
  *outlen = tls->hello_padding_len;
  return 1;
}

int io_tls_client_pad_hello(io_tls *tls, size_t octets) {
  /* octets counts the extension's type and length too */
  if (tls == NULL || tls->server || tls->hello_padding != NULL || octets < 4 ||
      octets > IO_TLS_HELLO_PAD_MAX)
    return UV_EINVAL;
  tls->hello_padding_len = octets - 4;
  tls->hello_padding = calloc(1, tls->hello_padding_len + 1);
  if (tls->hello_padding == NULL) return UV_ENOMEM;
  if (SSL_CTX_add_custom_ext(tls->ctx, HELLO_PAD_TYPE, SSL_EXT_CLIENT_HELLO, hello_pad_add, NULL,
                             tls, NULL, NULL) != 1) {
    free(tls->hello_padding);
    tls->hello_padding = NULL;
    return UV_EINVAL;
  }
  return 0;
}

void io_tls_del(io_tls *tls) {
  if (!tls) return;
  if (tls->ctx && ticket_ring_index >= 0) {
    ticket_ring *ring = SSL_CTX_get_ex_data(tls->ctx, ticket_ring_index);
    if (ring != NULL) {
      OPENSSL_cleanse(ring, sizeof(*ring));
      free(ring);
    }
  }
  SSL_CTX_free(tls->ctx);
  BIO_meth_free(tls->wire);
  free(tls->hello_padding);
  free(tls);
}

static int is_ip_literal(const char *name) {
  unsigned char addr[16];
  return inet_pton(AF_INET, name, addr) == 1 || inet_pton(AF_INET6, name, addr) == 1;
}

SSL *io_tls_ssl_new(io_tls *tls, const char *server_name, char *err, size_t err_len) {
  ERR_clear_error();
  SSL *ssl = SSL_new(tls->ctx);
  if (!ssl) {
    set_err(err, err_len, "cannot create a TLS connection", NULL);
    return NULL;
  }
  if (tls->server) return ssl;
  if (!server_name) { /* nothing to check the certificate against: only when insecure */
    if (tls->flags & IO_TLS_INSECURE) return ssl;
    set_err(err, err_len, "a verified TLS connection needs the server's name", NULL);
    SSL_free(ssl);
    return NULL;
  }
  int ok = 1;
  if (is_ip_literal(server_name)) {
    if (!(tls->flags & IO_TLS_INSECURE))
      ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), server_name) == 1;
  } else {
    ok = SSL_set_tlsext_host_name(ssl, server_name) == 1;
    if (ok && !(tls->flags & IO_TLS_INSECURE)) {
      /* The same wildcard rule as io_tls_peer_names: "*" only as a whole left label. */
      SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      ok = SSL_set1_host(ssl, server_name) == 1;
    }
  }
  if (!ok) {
    set_err(err, err_len, "bad server name", server_name);
    SSL_free(ssl);
    return NULL;
  }
  return ssl;
}

int io_tls_peer_names(SSL *ssl, const char *name) {
  if (!(SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER)) return 1; /* nothing is checked */
  if (SSL_get_verify_result(ssl) != X509_V_OK) return 0;
  X509 *cert = SSL_get0_peer_certificate(ssl);
  if (cert == NULL) return 0;
  char literal[64];
  size_t len = strlen(name);
  if (len > 2 && name[0] == '[' && name[len - 1] == ']' && len - 2 < sizeof literal) {
    memcpy(literal, name + 1, len - 2); /* a bracketed IPv6 literal, as a Host header has it */
    literal[len - 2] = '\0';
    name = literal;
  }
  if (is_ip_literal(name)) return X509_check_ip_asc(cert, name, 0) == 1;
  return X509_check_host(cert, name, 0, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS, NULL) == 1;
}

void io_tls_negotiated(SSL *ssl, io_proto *proto, io_negotiation *how) {
  const unsigned char *name = NULL;
  unsigned len = 0;
  SSL_get0_alpn_selected(ssl, &name, &len);
  if (name && len) {
    *proto = io_proto_from_name((const char *)name, len);
    *how = IO_NEG_ALPN;
    return;
  }
#ifndef OPENSSL_NO_NEXTPROTONEG
  SSL_get0_next_proto_negotiated(ssl, &name, &len);
  if (name && len) {
    *proto = io_proto_from_name((const char *)name, len);
    *how = IO_NEG_NPN;
    return;
  }
#endif
  *proto = IO_PROTO_HTTP1;
  *how = IO_NEG_TLS_DEFAULT;
}

const char *io_tls_no_protocol_hint(const io_tls *tls, const SSL *ssl) {
  int spdy_offered = 0;
  for (unsigned i = 0; i < tls->protocols_len; i += 1u + tls->protocols[i])
    if (tls->protocols[i] >= 5 && memcmp(tls->protocols + i + 1, "spdy/", 5) == 0) spdy_offered = 1;
  if (tls->server || !spdy_offered) return ""; /* HTTP/1.1 by default is what was asked for */
  int npn_offered = !(tls->flags & IO_TLS_NO_NPN) && SSL_version(ssl) <= TLS1_2_VERSION;
#ifdef OPENSSL_NO_NEXTPROTONEG
  npn_offered = 0;
#endif
  /* NPN exists only up to TLS 1.2: a server that speaks SPDY by NPN alone cannot say so
   * in a TLS 1.3 handshake, and --npn (NPN only, TLS 1.2 at most) is what reaches it. */
  if (!npn_offered)
    return "the server chose no protocol by ALPN or NPN; it may speak SPDY only over NPN: try "
           "--npn";
  return "the server chose no protocol by ALPN or NPN: it may not speak SPDY";
}

int io_tls_failure(SSL *ssl, char *err, size_t err_len) {
  /* The verify result means something only where we asked for verification. */
  long verify =
      (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) ? SSL_get_verify_result(ssl) : X509_V_OK;
  int status = IO_ERR_TLS;
  unsigned long e = ERR_peek_last_error();
  if (verify != X509_V_OK) {
    status = IO_ERR_TLS_VERIFY;
    snprintf(err, err_len, "certificate verify failed: %s", X509_verify_cert_error_string(verify));
  } else if (e && ERR_GET_REASON(e) == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL) {
    status = IO_ERR_NO_PROTOCOL; /* the server's alert (RFC 7301 3.2) */
    snprintf(err, err_len, "the server speaks none of the protocols offered by ALPN");
  } else if (e) {
    char reason[200];
    ERR_error_string_n(e, reason, sizeof(reason));
    snprintf(err, err_len, "%s", reason);
  } else {
    snprintf(err, err_len, "TLS connection failed");
  }
  ERR_clear_error();
  return status;
}
