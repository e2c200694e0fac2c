/* har_load.c — reads a HAR 1.2 file (jansson) into lab_har: the fields the lab uses, with
 * one error line naming the file and the position or the field when something is wrong.
 *
 * Rules: a field the lab reads that is present with the wrong JSON type rejects the file
 * (naming its JSON path), and so does a size past 2^53 bytes or a time past 10^12 ms; a
 * negative size or time means "not recorded" (-1); an absent or null optional field takes
 * its documented default.
 * Required: log, log.entries, and per entry startedDateTime, request.method, request.url
 * and response.status. Strings are copied into the har's arena, so the JSON tree is freed
 * before returning. URL parsing and resolution live here too.
 */
#define _POSIX_C_SOURCE 200809L
#include "har.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "host.h"

/* ---- Arena ------------------------------------------------------------------------- */

#define ARENA_CHUNK (64 * 1024)

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t used, size;
  _Alignas(max_align_t) unsigned char bytes[];
} arena_chunk;

struct lab_arena {
  arena_chunk *head;
};

static void *arena_alloc(lab_arena *arena, size_t n) {
  size_t align = _Alignof(max_align_t);
  if (n > SIZE_MAX / 2) return NULL;
  n = (n + align - 1) / align * align;
  arena_chunk *c = arena->head;
  if (c == NULL || c->size - c->used < n) {
    size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
    c = malloc(sizeof *c + size);
    if (c == NULL) return NULL;
    c->used = 0;
    c->size = size;
    c->next = arena->head;
    arena->head = c;
  }
  void *p = c->bytes + c->used;
  c->used += n;
  return p;
}

static void arena_free(lab_arena *arena) {
  if (arena == NULL) return;
  for (arena_chunk *c = arena->head, *next; c != NULL; c = next) {
    next = c->next;
    free(c);
  }
  free(arena);
}

