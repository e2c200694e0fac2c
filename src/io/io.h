/* io.h — the shared I/O layer: TCP connections over libuv, TLS through memory BIOs,
 * protocol negotiation, coalesced writes, backpressure, timeouts and listeners.
 *
 * Used by speedyd, `speedy get`, and later the load generator and the lab. It knows
 * nothing of SPDY frames or HTTP: it moves plaintext bytes between a peer and a protocol
 * layer (libspeedy's session, or an HTTP/1.1 parser) and tells that layer which protocol
 * was negotiated and how.
 *
 * Model (libuv style)
 * - Everything runs on one uv_loop_t, on the loop's thread. No function is thread-safe.
 * - An io_conn is owned by this layer. It lives from io_conn_connect / the listener's
 *   on_accept until on_close returns; after on_close the pointer is invalid. Callers
 *   close with io_conn_close (graceful) or io_conn_abort (at once); both may be called
 *   from any callback, more than once, and on_close still fires exactly once, from the
 *   loop (never from inside io_conn_close itself).
 * - Output is pulled, like libspeedy's: the protocol layer asks io_conn_room() how many
 *   bytes the socket can take now, appends at most about that many with io_conn_write(),
 *   and calls io_conn_want_writable() when it has more; on_writable fires once room is
 *   open again. Appended bytes are coalesced and written once per loop turn (a uv_idle
 *   handle flushes them; TLS records are cut from the coalesced plaintext).
 * - Callbacks of one connection never nest: io_* calls made inside a callback never call
 *   back synchronously.
 *
 * Errors: functions return 0 or a negative code: a libuv error (UV_E*, -errno style) or
 * one of IO_ERR_* below. io_strerror() describes any of them.
 */
#ifndef SPEEDY_IO_H
#define SPEEDY_IO_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

/* Leaves a large local buffer out of -ftrivial-auto-var-init=zero (cmake/Hardening.cmake)
 * where it is written before it is read: zeroing kilobytes on every request or read
 * showed in the server's profiles. For the programs' hot paths only. */
#if defined(__has_attribute)
#if __has_attribute(uninitialized)
#define IO_UNINITIALIZED __attribute__((uninitialized))
#endif
#endif
#ifndef IO_UNINITIALIZED
#define IO_UNINITIALIZED
#endif

/* Errors of this layer; apart from libuv's range (which ends at -4095 on Unix). */
enum io_error {
  IO_ERR_TLS = -5001,               /* the TLS handshake or a TLS record failed */
  IO_ERR_TLS_VERIFY = -5002,        /* the peer's certificate or host name did not verify */
  IO_ERR_NO_PROTOCOL = -5003,       /* negotiation found no protocol both ends speak */
  IO_ERR_HANDSHAKE_TIMEOUT = -5004, /* connect + TLS handshake (or sniffing) took too long */
  IO_ERR_IDLE_TIMEOUT = -5005,      /* no bytes moved for idle_timeout_ms */
  IO_ERR_CONFIG = -5006,            /* a certificate, key or CA file could not be loaded */
  IO_ERR_PEER_TLS = -5007, /* plaintext client: the server's first bytes are a TLS record (an
                              alert or a handshake): it expects TLS on that port */
  IO_ERR_PROXY = -5008     /* a proxy_protocol listener's connection did not begin with a
                              valid PROXY protocol header (io_conn_error_detail says why) */
};

/* Returns a sentence for a libuv or IO_ERR_* code (never NULL). */
const char *io_strerror(int error);

/* The application protocol a connection speaks. Values match speedy_protocol for SPDY. */
typedef enum io_proto {
  IO_PROTO_UNKNOWN = 0, /* not decided yet (before on_open) */
  IO_PROTO_HTTP1 = 1,   /* http/1.1 */
  IO_PROTO_SPDY2 = 2,
  IO_PROTO_SPDY3 = 3,
  IO_PROTO_SPDY3_1 = 31,
  IO_PROTO_H2 = 20 /* HTTP/2: "h2" by ALPN, or cleartext with prior knowledge (h2c) */
} io_proto;

