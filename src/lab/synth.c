/* synth.c — the example corpus generator (synth.h).
 *
 * A "median page" is built from per-type medians of the HTTP Archive Web Almanac 2024
 * (Page Weight chapter, desktop): requests and bytes per type as in the table below; the
 * example pages are that page scaled in requests and bytes. Within a type, sizes follow a
 * log-normal spread around the type's mean. Hosts: the document's origin, a static
 * host of the same site and third parties, ~15 hosts at full scale (our assumption, within
 * the 4–78 hosts per page of the shared corpus). Dependencies: the document references
 * CSS, scripts and most images; CSS references fonts and some images; scripts load the
 * rest (with the page as Referer, as recording browsers send). Recorded times come from a
 * simple simulated load so that page extraction and the cutoff see a plausible waterfall.
 */
#define _POSIX_C_SOURCE 200809L
#include "synth.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rng.h"

#define PROG "speedy lab synth"

typedef enum { T_DOCUMENT, T_CSS, T_SCRIPT, T_FONT, T_IMAGE, T_OTHER, T_COUNT } synth_type;

/* Per type at full scale: requests and kilobytes (Web Almanac 2024, desktop medians; the
 * "other" row and the request split of images/other are ours so that the total is the
 * chapter's 71 requests). */
static const struct {
  const char *name, *mime, *ext, *accept;
  int requests;
  double kilobytes;
} TYPES[T_COUNT] = {
    [T_DOCUMENT] = {"document", "text/html; charset=utf-8", "",
                    "text/html,application/xhtml+xml,*/*;q=0.8", 1, 18},
    [T_CSS] = {"css", "text/css", ".css", "text/css,*/*;q=0.1", 7, 78},
    [T_SCRIPT] = {"script", "application/javascript", ".js", "*/*", 24, 613},
    [T_FONT] = {"font", "font/woff2", ".woff2", "application/font-woff2;q=1.0,*/*;q=0.8", 4, 131},
    [T_IMAGE] = {"image", "image/jpeg", ".jpg", "image/avif,image/webp,*/*;q=0.8", 23, 1054},
    [T_OTHER] = {"other", "application/json", ".json", "*/*", 12, 40},
};

/* The example pages: name, scale of requests, scale of bytes, number of hosts. */
static const struct {
  const char *name;
  double request_scale, byte_scale;
  int hosts;
} PAGES[] = {
    {"synth-tiny", 0.15, 0.08, 3},
    {"synth-small", 0.35, 0.2, 6},
    {"synth-medium", 0.7, 0.45, 10},
    {"synth-median", 1.0, 1.0, 15},
};

typedef struct synth_entry {
  synth_type type;
  int host;
  int parent; /* entry index, -1 for the document */
  uint64_t size;
  double start_ms, end_ms;
  char path[96];
} synth_entry;

