/* bench_engine.c — figures for libspeedy on the HAR corpus: in-memory client<->server
 * exchange throughput, the share of that time spent inside zlib, heap bytes per idle
 * session and per open stream, and header compression against zlib's best setting (with
 * a sweep of deflate settings that justifies the engine's default).
 *
 * One process, one core: both sessions run in this thread and are connected by copying
 * speedy_session_send output into the peer's speedy_session_recv. How each figure is made is
 * described in docs/benchmarks.md. Prints figures; never run as a test.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "har_headers.h"
#include "hdblock.h"
#include "mem.h"
#include "session_int.h"
#include "speedy/speedy.h"
#include "zlib_timer.h"

#ifndef SPEEDY_SHARED_DIR_DEFAULT
#define SPEEDY_SHARED_DIR_DEFAULT "../shared"
#endif

#define PROG "bench_engine"

/* Targets from the engine's issue. */
#define TARGET_EXCHANGES_PER_SECOND 35000.0
#define TARGET_ELSE_SHARE 25.0 /* percent of exchange time outside zlib */
#define TARGET_IDLE_SESSION_BYTES (96u * 1024u)
#define ALLOWED_COMPRESSION_LOSS 1.0 /* percentage points vs level 9/15/8 */

/* zlib's best compression: the corpus README's reference figures use it. */
#define REFERENCE_LEVEL 9
#define REFERENCE_WINDOW_BITS 15
#define REFERENCE_MEM_LEVEL 8

#define BODY_MAX (16u * 1024u * 1024u)
#define MAX_IN_FLIGHT 1000u
#define BODY_SLOTS 2048u /* > MAX_IN_FLIGHT: one per stream in flight */
#define OPEN_STREAMS_FOR_MEMORY 1000u
#define TRANSFER_BUFFER (64u * 1024u)

/* ---- Options ------------------------------------------------------------------------ */

typedef struct deflate_setting {
  int level;
  int window_bits;
  int mem_level;
} deflate_setting;

typedef enum sweep_mode { SWEEP_NONE, SWEEP_QUICK, SWEEP_DEFAULT, SWEEP_FULL } sweep_mode;

/* The parts of the benchmark (--only). */
enum {
  PART_THROUGHPUT = 1,
  PART_ZLIB = 2,
  PART_MEMORY = 4,
  PART_COMPRESSION = 8,
  PART_SWEEP = 16,
  PART_ALL = 31
};

typedef struct config {
  const char *har_dir;
  char *har_dir_owned;
  speedy_protocol protocol;
  uint64_t exchanges;
  double seconds; /* > 0: run the throughput test for this long instead */
  uint32_t in_flight;
  uint32_t body_size;
  uint64_t micro_exchanges;
  int setting_given;
  deflate_setting setting; /* for throughput and memory: the engine default unless given */
  sweep_mode sweep;
  int json;
  int quick;
  int progress;
  unsigned parts; /* PART_* */
} config;

static void usage(FILE *out) {
  fprintf(out,
          "Usage: " PROG " [OPTION]...\n"
          "In-memory libspeedy client<->server exchanges on the HAR corpus: throughput, zlib\n"
          "share, memory per session and stream, header compression. See docs/benchmarks.md.\n"
          "\n"
          "  --har-dir DIR         HAR files to read (default: $SPEEDY_SHARED_DIR/corpus/har,\n"
          "                        else " SPEEDY_SHARED_DIR_DEFAULT "/corpus/har)\n"
          "  --protocol VER        2, 3 or 3.1 (default 3.1)\n"
          "  --exchanges N         request/response exchanges to time (default 200000)\n"
          "  --seconds S           time exchanges for S seconds instead of a count\n"
          "  --streams N           streams kept in flight, 1-%u (default 10)\n"
          "  --body BYTES          response body size (default 1024)\n"
          "  --deflate L,W,M       zlib level, windowBits, memLevel of the sessions timed and\n"
          "                        measured (default: the engine's default)\n"
          "  --sweep MODE          deflate settings to sweep: none, quick, default, full\n"
          "                        (default: default; quick with --quick)\n"
          "  --only PARTS          run only these, comma-separated: throughput, zlib,\n"
          "                        memory, compression, sweep (default: all)\n"
          "  --quick               a few seconds: 20000 exchanges, quick sweep\n"
          "  --json                print one JSON object instead of text\n"
          "  --help                print this help and exit\n"
          "  --version             print the program and library versions and exit\n",
          MAX_IN_FLIGHT);
}

