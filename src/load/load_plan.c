/* load_plan.c — reads a page plan (`speedy-lab-plan/1`) with jansson and checks every field
 * the loader relies on: indexes in range, no discovery cycles, paths and headers that can
 * be sent verbatim in an HTTP/1.1 request or a SPDY header block.
 *
 * A plan that breaks a rule is refused as a whole with the field's JSON path: the loader
 * never guesses, so every configuration of a page replays the same requests.
 */
#define _POSIX_C_SOURCE 200809L /* strndup */
#include "load_plan.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = {"document", "css", "script", "font", "image", "other"};

const char *load_type_name(load_type type) {
  return (unsigned)type < sizeof(type_names) / sizeof(type_names[0]) ? type_names[type] : "other";
}

int load_type_urgency(load_type type) {
  switch (type) {
  case LOAD_TYPE_DOCUMENT:
    return 0;
  case LOAD_TYPE_CSS:
  case LOAD_TYPE_SCRIPT:
    return 1;
  case LOAD_TYPE_FONT:
    return 2;
  case LOAD_TYPE_IMAGE:
    return 4;
  case LOAD_TYPE_OTHER:
    break;
  }
  return 5;
}

/* Headers the loader never copies from a plan: hop-by-hop or connection-specific ones,
 * and the host (it comes from `hosts`). The plan should not hold them; if it does, they
 * are dropped rather than sent twice or sent wrongly over SPDY. */
static int is_dropped_header(const char *name) {
  static const char *const dropped[] = {"connection",        "keep-alive", "proxy-connection",
                                        "transfer-encoding", "upgrade",    "te",
                                        "trailer",           "host",       "content-length"};
  for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++)
    if (strcmp(name, dropped[i]) == 0) return 1;
  return name[0] == ':';
}

typedef struct reader {
  char *err;
  size_t err_len;
} reader;

static int fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(reader *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (r->err_len) vsnprintf(r->err, r->err_len, fmt, ap);
  va_end(ap);
  return -1;
}

static int is_tchar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* A token (method, header name): 1..max tchars. */
static int is_token(const char *s, size_t len, size_t max) {
  if (len == 0 || len > max) return 0;
  for (size_t i = 0; i < len; i++)
    if (!is_tchar((unsigned char)s[i])) return 0;
  return 1;
}

/* "[" IPv6 address "]", as a URL's host holds one. */
static int is_ipv6_literal(const char *s, size_t len) {
  char text[INET6_ADDRSTRLEN + 1];
  unsigned char addr[16];
  if (len < 4 || s[0] != '[' || s[len - 1] != ']' || len - 2 >= sizeof text) return 0;
  memcpy(text, s + 1, len - 2);
  text[len - 2] = '\0';
  return inet_pton(AF_INET6, text, addr) == 1;
}

/* A header value: no control bytes but tab (non-ASCII bytes pass: recorded values may
 * hold UTF-8, sent as they were recorded). */
static int is_field_value(const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
  }
  return 1;
}

/* A request target: '/' then visible ASCII (recorders percent-encode the rest). */
static int is_path(const char *s, size_t len) {
  if (len == 0 || len > 16384 || s[0] != '/') return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c <= 0x20 || c >= 0x7f) return 0;
  }
  return 1;
}

static char *dup_string(reader *r, json_t *v, const char *where, size_t max) {
  if (!json_is_string(v)) {
    fail(r, "%s: expected a string", where);
    return NULL;
  }
  size_t len = json_string_length(v);
  if (len > max || strlen(json_string_value(v)) != len) {
    fail(r, "%s: longer than %zu bytes or holds NUL", where, max);
    return NULL;
  }
  char *s = strdup(json_string_value(v));
  if (!s) fail(r, "out of memory");
  return s;
}

static int get_int(reader *r, json_t *obj, const char *key, const char *where, int64_t min,
                   int64_t max, int64_t *out) {
  json_t *v = json_object_get(obj, key);
  if (!json_is_integer(v)) return fail(r, "%s.%s: expected an integer", where, key);
  json_int_t n = json_integer_value(v);
  if (n < min || n > max)
    return fail(r, "%s.%s: %lld is out of range %lld..%lld", where, key, (long long)n,
                (long long)min, (long long)max);
  *out = n;
  return 0;
}

