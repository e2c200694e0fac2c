/* bench_engine_measure.c — the measurements of bench_engine: a client and a server session
 * connected in memory (the pair), and with it the exchange throughput (zlib timed inside
 * the run), zlib alone on the same header blocks, heap per session and per open stream,
 * header compression through real sessions or hdblock alone, and the deflate sweep's grid,
 * rule and recommendation. Fills the *_result structs of bench_engine.h; prints nothing
 * but a line on stderr when a part fails.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_engine.h"
#include "frame.h"
#include "har_headers.h"
#include "hdblock.h"
#include "mem.h"
#include "speedy/speedy.h"
#include "zlib_timer.h"

#define BODY_SLOTS 2048u /* > MAX_IN_FLIGHT: one per stream in flight */
#define OPEN_STREAMS_FOR_MEMORY 1000u
#define TRANSFER_BUFFER (64u * 1024u)

/* ---- Small helpers ------------------------------------------------------------------ */

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int wire_version(speedy_protocol protocol) { return protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3; }

size_t deflate_formula_bytes(const deflate_setting *s) {
  /* zlib's documented deflate memory: window, prev and head arrays, pending buffer. */
  return ((size_t)1 << (s->window_bits + 2)) + ((size_t)1 << (s->mem_level + 9));
}

/* ---- The in-memory pair of sessions ------------------------------------------------- */

typedef struct body_slot {
  uint32_t sent;
} body_slot;

typedef enum pair_mode {
  PAIR_EXCHANGE, /* server answers each request with its response and a body */
  PAIR_HEADERS,  /* server answers with response headers only (compression figures) */
  PAIR_SILENT    /* server never answers (open-stream memory) */
} pair_mode;

typedef struct pair {
  speedy_session *client;
  speedy_session *server;
  const har_headers_corpus *corpus;
  const size_t *sequence; /* entry indices in submission order; NULL: 0, 1, 2, ... */
  size_t sequence_len;
  pair_mode mode;
  uint32_t body_size;
  const uint8_t *body;
  body_slot slots[BODY_SLOTS];

  uint64_t submitted;
  uint64_t completed;
  uint32_t in_flight;
  uint64_t server_requests; /* request header blocks completed on the server */

  /* Checks: every header field and body byte arrives. */
  uint64_t expected_request_fields, seen_request_fields;
  uint64_t expected_response_fields, seen_response_fields;
  uint64_t body_bytes;

  /* Bytes on the wire, and header-bearing frames (frame header included). */
  uint64_t wire_client_to_server, wire_server_to_client;
  uint64_t syn_stream_bytes, syn_reply_bytes;
  uint64_t syn_stream_frames, syn_reply_frames;

  char error[256]; /* first failure, "" if none */
  uint8_t buffer[TRANSFER_BUFFER];
} pair;

__attribute__((format(printf, 2, 3))) static void pair_fail(pair *p, const char *format, ...) {
  if (p->error[0] != '\0') return;
  va_list ap;
  va_start(ap, format);
  vsnprintf(p->error, sizeof p->error, format, ap);
  va_end(ap);
}

static const har_headers_entry *pair_entry(const pair *p, uint64_t k) {
  size_t i = (size_t)(k % p->sequence_len);
  return &p->corpus->entries[p->sequence != NULL ? p->sequence[i] : i];
}

/* Client stream k (0-based) has id 2k + 1: ids are assigned in submission order. */
static uint64_t request_number(int32_t stream_id) { return (uint64_t)(stream_id - 1) / 2; }

static int64_t body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                         uint32_t *flags, void *source, void *user) {
  (void)session;
  (void)stream_id;
  pair *p = user;
  body_slot *slot = source;
  size_t left = p->body_size - slot->sent;
  size_t n = len < left ? len : left;
  memcpy(buf, p->body + slot->sent, n);
  slot->sent += (uint32_t)n;
  if (slot->sent == p->body_size) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

static int64_t deferred_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                             uint32_t *flags, void *source, void *user) {
  (void)session, (void)stream_id, (void)buf, (void)len, (void)flags, (void)source, (void)user;
  return SPEEDY_ERR_DEFERRED;
}

static int server_on_header(speedy_session *session, int32_t stream_id, const speedy_header *header,
                            void *user) {
  (void)session, (void)stream_id, (void)header;
  pair *p = user;
  p->seen_request_fields++;
  return 0;
}

