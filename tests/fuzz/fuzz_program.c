/* fuzz_program.c — fuzz input read as a program that builds SPDY frames (see
 * fuzz_program.h). Each operation starts with one byte choosing the frame; the fields
 * that follow are read as the operation needs them. */
#include "fuzz_program.h"

#include <string.h>

static const char *const interesting_names[] = {
    ":method",    ":path",
    ":version",   ":host",
    ":scheme",    ":status",
    "method",     "url",
    "version",    "host",
    "scheme",     "status",
    "cookie",     "accept",
    "x-a",        "content-length",
    "set-cookie", "user-agent",
    "Upper",      ":other",
    "connection", "transfer-encoding",
    "x-b",        ":",
};
#define N_NAMES (sizeof(interesting_names) / sizeof(interesting_names[0]))

static const struct {
  const char *bytes;
  size_t len;
} interesting_values[] = {
    {"GET", 3},    {"POST", 4},     {"/", 1},
    {"/a?b=c", 6}, {"HTTP/1.1", 8}, {"200", 3},
    {"200 OK", 6}, {"https", 5},    {"fuzz.test", 9},
    {"", 0},       {"0", 1},        {"12", 2},
    {"a\0b", 3},   {"\0a", 2},      {"a\0", 2},
    {"a\0\0b", 4}, {"\0", 1},       {"https://fuzz.test/p.js", 22},
    {"HEAD", 4},
};
#define N_VALUES (sizeof(interesting_values) / sizeof(interesting_values[0]))

void fuzz_program_init(fuzz_program *p, speedy_protocol protocol, speedy_role target_role,
                       uint32_t requests_open) {
  memset(p, 0, sizeof(*p));
  p->protocol = protocol;
  p->version = fuzz_wire_version(protocol);
  p->target_role = target_role;
  fuzz_deflater_init(&p->deflater, p->version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3, 6);
  /* A server under test reads streams opened by a client (odd ids); a client reads
   * pushes (even ids) and answers to its own requests (odd). */
  p->next_peer_id = target_role == SPEEDY_ROLE_SERVER ? 1 : 2;
  for (uint32_t i = 0; i < requests_open && p->n_recent < FUZZ_PROGRAM_RECENT; i++)
    p->recent[p->n_recent++] = 1 + 2 * i;
}

void fuzz_program_free(fuzz_program *p) {
  fuzz_deflater_free(&p->deflater);
  fuzz_buf_free(&p->bytes);
}

static void remember(fuzz_program *p, uint32_t id) {
  for (size_t i = 0; i < p->n_recent; i++)
    if (p->recent[i] == id) return;
  if (p->n_recent < FUZZ_PROGRAM_RECENT) {
    p->recent[p->n_recent++] = id;
    return;
  }
  memmove(p->recent, p->recent + 1, (FUZZ_PROGRAM_RECENT - 1) * sizeof(p->recent[0]));
  p->recent[FUZZ_PROGRAM_RECENT - 1] = id;
}

/* A stream id: one in play, the next new one, a small one or anything. */
static uint32_t pick_stream(fuzz_program *p, fuzz_input *in, int opening) {
  uint8_t mode = fuzz_u8(in);
  if (opening && mode < 160) mode = 5; /* SYN_STREAM: usually the next valid id */
  unsigned kind = mode % 8;
  if (kind <= 4 && p->n_recent > 0) return p->recent[fuzz_u8(in) % p->n_recent];
  if (kind <= 5) {
    uint32_t id = p->next_peer_id;
    if (p->next_peer_id < 0x7ffffffd) p->next_peer_id += 2;
    remember(p, id);
    return id;
  }
  if (kind == 6) return fuzz_u8(in) % 16;
  return fuzz_u32(in);
}

