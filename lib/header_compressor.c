/* header_compressor.c — one direction's header compression without a session, for
 * measuring what a protocol's header frames cost (spdy.h: speedy_header_compressor_*).
 *
 * The same code path a session's output takes: the header list is validated and laid
 * out as the version's block, compressed through a context that persists across calls,
 * and counted with the frame header and fixed fields the session would put before it.
 * For HTTP/2: the message rules of h2_message.c, HPACK with a 4,096-octet table, and
 * HEADERS plus CONTINUATION frames of 16,384 octets at most.
 */
#include <string.h>

#include "frame.h"
#include "h2_frame.h"
#include "h2_message.h"
#include "hdblock.h"
#include "hpack.h"
#include "session_int.h"

struct speedy_header_compressor {
  speedy_mem mem;
  int version; /* wire version: 2 or 3; 0 for HTTP/2 */
  spdy_hdblock_deflater deflater;
  speedy_hpack_encoder *encoder; /* HTTP/2 */
  speedy_buf block;              /* reused for every block; bounded by one frame */
};

int speedy_header_compressor_new(speedy_header_compressor **out, speedy_protocol protocol,
                                 const speedy_options *options) {
  if (out == NULL || speedy_protocol_name(protocol) == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_options defaults;
  if (options == NULL) {
    speedy_options_init_default(&defaults);
    options = &defaults;
  }
  speedy_mem mem = options->mem;
  mem.in_use = 0;
  speedy_header_compressor *c = speedy_mem_calloc(&mem, 1, sizeof(*c));
  if (c == NULL) return SPEEDY_ERR_NOMEM;
  c->mem = mem;
  c->mem.in_use = mem.in_use;
  c->version = protocol == SPEEDY_PROTOCOL_SPDY2 ? 2 : protocol == SPEEDY_PROTOCOL_H2 ? 0 : 3;
  speedy_buf_init(&c->block, SPDY_MAX_FRAME_LENGTH);
  int rv =
      c->version == 0
          ? (speedy_hpack_encoder_new(&c->mem, &c->encoder) != 0 ? SPEEDY_ERR_NOMEM : 0)
          : spdy_hdblock_deflater_init(&c->deflater, &c->mem, c->version, options->deflate_level,
                                       options->deflate_window_bits, options->deflate_mem_level);
  if (rv != 0) {
    speedy_mem_free(&c->mem, c);
    return rv;
  }
  *out = c;
  return 0;
}

void speedy_header_compressor_del(speedy_header_compressor *c) {
  if (c == NULL) return;
  if (c->version == 0)
    speedy_hpack_encoder_del(c->encoder);
  else
    spdy_hdblock_deflater_free(&c->deflater);
  speedy_buf_free(&c->block, &c->mem);
  speedy_mem mem = c->mem;
  speedy_mem_free(&mem, c);
}

/* HTTP/2: checked by the message rules, pseudo-header fields first, HPACK-encoded; the
 * frames a session would send for it at the default SETTINGS_MAX_FRAME_SIZE. */
static int64_t h2_frame_size(speedy_header_compressor *c, int response,
                             const speedy_header *headers, size_t n) {
  if (n > SIZE_MAX / sizeof(speedy_hpack_field)) return SPEEDY_ERR_INVALID_HEADER;
  speedy_hpack_field *fields = speedy_mem_malloc(&c->mem, (n + 1) * sizeof(*fields));
  if (fields == NULL) return SPEEDY_ERR_NOMEM;
  speedy_h2_message message;
  speedy_h2_message_begin(&message, response ? SPEEDY_H2_MSG_RESPONSE : SPEEDY_H2_MSG_REQUEST);
  size_t k = 0;
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++) {
      const uint8_t *name = (const uint8_t *)headers[i].name;
      if (name == NULL || speedy_h2_is_pseudo(name, headers[i].name_len) != (pass == 0)) continue;
      fields[k] = (speedy_hpack_field){name, headers[i].name_len, (const uint8_t *)headers[i].value,
                                       headers[i].value_len, 0};
      speedy_h2_message_field(&message, name, headers[i].name_len, fields[k].value,
                              fields[k].value_len);
      k++;
    }
  int64_t rv = k != n || speedy_h2_message_end(&message) != 0 ? SPEEDY_ERR_INVALID_HEADER : 0;
  size_t bound = rv == 0 ? speedy_hpack_encode_bound(c->encoder, fields, n) : 0;
  if (rv == 0 && (bound == 0 || bound > c->block.limit)) rv = SPEEDY_ERR_INVALID_HEADER;
  if (rv == 0) rv = speedy_buf_reserve(&c->block, &c->mem, bound);
  if (rv == 0) {
    rv = speedy_hpack_encode(c->encoder, fields, n, speedy_buf_tail(&c->block), bound);
    if (rv < 0) rv = rv == SPEEDY_HPACK_ERR_NOMEM ? SPEEDY_ERR_NOMEM : SPEEDY_ERR_COMPRESSION;
  }
  speedy_mem_free(&c->mem, fields);
  if (rv < 0) return rv;
  size_t frames = rv == 0 ? 1
                          : ((size_t)rv + SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE - 1) /
                                SPEEDY_H2_DEFAULT_MAX_FRAME_SIZE;
  return (int64_t)(frames * SPEEDY_H2_FRAME_HEADER_LEN) + rv;
}

int64_t speedy_header_compressor_frame_size(speedy_header_compressor *c, int response,
                                            const speedy_header *headers, size_t n) {
  if (c == NULL || (headers == NULL && n > 0)) return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_buf_reset(&c->block);
  if (c->version == 0) return h2_frame_size(c, response, headers, n);
  int rv = spdy_hdblock_deflate(&c->deflater, &c->mem, &c->block, headers, n);
  if (rv != 0) return rv;
  size_t fixed =
      response ? (size_t)SPDY_SYN_REPLY_FIXED_LEN(c->version) : SPDY_SYN_STREAM_FIXED_LEN;
  return (int64_t)(SPDY_FRAME_HEADER_LEN + fixed + speedy_buf_len(&c->block));
}

void speedy_options_get_deflate_params(const speedy_options *options, int *level, int *window_bits,
                                       int *mem_level) {
  speedy_options defaults;
  if (options == NULL) {
    speedy_options_init_default(&defaults);
    options = &defaults;
  }
  if (level != NULL) *level = options->deflate_level;
  if (window_bits != NULL) *window_bits = options->deflate_window_bits;
  if (mem_level != NULL) *mem_level = options->deflate_mem_level;
}
