/* tests/store/test-store-reply-limits.c — schema 7 (issue 20): a reply's limits (cut at its
 * token limit, earlier messages left out of the context) are stored, listed per
 * conversation, removed when cleared and with their message; bad values are refused; a
 * schema-6 file with messages migrates (no limits recorded). */
#include <glib.h>
#include "hanzo-store-limits.h"
#include "store-test-util.h"

static const HzMessageLimits *
find (GPtrArray *limits, gint64 id)
{
  for (guint i = 0; i < limits->len; i++)
    if (((HzMessageLimits *) limits->pdata[i])->message_id == id)
      return limits->pdata[i];
  return NULL;
}

static void
test_limits (void)
{
  g_autofree char *path = st_tmp_path ("limits.db");
  g_autoptr (HzStore) store = st_open (path);
  g_autoptr (GError) error = NULL;
  gint64 conv = hz_store_create_conversation (store, "c", NULL, NULL, &error);
  gint64 other = hz_store_create_conversation (store, "d", NULL, NULL, &error);
  gint64 user = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "hi", NULL, TRUE, &error);
  gint64 r1 = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "a", NULL, TRUE,
                                       &error);
  gint64 r2 = hz_store_append_message (store, conv, user, HZ_ROLE_ASSISTANT, "b", NULL, TRUE,
                                       &error);
  gint64 o1 = hz_store_append_message (store, other, 0, HZ_ROLE_USER, "x", NULL, TRUE, &error);
  g_assert_no_error (error);

  g_autoptr (GPtrArray) none = hz_store_list_message_limits (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (none->len, ==, 0);

  g_assert_true (hz_store_set_message_limits (store, r1, TRUE, 0, &error));
  g_assert_true (hz_store_set_message_limits (store, r2, FALSE, 12, &error));
  g_assert_true (hz_store_set_message_limits (store, o1, TRUE, 1, &error));
  g_assert_no_error (error);
  g_autoptr (GPtrArray) l = hz_store_list_message_limits (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (l->len, ==, 2);
  g_assert_true (find (l, r1)->cut);
  g_assert_cmpint (find (l, r1)->n_unseen, ==, 0);
  g_assert_false (find (l, r2)->cut);
  g_assert_cmpint (find (l, r2)->n_unseen, ==, 12);
  g_assert_cmpint (find (l, r2)->conversation_id, ==, conv);
  g_autoptr (GPtrArray) all = hz_store_list_message_limits (store, 0, &error);
  g_assert_cmpuint (all->len, ==, 3);

  /* replaced, then cleared */
  g_assert_true (hz_store_set_message_limits (store, r2, TRUE, 3, &error));
  g_clear_pointer (&l, g_ptr_array_unref);
  l = hz_store_list_message_limits (store, conv, &error);
  g_assert_true (find (l, r2)->cut);
  g_assert_cmpint (find (l, r2)->n_unseen, ==, 3);
  g_assert_true (hz_store_set_message_limits (store, r2, FALSE, 0, &error));
  g_clear_pointer (&l, g_ptr_array_unref);
  l = hz_store_list_message_limits (store, conv, &error);
  g_assert_cmpuint (l->len, ==, 1);
  g_assert_null (find (l, r2));

  /* refused: nothing written */
  g_assert_false (hz_store_set_message_limits (store, r2, TRUE, -1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_store_set_message_limits (store, 4242, TRUE, 1, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_limits"), ==, 2);

  /* deleted with the message and with the conversation */
  g_assert_true (hz_store_delete_message (store, r1, &error));
  g_assert_true (hz_store_delete_conversation (store, other, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_limits"), ==, 0);
  st_assert_integrity (store);
}

static void
test_migrate_from_v6 (void)
{
  g_autofree char *path = st_tmp_path ("v6.db");
  gint64 conv, reply;
  g_autoptr (GError) error = NULL;
  /* back to schema 6: the table migration 7 adds is gone */
  st_write_old_file (path, 6, "DROP TABLE message_limits;", "an old answer", &conv, &reply);
  g_autoptr (HzStore) store = st_open (path);
  g_assert_cmpint (hz_store_get_schema_version (store), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (st_query_int (store, "PRAGMA user_version"), ==, HZ_STORE_SCHEMA_VERSION);
  g_assert_cmpint (HZ_STORE_SCHEMA_VERSION, >=, HZ_STORE_SCHEMA_VERSION_LIMITS);
  g_autoptr (GPtrArray) msgs = hz_store_list_messages (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 2);
  g_assert_cmpstr (((HzMessage *) msgs->pdata[1])->content, ==, "an old answer");
  g_autoptr (GPtrArray) l = hz_store_list_message_limits (store, conv, &error);
  g_assert_cmpuint (l->len, ==, 0);
  g_assert_true (hz_store_set_message_limits (store, reply, TRUE, 3, &error));
  g_assert_no_error (error);
  st_assert_integrity (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/reply-limits/set-and-list", test_limits);
  g_test_add_func ("/store/reply-limits/migrate-from-v6", test_migrate_from_v6);
  return g_test_run ();
}
