/* har_headers.c — reads HAR 1.2 files into SPDY/3 header lists for bench_engine.
 *
 * Owns the JSON reading (jansson), the mapping of HTTP/1.1 messages onto SPDY's pseudo
 * headers, and the string storage of the result. Knows nothing of sessions or zlib.
 */
#define _POSIX_C_SOURCE 200809L

#include "har_headers.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Strings and header arrays live in chunks freed together with the corpus. */
struct har_headers_chunk {
  har_headers_chunk *next;
  size_t used;
  size_t size;
  alignas(max_align_t) char data[];
};

#define CHUNK_DEFAULT_SIZE (256u * 1024u)

/* A file being read: its entries and storage join the corpus only when all went well. */
typedef struct loader {
  har_headers_entry *entries;
  size_t n_entries;
  size_t capacity;
  const char **started; /* startedDateTime of each entry, for the sort ("" if none) */
  har_headers_chunk *chunks;
  char *err;
  size_t err_size;
} loader;

static void chunks_free(har_headers_chunk *chunk) {
  while (chunk != NULL) {
    har_headers_chunk *next = chunk->next;
    free(chunk);
    chunk = next;
  }
}

__attribute__((format(printf, 2, 3))) static void fail(loader *ld, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  vsnprintf(ld->err, ld->err_size, format, ap);
  va_end(ap);
}

/* Returns size bytes aligned for any type, or NULL (reason in ld->err). */
static void *storage_alloc(loader *ld, size_t size) {
  const size_t align = alignof(max_align_t);
  if (size > SIZE_MAX - align) {
    fail(ld, "out of memory");
    return NULL;
  }
  size = (size + align - 1) / align * align;
  har_headers_chunk *chunk = ld->chunks;
  if (chunk == NULL || chunk->size - chunk->used < size) {
    size_t chunk_size = size > CHUNK_DEFAULT_SIZE ? size : CHUNK_DEFAULT_SIZE;
    chunk = malloc(sizeof *chunk + chunk_size);
    if (chunk == NULL) {
      fail(ld, "out of memory");
      return NULL;
    }
    chunk->used = 0;
    chunk->size = chunk_size;
    chunk->next = ld->chunks;
    ld->chunks = chunk;
  }
  void *p = chunk->data + chunk->used;
  chunk->used += size;
  return p;
}

/* Copies len bytes and a NUL into storage. */
static char *storage_strndup(loader *ld, const char *s, size_t len) {
  if (len == SIZE_MAX) {
    fail(ld, "out of memory");
    return NULL;
  }
  char *copy = storage_alloc(ld, len + 1);
  if (copy != NULL) {
    memcpy(copy, s, len);
    copy[len] = '\0';
  }
  return copy;
}

/* RFC 7230 tchar: what a header name may be made of. */
static int is_token_char(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return 1;
  return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int is_connection_specific(const char *lower_name) {
  static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
                                      "transfer-encoding", "host"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(lower_name, names[i]) == 0) return 1;
  return 0;
}

/* Reads obj[key] as a string; returns NULL (reason in ld->err) when absent or not one,
 * unless optional_default is given, which is returned when the key is absent. */
static const char *get_string(loader *ld, const json_t *obj, const char *key, size_t *len,
                              const char *optional_default, size_t entry, const char *where) {
  const json_t *value = json_object_get(obj, key);
  if (value == NULL && optional_default != NULL) {
    *len = strlen(optional_default);
    return optional_default;
  }
  if (!json_is_string(value)) {
    fail(ld, "entry %zu: %s.%s is %s", entry, where, key,
         value == NULL ? "missing" : "not a string");
    return NULL;
  }
  *len = json_string_length(value);
  return json_string_value(value);
}

/* The parts of an absolute http(s) URL that become pseudo headers. */
typedef struct url_parts {
  const char *scheme; /* lower case, static */
  const char *authority;
  size_t authority_len;
  const char *path; /* path and query, without fragment; may be empty (means "/") */
  size_t path_len;
} url_parts;

