/* test_interop_corpus.c — decodes the byte streams node's spdy-transport wrote (the .bin
 * files of tests/interop/corpus/, made by record-corpus.sh with a node client and a node
 * server talking to each other) with speedy's engine in the receiving role. Needs no node.
 *
 * File names are spdy<2|3|31>-<scenario>-<client|server>.bin, named after the end that
 * wrote them: a client's bytes are fed to a speedy server, a server's bytes to a speedy
 * client that first opens the streams the file answers. Each file must decode without
 * an error, a GOAWAY or a RST_STREAM from us, with every header block and every DATA byte
 * delivered; fed one byte at a time it must give exactly the same events.
 */
#define _GNU_SOURCE

#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speedy/speedy.h"

#ifndef INTEROP_SOURCE_DIR
#define INTEROP_SOURCE_DIR "."
#endif

#define MAX_TRACKED_STREAMS 64

/* What the running test holds, released by the fixture when an assertion ends it. */
static uint8_t *current_bytes;
static speedy_session *current_session;

static void release_current(void) {
  free(current_bytes);
  current_bytes = NULL;
  if (current_session) speedy_session_del(current_session);
  current_session = NULL;
}

static const char *corpus_dir(void) {
  static char dir[4096];
  const char *source = getenv("SPEEDY_SOURCE_DIR");
  snprintf(dir, sizeof dir, "%s/tests/interop/corpus",
           source && *source ? source : INTEROP_SOURCE_DIR);
  return dir;
}

static uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  cr_assert_not_null(f, "cannot open %s", path);
  cr_assert_eq(fseek(f, 0, SEEK_END), 0);
  long size = ftell(f);
  cr_assert(size > 0 && size < 1024 * 1024, "%s: unexpected size %ld", path, size);
  rewind(f);
  uint8_t *bytes = malloc((size_t)size);
  cr_assert_not_null(bytes);
  current_bytes = bytes;
  cr_assert_eq(fread(bytes, 1, (size_t)size, f), (size_t)size, "%s: short read", path);
  fclose(f);
  *len = (size_t)size;
  return bytes;
}

/* ---- What the file holds, by its frame headers ------------------------------------ */

typedef struct stream_bytes {
  int32_t id;
  uint64_t bytes;
  uint32_t fnv;
} stream_bytes;

typedef struct file_facts {
  size_t control_frames;
  size_t header_blocks; /* SYN_STREAM, SYN_REPLY, HEADERS */
  int32_t max_odd_id;   /* highest client-initiated stream id mentioned */
  stream_bytes data[MAX_TRACKED_STREAMS];
  size_t n_data;
} file_facts;

static stream_bytes *stream_slot(stream_bytes *slots, size_t *n, int32_t id) {
  for (size_t i = 0; i < *n; i++) {
    if (slots[i].id == id) return &slots[i];
  }
  cr_assert_lt(*n, (size_t)MAX_TRACKED_STREAMS, "too many streams");
  slots[*n] = (stream_bytes){.id = id, .bytes = 0, .fnv = 0x811c9dc5u};
  return &slots[(*n)++];
}

