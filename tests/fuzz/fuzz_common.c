/* fuzz_common.c — support shared by the libspeedy fuzz harnesses (see fuzz_common.h). */
#define _POSIX_C_SOURCE 200809L

#include "fuzz_common.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "h2_codec.h"
#include "h2_frame.h"
#include "hdblock.h"

void fuzz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("fuzz: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fflush(stderr);
  abort();
}

/* ---- counting allocator ------------------------------------------------------------ */

typedef union alloc_header {
  size_t size;
  max_align_t align;
} alloc_header;

static struct {
  size_t live_blocks, live_bytes;
  size_t countdown; /* 0: never fail */
  int sticky;
  int failing; /* sticky failure reached */
  size_t failures;
} alloc_state;

void fuzz_alloc_reset(void) { memset(&alloc_state, 0, sizeof(alloc_state)); }

void fuzz_alloc_fail_at(size_t n, int sticky) {
  alloc_state.countdown = n;
  alloc_state.sticky = sticky;
  alloc_state.failing = 0;
}

size_t fuzz_alloc_failures(void) { return alloc_state.failures; }
size_t fuzz_alloc_live_blocks(void) { return alloc_state.live_blocks; }
size_t fuzz_alloc_live_bytes(void) { return alloc_state.live_bytes; }

static int alloc_should_fail(void) {
  if (alloc_state.failing) {
    alloc_state.failures++;
    return 1;
  }
  if (alloc_state.countdown == 0) return 0;
  if (--alloc_state.countdown > 0) return 0;
  alloc_state.failures++;
  if (alloc_state.sticky) alloc_state.failing = 1;
  return 1;
}

void fuzz_alloc_check_empty(const char *where) {
  if (alloc_state.live_blocks != 0 || alloc_state.live_bytes != 0)
    fuzz_fail("%s: %zu blocks (%zu bytes) still allocated after the session was deleted", where,
              alloc_state.live_blocks, alloc_state.live_bytes);
}

void *fuzz_alloc_malloc(size_t size, void *user) {
  (void)user;
  if (alloc_should_fail()) return NULL;
  if (size > SIZE_MAX - sizeof(alloc_header)) return NULL;
  alloc_header *h = malloc(sizeof(alloc_header) + size);
  if (h == NULL) return NULL;
  h->size = size;
  alloc_state.live_blocks++;
  alloc_state.live_bytes += size;
  return h + 1;
}

void *fuzz_alloc_realloc(void *ptr, size_t size, void *user) {
  if (ptr == NULL) return fuzz_alloc_malloc(size, user);
  if (alloc_should_fail()) return NULL;
  if (size > SIZE_MAX - sizeof(alloc_header)) return NULL;
  alloc_header *old = (alloc_header *)ptr - 1;
  size_t old_size = old->size;
  alloc_header *h = realloc(old, sizeof(alloc_header) + size);
  if (h == NULL) return NULL;
  h->size = size;
  alloc_state.live_bytes = alloc_state.live_bytes - old_size + size;
  return h + 1;
}

void fuzz_alloc_free(void *ptr, void *user) {
  (void)user;
  if (ptr == NULL) return;
  alloc_header *h = (alloc_header *)ptr - 1;
  if (alloc_state.live_blocks == 0 || alloc_state.live_bytes < h->size)
    fuzz_fail("free of a block the counting allocator does not hold");
  alloc_state.live_blocks--;
  alloc_state.live_bytes -= h->size;
  free(h);
}

void fuzz_alloc_install(speedy_options *options) {
  speedy_options_set_allocator(options, fuzz_alloc_malloc, fuzz_alloc_realloc, fuzz_alloc_free,
                               NULL);
}

/* ---- input reader ------------------------------------------------------------------ */

void fuzz_input_init(fuzz_input *in, const uint8_t *data, size_t len) {
  in->data = data;
  in->len = len;
  in->pos = 0;
}

int fuzz_input_done(const fuzz_input *in) { return in->pos >= in->len; }
size_t fuzz_input_left(const fuzz_input *in) { return in->len - in->pos; }

uint8_t fuzz_u8(fuzz_input *in) { return in->pos < in->len ? in->data[in->pos++] : 0; }

