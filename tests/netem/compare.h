/* compare.h — checks of the emulator against the kernel and against itself at scale:
 * rate and queueing versus a tbf qdisc on a veth router, random loss versus iptables'
 * statistic match, and several links running at once.
 */
#ifndef SPEEDY_NETEM_TEST_COMPARE_H
#define SPEEDY_NETEM_TEST_COMPARE_H

int compare_tbf(void);
int compare_iptables_loss(void);
int compare_parallel_links(int count);

#endif
