/* store-private.h — internals shared by store.c, schema.c and the store tests.
 * Not installed, not for use outside store/ and tests/store/. */
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

/** Bring the schema from its current user_version to HZ_STORE_SCHEMA_VERSION, one
 *  transaction (BEGIN IMMEDIATE) per step; re-reads the version under the write lock so
 *  concurrent openers migrate once. Sets store->schema_version. (schema.c) */
gboolean hz_schema_migrate (HzStore *store, GError **error);

G_END_DECLS