static int url_split(const char *url, size_t len, url_parts *out) {
  const char *p;
  if (len >= 7 && strncasecmp(url, "http://", 7) == 0) {
    out->scheme = "http";
    p = url + 7;
  } else if (len >= 8 && strncasecmp(url, "https://", 8) == 0) {
    out->scheme = "https";
    p = url + 8;
  } else {
    return -1;
  }
  const char *end = url + len;
  const char *q = p;
  while (q < end && *q != '/' && *q != '?' && *q != '#') q++;
  /* Drop user information: "user:pass@host". */
  const char *at = NULL;
  for (const char *r = p; r < q; r++)
    if (*r == '@') at = r;
  out->authority = at != NULL ? at + 1 : p;
  out->authority_len = (size_t)(q - out->authority);
  if (out->authority_len == 0) return -1;
  const char *hash = memchr(q, '#', (size_t)(end - q));
  out->path = q;
  out->path_len = (size_t)((hash != NULL ? hash : end) - q);
  return 0;
}

/* Makes the recorded headers of one message into SPDY header fields after the n_pseudo
 * already in headers; adds their HTTP/1.1 line sizes to *http1_size and returns the
 * field count, or -1. If host_out is not NULL, the first Host header's value goes
 * there. */
static long convert_headers(loader *ld, const json_t *list, speedy_header *headers, size_t n_pseudo,
                            size_t *http1_size, const char **host_out, size_t *host_len,
                            size_t entry, const char *where) {
  size_t n = n_pseudo;
  for (size_t i = 0; i < json_array_size(list); i++) {
    const json_t *field = json_array_get(list, i);
    if (!json_is_object(field)) {
      fail(ld, "entry %zu: %s.headers[%zu] is not an object", entry, where, i);
      return -1;
    }
    size_t name_len = 0, value_len = 0;
    const char *name = get_string(ld, field, "name", &name_len, NULL, entry, where);
    if (name == NULL) return -1;
    const char *value = get_string(ld, field, "value", &value_len, NULL, entry, where);
    if (value == NULL) return -1;
    if (name_len == 0) {
      fail(ld, "entry %zu: %s has a header with an empty name", entry, where);
      return -1;
    }
    for (size_t k = 0; k < name_len; k++) {
      if (!is_token_char((unsigned char)name[k])) {
        fail(ld, "entry %zu: %s header name \"%.40s\" has a character not allowed in a name", entry,
             where, name);
        return -1;
      }
    }
    for (size_t k = 0; k < value_len; k++) {
      if (value[k] == '\0' || value[k] == '\r' || value[k] == '\n') {
        fail(ld, "entry %zu: %s header \"%.40s\" has a NUL, CR or LF in its value", entry, where,
             name);
        return -1;
      }
    }
    /* "Name: value\r\n"; the sizes come from JSON strings, far below SIZE_MAX / 2. */
    *http1_size += name_len + 2 + value_len + 2;

    char *lower = storage_strndup(ld, name, name_len);
    if (lower == NULL) return -1;
    for (size_t k = 0; k < name_len; k++)
      if (lower[k] >= 'A' && lower[k] <= 'Z') lower[k] = (char)(lower[k] - 'A' + 'a');
    if (host_out != NULL && *host_out == NULL && strcmp(lower, "host") == 0) {
      *host_out = value;
      *host_len = value_len;
    }
    if (is_connection_specific(lower)) continue;
    char *value_copy = storage_strndup(ld, value, value_len);
    if (value_copy == NULL) return -1;
    headers[n].name = lower;
    headers[n].name_len = name_len;
    headers[n].value = value_copy;
    headers[n].value_len = value_len;
    n++;
  }
  return (long)n;
}

static int set_pseudo(loader *ld, speedy_header *h, const char *name, const char *value,
                      size_t value_len) {
  char *copy = storage_strndup(ld, value, value_len);
  if (copy == NULL) return -1;
  h->name = name; /* static string */
  h->name_len = strlen(name);
  h->value = copy;
  h->value_len = value_len;
  return 0;
}

static const json_t *get_headers_array(loader *ld, const json_t *message, size_t entry,
                                       const char *where) {
  const json_t *list = json_object_get(message, "headers");
  if (!json_is_array(list)) {
    fail(ld, "entry %zu: %s.headers is %s", entry, where,
         list == NULL ? "missing" : "not an array");
    return NULL;
  }
  return list;
}

