/* test-ui-bad-input.c — the real app under Xvfb with bad input: a database file that is
 * not SQLite, a text file named x.gguf, a missing model file, a cut model file opened
 * while a model serves (which serves on), a prompt longer than the model's context. Each gives a clear dialog; nothing crashes; nothing stored is lost.
 */
#include <hanzo-store.h>

#include "hz-conversation-item.h"
#include "hz-message-item.h"
#include "ui-test-util.h"

typedef struct {
  const char *heading;
  const char *body_part;
  GtkWidget  *dialog;
  HzWindow   *window;
} DialogWait;

static gboolean
dialog_shown (gpointer data)
{
  DialogWait *w = data;
  w->dialog = hz_ui_find_message_dialog (GTK_WINDOW (w->window));
  return w->dialog != NULL;
}

/* Wait for the error dialog, check its texts, screenshot it (when `shot`), close it. */
static void
expect_dialog (HzWindow *window, const char *heading, const char *body_part, const char *shot)
{
  DialogWait w = { heading, body_part, NULL, window };

  g_assert_true (hz_ui_wait_for (dialog_shown, &w, 60));
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG (w.dialog);
  g_test_message ("dialog: %s — %s", adw_message_dialog_get_heading (dialog),
                  adw_message_dialog_get_body (dialog));
  g_assert_cmpstr (adw_message_dialog_get_heading (dialog), ==, heading);
  g_assert_nonnull (strstr (adw_message_dialog_get_body (dialog), body_part));
  hz_ui_spin (0.3);
  if (shot != NULL)
    {
      g_autofree char *path = hz_ui_screenshot (w.dialog, shot);
    }
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_close (GTK_WINDOW (w.dialog));  /* as Esc does: the close response */
  hz_ui_spin (0.2);
  g_assert_null (hz_ui_find_message_dialog (GTK_WINDOW (window)));
}

static char *
remembered_model (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  return g_settings_get_string (settings, "model-path");
}

/* ------------------------------------------------------------ corrupt database */

static void
script_corrupt_store (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_null (hz_application_get_store (app));
  expect_dialog (window, "Conversations Cannot Be Saved", "untouched", NULL);
}

static void
test_corrupt_store (void)
{
  g_autofree char *db = hz_store_default_path ();
  g_autofree char *dir = g_path_get_dirname (db);
  const char garbage[] = "This is not an SQLite database, and it must stay as it is.\n";
  g_autofree char *after = NULL;
  gsize len = 0;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (db, garbage, -1, NULL));

  hz_ui_run_app (NULL, script_corrupt_store, NULL);

  g_assert_true (g_file_get_contents (db, &after, &len, NULL));
  g_assert_cmpmem (after, len, garbage, strlen (garbage));
  g_assert_cmpint (g_unlink (db), ==, 0);
}

/* ------------------------------------------------------------ not a model */

typedef struct {
  GtkWindow *window;
  GtkWidget *chooser;
} ChooserWait;

static gboolean
chooser_has_file (gpointer chooser)
{
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));
  G_GNUC_END_IGNORE_DEPRECATIONS
  return file != NULL;
}

static gboolean
chooser_shown (gpointer data)
{
  ChooserWait *cw = data;
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  cw->chooser = hz_ui_find_toplevel (GTK_TYPE_FILE_CHOOSER_DIALOG, cw->window);
  G_GNUC_END_IGNORE_DEPRECATIONS
  return cw->chooser != NULL;
}

static void
script_bad_model (HzApplication *app, HzWindow *window, gpointer data)
{
  expect_dialog (window, "Cannot Open Model", "x.gguf", "bad-model-dialog");
  g_assert_false (hz_window_is_model_ready (window));
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "bad-model-window");
  g_assert_false (hz_window_is_generating (window));
  /* Sending is off without a model; the window is still there and usable. */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  gtk_text_buffer_set_text (buffer, "hello", -1);
  gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL);
  hz_ui_spin (0.2);
  g_assert_false (hz_window_is_generating (window));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 0);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (window)));

  /* "Open Model…" with the same file, through the file chooser: the same clear error. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.open-model", NULL));
  ChooserWait cw = { GTK_WINDOW (window), NULL };
  g_assert_true (hz_ui_wait_for (chooser_shown, &cw, 10));
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkFileFilter *filter = gtk_file_chooser_get_filter (GTK_FILE_CHOOSER (cw.chooser));
  g_assert_nonnull (filter);
  g_assert_cmpstr (gtk_file_filter_get_name (filter), ==, "GGUF Models");
  g_autoptr(GFile) file = g_file_new_for_path (data);
  g_assert_true (gtk_file_chooser_set_file (GTK_FILE_CHOOSER (cw.chooser), file, NULL));
  g_assert_true (hz_ui_wait_for (chooser_has_file, cw.chooser, 10));  /* folder loads async */
  gtk_dialog_response (GTK_DIALOG (cw.chooser), GTK_RESPONSE_ACCEPT);
  G_GNUC_END_IGNORE_DEPRECATIONS
  expect_dialog (window, "Cannot Open Model", "x.gguf", NULL);
}