/* How the protocol was chosen. */
typedef enum io_negotiation {
  IO_NEG_NONE = 0,        /* not decided yet */
  IO_NEG_ALPN = 1,        /* TLS ALPN */
  IO_NEG_NPN = 2,         /* TLS NPN (TLS 1.2 clients that offer only NPN) */
  IO_NEG_TLS_DEFAULT = 3, /* TLS without ALPN or NPN: HTTP/1.1 by default */
  IO_NEG_PLAINTEXT = 4,   /* no TLS: a client's choice, or a server's sniff of the first bytes */
} io_negotiation;

/* "http/1.1", "spdy/2", "spdy/3", "spdy/3.1", "h2" (the ALPN ids), or "unknown". */
const char *io_proto_name(io_proto proto);
/* Parses an ALPN/NPN id; returns IO_PROTO_UNKNOWN when it is none of ours. */
io_proto io_proto_from_name(const char *name, size_t len);
/* "ALPN", "NPN", "TLS without ALPN/NPN", "plaintext", "none". */
const char *io_negotiation_name(io_negotiation how);

/* Plaintext server: decides the protocol from the first bytes of a connection
 * (libspeedy's speedy_detect_h2_preface and speedy_detect_spdy_version). Returns 1 and sets *out
 * when decided (HTTP/2 for its client preface, SPDY/2, SPDY/3 as v3_protocol — IO_PROTO_SPDY3 or
 * IO_PROTO_SPDY3_1, since both carry version 3 — or HTTP/1.1 for anything else), 0 when more bytes
 * are needed. */
int io_sniff_protocol(const uint8_t *bytes, size_t len, io_proto v3_protocol, io_proto *out);

/* ---- Configuration ------------------------------------------------------------------ */

/* One read(2) takes up to this much: a client reading 100 KiB answers at 2.5 GB/s made
 * 160,000 reads a second with 16 KiB and spent a fifth of its time on them
 * (docs/performance.md, "speedy bench's reads"); one buffer per thread, not per
 * connection. */
#define IO_READ_MAX 262144u
/* io_config.bulk_rtt_us: how much more a connection of a short round trip may queue. */
#define IO_BULK_FACTOR 4u

/* Per-connection settings, copied by io_conn_connect and io_listener_new. Fill with
 * io_config_init, then change fields. A time of 0 means "no timeout". */
typedef struct io_config {
  uint32_t handshake_timeout_ms; /* connect + TLS handshake / plaintext sniff; 10,000 */
  uint32_t idle_timeout_ms;      /* no bytes read or written; 120,000 (change at run
                                    time with io_conn_set_idle_timeout) */
  uint32_t close_linger_ms;      /* after our FIN, wait this long for the peer's EOF
                                    before closing (so unread input cannot turn into a
                                    RST that destroys our last bytes); 2,000 */
  uint32_t out_high_water;       /* io_conn_room() is this minus unsent bytes; 65,536 */
  uint32_t read_pause_bytes;     /* stop reading while unsent output >= this; 262,144 */
  uint32_t notsent_lowat;        /* TCP_NOTSENT_LOWAT; 16,384; 0: kernel default */
  uint32_t bulk_rtt_us;          /* a connection whose handshake took less than this
                                    round trip (TCP_INFO; loopback, a LAN) gets
                                    IO_BULK_FACTOR times out_high_water, notsent_lowat
                                    and read_pause_bytes: nothing there waits long behind
                                    queued bytes, and fewer, larger writes serve it
                                    faster. 1,000 (1 ms); 0: never */
  uint32_t read_size;            /* most bytes per read(2), 1,024 to IO_READ_MAX; the
                                    most by default. Smaller: more, shorter reads (h2load
                                    reads 8,192: speedy bench --read-size) */
  uint32_t tls_young_bytes;      /* first bytes sent in small TLS records; 65,536 */
  uint32_t tls_young_record;     /* plaintext per record while young; 1,360 */
  uint32_t max_connections;      /* listener: live connections; beyond it a new one is
                                    accepted and closed at once; 10,000; 0: no limit */
  io_proto plaintext_v3;         /* what a plaintext version-3 client gets; SPDY3_1 */
  int sniff_plaintext;           /* server without TLS: sniff the protocol (1, default)
                                    or report IO_PROTO_UNKNOWN and let the caller decide */
  int proxy_protocol;            /* listener: every connection begins with a PROXY protocol
                                    header, v1 or v2 (HAProxy's; sent by L4 balancers),
                                    read before TLS or the sniff and within the handshake
                                    timeout; io_conn_peer is then the client it names.
                                    Only for ports that trusted balancers alone can reach:
                                    the header is believed. 0 (default): none */
} io_config;

