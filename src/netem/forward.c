/* forward.c — the forwarding thread (see forward.h).
 *
 * One thread per link serves both directions. Each loop: write every packet whose
 * departure time has come, drain both TUN devices (so the kernel never has to drop on
 * them), then sleep in ppoll() until the next departure or the next packet. Departure
 * times come from the model; the thread's real wake-up time only decides how late a packet
 * is written, and that lateness is measured.
 */
#define _GNU_SOURCE
#include "forward.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* Packets read from one device before looking at departures again, so a flood in one
 * direction cannot starve the other. */
#define NETEM_READ_BATCH 64

uint64_t netem_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- histogram ---------------------------------------------------------------------- */

void netem_histogram_add(netem_histogram *hist, uint64_t value_ns) {
  uint64_t us = value_ns / 1000u;
  size_t index;
  if (us < NETEM_HIST_FINE) {
    index = (size_t)us;
  } else {
    uint64_t coarse = (us - NETEM_HIST_FINE) / 256u;
    if (coarse >= NETEM_HIST_COARSE) coarse = NETEM_HIST_COARSE - 1;
    index = NETEM_HIST_FINE + (size_t)coarse;
  }
  hist->bucket[index]++;
  hist->count++;
  if (value_ns > hist->max_ns) hist->max_ns = value_ns;
}

void netem_histogram_merge(netem_histogram *into, const netem_histogram *from) {
  for (size_t i = 0; i < NETEM_HIST_FINE + NETEM_HIST_COARSE; i++)
    into->bucket[i] += from->bucket[i];
  into->count += from->count;
  if (from->max_ns > into->max_ns) into->max_ns = from->max_ns;
}

/* Upper edge of a bucket in ns, capped by the exact maximum. */
static uint64_t histogram_bucket_ns(const netem_histogram *hist, size_t index) {
  uint64_t us = index < NETEM_HIST_FINE
                    ? (uint64_t)index + 1
                    : NETEM_HIST_FINE + (uint64_t)(index - NETEM_HIST_FINE + 1) * 256u;
  uint64_t ns = us * 1000u;
  return ns < hist->max_ns ? ns : hist->max_ns;
}

static uint64_t histogram_quantile(const netem_histogram *hist, double q) {
  if (hist->count == 0) return 0;
  uint64_t rank = (uint64_t)(q * (double)hist->count);
  if (rank >= hist->count) rank = hist->count - 1;
  uint64_t seen = 0;
  for (size_t i = 0; i < NETEM_HIST_FINE + NETEM_HIST_COARSE; i++) {
    seen += hist->bucket[i];
    if (seen > rank) return histogram_bucket_ns(hist, i);
  }
  return hist->max_ns;
}

netem_lateness netem_histogram_summary(const netem_histogram *hist) {
  netem_lateness out = {
      .count = hist->count,
      .p50_ns = histogram_quantile(hist, 0.50),
      .p99_ns = histogram_quantile(hist, 0.99),
      .max_ns = hist->max_ns,
  };
  return out;
}

/* ---- delay line: min-heap of slot indices on (deliver_ns, seq) -------------------------- */

static bool slot_before(const netem_lane *lane, uint32_t a, uint32_t b) {
  const netem_slot *x = &lane->slots[a], *y = &lane->slots[b];
  return x->deliver_ns < y->deliver_ns || (x->deliver_ns == y->deliver_ns && x->seq < y->seq);
}

static void heap_push(netem_lane *lane, uint32_t slot) {
  uint32_t i = lane->heap_count++;
  lane->heap[i] = slot;
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!slot_before(lane, lane->heap[i], lane->heap[parent])) break;
    uint32_t t = lane->heap[i];
    lane->heap[i] = lane->heap[parent];
    lane->heap[parent] = t;
    i = parent;
  }
}

