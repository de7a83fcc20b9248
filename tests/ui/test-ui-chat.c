/* test-ui-chat.c — the real app, under Xvfb, with ../shared/models/stories260K.gguf:
 * send "Once upon a time", wait for the streamed reply, compare it with what the engine
 * produces directly for the same prompt and settings; restart the app on the same data
 * and check the conversation is listed with its messages intact; with a slowed-down worker,
 * the partial reply is in the store while it streams and Stop (win.stop, Esc) ends it
 * early, keeping its text and its token count (also in the saves while it streams);
 * closing the window mid-reply keeps both; switching quickly between conversations
 * (clicks, read in the background) ends on the last one chosen, never on an earlier,
 * slower read.
 * Screenshots go to <build>/tests/ui/artifacts/.
 */
#include <hanzo/engine.h>
#include <hanzo-store.h>

#include "hz-conversation-item.h"
#include "hz-message-item.h"
#include "ui-test-util.h"

#define PROMPT "Once upon a time"

static char *model_path;

/* ------------------------------------------------------------------ helpers */

static void
set_greedy_settings (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "temperature", 0.0);
  g_settings_set_double (settings, "top-p", 1.0);
  g_settings_set_uint64 (settings, "seed", 1234);
  g_settings_sync ();
}

/* The reply of the engine itself for PROMPT, with the app's settings (greedy). */
static char *
engine_reply (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_autoptr(HzModel) model = hz_model_load (model_path, NULL, &error);
  g_assert_no_error (error);
  g_autoptr(HzContext) ctx = hz_context_new (model, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (hz_model_chat_template (model), ==, HZ_CHAT_TEMPLATE_NONE);

  gsize n = 0;
  g_autofree HzToken *tokens = hz_model_tokenize (model, PROMPT, -1, TRUE, FALSE, &n);
  g_assert_cmpuint (n, >, 0);

  HzGenerateParams params;
  hz_generate_params_init (&params);
  params.sampler.temperature = (float) g_settings_get_double (settings, "temperature");
  params.sampler.top_p = (float) g_settings_get_double (settings, "top-p");
  params.sampler.seed = g_settings_get_uint64 (settings, "seed");
  params.n_predict = g_settings_get_int (settings, "max-tokens");
  g_assert_cmpfloat (params.sampler.temperature, ==, 0.0f);

  char *text = hz_context_generate (ctx, tokens, n, &params, NULL, NULL, NULL, NULL, NULL,
                                    &error);
  g_assert_no_error (error);
  g_assert_nonnull (text);
  return text;
}

static HzMessageItem *
message_at (HzWindow *window, guint i)
{
  return g_list_model_get_item (hz_window_get_messages (window), i);
}

/* ------------------------------------------------------------------ run 1: chat */

typedef struct {
  guint  n_token_signals;
  GString *streamed;
} Chat;

static void
on_token (HzEngineWorker *worker, guint request, const char *text, guint n_generated,
          Chat *chat)
{
  chat->n_token_signals++;
  g_string_append (chat->streamed, text);
}

static void
script_chat (HzApplication *app, HzWindow *window, gpointer data)
{
  Chat chat = { 0, g_string_new (NULL) };
  const char *expected = data;

  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 0);

  gulong h = g_signal_connect (hz_application_get_worker (app), "token",
                               G_CALLBACK (on_token), &chat);
  hz_ui_type_and_send (window, PROMPT);
  g_assert_true (hz_window_is_generating (window));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_signal_handler_disconnect (hz_application_get_worker (app), h);

  /* The composer was cleared, the chat shows the exchange, the reply streamed in. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  g_assert_cmpint (gtk_text_buffer_get_char_count (buffer), ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 2);
  g_autoptr(HzMessageItem) user = message_at (window, 0);
  g_autoptr(HzMessageItem) reply = message_at (window, 1);
  g_assert_cmpint (hz_message_item_get_role (user), ==, HZ_ROLE_USER);
  g_assert_cmpstr (hz_message_item_get_text (user), ==, PROMPT);
  g_assert_cmpint (hz_message_item_get_role (reply), ==, HZ_ROLE_ASSISTANT);
  g_assert_false (hz_message_item_get_streaming (reply));
  g_assert_cmpuint (chat.n_token_signals, >, 0);
  g_assert_cmpstr (chat.streamed->str, ==, expected);
  g_assert_cmpstr (hz_message_item_get_text (reply), ==, expected);
  g_test_message ("reply: %s", expected);

  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 1);

  hz_ui_spin (0.5);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "chat-reply");
  g_string_free (chat.streamed, TRUE);
}

/* ------------------------------------------------------------------ run 2: restart */

typedef struct {
  GtkWindow *window;
  GtkWidget *about;
} AboutWait;

#if !ADW_CHECK_VERSION (1, 5, 0)
static gboolean
about_shown (gpointer data)
{
  AboutWait *aw = data;
  aw->about = hz_ui_find_toplevel (ADW_TYPE_ABOUT_WINDOW, aw->window);
  return aw->about != NULL;
}
#endif

static void
script_restart (HzApplication *app, HzWindow *window, gpointer data)
{
  const char *expected = data;

  /* The model comes back from GSettings (no --model this time). */
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_nonnull (hz_engine_worker_get_model_path (hz_application_get_worker (app)));
  g_assert_true (g_str_has_suffix (hz_engine_worker_get_model_path (hz_application_get_worker (app)),
                                   "stories260K.gguf"));

  GListModel *convs = hz_window_get_conversations (window);
  g_assert_cmpuint (g_list_model_get_n_items (convs), ==, 1);
  g_autoptr(HzConversationItem) conv = g_list_model_get_item (convs, 0);
  g_assert_cmpstr (hz_conversation_item_get_title (conv), ==, PROMPT);

  hz_window_select_conversation (window, 0);
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 2);
  g_autoptr(HzMessageItem) user = message_at (window, 0);
  g_autoptr(HzMessageItem) reply = message_at (window, 1);
  g_assert_cmpstr (hz_message_item_get_text (user), ==, PROMPT);
  g_assert_cmpstr (hz_message_item_get_text (reply), ==, expected);

  /* The store has the reply complete, with its stats and the model's hash. */
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) msgs = hz_store_list_messages (hz_application_get_store (app),
                                                      hz_conversation_item_get_id (conv), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 2);
  HzMessage *m = msgs->pdata[1];
  g_assert_true (m->complete);
  g_assert_cmpint (m->role, ==, HZ_ROLE_ASSISTANT);
  g_assert_cmpint (m->parent_id, ==, ((HzMessage *) msgs->pdata[0])->id);
  g_assert_cmpint (m->n_tokens, >, 0);
  g_assert_cmpstr (m->content, ==, expected);

  hz_ui_spin (0.5);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "chat-restored");

  /* About: an about window (dialog on newer libadwaita) opens. */