void io_config_init(io_config *config);

/* ---- TLS contexts ------------------------------------------------------------------- */

/* A TLS configuration (an SSL_CTX plus our protocol list), shared by many connections.
 * Freed with io_tls_del after every connection and listener using it is closed. */
typedef struct io_tls io_tls;

/* Flags for io_tls_client_new / io_tls_server_new. */
#define IO_TLS_INSECURE 0x01      /* client: do not verify the certificate or host name */
#define IO_TLS_NO_ALPN 0x02       /* do not offer / accept ALPN */
#define IO_TLS_NO_NPN 0x04        /* do not offer / advertise NPN */
#define IO_TLS_MAX_1_2 0x08       /* cap at TLS 1.2 (NPN needs it) */
#define IO_TLS_NO_RESUMPTION 0x10 /* server: no tickets, no session cache (full handshakes) */

/* Server context from PEM files. protocols: the server's preference order (ALPN ids,
 * NULL for the default "spdy/3.1", "spdy/3", "spdy/2", "http/1.1"). ALPN picks the first
 * of ours the client offers (none: the handshake ends with no_application_protocol, which
 * a client of ours reports as IO_ERR_NO_PROTOCOL); NPN advertises the list. On failure
 * returns IO_ERR_CONFIG
 * (or UV_ENOMEM) and writes a one-line reason into err (err_len bytes, may be 0). */
int io_tls_server_new(io_tls **out, const char *cert_file, const char *key_file,
                      const char *const *protocols, size_t n_protocols, unsigned flags, char *err,
                      size_t err_len);

/* Client context. ca_file: PEM bundle to trust instead of the system store (NULL: system
 * store). protocols: offered by ALPN and accepted by NPN, in preference order (NULL: the
 * same default as the server). Verification of the chain and the host name is on unless
 * IO_TLS_INSECURE. Errors as io_tls_server_new. */
int io_tls_client_new(io_tls **out, const char *ca_file, const char *const *protocols,
                      size_t n_protocols, unsigned flags, char *err, size_t err_len);

/* Adds `octets` (4 to IO_TLS_HELLO_PAD_MAX) to every ClientHello of this client context:
 * an extension of a reserved type servers ignore (GREASE, RFC 8701) whose body is that
 * many zeros less its 4-octet header. For a client whose first flight should weigh what a
 * browser's does (one with a post-quantum key share sends about 2 KB; ours is about 300
 * octets), where the uplink is slow. Call before the first connection. Returns 0,
 * UV_EINVAL or UV_ENOMEM. */
#define IO_TLS_HELLO_PAD_MAX 8192u
int io_tls_client_pad_hello(io_tls *tls, size_t octets);

void io_tls_del(io_tls *tls);

/* ---- Connections -------------------------------------------------------------------- */

typedef struct io_conn io_conn;