uint16_t fuzz_u16(fuzz_input *in) {
  uint16_t hi = fuzz_u8(in);
  return (uint16_t)(hi << 8 | fuzz_u8(in));
}

uint32_t fuzz_u32(fuzz_input *in) {
  uint32_t hi = fuzz_u16(in);
  return hi << 16 | fuzz_u16(in);
}

uint32_t fuzz_below(fuzz_input *in, uint32_t n) {
  if (n <= 1) return 0;
  if (n <= 256) return fuzz_u8(in) % n;
  return fuzz_u16(in) % n;
}

size_t fuzz_take(fuzz_input *in, size_t n, const uint8_t **out) {
  size_t left = in->len - in->pos;
  if (n > left) n = left;
  *out = in->data + in->pos;
  in->pos += n;
  return n;
}

/* ---- buffers ----------------------------------------------------------------------- */

void fuzz_buf_free(fuzz_buf *b) {
  free(b->data);
  memset(b, 0, sizeof(*b));
}

static void buf_reserve(fuzz_buf *b, size_t n) {
  if (n > SIZE_MAX / 4 - b->len) fuzz_fail("fuzz_buf: %zu more bytes is absurd", n);
  if (b->cap - b->len >= n) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n) cap *= 2;
  uint8_t *data = realloc(b->data, cap);
  if (data == NULL) fuzz_fail("out of memory in the harness");
  b->data = data;
  b->cap = cap;
}

void fuzz_put(fuzz_buf *b, const void *bytes, size_t n) {
  if (n == 0) return;
  buf_reserve(b, n);
  memcpy(b->data + b->len, bytes, n);
  b->len += n;
}

void fuzz_put_fill(fuzz_buf *b, uint8_t byte, size_t n) {
  if (n == 0) return;
  buf_reserve(b, n);
  memset(b->data + b->len, byte, n);
  b->len += n;
}

void fuzz_put_u8(fuzz_buf *b, uint8_t v) { fuzz_put(b, &v, 1); }

void fuzz_put_u16(fuzz_buf *b, uint16_t v) {
  uint8_t p[2] = {(uint8_t)(v >> 8), (uint8_t)v};
  fuzz_put(b, p, 2);
}

