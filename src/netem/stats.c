/* stats.c — statistics of a link, printed for people or as one JSON object.
 */
#include <inttypes.h>
#include <stdio.h>

#include "netem.h"

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static double mean_queue_delay_ms(const netem_dir_stats *d) {
  return d->packets_out > 0 ? ms(d->queue_delay_sum_ns) / (double)d->packets_out : 0.0;
}

static void print_direction(FILE *out, const char *name, const netem_dir_config *config,
                            const netem_dir_stats *d) {
  fprintf(out,
          "  %-4s %" PRIu64 " packets / %" PRIu64 " bytes in, %" PRIu64 " packets / %" PRIu64
          " bytes forwarded\n",
          name, d->packets_in, d->bytes_in, d->packets_out, d->bytes_out);
  fprintf(out,
          "       queue drops %" PRIu64 ", random losses %" PRIu64 ", buffer overflows %" PRIu64
          ", TUN drops %" PRIu64 "\n",
          d->queue_drops, d->random_losses, d->overflow_drops, d->tun_drops);
  fprintf(out, "       queueing delay mean %.3f ms, max %.3f ms (limit %" PRIu64 " %s)\n",
          mean_queue_delay_ms(d), ms(d->queue_delay_max_ns), d->queue_limit,
          d->queue_in_packets ? "packets" : "bytes");
  fprintf(out, "       lateness p50 %.3f ms, p99 %.3f ms, max %.3f ms over %" PRIu64 " packets\n",
          ms(d->lateness.p50_ns), ms(d->lateness.p99_ns), ms(d->lateness.max_ns),
          d->lateness.count);
  (void)config;
}

void netem_stats_print(FILE *out, const netem_config *config, const netem_stats *stats) {
  fprintf(out, "speedy netem: %.1f s, forwarding thread %s, CPU %.3f s\n",
          (double)stats->elapsed_ns / 1e9,
          stats->realtime ? "SCHED_FIFO" : "not real-time (SCHED_FIFO refused)",
          (double)stats->forwarder_cpu_ns / 1e9);
  print_direction(out, "down", &config->down, &stats->down);
  print_direction(out, "up", &config->up, &stats->up);
  for (int s = 0; s < 2; s++) {
    const netem_tcp_counters *t = &stats->tcp[s];
    fprintf(out,
            "  tcp %-6s opens %" PRIu64 "+%" PRIu64 ", segments out %" PRIu64
            ", retransmitted %" PRIu64 ", timeouts %" PRIu64 ", SYN retransmits %" PRIu64
            ", loss probes %" PRIu64 ", fast retransmits %" PRIu64 "\n",
            s == NETEM_SIDE_CLIENT ? "client" : "server", t->active_opens, t->passive_opens,
            t->out_segs, t->retrans_segs, t->timeouts, t->syn_retrans, t->loss_probes,
            t->fast_retrans);
  }
  if (stats->forwarder_error[0] != '\0')
    fprintf(out, "speedy netem: ERROR: the forwarding thread stopped: %s\n",
            stats->forwarder_error);
  if (stats->down.tun_drops + stats->up.tun_drops > 0)
    fprintf(out, "speedy netem: WARNING: the kernel dropped packets on the TUN devices; "
                 "the emulator could not keep up and results are not trustworthy\n");
}

static void json_lateness(FILE *out, const netem_lateness *l) {
  fprintf(out, "{\"count\": %" PRIu64 ", \"p50_ms\": %.4f, \"p99_ms\": %.4f, \"max_ms\": %.4f}",
          l->count, ms(l->p50_ns), ms(l->p99_ns), ms(l->max_ns));
}

