/* gen_h2_corpus.c — writes the seed corpora of the HTTP/2 harnesses (tests/fuzz/corpus/
 * h2_server/ and h2_client/).
 *
 *   fuzz_gen_h2_corpus OUT_DIR
 *
 * Seeds are what a peer sends in real exchanges — our client's and our server's bytes,
 * recorded from sessions talking in memory (requests of every shape, bodies, priorities,
 * pushes, trailers, 103, settings changes, PING, GOAWAY) — and frames built here from
 * RFC 9113's text that our sessions never send (padding, PRIORITY, CONTINUATION split
 * small, unknown types), each behind the harness's configuration bytes. The output is
 * deterministic; rerun it when an input format changes.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "hpack.h"

static const char *out_dir;

static void write_seed(const char *harness, const char *name, const uint8_t *config,
                       size_t n_config, const fuzz_buf *b) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", out_dir, harness);
  if (mkdir(path, 0777) != 0 && errno != EEXIST) fuzz_fail("cannot create %s", path);
  snprintf(path, sizeof(path), "%s/%s/%s", out_dir, harness, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) fuzz_fail("cannot write %s", path);
  if (fwrite(config, 1, n_config, f) != n_config) fuzz_fail("short write %s", path);
  if (b->len > 0 && fwrite(b->data, 1, b->len, f) != b->len) fuzz_fail("short write %s", path);
  if (fclose(f) != 0) fuzz_fail("cannot close %s", path);
}

/* ---- recorded exchanges ---------------------------------------------------------------- */

static size_t bodies_left[64];

static int64_t read_body(speedy_session *s, int32_t id, uint8_t *buf, size_t len, uint32_t *flags,
                         void *source, void *user) {
  (void)s, (void)user;
  size_t *left = source;
  size_t n = *left < len ? *left : len;
  for (size_t i = 0; i < n; i++) buf[i] = fuzz_pattern_byte(id, i);
  *left -= n;
  if (*left == 0) *flags |= SPEEDY_DATA_FLAG_EOF;
  return (int64_t)n;
}

typedef struct scenario {
  int push, trailers, hints, goaway;
  size_t body;
} scenario;

static scenario current;

static int64_t read_then_trailers(speedy_session *s, int32_t id, uint8_t *buf, size_t len,
                                  uint32_t *flags, void *source, void *user) {
  int64_t n = read_body(s, id, buf, len, flags, source, user);
  if (*flags & SPEEDY_DATA_FLAG_EOF) {
    static const speedy_header t[] = {{"x-checksum", 10, "42", 2}};
    *flags |= SPEEDY_DATA_FLAG_NO_END_STREAM;
    (void)speedy_submit_headers(s, id, t, 1, 1);
  }
  return n;
}

static int server_headers_end(speedy_session *s, int32_t id, int fin, void *user) {
  (void)user;
  if (!fin || speedy_session_role(s) != SPEEDY_ROLE_SERVER) return 0;
  static const speedy_header hints[] = {{":status", 7, "103", 3},
                                        {"link", 4, "</a>; rel=preload", 17}};
  static const speedy_header head[] = {{":status", 7, "200", 3},
                                       {"content-type", 12, "text/html", 9}};
  static const speedy_header pushed[] = {{":scheme", 7, "https", 5},
                                         {":authority", 10, "fuzz.test", 9},
                                         {":path", 5, "/style.css", 10}};
  if (current.hints) (void)speedy_submit_headers(s, id, hints, 2, 0);
  if (current.push && id == 1) {
    bodies_left[63] = 300;
    (void)speedy_submit_push(s, id, 1, pushed, 3, head, 2, read_body, &bodies_left[63], NULL);
  }
  bodies_left[id / 2 % 60] = current.body;
  (void)speedy_submit_response(
      s, id, head, 2, current.body > 0 ? (current.trailers ? read_then_trailers : read_body) : NULL,
      &bodies_left[id / 2 % 60]);
  return 0;
}

/* Our client (n requests as fuzz_h2_client opens them, the first with a body of post
 * octets) and our server talk; the client's bytes after its preface and the server's
 * bytes are recorded. */
