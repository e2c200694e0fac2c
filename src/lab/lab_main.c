/* lab_main.c — the `speedy lab` command: subcommands over HAR recordings.
 *
 *   speedy lab hdr HAR...    header-compression figures, no network
 *   speedy lab pages HAR...  the pages found in each recording, cutoff and dependencies
 *
 * A file that cannot be read gets one error line and the others go on; the exit status is
 * then 1. (`run` and `report` come with the replay.)
 */
#define _POSIX_C_SOURCE 200809L
#include "lab.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "har.h"
#include "hdr.h"
#include "page.h"
#include "plan.h"
#include "report.h"
#include "run.h"
#include "synth.h"

#define PROG "speedy lab"

static void usage(FILE *out) {
  fprintf(out,
          "Usage: speedy lab SUBCOMMAND [OPTION]... HAR...\n"
          "The page-load lab: HAR recordings replayed and measured.\n\n"
          "Subcommands:\n"
          "  hdr     request and response header bytes, HTTP/1.1 text against SPDY compressed\n"
          "  pages   the pages of each recording: where they end, what is cut, dependencies\n"
          "  plan    page plans for the replay server and the loader\n"
          "  run     the experiment: pages x links x protocols through emulated links\n"
          "  report  the experiment's tables and an HTML report with charts\n"
          "  agree   whether two runs of the same matrix agree (repeatability)\n"
          "  merge   join the results files of a matrix's shards into one\n"
          "  synth   write the example corpus of synthetic pages\n\n"
          "'speedy lab SUBCOMMAND --help' lists a subcommand's options. See docs/lab.md.\n");
}

/* --zlib L,W,M */
static int parse_zlib(const char *s, lab_hdr_setting *out) {
  int l, w, m;
  char tail;
  if (sscanf(s, "%d,%d,%d%c", &l, &w, &m, &tail) != 3) return -1;
  if (l < 0 || l > 9 || w < 9 || w > 15 || m < 1 || m > 9) return -1;
  *out = (lab_hdr_setting){l, w, m};
  return 0;
}

static int parse_seconds(const char *s, double *ms) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || *end != '\0' || v < 0 || v > 3600) return -1;
  *ms = v * 1000.0;
  return 0;
}

/* The entry indices hdr measures: the first page's (start order) or every entry. */
static size_t *hdr_selection(const lab_har *har, int all_entries, const lab_page_set *pages,
                             size_t *n) {
  size_t *sel = malloc((har->n_entries ? har->n_entries : 1) * sizeof *sel);
  if (sel == NULL) return NULL;
  if (all_entries || pages->n_pages == 0) {
    /* Every entry in start order: the order the browser sent them. */
    *n = 0;
    for (size_t p = 0; p < pages->n_pages; p++)
      for (size_t i = 0; i < pages->pages[p].n_entries; i++)
        sel[(*n)++] = pages->pages[p].entries[i];
    if (*n != har->n_entries || har->n_pages > 0) {
      *n = har->n_entries;
      for (size_t i = 0; i < har->n_entries; i++) sel[i] = i;
    }
  } else {
    /* The first page the lab would replay (the first page when none would). */
    size_t first = lab_pages_first_usable(har, pages);
    if (first == pages->n_pages) first = 0;
    *n = pages->pages[first].n_entries;
    memcpy(sel, pages->pages[first].entries, *n * sizeof *sel);
  }
  return sel;
}

static void print_figures_json(const char *name, const lab_hdr_figures *f, int comma) {
  printf("    {\"file\": \"%s\", \"entries\": %llu, \"hosts\": %llu, \"skipped\": %llu, "
         "\"request\": {\"http1\": %llu, \"spdy\": %llu, \"reduction\": %.2f}, "
         "\"response\": {\"http1\": %llu, \"spdy\": %llu, \"reduction\": %.2f}, "
         "\"hpack\": {\"skipped\": %llu, "
         "\"request\": {\"http1\": %llu, \"h2\": %llu, \"reduction\": %.2f}, "
         "\"response\": {\"http1\": %llu, \"h2\": %llu, \"reduction\": %.2f}}}%s\n",
         name, (unsigned long long)f->entries, (unsigned long long)f->hosts,
         (unsigned long long)f->skipped, (unsigned long long)f->request_http1,
         (unsigned long long)f->request_spdy, lab_hdr_reduction(f->request_http1, f->request_spdy),
         (unsigned long long)f->response_http1, (unsigned long long)f->response_spdy,
         lab_hdr_reduction(f->response_http1, f->response_spdy),
         (unsigned long long)f->hpack_skipped, (unsigned long long)f->hpack_request_http1,
         (unsigned long long)f->request_hpack,
         lab_hdr_reduction(f->hpack_request_http1, f->request_hpack),
         (unsigned long long)f->hpack_response_http1, (unsigned long long)f->response_hpack,
         lab_hdr_reduction(f->hpack_response_http1, f->response_hpack), comma ? "," : "");
}

