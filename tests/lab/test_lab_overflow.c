/* test_lab_overflow.c — sizes and times from a HAR file at and past the boundaries where
 * the lab's arithmetic could go wrong (src/lab/har_load.c, har_fix.c, page.c):
 *   - bodySize / content.size of 1e300, 2^63, INT64_MAX (a double past INT64_MAX may not
 *     be converted to int64_t), 2^53 (the largest accepted), -1, -1e300 and fractions;
 *     headersSize, which the lab does not read;
 *   - time and timings of 1e308 (their sum would be infinite, and starts NaN), negative,
 *     NaN written as a string or bare, the largest accepted (10^12 ms);
 *   - start times 8,000 years apart;
 *   - page extraction over such files: every start, end and load time stays finite.
 * Synthetic HARs only: no corpus needed. The sanitizer build (UBSan's float-cast-overflow)
 * is what catches an unchecked conversion.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "har.h"
#include "lab_testutil.h"
#include "page.h"

/* One entry: started, the response's bodySize and content.size as JSON text, the entry's
 * time, and its timings object's members. */
static char *har_text(const char *started, const char *body_size, const char *content_size,
                      const char *time, const char *timings) {
  static const char format[] =
      "{\"log\": {\"version\": \"1.2\", \"creator\": {\"name\": \"t\"}, \"entries\": ["
      "{\"startedDateTime\": \"2012-11-03T13:34:16.500Z\", \"time\": 100, \"request\": "
      "{\"method\": \"GET\", \"url\": \"http://a.test/\", \"headers\": [{\"name\": \"Accept\", "
      "\"value\": \"text/html\"}], \"bodySize\": 0, \"headersSize\": 1e300}, \"response\": "
      "{\"status\": 200, \"headers\": [], \"content\": {\"size\": 10, \"mimeType\": "
      "\"text/html\"}, \"bodySize\": 10, \"headersSize\": -1}, \"timings\": {\"wait\": 100}, "
      "\"connection\": \"1\"},"
      "{\"startedDateTime\": \"%s\", \"time\": %s, \"request\": {\"method\": \"GET\", "
      "\"url\": \"http://a.test/x.css\", \"headers\": [{\"name\": \"Referer\", \"value\": "
      "\"http://a.test/\"}], \"bodySize\": -1, \"headersSize\": 18446744073709551616e0}, "
      "\"response\": {\"status\": 200, \"headers\": [], \"content\": {\"size\": %s, "
      "\"mimeType\": \"text/css\"}, \"bodySize\": %s}, \"timings\": {%s}, "
      "\"connection\": \"2\"}]}}";
  size_t cap = sizeof(format) + strlen(started) + strlen(body_size) + strlen(content_size) +
               strlen(time) + strlen(timings);
  char *text = malloc(cap);
  cr_assert_not_null(text);
  snprintf(text, cap, format, started, time, content_size, body_size, timings);
  return text;
}

static lab_har *load_ok(char *text) {
  char err[512] = "";
  lab_har *har = lab_test_load_string("o.har", text, err, sizeof err);
  cr_assert_not_null(har, "expected the HAR to load, got: %s", err);
  free(text);
  return har;
}

static void load_fails(char *text, const char *expected) {
  char err[512] = "";
  lab_har *har = lab_test_load_string("o.har", text, err, sizeof err);
  cr_assert_null(har, "expected a refusal containing \"%s\"", expected);
  cr_assert_not_null(strstr(err, expected), "error \"%s\" lacks \"%s\"", err, expected);
  free(text);
}

/* A file whose second entry's response bodySize is value. */
static char *with_body_size(const char *value) {
  return har_text("2012-11-03T13:34:16.600Z", value, "10", "50", "\"wait\": 50");
}

/* ---- sizes --------------------------------------------------------------------------- */

Test(overflow_har, body_size_of_1e300_is_refused_naming_the_field) {
  load_fails(with_body_size("1e300"), "log.entries[1].response.bodySize");
}

Test(overflow_har, body_size_of_2_pow_63_is_refused) {
  load_fails(with_body_size("9223372036854775808.0"), "log.entries[1].response.bodySize");
}

Test(overflow_har, body_size_of_int64_max_is_refused) {
  /* An integer in JSON, but read as a double it rounds up to 2^63. */
  load_fails(with_body_size("9223372036854775807"), "log.entries[1].response.bodySize");
}