static int read_headers(reader *r, json_t *array, const char *where, load_resource *res) {
  if (!json_is_array(array)) return fail(r, "%s.request_headers: expected an array", where);
  size_t n = json_array_size(array);
  if (n > LOAD_PLAN_MAX_HEADERS)
    return fail(r, "%s.request_headers: more than %d headers", where, LOAD_PLAN_MAX_HEADERS);
  res->request_headers = calloc(n ? n : 1, sizeof(*res->request_headers));
  if (!res->request_headers) return fail(r, "out of memory");
  for (size_t i = 0; i < n; i++) {
    json_t *pair = json_array_get(array, i);
    char here[96];
    snprintf(here, sizeof(here), "%s.request_headers[%zu]", where, i);
    if (!json_is_array(pair) || json_array_size(pair) != 2)
      return fail(r, "%s: expected [name, value]", here);
    json_t *name = json_array_get(pair, 0), *value = json_array_get(pair, 1);
    if (!json_is_string(name) || !json_is_string(value))
      return fail(r, "%s: expected two strings", here);
    const char *nm = json_string_value(name), *val = json_string_value(value);
    size_t nm_len = json_string_length(name), val_len = json_string_length(value);
    if (!is_token(nm, nm_len, 256) || strlen(nm) != nm_len)
      return fail(r, "%s: header name is not a token", here);
    if (strlen(val) != val_len || val_len > 65536 || !is_field_value(val, val_len))
      return fail(r, "%s: header value holds a control byte or is over 64 KiB", here);
    char *lower = strdup(nm);
    if (!lower) return fail(r, "out of memory");
    for (char *p = lower; *p; p++)
      if (*p >= 'A' && *p <= 'Z') *p = (char)(*p + 32);
    if (is_dropped_header(lower)) {
      free(lower);
      continue;
    }
    load_header *h = &res->request_headers[res->n_request_headers];
    h->name = lower;
    h->value = strdup(val);
    if (!h->value) {
      free(lower);
      return fail(r, "out of memory");
    }
    res->n_request_headers++;
  }
  return 0;
}

static int read_type(reader *r, json_t *v, const char *where, load_type *out) {
  if (!json_is_string(v)) return fail(r, "%s.type: expected a string", where);
  for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
    if (strcmp(json_string_value(v), type_names[i]) == 0) {
      *out = (load_type)i;
      return 0;
    }
  return fail(r, "%s.type: '%.40s' is not document, css, script, font, image or other", where,
              json_string_value(v));
}

static int read_resource(reader *r, json_t *obj, size_t index, const load_plan *plan,
                         load_resource *res) {
  char where[48];
  snprintf(where, sizeof(where), "resources[%zu]", index);
  if (!json_is_object(obj)) return fail(r, "%s: expected an object", where);
  int64_t v = 0;
  int64_t n_res = (int64_t)plan->n_resources;
  if (get_int(r, obj, "id", where, 0, n_res - 1, &v)) return -1;
  if (v != (int64_t)index) return fail(r, "%s.id: %lld is not its index", where, (long long)v);
  res->id = (int)v;
  if (get_int(r, obj, "host", where, 0, (int64_t)plan->n_hosts - 1, &v)) return -1;
  res->host = (int)v;
  char key[64];
  snprintf(key, sizeof(key), "%s.method", where);
  if (!(res->method = dup_string(r, json_object_get(obj, "method"), key, 32))) return -1;
  if (!is_token(res->method, strlen(res->method), 32)) return fail(r, "%s: not a token", key);
  snprintf(key, sizeof(key), "%s.path", where);
  if (!(res->path = dup_string(r, json_object_get(obj, "path"), key, 16384))) return -1;
  if (!is_path(res->path, strlen(res->path)))
    return fail(r, "%s: must start with '/' and hold only visible ASCII", key);
  if (read_type(r, json_object_get(obj, "type"), where, &res->type)) return -1;
  if (get_int(r, obj, "parent", where, -1, n_res - 1, &v)) return -1;
  res->parent = (int)v;
  if (res->parent == res->id)
    return fail(r, "%s.parent: a resource cannot be its own parent", where);
  if (get_int(r, obj, "discover_offset", where, -1, INT64_MAX, &res->discover_offset)) return -1;
  json_t *delay = json_object_get(obj, "start_delay");
  if (delay) {
    if (!json_is_number(delay) || json_number_value(delay) < 0 || json_number_value(delay) > 3.6e6)
      return fail(r, "%s.start_delay: expected milliseconds from 0 to 3,600,000", where);
    res->start_delay_ms = json_number_value(delay);
  }
  if (read_headers(r, json_object_get(obj, "request_headers"), where, res)) return -1;
  if (get_int(r, obj, "status", where, 100, 599, &v)) return -1;
  res->status = (int)v;
  if (get_int(r, obj, "body_size", where, 0, INT64_MAX, &v)) return -1;
  res->body_size = (uint64_t)v;
  if (get_int(r, obj, "redirect_to", where, -1, n_res - 1, &v)) return -1;
  res->redirect_to = (int)v;
  if (res->redirect_to == res->id) return fail(r, "%s.redirect_to: redirects to itself", where);
  json_t *cutoff = json_object_get(obj, "after_cutoff");
  if (cutoff && !json_is_boolean(cutoff))
    return fail(r, "%s.after_cutoff: expected true or false", where);
  res->after_cutoff = cutoff && json_is_true(cutoff);
  return 0;
}

