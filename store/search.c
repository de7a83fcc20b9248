/* search.c — full-text search over the messages (hanzo-store.h; the FTS5 table and its
 * triggers in schema.c, migration 2). */
#include "store-private.h"

void
hz_search_hit_free (HzSearchHit *hit)
{
  if (hit)
    hz_store_free_record (hit, 1, hit->snippet);
}

static gboolean
has_word_char (const char *word)
{
  for (const char *p = word; *p; p = g_utf8_next_char (p))
    if (g_unichar_isalnum (g_utf8_get_char (p)))
      return TRUE;
  return FALSE;
}

/* Plain text -> FTS5 query: each word a quoted string (quotes doubled), all required,
 * the last one a prefix. NULL when there is no searchable word. */
static char *
build_fts_query (const char *text)
{
  g_auto (GStrv) words = g_strsplit_set (text, " \t\r\n\f\v", -1);
  GString *q = g_string_new (NULL);
  for (guint i = 0; words[i]; i++)
    {
      if (!has_word_char (words[i]))
        continue;
      g_autofree char *body = NULL;
      g_auto (GStrv) parts = g_strsplit (words[i], "\"", -1);
      body = g_strjoinv ("\"\"", parts);
      if (q->len)
        g_string_append_c (q, ' ');
      g_string_append_printf (q, "\"%s\"", body);
    }
  if (q->len == 0)
    {
      g_string_free (q, TRUE);
      return NULL;
    }
  g_string_append_c (q, '*');
  return g_string_free (q, FALSE);
}

static HzSearchHit *
search_hit_from_row (sqlite3_stmt *st)
{
  HzSearchHit *h = g_new0 (HzSearchHit, 1);
  h->message_id = sqlite3_column_int64 (st, 0);
  h->conversation_id = sqlite3_column_int64 (st, 1);
  h->snippet = hz_store_column_text (st, 2);
  h->rank = sqlite3_column_double (st, 3);
  return h;
}

GPtrArray *
hz_store_search_messages (HzStore *store, const char *query, int limit, GError **error)
{
  static const char sql[] =
    "SELECT m.id, m.conversation_id,"
    "       snippet (messages_fts, 0, char (2), char (3), '…', 16), messages_fts.rank"
    " FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid"
    " WHERE messages_fts MATCH ?1 ORDER BY messages_fts.rank, m.id DESC LIMIT ?2";
  if (!hz_store_check_utf8 (query, "the search query", error))
    return NULL;
  g_autofree char *fts = build_fts_query (query ? query : "");
  if (!fts)
    return g_ptr_array_new_with_free_func ((GDestroyNotify) hz_search_hit_free);
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st)
    return NULL;
  sqlite3_bind_text (st, 1, fts, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int (st, 2, limit > 0 ? limit : 50);
  return hz_store_collect (store, st, (HzRowFunc) search_hit_from_row,
                           (GDestroyNotify) hz_search_hit_free, "searching messages", error);
}
