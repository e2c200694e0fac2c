/* test_lab_shard.c — a matrix spread over several machines (docs/lab.md, "A matrix over
 * several machines"): which shard each load belongs to (every load in exactly one, the
 * configurations of a repetition together, the same on every machine and in every
 * version), the matrix line, the canonical order of a results file (matrix.c), and
 * `speedy lab merge` (merge.c): shards joined byte for byte into one run's file, and every
 * refusal naming what is wrong. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "matrix.h"
#include "merge.h"

/* Pages, links and values given in an order of their own: the matrix puts them in its. */
static void small_matrix(lab_matrix *m, size_t n_pages, int repetitions) {
  memset(m, 0, sizeof *m);
  for (size_t p = n_pages; p > 0; p--) {
    char id[64];
    snprintf(id, sizeof id, "page-%03zu.har#first page (estimated)", p);
    cr_assert_eq(lab_matrix_add_page(m, id), 0);
  }
  cr_assert_eq(lab_matrix_add_skip(m, "z.har#page 1|skipped"), 0);
  cr_assert_eq(lab_matrix_add_skip(m, "a.har#page 2|skipped"), 0);
  lab_run_link dsl = {.profile = "dsl", .rtt_ms = -1, .loss = 0};
  lab_run_link lossy = {.profile = "dsl", .rtt_ms = -1, .loss = 0.01};
  lab_run_link cable = {.profile = "cable", .rtt_ms = -1, .loss = 0};
  cr_assert_eq(lab_matrix_add_link(m, &lossy), 0);
  cr_assert_eq(lab_matrix_add_link(m, &dsl), 0);
  cr_assert_eq(lab_matrix_add_link(m, &cable), 0);
  m->tls[m->n_tls++] = 1;
  m->tls[m->n_tls++] = 0;
  m->configs[m->n_configs++] = LAB_SPDY_MULTI;
  m->configs[m->n_configs++] = LAB_HTTP1_FCFS;
  m->repetitions = repetitions;
  m->lossy_repetitions = 2 * repetitions;
  m->settings = json_pack("{s:s, s:I}", "tcp", "modern", "queue_bytes", (json_int_t)0);
  lab_matrix_sort(m);
}

static lab_run_job *jobs_of(const lab_matrix *m, size_t *n) {
  lab_run_job *jobs = NULL;
  cr_assert_eq(lab_matrix_jobs(m, &jobs, n), 0);
  cr_assert_eq(*n, lab_matrix_n_loads(m));
  return jobs;
}

/* ---- shards ------------------------------------------------------------------------ */

Test(shard, every_load_is_in_exactly_one_shard) {
  lab_matrix m;
  small_matrix(&m, 5, 3);
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  for (unsigned shards = 1; shards <= 7; shards++) {
    size_t per_shard[7] = {0};
    for (size_t i = 0; i < n; i++) {
      unsigned s = lab_matrix_shard_of_job(&m, &jobs[i], shards);
      cr_assert_lt(s, shards, "%s: shard %u of %u", jobs[i].key, s, shards);
      per_shard[s]++;
      cr_assert_eq(lab_matrix_shard_of_job(&m, &jobs[i], shards), s, "the same every time");
    }
    size_t total = 0;
    for (unsigned s = 0; s < shards; s++) total += per_shard[s];
    cr_assert_eq(total, n, "the shards of %u hold every load once", shards);
  }
  free(jobs);
  lab_matrix_free(&m);
}

Test(shard, configurations_of_one_repetition_share_a_shard) {
  lab_matrix m;
  small_matrix(&m, 6, 2);
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      if (jobs[i].page != jobs[j].page || jobs[i].link != jobs[j].link ||
          jobs[i].tls != jobs[j].tls || jobs[i].repetition != jobs[j].repetition)
        continue;
      cr_assert_eq(lab_matrix_shard_of_job(&m, &jobs[i], 3),
                   lab_matrix_shard_of_job(&m, &jobs[j], 3),
                   "%s and %s are compared with each other: one machine", jobs[i].key, jobs[j].key);
    }
  free(jobs);
  lab_matrix_free(&m);
}