void fuzz_put_u24(fuzz_buf *b, uint32_t v) {
  uint8_t p[3] = {(uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  fuzz_put(b, p, 3);
}

void fuzz_put_u32(fuzz_buf *b, uint32_t v) {
  uint8_t p[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  fuzz_put(b, p, 4);
}

/* ---- event log --------------------------------------------------------------------- */

uint64_t fuzz_hash(uint64_t h, const void *bytes, size_t len) {
  const uint8_t *p = bytes;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

void fuzz_log_init(fuzz_log *log) {
  log->text_len = 0;
  log->text[0] = '\0';
  log->hash = FUZZ_HASH_INIT;
  log->lines = 0;
  log->data_stream = 0;
  log->data_bytes = 0;
  log->data_hash = FUZZ_HASH_INIT;
}

static void log_line(fuzz_log *log, const char *line, size_t len) {
  log->hash = fuzz_hash(log->hash, line, len);
  log->hash = fuzz_hash(log->hash, "\n", 1);
  log->lines++;
  size_t room = sizeof(log->text) - log->text_len;
  if (room > len + 1) {
    memcpy(log->text + log->text_len, line, len);
    log->text_len += len;
    log->text[log->text_len++] = '\n';
    log->text[log->text_len] = '\0';
  }
}

void fuzz_log_flush(fuzz_log *log) {
  if (log->data_stream == 0) return;
  char line[96];
  int n = snprintf(line, sizeof(line), "data %d bytes=%llu hash=%016llx", (int)log->data_stream,
                   (unsigned long long)log->data_bytes, (unsigned long long)log->data_hash);
  log->data_stream = 0;
  log->data_bytes = 0;
  log->data_hash = FUZZ_HASH_INIT;
  log_line(log, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

void fuzz_log_add(fuzz_log *log, const char *fmt, ...) {
  char line[512];
  va_list ap;
  fuzz_log_flush(log);
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  log_line(log, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

static void log_data(fuzz_log *log, int32_t stream_id, const uint8_t *data, size_t len) {
  if (log->data_stream != stream_id) fuzz_log_flush(log);
  log->data_stream = stream_id;
  log->data_bytes += len;
  log->data_hash = fuzz_hash(log->data_hash, data, len);
}

int fuzz_log_equal(const fuzz_log *a, const fuzz_log *b) {
  return a->hash == b->hash && a->lines == b->lines && a->data_stream == b->data_stream &&
         a->data_bytes == b->data_bytes && a->data_hash == b->data_hash;
}

/* ---- a recording endpoint ---------------------------------------------------------- */

const speedy_header fuzz_request_headers[5] = {
    {":method", 7, "GET", 3},     {":path", 5, "/", 1},       {":version", 8, "HTTP/1.1", 8},
    {":host", 5, "fuzz.test", 9}, {":scheme", 7, "https", 5},
};
const speedy_header fuzz_response_headers[2] = {{":status", 7, "200", 3},
                                                {":version", 8, "HTTP/1.1", 8}};

speedy_protocol fuzz_protocol_of(uint8_t selector) {
  switch (selector % 3) {
  case 0:
    return SPEEDY_PROTOCOL_SPDY2;
  case 1:
    return SPEEDY_PROTOCOL_SPDY3;
  default:
    return SPEEDY_PROTOCOL_SPDY3_1;
  }
}

unsigned fuzz_wire_version(speedy_protocol protocol) {
  return protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : 3;
}

uint8_t fuzz_pattern_byte(int32_t stream_id, uint64_t off) {
  return (uint8_t)((off + (uint64_t)stream_id * 31u) % 251u);
}

int64_t fuzz_body_read(speedy_session *session, int32_t stream_id, uint8_t *buf, size_t len,
                       uint32_t *flags, void *source, void *user) {
  (void)session;
  (void)user;
  fuzz_body *body = source;
  body->reads++;
  if (body->defer_every != 0 && body->reads % body->defer_every == 0) return SPEEDY_ERR_DEFERRED;
  uint64_t left = body->len - body->offset;
  size_t n = left < len ? (size_t)left : len;
  if (body->nocopy && n > 0) {
    *flags |= SPEEDY_DATA_FLAG_NO_COPY;
    body->nocopy_from = body->offset;
  } else {
    for (size_t i = 0; i < n; i++) buf[i] = fuzz_pattern_byte(stream_id, body->offset + i);
  }
  body->offset += n;
  if (body->offset == body->len) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

static struct fuzz_rx *rx_slot(fuzz_endpoint *ep, int32_t id, int create) {
  size_t n = sizeof(ep->rx) / sizeof(ep->rx[0]);
  size_t start = (size_t)id % n;
  for (size_t i = 0; i < n; i++) {
    struct fuzz_rx *slot = &ep->rx[(start + i) % n];
    if (slot->id == id) return slot;
    if (slot->id == 0) {
      if (!create) return NULL;
      slot->id = id;
      slot->bytes = 0;
      return slot;
    }
  }
  if (create) ep->rx_overflow = 1; /* table full: the pattern check skips this stream */
  return NULL;
}

static int cb_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind, int32_t assoc,
                            void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "begin %d kind=%d assoc=%d", (int)id, (int)kind, (int)assoc);
  return 0;
}

static int cb_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  if (h->name == NULL || h->name_len == 0) fuzz_fail("on_header: empty name on stream %d", (int)id);
  if (h->value_len > 0 && h->value == NULL) fuzz_fail("on_header: value NULL with a length");
  uint64_t vh = fuzz_hash(FUZZ_HASH_INIT, h->value, h->value_len);
  fuzz_log_add(&ep->log, "header %d %.*s len=%zu hash=%016llx", (int)id,
               (int)(h->name_len > 64 ? 64 : h->name_len), h->name, h->value_len,
               (unsigned long long)vh);
  return 0;
}

static int cb_headers_end(speedy_session *s, int32_t id, int end_stream, void *user) {
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "headers_end %d fin=%d", (int)id, end_stream);
  if (ep->respond && ep->role == SPEEDY_ROLE_SERVER && (id & 1) == 1) {
    fuzz_body *body = NULL;
    if (ep->body_len > 0 && ep->n_bodies < FUZZ_ENDPOINT_BODIES) {
      body = &ep->bodies[ep->n_bodies++];
      memset(body, 0, sizeof(*body));
      body->stream_id = id;
      body->len = ep->body_len;
    }
    /* Errors (already answered, stream closed) are fine: the peer may be anything. */
    (void)speedy_submit_response(s, id, fuzz_response_headers, 2, body ? fuzz_body_read : NULL,
                                 body);
  }
  return 0;
}

static int cb_data_chunk(speedy_session *s, int32_t id, const uint8_t *data, size_t len,
                         void *user) {
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  if (len == 0) fuzz_fail("on_data_chunk with 0 bytes on stream %d", (int)id);
  log_data(&ep->log, id, data, len);
  if (ep->check_pattern) {
    struct fuzz_rx *slot = rx_slot(ep, id, 1);
    if (slot != NULL) {
      for (size_t i = 0; i < len; i++)
        if (data[i] != fuzz_pattern_byte(id, slot->bytes + i))
          fuzz_fail("stream %d: body byte %llu is %u, the sender wrote %u", (int)id,
                    (unsigned long long)(slot->bytes + i), data[i],
                    fuzz_pattern_byte(id, slot->bytes + i));
      slot->bytes += len;
    }
  }
  if (ep->manual_flow) (void)speedy_session_consume(s, id, len);
  return 0;
}

static int cb_data_end(speedy_session *s, int32_t id, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "data_end %d", (int)id);
  return 0;
}

static int cb_stream_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "close %d %s", (int)id, speedy_rst_status_name(status));
  if (ep->close_hook != NULL) {
    struct fuzz_rx *slot = rx_slot(ep, id, 0);
    uint64_t bytes = slot != NULL ? slot->bytes : 0;
    if (slot == NULL && (ep->rx_overflow || !ep->check_pattern)) bytes = UINT64_MAX;
    ep->close_hook(ep, id, status, bytes);
  }
  return 0;
}

static int cb_ping_ack(speedy_session *s, uint32_t id, int64_t rtt, void *user) {
  (void)s;
  (void)rtt;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "ping_ack %u", id);
  return 0;
}

static int cb_goaway(speedy_session *s, int32_t last_good, uint32_t status, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "goaway last_good=%d status=%u", (int)last_good, status);
  return 0;
}

