/* plan.c — HAR page → page plan (plan.h) and the `speedy lab plan` command.
 *
 * The plan is the only thing the replay server and the loader see of a recording, so
 * every rule that decides what is replayed lives here or in har_fix.c/page.c, and
 * docs/lab.md ("Plan") lists them.
 */
#define _POSIX_C_SOURCE 200809L
#include "plan.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define PROG "speedy lab plan"
#define MAX_PATH_BYTES 8192u              /* the replay server's longest request target */
#define MAX_VALUE_BYTES 65536u            /* the loader's longest header value */
#define MAX_REQUEST_HEADERS 128u          /* the loader's most request fields per resource */
#define MAX_RESPONSE_HEADERS 256u         /* the replay server's most response fields */
#define MAX_BODY_BYTES ((int64_t)1 << 40) /* the replay server's largest body (1 TiB) */

static int path_ends_with(const lab_entry *e, const char *suffix) {
  size_t path_len = strcspn(e->parsed.path, "?");
  size_t n = strlen(suffix);
  return path_len >= n && strncasecmp(e->parsed.path + path_len - n, suffix, n) == 0;
}

static int mime_is(const lab_entry *e, const char *prefix) {
  return strncasecmp(e->mime_type, prefix, strlen(prefix)) == 0;
}

const char *lab_plan_type(const lab_entry *e) {
  if (lab_entry_is_html(e)) return "document";
  if (lab_entry_is_css(e)) return "css";
  if (lab_entry_is_script(e)) return "script";
  if (mime_is(e, "font/") || strstr(e->mime_type, "font") != NULL) return "font";
  if (mime_is(e, "image/")) return "image";
  if (e->mime_type[0] == '\0' || mime_is(e, "application/octet-stream")) {
    static const char *const fonts[] = {".woff", ".woff2", ".ttf", ".otf", ".eot"};
    static const char *const images[] = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico"};
    for (size_t i = 0; i < sizeof fonts / sizeof fonts[0]; i++)
      if (path_ends_with(e, fonts[i])) return "font";
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
      if (path_ends_with(e, images[i])) return "image";
  }
  return "other";
}

/* Header fields a replay never carries as recorded (docs/lab-formats.md), plus, on
 * requests, what only a warm cache or a request body would send. */
static int dropped(const char *lower, int request) {
  static const char *const both[] = {"connection",        "keep-alive", "proxy-connection",
                                     "transfer-encoding", "upgrade",    "te",
                                     "trailer",           "host",       "content-length"};
  static const char *const requests[] = {"if-none-match", "if-modified-since", "if-match",
                                         "if-unmodified-since", "if-range"};
  if (lower[0] == ':') return 1;
  for (size_t i = 0; i < sizeof both / sizeof both[0]; i++)
    if (strcmp(lower, both[i]) == 0) return 1;
  if (request) {
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++)
      if (strcmp(lower, requests[i]) == 0) return 1;
  } else if (strcmp(lower, "content-encoding") == 0) {
    return 1;
  }
  return 0;
}

static int is_tchar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Appends [name, value] with the name lower-cased, unless the field is dropped or cannot
 * be sent (not a token, a control byte in the value). Returns 0 or -1 (out of memory). */