/* The HPACK columns come last, so that the SPDY columns keep their places. */
static void print_figures_text(const char *name, const lab_hdr_figures *f) {
  printf("%-28s %5llu %5llu %10llu %9llu %6.2f%% %10llu %9llu %6.2f%% %9llu %6.2f%% %10llu "
         "%6.2f%%\n",
         name, (unsigned long long)f->entries, (unsigned long long)f->hosts,
         (unsigned long long)f->request_http1, (unsigned long long)f->request_spdy,
         lab_hdr_reduction(f->request_http1, f->request_spdy),
         (unsigned long long)f->response_http1, (unsigned long long)f->response_spdy,
         lab_hdr_reduction(f->response_http1, f->response_spdy),
         (unsigned long long)f->request_hpack,
         lab_hdr_reduction(f->hpack_request_http1, f->request_hpack),
         (unsigned long long)f->response_hpack,
         lab_hdr_reduction(f->hpack_response_http1, f->response_hpack));
}

static void figures_add(lab_hdr_figures *total, const lab_hdr_figures *f) {
  total->entries += f->entries;
  total->hosts += f->hosts;
  total->skipped += f->skipped;
  total->no_response += f->no_response;
  total->request_http1 += f->request_http1;
  total->request_spdy += f->request_spdy;
  total->response_http1 += f->response_http1;
  total->response_spdy += f->response_spdy;
  total->hpack_skipped += f->hpack_skipped;
  total->request_hpack += f->request_hpack;
  total->hpack_request_http1 += f->hpack_request_http1;
  total->response_hpack += f->response_hpack;
  total->hpack_response_http1 += f->hpack_response_http1;
}

