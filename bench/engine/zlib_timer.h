/* zlib_timer.h — time spent inside zlib, measured by wrapping zlib's entry points at link
 * time (ld --wrap), for bench_engine's "zlib share" figure.
 *
 * Every call the engine (or bench_engine) makes to deflate, inflate, their dictionary,
 * init, reset and end functions goes through a wrapper that reads CLOCK_MONOTONIC before
 * and after the real call while the timer is on. Only built when the linker supports
 * --wrap (ZLIB_TIMER_AVAILABLE is then 1); otherwise the functions below do nothing and
 * report zero.
 */
#ifndef BENCH_ENGINE_ZLIB_TIMER_H
#define BENCH_ENGINE_ZLIB_TIMER_H

#include <stdint.h>

typedef struct zlib_timer_totals {
  uint64_t deflate_ns; /* deflate and its dictionary, init, reset, bound and end calls */
  uint64_t inflate_ns; /* the same for inflate */
  uint64_t deflate_calls;
  uint64_t inflate_calls;
} zlib_timer_totals;

/* 1 when the wrappers are linked in (the figures are real). */
int zlib_timer_available(void);
/* Starts or stops timing; totals keep accumulating across on/off. */
void zlib_timer_enable(int on);
void zlib_timer_reset(void);
void zlib_timer_get(zlib_timer_totals *out);
/* Estimated cost the timer adds per wrapped call, in nanoseconds (two clock reads). */
double zlib_timer_overhead_ns(void);

#endif
