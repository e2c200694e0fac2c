/* stream.c — the stream table of a session: a chained hash by stream id, stream
 * creation with windows taken from the current settings, and stream closing.
 *
 * Closing a stream always goes through speedy_stream_close so that the scheduler, the
 * concurrency counters and the application (on_stream_close) stay consistent.
 */
#include <string.h>

#include "session_int.h"

#define SPEEDY_STREAM_TABLE_MIN 16

static uint32_t bucket_of(const speedy_session *session, int32_t id) {
  /* Fibonacci hashing: the product's top bits, which depend on every bit of the id (its
   * low bits would keep the parity: one side's ids are all odd, and would fill only half
   * of the buckets). */
  unsigned shift = 32u - (unsigned)__builtin_ctz(session->n_buckets);
  return ((uint32_t)id * 2654435761u) >> shift;
}

int speedy_stream_table_init(speedy_session *session) {
  session->buckets =
      speedy_mem_calloc(&session->mem, SPEEDY_STREAM_TABLE_MIN, sizeof(speedy_stream *));
  if (session->buckets == NULL) return SPEEDY_ERR_NOMEM;
  session->n_buckets = SPEEDY_STREAM_TABLE_MIN;
  session->n_streams = 0;
  return 0;
}

void speedy_stream_table_free(speedy_session *session) {
  speedy_mem_free(&session->mem, session->buckets);
  session->buckets = NULL;
  session->last_found = NULL;
  session->n_buckets = 0;
}

speedy_stream *speedy_stream_find(const speedy_session *session, int32_t id) {
  if (session->last_found != NULL && session->last_found->id == id) return session->last_found;
  if (session->buckets == NULL) return NULL;
  for (speedy_stream *s = session->buckets[bucket_of(session, id)]; s != NULL; s = s->hash_next) {
    if (s->id != id) continue;
    /* A cache, not state: the session is const to callers that only look things up
     * (sessions are never defined const, so writing through the cast is sound). */
    ((speedy_session *)session)->last_found = s;
    return s;
  }
  return NULL;
}

/* Doubles the table when it is more than full; failure just keeps the chains longer. */
static void grow_table(speedy_session *session) {
  uint32_t n = session->n_buckets * 2;
  speedy_stream **fresh = speedy_mem_calloc(&session->mem, n, sizeof(speedy_stream *));
  if (fresh == NULL) return;
  speedy_stream **old = session->buckets;
  uint32_t old_n = session->n_buckets;
  session->buckets = fresh;
  session->n_buckets = n;
  for (uint32_t i = 0; i < old_n; i++) {
    speedy_stream *s = old[i];
    while (s != NULL) {
      speedy_stream *next = s->hash_next;
      uint32_t b = bucket_of(session, s->id);
      s->hash_next = fresh[b];
      fresh[b] = s;
      s = next;
    }
  }
  speedy_mem_free(&session->mem, old);
}

speedy_stream *speedy_stream_create(speedy_session *session, int32_t id, int locally_initiated) {
  speedy_stream *stream = speedy_mem_calloc(&session->mem, 1, sizeof(*stream));
  if (stream == NULL) return NULL;
  stream->id = id;
  stream->locally_initiated = (uint8_t)(locally_initiated != 0);
  stream->send_window = session->remote_initial_window;
  stream->recv_window = session->local_initial_window;
  stream->incremental = session->caps.incremental_default;
  stream->content_length = -1;
  if (session->n_streams >= session->n_buckets) grow_table(session);
  uint32_t b = bucket_of(session, id);
  stream->hash_next = session->buckets[b];
  session->buckets[b] = stream;
  session->n_streams++;
  if (locally_initiated)
    session->n_local_open++;
  else
    session->n_remote_open++;
  return stream;
}

static void unlink_stream(speedy_session *session, speedy_stream *stream) {
  speedy_stream **link = &session->buckets[bucket_of(session, stream->id)];
  while (*link != stream) link = &(*link)->hash_next;
  *link = stream->hash_next;
  if (session->last_found == stream) session->last_found = NULL;
  session->n_streams--;
  if (stream->locally_initiated)
    session->n_local_open--;
  else
    session->n_remote_open--;
  if (stream->data_state == SPEEDY_DATA_ACTIVE) speedy_sched_remove(session, stream);
  /* A zero-copy frame not yet handed to the application never goes out: the connection
   * window it took is given back (the peer will not count it). */
  if (session->nocopy_stream_id == stream->id) {
    session->nocopy_stream_id = 0;
    if (session->caps.session_window) session->session_send_window += (int64_t)session->nocopy_len;
  }
}

