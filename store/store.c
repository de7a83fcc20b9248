/* store.c — opening the store, errors, statements, transactions and typed accessors. */
#include "store-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK (hz-store-error-quark, hz_store_error)

/* ================================================================= errors */

HzStoreError
hz_store_error_from_sqlite (int rc)
{
  switch (rc & 0xff)
    {
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return HZ_STORE_ERROR_CORRUPT;
    case SQLITE_FULL:
      return HZ_STORE_ERROR_FULL;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return HZ_STORE_ERROR_BUSY;
    case SQLITE_READONLY:
      return HZ_STORE_ERROR_READONLY;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_PERM:
      return HZ_STORE_ERROR_IO;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return HZ_STORE_ERROR_INVALID;
    default:
      return HZ_STORE_ERROR_FAILED;
    }
}

gboolean
hz_store_set_sqlite_error (GError **error, sqlite3 *db, int rc, const char *what)
{
  const char *msg = db ? sqlite3_errmsg (db) : sqlite3_errstr (rc);
  HzStoreError code = hz_store_error_from_sqlite (rc);

  if (code == HZ_STORE_ERROR_FULL)
    g_set_error (error, HZ_STORE_ERROR, code,
                 "%s: the disk is full (%s); nothing was written", what, msg);
  else
    g_set_error (error, HZ_STORE_ERROR, code, "%s: %s", what, msg);
  return FALSE;
}

static gboolean
check_utf8 (const char *s, const char *field, GError **error)
{
  if (s == NULL || g_utf8_validate (s, -1, NULL))
    return TRUE;
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
               "%s is not valid UTF-8; nothing was written", field);
  return FALSE;
}

/* (store.c's own wording: "no <what> with id <id>") */
static gboolean
set_not_found (GError **error, const char *what, gint64 id)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND,
               "no %s with id %" G_GINT64_FORMAT, what, id);
  return FALSE;
}

/* ================================================================= roles */

static const char *const role_names[] = {
  [HZ_ROLE_SYSTEM] = "system",
  [HZ_ROLE_USER] = "user",
  [HZ_ROLE_ASSISTANT] = "assistant",
};

HZ_STORE_DEFINE_ENUM_STRINGS (HzRole, hz_role_to_string, hz_role_from_string, role_names)

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
    hz_store_free_record (msg, 2, msg->content, msg->model_sha256);
}

void
hz_search_hit_free (HzSearchHit *hit)
{
  if (hit)
    hz_store_free_record (hit, 1, hit->snippet);
}

/* ================================================================= statements */

gboolean
hz_store_exec (HzStore *store, const char *sql, GError **error)
{
  int rc = sqlite3_exec (store->db, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK)
    return hz_store_set_sqlite_error (error, store->db, rc, "executing SQL");
  return TRUE;
}

gboolean
hz_store_query_int (sqlite3 *db, const char *sql, gint64 *out, GError **error)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &st, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (st);
      if (rc == SQLITE_ROW)
        {
          *out = sqlite3_column_int64 (st, 0);
          rc = SQLITE_OK;
        }
      else if (rc == SQLITE_DONE)
        rc = SQLITE_ERROR;
    }
  if (rc != SQLITE_OK)
    hz_store_set_sqlite_error (error, db, rc, "reading the database");
  sqlite3_finalize (st);
  return rc == SQLITE_OK;
}

sqlite3_stmt *
hz_store_prepare (HzStore *store, const char *sql, GError **error)
{
  sqlite3_stmt *st = g_hash_table_lookup (store->stmts, sql);
  if (st)
    return st;
  int rc = sqlite3_prepare_v3 (store->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL);
  if (rc != SQLITE_OK)
    {
      hz_store_set_sqlite_error (error, store->db, rc, "preparing a statement");
      return NULL;
    }
  g_hash_table_insert (store->stmts, (gpointer) sql, st);
  return st;
}

void
hz_store_stmt_done (sqlite3_stmt *st)
{
  sqlite3_reset (st);
  sqlite3_clear_bindings (st);
}

/* Step a write statement to completion; returns FALSE with `error` set on failure. When
 * `kind` is set, a statement that changed no row gives HZ_STORE_ERROR_NOT_FOUND. */
