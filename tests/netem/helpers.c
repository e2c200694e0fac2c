/* helpers.c — traffic generators and measurements for the emulator tests (see helpers.h).
 * Everything runs in one process: sockets are created inside a side's namespace with
 * netem_enter()/netem_leave(), and the two ends of a transfer are two threads.
 */
#define _GNU_SOURCE
#include "helpers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "ns.h"

void test_require_system(const char *test) {
  if (geteuid() != 0) {
    printf("SKIP %s: needs root (network namespaces and TUN devices); CI runs as root\n", test);
    exit(TEST_SKIP);
  }
  if (access("/dev/net/tun", R_OK | W_OK) != 0) {
    printf("SKIP %s: /dev/net/tun is not usable: %s\n", test, strerror(errno));
    exit(TEST_SKIP);
  }
  const char *argv[] = {"ip", "netns", "list", NULL};
  char err[200];
  if (netem_ip_run(argv, NULL, err, sizeof err) != 0) {
    printf("SKIP %s: `ip netns` is not available: %s\n", test, err);
    exit(TEST_SKIP);
  }
}

_Noreturn void test_fail(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  printf("FAIL: ");
  vprintf(fmt, args);
  printf("\n");
  va_end(args);
  fflush(stdout);
  exit(1);
}

netem_link *test_link_start(const netem_config *config) {
  netem_link *link;
  char err[512];
  if (netem_start(config, &link, err, sizeof err) != 0) test_fail("cannot start the link: %s", err);
  return link;
}

test_path test_path_of_link(netem_link *link) {
  test_path path;
  for (int s = 0; s < 2; s++) path.ns_fd[s] = netem_ns_open(netem_ns_name(link, (netem_side)s));
  path.home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  snprintf(path.client_ip, sizeof path.client_ip, "%s", netem_client_addr(link));
  netem_server_addr(link, 0, path.server_ip, sizeof path.server_ip);
  if (path.ns_fd[0] < 0 || path.ns_fd[1] < 0 || path.home_fd < 0)
    test_fail("cannot open the link's namespaces");
  return path;
}

test_path test_path_of_ns(const char *client_ns, const char *server_ns, const char *client_ip,
                          const char *server_ip) {
  test_path path;
  path.ns_fd[NETEM_SIDE_CLIENT] = netem_ns_open(client_ns);
  path.ns_fd[NETEM_SIDE_SERVER] = netem_ns_open(server_ns);
  path.home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  snprintf(path.client_ip, sizeof path.client_ip, "%s", client_ip);
  snprintf(path.server_ip, sizeof path.server_ip, "%s", server_ip);
  if (path.ns_fd[0] < 0 || path.ns_fd[1] < 0 || path.home_fd < 0)
    test_fail("cannot open namespaces %s and %s", client_ns, server_ns);
  return path;
}

void test_path_close(test_path *path) {
  for (int s = 0; s < 2; s++)
    if (path->ns_fd[s] >= 0) close(path->ns_fd[s]);
  if (path->home_fd >= 0) close(path->home_fd);
  path->ns_fd[0] = path->ns_fd[1] = path->home_fd = -1;
}

int test_socket(const test_path *path, netem_side side, int type) {
  if (netem_ns_enter(path->ns_fd[side]) != 0) return -1;
  int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (netem_ns_enter(path->home_fd) != 0)
    abort(); /* this thread would stay in the other namespace */
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  }
  return fd;
}

static struct sockaddr_in address(const char *ip, uint16_t port) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
  inet_pton(AF_INET, ip, &sa.sin_addr);
  return sa;
}

/* ---- the checksummed stream ------------------------------------------------------------ */

typedef struct stream {
  uint64_t state;
  uint8_t word[8];
  int used;
} stream;

static void stream_init(stream *s) {
  s->state = 0x2545f4914f6cdd1du;
  s->used = 8;
}

static void stream_fill(stream *s, uint8_t *out, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (s->used == 8) {
      s->state ^= s->state << 13;
      s->state ^= s->state >> 7;
      s->state ^= s->state << 17;
      memcpy(s->word, &s->state, 8);
      s->used = 0;
    }
    out[i] = s->word[s->used++];
  }
}

/* Waits until fd is ready for events or the deadline passes. Returns 0 when ready. */
static int wait_fd(int fd, short events, uint64_t deadline_ns) {
  for (;;) {
    uint64_t now = netem_now_ns();
    if (now >= deadline_ns) return -1;
    struct pollfd p = {.fd = fd, .events = events};
    int ms = (int)((deadline_ns - now) / 1000000u) + 1;
    int rc = poll(&p, 1, ms);
    if (rc > 0) return 0;
    if (rc < 0 && errno != EINTR) return -1;
  }
}

