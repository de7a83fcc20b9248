/* redactions.c — redacted message copies and the redaction vault (hanzo-store-redactions.h;
 * tables in schema.c migration 4). */
#include "hanzo-store-redactions.h"
#include "store-private.h"

#include <string.h>

void
hz_message_redaction_free (HzMessageRedaction *r)
{
  if (r)
    hz_store_free_record (r, 2, r->redacted, r->spans_json);
}

void
hz_vault_entry_free (HzVaultEntry *e)
{
  if (e)
    hz_store_free_record (e, 3, e->placeholder, e->entity_type, e->original);
}

gboolean
hz_store_put_message_redaction (HzStore *store, const HzMessageRedaction *r, GError **error)
{
  g_return_val_if_fail (store != NULL && r != NULL, FALSE);
  if (!r->redacted || !g_utf8_validate (r->redacted, -1, NULL)
      || !hz_store_utf8_or_null (r->spans_json))
    return hz_store_set_invalid (error, "message redaction: invalid UTF-8");
  if (r->redactor_version < 1 || r->n_spans < 0)
    return hz_store_set_invalid (error, "message redaction: redactor version must be >= 1, "
                                        "n_spans >= 0");
  /* conversation from the message; the INSERT selects it, so a missing message inserts
   * nothing and is reported as NOT_FOUND */
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT OR REPLACE INTO message_redactions (message_id, conversation_id, redacted, spans,"
    " n_spans, redactor_version, source_updated_us, created_us)"
    " SELECT id, conversation_id, ?, ?, ?, ?, ?, ? FROM messages WHERE id = ?", error);
  if (!st)
    return FALSE;
  sqlite3_bind_text (st, 1, r->redacted, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, r->spans_json ? r->spans_json : "[]", -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 3, r->n_spans);
  sqlite3_bind_int64 (st, 4, r->redactor_version);
  sqlite3_bind_int64 (st, 5, r->source_updated_us);
  sqlite3_bind_int64 (st, 6, r->created_us > 0 ? r->created_us : g_get_real_time ());
  sqlite3_bind_int64 (st, 7, r->message_id);
  gboolean ok = hz_store_step_write_found (store, st, "storing a message redaction", "message",
                                          r->message_id, error);
  return hz_store_write_end (store, ok, error);
}

#define REDACTION_COLS \
  "r.message_id, r.conversation_id, m.role, r.redacted, r.spans, r.n_spans," \
  " r.redactor_version, r.source_updated_us, r.created_us"

static gpointer
redaction_from_row (sqlite3_stmt *st)
{
  HzMessageRedaction *r = g_new0 (HzMessageRedaction, 1);
  r->message_id = sqlite3_column_int64 (st, 0);
  r->conversation_id = sqlite3_column_int64 (st, 1);
  r->role = hz_store_column_role (st, 2);
  r->redacted = hz_store_column_text (st, 3);
  r->spans_json = hz_store_column_text (st, 4);
  r->n_spans = sqlite3_column_int64 (st, 5);
  r->redactor_version = sqlite3_column_int64 (st, 6);
  r->source_updated_us = sqlite3_column_int64 (st, 7);
  r->created_us = sqlite3_column_int64 (st, 8);
  return r;
}

HzMessageRedaction *
hz_store_get_message_redaction (HzStore *store, gint64 message_id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " REDACTION_COLS " FROM message_redactions r JOIN messages m ON m.id = r.message_id"
    " WHERE r.message_id = ?", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, message_id);
  return hz_store_collect_one (store, st, redaction_from_row,
                               (GDestroyNotify) hz_message_redaction_free,
                               "reading a message redaction", error,
                               "message %" G_GINT64_FORMAT " has no redacted copy", message_id);
}

