/* load_run.c — one page load on a libuv loop: connection groups (one per host in
 * multi-domain runs, one in single-domain runs), their connections, and the pump that
 * turns the scheduler's state into requests after every event.
 *
 * HTTP/1.1 follows the browsers of 2009–2012: a request is bound to a connection only when
 * that connection is free (late binding), so the dispatch order decides what goes next; a
 * new connection is opened when requests wait and fewer connections are being set up than
 * requests wait, up to --connections per group. SPDY opens one session per group and
 * submits every requestable resource at once with its type's urgency.
 *
 * With --dns-rtt a group's first connection waits for its host name's lookup: a timer on
 * the loop (never a sleep), one per distinct name, shared by the groups and connections
 * that want it while it runs and cached for the rest of the load, as a browser caches
 * lookups for a page.
 *
 * With --chromium-sockets the groups open sockets as Chromium 156's pools do on the lab's
 * links (its net log, docs/results/validation/NOTES.md): the navigation preconnects two
 * sockets to the page's host; 250 ms after a group's attempt began, if its oldest attempt
 * still has not finished the TCP handshake while requests wait, one more starts (the
 * pool's backup job); and before a host is known to speak SPDY or HTTP/2 every waiting
 * request starts an attempt of its own, up to 6, the ones still connecting given up when
 * the first opens; and each frame whose site is not the page's preconnects one socket to
 * its host when its navigation starts, in another privacy mode than the frame's requests
 * (which go without the partition's cookies), so that no request ever uses it. Each such
 * socket costs its handshake on the link, mostly upstream.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "load_int.h"

#define LOAD_BACKUP_MS 250   /* Chromium: a connect job's backup after 250 ms */
#define LOAD_BROWSER_GROUP 6 /* Chromium: sockets per group, attempts included */

double load_now_ms(const load_run *run) { return (double)(uv_hrtime() - run->t0_ns) / 1e6; }

int load_host_group(const load_run *run, int host) {
  if (run->opt->single) return 0;
  return run->host_group ? run->host_group[host] : host;
}

void load_fail(load_run *run, int id, const char *fmt, ...) {
  char reason[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof(reason), fmt, ap);
  va_end(ap);
  if (run->opt->verbose)
    fprintf(stderr, "speedy load: #%d %s: %s\n", id, run->plan->resources[id].path, reason);
  load_sched_fail(run->sched, id, reason, load_now_ms(run));
  run->fetch[id].conn = NULL;
}

void load_authority(const load_run *run, int id, char *out, size_t len) {
  const load_host *host = &run->plan->hosts[run->plan->resources[id].host];
  if (host->port == 80 || host->port == 443)
    snprintf(out, len, "%s", host->name);
  else
    snprintf(out, len, "%s:%d", host->name, host->port);
}

void load_note_response_header(load_run *run, int id, const char *name, size_t name_len,
                               const char *value, size_t value_len) {
  load_fetch *f = &run->fetch[id];
  if (!f->response_headers) f->response_headers = json_array();
  if (!f->response_headers || json_array_size(f->response_headers) >= 256) return;
  json_t *pair = json_pack("[s#s#]", name, (int)name_len, value, (int)value_len);
  if (pair) json_array_append_new(f->response_headers, pair);
}

/* One X-Subresources item: an absolute URL, "//host/path" or a path on base_host. */
static void hint_one(load_run *run, int base_host, const char *item, size_t len) {
  int host = base_host;
  size_t skip = 0;
  if (len > 7 && strncasecmp(item, "http://", 7) == 0)
    skip = 7;
  else if (len > 8 && strncasecmp(item, "https://", 8) == 0)
    skip = 8;
  else if (len > 2 && item[0] == '/' && item[1] == '/')
    skip = 2;
  if (skip) {
    const char *slash = memchr(item + skip, '/', len - skip);
    if (!slash) return;
    host = load_plan_find_host(run->plan, item + skip, (size_t)(slash - item - skip));
    len -= (size_t)(slash - item);
    item = slash;
  }
  if (host < 0 || len == 0 || item[0] != '/' || len >= 2048) return;
  char path[2048];
  memcpy(path, item, len);
  path[len] = '\0';
  int id = load_sched_find_unrequested(run->sched, host, path);
  if (id >= 0 && load_sched_hint(run->sched, id, load_now_ms(run))) {
    run->hints++;
    if (run->opt->verbose) fprintf(stderr, "speedy load: hint #%d %s\n", id, path);
  }
}