static void record(scenario sc, uint32_t n_requests, size_t post, fuzz_buf *client_bytes,
                   fuzz_buf *server_bytes) {
  current = sc;
  speedy_callbacks *cb;
  speedy_callbacks_new(&cb);
  speedy_callbacks_set_on_headers_end(cb, server_headers_end);
  speedy_session *client, *server;
  if (speedy_session_new(&client, SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_CLIENT, cb, NULL, NULL) != 0 ||
      speedy_session_new(&server, SPEEDY_PROTOCOL_H2, SPEEDY_ROLE_SERVER, cb, NULL, NULL) != 0)
    fuzz_fail("sessions");
  speedy_callbacks_del(cb);
  static const speedy_header get[] = {{":method", 7, "GET", 3},
                                      {":scheme", 7, "https", 5},
                                      {":authority", 10, "fuzz.test", 9},
                                      {":path", 5, "/", 1}};
  static const speedy_header up[] = {{":method", 7, "POST", 4},
                                     {":scheme", 7, "https", 5},
                                     {":authority", 10, "fuzz.test", 9},
                                     {":path", 5, "/up", 3}};
  static size_t post_left;
  post_left = post;
  for (uint32_t i = 0; i < n_requests; i++)
    speedy_submit_request(client, (int)(i % 8), i == 0 && post > 0 ? up : get, 4,
                          i == 0 && post > 0 ? read_body : NULL, &post_left, NULL);
  uint8_t buf[16384];
  int skipped = 0;
  for (int round = 0; round < 10000; round++) {
    int moved = 0;
    int64_t n;
    while ((n = speedy_session_send(client, buf, sizeof(buf))) > 0) {
      size_t skip = skipped ? 0 : 24; /* the preface: the harness sends it */
      skipped = 1;
      fuzz_put(client_bytes, buf + skip, (size_t)n - skip);
      if (speedy_session_recv(server, buf, (size_t)n) < 0) fuzz_fail("server recv");
      moved = 1;
    }
    while ((n = speedy_session_send(server, buf, sizeof(buf))) > 0) {
      fuzz_put(server_bytes, buf, (size_t)n);
      if (speedy_session_recv(client, buf, (size_t)n) < 0) fuzz_fail("client recv");
      moved = 1;
    }
    if (!moved) break;
    if (round == 2 && sc.goaway) {
      (void)speedy_submit_ping(client, NULL);
      (void)speedy_submit_goaway(server, SPEEDY_RST_NONE, NULL, 0);
    }
  }
  speedy_session_del(client);
  speedy_session_del(server);
}

/* ---- frames from the RFC's text --------------------------------------------------------- */

static void frame(fuzz_buf *b, uint32_t len, uint8_t type, uint8_t flags, uint32_t id) {
  fuzz_put_u24(b, len);
  fuzz_put_u8(b, type);
  fuzz_put_u8(b, flags);
  fuzz_put_u32(b, id);
}

static size_t block_of(speedy_hpack_encoder *e, const char *const *f, size_t n, uint8_t *out) {
  speedy_hpack_field list[8];
  for (size_t i = 0; i < n; i++)
    list[i] = (speedy_hpack_field){(const uint8_t *)f[2 * i], strlen(f[2 * i]),
                                   (const uint8_t *)f[2 * i + 1], strlen(f[2 * i + 1]), 0};
  int64_t len = speedy_hpack_encode(e, list, n, out, 1024);
  if (len < 0) fuzz_fail("encode");
  return (size_t)len;
}

static void *plain_malloc(size_t n, void *u) {
  (void)u;
  return malloc(n);
}
static void *plain_realloc(void *p, size_t n, void *u) {
  (void)u;
  return realloc(p, n);
}
static void plain_free(void *p, void *u) {
  (void)u;
  free(p);
}

