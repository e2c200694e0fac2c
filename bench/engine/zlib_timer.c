/* zlib_timer.c — wrappers around zlib's entry points that add up the time spent inside
 * them (see zlib_timer.h). The link line passes --wrap=<symbol> for each wrapped symbol,
 * so the engine's calls to deflate() arrive at __wrap_deflate(), which calls the real
 * one through __real_deflate().
 */
#define _POSIX_C_SOURCE 200809L

#include "zlib_timer.h"

#include <time.h>
#include <zlib.h>

static int timer_on;
static zlib_timer_totals totals;

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void zlib_timer_enable(int on) { timer_on = on; }
void zlib_timer_reset(void) { totals = (zlib_timer_totals){0}; }
void zlib_timer_get(zlib_timer_totals *out) { *out = totals; }

double zlib_timer_overhead_ns(void) {
  enum { N = 200000 };
  uint64_t start = now_ns();
  uint64_t sink = 0;
  for (int i = 0; i < N; i++) sink += now_ns();
  uint64_t elapsed = now_ns() - start;
  (void)sink;
  /* A wrapped call reads the clock twice; about half of that lands inside the interval. */
  return 2.0 * (double)elapsed / N;
}

#if defined(ZLIB_TIMER_WRAPPED) && ZLIB_TIMER_WRAPPED

int zlib_timer_available(void) { return 1; }

/* Declarations of the real functions (resolved by the linker) and the wrappers
 * (prototypes keep -Wmissing-prototypes quiet: they are called only through the linker). */
#define ZLIB_TIMER_WRAP(side, ret, name, params, args)                                             \
  ret __real_##name params;                                                                        \
  ret __wrap_##name params;                                                                        \
  ret __wrap_##name params {                                                                       \
    if (!timer_on) return __real_##name args;                                                      \
    uint64_t start = now_ns();                                                                     \
    ret result = __real_##name args;                                                               \
    totals.side##_ns += now_ns() - start;                                                          \
    totals.side##_calls++;                                                                         \
    return result;                                                                                 \
  }

ZLIB_TIMER_WRAP(deflate, int, deflate, (z_streamp strm, int flush), (strm, flush))
ZLIB_TIMER_WRAP(deflate, int, deflateSetDictionary,
                (z_streamp strm, const Bytef *dictionary, uInt len), (strm, dictionary, len))
ZLIB_TIMER_WRAP(deflate, int, deflateInit2_,
                (z_streamp strm, int level, int method, int window_bits, int mem_level,
                 int strategy, const char *version, int stream_size),
                (strm, level, method, window_bits, mem_level, strategy, version, stream_size))
ZLIB_TIMER_WRAP(deflate, int, deflateInit_,
                (z_streamp strm, int level, const char *version, int stream_size),
                (strm, level, version, stream_size))
ZLIB_TIMER_WRAP(deflate, int, deflateReset, (z_streamp strm), (strm))
ZLIB_TIMER_WRAP(deflate, int, deflateEnd, (z_streamp strm), (strm))
ZLIB_TIMER_WRAP(deflate, uLong, deflateBound, (z_streamp strm, uLong source_len),
                (strm, source_len))
ZLIB_TIMER_WRAP(inflate, int, inflate, (z_streamp strm, int flush), (strm, flush))
ZLIB_TIMER_WRAP(inflate, int, inflateSetDictionary,
                (z_streamp strm, const Bytef *dictionary, uInt len), (strm, dictionary, len))
ZLIB_TIMER_WRAP(inflate, int, inflateInit2_,
                (z_streamp strm, int window_bits, const char *version, int stream_size),
                (strm, window_bits, version, stream_size))
ZLIB_TIMER_WRAP(inflate, int, inflateInit_, (z_streamp strm, const char *version, int stream_size),
                (strm, version, stream_size))
ZLIB_TIMER_WRAP(inflate, int, inflateReset, (z_streamp strm), (strm))
ZLIB_TIMER_WRAP(inflate, int, inflateEnd, (z_streamp strm), (strm))

#else

int zlib_timer_available(void) { return 0; }

#endif
