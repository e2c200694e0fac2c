/* merge.c — `speedy lab merge OUT IN...` (merge.h): shards' results files joined into the
 * file one run of the whole matrix writes.
 *
 * Every input must carry the same speedy-lab-matrix/1 line, byte for byte (the shards were
 * given the same pages and options); that line says which loads and skipped pages the
 * matrix has. Each of them must be in exactly one input, and every other line must be one
 * of them: a merge never drops, repeats or invents a line. The output is the matrix line,
 * then the lines in the matrix's order (matrix.h) — the order `speedy lab run` leaves its
 * own results file in — so it is the same bytes as one run's file that holds those lines.
 */
#define _GNU_SOURCE
#include "merge.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lab.h"
#include "matrix.h"

#define PROG "speedy lab merge"

/* Problems of one kind beyond this many are counted, not listed. */
#define LIST_MAX 10

typedef struct merge_input {
  const char *name;
  lab_results_line *lines;
  size_t n;
  size_t header; /* index of its matrix line */
} merge_input;

/* s with control bytes and non-ASCII as \xNN, for a terminal (keys come from files). */
static const char *shown(const char *s, char *buf, size_t size) {
  size_t o = 0;
  for (; s != NULL && *s != '\0' && o + 5 < size; s++) {
    unsigned char c = (unsigned char)*s;
    if (c < 0x20 || c >= 0x7f)
      o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
    else
      buf[o++] = (char)c;
  }
  buf[o] = '\0';
  return buf;
}

/* A problem, counted per kind; listed while fewer than LIST_MAX of its kind were. */
typedef struct problems {
  FILE *out;
  size_t total, kind_count;
} problems;

static void problem_kind(problems *p) { p->kind_count = 0; }

