/* reply-limits.c — how a reply was limited (see hanzo-store-limits.h). */
#include "hanzo-store-limits.h"
#include "store-private.h"

gboolean
hz_store_set_message_limits (HzStore *store, gint64 message_id, gboolean cut, gint64 n_unseen,
                             GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  if (n_unseen < 0)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "n_unseen must be >= 0, not %" G_GINT64_FORMAT, n_unseen);
      return FALSE;
    }
  const gboolean none = !cut && n_unseen == 0;
  sqlite3_stmt *st = hz_store_prepare (store, none
    ? "DELETE FROM message_limits WHERE message_id = ?1"
    : "INSERT INTO message_limits (message_id, conversation_id, cut, n_unseen)"
      " SELECT id, conversation_id, ?2, ?3 FROM messages WHERE id = ?1"
      " ON CONFLICT (message_id) DO UPDATE SET cut = excluded.cut, n_unseen = excluded.n_unseen",
    error);
  if (st == NULL || !hz_store_write_begin (store, error))
    return FALSE;
  sqlite3_bind_int64 (st, 1, message_id);
  gboolean ok;
  if (none)
    ok = hz_store_step_write (store, st, "recording a reply's limits", error);
  else
    {
      sqlite3_bind_int (st, 2, cut ? 1 : 0);
      sqlite3_bind_int64 (st, 3, n_unseen);
      ok = hz_store_step_write_found (store, st, "recording a reply's limits", "message",
                                      message_id, error);
    }
  return hz_store_write_end (store, ok, error);
}

static gpointer
limits_from_row (sqlite3_stmt *st)
{
  HzMessageLimits *l = g_new0 (HzMessageLimits, 1);
  l->message_id = sqlite3_column_int64 (st, 0);
  l->conversation_id = sqlite3_column_int64 (st, 1);
  l->cut = sqlite3_column_int (st, 2) != 0;
  l->n_unseen = sqlite3_column_int64 (st, 3);
  return l;
}

GPtrArray *
hz_store_list_message_limits (HzStore *store, gint64 conversation_id, GError **error)
{
  g_return_val_if_fail (store != NULL, NULL);
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT message_id, conversation_id, cut, n_unseen FROM message_limits"
    " WHERE ?1 = 0 OR conversation_id = ?1 ORDER BY message_id", error);
  if (st == NULL)
    return NULL;
  sqlite3_bind_int64 (st, 1, conversation_id);
  return hz_store_collect (store, st, limits_from_row, g_free, "listing reply limits", error);
}
