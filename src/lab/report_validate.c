/* report_validate.c — "The loader against Chromium" (report_validate.h): is `speedy load` a
 * fair stand-in for a browser? Per link group (link, loss, TLS) and configuration run by
 * both clients — http1-fcfs and chromium-fcfs, h2-multi and chromium-h2-multi, ... — and
 * per page valid in both: each client's median page load time over its repetitions (a
 * browser's occasional slow start moves a median less than a mean) and their ratio; then
 * per pair how many pages lie within ±10% and the median ratio; and per group whether the
 * two clients rank the configurations alike, by their mean over the pages valid in every
 * configuration of both. One computation (report_validate_build) feeds the text and the
 * HTML, as report_side_by_side does for the SPDY/HTTP/2 tables.
 */
#include "report_validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"

/* The loader's configurations and their names as Chromium's loads (report_config_of). */
static const char *const TWINS[][2] = {
    {"http1-fcfs", "chromium-fcfs"},           {"http1-single", "chromium-single"},
    {"h2-multi", "chromium-h2-multi"},         {"h2-single", "chromium-h2-single"},
    {"h2-coalesced", "chromium-h2-coalesced"}, {"h2-hint", "chromium-h2-hint"}};
#define N_TWINS (sizeof TWINS / sizeof TWINS[0])

int report_validate_within(double ratio) {
  return fabs(ratio - 1) <= REPORT_VALIDATE_TOLERANCE + 1e-9;
}

void report_validate_rank(const double *means, size_t n, size_t *order) {
  /* Insertion sort: a handful of configurations, and stable on ties. */
  for (size_t i = 0; i < n; i++) {
    size_t j = i;
    for (; j > 0 && means[order[j - 1]] > means[i]; j--) order[j] = order[j - 1];
    order[j] = i;
  }
}

static int sign(double a, double b) { return (a > b) - (a < b); }

size_t report_validate_alike(const double *means_a, const double *means_b, size_t n) {
  size_t alike = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      alike += sign(means_a[i], means_a[j]) == sign(means_b[i], means_b[j]);
  return alike;
}

static size_t config_index(const report *r, const char *name) {
  for (size_t c = 0; c < r->n_configs; c++)
    if (strcmp(r->configs[c], name) == 0) return c;
  return SIZE_MAX;
}

static int usable(const report_cell *cell) { return cell->present && cell->plt_median_ms > 0; }

/* The pair of loader configuration a and Chromium's b in group g, over the pages valid in
 * both. Returns 0 (pair->n_pages 0: no such page) or -1 out of memory. */
static int build_pair(const report *r, size_t g, size_t a, size_t b, report_validate_pair *pair) {
  *pair = (report_validate_pair){.group = g, .loader = a, .chromium = b};
  size_t n = r->n_pages ? r->n_pages : 1;
  pair->pages = calloc(n, sizeof *pair->pages);
  /* Per page: the ratios, the gaps, and Chromium's work (tasks, script, style and layout,
   * share), for their medians. */
  double *ratios = calloc(7 * n, sizeof *ratios);
  if (pair->pages == NULL || ratios == NULL) {
    free(ratios);
    return -1;
  }
  double *gaps = ratios + n, *tasks = gaps + n, *script = tasks + n, *style_layout = script + n,
         *work_share = style_layout + n;
  for (size_t p = 0; p < r->n_pages; p++) {
    const report_cell *loader = report_cell_at(r, g, a, p), *browser = report_cell_at(r, g, b, p);
    if (!usable(loader) || !usable(browser)) continue;
    report_validate_page *page = &pair->pages[pair->n_pages];
    page->page = p;
    page->loader_ms = loader->plt_median_ms;
    page->chromium_ms = browser->plt_median_ms;
    page->ratio = page->loader_ms / page->chromium_ms;
    page->within = report_validate_within(page->ratio);
    pair->within += (size_t)page->within;
    gaps[pair->n_pages] = page->chromium_ms - page->loader_ms;
    ratios[pair->n_pages++] = page->ratio;
    if (browser->work_loads > 0) {
      size_t w = pair->work_pages++;
      tasks[w] = browser->work_tasks_ms;
      script[w] = browser->work_script_ms;
      style_layout[w] = browser->work_style_layout_ms;
      work_share[w] = browser->work_tasks_ms / browser->plt_median_ms;
    }
    const report_cell *clients[2] = {loader, browser};
    for (size_t c = 0; c < 2; c++) {
      if (clients[c]->repetitions < 2 || clients[c]->plt_half_ms[1] <= 0) continue;
      pair->self_pages[c]++;
      pair->self_within[c] +=
          (size_t)report_validate_within(clients[c]->plt_half_ms[0] / clients[c]->plt_half_ms[1]);
    }
  }
  pair->median_ratio = lab_stats_median(ratios, pair->n_pages);
  pair->gap_ms = lab_stats_median(gaps, pair->n_pages);
  if (pair->work_pages > 0) {
    pair->work_tasks_ms = lab_stats_median(tasks, pair->work_pages);
    pair->work_script_ms = lab_stats_median(script, pair->work_pages);
    pair->work_style_layout_ms = lab_stats_median(style_layout, pair->work_pages);
    pair->work_share = lab_stats_median(work_share, pair->work_pages);
  }
  free(ratios);
  return 0;
}

