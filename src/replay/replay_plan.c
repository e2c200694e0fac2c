/* replay_plan.c — the page plan (docs/lab-formats.md, "speedy-lab-plan/1"): loading with
 * jansson, validation with one message naming the file and the field, and the lookup of
 * (host, method, path) that answers a request.
 *
 * Validation is strict about what the server uses (format, seed, hosts, and per resource
 * id, host, method, path, status, response_headers, body_size, redirect_to) and checks the
 * types of the loader's fields when present. Response headers the replay must not send
 * (hop-by-hop, content-length, content-encoding, SPDY pseudo-headers) are dropped here,
 * once, so serving is a copy.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_err.h"
#include "replay.h"

struct replay_plan {
  uint64_t seed;
  int page_bodies;
  int one_host;
  replay_host *hosts;
  size_t n_hosts;
  replay_resource *resources;
  size_t n_resources;
  uint32_t *slots; /* open addressing over resources: index + 1, 0 = empty */
  size_t n_slots;  /* a power of two, at least twice n_resources */
};

/* ---- messages ---- */

typedef struct plan_error {
  char *out;
  size_t len;
  const char *name;
} plan_error;

static int fail(plan_error *e, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail(plan_error *e, const char *format, ...) {
  if (e->out == NULL || e->len == 0) return -1;
  int n = snprintf(e->out, e->len, "%s: ", e->name);
  if (n >= 0 && (size_t)n < e->len) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(e->out + n, e->len - (size_t)n, format, ap);
    va_end(ap);
  }
  return -1;
}

static const char *type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT:
    return "an object";
  case JSON_ARRAY:
    return "an array";
  case JSON_STRING:
    return "a string";
  case JSON_INTEGER:
    return "an integer";
  case JSON_REAL:
    return "a fractional number";
  case JSON_TRUE:
  case JSON_FALSE:
    return "a boolean";
  case JSON_NULL:
    return "null";
  }
  return "something else";
}

/* ---- field readers: each returns 0 or -1 after a message "<where>.<key>: ..." ---- */

static int get_int(plan_error *e, const json_t *obj, const char *where, const char *key,
                   long long min, long long max, int required, long long *out) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL) {
    if (!required) return 0;
    return fail(e, "%s: missing \"%s\"", where, key);
  }
  if (!json_is_integer(v))
    return fail(e, "%s.%s: expected an integer from %lld to %lld, got %s", where, key, min, max,
                type_name(v));
  long long x = json_integer_value(v);
  if (x < min || x > max)
    return fail(e, "%s.%s: expected an integer from %lld to %lld, got %lld", where, key, min, max,
                x);
  *out = x;
  return 0;
}

static int get_string(plan_error *e, const json_t *obj, const char *where, const char *key,
                      int required, const char **out) {
  const json_t *v = json_object_get(obj, key);
  if (v == NULL) {
    if (!required) return 0;
    return fail(e, "%s: missing \"%s\"", where, key);
  }
  if (!json_is_string(v))
    return fail(e, "%s.%s: expected a string, got %s", where, key, type_name(v));
  *out = json_string_value(v);
  if (strlen(*out) != json_string_length(v))
    return fail(e, "%s.%s: contains a NUL character", where, key);
  return 0;
}

/* Type checks of the loader's fields, which the server does not use. */
static int check_loader_fields(plan_error *e, const json_t *r, const char *where) {
  static const char *const strings[] = {"type"};
  static const char *const numbers[] = {"parent", "discover_offset", "start_delay"};
  for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
    const char *s;
    if (get_string(e, r, where, strings[i], 0, &s) != 0) return -1;
  }
  for (size_t i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
    const json_t *v = json_object_get(r, numbers[i]);
    if (v != NULL && !json_is_number(v))
      return fail(e, "%s.%s: expected a number, got %s", where, numbers[i], type_name(v));
  }
  const json_t *cutoff = json_object_get(r, "after_cutoff");
  if (cutoff != NULL && !json_is_boolean(cutoff))
    return fail(e, "%s.after_cutoff: expected a boolean, got %s", where, type_name(cutoff));
  const json_t *request_headers = json_object_get(r, "request_headers");
  if (request_headers != NULL && !json_is_array(request_headers))
    return fail(e, "%s.request_headers: expected an array, got %s", where,
                type_name(request_headers));
  return 0;
}

