/* plan.h — page plans (docs/lab-formats.md, "speedy-lab-plan/1") made from the pages of a
 * HAR recording: what the replay server serves and the loader requests. `speedy lab plan`.
 *
 * Conversion rules (docs/lab.md, "Plan"): resources are the page's replayed entries in
 * start order; hosts are (host, port) pairs in order of first use; parents come from the
 * page's dependency graph (estimated or flat), skipping entries left out of the replay;
 * paths are percent-encoded to visible ASCII; headers lose hop-by-hop, connection and
 * cold-cache fields; a 304 replayed as 200 takes its recorded copy's response headers.
 */
#ifndef SPEEDY_LAB_PLAN_H
#define SPEEDY_LAB_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "har.h"
#include "page.h"

#define LAB_PLAN_FORMAT "speedy-lab-plan/1"
#define LAB_PLAN_MAX_HOSTS 250 /* 198.19.0.(i+1), i < 250 */

typedef struct lab_plan_options {
  int flat_graph; /* 1: parents from Referer only (no script dependencies estimated) */
  uint64_t seed;  /* the replay's body-byte seed, written into the plan */
} lab_plan_options;

/* The plan of page number page_index (0-based) of har. Returns a new JSON object (the
 * caller releases it with json_decref), or NULL with why in err: "nothing to replay" (no
 * replayable resource), "more than 250 hosts", "out of memory". The plan's "left_out"
 * counts the page's entries that are not replayed, by reason ("data: URL", "websocket",
 * "no answer (status 0)", "304 without a recorded copy", ...). */
json_t *lab_plan_build(const lab_har *har, const lab_page_set *pages, size_t page_index,
                       const lab_plan_options *options, char *err, size_t err_size);

/* The same for a page the lab would replay: NULL with the reason in why when
 * lab_page_skip_reason refuses the page or the plan cannot be made. */
json_t *lab_plan_page(const lab_har *har, const lab_page_set *pages, size_t page_index,
                      const lab_plan_options *options, char *why, size_t why_size);

/* The server addresses of an h2-coalesced load: hosts whose recorded address ("address",
 * the HAR's serverIPAddress, a label) is the same share one, in order of first use; a host
 * without one has its own. group_of gets each host's index (n_hosts entries, the plan's
 * "hosts" in order). Returns how many addresses. */
size_t lab_plan_address_groups(const json_t *plan, unsigned *group_of, size_t n_hosts);

/* "document", "css", "script", "font", "image" or "other", from the MIME type, else the
 * path's extension. */
const char *lab_plan_type(const lab_entry *e);

/* `speedy lab plan`: argv[0] is "plan". Returns the exit status. */
int lab_plan_main(int argc, char **argv);

#endif