static uint32_t fnv1a(uint32_t h, const uint8_t *p, size_t len) {
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= 0x01000193u;
  }
  return h;
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Walks the frames of a recorded stream (the framing is the same in every version). */
static void scan_file(const char *name, const uint8_t *bytes, size_t len, file_facts *facts) {
  size_t at = 0;
  memset(facts, 0, sizeof *facts);
  while (len - at >= 8) {
    const uint8_t *h = bytes + at;
    uint32_t length = (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
    cr_assert_leq(length, len - at - 8, "%s: frame at %zu runs past the end", name, at);
    const uint8_t *payload = h + 8;
    int32_t mentioned = 0;
    if (h[0] & 0x80) {
      unsigned type = (unsigned)h[2] << 8 | h[3];
      facts->control_frames++;
      if (type == 1 || type == 2 || type == 8) facts->header_blocks++;
      if ((type == 2 || type == 3 || type == 8 || type == 9) && length >= 4) {
        mentioned = (int32_t)(be32(payload) & 0x7fffffff);
      }
      if (type == 1 && length >= 8) mentioned = (int32_t)(be32(payload + 4) & 0x7fffffff);
    } else {
      mentioned = (int32_t)(be32(h) & 0x7fffffff);
      stream_bytes *s = stream_slot(facts->data, &facts->n_data, mentioned);
      s->bytes += length;
      s->fnv = fnv1a(s->fnv, payload, length);
    }
    if (mentioned % 2 == 1 && mentioned > facts->max_odd_id) facts->max_odd_id = mentioned;
    at += 8 + (size_t)length;
  }
  cr_assert_eq(at, len, "%s: %zu bytes after the last whole frame", name, len - at);
}

/* ---- Decoding -------------------------------------------------------------------- */

typedef struct decode_log {
  char events[32768]; /* every event but DATA chunks, in order */
  size_t used;
  int overflow;
  stream_bytes data[MAX_TRACKED_STREAMS];
  size_t n_data;
  size_t header_blocks;
  size_t control_frames_received;
  char sent_errors[1024]; /* RST_STREAM and GOAWAY frames we sent */
} decode_log;

static void log_event(decode_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_event(decode_log *log, const char *fmt, ...) {
  va_list ap;
  if (log->used + 1 >= sizeof log->events) {
    log->overflow = 1;
    return;
  }
  va_start(ap, fmt);
  int n = vsnprintf(log->events + log->used, sizeof log->events - log->used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof log->events - log->used) {
    log->overflow = 1;
    log->used = sizeof log->events - 1;
    return;
  }
  log->used += (size_t)n;
}

static int on_begin_headers(speedy_session *s, int32_t id, speedy_headers_kind kind, int32_t assoc,
                            void *user) {
  (void)s;
  decode_log *log = user;
  log->header_blocks++;
  log_event(log, "begin_headers %d kind=%d assoc=%d\n", (int)id, (int)kind, (int)assoc);
  return 0;
}

static int on_header(speedy_session *s, int32_t id, const speedy_header *h, void *user) {
  (void)s;
  log_event(user, "header %d %.*s: %.*s\n", (int)id, (int)h->name_len, h->name, (int)h->value_len,
            h->value);
  return 0;
}

static int on_headers_end(speedy_session *s, int32_t id, int end_stream, void *user) {
  (void)s;
  log_event(user, "headers_end %d fin=%d\n", (int)id, end_stream);
  return 0;
}

static int on_data_chunk(speedy_session *s, int32_t id, const uint8_t *data, size_t len,
                         void *user) {
  (void)s;
  decode_log *log = user;
  stream_bytes *slot = stream_slot(log->data, &log->n_data, id);
  slot->bytes += len;
  slot->fnv = fnv1a(slot->fnv, data, len);
  return 0;
}

static int on_data_end(speedy_session *s, int32_t id, void *user) {
  (void)s;
  log_event(user, "data_end %d\n", (int)id);
  return 0;
}

static int on_stream_close(speedy_session *s, int32_t id, uint32_t status, void *user) {
  (void)s;
  log_event(user, "close %d %s\n", (int)id, speedy_rst_status_name(status));
  return 0;
}

static int on_ping_ack(speedy_session *s, uint32_t id, int64_t rtt, void *user) {
  (void)s;
  (void)rtt;
  log_event(user, "ping_ack %u\n", id);
  return 0;
}

static int on_goaway(speedy_session *s, int32_t last_good, uint32_t status, void *user) {
  (void)s;
  log_event(user, "goaway last_good=%d status=%u\n", (int)last_good, status);
  return 0;
}

static int on_setting(speedy_session *s, uint32_t id, uint8_t flags, uint32_t value, void *user) {
  (void)s;
  log_event(user, "setting %u flags=%u value=%u\n", id, flags, value);
  return 0;
}

static void on_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user) {
  (void)s;
  decode_log *log = user;
  if (type == SPEEDY_SPDY_FRAME_DATA) return; /* chunking differs byte by byte */
  if (!sent) {
    log->control_frames_received++;
    log_event(log, "recv %s flags=%u stream=%d length=%u %s\n", speedy_spdy_frame_type_name(type),
              flags, (int)id, length, summary ? summary : "");
  } else if (type == SPEEDY_SPDY_FRAME_RST_STREAM || type == SPEEDY_SPDY_FRAME_GOAWAY) {
    size_t used = strlen(log->sent_errors);
    snprintf(log->sent_errors + used, sizeof log->sent_errors - used, "  sent %s stream=%d %s\n",
             speedy_spdy_frame_type_name(type), (int)id, summary ? summary : "");
  }
}

static void drain_output(speedy_session *session, const char *name) {
  static uint8_t sink[65536];
  for (;;) {
    int64_t n = speedy_session_send(session, sink, sizeof sink);
    cr_assert_geq(n, 0, "%s: speedy_session_send: %s", name, speedy_strerror((int)n));
    if (n == 0) return;
  }
}

/* Feeds bytes to a fresh session in steps of `step` bytes. */
static void decode(const char *name, const uint8_t *bytes, size_t len, speedy_protocol protocol,
                   speedy_role role, const file_facts *facts, size_t step, decode_log *log) {
  speedy_callbacks *callbacks = NULL;
  speedy_session *session = NULL;
  memset(log, 0, sizeof *log);
  cr_assert_eq(speedy_callbacks_new(&callbacks), 0);
  speedy_callbacks_set_on_begin_headers(callbacks, on_begin_headers);
  speedy_callbacks_set_on_header(callbacks, on_header);
  speedy_callbacks_set_on_headers_end(callbacks, on_headers_end);
  speedy_callbacks_set_on_data_chunk(callbacks, on_data_chunk);
  speedy_callbacks_set_on_data_end(callbacks, on_data_end);
  speedy_callbacks_set_on_stream_close(callbacks, on_stream_close);
  speedy_callbacks_set_on_ping_ack(callbacks, on_ping_ack);
  speedy_callbacks_set_on_goaway(callbacks, on_goaway);
  speedy_callbacks_set_on_setting(callbacks, on_setting);
  speedy_callbacks_set_on_frame(callbacks, on_frame);
  int rc = speedy_session_new(&session, protocol, role, callbacks, NULL, log);
  speedy_callbacks_del(callbacks);
  cr_assert_eq(rc, 0, "speedy_session_new: %s", speedy_strerror(rc));
  current_session = session;

  /* A client must have opened the streams the recorded server answers: GETs, whose ids
   * (1, 3, 5, ...) match what node's client used. */
  if (role == SPEEDY_ROLE_CLIENT) {
    const speedy_header headers[] = {
        {":method", 7, "GET", 3},       {":path", 5, "/", 1},
        {":version", 8, "HTTP/1.1", 8}, {":host", 5, "interop.test", 12},
        {":scheme", 7, "https", 5},
    };
    for (int32_t id = 1; id <= facts->max_odd_id; id += 2) {
      int32_t got = speedy_submit_request(session, 3, headers, 5, NULL, NULL, NULL);
      cr_assert_eq(got, id, "%s: speedy_submit_request gave stream %d, expected %d", name, (int)got,
                   (int)id);
    }
  }
  drain_output(session, name);
  log->sent_errors[0] = '\0';

  for (size_t at = 0; at < len;) {
    size_t n = len - at < step ? len - at : step;
    int64_t used = speedy_session_recv(session, bytes + at, n);
    cr_assert_eq(used, (int64_t)n,
                 "%s: speedy_session_recv returned %lld (%s) for bytes %zu..%zu of %zu\n"
                 "events so far:\n%s",
                 name, (long long)used, used < 0 ? speedy_strerror((int)used) : "short count", at,
                 at + n, len, log->events);
    at += n;
    drain_output(session, name);
  }
  for (size_t i = 0; i < log->n_data; i++) {
    log_event(log, "data %d bytes=%" PRIu64 " fnv=%08" PRIx32 "\n", (int)log->data[i].id,
              log->data[i].bytes, log->data[i].fnv);
  }
  speedy_session_del(session);
  current_session = NULL;
}

static void parse_name(const char *version, const char *producer, speedy_protocol *protocol,
                       speedy_role *role) {
  *protocol = strcmp(version, "2") == 0   ? SPEEDY_PROTOCOL_SPDY2
              : strcmp(version, "3") == 0 ? SPEEDY_PROTOCOL_SPDY3
                                          : SPEEDY_PROTOCOL_SPDY3_1;
  /* The file holds what node's <producer> wrote: speedy plays the other role. */
  *role = strcmp(producer, "client") == 0 ? SPEEDY_ROLE_SERVER : SPEEDY_ROLE_CLIENT;
}

static decode_log whole_log, byte_log;

static void decodes_cleanly(const char *version, const char *scenario, const char *producer) {
  char path[4096 + 256], name[128];
  speedy_protocol protocol;
  speedy_role role;
  file_facts facts;
  size_t len;
  snprintf(name, sizeof name, "spdy%s-%s-%s.bin", version, scenario, producer);
  snprintf(path, sizeof path, "%s/%s", corpus_dir(), name);
  parse_name(version, producer, &protocol, &role);
  uint8_t *bytes = read_file(path, &len);
  scan_file(name, bytes, len, &facts);
  decode(name, bytes, len, protocol, role, &facts, len, &whole_log);
  cr_expect_str_empty(whole_log.sent_errors, "%s: speedy answered with errors:\n%s\nevents:\n%s",
                      name, whole_log.sent_errors, whole_log.events);
  cr_expect_eq(whole_log.control_frames_received, facts.control_frames,
               "%s: %zu control frames in the file, %zu reported by on_frame", name,
               facts.control_frames, whole_log.control_frames_received);
  cr_expect_eq(whole_log.header_blocks, facts.header_blocks,
               "%s: %zu header blocks in the file, %zu reported by on_begin_headers", name,
               facts.header_blocks, whole_log.header_blocks);
  for (size_t i = 0; i < facts.n_data; i++) {
    const stream_bytes *want = &facts.data[i];
    const stream_bytes *got = NULL;
    for (size_t j = 0; j < whole_log.n_data; j++) {
      if (whole_log.data[j].id == want->id) got = &whole_log.data[j];
    }
    if (want->bytes == 0) continue;
    cr_expect(got && got->bytes == want->bytes && got->fnv == want->fnv,
              "%s: stream %d carries %" PRIu64 " DATA bytes (fnv %08" PRIx32 "), on_data_chunk "
              "delivered %" PRIu64 " (fnv %08" PRIx32 ")",
              name, (int)want->id, want->bytes, want->fnv, got ? got->bytes : 0,
              got ? got->fnv : 0);
  }
  release_current();
}

static void same_byte_by_byte(const char *version, const char *scenario, const char *producer) {
  char path[4096 + 256], name[128];
  speedy_protocol protocol;
  speedy_role role;
  file_facts facts;
  size_t len;
  snprintf(name, sizeof name, "spdy%s-%s-%s.bin", version, scenario, producer);
  snprintf(path, sizeof path, "%s/%s", corpus_dir(), name);
  parse_name(version, producer, &protocol, &role);
  uint8_t *bytes = read_file(path, &len);
  scan_file(name, bytes, len, &facts);
  decode(name, bytes, len, protocol, role, &facts, len, &whole_log);
  decode(name, bytes, len, protocol, role, &facts, 1, &byte_log);
  cr_assert(!whole_log.overflow && !byte_log.overflow, "%s: event log overflowed", name);
  cr_expect_str_eq(byte_log.events, whole_log.events,
                   "%s: one byte at a time gave other events.\nwhole buffer:\n%s\nbyte by "
                   "byte:\n%s",
                   name, whole_log.events, byte_log.events);
  release_current();
}

#define CORPUS_FILE(v, scenario, producer)                                                         \
  Test(corpus_spdy##v, scenario##_from_node_##producer##_decodes_cleanly,                          \
       .fini = release_current) {                                                                  \
    decodes_cleanly(#v, #scenario, #producer);                                                     \
  }                                                                                                \
  Test(corpus_spdy##v, scenario##_from_node_##producer##_same_events_byte_by_byte,                 \
       .fini = release_current) {                                                                  \
    same_byte_by_byte(#v, #scenario, #producer);                                                   \
  }

#define CORPUS_SCENARIO(scenario)                                                                  \
  CORPUS_FILE(2, scenario, client)                                                                 \
  CORPUS_FILE(2, scenario, server)                                                                 \
  CORPUS_FILE(3, scenario, client)                                                                 \
  CORPUS_FILE(3, scenario, server)                                                                 \
  CORPUS_FILE(31, scenario, client)                                                                \
  CORPUS_FILE(31, scenario, server)

CORPUS_SCENARIO(get)
CORPUS_SCENARIO(post)
CORPUS_SCENARIO(push)
CORPUS_SCENARIO(settings)
CORPUS_SCENARIO(ping)
CORPUS_SCENARIO(goaway_client)
CORPUS_SCENARIO(goaway_server)

/* Every recorded file is one of the above: a new recording without a test would be
 * silently ignored. */
Test(corpus, every_recorded_file_is_decoded_by_a_test) {
  static const char *const scenarios[] = {"get",  "post",          "push",         "settings",
                                          "ping", "goaway_client", "goaway_server"};
  DIR *dir = opendir(corpus_dir());
  cr_assert_not_null(dir, "cannot open %s", corpus_dir());
  size_t files = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    const char *n = entry->d_name;
    size_t len = strlen(n);
    if (len < 4 || strcmp(n + len - 4, ".bin") != 0) continue;
    files++;
    int known = 0;
    for (size_t s = 0; s < sizeof scenarios / sizeof scenarios[0] && !known; s++) {
      const char *versions[] = {"2", "3", "31"};
      const char *producers[] = {"client", "server"};
      for (size_t v = 0; v < 3; v++) {
        for (size_t p = 0; p < 2; p++) {
          char want[128];
          snprintf(want, sizeof want, "spdy%s-%s-%s.bin", versions[v], scenarios[s], producers[p]);
          if (strcmp(want, n) == 0) known = 1;
        }
      }
    }
    cr_expect(known, "%s/%s has no test in test_interop_corpus.c", corpus_dir(), n);
  }
  closedir(dir);
  cr_expect_eq(files, 42, "expected 42 recordings, found %zu", files);
}