/* Callbacks; every one may be NULL except on_read. user is the connection's user data. */
typedef struct io_conn_callbacks {
  /* Connected, handshaken and negotiated: io_conn_protocol() is known (a plaintext
   * client's is IO_PROTO_UNKNOWN: it speaks what it chose). Bytes written earlier wait
   * for this; io_conn_room() is 0 before it. */
  void (*on_open)(io_conn *conn, void *user);
  /* Plaintext bytes from the peer; valid during the call only. Returns how many it
   * consumed: when fewer than len, reading pauses as with io_conn_pause_read(conn, 1)
   * and the rest is delivered again, first, after io_conn_pause_read(conn, 0) (libspeedy's
   * SPEEDY_ERR_PAUSE maps onto this). Not called while paused or after io_conn_close. */
  size_t (*on_read)(io_conn *conn, const uint8_t *data, size_t len, void *user);
  /* The peer finished sending (TCP FIN or TLS close_notify). NULL: the connection is
   * closed gracefully (pending output is still sent) and on_close reports UV_EOF. */
  void (*on_eof)(io_conn *conn, void *user);
  /* Room opened after io_conn_want_writable: append up to `room` bytes now. Fires once
   * per request; ask again to be called again. */
  void (*on_writable)(io_conn *conn, size_t room, void *user);
  /* Last event. status: 0 after io_conn_close and a clean shutdown, UV_EOF when the peer
   * ended the connection, otherwise the error that ended it (IO_ERR_*, UV_ECONNRESET,
   * UV_ECONNREFUSED ...). The connection is freed when this returns. */
  void (*on_close)(io_conn *conn, int status, void *user);
} io_conn_callbacks;

/* Starts a client connection to addr (IPv4 or IPv6). tls NULL: plaintext (a plaintext
 * connection whose first bytes from the server are a TLS record ends at once with
 * IO_ERR_PEER_TLS: the port expects TLS). server_name:
 * for TLS, sent as SNI (unless it is an IP literal) and verified against the certificate
 * (a host name or an IP literal); may be NULL only with IO_TLS_INSECURE. callbacks and
 * config are copied (config NULL: defaults). On success *out is the connection and every
 * outcome, failure to connect included, ends in on_close; on error nothing was created. */
int io_conn_connect(io_conn **out, uv_loop_t *loop, const struct sockaddr *addr, io_tls *tls,
                    const char *server_name, const io_config *config,
                    const io_conn_callbacks *callbacks, void *user);

/* Replaces callbacks and user data (a server does this in on_accept). */
void io_conn_set_callbacks(io_conn *conn, const io_conn_callbacks *callbacks, void *user);
void *io_conn_user(const io_conn *conn);

/* Appends bytes to the output buffer (copied). They are sent at the end of this loop turn
 * (TLS-encrypted when the connection has TLS). Returns 0, UV_ENOMEM, or UV_EPIPE once the
 * connection is closing. Writing more than io_conn_room() is allowed but is what the room
 * exists to prevent. */
int io_conn_write(io_conn *conn, const void *data, size_t len);

/* The largest TLS record's plaintext (RFC 8446 5.1): a frame header and payload that fit
 * in it can leave as one record (io_conn_write_framed). */
#define IO_TLS_RECORD_MAX 16384u

/* io_conn_write(head) then io_conn_write(body), for a frame whose payload is memory the
 * caller lends: the head_len octets just before body must be writable memory of the
 * caller's too. Over TLS, when head and body fit in one record, head is placed in those
 * octets for the moment of encryption and what was there is put back before the call
 * returns: the frame leaves as one record, its payload not copied. */
int io_conn_write_framed(io_conn *conn, const void *head, size_t head_len, uint8_t *body,
                         size_t body_len);

/* Queues length bytes of the file fd from offset, sent after the bytes already appended
 * and before any appended later, with sendfile(2) (no copy through user space). Takes
 * ownership of fd, also on error (pass a dup() of a descriptor you keep). Plaintext
 * connections only; one range at a time. The range counts as unsent output (room,
 * backpressure). If the file ends before length bytes, the connection is aborted with
 * UV_EIO (the length promised to the peer cannot be kept). Returns 0, UV_ENOTSUP (TLS:
 * write the bytes instead), UV_EBUSY (a range is still queued: write the bytes, or wait
 * for io_conn_unsent() to drop), UV_EPIPE once closing, or UV_EINVAL. */
int io_conn_sendfile(io_conn *conn, int fd, uint64_t offset, uint64_t length);

/* How many bytes the protocol layer should produce now: out_high_water minus output not
 * yet taken by the kernel (plaintext waiting + ciphertext waiting or in flight). 0 until
 * on_open and once closing. */
