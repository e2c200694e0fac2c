/* get_int.h — internals of `speedy get`: options, jobs (one per URL or push), origins
 * (one per scheme://host:port) and their connections, shared by the files of src/get/.
 *
 *   get_main.c     grouping URLs by origin, connections, the loop, exit status
 *   get_opts.c     options, --help, the request body (--data)
 *   get_url.c      URL parsing, --resolve, address lookup
 *   get_resp.c     a response whatever the protocol: status and length noted, the head for
 *                  -i / -I, --fail, --compressed bodies inflated, then to get_out
 *   get_out.c      where bodies go: stdout in order, -o, -O, -d, pushes; safe file names;
 *                  escaping of peer bytes for the terminal
 *   get_spdy.c     one SPDY or HTTP/2 session per origin over an io_conn: requests, pushes,
 *                  retries
 *   get_http1.c    HTTP/1.1 with keep-alive over up to N connections per origin (llhttp)
 *   get_trace.c    -v: timestamped frames, settings, flags and header fields; HTTP/1.1 heads
 *   get_progress.c the progress meter on a terminal
 *   get_summary.c  the summary and the failures
 */
#ifndef SPEEDY_GET_INT_H
#define SPEEDY_GET_INT_H

#include <llhttp.h>
#include <speedy/speedy.h>
#include <stdint.h>
#include <stdio.h>

#include "io.h"

#define GET_MAX_HEADERS 64  /* -H options */
#define GET_MAX_RESOLVE 16  /* --resolve options */
#define GET_MAX_CONNS 16    /* HTTP/1.1 connections per origin */
#define GET_REFUSED_NAMED 4 /* refused pushes named one by one per origin; the rest counted */
#define GET_MAX_DATA 16     /* --data and --data-binary options */
#define GET_MAX_HEAD 65536  /* response header bytes kept (HTTP/1.1: accepted) per response */

typedef struct get_resolve {
  char host[256];
  int port;
  char addr[64];
} get_resolve;

/* One --data or --data-binary argument: TEXT, @FILE or @- (stdin). */
typedef struct get_data_arg {
  const char *arg;
  int binary; /* --data-binary: kept as is; --data strips CR and LF from files (as curl) */
} get_data_arg;

typedef struct get_options {
  io_proto proto;          /* --proto: 0 negotiate (TLS) / SPDY/3.1 (http://); or forced */
  int http1;               /* --http1 */
  int remote_name;         /* -O */
  const char *dir;         /* -d DIR (NULL: current directory for -O) */
  const char *outputs[64]; /* -o FILE, one per URL in order */
  int n_outputs;
  speedy_header headers[GET_MAX_HEADERS]; /* -H, names lower-cased (copies) */
  int n_headers;
  get_data_arg data[GET_MAX_DATA]; /* --data, --data-binary: joined with '&' */
  int n_data;
  const char *method; /* -X (NULL: GET, POST with --data, HEAD with -I) */
  int head;           /* -I: HEAD, write the response head only */
  int include;        /* -i: the response head before the body */
  int fail;           /* -f: a status >= 400 fails the URL */
  int compressed;     /* --compressed */
  char range[128];    /* -r as a Range value: "bytes=A-B" ("": none) */
  int npn;            /* --npn: NPN only, TLS 1.2 at most */
  int priority;       /* --priority 0..7 */
  int verbose;        /* -v */
  int insecure;       /* --insecure */
  const char *cacert; /* --cacert */
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
  int quiet;             /* -s: no summary, no progress meter */
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
  /* response (get_resp.c) */
  char status_text[64]; /* :status (three digits) or HTTP/1.1's reason phrase */
  char *head;           /* header lines as "name: value\r\n", bounded by GET_MAX_HEAD */
  size_t head_len, head_cap;
  int head_done;                   /* the head was complete (written for -i / -I) */
  int encoding;                    /* RESP_ENCODING_*: the response's content-encoding */
  struct get_inflate *inflate;     /* --compressed: the body's decoder */
  uint64_t decoded;                /* body bytes after decoding */
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
  int header_field;               /* the last header callback was a field name */
  int interim;                    /* the message being read is a 1xx: the final one follows */
  uint64_t responses;             /* final responses read on this connection */
  int job_heard;                  /* bytes came after the request on the wire was sent */
  size_t line_start, value_start; /* of the field being received, in job->head */
} get_http1;

/* A pushed stream's SYN_STREAM fields, collected while its header block arrives (blocks
 * arrive whole — begin, fields, end — one at a time). */
typedef struct get_push_headers {
  char path[2048];
  char host[300];
  char scheme[8];
  int bad;
  /* every field, kept to be noted on the push's job once it is accepted: records of
   * name length, name, value length, value (lengths as uint32_t), GET_MAX_HEAD at most */
  uint8_t *fields;
  size_t fields_len, fields_cap;
} get_push_headers;

