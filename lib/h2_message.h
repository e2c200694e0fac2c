/* h2_message.h — HTTP/2's rules for messages (RFC 9113 section 8): which fields a request,
 * a promised request, a response or a trailer section may carry, checked field by field
 * in block order, and what the session needs to know afterwards (the method, the status,
 * content-length, the priority field).
 *
 * The same checks serve both directions: the codec runs the peer's decoded blocks through
 * them (a broken rule makes the message malformed: a stream error PROTOCOL_ERROR, 8.1.1),
 * and header lists the application submits, so that we never send what we would refuse.
 * Pure functions: no session, no allocation.
 */
#ifndef SPEEDY_LIB_H2_MESSAGE_H
#define SPEEDY_LIB_H2_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "priority.h"

typedef enum speedy_h2_message_kind {
  SPEEDY_H2_MSG_REQUEST = 1, /* a request's header section */
  SPEEDY_H2_MSG_PROMISE,     /* a promised request (PUSH_PROMISE, 8.4.1) */
  SPEEDY_H2_MSG_RESPONSE,    /* a response's header section, informational or final */
  SPEEDY_H2_MSG_TRAILERS     /* a trailer section */
} speedy_h2_message_kind;

typedef enum speedy_h2_method {
  SPEEDY_H2_METHOD_NONE = 0,
  SPEEDY_H2_METHOD_GET,
  SPEEDY_H2_METHOD_HEAD,
  SPEEDY_H2_METHOD_CONNECT,
  SPEEDY_H2_METHOD_OTHER
} speedy_h2_method;

typedef struct speedy_h2_message {
  speedy_h2_message_kind kind;
  uint8_t malformed;       /* a rule was broken (why says which) */
  uint8_t regular_seen;    /* a regular field came: no pseudo-header field may follow */
  uint8_t pseudo;          /* SPEEDY_H2_PSEUDO_* bits seen */
  uint8_t method;          /* speedy_h2_method */
  uint8_t path_empty;      /* :path was present and empty */
  uint8_t has_priority;    /* a priority field that parsed */
  uint16_t status;         /* :status, 0 when absent */
  int64_t content_length;  /* -1 when absent */
  uint64_t authority_hash; /* :authority, lower-cased, hashed (8.3.1 compares host with it) */
  speedy_priority priority;
  const char *why; /* the broken rule, for traces and GOAWAY debug data */
} speedy_h2_message;

#define SPEEDY_H2_PSEUDO_METHOD 0x01
#define SPEEDY_H2_PSEUDO_SCHEME 0x02
#define SPEEDY_H2_PSEUDO_AUTHORITY 0x04
#define SPEEDY_H2_PSEUDO_PATH 0x08
#define SPEEDY_H2_PSEUDO_STATUS 0x10

void speedy_h2_message_begin(speedy_h2_message *m, speedy_h2_message_kind kind);
/* One field, in block order. Returns 0, or -1 when it makes the message malformed (the
 * message stays malformed; later fields are still accepted for counting). */
int speedy_h2_message_field(speedy_h2_message *m, const uint8_t *name, size_t name_len,
                            const uint8_t *value, size_t value_len);
/* The same for a field whose octets HPACK already judged by the checks below (flags:
 * SPEEDY_HPACK_NAME_OK, SPEEDY_HPACK_VALUE_OK, from hpack.h): what passed is not scanned
 * again. */
int speedy_h2_message_field_judged(speedy_h2_message *m, const uint8_t *name, size_t name_len,
                                   const uint8_t *value, size_t value_len, unsigned flags);
/* RFC 9113 8.2.1's octet rules for a name and for a value (1: allowed), as the HPACK
 * decoder's checks (speedy_hpack_decoder_set_checks). */
int speedy_h2_name_octets_ok(const uint8_t *name, size_t len);
int speedy_h2_value_octets_ok(const uint8_t *value, size_t len);
/* After the last field: the pseudo-header fields the kind requires. Returns 0 or -1. */
int speedy_h2_message_end(speedy_h2_message *m);

/* 1 if name (lower case) is a pseudo-header field name: starts with ':'. */
static inline int speedy_h2_is_pseudo(const uint8_t *name, size_t len) {
  return len > 0 && name[0] == ':';
}

#endif
