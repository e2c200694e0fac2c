/* run.h — `speedy lab run`, the experiment: the matrix of pages × links × loss × TLS ×
 * configurations × repetitions, each load through its own emulated link (src/netem), the
 * replay server on the server side and the loader on the client side. Internal to
 * run.c (matrix, resume, order, workers, progress) and run_load.c (one load).
 */
#ifndef SPEEDY_LAB_RUN_H
#define SPEEDY_LAB_RUN_H

#include <jansson.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bound.h"

/* The configurations of the original experiment, then HTTP/2's (docs/lab.md, "Run"), in
 * the canonical order of a matrix. */
typedef enum lab_config {
  LAB_HTTP1_FCFS = 0,
  LAB_HTTP1_PRIO,
  LAB_HTTP1_SINGLE,
  LAB_SPDY_MULTI,
  LAB_SPDY_SINGLE,
  LAB_SPDY_PUSH,
  LAB_SPDY_HINT,
  LAB_H2_MULTI,
  LAB_H2_SINGLE,
  LAB_H2_COALESCED,
  LAB_H2_PUSH,
  LAB_H2_HINT,
  LAB_N_CONFIGS
} lab_config;

/* "http1-fcfs", ... */
const char *lab_config_name(lab_config config);
/* The configuration of that name, or -1. */
int lab_config_parse(const char *name);
int lab_config_is_single(lab_config config);
/* SPDY or HTTP/2 (not HTTP/1.1). */
int lab_config_is_spdy(lab_config config);
int lab_config_is_h2(lab_config config);
/* The server pushes the document's children (spdy-push, h2-push) / hints them (spdy-hint:
 * X-Subresources; h2-hint: 103 Early Hints and Link rel=preload too). */
int lab_config_pushes(lab_config config);
int lab_config_hints(lab_config config);

typedef struct lab_run_page {
  char *id;         /* "source#page (graph)": the page's name in results */
  char *plan_file;  /* the plan the server and the loader read */
  char *cert_dir;   /* the page's leaf certificate (TLS runs) */
  char *manifest;   /* push manifest for spdy-push / spdy-hint */
  char *site_dir;   /* --write-site: the page's plain-file site (DIR/<name>), else NULL */
  json_t *left_out; /* the plan's "left_out": entries not replayed, by reason (owned) */
  lab_plan_summary summary;
  size_t n_hosts;
  /* h2-coalesced: per host, its server address's index (hosts the recording saw at one
   * address share one: lab_plan_address_groups), and how many addresses. */
  unsigned *address_group;
  size_t n_address_groups;
} lab_run_page;

/* A page of a HAR that is not replayed, and why. The run appends it to the results as a
 * line of its own, {"format": "speedy-lab-skip/1", "key", "source", "page", "reason"},
 * once (its key), so that the report counts every page left out. */
#define LAB_RUN_SKIP_FORMAT "speedy-lab-skip/1"
typedef struct lab_run_skip {
  char *key;    /* "<source>#page N|skipped" */
  char *source; /* the HAR's file name */
  char *page;   /* "page N" (1-based, in the recording's page order) */
  char *reason;
} lab_run_skip;

/* The pages a run replays and skips (run_input.c). Set work_dir and the selection, then
 * add inputs; free with lab_run_inputs_free. */
typedef struct lab_run_inputs {
  const char *work_dir; /* plans go to work_dir/plans, which must exist */
  int all_pages, graph_flat, graph_estimated;
  lab_run_page *pages;
  size_t n_pages;
  lab_run_skip *skips;
  size_t n_skips;
  size_t n_unusable; /* inputs that could not be read as a HAR or a plan */
} lab_run_inputs;

/* Adds a HAR, a plan, or a directory's *.har and *.json (in name order). Returns 0, or -1
 * after a message on stderr (n_unusable counts unreadable inputs). */
int lab_run_add_input(lab_run_inputs *in, const char *path);
void lab_run_inputs_free(lab_run_inputs *in);

/* The results line of a skipped page (allocated; NULL when out of memory). */
char *lab_run_skip_line(const lab_run_skip *skip);

typedef struct lab_run_link {
  char profile[16];
  double rtt_ms; /* < 0: the profile's */
  double loss;   /* 0..1 */
} lab_run_link;

