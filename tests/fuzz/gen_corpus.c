/* gen_corpus.c — writes the seed corpora of the fuzz harnesses (tests/fuzz/corpus/<name>/).
 *
 *   fuzz_gen_corpus OUT_DIR INTEROP_CORPUS_DIR
 *
 * Seeds are valid sessions of every version and frame type: the byte streams node's
 * spdy-transport wrote in the interop tests (the .bin files of tests/interop/corpus/) with the
 * harness's configuration bytes in front, frames built here with the peer's own header
 * compression, and programs for the structure-aware harnesses that use every operation
 * once. The output is deterministic; rerun it when an input format changes.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame.h"
#include "fuzz_common.h"

static const char *out_dir;
static size_t files_written, bytes_written;

static void write_seed(const char *harness, const char *name, const fuzz_buf *b) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", out_dir, harness);
  if (mkdir(path, 0777) != 0 && errno != EEXIST) fuzz_fail("cannot create %s", path);
  snprintf(path, sizeof(path), "%s/%s/%s", out_dir, harness, name);
  FILE *f = fopen(path, "wb");
  if (f == NULL) fuzz_fail("cannot write %s", path);
  if (b->len > 0 && fwrite(b->data, 1, b->len, f) != b->len) fuzz_fail("short write %s", path);
  if (fclose(f) != 0) fuzz_fail("cannot close %s", path);
  files_written++;
  bytes_written += b->len;
}

static void read_all(const char *path, fuzz_buf *out) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) fuzz_fail("cannot open %s", path);
  uint8_t chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) fuzz_put(out, chunk, n);
  fclose(f);
}

/* Highest odd stream id a recorded stream mentions (the requests a client must open). */
static uint32_t max_odd_id(const fuzz_buf *b) {
  uint32_t max = 0;
  size_t at = 0;
  while (b->len - at >= 8) {
    const uint8_t *h = b->data + at;
    uint32_t length = (uint32_t)h[5] << 16 | (uint32_t)h[6] << 8 | h[7];
    uint32_t id = 0;
    if (h[0] & 0x80) {
      unsigned type = (unsigned)h[2] << 8 | h[3];
      if ((type == 2 || type == 3 || type == 8 || type == 9) && length >= 4)
        id = ((uint32_t)h[8] << 24 | (uint32_t)h[9] << 16 | (uint32_t)h[10] << 8 | h[11]) &
             0x7fffffffu;
      if (type == 1 && length >= 8)
        id = ((uint32_t)h[12] << 24 | (uint32_t)h[13] << 16 | (uint32_t)h[14] << 8 | h[15]) &
             0x7fffffffu;
    } else {
      id = ((uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3]) & 0x7fffffffu;
    }
    if ((id & 1) && id > max) max = id;
    if (length > b->len - at - 8) break;
    at += 8 + (size_t)length;
  }
  return max;
}

static uint8_t version_index(const char *v) {
  return strcmp(v, "2") == 0 ? 0 : strcmp(v, "3") == 0 ? 1 : 2;
}

/* ---- seeds from the interop recordings ------------------------------------------------ */

