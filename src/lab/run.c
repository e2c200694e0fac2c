/* run.c — `speedy lab run` (run.h): the matrix (matrix.c: its order, keys and shards;
 * --shard K/N runs one shard), its inputs (HARs become plans), the plain-file sites of
 * --write-site, resuming from the results file, the random interleaving, parallel links
 * bounded by the emulator's lateness, the progress bar, interruption, and the results
 * file put in the matrix's order at the end. One load is run_load.c's.
 *
 * Interruption: while the loads run, SIGINT and SIGTERM are blocked in every thread and
 * taken by the main thread with sigtimedwait() (no handler, so nothing has to be
 * async-signal-safe; the links' `ip` commands inherit the mask and finish their step).
 * The first one sets st.interrupted: workers start no new load, and each load in
 * progress stops at its next poll, tearing its link down as any load does and writing
 * nothing. The run then prints how far it got and exits 128 + the signal's number. A
 * second one exits at once (lab_run_abandon first). Only that, SIGKILL or a crash leaves
 * links behind; the next run removes those before its first load.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "har.h"
#include "io.h" /* IO_TLS_HELLO_PAD_MAX */
#include "matrix.h"
#include "netem.h"
#include "page.h"
#include "plan.h"
#include "replay.h"
#include "rng.h"
#include "run.h"

#define PROG "speedy lab run"

static const char *const CONFIG_NAMES[LAB_N_CONFIGS] = {
    "http1-fcfs", "http1-prio", "http1-single", "spdy-multi",   "spdy-single", "spdy-push",
    "spdy-hint",  "h2-multi",   "h2-single",    "h2-coalesced", "h2-push",     "h2-hint"};

const char *lab_config_name(lab_config config) {
  return config < LAB_N_CONFIGS ? CONFIG_NAMES[config] : "?";
}

int lab_config_parse(const char *name) {
  for (int i = 0; i < LAB_N_CONFIGS; i++)
    if (strcmp(name, CONFIG_NAMES[i]) == 0) return i;
  return -1;
}

int lab_config_is_single(lab_config c) {
  return c == LAB_HTTP1_SINGLE || c == LAB_SPDY_SINGLE || c == LAB_SPDY_PUSH ||
         c == LAB_SPDY_HINT || c == LAB_H2_SINGLE || c == LAB_H2_PUSH || c == LAB_H2_HINT;
}

int lab_config_is_spdy(lab_config c) { return c >= LAB_SPDY_MULTI; }

int lab_config_is_h2(lab_config c) { return c >= LAB_H2_MULTI && c < LAB_N_CONFIGS; }

int lab_config_pushes(lab_config c) { return c == LAB_SPDY_PUSH || c == LAB_H2_PUSH; }

int lab_config_hints(lab_config c) { return c == LAB_SPDY_HINT || c == LAB_H2_HINT; }

/* ---- inputs ------------------------------------------------------------------------- */

typedef struct run_state {
  lab_run_settings settings;
  lab_run_inputs in;
  lab_run_link links[64];
  size_t n_links;
  int tls[2];
  size_t n_tls;
  int configs[LAB_N_CONFIGS];
  size_t n_configs;
  int repetitions, lossy_repetitions;
  lab_matrix matrix;        /* the whole matrix, every shard's loads */
  unsigned shard, n_shards; /* --shard K/N: shard = K - 1; n_shards 0 without it */
  lab_run_job *jobs;        /* this run's: its shard's, less those in the results */
  size_t n_jobs;
  /* workers */
  pthread_mutex_t lock;
  size_t next_job, done, failed, aborted, invalid_lateness;
  lab_links at_once; /* how many workers may run a load now */
  int workers_running;
  atomic_int interrupted; /* 0, or the first SIGINT / SIGTERM */
  double started_ms;
  int progress;
} run_state;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* ---- plain-file sites (--write-site) ------------------------------------------------ */

/* The name of page index's directory under the site root: its plan file's name without
 * ".json" ("synth-small.har-p1-estimated"), bytes other than [A-Za-z0-9._-] as '_', no
 * leading '.', and "-<index>" added when an earlier page already has that name (two
 * directories of inputs may hold plans of the same name). Allocated; the caller frees. */
static char *site_name(const run_state *st, size_t index) {
  const char *file = st->in.pages[index].plan_file;
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  size_t len = strlen(base);
  if (ends_with(base, ".json")) len -= strlen(".json");
  if (len > 200) len = 200;
  char *name = malloc(len + 32);
  if (name == NULL) return NULL;
  for (size_t i = 0; i < len; i++) {
    char c = base[i];
    int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
    name[i] = plain && !(i == 0 && c == '.') ? c : '_';
  }
  name[len] = '\0';
  if (len == 0) snprintf(name, len + 32, "page");
  for (size_t p = 0; p < index; p++) {
    const char *other = strrchr(st->in.pages[p].site_dir, '/');
    if (other != NULL && strcmp(other + 1, name) == 0) {
      snprintf(name + strlen(name), 32, "-%zu", index);
      break;
    }
  }
  return name;
}

/* Writes every page's plan as plain files under root/<name>/ (replay_write_site: one
 * directory per host, docs/lab-replay.md) and records the directory in the page, for
 * the server command's $5. Returns 0 or -1 with a message on stderr. */
static int write_sites(run_state *st, const char *root) {
  if (mkdir(root, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, PROG ": cannot create --write-site %s: %s\n", root, strerror(errno));
    return -1;
  }
  char *root_abs = realpath(root, NULL);
  if (root_abs == NULL) {
    fprintf(stderr, PROG ": cannot open --write-site %s: %s\n", root, strerror(errno));
    return -1;
  }
  int rc = 0;
  for (size_t p = 0; p < st->in.n_pages && rc == 0; p++) {
    char err[512], *name = site_name(st, p);
    replay_plan *plan = NULL;
    if (name == NULL || asprintf(&st->in.pages[p].site_dir, "%s/%s", root_abs, name) < 0) {
      st->in.pages[p].site_dir = NULL;
      fprintf(stderr, PROG ": out of memory\n");
      rc = -1;
    } else if (replay_plan_load(&plan, st->in.pages[p].plan_file, err, sizeof err) != 0 ||
               replay_write_site(plan, st->in.pages[p].site_dir, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": --write-site: %s\n", err);
      rc = -1;
    }
    replay_plan_del(plan);
    free(name);
  }
  free(root_abs);
  return rc;
}

/* ---- the matrix --------------------------------------------------------------------- */

static char **done_keys;
static size_t n_done_keys;

static int done_key_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The keys already in the results file: those loads are not run again. */
static int read_done_keys(const char *results) {
  FILE *f = fopen(results, "r");
  if (f == NULL) return errno == ENOENT ? 0 : -1;
  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, f) > 0) {
    json_t *v = json_loads(line, 0, NULL);
    const char *key = json_string_value(json_object_get(v, "key"));
    if (key != NULL) {
      char **grown = realloc(done_keys, (n_done_keys + 1) * sizeof *grown);
      if (grown != NULL) {
        done_keys = grown;
        done_keys[n_done_keys] = strdup(key);
        if (done_keys[n_done_keys] != NULL) n_done_keys++;
      }
    }
    json_decref(v);
  }
  free(line);
  fclose(f);
  qsort(done_keys, n_done_keys, sizeof *done_keys, done_key_cmp);
  return 0;
}

