/* netem.c — the link: configuration and profiles, bring-up and tear-down of the two
 * namespaces with their TUN devices, addresses, routes and TCP settings, processes run on
 * either side, and statistics (see netem.h).
 */
#define _GNU_SOURCE
#include "netem.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "forward.h"
#include "ns.h"
#include "tcp.h"

#define NETEM_TUN_NAME "netem0"
#define NETEM_TUN_TXQUEUELEN 4096u /* see link_configure_addresses */
#define NETEM_CHILDREN_MAX 256

struct netem_link {
  netem_config config;
  char ns_name[2][NETEM_NS_NAME_MAX];
  bool ns_made[2];
  int ns_fd[2], tun_fd[2], rtnl_fd[2], counter_fds[2][2];
  int tun_ifindex[2];
  int home_ns_fd; /* the namespace netem_leave() returns to */
  char client_addr[16];
  netem_forwarder fwd;
  bool forwarder_ready;
  pthread_mutex_t children_lock;
  pid_t children[NETEM_CHILDREN_MAX];
  size_t child_count;
};

static const struct {
  const char *name;
  uint64_t down_bps, up_bps, rtt_ms;
} profiles[] = {
    /* bandwidths: the SPDY white paper's DSL and cable; RTTs: WebPageTest's profiles of
     * the same names (an assumption: the white paper gave none). */
    {"dsl", 2000000, 375000, 50},
    {"cable", 4000000, 1000000, 28},
    {"3g", 1600000, 768000, 150},
    {"lte", 12000000, 12000000, 70},
};

const char *netem_profile_names(void) { return "dsl, cable, 3g, lte"; }

void netem_config_init(netem_config *config) {
  memset(config, 0, sizeof *config);
  netem_tcp_preset(&config->tcp, "modern");
  snprintf(config->profile, sizeof config->profile, "custom");
  config->server_addrs = 1;
  config->realtime = true;
  if (getrandom(&config->seed, sizeof config->seed, GRND_NONBLOCK) != sizeof config->seed)
    config->seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
}

int netem_config_profile(netem_config *config, const char *name) {
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
    if (strcmp(profiles[i].name, name) != 0) continue;
    config->down.rate_bps = profiles[i].down_bps;
    config->up.rate_bps = profiles[i].up_bps;
    config->down.delay_ns = profiles[i].rtt_ms * 500000u;
    config->up.delay_ns = profiles[i].rtt_ms * 500000u;
    snprintf(config->profile, sizeof config->profile, "%s", name);
    return 0;
  }
  return -EINVAL;
}

uint64_t netem_config_rtt_ns(const netem_config *config) {
  return config->down.delay_ns + config->up.delay_ns;
}

static void server_addr_format(unsigned i, char *buf, size_t len) {
  /* 198.19.x.y with y in 1..250: never a .0 or .255 that some software refuses. */
  snprintf(buf, len, "198.19.%u.%u", (i / 250u) % 256u, i % 250u + 1u);
}

const char *netem_ns_name(const netem_link *link, netem_side side) { return link->ns_name[side]; }

const char *netem_client_addr(const netem_link *link) { return link->client_addr; }

int netem_server_addr(const netem_link *link, unsigned i, char *buf, size_t len) {
  if (i >= link->config.server_addrs) return -EINVAL;
  server_addr_format(i, buf, len);
  return 0;
}

const netem_config *netem_link_config(const netem_link *link) { return &link->config; }

int netem_cleanup_stale(void) { return netem_ns_cleanup_stale(); }

/* Inside a side's namespace (the calling thread is there): TCP settings, the TUN device,
 * an rtnetlink socket and the counter files, all bound to that namespace. */
static int link_setup_inside(netem_link *link, netem_side side, char *err, size_t errlen) {
  int rc = netem_tcp_apply(&link->config.tcp, err, errlen);
  if (rc != 0) return rc;
  link->tun_fd[side] = netem_tun_open(NETEM_TUN_NAME);
  if (link->tun_fd[side] < 0) {
    snprintf(err, errlen, "cannot create TUN device: %s", strerror(-link->tun_fd[side]));
    return link->tun_fd[side];
  }
  link->tun_ifindex[side] = (int)if_nametoindex(NETEM_TUN_NAME);
  link->rtnl_fd[side] = netem_rtnl_open();
  if (link->tun_ifindex[side] == 0 || link->rtnl_fd[side] < 0) {
    snprintf(err, errlen, "cannot query the TUN device over rtnetlink");
    return -EIO;
  }
  rc = netem_tcp_counters_open(link->counter_fds[side]);
  if (rc != 0) {
    snprintf(err, errlen, "cannot open the namespace's TCP counters: %s", strerror(-rc));
    return rc;
  }
  return 0;
}