static void
test_bad_model (void)
{
  g_autofree char *path = g_build_filename (hz_ui_tmpdir, "x.gguf", NULL);
  g_assert_true (g_file_set_contents (path, "this is a text file, not a GGUF model\n", -1, NULL));

  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script_bad_model, path);

  /* A file that did not load is not remembered. */
  g_autofree char *remembered = remembered_model ();
  g_assert_cmpstr (remembered, ==, "");
}

static void
script_missing_model (HzApplication *app, HzWindow *window, gpointer data)
{
  expect_dialog (window, "Cannot Open Model", "missing.gguf", NULL);
  g_assert_false (hz_window_is_model_ready (window));
}

static void
test_missing_model (void)
{
  g_autofree char *path = g_build_filename (hz_ui_tmpdir, "no-such-dir", "missing.gguf", NULL);
  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script_missing_model, NULL);
  g_autofree char *remembered = remembered_model ();
  g_assert_cmpstr (remembered, ==, "");
}

/* ------------------------------------------------------------ a bad model while one serves */

/* As `hanzo-desktop --model bad.gguf` sent to the running instance (its command line
 * calls hz_application_open_model(…, TRUE)): the dialog says why, once; the model used
 * before serves on (header, sending, the remembered model). */
static void
script_bad_model_keeps (HzApplication *app, HzWindow *window, gpointer data)
{
  const char *bad = data;
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  HzEngineWorker *worker = hz_application_get_worker (app);
  g_autofree char *good = g_strdup (hz_engine_worker_get_model_path (worker));
  g_autofree char *remembered_before = remembered_model ();
  g_assert_cmpstr (remembered_before, ==, good);

  hz_application_open_model (app, bad, TRUE);
  expect_dialog (window, "Cannot Open Model", "bad.gguf", NULL);
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_cmpstr (hz_engine_worker_get_model_path (worker), ==, good);
  hz_ui_spin (0.3);
  g_assert_null (hz_ui_find_message_dialog (GTK_WINDOW (window)));   /* reported once */
  g_autofree char *text = hz_ui_collect_text (GTK_WIDGET (window));
  g_assert_null (strstr (text, "could not be loaded"));
  g_assert_nonnull (strstr (text, "stories260K"));
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "bad-model-keeps-working");

  /* sending works with the model that serves on */
  hz_ui_type_and_send (window, "Once upon a time");
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 2);
  g_autoptr(HzMessageItem) reply = g_list_model_get_item (hz_window_get_messages (window), 1);
  g_assert_cmpstr (hz_message_item_get_text (reply), !=, "");
  g_autofree char *remembered = remembered_model ();
  g_assert_cmpstr (remembered, ==, good);
}

static void
test_bad_model_keeps_working_one (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true (g_file_get_contents (path, &data, &len, NULL));
  g_autofree char *bad = g_build_filename (hz_ui_tmpdir, "bad.gguf", NULL);
  g_assert_true (g_file_set_contents (bad, data, (gssize) (len / 2), NULL));   /* cut */
  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script_bad_model_keeps, bad);
}

/* ------------------------------------------------------------ prompt too long */

static void
script_too_long (HzApplication *app, HzWindow *window, gpointer data)
{
  g_autoptr(GString) text = g_string_new (NULL);
  for (int i = 0; i < 400; i++)
    g_string_append (text, "the little dog ran to the big tree and ");

  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  gtk_text_buffer_set_text (buffer, text->str, -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 60));
  expect_dialog (window, "Message Too Long", "context", "prompt-too-long-dialog");

  /* The user's message is kept (shown and stored); no empty reply is left behind. */
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 1);
  g_autoptr(HzConversationItem) conv = g_list_model_get_item (hz_window_get_conversations (window), 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) msgs = hz_store_list_messages (hz_application_get_store (app),
                                                      hz_conversation_item_get_id (conv), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (msgs->len, ==, 1);
  g_autofree char *stripped = g_strstrip (g_strdup (text->str));
  g_assert_cmpstr (((HzMessage *) msgs->pdata[0])->content, ==, stripped);

  /* The app still answers a short message. */
  gtk_text_buffer_set_text (buffer, "Once upon a time", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 3);
  g_autoptr(HzMessageItem) reply = g_list_model_get_item (hz_window_get_messages (window), 2);
  g_assert_cmpstr (hz_message_item_get_text (reply), !=, "");
}

static void
test_prompt_too_long (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script_too_long, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/bad-input/corrupt-store", test_corrupt_store);
  g_test_add_func ("/ui/bad-input/not-a-model", test_bad_model);
  g_test_add_func ("/ui/bad-input/missing-model", test_missing_model);
  g_test_add_func ("/ui/bad-input/bad-model-keeps-working-one", test_bad_model_keeps_working_one);
  g_test_add_func ("/ui/bad-input/prompt-too-long", test_prompt_too_long);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
