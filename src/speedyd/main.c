/* main.c — speedyd's process life: options, docroot, keys and listeners, privilege drop,
 * the event loop, and a graceful shutdown on SIGTERM / SIGINT. With --workers N > 1 the
 * master in speedyd_workers.c forks N copies of that loop (speedyd_run) after the
 * shared setup here.
 *
 * Order matters: everything that needs the privileges we start with (binding low ports,
 * reading the private key, opening the logs) happens before --user drops them; file
 * requests are opened beneath the docroot afterwards, as the unprivileged user, so file
 * permissions mean what they say.
 *
 * Shutdown: the listeners close, SPDY connections get GOAWAY and HTTP/1.1 connections
 * "Connection: close" on their answer in flight (idle ones close at once); what is still
 * open at --shutdown-timeout is aborted. Then the loop ends and speedyd exits 0. A
 * second signal aborts at once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <malloc.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_session.h"
#include "speedyd.h"

/* ---- connections ---- */

void speedyd_conn_closed(speedyd_conn *c) {
  speedyd_server *server = c->server;
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    server->conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  else
    server->conns_tail = c->prev;
  server->n_conns--;
  if (c->evicted) server->n_evicting--;
  speedyd_addr_release(server, c->addr);
  speedyd_budget_release(&c->budget, c->budget.used); /* what a module left charged */
  free(c);
  if (server->shutting_down && server->n_conns == 0) {
    uv_close((uv_handle_t *)&server->shutdown_timer, NULL);
    uv_close((uv_handle_t *)&server->sigterm, NULL);
    uv_close((uv_handle_t *)&server->sigint, NULL);
  }
}

/* Before on_open (handshake or sniff): nothing to read yet. */
static size_t pending_on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  (void)io, (void)data, (void)user;
  return len;
}

static void pending_on_close(io_conn *io, int status, void *user) {
  speedyd_conn *c = user;
  if (status != 0 && status != UV_EOF && status != UV_ECONNRESET && status != UV_ECANCELED) {
    const char *detail = io_conn_error_detail(io);
    speedyd_log_error(c->server, io_conn_peer(io), "%s%s%s", io_strerror(status),
                      detail[0] ? ": " : "", detail);
  }
  speedyd_conn_closed(c);
}

static void pending_on_open(io_conn *io, void *user) {
  speedyd_conn *c = user;
  speedyd_server *server = c->server;
  io_proto proto = io_conn_protocol(io);
  speedy_protocol engine_protocol;
  int rv;
  if (proto == IO_PROTO_HTTP1)
    rv = speedyd_h1_start(c);
  else if (io_proto_session(proto, &engine_protocol))
    rv = speedyd_spdy_start(c, engine_protocol);
  else
    rv = -1;
  if (rv != 0) {
    speedyd_log_error(server, io_conn_peer(io), "cannot start a %s connection",
                      io_proto_name(proto));
    io_conn_abort(io, UV_ECANCELED);
  }
}

/* Bytes charged to every connection for what the I/O layer holds (connection, buffers;
 * an estimate: those allocations are not seen one by one). */
#define SPEEDYD_CONN_CHARGE (sizeof(speedyd_conn) + 4096u)
#define SPEEDYD_TLS_CONN_CHARGE 40960u

/* A ,proxy listener's connection that ended before its PROXY header was read (no
 * speedyd_conn exists yet): the balancer (peer) sent none, a malformed one, or not in
 * time. A close without a byte (a balancer's TCP health check) is not logged. */
static void on_dropped(io_listener *listener, const char *peer, int status, const char *detail,
                       void *user) {
  (void)listener;
  if (status == UV_EOF || status == UV_ECONNRESET || status == UV_ECANCELED) return;
  speedyd_log_error(user, peer, "connection refused: %s%s%s", io_strerror(status),
                    detail[0] ? ": " : "", detail);
}

static void held_on_close(io_conn *io, int status, void *user) {
  (void)io, (void)status;
  speedyd_server *server = user;
  server->n_held--;
}

