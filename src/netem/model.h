/* model.h — the link model of one direction: rate, propagation delay, drop-tail queue,
 * random and burst loss, jitter. Pure arithmetic on the model's own clock; no I/O.
 *
 * The forwarding thread (forward.c) calls netem_model_admit() once per packet read from a
 * TUN device, with the time it was read; the model answers drop or deliver-at. Departure
 * times follow from the model's link clock (when the bottleneck becomes free), never from
 * when the caller woke, so a late wake-up delays one packet but never lowers the rate.
 */
#ifndef SPEEDY_NETEM_MODEL_H
#define SPEEDY_NETEM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "netem.h"

/* What happened to one packet. */
typedef enum {
  NETEM_ADMIT_DELIVER = 0, /* forward at *deliver_ns */
  NETEM_ADMIT_LOST,        /* random (or burst) loss */
  NETEM_ADMIT_QUEUE_FULL,  /* drop-tail: the queue limit would be exceeded */
} netem_admit_result;

/* Fixed-size FIFO of (finish time, length) of the packets that have not yet left the
 * bottleneck, so the queue occupancy at any arrival time is exact. */
#define NETEM_MODEL_BACKLOG_MAX 65536u

typedef struct netem_model {
  netem_dir_config config;
  uint64_t queue_limit_bytes;   /* 0 when limited in packets */
  uint32_t queue_limit_packets; /* 0 when limited in bytes */
  uint64_t link_free_ns;        /* when the bottleneck finishes its last packet */
  uint64_t last_deliver_ns;     /* for in-order delivery under jitter */
  uint64_t rng[4];              /* xoshiro256** state */
  bool burst_bad;               /* Gilbert–Elliott: in the bad state */
  double burst_p, burst_r;      /* good->bad, bad->good transition probabilities */
  /* backlog: packets admitted whose serialization has not finished */
  uint64_t *backlog_finish_ns;
  uint32_t *backlog_len;
  uint32_t backlog_head, backlog_count;
  uint64_t backlog_bytes;
  bool reorder;
} netem_model;

/* The default queue limit of a direction: one bandwidth-delay product of the round trip,
 * with a floor of 16 full packets. rtt_ns is the configured round-trip time. */
uint64_t netem_model_default_queue_bytes(uint64_t rate_bps, uint64_t rtt_ns);

/* Sets the model up. rtt_ns sizes the default queue. Returns 0, or -ENOMEM. Free with
 * netem_model_free(). */
int netem_model_init(netem_model *model, const netem_dir_config *config, uint64_t rtt_ns,
                     uint64_t seed, bool reorder);
void netem_model_free(netem_model *model);

/* Decides the fate of a packet of len bytes that arrived at arrival_ns (monotonic). On
 * NETEM_ADMIT_DELIVER sets *deliver_ns and *queue_delay_ns (time spent waiting for the
 * bottleneck). arrival_ns must not decrease between calls. */
netem_admit_result netem_model_admit(netem_model *model, uint64_t arrival_ns, uint32_t len,
                                     uint64_t *deliver_ns, uint64_t *queue_delay_ns);

/* Serialization time of len bytes at rate_bps (0 = unlimited). */
uint64_t netem_model_serialization_ns(uint64_t rate_bps, uint32_t len);

/* Uniform random number in [0, 1) from the model's generator (also used for tests). */
double netem_model_random(netem_model *model);

#endif
