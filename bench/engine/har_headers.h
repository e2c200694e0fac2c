/* har_headers.h — the request and response header sets of HAR 1.2 files, as SPDY/3
 * header lists, for bench_engine.
 *
 * Only headers: no bodies, timings or page structure (a later HAR module will own those).
 * Each entry becomes a request header list (":method", ":path", ":version", ":host",
 * ":scheme", then the recorded headers lower-cased) and a response header list
 * (":status", ":version", then the recorded headers lower-cased); connection-specific
 * headers (connection, keep-alive, proxy-connection, transfer-encoding, host) are left
 * out, as SPDY forbids them. The size of the HTTP/1.1 text form of both messages is kept
 * too, as the baseline of compression figures.
 *
 * Files are read in name order and the entries of a file in start-time order (stable: the
 * recordings give whole seconds only). A malformed file is reported and skipped whole.
 */
#ifndef BENCH_ENGINE_HAR_HEADERS_H
#define BENCH_ENGINE_HAR_HEADERS_H

#include <stddef.h>
#include <stdio.h>

#include "speedy/speedy.h"

/* One message's headers. name and value strings are NUL-terminated (the lengths exclude
 * the NUL) and live in the corpus's storage. */
typedef struct har_headers_message {
  speedy_header *headers;
  size_t n_headers;
  size_t http1_size; /* start line + "Name: value\r\n" per recorded header + "\r\n" */
} har_headers_message;

typedef struct har_headers_entry {
  har_headers_message request;
  har_headers_message response;
  const char *host; /* the :host value */
  size_t file;      /* index into har_headers_corpus.files */
} har_headers_entry;

typedef struct har_headers_chunk har_headers_chunk; /* string storage, private */

typedef struct har_headers_corpus {
  har_headers_entry *entries; /* all files, in order */
  size_t n_entries;
  size_t entries_capacity;
  char **files; /* base names of the files loaded */
  size_t n_files;
  size_t n_skipped; /* files that could not be read */
  har_headers_chunk *chunks;
} har_headers_corpus;

/* Sets up an empty corpus. */
void har_headers_init(har_headers_corpus *corpus);

/* Adds one HAR file. Returns 0, or -1 with a one-line reason in err (the corpus is then
 * unchanged). */
int har_headers_load_file(har_headers_corpus *corpus, const char *path, char *err, size_t err_size);

/* Adds every *.har file of dir, in name order. A file that cannot be read is reported on
 * errors ("<prog>: skipping <path>: <reason>") and skipped. Returns the number of files
 * loaded, or -1 when dir itself cannot be read (reason on errors). */
int har_headers_load_dir(har_headers_corpus *corpus, const char *dir, const char *prog,
                         FILE *errors);

/* Frees everything the corpus holds (the struct itself belongs to the caller). */
void har_headers_free(har_headers_corpus *corpus);

/* Entries grouped per (file, host), in corpus order within a group: one compression
 * context per direction per host, as a connection per host would have. */
typedef struct har_headers_groups {
  size_t *order;  /* entry indices, group after group */
  size_t *starts; /* group g is order[starts[g] .. starts[g + 1]) */
  size_t n_groups;
} har_headers_groups;

/* Fills groups (the caller frees it with har_headers_groups_free). 0, or -1 without memory. */
int har_headers_group_by_host(const har_headers_corpus *corpus, har_headers_groups *groups);
void har_headers_groups_free(har_headers_groups *groups);

#endif
