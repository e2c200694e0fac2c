/* bench_engine.h — what the three files of bench_engine share: the figures' targets and
 * limits, the options (config), the result of every part, and the functions one file
 * calls in another.
 *
 *   bench_engine.c          options and main: which parts run, in which order
 *   bench_engine_measure.c  the measurements: the in-memory pair of sessions, throughput,
 *                           zlib alone, memory, header compression and the deflate sweep
 *   bench_engine_report.c   the figures as text or JSON
 */
#ifndef BENCH_ENGINE_H
#define BENCH_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "har_headers.h"
#include "speedy/speedy.h"

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

/* ---- Options (bench_engine.c) ------------------------------------------------------- */

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

/* ---- Results of the parts (bench_engine_measure.c) ---------------------------------- */

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

typedef struct micro_result {
  uint64_t exchanges;
  double us_per_exchange;      /* hdblock deflate + inflate, CPU */
  double zlib_us_per_exchange; /* of which inside zlib (wrapped calls), if timed */
  double deflate_us, inflate_us;
} micro_result;

typedef struct memory_result {
  size_t idle_client, idle_server;     /* after one exchange, idle */
  size_t fresh_client, fresh_server;   /* just created, before any traffic */
  size_t deflate_state, inflate_state; /* one zlib context each, after use */
  uint32_t open_streams;
  double per_stream_client, per_stream_server;
} memory_result;

typedef struct compression_result {
  deflate_setting setting;
  uint64_t request_http1, response_http1;
  uint64_t request_spdy, response_spdy;   /* frames: header + fixed part + block */
  double request_saving, response_saving; /* percent smaller than HTTP/1.1 */
  size_t deflate_state;                   /* measured through the allocator hook */
  double zlib_us_per_exchange; /* CPU: hdblock deflate + inflate both ways, long-lived contexts */
} compression_result;

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

/* ---- Output (bench_engine_report.c) ------------------------------------------------- */

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

/* ---- bench_engine_measure.c --------------------------------------------------------- */

/* 3 for SPDY/3 and 3.1 (their wire version), 2 for SPDY/2. */
int wire_version(speedy_protocol protocol);
/* zlib's documented deflate memory for a setting. */
size_t deflate_formula_bytes(const deflate_setting *s);

/* Each returns 0, or -1 after a line on stderr. */
int run_throughput(const config *cfg, const har_headers_corpus *corpus, const uint8_t *body,
                   throughput_result *out);
int run_micro(const config *cfg, const har_headers_corpus *corpus, const deflate_setting *setting,
              uint64_t exchanges, micro_result *out);
int run_memory(const config *cfg, const har_headers_corpus *corpus, const deflate_setting *setting,
               memory_result *out);
int compression_by_sessions(const config *cfg, const har_headers_corpus *corpus,
                            const har_headers_groups *groups, const deflate_setting *setting,
                            compression_result *out);
int compression_by_hdblock(const config *cfg, const har_headers_corpus *corpus,
                           const har_headers_groups *groups, const deflate_setting *setting,
                           compression_result *out);

/* The deflate sweep: the settings tried (the current one first), the rule, the choice. */
size_t sweep_grid(sweep_mode mode, const deflate_setting *current, deflate_setting *grid,
                  size_t cap);
int sweep_within_rule(const compression_result *r, const compression_result *reference);
void sweep_recommend(sweep_result *s, const compression_result *reference,
                     const memory_result *memory, int have_memory);

/* ---- bench_engine_report.c ---------------------------------------------------------- */

void print_text(const results *r);
/* Returns 0, or -1 when jansson fails (out of memory). */
int print_json(const results *r);

#endif