static void from_recordings(const char *interop_dir) {
  DIR *dir = opendir(interop_dir);
  if (dir == NULL) fuzz_fail("cannot open %s", interop_dir);
  char **names = NULL;
  size_t n = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    size_t len = strlen(entry->d_name);
    if (len < 5 || strcmp(entry->d_name + len - 4, ".bin") != 0) continue;
    char **grown = realloc(names, (n + 1) * sizeof(*names));
    if (grown == NULL) fuzz_fail("out of memory");
    names = grown;
    names[n] = strdup(entry->d_name);
    if (names[n] == NULL) fuzz_fail("out of memory");
    n++;
  }
  closedir(dir);
  for (size_t i = 0; i < n; i++) {
    /* spdy<V>-<scenario>-<client|server>.bin */
    char name[256], version[256], scenario[256], producer[256];
    snprintf(name, sizeof(name), "%s", names[i]);
    name[strlen(name) - 4] = '\0';
    char *dash1 = strchr(name, '-');
    char *dash2 = strrchr(name, '-');
    if (dash1 == NULL || dash2 == NULL || dash1 == dash2) continue;
    *dash1 = '\0';
    *dash2 = '\0';
    snprintf(version, sizeof(version), "%s", name + 4);
    snprintf(scenario, sizeof(scenario), "%s", dash1 + 1);
    snprintf(producer, sizeof(producer), "%s", dash2 + 1);
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", interop_dir, names[i]);
    fuzz_buf rec = {0};
    read_all(path, &rec);
    uint8_t v = version_index(version);
    char seed[1024];
    snprintf(seed, sizeof(seed), "node-spdy%s-%s", version, scenario);
    fuzz_buf b = {0};
    if (strcmp(producer, "client") == 0) {
      /* Server harness: answer with a 100-byte body, manual flow control off. */
      fuzz_put_u8(&b, (uint8_t)(v | 1u << 2 | 2u << 5));
      fuzz_put(&b, rec.data, rec.len);
      write_seed("server", seed, &b);
      /* Split harness, raw mode, server role, cut in a few places. */
      b.len = 0;
      fuzz_put_u8(&b, (uint8_t)(v | 1u << 2));
      fuzz_put_u8(&b, 0);
      fuzz_put_u8(&b, 2);
      fuzz_put_u8(&b, 3);
      fuzz_put_u16(&b, 1);
      fuzz_put_u16(&b, 9);
      fuzz_put_u16(&b, (uint16_t)(rec.len / 2));
      fuzz_put(&b, rec.data, rec.len);
      write_seed("split", seed, &b);
    } else {
      uint32_t odd = max_odd_id(&rec);
      uint32_t requests = odd >= 1 ? (odd + 1) / 2 : 1;
      if (requests > 8) requests = 8;
      fuzz_put_u8(&b, v);
      fuzz_put_u8(&b, (uint8_t)(requests - 1));
      fuzz_put(&b, rec.data, rec.len);
      write_seed("client", seed, &b);
      b.len = 0;
      fuzz_put_u8(&b, v);
      fuzz_put_u8(&b, (uint8_t)(requests - 1));
      fuzz_put_u8(&b, 3); /* client, raw */
      fuzz_put_u8(&b, 2);
      fuzz_put_u16(&b, 5);
      fuzz_put_u16(&b, (uint16_t)(rec.len / 3));
      fuzz_put(&b, rec.data, rec.len);
      write_seed("split", seed, &b);
    }
    fuzz_buf_free(&b);
    fuzz_buf_free(&rec);
    free(names[i]);
  }
  free(names);
}

/* ---- frames built here: every frame type, every version -------------------------------- */

static void nv_pair(fuzz_buf *b, unsigned version, const char *name, const char *value) {
  fuzz_nv_string(b, version, name, strlen(name));
  fuzz_nv_string(b, version, value, strlen(value));
}

static void request_block(fuzz_buf *plain, unsigned version, const char *path) {
  int v2 = version == 2;
  fuzz_nv_length(plain, version, 6);
  nv_pair(plain, version, v2 ? "method" : ":method", "GET");
  nv_pair(plain, version, v2 ? "url" : ":path", path);
  nv_pair(plain, version, v2 ? "version" : ":version", "HTTP/1.1");
  nv_pair(plain, version, v2 ? "host" : ":host", "fuzz.test");
  nv_pair(plain, version, v2 ? "scheme" : ":scheme", "https");
  nv_pair(plain, version, "accept", "*/*");
}

static void response_block(fuzz_buf *plain, unsigned version) {
  int v2 = version == 2;
  fuzz_nv_length(plain, version, 3);
  nv_pair(plain, version, v2 ? "status" : ":status", v2 ? "200 OK" : "200");
  nv_pair(plain, version, v2 ? "version" : ":version", "HTTP/1.1");
  nv_pair(plain, version, "set-cookie", "a=1\0b=2"); /* strlen stops at NUL: one value */
}

static void compressed(fuzz_deflater *d, void (*fill)(fuzz_buf *, unsigned), unsigned version,
                       fuzz_buf *block) {
  fuzz_buf plain = {0};
  fill(&plain, version);
  fuzz_deflate(d, plain.data, plain.len, Z_SYNC_FLUSH, block);
  fuzz_buf_free(&plain);
}