static int convert_request(loader *ld, const json_t *request, size_t entry,
                           har_headers_entry *out) {
  const char *where = "request";
  if (!json_is_object(request)) {
    fail(ld, "entry %zu: request is missing or not an object", entry);
    return -1;
  }
  size_t method_len = 0, url_len = 0, version_len = 0;
  const char *method = get_string(ld, request, "method", &method_len, NULL, entry, where);
  const char *url = get_string(ld, request, "url", &url_len, NULL, entry, where);
  const char *version =
      get_string(ld, request, "httpVersion", &version_len, "HTTP/1.1", entry, where);
  if (method == NULL || url == NULL || version == NULL) return -1;
  if (method_len == 0) {
    fail(ld, "entry %zu: request.method is empty", entry);
    return -1;
  }
  if (version_len == 0) {
    version = "HTTP/1.1";
    version_len = 8;
  }
  url_parts parts;
  if (url_split(url, url_len, &parts) != 0) {
    fail(ld, "entry %zu: request.url \"%.60s\" is not an absolute http(s) URL", entry, url);
    return -1;
  }
  const json_t *list = get_headers_array(ld, request, entry, where);
  if (list == NULL) return -1;

  const size_t n_pseudo = 5;
  speedy_header *headers = storage_alloc(ld, (n_pseudo + json_array_size(list)) * sizeof *headers);
  if (headers == NULL) return -1;
  size_t path_len = parts.path_len;
  const char *path = parts.path;
  /* "METHOD target HTTP/1.1\r\n" with the origin-form target, then "\r\n" at the end. */
  size_t http1 = method_len + 1 + (path_len > 0 && path[0] == '/' ? path_len : path_len + 1) + 1 +
                 version_len + 2 + 2;
  const char *host = NULL;
  size_t host_len = 0;
  long n = convert_headers(ld, list, headers, n_pseudo, &http1, &host, &host_len, entry, where);
  if (n < 0) return -1;
  if (host == NULL || host_len == 0) {
    host = parts.authority;
    host_len = parts.authority_len;
  }

  if (set_pseudo(ld, &headers[0], ":method", method, method_len) != 0) return -1;
  if (path_len > 0 && path[0] == '/') {
    if (set_pseudo(ld, &headers[1], ":path", path, path_len) != 0) return -1;
  } else {
    /* "http://host" or "http://host?q": the path is "/". */
    char *full = storage_alloc(ld, path_len + 2);
    if (full == NULL) return -1;
    full[0] = '/';
    memcpy(full + 1, path, path_len);
    full[path_len + 1] = '\0';
    headers[1] = (speedy_header){":path", 5, full, path_len + 1};
  }
  if (set_pseudo(ld, &headers[2], ":version", version, version_len) != 0) return -1;
  if (set_pseudo(ld, &headers[3], ":host", host, host_len) != 0) return -1;
  if (set_pseudo(ld, &headers[4], ":scheme", parts.scheme, strlen(parts.scheme)) != 0) return -1;
  out->host = headers[3].value;
  out->request.headers = headers;
  out->request.n_headers = (size_t)n;
  out->request.http1_size = http1;
  return 0;
}

static int convert_response(loader *ld, const json_t *response, size_t entry,
                            har_headers_entry *out) {
  const char *where = "response";
  if (!json_is_object(response)) {
    fail(ld, "entry %zu: response is missing or not an object", entry);
    return -1;
  }
  const json_t *status = json_object_get(response, "status");
  if (!json_is_integer(status) || json_integer_value(status) < 100 ||
      json_integer_value(status) > 999) {
    fail(ld, "entry %zu: response.status is not a status code", entry);
    return -1;
  }
  size_t version_len = 0, reason_len = 0;
  const char *version =
      get_string(ld, response, "httpVersion", &version_len, "HTTP/1.1", entry, where);
  const char *reason = get_string(ld, response, "statusText", &reason_len, "", entry, where);
  if (version == NULL || reason == NULL) return -1;
  if (version_len == 0) {
    version = "HTTP/1.1";
    version_len = 8;
  }
  const json_t *list = get_headers_array(ld, response, entry, where);
  if (list == NULL) return -1;

  const size_t n_pseudo = 2;
  speedy_header *headers = storage_alloc(ld, (n_pseudo + json_array_size(list)) * sizeof *headers);
  if (headers == NULL) return -1;
  char code[8];
  int code_len = snprintf(code, sizeof code, "%d", (int)json_integer_value(status));
  /* "HTTP/1.1 200 OK\r\n", then "\r\n" at the end. */
  size_t http1 = version_len + 1 + (size_t)code_len + 1 + reason_len + 2 + 2;
  long n = convert_headers(ld, list, headers, n_pseudo, &http1, NULL, NULL, entry, where);
  if (n < 0) return -1;
  if (set_pseudo(ld, &headers[0], ":status", code, (size_t)code_len) != 0) return -1;
  if (set_pseudo(ld, &headers[1], ":version", version, version_len) != 0) return -1;
  out->response.headers = headers;
  out->response.n_headers = (size_t)n;
  out->response.http1_size = http1;
  return 0;
}