static void on_accept(io_listener *listener, io_conn *io, void *user) {
  (void)listener;
  speedyd_server *server = user;
  /* The access log wants the address alone: "1.2.3.4:80" → "1.2.3.4", "[::1]:80" → "::1". */
  char ip[64] = "";
  const char *peer = io_conn_peer(io);
  const char *start = peer[0] == '[' ? peer + 1 : peer;
  const char *end = peer[0] == '[' ? strchr(start, ']') : strrchr(start, ':');
  size_t n = end != NULL ? (size_t)(end - start) : strlen(start);
  if (n >= sizeof(ip)) n = sizeof(ip) - 1;
  memcpy(ip, start, n);
  /* At the limit, the oldest idle connection makes room; when every one is busy, the
   * new one is refused. */
  if (server->n_conns - server->n_evicting >= server->config.max_connections &&
      !speedyd_evict_idle(server)) {
    io_conn_abort(io, UV_ECANCELED);
    return;
  }
  /* Over its connection limit: closed at once. Its connections flooded us lately: held
   * unread for a while, so that a flooder that reconnects at once waits instead of
   * making us accept and close thousands of connections a second (a bounded number
   * of them; past that, closed at once). No log line: that would be the flood's. */
  speedyd_addr *addr;
  int refused = speedyd_addr_acquire(server, ip, &addr);
  if (refused == SPEEDYD_ADDR_FLOODING && server->n_held < SPEEDYD_MAX_HELD) {
    static const io_conn_callbacks held_callbacks = {.on_close = held_on_close};
    io_conn_set_callbacks(io, &held_callbacks, server);
    server->n_held++;
    io_conn_hold_then_abort(io, SPEEDYD_HOLD_MS);
    return;
  }
  if (refused != 0) {
    io_conn_abort(io, UV_ECANCELED);
    return;
  }
  speedyd_conn *c = calloc(1, sizeof(*c));
  if (c == NULL) {
    speedyd_addr_release(server, addr);
    io_conn_abort(io, UV_ENOMEM);
    return;
  }
  c->server = server;
  c->io = io;
  c->id = ++server->next_conn_id;
  memcpy(c->peer_ip, ip, sizeof(c->peer_ip));
  c->addr = addr;
  c->budget.server = server;
  if (speedyd_budget_charge(&c->budget, SPEEDYD_CONN_CHARGE +
                                            (io_conn_is_tls(io) ? SPEEDYD_TLS_CONN_CHARGE : 0)) !=
      0) {
    speedyd_addr_release(server, addr);
    free(c);
    io_conn_abort(io, UV_ECANCELED); /* the server is out of memory budget */
    return;
  }
  c->next = server->conns;
  if (server->conns != NULL)
    server->conns->prev = c;
  else
    server->conns_tail = c;
  server->conns = c;
  server->n_conns++;
  const io_conn_callbacks callbacks = {
      .on_open = pending_on_open, .on_read = pending_on_read, .on_close = pending_on_close};
  io_conn_set_callbacks(io, &callbacks, c);
  io_conn_set_idle_timeout(io, server->config.header_timeout_ms);
}

/* ---- shutdown ---- */

static void abort_all(speedyd_server *server, int status) {
  for (speedyd_conn *c = server->conns; c != NULL; c = c->next) io_conn_abort(c->io, status);
}

static void on_shutdown_deadline(uv_timer_t *timer) {
  speedyd_server *server = timer->data;
  speedyd_log_error(server, NULL, "shutdown deadline: aborting %llu connection(s)",
                    (unsigned long long)server->n_conns);
  abort_all(server, UV_ECANCELED);
}