/* Addresses, routes (with the initial congestion window) and links up, through one
 * `ip -batch` per side. */
static int link_configure_addresses(netem_link *link, netem_side side, char *err, size_t errlen) {
  size_t cap = 256 + (size_t)link->config.server_addrs * 48u;
  char *batch = malloc(cap);
  if (batch == NULL) return -ENOMEM;
  /* txqueuelen: the kernel's queue in front of the emulator's reads is its intake, not
   * part of the modelled link; a deep one keeps a burst sent while the forwarding thread
   * waits for the CPU from being dropped outside the model (tun's default is 500). */
  size_t used =
      (size_t)snprintf(batch, cap, "link set lo up\nlink set %s mtu %u txqueuelen %u up\n",
                       NETEM_TUN_NAME, NETEM_MTU, NETEM_TUN_TXQUEUELEN);
  int initcwnd = link->config.tcp.initcwnd;
  if (side == NETEM_SIDE_CLIENT) {
    used += (size_t)snprintf(batch + used, cap - used,
                             "addr add %s/32 dev %s\n"
                             "route add 198.19.0.0/16 dev %s src %s initcwnd %d\n",
                             link->client_addr, NETEM_TUN_NAME, NETEM_TUN_NAME, link->client_addr,
                             initcwnd);
  } else {
    char addr[16];
    for (unsigned i = 0; i < link->config.server_addrs && used < cap; i++) {
      server_addr_format(i, addr, sizeof addr);
      used += (size_t)snprintf(batch + used, cap - used, "addr add %s/32 dev %s\n", addr,
                               NETEM_TUN_NAME);
    }
    if (used < cap)
      snprintf(batch + used, cap - used, "route add 198.18.0.0/16 dev %s initcwnd %d\n",
               NETEM_TUN_NAME, initcwnd);
  }
  const char *argv[] = {"ip", "-n", link->ns_name[side], NULL};
  char ip_err[200];
  int rc = netem_ip_run(argv, batch, ip_err, sizeof ip_err);
  free(batch);
  if (rc != 0) {
    snprintf(err, errlen, "configuring namespace %s: %s", link->ns_name[side], ip_err);
    return -EIO;
  }
  return 0;
}