static void json_direction(FILE *out, const char *name, const netem_dir_config *c,
                           const netem_dir_stats *d) {
  fprintf(out,
          "    \"%s\": {\"rate_bps\": %" PRIu64 ", \"delay_ms\": %.3f, \"jitter_ms\": %.3f, "
          "\"loss\": %.6f, \"burst\": %.3f, \"queue_limit\": %" PRIu64
          ", \"queue_limit_unit\": \"%s\",\n"
          "      \"packets_in\": %" PRIu64 ", \"bytes_in\": %" PRIu64
          ", \"packets_forwarded\": %" PRIu64 ", \"bytes_forwarded\": %" PRIu64 ",\n"
          "      \"queue_drops\": %" PRIu64 ", \"random_losses\": %" PRIu64
          ", \"overflow_drops\": %" PRIu64 ", \"tun_drops\": %" PRIu64 ",\n"
          "      \"queue_delay_mean_ms\": %.4f, \"queue_delay_max_ms\": %.4f, \"lateness\": ",
          name, c->rate_bps, ms(c->delay_ns), ms(c->jitter_ns), c->loss, c->burst, d->queue_limit,
          d->queue_in_packets ? "packets" : "bytes", d->packets_in, d->bytes_in, d->packets_out,
          d->bytes_out, d->queue_drops, d->random_losses, d->overflow_drops, d->tun_drops,
          mean_queue_delay_ms(d), ms(d->queue_delay_max_ns));
  json_lateness(out, &d->lateness);
  fprintf(out, "}");
}

static void json_tcp(FILE *out, const char *name, const netem_tcp_counters *t) {
  fprintf(out,
          "    \"%s\": {\"active_opens\": %" PRIu64 ", \"passive_opens\": %" PRIu64
          ", \"out_segs\": %" PRIu64 ", \"retrans_segs\": %" PRIu64 ", \"timeouts\": %" PRIu64
          ", \"syn_retrans\": %" PRIu64 ", \"loss_probes\": %" PRIu64 ", \"fast_retrans\": %" PRIu64
          "}",
          name, t->active_opens, t->passive_opens, t->out_segs, t->retrans_segs, t->timeouts,
          t->syn_retrans, t->loss_probes, t->fast_retrans);
}

int netem_stats_print_json(FILE *out, const netem_config *config, const netem_stats *stats) {
  const netem_tcp_config *t = &config->tcp;
  fprintf(out, "{\n  \"profile\": \"%s\", \"seed\": %" PRIu64 ", \"elapsed_s\": %.3f,\n",
          config->profile, config->seed, (double)stats->elapsed_ns / 1e9);
  fprintf(out,
          "  \"tcp\": {\"preset\": \"%s\", \"congestion_control\": \"%s\", \"initcwnd\": %d, "
          "\"slow_start_after_idle\": %d, \"no_metrics_save\": 1, \"ecn\": %d, "
          "\"early_retrans\": %d, \"recovery\": %d, \"fastopen\": %d},\n",
          t->preset, t->congestion_control, t->initcwnd, t->slow_start_after_idle, t->ecn,
          t->early_retrans, t->recovery, t->fastopen);
  fprintf(out,
          "  \"forwarder\": {\"realtime\": %s, \"cpu_s\": %.6f, \"failed\": %s, \"lateness\": ",
          stats->realtime ? "true" : "false", (double)stats->forwarder_cpu_ns / 1e9,
          stats->forwarder_error[0] != '\0' ? "true" : "false");
  json_lateness(out, &stats->lateness);
  fprintf(out, "},\n  \"directions\": {\n");
  json_direction(out, "down", &config->down, &stats->down);
  fprintf(out, ",\n");
  json_direction(out, "up", &config->up, &stats->up);
  fprintf(out, "\n  },\n  \"tcp_counters\": {\n");
  json_tcp(out, "client", &stats->tcp[NETEM_SIDE_CLIENT]);
  fprintf(out, ",\n");
  json_tcp(out, "server", &stats->tcp[NETEM_SIDE_SERVER]);
  fprintf(out, "\n  }\n}\n");
  return ferror(out) ? -1 : 0;
}