/* Pinned: a new hash would split matrices differently from shards already run. */
Test(shard, assignment_is_stable_across_versions) {
  cr_assert_eq(lab_matrix_shard_of("a.har#first page (estimated)|dsl|loss=0|tls=off|rep=1", 2), 0);
  cr_assert_eq(lab_matrix_shard_of("a.har#first page (estimated)|dsl|loss=0|tls=off|rep=2", 2), 1);
  cr_assert_eq(lab_matrix_shard_of("a.har#first page (estimated)|dsl|loss=0|tls=on|rep=1", 2), 1);
  cr_assert_eq(lab_matrix_shard_of("a.har#first page (estimated)|cable|loss=0|tls=off|rep=1", 5),
               0);
  cr_assert_eq(lab_matrix_shard_of("x.har#page 1|skipped", 3), 1);
  cr_assert_eq(lab_matrix_shard_of("anything", 1), 0);
}

Test(shard, a_load_keeps_its_shard_when_the_matrix_grows) {
  lab_matrix small, large;
  small_matrix(&small, 3, 2);
  small_matrix(&large, 9, 4); /* more pages before and after, more repetitions */
  size_t n_small, n_large;
  lab_run_job *a = jobs_of(&small, &n_small), *b = jobs_of(&large, &n_large);
  size_t found = 0;
  for (size_t i = 0; i < n_small; i++)
    for (size_t j = 0; j < n_large; j++)
      if (strcmp(a[i].key, b[j].key) == 0) {
        found++;
        cr_assert_eq(lab_matrix_shard_of_job(&small, &a[i], 4),
                     lab_matrix_shard_of_job(&large, &b[j], 4), "%s", a[i].key);
      }
  cr_assert_eq(found, n_small);
  free(a);
  free(b);
  lab_matrix_free(&small);
  lab_matrix_free(&large);
}

Test(shard, shards_are_about_even) {
  lab_matrix m;
  small_matrix(&m, 200, 5); /* 200 pages x (3 links, 5 or 10 repetitions) x 2 TLS: 8,000 units */
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  for (unsigned shards = 2; shards <= 6; shards++) {
    size_t per_shard[6] = {0};
    for (size_t i = 0; i < n; i++) per_shard[lab_matrix_shard_of_job(&m, &jobs[i], shards)]++;
    for (unsigned s = 0; s < shards; s++)
      cr_assert(per_shard[s] > n / shards * 9 / 10 && per_shard[s] < n / shards * 11 / 10,
                "shard %u of %u holds %zu of %zu loads", s + 1, shards, per_shard[s], n);
  }
  free(jobs);
  lab_matrix_free(&m);
}

/* ---- the matrix line and the order ---------------------------------------------------- */

Test(matrix, order_does_not_depend_on_how_the_options_were_written) {
  lab_matrix m;
  small_matrix(&m, 2, 1);
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  /* pages by id, links by profile then loss, TLS off first, configurations in their order */
  cr_assert_str_eq(jobs[0].key, "page-001.har#first page (estimated)|cable|loss=0|tls=off|"
                                "http1-fcfs|rep=1");
  cr_assert_str_eq(jobs[1].key, "page-001.har#first page (estimated)|cable|loss=0|tls=off|"
                                "spdy-multi|rep=1");
  cr_assert_str_eq(jobs[2].key, "page-001.har#first page (estimated)|cable|loss=0|tls=on|"
                                "http1-fcfs|rep=1");
  cr_assert_str_eq(jobs[4].key, "page-001.har#first page (estimated)|dsl|loss=0|tls=off|"
                                "http1-fcfs|rep=1");
  cr_assert_str_eq(jobs[8].key, "page-001.har#first page (estimated)|dsl|loss=1|tls=off|"
                                "http1-fcfs|rep=1");
  cr_assert_str_eq(jobs[9].key,
                   "page-001.har#first page (estimated)|dsl|loss=1|tls=off|"
                   "http1-fcfs|rep=2",
                   "lossy links: twice the repetitions");
  cr_assert_eq(m.n_skipped, 2);
  cr_assert_str_eq(m.skipped[0], "a.har#page 2|skipped");
  free(jobs);
  lab_matrix_free(&m);
}

