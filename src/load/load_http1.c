/* load_http1.c — the loader's HTTP/1.1: persistent connections, requests built from the
 * plan's recorded headers, optional pipelining (responses parsed in order by llhttp), and
 * one retry of a request whose keep-alive connection closed before any response byte.
 *
 * Header names are sent capitalised as browsers send them ("User-Agent"); that does not
 * change their size, which is what the lab measures.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "load_int.h"

static load_conn *conn_of(llhttp_t *parser) { return parser->data; }

/* The resource whose response is being parsed: the oldest in flight. */
static int head_id(const load_conn *conn) { return conn->n_inflight > 0 ? conn->inflight[0] : -1; }

static int on_message_begin(llhttp_t *p) {
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id < 0) return -1; /* a response nobody asked for */
  load_fetch *f = &conn->run->fetch[id];
  /* status line: "HTTP/1.1 200 " + reason + CRLF; the reason is added by on_status */
  f->response_header_bytes = 13 + 2;
  return 0;
}

static int on_status(llhttp_t *p, const char *at, size_t len) {
  (void)at;
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id >= 0) conn->run->fetch[id].response_header_bytes += len;
  return 0;
}

static int on_header_field(llhttp_t *p, const char *at, size_t len) {
  load_conn *conn = conn_of(p);
  if (conn->in_value) { /* a new field: the previous one was stored at value_complete */
    conn->in_value = 0;
    conn->field_len = 0;
  }
  size_t room = sizeof(conn->field) - 1 - conn->field_len;
  size_t n = len < room ? len : room;
  memcpy(conn->field + conn->field_len, at, n);
  conn->field_len += n;
  int id = head_id(conn);
  if (id >= 0) conn->run->fetch[id].response_header_bytes += len;
  return 0;
}

static int on_header_value(llhttp_t *p, const char *at, size_t len) {
  load_conn *conn = conn_of(p);
  if (!conn->in_value) {
    conn->in_value = 1;
    conn->value_len = 0;
  }
  size_t room = sizeof(conn->value) - 1 - conn->value_len;
  size_t n = len < room ? len : room;
  memcpy(conn->value + conn->value_len, at, n);
  conn->value_len += n;
  int id = head_id(conn);
  if (id >= 0) conn->run->fetch[id].response_header_bytes += len;
  return 0;
}

static int on_header_value_complete(llhttp_t *p) {
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id < 0) return 0;
  load_run *run = conn->run;
  run->fetch[id].response_header_bytes += 4; /* ": " and CRLF */
  for (size_t i = 0; i < conn->field_len; i++)
    if (conn->field[i] >= 'A' && conn->field[i] <= 'Z')
      conn->field[i] = (char)(conn->field[i] + 32);
  load_note_response_header(run, id, conn->field, conn->field_len, conn->value, conn->value_len);
  if (conn->field_len == 14 && memcmp(conn->field, "x-subresources", 14) == 0)
    load_hints(run, id, conn->value, conn->value_len);
  conn->field_len = 0;
  conn->value_len = 0;
  conn->in_value = 0;
  return 0;
}

static int on_headers_complete(llhttp_t *p) {
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id < 0) return -1;
  load_run *run = conn->run;
  run->fetch[id].response_header_bytes += 2; /* the empty line */
  run->response_header_bytes += run->fetch[id].response_header_bytes;
  load_sched_headers(run->sched, id, p->status_code, load_now_ms(run));
  /* a response to HEAD has no body whatever its headers say */
  return strcmp(run->plan->resources[id].method, "HEAD") == 0 ? 1 : 0;
}

static int on_body(llhttp_t *p, const char *at, size_t len) {
  (void)at;
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id < 0) return -1;
  const load_entry *e = load_sched_entry(conn->run->sched, id);
  load_sched_body(conn->run->sched, id, e->bytes + len, load_now_ms(conn->run));
  return 0;
}

static int on_message_complete(llhttp_t *p) {
  load_conn *conn = conn_of(p);
  int id = head_id(conn);
  if (id < 0) return -1;
  load_run *run = conn->run;
  conn->n_inflight--;
  memmove(conn->inflight, conn->inflight + 1, (size_t)conn->n_inflight * sizeof(int));
  run->fetch[id].conn = NULL;
  load_sched_complete(run->sched, id, load_now_ms(run));
  if (!llhttp_should_keep_alive(p)) conn->dead = 1;
  return 0;
}

void load_http1_start(load_conn *conn) {
  llhttp_settings_init(&conn->settings);
  conn->settings.on_message_begin = on_message_begin;
  conn->settings.on_status = on_status;
  conn->settings.on_header_field = on_header_field;
  conn->settings.on_header_value = on_header_value;
  conn->settings.on_header_value_complete = on_header_value_complete;
  conn->settings.on_headers_complete = on_headers_complete;
  conn->settings.on_body = on_body;
  conn->settings.on_message_complete = on_message_complete;
  llhttp_init(&conn->parser, HTTP_RESPONSE, &conn->settings);
  conn->parser.data = conn;
}

