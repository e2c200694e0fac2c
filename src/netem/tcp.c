/* tcp.c — TCP settings per namespace and TCP counters (see tcp.h).
 *
 * New namespaces inherit the host's congestion control (BBR on some hosts, which ignores
 * random loss), so every setting that changes what a page load measures is written
 * explicitly and read back.
 */
#define _GNU_SOURCE
#include "tcp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns.h"

int netem_tcp_preset(netem_tcp_config *tcp, const char *name) {
  if (strcmp(name, "modern") == 0) {
    /* Linux defaults of the 2020s, with the congestion control pinned. */
    snprintf(tcp->congestion_control, sizeof tcp->congestion_control, "cubic");
    tcp->initcwnd = 10;
    tcp->slow_start_after_idle = 1;
    tcp->ecn = 2;           /* accept ECN when the peer asks, never ask */
    tcp->early_retrans = 3; /* tail loss probe */
    tcp->recovery = 1;      /* RACK */
    tcp->fastopen = 1;      /* client side allowed; no server uses it unasked */
  } else if (strcmp(name, "2009") == 0) {
    /* Servers of the original experiment: RFC 3390 initial window, no RACK, no early
     * retransmit or tail loss probe, no ECN, no Fast Open. Cubic was Linux's default
     * since 2.6.19 (2006). The 1 s initial SYN timeout (RFC 6298) cannot be set back
     * to 2009's 3 s from a sysctl. */
    snprintf(tcp->congestion_control, sizeof tcp->congestion_control, "cubic");
    tcp->initcwnd = 3;
    tcp->slow_start_after_idle = 1;
    tcp->ecn = 0;
    tcp->early_retrans = 0;
    tcp->recovery = 0;
    tcp->fastopen = 0;
  } else {
    return -EINVAL;
  }
  snprintf(tcp->preset, sizeof tcp->preset, "%s", name);
  return 0;
}

int netem_tcp_check_available(const char *congestion_control, char *err, size_t errlen) {
  char available[256];
  int rc =
      netem_sysctl_get("net/ipv4/tcp_available_congestion_control", available, sizeof available);
  if (rc != 0) {
    snprintf(err, errlen, "cannot read net.ipv4.tcp_available_congestion_control: %s",
             strerror(-rc));
    return rc;
  }
  char copy[256];
  snprintf(copy, sizeof copy, "%s", available);
  char *save = NULL;
  for (char *word = strtok_r(copy, " \t", &save); word != NULL; word = strtok_r(NULL, " \t", &save))
    if (strcmp(word, congestion_control) == 0) return 0;
  snprintf(err, errlen,
           "congestion control '%s' is not available in this kernel (available: %s); "
           "load it with 'modprobe tcp_%s' or choose another with --cc",
           congestion_control, available, congestion_control);
  return -ENOENT;
}

/* Whether word is one of the space-separated words of list. */
static bool word_in(const char *list, const char *word) {
  size_t len = strlen(word);
  for (const char *p = list; *p != '\0';) {
    p += strspn(p, " \t");
    size_t n = strcspn(p, " \t");
    if (n == len && strncmp(p, word, len) == 0) return true;
    p += n;
  }
  return false;
}

int netem_tcp_allow(const char *congestion_control, bool *changed, char *err, size_t errlen) {
  *changed = false;
  char allowed[256];
  int rc = netem_sysctl_get("net/ipv4/tcp_allowed_congestion_control", allowed, sizeof allowed);
  if (rc != 0) {
    snprintf(err, errlen, "cannot read net.ipv4.tcp_allowed_congestion_control: %s", strerror(-rc));
    return rc;
  }
  if (word_in(allowed, congestion_control)) return 0;
  char wanted[300];
  snprintf(wanted, sizeof wanted, "%s %s", allowed, congestion_control);
  rc = netem_sysctl_set("net/ipv4/tcp_allowed_congestion_control", wanted);
  char back[300];
  if (netem_sysctl_get("net/ipv4/tcp_allowed_congestion_control", back, sizeof back) == 0 &&
      word_in(back, congestion_control)) {
    *changed = true;
    return 0;
  }
  snprintf(err, errlen,
           "a namespace may only use an allowed congestion control, and '%s' is not in "
           "net.ipv4.tcp_allowed_congestion_control (%s) and could not be added: %s",
           congestion_control, allowed, rc != 0 ? strerror(-rc) : "value did not stick");
  return rc != 0 ? rc : -EIO;
}