int netem_start(const netem_config *config, netem_link **out, char *err, size_t errlen) {
  static atomic_uint instance;
  char scratch[8];
  if (err == NULL) {
    err = scratch;
    errlen = sizeof scratch;
  }
  err[0] = '\0';
  if (geteuid() != 0) {
    snprintf(err, errlen,
             "needs root: it creates network namespaces and TUN devices "
             "(run it as root, e.g. sudo speedy netem ...)");
    return -EPERM;
  }
  if (access("/dev/net/tun", R_OK | W_OK) != 0) {
    snprintf(err, errlen, "cannot use /dev/net/tun: %s (the tun module is needed)",
             strerror(errno));
    return -ENODEV;
  }
  if (config->server_addrs < 1 || config->server_addrs > NETEM_MAX_SERVER_ADDRS) {
    snprintf(err, errlen, "server addresses must be 1..%u", NETEM_MAX_SERVER_ADDRS);
    return -EINVAL;
  }
  int rc = netem_tcp_check_available(config->tcp.congestion_control, err, errlen);
  if (rc != 0) return rc;
  bool allowed_changed = false;
  rc = netem_tcp_allow(config->tcp.congestion_control, &allowed_changed, err, errlen);
  if (rc != 0) return rc;
  if (allowed_changed)
    fprintf(stderr,
            "speedy netem: added %s to the host's net.ipv4.tcp_allowed_congestion_control "
            "(namespaces may only use allowed ones)\n",
            config->tcp.congestion_control);
  netem_ns_cleanup_stale();

  netem_link *link = calloc(1, sizeof *link);
  if (link == NULL) return -ENOMEM;
  link->config = *config;
  pthread_mutex_init(&link->children_lock, NULL);
  snprintf(link->client_addr, sizeof link->client_addr, "198.18.0.1");
  for (int s = 0; s < 2; s++) {
    link->ns_fd[s] = link->tun_fd[s] = link->rtnl_fd[s] = -1;
    link->counter_fds[s][0] = link->counter_fds[s][1] = -1;
  }
  link->home_ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (link->home_ns_fd < 0) {
    rc = -errno;
    snprintf(err, errlen, "cannot open this thread's network namespace: %s", strerror(errno));
    goto fail;
  }

  unsigned number = atomic_fetch_add(&instance, 1);
  for (int s = 0; s < 2; s++) {
    char tag[24];
    snprintf(tag, sizeof tag, "%u-%c", number, s == NETEM_SIDE_CLIENT ? 'c' : 's');
    netem_ns_make_name(link->ns_name[s], tag);
    char ip_err[200];
    if (netem_ns_add(link->ns_name[s], ip_err, sizeof ip_err) != 0) {
      snprintf(err, errlen, "cannot create namespace %s: %s", link->ns_name[s], ip_err);
      rc = -EIO;
      goto fail;
    }
    link->ns_made[s] = true;
    link->ns_fd[s] = netem_ns_open(link->ns_name[s]);
    if (link->ns_fd[s] < 0) {
      rc = link->ns_fd[s];
      snprintf(err, errlen, "cannot open namespace %s: %s", link->ns_name[s], strerror(-rc));
      goto fail;
    }
    rc = netem_ns_enter(link->ns_fd[s]);
    if (rc == 0) {
      rc = link_setup_inside(link, (netem_side)s, err, errlen);
      int back = netem_ns_enter(link->home_ns_fd);
      if (back != 0) {
        /* This thread would stay in the link's namespace: nothing safe remains. */
        fprintf(stderr, "speedy netem: cannot return to the host namespace: %s\n", strerror(-back));
        abort();
      }
    } else {
      snprintf(err, errlen, "cannot enter namespace %s: %s", link->ns_name[s], strerror(-rc));
    }
    if (rc != 0) goto fail;
    rc = link_configure_addresses(link, (netem_side)s, err, errlen);
    if (rc != 0) goto fail;
  }
  rc = netem_forwarder_init(&link->fwd, &link->config, link->tun_fd[NETEM_SIDE_CLIENT],
                            link->tun_fd[NETEM_SIDE_SERVER]);
  if (rc != 0) {
    snprintf(err, errlen, "cannot set up the forwarder: %s", strerror(-rc));
    goto fail;
  }
  link->forwarder_ready = true;
  /* The queue limits the forwarder settled on (defaults filled in) are the ones run. */
  for (int d = 0; d < 2; d++) {
    netem_dir_config *dir = d == NETEM_DIR_DOWN ? &link->config.down : &link->config.up;
    const netem_model *model = &link->fwd.lane[d].model;
    dir->queue_bytes = model->queue_limit_bytes;
    dir->queue_packets = model->queue_limit_packets;
  }
  rc = netem_forwarder_start(&link->fwd);
  if (rc != 0) {
    snprintf(err, errlen, "cannot start the forwarding thread: %s", strerror(-rc));
    goto fail;
  }
  *out = link;
  return 0;
fail:
  netem_stop(link);
  return rc != 0 ? rc : -EIO;
}

static void link_end_children(netem_link *link) {
  pthread_mutex_lock(&link->children_lock);
  size_t count = link->child_count;
  pid_t children[NETEM_CHILDREN_MAX];
  memcpy(children, link->children, count * sizeof children[0]);
  link->child_count = 0;
  pthread_mutex_unlock(&link->children_lock);
  if (count == 0) return;
  for (size_t i = 0; i < count; i++) kill(-children[i], SIGTERM); /* the whole process group */
  /* Grace period of up to 2 s for all of them together, then SIGKILL. */
  uint64_t deadline = netem_now_ns() + 2000000000u;
  for (size_t i = 0; i < count; i++) {
    for (;;) {
      pid_t r = waitpid(children[i], NULL, WNOHANG);
      /* ECHILD: the caller reaped it already. */
      if (r == children[i] || (r < 0 && errno == ECHILD)) break;
      if (netem_now_ns() > deadline) {
        kill(-children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
        break;
      }
      struct timespec pause = {.tv_nsec = 5000000};
      nanosleep(&pause, NULL);
    }
    kill(-children[i], SIGKILL); /* stragglers left in its group */
  }
}

void netem_stop(netem_link *link) {
  if (link == NULL) return;
  if (link->forwarder_ready) netem_forwarder_free(&link->fwd);
  link->forwarder_ready = false;
  link_end_children(link);
  for (int s = 0; s < 2; s++) {
    int *fds[] = {&link->tun_fd[s], &link->rtnl_fd[s], &link->counter_fds[s][0],
                  &link->counter_fds[s][1], &link->ns_fd[s]};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) {
      if (*fds[i] >= 0) close(*fds[i]);
      *fds[i] = -1;
    }
    if (link->ns_made[s]) netem_ns_delete(link->ns_name[s]);
    link->ns_made[s] = false;
  }
  if (link->home_ns_fd >= 0) close(link->home_ns_fd);
  pthread_mutex_destroy(&link->children_lock);
  free(link);
}

