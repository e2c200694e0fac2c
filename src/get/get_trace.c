/* get_trace.c — `speedy get -v`: what went over the wire, on stderr, in nghttp -v's
 * layout. Every entry starts with the seconds since the run started ("[  0.012]"); SPDY
 * and HTTP/2 frames are named (each protocol's own frame types), with their length, flags
 * (by name), stream, the frame's own fields, SETTINGS entries by name and wire id, and the
 * header fields decoded beneath. HTTP/1.1 requests and response heads are shown line by
 * line. Bytes from the peer are escaped.
 *
 * Frames come from the engine's trace callback (speedy_on_frame_fn) and its summary of the
 * frame's fields; nothing here reads wire bytes.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "get_int.h"
#include "io_session.h"

#define INDENT "          " /* under "[  0.012] " */

/* SPDY frame flags (SPDY/3 2.2, 2.6; the same bits in SPDY/2): FIN 0x01 on DATA,
 * SYN_STREAM, SYN_REPLY and HEADERS; UNIDIRECTIONAL 0x02 on SYN_STREAM; COMPRESS 0x02 on
 * SPDY/2 DATA; CLEAR_SETTINGS 0x01 on SETTINGS. */
#define FLAG_CLEAR_SETTINGS 0x01

static int is_h2(const get_conn *conn) { return conn->proto == IO_PROTO_H2; }

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

/* Names of a SPDY frame's flag bits. */
static void spdy_flag_names(int type, const char *names[8]) {
  if (type == SPEEDY_SPDY_FRAME_DATA || type == SPEEDY_SPDY_FRAME_SYN_STREAM ||
      type == SPEEDY_SPDY_FRAME_SYN_REPLY || type == SPEEDY_SPDY_FRAME_HEADERS)
    names[0] = "FIN";
  if (type == SPEEDY_SPDY_FRAME_SYN_STREAM) names[1] = "UNIDIRECTIONAL"; /* FLAG_UNIDIRECTIONAL */
  if (type == SPEEDY_SPDY_FRAME_DATA) names[1] = "COMPRESS";             /* FLAG_COMPRESS */
  if (type == SPEEDY_SPDY_FRAME_SETTINGS) names[0] = "CLEAR_SETTINGS";   /* FLAG_CLEAR_SETTINGS */
}

/* Names of an HTTP/2 frame's flag bits (RFC 9113 6.1 to 6.10). */
static void h2_flag_names(int type, const char *names[8]) {
  switch (type) {
  case SPEEDY_H2_FRAME_DATA:
    names[0] = "END_STREAM";
    names[3] = "PADDED";
    break;
  case SPEEDY_H2_FRAME_HEADERS:
    names[0] = "END_STREAM";
    names[2] = "END_HEADERS";
    names[3] = "PADDED";
    names[5] = "PRIORITY";
    break;
  case SPEEDY_H2_FRAME_SETTINGS:
  case SPEEDY_H2_FRAME_PING:
    names[0] = "ACK";
    break;
  case SPEEDY_H2_FRAME_PUSH_PROMISE:
    names[2] = "END_HEADERS";
    names[3] = "PADDED";
    break;
  case SPEEDY_H2_FRAME_CONTINUATION:
    names[2] = "END_HEADERS";
    break;
  default:
    break;
  }
}