size_t io_conn_room(const io_conn *conn);
/* 1 when the connection's round trip at the handshake was under io_config.bulk_rtt_us, so
 * that it queues IO_BULK_FACTOR times more (set when it connects or is accepted). */
int io_conn_is_bulk(const io_conn *conn);

/* Asks for on_writable at the end of this loop turn, or as soon as room > 0. */
void io_conn_want_writable(io_conn *conn);

/* Unsent output: bytes appended but not yet taken by the kernel. */
size_t io_conn_unsent(const io_conn *conn);

/* Pauses (1) or resumes (0) delivery of input. Independent of the automatic pause
 * while unsent output is at or above read_pause_bytes; reading happens when neither
 * holds. Input already decrypted is delivered after resuming. */
void io_conn_pause_read(io_conn *conn, int pause);

/* Changes the idle timeout (0: none) and restarts it. A server may use a short value
 * until the first request's headers are complete, then the long one. */
void io_conn_set_idle_timeout(io_conn *conn, uint32_t ms);

/* Graceful close: stop reading, send what is pending, TLS close_notify (best effort),
 * TCP FIN, wait up to close_linger_ms for the peer's EOF, close. on_close(status 0). */
void io_conn_close(io_conn *conn);
/* Immediate close: pending output is dropped. on_close reports `status`. */
void io_conn_abort(io_conn *conn, int status);
/* For a server's on_accept that refuses a connection but would rather not hand a
 * reconnecting flooder a quick answer: the connection is neither read nor answered, its
 * receive buffer is shrunk to the minimum (the peer's writes soon block) and it is
 * aborted after ms (IO_ERR_HANDSHAKE_TIMEOUT, reported to on_close). */
void io_conn_hold_then_abort(io_conn *conn, uint32_t ms);

/* After on_open: the protocol and how it was chosen. */
io_proto io_conn_protocol(const io_conn *conn);
io_negotiation io_conn_negotiation(const io_conn *conn);
/* 1 when the peer ended its side properly: with TLS, a close_notify alert; without, a
 * TCP FIN. 0 before that, and when a TLS peer's FIN came without close_notify — then a
 * body delimited by the connection's end may have been cut short by an attacker.
 * Valid in on_eof and on_close. */
int io_conn_peer_closed_cleanly(const io_conn *conn);

/* 1 when the connection uses TLS. */
int io_conn_is_tls(const io_conn *conn);
/* 1 while a client connection's TCP handshake is in progress (before its TLS one). */
int io_conn_is_connecting(const io_conn *conn);
/* After on_open of a client connection: 1 when the peer's verified certificate also names
 * host (another origin may then use the connection: RFC 9113 9.1.1, connection reuse),
 * 0 when it does not. Plaintext: 1 (the address alone decides); no verification
 * (IO_TLS_INSECURE): 1. */
int io_conn_peer_names(const io_conn *conn, const char *host);
/* A client's TLS handshake that chose no protocol (IO_NEG_TLS_DEFAULT) while SPDY was
 * offered: one sentence saying so and what to try, for the error a failure of such a
 * connection reports ("the server chose no protocol by ALPN or NPN; it may speak SPDY only
 * over NPN: try --npn" when NPN could not be offered, as with TLS 1.3). "" otherwise (any
 * other negotiation, a server, plaintext, or only http/1.1 offered). Valid after on_open,
 * during on_close too. */
const char *io_conn_negotiation_hint(const io_conn *conn);
/* "TLSv1.3", "TLSv1.2" ... or "none". Valid while the connection lives. */
const char *io_conn_tls_version(const io_conn *conn);
/* A detail for the last TLS failure ("certificate verify failed: self-signed
 * certificate"), or "" when none. Valid during on_close. */
const char *io_conn_error_detail(const io_conn *conn);
/* The peer's address as "1.2.3.4:port" or "[::1]:port" (escaped, bounded). On a
 * proxy_protocol listener, the client's address from the PROXY header (TCP over IPv4 or
 * IPv6); the socket's own peer when the header names none (v1 UNKNOWN, v2 LOCAL ...). */