GArray *
hz_store_list_messages_to_redact (HzStore *store, gint64 redactor_version, guint limit,
                                  GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT m.id FROM messages m LEFT JOIN message_redactions r ON r.message_id = m.id"
    " WHERE m.complete = 1 AND (r.message_id IS NULL OR r.redactor_version < ?"
    "   OR r.source_updated_us < m.updated_us)"
    " ORDER BY m.id LIMIT ?", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, redactor_version);
  sqlite3_bind_int64 (st, 2, limit);
  GArray *ids = g_array_new (FALSE, FALSE, sizeof (gint64));
  int rc;
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      gint64 id = sqlite3_column_int64 (st, 0);
      g_array_append_val (ids, id);
    }
  hz_store_stmt_done (st);
  if (rc != SQLITE_DONE)
    {
      g_array_unref (ids);
      hz_store_set_sqlite_error (error, store->db, rc, "listing messages to redact");
      return NULL;
    }
  return ids;
}

GPtrArray *
hz_store_list_message_redactions (HzStore *store, gint64 conversation_id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT " REDACTION_COLS " FROM message_redactions r JOIN messages m ON m.id = r.message_id"
    " WHERE (?1 = 0 OR r.conversation_id = ?1) AND r.source_updated_us >= m.updated_us"
    " ORDER BY r.message_id", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, conversation_id);
  return hz_store_collect (store, st, redaction_from_row,
                           (GDestroyNotify) hz_message_redaction_free,
                           "listing message redactions", error);
}

gboolean
hz_store_vault_add (HzStore *store, gint64 conversation_id, const char *placeholder,
                    const char *entity_type, const char *original, GError **error)
{
  g_return_val_if_fail (store != NULL, FALSE);
  if (!hz_store_nonempty_utf8 (placeholder) || !hz_store_nonempty_utf8 (entity_type)
      || !hz_store_nonempty_utf8 (original))
    return hz_store_set_invalid (error, "vault entry: placeholder, type and original must be "
                                        "non-empty UTF-8");
  sqlite3_stmt *ex = hz_store_prepare (store,
    "SELECT original FROM redaction_vault WHERE conversation_id = ? AND placeholder = ?", error);
  if (!ex)
    return FALSE;
  sqlite3_stmt *st = hz_store_prepare_write (store,
    "INSERT INTO redaction_vault (conversation_id, placeholder, entity_type, original, created_us)"
    " SELECT id, ?, ?, ?, ? FROM conversations WHERE id = ?", error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (ex, 1, conversation_id);
  sqlite3_bind_text (ex, 2, placeholder, -1, SQLITE_STATIC);
  int rc = sqlite3_step (ex);
  gboolean ok = TRUE, exists = FALSE;
  if (rc == SQLITE_ROW)
    {
      exists = TRUE;
      if (g_strcmp0 ((const char *) sqlite3_column_text (ex, 0), original) != 0)
        ok = hz_store_set_invalid (error,
                                   "vault entry: the placeholder already stands for another text");
    }
  else if (rc != SQLITE_DONE)
    ok = hz_store_set_sqlite_error (error, store->db, rc, "reading the vault");
  hz_store_stmt_done (ex);
  if (ok && !exists)
    {
      sqlite3_bind_text (st, 1, placeholder, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 2, entity_type, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 3, original, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (st, 4, g_get_real_time ());
      sqlite3_bind_int64 (st, 5, conversation_id);
      ok = hz_store_step_write_found (store, st, "adding a vault entry", "conversation",
                                      conversation_id, error);
    }
  else
    hz_store_stmt_done (st);
  return hz_store_write_end (store, ok, error);
}

static gpointer
vault_from_row (sqlite3_stmt *st)
{
  HzVaultEntry *e = g_new0 (HzVaultEntry, 1);
  e->conversation_id = sqlite3_column_int64 (st, 0);
  e->placeholder = hz_store_column_text (st, 1);
  e->entity_type = hz_store_column_text (st, 2);
  e->original = hz_store_column_text (st, 3);
  e->created_us = sqlite3_column_int64 (st, 4);
  return e;
}

GPtrArray *
hz_store_vault_list (HzStore *store, gint64 conversation_id, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store,
    "SELECT conversation_id, placeholder, entity_type, original, created_us FROM redaction_vault"
    " WHERE conversation_id = ? ORDER BY created_us, rowid", error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, conversation_id);
  return hz_store_collect (store, st, vault_from_row, (GDestroyNotify) hz_vault_entry_free,
                           "listing the vault", error);
}