#if !ADW_CHECK_VERSION (1, 5, 0)
  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  AboutWait aw = { GTK_WINDOW (window), NULL };
  g_assert_true (hz_ui_wait_for (about_shown, &aw, 10));
  g_assert_cmpstr (adw_about_window_get_application_name (ADW_ABOUT_WINDOW (aw.about)), ==, "Hanzo");
  gtk_window_close (GTK_WINDOW (aw.about));
#endif
}

/* ------------------------------------------------------------------ run 3: stop */

/* With HZ_WORKER_TOKEN_DELAY_US (20 ms a token, see main()) a reply streams for seconds. */

static gboolean
reply_has_text (gpointer window)
{
  GListModel *msgs = hz_window_get_messages (window);
  guint n = g_list_model_get_n_items (msgs);
  g_autoptr(HzMessageItem) last = n ? g_list_model_get_item (msgs, n - 1) : NULL;
  return last && hz_message_item_get_role (last) == HZ_ROLE_ASSISTANT &&
         *hz_message_item_get_text (last) != '\0';
}

static guint
n_conversations_shown (HzWindow *window)
{
  return g_list_model_get_n_items (hz_window_get_conversations (window));
}

static gboolean
shows_two_messages (gpointer window)
{
  return g_list_model_get_n_items (hz_window_get_messages (window)) == 2;
}