static void begin_shutdown(speedyd_server *server) {
  if (server->shutting_down) {
    abort_all(server, UV_ECANCELED);
    return;
  }
  server->shutting_down = 1;
  for (size_t i = 0; i < server->n_listeners; i++) io_listener_close(server->listeners[i]);
  server->n_listeners = 0;
  for (speedyd_conn *c = server->conns; c != NULL; c = c->next) {
    if (c->shutdown != NULL)
      c->shutdown(c);
    else
      io_conn_abort(c->io, UV_ECANCELED); /* still handshaking */
  }
  if (server->n_conns == 0) {
    uv_close((uv_handle_t *)&server->shutdown_timer, NULL);
    uv_close((uv_handle_t *)&server->sigterm, NULL);
    uv_close((uv_handle_t *)&server->sigint, NULL);
  } else if (server->config.shutdown_timeout_ms > 0) {
    uv_timer_start(&server->shutdown_timer, on_shutdown_deadline,
                   server->config.shutdown_timeout_ms, 0);
  }
}

static void on_signal(uv_signal_t *handle, int signum) {
  speedyd_server *server = handle->data;
  speedyd_log_error(server, NULL, "%s: shutting down", signum == SIGINT ? "SIGINT" : "SIGTERM");
  begin_shutdown(server);
}

/* ---- setup ---- */

static void close_walk(uv_handle_t *handle, void *arg) {
  (void)arg;
  if (!uv_is_closing(handle)) uv_close(handle, NULL);
}

static int listen_and_arm(speedyd_server *server, int *fds, int ready_fd);

static int check_readable(const char *option, const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fprintf(stderr, "speedyd: cannot open %s %s: %s\n", option, path, strerror(errno));
    return -1;
  }
  close(fd);
  return 0;
}

void speedyd_print_listening(const speedyd_server *server) {
  const speedyd_config *config = &server->config;
  char line[SPEEDYD_MAX_LISTENS * 96];
  size_t used = 0;
  for (size_t i = 0; i < config->n_listens && used < sizeof(line); i++) {
    const speedyd_listen *l = &config->listens[i];
    int ipv6 = strchr(l->addr, ':') != NULL;
    int n = snprintf(line + used, sizeof(line) - used, "%s%s%s%s:%d (%s%s)", i ? ", " : "",
                     ipv6 ? "[" : "", l->addr, ipv6 ? "]" : "", l->port,
                     l->tls ? "TLS" : "plaintext", l->proxy ? ", PROXY protocol" : "");
    if (n < 0) break;
    used += (size_t)n;
  }
  fprintf(stderr, "speedyd: listening on %s\n", line);
}

