/* http_static.c — static file responses: index files, redirects, validators,
 * conditional requests, ranges and gzip (see http_static.h for the rules).
 */
#define _GNU_SOURCE
#include "http_static.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "http_date.h"
#include "http_err.h"
#include "http_mime.h"
#include "http_range.h"

#define ALLOWED_METHODS "GET, HEAD"

/* ---- request header helpers -------------------------------------------------------- */

static const char *skip_ows(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

/* A qvalue ("q=0.5"): 1 when it is above zero. Malformed values count as zero. */
static int qvalue_positive(const char *p, size_t len) {
  size_t i = 0;
  if (len == 0 || (p[0] != '0' && p[0] != '1')) return 0;
  int positive = p[0] == '1';
  i = 1;
  if (i < len && p[i] == '.') {
    for (i++; i < len && p[i] >= '0' && p[i] <= '9'; i++)
      if (p[i] != '0') positive = 1;
  }
  return i == len ? positive : 0;
}

int http_static_accepts_gzip(const char *accept_encoding) {
  if (accept_encoding == NULL) return 0;
  int gzip = -1, star = -1; /* -1 not listed, else 0/1 */
  const char *p = accept_encoding;
  while (*p != '\0') {
    p = skip_ows(p);
    size_t token_len = strcspn(p, ",; \t");
    const char *token = p;
    p += token_len;
    int acceptable = 1;
    /* Parameters: only q matters. */
    for (;;) {
      p = skip_ows(p);
      if (*p != ';') break;
      p = skip_ows(p + 1);
      size_t param_len = strcspn(p, ",;");
      size_t trimmed = param_len;
      while (trimmed > 0 && (p[trimmed - 1] == ' ' || p[trimmed - 1] == '\t')) trimmed--;
      if (trimmed >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=')
        acceptable = qvalue_positive(p + 2, trimmed - 2);
      p += param_len;
    }
    if ((token_len == 4 && strncasecmp(token, "gzip", 4) == 0) ||
        (token_len == 6 && strncasecmp(token, "x-gzip", 6) == 0))
      gzip = acceptable;
    else if (token_len == 1 && token[0] == '*')
      star = acceptable;
    if (*p == ',')
      p++;
    else if (*p != '\0')
      p++; /* junk: skip a byte and go on */
  }
  if (gzip >= 0) return gzip;
  return star > 0;
}

/* RFC 9110 8.8.3.2: weak comparison ignores W/ prefixes; strong comparison matches only
 * two strong tags. */
static int etag_list_matches(const char *list, const char *etag, int strong) {
  if (list == NULL || etag == NULL) return 0;
  const char *tag = etag;
  int tag_weak = strncmp(tag, "W/", 2) == 0;
  if (tag_weak) tag += 2;
  size_t tag_len = strlen(tag);
  const char *p = list;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == ',') p++;
    if (*p == '\0') return 0;
    if (*p == '*') return 1;
    int weak = strncmp(p, "W/", 2) == 0;
    if (weak) p += 2;
    if (*p != '"') return 0; /* malformed: no match */
    const char *close = strchr(p + 1, '"');
    if (close == NULL) return 0;
    size_t len = (size_t)(close - p) + 1;
    if (len == tag_len && memcmp(p, tag, len) == 0 && !(strong && (weak || tag_weak))) return 1;
    p = close + 1;
  }
}

int http_static_etag_matches(const char *if_none_match, const char *etag) {
  return etag_list_matches(if_none_match, etag, 0);
}

/* A list field's value as one line (RFC 9110 5.3: several field lines are one list,
 * joined by commas): the value itself when there is one line, else a joined copy put in
 * *joined for the caller to free. NULL when absent, or when the copy cannot be made. */
static const char *list_value(const http_headers *headers, const char *name, char **joined) {
  *joined = NULL;
  size_t position = 0, n = 0, bytes = 0;
  const http_header *first = http_headers_next(headers, name, &position), *h = first;
  for (; h != NULL; h = http_headers_next(headers, name, &position)) n++, bytes += h->value_len + 2;
  if (n <= 1) return first != NULL ? first->value : NULL;
  char *out = malloc(bytes + 1), *at = out;
  if (out == NULL) return NULL;
  position = 0;
  while ((h = http_headers_next(headers, name, &position)) != NULL) {
    if (at != out) *at++ = ',', *at++ = ' ';
    memcpy(at, h->value, h->value_len);
    at += h->value_len;
  }
  *at = '\0';
  return *joined = out;
}