char *lab_har_strndup(lab_har *har, const char *s, size_t n) {
  if (n == SIZE_MAX) return NULL;
  char *p = arena_alloc(har->arena, n + 1);
  if (p == NULL) return NULL;
  if (n > 0) memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

/* ---- URLs -------------------------------------------------------------------------- */

int lab_url_parse(lab_har *har, const char *url, lab_url *out) {
  size_t skip;
  if (strncasecmp(url, "http://", 7) == 0) {
    out->scheme = "http";
    out->port = 80;
    skip = 7;
  } else if (strncasecmp(url, "https://", 8) == 0) {
    out->scheme = "https";
    out->port = 443;
    skip = 8;
  } else {
    return -1;
  }
  const char *authority = url + skip;
  size_t authority_len = strcspn(authority, "/?#");
  const char *at = NULL;
  for (size_t i = 0; i < authority_len; i++)
    if (authority[i] == '@') at = authority + i;
  if (at != NULL) {
    authority_len -= (size_t)(at + 1 - authority);
    authority = at + 1;
  }
  size_t host_len = authority_len;
  if (authority_len > 0 && authority[0] == '[') { /* IPv6 literal */
    const char *close = memchr(authority, ']', authority_len);
    if (close == NULL) return -1;
    host_len = (size_t)(close - authority) + 1;
  } else {
    const char *colon = memchr(authority, ':', authority_len);
    if (colon != NULL) host_len = (size_t)(colon - authority);
  }
  if (host_len == 0) return -1;
  if (host_len < authority_len) {
    if (authority[host_len] != ':') return -1;
    long port = 0;
    size_t digits = authority_len - host_len - 1;
    if (digits == 0 || digits > 5) return -1;
    for (size_t i = host_len + 1; i < authority_len; i++) {
      if (!isdigit((unsigned char)authority[i])) return -1;
      port = port * 10 + (authority[i] - '0');
    }
    if (port < 1 || port > 65535) return -1;
    out->port = (int)port;
  }
  char canonical[LAB_HOST_MAX];
  if (lab_host_canonical(authority, host_len, canonical, sizeof canonical) != 0) return -1;
  out->host = lab_har_strndup(har, canonical, strlen(canonical));
  if (out->host == NULL) return -1;
  const char *rest = authority + authority_len;
  size_t rest_len = strcspn(rest, "#");
  if (rest_len == 0 || rest[0] != '/') {
    /* "http://host" or "http://host?q": the path is "/". */
    char *path = arena_alloc(har->arena, rest_len + 2);
    if (path == NULL) return -1;
    path[0] = '/';
    memcpy(path + 1, rest, rest_len);
    path[rest_len + 1] = '\0';
    out->path = path;
  } else {
    out->path = lab_har_strndup(har, rest, rest_len);
    if (out->path == NULL) return -1;
  }
  return 0;
}

/* RFC 3986 5.2.4: removes "." and ".." segments from a path (in place; it only shrinks). */
static void remove_dot_segments(char *path) {
  const char *in = path;
  char *out = path;
  while (*in != '\0') {
    if (strncmp(in, "../", 3) == 0) {
      in += 3;
    } else if (strncmp(in, "./", 2) == 0) {
      in += 2;
    } else if (strncmp(in, "/./", 3) == 0) {
      in += 2;
    } else if (strcmp(in, "/.") == 0) {
      in += 1;
      *out++ = '/';
      break;
    } else if (strncmp(in, "/../", 4) == 0 || strcmp(in, "/..") == 0) {
      int last = in[3] == '\0';
      in += 3;
      while (out > path && *--out != '/') {
      }
      if (last) {
        *out++ = '/';
        break;
      }
    } else if (strcmp(in, ".") == 0 || strcmp(in, "..") == 0) {
      break;
    } else {
      do *out++ = *in++;
      while (*in != '\0' && *in != '/');
    }
  }
  *out = '\0';
}

const char *lab_url_resolve(lab_har *har, const char *base, const char *reference) {
  size_t ref_len = strlen(reference);
  while (ref_len > 0 && isspace((unsigned char)reference[ref_len - 1])) ref_len--;
  while (ref_len > 0 && isspace((unsigned char)*reference)) reference++, ref_len--;
  if (ref_len == 0) return NULL;
  size_t scheme_len = strcspn(reference, ":/?#");
  if (scheme_len < ref_len && reference[scheme_len] == ':' && scheme_len > 0)
    return lab_har_strndup(har, reference, ref_len); /* absolute */
  const char *base_authority = strstr(base, "://");
  if (base_authority == NULL) return NULL;
  base_authority += 3;
  size_t prefix_len; /* scheme "://" authority, or scheme ":" for "//host" */
  char *joined;
  if (ref_len >= 2 && reference[0] == '/' && reference[1] == '/') {
    prefix_len = (size_t)(base_authority - base) - 2;
    joined = arena_alloc(har->arena, prefix_len + ref_len + 1);
    if (joined == NULL) return NULL;
    memcpy(joined, base, prefix_len);
    memcpy(joined + prefix_len, reference, ref_len);
    joined[prefix_len + ref_len] = '\0';
    return joined;
  }
  prefix_len = (size_t)(base_authority - base) + strcspn(base_authority, "/?#");
  const char *base_path = base + prefix_len;
  size_t base_path_len = strcspn(base_path, "?#");
  size_t base_query_len = strcspn(base_path + base_path_len, "#");
  size_t keep; /* bytes of the base's path (and query) kept before the reference */
  if (reference[0] == '/') {
    keep = 0;
  } else if (reference[0] == '?') {
    keep = base_path_len;
  } else if (reference[0] == '#') {
    keep = base_path_len + base_query_len;
  } else {
    const char *slash = NULL;
    for (size_t i = 0; i < base_path_len; i++)
      if (base_path[i] == '/') slash = base_path + i;
    keep = slash != NULL ? (size_t)(slash - base_path) + 1 : 0;
  }
  int need_slash = reference[0] != '/' && keep == 0;
  size_t total = prefix_len + keep + (size_t)need_slash + ref_len;
  joined = arena_alloc(har->arena, total + 1);
  if (joined == NULL) return NULL;
  memcpy(joined, base, prefix_len + keep);
  if (need_slash) joined[prefix_len + keep] = '/';
  memcpy(joined + prefix_len + keep + need_slash, reference, ref_len);
  joined[total] = '\0';
  /* Dot segments only in the path part. */
  char *path = joined + prefix_len;
  size_t path_len = strcspn(path, "?#");
  char saved = path[path_len];
  char *tail = NULL;
  if (saved != '\0') {
    tail = lab_har_strndup(har, path + path_len, strlen(path + path_len));
    if (tail == NULL) return NULL;
    path[path_len] = '\0';
  }
  remove_dot_segments(path);
  if (tail != NULL) strcat(path, tail); /* the path only shrank: room is there */
  return joined;
}

/* Length of the scheme+authority and of the path (without fragment) of an absolute URL. */
static void url_split_for_compare(const char *url, size_t *origin_len, size_t *path_len) {
  const char *sep = strstr(url, "://");
  const char *authority = sep != NULL ? sep + 3 : url;
  *origin_len = (size_t)(authority - url) + strcspn(authority, "/?#");
  *path_len = strcspn(url + *origin_len, "#");
}

int lab_url_same(const char *a, const char *b) {
  size_t ao, ap, bo, bp;
  url_split_for_compare(a, &ao, &ap);
  url_split_for_compare(b, &bo, &bp);
  if (ao != bo || strncasecmp(a, b, ao) != 0) return 0;
  const char *pa = a + ao, *pb = b + bo;
  /* "" and "/" are the same path; so are "?q" and "/?q". */
  if (ap > 0 && pa[0] == '/' && !(bp > 0 && pb[0] == '/'))
    pa++, ap--;
  else if (bp > 0 && pb[0] == '/' && !(ap > 0 && pa[0] == '/'))
    pb++, bp--;
  return ap == bp && (ap == 0 || memcmp(pa, pb, ap) == 0);
}

const lab_header *lab_header_find(const lab_header *headers, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcasecmp(headers[i].name, name) == 0) return &headers[i];
  return NULL;
}

