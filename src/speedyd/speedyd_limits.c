/* speedyd_limits.c — the server's defences that are not a protocol's: per-address
 * connection counts, eviction of idle connections at the connection limit, memory
 * budgets (per connection and for the whole server) and the flood meter.
 *
 * Memory: libspeedy allocates through speedyd_budget_malloc/realloc/free (its allocator
 * hook, zlib included), so a session's bytes are counted exactly; speedyd charges its own
 * per-connection and per-stream structures with speedyd_budget_charge. An allocation past
 * either maximum fails: the engine then ends that one session (GOAWAY INTERNAL_ERROR),
 * never the process. Before that, from 3/4 of a budget, new requests are refused
 * (REFUSED_STREAM, 503) so that work already accepted can finish.
 *
 * Docs: docs/security.md lists every limit, its default and its option.
 */
#include <stdlib.h>
#include <string.h>

#include "speedyd.h"

/* ---- per-address connection counts and flood meters ---- */

#define ADDR_BUCKETS 4096u
/* Entries kept only for their meter (no connection left): at most this many, so that a
 * flood from many addresses cannot grow the table without bound. */
#define ADDR_MAX_DRAINING 65536u

struct speedyd_addr {
  speedyd_addr *next;
  uint32_t count; /* live connections */
  speedyd_glitch_meter glitches;
  int refusing; /* went over its burst: refused until the meter drained to half of it */
  char ip[64];
};

struct speedyd_addr_table {
  speedyd_addr *buckets[ADDR_BUCKETS];
  uint32_t n_draining; /* entries with count 0 kept for their meter */
};

static uint32_t addr_hash(const char *ip) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (const unsigned char *p = (const unsigned char *)ip; *p; p++) h = (h ^ *p) * 16777619u;
  return h % ADDR_BUCKETS;
}

/* 1 while the address is refused: from going over its burst until its meter drained to
 * half of it (without that margin a flooder would get a new session every time one
 * glitch had drained, and the session's set-up is the work it wants from us). */
static int addr_refusing(const speedyd_server *server, speedyd_addr *e, int64_t now_ns) {
  if (server->config.address_glitch_burst == 0 || !e->refusing) return 0;
  speedyd_glitch(&e->glitches, now_ns, 0); /* drain only */
  if (e->glitches.level <= (uint64_t)server->config.address_glitch_burst * 500u) e->refusing = 0;
  return e->refusing;
}

/* Frees entries of one bucket that have no connection and a drained meter. */
static void addr_sweep(speedyd_server *server, speedyd_addr **link, int64_t now_ns) {
  while (*link != NULL) {
    speedyd_addr *e = *link;
    if (e->count == 0) speedyd_glitch(&e->glitches, now_ns, 0);
    if (e->count == 0 && e->glitches.level == 0) {
      *link = e->next;
      server->addrs->n_draining--;
      free(e);
    } else {
      link = &e->next;
    }
  }
}

int speedyd_addr_acquire(speedyd_server *server, const char *ip, speedyd_addr **out) {
  *out = NULL;
  uint32_t limit = server->config.max_connections_per_address;
  if (limit == 0 && server->config.address_glitch_burst == 0) return 0;
  if (server->addrs == NULL) {
    server->addrs = calloc(1, sizeof(*server->addrs));
    if (server->addrs == NULL) return -1;
  }
  int64_t now_ns = speedyd_now_ns();
  speedyd_addr **bucket = &server->addrs->buckets[addr_hash(ip)];
  addr_sweep(server, bucket, now_ns);
  speedyd_addr *e = *bucket;
  while (e != NULL && strcmp(e->ip, ip) != 0) e = e->next;
  if (e != NULL && addr_refusing(server, e, now_ns)) return SPEEDYD_ADDR_FLOODING;
  if (e != NULL && limit != 0 && e->count >= limit) return SPEEDYD_ADDR_LIMIT;
  if (e == NULL) {
    e = calloc(1, sizeof(*e));
    if (e == NULL) return -1;
    snprintf(e->ip, sizeof(e->ip), "%s", ip);
    e->next = *bucket;
    *bucket = e;
  } else if (e->count == 0) {
    server->addrs->n_draining--;
  }
  e->count++;
  *out = e;
  return 0;
}

void speedyd_addr_release(speedyd_server *server, speedyd_addr *addr) {
  if (addr == NULL || server->addrs == NULL) return;
  if (--addr->count > 0) return;
  /* Kept while its meter drains (a flooder that reconnects finds it), unless too many
   * such entries exist already. */
  int64_t now_ns = speedyd_now_ns();
  speedyd_glitch(&addr->glitches, now_ns, 0);
  server->addrs->n_draining++;
  if (addr->glitches.level > 0 && server->addrs->n_draining <= ADDR_MAX_DRAINING) return;
  addr->glitches.level = 0;
  addr_sweep(server, &server->addrs->buckets[addr_hash(addr->ip)], now_ns);
}

int speedyd_addr_glitch(speedyd_server *server, speedyd_addr *addr, unsigned cost) {
  if (addr == NULL || server->config.address_glitch_burst == 0 || cost == 0) return 0;
  int64_t now_ns = speedyd_now_ns();
  (void)addr_refusing(server, addr, now_ns); /* a ban that has drained ends first */
  speedyd_glitch(&addr->glitches, now_ns, cost);
  if (addr->glitches.level > (uint64_t)server->config.address_glitch_burst * 1000u)
    addr->refusing = 1;
  return addr->refusing;
}

void speedyd_addr_table_del(speedyd_server *server) {
  if (server->addrs == NULL) return;
  for (uint32_t b = 0; b < ADDR_BUCKETS; b++) {
    for (speedyd_addr *e = server->addrs->buckets[b]; e != NULL;) {
      speedyd_addr *next = e->next;
      free(e);
      e = next;
    }
  }
  free(server->addrs);
  server->addrs = NULL;
}

