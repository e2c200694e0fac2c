/* ns.c — namespaces, TUN devices, sysctls and device counters (see ns.h).
 *
 * Namespaces are made with iproute2 (`ip netns add`), so that they are ordinary named
 * namespaces that `ip netns exec` can enter while a link runs; addresses and routes are
 * also set with `ip -n NS -batch -` (one process per namespace). Everything per packet or
 * per statistics read is done in-process: TUN fds, sysctls, rtnetlink.
 */
#define _GNU_SOURCE
#include "ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/if_tun.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void netem_ns_make_name(char name[NETEM_NS_NAME_MAX], const char *tag) {
  snprintf(name, NETEM_NS_NAME_MAX, NETEM_NS_PREFIX "%ld-%s", (long)getpid(), tag);
}

static const char *ip_path(void) {
  static const char *const candidates[] = {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"};
  for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
    if (access(candidates[i], X_OK) == 0) return candidates[i];
  return "ip";
}

/* Copies the first line of text into err. */
static void first_line(char *err, size_t errlen, const char *text) {
  if (err == NULL || errlen == 0) return;
  size_t n = strcspn(text, "\n");
  if (n >= errlen) n = errlen - 1;
  memcpy(err, text, n);
  err[n] = '\0';
}

int netem_ip_run(const char *const argv[], const char *batch, char *err, size_t errlen) {
  char *args[32];
  size_t argc = 0;
  args[argc++] = (char *)ip_path();
  for (size_t i = 1; argv[i] != NULL && argc < 29; i++) args[argc++] = (char *)argv[i];
  if (batch != NULL) {
    args[argc++] = "-batch";
    args[argc++] = "-";
  }
  args[argc] = NULL;

  int in_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0) return -1;
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(err_pipe[1], 2);
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, 1);
    execv(args[0], args);
    execvp("ip", args);
    _exit(127);
  }
  close(in_pipe[0]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(in_pipe[1]);
    close(err_pipe[0]);
    first_line(err, errlen, "cannot fork to run ip");
    return -1;
  }
  if (batch != NULL) {
    size_t left = strlen(batch);
    const char *p = batch;
    /* SIGPIPE if ip dies early would kill us: ignore it for this write. */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigaction(SIGPIPE, &ignore, &old);
    while (left > 0) {
      ssize_t n = write(in_pipe[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= (size_t)n;
    }
    sigaction(SIGPIPE, &old, NULL);
  }
  close(in_pipe[1]);
  char text[512];
  size_t have = 0;
  for (;;) {
    ssize_t n = read(err_pipe[0], text + have, sizeof text - 1 - have);
    if (n <= 0) break;
    have += (size_t)n;
    if (have == sizeof text - 1) {
      char sink[256];
      while (read(err_pipe[0], sink, sizeof sink) > 0) {
      }
      break;
    }
  }
  text[have] = '\0';
  close(err_pipe[0]);
  int status;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
    first_line(err, errlen, "cannot run ip (iproute2 is needed)");
  else
    first_line(err, errlen, have > 0 ? text : "ip failed");
  return -1;
}

int netem_ns_add(const char *name, char *err, size_t errlen) {
  const char *argv[] = {"ip", "netns", "add", name, NULL};
  return netem_ip_run(argv, NULL, err, errlen);
}

/* Kills every process inside the namespace (leftover servers of a killed run). */
static void ns_kill_processes(const char *name) {
  int ns_fd = netem_ns_open(name);
  if (ns_fd < 0) return;
  struct stat ns_stat;
  if (fstat(ns_fd, &ns_stat) != 0) {
    close(ns_fd);
    return;
  }
  close(ns_fd);
  DIR *proc = opendir("/proc");
  if (proc == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(proc)) != NULL) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0 || pid == (long)getpid()) continue;
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/ns/net", pid);
    struct stat st;
    if (stat(path, &st) == 0 && st.st_ino == ns_stat.st_ino && st.st_dev == ns_stat.st_dev)
      kill((pid_t)pid, SIGKILL);
  }
  closedir(proc);
}

void netem_ns_delete(const char *name) {
  ns_kill_processes(name);
  const char *argv[] = {"ip", "netns", "delete", name, NULL};
  char err[128];
  if (netem_ip_run(argv, NULL, err, sizeof err) != 0)
    fprintf(stderr, "speedy netem: cannot delete namespace %s: %s\n", name, err);
}