static int server_on_headers_end(speedy_session *session, int32_t stream_id, int end_stream,
                                 void *user) {
  pair *p = user;
  p->server_requests++;
  if (p->mode == PAIR_SILENT) return 0;
  if (!end_stream) {
    pair_fail(p, "server: request on stream %d did not end with its headers", (int)stream_id);
    return -1;
  }
  uint64_t k = request_number(stream_id);
  const har_headers_entry *e = pair_entry(p, k);
  int rc;
  if (p->mode == PAIR_EXCHANGE) {
    body_slot *slot = &p->slots[k % BODY_SLOTS];
    slot->sent = 0;
    rc = speedy_submit_response(session, stream_id, e->response.headers, e->response.n_headers,
                                body_read, slot);
  } else {
    rc = speedy_submit_response(session, stream_id, e->response.headers, e->response.n_headers,
                                NULL, NULL);
  }
  if (rc != 0) {
    pair_fail(p, "server: speedy_submit_response(stream %d): %s", (int)stream_id,
              speedy_strerror(rc));
    return -1;
  }
  return 0;
}

static int client_on_header(speedy_session *session, int32_t stream_id, const speedy_header *header,
                            void *user) {
  (void)session, (void)stream_id, (void)header;
  pair *p = user;
  p->seen_response_fields++;
  return 0;
}

static int client_on_data_chunk(speedy_session *session, int32_t stream_id, const uint8_t *data,
                                size_t len, void *user) {
  (void)session, (void)stream_id, (void)data;
  pair *p = user;
  p->body_bytes += len;
  return 0;
}

static int client_on_stream_close(speedy_session *session, int32_t stream_id, uint32_t status,
                                  void *user) {
  (void)session;
  pair *p = user;
  if (status != SPEEDY_RST_NONE) {
    pair_fail(p, "client: stream %d closed with %s", (int)stream_id,
              speedy_rst_status_name(status));
    return -1;
  }
  p->completed++;
  p->in_flight--;
  return 0;
}

static void on_frame(speedy_session *session, int sent, int type, uint8_t flags, int32_t stream_id,
                     uint32_t length, const char *summary, void *user) {
  (void)flags, (void)stream_id, (void)summary;
  pair *p = user;
  if (!sent) return;
  if (type == SPEEDY_SPDY_FRAME_SYN_STREAM && session == p->client) {
    p->syn_stream_bytes += SPDY_FRAME_HEADER_LEN + (uint64_t)length;
    p->syn_stream_frames++;
  } else if (type == SPEEDY_SPDY_FRAME_SYN_REPLY && session == p->server) {
    p->syn_reply_bytes += SPDY_FRAME_HEADER_LEN + (uint64_t)length;
    p->syn_reply_frames++;
  }
}

/* Creates both sessions. options may carry a deflate setting (NULL: engine default);
 * server_max_streams > 0 overrides the server's MAX_CONCURRENT_STREAMS. */
static int pair_open(pair *p, speedy_protocol protocol, const deflate_setting *setting,
                     uint32_t server_max_streams, int trace_frames) {
  speedy_callbacks *client_cb = NULL, *server_cb = NULL;
  speedy_options *client_opt = NULL, *server_opt = NULL;
  int rc = speedy_callbacks_new(&client_cb);
  if (rc == 0) rc = speedy_callbacks_new(&server_cb);
  if (rc == 0) rc = speedy_options_new(&client_opt);
  if (rc == 0) rc = speedy_options_new(&server_opt);
  if (rc == 0 && setting != NULL) {
    rc = speedy_options_set_deflate_params(client_opt, setting->level, setting->window_bits,
                                           setting->mem_level);
    if (rc == 0)
      rc = speedy_options_set_deflate_params(server_opt, setting->level, setting->window_bits,
                                             setting->mem_level);
  }
  if (rc == 0) {
    if (server_max_streams > 0)
      speedy_options_set_max_concurrent_streams(server_opt, server_max_streams);
    speedy_callbacks_set_on_header(server_cb, server_on_header);
    speedy_callbacks_set_on_headers_end(server_cb, server_on_headers_end);
    speedy_callbacks_set_on_header(client_cb, client_on_header);
    speedy_callbacks_set_on_data_chunk(client_cb, client_on_data_chunk);
    speedy_callbacks_set_on_stream_close(client_cb, client_on_stream_close);
    if (trace_frames) {
      speedy_callbacks_set_on_frame(client_cb, on_frame);
      speedy_callbacks_set_on_frame(server_cb, on_frame);
    }
    rc = speedy_session_new(&p->client, protocol, SPEEDY_ROLE_CLIENT, client_cb, client_opt, p);
  }
  if (rc == 0)
    rc = speedy_session_new(&p->server, protocol, SPEEDY_ROLE_SERVER, server_cb, server_opt, p);
  if (rc != 0) pair_fail(p, "cannot create sessions: %s", speedy_strerror(rc));
  speedy_callbacks_del(client_cb);
  speedy_callbacks_del(server_cb);
  speedy_options_del(client_opt);
  speedy_options_del(server_opt);
  return rc;
}

