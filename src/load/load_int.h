/* load_int.h — internals of `speedy load`, shared by the files of src/load/.
 *
 *   load_plan.c    the page plan (pure)
 *   load_sched.c   discovery and dispatch order (pure)
 *   load_main.c    options, addresses, --help, the run's set-up and exit status
 *   load_run.c     connection groups, connections, the pump that turns the scheduler's
 *                  decisions into requests, emulated DNS lookups, the deadline, timers
 *   load_http1.c   HTTP/1.1: keep-alive, optional pipelining, llhttp
 *   load_spdy.c    SPDY and HTTP/2: one session per group, priorities, pushes, hints
 *   load_result.c  the result JSON line and the HAR of the replayed load
 */
#ifndef SPEEDY_LOAD_INT_H
#define SPEEDY_LOAD_INT_H

#include <jansson.h>
#include <llhttp.h>
#include <speedy/speedy.h>
#include <stdint.h>
#include <stdio.h>

#include "io.h"
#include "load_plan.h"
#include "load_sched.h"

#define LOAD_MAX_CONNS 32    /* HTTP/1.1 connections per group */
#define LOAD_MAX_PIPELINE 16 /* requests in flight on one HTTP/1.1 connection */
#define LOAD_MAX_REQUEST (256u << 10)
#define LOAD_MAX_CONNECTS 64 /* connections one group may open in one load (retries) */
#define LOAD_MAX_DNS_RTT_MS 10000

typedef struct load_options {
  const char *plan_file;
  int http1;      /* 1: HTTP/1.1; 0: SPDY */
  io_proto proto; /* --proto: SPDY version or HTTP/2 (when not http1) */
  int single;     /* single-domain: one origin for every host */
  int coalesce;   /* --coalesce: hosts at one address share a connection the certificate
                     allows (SPDY, HTTP/2) */
  int tls;        /* --tls */
  const char *cacert;
  int insecure;
  int npn;                     /* --npn: offer the protocol by NPN only (TLS 1.2) */
  uint32_t hello_padding;      /* --hello-padding: octets added to every ClientHello (0: none) */
  int chromium_sockets;        /* --chromium-sockets: open and give up sockets as Chromium does */
  int chromium_headers;        /* --chromium-headers: send Chromium's request headers */
  int boost_images;            /* --boost-images: laid-out image elements leave the limit */
  int blocking_css;            /* --blocking-css: style sheets hold the parser until loaded */
  int load_event;              /* --load-event: the page load time ends at the load event */
  uint32_t document_delay_ms;  /* --document-delay: references wait past the first byte */
  uint32_t frame_delay_ms;     /* --frame-delay: a frame waits more than other references */
  uint32_t request_spacing_ms; /* --request-spacing: found together, one by one */
  uint32_t jitter_ms;          /* --jitter: each request found waits up to this much more */
  int connections;             /* HTTP/1.1 connections per group */
  load_dispatch dispatch;
  int delayable_limit; /* --delayable-limit (HTTP/1.1): 0 none */
  int pipeline;        /* requests in flight per HTTP/1.1 connection (1: none) */
  uint32_t stream_window, session_window;
  uint32_t timeout_ms;
  const char *har_out;
  const char *result_file; /* NULL: stdout */
  int strict;
  int repetition;
  int verbose;
  uint32_t dns_rtt_ms; /* emulated lookup per host name; 0: none */
  /* addresses: per host (multi-domain) or the single one */
  struct sockaddr_storage *host_addr; /* n_hosts entries, filled by load_main */
  unsigned char *host_addr_set;
  struct sockaddr_storage single_addr;
} load_options;

typedef struct load_run load_run;
typedef struct load_group load_group;

typedef enum load_lookup_state {
  LOAD_LOOKUP_IDLE = 0, /* not started */
  LOAD_LOOKUP_PENDING,  /* its timer runs */
  LOAD_LOOKUP_DONE
} load_lookup_state;

/* The emulated DNS lookup of one host name (--dns-rtt): one per distinct name of the page
 * (ASCII case-insensitive), shared by every group that connects under that name, started
 * when the first of them wants a connection and cached for the rest of the load. */
typedef struct load_lookup {
  load_run *run;
  const char *name; /* a group's server_name */
  uv_timer_t timer; /* initialised only with --dns-rtt */
  load_lookup_state state;
  double start_ms, end_ms; /* -1 until it happened */
} load_lookup;

/* A pushed stream's SYN_STREAM fields while its header block arrives. */
typedef struct load_push_headers {
  char path[2048];
  char host[300];
  int status;
  int bad;
} load_push_headers;

/* --chromium-sockets: why a connection was opened beyond the requests' own. */
enum {
  LOAD_EXTRA_NONE,     /* for the group's requests */
  LOAD_EXTRA_ATTEMPT,  /* the navigation's preconnect or a backup: requests may use it */
  LOAD_EXTRA_UNUSABLE, /* a cross-site frame's preconnect, made in another privacy mode than
                          its requests: opened and left idle */
};

typedef struct load_conn {
  load_run *run;
  load_group *group;
  io_conn *io;
  int index; /* connections are numbered in the order they were opened */
  io_proto proto;
  int open, closed, dead;
  int used;     /* a request was sent on it */
  int extra;    /* --chromium-sockets: LOAD_EXTRA_* (0: opened for requests) */
  int given_up; /* --chromium-sockets: aborted while connecting, the session being found */
  /* HTTP/1.1 */
  llhttp_t parser;
  llhttp_settings_t settings;
  int inflight[LOAD_MAX_PIPELINE]; /* resource ids, oldest first */
  int n_inflight;
  char field[256];
  size_t field_len;
  char value[4096];
  size_t value_len;
  int in_value;
  /* SPDY */
  speedy_session *session;
  load_push_headers push;
  int goaway_sent;
  int32_t informational_id; /* HTTP/2: the stream whose 1xx head is arriving, or 0 */
} load_conn;