static int send_all(int fd, const uint8_t *data, size_t len, uint64_t deadline_ns) {
  while (len > 0) {
    if (wait_fd(fd, POLLOUT, deadline_ns) != 0) return -1;
    ssize_t n = send(fd, data, len, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return -1;
    }
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

static int send_stream(int fd, uint64_t bytes, uint64_t deadline_ns) {
  stream s;
  stream_init(&s);
  static _Thread_local uint8_t chunk[65536];
  while (bytes > 0) {
    size_t n = bytes < sizeof chunk ? (size_t)bytes : sizeof chunk;
    stream_fill(&s, chunk, n);
    if (send_all(fd, chunk, n, deadline_ns) != 0) return -1;
    bytes -= n;
  }
  return 0;
}

/* Receives until EOF or `expected` bytes, checking every byte against the stream. */
static int receive_stream(int fd, uint64_t expected, uint64_t skip, uint64_t deadline_ns,
                          test_transfer *out) {
  stream s;
  stream_init(&s);
  static _Thread_local uint8_t got[65536], want[65536];
  out->intact = true;
  while (out->bytes < expected) {
    if (wait_fd(fd, POLLIN, deadline_ns) != 0) return -1;
    ssize_t n = recv(fd, got, sizeof got, MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    uint64_t now = netem_now_ns();
    if (out->bytes == 0) out->first_ns = now;
    stream_fill(&s, want, (size_t)n);
    if (memcmp(got, want, (size_t)n) != 0) out->intact = false;
    if (out->bytes < skip && out->bytes + (uint64_t)n >= skip) {
      out->skip_ns = now;
      out->skip_bytes = out->bytes + (uint64_t)n;
    }
    out->bytes += (uint64_t)n;
    out->end_ns = now;
  }
  return out->bytes == expected ? 0 : -1;
}

/* ---- bulk transfer ---------------------------------------------------------------------- */

struct transfer_server {
  int listener;
  netem_dir dir;
  uint64_t bytes, skip, deadline_ns;
  test_transfer *out;
  int rc;
};

static void *transfer_server_main(void *arg) {
  struct transfer_server *t = arg;
  t->rc = -1;
  if (wait_fd(t->listener, POLLIN, t->deadline_ns) != 0) return NULL;
  int fd = accept4(t->listener, NULL, NULL, SOCK_CLOEXEC);
  if (fd < 0) return NULL;
  uint8_t request[8];
  size_t have = 0;
  while (have < sizeof request) {
    if (wait_fd(fd, POLLIN, t->deadline_ns) != 0) goto out;
    ssize_t n = recv(fd, request + have, sizeof request - have, MSG_DONTWAIT);
    if (n <= 0 && !(n < 0 && (errno == EAGAIN || errno == EINTR))) goto out;
    if (n > 0) have += (size_t)n;
  }
  if (t->dir == NETEM_DIR_DOWN) {
    t->rc = send_stream(fd, t->bytes, t->deadline_ns);
    shutdown(fd, SHUT_WR);
    /* Wait for the client to close, so the data is acknowledged before we go. */
    char sink[256];
    while (wait_fd(fd, POLLIN, t->deadline_ns) == 0 && recv(fd, sink, sizeof sink, 0) > 0) {
    }
  } else {
    t->rc = receive_stream(fd, t->bytes, t->skip, t->deadline_ns, t->out);
  }
out:
  close(fd);
  return NULL;
}

int test_transfer_run(const test_path *path, netem_dir dir, uint64_t bytes, uint64_t skip,
                      double timeout_s, test_transfer *out) {
  static atomic_uint port_counter;
  memset(out, 0, sizeof *out);
  uint16_t port = (uint16_t)(5001 + atomic_fetch_add(&port_counter, 1) % 1000);
  const char *server_ip = path->server_ip;
  int listener = test_socket(path, NETEM_SIDE_SERVER, SOCK_STREAM);
  int client = test_socket(path, NETEM_SIDE_CLIENT, SOCK_STREAM | SOCK_NONBLOCK);
  struct sockaddr_in sa = address(server_ip, port);
  if (listener < 0 || client < 0 || bind(listener, (struct sockaddr *)&sa, sizeof sa) != 0 ||
      listen(listener, 8) != 0) {
    perror("transfer sockets");
    if (listener >= 0) close(listener);
    if (client >= 0) close(client);
    return -1;
  }
  struct transfer_server server = {
      .listener = listener,
      .dir = dir,
      .bytes = bytes,
      .skip = skip,
      .deadline_ns = netem_now_ns() + (uint64_t)(timeout_s * 1e9),
      .out = out,
  };
  pthread_t thread;
  pthread_create(&thread, NULL, transfer_server_main, &server);
  int rc = -1;
  out->start_ns = netem_now_ns();
  if (connect(client, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) goto done;
  if (wait_fd(client, POLLOUT, server.deadline_ns) != 0) goto done;
  int so_error = 0;
  socklen_t len = sizeof so_error;
  getsockopt(client, SOL_SOCKET, SO_ERROR, &so_error, &len);
  if (so_error != 0) goto done;
  out->connected_ns = netem_now_ns();
  uint8_t request[8];
  memcpy(request, &bytes, sizeof request);
  if (send_all(client, request, sizeof request, server.deadline_ns) != 0) goto done;
  if (dir == NETEM_DIR_DOWN) {
    rc = receive_stream(client, bytes, skip, server.deadline_ns, out);
    shutdown(client, SHUT_WR); /* the server waits for this before it closes */
  } else {
    rc = send_stream(client, bytes, server.deadline_ns);
    shutdown(client, SHUT_WR);
  }
done:
  if (rc != 0) shutdown(client, SHUT_RDWR); /* lets the server thread finish */
  pthread_join(thread, NULL);
  close(client);
  close(listener);
  if (rc == 0 && server.rc != 0) rc = -1;
  return rc;
}

double test_transfer_goodput(const test_transfer *t) {
  if (t->end_ns <= t->skip_ns || t->bytes <= t->skip_bytes) return 0;
  return (double)(t->bytes - t->skip_bytes) * 8.0 * 1e9 / (double)(t->end_ns - t->skip_ns);
}

/* ---- background upload ---------------------------------------------------------------- */

struct test_background {
  int listener, client, accepted;
  atomic_bool stop;
  atomic_uint_fast64_t sent;
  pthread_t sender, sink;
};

static void *background_sink(void *arg) {
  test_background *bg = arg;
  uint64_t deadline = netem_now_ns() + 10000000000u;
  if (wait_fd(bg->listener, POLLIN, deadline) != 0) return NULL;
  bg->accepted = accept4(bg->listener, NULL, NULL, SOCK_CLOEXEC);
  static _Thread_local uint8_t buf[65536];
  while (!atomic_load(&bg->stop) && bg->accepted >= 0) {
    if (wait_fd(bg->accepted, POLLIN, netem_now_ns() + 50000000u) != 0) continue;
    if (recv(bg->accepted, buf, sizeof buf, MSG_DONTWAIT) == 0) break;
  }
  return NULL;
}

static void *background_sender(void *arg) {
  test_background *bg = arg;
  static _Thread_local uint8_t buf[16384];
  memset(buf, 'u', sizeof buf);
  while (!atomic_load(&bg->stop)) {
    if (wait_fd(bg->client, POLLOUT, netem_now_ns() + 50000000u) != 0) continue;
    ssize_t n = send(bg->client, buf, sizeof buf, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0)
      atomic_fetch_add(&bg->sent, (uint64_t)n);
    else if (n < 0 && errno != EAGAIN && errno != EINTR)
      break;
  }
  return NULL;
}

test_background *test_background_upload(const test_path *path, uint16_t port) {
  test_background *bg = calloc(1, sizeof *bg);
  const char *server_ip = path->server_ip;
  struct sockaddr_in sa = address(server_ip, port);
  bg->accepted = -1;
  bg->listener = test_socket(path, NETEM_SIDE_SERVER, SOCK_STREAM);
  bg->client = test_socket(path, NETEM_SIDE_CLIENT, SOCK_STREAM);
  if (bind(bg->listener, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(bg->listener, 1) != 0)
    test_fail("background upload: cannot listen: %s", strerror(errno));
  pthread_create(&bg->sink, NULL, background_sink, bg);
  if (connect(bg->client, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("background upload: cannot connect: %s", strerror(errno));
  pthread_create(&bg->sender, NULL, background_sender, bg);
  return bg;
}

uint64_t test_background_stop(test_background *bg) {
  atomic_store(&bg->stop, true);
  shutdown(bg->client, SHUT_RDWR);
  pthread_join(bg->sender, NULL);
  pthread_join(bg->sink, NULL);
  uint64_t sent = atomic_load(&bg->sent);
  close(bg->client);
  close(bg->listener);
  if (bg->accepted >= 0) close(bg->accepted);
  free(bg);
  return sent;
}

/* ---- UDP echo and probe --------------------------------------------------------------- */

struct test_echo {
  int fd;
  atomic_bool stop;
  pthread_t thread;
};

/* Test threads that time packets run real-time too (below the forwarder's priority), so
 * that what they measure is the link and not the scheduler. Best effort. */
static void test_thread_realtime(void) {
  struct sched_param param = {.sched_priority = 40};
  pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

static void *echo_main(void *arg) {
  test_echo *echo = arg;
  test_thread_realtime();
  uint8_t buf[2048];
  while (!atomic_load(&echo->stop)) {
    if (wait_fd(echo->fd, POLLIN, netem_now_ns() + 50000000u) != 0) continue;
    struct sockaddr_in from;
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(echo->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &len);
    if (n > 0) sendto(echo->fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
  }
  return NULL;
}

test_echo *test_echo_start(const test_path *path) {
  test_echo *echo = calloc(1, sizeof *echo);
  const char *server_ip = path->server_ip;
  struct sockaddr_in sa = address(server_ip, 7);
  echo->fd = test_socket(path, NETEM_SIDE_SERVER, SOCK_DGRAM);
  if (echo->fd < 0 || bind(echo->fd, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("echo: cannot bind: %s", strerror(errno));
  pthread_create(&echo->thread, NULL, echo_main, echo);
  return echo;
}

void test_echo_stop(test_echo *echo) {
  atomic_store(&echo->stop, true);
  pthread_join(echo->thread, NULL);
  close(echo->fd);
  free(echo);
}

int test_probe(const test_path *path, int count, int payload, int interval_ms, uint64_t *rtt_ns) {
  const char *server_ip = path->server_ip;
  struct sockaddr_in sa = address(server_ip, 7);
  int fd = test_socket(path, NETEM_SIDE_CLIENT, SOCK_DGRAM);
  test_thread_realtime();
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("probe: cannot connect: %s", strerror(errno));
  uint8_t buf[2048] = {0};
  int answered = 0;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
  /* One probe first, not counted: it warms the path (the echo thread's first wake-up). */
  for (int i = -1; i < count; i++) {
    memcpy(buf, &i, sizeof i);
    struct timespec sent_ts;
    clock_gettime(CLOCK_REALTIME, &sent_ts); /* SO_TIMESTAMPNS stamps are CLOCK_REALTIME */
    uint64_t sent = netem_now_ns();
    if (i >= 0) rtt_ns[i] = 0;
    if (send(fd, buf, (size_t)payload, 0) != payload) continue;
    /* A lost probe must not stall the series: wait ten intervals, 0.2 to 2 s. */
    uint64_t wait_ns = (uint64_t)interval_ms * 10000000u;
    wait_ns = wait_ns < 200000000u ? 200000000u : wait_ns > 2000000000u ? 2000000000u : wait_ns;
    uint64_t deadline = sent + wait_ns;
    while (wait_fd(fd, POLLIN, deadline) == 0) {
      uint8_t reply[2048];
      char control[256];
      struct iovec iov = {.iov_base = reply, .iov_len = sizeof reply};
      struct msghdr msg = {.msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = control,
                           .msg_controllen = sizeof control};
      ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
      int seq;
      if (n < (ssize_t)sizeof seq || (memcpy(&seq, reply, sizeof seq), seq != i)) continue;
      /* The kernel's receive time, so the probe thread's own wake-up is not counted. */
      uint64_t rtt = netem_now_ns() - sent;
      for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
          struct timespec at;
          memcpy(&at, CMSG_DATA(c), sizeof at);
          int64_t d =
              (int64_t)(at.tv_sec - sent_ts.tv_sec) * 1000000000 + (at.tv_nsec - sent_ts.tv_nsec);
          if (d > 0 && (uint64_t)d < rtt) rtt = (uint64_t)d;
        }
      }
      if (i >= 0) {
        rtt_ns[i] = rtt;
        answered++;
      }
      break;
    }
    struct timespec pause = {.tv_sec = interval_ms / 1000,
                             .tv_nsec = (long)(interval_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
  }
  close(fd);
  return answered;
}

/* ---- UDP stream ----------------------------------------------------------------------- */

struct udp_sink {
  int fd;
  atomic_bool stop;
  atomic_uint_fast64_t received;
};

static void *udp_sink_main(void *arg) {
  struct udp_sink *sink = arg;
  uint8_t buf[2048];
  while (!atomic_load(&sink->stop)) {
    if (wait_fd(sink->fd, POLLIN, netem_now_ns() + 20000000u) != 0) continue;
    while (recv(sink->fd, buf, sizeof buf, MSG_DONTWAIT) > 0) atomic_fetch_add(&sink->received, 1);
  }
  return NULL;
}

uint64_t test_udp_stream(const test_path *path, netem_dir dir, uint64_t count, int payload,
                         int burst, int gap_us, int wait_ms) {
  const char *server_ip = path->server_ip;
  netem_side from = dir == NETEM_DIR_DOWN ? NETEM_SIDE_SERVER : NETEM_SIDE_CLIENT;
  netem_side to = dir == NETEM_DIR_DOWN ? NETEM_SIDE_CLIENT : NETEM_SIDE_SERVER;
  const char *to_ip = to == NETEM_SIDE_CLIENT ? path->client_ip : server_ip;
  struct sockaddr_in sa = address(to_ip, 9);
  struct udp_sink sink = {.fd = test_socket(path, to, SOCK_DGRAM)};
  int big = 16 << 20;
  setsockopt(sink.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
  if (sink.fd < 0 || bind(sink.fd, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("udp stream: cannot bind: %s", strerror(errno));
  int sender = test_socket(path, from, SOCK_DGRAM);
  setsockopt(sender, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big);
  if (sender < 0 || connect(sender, (struct sockaddr *)&sa, sizeof sa) != 0)
    test_fail("udp stream: cannot connect: %s", strerror(errno));
  pthread_t thread;
  pthread_create(&thread, NULL, udp_sink_main, &sink);
  uint8_t buf[2048];
  memset(buf, 0x5a, sizeof buf);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (uint64_t i = 0; i < count; i++) {
    /* Burst k starts at start + k * gap: an absolute schedule, so sleeping late never
     * lowers the rate. */
    if (burst > 0 && gap_us > 0 && i % (uint64_t)burst == 0) {
      uint64_t offset_ns = i / (uint64_t)burst * (uint64_t)gap_us * 1000u;
      struct timespec due = start;
      due.tv_sec += (time_t)(offset_ns / 1000000000u);
      due.tv_nsec += (long)(offset_ns % 1000000000u);
      if (due.tv_nsec >= 1000000000L) {
        due.tv_sec++;
        due.tv_nsec -= 1000000000L;
      }
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
    }
    memcpy(buf, &i, sizeof i);
    while (send(sender, buf, (size_t)payload, 0) < 0 && (errno == ENOBUFS || errno == EAGAIN)) {
      struct timespec pause = {.tv_nsec = 100000};
      nanosleep(&pause, NULL);
    }
  }
  struct timespec pause = {.tv_sec = wait_ms / 1000, .tv_nsec = (long)(wait_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  atomic_store(&sink.stop, true);
  pthread_join(thread, NULL);
  close(sender);
  close(sink.fd);
  return atomic_load(&sink.received);
}

/* ---- misc ------------------------------------------------------------------------------ */

static int compare_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

uint64_t test_median(uint64_t *values, int count) {
  qsort(values, (size_t)count, sizeof *values, compare_u64);
  return count > 0 ? values[count / 2] : 0;
}

double test_ser_ns(uint64_t rate_bps, uint32_t len) {
  return rate_bps == 0 ? 0.0 : (double)len * 8.0 * 1e9 / (double)rate_bps;
}

void test_print_stats(netem_link *link, const char *label) {
  netem_stats s;
  netem_stats_read(link, &s);
  const netem_dir_stats *dirs[2] = {&s.down, &s.up};
  for (int d = 0; d < 2; d++) {
    const netem_dir_stats *x = dirs[d];
    printf("  [%s] %-4s fwd %" PRIu64 " pkts, queue drops %" PRIu64 ", losses %" PRIu64
           ", overflow %" PRIu64 ", TUN drops %" PRIu64
           ", qdelay max %.2f ms, lateness p50 %.3f p99 %.3f max %.3f ms\n",
           label, d == 0 ? "down" : "up", x->packets_out, x->queue_drops, x->random_losses,
           x->overflow_drops, x->tun_drops, (double)x->queue_delay_max_ns / 1e6,
           (double)x->lateness.p50_ns / 1e6, (double)x->lateness.p99_ns / 1e6,
           (double)x->lateness.max_ns / 1e6);
  }
  printf("  [%s] forwarder %s, CPU %.3f s; tcp retrans client %" PRIu64 " server %" PRIu64
         ", timeouts %" PRIu64 "/%" PRIu64 "\n",
         label, s.realtime ? "SCHED_FIFO" : "normal", (double)s.forwarder_cpu_ns / 1e9,
         s.tcp[0].retrans_segs, s.tcp[1].retrans_segs, s.tcp[0].timeouts, s.tcp[1].timeouts);
  if (s.down.tun_drops + s.up.tun_drops > 0) printf("  [%s] WARNING: TUN drops\n", label);
}
