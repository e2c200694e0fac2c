/* bench_h2_exchanges.c — HTTP/2 engine figures on the HAR corpus, side by side: exchanges
 * per second per core of speedy's HTTP/2 client<->server, nghttp2's client<->server and
 * speedy's SPDY/3.1 client<->server; heap bytes of an idle session and per open stream.
 *
 * One process, one core: both sessions of a pair run in this thread, and what one session
 * has to send is handed to the other's receive function in memory (zero copy on both
 * engines: speedy_session_peek_output, nghttp2_session_mem_send). The three pairs do the
 * same exchanges with the same header fields; how the corpus's header sets are adapted to
 * HTTP/2 and how each figure is made is described in docs/benchmarks.md.
 *
 * libnghttp2 is linked into this program only. Prints figures; never a test (the smoke
 * test checks the lines, not the numbers).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <nghttp2/nghttp2.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "har_headers.h"
#include "speedy/speedy.h"

#ifndef SPEEDY_SHARED_DIR_DEFAULT
#define SPEEDY_SHARED_DIR_DEFAULT "../shared"
#endif

#define PROG "bench_h2_exchanges"

#define MAX_IN_FLIGHT 100u
#define MAX_STREAMS 1000u /* MAX_CONCURRENT_STREAMS both sides announce */
#define BODY_MAX (1u << 20)
#define CHUNK (64u * 1024u) /* bytes handed over per receive call, at most */
#define WARMUP_EXCHANGES 2000u
#define HPACK_TABLE 4096u
#define EXIT_SKIP 77 /* no corpus: nothing measured (CTest's skip code) */

/* --pairs names, in the order of the engine enumeration below. */
static const char *const pair_option_names[] = {"speedy-h2", "nghttp2", "speedy-spdy3.1"};
#define ALL_PAIRS 7u

/* ---- Options ------------------------------------------------------------------------ */

typedef struct config {
  const char *har_dir;
  char har_dir_buffer[4096];
  double seconds; /* per trial and pair */
  unsigned trials;
  unsigned pairs; /* bit e: run engine e's pair (PAIR_NAMES order) */
  uint32_t in_flight;
  uint32_t body_size;
  uint32_t memory_exchanges;
  uint32_t open_streams;
  int progress;
} config;

static void usage(FILE *out) {
  fprintf(out,
          "Usage: " PROG " [OPTION]...\n"
          "HTTP/2 exchanges per second per core on the HAR corpus, in memory: speedy client\n"
          "and server over HTTP/2, nghttp2's over HTTP/2, speedy's over SPDY/3.1; heap bytes\n"
          "of an idle session and per open stream. See docs/benchmarks.md.\n"
          "\n"
          "  --har-dir DIR          HAR files to read (default: $SPEEDY_SHARED_DIR/corpus/har,\n"
          "                         else " SPEEDY_SHARED_DIR_DEFAULT "/corpus/har)\n"
          "  --seconds S            length of one timed trial of one pair (default 1)\n"
          "  --trials N             trials per pair, interleaved (default 5)\n"
          "  --streams N            streams kept in flight, 1-%u (default 10)\n"
          "  --body BYTES           response body size (default 1024)\n"
          "  --memory-exchanges N   exchanges before the idle session is measured (default 1000)\n"
          "  --open-streams N       streams opened for the per-stream figure, 1-%u (default 100)\n"
          "  --pairs LIST           run only these, comma-separated: speedy-h2, nghttp2,\n"
          "                         speedy-spdy3.1 (default: all; one alone suits a profiler)\n"
          "  --quick                a second or two: 3 trials of 0.1 s, 200 exchanges for memory\n"
          "  --help                 print this help and exit\n"
          "  --version              print the program and library versions and exit\n"
          "\n"
          "Exit status: 0 figures printed, 1 a pair failed, 2 bad usage, 77 no HAR corpus.\n",
          MAX_IN_FLIGHT, MAX_STREAMS - 1);
}

__attribute__((format(printf, 1, 2))) static void bad_usage(const char *format, ...) {
  va_list ap;
  fputs(PROG ": ", stderr);
  va_start(ap, format);
  vfprintf(stderr, format, ap);
  va_end(ap);
  fputs(" (try --help)\n", stderr);
  exit(2);
}

static int parse_u32(const char *text, uint32_t min, uint32_t max, uint32_t *out) {
  char *end;
  errno = 0;
  if (text[0] == '-') return -1;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) return -1;
  *out = (uint32_t)v;
  return 0;
}

static int parse_pairs(const char *text, unsigned *out) {
  unsigned pairs = 0;
  const char *p = text;
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    size_t i;
    for (i = 0; i < sizeof pair_option_names / sizeof pair_option_names[0]; i++)
      if (strlen(pair_option_names[i]) == len && strncmp(p, pair_option_names[i], len) == 0) break;
    if (i == sizeof pair_option_names / sizeof pair_option_names[0]) return -1;
    pairs |= 1u << i;
    p += len;
    if (*p == ',') p++;
  }
  if (pairs == 0) return -1;
  *out = pairs;
  return 0;
}

