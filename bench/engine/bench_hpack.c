/* bench_hpack.c — HPACK (lib/hpack.c) on the HAR corpus: header-block bytes for our
 * encoder, nghttp2's deflater and SPDY's zlib, and encode+decode speed for ours and
 * nghttp2's, as ratios.
 *
 * The corpus's header sets (har_headers.c) are grouped per (file, host) as bench_engine
 * does: one connection per host, one compression context per direction. HTTP/2 gets the
 * lists as HTTP/2 sends them (":method", ":scheme", ":authority", ":path" or ":status",
 * then the recorded fields; no ":version"); SPDY/3 its own lists through lib/hdblock.c.
 * Sizes are header blocks only (no frame headers). With --crumbs, request cookies are
 * also split into crumbs (RFC 9113 8.2.3) for both HPACK encoders.
 *
 * Prints figures; never run as a test. Built only with jansson; nghttp2's columns only
 * with libnghttp2 (pkg-config libnghttp2), which this program alone links.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "har_headers.h"
#include "hdblock.h"
#include "hpack.h"
#include "mem.h"

#ifdef BENCH_HPACK_NGHTTP2
#include <nghttp2/nghttp2.h>
#endif

#ifndef SPEEDY_SHARED_DIR_DEFAULT
#define SPEEDY_SHARED_DIR_DEFAULT "../shared"
#endif

#define PROG "bench_hpack"
#define TRIALS 5

/* One message as HTTP/2 sends it. */
typedef struct message {
  speedy_hpack_field *fields;
  size_t n_fields;
  const speedy_header *spdy; /* the SPDY/3 list of the same message */
  size_t n_spdy;
  size_t http1_size;
} message;

/* One connection: its requests and responses in order. */
typedef struct connection {
  message *requests, *responses;
  size_t n;
} connection;

typedef struct corpus_view {
  connection *connections;
  size_t n_connections;
  uint64_t messages, fields;
} corpus_view;

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (p == NULL) {
    fprintf(stderr, PROG ": out of memory\n");
    exit(1);
  }
  return p;
}

static speedy_hpack_field field_of(const char *name, size_t name_len, const char *value,
                                   size_t value_len) {
  return (speedy_hpack_field){(const uint8_t *)name, name_len, (const uint8_t *)value, value_len,
                              0};
}

static const speedy_header *find_pseudo(const har_headers_message *m, const char *name) {
  for (size_t i = 0; i < m->n_headers; i++)
    if (strcmp(m->headers[i].name, name) == 0) return &m->headers[i];
  return NULL;
}

/* The HTTP/2 list of a SPDY/3 message; with crumbs, cookies are split at "; ". */
static void to_http2(const har_headers_message *m, int request, int crumbs, message *out) {
  size_t cap = m->n_headers + 4;
  for (size_t i = 0; i < m->n_headers; i++)
    if (crumbs && strcmp(m->headers[i].name, "cookie") == 0)
      for (size_t k = 0; k < m->headers[i].value_len; k++) cap += m->headers[i].value[k] == ';';
  out->fields = xcalloc(cap, sizeof *out->fields);
  out->spdy = m->headers;
  out->n_spdy = m->n_headers;
  out->http1_size = m->http1_size;
  size_t n = 0;
  static const char *const request_pseudo[][2] = {
      {":method", ":method"}, {":scheme", ":scheme"}, {":host", ":authority"}, {":path", ":path"}};
  if (request) {
    for (size_t k = 0; k < 4; k++) {
      const speedy_header *h = find_pseudo(m, request_pseudo[k][0]);
      if (h != NULL)
        out->fields[n++] =
            field_of(request_pseudo[k][1], strlen(request_pseudo[k][1]), h->value, h->value_len);
    }
  } else {
    const speedy_header *h = find_pseudo(m, ":status");
    if (h != NULL) out->fields[n++] = field_of(":status", 7, h->value, h->value_len);
  }
  for (size_t i = 0; i < m->n_headers; i++) {
    const speedy_header *h = &m->headers[i];
    if (h->name[0] == ':') continue;
    if (crumbs && strcmp(h->name, "cookie") == 0) {
      const char *p = h->value, *end = h->value + h->value_len;
      while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *stop = semi ? semi : end;
        out->fields[n++] = field_of(h->name, h->name_len, p, (size_t)(stop - p));
        p = semi ? semi + 1 : end;
        while (p < end && *p == ' ') p++;
      }
      continue;
    }
    out->fields[n++] = field_of(h->name, h->name_len, h->value, h->value_len);
  }
  out->n_fields = n;
}

