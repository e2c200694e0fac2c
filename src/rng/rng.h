/* rng.h — the programs' deterministic random numbers: splitmix64 (Steele, Lea and Flood),
 * seeded by the caller, so that a seed always gives the same draws (the lab's bootstrap,
 * load order and synthetic corpus; the loader's --jitter). Not for anything secret.
 */
#ifndef SPEEDY_RNG_H
#define SPEEDY_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng_gen {
  uint64_t state;
} rng_gen;

void rng_seed(rng_gen *gen, uint64_t seed);
uint64_t rng_next(rng_gen *gen);
/* Uniform in [0, n), without bias; n > 0. */
size_t rng_below(rng_gen *gen, size_t n);
/* Uniform in [0, 1), 53 bits. */
double rng_uniform(rng_gen *gen);

#endif /* SPEEDY_RNG_H */