Test(overflow_har, body_size_of_2_pow_64_is_a_json_error) {
  load_fails(with_body_size("18446744073709551616"), "o.har:1:");
}

Test(overflow_har, body_size_of_2_pow_53_is_the_largest_accepted) {
  lab_har *har = load_ok(with_body_size("9007199254740992"));
  cr_assert_eq(har->entries[1].recorded_body_size, 9007199254740992LL);
  cr_assert_eq(har->entries[1].body_size, 9007199254740992LL);
  lab_har_free(har);
  load_fails(with_body_size("9007199254740994"), "log.entries[1].response.bodySize");
}

Test(overflow_har, content_size_of_1e300_is_refused_naming_the_field) {
  load_fails(har_text("2012-11-03T13:34:16.600Z", "-1", "1e300", "50", ""),
             "log.entries[1].response.content.size");
}

Test(overflow_har, request_body_size_of_1e300_is_refused_naming_the_field) {
  char *text = with_body_size("10");
  char *at = strstr(text, "\"bodySize\": -1");
  cr_assert_not_null(at);
  char *fixed = malloc(strlen(text) + 16);
  cr_assert_not_null(fixed);
  snprintf(fixed, strlen(text) + 16, "%.*s\"bodySize\": 1e300%s", (int)(at - text), text,
           at + strlen("\"bodySize\": -1"));
  free(text);
  load_fails(fixed, "log.entries[1].request.bodySize");
}

Test(overflow_har, negative_sizes_mean_not_recorded) {
  const char *values[] = {"-1", "-2", "-1e300", "-9223372036854775808"};
  for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
    lab_har *har = load_ok(har_text("2012-11-03T13:34:16.600Z", values[i], values[i], "50", ""));
    cr_assert_eq(har->entries[1].recorded_body_size, -1, "bodySize %s", values[i]);
    cr_assert_eq(har->entries[1].recorded_content_size, -1, "content.size %s", values[i]);
    cr_assert_eq(har->entries[1].body_size, -1, "%s: size unknown", values[i]);
    lab_har_free(har);
  }
}

Test(overflow_har, fractional_size_is_truncated) {
  lab_har *har = load_ok(with_body_size("1234.99"));
  cr_assert_eq(har->entries[1].recorded_body_size, 1234);
  lab_har_free(har);
}

Test(overflow_har, huge_headers_size_is_ignored) {
  /* har_text writes headersSize 1e300 and 2^64 into the requests: the lab does not read
   * them, so they cannot hurt it. */
  lab_har *har = load_ok(with_body_size("10"));
  cr_assert_eq(har->n_entries, 2);
  lab_har_free(har);
}

/* ---- times --------------------------------------------------------------------------- */

Test(overflow_har, time_of_1e308_is_refused_naming_the_field) {
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "1e308", ""), "log.entries[1].time");
}

Test(overflow_har, timings_whose_sum_overflows_are_refused) {
  /* Without "time" the duration is the sum of the timings: 1e308 + 1e308 is infinite. */
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "-1",
                      "\"blocked\": 1e308, \"dns\": 1e308, \"wait\": 1e308"),
             "log.entries[1].timings.blocked");
}

Test(overflow_har, timings_at_the_largest_accepted_stay_finite) {
  lab_har *har = load_ok(har_text("2012-11-03T13:34:16.600Z", "10", "10", "-1",
                                  "\"blocked\": 1e12, \"dns\": 1e12, \"connect\": 1e12, "
                                  "\"send\": 1e12, \"wait\": 1e12, \"receive\": 1e12"));
  const lab_entry *e = &har->entries[1];
  cr_assert(isfinite(e->start_ms) && isfinite(e->end_ms), "start %g end %g", e->start_ms,
            e->end_ms);
  cr_assert_float_eq(e->end_ms - e->start_ms, 6e12, 1);
  lab_har_free(har);
}

Test(overflow_har, negative_times_mean_not_recorded) {
  lab_har *har = load_ok(har_text("2012-11-03T13:34:16.600Z", "10", "10", "-1e300",
                                  "\"blocked\": -1e300, \"wait\": 40, \"ssl\": -5"));
  const lab_entry *e = &har->entries[1];
  cr_assert_eq(e->time_ms, -1);
  cr_assert_eq(e->timings.blocked, -1);
  cr_assert_eq(e->timings.ssl, -1);
  cr_assert_float_eq(e->end_ms - e->start_ms, 40, 1e-9, "the duration is the timings' sum");
  lab_har_free(har);
}