static gboolean
step_write (HzStore *store, sqlite3_stmt *st, const char *what, const char *kind,
            gint64 id, GError **error)
{
  if (!hz_store_step_write (store, st, what, error))
    return FALSE;
  if (kind && sqlite3_changes (store->db) == 0)
    return set_not_found (error, kind, id);
  return TRUE;
}

/* ================================================================= transactions */

gboolean
hz_store_write_begin (HzStore *store, GError **error)
{
  if (store->in_txn && store->txn_aborted)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "the transaction was rolled back after an earlier error; "
                   "call hz_store_rollback() and start again");
      return FALSE;
    }
  return hz_store_exec (store, store->in_txn ? "SAVEPOINT hz_write" : "BEGIN IMMEDIATE",
                        error);
}

gboolean
hz_store_write_end (HzStore *store, gboolean ok, GError **error)
{
  if (ok)
    {
      GError *local = NULL;
      if (hz_store_exec (store, store->in_txn ? "RELEASE hz_write" : "COMMIT", &local))
        return TRUE;
      g_propagate_error (error, local);
    }
  else if (error && *error == NULL)
    g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED, "write failed");

  /* SQLite may already have rolled the whole transaction back (FULL, IOERR, ...). */
  if (sqlite3_get_autocommit (store->db))
    {
      if (store->in_txn)
        store->txn_aborted = TRUE;
    }
  else if (store->in_txn)
    hz_store_exec (store, "ROLLBACK TO hz_write; RELEASE hz_write", NULL);
  else
    hz_store_exec (store, "ROLLBACK", NULL);
  return FALSE;
}

gboolean
hz_store_begin (HzStore *store, GError **error)
{
  if (store->in_txn)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
                   "a transaction is already open (transactions do not nest)");
      return FALSE;
    }
  if (!hz_store_exec (store, "BEGIN IMMEDIATE", error))
    return FALSE;
  store->in_txn = TRUE;
  store->txn_aborted = FALSE;
  return TRUE;
}

gboolean
hz_store_commit (HzStore *store, GError **error)
{
  if (!store->in_txn)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID, "no transaction is open");
      return FALSE;
    }
  if (store->txn_aborted)
    {
      store->in_txn = store->txn_aborted = FALSE;
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED,
                   "the transaction was rolled back after an earlier error; "
                   "nothing was written");
      return FALSE;
    }
  store->in_txn = FALSE;
  if (hz_store_exec (store, "COMMIT", error))
    return TRUE;
  if (!sqlite3_get_autocommit (store->db))
    hz_store_exec (store, "ROLLBACK", NULL);
  return FALSE;
}

void
hz_store_rollback (HzStore *store)
{
  if (!store->in_txn)
    return;
  store->in_txn = store->txn_aborted = FALSE;
  if (!sqlite3_get_autocommit (store->db))
    hz_store_exec (store, "ROLLBACK", NULL);
}

/* ================================================================= open / close */

char *
hz_store_default_path (void)
{
  return g_build_filename (g_get_user_data_dir (), "hanzo", "hanzo.db", NULL);
}

/* Refuse, before SQLite reads the file (a "hot journal" next to it would be rolled back
 * into it), an existing non-empty file that is not SQLite. The 16 bytes of the header are
 * read with SQLite's own descriptor of the file (SQLITE_FCNTL_FILE_POINTER, xRead), never
 * with one of our own: see "One descriptor per database file" in store-private.h. */
static gboolean
check_sqlite_header (HzStore *store, GError **error)
{
  static const char magic[16] = "SQLite format 3";  /* includes the final NUL */
  char head[16];
  sqlite3_file *file = NULL;
  sqlite3_int64 size = 0;
  int rc = sqlite3_file_control (store->db, "main", SQLITE_FCNTL_FILE_POINTER, &file);
  if (rc == SQLITE_OK && (file == NULL || file->pMethods == NULL))
    rc = SQLITE_CANTOPEN;
  if (rc == SQLITE_OK)
    rc = file->pMethods->xFileSize (file, &size);
  if (rc == SQLITE_OK && size == 0)
    return TRUE;  /* empty file: initialised as a new database */
  if (rc == SQLITE_OK)
    rc = file->pMethods->xRead (file, head, sizeof head, 0);
  if (rc == SQLITE_IOERR_SHORT_READ ||
      (rc == SQLITE_OK && memcmp (head, magic, sizeof magic) != 0))
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT,
                   "%s is not a Hanzo database (not an SQLite file); it was left untouched",
                   store->path);
      return FALSE;
    }
  if (rc != SQLITE_OK)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_IO, "cannot read %s: %s",
                   store->path, sqlite3_errstr (rc));
      return FALSE;
    }
  return TRUE;
}

