/* get_trace.c — `speedy get -v`: what went over the wire, on stderr, in nghttp -v's
 * layout. Every entry starts with the seconds since the run started ("[  0.012]"); SPDY
 * frames are named, with their length, flags (by name), stream, the frame's own fields,
 * SETTINGS entries by name and value, and the header fields decoded beneath. HTTP/1.1
 * requests and response heads are shown line by line. Bytes from the peer are escaped.
 *
 * Frames come from the engine's trace callback (speedy_on_frame_fn) and its summary of the
 * frame's fields; nothing here reads wire bytes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "get_int.h"

#define INDENT "          " /* under "[  0.012] " */

/* SPDY frame flags (SPDY/3 2.2, 2.6; the same bits in SPDY/2): FIN 0x01 on DATA,
 * SYN_STREAM, SYN_REPLY and HEADERS; UNIDIRECTIONAL 0x02 on SYN_STREAM; COMPRESS 0x02 on
 * SPDY/2 DATA; CLEAR_SETTINGS 0x01 on SETTINGS. */
#define FLAG_CLEAR_SETTINGS 0x01

static void stamp(const get_run *run) {
  int64_t ns = get_now_ns() - run->t_start;
  if (ns < 0) ns = 0;
  fprintf(stderr, "[%3lld.%03lld] ", (long long)(ns / 1000000000),
          (long long)(ns / 1000000 % 1000));
}

static get_run *run_of(const get_conn *conn) { return conn->origin->run; }

void get_trace_note(const get_run *run, const char *fmt, ...) {
  stamp(run);
  fputs("* ", stderr);
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  get_out_escaped(stderr, line, strlen(line));
  fputc('\n', stderr);
}

static void print_flags(speedy_spdy_frame_type type, uint8_t flags) {
  if (flags == 0) return;
  const char *fin = type == SPEEDY_SPDY_FRAME_DATA || type == SPEEDY_SPDY_FRAME_SYN_STREAM ||
                            type == SPEEDY_SPDY_FRAME_SYN_REPLY || type == SPEEDY_SPDY_FRAME_HEADERS
                        ? "FIN"
                        : NULL;
  const char *names[8] = {[0] = fin};
  if (type == SPEEDY_SPDY_FRAME_SYN_STREAM) names[1] = "UNIDIRECTIONAL"; /* FLAG_UNIDIRECTIONAL */
  if (type == SPEEDY_SPDY_FRAME_DATA) names[1] = "COMPRESS";             /* FLAG_COMPRESS */
  if (type == SPEEDY_SPDY_FRAME_SETTINGS) names[0] = "CLEAR_SETTINGS";   /* FLAG_CLEAR_SETTINGS */
  fputs(INDENT "; ", stderr);
  for (unsigned bit = 0, first = 1; bit < 8; bit++) {
    if (!(flags & (1u << bit))) continue;
    if (!first) fputs(" | ", stderr);
    first = 0;
    if (names[bit])
      fputs(names[bit], stderr);
    else
      fprintf(stderr, "0x%02x", 1u << bit);
  }
  fputc('\n', stderr);
}

static const char *goaway_status_name(unsigned long status) {
  switch (status) {
  case SPEEDY_GOAWAY_OK:
    return "OK";
  case SPEEDY_GOAWAY_PROTOCOL_ERROR:
    return "PROTOCOL_ERROR";
  case SPEEDY_GOAWAY_INTERNAL_ERROR:
    return "INTERNAL_ERROR";
  default:
    return "UNKNOWN";
  }
}

/* The engine's summary is "key=value ..." for the frame's own fields. Printed with the
 * spec's field names; what the frame line already shows (the stream) or what is printed
 * in full below it (header fields, settings) is left out. Returns the "entries" count of a
 * SETTINGS frame, or -1. */