static void settings_frame(fuzz_buf *b, unsigned version) {
  fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_SETTINGS, 0, 4 + 8 * 2);
  fuzz_put_u32(b, 2);
  if (version == 2) {
    uint8_t e1[4] = {4, 0, 0, 0}, e2[4] = {7, 0, 0, 0};
    fuzz_put(b, e1, 4);
    fuzz_put_u32(b, 100);
    fuzz_put(b, e2, 4);
    fuzz_put_u32(b, 65536);
  } else {
    fuzz_put_u8(b, 0);
    fuzz_put_u24(b, 4);
    fuzz_put_u32(b, 100);
    fuzz_put_u8(b, 0);
    fuzz_put_u24(b, 7);
    fuzz_put_u32(b, 131072);
  }
}

static void fixed_frames(fuzz_buf *b, unsigned version, speedy_protocol protocol, int from_client) {
  settings_frame(b, version);
  fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_PING, 0, 4);
  fuzz_put_u32(b, from_client ? 1 : 2);
  if (version >= 3) {
    fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, 0, 8);
    fuzz_put_u32(b, protocol == SPEEDY_PROTOCOL_SPDY3_1 ? 0 : 1);
    fuzz_put_u32(b, 4096);
  } else {
    fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_NOOP, 0, 0);
  }
  if (protocol == SPEEDY_PROTOCOL_SPDY3) {
    fuzz_control_header(b, version, SPEEDY_SPDY_FRAME_CREDENTIAL, 0, 2 + 4 + 3 + 4 + 2);
    fuzz_put_u16(b, 1);
    fuzz_put_u32(b, 3);
    fuzz_put(b, "abc", 3);
    fuzz_put_u32(b, 2);
    fuzz_put(b, "xy", 2);
  }
  fuzz_control_header(b, version, 0x77, 0, 3); /* an unknown type, skipped */
  fuzz_put(b, "???", 3);
}