int speedyd_write_port_file(speedyd_server *server) {
  const char *path = server->config.port_file;
  char tmp[4096];
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
    fprintf(stderr, "speedyd: cannot write --port-file %s: name too long\n", path);
    return -1;
  }
  FILE *f = fopen(tmp, "w");
  if (f == NULL) {
    fprintf(stderr, "speedyd: cannot write --port-file %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < server->config.n_listens; i++)
    fprintf(f, "%d\n", server->config.listens[i].port);
  /* Written whole, then renamed: a reader never sees half a file. */
  if (fclose(f) != 0 || rename(tmp, path) != 0) {
    fprintf(stderr, "speedyd: cannot write --port-file %s: %s\n", path, strerror(errno));
    return -1;
  }
  return 0;
}

int speedyd_drop_privileges(const char *user) {
  errno = 0;
  struct passwd *pw = getpwnam(user);
  if (pw == NULL) {
    fprintf(stderr, "speedyd: cannot use --user %s: %s\n", user,
            errno ? strerror(errno) : "no such user");
    return -1;
  }
  if (getuid() == pw->pw_uid && geteuid() == pw->pw_uid) return 0;
  /* Groups first: after setuid we could no longer change them. Each step is checked
   * after the call too: a call that "succeeds" without effect must not go unnoticed. */
  if (initgroups(user, pw->pw_gid) != 0) {
    fprintf(stderr, "speedyd: cannot set the groups of --user %s: %s\n", user, strerror(errno));
    return -1;
  }
  if (setgid(pw->pw_gid) != 0 || getgid() != pw->pw_gid || getegid() != pw->pw_gid) {
    fprintf(stderr, "speedyd: cannot set the group of --user %s: %s\n", user,
            errno ? strerror(errno) : "gid unchanged");
    return -1;
  }
  errno = 0;
  if (setuid(pw->pw_uid) != 0 || getuid() != pw->pw_uid || geteuid() != pw->pw_uid) {
    fprintf(stderr, "speedyd: cannot drop to --user %s: %s\n", user,
            errno ? strerror(errno) : "uid unchanged");
    return -1;
  }
  gid_t groups[256];
  int n_groups = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
  for (int i = 0; i < n_groups && pw->pw_uid != 0; i++) {
    if (groups[i] == 0 && pw->pw_gid != 0) {
      fprintf(stderr, "speedyd: cannot drop to --user %s: still in group 0\n", user);
      return -1;
    }
  }
  if (pw->pw_uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
    fprintf(stderr, "speedyd: cannot drop to --user %s: root privileges still held\n", user);
    return -1;
  }
  return 0;
}

/* Whatever happens later, no exec gains privileges and no core dump holds the private
 * key (a dump of a process that read it would). */
int speedyd_harden_process(void) {
  struct rlimit no_core = {0, 0};
  if (setrlimit(RLIMIT_CORE, &no_core) != 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 ||
      prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    fprintf(stderr, "speedyd: cannot restrict the process: %s\n", strerror(errno));
    return -1;
  }
  return 0;
}

/* A private key others can read is a leak waiting to happen: say so (not fatal). */
static void warn_key_permissions(const char *key_file) {
  struct stat st;
  if (stat(key_file, &st) == 0 && (st.st_mode & S_IROTH) != 0) {
    fprintf(stderr, "speedyd: warning: --key %s is readable by others (chmod 600 it)\n", key_file);
  }
}

/* Each connection holds a descriptor, and so does each body being sent (a burst of
 * requests can have one in flight per connection): ask for twice --max-connections, up
 * to the hard limit, and say so when that is not enough (short of descriptors, requests
 * get 503). */
static void raise_descriptor_limit(const speedyd_config *config) {
  struct rlimit limit;
  if (config->max_connections == 0 || getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t want = (rlim_t)config->max_connections * 2;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want) {
    rlim_t raised =
        limit.rlim_max == RLIM_INFINITY || limit.rlim_max > want ? want : limit.rlim_max;
    struct rlimit wanted = {raised, limit.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) limit.rlim_cur = raised;
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < want)
    fprintf(stderr,
            "speedyd: warning: %llu file descriptors (ulimit -n) for --max-connections %u: "
            "bursts of requests may get 503; allow %llu\n",
            (unsigned long long)limit.rlim_cur, config->max_connections, (unsigned long long)want);
}

static int setup(speedyd_server *server) {
  speedyd_config *config = &server->config;
  raise_descriptor_limit(config);
  if (speedyd_harden_process() != 0) return -1; /* before the key is read; again after --user */
  if (speedyd_log_open(server) != 0) return -1;
  if (config->replay_file != NULL) {
    char error[512];
    if (replay_plan_load(&server->replay, config->replay_file, error, sizeof(error)) != 0) {
      fprintf(stderr, "speedyd: bad --replay: %s\n", error);
      return -1;
    }
    if (config->replay_host_index >= (int)replay_plan_host_count(server->replay)) {
      fprintf(stderr, "speedyd: bad --replay-host-index %d: the plan has %zu hosts\n",
              config->replay_host_index, replay_plan_host_count(server->replay));
      return -1;
    }
  } else if (http_docroot_open(&server->docroot, config->docroot,
                               config->allow_symlinks ? HTTP_SYMLINKS_ANY : HTTP_SYMLINKS_INSIDE) !=
             0) {
    fprintf(stderr, "speedyd: cannot open --docroot %s: %s\n", config->docroot, strerror(errno));
    server->docroot.dir_fd = -1;
    return -1;
  }
  if (config->manifest_file != NULL) {
    char error[512];
    if (http_manifest_load(config->manifest_file, &server->manifest, error, sizeof(error)) != 0) {
      fprintf(stderr, "speedyd: bad --manifest: %s\n", error);
      return -1;
    }
  }
  if (config->gzip && http_gzip_cache_new(&server->gzip_cache, 0, 0) != 0) {
    fprintf(stderr, "speedyd: out of memory\n");
    return -1;
  }
  if (config->file_cache > 0 && config->replay_file == NULL &&
      speedyd_file_cache_new(&server->file_cache, config->file_cache,
                             config->file_cache_valid_ms) != 0) {
    fprintf(stderr, "speedyd: out of memory\n");
    return -1;
  }
  server->static_options = (http_static_options){.docroot = &server->docroot,
                                                 .index_name = NULL,
                                                 .gzip = config->gzip,
                                                 .gzip_cache = server->gzip_cache};
  server->upload_options = (http_upload_options){
      .path = config->upload_path, .mode = config->upload_mode, .max_bytes = config->upload_max};

  int any_tls = 0;
  for (size_t i = 0; i < config->n_listens; i++) any_tls |= config->listens[i].tls;
  if (any_tls) {
    if (check_readable("--cert", config->cert_file) != 0 ||
        check_readable("--key", config->key_file) != 0)
      return -1;
    warn_key_permissions(config->key_file);
    char error[512] = "";
    int rv = io_tls_server_new(&server->tls, config->cert_file, config->key_file,
                               config->n_protocols ? config->protocols : NULL, config->n_protocols,
                               (config->tls_max_1_2 ? IO_TLS_MAX_1_2 : 0u) |
                                   (config->tls_no_resumption ? IO_TLS_NO_RESUMPTION : 0u),
                               error, sizeof(error));
    if (rv != 0) {
      fprintf(stderr, "speedyd: cannot load --cert %s / --key %s: %s\n", config->cert_file,
              config->key_file, error[0] ? error : io_strerror(rv));
      return -1;
    }
  }

  return 0;
}

/* The event loop of one process (the only one, or a worker): listeners, signals, run.
 * fds: a worker's bound sockets, one per --listen (owned from here on), or NULL to
 * create the listeners (then --port-file and --user follow here). ready_fd >= 0: one
 * byte is written there once listening (the master counts them). */
int speedyd_run(speedyd_server *server, int *fds, int ready_fd) {
  speedyd_config *config = &server->config;
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) {
    fprintf(stderr, "speedyd: cannot start the event loop\n");
    for (size_t i = 0; fds != NULL && i < config->n_listens; i++) close(fds[i]);
    return SPEEDYD_EXIT_FAILURE;
  }
  server->loop = &loop;
  int status = 0;
  if (listen_and_arm(server, fds, ready_fd) != 0) {
    status = SPEEDYD_EXIT_FAILURE;
    for (size_t i = 0; i < server->n_listeners; i++) io_listener_close(server->listeners[i]);
    server->n_listeners = 0;
  } else {
    uv_run(&loop, UV_RUN_DEFAULT);
  }
  /* Whatever is left (a failed setup's handles): close it and let the loop finish. */
  abort_all(server, UV_ECANCELED);
  uv_walk(&loop, close_walk, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  server->loop = NULL;
  return status;
}

static int listen_and_arm(speedyd_server *server, int *fds, int ready_fd) {
  speedyd_config *config = &server->config;
  io_config io;
  io_config_init(&io);
  io.handshake_timeout_ms = config->handshake_timeout_ms;
  io.idle_timeout_ms = config->idle_timeout_ms;
  /* The I/O layer's cap is a backstop above ours: speedyd evicts idle connections at
   * --max-connections, and evicted ones take a loop turn to go. */
  io.max_connections = config->max_connections + config->max_connections / 8u + 16u;
  io.plaintext_v3 = config->plaintext_v3;
  for (size_t i = 0; i < config->n_listens; i++) {
    speedyd_listen *l = &config->listens[i];
    io.proxy_protocol = l->proxy;
    int rv;
    if (fds != NULL) {
      rv = io_listener_open(&server->listeners[i], server->loop, fds[i],
                            l->tls ? server->tls : NULL, &io, on_accept, server);
      fds[i] = -1;
      if (rv != 0)
        for (size_t j = i + 1; j < config->n_listens; j++) close(fds[j]);
    } else {
      rv = io_listener_new(&server->listeners[i], server->loop, l->addr, l->port,
                           l->tls ? server->tls : NULL, &io, on_accept, server);
    }
    if (rv != 0) {
      fprintf(stderr, "speedyd: cannot listen on %s%s%s:%d: %s\n", strchr(l->addr, ':') ? "[" : "",
              l->addr, strchr(l->addr, ':') ? "]" : "", l->port, io_strerror(rv));
      return -1;
    }
    server->n_listeners++;
    io_listener_set_on_dropped(server->listeners[i], on_dropped);
    l->port = io_listener_port(server->listeners[i]);
  }
  if (fds == NULL) {
    speedyd_print_listening(server);
    if (config->port_file != NULL && speedyd_write_port_file(server) != 0) return -1;
    if (config->user != NULL && speedyd_drop_privileges(config->user) != 0) return -1;
    if (speedyd_harden_process() != 0) return -1;
  }

  uv_signal_init(server->loop, &server->sigterm);
  uv_signal_init(server->loop, &server->sigint);
  uv_timer_init(server->loop, &server->shutdown_timer);
  server->sigterm.data = server->sigint.data = server->shutdown_timer.data = server;
  uv_signal_start(&server->sigterm, on_signal, SIGTERM);
  uv_signal_start(&server->sigint, on_signal, SIGINT);
  if (fds != NULL) {
    /* A worker: the master forked it with these blocked; the handlers are in place now
     * (a signal that came meanwhile is pending and arrives here). */
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_UNBLOCK, &mask, NULL);
  }
  if (ready_fd >= 0) {
    ssize_t n;
    do n = write(ready_fd, "r", 1);
    while (n < 0 && errno == EINTR);
  }
  return 0;
}