Test(matrix, values_given_twice_count_once) {
  lab_matrix m;
  small_matrix(&m, 2, 1);
  size_t before = lab_matrix_n_loads(&m);
  lab_run_link cable = {.profile = "cable", .rtt_ms = -1, .loss = 0};
  cr_assert_eq(lab_matrix_add_link(&m, &cable), 0);
  cr_assert_eq(lab_matrix_add_page(&m, "page-001.har#first page (estimated)"), 0);
  m.configs[m.n_configs++] = LAB_HTTP1_FCFS;
  lab_matrix_sort(&m);
  cr_assert_eq(lab_matrix_n_loads(&m), before, "no key twice");
  lab_matrix_free(&m);
}

Test(matrix, line_reads_back_to_the_same_bytes) {
  lab_matrix m, back;
  small_matrix(&m, 3, 2);
  char *line = lab_matrix_header(&m), err[256], key[64];
  cr_assert_not_null(line);
  lab_matrix_header_key(&m, key, sizeof key);
  json_t *json = json_loads(line, 0, NULL);
  cr_assert_not_null(json);
  cr_assert_str_eq(json_string_value(json_object_get(json, "format")), LAB_MATRIX_FORMAT);
  cr_assert_str_eq(json_string_value(json_object_get(json, "key")), key);
  cr_assert_eq(strncmp(key, "matrix|", 7), 0);
  cr_assert_eq(lab_matrix_parse(json, &back, err, sizeof err), 0, "%s", err);
  char *again = lab_matrix_header(&back);
  cr_assert_str_eq(again, line);
  /* Another setting is another matrix, with a key of its own. */
  json_object_set_new(back.settings, "queue_bytes", json_integer(1000000));
  char other[64];
  lab_matrix_header_key(&back, other, sizeof other);
  cr_assert_str_neq(other, key);
  lab_matrix_free(&back);
  /* A line whose loads do not add up is refused. */
  json_object_set_new(json, "loads", json_integer(7));
  cr_assert_neq(lab_matrix_parse(json, &back, err, sizeof err), 0);
  cr_assert(strstr(err, "\"loads\"") != NULL, "%s", err);
  json_decref(json);
  free(line);
  free(again);
  lab_matrix_free(&m);
}

/* ---- files ------------------------------------------------------------------------- */

typedef struct tmp_dir {
  char path[64];
} tmp_dir;

static void tmp_make(tmp_dir *d) {
  snprintf(d->path, sizeof d->path, "/tmp/speedy-shard-XXXXXX");
  cr_assert_not_null(mkdtemp(d->path));
}

static char *tmp_file(const tmp_dir *d, const char *name) {
  char *path = NULL;
  cr_assert_geq(asprintf(&path, "%s/%s", d->path, name), 0);
  return path;
}

static void tmp_remove(tmp_dir *d) {
  char *cmd = NULL;
  cr_assert_geq(asprintf(&cmd, "rm -rf '%s'", d->path), 0);
  cr_assert_eq(system(cmd), 0);
  free(cmd);
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  int c;
  while ((c = fgetc(f)) != EOF) fputc(c, out);
  fclose(out);
  fclose(f);
  return text;
}

/* A result line as `speedy lab run` appends one (what matters here: its key). */
static void put_load(FILE *f, const char *key, double plt) {
  fprintf(f, "{\"format\":\"speedy-lab-result/1\",\"key\":\"%s\",\"plt_ms\":%g}\n", key, plt);
}