static void built_sessions(void) {
  for (uint8_t v = 0; v < 3; v++) {
    speedy_protocol protocol = fuzz_protocol_of(v);
    unsigned version = fuzz_wire_version(protocol);
    char name[64];
    fuzz_deflater d;
    fuzz_buf b = {0}, block = {0}, frames = {0};

    /* To a server: GET with FIN, POST with a body, HEADERS, RST_STREAM, GOAWAY. */
    fuzz_deflater_init(&d, version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3, 6);
    fixed_frames(&frames, version, protocol, 1);
    fuzz_buf plain = {0};
    request_block(&plain, version, "/index.html");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_syn_stream(&frames, version, SPDY_FLAG_FIN, 1, 0, 0x40, 0, &block);
    block.len = plain.len = 0;
    request_block(&plain, version, "/upload");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_syn_stream(&frames, version, 0, 3, 0, 0x20, 0, &block);
    block.len = plain.len = 0;
    fuzz_nv_length(&plain, version, 1);
    nv_pair(&plain, version, "content-type", "text/plain");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_stream_headers(&frames, version, SPEEDY_SPDY_FRAME_HEADERS, 0, 3, &block);
    fuzz_data_header(&frames, 3, 0, 5);
    fuzz_put(&frames, "hello", 5);
    fuzz_data_header(&frames, 3, SPDY_FLAG_FIN, 0);
    block.len = plain.len = 0;
    request_block(&plain, version, "/cancelled");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_syn_stream(&frames, version, 0, 5, 0, 0, 0, &block);
    fuzz_control_header(&frames, version, SPEEDY_SPDY_FRAME_RST_STREAM, 0, 8);
    fuzz_put_u32(&frames, 5);
    fuzz_put_u32(&frames, SPEEDY_RST_CANCEL);
    fuzz_control_header(&frames, version, SPEEDY_SPDY_FRAME_GOAWAY, 0, version == 2 ? 4 : 8);
    fuzz_put_u32(&frames, 0);
    if (version != 2) fuzz_put_u32(&frames, 0);
    fuzz_deflater_free(&d);

    fuzz_put_u8(&b, (uint8_t)(v | 1u << 2 | 2u << 5));
    fuzz_put(&b, frames.data, frames.len);
    snprintf(name, sizeof(name), "built-spdy%u-all-frames", v == 2 ? 31u : version);
    write_seed("server", name, &b);
    b.len = 0;
    fuzz_put_u8(&b, (uint8_t)(v | 1u << 2));
    fuzz_put_u8(&b, 0);
    fuzz_put_u8(&b, 2);
    fuzz_put_u8(&b, 4);
    for (uint16_t cut = 1; cut <= 4; cut++) fuzz_put_u16(&b, (uint16_t)(cut * frames.len / 5));
    fuzz_put(&b, frames.data, frames.len);
    write_seed("split", name, &b);

    /* To a client with streams 1 and 3 open: SYN_REPLY, DATA, a push, HEADERS, RST. */
    frames.len = block.len = plain.len = 0;
    fuzz_deflater_init(&d, version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3, 6);
    fixed_frames(&frames, version, protocol, 0);
    compressed(&d, response_block, version, &block);
    fuzz_stream_headers(&frames, version, SPEEDY_SPDY_FRAME_SYN_REPLY, 0, 1, &block);
    block.len = 0;
    int v2 = version == 2;
    fuzz_nv_length(&plain, version, v2 ? 3 : 5);
    if (v2) {
      nv_pair(&plain, version, "url", "https://fuzz.test/p.js");
    } else {
      nv_pair(&plain, version, ":scheme", "https");
      nv_pair(&plain, version, ":host", "fuzz.test");
      nv_pair(&plain, version, ":path", "/p.js");
    }
    nv_pair(&plain, version, v2 ? "status" : ":status", v2 ? "200 OK" : "200");
    nv_pair(&plain, version, v2 ? "version" : ":version", "HTTP/1.1");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_syn_stream(&frames, version, SPDY_FLAG_UNIDIRECTIONAL, 2, 1, 0, 0, &block);
    fuzz_data_header(&frames, 2, SPDY_FLAG_FIN, 4);
    fuzz_put(&frames, "x=1;", 4);
    fuzz_data_header(&frames, 1, 0, 6);
    fuzz_put(&frames, "<html>", 6);
    block.len = plain.len = 0;
    fuzz_nv_length(&plain, version, 1);
    nv_pair(&plain, version, "x-trailer", "done");
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &block);
    fuzz_stream_headers(&frames, version, SPEEDY_SPDY_FRAME_HEADERS, SPDY_FLAG_FIN, 1, &block);
    fuzz_control_header(&frames, version, SPEEDY_SPDY_FRAME_RST_STREAM, 0, 8);
    fuzz_put_u32(&frames, 3);
    fuzz_put_u32(&frames, SPEEDY_RST_REFUSED_STREAM);
    fuzz_control_header(&frames, version, SPEEDY_SPDY_FRAME_GOAWAY, 0, version == 2 ? 4 : 8);
    fuzz_put_u32(&frames, 2);
    if (version != 2) fuzz_put_u32(&frames, 0);
    fuzz_deflater_free(&d);

    b.len = 0;
    fuzz_put_u8(&b, v);
    fuzz_put_u8(&b, 1); /* two requests: streams 1 and 3 */
    fuzz_put(&b, frames.data, frames.len);
    write_seed("client", name, &b);
    b.len = 0;
    fuzz_put_u8(&b, v);
    fuzz_put_u8(&b, 1);
    fuzz_put_u8(&b, 3);
    fuzz_put_u8(&b, 3);
    for (uint16_t cut = 1; cut <= 3; cut++) fuzz_put_u16(&b, (uint16_t)(cut * frames.len / 4));
    fuzz_put(&b, frames.data, frames.len);
    write_seed("split", name, &b);

    fuzz_buf_free(&b);
    fuzz_buf_free(&block);
    fuzz_buf_free(&plain);
    fuzz_buf_free(&frames);
  }
}

/* ---- programs for fuzz_frames (see fuzz_program.c for the byte layout) ----------------- */

