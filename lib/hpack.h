/* hpack.h — HPACK (RFC 7541), HTTP/2's header compression: an encoder with an indexing
 * policy, a decoder that emits fields one at a time, and the tables they share.
 *
 * Self-contained: knows nothing of frames, streams or sessions. One encoder per direction
 * we send in and one decoder per direction we receive in (RFC 7541 2.2). Internal to
 * lib/ for now, but shaped to be exposed: opaque types, new/del taking the allocator
 * hook, negative error codes of its own (SPEEDY_HPACK_ERR_*) which the HTTP/2 layer turns
 * into COMPRESSION_ERROR (every code but NOMEM, INVALID_ARGUMENT, BUFFER_TOO_SMALL and
 * HEADER_LIST_TOO_LARGE means the peer's compressor is broken).
 *
 * The Huffman code (RFC 7541 Appendix B) lives in hpack_huffman.c.
 */
#ifndef SPEEDY_LIB_HPACK_H
#define SPEEDY_LIB_HPACK_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"

/* Error codes: stable, never renumbered (speedy_hpack_strerror describes each). */
enum {
  SPEEDY_HPACK_ERR_INVALID_ARGUMENT = -601,      /* a caller passed something impossible */
  SPEEDY_HPACK_ERR_NOMEM = -602,                 /* the allocator said no */
  SPEEDY_HPACK_ERR_TRUNCATED = -603,             /* the block ended inside a representation */
  SPEEDY_HPACK_ERR_INTEGER = -604,               /* an integer over its limit or too many octets */
  SPEEDY_HPACK_ERR_INDEX = -605,                 /* index 0, or past the end of both tables */
  SPEEDY_HPACK_ERR_HUFFMAN = -606,               /* EOS in a string, or bad padding */
  SPEEDY_HPACK_ERR_TABLE_SIZE = -607,            /* a size update above the allowed maximum */
  SPEEDY_HPACK_ERR_SIZE_UPDATE = -608,           /* a size update after a field, or one missing */
  SPEEDY_HPACK_ERR_STRING_TOO_LONG = -609,       /* a literal longer than the decoder accepts */
  SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE = -610, /* decoded list over the cap (not fatal) */
  SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL = -611,      /* encode: out shorter than the bound */
};

/* Returns a sentence describing a SPEEDY_HPACK_ERR_* code (never NULL). */
const char *speedy_hpack_strerror(int code);

/* The defaults of HTTP/2 (RFC 9113 6.5.2) and ours. */
#define SPEEDY_HPACK_DEFAULT_TABLE_SIZE 4096u
#define SPEEDY_HPACK_DEFAULT_MAX_HEADER_LIST 65536u
#define SPEEDY_HPACK_DEFAULT_MAX_STRING 65536u
/* Entries are counted at name + value + 32 octets (RFC 7541 4.1). */
#define SPEEDY_HPACK_ENTRY_OVERHEAD 32u
/* The static table's length (RFC 7541 Appendix A). */
#define SPEEDY_HPACK_STATIC_ENTRIES 61u

/* Field flags. */
/* Decoded: the peer sent the field as "never indexed" (RFC 7541 6.2.3); an intermediary
 * must forward it so. Encoded: the field is sensitive; it is sent never indexed. */
#define SPEEDY_HPACK_NEVER_INDEXED 1u
/* Encoded: literal without indexing, whatever the policy says. */
#define SPEEDY_HPACK_NO_INDEX 2u
/* Encoded: literal with incremental indexing (when it is not already in a table),
 * whatever the policy says; for reproducing a given encoding (RFC 7541 Appendix C). */
#define SPEEDY_HPACK_INDEX 4u
/* Decoded: the name / the value passed the decoder's octet checks
 * (speedy_hpack_decoder_set_checks), now or when its table entry was made. */
#define SPEEDY_HPACK_NAME_OK 8u
#define SPEEDY_HPACK_VALUE_OK 16u

/* A header field. Names and values are octets, not NUL-terminated. */
typedef struct speedy_hpack_field {
  const uint8_t *name;
  size_t name_len;
  const uint8_t *value;
  size_t value_len;
  unsigned flags; /* SPEEDY_HPACK_* above */
} speedy_hpack_field;

/* ---- Primitives (RFC 7541 5.1, 5.2; exposed for tests and the fuzzer) ---------------- */

/* Writes value as an integer with an N-bit prefix (1-8) into out, OR-ing first_byte_bits
 * into the first octet's unused high bits. out must have room for 6 octets (2^32 - 1
 * takes 6 with a 1-bit prefix). Returns the octets written. */
