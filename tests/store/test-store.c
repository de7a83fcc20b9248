/* test-store.c — libhzstore: opening, schema, conversations, messages, search, UTF-8. */
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <glib/gstdio.h>

#include "store-test-util.h"

static void
test_open_default_path (void)
{
  g_autofree char *expected = g_build_filename (g_get_user_data_dir (), "hanzo", "hanzo.db",
                                                NULL);
  g_autofree char *def = hz_store_default_path ();
  g_assert_cmpstr (def, ==, expected);
  g_assert_false (g_file_test (expected, G_FILE_TEST_EXISTS));

  g_autoptr (HzStore) store = st_open (NULL);
  g_assert_cmpstr (hz_store_get_path (store), ==, expected);
  g_assert_true (g_file_test (expected, G_FILE_TEST_IS_REGULAR));

  g_autofree char *dir = g_path_get_dirname (expected);
  struct stat sb;
  g_assert_cmpint (stat (dir, &sb), ==, 0);
  g_assert_cmpint (sb.st_mode & 0777, ==, 0700);
}

static void
test_open_empty_file_migrates (void)
{
  g_autofree char *path = st_tmp_path ("empty.db");
  g_assert_true (g_file_set_contents (path, "", 0, NULL));

  g_autoptr (HzStore) store = st_open (path);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (st_query_int (store, "PRAGMA user_version"), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (st_query_int (store, "PRAGMA application_id"), ==, HZ_STORE_APPLICATION_ID);
  g_assert_cmpint (st_query_int (store, "PRAGMA foreign_keys"), ==, 1);
  g_assert_cmpint (st_query_int (store, "PRAGMA synchronous"), ==, 1 /* NORMAL */);
  g_assert_cmpint (st_query_int (store, "PRAGMA busy_timeout"), ==, HZ_STORE_BUSY_TIMEOUT_MS);
  g_autofree char *mode = st_query_text (store, "PRAGMA journal_mode");
  g_assert_cmpstr (mode, ==, "wal");
  for (const char *const *t = (const char *const[]) { "conversations", "messages",
                                                       "messages_fts", NULL }; *t; t++)
    {
      g_autofree char *sql = g_strdup_printf (
        "SELECT count(*) FROM sqlite_master WHERE name = '%s'", *t);
      g_assert_cmpint (st_query_int (store, sql), ==, 1);
    }
  st_assert_integrity (store);
}

/* Asserts that PATH, PATH-wal and PATH-shm exist with mode 0600. */
static void
assert_db_files_private (const char *path)
{
  for (const char *const *suf = (const char *const[]) { "", "-wal", "-shm", NULL }; *suf; suf++)
    {
      g_autofree char *f = g_strconcat (path, *suf, NULL);
      struct stat sb;
      g_assert_cmpint (stat (f, &sb), ==, 0);
      if ((sb.st_mode & 0777) != 0600)
        g_error ("%s has mode %03o, not 0600", f, (unsigned) (sb.st_mode & 0777));
    }
}

/* The database, -wal and -shm hold the conversations and the redaction vault: owner-only
 * (0600) under the common umask 022, new and (fixed on open) when older versions made them
 * 0644. */
static void
test_open_private_files (void)
{
  const mode_t old_umask = umask (022);
  g_autofree char *path = st_tmp_path ("private.db");
  g_autoptr (HzStore) a = st_open (path);
  g_assert_cmpint (hz_store_create_conversation (a, "t", NULL, NULL, NULL), >, 0);
  assert_db_files_private (path);

  /* as left by an older version: 0644; a second connection fixes them */
  for (const char *const *suf = (const char *const[]) { "", "-wal", "-shm", NULL }; *suf; suf++)
    {
      g_autofree char *f = g_strconcat (path, *suf, NULL);
      g_assert_cmpint (g_chmod (f, 0644), ==, 0);
    }
  g_autoptr (HzStore) b = st_open (path);
  assert_db_files_private (path);
  g_clear_pointer (&b, hz_store_close);
  g_clear_pointer (&a, hz_store_close);

  /* an existing database of someone else's making is not a Hanzo one: left untouched */
  g_autofree char *other = st_tmp_path ("other.txt");
  g_assert_true (g_file_set_contents (other, "not a database at all, just text", -1, NULL));
  g_assert_cmpint (g_chmod (other, 0644), ==, 0);
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_store_open (other, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT);
  struct stat sb;
  g_assert_cmpint (stat (other, &sb), ==, 0);
  g_assert_cmpint (sb.st_mode & 0777, ==, 0644);
  umask (old_umask);
}

static void
test_roles (void)
{
  HzRole r = HZ_ROLE_SYSTEM;
  g_assert_cmpstr (hz_role_to_string (HZ_ROLE_ASSISTANT), ==, "assistant");
  g_assert_null (hz_role_to_string ((HzRole) 7));
  g_assert_true (hz_role_from_string ("user", &r));
  g_assert_cmpint (r, ==, HZ_ROLE_USER);
  g_assert_false (hz_role_from_string ("tool", &r));
  g_assert_false (hz_role_from_string (NULL, &r));
  g_assert_cmpint (r, ==, HZ_ROLE_USER);
}

static void
test_conversations (void)
{
  g_autofree char *path = st_tmp_path ("conv.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;

  gint64 before = g_get_real_time ();
  gint64 a = hz_store_create_conversation (store, "First", NULL, "/m/a.gguf", &error);
  g_assert_no_error (error);
  gint64 b = hz_store_create_conversation (store, NULL, "Be brief.", NULL, &error);
  g_assert_no_error (error);
  gint64 c = hz_store_create_conversation (store, "Third", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (a, >, 0);
  g_assert_cmpint (b, >, a);
  g_assert_cmpint (c, >, b);

  g_autoptr (HzConversation) ca = hz_store_get_conversation (store, a, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ca->id, ==, a);
  g_assert_cmpstr (ca->title, ==, "First");
  g_assert_null (ca->system_prompt);
  g_assert_cmpstr (ca->model_path, ==, "/m/a.gguf");
  g_assert_false (ca->pinned);
  g_assert_cmpint (ca->created_us, >=, before);
  g_assert_cmpint (ca->created_us, <=, g_get_real_time ());
  g_assert_cmpint (ca->updated_us, ==, ca->created_us);

  g_autoptr (HzConversation) cb = hz_store_get_conversation (store, b, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (cb->title, ==, "");
  g_assert_cmpstr (cb->system_prompt, ==, "Be brief.");
  g_assert_null (cb->model_path);

  /* Order: most recently updated first; then pinned first. */
  g_usleep (2000);
  g_assert_true (hz_store_rename_conversation (store, a, "Renamed", &error));
  g_assert_no_error (error);
  g_autoptr (GPtrArray) list = hz_store_list_conversations (store, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (list->len, ==, 3);
  g_assert_cmpint (((HzConversation *) list->pdata[0])->id, ==, a);
  g_assert_cmpstr (((HzConversation *) list->pdata[0])->title, ==, "Renamed");
  g_assert_cmpint (((HzConversation *) list->pdata[0])->updated_us, >,
                   ((HzConversation *) list->pdata[0])->created_us);
  g_assert_cmpint (((HzConversation *) list->pdata[1])->id, ==, c);
  g_assert_cmpint (((HzConversation *) list->pdata[2])->id, ==, b);

  g_assert_true (hz_store_set_conversation_pinned (store, b, TRUE, &error));
  g_assert_no_error (error);
  g_clear_pointer (&list, g_ptr_array_unref);
  list = hz_store_list_conversations (store, &error);
  g_assert_no_error (error);
  g_assert_cmpint (((HzConversation *) list->pdata[0])->id, ==, b);
  g_assert_true (((HzConversation *) list->pdata[0])->pinned);
  g_assert_cmpint (((HzConversation *) list->pdata[1])->id, ==, a);

  g_assert_true (hz_store_set_conversation_system_prompt (store, c, "Talk like a pirate.",
                                                          &error));
  g_assert_true (hz_store_set_conversation_model (store, c, "/m/b.gguf", &error));
  g_assert_true (hz_store_set_conversation_system_prompt (store, b, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (HzConversation) cc = hz_store_get_conversation (store, c, &error);
  g_assert_cmpstr (cc->system_prompt, ==, "Talk like a pirate.");
  g_assert_cmpstr (cc->model_path, ==, "/m/b.gguf");
  g_clear_pointer (&cb, hz_conversation_free);
  cb = hz_store_get_conversation (store, b, &error);
  g_assert_null (cb->system_prompt);

  /* Missing ids. */
  g_assert_null (hz_store_get_conversation (store, 9999, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_store_rename_conversation (store, 9999, "x", &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_store_set_conversation_pinned (store, 9999, TRUE, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  g_assert_true (hz_store_delete_conversation (store, a, &error));
  g_assert_no_error (error);
  g_assert_false (hz_store_delete_conversation (store, a, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_clear_pointer (&list, g_ptr_array_unref);
  list = hz_store_list_conversations (store, &error);
  g_assert_cmpuint (list->len, ==, 2);

  /* Ids are never reused (AUTOINCREMENT), so stale references cannot hit new rows. */
  g_assert_true (hz_store_delete_conversation (store, c, &error));
  gint64 d = hz_store_create_conversation (store, "New", NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (d, >, c);
}

static void
test_messages_streaming (void)
{
  g_autofree char *path = st_tmp_path ("msg.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "Chat", NULL, NULL, &error);
  g_autoptr (HzConversation) c0 = hz_store_get_conversation (store, conv, &error);
  g_assert_no_error (error);

  g_usleep (1000);
  gint64 sys = hz_store_append_message (store, conv, 0, HZ_ROLE_SYSTEM, "You are helpful.",
                                        NULL, TRUE, &error);
  g_assert_no_error (error);
  gint64 user = hz_store_append_message (store, conv, sys, HZ_ROLE_USER, "Hi there", NULL,
                                         TRUE, &error);
  g_assert_no_error (error);
  const char *sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
  gint64 reply = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "", sha,
                                          FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpint (sys, >, 0);
  g_assert_cmpint (reply, >, user);

  /* Appending bumps the conversation. */
  g_autoptr (HzConversation) c1 = hz_store_get_conversation (store, conv, &error);
  g_assert_cmpint (c1->updated_us, >, c0->updated_us);

  g_autoptr (HzMessage) m = hz_store_get_message (store, reply, &error);
  g_assert_no_error (error);
  g_assert_cmpint (m->conversation_id, ==, conv);
  g_assert_cmpint (m->parent_id, ==, user);
  g_assert_cmpint (m->role, ==, HZ_ROLE_ASSISTANT);
  g_assert_cmpstr (m->content, ==, "");
  g_assert_cmpstr (m->model_sha256, ==, sha);
  g_assert_false (m->complete);
  g_assert_cmpint (m->n_tokens, ==, 0);
  g_assert_cmpfloat (m->ttft_s, <, 0);
  g_assert_cmpfloat (m->tokens_per_s, <, 0);

  /* Streaming: content grows, stats arrive, unset arguments keep stored values. */
  g_assert_true (hz_store_update_message (store, reply, "Hello", 2, 0.25, -1, &error));
  g_assert_no_error (error);
  g_assert_true (hz_store_update_message (store, reply, "Hello, world", 5, NAN, 41.5, &error));
  g_assert_no_error (error);
  g_assert_true (hz_store_update_message (store, reply, NULL, -1, -1, -1, &error));
  g_assert_no_error (error);
  g_clear_pointer (&m, hz_message_free);
  m = hz_store_get_message (store, reply, &error);
  g_assert_cmpstr (m->content, ==, "Hello, world");
  g_assert_cmpint (m->n_tokens, ==, 5);
  g_assert_cmpfloat (m->ttft_s, ==, 0.25);
  g_assert_cmpfloat (m->tokens_per_s, ==, 41.5);
  g_assert_cmpint (m->updated_us, >=, m->created_us);
  g_assert_false (m->complete);
  g_assert_true (hz_store_set_message_complete (store, reply, &error));
  g_assert_no_error (error);
  g_clear_pointer (&m, hz_message_free);
  m = hz_store_get_message (store, reply, &error);
  g_assert_true (m->complete);

  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 3);
  g_assert_cmpint (((HzMessage *) msgs->pdata[0])->id, ==, sys);
  g_assert_cmpint (((HzMessage *) msgs->pdata[0])->role, ==, HZ_ROLE_SYSTEM);
  g_assert_cmpint (((HzMessage *) msgs->pdata[0])->parent_id, ==, 0);
  g_assert_cmpint (((HzMessage *) msgs->pdata[1])->id, ==, user);
  g_assert_cmpstr (((HzMessage *) msgs->pdata[1])->content, ==, "Hi there");
  g_assert_null (((HzMessage *) msgs->pdata[1])->model_sha256);
  g_assert_cmpint (((HzMessage *) msgs->pdata[2])->id, ==, reply);

  /* Deleting a parent clears the child's parent_id (ON DELETE SET NULL). */
  g_assert_true (hz_store_delete_message (store, user, &error));
  g_assert_no_error (error);
  g_clear_pointer (&m, hz_message_free);
  m = hz_store_get_message (store, reply, &error);
  g_assert_cmpint (m->parent_id, ==, 0);
  g_assert_null (hz_store_get_message (store, user, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_store_delete_message (store, user, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Bad arguments: nothing is written. */
  gint64 other = hz_store_create_conversation (store, "Other", NULL, NULL, &error);
  g_assert_cmpint (hz_store_append_message (store, other, reply, HZ_ROLE_USER, "x", NULL,
                                            TRUE, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_cmpint (hz_store_append_message (store, 4242, 0, HZ_ROLE_USER, "x", NULL, TRUE,
                                            &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (hz_store_append_message (store, other, 0, (HzRole) 9, "x", NULL, TRUE,
                                            &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_cmpint (hz_store_append_message (store, other, 0, HZ_ROLE_USER, NULL, NULL, TRUE,
                                            &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_store_update_message (store, 4242, "x", 1, 1, 1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_store_set_message_complete (store, 4242, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, 2);

  /* An unknown conversation lists as empty. */
  g_autoptr (GPtrArray) none = hz_store_list_messages (store, 4242, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (none->len, ==, 0);
  st_assert_integrity (store);
}

/* hz_store_open_readonly: reads a store another connection is writing (WAL), refuses every
 * write, and creates, migrates or changes nothing (missing, foreign, empty files). */
static void
test_open_readonly (void)
{
  g_autofree char *path = st_tmp_path ("ro.db");
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) writer = st_open (path);
  gint64 conv = hz_store_create_conversation (writer, "Read me", NULL, NULL, &error);
  gint64 msg = hz_store_append_message (writer, conv, 0, HZ_ROLE_USER, "a walrus on the ice",
                                        NULL, TRUE, &error);
  g_assert_no_error (error);

  g_autoptr (HzStore) ro = hz_store_open_readonly (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_store_get_schema_version (ro), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (st_query_int (ro, "PRAGMA query_only"), ==, 1);
  g_autoptr (GPtrArray) hits = hz_store_search_messages (ro, "walr", 10, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_assert_cmpint (((HzSearchHit *) hits->pdata[0])->message_id, ==, msg);
  /* what the writer commits later is seen; writes through the reader fail */
  hz_store_append_message (writer, conv, msg, HZ_ROLE_ASSISTANT, "the walrus waves", NULL,
                           TRUE, &error);
  g_assert_no_error (error);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (ro, "walrus", 10, &error);
  g_assert_cmpuint (hits->len, ==, 2);
  g_assert_cmpint (hz_store_create_conversation (ro, "no", NULL, NULL, &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_READONLY);
  g_clear_error (&error);
  g_assert_cmpint (st_query_int (writer, "SELECT count(*) FROM conversations"), ==, 1);

  /* nothing is created for a missing file, or in a missing folder */
  g_autofree char *missing = st_tmp_path ("no-such-dir/missing.db");
  g_assert_null (hz_store_open_readonly (missing, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_autofree char *missing_dir = g_path_get_dirname (missing);
  g_assert_false (g_file_test (missing_dir, G_FILE_TEST_EXISTS));

  /* an empty file (a writer would initialise it) and a foreign file stay as they are */
  g_autofree char *empty = st_tmp_path ("ro-empty.db");
  g_assert_true (g_file_set_contents (empty, "", 0, NULL));
  g_assert_null (hz_store_open_readonly (empty, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_READONLY);
  g_clear_error (&error);
  struct stat sb;
  g_assert_cmpint (stat (empty, &sb), ==, 0);
  g_assert_cmpint (sb.st_size, ==, 0);
  g_autofree char *text = st_tmp_path ("ro-text.db");
  g_assert_true (g_file_set_contents (text, "not a database at all, just words\n", -1, NULL));
  g_assert_null (hz_store_open_readonly (text, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_CORRUPT);
  g_clear_error (&error);
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (text, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, "not a database at all, just words\n");
}

static void
test_reopen_keeps_data (void)
{
  g_autofree char *path = st_tmp_path ("reopen.db");
  g_autoptr (GError) error = NULL;
  gint64 conv, ids[20];
  {
    g_autoptr (HzStore) store = st_open (path);
    conv = hz_store_create_conversation (store, "Kept", "sys", "/m.gguf", &error);
    for (int i = 0; i < 20; i++)
      {
        g_autofree char *text = g_strdup_printf ("message %d — ünïcödé ✓", i);
        ids[i] = hz_store_append_message (store, conv, i ? ids[i - 1] : 0,
                                          i % 2 ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER, text,
                                          NULL, TRUE, &error);
        g_assert_no_error (error);
      }
    g_assert_true (hz_store_update_message (store, ids[19], "last", 7, 0.5, 12.0, &error));
  }
  for (int round = 0; round < 2; round++)
    {
      g_autoptr (HzStore) store = st_open (path);
      g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (msgs->len, ==, 20);
      for (int i = 0; i < 19; i++)
        {
          g_autofree char *text = g_strdup_printf ("message %d — ünïcödé ✓", i);
          HzMessage *m = msgs->pdata[i];
          g_assert_cmpint (m->id, ==, ids[i]);
          g_assert_cmpstr (m->content, ==, text);
          g_assert_cmpint (m->parent_id, ==, i ? ids[i - 1] : 0);
          g_assert_cmpint (m->role, ==, i % 2 ? HZ_ROLE_ASSISTANT : HZ_ROLE_USER);
        }
      HzMessage *last = msgs->pdata[19];
      g_assert_cmpstr (last->content, ==, "last");
      g_assert_cmpint (last->n_tokens, ==, 7);
      g_assert_cmpfloat (last->ttft_s, ==, 0.5);
      g_assert_cmpfloat (last->tokens_per_s, ==, 12.0);
      g_autoptr (HzConversation) c = hz_store_get_conversation (store, conv, &error);
      g_assert_cmpstr (c->title, ==, "Kept");
      g_assert_cmpstr (c->system_prompt, ==, "sys");
      g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
    }
}

static void
test_cascade_delete (void)
{
  g_autofree char *path = st_tmp_path ("cascade.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 a = hz_store_create_conversation (store, "A", NULL, NULL, &error);
  gint64 b = hz_store_create_conversation (store, "B", NULL, NULL, &error);
  for (int i = 0; i < 5; i++)
    {
      hz_store_append_message (store, a, 0, HZ_ROLE_USER, "zebra in conversation a", NULL,
                               TRUE, &error);
      g_assert_no_error (error);
      hz_store_append_message (store, b, 0, HZ_ROLE_USER, "zebra in conversation b", NULL,
                               TRUE, &error);
      g_assert_no_error (error);
    }
  g_autoptr (GPtrArray) hits = hz_store_search_messages (store, "zebra", 100, &error);
  g_assert_cmpuint (hits->len, ==, 10);

  g_assert_true (hz_store_delete_conversation (store, a, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, 5);
  g_autofree char *sql = g_strdup_printf (
    "SELECT count(*) FROM messages WHERE conversation_id = %" G_GINT64_FORMAT, a);
  g_assert_cmpint (st_query_int (store, sql), ==, 0);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "zebra", 100, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 5);
  for (guint i = 0; i < hits->len; i++)
    g_assert_cmpint (((HzSearchHit *) hits->pdata[i])->conversation_id, ==, b);
  st_assert_integrity (store);
}

/* Decision: invalid UTF-8 is rejected (HZ_STORE_ERROR_INVALID) and nothing is written, so
 * everything read back is valid UTF-8 (GTK and JSON export need that). */
static void
test_invalid_utf8_rejected (void)
{
  g_autofree char *path = st_tmp_path ("utf8.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  static const char *const bad[] = {
    "abc\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80" /* surrogate */, "\xc0\xaf" /* overlong */,
    "ok \xf5\x80\x80\x80" /* > U+10FFFF */,
  };

  g_assert_cmpint (hz_store_create_conversation (store, "bad \xfe title", NULL, NULL,
                                                 &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM conversations"), ==, 0);

  gint64 conv = hz_store_create_conversation (store, "T", NULL, NULL, &error);
  const char *good = "emoji 😀, CJK 漢字, RTL שלום, combining e\xcc\x81";
  gint64 id = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, good, NULL, TRUE, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_cmpint (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, bad[i], NULL,
                                                TRUE, &error), ==, 0);
      g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_false (hz_store_update_message (store, id, bad[i], 1, -1, -1, &error));
      g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_false (hz_store_rename_conversation (store, conv, bad[i], &error));
      g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
      g_clear_error (&error);
      g_assert_null (hz_store_search_messages (store, bad[i], 10, &error));
      g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
      g_clear_error (&error);
    }
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_cmpuint (msgs->len, ==, 1);
  HzMessage *m = msgs->pdata[0];
  g_assert_cmpstr (m->content, ==, good);
  g_assert_cmpint (m->n_tokens, ==, 0);
  g_autoptr (HzConversation) c = hz_store_get_conversation (store, conv, &error);
  g_assert_cmpstr (c->title, ==, "T");
}

static void
test_search (void)
{
  g_autofree char *path = st_tmp_path ("search.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "S", NULL, NULL, &error);
  gint64 m1 = hz_store_append_message (store, conv, 0, HZ_ROLE_USER,
                                       "How do I bake sourdough bread?", NULL, TRUE, &error);
  gint64 m2 = hz_store_append_message (store, conv, 0, HZ_ROLE_ASSISTANT,
                                       "Start with a café-style levain; bread needs time.",
                                       NULL, TRUE, &error);
  gint64 m3 = hz_store_append_message (store, conv, 0, HZ_ROLE_USER,
                                       "Tell me about \"quotes\" AND NOT operators (*)", NULL,
                                       TRUE, &error);
  g_assert_no_error (error);

  g_autoptr (GPtrArray) hits = hz_store_search_messages (store, "bread", 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hits->len, ==, 2);

  /* Every word required, last word as prefix, case and accents folded. */
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "BREAD sour", 0, &error);
  g_assert_cmpuint (hits->len, ==, 1);
  HzSearchHit *h = hits->pdata[0];
  g_assert_cmpint (h->message_id, ==, m1);
  g_assert_cmpint (h->conversation_id, ==, conv);
  g_assert_nonnull (strstr (h->snippet, "\002sourdough\003"));

  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "cafe", 0, &error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_assert_cmpint (((HzSearchHit *) hits->pdata[0])->message_id, ==, m2);

  /* FTS syntax in user text is literal text, never an error. */
  const char *weird[] = { "\"quotes\" AND", "NOT operators", "(*)", "a\"b", "NEAR(", "-", "" };
  for (guint i = 0; i < G_N_ELEMENTS (weird); i++)
    {
      g_clear_pointer (&hits, g_ptr_array_unref);
      hits = hz_store_search_messages (store, weird[i], 0, &error);
      g_assert_no_error (error);
      g_assert_nonnull (hits);
    }
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "NOT operators", 0, &error);
  g_assert_cmpuint (hits->len, ==, 1);
  g_assert_cmpint (((HzSearchHit *) hits->pdata[0])->message_id, ==, m3);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "   ", 0, &error);
  g_assert_cmpuint (hits->len, ==, 0);

  /* Updates re-index; limit is honoured. */
  g_assert_true (hz_store_update_message (store, m1, "pancakes instead", -1, -1, -1, &error));
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "sourdough", 0, &error);
  g_assert_cmpuint (hits->len, ==, 0);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "pancake", 0, &error);
  g_assert_cmpuint (hits->len, ==, 1);
  for (int i = 0; i < 10; i++)
    hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "pancakes again", NULL, TRUE,
                             &error);
  g_clear_pointer (&hits, g_ptr_array_unref);
  hits = hz_store_search_messages (store, "pancakes", 4, &error);
  g_assert_cmpuint (hits->len, ==, 4);
  st_assert_integrity (store);
}

static void
test_transactions (void)
{
  g_autofree char *path = st_tmp_path ("txn.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "T", NULL, NULL, &error);

  g_assert_true (hz_store_begin (store, &error));
  g_assert_false (hz_store_begin (store, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  for (int i = 0; i < 50; i++)
    g_assert_cmpint (hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "rolled back",
                                              NULL, TRUE, &error), >, 0);
  /* A failing accessor inside the transaction undoes only itself. */
  g_assert_cmpint (hz_store_append_message (store, 777, 0, HZ_ROLE_USER, "x", NULL, TRUE,
                                            &error), ==, 0);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  hz_store_rollback (store);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, 0);

  g_assert_true (hz_store_begin (store, &error));
  for (int i = 0; i < 50; i++)
    hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "kept", NULL, TRUE, &error);
  g_assert_cmpint (hz_store_append_message (store, 777, 0, HZ_ROLE_USER, "x", NULL, TRUE,
                                            &error), ==, 0);
  g_clear_error (&error);
  g_assert_true (hz_store_commit (store, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, 50);
  g_assert_false (hz_store_commit (store, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  hz_store_rollback (store);  /* no-op */

  /* Closing with an open transaction rolls it back. */
  g_assert_true (hz_store_begin (store, &error));
  hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "lost", NULL, TRUE, &error);
  g_clear_pointer (&store, hz_store_close);
  store = st_open (path);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM messages"), ==, 50);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/open/default-path", test_open_default_path);
  g_test_add_func ("/store/open/empty-file-migrates", test_open_empty_file_migrates);
  g_test_add_func ("/store/open/private-files", test_open_private_files);
  g_test_add_func ("/store/open/readonly", test_open_readonly);
  g_test_add_func ("/store/roles", test_roles);
  g_test_add_func ("/store/conversations", test_conversations);
  g_test_add_func ("/store/messages/streaming", test_messages_streaming);
  g_test_add_func ("/store/reopen-keeps-data", test_reopen_keeps_data);
  g_test_add_func ("/store/cascade-delete", test_cascade_delete);
  g_test_add_func ("/store/invalid-utf8-rejected", test_invalid_utf8_rejected);
  g_test_add_func ("/store/search", test_search);
  g_test_add_func ("/store/transactions", test_transactions);
  return g_test_run ();
}