static long print_fields(speedy_spdy_frame_type type, const char *summary) {
  static const char *const renames[][2] = {
      {"assoc", "associated_stream_id"}, {"pri", "priority"},
      {"delta", "delta_window_size"},    {"last_good", "last_good_stream_id"},
      {"status", "status_code"},         {"id", "ping_id"}};
  long entries = -1;
  int printed = 0;
  const char *p = summary;
  while (*p) {
    while (*p == ' ') p++;
    size_t len = strcspn(p, " ");
    if (len == 0) break;
    const char *eq = memchr(p, '=', len);
    size_t key_len = eq ? (size_t)(eq - p) : len;
    const char *value = eq ? eq + 1 : p + len;
    size_t value_len = (size_t)(p + len - value);
    int skip = 0;
    if (key_len == 6 && memcmp(p, "stream", 6) == 0) skip = 1;
    if (key_len == 7 && memcmp(p, "headers", 7) == 0) skip = 1;
    if (key_len == 7 && memcmp(p, "entries", 7) == 0) {
      entries = strtol(value, NULL, 10);
      skip = 1;
    }
    if (!skip) {
      const char *key = NULL;
      for (size_t i = 0; i < sizeof(renames) / sizeof(renames[0]) && eq; i++)
        if (strlen(renames[i][0]) == key_len && memcmp(renames[i][0], p, key_len) == 0)
          key = renames[i][1];
      fputs(printed ? ", " : INDENT "(", stderr);
      printed = 1;
      if (key)
        fputs(key, stderr);
      else
        get_out_escaped(stderr, p, key_len);
      if (eq && type == SPEEDY_SPDY_FRAME_GOAWAY && key_len == 6 && memcmp(p, "status", 6) == 0) {
        unsigned long status = strtoul(value, NULL, 10);
        fprintf(stderr, "=%s(%lu)", goaway_status_name(status), status);
      } else if (eq) {
        fputc('=', stderr);
        get_out_escaped(stderr, value, value_len);
      }
    }
    p += len;
  }
  if (printed) fputs(")\n", stderr);
  if (entries >= 0) fprintf(stderr, INDENT "(niv=%ld)\n", entries);
  return entries;
}

static const char *setting_name(uint32_t id) {
  static const char *const names[] = {
      [SPEEDY_SETTINGS_UPLOAD_BANDWIDTH] = "UPLOAD_BANDWIDTH",
      [SPEEDY_SETTINGS_DOWNLOAD_BANDWIDTH] = "DOWNLOAD_BANDWIDTH",
      [SPEEDY_SETTINGS_ROUND_TRIP_TIME] = "ROUND_TRIP_TIME",
      [SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS] = "MAX_CONCURRENT_STREAMS",
      [SPEEDY_SETTINGS_CURRENT_CWND] = "CURRENT_CWND",
      [SPEEDY_SETTINGS_DOWNLOAD_RETRANS_RATE] = "DOWNLOAD_RETRANS_RATE",
      [SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE] = "INITIAL_WINDOW_SIZE",
      [SPEEDY_SETTINGS_CLIENT_CERTIFICATE_VECTOR_SIZE] = "CLIENT_CERTIFICATE_VECTOR_SIZE"};
  return id >= 1 && id <= SPEEDY_SETTINGS_MAX_ID ? names[id] : "UNKNOWN";
}

void get_trace_setting(uint32_t id, uint8_t flags, uint32_t value) {
  fprintf(stderr, INDENT "[SETTINGS_%s(0x%02x):%u]", setting_name(id), (unsigned)id, value);
  if (flags & SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE) fputs(" PERSIST_VALUE", stderr);
  if (flags & SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED) fputs(" PERSISTED", stderr);
  fputc('\n', stderr);
}

/* Our first SETTINGS frame, as spdy.h says the engine announces our options: always
 * MAX_CONCURRENT_STREAMS, and INITIAL_WINDOW_SIZE (v3+) when not the default 65536. */
