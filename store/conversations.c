/* conversations.c — conversations and their messages (hanzo-store.h; tables in schema.c,
 * migration 1): records, create, read, list, rename, pin, delete, append, update. */
#include "store-private.h"

#include <math.h>

/* ================================================================= records */

void
hz_conversation_free (HzConversation *conv)
{
  if (conv)
    hz_store_free_record (conv, 3, conv->title, conv->system_prompt, conv->model_path);
}

void
hz_message_free (HzMessage *msg)
{
  if (msg)
    hz_store_free_record (msg, 3, msg->content, msg->model_sha256, msg->reasoning);
}

/* ================================================================= conversations */

#define CONVERSATION_COLUMNS \
  "id, title, system_prompt, model_path, created_us, updated_us, pinned"

static HzConversation *
conversation_from_row (sqlite3_stmt *st)
{
  HzConversation *c = g_new0 (HzConversation, 1);
  c->id = sqlite3_column_int64 (st, 0);
  c->title = hz_store_column_text (st, 1);
  c->system_prompt = hz_store_column_text_or_null (st, 2);
  c->model_path = hz_store_column_text_or_null (st, 3);
  c->created_us = sqlite3_column_int64 (st, 4);
  c->updated_us = sqlite3_column_int64 (st, 5);
  c->pinned = sqlite3_column_int (st, 6) != 0;
  return c;
}

gint64
hz_store_create_conversation (HzStore *store, const char *title, const char *system_prompt,
                              const char *model_path, GError **error)
{
  static const char sql[] =
    "INSERT INTO conversations (title, system_prompt, model_path, created_us, updated_us)"
    " VALUES (?1, ?2, ?3, ?4, ?4)";
  if (!hz_store_check_utf8 (title, "the title", error) ||
      !hz_store_check_utf8 (system_prompt, "the system prompt", error) ||
      !hz_store_check_utf8 (model_path, "the model path", error))
    return 0;
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return 0;
  hz_store_bind_text_or_null (st, 1, title ? title : "");
  hz_store_bind_text_or_null (st, 2, system_prompt);
  hz_store_bind_text_or_null (st, 3, model_path);
  sqlite3_bind_int64 (st, 4, g_get_real_time ());
  gboolean ok = hz_store_step_write (store, st, "creating a conversation", error);
  gint64 id = sqlite3_last_insert_rowid (store->db);
  return hz_store_write_end (store, ok, error) ? id : 0;
}

HzConversation *
hz_store_get_conversation (HzStore *store, gint64 id, GError **error)
{
  static const char sql[] = "SELECT " CONVERSATION_COLUMNS " FROM conversations WHERE id = ?1";
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  return hz_store_collect_one (store, st, (HzRowFunc) conversation_from_row,
                               (GDestroyNotify) hz_conversation_free, "reading a conversation",
                               error, "no conversation with id %" G_GINT64_FORMAT, id);
}

GPtrArray *
hz_store_list_conversations (HzStore *store, GError **error)
{
  static const char sql[] = "SELECT " CONVERSATION_COLUMNS " FROM conversations"
                            " ORDER BY pinned DESC, updated_us DESC, id DESC";
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return NULL;
  return hz_store_collect (store, st, (HzRowFunc) conversation_from_row,
                           (GDestroyNotify) hz_conversation_free, "listing conversations",
                           error);
}

