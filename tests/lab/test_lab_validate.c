/* test_lab_validate.c — the arithmetic of "The loader against Chromium" (report_validate.c):
 * the ±10% rule at its edges, per-page medians over odd and even repetitions, the median
 * ratio, and whether two clients order the configurations alike, on results lines written
 * by the tests (one behaviour each). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "report_validate.h"

#define CLOSE(a, b, eps) (fabs((a) - (b)) <= (eps))

/* One valid load of page with config by client ("loader" or "chromium") on cable or dsl,
 * TLS on, loss 0; extra: more fields (",\"name\":value..."), or "". */
static void put_with(FILE *f, const char *page, const char *config, const char *client,
                     const char *profile, double plt, const char *extra) {
  static int n;
  fprintf(f,
          "{\"format\":\"speedy-lab-result/1\",\"page\":\"%s\",\"config\":\"%s\",%s\"tls\":true,"
          "\"link\":{\"profile\":\"%s\",\"rtt_ms\":28,\"loss\":0},\"valid\":true,"
          "\"plt_ms\":%g,\"plt_cutoff_ms\":%g,\"lower_bound_ms\":100,\"key\":\"k%d\"%s}\n",
          page, config, strcmp(client, "chromium") == 0 ? "\"client\":\"chromium\"," : "", profile,
          plt, plt, n++, extra);
}

static void put(FILE *f, const char *page, const char *config, const char *client,
                const char *profile, double plt) {
  put_with(f, page, config, client, profile, plt, "");
}

/* Builds rep and its validation from the lines write puts. */
static void build(report *rep, report_validation *v, void (*write)(FILE *)) {
  char path[] = "/tmp/speedy-validate-XXXXXX", err[256];
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  cr_assert_not_null(f);
  write(f);
  fclose(f);
  int rc = report_build(path, 1, rep, err, sizeof err);
  unlink(path);
  cr_assert_eq(rc, 0, "%s", err);
  cr_assert_eq(report_validate_build(rep, v), 0, "out of memory");
}

static char *text_of(const report *rep) {
  char *text = NULL;
  size_t size = 0;
  FILE *out = open_memstream(&text, &size);
  cr_assert_not_null(out);
  cr_assert_eq(report_validate_print(out, rep), 0);
  fclose(out);
  return text;
}

Test(validate_within, ten_percent_either_side_counts_and_a_hair_more_does_not) {
  cr_assert(report_validate_within(1.0));
  cr_assert(report_validate_within(1100.0 / 1000.0), "1100 ms against 1000 ms is within");
  cr_assert(report_validate_within(900.0 / 1000.0), "900 ms against 1000 ms is within");
  cr_assert_not(report_validate_within(1101.0 / 1000.0));
  cr_assert_not(report_validate_within(899.0 / 1000.0));
  cr_assert_not(report_validate_within(0.5));
}

Test(validate_rank, fastest_first_and_ties_keep_their_order) {
  double means[] = {300, 100, 200, 100};
  size_t order[4];
  report_validate_rank(means, 4, order);
  cr_assert(order[0] == 1 && order[1] == 3 && order[2] == 2 && order[3] == 0, "got %zu %zu %zu %zu",
            order[0], order[1], order[2], order[3]);
}

Test(validate_alike, every_pair_of_configurations_is_compared) {
  double loader[] = {100, 200, 300}, same[] = {10, 20, 30}, swapped[] = {20, 10, 30};
  cr_assert_eq(report_validate_alike(loader, same, 3), 3, "the same order: 3 of 3");
  cr_assert_eq(report_validate_alike(loader, swapped, 3), 2, "the first two swapped: 2 of 3");
  double tie[] = {10, 10, 30};
  cr_assert_eq(report_validate_alike(loader, tie, 3), 2, "a tie is not an order");
}

/* Page a: the loader 1000, 1200, 5000 (median 1200); Chromium 1000, 1100 (median 1050, the
 * mean of the two middle values) -> 1.143, outside. Page b: the loader 990, Chromium 900 ->
 * 1.1, within. Page c: the loader only. */
