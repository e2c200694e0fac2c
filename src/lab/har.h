/* har.h — HAR 1.2 recordings as the lab sees them: loading (har_load.c) and the repair of
 * the known ways real recordings lie (har_fix.c).
 *
 * A loaded lab_har owns every string it points to (one arena per file). Entries keep
 * their file order (lab_entry.index == position in log.entries); the derived fields
 * (body_size, start_ms, location, flags, replay_*) are filled by lab_har_fix, which
 * lab_har_load calls. docs/lab.md describes each quirk and the rule applied to it.
 */
#ifndef SPEEDY_LAB_HAR_H
#define SPEEDY_LAB_HAR_H

#include <stddef.h>
#include <stdint.h>

typedef struct lab_header {
  const char *name; /* as recorded (case kept), NUL-terminated */
  const char *value;
  size_t name_len, value_len;
} lab_header;

/* An absolute URL split into what a client needs. host is canonical (host.h: lower case,
 * no trailing dot, A-labels, bracketed IPv6); path is the path and query ("/" when the URL
 * has none), without the fragment. */
typedef struct lab_url {
  const char *scheme; /* "http" or "https" (static) */
  const char *host;
  int port; /* explicit or the scheme's default */
  const char *path;
} lab_url;

/* HAR timings in milliseconds; -1 when not recorded. */
typedef struct lab_timings {
  double blocked, dns, connect, send, wait, receive, ssl;
} lab_timings;

typedef enum lab_size_source {
  LAB_SIZE_UNKNOWN = 0,
  LAB_SIZE_CONTENT_LENGTH,  /* the response's Content-Length header */
  LAB_SIZE_RECORDED,        /* bodySize (or content.size) as recorded */
  LAB_SIZE_CONNECTION_DELTA /* running total minus the previous entry on the connection */
} lab_size_source;

/* What the cold replay does with an entry (see docs/lab.md, "304s"). */
typedef enum lab_replay {
  LAB_REPLAY_AS_RECORDED = 0,
  LAB_REPLAY_AS_200_CACHED, /* a 304 replayed as 200 with the size of a recorded copy */
  LAB_REPLAY_LEFT_OUT       /* not replayed: reason in lab_entry.flags */
} lab_replay;

enum lab_entry_flag {
  LAB_FLAG_CONDITIONAL = 1u << 0,    /* If-None-Match / If-Modified-Since sent */
  LAB_FLAG_NOT_MODIFIED = 1u << 1,   /* 304 */
  LAB_FLAG_POST_NO_BODY = 1u << 2,   /* POST/PUT with no recorded postData.text */
  LAB_FLAG_STATUS_ZERO = 1u << 3,    /* no response (aborted or blocked) */
  LAB_FLAG_REPEATED_URL = 1u << 4,   /* an earlier entry of the file has the same URL */
  LAB_FLAG_NON_ASCII = 1u << 5,      /* URL or header bytes outside printable ASCII */
  LAB_FLAG_REDIRECT = 1u << 6,       /* 3xx with a target (location below) */
  LAB_FLAG_BAD_URL = 1u << 7,        /* not an absolute http(s) URL: never replayed */
  LAB_FLAG_LOCATION_USED = 1u << 8,  /* redirectURL was empty; the target is Location's */
  LAB_FLAG_START_REBUILT = 1u << 9,  /* start_ms rebuilt from finish order and time */
  LAB_FLAG_DOCUMENT_LIKE = 1u << 10, /* requested as a document (Accept text/html..., no XHR) */
  LAB_FLAG_FROM_CACHE = 1u << 11,    /* answered from the browser's cache (_fromCache) */
};

