/* feedback.c — message ratings (see hanzo-store-feedback.h). */
#include "hanzo-store-feedback.h"
#include "store-private.h"

gboolean
hz_store_set_feedback (HzStore *store, gint64 message_id, int rating, GError **error)
{
  sqlite3_stmt *st;
  gboolean ok;

  g_return_val_if_fail (store != NULL, FALSE);
  if (rating < -1 || rating > 1)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "rating %d: must be -1, 0 or 1", rating);
      return FALSE;
    }

  if (rating == 0)
    st = hz_store_prepare (store, "DELETE FROM message_feedback WHERE message_id = ?1", error);
  else
    st = hz_store_prepare (store,
      "INSERT INTO message_feedback (message_id, conversation_id, rating, created_us, updated_us)"
      " SELECT id, conversation_id, ?2, ?3, ?3 FROM messages WHERE id = ?1"
      " ON CONFLICT (message_id) DO UPDATE SET rating = excluded.rating,"
      "   updated_us = excluded.updated_us", error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return FALSE;
  sqlite3_bind_int64 (st, 1, message_id);
  if (rating != 0)
    {
      sqlite3_bind_int (st, 2, rating);
      sqlite3_bind_int64 (st, 3, g_get_real_time ());
      ok = hz_store_step_write_found (store, st, "storing feedback", "message", message_id,
                                      error);
    }
  else
    ok = hz_store_step_write (store, st, "storing feedback", error);
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_get_feedback (HzStore *store, gint64 message_id, int *out_rating, GError **error)
{
  g_return_val_if_fail (store != NULL && out_rating != NULL, FALSE);
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT rating FROM message_feedback WHERE message_id = ?1", error);
  if (st == NULL)
    return FALSE;
  sqlite3_bind_int64 (st, 1, message_id);
  int rc = sqlite3_step (st);
  *out_rating = rc == SQLITE_ROW ? sqlite3_column_int (st, 0) : 0;
  hz_store_stmt_done (st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return hz_store_set_sqlite_error (error, store->db, rc, "reading feedback");
  return TRUE;
}

static gpointer
feedback_from_row (sqlite3_stmt *st)
{
  HzMessageFeedback *f = g_new0 (HzMessageFeedback, 1);
  f->message_id = sqlite3_column_int64 (st, 0);
  f->conversation_id = sqlite3_column_int64 (st, 1);
  f->rating = sqlite3_column_int (st, 2);
  f->created_us = sqlite3_column_int64 (st, 3);
  f->updated_us = sqlite3_column_int64 (st, 4);
  return f;
}

GPtrArray *
hz_store_list_feedback (HzStore *store, gint64 conversation_id, gint64 since_us,
                        GError **error)
{
  g_return_val_if_fail (store != NULL, NULL);
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT message_id, conversation_id, rating, created_us, updated_us"
    " FROM message_feedback WHERE (?1 = 0 OR conversation_id = ?1) AND updated_us >= ?2"
    " ORDER BY updated_us, message_id", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, conversation_id);
  sqlite3_bind_int64 (st, 2, since_us);

  return hz_store_collect (store, st, feedback_from_row, g_free, "listing feedback", error);
}