typedef struct text {
  char *p;
  size_t len, cap;
  int overflow;
} text;

static void put(text *t, const char *s, size_t n) {
  if (t->overflow || n > t->cap - t->len) {
    t->overflow = 1;
    return;
  }
  memcpy(t->p + t->len, s, n);
  t->len += n;
}

static void put_str(text *t, const char *s) { put(t, s, strlen(s)); }

/* "user-agent" → "User-Agent" */
static void put_name(text *t, const char *name) {
  size_t n = strlen(name);
  if (t->overflow || n > t->cap - t->len) {
    t->overflow = 1;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if ((i == 0 || name[i - 1] == '-') && c >= 'a' && c <= 'z') c = (char)(c - 32);
    t->p[t->len + i] = c;
  }
  t->len += n;
}

int load_http1_send(load_conn *conn, int id) {
  load_run *run = conn->run;
  const load_resource *r = &run->plan->resources[id];
  if (conn->n_inflight >= LOAD_MAX_PIPELINE) return -1;
  char authority[300];
  load_authority(run, id, authority, sizeof(authority));
  text t = {malloc(LOAD_MAX_REQUEST), 0, LOAD_MAX_REQUEST, 0};
  if (!t.p) {
    load_fail(run, id, "out of memory");
    return -1;
  }
  put_str(&t, r->method);
  put_str(&t, " ");
  put_str(&t, r->path);
  put_str(&t, " HTTP/1.1\r\nHost: ");
  put_str(&t, authority);
  put_str(&t, "\r\n");
  for (size_t i = 0; i < r->n_request_headers; i++) {
    put_name(&t, r->request_headers[i].name);
    put_str(&t, ": ");
    put_str(&t, r->request_headers[i].value);
    put_str(&t, "\r\n");
  }
  /* what the browsers of the recordings sent; the plan drops hop-by-hop headers */
  put_str(&t, "Connection: keep-alive\r\n");
  if (strcmp(r->method, "POST") == 0 || strcmp(r->method, "PUT") == 0)
    put_str(&t, "Content-Length: 0\r\n");
  put_str(&t, "\r\n");
  int rv = -1;
  if (t.overflow) {
    load_fail(run, id, "request headers over %u bytes", LOAD_MAX_REQUEST);
  } else if (io_conn_write(conn->io, t.p, t.len) != 0) {
    load_fail(run, id, "cannot send the request");
  } else {
    rv = 0;
    run->fetch[id].conn = conn;
    run->fetch[id].request_header_bytes = t.len;
    run->request_header_bytes += t.len;
    conn->inflight[conn->n_inflight++] = id;
    conn->used = 1;
    load_sched_requested(run->sched, id, conn->index, load_now_ms(run));
    if (run->opt->verbose)
      fprintf(stderr, "speedy load: conn %d > #%d %s %s%s\n", conn->index, id, r->method, authority,
              r->path);
  }
  free(t.p);
  return rv;
}

size_t load_http1_read(load_conn *conn, const uint8_t *data, size_t len) {
  if (!conn->parser.data) return len;
  llhttp_errno_t err = llhttp_execute(&conn->parser, (const char *)data, len);
  if (err != HPE_OK) {
    int id = head_id(conn);
    if (id >= 0) load_fail(conn->run, id, "bad HTTP/1.1 response: %s", llhttp_errno_name(err));
    conn->dead = 1;
    conn->parser.data = NULL; /* no more parsing on this connection */
    io_conn_close(conn->io);
    return len;
  }
  if (conn->dead && conn->n_inflight == 0) io_conn_close(conn->io);
  return len;
}

void load_http1_closed(load_conn *conn, int status) {
  load_run *run = conn->run;
  /* A response delimited by the connection's end completes here (on_message_complete);
   * over TLS only after close_notify (io_conn_peer_closed_cleanly), else it is cut short. */
  int cut = 0;
  if (status == UV_EOF && conn->parser.data && conn->n_inflight > 0) {
    int close_delimited = !(conn->parser.flags & (F_CONTENT_LENGTH | F_CHUNKED));
    cut = close_delimited && !io_conn_peer_closed_cleanly(conn->io);
    if (!cut) (void)llhttp_finish(&conn->parser);
  }
  for (int i = 0; i < conn->n_inflight; i++) {
    int id = conn->inflight[i];
    const load_entry *e = load_sched_entry(run->sched, id);
    run->fetch[id].conn = NULL;
    if (e->state != LOAD_ACTIVE) continue;
    if (e->status == 0 && e->bytes == 0 && e->attempts < 2 && status == UV_EOF) {
      load_sched_requeue(run->sched, id); /* keep-alive closed under it: once more */
      continue;
    }
    if (cut && e->status != 0)
      load_fail(run, id,
                "connection closed without TLS close_notify after %llu bytes: the "
                "body may be truncated",
                (unsigned long long)e->bytes);
    else
      load_fail(run, id, "connection closed before the response ended: %s",
                status ? io_strerror(status) : "closed");
  }
  conn->n_inflight = 0;
}
