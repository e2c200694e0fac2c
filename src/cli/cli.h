/* cli.h — helpers shared by the command-line programs (speedyd and the speedy commands):
 * usage errors in one format and strict parsing of numeric options.
 */
#ifndef SPEEDY_CLI_H
#define SPEEDY_CLI_H

#include <stdint.h>

#include "speedy/speedy.h"

/* Prints "PROGRAM: MESSAGE (try 'PROGRAM --help')" to stderr and returns 2, the exit
 * status for bad usage. */
int cli_usage_error(const char *program, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* The one style of option error for every program: prints
 * "PROGRAM: bad --OPTION 'VALUE': expected ACCEPTED (try 'PROGRAM --help')" to stderr, the
 * value escaped for the terminal, and returns 2. OPTION is given without its dashes;
 * ACCEPTED names the valid values or range ("1 to 16", "fcfs or priority"). */
int cli_option_error(const char *program, const char *option, const char *value,
                     const char *accepted_format, ...) __attribute__((format(printf, 4, 5)));

/* Parses a plain unsigned decimal (no sign, no spaces, no suffix) within [min, max].
 * Returns 0 and sets *out, or -1 leaving *out untouched. */
int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out);

/* Parses a --spdy argument: "3.1", "3" or "2". Returns 0 and sets *out, or -1. */
int cli_parse_spdy_version(const char *text, speedy_protocol *out);
/* Parses a --proto argument: "h2", "h2c" (HTTP/2 with prior knowledge; the same protocol),
 * "spdy/3.1", "spdy/3", "spdy/2" or "http/1.1". Returns 0 with *http1 = 1 for HTTP/1.1, or
 * with *http1 = 0 and *out the engine's protocol; -1 (nothing set) for anything else. */
int cli_parse_proto(const char *text, speedy_protocol *out, int *http1);
/* Accepted --proto values, for messages and --help. */
#define CLI_PROTO_VALUES "h2, h2c, spdy/3.1, spdy/3, spdy/2 or http/1.1"

#endif
