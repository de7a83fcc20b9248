/* learner-runs.c — learner samples (redacted text only), learner runs and adapters
 * (hanzo-store-learner.h; tables in schema.c, migration "learner runs and adapters"). */
#include <math.h>
#include "hanzo-store-learner.h"
#include "store-private.h"

static char *
col_text (sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text (st, i);
  return g_strdup (t ? (const char *) t : "");
}

static double
col_real (sqlite3_stmt *st, int i)
{
  return sqlite3_column_type (st, i) == SQLITE_NULL ? NAN : sqlite3_column_double (st, i);
}

static void
bind_real (sqlite3_stmt *st, int i, double v)
{
  if (isnan (v))
    sqlite3_bind_null (st, i);
  else
    sqlite3_bind_double (st, i, v);
}

static gboolean
invalid (GError **error, const char *what)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID, "%s", what);
  return FALSE;
}

/* Step a statement to completion (writes); FALSE with `error` on failure. */
static gboolean
step_done (HzStore *store, sqlite3_stmt *st, const char *what, GError **error)
{
  int rc = sqlite3_step (st);
  hz_store_stmt_done (st);
  if (rc == SQLITE_DONE)
    return TRUE;
  hz_store_set_sqlite_error (error, store->db, rc, what);
  if ((rc & 0xff) == SQLITE_CONSTRAINT && error && *error)
    (*error)->code = HZ_STORE_ERROR_INVALID;
  return FALSE;
}

static GPtrArray *
collect (HzStore *store, sqlite3_stmt *st, gpointer (*from_row) (sqlite3_stmt *),
         GDestroyNotify free_fn, const char *what, GError **error)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (free_fn);
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    g_ptr_array_add (rows, from_row (st));
  hz_store_stmt_done (st);
  if (rc != SQLITE_DONE)
    {
      hz_store_set_sqlite_error (error, store->db, rc, what);
      g_ptr_array_unref (rows);
      return NULL;
    }
  return rows;
}

static gboolean
not_found (GError **error, const char *what, gint64 id)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND, "no %s %" G_GINT64_FORMAT,
               what, id);
  return FALSE;
}

/* ------------------------------------------------------------------ samples */

void
hz_learner_sample_free (HzLearnerSample *s)
{
  if (s == NULL)
    return;
  g_free (s->redacted);
  g_free (s);
}

static gpointer
sample_from_row (sqlite3_stmt *st)
{
  HzLearnerSample *s = g_new0 (HzLearnerSample, 1);
  s->message_id = sqlite3_column_int64 (st, 0);
  s->conversation_id = sqlite3_column_int64 (st, 1);
  s->parent_id = sqlite3_column_int64 (st, 2);
  HzRole role = HZ_ROLE_USER;
  hz_role_from_string ((const char *) sqlite3_column_text (st, 3), &role);
  s->role = role;
  s->user_written = sqlite3_column_int (st, 4) != 0;
  s->rating = sqlite3_column_int (st, 5);
  s->redacted = col_text (st, 6);
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
  return collect (store, st, sample_from_row, (GDestroyNotify) hz_learner_sample_free,
                  "listing learner samples", error);
}

/* ------------------------------------------------------------------ runs */

static const char *const status_names[] = {
  "running", "promoted", "rejected", "interrupted", "failed",
};

const char *
hz_learner_run_status_to_string (HzLearnerRunStatus s)
{
  return (guint) s < G_N_ELEMENTS (status_names) ? status_names[s] : NULL;
}

gboolean
hz_learner_run_status_from_string (const char *str, HzLearnerRunStatus *out)
{
  for (guint i = 0; str && i < G_N_ELEMENTS (status_names); i++)
    if (g_str_equal (str, status_names[i]))
      {
        *out = (HzLearnerRunStatus) i;
        return TRUE;
      }
  return FALSE;
}

void
hz_learner_run_free (HzLearnerRun *r)
{
  if (r == NULL)
    return;
  g_free (r->kind);
  g_free (r->base_sha256);
  g_free (r->message);
  g_free (r);
}

