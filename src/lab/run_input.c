/* run_input.c — what `speedy lab run` replays (run.h): HAR files, page plans and
 * directories of them become plans under the work directory, one lab_run_page each; the
 * pages of a HAR that are not replayed become lab_run_skip records with the reason, which
 * the run writes to the results for the report to count.
 *
 * Which pages: every page with --all-pages, else the first page that can be replayed
 * (lab_plan_page: a document that was answered, something to replay, at most 250 hosts);
 * the pages before it are skipped. A file that cannot be read at all (not JSON, not a HAR,
 * not a plan) is an unusable input: the run refuses to start.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "har.h"
#include "page.h"
#include "plan.h"
#include "run.h"

#define PROG "speedy lab run"

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int add_page(lab_run_inputs *in, json_t *plan, const char *plan_file, const char *graph) {
  lab_run_page *grown = realloc(in->pages, (in->n_pages + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  in->pages = grown;
  lab_run_page *p = &in->pages[in->n_pages];
  memset(p, 0, sizeof *p);
  char err[256], id[1024], dir[4200];
  if (lab_plan_summarize(plan, &p->summary, err, sizeof err) != 0) {
    fprintf(stderr, PROG ": %s: %s\n", plan_file, err);
    return -1;
  }
  const char *source = json_string_value(json_object_get(plan, "source"));
  const char *page = json_string_value(json_object_get(plan, "page"));
  snprintf(id, sizeof id, "%s#%s (%s)", source ? source : plan_file, page ? page : "first page",
           graph);
  p->id = strdup(id);
  p->plan_file = realpath(plan_file, NULL);
  p->n_hosts = p->summary.n_hosts;
  p->address_group = calloc(p->n_hosts ? p->n_hosts : 1, sizeof *p->address_group);
  if (p->address_group != NULL)
    p->n_address_groups = lab_plan_address_groups(plan, p->address_group, p->n_hosts);
  snprintf(dir, sizeof dir, "%s/certs/page%zu", in->work_dir, in->n_pages);
  p->cert_dir = strdup(dir);
  snprintf(dir, sizeof dir, "%s/plans/page%zu.push", in->work_dir, in->n_pages);
  p->manifest = strdup(dir);
  const json_t *left_out = json_object_get(plan, "left_out");
  p->left_out = json_is_object(left_out) ? json_deep_copy(left_out) : json_object();
  in->n_pages++; /* from here on lab_run_inputs_free frees it */
  if (!p->id || !p->plan_file || !p->cert_dir || !p->manifest || !p->left_out || !p->address_group)
    return -1;
  if (lab_run_manifest(plan, p->manifest) != 0) {
    fprintf(stderr, PROG ": cannot write %s\n", p->manifest);
    return -1;
  }
  return 0;
}

static int add_skip(lab_run_inputs *in, const char *source, size_t page_index, const char *reason) {
  lab_run_skip *grown = realloc(in->skips, (in->n_skips + 1) * sizeof *grown);
  if (grown == NULL) return -1;
  in->skips = grown;
  lab_run_skip *s = &in->skips[in->n_skips];
  memset(s, 0, sizeof *s);
  in->n_skips++;
  if (asprintf(&s->page, "page %zu", page_index + 1) < 0) s->page = NULL;
  if (asprintf(&s->key, "%s#page %zu|skipped", source, page_index + 1) < 0) s->key = NULL;
  s->source = strdup(source);
  s->reason = strdup(reason);
  return s->page && s->key && s->source && s->reason ? 0 : -1;
}

