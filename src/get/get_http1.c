/* get_http1.c — `speedy get --http1` (and TLS servers that negotiate only http/1.1): a
 * simple HTTP/1.1 client with keep-alive, one request at a time per connection, up to
 * --http1-connections connections per origin (the 2009 browser's model: persistent
 * connections, 6 per host, no pipelining). Responses are parsed by llhttp; a keep-alive
 * connection the server closed before answering is retried once.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "get_int.h"
#include "http_client.h"

static get_conn *conn_of(llhttp_t *parser) { return parser->data; }
static get_run *run_of_conn(const get_conn *conn) { return conn->origin->run; }

/* A failure on this connection; when TLS negotiated no protocol, what to try is added (a
 * SPDY-only server answers our HTTP/1.1 with frames, or not at all). */
__attribute__((format(printf, 3, 4))) static void http1_fail(get_conn *conn, get_job *job,
                                                             const char *fmt, ...) {
  char why[500];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof(why), fmt, ap);
  va_end(ap);
  const char *hint = conn->how == IO_NEG_TLS_DEFAULT ? conn->origin->hint : "";
  get_job_fail(job, "%s%s%s", why, hint[0] ? "; " : "", hint);
}

static int on_status(llhttp_t *p, const char *at, size_t len) {
  get_job *job = conn_of(p)->http1.job;
  if (!job) return -1;
  size_t have = strlen(job->status_text);
  size_t room = sizeof(job->status_text) - 1 - have;
  size_t n = len < room ? len : room;
  memcpy(job->status_text + have, at, n);
  job->status_text[have + n] = '\0';
  return 0;
}

/* Fields are kept in job->head as "Name: value\r\n" as they arrive (llhttp hands names
 * and values over in pieces; the *_complete callbacks say where each ends, empty values
 * included). */
static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  get_job *job = h->job;
  if (!job || job->state != JOB_ACTIVE) return job ? 0 : -1;
  if (!h->header_field) { /* a new field starts */
    h->header_field = 1;
    h->line_start = job->head_len;
  }
  return get_resp_head_append(job, at, len);
}

static int on_header_field_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  get_job *job = h->job;
  if (!job || job->state != JOB_ACTIVE) return job ? 0 : -1;
  h->header_field = 0;
  if (get_resp_head_append(job, ": ", 2) != 0) return -1;
  h->value_start = job->head_len;
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  get_job *job = conn_of(p)->http1.job;
  if (!job || job->state != JOB_ACTIVE) return job ? 0 : -1;
  return get_resp_head_append(job, at, len);
}

static int on_header_value_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  get_job *job = h->job;
  if (!job || job->state != JOB_ACTIVE) return job ? 0 : -1;
  const char *name = job->head + h->line_start;
  size_t name_len = h->value_start - 2 - h->line_start;
  get_resp_note(job, name, name_len, job->head + h->value_start, job->head_len - h->value_start);
  return get_resp_head_append(job, "\r\n", 2);
}

/* RFC 9112 6.3: responses to HEAD, 1xx, 204 and 304 end with their head, whatever
 * Content-Length says. */
static int no_body(const get_conn *conn, int status) {
  return run_of_conn(conn)->no_body || !http_client_status_has_body(status);
}

static int on_headers_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  get_job *job = h->job;
  if (!job) return -1;
  h->header_field = 0;
  if (p->status_code < 100) return -1;          /* RFC 9112 4: three digits */
  if (http_client_is_interim(p->status_code)) { /* skipped (shown with -v), as curl does */
    h->interim = 1;
    if (job->state == JOB_ACTIVE && run_of_conn(conn)->opt->verbose) {
      char line[96];
      snprintf(line, sizeof(line), "HTTP/%d.%d %d%s%s", p->http_major, p->http_minor,
               p->status_code, job->status_text[0] ? " " : "", job->status_text);
      get_trace_http1_response(conn, line, job->head, job->head_len);
    }
    return 1;
  }
  if (job->state != JOB_ACTIVE) return no_body(conn, p->status_code) ? 1 : 0; /* dropped */
  job->status = p->status_code;
  job->t_first = get_now_ns();
  get_run *run = conn->origin->run;
  char line[128];
  snprintf(line, sizeof(line), "HTTP/%d.%d %d%s%s", p->http_major, p->http_minor, p->status_code,
           job->status_text[0] ? " " : "", job->status_text);
  if (run->opt->verbose) get_trace_http1_response(conn, line, job->head, job->head_len);
  uint64_t max = run->opt->max_filesize;
  if (max && (p->flags & F_CONTENT_LENGTH) && p->content_length > max && !run->no_body) {
    get_job_fail(job, "content-length %llu exceeds --max-filesize %llu",
                 (unsigned long long)p->content_length, (unsigned long long)max);
    return -1;
  }
  /* A job failed here (--fail) has its body read and dropped: the connection stays. */
  get_resp_head_done(job, line);
  return no_body(conn, p->status_code) ? 1 : 0; /* 1: no body, whatever the head says */
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  get_conn *conn = conn_of(p);
  get_job *job = conn->http1.job;
  if (!job || job->state != JOB_ACTIVE) return 0;
  return get_resp_body(job, (const uint8_t *)at, len) == 0 ? 0 : -1;
}