void load_hints(load_run *run, int id, const char *value, size_t len) {
  int base_host = run->plan->resources[id].host;
  size_t i = 0;
  while (i < len) {
    while (i < len && (value[i] == ' ' || value[i] == '\t' || value[i] == ',')) i++;
    size_t start = i;
    while (i < len && value[i] != ',' && value[i] != ' ' && value[i] != '\t') i++;
    if (i > start) hint_one(run, base_host, value + start, i - start);
  }
}

/* 1 when a Link parameter list (after "<URI>") has rel=preload (a token of rel's value,
 * quoted or not, case-insensitive: RFC 8288 3.3). */
static int link_is_preload(const char *p, size_t len) {
  for (size_t i = 0; i + 3 <= len; i++) {
    if (strncasecmp(p + i, "rel", 3) != 0 || (i > 0 && p[i - 1] != ';' && p[i - 1] != ' '))
      continue;
    size_t j = i + 3;
    while (j < len && p[j] == ' ') j++;
    if (j >= len || p[j] != '=') continue;
    j++;
    while (j < len && (p[j] == ' ' || p[j] == '"')) j++;
    while (j < len && p[j] != ';' && p[j] != '"') {
      size_t start = j;
      while (j < len && p[j] != ' ' && p[j] != ';' && p[j] != '"') j++;
      if (j - start == 7 && strncasecmp(p + start, "preload", 7) == 0) return 1;
      while (j < len && p[j] == ' ') j++;
    }
  }
  return 0;
}

void load_link_hints(load_run *run, int id, const char *value, size_t len) {
  int base_host = run->plan->resources[id].host;
  size_t i = 0;
  while (i < len) {
    const char *open = memchr(value + i, '<', len - i);
    if (!open) return;
    size_t start = (size_t)(open - value) + 1;
    const char *close = memchr(value + start, '>', len - start);
    if (!close) return;
    size_t end = (size_t)(close - value);
    /* the parameters run to the next link's "," outside quotes */
    size_t params = end + 1, k = params;
    int quoted = 0;
    while (k < len && (quoted || value[k] != ',')) quoted ^= value[k++] == '"';
    if (link_is_preload(value + params, k - params))
      hint_one(run, base_host, value + start, end - start);
    i = k;
  }
}

/* ---- DNS lookups (--dns-rtt) --------------------------------------------------------- */

static void lookup_on_timer(uv_timer_t *timer) {
  load_lookup *lookup = timer->data;
  load_run *run = lookup->run;
  double elapsed = load_now_ms(run) - lookup->start_ms;
  if (elapsed < (double)run->opt->dns_rtt_ms) {
    /* The loop's clock counts whole milliseconds: a lookup may not end early, or a load
     * could beat the lower bound that counts it. */
    uv_timer_start(timer, lookup_on_timer, (uint64_t)ceil((double)run->opt->dns_rtt_ms - elapsed),
                   0);
    return;
  }
  lookup->state = LOAD_LOOKUP_DONE;
  lookup->end_ms = load_now_ms(run);
  if (run->opt->verbose)
    fprintf(stderr, "speedy load: lookup of %s done at %.1f ms\n", lookup->name, lookup->end_ms);
  load_run_pump(run);
}

/* 1 when g may connect: no --dns-rtt, or its name's lookup is done. Otherwise starts the
 * lookup unless it is already running, and returns 0 (the pump runs again when it ends). */
static int group_resolved(load_group *g) {
  load_run *run = g->run;
  if (run->opt->dns_rtt_ms == 0) return 1;
  load_lookup *lookup = &run->lookups[g->lookup];
  if (lookup->state == LOAD_LOOKUP_DONE) return 1;
  if (lookup->state == LOAD_LOOKUP_IDLE) {
    lookup->state = LOAD_LOOKUP_PENDING;
    lookup->start_ms = load_now_ms(run);
    uv_update_time(run->loop); /* the timer counts from now, not from the loop's last tick */
    uv_timer_start(&lookup->timer, lookup_on_timer, run->opt->dns_rtt_ms, 0);
    if (run->opt->verbose)
      fprintf(stderr, "speedy load: lookup of %s (%u ms) at %.1f ms\n", lookup->name,
              run->opt->dns_rtt_ms, lookup->start_ms);
  }
  return 0;
}