static void pair_close(pair *p) {
  if (p->client != NULL) speedy_session_del(p->client);
  if (p->server != NULL) speedy_session_del(p->server);
  p->client = p->server = NULL;
}

/* Moves what `from` has to send into `to`. Returns bytes moved, or -1. */
static int64_t pair_transfer(pair *p, speedy_session *from, speedy_session *to) {
  int64_t moved = 0;
  for (;;) {
    int64_t n = speedy_session_send(from, p->buffer, sizeof p->buffer);
    if (n < 0) {
      pair_fail(p, "%s: speedy_session_send: %s", from == p->client ? "client" : "server",
                speedy_strerror((int)n));
      return -1;
    }
    if (n == 0) return moved;
    int64_t used = speedy_session_recv(to, p->buffer, (size_t)n);
    if (used != n) {
      pair_fail(p, "%s: speedy_session_recv: %s", to == p->client ? "client" : "server",
                used < 0 ? speedy_strerror((int)used) : "consumed only part of the input");
      return -1;
    }
    moved += n;
  }
}

/* Moves bytes both ways until neither side has anything to send. */
static int pair_pump(pair *p) {
  for (;;) {
    int64_t a = pair_transfer(p, p->client, p->server);
    if (a < 0) return -1;
    p->wire_client_to_server += (uint64_t)a;
    int64_t b = pair_transfer(p, p->server, p->client);
    if (b < 0) return -1;
    p->wire_server_to_client += (uint64_t)b;
    if (a == 0 && b == 0) return 0;
  }
}

/* Submits the next request in sequence. deferred_body: the request keeps its stream open
 * with a body that never becomes ready. */
/* Fields a peer of ours hands over for a list sent in SPDY/3's names: all but :version,
 * which the engine keeps to itself (applications see HTTP/2's names). */
static size_t fields_delivered(const speedy_header *headers, size_t n) {
  size_t delivered = n;
  for (size_t i = 0; i < n; i++)
    if (headers[i].name_len == 8 && memcmp(headers[i].name, ":version", 8) == 0) delivered--;
  return delivered;
}

static int pair_submit(pair *p, int deferred_body) {
  const har_headers_entry *e = pair_entry(p, p->submitted);
  int32_t id = speedy_submit_request(p->client, 3, e->request.headers, e->request.n_headers,
                                     deferred_body ? deferred_read : NULL, NULL, NULL);
  if (id < 0) {
    pair_fail(p, "client: speedy_submit_request (%s%.60s): %s", e->host,
              e->request.headers[1].value, speedy_strerror(id));
    return -1;
  }
  if ((uint64_t)id != 2 * p->submitted + 1) {
    pair_fail(p, "client: request %llu got stream id %d, expected %llu",
              (unsigned long long)p->submitted, (int)id,
              (unsigned long long)(2 * p->submitted + 1));
    return -1;
  }
  p->expected_request_fields += fields_delivered(e->request.headers, e->request.n_headers);
  p->expected_response_fields += fields_delivered(e->response.headers, e->response.n_headers);
  p->submitted++;
  p->in_flight++;
  return 0;
}

/* After a run: every field and byte arrived? */
static int pair_check(pair *p, uint64_t expected_body) {
  if (p->error[0] != '\0') return -1;
  if (p->seen_request_fields != p->expected_request_fields)
    pair_fail(p, "server saw %llu request header fields, expected %llu",
              (unsigned long long)p->seen_request_fields,
              (unsigned long long)p->expected_request_fields);
  else if (p->mode != PAIR_SILENT && p->seen_response_fields != p->expected_response_fields)
    pair_fail(p, "client saw %llu response header fields, expected %llu",
              (unsigned long long)p->seen_response_fields,
              (unsigned long long)p->expected_response_fields);
  else if (p->body_bytes != expected_body)
    pair_fail(p, "client received %llu body bytes, expected %llu",
              (unsigned long long)p->body_bytes, (unsigned long long)expected_body);
  return p->error[0] != '\0' ? -1 : 0;
}

static pair *pair_new(const har_headers_corpus *corpus, const size_t *sequence, size_t sequence_len,
                      pair_mode mode, const uint8_t *body, uint32_t body_size) {
  pair *p = calloc(1, sizeof *p);
  if (p == NULL) return NULL;
  p->corpus = corpus;
  p->sequence = sequence;
  p->sequence_len = sequence != NULL ? sequence_len : corpus->n_entries;
  p->mode = mode;
  p->body = body;
  p->body_size = body_size;
  return p;
}

/* ---- 1. Exchange throughput (with zlib timed inside the run) ------------------------ */