/* Template fields for the start of a header list, in the wire's names. */
static void put_template(fuzz_buf *plain, unsigned version, unsigned which, size_t *count) {
  static const char *const request_v3[][2] = {{":method", "GET"},
                                              {":path", "/"},
                                              {":version", "HTTP/1.1"},
                                              {":host", "fuzz.test"},
                                              {":scheme", "https"}};
  static const char *const request_v2[][2] = {{"method", "GET"},
                                              {"url", "/"},
                                              {"version", "HTTP/1.1"},
                                              {"host", "fuzz.test"},
                                              {"scheme", "https"}};
  static const char *const response_v3[][2] = {{":status", "200"}, {":version", "HTTP/1.1"}};
  static const char *const response_v2[][2] = {{"status", "200 OK"}, {"version", "HTTP/1.1"}};
  static const char *const push_v3[][2] = {{":scheme", "https"},
                                           {":host", "fuzz.test"},
                                           {":path", "/p.js"},
                                           {":status", "200"},
                                           {":version", "HTTP/1.1"}};
  static const char *const push_v2[][2] = {
      {"url", "https://fuzz.test/p.js"}, {"status", "200 OK"}, {"version", "HTTP/1.1"}};
  const char *const(*fields)[2] = NULL;
  size_t n = 0;
  switch (which) {
  case 1:
    fields = version == 2 ? request_v2 : request_v3;
    n = 5;
    break;
  case 2:
    fields = version == 2 ? response_v2 : response_v3;
    n = 2;
    break;
  case 3:
    fields = version == 2 ? push_v2 : push_v3;
    n = version == 2 ? 3 : 5;
    break;
  default:
    return;
  }
  for (size_t i = 0; i < n; i++) {
    fuzz_nv_string(plain, version, fields[i][0], strlen(fields[i][0]));
    fuzz_nv_string(plain, version, fields[i][1], strlen(fields[i][1]));
  }
  *count += n;
}

static void put_field(fuzz_buf *plain, unsigned version, fuzz_input *in) {
  uint8_t name_sel = fuzz_u8(in);
  if (name_sel < 128) {
    const char *name = interesting_names[name_sel % N_NAMES];
    fuzz_nv_string(plain, version, name, strlen(name));
  } else {
    const uint8_t *bytes;
    size_t n = fuzz_take(in, name_sel % 16, &bytes);
    fuzz_nv_string(plain, version, bytes, n);
  }
  uint8_t value_sel = fuzz_u8(in);
  switch (value_sel % 4) {
  case 0:
    fuzz_nv_string(plain, version, interesting_values[(value_sel / 4) % N_VALUES].bytes,
                   interesting_values[(value_sel / 4) % N_VALUES].len);
    break;
  case 1: {
    const uint8_t *bytes;
    size_t n = fuzz_take(in, fuzz_u8(in) % 48, &bytes);
    fuzz_nv_string(plain, version, bytes, n);
    break;
  }
  case 2: {
    /* A long value: near and past the 16-bit and header-block limits. */
    static const uint32_t sizes[] = {255, 4096, 65535, 65536, 70000};
    uint32_t len = sizes[(value_sel / 4) % 5];
    fuzz_nv_length(plain, version, len); /* v2 truncates to 16 bits: a lie, on purpose */
    fuzz_put_fill(plain, 'v', len);
    break;
  }
  default: {
    /* Values joined with NUL, some empty. */
    uint8_t parts = (uint8_t)(1 + (value_sel / 4) % 4);
    fuzz_buf v = {0};
    for (uint8_t i = 0; i < parts; i++) {
      if (i > 0) fuzz_put_u8(&v, 0);
      uint8_t len = fuzz_u8(in) % 4;
      fuzz_put_fill(&v, 'a', len);
    }
    fuzz_nv_string(plain, version, v.data, v.len);
    fuzz_buf_free(&v);
    break;
  }
  }
}