/* ---- Dates ------------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static long days_from_civil(long y, long m, long d) {
  y -= m <= 2;
  long era = (y >= 0 ? y : y - 399) / 400;
  long yoe = y - era * 400;
  long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int read_digits(const char **p, int n, long *out) {
  long v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)**p)) return -1;
    v = v * 10 + (*(*p)++ - '0');
  }
  *out = v;
  return 0;
}

/* ISO 8601 as HAR writes it: YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm]. Sets *whole to 0 when
 * a non-zero fraction is present. */
static int parse_date(const char *s, double *ms, int *whole) {
  long y, mo, d, h, mi, se;
  const char *p = s;
  if (read_digits(&p, 4, &y) || *p++ != '-' || read_digits(&p, 2, &mo) || *p++ != '-' ||
      read_digits(&p, 2, &d) || (*p != 'T' && *p != ' ') || !*p++ || read_digits(&p, 2, &h) ||
      *p++ != ':' || read_digits(&p, 2, &mi) || *p++ != ':' || read_digits(&p, 2, &se))
    return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return -1;
  double fraction = 0, scale = 0.1;
  if (*p == '.' || *p == ',') {
    p++;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p)) {
      fraction += (*p++ - '0') * scale;
      scale /= 10;
    }
  }
  long offset_minutes = 0;
  if (*p == 'Z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int sign = *p++ == '-' ? -1 : 1;
    long oh, om = 0;
    if (read_digits(&p, 2, &oh)) return -1;
    if (*p == ':') p++;
    if (isdigit((unsigned char)*p) && read_digits(&p, 2, &om)) return -1;
    offset_minutes = sign * (oh * 60 + om);
  }
  if (*p != '\0') return -1;
  double seconds = (double)days_from_civil(y, mo, d) * 86400.0 + (double)(h * 3600 + mi * 60 + se) -
                   (double)offset_minutes * 60.0;
  *ms = seconds * 1000.0 + fraction * 1000.0;
  if (fraction != 0) *whole = 0;
  return 0;
}