static int hdr_main(int argc, char **argv) {
  static const struct option long_options[] = {
      {"all-entries", no_argument, NULL, 'a'}, {"zlib", required_argument, NULL, 'z'},
      {"spdy", required_argument, NULL, 's'},  {"json", no_argument, NULL, 'j'},
      {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
  lab_hdr_setting setting, engine_default;
  lab_hdr_setting_default(&engine_default);
  setting = engine_default;
  int all_entries = 0, json = 0, version = 3, c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "az:s:jh", long_options, NULL)) != -1) {
    switch (c) {
    case 'a':
      all_entries = 1;
      break;
    case 'j':
      json = 1;
      break;
    case 'z':
      if (parse_zlib(optarg, &setting) != 0) {
        fprintf(stderr,
                PROG " hdr: bad --zlib '%s' (want LEVEL,WINDOWBITS,MEMLEVEL, e.g. 9,15,8)\n",
                optarg);
        return 2;
      }
      break;
    case 's':
      if (strcmp(optarg, "2") != 0 && strcmp(optarg, "3") != 0 && strcmp(optarg, "3.1") != 0) {
        fprintf(stderr, PROG " hdr: bad --spdy '%s' (2, 3 or 3.1)\n", optarg);
        return 2;
      }
      version = optarg[0] - '0';
      break;
    case 'h':
      printf("Usage: speedy lab hdr [OPTION]... HAR...\n"
             "Header bytes of each recording's first page as HTTP/1.1 text, as SPDY frames\n"
             "compressed by libspeedy (one zlib context per direction per host) and as HTTP/2\n"
             "HEADERS frames with HPACK (one dynamic table per direction per host). No network.\n\n"
             "  -a, --all-entries  every entry of each file, not the first page\n"
             "  -z, --zlib L,W,M   zlib level, windowBits, memLevel (default: the engine's, "
             "%d,%d,%d)\n"
             "  -s, --spdy V       SPDY version 2, 3 or 3.1 (default 3; 3.1 compresses as 3)\n"
             "  -j, --json         JSON instead of a table\n"
             "  -h, --help         this help\n",
             engine_default.level, engine_default.window_bits, engine_default.mem_level);
      return 0;
    default:
      return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, PROG " hdr: no HAR files (try '" PROG " hdr --help')\n");
    return 2;
  }
  lab_page_options page_options;
  lab_page_options_default(&page_options);
  lab_hdr_figures total = {0};
  int failed = 0, printed = 0;
  char err[512];
  if (json)
    printf("{\n  \"speedy_version\": %d,\n  \"zlib\": {\"level\": %d, \"window_bits\": %d, "
           "\"mem_level\": %d},\n  \"selection\": \"%s\",\n  \"files\": [\n",
           version, setting.level, setting.window_bits, setting.mem_level,
           all_entries ? "all-entries" : "first-page");
  else
    printf("SPDY/%d header compression, zlib %d,%d,%d%s, and HTTP/2's HPACK; %s; one context "
           "per direction per host\n%-28s %5s %5s %10s %9s %7s %10s %9s %7s %9s %7s %10s %7s\n",
           version, setting.level, setting.window_bits, setting.mem_level,
           memcmp(&setting, &engine_default, sizeof setting) == 0 ? " (engine default)" : "",
           all_entries ? "every entry" : "first page of each file", "file", "entries", "hosts",
           "req HTTP/1", "req SPDY", "saved", "resp HTTP/1", "resp SPDY", "saved", "req HPACK",
           "saved", "resp HPACK", "saved");
  for (int i = optind; i < argc; i++) {
    lab_har *har = NULL;
    if (lab_har_load(argv[i], &har, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": %s\n", err);
      failed = 1;
      continue;
    }
    lab_page_set pages;
    size_t n = 0, *sel = NULL;
    lab_hdr_figures figures = {0};
    int rc = lab_pages_extract(har, &page_options, &pages);
    if (rc == 0) {
      sel = hdr_selection(har, all_entries, &pages, &n);
      rc = sel == NULL ? -1
                       : lab_hdr_measure(har, sel, n, version, &setting, &figures, err, sizeof err);
      if (sel == NULL) snprintf(err, sizeof err, "%s: out of memory", har->name);
      lab_pages_free(&pages);
    } else {
      snprintf(err, sizeof err, "%s: out of memory", har->name);
    }
    free(sel);
    if (rc != 0) {
      fprintf(stderr, PROG ": %s\n", err);
      failed = 1;
    } else {
      if (json) {
        if (printed) printf(",\n");
        print_figures_json(har->name, &figures, 0);
      } else {
        print_figures_text(har->name, &figures);
      }
      printed++;
      figures_add(&total, &figures);
    }
    lab_har_free(har);
  }
  if (json) {
    printf("  ],\n  \"total\":\n");
    print_figures_json("", &total, 0);
    printf("}\n");
  } else {
    print_figures_text("total", &total);
  }
  return failed ? 1 : 0;
}

static const char *short_url(const char *url, char *buf, size_t size) {
  snprintf(buf, size, "%s", url);
  return buf;
}

