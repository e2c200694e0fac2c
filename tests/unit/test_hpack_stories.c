/* test_hpack_stories.c — HPACK (lib/hpack.c) against encoders and decoders this project
 * did not write:
 *
 * - Every story of every encoder in hpack-test-case (nghttp2, go-hpack, python-hpack)
 *   decodes to its headers; every raw-data story encoded by us decodes back in our
 *   decoder and in nghttp2's inflater, and nghttp2's deflater's output decodes in ours.
 *   (tests/hpack/check_python_hpack.py does the same with python-hpack's decoder.)
 *
 * The stories are read from ../shared at run time; tests that need them skip without.
 * tests/hpack/CMakeLists.txt links the story reader and nghttp2 into this program. Suite
 * `hpack`, like test_hpack.c and test_hpack_tables.c; helpers in hpack_testutil.h.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hpack.h"
#include "hpack_testutil.h"
#include "testutil.h"

/* Defined by tests/hpack/CMakeLists.txt, which links the story reader (jansson). */
#ifdef SPEEDY_HPACK_STORIES
#include "../hpack/hpack_story.h"
#endif

#ifdef SPEEDY_HAVE_NGHTTP2
#include <nghttp2/nghttp2.h>
#endif

/* ---- hpack-test-case stories ------------------------------------------------------------ */

#ifdef SPEEDY_HPACK_STORIES

typedef struct story_set {
  char **paths;
  int n;
} story_set;

static story_set stories_of(const char *encoder) {
  const char *root = hpack_story_root();
  if (root == NULL) cr_skip_test("hpack-test-case is absent (../shared/spec/h2/hpack-test-case)");
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/%s", root, encoder);
  story_set s;
  s.n = hpack_story_list(dir, &s.paths);
  cr_assert_gt(s.n, 0, "no stories in %s", dir);
  return s;
}

static void load_story(const char *path, hpack_story *story) {
  char err[512];
  cr_assert_eq(hpack_story_load(path, story, err, sizeof err), 0, "%s", err);
}

/* Decodes every case of every story of one encoder, whole and (every third story) a byte
 * at a time. */
static void decode_stories(const char *encoder) {
  story_set set = stories_of(encoder);
  mem_setup();
  size_t cases = 0;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    for (int bytewise = 0; bytewise <= (i % 3 == 0); bytewise++) {
      speedy_hpack_decoder *d = decoder_new();
      speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
      for (size_t c = 0; c < story.n_cases; c++) {
        hpack_story_case *k = &story.cases[c];
        if (k->has_table_size) speedy_hpack_decoder_set_max_table_size(d, k->table_size);
        got_list g = {0};
        int rc = decode(d, k->wire, k->wire_len, &g, bytewise);
        char where[4400];
        snprintf(where, sizeof where, "%s, case %zu%s", set.paths[i], c,
                 bytewise ? ", a byte at a time" : "");
        cr_assert_eq(rc, 0, "%s: %s", where, speedy_hpack_strerror(rc));
        check_fields(&g, k->fields, k->n_fields, where);
        got_free(&g);
        cases++;
      }
      speedy_hpack_decoder_del(d);
    }
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  cr_assert_gt(cases, 0);
  mem_check();
}

Test(hpack, stories_encoded_by_nghttp2_decode_to_their_headers) { decode_stories("nghttp2"); }
Test(hpack, stories_encoded_by_go_hpack_decode_to_their_headers) { decode_stories("go-hpack"); }
Test(hpack, stories_encoded_by_python_hpack_decode_to_their_headers) {
  decode_stories("python-hpack");
}

