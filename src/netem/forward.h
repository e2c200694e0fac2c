/* forward.h — the forwarding thread: reads IP packets from the two TUN devices, passes
 * each through its direction's link model (model.h) and writes it to the other TUN device
 * at the model's departure time. Measures its own wake-up lateness.
 */
#ifndef SPEEDY_NETEM_FORWARD_H
#define SPEEDY_NETEM_FORWARD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "netem.h"

/* Lateness histogram: 1 µs buckets below 4,096 µs, then 256 µs buckets up to ~266 ms;
 * the maximum is kept exactly. */
#define NETEM_HIST_FINE 4096u
#define NETEM_HIST_COARSE 1024u
typedef struct netem_histogram {
  uint64_t bucket[NETEM_HIST_FINE + NETEM_HIST_COARSE];
  uint64_t count, max_ns;
} netem_histogram;

void netem_histogram_add(netem_histogram *hist, uint64_t value_ns);
void netem_histogram_merge(netem_histogram *into, const netem_histogram *from);
netem_lateness netem_histogram_summary(const netem_histogram *hist);

/* A packet waiting on the delay line. */
typedef struct netem_slot {
  uint64_t deliver_ns;
  uint64_t seq;
  uint32_t len;
  uint8_t data[NETEM_MTU];
} netem_slot;

/* One direction: its model, its delay line (a min-heap on delivery time, then arrival
 * order) over a fixed pool of slots, and its counters. */
typedef struct netem_lane {
  netem_model model;
  netem_slot *slots;
  uint32_t *free_list, free_count;
  uint32_t *heap, heap_count;
  uint32_t capacity;
  uint64_t seq;
  int in_fd, out_fd;
  netem_dir_stats stats; /* counters only; lateness comes from hist */
  netem_histogram hist;
} netem_lane;

typedef struct netem_forwarder {
  netem_lane lane[2]; /* indexed by netem_dir */
  int stop_fd;        /* eventfd: written to stop the thread */
  pthread_t thread;
  bool thread_started;
  bool want_realtime;
  bool realtime; /* set by the thread: SCHED_FIFO granted */
  uint64_t start_ns;
  pthread_mutex_t lock; /* guards stats, hist and realtime against readers */
  char error[128];      /* set by the thread (under lock) if it stops on an error */
} netem_forwarder;

/* Sets up both lanes. client_fd and server_fd are the TUN devices (non-blocking). The
 * forwarder does not own them. Returns 0 or a negative errno. */
int netem_forwarder_init(netem_forwarder *fwd, const netem_config *config, int client_fd,
                         int server_fd);
int netem_forwarder_start(netem_forwarder *fwd);
/* Stops the thread (if started) and frees the lanes. */
void netem_forwarder_free(netem_forwarder *fwd);
/* Copies the per-direction counters and lateness. */
void netem_forwarder_stats(netem_forwarder *fwd, netem_stats *out);

uint64_t netem_now_ns(void);

#endif
