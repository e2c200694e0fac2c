/* fuzz_split.c — harness 4: the same input split at arbitrary points must behave exactly
 * as one buffer. Two fresh sessions read the same bytes, one in a single speedy_session_recv
 * call, the other in pieces cut where the input says; output is taken only at the end.
 * The event logs (DATA chunks merged per stream), the final recv result, the output
 * bytes, want_read/want_write and the open-stream counts must be identical, else abort.
 *
 * Input: configuration byte (as fuzz_server), request byte (as fuzz_client), mode byte
 * (bit 0: client role; bit 1: the rest is raw bytes instead of a fuzz_program), a count
 * byte n (mod 16) and n 16-bit cut positions, then the program or the raw bytes. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_program.h"

static fuzz_program program;
static fuzz_endpoint one, many; /* large: kept off the stack */

typedef struct run_result {
  int64_t recv; /* total consumed, or the fatal error */
  fuzz_buf out;
  int want_read, want_write;
  uint32_t open, pending;
} run_result;

static void open_session(fuzz_endpoint *ep, speedy_protocol protocol, speedy_role role, uint8_t cfg,
                         uint32_t requests) {
  memset(ep, 0, sizeof(*ep));
  ep->respond = (cfg >> 2) & 1;
  ep->manual_flow = (cfg >> 3) & 1;
  ep->body_len = (cfg >> 5) * 700u;
  speedy_options *options = fuzz_options_new((cfg >> 4) & 1);
  int rv = fuzz_endpoint_open(ep, protocol, role, options);
  speedy_options_del(options);
  if (rv != 0) fuzz_fail("speedy_session_new: %s", speedy_strerror(rv));
  for (uint32_t i = 0; i < requests; i++) {
    int32_t id =
        speedy_submit_request(ep->session, (int)i, fuzz_request_headers, 5, NULL, NULL, NULL);
    if (id < 0) fuzz_fail("speedy_submit_request: %s", speedy_strerror(id));
  }
  if (fuzz_endpoint_drain(ep, NULL) != 0) fuzz_fail("send failed before any input");
}

static void finish(fuzz_endpoint *ep, run_result *r) {
  int rv = fuzz_endpoint_drain(ep, &r->out);
  if (rv != 0 && r->recv >= 0) fuzz_fail("send failed: %s", speedy_strerror(rv));
  fuzz_log_flush(&ep->log);
  r->want_read = speedy_session_want_read(ep->session);
  r->want_write = speedy_session_want_write(ep->session);
  r->open = speedy_session_open_streams(ep->session);
  r->pending = speedy_session_pending_streams(ep->session);
}

static void report(const char *what, const run_result *a, const run_result *b) {
  fuzz_fail("split input differs from one buffer: %s\n"
            "one buffer: recv=%lld out=%zu bytes, events:\n%s\n"
            "split:      recv=%lld out=%zu bytes, events:\n%s",
            what, (long long)a->recv, a->out.len, one.log.text, (long long)b->recv, b->out.len,
            many.log.text);
}

static int compare_size(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  return (x > y) - (x < y);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4) return 0;
  uint8_t cfg = data[0], req = data[1], mode = data[2];
  speedy_protocol protocol = fuzz_protocol_of((uint8_t)(cfg & 3));
  speedy_role role = (mode & 1) ? SPEEDY_ROLE_CLIENT : SPEEDY_ROLE_SERVER;
  uint32_t requests = role == SPEEDY_ROLE_CLIENT ? 1 + (req & 7u) : 0;
  fuzz_input in;
  fuzz_input_init(&in, data + 3, size - 3);
  size_t n_cuts = fuzz_u8(&in) % 16;
  size_t cuts[16];
  for (size_t i = 0; i < n_cuts; i++) cuts[i] = fuzz_u16(&in);

  const uint8_t *bytes;
  size_t len;
  fuzz_program_init(&program, protocol, role, requests);
  if (mode & 2) {
    len = fuzz_take(&in, fuzz_input_left(&in), &bytes);
  } else {
    fuzz_program_build(&program, &in, FUZZ_PROGRAM_MAX_OPS);
    bytes = program.bytes.data;
    len = program.bytes.len;
  }
  for (size_t i = 0; i < n_cuts; i++) cuts[i] = len > 0 ? cuts[i] % len : 0;
  qsort(cuts, n_cuts, sizeof(cuts[0]), compare_size);

  run_result a = {0}, b = {0};
  fuzz_alloc_reset();
  open_session(&one, protocol, role, cfg, requests);
  open_session(&many, protocol, role, cfg, requests);

  a.recv = len > 0 ? fuzz_endpoint_recv(&one, bytes, len) : 0;

  size_t at = 0;
  for (size_t i = 0; i <= n_cuts; i++) {
    size_t end = i < n_cuts ? cuts[i] : len;
    if (end <= at) continue;
    int64_t got = fuzz_endpoint_recv(&many, bytes + at, end - at);
    if (got < 0) {
      if (b.recv < 0 && got != b.recv)
        fuzz_fail("fatal error changed from %lld to %lld", (long long)b.recv, (long long)got);
      b.recv = got;
    } else if (b.recv >= 0) {
      if ((size_t)got != end - at) fuzz_fail("recv consumed %lld of %zu", (long long)got, end - at);
      b.recv += got;
    } else {
      fuzz_fail("recv returned %lld after the fatal %lld", (long long)got, (long long)b.recv);
    }
    at = end;
  }
  finish(&one, &a);
  finish(&many, &b);

  if (a.recv != b.recv) report("recv result", &a, &b);
  if (!fuzz_log_equal(&one.log, &many.log)) report("events", &a, &b);
  if (a.out.len != b.out.len || (a.out.len > 0 && memcmp(a.out.data, b.out.data, a.out.len) != 0))
    report("output bytes", &a, &b);
  if (a.want_read != b.want_read || a.want_write != b.want_write) report("want_read/write", &a, &b);
  if (a.open != b.open || a.pending != b.pending) report("stream counts", &a, &b);

  fuzz_endpoint_close(&one);
  fuzz_endpoint_close(&many);
  fuzz_alloc_check_empty("split");
  fuzz_buf_free(&a.out);
  fuzz_buf_free(&b.out);
  fuzz_program_free(&program);
  return 0;
}
