/* learner-runs.c — learner samples (redacted text only), learner runs and adapters
 * (hanzo-store-learner.h; tables in schema.c, migration "learner runs and adapters"). */
#include <math.h>
#include "hanzo-store-learner.h"
#include "store-private.h"

static void
bind_real (sqlite3_stmt *st, int i, double v)
{
  hz_store_bind_double_or_null (st, i, !isnan (v), v);
}

/* ------------------------------------------------------------------ samples */

void
hz_learner_sample_free (HzLearnerSample *s)
{
  if (s != NULL)
    hz_store_free_record (s, 1, s->redacted);
}

static gpointer
sample_from_row (sqlite3_stmt *st)
{
  HzLearnerSample *s = g_new0 (HzLearnerSample, 1);
  s->message_id = sqlite3_column_int64 (st, 0);
  s->conversation_id = sqlite3_column_int64 (st, 1);
  s->parent_id = sqlite3_column_int64 (st, 2);
  s->role = hz_store_column_role (st, 3);
  s->user_written = sqlite3_column_int (st, 4) != 0;
  s->rating = sqlite3_column_int (st, 5);
  s->redacted = hz_store_column_text (st, 6);
  return s;
}

GPtrArray *
hz_store_list_learner_samples (HzStore *store, GError **error)
{
  /* Only metadata columns of messages; the text comes from message_redactions. */
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT r.message_id, m.conversation_id, coalesce (m.parent_id, 0), m.role,"
    " m.role = 'assistant' AND m.model_sha256 IS NULL, coalesce (f.rating, 0), r.redacted"
    " FROM message_redactions r JOIN messages m ON m.id = r.message_id"
    " LEFT JOIN message_feedback f ON f.message_id = r.message_id"
    " WHERE m.complete = 1 AND r.source_updated_us >= m.updated_us"
    " ORDER BY r.message_id", error);
  if (st == NULL)
    return NULL;
  return hz_store_collect (store, st, sample_from_row, (GDestroyNotify) hz_learner_sample_free,
                           "listing learner samples", error);
}

/* ------------------------------------------------------------------ runs */

static const char *const status_names[] = {
  "running", "promoted", "rejected", "interrupted", "failed",
};

HZ_STORE_DEFINE_ENUM_STRINGS (HzLearnerRunStatus, hz_learner_run_status_to_string,
                              hz_learner_run_status_from_string, status_names)

void
hz_learner_run_free (HzLearnerRun *r)
{
  if (r != NULL)
    hz_store_free_record (r, 3, r->kind, r->base_sha256, r->message);
}

gint64
hz_store_learner_run_begin (HzStore *store, const char *kind, const char *base_sha256,
                            GError **error)
{
  if (!hz_store_nonempty_utf8 (kind) || !hz_store_utf8_or_null (base_sha256))
    return hz_store_set_invalid (error, "learner run: empty kind or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT INTO learner_runs (kind, base_sha256, started_us, status)"
    " VALUES (?1, ?2, ?3, 'running')", error);
  if (st == NULL)
    return 0;
  sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, base_sha256 ? base_sha256 : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, g_get_real_time ());
  gint64 id;
  gboolean ok = hz_store_step_insert (store, st, "recording a learner run", &id, error);
  return hz_store_write_end (store, ok, error) ? id : 0;
}

gboolean
hz_store_learner_run_update (HzStore *store, gint64 id, HzLearnerRunStatus status,
                             gint64 steps, double train_loss, double heldout_before,
                             double heldout_after, gint64 adapter_id, const char *message,
                             GError **error)
{
  const char *status_str = hz_learner_run_status_to_string (status);
  if (status_str == NULL || (message && !g_utf8_validate (message, -1, NULL)))
    return hz_store_set_invalid (error, "learner run: bad status or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "UPDATE learner_runs SET status = ?2, steps = max (steps, ?3),"
    " train_loss = coalesce (?4, train_loss), heldout_before = coalesce (?5, heldout_before),"
    " heldout_after = coalesce (?6, heldout_after),"
    " adapter_id = CASE WHEN ?7 < 0 THEN adapter_id WHEN ?7 = 0 THEN NULL ELSE ?7 END,"
    " message = coalesce (?8, message),"
    " finished_us = CASE WHEN ?2 = 'running' THEN NULL ELSE ?9 END"
    " WHERE id = ?1", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  sqlite3_bind_text (st, 2, status_str, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, steps);
  bind_real (st, 4, train_loss);
  bind_real (st, 5, heldout_before);
  bind_real (st, 6, heldout_after);
  sqlite3_bind_int64 (st, 7, adapter_id);
  hz_store_bind_text_or_null (st, 8, message);
  sqlite3_bind_int64 (st, 9, g_get_real_time ());
  gboolean ok = hz_store_step_write_found (store, st, "updating a learner run", "learner run",
                                          id, error);
  return hz_store_write_end (store, ok, error);
}

#define RUN_COLS \
  "id, kind, base_sha256, started_us, coalesce (finished_us, 0), status, steps, train_loss," \
  " heldout_before, heldout_after, coalesce (adapter_id, 0), coalesce (message, '')"

static gpointer
run_from_row (sqlite3_stmt *st)
{
  HzLearnerRun *r = g_new0 (HzLearnerRun, 1);
  r->id = sqlite3_column_int64 (st, 0);
  r->kind = hz_store_column_text (st, 1);
  r->base_sha256 = hz_store_column_text (st, 2);
  r->started_us = sqlite3_column_int64 (st, 3);
  r->finished_us = sqlite3_column_int64 (st, 4);
  r->status = HZ_LEARNER_RUN_FAILED;
  hz_learner_run_status_from_string ((const char *) sqlite3_column_text (st, 5), &r->status);
  r->steps = sqlite3_column_int64 (st, 6);
  r->train_loss = hz_store_column_double_or (st, 7, NAN);
  r->heldout_before = hz_store_column_double_or (st, 8, NAN);
  r->heldout_after = hz_store_column_double_or (st, 9, NAN);
  r->adapter_id = sqlite3_column_int64 (st, 10);
  r->message = hz_store_column_text (st, 11);
  return r;
}

HzLearnerRun *
hz_store_learner_run_get (HzStore *store, gint64 id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " RUN_COLS " FROM learner_runs WHERE id = ?1", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  return hz_store_collect_one (store, st, run_from_row, (GDestroyNotify) hz_learner_run_free,
                               "reading a learner run", error,
                               "no learner run %" G_GINT64_FORMAT, id);
}

