/* tcp.h — the TCP state fixed in each namespace: presets, applying the sysctls, and the
 * per-namespace TCP counters (/proc/net/snmp and /proc/net/netstat) read for each run.
 */
#ifndef SPEEDY_NETEM_TCP_H
#define SPEEDY_NETEM_TCP_H

#include <stdbool.h>
#include <stddef.h>

#include "netem.h"

/* Checks that the congestion control is available in this kernel. Returns 0, or -ENOENT
 * with an explanation (and the available list) in err. */
int netem_tcp_check_available(const char *congestion_control, char *err, size_t errlen);

/* Namespaces other than the host's may only pick a congestion control listed in the host's
 * net.ipv4.tcp_allowed_congestion_control (the kernel answers EPERM otherwise). Adds it to
 * that host-wide list if missing (*changed tells). Must run in the host namespace. */
int netem_tcp_allow(const char *congestion_control, bool *changed, char *err, size_t errlen);

/* Writes the TCP sysctls (and IPv6 off) into the calling thread's namespace, verifying
 * each. Returns 0, or a negative errno with the sysctl that failed named in err. */
int netem_tcp_apply(const netem_tcp_config *tcp, char *err, size_t errlen);

/* Opens the counter files of the calling thread's namespace: fds[0] snmp, fds[1] netstat.
 * The files stay bound to that namespace however they are read later. */
int netem_tcp_counters_open(int fds[2]);
/* Reads the counters through fds opened by netem_tcp_counters_open. */
int netem_tcp_counters_read(const int fds[2], netem_tcp_counters *out);

#endif