static int write_json(json_t *v, const char *file) {
  return json_dump_file(v, file, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
}

/* A HAR: its first page that can be replayed (or every page) as plans, in each graph asked
 * for; the pages passed over are skipped with the reason. */
static int add_har(lab_run_inputs *in, const char *path) {
  char err[512];
  lab_har *har = NULL;
  if (lab_har_load(path, &har, err, sizeof err) != 0) {
    fprintf(stderr, "speedy lab: %s\n", err);
    in->n_unusable++;
    return -1;
  }
  lab_page_options page_options;
  lab_page_options_default(&page_options);
  lab_page_set pages;
  if (lab_pages_extract(har, &page_options, &pages) != 0) {
    fprintf(stderr, "speedy lab: %s: out of memory\n", har->name);
    lab_har_free(har);
    return -1;
  }
  int rc = 0, planned = 0;
  for (size_t p = 0; p < pages.n_pages && (in->all_pages || !planned); p++) {
    int skipped = 0;
    for (int flat = 0; flat < 2 && !skipped; flat++) {
      if ((flat && !in->graph_flat) || (!flat && !in->graph_estimated)) continue;
      lab_plan_options options = {.flat_graph = flat, .seed = 1};
      json_t *plan = lab_plan_page(har, &pages, p, &options, err, sizeof err);
      if (plan == NULL) {
        /* The reason does not depend on the graph: one record per page. */
        if (add_skip(in, har->name, p, err) != 0) rc = -1;
        skipped = 1;
        continue;
      }
      planned = 1;
      char file[4300];
      snprintf(file, sizeof file, "%s/plans/%s-p%zu-%s.json", in->work_dir, har->name, p + 1,
               flat ? "flat" : "estimated");
      if (write_json(plan, file) != 0 ||
          add_page(in, plan, file, flat ? "flat" : "estimated") != 0) {
        fprintf(stderr, PROG ": cannot prepare %s\n", file);
        rc = -1;
      }
      json_decref(plan);
    }
  }
  if (pages.n_pages == 0 && add_skip(in, har->name, 0, "no requests") != 0) rc = -1;
  lab_pages_free(&pages);
  lab_har_free(har);
  return rc;
}

static int add_plan_file(lab_run_inputs *in, const char *path) {
  json_error_t jerr;
  json_t *plan = json_load_file(path, 0, &jerr);
  if (plan == NULL) {
    fprintf(stderr, PROG ": %s:%d:%d: %s\n", path, jerr.line, jerr.column, jerr.text);
    in->n_unusable++;
    return -1;
  }
  const char *format = json_string_value(json_object_get(plan, "format"));
  int rc;
  if (format == NULL || strcmp(format, LAB_PLAN_FORMAT) != 0) {
    fprintf(stderr, PROG ": %s: not a page plan (format \"%s\" expected)\n", path, LAB_PLAN_FORMAT);
    in->n_unusable++;
    rc = -1;
  } else {
    const char *graph = json_string_value(json_object_get(plan, "graph"));
    rc = add_page(in, plan, path, graph ? graph : "as given");
    if (rc != 0) in->n_unusable++;
  }
  json_decref(plan);
  return rc;
}

static int compare_strings(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int lab_run_add_input(lab_run_inputs *in, const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
    in->n_unusable++;
    return -1;
  }
  if (!S_ISDIR(sb.st_mode))
    return ends_with(path, ".json") ? add_plan_file(in, path) : add_har(in, path);
  DIR *d = opendir(path);
  if (d == NULL) {
    fprintf(stderr, PROG ": cannot open %s: %s\n", path, strerror(errno));
    in->n_unusable++;
    return -1;
  }
  char **names = NULL;
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!ends_with(e->d_name, ".har") && !ends_with(e->d_name, ".json")) continue;
    char **grown = realloc(names, (n + 1) * sizeof *names);
    if (grown == NULL) break;
    names = grown;
    if (asprintf(&names[n], "%s/%s", path, e->d_name) < 0) break;
    n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, compare_strings);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (lab_run_add_input(in, names[i]) != 0) rc = -1;
    free(names[i]);
  }
  free(names);
  return rc;
}

char *lab_run_skip_line(const lab_run_skip *skip) {
  json_t *line =
      json_pack("{s:s, s:s, s:s, s:s, s:s}", "format", LAB_RUN_SKIP_FORMAT, "key", skip->key,
                "source", skip->source, "page", skip->page, "reason", skip->reason);
  char *text = line ? json_dumps(line, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(line);
  return text;
}

void lab_run_inputs_free(lab_run_inputs *in) {
  for (size_t i = 0; i < in->n_pages; i++) {
    free(in->pages[i].id);
    free(in->pages[i].plan_file);
    free(in->pages[i].cert_dir);
    free(in->pages[i].manifest);
    free(in->pages[i].site_dir);
    free(in->pages[i].address_group);
    json_decref(in->pages[i].left_out);
  }
  for (size_t i = 0; i < in->n_skips; i++) {
    free(in->skips[i].key);
    free(in->skips[i].source);
    free(in->skips[i].page);
    free(in->skips[i].reason);
  }
  free(in->pages);
  free(in->skips);
  in->pages = NULL;
  in->skips = NULL;
  in->n_pages = in->n_skips = 0;
}