/* UPDATE conversations SET <column> = ?2 [, updated_us = now] WHERE id = ?1 */
static gboolean
conversation_set_text (HzStore *store, const char *sql, gint64 id, const char *value,
                       const char *field, GError **error)
{
  if (!hz_store_check_utf8 (value, field, error))
    return FALSE;
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  hz_store_bind_text_or_null (st, 2, value);
  sqlite3_bind_int64 (st, 3, g_get_real_time ());
  g_autofree char *what = g_strdup_printf ("setting %s", field);
  gboolean ok = hz_store_step_write_found (store, st, what, "conversation with id", id, error);
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_rename_conversation (HzStore *store, gint64 id, const char *title, GError **error)
{
  return conversation_set_text (store,
    "UPDATE conversations SET title = ?2, updated_us = ?3 WHERE id = ?1",
    id, title ? title : "", "the title", error);
}

gboolean
hz_store_set_conversation_system_prompt (HzStore *store, gint64 id, const char *system_prompt,
                                         GError **error)
{
  return conversation_set_text (store,
    "UPDATE conversations SET system_prompt = ?2, updated_us = ?3 WHERE id = ?1",
    id, system_prompt, "the system prompt", error);
}

gboolean
hz_store_set_conversation_model (HzStore *store, gint64 id, const char *model_path,
                                 GError **error)
{
  return conversation_set_text (store,
    "UPDATE conversations SET model_path = ?2, updated_us = ?3 WHERE id = ?1",
    id, model_path, "the model path", error);
}

/* Run `sql` (binding ?1 = id, ?2 = int_arg) as one write; NOT_FOUND "no <kind> <id>" if no
 * row changed. */
static gboolean
write_by_id (HzStore *store, const char *sql, gint64 id, gint64 int_arg, const char *kind,
             const char *what, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  if (sqlite3_bind_parameter_count (st) >= 2)
    sqlite3_bind_int64 (st, 2, int_arg);
  gboolean ok = hz_store_step_write_found (store, st, what, kind, id, error);
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_set_conversation_pinned (HzStore *store, gint64 id, gboolean pinned, GError **error)
{
  return write_by_id (store, "UPDATE conversations SET pinned = ?2 WHERE id = ?1",
                      id, pinned ? 1 : 0, "conversation with id", "pinning a conversation", error);
}

gboolean
hz_store_delete_conversation (HzStore *store, gint64 id, GError **error)
{
  return write_by_id (store, "DELETE FROM conversations WHERE id = ?1", id, 0,
                      "conversation with id", "deleting a conversation", error);
}

/* ================================================================= messages */

#define MESSAGE_COLUMNS \
  "id, conversation_id, parent_id, role, content, model_sha256, created_us, updated_us," \
  " n_tokens, ttft_s, tokens_per_s, complete," \
  " coalesce ((SELECT reasoning FROM message_reasoning WHERE message_id = messages.id), '')"

static HzMessage *
message_from_row (sqlite3_stmt *st)
{
  HzMessage *m = g_new0 (HzMessage, 1);
  m->id = sqlite3_column_int64 (st, 0);
  m->conversation_id = sqlite3_column_int64 (st, 1);
  m->parent_id = sqlite3_column_int64 (st, 2);  /* NULL reads as 0 */
  m->role = hz_store_column_role (st, 3);  /* never unknown: CHECK constraint */
  m->content = hz_store_column_text (st, 4);
  m->model_sha256 = hz_store_column_text_or_null (st, 5);
  m->created_us = sqlite3_column_int64 (st, 6);
  m->updated_us = sqlite3_column_int64 (st, 7);
  m->n_tokens = sqlite3_column_int64 (st, 8);
  m->ttft_s = hz_store_column_double_or (st, 9, -1.0);
  m->tokens_per_s = hz_store_column_double_or (st, 10, -1.0);
  m->complete = sqlite3_column_int (st, 11) != 0;
  m->reasoning = hz_store_column_text (st, 12);
  return m;
}

/* Inside a write: the conversation exists and `parent_id` (if any) belongs to it. */
static gboolean
check_append_target (HzStore *store, gint64 conversation_id, gint64 parent_id, GError **error)
{
  static const char sql[] =
    "SELECT (SELECT count(*) FROM conversations WHERE id = ?1),"
    "       (SELECT conversation_id FROM messages WHERE id = ?2)";
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, conversation_id);
  sqlite3_bind_int64 (st, 2, parent_id);
  int rc = sqlite3_step (st);
  gboolean conv_exists = rc == SQLITE_ROW && sqlite3_column_int64 (st, 0) > 0;
  gint64 parent_conv = rc == SQLITE_ROW ? sqlite3_column_int64 (st, 1) : 0;
  hz_store_stmt_done (st);
  if (rc != SQLITE_ROW)
    return hz_store_set_sqlite_error (error, store->db, rc, "appending a message");
  if (!conv_exists)
    return hz_store_set_not_found (error, "conversation with id", conversation_id);
  if (parent_id != 0 && parent_conv != conversation_id)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "parent message %" G_GINT64_FORMAT " is not in conversation %"
                   G_GINT64_FORMAT, parent_id, conversation_id);
      return FALSE;
    }
  return TRUE;
}

gint64
hz_store_append_message (HzStore *store, gint64 conversation_id, gint64 parent_id,
                         HzRole role, const char *content, const char *model_sha256,
                         gboolean complete, GError **error)
{
  static const char insert_sql[] =
    "INSERT INTO messages (conversation_id, parent_id, role, content, model_sha256,"
    "                      created_us, updated_us, complete)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)";
  static const char touch_sql[] = "UPDATE conversations SET updated_us = ?2 WHERE id = ?1";
  const char *role_name = hz_role_to_string (role);

  if (!role_name)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID, "unknown role %d", role);
      return 0;
    }
  if (!content)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "message content is NULL (use \"\" for an empty message)");
      return 0;
    }
  if (!hz_store_check_utf8 (content, "the message content", error) ||
      !hz_store_check_utf8 (model_sha256, "the model sha256", error))
    return 0;

  sqlite3_stmt *ins = hz_store_prepare (store, insert_sql, error);
  sqlite3_stmt *touch = ins ? hz_store_prepare (store, touch_sql, error) : NULL;
  if (!touch || !hz_store_write_begin (store, error))
    return 0;

  gint64 now = g_get_real_time ();
  gint64 id = 0;
  gboolean ok = check_append_target (store, conversation_id, parent_id, error);
  if (ok)
    {
      sqlite3_bind_int64 (ins, 1, conversation_id);
      if (parent_id != 0)
        sqlite3_bind_int64 (ins, 2, parent_id);
      else
        sqlite3_bind_null (ins, 2);
      sqlite3_bind_text (ins, 3, role_name, -1, SQLITE_STATIC);
      sqlite3_bind_text (ins, 4, content, -1, SQLITE_TRANSIENT);
      hz_store_bind_text_or_null (ins, 5, model_sha256);
      sqlite3_bind_int64 (ins, 6, now);
      sqlite3_bind_int (ins, 7, complete ? 1 : 0);
      ok = hz_store_step_write (store, ins, "appending a message", error);
      id = sqlite3_last_insert_rowid (store->db);
    }
  if (ok)
    {
      sqlite3_bind_int64 (touch, 1, conversation_id);
      sqlite3_bind_int64 (touch, 2, now);
      ok = hz_store_step_write (store, touch, "appending a message", error);
    }
  return hz_store_write_end (store, ok, error) ? id : 0;
}