int netem_tcp_apply(const netem_tcp_config *tcp, char *err, size_t errlen) {
  char numbers[5][16];
  snprintf(numbers[0], sizeof numbers[0], "%d", tcp->slow_start_after_idle);
  snprintf(numbers[1], sizeof numbers[1], "%d", tcp->ecn);
  snprintf(numbers[2], sizeof numbers[2], "%d", tcp->early_retrans);
  snprintf(numbers[3], sizeof numbers[3], "%d", tcp->recovery);
  snprintf(numbers[4], sizeof numbers[4], "%d", tcp->fastopen);
  const struct {
    const char *path, *value;
    int optional; /* absent on kernels without the feature: skipped */
  } settings[] = {
      {"net/ipv6/conf/all/disable_ipv6", "1", 1},
      {"net/ipv6/conf/default/disable_ipv6", "1", 1},
      {"net/ipv4/tcp_congestion_control", tcp->congestion_control, 0},
      {"net/ipv4/tcp_no_metrics_save", "1", 0},
      {"net/ipv4/tcp_slow_start_after_idle", numbers[0], 0},
      {"net/ipv4/tcp_ecn", numbers[1], 0},
      {"net/ipv4/tcp_early_retrans", numbers[2], 0},
      {"net/ipv4/tcp_recovery", numbers[3], 0},
      {"net/ipv4/tcp_fastopen", numbers[4], 0},
  };
  for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
    int rc = netem_sysctl_set(settings[i].path, settings[i].value);
    if (rc == -ENOENT && settings[i].optional) continue;
    if (rc != 0) {
      snprintf(err, errlen, "cannot set %s to %s in the namespace: %s", settings[i].path,
               settings[i].value, rc == -EIO ? "value did not stick" : strerror(-rc));
      return rc;
    }
  }
  return 0;
}

int netem_tcp_counters_open(int fds[2]) {
  /* thread-self: the namespace of this thread, which may differ from the process's. */
  fds[0] = open("/proc/thread-self/net/snmp", O_RDONLY | O_CLOEXEC);
  fds[1] = open("/proc/thread-self/net/netstat", O_RDONLY | O_CLOEXEC);
  if (fds[0] < 0 || fds[1] < 0) {
    int e = errno;
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0) close(fds[1]);
    fds[0] = fds[1] = -1;
    return -e;
  }
  return 0;
}

/* Finds "Prefix: name" in a header line followed by its value line; 0 if absent. */
static uint64_t counter_find(const char *text, const char *prefix, const char *name) {
  size_t prefix_len = strlen(prefix);
  const char *line = text;
  while (line != NULL && *line != '\0') {
    const char *next = strchr(line, '\n');
    if (strncmp(line, prefix, prefix_len) == 0 && line[prefix_len] == ':' && next != NULL) {
      const char *values = next + 1;
      if (strncmp(values, prefix, prefix_len) != 0) return 0;
      /* Walk names and values side by side. */
      const char *n = line + prefix_len + 1, *v = values + prefix_len + 1;
      size_t name_len = strlen(name);
      for (;;) {
        while (*n == ' ') n++;
        while (*v == ' ') v++;
        if (*n == '\n' || *n == '\0' || *v == '\n' || *v == '\0') return 0;
        size_t word = strcspn(n, " \n");
        if (word == name_len && strncmp(n, name, name_len) == 0) return strtoull(v, NULL, 10);
        n += word;
        v += strcspn(v, " \n");
      }
    }
    line = next != NULL ? next + 1 : NULL;
  }
  return 0;
}

static int counter_file_read(int fd, char *buf, size_t len) {
  size_t have = 0;
  for (;;) {
    ssize_t n = pread(fd, buf + have, len - 1 - have, (off_t)have);
    if (n < 0) return -errno;
    if (n == 0 || have + (size_t)n >= len - 1) {
      have += (size_t)(n > 0 ? n : 0);
      break;
    }
    have += (size_t)n;
  }
  buf[have] = '\0';
  return 0;
}

int netem_tcp_counters_read(const int fds[2], netem_tcp_counters *out) {
  memset(out, 0, sizeof *out);
  if (fds[0] < 0 || fds[1] < 0) return -EBADF;
  static _Thread_local char text[16384];
  int rc = counter_file_read(fds[0], text, sizeof text);
  if (rc != 0) return rc;
  out->active_opens = counter_find(text, "Tcp", "ActiveOpens");
  out->passive_opens = counter_find(text, "Tcp", "PassiveOpens");
  out->out_segs = counter_find(text, "Tcp", "OutSegs");
  out->retrans_segs = counter_find(text, "Tcp", "RetransSegs");
  rc = counter_file_read(fds[1], text, sizeof text);
  if (rc != 0) return rc;
  out->timeouts = counter_find(text, "TcpExt", "TCPTimeouts");
  out->syn_retrans = counter_find(text, "TcpExt", "TCPSynRetrans");
  out->loss_probes = counter_find(text, "TcpExt", "TCPLossProbes");
  out->fast_retrans = counter_find(text, "TcpExt", "TCPFastRetrans");
  return 0;
}
