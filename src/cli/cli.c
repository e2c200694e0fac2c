/* cli.c — usage errors and numeric options for the command-line programs (see cli.h). */
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *program, const char *format, ...) {
  va_list ap;
  va_start(ap, format);
  fprintf(stderr, "%s: ", program);
  vfprintf(stderr, format, ap);
  fprintf(stderr, " (try '%s --help')\n", program);
  va_end(ap);
  return 2;
}

int cli_option_error(const char *program, const char *option, const char *value,
                     const char *accepted_format, ...) {
  fprintf(stderr, "%s: bad --%s '", program, option);
  for (const unsigned char *p = (const unsigned char *)(value != NULL ? value : ""); *p; p++) {
    if (*p < 0x20 || *p == 0x7f || *p == '\\')
      fprintf(stderr, "\\x%02x", *p);
    else
      fputc(*p, stderr);
  }
  fputs("': expected ", stderr);
  va_list ap;
  va_start(ap, accepted_format);
  vfprintf(stderr, accepted_format, ap);
  va_end(ap);
  fprintf(stderr, " (try '%s --help')\n", program);
  return 2;
}

int cli_parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out) {
  if (text == NULL || *text < '0' || *text > '9') return -1; /* strtoull takes "-1", " 1" */
  errno = 0;
  char *end;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || value < min || value > max) return -1;
  *out = value;
  return 0;
}

int cli_parse_spdy_version(const char *text, speedy_protocol *out) {
  if (text == NULL) return -1;
  if (strcmp(text, "3.1") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3_1;
  else if (strcmp(text, "3") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3;
  else if (strcmp(text, "2") == 0)
    *out = SPEEDY_PROTOCOL_SPDY2;
  else
    return -1;
  return 0;
}

int cli_parse_proto(const char *text, speedy_protocol *out, int *http1) {
  if (text == NULL) return -1;
  if (strcmp(text, "http/1.1") == 0) {
    *http1 = 1;
    return 0;
  }
  /* h2c is HTTP/2 with prior knowledge: on an http:// URL that is what h2 means too.
   * (Compared here: the programs' helpers do not link the engine.) */
  if (strcmp(text, "h2") == 0 || strcmp(text, "h2c") == 0)
    *out = SPEEDY_PROTOCOL_H2;
  else if (strcmp(text, "spdy/3.1") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3_1;
  else if (strcmp(text, "spdy/3") == 0)
    *out = SPEEDY_PROTOCOL_SPDY3;
  else if (strcmp(text, "spdy/2") == 0)
    *out = SPEEDY_PROTOCOL_SPDY2;
  else
    return -1;
  *http1 = 0;
  return 0;
}
