/* store-util.c — helpers shared by the store modules (store.c, privacy.c, redactions.c,
 * learner-runs.c, feedback.c): errors, binding, columns, stepping, row collection and
 * string <-> enum tables. Declared in store-private.h. */
#include "store-private.h"

#include <stdarg.h>
#include <string.h>

/* ================================================================= errors */

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

/* ================================================================= records */

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

/* ================================================================= enums */

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

/* ================================================================= binding and columns */

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

/* ================================================================= stepping */

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

/* ================================================================= rows */

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
