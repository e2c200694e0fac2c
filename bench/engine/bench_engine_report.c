/* bench_engine_report.c — bench_engine's figures as text (the default) or as one JSON
 * object (--json), each with the target or rule it is judged by. Reads a results struct
 * (bench_engine.h) that main filled; measures nothing.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_engine.h"
#include "speedy/speedy.h"

static const char *met(int ok) { return ok ? "met" : "MISSED"; }

void print_text(const results *r) {
  const config *cfg = r->cfg;
  printf(PROG " %s, libspeedy %s, %s\n", SPEEDY_VERSION_STRING, speedy_version(),
         speedy_protocol_name(cfg->protocol));
  printf("corpus: %zu HAR files (%zu skipped), %zu request/response header sets, %s\n",
         r->corpus->n_files, r->corpus->n_skipped, r->corpus->n_entries, cfg->har_dir);
  printf("deflate setting timed: level %d, windowBits %d, memLevel %d (%s)\n", r->setting.level,
         r->setting.window_bits, r->setting.mem_level,
         cfg->setting_given ? "--deflate" : "engine default");
  if (r->have_throughput) {
    const throughput_result *t = &r->throughput;
    printf("\nexchange throughput: %llu exchanges, %u streams in flight, %u-byte bodies\n",
           (unsigned long long)t->exchanges, cfg->in_flight, cfg->body_size);
    printf("  exchanges/s (CPU):  %.0f   (%.2f us each; target >= %.0f: %s)\n", t->per_second_cpu,
           1e6 / t->per_second_cpu, TARGET_EXCHANGES_PER_SECOND,
           met(t->per_second_cpu >= TARGET_EXCHANGES_PER_SECOND));
    printf("  exchanges/s (wall): %.0f   (%.2f s wall, %.2f s CPU)\n", t->per_second_wall,
           t->wall_seconds, t->cpu_seconds);
    printf("  bytes on the wire per exchange: %.0f client->server, %.0f server->client\n",
           t->wire_up_per_exchange, t->wire_down_per_exchange);
    if (t->zlib_timed) {
      printf("  zlib share: %.1f%%   (deflate %.1f%%, inflate %.1f%%; %llu zlib calls timed)\n",
             t->zlib_share, t->deflate_share, t->inflate_share, (unsigned long long)t->zlib_calls);
      printf("  everything else: %.1f%%   (target < %.0f%%: %s; includes <= %.1f%% timer "
             "overhead)\n",
             100.0 - t->zlib_share, TARGET_ELSE_SHARE,
             met(100.0 - t->zlib_share < TARGET_ELSE_SHARE), t->timer_overhead_share);
    } else {
      printf("  zlib share: not timed in the run (linker without --wrap); see below\n");
    }
  }
  if (r->have_micro) {
    const micro_result *m = &r->micro;
    printf("\nzlib alone (hdblock deflate + inflate of the same blocks, same order, %llu "
           "exchanges):\n",
           (unsigned long long)m->exchanges);
    printf("  %.2f us per exchange in hdblock", m->us_per_exchange);
    if (m->zlib_us_per_exchange > 0)
      printf(", %.2f us inside zlib (deflate %.2f, inflate %.2f)", m->zlib_us_per_exchange,
             m->deflate_us, m->inflate_us);
    printf("\n");
    if (r->have_throughput) {
      double exchange_us = 1e6 / r->throughput.per_second_cpu;
      double zlib_us = m->zlib_us_per_exchange > 0 ? m->zlib_us_per_exchange : m->us_per_exchange;
      printf("  zlib share (micro-benchmark / exchange CPU time): %.1f%%, everything else "
             "%.1f%%\n",
             100.0 * zlib_us / exchange_us, 100.0 - 100.0 * zlib_us / exchange_us);
    }
  }
  if (r->have_memory) {
    const memory_result *m = &r->memory;
    size_t idle = m->idle_client > m->idle_server ? m->idle_client : m->idle_server;
    printf("\nmemory (speedy_session_memory, zlib included):\n");
    printf("  idle session after one exchange: client %zu B, server %zu B   (target <= %u: "
           "%s)\n",
           m->idle_client, m->idle_server, TARGET_IDLE_SESSION_BYTES,
           met(idle <= TARGET_IDLE_SESSION_BYTES));
    printf("  new session before any traffic:  client %zu B, server %zu B\n", m->fresh_client,
           m->fresh_server);
    printf("  one deflate context %zu B (zlib's formula: %zu + its state struct), one inflate "
           "context %zu B\n",
           m->deflate_state, deflate_formula_bytes(&r->setting), m->inflate_state);
    printf("  per open stream (%u open, request body pending, unanswered): client %.0f B, "
           "server %.0f B\n",
           m->open_streams, m->per_stream_client, m->per_stream_server);
  }
  if (r->have_compression) {
    const compression_result *c = &r->session_current, *ref = &r->session_reference;
    printf("\nheader compression (%s dictionary, one context per direction per host, frame "
           "headers counted, vs HTTP/1.1 text):\n",
           wire_version(cfg->protocol) == 2 ? "SPDY/2" : "SPDY/3");
    printf("  level %d, windowBits %2d, memLevel %d: requests %.2f%% smaller, responses %.2f%% "
           "smaller (timed setting)\n",
           c->setting.level, c->setting.window_bits, c->setting.mem_level, c->request_saving,
           c->response_saving);
    printf("  level %d, windowBits %2d, memLevel %d: requests %.2f%% smaller, responses %.2f%% "
           "smaller (reference)\n",
           ref->setting.level, ref->setting.window_bits, ref->setting.mem_level,
           ref->request_saving, ref->response_saving);
    double loss_req = ref->request_saving - c->request_saving;
    double loss_resp = ref->response_saving - c->response_saving;
    printf("  loss vs reference: requests %.2f points, responses %.2f points   (rule <= %.0f: "
           "%s)\n",
           loss_req, loss_resp, ALLOWED_COMPRESSION_LOSS,
           met(loss_req <= ALLOWED_COMPRESSION_LOSS && loss_resp <= ALLOWED_COMPRESSION_LOSS));
  }
  if (r->sweep.n_points > 0) {
    const sweep_result *s = &r->sweep;
    int with_idle = s->idle_estimate_base > 0;
    printf("\ndeflate sweep (compression: hdblock, same blocks and per-host contexts; state: "
           "allocator hook%s; us/exch: CPU of hdblock deflate + inflate both ways per exchange, "
           "long-lived contexts):\n",
           with_idle ? "; idle session: estimated from the one measured above" : "");
    printf("  level wbits mlevel  deflate state%s  requests  responses  us/exch\n",
           with_idle ? "  idle session" : "");
    for (size_t i = 0; i < s->n_points; i++) {
      const compression_result *p = &s->points[i];
      char idle[32] = "";
      if (with_idle)
        snprintf(idle, sizeof idle, "  %12.0f", s->idle_estimate_base + (double)p->deflate_state);
      char marks[96] = "";
      if ((int)i == s->current) strcat(marks, " timed");
      if ((int)i == s->recommended) strcat(marks, " RECOMMENDED");
      if ((int)i == s->smallest) strcat(marks, " smallest");
      if ((int)i == s->fastest) strcat(marks, " fastest");
      printf("  %5d %5d %6d  %13zu%s  %7.2f%%  %8.2f%%  %8.2f%s%s\n", p->setting.level,
             p->setting.window_bits, p->setting.mem_level, p->deflate_state, idle,
             p->request_saving, p->response_saving, p->zlib_us_per_exchange,
             marks[0] != '\0' ? "  <-" : "", marks);
    }
    printf("rule: at most %.0f point less than level %d / windowBits %d / memLevel %d on "
           "requests and on responses%s\n",
           ALLOWED_COMPRESSION_LOSS, REFERENCE_LEVEL, REFERENCE_WINDOW_BITS, REFERENCE_MEM_LEVEL,
           with_idle ? ", idle session within target" : "");
    printf("choice: the fastest header compression among those (times within %.0f%% count as "
           "equal), then the smallest state\n",
           (SPEED_TIE - 1.0) * 100.0);
    if (s->recommended >= 0) {
      const compression_result *p = &s->points[s->recommended];
      printf("recommended deflate setting: level %d, windowBits %d, memLevel %d\n",
             p->setting.level, p->setting.window_bits, p->setting.mem_level);
    } else {
      printf("recommended deflate setting: none of the swept settings qualifies\n");
    }
  }
}

static json_t *setting_json(const deflate_setting *s) {
  return json_pack("{s:i, s:i, s:i}", "level", s->level, "window_bits", s->window_bits, "mem_level",
                   s->mem_level);
}

static json_t *compression_json(const compression_result *c) {
  return json_pack("{s:o, s:I, s:I, s:I, s:I, s:f, s:f, s:I, s:f}", "setting",
                   setting_json(&c->setting), "request_http1_bytes", (json_int_t)c->request_http1,
                   "request_spdy_bytes", (json_int_t)c->request_spdy, "response_http1_bytes",
                   (json_int_t)c->response_http1, "response_spdy_bytes",
                   (json_int_t)c->response_spdy, "request_saving_percent", c->request_saving,
                   "response_saving_percent", c->response_saving, "deflate_state_bytes",
                   (json_int_t)c->deflate_state, "zlib_us_per_exchange", c->zlib_us_per_exchange);
}

int print_json(const results *r) {
  const config *cfg = r->cfg;
  json_t *root = json_pack(
      "{s:s, s:s, s:s, s:{s:s, s:I, s:I, s:I}, s:o, s:b}", "program", PROG, "libspeedy",
      speedy_version(), "protocol", speedy_protocol_name(cfg->protocol), "corpus", "dir",
      cfg->har_dir, "files", (json_int_t)r->corpus->n_files, "skipped",
      (json_int_t)r->corpus->n_skipped, "header_sets", (json_int_t)r->corpus->n_entries, "setting",
      setting_json(&r->setting), "setting_is_engine_default", !cfg->setting_given);
  if (root == NULL) return -1;
  if (r->have_throughput) {
    const throughput_result *t = &r->throughput;
    json_t *o = json_pack(
        "{s:I, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b}", "exchanges",
        (json_int_t)t->exchanges, "streams_in_flight", (int)cfg->in_flight, "body_bytes",
        (int)cfg->body_size, "cpu_seconds", t->cpu_seconds, "wall_seconds", t->wall_seconds,
        "exchanges_per_second_cpu", t->per_second_cpu, "exchanges_per_second_wall",
        t->per_second_wall, "us_per_exchange_cpu", 1e6 / t->per_second_cpu,
        "wire_bytes_up_per_exchange", t->wire_up_per_exchange, "wire_bytes_down_per_exchange",
        t->wire_down_per_exchange, "target_met", t->per_second_cpu >= TARGET_EXCHANGES_PER_SECOND);
    if (t->zlib_timed) {
      json_object_set_new(o, "zlib_share_percent", json_real(t->zlib_share));
      json_object_set_new(o, "deflate_share_percent", json_real(t->deflate_share));
      json_object_set_new(o, "inflate_share_percent", json_real(t->inflate_share));
      json_object_set_new(o, "else_share_percent", json_real(100.0 - t->zlib_share));
      json_object_set_new(o, "else_target_met",
                          json_boolean(100.0 - t->zlib_share < TARGET_ELSE_SHARE));
      json_object_set_new(o, "timer_overhead_percent", json_real(t->timer_overhead_share));
    }
    json_object_set_new(root, "throughput", o);
  }
  if (r->have_micro) {
    const micro_result *m = &r->micro;
    json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:f}", "exchanges", (json_int_t)m->exchanges,
                          "hdblock_us_per_exchange", m->us_per_exchange, "zlib_us_per_exchange",
                          m->zlib_us_per_exchange, "deflate_us", m->deflate_us, "inflate_us",
                          m->inflate_us);
    if (r->have_throughput) {
      double share = 100.0 *
                     (m->zlib_us_per_exchange > 0 ? m->zlib_us_per_exchange : m->us_per_exchange) *
                     r->throughput.per_second_cpu / 1e6;
      json_object_set_new(o, "zlib_share_percent", json_real(share));
    }
    json_object_set_new(root, "zlib_alone", o);
  }
  if (r->have_memory) {
    const memory_result *m = &r->memory;
    size_t idle = m->idle_client > m->idle_server ? m->idle_client : m->idle_server;
    json_object_set_new(
        root, "memory",
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:f, s:f, s:b}", "idle_client_bytes",
                  (json_int_t)m->idle_client, "idle_server_bytes", (json_int_t)m->idle_server,
                  "new_client_bytes", (json_int_t)m->fresh_client, "new_server_bytes",
                  (json_int_t)m->fresh_server, "deflate_state_bytes", (json_int_t)m->deflate_state,
                  "inflate_state_bytes", (json_int_t)m->inflate_state, "open_streams",
                  (int)m->open_streams, "per_stream_client_bytes", m->per_stream_client,
                  "per_stream_server_bytes", m->per_stream_server, "idle_target_met",
                  idle <= TARGET_IDLE_SESSION_BYTES));
  }
  if (r->have_compression) {
    json_t *o = json_pack("{s:o, s:o, s:b}", "timed_setting", compression_json(&r->session_current),
                          "reference", compression_json(&r->session_reference),
                          "sweep_agrees_with_session", r->session_matches_hdblock);
    json_object_set_new(root, "compression", o);
  }
  if (r->sweep.n_points > 0) {
    const sweep_result *sw = &r->sweep;
    json_t *points = json_array();
    for (size_t i = 0; i < sw->n_points; i++)
      json_array_append_new(points, compression_json(&sw->points[i]));
    json_t *o = json_pack("{s:o, s:f, s:f}", "points", points, "allowed_loss_points",
                          ALLOWED_COMPRESSION_LOSS, "speed_tie", SPEED_TIE);
    const struct {
      const char *key;
      int index;
    } picks[] = {
        {"recommended", sw->recommended}, {"smallest", sw->smallest}, {"fastest", sw->fastest}};
    for (size_t i = 0; i < sizeof picks / sizeof picks[0]; i++)
      json_object_set_new(o, picks[i].key,
                          picks[i].index >= 0 ? setting_json(&sw->points[picks[i].index].setting)
                                              : json_null());
    if (sw->idle_estimate_base > 0)
      json_object_set_new(o, "idle_session_bytes_without_deflate",
                          json_real(sw->idle_estimate_base));
    json_object_set_new(root, "sweep", o);
  }
  char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(6));
  json_decref(root);
  if (text == NULL) return -1;
  puts(text);
  free(text);
  return 0;
}
