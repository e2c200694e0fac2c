/* speedyd_serve.c — what both protocols answer: one complete request in, one
 * http_response out. Static files (http_static.c), the 405 of the upload path, and the
 * headers every answer carries (Date, Server). The SPDY and HTTP/1.1 drivers call these,
 * so a file is the same bytes whichever protocol fetched it.
 */
#include <string.h>
#include <time.h>

#include "http_date.h"
#include "http_err.h"
#include "speedyd.h"

int speedyd_serve_is_upload(const speedyd_server *server, const http_request *request) {
  return server->upload_options.path != NULL &&
         http_upload_matches(&server->upload_options, request);
}

void speedyd_serve_error(http_response *response, int err) {
  if (http_response_set_error_from(response, err, NULL) != 0) {
    /* No memory even for a small body: a bare status is still an answer. */
    http_response_reset(response, http_err_status(err));
  }
}

void speedyd_serve_static(speedyd_server *server, const http_request *request,
                          http_response *response) {
  if (speedyd_serve_is_upload(server, request)) {
    /* A non-POST to the upload path (a POST never gets here). */
    if (http_response_set_error(response, 405, "POST") != 0) http_response_reset(response, 500);
    return;
  }
  int rv = server->replay != NULL
               ? replay_serve(server->replay, server->config.replay_host_index, request, response)
               : http_static_serve(&server->static_options, request, response);
  if (rv != 0) speedyd_serve_error(response, HTTP_ERR_NOMEM);
}

void speedyd_serve_common_headers(http_response *response) {
  char date[HTTP_DATE_SIZE];
  http_date_format((int64_t)time(NULL), date);
  /* Failure to add these leaves a valid answer without them. */
  (void)http_headers_set(&response->headers, "date", date);
  (void)http_headers_set(&response->headers, "server", "speedyd/" SPEEDYD_VERSION);
}
