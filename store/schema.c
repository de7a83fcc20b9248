/* schema.c — the store's schema as a list of forward migrations.
 *
 * Rules (see store/README.md): migration N takes user_version N-1 to N; a released
 * migration is never edited, only followed by a new one; each runs in one BEGIN IMMEDIATE
 * transaction together with the PRAGMA user_version bump, so a crash leaves the file at
 * either the old or the new version. */
#include "schema.h"

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

/* v3: privacy ledger and egress log (issue 8; accessors in privacy.c). An upload row of
 * the log must reference its release's ledger row. IF NOT EXISTS: a file taken back to an
 * older user_version by hand (tests do) may still hold these tables. */
static const char migration_3[] =
  "CREATE TABLE IF NOT EXISTS privacy_ledger ("
  "  id               INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  time_us          INTEGER NOT NULL,"
  "  mechanism        TEXT    NOT NULL CHECK (mechanism IN ('gaussian-release', 'dp-sgd')),"
  "  q                REAL    NOT NULL CHECK (q > 0 AND q <= 1),"
  "  noise_multiplier REAL    NOT NULL CHECK (noise_multiplier > 0),"
  "  clip_norm        REAL    NOT NULL CHECK (clip_norm > 0),"
  "  steps            INTEGER NOT NULL CHECK (steps >= 1),"
  "  orders           BLOB    NOT NULL,"
  "  rdp              BLOB    NOT NULL,"
  "  epsilon          REAL,"
  "  delta            REAL    NOT NULL CHECK (delta > 0 AND delta < 1),"
  "  release_id       TEXT    UNIQUE,"
  "  round_id         INTEGER NOT NULL DEFAULT 0,"
  "  payload_sha256   TEXT,"
  "  CHECK ((mechanism = 'gaussian-release') = (release_id IS NOT NULL))"
  ");"
  "CREATE INDEX IF NOT EXISTS privacy_ledger_by_time ON privacy_ledger (time_us, id);"
  "CREATE TABLE IF NOT EXISTS egress_log ("
  "  id             INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  time_us        INTEGER NOT NULL,"
  "  direction      TEXT    NOT NULL CHECK (direction IN ('upload', 'download')),"
  "  endpoint       TEXT    NOT NULL,"
  "  bytes          INTEGER NOT NULL CHECK (bytes >= 0),"
  "  payload_sha256 TEXT,"
  "  epsilon        REAL,"
  "  status         TEXT    NOT NULL"
  "                 CHECK (status IN ('ok', 'retry', 'rejected', 'failed', 'cancelled')),"
  "  http_status    INTEGER NOT NULL DEFAULT 0,"
  "  release_id     TEXT    REFERENCES privacy_ledger (release_id),"
  "  round_id       INTEGER NOT NULL DEFAULT 0,"
  "  attempt        INTEGER NOT NULL DEFAULT 1,"
  "  message        TEXT,"
  "  CHECK (direction = 'download' OR release_id IS NOT NULL)"
  ");"
  "CREATE INDEX IF NOT EXISTS egress_log_by_time ON egress_log (time_us, id);"
  "CREATE INDEX IF NOT EXISTS egress_log_by_release ON egress_log (release_id) WHERE release_id IS NOT NULL;";

/* v4: redacted copies of messages and the redaction vault (issue 6; accessors in
 * redactions.c). Both go with their conversation; a redacted copy goes with its message. */
static const char migration_4[] =
  "CREATE TABLE IF NOT EXISTS message_redactions ("
  "  message_id        INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,"
  "  conversation_id   INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,"
  "  redacted          TEXT    NOT NULL CHECK (typeof (redacted) = 'text'),"
  "  spans             TEXT    NOT NULL DEFAULT '[]',"
  "  n_spans           INTEGER NOT NULL DEFAULT 0 CHECK (n_spans >= 0),"
  "  redactor_version  INTEGER NOT NULL CHECK (redactor_version >= 1),"
  "  source_updated_us INTEGER NOT NULL,"
  "  created_us        INTEGER NOT NULL"
  ");"
  "CREATE INDEX IF NOT EXISTS message_redactions_by_conversation"
  "  ON message_redactions (conversation_id, message_id);"
  "CREATE TABLE IF NOT EXISTS redaction_vault ("
  "  conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,"
  "  placeholder     TEXT    NOT NULL CHECK (length (placeholder) > 0),"
  "  entity_type     TEXT    NOT NULL,"
  "  original        TEXT    NOT NULL CHECK (length (original) > 0),"
  "  created_us      INTEGER NOT NULL,"
  "  PRIMARY KEY (conversation_id, placeholder)"
  ");";

/* v5: message ratings and message alternatives (issue 9; accessors in feedback.c, see
 * hanzo-store-feedback.h). Also chains user messages written before alternatives existed
 * (no parent after the first message) to the message before them. */