/* A compressed header block, as the peer would send it (or deliberately broken). */
static void build_block(fuzz_program *p, fuzz_input *in, unsigned default_template,
                        fuzz_buf *block) {
  uint8_t mode = fuzz_u8(in);
  unsigned kind = mode % 8;
  if (kind == 6) return; /* no block at all */
  if (kind == 5) {
    /* Raw bytes where the compressed block should be. */
    const uint8_t *bytes;
    size_t n = fuzz_take(in, fuzz_u8(in), &bytes);
    fuzz_put(block, bytes, n);
    return;
  }
  fuzz_buf plain = {0};
  if (kind == 4) {
    /* Raw plain bytes, correctly compressed: the parser sees arbitrary blocks. */
    const uint8_t *bytes;
    size_t n = fuzz_take(in, fuzz_u8(in), &bytes);
    fuzz_put(&plain, bytes, n);
  } else {
    fuzz_buf fields = {0};
    size_t count = 0;
    unsigned which = (mode >> 3) & 3;
    put_template(&fields, p->version, which == 0 ? default_template : which, &count);
    size_t extra = fuzz_u8(in);
    if (extra >= 250) {
      /* Many tiny fields: the parser's index and duplicate search. */
      size_t many = 100 + (size_t)fuzz_u8(in) * 8;
      for (size_t i = 0; i < many; i++) {
        char name[16];
        size_t len = 0;
        name[len++] = 'x';
        for (size_t v = i; v > 0 && len < sizeof(name); v /= 26) name[len++] = (char)('a' + v % 26);
        fuzz_nv_string(&fields, p->version, name, len);
        fuzz_nv_string(&fields, p->version, "1", 1);
      }
      count += many;
    } else {
      extra %= 8;
      for (size_t i = 0; i < extra; i++) put_field(&fields, p->version, in);
      count += extra;
    }
    uint32_t written = (uint32_t)count;
    if (mode & 0x20) written += (uint32_t)(fuzz_u8(in) % 3) - 1u; /* a count that lies */
    fuzz_nv_length(&plain, p->version, written);
    fuzz_put(&plain, fields.data, fields.len);
    fuzz_buf_free(&fields);
  }
  if (kind == 7) {
    /* Broken compression: another dictionary, no dictionary, or no sync flush. */
    uint8_t how = fuzz_u8(in) % 4;
    if (how == 3) {
      fuzz_deflate(&p->deflater, plain.data, plain.len, Z_NO_FLUSH, block);
    } else {
      fuzz_deflater other;
      fuzz_dictionary dict = how == 0   ? FUZZ_DICT_NONE
                             : how == 1 ? (p->version == 2 ? FUZZ_DICT_V3 : FUZZ_DICT_V2)
                                        : (p->version == 2 ? FUZZ_DICT_V2 : FUZZ_DICT_V3);
      fuzz_deflater_init(&other, dict, 6);
      fuzz_deflate(&other, plain.data, plain.len, Z_SYNC_FLUSH, block);
      fuzz_deflater_free(&other);
    }
  } else {
    fuzz_deflate(&p->deflater, plain.data, plain.len, Z_SYNC_FLUSH, block);
  }
  fuzz_buf_free(&plain);
}

static uint8_t pick_flags(fuzz_input *in) {
  uint8_t f = fuzz_u8(in);
  return f >= 224 ? f : (uint8_t)(f & 3);
}

static uint32_t pick_window_value(fuzz_input *in) {
  static const uint32_t values[] = {0,          1,           65535,       65536,
                                    0x7fffffff, 0x80000000u, 0xffffffffu, 16384};
  uint8_t sel = fuzz_u8(in);
  switch (sel % 4) {
  case 0:
    return fuzz_u8(in);
  case 1:
    return fuzz_u16(in);
  case 2:
    return fuzz_u32(in);
  default:
    return values[(sel / 4) % 8];
  }
}

static void op_syn_stream(fuzz_program *p, fuzz_input *in) {
  uint8_t flags = pick_flags(in);
  uint32_t id = pick_stream(p, in, 1);
  uint32_t assoc = 0;
  uint8_t assoc_sel = fuzz_u8(in);
  if (p->target_role == SPEEDY_ROLE_CLIENT) {
    /* Pushes name one of the client's streams. */
    assoc = assoc_sel < 200 && p->n_recent > 0 ? p->recent[assoc_sel % p->n_recent]
            : assoc_sel < 230                  ? 1
                                               : fuzz_u32(in);
  } else if (assoc_sel >= 230) {
    assoc = fuzz_u32(in);
  }
  uint8_t priority = fuzz_u8(in);
  uint8_t slot = fuzz_u8(in) >= 240 ? fuzz_u8(in) : 0;
  fuzz_buf block = {0};
  build_block(p, in, p->target_role == SPEEDY_ROLE_SERVER ? 1 : 3, &block);
  fuzz_syn_stream(&p->bytes, p->version, flags, id, assoc, priority, slot, &block);
  fuzz_buf_free(&block);
}