Test(hpack, raw_data_stories_encoded_by_us_decode_back_in_ours) {
  story_set set = stories_of("raw-data");
  mem_setup();
  uint64_t plain = 0, packed = 0;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    speedy_hpack_encoder *e = encoder_new();
    speedy_hpack_decoder *d = decoder_new();
    speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      uint8_t *out;
      size_t len = encode(e, k->fields, k->n_fields, &out);
      got_list g = {0};
      cr_assert_eq(decode(d, out, len, &g, c % 4 == 1), 0, "%s, case %zu", set.paths[i], c);
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(speedy_hpack_decoder_table_size(d), speedy_hpack_encoder_table_size(e));
      for (size_t f = 0; f < k->n_fields; f++)
        plain += k->fields[f].name_len + k->fields[f].value_len + 4;
      packed += len;
      free(out);
      got_free(&g);
    }
    speedy_hpack_encoder_del(e);
    speedy_hpack_decoder_del(d);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  cr_assert_lt(packed, plain / 3, "%llu octets of headers took %llu", (unsigned long long)plain,
               (unsigned long long)packed);
  mem_check();
}

#ifdef SPEEDY_HAVE_NGHTTP2

/* Inflates one block with nghttp2 into g. Returns 0 or nghttp2's error. */
static int nghttp2_inflate_block(nghttp2_hd_inflater *inf, const uint8_t *in, size_t len,
                                 got_list *g) {
  for (;;) {
    nghttp2_nv nv;
    int flags = 0;
    ssize_t used = nghttp2_hd_inflate_hd2(inf, &nv, &flags, in, len, 1);
    if (used < 0) return (int)used;
    in += used;
    len -= (size_t)used;
    if (flags & NGHTTP2_HD_INFLATE_EMIT) {
      speedy_hpack_field f = {nv.name, nv.namelen, nv.value, nv.valuelen,
                              (nv.flags & NGHTTP2_NV_FLAG_NO_INDEX) ? SPEEDY_HPACK_NEVER_INDEXED
                                                                    : 0};
      collect(g, &f);
    }
    if (flags & NGHTTP2_HD_INFLATE_FINAL) {
      nghttp2_hd_inflate_end_headers(inf);
      return 0;
    }
    if ((flags & NGHTTP2_HD_INFLATE_EMIT) == 0 && len == 0) return -1;
  }
}

/* Our encoder against nghttp2's inflater; every few cases the peer's table size changes
 * (through 0), so our size updates are checked too. */
static void raw_data_into_nghttp2(int change_sizes) {
  story_set set = stories_of("raw-data");
  mem_setup();
  rng_state = 7;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    speedy_hpack_encoder *e = encoder_new();
    nghttp2_hd_inflater *inf;
    cr_assert_eq(nghttp2_hd_inflate_new(&inf), 0);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      if (change_sizes && c % 5 == 3) {
        size_t sizes[] = {0, 512, 4096, 100, 2048};
        size_t size = sizes[rng() % 5];
        cr_assert_eq(nghttp2_hd_inflate_change_table_size(inf, size), 0);
        speedy_hpack_encoder_set_peer_max_table_size(e, (uint32_t)size);
      }
      uint8_t *out;
      size_t len = encode(e, k->fields, k->n_fields, &out);
      got_list g = {0};
      int rc = nghttp2_inflate_block(inf, out, len, &g);
      cr_assert_eq(rc, 0, "%s, case %zu: nghttp2 says %s", set.paths[i], c, nghttp2_strerror(rc));
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(nghttp2_hd_inflate_get_dynamic_table_size(inf),
                   speedy_hpack_encoder_table_size(e), "%s, case %zu", set.paths[i], c);
      free(out);
      got_free(&g);
    }
    nghttp2_hd_inflate_del(inf);
    speedy_hpack_encoder_del(e);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  mem_check();
}

Test(hpack, raw_data_stories_encoded_by_us_decode_in_nghttp2) { raw_data_into_nghttp2(0); }
Test(hpack, size_updates_we_send_are_understood_by_nghttp2) { raw_data_into_nghttp2(1); }

