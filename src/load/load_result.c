/* load_result.c — what a load produced: the invariant check, the result JSON line
 * (`speedy-lab-result/1`, docs/lab-formats.md) and the HAR 1.2 of the replayed load.
 *
 * Fields the loader cannot measure (link-level bytes, TCP retransmissions and timeouts,
 * the physical lower bound, the link) are written as null; `speedy lab run` fills them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load_browser.h"
#include "load_int.h"

/* Milliseconds rounded to 0.1 ms; -1 (did not happen) becomes null. */
static json_t *ms(double v) { return v < 0 ? json_null() : json_real(round(v * 10.0) / 10.0); }

int load_result_check(const load_run *run, char *reason, size_t len) {
  const load_plan *plan = run->plan;
  size_t bad = 0;
  char first[320] = "";
  reason[0] = '\0';
  for (size_t i = 0; i < plan->n_resources; i++) {
    const load_resource *r = &plan->resources[i];
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    char why[260] = "";
    if (e->state == LOAD_FAILED)
      snprintf(why, sizeof(why), "failed: %s", e->error);
    else if (e->state != LOAD_DONE)
      snprintf(why, sizeof(why), "never completed");
    else if (e->status != r->status)
      snprintf(why, sizeof(why), "status %d, planned %d", e->status, r->status);
    else if (strcmp(r->method, "HEAD") != 0 && e->bytes != r->body_size)
      snprintf(why, sizeof(why), "%llu body bytes, planned %llu", (unsigned long long)e->bytes,
               (unsigned long long)r->body_size);
    if (why[0] && bad++ == 0)
      snprintf(first, sizeof(first), "#%zu %.100s: %.180s", i, r->path, why);
  }
  if (run->protocol_error[0]) {
    snprintf(reason, len, "protocol: %s", run->protocol_error);
    return 0;
  }
  if (bad) {
    snprintf(reason, len, "%zu of %zu resources wrong; first %s", bad, plan->n_resources, first);
    return 0;
  }
  return 1;
}

static const char *protocol_name(const load_run *run) {
  const load_options *opt = run->opt;
  return io_proto_name(opt->http1 ? IO_PROTO_HTTP1 : opt->proto);
}

static json_t *resources_json(const load_run *run) {
  json_t *list = json_array();
  for (size_t i = 0; list && i < run->plan->n_resources; i++) {
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:o, s:I, s:i, s:b, s:b, s:i, s:o}", "id",
                          (json_int_t)i, "discovered_ms", ms(e->discovered_ms), "start_ms",
                          ms(e->start_ms), "ttfb_ms", ms(e->first_byte_ms), "end_ms", ms(e->end_ms),
                          "bytes", (json_int_t)e->bytes, "status", e->status, "pushed", e->pushed,
                          "hinted", e->hinted, "connection", e->connection, "error",
                          e->state == LOAD_FAILED ? json_string(e->error) : json_null());
    if (!o || json_array_append_new(list, o) != 0) {
      json_decref(list);
      return NULL;
    }
  }
  return list;
}

/* The page's times from its resources' ends (-1: none ended): the page load time, the last
 * end (with --load-event only among the resources Chromium's load event waits for), the
 * same within the recording's cutoff, and the last byte of all. Returns 0, or -1 when out
 * of memory. */
static int page_times(const load_run *run, double *plt, double *plt_cutoff, double *last_byte) {
  const load_plan *plan = run->plan;
  unsigned char *waits = NULL;
  if (run->opt->load_event) {
    waits = malloc(plan->n_resources ? plan->n_resources : 1);
    if (!waits || load_browser_load_event_waits(plan, waits) != 0) {
      free(waits);
      fprintf(stderr, "speedy load: out of memory\n");
      return -1;
    }
  }
  *plt = *plt_cutoff = *last_byte = -1;
  for (size_t i = 0; i < plan->n_resources; i++) {
    double end = load_sched_entry(run->sched, (int)i)->end_ms;
    if (end > *last_byte) *last_byte = end;
    if (waits && !waits[i]) continue;
    if (end > *plt) *plt = end;
    if (!plan->resources[i].after_cutoff && end > *plt_cutoff) *plt_cutoff = end;
  }
  free(waits);
  return 0;
}

