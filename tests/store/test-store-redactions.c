/* Redacted message copies and the redaction vault (store/redactions.c, migration 4). */
#include <glib.h>
#include "hanzo-store-redactions.h"
#include "store-test-util.h"

static HzStore *
open_tmp (void)
{
  g_autofree char *path = st_tmp_path ("redactions.db");
  return st_open (path);
}

static void
test_copies (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = open_tmp ();
  g_assert_cmpint (hz_store_get_schema_version (store), >=, 4);
  gint64 conv = hz_store_create_conversation (store, "t", NULL, NULL, &error);
  g_assert_no_error (error);
  gint64 m1 = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "mail ann@example.com", NULL, TRUE, &error);
  gint64 m2 = hz_store_append_message (store, conv, 0, HZ_ROLE_ASSISTANT, "", NULL, FALSE, &error);
  g_assert_no_error (error);

  /* only complete messages wait for the gate */
  g_autoptr (GArray) todo = hz_store_list_messages_to_redact (store, 1, 100, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (todo->len, ==, 1);
  g_assert_cmpint (g_array_index (todo, gint64, 0), ==, m1);

  g_autoptr (HzMessage) msg = hz_store_get_message (store, m1, &error);
  HzMessageRedaction r = { .message_id = m1, .redacted = (char *) "mail [EMAIL_1]",
                           .spans_json = (char *) "[]", .n_spans = 1, .redactor_version = 1,
                           .source_updated_us = msg->updated_us };
  g_assert_true (hz_store_put_message_redaction (store, &r, &error));
  g_assert_no_error (error);
  g_autoptr (HzMessageRedaction) got = hz_store_get_message_redaction (store, m1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got->redacted, ==, "mail [EMAIL_1]");
  g_assert_cmpint (got->conversation_id, ==, conv);
  g_assert_cmpint (got->role, ==, HZ_ROLE_USER);

  g_autoptr (GArray) todo2 = hz_store_list_messages_to_redact (store, 1, 100, &error);
  g_assert_cmpuint (todo2->len, ==, 0);
  /* a newer gate version redoes it */
  g_autoptr (GArray) todo3 = hz_store_list_messages_to_redact (store, 2, 100, &error);
  g_assert_cmpuint (todo3->len, ==, 1);

  /* an edit makes the copy stale: listed for the gate, hidden from the learner's view */
  g_usleep (2000);
  g_assert_true (hz_store_update_message (store, m1, "mail bob@example.com", -1, -1, -1, &error));
  g_autoptr (GArray) todo4 = hz_store_list_messages_to_redact (store, 1, 100, &error);
  g_assert_cmpuint (todo4->len, ==, 1);
  g_autoptr (GPtrArray) view = hz_store_list_message_redactions (store, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (view->len, ==, 0);

  /* errors */
  HzMessageRedaction bad = r;
  bad.message_id = 999999;
  g_assert_false (hz_store_put_message_redaction (store, &bad, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  bad = r;
  bad.redacted = (char *) "\xff";
  g_assert_false (hz_store_put_message_redaction (store, &bad, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (hz_store_get_message_redaction (store, m2, &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
}

static void
test_vault (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (HzStore) store = open_tmp ();
  gint64 conv = hz_store_create_conversation (store, "v", NULL, NULL, &error);
  gint64 other = hz_store_create_conversation (store, "w", NULL, NULL, &error);
  gint64 m = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "x", NULL, TRUE, &error);
  g_assert_no_error (error);
  g_assert_true (hz_store_vault_add (store, conv, "[PERSON_1]", "PERSON", "Mara Quinley", &error));
  g_assert_true (hz_store_vault_add (store, conv, "[PERSON_1]", "PERSON", "Mara Quinley", &error)); /* idempotent */
  g_assert_true (hz_store_vault_add (store, conv, "[EMAIL_1]", "EMAIL", "mq@example.org", &error));
  g_assert_no_error (error);
  g_assert_false (hz_store_vault_add (store, conv, "[PERSON_1]", "PERSON", "Someone Else", &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_false (hz_store_vault_add (store, 424242, "[PERSON_1]", "PERSON", "X", &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (hz_store_vault_add (store, conv, "", "PERSON", "X", &error));
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_INVALID);
  g_clear_error (&error);

  g_autoptr (GPtrArray) v = hz_store_vault_list (store, conv, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (v->len, ==, 2);
  g_assert_cmpstr (((HzVaultEntry *) v->pdata[0])->placeholder, ==, "[PERSON_1]");
  g_assert_cmpstr (((HzVaultEntry *) v->pdata[0])->original, ==, "Mara Quinley");
  g_autoptr (GPtrArray) v2 = hz_store_vault_list (store, other, &error);
  g_assert_cmpuint (v2->len, ==, 0);

  /* the vault and the copies go with their conversation */
  HzMessageRedaction r = { .message_id = m, .redacted = (char *) "x", .redactor_version = 1 };
  g_assert_true (hz_store_put_message_redaction (store, &r, &error));
  g_assert_true (hz_store_delete_conversation (store, conv, &error));
  g_assert_no_error (error);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM redaction_vault"), ==, 0);
  g_assert_cmpint (st_query_int (store, "SELECT count(*) FROM message_redactions"), ==, 0);
  st_assert_integrity (store);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);
  g_test_add_func ("/store/redactions/copies", test_copies);
  g_test_add_func ("/store/redactions/vault", test_vault);
  return g_test_run ();
}