int run_throughput(const config *cfg, const har_headers_corpus *corpus, const uint8_t *body,
                   throughput_result *out) {
  pair *p = pair_new(corpus, NULL, 0, PAIR_EXCHANGE, body, cfg->body_size);
  if (p == NULL) {
    fprintf(stderr, PROG ": out of memory\n");
    return -1;
  }
  int rc = pair_open(p, cfg->protocol, cfg->setting_given ? &cfg->setting : NULL, 0, 0);
  uint64_t target = cfg->seconds > 0 ? UINT64_MAX : cfg->exchanges;
  double timer_overhead = zlib_timer_overhead_ns();
  /* Let the sessions exchange their opening SETTINGS before the clock starts. */
  if (rc == 0) rc = pair_pump(p);

  zlib_timer_reset();
  zlib_timer_enable(1);
  double wall0 = clock_seconds(CLOCK_MONOTONIC);
  double cpu0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double deadline = cfg->seconds > 0 ? wall0 + cfg->seconds : 0;
  uint64_t stalls = 0;
  while (rc == 0 && p->completed < target) {
    while (p->in_flight < cfg->in_flight && p->submitted < target) {
      if (pair_submit(p, 0) != 0) {
        rc = -1;
        break;
      }
    }
    if (rc != 0) break;
    uint64_t before = p->completed;
    uint64_t wire_before = p->wire_client_to_server + p->wire_server_to_client;
    /* One round each way: keeps the pipeline full without waiting for quiet. */
    int64_t a = pair_transfer(p, p->client, p->server);
    int64_t b = a < 0 ? -1 : pair_transfer(p, p->server, p->client);
    if (a < 0 || b < 0) {
      rc = -1;
      break;
    }
    p->wire_client_to_server += (uint64_t)a;
    p->wire_server_to_client += (uint64_t)b;
    if (p->completed == before &&
        p->wire_client_to_server + p->wire_server_to_client == wire_before) {
      if (++stalls > 3) {
        pair_fail(p, "no progress with %u streams in flight (engine stalled)", p->in_flight);
        rc = -1;
      }
    } else {
      stalls = 0;
    }
    if (deadline > 0 && clock_seconds(CLOCK_MONOTONIC) >= deadline) target = p->submitted;
  }
  double cpu1 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double wall1 = clock_seconds(CLOCK_MONOTONIC);
  zlib_timer_enable(0);
  if (rc == 0) rc = pair_pump(p);
  if (rc == 0) rc = pair_check(p, p->completed * (uint64_t)cfg->body_size);
  if (rc != 0) {
    fprintf(stderr, PROG ": exchange throughput: %s\n", p->error);
  } else {
    zlib_timer_totals z;
    zlib_timer_get(&z);
    out->exchanges = p->completed;
    out->cpu_seconds = cpu1 - cpu0;
    out->wall_seconds = wall1 - wall0;
    out->per_second_cpu = (double)p->completed / out->cpu_seconds;
    out->per_second_wall = (double)p->completed / out->wall_seconds;
    out->wire_up_per_exchange = (double)p->wire_client_to_server / (double)p->completed;
    out->wire_down_per_exchange = (double)p->wire_server_to_client / (double)p->completed;
    out->zlib_timed = zlib_timer_available();
    double wall_ns = out->wall_seconds * 1e9;
    out->deflate_share = 100.0 * (double)z.deflate_ns / wall_ns;
    out->inflate_share = 100.0 * (double)z.inflate_ns / wall_ns;
    out->zlib_share = out->deflate_share + out->inflate_share;
    out->zlib_calls = z.deflate_calls + z.inflate_calls;
    out->timer_overhead_share = 100.0 * (double)out->zlib_calls * timer_overhead / wall_ns;
  }
  pair_close(p);
  free(p);
  return rc;
}

/* ---- 2. zlib alone: the same header blocks through hdblock, in the same order ------- */

/* The first `exchanges` exchanges of the corpus (cycling) through two deflaters and two
 * inflaters kept for the whole run, as the sessions of the throughput test keep theirs. */