/* ---- eviction ---- */

/* How far from the oldest end we look for an idle connection: bounded work per accept
 * even when thousands of connections are busy. */
#define EVICT_SCAN 256

int speedyd_evict_idle(speedyd_server *server) {
  int scanned = 0;
  for (speedyd_conn *c = server->conns_tail; c != NULL && scanned < EVICT_SCAN;
       c = c->prev, scanned++) {
    if (c->evicted) continue;
    if (c->idle != NULL && !c->idle(c)) continue;
    c->evicted = 1;
    server->n_evicting++;
    io_conn_abort(c->io, UV_ECANCELED);
    return 1;
  }
  return 0;
}

/* ---- memory budgets ---- */

int speedyd_budget_charge(speedyd_budget *budget, uint64_t n) {
  speedyd_server *server = budget->server;
  const speedyd_config *config = &server->config;
  if (config->max_connection_memory != 0 &&
      (n > config->max_connection_memory || budget->used > config->max_connection_memory - n))
    return -1;
  if (config->max_memory != 0 &&
      (n > config->max_memory || server->mem_used > config->max_memory - n))
    return -1;
  budget->used += n;
  server->mem_used += n;
  return 0;
}

void speedyd_budget_release(speedyd_budget *budget, uint64_t n) {
  if (n > budget->used) n = budget->used; /* cannot happen; keeps the sums sane */
  budget->used -= n;
  budget->server->mem_used -= n < budget->server->mem_used ? n : budget->server->mem_used;
}

int speedyd_budget_charge_upload(speedyd_budget *budget, uint64_t n) {
  speedyd_server *server = budget->server;
  const speedyd_config *config = &server->config;
  if (server->upload_options.mode != HTTP_UPLOAD_ECHO) return 0;
  uint64_t per_connection = server->upload_options.max_bytes ? server->upload_options.max_bytes
                                                             : HTTP_UPLOAD_DEFAULT_ECHO_MAX;
  if (config->max_connection_memory > per_connection)
    per_connection = config->max_connection_memory;
  if (n > per_connection || budget->upload_used > per_connection - n) return -1;
  if (config->max_memory != 0 &&
      (n > config->max_memory || server->mem_used > config->max_memory - n))
    return -1;
  budget->upload_used += n;
  server->mem_used += n;
  return 0;
}

void speedyd_budget_release_upload(speedyd_budget *budget, uint64_t n) {
  if (n > budget->upload_used) n = budget->upload_used; /* cannot happen */
  budget->upload_used -= n;
  budget->server->mem_used -= n < budget->server->mem_used ? n : budget->server->mem_used;
}

int speedyd_budget_pressure(const speedyd_budget *budget) {
  const speedyd_server *server = budget->server;
  const speedyd_config *config = &server->config;
  if (config->max_connection_memory != 0 && budget->used > config->max_connection_memory / 4 * 3)
    return 1;
  return config->max_memory != 0 && server->mem_used > config->max_memory / 4 * 3;
}

/* Each block carries its size in front, so free and realloc can give it back. */
typedef union block_head {
  size_t size;
  max_align_t align;
} block_head;

void *speedyd_budget_malloc(size_t size, void *user) {
  speedyd_budget *budget = user;
  if (size > SIZE_MAX - sizeof(block_head)) return NULL;
  size_t total = size + sizeof(block_head);
  if (speedyd_budget_charge(budget, total) != 0) return NULL;
  block_head *head = malloc(total);
  if (head == NULL) {
    speedyd_budget_release(budget, total);
    return NULL;
  }
  head->size = total;
  return head + 1;
}

void speedyd_budget_free(void *ptr, void *user) {
  if (ptr == NULL) return;
  block_head *head = (block_head *)ptr - 1;
  speedyd_budget_release(user, head->size);
  free(head);
}

void *speedyd_budget_realloc(void *ptr, size_t size, void *user) {
  speedyd_budget *budget = user;
  if (ptr == NULL) return speedyd_budget_malloc(size, user);
  if (size > SIZE_MAX - sizeof(block_head)) return NULL;
  block_head *head = (block_head *)ptr - 1;
  size_t old_total = head->size, total = size + sizeof(block_head);
  if (total > old_total && speedyd_budget_charge(budget, total - old_total) != 0) return NULL;
  block_head *grown = realloc(head, total);
  if (grown == NULL) {
    if (total > old_total) speedyd_budget_release(budget, total - old_total);
    return NULL;
  }
  if (total < old_total) speedyd_budget_release(budget, old_total - total);
  grown->size = total;
  return grown + 1;
}

/* ---- the flood meter ---- */

int speedyd_glitch(speedyd_glitch_meter *meter, int64_t now_ns, unsigned cost) {
  if (meter->last_ns == 0 || now_ns < meter->last_ns) meter->last_ns = now_ns;
  /* Drains SPEEDYD_GLITCH_RATE glitches (×1,000) per second, in whole milliseconds so
   * that frequent calls do not round the drain away. */
  uint64_t elapsed_ms = (uint64_t)(now_ns - meter->last_ns) / 1000000u;
  if (elapsed_ms > 0) {
    uint64_t drained = elapsed_ms * SPEEDYD_GLITCH_RATE;
    meter->level = drained >= meter->level ? 0 : meter->level - drained;
    meter->last_ns += (int64_t)elapsed_ms * 1000000;
  }
  meter->level += (uint64_t)cost * 1000u;
  return meter->level > (uint64_t)SPEEDYD_GLITCH_BURST * 1000u;
}