/* Sort key: start time, then position in the file (qsort is not stable). */
typedef struct order_key {
  const char *started;
  size_t index;
} order_key;

static int order_key_compare(const void *a, const void *b) {
  const order_key *x = a, *y = b;
  int c = strcmp(x->started, y->started);
  if (c != 0) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

static int load_entries(loader *ld, const json_t *root) {
  const json_t *log = json_object_get(root, "log");
  if (!json_is_object(log)) {
    fail(ld, "no \"log\" object (not a HAR file?)");
    return -1;
  }
  const json_t *entries = json_object_get(log, "entries");
  if (!json_is_array(entries)) {
    fail(ld, "log.entries is missing or not an array");
    return -1;
  }
  size_t n = json_array_size(entries);
  if (n == 0) {
    fail(ld, "log.entries is empty");
    return -1;
  }
  ld->entries = calloc(n, sizeof *ld->entries);
  ld->started = calloc(n, sizeof *ld->started);
  if (ld->entries == NULL || ld->started == NULL) {
    fail(ld, "out of memory");
    return -1;
  }
  ld->capacity = n;
  for (size_t i = 0; i < n; i++) {
    const json_t *entry = json_array_get(entries, i);
    if (!json_is_object(entry)) {
      fail(ld, "entry %zu is not an object", i);
      return -1;
    }
    har_headers_entry *out = &ld->entries[i];
    if (convert_request(ld, json_object_get(entry, "request"), i, out) != 0) return -1;
    if (convert_response(ld, json_object_get(entry, "response"), i, out) != 0) return -1;
    const json_t *started = json_object_get(entry, "startedDateTime");
    ld->started[i] = json_is_string(started) ? json_string_value(started) : "";
    ld->n_entries++;
  }
  return 0;
}

void har_headers_init(har_headers_corpus *corpus) { memset(corpus, 0, sizeof *corpus); }

int har_headers_load_file(har_headers_corpus *corpus, const char *path, char *err,
                          size_t err_size) {
  loader ld = {.err = err, .err_size = err_size};
  json_error_t jerr;
  json_t *root = json_load_file(path, 0, &jerr);
  if (root == NULL) {
    if (jerr.line > 0)
      snprintf(err, err_size, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
    else
      snprintf(err, err_size, "%s", jerr.text);
    return -1;
  }
  int rc = load_entries(&ld, root);
  order_key *keys = NULL;
  char *name_copy = NULL;
  if (rc == 0) {
    keys = malloc(ld.n_entries * sizeof *keys);
    const char *base = strrchr(path, '/');
    base = base != NULL ? base + 1 : path;
    name_copy = strdup(base);
    size_t need = corpus->n_entries + ld.n_entries;
    if (need > corpus->entries_capacity) {
      size_t capacity = corpus->entries_capacity ? corpus->entries_capacity : 1024;
      while (capacity < need) capacity *= 2;
      har_headers_entry *grown = realloc(corpus->entries, capacity * sizeof *grown);
      if (grown != NULL) {
        corpus->entries = grown;
        corpus->entries_capacity = capacity;
      }
    }
    char **files = realloc(corpus->files, (corpus->n_files + 1) * sizeof *files);
    if (files != NULL) corpus->files = files;
    if (keys == NULL || name_copy == NULL || files == NULL || corpus->entries_capacity < need) {
      snprintf(err, err_size, "out of memory");
      rc = -1;
    }
  }
  if (rc == 0) {
    for (size_t i = 0; i < ld.n_entries; i++) keys[i] = (order_key){ld.started[i], i};
    qsort(keys, ld.n_entries, sizeof *keys, order_key_compare);
    for (size_t i = 0; i < ld.n_entries; i++) {
      har_headers_entry *e = &corpus->entries[corpus->n_entries + i];
      *e = ld.entries[keys[i].index];
      e->file = corpus->n_files;
    }
    corpus->n_entries += ld.n_entries;
    corpus->files[corpus->n_files++] = name_copy;
    name_copy = NULL;
    /* Hand the storage over to the corpus. */
    har_headers_chunk **tail = &ld.chunks;
    while (*tail != NULL) tail = &(*tail)->next;
    *tail = corpus->chunks;
    corpus->chunks = ld.chunks;
    ld.chunks = NULL;
  }
  free(name_copy);
  free(keys);
  chunks_free(ld.chunks);
  free(ld.entries);
  free(ld.started);
  json_decref(root); /* after the sort: started[] points into the JSON tree */
  return rc;
}

static int has_har_suffix(const char *name) {
  size_t len = strlen(name);
  return len > 4 && strcmp(name + len - 4, ".har") == 0;
}

static int string_compare(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int har_headers_load_dir(har_headers_corpus *corpus, const char *dir, const char *prog,
                         FILE *errors) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    fprintf(errors, "%s: cannot open HAR directory %s: %s\n", prog, dir, strerror(errno));
    return -1;
  }
  char **names = NULL;
  size_t n_names = 0, capacity = 0;
  int rc = 0;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (!has_har_suffix(de->d_name)) continue;
    if (n_names == capacity) {
      size_t grown_capacity = capacity ? capacity * 2 : 64;
      char **grown = realloc(names, grown_capacity * sizeof *grown);
      if (grown == NULL) {
        rc = -1;
        break;
      }
      names = grown;
      capacity = grown_capacity;
    }
    names[n_names] = strdup(de->d_name);
    if (names[n_names] == NULL) {
      rc = -1;
      break;
    }
    n_names++;
  }
  closedir(d);
  if (rc != 0) {
    fprintf(errors, "%s: cannot list %s: out of memory\n", prog, dir);
  } else {
    qsort(names, n_names, sizeof *names, string_compare);
    for (size_t i = 0; i < n_names; i++) {
      size_t path_len = strlen(dir) + 1 + strlen(names[i]) + 1;
      char *path = malloc(path_len);
      if (path == NULL) {
        fprintf(errors, "%s: out of memory\n", prog);
        rc = -1;
        break;
      }
      snprintf(path, path_len, "%s/%s", dir, names[i]);
      char err[512];
      if (har_headers_load_file(corpus, path, err, sizeof err) != 0) {
        fprintf(errors, "%s: skipping %s: %s\n", prog, path, err);
        corpus->n_skipped++;
      } else {
        rc++;
      }
      free(path);
    }
  }
  for (size_t i = 0; i < n_names; i++) free(names[i]);
  free(names);
  return rc;
}