/* A client's frames of every type our client never sends that way. */
static void built_client_frames(fuzz_buf *b) {
  speedy_mem mem = {plain_malloc, plain_realloc, plain_free, NULL, 0};
  speedy_hpack_encoder *e;
  speedy_hpack_encoder_new(&mem, &e);
  uint8_t block[1024];
  static const char *const req[] = {":method", "POST",  ":scheme", "https",    ":authority",
                                    "a",       ":path", "/x",      "priority", "u=1, i"};
  frame(b, 12, 0x4, 0, 0); /* SETTINGS: INITIAL_WINDOW_SIZE, an unknown one */
  fuzz_put_u16(b, 4), fuzz_put_u32(b, 100000), fuzz_put_u16(b, 0x7777), fuzz_put_u32(b, 1);
  frame(b, 0, 0x4, 1, 0); /* SETTINGS ACK */
  size_t n = block_of(e, req, 5, block);
  size_t half = n / 2;
  frame(b, (uint32_t)(1 + 5 + half + 3), 0x1, 0x8 | 0x20, 1); /* padded, PRIORITY */
  fuzz_put_u8(b, 3), fuzz_put_u32(b, 0x80000000u), fuzz_put_u8(b, 16);
  fuzz_put(b, block, half), fuzz_put_fill(b, 0, 3);
  frame(b, (uint32_t)(n - half), 0x9, 0x4, 1); /* CONTINUATION */
  fuzz_put(b, block + half, n - half);
  frame(b, 5, 0x2, 0, 3); /* PRIORITY on an idle stream */
  fuzz_put_u32(b, 1), fuzz_put_u8(b, 200);
  frame(b, 1 + 10 + 20, 0x0, 0x8, 1); /* padded DATA */
  fuzz_put_u8(b, 20), fuzz_put(b, "0123456789", 10), fuzz_put_fill(b, 0, 20);
  frame(b, 4 + 3, 0x10, 0, 0); /* PRIORITY_UPDATE */
  fuzz_put_u32(b, 1), fuzz_put(b, "u=0", 3);
  frame(b, 8, 0x6, 0, 0), fuzz_put(b, "ping-me!", 8);
  frame(b, 4, 0x8, 0, 0), fuzz_put_u32(b, 1000);
  frame(b, 4, 0x8, 0, 1), fuzz_put_u32(b, 1000);
  frame(b, 3, 0xfa, 0xff, 5), fuzz_put(b, "???", 3); /* unknown type */
  static const char *const trailer[] = {"x-sum", "1"};
  n = block_of(e, trailer, 1, block);
  frame(b, (uint32_t)n, 0x1, 0x5, 1); /* trailers */
  fuzz_put(b, block, n);
  static const char *const second[] = {":method",    "GET", ":scheme", "https",
                                       ":authority", "a",   ":path",   "/y"};
  n = block_of(e, second, 4, block);
  frame(b, (uint32_t)n, 0x1, 0x5, 3);
  fuzz_put(b, block, n);
  frame(b, 4, 0x3, 0, 3), fuzz_put_u32(b, 8); /* RST_STREAM CANCEL */
  frame(b, 8 + 4, 0x7, 0, 0), fuzz_put_u32(b, 0), fuzz_put_u32(b, 0), fuzz_put(b, "done", 4);
  speedy_hpack_encoder_del(e);
}

