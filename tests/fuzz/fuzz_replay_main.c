/* fuzz_replay_main.c — main() of the plain (non-libFuzzer) build of a harness: replays
 * every file of the directories or files named on the command line (see
 * fuzz_replay_main in fuzz_common.c). */
#include "fuzz_common.h"

int main(int argc, char **argv) { return fuzz_replay_main(argc, argv); }