static int cb_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  ep->callbacks++;
  fuzz_log_add(&ep->log, "setting %u flags=%u value=%u", id, flags, value);
  return 0;
}

static void cb_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user) {
  (void)s;
  fuzz_endpoint *ep = user;
  if (summary == NULL) fuzz_fail("on_frame: summary is NULL");
  if (sent) {
    /* Output timing depends on when the harness calls send: counted, not logged. */
    /* RST_STREAM and GOAWAY have the same type numbers in SPDY and HTTP/2. */
    if (type == SPEEDY_SPDY_FRAME_RST_STREAM && ep->protocol == SPEEDY_PROTOCOL_H2) {
      /* "stream=N error=NAME" with HTTP/2's name: counted under the neutral status. */
      const char *st = strstr(summary, "error=");
      uint32_t code = 0;
      if (st != NULL) {
        for (uint32_t c = 1; c <= SPEEDY_H2_HTTP_1_1_REQUIRED; c++)
          if (strcmp(st + 6, speedy_h2_error_name(c)) == 0) code = speedy_h2_reason_of(c);
      }
      ep->rst_sent[code]++;
    } else if (type == SPEEDY_SPDY_FRAME_RST_STREAM) {
      const char *st = strstr(summary, "status=");
      uint32_t code = 0;
      if (st != NULL) {
        for (uint32_t c = 1; c < 16; c++)
          if (strcmp(st + 7, speedy_rst_status_name(c)) == 0) code = c;
      }
      ep->rst_sent[code]++;
    } else if (type == SPEEDY_SPDY_FRAME_GOAWAY) {
      ep->goaway_sent++;
    }
    return;
  }
  fuzz_log_add(&ep->log, "recv %s flags=%u stream=%d length=%u %s",
               speedy_protocol_frame_type_name(ep->protocol, type), flags, (int)id, length,
               summary);
}

