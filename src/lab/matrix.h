/* matrix.h — a `speedy lab run` matrix as a value (matrix.c): its loads in their canonical
 * order, the line that names it at the head of a results file (speedy-lab-matrix/1), the
 * shard each load belongs to, and a results file put in the canonical order. run.c makes
 * one from its options and inputs; merge.c reads one back from a results file.
 *
 * The canonical order of a results file (docs/lab-formats.md): the matrix line; the lines
 * of the skipped pages, by key; the loads by page id (byte order), link (profile, RTT,
 * loss), TLS (off first), configuration (lab_config order) and repetition; then any other
 * line in the order it came. It does not depend on the order of the inputs or of the
 * values in an option, so every machine given the same matrix lists it the same way.
 */
#ifndef SPEEDY_LAB_MATRIX_H
#define SPEEDY_LAB_MATRIX_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "run.h"

#define LAB_MATRIX_FORMAT "speedy-lab-matrix/1"
#define LAB_MATRIX_SHARDS_MAX 10000u

typedef struct lab_matrix {
  char **pages; /* page ids ("source#page (graph)"), owned */
  size_t n_pages;
  char **skipped; /* keys of the skipped pages' lines, owned */
  size_t n_skipped;
  lab_run_link *links; /* owned */
  size_t n_links;
  int tls[2];
  size_t n_tls;
  lab_config configs[LAB_N_CONFIGS];
  size_t n_configs;
  int repetitions, lossy_repetitions; /* per load on loss-free and lossy links */
  unsigned dns_rtt_ms;                /* in the keys when not 0 */
  int chromium;                       /* --client chromium: "|client=chromium" in the keys */
  json_t *settings; /* what else changes a load but is not in its key (owned), or NULL */
} lab_matrix;

/* Adds a page id, a skipped page's key or a link (copied). Return 0 or -1 (out of memory). */
int lab_matrix_add_page(lab_matrix *m, const char *id);
int lab_matrix_add_skip(lab_matrix *m, const char *key);
int lab_matrix_add_link(lab_matrix *m, const lab_run_link *link);

/* Puts every dimension in its canonical order and drops repeated values. */
void lab_matrix_sort(lab_matrix *m);

void lab_matrix_free(lab_matrix *m);

/* The loads: repetitions on loss-free links, lossy_repetitions on lossy ones. */
size_t lab_matrix_n_loads(const lab_matrix *m);

/* Every load in the canonical order, its key filled in (jobs index m's pages and links).
 * Allocated; the caller frees *jobs. Returns 0 or -1 (out of memory). */
int lab_matrix_jobs(const lab_matrix *m, lab_run_job **jobs, size_t *n);

/* A load's key: "PAGE|LINK|loss=L|tls=on[|dns=MS]|CONFIG|rep=R" (docs/lab.md, "Run"). */
void lab_matrix_key(const lab_matrix *m, const lab_run_job *job, char *out, size_t size);

/* The shard, 0 to n_shards - 1, of a load or of a skipped page's key. A load's shard comes
 * from its key without the configuration: the configurations of one repetition of a page
 * on one link run on the same machine, so that a machine's speed never sits between the
 * configurations compared. Depends on nothing else, so it is the same on every machine
 * and stays when the matrix grows. */
unsigned lab_matrix_shard_of_job(const lab_matrix *m, const lab_run_job *job, unsigned n_shards);
unsigned lab_matrix_shard_of(const char *unit, unsigned n_shards);

/* The matrix line (no newline), allocated; NULL when out of memory. Its key is
 * "matrix|<16 hex digits of its content>", so that one results file used with other
 * options gets a line of each. */
char *lab_matrix_header(const lab_matrix *m);
/* That key into out. */
void lab_matrix_header_key(const lab_matrix *m, char *out, size_t size);

/* Reads a matrix line back. Returns 0, or -1 with the reason in err (m is then freed). */
int lab_matrix_parse(const json_t *line, lab_matrix *m, char *err, size_t err_size);

/* The canonical rank of every key of m: the matrix line 0, the skipped pages from 1, then
 * the loads. */
typedef struct lab_matrix_index {
  struct lab_matrix_rank {
    char *key;
    size_t rank;
  } * keys; /* by key */
  size_t n;
} lab_matrix_index;

int lab_matrix_index_make(const lab_matrix *m, lab_matrix_index *index);
/* The rank of key, or SIZE_MAX when it is none of the matrix's. */
size_t lab_matrix_index_rank(const lab_matrix_index *index, const char *key);
void lab_matrix_index_free(lab_matrix_index *index);

/* One line of a results file, as read: its bytes (with the newline, when it had one) and
 * what it says of itself (NULL when it is not a JSON object with those strings). */
typedef struct lab_results_line {
  char *text;
  size_t len;
  size_t lineno; /* from 1 */
  int is_json;   /* the line is JSON */
  char *format, *key;
  json_t *json; /* a matrix line, parsed; NULL for the others (a full run's loads would
                 * take several times their text as JSON values) */
} lab_results_line;

/* Reads every line of f. Returns 0, or -1 (out of memory, read error: errno). */
int lab_results_read(FILE *f, lab_results_line **lines, size_t *n);
void lab_results_free(lab_results_line *lines, size_t n);

/* Puts the results file in m's canonical order, in place: under an exclusive flock (which
 * lab_run_append takes too), through a new file renamed over it, so that a crash leaves
 * either order whole. Every line is kept, byte for byte (a last line without its newline
 * gets one if it moves). Nothing is written when the order is right already or the file
 * does not exist. Returns 0, or -1 with the reason in err. */
int lab_matrix_order_file(const lab_matrix *m, const char *file, char *err, size_t err_size);

/* The order of lines by (rank, then place in the file): order[] gets their indices. */
void lab_matrix_order_lines(const size_t *ranks, size_t n, size_t *order);

#endif