static gboolean
shows_four_messages (gpointer window)
{
  return g_list_model_get_n_items (hz_window_get_messages (window)) == 4;
}

/* The chat shows `n` messages, all of conversation `conv` in the store. */
static void
check_messages_of (HzApplication *app, HzWindow *window, gint64 conv, guint n)
{
  GListModel *msgs = hz_window_get_messages (window);
  g_assert_cmpuint (g_list_model_get_n_items (msgs), ==, n);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HzMessageItem) item = g_list_model_get_item (msgs, i);
      g_autoptr(HzMessage) m = hz_store_get_message (hz_application_get_store (app),
                                                     hz_message_item_get_id (item), &error);
      g_assert_no_error (error);
      g_assert_cmpint (m->conversation_id, ==, conv);
    }
}

/* The token count of the last "token" signal (engine-worker.h) of the reply streaming. */
static void
on_token_count (HzEngineWorker *worker, guint request, const char *text, guint n_generated,
                guint *last)
{
  *last = n_generated;
}

/* Once the model is ready: a new chat, PROMPT sent, the reply's token count followed in
 * `n_generated`; returns (the handler to disconnect) once the reply shows text. */
static gulong
send_in_new_chat (HzApplication *app, HzWindow *window, guint *n_generated)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.new-chat", NULL));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 0);
  gulong h = g_signal_connect (hz_application_get_worker (app), "token",
                               G_CALLBACK (on_token_count), n_generated);
  hz_ui_type_and_send (window, PROMPT);
  g_assert_true (hz_window_is_generating (window));
  g_assert_true (hz_ui_wait_for (reply_has_text, window, 60));
  return h;
}

static void
script_stop (HzApplication *app, HzWindow *window, gpointer data)
{
  const char *expected = data;
  g_autoptr(GError) error = NULL;
  guint n_generated = 0;

  gulong h = send_in_new_chat (app, window, &n_generated);
  g_autoptr(HzMessageItem) reply = message_at (window, 1);

  /* While it streams, the partial reply reaches the store at least once a second. */
  hz_ui_spin (1.2);
  g_assert_true (hz_window_is_generating (window));
  g_autoptr(HzMessage) partial = hz_store_get_message (hz_application_get_store (app),
                                                       hz_message_item_get_id (reply), &error);
  g_assert_no_error (error);
  g_assert_false (partial->complete);
  g_assert_cmpstr (partial->content, !=, "");
  g_assert_true (g_str_has_prefix (hz_message_item_get_text (reply), partial->content));
  g_assert_true (g_str_has_prefix (expected, partial->content));
  /* ... with the tokens generated so far (a crash now leaves the real count, not 0) */
  g_test_message ("saved while streaming: %" G_GINT64_FORMAT " tokens (%u streamed by now)",
                  partial->n_tokens, n_generated);
  g_assert_cmpint (partial->n_tokens, >, 0);
  g_assert_cmpint (partial->n_tokens, <=, n_generated);

  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "chat-streaming");

  /* Stop (what Esc does): the reply ends within a token and keeps its text. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.stop", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 5));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_conversations (window)), ==, 2);
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 2);
  const char *text = hz_message_item_get_text (reply);
  g_assert_true (g_str_has_prefix (expected, text));
  g_assert_cmpuint (strlen (text), <, strlen (expected));
  g_assert_cmpstr (hz_message_item_get_details (reply), ==, "Stopped");
  g_assert_false (hz_message_item_get_streaming (reply));

  /* What was shown is what was stored, marked complete. */
  g_autoptr(HzMessage) m = hz_store_get_message (hz_application_get_store (app),
                                                 hz_message_item_get_id (reply), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (m->content, ==, text);
  g_assert_true (m->complete);
  g_assert_cmpint (m->n_tokens, >=, n_generated);
  g_signal_handler_disconnect (hz_application_get_worker (app), h);

  /* And the app still answers afterwards, in the same conversation. */
  hz_ui_type_and_send (window, PROMPT);
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 4);
  g_autoptr(HzMessageItem) last = message_at (window, 3);
  g_assert_cmpstr (hz_message_item_get_text (last), ==, expected);

  /* Switching quickly between conversations (clicks: read in the background) shows the
   * last one chosen, never a slower earlier read. */
  gint64 this_conv = hz_window_get_conversation_id (window);
  g_assert_cmpuint (n_conversations_shown (window), ==, 2);
  g_autoptr(HzConversationItem) top = g_list_model_get_item (hz_window_get_conversations (window), 0);
  g_assert_cmpint (hz_conversation_item_get_id (top), ==, this_conv);
  g_autoptr(HzConversationItem) other = g_list_model_get_item (hz_window_get_conversations (window), 1);
  g_assert_cmpint (hz_conversation_item_get_id (other), !=, this_conv);
  for (guint round = 0; round < 3; round++)
    {
      hz_ui_click_conversation (window, 0);
      hz_ui_click_conversation (window, 1);
    }
  g_assert_cmpint (hz_window_get_conversation_id (window), ==, hz_conversation_item_get_id (other));
  g_assert_true (hz_ui_wait_for (shows_two_messages, window, 10));
  hz_ui_spin (0.5);  /* the earlier reads (4 messages) would have arrived by now */
  check_messages_of (app, window, hz_conversation_item_get_id (other), 2);
  hz_ui_click_conversation (window, 0);
  g_assert_true (hz_ui_wait_for (shows_four_messages, window, 10));
  check_messages_of (app, window, this_conv, 4);
  g_autoptr(HzMessageItem) end = message_at (window, 3);
  g_assert_cmpstr (hz_message_item_get_text (end), ==, expected);
}