static double normal(rng_gen *rng) {
  double u = rng_uniform(rng), v = rng_uniform(rng);
  if (u < 1e-12) u = 1e-12;
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

static void host_name(char *out, size_t size, const char *page, int host) {
  static const char *const third[] = {
      "fonts.typeface", "cdn.jslib",       "ads.adnet",  "stats.metrics", "img.photohost",
      "api.social",     "tags.tagmanager", "px.tracker", "video.player",  "cdn.consent",
      "widgets.chat",   "static.ads2",     "beacon.rum"};
  const char *site = page + strlen("synth-");
  if (host == 0)
    snprintf(out, size, "www.%s.example", site);
  else if (host == 1)
    snprintf(out, size, "static.%s.example", site);
  else
    snprintf(out, size, "%s.example", third[(host - 2) % 13]);
}

static void write_headers(FILE *f, const char *const (*h)[2], size_t n) {
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s{\"name\": \"%s\", \"value\": \"%s\"}", i ? ", " : "", h[i][0], h[i][1]);
}

static int write_page(const char *dir, size_t p, uint64_t seed) {
  rng_gen rng;
  rng_seed(&rng, seed * 1000003u + p);
  synth_entry entries[256];
  size_t n = 0;
  int hosts = PAGES[p].hosts;
  for (int t = 0; t < T_COUNT; t++) {
    int count = t == T_DOCUMENT ? 1 : (int)lround(TYPES[t].requests * PAGES[p].request_scale);
    if (count < 1 && (t == T_CSS || t == T_SCRIPT || t == T_IMAGE)) count = 1;
    double weights[128], total = 0;
    for (int i = 0; i < count; i++) total += weights[i] = exp(normal(&rng));
    for (int i = 0; i < count && n < 256; i++) {
      synth_entry *e = &entries[n];
      memset(e, 0, sizeof *e);
      e->type = (synth_type)t;
      double kb =
          TYPES[t].kilobytes * PAGES[p].byte_scale * (t == T_DOCUMENT ? 1 : weights[i] / total);
      e->size = (uint64_t)(kb * 1000) + 50;
      /* Hosts: the document and a third of the rest on the site's own host, the static
       * host for CSS and images, third parties for the others. */
      uint64_t draw = rng_below(&rng, 3);
      if (t == T_DOCUMENT || hosts < 2)
        e->host = 0;
      else if (draw == 0)
        e->host = 0;
      else if ((t == T_CSS || t == T_IMAGE || t == T_FONT) || hosts < 3)
        e->host = 1;
      else
        e->host = 2 + (int)rng_below(&rng, (size_t)(hosts - 2));
      snprintf(e->path, sizeof e->path, t == T_DOCUMENT ? "/" : "/%s/%c%zu%s", TYPES[t].name,
               'a' + (char)(n % 26), n, TYPES[t].ext);
      n++;
    }
  }
  /* Parents: CSS and scripts from the document; fonts from a CSS file; images from the
   * document (two thirds) or CSS; other from a script. */
  size_t first_css = 0, n_css = 0, first_script = 0, n_script = 0;
  for (size_t i = 0; i < n; i++) {
    if (entries[i].type == T_CSS && n_css++ == 0) first_css = i;
    if (entries[i].type == T_SCRIPT && n_script++ == 0) first_script = i;
  }
  for (size_t i = 1; i < n; i++) {
    synth_entry *e = &entries[i];
    e->parent = 0;
    if ((e->type == T_FONT || (e->type == T_IMAGE && rng_below(&rng, 3) == 0)) && n_css > 0)
      e->parent = (int)(first_css + rng_below(&rng, n_css));
    if (e->type == T_OTHER && n_script > 0)
      e->parent = (int)(first_script + rng_below(&rng, n_script));
  }
  /* Recorded times: ~cable, 6 connections' worth of parallelism ignored: each resource
   * starts when its parent ended (children of the document spread through its transfer)
   * and takes one RTT plus its size at 4 Mbit/s. */
  for (size_t i = 0; i < n; i++) {
    synth_entry *e = &entries[i];
    double rtt = 28 + 10 * rng_uniform(&rng), start = 0;
    if (e->parent >= 0) {
      const synth_entry *parent = &entries[e->parent];
      start = parent->type == T_DOCUMENT
                  ? parent->start_ms + (parent->end_ms - parent->start_ms) * (double)i / (double)n
                  : parent->end_ms + 1 + 5 * rng_uniform(&rng);
    }
    e->start_ms = start;
    e->end_ms = start + rtt + (double)e->size * 8 / 4000.0;
  }
  char file[4096], host[128], referer[256], url[512], size_text[32], cookie[64];
  snprintf(file, sizeof file, "%s/%s.har", dir, PAGES[p].name);
  FILE *f = fopen(file, "w");
  if (f == NULL) return -1;
  fprintf(f, "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"speedy lab synth\", "
             "\"version\": \"1\"},\n \"comment\": \"synthetic page shaped by published web "
             "statistics (docs/lab.md); not a recording\",\n \"entries\": [\n");
  snprintf(cookie, sizeof cookie, "sid=%016llx; consent=1", (unsigned long long)rng_next(&rng));
  for (size_t i = 0; i < n; i++) {
    const synth_entry *e = &entries[i];
    host_name(host, sizeof host, PAGES[p].name, e->host);
    snprintf(url, sizeof url, "http://%s%s", host, e->path);
    const synth_entry *parent = e->parent >= 0 ? &entries[e->parent] : NULL;
    /* Script-loaded resources name the page as Referer, like the recording browsers. */
    if (parent != NULL && parent->type == T_SCRIPT) parent = &entries[0];
    char parent_host[128];
    if (parent != NULL) {
      host_name(parent_host, sizeof parent_host, PAGES[p].name, parent->host);
      snprintf(referer, sizeof referer, "http://%s%s", parent_host, parent->path);
    }
    snprintf(size_text, sizeof size_text, "%llu", (unsigned long long)e->size);
    const char *const request[][2] = {
        {"Host", host},
        {"User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"},
        {"Accept", TYPES[e->type].accept},
        {"Accept-Language", "en-US,en;q=0.5"},
        {"Accept-Encoding", "gzip, deflate"},
        {"Connection", "keep-alive"},
        {"Referer", referer},
        {"Cookie", cookie}};
    size_t n_request = parent != NULL ? (e->host <= 1 ? 8 : 7) : 6;
    const char *const response[][2] = {{"Content-Type", TYPES[e->type].mime},
                                       {"Content-Length", size_text},
                                       {"Date", "Tue, 01 Oct 2024 12:00:00 GMT"},
                                       {"Server", "synth"},
                                       {"Cache-Control", e->type == T_DOCUMENT
                                                             ? "private, max-age=0"
                                                             : "public, max-age=31536000"},
                                       {"ETag", "\\\"5f3a-61b2c\\\""},
                                       {"Last-Modified", "Mon, 30 Sep 2024 08:00:00 GMT"}};
    int ms = (int)e->start_ms;
    fprintf(f,
            "  {\"startedDateTime\": \"2024-10-01T12:00:%02d.%03dZ\", \"time\": %.1f, "
            "\"request\": {\"method\": \"GET\", \"url\": \"%s\", \"httpVersion\": \"HTTP/1.1\", "
            "\"headers\": [",
            ms / 1000, ms % 1000, e->end_ms - e->start_ms, url);
    write_headers(f, request, n_request);
    fprintf(f, "], \"queryString\": [], \"cookies\": [], \"headersSize\": -1, \"bodySize\": 0},\n"
               "   \"response\": {\"status\": 200, \"statusText\": \"OK\", \"httpVersion\": "
               "\"HTTP/1.1\", \"headers\": [");
    write_headers(f, response, sizeof response / sizeof response[0]);
    fprintf(f,
            "], \"cookies\": [], \"content\": {\"size\": %llu, \"mimeType\": \"%s\"}, "
            "\"redirectURL\": \"\", \"headersSize\": -1, \"bodySize\": %llu},\n"
            "   \"cache\": {}, \"timings\": {\"send\": 0, \"wait\": %.1f, \"receive\": %.1f}, "
            "\"connection\": \"%d\"}%s\n",
            (unsigned long long)e->size, TYPES[e->type].mime, (unsigned long long)e->size,
            (e->end_ms - e->start_ms) / 2, (e->end_ms - e->start_ms) / 2, e->host,
            i + 1 < n ? "," : "");
  }
  fprintf(f, "]}}\n");
  return fclose(f) == 0 ? 0 : -1;
}

int lab_synth_main(int argc, char **argv) {
  static const struct option long_options[] = {
      {"seed", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  uint64_t seed = 2024;
  int c;
  char *end;
  optind = 1;
  while ((c = getopt_long(argc, argv, "s:h", long_options, NULL)) != -1) {
    switch (c) {
    case 's':
      errno = 0;
      seed = strtoull(optarg, &end, 10);
      if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-') {
        fprintf(stderr, PROG ": bad --seed '%s'\n", optarg);
        return 2;
      }
      break;
    case 'h':
      printf("Usage: speedy lab synth [--seed N] DIR\n"
             "Writes the example corpus: %zu synthetic HAR files shaped like typical pages\n"
             "(docs/lab.md, \"The example corpus\").\n\n"
             "  -s, --seed N  generator seed (default 2024)\n"
             "  -h, --help    this help\n",
             sizeof PAGES / sizeof PAGES[0]);
      return 0;
    default:
      return 2;
    }
  }
  if (optind + 1 != argc) {
    fprintf(stderr, PROG ": want one directory (try '" PROG " --help')\n");
    return 2;
  }
  const char *dir = argv[optind];
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, PROG ": cannot create %s: %s\n", dir, strerror(errno));
    return 1;
  }
  for (size_t p = 0; p < sizeof PAGES / sizeof PAGES[0]; p++)
    if (write_page(dir, p, seed) != 0) {
      fprintf(stderr, PROG ": cannot write %s/%s.har: %s\n", dir, PAGES[p].name, strerror(errno));
      return 1;
    }
  return 0;
}