static int pages_main(int argc, char **argv) {
  static const struct option long_options[] = {{"all-pages", no_argument, NULL, 'a'},
                                               {"cutoff", required_argument, NULL, 'c'},
                                               {"verbose", no_argument, NULL, 'v'},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  lab_page_options options;
  lab_page_options_default(&options);
  int all_pages = 0, verbose = 0, c;
  optind = 1;
  while ((c = getopt_long(argc, argv, "ac:vh", long_options, NULL)) != -1) {
    switch (c) {
    case 'a':
      all_pages = 1;
      break;
    case 'v':
      verbose = 1;
      break;
    case 'c':
      if (parse_seconds(optarg, &options.cutoff_idle_ms) != 0) {
        fprintf(stderr, PROG " pages: bad --cutoff '%s' (seconds, 0 for none)\n", optarg);
        return 2;
      }
      break;
    case 'h':
      printf(
          "Usage: speedy lab pages [OPTION]... HAR...\n"
          "The pages found in each recording: by default the first that can be replayed, and\n"
          "the pages before it with the reason they are skipped.\n\n"
          "  -a, --all-pages  every page, not only the first\n"
          "  -c, --cutoff S   end of load after S seconds of network idle (default %.0f; 0: none)\n"
          "  -v, --verbose    list each page's entries with their parents\n"
          "  -h, --help       this help\n",
          options.cutoff_idle_ms / 1000);
      return 0;
    default:
      return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, PROG " pages: no HAR files (try '" PROG " pages --help')\n");
    return 2;
  }
  int failed = 0;
  char err[512], buf[128];
  for (int i = optind; i < argc; i++) {
    lab_har *har = NULL;
    if (lab_har_load(argv[i], &har, err, sizeof err) != 0) {
      fprintf(stderr, PROG ": %s\n", err);
      failed = 1;
      continue;
    }
    lab_page_set set;
    if (lab_pages_extract(har, &options, &set) != 0) {
      fprintf(stderr, PROG ": %s: out of memory\n", har->name);
      lab_har_free(har);
      failed = 1;
      continue;
    }
    printf("%s: %zu entries, %zu pages%s%s\n", har->name, har->n_entries, set.n_pages,
           har->running_total_sizes ? ", sizes were running totals per connection" : "",
           har->whole_second_starts ? ", starts rebuilt from whole seconds" : "");
    size_t first = lab_pages_first_usable(har, &set);
    for (size_t p = 0; p < set.n_pages && (all_pages || p <= first); p++) {
      const lab_page *page = &set.pages[p];
      char why[400];
      if (lab_page_skip_reason(har, page, why, sizeof why) != NULL) {
        printf("  page %zu: skipped: %s\n", p + 1, why);
        continue;
      }
      const lab_entry *last =
          page->n_entries ? &har->entries[page->entries[page->n_entries - 1]] : NULL;
      size_t n_304_out = 0;
      for (size_t k = 0; k < page->n_entries; k++)
        if (har->entries[page->entries[k]].replay == LAB_REPLAY_LEFT_OUT) n_304_out++;
      printf("  page %zu: %zu entries from #%zu, document %s%s\n", p + 1, page->n_entries,
             page->n_entries ? page->entries[0] : 0, page->document_missing ? "MISSING " : "",
             page->document_url);
      if (last != NULL)
        printf("    last entry #%zu %s\n", last->index, short_url(last->url, buf, sizeof buf));
      printf("    load %.0f ms; with the cutoff %.0f ms (%zu entries after it); %zu left out of "
             "the cold replay\n",
             page->load_ms, page->load_ms_cut, page->n_after_cutoff, n_304_out);
      for (size_t k = 0; verbose && k < page->n_entries; k++) {
        const lab_entry *e = &har->entries[page->entries[k]];
        size_t parent = page->parent[k], estimated = page->parent_estimated[k];
        printf("    %c #%-4zu %8.0f %6.0f %3d %8lld p=%-5lld e=%-5lld d=%.2f %s\n",
               page->after_cutoff[k] ? 'x' : ' ', e->index, e->start_ms, e->time_ms, e->status,
               (long long)e->body_size,
               parent == LAB_NO_ENTRY ? -1LL : (long long)page->entries[parent],
               estimated == LAB_NO_ENTRY ? -1LL : (long long)page->entries[estimated],
               page->discovery[k], short_url(e->url, buf, sizeof buf));
      }
    }
    lab_pages_free(&set);
    lab_har_free(har);
  }
  return failed ? 1 : 0;
}

int lab_main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *sub = argv[1];
  if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(sub, "agree") == 0) return lab_agree_main(argc - 1, argv + 1);
  if (strcmp(sub, "hdr") == 0) return hdr_main(argc - 1, argv + 1);
  if (strcmp(sub, "merge") == 0) return lab_merge_main(argc - 1, argv + 1);
  if (strcmp(sub, "pages") == 0) return pages_main(argc - 1, argv + 1);
  if (strcmp(sub, "plan") == 0) return lab_plan_main(argc - 1, argv + 1);
  if (strcmp(sub, "report") == 0) return lab_report_main(argc - 1, argv + 1);
  if (strcmp(sub, "run") == 0) return lab_run_main(argc - 1, argv + 1);
  if (strcmp(sub, "synth") == 0) return lab_synth_main(argc - 1, argv + 1);
  fprintf(stderr, PROG ": unknown subcommand '%s' (try '" PROG " --help')\n", sub);
  return 2;
}
