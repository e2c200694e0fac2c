/* bench_report.c — what `speedy bench` prints: a human summary (like wrk's and h2load's)
 * or one JSON object (--json) with the same figures, for scripts such as bench/compare.
 *
 * Rates use the measured window: from the end of the warm-up to the last measured
 * response. Latency runs from a request's intended send time (its actual send time in
 * closed loop), TTFB from the actual send to the first response byte.
 */
#include <stdio.h>

#include "bench_int.h"

uint64_t bench_errors_total(const bench_stats *stats) {
  uint64_t total = 0;
  for (int i = 0; i < BENCH_ERR_COUNT; i++) total += stats->errors[i];
  return total;
}

static double window_s(const bench_stats *st) {
  if (st->t_last_done <= st->t_measure) return 0.0;
  return (double)(st->t_last_done - st->t_measure) / 1e9;
}

static double per_s(uint64_t count, double seconds) {
  return seconds > 0 ? (double)count / seconds : 0.0;
}

/* Closed loop with -D: the rates are of answers completed inside the -D seconds of the
 * measured window, as h2load counts them. (The measured requests' own span would start
 * with the warm-up's answers still arriving and end with the last requests' tail: with
 * -c 100 -m 100 and 10,000 in flight that took a third off the rate.) Else: the measured
 * requests over their window. */
static int windowed(const bench_options *opt) { return opt->duration_s > 0 && opt->rate <= 0; }

static double rate_s(const bench_options *opt, const bench_stats *st) {
  return windowed(opt) ? opt->duration_s : window_s(st);
}

static double rate_requests(const bench_options *opt, const bench_stats *st) {
  return per_s(windowed(opt) ? st->window_ok : st->measured_ok, rate_s(opt, st));
}

static double rate_body(const bench_options *opt, const bench_stats *st) {
  return per_s(windowed(opt) ? st->window_body_bytes : st->body_bytes, rate_s(opt, st));
}

static double send_rate(const bench_stats *st) {
  if (st->sends < 2 || st->t_last_send <= st->t_first_send) return 0.0;
  return (double)(st->sends - 1) / ((double)(st->t_last_send - st->t_first_send) / 1e9);
}

/* A duration for people: ns as "812 us", "12.3 ms", "1.20 s". */
static void human_time(char *out, size_t cap, uint64_t ns) {
  if (ns < 1000000)
    snprintf(out, cap, "%.0f us", (double)ns / 1e3);
  else if (ns < 1000000000)
    snprintf(out, cap, "%.2f ms", (double)ns / 1e6);
  else
    snprintf(out, cap, "%.2f s", (double)ns / 1e9);
}

static void human_bytes(char *out, size_t cap, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    u++;
  }
  snprintf(out, cap, u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
}

static void print_hist_line(const char *label, const bench_hist *h) {
  static const double qs[] = {0.5, 0.9, 0.99, 0.999};
  static const char *const names[] = {"p50", "p90", "p99", "p99.9"};
  char t[32];
  printf("%-10s", label);
  if (h->count == 0) {
    printf("no samples\n");
    return;
  }
  for (int i = 0; i < 4; i++) {
    human_time(t, sizeof(t), bench_hist_quantile(h, qs[i]));
    printf(" %s %s ", names[i], t);
  }
  human_time(t, sizeof(t), h->max);
  printf(" max %s ", t);
  human_time(t, sizeof(t), bench_hist_mean(h));
  printf(" mean %s\n", t);
}

/* What each kind of error counts, for people ("status 500" would read as a status code;
 * the JSON keeps the short names of bench_error_name). */
static const char *error_label(bench_error kind) {
  switch (kind) {
  case BENCH_ERR_CONNECT:
    return "connections not made";
  case BENCH_ERR_TLS:
    return "TLS failures";
  case BENCH_ERR_STATUS:
    return "responses not 2xx";
  case BENCH_ERR_LENGTH:
    return "bodies unlike their Content-Length";
  case BENCH_ERR_SIZE:
    return "bodies of another size than the first";
  case BENCH_ERR_CONTENT:
    return "bodies unlike the first";
  case BENCH_ERR_RESET:
    return "streams reset";
  case BENCH_ERR_CLOSED:
    return "requests cut by a closed connection";
  case BENCH_ERR_PROTOCOL:
    return "protocol errors";
  case BENCH_ERR_TIMEOUT:
    return "requests timed out";
  default:
    return "other errors";
  }
}

/* "errors:    HTTP 5xx responses: 12, HTTP 4xx responses: 3, streams reset: 1". Status
 * errors are named by their class (every response outside 2xx is one). */