/* A zero-copy frame's turn: its header and the pattern bytes fuzz_body_read left out. */
static int cb_send_data(speedy_session *s, int32_t id, const uint8_t *frame_header, size_t length,
                        void *source, void *user) {
  fuzz_endpoint *ep = user;
  fuzz_body *body = source;
  if (body == NULL || !body->nocopy || length > body->offset - body->nocopy_from)
    fuzz_fail("on_send_data for %zu bytes of stream %d that no read left out", length, (int)id);
  fuzz_put(&ep->side, frame_header, speedy_session_data_header_length(s));
  uint8_t chunk[512];
  for (size_t done = 0; done < length;) {
    size_t n = length - done < sizeof(chunk) ? length - done : sizeof(chunk);
    for (size_t i = 0; i < n; i++) chunk[i] = fuzz_pattern_byte(id, body->nocopy_from + done + i);
    fuzz_put(&ep->side, chunk, n);
    done += n;
  }
  return 0;
}

int fuzz_endpoint_open(fuzz_endpoint *ep, speedy_protocol protocol, speedy_role role,
                       speedy_options *options) {
  speedy_callbacks *cb = NULL;
  speedy_options *own = options;
  int rv = speedy_callbacks_new(&cb);
  if (rv != 0) return rv;
  if (own == NULL) {
    rv = speedy_options_new(&own);
    if (rv != 0) {
      speedy_callbacks_del(cb);
      return rv;
    }
  }
  fuzz_alloc_install(own);
  speedy_options_set_manual_flow_control(own, ep->manual_flow);
  speedy_callbacks_set_on_begin_headers(cb, cb_begin_headers);
  speedy_callbacks_set_on_header(cb, cb_header);
  speedy_callbacks_set_on_headers_end(cb, cb_headers_end);
  speedy_callbacks_set_on_data_chunk(cb, cb_data_chunk);
  speedy_callbacks_set_on_data_end(cb, cb_data_end);
  speedy_callbacks_set_on_stream_close(cb, cb_stream_close);
  speedy_callbacks_set_on_ping_ack(cb, cb_ping_ack);
  speedy_callbacks_set_on_goaway(cb, cb_goaway);
  speedy_callbacks_set_on_setting(cb, cb_setting);
  speedy_callbacks_set_on_frame(cb, cb_frame);
  speedy_callbacks_set_on_send_data(cb, cb_send_data);
  ep->protocol = protocol;
  memset(&ep->side, 0, sizeof(ep->side));
  ep->role = role;
  fuzz_log_init(&ep->log);
  memset(ep->rx, 0, sizeof(ep->rx));
  ep->rx_overflow = 0;
  memset(ep->rst_sent, 0, sizeof(ep->rst_sent));
  ep->goaway_sent = 0;
  ep->callbacks = 0;
  ep->n_bodies = 0;
  ep->session = NULL;
  rv = speedy_session_new(&ep->session, protocol, role, cb, own, ep);
  speedy_callbacks_del(cb);
  if (own != options) speedy_options_del(own);
  return rv;
}

speedy_options *fuzz_options_new(int small_limits) {
  speedy_options *options = NULL;
  if (speedy_options_new(&options) != 0) fuzz_fail("speedy_options_new failed");
  if (small_limits) {
    speedy_options_set_max_header_block(options, 1024);
    speedy_options_set_max_recv_control_frame(options, 2048);
    speedy_options_set_max_concurrent_streams(options, 4);
    speedy_options_set_stream_window(options, 4096);
    speedy_options_set_max_queued_control_frames(options, 16);
    speedy_options_set_max_pending_streams(options, 4);
    speedy_options_set_data_frame_size(options, 16);
  }
  return options;
}

size_t fuzz_accounting_baseline(const fuzz_endpoint *ep) {
  return fuzz_alloc_live_bytes() - speedy_session_memory(ep->session);
}

void fuzz_check_accounting(const fuzz_endpoint *ep, size_t baseline, const char *where) {
  size_t reported = speedy_session_memory(ep->session);
  size_t seen = fuzz_alloc_live_bytes();
  if (seen - reported != baseline)
    fuzz_fail("%s: speedy_session_memory says %zu bytes, the allocator hook holds %zu (%zu outside "
              "the count at creation)",
              where, reported, seen, baseline);
}

void fuzz_endpoint_close(fuzz_endpoint *ep) {
  if (ep->session != NULL) speedy_session_del(ep->session);
  ep->session = NULL;
  fuzz_buf_free(&ep->side);
}