size_t speedy_hpack_int_encode(uint8_t *out, uint32_t value, unsigned prefix_bits,
                               uint8_t first_byte_bits);
/* Reads an integer with an N-bit prefix from in[0..len). Returns the octets used (> 0),
 * 0 when in ends before the integer does, or SPEEDY_HPACK_ERR_INTEGER when the value
 * exceeds max or takes more octets than a value of 2^32 - 1 needs. */
int speedy_hpack_int_decode(const uint8_t *in, size_t len, unsigned prefix_bits, uint32_t max,
                            uint32_t *value);

/* Octets the Huffman code of src takes (padding included). */
size_t speedy_hpack_huffman_length(const uint8_t *src, size_t len);
/* Writes the Huffman code of src, padded with the high bits of EOS, into out (room for
 * speedy_hpack_huffman_length octets). Returns the octets written. */
size_t speedy_hpack_huffman_encode(uint8_t *out, const uint8_t *src, size_t len);
/* Decodes a Huffman-coded string into out, which has room for out_len octets (len * 8 / 5
 * always suffices). Returns the decoded length, or SPEEDY_HPACK_ERR_HUFFMAN (EOS in the
 * string, padding over 7 bits or not all ones) or SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL. */
int64_t speedy_hpack_huffman_decode(uint8_t *out, size_t out_len, const uint8_t *in, size_t len);
/* The most octets len Huffman-coded octets can decode to (the shortest code has 5 bits),
 * plus one. */
static inline size_t speedy_hpack_huffman_decoded_max(size_t len) { return len / 5 * 8 + 8; }
/* The same without checking room: out must hold speedy_hpack_huffman_decoded_max(len)
 * octets. The decoder's fast path. */
int64_t speedy_hpack_huffman_decode_unchecked(uint8_t *out, const uint8_t *in, size_t len);

/* ---- Decoder ------------------------------------------------------------------------- */

typedef struct speedy_hpack_decoder speedy_hpack_decoder;

/* Called once per decoded field, in block order. The field's bytes are valid until the
 * callback returns. A negative return stops decoding: speedy_hpack_decode returns that
 * value and the decoder is unusable (its table may be out of step with the peer's). */
typedef int (*speedy_hpack_emit_fn)(void *user, const speedy_hpack_field *field);

/* Creates a decoder whose memory comes from mem (which must outlive it), with HTTP/2's
 * defaults: a 4,096-octet table limit, a 64 KiB header-list cap and 64 KiB strings. The
 * caller frees it with speedy_hpack_decoder_del. Returns 0, SPEEDY_HPACK_ERR_NOMEM or
 * SPEEDY_HPACK_ERR_INVALID_ARGUMENT. */
int speedy_hpack_decoder_new(speedy_mem *mem, speedy_hpack_decoder **out);
void speedy_hpack_decoder_del(speedy_hpack_decoder *d);
/* Octet checks for names and values (1: the octets are allowed), run once per string
 * the peer sends: a field taken from a table carries the verdicts made when its entry was
 * made (SPEEDY_HPACK_NAME_OK, SPEEDY_HPACK_VALUE_OK), and the static table's fields pass
 * both. An HTTP/2 session installs RFC 9113 8.2.1's, so a field indexed again and again
 * is not scanned again. NULL (the default): no checks, no such flags. */
typedef int (*speedy_hpack_octets_fn)(const uint8_t *octets, size_t len);
void speedy_hpack_decoder_set_checks(speedy_hpack_decoder *d, speedy_hpack_octets_fn name_ok,
                                     speedy_hpack_octets_fn value_ok);

/* The SETTINGS_HEADER_TABLE_SIZE we sent, once the peer acknowledged it: size updates
 * above it are errors, and when it falls below the table's current maximum the next
 * block must start with a size update at most as large (RFC 7541 4.2). */
void speedy_hpack_decoder_set_max_table_size(speedy_hpack_decoder *d, uint32_t size);
/* Both ends start from size instead of 4,096, without a size update (RFC 7541's
 * Appendix C.5 and C.6 assume 256). Only before the first block; INVALID_ARGUMENT else. */
int speedy_hpack_decoder_set_initial_table_size(speedy_hpack_decoder *d, uint32_t size);
/* The cap on a decoded header list, counted as fields are emitted: name + value + 32
 * octets per field (RFC 9113 6.5.2, SETTINGS_MAX_HEADER_LIST_SIZE). A field that would
 * pass it is not emitted, nor any after it in the block; the rest of the block is still
 * processed, without emitting, so the table stays in step with the peer's, and the block
 * ends with SPEEDY_HPACK_ERR_HEADER_LIST_TOO_LARGE. The decoder remains usable. */