int run_micro(const config *cfg, const har_headers_corpus *corpus, const deflate_setting *setting,
              uint64_t exchanges, micro_result *out) {
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  int version = wire_version(cfg->protocol);
  spdy_hdblock_deflater client_deflater, server_deflater;
  spdy_hdblock_inflater client_inflater, server_inflater;
  speedy_buf request_block, response_block;
  speedy_buf_init(&request_block, 1u << 20);
  speedy_buf_init(&response_block, 1u << 20);
  int rc = spdy_hdblock_deflater_init(&client_deflater, &mem, version, setting->level,
                                      setting->window_bits, setting->mem_level);
  int rc2 = spdy_hdblock_deflater_init(&server_deflater, &mem, version, setting->level,
                                       setting->window_bits, setting->mem_level);
  int rc3 = spdy_hdblock_inflater_init(&client_inflater, &mem, version, 65536);
  int rc4 = spdy_hdblock_inflater_init(&server_inflater, &mem, version, 65536);
  if (rc != 0 || rc2 != 0 || rc3 != 0 || rc4 != 0) {
    fprintf(stderr, PROG ": zlib micro-benchmark: cannot set up hdblock contexts\n");
    rc = -1;
  }
  zlib_timer_reset();
  zlib_timer_enable(1);
  double cpu0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double wall0 = clock_seconds(CLOCK_MONOTONIC);
  uint64_t k;
  for (k = 0; rc == 0 && k < exchanges; k++) {
    const har_headers_entry *e = &corpus->entries[k % corpus->n_entries];
    const uint8_t *plain;
    size_t plain_len;
    speedy_buf_reset(&request_block);
    speedy_buf_reset(&response_block);
    rc = spdy_hdblock_deflate(&client_deflater, &mem, &request_block, e->request.headers,
                              e->request.n_headers);
    if (rc == 0)
      rc = spdy_hdblock_inflate(&server_inflater, &mem, speedy_buf_head(&request_block),
                                speedy_buf_len(&request_block), &plain, &plain_len);
    if (rc == 0)
      rc = spdy_hdblock_deflate(&server_deflater, &mem, &response_block, e->response.headers,
                                e->response.n_headers);
    if (rc == 0)
      rc = spdy_hdblock_inflate(&client_inflater, &mem, speedy_buf_head(&response_block),
                                speedy_buf_len(&response_block), &plain, &plain_len);
    if (rc != 0)
      fprintf(stderr, PROG ": zlib micro-benchmark: exchange %llu: %s\n", (unsigned long long)k,
              speedy_strerror(rc));
  }
  double cpu1 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double wall1 = clock_seconds(CLOCK_MONOTONIC);
  zlib_timer_enable(0);
  if (rc == 0 && k > 0) {
    zlib_timer_totals z;
    zlib_timer_get(&z);
    out->exchanges = k;
    out->us_per_exchange = (cpu1 - cpu0) * 1e6 / (double)k;
    /* The wrapped time is wall time; scale it onto CPU time (they differ only when the
     * process is descheduled). */
    double scale = (cpu1 - cpu0) / (wall1 - wall0);
    out->deflate_us = (double)z.deflate_ns / 1e3 * scale / (double)k;
    out->inflate_us = (double)z.inflate_ns / 1e3 * scale / (double)k;
    out->zlib_us_per_exchange = out->deflate_us + out->inflate_us;
  }
  spdy_hdblock_deflater_free(&client_deflater);
  spdy_hdblock_deflater_free(&server_deflater);
  spdy_hdblock_inflater_free(&client_inflater, &mem);
  spdy_hdblock_inflater_free(&server_inflater, &mem);
  speedy_buf_free(&request_block, &mem);
  speedy_buf_free(&response_block, &mem);
  return rc == 0 ? 0 : -1;
}

/* ---- 3. Memory ---------------------------------------------------------------------- */

/* Heap of one hdblock context at this setting, through the allocator hook: the deflater
 * right after init (zlib allocates all of deflate's state there), the inflater after it
 * inflated a block (inflate allocates its 32 KiB window on first use; the figure includes
 * the inflater's buffer for the inflated block). */
static int measure_zlib_state(const config *cfg, const har_headers_corpus *corpus,
                              const deflate_setting *setting, size_t *deflate_bytes,
                              size_t *inflate_bytes) {
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  int version = wire_version(cfg->protocol);
  spdy_hdblock_deflater d;
  spdy_hdblock_inflater inf;
  speedy_buf block;
  speedy_buf_init(&block, 1u << 20);
  const har_headers_entry *e = &corpus->entries[0];
  size_t before = mem.in_use;
  int rc = spdy_hdblock_deflater_init(&d, &mem, version, setting->level, setting->window_bits,
                                      setting->mem_level);
  if (rc != 0) return -1;
  *deflate_bytes = mem.in_use - before;
  rc = spdy_hdblock_deflate(&d, &mem, &block, e->request.headers, e->request.n_headers);
  before = mem.in_use;
  if (rc == 0) rc = spdy_hdblock_inflater_init(&inf, &mem, version, 65536);
  if (rc == 0) {
    const uint8_t *plain;
    size_t plain_len;
    rc = spdy_hdblock_inflate(&inf, &mem, speedy_buf_head(&block), speedy_buf_len(&block), &plain,
                              &plain_len);
    *inflate_bytes = mem.in_use - before;
    spdy_hdblock_inflater_free(&inf, &mem);
  }
  spdy_hdblock_deflater_free(&d);
  speedy_buf_free(&block, &mem);
  return rc;
}