int64_t fuzz_endpoint_recv(fuzz_endpoint *ep, const uint8_t *bytes, size_t len) {
  int64_t rv = speedy_session_recv(ep->session, bytes, len);
  if (rv >= 0 && (uint64_t)rv > len)
    fuzz_fail("recv consumed %lld of %zu bytes", (long long)rv, len);
  if (rv < 0 && (rv < -520 || rv > -501))
    fuzz_fail("recv returned %lld, not an SPEEDY_ERR_* code", (long long)rv);
  return rv;
}

int fuzz_endpoint_drain(fuzz_endpoint *ep, fuzz_buf *out) {
  uint8_t chunk[16384];
  /* Bounded: a session never has more than this much to say at once in these harnesses. */
  for (int rounds = 0; rounds < 100000; rounds++) {
    int64_t n = speedy_session_send(ep->session, chunk, sizeof(chunk));
    if (n < 0) {
      if (n < -520 || n > -501) fuzz_fail("send returned %lld", (long long)n);
      return (int)n;
    }
    if ((uint64_t)n > sizeof(chunk))
      fuzz_fail("send wrote %lld bytes into %zu", (long long)n, sizeof(chunk));
    if (n == 0) return 0;
    if (out != NULL) fuzz_put(out, chunk, (size_t)n);
  }
  fuzz_fail("speedy_session_send never ran dry");
}

/* ---- the peer's header compression --------------------------------------------------- */

void fuzz_deflater_init(fuzz_deflater *d, fuzz_dictionary dictionary, int level) {
  fuzz_deflater_init2(d, dictionary, level, 15, 8);
}

void fuzz_deflater_init2(fuzz_deflater *d, fuzz_dictionary dictionary, int level, int window_bits,
                         int mem_level) {
  memset(d, 0, sizeof(*d));
  if (deflateInit2(&d->zs, level, Z_DEFLATED, window_bits, mem_level, Z_DEFAULT_STRATEGY) != Z_OK)
    fuzz_fail("deflateInit2 failed");
  if (dictionary != FUZZ_DICT_NONE) {
    const uint8_t *dict = dictionary == FUZZ_DICT_V2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
    size_t len = dictionary == FUZZ_DICT_V2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
    if (deflateSetDictionary(&d->zs, dict, (uInt)len) != Z_OK)
      fuzz_fail("deflateSetDictionary failed");
  }
  d->ready = 1;
}

void fuzz_deflater_free(fuzz_deflater *d) {
  if (d->ready) deflateEnd(&d->zs);
  d->ready = 0;
}

void fuzz_deflate(fuzz_deflater *d, const void *in, size_t len, int flush, fuzz_buf *out) {
  static const uint8_t nothing[1] = {0};
  if (!d->ready) fuzz_fail("fuzz_deflate on a freed deflater");
  d->zs.next_in = (Bytef *)(len > 0 ? in : nothing);
  d->zs.avail_in = (uInt)len;
  for (;;) {
    buf_reserve(out, 4096);
    d->zs.next_out = out->data + out->len;
    d->zs.avail_out = (uInt)(out->cap - out->len);
    uInt before = d->zs.avail_out;
    int rv = deflate(&d->zs, flush);
    out->len += before - d->zs.avail_out;
    if (rv == Z_STREAM_END) {
      /* After Z_FINISH the stream is over; start a fresh one for later blocks. */
      deflateReset(&d->zs);
      break;
    }
    if (rv != Z_OK && rv != Z_BUF_ERROR) fuzz_fail("deflate: %d", rv);
    if (d->zs.avail_in == 0 && d->zs.avail_out > 0) break;
  }
}

/* ---- frame builders ------------------------------------------------------------------- */

void fuzz_control_header(fuzz_buf *b, unsigned version, unsigned type, uint8_t flags,
                         uint32_t length) {
  fuzz_put_u16(b, (uint16_t)(0x8000u | (version & 0x7fffu)));
  fuzz_put_u16(b, (uint16_t)type);
  fuzz_put_u8(b, flags);
  fuzz_put_u24(b, length & 0xffffffu);
}