static int add_header(json_t *list, const lab_header *h, int request, const char *also_drop) {
  char name[257];
  if (h->name_len == 0 || h->name_len >= sizeof name || h->value_len > MAX_VALUE_BYTES) return 0;
  for (size_t i = 0; i < h->name_len; i++) {
    unsigned char c = (unsigned char)h->name[i];
    if (!is_tchar(c) && !(i == 0 && c == ':')) return 0;
    name[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
  }
  name[h->name_len] = '\0';
  if (dropped(name, request) || (also_drop != NULL && strcmp(name, also_drop) == 0)) return 0;
  for (size_t i = 0; i < h->value_len; i++) {
    unsigned char c = (unsigned char)h->value[i];
    if ((c < 0x20 && c != '\t') || c == 0x7f) return 0;
  }
  json_t *value = json_stringn_nocheck(h->value, h->value_len);
  json_t *pair = json_pack("[s, o]", name, value);
  if (pair == NULL) return -1;
  return json_array_append_new(list, pair);
}

/* The fields that can be replayed, in recorded order; past the readers' bounds
 * (MAX_REQUEST_HEADERS, MAX_RESPONSE_HEADERS) the rest is left out. */
static json_t *header_list(const lab_header *headers, size_t n, int request,
                           const char *also_drop) {
  json_t *list = json_array();
  size_t max = request ? MAX_REQUEST_HEADERS : MAX_RESPONSE_HEADERS;
  for (size_t i = 0; list != NULL && i < n && json_array_size(list) < max; i++)
    if (add_header(list, &headers[i], request, also_drop) != 0) {
      json_decref(list);
      return NULL;
    }
  return list;
}

/* The path percent-encoded to visible ASCII into out; -1 when longer than out. */
static int encode_path(const char *path, char *out, size_t out_size) {
  static const char hex[] = "0123456789ABCDEF";
  size_t o = 0;
  for (const unsigned char *p = (const unsigned char *)path; *p != '\0'; p++) {
    if (*p > 0x20 && *p < 0x7f) {
      if (out_size - o < 2) return -1;
      out[o++] = (char)*p;
    } else {
      if (out_size - o < 4) return -1;
      out[o++] = '%';
      out[o++] = hex[*p >> 4];
      out[o++] = hex[*p & 15];
    }
  }
  out[o] = '\0';
  return o > 0 && out[0] == '/' ? 0 : -1;
}

typedef struct builder {
  const lab_har *har;
  const lab_page *page;
  long *resource_of; /* per page entry: resource id, or -1 when not replayed */
  size_t *entry_of;  /* per resource: page entry */
  size_t n_resources;
  char (*host_names)[256];
  int *host_ports;
  char (*host_addresses)[48]; /* recorded serverIPAddress labels, "" when unknown */
  size_t n_hosts;
} builder;

/* The recorded server address of an entry as a label for grouping hosts (coalescing in
 * `speedy lab run`), or "" when the recording has none or it is no address's text. */
static const char *address_label(const lab_entry *e) {
  const char *a = e->server_ip != NULL ? e->server_ip : "";
  size_t n = strlen(a);
  if (n == 0 || n > 47 || strspn(a, "0123456789abcdefABCDEF.:[]") != n) return "";
  return a;
}

static long host_index(builder *b, const lab_url *url, const lab_entry *e) {
  const char *address = e != NULL ? address_label(e) : "";
  for (size_t i = 0; i < b->n_hosts; i++)
    if (b->host_ports[i] == url->port && strcmp(b->host_names[i], url->host) == 0) {
      /* the first entry that has one names the host's address */
      if (b->host_addresses[i][0] == '\0')
        snprintf(b->host_addresses[i], sizeof b->host_addresses[0], "%s", address);
      return (long)i;
    }
  if (b->n_hosts >= LAB_PLAN_MAX_HOSTS) return -1;
  snprintf(b->host_names[b->n_hosts], sizeof b->host_names[0], "%s", url->host);
  snprintf(b->host_addresses[b->n_hosts], sizeof b->host_addresses[0], "%s", address);
  b->host_ports[b->n_hosts] = url->port;
  return (long)b->n_hosts++;
}

/* A canonical host (host.h): a name of [a-z0-9._-] or a bracketed IPv6 literal. */
static int valid_host_name(const char *h) {
  size_t n = strlen(h);
  if (n == 0 || h[0] == '.' || n > 253) return 0;
  if (h[0] == '[') return n > 2 && h[n - 1] == ']' && strspn(h + 1, "0123456789abcdef:.") == n - 2;
  for (const unsigned char *p = (const unsigned char *)h; *p; p++)
    if (!(*p >= 'a' && *p <= 'z') && !(*p >= '0' && *p <= '9') && *p != '-' && *p != '_' &&
        *p != '.')
      return 0;
  return 1;
}

/* A method the replay server and the loader accept: a token of 1 to 32 bytes. */
static int valid_method(const char *m) {
  size_t n = strlen(m);
  if (n == 0 || n > 32) return 0;
  for (size_t i = 0; i < n; i++)
    if (!is_tchar((unsigned char)m[i])) return 0;
  return 1;
}

/* Why entry e is not replayed, or NULL when it is: left out by the cold-cache policy, an
 * unusable URL or method, a status outside what a server can answer, a body larger than
 * it serves, a path too long. The reasons are the keys of the plan's "left_out". */
static const char *left_out_reason(const lab_entry *e) {
  if (e->flags & LAB_FLAG_BAD_URL) {
    if (strncasecmp(e->url, "data:", 5) == 0) return "data: URL";
    if (strncasecmp(e->url, "blob:", 5) == 0) return "blob: URL";
    if (strncasecmp(e->url, "ws:", 3) == 0 || strncasecmp(e->url, "wss:", 4) == 0)
      return "websocket";
    if (strncasecmp(e->url, "http://", 7) == 0 || strncasecmp(e->url, "https://", 8) == 0)
      return "unusable host or port";
    return "not an http(s) URL";
  }
  if (e->flags & LAB_FLAG_STATUS_ZERO) return "no answer (status 0)";
  if (e->replay == LAB_REPLAY_LEFT_OUT) return "304 without a recorded copy";
  if (e->replay_status == 101) return "websocket";
  if (e->replay_status < 200 || e->replay_status > 599) return "status outside 200-599";
  if (e->replay_size > MAX_BODY_BYTES) return "body over 1 TiB";
  if (!valid_host_name(e->parsed.host)) return "unusable host or port";
  if (!valid_method(e->method)) return "method not a token";
  return NULL;
}

/* Do two entries make the same request as a replay server sees it: host name, port (80
 * and 443 as one: Host names neither), path? */
static int same_request(const lab_entry *a, const lab_entry *b) {
  int pa = a->parsed.port, pb = b->parsed.port;
  int same_port = pa == pb || ((pa == 80 || pa == 443) && (pb == 80 || pb == 443));
  return same_port && strcmp(a->parsed.host, b->parsed.host) == 0 &&
         strcmp(a->parsed.path, b->parsed.path) == 0;
}

/* Is page entry k a redirect to a later replayed entry that makes the same request —
 * http://x/ to https://x/, or a cookie check to its own URL? A replay cannot tell the two
 * apart (one server, one port, the same Host and path), so the redirect is left out and
 * its target stands for both. */
static int redirects_to_itself(const lab_har *har, const lab_page *page, size_t k) {
  const lab_entry *e = &har->entries[page->entries[k]];
  if (!(e->flags & LAB_FLAG_REDIRECT) || e->location == NULL) return 0;
  for (size_t j = k + 1; j < page->n_entries; j++) {
    const lab_entry *t = &har->entries[page->entries[j]];
    if (!lab_url_same(t->url, e->location)) continue;
    return left_out_reason(t) == NULL && same_request(e, t);
  }
  return 0;
}

/* The nearest replayed ancestor of page entry k, as a resource id, or -1. */
static long parent_resource(const builder *b, const size_t *parents, size_t k) {
  size_t at = parents[k];
  for (size_t steps = 0; at != LAB_NO_ENTRY && steps <= b->page->n_entries; steps++) {
    if (b->resource_of[at] >= 0) return b->resource_of[at];
    at = parents[at];
  }
  return -1;
}

static json_t *build_resource(builder *b, size_t id, const size_t *parents, json_t *resources,
                              char *err, size_t err_size) {
  size_t k = b->entry_of[id];
  const lab_entry *e = &b->har->entries[b->page->entries[k]];
  char path[MAX_PATH_BYTES + 1];
  encode_path(e->parsed.path, path, sizeof path); /* checked when the resource was kept */
  long host = host_index(b, &e->parsed, e);
  long parent = parent_resource(b, parents, k);
  const char *type = lab_plan_type(e);
  /* A redirect's target: the first later resource on the target URL whose parent is it. */
  long redirect_to = -1;
  if ((e->flags & LAB_FLAG_REDIRECT) && e->location != NULL && e->replay_status >= 300 &&
      e->replay_status <= 399) {
    for (size_t j = id + 1; j < b->n_resources && redirect_to < 0; j++) {
      size_t kj = b->entry_of[j];
      if (parent_resource(b, parents, kj) == (long)id &&
          lab_url_same(b->har->entries[b->page->entries[kj]].url, e->location))
        redirect_to = (long)j;
    }
  }
  long discover_offset = 0;
  int64_t body = e->replay_size > 0 ? e->replay_size : 0;
  int status = e->replay_status;
  if (status == 204 || status == 304 || strcmp(e->method, "HEAD") == 0) body = 0;
  if (parent >= 0) {
    const json_t *p = json_array_get(resources, (size_t)parent);
    const char *ptype = json_string_value(json_object_get(p, "type"));
    json_int_t psize = json_integer_value(json_object_get(p, "body_size"));
    int via_redirect = json_integer_value(json_object_get(p, "redirect_to")) == (json_int_t)id;
    if (!via_redirect && ptype != NULL && strcmp(ptype, "document") == 0) {
      double share = b->page->discovery[k];
      if (share < 0) share = 0;
      if (share > 1) share = 1;
      discover_offset = (long)(share * (double)psize + 0.5);
    } else {
      discover_offset = -1;
    }
  }
  /* A 304 replayed as a 200 answers with its recorded copy's headers (a cold load). */
  const lab_entry *headers_from = e;
  if (e->replay == LAB_REPLAY_AS_200_CACHED && e->cached_copy < b->har->n_entries)
    headers_from = &b->har->entries[e->cached_copy];
  json_t *request_headers = header_list(e->request_headers, e->n_request_headers, 1, NULL);
  json_t *response_headers =
      header_list(headers_from->response_headers, headers_from->n_response_headers, 0,
                  redirect_to >= 0 ? "location" : NULL);
  if (request_headers == NULL || response_headers == NULL) {
    json_decref(request_headers);
    json_decref(response_headers);
    snprintf(err, err_size, "out of memory");
    return NULL;
  }
  json_t *r =
      json_pack("{s:I, s:I, s:s, s:s, s:s, s:I, s:I, s:f, s:o, s:i, s:o, s:I, s:I, s:b}", "id",
                (json_int_t)id, "host", (json_int_t)host, "method", e->method, "path", path, "type",
                type, "parent", (json_int_t)parent, "discover_offset", (json_int_t)discover_offset,
                "start_delay", 0.0, "request_headers", request_headers, "status", status,
                "response_headers", response_headers, "body_size", (json_int_t)body, "redirect_to",
                (json_int_t)redirect_to, "after_cutoff", b->page->after_cutoff[k] != 0);
  if (r == NULL) snprintf(err, err_size, "out of memory");
  return r;
}

/* Do hosts a and b look the same in a request? Same name, and the same port — where 80
 * and 443 are one (the Host header names neither, and a replay serves every host on one
 * port: http://x/ and https://x/ meet in one server). */
static int same_request_host(const builder *b, json_int_t a, json_int_t c) {
  if (a == c) return 1;
  if (a < 0 || c < 0 || (size_t)a >= b->n_hosts || (size_t)c >= b->n_hosts) return 0;
  int pa = b->host_ports[a], pc = b->host_ports[c];
  int same_port = pa == pc || ((pa == 80 || pa == 443) && (pc == 80 || pc == 443));
  return same_port && strcmp(b->host_names[a], b->host_names[c]) == 0;
}

/* A URL requested again is answered like its first request: the replay server cannot tell
 * repeats apart, and the loader checks each answer against its own resource. "Again"
 * counts what the server sees: the same host as sent in a request, method and path. */
static void align_repeats(const builder *b, json_t *resources) {
  size_t n = json_array_size(resources);
  for (size_t j = 1; j < n; j++) {
    json_t *rj = json_array_get(resources, j);
    for (size_t i = 0; i < j; i++) {
      json_t *ri = json_array_get(resources, i);
      if (!same_request_host(b, json_integer_value(json_object_get(ri, "host")),
                             json_integer_value(json_object_get(rj, "host"))) ||
          !json_equal(json_object_get(ri, "method"), json_object_get(rj, "method")) ||
          !json_equal(json_object_get(ri, "path"), json_object_get(rj, "path")))
        continue;
      json_object_set(rj, "status", json_object_get(ri, "status"));
      json_object_set(rj, "body_size", json_object_get(ri, "body_size"));
      json_object_set(rj, "response_headers", json_object_get(ri, "response_headers"));
      json_object_set_new(rj, "redirect_to", json_integer(-1));
      json_object_set_new(rj, "repeat_of", json_integer((json_int_t)i));
      break;
    }
  }
}

size_t lab_plan_address_groups(const json_t *plan, unsigned *group_of, size_t n_hosts) {
  const json_t *hosts = json_object_get(plan, "hosts");
  size_t groups = 0;
  for (size_t h = 0; h < n_hosts; h++) {
    const char *address = json_string_value(json_object_get(json_array_get(hosts, h), "address"));
    group_of[h] = (unsigned)groups;
    int found = 0;
    for (size_t k = 0; address != NULL && address[0] != '\0' && k < h && !found; k++) {
      const char *other = json_string_value(json_object_get(json_array_get(hosts, k), "address"));
      if (other != NULL && strcmp(other, address) == 0) group_of[h] = group_of[k], found = 1;
    }
    if (!found) groups++;
  }
  return groups;
}

json_t *lab_plan_build(const lab_har *har, const lab_page_set *pages, size_t page_index,
                       const lab_plan_options *options, char *err, size_t err_size) {
  if (page_index >= pages->n_pages) {
    snprintf(err, err_size, "no page %zu (the file has %zu)", page_index + 1, pages->n_pages);
    return NULL;
  }
  const lab_page *page = &pages->pages[page_index];
  builder b = {.har = har, .page = page};
  size_t n = page->n_entries ? page->n_entries : 1;
  b.resource_of = malloc(n * sizeof *b.resource_of);
  b.entry_of = malloc(n * sizeof *b.entry_of);
  b.host_names = malloc(LAB_PLAN_MAX_HOSTS * sizeof *b.host_names);
  b.host_ports = malloc(LAB_PLAN_MAX_HOSTS * sizeof *b.host_ports);
  b.host_addresses = malloc(LAB_PLAN_MAX_HOSTS * sizeof *b.host_addresses);
  json_t *plan = NULL, *resources = json_array(), *hosts = json_array(), *left_out = NULL;
  if (!b.resource_of || !b.entry_of || !b.host_names || !b.host_ports || !b.host_addresses ||
      !resources || !hosts) {
    snprintf(err, err_size, "out of memory");
    goto out;
  }
  char path[MAX_PATH_BYTES + 1];
  left_out = json_object();
  if (left_out == NULL) {
    snprintf(err, err_size, "out of memory");
    goto out;
  }
  for (size_t k = 0; k < page->n_entries; k++) {
    const lab_entry *e = &har->entries[page->entries[k]];
    b.resource_of[k] = -1;
    const char *why = left_out_reason(e);
    if (why == NULL && encode_path(e->parsed.path, path, sizeof path) != 0) why = "path too long";
    if (why == NULL && redirects_to_itself(har, page, k)) why = "redirect to the same request";
    if (why != NULL) {
      json_int_t count = json_integer_value(json_object_get(left_out, why));
      json_object_set_new(left_out, why, json_integer(count + 1));
      continue;
    }
    if (host_index(&b, &e->parsed, e) < 0) {
      snprintf(err, err_size, "more than %d hosts", LAB_PLAN_MAX_HOSTS);
      goto out;
    }
    b.resource_of[k] = (long)b.n_resources;
    b.entry_of[b.n_resources++] = k;
  }
  if (b.n_resources == 0) {
    snprintf(err, err_size, "nothing to replay");
    goto out;
  }
  b.n_hosts = 0; /* rebuilt in resource order below (the same order) */
  const size_t *parents = options->flat_graph ? page->parent : page->parent_estimated;
  for (size_t id = 0; id < b.n_resources; id++) {
    json_t *r = build_resource(&b, id, parents, resources, err, err_size);
    if (r == NULL || json_array_append_new(resources, r) != 0) goto out;
  }
  align_repeats(&b, resources);
  for (size_t i = 0; i < b.n_hosts; i++) {
    json_t *host = json_pack("{s:s, s:i}", "name", b.host_names[i], "port", b.host_ports[i]);
    if (host != NULL && b.host_addresses[i][0] != '\0')
      json_object_set_new(host, "address", json_string(b.host_addresses[i]));
    json_array_append_new(hosts, host);
  }
  char page_name[64];
  snprintf(page_name, sizeof page_name, page_index == 0 ? "first page" : "page %zu",
           page_index + 1);
  plan = json_pack("{s:s, s:s, s:s, s:I, s:s, s:b, s:f, s:O, s:O, s:O}", "format", LAB_PLAN_FORMAT,
                   "source", har->name, "page", page_name, "seed", (json_int_t)options->seed,
                   "graph", options->flat_graph ? "flat" : "estimated", "document_missing",
                   page->document_missing, "recorded_load_ms", page->load_ms_cut, "left_out",
                   left_out, "hosts", hosts, "resources", resources);
  if (plan == NULL) snprintf(err, err_size, "out of memory");
out:
  json_decref(resources);
  json_decref(hosts);
  json_decref(left_out);
  free(b.resource_of);
  free(b.entry_of);
  free(b.host_names);
  free(b.host_ports);
  free(b.host_addresses);
  return plan;
}

json_t *lab_plan_page(const lab_har *har, const lab_page_set *pages, size_t page_index,
                      const lab_plan_options *options, char *why, size_t why_size) {
  if (page_index < pages->n_pages &&
      lab_page_skip_reason(har, &pages->pages[page_index], why, why_size) != NULL)
    return NULL;
  return lab_plan_build(har, pages, page_index, options, why, why_size);
}

/* ---- speedy lab plan ---------------------------------------------------------------- */

/* "<dir>/<har name without .har>[-pN].json" */
static void plan_file_name(char *out, size_t size, const char *dir, const char *har_name,
                           size_t page_index) {
  size_t len = strlen(har_name);
  if (len > 4 && strcasecmp(har_name + len - 4, ".har") == 0) len -= 4;
  if (page_index == 0)
    snprintf(out, size, "%s/%.*s.json", dir, (int)len, har_name);
  else
    snprintf(out, size, "%s/%.*s-p%zu.json", dir, (int)len, har_name, page_index + 1);
}

static int write_plan(json_t *plan, const char *file) {
  int flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10);
  if (file == NULL) {
    if (json_dumpf(plan, stdout, flags) != 0) return -1;
    putchar('\n');
    return 0;
  }
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", file);
  FILE *f = fopen(tmp, "w");
  if (f == NULL) return -1;
  int rc = json_dumpf(plan, f, flags);
  if (fputc('\n', f) == EOF) rc = -1;
  if (fclose(f) != 0) rc = -1;
  if (rc == 0 && rename(tmp, file) != 0) rc = -1;
  if (rc != 0) remove(tmp);
  return rc;
}