/* One lookup per distinct server name (ASCII case-insensitive). Returns 0 or -1. */
static int lookups_make(load_run *run) {
  run->lookups = calloc((size_t)run->n_groups, sizeof(*run->lookups));
  if (!run->lookups) return -1;
  run->n_lookups = 0;
  for (int g = 0; g < run->n_groups; g++) {
    load_group *group = &run->groups[g];
    int found = -1;
    for (int i = 0; i < run->n_lookups && found < 0; i++)
      if (strcasecmp(run->lookups[i].name, group->server_name) == 0) found = i;
    if (found < 0) {
      found = run->n_lookups++;
      load_lookup *lookup = &run->lookups[found];
      lookup->run = run;
      lookup->name = group->server_name;
      lookup->start_ms = lookup->end_ms = -1;
    }
    group->lookup = found;
  }
  return 0;
}

/* ---- Connections ------------------------------------------------------------------- */

static int live_conns(const load_group *g) {
  int n = 0;
  for (int i = 0; i < g->n_conns; i++) {
    const load_conn *c = g->conns[i];
    n += !c->dead && !c->closed && c->extra != LOAD_EXTRA_UNUSABLE; /* an idle one carries none */
  }
  return n;
}

/* --coalesce: the hosts of conn's group that its certificate does not name may not use it
 * (RFC 9113 9.1.1; browsers check the same): each leaves for a group of its own, at its
 * own address and under its own name, before any of its requests is sent. */
static void uncoalesce_unnamed(load_conn *conn) {
  load_run *run = conn->run;
  int g = conn->group->base, moved = 0;
  for (size_t h = 0; h < run->plan->n_hosts; h++) {
    if ((int)h == g || run->host_group[h] != g) continue;
    const char *name = load_plan_server_name(run->plan, h);
    if (io_conn_peer_names(conn->io, name)) continue;
    if (run->opt->verbose)
      fprintf(stderr, "speedy load: the certificate of %s does not name %s: not coalesced\n",
              conn->group->server_name, name);
    run->host_group[h] = (int)h;
    run->uncoalesced++;
    moved = 1;
  }
  if (moved) load_sched_set_groups(run->sched, run->host_group, load_sched_base_groups(run->sched));
}

/* An attempt for the group's requests still setting up (TCP or TLS), not given up. */
static int conn_connecting(const load_conn *c) {
  return !c->open && !c->closed && !c->given_up && c->extra != LOAD_EXTRA_UNUSABLE;
}

/* Connections the group's requests may use, or may come to (its limit counts these). */
static int usable_conns(const load_group *g) { return g->n_conns - g->unusable; }

/* --chromium-sockets, SPDY and HTTP/2: the group's session is open; the attempts its
 * waiting requests started are given up (a preconnect or a backup finishes and idles). */
static void give_up_attempts(load_group *g) {
  if (!g->run->opt->chromium_sockets) return;
  for (int i = 0; i < g->n_conns; i++) {
    load_conn *c = g->conns[i];
    if (!conn_connecting(c) || c->extra) continue;
    c->given_up = 1;
    io_conn_abort(c->io, UV_ECANCELED); /* its on_close comes from the loop */
    if (g->run->opt->verbose)
      fprintf(stderr, "speedy load: connection %d to %s given up\n", c->index, g->server_name);
  }
}

