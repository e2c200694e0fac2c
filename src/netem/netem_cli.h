/* netem_cli.h — entry point of the `speedy netem` subcommand (cli.c). */
#ifndef SPEEDY_NETEM_CLI_H
#define SPEEDY_NETEM_CLI_H

/* argv[0] is "netem". Returns the exit status: the client command's, 1 when the link
 * fails, 2 for bad usage. */
int netem_cli_main(int argc, char **argv);

#endif
