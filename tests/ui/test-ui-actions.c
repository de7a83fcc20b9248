/* test-ui-actions.c — message actions in the real app under Xvfb with
 * ../shared/models/stories260K.gguf (worker slowed to 20 ms a token): send; stop (Esc's
 * action) keeps the partial reply; regenerate (Ctrl+R's action) keeps the earlier answer
 * as an alternative stored as a sibling (same parent_id) and the pager pages between
 * them; edit a user message and re-run from there (the old branch stays reachable); copy
 * a message to the clipboard; thumbs up/down stored as feedback. Screenshots:
 * actions-stopped, actions-regenerated, actions-edited, actions-rated.
 */
#include <hanzo-store.h>
#include <hanzo-store-feedback.h>

#include "hz-message-item.h"
#include "ui-test-util.h"

static gboolean
reply_has_text (gpointer window)
{
  GListModel *msgs = hz_window_get_messages (window);
  guint n = g_list_model_get_n_items (msgs);
  g_autoptr(HzMessageItem) last = n ? g_list_model_get_item (msgs, n - 1) : NULL;
  return last && hz_message_item_get_role (last) == HZ_ROLE_ASSISTANT &&
         strlen (hz_message_item_get_text (last)) > 20;
}

static HzMessageItem *
message_at (HzWindow *window, guint i)
{
  return g_list_model_get_item (hz_window_get_messages (window), i);
}

static guint
n_messages (HzWindow *window)
{
  return g_list_model_get_n_items (hz_window_get_messages (window));
}

static void
activate_on (HzWindow *window, const char *action, HzMessageItem *item)
{
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), action, "x",
                                             hz_message_item_get_id (item)));
}