static void conn_on_open(io_conn *io, void *user) {
  load_conn *conn = user;
  load_run *run = conn->run;
  const load_options *opt = run->opt;
  conn->open = 1;
  if (conn->extra == LOAD_EXTRA_UNUSABLE) return; /* handshaken, then idle: no request comes */
  io_proto want = opt->http1 ? IO_PROTO_HTTP1 : opt->proto;
  conn->proto = io_conn_is_tls(io) ? io_conn_protocol(io) : want;
  if (run->negotiated == IO_PROTO_UNKNOWN) run->negotiated = conn->proto;
  if (conn->proto != want) {
    const char *hint = io_conn_negotiation_hint(io);
    if (hint[0])
      snprintf(run->protocol_error, sizeof(run->protocol_error),
               "%s negotiated no protocol (wanted %s): %s", conn->group->server_name,
               io_proto_name(want), hint);
    else
      snprintf(run->protocol_error, sizeof(run->protocol_error), "%s negotiated %s (by %s), not %s",
               conn->group->server_name, io_proto_name(conn->proto),
               io_negotiation_name(io_conn_negotiation(io)), io_proto_name(want));
    snprintf(conn->group->error, sizeof(conn->group->error), "%s", run->protocol_error);
    conn->dead = 1;
    io_conn_abort(io, IO_ERR_NO_PROTOCOL);
    return;
  }
  if (opt->verbose)
    fprintf(stderr, "speedy load: connection %d to %s: %s%s%s\n", conn->index,
            conn->group->server_name, io_proto_name(conn->proto), io_conn_is_tls(io) ? ", " : "",
            io_conn_is_tls(io) ? io_conn_tls_version(io) : "");
  if (run->host_group) uncoalesce_unnamed(conn);
  if (conn->proto == IO_PROTO_HTTP1) {
    load_http1_start(conn);
  } else if (load_spdy_start(conn) != 0) {
    conn->dead = 1;
    io_conn_abort(io, UV_ENOMEM);
    return;
  } else if (conn->group->primary == NULL || conn->group->primary->dead) {
    conn->group->primary = conn;
    load_sched_set_prioritized(run->sched, conn->group->index);
    give_up_attempts(conn->group);
  }
  load_run_pump(run);
}

static size_t conn_on_read(io_conn *io, const uint8_t *data, size_t len, void *user) {
  (void)io;
  load_conn *conn = user;
  size_t n = conn->session ? load_spdy_read(conn, data, len) : load_http1_read(conn, data, len);
  load_run_pump(conn->run);
  return n;
}

static void conn_on_writable(io_conn *io, size_t room, void *user) {
  (void)io;
  load_conn *conn = user;
  if (conn->session) load_spdy_writable(conn, room);
}

static void conn_on_close(io_conn *io, int status, void *user) {
  load_conn *conn = user;
  load_run *run = conn->run;
  load_group *g = conn->group;
  conn->closed = 1;
  run->bytes_up += io_conn_bytes_out(io);
  run->bytes_down += io_conn_bytes_in(io);
  run->connections_used += conn->used;
  if (g->primary == conn) g->primary = NULL;
  if (conn->extra == LOAD_EXTRA_UNUSABLE) g->unusable--;
  if (conn->given_up || conn->extra == LOAD_EXTRA_UNUSABLE) {
    /* aborted on purpose while connecting, or never for a request: no error */
  } else if (!conn->open && status != 0 && !g->error[0]) {
    const char *detail = io_conn_error_detail(io);
    snprintf(g->error, sizeof(g->error), "cannot connect to %s: %s%s%s", g->server_name,
             io_strerror(status), detail[0] ? ": " : "", detail);
  } else if (conn->open && io_conn_bytes_in(io) == 0 && status != 0 && status != UV_EOF &&
             !conn->dead && !g->error[0]) {
    /* It failed before a byte of an answer: the next connection would too (a TLS port
     * spoken to in plaintext, a server that resets). */
    const char *detail = io_conn_error_detail(io), *hint = io_conn_negotiation_hint(io);
    snprintf(g->error, sizeof(g->error), "connection to %s failed before any response: %s%s%s%s%s",
             g->server_name, io_strerror(status), detail[0] ? ": " : "", detail,
             hint[0] ? "; " : "", hint);
  }
  if (conn->session)
    load_spdy_closed(conn, status);
  else
    load_http1_closed(conn, status);
  for (int i = 0; i < g->n_conns; i++)
    if (g->conns[i] == conn) {
      g->conns[i] = g->conns[--g->n_conns];
      break;
    }
  free(conn);
  load_run_pump(run);
}