static uint32_t heap_pop(netem_lane *lane) {
  uint32_t top = lane->heap[0];
  lane->heap[0] = lane->heap[--lane->heap_count];
  uint32_t i = 0;
  for (;;) {
    uint32_t left = 2 * i + 1, right = left + 1, least = i;
    if (left < lane->heap_count && slot_before(lane, lane->heap[left], lane->heap[least]))
      least = left;
    if (right < lane->heap_count && slot_before(lane, lane->heap[right], lane->heap[least]))
      least = right;
    if (least == i) break;
    uint32_t t = lane->heap[i];
    lane->heap[i] = lane->heap[least];
    lane->heap[least] = t;
    i = least;
  }
  return top;
}

/* ---- lanes ------------------------------------------------------------------------------ */

/* Slots needed: the queue limit plus what is in flight on the propagation delay, counted
 * in the smallest packets TCP sends (52-byte ACKs), clamped to [256, 16384]. */
static uint32_t lane_capacity(const netem_model *model) {
  const netem_dir_config *c = &model->config;
  uint64_t queued =
      model->queue_limit_packets > 0 ? model->queue_limit_packets : model->queue_limit_bytes / 52u;
  uint64_t flight_bytes =
      c->rate_bps == 0 ? 0 : (c->rate_bps / 8u) * ((c->delay_ns + c->jitter_ns) / 1000u) / 1000000u;
  uint64_t want = queued + flight_bytes / 52u + 64u;
  if (want < 256) want = 256;
  if (want > 16384) want = 16384;
  return (uint32_t)want;
}

static int lane_init(netem_lane *lane, const netem_dir_config *config, uint64_t rtt_ns,
                     uint64_t seed, bool reorder, int in_fd, int out_fd) {
  memset(lane, 0, sizeof *lane);
  int rc = netem_model_init(&lane->model, config, rtt_ns, seed, reorder);
  if (rc != 0) return rc;
  lane->capacity = lane_capacity(&lane->model);
  lane->slots = calloc(lane->capacity, sizeof *lane->slots);
  lane->free_list = calloc(lane->capacity, sizeof *lane->free_list);
  lane->heap = calloc(lane->capacity, sizeof *lane->heap);
  if (lane->slots == NULL || lane->free_list == NULL || lane->heap == NULL) return -ENOMEM;
  for (uint32_t i = 0; i < lane->capacity; i++) lane->free_list[i] = lane->capacity - 1 - i;
  lane->free_count = lane->capacity;
  lane->in_fd = in_fd;
  lane->out_fd = out_fd;
  lane->stats.queue_in_packets = lane->model.queue_limit_packets > 0;
  lane->stats.queue_limit = lane->stats.queue_in_packets ? lane->model.queue_limit_packets
                                                         : lane->model.queue_limit_bytes;
  return 0;
}

static void lane_free(netem_lane *lane) {
  netem_model_free(&lane->model);
  free(lane->slots);
  free(lane->free_list);
  free(lane->heap);
  lane->slots = NULL;
  lane->free_list = NULL;
  lane->heap = NULL;
}

/* Writes every packet due by now. Returns how many were written. */
static int lane_deliver_due(netem_lane *lane, uint64_t now_ns) {
  int written = 0;
  while (lane->heap_count > 0) {
    netem_slot *slot = &lane->slots[lane->heap[0]];
    if (slot->deliver_ns > now_ns) break;
    uint32_t index = heap_pop(lane);
    /* A TUN write either takes the whole packet or fails; the kernel counts drops
     * after it (rx_dropped), which the statistics report. */
    ssize_t n = write(lane->out_fd, slot->data, slot->len);
    if (n == (ssize_t)slot->len) {
      lane->stats.packets_out++;
      lane->stats.bytes_out += slot->len;
    } else {
      lane->stats.overflow_drops++;
    }
    netem_histogram_add(&lane->hist, now_ns - slot->deliver_ns);
    lane->free_list[lane->free_count++] = index;
    written++;
  }
  return written;
}

/* Reads up to a batch of packets from the sending side. Returns how many were read, or
 * -1 on a fatal error (message in fwd->error). */
