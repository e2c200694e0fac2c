/* rng.c — splitmix64 and the draws made from it (rng.h). */
#include "rng.h"

void rng_seed(rng_gen *gen, uint64_t seed) { gen->state = seed; }

uint64_t rng_next(rng_gen *gen) {
  uint64_t z = (gen->state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

size_t rng_below(rng_gen *gen, size_t n) {
  /* Rejection keeps the draw unbiased for any n. */
  uint64_t limit = UINT64_MAX - UINT64_MAX % (uint64_t)n;
  uint64_t x;
  do x = rng_next(gen);
  while (x >= limit);
  return (size_t)(x % (uint64_t)n);
}

double rng_uniform(rng_gen *gen) { return (double)(rng_next(gen) >> 11) / 9007199254740992.0; }