/* Opens a connection of g; extra: LOAD_EXTRA_* (--chromium-sockets). */
static int group_connect(load_group *g, int extra) {
  load_run *run = g->run;
  if (g->n_conns >= LOAD_MAX_CONNS || g->opened >= LOAD_MAX_CONNECTS) return -1;
  load_conn *conn = calloc(1, sizeof(*conn));
  if (!conn) return -1;
  conn->run = run;
  conn->group = g;
  conn->index = run->connections;
  conn->extra = extra;
  io_config config;
  io_config_init(&config);
  config.handshake_timeout_ms = run->opt->timeout_ms;
  config.idle_timeout_ms = 0; /* the load's deadline bounds everything */
  config.close_linger_ms = 200;
  static const io_conn_callbacks callbacks = {.on_open = conn_on_open,
                                              .on_read = conn_on_read,
                                              .on_writable = conn_on_writable,
                                              .on_close = conn_on_close};
  int rv =
      io_conn_connect(&conn->io, run->loop, (const struct sockaddr *)&g->addr,
                      run->opt->tls ? run->tls : NULL, g->server_name, &config, &callbacks, conn);
  g->opened++;
  if (rv) {
    snprintf(g->error, sizeof(g->error), "cannot connect to %s: %s", g->server_name,
             io_strerror(rv));
    free(conn);
    return -1;
  }
  g->conns[g->n_conns++] = conn;
  g->unusable += extra == LOAD_EXTRA_UNUSABLE;
  run->connections++;
  /* Chromium's backup timer starts with a connect job when it is not running already. */
  if (run->opt->chromium_sockets && !extra && g->backup_ms < 0)
    g->backup_ms = load_now_ms(run) + LOAD_BACKUP_MS;
  if (run->opt->verbose && extra)
    fprintf(stderr, "speedy load: connection %d to %s: %s\n", conn->index, g->server_name,
            extra == LOAD_EXTRA_UNUSABLE                    ? "a cross-site frame's preconnect"
            : g->opened == 2 && g->index == run->page_group ? "preconnect"
                                                            : "backup");
  return 0;
}

/* Attempts of g still connecting (given-up ones not counted). */
static int connecting_count(const load_group *g) {
  int n = 0;
  for (int i = 0; i < g->n_conns; i++) n += conn_connecting(g->conns[i]);
  return n;
}

/* 1 when g's oldest attempt still connecting has not finished its TCP handshake: Chromium
 * backs up a connect job only for that ("the initial TCP connection"), not for TLS. */
static int oldest_in_tcp_connect(const load_group *g) {
  const load_conn *oldest = NULL;
  for (int i = 0; i < g->n_conns; i++) {
    const load_conn *c = g->conns[i];
    if (conn_connecting(c) && (!oldest || c->index < oldest->index)) oldest = c;
  }
  return oldest != NULL && io_conn_is_connecting(oldest->io);
}

/* --chromium-sockets: the navigation's second socket to the page's host, and the backup
 * attempt when the group's timer is due while requests (waiting) still have no socket. */
static void browser_sockets(load_group *g, size_t waiting, int limit) {
  load_run *run = g->run;
  if (!run->opt->chromium_sockets) return;
  int due = g->backup_ms >= 0 && load_now_ms(run) >= g->backup_ms;
  if (due) g->backup_ms = -1; /* always: a due timer left set would wake the pump at once */
  if (g->error[0]) return;
  if (g->index == run->page_group && g->opened == 1 && usable_conns(g) < limit && group_resolved(g))
    group_connect(g, LOAD_EXTRA_ATTEMPT);
  if (due && waiting > 0 && usable_conns(g) < limit && oldest_in_tcp_connect(g))
    group_connect(g, LOAD_EXTRA_ATTEMPT);
}

/* --chromium-sockets: each cross-site frame whose navigation has begun (its request is
 * requestable) preconnects its group's host once, in a privacy mode no request of it uses. */
static void frame_preconnects(load_run *run) {
  for (size_t k = 0; k < run->n_frame_navs;) {
    const load_entry *e = load_sched_entry(run->sched, run->frame_navs[k]);
    if (e->state == LOAD_WAITING || e->state == LOAD_DELAYED) {
      k++;
      continue;
    }
    load_group *g = &run->groups[e->group];
    if (!g->frame_preconnected && !g->error[0] && group_resolved(g)) {
      g->frame_preconnected = 1;
      group_connect(g, LOAD_EXTRA_UNUSABLE);
    } else if (!g->frame_preconnected) {
      k++; /* its name is still being looked up, or the group failed: later, or never */
      continue;
    }
    run->frame_navs[k] = run->frame_navs[--run->n_frame_navs];
  }
}

/* A group with no connection left and an error: its waiting resources fail. */
static void group_fail_ready(load_group *g) {
  load_run *run = g->run;
  for (size_t i = 0; i < run->plan->n_resources; i++) {
    const load_entry *e = load_sched_entry(run->sched, (int)i);
    if (e->group == g->index && (e->state == LOAD_READY || e->state == LOAD_ACTIVE) &&
        !run->fetch[i].conn)
      load_fail(run, (int)i, "%s", g->error);
  }
}

