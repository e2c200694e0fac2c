/* options.c — speedy_options and speedy_callbacks: the settings and hooks a session copies
 * when it is created. */
#include <stdlib.h>
#include <string.h>

#include "session_int.h"

void speedy_options_init_default(speedy_options *options) {
  memset(options, 0, sizeof(*options));
  speedy_mem_init_default(&options->mem);
  options->max_recv_control_frame = 65536 + 1024;
  options->max_header_block = 65536;
  options->data_frame_size = 16384;
  options->stream_window = SPEEDY_DEFAULT_WINDOW;
  options->session_window = SPEEDY_DEFAULT_WINDOW;
  options->max_concurrent_streams = 100;
  options->manual_flow_control = 0;
  options->max_queued_control_frames = 1000;
  options->max_pending_streams = 65536;
  options->deflate_level = 6;
  options->deflate_window_bits = 13;
  options->deflate_mem_level = 4;
  options->send_initial_settings = 1;
  options->frame_summaries = 1;
  options->max_frame_size = 16384;
  options->header_table_size = 4096;
  options->enable_push = 1;
  options->max_continuations = 32;
  options->settings_timeout_ns = 10 * (int64_t)1000000000;
  options->reset_burst = 1000;
  options->reset_rate = 100;
  options->empty_frame_burst = 1000;
  options->empty_frame_rate = 100;
}