static void put_skip(FILE *f, const char *key) {
  fprintf(f, "{\"format\":\"speedy-lab-skip/1\",\"key\":\"%s\",\"reason\":\"no document\"}\n", key);
}

/* One run's file of m, in the canonical order: what every merge below must give back. */
static void write_single(const lab_matrix *m, const char *path) {
  FILE *f = fopen(path, "w");
  char *header = lab_matrix_header(m);
  fprintf(f, "%s\n", header);
  free(header);
  for (size_t i = 0; i < m->n_skipped; i++) put_skip(f, m->skipped[i]);
  size_t n;
  lab_run_job *jobs = jobs_of(m, &n);
  for (size_t i = 0; i < n; i++) put_load(f, jobs[i].key, 1000 + (double)i);
  free(jobs);
  fclose(f);
}

/* Splits a file of m into n_shards files, each line to its shard's, from the last line to
 * the first (as out of order as a run's appends can be); the matrix line to every one. */
static void split(const lab_matrix *m, const char *single, char **shards, unsigned n_shards) {
  FILE *in = fopen(single, "r");
  lab_results_line *lines;
  size_t n;
  cr_assert_eq(lab_results_read(in, &lines, &n), 0);
  fclose(in);
  for (unsigned s = 0; s < n_shards; s++) {
    FILE *out = fopen(shards[s], "w");
    fwrite(lines[0].text, 1, lines[0].len, out);
    for (size_t k = n - 1; k > 0; k--) {
      unsigned shard;
      if (strcmp(lines[k].format, "speedy-lab-skip/1") == 0) {
        shard = lab_matrix_shard_of(lines[k].key, n_shards);
      } else {
        /* The job of this key. */
        size_t n_jobs;
        lab_run_job *jobs = jobs_of(m, &n_jobs), *job = NULL;
        for (size_t j = 0; j < n_jobs && job == NULL; j++)
          if (strcmp(jobs[j].key, lines[k].key) == 0) job = &jobs[j];
        cr_assert_not_null(job, "%s", lines[k].key);
        shard = lab_matrix_shard_of_job(m, job, n_shards);
        free(jobs);
      }
      if (shard == s) fwrite(lines[k].text, 1, lines[k].len, out);
    }
    fclose(out);
  }
  lab_results_free(lines, n);
}

/* lab_merge's status; its messages in *messages (the caller frees). */
static int merge(const char *out, const char *const *inputs, size_t n, char **messages) {
  size_t size;
  FILE *f = open_memstream(messages, &size);
  int rc = lab_merge(out, inputs, n, f);
  fclose(f);
  return rc;
}

Test(merge, three_shards_give_back_one_run_byte_for_byte) {
  tmp_dir d;
  tmp_make(&d);
  lab_matrix m;
  small_matrix(&m, 4, 2);
  char *single = tmp_file(&d, "single.jsonl"), *out = tmp_file(&d, "merged.jsonl");
  char *shards[3] = {tmp_file(&d, "s1.jsonl"), tmp_file(&d, "s2.jsonl"), tmp_file(&d, "s3.jsonl")};
  write_single(&m, single);
  split(&m, single, shards, 3);
  for (int s = 0; s < 3; s++) {
    char *text = slurp(shards[s]);
    cr_assert(strchr(strchr(text, '\n') + 1, '\n') != NULL, "shard %d has loads", s + 1);
    free(text);
  }
  char *messages = NULL;
  const char *inputs[] = {shards[2], shards[0], shards[1]}; /* any order */
  cr_assert_eq(merge(out, inputs, 3, &messages), 0, "%s", messages);
  char *want = slurp(single), *got = slurp(out);
  cr_assert_str_eq(got, want);
  /* And the run's own reordering gives the same file from the lines in any order. */
  char *shuffled = tmp_file(&d, "shuffled.jsonl"), err[256];
  FILE *f = fopen(shuffled, "w");
  for (int s = 2; s >= 0; s--) {
    char *text = slurp(shards[s]);
    fputs(s == 2 ? text : strchr(text, '\n') + 1, f); /* one matrix line */
    free(text);
  }
  fclose(f);
  cr_assert_eq(lab_matrix_order_file(&m, shuffled, err, sizeof err), 0, "%s", err);
  char *ordered = slurp(shuffled);
  cr_assert_str_eq(ordered, want);
  free(ordered);
  free(shuffled);
  free(messages);
  free(want);
  free(got);
  for (int s = 0; s < 3; s++) free(shards[s]);
  free(single);
  free(out);
  lab_matrix_free(&m);
  tmp_remove(&d);
}

