/* tests/store/test-store-reasoning.c — schema 9 (issue 23): a thinking model's reply keeps its
 * reasoning apart from its answer (messages.content): written with the reply's text while
 * it streams (hz_store_update_reply, one transaction), read back with every message
 * (HzMessage.reasoning, "" when none), kept, replaced or removed, gone with its message;
 * bad UTF-8 is refused and writes nothing; a schema-8 file with replies migrates (they
 * read without reasoning, and take one). */
#include <glib.h>
#include <math.h>
#include "store-test-util.h"

static const HzMessage *
message (GPtrArray *msgs, gint64 id)
{
  for (guint i = 0; i < msgs->len; i++)
    if (((HzMessage *) msgs->pdata[i])->id == id)
      return msgs->pdata[i];
  g_assert_not_reached ();
}

static void
test_reasoning (void)
{
  g_autofree char *path = st_tmp_path ("reasoning.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "c", NULL, NULL, &error);
  gint64 user = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "2+2?", NULL, TRUE,
                                         &error);
  gint64 reply = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "", NULL,
                                          FALSE, &error);
  g_assert_no_error (error);

  /* streaming: the reasoning first, then the answer */
  g_assert_true (hz_store_update_reply (store, reply, "", "The user asks", 3, NAN, NAN, &error));
  g_autoptr (HzMessage) m1 = hz_store_get_message (store, reply, &error);
  g_assert_cmpstr (m1->reasoning, ==, "The user asks");
  g_assert_cmpstr (m1->content, ==, "");
  g_assert_true (hz_store_update_reply (store, reply, "4", "The user asks for 2+2: four.", 9,
                                        0.1, 20.0, &error));
  g_assert_no_error (error);
  /* NULL keeps it (hz_store_update_message() is that) */
  g_assert_true (hz_store_update_message (store, reply, "**4**", 10, -1, -1, &error));
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (message (msgs, reply)->reasoning, ==, "The user asks for 2+2: four.");
  g_assert_cmpstr (message (msgs, reply)->content, ==, "**4**");
  g_assert_cmpint (message (msgs, reply)->n_tokens, ==, 10);
  g_assert_cmpstr (message (msgs, user)->reasoning, ==, "");

  /* bad UTF-8 writes nothing, not even the content */
  g_assert_false (hz_store_update_reply (store, reply, "new", "bad \xff", -1, -1, -1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_autoptr (HzMessage) m2 = hz_store_get_message (store, reply, &error);
  g_assert_cmpstr (m2->content, ==, "**4**");
  g_assert_cmpstr (m2->reasoning, ==, "The user asks for 2+2: four.");
  /* an unknown message */
  g_assert_false (hz_store_update_reply (store, 9999, "x", "y", -1, -1, -1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_reasoning"), ==, 1);

  /* "" removes it */
  g_assert_true (hz_store_update_reply (store, reply, NULL, "", -1, -1, -1, &error));
  g_autoptr (HzMessage) m3 = hz_store_get_message (store, reply, &error);
  g_assert_cmpstr (m3->reasoning, ==, "");
  g_assert_cmpstr (m3->content, ==, "**4**");
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_reasoning"), ==, 0);

  /* gone with its message */
  g_assert_true (hz_store_update_reply (store, reply, NULL, "again", -1, -1, -1, &error));
  g_assert_true (hz_store_delete_message (store, reply, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_reasoning"), ==, 0);
  st_assert_integrity (store);
}

static void
test_migrate_from_v8 (void)
{
  g_autofree char *path = st_tmp_path ("v8.db");
  gint64 conv, reply;
  g_autoptr (GError) error = NULL;
  /* back to schema 8: the table migration 9 adds is gone */
  st_write_old_file (path, 8, "DROP TABLE message_reasoning;", "<think>old</think>an old answer",
                     &conv, &reply);
  g_autoptr (HzStore) store = st_open (path);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, 9);
  g_assert_cmpint (st_query_int (store, "PRAGMA user_version"), ==, HZ_STORE_SCHEMA_VERSION);
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 2);
  /* an old reply keeps its text as it was (the engine leaves its reasoning out of prompts) */
  g_assert_cmpstr (message (msgs, reply)->content, ==, "<think>old</think>an old answer");
  g_assert_cmpstr (message (msgs, reply)->reasoning, ==, "");
  g_assert_true (hz_store_update_reply (store, reply, "an old answer", "old", -1, -1, -1,
                                        &error));
  g_autoptr (HzMessage) m = hz_store_get_message (store, reply, &error);
  g_assert_cmpstr (m->reasoning, ==, "old");
  st_assert_integrity (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/reasoning/write-read-remove", test_reasoning);
  g_test_add_func ("/store/reasoning/migrate-from-v8", test_migrate_from_v8);
  return g_test_run ();
}
