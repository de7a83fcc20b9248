/* store.c — opening and closing the store: the file's identity and modes, the connection's
 * settings and the schema's migration (schema.c); the accessors are in files by subject
 * (conversations.c, search.c, learner-runs.c, privacy.c, redactions.c, feedback.c,
 * reply-limits.c) over the base (store-db.c). */
#include "schema.h"
#include "store-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Read-only checks before anything is written: the file parses, is ours, is not newer.
 * `out_version` (nullable): the file's user_version. */
static gboolean
check_identity (HzStore *store, gint64 *out_version, GError **error)
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
  if (out_version)
    *out_version = version;
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

/* A store of `path` (NULL: the default path) without a connection yet. */
static HzStore *
store_new (const char *path)
{
  HzStore *store = g_new0 (HzStore, 1);
  store->path = path ? g_strdup (path) : hz_store_default_path ();
  store->stmts = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, finalize_stmt);
  return store;
}

/* SQLite's connection to store->path with `flags`, extended result codes and the busy
 * timeout. */
static gboolean
connect_db (HzStore *store, int flags, GError **error)
{
  int rc = sqlite3_open_v2 (store->path, &store->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
  if (rc != SQLITE_OK)
    {
      g_autofree char *what = g_strdup_printf ("opening %s", store->path);
      return hz_store_set_sqlite_error (error, store->db, rc, what);
    }
  sqlite3_extended_result_codes (store->db, 1);
  sqlite3_busy_timeout (store->db, HZ_STORE_BUSY_TIMEOUT_MS);
  return TRUE;
}

HzStore *
hz_store_open (const char *path, GError **error)
{
  g_autoptr (HzStore) store = store_new (path);

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

  if (!connect_db (store, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, error))
    return NULL;

  /* (sqlite3_open_v2 opened the file without reading it; the first read is check_identity's) */
  if (!check_sqlite_header (store, error) || !check_identity (store, NULL, error))
    return NULL;
  secure_db_files (store->path);   /* -wal and -shm made later get the database's mode */
  if (!configure (store, error) ||
      !hz_schema_migrate (store, error))
    return NULL;
  return g_steal_pointer (&store);
}

HzStore *
hz_store_open_readonly (const char *path, GError **error)
{
  g_autoptr (HzStore) store = store_new (path);
  if (!g_file_test (store->path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND,
                   "there is no Hanzo database at %s", store->path);
      return NULL;
    }
  if (!connect_db (store, SQLITE_OPEN_READONLY, error))
    return NULL;
  sqlite3_db_config (store->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  gint64 version = 0;
  if (!check_sqlite_header (store, error) || !check_identity (store, &version, error) ||
      !hz_store_exec (store, "PRAGMA query_only = ON", error))
    return NULL;
  if (version != HZ_STORE_SCHEMA_VERSION)
    {
      /* (a read-only connection cannot migrate; the accessors expect the current schema) */
      g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_READONLY,
                   "%s has schema %" G_GINT64_FORMAT " and this version reads %d; it is "
                   "updated when the app (or another writer) opens it", store->path, version,
                   HZ_STORE_SCHEMA_VERSION);
      return NULL;
    }
  store->schema_version = (int) version;
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