static int is_done(const char *key) {
  return n_done_keys > 0 &&
         bsearch(&key, done_keys, n_done_keys, sizeof *done_keys, done_key_cmp) != NULL;
}

static int compare_page_ids(const void *a, const void *b) {
  return strcmp(((const lab_run_page *)a)->id, ((const lab_run_page *)b)->id);
}

/* The run's matrix (matrix.h) from its inputs and options. The pages and links are put in
 * the matrix's order, so that a job's indices name both. Returns 0, or -1 after a message
 * (two inputs with the same page, out of memory). */
static int make_matrix(run_state *st) {
  lab_matrix *m = &st->matrix;
  const lab_run_settings *s = &st->settings;
  qsort(st->in.pages, st->in.n_pages, sizeof *st->in.pages, compare_page_ids);
  for (size_t p = 1; p < st->in.n_pages; p++)
    if (strcmp(st->in.pages[p - 1].id, st->in.pages[p].id) == 0) {
      /* Their loads would have the same keys: one would pass for the other's. */
      fprintf(stderr,
              PROG ": two inputs give the page '%s' (a page is named by its file's name): "
                   "give each page once\n",
              st->in.pages[p].id);
      return -1;
    }
  for (size_t i = 0; i < st->in.n_skips; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(st->in.skips[i].key, st->in.skips[k].key) == 0) {
        fprintf(stderr, PROG ": two inputs give the page '%s#%s': give each page once\n",
                st->in.skips[i].source, st->in.skips[i].page);
        return -1;
      }
  int rc = 0;
  for (size_t p = 0; p < st->in.n_pages && rc == 0; p++)
    rc = lab_matrix_add_page(m, st->in.pages[p].id);
  for (size_t i = 0; i < st->in.n_skips && rc == 0; i++)
    rc = lab_matrix_add_skip(m, st->in.skips[i].key);
  for (size_t l = 0; l < st->n_links && rc == 0; l++) rc = lab_matrix_add_link(m, &st->links[l]);
  for (size_t t = 0; t < st->n_tls; t++) m->tls[m->n_tls++] = st->tls[t];
  for (size_t c = 0; c < st->n_configs; c++)
    m->configs[m->n_configs++] = (lab_config)st->configs[c];
  m->repetitions = st->repetitions;
  m->lossy_repetitions = st->lossy_repetitions;
  m->dns_rtt_ms = s->dns_rtt_ms;
  m->chromium = s->chromium;
  /* What changes a load but is not in its key: shards that differ in it are not one run. */
  m->settings = json_pack("{s:s, s:i, s:I, s:s, s:f, s:f, s:o}", "tcp", s->tcp_preset, "initcwnd",
                          s->initcwnd, "queue_bytes", (json_int_t)s->queue_bytes, "tls_version",
                          s->tls_version == 13 ? "1.3" : "1.2", "timeout_s", s->timeout_s,
                          "lateness_p99_ms", s->lateness_p99_ms, "server_cmd",
                          s->server_cmd != NULL ? json_string(s->server_cmd) : json_null());
  /* Only with the browser: a speedy matrix's line is what it was before --client. */
  if (m->settings != NULL && s->chromium)
    json_object_set_new(m->settings, "client", json_string("chromium"));
  if (m->settings != NULL && s->hello_padding > 0)
    json_object_set_new(m->settings, "hello_padding", json_integer(s->hello_padding));
  if (m->settings != NULL && s->delayable_limit > 0)
    json_object_set_new(m->settings, "delayable_limit", json_integer(s->delayable_limit));
  if (m->settings != NULL && s->chromium_sockets)
    json_object_set_new(m->settings, "chromium_sockets", json_true());
  if (m->settings != NULL && s->chromium_headers)
    json_object_set_new(m->settings, "chromium_headers", json_true());
  if (m->settings != NULL && s->boost_images)
    json_object_set_new(m->settings, "boost_images", json_true());
  if (m->settings != NULL && s->blocking_css)
    json_object_set_new(m->settings, "blocking_css", json_true());
  if (m->settings != NULL && s->load_event)
    json_object_set_new(m->settings, "load_event", json_true());
  if (m->settings != NULL && s->document_delay_ms > 0)
    json_object_set_new(m->settings, "document_delay_ms", json_integer(s->document_delay_ms));
  if (m->settings != NULL && s->frame_delay_ms > 0)
    json_object_set_new(m->settings, "frame_delay_ms", json_integer(s->frame_delay_ms));
  if (m->settings != NULL && s->request_spacing_ms > 0)
    json_object_set_new(m->settings, "request_spacing_ms", json_integer(s->request_spacing_ms));
  if (m->settings != NULL && s->jitter_ms > 0)
    json_object_set_new(m->settings, "jitter_ms", json_integer(s->jitter_ms));
  if (rc != 0 || m->settings == NULL) {
    fprintf(stderr, PROG ": out of memory\n");
    return -1;
  }
  lab_matrix_sort(m);
  memcpy(st->links, m->links, m->n_links * sizeof *m->links);
  st->n_links = m->n_links;
  return 0;
}

/* This run's loads: the matrix's in its order, less those of other shards and those in
 * the results already. Returns 0 or -1 (out of memory). */
static int build_jobs(run_state *st, size_t *in_shard, size_t *skipped) {
  size_t n_all = 0;
  *in_shard = *skipped = 0;
  if (lab_matrix_jobs(&st->matrix, &st->jobs, &n_all) != 0) return -1;
  st->n_jobs = 0;
  for (size_t i = 0; i < n_all; i++) {
    const lab_run_job *job = &st->jobs[i];
    if (st->n_shards > 0 && lab_matrix_shard_of_job(&st->matrix, job, st->n_shards) != st->shard)
      continue;
    (*in_shard)++;
    if (is_done(job->key))
      (*skipped)++;
    else
      st->jobs[st->n_jobs++] = *job;
  }
  return 0;
}

/* Interleaved in random order: drift of the machine spreads over every configuration. */
static void shuffle_jobs(run_state *st) {
  rng_gen rng;
  rng_seed(&rng, st->settings.seed);
  for (size_t i = st->n_jobs; i > 1; i--) {
    size_t j = rng_below(&rng, i);
    lab_run_job tmp = st->jobs[i - 1];
    st->jobs[i - 1] = st->jobs[j];
    st->jobs[j] = tmp;
  }
}

/* Is this skipped page's line this run's to write (its shard's)? */
static int skip_in_shard(const run_state *st, const lab_run_skip *skip) {
  return st->n_shards == 0 || lab_matrix_shard_of(skip->key, st->n_shards) == st->shard;
}

/* ---- workers and progress ----------------------------------------------------------- */

