/* replay_tool.c — test helper for tests/replay/test_replay.sh: the replay library from the
 * command line.
 *
 *   replay_tool site PLAN DIR   replay_write_site(PLAN, DIR)
 *   replay_tool body PLAN ID    the body of resource ID on stdout (replay_body_fill)
 *   replay_tool check PLAN      load and validate; the message on stderr, exit 1, if bad
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

static int write_body(const replay_plan *plan, const char *id_text) {
  char *end;
  unsigned long id = strtoul(id_text, &end, 10);
  const replay_resource *r = *end == '\0' ? replay_plan_resource(plan, id) : NULL;
  if (r == NULL) {
    fprintf(stderr, "replay_tool: no resource %s\n", id_text);
    return 1;
  }
  static uint8_t chunk[65536];
  for (uint64_t offset = 0; offset < r->body_size;) {
    size_t n =
        r->body_size - offset < sizeof(chunk) ? (size_t)(r->body_size - offset) : sizeof(chunk);
    replay_body_fill(replay_plan_seed(plan), r->id, offset, chunk, n);
    if (fwrite(chunk, 1, n, stdout) != n) return 1;
    offset += n;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: replay_tool site PLAN DIR | body PLAN ID | check PLAN\n");
    return 2;
  }
  char err[1024];
  replay_plan *plan;
  if (replay_plan_load(&plan, argv[2], err, sizeof(err)) != 0) {
    fprintf(stderr, "replay_tool: %s\n", err);
    return 1;
  }
  int status = 0;
  if (strcmp(argv[1], "site") == 0 && argc == 4) {
    if (replay_write_site(plan, argv[3], err, sizeof(err)) != 0) {
      fprintf(stderr, "replay_tool: %s\n", err);
      status = 1;
    }
  } else if (strcmp(argv[1], "body") == 0 && argc == 4) {
    status = write_body(plan, argv[3]);
  } else if (strcmp(argv[1], "check") != 0 || argc != 3) {
    fprintf(stderr, "replay_tool: bad usage\n");
    status = 2;
  }
  replay_plan_del(plan);
  return status;
}