/* A server's frames our server never sends that way: padding, small CONTINUATIONs. */
static void built_server_frames(fuzz_buf *b) {
  speedy_mem mem = {plain_malloc, plain_realloc, plain_free, NULL, 0};
  speedy_hpack_encoder *e;
  speedy_hpack_encoder_new(&mem, &e);
  uint8_t block[1024];
  frame(b, 18, 0x4, 0, 0); /* SETTINGS */
  fuzz_put_u16(b, 3), fuzz_put_u32(b, 10), fuzz_put_u16(b, 5), fuzz_put_u32(b, 20000);
  fuzz_put_u16(b, 1), fuzz_put_u32(b, 0);
  frame(b, 0, 0x4, 1, 0);
  static const char *const promise[] = {":method",    "GET",       ":scheme", "https",
                                        ":authority", "fuzz.test", ":path",   "/p"};
  size_t n = block_of(e, promise, 4, block);
  frame(b, (uint32_t)(1 + 4 + n + 2), 0x5, 0x4 | 0x8, 1); /* padded PUSH_PROMISE */
  fuzz_put_u8(b, 2), fuzz_put_u32(b, 2), fuzz_put(b, block, n), fuzz_put_fill(b, 0, 2);
  static const char *const resp[] = {":status", "200", "content-length", "5"};
  n = block_of(e, resp, 2, block);
  for (size_t i = 0; i < n; i++) /* a CONTINUATION per octet */
    frame(b, 1, i == 0 ? 0x1 : 0x9, i + 1 == n ? 0x4 : 0, 1), fuzz_put_u8(b, block[i]);
  frame(b, 5, 0x0, 0x1, 1), fuzz_put(b, "hello", 5);
  static const char *const hints[] = {":status", "103", "link", "</x>"};
  n = block_of(e, hints, 2, block);
  frame(b, (uint32_t)n, 0x1, 0x4, 3), fuzz_put(b, block, n);
  n = block_of(e, resp, 2, block);
  frame(b, (uint32_t)n, 0x1, 0x4, 2), fuzz_put(b, block, n);
  frame(b, 1 + 5 + 7, 0x0, 0x1 | 0x8, 2), fuzz_put_u8(b, 7), fuzz_put(b, "world", 5);
  fuzz_put_fill(b, 0, 7);
  frame(b, 8, 0x6, 1, 0), fuzz_put_fill(b, 0, 4), fuzz_put_u32(b, 1); /* PING ACK of id 1 */
  frame(b, 8 + 3, 0x7, 0, 0), fuzz_put_u32(b, 1), fuzz_put_u32(b, 0xb), fuzz_put(b, "bye", 3);
  speedy_hpack_encoder_del(e);
}

/* fuzz_common.c's replay wants a harness; this program is none. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data, (void)size;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_gen_h2_corpus OUT_DIR\n");
    return 2;
  }
  out_dir = argv[1];
  static const struct {
    const char *name;
    scenario sc;
    uint32_t requests;
    size_t post;
    uint8_t server_cfg, client_cfg;
  } runs[] = {
      {"get", {0, 0, 0, 0, 100}, 1, 0, 0x21, 0x21},
      {"post-70000", {0, 0, 0, 0, 10}, 1, 70000, 0x41, 0x01},
      {"eight-streams", {0, 0, 0, 0, 1000}, 8, 0, 0x31, 0x01},
      {"push-hints-trailers", {1, 1, 1, 0, 2000}, 2, 0, 0x23, 0x21},
      {"goaway-ping", {0, 0, 0, 1, 5}, 3, 5, 0x61, 0x05},
      {"small-limits", {0, 0, 0, 0, 3000}, 4, 100, 0x49, 0x0d},
  };
  for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
    fuzz_buf c = {0}, s = {0};
    record(runs[i].sc, runs[i].requests, runs[i].post, &c, &s);
    uint8_t server_cfg[2] = {runs[i].server_cfg, (uint8_t)(i * 37)};
    uint8_t requests = (uint8_t)((runs[i].requests - 1) | (runs[i].post == 0     ? 0
                                                           : runs[i].post == 100 ? 2u << 3
                                                                                 : 4u << 3));
    if (runs[i].post == 5) requests = (uint8_t)((runs[i].requests - 1) | (6u << 3));
    if (runs[i].post == 10) requests = (uint8_t)(runs[i].requests - 1);
    uint8_t client_cfg[3] = {runs[i].client_cfg, requests, (uint8_t)(i * 53)};
    write_seed("h2_server", runs[i].name, server_cfg, 2, &c);
    write_seed("h2_client", runs[i].name, client_cfg, 3, &s);
    fuzz_buf_free(&c);
    fuzz_buf_free(&s);
  }
  fuzz_buf b = {0};
  built_client_frames(&b);
  write_seed("h2_server", "built-every-frame", (const uint8_t[]){0x03, 0}, 2, &b);
  write_seed("h2_server", "built-every-frame-small", (const uint8_t[]){0x0b, 6}, 2, &b);
  fuzz_buf_free(&b);
  built_server_frames(&b);
  write_seed("h2_client", "built-every-frame", (const uint8_t[]){0x01, 0x01, 0}, 3, &b);
  write_seed("h2_client", "built-every-frame-small", (const uint8_t[]){0x09, 0x01, 4}, 3, &b);
  fuzz_buf_free(&b);
  return 0;
}