static void print_flags(const get_conn *conn, int type, uint8_t flags) {
  if (flags == 0) return;
  const char *names[8] = {0};
  if (is_h2(conn))
    h2_flag_names(type, names);
  else
    spdy_flag_names(type, names);
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

/* SPDY/3's GOAWAY statuses on the wire (2.6.6), as the engine's summary gives them. */
static const char *goaway_status_name(unsigned long status) {
  switch (status) {
  case 0:
    return "OK";
  case 1:
    return "PROTOCOL_ERROR";
  case 2:
    return "INTERNAL_ERROR";
  default:
    return "UNKNOWN";
  }
}

/* The engine's summary is "key=value ..." for the frame's own fields. Printed with the
 * spec's field names; what the frame line already shows (the stream) or what is printed
 * in full below it (header fields, settings) is left out. Returns the "entries" count of a
 * SETTINGS frame, or -1. */
static long print_fields(const get_conn *conn, int type, const char *summary) {
  static const char *const spdy_renames[][2] = {
      {"assoc", "associated_stream_id"}, {"pri", "priority"},
      {"delta", "delta_window_size"},    {"last_good", "last_good_stream_id"},
      {"status", "status_code"},         {"id", "ping_id"}};
  /* RFC 9113's names (6.3 to 6.9), as nghttp -v prints them */
  static const char *const h2_renames[][2] = {{"last_stream", "last_stream_id"},
                                              {"error", "error_code"},
                                              {"delta", "window_size_increment"},
                                              {"promised", "promised_stream_id"},
                                              {"id", "opaque_data"},
                                              {"pri", "priority"}};
  const char *const(*renames)[2] = is_h2(conn) ? h2_renames : spdy_renames;
  size_t n_renames = is_h2(conn) ? sizeof(h2_renames) / sizeof(h2_renames[0])
                                 : sizeof(spdy_renames) / sizeof(spdy_renames[0]);
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
    if (is_h2(conn) && key_len == 3 && memcmp(p, "ack", 3) == 0) skip = 1; /* a flag: shown */
    if (key_len == 7 && memcmp(p, "entries", 7) == 0) {
      entries = strtol(value, NULL, 10);
      skip = 1;
    }
    if (!skip) {
      const char *key = NULL;
      for (size_t i = 0; i < n_renames && eq; i++)
        if (strlen(renames[i][0]) == key_len && memcmp(renames[i][0], p, key_len) == 0)
          key = renames[i][1];
      fputs(printed ? ", " : INDENT "(", stderr);
      printed = 1;
      if (key)
        fputs(key, stderr);
      else
        get_out_escaped(stderr, p, key_len);
      if (eq && !is_h2(conn) && type == SPEEDY_SPDY_FRAME_GOAWAY && key_len == 6 &&
          memcmp(p, "status", 6) == 0) {
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

/* An HTTP/2 setting by the engine's id: its name and its wire id (RFC 9113 6.5.2, RFC 8441,
 * RFC 9218). */
static const char *h2_setting_name(uint32_t id, unsigned *wire) {
  static const struct {
    uint32_t id;
    unsigned wire;
    const char *name;
  } settings[] = {{SPEEDY_SETTINGS_HEADER_TABLE_SIZE, 0x1, "HEADER_TABLE_SIZE"},
                  {SPEEDY_SETTINGS_ENABLE_PUSH, 0x2, "ENABLE_PUSH"},
                  {SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0x3, "MAX_CONCURRENT_STREAMS"},
                  {SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0x4, "INITIAL_WINDOW_SIZE"},
                  {SPEEDY_SETTINGS_MAX_FRAME_SIZE, 0x5, "MAX_FRAME_SIZE"},
                  {SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE, 0x6, "MAX_HEADER_LIST_SIZE"},
                  {SPEEDY_SETTINGS_ENABLE_CONNECT_PROTOCOL, 0x8, "ENABLE_CONNECT_PROTOCOL"},
                  {SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES, 0x9, "NO_RFC7540_PRIORITIES"}};
  for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++)
    if (settings[i].id == id) {
      *wire = settings[i].wire;
      return settings[i].name;
    }
  *wire = id;
  return "UNKNOWN";
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

void get_trace_setting(const get_conn *conn, uint32_t id, uint8_t flags, uint32_t value) {
  unsigned wire = id;
  const char *name = is_h2(conn) ? h2_setting_name(id, &wire) : setting_name(id);
  fprintf(stderr, INDENT "[SETTINGS_%s(0x%02x):%u]", name, wire, value);
  if (flags & SPEEDY_SPDY_SETTINGS_FLAG_PERSIST_VALUE) fputs(" PERSIST_VALUE", stderr);
  if (flags & SPEEDY_SPDY_SETTINGS_FLAG_PERSISTED) fputs(" PERSISTED", stderr);
  fputc('\n', stderr);
}

/* Our first HTTP/2 SETTINGS frame, as the engine makes it from our options (RFC 9113 3.4):
 * MAX_CONCURRENT_STREAMS, INITIAL_WINDOW_SIZE unless 65,535, ENABLE_PUSH 0 with --no-push,
 * MAX_HEADER_LIST_SIZE (the engine's default header block cap, 64 KiB) and
 * NO_RFC7540_PRIORITIES (RFC 9218 2.1). */
static void print_our_h2_settings(const get_conn *conn, long entries) {
  const get_options *opt = run_of(conn)->opt;
  int window = opt->stream_window != 65535;
  if (entries != 3 + window + opt->no_push) return; /* not the frame we know */
  get_trace_setting(conn, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0,
                    opt->no_push ? 0 : opt->max_pushes);
  if (window) get_trace_setting(conn, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, opt->stream_window);
  if (opt->no_push) get_trace_setting(conn, SPEEDY_SETTINGS_ENABLE_PUSH, 0, 0);
  get_trace_setting(conn, SPEEDY_SETTINGS_MAX_HEADER_LIST_SIZE, 0, 65536);
  get_trace_setting(conn, SPEEDY_SETTINGS_NO_RFC7540_PRIORITIES, 0, 1);
}

/* Our first SETTINGS frame, as spdy.h says the engine announces our options: always
 * MAX_CONCURRENT_STREAMS, and INITIAL_WINDOW_SIZE (v3+) when not the default 65536. */
static void print_our_settings(const get_conn *conn, long entries) {
  const get_options *opt = run_of(conn)->opt;
  if (is_h2(conn)) {
    print_our_h2_settings(conn, entries);
    return;
  }
  uint32_t max_streams = opt->no_push ? 0 : opt->max_pushes;
  int window = conn->proto != IO_PROTO_SPDY2 && opt->stream_window != 65536;
  if (entries != 1 + window) return; /* not the frame we know: the count says enough */
  get_trace_setting(conn, SPEEDY_SETTINGS_MAX_CONCURRENT_STREAMS, 0, max_streams);
  if (window) get_trace_setting(conn, SPEEDY_SETTINGS_INITIAL_WINDOW_SIZE, 0, opt->stream_window);
}

/* The frame type's name in the connection's protocol. */
static const char *frame_name(const get_conn *conn, int type) {
  speedy_protocol protocol = SPEEDY_PROTOCOL_SPDY3_1;
  (void)io_proto_session(conn->proto, &protocol);
  return speedy_protocol_frame_type_name(protocol, type);
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

void get_trace_frame(speedy_session *s, int sent, int type, uint8_t flags, int32_t id,
                     uint32_t length, const char *summary, void *user) {
  const get_conn *conn = user;
  stamp(run_of(conn));
  fprintf(stderr, "%s %s frame <length=%u, flags=0x%02x, stream_id=%d>\n", sent ? "send" : "recv",
          frame_name(conn, type), length, flags, (int)id);
  print_flags(conn, type, flags);
  long entries = print_fields(conn, type, summary ? summary : "");
  /* SETTINGS is type 4 in both protocols; bit 0 is SPDY's CLEAR_SETTINGS, HTTP/2's ACK */
  if (sent && type == SPEEDY_SPDY_FRAME_SETTINGS && !(flags & FLAG_CLEAR_SETTINGS))
    print_our_settings(conn, entries);
  /* a request opens with SYN_STREAM, or HEADERS in HTTP/2 */
  int opening =
      is_h2(conn) ? type == SPEEDY_H2_FRAME_HEADERS : type == SPEEDY_SPDY_FRAME_SYN_STREAM;
  if (sent && opening) {
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

void get_trace_frame_not_sent(speedy_session *s, int type, int32_t id, int reason, void *user) {
  (void)s;
  const get_conn *conn = user;
  get_trace_note(run_of(conn), "[%d] %s not sent: %s", (int)id, frame_name(conn, type),
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
