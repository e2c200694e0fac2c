/* synth.h — `speedy lab synth DIR`: the lab's example corpus, synthetic HAR recordings of
 * pages shaped like typical pages (request counts, hosts, sizes and type mix from
 * published web statistics, docs/lab.md "The example corpus"). Deterministic: the same
 * seed writes the same files.
 */
#ifndef SPEEDY_LAB_SYNTH_H
#define SPEEDY_LAB_SYNTH_H

/* argv[0] is "synth". Returns the exit status. */
int lab_synth_main(int argc, char **argv);

#endif
