/* hdr.c — header-compression figures (hdr.h): the recorded headers as HTTP/1.1 text and as
 * the SPDY frames libspeedy would send.
 *
 * HTTP/1.1 text: request line ("GET /path HTTP/1.1"), or status line ("HTTP/1.1 200 OK"),
 * one "Name: value" CRLF line per recorded header (connection headers included, as
 * HTTP/1.1 sends them), and the final CRLF.
 * SPDY: the pseudo-headers (:method :path :version :host :scheme / :status :version) and
 * the recorded headers lower-cased, without the ones SPDY forbids (Connection,
 * Keep-Alive, Proxy-Connection, Transfer-Encoding, Host), through libspeedy's public header
 * compressor (speedy_header_compressor_*: the session's own validation, layout and zlib) —
 * one context per direction per host, blocks in the order given — counted with the frame
 * header and the SYN_STREAM / SYN_REPLY fixed fields.
 * HTTP/2: the same exchanges as HEADERS frames HPACK-encoded by the same compressor API
 * (4,096-byte dynamic table, one context per direction per host): :method :scheme
 * :authority :path / a three-digit :status, then the recorded fields lower-cased, without
 * the connection-specific ones HTTP/2 forbids (RFC 9113 8.2.2: those SPDY drops, upgrade,
 * and te other than "trailers") and with the white space HTTP/2 refuses at the ends of a
 * value trimmed (8.2.1) — what a browser would have sent.
 */
#define _POSIX_C_SOURCE 200809L
#include "hdr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "speedy/speedy.h"

void lab_hdr_setting_default(lab_hdr_setting *setting) {
  speedy_options_get_deflate_params(NULL, &setting->level, &setting->window_bits,
                                    &setting->mem_level);
}

double lab_hdr_reduction(uint64_t http1, uint64_t spdy) {
  if (http1 == 0) return 0;
  return 100.0 * (1.0 - (double)spdy / (double)http1);
}

static int h2_forbidden(const char *name, const char *value, size_t value_len) {
  if (strcasecmp(name, "upgrade") == 0) return 1;
  if (strcasecmp(name, "te") == 0)
    return !(value_len == 8 && strncasecmp(value, "trailers", 8) == 0);
  return 0;
}

static int connection_specific(const char *name) {
  static const char *const names[] = {"connection", "keep-alive", "proxy-connection",
                                      "transfer-encoding", "host"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcasecmp(name, names[i]) == 0) return 1;
  return 0;
}

/* One message as SPDY fields: storage for the lower-cased names and the field list. */
typedef struct message {
  speedy_header *fields;
  size_t n, cap;
  char *names; /* lower-cased names, back to back */
  size_t names_used, names_cap;
  char status[64];
  uint64_t http1;
} message;

static int message_reserve(message *m, size_t fields, size_t name_bytes) {
  if (fields > m->cap) {
    speedy_header *f = realloc(m->fields, fields * sizeof *f);
    if (f == NULL) return -1;
    m->fields = f;
    m->cap = fields;
  }
  if (name_bytes > m->names_cap) {
    char *names = realloc(m->names, name_bytes);
    if (names == NULL) return -1;
    m->names = names;
    m->names_cap = name_bytes;
  }
  m->n = 0;
  m->names_used = 0;
  return 0;
}

static void message_push(message *m, const char *name, size_t name_len, const char *value,
                         size_t value_len) {
  m->fields[m->n++] = (speedy_header){name, name_len, value, value_len};
}

/* Appends the recorded headers (SPDY names lower-cased into m->names) and their
 * HTTP/1.1 line sizes. Empty values of a repeated name are dropped (SPDY joins values
 * with NUL, and an empty one would make the block invalid). */
