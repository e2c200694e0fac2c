/* bench_engine.c — figures for libspeedy on the HAR corpus: in-memory client<->server
 * exchange throughput, the share of that time spent inside zlib, heap bytes per idle
 * session and per open stream, and header compression against zlib's best setting (with
 * a sweep of deflate settings that justifies the engine's default).
 *
 * One process, one core: both sessions run in this thread and are connected by copying
 * speedy_session_send output into the peer's speedy_session_recv. How each figure is made is
 * described in docs/benchmarks.md. Prints figures; never run as a test.
 *
 * This file: the options and main, which runs the parts in order. The measurements are in
 * bench_engine_measure.c, the text and JSON output in bench_engine_report.c; what they
 * share is in bench_engine.h.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_engine.h"
#include "har_headers.h"
#include "session_int.h"
#include "speedy/speedy.h"

#ifndef SPEEDY_SHARED_DIR_DEFAULT
#define SPEEDY_SHARED_DIR_DEFAULT "../shared"
#endif

/* ---- Options ------------------------------------------------------------------------ */

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

/* ---- Progress on a terminal --------------------------------------------------------- */

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