static void parse_args(int argc, char **argv, config *cfg) {
  enum {
    OPT_HAR = 256,
    OPT_SECONDS,
    OPT_TRIALS,
    OPT_STREAMS,
    OPT_BODY,
    OPT_MEMORY_EXCHANGES,
    OPT_OPEN_STREAMS,
    OPT_PAIRS,
    OPT_QUICK,
    OPT_HELP,
    OPT_VERSION
  };
  static const struct option longopts[] = {
      {"har-dir", required_argument, NULL, OPT_HAR},
      {"seconds", required_argument, NULL, OPT_SECONDS},
      {"trials", required_argument, NULL, OPT_TRIALS},
      {"streams", required_argument, NULL, OPT_STREAMS},
      {"body", required_argument, NULL, OPT_BODY},
      {"memory-exchanges", required_argument, NULL, OPT_MEMORY_EXCHANGES},
      {"open-streams", required_argument, NULL, OPT_OPEN_STREAMS},
      {"pairs", required_argument, NULL, OPT_PAIRS},
      {"quick", no_argument, NULL, OPT_QUICK},
      {"help", no_argument, NULL, OPT_HELP},
      {"version", no_argument, NULL, OPT_VERSION},
      {NULL, 0, NULL, 0}};
  int seconds_given = 0, trials_given = 0, memory_given = 0, quick = 0;
  memset(cfg, 0, sizeof *cfg);
  cfg->seconds = 1.0;
  cfg->trials = 5;
  cfg->in_flight = 10;
  cfg->body_size = 1024;
  cfg->memory_exchanges = 1000;
  cfg->open_streams = 100;
  cfg->pairs = ALL_PAIRS;
  int c;
  uint32_t v;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case OPT_HAR:
      cfg->har_dir = optarg;
      break;
    case OPT_SECONDS: {
      char *end;
      double s = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(s > 0.0) || s > 3600.0)
        bad_usage("--seconds %s: expected a positive number of seconds", optarg);
      cfg->seconds = s;
      seconds_given = 1;
      break;
    }
    case OPT_TRIALS:
      if (parse_u32(optarg, 1, 1000, &v) != 0) bad_usage("--trials %s: expected 1 to 1000", optarg);
      cfg->trials = v;
      trials_given = 1;
      break;
    case OPT_STREAMS:
      if (parse_u32(optarg, 1, MAX_IN_FLIGHT, &v) != 0)
        bad_usage("--streams %s: expected 1 to %u", optarg, MAX_IN_FLIGHT);
      cfg->in_flight = v;
      break;
    case OPT_BODY:
      if (parse_u32(optarg, 0, BODY_MAX, &v) != 0)
        bad_usage("--body %s: expected 0 to %u bytes", optarg, BODY_MAX);
      cfg->body_size = v;
      break;
    case OPT_MEMORY_EXCHANGES:
      if (parse_u32(optarg, 1, 10000000, &v) != 0)
        bad_usage("--memory-exchanges %s: expected 1 to 10000000", optarg);
      cfg->memory_exchanges = v;
      memory_given = 1;
      break;
    case OPT_OPEN_STREAMS:
      if (parse_u32(optarg, 1, MAX_STREAMS - 1, &v) != 0)
        bad_usage("--open-streams %s: expected 1 to %u", optarg, MAX_STREAMS - 1);
      cfg->open_streams = v;
      break;
    case OPT_PAIRS:
      if (parse_pairs(optarg, &cfg->pairs) != 0)
        bad_usage("--pairs %s: expected a comma-separated list of speedy-h2, nghttp2, "
                  "speedy-spdy3.1",
                  optarg);
      break;
    case OPT_QUICK:
      quick = 1;
      break;
    case OPT_HELP:
      usage(stdout);
      exit(0);
    case OPT_VERSION:
      printf(PROG " %s (libspeedy %s, nghttp2 %s)\n", SPEEDY_VERSION_STRING, speedy_version(),
             nghttp2_version(0)->version_str);
      exit(0);
    default:
      fputs("Try '" PROG " --help'.\n", stderr);
      exit(2);
    }
  }
  if (optind < argc) bad_usage("unexpected argument '%s'", argv[optind]);
  if (quick) {
    if (!seconds_given) cfg->seconds = 0.1;
    if (!trials_given) cfg->trials = 3;
    if (!memory_given) cfg->memory_exchanges = 200;
  }
  if (cfg->har_dir == NULL) {
    const char *shared = getenv("SPEEDY_SHARED_DIR");
    if (shared == NULL || shared[0] == '\0') shared = SPEEDY_SHARED_DIR_DEFAULT;
    snprintf(cfg->har_dir_buffer, sizeof cfg->har_dir_buffer, "%s/corpus/har", shared);
    cfg->har_dir = cfg->har_dir_buffer;
  }
  cfg->progress = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
}

static void progress(const config *cfg, const char *what) {
  if (!cfg->progress) return;
  fprintf(stderr, "\r\033[K%s ...", what);
  fflush(stderr);
}

static void progress_done(const config *cfg) {
  if (!cfg->progress) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (p == NULL) {
    fputs(PROG ": out of memory\n", stderr);
    exit(1);
  }
  return p;
}

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- The exchanges: the corpus's header sets, for each protocol ---------------------- */

/* One exchange as every engine is given it, in HTTP/2's names (speedy's SPDY/3.1 session
 * writes SPDY's on the wire). Strings point into the corpus's storage. */
typedef struct exchange {
  speedy_header *h2_request, *h2_response;
  size_t n_h2_request, n_h2_response;
  nghttp2_nv *nv_request, *nv_response;
  int has_body; /* not HEAD, status not 1xx, 204 or 304 */
} exchange;

typedef struct exchange_set {
  exchange *exchanges;
  size_t n;
  size_t n_with_body;
  size_t dropped_entries; /* informational or 101 responses: not a complete exchange */
  size_t dropped_fields;  /* fields HTTP/2 forbids (upgrade, te other than trailers) */
  size_t trimmed_values;  /* values with white space at an end (8.2.1 forbids it) */
  char content_length[16];
} exchange_set;

static int name_is(const speedy_header *h, const char *name) { return strcmp(h->name, name) == 0; }

static const speedy_header *find_field(const har_headers_message *m, const char *name) {
  for (size_t i = 0; i < m->n_headers; i++)
    if (name_is(&m->headers[i], name)) return &m->headers[i];
  return NULL;
}

/* RFC 9113 8.2.2: connection-specific fields. har_headers.c already left out connection,
 * keep-alive, proxy-connection, transfer-encoding and host. */
static int forbidden_in_h2(const speedy_header *h) {
  if (name_is(h, "upgrade")) return 1;
  return name_is(h, "te") && strcmp(h->value, "trailers") != 0;
}

/* The field without white space at its ends (RFC 9113 8.2.1 refuses it; both engines
 * check). */
static speedy_header trimmed(const speedy_header *h, exchange_set *set) {
  speedy_header t = *h;
  while (t.value_len > 0 && (t.value[0] == ' ' || t.value[0] == '\t')) t.value++, t.value_len--;
  while (t.value_len > 0 && (t.value[t.value_len - 1] == ' ' || t.value[t.value_len - 1] == '\t'))
    t.value_len--;
  if (t.value_len != h->value_len) set->trimmed_values++;
  return t;
}