/* One program using every operation once, in a plausible order. */
static void program_all_ops(fuzz_buf *p, int client) {
  static const uint8_t syn[] = {0, 1, 0, 0, 0x40, 0, 0, 0};           /* SYN_STREAM new id, FIN */
  static const uint8_t reply[] = {2, 0, 0, 0, 0, 0};                  /* SYN_REPLY recent[0] */
  static const uint8_t headers[] = {3, 0, 0, 0, 0, 1, 0x10, 0x11};    /* HEADERS +1 field */
  static const uint8_t data[] = {4, 0, 0, 0, 0, 10};                  /* DATA 10 bytes */
  static const uint8_t data_fin[] = {5, 0, 0, 1, 3};                  /* DATA FIN, 0 bytes */
  static const uint8_t rst[] = {6, 0, 0, 5, 0};                       /* RST CANCEL */
  static const uint8_t settings[] = {7, 0, 2, 4, 0, 0, 100, 7, 0, 3}; /* MAX_CONC, IWS */
  static const uint8_t ping[] = {8, 1, 0};
  static const uint8_t goaway[] = {9, 0, 0, 0, 0};
  static const uint8_t window[] = {10, 200, 0, 0, 0, 0x40, 0};
  static const uint8_t credential[] = {11, 0, 1, 4, 'p', 'r', 'o', 'f', 0, 1, 3, 'c', 'r', 't', 0};
  static const uint8_t noop[] = {12, 0};
  static const uint8_t unknown[] = {13, 99, 0, 2, 'z', 'z', 0};
  static const uint8_t other_version[] = {14, 0, 0, 4, 6, 0, 4, 0, 0, 0, 1, 0};
  static const uint8_t raw[] = {15, 4, 0x80, 0x03, 0x00, 0x06};
  const struct {
    const uint8_t *bytes;
    size_t len;
  } ops[] = {{settings, sizeof(settings)},
             {syn, sizeof(syn)},
             {reply, sizeof(reply)},
             {headers, sizeof(headers)},
             {data, sizeof(data)},
             {data_fin, sizeof(data_fin)},
             {window, sizeof(window)},
             {ping, sizeof(ping)},
             {credential, sizeof(credential)},
             {noop, sizeof(noop)},
             {unknown, sizeof(unknown)},
             {rst, sizeof(rst)},
             {goaway, sizeof(goaway)},
             {other_version, sizeof(other_version)},
             {raw, sizeof(raw)}};
  (void)client;
  for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) fuzz_put(p, ops[i].bytes, ops[i].len);
}

static void programs(void) {
  for (uint8_t v = 0; v < 3; v++) {
    for (int client = 0; client < 2; client++) {
      for (int whole = 0; whole < 2; whole++) {
        char name[64];
        fuzz_buf b = {0};
        fuzz_put_u8(&b, (uint8_t)(v | (client ? 0 : 1u << 2) | 2u << 5));
        fuzz_put_u8(&b, 1);
        fuzz_put_u8(&b, (uint8_t)(client | whole << 1));
        program_all_ops(&b, client);
        snprintf(name, sizeof(name), "program-v%u-%s-%s", v, client ? "client" : "server",
                 whole ? "whole" : "frames");
        write_seed("frames", name, &b);
        if (!whole) {
          /* The same program split in three places. */
          fuzz_buf s = {0};
          fuzz_put_u8(&s, b.data[0]);
          fuzz_put_u8(&s, 1);
          fuzz_put_u8(&s, (uint8_t)client);
          fuzz_put_u8(&s, 3);
          fuzz_put_u16(&s, 11);
          fuzz_put_u16(&s, 40);
          fuzz_put_u16(&s, 90);
          fuzz_put(&s, b.data + 3, b.len - 3);
          snprintf(name, sizeof(name), "program-v%u-%s", v, client ? "client" : "server");
          write_seed("split", name, &s);
          /* And under allocation failure, at a few points. */
          for (uint16_t n = 0; n < 200; n += 37) {
            fuzz_buf a = {0};
            fuzz_put_u16(&a, n);
            fuzz_put_u8(&a, (uint8_t)((client ? 1 : 0) << 1));
            fuzz_put_u8(&a, (uint8_t)(v | (client ? 0 : 1u << 2)));
            fuzz_put(&a, b.data + 3, b.len - 3);
            snprintf(name, sizeof(name), "program-v%u-%s-fail%u", v, client ? "client" : "server",
                     n);
            write_seed("alloc", name, &a);
            fuzz_buf_free(&a);
          }
          fuzz_buf_free(&s);
        }
        fuzz_buf_free(&b);
      }
    }
  }
}

