/* hpack.c — HPACK (RFC 7541): integers, the static and dynamic tables, the decoder and the
 * encoder with its indexing policy (see hpack.h). The Huffman code is in hpack_huffman.c.
 *
 * The dynamic table is two rings, with no allocation per entry: entry descriptors indexed
 * by a sequence number (the n-th entry ever inserted has number n, modulo 2^32), and the
 * entries' octets, each entry's name and value contiguous. An entry that does not fit
 * before the end of the octet ring starts again at its beginning, leaving a gap; with
 * room for twice the table's maximum size that always succeeds (the live octets plus one
 * gap, which is shorter than the entry that caused it, stay under it), so the ring grows,
 * doubling and compacting, only up to that. Both rings start small.
 *
 * The encoder also finds entries by hash: per bucket, the newest entry's number, and per
 * entry the number of the next older one in its bucket. Entries leave the table oldest
 * first, so a chain simply ends at the first entry no longer in it; nothing is unlinked.
 */
#include "hpack.h"

#include <string.h>

/* ---- Errors -------------------------------------------------------------------------- */

const char *speedy_hpack_strerror(int code) {
  switch (code) {
  case 0:
    return "success";
  case SPEEDY_HPACK_ERR_INVALID_ARGUMENT:
    return "invalid argument";
  case SPEEDY_HPACK_ERR_NOMEM:
    return "out of memory";
  case SPEEDY_HPACK_ERR_TRUNCATED:
    return "header block ends inside a field representation";
  case SPEEDY_HPACK_ERR_INTEGER:
    return "HPACK integer over its limit or too long";
  case SPEEDY_HPACK_ERR_INDEX:
    return "HPACK index 0 or past the end of the tables";
  case SPEEDY_HPACK_ERR_HUFFMAN:
    return "invalid Huffman-coded string (EOS or bad padding)";
  case SPEEDY_HPACK_ERR_TABLE_SIZE:
    return "dynamic table size update above the maximum";
  case SPEEDY_HPACK_ERR_SIZE_UPDATE:
    return "dynamic table size update after a field, or missing after a SETTINGS reduction";
  case SPEEDY_HPACK_ERR_STRING_TOO_LONG:
    return "HPACK string literal too long";
  case SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE:
    return "decoded header list over its size cap";
  case SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL:
    return "output buffer too small";
  default:
    return "unknown HPACK error";
  }
}

/* ---- Integers (RFC 7541 5.1) --------------------------------------------------------- */