GPtrArray *
hz_store_learner_run_list (HzStore *store, int limit, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " RUN_COLS " FROM learner_runs ORDER BY id DESC LIMIT ?1", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, limit > 0 ? limit : -1);
  return hz_store_collect (store, st, run_from_row, (GDestroyNotify) hz_learner_run_free,
                           "listing learner runs", error);
}

/* ------------------------------------------------------------------ adapters */

void
hz_learner_adapter_free (HzLearnerAdapter *a)
{
  if (a != NULL)
    hz_store_free_record (a, 2, a->path, a->base_sha256);
}

gint64
hz_store_adapter_add (HzStore *store, const char *path, const char *base_sha256,
                      gint64 run_id, double heldout_loss, GError **error)
{
  if (!hz_store_nonempty_utf8 (path) || !hz_store_utf8_or_null (base_sha256))
    return hz_store_set_invalid (error, "adapter: empty path or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT INTO adapters (path, base_sha256, run_id, heldout_loss, created_us, active)"
    " VALUES (?1, ?2, nullif (?3, 0), ?4, ?5, 0)", error);
  if (st == NULL)
    return 0;
  sqlite3_bind_text (st, 1, path, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, base_sha256 ? base_sha256 : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, run_id);
  bind_real (st, 4, heldout_loss);
  sqlite3_bind_int64 (st, 5, g_get_real_time ());
  gint64 id;
  gboolean ok = hz_store_step_insert (store, st, "recording an adapter", &id, error);
  return hz_store_write_end (store, ok, error) ? id : 0;
}

gboolean
hz_store_adapter_set_active (HzStore *store, gint64 id, GError **error)
{
  sqlite3_stmt *off = hz_store_prepare (store,
    "UPDATE adapters SET active = 0 WHERE active = 1 AND id <> ?1", error);
  sqlite3_stmt *on = hz_store_prepare (store, "UPDATE adapters SET active = 1 WHERE id = ?1",
                                       error);
  if (off == NULL || on == NULL || !hz_store_write_begin (store, error))
    return FALSE;
  sqlite3_bind_int64 (off, 1, id);
  gboolean ok = hz_store_step_write (store, off, "deactivating adapters", error);
  if (ok && id != 0)
    {
      sqlite3_bind_int64 (on, 1, id);
      ok = hz_store_step_write_found (store, on, "activating an adapter", "adapter", id, error);
    }
  return hz_store_write_end (store, ok, error);
}

#define ADAPTER_COLS \
  "id, path, base_sha256, coalesce (run_id, 0), heldout_loss, created_us, active"

static gpointer
adapter_from_row (sqlite3_stmt *st)
{
  HzLearnerAdapter *a = g_new0 (HzLearnerAdapter, 1);
  a->id = sqlite3_column_int64 (st, 0);
  a->path = hz_store_column_text (st, 1);
  a->base_sha256 = hz_store_column_text (st, 2);
  a->run_id = sqlite3_column_int64 (st, 3);
  a->heldout_loss = hz_store_column_double_or (st, 4, NAN);
  a->created_us = sqlite3_column_int64 (st, 5);
  a->active = sqlite3_column_int (st, 6) != 0;
  return a;
}

HzLearnerAdapter *
hz_store_adapter_get_active (HzStore *store, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " ADAPTER_COLS " FROM adapters WHERE active = 1", error);
  if (st == NULL)
    return NULL;
  return hz_store_collect_one (store, st, adapter_from_row,
                               (GDestroyNotify) hz_learner_adapter_free,
                               "reading the active adapter", error, "no active adapter");
}

GPtrArray *
hz_store_adapter_list (HzStore *store, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " ADAPTER_COLS " FROM adapters ORDER BY id DESC", error);
  if (st == NULL)
    return NULL;
  return hz_store_collect (store, st, adapter_from_row, (GDestroyNotify) hz_learner_adapter_free,
                           "listing adapters", error);
}

gboolean
hz_store_adapter_delete (HzStore *store, gint64 id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare_write (store, "DELETE FROM adapters WHERE id = ?1", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  gboolean ok = hz_store_step_write_found (store, st, "deleting an adapter", "adapter", id,
                                          error);
  return hz_store_write_end (store, ok, error);
}
