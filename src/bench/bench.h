/* bench.h — `speedy bench`, the SPDY and HTTP/1.1 load generator (entry point). */
#ifndef SPEEDY_BENCH_H
#define SPEEDY_BENCH_H

/* argv[0] is "bench". Returns the exit status: 0 every request answered and verified,
 * 1 any error, 2 bad usage. */
int bench_main(int argc, char **argv);

#endif /* SPEEDY_BENCH_H */
