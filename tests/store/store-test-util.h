/* store-test-util.h — helpers shared by the store test programs (header-only). */
#pragma once
#include <glib.h>
#include <glib/gstdio.h>
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

/* The inode number of `path` (which must exist). */
static inline guint64
st_inode (const char *path)
{
  GStatBuf st;
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  return st.st_ino;
}

/* Whether /proc/locks lists a POSIX lock held (not one waited for) by process `pid` (as
 * text) on the file with inode `ino`. Its lines read "N: POSIX  ADVISORY  READ PID
 * MAJ:MIN:INODE START END"; a waiter's has "->" after "N:" (Linux, fs/locks.c). */
static inline gboolean
st_pid_holds_lock (const char *pid, guint64 ino)
{
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents ("/proc/locks", &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autofree char *suffix = g_strdup_printf (":%" G_GUINT64_FORMAT, ino);
  for (guint i = 0; lines[i]; i++)
    {
      g_auto (GStrv) f = g_strsplit_set (lines[i], " ", -1);
      const char *tok[8];
      guint n = 0;
      for (guint k = 0; f[k] && n < G_N_ELEMENTS (tok); k++)
        if (*f[k])
          tok[n++] = f[k];
      if (n >= 6 && g_str_equal (tok[1], "POSIX") && g_str_equal (tok[4], pid)
          && g_str_has_suffix (tok[5], suffix))
        return TRUE;
    }
  return FALSE;
}

/* A file at an older schema, for the migration tests: a new store at `path` with one
 * conversation (*conv) holding a question and its reply `answer` (*reply), then taken back
 * to `version` by `undo` (SQL that drops what the later migrations add). */
static inline void
st_write_old_file (const char *path, int version, const char *undo, const char *answer,
                   gint64 *conv, gint64 *reply)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = st_open (path);
  *conv = hz_store_create_conversation (store, "old", NULL, NULL, &error);
  gint64 user = hz_store_append_message (store, *conv, 0, HZ_ROLE_USER, "an old question",
                                         NULL, TRUE, &error);
  *reply = hz_store_append_message (store, *conv, user, HZ_ROLE_ASSISTANT, answer, NULL, TRUE,
                                    &error);
  g_assert_no_error (error);
  g_autofree char *sql = g_strdup_printf ("BEGIN; %s PRAGMA user_version = %d; COMMIT;", undo,
                                          version);
  g_assert_true (hz_store_exec (store, sql, &error));
  g_assert_no_error (error);
}