size_t speedy_hpack_int_encode(uint8_t *out, uint32_t value, unsigned prefix_bits,
                               uint8_t first_byte_bits) {
  uint32_t mask = (1u << prefix_bits) - 1;
  uint8_t high = (uint8_t)(first_byte_bits & ~mask);
  if (value < mask) {
    out[0] = (uint8_t)(high | value);
    return 1;
  }
  out[0] = (uint8_t)(high | mask);
  value -= mask;
  size_t n = 1;
  while (value >= 128) {
    out[n++] = (uint8_t)((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out[n++] = (uint8_t)value;
  return n;
}

/* Five continuation octets carry 35 bits: enough for any value below 2^32 however the
 * prefix is filled. A sixth is refused even when it adds nothing (overlong zeros). */
#define INT_MAX_CONTINUATION 5

int speedy_hpack_int_decode(const uint8_t *in, size_t len, unsigned prefix_bits, uint32_t max,
                            uint32_t *value) {
  if (len == 0) return 0;
  uint32_t mask = (1u << prefix_bits) - 1;
  uint32_t v = in[0] & mask;
  if (v < mask) {
    if (v > max) return SPEEDY_HPACK_ERR_INTEGER;
    *value = v;
    return 1;
  }
  uint64_t acc = v;
  unsigned shift = 0;
  for (size_t i = 1;; i++) {
    if (i > INT_MAX_CONTINUATION) return SPEEDY_HPACK_ERR_INTEGER;
    if (i >= len) return 0;
    acc += (uint64_t)(in[i] & 0x7f) << shift;
    if (acc > max) return SPEEDY_HPACK_ERR_INTEGER;
    if (!(in[i] & 0x80)) {
      *value = (uint32_t)acc;
      return (int)(i + 1);
    }
    shift += 7;
  }
}

/* ---- The static table (RFC 7541 Appendix A) ------------------------------------------ */

typedef struct static_entry {
  const char *name;
  uint8_t name_len;
  const char *value;
  uint8_t value_len;
} static_entry;

#define STATIC_ENTRY(n, v)                                                                         \
  { n, sizeof(n) - 1, v, sizeof(v) - 1 }
static const static_entry static_table[SPEEDY_HPACK_STATIC_ENTRIES + 1] = {
    {"", 0, "", 0}, /* index 0 is not used */
    STATIC_ENTRY(":authority", ""),
    STATIC_ENTRY(":method", "GET"),
    STATIC_ENTRY(":method", "POST"),
    STATIC_ENTRY(":path", "/"),
    STATIC_ENTRY(":path", "/index.html"),
    STATIC_ENTRY(":scheme", "http"),
    STATIC_ENTRY(":scheme", "https"),
    STATIC_ENTRY(":status", "200"),
    STATIC_ENTRY(":status", "204"),
    STATIC_ENTRY(":status", "206"),
    STATIC_ENTRY(":status", "304"),
    STATIC_ENTRY(":status", "400"),
    STATIC_ENTRY(":status", "404"),
    STATIC_ENTRY(":status", "500"),
    STATIC_ENTRY("accept-charset", ""),
    STATIC_ENTRY("accept-encoding", "gzip, deflate"),
    STATIC_ENTRY("accept-language", ""),
    STATIC_ENTRY("accept-ranges", ""),
    STATIC_ENTRY("accept", ""),
    STATIC_ENTRY("access-control-allow-origin", ""),
    STATIC_ENTRY("age", ""),
    STATIC_ENTRY("allow", ""),
    STATIC_ENTRY("authorization", ""),
    STATIC_ENTRY("cache-control", ""),
    STATIC_ENTRY("content-disposition", ""),
    STATIC_ENTRY("content-encoding", ""),
    STATIC_ENTRY("content-language", ""),
    STATIC_ENTRY("content-length", ""),
    STATIC_ENTRY("content-location", ""),
    STATIC_ENTRY("content-range", ""),
    STATIC_ENTRY("content-type", ""),
    STATIC_ENTRY("cookie", ""),
    STATIC_ENTRY("date", ""),
    STATIC_ENTRY("etag", ""),
    STATIC_ENTRY("expect", ""),
    STATIC_ENTRY("expires", ""),
    STATIC_ENTRY("from", ""),
    STATIC_ENTRY("host", ""),
    STATIC_ENTRY("if-match", ""),
    STATIC_ENTRY("if-modified-since", ""),
    STATIC_ENTRY("if-none-match", ""),
    STATIC_ENTRY("if-range", ""),
    STATIC_ENTRY("if-unmodified-since", ""),
    STATIC_ENTRY("last-modified", ""),
    STATIC_ENTRY("link", ""),
    STATIC_ENTRY("location", ""),
    STATIC_ENTRY("max-forwards", ""),
    STATIC_ENTRY("proxy-authenticate", ""),
    STATIC_ENTRY("proxy-authorization", ""),
    STATIC_ENTRY("range", ""),
    STATIC_ENTRY("referer", ""),
    STATIC_ENTRY("refresh", ""),
    STATIC_ENTRY("retry-after", ""),
    STATIC_ENTRY("server", ""),
    STATIC_ENTRY("set-cookie", ""),
    STATIC_ENTRY("strict-transport-security", ""),
    STATIC_ENTRY("transfer-encoding", ""),
    STATIC_ENTRY("user-agent", ""),
    STATIC_ENTRY("vary", ""),
    STATIC_ENTRY("via", ""),
    STATIC_ENTRY("www-authenticate", ""),
};

/* The first index of each distinct static name, grouped by name length:
 * static_names_by_length[static_length_start[n] .. static_length_start[n + 1]) have n
 * octets. Entries sharing a name are adjacent in the table. */
#define STATIC_NAME_MAX 28
static const uint8_t static_names_by_length[] = {
    21, 60, 33, 34, 37, 38, 45, 59, 4,  22, 50, 19, 32, 35, 54, 2,  6,  8,
    36, 51, 52, 39, 42, 46, 1,  55, 58, 53, 31, 47, 18, 23, 24, 30, 41, 44,
    15, 28, 16, 17, 26, 27, 29, 61, 40, 57, 48, 25, 43, 49, 56, 20,
};
static const uint8_t static_length_start[STATIC_NAME_MAX + 2] = {
    0,  0,  0,  0,  2,  8,  11, 15, 21, 24, 24, 27, 28, 30, 36,
    38, 40, 44, 46, 47, 50, 50, 50, 50, 50, 50, 51, 51, 52, 52,
};

int speedy_hpack_static_entry(uint32_t index, speedy_hpack_field *out) {
  if (index == 0 || index > SPEEDY_HPACK_STATIC_ENTRIES) return SPEEDY_HPACK_ERR_INDEX;
  const static_entry *s = &static_table[index];
  *out = (speedy_hpack_field){(const uint8_t *)s->name, s->name_len, (const uint8_t *)s->value,
                              s->value_len, 0};
  return 0;
}

/* Returns the index of the static entry equal to (name, value), or 0; *name_index gets the
 * first index with that name, or 0. */
static unsigned static_find(const uint8_t *name, size_t name_len, const uint8_t *value,
                            size_t value_len, unsigned *name_index) {
  *name_index = 0;
  if (name_len > STATIC_NAME_MAX) return 0;
  for (unsigned k = static_length_start[name_len]; k < static_length_start[name_len + 1]; k++) {
    unsigned i = static_names_by_length[k];
    /* Most names are not static: the last octet tells most apart without a call. */
    if (static_table[i].name[name_len - 1] != name[name_len - 1] ||
        memcmp(static_table[i].name, name, name_len) != 0)
      continue;
    *name_index = i;
    /* Entries sharing a name are adjacent. */
    for (unsigned j = i; j <= SPEEDY_HPACK_STATIC_ENTRIES && static_table[j].name_len == name_len &&
                         (j == i || strcmp(static_table[j].name, static_table[i].name) == 0);
         j++) {
      if (static_table[j].value_len == value_len &&
          (value_len == 0 || memcmp(static_table[j].value, value, value_len) == 0))
        return j;
    }
    return 0;
  }
  return 0;
}

/* ---- The dynamic table (RFC 7541 2.3.2, 4) ------------------------------------------- */

typedef struct hpack_entry {
  uint32_t offset; /* name at data + offset, value right after it */
  uint32_t name_len;
  uint32_t value_len;
  uint32_t name_hash;  /* encoder only */
  uint32_t field_hash; /* encoder only */
  uint32_t next_name;  /* encoder only: number of the next older entry in the same bucket */
  uint32_t next_field;
  uint8_t ok; /* decoder only: SPEEDY_HPACK_NAME_OK | SPEEDY_HPACK_VALUE_OK verdicts */
} hpack_entry;

typedef struct hpack_table {
  speedy_mem *mem;
  uint8_t *data; /* the octet ring */
  size_t data_cap;
  size_t head;       /* where the next entry would start */
  size_t span;       /* octets from the oldest entry's start to head, gaps included */
  hpack_entry *ring; /* descriptor of entry number n at ring[n & (ring_cap - 1)] */
  uint32_t ring_cap; /* a power of two, or 0 */
  uint32_t inserted; /* entries ever inserted (mod 2^32): the next entry's number */
  uint32_t count;    /* entries in the table */
  size_t size;       /* RFC 7541 4.1 */
  uint32_t max_size; /* the maximum in force */
  int indexed;       /* keep the hash chains (encoder) */
  uint32_t *name_buckets, *field_buckets; /* ring_cap * 2 each when indexed */
} hpack_table;

#define RING_MIN 16u
#define DATA_MIN 512u
/* table_trim gives back no less than this many octets of the octet ring. */
#define TRIM_SLACK 512u

static void table_init(hpack_table *t, speedy_mem *mem, uint32_t max_size, int indexed) {
  memset(t, 0, sizeof *t);
  t->mem = mem;
  t->max_size = max_size;
  t->indexed = indexed;
}

static void table_free(hpack_table *t) {
  speedy_mem_free(t->mem, t->data);
  speedy_mem_free(t->mem, t->ring);
  speedy_mem_free(t->mem, t->name_buckets);
  speedy_mem_free(t->mem, t->field_buckets);
  memset(t, 0, sizeof *t);
}

static inline hpack_entry *table_entry_by_number(const hpack_table *t, uint32_t number) {
  return &t->ring[number & (t->ring_cap - 1)];
}

/* Entry i of the dynamic table, 0 the newest (HPACK index 62 + i). i < count. */
static inline hpack_entry *table_entry(const hpack_table *t, uint32_t i) {
  return table_entry_by_number(t, t->inserted - 1 - i);
}

/* Whether entry number n is still in the table. */
static inline int table_live(const hpack_table *t, uint32_t number) {
  return (uint32_t)(t->inserted - 1 - number) < t->count;
}

/* The octets of the entries' names and values (no gaps, no overhead). */
static inline size_t table_octets(const hpack_table *t) {
  return t->size - (size_t)t->count * SPEEDY_HPACK_ENTRY_OVERHEAD;
}

static void table_evict_oldest(hpack_table *t) {
  hpack_entry *e = table_entry_by_number(t, t->inserted - t->count);
  t->size -= (size_t)e->name_len + e->value_len + SPEEDY_HPACK_ENTRY_OVERHEAD;
  t->count--;
  if (t->count == 0) {
    t->head = 0;
    t->span = 0;
    return;
  }
  size_t next = table_entry_by_number(t, t->inserted - t->count)->offset;
  t->span -= next >= e->offset ? next - e->offset : t->data_cap - e->offset + next;
}

static void table_set_max(hpack_table *t, uint32_t max_size) {
  t->max_size = max_size;
  while (t->size > max_size) table_evict_oldest(t);
}

static void buckets_link(hpack_table *t, uint32_t number) {
  hpack_entry *e = table_entry_by_number(t, number);
  uint32_t mask = t->ring_cap * 2 - 1;
  e->next_name = t->name_buckets[e->name_hash & mask];
  t->name_buckets[e->name_hash & mask] = number;
  e->next_field = t->field_buckets[e->field_hash & mask];
  t->field_buckets[e->field_hash & mask] = number;
}

/* Gives the descriptor ring (and the buckets) cap slots, a power of two no smaller than
 * the entry count, keeping every entry's number. */
static int table_resize_ring(hpack_table *t, uint32_t cap) {
  hpack_entry *ring = speedy_mem_malloc(t->mem, (size_t)cap * sizeof *ring);
  if (ring == NULL) return SPEEDY_HPACK_ERR_NOMEM;
  uint32_t *names = NULL, *fields = NULL;
  if (t->indexed) {
    names = speedy_mem_calloc(t->mem, (size_t)cap * 2, sizeof *names);
    fields = speedy_mem_calloc(t->mem, (size_t)cap * 2, sizeof *fields);
    if (names == NULL || fields == NULL) {
      speedy_mem_free(t->mem, names);
      speedy_mem_free(t->mem, fields);
      speedy_mem_free(t->mem, ring);
      return SPEEDY_HPACK_ERR_NOMEM;
    }
  }
  for (uint32_t k = 0; k < t->count; k++) {
    uint32_t number = t->inserted - t->count + k;
    ring[number & (cap - 1)] = *table_entry_by_number(t, number);
  }
  speedy_mem_free(t->mem, t->ring);
  speedy_mem_free(t->mem, t->name_buckets);
  speedy_mem_free(t->mem, t->field_buckets);
  t->ring = ring;
  t->ring_cap = cap;
  t->name_buckets = names;
  t->field_buckets = fields;
  if (t->indexed) {
    /* Empty buckets hold 0, which names a live entry only during the first entries; a walk
     * checks hashes and contents, so a stray start costs a comparison, never a result. */
    for (uint32_t k = 0; k < t->count; k++) buckets_link(t, t->inserted - t->count + k);
  }
  return 0;
}

/* Moves the live entries, oldest first, to the start of a new octet ring of new_cap
 * octets. The old ring is returned in *old (the caller frees it once it has copied what
 * it needed from it: a new entry may take its name from an evicted entry). */
static int table_regrow_data(hpack_table *t, size_t new_cap, uint8_t **old) {
  uint8_t *data = speedy_mem_malloc(t->mem, new_cap);
  if (data == NULL) return SPEEDY_HPACK_ERR_NOMEM;
  size_t at = 0;
  for (uint32_t k = 0; k < t->count; k++) {
    hpack_entry *e = table_entry_by_number(t, t->inserted - t->count + k);
    size_t len = (size_t)e->name_len + e->value_len;
    if (len > 0) memcpy(data + at, t->data + e->offset, len);
    e->offset = (uint32_t)at;
    at += len;
  }
  *old = t->data;
  t->data = data;
  t->data_cap = new_cap;
  t->head = at;
  t->span = at;
  return 0;
}

/* Inserts (name, value) as the newest entry (RFC 7541 4.4), evicting as needed; an entry
 * larger than the maximum empties the table and is not added. name may point into the
 * table (an entry about to be evicted included); value must not. Returns 0 or
 * SPEEDY_HPACK_ERR_NOMEM (the table then lost the entries evicted, as the peer's did,
 * but not the new one: the caller must treat the context as broken). */
static int table_insert(hpack_table *t, const uint8_t *name, uint32_t name_len,
                        const uint8_t *value, uint32_t value_len, uint32_t name_hash,
                        uint32_t field_hash, uint8_t ok) {
  size_t len = (size_t)name_len + value_len;
  size_t entry_size = len + SPEEDY_HPACK_ENTRY_OVERHEAD;
  if (entry_size > t->max_size) {
    while (t->count > 0) table_evict_oldest(t);
    return 0;
  }
  while (t->size + entry_size > t->max_size) table_evict_oldest(t);
  if (t->count + 1 > t->ring_cap) {
    int rc = table_resize_ring(t, t->ring_cap ? t->ring_cap * 2 : RING_MIN);
    if (rc != 0) return rc;
  }
  uint8_t *old = NULL;
  size_t free_octets = t->data_cap - t->span;
  size_t at;
  /* (The ring is allocated even for an entry of no octets: its offset must point
   * somewhere.) */
  if (t->data != NULL && t->head + len <= t->data_cap && len <= free_octets) {
    at = t->head;
    t->span += len;
  } else if (t->data != NULL && t->data_cap - t->head + len <= free_octets) {
    at = 0; /* the rest of the ring is a gap until the entries before it leave */
    t->span += t->data_cap - t->head + len;
  } else {
    size_t need = table_octets(t) + len;
    size_t cap = t->data_cap ? t->data_cap * 2 : DATA_MIN;
    while (cap < need) cap *= 2;
    /* The entries never hold more octets than the table's maximum (each counts 32 more):
     * a ring that large always fits them once compacted. */
    if (cap > t->max_size) cap = t->max_size > need ? t->max_size : need;
    int rc = table_regrow_data(t, cap, &old);
    if (rc != 0) return rc;
    at = t->head;
    t->span += len;
  }
  if (name_len > 0) memmove(t->data + at, name, name_len);
  if (value_len > 0) memcpy(t->data + at + name_len, value, value_len);
  speedy_mem_free(t->mem, old);
  t->head = at + len;
  uint32_t number = t->inserted++;
  hpack_entry *e = table_entry_by_number(t, number);
  *e = (hpack_entry){(uint32_t)at, name_len, value_len, name_hash, field_hash, 0, 0, ok};
  t->count++;
  t->size += entry_size;
  if (t->indexed) buckets_link(t, number);
  return 0;
}

/* Gives back what the table holds beyond its entries' needs plus some room to grow (an
 * idle session's tables): the octet ring is compacted to its live octets and a quarter
 * more, the descriptor ring to the smallest that holds the entries and a quarter more.
 * Small savings are skipped, so a session going idle and busy again does not copy or
 * re-index its table each time.
 * A failed allocation leaves the table as it was. */
static void table_trim(hpack_table *t) {
  if (t->count == 0) {
    speedy_mem_free(t->mem, t->data);
    t->data = NULL;
    t->data_cap = t->head = t->span = 0;
  } else {
    size_t octets = table_octets(t);
    size_t want = (octets + octets / 4 + 63) & ~(size_t)63;
    uint8_t *old = NULL;
    if (want + TRIM_SLACK <= t->data_cap && table_regrow_data(t, want, &old) == 0)
      speedy_mem_free(t->mem, old);
  }
  uint32_t cap = t->ring_cap;
  while (cap > RING_MIN && cap / 2 >= t->count + t->count / 4) cap /= 2;
  if (t->count == 0 && cap == RING_MIN) {
    speedy_mem_free(t->mem, t->ring);
    speedy_mem_free(t->mem, t->name_buckets);
    speedy_mem_free(t->mem, t->field_buckets);
    t->ring = NULL;
    t->name_buckets = t->field_buckets = NULL;
    t->ring_cap = 0;
  } else if (cap < t->ring_cap) {
    (void)table_resize_ring(t, cap);
  }
}

static void table_field(const hpack_table *t, uint32_t i, speedy_hpack_field *out) {
  const hpack_entry *e = table_entry(t, i);
  const uint8_t *name = t->data + e->offset;
  *out = (speedy_hpack_field){name, e->name_len, name + e->name_len, e->value_len, e->ok};
}

static int table_get(const hpack_table *t, size_t i, speedy_hpack_field *out) {
  if (i >= t->count) return SPEEDY_HPACK_ERR_INDEX;
  table_field(t, (uint32_t)i, out);
  return 0;
}

/* A field of either table by HPACK index. */
static int lookup(const hpack_table *t, uint32_t index, speedy_hpack_field *out) {
  if (index <= SPEEDY_HPACK_STATIC_ENTRIES) return speedy_hpack_static_entry(index, out);
  return table_get(t, index - SPEEDY_HPACK_STATIC_ENTRIES - 1, out);
}

/* ---- Decoder ------------------------------------------------------------------------- */

struct speedy_hpack_decoder {
  speedy_mem *mem;
  hpack_table table;
  uint32_t allowed_max;      /* SETTINGS_HEADER_TABLE_SIZE in force */
  uint32_t smallest_allowed; /* its smallest value since the last block (or update owed) */
  int update_needed;         /* a block must start with an update <= smallest_allowed */
  uint32_t max_header_list;
  uint32_t max_string;
  speedy_hpack_octets_fn name_ok, value_ok; /* speedy_hpack_decoder_set_checks */
  int error;                                /* sticky */
  int started;
  /* The block being decoded. */
  int field_seen;
  int over_cap;
  uint64_t list_size;
  /* A representation cut between pieces: its first held_len octets, and how many it
   * needs at least. */
  uint8_t *held;
  size_t held_len, held_cap, held_need;
  /* Huffman-decoded strings. */
  uint8_t *scratch;
  size_t scratch_cap;
  size_t scratch_regrow; /* scratch_cap before speedy_hpack_decoder_trim gave it back */
};

/* Strings are capped well below what size arithmetic on 32-bit machines can hold. */
#define MAX_STRING_LIMIT (1u << 28)

void speedy_hpack_decoder_set_checks(speedy_hpack_decoder *d, speedy_hpack_octets_fn name_ok,
                                     speedy_hpack_octets_fn value_ok) {
  /* Both or neither: a verdict is only ever made by both. */
  d->name_ok = name_ok != NULL && value_ok != NULL ? name_ok : NULL;
  d->value_ok = name_ok != NULL && value_ok != NULL ? value_ok : NULL;
}

int speedy_hpack_decoder_new(speedy_mem *mem, speedy_hpack_decoder **out) {
  if (mem == NULL || out == NULL) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  speedy_hpack_decoder *d = speedy_mem_calloc(mem, 1, sizeof *d);
  if (d == NULL) return SPEEDY_HPACK_ERR_NOMEM;
  d->mem = mem;
  table_init(&d->table, mem, SPEEDY_HPACK_DEFAULT_TABLE_SIZE, 0);
  d->allowed_max = SPEEDY_HPACK_DEFAULT_TABLE_SIZE;
  d->smallest_allowed = SPEEDY_HPACK_DEFAULT_TABLE_SIZE;
  d->max_header_list = SPEEDY_HPACK_DEFAULT_MAX_HEADER_LIST;
  d->max_string = SPEEDY_HPACK_DEFAULT_MAX_STRING;
  *out = d;
  return 0;
}

void speedy_hpack_decoder_del(speedy_hpack_decoder *d) {
  if (d == NULL) return;
  table_free(&d->table);
  speedy_mem_free(d->mem, d->held);
  speedy_mem_free(d->mem, d->scratch);
  speedy_mem_free(d->mem, d);
}

void speedy_hpack_decoder_set_max_table_size(speedy_hpack_decoder *d, uint32_t size) {
  d->allowed_max = size;
  if (size < d->smallest_allowed) d->smallest_allowed = size;
  if (size < d->table.max_size) d->update_needed = 1;
}

int speedy_hpack_decoder_set_initial_table_size(speedy_hpack_decoder *d, uint32_t size) {
  if (d->started) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  d->allowed_max = d->smallest_allowed = size;
  table_set_max(&d->table, size);
  d->update_needed = 0;
  return 0;
}

void speedy_hpack_decoder_set_max_header_list_size(speedy_hpack_decoder *d, uint32_t size) {
  d->max_header_list = size;
}

void speedy_hpack_decoder_set_max_string_length(speedy_hpack_decoder *d, uint32_t len) {
  d->max_string = len < MAX_STRING_LIMIT ? len : MAX_STRING_LIMIT;
}

void speedy_hpack_decoder_trim(speedy_hpack_decoder *d) {
  if (d->scratch_cap > 0) d->scratch_regrow = d->scratch_cap < 16384 ? d->scratch_cap : 16384;
  speedy_mem_free(d->mem, d->scratch);
  d->scratch = NULL;
  d->scratch_cap = 0;
  if (d->held_len == 0) {
    speedy_mem_free(d->mem, d->held);
    d->held = NULL;
    d->held_cap = 0;
  }
  table_trim(&d->table);
}

size_t speedy_hpack_decoder_entries(const speedy_hpack_decoder *d) { return d->table.count; }
size_t speedy_hpack_decoder_table_size(const speedy_hpack_decoder *d) { return d->table.size; }
uint32_t speedy_hpack_decoder_table_max(const speedy_hpack_decoder *d) { return d->table.max_size; }
int speedy_hpack_decoder_entry(const speedy_hpack_decoder *d, size_t i, speedy_hpack_field *out) {
  return table_get(&d->table, i, out);
}

/* decode_one's answer when the representation continues past the input. */
#define NEED_MORE 1

/* A string literal's place in the input. */
typedef struct string_ref {
  size_t at, len;
  int huffman;
} string_ref;

/* Reads a string literal's header at in[pos..len). Returns 0 with *s set (its octets may
 * still be missing), NEED_MORE with *need, or an error. */
static int string_header(const speedy_hpack_decoder *d, const uint8_t *in, size_t len, size_t pos,
                         string_ref *s, size_t *need) {
  if (pos >= len) {
    *need = pos + 1;
    return NEED_MORE;
  }
  uint32_t n;
  int r = speedy_hpack_int_decode(in + pos, len - pos, 7, UINT32_MAX, &n);
  if (r < 0) return r;
  if (r == 0) {
    *need = len + 1;
    return NEED_MORE;
  }
  if (n > d->max_string) return SPEEDY_HPACK_ERR_STRING_TOO_LONG;
  s->huffman = (in[pos] & 0x80) != 0;
  s->at = pos + (size_t)r;
  s->len = n;
  return 0;
}

/* Makes the scratch buffer at least n octets. */
static int scratch_reserve(speedy_hpack_decoder *d, size_t n) {
  if (n <= d->scratch_cap) return 0;
  size_t cap = d->scratch_cap ? d->scratch_cap : d->scratch_regrow ? d->scratch_regrow : 256;
  while (cap < n) cap *= 2;
  uint8_t *p = speedy_mem_realloc(d->mem, d->scratch, cap);
  if (p == NULL) return SPEEDY_HPACK_ERR_NOMEM;
  d->scratch = p;
  d->scratch_cap = cap;
  return 0;
}

/* The octets of a string literal: in place when raw, else decoded into the scratch
 * buffer at *scratch_used. */
static int string_value(speedy_hpack_decoder *d, const uint8_t *in, const string_ref *s,
                        size_t *scratch_used, const uint8_t **bytes, size_t *len) {
  if (!s->huffman) {
    *bytes = in + s->at;
    *len = s->len;
    return 0;
  }
  /* The scratch buffer was reserved for the longest decodings of both strings. */
  int64_t n = speedy_hpack_huffman_decode_unchecked(d->scratch + *scratch_used, in + s->at, s->len);
  if (n < 0) return (int)n;
  *bytes = d->scratch + *scratch_used;
  *len = (size_t)n;
  *scratch_used += (size_t)n;
  return 0;
}

/* Called before each field representation: the first of a block must not come while a
 * size update is owed. */
static int field_begin(speedy_hpack_decoder *d) {
  if (d->field_seen) return 0;
  if (d->update_needed) return SPEEDY_HPACK_ERR_SIZE_UPDATE;
  d->field_seen = 1;
  d->smallest_allowed = d->allowed_max;
  return 0;
}

/* Counts a field against the header-list cap and emits it while under the cap. */
static int emit_field(speedy_hpack_decoder *d, const speedy_hpack_field *f,
                      speedy_hpack_emit_fn emit, void *user) {
  if (d->over_cap) return 0;
  uint64_t add = (uint64_t)f->name_len + f->value_len + SPEEDY_HPACK_ENTRY_OVERHEAD;
  if (d->list_size + add > d->max_header_list) {
    d->over_cap = 1;
    return 0;
  }
  d->list_size += add;
  if (emit == NULL) return 0;
  int rc = emit(user, f);
  return rc < 0 ? rc : 0;
}

/* Decodes the representation at the start of in[0..len) (len > 0). Returns 0 with *used,
 * NEED_MORE with *need (the least total length it can have), or an error. Nothing
 * changes before the representation is complete. */
static int decode_one(speedy_hpack_decoder *d, const uint8_t *in, size_t len, size_t *used,
                      size_t *need, speedy_hpack_emit_fn emit, void *user) {
  uint8_t first = in[0];
  uint32_t index;
  int r;
  speedy_hpack_field f;
  if (first & 0x80) { /* 6.1 indexed field */
    r = speedy_hpack_int_decode(in, len, 7, UINT32_MAX, &index);
    if (r <= 0) goto integer_cut;
    if (index == 0 || lookup(&d->table, index, &f) != 0) return SPEEDY_HPACK_ERR_INDEX;
    if (index <= SPEEDY_HPACK_STATIC_ENTRIES && d->name_ok != NULL)
      f.flags = SPEEDY_HPACK_NAME_OK | SPEEDY_HPACK_VALUE_OK;
    int rc = field_begin(d);
    if (rc == 0) rc = emit_field(d, &f, emit, user);
    *used = (size_t)r;
    return rc;
  }
  if ((first & 0xe0) == 0x20) { /* 6.3 dynamic table size update */
    r = speedy_hpack_int_decode(in, len, 5, UINT32_MAX, &index);
    if (r <= 0) goto integer_cut;
    if (d->field_seen) return SPEEDY_HPACK_ERR_SIZE_UPDATE;
    if (index > d->allowed_max) return SPEEDY_HPACK_ERR_TABLE_SIZE;
    table_set_max(&d->table, index);
    if (index <= d->smallest_allowed) d->update_needed = 0;
    *used = (size_t)r;
    return 0;
  }
  /* 6.2 literals: with incremental indexing (01), without (0000), never indexed (0001). */
  int indexing = (first & 0xc0) == 0x40;
  unsigned flags = (first & 0xf0) == 0x10 ? SPEEDY_HPACK_NEVER_INDEXED : 0;
  r = speedy_hpack_int_decode(in, len, indexing ? 6 : 4, UINT32_MAX, &index);
  if (r <= 0) goto integer_cut;
  size_t pos = (size_t)r;
  string_ref name_ref = {0, 0, 0}, value_ref;
  if (index == 0) {
    r = string_header(d, in, len, pos, &name_ref, need);
    if (r != 0) return r;
    if (name_ref.len > len - name_ref.at) {
      *need = name_ref.at + name_ref.len + 1;
      return NEED_MORE;
    }
    pos = name_ref.at + name_ref.len;
  }
  r = string_header(d, in, len, pos, &value_ref, need);
  if (r != 0) return r;
  if (value_ref.len > len - value_ref.at) {
    *need = value_ref.at + value_ref.len;
    return NEED_MORE;
  }
  /* Complete: now it may act. */
  if (index != 0 && lookup(&d->table, index, &f) != 0) return SPEEDY_HPACK_ERR_INDEX;
  int rc = field_begin(d);
  if (rc != 0) return rc;
  size_t scratch_need = 0;
  if (name_ref.huffman) scratch_need += speedy_hpack_huffman_decoded_max(name_ref.len);
  if (value_ref.huffman) scratch_need += speedy_hpack_huffman_decoded_max(value_ref.len);
  rc = scratch_reserve(d, scratch_need);
  if (rc != 0) return rc;
  size_t scratch_used = 0;
  if (index == 0) {
    rc = string_value(d, in, &name_ref, &scratch_used, &f.name, &f.name_len);
    if (rc != 0) return rc;
  }
  rc = string_value(d, in, &value_ref, &scratch_used, &f.value, &f.value_len);
  if (rc != 0) return rc;
  /* The name's verdict comes with an indexed name (a static one passes), or is made now;
   * the value's is made now. */
  unsigned ok = 0;
  if (d->name_ok != NULL) {
    if (index == 0)
      ok = d->name_ok(f.name, f.name_len) ? SPEEDY_HPACK_NAME_OK : 0;
    else
      ok = index <= SPEEDY_HPACK_STATIC_ENTRIES ? SPEEDY_HPACK_NAME_OK
                                                : f.flags & SPEEDY_HPACK_NAME_OK;
    if (d->value_ok(f.value, f.value_len)) ok |= SPEEDY_HPACK_VALUE_OK;
  }
  f.flags = flags | ok;
  rc = emit_field(d, &f, emit, user);
  if (rc != 0) return rc;
  if (indexing) {
    rc = table_insert(&d->table, f.name, (uint32_t)f.name_len, f.value, (uint32_t)f.value_len, 0, 0,
                      (uint8_t)ok);
    if (rc != 0) return rc;
  }
  *used = value_ref.at + value_ref.len;
  return 0;

integer_cut:
  if (r < 0) return r;
  *need = len + 1;
  return NEED_MORE;
}

static int decoder_fail(speedy_hpack_decoder *d, int rc) {
  d->error = rc;
  return rc;
}

/* Keeps in[0..len), the start of a representation needing need octets in all. */
static int hold(speedy_hpack_decoder *d, const uint8_t *in, size_t len, size_t need) {
  if (need > d->held_cap) {
    size_t cap = d->held_cap ? d->held_cap : 64;
    while (cap < need) cap *= 2;
    uint8_t *p = speedy_mem_realloc(d->mem, d->held, cap);
    if (p == NULL) return SPEEDY_HPACK_ERR_NOMEM;
    d->held = p;
    d->held_cap = cap;
  }
  if (len > 0) memcpy(d->held + d->held_len, in, len);
  d->held_len += len;
  d->held_need = need;
  return 0;
}

static int block_end(speedy_hpack_decoder *d) {
  int over = d->over_cap;
  /* A block of size updates only still ends the interval whose smallest size had to be
   * signalled (4.2); one still owed carries over to the next block. */
  if (!d->update_needed) d->smallest_allowed = d->allowed_max;
  d->field_seen = 0;
  d->over_cap = 0;
  d->list_size = 0;
  return over ? SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE : 0;
}

int speedy_hpack_decode(speedy_hpack_decoder *d, const uint8_t *in, size_t len, int end_of_block,
                        speedy_hpack_emit_fn emit, void *user) {
  if (d->error != 0) return d->error;
  if (in == NULL && len > 0) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  d->started = 1;
  size_t pos = 0, used, need;
  int rc;
  /* First finish a representation held back from the previous piece: take only what it
   * needs, so the held octets never run into the next representation. */
  while (d->held_len > 0) {
    size_t take = d->held_need - d->held_len;
    if (take > len - pos) take = len - pos;
    if ((rc = hold(d, take > 0 ? in + pos : NULL, take, d->held_need)) != 0)
      return decoder_fail(d, rc);
    pos += take;
    if (d->held_len < d->held_need) {
      if (end_of_block) return decoder_fail(d, SPEEDY_HPACK_ERR_TRUNCATED);
      return 0;
    }
    rc = decode_one(d, d->held, d->held_len, &used, &need, emit, user);
    if (rc < 0) return decoder_fail(d, rc);
    if (rc == NEED_MORE) {
      if ((rc = hold(d, NULL, 0, need)) != 0) return decoder_fail(d, rc);
      continue;
    }
    d->held_len = 0;
  }
  while (pos < len) {
    rc = decode_one(d, in + pos, len - pos, &used, &need, emit, user);
    if (rc < 0) return decoder_fail(d, rc);
    if (rc == NEED_MORE) {
      if (end_of_block) return decoder_fail(d, SPEEDY_HPACK_ERR_TRUNCATED);
      if ((rc = hold(d, in + pos, len - pos, need)) != 0) return decoder_fail(d, rc);
      return 0;
    }
    pos += used;
  }
  return end_of_block ? block_end(d) : 0;
}

/* ---- Encoder ------------------------------------------------------------------------- */

struct speedy_hpack_encoder {
  speedy_mem *mem;
  hpack_table table;
  uint32_t limit;         /* the most table we want */
  uint32_t peer_max;      /* the peer's SETTINGS_HEADER_TABLE_SIZE */
  uint32_t smallest_peer; /* its smallest value since the last block */
  int update_pending;
  int started;
  int error; /* sticky: the table went out of step with what was written */
  speedy_hpack_huffman huffman;
};

int speedy_hpack_encoder_new(speedy_mem *mem, speedy_hpack_encoder **out) {
  if (mem == NULL || out == NULL) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  speedy_hpack_encoder *e = speedy_mem_calloc(mem, 1, sizeof *e);
  if (e == NULL) return SPEEDY_HPACK_ERR_NOMEM;
  e->mem = mem;
  table_init(&e->table, mem, SPEEDY_HPACK_DEFAULT_TABLE_SIZE, 1);
  e->limit = e->peer_max = e->smallest_peer = SPEEDY_HPACK_DEFAULT_TABLE_SIZE;
  e->huffman = SPEEDY_HPACK_HUFFMAN_SHORTER;
  *out = e;
  return 0;
}

void speedy_hpack_encoder_del(speedy_hpack_encoder *e) {
  if (e == NULL) return;
  table_free(&e->table);
  speedy_mem_free(e->mem, e);
}

void speedy_hpack_encoder_set_table_size_limit(speedy_hpack_encoder *e, uint32_t size) {
  e->limit = size;
  e->update_pending = 1;
}

void speedy_hpack_encoder_set_peer_max_table_size(speedy_hpack_encoder *e, uint32_t size) {
  e->peer_max = size;
  if (size < e->smallest_peer) e->smallest_peer = size;
  e->update_pending = 1;
}

int speedy_hpack_encoder_set_initial_table_size(speedy_hpack_encoder *e, uint32_t size) {
  if (e->started) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  e->limit = e->peer_max = e->smallest_peer = size;
  table_set_max(&e->table, size);
  e->update_pending = 0;
  return 0;
}

void speedy_hpack_encoder_set_huffman(speedy_hpack_encoder *e, speedy_hpack_huffman mode) {
  e->huffman = mode;
}

void speedy_hpack_encoder_trim(speedy_hpack_encoder *e) { table_trim(&e->table); }

void speedy_hpack_encoder_mark(const speedy_hpack_encoder *e, speedy_hpack_mark *out) {
  memset(out, 0, sizeof(*out));
  out->inserted = e->table.inserted;
  out->count = e->table.count;
  out->max_size = e->table.max_size;
  out->limit = e->limit;
  out->peer_max = e->peer_max;
  out->smallest_peer = e->smallest_peer;
  out->update_pending = e->update_pending;
  out->huffman = (int)e->huffman;
  out->error = e->error;
}

int speedy_hpack_encoder_at_mark(const speedy_hpack_encoder *e, const speedy_hpack_mark *mark) {
  speedy_hpack_mark now;
  speedy_hpack_encoder_mark(e, &now);
  return memcmp(&now, mark, sizeof(now)) == 0;
}

size_t speedy_hpack_encoder_entries(const speedy_hpack_encoder *e) { return e->table.count; }
size_t speedy_hpack_encoder_table_size(const speedy_hpack_encoder *e) { return e->table.size; }
uint32_t speedy_hpack_encoder_table_max(const speedy_hpack_encoder *e) { return e->table.max_size; }
int speedy_hpack_encoder_entry(const speedy_hpack_encoder *e, size_t i, speedy_hpack_field *out) {
  return table_get(&e->table, i, out);
}

/* A fast hash of octets, eight at a time, continuing from seed. */
static uint32_t hash_bytes(uint32_t seed, const uint8_t *p, size_t n) {
  const uint64_t k = 0x9e3779b97f4a7c15ull;
  uint64_t h = (seed ^ (uint64_t)n) * k;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * k;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * k;
    h ^= h >> 29;
  }
  h *= k;
  return (uint32_t)(h >> 32);
}

/* The newest dynamic entry equal to (name, value) — by_name: with that name — as its
 * position (0 the newest), or -1. */
static int64_t dynamic_find(const hpack_table *t, const speedy_hpack_field *f, uint32_t hash,
                            int by_name) {
  if (t->count == 0) return -1;
  uint32_t mask = t->ring_cap * 2 - 1;
  uint32_t number = by_name ? t->name_buckets[hash & mask] : t->field_buckets[hash & mask];
  for (uint32_t steps = 0; steps < t->count && table_live(t, number); steps++) {
    const hpack_entry *e = table_entry_by_number(t, number);
    const uint8_t *name = t->data + e->offset;
    if ((by_name ? e->name_hash : e->field_hash) == hash && e->name_len == f->name_len &&
        memcmp(name, f->name, f->name_len) == 0 &&
        (by_name ||
         (e->value_len == f->value_len && memcmp(name + e->name_len, f->value, f->value_len) == 0)))
      return (int64_t)(uint32_t)(t->inserted - 1 - number);
    number = by_name ? e->next_name : e->next_field;
  }
  return -1;
}

static int name_is(const speedy_hpack_field *f, const char *name, size_t len) {
  return f->name_len == len && memcmp(f->name, name, len) == 0;
}
#define NAME_IS(f, literal) name_is(f, literal, sizeof(literal) - 1)

/* Sent never indexed (RFC 7541 7.1.3): credentials, and cookie crumbs short enough to
 * guess (RFC 9113 8.2.3 lets a sender split cookies; long crumbs have the entropy to be
 * safe in the table and are worth indexing). */
static int policy_sensitive(const speedy_hpack_field *f) {
  if (f->flags & SPEEDY_HPACK_NEVER_INDEXED) return 1;
  switch (f->name_len) {
  case 6:
    return NAME_IS(f, "cookie") && f->value_len < 20;
  case 13:
    return NAME_IS(f, "authorization");
  case 19:
    return NAME_IS(f, "proxy-authorization");
  default:
    return 0;
  }
}

/* Names whose values rarely repeat on a connection: indexing them is worth it only while
 * the table has room to spare, not at the price of evicting entries that do repeat.
 * Chosen on the HAR corpus (bench/engine/bench_hpack.c): with room to spare, indexing
 * them saves 2.4 % of the corpus's HPACK bytes over never indexing them; naming more
 * fields here (expires, set-cookie, date, request ids) cost up to 3 %. */
typedef struct policy_name {
  const char *name;
  size_t len;
} policy_name;
#define POLICY_NAME(n)                                                                             \
  { n, sizeof(n) - 1 }
static const policy_name unique_value_names[] = {
    POLICY_NAME(":path"),
    POLICY_NAME("age"),
    POLICY_NAME("content-length"),
    POLICY_NAME("etag"),
    POLICY_NAME("if-modified-since"),
    POLICY_NAME("if-none-match"),
    POLICY_NAME("last-modified"),
    POLICY_NAME("location"),
};

static int policy_unique_value(const speedy_hpack_field *f) {
  for (size_t i = 0; i < sizeof unique_value_names / sizeof unique_value_names[0]; i++)
    if (f->name_len == unique_value_names[i].len &&
        memcmp(f->name, unique_value_names[i].name, f->name_len) == 0)
      return 1;
  return 0;
}

static uint8_t *put_string(const speedy_hpack_encoder *e, uint8_t *out, const uint8_t *s,
                           size_t len) {
  int huffman = 0;
  size_t huffman_len = 0;
  if (e->huffman != SPEEDY_HPACK_HUFFMAN_NEVER && len > 0) {
    huffman_len = speedy_hpack_huffman_length(s, len);
    huffman = e->huffman == SPEEDY_HPACK_HUFFMAN_ALWAYS || huffman_len < len;
  }
  if (huffman) {
    out += speedy_hpack_int_encode(out, (uint32_t)huffman_len, 7, 0x80);
    return out + speedy_hpack_huffman_encode(out, s, len);
  }
  out += speedy_hpack_int_encode(out, (uint32_t)len, 7, 0);
  if (len > 0) memcpy(out, s, len);
  return out + len;
}

/* The octets put_string writes for s in mode SHORTER. */
static size_t literal_length(const uint8_t *s, size_t len) {
  size_t huffman_len = len > 0 ? speedy_hpack_huffman_length(s, len) : 0;
  size_t body = huffman_len > 0 && huffman_len < len ? huffman_len : len;
  uint8_t prefix[8];
  return speedy_hpack_int_encode(prefix, (uint32_t)body, 7, 0) + body;
}

size_t speedy_hpack_hint_storage(const speedy_hpack_field *f) {
  if (f->name_len > UINT32_MAX / 2 || f->value_len > UINT32_MAX / 2) return 0;
  return literal_length(f->name, f->name_len) + literal_length(f->value, f->value_len);
}

void speedy_hpack_hint_init(const speedy_hpack_field *f, speedy_hpack_hint *hint,
                            uint8_t *storage) {
  static const speedy_hpack_encoder shorter = {.huffman = SPEEDY_HPACK_HUFFMAN_SHORTER};
  unsigned name_index;
  memset(hint, 0, sizeof(*hint));
  hint->static_full =
      (uint16_t)static_find(f->name, f->name_len, f->value, f->value_len, &name_index);
  hint->static_name = (uint16_t)name_index;
  hint->sensitive = (uint8_t)policy_sensitive(f);
  hint->unique_value = (uint8_t)policy_unique_value(f);
  hint->name_hash = hash_bytes(0, f->name, f->name_len);
  hint->field_hash = hash_bytes(hint->name_hash, f->value, f->value_len);
  uint8_t *end = put_string(&shorter, storage, f->name, f->name_len);
  hint->name_literal = storage;
  hint->name_literal_len = (uint32_t)(end - storage);
  hint->value_literal = end;
  hint->value_literal_len = (uint32_t)(put_string(&shorter, end, f->value, f->value_len) - end);
}

/* Encodes one field at out (with its hint, or NULL); returns the end. *rc gets 0 or
 * SPEEDY_HPACK_ERR_NOMEM. */
static uint8_t *encode_field(speedy_hpack_encoder *e, const speedy_hpack_field *f,
                             const speedy_hpack_hint *hint, uint8_t *out, int *rc) {
  hpack_table *t = &e->table;
  unsigned name_index, full;
  int never;
  uint32_t name_hash, field_hash;
  if (hint != NULL) {
    full = hint->static_full;
    name_index = hint->static_name;
    never = hint->sensitive;
  } else {
    full = static_find(f->name, f->name_len, f->value, f->value_len, &name_index);
    never = policy_sensitive(f);
  }
  if (full != 0 && !never) return out + speedy_hpack_int_encode(out, full, 7, 0x80);
  if (hint != NULL) {
    name_hash = hint->name_hash;
    field_hash = hint->field_hash;
  } else {
    name_hash = hash_bytes(0, f->name, f->name_len);
    field_hash = hash_bytes(name_hash, f->value, f->value_len);
  }
  if (!never) {
    int64_t i = dynamic_find(t, f, field_hash, 0);
    if (i >= 0)
      return out +
             speedy_hpack_int_encode(out, SPEEDY_HPACK_STATIC_ENTRIES + 1 + (uint32_t)i, 7, 0x80);
  }
  if (name_index == 0) {
    int64_t i = dynamic_find(t, f, name_hash, 1);
    if (i >= 0) name_index = SPEEDY_HPACK_STATIC_ENTRIES + 1 + (unsigned)i;
  }
  size_t entry_size = f->name_len + f->value_len + SPEEDY_HPACK_ENTRY_OVERHEAD;
  int index;
  if (never)
    index = 0;
  else if (f->flags & SPEEDY_HPACK_INDEX)
    index = entry_size <= t->max_size;
  else if (f->flags & SPEEDY_HPACK_NO_INDEX)
    index = 0;
  else
    index = entry_size <= (size_t)t->max_size / 4 * 3 &&
            (!(hint != NULL ? hint->unique_value : policy_unique_value(f)) ||
             t->size + entry_size <= t->max_size);
  if (index)
    out += speedy_hpack_int_encode(out, name_index, 6, 0x40);
  else
    out += speedy_hpack_int_encode(out, name_index, 4, never ? 0x10 : 0x00);
  if (hint != NULL && e->huffman == SPEEDY_HPACK_HUFFMAN_SHORTER) {
    if (name_index == 0) {
      memcpy(out, hint->name_literal, hint->name_literal_len);
      out += hint->name_literal_len;
    }
    memcpy(out, hint->value_literal, hint->value_literal_len);
    out += hint->value_literal_len;
  } else {
    if (name_index == 0) out = put_string(e, out, f->name, f->name_len);
    out = put_string(e, out, f->value, f->value_len);
  }
  if (index)
    *rc = table_insert(t, f->name, (uint32_t)f->name_len, f->value, (uint32_t)f->value_len,
                       name_hash, field_hash, 0);
  return out;
}

/* Room for a field's integers: the representation's (6 octets at most for 2^32 - 1) and
 * the two string lengths'. */
#define FIELD_OVERHEAD_MAX 18u
#define SIZE_UPDATES_MAX 12u

size_t speedy_hpack_encode_bound(const speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                                 size_t n_fields) {
  /* Huffman can be longer than the octets (up to 30 bits each) when it is forced. */
  size_t factor = e->huffman == SPEEDY_HPACK_HUFFMAN_ALWAYS ? 4 : 1;
  size_t total = SIZE_UPDATES_MAX;
  for (size_t i = 0; i < n_fields; i++) {
    size_t name_len = fields[i].name_len, value_len = fields[i].value_len;
    if (name_len > UINT32_MAX || value_len > UINT32_MAX) return 0;
    size_t add = (name_len + value_len) * factor + FIELD_OVERHEAD_MAX;
    if (add > SIZE_MAX - total) return 0;
    total += add;
  }
  return total;
}

/* Writes the size updates owed (RFC 7541 4.2: the smallest size since the last block when
 * it is below the final one, then the final one). */
static uint8_t *put_size_updates(speedy_hpack_encoder *e, uint8_t *out) {
  if (!e->update_pending) return out;
  uint32_t target = e->limit < e->peer_max ? e->limit : e->peer_max;
  uint32_t low = e->limit < e->smallest_peer ? e->limit : e->smallest_peer;
  if (low < target && low < e->table.max_size) {
    out += speedy_hpack_int_encode(out, low, 5, 0x20);
    table_set_max(&e->table, low);
  }
  if (target != e->table.max_size) {
    out += speedy_hpack_int_encode(out, target, 5, 0x20);
    table_set_max(&e->table, target);
  }
  e->update_pending = 0;
  e->smallest_peer = e->peer_max;
  return out;
}

int64_t speedy_hpack_encode(speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                            size_t n_fields, uint8_t *out, size_t out_len) {
  return speedy_hpack_encode_hinted(e, fields, NULL, n_fields, out, out_len);
}

int64_t speedy_hpack_encode_hinted(speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                                   const speedy_hpack_hint *hints, size_t n_fields, uint8_t *out,
                                   size_t out_len) {
  if (e->error != 0) return e->error;
  if (n_fields > 0 && fields == NULL) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  size_t bound = speedy_hpack_encode_bound(e, fields, n_fields);
  if (bound == 0) return SPEEDY_HPACK_ERR_INVALID_ARGUMENT;
  if (out_len < bound) return SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL;
  e->started = 1;
  uint8_t *p = put_size_updates(e, out);
  for (size_t i = 0; i < n_fields; i++) {
    int rc = 0;
    p = encode_field(e, &fields[i], hints != NULL ? &hints[i] : NULL, p, &rc);
    if (rc != 0) {
      e->error = rc;
      return rc;
    }
  }
  return (int64_t)(p - out);
}