void speedy_stream_remember_reset(speedy_session *session, int32_t id) {
  if (session->reset == NULL) {
    session->reset = session->reset_inline;
    session->reset_cap = SPEEDY_RESET_MEMORY;
  }
  if (session->reset_next >= session->reset_cap && session->reset_cap < SPEEDY_RESET_MEMORY_MAX) {
    /* Full: a larger ring, oldest first (when there is no memory, the oldest is lost). */
    uint32_t cap = session->reset_cap * 4 < SPEEDY_RESET_MEMORY_MAX ? session->reset_cap * 4
                                                                    : SPEEDY_RESET_MEMORY_MAX;
    int32_t *grown = speedy_mem_malloc(&session->mem, cap * sizeof(*grown));
    if (grown != NULL) {
      for (uint32_t i = 0; i < session->reset_cap; i++)
        grown[i] = session->reset[(session->reset_next + i) % session->reset_cap];
      memset(grown + session->reset_cap, 0, (cap - session->reset_cap) * sizeof(*grown));
      if (session->reset != session->reset_inline) speedy_mem_free(&session->mem, session->reset);
      session->reset_next = session->reset_cap;
      session->reset = grown;
      session->reset_cap = cap;
    }
  }
  session->reset[session->reset_next++ % session->reset_cap] = id;
}

void speedy_stream_forget_resets(speedy_session *session) {
  if (session->reset != session->reset_inline) speedy_mem_free(&session->mem, session->reset);
  session->reset = NULL;
}

/* Remembers how the stream ended, for frames that arrive after it is gone. */
static void remember_closed(speedy_session *session, const speedy_stream *stream) {
  if (stream->reset_sent)
    speedy_stream_remember_reset(session, stream->id);
  else
    session->closed[session->closed_next++ % SPEEDY_CLOSED_MEMORY] = stream->id;
}

int speedy_stream_closed_recently(const speedy_session *session, int32_t id, int *reset_by_us) {
  if (id == 0) return 0;
  for (uint32_t i = 0; session->reset != NULL && i < session->reset_cap; i++)
    if (session->reset[i] == id) {
      *reset_by_us = 1;
      return 1;
    }
  for (uint32_t i = 0; i < SPEEDY_CLOSED_MEMORY; i++)
    if (session->closed[i] == id) {
      *reset_by_us = 0;
      return 1;
    }
  return 0;
}

int speedy_stream_close(speedy_session *session, speedy_stream *stream, uint32_t status) {
  int32_t id = stream->id;
  int was_local = stream->locally_initiated;
  remember_closed(session, stream);
  unlink_stream(session, stream);
  /* Manual flow control: DATA the application never consumed still took the connection
   * window; the peer gets it back now, or a connection could stall on dead streams. */
  int credit = 0;
  if (stream->recv_held > 0 && session->caps.session_window) {
    session->session_recv_unacked += stream->recv_held;
    credit = speedy_session_return_session_credit(session);
  }
  /* The stream is gone from the table (nothing can act on it any more), but its user
   * data stays readable during on_stream_close, so the application can free it there.
   * Closes nest when the callback closes other streams: save and restore. */
  int32_t outer_id = session->closing_stream_id;
  void *outer_user = session->closing_stream_user;
  session->closing_stream_id = id;
  session->closing_stream_user = stream->user;
  speedy_mem_free(&session->mem, stream);
  int rv = 0;
  if (session->callbacks.on_stream_close != NULL &&
      session->callbacks.on_stream_close(session, id, status, session->user) != 0)
    rv = SPEEDY_ERR_CALLBACK_FAILURE;
  session->closing_stream_id = outer_id;
  session->closing_stream_user = outer_user;
  if (rv == 0) rv = credit;
  /* A slot opened: streams waiting for one may start. */
  if (was_local && session->pending_head != NULL) {
    int start = speedy_session_start_pending(session);
    if (rv == 0) rv = start;
  }
  return rv;
}

int speedy_stream_close_if_done(speedy_session *session, speedy_stream *stream) {
  /* A last zero-copy DATA frame not yet written keeps the stream: its END_STREAM is still
   * to go out (emit_nocopy closes it after). */
  if (stream->local_closed && stream->remote_closed && stream->headers_queued == 0 &&
      session->nocopy_stream_id != stream->id)
    return speedy_stream_close(session, stream, SPEEDY_RST_NONE);
  return 0;
}

void speedy_stream_free_all(speedy_session *session) {
  for (uint32_t i = 0; i < session->n_buckets; i++) {
    speedy_stream *s = session->buckets[i];
    while (s != NULL) {
      speedy_stream *next = s->hash_next;
      speedy_mem_free(&session->mem, s);
      s = next;
    }
    session->buckets[i] = NULL;
  }
  session->last_found = NULL;
  session->n_streams = 0;
}