int run_memory(const config *cfg, const har_headers_corpus *corpus, const deflate_setting *setting,
               memory_result *out) {
  int rc;
  /* Idle session: one exchange, then quiet. */
  {
    pair *p = pair_new(corpus, NULL, 0, PAIR_EXCHANGE, NULL, 0);
    if (p == NULL) return -1;
    rc = pair_open(p, cfg->protocol, cfg->setting_given ? &cfg->setting : NULL, 0, 0);
    if (rc == 0) {
      out->fresh_client = speedy_session_memory(p->client);
      out->fresh_server = speedy_session_memory(p->server);
      rc = pair_submit(p, 0);
    }
    if (rc == 0) rc = pair_pump(p);
    if (rc == 0) rc = pair_check(p, 0);
    if (rc == 0 && p->completed != 1) {
      pair_fail(p, "the exchange did not complete");
      rc = -1;
    }
    if (rc == 0) {
      out->idle_client = speedy_session_memory(p->client);
      out->idle_server = speedy_session_memory(p->server);
    } else {
      fprintf(stderr, PROG ": idle session memory: %s\n", p->error);
    }
    pair_close(p);
    free(p);
    if (rc != 0) return -1;
  }
  /* Open streams: requests whose bodies never become ready, never answered. */
  {
    pair *p = pair_new(corpus, NULL, 0, PAIR_SILENT, NULL, 0);
    if (p == NULL) return -1;
    rc = pair_open(p, cfg->protocol, cfg->setting_given ? &cfg->setting : NULL,
                   2 * OPEN_STREAMS_FOR_MEMORY, 0);
    /* One stream first, so buffers and the zlib windows have their working size. */
    if (rc == 0) rc = pair_submit(p, 1);
    if (rc == 0) rc = pair_pump(p);
    size_t client0 = 0, server0 = 0;
    if (rc == 0) {
      client0 = speedy_session_memory(p->client);
      server0 = speedy_session_memory(p->server);
    }
    for (uint32_t i = 0; rc == 0 && i < OPEN_STREAMS_FOR_MEMORY; i++) {
      rc = pair_submit(p, 1);
      if (rc == 0 && i % 16 == 15) rc = pair_pump(p);
    }
    if (rc == 0) rc = pair_pump(p);
    if (rc == 0 && (p->server_requests != OPEN_STREAMS_FOR_MEMORY + 1 ||
                    speedy_session_open_streams(p->server) != OPEN_STREAMS_FOR_MEMORY + 1 ||
                    speedy_session_open_streams(p->client) != OPEN_STREAMS_FOR_MEMORY + 1)) {
      pair_fail(p, "expected %u open streams, client has %u, server %u",
                OPEN_STREAMS_FOR_MEMORY + 1, speedy_session_open_streams(p->client),
                speedy_session_open_streams(p->server));
      rc = -1;
    }
    if (rc == 0) {
      out->open_streams = OPEN_STREAMS_FOR_MEMORY;
      out->per_stream_client =
          ((double)speedy_session_memory(p->client) - (double)client0) / OPEN_STREAMS_FOR_MEMORY;
      out->per_stream_server =
          ((double)speedy_session_memory(p->server) - (double)server0) / OPEN_STREAMS_FOR_MEMORY;
    } else {
      fprintf(stderr, PROG ": open stream memory: %s\n", p->error);
    }
    pair_close(p);
    free(p);
    if (rc != 0) return -1;
  }
  return measure_zlib_state(cfg, corpus, setting, &out->deflate_state, &out->inflate_state);
}

/* ---- 4. Header compression ---------------------------------------------------------- */

static void compression_finish(compression_result *r) {
  r->request_saving = 100.0 * (1.0 - (double)r->request_spdy / (double)r->request_http1);
  r->response_saving = 100.0 * (1.0 - (double)r->response_spdy / (double)r->response_http1);
}