static void nghttp2_into_ours(int change_sizes) {
  story_set set = stories_of("raw-data");
  mem_setup();
  rng_state = 11;
  for (int i = 0; i < set.n; i++) {
    hpack_story story;
    load_story(set.paths[i], &story);
    nghttp2_hd_deflater *def;
    cr_assert_eq(nghttp2_hd_deflate_new(&def, 4096), 0);
    speedy_hpack_decoder *d = decoder_new();
    speedy_hpack_decoder_set_max_header_list_size(d, UINT32_MAX);
    for (size_t c = 0; c < story.n_cases; c++) {
      hpack_story_case *k = &story.cases[c];
      if (change_sizes && c % 5 == 3) {
        size_t sizes[] = {0, 512, 4096, 100, 2048};
        size_t size = sizes[rng() % 5];
        cr_assert_eq(nghttp2_hd_deflate_change_table_size(def, size), 0);
        speedy_hpack_decoder_set_max_table_size(d, (uint32_t)size);
      }
      nghttp2_nv *nv = calloc(k->n_fields + 1, sizeof *nv);
      for (size_t f = 0; f < k->n_fields; f++)
        nv[f] = (nghttp2_nv){(uint8_t *)k->fields[f].name, (uint8_t *)k->fields[f].value,
                             k->fields[f].name_len, k->fields[f].value_len, NGHTTP2_NV_FLAG_NONE};
      size_t bound = nghttp2_hd_deflate_bound(def, nv, k->n_fields);
      uint8_t *out = malloc(bound);
      ssize_t len = nghttp2_hd_deflate_hd(def, out, bound, nv, k->n_fields);
      cr_assert_geq(len, 0);
      got_list g = {0};
      int rc = decode(d, out, (size_t)len, &g, c % 3 == 2);
      cr_assert_eq(rc, 0, "%s, case %zu: %s", set.paths[i], c, speedy_hpack_strerror(rc));
      check_fields(&g, k->fields, k->n_fields, set.paths[i]);
      cr_assert_eq(speedy_hpack_decoder_table_size(d),
                   nghttp2_hd_deflate_get_dynamic_table_size(def));
      free(out);
      free(nv);
      got_free(&g);
    }
    nghttp2_hd_deflate_del(def);
    speedy_hpack_decoder_del(d);
    hpack_story_free(&story);
  }
  hpack_story_list_free(set.paths, set.n);
  mem_check();
}

Test(hpack, nghttp2_deflater_output_decodes_identically_in_ours) { nghttp2_into_ours(0); }
Test(hpack, nghttp2_size_updates_are_understood_by_ours) { nghttp2_into_ours(1); }

Test(hpack, never_indexed_fields_reach_nghttp2_as_never_indexed) {
  mem_setup();
  speedy_hpack_encoder *e = encoder_new();
  nghttp2_hd_inflater *inf;
  cr_assert_eq(nghttp2_hd_inflate_new(&inf), 0);
  speedy_hpack_field f[] = {field_of("authorization", "Bearer x", 0),
                            field_of("x-secret", "42", SPEEDY_HPACK_NEVER_INDEXED),
                            field_of("x-public", "43", 0)};
  uint8_t *out;
  size_t len = encode(e, f, 3, &out);
  got_list g = {0};
  cr_assert_eq(nghttp2_inflate_block(inf, out, len, &g), 0);
  cr_assert_eq(g.n, 3);
  cr_assert_eq(g.fields[0].flags, SPEEDY_HPACK_NEVER_INDEXED);
  cr_assert_eq(g.fields[1].flags, SPEEDY_HPACK_NEVER_INDEXED);
  cr_assert_eq(g.fields[2].flags, 0);
  free(out);
  got_free(&g);
  nghttp2_hd_inflate_del(inf);
  speedy_hpack_encoder_del(e);
  mem_check();
}

#else

Test(hpack, raw_data_stories_encoded_by_us_decode_in_nghttp2) {
  cr_skip_test("libnghttp2 was not found at configure time (pkg-config libnghttp2)");
}
Test(hpack, nghttp2_deflater_output_decodes_identically_in_ours) {
  cr_skip_test("libnghttp2 was not found at configure time (pkg-config libnghttp2)");
}

#endif /* SPEEDY_HAVE_NGHTTP2 */

#else

Test(hpack, stories_decode_to_their_headers) {
  cr_skip_test("built without the story reader (tests/hpack/CMakeLists.txt, jansson)");
}

#endif /* SPEEDY_HPACK_STORIES */