static void view_build(const har_headers_corpus *corpus, int crumbs, corpus_view *v) {
  har_headers_groups groups;
  if (har_headers_group_by_host(corpus, &groups) != 0) {
    fprintf(stderr, "bench_hpack: out of memory\n");
    exit(1);
  }
  memset(v, 0, sizeof *v);
  v->connections = xcalloc(groups.n_groups > 0 ? groups.n_groups : 1, sizeof *v->connections);
  for (size_t g = 0; g < groups.n_groups; g++) {
    connection *c = &v->connections[v->n_connections++];
    c->n = groups.starts[g + 1] - groups.starts[g];
    c->requests = xcalloc(c->n, sizeof *c->requests);
    c->responses = xcalloc(c->n, sizeof *c->responses);
    for (size_t k = 0; k < c->n; k++) {
      const har_headers_entry *e = &corpus->entries[groups.order[groups.starts[g] + k]];
      to_http2(&e->request, 1, crumbs, &c->requests[k]);
      to_http2(&e->response, 0, crumbs, &c->responses[k]);
      v->fields += c->requests[k].n_fields + c->responses[k].n_fields;
    }
    v->messages += 2 * c->n;
  }
  har_headers_groups_free(&groups);
}

static void view_free(corpus_view *v) {
  for (size_t i = 0; i < v->n_connections; i++) {
    for (size_t k = 0; k < v->connections[i].n; k++) {
      free(v->connections[i].requests[k].fields);
      free(v->connections[i].responses[k].fields);
    }
    free(v->connections[i].requests);
    free(v->connections[i].responses);
  }
  free(v->connections);
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- Sizes ----------------------------------------------------------------------------- */

typedef struct sizes {
  uint64_t request, response;
} sizes;

static uint8_t out_buffer[1 << 20];

static int count_field(void *user, const speedy_hpack_field *f) {
  *(uint64_t *)user += f->name_len + f->value_len;
  return 0;
}

static void fail_hpack(const char *what, int rc) {
  fprintf(stderr, PROG ": %s: %s\n", what, speedy_hpack_strerror(rc));
  exit(1);
}

/* Encodes one direction of a connection with ours; decodes it too when decode is set. */
static uint64_t ours_direction(speedy_mem *mem, const message *m, size_t n, int decode,
                               uint64_t *checksum) {
  speedy_hpack_encoder *e;
  speedy_hpack_decoder *d = NULL;
  int rc = speedy_hpack_encoder_new(mem, &e);
  if (rc == 0 && decode) rc = speedy_hpack_decoder_new(mem, &d);
  if (rc != 0) fail_hpack("new", rc);
  if (d != NULL) speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    int64_t len = speedy_hpack_encode(e, m[i].fields, m[i].n_fields, out_buffer, sizeof out_buffer);
    if (len < 0) fail_hpack("encode", (int)len);
    bytes += (uint64_t)len;
    if (d != NULL) {
      rc = speedy_hpack_decode(d, out_buffer, (size_t)len, 1, count_field, checksum);
      if (rc != 0) fail_hpack("decode", rc);
    }
  }
  speedy_hpack_encoder_del(e);
  speedy_hpack_decoder_del(d);
  return bytes;
}

static sizes sizes_ours(const corpus_view *v) {
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  sizes s = {0, 0};
  uint64_t checksum = 0;
  for (size_t i = 0; i < v->n_connections; i++) {
    const connection *c = &v->connections[i];
    s.request += ours_direction(&mem, c->requests, c->n, 0, &checksum);
    s.response += ours_direction(&mem, c->responses, c->n, 0, &checksum);
  }
  return s;
}

