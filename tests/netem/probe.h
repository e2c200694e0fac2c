/* probe.h — echo server and probe client run as commands inside a link (probe.c). */
#ifndef SPEEDY_NETEM_TEST_PROBE_H
#define SPEEDY_NETEM_TEST_PROBE_H

int probe_echo_server(void);
int probe_client(int count, int payload);

#endif
