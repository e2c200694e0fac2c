/* speedyd_workers.c — the master of a multi-process speedyd (--workers N, N > 1).
 *
 * Why processes, not threads: a worker is the single-process server as it always was
 * (one libuv loop, nothing thread-safe needed), memory of one worker cannot corrupt
 * another's, and a crashed worker takes only its own connections down.
 *
 * Order: main.c has loaded everything that needs privileges (logs, docroot or plan, TLS
 * keys — the session-ticket keys too, so every worker starts from the same ones). Here
 * the master makes, for every --listen, one SO_REUSEPORT socket per worker, bound but
 * not listening (the first learns the port when it is 0; bound sockets that do not
 * listen get no connections), and forks. Each worker drops --user privileges, keeps its
 * own sockets, listens on them, tells the master on a pipe, and runs its loop; the
 * kernel spreads connections over the listening sockets, so no lock is shared. Once
 * every worker listens, the master writes --port-file (as it could before --user in a
 * single process) and drops privileges too, so a restarted worker starts without them.
 *
 * Signals: SIGTERM / SIGINT are forwarded to every worker (each shuts down gracefully:
 * GOAWAY, in-flight answers finish, exit 0); a second one is forwarded too (abort at
 * once). The master exits 0 when every worker exited 0, else 1; it waits at most
 * --shutdown-timeout + 5 s before killing what is left.
 *
 * A worker that dies unexpectedly (a signal, or an exit while the server is not
 * stopping) is logged and restarted on the same sockets (connections queued on them
 * meanwhile are served by the new worker). One that dies within WORKER_MIN_LIFE_MS of
 * its start is not restarted: a crash loop stops the server, which exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "speedyd.h"

#define WORKER_MIN_LIFE_MS 1000
#define WORKER_START_TIMEOUT_MS 30000

typedef struct worker {
  pid_t pid; /* 0: not running */
  int64_t started_ns;
} worker;

typedef struct master {
  speedyd_server *server;
  unsigned n_workers;
  worker *workers;
  int *fds; /* [listen][worker], -1 once closed */
  int ready_pipe[2];
  int signal_fd;
  sigset_t old_mask;
  int stopping;
  int status; /* the exit status so far */
  int64_t deadline_ns;
} master;

static int *fd_at(master *m, size_t listen, unsigned w) {
  return &m->fds[listen * m->n_workers + w];
}

static void close_fds(master *m, int keep_worker) {
  for (size_t i = 0; i < m->server->config.n_listens; i++)
    for (unsigned w = 0; w < m->n_workers; w++) {
      int *fd = fd_at(m, i, w);
      if (*fd >= 0 && (int)w != keep_worker) {
        close(*fd);
        *fd = -1;
      }
    }
}

/* One bound, not listening SO_REUSEPORT socket per listener and worker. */
static int bind_sockets(master *m) {
  speedyd_config *config = &m->server->config;
  for (size_t i = 0; i < config->n_listens; i++) {
    speedyd_listen *l = &config->listens[i];
    for (unsigned w = 0; w < m->n_workers; w++) {
      int port = l->port;
      int rv = io_listen_socket_new(l->addr, l->port, fd_at(m, i, w), &port);
      if (rv != 0) {
        fprintf(stderr, "speedyd: cannot listen on %s%s%s:%d: %s\n",
                strchr(l->addr, ':') ? "[" : "", l->addr, strchr(l->addr, ':') ? "]" : "", l->port,
                io_strerror(rv));
        return -1;
      }
      l->port = port; /* the others join the port the first one got */
    }
  }
  return 0;
}