/* ---- syntax checks ---- */

static int is_tchar(unsigned char c) {
  return isalnum(c) || (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int valid_method(const char *m) {
  size_t n = strlen(m);
  if (n == 0 || n > 32) return 0;
  for (size_t i = 0; i < n; i++)
    if (!is_tchar((unsigned char)m[i])) return 0;
  return 1;
}

/* Origin-form: '/' then printable bytes without space (bytes >= 0x80 pass through). */
static int valid_path(const char *p) {
  size_t n = strlen(p);
  if (n == 0 || n > REPLAY_MAX_PATH || p[0] != '/') return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c <= 0x20 || c == 0x7f) return 0;
  }
  return 1;
}

/* A DNS name or IPv4 literal (letters, digits, '-', '_', '.'), or a bracketed IPv6
 * literal. Also what write_site uses as a directory name, so no '/' and not "." / "..". */
static int valid_host_name(const char *h) {
  size_t n = strlen(h);
  if (n == 0 || n > REPLAY_MAX_HOST_NAME || h[0] == '.') return 0;
  if (h[0] == '[') {
    if (n < 3 || h[n - 1] != ']') return 0;
    for (size_t i = 1; i + 1 < n; i++)
      if (!isxdigit((unsigned char)h[i]) && h[i] != ':' && h[i] != '.') return 0;
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)h[i];
    if (!isalnum(c) && c != '-' && c != '_' && c != '.') return 0;
  }
  return 1;
}

static int valid_header(const char *name, const char *value) {
  size_t n = strlen(name);
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)name[i];
    if (!is_tchar(c) || (c >= 'A' && c <= 'Z')) return 0;
  }
  for (const char *v = value; *v != '\0'; v++)
    if (*v == '\r' || *v == '\n') return 0;
  return 1;
}

/* Fields the replay never sends as recorded: hop-by-hop and connection-specific ones
 * (docs/lab-formats.md), content-length (we send body_size) and content-encoding (no
 * coding is applied to generated bytes). */
static int dropped_header(const char *name) {
  static const char *const names[] = {
      "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te",
      "trailer",    "host",       "content-length",   "content-encoding"};
  if (name[0] == ':') return 1; /* SPDY pseudo-headers of a SPDY-recorded HAR */
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(name, names[i]) == 0) return 1;
  return 0;
}

/* ---- lookup table ---- */

