/* http_date.h — HTTP dates (RFC 7231 7.1.1.1) and the access log's timestamp.
 *
 * Times are seconds since the Unix epoch (int64_t, UTC). Formatting uses our own
 * calendar arithmetic, not the C library's time zone machinery.
 */
#ifndef SPEEDY_HTTP_DATE_H
#define SPEEDY_HTTP_DATE_H

#include <stddef.h>
#include <stdint.h>

/* "Sun, 06 Nov 1994 08:49:37 GMT": 29 characters and a NUL. */
#define HTTP_DATE_SIZE 30
/* "06/Nov/1994:08:49:37 +0000" (the combined log format's, in UTC): 26 and a NUL. */
#define HTTP_LOG_DATE_SIZE 27

/* Formats t as IMF-fixdate. Years outside 0..9999 are clamped to that range. */
void http_date_format(int64_t t, char out[HTTP_DATE_SIZE]);
/* Formats t for the access log. */
void http_date_format_log(int64_t t, char out[HTTP_LOG_DATE_SIZE]);

/* Parses an HTTP date in any of the three forms a recipient must accept:
 *   IMF-fixdate  "Sun, 06 Nov 1994 08:49:37 GMT"
 *   RFC 850      "Sunday, 06-Nov-94 08:49:37 GMT"  (two-digit year: 70-99 -> 19xx,
 *                                                   00-69 -> 20xx)
 *   asctime      "Sun Nov  6 08:49:37 1994"
 * The day name is checked for form but not against the date. Leading and trailing
 * whitespace is allowed. Returns 0 and *out, or HTTP_ERR_SYNTAX. */
int http_date_parse(const char *text, size_t len, int64_t *out);

#endif
