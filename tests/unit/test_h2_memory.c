/* test_h2_memory.c — what an HTTP/2 session holds: an idle connection keeps its HPACK
 * tables' entries, not the buffers of the messages it carried (docs/performance.md,
 * "HTTP/2 engine": idle sessions at most 16 KiB with 4 KiB tables).
 *
 * Sessions of ours talk to each other in memory with browser-like header lists (the HAR
 * corpus's kind: long user-agent and accept values, cookies, validators, ids that never
 * repeat), so both HPACK tables stay full and keep changing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "pair.h"
#include "testutil.h"

#define IDLE_LIMIT 16384u
#define EXCHANGES 200
#define IN_FLIGHT 10

static const char *const hosts[] = {"www.example.test", "static.example.test", "api.example.test",
                                    "images.example-cdn.test"};
static const char *const types[] = {"text/html; charset=utf-8", "application/javascript",
                                    "text/css", "image/png", "application/json"};

#define FIELD(n, v)                                                                                \
  { n, sizeof(n) - 1, v, strlen(v) }

static unsigned next_request;

static void respond_like_a_site(test_peer *server, int32_t id) {
  unsigned n = (unsigned)id / 2;
  char date[48], etag[32], request_id[40], modified[48];
  snprintf(date, sizeof(date), "Fri, 04 Dec 2026 12:%02u:%02u GMT", n / 60 % 60, n % 60);
  snprintf(etag, sizeof(etag), "\"%08x-%04x\"", n * 2654435761u, n * 40503u & 0xffff);
  snprintf(request_id, sizeof(request_id), "%08x-%04x-4%03x-a%03x-%012x", n * 7919u, n & 0xffff,
           n % 4096, n * 3 % 4096, n * 104729u);
  snprintf(modified, sizeof(modified), "Wed, %02u Nov 2026 08:00:00 GMT", 1 + n % 28);
  speedy_header headers[] = {
      FIELD(":status", "200"),
      FIELD("content-type", types[n % 5]),
      FIELD("content-length", "1024"),
      FIELD("date", date),
      FIELD("etag", etag),
      FIELD("last-modified", modified),
      FIELD("cache-control", n % 3 ? "public, max-age=31536000, immutable" : "no-cache"),
      FIELD("server", "speedyd/0.1"),
      FIELD("vary", "Accept-Encoding"),
      FIELD("x-request-id", request_id),
      FIELD("strict-transport-security", "max-age=63072000; includeSubDomains; preload"),
  };
  test_body *body = test_peer_body(server, NULL, 1024);
  int rv = speedy_submit_response(server->session, id, headers,
                                  sizeof(headers) / sizeof(headers[0]), test_body_read, body);
  cr_assert_eq(rv, 0, "submit_response: %s", speedy_strerror(rv));
}

static void request_like_a_browser(test_peer *client) {
  unsigned n = next_request++;
  const char *host = hosts[n % 4];
  char path[96], cookie[128], referer[96];
  snprintf(path, sizeof(path), "/assets/%u/%s-%08x.%s?v=%u", n % 17, n % 2 ? "bundle" : "img",
           n * 2246822519u, n % 2 ? "js" : "png", n);
  snprintf(cookie, sizeof(cookie), "session=%016x%08x; consent=yes; ab=%u", n % 4 * 1013904223u,
           n % 4 * 1664525u, n % 4);
  snprintf(referer, sizeof(referer), "https://%s/articles/%u", host, n / 10);
  speedy_header headers[] = {
      FIELD(":method", "GET"),
      FIELD(":scheme", "https"),
      FIELD(":authority", host),
      FIELD(":path", path),
      FIELD("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like "
                          "Gecko) Chrome/131.0.0.0 Safari/537.36"),
      FIELD("accept", n % 2 ? "*/*" : "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"),
      FIELD("accept-language", "en-GB,en;q=0.9,fr;q=0.8"),
      FIELD("accept-encoding", "gzip, deflate, br, zstd"),
      FIELD("cookie", cookie),
      FIELD("referer", referer),
      FIELD("sec-fetch-mode", "no-cors"),
  };
  int32_t id = speedy_submit_request(client->session, 3, headers,
                                     sizeof(headers) / sizeof(headers[0]), NULL, NULL, NULL);
  cr_assert_gt(id, 0, "submit_request: %s", speedy_strerror(id));
}

static test_peer *peer(speedy_role role) {
  speedy_options *options = NULL;
  cr_assert_eq(speedy_options_new(&options), 0);
  test_alloc_install(options);
  speedy_options_set_header_table_size(options, 4096);
  test_peer *p = test_peer_new(SPEEDY_PROTOCOL_H2, role, options);
  speedy_options_del(options);
  return p;
}

Test(h2_memory, idle_sessions_after_200_exchanges_hold_at_most_16KiB) {
  test_peer *client = peer(SPEEDY_ROLE_CLIENT);
  test_peer *server = peer(SPEEDY_ROLE_SERVER);
  server->on_request = respond_like_a_site;
  for (int done = 0; done < EXCHANGES; done += IN_FLIGHT) {
    for (int i = 0; i < IN_FLIGHT; i++) request_like_a_browser(client);
    cr_assert_geq(test_pump(client, server, 16384), 0);
  }
  for (int32_t id = 1; id < 2 * EXCHANGES; id += 2) {
    test_stream_rx *rx = test_rx(client, id);
    cr_assert(rx->closed && rx->len == 1024, "stream %d: %zu bytes, closed %d, status %u", id,
              rx->len, rx->closed, rx->close_status);
  }
  cr_assert_eq(speedy_session_open_streams(client->session), 0);
  cr_assert_eq(speedy_session_open_streams(server->session), 0);
  size_t client_bytes = speedy_session_memory(client->session);
  size_t server_bytes = speedy_session_memory(server->session);
  cr_expect_leq(client_bytes, IDLE_LIMIT, "idle client holds %zu bytes", client_bytes);
  cr_expect_leq(server_bytes, IDLE_LIMIT, "idle server holds %zu bytes", server_bytes);
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "leaked %zu blocks", test_alloc_live());
}

/* A busy spell after the idle one takes back what it needs and works as before. */
Test(h2_memory, an_idle_session_serves_again_after_giving_memory_back) {
  test_peer *client = peer(SPEEDY_ROLE_CLIENT);
  test_peer *server = peer(SPEEDY_ROLE_SERVER);
  server->on_request = respond_like_a_site;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < IN_FLIGHT; i++) request_like_a_browser(client);
    cr_assert_geq(test_pump(client, server, 16384), 0);
    cr_assert_leq(speedy_session_memory(client->session), IDLE_LIMIT);
    cr_assert_leq(speedy_session_memory(server->session), IDLE_LIMIT);
    /* One at a time too, byte by byte: the session goes idle between exchanges. */
    request_like_a_browser(client);
    cr_assert_geq(test_pump(client, server, 1), 0);
  }
  for (int32_t id = 1; id < 2 * 3 * (IN_FLIGHT + 1); id += 2) {
    test_stream_rx *rx = test_rx(client, id);
    cr_assert(rx->closed && rx->len == 1024, "stream %d: %zu bytes, closed %d, status %u", id,
              rx->len, rx->closed, rx->close_status);
  }
  test_peer_del(client);
  test_peer_del(server);
  cr_assert_eq(test_alloc_live(), 0, "leaked %zu blocks", test_alloc_live());
}