static gboolean
is_set (double v)
{
  return !isnan (v) && v >= 0.0;
}

gboolean
hz_store_update_message (HzStore *store, gint64 id, const char *content, gint64 n_tokens,
                         double ttft_s, double tokens_per_s, GError **error)
{
  return hz_store_update_reply (store, id, content, NULL, n_tokens, ttft_s, tokens_per_s,
                                error);
}

gboolean
hz_store_update_reply (HzStore *store, gint64 id, const char *content, const char *reasoning,
                       gint64 n_tokens, double ttft_s, double tokens_per_s, GError **error)
{
  static const char sql[] =
    "UPDATE messages SET content = coalesce (?2, content),"
    "                    n_tokens = coalesce (?3, n_tokens),"
    "                    ttft_s = coalesce (?4, ttft_s),"
    "                    tokens_per_s = coalesce (?5, tokens_per_s),"
    "                    updated_us = ?6"
    " WHERE id = ?1";
  static const char set_sql[] =
    "INSERT INTO message_reasoning (message_id, reasoning) VALUES (?1, ?2)"
    " ON CONFLICT (message_id) DO UPDATE SET reasoning = excluded.reasoning";
  static const char clear_sql[] = "DELETE FROM message_reasoning WHERE message_id = ?1";
  if (!hz_store_check_utf8 (content, "the message content", error) ||
      !hz_store_check_utf8 (reasoning, "the reasoning", error))
    return FALSE;
  sqlite3_stmt *r = NULL;
  if (reasoning && !(r = hz_store_prepare (store, *reasoning ? set_sql : clear_sql, error)))
    return FALSE;
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  hz_store_bind_text_or_null (st, 2, content);
  if (n_tokens >= 0)
    sqlite3_bind_int64 (st, 3, n_tokens);
  if (is_set (ttft_s))
    sqlite3_bind_double (st, 4, ttft_s);
  if (is_set (tokens_per_s))
    sqlite3_bind_double (st, 5, tokens_per_s);
  sqlite3_bind_int64 (st, 6, g_get_real_time ());
  gboolean ok = hz_store_step_write_found (store, st, "updating a message", "message with id", id, error);
  if (ok && r)
    {
      sqlite3_bind_int64 (r, 1, id);
      if (*reasoning)
        sqlite3_bind_text (r, 2, reasoning, -1, SQLITE_TRANSIENT);
      ok = hz_store_step_write (store, r, "storing a reply's reasoning", error);
    }
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_set_message_complete (HzStore *store, gint64 id, GError **error)
{
  return write_by_id (store, "UPDATE messages SET complete = 1, updated_us = ?2 WHERE id = ?1",
                      id, g_get_real_time (), "message with id", "completing a message", error);
}

HzMessage *
hz_store_get_message (HzStore *store, gint64 id, GError **error)
{
  static const char sql[] = "SELECT " MESSAGE_COLUMNS " FROM messages WHERE id = ?1";
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, id);
  return hz_store_collect_one (store, st, (HzRowFunc) message_from_row,
                               (GDestroyNotify) hz_message_free, "reading a message", error,
                               "no message with id %" G_GINT64_FORMAT, id);
}

GPtrArray *
hz_store_list_messages (HzStore *store, gint64 conversation_id, GError **error)
{
  static const char sql[] = "SELECT " MESSAGE_COLUMNS " FROM messages"
                            " WHERE conversation_id = ?1 ORDER BY id";
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return NULL;
  sqlite3_bind_int64 (st, 1, conversation_id);
  return hz_store_collect (store, st, (HzRowFunc) message_from_row,
                           (GDestroyNotify) hz_message_free, "listing messages", error);
}

gboolean
hz_store_delete_message (HzStore *store, gint64 id, GError **error)
{
  return write_by_id (store, "DELETE FROM messages WHERE id = ?1", id, 0,
                      "message with id", "deleting a message", error);
}
