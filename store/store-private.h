/* store-private.h — the base of the store (store-db.c: errors, records and values,
 * statements, transactions), shared by the schema (schema.c), opening (store.c), the
 * accessors by subject (conversations.c, search.c, privacy.c, redactions.c, learner-runs.c,
 * feedback.c, reply-limits.c) and the store tests. Not installed, not for use outside store/
 * and tests/. Nothing here calls up into the schema or an accessor (tools/check-layers.py).
 *
 * One descriptor per database file (issue 20). SQLite's locks on the database and its
 * -shm file are POSIX advisory locks, which belong to the process, and closing ANY
 * descriptor of a file drops every such lock the process holds on it (SQLite, "How To
 * Corrupt An SQLite Database File", section 2.2). Without its locks a live connection is
 * invisible to other processes: the sqlite3 shell or hanzo-learner, closing what it takes
 * for the last connection, checkpoints and deletes -wal and -shm under it, or resets the
 * -shm it has mapped (SIGBUS); commits made after that are lost. Another connection of this
 * process may hold those locks at any time (the app's redact worker, its search reader),
 * so no code may open() / fopen() / g_file_*() / mmap the database, -wal, -shm or -journal
 * file while SQLite may have it open, not even to read a header or fchmod it:
 *   - read the file through SQLite (hz_store_open() reads the header with
 *     SQLITE_FCNTL_FILE_POINTER and the file's own xRead);
 *   - work by name where no descriptor is involved (stat, lstat, fchmodat, link, unlink);
 *   - a descriptor of a file that is not yet the database is fine (create_private_db_file()
 *     closes its temporary file before linking it into place).
 * Several HzStore on one file in one process are fine: SQLite shares one lock state per
 * file among its connections and defers closing a descriptor while others hold locks.
 * Guarded by /store/robust/second-connection-keeps-locks (in-process, /proc/locks) and
 * tests/store/test-store-multiprocess.c (other processes reading and writing, SIGKILL). */
#pragma once

#include <sqlite3.h>
#include "hanzo-store.h"

G_BEGIN_DECLS

/** PRAGMA application_id of a Hanzo database ("Hanz" in ASCII). A file whose
 *  application_id is anything else (or 0 while it already has tables) is not ours. */
#define HZ_STORE_APPLICATION_ID 0x48616E7A

struct _HzStore {
  sqlite3    *db;
  char       *path;
  GHashTable *stmts;          /* SQL text -> sqlite3_stmt* (persistent, cached) */
  int         schema_version;
  gboolean    in_txn;         /* hz_store_begin() is open */
  gboolean    txn_aborted;    /* ... but SQLite rolled it back after an error */
};

/** The raw connection (tests use it for PRAGMA integrity_check / max_page_count). */
static inline sqlite3 *
hz_store_get_db (HzStore *store)
{
  return store->db;
}

/** Map an SQLite result code to an HzStoreError code. */
HzStoreError hz_store_error_from_sqlite (int rc);

/** Set `error` from SQLite's last error on `db` (may be NULL) and result code `rc`,
 *  prefixed with `what` (e.g. "appending a message"). Always returns FALSE. */
gboolean hz_store_set_sqlite_error (GError    **error,
                                    sqlite3    *db,
                                    int         rc,
                                    const char *what);

/** A cached prepared statement for `sql`, which must be a string literal (the cache keys
 *  on it and keeps it). Bind, step, then call hz_store_stmt_done(). NULL on error. */
sqlite3_stmt *hz_store_prepare (HzStore *store, const char *sql, GError **error);

/** Reset a cached statement after use, so it holds no read snapshot and no bound strings. */
void hz_store_stmt_done (sqlite3_stmt *st);

/** Run one or more SQL statements without results (sqlite3_exec). */
gboolean hz_store_exec (HzStore *store, const char *sql, GError **error);

/** Run a one-row, one-integer query (e.g. "PRAGMA user_version") on `db`. */
gboolean hz_store_query_int (sqlite3 *db, const char *sql, gint64 *out, GError **error);

/** Start a write: BEGIN IMMEDIATE, or a SAVEPOINT inside hz_store_begin(). */
gboolean hz_store_write_begin (HzStore *store, GError **error);

/** Finish a write started by hz_store_write_begin(): commit/release when `ok`, else roll
 *  back. Returns FALSE (setting `error` if it is still unset) when `ok` was FALSE or the
 *  commit failed. */
gboolean hz_store_write_end (HzStore *store, gboolean ok, GError **error);

/* ---- errors, records, values, rows (store-db.c too) ------------------------------- */

/** Set HZ_STORE_ERROR_INVALID with the message `what`. Always returns FALSE. */
gboolean hz_store_set_invalid (GError **error, const char *what);

/** Set HZ_STORE_ERROR_NOT_FOUND "no <kind> <id>" (`kind` may end in "with id"). Always
 *  returns FALSE. */