static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  char *end;
  errno = 0;
  if (text[0] == '-') return -1;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) return -1;
  *out = v;
  return 0;
}

static int parse_protocol(const char *text, speedy_protocol *out) {
  if (strcmp(text, "2") == 0)
    *out = SPEEDY_PROTOCOL_SPDY2;
  else if (strcmp(text, "3") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3;
  else if (strcmp(text, "3.1") == 0 || strcmp(text, "31") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3_1;
  else
    return speedy_protocol_from_name(text, strlen(text), out) == 0 ? 0 : -1;
  return 0;
}

static int parse_parts(const char *text, unsigned *out) {
  static const struct {
    const char *name;
    unsigned part;
  } names[] = {{"throughput", PART_THROUGHPUT},
               {"zlib", PART_ZLIB},
               {"memory", PART_MEMORY},
               {"compression", PART_COMPRESSION},
               {"sweep", PART_SWEEP}};
  unsigned parts = 0;
  const char *p = text;
  while (*p != '\0') {
    size_t len = strcspn(p, ",");
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
      if (strlen(names[i].name) == len && strncmp(p, names[i].name, len) == 0) break;
    if (i == sizeof names / sizeof names[0]) return -1;
    parts |= names[i].part;
    p += len;
    if (*p == ',') p++;
  }
  if (parts == 0) return -1;
  *out = parts;
  return 0;
}

static int parse_setting(const char *text, deflate_setting *out) {
  int level, window_bits, mem_level, used = 0;
  if (sscanf(text, "%d,%d,%d%n", &level, &window_bits, &mem_level, &used) != 3 ||
      text[used] != '\0')
    return -1;
  if (level < 0 || level > 9 || window_bits < 9 || window_bits > 15 || mem_level < 1 ||
      mem_level > 9)
    return -1;
  *out = (deflate_setting){level, window_bits, mem_level};
  return 0;
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

static void parse_args(int argc, char **argv, config *cfg) {
  enum {
    OPT_HAR = 256,
    OPT_PROTOCOL,
    OPT_EXCHANGES,
    OPT_SECONDS,
    OPT_STREAMS,
    OPT_BODY,
    OPT_DEFLATE,
    OPT_SWEEP,
    OPT_ONLY,
    OPT_QUICK,
    OPT_JSON,
    OPT_HELP,
    OPT_VERSION
  };
  static const struct option longopts[] = {{"har-dir", required_argument, NULL, OPT_HAR},
                                           {"protocol", required_argument, NULL, OPT_PROTOCOL},
                                           {"exchanges", required_argument, NULL, OPT_EXCHANGES},
                                           {"seconds", required_argument, NULL, OPT_SECONDS},
                                           {"streams", required_argument, NULL, OPT_STREAMS},
                                           {"body", required_argument, NULL, OPT_BODY},
                                           {"deflate", required_argument, NULL, OPT_DEFLATE},
                                           {"sweep", required_argument, NULL, OPT_SWEEP},
                                           {"only", required_argument, NULL, OPT_ONLY},
                                           {"quick", no_argument, NULL, OPT_QUICK},
                                           {"json", no_argument, NULL, OPT_JSON},
                                           {"help", no_argument, NULL, OPT_HELP},
                                           {"version", no_argument, NULL, OPT_VERSION},
                                           {NULL, 0, NULL, 0}};
  int exchanges_given = 0, sweep_given = 0;
  memset(cfg, 0, sizeof *cfg);
  cfg->protocol = SPEEDY_PROTOCOL_SPDY3_1;
  cfg->exchanges = 200000;
  cfg->in_flight = 10;
  cfg->body_size = 1024;
  cfg->sweep = SWEEP_DEFAULT;
  cfg->parts = PART_ALL;
  int c;
  uint64_t v;
  while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
    switch (c) {
    case OPT_HAR:
      cfg->har_dir = optarg;
      break;
    case OPT_PROTOCOL:
      if (parse_protocol(optarg, &cfg->protocol) != 0)
        bad_usage("--protocol %s: expected 2, 3 or 3.1", optarg);
      break;
    case OPT_EXCHANGES:
      if (parse_u64(optarg, 1, UINT64_C(1) << 40, &v) != 0)
        bad_usage("--exchanges %s: expected a positive count", optarg);
      cfg->exchanges = v;
      exchanges_given = 1;
      break;
    case OPT_SECONDS: {
      char *end;
      double s = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || !(s > 0.0) || s > 86400.0)
        bad_usage("--seconds %s: expected a positive number of seconds", optarg);
      cfg->seconds = s;
      break;
    }
    case OPT_STREAMS:
      if (parse_u64(optarg, 1, MAX_IN_FLIGHT, &v) != 0)
        bad_usage("--streams %s: expected 1 to %u", optarg, MAX_IN_FLIGHT);
      cfg->in_flight = (uint32_t)v;
      break;
    case OPT_BODY:
      if (parse_u64(optarg, 0, BODY_MAX, &v) != 0)
        bad_usage("--body %s: expected 0 to %u bytes", optarg, BODY_MAX);
      cfg->body_size = (uint32_t)v;
      break;
    case OPT_DEFLATE:
      if (parse_setting(optarg, &cfg->setting) != 0)
        bad_usage("--deflate %s: expected LEVEL,WINDOWBITS,MEMLEVEL within 0-9,9-15,1-9", optarg);
      cfg->setting_given = 1;
      break;
    case OPT_SWEEP:
      sweep_given = 1;
      if (strcmp(optarg, "none") == 0)
        cfg->sweep = SWEEP_NONE;
      else if (strcmp(optarg, "quick") == 0)
        cfg->sweep = SWEEP_QUICK;
      else if (strcmp(optarg, "default") == 0)
        cfg->sweep = SWEEP_DEFAULT;
      else if (strcmp(optarg, "full") == 0)
        cfg->sweep = SWEEP_FULL;
      else
        bad_usage("--sweep %s: expected none, quick, default or full", optarg);
      break;
    case OPT_ONLY:
      if (parse_parts(optarg, &cfg->parts) != 0)
        bad_usage("--only %s: expected a comma-separated list of throughput, zlib, memory, "
                  "compression, sweep",
                  optarg);
      break;
    case OPT_QUICK:
      cfg->quick = 1;
      break;
    case OPT_JSON:
      cfg->json = 1;
      break;
    case OPT_HELP:
      usage(stdout);
      exit(0);
    case OPT_VERSION:
      printf(PROG " %s (libspeedy %s)\n", SPEEDY_VERSION_STRING, speedy_version());
      exit(0);
    default:
      fputs("Try '" PROG " --help'.\n", stderr);
      exit(2);
    }
  }
  if (optind < argc) bad_usage("unexpected argument '%s'", argv[optind]);
  if (cfg->sweep == SWEEP_NONE) cfg->parts &= ~(unsigned)PART_SWEEP;
  /* The sweep's choice needs the idle session (the memory target). */
  if (cfg->parts & PART_SWEEP) cfg->parts |= PART_MEMORY;
  if (cfg->quick) {
    if (!exchanges_given) cfg->exchanges = 20000;
    if (!sweep_given) cfg->sweep = SWEEP_QUICK;
  }
  cfg->micro_exchanges = cfg->exchanges < 100000 ? cfg->exchanges : 100000;
  if (cfg->har_dir == NULL) {
    const char *shared = getenv("SPEEDY_SHARED_DIR");
    if (shared == NULL || shared[0] == '\0') shared = SPEEDY_SHARED_DIR_DEFAULT;
    size_t len = strlen(shared) + sizeof "/corpus/har";
    cfg->har_dir_owned = malloc(len);
    if (cfg->har_dir_owned == NULL) {
      fputs(PROG ": out of memory\n", stderr);
      exit(1);
    }
    snprintf(cfg->har_dir_owned, len, "%s/corpus/har", shared);
    cfg->har_dir = cfg->har_dir_owned;
  }
  cfg->progress = !cfg->json && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
}

/* ---- Small helpers ------------------------------------------------------------------ */

static double clock_seconds(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

static int wire_version(speedy_protocol protocol) {
  return protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
}

static size_t deflate_formula_bytes(const deflate_setting *s) {
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
  p->expected_request_fields += e->request.n_headers;
  p->expected_response_fields += e->response.n_headers;
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

typedef struct throughput_result {
  uint64_t exchanges;
  double cpu_seconds, wall_seconds;
  double per_second_cpu, per_second_wall;
  double wire_up_per_exchange, wire_down_per_exchange;
  int zlib_timed;
  double zlib_share; /* percent of wall time inside zlib calls */
  double deflate_share, inflate_share;
  uint64_t zlib_calls;
  double timer_overhead_share; /* percent the clock reads themselves may add */
} throughput_result;

static int run_throughput(const config *cfg, const har_headers_corpus *corpus, const uint8_t *body,
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

typedef struct micro_result {
  uint64_t exchanges;
  double us_per_exchange;      /* hdblock deflate + inflate, CPU */
  double zlib_us_per_exchange; /* of which inside zlib (wrapped calls), if timed */
  double deflate_us, inflate_us;
} micro_result;

/* The first `exchanges` exchanges of the corpus (cycling) through two deflaters and two
 * inflaters kept for the whole run, as the sessions of the throughput test keep theirs. */
static int run_micro(const config *cfg, const har_headers_corpus *corpus,
                     const deflate_setting *setting, uint64_t exchanges, micro_result *out) {
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

typedef struct memory_result {
  size_t idle_client, idle_server;     /* after one exchange, idle */
  size_t fresh_client, fresh_server;   /* just created, before any traffic */
  size_t deflate_state, inflate_state; /* one zlib context each, after use */
  uint32_t open_streams;
  double per_stream_client, per_stream_server;
} memory_result;

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

static int run_memory(const config *cfg, const har_headers_corpus *corpus,
                      const deflate_setting *setting, memory_result *out) {
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

typedef struct compression_result {
  deflate_setting setting;
  uint64_t request_http1, response_http1;
  uint64_t request_spdy, response_spdy;   /* frames: header + fixed part + block */
  double request_saving, response_saving; /* percent smaller than HTTP/1.1 */
  size_t deflate_state;                   /* measured through the allocator hook */
  double zlib_us_per_exchange; /* CPU: hdblock deflate + inflate both ways, long-lived contexts */
} compression_result;

static void compression_finish(compression_result *r) {
  r->request_saving = 100.0 * (1.0 - (double)r->request_spdy / (double)r->request_http1);
  r->response_saving = 100.0 * (1.0 - (double)r->response_spdy / (double)r->response_http1);
}

/* Through real sessions: SYN_STREAM and SYN_REPLY frames as sent (frame trace). */
static int compression_by_sessions(const config *cfg, const har_headers_corpus *corpus,
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
static int compression_by_hdblock(const config *cfg, const har_headers_corpus *corpus,
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
static size_t sweep_grid(sweep_mode mode, const deflate_setting *current, deflate_setting *grid,
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

typedef struct sweep_result {
  compression_result *points;
  size_t n_points;
  int current; /* index of the setting in use (the first point) */
  /* Indices into points, or -1 when nothing qualifies: */
  int smallest;              /* qualifying setting with the smallest deflate state */
  int fastest;               /* qualifying setting with the fastest deflate */
  int recommended;           /* see sweep_recommend */
  double idle_estimate_base; /* idle session bytes minus the current deflate state, or 0 */
} sweep_result;

#define SPEED_TIE 1.05  /* deflate times within 5% count as equal (measurement noise) */
#define SWEEP_TIMINGS 2 /* timings of each setting that passes the rule (the fastest counts) */

static int sweep_within_rule(const compression_result *r, const compression_result *reference) {
  return r->request_saving >= reference->request_saving - ALLOWED_COMPRESSION_LOSS &&
         r->response_saving >= reference->response_saving - ALLOWED_COMPRESSION_LOSS;
}

/* Qualifying settings lose at most ALLOWED_COMPRESSION_LOSS points against the reference
 * on requests and on responses, and (when the idle session was measured) would keep an
 * idle session within its target. Header compression is the bulk of an exchange's CPU
 * time, so among them the recommendation is the fastest deflate; settings within
 * SPEED_TIE of it count as equally fast and the smallest deflate state wins, then the
 * lower level. */
static void sweep_recommend(sweep_result *s, const compression_result *reference,
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

/* ---- Output ------------------------------------------------------------------------- */

typedef struct results {
  const config *cfg;
  const har_headers_corpus *corpus;
  deflate_setting setting; /* in effect for throughput and memory */
  int have_throughput, have_micro, have_memory, have_compression;
  throughput_result throughput;
  micro_result micro;
  memory_result memory;
  compression_result session_current, session_reference;
  sweep_result sweep;
  int session_matches_hdblock; /* the sweep's figure for the current setting agrees */
} results;

static const char *met(int ok) { return ok ? "met" : "MISSED"; }

static void print_text(const results *r) {
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

static int print_json(const results *r) {
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

/* ---- main --------------------------------------------------------------------------- */

/* SPDY/2 forbids empty header values (draft 2, 2.6.10: "The length of each name and
 * value must be greater than zero"), and the engine refuses them: a SPDY/2 client could
 * not send them, so they are left out. Returns the number of fields removed. */
static size_t drop_empty_values(har_headers_message *m) {
  size_t kept = 0;
  for (size_t i = 0; i < m->n_headers; i++)
    if (m->headers[i].value_len > 0) m->headers[kept++] = m->headers[i];
  size_t dropped = m->n_headers - kept;
  m->n_headers = kept;
  return dropped;
}

/* The engine's default deflate setting, read from a fresh options object (the struct
 * is private to lib/, which speedy_internal lets this program see). */
static int engine_default_setting(deflate_setting *out) {
  speedy_options *options;
  if (speedy_options_new(&options) != 0) return -1;
  *out = (deflate_setting){options->deflate_level, options->deflate_window_bits,
                           options->deflate_mem_level};
  speedy_options_del(options);
  return 0;
}

int main(int argc, char **argv) {
  config cfg;
  parse_args(argc, argv, &cfg);

  har_headers_corpus corpus;
  har_headers_init(&corpus);
  progress(&cfg, "reading the HAR corpus");
  int loaded = har_headers_load_dir(&corpus, cfg.har_dir, PROG, stderr);
  progress_done(&cfg);
  if (loaded <= 0 || corpus.n_entries == 0) {
    if (loaded == 0) fprintf(stderr, PROG ": no usable HAR files in %s\n", cfg.har_dir);
    har_headers_free(&corpus);
    free(cfg.har_dir_owned);
    return 1;
  }

  size_t dropped_empty = 0;
  if (cfg.protocol == SPEEDY_PROTOCOL_SPDY2) {
    for (size_t i = 0; i < corpus.n_entries; i++) {
      dropped_empty += drop_empty_values(&corpus.entries[i].request);
      dropped_empty += drop_empty_values(&corpus.entries[i].response);
    }
    if (dropped_empty > 0 && !cfg.json)
      printf("note: %zu empty header values left out (SPDY/2 forbids them)\n", dropped_empty);
  }

  uint8_t *body = malloc(cfg.body_size > 0 ? cfg.body_size : 1);
  if (body == NULL) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  for (uint32_t i = 0; i < cfg.body_size; i++) body[i] = (uint8_t)('a' + i % 26);

  results r;
  memset(&r, 0, sizeof r);
  r.cfg = &cfg;
  r.corpus = &corpus;
  if (cfg.setting_given) {
    r.setting = cfg.setting;
  } else if (engine_default_setting(&r.setting) != 0) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  r.sweep.recommended = r.sweep.smallest = r.sweep.fastest = -1;
  int failed = 0;

  if (cfg.parts & PART_THROUGHPUT) {
    progress(&cfg, "timing exchanges");
    if (run_throughput(&cfg, &corpus, body, &r.throughput) == 0)
      r.have_throughput = 1;
    else
      failed = 1;
  }
  if (cfg.parts & PART_ZLIB) {
    progress(&cfg, "timing zlib alone");
    if (run_micro(&cfg, &corpus, &r.setting, cfg.micro_exchanges, &r.micro) == 0)
      r.have_micro = 1;
    else
      failed = 1;
  }
  if (cfg.parts & PART_MEMORY) {
    progress(&cfg, "measuring memory");
    if (run_memory(&cfg, &corpus, &r.setting, &r.memory) == 0)
      r.have_memory = 1;
    else
      failed = 1;
  }

  har_headers_groups groups;
  if (har_headers_group_by_host(&corpus, &groups) != 0) {
    fprintf(stderr, PROG ": out of memory\n");
    return 1;
  }
  const deflate_setting reference = {REFERENCE_LEVEL, REFERENCE_WINDOW_BITS, REFERENCE_MEM_LEVEL};
  if (cfg.parts & PART_COMPRESSION) {
    progress(&cfg, "measuring header compression");
    if (compression_by_sessions(&cfg, &corpus, &groups, &r.setting, &r.session_current) == 0 &&
        compression_by_sessions(&cfg, &corpus, &groups, &reference, &r.session_reference) == 0)
      r.have_compression = 1;
    else
      failed = 1;
  }

  if (cfg.parts & PART_SWEEP) {
    deflate_setting grid[9 * 7 * 9 + 1];
    size_t n = sweep_grid(cfg.sweep, &r.setting, grid, sizeof grid / sizeof grid[0]);
    r.sweep.points = calloc(n, sizeof *r.sweep.points);
    if (r.sweep.points == NULL) {
      fprintf(stderr, PROG ": out of memory\n");
      return 1;
    }
    /* The rule is judged against 9/15/8 through the same path (hdblock) as the sweep. */
    compression_result sweep_reference;
    progress(&cfg, "deflate sweep: reference");
    int sweep_ok =
        compression_by_hdblock(&cfg, &corpus, &groups, &reference, &sweep_reference) == 0;
    for (size_t i = 0; sweep_ok && i < n; i++) {
      char what[64];
      snprintf(what, sizeof what, "deflate sweep %zu/%zu", i + 1, n);
      progress(&cfg, what);
      compression_result *point = &r.sweep.points[i];
      sweep_ok = compression_by_hdblock(&cfg, &corpus, &groups, &grid[i], point) == 0;
      /* Speed as the throughput test pays it: the corpus once through long-lived contexts,
       * deflate and inflate. Settings that can be chosen are timed SWEEP_TIMINGS times and
       * the fastest counts. */
      uint64_t timed_exchanges = cfg.sweep == SWEEP_QUICK ? 2000 : 5000;
      int timings = sweep_within_rule(point, &sweep_reference) && cfg.sweep != SWEEP_QUICK
                        ? SWEEP_TIMINGS
                        : 1;
      for (int k = 0; sweep_ok && k < timings; k++) {
        micro_result timing;
        sweep_ok = run_micro(&cfg, &corpus, &grid[i], timed_exchanges, &timing) == 0;
        if (sweep_ok && (k == 0 || timing.us_per_exchange < point->zlib_us_per_exchange))
          point->zlib_us_per_exchange = timing.us_per_exchange;
      }
      if (sweep_ok) r.sweep.n_points++;
    }
    if (!sweep_ok) failed = 1;
    r.sweep.current = 0; /* sweep_grid puts the timed setting first */
    if (r.sweep.n_points > 0 && r.have_compression) {
      const compression_result *a = &r.sweep.points[0], *b = &r.session_current;
      r.session_matches_hdblock =
          a->request_spdy == b->request_spdy && a->response_spdy == b->response_spdy;
      if (!r.session_matches_hdblock)
        fprintf(stderr,
                PROG ": note: sessions sent %llu/%llu header-frame bytes, hdblock alone "
                     "%llu/%llu (requests/responses)\n",
                (unsigned long long)b->request_spdy, (unsigned long long)b->response_spdy,
                (unsigned long long)a->request_spdy, (unsigned long long)a->response_spdy);
    }
    if (r.sweep.n_points == n)
      sweep_recommend(&r.sweep, &sweep_reference, &r.memory, r.have_memory);
  }
  progress_done(&cfg);

  if (cfg.json) {
    if (print_json(&r) != 0) failed = 1;
  } else {
    print_text(&r);
  }

  free(r.sweep.points);
  har_headers_groups_free(&groups);
  free(body);
  har_headers_free(&corpus);
  free(cfg.har_dir_owned);
  return failed ? 1 : 0;
}