static uint64_t hash_key(size_t host, const char *method, const char *path) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)host;
  for (const char *s = method; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  h = (h ^ 0xffu) * 1099511628211ull;
  for (const char *s = path; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static const replay_resource *find_exact(const replay_plan *plan, size_t host, const char *method,
                                         const char *path) {
  if (plan->n_slots == 0) return NULL;
  size_t s = (size_t)hash_key(host, method, path) & (plan->n_slots - 1);
  while (plan->slots[s] != 0) {
    const replay_resource *r = &plan->resources[plan->slots[s] - 1];
    if (r->host == host && strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0) return r;
    s = (s + 1) & (plan->n_slots - 1);
  }
  return NULL;
}

static int build_index(replay_plan *plan) {
  size_t n = 16;
  while (n < plan->n_resources * 2) n *= 2;
  plan->slots = calloc(n, sizeof(*plan->slots));
  if (plan->slots == NULL) return -1;
  plan->n_slots = n;
  for (size_t i = 0; i < plan->n_resources; i++) {
    const replay_resource *r = &plan->resources[i];
    /* The first resource of a repeated URL keeps the slot. */
    if (find_exact(plan, r->host, r->method, r->path) != NULL) continue;
    size_t s = (size_t)hash_key(r->host, r->method, r->path) & (n - 1);
    while (plan->slots[s] != 0) s = (s + 1) & (n - 1);
    plan->slots[s] = (uint32_t)i + 1;
  }
  return 0;
}

const replay_resource *replay_plan_find(const replay_plan *plan, size_t host, const char *method,
                                        const char *path) {
  if (plan == NULL || method == NULL || path == NULL) return NULL;
  const replay_resource *r = find_exact(plan, host, method, path);
  if (r == NULL && strcmp(method, "HEAD") == 0) r = find_exact(plan, host, "GET", path);
  return r;
}

/* ---- loading ---- */

static int load_hosts(plan_error *e, replay_plan *plan, const json_t *hosts) {
  if (!json_is_array(hosts)) return fail(e, "hosts: expected an array, got %s", type_name(hosts));
  size_t n = json_array_size(hosts);
  if (n == 0 || n > REPLAY_MAX_HOSTS)
    return fail(e, "hosts: expected 1 to %u hosts, got %zu", REPLAY_MAX_HOSTS, n);
  plan->hosts = calloc(n, sizeof(*plan->hosts));
  if (plan->hosts == NULL) return fail(e, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const json_t *h = json_array_get(hosts, i);
    char where[32];
    snprintf(where, sizeof(where), "hosts[%zu]", i);
    if (!json_is_object(h)) return fail(e, "%s: expected an object, got %s", where, type_name(h));
    const char *name;
    long long port;
    if (get_string(e, h, where, "name", 1, &name) != 0 ||
        get_int(e, h, where, "port", 1, 65535, 1, &port) != 0)
      return -1;
    if (!valid_host_name(name))
      return fail(e, "%s.name: '%.80s' is not a host name or IP literal", where, name);
    plan->hosts[i].name = strdup(name);
    if (plan->hosts[i].name == NULL) return fail(e, "out of memory");
    for (char *c = plan->hosts[i].name; *c; c++) *c = (char)tolower((unsigned char)*c);
    plan->hosts[i].port = (int)port;
    plan->n_hosts++;
  }
  return 0;
}

static int load_headers(plan_error *e, replay_resource *r, const json_t *list, const char *where) {
  if (!json_is_array(list))
    return fail(e, "%s.response_headers: expected an array of [name, value], got %s", where,
                type_name(list));
  if (json_array_size(list) > REPLAY_MAX_HEADERS)
    return fail(e, "%s.response_headers: more than %u fields", where, REPLAY_MAX_HEADERS);
  for (size_t i = 0; i < json_array_size(list); i++) {
    const json_t *pair = json_array_get(list, i);
    const json_t *name = json_array_get(pair, 0), *value = json_array_get(pair, 1);
    if (!json_is_array(pair) || json_array_size(pair) != 2 || !json_is_string(name) ||
        !json_is_string(value))
      return fail(e, "%s.response_headers[%zu]: expected [name, value] (two strings)", where, i);
    const char *n = json_string_value(name), *v = json_string_value(value);
    int has_nul = strlen(n) != json_string_length(name) || strlen(v) != json_string_length(value);
    if (!has_nul && dropped_header(n)) continue;
    if (has_nul || !valid_header(n, v))
      return fail(e,
                  "%s.response_headers[%zu]: '%.60s' is not a lower-case field name with a "
                  "value free of CR, LF and NUL",
                  where, i, n);
    if (http_headers_add_str(&r->response_headers, n, v) != 0) return fail(e, "out of memory");
  }
  return 0;
}

static int load_resource(plan_error *e, replay_plan *plan, const json_t *obj, size_t i,
                         size_t n_resources) {
  replay_resource *r = &plan->resources[i];
  http_headers_init(&r->response_headers, 0, 0);
  r->redirect_to = -1;
  char where[40];
  snprintf(where, sizeof(where), "resources[%zu]", i);
  if (!json_is_object(obj)) return fail(e, "%s: expected an object, got %s", where, type_name(obj));
  long long id, host, status, body_size, redirect_to = -1;
  const char *method, *path;
  if (get_int(e, obj, where, "id", 0, (long long)n_resources - 1, 1, &id) != 0 ||
      get_int(e, obj, where, "host", 0, (long long)plan->n_hosts - 1, 1, &host) != 0 ||
      get_string(e, obj, where, "method", 1, &method) != 0 ||
      get_string(e, obj, where, "path", 1, &path) != 0 ||
      get_int(e, obj, where, "status", 200, 599, 1, &status) != 0 ||
      get_int(e, obj, where, "body_size", 0, (long long)REPLAY_MAX_BODY_SIZE, 1, &body_size) != 0 ||
      get_int(e, obj, where, "redirect_to", -1, (long long)n_resources - 1, 0, &redirect_to) != 0 ||
      check_loader_fields(e, obj, where) != 0)
    return -1;
  if ((size_t)id != i)
    return fail(e, "%s.id: is %lld, but ids are the resources' indexes (expected %zu)", where, id,
                i);
  if (!valid_method(method))
    return fail(e, "%s.method: '%.40s' is not an HTTP method", where, method);
  if (!valid_path(path))
    return fail(e,
                "%s.path: '%.80s' is not a path: it must start with '/', hold no spaces or "
                "control characters and be at most %u bytes",
                where, path, REPLAY_MAX_PATH);
  if ((status == 204 || status == 304) && body_size != 0)
    return fail(e, "%s.body_size: a %lld answer has no body, got body_size %lld", where, status,
                body_size);
  if (redirect_to >= 0 && (status < 300 || status > 399))
    return fail(e, "%s.redirect_to: set to %lld but status %lld is not a redirect", where,
                redirect_to, status);
  if (redirect_to == (long long)i) return fail(e, "%s.redirect_to: redirects to itself", where);
  r->kind = REPLAY_KIND_OTHER;
  const char *type = NULL;
  if (get_string(e, obj, where, "type", 0, &type) != 0) return -1;
  static const char *const kinds[] = {"other", "document", "css", "script", "font", "image"};
  for (int k = 0; type != NULL && k < (int)(sizeof(kinds) / sizeof(kinds[0])); k++)
    if (strcmp(type, kinds[k]) == 0) r->kind = k;
  const json_t *parent = json_object_get(obj, "parent");
  r->parent = json_is_integer(parent) && json_integer_value(parent) >= 0 &&
                      json_integer_value(parent) < (json_int_t)n_resources
                  ? (int64_t)json_integer_value(parent)
                  : -1;
  const json_t *offset = json_object_get(obj, "discover_offset");
  r->discover_offset = json_is_number(offset) ? json_number_value(offset) : -1;
  r->id = (uint32_t)id;
  r->host = (uint32_t)host;
  r->status = (int)status;
  r->body_size = (uint64_t)body_size;
  r->redirect_to = redirect_to;
  r->method = strdup(method);
  r->path = strdup(path);
  if (r->method == NULL || r->path == NULL) return fail(e, "out of memory");
  const json_t *headers = json_object_get(obj, "response_headers");
  if (headers == NULL) return fail(e, "%s: missing \"response_headers\"", where);
  return load_headers(e, r, headers, where);
}

static int load_plan(plan_error *e, replay_plan *plan, const json_t *root) {
  if (!json_is_object(root)) return fail(e, "expected a JSON object, got %s", type_name(root));
  const json_t *format = json_object_get(root, "format");
  if (format == NULL) return fail(e, "missing \"format\" (expected \"%s\")", REPLAY_PLAN_FORMAT);
  if (!json_is_string(format) || strcmp(json_string_value(format), REPLAY_PLAN_FORMAT) != 0)
    return fail(e, "format is %s%.60s%s, this program reads \"%s\"",
                json_is_string(format) ? "\"" : "",
                json_is_string(format) ? json_string_value(format) : type_name(format),
                json_is_string(format) ? "\"" : "", REPLAY_PLAN_FORMAT);
  long long seed;
  if (get_int(e, root, "plan", "seed", 0, INT64_MAX, 1, &seed) != 0) return -1;
  plan->seed = (uint64_t)seed;
  const char *bodies = NULL;
  if (get_string(e, root, "plan", "bodies", 0, &bodies) != 0) return -1;
  if (bodies != NULL && strcmp(bodies, "page") != 0 && strcmp(bodies, "generated") != 0)
    return fail(e, "bodies: expected \"generated\" or \"page\", got \"%.40s\"", bodies);
  plan->page_bodies = bodies != NULL && strcmp(bodies, "page") == 0;
  const json_t *one_host = json_object_get(root, "one_host");
  if (one_host != NULL && !json_is_boolean(one_host))
    return fail(e, "one_host: expected true or false, got %s", type_name(one_host));
  plan->one_host = json_is_true(one_host);
  if (plan->one_host && !plan->page_bodies)
    return fail(e, "one_host: only page bodies (\"bodies\": \"page\") name their children");
  const json_t *hosts = json_object_get(root, "hosts");
  if (hosts == NULL) return fail(e, "missing \"hosts\"");
  if (load_hosts(e, plan, hosts) != 0) return -1;
  const json_t *resources = json_object_get(root, "resources");
  if (resources == NULL) return fail(e, "missing \"resources\"");
  if (!json_is_array(resources))
    return fail(e, "resources: expected an array, got %s", type_name(resources));
  size_t n = json_array_size(resources);
  if (n > REPLAY_MAX_RESOURCES)
    return fail(e, "resources: %zu resources, at most %u are replayed", n, REPLAY_MAX_RESOURCES);
  plan->resources = calloc(n == 0 ? 1 : n, sizeof(*plan->resources));
  if (plan->resources == NULL) return fail(e, "out of memory");
  for (size_t i = 0; i < n; i++) {
    plan->n_resources = i + 1; /* so that replay_plan_del frees what was filled */
    if (load_resource(e, plan, json_array_get(resources, i), i, n) != 0) return -1;
  }
  if (build_index(plan) != 0) return fail(e, "out of memory");
  return 0;
}

static int finish_load(replay_plan **out, json_t *root, plan_error *e) {
  replay_plan *plan = calloc(1, sizeof(*plan));
  if (plan == NULL) {
    json_decref(root);
    return fail(e, "out of memory");
  }
  int rv = load_plan(e, plan, root);
  json_decref(root);
  if (rv != 0) {
    replay_plan_del(plan);
    return -1;
  }
  *out = plan;
  return 0;
}

int replay_plan_parse(replay_plan **out, const char *text, size_t len, const char *name, char *err,
                      size_t err_len) {
  plan_error e = {err, err_len, name != NULL ? name : "plan"};
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL) return fail(&e, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
  return finish_load(out, root, &e);
}

int replay_plan_load(replay_plan **out, const char *file, char *err, size_t err_len) {
  plan_error e = {err, err_len, file};
  json_error_t jerr;
  json_t *root = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL) {
    if (jerr.line < 1) return fail(&e, "%s", jerr.text); /* cannot open: jansson says why */
    return fail(&e, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
  }
  return finish_load(out, root, &e);
}

void replay_plan_del(replay_plan *plan) {
  if (plan == NULL) return;
  for (size_t i = 0; i < plan->n_hosts; i++) free(plan->hosts[i].name);
  for (size_t i = 0; i < plan->n_resources; i++) {
    free(plan->resources[i].method);
    free(plan->resources[i].path);
    http_headers_free(&plan->resources[i].response_headers);
  }
  free(plan->hosts);
  free(plan->resources);
  free(plan->slots);
  free(plan);
}

uint64_t replay_plan_seed(const replay_plan *plan) { return plan->seed; }
int replay_plan_page_bodies(const replay_plan *plan) { return plan->page_bodies; }
int replay_plan_one_host(const replay_plan *plan) {
  return plan->one_host && plan->n_resources > 0;
}
size_t replay_plan_host_count(const replay_plan *plan) { return plan->n_hosts; }
size_t replay_plan_resource_count(const replay_plan *plan) { return plan->n_resources; }

const replay_host *replay_plan_host(const replay_plan *plan, size_t index) {
  return index < plan->n_hosts ? &plan->hosts[index] : NULL;
}

const replay_resource *replay_plan_resource(const replay_plan *plan, size_t index) {
  return index < plan->n_resources ? &plan->resources[index] : NULL;
}

/* Splits an authority into its name (without a trailing dot) and port (-1 when none).
 * Returns 0, or -1 when the port is not a number from 1 to 65535. */
static int split_authority(const char *authority, size_t *name_len, int *port) {
  size_t len = strlen(authority);
  const char *end = authority + len;
  *port = -1;
  /* The port follows the last ':' — after the ']' of an IPv6 literal. */
  const char *colon = strrchr(authority, ':');
  const char *bracket = strrchr(authority, ']');
  if (colon != NULL && (authority[0] != '[' || (bracket != NULL && colon > bracket))) {
    char *stop;
    long p = strtol(colon + 1, &stop, 10);
    if (*stop != '\0' || colon[1] < '0' || colon[1] > '9' || p < 1 || p > 65535) return -1;
    *port = (int)p;
    end = colon;
  }
  *name_len = (size_t)(end - authority);
  if (*name_len > 1 && authority[*name_len - 1] == '.') (*name_len)--; /* "example.com." */
  return 0;
}

/* Is h's name the authority's name? Case-insensitive, a trailing dot on either ignored. */
static int same_name(const replay_host *h, const char *name, size_t name_len) {
  size_t h_len = strlen(h->name);
  if (h_len > 1 && h->name[h_len - 1] == '.') h_len--; /* a recorded "example.com." too */
  return h_len == name_len && strncasecmp(h->name, name, name_len) == 0;
}

/* Does an authority's port (-1: none) reach h's port? Equal ports do; so do "none", 80 and
 * 443 with 80 and 443: a client names neither in Host, and a lab server answers every
 * recorded scheme on one port. */
static int port_reaches(int port, int host_port) {
  if (port == host_port) return 1;
  int authority_default = port == -1 || port == 80 || port == 443;
  return authority_default && (host_port == 80 || host_port == 443);
}

int replay_plan_find_host(const replay_plan *plan, const char *authority) {
  if (plan == NULL || authority == NULL) return -1;
  size_t name_len;
  int port;
  if (split_authority(authority, &name_len, &port) != 0) return -1;
  int by_port = -1, by_name = -1;
  for (size_t i = 0; i < plan->n_hosts; i++) {
    const replay_host *h = &plan->hosts[i];
    if (!same_name(h, authority, name_len)) continue;
    if (h->port == port) return (int)i;
    if (by_port < 0 && port_reaches(port, h->port)) by_port = (int)i;
    if (by_name < 0) by_name = (int)i;
  }
  return by_port >= 0 ? by_port : by_name;
}

size_t replay_plan_page_host(const replay_plan *plan) {
  return plan->n_resources > 0 ? plan->resources[0].host : 0;
}

const replay_host *replay_url_host(const replay_plan *plan, const replay_resource *r,
                                   char prefix[REPLAY_ONE_HOST_PREFIX_MAX]) {
  prefix[0] = '\0';
  if (!replay_plan_one_host(plan) || r->host == replay_plan_page_host(plan))
    return replay_plan_host(plan, r->host);
  snprintf(prefix, REPLAY_ONE_HOST_PREFIX_MAX, "%s%u", REPLAY_ONE_HOST_PREFIX, r->host);
  return replay_plan_host(plan, replay_plan_page_host(plan));
}

const replay_resource *replay_plan_find_one_host(const replay_plan *plan, const char *method,
                                                 const char *path) {
  size_t n = strlen(REPLAY_ONE_HOST_PREFIX);
  if (!replay_plan_one_host(plan) || strncmp(path, REPLAY_ONE_HOST_PREFIX, n) != 0) return NULL;
  const char *p = path + n;
  size_t host = 0, digits = 0;
  for (; *p >= '0' && *p <= '9' && digits < 5; p++, digits++) host = host * 10 + (size_t)(*p - '0');
  if (digits == 0 || *p != '/' || host >= plan->n_hosts) return NULL;
  return replay_plan_find(plan, host, method, p);
}

const replay_resource *replay_plan_find_for(const replay_plan *plan, const char *authority,
                                            const char *method, const char *path) {
  int first = replay_plan_find_host(plan, authority);
  if (first < 0) return NULL;
  const replay_resource *r = replay_plan_find(plan, (size_t)first, method, path);
  size_t name_len;
  int port;
  if (r != NULL || split_authority(authority, &name_len, &port) != 0) return r;
  /* Another host the same request could be for: http://x/ and https://x/. */
  for (size_t i = 0; i < plan->n_hosts && r == NULL; i++) {
    const replay_host *h = &plan->hosts[i];
    if (i != (size_t)first && same_name(h, authority, name_len) && port_reaches(port, h->port))
      r = replay_plan_find(plan, i, method, path);
  }
  return r;
}