/* ---- JSON to model ----------------------------------------------------------------- */

typedef struct loader {
  lab_har *har;
  char *err;
  size_t err_size;
  int failed;
  int whole_seconds;
} loader;

static void fail(loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(loader *ld, const char *fmt, ...) {
  if (ld->failed) return;
  ld->failed = 1;
  int n = snprintf(ld->err, ld->err_size, "%s: ", ld->har->path);
  if (n < 0 || (size_t)n >= ld->err_size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ld->err + n, ld->err_size - (size_t)n, fmt, ap);
  va_end(ap);
}

static const char *json_type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
  case JSON_REAL:
    return "a number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  case JSON_NULL:
    return "null";
  }
  return "unknown";
}

/* A string field: copied into the arena; def when absent or null (NULL def: required). */
static const char *get_string(loader *ld, const json_t *obj, const char *key, const char *def,
                              const char *where) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) {
    if (def == NULL) fail(ld, "%s.%s is missing", where, key);
    return def;
  }
  if (!json_is_string(v)) {
    fail(ld, "%s.%s is %s, not a string", where, key, json_type_name(v));
    return NULL;
  }
  const char *s = lab_har_strndup(ld->har, json_string_value(v), json_string_length(v));
  if (s == NULL) fail(ld, "out of memory");
  return s;
}

/* A string field that may be absent: NULL then. */
static const char *get_optional_string(loader *ld, const json_t *obj, const char *key,
                                       const char *where) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return NULL;
  return get_string(ld, obj, key, NULL, where);
}

/* A number field; def when absent or null. */
static double get_number(loader *ld, const json_t *obj, const char *key, double def,
                         const char *where) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) return def;
  if (!json_is_number(v)) {
    fail(ld, "%s.%s is %s, not a number", where, key, json_type_name(v));
    return def;
  }
  return json_number_value(v);
}

/* The largest size (bytes) and duration (ms) taken from a file: every integer up to 2^53
 * is exact in a double, and 10^12 ms is 31 years. Past them a recording is broken, and the
 * arithmetic would be too: a double beyond INT64_MAX has no int64_t value (converting it is
 * undefined), and timings of 1e308 add up to infinity, then NaN start times. */
#define MAX_RECORDED_BYTES 9007199254740992.0 /* 2^53 */
#define MAX_RECORDED_MS 1e12

/* A size in bytes: -1 when absent, null or negative (HAR's "not known"); fractions are
 * dropped; refused past MAX_RECORDED_BYTES. */
static int64_t get_size(loader *ld, const json_t *obj, const char *key, const char *where) {
  double v = get_number(ld, obj, key, -1, where);
  if (v < 0) return -1;
  if (!(v <= MAX_RECORDED_BYTES)) {
    fail(ld, "%s.%s is %g, more than any recording holds (at most 2^53 bytes)", where, key, v);
    return -1;
  }
  return (int64_t)v;
}

/* A duration in ms: -1 when absent, null or negative (not recorded); refused past
 * MAX_RECORDED_MS. */
static double get_duration(loader *ld, const json_t *obj, const char *key, const char *where) {
  double v = get_number(ld, obj, key, -1, where);
  if (v < 0) return -1;
  if (!(v <= MAX_RECORDED_MS)) {
    fail(ld, "%s.%s is %g ms, longer than any recording (at most 10^12 ms)", where, key, v);
    return -1;
  }
  return v;
}

static const json_t *get_object(loader *ld, const json_t *obj, const char *key, int required,
                                const char *where) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) {
    if (required) fail(ld, "%s.%s is missing", where, key);
    return NULL;
  }
  if (!json_is_object(v)) {
    fail(ld, "%s.%s is %s, not an object", where, key, json_type_name(v));
    return NULL;
  }
  return v;
}

