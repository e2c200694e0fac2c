/* matrix.c — a `speedy lab run` matrix as a value (matrix.h): canonical order, keys,
 * shards, the speedy-lab-matrix/1 line, and a results file put in order.
 *
 * Shards are a hash of the load's key without its configuration (FNV-1a, then a 64-bit
 * finaliser so that the low bits mix), modulo the number of shards: a load's shard depends
 * on its own key only, never on its place in a list of files or loads that may differ
 * between machines, and it stays when pages are added to the matrix. Changing the hash
 * would split a matrix differently from the shards already run: merge would then find
 * overlaps and holes and refuse.
 */
#define _GNU_SOURCE
#include "matrix.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- building ------------------------------------------------------------------------ */

static int add_string(char ***list, size_t *n, const char *s) {
  char **grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  *list = grown;
  grown[*n] = strdup(s);
  if (grown[*n] == NULL) return -1;
  (*n)++;
  return 0;
}

int lab_matrix_add_page(lab_matrix *m, const char *id) {
  return add_string(&m->pages, &m->n_pages, id);
}

int lab_matrix_add_skip(lab_matrix *m, const char *key) {
  return add_string(&m->skipped, &m->n_skipped, key);
}

int lab_matrix_add_link(lab_matrix *m, const lab_run_link *link) {
  lab_run_link *grown = realloc(m->links, (m->n_links + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  m->links = grown;
  m->links[m->n_links++] = *link;
  return 0;
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int compare_links(const void *a, const void *b) {
  const lab_run_link *x = a, *y = b;
  int d = strcmp(x->profile, y->profile);
  if (d != 0) return d;
  if (x->rtt_ms != y->rtt_ms) return x->rtt_ms < y->rtt_ms ? -1 : 1; /* the profile's first */
  return (x->loss > y->loss) - (x->loss < y->loss);
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int compare_configs(const void *a, const void *b) {
  lab_config x = *(const lab_config *)a, y = *(const lab_config *)b;
  return (x > y) - (x < y);
}

/* Sorts base and drops repeats; returns the new count. Dropped strings are freed. */
static size_t sort_unique(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *),
                          int strings) {
  if (n == 0) return 0;
  qsort(base, n, size, cmp);
  char *p = base;
  size_t kept = 1;
  for (size_t i = 1; i < n; i++) {
    if (cmp(p + (kept - 1) * size, p + i * size) == 0) {
      if (strings) free(*(char **)(p + i * size));
      continue;
    }
    if (kept != i) memcpy(p + kept * size, p + i * size, size);
    kept++;
  }
  return kept;
}

void lab_matrix_sort(lab_matrix *m) {
  m->n_pages = sort_unique(m->pages, m->n_pages, sizeof *m->pages, compare_strings, 1);
  m->n_skipped = sort_unique(m->skipped, m->n_skipped, sizeof *m->skipped, compare_strings, 1);
  m->n_links = sort_unique(m->links, m->n_links, sizeof *m->links, compare_links, 0);
  m->n_tls = sort_unique(m->tls, m->n_tls, sizeof *m->tls, compare_ints, 0);
  m->n_configs = sort_unique(m->configs, m->n_configs, sizeof *m->configs, compare_configs, 0);
}

void lab_matrix_free(lab_matrix *m) {
  for (size_t i = 0; i < m->n_pages; i++) free(m->pages[i]);
  for (size_t i = 0; i < m->n_skipped; i++) free(m->skipped[i]);
  free(m->pages);
  free(m->skipped);
  free(m->links);
  json_decref(m->settings);
  memset(m, 0, sizeof *m);
}

/* ---- loads, keys and shards ------------------------------------------------------------ */

static int repetitions_on(const lab_matrix *m, size_t link) {
  return m->links[link].loss > 0 ? m->lossy_repetitions : m->repetitions;
}

size_t lab_matrix_n_loads(const lab_matrix *m) {
  size_t per_page = 0;
  for (size_t l = 0; l < m->n_links; l++)
    per_page += (size_t)repetitions_on(m, l) * m->n_tls * m->n_configs;
  return per_page * m->n_pages;
}

/* The key, with the configuration or (config NULL) without it: a shard's unit. */
static void key_of(const lab_matrix *m, const lab_run_job *job, const char *config, char *out,
                   size_t size) {
  const lab_run_link *l = &m->links[job->link];
  char link[64], dns[32] = "", config_part[40] = "";
  if (l->rtt_ms >= 0)
    snprintf(link, sizeof link, "%s-rtt%g", l->profile, l->rtt_ms);
  else
    snprintf(link, sizeof link, "%s", l->profile);
  /* Without lookups the key is what it was before --dns-rtt existed, so older results
   * files keep resuming. */
  if (m->dns_rtt_ms > 0) snprintf(dns, sizeof dns, "|dns=%u", m->dns_rtt_ms);
  if (config != NULL)
    snprintf(config_part, sizeof config_part, "|%s%s", config,
             m->chromium ? "|client=chromium" : "");
  snprintf(out, size, "%s|%s|loss=%g|tls=%s%s%s|rep=%d", m->pages[job->page], link, l->loss * 100,
           job->tls ? "on" : "off", dns, config_part, job->repetition);
}

void lab_matrix_key(const lab_matrix *m, const lab_run_job *job, char *out, size_t size) {
  key_of(m, job, lab_config_name(job->config), out, size);
}

int lab_matrix_jobs(const lab_matrix *m, lab_run_job **jobs, size_t *n) {
  size_t total = lab_matrix_n_loads(m), k = 0;
  *jobs = calloc(total ? total : 1, sizeof **jobs);
  *n = 0;
  if (*jobs == NULL) return -1;
  for (size_t p = 0; p < m->n_pages; p++)
    for (size_t l = 0; l < m->n_links; l++)
      for (size_t t = 0; t < m->n_tls; t++)
        for (size_t c = 0; c < m->n_configs; c++)
          for (int r = 1; r <= repetitions_on(m, l); r++) {
            lab_run_job *job = &(*jobs)[k++];
            *job = (lab_run_job){
                .page = p, .link = l, .tls = m->tls[t], .config = m->configs[c], .repetition = r};
            lab_matrix_key(m, job, job->key, sizeof job->key);
          }
  *n = k;
  return 0;
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 14695981039346656037ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* splitmix64's finaliser: FNV's low bits alone split poorly modulo small numbers. */
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

unsigned lab_matrix_shard_of(const char *unit, unsigned n_shards) {
  return n_shards <= 1 ? 0 : (unsigned)(mix(fnv1a(unit)) % n_shards);
}

unsigned lab_matrix_shard_of_job(const lab_matrix *m, const lab_run_job *job, unsigned n_shards) {
  char unit[sizeof job->key];
  key_of(m, job, NULL, unit, sizeof unit);
  return lab_matrix_shard_of(unit, n_shards);
}

/* ---- the matrix line ------------------------------------------------------------------- */

#define DUMP_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* Everything but "format" and "key": what the key's hash is of. */
static json_t *body_of(const lab_matrix *m) {
  json_t *body = json_object(), *pages = json_array(), *skipped = json_array();
  json_t *links = json_array(), *tls = json_array(), *configs = json_array();
  for (size_t i = 0; i < m->n_pages; i++) json_array_append_new(pages, json_string(m->pages[i]));
  for (size_t i = 0; i < m->n_skipped; i++)
    json_array_append_new(skipped, json_string(m->skipped[i]));
  for (size_t i = 0; i < m->n_links; i++)
    json_array_append_new(
        links, json_pack("{s:s, s:o, s:f}", "profile", m->links[i].profile, "rtt_ms",
                         m->links[i].rtt_ms >= 0 ? json_real(m->links[i].rtt_ms) : json_null(),
                         "loss_percent", m->links[i].loss * 100));
  for (size_t i = 0; i < m->n_tls; i++)
    json_array_append_new(tls, json_string(m->tls[i] ? "on" : "off"));
  for (size_t i = 0; i < m->n_configs; i++)
    json_array_append_new(configs, json_string(lab_config_name(m->configs[i])));
  json_object_set_new(body, "loads", json_integer((json_int_t)lab_matrix_n_loads(m)));
  json_object_set_new(body, "pages", pages);
  json_object_set_new(body, "skipped", skipped);
  json_object_set_new(body, "links", links);
  json_object_set_new(body, "tls", tls);
  json_object_set_new(body, "configs", configs);
  json_object_set_new(body, "repetitions", json_integer(m->repetitions));
  json_object_set_new(body, "lossy_repetitions", json_integer(m->lossy_repetitions));
  json_object_set_new(body, "dns_rtt_ms", json_integer(m->dns_rtt_ms));
  json_object_set_new(body, "settings", m->settings ? json_deep_copy(m->settings) : json_object());
  return body;
}

void lab_matrix_header_key(const lab_matrix *m, char *out, size_t size) {
  json_t *body = body_of(m);
  char *text = json_dumps(body, DUMP_FLAGS);
  snprintf(out, size, "matrix|%016llx", text ? (unsigned long long)fnv1a(text) : 0ull);
  free(text);
  json_decref(body);
}

char *lab_matrix_header(const lab_matrix *m) {
  char key[64];
  lab_matrix_header_key(m, key, sizeof key);
  json_t *line = json_pack("{s:s, s:s}", "format", LAB_MATRIX_FORMAT, "key", key);
  json_t *body = body_of(m);
  char *text = NULL;
  if (line != NULL && body != NULL && json_object_update(line, body) == 0)
    text = json_dumps(line, DUMP_FLAGS);
  json_decref(body);
  json_decref(line);
  return text;
}

static int parse_strings(const json_t *array, int (*add)(lab_matrix *, const char *),
                         lab_matrix *m) {
  size_t i;
  const json_t *v;
  if (!json_is_array(array)) return -1;
  json_array_foreach(array, i, v) {
    if (!json_is_string(v) || add(m, json_string_value(v)) != 0) return -1;
  }
  return 0;
}

static int parse_count(const json_t *v, json_int_t max, int *out) {
  if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) return -1;
  *out = (int)json_integer_value(v);
  return 0;
}

int lab_matrix_parse(const json_t *line, lab_matrix *m, char *err, size_t err_size) {
  memset(m, 0, sizeof *m);
  const char *field = "format";
  const char *format = json_string_value(json_object_get(line, "format"));
  if (format == NULL || strcmp(format, LAB_MATRIX_FORMAT) != 0) goto bad;
  field = "pages";
  if (parse_strings(json_object_get(line, field), lab_matrix_add_page, m) != 0) goto bad;
  field = "skipped";
  if (parse_strings(json_object_get(line, field), lab_matrix_add_skip, m) != 0) goto bad;
  field = "links";
  const json_t *links = json_object_get(line, field), *v;
  size_t i;
  if (!json_is_array(links)) goto bad;
  json_array_foreach(links, i, v) {
    lab_run_link link = {.rtt_ms = -1};
    const char *profile = json_string_value(json_object_get(v, "profile"));
    const json_t *rtt = json_object_get(v, "rtt_ms"), *loss = json_object_get(v, "loss_percent");
    if (profile == NULL || strlen(profile) >= sizeof link.profile || !json_is_number(loss) ||
        !(json_is_null(rtt) || json_is_number(rtt)))
      goto bad;
    snprintf(link.profile, sizeof link.profile, "%s", profile);
    if (json_is_number(rtt)) link.rtt_ms = json_number_value(rtt);
    link.loss = json_number_value(loss) / 100;
    if (link.rtt_ms < -1 || link.loss < 0 || link.loss > 1 || lab_matrix_add_link(m, &link) != 0)
      goto bad;
  }
  field = "tls";
  const json_t *tls = json_object_get(line, field);
  if (!json_is_array(tls) || json_array_size(tls) > 2) goto bad;
  json_array_foreach(tls, i, v) {
    const char *s = json_string_value(v);
    if (s == NULL || (strcmp(s, "on") != 0 && strcmp(s, "off") != 0)) goto bad;
    m->tls[m->n_tls++] = strcmp(s, "on") == 0;
  }
  field = "configs";
  const json_t *configs = json_object_get(line, field);
  if (!json_is_array(configs) || json_array_size(configs) > LAB_N_CONFIGS) goto bad;
  json_array_foreach(configs, i, v) {
    int c = json_is_string(v) ? lab_config_parse(json_string_value(v)) : -1;
    if (c < 0) goto bad;
    m->configs[m->n_configs++] = (lab_config)c;
  }
  field = "repetitions";
  if (parse_count(json_object_get(line, field), 1000, &m->repetitions) != 0) goto bad;
  field = "lossy_repetitions";
  if (parse_count(json_object_get(line, field), 1000, &m->lossy_repetitions) != 0) goto bad;
  field = "dns_rtt_ms";
  int dns;
  if (parse_count(json_object_get(line, field), 10000, &dns) != 0) goto bad;
  m->dns_rtt_ms = (unsigned)dns;
  field = "settings";
  const json_t *settings = json_object_get(line, field);
  if (!json_is_object(settings)) goto bad;
  m->settings = json_deep_copy(settings);
  const json_t *client = json_object_get(settings, "client");
  m->chromium = json_is_string(client) && strcmp(json_string_value(client), "chromium") == 0;
  lab_matrix_sort(m);
  field = "loads";
  const json_t *loads = json_object_get(line, field);
  if (!json_is_integer(loads) || (size_t)json_integer_value(loads) != lab_matrix_n_loads(m)) {
    snprintf(err, err_size,
             "\"loads\" is not the number of loads its pages, links, TLS, "
             "configurations and repetitions make");
    lab_matrix_free(m);
    return -1;
  }
  return 0;
bad:
  snprintf(err, err_size, "not a " LAB_MATRIX_FORMAT " line: \"%s\" is missing or wrong", field);
  lab_matrix_free(m);
  return -1;
}

/* ---- the canonical order -------------------------------------------------------------- */

static int compare_ranks(const void *a, const void *b) {
  const struct lab_matrix_rank *x = a, *y = b;
  return strcmp(x->key, y->key);
}

static int index_add(lab_matrix_index *index, const char *key, size_t rank) {
  index->keys[index->n].key = strdup(key);
  index->keys[index->n].rank = rank;
  return index->keys[index->n++].key != NULL ? 0 : -1;
}

int lab_matrix_index_make(const lab_matrix *m, lab_matrix_index *index) {
  memset(index, 0, sizeof *index);
  lab_run_job *jobs = NULL;
  size_t n_jobs = 0;
  if (lab_matrix_jobs(m, &jobs, &n_jobs) != 0) return -1;
  index->keys = calloc(1 + m->n_skipped + n_jobs, sizeof *index->keys);
  int rc = index->keys != NULL ? 0 : -1;
  char key[64];
  lab_matrix_header_key(m, key, sizeof key);
  size_t rank = 0;
  if (rc == 0) rc = index_add(index, key, rank++);
  for (size_t i = 0; i < m->n_skipped && rc == 0; i++) rc = index_add(index, m->skipped[i], rank++);
  for (size_t i = 0; i < n_jobs && rc == 0; i++) rc = index_add(index, jobs[i].key, rank++);
  free(jobs);
  if (rc != 0) {
    lab_matrix_index_free(index);
    return -1;
  }
  qsort(index->keys, index->n, sizeof *index->keys, compare_ranks);
  return 0;
}

size_t lab_matrix_index_rank(const lab_matrix_index *index, const char *key) {
  if (key == NULL || index->n == 0) return SIZE_MAX;
  struct lab_matrix_rank probe = {.key = (char *)key};
  const struct lab_matrix_rank *found =
      bsearch(&probe, index->keys, index->n, sizeof *index->keys, compare_ranks);
  return found != NULL ? found->rank : SIZE_MAX;
}

void lab_matrix_index_free(lab_matrix_index *index) {
  for (size_t i = 0; i < index->n; i++) free(index->keys[i].key);
  free(index->keys);
  memset(index, 0, sizeof *index);
}

int lab_results_read(FILE *f, lab_results_line **lines, size_t *n) {
  *lines = NULL;
  *n = 0;
  size_t cap = 0, line_cap = 0, lineno = 0;
  char *text = NULL;
  ssize_t len;
  errno = 0;
  while ((len = getline(&text, &line_cap, f)) > 0) {
    lineno++;
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      lab_results_line *grown = realloc(*lines, cap * sizeof *grown);
      if (grown == NULL) goto fail;
      *lines = grown;
    }
    lab_results_line *l = &(*lines)[*n];
    memset(l, 0, sizeof *l);
    l->text = malloc((size_t)len + 1);
    if (l->text == NULL) goto fail;
    memcpy(l->text, text, (size_t)len + 1);
    l->len = (size_t)len;
    l->lineno = lineno;
    (*n)++;
    json_t *json = json_loadb(text, (size_t)len, 0, NULL);
    const char *format = json_string_value(json_object_get(json, "format"));
    const char *key = json_string_value(json_object_get(json, "key"));
    l->is_json = json != NULL;
    if ((format != NULL && (l->format = strdup(format)) == NULL) ||
        (key != NULL && (l->key = strdup(key)) == NULL)) {
      json_decref(json);
      goto fail;
    }
    if (format != NULL && strcmp(format, LAB_MATRIX_FORMAT) == 0)
      l->json = json;
    else
      json_decref(json);
  }
  free(text);
  return ferror(f) ? -1 : 0;
fail:
  free(text);
  lab_results_free(*lines, *n);
  *lines = NULL;
  *n = 0;
  errno = ENOMEM;
  return -1;
}

void lab_results_free(lab_results_line *lines, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(lines[i].text);
    free(lines[i].format);
    free(lines[i].key);
    json_decref(lines[i].json);
  }
  free(lines);
}

static int compare_places(const void *a, const void *b, void *arg) {
  const size_t *ranks = arg;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (ranks[x] != ranks[y]) return ranks[x] < ranks[y] ? -1 : 1;
  return (x > y) - (x < y);
}

void lab_matrix_order_lines(const size_t *ranks, size_t n, size_t *order) {
  for (size_t i = 0; i < n; i++) order[i] = i;
  qsort_r(order, n, sizeof *order, compare_places, (void *)ranks);
}

/* Writes the lines in order to a new file beside path and renames it over path. */
static int replace_file(const char *path, const lab_results_line *lines, const size_t *order,
                        size_t n, mode_t mode) {
  char *tmp = NULL;
  if (asprintf(&tmp, "%s.order-%ld", path, (long)getpid()) < 0) return -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 0777);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  int rc = f != NULL ? 0 : -1;
  for (size_t i = 0; i < n && rc == 0; i++) {
    const lab_results_line *l = &lines[order[i]];
    if (fwrite(l->text, 1, l->len, f) != l->len) rc = -1;
    /* A last line without its newline that is no longer last gets one. */
    if (rc == 0 && (l->len == 0 || l->text[l->len - 1] != '\n') && i + 1 < n &&
        fputc('\n', f) == EOF)
      rc = -1;
  }
  if (f != NULL && (fflush(f) != 0 || fsync(fileno(f)) != 0)) rc = -1;
  if (f != NULL && fclose(f) != 0) rc = -1;
  if (f == NULL && fd >= 0) close(fd);
  if (rc == 0 && rename(tmp, path) != 0) rc = -1;
  if (rc != 0) {
    int saved = errno;
    unlink(tmp);
    errno = saved;
  }
  free(tmp);
  return rc;
}