/* Through real sessions: SYN_STREAM and SYN_REPLY frames as sent (frame trace). */
int compression_by_sessions(const config *cfg, const har_headers_corpus *corpus,
                            const har_headers_groups *groups, const deflate_setting *setting,
                            compression_result *out) {
  memset(out, 0, sizeof *out);
  out->setting = *setting;
  for (size_t g = 0; g < groups->n_groups; g++) {
    size_t first = groups->starts[g], count = groups->starts[g + 1] - first;
    pair *p = pair_new(corpus, groups->order + first, count, PAIR_HEADERS, NULL, 0);
    if (p == NULL) return -1;
    int rc = pair_open(p, cfg->protocol, setting, 0, 1);
    for (size_t i = 0; rc == 0 && i < count; i++) {
      rc = pair_submit(p, 0);
      if (rc == 0) rc = pair_pump(p);
    }
    if (rc == 0) rc = pair_check(p, 0);
    if (rc == 0 &&
        (p->completed != count || p->syn_stream_frames != count || p->syn_reply_frames != count)) {
      pair_fail(p, "%zu exchanges gave %llu SYN_STREAM and %llu SYN_REPLY frames", count,
                (unsigned long long)p->syn_stream_frames, (unsigned long long)p->syn_reply_frames);
      rc = -1;
    }
    if (rc != 0) {
      const har_headers_entry *e = &corpus->entries[groups->order[first]];
      fprintf(stderr, PROG ": compression at %d,%d,%d (%s, host %s, exchange %llu): %s\n",
              setting->level, setting->window_bits, setting->mem_level, corpus->files[e->file],
              e->host, (unsigned long long)p->submitted, p->error);
      pair_close(p);
      free(p);
      return -1;
    }
    for (size_t i = 0; i < count; i++) {
      const har_headers_entry *e = &corpus->entries[groups->order[first + i]];
      out->request_http1 += e->request.http1_size;
      out->response_http1 += e->response.http1_size;
    }
    out->request_spdy += p->syn_stream_bytes;
    out->response_spdy += p->syn_reply_bytes;
    pair_close(p);
    free(p);
  }
  compression_finish(out);
  return 0;
}

/* Through hdblock alone (fast, for the sweep): the same blocks the session would send. */
int compression_by_hdblock(const config *cfg, const har_headers_corpus *corpus,
                           const har_headers_groups *groups, const deflate_setting *setting,
                           compression_result *out) {
  memset(out, 0, sizeof *out);
  out->setting = *setting;
  int version = wire_version(cfg->protocol);
  size_t request_overhead = SPDY_FRAME_HEADER_LEN + SPDY_SYN_STREAM_FIXED_LEN;
  size_t response_overhead = SPDY_FRAME_HEADER_LEN + SPDY_SYN_REPLY_FIXED_LEN(version);
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  speedy_buf block;
  speedy_buf_init(&block, 1u << 20);
  int rc = 0;
  for (size_t g = 0; rc == 0 && g < groups->n_groups; g++) {
    spdy_hdblock_deflater up, down;
    size_t before = mem.in_use;
    rc = spdy_hdblock_deflater_init(&up, &mem, version, setting->level, setting->window_bits,
                                    setting->mem_level);
    if (rc != 0) break;
    if (g == 0) out->deflate_state = mem.in_use - before;
    rc = spdy_hdblock_deflater_init(&down, &mem, version, setting->level, setting->window_bits,
                                    setting->mem_level);
    if (rc != 0) {
      spdy_hdblock_deflater_free(&up);
      break;
    }
    for (size_t i = groups->starts[g]; rc == 0 && i < groups->starts[g + 1]; i++) {
      const har_headers_entry *e = &corpus->entries[groups->order[i]];
      speedy_buf_reset(&block);
      rc = spdy_hdblock_deflate(&up, &mem, &block, e->request.headers, e->request.n_headers);
      out->request_spdy += request_overhead + speedy_buf_len(&block);
      out->request_http1 += e->request.http1_size;
      speedy_buf_reset(&block);
      if (rc == 0)
        rc = spdy_hdblock_deflate(&down, &mem, &block, e->response.headers, e->response.n_headers);
      out->response_spdy += response_overhead + speedy_buf_len(&block);
      out->response_http1 += e->response.http1_size;
    }
    spdy_hdblock_deflater_free(&up);
    spdy_hdblock_deflater_free(&down);
  }
  speedy_buf_free(&block, &mem);
  if (rc != 0) {
    fprintf(stderr, PROG ": compression sweep (%d,%d,%d): %s\n", setting->level,
            setting->window_bits, setting->mem_level, speedy_strerror(rc));
    return -1;
  }
  compression_finish(out);
  return 0;
}

/* Appends a setting to the grid unless it is there already. */
static void grid_add(deflate_setting *grid, size_t *n, size_t cap, int level, int window_bits,
                     int mem_level) {
  for (size_t i = 0; i < *n; i++)
    if (grid[i].level == level && grid[i].window_bits == window_bits &&
        grid[i].mem_level == mem_level)
      return;
  if (*n < cap) grid[(*n)++] = (deflate_setting){level, window_bits, mem_level};
}