/* ---- round-trip programs (see fuzz_roundtrip_driver.c) --------------------------------- */

#define RT_PUMP 83 /* op 13 with chunk index 5 (64 KiB) */

static void roundtrip_seed(fuzz_buf *b, uint8_t v, int variant) {
  fuzz_put_u8(b, (uint8_t)(v | (variant == 3 ? 1u << 3 | 1u << 4 : 0)));
  /* request: extra 1 field, urgency 2, body of 1000 bytes (sizes[3]) */
  static const uint8_t request_body[] = {0, 1, 0x08, 2, 3};
  static const uint8_t request_get[] = {0, 0, 1, 0};
  static const uint8_t pump[] = {RT_PUMP, 10};
  static const uint8_t response[] = {2, 0, 0, 1, 0x10, 4}; /* stream 0, body 16 KiB */
  static const uint8_t response2[] = {2, 1, 1, 0, 6};      /* stream 1, 64 KiB */
  static const uint8_t push[] = {4, 0, 0, 7, 0, 3, 1};     /* on stream 0, 1000 bytes */
  static const uint8_t ping[] = {7, 0, 7, 1};
  static const uint8_t settings[] = {8, 1, 2, 0, 8, 5};       /* server: MAX_CONC 8, IWS 1 MiB */
  static const uint8_t window[] = {9, 0, 0, 200, 1, 0x10, 0}; /* client WU on stream */
  static const uint8_t headers[] = {5, 0, 0, 1, 0, 0};        /* client HEADERS on stream 0 */
  static const uint8_t rst[] = {6, 1, 1, 0};                  /* server resets stream 1 */
  static const uint8_t goaway[] = {10, 0};
  static const uint8_t resume[] = {12, 1, 0, 0, 100};
  static const uint8_t consume[] = {11, 0, 0, 0x40, 0};
  fuzz_put(b, request_body, sizeof(request_body));
  fuzz_put(b, request_get, sizeof(request_get));
  fuzz_put(b, pump, sizeof(pump));
  switch (variant) {
  case 0:
    fuzz_put(b, response, sizeof(response));
    fuzz_put(b, response2, sizeof(response2));
    break;
  case 1:
    fuzz_put(b, push, sizeof(push));
    fuzz_put(b, response, sizeof(response));
    fuzz_put(b, headers, sizeof(headers));
    break;
  case 2:
    fuzz_put(b, settings, sizeof(settings));
    fuzz_put(b, ping, sizeof(ping));
    fuzz_put(b, pump, sizeof(pump));
    fuzz_put(b, response, sizeof(response));
    fuzz_put(b, window, sizeof(window));
    fuzz_put(b, rst, sizeof(rst));
    break;
  default:
    fuzz_put(b, response, sizeof(response));
    fuzz_put(b, pump, sizeof(pump));
    fuzz_put(b, consume, sizeof(consume));
    fuzz_put(b, resume, sizeof(resume));
    fuzz_put(b, goaway, sizeof(goaway));
    break;
  }
  fuzz_put(b, pump, sizeof(pump));
}

static void roundtrips(void) {
  static const char *const variants[] = {"responses", "push", "settings-ping-reset",
                                         "manual-flow-goaway"};
  for (uint8_t v = 0; v < 3; v++) {
    for (int variant = 0; variant < 4; variant++) {
      char name[64];
      fuzz_buf b = {0};
      roundtrip_seed(&b, v, variant);
      snprintf(name, sizeof(name), "v%u-%s", v, variants[variant]);
      write_seed("roundtrip", name, &b);
      for (uint16_t n = 5; n < 400; n += 97) {
        fuzz_buf a = {0};
        fuzz_put_u16(&a, n);
        fuzz_put_u8(&a, (uint8_t)(2u << 1 | (n & 1)));
        fuzz_put(&a, b.data, b.len);
        snprintf(name, sizeof(name), "roundtrip-v%u-%s-fail%u", v, variants[variant], n);
        write_seed("alloc", name, &a);
        fuzz_buf_free(&a);
      }
      fuzz_buf_free(&b);
    }
  }
}

/* ---- header blocks ------------------------------------------------------------------- */