int netem_enter(netem_link *link, netem_side side) { return netem_ns_enter(link->ns_fd[side]); }

int netem_leave(netem_link *link) { return netem_ns_enter(link->home_ns_fd); }

extern char **environ;

int netem_spawn(netem_link *link, netem_side side, char *const argv[], pid_t *pid_out) {
  /* The environment is built before fork: the child of a threaded process may only make
   * async-signal-safe calls. */
  size_t env_count = 0;
  while (environ[env_count] != NULL) env_count++;
  size_t list_len = (size_t)link->config.server_addrs * 16u + 64u;
  char **envp = calloc(env_count + 4, sizeof *envp);
  char *client_var = malloc(64), *server_var = malloc(64), *list_var = malloc(list_len);
  int rc = 0;
  if (envp == NULL || client_var == NULL || server_var == NULL || list_var == NULL) {
    rc = -ENOMEM;
    goto out;
  }
  char first[16];
  server_addr_format(0, first, sizeof first);
  snprintf(client_var, 64, "SPEEDY_NETEM_CLIENT_ADDR=%s", link->client_addr);
  snprintf(server_var, 64, "SPEEDY_NETEM_SERVER_ADDR=%s", first);
  size_t used = (size_t)snprintf(list_var, list_len, "SPEEDY_NETEM_SERVER_ADDRS=");
  for (unsigned i = 0; i < link->config.server_addrs; i++) {
    char addr[16];
    server_addr_format(i, addr, sizeof addr);
    used += (size_t)snprintf(list_var + used, list_len - used, "%s%s", i ? " " : "", addr);
  }
  size_t n = 0;
  for (size_t i = 0; i < env_count; i++)
    if (strncmp(environ[i], "SPEEDY_NETEM_", 13) != 0) envp[n++] = environ[i];
  envp[n++] = client_var;
  envp[n++] = server_var;
  envp[n++] = list_var;
  envp[n] = NULL;

  pthread_mutex_lock(&link->children_lock);
  if (link->child_count >= NETEM_CHILDREN_MAX) {
    pthread_mutex_unlock(&link->children_lock);
    rc = -EMFILE;
    goto out;
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    if (setns(link->ns_fd[side], CLONE_NEWNET) != 0) _exit(126);
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int reset[] = {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof reset / sizeof reset[0]; i++) signal(reset[i], SIG_DFL);
    execvpe(argv[0], argv, envp);
    _exit(127);
  }
  if (pid < 0) {
    rc = -errno;
    pthread_mutex_unlock(&link->children_lock);
    goto out;
  }
  setpgid(pid, pid); /* also here, so that kill(-pid) works at once */
  link->children[link->child_count++] = pid;
  pthread_mutex_unlock(&link->children_lock);
  *pid_out = pid;
out:
  free(envp);
  free(client_var);
  free(server_var);
  free(list_var);
  return rc;
}

int netem_stats_read(netem_link *link, netem_stats *out) {
  memset(out, 0, sizeof *out);
  if (link->forwarder_ready) netem_forwarder_stats(&link->fwd, out);
  uint64_t rx[2] = {0, 0}, tx[2] = {0, 0};
  int rc = 0;
  for (int s = 0; s < 2; s++) {
    int r = netem_rtnl_drops(link->rtnl_fd[s], link->tun_ifindex[s], &rx[s], &tx[s]);
    if (r != 0) rc = r;
    r = netem_tcp_counters_read(link->counter_fds[s], &out->tcp[s]);
    if (r != 0) rc = r;
  }
  /* down: the server's stack sends into its TUN (tx), we write into the client's (rx) */
  out->down.tun_drops = tx[NETEM_SIDE_SERVER] + rx[NETEM_SIDE_CLIENT];
  out->up.tun_drops = tx[NETEM_SIDE_CLIENT] + rx[NETEM_SIDE_SERVER];
  return rc;
}