static int on_message_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_job *job = conn->http1.job;
  if (!job) return -1;
  if (conn->http1.interim) { /* the final response comes next, for the same job */
    conn->http1.interim = 0;
    job->head_len = 0;
    job->status_text[0] = '\0';
    job->content_length = 0;
    job->has_length = 0;
    return 0;
  }
  if (conn->origin->run->opt->verbose) get_trace_http1_end(conn, job);
  conn->http1.job = NULL;
  conn->http1.responses++;
  job->conn = NULL;
  if (job->state == JOB_ACTIVE) get_resp_end(job);
  if (!llhttp_should_keep_alive(p)) conn->dead = 1;
  return 0;
}

int get_http1_start(get_conn *conn) {
  get_http1 *h = &conn->http1;
  llhttp_settings_init(&h->settings);
  h->settings.on_status = on_status;
  h->settings.on_header_field = on_header_field;
  h->settings.on_header_field_complete = on_header_field_complete;
  h->settings.on_header_value = on_header_value;
  h->settings.on_header_value_complete = on_header_value_complete;
  h->settings.on_headers_complete = on_headers_complete;
  h->settings.on_body = on_body;
  h->settings.on_message_complete = on_message_complete;
  llhttp_init(&h->parser, HTTP_RESPONSE, &h->settings);
  h->parser.data = conn;
  get_origin_progress(conn->origin);
  return 0;
}

static int append(char *buf, size_t cap, size_t *len, const char *s, size_t n) {
  if (n > cap - *len) return -1;
  memcpy(buf + *len, s, n);
  *len += n;
  return 0;
}

static int has_header(const get_options *opt, const char *name) {
  for (int i = 0; i < opt->n_headers; i++)
    if (strcmp(opt->headers[i].name, name) == 0) return 1;
  return 0;
}

/* Sends job's request on conn. Returns 0 or -1 (the job failed). */
static int send_request(get_conn *conn, get_job *job) {
  get_run *run = conn->origin->run;
  const get_options *opt = run->opt;
  char req[16384];
  size_t len = 0;
  char line[2400];
  int ok = 1;
  int n = snprintf(line, sizeof(line), "%s %s HTTP/1.1\r\nHost: %s\r\n", run->method, job->path,
                   conn->origin->authority);
  ok &= n > 0 && (size_t)n < sizeof(line) && append(req, sizeof(req), &len, line, (size_t)n) == 0;
  if (!has_header(opt, "user-agent")) {
    static const char ua[] = "User-Agent: speedy/" SPEEDY_GET_VERSION "\r\n";
    ok &= append(req, sizeof(req), &len, ua, sizeof(ua) - 1) == 0;
  }
  if (!has_header(opt, "accept")) ok &= append(req, sizeof(req), &len, "Accept: */*\r\n", 13) == 0;
  if (opt->compressed && !has_header(opt, "accept-encoding")) {
    static const char ae[] = "Accept-Encoding: gzip, deflate\r\n";
    ok &= append(req, sizeof(req), &len, ae, sizeof(ae) - 1) == 0;
  }
  if (opt->range[0] && !has_header(opt, "range")) {
    n = snprintf(line, sizeof(line), "Range: %s\r\n", opt->range);
    ok &= append(req, sizeof(req), &len, line, (size_t)n) == 0;
  }
  if (run->has_body) {
    n = snprintf(line, sizeof(line), "Content-Length: %zu\r\n%s", run->body_len,
                 has_header(opt, "content-type")
                     ? ""
                     : "Content-Type: application/x-www-form-urlencoded\r\n");
    ok &= append(req, sizeof(req), &len, line, (size_t)n) == 0;
  }
  for (int i = 0; i < opt->n_headers && ok; i++) {
    const speedy_header *h = &opt->headers[i];
    if (strcmp(h->name, "host") == 0 || (run->has_body && strcmp(h->name, "content-length") == 0))
      continue;
    ok &= append(req, sizeof(req), &len, h->name, h->name_len) == 0 &&
          append(req, sizeof(req), &len, ": ", 2) == 0 &&
          append(req, sizeof(req), &len, h->value, h->value_len) == 0 &&
          append(req, sizeof(req), &len, "\r\n", 2) == 0;
  }
  ok &= append(req, sizeof(req), &len, "\r\n", 2) == 0;
  if (!ok) {
    get_job_fail(job, "request headers too large");
    return -1;
  }
  if (opt->verbose) get_trace_http1_request(conn, req, len);
  if (io_conn_write(conn->io, req, len) != 0 ||
      (run->has_body && run->body_len && io_conn_write(conn->io, run->body, run->body_len) != 0)) {
    get_job_fail(job, "cannot send the request");
    return -1;
  }
  job->state = JOB_ACTIVE;
  job->attempts++;
  job->conn = conn;
  get_resp_reset(job);
  if (!job->t_start) job->t_start = get_now_ns();
  conn->http1.job = job;
  conn->http1.header_field = 0;
  conn->http1.job_heard = 0;
  return 0;
}