/* Two shards of a small matrix, split from one run's file, for the refusals. */
typedef struct shard_files {
  tmp_dir d;
  lab_matrix m;
  char *single, *out, *shard[2];
  char *messages;
} shard_files;

static void shard_files_make(shard_files *s) {
  memset(s, 0, sizeof *s);
  tmp_make(&s->d);
  small_matrix(&s->m, 3, 1);
  s->single = tmp_file(&s->d, "single.jsonl");
  s->out = tmp_file(&s->d, "merged.jsonl");
  s->shard[0] = tmp_file(&s->d, "s1.jsonl");
  s->shard[1] = tmp_file(&s->d, "s2.jsonl");
  write_single(&s->m, s->single);
  split(&s->m, s->single, s->shard, 2);
}

static void shard_files_free(shard_files *s) {
  struct stat sb;
  if (s->messages != NULL && strstr(s->messages, "nothing written") != NULL)
    cr_assert_neq(stat(s->out, &sb), 0, "a refused merge writes nothing");
  free(s->single);
  free(s->out);
  free(s->shard[0]);
  free(s->shard[1]);
  free(s->messages);
  lab_matrix_free(&s->m);
  tmp_remove(&s->d);
}

static int merge_two(shard_files *s) {
  const char *inputs[] = {s->shard[0], s->shard[1]};
  free(s->messages);
  return merge(s->out, inputs, 2, &s->messages);
}

/* Drops the line holding needle from path; returns 1 when one was dropped. */
static int drop_line(const char *path, const char *needle) {
  char *text = slurp(path);
  FILE *f = fopen(path, "w");
  int dropped = 0;
  for (char *line = text, *next; *line; line = next) {
    next = strchr(line, '\n') + 1;
    if (!dropped && memmem(line, (size_t)(next - line), needle, strlen(needle)) != NULL) {
      dropped = 1;
      continue;
    }
    fwrite(line, 1, (size_t)(next - line), f);
  }
  fclose(f);
  free(text);
  return dropped;
}

static void append(const char *path, const char *text) {
  FILE *f = fopen(path, "a");
  fputs(text, f);
  fclose(f);
}

Test(merge, a_missing_load_is_refused_by_its_key) {
  shard_files s;
  shard_files_make(&s);
  const char *key = "page-002.har#first page (estimated)|dsl|loss=1|tls=on|spdy-multi|rep=2";
  cr_assert(drop_line(s.shard[0], key) || drop_line(s.shard[1], key));
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "1 of the matrix's") != NULL, "%s", s.messages);
  cr_assert(strstr(s.messages, key) != NULL, "names the load: %s", s.messages);
  cr_assert(strstr(s.messages, "nothing written") != NULL, "%s", s.messages);
  shard_files_free(&s);
}

Test(merge, a_missing_skip_line_is_refused_by_its_key) {
  shard_files s;
  shard_files_make(&s);
  const char *line = "\"key\":\"a.har#page 2|skipped\""; /* not the matrix line's list */
  cr_assert(drop_line(s.shard[0], line) || drop_line(s.shard[1], line));
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "a.har#page 2|skipped") != NULL, "%s", s.messages);
  shard_files_free(&s);
}