static void print_our_settings(const get_conn *conn, long entries) {
  const get_options *opt = run_of(conn)->opt;
  uint32_t max_streams = opt->no_push ? 0 : opt->max_pushes;
  int window = conn->proto != IO_PROTO_SPDY2 && opt->stream_window != 65536;
  if (entries != 1 + window) return; /* not the frame we know: the count says enough */
  get_trace_setting(SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, max_streams);
  if (window) get_trace_setting(SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, opt->stream_window);
}

void get_trace_headers(const speedy_header *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    fputs(INDENT, stderr);
    get_out_escaped(stderr, h[i].name, h[i].name_len);
    fputs(": ", stderr);
    get_out_escaped(stderr, h[i].value, h[i].value_len);
    fputc('\n', stderr);
  }
}

void get_trace_frame(speedy_session *s, int sent, speedy_spdy_frame_type type, uint8_t flags,
                     int32_t id, uint32_t length, const char *summary, void *user) {
  const get_conn *conn = user;
  stamp(run_of(conn));
  fprintf(stderr, "%s %s frame <length=%u, flags=0x%02x, stream_id=%d>\n", sent ? "send" : "recv",
          speedy_spdy_frame_type_name(type), length, flags, (int)id);
  print_flags(type, flags);
  long entries = print_fields(type, summary ? summary : "");
  if (sent && type == SPEEDY_SPDY_FRAME_SETTINGS && !(flags & FLAG_CLEAR_SETTINGS))
    print_our_settings(conn, entries);
  if (sent && type == SPEEDY_SPDY_FRAME_SYN_STREAM) {
    /* our request: its fields, as get_spdy built them */
    const get_job *job = speedy_session_get_stream_user_data(s, id);
    if (job) {
      speedy_header h[GET_MAX_HEADERS + 12];
      char length_buf[24];
      size_t n = get_spdy_request_headers(conn, job, h, length_buf, sizeof(length_buf));
      get_trace_headers(h, n);
    }
  }
}

void get_trace_frame_not_sent(speedy_session *s, speedy_spdy_frame_type type, int32_t id,
                              int reason, void *user) {
  (void)s;
  const get_conn *conn = user;
  get_trace_note(run_of(conn), "[%d] %s not sent: %s", (int)id, speedy_spdy_frame_type_name(type),
                 speedy_strerror(reason));
}

/* Prints CRLF-separated lines, indented, escaped; a blank line ends them. */
static void print_lines(const char *text, size_t len) {
  const char *p = text, *end = text + len;
  while (p < end) {
    const char *eol = p;
    while (eol < end && !(eol + 1 < end && eol[0] == '\r' && eol[1] == '\n')) eol++;
    if (eol == p) break; /* the blank line: the body follows */
    fputs(INDENT, stderr);
    get_out_escaped(stderr, p, (size_t)(eol - p));
    fputc('\n', stderr);
    p = eol < end ? eol + 2 : end;
  }
}

void get_trace_http1_request(const get_conn *conn, const char *req, size_t len) {
  stamp(run_of(conn));
  fprintf(stderr, "send request (connection %d)\n", conn->number);
  print_lines(req, len);
  if (run_of(conn)->has_body)
    fprintf(stderr, INDENT "(and %zu body bytes)\n", run_of(conn)->body_len);
}

void get_trace_http1_response(const get_conn *conn, const char *status_line, const char *head,
                              size_t head_len) {
  stamp(run_of(conn));
  fprintf(stderr, "recv response head (connection %d)\n" INDENT, conn->number);
  get_out_escaped(stderr, status_line, strlen(status_line));
  fputc('\n', stderr);
  print_lines(head, head_len);
}

void get_trace_http1_end(const get_conn *conn, const get_job *job) {
  stamp(run_of(conn));
  fprintf(stderr, "recv end of response (connection %d): %llu body bytes\n", conn->number,
          (unsigned long long)job->bytes);
}