/* The order of group g's pairs first..first+n-1 (n at least 2). */
static void build_order(const report *r, const report_validation *v, size_t first, size_t n,
                        report_validate_order *order) {
  *order = (report_validate_order){.group = v->pairs[first].group, .n = n};
  for (size_t k = 0; k < n; k++) order->pair[k] = first + k;
  for (size_t p = 0; p < r->n_pages; p++) {
    int common = 1;
    for (size_t k = 0; k < n && common; k++) {
      const report_validate_pair *pair = &v->pairs[first + k];
      common = usable(report_cell_at(r, pair->group, pair->loader, p)) &&
               usable(report_cell_at(r, pair->group, pair->chromium, p));
    }
    if (!common) continue;
    order->pages++;
    for (size_t k = 0; k < n; k++) {
      const report_validate_pair *pair = &v->pairs[first + k];
      order->loader_ms[k] += report_cell_at(r, pair->group, pair->loader, p)->plt_median_ms;
      order->chromium_ms[k] += report_cell_at(r, pair->group, pair->chromium, p)->plt_median_ms;
    }
  }
  if (order->pages == 0) return;
  for (size_t k = 0; k < n; k++) {
    order->loader_ms[k] /= (double)order->pages;
    order->chromium_ms[k] /= (double)order->pages;
  }
  report_validate_rank(order->loader_ms, n, order->by_loader);
  report_validate_rank(order->chromium_ms, n, order->by_chromium);
  order->comparisons = n * (n - 1) / 2;
  order->alike = report_validate_alike(order->loader_ms, order->chromium_ms, n);
}

int report_validate_build(const report *r, report_validation *v) {
  memset(v, 0, sizeof *v);
  size_t index[N_TWINS][2], n_twins = 0;
  for (size_t t = 0; t < N_TWINS; t++) {
    index[n_twins][0] = config_index(r, TWINS[t][0]);
    index[n_twins][1] = config_index(r, TWINS[t][1]);
    if (index[n_twins][0] != SIZE_MAX && index[n_twins][1] != SIZE_MAX) n_twins++;
  }
  if (n_twins == 0 || r->n_groups == 0) return 0;
  v->pairs = calloc(r->n_groups * n_twins, sizeof *v->pairs);
  v->orders = calloc(r->n_groups, sizeof *v->orders);
  if (v->pairs == NULL || v->orders == NULL) goto oom;
  for (size_t g = 0; g < r->n_groups; g++) {
    size_t first = v->n_pairs;
    for (size_t t = 0; t < n_twins; t++) {
      report_validate_pair *pair = &v->pairs[v->n_pairs];
      if (build_pair(r, g, index[t][0], index[t][1], pair) != 0) {
        free(pair->pages);
        goto oom;
      }
      if (pair->n_pages > 0) {
        v->n_pairs++;
      } else {
        free(pair->pages);
        pair->pages = NULL;
      }
    }
    if (v->n_pairs - first >= 2)
      build_order(r, v, first, v->n_pairs - first, &v->orders[v->n_orders++]);
  }
  return 0;
oom:
  report_validate_free(v);
  return -1;
}

void report_validate_free(report_validation *v) {
  for (size_t i = 0; v->pairs != NULL && i < v->n_pairs; i++) free(v->pairs[i].pages);
  free(v->pairs);
  free(v->orders);
  memset(v, 0, sizeof *v);
}

/* ---- rendering ------------------------------------------------------------------------- */

