/* schema.c — the store's schema as a list of forward migrations.
 *
 * Rules (see store/README.md): migration N takes user_version N-1 to N; a released
 * migration is never edited, only followed by a new one; each runs in one BEGIN IMMEDIATE
 * transaction together with the PRAGMA user_version bump, so a crash leaves the file at
 * either the old or the new version. */
#include "store-private.h"

/* v1: conversations and messages. */
static const char migration_1[] =
  "CREATE TABLE conversations ("
  "  id            INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  title         TEXT    NOT NULL DEFAULT '',"
  "  system_prompt TEXT,"
  "  model_path    TEXT,"
  "  created_us    INTEGER NOT NULL,"
  "  updated_us    INTEGER NOT NULL,"
  "  pinned        INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1))"
  ");"
  "CREATE INDEX conversations_by_order ON conversations (pinned DESC, updated_us DESC, id DESC);"
  "CREATE TABLE messages ("
  "  id              INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,"
  "  parent_id       INTEGER REFERENCES messages (id) ON DELETE SET NULL,"
  "  role            TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),"
  "  content         TEXT    NOT NULL DEFAULT '' CHECK (typeof (content) = 'text'),"
  "  model_sha256    TEXT,"
  "  created_us      INTEGER NOT NULL,"
  "  updated_us      INTEGER NOT NULL,"
  "  n_tokens        INTEGER NOT NULL DEFAULT 0 CHECK (n_tokens >= 0),"
  "  ttft_s          REAL,"
  "  tokens_per_s    REAL,"
  "  complete        INTEGER NOT NULL DEFAULT 1 CHECK (complete IN (0, 1))"
  ");"
  "CREATE INDEX messages_by_conversation ON messages (conversation_id, id);"
  "CREATE INDEX messages_by_parent ON messages (parent_id) WHERE parent_id IS NOT NULL;";

/* v2: full-text search over message contents (external-content FTS5 kept in sync by
 * triggers; cascade deletes fire the delete trigger too). */
static const char migration_2[] =
  "CREATE VIRTUAL TABLE messages_fts USING fts5 ("
  "  content, content = 'messages', content_rowid = 'id',"
  "  tokenize = 'unicode61 remove_diacritics 2'"
  ");"
  "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild');"
  "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN"
  "  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);"
  "END;"
  "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN"
  "  INSERT INTO messages_fts (messages_fts, rowid, content)"
  "    VALUES ('delete', old.id, old.content);"
  "END;"
  "CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages"
  "  WHEN old.content IS NOT new.content BEGIN"
  "  INSERT INTO messages_fts (messages_fts, rowid, content)"
  "    VALUES ('delete', old.id, old.content);"
  "  INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);"
  "END;";

/* migrations[i] takes user_version i to i + 1. */
static const char *const migrations[] = {
  migration_1,
  migration_2,
};

G_STATIC_ASSERT (G_N_ELEMENTS (migrations) == HZ_STORE_SCHEMA_VERSION);

/* One step under the write lock. *done is set when nothing was left to do. */
static gboolean
migrate_step (HzStore *store, gboolean *done, GError **error)
{
  gint64 version = 0;
  gboolean ok = TRUE;

  if (!hz_store_exec (store, "BEGIN IMMEDIATE", error))
    return FALSE;

  ok = hz_store_query_int (store->db, "PRAGMA user_version", &version, error);
  if (ok && version > HZ_STORE_SCHEMA_VERSION)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_TOO_NEW,
                   "%s was written by a newer version of Hanzo (schema %" G_GINT64_FORMAT
                   ", this version understands up to %d); it was not modified",
                   store->path, version, HZ_STORE_SCHEMA_VERSION);
      ok = FALSE;
    }
  if (ok && version == HZ_STORE_SCHEMA_VERSION)
    {
      store->schema_version = (int) version;
      *done = TRUE;
      ok = hz_store_exec (store, "COMMIT", error);
      if (!ok)
        hz_store_exec (store, "ROLLBACK", NULL);
      return ok;
    }
  if (ok && version == 0)
    {
      g_autofree char *sql = g_strdup_printf ("PRAGMA application_id = %d",
                                              HZ_STORE_APPLICATION_ID);
      ok = hz_store_exec (store, sql, error);
    }
  if (ok)
    {
      g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %d", (int) version + 1);
      GError *local = NULL;
      ok = hz_store_exec (store, migrations[version], &local) &&
           hz_store_exec (store, bump, &local) &&
           hz_store_exec (store, "COMMIT", &local);
      if (!ok)
        g_propagate_prefixed_error (error, local, "migrating %s to schema %d: ",
                                    store->path, (int) version + 1);
    }
  if (!ok)
    {
      if (!sqlite3_get_autocommit (store->db))
        hz_store_exec (store, "ROLLBACK", NULL);
      return FALSE;
    }
  store->schema_version = (int) version + 1;
  *done = FALSE;
  return TRUE;
}

gboolean
hz_schema_migrate (HzStore *store, GError **error)
{
  gboolean done = FALSE;

  while (!done)
    if (!migrate_step (store, &done, error))
      return FALSE;
  return TRUE;
}
