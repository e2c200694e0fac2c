/* fuzz_plan.c — harness `plan`: the two readers of page plans (speedy-lab-plan/1) fed
 * arbitrary bytes: replay_plan_parse (src/replay/replay_plan.c, speedyd --replay PLAN) and
 * load_plan_parse (src/load/load_plan.c, speedy load PLAN).
 *
 * Input: the bytes of a plan file (JSON), given to both readers.
 *
 * Checked, replay side: a refused plan leaves one NUL-terminated message naming the file;
 * an accepted one has 1..REPLAY_MAX_HOSTS hosts with lower-case names and ports 1-65535,
 * resources whose id is their index, host in range, a token method, a path starting with
 * '/', a status 200-599, no body for 204/304, a redirect only from a 3xx to another
 * resource, and response headers with lower-case names and values free of CR and LF.
 * For the first resources, speedyd's answer is built as for a request: replay_plan_find
 * returns the first resource of that (host, method, path); replay_serve answers its status
 * with Content-Length = body_size, an HTTP/1.1 head that formats, a Location that fits,
 * and body bytes equal to replay_body_fill's.
 * Loader side: hosts and resources within their bounds, parents and redirects in range,
 * following parents and redirects from any resource ends (no cycle), header names
 * lower-case tokens, values without control bytes, and load_plan_find_host finding every
 * host by name.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_common.h"
#include "http_err.h"
#include "http_request.h"
#include "http_response.h"
#include "load_plan.h"
#include "replay.h"

/* Resources served per input (each builds a response and reads some body). */
#define PLAN_SERVED 32
/* Body bytes read and compared per served resource. */
#define PLAN_BODY_BYTES 4096

static void check_serve(const replay_plan *plan, const replay_resource *r) {
  const replay_host *host = replay_plan_host(plan, r->host);
  char authority[REPLAY_MAX_HOST_NAME + 16];
  snprintf(authority, sizeof(authority), "%s:%d", host->name, host->port);
  int found_host = replay_plan_find_host(plan, authority);
  if (found_host < 0 || strcmp(replay_plan_host(plan, (size_t)found_host)->name, host->name) != 0 ||
      replay_plan_host(plan, (size_t)found_host)->port != host->port)
    fuzz_fail("host %s not found by its authority (got %d)", authority, found_host);
  if ((uint32_t)found_host != r->host) return; /* a duplicate host entry answers instead */
  const replay_resource *first = replay_plan_find(plan, r->host, r->method, r->path);
  if (first == NULL || first->id > r->id || first->host != r->host ||
      strcmp(first->method, r->method) != 0 || strcmp(first->path, r->path) != 0)
    fuzz_fail("resource %u (%s %s) not found by replay_plan_find", r->id, r->method, r->path);

  http_request request;
  http_request_init(&request, HTTP_PROTO_HTTP11, 0, 0);
  if (http_request_set_method(&request, r->method, strlen(r->method)) != 0 ||
      http_request_set_path(&request, r->path, strlen(r->path)) != 0 ||
      http_request_set_authority(&request, authority, strlen(authority)) != 0 ||
      http_request_set_scheme(&request, "http", 4) != 0) {
    /* A path near REPLAY_MAX_PATH with a long host passes HTTP_REQUEST_MAX_LINE: such a
     * request is answered 414 before the plan is asked. */
    if (request.error != HTTP_ERR_URI_TOO_LONG)
      fuzz_fail("a request for resource %u cannot be built: %d", r->id, request.error);
    http_request_free(&request);
    return;
  }
  http_response response;
  http_response_init(&response);
  if (replay_serve(plan, -1, &request, &response) != 0) fuzz_fail("replay_serve failed");
  if (response.status != first->status)
    fuzz_fail("resource %u answered %d, plan says %d", first->id, response.status, first->status);
  const char *length = http_headers_get(&response.headers, "content-length");
  char expected[24];
  snprintf(expected, sizeof(expected), "%llu", (unsigned long long)first->body_size);
  if (length == NULL || strcmp(length, expected) != 0)
    fuzz_fail("resource %u: content-length %s, body_size %s", first->id, length ? length : "-",
              expected);
  if (first->redirect_to >= 0 && http_headers_get(&response.headers, "location") == NULL)
    fuzz_fail("redirect %u without a Location", first->id);
  char *head = NULL;
  size_t head_len = 0;
  if (http_response_format_http1(&response, "HTTP/1.1", NULL, &head, &head_len) != 0)
    fuzz_fail("the answer's head does not format");
  if (head_len < 4 || memcmp(head + head_len - 4, "\r\n\r\n", 4) != 0 ||
      strstr(head, "\r\n\r\n") != head + head_len - 4)
    fuzz_fail("the answer's head has an empty line inside: %.200s", head);
  free(head);
  if (response.body != NULL) {
    static uint8_t got[PLAN_BODY_BYTES], want[PLAN_BODY_BYTES];
    uint64_t offset = 0;
    int eof = 0;
    /* Read in uneven pieces: any split must give replay_body_fill's bytes. */
    for (size_t piece = 1; !eof && offset < PLAN_BODY_BYTES; piece = piece * 3 + 1) {
      size_t want_len = PLAN_BODY_BYTES - (size_t)offset;
      if (want_len > piece) want_len = piece;
      int64_t n = http_body_read(response.body, got, want_len, &eof);
      if (n < 0 || (uint64_t)n > want_len) fuzz_fail("body read returned %lld", (long long)n);
      replay_body_fill(replay_plan_seed(plan), first->id, offset, want, (size_t)n);
      if (memcmp(got, want, (size_t)n) != 0)
        fuzz_fail("resource %u: body bytes at %llu differ from the generator", first->id,
                  (unsigned long long)offset);
      offset += (uint64_t)n;
      if (n == 0 && !eof) fuzz_fail("body read gave nothing before its end");
    }
    if (eof && offset != first->body_size)
      fuzz_fail("resource %u: body ended at %llu of %llu", first->id, (unsigned long long)offset,
                (unsigned long long)first->body_size);
  }
  http_response_free(&response);
  http_request_free(&request);
}