static void op_stream_headers(fuzz_program *p, fuzz_input *in, unsigned type) {
  uint8_t flags = pick_flags(in);
  uint32_t id = pick_stream(p, in, 0);
  fuzz_buf block = {0};
  build_block(p, in, type == SPEEDY_SPDY_FRAME_SYN_REPLY ? 2 : 0, &block);
  fuzz_stream_headers(&p->bytes, p->version, type, flags, id, &block);
  fuzz_buf_free(&block);
}

static void op_data(fuzz_program *p, fuzz_input *in) {
  uint32_t id = pick_stream(p, in, 0);
  uint8_t flags = pick_flags(in);
  uint8_t len_sel = fuzz_u8(in);
  uint32_t len;
  switch (len_sel % 4) {
  case 0:
    len = fuzz_u8(in);
    break;
  case 1:
    len = fuzz_u16(in) % 20000;
    break;
  case 2:
    len = 60000 + fuzz_u16(in) % 12000;
    break; /* around a 64 KiB window */
  default:
    len = 0;
    break;
  }
  fuzz_data_header(&p->bytes, id, flags, len);
  for (uint32_t i = 0; i < len; i++) fuzz_put_u8(&p->bytes, fuzz_pattern_byte((int32_t)id, i));
}

static void op_rst_stream(fuzz_program *p, fuzz_input *in) {
  uint32_t id = pick_stream(p, in, 0);
  uint8_t sel = fuzz_u8(in);
  uint32_t status = sel < 224 ? sel % 14u : fuzz_u32(in);
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_RST_STREAM, pick_flags(in), 8);
  fuzz_put_u32(&p->bytes, id);
  fuzz_put_u32(&p->bytes, status);
}

static void op_settings(fuzz_program *p, fuzz_input *in) {
  uint8_t flags = pick_flags(in);
  uint8_t n_sel = fuzz_u8(in);
  uint32_t n = n_sel % 11u;
  fuzz_buf entries = {0};
  for (uint32_t i = 0; i < n; i++) {
    uint8_t id_sel = fuzz_u8(in);
    uint32_t id = id_sel < 240 ? id_sel % 10u : fuzz_u32(in) & 0xffffffu;
    uint8_t entry_flags = fuzz_u8(in) % 4;
    uint32_t value = pick_window_value(in);
    if (p->version == 2) {
      uint8_t le[4] = {(uint8_t)id, (uint8_t)(id >> 8), (uint8_t)(id >> 16), entry_flags};
      fuzz_put(&entries, le, 4);
    } else {
      fuzz_put_u8(&entries, entry_flags);
      fuzz_put_u24(&entries, id);
    }
    fuzz_put_u32(&entries, value);
  }
  uint32_t count = n_sel >= 240 ? fuzz_u32(in) : n; /* a count that lies */
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_SETTINGS, flags,
                      (uint32_t)(4 + entries.len));
  fuzz_put_u32(&p->bytes, count);
  fuzz_put(&p->bytes, entries.data, entries.len);
  fuzz_buf_free(&entries);
}

static void op_ping(fuzz_program *p, fuzz_input *in) {
  uint8_t sel = fuzz_u8(in);
  uint32_t id = sel < 128 ? sel % 8u : fuzz_u32(in);
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_PING, pick_flags(in), 4);
  fuzz_put_u32(&p->bytes, id);
}

static void op_goaway(fuzz_program *p, fuzz_input *in) {
  uint32_t last_good = pick_stream(p, in, 0);
  uint8_t sel = fuzz_u8(in);
  uint32_t status = sel < 224 ? sel % 4u : fuzz_u32(in);
  int v2 = p->version == 2;
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_GOAWAY, pick_flags(in), v2 ? 4 : 8);
  fuzz_put_u32(&p->bytes, last_good);
  if (!v2) fuzz_put_u32(&p->bytes, status);
}

