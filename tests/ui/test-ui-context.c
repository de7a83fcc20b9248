/* test-ui-context.c — the real app, under Xvfb, with a conversation three times longer
 * than the model's context (issue 20, item 3). The model is a random-weight one with the
 * real Qwen2 vocabulary and ChatML template (tests/family-vocab.h) and a context of 256
 * tokens; replies are at most 24 tokens.
 *  - every one of 18 messages (about 800 tokens of conversation) gets an answer, never the
 *    "Message Too Long" dialog;
 *  - the conversation says once that earlier messages are beyond what the model can see:
 *    one item has the notice, on the first reply written without them, and the row shows
 *    it when built;
 *  - each reply stopped at its 24-token limit is marked as cut, in the store too: after a
 *    restart the marks and the one notice come back;
 *  - a single message longer than the context is the one error, and the dialog says so;
 *    the next message is answered (with a reply limit longer than the context: it ends
 *    when the context is full, and is not marked as cut).
 * Screenshots go to <build>/tests/ui/artifacts/.
 */
#include <hanzo/engine.h>
#include <hanzo-store.h>
#include <hanzo-store-limits.h>

#include "family-vocab.h"
#include "hz-message-item.h"
#include "hz-message-row.h"
#include "ui-test-util.h"

#define N_MESSAGES  18
#define MAX_TOKENS  24
#define N_CTX       256
#define NOTICE      "Earlier messages are beyond what the model can see"
#define CUT         "cut off at the reply length limit"

/* Visible labels saying NOTICE under `w`; *first (nullable) gets one of them. */
static guint
count_notice_labels (GtkWidget *w, GtkWidget **first)
{
  guint n = 0;
  if (GTK_IS_LABEL (w) && gtk_widget_is_visible (w) &&
      g_strcmp0 (gtk_label_get_text (GTK_LABEL (w)), NOTICE) == 0)
    {
      n++;
      if (first)
        *first = w;
    }
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    n += count_notice_labels (c, first);
  return n;
}

/* The shown branch: every user message answered, replies cut, the notice on exactly one
 * item (the first reply that did not see the oldest messages). Returns its index. */
static guint
check_branch (HzWindow *window, guint n_user)
{
  GListModel *msgs = hz_window_get_messages (window);
  guint n = g_list_model_get_n_items (msgs), users = 0, notices = 0, notice_at = 0;
  gboolean unseen_before = FALSE;
  g_assert_cmpuint (n, ==, 2 * n_user);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzMessageItem) it = g_list_model_get_item (msgs, i);
      const gboolean reply = hz_message_item_get_role (it) == HZ_ROLE_ASSISTANT;
      g_assert_cmpint (reply, ==, i % 2 == 1);   /* each question has its answer */
      users += !reply;
      if (reply)
        {
          g_assert_cmpstr (hz_message_item_get_text (it), !=, "");
          g_assert_true (hz_message_item_get_cut (it));
          g_assert_nonnull (strstr (hz_message_item_get_details (it), CUT));
        }
      if (hz_message_item_get_context_notice (it))
        {
          g_assert_false (unseen_before);      /* on the first one */
          g_assert_cmpint (hz_message_item_get_n_unseen (it), >, 0);
          notices++;
          notice_at = i;
        }
      unseen_before |= hz_message_item_get_n_unseen (it) > 0;
    }
  g_assert_cmpuint (users, ==, n_user);
  g_assert_cmpuint (notices, ==, 1);
  return notice_at;
}

/* Scroll to the row with the notice and check it says it, once. */
static void
check_notice_row (HzWindow *window, guint index)
{
  GtkListView *list = hz_window_get_message_list (window);
  GtkWidget *scrolled = gtk_widget_get_ancestor (GTK_WIDGET (list), GTK_TYPE_SCROLLED_WINDOW);
  g_assert_nonnull (scrolled);
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment (GTK_SCROLLED_WINDOW (scrolled));
  guint n = g_list_model_get_n_items (hz_window_get_messages (window));
  /* rows are built near the viewport: scroll up from about where it is until it is built */
  gint64 deadline = g_get_monotonic_time () + 20 * G_USEC_PER_SEC;
  double pos = gtk_adjustment_get_upper (adj) * index / n;
  GtkWidget *label = NULL;
  while (count_notice_labels (GTK_WIDGET (list), &label) == 0 &&
         g_get_monotonic_time () < deadline)
    {
      gtk_adjustment_set_value (adj, pos);
      hz_ui_spin (0.2);
      pos = MAX (0, pos - gtk_adjustment_get_page_size (adj) / 2);
    }
  g_assert_cmpuint (count_notice_labels (GTK_WIDGET (list), NULL), ==, 1);
  /* then bring it into view for the screenshot */
  for (int i = 0; i < 5; i++)
    {
      double x = 0, y = 0;
      label = NULL;
      count_notice_labels (GTK_WIDGET (list), &label);
      if (label == NULL || !gtk_widget_translate_coordinates (label, scrolled, 0, 0, &x, &y))
        break;
      gtk_adjustment_set_value (adj, gtk_adjustment_get_value (adj) + y -
                                     gtk_adjustment_get_page_size (adj) / 3);
      hz_ui_spin (0.2);
    }
  g_assert_cmpuint (count_notice_labels (GTK_WIDGET (list), NULL), ==, 1);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "context-notice");
}