struct load_group {
  load_run *run;
  int index;
  int base; /* the group before the split in network partitions: index, or index - that
               count in the second partition (load_sched_set_partitions) */
  struct sockaddr_storage addr;
  const char *server_name; /* SNI and certificate name: a recorded host name */
  int lookup;              /* index of its name's lookup in run->lookups */
  load_conn *conns[LOAD_MAX_CONNS];
  int n_conns;
  int opened;
  load_conn *primary;     /* SPDY, HTTP/2: the open connection whose session takes the requests */
  double backup_ms;       /* --chromium-sockets: when the backup attempt is due, -1 none */
  int unusable;           /* --chromium-sockets: conns of LOAD_EXTRA_UNUSABLE among conns */
  int frame_preconnected; /* --chromium-sockets: a cross-site frame's preconnect was made */
  char error[400];
};

/* Per resource: what the network side keeps beyond the scheduler's entry. */
typedef struct load_fetch {
  load_conn *conn;          /* the connection carrying it now, or NULL */
  int32_t stream_id;        /* SPDY */
  json_t *response_headers; /* [[name, value], ...] for the HAR */
  uint64_t request_header_bytes, response_header_bytes;
} load_fetch;

struct load_run {
  load_options *opt;
  load_plan *plan;
  load_sched *sched;
  uv_loop_t *loop;
  io_tls *tls;
  load_group *groups;
  int n_groups;
  int *host_group;      /* --coalesce: per host, its group (the first host at its address) */
  load_lookup *lookups; /* n_lookups <= n_groups */
  int n_lookups;
  load_fetch *fetch;
  uint64_t t0_ns;
  double wall_start; /* seconds since the epoch, for the HAR */
  uv_timer_t deadline, wake;
  int timed_out, finished, closing;
  int connections;      /* opened (attempts included) */
  int connections_used; /* closed after carrying a request */
  int page_group;       /* the group of the page's own host */
  uint64_t bytes_up, bytes_down;
  uint64_t request_header_bytes, response_header_bytes;
  io_proto negotiated; /* the protocol spoken (the first connection's) */
  int uncoalesced;     /* --coalesce: hosts that left a group its certificate did not name */
  char protocol_error[200];
  int pushes, hints;
  int *frame_navs; /* --chromium-sockets: cross-site frame navigations not yet preconnected */
  size_t n_frame_navs;
};

/* load_run.c */
double load_now_ms(const load_run *run);
/* Runs the load to its end (all resources done or failed, or the deadline). Returns 0,
 * or -1 when it could not start (reason on stderr). */
int load_run_execute(load_run *run);
/* Turns the scheduler's state into requests and connections; closes everything once the
 * load is finished. Safe to call at any time outside protocol callbacks. */
void load_run_pump(load_run *run);
/* A Link field's rel=preload targets (RFC 8288; in a 103 Early Hints or the answer to
 * resource id) act as hints: each names a resource as X-Subresources' items do. */
void load_link_hints(load_run *run, int id, const char *value, size_t len);
/* The group that carries host's requests: 0 in single-domain runs, the host's coalesced
 * group with --coalesce, else the host itself; with network partitions (--chromium-sockets)
 * that of the first partition (load_group.base of either). */
int load_host_group(const load_run *run, int host);
/* Fails resource id with a reason (printf style) if it is not finished yet. */
void load_fail(load_run *run, int id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The Host / :host value of a resource ("name" or "name:port"). */
void load_authority(const load_run *run, int id, char *out, size_t len);
/* Appends a response header to the resource's HAR record (bounded). */
void load_note_response_header(load_run *run, int id, const char *name, size_t name_len,
                               const char *value, size_t value_len);
/* Hints from an X-Subresources value received with resource id's response. */
void load_hints(load_run *run, int id, const char *value, size_t len);

/* load_http1.c */
void load_http1_start(load_conn *conn);
size_t load_http1_read(load_conn *conn, const uint8_t *data, size_t len);
/* Sends resource id's request on conn (which has room in its pipeline). */
int load_http1_send(load_conn *conn, int id);
void load_http1_closed(load_conn *conn, int status);

/* load_spdy.c */
int load_spdy_start(load_conn *conn);
size_t load_spdy_read(load_conn *conn, const uint8_t *data, size_t len);
void load_spdy_writable(load_conn *conn, size_t room);
/* Submits every READY resource of the group, best first. */
void load_spdy_submit(load_conn *conn);
void load_spdy_finish(load_conn *conn); /* GOAWAY, then close */
void load_spdy_closed(load_conn *conn, int status);

/* load_result.c */
/* Checks the invariants; fills reason (empty when valid). Returns 1 when valid. */
int load_result_check(const load_run *run, char *reason, size_t len);
/* Appends the result JSON line to --result (or stdout). Returns 0 or -1 (reason on stderr). */
int load_result_write(const load_run *run, int valid, const char *reason);
/* Writes the HAR to --har-out. Returns 0 or -1. */
int load_har_write(const load_run *run);

#endif /* SPEEDY_LOAD_INT_H */