/* Every resource must be reachable from the start of the load: following the gate (the
 * redirect that leads to it, else its parent) must end at -1 without a cycle. */
static int check_acyclic(reader *r, load_plan *plan) {
  size_t n = plan->n_resources;
  int *gate = malloc(n * sizeof(*gate));
  unsigned char *mark = calloc(n, 1); /* 0 unseen, 1 on the current walk, 2 reaches -1 */
  int rv = 0;
  if (!gate || !mark) {
    rv = fail(r, "out of memory");
    goto out;
  }
  for (size_t i = 0; i < n; i++) gate[i] = plan->resources[i].parent;
  for (size_t i = n; i-- > 0;) /* the lowest-numbered redirect wins */
    if (plan->resources[i].redirect_to >= 0) gate[plan->resources[i].redirect_to] = (int)i;
  for (size_t i = 0; i < n && rv == 0; i++) {
    int at = (int)i;
    while (at >= 0 && mark[at] == 0) {
      mark[at] = 1;
      at = gate[at];
    }
    if (at >= 0 && mark[at] == 1)
      rv = fail(r, "resources[%d]: its parents and redirects form a cycle", at);
    for (at = (int)i; at >= 0 && mark[at] == 1; at = gate[at]) mark[at] = 2;
  }
out:
  free(gate);
  free(mark);
  return rv;
}

static int read_plan(reader *r, json_t *root, load_plan *plan) {
  if (!json_is_object(root)) return fail(r, "the plan is not a JSON object");
  json_t *format = json_object_get(root, "format");
  if (!json_is_string(format) || strcmp(json_string_value(format), LOAD_PLAN_FORMAT) != 0)
    return fail(r, "format: expected \"%s\"", LOAD_PLAN_FORMAT);
  json_t *v = json_object_get(root, "source");
  plan->source = strdup(json_is_string(v) ? json_string_value(v) : "");
  v = json_object_get(root, "page");
  plan->page = strdup(json_is_string(v) ? json_string_value(v) : "");
  if (!plan->source || !plan->page) return fail(r, "out of memory");
  v = json_object_get(root, "seed");
  plan->seed = json_is_integer(v) ? json_integer_value(v) : 0;
  json_t *hosts = json_object_get(root, "hosts");
  if (!json_is_array(hosts) || json_array_size(hosts) == 0 ||
      json_array_size(hosts) > LOAD_PLAN_MAX_HOSTS)
    return fail(r, "hosts: expected an array of 1 to %d hosts", LOAD_PLAN_MAX_HOSTS);
  plan->hosts = calloc(json_array_size(hosts), sizeof(*plan->hosts));
  plan->server_names = calloc(json_array_size(hosts), sizeof(*plan->server_names));
  if (!plan->hosts || !plan->server_names) return fail(r, "out of memory");
  for (size_t i = 0; i < json_array_size(hosts); i++) {
    json_t *h = json_array_get(hosts, i);
    char where[32];
    snprintf(where, sizeof(where), "hosts[%zu]", i);
    if (!json_is_object(h)) return fail(r, "%s: expected an object", where);
    char key[48];
    snprintf(key, sizeof(key), "%s.name", where);
    load_host *host = &plan->hosts[plan->n_hosts++];
    if (!(host->name = dup_string(r, json_object_get(h, "name"), key, 255))) return -1;
    size_t name_len = strlen(host->name);
    if (!is_token(host->name, name_len, 255) && !is_ipv6_literal(host->name, name_len))
      return fail(r, "%s: not a host name", key);
    /* An IPv6 literal is checked by TLS as the address, without its brackets. */
    int bracketed = host->name[0] == '[';
    plan->server_names[i] = strndup(host->name + bracketed, name_len - 2 * (size_t)bracketed);
    if (!plan->server_names[i]) return fail(r, "out of memory");
    int64_t port;
    if (get_int(r, h, "port", where, 1, 65535, &port)) return -1;
    host->port = (int)port;
  }
  json_t *resources = json_object_get(root, "resources");
  if (!json_is_array(resources) || json_array_size(resources) == 0 ||
      json_array_size(resources) > LOAD_PLAN_MAX_RESOURCES)
    return fail(r, "resources: expected an array of 1 to %d resources", LOAD_PLAN_MAX_RESOURCES);
  plan->n_resources = json_array_size(resources);
  plan->resources = calloc(plan->n_resources, sizeof(*plan->resources));
  if (!plan->resources) return fail(r, "out of memory");
  for (size_t i = 0; i < plan->n_resources; i++)
    if (read_resource(r, json_array_get(resources, i), i, plan, &plan->resources[i])) return -1;
  return check_acyclic(r, plan);
}

