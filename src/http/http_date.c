/* http_date.c — IMF-fixdate formatting, the three HTTP date forms parsed, log timestamps. */
#define _GNU_SOURCE
#include "http_date.h"

#include <stdio.h>
#include <string.h>

#include "http_err.h"

static const char day_names[7][4] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
static const char *const long_day_names[7] = {"Thursday", "Friday",  "Saturday", "Sunday",
                                              "Monday",   "Tuesday", "Wednesday"};
static const char month_names[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* Days since 1970-01-01 of a proleptic Gregorian date (month 1-12). */
static int64_t days_from_civil(int64_t year, int month, int day) {
  year -= month <= 2;
  int64_t era = (year >= 0 ? year : year - 399) / 400;
  int64_t year_of_era = year - era * 400;
  int64_t day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

typedef struct civil {
  int64_t year;
  int month, day, hour, minute, second, weekday; /* weekday: index into day_names */
} civil;

static civil civil_from_time(int64_t t) {
  /* 0000-01-01 and 9999-12-31 23:59:59 bound what a four-digit year can show. */
  const int64_t min = -62167219200, max = 253402300799;
  if (t < min) t = min;
  if (t > max) t = max;
  int64_t days = t / 86400, seconds = t % 86400;
  if (seconds < 0) seconds += 86400, days -= 1;
  civil c;
  c.hour = (int)(seconds / 3600);
  c.minute = (int)(seconds / 60 % 60);
  c.second = (int)(seconds % 60);
  c.weekday = (int)(((days % 7) + 7) % 7);
  int64_t z = days + 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t day_of_era = z - era * 146097;
  int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  int64_t mp = (5 * day_of_year + 2) / 153;
  c.day = (int)(day_of_year - (153 * mp + 2) / 5 + 1);
  c.month = (int)(mp < 10 ? mp + 3 : mp - 9);
  c.year = year_of_era + era * 400 + (c.month <= 2);
  return c;
}

/* Fields reduced modulo their width, so the compiler (and the reader) can see that the
 * text always fits; real dates are in range anyway. */
#define FIELD2(v) ((unsigned)(v) % 100u)
#define FIELD4(v) ((unsigned)(v) % 10000u)

/* Writes v as `digits` decimal digits (zero-padded) and returns the end. */
static char *put_digits(char *p, unsigned v, int digits) {
  for (int i = digits - 1; i >= 0; i--, v /= 10) p[i] = (char)('0' + v % 10);
  return p + digits;
}

/* "Sun, 06 Nov 1994 08:49:37 GMT", written directly: a server formats one or two per
 * answer (Last-Modified), and snprintf's parsing of the format showed in profiles. */
void http_date_format(int64_t t, char out[HTTP_DATE_SIZE]) {
  civil c = civil_from_time(t);
  char *p = out;
  memcpy(p, day_names[c.weekday], 3);
  p += 3;
  *p++ = ',';
  *p++ = ' ';
  p = put_digits(p, FIELD2(c.day), 2);
  *p++ = ' ';
  memcpy(p, month_names[c.month - 1], 3);
  p += 3;
  *p++ = ' ';
  p = put_digits(p, FIELD4(c.year), 4);
  *p++ = ' ';
  p = put_digits(p, FIELD2(c.hour), 2);
  *p++ = ':';
  p = put_digits(p, FIELD2(c.minute), 2);
  *p++ = ':';
  p = put_digits(p, FIELD2(c.second), 2);
  memcpy(p, " GMT", 5);
}

void http_date_format_log(int64_t t, char out[HTTP_LOG_DATE_SIZE]) {
  civil c = civil_from_time(t);
  snprintf(out, HTTP_LOG_DATE_SIZE, "%02u/%s/%04u:%02u:%02u:%02u +0000", FIELD2(c.day),
           month_names[c.month - 1], FIELD4(c.year), FIELD2(c.hour), FIELD2(c.minute),
           FIELD2(c.second));
}

/* A cursor over the text being parsed. */
typedef struct scanner {
  const char *p;
  const char *end;
} scanner;

static int take_literal(scanner *s, const char *literal) {
  size_t n = strlen(literal);
  if ((size_t)(s->end - s->p) < n || memcmp(s->p, literal, n) != 0) return 0;
  s->p += n;
  return 1;
}

/* Exactly `digits` decimal digits (digits <= 4). */
static int take_number(scanner *s, int digits, int *out) {
  if (s->end - s->p < digits) return 0;
  int n = 0;
  for (int i = 0; i < digits; i++) {
    char c = s->p[i];
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  s->p += digits;
  *out = n;
  return 1;
}

static int take_month(scanner *s, int *month) {
  for (int i = 0; i < 12; i++) {
    if (take_literal(s, month_names[i])) {
      *month = i + 1;
      return 1;
    }
  }
  return 0;
}

static int take_day_name(scanner *s, int long_form) {
  for (int i = 0; i < 7; i++)
    if (take_literal(s, long_form ? long_day_names[i] : day_names[i])) return 1;
  return 0;
}

/* "HH:MM:SS" */
static int take_clock(scanner *s, int *hour, int *minute, int *second) {
  return take_number(s, 2, hour) && take_literal(s, ":") && take_number(s, 2, minute) &&
         take_literal(s, ":") && take_number(s, 2, second);
}

static int days_in_month(int64_t year, int month) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : days[month - 1];
}

int http_date_parse(const char *text, size_t len, int64_t *out) {
  if (text == NULL || out == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  scanner s = {text, text + len};
  while (s.p < s.end && (*s.p == ' ' || *s.p == '\t')) s.p++;
  while (s.end > s.p && (s.end[-1] == ' ' || s.end[-1] == '\t')) s.end--;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  scanner fixdate = s, rfc850 = s, asctime = s;
  if (take_day_name(&fixdate, 0) && take_literal(&fixdate, ", ") &&
      take_number(&fixdate, 2, &day) && take_literal(&fixdate, " ") &&
      take_month(&fixdate, &month) && take_literal(&fixdate, " ") &&
      take_number(&fixdate, 4, &year) && take_literal(&fixdate, " ") &&
      take_clock(&fixdate, &hour, &minute, &second) && take_literal(&fixdate, " GMT") &&
      fixdate.p == fixdate.end) {
    /* IMF-fixdate */
  } else if (take_day_name(&rfc850, 1) && take_literal(&rfc850, ", ") &&
             take_number(&rfc850, 2, &day) && take_literal(&rfc850, "-") &&
             take_month(&rfc850, &month) && take_literal(&rfc850, "-") &&
             take_number(&rfc850, 2, &year) && take_literal(&rfc850, " ") &&
             take_clock(&rfc850, &hour, &minute, &second) && take_literal(&rfc850, " GMT") &&
             rfc850.p == rfc850.end) {
    year += year < 70 ? 2000 : 1900;
  } else if (take_day_name(&asctime, 0) && take_literal(&asctime, " ") &&
             take_month(&asctime, &month) && take_literal(&asctime, " ") &&
             (take_literal(&asctime, " ") ? take_number(&asctime, 1, &day)
                                          : take_number(&asctime, 2, &day)) &&
             take_literal(&asctime, " ") && take_clock(&asctime, &hour, &minute, &second) &&
             take_literal(&asctime, " ") && take_number(&asctime, 4, &year) &&
             asctime.p == asctime.end) {
    /* asctime */
  } else {
    return HTTP_ERR_SYNTAX;
  }
  if (day < 1 || day > days_in_month(year, month) || hour > 23 || minute > 59 || second > 60)
    return HTTP_ERR_SYNTAX;
  if (second == 60) second = 59; /* a leap second: the instant just before is close enough */
  *out = days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  return 0;
}
