/* store-test-util.h — helpers shared by the store test programs (header-only). */
#pragma once
#include <glib.h>
#include "store-private.h"

/* A path inside this test's isolated data dir (G_TEST_OPTION_ISOLATE_DIRS removes it). */
static inline char *
st_tmp_path (const char *name)
{
  g_mkdir_with_parents (g_get_user_data_dir (), 0700);
  return g_build_filename (g_get_user_data_dir (), name, NULL);
}

/* Open or fail the test with the error's message. */
static inline HzStore *
st_open (const char *path)
{
  g_autoptr (GError) error = NULL;
  HzStore *store = hz_store_open (path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (store);
  return store;
}

/* One text value from a query on the store's connection. */
static inline char *
st_query_text (HzStore *store, const char *sql)
{
  sqlite3_stmt *st = NULL;
  g_assert_cmpint (sqlite3_prepare_v2 (hz_store_get_db (store), sql, -1, &st, NULL), ==,
                   SQLITE_OK);
  g_assert_cmpint (sqlite3_step (st), ==, SQLITE_ROW);
  char *s = g_strdup ((const char *) sqlite3_column_text (st, 0));
  sqlite3_finalize (st);
  return s;
}

static inline gint64
st_query_int (HzStore *store, const char *sql)
{
  g_autoptr (GError) error = NULL;
  gint64 v = -1;
  g_assert_true (hz_store_query_int (hz_store_get_db (store), sql, &v, &error));
  g_assert_no_error (error);
  return v;
}

/* PRAGMA integrity_check is "ok" and the FTS index matches the messages table. */
static inline void
st_assert_integrity (HzStore *store)
{
  g_autofree char *check = st_query_text (store, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
  char *err = NULL;
  int rc = sqlite3_exec (hz_store_get_db (store),
                         "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
                         NULL, NULL, &err);
  g_assert_cmpstr (err, ==, NULL);
  g_assert_cmpint (rc, ==, SQLITE_OK);
}