/* Read-only checks before anything is written: the file parses, is ours, is not newer. */
static gboolean
check_identity (HzStore *store, GError **error)
{
  gint64 app_id = 0, version = 0, n_objects = 0;
  GError *local = NULL;

  /* one read transaction, so the three values come from one snapshot: read one by one,
   * another handle's first migration (tables, application_id and user_version in one
   * commit) could land between them and make a new Hanzo file look foreign */
  gboolean ok = hz_store_exec (store, "BEGIN", &local) &&
                hz_store_query_int (store->db, "SELECT count(*) FROM sqlite_master", &n_objects,
                                    &local) &&
                hz_store_query_int (store->db, "PRAGMA application_id", &app_id, &local) &&
                hz_store_query_int (store->db, "PRAGMA user_version", &version, &local);
  if (!sqlite3_get_autocommit (store->db))
    sqlite3_exec (store->db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
  if (!ok)
    {
      if (local->code == HZ_STORE_ERROR_CORRUPT)
        g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT,
                     "%s is not a Hanzo database or is damaged (%s); it was left untouched",
                     store->path, local->message);
      else
        g_propagate_prefixed_error (error, g_steal_pointer (&local), "opening %s: ",
                                    store->path);
      g_clear_error (&local);
      return FALSE;
    }
  gboolean fresh = app_id == 0 && version == 0 && n_objects == 0;
  if (!fresh && app_id != HZ_STORE_APPLICATION_ID)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT,
                   "%s is an SQLite database of another application, not Hanzo's; "
                   "it was left untouched", store->path);
      return FALSE;
    }
  if (version > HZ_STORE_SCHEMA_VERSION)
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_TOO_NEW,
                   "%s was written by a newer version of Hanzo (schema %" G_GINT64_FORMAT
                   ", this version understands up to %d); it was not modified",
                   store->path, version, HZ_STORE_SCHEMA_VERSION);
      return FALSE;
    }
  return TRUE;
}

/* Connection settings. WAL is persistent in the file; the others are per connection.
 * foreign_keys must be set outside a transaction. */