static uint64_t spdy_direction(speedy_mem *mem, const message *m, size_t n, int level,
                               int window_bits, int mem_level) {
  spdy_hdblock_deflater d;
  if (spdy_hdblock_deflater_init(&d, mem, 3, level, window_bits, mem_level) != 0) {
    fprintf(stderr, PROG ": zlib init failed\n");
    exit(1);
  }
  speedy_buf block;
  speedy_buf_init(&block, 1u << 20);
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    speedy_buf_reset(&block);
    int rc = spdy_hdblock_deflate(&d, mem, &block, m[i].spdy, m[i].n_spdy);
    if (rc != 0) {
      fprintf(stderr, PROG ": SPDY deflate: %s\n", speedy_strerror(rc));
      exit(1);
    }
    bytes += speedy_buf_len(&block);
  }
  speedy_buf_free(&block, mem);
  spdy_hdblock_deflater_free(&d);
  return bytes;
}

static sizes sizes_spdy(const corpus_view *v, int level, int window_bits, int mem_level) {
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  sizes s = {0, 0};
  for (size_t i = 0; i < v->n_connections; i++) {
    const connection *c = &v->connections[i];
    s.request += spdy_direction(&mem, c->requests, c->n, level, window_bits, mem_level);
    s.response += spdy_direction(&mem, c->responses, c->n, level, window_bits, mem_level);
  }
  return s;
}

static sizes sizes_http1(const corpus_view *v) {
  sizes s = {0, 0};
  for (size_t i = 0; i < v->n_connections; i++)
    for (size_t k = 0; k < v->connections[i].n; k++) {
      s.request += v->connections[i].requests[k].http1_size;
      s.response += v->connections[i].responses[k].http1_size;
    }
  return s;
}

#ifdef BENCH_HPACK_NGHTTP2
static nghttp2_nv nv_buffer[4096];

static size_t to_nv(const message *m) {
  for (size_t i = 0; i < m->n_fields; i++)
    nv_buffer[i] =
        (nghttp2_nv){(uint8_t *)m->fields[i].name, (uint8_t *)m->fields[i].value,
                     m->fields[i].name_len, m->fields[i].value_len, NGHTTP2_NV_FLAG_NONE};
  return m->n_fields;
}

static uint64_t nghttp2_direction(const message *m, size_t n, int decode, uint64_t *checksum) {
  nghttp2_hd_deflater *def;
  nghttp2_hd_inflater *inf = NULL;
  if (nghttp2_hd_deflate_new(&def, 4096) != 0 || (decode && nghttp2_hd_inflate_new(&inf) != 0)) {
    fprintf(stderr, PROG ": nghttp2 init failed\n");
    exit(1);
  }
  uint64_t bytes = 0;
  for (size_t i = 0; i < n; i++) {
    size_t n_nv = to_nv(&m[i]);
    ssize_t len = nghttp2_hd_deflate_hd(def, out_buffer, sizeof out_buffer, nv_buffer, n_nv);
    if (len < 0) {
      fprintf(stderr, PROG ": nghttp2 deflate: %s\n", nghttp2_strerror((int)len));
      exit(1);
    }
    bytes += (uint64_t)len;
    if (inf == NULL) continue;
    const uint8_t *in = out_buffer;
    size_t left = (size_t)len;
    for (;;) {
      nghttp2_nv nv;
      int flags = 0;
      ssize_t used = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, left, 1);
      if (used < 0) {
        fprintf(stderr, PROG ": nghttp2 inflate: %s\n", nghttp2_strerror((int)used));
        exit(1);
      }
      in += used;
      left -= (size_t)used;
      if (flags & NGHTTP2_HD_INFLATE_EMIT) *checksum += nv.namelen + nv.valuelen;
      if (flags & NGHTTP2_HD_INFLATE_FINAL) {
        nghttp2_hd_inflate_end_headers(inf);
        break;
      }
    }
  }
  nghttp2_hd_deflate_del(def);
  if (inf != NULL) nghttp2_hd_inflate_del(inf);
  return bytes;
}