static void medians(FILE *f) {
  put(f, "a", "http1-fcfs", "loader", "cable", 1000);
  put(f, "a", "http1-fcfs", "loader", "cable", 5000);
  put(f, "a", "http1-fcfs", "loader", "cable", 1200);
  put(f, "a", "http1-fcfs", "chromium", "cable", 1100);
  put(f, "a", "http1-fcfs", "chromium", "cable", 1000);
  put(f, "b", "http1-fcfs", "loader", "cable", 990);
  put(f, "b", "http1-fcfs", "chromium", "cable", 900);
  put(f, "c", "http1-fcfs", "loader", "cable", 700);
}

Test(validate, a_page_is_the_median_of_its_repetitions_of_each_client) {
  report rep;
  report_validation v;
  build(&rep, &v, medians);
  cr_assert_eq(v.n_pairs, 1);
  const report_validate_pair *pair = &v.pairs[0];
  cr_assert_str_eq(rep.configs[pair->loader], "http1-fcfs");
  cr_assert_str_eq(rep.configs[pair->chromium], "chromium-fcfs");
  cr_assert_eq(pair->n_pages, 2, "c has no Chromium load");
  cr_assert(CLOSE(pair->pages[0].loader_ms, 1200, 1e-9), "%f", pair->pages[0].loader_ms);
  cr_assert(CLOSE(pair->pages[0].chromium_ms, 1050, 1e-9), "%f", pair->pages[0].chromium_ms);
  cr_assert_not(pair->pages[0].within, "1200 / 1050 = 1.143");
  cr_assert(pair->pages[1].within, "990 / 900 = 1.1");
  cr_assert_eq(pair->within, 1);
  cr_assert(CLOSE(pair->median_ratio, (1200.0 / 1050 + 1.1) / 2, 1e-9), "%f", pair->median_ratio);
  cr_assert_eq(v.n_orders, 0, "one configuration: nothing to order");
  /* Each client against itself, on a (b has one load each): the loader's loads 1 and 3
   * (median 1100) against load 2 (5000) are not within; Chromium's 1100 and 1000 are. */
  cr_assert(pair->self_pages[0] == 1 && pair->self_within[0] == 0, "%zu %zu", pair->self_pages[0],
            pair->self_within[0]);
  cr_assert(pair->self_pages[1] == 1 && pair->self_within[1] == 1, "%zu %zu", pair->self_pages[1],
            pair->self_within[1]);
  char *text = text_of(&rep);
  cr_assert(strstr(text, "Each client against itself") != NULL, "%s", text);
  cr_assert(strstr(text, "0 of 1 (0.0%)    1 of 1 (100.0%)") != NULL, "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

/* Three configurations on cable: the loader http1-fcfs 1000, h2-multi 800, h2-single 700;
 * Chromium 1000, 700, 800 (h2-multi and h2-single swapped). Page b has no Chromium
 * h2-single load: the order is over page a only, the pairs over what each has. */
static void three_configs(FILE *f) {
  put(f, "a", "http1-fcfs", "loader", "cable", 1000);
  put(f, "a", "h2-multi", "loader", "cable", 800);
  put(f, "a", "h2-single", "loader", "cable", 700);
  put(f, "a", "http1-fcfs", "chromium", "cable", 1000);
  put(f, "a", "h2-multi", "chromium", "cable", 700);
  put(f, "a", "h2-single", "chromium", "cable", 800);
  put(f, "b", "http1-fcfs", "loader", "cable", 100);
  put(f, "b", "h2-multi", "loader", "cable", 9000);
  put(f, "b", "h2-single", "loader", "cable", 9000);
  put(f, "b", "http1-fcfs", "chromium", "cable", 100);
  put(f, "b", "h2-multi", "chromium", "cable", 9000);
}

Test(validate, order_is_over_the_pages_valid_everywhere_and_a_swap_is_flagged) {
  report rep;
  report_validation v;
  build(&rep, &v, three_configs);
  cr_assert_eq(v.n_pairs, 3);
  cr_assert_eq(v.pairs[1].n_pages, 2, "h2-multi: a and b");
  cr_assert_eq(v.pairs[2].n_pages, 1, "h2-single: a only");
  cr_assert_eq(v.n_orders, 1);
  const report_validate_order *o = &v.orders[0];
  cr_assert_eq(o->pages, 1, "b lacks Chromium's h2-single");
  cr_assert(CLOSE(o->loader_ms[0], 1000, 1e-9), "b's 100 ms is not in the mean");
  cr_assert_eq(o->comparisons, 3);
  cr_assert_eq(o->alike, 2, "http1-fcfs last for both; the h2 two swapped");
  char *text = text_of(&rep);
  cr_assert_not_null(strstr(text, "cable, loss 0%, TLS on: DISAGREE: speedy load h2-single < "
                                  "h2-multi < http1-fcfs, Chromium h2-multi < h2-single < "
                                  "http1-fcfs (2 of 3 comparisons alike; 1 page)"),
                     "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

/* Two configurations in the same order, and equal means for both clients. */
static void agreeing(FILE *f) {
  put(f, "a", "http1-fcfs", "loader", "cable", 1000);
  put(f, "a", "h2-multi", "loader", "cable", 800);
  put(f, "a", "http1-fcfs", "chromium", "cable", 1200);
  put(f, "a", "h2-multi", "chromium", "cable", 900);
  put(f, "a", "http1-fcfs", "loader", "dsl", 1000);
  put(f, "a", "h2-multi", "loader", "dsl", 1000);
  put(f, "a", "http1-fcfs", "chromium", "dsl", 1500);
  put(f, "a", "h2-multi", "chromium", "dsl", 1500);
}

Test(validate, same_order_reads_for_both_and_a_tie_is_an_equals_sign) {
  report rep;
  report_validation v;
  build(&rep, &v, agreeing);
  cr_assert_eq(v.n_orders, 2);
  cr_assert_eq(v.orders[0].alike, 1);
  cr_assert_eq(v.orders[1].alike, 1, "tied for both: alike");
  char *text = text_of(&rep);
  cr_assert_not_null(
      strstr(text, "cable, loss 0%, TLS on: h2-multi < http1-fcfs for both (1 page)"), "%s", text);
  cr_assert_not_null(strstr(text, "dsl, loss 0%, TLS on: http1-fcfs = h2-multi for both (1 page)"),
                     "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

static void loader_only(FILE *f) {
  put(f, "a", "http1-fcfs", "loader", "cable", 1000);
  put(f, "a", "h2-multi", "loader", "cable", 800);
  put(f, "a", "h2-single", "chromium", "cable", 900);
}

Test(validate, no_section_without_a_configuration_run_by_both_clients) {
  report rep;
  report_validation v;
  build(&rep, &v, loader_only);
  cr_assert_eq(v.n_pairs, 0);
  char *text = text_of(&rep);
  cr_assert_str_eq(text, "", "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

/* One valid Chromium load of page on cable whose renderer reports its work (ms). */
static void put_work(FILE *f, const char *page, double plt, double tasks, double script,
                     double style, double layout) {
  char work[200];
  snprintf(work, sizeof work,
           ",\"browser_work\":{\"tasks_ms\":%g,\"script_ms\":%g,\"style_ms\":%g,\"layout_ms\":%g}",
           tasks, script, style, layout);
  put_with(f, page, "http1-fcfs", "chromium", "cable", plt, work);
}

/* Page a: Chromium's two loads report 100 and 200 ms of tasks (mean 150) in 1000 ms; page b
 * one load 50 ms in 500 ms, and one that reports nothing (not counted as 0); page c's load
 * reports no script figure, so none of it counts. The loader: a 900, b 480, c 1000. */
static void work(FILE *f) {
  put_work(f, "a", 1000, 100, 40, 10, 20);
  put_work(f, "a", 1000, 200, 60, 20, 30);
  put_work(f, "b", 500, 50, 10, 5, 5);
  put(f, "b", "http1-fcfs", "chromium", "cable", 500);
  put_with(f, "c", "http1-fcfs", "chromium", "cable", 1100,
           ",\"browser_work\":{\"tasks_ms\":70,\"style_ms\":1,\"layout_ms\":1}");
  put(f, "a", "http1-fcfs", "loader", "cable", 900);
  put(f, "b", "http1-fcfs", "loader", "cable", 480);
  put(f, "c", "http1-fcfs", "loader", "cable", 1000);
}

Test(validate, chromiums_own_work_is_the_median_over_pages_of_what_its_loads_report) {
  report rep;
  report_validation v;
  build(&rep, &v, work);
  cr_assert_eq(v.n_pairs, 1);
  const report_validate_pair *pair = &v.pairs[0];
  cr_assert_eq(pair->n_pages, 3);
  cr_assert_eq(pair->work_pages, 2, "c's load lacks a figure");
  cr_assert(CLOSE(pair->work_tasks_ms, (150.0 + 50) / 2, 1e-9), "%f", pair->work_tasks_ms);
  cr_assert(CLOSE(pair->work_script_ms, (50.0 + 10) / 2, 1e-9), "%f", pair->work_script_ms);
  cr_assert(CLOSE(pair->work_style_layout_ms, (40.0 + 10) / 2, 1e-9), "%f",
            pair->work_style_layout_ms);
  cr_assert(CLOSE(pair->work_share, (0.15 + 0.1) / 2, 1e-9), "%f", pair->work_share);
  cr_assert(CLOSE(pair->gap_ms, 100, 1e-9), "gaps 100, 20, 100: %f", pair->gap_ms);
  char *text = text_of(&rep);
  cr_assert_not_null(strstr(text, "Chromium's own work up to the load event"), "%s", text);
  cr_assert_not_null(strstr(text, "http1-fcfs        2     100.0      30.0      25.0     12.5%"),
                     "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

Test(validate, no_work_table_when_no_load_reports_it) {
  report rep;
  report_validation v;
  build(&rep, &v, medians);
  cr_assert_eq(v.pairs[0].work_pages, 0);
  char *text = text_of(&rep);
  cr_assert_null(strstr(text, "own work"), "%s", text);
  free(text);
  report_validate_free(&v);
  report_free(&rep);
}

/* Where each client's page load time ends, as the loader's loads say (settings.load_event):
 * none, all or some of them with --load-event. */
static int loader_load_events; /* 0 none, 1 one of two, 2 both */

static void load_events(FILE *f) {
  put(f, "a", "http1-fcfs", "chromium", "cable", 1000);
  put(f, "b", "http1-fcfs", "chromium", "cable", 500);
  put_with(f, "a", "http1-fcfs", "loader", "cable", 900,
           loader_load_events >= 1 ? ",\"settings\":{\"load_event\":true}" : "");
  put_with(f, "b", "http1-fcfs", "loader", "cable", 480,
           loader_load_events == 2 ? ",\"settings\":{\"load_event\":true}"
                                   : ",\"settings\":{\"load_event\":false}");
}

Test(validate, the_section_says_where_each_page_load_time_ends) {
  static const char *const want[] = {
      "The loader's page load time ends at its last byte, Chromium's at its load event",
      ("ends where Chromium's load event would in 1 of its 2 loads, at its last byte in the "
       "others: not one definition"),
      "Both page load times end at the load event"};
  for (loader_load_events = 0; loader_load_events <= 2; loader_load_events++) {
    report rep;
    report_validation v;
    build(&rep, &v, load_events);
    char *text = text_of(&rep);
    cr_assert_not_null(strstr(text, want[loader_load_events]), "%d: %s", loader_load_events, text);
    free(text);
    report_validate_free(&v);
    report_free(&rep);
  }
}