/* The regular fields of a message as all three lists carry them: content-length replaced
 * by the body the benchmark sends (requests have none; both engines check the length,
 * 8.1.1). Returns the count. */
static size_t regular_fields(const har_headers_message *m, int response, int has_body,
                             exchange_set *set, speedy_header *out) {
  size_t n = 0;
  for (size_t i = 0; i < m->n_headers; i++) {
    const speedy_header *h = &m->headers[i];
    if (h->name[0] == ':') continue;
    if (forbidden_in_h2(h)) {
      set->dropped_fields++;
      continue;
    }
    if (name_is(h, "content-length")) continue;
    out[n++] = trimmed(h, set);
  }
  if (response && has_body)
    out[n++] =
        (speedy_header){"content-length", 14, set->content_length, strlen(set->content_length)};
  return n;
}

static speedy_header pseudo(const char *name, const speedy_header *from) {
  return (speedy_header){name, strlen(name), from->value, from->value_len};
}

static nghttp2_nv *nv_of(const speedy_header *h, size_t n) {
  nghttp2_nv *nv = xcalloc(n, sizeof *nv);
  for (size_t i = 0; i < n; i++)
    nv[i] = (nghttp2_nv){(uint8_t *)h[i].name, (uint8_t *)h[i].value, h[i].name_len, h[i].value_len,
                         NGHTTP2_NV_FLAG_NONE};
  return nv;
}

static void exchanges_build(const har_headers_corpus *corpus, uint32_t body_size,
                            exchange_set *set) {
  memset(set, 0, sizeof *set);
  snprintf(set->content_length, sizeof set->content_length, "%u", body_size);
  set->exchanges = xcalloc(corpus->n_entries, sizeof *set->exchanges);
  for (size_t i = 0; i < corpus->n_entries; i++) {
    const har_headers_entry *e = &corpus->entries[i];
    const speedy_header *method = find_field(&e->request, ":method");
    const speedy_header *scheme = find_field(&e->request, ":scheme");
    const speedy_header *host = find_field(&e->request, ":host");
    const speedy_header *path = find_field(&e->request, ":path");
    const speedy_header *status = find_field(&e->response, ":status");
    const speedy_header *request_version = find_field(&e->request, ":version");
    const speedy_header *response_version = find_field(&e->response, ":version");
    if (method == NULL || scheme == NULL || host == NULL || path == NULL || status == NULL ||
        request_version == NULL || response_version == NULL || status->value_len != 3 ||
        status->value[0] == '1') {
      set->dropped_entries++;
      continue;
    }
    exchange *x = &set->exchanges[set->n++];
    x->has_body = body_size > 0 && strcmp(method->value, "HEAD") != 0 &&
                  strcmp(status->value, "204") != 0 && strcmp(status->value, "304") != 0;
    set->n_with_body += (size_t)x->has_body;
    size_t cap = e->request.n_headers + 5;
    x->h2_request = xcalloc(cap, sizeof(speedy_header));
    x->h2_request[0] = pseudo(":method", method);
    x->h2_request[1] = pseudo(":scheme", scheme);
    x->h2_request[2] = pseudo(":authority", host);
    x->h2_request[3] = pseudo(":path", path);
    size_t n = regular_fields(&e->request, 0, 0, set, x->h2_request + 4);
    x->n_h2_request = 4 + n;

    cap = e->response.n_headers + 3;
    x->h2_response = xcalloc(cap, sizeof(speedy_header));
    x->h2_response[0] = pseudo(":status", status);
    n = regular_fields(&e->response, 1, x->has_body, set, x->h2_response + 1);
    x->n_h2_response = 1 + n;

    x->nv_request = nv_of(x->h2_request, x->n_h2_request);
    x->nv_response = nv_of(x->h2_response, x->n_h2_response);
  }
}

static void exchanges_free(exchange_set *set) {
  for (size_t i = 0; i < set->n; i++) {
    exchange *x = &set->exchanges[i];
    free(x->h2_request);
    free(x->h2_response);
    free(x->nv_request);
    free(x->nv_response);
  }
  free(set->exchanges);
}

/* ---- Counting allocator ------------------------------------------------------------- */

/* Live bytes as the engine asked for them (the allocator's own overhead not included),
 * one counter per session. Each block carries its size in front. */
typedef struct counter {
  size_t live;
  size_t peak;
} counter;

#define COUNT_HEADER 16u /* keeps max_align_t alignment on the platforms we build on */

static void *count_malloc(size_t size, void *user) {
  counter *c = user;
  unsigned char *p = malloc(COUNT_HEADER + size);
  if (p == NULL) return NULL;
  memcpy(p, &size, sizeof size);
  c->live += size;
  if (c->live > c->peak) c->peak = c->live;
  return p + COUNT_HEADER;
}

static void count_free(void *ptr, void *user) {
  if (ptr == NULL) return;
  counter *c = user;
  unsigned char *p = (unsigned char *)ptr - COUNT_HEADER;
  size_t size;
  memcpy(&size, p, sizeof size);
  c->live -= size;
  free(p);
}

static void *count_realloc(void *ptr, size_t size, void *user) {
  if (ptr == NULL) return count_malloc(size, user);
  counter *c = user;
  unsigned char *p = (unsigned char *)ptr - COUNT_HEADER;
  size_t old;
  memcpy(&old, p, sizeof old);
  unsigned char *q = realloc(p, COUNT_HEADER + size);
  if (q == NULL) return NULL;
  memcpy(q, &size, sizeof size);
  c->live = c->live - old + size;
  if (c->live > c->peak) c->peak = c->live;
  return q + COUNT_HEADER;
}

static void *count_calloc(size_t n, size_t size, void *user) {
  if (size != 0 && n > SIZE_MAX / size) return NULL;
  void *p = count_malloc(n * size, user);
  if (p != NULL) memset(p, 0, n * size);
  return p;
}

/* ---- A connected pair of sessions --------------------------------------------------- */