static sizes sizes_nghttp2(const corpus_view *v) {
  sizes s = {0, 0};
  uint64_t checksum = 0;
  for (size_t i = 0; i < v->n_connections; i++) {
    const connection *c = &v->connections[i];
    s.request += nghttp2_direction(c->requests, c->n, 0, &checksum);
    s.response += nghttp2_direction(c->responses, c->n, 0, &checksum);
  }
  return s;
}
#endif

/* ---- Speed ------------------------------------------------------------------------------ */

/* Fields per second encoding and decoding the whole corpus rounds times, a fresh pair of
 * contexts per connection and direction (as connections come and go). */
static double speed_ours(const corpus_view *v, unsigned rounds, uint64_t *checksum) {
  speedy_mem mem;
  speedy_mem_init_default(&mem);
  double start = now();
  for (unsigned r = 0; r < rounds; r++)
    for (size_t i = 0; i < v->n_connections; i++) {
      const connection *c = &v->connections[i];
      ours_direction(&mem, c->requests, c->n, 1, checksum);
      ours_direction(&mem, c->responses, c->n, 1, checksum);
    }
  return (double)v->fields * rounds / (now() - start);
}

#ifdef BENCH_HPACK_NGHTTP2
static double speed_nghttp2(const corpus_view *v, unsigned rounds, uint64_t *checksum) {
  double start = now();
  for (unsigned r = 0; r < rounds; r++)
    for (size_t i = 0; i < v->n_connections; i++) {
      const connection *c = &v->connections[i];
      nghttp2_direction(c->requests, c->n, 1, checksum);
      nghttp2_direction(c->responses, c->n, 1, checksum);
    }
  return (double)v->fields * rounds / (now() - start);
}
#endif

/* ---- Main ------------------------------------------------------------------------------- */

static void usage(FILE *out) {
  fprintf(out, "Usage: " PROG " [OPTION]...\n"
               "HPACK on the HAR corpus: header-block bytes for speedy's encoder, nghttp2's and\n"
               "SPDY's zlib; encode+decode speed for speedy's and nghttp2's.\n"
               "\n"
               "  --har-dir DIR   HAR files to read (default: $SPEEDY_SHARED_DIR/corpus/har,\n"
               "                  else " SPEEDY_SHARED_DIR_DEFAULT "/corpus/har)\n"
               "  --rounds N      passes over the corpus per speed trial (default 4; 5 trials)\n"
               "  --crumbs        split request cookies into crumbs for HPACK (RFC 9113 8.2.3)\n"
               "  --help          print this help and exit\n");
}

static void print_row(const char *label, sizes s, sizes http1, sizes reference) {
  printf("  %-34s %10llu %10llu %10llu   %5.1f%%  %6.3f\n", label, (unsigned long long)s.request,
         (unsigned long long)s.response, (unsigned long long)(s.request + s.response),
         100.0 *
             (1.0 - (double)(s.request + s.response) / (double)(http1.request + http1.response)),
         (double)(s.request + s.response) / (double)(reference.request + reference.response));
}