int lab_matrix_order_file(const lab_matrix *m, const char *file, char *err, size_t err_size) {
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return 0;
    snprintf(err, err_size, "cannot open %s: %s", file, strerror(errno));
    return -1;
  }
  /* Appends wait meanwhile, and reopen the file when it was replaced (lab_run_append). A
   * file system without locks orders it all the same: the run's own appends are over. */
  (void)flock(fd, LOCK_EX);
  int rc = -1;
  lab_results_line *lines = NULL;
  size_t n = 0, *ranks = NULL, *order = NULL;
  lab_matrix_index index = {0};
  struct stat sb;
  FILE *f = fdopen(dup(fd), "r");
  if (f == NULL || lab_results_read(f, &lines, &n) != 0 || fstat(fd, &sb) != 0) {
    snprintf(err, err_size, "cannot read %s: %s", file, strerror(errno));
    goto out;
  }
  ranks = calloc(n ? n : 1, sizeof *ranks);
  order = calloc(n ? n : 1, sizeof *order);
  if (ranks == NULL || order == NULL || lab_matrix_index_make(m, &index) != 0) {
    snprintf(err, err_size, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) ranks[i] = lab_matrix_index_rank(&index, lines[i].key);
  lab_matrix_order_lines(ranks, n, order);
  size_t moved = 0;
  for (size_t i = 0; i < n; i++) moved += order[i] != i;
  if (moved == 0) {
    rc = 0;
    goto out;
  }
  /* A symbolic link stays one: the file it names is replaced. */
  char *real = realpath(file, NULL);
  int replaced = real != NULL ? replace_file(real, lines, order, n, sb.st_mode) : -1;
  free(real);
  if (replaced != 0) {
    snprintf(err, err_size, "cannot put %s in order: %s (left as it was)", file, strerror(errno));
    goto out;
  }
  rc = 0;
out:
  if (f != NULL) fclose(f);
  lab_results_free(lines, n);
  lab_matrix_index_free(&index);
  free(ranks);
  free(order);
  close(fd); /* releases the lock, after the rename */
  return rc;
}
