/* speedyd_opts.c — speedyd's command line: getopt_long, defaults, --help and --version.
 *
 * Only parsing and checking of values happens here; files are opened by main.c so that
 * every "cannot open" message names the option it came from.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "speedyd.h"

enum {
  OPT_LISTEN = 'l',
  OPT_CERT = 256,
  OPT_KEY,
  OPT_DOCROOT,
  OPT_PUSH,
  OPT_HINT,
  OPT_MANIFEST,
  OPT_UPLOAD_PATH,
  OPT_UPLOAD_MODE,
  OPT_UPLOAD_MAX,
  OPT_USER,
  OPT_PROTOCOLS,
  OPT_PLAINTEXT_V3,
  OPT_HANDSHAKE_TIMEOUT,
  OPT_HEADER_TIMEOUT,
  OPT_IDLE_TIMEOUT,
  OPT_SHUTDOWN_TIMEOUT,
  OPT_MAX_CONNECTIONS,
  OPT_MAX_STREAMS,
  OPT_MAX_HEADER_BYTES,
  OPT_MAX_CONNECTIONS_PER_ADDRESS,
  OPT_ADDRESS_FLOOD_BURST,
  OPT_MAX_MEMORY,
  OPT_MAX_CONNECTION_MEMORY,
  OPT_ACCESS_LOG,
  OPT_ERROR_LOG,
  OPT_ALLOW_SYMLINKS,
  OPT_NO_GZIP,
  OPT_PORT_FILE,
  OPT_DATA_FRAME_SIZE,
  OPT_REPLAY,
  OPT_REPLAY_HOST_INDEX,
  OPT_TLS_MAX,
  OPT_NO_TLS_RESUMPTION,
  OPT_WORKERS,
  OPT_FILE_CACHE,
  OPT_FILE_CACHE_VALID,
  OPT_HEADER_COMPRESSION
};

static const struct option long_options[] = {
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"docroot", required_argument, NULL, OPT_DOCROOT},
    {"push", no_argument, NULL, OPT_PUSH},
    {"hint", no_argument, NULL, OPT_HINT},
    {"manifest", required_argument, NULL, OPT_MANIFEST},
    {"upload-path", required_argument, NULL, OPT_UPLOAD_PATH},
    {"upload-mode", required_argument, NULL, OPT_UPLOAD_MODE},
    {"upload-max", required_argument, NULL, OPT_UPLOAD_MAX},
    {"user", required_argument, NULL, OPT_USER},
    {"protocols", required_argument, NULL, OPT_PROTOCOLS},
    {"plaintext-v3", required_argument, NULL, OPT_PLAINTEXT_V3},
    {"handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT},
    {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN_TIMEOUT},
    {"max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS},
    {"max-streams", required_argument, NULL, OPT_MAX_STREAMS},
    {"max-header-bytes", required_argument, NULL, OPT_MAX_HEADER_BYTES},
    {"max-connections-per-address", required_argument, NULL, OPT_MAX_CONNECTIONS_PER_ADDRESS},
    {"address-flood-burst", required_argument, NULL, OPT_ADDRESS_FLOOD_BURST},
    {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
    {"max-connection-memory", required_argument, NULL, OPT_MAX_CONNECTION_MEMORY},
    {"access-log", required_argument, NULL, OPT_ACCESS_LOG},
    {"error-log", required_argument, NULL, OPT_ERROR_LOG},
    {"allow-symlinks", no_argument, NULL, OPT_ALLOW_SYMLINKS},
    {"no-gzip", no_argument, NULL, OPT_NO_GZIP},
    {"port-file", required_argument, NULL, OPT_PORT_FILE},
    {"data-frame-size", required_argument, NULL, OPT_DATA_FRAME_SIZE},
    {"replay", required_argument, NULL, OPT_REPLAY},
    {"replay-host-index", required_argument, NULL, OPT_REPLAY_HOST_INDEX},
    {"tls-max", required_argument, NULL, OPT_TLS_MAX},
    {"no-tls-resumption", no_argument, NULL, OPT_NO_TLS_RESUMPTION},
    {"workers", required_argument, NULL, OPT_WORKERS},
    {"file-cache", required_argument, NULL, OPT_FILE_CACHE},
    {"file-cache-valid", required_argument, NULL, OPT_FILE_CACHE_VALID},
    {"header-compression", required_argument, NULL, OPT_HEADER_COMPRESSION},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

static void print_help(void) {
  printf(
      "Usage: speedyd --listen [ADDR:]PORT[,tls][,proxy] ... --docroot DIR|--replay PLAN\n"
      "               [OPTION]...\n"
      "Serve static files over SPDY/2, SPDY/3, SPDY/3.1 and HTTP/1.1 on the same ports.\n"
      "\n"
      "Listening and TLS:\n"
      "  -l, --listen [ADDR:]PORT[,tls][,proxy]\n"
      "                             listen on ADDR (default 0.0.0.0; IPv6 as [::1]),\n"
      "                             PORT (0: any free port); ',tls' for TLS; ',proxy': every\n"
      "                             connection must begin with a PROXY protocol header (v1\n"
      "                             or v2, as L4 load balancers send), whose client address\n"
      "                             is logged and limited instead of the balancer's; only\n"
      "                             for ports no one but the balancers can reach; repeatable\n"
      "                             (default: 8080, plaintext, no PROXY header)\n"
      "      --cert FILE            PEM certificate chain (required with ,tls)\n"
      "      --key FILE             PEM private key (required with ,tls)\n"
      "      --protocols LIST       ALPN/NPN preference, comma-separated\n"
      "                             (default: h2,spdy/3.1,spdy/3,spdy/2,http/1.1)\n"
      "      --plaintext-v3 auto|3|3.1\n"
      "                             what a plaintext version-3 SPDY client gets; auto tells\n"
      "                             SPDY/3 from 3.1 by its flow control (default: auto)\n"
      "      --port-file FILE       after listening, write the bound ports there, one a line\n"
      "                             in --listen order (default: none)\n"
      "      --tls-max 1.2|1.3      highest TLS version (default: 1.3)\n"
      "      --no-tls-resumption    no session tickets or session cache: every TLS connection\n"
      "                             makes a full handshake (default: resumption allowed)\n"
      "\n"
      "Content:\n"
      "      --docroot DIR          serve files beneath DIR (this or --replay is required)\n"
      "      --replay PLAN          answer from a page plan (docs/lab-replay.md): recorded\n"
      "                             statuses and headers, generated bodies; the host is\n"
      "                             picked by :host / Host (default: none)\n"
      "      --replay-host-index N  with --replay: serve plan host N whatever the request's\n"
      "                             host says (default: pick by :host / Host)\n"
      "      --allow-symlinks       follow symlinks that leave the docroot (default: only\n"
      "                             symlinks that stay beneath it are followed)\n"
      "      --no-gzip              never compress on the fly (default: gzip compressible\n"
      "                             types for clients that accept it; FILE.gz is always used)\n"
      "      --upload-path PATH     POST bodies to PATH are echoed or discarded (default: none)\n"
      "      --upload-mode MODE     echo or discard (default: echo)\n"
      "      --upload-max BYTES     largest upload body (default: 16777216 for echo,\n"
      "                             unlimited for discard)\n"
      "      --manifest FILE        push manifest: pages and the resources to push or hint\n"
      "      --push                 push the manifest's resources over SPDY (default: off)\n"
      "      --hint                 add X-Subresources and Link: rel=preload (default: off)\n"
      "      --file-cache BYTES     keep small files (up to BYTES/8, at most 256 KiB each)\n"
      "                             and their answers in memory, per worker; a changed file\n"
      "                             (inode, size, mtime, ctime) is read again (default: 0, off)\n"
      "      --file-cache-valid MS  trust a cached file's check for MS milliseconds, as\n"
      "                             nginx's open_file_cache_valid (default: 0, check on\n"
      "                             every hit)\n"
      "\n"
      "Limits and timeouts (milliseconds; 0: none):\n"
      "      --handshake-timeout MS PROXY header, TLS handshake or plaintext sniff\n"
      "                             (default: 10000)\n"
      "      --header-timeout MS    until the first request's headers (default: 20000)\n"
      "      --idle-timeout MS      no bytes moved on a connection (default: 120000)\n"
      "      --shutdown-timeout MS  after SIGTERM, how long in-flight streams may finish\n"
      "                             (default: 10000)\n"
      "      --max-connections N    live connections, per worker (default: 10000)\n"
      "      --max-streams N        SPDY concurrent streams per connection (default: 100)\n"
      "      --max-header-bytes N   request header fields, names + values (default: 32768)\n"
      "      --max-connections-per-address N  live connections from one IP address, per\n"
      "                             worker (default: 256; 0: no limit)\n"
      "      --address-flood-burst N  frames without requests (PING, SETTINGS, resets, ...)\n"
      "                             that all connections from one IP address may send in a\n"
      "                             burst, draining at 100/s; above it they are closed and\n"
      "                             new ones refused until it drains (default: 2000; 0: off)\n"
      "      --max-memory BYTES     memory of all connections of a worker together; from 3/4\n"
      "                             of it new requests are refused (default: 1073741824;\n"
      "                             0: no limit)\n"
      "      --max-connection-memory BYTES  memory of one connection (default: 8388608;\n"
      "                             0: no limit)\n"
      "      --data-frame-size N    payload of the SPDY DATA frames we send (default: 16384)\n"
      "      --header-compression LEVEL  zlib level of the SPDY header blocks we send, 0-9:\n"
      "                             6 compresses response headers about 2 points more\n"
      "                             for about twice the CPU, 0 stores them (default: 3)\n"
      "\n"
      "Logs and process:\n"
      "      --access-log FILE|-    combined format + protocol, stream, bytes (default: none)\n"
      "      --error-log FILE       errors with timestamps (default: stderr)\n"
      "      --user NAME            drop to this user (and its groups) after binding and\n"
      "                             loading keys (default: stay)\n"
      "      --workers N            worker processes, each with its own event loop and\n"
      "                             SO_REUSEPORT listener; limits apply per worker; 1: a\n"
      "                             single process (default: 0, one per CPU)\n"
      "  -h, --help                 print this help and exit\n"
      "  -V, --version              print the version and exit\n"
      "\n"
      "SIGTERM or SIGINT: GOAWAY to SPDY clients, in-flight requests finish until the\n"
      "shutdown timeout, exit 0. Exit status: 0 success, 1 failure, 2 usage error.\n");
}

#define PROGRAM "speedyd"

/* cli_option_error's "PROGRAM: bad --OPTION 'VALUE': expected ACCEPTED (try ...)". */
#define BAD(option, ...) cli_option_error(PROGRAM, option, optarg, __VA_ARGS__)

