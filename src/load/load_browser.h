/* load_browser.h — the request headers a real browser sends for a plan's resources
 * (`speedy load --chromium-headers`, docs/lab-loader.md "Request headers") and the network
 * partition it puts each request in (`--chromium-sockets`).
 *
 * Pure: rewrites a parsed plan in memory, no sockets. The loader otherwise sends the
 * headers of the recording; Chromium in the lab sends its own, about half as long again,
 * and on a slow uplink those bytes take time. And which resources its load event waits for.
 */
#ifndef SPEEDY_LOAD_BROWSER_H
#define SPEEDY_LOAD_BROWSER_H

#include "load_plan.h"

/* Replaces every resource's request headers with those headless Chromium 156 sends for the
 * same request in the lab, where the replay's page bodies decide how each resource is asked
 * for (docs/lab-replay.md, "Page bodies"): a navigation or a frame, an element, a style
 * sheet's url() or @font-face, a fetch(). tls picks the scheme of Referer and Origin.
 * Recorded cookies are dropped (a fresh profile has none). Returns 0, or -1 when out of
 * memory; the plan stays valid either way (a resource keeps its old headers or gets the
 * new ones whole) and the caller still frees it with load_plan_del. */
int load_browser_set_chromium_headers(load_plan *plan, int tls);

/* How the site of host a relates to b's, as Sec-Fetch-Site says it: "same-origin" (same
 * name and port), "same-site" (same registrable domain; see load_browser.c for how it is
 * approximated without the public suffix list) or "cross-site". */
const char *load_browser_site(const load_host *a, const load_host *b);

/* Chromium's network partition of each request (`speedy load --chromium-sockets`,
 * docs/lab-loader.md "Sockets"): cross[i] is 1 when resource i is asked for by a frame whose
 * site is not the page's (or is such a frame's navigation), 0 otherwise — the cross-site
 * bit of its NetworkAnonymizationKey, whose top-frame site is the page's for every request
 * of a load. Sockets are not shared across partitions. cross has n_resources entries.
 * Returns 0, or -1 when out of memory. */
int load_browser_cross_site_frames(const load_plan *plan, unsigned char *cross);

/* Whether Chromium's load event waits for each resource (`speedy load --load-event`,
 * docs/lab-loader.md "The page load time"): waits[i] is 0 when resource i is asked for by
 * a fetch() or a preload as fetch (the replay's page bodies ask so for "other" and fonts
 * outside style sheets, images without bytes, and any method but GET; a redirect's target
 * as its source), which the load event does not wait for; 1 for everything else (the page,
 * frames, style sheets and what they name, scripts, images). waits has n_resources
 * entries. Returns 0, or -1 when out of memory. */
int load_browser_load_event_waits(const load_plan *plan, unsigned char *waits);

#endif /* SPEEDY_LOAD_BROWSER_H */