static const char migration_5[] =
  "CREATE TABLE IF NOT EXISTS message_feedback ("
  "  message_id      INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,"
  "  conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,"
  "  rating          INTEGER NOT NULL CHECK (rating IN (-1, 1)),"
  "  created_us      INTEGER NOT NULL,"
  "  updated_us      INTEGER NOT NULL"
  ");"
  "CREATE INDEX IF NOT EXISTS message_feedback_by_time ON message_feedback (updated_us, message_id);"
  "CREATE INDEX IF NOT EXISTS message_feedback_by_conversation"
  "  ON message_feedback (conversation_id, message_id);"
  "UPDATE messages SET parent_id = (SELECT max (p.id) FROM messages p"
  "    WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id)"
  "  WHERE role = 'user' AND parent_id IS NULL AND EXISTS (SELECT 1 FROM messages p"
  "    WHERE p.conversation_id = messages.conversation_id AND p.id < messages.id);";

/* v6: learner runs and adapters (issue 7; accessors in learner-runs.c, see
 * hanzo-store-learner.h). At most one active adapter (partial unique index). */
static const char migration_6[] =
  "CREATE TABLE IF NOT EXISTS adapters ("
  "  id           INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  path         TEXT    NOT NULL UNIQUE CHECK (length (path) > 0),"
  "  base_sha256  TEXT    NOT NULL DEFAULT '',"
  "  run_id       INTEGER,"
  "  heldout_loss REAL,"
  "  created_us   INTEGER NOT NULL,"
  "  active       INTEGER NOT NULL DEFAULT 0 CHECK (active IN (0, 1))"
  ");"
  "CREATE UNIQUE INDEX IF NOT EXISTS adapters_one_active ON adapters (active) WHERE active = 1;"
  "CREATE TABLE IF NOT EXISTS learner_runs ("
  "  id             INTEGER PRIMARY KEY AUTOINCREMENT,"
  "  kind           TEXT    NOT NULL CHECK (length (kind) > 0),"
  "  base_sha256    TEXT    NOT NULL DEFAULT '',"
  "  started_us     INTEGER NOT NULL,"
  "  finished_us    INTEGER,"
  "  status         TEXT    NOT NULL CHECK (status IN"
  "                 ('running', 'promoted', 'rejected', 'interrupted', 'failed')),"
  "  steps          INTEGER NOT NULL DEFAULT 0 CHECK (steps >= 0),"
  "  train_loss     REAL,"
  "  heldout_before REAL,"
  "  heldout_after  REAL,"
  "  adapter_id     INTEGER REFERENCES adapters (id) ON DELETE SET NULL,"
  "  message        TEXT"
  ");"
  "CREATE INDEX IF NOT EXISTS learner_runs_by_start ON learner_runs (started_us, id);";

/* v7: how a reply was limited (issue 20; accessors in reply-limits.c, see
 * hanzo-store-limits.h): a row per reply that stopped at its token limit (cut) or was
 * written without seeing the oldest messages of its branch (n_unseen). A table of its own,
 * as message_feedback, so that files taken back to an older user_version by hand (tests
 * do) migrate again. */
static const char migration_7[] =
  "CREATE TABLE IF NOT EXISTS message_limits ("
  "  message_id      INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,"
  "  conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,"
  "  cut             INTEGER NOT NULL DEFAULT 0 CHECK (cut IN (0, 1)),"
  "  n_unseen        INTEGER NOT NULL DEFAULT 0 CHECK (n_unseen >= 0)"
  ");"
  "CREATE INDEX IF NOT EXISTS message_limits_by_conversation"
  "  ON message_limits (conversation_id, message_id);";

/* v8: what a request of the model download channel was for (issue 27; egress/hub.h,
 * accessors in privacy.c, HzEgressPurpose): one row per egress_log row of that channel,
 * with its purpose and subject (the search text, the repository, the repository's file);
 * federation rows have none. A table of its own rather than new egress_log columns, as
 * message_limits, so that files taken back to an older user_version migrate again. */
static const char migration_8[] =
  "CREATE TABLE IF NOT EXISTS egress_purpose ("
  "  log_id  INTEGER PRIMARY KEY REFERENCES egress_log (id) ON DELETE CASCADE,"
  "  purpose TEXT    NOT NULL"
  "          CHECK (purpose IN ('model-search', 'model-files', 'model-download')),"
  "  subject TEXT    NOT NULL CHECK (length (subject) > 0)"
  ");";

/* v9: the reasoning part of a thinking model's reply (issue 23: "<think>…</think>", harmony's
 * analysis channel), kept apart from messages.content, which holds the answer only: one
 * row per reply that has reasoning. A table of its own (not a column of messages), so
 * that a file taken back to an older user_version migrates again. */
static const char migration_9[] =
  "CREATE TABLE IF NOT EXISTS message_reasoning ("
  "  message_id INTEGER PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,"
  "  reasoning  TEXT    NOT NULL"
  "             CHECK (typeof (reasoning) = 'text' AND length (reasoning) > 0)"
  ");";

/* migrations[i] takes user_version i to i + 1. */
static const char *const migrations[] = {
  migration_1,
  migration_2,
  migration_3,
  migration_4,
  migration_5,
  migration_6,
  migration_7,
  migration_8,
  migration_9,
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
