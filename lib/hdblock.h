/* hdblock.h — SPDY name/value header blocks: (de)serialisation, zlib with the version's
 * dictionary, validation and the SPDY/2 name mapping.
 *
 * Both ends share one zlib stream per direction per session, so every block must be
 * compressed in exactly the order frames go out and every received block inflated, even
 * for streams that will be refused. Inflate and parse are separate steps for that reason.
 *
 * version below is the wire version: 2 (16-bit lengths, v2 dictionary) or 3 (32-bit
 * lengths, v3 dictionary).
 */
#ifndef SPDY_LIB_HDBLOCK_H
#define SPDY_LIB_HDBLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "buf.h"
#include "mem.h"
#include "speedy/speedy.h"

/* The zlib dictionaries (v2: 907 bytes including its final NUL; v3: 1,423 bytes). */
extern const uint8_t spdy_hdblock_dict_v2[];
extern const size_t spdy_hdblock_dict_v2_len;
extern const uint8_t spdy_hdblock_dict_v3[];
extern const size_t spdy_hdblock_dict_v3_len;

/* Both directions run zlib in raw mode and read or write the 6-byte zlib header (window
 * size, dictionary id) themselves: a SPDY stream never ends, so its Adler-32 trailer is
 * never sent, and zlib's wrapper would compute it over every byte for nothing. The bytes
 * on the wire are the same. */
typedef struct spdy_hdblock_deflater {
  z_stream zs;
  int version;
  int initialised;
  uint8_t header_pending; /* the zlib header goes before the first block */
  uint8_t header[6];
} spdy_hdblock_deflater;

typedef struct spdy_hdblock_inflater {
  z_stream zs;
  int version;
  int initialised;
  uint8_t header_done; /* the peer's zlib header has been read */
  speedy_buf scratch;  /* the inflated block; its limit is the header-block cap */
} spdy_hdblock_inflater;

/* zlib's memory comes from mem (which must outlive the object). Return 0,
 * SPEEDY_ERR_NOMEM or SPEEDY_ERR_INVALID_ARGUMENT. */
int spdy_hdblock_deflater_init(spdy_hdblock_deflater *d, speedy_mem *mem, int version, int level,
                               int window_bits, int mem_level);
void spdy_hdblock_deflater_free(spdy_hdblock_deflater *d);
int spdy_hdblock_inflater_init(spdy_hdblock_inflater *inf, speedy_mem *mem, int version,
                               uint32_t max_block);
void spdy_hdblock_inflater_free(spdy_hdblock_inflater *inf, speedy_mem *mem);

/* Serialises headers (v3 names; for version 2 the pseudo-headers :method :path :version
 * :host :scheme :status become method url version host scheme status), joining repeated
 * names with NUL in order of first appearance, compresses with a sync flush and appends
 * the result to out. Returns 0, SPEEDY_ERR_INVALID_HEADER (empty or upper-case name, name
 * or value with bytes the spec forbids), SPEEDY_ERR_NOMEM, SPEEDY_ERR_FRAME_TOO_LARGE (out's
 * limit) or SPEEDY_ERR_COMPRESSION. The compressed length is speedy_buf_len growth. */
int spdy_hdblock_deflate(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                         const speedy_header *headers, size_t n_headers);

/* Checks a submitted header list as spdy_hdblock_deflate will (each field, repeated
 * names, the version's length fields) without compressing it, so that a session refuses
 * at submit time what it could not send later; *serialised gets the size of the
 * uncompressed block. Returns 0, SPEEDY_ERR_INVALID_HEADER, SPEEDY_ERR_FRAME_TOO_LARGE,
 * SPEEDY_ERR_INVALID_ARGUMENT or SPEEDY_ERR_NOMEM. */
int spdy_hdblock_measure(int version, speedy_mem *mem, const speedy_header *headers,
                         size_t n_headers, size_t *serialised);
/* The most bytes a serialised block of that size can take compressed. */
size_t spdy_hdblock_compressed_max(size_t serialised);

/* Submitted lists are checked and laid out when submitted and compressed when sent (in
 * output order): spdy_hdblock_serialise writes the uncompressed block of a list that
 * spdy_hdblock_measure accepted — exactly len bytes, its measure — to dst (returns 0,
 * SPEEDY_ERR_NOMEM, or SPEEDY_ERR_INVALID_ARGUMENT when the list does not fill len), and
 * spdy_hdblock_deflate_serialised compresses such a block as spdy_hdblock_deflate would
 * have compressed the list: the same bytes. */
int spdy_hdblock_serialise(int version, speedy_mem *mem, const speedy_header *headers,
                           size_t n_headers, uint8_t *dst, size_t len);
int spdy_hdblock_deflate_serialised(spdy_hdblock_deflater *d, speedy_mem *mem, speedy_buf *out,
                                    const uint8_t *block, size_t len);

/* The uncompressed serialised size of headers in this version (for statistics). */
size_t spdy_hdblock_serialised_size(int version, const speedy_header *headers, size_t n_headers);

/* Inflates one frame's whole compressed block into inf->scratch (*out, *out_len valid
 * until the next call). Returns 0, SPEEDY_ERR_COMPRESSION (corrupt data, wrong
 * dictionary, or the block does not end on a complete sync flush),
 * SPEEDY_ERR_HEADER_BLOCK_TOO_LARGE (more than max_block bytes inflated — stops inflating
 * at once) or SPEEDY_ERR_NOMEM. Any error leaves the context unusable: a session error. */
int spdy_hdblock_inflate(spdy_hdblock_inflater *inf, speedy_mem *mem, const uint8_t *in,
                         size_t in_len, const uint8_t **out, size_t *out_len);

/* Called once per header value (values joined with NUL are split into one call each).
 * Return 0 to continue or a negative error to stop (passed through). */
typedef int (*spdy_hdblock_emit_fn)(void *ctx, const speedy_header *header);

/* Parses and validates an inflated block, then emits its fields. Validation happens
 * first, so nothing is emitted for an invalid block. Rules: counts and lengths inside
 * the block (no trailing bytes), names non-empty and without upper-case letters or NUL,
 * no name twice, values without leading, trailing or doubled NUL. For version 2 the
 * pseudo-header names are mapped back to their v3 form (url -> :path, etc.). Returns 0,
 * SPEEDY_ERR_INVALID_HEADER (a stream error: PROTOCOL_ERROR), SPEEDY_ERR_NOMEM, or the
 * emitter's error. Uses mem for an index when the block has many fields. */
int spdy_hdblock_parse(int version, speedy_mem *mem, const uint8_t *block, size_t len,
                       spdy_hdblock_emit_fn emit, void *ctx);

/* Emits the fields of a block that spdy_hdblock_parse accepted, without checking it
 * again (the session validates a block, checks its required headers, then delivers it).
 * Never call it on a block that was not accepted. Returns 0 or the emitter's error. */
int spdy_hdblock_emit_checked(int version, const uint8_t *block, size_t len,
                              spdy_hdblock_emit_fn emit, void *ctx);

#endif
