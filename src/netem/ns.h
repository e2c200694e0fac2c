/* ns.h — network namespaces, TUN devices and the kernel plumbing around them: creating
 * and deleting named namespaces (through iproute2's `ip`), finding leftovers of killed
 * runs, opening a TUN device inside a namespace, sysctls, and device drop counters over
 * rtnetlink. Used by netem.c and by the validation tests (which build veth and tbf
 * comparisons with the same helpers).
 */
#ifndef SPEEDY_NETEM_NS_H
#define SPEEDY_NETEM_NS_H

#include <stddef.h>
#include <stdint.h>

/* Every namespace speedy creates is named "spnm-<pid>-<tag>", so that a later run can tell
 * whether its owner still lives. */
#define NETEM_NS_PREFIX "spnm-"
#define NETEM_NS_NAME_MAX 48

/* Writes "spnm-<our pid>-<tag>" into name. */
void netem_ns_make_name(char name[NETEM_NS_NAME_MAX], const char *tag);

/* Runs the ip command with argv (argv[0] is ignored; "ip" is found in the usual places)
 * and, if batch is not NULL, `-batch -` input. Returns 0, or -1 with the first line of ip's
 * error output in err. */
int netem_ip_run(const char *const argv[], const char *batch, char *err, size_t errlen);

/* `ip netns add NAME` / kill the processes inside and `ip netns del NAME`. */
int netem_ns_add(const char *name, char *err, size_t errlen);
void netem_ns_delete(const char *name);
/* Removes leftovers whose owning process is gone. Returns how many were removed. */
int netem_ns_cleanup_stale(void);

/* An fd for setns() on the named namespace, or a negative errno. */
int netem_ns_open(const char *name);
/* Moves the calling thread into the namespace fd refers to. Returns 0 or -errno. */
int netem_ns_enter(int ns_fd);

/* Opens a TUN device (IFF_TUN | IFF_NO_PI, no offloads) named name in the calling thread's
 * namespace, non-blocking. Returns the fd or a negative errno. */
int netem_tun_open(const char *name);

/* Writes a sysctl under /proc/sys (path relative to it, with slashes) in the calling
 * thread's namespace and reads it back. Returns 0, -errno, or -EIO if it did not stick. */
int netem_sysctl_set(const char *path, const char *value);
/* Reads a sysctl into buf (trailing newline removed). Returns 0 or -errno. */
int netem_sysctl_get(const char *path, char *buf, size_t len);

/* An rtnetlink socket bound to the calling thread's namespace, or -errno. */
int netem_rtnl_open(void);
/* Drops of a device: on receive (rx_dropped, fifo and missed errors: packets written to a
 * TUN device that the stack did not take) and on transmit (tx_dropped and fifo errors:
 * packets the stack sent that the reader did not take in time). Returns 0 or -errno. */
int netem_rtnl_drops(int rtnl_fd, int ifindex, uint64_t *rx_drops, uint64_t *tx_drops);

#endif
