/* run_load.c — one load of `speedy lab run` (run.h): an emulated link with one server
 * address per plan host (multi-domain) or one (single-domain), the replay server (or the
 * --server-cmd, ready once it listens) on the server side, the loader on the client side,
 * the link's counters around the load, the physical lower bound, the invariants, and one
 * result line appended.
 *
 * An interrupted run (settings->interrupted) stops each load at its next poll (every
 * 5 ms while it waits for the server or the loader): the loader's process group is
 * killed, the server is stopped and the link torn down as after any load, and nothing is
 * written. The process groups of the loads in progress are also kept in a table for
 * lab_run_abandon (a second interruption).
 *
 * Also the per-run material a load needs: the certificate chain (openssl: root →
 * intermediate → leaf, RSA 2048) and the push manifest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "netem.h"
#include "plan.h"
#include "run.h"

static pthread_mutex_t append_lock = PTHREAD_MUTEX_INITIALIZER;

/* The process groups (server, loader) of the loads in progress, for lab_run_abandon.
 * -j is at most 1000, so two per load fit; a group that does not fit is still ended by
 * PR_SET_PDEATHSIG (netem_spawn) and by the next run's cleanup of stale namespaces. */
#define LIVE_GROUPS_MAX 2048
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t live_groups[LIVE_GROUPS_MAX];
static size_t n_live_groups;

static void live_group_add(pid_t group) {
  pthread_mutex_lock(&live_lock);
  if (n_live_groups < LIVE_GROUPS_MAX) live_groups[n_live_groups++] = group;
  pthread_mutex_unlock(&live_lock);
}

static void live_group_remove(pid_t group) {
  pthread_mutex_lock(&live_lock);
  for (size_t i = 0; i < n_live_groups; i++)
    if (live_groups[i] == group) {
      live_groups[i] = live_groups[--n_live_groups];
      break;
    }
  pthread_mutex_unlock(&live_lock);
}

void lab_run_abandon(void) {
  pthread_mutex_lock(&live_lock);
  for (size_t i = 0; i < n_live_groups; i++) kill(-live_groups[i], SIGKILL);
  pthread_mutex_unlock(&live_lock);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 2;
  /* Kept on purpose: the caller exits, and no worker may begin a line meanwhile. */
  (void)pthread_mutex_timedlock(&append_lock, &deadline);
}

static int is_interrupted(const lab_run_settings *settings) {
  return settings->interrupted != NULL && atomic_load(settings->interrupted) != 0;
}

/* The results file opened for appending under its flock: the file that has the name now,
 * not one that lab_matrix_order_file replaced while this waited for the lock. */