typedef struct lab_run_settings {
  const char *results;      /* results file (JSON lines) */
  const char *speedy_path;  /* the loader's binary (`speedy`) */
  const char *speedyd_path; /* the replay server */
  const char *server_cmd;   /* instead of speedyd: sh -c CMD in the server namespace */
  const char *work_dir;     /* plans, certificates, manifests, per-load files */
  char tcp_preset[16];
  int initcwnd;               /* 0: the preset's */
  uint64_t queue_bytes;       /* drop-tail queue of both directions; 0: the link's (one BDP) */
  int tls_version;            /* 12 or 13 */
  unsigned dns_rtt_ms;        /* the loader's --dns-rtt (0: no lookups); in the key when not 0 */
  unsigned hello_padding;     /* the loader's --hello-padding (0: none); in settings when not 0 */
  unsigned delayable_limit;   /* the loader's --delayable-limit (0: none); in settings when not 0 */
  int chromium_sockets;       /* the loader's --chromium-sockets; in settings when set */
  int chromium_headers;       /* the loader's --chromium-headers; in settings when set */
  int boost_images;           /* the loader's --boost-images; in settings when set */
  int blocking_css;           /* the loader's --blocking-css; in settings when set */
  int load_event;             /* the loader's --load-event; in settings when set */
  unsigned document_delay_ms; /* the loader's --document-delay (0: none); in settings when not 0 */
  unsigned frame_delay_ms;    /* the loader's --frame-delay (0: none); in settings when not 0 */
  unsigned request_spacing_ms; /* --request-spacing (0: none); in settings when not 0 */
  unsigned jitter_ms;          /* the loader's --jitter (0: none); in settings when not 0 */
  double timeout_s;            /* per load */
  double lateness_p99_ms;      /* a link above this is flagged */
  uint64_t seed;               /* order of the loads; recorded */
  int verbose;
  /* --client chromium: the driver (node DRIVER) loads each page in headless Chromium. */
  int chromium;
  const char *node_path;     /* "node" */
  const char *driver_path;   /* src/lab/chromium/driver.js */
  const char *chromium_path; /* /usr/bin/chromium */
  /* Set (to the signal number) by the run on SIGINT or SIGTERM; a load in progress sees
   * it within a few ms and ends (lab_run_load). NULL: never set. */
  const atomic_int *interrupted;
} lab_run_settings;

typedef struct lab_run_job {
  size_t page, link;
  int tls;
  lab_config config;
  int repetition;
  char key[600];
} lab_run_job;

/* `speedy lab run`: argv[0] is "run". Returns the exit status. */
int lab_run_main(int argc, char **argv);

/* lab_run_load's result when settings->interrupted stopped the load. */
#define LAB_RUN_ABORTED 1

/* Runs one load and appends its line to the results (run_load calls lab_run_append).
 * Returns 0 when a result line was written, -1 when the load could not be run (error on
 * stderr; nothing written, so a resumed run tries again), LAB_RUN_ABORTED when
 * settings->interrupted was set before the loader ended by itself (its processes were
 * killed and its link torn down as after any load; nothing written, no message). A loader
 * that had ended by itself still gets its line. *lateness_exceeded is set when the link's
 * p99 lateness was above the bound. */
int lab_run_load(const lab_run_settings *settings, const lab_run_page *page,
                 const lab_run_link *link, const lab_run_job *job, int *lateness_exceeded);

/* How many emulated links run at once (-j): one fewer after a load during which the
 * emulator fell behind its model (p99 lateness over --lateness), one more again, up to -j,
 * after LAB_LINKS_RECOVER_AFTER loads in a row without: a moment of other work on the
 * machine does not slow the rest of a run of hours, and a machine too busy for -j links
 * flags at most one load in that many. */
#define LAB_LINKS_RECOVER_AFTER 100u
typedef struct lab_links {
  int allowed, max; /* 1 <= allowed <= max */
  unsigned clean;   /* loads in a row without lateness since the last change */
} lab_links;

/* Counts a finished load (late: its link was flagged). Returns -1 when it took a link
 * away, +1 when it gave one back, else 0. */
int lab_links_count_load(lab_links *links, int late);

/* Appends one line to the results file with one write(), atomically with respect to
 * other workers, under the file's flock (lab_matrix_order_file replaces the file under
 * it: an append waiting meanwhile goes to the new file). */
int lab_run_append(const lab_run_settings *settings, const char *line);

/* For a second interruption, just before _exit(): SIGKILLs the process group of every
 * server and loader in progress (the links' namespaces stay: the next run removes them)
 * and waits up to 2 s for an append in progress, keeping the results file's lock so that
 * no line is begun after it. Not for a signal handler (it takes locks). */
void lab_run_abandon(void);

/* Makes root and intermediate CA under dir once (kept when present) and a leaf with the
 * page's host names under page_dir. Returns 0 or -1 with a reason in err. */
int lab_run_certs(const char *dir, const char *page_dir, const json_t *plan, char *err,
                  size_t err_size);

/* Writes the push manifest of a plan: its document's children on the document's host.
 * Returns 0 or -1. */
int lab_run_manifest(const json_t *plan, const char *file);

#endif