static gboolean
configure (HzStore *store, GError **error)
{
  sqlite3_stmt *st = NULL;
  char *mode = NULL;
  int rc;

  sqlite3_db_config (store->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  /* (trusted_schema stays on: the FTS5 sync triggers write to a virtual table.) */
  if (!hz_store_exec (store, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", error))
    return FALSE;

  /* Switching a new file to WAL needs an exclusive lock, and SQLite does not call the busy
   * handler for it: while another handle reads the file's identity (the app and the learner
   * starting together on the first run), retry for up to the busy timeout. */
  const gint64 deadline = g_get_monotonic_time () + (gint64) HZ_STORE_BUSY_TIMEOUT_MS * 1000;
  for (gulong pause_us = 1000;; pause_us = MIN (pause_us * 2, 50000))
    {
      rc = sqlite3_prepare_v2 (store->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
      if (rc == SQLITE_OK && (rc = sqlite3_step (st)) == SQLITE_ROW)
        {
          mode = g_strdup ((const char *) sqlite3_column_text (st, 0));
          rc = SQLITE_OK;
        }
      sqlite3_finalize (st);
      st = NULL;
      if ((rc & 0xff) != SQLITE_BUSY || g_get_monotonic_time () >= deadline)
        break;
      g_usleep (pause_us);
    }
  if (rc != SQLITE_OK)
    return hz_store_set_sqlite_error (error, store->db, rc, "enabling WAL mode");
  gboolean wal = g_strcmp0 (mode, "wal") == 0;
  if (!wal)
    g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_FAILED,
                 "cannot use WAL mode on %s (journal mode stays \"%s\"; is it on a "
                 "network file system?)", store->path, mode ? mode : "?");
  g_free (mode);
  return wal;
}

/* The database and its -wal and -shm files hold the conversations and the redaction vault:
 * owner-only (0600), like the 0700 folder. SQLite creates a new database with
 * SQLITE_DEFAULT_FILE_PERMISSIONS (0644 less the umask) and gives the -wal and -shm files
 * the database file's mode (os_unix.c, findCreateFileMode), so a missing database is made
 * empty (an empty file is a new SQLite database) with 0600 before sqlite3_open_v2: as a
 * temporary file next to it, closed, then hard-linked to `path` (link() fails with EEXIST
 * when it exists, so a concurrent opener's file is never replaced) and unlinked. The
 * descriptor is closed before the file has its name, so no connection of this process can
 * hold a lock on it then (see store-private.h). Where hard links are not supported SQLite
 * creates the file and secure_db_files() sets its mode by name. */
static gboolean
create_private_db_file (const char *path, GError **error)
{
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    return TRUE;   /* existing: secure_db_files() */
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *tmpl = g_strdup_printf ("%s/.%s.new-XXXXXX", dir, base);
  int fd = g_mkstemp_full (tmpl, O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_IO, "cannot create %s: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  close (fd);
  int rc = link (tmpl, path), e = errno;
  g_unlink (tmpl);
  if (rc == 0 || e == EEXIST || e == EPERM || e == EOPNOTSUPP || e == ENOSYS)
    return TRUE;   /* made, made by a concurrent opener, or no hard links here */
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_IO, "cannot create %s: %s", path,
               g_strerror (e));
  return FALSE;
}

/* Files made by an older version (0644), or by SQLite where hard links are not supported:
 * clears the group and other bits of the database, -wal and -shm when they are regular
 * files of ours. Only called once the file is known to be a Hanzo database. By name
 * (lstat, then fchmodat without following a symbolic link), never through a descriptor of
 * our own (store-private.h). Failing chmod is not an error (a file of another owner, a
 * read-only mount): the store works as before. */
static void
secure_db_files (const char *path)
{
  static const char *const suffixes[] = { "", "-wal", "-shm" };
  for (gsize i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *f = g_strconcat (path, suffixes[i], NULL);
      GStatBuf st;
      if (g_lstat (f, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == geteuid ()
          && (st.st_mode & 077) != 0)
        fchmodat (AT_FDCWD, f, st.st_mode & 0700, AT_SYMLINK_NOFOLLOW);
    }
}

static void
finalize_stmt (gpointer st)
{
  sqlite3_finalize (st);
}

HzStore *
hz_store_open (const char *path, GError **error)
{
  g_autoptr (HzStore) store = g_new0 (HzStore, 1);
  store->path = path ? g_strdup (path) : hz_store_default_path ();
  store->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                        finalize_stmt);

  g_autofree char *dir = g_path_get_dirname (store->path);
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int e = errno;
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_IO,
                   "cannot create the directory %s: %s", dir, g_strerror (e));
      return NULL;
    }
  if (!create_private_db_file (store->path, error))
    return NULL;

  int rc = sqlite3_open_v2 (store->path, &store->db,
                            SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            NULL);
  if (rc != SQLITE_OK)
    {
      g_autofree char *what = g_strdup_printf ("opening %s", store->path);
      hz_store_set_sqlite_error (error, store->db, rc, what);
      return NULL;
    }
  sqlite3_extended_result_codes (store->db, 1);
  sqlite3_busy_timeout (store->db, HZ_STORE_BUSY_TIMEOUT_MS);

  /* (sqlite3_open_v2 opened the file without reading it; the first read is check_identity's) */
  if (!check_sqlite_header (store, error) || !check_identity (store, error))
    return NULL;
  secure_db_files (store->path);   /* -wal and -shm made later get the database's mode */
  if (!configure (store, error) ||
      !hz_schema_migrate (store, error))
    return NULL;
  return g_steal_pointer (&store);
}

void
hz_store_close (HzStore *store)
{
  if (!store)
    return;
  if (store->db && !sqlite3_get_autocommit (store->db))
    sqlite3_exec (store->db, "ROLLBACK", NULL, NULL, NULL);
  g_clear_pointer (&store->stmts, g_hash_table_destroy);  /* finalises statements */
  if (store->db)
    sqlite3_close (store->db);
  g_free (store->path);
  g_free (store);
}

const char *
hz_store_get_path (HzStore *store)
{
  return store->path;
}

int
hz_store_get_schema_version (HzStore *store)
{
  return store->schema_version;
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
  if (!check_utf8 (title, "the title", error) ||
      !check_utf8 (system_prompt, "the system prompt", error) ||
      !check_utf8 (model_path, "the model path", error))
    return 0;
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return 0;
  hz_store_bind_text_or_null (st, 1, title ? title : "");
  hz_store_bind_text_or_null (st, 2, system_prompt);
  hz_store_bind_text_or_null (st, 3, model_path);
  sqlite3_bind_int64 (st, 4, g_get_real_time ());
  gboolean ok = step_write (store, st, "creating a conversation", NULL, 0, error);
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
  if (!check_utf8 (value, field, error))
    return FALSE;
  sqlite3_stmt *st = hz_store_prepare_write (store, sql, error);
  if (!st)
    return FALSE;
  sqlite3_bind_int64 (st, 1, id);
  hz_store_bind_text_or_null (st, 2, value);
  sqlite3_bind_int64 (st, 3, g_get_real_time ());
  g_autofree char *what = g_strdup_printf ("setting %s", field);
  gboolean ok = step_write (store, st, what, "conversation", id, error);
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

/* Run `sql` (binding ?1 = id, ?2 = int_arg) as one write; NOT_FOUND if no row changed. */
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
  gboolean ok = step_write (store, st, what, kind, id, error);
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_set_conversation_pinned (HzStore *store, gint64 id, gboolean pinned, GError **error)
{
  return write_by_id (store, "UPDATE conversations SET pinned = ?2 WHERE id = ?1",
                      id, pinned ? 1 : 0, "conversation", "pinning a conversation", error);
}

gboolean
hz_store_delete_conversation (HzStore *store, gint64 id, GError **error)
{
  return write_by_id (store, "DELETE FROM conversations WHERE id = ?1", id, 0,
                      "conversation", "deleting a conversation", error);
}

/* ================================================================= messages */

#define MESSAGE_COLUMNS \
  "id, conversation_id, parent_id, role, content, model_sha256, created_us, updated_us," \
  " n_tokens, ttft_s, tokens_per_s, complete"

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
    return set_not_found (error, "conversation", conversation_id);
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
  if (!check_utf8 (content, "the message content", error) ||
      !check_utf8 (model_sha256, "the model sha256", error))
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
      ok = step_write (store, ins, "appending a message", NULL, 0, error);
      id = sqlite3_last_insert_rowid (store->db);
    }
  if (ok)
    {
      sqlite3_bind_int64 (touch, 1, conversation_id);
      sqlite3_bind_int64 (touch, 2, now);
      ok = step_write (store, touch, "appending a message", NULL, 0, error);
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
  static const char sql[] =
    "UPDATE messages SET content = coalesce (?2, content),"
    "                    n_tokens = coalesce (?3, n_tokens),"
    "                    ttft_s = coalesce (?4, ttft_s),"
    "                    tokens_per_s = coalesce (?5, tokens_per_s),"
    "                    updated_us = ?6"
    " WHERE id = ?1";
  if (!check_utf8 (content, "the message content", error))
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
  gboolean ok = step_write (store, st, "updating a message", "message", id, error);
  return hz_store_write_end (store, ok, error);
}

gboolean
hz_store_set_message_complete (HzStore *store, gint64 id, GError **error)
{
  return write_by_id (store, "UPDATE messages SET complete = 1, updated_us = ?2 WHERE id = ?1",
                      id, g_get_real_time (), "message", "completing a message", error);
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
                      "message", "deleting a message", error);
}

/* ================================================================= search */

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
  if (!check_utf8 (query, "the search query", error))
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