/* --workers 0: one per CPU this process may run on. */
static unsigned default_workers(void) {
  cpu_set_t set;
  long n = 0;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n <= 0) n = 1;
  return n > SPEEDYD_MAX_WORKERS ? SPEEDYD_MAX_WORKERS : (unsigned)n;
}

/* A worker's turn allocates a few hundred KiB (the turn's streams, its answers' output
 * buffers) and frees them when its connections go idle. glibc's default gives the top of
 * the heap back to the kernel as soon as more than about 128-256 KiB are free there, so at
 * one connection with 100 streams every turn paid three brk calls and six page faults:
 * about 15 % of the worker's CPU (docs/performance.md). Keep up to KEEP_FREED_TOP free at
 * the heap's top (per process: each worker has its own heap), and take blocks from the
 * heap up to BUF_KEEP_MAX's size, the largest output buffer a connection keeps (src/io),
 * so those are not mapped and unmapped each turn either. */
#define KEEP_FREED_TOP (16u << 20)
#define HEAP_BLOCK_MAX (1u << 20)
static void keep_freed_memory(void) {
  (void)mallopt(M_MMAP_THRESHOLD, HEAP_BLOCK_MAX);
  (void)mallopt(M_TRIM_THRESHOLD, KEEP_FREED_TOP);
}

int main(int argc, char **argv) {
  static speedyd_server server;
  int done;
  int rv = speedyd_opts_parse(&server.config, argc, argv, &done);
  if (rv != 0 || done) return rv;
  signal(SIGPIPE, SIG_IGN);
  keep_freed_memory();
  server.docroot.dir_fd = -1;
  unsigned workers = server.config.workers ? server.config.workers : default_workers();
  int status;
  if (setup(&server) != 0) {
    status = SPEEDYD_EXIT_FAILURE;
  } else if (workers == 1) {
    status = speedyd_run(&server, NULL, -1);
  } else {
    int child;
    status = speedyd_workers_run(&server, workers, &child);
  }
  if (server.docroot.dir_fd >= 0) http_docroot_close(&server.docroot);
  http_manifest_del(server.manifest);
  replay_plan_del(server.replay);
  http_gzip_cache_del(server.gzip_cache);
  speedyd_file_cache_del(server.file_cache);
  if (server.tls != NULL) io_tls_del(server.tls);
  speedyd_addr_table_del(&server);
  speedyd_log_close(&server);
  return status;
}
