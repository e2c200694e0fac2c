/* get_http1.c — `speedy get --http1` (and TLS servers that negotiate only http/1.1): a
 * simple HTTP/1.1 client with keep-alive, one request at a time per connection, up to
 * --http1-connections connections per origin (the 2009 browser's model: persistent
 * connections, 6 per host, no pipelining). Responses are parsed by llhttp; a keep-alive
 * connection the server closed before answering is retried once.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "get_int.h"

static get_conn *conn_of(llhttp_t *parser) { return parser->data; }

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  if (!h->header_field) { /* a new field starts */
    h->header_field = 1;
    h->field_len = 0;
    if (conn->origin->run->opt->verbose) fputs("\n< ", stderr);
  }
  size_t n = len < sizeof(h->field) - 1 - h->field_len ? len : sizeof(h->field) - 1 - h->field_len;
  memcpy(h->field + h->field_len, at, n);
  h->field_len += n;
  h->field[h->field_len] = '\0';
  if (conn->origin->run->opt->verbose) get_out_escaped(stderr, at, len);
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  get_conn *conn = conn_of(p);
  get_http1 *h = &conn->http1;
  if (h->header_field) {
    h->header_field = 0;
    if (conn->origin->run->opt->verbose) fputs(": ", stderr);
  }
  if (conn->origin->run->opt->verbose) get_out_escaped(stderr, at, len);
  return 0;
}

static int on_headers_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_job *job = conn->http1.job;
  if (conn->origin->run->opt->verbose) fputc('\n', stderr);
  conn->http1.header_field = 0;
  if (!job) return -1;
  job->status = p->status_code;
  job->t_first = get_now_ns();
  uint64_t max = conn->origin->run->opt->max_filesize;
  if (max && (p->flags & F_CONTENT_LENGTH) && p->content_length > max) {
    get_job_fail(job, "content-length %llu exceeds --max-filesize %llu",
                 (unsigned long long)p->content_length, (unsigned long long)max);
    return -1;
  }
  return 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  get_conn *conn = conn_of(p);
  get_job *job = conn->http1.job;
  if (!job || job->state != JOB_ACTIVE) return 0;
  get_run *run = conn->origin->run;
  if (get_job_check_size(job, len) != 0 || get_out_open(run, job) != 0 ||
      get_out_write(run, job, (const uint8_t *)at, len) != 0)
    return -1;
  job->bytes += len;
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  get_conn *conn = conn_of(p);
  get_job *job = conn->http1.job;
  if (!job) return -1;
  conn->http1.job = NULL;
  job->conn = NULL;
  if (job->state == JOB_ACTIVE && get_out_open(conn->origin->run, job) == 0) get_job_done(job);
  if (!llhttp_should_keep_alive(p)) conn->dead = 1;
  return 0;
}

int get_http1_start(get_conn *conn) {
  get_http1 *h = &conn->http1;
  llhttp_settings_init(&h->settings);
  h->settings.on_header_field = on_header_field;
  h->settings.on_header_value = on_header_value;
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
  int post = run->body != NULL;
  char line[2300];
  int ok = 1;
  int n = snprintf(line, sizeof(line), "%s %s HTTP/1.1\r\nHost: %s\r\n", post ? "POST" : "GET",
                   job->path, conn->origin->authority);
  ok &= n > 0 && (size_t)n < sizeof(line) && append(req, sizeof(req), &len, line, (size_t)n) == 0;
  if (!has_header(opt, "user-agent")) {
    static const char ua[] = "User-Agent: speedy/" SPEEDY_GET_VERSION "\r\n";
    ok &= append(req, sizeof(req), &len, ua, sizeof(ua) - 1) == 0;
  }
  if (!has_header(opt, "accept")) ok &= append(req, sizeof(req), &len, "Accept: */*\r\n", 13) == 0;
  if (post) {
    n = snprintf(line, sizeof(line), "Content-Length: %zu\r\n%s", run->body_len,
                 has_header(opt, "content-type") ? ""
                                                 : "Content-Type: application/octet-stream\r\n");
    ok &= append(req, sizeof(req), &len, line, (size_t)n) == 0;
  }
  for (int i = 0; i < opt->n_headers && ok; i++) {
    const spdy_header *h = &opt->headers[i];
    if (strcmp(h->name, "host") == 0 || (post && strcmp(h->name, "content-length") == 0)) continue;
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
  if (opt->verbose) {
    fputs("> ", stderr);
    for (size_t i = 0; i + 2 <= len; i++) {
      if (req[i] == '\r' && req[i + 1] == '\n') {
        fputs(i + 4 <= len && req[i + 2] == '\r' ? "\n" : "\n> ", stderr);
        i++;
      } else {
        get_out_escaped(stderr, req + i, 1);
      }
    }
  }
  if (io_conn_write(conn->io, req, len) != 0 ||
      (post && io_conn_write(conn->io, run->body, run->body_len) != 0)) {
    get_job_fail(job, "cannot send the request");
    return -1;
  }
  job->state = JOB_ACTIVE;
  job->attempts++;
  job->conn = conn;
  job->status = 0;
  job->bytes = 0;
  job->has_length = 0; /* llhttp enforces Content-Length itself */
  job->t_first = 0;
  if (!job->t_start) job->t_start = get_now_ns();
  conn->http1.job = job;
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
  llhttp_errno_t err = llhttp_execute(&conn->http1.parser, (const char *)data, len);
  if (err != HPE_OK) {
    get_job *job = conn->http1.job;
    if (job) get_job_fail(job, "bad HTTP/1.1 response: %s", llhttp_errno_name(err));
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
     * — but over TLS only when the server ended with close_notify: a bare FIN may be an
     * attacker cutting the body short. */
    const llhttp_t *parser = &conn->http1.parser;
    int close_delimited = job->status != 0 && !(parser->flags & (F_CONTENT_LENGTH | F_CHUNKED));
    if (close_delimited && job->state == JOB_ACTIVE && io_conn_is_tls(conn->io) &&
        !io_conn_peer_closed_cleanly(conn->io)) {
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
  if (job->status == 0 && job->bytes == 0 && job->attempts < 2) {
    job->state = JOB_WAITING; /* a keep-alive connection closed under us: retry once */
    return;
  }
  const llhttp_t *parser = &conn->http1.parser;
  if (job->status && (parser->flags & F_CONTENT_LENGTH))
    get_job_fail(job, "connection closed before the response ended (%llu bytes, %llu missing): %s",
                 (unsigned long long)job->bytes, (unsigned long long)parser->content_length,
                 status ? io_strerror(status) : "closed");
  else
    get_job_fail(job, "connection closed before the response ended: %s",
                 status ? io_strerror(status) : "closed");
}
