/* probe.c — the echo/probe pair as commands, for use inside `speedy netem` (the CLI test):
 *
 *   netem_check echo-server            UDP echo on port 7 of every address, until killed
 *   netem_check probe COUNT [PAYLOAD]  COUNT probes to $SPEEDY_NETEM_SERVER_ADDR:7, one every
 *                                      50 ms; prints "rtt_median_ms X answered N"; exit 0
 *                                      if every probe was answered
 */
#define _GNU_SOURCE
#include "probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int probe_echo_server(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(7)};
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("netem_check echo-server: bind");
    return 1;
  }
  uint8_t buf[2048];
  for (;;) {
    struct sockaddr_in from;
    socklen_t len = sizeof from;
    ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &len);
    if (n > 0) sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len);
  }
}

int probe_client(int count, int payload) {
  const char *server = getenv("SPEEDY_NETEM_SERVER_ADDR");
  if (server == NULL) {
    fprintf(stderr, "netem_check probe: SPEEDY_NETEM_SERVER_ADDR is not set\n");
    return 2;
  }
  if (count < 1 || count > 1000 || payload < 4 || payload > 1400) {
    fprintf(stderr, "netem_check probe: bad count or payload\n");
    return 2;
  }
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(7)};
  if (fd < 0 || inet_pton(AF_INET, server, &sa.sin_addr) != 1 ||
      connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    perror("netem_check probe: connect");
    return 1;
  }
  uint64_t *rtt = calloc((size_t)count, sizeof *rtt);
  int answered = 0;
  uint8_t buf[2048] = {0};
  for (int i = 0; i < count; i++) {
    memcpy(buf, &i, sizeof i);
    uint64_t sent = now_ns();
    if (send(fd, buf, (size_t)payload, 0) != payload) continue;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, 2000) == 1) {
      int seq;
      ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n >= (ssize_t)sizeof seq && (memcpy(&seq, buf, sizeof seq), seq == i)) {
        rtt[answered++] = now_ns() - sent;
        break;
      }
    }
    struct timespec pause = {.tv_nsec = 50000000};
    nanosleep(&pause, NULL);
  }
  double median = answered > 0 ? (double)test_median(rtt, answered) / 1e6 : 0;
  printf("rtt_median_ms %.3f answered %d\n", median, answered);
  free(rtt);
  close(fd);
  return answered == count ? 0 : 1;
}
