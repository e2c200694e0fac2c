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
  if (server->replay != NULL) {
    if (replay_serve(server->replay, server->config.replay_host_index, request, response) != 0)
      speedyd_serve_error(response, HTTP_ERR_NOMEM);
    return;
  }
  if (speedyd_file_cache_serve(server, request, response)) return;
  if (http_static_serve(&server->static_options, request, response) != 0)
    speedyd_serve_error(response, HTTP_ERR_NOMEM);
  else
    speedyd_file_cache_store(server, request, response);
}

int speedyd_serve_static_fields(speedyd_server *server, const http_request *request,
                                http_response *response, speedy_fieldset **set) {
  *set = NULL;
  if (!speedyd_serve_is_upload(server, request) && server->replay == NULL &&
      speedyd_file_cache_serve_fields(server, request, response, set))
    return 1;
  speedyd_serve_static(server, request, response);
  return 0;
}

const char *speedyd_serve_date(void) {
  /* Formatted once a second, not once an answer (one process, one thread: no lock), in
   * one buffer whose address never changes: prepared header lists point at it. */
  static char date[HTTP_DATE_SIZE];
  static time_t date_second = -1;
  time_t now = time(NULL);
  if (now != date_second) {
    http_date_format((int64_t)now, date);
    date_second = now;
  }
  return date;
}

void speedyd_serve_common_headers(http_response *response) {
  /* Failure to add these leaves a valid answer without them. */
  (void)http_headers_set(&response->headers, "date", speedyd_serve_date());
  (void)http_headers_set(&response->headers, "server", SPEEDYD_SERVER_FIELD);
}