gboolean hz_store_set_not_found (GError **error, const char *kind, gint64 id);

/** TRUE when `s` is NULL or valid UTF-8. */
gboolean hz_store_utf8_or_null (const char *s);

/** TRUE when `s` is a non-empty valid UTF-8 string. */
gboolean hz_store_nonempty_utf8 (const char *s);

/** TRUE when `s` is NULL or valid UTF-8; else FALSE with HZ_STORE_ERROR_INVALID "<field> is
 *  not valid UTF-8; nothing was written". */
gboolean hz_store_check_utf8 (const char *s, const char *field, GError **error);

/** Free a record: g_free() each of its `n_fields` heap fields (given as gpointer values,
 *  any of them NULL), then the record itself. */
void hz_store_free_record (gpointer record, guint n_fields, ...);

/** names[v], or NULL when `v` is not an index of the `n` names. */
const char *hz_store_enum_to_string (const char *const *names, gsize n, int v);

/** The index of `s` in the `n` names into `out`; FALSE (out untouched) if absent or NULL. */
gboolean hz_store_enum_from_string (const char *const *names, gsize n, const char *s,
                                    int *out);

/** Define the public pair `const char *to_string (Type v)` (NULL for an unknown value)
 *  and `gboolean from_string (const char *str, Type *out)` (FALSE, `out` untouched, for
 *  an unknown or NULL string) over the array `names`, indexed by the enum value. */
#define HZ_STORE_DEFINE_ENUM_STRINGS(Type, to_string, from_string, names)                 \
  const char *                                                                            \
  to_string (Type v)                                                                      \
  {                                                                                       \
    return hz_store_enum_to_string (names, G_N_ELEMENTS (names), (int) v);                \
  }                                                                                       \
                                                                                          \
  gboolean                                                                                \
  from_string (const char *str, Type *out)                                                \
  {                                                                                       \
    int v;                                                                                \
    if (!hz_store_enum_from_string (names, G_N_ELEMENTS (names), str, &v))                \
      return FALSE;                                                                       \
    *out = (Type) v;                                                                      \
    return TRUE;                                                                          \
  }

/** Bind `s` (copied), or NULL when `s` is NULL. */
void hz_store_bind_text_or_null (sqlite3_stmt *st, int idx, const char *s);

/** Bind `v` when `present`, else NULL. */
void hz_store_bind_double_or_null (sqlite3_stmt *st, int idx, gboolean present, double v);

/** A copy of a text column; "" for NULL. */
char *hz_store_column_text (sqlite3_stmt *st, int col);

/** A copy of a text column, or NULL for NULL. */
char *hz_store_column_text_or_null (sqlite3_stmt *st, int col);

/** A role column; HZ_ROLE_USER when it names no role. */
HzRole hz_store_column_role (sqlite3_stmt *st, int col);

/** A REAL column, or `if_null` for NULL. */
double hz_store_column_double_or (sqlite3_stmt *st, int col, double if_null);

/** hz_store_prepare() then hz_store_write_begin(): the statement, or NULL (error set).
 *  Finish with hz_store_write_end(). */
sqlite3_stmt *hz_store_prepare_write (HzStore *store, const char *sql, GError **error);

/** Step a write statement to completion and reset it; FALSE with `error` set (prefixed
 *  with `what`; a constraint violation is HZ_STORE_ERROR_INVALID) on failure. */
gboolean hz_store_step_write (HzStore *store, sqlite3_stmt *st, const char *what,
                              GError **error);

/** hz_store_step_write(), then hz_store_set_not_found (kind, id) when no row changed. */
gboolean hz_store_step_write_found (HzStore *store, sqlite3_stmt *st, const char *what,
                                    const char *kind, gint64 id, GError **error);

/** hz_store_step_write() for an INSERT; `*out_id` is the new rowid, or 0 on failure. */
gboolean hz_store_step_insert (HzStore *store, sqlite3_stmt *st, const char *what,
                               gint64 *out_id, GError **error);

/** Turns the current row of a statement into a newly allocated record. */
typedef gpointer (*HzRowFunc) (sqlite3_stmt *st);

/** Step a SELECT to the end, one record a row (freed with `free_func`), then reset it.
 *  NULL with `error` set (prefixed with `what`) on failure. */
GPtrArray *hz_store_collect (HzStore *store, sqlite3_stmt *st, HzRowFunc from_row,
                             GDestroyNotify free_func, const char *what, GError **error);

/** hz_store_collect(), keeping the first record; when there is none, NULL with
 *  HZ_STORE_ERROR_NOT_FOUND and the message `not_found_format`. */
gpointer hz_store_collect_one (HzStore *store, sqlite3_stmt *st, HzRowFunc from_row,
                               GDestroyNotify free_func, const char *what, GError **error,
                               const char *not_found_format, ...) G_GNUC_PRINTF (7, 8);

G_END_DECLS