int speedy_options_new(speedy_options **out) {
  if (out == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_options *options = malloc(sizeof(*options));
  if (options == NULL) return SPEEDY_ERR_NOMEM;
  speedy_options_init_default(options);
  *out = options;
  return 0;
}

void speedy_options_del(speedy_options *options) { free(options); }

void speedy_options_set_allocator(speedy_options *options, speedy_malloc_fn malloc_fn,
                                  speedy_realloc_fn realloc_fn, speedy_free_fn free_fn,
                                  void *user) {
  if (malloc_fn == NULL || free_fn == NULL) {
    speedy_mem_init_default(&options->mem);
    return;
  }
  options->mem.malloc_fn = malloc_fn;
  options->mem.realloc_fn = realloc_fn;
  options->mem.free_fn = free_fn;
  options->mem.user = user;
}

void speedy_options_set_max_recv_control_frame(speedy_options *options, uint32_t bytes) {
  if (bytes < 64) bytes = 64; /* room for every fixed-size control frame */
  if (bytes > SPDY_MAX_FRAME_LENGTH) bytes = SPDY_MAX_FRAME_LENGTH;
  options->max_recv_control_frame = bytes;
}

void speedy_options_set_max_header_block(speedy_options *options, uint32_t bytes) {
  if (bytes < 256) bytes = 256;
  options->max_header_block = bytes;
}

void speedy_options_set_data_frame_size(speedy_options *options, uint32_t bytes) {
  if (bytes < 1) bytes = 1;
  if (bytes > SPDY_MAX_FRAME_LENGTH) bytes = SPDY_MAX_FRAME_LENGTH;
  options->data_frame_size = bytes;
}

void speedy_options_set_stream_window(speedy_options *options, uint32_t bytes) {
  if (bytes < 1) bytes = 1;
  if (bytes > SPDY_MAX_WINDOW) bytes = SPDY_MAX_WINDOW;
  options->stream_window = bytes;
  options->stream_window_set = 1;
}

void speedy_options_set_v3_autodetect(speedy_options *options, int enable) {
  if (options != NULL) options->v3_autodetect = enable != 0;
}

void speedy_options_set_session_window(speedy_options *options, uint32_t bytes) {
  /* The session window starts at 64 KiB and can only be raised by WINDOW_UPDATE. */
  if (bytes < SPEEDY_DEFAULT_WINDOW) bytes = SPEEDY_DEFAULT_WINDOW;
  if (bytes > SPDY_MAX_WINDOW) bytes = SPDY_MAX_WINDOW;
  options->session_window = bytes;
  options->session_window_set = 1;
}

void speedy_options_set_max_concurrent_streams(speedy_options *options, uint32_t n) {
  options->max_concurrent_streams = n;
}

void speedy_options_set_manual_flow_control(speedy_options *options, int manual) {
  options->manual_flow_control = manual != 0;
}

void speedy_options_set_max_queued_control_frames(speedy_options *options, uint32_t n) {
  options->max_queued_control_frames = n < 1 ? 1 : n;
}

void speedy_options_set_max_pending_streams(speedy_options *options, uint32_t n) {
  options->max_pending_streams = n;
}

int speedy_options_set_deflate_level(speedy_options *options, int level) {
  if (level < 0 || level > 9) return SPEEDY_ERR_INVALID_ARGUMENT;
  options->deflate_level = level;
  return 0;
}

int speedy_options_set_deflate_params(speedy_options *options, int level, int window_bits,
                                      int mem_level) {
  if (level < 0 || level > 9 || window_bits < 9 || window_bits > 15 || mem_level < 1 ||
      mem_level > 9)
    return SPEEDY_ERR_INVALID_ARGUMENT;
  options->deflate_level = level;
  options->deflate_window_bits = window_bits;
  options->deflate_mem_level = mem_level;
  return 0;
}

void speedy_options_set_send_initial_settings(speedy_options *options, int send) {
  options->send_initial_settings = send != 0;
}

void speedy_options_set_frame_summaries(speedy_options *options, int on) {
  options->frame_summaries = on != 0;
}

void speedy_options_set_max_frame_size(speedy_options *options, uint32_t bytes) {
  if (bytes < 16384) bytes = 16384;
  if (bytes > 16777215) bytes = 16777215;
  options->max_frame_size = bytes;
}

void speedy_options_set_header_table_size(speedy_options *options, uint32_t bytes) {
  options->header_table_size = bytes > 1024 * 1024 ? 1024 * 1024 : bytes;
}

void speedy_options_set_push(speedy_options *options, int enable) {
  options->enable_push = enable != 0;
}

void speedy_options_set_max_continuations(speedy_options *options, uint32_t n) {
  options->max_continuations = n;
}

void speedy_options_set_settings_timeout(speedy_options *options, int64_t timeout_ns) {
  options->settings_timeout_ns = timeout_ns < 0 ? 0 : timeout_ns;
}

void speedy_options_set_reset_budget(speedy_options *options, uint32_t burst, uint32_t per_second) {
  options->reset_burst = burst;
  options->reset_rate = per_second;
}

void speedy_options_set_empty_frame_budget(speedy_options *options, uint32_t burst,
                                           uint32_t per_second) {
  options->empty_frame_burst = burst;
  options->empty_frame_rate = per_second;
}

int speedy_callbacks_new(speedy_callbacks **out) {
  if (out == NULL) return SPEEDY_ERR_INVALID_ARGUMENT;
  speedy_callbacks *callbacks = calloc(1, sizeof(*callbacks));
  if (callbacks == NULL) return SPEEDY_ERR_NOMEM;
  *out = callbacks;
  return 0;
}

void speedy_callbacks_del(speedy_callbacks *callbacks) { free(callbacks); }

void speedy_callbacks_set_on_begin_headers(speedy_callbacks *c, speedy_on_begin_headers_fn fn) {
  c->on_begin_headers = fn;
}
void speedy_callbacks_set_on_header(speedy_callbacks *c, speedy_on_header_fn fn) {
  c->on_header = fn;
}
void speedy_callbacks_set_on_headers_end(speedy_callbacks *c, speedy_on_headers_end_fn fn) {
  c->on_headers_end = fn;
}
void speedy_callbacks_set_on_data_chunk(speedy_callbacks *c, speedy_on_data_chunk_fn fn) {
  c->on_data_chunk = fn;
}
void speedy_callbacks_set_on_data_end(speedy_callbacks *c, speedy_on_data_end_fn fn) {
  c->on_data_end = fn;
}
void speedy_callbacks_set_on_stream_close(speedy_callbacks *c, speedy_on_stream_close_fn fn) {
  c->on_stream_close = fn;
}
void speedy_callbacks_set_on_ping_ack(speedy_callbacks *c, speedy_on_ping_ack_fn fn) {
  c->on_ping_ack = fn;
}
void speedy_callbacks_set_on_goaway(speedy_callbacks *c, speedy_on_goaway_fn fn) {
  c->on_goaway = fn;
}
void speedy_callbacks_set_on_setting(speedy_callbacks *c, speedy_on_setting_fn fn) {
  c->on_setting = fn;
}
void speedy_callbacks_set_on_frame(speedy_callbacks *c, speedy_on_frame_fn fn) { c->on_frame = fn; }
void speedy_callbacks_set_on_send_data(speedy_callbacks *c, speedy_on_send_data_fn fn) {
  c->on_send_data = fn;
}
void speedy_callbacks_set_on_window_update(speedy_callbacks *c, speedy_on_window_update_fn fn) {
  c->on_window_update = fn;
}
void speedy_callbacks_set_on_frame_not_sent(speedy_callbacks *c, speedy_on_frame_not_sent_fn fn) {
  c->on_frame_not_sent = fn;
}
