/* consumer.c — a program outside the source tree, built only against an installed libspdy.
 *
 * The install test compiles it three ways (pkg-config + shared library, pkg-config --static,
 * and find_package(libspdy) from CMake) and once more as C++ to prove the header's
 * extern "C". It checks that header and library agree on the version and that a session
 * can be created, produce its first bytes and be deleted. Written in the common subset of
 * C and C++.
 */
#include <spdy/spdy.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int error) {
  fprintf(stderr, "consumer: %s: %s (%d)\n", what, spdy_strerror(error), error);
  return 1;
}

int main(void) {
  if (strcmp(spdy_version(), SPDY_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header says %s, library says %s\n", SPDY_VERSION_STRING,
            spdy_version());
    return 1;
  }
  spdy_callbacks *callbacks = NULL;
  int rv = spdy_callbacks_new(&callbacks);
  if (rv != 0) return fail("spdy_callbacks_new", rv);
  spdy_session *session = NULL;
  rv = spdy_session_new(&session, SPDY_PROTOCOL_SPDY3_1, SPDY_ROLE_CLIENT, callbacks, NULL, NULL);
  spdy_callbacks_del(callbacks);
  if (rv != 0) return fail("spdy_session_new", rv);
  if (spdy_session_protocol(session) != SPDY_PROTOCOL_SPDY3_1) {
    fprintf(stderr, "consumer: session does not report spdy/3.1\n");
    spdy_session_del(session);
    return 1;
  }
  uint8_t out[4096];
  int64_t n = spdy_session_send(session, out, sizeof out);
  spdy_session_del(session);
  if (n < 0) return fail("spdy_session_send", (int)n);
  printf("consumer: libspdy %s: %s client session created, %lld bytes sent, deleted\n",
         spdy_version(), spdy_protocol_name(SPDY_PROTOCOL_SPDY3_1), (long long)n);
  return 0;
}
