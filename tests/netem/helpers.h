/* helpers.h — traffic for the link emulator's validation tests: sockets on either side of
 * a link, a checksummed bulk TCP transfer with timestamps, a UDP echo and probe, UDP
 * streams, and the skip/fail conventions (exit 77 = skipped, 1 = failed).
 */
#ifndef SPEEDY_NETEM_TEST_HELPERS_H
#define SPEEDY_NETEM_TEST_HELPERS_H

#include <stdbool.h>
#include <stdint.h>

#include "netem.h"

#define TEST_SKIP 77

/* Exits 77 with a message if this machine cannot run the tests (not root, no TUN device,
 * no `ip netns`). */
void test_require_system(const char *test);

/* printf-style failure message, then exit 1 (callers stop their links first). */
_Noreturn void test_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Starts a link or fails the test. */
netem_link *test_link_start(const netem_config *config);

/* The two ends of a path: the emulator's link, or the kernel comparison (veth + router). */
typedef struct test_path {
  int ns_fd[2]; /* indexed by netem_side */
  int home_fd;  /* the namespace to return to */
  char client_ip[16], server_ip[16];
} test_path;

/* A path over a link (valid while the link runs; release with test_path_close). */
test_path test_path_of_link(netem_link *link);
/* A path between two named namespaces. */
test_path test_path_of_ns(const char *client_ns, const char *server_ns, const char *client_ip,
                          const char *server_ip);
void test_path_close(test_path *path);

/* A socket of the given type created inside a side's namespace. */
int test_socket(const test_path *path, netem_side side, int type);

/* Result of a bulk transfer, seen by the receiver. */
typedef struct test_transfer {
  uint64_t bytes;        /* received */
  uint64_t start_ns;     /* connect() called */
  uint64_t connected_ns; /* connect() returned */
  uint64_t first_ns;     /* first byte received */
  uint64_t skip_ns;      /* when the received count passed `skip` */
  uint64_t skip_bytes;   /* the count right then (a recv may deliver much at once) */
  uint64_t end_ns;       /* last byte received */
  bool intact;           /* every byte matched the generated stream */
} test_transfer;

/* Connects from the client to server address 0, port 5001, and sends `bytes` bytes of a
 * seeded pseudo-random stream in direction dir (DOWN: the server sends). The receiver
 * checks every byte. skip: the byte count after which goodput is measured. The client
 * first sends an 8-byte request holding the size (as a page load would). timeout_s bounds
 * the whole transfer. Returns 0, or -1 on a socket error or timeout. */
int test_transfer_run(const test_path *path, netem_dir dir, uint64_t bytes, uint64_t skip,
                      double timeout_s, test_transfer *out);

/* Goodput in bit/s between the skip mark and the end. */
double test_transfer_goodput(const test_transfer *t);

/* A background bulk sender on the client side (saturates the uplink) until stopped. */
typedef struct test_background test_background;
test_background *test_background_upload(const test_path *path, uint16_t port);
/* Stops it; returns the bytes it managed to send. */
uint64_t test_background_stop(test_background *bg);

/* UDP echo on the server side (port 7) running in a thread until stopped. */
typedef struct test_echo test_echo;
test_echo *test_echo_start(const test_path *path);
void test_echo_stop(test_echo *echo);

/* Sends `count` probes of `payload` bytes from the client, one every interval_ms, and
 * stores each round-trip time in rtt_ns (lost probes: 0). Returns how many came back. */
int test_probe(const test_path *path, int count, int payload, int interval_ms, uint64_t *rtt_ns);

/* Sends `count` UDP datagrams of payload bytes from one side to the other, in bursts of
 * `burst` separated by gap_us, and counts what arrives (waiting up to wait_ms after the
 * last). Returns the number received. */
uint64_t test_udp_stream(const test_path *path, netem_dir dir, uint64_t count, int payload,
                         int burst, int gap_us, int wait_ms);

/* Sorting helpers. */
uint64_t test_median(uint64_t *values, int count);

/* Serialization time of len bytes at rate (ns). */
double test_ser_ns(uint64_t rate_bps, uint32_t len);

/* Prints the link's statistics in one line per direction (for the test log). */
void test_print_stats(netem_link *link, const char *label);

#endif
