/* load.h — entry point of `speedy load PLAN [options]` (src/load/, docs/lab-loader.md). */
#ifndef SPEEDY_LOAD_H
#define SPEEDY_LOAD_H

/* argv[0] is "load". Returns the exit status: 0, 1 (the load could not run, or an invalid
 * load with --strict), 2 (bad usage). */
int load_main(int argc, char **argv);

#endif /* SPEEDY_LOAD_H */
