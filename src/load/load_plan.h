/* load_plan.h — the page plan (`speedy-lab-plan/1`, docs/lab-formats.md) as the loader
 * sees it: hosts, resources, their request headers and discovery rules.
 *
 * Pure: parsing and checking only, no sockets. Everything the loader later sends on the
 * wire (paths, header names and values) is checked here once, so the network code can
 * copy it into requests without checking again.
 */
#ifndef SPEEDY_LOAD_PLAN_H
#define SPEEDY_LOAD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#define LOAD_PLAN_FORMAT "speedy-lab-plan/1"
#define LOAD_PLAN_MAX_RESOURCES 20000
#define LOAD_PLAN_MAX_HOSTS 250   /* 198.19.0.(i+1), i < 250 */
#define LOAD_PLAN_MAX_HEADERS 128 /* request headers per resource */
#define LOAD_PLAN_MAX_FILE (64u << 20)

typedef enum load_type {
  LOAD_TYPE_DOCUMENT = 0,
  LOAD_TYPE_CSS,
  LOAD_TYPE_SCRIPT,
  LOAD_TYPE_FONT,
  LOAD_TYPE_IMAGE,
  LOAD_TYPE_OTHER
} load_type;

/* "document", "css", ... */
const char *load_type_name(load_type type);
/* The SPDY urgency of a type (0 most urgent): document 0, css and script 1, font 2,
 * image 4, other 5. HTTP/1.1 priority dispatch uses the same order. */
int load_type_urgency(load_type type);

typedef struct load_header {
  char *name;  /* lower case, a token */
  char *value; /* no CR, LF or NUL */
} load_header;

typedef struct load_host {
  char *name; /* recorded host name: a label only, never resolved; an IPv6 literal keeps
                 its brackets, as Host needs them */
  int port;
} load_host;

typedef struct load_resource {
  int id;
  int host;
  char *method; /* a token, e.g. "GET" */
  char *path;   /* starts with '/', printable ASCII without spaces */
  load_type type;
  int parent;              /* -1: starts with the load */
  int64_t discover_offset; /* -1: when the parent has fully arrived */
  double start_delay_ms;
  load_header *request_headers;
  size_t n_request_headers;
  int status;
  uint64_t body_size;
  int redirect_to; /* -1 or the target's id */
  int after_cutoff;
  /* HTTP/2's priority field as Chromium sends it (RFC 9218), set by
   * load_browser_set_chromium_headers; browser_priority 0: the type's urgency
   * (load_type_urgency) as the engine writes it */
  unsigned char browser_priority;
  unsigned char browser_urgency; /* 0 to 7 */
  unsigned char browser_incremental;
} load_resource;

typedef struct load_plan {
  char *source;
  char *page;
  int64_t seed;
  load_host *hosts;
  size_t n_hosts;
  char **server_names; /* per host: the name TLS checks (SNI, certificate), without the
                          brackets of an IPv6 literal; NULL in plans not read by
                          load_plan_parse (see load_plan_server_name) */
  load_resource *resources;
  size_t n_resources;
} load_plan;

/* Parses a plan from memory (len bytes, need not be NUL-terminated). Returns 0 and a plan
 * the caller frees with load_plan_del, or -1 with a one-line reason in err ("resources[3]
 * .parent: 7 is not an earlier resource" or a JSON error with line and column). */
int load_plan_parse(const char *text, size_t len, load_plan **out, char *err, size_t err_len);

/* Reads and parses a plan file (at most LOAD_PLAN_MAX_FILE bytes). As load_plan_parse. */
int load_plan_read(const char *file, load_plan **out, char *err, size_t err_len);

void load_plan_del(load_plan *plan);

/* The host index whose name equals name (ASCII case-insensitive; a ":port" suffix in name
 * is ignored), or -1. */
/* The name TLS checks for host i: its name without an IPv6 literal's brackets. */
const char *load_plan_server_name(const load_plan *plan, size_t host);

int load_plan_find_host(const load_plan *plan, const char *name, size_t len);

/* The resource the redirect chain that starts at resource id ends at (id itself when it
 * does not redirect). load_plan_parse refuses redirect cycles; a plan made otherwise is
 * followed at most n_resources hops. */
int load_plan_final_target(const load_plan *plan, int id);

/* How the replay's page bodies (docs/lab-replay.md, "Page bodies") make a browser ask for
 * resource id: the type of its redirect chain's final target, except that an image without
 * bytes and a document answered 204/205 (or empty and not 200), which Chromium would
 * cancel, are fetched as LOAD_TYPE_OTHER. */
load_type load_plan_reference_type(const load_plan *plan, int id);
/* The resource whose body references id: its parent's final target, else the page's. */
int load_plan_referencing(const load_plan *plan, int id);
/* The document a resource found in resource id's body belongs to: id itself when it is a
 * document, else the nearest document up the referencing chain (the page's at most). */
int load_plan_document_of(const load_plan *plan, int id);

#endif /* SPEEDY_LOAD_PLAN_H */