struct get_conn {
  get_origin *origin;
  int number; /* 1, 2 ... in the order connections were opened, for -v */
  io_conn *io;
  io_proto proto;
  io_negotiation how;
  speedy_session *session;
  get_http1 http1;
  int open, closed, dead, goaway_sent;
  int64_t t_connect, t_open;
  uint32_t pushes_seen;
  get_push_headers push;
  int goaway_seen;        /* the server sent GOAWAY */
  uint32_t resets_unsent; /* RST_STREAMs we queued since the engine's output last ran dry */
  int read_paused;        /* reading stopped until they are sent */
  int32_t goaway_last_good;
  int32_t informational_id; /* HTTP/2: the stream whose 1xx head is arriving, or 0 */
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
  char hint[200];     /* why a TLS connection negotiated no protocol, and what to try */
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
  int stdout_pos;     /* first of them still owed to stdout */
  const char *method; /* of every request */
  int no_body;        /* HEAD: responses carry no body */
  int has_body;       /* --data given (possibly empty) */
  uint8_t *body;      /* --data contents */
  size_t body_len;
  uv_timer_t deadline;
  int deadline_hit;
  int failures;
  int conns_opened;
  int64_t t_start;     /* ns, when the run started (-v timestamps, the meter) */
  uv_timer_t progress; /* the progress meter's tick */
  int progress_on, progress_drawn;
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

/* get_opts.c */
/* Parses argv into opt. Returns 0, 2 for a usage error (said on stderr), or -1 after
 * --help or --version. */
int get_opts_parse(get_options *opt, int argc, char **argv);
/* Reads the --data arguments into run->body (joined with '&'). Returns 0 or -1 (said). */
int get_opts_load_body(get_run *run);
/* The request method for these options. */
const char *get_opts_method(const get_options *opt);

/* get_summary.c: prints the summary (unless -s) and failures; returns the exit status. */
int get_summary(get_run *run);

/* get_resp.c: a response, whatever the protocol. */
enum { RESP_ENCODING_NONE = 0, RESP_ENCODING_GZIP, RESP_ENCODING_DEFLATE };
/* Clears what an earlier attempt of the job noted (a retry starts again). */
void get_resp_reset(get_job *job);
/* Notes a header field of the response: :status, content-length, content-encoding (names
 * compared without case). */
void get_resp_note(get_job *job, const char *name, size_t name_len, const char *value,
                   size_t value_len);
/* Appends to the head kept for -i / -I. Returns 0, or -1 past GET_MAX_HEAD (job failed). */
int get_resp_head_append(get_job *job, const char *bytes, size_t len);
/* Appends "name: value\r\n" for a field that is not a pseudo-header (control bytes escaped). */
int get_resp_head_field(get_job *job, const char *name, size_t name_len, const char *value,
                        size_t value_len);
/* The head is complete; status_line is "HTTP/1.1 200 OK" or "SPDY/3.1 200 OK". Writes the
 * head for -i / -I, applies --fail, prepares --compressed decoding. Returns 0 to go on
 * with the body, -1 when the job failed (stop the transfer). */
int get_resp_head_done(get_job *job, const char *status_line);
/* Body bytes as received: checked against --max-filesize, decoded, written out. Returns 0
 * or -1 (the job failed: stop the transfer). */
int get_resp_body(get_job *job, const uint8_t *data, size_t len);
/* The response ended: decoding must have ended too; the output is opened (an empty body
 * still makes its file) and the job is done. */
void get_resp_end(get_job *job);
/* Frees the decoder and the head. */
void get_resp_free(get_job *job);

/* get_trace.c: -v on stderr, every line stamped with the seconds since the run started. */
void get_trace_note(const get_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The SPDY engine's frame trace (speedy_on_frame_fn); user is the get_conn. */
void get_trace_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user);
void get_trace_frame_not_sent(speedy_session *s, int type, int32_t id, int reason, void *user);
/* A setting the peer sent (under its SETTINGS frame); id is a speedy_settings_id. */
void get_trace_setting(const get_conn *conn, uint32_t id, uint8_t flags, uint32_t value);
/* Header fields under the frame that carried them. */
void get_trace_headers(const speedy_header *h, size_t n);
/* HTTP/1.1: a request as sent (CRLF lines), a response head, the end of a response. */
void get_trace_http1_request(const get_conn *conn, const char *req, size_t len);
void get_trace_http1_response(const get_conn *conn, const char *status_line, const char *head,
                              size_t head_len);
void get_trace_http1_end(const get_conn *conn, const get_job *job);

/* get_progress.c: the meter on stderr, when it is a terminal (and bodies do not go there). */
void get_progress_start(get_run *run);
void get_progress_stop(get_run *run);

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
/* The request's header fields for job (n <= GET_MAX_HEADERS + 12); also for the trace. */
size_t get_spdy_request_headers(const get_conn *conn, const get_job *job, speedy_header *h,
                                char *length_buf, size_t length_buf_len);
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
