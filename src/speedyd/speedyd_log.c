/* speedyd_log.c — the access log (combined format + protocol, stream, bytes; formatted
 * by http_log.c) and the error log (timestamped lines, peer bytes escaped).
 *
 * Each line is one write(2) on a descriptor opened with O_APPEND (fopen "a"), so the
 * workers of --workers N, all appending to the same files, never interleave within a
 * line, and a log read while the server runs (by a test, or tail -f) holds whole lines.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http_date.h"
#include "speedyd.h"

int64_t speedyd_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static FILE *open_log(const char *option, const char *path) {
  FILE *f = fopen(path, "a");
  if (f == NULL) {
    fprintf(stderr, "speedyd: cannot open %s %s: %s\n", option, path, strerror(errno));
    return NULL;
  }
  return f;
}

int speedyd_log_open(speedyd_server *server) {
  const speedyd_config *config = &server->config;
  server->error_log = stderr;
  server->access_log = NULL;
  if (config->error_log != NULL) {
    server->error_log = open_log("--error-log", config->error_log);
    if (server->error_log == NULL) {
      server->error_log = stderr;
      return -1;
    }
  }
  if (config->access_log != NULL) {
    if (strcmp(config->access_log, "-") == 0) {
      server->access_log = stdout;
    } else {
      server->access_log = open_log("--access-log", config->access_log);
      if (server->access_log == NULL) return -1;
    }
  }
  return 0;
}

void speedyd_log_close(speedyd_server *server) {
  if (server->access_log != NULL && server->access_log != stdout)
    fclose(server->access_log);
  else if (server->access_log == stdout)
    fflush(stdout);
  if (server->error_log != NULL && server->error_log != stderr) fclose(server->error_log);
  server->access_log = NULL;
  server->error_log = stderr;
}

/* One whole line, one write (stdio's buffer could split it). */
static void write_line(FILE *f, const char *line, size_t len) {
  fflush(f); /* anything printed through stdio before (startup messages) goes first */
  int fd = fileno(f);
  while (len > 0) {
    ssize_t n = write(fd, line, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    line += n;
    len -= (size_t)n;
  }
}

const char *speedyd_log_escape(const void *in, size_t len, char *out, size_t cap) {
  http_log_escape(in, len, out, cap);
  return out;
}

void speedyd_log_access(speedyd_server *server, const speedyd_conn *c, const http_request *request,
                        int status, uint64_t body_bytes, const char *protocol, int64_t stream_id,
                        uint64_t bytes_in, uint64_t bytes_out) {
  if (server->access_log == NULL) return;
  http_log_entry entry = {
      .peer = c->peer_ip,
      .time = (int64_t)time(NULL),
      .method = request->method,
      .path = request->path,
      .version = request->version,
      .status = status,
      .body_bytes = body_bytes,
      .referer = http_headers_get(&request->headers, "referer"),
      .user_agent = http_headers_get(&request->headers, "user-agent"),
      .protocol = protocol,
      .stream_id = stream_id,
      .bytes_in = bytes_in,
      .bytes_out = bytes_out,
  };
  static char line[HTTP_LOG_LINE_MAX];
  size_t n = http_log_format(&entry, line, sizeof(line));
  if (n == 0) return;
  write_line(server->access_log, line, n);
}

void speedyd_log_error(speedyd_server *server, const char *peer, const char *format, ...) {
  FILE *f = server != NULL && server->error_log != NULL ? server->error_log : stderr;
  char date[HTTP_LOG_DATE_SIZE];
  http_date_format_log((int64_t)time(NULL), date);
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof(message), format, ap);
  va_end(ap);
  char line[1200];
  int n = snprintf(line, sizeof(line), "[%s] speedyd: %s%s%s\n", date, peer ? peer : "",
                   peer ? ": " : "", message);
  if (n < 0) return;
  size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
  if (line[len - 1] != '\n') line[len - 1] = '\n';
  write_line(f, line, len);
}