int lab_links_count_load(lab_links *links, int late) {
  if (late) {
    links->clean = 0;
    if (links->allowed <= 1) return 0;
    links->allowed--;
    return -1;
  }
  if (links->allowed >= links->max || ++links->clean < LAB_LINKS_RECOVER_AFTER) return 0;
  links->clean = 0;
  links->allowed++;
  return 1;
}

static void show_progress(run_state *st) {
  if (!st->progress) return;
  size_t finished = st->done + st->failed;
  double elapsed = (now_ms() - st->started_ms) / 1000;
  double eta = finished ? elapsed / (double)finished * (double)(st->n_jobs - finished) : 0;
  int width = 30, filled = st->n_jobs ? (int)(width * finished / st->n_jobs) : width;
  char bar[64];
  for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r[%s] %zu/%zu loads, %zu failed, %d link%s, elapsed %dm%02ds, ETA %dm%02ds  ",
          bar, finished, st->n_jobs, st->failed, st->at_once.allowed,
          st->at_once.allowed == 1 ? "" : "s", (int)elapsed / 60, (int)elapsed % 60, (int)eta / 60,
          (int)eta % 60);
  fflush(stderr);
}

typedef struct worker_arg {
  run_state *st;
  int index;
} worker_arg;

static void *worker(void *arg) {
  worker_arg *w = arg;
  run_state *st = w->st;
  for (;;) {
    pthread_mutex_lock(&st->lock);
    if (st->next_job >= st->n_jobs || atomic_load(&st->interrupted) != 0) {
      st->workers_running--;
      pthread_mutex_unlock(&st->lock);
      return NULL;
    }
    if (w->index >= st->at_once.allowed) { /* a link taken away: wait until it comes back */
      pthread_mutex_unlock(&st->lock);
      struct timespec tick = {0, 100 * 1000 * 1000};
      nanosleep(&tick, NULL);
      continue;
    }
    const lab_run_job *job = &st->jobs[st->next_job++];
    pthread_mutex_unlock(&st->lock);
    int late = 0;
    int rc =
        lab_run_load(&st->settings, &st->in.pages[job->page], &st->links[job->link], job, &late);
    pthread_mutex_lock(&st->lock);
    if (rc == 0)
      st->done++;
    else if (rc == LAB_RUN_ABORTED)
      st->aborted++;
    else
      st->failed++;
    if (late) st->invalid_lateness++;
    /* The emulator fell behind its model: fewer links at once, until it keeps up again. */
    int change = rc == LAB_RUN_ABORTED ? 0 : lab_links_count_load(&st->at_once, late);
    if (change != 0 && st->progress) fputc('\n', stderr);
    if (change < 0)
      fprintf(stderr,
              PROG ": link lateness above %.2f ms (p99) during %s: flagged; now %d "
                   "link%s at once\n",
              st->settings.lateness_p99_ms, job->key, st->at_once.allowed,
              st->at_once.allowed == 1 ? "" : "s");
    else if (change > 0)
      fprintf(stderr, PROG ": %u loads in a row without lateness: now %d links at once\n",
              LAB_LINKS_RECOVER_AFTER, st->at_once.allowed);
    if (atomic_load(&st->interrupted) == 0) show_progress(st);
    pthread_mutex_unlock(&st->lock);
  }
}

/* Until every worker has returned, takes the signals of stop: the first interrupts the
 * run, a second exits at once. Returns the first one's number, or 0. */
static int wait_workers(run_state *st, const sigset_t *stop) {
  for (;;) {
    pthread_mutex_lock(&st->lock);
    int running = st->workers_running;
    pthread_mutex_unlock(&st->lock);
    if (running == 0) return atomic_load(&st->interrupted);
    /* Polled: a worker's end is noticed within 100 ms, a signal at once. */
    struct timespec tick = {0, 100 * 1000 * 1000};
    int sig = sigtimedwait(stop, NULL, &tick);
    if (sig <= 0) continue; /* time up, or EINTR */
    if (atomic_load(&st->interrupted) == 0) {
      atomic_store(&st->interrupted, sig);
      continue;
    }
    lab_run_abandon();
    fprintf(stderr, "%s" PROG ": %s again: exiting at once (the next run removes the links left)\n",
            st->progress ? "\n" : "", sig == SIGINT ? "SIGINT" : "SIGTERM");
    _exit(128 + sig);
  }
}

/* ---- options ------------------------------------------------------------------------ */

/* Calls add(item) for each comma-separated item of list, empty items included (they are
 * refused); -1 when one fails, with a copy of it in *bad (the caller frees it). */
static int each_item(const char *list, int (*add)(run_state *, const char *), run_state *st,
                     char **bad) {
  char *copy = strdup(list);
  if (copy == NULL) return -1;
  int rc = 0;
  for (char *item = copy, *next; item != NULL && rc == 0; item = next) {
    next = strchr(item, ',');
    if (next != NULL) *next++ = '\0';
    rc = item[0] == '\0' ? -1 : add(st, item);
    if (rc != 0) *bad = strdup(item);
  }
  free(copy);
  return rc;
}

static int add_config(run_state *st, const char *name) {
  int c = strcmp(name, "all") == 0 ? -2 : lab_config_parse(name);
  if (c == -1) return -1;
  for (int i = (c == -2 ? 0 : c); i <= (c == -2 ? LAB_N_CONFIGS - 1 : c); i++) {
    int dup = 0;
    for (size_t k = 0; k < st->n_configs; k++) dup |= st->configs[k] == i;
    if (!dup) st->configs[st->n_configs++] = i;
  }
  return 0;
}

static int add_tls(run_state *st, const char *name) {
  if (strcmp(name, "off") != 0 && strcmp(name, "on") != 0) return -1;
  int on = strcmp(name, "on") == 0;
  for (size_t i = 0; i < st->n_tls; i++)
    if (st->tls[i] == on) return 0;
  st->tls[st->n_tls++] = on;
  return 0;
}

static char link_profiles[16][16];
static size_t n_link_profiles;
static double loss_values[16], rtt_values[16];
static size_t n_loss_values, n_rtt_values;

/* A profile the link emulator knows (netem_config_profile), at most 16 of them. */
static int add_profile(run_state *st, const char *name) {
  (void)st;
  netem_config probe;
  memset(&probe, 0, sizeof probe);
  if (n_link_profiles == 16 || strlen(name) >= 16 || netem_config_profile(&probe, name) != 0)
    return -1;
  snprintf(link_profiles[n_link_profiles++], 16, "%s", name);
  return 0;
}

static int add_number(double *values, size_t *n, const char *text, double lo, double hi) {
  char *end;
  double v = strtod(text, &end);
  /* Plain decimals: strtod also takes "nan", "inf", hex and leading spaces. */
  if (strspn(text, "0123456789.") != strlen(text)) return -1;
  if (end == text || *end != '\0' || !(v >= lo && v <= hi) || *n == 16) return -1;
  values[(*n)++] = v;
  return 0;
}

static int add_loss(run_state *st, const char *text) {
  (void)st;
  return add_number(loss_values, &n_loss_values, text, 0, 50);
}