void speedy_hpack_decoder_set_max_header_list_size(speedy_hpack_decoder *d, uint32_t size);
/* The longest string literal accepted (octets on the wire); longer is
 * SPEEDY_HPACK_ERR_STRING_TOO_LONG. Also bounds what an incomplete representation may
 * hold back between calls. */
void speedy_hpack_decoder_set_max_string_length(speedy_hpack_decoder *d, uint32_t len);

/* Decodes in[0..len), a header block or a piece of one (pieces in order; end_of_block
 * set on the last, which may be empty), calling emit for each field. A representation cut
 * between pieces is held back (copied) until the rest arrives. Returns 0, or a negative
 * SPEEDY_HPACK_ERR_* / emit's error; after any error but HEADER_LIST_TOO_LARGE the decoder
 * returns that error again on every call. */
int speedy_hpack_decode(speedy_hpack_decoder *d, const uint8_t *in, size_t len, int end_of_block,
                        speedy_hpack_emit_fn emit, void *user);

/* Gives back memory an idle connection does not need: buffers for Huffman-decoded strings
 * (and for a cut representation, when none is held), and what the dynamic table holds
 * beyond its entries plus room to grow. Between calls to speedy_hpack_decode only. */
void speedy_hpack_decoder_trim(speedy_hpack_decoder *d);

/* The dynamic table, for tests and debugging: entries (0 the newest), the size in octets
 * counted as RFC 7541 4.1 does, and the maximum in force. */
size_t speedy_hpack_decoder_entries(const speedy_hpack_decoder *d);
size_t speedy_hpack_decoder_table_size(const speedy_hpack_decoder *d);
uint32_t speedy_hpack_decoder_table_max(const speedy_hpack_decoder *d);
/* Entry i (0 = the newest, HPACK index 62). Returns 0 or SPEEDY_HPACK_ERR_INDEX. */
int speedy_hpack_decoder_entry(const speedy_hpack_decoder *d, size_t i, speedy_hpack_field *out);

/* ---- Encoder ------------------------------------------------------------------------- */

typedef struct speedy_hpack_encoder speedy_hpack_encoder;

/* When string literals are Huffman-coded. */
typedef enum speedy_hpack_huffman {
  SPEEDY_HPACK_HUFFMAN_SHORTER = 0, /* when the code is shorter than the octets (default) */
  SPEEDY_HPACK_HUFFMAN_ALWAYS = 1,
  SPEEDY_HPACK_HUFFMAN_NEVER = 2,
} speedy_hpack_huffman;

/* Creates an encoder whose memory comes from mem (which must outlive it), using a
 * 4,096-octet table (HTTP/2's initial SETTINGS_HEADER_TABLE_SIZE). The caller frees it
 * with speedy_hpack_encoder_del. Returns 0, SPEEDY_HPACK_ERR_NOMEM or
 * SPEEDY_HPACK_ERR_INVALID_ARGUMENT. */
int speedy_hpack_encoder_new(speedy_mem *mem, speedy_hpack_encoder **out);
void speedy_hpack_encoder_del(speedy_hpack_encoder *e);

/* The most table this encoder will use, whatever the peer allows (default 4,096). A
 * change is signalled by a size update at the start of the next block. */
void speedy_hpack_encoder_set_table_size_limit(speedy_hpack_encoder *e, uint32_t size);
/* The peer's SETTINGS_HEADER_TABLE_SIZE, when received (we acknowledge it): the table
 * used is min(this, the limit above), and the next block starts with the size updates
 * RFC 7541 4.2 asks for (the smallest since the last block, then the final one). */
void speedy_hpack_encoder_set_peer_max_table_size(speedy_hpack_encoder *e, uint32_t size);
/* Both ends start from size instead of 4,096, without a size update (RFC 7541's examples
 * C.5 and C.6). Only before the first block; INVALID_ARGUMENT else. */
int speedy_hpack_encoder_set_initial_table_size(speedy_hpack_encoder *e, uint32_t size);
void speedy_hpack_encoder_set_huffman(speedy_hpack_encoder *e, speedy_hpack_huffman mode);

/* What an encoding depends on besides the fields: an encoder whose mark is unchanged
 * encodes the same fields into the same octets (the table's entries, its size, the size
 * updates owed and the policy's settings). */
