/* consumer.c — a program outside the source tree, built only against an installed libspeedy.
 *
 * The install test compiles it three ways (pkg-config + shared library, pkg-config --static,
 * and find_package(libspeedy) from CMake) and once more as C++ to prove the header's
 * extern "C". It checks that header and library agree on the version and that a session
 * can be created, produce its first bytes and be deleted. Written in the common subset of
 * C and C++.
 */
#include <speedy/speedy.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, int error) {
  fprintf(stderr, "consumer: %s: %s (%d)\n", what, speedy_strerror(error), error);
  return 1;
}

int main(void) {
  if (strcmp(speedy_version(), SPEEDY_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header says %s, library says %s\n", SPEEDY_VERSION_STRING,
            speedy_version());
    return 1;
  }
  speedy_callbacks *callbacks = NULL;
  int rv = speedy_callbacks_new(&callbacks);
  if (rv != 0) return fail("speedy_callbacks_new", rv);
  speedy_session *session = NULL;
  rv = speedy_session_new(&session, SPEEDY_PROTOCOL_SPDY3_1, SPEEDY_ROLE_CLIENT, callbacks, NULL,
                          NULL);
  speedy_callbacks_del(callbacks);
  if (rv != 0) return fail("speedy_session_new", rv);
  if (speedy_session_protocol(session) != SPEEDY_PROTOCOL_SPDY3_1) {
    fprintf(stderr, "consumer: session does not report spdy/3.1\n");
    speedy_session_del(session);
    return 1;
  }
  uint8_t out[4096];
  int64_t n = speedy_session_send(session, out, sizeof out);
  speedy_session_del(session);
  if (n < 0) return fail("speedy_session_send", (int)n);
  printf("consumer: libspeedy %s: %s client session created, %lld bytes sent, deleted\n",
         speedy_version(), speedy_protocol_name(SPEEDY_PROTOCOL_SPDY3_1), (long long)n);
  return 0;
}