/* Forks worker w. In the child, runs it and returns its exit status with *child set. */
static int spawn(master *m, unsigned w, int *child) {
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    speedyd_log_error(m->server, NULL, "cannot start worker %u: %s", w, strerror(errno));
    return -1;
  }
  if (pid > 0) {
    m->workers[w].pid = pid;
    m->workers[w].started_ns = speedyd_now_ns();
    return 0;
  }
  *child = 1;
  /* A master killed outright must not leave workers serving on their own. */
  (void)prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) return 0;
  close(m->signal_fd);
  close(m->ready_pipe[0]);
  m->signal_fd = m->ready_pipe[0] = -1;
  close_fds(m, (int)w);
  /* Its own process group: a terminal's Ctrl-C reaches the master alone, which forwards
   * it once (twice would mean "abort at once"). The signals stay blocked until the
   * worker's handlers are in place (speedyd_run unblocks them). */
  (void)setpgid(0, 0);
  const char *user = m->server->config.user;
  if ((user != NULL && speedyd_drop_privileges(user) != 0) || speedyd_harden_process() != 0)
    return SPEEDYD_EXIT_FAILURE;
  size_t n = m->server->config.n_listens;
  int *mine = calloc(n, sizeof(*mine));
  if (mine == NULL) return SPEEDYD_EXIT_FAILURE;
  for (size_t i = 0; i < n; i++) {
    mine[i] = *fd_at(m, i, w);
    *fd_at(m, i, w) = -1; /* the listeners own them now */
  }
  m->server->worker_id = (int)w + 1;
  int status = speedyd_run(m->server, mine, m->ready_pipe[1]);
  free(mine);
  return status;
}

static void stop_all(master *m, int signum) {
  if (!m->stopping) {
    m->stopping = 1;
    int64_t grace = (int64_t)m->server->config.shutdown_timeout_ms + 5000;
    m->deadline_ns = speedyd_now_ns() + grace * 1000000;
    close_fds(m, -1); /* the workers' own copies close with their listeners */
  }
  for (unsigned w = 0; w < m->n_workers; w++)
    if (m->workers[w].pid > 0) kill(m->workers[w].pid, signum);
}

static unsigned running(const master *m) {
  unsigned n = 0;
  for (unsigned w = 0; w < m->n_workers; w++) n += m->workers[w].pid > 0;
  return n;
}

/* Reaps exited workers; restarts the ones that died unexpectedly. Returns 1 in a child
 * (a restarted worker) with *child_status set. */
static int reap(master *m, int *child_status) {
  int wstatus;
  pid_t pid;
  while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
    unsigned w = 0;
    while (w < m->n_workers && m->workers[w].pid != pid) w++;
    if (w == m->n_workers) continue;
    m->workers[w].pid = 0;
    int clean = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    char how[64];
    if (WIFSIGNALED(wstatus))
      snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(wstatus));
    else
      snprintf(how, sizeof(how), "exited with status %d", WEXITSTATUS(wstatus));
    if (m->stopping) {
      if (!clean) {
        speedyd_log_error(m->server, NULL, "worker %u (pid %d) %s", w + 1, (int)pid, how);
        m->status = SPEEDYD_EXIT_FAILURE;
      }
      continue;
    }
    int64_t lived_ms = (speedyd_now_ns() - m->workers[w].started_ns) / 1000000;
    if (lived_ms < WORKER_MIN_LIFE_MS) {
      speedyd_log_error(m->server, NULL,
                        "worker %u (pid %d) %s %lld ms after it started: stopping the server",
                        w + 1, (int)pid, how, (long long)lived_ms);
      m->status = SPEEDYD_EXIT_FAILURE;
      stop_all(m, SIGTERM);
      continue;
    }
    speedyd_log_error(m->server, NULL, "worker %u (pid %d) %s: restarting it", w + 1, (int)pid,
                      how);
    int child = 0;
    int rv = spawn(m, w, &child);
    if (child) {
      *child_status = rv;
      return 1;
    }
    if (rv != 0) {
      m->status = SPEEDYD_EXIT_FAILURE;
      stop_all(m, SIGTERM);
    }
  }
  return 0;
}

/* Handles one signal from the signalfd. Returns 1 in a restarted child. */
static int on_signal(master *m, int *child_status) {
  struct signalfd_siginfo info;
  ssize_t n = read(m->signal_fd, &info, sizeof(info));
  if (n != (ssize_t)sizeof(info)) return 0;
  if (info.ssi_signo == SIGCHLD) return reap(m, child_status);
  if (!m->stopping)
    speedyd_log_error(m->server, NULL, "%s: stopping %u worker(s)",
                      info.ssi_signo == SIGINT ? "SIGINT" : "SIGTERM", running(m));
  stop_all(m, (int)info.ssi_signo);
  return 0;
}

/* The master's life after the workers started. Returns the exit status; in a worker
 * restarted from here, returns its status with *child set. */