static int add_rtt(run_state *st, const char *text) {
  (void)st;
  return add_number(rtt_values, &n_rtt_values, text, 0, 10000);
}

/* The valid values of each option, for its error (cli_option_error's ACCEPTED). */
#define ACCEPT_CONFIGS                                                                             \
  "http1-fcfs, http1-prio, http1-single, spdy-multi, spdy-single, spdy-push, spdy-hint, "          \
  "h2-multi, h2-single, h2-coalesced, h2-push, h2-hint or all, comma-separated"

/* Reads a list option with add(); on a bad item prints the option error and returns 2. */
static int list_option(run_state *st, const char *option, const char *value,
                       int (*add)(run_state *, const char *), const char *accepted) {
  char *bad = NULL;
  if (each_item(value, add, st, &bad) == 0) return 0;
  int rc = cli_option_error(PROG, option, bad != NULL ? bad : value, "%s", accepted);
  free(bad);
  return rc;
}

/* --shard K/N: digits, a slash, digits, 1 <= K <= N; *shard gets K - 1. */
static int parse_shard(const char *text, unsigned *shard, unsigned *n_shards) {
  const char *slash = strchr(text, '/');
  uint64_t k, n;
  if (slash == NULL || slash - text > 10) return -1;
  char part[16];
  memcpy(part, text, (size_t)(slash - text));
  part[slash - text] = '\0';
  if (cli_parse_u64(part, 1, LAB_MATRIX_SHARDS_MAX, &k) != 0 ||
      cli_parse_u64(slash + 1, 1, LAB_MATRIX_SHARDS_MAX, &n) != 0 || k > n)
    return -1;
  *shard = (unsigned)(k - 1);
  *n_shards = (unsigned)n;
  return 0;
}

static char *dir_of(const char *path) {
  char *copy = strdup(path);
  if (copy == NULL) return NULL;
  char *slash = strrchr(copy, '/');
  if (slash != NULL) *slash = '\0';
  return copy;
}

/* speedyd: --speedyd, else next to this binary in a build tree (src/speedy →
 * src/speedyd/speedyd) or an install (bin/speedy → sbin/speedyd), else $PATH. */
static char *find_speedyd(const char *self) {
  char *dir = dir_of(self), *found = NULL;
  static const char *const candidates[] = {"/speedyd/speedyd", "/../sbin/speedyd", "/speedyd"};
  for (size_t i = 0; dir && i < sizeof candidates / sizeof candidates[0] && !found; i++) {
    char *p = NULL;
    if (asprintf(&p, "%s%s", dir, candidates[i]) < 0) break;
    if (access(p, X_OK) == 0)
      found = p;
    else
      free(p);
  }
  free(dir);
  return found ? found : strdup("speedyd");
}

static void usage(void) {
  printf("Usage: speedy lab run [OPTION]... HAR|PLAN|DIR...\n"
         "The page-load experiment: every page through emulated links, replayed by speedyd,\n"
         "loaded by `speedy load`, one JSON line per load appended to the results (resumable:\n"
         "loads already there are skipped). Needs root (network namespaces). SIGINT or\n"
         "SIGTERM stops it cleanly (exit 130 or 143); the same command resumes.\n\n"
         "  -o, --results FILE     results, JSON lines (default lab-results.jsonl)\n"
         "      --work-dir DIR     plans, certificates, per-load logs (default RESULTS.d)\n"
         "  -l, --links LIST       link profiles (default dsl,cable)\n"
         "      --loss LIST        loss in percent (default 0,1)\n"
         "      --rtt LIST         RTTs in ms replacing the profile's (a sweep; default: the "
         "profile's)\n"
         "      --tls LIST         off, on (default off,on)\n"
         "      --client C         speedy (speedy load) or chromium (headless Chromium over the\n"
         "                         DevTools protocol; http1-fcfs, http1-single, and with TLS\n"
         "                         on h2-multi, h2-single, h2-coalesced and h2-hint)\n"
         "      --dns-rtt MS       emulated DNS: the loader waits MS ms before its first\n"
         "                         connection to each host name (0 to 10000; default 0: none)\n"
         "      --hello-padding B  the loader adds B octets (4 to %u) to every TLS ClientHello,\n"
         "                         as much as Chromium's weighs more (docs/lab.md; default 0)\n"
         "      --delayable-limit N  the loader keeps at most N requests for images and scripts\n"
         "                         in flight to servers not known to take priorities, as\n"
         "                         Chromium does (10; default: none)\n"
         "      --chromium-sockets  the loader opens and gives up sockets as Chromium does\n"
         "                         (preconnect, backup attempts, speedy-load(1))\n"
         "      --chromium-headers  the loader sends the request headers Chromium sends\n"
         "                         (client hints, Sec-Fetch-*, speedy-load(1))\n"
         "      --boost-images     with --delayable-limit: the loader stops holding the page's\n"
         "                         image elements once its parser reaches them, as Chromium\n"
         "      --blocking-css     the loader's style sheets hold their document's parser\n"
         "                         until loaded, as Chromium's do (speedy-load(1))\n"
         "      --load-event       the loader's page load time ends where Chromium's load\n"
         "                         event would (not at a fetch()'s last byte; speedy-load(1))\n"
         "      --document-delay MS  the loader asks for a document's references no earlier\n"
         "                         than MS ms after its first byte, as Chromium commits a\n"
         "                         navigation first (about 20; 0 to 10000; default 0)\n"
         "      --frame-delay MS   the loader asks for a frame MS ms later than for other\n"
         "                         references, as Chromium navigates a frame from its\n"
         "                         browser process (about 15; 0 to 10000; default 0)\n"
         "      --request-spacing MS  the loader asks for each request it finds MS ms after\n"
         "                         the one before, as Chromium creates them (about 1; 0 to\n"
         "                         1000; default 0)\n"
         "      --jitter MS        the loader delays each request it finds by a further 0 to\n"
         "                         MS ms, drawn afresh for each repetition, as a browser's\n"
         "                         timing varies between loads (0 to 1000; default 0)\n"
         "  -c, --configs LIST     http1-fcfs, http1-prio, http1-single, spdy-multi, spdy-single,\n"
         "                         spdy-push, spdy-hint, h2-multi, h2-single, h2-coalesced,\n"
         "                         h2-push, h2-hint, or all (default all)\n"
         "  -n, --repetitions N    loads per configuration (default 5)\n"
         "      --lossy-repetitions N  the same on links with loss (default 2 x N)\n"
         "      --graph G          estimated, flat or both, for HAR inputs (default estimated)\n"
         "  -a, --all-pages        every page of each HAR, not only the first\n"
         "  -j, --jobs N           emulated links at once (default 2; fewer when the emulator's\n"
         "                         p99 lateness goes above --lateness, as many again after\n"
         "                         100 loads in a row within it)\n"
         "      --lateness MS      p99 lateness bound (default 1.0)\n"
         "      --tcp PRESET       modern or 2009 (default modern)\n"
         "      --initcwnd N       TCP initial window in segments (default: the preset's)\n"
         "      --queue BYTES      the links' drop-tail queue, suffix k or M (default: one BDP)\n"
         "      --tls-version V    1.2 (full handshake, as in 2012) or 1.3 (default 1.2)\n"
         "      --timeout S        per load (default 120)\n"
         "      --seed N           order of the loads (default: from the clock; recorded)\n"
         "      --speedyd PATH     the replay server (default: next to speedy, else $PATH)\n"
         "      --server-cmd CMD   run CMD (sh -c) in the server namespace instead of speedyd:\n"
         "                         $1 plan, $2 cert chain, $3 key, $4 port, $5 the page's\n"
         "                         --write-site directory (empty without it), $6 the load's\n"
         "                         own directory (for configuration, pid and temporary files)\n"
         "      --write-site DIR   write each page's bodies as plain files, one directory per\n"
         "                         host, under DIR/<page>/ before the loads (for --server-cmd)\n"
         "      --shard K/N        run shard K of N of the matrix (another machine runs another;\n"
         "                         'speedy lab merge' joins their results files)\n"
         "      --dry-run          list the loads that would run, in the results' order\n"
         "  -v, --verbose          one line per load\n"
         "  -h, --help             this help\n",
         IO_TLS_HELLO_PAD_MAX);
}

