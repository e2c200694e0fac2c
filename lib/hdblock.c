/* hdblock.c — SPDY name/value header blocks: serialise and deflate what we send, inflate,
 * validate and parse what we receive (see hdblock.h).
 *
 * Each direction of a session has one zlib stream, and the peer's copy of it must stay in
 * step with ours. So nothing reaches zlib until the block is known to be acceptable:
 * submitted headers are validated and the output room is checked against a worst-case
 * compressed size first. A failure after zlib has been touched marks the context broken,
 * and every later call returns SPEEDY_ERR_COMPRESSION: the session must end.
 *
 * Received blocks cost at most max_block bytes of output however far they would inflate,
 * and at most O(n log n) work for n fields (duplicate names are found by sorting an index).
 */
#include "hdblock.h"

#include <limits.h>
#include <string.h>

#include "frame.h"

/* Values of the contexts' `initialised` field. */
enum { CONTEXT_NONE = 0, CONTEXT_READY = 1, CONTEXT_BROKEN = -1 };

/* Up to this many fields are indexed on the stack; more take an index from speedy_mem. */
#define HDBLOCK_STACK_FIELDS 64
/* Serialised bytes are staged in a stack chunk of this size and deflated chunk by chunk,
 * so sending needs no heap memory beyond out's own growth. */
#define HDBLOCK_CHUNK 1024
/* Output space requested from out per deflate call (more than the 6 bytes zlib wants for
 * a flush marker). */
#define HDBLOCK_OUT_STEP 512
/* Inflate scratch storage kept between blocks; a larger one is given back on the next
 * call (its bytes are the caller's until then). */
#define HDBLOCK_SCRATCH_KEEP 4096
#define HDBLOCK_NO_NEXT UINT32_MAX
/* Up to this many fields, duplicates are found by comparing every pair. */
#define HDBLOCK_PAIRWISE_FIELDS 24

/* A name: bytes and length, not NUL-terminated. */
typedef struct name_span {
  const uint8_t *bytes;
  size_t len;
} name_span;

/* The application always uses the SPDY/3 pseudo-header names; SPDY/2 spells them so. */
typedef struct name_mapping {
  name_span v3;
  name_span v2;
} name_mapping;

#define NAME_SPAN(s)                                                                               \
  { (const uint8_t *)(s), sizeof(s) - 1 }
static const name_mapping v2_names[] = {
    {NAME_SPAN(":method"), NAME_SPAN("method")},   {NAME_SPAN(":path"), NAME_SPAN("url")},
    {NAME_SPAN(":version"), NAME_SPAN("version")}, {NAME_SPAN(":host"), NAME_SPAN("host")},
    {NAME_SPAN(":scheme"), NAME_SPAN("scheme")},   {NAME_SPAN(":status"), NAME_SPAN("status")},
};
#define V2_NAMES_COUNT (sizeof(v2_names) / sizeof(v2_names[0]))

static int span_equal(name_span a, name_span b) {
  return a.len == b.len && (a.len == 0 || memcmp(a.bytes, b.bytes, a.len) == 0);
}

static int span_compare(name_span a, name_span b) {
  size_t common = a.len < b.len ? a.len : b.len;
  int c = common == 0 ? 0 : memcmp(a.bytes, b.bytes, common);
  if (c != 0) return c;
  return (a.len > b.len) - (a.len < b.len);
}

/* The name as it goes on the wire: SPDY/3 pseudo-header names become SPDY/2 names. */
static name_span wire_name(int version, const speedy_header *header) {
  name_span name = {(const uint8_t *)header->name, header->name_len};
  if (version == 2 && name.len > 0 && name.bytes[0] == ':') {
    for (size_t i = 0; i < V2_NAMES_COUNT; i++)
      if (span_equal(name, v2_names[i].v3)) return v2_names[i].v2;
  }
  return name;
}

/* The name as the application sees it: SPDY/2 names become SPDY/3 pseudo-header names. */
static name_span application_name(int version, name_span name) {
  if (version == 2) {
    for (size_t i = 0; i < V2_NAMES_COUNT; i++)
      if (span_equal(name, v2_names[i].v2)) return v2_names[i].v3;
  }
  return name;
}

/* Width of the count and length fields: 16 bits in SPDY/2, 32 bits in SPDY/3. */
static size_t length_width(int version) { return version == 2 ? 2 : 4; }
static uint32_t length_max(int version) { return version == 2 ? UINT16_MAX : UINT32_MAX; }