typedef enum engine { ENGINE_SPEEDY_H2, ENGINE_NGHTTP2, ENGINE_SPEEDY_SPDY31, N_ENGINES } engine;

static const char *const engine_names[N_ENGINES] = {"speedy h2", "nghttp2 h2", "speedy spdy/3.1"};

typedef struct pair {
  engine engine;
  const exchange_set *set;
  uint32_t body_size;
  const uint8_t *body;
  uint32_t body_sent[2 * MAX_IN_FLIGHT]; /* by request number, modulo */
  int silent; /* server does not answer; client request bodies never become ready */

  speedy_session *speedy_client, *speedy_server;
  nghttp2_session *ng_client, *ng_server;
  counter client_memory, server_memory; /* with counting */

  uint64_t submitted, completed, server_requests;
  uint32_t in_flight;
  uint64_t expected_request_fields, seen_request_fields;
  uint64_t expected_response_fields, seen_response_fields;
  uint64_t expected_body, body_bytes;
  uint64_t wire_up, wire_down;
  char error[256]; /* first failure, "" if none */
} pair;

__attribute__((format(printf, 2, 3))) static void pair_fail(pair *p, const char *format, ...) {
  if (p->error[0] != '\0') return;
  va_list ap;
  va_start(ap, format);
  vsnprintf(p->error, sizeof p->error, format, ap);
  va_end(ap);
}

/* Client stream k (0-based) has id 2k + 1 in both engines: ids go in submission order. */
static uint64_t request_number(int32_t stream_id) { return (uint64_t)(stream_id - 1) / 2; }

static const exchange *pair_exchange(const pair *p, uint64_t k) {
  return &p->set->exchanges[k % p->set->n];
}

static uint32_t *body_slot(pair *p, int32_t stream_id) {
  return &p->body_sent[request_number(stream_id) % (2 * MAX_IN_FLIGHT)];
}

/* Copies the next piece of the body; returns its length and whether it is the last. */
static size_t body_piece(pair *p, int32_t stream_id, uint8_t *buf, size_t len, int *eof) {
  uint32_t *sent = body_slot(p, stream_id);
  size_t left = p->body_size - *sent;
  size_t n = len < left ? len : left;
  memcpy(buf, p->body + *sent, n);
  *sent += (uint32_t)n;
  *eof = *sent == p->body_size;
  return n;
}

/* speedy's callbacks (both protocols). */