void get_http1_next(get_conn *conn) {
  if (!conn->open || conn->closed || conn->dead || conn->session || conn->http1.job ||
      conn->proto != IO_PROTO_HTTP1)
    return;
  for (get_job *j = conn->origin->jobs; j; j = j->next)
    if (j->state == JOB_WAITING && send_request(conn, j) == 0) return;
}

size_t get_http1_read(get_conn *conn, const uint8_t *data, size_t len) {
  if (conn->proto != IO_PROTO_HTTP1 || !conn->http1.parser.data) return len;
  if (len > 0) conn->http1.job_heard = 1;
  llhttp_errno_t err = llhttp_execute(&conn->http1.parser, (const char *)data, len);
  if (err != HPE_OK) {
    get_job *job = conn->http1.job;
    if (job) http1_fail(conn, job, "bad HTTP/1.1 response: %s", llhttp_errno_name(err));
    conn->http1.job = NULL;
    conn->dead = 1;
    io_conn_close(conn->io);
    return len;
  }
  if (conn->dead && !conn->http1.job) io_conn_close(conn->io);
  get_origin_progress(conn->origin);
  return len;
}

void get_http1_closed(get_conn *conn, int status) {
  get_job *job = conn->http1.job;
  if (!job) return;
  if (status == UV_EOF) {
    /* A response delimited by the connection's end completes here (on_message_complete)
     * when the peer ended cleanly (io_conn_peer_closed_cleanly: over TLS only with
     * close_notify, a bare FIN may be an attacker cutting the body short). */
    const llhttp_t *parser = &conn->http1.parser;
    int close_delimited = job->status != 0 && !(parser->flags & (F_CONTENT_LENGTH | F_CHUNKED));
    if (close_delimited && job->state == JOB_ACTIVE && !io_conn_peer_closed_cleanly(conn->io)) {
      conn->http1.job = NULL;
      job->conn = NULL;
      get_job_fail(job,
                   "connection closed without TLS close_notify after %llu bytes: the body "
                   "may be truncated",
                   (unsigned long long)job->bytes);
      return;
    }
    (void)llhttp_finish(&conn->http1.parser);
  }
  conn->http1.job = NULL;
  if (job->state != JOB_ACTIVE) return;
  job->conn = NULL;
  /* A keep-alive connection closed under us before a byte of the answer: retry once, as
   * curl does. Not on a fresh connection, nor after part of an answer: the request may
   * have been acted on (RFC 9110 9.2.2). */
  if (conn->http1.responses > 0 && !conn->http1.job_heard && job->attempts < 2) {
    job->state = JOB_WAITING;
    return;
  }
  const llhttp_t *parser = &conn->http1.parser;
  if (job->status && (parser->flags & F_CONTENT_LENGTH))
    http1_fail(conn, job,
               "connection closed before the response ended (%llu bytes, %llu missing): %s",
               (unsigned long long)job->bytes, (unsigned long long)parser->content_length,
               status ? io_strerror(status) : "closed");
  else
    http1_fail(conn, job, "connection closed before the response ended: %s",
               status ? io_strerror(status) : "closed");
}