static int open_locked(const char *file) {
  for (int tries = 0; tries < 100; tries++) {
    int fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    /* No locks on this file system: as before there were any (the run orders its file
     * after its own appends, so only another process could be lost). */
    if (flock(fd, LOCK_EX) != 0) return fd;
    struct stat held, named;
    if (fstat(fd, &held) == 0 && stat(file, &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino)
      return fd;
    close(fd);
  }
  errno = EAGAIN;
  return -1;
}

int lab_run_append(const lab_run_settings *settings, const char *line) {
  pthread_mutex_lock(&append_lock);
  int rc = -1;
  int fd = open_locked(settings->results);
  if (fd >= 0) {
    size_t len = strlen(line), done = 0;
    rc = 0;
    /* One line per write so that a crash never leaves half a line between two others. */
    char *buf = malloc(len + 1);
    if (buf == NULL)
      rc = -1;
    else {
      memcpy(buf, line, len);
      buf[len] = '\n';
      while (done < len + 1) {
        ssize_t n = write(fd, buf + done, len + 1 - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          rc = -1;
          break;
        }
        done += (size_t)n;
      }
      free(buf);
    }
    if (fsync(fd) != 0) rc = -1;
    close(fd);
  }
  pthread_mutex_unlock(&append_lock);
  return rc;
}

/* ---- certificates and manifests ----------------------------------------------------- */

static int run_shell(const char *script) {
  int status = system(script);
  return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int safe_path(const char *p) { return strchr(p, '\'') == NULL; }

/* Appends one subjectAltName entry for a host name as the plan spells it: IP:... for an
 * IPv4 or bracketed IPv6 literal, DNS:... for a name; nothing for what no certificate can
 * name. Duplicates are left out. Returns 0 or -1 (out of memory). */
static int san_add(char **san, size_t *len, size_t *cap, const char *name) {
  char entry[LAB_HOST_MAX + 8];
  size_t n = strlen(name);
  if (n == 0 || n > LAB_HOST_MAX - 1) return 0;
  if (name[0] == '[') {
    if (n < 3 || name[n - 1] != ']') return 0;
    snprintf(entry, sizeof entry, "IP:%.*s", (int)(n - 2), name + 1);
  } else if (lab_host_is_ip(name)) {
    snprintf(entry, sizeof entry, "IP:%s", name);
  } else {
    for (size_t i = 0; i < n; i++) {
      char c = name[i];
      int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '-' || c == '_' || c == '.';
      if (!ok) return 0;
    }
    snprintf(entry, sizeof entry, "DNS:%s", name);
  }
  size_t entry_len = strlen(entry);
  for (const char *at = *san; at != NULL && (at = strstr(at, entry)) != NULL; at += entry_len)
    if ((at == *san || at[-1] == ',') && (at[entry_len] == ',' || at[entry_len] == '\0')) return 0;
  if (*len + entry_len + 2 > *cap) {
    size_t grown = (*cap + entry_len + 2) * 2;
    char *p = realloc(*san, grown);
    if (p == NULL) return -1;
    *san = p;
    *cap = grown;
  }
  if (*len > 0) (*san)[(*len)++] = ',';
  memcpy(*san + *len, entry, entry_len + 1);
  *len += entry_len;
  return 0;
}

/* The leaf's subjectAltName value for every host of the plan (allocated), or NULL when
 * out of memory or when no host can be named in a certificate. */
static char *certificate_names(const json_t *plan) {
  char *san = NULL;
  size_t len = 0, cap = 0;
  const json_t *hosts = json_object_get(plan, "hosts");
  for (size_t i = 0; i < json_array_size(hosts); i++) {
    const char *name = json_string_value(json_object_get(json_array_get(hosts, i), "name"));
    char canonical[LAB_HOST_MAX];
    if (name == NULL) continue;
    if ((lab_host_canonical(name, strlen(name), canonical, sizeof canonical) == 0 &&
         san_add(&san, &len, &cap, canonical) != 0) ||
        san_add(&san, &len, &cap, name) != 0) {
      free(san);
      return NULL;
    }
  }
  return san;
}

/* 1 when file holds exactly text. */
static int file_equals(const char *file, const char *text) {
  FILE *f = fopen(file, "r");
  if (f == NULL) return 0;
  size_t n = strlen(text), i = 0;
  int c, same = 1;
  while (same && (c = fgetc(f)) != EOF) same = i < n && (char)c == text[i++];
  fclose(f);
  return same && i == n;
}

int lab_run_certs(const char *dir, const char *page_dir, const json_t *plan, char *err,
                  size_t err_size) {
  if (!safe_path(dir) || !safe_path(page_dir)) {
    snprintf(err, err_size, "certificate directories may not contain a quote: %s", dir);
    return -1;
  }
  char script[16384];
  struct stat st;
  char ca[4200];
  snprintf(ca, sizeof ca, "%s/intermediate.pem", dir);
  if (stat(ca, &st) != 0) {
    /* Root and intermediate: CA:true with pathlen, as public chains are. */
    snprintf(script, sizeof script,
             "set -e; cd '%s'; exec >openssl.log 2>&1\n"
             "printf 'basicConstraints=critical,CA:true\\nkeyUsage=critical,keyCertSign,cRLSign\\n"
             "subjectKeyIdentifier=hash\\nauthorityKeyIdentifier=keyid\\n' >ca.ext\n"
             "openssl req -x509 -newkey rsa:2048 -nodes -keyout root.key -out root.pem -days 3650 "
             "-subj '/C=US/O=speedy lab/CN=speedy lab Root CA' -addext "
             "'basicConstraints=critical,CA:true' -addext 'keyUsage=critical,keyCertSign,cRLSign'\n"
             "openssl req -newkey rsa:2048 -nodes -keyout intermediate.key -out intermediate.csr "
             "-subj '/C=US/O=speedy lab/CN=speedy lab Intermediate CA 1'\n"
             "openssl x509 -req -in intermediate.csr -CA root.pem -CAkey root.key "
             "-CAcreateserial -out intermediate.pem -days 1825 -extfile ca.ext\n",
             dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
      snprintf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
      return -1;
    }
    if (run_shell(script) != 0) {
      snprintf(err, err_size, "openssl could not make the CA chain (see %s/openssl.log)", dir);
      return -1;
    }
  }
  /* The leaf names every host of the page in every form a client may check: the
   * canonical one (host.h) and, for a plan written by hand, the name as the plan spells it
   * (OpenSSL compares a trailing dot exactly). A leaf made earlier is kept only when it
   * names the same hosts: page numbers are per run, and a resumed run may have others. */
  char *san = certificate_names(plan);
  if (san == NULL) {
    snprintf(err, err_size, "no host of the page can be named in a certificate");
    return -1;
  }
  char chain[4200], names_file[4200], ext_file[4200];
  snprintf(chain, sizeof chain, "%s/chain.pem", page_dir);
  snprintf(names_file, sizeof names_file, "%s/names.txt", page_dir);
  snprintf(ext_file, sizeof ext_file, "%s/leaf.ext", page_dir);
  if (stat(chain, &st) == 0 && file_equals(names_file, san)) {
    free(san);
    return 0;
  }
  if (mkdir(page_dir, 0700) != 0 && errno != EEXIST) {
    snprintf(err, err_size, "cannot create %s: %s", page_dir, strerror(errno));
    free(san);
    return -1;
  }
  remove(chain);
  FILE *ext = fopen(ext_file, "w");
  int written = ext != NULL && fprintf(ext,
                                       "subjectAltName=%s\nbasicConstraints=CA:false\n"
                                       "keyUsage=critical,digitalSignature,keyEncipherment\n"
                                       "extendedKeyUsage=serverAuth\nsubjectKeyIdentifier=hash\n"
                                       "authorityKeyIdentifier=keyid\n",
                                       san) > 0;
  if (ext != NULL && fclose(ext) != 0) written = 0;
  if (!written) {
    snprintf(err, err_size, "cannot write %s: %s", ext_file, strerror(errno));
    free(san);
    return -1;
  }
  snprintf(script, sizeof script,
           "set -e; cd '%s'; exec >openssl.log 2>&1\n"
           "openssl req -newkey rsa:2048 -nodes -keyout key.pem -out leaf.csr "
           "-subj '/C=US/O=speedy lab/CN=replayed page'\n"
           "openssl x509 -req -in leaf.csr -CA '%s/intermediate.pem' -CAkey "
           "'%s/intermediate.key' -CAcreateserial -out leaf.pem -days 825 -extfile leaf.ext\n"
           "cat leaf.pem '%s/intermediate.pem' >chain.pem.tmp && mv chain.pem.tmp chain.pem\n",
           page_dir, dir, dir, dir);
  if (run_shell(script) != 0) {
    snprintf(err, err_size, "openssl could not make the page's certificate (see %s/openssl.log)",
             page_dir);
    free(san);
    return -1;
  }
  FILE *names = fopen(names_file, "w");
  int rc = names != NULL && fputs(san, names) >= 0 ? 0 : -1;
  if (names != NULL && fclose(names) != 0) rc = -1;
  if (rc != 0) snprintf(err, err_size, "cannot write %s: %s", names_file, strerror(errno));
  free(san);
  return rc;
}

static int urgency(const char *type) {
  if (type == NULL) return 5;
  if (strcmp(type, "document") == 0) return 0;
  if (strcmp(type, "css") == 0 || strcmp(type, "script") == 0) return 1;
  if (strcmp(type, "font") == 0) return 2;
  if (strcmp(type, "image") == 0) return 4;
  return 5;
}

int lab_run_manifest(const json_t *plan, const char *file) {
  const json_t *resources = json_object_get(plan, "resources");
  /* The document: the first resource of type document that is not a redirect. */
  size_t doc = SIZE_MAX;
  for (size_t i = 0; i < json_array_size(resources) && doc == SIZE_MAX; i++) {
    const json_t *r = json_array_get(resources, i);
    const char *type = json_string_value(json_object_get(r, "type"));
    json_int_t status = json_integer_value(json_object_get(r, "status"));
    if (type != NULL && strcmp(type, "document") == 0 && status == 200) doc = i;
  }
  FILE *f = fopen(file, "w");
  if (f == NULL) return -1;
  fprintf(f, "# push manifest written by speedy lab run: the document's children on its host\n");
  if (doc != SIZE_MAX) {
    const json_t *d = json_array_get(resources, doc);
    const char *page = json_string_value(json_object_get(d, "path"));
    json_int_t host = json_integer_value(json_object_get(d, "host"));
    char page_path[8200];
    snprintf(page_path, sizeof page_path, "%.*s", (int)strcspn(page, "?"), page);
    int listed = 0;
    for (size_t i = doc + 1; i < json_array_size(resources) && listed < 32; i++) {
      const json_t *r = json_array_get(resources, i);
      const char *path = json_string_value(json_object_get(r, "path"));
      if (json_integer_value(json_object_get(r, "host")) != host ||
          json_integer_value(json_object_get(r, "parent")) != (json_int_t)doc ||
          json_is_true(json_object_get(r, "after_cutoff")) ||
          json_integer_value(json_object_get(r, "status")) != 200 || path == NULL ||
          strcmp(json_string_value(json_object_get(r, "method")), "GET") != 0 ||
          strpbrk(path, "\"<>\\,# ") != NULL || strstr(path, "..") != NULL || strlen(path) > 900 ||
          strcmp(path, page) == 0 || json_object_get(r, "repeat_of") != NULL)
        continue;
      /* A (page, resource) pair may be listed once. */
      int dup = 0;
      for (size_t j = doc + 1; j < i && !dup; j++) {
        const json_t *o = json_array_get(resources, j);
        dup = json_integer_value(json_object_get(o, "host")) == host &&
              json_equal(json_object_get(o, "path"), json_object_get(r, "path"));
      }
      if (dup) continue;
      fprintf(f, "%s %s %d\n", page_path, path,
              urgency(json_string_value(json_object_get(r, "type"))));
      listed++;
    }
  }
  return fclose(f) == 0 ? 0 : -1;
}

/* ---- one load ----------------------------------------------------------------------- */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static uint64_t fnv1a(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

/* Waits for pid up to timeout_ms; kills its process group when it does not end in time
 * or the run is interrupted first. Returns the wait status, or -1 when it had to be
 * killed. */
static int wait_bounded(const lab_run_settings *settings, pid_t pid, double timeout_ms) {
  double deadline = now_ms() + timeout_ms;
  int status;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;
    if (now_ms() > deadline || is_interrupted(settings)) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* Sends SIGTERM to the server's process group and reaps it if it ends within
 * timeout_ms (netem_stop then finds it reaped; if not, netem_stop ends it as always). */
static void wait_server_end(pid_t server, double timeout_ms) {
  kill(-server, SIGTERM);
  double deadline = now_ms() + timeout_ms;
  int status;
  while (now_ms() < deadline) {
    pid_t r = waitpid(server, &status, WNOHANG);
    if (r == server || (r < 0 && errno != EINTR)) return;
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
}

/* The server is listening once speedyd wrote its port file (it writes it after bind).
 * Returns 0 then, -1 when the server ended, the time is up or the run is interrupted. */
static int wait_port_file(const lab_run_settings *settings, const char *file, pid_t server,
                          double timeout_ms) {
  double deadline = now_ms() + timeout_ms;
  struct stat st;
  while (now_ms() < deadline && !is_interrupted(settings)) {
    if (stat(file, &st) == 0 && st.st_size > 0) return 0;
    int status;
    if (waitpid(server, &status, WNOHANG) == server) return -1; /* it died */
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return -1;
}

/* Whether the open /proc net/tcp or net/tcp6 table fd lists a socket listening on port.
 * The first 64 KB are read (about 400 sockets): the namespace is the load's own. */
static int table_has_listener(int fd, int port) {
  char text[65536];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  text[n > 0 ? n : 0] = '\0';
  char *line = strchr(text, '\n'); /* after the column titles */
  while (line != NULL && *++line != '\0') {
    unsigned local_port, state;
    /* "  0: 00000000:0050 00000000:0000 0A ...": st 0A is TCP_LISTEN */
    if (sscanf(line, "%*s %*[0-9A-Fa-f]:%x %*s %x", &local_port, &state) == 2 &&
        (int)local_port == port && state == 0x0A)
      return 1;
    line = strchr(line, '\n');
  }
  return 0;
}

/* A server command writes no port file: it is ready once a TCP socket of the server
 * namespace listens on port (IPv4 or IPv6). Returns 0 then, -1 when the server ended,
 * the time is up or the run is interrupted. */
static int wait_listener(const lab_run_settings *settings, netem_link *link, pid_t server, int port,
                         double timeout_ms) {
  if (netem_enter(link, NETEM_SIDE_SERVER) != 0) return -1;
  /* Opened inside, the tables stay those of the server namespace after leaving it. */
  int fds[2] = {open("/proc/thread-self/net/tcp", O_RDONLY | O_CLOEXEC),
                open("/proc/thread-self/net/tcp6", O_RDONLY | O_CLOEXEC)};
  netem_leave(link);
  double deadline = now_ms() + timeout_ms;
  int rc = -1;
  while (fds[0] >= 0 && now_ms() < deadline && !is_interrupted(settings)) {
    if (table_has_listener(fds[0], port) || (fds[1] >= 0 && table_has_listener(fds[1], port))) {
      rc = 0;
      break;
    }
    int status;
    if (waitpid(server, &status, WNOHANG) == server) break; /* it ended */
    struct timespec ts = {0, 5 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  for (int i = 0; i < 2; i++)
    if (fds[i] >= 0) close(fds[i]);
  return rc;
}

/* The last line of file (the loader appends one per load), parsed; NULL when absent. */
static json_t *read_last_line(const char *file) {
  FILE *f = fopen(file, "r");
  if (f == NULL) return NULL;
  char *line = NULL, *last = NULL;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&line, &cap, f)) > 0) {
    if (n > 1) {
      free(last);
      last = strdup(line);
    }
  }
  free(line);
  fclose(f);
  if (last == NULL) return NULL;
  json_t *v = json_loads(last, 0, NULL);
  free(last);
  return json_is_object(v) ? v : (json_decref(v), NULL);
}

/* The tail of a log file, one line, for error messages. */
static void log_tail(const char *file, char *out, size_t size) {
  out[0] = '\0';
  FILE *f = fopen(file, "r");
  if (f == NULL) return;
  char line[512];
  while (fgets(line, sizeof line, f) != NULL)
    if (line[0] != '\n') snprintf(out, size, "%s", line);
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

static char *join_argv(char *const argv[]) {
  size_t len = 1;
  for (size_t i = 0; argv[i]; i++) len += strlen(argv[i]) + 1;
  char *s = calloc(len, 1);
  if (s == NULL) return NULL;
  for (size_t i = 0; argv[i]; i++) {
    if (i) strcat(s, " ");
    strcat(s, argv[i]);
  }
  return s;
}

typedef struct load_files {
  char dir[4096], ports[4200], result[4200], server_log[4200], loader_log[4200];
} load_files;

static int load_files_make(const lab_run_settings *settings, const lab_run_job *job,
                           load_files *f) {
  snprintf(f->dir, sizeof f->dir, "%s/loads", settings->work_dir);
  mkdir(f->dir, 0777);
  snprintf(f->dir, sizeof f->dir, "%s/loads/%016llx", settings->work_dir,
           (unsigned long long)fnv1a(job->key));
  if (mkdir(f->dir, 0777) != 0 && errno != EEXIST) return -1;
  snprintf(f->ports, sizeof f->ports, "%s/ports", f->dir);
  snprintf(f->result, sizeof f->result, "%s/result.json", f->dir);
  snprintf(f->server_log, sizeof f->server_log, "%s/server.log", f->dir);
  snprintf(f->loader_log, sizeof f->loader_log, "%s/loader.log", f->dir);
  remove(f->ports);
  remove(f->result);
  return 0;
}

/* --client chromium: the page's plan with "bodies": "page" (docs/lab-replay.md, "Page
 * bodies") in the load's directory, so that the replay answers the browser with markup.
 * For a single configuration the bodies name every resource under the page's host
 * ("one_host"): a browser keys connections by host name, and only one name gives it the
 * loader's one connection (HTTP/2) or one host's six (HTTP/1.1). Returns 0 or -1. */
static int page_body_plan(const char *plan_file, int one_host, const load_files *f, char *out,
                          size_t size) {
  snprintf(out, size, "%s/plan-page-bodies.json", f->dir);
  json_t *plan = json_load_file(plan_file, 0, NULL);
  if (plan == NULL || json_object_set_new(plan, "bodies", json_string("page")) != 0 ||
      (one_host && json_object_set_new(plan, "one_host", json_true()) != 0) ||
      json_dump_file(plan, out, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0) {
    json_decref(plan);
    return -1;
  }
  json_decref(plan);
  return 0;
}

/* The base64 SHA-256 of the SubjectPublicKeyInfo of key_file (the page's leaf key): what
 * Chromium's --ignore-certificate-errors-spki-list trusts, and nothing else. */
static int spki_hash(const char *key_file, char *out, size_t size) {
  if (!safe_path(key_file)) return -1;
  char cmd[4400];
  snprintf(cmd, sizeof cmd,
           "openssl pkey -in '%s' -pubout -outform der 2>/dev/null | openssl dgst -sha256 -binary "
           "| openssl base64 -A",
           key_file);
  FILE *p = popen(cmd, "r");
  if (p == NULL) return -1;
  size_t n = fread(out, 1, size - 1, p);
  int status = pclose(p);
  out[n] = '\0';
  return status == 0 && n == 44 ? 0 : -1; /* 32 bytes in base64 */
}

static json_t *link_json(const netem_config *c) {
  return json_pack("{s:s, s:I, s:I, s:f, s:f, s:I, s:I}", "profile", c->profile, "down_bps",
                   (json_int_t)c->down.rate_bps, "up_bps", (json_int_t)c->up.rate_bps, "rtt_ms",
                   (double)netem_config_rtt_ns(c) / 1e6, "loss", c->down.loss, "queue_down_bytes",
                   (json_int_t)c->down.queue_bytes, "queue_up_bytes",
                   (json_int_t)c->up.queue_bytes);
}

static json_t *netem_json(const netem_stats *a, const netem_stats *b, const netem_config *c) {
  return json_pack("{s:I, s:f, s:f, s:f, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "seed",
                   (json_int_t)c->seed, "lateness_p50_ms", (double)b->lateness.p50_ns / 1e6,
                   "lateness_p99_ms", (double)b->lateness.p99_ns / 1e6, "lateness_max_ms",
                   (double)b->lateness.max_ns / 1e6, "realtime", b->realtime, "queue_drops",
                   (json_int_t)(b->down.queue_drops + b->up.queue_drops - a->down.queue_drops -
                                a->up.queue_drops),
                   "queue_drops_up", (json_int_t)(b->up.queue_drops - a->up.queue_drops),
                   "random_losses",
                   (json_int_t)(b->down.random_losses + b->up.random_losses -
                                a->down.random_losses - a->up.random_losses),
                   "tun_drops", (json_int_t)(b->down.tun_drops + b->up.tun_drops), "overflow_drops",
                   (json_int_t)(b->down.overflow_drops + b->up.overflow_drops), "packets_down",
                   (json_int_t)(b->down.packets_in - a->down.packets_in), "packets_up",
                   (json_int_t)(b->up.packets_in - a->up.packets_in));
}

static uint64_t tcp_delta(const netem_stats *a, const netem_stats *b, size_t field) {
  uint64_t sum = 0;
  for (int side = 0; side < 2; side++) {
    const uint64_t *x = (const uint64_t *)((const char *)&a->tcp[side] + field);
    const uint64_t *y = (const uint64_t *)((const char *)&b->tcp[side] + field);
    sum += *y - *x;
  }
  return sum;
}

int lab_run_load(const lab_run_settings *settings, const lab_run_page *page,
                 const lab_run_link *link_spec, const lab_run_job *job, int *lateness_exceeded) {
  *lateness_exceeded = 0;
  const char *name = lab_config_name(job->config);
  int single = lab_config_is_single(job->config), spdy = lab_config_is_spdy(job->config);
  int h2 = lab_config_is_h2(job->config), coalesced = job->config == LAB_H2_COALESCED;
  netem_config config;
  netem_config_init(&config);
  if (netem_config_profile(&config, link_spec->profile) != 0) {
    fprintf(stderr, "speedy lab run: unknown link profile '%s'\n", link_spec->profile);
    return -1;
  }
  if (link_spec->rtt_ms >= 0) {
    config.down.delay_ns = config.up.delay_ns = (uint64_t)(link_spec->rtt_ms * 1e6 / 2);
    char profile_name[64];
    snprintf(profile_name, sizeof profile_name, "%.8s-%d", link_spec->profile,
             (int)link_spec->rtt_ms);
    memcpy(config.profile, profile_name, sizeof config.profile - 1);
    config.profile[sizeof config.profile - 1] = '\0';
  }
  config.down.loss = config.up.loss = link_spec->loss;
  netem_tcp_preset(&config.tcp, settings->tcp_preset);
  if (settings->initcwnd > 0) config.tcp.initcwnd = settings->initcwnd;
  if (settings->queue_bytes > 0)
    config.down.queue_bytes = config.up.queue_bytes = settings->queue_bytes;
  config.server_addrs = single      ? 1
                        : coalesced ? (unsigned)page->n_address_groups
                                    : (unsigned)page->n_hosts;
  /* The loss pattern depends on the page, link and repetition, not on the configuration:
   * every configuration of a repetition meets the same generator. */
  char seed_text[700];
  snprintf(seed_text, sizeof seed_text, "%s|%s|%g|%g|%d|%llu", page->id, link_spec->profile,
           link_spec->rtt_ms, link_spec->loss, job->repetition, (unsigned long long)settings->seed);
  config.seed = fnv1a(seed_text);
  load_files files;
  if (load_files_make(settings, job, &files) != 0) {
    fprintf(stderr, "speedy lab run: cannot create %s: %s\n", files.dir, strerror(errno));
    return -1;
  }
  char err[512];
  netem_link *link = NULL;
  if (is_interrupted(settings)) return LAB_RUN_ABORTED;
  if (netem_start(&config, &link, err, sizeof err) != 0) {
    if (is_interrupted(settings)) return LAB_RUN_ABORTED;
    fprintf(stderr, "speedy lab run: %s: netem: %s\n", job->key, err);
    return -1;
  }
  const netem_config *running = netem_link_config(link);
  int port = job->tls ? 443 : 80;
  char listen_plain[16] = "80", listen_tls[16] = "443,tls", cert[4200], key[4200], cacert[4200];
  snprintf(cert, sizeof cert, "%s/chain.pem", page->cert_dir);
  snprintf(key, sizeof key, "%s/key.pem", page->cert_dir);
  snprintf(cacert, sizeof cacert, "%s/certs/root.pem", settings->work_dir);
  const char *tls_max = settings->tls_version == 13 ? "1.3" : "1.2";
  char *plan_file = page->plan_file, page_plan[4300], spki[64] = "";
  if (settings->chromium) {
    if (page_body_plan(page->plan_file, single, &files, page_plan, sizeof page_plan) != 0) {
      fprintf(stderr, "speedy lab run: %s: cannot write %s\n", job->key, page_plan);
      netem_stop(link);
      return -1;
    }
    plan_file = page_plan;
    if (job->tls && spki_hash(key, spki, sizeof spki) != 0) {
      fprintf(stderr, "speedy lab run: %s: openssl could not hash the key %s\n", job->key, key);
      netem_stop(link);
      return -1;
    }
  }
  /* Server: sh keeps its stderr in the load's log; exec leaves speedyd as the process. */
  char *server_argv[40];
  size_t s = 0;
  server_argv[s++] = "/bin/sh";
  server_argv[s++] = "-c";
  if (settings->server_cmd != NULL) {
    server_argv[s++] = "log=$1; cmd=$2; shift 2; eval \"$cmd\" 2>>\"$log\"";
  } else {
    server_argv[s++] = "log=$1; shift; exec \"$@\" 2>>\"$log\"";
  }
  server_argv[s++] = "sh";
  server_argv[s++] = files.server_log;
  if (settings->server_cmd != NULL) server_argv[s++] = (char *)settings->server_cmd;
  if (settings->server_cmd == NULL) {
    server_argv[s++] = (char *)settings->speedyd_path;
    server_argv[s++] = "--replay";
    server_argv[s++] = plan_file;
    server_argv[s++] = "--listen";
    server_argv[s++] = job->tls ? listen_tls : listen_plain;
    server_argv[s++] = "--port-file";
    server_argv[s++] = files.ports;
    server_argv[s++] = "--max-connections-per-address";
    server_argv[s++] = "0";
    /* libspeedy's zlib level for the replies, not speedyd's cheaper default: the experiment
     * measures compressed headers, and the full matrix's batches all ran with 6. */
    server_argv[s++] = "--header-compression";
    server_argv[s++] = "6";
    if (job->tls) {
      server_argv[s++] = "--cert";
      server_argv[s++] = cert;
      server_argv[s++] = "--key";
      server_argv[s++] = key;
      server_argv[s++] = "--tls-max";
      server_argv[s++] = (char *)tls_max;
      server_argv[s++] = "--no-tls-resumption";
    }
    if (lab_config_pushes(job->config) || lab_config_hints(job->config)) {
      /* Over HTTP/2 speedyd adds a 103 Early Hints with the Link before a hinted page. */
      server_argv[s++] = "--manifest";
      server_argv[s++] = page->manifest;
      server_argv[s++] = lab_config_pushes(job->config) ? "--push" : "--hint";
    }
  } else {
    /* $1 plan, $2 certificate chain, $3 key, $4 port, $5 the page's --write-site
     * directory or "", $6 this load's directory (docs/lab.md, "Other servers"). The
     * server namespace holds only the addresses the loader connects to, so listening on
     * the port of every address (speedyd's way, nginx's `listen 80`) needs no list; a
     * server that wants one finds it in $SPEEDY_NETEM_SERVER_ADDRS (netem_spawn). */
    server_argv[s++] = plan_file;
    server_argv[s++] = cert;
    server_argv[s++] = key;
    server_argv[s++] = job->tls ? "443" : "80";
    server_argv[s++] = page->site_dir ? page->site_dir : "";
    server_argv[s++] = files.dir;
  }
  server_argv[s] = NULL;
  /* Loader. */
  char port_text[16], addr_single[64], repetition[16], timeout[32], dns_rtt[16], hello_padding[16],
      delayable_limit[16], document_delay[16], frame_delay[16], request_spacing[16], jitter[16];
  snprintf(port_text, sizeof port_text, "%d", port);
  snprintf(addr_single, sizeof addr_single, "198.19.0.1:%d", port);
  snprintf(repetition, sizeof repetition, "%d", job->repetition);
  snprintf(timeout, sizeof timeout, "%.0f", settings->timeout_s);
  snprintf(dns_rtt, sizeof dns_rtt, "%u", settings->dns_rtt_ms);
  snprintf(hello_padding, sizeof hello_padding, "%u", settings->hello_padding);
  snprintf(delayable_limit, sizeof delayable_limit, "%u", settings->delayable_limit);
  snprintf(document_delay, sizeof document_delay, "%u", settings->document_delay_ms);
  snprintf(frame_delay, sizeof frame_delay, "%u", settings->frame_delay_ms);
  snprintf(request_spacing, sizeof request_spacing, "%u", settings->request_spacing_ms);
  snprintf(jitter, sizeof jitter, "%u", settings->jitter_ms);
  /* h2-coalesced: host i at the address of its group, 198.19.0.(group + 1). */
  char(*host_addr)[48] = NULL;
  char *loader_argv[51 + 2 * LAB_PLAN_MAX_HOSTS];
  size_t l = 0;
  if (coalesced) {
    host_addr = calloc(page->n_hosts ? page->n_hosts : 1, sizeof *host_addr);
    if (host_addr == NULL) {
      fprintf(stderr, "speedy lab run: %s: out of memory\n", job->key);
      netem_stop(link);
      return -1;
    }
    for (size_t h = 0; h < page->n_hosts; h++)
      snprintf(host_addr[h], sizeof host_addr[h], "%zu=198.19.0.%u:%d", h,
               page->address_group[h] + 1, port);
  }
  loader_argv[l++] = "/bin/sh";
  loader_argv[l++] = "-c";
  loader_argv[l++] = "log=$1; shift; exec \"$@\" 2>>\"$log\"";
  loader_argv[l++] = "sh";
  loader_argv[l++] = files.loader_log;
  size_t loader_start = l;
  if (settings->chromium) {
    /* The same link, replay and addresses; the browser's own HTTP/1.1 (docs/lab.md). */
    loader_argv[l++] = (char *)settings->node_path;
    loader_argv[l++] = (char *)settings->driver_path;
    loader_argv[l++] = "--plan";
    loader_argv[l++] = plan_file;
    loader_argv[l++] = "--chromium";
    loader_argv[l++] = (char *)settings->chromium_path;
    if (coalesced) {
      /* The browser coalesces by itself: hosts that share an address and the certificate. */
      for (size_t h = 0; h < page->n_hosts; h++) {
        loader_argv[l++] = "--host-addr";
        loader_argv[l++] = host_addr[h];
      }
    } else {
      loader_argv[l++] = single ? "--single" : "--addr-base";
      loader_argv[l++] = single ? addr_single : "198.19.0.1";
    }
    if (h2) loader_argv[l++] = "--h2";
    if (job->tls) {
      loader_argv[l++] = "--tls";
      loader_argv[l++] = "--spki";
      loader_argv[l++] = spki;
    }
    loader_argv[l++] = "--result";
    loader_argv[l++] = files.result;
    loader_argv[l++] = "--repetition";
    loader_argv[l++] = repetition;
    loader_argv[l++] = "--timeout";
    loader_argv[l++] = timeout;
    loader_argv[l] = NULL;
    goto loader_ready;
  }
  loader_argv[l++] = (char *)settings->speedy_path;
  loader_argv[l++] = "load";
  loader_argv[l++] = page->plan_file;
  if (single) {
    loader_argv[l++] = "--single";
    loader_argv[l++] = addr_single;
  } else if (coalesced) {
    for (size_t h = 0; h < page->n_hosts; h++) {
      loader_argv[l++] = "--host-addr";
      loader_argv[l++] = host_addr[h];
    }
    loader_argv[l++] = "--coalesce";
  } else {
    loader_argv[l++] = "--addr-base";
    loader_argv[l++] = "198.19.0.1";
    loader_argv[l++] = "--port";
    loader_argv[l++] = port_text;
  }
  if (h2) {
    loader_argv[l++] = "--proto";
    loader_argv[l++] = "h2"; /* by ALPN over TLS, prior knowledge (h2c) without */
  } else if (spdy) {
    loader_argv[l++] = "--spdy";
    loader_argv[l++] = "3.1";
  } else {
    loader_argv[l++] = "--http1";
    loader_argv[l++] = "--dispatch";
    loader_argv[l++] = job->config == LAB_HTTP1_PRIO ? "priority" : "fcfs";
  }
  if (job->tls) {
    loader_argv[l++] = "--tls";
    loader_argv[l++] = "--cacert";
    loader_argv[l++] = cacert;
  }
  loader_argv[l++] = "--result";
  loader_argv[l++] = files.result;
  loader_argv[l++] = "--repetition";
  loader_argv[l++] = repetition;
  loader_argv[l++] = "--timeout";
  loader_argv[l++] = timeout;
  if (settings->dns_rtt_ms > 0) { /* without it the command line is as before --dns-rtt */
    loader_argv[l++] = "--dns-rtt";
    loader_argv[l++] = dns_rtt;
  }
  if (settings->hello_padding > 0 && job->tls) {
    loader_argv[l++] = "--hello-padding";
    loader_argv[l++] = hello_padding;
  }
  if (settings->delayable_limit > 0) { /* SPDY and HTTP/2 until the server is known */
    loader_argv[l++] = "--delayable-limit";
    loader_argv[l++] = delayable_limit;
  }
  if (settings->chromium_sockets) loader_argv[l++] = "--chromium-sockets";
  if (settings->chromium_headers) loader_argv[l++] = "--chromium-headers";
  if (settings->boost_images) loader_argv[l++] = "--boost-images";
  if (settings->blocking_css) loader_argv[l++] = "--blocking-css";
  if (settings->load_event) loader_argv[l++] = "--load-event";
  if (settings->document_delay_ms > 0) {
    loader_argv[l++] = "--document-delay";
    loader_argv[l++] = document_delay;
  }
  if (settings->frame_delay_ms > 0) {
    loader_argv[l++] = "--frame-delay";
    loader_argv[l++] = frame_delay;
  }
  if (settings->request_spacing_ms > 0) {
    loader_argv[l++] = "--request-spacing";
    loader_argv[l++] = request_spacing;
  }
  if (settings->jitter_ms > 0) {
    loader_argv[l++] = "--jitter";
    loader_argv[l++] = jitter;
  }
  loader_argv[l] = NULL;
loader_ready:;

  int rc = -1;
  double started = now_ms();
  time_t wall = time(NULL);
  pid_t server = 0, loader = 0;
  netem_stats before, after;
  if (is_interrupted(settings)) goto aborted;
  if (netem_spawn(link, NETEM_SIDE_SERVER, server_argv, &server) != 0) {
    fprintf(stderr, "speedy lab run: %s: cannot start the server\n", job->key);
    goto out;
  }
  live_group_add(server);
  if (settings->server_cmd == NULL) {
    if (wait_port_file(settings, files.ports, server, 10000) != 0) {
      if (is_interrupted(settings)) goto aborted;
      log_tail(files.server_log, err, sizeof err);
      fprintf(stderr, "speedy lab run: %s: the replay server did not start: %s\n", job->key,
              err[0] ? err : "no message");
      goto out;
    }
  } else if (wait_listener(settings, link, server, port, 10000) != 0) {
    if (is_interrupted(settings)) goto aborted;
    log_tail(files.server_log, err, sizeof err);
    fprintf(stderr, "speedy lab run: %s: the server command did not listen on port %d: %s\n",
            job->key, port, err[0] ? err : "no message");
    goto out;
  }
  netem_stats_read(link, &before);
  double load_started = now_ms();
  if (is_interrupted(settings)) goto aborted;
  if (netem_spawn(link, NETEM_SIDE_CLIENT, loader_argv, &loader) != 0) {
    fprintf(stderr, "speedy lab run: %s: cannot start the loader\n", job->key);
    goto out;
  }
  live_group_add(loader);
  int status = wait_bounded(settings, loader, (settings->timeout_s + 15) * 1000);
  live_group_remove(loader); /* reaped: its number may be reused from now on */
  /* Killed because of the interruption: a half-measured load, never recorded. */
  if (status < 0 && is_interrupted(settings)) goto aborted;
  double load_wall = now_ms() - load_started;
  netem_stats_read(link, &after);
  json_t *result = read_last_line(files.result);
  if (result == NULL) {
    log_tail(files.loader_log, err, sizeof err);
    fprintf(stderr, "speedy lab run: %s: the loader gave no result (%s): %s\n", job->key,
            status < 0 ? "killed after the timeout" : "exited", err[0] ? err : "no message");
    goto out;
  }
  /* What the run adds to the loader's line. */
  json_object_set_new(result, "key", json_string(job->key));
  json_object_set_new(result, "page", json_string(page->id));
  json_object_set_new(result, "config", json_string(name));
  json_object_set_new(result, "tls", json_boolean(job->tls));
  json_object_set_new(result, "tls_version", job->tls ? json_string(tls_max) : json_null());
  json_object_set_new(result, "repetition", json_integer(job->repetition));
  json_object_set_new(result, "push", json_boolean(lab_config_pushes(job->config)));
  json_object_set_new(result, "hint", json_boolean(lab_config_hints(job->config)));
  json_object_set_new(result, "link", link_json(running));
  json_object_set(result, "app_bytes_up", json_object_get(result, "bytes_up"));
  json_object_set(result, "app_bytes_down", json_object_get(result, "bytes_down"));
  json_object_set_new(result, "bytes_up",
                      json_integer((json_int_t)(after.up.bytes_in - before.up.bytes_in)));
  json_object_set_new(result, "bytes_down",
                      json_integer((json_int_t)(after.down.bytes_in - before.down.bytes_in)));
  json_object_set_new(result, "bytes_counted_by", json_string("link emulator"));
  json_object_set_new(result, "tcp_retransmits",
                      json_integer((json_int_t)tcp_delta(
                          &before, &after, offsetof(netem_tcp_counters, retrans_segs))));
  json_object_set_new(
      result, "tcp_timeouts",
      json_integer((json_int_t)tcp_delta(&before, &after, offsetof(netem_tcp_counters, timeouts))));
  json_object_set_new(result, "tcp_syn_retransmits",
                      json_integer((json_int_t)tcp_delta(
                          &before, &after, offsetof(netem_tcp_counters, syn_retrans))));
  /* Connections the client opened across the link, used or not: its namespace's active
   * opens less its passive ones, which are loopback (Chromium's DevTools connection). */
  const netem_tcp_counters *c0 = &before.tcp[NETEM_SIDE_CLIENT],
                           *c1 = &after.tcp[NETEM_SIDE_CLIENT];
  json_object_set_new(result, "tcp_connects",
                      json_integer((json_int_t)((c1->active_opens - c0->active_opens) -
                                                (c1->passive_opens - c0->passive_opens))));
  json_object_set_new(result, "netem", netem_json(&before, &after, running));
  /* The page's requests that no configuration replays, by reason: the report counts them. */
  if (page->left_out != NULL)
    json_object_set_new(result, "left_out", json_deep_copy(page->left_out)); /* not shared */
  lab_bound_link bl = {.rtt_ms = (double)netem_config_rtt_ns(running) / 1e6,
                       .down_bps = (double)running->down.rate_bps,
                       .up_bps = (double)running->up.rate_bps,
                       .tls_round_trips = job->tls ? (settings->tls_version == 13 ? 1 : 2) : 0,
                       .dns_ms = settings->dns_rtt_ms};
  double bound = lab_bound_ms(&page->summary, &bl);
  json_object_set_new(result, "lower_bound_ms", json_real(round(bound * 10) / 10));
  json_object_set_new(result, "depth", json_integer(page->summary.depth));
  char *server_cmdline = join_argv(server_argv + 5);
  char *loader_cmdline = join_argv(loader_argv + loader_start);
  json_object_set_new(
      result, "settings",
      json_pack("{s:s, s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:o, s:I, s:I, s:I, s:s, s:s, s:I, s:f,"
                " s:I, s:b}",
                "congestion_control", running->tcp.congestion_control, "initcwnd",
                running->tcp.initcwnd, "tcp_preset", running->tcp.preset, "slow_start_after_idle",
                running->tcp.slow_start_after_idle, "ecn", running->tcp.ecn, "early_retrans",
                running->tcp.early_retrans, "recovery", running->tcp.recovery, "fastopen",
                running->tcp.fastopen, "tls_version", job->tls ? json_string(tls_max) : json_null(),
                "order_seed", (json_int_t)settings->seed, "netem_seed", (json_int_t)running->seed,
                "plan_seed", (json_int_t)json_integer_value(json_object_get(result, "seed")),
                "server", server_cmdline ? server_cmdline : "", "loader",
                loader_cmdline ? loader_cmdline : "", "started", (json_int_t)wall, "load_wall_ms",
                round(load_wall), "dns_rtt_ms", (json_int_t)settings->dns_rtt_ms, "load_event",
                settings->load_event));
  free(server_cmdline);
  free(loader_cmdline);
  /* Invariants the run can check. */
  double plt = json_number_value(json_object_get(result, "plt_ms"));
  int valid = json_is_true(json_object_get(result, "valid"));
  /* The browser's PLT is its load event, which requests made later do not delay (and so is
   * the loader's with --load-event): the bound (every byte of the plan) is checked against
   * the last byte instead, where the result has it. */
  const json_t *last_byte = json_object_get(result, "last_byte_ms");
  double checked = json_is_number(last_byte) ? json_number_value(last_byte) : plt;
  if (valid && checked < bound) {
    valid = 0;
    char why[160];
    snprintf(why, sizeof why, "%s %.1f ms below the physical lower bound %.1f ms",
             checked != plt ? "last byte" : "page load time", checked, bound);
    json_object_set_new(result, "invalid_reason", json_string(why));
  }
  if (valid && (after.down.overflow_drops + after.up.overflow_drops + after.down.tun_drops +
                after.up.tun_drops) > 0) {
    valid = 0;
    json_object_set_new(result, "invalid_reason",
                        json_string("the link emulator dropped packets of its own"));
  }
  json_object_set_new(result, "valid", json_boolean(valid));
  int late = (double)after.lateness.p99_ns / 1e6 > settings->lateness_p99_ms;
  json_object_set_new(result, "lateness_ok", json_boolean(!late));
  *lateness_exceeded = late;
  char *line = json_dumps(result, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
  json_decref(result);
  if (line == NULL || lab_run_append(settings, line) != 0) {
    fprintf(stderr, "speedy lab run: cannot append to %s: %s\n", settings->results,
            strerror(errno));
  } else {
    rc = 0;
  }
  free(line);
  if (settings->verbose)
    fprintf(stderr, "speedy lab run: %s: %.0f ms (bound %.0f ms)%s, %.1f s\n", job->key, plt, bound,
            valid ? "" : ", INVALID", (now_ms() - started) / 1000);
  goto out;
aborted:
  rc = LAB_RUN_ABORTED;
out:
  /* The server is asked to stop while the link still carries the loader's last packets
   * (its FINs, or the resets of a killed one): its connections end and it exits by itself,
   * speedyd after reaping its workers. Stopped after the link, it would wait for
   * connections that never close until netem_stop's 2 s grace is over and be killed,
   * leaving its workers to init. */
  if (server > 0) wait_server_end(server, 1000);
  netem_stop(link); /* also ends a server that is left, and the namespaces */
  if (server > 0) live_group_remove(server);
  free(host_addr);
  return rc;
}
