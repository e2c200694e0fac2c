/* get_out.c — where `speedy get` puts bodies: stdout (in command-line order even though
 * SPDY delivers them interleaved), -o FILE, -O / -d DIR with names taken from the URL,
 * and pushed resources. Names the server controls are reduced to a safe base name and
 * created under the target directory with O_CREAT|O_EXCL|O_NOFOLLOW: no links followed,
 * nothing overwritten. Also escapes peer bytes before they reach a terminal.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "get_int.h"

#define HELD_MAX (256u << 20) /* stdout bytes held for a later position */
#define SAFE_NAME_MAX 200

void get_out_escaped(FILE *f, const char *s, size_t len) {
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '\\')
      fputs("\\\\", f);
    else if (ch >= 0x20 && ch < 0x7f)
      fputc(ch, f);
    else
      fprintf(f, "\\x%02x", ch);
  }
}

void get_safe_name(const char *path, char *out, size_t out_len) {
  size_t end = strcspn(path, "?#");
  size_t start = end;
  while (start > 0 && path[start - 1] != '/') start--;
  size_t o = 0;
  for (size_t i = start; i < end && o + 1 < out_len && o < SAFE_NAME_MAX; i++) {
    unsigned char ch = (unsigned char)path[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '.' || ch == '-' || ch == '_';
    if (ch == '.' && o == 0) continue; /* no dotfiles, no "." or ".." */
    out[o++] = ok ? (char)ch : '_';
  }
  out[o] = '\0';
  if (o == 0) snprintf(out, out_len, "index.html");
}

/* Creates name under dir without following links and without overwriting. */
static int create_safe(const char *dir, const char *name, char *saved, size_t saved_len, char *err,
                       size_t err_len) {
  int dirfd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) {
    snprintf(err, err_len, "cannot open directory %s: %s", dir ? dir : ".", strerror(errno));
    return -1;
  }
  int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  int saved_errno = errno;
  close(dirfd);
  if (fd < 0) {
    snprintf(err, err_len, "cannot create %s%s%s: %s%s", dir ? dir : "", dir ? "/" : "", name,
             strerror(saved_errno), saved_errno == EEXIST ? " (not overwriting)" : "");
    return -1;
  }
  snprintf(saved, saved_len, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  return fd;
}

int get_out_open(get_run *run, get_job *job) {
  const get_options *opt = run->opt;
  if (job->fd >= 0 || job->to_stdout) return 0;
  char err[300];
  if (job->pushed) {
    if (!opt->remote_name && !opt->dir) return 0; /* listed only */
  } else if (job->out_name) {
    if (strcmp(job->out_name, "-") == 0) {
      job->to_stdout = 1;
      return 0;
    }
    /* The user chose this name: created or truncated, as curl does. */
    job->fd = open(job->out_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (job->fd < 0) {
      get_job_fail(job, "cannot open -o %s: %s", job->out_name, strerror(errno));
      return -1;
    }
    snprintf(job->saved_as, sizeof(job->saved_as), "%s", job->out_name);
    return 0;
  }
  char name[SAFE_NAME_MAX + 1];
  get_safe_name(job->path, name, sizeof(name));
  job->fd = create_safe(opt->dir, name, job->saved_as, sizeof(job->saved_as), err, sizeof(err));
  if (job->fd < 0) {
    get_job_fail(job, "%s", err);
    return -1;
  }
  return 0;
}

static int write_all(int fd, const uint8_t *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

static void note_late_failure(get_job *job, const char *name);

static int is_stdout_head(get_run *run, get_job *job) {
  return run->stdout_pos < run->n_all && run->all[run->stdout_pos] == job;
}

/* Moves the stdout position past finished jobs, writing what later ones held. */
static void stdout_advance(get_run *run) {
  while (run->stdout_pos < run->n_all) {
    get_job *j = run->all[run->stdout_pos];
    if (j->to_stdout && j->held_len) {
      if (write_all(1, j->held, j->held_len) != 0) note_late_failure(j, "stdout");
      free(j->held);
      j->held = NULL;
      j->held_len = j->held_cap = 0;
    }
    if (j->to_stdout && j->state != JOB_DONE && j->state != JOB_FAILED) return;
    run->stdout_pos++;
  }
}

int get_out_write(get_run *run, get_job *job, const uint8_t *data, size_t len) {
  if (job->to_stdout) {
    if (is_stdout_head(run, job)) {
      if (write_all(1, data, len) != 0) {
        get_job_fail(job, "cannot write to stdout: %s", strerror(errno));
        return -1;
      }
      return 0;
    }
    if (len > HELD_MAX - job->held_len) {
      get_job_fail(job, "more than %u MiB waiting for stdout; use -o or -O", HELD_MAX >> 20);
      return -1;
    }
    if (job->held_len + len > job->held_cap) {
      size_t cap = job->held_cap ? job->held_cap : 65536;
      while (cap < job->held_len + len) cap *= 2;
      uint8_t *p = realloc(job->held, cap);
      if (!p) {
        get_job_fail(job, "out of memory");
        return -1;
      }
      job->held = p;
      job->held_cap = cap;
    }
    memcpy(job->held + job->held_len, data, len);
    job->held_len += len;
    return 0;
  }
  if (job->fd < 0) return 0; /* a push that is only listed */
  if (write_all(job->fd, data, len) != 0) {
    get_job_fail(job, "cannot write %s: %s", job->saved_as, strerror(errno));
    return -1;
  }
  return 0;
}

/* A failure found after the job finished (closing its file, writing held bytes). */
static void note_late_failure(get_job *job, const char *name) {
  if (job->state != JOB_DONE) return;
  job->state = JOB_FAILED;
  snprintf(job->error, sizeof(job->error), "cannot write %s: %s", name, strerror(errno));
}

void get_out_finish(get_run *run, get_job *job) {
  if (job->fd > 1) {
    int fd = job->fd;
    job->fd = -1;
    if (close(fd) != 0) note_late_failure(job, job->saved_as);
  }
  if (job->to_stdout) stdout_advance(run);
}