static void
script_long (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  guint dropped_from = 0;
  for (guint i = 0; i < N_MESSAGES; i++)
    {
      g_autofree char *q = g_strdup_printf ("Question %u: tell me about the number %u and the "
                                            "numbers that come after it.", i, 7 * i);
      hz_ui_type_and_send (window, q);
      g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
      g_assert_null (hz_ui_find_message_dialog (GTK_WINDOW (window)));
      g_autoptr(HzMessageItem) last = g_list_model_get_item (hz_window_get_messages (window),
                                                             2 * i + 1);
      if (dropped_from == 0 && hz_message_item_get_n_unseen (last) > 0)
        dropped_from = i;
    }
  g_test_message ("%d messages, context %d tokens: replies from message %u on wrote without "
                  "the oldest ones", N_MESSAGES, N_CTX, dropped_from);
  g_assert_cmpuint (dropped_from, >, 0);
  guint at = check_branch (window, N_MESSAGES);
  g_assert_cmpuint (at, ==, 2 * dropped_from + 1);
  check_notice_row (window, at);

  /* the store has the marks: every reply cut, the unseen counts from the notice on */
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) limits = hz_store_list_message_limits (hz_application_get_store (app),
                                                              hz_window_get_conversation_id (window),
                                                              &error);
  g_assert_no_error (error);
  g_assert_cmpuint (limits->len, ==, N_MESSAGES);
  guint unseen = 0;
  for (guint i = 0; i < limits->len; i++)
    {
      const HzMessageLimits *l = limits->pdata[i];
      g_assert_true (l->cut);
      unseen += l->n_unseen > 0;
    }
  g_assert_cmpuint (unseen, ==, N_MESSAGES - dropped_from);
}

static gboolean
dialog_shown (gpointer window)
{
  return hz_ui_find_message_dialog (window) != NULL;
}

static void
script_restart (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 1);
  hz_window_select_conversation (window, 0);
  guint at = check_branch (window, N_MESSAGES);
  g_test_message ("after a restart: the notice above message %u", at);

  /* one message longer than the whole context: the one error, which says so */
  g_autoptr(GString) lng = g_string_new (NULL);
  for (int i = 0; i < 120; i++)
    g_string_append (lng, "the dog and the cat ");
  hz_ui_type_and_send (window, lng->str);
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_true (hz_ui_wait_for (dialog_shown, window, 10));
  GtkWidget *dialog = hz_ui_find_message_dialog (GTK_WINDOW (window));
  g_assert_cmpstr (adw_message_dialog_get_heading (ADW_MESSAGE_DIALOG (dialog)), ==,
                   "Message Too Long");
  const char *body = adw_message_dialog_get_body (ADW_MESSAGE_DIALOG (dialog));
  g_test_message ("%s", body);
  g_assert_nonnull (strstr (body, "This message alone is longer"));
  g_assert_nonnull (strstr (body, "the message is too long"));
  hz_ui_spin (0.5);
  g_autofree char *shot = hz_ui_screenshot (dialog, "context-message-too-long");
  gtk_window_close (GTK_WINDOW (dialog));

  /* and the next message is answered; with a reply limit longer than the context the
   * reply ends when the context is full, which is not a cut */
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_int (settings, "max-tokens", 10 * N_CTX);
  guint before = g_list_model_get_n_items (hz_window_get_messages (window));
  hz_ui_type_and_send (window, "And one more short question?");
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  guint after = g_list_model_get_n_items (hz_window_get_messages (window));
  g_assert_cmpuint (after, ==, before + 2);
  g_autoptr(HzMessageItem) last = g_list_model_get_item (hz_window_get_messages (window),
                                                         after - 1);
  g_assert_cmpint (hz_message_item_get_role (last), ==, HZ_ROLE_ASSISTANT);
  g_assert_cmpstr (hz_message_item_get_text (last), !=, "");
  g_test_message ("last reply: %s", hz_message_item_get_details (last));
  g_assert_false (hz_message_item_get_cut (last));
  g_assert_null (strstr (hz_message_item_get_details (last), CUT));
  g_assert_nonnull (strstr (hz_message_item_get_details (last), "context full"));
  g_settings_set_int (settings, "max-tokens", MAX_TOKENS);
}

static void
test_long_conversation (void)
{
  g_autofree char *dir = g_build_filename (hz_ui_tmpdir, "models", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_autofree char *model = hz_family_model_write (hz_family_get ("chatml"), dir, N_CTX);
  if (model == NULL)
    return;
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "temperature", 0.0);
  g_settings_set_uint64 (settings, "seed", 1234);
  g_settings_set_int (settings, "max-tokens", MAX_TOKENS);
  g_settings_sync ();

  const char *args[] = { "--model", model, NULL };
  hz_ui_run_app (args, script_long, NULL);
  hz_ui_run_app (NULL, script_restart, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/context/long-conversation", test_long_conversation);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