static void check_replay_plan(const replay_plan *plan) {
  size_t hosts = replay_plan_host_count(plan), n = replay_plan_resource_count(plan);
  if (hosts == 0 || hosts > REPLAY_MAX_HOSTS) fuzz_fail("%zu hosts", hosts);
  if (n > REPLAY_MAX_RESOURCES) fuzz_fail("%zu resources", n);
  for (size_t i = 0; i < hosts; i++) {
    const replay_host *h = replay_plan_host(plan, i);
    if (h->port < 1 || h->port > 65535 || h->name[0] == '\0' ||
        strlen(h->name) > REPLAY_MAX_HOST_NAME || strchr(h->name, '/') != NULL)
      fuzz_fail("host %zu: %.80s:%d", i, h->name, h->port);
    for (const char *c = h->name; *c; c++)
      if (*c >= 'A' && *c <= 'Z') fuzz_fail("host %s not lower case", h->name);
  }
  for (size_t i = 0; i < n; i++) {
    const replay_resource *r = replay_plan_resource(plan, i);
    if (r->id != i || r->host >= hosts) fuzz_fail("resource %zu: id %u host %u", i, r->id, r->host);
    if (r->method[0] == '\0' || strpbrk(r->method, " \t\r\n/") != NULL)
      fuzz_fail("resource %zu: method %.40s", i, r->method);
    if (r->path[0] != '/' || strlen(r->path) > REPLAY_MAX_PATH || strpbrk(r->path, " \r\n\t"))
      fuzz_fail("resource %zu: path %.80s", i, r->path);
    if (r->status < 200 || r->status > 599) fuzz_fail("resource %zu: status %d", i, r->status);
    if ((r->status == 204 || r->status == 304) && r->body_size != 0)
      fuzz_fail("resource %zu: %d with a body", i, r->status);
    if (r->body_size > REPLAY_MAX_BODY_SIZE) fuzz_fail("resource %zu: body size", i);
    if (r->redirect_to >= 0 && ((uint64_t)r->redirect_to >= n || r->redirect_to == (int64_t)i ||
                                r->status < 300 || r->status > 399))
      fuzz_fail("resource %zu (status %d) redirects to %lld", i, r->status,
                (long long)r->redirect_to);
    for (size_t j = 0; j < r->response_headers.count; j++) {
      const http_header *h = &r->response_headers.items[j];
      for (const char *c = h->name; *c; c++)
        if ((*c >= 'A' && *c <= 'Z') || *c == ':' || *c == ' ')
          fuzz_fail("resource %zu: header name %.60s", i, h->name);
      if (strpbrk(h->value, "\r\n") != NULL) fuzz_fail("resource %zu: CR/LF in a value", i);
      if (strcmp(h->name, "content-length") == 0 || strcmp(h->name, "connection") == 0 ||
          strcmp(h->name, "transfer-encoding") == 0)
        fuzz_fail("resource %zu: %s kept", i, h->name);
    }
    if (r->redirect_to >= 0) {
      char location[REPLAY_MAX_PATH + REPLAY_MAX_HOST_NAME + 32];
      const replay_resource *target = replay_plan_resource(plan, (size_t)r->redirect_to);
      if (replay_location(plan, target, NULL, location, sizeof(location)) != 0)
        fuzz_fail("resource %zu: the Location of its redirect does not fit", i);
    }
  }
  for (size_t i = 0; i < n && i < PLAN_SERVED; i++)
    check_serve(plan, replay_plan_resource(plan, i));
}