/* http_static_accepts_gzip over every Accept-Encoding line of the request. */
static int request_accepts_gzip(const http_request *request) {
  char *joined;
  int yes = http_static_accepts_gzip(list_value(&request->headers, "accept-encoding", &joined));
  free(joined);
  return yes;
}

/* ---- the response ------------------------------------------------------------------ */

/* The file chosen to answer with, and what describes it. */
typedef struct representation {
  int fd;               /* the file whose bytes go out (identity or FILE.gz); -1 none */
  struct stat st;       /* the original file's */
  http_body *gzip_body; /* on-the-fly gzip (from the cache), or NULL */
  uint64_t length;      /* of what goes out */
  int gzip;             /* Content-Encoding: gzip */
  int compressible;     /* Vary: Accept-Encoding */
  const char *type;
  char etag[80];
  char last_modified[HTTP_DATE_SIZE];
} representation;

static void representation_free(representation *rep) {
  if (rep->fd >= 0) close(rep->fd);
  rep->fd = -1;
  http_body_del(rep->gzip_body);
  rep->gzip_body = NULL;
}

static uint64_t mtime_ns(const struct stat *st) {
  return (uint64_t)st->st_mtim.tv_sec * 1000000000u + (uint64_t)st->st_mtim.tv_nsec;
}

/* Writes v in lower-case hex (no leading zeros) and returns the end. */
static char *put_hex(char *p, uint64_t v) {
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 15u];
    v >>= 4;
  } while (v != 0);
  while (n > 0) *p++ = tmp[--n];
  return p;
}

/* "size-mtime-inode[suffix]" in hex, quoted; written directly (once per answer: snprintf
 * showed in profiles). cap must hold 3 × 16 + 4 + strlen(suffix) + 1 bytes. */
static void format_etag(char *out, size_t cap, const struct stat *st, const char *suffix) {
  size_t suffix_len = strlen(suffix);
  if (cap < 3 * 16 + 4 + suffix_len + 1) {
    out[0] = '\0';
    return;
  }
  char *p = out;
  *p++ = '"';
  p = put_hex(p, (uint64_t)st->st_size);
  *p++ = '-';
  p = put_hex(p, mtime_ns(st));
  *p++ = '-';
  p = put_hex(p, (uint64_t)st->st_ino);
  memcpy(p, suffix, suffix_len);
  p += suffix_len;
  *p++ = '"';
  *p = '\0';
}

static int add_header(http_response *response, const char *name, const char *value) {
  return http_headers_add_str(&response->headers, name, value);
}

static int add_length(http_response *response, uint64_t length) {
  char text[24], *p = text + sizeof(text);
  *--p = '\0';
  do {
    *--p = (char)('0' + length % 10);
    length /= 10;
  } while (length != 0);
  return add_header(response, "content-length", p);
}

/* The validators and representation headers shared by 200, 206 and 304. */
static int add_validators(http_response *response, const representation *rep) {
  int rv = add_header(response, "etag", rep->etag);
  if (rv == 0) rv = add_header(response, "last-modified", rep->last_modified);
  if (rv == 0 && rep->compressible) rv = add_header(response, "vary", "Accept-Encoding");
  return rv;
}

/* Tries FILE.gz beside rel: it must pass the same wall, be a regular file and not be
 * older than the original. Returns 1 and fills rep when used. */
static int try_precompressed(const http_static_options *options, const char *rel,
                             representation *rep) {
  char gz[HTTP_DOCROOT_MAX_PATH + 1];
  int n = snprintf(gz, sizeof(gz), "%s.gz", rel);
  if (n < 0 || (size_t)n >= sizeof(gz)) return 0;
  int fd;
  struct stat st;
  if (http_docroot_open_file(options->docroot, gz, &fd, &st) != 0) return 0;
  if (!S_ISREG(st.st_mode) || st.st_mtim.tv_sec < rep->st.st_mtim.tv_sec ||
      (st.st_mtim.tv_sec == rep->st.st_mtim.tv_sec &&
       st.st_mtim.tv_nsec < rep->st.st_mtim.tv_nsec)) {
    close(fd);
    return 0;
  }
  close(rep->fd);
  rep->fd = fd;
  rep->length = (uint64_t)st.st_size;
  rep->gzip = 1;
  format_etag(rep->etag, sizeof(rep->etag), &st, "");
  return 1;
}

/* Chooses identity or gzip. Returns 0 or an error worth a 500 (HTTP_ERR_NOMEM,
 * HTTP_ERR_TRUNCATED, HTTP_ERR_IO). */
