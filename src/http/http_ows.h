/* http_ows.h — optional whitespace around a field value (RFC 9110 5.5: it is not part of
 * the value). HTTP/2 refuses values that begin or end with it (RFC 9113 8.2.1), and
 * recordings carry such values ("...GMT  "), so every field the programs send from
 * recorded or configured text is trimmed here first. Header-only: the server's and the
 * clients' libraries both use it. */
#ifndef SPEEDY_HTTP_OWS_H
#define SPEEDY_HTTP_OWS_H

#include <stddef.h>

/* Moves *value past leading SP/HTAB and shortens *len by the trailing ones. */
static inline void http_trim_ows(const char **value, size_t *len) {
  while (*len > 0 && ((*value)[0] == ' ' || (*value)[0] == '\t')) (*value)++, (*len)--;
  while (*len > 0 && ((*value)[*len - 1] == ' ' || (*value)[*len - 1] == '\t')) (*len)--;
}

#endif