static void op_window_update(fuzz_program *p, fuzz_input *in) {
  uint32_t id = fuzz_u8(in) < 64 ? 0 : pick_stream(p, in, 0);
  uint32_t delta = pick_window_value(in);
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_WINDOW_UPDATE, pick_flags(in), 8);
  fuzz_put_u32(&p->bytes, id);
  fuzz_put_u32(&p->bytes, delta);
}

static void op_credential(fuzz_program *p, fuzz_input *in) {
  fuzz_buf payload = {0};
  fuzz_put_u16(&payload, fuzz_u16(in));
  const uint8_t *bytes;
  size_t n = fuzz_take(in, fuzz_u8(in) % 64, &bytes);
  uint8_t lie = fuzz_u8(in);
  fuzz_put_u32(&payload, lie >= 240 ? fuzz_u32(in) : (uint32_t)n);
  fuzz_put(&payload, bytes, n);
  uint8_t certs = fuzz_u8(in) % 4;
  for (uint8_t i = 0; i < certs; i++) {
    n = fuzz_take(in, fuzz_u8(in) % 64, &bytes);
    fuzz_put_u32(&payload, lie >= 224 && lie < 240 ? fuzz_u32(in) : (uint32_t)n);
    fuzz_put(&payload, bytes, n);
  }
  fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_CREDENTIAL, pick_flags(in),
                      (uint32_t)payload.len);
  fuzz_put(&p->bytes, payload.data, payload.len);
  fuzz_buf_free(&payload);
}

/* A control frame of any type and version whose length field says what the input says. */
static void op_odd_control(fuzz_program *p, fuzz_input *in, int any_version) {
  unsigned version = any_version ? fuzz_u16(in) : p->version;
  uint8_t type_sel = fuzz_u8(in);
  unsigned type = type_sel < 200 ? type_sel % 16u : fuzz_u16(in);
  uint8_t flags = fuzz_u8(in);
  const uint8_t *bytes;
  size_t n = fuzz_take(in, fuzz_u8(in), &bytes);
  uint8_t len_sel = fuzz_u8(in);
  uint32_t length = len_sel < 192 ? (uint32_t)n : len_sel < 240 ? fuzz_u8(in) : fuzz_u32(in);
  fuzz_control_header(&p->bytes, version, type, flags, length);
  fuzz_put(&p->bytes, bytes, n);
}

void fuzz_program_build(fuzz_program *p, fuzz_input *in, size_t max_ops) {
  if (max_ops > FUZZ_PROGRAM_MAX_OPS) max_ops = FUZZ_PROGRAM_MAX_OPS;
  while (!fuzz_input_done(in) && p->n_frames < max_ops) {
    uint8_t op = fuzz_u8(in);
    switch (op % 16) {
    case 0:
    case 1:
      op_syn_stream(p, in);
      break;
    case 2:
      op_stream_headers(p, in, SPEEDY_SPDY_FRAME_SYN_REPLY);
      break;
    case 3:
      op_stream_headers(p, in, SPEEDY_SPDY_FRAME_HEADERS);
      break;
    case 4:
    case 5:
      op_data(p, in);
      break;
    case 6:
      op_rst_stream(p, in);
      break;
    case 7:
      op_settings(p, in);
      break;
    case 8:
      op_ping(p, in);
      break;
    case 9:
      op_goaway(p, in);
      break;
    case 10:
      op_window_update(p, in);
      break;
    case 11:
      op_credential(p, in);
      break;
    case 12: /* NOOP (SPDY/2) with an empty or a lying payload */
      fuzz_control_header(&p->bytes, p->version, SPEEDY_SPDY_FRAME_NOOP, 0,
                          fuzz_u8(in) < 200 ? 0 : 4);
      break;
    case 13:
      op_odd_control(p, in, 0);
      break;
    case 14:
      op_odd_control(p, in, fuzz_u8(in) < 32);
      break;
    default: {
      const uint8_t *bytes;
      size_t n = fuzz_take(in, fuzz_u8(in) % 32, &bytes);
      fuzz_put(&p->bytes, bytes, n);
      break;
    }
    }
    p->ends[p->n_frames++] = p->bytes.len;
  }
}