gint64
hz_store_learner_run_begin (HzStore *store, const char *kind, const char *base_sha256,
                            GError **error)
{
  if (!kind || !*kind || !g_utf8_validate (kind, -1, NULL)
      || (base_sha256 && !g_utf8_validate (base_sha256, -1, NULL)))
    return invalid (error, "learner run: empty kind or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare (store,
    "INSERT INTO learner_runs (kind, base_sha256, started_us, status)"
    " VALUES (?1, ?2, ?3, 'running')", error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return 0;
  sqlite3_bind_text (st, 1, kind, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, base_sha256 ? base_sha256 : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, g_get_real_time ());
  gboolean ok = step_done (store, st, "recording a learner run", error);
  gint64 id = ok ? sqlite3_last_insert_rowid (store->db) : 0;
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
    return invalid (error, "learner run: bad status or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare (store,
    "UPDATE learner_runs SET status = ?2, steps = max (steps, ?3),"
    " train_loss = coalesce (?4, train_loss), heldout_before = coalesce (?5, heldout_before),"
    " heldout_after = coalesce (?6, heldout_after),"
    " adapter_id = CASE WHEN ?7 < 0 THEN adapter_id WHEN ?7 = 0 THEN NULL ELSE ?7 END,"
    " message = coalesce (?8, message),"
    " finished_us = CASE WHEN ?2 = 'running' THEN NULL ELSE ?9 END"
    " WHERE id = ?1", error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  sqlite3_bind_text (st, 2, status_str, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, steps);
  bind_real (st, 4, train_loss);
  bind_real (st, 5, heldout_before);
  bind_real (st, 6, heldout_after);
  sqlite3_bind_int64 (st, 7, adapter_id);
  if (message)
    sqlite3_bind_text (st, 8, message, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null (st, 8);
  sqlite3_bind_int64 (st, 9, g_get_real_time ());
  gboolean ok = step_done (store, st, "updating a learner run", error);
  if (ok && sqlite3_changes (store->db) == 0)
    ok = not_found (error, "learner run", id);
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
  r->kind = col_text (st, 1);
  r->base_sha256 = col_text (st, 2);
  r->started_us = sqlite3_column_int64 (st, 3);
  r->finished_us = sqlite3_column_int64 (st, 4);
  r->status = HZ_LEARNER_RUN_FAILED;
  hz_learner_run_status_from_string ((const char *) sqlite3_column_text (st, 5), &r->status);
  r->steps = sqlite3_column_int64 (st, 6);
  r->train_loss = col_real (st, 7);
  r->heldout_before = col_real (st, 8);
  r->heldout_after = col_real (st, 9);
  r->adapter_id = sqlite3_column_int64 (st, 10);
  r->message = col_text (st, 11);
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
  g_autoptr (GPtrArray) rows = collect (store, st, run_from_row,
                                        (GDestroyNotify) hz_learner_run_free,
                                        "reading a learner run", error);
  if (rows == NULL)
    return NULL;
  if (rows->len == 0)
    return not_found (error, "learner run", id), NULL;
  return g_ptr_array_steal_index (rows, 0);
}

GPtrArray *
hz_store_learner_run_list (HzStore *store, int limit, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " RUN_COLS " FROM learner_runs ORDER BY id DESC LIMIT ?1", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, limit > 0 ? limit : -1);
  return collect (store, st, run_from_row, (GDestroyNotify) hz_learner_run_free,
                  "listing learner runs", error);
}

/* ------------------------------------------------------------------ adapters */

void
hz_learner_adapter_free (HzLearnerAdapter *a)
{
  if (a == NULL)
    return;
  g_free (a->path);
  g_free (a->base_sha256);
  g_free (a);
}

gint64
hz_store_adapter_add (HzStore *store, const char *path, const char *base_sha256,
                      gint64 run_id, double heldout_loss, GError **error)
{
  if (!path || !*path || !g_utf8_validate (path, -1, NULL)
      || (base_sha256 && !g_utf8_validate (base_sha256, -1, NULL)))
    return invalid (error, "adapter: empty path or invalid UTF-8");
  sqlite3_stmt *st = hz_store_prepare (store,
    "INSERT INTO adapters (path, base_sha256, run_id, heldout_loss, created_us, active)"
    " VALUES (?1, ?2, nullif (?3, 0), ?4, ?5, 0)", error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return 0;
  sqlite3_bind_text (st, 1, path, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, base_sha256 ? base_sha256 : "", -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, run_id);
  bind_real (st, 4, heldout_loss);
  sqlite3_bind_int64 (st, 5, g_get_real_time ());
  gboolean ok = step_done (store, st, "recording an adapter", error);
  gint64 id = ok ? sqlite3_last_insert_rowid (store->db) : 0;
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
  gboolean ok = step_done (store, off, "deactivating adapters", error);
  if (ok && id != 0)
    {
      sqlite3_bind_int64 (on, 1, id);
      ok = step_done (store, on, "activating an adapter", error);
      if (ok && sqlite3_changes (store->db) == 0)
        ok = not_found (error, "adapter", id);
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
  a->path = col_text (st, 1);
  a->base_sha256 = col_text (st, 2);
  a->run_id = sqlite3_column_int64 (st, 3);
  a->heldout_loss = col_real (st, 4);
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
  g_autoptr (GPtrArray) rows = collect (store, st, adapter_from_row,
                                        (GDestroyNotify) hz_learner_adapter_free,
                                        "reading the active adapter", error);
  if (rows == NULL)
    return NULL;
  if (rows->len == 0)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND, "no active adapter");
      return NULL;
    }
  return g_ptr_array_steal_index (rows, 0);
}

GPtrArray *
hz_store_adapter_list (HzStore *store, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " ADAPTER_COLS " FROM adapters ORDER BY id DESC", error);
  if (st == NULL)
    return NULL;
  return collect (store, st, adapter_from_row, (GDestroyNotify) hz_learner_adapter_free,
                  "listing adapters", error);
}

gboolean
hz_store_adapter_delete (HzStore *store, gint64 id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store, "DELETE FROM adapters WHERE id = ?1", error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  gboolean ok = step_done (store, st, "deleting an adapter", error);
  if (ok && sqlite3_changes (store->db) == 0)
    ok = not_found (error, "adapter", id);
  return hz_store_write_end (store, ok, error);
}