static void print_errors_line(const bench_stats *st) {
  printf("errors:   ");
  if (bench_errors_total(st) == 0) {
    printf(" none\n");
    return;
  }
  const char *sep = " ";
  for (int i = 0; i < BENCH_ERR_COUNT; i++) {
    if (st->errors[i] == 0) continue;
    if (i != BENCH_ERR_STATUS) {
      printf("%s%s: %llu", sep, error_label(i), (unsigned long long)st->errors[i]);
      sep = ", ";
      continue;
    }
    uint64_t named = 0;
    for (int c = 5; c >= 0; c--) {
      if (c == 2 || st->status_classes[c] == 0) continue;
      if (c == 0)
        printf("%sresponses with a bad status or Content-Length: %llu", sep,
               (unsigned long long)st->status_classes[c]);
      else
        printf("%sHTTP %dxx responses: %llu", sep, c, (unsigned long long)st->status_classes[c]);
      named += st->status_classes[c];
      sep = ", ";
    }
    if (named != st->errors[i]) { /* cannot happen today; never hide a count */
      printf("%s%s: %llu", sep, error_label(i), (unsigned long long)st->errors[i]);
      sep = ", ";
    }
  }
  printf("\n");
}

/* h2load's traffic line: bytes read, response header blocks as received (and how much
 * smaller than decoded), DATA payload. Header figures exist for SPDY and HTTP/2. */
static void print_traffic_line(const bench_stats *st) {
  char total[32], headers[32], data[32];
  human_bytes(total, sizeof(total), (double)st->wire_bytes_in);
  human_bytes(headers, sizeof(headers), (double)st->header_bytes_in);
  human_bytes(data, sizeof(data), (double)st->data_bytes_in);
  printf("traffic:   %s (%llu) total, ", total, (unsigned long long)st->wire_bytes_in);
  if (st->proto == IO_PROTO_HTTP1) {
    printf("headers not counted for HTTP/1.1\n");
    return;
  }
  double savings =
      st->header_bytes_decoded
          ? 100.0 * (1.0 - (double)st->header_bytes_in / (double)st->header_bytes_decoded)
          : 0.0;
  printf("%s (%llu) headers (space savings %.2f%%), %s (%llu) data\n", headers,
         (unsigned long long)st->header_bytes_in, savings, data,
         (unsigned long long)st->data_bytes_in);
}

static const char *mode_name(const bench_options *opt) {
  return opt->rate > 0 ? "open loop" : "closed loop";
}

void bench_report_text(const bench_options *opt, const bench_stats *st, double wall_s) {
  double secs = rate_s(opt, st);
  char body[32], wire[32];
  printf("speedy bench: %s://%s%s%s — %s", opt->scheme, opt->authority, opt->paths[0],
         opt->n_paths > 1 ? " (and more)" : "",
         st->proto ? io_proto_name(st->proto) : "no protocol");
  if (st->proto)
    printf(" (%s%s%s)", io_negotiation_name(st->how), st->tls_version ? ", " : "",
           st->tls_version ? st->tls_version : "");
  printf("\n%d thread%s, %d connection%s, %d %s each, %s\n", opt->threads,
         opt->threads == 1 ? "" : "s", opt->connections, opt->connections == 1 ? "" : "s",
         opt->streams,
         st->proto == IO_PROTO_HTTP1 ? "pipelined"
         : opt->streams == 1         ? "stream"
                                     : "streams",
         mode_name(opt));
  printf("requests:  %llu ok, %llu failed (measured); %llu during warm-up\n",
         (unsigned long long)st->measured_ok, (unsigned long long)st->measured_failed,
         (unsigned long long)st->warmup_requests);
  human_bytes(body, sizeof(body), rate_body(opt, st));
  human_bytes(wire, sizeof(wire), (double)st->wire_bytes_in);
  printf("rate:      %.1f req/s, %s/s of body %s %.3f s (wire in %s, wall %.3f s)\n",
         rate_requests(opt, st), body, windowed(opt) ? "completed in" : "over", secs, wire, wall_s);
  if (opt->rate > 0) {
    char lag[32];
    human_time(lag, sizeof(lag), bench_hist_quantile(&st->send_lag, 0.99));
    printf("arrivals:  target %.1f/s, sent %.1f/s, send lag p99 %s", opt->rate, send_rate(st), lag);
    if (st->unsent_due)
      printf("; %llu due but never sent (the server fell behind)",
             (unsigned long long)st->unsent_due);
    printf("\n");
  }
  print_hist_line("latency:", &st->latency);
  if (st->latency.count) {
    char lo[32], hi[32], mean[32], sd[32];
    human_time(lo, sizeof(lo), st->latency.min);
    human_time(hi, sizeof(hi), st->latency.max);
    human_time(mean, sizeof(mean), bench_hist_mean(&st->latency));
    human_time(sd, sizeof(sd), bench_hist_stddev(&st->latency));
    printf("           min %s, max %s, mean %s, sd %s\n", lo, hi, mean, sd);
  }
  print_hist_line("ttfb:", &st->ttfb);
  print_traffic_line(st);
  print_hist_line("connect:", &st->connect);
  printf("           %llu connection%s opened, %llu reconnect%s, %llu request%s retried\n",
         (unsigned long long)st->connections_opened, st->connections_opened == 1 ? "" : "s",
         (unsigned long long)st->reconnects, st->reconnects == 1 ? "" : "s",
         (unsigned long long)st->retried, st->retried == 1 ? "" : "s");
  printf("status:   ");
  int any = 0;
  for (int i = 1; i <= 6; i++) {
    int c = i % 6; /* 1xx..5xx, then the others */
    if (st->status_classes[c] == 0) continue;
    printf("%s %llu %s", any ? "," : "", (unsigned long long)st->status_classes[c],
           c ? (const char *[]){"", "1xx", "2xx", "3xx", "4xx", "5xx"}[c] : "other");
    any = 1;
  }
  printf("%s\n", any ? "" : " no responses");
  print_errors_line(st);
}