static void problem(problems *p, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void problem(problems *p, const char *format, ...) {
  p->total++;
  if (p->kind_count++ >= LIST_MAX) return;
  va_list ap;
  va_start(ap, format);
  fputs(PROG ": ", p->out);
  vfprintf(p->out, format, ap);
  fputc('\n', p->out);
  va_end(ap);
}

static void problem_kind_end(problems *p, const char *what) {
  if (p->kind_count > LIST_MAX)
    fprintf(p->out, PROG ": ... and %zu more %s\n", p->kind_count - LIST_MAX, what);
}

/* "a value" as shown in a message: short values whole, arrays by their size. */
static void value_text(const json_t *v, char *out, size_t size) {
  char *text = v != NULL ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
  if (v == NULL)
    snprintf(out, size, "absent");
  else if (text != NULL && strlen(text) <= 40)
    shown(text, out, size);
  else if (json_is_array(v))
    snprintf(out, size, "%zu items", json_array_size(v));
  else
    snprintf(out, size, "another value");
  free(text);
}

/* Appends to list the fields of a and b that differ ("settings.queue_bytes (0 in A, ...)"). */
static void differences(const json_t *a, const json_t *b, const char *prefix, const char *name_a,
                        const char *name_b, char *list, size_t size) {
  const char *field;
  const json_t *va;
  for (int pass = 0; pass < 2; pass++) {
    const json_t *from = pass == 0 ? a : b, *other = pass == 0 ? b : a;
    json_object_foreach((json_t *)from, field, va) {
      const json_t *vb = json_object_get(other, field);
      if (strcmp(field, "key") == 0 || (pass == 1 && vb != NULL) || json_equal(va, vb)) continue;
      if (json_is_object(va) && json_is_object(vb)) {
        char deeper[128];
        snprintf(deeper, sizeof deeper, "%s%s.", prefix, field);
        differences(va, vb, deeper, name_a, name_b, list, size);
        continue;
      }
      char text_a[128], text_b[128], item[512];
      value_text(pass == 0 ? va : vb, text_a, sizeof text_a);
      value_text(pass == 0 ? vb : va, text_b, sizeof text_b);
      snprintf(item, sizeof item, "%s%s%s (%s in %s, %s in %s)", list[0] ? "; " : "", prefix, field,
               text_a, name_a, text_b, name_b);
      strncat(list, item, size - strlen(list) - 1);
    }
  }
}

/* Reads every input and finds its matrix line. */
static void read_inputs(merge_input *in, size_t n, problems *p) {
  char buf[2][600];
  problem_kind(p);
  for (size_t i = 0; i < n; i++) {
    FILE *f = fopen(in[i].name, "r");
    if (f == NULL || lab_results_read(f, &in[i].lines, &in[i].n) != 0) {
      problem(p, "cannot read %s: %s", shown(in[i].name, buf[0], sizeof buf[0]), strerror(errno));
      if (f != NULL) fclose(f);
      continue;
    }
    fclose(f);
    size_t headers = 0;
    for (size_t k = 0; k < in[i].n; k++) {
      const char *format = in[i].lines[k].format;
      if (format == NULL || strcmp(format, LAB_MATRIX_FORMAT) != 0) continue;
      if (headers++ == 0)
        in[i].header = k;
      else
        problem(p,
                "%s: a second matrix line at line %zu (the first is at line %zu): the file "
                "holds runs with other options; merge the shards' own files",
                shown(in[i].name, buf[0], sizeof buf[0]), in[i].lines[k].lineno,
                in[i].lines[in[i].header].lineno);
    }
    if (headers == 0)
      problem(p,
              "%s: no " LAB_MATRIX_FORMAT " line: not the results of a `speedy lab run` "
              "that writes one",
              shown(in[i].name, buf[0], sizeof buf[0]));
  }
}

/* Do the inputs' matrix lines agree (the first's is the reference)? */
static void same_matrix(const merge_input *in, size_t n, problems *p) {
  char buf[2][600];
  const lab_results_line *ref = &in[0].lines[in[0].header];
  size_t ref_len = ref->len - (ref->text[ref->len - 1] == '\n');
  problem_kind(p);
  for (size_t i = 1; i < n; i++) {
    const lab_results_line *h = &in[i].lines[in[i].header];
    size_t len = h->len - (h->text[h->len - 1] == '\n');
    if (len == ref_len && memcmp(h->text, ref->text, len) == 0) continue;
    char list[2048] = "";
    shown(in[0].name, buf[0], sizeof buf[0]);
    shown(in[i].name, buf[1], sizeof buf[1]);
    differences(ref->json, h->json, "", buf[0], buf[1], list, sizeof list);
    problem(p, "%s and %s are not shards of one matrix: %s", buf[0], buf[1],
            list[0] ? list : "their matrix lines differ");
  }
}

/* Writes the matrix line, then each rank's line. Returns 0 or -1 (errno). */
static int write_out(const char *out, const lab_results_line *header,
                     const lab_results_line *const *by_rank, size_t n) {
  int fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (f == NULL) {
    if (fd >= 0) close(fd);
    return -1;
  }
  int rc = 0;
  for (size_t r = 0; r < n && rc == 0; r++) {
    const lab_results_line *l = r == 0 ? header : by_rank[r];
    if (fwrite(l->text, 1, l->len, f) != l->len) rc = -1;
    if (rc == 0 && l->text[l->len - 1] != '\n' && fputc('\n', f) == EOF) rc = -1;
  }
  if (fflush(f) != 0 || fsync(fileno(f)) != 0) rc = -1;
  if (fclose(f) != 0) rc = -1;
  if (rc != 0) {
    int saved = errno;
    unlink(out);
    errno = saved;
  }
  return rc;
}

int lab_merge(const char *out, const char *const *inputs, size_t n_inputs, FILE *messages) {
  problems p = {.out = messages};
  char buf[3][600];
  struct stat sb;
  if (lstat(out, &sb) == 0) {
    fprintf(messages, PROG ": %s exists: merge writes a new file and never replaces one\n",
            shown(out, buf[0], sizeof buf[0]));
    return 1;
  }
  merge_input *in = calloc(n_inputs ? n_inputs : 1, sizeof *in);
  lab_matrix m = {0};
  lab_matrix_index index = {0};
  const lab_results_line **by_rank = NULL;
  size_t *input_of = NULL;
  int rc = 1;
  if (in == NULL) goto out_of_memory;
  for (size_t i = 0; i < n_inputs; i++) in[i].name = inputs[i];
  read_inputs(in, n_inputs, &p);
  if (p.total > 0) goto refused;
  same_matrix(in, n_inputs, &p);
  if (p.total > 0) goto refused;
  char err[256];
  if (lab_matrix_parse(in[0].lines[in[0].header].json, &m, err, sizeof err) != 0) {
    fprintf(messages, PROG ": %s:%zu: %s\n", shown(in[0].name, buf[0], sizeof buf[0]),
            in[0].lines[in[0].header].lineno, err);
    goto refused;
  }
  if (lab_matrix_index_make(&m, &index) != 0) goto out_of_memory;
  by_rank = calloc(index.n, sizeof *by_rank);
  input_of = calloc(index.n, sizeof *input_of);
  if (by_rank == NULL || input_of == NULL) goto out_of_memory;
  /* Each line to its place; a place taken twice is an overlap. */
  problem_kind(&p);
  for (size_t i = 0; i < n_inputs; i++)
    for (size_t k = 0; k < in[i].n; k++) {
      const lab_results_line *l = &in[i].lines[k];
      if (k == in[i].header) continue;
      size_t rank = lab_matrix_index_rank(&index, l->key);
      shown(in[i].name, buf[0], sizeof buf[0]);
      if (!l->is_json)
        problem(&p, "%s:%zu: not a JSON line", buf[0], l->lineno);
      else if (rank == SIZE_MAX || rank == 0)
        problem(&p, "%s:%zu: not a load or skipped page of the matrix (key %s)", buf[0], l->lineno,
                l->key ? shown(l->key, buf[1], sizeof buf[1]) : "absent");
      else if (by_rank[rank] != NULL)
        problem(&p, "%s is in %s:%zu and in %s:%zu: the shards overlap",
                shown(l->key, buf[1], sizeof buf[1]),
                shown(in[input_of[rank]].name, buf[2], sizeof buf[2]), by_rank[rank]->lineno,
                buf[0], l->lineno);
      else
        by_rank[rank] = l, input_of[rank] = i;
    }
  problem_kind_end(&p, "lines");
  size_t missing = 0, listed = 0;
  for (size_t r = 1; r < index.n; r++) missing += by_rank[r] == NULL;
  if (missing > 0) {
    fprintf(messages,
            PROG ": %zu of the matrix's %zu loads and skipped pages are in no input (a shard not "
                 "run, or not to its end: the same command resumes it):\n",
            missing, index.n - 1);
    lab_run_job *jobs = NULL;
    size_t n_jobs = 0;
    if (lab_matrix_jobs(&m, &jobs, &n_jobs) != 0) goto out_of_memory;
    /* In the matrix's order: the ranks' keys are in the index by key, not by rank. */
    for (size_t r = 1; r < index.n && listed < LIST_MAX; r++) {
      if (by_rank[r] != NULL) continue;
      const char *key = r <= m.n_skipped ? m.skipped[r - 1] : jobs[r - 1 - m.n_skipped].key;
      fprintf(messages, PROG ":   %s\n", shown(key, buf[0], sizeof buf[0]));
      listed++;
    }
    free(jobs);
    if (missing > listed) fprintf(messages, PROG ":   ... and %zu more\n", missing - listed);
    p.total += missing;
  }
  if (p.total > 0) goto refused;
  if (write_out(out, &in[0].lines[in[0].header], by_rank, index.n) != 0) {
    fprintf(messages, PROG ": cannot write %s: %s\n", shown(out, buf[0], sizeof buf[0]),
            strerror(errno));
    goto done;
  }
  fprintf(messages, PROG ": %s: %zu loads and %zu skipped page%s from %zu file%s\n",
          shown(out, buf[0], sizeof buf[0]), index.n - 1 - m.n_skipped, m.n_skipped,
          m.n_skipped == 1 ? "" : "s", n_inputs, n_inputs == 1 ? "" : "s");
  rc = 0;
  goto done;
out_of_memory:
  fprintf(messages, PROG ": out of memory\n");
  goto done;
refused:
  fprintf(messages, PROG ": nothing written\n");
done:
  for (size_t i = 0; in != NULL && i < n_inputs; i++) lab_results_free(in[i].lines, in[i].n);
  free(in);
  free(by_rank);
  free(input_of);
  lab_matrix_index_free(&index);
  lab_matrix_free(&m);
  return rc;
}

int lab_merge_main(int argc, char **argv) {
  static const struct option long_options[] = {{"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  int c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
    if (c != 'h') return 2;
    printf("Usage: speedy lab merge OUT RESULTS...\n"
           "Joins the results files of a matrix's shards ('speedy lab run --shard K/N') into\n"
           "OUT, a new file: the same bytes as one run of the whole matrix writes. Refuses,\n"
           "writing nothing, files of different matrices or settings, loads in two files, and\n"
           "loads in none (docs/lab.md, \"A matrix over several machines\").\n\n"
           "  -h, --help  this help\n");
    return 0;
  }
  if (argc - optind < 2) {
    fprintf(stderr, PROG ": want OUT and at least one results file (try '" PROG " --help')\n");
    return 2;
  }
  return lab_merge(argv[optind], (const char *const *)argv + optind + 1,
                   (size_t)(argc - optind - 1), stderr);
}