void har_headers_free(har_headers_corpus *corpus) {
  for (size_t i = 0; i < corpus->n_files; i++) free(corpus->files[i]);
  free(corpus->files);
  free(corpus->entries);
  chunks_free(corpus->chunks);
  memset(corpus, 0, sizeof *corpus);
}

/* ---- grouping per host ---- */

typedef struct group_key {
  size_t file;
  const char *host;
  size_t index;
} group_key;

static int group_key_compare(const void *a, const void *b) {
  const group_key *x = a, *y = b;
  if (x->file != y->file) return x->file < y->file ? -1 : 1;
  int c = strcmp(x->host, y->host);
  if (c != 0) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

int har_headers_group_by_host(const har_headers_corpus *corpus, har_headers_groups *g) {
  size_t n = corpus->n_entries;
  group_key *keys = malloc((n > 0 ? n : 1) * sizeof *keys);
  g->order = malloc((n > 0 ? n : 1) * sizeof *g->order);
  g->starts = malloc((n + 1) * sizeof *g->starts);
  if (keys == NULL || g->order == NULL || g->starts == NULL) {
    free(keys);
    har_headers_groups_free(g);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    keys[i] = (group_key){corpus->entries[i].file, corpus->entries[i].host, i};
  qsort(keys, n, sizeof *keys, group_key_compare);
  g->n_groups = 0;
  for (size_t i = 0; i < n; i++) {
    if (i == 0 || keys[i].file != keys[i - 1].file || strcmp(keys[i].host, keys[i - 1].host) != 0)
      g->starts[g->n_groups++] = i;
    g->order[i] = keys[i].index;
  }
  g->starts[g->n_groups] = n;
  free(keys);
  return 0;
}

void har_headers_groups_free(har_headers_groups *g) {
  free(g->order);
  free(g->starts);
  g->order = g->starts = NULL;
}