static int supervise(master *m, int *child) {
  unsigned ready = 0;
  int64_t start_deadline = speedyd_now_ns() + (int64_t)WORKER_START_TIMEOUT_MS * 1000000;
  int announced = 0; /* the listening line and --port-file, once every worker listens */
  while (running(m) > 0) {
    struct pollfd pfd[2] = {{.fd = m->signal_fd, .events = POLLIN},
                            {.fd = m->ready_pipe[0], .events = POLLIN}};
    int timeout = 1000;
    if (poll(pfd, 2, timeout) < 0 && errno != EINTR) break;
    if (pfd[1].revents & POLLIN) {
      char bytes[64];
      ssize_t n = read(m->ready_pipe[0], bytes, sizeof(bytes));
      if (n > 0) ready += (unsigned)n;
    }
    if (!announced && ready >= m->n_workers && !m->stopping) {
      announced = 1;
      speedyd_print_listening(m->server);
      /* Then the master gives up root too (the port file may need it). */
      const char *user = m->server->config.user;
      if ((m->server->config.port_file != NULL && speedyd_write_port_file(m->server) != 0) ||
          (user != NULL && speedyd_drop_privileges(user) != 0) || speedyd_harden_process() != 0) {
        m->status = SPEEDYD_EXIT_FAILURE;
        stop_all(m, SIGTERM);
      }
    }
    if (pfd[0].revents & POLLIN) {
      int status = 0;
      if (on_signal(m, &status)) {
        *child = 1;
        return status;
      }
    }
    int64_t now = speedyd_now_ns();
    if (!m->stopping && ready < m->n_workers && now > start_deadline) {
      speedyd_log_error(m->server, NULL, "workers did not start in time");
      m->status = SPEEDYD_EXIT_FAILURE;
      stop_all(m, SIGTERM);
    }
    if (m->stopping && now > m->deadline_ns) {
      speedyd_log_error(m->server, NULL, "workers still running after the shutdown deadline");
      m->status = SPEEDYD_EXIT_FAILURE;
      for (unsigned w = 0; w < m->n_workers; w++)
        if (m->workers[w].pid > 0) kill(m->workers[w].pid, SIGKILL);
      m->deadline_ns = now + 5000000000LL;
    }
  }
  return m->status;
}

int speedyd_workers_run(speedyd_server *server, unsigned n_workers, int *child) {
  master m = {.server = server, .n_workers = n_workers, .signal_fd = -1, .ready_pipe = {-1, -1}};
  *child = 0;
  size_t n_fds = server->config.n_listens * n_workers;
  m.workers = calloc(n_workers, sizeof(*m.workers));
  m.fds = malloc(n_fds * sizeof(*m.fds));
  if (m.workers == NULL || m.fds == NULL) {
    free(m.workers);
    free(m.fds);
    fprintf(stderr, "speedyd: out of memory\n");
    return SPEEDYD_EXIT_FAILURE;
  }
  for (size_t i = 0; i < n_fds; i++) m.fds[i] = -1;
  int status = SPEEDYD_EXIT_FAILURE;
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGCHLD);
  if (bind_sockets(&m) != 0) goto done;
  if (pipe2(m.ready_pipe, O_CLOEXEC) != 0 || sigprocmask(SIG_BLOCK, &mask, &m.old_mask) != 0 ||
      (m.signal_fd = signalfd(-1, &mask, SFD_CLOEXEC)) < 0) {
    fprintf(stderr, "speedyd: cannot start workers: %s\n", strerror(errno));
    goto done;
  }
  m.status = 0;
  for (unsigned w = 0; w < n_workers; w++) {
    int rv = spawn(&m, w, child);
    if (*child) {
      status = rv;
      goto done;
    }
    if (rv != 0) {
      m.status = SPEEDYD_EXIT_FAILURE;
      stop_all(&m, SIGTERM);
      break;
    }
  }
  status = supervise(&m, child);
done:
  close_fds(&m, -1);
  if (m.signal_fd >= 0) close(m.signal_fd);
  for (int i = 0; i < 2; i++)
    if (m.ready_pipe[i] >= 0) close(m.ready_pipe[i]);
  if (!*child && m.signal_fd >= 0) sigprocmask(SIG_SETMASK, &m.old_mask, NULL);
  free(m.workers);
  free(m.fds);
  return status;
}