Test(merge, overlapping_shards_are_refused_naming_both_places) {
  shard_files s;
  shard_files_make(&s);
  const char *key = "page-001.har#first page (estimated)|cable|loss=0|tls=off|http1-fcfs|rep=1";
  /* The load again in the shard that does not hold it. */
  char *one = slurp(s.shard[0]);
  const char *other = strstr(one, key) != NULL ? s.shard[1] : s.shard[0];
  free(one);
  char line[512];
  snprintf(line, sizeof line, "{\"format\":\"speedy-lab-result/1\",\"key\":\"%s\",\"plt_ms\":1}\n",
           key);
  append(other, line);
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, key) != NULL, "%s", s.messages);
  cr_assert(strstr(s.messages, "s1.jsonl:") != NULL && strstr(s.messages, "s2.jsonl:") != NULL,
            "both places: %s", s.messages);
  cr_assert(strstr(s.messages, "overlap") != NULL, "%s", s.messages);
  shard_files_free(&s);
}

Test(merge, shards_of_other_settings_are_refused_naming_the_setting) {
  shard_files s;
  shard_files_make(&s);
  /* Shard 2 as if run with --queue 1M. */
  lab_matrix other;
  small_matrix(&other, 3, 1);
  json_object_set_new(other.settings, "queue_bytes", json_integer(1000000));
  char *header = lab_matrix_header(&other), *text = slurp(s.shard[1]);
  FILE *f = fopen(s.shard[1], "w");
  fprintf(f, "%s\n%s", header, strchr(text, '\n') + 1);
  fclose(f);
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "not shards of one matrix") != NULL, "%s", s.messages);
  cr_assert(strstr(s.messages, "settings.queue_bytes (0 in") != NULL, "%s", s.messages);
  cr_assert(strstr(s.messages, "1000000 in") != NULL, "%s", s.messages);
  free(header);
  free(text);
  lab_matrix_free(&other);
  shard_files_free(&s);
}

Test(merge, shards_of_other_pages_are_refused_naming_the_pages) {
  shard_files s;
  shard_files_make(&s);
  lab_matrix other;
  small_matrix(&other, 4, 1);
  char *header = lab_matrix_header(&other), *text = slurp(s.shard[1]);
  FILE *f = fopen(s.shard[1], "w");
  fprintf(f, "%s\n%s", header, strchr(text, '\n') + 1);
  fclose(f);
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "pages (3 items in") != NULL, "%s", s.messages);
  free(header);
  free(text);
  lab_matrix_free(&other);
  shard_files_free(&s);
}

Test(merge, a_line_of_no_load_of_the_matrix_is_refused) {
  shard_files s;
  shard_files_make(&s);
  append(s.shard[1], "{\"format\":\"speedy-lab-result/1\",\"key\":\"elsewhere|dsl|rep=1\"}\n");
  append(s.shard[1], "not json\n");
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "not a load or skipped page of the matrix (key "
                               "elsewhere|dsl|rep=1)") != NULL,
            "%s", s.messages);
  cr_assert(strstr(s.messages, "not a JSON line") != NULL, "%s", s.messages);
  shard_files_free(&s);
}

Test(merge, a_file_without_a_matrix_line_or_with_two_is_refused) {
  shard_files s;
  shard_files_make(&s);
  char *text = slurp(s.shard[0]);
  append(s.shard[0], text); /* a second copy: two matrix lines */
  cr_assert(drop_line(s.shard[1], LAB_MATRIX_FORMAT));
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "s1.jsonl: a second matrix line") != NULL, "%s", s.messages);
  cr_assert(strstr(s.messages, "s2.jsonl: no speedy-lab-matrix/1 line") != NULL, "%s", s.messages);
  free(text);
  shard_files_free(&s);
}

Test(merge, never_replaces_a_file) {
  shard_files s;
  shard_files_make(&s);
  append(s.out, "an earlier merge\n");
  cr_assert_eq(merge_two(&s), 1);
  cr_assert(strstr(s.messages, "exists") != NULL, "%s", s.messages);
  char *text = slurp(s.out);
  cr_assert_str_eq(text, "an earlier merge\n");
  free(text);
  shard_files_free(&s);
}

