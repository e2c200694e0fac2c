/* get_int.h — internals of `speedy get`: options, jobs (one per URL or push), origins
 * (one per scheme://host:port) and their connections, shared by the files of src/get/.
 *
 *   get_main.c   options, --help, grouping URLs by origin, the loop, summary, exit status
 *   get_url.c    URL parsing, --resolve, address lookup
 *   get_out.c    where bodies go: stdout in order, -o, -O, -d, pushes; safe file names;
 *                escaping of peer bytes for the terminal
 *   get_spdy.c   one SPDY session per origin over an io_conn: requests, pushes, retries
 *   get_http1.c  HTTP/1.1 with keep-alive over up to N connections per origin (llhttp)
 */
#ifndef SPEEDY_GET_INT_H
#define SPEEDY_GET_INT_H

#include <llhttp.h>
#include <spdy/spdy.h>
#include <stdint.h>
#include <stdio.h>

#include "io.h"

#define GET_MAX_HEADERS 64  /* -H options */
#define GET_MAX_RESOLVE 16  /* --resolve options */
#define GET_MAX_CONNS 16    /* HTTP/1.1 connections per origin */
#define GET_REFUSED_NAMED 4 /* refused pushes named one by one per origin; the rest counted */

typedef struct get_resolve {
  char host[256];
  int port;
  char addr[64];
} get_resolve;

typedef struct get_options {
  io_proto spdy;           /* 0: negotiate (TLS) / SPDY/3.1 (plaintext); or forced */
  int http1;               /* --http1 */
  int remote_name;         /* -O */
  const char *dir;         /* -d DIR (NULL: current directory for -O) */
  const char *outputs[64]; /* -o FILE, one per URL in order */
  int n_outputs;
  spdy_header headers[GET_MAX_HEADERS]; /* -H, names lower-cased (copies) */
  int n_headers;
  const char *data_file; /* --data @FILE */
  int priority;          /* --priority 0..7 */
  int verbose;           /* -v */
  int insecure;          /* --insecure */
  const char *cacert;    /* --cacert */
  get_resolve resolve[GET_MAX_RESOLVE];
  int n_resolve;
  int no_push;             /* --no-push */
  uint32_t max_pushes;     /* --max-pushes (concurrent and total) */
  uint32_t stream_window;  /* --window */
  uint32_t session_window; /* --session-window */
  uint32_t connect_timeout_ms;
  uint32_t max_time_ms;  /* --max-time: whole run */
  uint64_t max_filesize; /* --max-filesize: bytes per body, 0: no limit */
  int http1_conns;       /* --http1-connections */
  int quiet;             /* -s: no summary */
} get_options;

typedef struct get_origin get_origin;
typedef struct get_conn get_conn;

/* One transfer: a URL from the command line, or a resource the server pushed. */
typedef struct get_job {
  struct get_job *next; /* in the origin's list, command-line order, pushes last */
  get_origin *origin;
  int index;  /* command-line position (-1: push) */
  char *url;  /* as given (or built for a push) */
  char *path; /* path + query as sent */
  int pushed;
  int state; /* JOB_* */
  int attempts;
  int32_t stream_id;
  get_conn *conn;
  int status; /* HTTP status, 0 until known */
  uint64_t bytes;
  uint64_t content_length; /* from the response, 0 when absent */
  int has_length;
  int64_t t_start, t_first, t_end; /* ns, monotonic */
  char error[700];
  /* output */
  const char *out_name; /* -o for this URL */
  int fd;               /* -1: not opened; 1: stdout */
  int to_stdout;
  uint8_t *held; /* stdout bytes waiting for earlier jobs */
  size_t held_len, held_cap;
  char saved_as[512];
  /* request body */
  size_t body_off;
} get_job;

enum { JOB_WAITING = 0, JOB_ACTIVE, JOB_DONE, JOB_FAILED };

/* HTTP/1.1 state of one connection. */
typedef struct get_http1 {
  llhttp_t parser;
  llhttp_settings_t settings;
  get_job *job; /* the request on the wire, or NULL when idle */
  int keep_alive;
  int header_field; /* the last header callback was a field name */
  char field[64];
  size_t field_len;
} get_http1;

/* A pushed stream's SYN_STREAM fields, collected while its header block arrives (blocks
 * arrive whole — begin, fields, end — one at a time). */
typedef struct get_push_headers {
  char path[2048];
  char host[300];
  char scheme[8];
  int status;
  int bad;
} get_push_headers;