typedef struct speedy_hpack_mark {
  uint32_t inserted, count, max_size, limit, peer_max, smallest_peer;
  int update_pending, huffman, error;
} speedy_hpack_mark;
void speedy_hpack_encoder_mark(const speedy_hpack_encoder *e, speedy_hpack_mark *out);
int speedy_hpack_encoder_at_mark(const speedy_hpack_encoder *e, const speedy_hpack_mark *mark);

/* The most octets speedy_hpack_encode can write for these fields (0 on overflow: the list
 * cannot be encoded). */
size_t speedy_hpack_encode_bound(const speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                                 size_t n_fields);

/* Encodes fields as one header block into out. The policy chooses each field's
 * representation: a table match is sent as an index; authorization,
 * proxy-authorization, cookie values under 20 octets and fields flagged
 * SPEEDY_HPACK_NEVER_INDEXED are sent never indexed; fields over 3/4 of the table are
 * sent without indexing, and so are those whose values seldom repeat (:path, age,
 * content-length, etag, validators, location) once the table is full; the rest is
 * indexed. SPEEDY_HPACK_NO_INDEX and
 * SPEEDY_HPACK_INDEX override the policy. out_len must be at least the bound, so a block
 * is encoded whole or not at all (the table is unchanged on error). Returns the octets
 * written, SPEEDY_HPACK_ERR_BUFFER_TOO_SMALL, SPEEDY_HPACK_ERR_INVALID_ARGUMENT (a name or
 * value of 2^32 octets or more) or SPEEDY_HPACK_ERR_NOMEM (the table could not grow: the
 * encoder is then out of step with its peer and returns NOMEM on every later call). */
int64_t speedy_hpack_encode(speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                            size_t n_fields, uint8_t *out, size_t out_len);

/* ---- Prepared fields ----------------------------------------------------------------
 * What the encoder works out for a field whatever its table holds: the static table's
 * matches, the policy's verdicts, the hashes the dynamic table is searched by, and the
 * name and value as string literals (Huffman-coded when that is shorter, as the default
 * mode writes them). A field sent many times (a cached response's head) is prepared once
 * and encoded with speedy_hpack_encode_hinted, which writes the same octets as
 * speedy_hpack_encode and changes the table the same way, without hashing, searching
 * the static table or Huffman-coding again. */
typedef struct speedy_hpack_hint {
  uint32_t name_hash, field_hash;
  uint16_t static_full, static_name; /* static index of the field, of its name (0: none) */
  uint8_t sensitive;                 /* sent never indexed */
  uint8_t unique_value;              /* a name whose values seldom repeat */
  const uint8_t *name_literal;       /* name and value as literals (length prefix first); */
  const uint8_t *value_literal;      /* the name's only when the static table lacks it */
  uint32_t name_literal_len, value_literal_len;
} speedy_hpack_hint;

/* The octets speedy_hpack_hint_init stores for f's literals (0 when f cannot be encoded:
 * a name or value of 2^32 octets or more). */
size_t speedy_hpack_hint_storage(const speedy_hpack_field *f);
/* Prepares f: *hint points into storage (speedy_hpack_hint_storage(f) octets) and at
 * nothing else, so f's own octets may go; storage must outlive the hint. */
void speedy_hpack_hint_init(const speedy_hpack_field *f, speedy_hpack_hint *hint, uint8_t *storage);
/* speedy_hpack_encode, with hints[i] prepared from fields[i] (hints may be NULL). */
int64_t speedy_hpack_encode_hinted(speedy_hpack_encoder *e, const speedy_hpack_field *fields,
                                   const speedy_hpack_hint *hints, size_t n_fields, uint8_t *out,
                                   size_t out_len);

/* Gives back what the dynamic table holds beyond its entries plus room to grow (an idle
 * connection's encoder). */
void speedy_hpack_encoder_trim(speedy_hpack_encoder *e);

/* The encoder's dynamic table, as for the decoder (tests compare the two). */
size_t speedy_hpack_encoder_entries(const speedy_hpack_encoder *e);
size_t speedy_hpack_encoder_table_size(const speedy_hpack_encoder *e);
uint32_t speedy_hpack_encoder_table_max(const speedy_hpack_encoder *e);
int speedy_hpack_encoder_entry(const speedy_hpack_encoder *e, size_t i, speedy_hpack_field *out);

/* The static table entry of index 1-61 (RFC 7541 Appendix A); INDEX outside. */
int speedy_hpack_static_entry(uint32_t index, speedy_hpack_field *out);

#endif
