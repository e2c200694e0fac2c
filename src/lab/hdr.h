/* hdr.h — header-compression figures of recorded pages: request and response headers as
 * HTTP/1.1 text against SPDY SYN_STREAM / SYN_REPLY frames compressed by libspeedy's own
 * header-block code (lib/hdblock.h), one zlib context per direction per host as a
 * browser's per-host SPDY session would have, and against HTTP/2 HEADERS frames with
 * HPACK (one dynamic table per direction per host). No network.
 */
#ifndef SPEEDY_LAB_HDR_H
#define SPEEDY_LAB_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "har.h"

typedef struct lab_hdr_setting {
  int level, window_bits, mem_level;
} lab_hdr_setting;

typedef struct lab_hdr_figures {
  uint64_t entries;     /* exchanges counted */
  uint64_t hosts;       /* compression contexts per direction */
  uint64_t skipped;     /* entries whose headers SPDY cannot carry (reason on stderr) */
  uint64_t no_response; /* status 0: request counted, no response */
  uint64_t request_http1, request_spdy;   /* bytes */
  uint64_t response_http1, response_spdy; /* bytes */
  /* HTTP/2: HEADERS frames with HPACK, over the exchanges HTTP/2 can carry, against the
   * HTTP/1.1 bytes of those same exchanges. */
  uint64_t hpack_skipped; /* exchanges HTTP/2 refuses (its figures leave them out) */
  uint64_t request_hpack, hpack_request_http1;
  uint64_t response_hpack, hpack_response_http1;
} lab_hdr_figures;

/* The engine's default zlib setting for header compression (speedy_options' defaults). */
void lab_hdr_setting_default(lab_hdr_setting *setting);

/* Measures entries[0..n) of har (indices, in the order the browser sent them) with SPDY
 * version (2 or 3) at setting, adding to *figures. Returns 0, or -1 with a reason in err
 * (a zlib failure). Entries with headers SPDY forbids are skipped and counted. */
int lab_hdr_measure(const lab_har *har, const size_t *entries, size_t n, int version,
                    const lab_hdr_setting *setting, lab_hdr_figures *figures, char *err,
                    size_t err_size);

/* Percent smaller than HTTP/1.1: 100 * (1 - spdy / http1); 0 when http1 is 0. */
double lab_hdr_reduction(uint64_t http1, uint64_t spdy);

#endif