static int lane_read_batch(netem_forwarder *fwd, netem_lane *lane) {
  int count = 0;
  while (count < NETEM_READ_BATCH) {
    /* Read with room past the MTU so an oversized packet is seen, not truncated. */
    uint8_t big[NETEM_MTU + 64];
    ssize_t n = read(lane->in_fd, big, sizeof big);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) break;
      snprintf(fwd->error, sizeof fwd->error, "read from TUN: %s", strerror(errno));
      return -1;
    }
    if (n == 0) break;
    if ((size_t)n > NETEM_MTU) {
      /* No offloads were asked for, so the kernel must never hand us more than the
       * MTU; if it does, the model's timing would be wrong. */
      fprintf(stderr, "speedy netem: packet of %zd bytes read from TUN (MTU %u)\n", n, NETEM_MTU);
      abort();
    }
    count++;
    uint64_t arrival = netem_now_ns();
    lane->stats.packets_in++;
    lane->stats.bytes_in += (uint64_t)n;
    uint64_t deliver_ns = 0, queue_delay_ns = 0;
    netem_admit_result verdict =
        netem_model_admit(&lane->model, arrival, (uint32_t)n, &deliver_ns, &queue_delay_ns);
    if (verdict == NETEM_ADMIT_LOST) {
      lane->stats.random_losses++;
      continue;
    }
    if (verdict == NETEM_ADMIT_QUEUE_FULL) {
      lane->stats.queue_drops++;
      continue;
    }
    if (lane->free_count == 0) {
      lane->stats.overflow_drops++;
      continue;
    }
    uint32_t index = lane->free_list[--lane->free_count];
    netem_slot *slot = &lane->slots[index];
    memcpy(slot->data, big, (size_t)n);
    slot->len = (uint32_t)n;
    slot->deliver_ns = deliver_ns;
    slot->seq = lane->seq++;
    heap_push(lane, index);
    lane->stats.queue_delay_sum_ns += queue_delay_ns;
    if (queue_delay_ns > lane->stats.queue_delay_max_ns)
      lane->stats.queue_delay_max_ns = queue_delay_ns;
  }
  return count;
}

/* ---- the thread ------------------------------------------------------------------------- */

static void forwarder_prepare_thread(netem_forwarder *fwd) {
  /* Minimal timer slack: ppoll() timeouts otherwise round up by 50 µs. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  bool realtime = false;
  if (fwd->want_realtime) {
    struct sched_param param = {.sched_priority = 50};
    realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0;
  }
  pthread_mutex_lock(&fwd->lock);
  fwd->realtime = realtime;
  pthread_mutex_unlock(&fwd->lock);
}

static void *forwarder_main(void *arg) {
  netem_forwarder *fwd = arg;
  forwarder_prepare_thread(fwd);
  struct pollfd fds[3] = {
      {.fd = fwd->lane[NETEM_DIR_DOWN].in_fd, .events = POLLIN},
      {.fd = fwd->lane[NETEM_DIR_UP].in_fd, .events = POLLIN},
      {.fd = fwd->stop_fd, .events = POLLIN},
  };
  for (;;) {
    pthread_mutex_lock(&fwd->lock);
    int progress;
    do {
      progress = 0;
      uint64_t now = netem_now_ns();
      for (int d = 0; d < 2; d++) progress += lane_deliver_due(&fwd->lane[d], now);
      for (int d = 0; d < 2; d++) {
        int n = lane_read_batch(fwd, &fwd->lane[d]);
        if (n < 0) {
          pthread_mutex_unlock(&fwd->lock);
          return NULL;
        }
        progress += n;
      }
    } while (progress > 0);
    uint64_t next = UINT64_MAX;
    for (int d = 0; d < 2; d++) {
      netem_lane *lane = &fwd->lane[d];
      if (lane->heap_count > 0 && lane->slots[lane->heap[0]].deliver_ns < next)
        next = lane->slots[lane->heap[0]].deliver_ns;
    }
    pthread_mutex_unlock(&fwd->lock);

    struct timespec timeout, *timeout_ptr = NULL;
    if (next != UINT64_MAX) {
      uint64_t now = netem_now_ns();
      uint64_t wait = next > now ? next - now : 0;
      timeout.tv_sec = (time_t)(wait / 1000000000u);
      timeout.tv_nsec = (long)(wait % 1000000000u);
      timeout_ptr = &timeout;
    }
    int rc = ppoll(fds, 3, timeout_ptr, NULL);
    if (rc < 0 && errno != EINTR) {
      int e = errno;
      pthread_mutex_lock(&fwd->lock);
      snprintf(fwd->error, sizeof fwd->error, "ppoll: %s", strerror(e));
      pthread_mutex_unlock(&fwd->lock);
      return NULL;
    }
    if (rc > 0 && (fds[2].revents & POLLIN)) return NULL;
  }
}

int netem_forwarder_init(netem_forwarder *fwd, const netem_config *config, int client_fd,
                         int server_fd) {
  memset(fwd, 0, sizeof *fwd);
  fwd->stop_fd = -1;
  pthread_mutex_init(&fwd->lock, NULL);
  uint64_t rtt = netem_config_rtt_ns(config);
  /* Each direction gets its own generator stream derived from the seed. */
  int rc = lane_init(&fwd->lane[NETEM_DIR_DOWN], &config->down, rtt, config->seed, config->reorder,
                     server_fd, client_fd);
  if (rc == 0)
    rc = lane_init(&fwd->lane[NETEM_DIR_UP], &config->up, rtt, config->seed ^ 0x5851f42d4c957f2du,
                   config->reorder, client_fd, server_fd);
  if (rc == 0) {
    fwd->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fwd->stop_fd < 0) rc = -errno;
  }
  fwd->want_realtime = config->realtime;
  if (rc != 0) netem_forwarder_free(fwd);
  return rc;
}