static int is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static void check_load_plan(const load_plan *plan) {
  if (plan->n_hosts == 0 || plan->n_hosts > LOAD_PLAN_MAX_HOSTS || plan->n_resources == 0 ||
      plan->n_resources > LOAD_PLAN_MAX_RESOURCES)
    fuzz_fail("load plan with %zu hosts, %zu resources", plan->n_hosts, plan->n_resources);
  for (size_t i = 0; i < plan->n_hosts; i++) {
    const load_host *h = &plan->hosts[i];
    if (h->port < 1 || h->port > 65535) fuzz_fail("load host %zu port %d", i, h->port);
    int found = load_plan_find_host(plan, h->name, strlen(h->name));
    if (found < 0 || (size_t)found > i || strcasecmp(plan->hosts[found].name, h->name) != 0)
      fuzz_fail("load host %s found as %d", h->name, found);
  }
  int n = (int)plan->n_resources;
  for (int i = 0; i < n; i++) {
    const load_resource *r = &plan->resources[i];
    if (r->id != i || r->host < 0 || (size_t)r->host >= plan->n_hosts)
      fuzz_fail("load resource %d: id %d host %d", i, r->id, r->host);
    if (r->parent < -1 || r->parent >= n || r->parent == i || r->redirect_to < -1 ||
        r->redirect_to >= n || r->redirect_to == i)
      fuzz_fail("load resource %d: parent %d redirect %d", i, r->parent, r->redirect_to);
    if (r->path[0] != '/' || strpbrk(r->path, " \r\n\t") != NULL)
      fuzz_fail("load resource %d: path %.80s", i, r->path);
    if (r->method[0] == '\0' || strpbrk(r->method, " \r\n\t/") != NULL)
      fuzz_fail("load resource %d: method %.40s", i, r->method);
    if ((unsigned)r->type > LOAD_TYPE_OTHER) fuzz_fail("load resource %d: type %d", i, r->type);
    if (r->status < 100 || r->status > 599 || r->discover_offset < -1)
      fuzz_fail("load resource %d: status %d discover %lld", i, r->status,
                (long long)r->discover_offset);
    if (r->n_request_headers > LOAD_PLAN_MAX_HEADERS) fuzz_fail("load resource %d: headers", i);
    for (size_t j = 0; j < r->n_request_headers; j++) {
      const load_header *h = &r->request_headers[j];
      if (h->name[0] == '\0') fuzz_fail("load resource %d: empty header name", i);
      for (const char *c = h->name; *c; c++)
        if (!is_token_char(*c)) fuzz_fail("load resource %d: header name %.60s", i, h->name);
      for (const char *c = h->value; *c; c++)
        if ((*c > 0 && *c < 0x20 && *c != '\t') || *c == 0x7f)
          fuzz_fail("load resource %d: control byte in header %s", i, h->name);
      if (strcmp(h->name, "host") == 0 || strcmp(h->name, "content-length") == 0)
        fuzz_fail("load resource %d: %s kept", i, h->name);
    }
  }
  /* No cycle: from any resource, its gate (the lowest-numbered redirect to it, else its
   * parent) leads to -1 within n steps. */
  int *gate = malloc((size_t)n * sizeof(*gate));
  if (gate == NULL) fuzz_fail("out of memory");
  for (int i = 0; i < n; i++) gate[i] = plan->resources[i].parent;
  for (int i = n; i-- > 0;)
    if (plan->resources[i].redirect_to >= 0) gate[plan->resources[i].redirect_to] = i;
  for (int i = 0; i < n; i++) {
    int at = i, steps = 0;
    while (at >= 0 && steps <= n) at = gate[at], steps++;
    if (at >= 0) fuzz_fail("load resource %d: its parents and redirects loop", i);
  }
  free(gate);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *text = (const char *)data;
  char err[512];
  memset(err, 0x55, sizeof(err));
  replay_plan *plan = NULL;
  if (replay_plan_parse(&plan, text, size, "fuzz.json", err, sizeof(err)) != 0) {
    if (memchr(err, '\0', sizeof(err)) == NULL || strncmp(err, "fuzz.json: ", 11) != 0)
      fuzz_fail("replay plan error not one line naming the file: %.80s", err);
  } else {
    check_replay_plan(plan);
    replay_plan_del(plan);
  }

  memset(err, 0x55, sizeof(err));
  load_plan *load = NULL;
  if (load_plan_parse(text, size, &load, err, sizeof(err)) != 0) {
    if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
      fuzz_fail("load plan error not a line: %.80s", err);
  } else {
    check_load_plan(load);
    load_plan_del(load);
  }
  return 0;
}
