/* lab_testutil.h — helpers for the lab tests: corpus paths (skipping when the shared
 * corpus is absent) and loading synthetic HARs from strings. */
#ifndef SPEEDY_TESTS_LAB_TESTUTIL_H
#define SPEEDY_TESTS_LAB_TESTUTIL_H

#include "har.h"

/* $SPEEDY_SHARED_DIR/corpus/har/<name> into buf; skips the test (Criterion's cr_skip)
 * when SPEEDY_SHARED_DIR is unset or the file is missing. */
const char *lab_test_corpus_path(const char *name, char *buf, size_t size);

/* Loads a corpus file, failing the test with the loader's message if it cannot. */
lab_har *lab_test_load_corpus(const char *name);

/* Loads a HAR from a string; returns NULL and the error in err on failure. */
lab_har *lab_test_load_string(const char *name, const char *json, char *err, size_t err_size);

/* The first entry whose URL is url, or NULL. */
const lab_entry *lab_test_entry_by_url(const lab_har *har, const char *url);

#endif