int lab_run_main(int argc, char **argv) {
  enum {
    O_LOSS = 256,
    O_RTT,
    O_TLS,
    O_LOSSY,
    O_GRAPH,
    O_LATENESS,
    O_TCP,
    O_INITCWND,
    O_QUEUE,
    O_TLS_VERSION,
    O_TIMEOUT,
    O_SEED,
    O_SPEEDYD,
    O_SERVER_CMD,
    O_DRY_RUN,
    O_WORK_DIR,
    O_WRITE_SITE,
    O_DNS_RTT,
    O_HELLO_PADDING,
    O_DELAYABLE_LIMIT,
    O_CHROMIUM_SOCKETS,
    O_CHROMIUM_HEADERS,
    O_BOOST_IMAGES,
    O_BLOCKING_CSS,
    O_LOAD_EVENT,
    O_DOCUMENT_DELAY,
    O_FRAME_DELAY,
    O_REQUEST_SPACING,
    O_JITTER,
    O_SHARD,
    O_CLIENT
  };
  static const struct option long_options[] = {
      {"results", required_argument, NULL, 'o'},
      {"work-dir", required_argument, NULL, O_WORK_DIR},
      {"links", required_argument, NULL, 'l'},
      {"loss", required_argument, NULL, O_LOSS},
      {"rtt", required_argument, NULL, O_RTT},
      {"tls", required_argument, NULL, O_TLS},
      {"dns-rtt", required_argument, NULL, O_DNS_RTT},
      {"hello-padding", required_argument, NULL, O_HELLO_PADDING},
      {"delayable-limit", required_argument, NULL, O_DELAYABLE_LIMIT},
      {"chromium-sockets", no_argument, NULL, O_CHROMIUM_SOCKETS},
      {"chromium-headers", no_argument, NULL, O_CHROMIUM_HEADERS},
      {"boost-images", no_argument, NULL, O_BOOST_IMAGES},
      {"blocking-css", no_argument, NULL, O_BLOCKING_CSS},
      {"load-event", no_argument, NULL, O_LOAD_EVENT},
      {"document-delay", required_argument, NULL, O_DOCUMENT_DELAY},
      {"frame-delay", required_argument, NULL, O_FRAME_DELAY},
      {"request-spacing", required_argument, NULL, O_REQUEST_SPACING},
      {"jitter", required_argument, NULL, O_JITTER},
      {"shard", required_argument, NULL, O_SHARD},
      {"client", required_argument, NULL, O_CLIENT},
      {"configs", required_argument, NULL, 'c'},
      {"repetitions", required_argument, NULL, 'n'},
      {"lossy-repetitions", required_argument, NULL, O_LOSSY},
      {"graph", required_argument, NULL, O_GRAPH},
      {"all-pages", no_argument, NULL, 'a'},
      {"jobs", required_argument, NULL, 'j'},
      {"lateness", required_argument, NULL, O_LATENESS},
      {"tcp", required_argument, NULL, O_TCP},
      {"initcwnd", required_argument, NULL, O_INITCWND},
      {"queue", required_argument, NULL, O_QUEUE},
      {"tls-version", required_argument, NULL, O_TLS_VERSION},
      {"timeout", required_argument, NULL, O_TIMEOUT},
      {"seed", required_argument, NULL, O_SEED},
      {"speedyd", required_argument, NULL, O_SPEEDYD},
      {"server-cmd", required_argument, NULL, O_SERVER_CMD},
      {"write-site", required_argument, NULL, O_WRITE_SITE},
      {"dry-run", no_argument, NULL, O_DRY_RUN},
      {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  static run_state st;
  memset(&st, 0, sizeof st);
  n_link_profiles = n_loss_values = n_rtt_values = 0;
  lab_run_settings *s = &st.settings;
  s->results = "lab-results.jsonl";
  snprintf(s->tcp_preset, sizeof s->tcp_preset, "modern");
  s->tls_version = 12;
  s->timeout_s = 120;
  s->lateness_p99_ms = 1.0;
  s->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
  st.repetitions = 5;
  st.lossy_repetitions = -1;
  st.in.graph_estimated = 1;
  int jobs = 2, dry_run = 0, c;
  const char *speedyd = NULL, *work_dir = NULL, *write_site = NULL;
  char *end;
  optind = 1;
  char profiles_accepted[128];
  snprintf(profiles_accepted, sizeof profiles_accepted, "%s, comma-separated",
           netem_profile_names());
  while ((c = getopt_long(argc, argv, "o:l:c:n:aj:vh", long_options, NULL)) != -1) {
    uint64_t v;
    double d;
    int bad = 0;
    switch (c) {
    case 'o':
      s->results = optarg;
      break;
    case O_WORK_DIR:
      work_dir = optarg;
      break;
    case 'l':
      bad = list_option(&st, "links", optarg, add_profile, profiles_accepted);
      break;
    case O_LOSS:
      bad = list_option(&st, "loss", optarg, add_loss,
                        "loss in percent from 0 to 50, comma-separated (at most 16)");
      break;
    case O_RTT:
      bad = list_option(&st, "rtt", optarg, add_rtt,
                        "round-trip times in ms from 0 to 10000, comma-separated (at most 16)");
      break;
    case O_TLS:
      bad = list_option(&st, "tls", optarg, add_tls, "off or on, comma-separated");
      break;
    case 'c':
      bad = list_option(&st, "configs", optarg, add_config, ACCEPT_CONFIGS);
      break;
    case O_DNS_RTT:
      /* Whole milliseconds, digits only: no sign, no fraction, no unit. */
      if (cli_parse_u64(optarg, 0, 10000, &v) != 0)
        return cli_option_error(PROG, "dns-rtt", optarg, "whole ms from 0 to 10000");
      s->dns_rtt_ms = (unsigned)v;
      break;
    case O_HELLO_PADDING:
      if (cli_parse_u64(optarg, 4, IO_TLS_HELLO_PAD_MAX, &v) != 0)
        return cli_option_error(PROG, "hello-padding", optarg, "octets from 4 to %u",
                                IO_TLS_HELLO_PAD_MAX);
      s->hello_padding = (unsigned)v;
      break;
    case O_DELAYABLE_LIMIT:
      if (cli_parse_u64(optarg, 1, 1000, &v) != 0)
        return cli_option_error(PROG, "delayable-limit", optarg, "requests from 1 to 1000");
      s->delayable_limit = (unsigned)v;
      break;
    case O_CHROMIUM_SOCKETS:
      s->chromium_sockets = 1;
      break;
    case O_CHROMIUM_HEADERS:
      s->chromium_headers = 1;
      break;
    case O_BOOST_IMAGES:
      s->boost_images = 1;
      break;
    case O_BLOCKING_CSS:
      s->blocking_css = 1;
      break;
    case O_LOAD_EVENT:
      s->load_event = 1;
      break;
    case O_DOCUMENT_DELAY:
      if (cli_parse_u64(optarg, 0, 10000, &v) != 0)
        return cli_option_error(PROG, "document-delay", optarg, "whole ms from 0 to 10000");
      s->document_delay_ms = (unsigned)v;
      break;
    case O_FRAME_DELAY:
      if (cli_parse_u64(optarg, 0, 10000, &v) != 0)
        return cli_option_error(PROG, "frame-delay", optarg, "whole ms from 0 to 10000");
      s->frame_delay_ms = (unsigned)v;
      break;
    case O_REQUEST_SPACING:
      if (cli_parse_u64(optarg, 0, 1000, &v) != 0)
        return cli_option_error(PROG, "request-spacing", optarg, "whole ms from 0 to 1000");
      s->request_spacing_ms = (unsigned)v;
      break;
    case O_JITTER:
      if (cli_parse_u64(optarg, 0, 1000, &v) != 0)
        return cli_option_error(PROG, "jitter", optarg, "whole ms from 0 to 1000");
      s->jitter_ms = (unsigned)v;
      break;
    case O_SHARD:
      if (parse_shard(optarg, &st.shard, &st.n_shards) != 0)
        return cli_option_error(PROG, "shard", optarg,
                                "K/N, shard K of N: whole numbers with 1 <= K <= N <= %u",
                                LAB_MATRIX_SHARDS_MAX);
      break;
    case 'n':
    case O_LOSSY:
      if (cli_parse_u64(optarg, 0, 1000, &v) != 0)
        return cli_option_error(PROG, c == 'n' ? "repetitions" : "lossy-repetitions", optarg,
                                "a whole number from 0 to 1000");
      if (c == 'n')
        st.repetitions = (int)v;
      else
        st.lossy_repetitions = (int)v;
      break;
    case 'j':
    case O_INITCWND:
      if (cli_parse_u64(optarg, 1, 1000, &v) != 0)
        return cli_option_error(PROG, c == 'j' ? "jobs" : "initcwnd", optarg,
                                "a whole number from 1 to 1000");
      if (c == 'j')
        jobs = (int)v;
      else
        s->initcwnd = (int)v;
      break;
    case O_GRAPH:
      if (strcmp(optarg, "both") == 0)
        st.in.graph_flat = st.in.graph_estimated = 1;
      else if (strcmp(optarg, "flat") == 0)
        st.in.graph_flat = 1, st.in.graph_estimated = 0;
      else if (strcmp(optarg, "estimated") == 0)
        st.in.graph_flat = 0, st.in.graph_estimated = 1;
      else
        return cli_option_error(PROG, "graph", optarg, "estimated, flat or both");
      break;
    case 'a':
      st.in.all_pages = 1;
      break;
    case O_LATENESS:
    case O_TIMEOUT:
      d = strtod(optarg, &end);
      if (strspn(optarg, "0123456789.") != strlen(optarg) || end == optarg || *end != '\0' ||
          !(d > 0) || d > 86400)
        return cli_option_error(PROG, c == O_LATENESS ? "lateness" : "timeout", optarg,
                                c == O_LATENESS ? "ms above 0, at most 86400"
                                                : "seconds above 0, at most 86400");
      if (c == O_LATENESS)
        s->lateness_p99_ms = d;
      else
        s->timeout_s = d;
      break;
    case O_QUEUE:
      /* As `speedy netem --queue`: at least one packet, at most 1 GB. */
      d = strtod(optarg, &end);
      if (end != optarg && (*end == 'k' || *end == 'M')) d *= *end++ == 'k' ? 1e3 : 1e6;
      if (optarg[0] < '0' || optarg[0] > '9' || end == optarg || *end != '\0' || !(d >= 1500) ||
          d > (double)(1u << 30))
        return cli_option_error(PROG, "queue", optarg,
                                "bytes from 1500 to 1073741824, with an optional suffix k or M");
      s->queue_bytes = (uint64_t)d;
      break;
    case O_TCP:
      if (strcmp(optarg, "modern") != 0 && strcmp(optarg, "2009") != 0)
        return cli_option_error(PROG, "tcp", optarg, "modern or 2009");
      snprintf(s->tcp_preset, sizeof s->tcp_preset, "%s", optarg);
      break;
    case O_TLS_VERSION:
      if (strcmp(optarg, "1.2") == 0)
        s->tls_version = 12;
      else if (strcmp(optarg, "1.3") == 0)
        s->tls_version = 13;
      else
        return cli_option_error(PROG, "tls-version", optarg, "1.2 or 1.3");
      break;
    case O_SEED:
      if (cli_parse_u64(optarg, 0, UINT64_MAX, &s->seed) != 0)
        return cli_option_error(PROG, "seed", optarg, "a whole number from 0 to %llu",
                                (unsigned long long)UINT64_MAX);
      break;
    case O_SPEEDYD:
      speedyd = optarg;
      break;
    case O_SERVER_CMD:
      s->server_cmd = optarg;
      break;
    case O_WRITE_SITE:
      write_site = optarg;
      break;
    case O_CLIENT:
      if (strcmp(optarg, "speedy") != 0 && strcmp(optarg, "chromium") != 0)
        return cli_option_error(PROG, "client", optarg, "speedy or chromium");
      s->chromium = strcmp(optarg, "chromium") == 0;
      break;
    case O_DRY_RUN:
      dry_run = 1;
      break;
    case 'v':
      s->verbose = 1;
      break;
    case 'h':
      usage();
      return 0;
    default:
      return 2;
    }
    if (bad) return bad;
  }
  if (optind >= argc) {
    fprintf(stderr, PROG ": no pages (HAR files, plans or directories; try '" PROG " --help')\n");
    return 2;
  }
  if (n_link_profiles == 0) add_profile(&st, "dsl"), add_profile(&st, "cable");
  if (n_loss_values == 0) loss_values[n_loss_values++] = 0, loss_values[n_loss_values++] = 1;
  if (st.n_tls == 0) st.tls[0] = 0, st.tls[1] = 1, st.n_tls = 2;
  if (s->chromium && s->hello_padding > 0)
    return cli_usage_error(PROG, "--hello-padding is the loader's: Chromium's ClientHello is "
                                 "its own (leave it out with --client chromium)");
  if (s->chromium && s->delayable_limit > 0)
    return cli_usage_error(PROG, "--delayable-limit is the loader's: Chromium schedules its "
                                 "own requests (leave it out with --client chromium)");
  if (s->chromium && s->chromium_sockets)
    return cli_usage_error(PROG, "--chromium-sockets is the loader's: Chromium opens its own "
                                 "(leave it out with --client chromium)");
  if (s->chromium && s->chromium_headers)
    return cli_usage_error(PROG, "--chromium-headers is the loader's: Chromium sends its own "
                                 "(leave it out with --client chromium)");
  if (s->chromium && s->boost_images)
    return cli_usage_error(PROG, "--boost-images is the loader's: Chromium schedules its own "
                                 "requests (leave it out with --client chromium)");
  if (s->chromium && s->blocking_css)
    return cli_usage_error(PROG, "--blocking-css is the loader's: Chromium's parser waits by "
                                 "itself (leave it out with --client chromium)");
  if (s->chromium && s->load_event)
    return cli_usage_error(PROG, "--load-event is the loader's: Chromium's page load time is its "
                                 "load event already (leave it out with --client chromium)");
  if (s->chromium && s->document_delay_ms > 0)
    return cli_usage_error(PROG, "--document-delay is the loader's: Chromium's navigations take "
                                 "their own time (leave it out with --client chromium)");
  if (s->chromium && s->frame_delay_ms > 0)
    return cli_usage_error(PROG, "--frame-delay is the loader's: Chromium's frames take their "
                                 "own time (leave it out with --client chromium)");
  if (s->chromium && s->request_spacing_ms > 0)
    return cli_usage_error(PROG, "--request-spacing is the loader's: Chromium creates its "
                                 "requests at its own pace (leave it out with --client chromium)");
  if (s->chromium && s->jitter_ms > 0)
    return cli_usage_error(PROG, "--jitter is the loader's: Chromium's timing varies by itself "
                                 "(leave it out with --client chromium)");
  if (s->boost_images && s->delayable_limit == 0)
    return cli_usage_error(PROG, "--boost-images goes with --delayable-limit");
  if (s->chromium) {
    /* The browser's HTTP/1.1 and HTTP/2 over TLS: no SPDY (dropped long ago), no push
     * (removed in Chrome 106), and its own request order. */
    if (st.n_configs == 0) add_config(&st, "http1-fcfs"), add_config(&st, "http1-single");
    int h2 = 0;
    for (size_t k = 0; k < st.n_configs; k++) {
      lab_config config = (lab_config)st.configs[k];
      if (config != LAB_HTTP1_FCFS && config != LAB_HTTP1_SINGLE && config != LAB_H2_MULTI &&
          config != LAB_H2_SINGLE && config != LAB_H2_COALESCED && config != LAB_H2_HINT)
        return cli_option_error(PROG, "configs", lab_config_name(config),
                                "http1-fcfs, http1-single, h2-multi, h2-single, h2-coalesced or "
                                "h2-hint with --client chromium (the browser has no SPDY and no "
                                "push)");
      h2 |= lab_config_is_h2(config);
    }
    for (size_t k = 0; h2 && k < st.n_tls; k++)
      if (!st.tls[k])
        return cli_option_error(PROG, "tls", "off",
                                "on for HTTP/2 configurations with --client "
                                "chromium (the browser speaks HTTP/2 over TLS "
                                "only)");
    s->node_path = "node";
    s->driver_path = SPEEDY_LAB_CHROMIUM_DRIVER;
    s->chromium_path = "/usr/bin/chromium";
  }
  if (st.n_configs == 0) add_config(&st, "all");
  if (st.lossy_repetitions < 0) st.lossy_repetitions = 2 * st.repetitions;
  for (size_t p = 0; p < n_link_profiles; p++)
    for (size_t r = 0; r < (n_rtt_values ? n_rtt_values : 1); r++)
      for (size_t l = 0; l < n_loss_values && st.n_links < 64; l++) {
        lab_run_link *link = &st.links[st.n_links++];
        memcpy(link->profile, link_profiles[p], sizeof link->profile);
        link->rtt_ms = n_rtt_values ? rtt_values[r] : -1;
        link->loss = loss_values[l] / 100;
      }
  /* Work directory. */
  char *work = NULL;
  if (work_dir != NULL)
    work = strdup(work_dir);
  else if (asprintf(&work, "%s.d", s->results) < 0)
    work = NULL;
  char sub[4200];
  if (work == NULL || (mkdir(work, 0777) != 0 && errno != EEXIST)) {
    fprintf(stderr, PROG ": cannot create the work directory %s: %s\n", work ? work : "",
            strerror(errno));
    free(work);
    return 1;
  }
  char *work_abs = realpath(work, NULL);
  free(work);
  s->work_dir = work_abs;
  snprintf(sub, sizeof sub, "%s/plans", work_abs);
  mkdir(sub, 0777);
  int rc = 0;
  char self[PATH_MAX];
  char *speedyd_path = NULL;
  /* Every input is read before anything runs: one that cannot be used stops the run. */
  st.in.work_dir = work_abs;
  for (int i = optind; i < argc; i++)
    if (lab_run_add_input(&st.in, argv[i]) != 0) rc = 1;
  if (st.in.n_unusable > 0 || rc != 0) {
    fprintf(stderr, PROG ": %zu input%s could not be used; nothing run\n",
            st.in.n_unusable ? st.in.n_unusable : 1, st.in.n_unusable > 1 ? "s" : "");
    rc = 1;
    goto out;
  }
  if (make_matrix(&st) != 0) {
    fprintf(stderr, PROG ": nothing run\n");
    rc = 1;
    goto out;
  }
  for (size_t i = 0; i < st.in.n_skips; i++)
    fprintf(stderr, PROG ": %s: %s skipped: %s\n", st.in.skips[i].source, st.in.skips[i].page,
            st.in.skips[i].reason);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  self[n > 0 ? n : 0] = '\0';
  speedyd_path = speedyd ? strdup(speedyd) : find_speedyd(self);
  s->speedy_path = self;
  s->speedyd_path = speedyd_path;
  if (read_done_keys(s->results) != 0) {
    fprintf(stderr, PROG ": cannot read %s: %s\n", s->results, strerror(errno));
    rc = 1;
    goto out;
  }
  size_t skipped, in_shard;
  if (build_jobs(&st, &in_shard, &skipped) != 0) {
    fprintf(stderr, PROG ": out of memory\n");
    rc = 1;
    goto out;
  }
  char shard_text[128] = "";
  if (st.n_shards > 0)
    snprintf(shard_text, sizeof shard_text, "; shard %u/%u holds %zu of the matrix's %zu loads",
             st.shard + 1, st.n_shards, in_shard, lab_matrix_n_loads(&st.matrix));
  if (dry_run) {
    /* In the results' order, which the run puts them in when it ends. */
    for (size_t i = 0; i < st.n_jobs; i++) printf("%s\n", st.jobs[i].key);
    fprintf(stderr, PROG ": %zu loads to run, %zu already in %s (seed %llu)%s\n", st.n_jobs,
            skipped, s->results, (unsigned long long)s->seed, shard_text);
    goto out;
  }
  /* A run with every load in the results already needs no link (and no root): it still
   * writes what is missing of the matrix line and the skipped pages, and puts the file in
   * order. */
  if (st.n_jobs > 0 && geteuid() != 0) {
    fprintf(stderr, PROG ": needs root for the emulated links' network namespaces\n");
    rc = 1;
    goto out;
  }
  shuffle_jobs(&st);
  /* The matrix line first, once (not for a matrix of no loads: `-n 0` writes sites only);
   * then the pages not replayed (those of this shard), one line each, once, for the report
   * to count. */
  char header_key[64];
  lab_matrix_header_key(&st.matrix, header_key, sizeof header_key);
  int want_header = !is_done(header_key) && lab_matrix_n_loads(&st.matrix) > 0;
  char *header = want_header ? lab_matrix_header(&st.matrix) : NULL;
  if (want_header && (header == NULL || lab_run_append(s, header) != 0)) {
    fprintf(stderr, PROG ": cannot append to %s: %s\n", s->results, strerror(errno));
    free(header);
    rc = 1;
    goto out;
  }
  free(header);
  for (size_t i = 0; i < st.in.n_skips; i++) {
    if (is_done(st.in.skips[i].key) || !skip_in_shard(&st, &st.in.skips[i])) continue;
    char *line = lab_run_skip_line(&st.in.skips[i]);
    if (line == NULL || lab_run_append(s, line) != 0) {
      fprintf(stderr, PROG ": cannot append to %s: %s\n", s->results, strerror(errno));
      free(line);
      rc = 1;
      goto out;
    }
    free(line);
  }
  /* Sites, once per run and before any load (also when every load is done already: the
   * files are what a resumed run's server command will serve). */
  if (write_site != NULL && write_sites(&st, write_site) != 0) {
    rc = 1;
    goto out;
  }
  /* Certificates, once per run: a CA chain and a leaf per page (TLS runs only). */
  int any_tls = 0;
  for (size_t t = 0; t < st.n_tls; t++) any_tls |= st.tls[t];
  snprintf(sub, sizeof sub, "%s/certs", work_abs);
  for (size_t p = 0; any_tls && p < st.in.n_pages && st.n_jobs > 0; p++) {
    char err[512];
    json_t *plan = json_load_file(st.in.pages[p].plan_file, 0, NULL);
    if (plan == NULL || lab_run_certs(sub, st.in.pages[p].cert_dir, plan, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": %s\n", plan ? err : "cannot reread a plan");
      json_decref(plan);
      rc = 1;
      goto out;
    }
    json_decref(plan);
  }
  fprintf(stderr,
          PROG ": %zu loads (%zu already in %s), %zu pages, order seed %llu, %d link%s at "
               "once%s\n",
          st.n_jobs, skipped, s->results, st.in.n_pages, (unsigned long long)s->seed, jobs,
          jobs == 1 ? "" : "s", shard_text);
  /* Links of a run that could not clean up (SIGKILL, a crash, a second signal): removed
   * once here, not by the first netem_start of every worker at the same time. */
  int stale = st.n_jobs > 0 ? netem_cleanup_stale() : 0;
  if (stale > 0)
    fprintf(stderr, PROG ": removed %d network namespace%s left by a run that was killed\n", stale,
            stale == 1 ? "" : "s");
  pthread_mutex_init(&st.lock, NULL);
  st.at_once = (lab_links){.allowed = jobs, .max = jobs};
  st.started_ms = now_ms();
  st.progress = isatty(STDERR_FILENO) && !s->verbose;
  atomic_init(&st.interrupted, 0);
  s->interrupted = &st.interrupted;
  /* Blocked before the workers start, so that they and what they fork inherit the mask.
   * A signal ignored on entry (a background job of a script: SIGINT) stays ignored. */
  sigset_t stop, old_mask;
  sigemptyset(&stop);
  static const int stop_signals[] = {SIGINT, SIGTERM};
  for (size_t i = 0; i < sizeof stop_signals / sizeof stop_signals[0]; i++) {
    struct sigaction current;
    if (sigaction(stop_signals[i], NULL, &current) == 0 && current.sa_handler != SIG_IGN)
      sigaddset(&stop, stop_signals[i]);
  }
  pthread_sigmask(SIG_BLOCK, &stop, &old_mask);
  pthread_t threads[1000];
  worker_arg args[1000];
  int started = 0;
  for (int i = 0; i < jobs && (size_t)i < st.n_jobs; i++) {
    args[i] = (worker_arg){&st, i};
    pthread_mutex_lock(&st.lock);
    if (pthread_create(&threads[i], NULL, worker, &args[i]) == 0) {
      started++;
      st.workers_running++;
    }
    pthread_mutex_unlock(&st.lock);
  }
  int interrupted = wait_workers(&st, &stop);
  for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
  /* A signal that came after the last load ended still asks to stop: it is not lost
   * when the mask is restored, and it is not a reason to die without the summary. */
  struct timespec no_wait = {0, 0};
  int late_signal;
  while ((late_signal = sigtimedwait(&stop, NULL, &no_wait)) > 0)
    if (interrupted == 0) interrupted = late_signal;
  pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
  s->interrupted = NULL;
  if (st.progress) fputc('\n', stderr);
  double wall = (now_ms() - st.started_ms) / 1000;
  if (interrupted != 0) {
    size_t left = st.n_jobs - st.done;
    fprintf(stderr,
            PROG ": %s: stopped after %zu of %zu loads (%zu aborted and not recorded, %zu "
                 "could not run); %zu left: run the same command again to resume\n",
            interrupted == SIGINT ? "SIGINT" : "SIGTERM", st.done, st.n_jobs, st.aborted, st.failed,
            left);
    rc = 128 + interrupted;
    goto out;
  }
  fprintf(stderr,
          PROG ": %zu loads done, %zu could not run, %zu on links over the lateness "
               "bound; %.0f s\n",
          st.done, st.failed, st.invalid_lateness, wall);
  if (st.failed > 0) rc = 1;
  /* The file in the matrix's order: the same whatever order the loads ended in, and what
   * `speedy lab merge` writes from the shards' files. */
  char err[512];
  if (lab_matrix_n_loads(&st.matrix) > 0 &&
      lab_matrix_order_file(&st.matrix, s->results, err, sizeof err) != 0) {
    fprintf(stderr, PROG ": %s\n", err);
    rc = 1;
  }
out:
  lab_matrix_free(&st.matrix);
  lab_run_inputs_free(&st.in);
  free(st.jobs);
  for (size_t i = 0; i < n_done_keys; i++) free(done_keys[i]);
  free(done_keys);
  done_keys = NULL;
  n_done_keys = 0;
  free(speedyd_path);
  free(work_abs);
  return rc;
}
