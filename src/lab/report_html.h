/* report_html.h — what the HTML report's two files share: report_html.c writes the page and
 * its charts, report_waterfall.c the per-page waterfalls. Internal to those files.
 */
#ifndef SPEEDY_LAB_REPORT_HTML_H
#define SPEEDY_LAB_REPORT_HTML_H

#include <stdio.h>

#include "report.h"

/* Writes s XML-escaped (& < > "), leaving out control characters other than newline. */
void report_html_escape(FILE *f, const char *s);

/* A round step for about `ticks` ticks over [0, top]: 1, 2, 2.5 or 5 times a power of 10. */
double report_html_nice_step(double top, int ticks);

/* The report's "Waterfalls" section (report_waterfall.c): per page, HTTP/1.1 and SPDY from
 * the first link group holding both. Nothing when there is no SPDY configuration. */
void report_html_waterfalls(FILE *f, const report *r);

#endif