static void message_add_recorded(message *m, const lab_header *h, size_t n) {
  char *names = m->names;
  for (size_t i = 0; i < n; i++) {
    m->http1 += h[i].name_len + 2 + h[i].value_len + 2;
    if (connection_specific(h[i].name)) continue;
    char *lower = names + m->names_used;
    for (size_t k = 0; k < h[i].name_len; k++) {
      char c = h[i].name[k];
      lower[k] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    m->names_used += h[i].name_len;
    if (h[i].value_len == 0) {
      int repeated = 0;
      for (size_t j = 0; j < n; j++)
        if (j != i && strcasecmp(h[j].name, h[i].name) == 0) repeated = 1;
      if (repeated) continue;
    }
    message_push(m, lower, h[i].name_len, h[i].value, h[i].value_len);
  }
}

/* The recorded headers as HTTP/2 fields: names lower-cased into m->names, values without
 * white space at their ends, the fields HTTP/2 forbids left out. */
static void message_add_recorded_h2(message *m, const lab_header *h, size_t n) {
  for (size_t i = 0; i < n; i++) {
    const char *value = h[i].value;
    size_t value_len = h[i].value_len;
    while (value_len > 0 && (value[0] == ' ' || value[0] == '\t')) value++, value_len--;
    while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
      value_len--;
    if (connection_specific(h[i].name) || h2_forbidden(h[i].name, value, value_len)) continue;
    char *lower = m->names + m->names_used;
    for (size_t k = 0; k < h[i].name_len; k++) {
      char c = h[i].name[k];
      lower[k] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    m->names_used += h[i].name_len;
    message_push(m, lower, h[i].name_len, value, value_len);
  }
}

static size_t names_bytes(const lab_header *h, size_t n) {
  size_t total = 1;
  for (size_t i = 0; i < n; i++) total += h[i].name_len;
  return total;
}

static int build_request(const lab_entry *e, message *m) {
  if (message_reserve(m, e->n_request_headers + 5,
                      names_bytes(e->request_headers, e->n_request_headers)) != 0)
    return -1;
  const lab_header *host = lab_header_find(e->request_headers, e->n_request_headers, "host");
  const char *host_value = host != NULL && host->value_len > 0 ? host->value : e->parsed.host;
  const char *path = e->parsed.path;
  m->http1 = strlen(e->method) + 1 + strlen(path) + 1 + strlen(e->request_version) + 2 + 2;
  message_push(m, ":method", 7, e->method, strlen(e->method));
  message_push(m, ":path", 5, path, strlen(path));
  message_push(m, ":version", 8, e->request_version, strlen(e->request_version));
  message_push(m, ":host", 5, host_value, strlen(host_value));
  message_push(m, ":scheme", 7, e->parsed.scheme, strlen(e->parsed.scheme));
  message_add_recorded(m, e->request_headers, e->n_request_headers);
  return 0;
}

static int build_request_h2(const lab_entry *e, message *m) {
  if (message_reserve(m, e->n_request_headers + 4,
                      names_bytes(e->request_headers, e->n_request_headers)) != 0)
    return -1;
  const lab_header *host = lab_header_find(e->request_headers, e->n_request_headers, "host");
  const char *authority = host != NULL && host->value_len > 0 ? host->value : e->parsed.host;
  message_push(m, ":method", 7, e->method, strlen(e->method));
  message_push(m, ":scheme", 7, e->parsed.scheme, strlen(e->parsed.scheme));
  message_push(m, ":authority", 10, authority, strlen(authority));
  message_push(m, ":path", 5, e->parsed.path, strlen(e->parsed.path));
  message_add_recorded_h2(m, e->request_headers, e->n_request_headers);
  return 0;
}

static int build_response_h2(const lab_entry *e, message *m) {
  if (message_reserve(m, e->n_response_headers + 1,
                      names_bytes(e->response_headers, e->n_response_headers)) != 0)
    return -1;
  int n = snprintf(m->status, sizeof m->status, "%03d", e->status);
  message_push(m, ":status", 7, m->status, (size_t)n);
  message_add_recorded_h2(m, e->response_headers, e->n_response_headers);
  return 0;
}

static int build_response(const lab_entry *e, message *m) {
  if (message_reserve(m, e->n_response_headers + 2,
                      names_bytes(e->response_headers, e->n_response_headers)) != 0)
    return -1;
  size_t reason_len = strlen(e->status_text);
  if (reason_len > 40) reason_len = 40;
  int n = reason_len > 0 ? snprintf(m->status, sizeof m->status, "%d %.*s", e->status,
                                    (int)reason_len, e->status_text)
                         : snprintf(m->status, sizeof m->status, "%d", e->status);
  char code[16];
  int code_len = snprintf(code, sizeof code, "%d", e->status);
  m->http1 =
      strlen(e->response_version) + 1 + (size_t)code_len + 1 + strlen(e->status_text) + 2 + 2;
  message_push(m, ":status", 7, m->status, (size_t)n);
  message_push(m, ":version", 8, e->response_version, strlen(e->response_version));
  message_add_recorded(m, e->response_headers, e->n_response_headers);
  return 0;
}

/* The compression contexts of one host. */
typedef struct host_context {
  const char *host;
  speedy_header_compressor *up, *down;       /* SPDY */
  speedy_header_compressor *h2_up, *h2_down; /* HTTP/2 */
} host_context;

/* The entry's HTTP/2 figures (HPACK), counted apart from SPDY's: an exchange HTTP/2 refuses
 * is left out of them alone, with the HTTP/1.1 bytes it is compared to. Returns 0, or -1
 * with a reason in err. */
static int measure_h2(const lab_har *har, const lab_entry *e, host_context *ctx, message *request,
                      message *response, uint64_t request_http1, uint64_t response_http1,
                      lab_hdr_figures *figures, char *err, size_t err_size) {
  if (build_request_h2(e, request) != 0 || build_response_h2(e, response) != 0) {
    snprintf(err, err_size, "%s: out of memory", har->name);
    return -1;
  }
  int64_t up = speedy_header_compressor_frame_size(ctx->h2_up, 0, request->fields, request->n);
  if (up == SPEEDY_ERR_INVALID_HEADER) {
    figures->hpack_skipped++;
    return 0;
  }
  if (up < 0) {
    snprintf(err, err_size, "%s: entry %zu: HPACK-encoding request headers: %s", har->name,
             e->index, speedy_strerror((int)up));
    return -1;
  }
  figures->hpack_request_http1 += request_http1;
  figures->request_hpack += (uint64_t)up;
  if (e->status == 0) return 0;
  int64_t down =
      speedy_header_compressor_frame_size(ctx->h2_down, 1, response->fields, response->n);
  if (down == SPEEDY_ERR_INVALID_HEADER) return 0;
  if (down < 0) {
    snprintf(err, err_size, "%s: entry %zu: HPACK-encoding response headers: %s", har->name,
             e->index, speedy_strerror((int)down));
    return -1;
  }
  figures->hpack_response_http1 += response_http1;
  figures->response_hpack += (uint64_t)down;
  return 0;
}

int lab_hdr_measure(const lab_har *har, const size_t *entries, size_t n, int version,
                    const lab_hdr_setting *setting, lab_hdr_figures *figures, char *err,
                    size_t err_size) {
  speedy_options *options = NULL;
  speedy_protocol protocol = version == 2 ? SPEEDY_PROTOCOL_SPDY2 : SPEEDY_PROTOCOL_SPDY3_1;
  if (speedy_options_new(&options) != 0 ||
      speedy_options_set_deflate_params(options, setting->level, setting->window_bits,
                                        setting->mem_level) != 0) {
    speedy_options_del(options);
    snprintf(err, err_size, "%s: cannot set up zlib at %d,%d,%d", har->name, setting->level,
             setting->window_bits, setting->mem_level);
    return -1;
  }
  host_context *hosts = calloc(n > 0 ? n : 1, sizeof *hosts);
  message request = {0}, response = {0}, h2_request = {0}, h2_response = {0};
  size_t n_hosts = 0;
  int rc = 0;
  if (hosts == NULL) {
    speedy_options_del(options);
    snprintf(err, err_size, "%s: out of memory", har->name);
    return -1;
  }
  for (size_t i = 0; rc == 0 && i < n; i++) {
    const lab_entry *e = &har->entries[entries[i]];
    if (e->flags & LAB_FLAG_BAD_URL) {
      figures->skipped++;
      continue;
    }
    if (build_request(e, &request) != 0 || build_response(e, &response) != 0) {
      snprintf(err, err_size, "%s: out of memory", har->name);
      rc = -1;
      break;
    }
    const char *host = request.fields[3].value;
    host_context *ctx = NULL;
    for (size_t h = 0; h < n_hosts && ctx == NULL; h++)
      if (strcasecmp(hosts[h].host, host) == 0) ctx = &hosts[h];
    if (ctx == NULL) {
      ctx = &hosts[n_hosts];
      ctx->host = host;
      if (speedy_header_compressor_new(&ctx->up, protocol, options) != 0 ||
          speedy_header_compressor_new(&ctx->down, protocol, options) != 0 ||
          speedy_header_compressor_new(&ctx->h2_up, SPEEDY_PROTOCOL_H2, NULL) != 0 ||
          speedy_header_compressor_new(&ctx->h2_down, SPEEDY_PROTOCOL_H2, NULL) != 0) {
        speedy_header_compressor_del(ctx->up);
        speedy_header_compressor_del(ctx->down);
        speedy_header_compressor_del(ctx->h2_up);
        snprintf(err, err_size, "%s: cannot set up zlib at %d,%d,%d", har->name, setting->level,
                 setting->window_bits, setting->mem_level);
        rc = -1;
        break;
      }
      n_hosts++;
    }
    if (measure_h2(har, e, ctx, &h2_request, &h2_response, request.http1, response.http1, figures,
                   err, err_size) != 0) {
      rc = -1;
      break;
    }
    int64_t r = speedy_header_compressor_frame_size(ctx->up, 0, request.fields, request.n);
    if (r == SPEEDY_ERR_INVALID_HEADER) {
      /* Validation happens before zlib is touched: the context is still good. */
      fprintf(stderr, "speedy lab: %s: entry %zu: request headers SPDY cannot carry; skipped\n",
              har->name, e->index);
      figures->skipped++;
      continue;
    }
    if (r < 0) {
      snprintf(err, err_size, "%s: entry %zu: compressing request headers: %s", har->name, e->index,
               speedy_strerror((int)r));
      rc = -1;
      break;
    }
    figures->entries++;
    figures->request_http1 += request.http1;
    figures->request_spdy += (uint64_t)r;
    if (e->status == 0) { /* nothing came back */
      figures->no_response++;
      continue;
    }
    r = speedy_header_compressor_frame_size(ctx->down, 1, response.fields, response.n);
    if (r == SPEEDY_ERR_INVALID_HEADER) {
      fprintf(stderr, "speedy lab: %s: entry %zu: response headers SPDY cannot carry; skipped\n",
              har->name, e->index);
      figures->no_response++;
      continue;
    }
    if (r < 0) {
      snprintf(err, err_size, "%s: entry %zu: compressing response headers: %s", har->name,
               e->index, speedy_strerror((int)r));
      rc = -1;
      break;
    }
    figures->response_http1 += response.http1;
    figures->response_spdy += (uint64_t)r;
  }
  figures->hosts += n_hosts;
  for (size_t h = 0; h < n_hosts; h++) {
    speedy_header_compressor_del(hosts[h].up);
    speedy_header_compressor_del(hosts[h].down);
    speedy_header_compressor_del(hosts[h].h2_up);
    speedy_header_compressor_del(hosts[h].h2_down);
  }
  free(hosts);
  free(request.fields);
  free(request.names);
  free(response.fields);
  free(response.names);
  free(h2_request.fields);
  free(h2_request.names);
  free(h2_response.fields);
  free(h2_response.names);
  speedy_options_del(options);
  return rc;
}