Test(overflow_har, nan_as_a_string_is_refused_as_not_a_number) {
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "\"NaN\"", ""),
             "log.entries[1].time is a string, not a number");
}

Test(overflow_har, bare_nan_and_infinity_are_json_errors) {
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "NaN", ""), "o.har:1:");
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "Infinity", ""), "o.har:1:");
  load_fails(har_text("2012-11-03T13:34:16.600Z", "10", "10", "1e400", ""), "o.har:1:");
}

Test(overflow_har, start_times_8000_years_apart_stay_exact_enough) {
  lab_har *har = load_ok(har_text("9999-12-31T23:59:59.999Z", "10", "10", "50", ""));
  const lab_entry *e = &har->entries[1];
  cr_assert(isfinite(e->start_ms) && isfinite(e->end_ms));
  /* 2012-11-03T13:34:16.500Z to 9999-12-31T23:59:59.999Z. */
  cr_assert_float_eq(e->start_ms, 252050351143499.0, 1, "start %.1f", e->start_ms);
  lab_har_free(har);
}

Test(overflow_har, start_time_before_the_epoch_is_the_files_origin) {
  lab_har *har = load_ok(har_text("0001-01-01T00:00:00Z", "10", "10", "50", ""));
  cr_assert_eq(har->entries[1].start_ms, 0, "the earliest start is the origin");
  cr_assert_float_eq(har->entries[0].start_ms, 63487546456500.0, 1, "2012 years later: %.1f",
                     har->entries[0].start_ms);
  lab_har_free(har);
}

/* ---- page extraction over such files ---------------------------------------------------- */

static void expect_pages_finite(lab_har *har) {
  lab_page_options options;
  lab_page_options_default(&options);
  lab_page_set set;
  cr_assert_eq(lab_pages_extract(har, &options, &set), 0);
  cr_assert_gt(set.n_pages, 0);
  size_t seen = 0;
  for (size_t p = 0; p < set.n_pages; p++) {
    const lab_page *page = &set.pages[p];
    cr_assert(isfinite(page->load_ms) && isfinite(page->load_ms_cut), "page %zu: load %g / %g", p,
              page->load_ms, page->load_ms_cut);
    cr_assert_geq(page->load_ms, 0);
    for (size_t i = 0; i < page->n_entries; i++) {
      const lab_entry *e = &har->entries[page->entries[i]];
      cr_assert(isfinite(e->start_ms) && isfinite(e->end_ms), "entry %zu: %g..%g", page->entries[i],
                e->start_ms, e->end_ms);
      cr_assert(page->discovery[i] >= 0 && page->discovery[i] <= 1);
      seen++;
    }
  }
  cr_assert_eq(seen + set.n_unassigned, har->n_entries, "every entry in one page");
  lab_pages_free(&set);
}

Test(overflow_har_pages, pages_of_a_file_with_the_largest_sizes_and_times_are_finite) {
  lab_har *har =
      load_ok(har_text("2012-11-03T13:34:16.600Z", "9007199254740992", "9007199254740992", "-1",
                       "\"blocked\": 1e12, \"dns\": 1e12, \"connect\": 1e12, \"send\": 1e12, "
                       "\"wait\": 1e12, \"receive\": 1e12"));
  expect_pages_finite(har);
  lab_har_free(har);
}

Test(overflow_har_pages, pages_of_a_file_spanning_8000_years_are_finite) {
  lab_har *har = load_ok(har_text("9999-12-31T23:59:59.999Z", "10", "10", "1e12", ""));
  expect_pages_finite(har);
  lab_har_free(har);
}

Test(overflow_har_pages, idle_cutoff_of_1e300_cuts_nothing) {
  lab_har *har = load_ok(har_text("9999-12-31T23:59:59.999Z", "10", "10", "1e12", ""));
  lab_page_options options;
  lab_page_options_default(&options);
  options.cutoff_idle_ms = 1e300;
  lab_page_set set;
  cr_assert_eq(lab_pages_extract(har, &options, &set), 0);
  for (size_t p = 0; p < set.n_pages; p++) cr_assert_eq(set.pages[p].n_after_cutoff, 0);
  lab_pages_free(&set);
  lab_har_free(har);
}
