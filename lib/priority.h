/* priority.h — RFC 9218 priority parameters: the urgency (u) and incremental (i) members
 * of a Priority field value or a PRIORITY_UPDATE frame, a Structured Fields Dictionary
 * (RFC 8941 4.2.2) read in full and kept only for those two members.
 *
 * Pure functions over bytes; protocol-neutral (HTTP/2's codec uses them, HTTP/3 could).
 */
#ifndef SPEEDY_LIB_PRIORITY_H
#define SPEEDY_LIB_PRIORITY_H

#include <stddef.h>
#include <stdint.h>

#define SPEEDY_PRIORITY_DEFAULT_URGENCY 3

typedef struct speedy_priority {
  uint8_t urgency;     /* 0 (most urgent) .. 7 */
  uint8_t incremental; /* 0 or 1 */
} speedy_priority;

/* Parses a field value. Members other than u and i, u outside 0-7 and values of the wrong
 * type are ignored (RFC 9218 4); what is absent keeps the defaults (u=3, i=0). Returns 0
 * and sets *out, or -1 when the value is not a Structured Fields Dictionary (*out then
 * holds the defaults). */
int speedy_priority_parse(const uint8_t *value, size_t len, speedy_priority *out);

#endif