static const json_t *get_array(loader *ld, const json_t *obj, const char *key, int required,
                               const char *where) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL || json_is_null(v)) {
    if (required) fail(ld, "%s.%s is missing", where, key);
    return NULL;
  }
  if (!json_is_array(v)) {
    fail(ld, "%s.%s is %s, not an array", where, key, json_type_name(v));
    return NULL;
  }
  return v;
}

static int load_headers(loader *ld, const json_t *message, const char *where, lab_header **out,
                        size_t *n_out) {
  *out = NULL;
  *n_out = 0;
  const json_t *list = get_array(ld, message, "headers", 0, where);
  if (list == NULL) return ld->failed ? -1 : 0;
  size_t n = json_array_size(list);
  if (n == 0) return 0;
  lab_header *headers = arena_alloc(ld->har->arena, n * sizeof *headers);
  if (headers == NULL) {
    fail(ld, "out of memory");
    return -1;
  }
  char path[96];
  for (size_t i = 0; i < n; i++) {
    const json_t *field = json_array_get(list, i);
    snprintf(path, sizeof path, "%s.headers[%zu]", where, i);
    if (!json_is_object(field)) {
      fail(ld, "%s is %s, not an object", path, json_type_name(field));
      return -1;
    }
    headers[i].name = get_string(ld, field, "name", NULL, path);
    headers[i].value = get_string(ld, field, "value", "", path);
    if (ld->failed) return -1;
    headers[i].name_len = strlen(headers[i].name);
    headers[i].value_len = strlen(headers[i].value);
  }
  *out = headers;
  *n_out = n;
  return 0;
}

static void load_timings(loader *ld, const json_t *entry, const char *where, lab_timings *t) {
  const json_t *obj = get_object(ld, entry, "timings", 0, where);
  char path[64];
  snprintf(path, sizeof path, "%s.timings", where);
  t->blocked = get_duration(ld, obj, "blocked", path);
  t->dns = get_duration(ld, obj, "dns", path);
  t->connect = get_duration(ld, obj, "connect", path);
  t->send = get_duration(ld, obj, "send", path);
  t->wait = get_duration(ld, obj, "wait", path);
  t->receive = get_duration(ld, obj, "receive", path);
  t->ssl = get_duration(ld, obj, "ssl", path);
}

