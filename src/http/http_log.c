/* http_log.c — access log lines with every peer-controlled byte escaped. */
#define _GNU_SOURCE
#include "http_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http_date.h"

static int needs_escape(unsigned char c) { return c < 0x20 || c >= 0x7f || c == '"' || c == '\\'; }

size_t http_log_escape(const char *in, size_t len, char *out, size_t cap) {
  static const char hex[] = "0123456789abcdef";
  size_t pos = 0;
  if (cap == 0) return 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (needs_escape(c)) {
      if (cap - pos < 5) break;
      out[pos++] = '\\';
      out[pos++] = 'x';
      out[pos++] = hex[c >> 4];
      out[pos++] = hex[c & 15];
    } else {
      if (cap - pos < 2) break;
      out[pos++] = (char)c;
    }
  }
  out[pos] = '\0';
  return pos;
}

/* A bounded writer over the output line. */
typedef struct line_writer {
  char *out;
  size_t cap;
  size_t pos;
  int overflow;
} line_writer;

static void put_raw(line_writer *w, const char *s, size_t len) {
  if (w->overflow || len >= w->cap - w->pos) {
    w->overflow = 1;
    return;
  }
  memcpy(w->out + w->pos, s, len);
  w->pos += len;
  w->out[w->pos] = '\0';
}

/* A peer field: escaped, cut at HTTP_LOG_MAX_FIELD input bytes, "-" when absent. */
static void put_field(line_writer *w, const char *s) {
  if (s == NULL || s[0] == '\0') {
    put_raw(w, "-", 1);
    return;
  }
  size_t len = strlen(s);
  int cut = len > HTTP_LOG_MAX_FIELD;
  if (cut) len = HTTP_LOG_MAX_FIELD;
  char escaped[4 * HTTP_LOG_MAX_FIELD + 1];
  size_t n = http_log_escape(s, len, escaped, sizeof(escaped));
  put_raw(w, escaped, n);
  if (cut) put_raw(w, "...", 3);
}

size_t http_log_format(const http_log_entry *entry, char *out, size_t cap) {
  if (entry == NULL || out == NULL || cap == 0) return 0;
  line_writer w = {out, cap, 0, 0};
  out[0] = '\0';
  char date[HTTP_LOG_DATE_SIZE];
  char number[96];
  http_date_format_log(entry->time, date);
  put_field(&w, entry->peer);
  put_raw(&w, " - - [", 6);
  put_raw(&w, date, strlen(date));
  put_raw(&w, "] \"", 3);
  put_field(&w, entry->method);
  put_raw(&w, " ", 1);
  put_field(&w, entry->path);
  put_raw(&w, " ", 1);
  put_field(&w, entry->version);
  int n = entry->body_bytes == 0 ? snprintf(number, sizeof(number), "\" %d - \"", entry->status)
                                 : snprintf(number, sizeof(number), "\" %d %" PRIu64 " \"",
                                            entry->status, entry->body_bytes);
  put_raw(&w, number, (size_t)n);
  put_field(&w, entry->referer);
  put_raw(&w, "\" \"", 3);
  put_field(&w, entry->user_agent);
  put_raw(&w, "\" ", 2);
  put_field(&w, entry->protocol);
  n = snprintf(number, sizeof(number), " %" PRId64 " %" PRIu64 " %" PRIu64 "\n", entry->stream_id,
               entry->bytes_in, entry->bytes_out);
  put_raw(&w, number, (size_t)n);
  if (w.overflow) {
    out[0] = '\0';
    return 0;
  }
  return w.pos;
}