static uint32_t read_length(const uint8_t *p, size_t width) {
  if (width == 2) return (uint32_t)p[0] << 8 | p[1];
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static size_t add_saturating(size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

/* ---- Sorting an index ------------------------------------------------------------- */

/* Heapsort of uint32_t indices: O(n log n) on any input, in place, no recursion. */
typedef int (*index_compare_fn)(const void *ctx, uint32_t a, uint32_t b);

static void index_sift_down(uint32_t *index, size_t root, size_t n, index_compare_fn compare,
                            const void *ctx) {
  for (;;) {
    size_t child = 2 * root + 1; /* n <= SIZE_MAX / 4 (an allocated array): no wrap */
    if (child >= n) return;
    if (child + 1 < n && compare(ctx, index[child], index[child + 1]) < 0) child++;
    if (compare(ctx, index[root], index[child]) >= 0) return;
    uint32_t swap = index[root];
    index[root] = index[child];
    index[child] = swap;
    root = child;
  }
}

static void index_sort(uint32_t *index, size_t n, index_compare_fn compare, const void *ctx) {
  if (n < 2) return;
  for (size_t start = n / 2; start-- > 0;) index_sift_down(index, start, n, compare, ctx);
  for (size_t end = n - 1; end > 0; end--) {
    uint32_t swap = index[0];
    index[0] = index[end];
    index[end] = swap;
    index_sift_down(index, 0, end, compare, ctx);
  }
}

/* ---- Deflater --------------------------------------------------------------------- */

int spdy_hdblock_deflater_init(spdy_hdblock_deflater *d, speedy_mem *mem, int version, int level,
                               int window_bits, int mem_level) {
  if (d == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  d->initialised = CONTEXT_NONE;
  if (mem == NULL || (version != 2 && version != 3) || level < 0 || level > 9 || window_bits < 9 ||
      window_bits > 15 || mem_level < 1 || mem_level > 9)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  memset(&d->zs, 0, sizeof(d->zs));
  d->zs.zalloc = speedy_mem_zalloc;
  d->zs.zfree = speedy_mem_zfree;
  d->zs.opaque = mem;
  int rv = deflateInit2(&d->zs, level, Z_DEFLATED, -window_bits, mem_level, Z_DEFAULT_STRATEGY);
  if (rv == Z_MEM_ERROR) return SPEEDY_ERR_NOMEM;
  if (rv != Z_OK) return SPEEDY_ERR_INVALID_ARGUMENT;
  const uint8_t *dict = version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
  size_t dict_len = version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len;
  rv = deflateSetDictionary(&d->zs, dict, (uInt)dict_len);
  if (rv != Z_OK) {
    deflateEnd(&d->zs);
    return SPEEDY_ERR_INVALID_ARGUMENT;
  }
  /* The header zlib's wrapper would write (RFC 1950): method 8 with our window, the
   * level class zlib uses, FDICT and the dictionary's Adler-32. */
  unsigned level_class = level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3;
  unsigned header = (8u + ((unsigned)(window_bits - 8) << 4)) << 8 | level_class << 6 | 0x20u;
  header += 31 - header % 31;
  uint32_t dict_id = (uint32_t)adler32(adler32(0, Z_NULL, 0), dict, (uInt)dict_len);
  d->header[0] = (uint8_t)(header >> 8);
  d->header[1] = (uint8_t)header;
  spdy_put_u32(d->header + 2, dict_id);
  d->header_pending = 1;
  d->version = version;
  d->initialised = CONTEXT_READY;
  return 0;
}

void spdy_hdblock_deflater_free(spdy_hdblock_deflater *d) {
  if (d == NULL || d->initialised == CONTEXT_NONE) return;
  deflateEnd(&d->zs);
  d->initialised = CONTEXT_NONE;
}

/* One submitted field on its own: the rules that do not depend on the other fields. */
static int header_check(int version, const speedy_header *header) {
  if (header->name_len == 0) return SPEEDY_ERR_INVALID_HEADER;
  if (header->name == NULL || (header->value == NULL && header->value_len > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  const uint8_t *name = (const uint8_t *)header->name;
  for (size_t i = 0; i < header->name_len; i++)
    if (name[i] == 0 || (name[i] >= 'A' && name[i] <= 'Z')) return SPEEDY_ERR_INVALID_HEADER;
  /* Submitted values are single values: joining repeated names is our job. */
  if (header->value_len > 0 && memchr(header->value, 0, header->value_len) != NULL)
    return SPEEDY_ERR_INVALID_HEADER;
  /* SPDY/2: "The length of each name and value must be greater than zero." */
  if (version == 2 && header->value_len == 0) return SPEEDY_ERR_INVALID_HEADER;
  /* SPDY/2 has no ':' names: only the mapped pseudo-headers may be submitted. */
  if (version == 2 && name[0] == ':' && wire_name(version, header).bytes[0] == ':')
    return SPEEDY_ERR_INVALID_HEADER;
  return 0;
}

/* Submitted fields grouped by wire name: a field is either the first of its name (it
 * carries the name and the joined value) or a follower, linked from the one before. */
typedef struct header_groups {
  uint32_t *next;     /* next field with the same wire name, or HDBLOCK_NO_NEXT */
  uint32_t *follower; /* 1 when an earlier field has the same wire name */
  uint32_t *heap;     /* NULL, or the arrays above when too many for the stack */
  uint32_t stack[2 * HDBLOCK_STACK_FIELDS];
} header_groups;

typedef struct wire_order_ctx {
  int version;
  const speedy_header *headers;
} wire_order_ctx;

/* Wire name, then submission order. */
static int wire_order(const void *ctx, uint32_t a, uint32_t b) {
  const wire_order_ctx *c = ctx;
  int order =
      span_compare(wire_name(c->version, &c->headers[a]), wire_name(c->version, &c->headers[b]));
  if (order != 0) return order;
  return (a > b) - (a < b);
}

/* Typical lists are small: linking equal names pair by pair beats sorting them. */
static void groups_build_pairwise(header_groups *groups, int version, const speedy_header *headers,
                                  size_t n) {
  groups->follower = groups->stack;
  groups->next = groups->stack + HDBLOCK_STACK_FIELDS;
  for (size_t i = 0; i < n; i++) {
    groups->follower[i] = 0;
    groups->next[i] = HDBLOCK_NO_NEXT;
  }
  for (size_t i = 0; i < n; i++) {
    if (groups->follower[i]) continue;
    name_span name = wire_name(version, &headers[i]);
    size_t last = i;
    for (size_t j = i + 1; j < n; j++) {
      if (groups->follower[j] || !span_equal(name, wire_name(version, &headers[j]))) continue;
      groups->next[last] = (uint32_t)j;
      groups->follower[j] = 1;
      last = j;
    }
  }
}

static int groups_build(header_groups *groups, speedy_mem *mem, int version,
                        const speedy_header *headers, size_t n) {
  uint32_t *order;
  groups->heap = NULL;
  if (n <= HDBLOCK_PAIRWISE_FIELDS) {
    groups_build_pairwise(groups, version, headers, n);
    return 0;
  }
  if (n <= HDBLOCK_STACK_FIELDS) {
    order = groups->stack;
    groups->next = groups->stack + HDBLOCK_STACK_FIELDS;
  } else {
    if (n > SIZE_MAX / (2 * sizeof(uint32_t))) return SPEEDY_ERR_NOMEM;
    groups->heap = speedy_mem_malloc(mem, 2 * n * sizeof(uint32_t));
    if (groups->heap == NULL) return SPEEDY_ERR_NOMEM;
    order = groups->heap;
    groups->next = groups->heap + n;
  }
  for (size_t i = 0; i < n; i++) order[i] = (uint32_t)i;
  wire_order_ctx ctx = {version, headers};
  index_sort(order, n, wire_order, &ctx);
  /* Equal names are adjacent and in submission order: link each to the next. */
  for (size_t k = 0; k < n; k++) {
    int same = k + 1 < n && span_equal(wire_name(version, &headers[order[k]]),
                                       wire_name(version, &headers[order[k + 1]]));
    groups->next[order[k]] = same ? order[k + 1] : HDBLOCK_NO_NEXT;
  }
  /* The sorted order is no longer needed: its array becomes the follower flags. */
  groups->follower = order;
  memset(groups->follower, 0, n * sizeof(uint32_t));
  for (size_t i = 0; i < n; i++)
    if (groups->next[i] != HDBLOCK_NO_NEXT) groups->follower[groups->next[i]] = 1;
  return 0;
}

static void groups_free(header_groups *groups, speedy_mem *mem) {
  speedy_mem_free(mem, groups->heap);
  groups->heap = NULL;
}

/* The joined value length of the group that starts at first. Returns 0, or
 * SPEEDY_ERR_INVALID_HEADER when it would not fit the version's length field, when a
 * repeated name has an empty value (joined, it would start or end with NUL or hold two
 * NULs in a row) or when a pseudo-header is repeated (a receiver refuses NUL-separated
 * values for it: block_check). */
static int group_value_len(int version, const speedy_header *headers, const header_groups *groups,
                           uint32_t first, size_t *out) {
  size_t max = length_max(version);
  size_t total = 0;
  int repeated = groups->next[first] != HDBLOCK_NO_NEXT;
  if (repeated && application_name(version, wire_name(version, &headers[first])).bytes[0] == ':')
    return SPEEDY_ERR_INVALID_HEADER;
  for (uint32_t i = first; i != HDBLOCK_NO_NEXT; i = groups->next[i]) {
    size_t len = headers[i].value_len;
    if (repeated && len == 0) return SPEEDY_ERR_INVALID_HEADER;
    size_t separator = i == first ? 0 : 1;
    if (len > max || separator > max - len || total > max - len - separator)
      return SPEEDY_ERR_INVALID_HEADER;
    total += len + separator;
  }
  *out = total;
  return 0;
}

/* Checks the groups against the version's limits and computes the serialised size. */
static int groups_check(int version, const speedy_header *headers, size_t n,
                        const header_groups *groups, size_t *serialised) {
  size_t width = length_width(version);
  size_t max = length_max(version);
  size_t names = 0;
  size_t total = width;
  for (size_t i = 0; i < n; i++) {
    if (groups->follower[i]) continue;
    if (++names > max) return SPEEDY_ERR_INVALID_HEADER;
    name_span name = wire_name(version, &headers[i]);
    if (name.len > max) return SPEEDY_ERR_INVALID_HEADER;
    size_t value_len;
    int rv = group_value_len(version, headers, groups, (uint32_t)i, &value_len);
    if (rv != 0) return rv;
    if (name.len > SIZE_MAX - 2 * width || value_len > SIZE_MAX - 2 * width - name.len)
      return SPEEDY_ERR_FRAME_TOO_LARGE;
    size_t field = 2 * width + name.len + value_len;
    if (total > SIZE_MAX - field) return SPEEDY_ERR_FRAME_TOO_LARGE;
    total += field;
  }
  *serialised = total;
  return 0;
}

/* The most bytes deflate can produce for len input bytes ending in a sync flush, at any
 * level, windowBits and memLevel: zlib's conservative deflateBound (stored or fixed
 * blocks cost at most 1/8 extra plus block headers) plus the zlib header with the
 * dictionary id and the flush marker, with room to spare. */
static size_t deflate_worst_case(size_t len) {
  if (len > SIZE_MAX / 2 - 64) return SIZE_MAX;
  return len + (len + 7) / 8 + (len + 63) / 64 + 64;
}

/* Where a serialised block goes: staged in chunk for deflate, or (flat != NULL) laid out
 * in flat, at most flat_cap bytes. */
typedef struct deflate_writer {
  spdy_hdblock_deflater *d;
  speedy_mem *mem;
  speedy_buf *out;
  size_t staged; /* bytes in chunk, or in flat */
  uint8_t *flat;
  size_t flat_cap;
  uint8_t chunk[HDBLOCK_CHUNK];
} deflate_writer;

/* Compresses len bytes of in into out. With Z_SYNC_FLUSH, returns once everything is
 * out. */
static int deflate_bytes(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                         const uint8_t *in, size_t len, int flush) {
  if (len > UINT_MAX) return SPEEDY_ERR_FRAME_TOO_LARGE;
  z_stream *zs = &d->zs;
  zs->next_in = (Bytef *)in; /* zlib reads through a non-const pointer */
  zs->avail_in = (uInt)len;
  for (;;) {
    size_t room = out->limit - speedy_buf_len(out);
    if (room == 0) return SPEEDY_ERR_FRAME_TOO_LARGE;
    int rv = speedy_buf_reserve(out, mem, room < HDBLOCK_OUT_STEP ? room : HDBLOCK_OUT_STEP);
    if (rv != 0) return rv;
    size_t space = out->capacity - out->end;
    zs->next_out = speedy_buf_tail(out);
    zs->avail_out = space > UINT_MAX ? UINT_MAX : (uInt)space;
    uInt before = zs->avail_out;
    int zrv = deflate(zs, flush);
    speedy_buf_commit(out, before - zs->avail_out);
    if (zrv == Z_BUF_ERROR && zs->avail_in == 0) break; /* nothing left to do */
    if (zrv != Z_OK) return SPEEDY_ERR_COMPRESSION;
    /* Without a flush zlib may keep output back; with one it is done when room is left. */
    if (zs->avail_in == 0 && (flush == Z_NO_FLUSH || zs->avail_out > 0)) break;
  }
  return 0;
}

/* Deflates the staged bytes into out. */
static int writer_deflate(deflate_writer *w, int flush) {
  int rv = deflate_bytes(w->d, w->mem, w->out, w->chunk, w->staged, flush);
  w->staged = 0;
  return rv;
}

static int writer_put(deflate_writer *w, const void *bytes, size_t len) {
  const uint8_t *p = bytes;
  if (w->flat != NULL) {
    if (len > w->flat_cap - w->staged) return SPEEDY_ERR_INVALID_ARGUMENT;
    if (len > 0) memcpy(w->flat + w->staged, p, len);
    w->staged += len;
    return 0;
  }
  while (len > 0) {
    if (w->staged == HDBLOCK_CHUNK) {
      int rv = writer_deflate(w, Z_NO_FLUSH);
      if (rv != 0) return rv;
    }
    size_t n = HDBLOCK_CHUNK - w->staged;
    if (n > len) n = len;
    memcpy(w->chunk + w->staged, p, n);
    w->staged += n;
    p += n;
    len -= n;
  }
  return 0;
}

static int writer_put_length(deflate_writer *w, int version, size_t value) {
  uint8_t bytes[4];
  if (version == 2) {
    bytes[0] = (uint8_t)(value >> 8);
    bytes[1] = (uint8_t)value;
    return writer_put(w, bytes, 2);
  }
  bytes[0] = (uint8_t)(value >> 24);
  bytes[1] = (uint8_t)(value >> 16);
  bytes[2] = (uint8_t)(value >> 8);
  bytes[3] = (uint8_t)value;
  return writer_put(w, bytes, 4);
}

static int writer_put_block(deflate_writer *w, int version, const speedy_header *headers, size_t n,
                            const header_groups *groups) {
  size_t names = 0;
  for (size_t i = 0; i < n; i++) names += !groups->follower[i];
  int rv = writer_put_length(w, version, names);
  for (size_t i = 0; i < n && rv == 0; i++) {
    if (groups->follower[i]) continue;
    name_span name = wire_name(version, &headers[i]);
    size_t value_len = 0;
    rv = group_value_len(version, headers, groups, (uint32_t)i, &value_len);
    if (rv == 0) rv = writer_put_length(w, version, name.len);
    if (rv == 0) rv = writer_put(w, name.bytes, name.len);
    if (rv == 0) rv = writer_put_length(w, version, value_len);
    for (uint32_t j = (uint32_t)i; j != HDBLOCK_NO_NEXT && rv == 0; j = groups->next[j]) {
      if (j != i) rv = writer_put(w, "", 1); /* the NUL between joined values */
      if (rv == 0) rv = writer_put(w, headers[j].value, headers[j].value_len);
    }
  }
  return rv;
}

/* The field checks and the grouping every block goes through, at submit time
 * (spdy_hdblock_measure) and again when it is compressed. On success groups is built and
 * the caller frees it. */
static int submitted_check(int version, speedy_mem *mem, const speedy_header *headers,
                           size_t n_headers, header_groups *groups, size_t *serialised) {
  if (n_headers >= HDBLOCK_NO_NEXT) return SPEEDY_ERR_INVALID_HEADER;
  for (size_t i = 0; i < n_headers; i++) {
    int rv = header_check(version, &headers[i]);
    if (rv != 0) return rv;
  }
  int rv = groups_build(groups, mem, version, headers, n_headers);
  if (rv != 0) return rv;
  rv = groups_check(version, headers, n_headers, groups, serialised);
  if (rv != 0) groups_free(groups, mem);
  return rv;
}

int spdy_hdblock_measure(int version, speedy_mem *mem, const speedy_header *headers,
                         size_t n_headers, size_t *serialised) {
  if (mem == NULL || (headers == NULL && n_headers > 0) || serialised == NULL)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  header_groups groups;
  int rv = submitted_check(version, mem, headers, n_headers, &groups, serialised);
  if (rv != 0) return rv;
  groups_free(&groups, mem);
  return 0;
}

size_t spdy_hdblock_compressed_max(size_t serialised) { return deflate_worst_case(serialised); }

int spdy_hdblock_serialise(int version, speedy_mem *mem, const speedy_header *headers,
                           size_t n_headers, uint8_t *dst, size_t len) {
  if (mem == NULL || (headers == NULL && n_headers > 0) || dst == NULL)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  if (n_headers >= HDBLOCK_NO_NEXT) return SPEEDY_ERR_INVALID_HEADER;
  header_groups groups;
  int rv = groups_build(&groups, mem, version, headers, n_headers);
  if (rv != 0) return rv;
  deflate_writer writer;
  writer.d = NULL;
  writer.mem = mem;
  writer.out = NULL;
  writer.staged = 0;
  writer.flat = dst;
  writer.flat_cap = len;
  rv = writer_put_block(&writer, version, headers, n_headers, &groups);
  groups_free(&groups, mem);
  if (rv == 0 && writer.staged != len) rv = SPEEDY_ERR_INVALID_ARGUMENT;
  return rv;
}

/* Before a block of serialised bytes is compressed into out: refuses it when out might
 * not hold the result (zlib has seen nothing), then writes the zlib header if this is the
 * context's first block. *before: out's length to roll back to. */
static int deflate_start(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                         size_t serialised, size_t *before) {
  if (deflate_worst_case(serialised) > out->limit - speedy_buf_len(out))
    return SPEEDY_ERR_FRAME_TOO_LARGE;
  *before = speedy_buf_len(out);
  if (!d->header_pending) return 0;
  return speedy_buf_append(out, mem, d->header, sizeof(d->header)); /* zlib untouched */
}

/* After zlib was given the block: on failure it has consumed part of it, so the peer's
 * stream can no longer match ours and the context is broken for good. */
static int deflate_finish(spdy_hdblock_deflater *d, speedy_buf *out, size_t before, int rv) {
  if (rv != 0) {
    d->initialised = CONTEXT_BROKEN;
    out->end = out->start + before;
    return rv;
  }
  d->header_pending = 0;
  return 0;
}

static int deflater_usable(const spdy_hdblock_deflater *d) {
  if (d->initialised == CONTEXT_READY) return 0;
  return d->initialised == CONTEXT_BROKEN ? SPEEDY_ERR_COMPRESSION : SPEEDY_ERR_INVALID_ARGUMENT;
}

int spdy_hdblock_deflate_serialised(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                                    const uint8_t *block, size_t len) {
  if (d == NULL || mem == NULL || out == NULL || (block == NULL && len > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  size_t before = 0;
  int rv = deflater_usable(d);
  if (rv == 0) rv = deflate_start(d, mem, out, len, &before);
  if (rv != 0) return rv;
  return deflate_finish(d, out, before, deflate_bytes(d, mem, out, block, len, Z_SYNC_FLUSH));
}

int spdy_hdblock_deflate(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                         const speedy_header *headers, size_t n_headers) {
  if (d == NULL || mem == NULL || out == NULL || (headers == NULL && n_headers > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  int rv = deflater_usable(d);
  if (rv != 0) return rv;
  int version = d->version;
  header_groups groups;
  size_t serialised = 0;
  rv = submitted_check(version, mem, headers, n_headers, &groups, &serialised);
  if (rv != 0) return rv;
  size_t before = 0;
  rv = deflate_start(d, mem, out, serialised, &before);
  if (rv != 0) {
    groups_free(&groups, mem);
    return rv;
  }
  deflate_writer writer;
  writer.d = d;
  writer.mem = mem;
  writer.out = out;
  writer.staged = 0;
  writer.flat = NULL;
  rv = writer_put_block(&writer, version, headers, n_headers, &groups);
  if (rv == 0) rv = writer_deflate(&writer, Z_SYNC_FLUSH);
  groups_free(&groups, mem);
  return deflate_finish(d, out, before, rv);
}

size_t spdy_hdblock_serialised_size(int version, const speedy_header *headers, size_t n_headers) {
  size_t width = length_width(version);
  size_t total = width;
  /* No allocator here, so repeated names are found by looking back: O(n^2), which is
   * fine for statistics on submitted headers; spdy_hdblock_deflate sorts instead. */
  for (size_t i = 0; i < n_headers; i++) {
    name_span name = wire_name(version, &headers[i]);
    int follower = 0;
    for (size_t j = 0; j < i && !follower; j++)
      follower = span_equal(name, wire_name(version, &headers[j]));
    total = add_saturating(total, follower ? 1 : add_saturating(2 * width, name.len));
    total = add_saturating(total, headers[i].value_len);
  }
  return total;
}

/* ---- Inflater --------------------------------------------------------------------- */

int spdy_hdblock_inflater_init(spdy_hdblock_inflater *inf, speedy_mem *mem, int version,
                               uint32_t max_block) {
  if (inf == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  inf->initialised = CONTEXT_NONE;
  speedy_buf_init(&inf->scratch, max_block);
  if (mem == NULL || (version != 2 && version != 3) || max_block == 0)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  memset(&inf->zs, 0, sizeof(inf->zs));
  inf->zs.zalloc = speedy_mem_zalloc;
  inf->zs.zfree = speedy_mem_zfree;
  inf->zs.opaque = mem;
  /* Raw inflate; the window is set from the peer's zlib header (read_zlib_header). Until
   * then zlib has allocated only its state, not the window. */
  int rv = inflateInit2(&inf->zs, -15);
  if (rv == Z_MEM_ERROR) return SPEEDY_ERR_NOMEM;
  if (rv != Z_OK) return SPEEDY_ERR_INVALID_ARGUMENT;
  inf->header_done = 0;
  inf->version = version;
  inf->initialised = CONTEXT_READY;
  return 0;
}

void spdy_hdblock_inflater_free(spdy_hdblock_inflater *inf, speedy_mem *mem) {
  if (inf == NULL) return;
  if (inf->initialised != CONTEXT_NONE) inflateEnd(&inf->zs);
  inf->initialised = CONTEXT_NONE;
  if (mem != NULL) speedy_buf_free(&inf->scratch, mem);
}

/* Reads the zlib header (RFC 1950) at the start of the peer's first block: method 8, a
 * window of 2^(CINFO+8) bytes, and the SPDY dictionary named by its Adler-32 when FDICT
 * is set (another dictionary means another protocol). The window becomes the one the
 * peer declares — 8 KiB for our own peers' 2^13 instead of always 32 KiB; a peer that
 * then reaches further back is a compression error. *used: the header's bytes. */
static int read_zlib_header(spdy_hdblock_inflater *inf, const uint8_t *in, size_t in_len,
                            size_t *used) {
  if (in_len < 2) return SPEEDY_ERR_COMPRESSION;
  unsigned cmf = in[0], flg = in[1];
  if ((cmf & 15) != 8 || (cmf >> 4) > 7 || (cmf << 8 | flg) % 31 != 0)
    return SPEEDY_ERR_COMPRESSION;
  int rv = inflateReset2(&inf->zs, -(int)((cmf >> 4) + 8));
  if (rv != Z_OK) return SPEEDY_ERR_COMPRESSION;
  *used = 2;
  if ((flg & 0x20) == 0) return 0; /* no dictionary: zlib's wrapper accepted that too */
  const uint8_t *dict = inf->version == 2 ? spdy_hdblock_dict_v2 : spdy_hdblock_dict_v3;
  uInt dict_len = (uInt)(inf->version == 2 ? spdy_hdblock_dict_v2_len : spdy_hdblock_dict_v3_len);
  if (in_len < 6 || spdy_get_u32(in + 2) != adler32(adler32(0, Z_NULL, 0), dict, dict_len))
    return SPEEDY_ERR_COMPRESSION;
  rv = inflateSetDictionary(&inf->zs, dict, dict_len);
  if (rv == Z_MEM_ERROR) return SPEEDY_ERR_NOMEM;
  if (rv != Z_OK) return SPEEDY_ERR_COMPRESSION;
  *used = 6;
  return 0;
}

static int inflate_block(spdy_hdblock_inflater *inf, speedy_mem *mem, const uint8_t *in,
                         size_t in_len) {
  /* Every block ends with a sync flush, so even an empty one has bytes. */
  if (in_len == 0) return SPEEDY_ERR_COMPRESSION;
  if (!inf->header_done) {
    size_t used = 0;
    int rv = read_zlib_header(inf, in, in_len, &used);
    if (rv != 0) return rv;
    inf->header_done = 1;
    in += used;
    in_len -= used;
    if (in_len == 0) return SPEEDY_ERR_COMPRESSION;
  }
  z_stream *zs = &inf->zs;
  speedy_buf *scratch = &inf->scratch;
  const uint8_t *rest = in;
  size_t rest_len = in_len;
  uint8_t probe;
  int data_type = 0; /* zlib's data_type after the last call that made progress */
  zs->avail_in = 0;
  for (;;) {
    if (zs->avail_in == 0 && rest_len > 0) {
      uInt n = rest_len > UINT_MAX ? UINT_MAX : (uInt)rest_len;
      zs->next_in = (Bytef *)rest; /* zlib reads through a non-const pointer */
      zs->avail_in = n;
      rest += n;
      rest_len -= n;
    }
    /* At the cap, one byte of probe space tells whether more output is coming. */
    int probing = 0;
    if (scratch->capacity == scratch->end) {
      if (speedy_buf_len(scratch) >= scratch->limit) {
        probing = 1;
      } else {
        int rv = speedy_buf_reserve(scratch, mem, 1); /* grows geometrically, up to limit */
        if (rv != 0) return rv == SPEEDY_ERR_NOMEM ? rv : SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE;
      }
    }
    size_t room = probing ? 1 : scratch->capacity - scratch->end;
    zs->next_out = probing ? &probe : speedy_buf_tail(scratch);
    zs->avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
    uInt before = zs->avail_out;
    uInt in_before = zs->avail_in;
    int zrv = inflate(zs, Z_SYNC_FLUSH);
    size_t produced = before - zs->avail_out;
    if (probing && produced > 0) return SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE;
    if (!probing) speedy_buf_commit(scratch, produced);
    switch (zrv) {
    case Z_OK:
    case Z_BUF_ERROR: /* no progress possible: judged below */
      /* A call without progress says nothing about the position (zlib even reports a
       * block boundary as inside a block then). */
      if (produced > 0 || zs->avail_in != in_before) data_type = zs->data_type;
      break;
    case Z_MEM_ERROR:
      return SPEEDY_ERR_NOMEM;
    default: /* Z_DATA_ERROR, or Z_STREAM_END: a SPDY peer never ends its stream */
      return SPEEDY_ERR_COMPRESSION;
    }
    if (zs->avail_in == 0 && rest_len == 0 && zs->avail_out > 0) break;
    if (zrv == Z_BUF_ERROR && zs->avail_out > 0) return SPEEDY_ERR_COMPRESSION;
  }
  /* The block must end on a sync flush: inflate waits for the next block's header
   * (zlib.h: data_type + 128) at a byte boundary (no unused bits in the low bits). */
  if ((data_type & 128) == 0 || (data_type & 63) != 0) return SPEEDY_ERR_COMPRESSION;
  return 0;
}

int spdy_hdblock_inflate(spdy_hdblock_inflater *inf, speedy_mem *mem, const uint8_t *in,
                         size_t in_len, const uint8_t **out, size_t *out_len) {
  static const uint8_t empty[1] = {0};
  if (inf == NULL || mem == NULL || out == NULL || out_len == NULL || (in == NULL && in_len > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  if (inf->initialised != CONTEXT_READY)
    return inf->initialised == CONTEXT_BROKEN ? SPEEDY_ERR_COMPRESSION
                                              : SPEEDY_ERR_INVALID_ARGUMENT;
  /* The previous block is no longer the caller's: drop it, and its storage if large. */
  speedy_buf_reset(&inf->scratch);
  speedy_buf_shrink(&inf->scratch, mem, HDBLOCK_SCRATCH_KEEP);
  int rv = inflate_block(inf, mem, in, in_len);
  if (rv != 0) {
    inf->initialised = CONTEXT_BROKEN;
    speedy_buf_reset(&inf->scratch);
    return rv;
  }
  *out = inf->scratch.data != NULL ? speedy_buf_head(&inf->scratch) : empty;
  *out_len = speedy_buf_len(&inf->scratch);
  return 0;
}

/* ---- Parser ----------------------------------------------------------------------- */

/* A received field's name: NUL-free, lower case, at least one byte. */
static int name_valid(const uint8_t *name, size_t len) {
  if (len == 0) return 0;
  for (size_t i = 0; i < len; i++)
    if (name[i] == 0 || (name[i] >= 'A' && name[i] <= 'Z')) return 0;
  return 1;
}

/* A received value: empty (SPDY/3 only), or NUL-separated non-empty values. */
static int value_valid(int version, const uint8_t *value, size_t len) {
  if (len == 0) return version != 2; /* SPDY/2: values are never empty */
  if (value[0] == 0 || value[len - 1] == 0) return 0;
  const uint8_t *p = value;
  const uint8_t *end = value + len;
  while ((p = memchr(p, 0, (size_t)(end - p))) != NULL) {
    if (p[1] == 0) return 0; /* p is before the last byte, which is not NUL */
    p++;
  }
  return 1;
}

typedef struct field_order_ctx {
  int version;
  size_t width;
  const uint8_t *block;
} field_order_ctx;

/* The application name of the field whose name length is at offset. */
static name_span field_name(const field_order_ctx *c, uint32_t offset) {
  name_span name = {c->block + offset + c->width, read_length(c->block + offset, c->width)};
  return application_name(c->version, name);
}

static int field_order(const void *ctx, uint32_t a, uint32_t b) {
  return span_compare(field_name(ctx, a), field_name(ctx, b));
}

/* Walks the block once, checking every rule but duplicates, and notes each field's
 * offset in index. */
static int block_check(int version, const uint8_t *block, size_t len, size_t count,
                       uint32_t *index) {
  size_t width = length_width(version);
  size_t pos = width;
  for (size_t i = 0; i < count; i++) {
    index[i] = (uint32_t)pos;
    if (len - pos < width) return SPEEDY_ERR_INVALID_HEADER;
    size_t name_len = read_length(block + pos, width);
    pos += width;
    if (name_len > len - pos) return SPEEDY_ERR_INVALID_HEADER;
    if (!name_valid(block + pos, name_len)) return SPEEDY_ERR_INVALID_HEADER;
    /* SPDY/2 has no ':' names; taking them would let a peer smuggle a second :method
     * past the v2 -> v3 name mapping. */
    if (version == 2 && block[pos] == ':') return SPEEDY_ERR_INVALID_HEADER;
    name_span name = application_name(version, (name_span){block + pos, name_len});
    pos += name_len;
    if (len - pos < width) return SPEEDY_ERR_INVALID_HEADER;
    size_t value_len = read_length(block + pos, width);
    pos += width;
    if (value_len > len - pos) return SPEEDY_ERR_INVALID_HEADER;
    if (!value_valid(version, block + pos, value_len)) return SPEEDY_ERR_INVALID_HEADER;
    /* A pseudo-header (SPDY/2's method, url, ... included) has one value: NUL-separated
     * values would deliver it twice, past the duplicate check. */
    if (name.bytes[0] == ':' && value_len > 0 && memchr(block + pos, 0, value_len) != NULL)
      return SPEEDY_ERR_INVALID_HEADER;
    pos += value_len;
  }
  return pos == len ? 0 : SPEEDY_ERR_INVALID_HEADER; /* no trailing bytes */
}

/* Emits every field of a checked block, one call per NUL-separated value. */
static int block_emit(int version, const uint8_t *block, size_t count, spdy_hdblock_emit_fn emit,
                      void *ctx) {
  size_t width = length_width(version);
  size_t pos = width;
  for (size_t i = 0; i < count; i++) {
    name_span raw = {block + pos + width, read_length(block + pos, width)};
    pos += width + raw.len;
    name_span name = application_name(version, raw);
    const uint8_t *value = block + pos + width;
    size_t value_len = read_length(block + pos, width);
    pos += width + value_len;
    speedy_header header = {(const char *)name.bytes, name.len, (const char *)value, 0};
    size_t start = 0;
    for (;;) { /* each NUL-separated value (an empty value is one call too) */
      const uint8_t *nul = start < value_len ? memchr(value + start, 0, value_len - start) : NULL;
      size_t end = nul != NULL ? (size_t)(nul - value) : value_len;
      header.value = (const char *)value + start;
      header.value_len = end - start;
      int rv = emit(ctx, &header);
      if (rv != 0) return rv;
      if (nul == NULL) break;
      start = end + 1;
    }
  }
  return 0;
}

int spdy_hdblock_parse(int version, speedy_mem *mem, const uint8_t *block, size_t len,
                       spdy_hdblock_emit_fn emit, void *ctx) {
  if ((version != 2 && version != 3) || mem == NULL || emit == NULL || (block == NULL && len > 0))
    return SPEEDY_ERR_INVALID_ARGUMENT;
  size_t width = length_width(version);
  /* Offsets are indexed as 32 bits; no frame carries a block that large. */
  if (len < width || len > UINT32_MAX) return SPEEDY_ERR_INVALID_HEADER;
  size_t count = read_length(block, width);
  /* Each field takes two lengths and a name byte at least: a lying count ends here. */
  if (count > (len - width) / (2 * width + 1)) return SPEEDY_ERR_INVALID_HEADER;

  uint32_t stack[HDBLOCK_STACK_FIELDS];
  uint32_t *index = stack;
  if (count > HDBLOCK_STACK_FIELDS) {
    index = speedy_mem_malloc(mem, count * sizeof(uint32_t)); /* count < len / 5: no wrap */
    if (index == NULL) return SPEEDY_ERR_NOMEM;
  }
  int rv = block_check(version, block, len, count, index);
  if (rv == 0) {
    /* No name twice, compared as the application will see them (SPDY/2 "url" and
     * ":path" are the same name). Sorted, duplicates are neighbours. */
    field_order_ctx order = {version, width, block};
    if (count <= HDBLOCK_PAIRWISE_FIELDS) {
      /* Typical blocks are small: comparing pairs beats sorting them. */
      for (size_t i = 1; i < count && rv == 0; i++) {
        name_span name = field_name(&order, index[i]);
        for (size_t j = 0; j < i && rv == 0; j++)
          if (span_equal(name, field_name(&order, index[j]))) rv = SPEEDY_ERR_INVALID_HEADER;
      }
    } else {
      index_sort(index, count, field_order, &order);
      for (size_t i = 1; i < count && rv == 0; i++)
        if (span_equal(field_name(&order, index[i - 1]), field_name(&order, index[i])))
          rv = SPEEDY_ERR_INVALID_HEADER;
    }
  }
  if (index != stack) speedy_mem_free(mem, index);
  if (rv != 0) return rv;
  return block_emit(version, block, count, emit, ctx);
}

int spdy_hdblock_emit_checked(int version, const uint8_t *block, size_t len,
                              spdy_hdblock_emit_fn emit, void *ctx) {
  if ((version != 2 && version != 3) || emit == NULL || block == NULL)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  size_t width = length_width(version);
  if (len < width) return SPEEDY_ERR_INVALID_HEADER;
  return block_emit(version, block, read_length(block, width), emit, ctx);
}