void fuzz_data_header(fuzz_buf *b, uint32_t stream_id, uint8_t flags, uint32_t length) {
  fuzz_put_u32(b, stream_id & 0x7fffffffu);
  fuzz_put_u8(b, flags);
  fuzz_put_u24(b, length & 0xffffffu);
}

void fuzz_nv_length(fuzz_buf *b, unsigned version, uint32_t v) {
  if (version == 2)
    fuzz_put_u16(b, (uint16_t)v);
  else
    fuzz_put_u32(b, v);
}

void fuzz_nv_string(fuzz_buf *b, unsigned version, const void *bytes, size_t len) {
  fuzz_nv_length(b, version, (uint32_t)len);
  fuzz_put(b, bytes, len);
}

void fuzz_syn_stream(fuzz_buf *b, unsigned version, uint8_t flags, uint32_t stream_id,
                     uint32_t associated_id, uint8_t priority_byte, uint8_t slot,
                     const fuzz_buf *block) {
  size_t block_len = block != NULL ? block->len : 0;
  if (block_len > 0xffffff - 10) block_len = 0xffffff - 10;
  fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_SYN_STREAM, flags, (uint32_t)(10 + block_len));
  fuzz_put_u32(b, stream_id);
  fuzz_put_u32(b, associated_id);
  fuzz_put_u8(b, priority_byte);
  fuzz_put_u8(b, slot);
  if (block_len > 0) fuzz_put(b, block->data, block_len);
}

void fuzz_stream_headers(fuzz_buf *b, unsigned version, unsigned type, uint8_t flags,
                         uint32_t stream_id, const fuzz_buf *block) {
  size_t fixed = version == 2 ? 6 : 4;
  size_t block_len = block != NULL ? block->len : 0;
  if (block_len > 0xffffff - fixed) block_len = 0xffffff - fixed;
  fuzz_control_header(b, version, type, flags, (uint32_t)(fixed + block_len));
  fuzz_put_u32(b, stream_id);
  if (version == 2) fuzz_put_u16(b, 0);
  if (block_len > 0) fuzz_put(b, block->data, block_len);
}

/* ---- replay --------------------------------------------------------------------------- */

static size_t replay_count;

static void replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) fuzz_fail("cannot open %s", path);
  fuzz_buf content = {0};
  uint8_t chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) fuzz_put(&content, chunk, n);
  int error = ferror(f);
  fclose(f);
  if (error) fuzz_fail("cannot read %s", path);
  /* libFuzzer hands over a buffer of exactly the input's size; do the same so ASan sees
   * reads past its end. */
  uint8_t *exact = malloc(content.len > 0 ? content.len : 1);
  if (exact == NULL) fuzz_fail("out of memory");
  if (content.len > 0) memcpy(exact, content.data, content.len);
  fprintf(stderr, "replay: %s (%zu bytes)\n", path, content.len);
  LLVMFuzzerTestOneInput(exact, content.len);
  free(exact);
  fuzz_buf_free(&content);
  replay_count++;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_path(const char *path, int depth) {
  struct stat st;
  if (stat(path, &st) != 0) fuzz_fail("cannot stat %s", path);
  if (S_ISREG(st.st_mode)) {
    replay_file(path);
    return;
  }
  if (!S_ISDIR(st.st_mode) || depth > 4) return;
  DIR *dir = opendir(path);
  if (dir == NULL) fuzz_fail("cannot open directory %s", path);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue; /* ., .., .gitkeep and friends */
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(names, cap * sizeof(*names));
      if (grown == NULL) fuzz_fail("out of memory");
      names = grown;
    }
    size_t len = strlen(path) + 1 + strlen(entry->d_name) + 1;
    names[n] = malloc(len);
    if (names[n] == NULL) fuzz_fail("out of memory");
    snprintf(names[n], len, "%s/%s", path, entry->d_name);
    n++;
  }
  closedir(dir);
  if (n > 1) qsort(names, n, sizeof(*names), compare_names);
  for (size_t i = 0; i < n; i++) {
    replay_path(names[i], depth + 1);
    free(names[i]);
  }
  free(names);
}

int fuzz_replay_main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++) replay_path(argv[i], 0);
  printf("%s: %zu inputs replayed without a finding\n", argv[0], replay_count);
  return 0;
}