/* "[ADDR:]PORT[,tls][,proxy]": ADDR may be an IPv4 literal, a bracketed IPv6 literal or
 * "*"; the flags in either order, each at most once. */
static int parse_listen(const char *text, speedyd_listen *out) {
  memset(out, 0, sizeof(*out));
  char buf[128];
  size_t len = strlen(text);
  if (len == 0 || len >= sizeof(buf)) return -1;
  memcpy(buf, text, len + 1);
  char *comma = strchr(buf, ',');
  if (comma != NULL) {
    *comma = '\0';
    /* strtok_r would skip empty flags: "8080,", "8080,,tls" and "8080,tls," are refused. */
    if (comma[1] == '\0' || strstr(comma + 1, ",,") != NULL || buf[len - 1] == ',') return -1;
    for (char *save = NULL, *flag = strtok_r(comma + 1, ",", &save); flag != NULL;
         flag = strtok_r(NULL, ",", &save)) {
      int *set = strcmp(flag, "tls") == 0     ? &out->tls
                 : strcmp(flag, "proxy") == 0 ? &out->proxy
                                              : NULL;
      if (set == NULL || *set) return -1;
      *set = 1;
    }
  }
  const char *addr = "0.0.0.0";
  char *port = buf;
  if (buf[0] == '[') {
    char *close = strchr(buf, ']');
    if (close == NULL || close[1] != ':') return -1;
    *close = '\0';
    addr = buf + 1;
    port = close + 2;
  } else {
    char *colon = strrchr(buf, ':');
    if (colon != NULL) {
      *colon = '\0';
      addr = strcmp(buf, "*") == 0 ? "0.0.0.0" : buf;
      port = colon + 1;
    }
  }
  uint64_t p;
  if (cli_parse_u64(port, 0, 65535, &p) != 0 || addr[0] == '\0') return -1;
  if (strlen(addr) >= sizeof(out->addr)) return -1;
  strcpy(out->addr, addr);
  out->port = (int)p;
  return 0;
}