int main(int argc, char **argv) {
  const char *har_dir = NULL;
  char default_dir[4096];
  unsigned long rounds = 4;
  int crumbs = 0;
  static const struct option long_options[] = {{"har-dir", required_argument, NULL, 'd'},
                                               {"rounds", required_argument, NULL, 'r'},
                                               {"crumbs", no_argument, NULL, 'c'},
                                               {"help", no_argument, NULL, 'h'},
                                               {NULL, 0, NULL, 0}};
  int opt;
  while ((opt = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
    switch (opt) {
    case 'd':
      har_dir = optarg;
      break;
    case 'r': {
      char *end;
      errno = 0;
      rounds = strtoul(optarg, &end, 10);
      if (errno != 0 || *end != '\0' || rounds < 1 || rounds > 100000) {
        fprintf(stderr, PROG ": --rounds %s: expected 1-100000 (see --help)\n", optarg);
        return 2;
      }
      break;
    }
    case 'c':
      crumbs = 1;
      break;
    case 'h':
      usage(stdout);
      return 0;
    default:
      usage(stderr);
      return 2;
    }
  }
  if (har_dir == NULL) {
    const char *shared = getenv("SPEEDY_SHARED_DIR");
    snprintf(default_dir, sizeof default_dir, "%s/corpus/har",
             shared ? shared : SPEEDY_SHARED_DIR_DEFAULT);
    har_dir = default_dir;
  }
  har_headers_corpus corpus;
  har_headers_init(&corpus);
  if (har_headers_load_dir(&corpus, har_dir, PROG, stderr) <= 0) {
    fprintf(stderr, PROG ": no HAR files in %s\n", har_dir);
    har_headers_free(&corpus);
    return 1;
  }
  corpus_view v;
  view_build(&corpus, crumbs, &v);
  printf("HPACK on the HAR corpus (%s): %zu files, %zu entries, %zu connections (per file and "
         "host), %llu messages, %llu HTTP/2 fields%s\n",
         har_dir, corpus.n_files, corpus.n_entries, v.n_connections, (unsigned long long)v.messages,
         (unsigned long long)v.fields, crumbs ? " (request cookies split into crumbs)" : "");

  sizes http1 = sizes_http1(&v), ours = sizes_ours(&v);
  sizes reference = ours;
  printf("\nheader-block bytes (no frame headers)  %10s %10s %10s   %6s  %6s\n", "requests",
         "responses", "total", "saved", "/ours");
  print_row("HTTP/1.1 text", http1, http1, reference);
  print_row("HPACK speedy (4096, default policy)", ours, http1, reference);
#ifdef BENCH_HPACK_NGHTTP2
  sizes ng = sizes_nghttp2(&v);
  print_row("HPACK nghttp2 deflater (4096)", ng, http1, reference);
#else
  printf("  (nghttp2 not available to this build: pkg-config libnghttp2)\n");
#endif
  print_row("SPDY/3 zlib 6,13,4 (engine default)", sizes_spdy(&v, 6, 13, 4), http1, reference);
  print_row("SPDY/3 zlib 3,13,4 (speedyd default)", sizes_spdy(&v, 3, 13, 4), http1, reference);
  print_row("SPDY/3 zlib 9,15,8", sizes_spdy(&v, 9, 15, 8), http1, reference);

  /* The machine may be shared: trials alternate between the two, and the best of each
   * counts. */
  uint64_t checksum = 0;
  double ours_speed = 0, ng_speed = 0;
  for (int trial = 0; trial < TRIALS; trial++) {
    double x = speed_ours(&v, (unsigned)rounds, &checksum);
    if (x > ours_speed) ours_speed = x;
#ifdef BENCH_HPACK_NGHTTP2
    x = speed_nghttp2(&v, (unsigned)rounds, &checksum);
    if (x > ng_speed) ng_speed = x;
#endif
  }
  printf("\nencode+decode, fresh contexts per connection, best of %d trials of %lu passes\n",
         TRIALS, rounds);
  printf("  HPACK speedy:   %12.0f fields/s\n", ours_speed);
#ifdef BENCH_HPACK_NGHTTP2
  printf("  HPACK nghttp2:  %12.0f fields/s\n", ng_speed);
  printf("\nratios (speedy / nghttp2): bytes %.4f (requests %.4f, responses %.4f), speed %.2fx\n",
         (double)(ours.request + ours.response) / (double)(ng.request + ng.response),
         (double)ours.request / (double)ng.request, (double)ours.response / (double)ng.response,
         ours_speed / ng_speed);
#endif
  (void)ng_speed;
  if (checksum == 0) printf("(nothing decoded)\n");
  view_free(&v);
  har_headers_free(&corpus);
  return 0;
}