int load_plan_parse(const char *text, size_t len, load_plan **out, char *err, size_t err_len) {
  reader r = {err, err_len};
  json_error_t jerr;
  json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!root) return fail(&r, "line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
  load_plan *plan = calloc(1, sizeof(*plan));
  int rv = plan ? read_plan(&r, root, plan) : fail(&r, "out of memory");
  json_decref(root);
  if (rv != 0) {
    load_plan_del(plan);
    return -1;
  }
  *out = plan;
  return 0;
}

int load_plan_read(const char *file, load_plan **out, char *err, size_t err_len) {
  reader r = {err, err_len};
  FILE *f = fopen(file, "rb");
  if (!f) return fail(&r, "%s", strerror(errno));
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  while (buf) {
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (n == 0) break;
    if (len == cap) {
      /* The last buffer is one byte larger than the maximum: only a longer file fills it
       * (a file of exactly the maximum leaves that byte unused). */
      if (cap > LOAD_PLAN_MAX_FILE) {
        free(buf);
        fclose(f);
        return fail(&r, "larger than %u bytes", LOAD_PLAN_MAX_FILE);
      }
      size_t grown = cap * 2 > LOAD_PLAN_MAX_FILE ? (size_t)LOAD_PLAN_MAX_FILE + 1 : cap * 2;
      char *bigger = realloc(buf, grown);
      if (!bigger) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = bigger;
      cap = grown;
    }
  }
  int read_error = ferror(f);
  fclose(f);
  if (!buf) return fail(&r, "out of memory");
  if (read_error) {
    free(buf);
    return fail(&r, "read error");
  }
  int rv = load_plan_parse(buf, len, out, err, err_len);
  free(buf);
  return rv;
}

void load_plan_del(load_plan *plan) {
  if (!plan) return;
  for (size_t i = 0; i < plan->n_hosts; i++) {
    free(plan->hosts[i].name);
    if (plan->server_names) free(plan->server_names[i]);
  }
  free(plan->server_names);
  for (size_t i = 0; plan->resources && i < plan->n_resources; i++) {
    load_resource *res = &plan->resources[i];
    for (size_t j = 0; j < res->n_request_headers; j++) {
      free(res->request_headers[j].name);
      free(res->request_headers[j].value);
    }
    free(res->request_headers);
    free(res->method);
    free(res->path);
  }
  free(plan->hosts);
  free(plan->resources);
  free(plan->source);
  free(plan->page);
  free(plan);
}

const char *load_plan_server_name(const load_plan *plan, size_t host) {
  if (plan->server_names != NULL && plan->server_names[host] != NULL)
    return plan->server_names[host];
  return plan->hosts[host].name;
}

int load_plan_find_host(const load_plan *plan, const char *name, size_t len) {
  const char *colon = memchr(name, ':', len);
  if (colon) len = (size_t)(colon - name);
  for (size_t i = 0; i < plan->n_hosts; i++)
    if (strlen(plan->hosts[i].name) == len && strncasecmp(plan->hosts[i].name, name, len) == 0)
      return (int)i;
  return -1;
}

int load_plan_final_target(const load_plan *plan, int id) {
  for (size_t hops = 0; hops < plan->n_resources && plan->resources[id].redirect_to >= 0; hops++)
    id = plan->resources[id].redirect_to;
  return id;
}

load_type load_plan_reference_type(const load_plan *plan, int id) {
  const load_resource *t = &plan->resources[load_plan_final_target(plan, id)];
  if (t->type == LOAD_TYPE_IMAGE && t->body_size == 0) return LOAD_TYPE_OTHER;
  if (t->type == LOAD_TYPE_DOCUMENT &&
      (t->status == 204 || t->status == 205 || (t->body_size == 0 && t->status != 200)))
    return LOAD_TYPE_OTHER;
  return t->type;
}

int load_plan_referencing(const load_plan *plan, int id) {
  const load_resource *r = &plan->resources[id];
  return load_plan_final_target(plan, r->parent >= 0 ? r->parent : 0);
}

int load_plan_document_of(const load_plan *plan, int id) {
  int page = load_plan_final_target(plan, 0);
  for (size_t hops = 0; hops <= plan->n_resources; hops++) {
    const load_resource *r = &plan->resources[id];
    if (r->type == LOAD_TYPE_DOCUMENT || id == page) return id;
    id = load_plan_referencing(plan, id);
  }
  return page;
}