static int load_entry(loader *ld, const json_t *json, size_t index, lab_entry *e) {
  char where[48], sub[64];
  snprintf(where, sizeof where, "log.entries[%zu]", index);
  memset(e, 0, sizeof *e);
  e->index = index;
  if (!json_is_object(json)) {
    fail(ld, "%s is %s, not an object", where, json_type_name(json));
    return -1;
  }
  const char *started = get_string(ld, json, "startedDateTime", NULL, where);
  if (started != NULL && parse_date(started, &e->recorded_start_ms, &ld->whole_seconds) != 0)
    fail(ld, "%s.startedDateTime \"%.40s\" is not an ISO 8601 date", where, started);
  e->time_ms = get_duration(ld, json, "time", where);
  e->connection = get_string(ld, json, "connection", "", where);
  e->server_ip = get_string(ld, json, "serverIPAddress", "", where);
  e->pageref = get_optional_string(ld, json, "pageref", where);
  const json_t *initiator = json_object_get(json, "_initiator");
  if (json_is_string(initiator)) {
    e->initiator = get_optional_string(ld, json, "_initiator", where);
  } else if (json_is_object(initiator)) {
    snprintf(sub, sizeof sub, "%s._initiator", where);
    e->initiator = get_string(ld, initiator, "url", "", sub);
    if (e->initiator != NULL && e->initiator[0] == '\0') e->initiator = NULL;
  }
  /* Chrome's "_fromCache": "memory" or "disk" — answered without the network. */
  const json_t *from_cache = json_object_get(json, "_fromCache");
  e->from_cache = json_is_string(from_cache) && json_string_length(from_cache) > 0;
  load_timings(ld, json, where, &e->timings);
  if (ld->failed) return -1;

  const json_t *request = get_object(ld, json, "request", 1, where);
  snprintf(sub, sizeof sub, "%s.request", where);
  if (request == NULL) return -1;
  e->method = get_string(ld, request, "method", NULL, sub);
  e->url = get_string(ld, request, "url", NULL, sub);
  e->request_version = get_string(ld, request, "httpVersion", "HTTP/1.1", sub);
  e->request_body_size = get_size(ld, request, "bodySize", sub);
  char post_where[80];
  snprintf(post_where, sizeof post_where, "%s.postData", sub);
  const json_t *post = get_object(ld, request, "postData", 0, sub);
  e->post_data = post != NULL ? get_optional_string(ld, post, "text", post_where) : NULL;
  if (ld->failed || load_headers(ld, request, sub, &e->request_headers, &e->n_request_headers) != 0)
    return -1;

  const json_t *response = get_object(ld, json, "response", 1, where);
  snprintf(sub, sizeof sub, "%s.response", where);
  if (response == NULL) return -1;
  const json_t *status = json_object_get(response, "status");
  if (status == NULL || json_is_null(status)) {
    fail(ld, "%s.status is missing", sub);
    return -1;
  }
  if (!json_is_integer(status) || json_integer_value(status) < 0 ||
      json_integer_value(status) > 999) {
    fail(ld, "%s.status is %s, not a status code", sub, json_type_name(status));
    return -1;
  }
  e->status = (int)json_integer_value(status);
  e->status_text = get_string(ld, response, "statusText", "", sub);
  e->response_version = get_string(ld, response, "httpVersion", "HTTP/1.1", sub);
  e->redirect_url = get_string(ld, response, "redirectURL", "", sub);
  e->recorded_body_size = get_size(ld, response, "bodySize", sub);
  const json_t *content = get_object(ld, response, "content", 0, sub);
  char content_where[80];
  snprintf(content_where, sizeof content_where, "%s.content", sub);
  e->recorded_content_size = get_size(ld, content, "size", content_where);
  e->mime_type = get_string(ld, content, "mimeType", "", content_where);
  if (ld->failed ||
      load_headers(ld, response, sub, &e->response_headers, &e->n_response_headers) != 0)
    return -1;
  if (e->method[0] == '\0') {
    fail(ld, "%s.method is empty", sub);
    return -1;
  }
  if (e->request_version[0] == '\0') e->request_version = "HTTP/1.1";
  if (e->response_version[0] == '\0') e->response_version = "HTTP/1.1";
  return 0;
}

static int load_pages(loader *ld, const json_t *log) {
  const json_t *pages = get_array(ld, log, "pages", 0, "log");
  if (pages == NULL) return ld->failed ? -1 : 0;
  size_t n = json_array_size(pages);
  if (n == 0) return 0;
  ld->har->pages = arena_alloc(ld->har->arena, n * sizeof *ld->har->pages);
  if (ld->har->pages == NULL) {
    fail(ld, "out of memory");
    return -1;
  }
  char where[48];
  for (size_t i = 0; i < n; i++) {
    const json_t *page = json_array_get(pages, i);
    snprintf(where, sizeof where, "log.pages[%zu]", i);
    if (!json_is_object(page)) {
      fail(ld, "%s is %s, not an object", where, json_type_name(page));
      return -1;
    }
    lab_har_page *p = &ld->har->pages[i];
    p->id = get_string(ld, page, "id", NULL, where);
    p->title = get_string(ld, page, "title", "", where);
    const char *started = get_string(ld, page, "startedDateTime", "", where);
    int whole = 1;
    p->start_ms = -1;
    if (started != NULL && started[0] != '\0' && parse_date(started, &p->start_ms, &whole) != 0)
      fail(ld, "%s.startedDateTime \"%.40s\" is not an ISO 8601 date", where, started);
    if (ld->failed) return -1;
  }
  ld->har->n_pages = n;
  return 0;
}