const char *io_conn_peer(const io_conn *conn);
/* Bytes of plaintext read from and written to the peer so far. */
uint64_t io_conn_bytes_in(const io_conn *conn);
uint64_t io_conn_bytes_out(const io_conn *conn);

/* ---- Listeners ---------------------------------------------------------------------- */

typedef struct io_listener io_listener;

/* A new connection: set its callbacks with io_conn_set_callbacks now (otherwise it is
 * aborted). on_open follows once the TLS handshake / plaintext sniff is done. With
 * proxy_protocol, called once the PROXY header is read (io_conn_peer is the client). */
typedef void (*io_on_accept_fn)(io_listener *listener, io_conn *conn, void *user);

/* proxy_protocol: a connection that ended before on_accept — its PROXY header was
 * malformed (IO_ERR_PROXY), late (IO_ERR_HANDSHAKE_TIMEOUT), cut short (IO_ERR_PROXY) or
 * never sent (UV_EOF: the peer closed without a byte, as a balancer's TCP check does).
 * peer: the socket's peer (the balancer); detail: why, or "". Not called for the
 * connections io_listener_close ends. */
typedef void (*io_on_dropped_fn)(io_listener *listener, const char *peer, int status,
                                 const char *detail, void *user);

/* Listens on addr:port ("0.0.0.0", "::", "127.0.0.1", "::1"; port 0 picks a free port,
 * see io_listener_port). SO_REUSEADDR is set; "::" also accepts IPv4 where the system
 * allows. tls NULL: plaintext (protocol sniffed if config->sniff_plaintext). With tls, a
 * client whose first bytes cannot begin a TLS handshake (SPDY or HTTP sent in plaintext)
 * is answered at once with a fatal TLS alert and closed (on_close: IO_ERR_TLS, the detail
 * says why) instead of waiting out the handshake timeout for a "record" that never comes;
 * our clients recognise the alert (IO_ERR_PEER_TLS). The config is copied and applies to
 * every accepted connection. Returns 0 or an error (UV_EADDRINUSE,
 * UV_EINVAL for a bad address ...). */
int io_listener_new(io_listener **out, uv_loop_t *loop, const char *addr, int port, io_tls *tls,
                    const io_config *config, io_on_accept_fn on_accept, void *user);

/* Several processes on one port (a server with workers): io_listen_socket_new makes a
 * TCP socket bound to addr:port with SO_REUSEADDR and SO_REUSEPORT but NOT listening (a
 * bound socket that does not listen is given no connections). Make one per worker: the
 * first on the configured port (0 picks a free one, *port_out says which), the others on
 * the port the first got. Each worker then passes its socket to io_listener_open, which
 * listens on it; the kernel spreads new connections over the listening sockets of the
 * group, so no lock is shared. The socket is non-blocking and close-on-exec. A port on
 * which another socket already listens is refused (UV_EADDRINUSE), even when that one
 * set SO_REUSEPORT too: a second server must not silently share the first one's port.
 * Returns 0 with *fd_out, or a UV_E* error (nothing left open). */
int io_listen_socket_new(const char *addr, int port, int *fd_out, int *port_out);

/* Like io_listener_new over an already bound socket (io_listen_socket_new): listens on
 * fd. Takes ownership of fd, also on error (the listener closes it). */
int io_listener_open(io_listener **out, uv_loop_t *loop, int fd, io_tls *tls,
                     const io_config *config, io_on_accept_fn on_accept, void *user);

/* Sets the callback for connections dropped before on_accept (see io_on_dropped_fn);
 * it gets the listener's user data. NULL (the default): they go silently. */
void io_listener_set_on_dropped(io_listener *listener, io_on_dropped_fn on_dropped);

/* The bound port (useful after port 0). */
int io_listener_port(const io_listener *listener);
/* Connections alive now, and connections refused because of max_connections. */
uint32_t io_listener_connections(const io_listener *listener);
uint64_t io_listener_refused(const io_listener *listener);

/* Stops accepting and frees the listener (its handle closes on the loop). Connections
 * already accepted are unaffected and outlive it. */
void io_listener_close(io_listener *listener);

#endif /* SPEEDY_IO_H */
