/* main.c — the `speedy` program: one binary, several subcommands (`speedy netem ...`).
 *
 * Each subcommand is a row of the table below: its name, its entry point (called with
 * argv starting at the subcommand's name, returning the exit status) and a one-line
 * summary for `speedy --help`. Adding a subcommand is adding a row and linking its code.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "get.h"
#include "lab.h"
#include "load.h"
#include "netem_cli.h"

#ifndef SPEEDY_VERSION
#define SPEEDY_VERSION "unknown"
#endif

typedef struct speedy_command {
  const char *name;
  int (*main)(int argc, char **argv);
  const char *summary;
} speedy_command;

static const speedy_command commands[] = {
    {"bench", bench_main, "load a SPDY or HTTP/1.1 server: requests/s, latency, errors"},
    {"get", get_main, "fetch URLs over SPDY (or HTTP/1.1), like curl"},
    {"lab", lab_main, "the page-load lab: HAR pages replayed over emulated links, measured"},
    {"load", load_main, "load a lab page plan like a browser, over SPDY or HTTP/1.1"},
    {"netem", netem_cli_main, "emulate a DSL, cable or mobile link between two namespaces"},
};

/* Writes item to a comma-separated list wrapped before 80 columns; *column is where the
 * line stands. */
static void list_item(FILE *out, const char *item, int *column) {
  int len = (int)strlen(item);
  if (*column + 2 + len > 79) {
    fputs(",\n", out);
    *column = 0;
  } else if (*column > 0) {
    fputs(", ", out);
    *column += 2;
  }
  fputs(item, out);
  *column += len;
}

static void usage(FILE *out) {
  const size_t n = sizeof commands / sizeof commands[0];
  fprintf(out, "Usage: speedy COMMAND [OPTION]...\n"
               "SPDY tools: a client, a load generator, a link emulator and a page-load lab\n"
               "(the server is speedyd).\n\n"
               "Commands:\n");
  for (size_t i = 0; i < n; i++) fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
  fprintf(out, "\nOptions:\n"
               "  -h, --help     this help\n"
               "  -V, --version  print the version\n\n"
               "'speedy COMMAND --help' lists a command's options; 'man speedy-COMMAND'\n"
               "describes it.\n");
  int column = 0;
  list_item(out, "Manual pages: speedy(1)", &column);
  for (size_t i = 0; i < n; i++) {
    char page[48];
    snprintf(page, sizeof page, "speedy-%s(1)", commands[i].name);
    list_item(out, page, &column);
  }
  list_item(out, "speedyd(8) for the server.", &column);
  fprintf(out, "\nExit status: 0 success, 1 failure, 2 bad usage.\n");
}

int main(int argc, char **argv) {
  /* A peer that closes makes a write fail with EPIPE, reported as an error line, instead
   * of killing every command silently (status 141): libuv writes without MSG_NOSIGNAL. */
  signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *name = argv[1];
  if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return 0;
  }
  if (strcmp(name, "-V") == 0 || strcmp(name, "--version") == 0) {
    printf("speedy %s\n", SPEEDY_VERSION);
    return 0;
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(name, commands[i].name) == 0) return commands[i].main(argc - 1, argv + 1);
  fprintf(stderr, "speedy: unknown command '%s' (try 'speedy --help')\n", name);
  return 2;
}