static void pump_http1(load_group *g) {
  load_run *run = g->run;
  load_sched *sched = run->sched;
  int id;
  /* 1. free connections take the best requests */
  for (int i = 0; i < g->n_conns && (id = load_sched_peek(sched, g->index)) >= 0; i++) {
    load_conn *c = g->conns[i];
    if (c->open && !c->dead && !c->closed && c->n_inflight == 0 && c->extra != LOAD_EXTRA_UNUSABLE)
      load_http1_send(c, id);
  }
  /* 2. more connections while requests outnumber those being set up */
  size_t ready = load_sched_ready_count(sched, g->index);
  int connecting = connecting_count(g);
  while ((size_t)connecting < ready && usable_conns(g) < run->opt->connections && !g->error[0] &&
         group_resolved(g)) {
    if (group_connect(g, LOAD_EXTRA_NONE) != 0) break;
    connecting++;
  }
  browser_sockets(g, ready, run->opt->connections);
  /* 3. pipelining: the least busy open connection takes the next one */
  while (run->opt->pipeline > 1 && (id = load_sched_peek(sched, g->index)) >= 0) {
    load_conn *best = NULL;
    for (int i = 0; i < g->n_conns; i++) {
      load_conn *c = g->conns[i];
      if (c->open && !c->dead && !c->closed && c->n_inflight < run->opt->pipeline &&
          c->extra != LOAD_EXTRA_UNUSABLE && (!best || c->n_inflight < best->n_inflight))
        best = c;
    }
    if (!best) break;
    load_http1_send(best, id);
  }
}

/* One session per group takes every request. Until one is open a connection is being set
 * up while requests wait; with --chromium-sockets, before the server is known to speak the
 * protocol, one per waiting request (up to 6). */
static void pump_spdy(load_group *g) {
  load_run *run = g->run;
  load_conn *p = g->primary;
  if (p != NULL && !p->dead && !p->closed) {
    g->backup_ms = -1; /* the session takes every request: no backup */
    load_spdy_submit(p);
    return;
  }
  size_t ready = load_sched_ready_count(run->sched, g->index);
  /* Known: a session of the group has opened (the scheduler stops holding its requests). */
  int known = load_sched_is_prioritized(run->sched, g->index);
  size_t want = run->opt->chromium_sockets && !known ? ready : ready > 0;
  int connecting = connecting_count(g);
  while ((size_t)connecting < want && usable_conns(g) < LOAD_BROWSER_GROUP && !g->error[0] &&
         group_resolved(g)) {
    if (group_connect(g, LOAD_EXTRA_NONE) != 0) break;
    connecting++;
  }
  browser_sockets(g, ready, LOAD_BROWSER_GROUP);
}

static void on_wake(uv_timer_t *timer) { load_run_pump(timer->data); }

static void finish(load_run *run) {
  run->finished = 1;
  uv_timer_stop(&run->wake);
  uv_timer_stop(&run->deadline);
  for (int i = 0; run->opt->dns_rtt_ms > 0 && i < run->n_lookups; i++)
    uv_timer_stop(&run->lookups[i].timer);
  for (int g = 0; g < run->n_groups; g++) {
    load_group *group = &run->groups[g];
    for (int i = 0; i < group->n_conns; i++) {
      load_conn *c = group->conns[i];
      if (run->timed_out)
        io_conn_abort(c->io, UV_ETIMEDOUT);
      else if (c->session && c->open && !c->closed)
        load_spdy_finish(c);
      else
        io_conn_close(c->io);
    }
  }
}

void load_run_pump(load_run *run) {
  if (run->finished) return;
  double now = load_now_ms(run);
  load_sched_advance(run->sched, now);
  load_sched_release(run->sched);
  if (run->n_frame_navs > 0) frame_preconnects(run);
  for (int g = 0; g < run->n_groups; g++) {
    load_group *group = &run->groups[g];
    if (run->opt->http1)
      pump_http1(group);
    else
      pump_spdy(group);
    if (group->error[0] && live_conns(group) == 0) group_fail_ready(group);
  }
  if (load_sched_finished(run->sched)) {
    finish(run);
    return;
  }
  double wake = load_sched_next_wakeup(run->sched);
  for (int g = 0; g < run->n_groups; g++) {
    double due = run->groups[g].backup_ms;
    if (due >= 0 && (wake < 0 || due < wake)) wake = due;
  }
  if (wake >= 0) {
    double wait = wake - load_now_ms(run);
    uv_timer_start(&run->wake, on_wake, wait > 0 ? (uint64_t)ceil(wait) : 0, 0);
  }
}