/* ------------------------------------------------------------------ run 4: close */

/* Closing the window mid-reply keeps the text shown and the number of tokens it took
 * (issue 20: it was saved as 0). */
static void
script_close (HzApplication *app, HzWindow *window, gpointer data)
{
  const char *expected = data;
  g_autoptr(GError) error = NULL;
  guint n_generated = 0;

  gulong h = send_in_new_chat (app, window, &n_generated);
  hz_ui_spin (0.3);   /* less than the periodic save: the close itself must save */
  g_assert_true (hz_window_is_generating (window));
  g_autoptr(HzMessageItem) reply = message_at (window, 1);
  const gint64 id = hz_message_item_get_id (reply);
  g_autofree char *shown = g_strdup (hz_message_item_get_text (reply));
  const guint streamed = n_generated;

  gtk_window_destroy (GTK_WINDOW (window));
  g_signal_handler_disconnect (hz_application_get_worker (app), h);

  g_autoptr(HzMessage) m = hz_store_get_message (hz_application_get_store (app), id, &error);
  g_assert_no_error (error);
  g_test_message ("closed mid-reply: %" G_GINT64_FORMAT " tokens saved, %u streamed",
                  m->n_tokens, streamed);
  g_assert_true (m->complete);
  g_assert_cmpstr (m->content, ==, shown);
  g_assert_true (g_str_has_prefix (expected, m->content));
  g_assert_cmpuint (strlen (m->content), <, strlen (expected));
  g_assert_cmpint (m->n_tokens, >, 0);
  g_assert_cmpint (m->n_tokens, ==, streamed);
}

/* ------------------------------------------------------------------ tests */

static void
test_chat_and_restart (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  model_path = g_canonicalize_filename (path, NULL);

  set_greedy_settings ();
  g_autofree char *expected = engine_reply ();
  g_assert_cmpstr (expected, !=, "");

  const char *args1[] = { "--model", model_path, NULL };
  hz_ui_run_app (args1, script_chat, expected);

  hz_ui_run_app (NULL, script_restart, expected);

  hz_ui_run_app (NULL, script_stop, expected);

  hz_ui_run_app (NULL, script_close, expected);
  g_clear_pointer (&model_path, g_free);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  /* Slow the worker down (20 ms a token) so that streaming, the periodic save and Stop
   * can be observed; set before any thread exists (setenv is not thread-safe). */
  g_setenv ("HZ_WORKER_TOKEN_DELAY_US", "20000", TRUE);
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/chat/send-restart-stop", test_chat_and_restart);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
