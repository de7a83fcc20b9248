/* store-db.c — the base of the store, below the schema and every accessor: errors, the values
 * the tables share (records, enums, roles), statements (the cache, binding, columns,
 * stepping, collecting rows) and transactions. Declared in store-private.h. */
#include "store-private.h"

#include <stdarg.h>
#include <string.h>

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

gboolean
hz_store_set_invalid (GError **error, const char *what)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID, "%s", what);
  return FALSE;
}

gboolean
hz_store_set_not_found (GError **error, const char *kind, gint64 id)
{
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND, "no %s %" G_GINT64_FORMAT,
               kind, id);
  return FALSE;
}

gboolean
hz_store_utf8_or_null (const char *s)
{
  return !s || g_utf8_validate (s, -1, NULL);
}

gboolean
hz_store_nonempty_utf8 (const char *s)
{
  return s && *s && g_utf8_validate (s, -1, NULL);
}

gboolean
hz_store_check_utf8 (const char *s, const char *field, GError **error)
{
  if (s == NULL || g_utf8_validate (s, -1, NULL))
    return TRUE;
  g_set_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID,
               "%s is not valid UTF-8; nothing was written", field);
  return FALSE;
}

/* ================================================================= records and values */

void
hz_store_free_record (gpointer record, guint n_fields, ...)
{
  va_list ap;

  va_start (ap, n_fields);
  for (guint i = 0; i < n_fields; i++)
    g_free (va_arg (ap, gpointer));
  va_end (ap);
  g_free (record);
}

const char *
hz_store_enum_to_string (const char *const *names, gsize n, int v)
{
  return v >= 0 && (gsize) v < n ? names[v] : NULL;
}

gboolean
hz_store_enum_from_string (const char *const *names, gsize n, const char *s, int *out)
{
  for (gsize i = 0; s && i < n; i++)
    if (strcmp (names[i], s) == 0)
      {
        *out = (int) i;
        return TRUE;
      }
  return FALSE;
}

/* The role of a message (messages, and the copies read by learner samples and redactions:
 * hz_store_column_role()). */
static const char *const role_names[] = {
  [HZ_ROLE_SYSTEM] = "system",
  [HZ_ROLE_USER] = "user",
  [HZ_ROLE_ASSISTANT] = "assistant",
};

HZ_STORE_DEFINE_ENUM_STRINGS (HzRole, hz_role_to_string, hz_role_from_string, role_names)

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

/* ================================================================= statements: binding and columns */

void
hz_store_bind_text_or_null (sqlite3_stmt *st, int idx, const char *s)
{
  if (s)
    sqlite3_bind_text (st, idx, s, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (st, idx);
}

void
hz_store_bind_double_or_null (sqlite3_stmt *st, int idx, gboolean present, double v)
{
  if (present)
    sqlite3_bind_double (st, idx, v);
  else
    sqlite3_bind_null (st, idx);
}

char *
hz_store_column_text (sqlite3_stmt *st, int col)
{
  const char *s = (const char *) sqlite3_column_text (st, col);
  return g_strdup (s ? s : "");
}

char *
hz_store_column_text_or_null (sqlite3_stmt *st, int col)
{
  if (sqlite3_column_type (st, col) == SQLITE_NULL)
    return NULL;
  return g_strdup ((const char *) sqlite3_column_text (st, col));
}

HzRole
hz_store_column_role (sqlite3_stmt *st, int col)
{
  HzRole role = HZ_ROLE_USER;
  hz_role_from_string ((const char *) sqlite3_column_text (st, col), &role);
  return role;
}

double
hz_store_column_double_or (sqlite3_stmt *st, int col, double if_null)
{
  return sqlite3_column_type (st, col) == SQLITE_NULL ? if_null : sqlite3_column_double (st, col);
}

/* ================================================================= statements: stepping */

sqlite3_stmt *
hz_store_prepare_write (HzStore *store, const char *sql, GError **error)
{
  sqlite3_stmt *st = hz_store_prepare (store, sql, error);
  if (!st || !hz_store_write_begin (store, error))
    return NULL;
  return st;
}

gboolean
hz_store_step_write (HzStore *store, sqlite3_stmt *st, const char *what, GError **error)
{
  int rc = sqlite3_step (st);
  hz_store_stmt_done (st);
  if (rc != SQLITE_DONE)
    return hz_store_set_sqlite_error (error, store->db, rc, what);
  return TRUE;
}

gboolean
hz_store_step_write_found (HzStore *store, sqlite3_stmt *st, const char *what,
                           const char *kind, gint64 id, GError **error)
{
  if (!hz_store_step_write (store, st, what, error))
    return FALSE;
  if (sqlite3_changes (store->db) == 0)
    return hz_store_set_not_found (error, kind, id);
  return TRUE;
}

gboolean
hz_store_step_insert (HzStore *store, sqlite3_stmt *st, const char *what, gint64 *out_id,
                      GError **error)
{
  gboolean ok = hz_store_step_write (store, st, what, error);
  *out_id = ok ? sqlite3_last_insert_rowid (store->db) : 0;
  return ok;
}

/* ================================================================= statements: rows */

GPtrArray *
hz_store_collect (HzStore *store, sqlite3_stmt *st, HzRowFunc from_row,
                  GDestroyNotify free_func, const char *what, GError **error)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (free_func);
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

gpointer
hz_store_collect_one (HzStore *store, sqlite3_stmt *st, HzRowFunc from_row,
                      GDestroyNotify free_func, const char *what, GError **error,
                      const char *not_found_format, ...)
{
  g_autoptr (GPtrArray) rows = hz_store_collect (store, st, from_row, free_func, what, error);
  if (!rows)
    return NULL;
  if (rows->len == 0)
    {
      va_list ap;
      va_start (ap, not_found_format);
      g_autofree char *msg = g_strdup_vprintf (not_found_format, ap);
      va_end (ap);
      g_set_error_literal (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND, msg);
      return NULL;
    }
  return g_ptr_array_steal_index (rows, 0);
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