struct get_conn {
  get_origin *origin;
  io_conn *io;
  io_proto proto;
  io_negotiation how;
  spdy_session *session;
  get_http1 http1;
  int open, closed, dead, goaway_sent;
  int64_t t_connect, t_open;
  uint32_t pushes_seen;
  get_push_headers push;
  int goaway_seen;        /* the server sent GOAWAY */
  uint32_t resets_unsent; /* RST_STREAMs we queued since the engine's output last ran dry */
  int read_paused;        /* reading stopped until they are sent */
  int32_t goaway_last_good;
};

/* Why a push was refused (counted per origin, reported by get_summary). */
enum { PUSH_OVER_MAX = 0, PUSH_OTHER_ORIGIN, PUSH_BAD_PATH, PUSH_REFUSAL_KINDS };

struct get_origin {
  struct get_origin *next;
  struct get_run *run;
  char scheme[8];
  char host[256]; /* without brackets for IPv6 */
  int port;
  char authority[300]; /* host[:port] as in the URL, for :host / Host */
  struct sockaddr_storage addr;
  get_job *jobs;
  get_conn *conns[GET_MAX_CONNS];
  int n_conns;
  int sessions;   /* connections opened so far (a retry opens another) */
  io_proto proto; /* what was negotiated last */
  io_negotiation how;
  const char *tls_version;
  int64_t connect_ns; /* connect + handshake time of the first connection */
  char error[640];
  uint64_t pushes_refused[PUSH_REFUSAL_KINDS]; /* --no-push refusals are not counted */
  char refused_named[GET_REFUSED_NAMED][400];  /* "URL: reason", peer bytes unescaped */
  int refused_named_kind[GET_REFUSED_NAMED];
  int n_refused_named;
};

typedef struct get_run {
  get_options *opt;
  uv_loop_t *loop;
  io_tls *tls;
  io_tls *tls_http1;
  get_origin *origins;
  get_job **all; /* command-line jobs in order */
  int n_all;
  int stdout_pos; /* first of them still owed to stdout */
  uint8_t *body;  /* --data contents */
  size_t body_len;
  uv_timer_t deadline;
  int deadline_hit;
  int failures;
} get_run;

/* get_main.c */
int64_t get_now_ns(void);
/* The origin may have finished: start retries or more requests, or close. */
void get_origin_progress(get_origin *origin);
/* A job failed with a reason (printf style). */
void get_job_fail(get_job *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void get_job_done(get_job *job);
/* Checks n more body bytes (and an announced length) against --max-filesize; fails the job
 * and returns -1 when over. */
int get_job_check_size(get_job *job, uint64_t n);
get_job *get_job_new_push(get_origin *origin, const char *path);

/* get_summary.c: prints the summary (unless -s) and failures; returns the exit status. */
int get_summary(get_run *run);

/* get_url.c */
/* Splits scheme://host[:port]/path. Returns 0 or -1 with a reason in err. */
int get_url_parse(const char *url, char *scheme, size_t scheme_len, char *host, size_t host_len,
                  int *port, char *authority, size_t authority_len, char **path_out, char *err,
                  size_t err_len);
int get_url_resolve(const get_options *opt, const char *host, int port,
                    struct sockaddr_storage *out, char *err, size_t err_len);
int get_resolve_parse(const char *arg, get_resolve *out);

/* get_out.c */
int get_out_open(get_run *run, get_job *job);
int get_out_write(get_run *run, get_job *job, const uint8_t *data, size_t len);
void get_out_finish(get_run *run, get_job *job);
/* Writes bytes a peer sent to f with control bytes and non-ASCII escaped. */
void get_out_escaped(FILE *f, const char *s, size_t len);
/* Reduces a URL path to a safe file base name (no '/', no leading dots, bounded). */
void get_safe_name(const char *path, char *out, size_t out_len);

/* get_spdy.c */
/* The connection opened and negotiated SPDY: create the session and send requests. */
int get_spdy_start(get_conn *conn);
size_t get_spdy_read(get_conn *conn, const uint8_t *data, size_t len);
void get_spdy_writable(get_conn *conn, size_t room);
/* The connection closed: fail or requeue the streams still on it, free the session. */
void get_spdy_closed(get_conn *conn, int status);

/* get_http1.c */
int get_http1_start(get_conn *conn);
size_t get_http1_read(get_conn *conn, const uint8_t *data, size_t len);
void get_http1_closed(get_conn *conn, int status);
/* An idle HTTP/1.1 connection takes the next waiting job, if any. */
void get_http1_next(get_conn *conn);

#endif /* SPEEDY_GET_INT_H */