static int choose_representation(const http_static_options *options, const http_request *request,
                                 const char *rel, representation *rep) {
  rep->type = http_mime_type(rel);
  rep->compressible = options->gzip && http_mime_compressible(rep->type);
  rep->length = (uint64_t)rep->st.st_size;
  format_etag(rep->etag, sizeof(rep->etag), &rep->st, "");
  http_date_format((int64_t)rep->st.st_mtim.tv_sec, rep->last_modified);
  if (!rep->compressible || !request_accepts_gzip(request) ||
      http_headers_get(&request->headers, "range") != NULL)
    return 0;
  if (try_precompressed(options, rel, rep)) return 0;
  if (options->gzip_cache == NULL) return 0;
  uint64_t length;
  int rv = http_gzip_cache_body(options->gzip_cache, rep->fd, &rep->st, &rep->gzip_body, &length);
  if (rv == HTTP_ERR_TOO_LARGE || rv == HTTP_ERR_LIMIT) return 0; /* send it as it is */
  if (rv != 0) return rv;
  rep->gzip = 1;
  rep->length = length;
  format_etag(rep->etag, sizeof(rep->etag), &rep->st, "-gz");
  return 0;
}

/* 412 Precondition Failed per RFC 9110 13.2.2, evaluated first: If-Match (strong
 * comparison) false, or without it If-Unmodified-Since older than the file. */
static int precondition_failed(const http_request *request, const representation *rep) {
  char *joined;
  const char *im = list_value(&request->headers, "if-match", &joined);
  if (im != NULL) {
    int failed = !etag_list_matches(im, rep->etag, 1);
    free(joined);
    return failed;
  }
  const char *ius = http_headers_get(&request->headers, "if-unmodified-since");
  int64_t since;
  if (ius == NULL || http_date_parse(ius, strlen(ius), &since) != 0) return 0; /* 13.1.4 */
  return (int64_t)rep->st.st_mtim.tv_sec > since;
}

/* 304 Not Modified per RFC 9110 13.2.2: If-None-Match first (weak comparison, every
 * line of it); If-Modified-Since only without it. */
static int not_modified(const http_request *request, const representation *rep) {
  char *joined;
  const char *inm = list_value(&request->headers, "if-none-match", &joined);
  if (inm != NULL) {
    int matches = http_static_etag_matches(inm, rep->etag);
    free(joined);
    return matches;
  }
  const char *ims = http_headers_get(&request->headers, "if-modified-since");
  int64_t since;
  if (ims == NULL || http_date_parse(ims, strlen(ims), &since) != 0) return 0;
  return (int64_t)rep->st.st_mtim.tv_sec <= since;
}

/* Whether Range may apply: no If-Range, or one equal to our ETag (strong) or date. */
static int range_allowed(const http_request *request, const representation *rep) {
  const char *if_range = http_headers_get(&request->headers, "if-range");
  if (if_range == NULL) return 1;
  if (strncmp(if_range, "W/", 2) == 0) return 0;
  return strcmp(if_range, rep->etag) == 0 || strcmp(if_range, rep->last_modified) == 0;
}

static int answer_range_not_satisfiable(http_response *response, const representation *rep) {
  int rv = http_response_set_error(response, 416, NULL);
  char range[48];
  snprintf(range, sizeof(range), "bytes */%" PRIu64, (uint64_t)rep->st.st_size);
  if (rv == 0) rv = add_header(response, "content-range", range);
  return rv;
}

/* The 200/206/304/416 answer for an open regular file. */
static int answer_file(const http_static_options *options, const http_request *request,
                       const char *rel, representation *rep, http_response *response) {
  int head = strcmp(request->method, "HEAD") == 0;
  int rv = choose_representation(options, request, rel, rep);
  if (rv != 0) return http_response_set_error_from(response, rv, NULL);

  if (precondition_failed(request, rep)) return http_response_set_error(response, 412, NULL);
  if (not_modified(request, rep)) {
    http_response_reset(response, 304);
    return add_validators(response, rep);
  }

  uint64_t first = 0, length = rep->length;
  int partial = 0;
  if (!head && !rep->gzip && range_allowed(request, rep)) {
    switch (http_range_parse(http_headers_get(&request->headers, "range"), rep->length, &first,
                             &length)) {
    case HTTP_RANGE_SATISFIABLE:
      partial = 1;
      break;
    case HTTP_RANGE_UNSATISFIABLE:
      return answer_range_not_satisfiable(response, rep);
    case HTTP_RANGE_NONE:
    case HTTP_RANGE_MULTIPLE:
      first = 0, length = rep->length;
      break;
    }
  }

  http_response_reset(response, partial ? 206 : 200);
  rv = add_header(response, "content-type", rep->type);
  if (rv == 0 && rep->gzip) rv = add_header(response, "content-encoding", "gzip");
  if (rv == 0) rv = add_length(response, length);
  if (rv == 0) rv = add_validators(response, rep);
  if (rv == 0 && !rep->gzip) rv = add_header(response, "accept-ranges", "bytes");
  if (rv == 0 && partial) {
    char range[80];
    snprintf(range, sizeof(range), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, first,
             first + length - 1, rep->length);
    rv = add_header(response, "content-range", range);
  }
  if (rv != 0 || head) return rv;
  if (rep->gzip_body != NULL) {
    http_response_set_body(response, rep->gzip_body);
    rep->gzip_body = NULL;
  } else {
    http_body *body;
    rv = http_body_new_file(&body, rep->fd, first, length);
    rep->fd = -1; /* the body owns it now, or closed it */
    if (rv != 0) return rv;
    http_response_set_body(response, body);
  }
  return 0;
}

