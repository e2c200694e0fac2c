/* get_resp.c — a response as `speedy get` handles it, whatever the protocol carried it:
 * the status, content-length and content-encoding noted from its header fields; the head
 * kept (bounded) and written before the body for -i, or alone for -I; --fail; the body
 * checked against --max-filesize, inflated for --compressed, then handed to get_out.
 *
 * get_spdy.c and get_http1.c call these in order: get_resp_reset when a request (or a
 * push) starts, get_resp_note / get_resp_head_* per field, get_resp_head_done once the
 * head is complete, get_resp_body per chunk, get_resp_end at the end.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "get_int.h"

#define INFLATE_CHUNK 16384

/* A --compressed body's decoder: zlib for gzip (and zlib-wrapped deflate), raw deflate
 * when a "deflate" body turns out to lack the zlib wrapper (as some servers send it). */
struct get_inflate {
  z_stream z;
  int raw_tried; /* deflate: switched to raw after the zlib header did not parse */
  int ended;     /* the stream's end was seen */
  int any_input;
};

static int equals(const char *a, size_t a_len, const char *b) {
  return a_len == strlen(b) && strncasecmp(a, b, a_len) == 0;
}

void get_resp_free(get_job *job) {
  if (job->inflate) {
    inflateEnd(&job->inflate->z);
    free(job->inflate);
    job->inflate = NULL;
  }
  free(job->head);
  job->head = NULL;
  job->head_len = job->head_cap = 0;
}

void get_resp_reset(get_job *job) {
  get_resp_free(job);
  job->status = 0;
  job->status_text[0] = '\0';
  job->bytes = 0;
  job->decoded = 0;
  job->has_length = 0;
  job->content_length = 0;
  job->head_done = 0;
  job->encoding = RESP_ENCODING_NONE;
  job->t_first = 0;
}

static int parse_status(const char *v, size_t len) {
  int status = 0;
  size_t i = 0;
  for (; i < len && i < 3 && v[i] >= '0' && v[i] <= '9'; i++) status = status * 10 + (v[i] - '0');
  return i == 3 && (i == len || v[i] == ' ') ? status : -1;
}

void get_resp_note(get_job *job, const char *name, size_t name_len, const char *value,
                   size_t value_len) {
  if (equals(name, name_len, ":status")) {
    job->status = parse_status(value, value_len);
    size_t n = value_len < sizeof(job->status_text) - 1 ? value_len : sizeof(job->status_text) - 1;
    memcpy(job->status_text, value, n);
    job->status_text[n] = '\0';
  } else if (equals(name, name_len, "content-length")) {
    char v[24];
    size_t n = value_len < sizeof(v) - 1 ? value_len : sizeof(v) - 1;
    memcpy(v, value, n);
    v[n] = '\0';
    char *end;
    unsigned long long len = strtoull(v, &end, 10);
    if (n > 0 && *end == '\0' && v[0] >= '0' && v[0] <= '9' && !job->origin->run->no_body) {
      job->content_length = len;
      job->has_length = 1;
    }
  } else if (equals(name, name_len, "content-encoding")) {
    while (value_len > 0 && (value[value_len - 1] == ' ' || value[value_len - 1] == '\t'))
      value_len--;
    while (value_len > 0 && (*value == ' ' || *value == '\t')) value++, value_len--;
    if (equals(value, value_len, "gzip") || equals(value, value_len, "x-gzip"))
      job->encoding = RESP_ENCODING_GZIP;
    else if (equals(value, value_len, "deflate"))
      job->encoding = RESP_ENCODING_DEFLATE;
    else
      job->encoding = RESP_ENCODING_NONE; /* identity, or one we do not decode: as received */
  }
}

int get_resp_head_append(get_job *job, const char *bytes, size_t len) {
  if (len > GET_MAX_HEAD - job->head_len) {
    get_job_fail(job, "response header fields larger than %u KiB", GET_MAX_HEAD >> 10);
    return -1;
  }
  if (job->head_len + len > job->head_cap) {
    size_t cap = job->head_cap ? job->head_cap : 1024;
    while (cap < job->head_len + len) cap *= 2;
    char *p = realloc(job->head, cap);
    if (!p) {
      get_job_fail(job, "out of memory");
      return -1;
    }
    job->head = p;
    job->head_cap = cap;
  }
  memcpy(job->head + job->head_len, bytes, len);
  job->head_len += len;
  return 0;
}

/* Appends s with control bytes (CR and LF among them) escaped: a field from the peer must
 * not make up lines of its own in the head we write. */
static int append_escaped(get_job *job, const char *s, size_t len) {
  size_t start = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch >= 0x20 || ch == '\t') continue;
    char esc[5];
    snprintf(esc, sizeof(esc), "\\x%02x", ch);
    if (get_resp_head_append(job, s + start, i - start) != 0 ||
        get_resp_head_append(job, esc, 4) != 0)
      return -1;
    start = i + 1;
  }
  return get_resp_head_append(job, s + start, len - start);
}