static void on_deadline(uv_timer_t *timer) {
  load_run *run = timer->data;
  run->timed_out = 1;
  for (size_t i = 0; i < run->plan->n_resources; i++)
    load_fail(run, (int)i, "timed out after %u s (--timeout)", run->opt->timeout_ms / 1000);
  finish(run);
}

static int make_tls(load_run *run) {
  const load_options *opt = run->opt;
  const char *protocol = io_proto_name(opt->http1 ? IO_PROTO_HTTP1 : opt->proto);
  char err[300] = "";
  unsigned flags =
      (opt->insecure ? IO_TLS_INSECURE : 0) | (opt->npn ? IO_TLS_NO_ALPN | IO_TLS_MAX_1_2 : 0);
  int rv = io_tls_client_new(&run->tls, opt->cacert, &protocol, 1, flags, err, sizeof(err));
  if (rv == 0 && opt->hello_padding) {
    rv = io_tls_client_pad_hello(run->tls, opt->hello_padding);
    if (rv) snprintf(err, sizeof(err), "cannot pad the ClientHello: %s", io_strerror(rv));
  }
  if (rv) {
    fprintf(stderr, "speedy load: %s\n", err[0] ? err : io_strerror(rv));
    return -1;
  }
  return 0;
}

int load_run_execute(load_run *run) {
  const load_options *opt = run->opt;
  if (opt->tls && make_tls(run) != 0) return -1;
  run->n_groups = load_sched_groups(run->sched);
  int base_groups = load_sched_base_groups(run->sched);
  run->groups = calloc((size_t)run->n_groups, sizeof(*run->groups));
  if (!run->groups) return -1;
  for (int g = 0; g < run->n_groups; g++) {
    load_group *group = &run->groups[g];
    group->run = run;
    group->index = g;
    group->base = g % base_groups;
    group->backup_ms = -1;
    if (opt->single) {
      group->addr = opt->single_addr;
      /* one origin: the page's own host names the connection */
      group->server_name = load_plan_server_name(run->plan, (size_t)run->plan->resources[0].host);
    } else {
      group->addr = opt->host_addr[group->base];
      group->server_name = load_plan_server_name(run->plan, (size_t)group->base);
    }
  }
  run->page_group = load_host_group(run, run->plan->resources[0].host);
  if (lookups_make(run) != 0) return -1;
  if (opt->chromium_sockets) {
    run->frame_navs = calloc(run->plan->n_resources + 1, sizeof(*run->frame_navs));
    if (!run->frame_navs) return -1;
    for (size_t i = 0; i < run->plan->n_resources; i++)
      if (load_sched_is_cross_site_frame(run->sched, (int)i))
        run->frame_navs[run->n_frame_navs++] = (int)i;
  }
  uv_loop_t loop;
  if (uv_loop_init(&loop) != 0) return -1;
  run->loop = &loop;
  uv_timer_init(&loop, &run->wake);
  uv_timer_init(&loop, &run->deadline);
  run->wake.data = run->deadline.data = run;
  for (int i = 0; opt->dns_rtt_ms > 0 && i < run->n_lookups; i++) {
    uv_timer_init(&loop, &run->lookups[i].timer);
    run->lookups[i].timer.data = &run->lookups[i];
  }
  run->t0_ns = uv_hrtime();
  struct timespec ts;
  if (timespec_get(&ts, TIME_UTC) == TIME_UTC)
    run->wall_start = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
  uv_timer_start(&run->deadline, on_deadline, opt->timeout_ms, 0);
  load_sched_start(run->sched, 0);
  load_run_pump(run);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_close((uv_handle_t *)&run->wake, NULL);
  uv_close((uv_handle_t *)&run->deadline, NULL);
  for (int i = 0; opt->dns_rtt_ms > 0 && i < run->n_lookups; i++)
    uv_close((uv_handle_t *)&run->lookups[i].timer, NULL);
  uv_run(&loop, UV_RUN_DEFAULT);
  uv_loop_close(&loop);
  run->loop = NULL;
  return 0;
}