/* 301 to the path with a trailing slash, keeping the query. */
static int answer_redirect(const http_request *request, http_response *response) {
  size_t path_len = http_request_path_length(request);
  const char *query = request->path + path_len;
  size_t query_len = strlen(query);
  char *location = malloc(path_len + 1 + query_len + 1);
  if (location == NULL) return HTTP_ERR_NOMEM;
  memcpy(location, request->path, path_len);
  location[path_len] = '/';
  memcpy(location + path_len + 1, query, query_len + 1);
  int rv = http_response_set_error(response, 301, NULL);
  if (rv == 0) rv = add_header(response, "location", location);
  free(location);
  return rv;
}

int http_static_serve(const http_static_options *options, const http_request *request,
                      http_response *response) {
  if (options == NULL || options->docroot == NULL || request == NULL || response == NULL)
    return HTTP_ERR_INVALID_ARGUMENT;
  int rv;
  if (request->method == NULL || request->path == NULL) {
    rv = http_response_set_error(response, 400, NULL);
    goto done;
  }
  if (strcmp(request->method, "GET") != 0 && strcmp(request->method, "HEAD") != 0) {
    rv = http_response_set_error(response, 405, ALLOWED_METHODS);
    goto done;
  }

  char rel[HTTP_DOCROOT_MAX_PATH + 1];
  int trailing_slash;
  rv = http_docroot_decode_path(request->path, http_request_path_length(request), rel, sizeof(rel),
                                &trailing_slash);
  if (rv != 0) {
    rv = http_response_set_error_from(response, rv, NULL);
    goto done;
  }
  representation rep = {.fd = -1};
  rv = http_docroot_open_file(options->docroot, rel, &rep.fd, &rep.st);
  if (rv != 0) {
    rv = http_response_set_error_from(response, rv, NULL);
    goto done;
  }
  if (S_ISDIR(rep.st.st_mode)) {
    close(rep.fd);
    rep.fd = -1;
    if (!trailing_slash) {
      rv = answer_redirect(request, response);
      goto done;
    }
    const char *index = options->index_name != NULL ? options->index_name : "index.html";
    size_t rel_len = strlen(rel);
    int n = snprintf(rel + rel_len, sizeof(rel) - rel_len, "%s%s", rel_len > 0 ? "/" : "", index);
    if (n < 0 || (size_t)n >= sizeof(rel) - rel_len) {
      rv = http_response_set_error(response, 414, NULL);
      goto done;
    }
    rv = http_docroot_open_file(options->docroot, rel, &rep.fd, &rep.st);
    if (rv == 0 && !S_ISREG(rep.st.st_mode)) {
      close(rep.fd);
      rep.fd = -1;
      rv = HTTP_ERR_NOT_FOUND;
    }
    if (rv != 0) {
      rv = http_response_set_error_from(response, rv, NULL);
      goto done;
    }
  } else if (trailing_slash) {
    close(rep.fd); /* "/file.txt/": a file is not a directory */
    rv = http_response_set_error(response, 404, NULL);
    goto done;
  }
  rv = answer_file(options, request, rel, &rep, response);
  representation_free(&rep);
done:
  if (rv != 0 && rv != HTTP_ERR_NOMEM) rv = http_response_set_error(response, 500, NULL);
  if (rv == 0 && request->method != NULL && strcmp(request->method, "HEAD") == 0)
    http_response_drop_body(response);
  return rv == HTTP_ERR_NOMEM ? rv : 0;
}