int lab_plan_main(int argc, char **argv) {
  static const struct option long_options[] = {
      {"output", required_argument, NULL, 'o'}, {"dir", required_argument, NULL, 'd'},
      {"all-pages", no_argument, NULL, 'a'},    {"graph", required_argument, NULL, 'g'},
      {"cutoff", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 's'},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  lab_plan_options options = {.flat_graph = 0, .seed = 1};
  lab_page_options page_options;
  lab_page_options_default(&page_options);
  const char *output = NULL, *dir = NULL;
  int all_pages = 0, c;
  char *end;
  optind = 1;
  while ((c = getopt_long(argc, argv, "o:d:ag:c:s:h", long_options, NULL)) != -1) {
    switch (c) {
    case 'o':
      output = optarg;
      break;
    case 'd':
      dir = optarg;
      break;
    case 'a':
      all_pages = 1;
      break;
    case 'g':
      if (strcmp(optarg, "flat") != 0 && strcmp(optarg, "estimated") != 0) {
        fprintf(stderr, PROG ": bad --graph '%s' (flat or estimated)\n", optarg);
        return 2;
      }
      options.flat_graph = strcmp(optarg, "flat") == 0;
      break;
    case 'c': {
      double v = strtod(optarg, &end);
      if (end == optarg || *end != '\0' || v < 0 || v > 3600) {
        fprintf(stderr, PROG ": bad --cutoff '%s' (seconds, 0 for none)\n", optarg);
        return 2;
      }
      page_options.cutoff_idle_ms = v * 1000;
      break;
    }
    case 's':
      errno = 0;
      options.seed = strtoull(optarg, &end, 10);
      if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-') {
        fprintf(stderr, PROG ": bad --seed '%s' (a non-negative integer)\n", optarg);
        return 2;
      }
      break;
    case 'h':
      printf("Usage: speedy lab plan [OPTION]... HAR...\n"
             "Page plans (speedy-lab-plan/1, docs/lab-formats.md) for the replay server and the\n"
             "loader, from the first page of each recording that can be replayed (pages before\n"
             "it are skipped, with the reason on stderr).\n\n"
             "  -o, --output FILE  write the plan there (one HAR, one page; default: stdout)\n"
             "  -d, --dir DIR      write DIR/<name>.json per page (DIR/<name>-pN.json for page N)\n"
             "  -a, --all-pages    every page of each recording (needs --dir)\n"
             "  -g, --graph G      dependencies: estimated (scripts' children from timing) or\n"
             "                     flat (Referer only) (default: estimated)\n"
             "  -c, --cutoff S     end of load after S seconds of network idle (default %.0f)\n"
             "  -s, --seed N       the replay's body-byte seed (default 1)\n"
             "  -h, --help         this help\n",
             page_options.cutoff_idle_ms / 1000);
      return 0;
    default:
      return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, PROG ": no HAR files (try '" PROG " --help')\n");
    return 2;
  }
  if (dir == NULL && (all_pages || argc - optind > 1)) {
    fprintf(stderr, PROG ": several plans need --dir DIR\n");
    return 2;
  }
  if (dir != NULL && output != NULL) {
    fprintf(stderr, PROG ": --output and --dir exclude each other\n");
    return 2;
  }
  if (dir != NULL && mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, PROG ": cannot create --dir %s: %s\n", dir, strerror(errno));
    return 1;
  }
  int failed = 0;
  char err[512], file[4096];
  for (int i = optind; i < argc; i++) {
    lab_har *har = NULL;
    if (lab_har_load(argv[i], &har, err, sizeof err) != 0) {
      fprintf(stderr, "speedy lab: %s\n", err);
      failed = 1;
      continue;
    }
    lab_page_set pages;
    if (lab_pages_extract(har, &page_options, &pages) != 0) {
      fprintf(stderr, "speedy lab: %s: out of memory\n", har->name);
      lab_har_free(har);
      failed = 1;
      continue;
    }
    /* Every page, or the first that yields a plan: pages before it are skipped, with the
     * reason (docs/lab.md, "Which pages are replayed"). */
    int planned = 0;
    for (size_t p = 0; p < pages.n_pages && (all_pages || !planned); p++) {
      json_t *plan = lab_plan_page(har, &pages, p, &options, err, sizeof err);
      if (plan == NULL) {
        fprintf(stderr, "speedy lab: %s: page %zu skipped: %s\n", har->name, p + 1, err);
        continue;
      }
      planned = 1;
      const char *target = output;
      if (dir != NULL) {
        plan_file_name(file, sizeof file, dir, har->name, p);
        target = file;
      }
      if (write_plan(plan, target) != 0) {
        fprintf(stderr, PROG ": cannot write %s: %s\n", target ? target : "stdout",
                strerror(errno));
        failed = 1;
      }
      json_decref(plan);
    }
    if (!planned) {
      fprintf(stderr, "speedy lab: %s: no page to replay (%zu page%s)\n", har->name, pages.n_pages,
              pages.n_pages == 1 ? "" : "s");
      failed = 1;
    }
    lab_pages_free(&pages);
    lab_har_free(har);
  }
  return failed ? 1 : 0;
}