int netem_forwarder_start(netem_forwarder *fwd) {
  fwd->start_ns = netem_now_ns();
  /* The thread must not take signals meant for the process (SIGINT, SIGCHLD). */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  int rc = pthread_create(&fwd->thread, NULL, forwarder_main, fwd);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (rc != 0) return -rc;
  fwd->thread_started = true;
  return 0;
}

void netem_forwarder_free(netem_forwarder *fwd) {
  if (fwd->thread_started) {
    uint64_t one = 1;
    if (write(fwd->stop_fd, &one, sizeof one) < 0)
      perror("speedy netem: stopping the forwarding thread");
    pthread_join(fwd->thread, NULL);
    fwd->thread_started = false;
  }
  if (fwd->stop_fd >= 0) close(fwd->stop_fd);
  fwd->stop_fd = -1;
  lane_free(&fwd->lane[0]);
  lane_free(&fwd->lane[1]);
  pthread_mutex_destroy(&fwd->lock);
}

void netem_forwarder_stats(netem_forwarder *fwd, netem_stats *out) {
  netem_histogram *both = calloc(1, sizeof *both);
  pthread_mutex_lock(&fwd->lock);
  out->down = fwd->lane[NETEM_DIR_DOWN].stats;
  out->up = fwd->lane[NETEM_DIR_UP].stats;
  out->down.lateness = netem_histogram_summary(&fwd->lane[NETEM_DIR_DOWN].hist);
  out->up.lateness = netem_histogram_summary(&fwd->lane[NETEM_DIR_UP].hist);
  if (both != NULL) {
    netem_histogram_merge(both, &fwd->lane[NETEM_DIR_DOWN].hist);
    netem_histogram_merge(both, &fwd->lane[NETEM_DIR_UP].hist);
    out->lateness = netem_histogram_summary(both);
  }
  out->realtime = fwd->realtime;
  memcpy(out->forwarder_error, fwd->error, sizeof out->forwarder_error);
  pthread_mutex_unlock(&fwd->lock);
  free(both);
  out->elapsed_ns = netem_now_ns() - fwd->start_ns;
  if (fwd->thread_started) {
    clockid_t clock;
    struct timespec ts;
    if (pthread_getcpuclockid(fwd->thread, &clock) == 0 && clock_gettime(clock, &ts) == 0)
      out->forwarder_cpu_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  }
}