static double share(size_t part, size_t whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* "http1-fcfs < h2-multi", fastest first, by the loader's names ("=" between equal means). */
static void format_order(const report *r, const report_validation *v,
                         const report_validate_order *o, const size_t *by, const double *means,
                         char *out, size_t size) {
  size_t len = 0;
  out[0] = '\0';
  for (size_t k = 0; k < o->n && len < size; k++) {
    const char *name = r->configs[v->pairs[o->pair[by[k]]].loader];
    const char *between = k == 0 ? "" : means[by[k - 1]] == means[by[k]] ? " = " : " < ";
    int n = snprintf(out + len, size - len, "%s%s", between, name);
    if (n < 0) return;
    len += (size_t)n;
  }
}

/* The link column's width: 26, or the longest group name with a pair. */
static int link_width(const report *r, const report_validation *v) {
  size_t width = 26;
  for (size_t i = 0; i < v->n_pairs; i++)
    if (strlen(r->groups[v->pairs[i].group]) > width) width = strlen(r->groups[v->pairs[i].group]);
  return (int)(width > 64 ? 64 : width);
}

/* "14 of 25 (56.0%)", or "-" without a page loaded twice. */
static void format_self(const report_validate_pair *pair, size_t c, char *out, size_t size) {
  if (pair->self_pages[c] == 0)
    snprintf(out, size, "-");
  else
    snprintf(out, size, "%zu of %zu (%.1f%%)", pair->self_within[c], pair->self_pages[c],
             share(pair->self_within[c], pair->self_pages[c]));
}

static int any_self(const report_validation *v) {
  for (size_t i = 0; i < v->n_pairs; i++)
    if (v->pairs[i].self_pages[0] > 0 || v->pairs[i].self_pages[1] > 0) return 1;
  return 0;
}

/* Where each client's page load time ends (one sentence, no newline). */
static void print_definition(FILE *out, const report *r) {
  if (r->n_loader_load_event == 0)
    fputs("The loader's page load time ends at its last byte, Chromium's at its load event "
          "(speedy load --load-event ends the loader's there too).",
          out);
  else if (r->n_loader_load_event == r->n_loader_loads)
    fputs("Both page load times end at the load event (the loader's where Chromium's would: "
          "speedy load --load-event).",
          out);
  else
    fprintf(out,
            "The loader's page load time ends where Chromium's load event would in %zu of its "
            "%zu loads, at its last byte in the others: not one definition.",
            r->n_loader_load_event, r->n_loader_loads);
}

/* Each client against itself: the agreement its own repetitions allow. */
static void print_self(FILE *out, const report *r, const report_validation *v, int lw) {
  if (!any_self(v)) return;
  fprintf(out,
          "Each client against itself (pages it loaded twice or more: the median of its odd-"
          "numbered loads within +-10%% of its even-numbered loads')\n%-*s %-13s %18s %18s\n",
          lw, "link", "config", "speedy load", "Chromium");
  for (size_t i = 0; i < v->n_pairs; i++) {
    const report_validate_pair *pair = &v->pairs[i];
    char loader[48], browser[48];
    format_self(pair, 0, loader, sizeof loader);
    format_self(pair, 1, browser, sizeof browser);
    fprintf(out, "%-*.*s %-13s %18s %18s\n", lw, lw, r->groups[pair->group],
            r->configs[pair->loader], loader, browser);
  }
}

static int any_work(const report_validation *v) {
  for (size_t i = 0; i < v->n_pairs; i++)
    if (v->pairs[i].work_pages > 0) return 1;
  return 0;
}

#define WORK_TITLE                                                                                 \
  "Chromium's own work up to the load event, which the loader does not model (its "                \
  "renderer's main thread by DevTools' Performance.getMetrics; medians over the pages)"

/* Chromium's work beside how much longer its loads take than the loader's. */
static void print_work(FILE *out, const report *r, const report_validation *v, int lw) {
  if (!any_work(v)) return;
  fprintf(out, WORK_TITLE "\n%-*s %-13s %5s %9s %9s %9s %9s %18s\n", lw, "link", "config", "pages",
          "tasks ms", "script", "style+lay", "of PLT", "Chromium-loader ms");
  for (size_t i = 0; i < v->n_pairs; i++) {
    const report_validate_pair *pair = &v->pairs[i];
    if (pair->work_pages == 0) continue;
    fprintf(out, "%-*.*s %-13s %5zu %9.1f %9.1f %9.1f %8.1f%% %18.0f\n", lw, lw,
            r->groups[pair->group], r->configs[pair->loader], pair->work_pages, pair->work_tasks_ms,
            pair->work_script_ms, pair->work_style_layout_ms, 100 * pair->work_share, pair->gap_ms);
  }
}

int report_validate_print(FILE *out, const report *r) {
  report_validation v;
  if (report_validate_build(r, &v) != 0) return -1;
  if (v.n_pairs == 0) return 0;
  int lw = link_width(r, &v);
  fprintf(out,
          "The loader against Chromium (per page: the median page load time over the "
          "repetitions; ratio: speedy load / Chromium; within: |ratio - 1| <= %.0f%%)\n"
          "%-*s %-13s %5s %17s %12s\n",
          100 * REPORT_VALIDATE_TOLERANCE, lw, "link", "config", "pages", "within +-10%",
          "median ratio");
  for (size_t i = 0; i < v.n_pairs; i++) {
    const report_validate_pair *pair = &v.pairs[i];
    char within[32];
    snprintf(within, sizeof within, "%zu (%.1f%%)", pair->within,
             share(pair->within, pair->n_pages));
    fprintf(out, "%-*.*s %-13s %5zu %17s %12.3f\n", lw, lw, r->groups[pair->group],
            r->configs[pair->loader], pair->n_pages, within, pair->median_ratio);
  }
  print_definition(out, r);
  fputc('\n', out);
  print_self(out, r, &v, lw);
  print_work(out, r, &v, lw);
  if (v.n_orders > 0)
    fprintf(out, "Order of the configurations by mean page load time over the pages valid in "
                 "every one of them with both clients:\n");
  for (size_t i = 0; i < v.n_orders; i++) {
    const report_validate_order *o = &v.orders[i];
    if (o->pages == 0) {
      fprintf(out, "  %s: no page valid in every configuration with both clients\n",
              r->groups[o->group]);
      continue;
    }
    char loader[512], browser[512];
    format_order(r, &v, o, o->by_loader, o->loader_ms, loader, sizeof loader);
    format_order(r, &v, o, o->by_chromium, o->chromium_ms, browser, sizeof browser);
    if (o->alike == o->comparisons)
      fprintf(out, "  %s: %s for both (%zu page%s)\n", r->groups[o->group], loader, o->pages,
              o->pages == 1 ? "" : "s");
    else
      fprintf(out,
              "  %s: DISAGREE: speedy load %s, Chromium %s (%zu of %zu comparisons alike; "
              "%zu page%s)\n",
              r->groups[o->group], loader, browser, o->alike, o->comparisons, o->pages,
              o->pages == 1 ? "" : "s");
  }
  fprintf(out, "Per page: median page load time in ms\n%-44s %-*s %-13s %11s %9s %7s %6s\n", "page",
          lw, "link", "config", "speedy load", "Chromium", "ratio", "+-10%");
  for (size_t i = 0; i < v.n_pairs; i++) {
    const report_validate_pair *pair = &v.pairs[i];
    for (size_t k = 0; k < pair->n_pages; k++) {
      const report_validate_page *page = &pair->pages[k];
      fprintf(out, "%-44.44s %-*.*s %-13s %11.0f %9.0f %7.3f %6s\n", r->pages[page->page], lw, lw,
              r->groups[pair->group], r->configs[pair->loader], page->loader_ms, page->chromium_ms,
              page->ratio, page->within ? "yes" : "no");
    }
  }
  fputc('\n', out);
  report_validate_free(&v);
  return 0;
}

int report_validate_html(FILE *f, const report *r) {
  report_validation v;
  if (report_validate_build(r, &v) != 0) return -1;
  if (v.n_pairs == 0) return 0;
  fprintf(f,
          "<h2>The loader against Chromium</h2>\n<p>Per link group and configuration run by "
          "both clients, over the pages valid in both: each page's median page load time "
          "over its repetitions with <code>speedy load</code> and with Chromium, and their "
          "ratio loader ÷ Chromium. Within: |ratio − 1| ≤ %.0f%%.</p>\n<table class=\"validate\">"
          "<tr><th>link</th><th>config</th><th>pages</th><th>within ±%.0f%%</th><th>share</th>"
          "<th>median ratio</th></tr>\n",
          100 * REPORT_VALIDATE_TOLERANCE, 100 * REPORT_VALIDATE_TOLERANCE);
  for (size_t i = 0; i < v.n_pairs; i++) {
    const report_validate_pair *pair = &v.pairs[i];
    fputs("<tr><td>", f);
    report_html_escape(f, r->groups[pair->group]);
    fprintf(f, "</td><td>%s</td><td>%zu</td><td>%zu</td><td>%.1f%%</td><td>%.3f</td></tr>\n",
            r->configs[pair->loader], pair->n_pages, pair->within,
            share(pair->within, pair->n_pages), pair->median_ratio);
  }
  fputs("</table>\n<p>", f);
  print_definition(f, r);
  fputs("</p>\n", f);
  if (any_self(&v)) {
    fputs("<p>Each client against itself, on the pages it loaded twice or more: how many "
          "have the median of its odd-numbered loads within ±10% of its even-numbered "
          "loads' (the agreement its own repetitions allow).</p>\n<table class=\"validate\">"
          "<tr><th>link</th><th>config</th><th>speedy load</th><th>Chromium</th></tr>\n",
          f);
    for (size_t i = 0; i < v.n_pairs; i++) {
      const report_validate_pair *pair = &v.pairs[i];
      char loader[48], browser[48];
      format_self(pair, 0, loader, sizeof loader);
      format_self(pair, 1, browser, sizeof browser);
      fputs("<tr><td>", f);
      report_html_escape(f, r->groups[pair->group]);
      fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", r->configs[pair->loader], loader,
              browser);
    }
    fputs("</table>\n", f);
  }
  if (any_work(&v)) {
    fputs("<p>" WORK_TITLE ", beside the median of Chromium's page load time minus the "
          "loader's:</p>\n<table class=\"validate\"><tr><th>link</th><th>config</th>"
          "<th>pages</th><th>tasks ms</th><th>script ms</th><th>style and layout ms</th>"
          "<th>tasks ÷ PLT</th><th>Chromium − loader ms</th></tr>\n",
          f);
    for (size_t i = 0; i < v.n_pairs; i++) {
      const report_validate_pair *pair = &v.pairs[i];
      if (pair->work_pages == 0) continue;
      fputs("<tr><td>", f);
      report_html_escape(f, r->groups[pair->group]);
      fprintf(f,
              "</td><td>%s</td><td>%zu</td><td>%.1f</td><td>%.1f</td><td>%.1f</td>"
              "<td>%.1f%%</td><td>%.0f</td></tr>\n",
              r->configs[pair->loader], pair->work_pages, pair->work_tasks_ms, pair->work_script_ms,
              pair->work_style_layout_ms, 100 * pair->work_share, pair->gap_ms);
    }
    fputs("</table>\n", f);
  }
  if (v.n_orders > 0)
    fputs("<p>The configurations ordered by mean page load time, fastest first, over the pages "
          "valid in every one of them with both clients:</p>\n<table class=\"validate-order\">"
          "<tr><th>link</th><th>speedy load</th><th>Chromium</th><th>pages</th>"
          "<th>same order</th></tr>\n",
          f);
  for (size_t i = 0; i < v.n_orders; i++) {
    const report_validate_order *o = &v.orders[i];
    char loader[512] = "–", browser[512] = "–";
    if (o->pages > 0) {
      format_order(r, &v, o, o->by_loader, o->loader_ms, loader, sizeof loader);
      format_order(r, &v, o, o->by_chromium, o->chromium_ms, browser, sizeof browser);
    }
    fputs("<tr><td>", f);
    report_html_escape(f, r->groups[o->group]);
    fputs("</td><td>", f);
    report_html_escape(f, loader);
    fputs("</td><td>", f);
    report_html_escape(f, browser);
    fprintf(f, "</td><td>%zu</td><td>", o->pages);
    if (o->pages == 0)
      fputs("–", f);
    else if (o->alike == o->comparisons)
      fputs("yes", f);
    else
      fprintf(f, "<strong class=\"disagree\">no</strong> (%zu of %zu alike)", o->alike,
              o->comparisons);
    fputs("</td></tr>\n", f);
  }
  if (v.n_orders > 0) fputs("</table>\n", f);
  fputs("<p>Per page, the median page load time in ms of each client:</p>\n"
        "<table class=\"validate-pages\"><tr><th>page</th><th>link</th><th>config</th>"
        "<th>speedy load ms</th><th>Chromium ms</th><th>ratio</th><th>within</th></tr>\n",
        f);
  for (size_t i = 0; i < v.n_pairs; i++) {
    const report_validate_pair *pair = &v.pairs[i];
    for (size_t k = 0; k < pair->n_pages; k++) {
      const report_validate_page *page = &pair->pages[k];
      fputs("<tr><td>", f);
      report_html_escape(f, r->pages[page->page]);
      fputs("</td><td>", f);
      report_html_escape(f, r->groups[pair->group]);
      fprintf(f, "</td><td>%s</td><td>%.0f</td><td>%.0f</td><td>%.3f</td><td>%s</td></tr>\n",
              r->configs[pair->loader], page->loader_ms, page->chromium_ms, page->ratio,
              page->within ? "yes" : "no");
    }
  }
  fputs("</table>\n", f);
  report_validate_free(&v);
  return 0;
}
