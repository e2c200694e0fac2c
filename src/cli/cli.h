/* cli.h — helpers shared by the command-line programs (speedyd and the speedy commands):
 * usage errors in one format and strict parsing of numeric options.
 */
#ifndef SPEEDY_CLI_H
#define SPEEDY_CLI_H

#include <stdint.h>

#include "spdy/spdy.h"

/* Prints "PROGRAM: MESSAGE (try 'PROGRAM --help')" to stderr and returns 2, the exit
 * status for bad usage. */
int cli_usage_error(const char *program, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a plain unsigned decimal (no sign, no spaces, no suffix) within [min, max].
 * Returns 0 and sets *out, or -1 leaving *out untouched. */
int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Parses a --spdy argument: "3.1", "3" or "2". Returns 0 and sets *out, or -1. */
int cli_parse_spdy_version(const char *text, spdy_protocol *out);

#endif
