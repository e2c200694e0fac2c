/* get_progress.c — the progress meter of `speedy get`: one line on stderr, redrawn four
 * times a second, with the URLs done, the bytes received (of how many, when every length
 * is known), the mean rate and the time spent. Shown only when stderr is a terminal,
 * without -s or -v, and when no body goes to a terminal on stdout (as curl: the meter
 * would tear the body apart there). Erased at the end: the summary says the rest.
 */
#include <unistd.h>

#include "get_int.h"

#define PROGRESS_INTERVAL_MS 250

static void format_size(char *out, size_t len, double bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    u++;
  }
  if (u == 0)
    snprintf(out, len, "%.0f %s", bytes, units[u]);
  else
    snprintf(out, len, "%.1f %s", bytes, units[u]);
}

static void draw(get_run *run) {
  int done = 0, lengths_known = 1;
  uint64_t bytes = 0, total = 0;
  for (get_origin *o = run->origins; o; o = o->next)
    for (get_job *j = o->jobs; j; j = j->next) {
      bytes += j->bytes;
      if (j->pushed) continue;
      int finished = j->state == JOB_DONE || j->state == JOB_FAILED;
      done += finished;
      if (j->has_length)
        total += j->content_length;
      else if (finished)
        total += j->bytes;
      else
        lengths_known = 0;
    }
  double seconds = (double)(get_now_ns() - run->t_start) / 1e9;
  char got[32], of[40] = "", rate[32], percent[8] = "";
  format_size(got, sizeof(got), (double)bytes);
  format_size(rate, sizeof(rate), seconds > 0 ? (double)bytes / seconds : 0);
  if (lengths_known && total > 0) {
    char size[32];
    format_size(size, sizeof(size), (double)total);
    snprintf(of, sizeof(of), " of %s", size);
    snprintf(percent, sizeof(percent), " %3d%%", (int)(bytes * 100 / (total ? total : 1) % 1000));
  }
  int s = (int)seconds;
  /* \r and erase-to-end-of-line: the line is redrawn in place */
  fprintf(stderr, "\r%d/%d URLs  %s%s%s  %s/s  %d:%02d:%02d\033[K", done, run->n_all, got, of,
          percent, rate, s / 3600, s / 60 % 60, s % 60);
  run->progress_drawn = 1;
}

static void on_tick(uv_timer_t *timer) { draw(timer->data); }

void get_progress_start(get_run *run) {
  const get_options *opt = run->opt;
  if (opt->quiet || opt->verbose || !isatty(2)) return;
  if (isatty(1))
    for (int i = 0; i < run->n_all; i++)
      if (run->all[i]->to_stdout || (run->all[i]->out_name && run->all[i]->out_name[0] == '-' &&
                                     run->all[i]->out_name[1] == '\0'))
        return;
  if (uv_timer_init(run->loop, &run->progress) != 0) return;
  run->progress_on = 1;
  run->progress.data = run;
  uv_timer_start(&run->progress, on_tick, 0, PROGRESS_INTERVAL_MS);
  uv_unref((uv_handle_t *)&run->progress); /* the meter does not keep the run alive */
}

void get_progress_stop(get_run *run) {
  if (!run->progress_on) return;
  uv_timer_stop(&run->progress);
  if (run->progress_drawn) fputs("\r\033[K", stderr);
}