static void hdblocks(void) {
  for (unsigned version = 2; version <= 3; version++) {
    uint8_t vbit = version == 3 ? 1 : 0;
    char name[64];
    fuzz_buf plain = {0}, plain2 = {0};
    request_block(&plain, version, "/a");
    response_block(&plain2, version);

    /* Mode 0: compressed blocks, as a session receives them. */
    fuzz_deflater d;
    fuzz_deflater_init(&d, version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3, 6);
    fuzz_buf c1 = {0}, c2 = {0};
    fuzz_deflate(&d, plain.data, plain.len, Z_SYNC_FLUSH, &c1);
    fuzz_deflate(&d, plain2.data, plain2.len, Z_SYNC_FLUSH, &c2);
    fuzz_deflater_free(&d);
    fuzz_buf b = {0};
    fuzz_put_u8(&b, (uint8_t)(vbit | 0u << 2));
    fuzz_put_u16(&b, (uint16_t)c1.len);
    fuzz_put(&b, c1.data, c1.len);
    fuzz_put_u16(&b, (uint16_t)c2.len);
    fuzz_put(&b, c2.data, c2.len);
    snprintf(name, sizeof(name), "v%u-inflate", version);
    write_seed("hdblock", name, &b);

    /* Modes 1 and 2: plain blocks parsed, and compressed by the peer first. */
    for (uint8_t mode = 1; mode <= 2; mode++) {
      b.len = 0;
      fuzz_put_u8(&b, (uint8_t)(vbit | mode << 2));
      fuzz_put_u16(&b, (uint16_t)plain.len);
      fuzz_put(&b, plain.data, plain.len);
      fuzz_put_u16(&b, (uint16_t)plain2.len);
      fuzz_put(&b, plain2.data, plain2.len);
      snprintf(name, sizeof(name), "v%u-%s", version, mode == 1 ? "parse" : "peer-deflate");
      write_seed("hdblock", name, &b);
    }

    /* Mode 2 again with a peer that declares a 2^9 window at level 9 (mode bits 4-6: 6,
     * bit 7): the inflater keeps only that window. */
    b.len = 0;
    fuzz_put_u8(&b, (uint8_t)(vbit | 2u << 2 | 6u << 4 | 128u));
    fuzz_put_u16(&b, (uint16_t)plain.len);
    fuzz_put(&b, plain.data, plain.len);
    fuzz_put_u16(&b, (uint16_t)plain2.len);
    fuzz_put(&b, plain2.data, plain2.len);
    snprintf(name, sizeof(name), "v%u-peer-deflate-window-512", version);
    write_seed("hdblock", name, &b);

    /* Mode 3: header lists through our deflater: 5 fields, one repeated name. */
    static const uint8_t list[] = {5,   0,   3, 'G', 'E', 'T', 1, 1,   '/', 4,  2,
                                   'a', '1', 4, 1,   '2', 6,   3, 'k', '=', 'v'};
    b.len = 0;
    fuzz_put_u8(&b, (uint8_t)(vbit | 3u << 2));
    fuzz_put(&b, list, sizeof(list));
    fuzz_put(&b, list, sizeof(list));
    snprintf(name, sizeof(name), "v%u-roundtrip", version);
    write_seed("hdblock", name, &b);
    b.data[0] = (uint8_t)(vbit | 3u << 2 | 2u << 4); /* our default window, 2^13 */
    snprintf(name, sizeof(name), "v%u-roundtrip-window-8k", version);
    write_seed("hdblock", name, &b);

    fuzz_buf_free(&b);
    fuzz_buf_free(&c1);
    fuzz_buf_free(&c2);
    fuzz_buf_free(&plain);
    fuzz_buf_free(&plain2);
  }
}

/* The harnesses are linked into this program only for their shared code. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  (void)data;
  (void)size;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s OUT_DIR INTEROP_CORPUS_DIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  if (mkdir(out_dir, 0777) != 0 && errno != EEXIST) fuzz_fail("cannot create %s", out_dir);
  from_recordings(argv[2]);
  built_sessions();
  programs();
  roundtrips();
  hdblocks();
  printf("%s: %zu seeds, %zu bytes\n", argv[0], files_written, bytes_written);
  return 0;
}