int load_result_write(const load_run *run, int valid, const char *reason) {
  const load_options *opt = run->opt;
  const load_plan *plan = run->plan;
  double plt, plt_cutoff, last_byte;
  if (page_times(run, &plt, &plt_cutoff, &last_byte) != 0) return -1;
  char name[600];
  snprintf(name, sizeof(name), "%s#%s", plan->source, plan->page);
  json_t *resources = resources_json(run);
  json_t *settings = json_pack(
      "{s:s, s:i, s:i, s:I, s:I, s:b, s:I, s:I, s:b, s:b, s:s, s:b, s:b, s:I, s:I, s:I, s:I}",
      "loader", "speedy load " SPEEDY_LOAD_VERSION, "connections_per_host",
      opt->http1 ? opt->connections : 1, "pipeline", opt->pipeline, "stream_window",
      (json_int_t)opt->stream_window, "session_window", (json_int_t)opt->session_window, "insecure",
      opt->insecure, "timeout_ms", (json_int_t)opt->timeout_ms, "dns_rtt_ms",
      (json_int_t)opt->dns_rtt_ms, "chromium_sockets", opt->chromium_sockets, "network_partitions",
      opt->chromium_sockets && !opt->single, "request_headers",
      opt->chromium_headers ? "chromium" : "recorded", "boost_images", opt->boost_images,
      "blocking_css", opt->blocking_css, "document_delay_ms", (json_int_t)opt->document_delay_ms,
      "frame_delay_ms", (json_int_t)opt->frame_delay_ms, "request_spacing_ms",
      (json_int_t)opt->request_spacing_ms, "jitter_ms", (json_int_t)opt->jitter_ms);
  if (settings) json_object_set_new(settings, "load_event", json_boolean(opt->load_event));
  json_t *o = json_pack(
      "{s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:b, s:n, s:i, s:I, s:b, s:s, s:o, s:o, s:o,"
      " s:I, s:I, s:s, s:i, s:n, s:n, s:n, s:I, s:I, s:i, s:i, s:o, s:o}",
      "format", "speedy-lab-result/1", "plan", name, "protocol", protocol_name(run), "mode",
      opt->single     ? "single-domain"
      : opt->coalesce ? "coalesced"
                      : "multi-domain",
      "dispatch", opt->http1 && opt->dispatch == LOAD_DISPATCH_FCFS ? "fcfs" : "priority", "tls",
      opt->tls, "push", run->pushes > 0, "hint", run->hints > 0, "link", "repetition",
      opt->repetition, "seed", (json_int_t)plan->seed, "valid", valid, "invalid_reason", reason,
      "plt_ms", ms(plt), "plt_cutoff_ms", ms(plt_cutoff), "ttfb_ms",
      ms(load_sched_entry(run->sched, 0)->first_byte_ms), "bytes_up", (json_int_t)run->bytes_up,
      "bytes_down", (json_int_t)run->bytes_down, "bytes_counted_by", "loader", "connections",
      run->connections_used, "tcp_retransmits", "tcp_timeouts", "lower_bound_ms",
      "request_header_bytes", (json_int_t)run->request_header_bytes, "response_header_bytes",
      (json_int_t)run->response_header_bytes, "pushed", run->pushes, "hinted", run->hints,
      "resources", resources ? resources : json_null(), "settings",
      settings ? settings : json_null());
  if (!o) {
    fprintf(stderr, "speedy load: cannot build the result\n");
    return -1;
  }
  /* Every connection opened, the ones that never carried a request included (a late-bound
   * HTTP/1.1 attempt, --chromium-sockets' preconnects, backups and given-up attempts). */
  json_object_set_new(o, "connections_opened", json_integer(run->connections));
  /* The page load time's end and the last byte differ with --load-event (as Chromium's). */
  json_object_set_new(o, "last_byte_ms", ms(last_byte));
  /* --coalesce: hosts whose group's certificate did not name them (own connection). */
  if (opt->coalesce) json_object_set_new(o, "uncoalesced_hosts", json_integer(run->uncoalesced));
  char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
  json_decref(o);
  if (!line) return -1;
  FILE *f = opt->result_file ? fopen(opt->result_file, "a") : stdout;
  int rv = 0;
  if (!f || fprintf(f, "%s\n", line) < 0 || fflush(f) != 0) {
    fprintf(stderr, "speedy load: cannot write the result to %s: %s\n",
            opt->result_file ? opt->result_file : "stdout", strerror(errno));
    rv = -1;
  }
  if (f && f != stdout && fclose(f) != 0) rv = -1;
  free(line);
  return rv;
}

