/* get_summary.c — what `speedy get` says when it is done: per origin the protocol and how
 * it was negotiated, per URL the status, size and timings, the pushes received, and every
 * failure with its reason. Decides the exit status.
 */
#include <string.h>

#include "get_int.h"

static double ms(int64_t ns) { return (double)ns / 1e6; }

static void print_job(FILE *f, const get_job *j) {
  const char *state = j->state == JOB_DONE ? "ok" : "FAILED";
  fprintf(f, "  %s%-6s %3d %10llu B", j->pushed ? "push " : "", state, j->status,
          (unsigned long long)j->bytes);
  if (j->t_first && j->t_start)
    fprintf(f, "  first byte %8.2f ms", ms(j->t_first - j->t_start));
  else
    fprintf(f, "  first byte        - ms");
  if (j->t_end && j->t_start) fprintf(f, "  total %8.2f ms", ms(j->t_end - j->t_start));
  fputs("  ", f);
  get_out_escaped(f, j->url, strlen(j->url));
  if (j->saved_as[0]) {
    fputs(" -> ", f);
    get_out_escaped(f, j->saved_as, strlen(j->saved_as));
  }
  fputc('\n', f);
}

/* Refused pushes do not fail the run, but a server pushing for another origin or past
 * --max-pushes is worth a line each (the first few by name, the rest counted). */
static void report_refused_pushes(FILE *f, const get_origin *o) {
  static const char *const why[PUSH_REFUSAL_KINDS] = {[PUSH_OVER_MAX] = "over --max-pushes",
                                                      [PUSH_OTHER_ORIGIN] = "for another origin",
                                                      [PUSH_BAD_PATH] = "without a valid :path"};
  for (int i = 0; i < o->n_refused_named; i++) {
    fputs("speedy get: refused push ", f);
    get_out_escaped(f, o->refused_named[i], strlen(o->refused_named[i]));
    fputc('\n', f);
  }
  for (int k = 0; k < PUSH_REFUSAL_KINDS; k++) {
    uint64_t n = o->pushes_refused[k];
    for (int i = 0; i < o->n_refused_named; i++) n -= o->refused_named_kind[i] == k;
    if (n == 0) continue;
    fprintf(f, "speedy get: %s://%s: %llu %spush%s refused (%s", o->scheme, o->authority,
            (unsigned long long)n, k == PUSH_OVER_MAX ? "" : "more ", n == 1 ? "" : "es", why[k]);
    if (k == PUSH_OVER_MAX) fprintf(f, " %u", (unsigned)o->run->opt->max_pushes);
    fputs(")\n", f);
  }
}

int get_summary(get_run *run) {
  FILE *f = stderr;
  int failed = 0;
  for (get_origin *o = run->origins; o; o = o->next) {
    for (get_job *j = o->jobs; j; j = j->next) {
      if (j->state == JOB_WAITING || j->state == JOB_ACTIVE) {
        j->state = JOB_FAILED;
        if (!j->error[0])
          snprintf(j->error, sizeof(j->error), "connection ended before the response did");
      }
      /* A status of 400 or more is a response like another (as in curl); --fail made
       * it a failure when the head arrived. */
      if (j->state == JOB_FAILED && !j->pushed) failed++;
    }
  }
  if (!run->opt->quiet) {
    for (get_origin *o = run->origins; o; o = o->next) {
      fprintf(f, "%s://%s: ", o->scheme, o->authority);
      if (o->proto)
        fprintf(f, "%s negotiated by %s%s%s, connect %.2f ms, %d connection%s\n",
                io_proto_name(o->proto), io_negotiation_name(o->how),
                o->tls_version ? " over " : "", o->tls_version ? o->tls_version : "",
                ms(o->connect_ns), o->sessions, o->sessions == 1 ? "" : "s");
      else
        fprintf(f, "no connection\n");
      for (get_job *j = o->jobs; j; j = j->next) print_job(f, j);
    }
  }
  for (get_origin *o = run->origins; o; o = o->next)
    for (get_job *j = o->jobs; j; j = j->next)
      if (j->state == JOB_FAILED) {
        fprintf(f, "speedy get: %s", j->pushed ? "push " : "");
        get_out_escaped(f, j->url, strlen(j->url));
        fputs(": ", f);
        get_out_escaped(f, j->error, strlen(j->error));
        fputc('\n', f);
      }
  for (get_origin *o = run->origins; o; o = o->next) report_refused_pushes(f, o);
  return failed ? 1 : 0;
}