static int64_t speedy_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf,
                                size_t len, uint32_t *flags, void *source, void *user) {
  (void)session, (void)source;
  int eof;
  size_t n = body_piece(user, stream_id, buf, len, &eof);
  if (eof) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

static int64_t speedy_deferred_read(speedy_session *session, int32_t stream_id, uint8_t *buf,
                                    size_t len, uint32_t *flags, void *source, void *user) {
  (void)session, (void)stream_id, (void)buf, (void)len, (void)flags, (void)source, (void)user;
  return SPEEDY_ERR_DEFERRED;
}

static int speedy_server_on_header(speedy_session *session, int32_t stream_id,
                                   const speedy_header *header, void *user) {
  (void)session, (void)stream_id, (void)header;
  ((pair *)user)->seen_request_fields++;
  return 0;
}

static int speedy_server_on_headers_end(speedy_session *session, int32_t stream_id, int end_stream,
                                        void *user) {
  pair *p = user;
  p->server_requests++;
  if (p->silent) return 0;
  if (!end_stream) {
    pair_fail(p, "server: request on stream %d did not end with its headers", (int)stream_id);
    return -1;
  }
  const exchange *x = pair_exchange(p, request_number(stream_id));
  const speedy_header *h = x->h2_response; /* HTTP/2's names for SPDY too: the engine maps */
  size_t n = x->n_h2_response;
  *body_slot(p, stream_id) = 0;
  int rc =
      speedy_submit_response(session, stream_id, h, n, x->has_body ? speedy_body_read : NULL, NULL);
  if (rc != 0) {
    pair_fail(p, "server: speedy_submit_response(stream %d): %s", (int)stream_id,
              speedy_strerror(rc));
    return -1;
  }
  return 0;
}

static int speedy_client_on_header(speedy_session *session, int32_t stream_id,
                                   const speedy_header *header, void *user) {
  (void)session, (void)stream_id, (void)header;
  ((pair *)user)->seen_response_fields++;
  return 0;
}

static int speedy_client_on_data_chunk(speedy_session *session, int32_t stream_id,
                                       const uint8_t *data, size_t len, void *user) {
  (void)session, (void)stream_id, (void)data;
  ((pair *)user)->body_bytes += len;
  return 0;
}

static int speedy_client_on_stream_close(speedy_session *session, int32_t stream_id,
                                         uint32_t status, void *user) {
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

/* nghttp2's callbacks. */

static ssize_t ng_body_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                            uint32_t *flags, nghttp2_data_source *source, void *user) {
  (void)session, (void)source;
  int eof;
  size_t n = body_piece(user, stream_id, buf, len, &eof);
  if (eof) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static ssize_t ng_deferred_read(nghttp2_session *session, int32_t stream_id, uint8_t *buf,
                                size_t len, uint32_t *flags, nghttp2_data_source *source,
                                void *user) {
  (void)session, (void)stream_id, (void)buf, (void)len, (void)flags, (void)source, (void)user;
  return NGHTTP2_ERR_DEFERRED;
}

static int ng_on_header(nghttp2_session *session, const nghttp2_frame *frame, const uint8_t *name,
                        size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                        void *user) {
  (void)frame, (void)name, (void)namelen, (void)value, (void)valuelen, (void)flags;
  pair *p = user;
  if (session == p->ng_server)
    p->seen_request_fields++;
  else
    p->seen_response_fields++;
  return 0;
}

static int ng_server_on_frame_recv(nghttp2_session *session, const nghttp2_frame *frame,
                                   void *user) {
  pair *p = user;
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  int32_t stream_id = frame->hd.stream_id;
  p->server_requests++;
  if (p->silent) return 0;
  if (!(frame->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
    pair_fail(p, "server: request on stream %d did not end with its headers", (int)stream_id);
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  const exchange *x = pair_exchange(p, request_number(stream_id));
  *body_slot(p, stream_id) = 0;
  nghttp2_data_provider body = {.read_callback = ng_body_read};
  int rc = nghttp2_submit_response(session, stream_id, x->nv_response, x->n_h2_response,
                                   x->has_body ? &body : NULL);
  if (rc != 0) {
    pair_fail(p, "server: nghttp2_submit_response(stream %d): %s", (int)stream_id,
              nghttp2_strerror(rc));
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

static int ng_client_on_data_chunk(nghttp2_session *session, uint8_t flags, int32_t stream_id,
                                   const uint8_t *data, size_t len, void *user) {
  (void)session, (void)flags, (void)stream_id, (void)data;
  ((pair *)user)->body_bytes += len;
  return 0;
}

static int ng_client_on_stream_close(nghttp2_session *session, int32_t stream_id,
                                     uint32_t error_code, void *user) {
  (void)session;
  pair *p = user;
  if (error_code != NGHTTP2_NO_ERROR) {
    pair_fail(p, "client: stream %d closed with %s", (int)stream_id,
              nghttp2_http2_strerror(error_code));
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  p->completed++;
  p->in_flight--;
  return 0;
}

static int speedy_open(pair *p, speedy_protocol protocol, int counting) {
  speedy_callbacks *client_cb = NULL, *server_cb = NULL;
  speedy_options *client_opt = NULL, *server_opt = NULL;
  int rc = speedy_callbacks_new(&client_cb);
  if (rc == 0) rc = speedy_callbacks_new(&server_cb);
  if (rc == 0) rc = speedy_options_new(&client_opt);
  if (rc == 0) rc = speedy_options_new(&server_opt);
  if (rc == 0) {
    speedy_callbacks_set_on_header(server_cb, speedy_server_on_header);
    speedy_callbacks_set_on_headers_end(server_cb, speedy_server_on_headers_end);
    speedy_callbacks_set_on_header(client_cb, speedy_client_on_header);
    speedy_callbacks_set_on_data_chunk(client_cb, speedy_client_on_data_chunk);
    speedy_callbacks_set_on_stream_close(client_cb, speedy_client_on_stream_close);
    speedy_options_set_max_concurrent_streams(client_opt, MAX_STREAMS);
    speedy_options_set_max_concurrent_streams(server_opt, MAX_STREAMS);
    if (protocol == SPEEDY_PROTOCOL_H2) {
      speedy_options_set_header_table_size(client_opt, HPACK_TABLE);
      speedy_options_set_header_table_size(server_opt, HPACK_TABLE);
    }
    if (counting) {
      speedy_options_set_allocator(client_opt, count_malloc, count_realloc, count_free,
                                   &p->client_memory);
      speedy_options_set_allocator(server_opt, count_malloc, count_realloc, count_free,
                                   &p->server_memory);
    }
    rc = speedy_session_new(&p->speedy_client, protocol, SPEEDY_ROLE_CLIENT, client_cb, client_opt,
                            p);
  }
  if (rc == 0)
    rc = speedy_session_new(&p->speedy_server, protocol, SPEEDY_ROLE_SERVER, server_cb, server_opt,
                            p);
  if (rc != 0) pair_fail(p, "cannot create sessions: %s", speedy_strerror(rc));
  speedy_callbacks_del(client_cb);
  speedy_callbacks_del(server_cb);
  speedy_options_del(client_opt);
  speedy_options_del(server_opt);
  return rc == 0 ? 0 : -1;
}

static int ng_open(pair *p, int counting) {
  nghttp2_session_callbacks *client_cb = NULL, *server_cb = NULL;
  nghttp2_option *option = NULL;
  nghttp2_mem client_mem = {&p->client_memory, count_malloc, count_free, count_calloc,
                            count_realloc};
  nghttp2_mem server_mem = {&p->server_memory, count_malloc, count_free, count_calloc,
                            count_realloc};
  int rc = nghttp2_session_callbacks_new(&client_cb);
  if (rc == 0) rc = nghttp2_session_callbacks_new(&server_cb);
  if (rc == 0) rc = nghttp2_option_new(&option);
  if (rc == 0) {
    nghttp2_session_callbacks_set_on_header_callback(server_cb, ng_on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(server_cb, ng_server_on_frame_recv);
    nghttp2_session_callbacks_set_on_header_callback(client_cb, ng_on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(client_cb, ng_client_on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(client_cb, ng_client_on_stream_close);
    /* speedy keeps no closed streams; nghttp2's server would keep up to
     * MAX_CONCURRENT_STREAMS of them for RFC 7540's priority tree. */
    nghttp2_option_set_no_closed_streams(option, 1);
    rc = nghttp2_session_client_new3(&p->ng_client, client_cb, p, option,
                                     counting ? &client_mem : NULL);
  }
  if (rc == 0)
    rc = nghttp2_session_server_new3(&p->ng_server, server_cb, p, option,
                                     counting ? &server_mem : NULL);
  nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, MAX_STREAMS}};
  if (rc == 0) rc = nghttp2_submit_settings(p->ng_client, NGHTTP2_FLAG_NONE, settings, 1);
  if (rc == 0) rc = nghttp2_submit_settings(p->ng_server, NGHTTP2_FLAG_NONE, settings, 1);
  if (rc != 0) pair_fail(p, "cannot create nghttp2 sessions: %s", nghttp2_strerror(rc));
  nghttp2_session_callbacks_del(client_cb);
  nghttp2_session_callbacks_del(server_cb);
  nghttp2_option_del(option);
  return rc == 0 ? 0 : -1;
}

/* Creates both sessions of the engine's pair. counting: through the counting allocator. */
static pair *pair_new(engine e, const exchange_set *set, const uint8_t *body, uint32_t body_size,
                      int counting) {
  pair *p = xcalloc(1, sizeof *p);
  p->engine = e;
  p->set = set;
  p->body = body;
  p->body_size = body_size;
  int rc =
      e == ENGINE_NGHTTP2
          ? ng_open(p, counting)
          : speedy_open(p, e == ENGINE_SPEEDY_H2 ? SPEEDY_PROTOCOL_H2 : SPEEDY_PROTOCOL_SPDY3_1,
                        counting);
  if (rc != 0) fprintf(stderr, PROG ": %s: %s\n", engine_names[e], p->error);
  return p;
}

static void pair_del(pair *p) {
  if (p->speedy_client != NULL) speedy_session_del(p->speedy_client);
  if (p->speedy_server != NULL) speedy_session_del(p->speedy_server);
  if (p->ng_client != NULL) nghttp2_session_del(p->ng_client);
  if (p->ng_server != NULL) nghttp2_session_del(p->ng_server);
  free(p);
}

/* Moves what one side has to send into the other. Returns bytes moved, or -1. */
static int64_t speedy_transfer(pair *p, speedy_session *from, speedy_session *to) {
  int64_t moved = 0;
  for (;;) {
    const uint8_t *out;
    int64_t n = speedy_session_peek_output(from, &out, CHUNK);
    if (n < 0) {
      pair_fail(p, "%s: speedy_session_peek_output: %s",
                from == p->speedy_client ? "client" : "server", speedy_strerror((int)n));
      return -1;
    }
    if (n == 0) return moved;
    int64_t used = speedy_session_recv(to, out, (size_t)n);
    if (used != n) {
      pair_fail(p, "%s: speedy_session_recv: %s", to == p->speedy_client ? "client" : "server",
                used < 0 ? speedy_strerror((int)used) : "consumed only part of the input");
      return -1;
    }
    speedy_session_consume_output(from, (size_t)n);
    moved += n;
  }
}

static int64_t ng_transfer(pair *p, nghttp2_session *from, nghttp2_session *to) {
  int64_t moved = 0;
  for (;;) {
    const uint8_t *out;
    ssize_t n = nghttp2_session_mem_send(from, &out);
    if (n < 0) {
      pair_fail(p, "%s: nghttp2_session_mem_send: %s", from == p->ng_client ? "client" : "server",
                nghttp2_strerror((int)n));
      return -1;
    }
    if (n == 0) return moved;
    ssize_t used = nghttp2_session_mem_recv(to, out, (size_t)n);
    if (used != n) {
      pair_fail(p, "%s: nghttp2_session_mem_recv: %s", to == p->ng_client ? "client" : "server",
                used < 0 ? nghttp2_strerror((int)used) : "consumed only part of the input");
      return -1;
    }
    moved += n;
  }
}

/* One round each way. Returns bytes moved, or -1. */
static int64_t pair_round(pair *p) {
  int64_t up, down;
  if (p->engine == ENGINE_NGHTTP2) {
    up = ng_transfer(p, p->ng_client, p->ng_server);
    down = up < 0 ? -1 : ng_transfer(p, p->ng_server, p->ng_client);
  } else {
    up = speedy_transfer(p, p->speedy_client, p->speedy_server);
    down = up < 0 ? -1 : speedy_transfer(p, p->speedy_server, p->speedy_client);
  }
  if (up < 0 || down < 0) return -1;
  p->wire_up += (uint64_t)up;
  p->wire_down += (uint64_t)down;
  return up + down;
}

/* Rounds until neither side has anything to send. */
static int pair_pump(pair *p) {
  for (;;) {
    int64_t n = pair_round(p);
    if (n < 0) return -1;
    if (n == 0) return 0;
  }
}

/* Submits the next request of the corpus (cycling). */
static int pair_submit(pair *p) {
  const exchange *x = pair_exchange(p, p->submitted);
  int32_t id;
  if (p->engine == ENGINE_NGHTTP2) {
    nghttp2_data_provider deferred = {.read_callback = ng_deferred_read};
    id = nghttp2_submit_request(p->ng_client, NULL, x->nv_request, x->n_h2_request,
                                p->silent ? &deferred : NULL, NULL);
    if (id < 0) {
      pair_fail(p, "client: nghttp2_submit_request: %s", nghttp2_strerror(id));
      return -1;
    }
  } else {
    const speedy_header *h = x->h2_request;
    size_t n = x->n_h2_request;
    id = speedy_submit_request(p->speedy_client, 3, h, n, p->silent ? speedy_deferred_read : NULL,
                               NULL, NULL);
    if (id < 0) {
      pair_fail(p, "client: speedy_submit_request: %s", speedy_strerror(id));
      return -1;
    }
  }
  if ((uint64_t)id != 2 * p->submitted + 1) {
    pair_fail(p, "client: request %llu got stream id %d", (unsigned long long)p->submitted,
              (int)id);
    return -1;
  }
  p->expected_request_fields += x->n_h2_request;
  if (!p->silent) {
    p->expected_response_fields += x->n_h2_response;
    p->expected_body += x->has_body ? p->body_size : 0;
  }
  p->submitted++;
  p->in_flight++;
  return 0;
}

/* Every field and body byte arrived, and nothing is outstanding? */
static int pair_check(pair *p) {
  if (p->error[0] != '\0') return -1;
  if (p->seen_request_fields != p->expected_request_fields)
    pair_fail(p, "server saw %llu request header fields, expected %llu",
              (unsigned long long)p->seen_request_fields,
              (unsigned long long)p->expected_request_fields);
  else if (p->seen_response_fields != p->expected_response_fields)
    pair_fail(p, "client saw %llu response header fields, expected %llu",
              (unsigned long long)p->seen_response_fields,
              (unsigned long long)p->expected_response_fields);
  else if (p->body_bytes != p->expected_body)
    pair_fail(p, "client received %llu body bytes, expected %llu",
              (unsigned long long)p->body_bytes, (unsigned long long)p->expected_body);
  else if (!p->silent && p->completed != p->submitted)
    pair_fail(p, "%llu of %llu exchanges completed", (unsigned long long)p->completed,
              (unsigned long long)p->submitted);
  return p->error[0] != '\0' ? -1 : 0;
}

/* Runs exchanges with in_flight streams kept busy until `count` have completed, or (when
 * deadline > 0) until the monotonic clock passes it; submits no more after that. */
static int pair_exchanges(pair *p, uint32_t in_flight, uint64_t count, double deadline) {
  uint64_t target = p->completed + count;
  unsigned stalls = 0;
  while (p->completed < target) {
    while (p->in_flight < in_flight && p->submitted < target)
      if (pair_submit(p) != 0) return -1;
    int64_t moved = pair_round(p);
    if (moved < 0) return -1;
    if (moved == 0 && ++stalls > 3) {
      pair_fail(p, "no progress with %u streams in flight", p->in_flight);
      return -1;
    }
    if (moved > 0) stalls = 0;
    if (deadline > 0 && clock_seconds(CLOCK_MONOTONIC) >= deadline) break;
  }
  return 0;
}

/* ---- 1. Exchanges per second -------------------------------------------------------- */

typedef struct trial {
  double per_second_cpu, per_second_wall;
  double up_per_exchange, down_per_exchange;
} trial;

static int run_trial(const config *cfg, engine e, const exchange_set *set, const uint8_t *body,
                     trial *out) {
  pair *p = pair_new(e, set, body, cfg->body_size, 0);
  int rc = p->error[0] != '\0' ? -1 : 0;
  /* Settings exchanged and header tables filled before the clock starts. */
  if (rc == 0) rc = pair_exchanges(p, cfg->in_flight, WARMUP_EXCHANGES, 0);
  uint64_t completed0 = p->completed, up0 = p->wire_up, down0 = p->wire_down;
  double wall0 = clock_seconds(CLOCK_MONOTONIC);
  double cpu0 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (rc == 0) rc = pair_exchanges(p, cfg->in_flight, UINT64_MAX / 2, wall0 + cfg->seconds);
  double cpu1 = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  double wall1 = clock_seconds(CLOCK_MONOTONIC);
  uint64_t done = p->completed - completed0;
  uint64_t up = p->wire_up - up0, down = p->wire_down - down0;
  /* The streams still in flight finish outside the clock, and everything is checked. */
  if (rc == 0) rc = pair_pump(p);
  if (rc == 0) rc = pair_check(p);
  if (rc == 0 && done == 0) {
    pair_fail(p, "no exchange completed in %.3f s", cfg->seconds);
    rc = -1;
  }
  if (rc != 0) {
    fprintf(stderr, PROG ": %s: exchanges: %s\n", engine_names[e], p->error);
  } else {
    out->per_second_cpu = (double)done / (cpu1 - cpu0);
    out->per_second_wall = (double)done / (wall1 - wall0);
    out->up_per_exchange = (double)up / (double)done;
    out->down_per_exchange = (double)down / (double)done;
  }
  pair_del(p);
  return rc;
}

static int compare_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct rate {
  double best, median, median_wall;
  double up_per_exchange, down_per_exchange;
  int ok;
} rate;

static void summarise(const trial *trials, unsigned n, rate *out) {
  double cpu[1000], wall[1000];
  for (unsigned i = 0; i < n; i++) {
    cpu[i] = trials[i].per_second_cpu;
    wall[i] = trials[i].per_second_wall;
  }
  qsort(cpu, n, sizeof cpu[0], compare_double);
  qsort(wall, n, sizeof wall[0], compare_double);
  out->best = cpu[n - 1];
  out->median = n % 2 ? cpu[n / 2] : (cpu[n / 2 - 1] + cpu[n / 2]) / 2;
  out->median_wall = n % 2 ? wall[n / 2] : (wall[n / 2 - 1] + wall[n / 2]) / 2;
  out->up_per_exchange = trials[0].up_per_exchange;
  out->down_per_exchange = trials[0].down_per_exchange;
  out->ok = 1;
}

/* ---- 2. Memory ---------------------------------------------------------------------- */

typedef struct memory {
  size_t idle_client, idle_server;
  size_t first_client, first_server; /* growth for the first open stream */
  double per_stream_client, per_stream_server;
  int ok;
} memory;

static int run_memory(const config *cfg, engine e, const exchange_set *set, const uint8_t *body,
                      memory *out) {
  pair *p = pair_new(e, set, body, cfg->body_size, 1);
  int rc = p->error[0] != '\0' ? -1 : 0;
  if (rc == 0) rc = pair_exchanges(p, cfg->in_flight, cfg->memory_exchanges, 0);
  if (rc == 0) rc = pair_pump(p);
  if (rc == 0) rc = pair_check(p);
  if (rc == 0) {
    out->idle_client = p->client_memory.live;
    out->idle_server = p->server_memory.live;
    /* Requests whose bodies never become ready, never answered: open on both sides. The
     * first one also brings back what a busy session keeps (output buffers); the figure
     * per stream is the growth after it. */
    p->silent = 1;
    uint64_t requests0 = p->server_requests;
    rc = pair_submit(p);
    if (rc == 0) rc = pair_pump(p);
    size_t client1 = p->client_memory.live, server1 = p->server_memory.live;
    for (uint32_t i = 0; rc == 0 && i < cfg->open_streams; i++) rc = pair_submit(p);
    if (rc == 0) rc = pair_pump(p);
    if (rc == 0) rc = pair_check(p);
    uint32_t expected = cfg->open_streams + 1;
    if (rc == 0 && p->server_requests - requests0 != expected) {
      pair_fail(p, "the server saw %llu of %u new streams",
                (unsigned long long)(p->server_requests - requests0), expected);
      rc = -1;
    }
    if (rc == 0 && e != ENGINE_NGHTTP2 &&
        (speedy_session_open_streams(p->speedy_client) != expected ||
         speedy_session_open_streams(p->speedy_server) != expected)) {
      pair_fail(p, "expected %u open streams, client has %u, server %u", expected,
                speedy_session_open_streams(p->speedy_client),
                speedy_session_open_streams(p->speedy_server));
      rc = -1;
    }
    if (rc == 0) {
      out->first_client = client1 - out->idle_client;
      out->first_server = server1 - out->idle_server;
      out->per_stream_client =
          ((double)p->client_memory.live - (double)client1) / cfg->open_streams;
      out->per_stream_server =
          ((double)p->server_memory.live - (double)server1) / cfg->open_streams;
      out->ok = 1;
    }
  }
  if (rc != 0) fprintf(stderr, PROG ": %s: memory: %s\n", engine_names[e], p->error);
  pair_del(p);
  return rc;
}

/* ---- Main --------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  config cfg;
  parse_args(argc, argv, &cfg);

  har_headers_corpus corpus;
  har_headers_init(&corpus);
  progress(&cfg, "reading the HAR corpus");
  int loaded = har_headers_load_dir(&corpus, cfg.har_dir, PROG, stderr);
  progress_done(&cfg);
  if (loaded <= 0 || corpus.n_entries == 0) {
    printf(PROG ": skipped: no HAR corpus in %s (--har-dir, or $SPEEDY_SHARED_DIR)\n", cfg.har_dir);
    har_headers_free(&corpus);
    return EXIT_SKIP;
  }
  exchange_set set;
  exchanges_build(&corpus, cfg.body_size, &set);
  if (set.n == 0) {
    fprintf(stderr, PROG ": no complete exchanges in %s\n", cfg.har_dir);
    exchanges_free(&set);
    har_headers_free(&corpus);
    return 1;
  }
  uint8_t *body = xcalloc(cfg.body_size > 0 ? cfg.body_size : 1, 1);
  for (uint32_t i = 0; i < cfg.body_size; i++) body[i] = (uint8_t)('a' + i % 26);

  printf("HTTP/2 engine on the HAR corpus (%s): %zu files, %zu exchanges (%zu with a body; %zu "
         "informational left out), %zu fields HTTP/2 forbids left out, %zu values trimmed\n",
         cfg.har_dir, corpus.n_files, set.n, set.n_with_body, set.dropped_entries,
         set.dropped_fields, set.trimmed_values);
  printf("libspeedy %s, nghttp2 %s; one thread, client and server sessions in memory\n",
         speedy_version(), nghttp2_version(0)->version_str);

  int failed = 0;
  rate rates[N_ENGINES];
  memset(rates, 0, sizeof rates);
  trial(*trials)[N_ENGINES] = xcalloc(cfg.trials, sizeof *trials);
  unsigned done[N_ENGINES] = {0};
  int broken[N_ENGINES] = {0};
  /* Trials alternate between the pairs: a busy moment of a shared machine then touches
   * all of them alike. */
  for (unsigned t = 0; t < cfg.trials; t++) {
    for (int e = 0; e < N_ENGINES; e++) {
      if (broken[e] || !(cfg.pairs & 1u << e)) continue;
      char what[96];
      snprintf(what, sizeof what, "exchanges: %s, trial %u of %u", engine_names[e], t + 1,
               cfg.trials);
      progress(&cfg, what);
      if (run_trial(&cfg, (engine)e, &set, body, &trials[done[e]][e]) != 0)
        broken[e] = failed = 1;
      else
        done[e]++;
    }
  }
  progress_done(&cfg);
  for (int e = 0; e < N_ENGINES; e++) {
    trial column[1000];
    for (unsigned i = 0; i < done[e]; i++) column[i] = trials[i][e];
    if (!broken[e] && done[e] > 0) summarise(column, done[e], &rates[e]);
  }
  free(trials);

  printf("\nexchanges per second per core: %u streams in flight, %u-byte bodies, %u trials of "
         "%.2f s per pair, CPU time (CLOCK_PROCESS_CPUTIME_ID)\n",
         cfg.in_flight, cfg.body_size, cfg.trials, cfg.seconds);
  printf("  %-16s %12s %12s %12s %10s %10s\n", "pair", "best/s", "median/s", "wall med/s",
         "up B/ex", "down B/ex");
  for (int e = 0; e < N_ENGINES; e++) {
    if (!(cfg.pairs & 1u << e)) continue;
    if (!rates[e].ok) {
      printf("  %-16s failed\n", engine_names[e]);
      continue;
    }
    printf("  %-16s %12.0f %12.0f %12.0f %10.1f %10.1f\n", engine_names[e], rates[e].best,
           rates[e].median, rates[e].median_wall, rates[e].up_per_exchange,
           rates[e].down_per_exchange);
  }
  if (rates[ENGINE_SPEEDY_H2].ok && rates[ENGINE_NGHTTP2].ok)
    printf("  ratio speedy-h2/nghttp2:         best %.2f, median %.2f\n",
           rates[ENGINE_SPEEDY_H2].best / rates[ENGINE_NGHTTP2].best,
           rates[ENGINE_SPEEDY_H2].median / rates[ENGINE_NGHTTP2].median);
  if (rates[ENGINE_SPEEDY_H2].ok && rates[ENGINE_SPEEDY_SPDY31].ok)
    printf("  ratio speedy-h2/speedy-spdy3.1:  best %.2f, median %.2f\n",
           rates[ENGINE_SPEEDY_H2].best / rates[ENGINE_SPEEDY_SPDY31].best,
           rates[ENGINE_SPEEDY_H2].median / rates[ENGINE_SPEEDY_SPDY31].median);

  printf("\nmemory: live bytes through the allocator hook; idle after %u exchanges (HPACK "
         "tables 4096 B; SPDY/3.1: the engine's zlib setting); growth for the first open "
         "stream; per open stream over %u more\n",
         cfg.memory_exchanges, cfg.open_streams);
  printf("  %-16s %12s %12s %12s %12s %14s %14s\n", "pair", "idle client", "idle server",
         "1st client", "1st server", "stream client", "stream server");
  for (int e = 0; e < N_ENGINES; e++) {
    if (!(cfg.pairs & 1u << e)) continue;
    memory m;
    memset(&m, 0, sizeof m);
    progress(&cfg, "memory");
    if (run_memory(&cfg, (engine)e, &set, body, &m) != 0) failed = 1;
    progress_done(&cfg);
    if (!m.ok) {
      printf("  %-16s failed\n", engine_names[e]);
      continue;
    }
    printf("  %-16s %12zu %12zu %12zu %12zu %14.1f %14.1f\n", engine_names[e], m.idle_client,
           m.idle_server, m.first_client, m.first_server, m.per_stream_client, m.per_stream_server);
  }

  free(body);
  exchanges_free(&set);
  har_headers_free(&corpus);
  return failed ? 1 : 0;
}