typedef struct lab_entry {
  size_t index; /* position in log.entries */
  const char *method, *url, *request_version;
  lab_url parsed; /* valid unless LAB_FLAG_BAD_URL */
  lab_header *request_headers;
  size_t n_request_headers;
  int64_t request_body_size; /* -1 unknown */
  const char *post_data;     /* postData.text, NULL when not recorded */
  int status;
  const char *status_text, *response_version;
  lab_header *response_headers;
  size_t n_response_headers;
  int64_t recorded_body_size, recorded_content_size; /* as in the file; -1 absent */
  const char *mime_type;                             /* "" when absent */
  const char *redirect_url;                          /* as recorded; "" when absent */
  const char *connection;                            /* "" when absent */
  const char *server_ip;    /* a label from the recording: never an address to use */
  const char *pageref;      /* NULL when absent */
  const char *initiator;    /* _initiator's URL when present, else NULL */
  int from_cache;           /* _fromCache: the browser answered it from its cache */
  double recorded_start_ms; /* startedDateTime in ms since the epoch */
  double time_ms;
  lab_timings timings;

  /* Derived by lab_har_fix. */
  int64_t body_size; /* the best estimate of the response body's bytes; -1 unknown */
  lab_size_source size_source;
  double start_ms, end_ms; /* relative to the file's earliest start */
  const char *location;    /* absolute redirect target, or NULL */
  unsigned flags;          /* lab_entry_flag */
  lab_replay replay;
  int replay_status;   /* what the replay answers (200 for a replayed 304) */
  int64_t replay_size; /* body bytes the replay sends; -1 when left out */
  size_t cached_copy;  /* for LAB_REPLAY_AS_200_CACHED: the entry whose size is used */
} lab_entry;

/* One element of log.pages. */
typedef struct lab_har_page {
  const char *id, *title;
  double start_ms; /* relative to the file's earliest entry start */
} lab_har_page;

typedef struct lab_arena lab_arena; /* private string storage */

typedef struct lab_har {
  const char *path;    /* as given to lab_har_load */
  const char *name;    /* base name */
  const char *creator; /* log.creator.name, "" when absent */
  lab_entry *entries;
  size_t n_entries;
  lab_har_page *pages;
  size_t n_pages;
  double epoch_ms; /* the earliest recorded start, ms since the epoch */
  /* What lab_har_fix found. */
  int whole_second_starts; /* every startedDateTime has no fraction: starts rebuilt */
  int running_total_sizes; /* sizes are running totals per connection */
  size_t n_start_clamped;  /* rebuilt starts that could not keep finish order */
  size_t n_size_matches;   /* delta (or recorded) size == Content-Length, when both known */
  size_t n_size_compared;
  lab_arena *arena;
} lab_har;

/* Loads and repairs one HAR file. Returns 0 and *out (free with lab_har_free), or -1 with
 * one line in err: "<path>:<line>:<column>: <what>" for JSON syntax errors (truncated
 * files included), "<path>: <json path>: <what>" for a field of the wrong type. */
int lab_har_load(const char *path, lab_har **out, char *err, size_t err_size);

/* The same from a buffer; name stands in for the path in errors. */
int lab_har_load_buffer(const char *name, const char *json, size_t len, lab_har **out, char *err,
                        size_t err_size);

void lab_har_free(lab_har *har);

/* Applies every repair (sizes, start times, redirects, cold-cache policy, flags). Called by
 * lab_har_load; exposed for tests. Returns 0 or -1 (out of memory). */
int lab_har_fix(lab_har *har);

/* The first header of that name (case-insensitive), or NULL. */
const lab_header *lab_header_find(const lab_header *headers, size_t n, const char *name);

/* Parses an absolute http(s) URL into out, copying strings into har's arena. Returns 0 or
 * -1 (not an absolute http(s) URL, a host that is no usable name, or out of memory). */
int lab_url_parse(lab_har *har, const char *url, lab_url *out);

/* Resolves reference against base (RFC 3986 5.2, enough for Location headers) into har's
 * arena. Returns the absolute URL or NULL. */
const char *lab_url_resolve(lab_har *har, const char *base, const char *reference);

/* Copies n bytes into har's arena (NUL-terminated); NULL when out of memory. */
char *lab_har_strndup(lab_har *har, const char *s, size_t n);

/* Compares two absolute URLs as the same resource: scheme and host case-insensitive, an
 * empty path equal to "/", the fragment ignored. */
int lab_url_same(const char *a, const char *b);

#endif