int netem_ns_cleanup_stale(void) {
  DIR *dir = opendir("/run/netns");
  if (dir == NULL) return 0;
  char names[64][NETEM_NS_NAME_MAX];
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL && count < 64) {
    size_t prefix = strlen(NETEM_NS_PREFIX);
    if (strncmp(entry->d_name, NETEM_NS_PREFIX, prefix) != 0) continue;
    char *end;
    long pid = strtol(entry->d_name + prefix, &end, 10);
    if (end == entry->d_name + prefix || *end != '-' || pid <= 0) continue;
    if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue; /* its owner lives (or we cannot tell): not ours to remove */
    if (strlen(entry->d_name) >= NETEM_NS_NAME_MAX) continue;
    strcpy(names[count++], entry->d_name);
  }
  closedir(dir);
  for (int i = 0; i < count; i++) netem_ns_delete(names[i]);
  return count;
}

int netem_ns_open(const char *name) {
  char path[128];
  snprintf(path, sizeof path, "/run/netns/%s", name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

int netem_ns_enter(int ns_fd) { return setns(ns_fd, CLONE_NEWNET) == 0 ? 0 : -errno; }

int netem_tun_open(const char *name) {
  int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -errno;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  /* Plain IP packets: no packet-info header and no virtio-net header, hence no GSO. */
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
  if (ioctl(fd, TUNSETIFF, &ifr) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

int netem_sysctl_get(const char *path, char *buf, size_t len) {
  char full[256];
  snprintf(full, sizeof full, "/proc/sys/%s", path);
  int fd = open(full, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t n = read(fd, buf, len - 1);
  int e = errno;
  close(fd);
  if (n < 0) return -e;
  buf[n] = '\0';
  buf[strcspn(buf, "\n")] = '\0';
  return 0;
}

int netem_sysctl_set(const char *path, const char *value) {
  char full[256];
  snprintf(full, sizeof full, "/proc/sys/%s", path);
  int fd = open(full, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t len = strlen(value);
  ssize_t n = write(fd, value, len);
  int e = errno;
  close(fd);
  if (n < 0) return -e;
  char back[128];
  int rc = netem_sysctl_get(path, back, sizeof back);
  if (rc != 0) return rc;
  /* Multi-valued sysctls come back tab-separated; compare the first field only. */
  return strncmp(back, value, strcspn(value, " \t")) == 0 ? 0 : -EIO;
}

int netem_rtnl_open(void) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return -errno;
  struct sockaddr_nl addr = {.nl_family = AF_NETLINK};
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  return fd;
}

int netem_rtnl_drops(int rtnl_fd, int ifindex, uint64_t *rx_drops, uint64_t *tx_drops) {
  struct {
    struct nlmsghdr header;
    struct ifinfomsg info;
  } request;
  memset(&request, 0, sizeof request);
  request.header.nlmsg_len = NLMSG_LENGTH(sizeof request.info);
  request.header.nlmsg_type = RTM_GETLINK;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.header.nlmsg_seq = 1;
  request.info.ifi_family = AF_UNSPEC;
  request.info.ifi_index = ifindex;
  if (send(rtnl_fd, &request, request.header.nlmsg_len, 0) < 0) return -errno;
  static _Thread_local char reply[16384];
  ssize_t n = recv(rtnl_fd, reply, sizeof reply, 0);
  if (n < 0) return -errno;
  for (struct nlmsghdr *h = (struct nlmsghdr *)reply; NLMSG_OK(h, (size_t)n);
       h = NLMSG_NEXT(h, n)) {
    if (h->nlmsg_type == NLMSG_ERROR) return -EIO;
    if (h->nlmsg_type != RTM_NEWLINK) continue;
    struct ifinfomsg *info = NLMSG_DATA(h);
    int attr_len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof *info);
    for (struct rtattr *a = IFLA_RTA(info); RTA_OK(a, attr_len); a = RTA_NEXT(a, attr_len)) {
      if (a->rta_type != IFLA_STATS64 || RTA_PAYLOAD(a) < sizeof(struct rtnl_link_stats64))
        continue;
      struct rtnl_link_stats64 stats;
      memcpy(&stats, RTA_DATA(a), sizeof stats);
      *rx_drops = stats.rx_dropped + stats.rx_fifo_errors + stats.rx_missed_errors;
      *tx_drops = stats.tx_dropped + stats.tx_fifo_errors;
      return 0;
    }
  }
  return -ENOENT;
}