static void
script_actions (HzApplication *app, HzWindow *window, gpointer data)
{
  HzStore *store = hz_application_get_store (app);
  g_autoptr(GError) error = NULL;
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));

  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));

  /* Send, then stop while it streams: the partial text stays. */
  gtk_text_buffer_set_text (buffer, "Once upon a time", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (reply_has_text, window, 60));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 5));
  g_assert_cmpuint (n_messages (window), ==, 2);
  g_autoptr(HzMessageItem) user = message_at (window, 0);
  g_autoptr(HzMessageItem) first = message_at (window, 1);
  g_assert_cmpstr (hz_message_item_get_details (first), ==, "Stopped");
  g_assert_cmpint (hz_message_item_get_parent_id (first), ==, hz_message_item_get_id (user));
  hz_ui_spin (0.3);
  g_autofree char *s1 = hz_ui_screenshot (GTK_WIDGET (window), "actions-stopped");

  /* Regenerate (what Ctrl+R does): a second answer, the first kept as an alternative. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.regenerate", NULL));
  g_assert_true (hz_window_is_generating (window));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_cmpuint (n_messages (window), ==, 2);
  g_autoptr(HzMessageItem) second = message_at (window, 1);
  g_assert_true (second != first);
  guint n_alts = 0;
  g_assert_cmpuint (hz_message_item_get_alternative (second, &n_alts), ==, 1);
  g_assert_cmpuint (n_alts, ==, 2);
  g_autoptr(HzMessage) m1 = hz_store_get_message (store, hz_message_item_get_id (first), &error);
  g_assert_no_error (error);
  g_autoptr(HzMessage) m2 = hz_store_get_message (store, hz_message_item_get_id (second), &error);
  g_assert_no_error (error);
  g_assert_cmpint (m1->parent_id, ==, m2->parent_id);
  g_assert_cmpint (m2->parent_id, ==, hz_message_item_get_id (user));
  g_assert_true (m2->complete);
  /* Its context gauge and speed are shown. */
  guint n_ctx = 0;
  g_assert_cmpuint (hz_message_item_get_context (second, &n_ctx), >, 0);
  g_assert_cmpuint (n_ctx, >, 0);
  g_assert_nonnull (strstr (hz_message_item_get_details (second), "tokens/s"));
  hz_ui_spin (0.3);
  g_autofree char *s2 = hz_ui_screenshot (GTK_WIDGET (window), "actions-regenerated");

  /* Page back to the first answer and forward again. */
  activate_on (window, "win.previous-alternative", second);
  g_assert_true (g_list_model_get_item (hz_window_get_messages (window), 1) == (gpointer) first);
  g_object_unref (first);  /* the ref taken by the line above */
  activate_on (window, "win.next-alternative", first);
  {
    g_autoptr(HzMessageItem) shown = message_at (window, 1);
    g_assert_true (shown == second);
  }

  /* Copy a message. */
  activate_on (window, "win.copy-message", second);
  g_autofree char *copied = hz_ui_clipboard_text (gtk_widget_get_clipboard (GTK_WIDGET (window)));
  g_assert_cmpstr (copied, ==, hz_message_item_get_text (second));

  /* Thumbs up, then down: stored as feedback; again: removed. */
  activate_on (window, "win.rate-good", second);
  int rating = 0;
  g_assert_true (hz_store_get_feedback (store, hz_message_item_get_id (second), &rating, &error));
  g_assert_cmpint (rating, ==, 1);
  activate_on (window, "win.rate-bad", second);
  g_assert_true (hz_store_get_feedback (store, hz_message_item_get_id (second), &rating, &error));
  g_assert_cmpint (rating, ==, -1);
  g_assert_cmpint (hz_message_item_get_rating (second), ==, -1);
  hz_ui_spin (0.3);
  g_autofree char *s3 = hz_ui_screenshot (GTK_WIDGET (window), "actions-rated");
  activate_on (window, "win.rate-bad", second);
  g_assert_true (hz_store_get_feedback (store, hz_message_item_get_id (second), &rating, &error));
  g_assert_cmpint (rating, ==, 0);
  activate_on (window, "win.rate-good", second);

  /* Edit the user message and re-run from there: a sibling user message with a reply. */
  activate_on (window, "win.edit-message", user);
  g_assert_cmpint (hz_window_get_editing (window), ==, hz_message_item_get_id (user));
  gtk_text_buffer_set_text (buffer, "Once upon a time there was a dog", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_cmpint (hz_window_get_editing (window), ==, 0);
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_cmpuint (n_messages (window), ==, 2);
  g_autoptr(HzMessageItem) edited = message_at (window, 0);
  g_assert_cmpstr (hz_message_item_get_text (edited), ==, "Once upon a time there was a dog");
  g_assert_cmpint (hz_message_item_get_parent_id (edited), ==, hz_message_item_get_parent_id (user));
  g_assert_cmpuint (hz_message_item_get_alternative (edited, &n_alts), ==, 1);
  g_assert_cmpuint (n_alts, ==, 2);
  hz_ui_spin (0.3);
  g_autofree char *s4 = hz_ui_screenshot (GTK_WIDGET (window), "actions-edited");

  /* The old branch is still there, with its newest answer. */
  activate_on (window, "win.previous-alternative", edited);
  {
    g_autoptr(HzMessageItem) u = message_at (window, 0);
    g_autoptr(HzMessageItem) a = message_at (window, 1);
    g_assert_true (u == user);
    g_assert_true (a == second);
  }

  /* And the store holds all five messages of the tree. */
  g_autoptr(GPtrArray) all = hz_store_list_messages (store, hz_window_get_conversation_id (window),
                                                     &error);
  g_assert_no_error (error);
  g_assert_cmpuint (all->len, ==, 5);
}

static void
test_actions (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autofree char *model = g_canonicalize_filename (path, NULL);
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "temperature", 0.8);
  g_settings_set_int (settings, "max-tokens", 64);
  g_settings_sync ();

  const char *args[] = { "--model", model, NULL };
  hz_ui_run_app (args, script_actions, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  g_setenv ("HZ_WORKER_TOKEN_DELAY_US", "20000", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/actions/stop-regenerate-page-copy-rate-edit", test_actions);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