static int parse_protocols(speedyd_config *config, char *list) {
  config->n_protocols = 0;
  for (char *save = NULL, *p = strtok_r(list, ",", &save); p != NULL;
       p = strtok_r(NULL, ",", &save)) {
    if (io_proto_from_name(p, strlen(p)) == IO_PROTO_UNKNOWN) return -1;
    if (config->n_protocols == SPEEDYD_MAX_PROTOCOLS) return -1;
    config->protocols[config->n_protocols++] = p;
  }
  return config->n_protocols == 0 ? -1 : 0;
}

static void set_defaults(speedyd_config *config) {
  memset(config, 0, sizeof(*config));
  config->upload_mode = HTTP_UPLOAD_ECHO;
  config->plaintext_v3 = IO_PROTO_SPDY3_1;
  config->plaintext_v3_auto = 1;
  /* HTTP/2 first: every client that offers it prefers it, and SPDY clients never offer it. */
  static const char *const protocols[] = {"h2", "spdy/3.1", "spdy/3", "spdy/2", "http/1.1"};
  for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
    config->protocols[config->n_protocols++] = protocols[i];
  config->handshake_timeout_ms = 10000;
  config->header_timeout_ms = 20000;
  config->idle_timeout_ms = 120000;
  config->shutdown_timeout_ms = 10000;
  config->max_connections = 10000;
  config->max_streams = 100;
  config->data_frame_size = 16384;
  config->header_compression = SPEEDYD_HEADER_COMPRESSION;
  config->max_header_bytes = HTTP_REQUEST_DEFAULT_MAX_HEADER_BYTES;
  config->max_connections_per_address = 256;
  config->address_glitch_burst = 2 * SPEEDYD_GLITCH_BURST;
  config->max_memory = 1024u * 1024u * 1024u;
  config->max_connection_memory = 8u * 1024u * 1024u;
  config->gzip = 1;
  config->replay_host_index = -1;
}