/* ---- HAR --------------------------------------------------------------------------- */

static json_t *iso_time(double epoch_seconds) {
  time_t secs = (time_t)epoch_seconds;
  struct tm tm;
  char buf[64];
  if (!gmtime_r(&secs, &tm)) return json_string("1970-01-01T00:00:00.000Z");
  int millis = (int)((epoch_seconds - (double)secs) * 1000.0);
  if (millis < 0) millis = 0;
  if (millis > 999) millis = 999;
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, sizeof(buf) - n, ".%03dZ", millis);
  return json_string(buf);
}

static json_t *har_request(const load_run *run, int id) {
  const load_resource *r = &run->plan->resources[id];
  char authority[300];
  load_authority(run, id, authority, sizeof(authority));
  size_t url_len = strlen(authority) + strlen(r->path) + 16;
  char *url = malloc(url_len);
  if (!url) return NULL;
  snprintf(url, url_len, "%s://%s%s", run->opt->tls ? "https" : "http", authority, r->path);
  json_t *headers = json_array();
  for (size_t i = 0; headers && i < r->n_request_headers; i++)
    json_array_append_new(headers, json_pack("{s:s, s:s}", "name", r->request_headers[i].name,
                                             "value", r->request_headers[i].value));
  json_t *o =
      json_pack("{s:s, s:s, s:s, s:o, s:[], s:[], s:I, s:i}", "method", r->method, "url", url,
                "httpVersion", run->opt->http1 ? "HTTP/1.1" : protocol_name(run), "headers",
                headers ? headers : json_array(), "queryString", "cookies", "headersSize",
                (json_int_t)run->fetch[id].request_header_bytes, "bodySize", 0);
  free(url);
  return o;
}

static json_t *har_response(const load_run *run, int id) {
  const load_entry *e = load_sched_entry(run->sched, id);
  const load_fetch *f = &run->fetch[id];
  json_t *headers = json_array();
  const char *mime = "", *location = "";
  for (size_t i = 0; f->response_headers && i < json_array_size(f->response_headers); i++) {
    json_t *pair = json_array_get(f->response_headers, i);
    const char *name = json_string_value(json_array_get(pair, 0));
    const char *value = json_string_value(json_array_get(pair, 1));
    if (!name || !value) continue;
    if (strcmp(name, "content-type") == 0) mime = value;
    if (strcmp(name, "location") == 0) location = value;
    json_array_append_new(headers, json_pack("{s:s, s:s}", "name", name, "value", value));
  }
  return json_pack("{s:i, s:s, s:s, s:o, s:[], s:{s:I, s:s}, s:s, s:I, s:I}", "status", e->status,
                   "statusText", "", "httpVersion",
                   run->opt->http1 ? "HTTP/1.1" : protocol_name(run), "headers",
                   headers ? headers : json_array(), "cookies", "content", "size",
                   (json_int_t)e->bytes, "mimeType", mime, "redirectURL", location, "headersSize",
                   (json_int_t)f->response_header_bytes, "bodySize", (json_int_t)e->bytes);
}

static double span(double from, double to) { return from >= 0 && to >= from ? to - from : -1; }

/* --dns-rtt: per lookup, the first request sent under its name (pushes are not requests).
 * Its HAR entry shows the lookup as timings.dns; first has run->n_lookups entries. */
static void har_first_requests(const load_run *run, int *first) {
  for (int l = 0; l < run->n_lookups; l++) first[l] = -1;
  for (size_t i = 0; i < run->plan->n_resources; i++) {
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    if (e->start_ms < 0 || e->pushed || e->group < 0 || e->group >= run->n_groups) continue;
    int l = run->groups[e->group].lookup;
    if (first[l] < 0 || e->start_ms < load_sched_entry(run->sched, first[l])->start_ms)
      first[l] = (int)i;
  }
}

