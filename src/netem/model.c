/* model.c — the link model of one direction (see model.h): drop-tail queue accounting,
 * serialization at the bottleneck rate, propagation delay, jitter, Bernoulli and
 * Gilbert–Elliott loss, driven only by arrival times and the model's link clock.
 */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The loss point is at the entry of the link, before the queue (as dummynet's plr), so a
 * lost packet takes no queue space and no bottleneck time. */

uint64_t netem_model_serialization_ns(uint64_t rate_bps, uint32_t len) {
  if (rate_bps == 0) return 0;
  /* len * 8 * 1e9 fits in 64 bits for any len <= 2^31. */
  return ((uint64_t)len * 8u * 1000000000u + rate_bps - 1) / rate_bps;
}

uint64_t netem_model_default_queue_bytes(uint64_t rate_bps, uint64_t rtt_ns) {
  const uint64_t floor_bytes = 16u * NETEM_MTU;
  if (rate_bps == 0) return floor_bytes;
  /* rate / 8 * rtt: bytes per second times microseconds / 10^6. The product overflows 64
   * bits from 41 Gbit/s x 1 hour (the command line allows 1 Tbit/s and an hour), so the
   * rate is split into whole megabytes per second (x microseconds = bytes) and the rest
   * (< 10^6, so x microseconds fits for round trips under 200 days); saturates past 2^64. */
  uint64_t bytes_per_s = rate_bps / 8u, rtt_us = rtt_ns / 1000u;
  uint64_t mega = bytes_per_s / 1000000u, rest = bytes_per_s % 1000000u;
  if (rtt_us > 0 && mega > UINT64_MAX / rtt_us) return UINT64_MAX;
  uint64_t bdp = mega * rtt_us;
  uint64_t part =
      rtt_us <= UINT64_MAX / 1000000u ? rest * rtt_us / 1000000u : rest * (rtt_us / 1000000u);
  bdp = bdp > UINT64_MAX - part ? UINT64_MAX : bdp + part;
  return bdp > floor_bytes ? bdp : floor_bytes;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman and Vigna), public-domain algorithm, written from its
 * description. */
static uint64_t model_next(netem_model *model) {
  uint64_t *s = model->rng;
  uint64_t result = rotl(s[1] * 5u, 7) * 9u;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

double netem_model_random(netem_model *model) {
  return (double)(model_next(model) >> 11) * (1.0 / 9007199254740992.0);
}

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

int netem_model_init(netem_model *model, const netem_dir_config *config, uint64_t rtt_ns,
                     uint64_t seed, bool reorder) {
  memset(model, 0, sizeof *model);
  model->config = *config;
  model->reorder = reorder;
  if (config->queue_packets > 0) {
    model->queue_limit_packets = config->queue_packets;
  } else {
    model->queue_limit_bytes = config->queue_bytes > 0
                                   ? config->queue_bytes
                                   : netem_model_default_queue_bytes(config->rate_bps, rtt_ns);
  }
  uint64_t state = seed;
  for (int i = 0; i < 4; i++) model->rng[i] = splitmix64(&state);
  /* Simple Gilbert model with mean burst length B and overall loss rate L: the bad
   * state loses every packet, the good state none; leave bad with r = 1/B, enter it
   * with p = L r / (1 - L), so the stationary share of bad is p / (p + r) = L. */
  if (config->burst > 1.0 && config->loss > 0.0 && config->loss < 1.0) {
    model->burst_r = 1.0 / config->burst;
    model->burst_p = config->loss * model->burst_r / (1.0 - config->loss);
  }
  model->backlog_finish_ns = calloc(NETEM_MODEL_BACKLOG_MAX, sizeof *model->backlog_finish_ns);
  model->backlog_len = calloc(NETEM_MODEL_BACKLOG_MAX, sizeof *model->backlog_len);
  if (model->backlog_finish_ns == NULL || model->backlog_len == NULL) {
    netem_model_free(model);
    return -ENOMEM;
  }
  return 0;
}

void netem_model_free(netem_model *model) {
  free(model->backlog_finish_ns);
  free(model->backlog_len);
  model->backlog_finish_ns = NULL;
  model->backlog_len = NULL;
}

static bool model_lose(netem_model *model) {
  if (model->config.loss <= 0.0) return false;
  if (model->burst_r > 0.0) {
    double u = netem_model_random(model);
    if (model->burst_bad) {
      if (u < model->burst_r) model->burst_bad = false;
    } else if (u < model->burst_p) {
      model->burst_bad = true;
    }
    return model->burst_bad;
  }
  return netem_model_random(model) < model->config.loss;
}

/* Forgets the packets whose serialization finished by now. */
static void model_drain_backlog(netem_model *model, uint64_t now_ns) {
  while (model->backlog_count > 0 && model->backlog_finish_ns[model->backlog_head] <= now_ns) {
    model->backlog_bytes -= model->backlog_len[model->backlog_head];
    model->backlog_head = (model->backlog_head + 1) % NETEM_MODEL_BACKLOG_MAX;
    model->backlog_count--;
  }
}

netem_admit_result netem_model_admit(netem_model *model, uint64_t arrival_ns, uint32_t len,
                                     uint64_t *deliver_ns, uint64_t *queue_delay_ns) {
  if (model_lose(model)) return NETEM_ADMIT_LOST;
  model_drain_backlog(model, arrival_ns);
  /* The queue holds every packet that has not finished serialization, the one on the
   * wire included, as dummynet and tbf count it. */
  if (model->queue_limit_packets > 0) {
    if (model->backlog_count >= model->queue_limit_packets) return NETEM_ADMIT_QUEUE_FULL;
  } else if (len > model->queue_limit_bytes ||
             model->backlog_bytes > model->queue_limit_bytes - len) {
    return NETEM_ADMIT_QUEUE_FULL;
  }
  if (model->backlog_count >= NETEM_MODEL_BACKLOG_MAX) return NETEM_ADMIT_QUEUE_FULL;

  uint64_t start = model->link_free_ns > arrival_ns ? model->link_free_ns : arrival_ns;
  uint64_t finish = start + netem_model_serialization_ns(model->config.rate_bps, len);
  model->link_free_ns = finish;
  uint32_t tail = (model->backlog_head + model->backlog_count) % NETEM_MODEL_BACKLOG_MAX;
  model->backlog_finish_ns[tail] = finish;
  model->backlog_len[tail] = len;
  model->backlog_count++;
  model->backlog_bytes += len;

  uint64_t deliver = finish + model->config.delay_ns;
  if (model->config.jitter_ns > 0) {
    /* uniform in [-jitter, +jitter], not earlier than the end of serialization */
    double u = netem_model_random(model) * 2.0 - 1.0;
    int64_t offset = (int64_t)(u * (double)model->config.jitter_ns);
    if (offset < 0 && (uint64_t)(-offset) > model->config.delay_ns)
      deliver = finish;
    else
      deliver = (uint64_t)((int64_t)deliver + offset);
  }
  if (!model->reorder && deliver < model->last_deliver_ns) deliver = model->last_deliver_ns;
  if (deliver > model->last_deliver_ns) model->last_deliver_ns = deliver;
  *deliver_ns = deliver;
  *queue_delay_ns = start - arrival_ns;
  return NETEM_ADMIT_DELIVER;
}