int speedyd_opts_parse(speedyd_config *config, int argc, char **argv, int *done) {
  set_defaults(config);
  *done = 0;
  opterr = 0;
  int opt;
  uint64_t v;
  int longindex = -1;
  while ((opt = getopt_long(argc, argv, ":l:hV", long_options, &longindex)) != -1) {
    const char *name = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
    uint32_t *ms = NULL;
    switch (opt) {
    case 'h':
      print_help();
      *done = 1;
      return 0;
    case 'V':
      printf("speedyd %s (libspeedy %s)\n", SPEEDYD_VERSION, speedy_version());
      *done = 1;
      return 0;
    case OPT_LISTEN:
      if (config->n_listens == SPEEDYD_MAX_LISTENS)
        return cli_usage_error(PROGRAM, "too many --listen options (at most 16)");
      if (parse_listen(optarg, &config->listens[config->n_listens]) != 0)
        return BAD("listen", "[ADDR:]PORT[,tls][,proxy]");
      config->n_listens++;
      break;
    case OPT_CERT:
      config->cert_file = optarg;
      break;
    case OPT_KEY:
      config->key_file = optarg;
      break;
    case OPT_DOCROOT:
      config->docroot = optarg;
      break;
    case OPT_PUSH:
      config->push = 1;
      break;
    case OPT_HINT:
      config->hint = 1;
      break;
    case OPT_MANIFEST:
      config->manifest_file = optarg;
      break;
    case OPT_UPLOAD_PATH:
      if (optarg[0] != '/') return BAD("upload-path", "a path starting with '/'");
      config->upload_path = optarg;
      break;
    case OPT_UPLOAD_MODE:
      if (strcmp(optarg, "echo") == 0)
        config->upload_mode = HTTP_UPLOAD_ECHO;
      else if (strcmp(optarg, "discard") == 0)
        config->upload_mode = HTTP_UPLOAD_DISCARD;
      else
        return BAD("upload-mode", "echo or discard");
      break;
    case OPT_UPLOAD_MAX:
      if (cli_parse_u64(optarg, 0, UINT64_MAX, &v) != 0) return BAD("upload-max", "bytes");
      config->upload_max = v;
      break;
    case OPT_USER:
      config->user = optarg;
      break;
    case OPT_PROTOCOLS: {
      char given[256]; /* parse_protocols cuts optarg at the commas */
      snprintf(given, sizeof(given), "%s", optarg);
      if (parse_protocols(config, optarg) != 0)
        return cli_option_error(
            PROGRAM, "protocols", given,
            "up to 5 of h2, spdy/3.1, spdy/3, spdy/2, http/1.1, comma-separated");
    } break;
    case OPT_PLAINTEXT_V3:
      config->plaintext_v3_auto = strcmp(optarg, "auto") == 0;
      if (strcmp(optarg, "3") == 0)
        config->plaintext_v3 = IO_PROTO_SPDY3;
      else if (strcmp(optarg, "3.1") == 0 || config->plaintext_v3_auto)
        config->plaintext_v3 = IO_PROTO_SPDY3_1;
      else
        return BAD("plaintext-v3", "auto, 3 or 3.1");
      break;
    case OPT_HANDSHAKE_TIMEOUT:
      ms = &config->handshake_timeout_ms;
      break;
    case OPT_HEADER_TIMEOUT:
      ms = &config->header_timeout_ms;
      break;
    case OPT_IDLE_TIMEOUT:
      ms = &config->idle_timeout_ms;
      break;
    case OPT_SHUTDOWN_TIMEOUT:
      ms = &config->shutdown_timeout_ms;
      break;
    case OPT_MAX_CONNECTIONS:
      if (cli_parse_u64(optarg, 1, 1000000, &v) != 0) return BAD("max-connections", "1 to 1000000");
      config->max_connections = (uint32_t)v;
      break;
    case OPT_MAX_STREAMS:
      if (cli_parse_u64(optarg, 1, 100000, &v) != 0) return BAD("max-streams", "1 to 100000");
      config->max_streams = (uint32_t)v;
      break;
    case OPT_MAX_HEADER_BYTES:
      if (cli_parse_u64(optarg, 1024, 1048576, &v) != 0)
        return BAD("max-header-bytes", "1024 to 1048576");
      config->max_header_bytes = (uint32_t)v;
      break;
    case OPT_MAX_CONNECTIONS_PER_ADDRESS:
      if (cli_parse_u64(optarg, 0, 1000000, &v) != 0)
        return BAD("max-connections-per-address", "0 to 1000000");
      config->max_connections_per_address = (uint32_t)v;
      break;
    case OPT_ADDRESS_FLOOD_BURST:
      if (cli_parse_u64(optarg, 0, 1000000, &v) != 0)
        return BAD("address-flood-burst", "0 to 1000000");
      config->address_glitch_burst = (uint32_t)v;
      break;
    case OPT_MAX_MEMORY:
    case OPT_MAX_CONNECTION_MEMORY:
      /* 0 (no limit) or at least 1 MiB: less could not hold one SPDY session. */
      if (cli_parse_u64(optarg, 0, UINT64_MAX, &v) != 0 || (v != 0 && v < 1048576))
        return BAD(opt == OPT_MAX_MEMORY ? "max-memory" : "max-connection-memory",
                   "0 or at least 1048576 bytes");
      if (opt == OPT_MAX_MEMORY)
        config->max_memory = v;
      else
        config->max_connection_memory = v;
      break;
    case OPT_DATA_FRAME_SIZE:
      if (cli_parse_u64(optarg, 1, 16777215, &v) != 0)
        return BAD("data-frame-size", "1 to 16777215");
      config->data_frame_size = (uint32_t)v;
      break;
    case OPT_ACCESS_LOG:
      config->access_log = optarg;
      break;
    case OPT_ERROR_LOG:
      config->error_log = optarg;
      break;
    case OPT_ALLOW_SYMLINKS:
      config->allow_symlinks = 1;
      break;
    case OPT_NO_GZIP:
      config->gzip = 0;
      break;
    case OPT_PORT_FILE:
      config->port_file = optarg;
      break;
    case OPT_REPLAY:
      config->replay_file = optarg;
      break;
    case OPT_REPLAY_HOST_INDEX:
      if (cli_parse_u64(optarg, 0, 65535, &v) != 0) return BAD("replay-host-index", "0 to 65535");
      config->replay_host_index = (int)v;
      break;
    case OPT_TLS_MAX:
      if (strcmp(optarg, "1.2") == 0)
        config->tls_max_1_2 = 1;
      else if (strcmp(optarg, "1.3") == 0)
        config->tls_max_1_2 = 0;
      else
        return BAD("tls-max", "1.2 or 1.3");
      break;
    case OPT_NO_TLS_RESUMPTION:
      config->tls_no_resumption = 1;
      break;
    case OPT_HEADER_COMPRESSION:
      if (cli_parse_u64(optarg, 0, 9, &v) != 0)
        return BAD("header-compression", "a zlib level, 0 to 9");
      config->header_compression = (int)v;
      break;
    case OPT_FILE_CACHE:
      if (cli_parse_u64(optarg, 0, UINT64_MAX / 2, &v) != 0) return BAD("file-cache", "bytes");
      config->file_cache = v;
      break;
    case OPT_FILE_CACHE_VALID:
      if (cli_parse_u64(optarg, 0, 86400000, &v) != 0)
        return BAD("file-cache-valid", "milliseconds, 0 to 86400000");
      config->file_cache_valid_ms = (uint32_t)v;
      break;
    case OPT_WORKERS:
      if (cli_parse_u64(optarg, 0, SPEEDYD_MAX_WORKERS, &v) != 0)
        return BAD("workers", "0 (one per CPU) to %d", SPEEDYD_MAX_WORKERS);
      config->workers = (uint32_t)v;
      break;
    case ':':
      return cli_usage_error(PROGRAM, "option '%s' needs a value", name);
    default:
      return cli_usage_error(PROGRAM, "unknown option '%s'", name);
    }
    if (ms != NULL) {
      if (cli_parse_u64(optarg, 0, 86400000, &v) != 0)
        return BAD(longindex >= 0 ? long_options[longindex].name : "timeout",
                   "milliseconds, 0 to 86400000");
      *ms = (uint32_t)v;
    }
    longindex = -1;
  }
  if (optind < argc) return cli_usage_error(PROGRAM, "unexpected argument '%s'", argv[optind]);
  if (config->docroot != NULL && config->replay_file != NULL)
    return cli_usage_error(PROGRAM, "--docroot and --replay exclude each other");
  if (config->docroot == NULL && config->replay_file == NULL)
    return cli_usage_error(PROGRAM, "--docroot DIR (or --replay PLAN) is required");
  if (config->replay_host_index >= 0 && config->replay_file == NULL)
    return cli_usage_error(PROGRAM, "--replay-host-index needs --replay PLAN");
  if (config->n_listens == 0) {
    strcpy(config->listens[0].addr, "0.0.0.0");
    config->listens[0].port = 8080;
    config->n_listens = 1;
  }
  int any_tls = 0;
  for (size_t i = 0; i < config->n_listens; i++) any_tls |= config->listens[i].tls;
  if (any_tls && (config->cert_file == NULL || config->key_file == NULL))
    return cli_usage_error(PROGRAM, "a ,tls listener needs --cert FILE and --key FILE");
  if ((config->push || config->hint) && config->manifest_file == NULL)
    return cli_usage_error(PROGRAM, "--push and --hint need --manifest FILE");
  return 0;
}