int get_resp_head_field(get_job *job, const char *name, size_t name_len, const char *value,
                        size_t value_len) {
  if (name_len > 0 && name[0] == ':') return 0;
  if (append_escaped(job, name, name_len) != 0 || get_resp_head_append(job, ": ", 2) != 0 ||
      append_escaped(job, value, value_len) != 0)
    return -1;
  return get_resp_head_append(job, "\r\n", 2);
}

static int inflate_start(get_job *job) {
  struct get_inflate *d = calloc(1, sizeof(*d));
  if (!d) return -1;
  /* 15 + 32: zlib or gzip, told apart by the header */
  if (inflateInit2(&d->z, 15 + 32) != Z_OK) {
    free(d);
    return -1;
  }
  job->inflate = d;
  return 0;
}

int get_resp_head_done(get_job *job, const char *status_line) {
  get_run *run = job->origin->run;
  const get_options *opt = run->opt;
  if (job->head_done) return 0;
  job->head_done = 1;
  if (opt->compressed && job->encoding != RESP_ENCODING_NONE && !run->no_body &&
      inflate_start(job) != 0) {
    get_job_fail(job, "out of memory");
    return -1;
  }
  if (opt->include || opt->head) {
    if (get_out_open(run, job) != 0) return -1;
    size_t line_len = strlen(status_line);
    if (get_out_write(run, job, (const uint8_t *)status_line, line_len) != 0 ||
        get_out_write(run, job, (const uint8_t *)"\r\n", 2) != 0 ||
        (job->head_len &&
         get_out_write(run, job, (const uint8_t *)job->head, job->head_len) != 0) ||
        get_out_write(run, job, (const uint8_t *)"\r\n", 2) != 0)
      return -1;
  }
  /* as curl -f: the head is written (with -i or -I), the body is not */
  if (opt->fail && job->status >= 400 && !job->pushed) {
    get_job_fail(job, "HTTP status %d (--fail)", job->status);
    return -1;
  }
  return 0;
}

/* Writes what d inflates from data. Returns 0 or -1 (the job failed). */
static int inflate_write(get_job *job, const uint8_t *data, size_t len) {
  get_run *run = job->origin->run;
  struct get_inflate *d = job->inflate;
  uint8_t out[INFLATE_CHUNK];
  uint64_t max = run->opt->max_filesize;
  d->z.next_in = (Bytef *)data;
  d->z.avail_in = (uInt)len;
  if (len) d->any_input = 1;
  while (d->z.avail_in > 0) {
    if (d->ended) {
      if (job->encoding == RESP_ENCODING_GZIP) { /* another gzip member follows */
        inflateReset(&d->z);
        d->ended = 0;
      } else {
        get_job_fail(job, "bytes after the end of the deflate body");
        return -1;
      }
    }
    d->z.next_out = out;
    d->z.avail_out = sizeof(out);
    int rv = inflate(&d->z, Z_NO_FLUSH);
    if (rv == Z_DATA_ERROR && job->encoding == RESP_ENCODING_DEFLATE && !d->raw_tried &&
        d->z.total_out == 0) {
      /* "deflate" without the zlib wrapper: start again on the same bytes, raw */
      d->raw_tried = 1;
      inflateEnd(&d->z);
      memset(&d->z, 0, sizeof(d->z));
      if (inflateInit2(&d->z, -15) != Z_OK) {
        free(d);
        job->inflate = NULL;
        get_job_fail(job, "out of memory");
        return -1;
      }
      d->z.next_in = (Bytef *)data;
      d->z.avail_in = (uInt)len;
      continue;
    }
    if (rv != Z_OK && rv != Z_STREAM_END && rv != Z_BUF_ERROR) {
      get_job_fail(job, "cannot decode the %s body: %s",
                   job->encoding == RESP_ENCODING_GZIP ? "gzip" : "deflate",
                   d->z.msg ? d->z.msg : "bad data");
      return -1;
    }
    size_t n = sizeof(out) - d->z.avail_out;
    if (max && (job->decoded > max || n > max - job->decoded)) {
      get_job_fail(job, "decoded body larger than --max-filesize %llu bytes: stopped",
                   (unsigned long long)max);
      return -1;
    }
    job->decoded += n;
    if (n && get_out_write(run, job, out, n) != 0) return -1;
    if (rv == Z_STREAM_END) d->ended = 1;
    if (rv == Z_BUF_ERROR && n == 0) break; /* needs more input */
  }
  return 0;
}

int get_resp_body(get_job *job, const uint8_t *data, size_t len) {
  get_run *run = job->origin->run;
  if (!job->t_first) job->t_first = get_now_ns();
  if (get_job_check_size(job, len) != 0 || get_out_open(run, job) != 0) return -1;
  job->bytes += len;
  if (run->opt->head) return 0; /* -I with another method (-X): the head only */
  if (job->inflate) return inflate_write(job, data, len);
  job->decoded += len;
  return get_out_write(run, job, data, len);
}

void get_resp_end(get_job *job) {
  get_run *run = job->origin->run;
  if (job->inflate && job->inflate->any_input && !job->inflate->ended) {
    get_job_fail(job, "the %s body ended before its compressed stream did",
                 job->encoding == RESP_ENCODING_GZIP ? "gzip" : "deflate");
    return;
  }
  if (get_out_open(run, job) == 0) get_job_done(job);
}