static int load_tree(loader *ld, const json_t *root) {
  lab_har *har = ld->har;
  if (!json_is_object(root)) {
    fail(ld, "the top level is %s, not an object", json_type_name(root));
    return -1;
  }
  const json_t *log = get_object(ld, root, "log", 1, "(top level)");
  if (log == NULL) return -1;
  const json_t *creator = get_object(ld, log, "creator", 0, "log");
  har->creator = get_string(ld, creator, "name", "", "log.creator");
  const json_t *entries = get_array(ld, log, "entries", 1, "log");
  if (entries == NULL || load_pages(ld, log) != 0) return -1;
  size_t n = json_array_size(entries);
  if (n > 0) {
    har->entries = calloc(n, sizeof *har->entries);
    if (har->entries == NULL) {
      fail(ld, "out of memory");
      return -1;
    }
  }
  ld->whole_seconds = 1;
  for (size_t i = 0; i < n; i++) {
    if (load_entry(ld, json_array_get(entries, i), i, &har->entries[i]) != 0) return -1;
    har->n_entries = i + 1;
  }
  har->whole_second_starts = n > 0 && ld->whole_seconds;
  har->epoch_ms = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || har->entries[i].recorded_start_ms < har->epoch_ms)
      har->epoch_ms = har->entries[i].recorded_start_ms;
  for (size_t i = 0; i < har->n_pages; i++)
    if (har->pages[i].start_ms >= 0) har->pages[i].start_ms -= har->epoch_ms;
  return 0;
}

static lab_har *har_new(const char *path) {
  lab_har *har = calloc(1, sizeof *har);
  if (har == NULL) return NULL;
  har->arena = calloc(1, sizeof *har->arena);
  if (har->arena == NULL) {
    free(har);
    return NULL;
  }
  har->path = lab_har_strndup(har, path, strlen(path));
  if (har->path == NULL) {
    lab_har_free(har);
    return NULL;
  }
  const char *slash = strrchr(har->path, '/');
  har->name = slash != NULL ? slash + 1 : har->path;
  return har;
}

static int finish_load(lab_har *har, json_t *root, const json_error_t *jerr, lab_har **out,
                       char *err, size_t err_size) {
  if (root == NULL) {
    /* jansson's own position: line and column of the first byte it could not use. */
    snprintf(err, err_size, "%s:%d:%d: %s", har->path, jerr->line, jerr->column, jerr->text);
    lab_har_free(har);
    return -1;
  }
  loader ld = {har, err, err_size, 0, 1};
  int rc = load_tree(&ld, root);
  json_decref(root);
  if (rc == 0 && lab_har_fix(har) != 0) {
    fail(&ld, "out of memory");
    rc = -1;
  }
  if (rc != 0) {
    lab_har_free(har);
    return -1;
  }
  *out = har;
  return 0;
}

int lab_har_load(const char *path, lab_har **out, char *err, size_t err_size) {
  lab_har *har = har_new(path);
  if (har == NULL) {
    snprintf(err, err_size, "%s: out of memory", path);
    return -1;
  }
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    snprintf(err, err_size, "%s: %s", path, strerror(errno));
    lab_har_free(har);
    return -1;
  }
  json_error_t jerr;
  json_t *root = json_loadf(f, 0, &jerr);
  fclose(f);
  return finish_load(har, root, &jerr, out, err, err_size);
}

int lab_har_load_buffer(const char *name, const char *json, size_t len, lab_har **out, char *err,
                        size_t err_size) {
  lab_har *har = har_new(name);
  if (har == NULL) {
    snprintf(err, err_size, "%s: out of memory", name);
    return -1;
  }
  json_error_t jerr;
  json_t *root = json_loadb(json, len, 0, &jerr);
  return finish_load(har, root, &jerr, out, err, err_size);
}

void lab_har_free(lab_har *har) {
  if (har == NULL) return;
  free(har->entries);
  arena_free(har->arena);
  free(har);
}