static void json_hist(const char *name, const bench_hist *h, int last) {
  printf("  \"%s\": {\"count\": %llu, \"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, "
         "\"p99_9\": %.1f, \"max\": %.1f, \"mean\": %.1f, \"min\": %.1f, \"sd\": %.1f}%s\n",
         name, (unsigned long long)h->count, (double)bench_hist_quantile(h, 0.5) / 1e3,
         (double)bench_hist_quantile(h, 0.9) / 1e3, (double)bench_hist_quantile(h, 0.99) / 1e3,
         (double)bench_hist_quantile(h, 0.999) / 1e3, (double)h->max / 1e3,
         (double)bench_hist_mean(h) / 1e3, h->count ? (double)h->min / 1e3 : 0.0,
         (double)bench_hist_stddev(h) / 1e3, last ? "" : ",");
}

/* A JSON string body: quotes, backslashes and control bytes escaped. */
static void json_escaped(const char *s) {
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20 || ch == 0x7f)
      printf("\\u%04x", ch);
    else
      putchar(ch);
  }
}

void bench_report_json(const bench_options *opt, const bench_stats *st, double wall_s) {
  double secs = rate_s(opt, st);
  printf("{\n  \"url\": \"%s://", opt->scheme);
  json_escaped(opt->authority);
  json_escaped(opt->paths[0]);
  printf("\",\n");
  printf("  \"protocol\": \"%s\",\n", st->proto ? io_proto_name(st->proto) : "");
  printf("  \"negotiation\": \"%s\",\n", st->proto ? io_negotiation_name(st->how) : "");
  printf("  \"tls\": \"%s\",\n", st->tls_version ? st->tls_version : "");
  printf("  \"threads\": %d, \"connections\": %d, \"streams\": %d,\n", opt->threads,
         opt->connections, opt->streams);
  printf("  \"mode\": \"%s\", \"target_rate\": %.3f,\n", opt->rate > 0 ? "open" : "closed",
         opt->rate);
  printf("  \"requests\": %llu, \"ok\": %llu, \"failed\": %llu, \"warmup_requests\": %llu,\n",
         (unsigned long long)(st->measured_ok + st->measured_failed),
         (unsigned long long)st->measured_ok, (unsigned long long)st->measured_failed,
         (unsigned long long)st->warmup_requests);
  printf("  \"duration_s\": %.6f, \"wall_s\": %.6f,\n", secs, wall_s);
  printf("  \"requests_per_s\": %.3f, \"bytes_per_s\": %.1f, \"window_ok\": %llu,\n",
         rate_requests(opt, st), rate_body(opt, st), (unsigned long long)st->window_ok);
  printf("  \"body_bytes\": %llu, \"wire_bytes_in\": %llu,\n", (unsigned long long)st->body_bytes,
         (unsigned long long)st->wire_bytes_in);
  printf("  \"header_bytes_in\": %llu, \"header_bytes_decoded\": %llu, \"data_bytes_in\": %llu,\n",
         (unsigned long long)st->header_bytes_in, (unsigned long long)st->header_bytes_decoded,
         (unsigned long long)st->data_bytes_in);
  printf("  \"send_rate\": %.3f, \"sends\": %llu, \"unsent_due\": %llu,\n", send_rate(st),
         (unsigned long long)st->sends, (unsigned long long)st->unsent_due);
  printf("  \"connections_opened\": %llu, \"reconnects\": %llu, \"retried\": %llu,\n",
         (unsigned long long)st->connections_opened, (unsigned long long)st->reconnects,
         (unsigned long long)st->retried);
  json_hist("latency_us", &st->latency, 0);
  json_hist("ttfb_us", &st->ttfb, 0);
  json_hist("connect_us", &st->connect, 0);
  json_hist("send_lag_us", &st->send_lag, 0);
  printf("  \"status_classes\": {\"1xx\": %llu, \"2xx\": %llu, \"3xx\": %llu, \"4xx\": %llu, "
         "\"5xx\": %llu, \"other\": %llu},\n",
         (unsigned long long)st->status_classes[1], (unsigned long long)st->status_classes[2],
         (unsigned long long)st->status_classes[3], (unsigned long long)st->status_classes[4],
         (unsigned long long)st->status_classes[5], (unsigned long long)st->status_classes[0]);
  printf("  \"errors_total\": %llu,\n  \"errors\": {", (unsigned long long)bench_errors_total(st));
  for (int i = 0; i < BENCH_ERR_COUNT; i++)
    printf("%s\"%s\": %llu", i ? ", " : "", bench_error_name(i), (unsigned long long)st->errors[i]);
  printf("}\n}\n");
}
