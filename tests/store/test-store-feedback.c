/* test-store-feedback.c — message ratings (store/feedback.c) and the schema step that
 * added them: set, replace, remove, list; errors for bad ratings and unknown messages;
 * ratings go with their message; a file at the previous schema with a conversation written
 * before alternatives existed (every user message without a parent) migrates to a chain
 * (later migrations are re-applied on the way: they are idempotent). */
#include "hanzo-store-feedback.h"
#include "store-test-util.h"

static void
test_feedback (void)
{
  g_autofree char *path = st_tmp_path ("feedback.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  int rating = 7;

  gint64 conv = hz_store_create_conversation (store, "c", NULL, NULL, &error);
  gint64 user = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "hi", NULL, TRUE, &error);
  gint64 a1 = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "one", NULL, TRUE, &error);
  gint64 a2 = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "two", NULL, TRUE, &error);
  g_assert_no_error (error);

  g_assert_true (hz_store_get_feedback (store, a1, &rating, &error));
  g_assert_cmpint (rating, ==, 0);
  g_assert_true (hz_store_set_feedback (store, a1, 1, &error));
  g_assert_true (hz_store_set_feedback (store, a2, -1, &error));
  g_assert_true (hz_store_set_feedback (store, a1, -1, &error));  /* replaces */
  g_assert_no_error (error);
  g_assert_true (hz_store_get_feedback (store, a1, &rating, &error));
  g_assert_cmpint (rating, ==, -1);

  g_autoptr (GPtrArray) all = hz_store_list_feedback (store, conv, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 2);
  HzMessageFeedback *last = all->pdata[1];
  g_assert_cmpint (last->message_id, ==, a1);  /* changed last */
  g_assert_cmpint (last->conversation_id, ==, conv);
  g_assert_cmpint (last->updated_us, >=, last->created_us);

  g_assert_true (hz_store_set_feedback (store, a1, 0, &error));  /* removed */
  g_assert_true (hz_store_get_feedback (store, a1, &rating, &error));
  g_assert_cmpint (rating, ==, 0);
  g_assert_true (hz_store_set_feedback (store, a1, 0, &error));  /* nothing to remove: fine */

  g_assert_false (hz_store_set_feedback (store, a1, 2, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_store_set_feedback (store, 999999, 1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A rating goes with its message. */
  g_assert_true (hz_store_delete_message (store, a2, &error));
  g_autoptr (GPtrArray) none = hz_store_list_feedback (store, 0, 0, &error);
  g_assert_cmpuint (none->len, ==, 0);
  st_assert_integrity (store);
}

static void
test_migrate_chains_old_messages (void)
{
  g_autofree char *path = st_tmp_path ("legacy.db");
  g_autoptr (GError) error = NULL;
  gint64 conv, ids[4];
  {
    g_autoptr (HzStore) store = st_open (path);
    conv = hz_store_create_conversation (store, "old", NULL, NULL, &error);
    ids[0] = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "q1", NULL, TRUE, &error);
    ids[1] = hz_store_append_message (store, conv, ids[0], HZ_ROLE_ASSISTANT, "a1", NULL, TRUE, &error);
    ids[2] = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "q2", NULL, TRUE, &error);
    ids[3] = hz_store_append_message (store, conv, ids[2], HZ_ROLE_ASSISTANT, "a2", NULL, TRUE, &error);
    g_assert_no_error (error);
    g_autofree char *back = g_strdup_printf ("BEGIN; DROP TABLE message_feedback;"
                                             " PRAGMA user_version = %d; COMMIT;",
                                             HZ_STORE_SCHEMA_VERSION_FEEDBACK - 1);
    gboolean ok = hz_store_exec (store, back, &error);
    g_assert_no_error (error);
    g_assert_true (ok);
  }
  g_autoptr (HzStore) store = st_open (path);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 4);
  for (guint i = 0; i < 4; i++)
    g_assert_cmpint (((HzMessage *) msgs->pdata[i])->parent_id, ==, i ? ids[i - 1] : 0);
  g_assert_true (hz_store_set_feedback (store, ids[3], 1, &error));
  g_assert_no_error (error);
  st_assert_integrity (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/feedback/ratings", test_feedback);
  g_test_add_func ("/store/feedback/migrate-chains-old-messages", test_migrate_chains_old_messages);
  return g_test_run ();
}
