/* header_compressor.c — one direction's header compression without a session, for
 * measuring what a protocol's header frames cost (spdy.h: spdy_header_compressor_*).
 *
 * The same code path a session's output takes: the header list is validated and laid
 * out as the version's block, compressed through a context that persists across calls,
 * and counted with the frame header and fixed fields the session would put before it.
 */
#include "frame.h"
#include "hdblock.h"
#include "session_int.h"

struct spdy_header_compressor {
  spdy_mem mem;
  int version; /* wire version: 2 or 3 */
  spdy_hdblock_deflater deflater;
  spdy_buf block; /* reused for every block; bounded by one frame */
};

int spdy_header_compressor_new(spdy_header_compressor **out, spdy_protocol protocol,
                               const spdy_options *options) {
  if (out == NULL || spdy_protocol_name(protocol) == NULL) return SPDY_ERR_INVALID_ARGUMENT;
  spdy_options defaults;
  if (options == NULL) {
    spdy_options_init_default(&defaults);
    options = &defaults;
  }
  spdy_mem mem = options->mem;
  mem.in_use = 0;
  spdy_header_compressor *c = spdy_mem_calloc(&mem, 1, sizeof(*c));
  if (c == NULL) return SPDY_ERR_NOMEM;
  c->mem = mem;
  c->mem.in_use = mem.in_use;
  c->version = protocol == SPDY_PROTOCOL_SPDY2 ? 2 : 3;
  spdy_buf_init(&c->block, SPDY_MAX_FRAME_LENGTH);
  int rv = spdy_hdblock_deflater_init(&c->deflater, &c->mem, c->version, options->deflate_level,
                                      options->deflate_window_bits, options->deflate_mem_level);
  if (rv != 0) {
    spdy_mem_free(&c->mem, c);
    return rv;
  }
  *out = c;
  return 0;
}

void spdy_header_compressor_del(spdy_header_compressor *c) {
  if (c == NULL) return;
  spdy_hdblock_deflater_free(&c->deflater);
  spdy_buf_free(&c->block, &c->mem);
  spdy_mem mem = c->mem;
  spdy_mem_free(&mem, c);
}

int64_t spdy_header_compressor_frame_size(spdy_header_compressor *c, int response,
                                          const spdy_header *headers, size_t n) {
  if (c == NULL || (headers == NULL && n > 0)) return SPDY_ERR_INVALID_ARGUMENT;
  spdy_buf_reset(&c->block);
  int rv = spdy_hdblock_deflate(&c->deflater, &c->mem, &c->block, headers, n);
  if (rv != 0) return rv;
  size_t fixed =
      response ? (size_t)SPDY_SYN_REPLY_FIXED_LEN(c->version) : SPDY_SYN_STREAM_FIXED_LEN;
  return (int64_t)(SPDY_FRAME_HEADER_LEN + fixed + spdy_buf_len(&c->block));
}

void spdy_options_get_deflate_params(const spdy_options *options, int *level, int *window_bits,
                                     int *mem_level) {
  spdy_options defaults;
  if (options == NULL) {
    spdy_options_init_default(&defaults);
    options = &defaults;
  }
  if (level != NULL) *level = options->deflate_level;
  if (window_bits != NULL) *window_bits = options->deflate_window_bits;
  if (mem_level != NULL) *mem_level = options->deflate_mem_level;
}
