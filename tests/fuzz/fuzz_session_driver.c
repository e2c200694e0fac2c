/* fuzz_session_driver.c — one session fed a peer's bytes (see fuzz_session_driver.h). */
#include "fuzz_session_driver.h"

#include <string.h>

void fuzz_session_config_decode(fuzz_session_config *c, speedy_role role, uint8_t cfg,
                                uint8_t req) {
  static const uint32_t body_sizes[] = {0, 1, 100, 16384, 70000, 0, 5, 200000};
  memset(c, 0, sizeof(*c));
  c->protocol = fuzz_protocol_of((uint8_t)(cfg & 3));
  c->role = role;
  c->respond = (cfg >> 2) & 1;
  c->manual_flow = (cfg >> 3) & 1;
  c->small_limits = (cfg >> 4) & 1;
  c->body_len = body_sizes[(cfg >> 5) & 7];
  c->requests = 1 + (req & 7u);
  c->post_len = body_sizes[(req >> 3) & 7];
}

static fuzz_endpoint ep; /* large: kept off the stack */

/* Opens the client's requests; their output is dropped (the peer "read" it). */
static void open_requests(const fuzz_session_config *c, fuzz_body *post) {
  for (uint32_t i = 0; i < c->requests; i++) {
    int with_body = i == 0 && c->post_len > 0;
    if (with_body) {
      memset(post, 0, sizeof(*post));
      post->stream_id = 1;
      post->len = c->post_len;
    }
    int32_t id =
        speedy_submit_request(ep.session, (int)(i % 8), fuzz_request_headers, 5,
                              with_body ? fuzz_body_read : NULL, with_body ? post : NULL, NULL);
    if (id < 0 && id != SPEEDY_ERR_NOMEM)
      fuzz_fail("speedy_submit_request %u: %s", i, speedy_strerror(id));
  }
}

void fuzz_session_run(const fuzz_session_config *c, const uint8_t *bytes, size_t len,
                      const size_t *ends, size_t n_ends) {
  fuzz_alloc_reset();
  speedy_options *options = fuzz_options_new(c->small_limits);
  memset(&ep, 0, sizeof(ep));
  ep.respond = c->respond;
  ep.body_len = c->body_len;
  ep.manual_flow = c->manual_flow;
  int rv = fuzz_endpoint_open(&ep, c->protocol, c->role, options);
  speedy_options_del(options);
  if (rv != 0) fuzz_fail("speedy_session_new: %s", speedy_strerror(rv));
  size_t baseline = fuzz_accounting_baseline(&ep);

  fuzz_body post;
  if (c->role == SPEEDY_ROLE_CLIENT) open_requests(c, &post);
  if (fuzz_endpoint_drain(&ep, NULL) != 0) fuzz_fail("send failed before any input");

  int64_t fatal = 0;
  size_t at = 0;
  for (size_t i = 0; i <= n_ends && at < len; i++) {
    size_t end = i < n_ends ? ends[i] : len;
    if (end > len) end = len;
    if (end <= at) continue;
    int64_t got = fuzz_endpoint_recv(&ep, bytes + at, end - at);
    if (fatal != 0 && got != fatal)
      fuzz_fail("recv after fatal %s returned %lld", speedy_strerror((int)fatal), (long long)got);
    if (got < 0) {
      if (!speedy_error_is_fatal((int)got))
        fuzz_fail("recv returned the non-fatal %s", speedy_strerror((int)got));
      fatal = got;
      if (speedy_session_want_read(ep.session)) fuzz_fail("want_read after a fatal error");
    } else if ((size_t)got != end - at) {
      fuzz_fail("recv consumed %lld of %zu bytes without a pause", (long long)got, end - at);
    }
    at = end;
    rv = fuzz_endpoint_drain(&ep, NULL);
    if (rv != 0 && (fatal == 0 || rv != fatal) && rv != SPEEDY_ERR_NOMEM)
      fuzz_fail("send returned %s (recv: %lld)", speedy_strerror(rv), (long long)fatal);
    fuzz_check_accounting(&ep, baseline, "after recv");
  }
  /* A response body may still be waiting for window: a final drain must terminate. */
  (void)fuzz_endpoint_drain(&ep, NULL);
  fuzz_check_accounting(&ep, baseline, "at the end");
  fuzz_endpoint_close(&ep);
  fuzz_alloc_check_empty("session");
}
