/* speedyd_push.c — server push and server hint, from the push manifest.
 *
 * Which resources: those the manifest lists for the request's path (without query),
 * for a GET answered 200. Push (SPDY and HTTP/2) is driven by speedyd_spdy.c, which asks
 * for the entries and a synthetic request per resource here; hint adds X-Subresources
 * (the name in the SPDY white paper) and Link: <URL>; rel=preload to the page's answer,
 * over every protocol, and speedyd_spdy.c sends the Link ahead in a 103 Early Hints over
 * HTTP/2 (speedyd_push_early_hints).
 */
#include <string.h>

#include "http_err.h"
#include "speedyd.h"

size_t speedyd_push_entries(const speedyd_server *server, const http_request *request,
                            const http_response *response, const http_manifest_entry **entries) {
  *entries = NULL;
  if (server->manifest == NULL || request->method == NULL || request->path == NULL) return 0;
  if (strcmp(request->method, "GET") != 0 || response->status != 200) return 0;
  return http_manifest_lookup(server->manifest, request->path, http_request_path_length(request),
                              entries);
}

void speedyd_push_add_hints(const speedyd_server *server, const http_request *request,
                            http_response *response) {
  if (!server->config.hint) return;
  const http_manifest_entry *entries;
  size_t n = speedyd_push_entries(server, request, response, &entries);
  if (n > 0) (void)http_manifest_add_hints(entries, n, response);
}

int speedyd_push_path_ok(const char *path) {
  /* Same origin only: an absolute path, not a network-path reference ("//host/x"). */
  return path != NULL && path[0] == '/' && path[1] != '/' && strchr(path, '\\') == NULL;
}

int speedyd_push_request(const http_request *page, const char *path, http_protocol protocol,
                         http_request *out) {
  http_request_init(out, protocol, 0, 0);
  int rv = http_request_set_method(out, "GET", 3);
  if (rv == 0) rv = http_request_set_path(out, path, strlen(path));
  if (rv == 0 && page->authority != NULL)
    rv = http_request_set_authority(out, page->authority, strlen(page->authority));
  if (rv == 0 && page->scheme != NULL)
    rv = http_request_set_scheme(out, page->scheme, strlen(page->scheme));
  if (rv == 0)
    rv = protocol == HTTP_PROTO_H2 ? http_request_set_version(out, "HTTP/2.0", 8)
                                   : http_request_set_version(out, "HTTP/1.1", 8);
  /* The pushed answer must be what the client would have got for its own request. */
  const char *accept = http_headers_get(&page->headers, "accept-encoding");
  if (rv == 0 && accept != NULL)
    rv = http_headers_add_str(&out->headers, "accept-encoding", accept);
  if (rv != 0) http_request_free(out);
  return rv;
}

int speedyd_push_early_hints(const http_response *page, http_response *out) {
  http_response_init(out);
  out->status = 103;
  const char *link = http_headers_get(&page->headers, "link");
  if (link == NULL) return HTTP_ERR_INVALID_ARGUMENT;
  return http_headers_add_str(&out->headers, "link", link);
}