/* The part of its name's lookup that request id waited for (HAR 1.2 timings.dns), or -1
 * when it waited for none: not the first request under the name, or no --dns-rtt. */
static double har_dns_wait(const load_run *run, const int *first, int id) {
  const load_entry *e = load_sched_entry(run->sched, id);
  if (run->opt->dns_rtt_ms == 0 || !first || e->group < 0 || e->group >= run->n_groups) return -1;
  int l = run->groups[e->group].lookup;
  const load_lookup *lookup = &run->lookups[l];
  if (first[l] != id || lookup->state != LOAD_LOOKUP_DONE) return -1;
  double from = e->ready_ms > lookup->start_ms ? e->ready_ms : lookup->start_ms;
  return lookup->end_ms > from ? lookup->end_ms - from : 0;
}

static json_t *har_entry(const load_run *run, int id, double dns) {
  const load_entry *e = load_sched_entry(run->sched, id);
  double start = e->start_ms >= 0 ? e->start_ms : 0;
  double blocked = span(e->ready_ms, e->start_ms);
  /* HAR phases follow one another: the lookup is not also counted as blocked */
  if (dns > 0 && blocked >= 0) blocked = blocked > dns ? blocked - dns : 0;
  double wait = span(e->start_ms, e->first_byte_ms);
  double receive = span(e->first_byte_ms, e->end_ms);
  double total = span(e->start_ms, e->end_ms);
  char connection[16];
  snprintf(connection, sizeof(connection), "%d", e->connection);
  return json_pack(
      "{s:s, s:o, s:f, s:o, s:o, s:{}, s:{s:f, s:f, s:i, s:i, s:i, s:f, s:f}, s:s, s:b, s:I}",
      "pageref", "page_1", "startedDateTime", iso_time(run->wall_start + start / 1000.0), "time",
      total < 0 ? 0.0 : total, "request", har_request(run, id), "response", har_response(run, id),
      "cache", "timings", "blocked", blocked < 0 ? -1.0 : blocked, "dns", dns < 0 ? -1.0 : dns,
      "connect", -1, "ssl", -1, "send", 0, "wait", wait < 0 ? -1.0 : wait, "receive",
      receive < 0 ? -1.0 : receive, "connection", connection, "_pushed", e->pushed, "_id",
      (json_int_t)id);
}

int load_har_write(const load_run *run) {
  const load_options *opt = run->opt;
  json_t *entries = json_array();
  double plt, plt_cutoff, last_byte;
  if (page_times(run, &plt, &plt_cutoff, &last_byte) != 0) {
    json_decref(entries);
    return -1;
  }
  int first_storage[LOAD_PLAN_MAX_HOSTS];
  int *first = NULL;
  if (run->n_lookups > 0 && run->n_lookups <= LOAD_PLAN_MAX_HOSTS) {
    first = first_storage;
    har_first_requests(run, first);
  }
  for (size_t i = 0; entries && i < run->plan->n_resources; i++) {
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    if (e->start_ms < 0) continue; /* never requested */
    json_t *entry = har_entry(run, (int)i, har_dns_wait(run, first, (int)i));
    if (entry) json_array_append_new(entries, entry);
  }
  char title[600];
  snprintf(title, sizeof(title), "%s#%s", run->plan->source, run->plan->page);
  json_t *har = json_pack(
      "{s:{s:s, s:{s:s, s:s}, s:[{s:o, s:s, s:s, s:{s:f, s:f}}], s:o}}", "log", "version", "1.2",
      "creator", "name", "speedy load", "version", SPEEDY_LOAD_VERSION, "pages", "startedDateTime",
      iso_time(run->wall_start), "id", "page_1", "title", title, "pageTimings", "onContentLoad",
      -1.0, "onLoad", plt < 0 ? -1.0 : plt, "entries", entries ? entries : json_array());
  if (!har) {
    fprintf(stderr, "speedy load: cannot build the HAR\n");
    return -1;
  }
  int rv = json_dump_file(har, opt->har_out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
  json_decref(har);
  if (rv != 0) {
    fprintf(stderr, "speedy load: cannot write --har-out %s: %s\n", opt->har_out, strerror(errno));
    return -1;
  }
  return 0;
}