/* The grid of settings swept; the setting in use comes first. */
size_t sweep_grid(sweep_mode mode, const deflate_setting *current, deflate_setting *grid,
                  size_t cap) {
  size_t n = 0;
  grid_add(grid, &n, cap, current->level, current->window_bits, current->mem_level);
  if (mode == SWEEP_FULL) {
    for (int l = 1; l <= 9; l++)
      for (int w = 9; w <= 15; w++)
        for (int m = 1; m <= 9; m++) grid_add(grid, &n, cap, l, w, m);
  } else if (mode == SWEEP_QUICK) {
    /* Around the region where the 1-point rule is decided on the corpus. */
    for (int w = 11; w <= 14; w++) grid_add(grid, &n, cap, 6, w, 3);
    for (int m = 1; m <= 5; m++) grid_add(grid, &n, cap, 6, 13, m);
    grid_add(grid, &n, cap, 5, 13, 3);
    grid_add(grid, &n, cap, 7, 13, 3);
    grid_add(grid, &n, cap, 9, 12, 3);
    grid_add(grid, &n, cap, 9, 12, 4);
  } else if (mode == SWEEP_DEFAULT) {
    /* Each parameter alone around level 6 / 13 / 3; then where the rule and the memory
     * target can both be met on this corpus (levels 6-9, windowBits 12-13, memLevel 1-4:
     * level 5 and below lose more than a point, windowBits 14 and up do not fit); then
     * levels 1, 5 and 9 at the reference's window and memLevel. */
    for (int l = 1; l <= 9; l++) grid_add(grid, &n, cap, l, 13, 3);
    for (int w = 9; w <= 15; w++) grid_add(grid, &n, cap, 6, w, 3);
    for (int m = 1; m <= 9; m++) grid_add(grid, &n, cap, 6, 13, m);
    for (int l = 6; l <= 9; l++)
      for (int w = 12; w <= 13; w++)
        for (int m = 1; m <= 4; m++) grid_add(grid, &n, cap, l, w, m);
    for (int l = 1; l <= 9; l += 4) grid_add(grid, &n, cap, l, 15, 8);
  }
  return n;
}

int sweep_within_rule(const compression_result *r, const compression_result *reference) {
  return r->request_saving >= reference->request_saving - ALLOWED_COMPRESSION_LOSS &&
         r->response_saving >= reference->response_saving - ALLOWED_COMPRESSION_LOSS;
}

/* Qualifying settings lose at most ALLOWED_COMPRESSION_LOSS points against the reference
 * on requests and on responses, and (when the idle session was measured) would keep an
 * idle session within its target. Header compression is the bulk of an exchange's CPU
 * time, so among them the recommendation is the fastest deflate; settings within
 * SPEED_TIE of it count as equally fast and the smallest deflate state wins, then the
 * lower level. */
void sweep_recommend(sweep_result *s, const compression_result *reference,
                     const memory_result *memory, int have_memory) {
  s->smallest = s->fastest = s->recommended = -1;
  s->idle_estimate_base = 0;
  if (have_memory) {
    size_t idle =
        memory->idle_client > memory->idle_server ? memory->idle_client : memory->idle_server;
    s->idle_estimate_base = (double)idle - (double)s->points[s->current].deflate_state;
  }
  int *ok = calloc(s->n_points, sizeof *ok);
  if (ok == NULL) return;
  for (size_t i = 0; i < s->n_points; i++) {
    const compression_result *r = &s->points[i];
    ok[i] = sweep_within_rule(r, reference);
    if (ok[i] && have_memory &&
        s->idle_estimate_base + (double)r->deflate_state > TARGET_IDLE_SESSION_BYTES)
      ok[i] = 0;
    if (!ok[i]) continue;
    if (s->fastest < 0 || r->zlib_us_per_exchange < s->points[s->fastest].zlib_us_per_exchange)
      s->fastest = (int)i;
    if (s->smallest < 0 || r->deflate_state < s->points[s->smallest].deflate_state ||
        (r->deflate_state == s->points[s->smallest].deflate_state &&
         r->zlib_us_per_exchange < s->points[s->smallest].zlib_us_per_exchange))
      s->smallest = (int)i;
  }
  if (s->fastest >= 0) {
    double limit = s->points[s->fastest].zlib_us_per_exchange * SPEED_TIE;
    for (size_t i = 0; i < s->n_points; i++) {
      const compression_result *r = &s->points[i];
      if (!ok[i] || r->zlib_us_per_exchange > limit) continue;
      const compression_result *b = s->recommended >= 0 ? &s->points[s->recommended] : NULL;
      if (b == NULL || r->deflate_state < b->deflate_state ||
          (r->deflate_state == b->deflate_state && r->setting.level < b->setting.level))
        s->recommended = (int)i;
    }
  }
  free(ok);
}