/* ---- the run's own file in order ------------------------------------------------------ */

Test(order_file, keeps_every_line_and_puts_others_last_in_their_order) {
  tmp_dir d;
  tmp_make(&d);
  lab_matrix m;
  small_matrix(&m, 2, 1);
  char *path = tmp_file(&d, "results.jsonl"), err[256];
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  FILE *f = fopen(path, "w");
  fputs("{\"format\":\"speedy-lab-result/1\",\"key\":\"another matrix|1\"}\n", f);
  for (size_t i = n; i > 0; i--) put_load(f, jobs[i - 1].key, (double)i);
  put_skip(f, m.skipped[1]);
  char *header = lab_matrix_header(&m);
  fprintf(f, "%s\n", header); /* appended by a resumed run after older lines */
  fputs("{\"format\":\"speedy-lab-result/1\",\"plt_ms\":1}\n", f); /* no key */
  put_skip(f, m.skipped[0]);
  fputs("{\"cut off", f); /* a last line without its newline */
  fclose(f);
  cr_assert_eq(lab_matrix_order_file(&m, path, err, sizeof err), 0, "%s", err);
  char *text = slurp(path), *want = NULL;
  size_t size;
  FILE *w = open_memstream(&want, &size);
  fprintf(w, "%s\n", header);
  put_skip(w, m.skipped[0]);
  put_skip(w, m.skipped[1]);
  for (size_t i = 0; i < n; i++) put_load(w, jobs[i].key, (double)(i + 1));
  fputs("{\"format\":\"speedy-lab-result/1\",\"key\":\"another matrix|1\"}\n", w);
  fputs("{\"format\":\"speedy-lab-result/1\",\"plt_ms\":1}\n", w);
  fputs("{\"cut off", w);
  fclose(w);
  cr_assert_str_eq(text, want);
  /* In order already: left alone (the same file, not a copy). */
  struct stat before, after;
  cr_assert_eq(stat(path, &before), 0);
  cr_assert_eq(lab_matrix_order_file(&m, path, err, sizeof err), 0, "%s", err);
  cr_assert_eq(stat(path, &after), 0);
  cr_assert_eq(before.st_ino, after.st_ino);
  /* No file: nothing to do. */
  char *none = tmp_file(&d, "none.jsonl");
  cr_assert_eq(lab_matrix_order_file(&m, none, err, sizeof err), 0, "%s", err);
  cr_assert_neq(stat(none, &after), 0);
  free(none);
  free(text);
  free(want);
  free(header);
  free(jobs);
  free(path);
  lab_matrix_free(&m);
  tmp_remove(&d);
}

Test(order_file, a_symbolic_link_stays_one) {
  tmp_dir d;
  tmp_make(&d);
  lab_matrix m;
  small_matrix(&m, 1, 1);
  char *real = tmp_file(&d, "real.jsonl"), *link = tmp_file(&d, "link.jsonl"), err[256];
  size_t n;
  lab_run_job *jobs = jobs_of(&m, &n);
  FILE *f = fopen(real, "w");
  put_load(f, jobs[1].key, 2);
  put_load(f, jobs[0].key, 1);
  fclose(f);
  cr_assert_eq(symlink(real, link), 0);
  cr_assert_eq(lab_matrix_order_file(&m, link, err, sizeof err), 0, "%s", err);
  struct stat sb;
  cr_assert_eq(lstat(link, &sb), 0);
  cr_assert(S_ISLNK(sb.st_mode), "the link was replaced by a file");
  char *text = slurp(real);
  cr_assert(strstr(text, jobs[0].key) < strstr(text, jobs[1].key), "%s", text);
  free(text);
  free(jobs);
  free(real);
  free(link);
  lab_matrix_free(&m);
  tmp_remove(&d);
}
