/* test-ui-sidebar.c — the conversation list in the real app under Xvfb, on a store filled
 * beforehand (no model needed): a Markdown reply rendered (code block with Copy, table,
 * list, LaTeX as source); search across all chats (FTS5, matches in bold) and opening a
 * result; rename; pin; the per-conversation system prompt; export as Markdown and JSON;
 * delete with an undo toast, then delete for good; the keyboard shortcuts and the shortcuts
 * window; the preferences window (GSettings); a narrow window folds to one pane.
 * Screenshots: markdown, search-results, renamed-pinned, export-done, delete-undo-toast,
 * delete-undone, shortcuts, preferences, narrow.
 */
#include <hanzo-store.h>
#include <json-glib/json-glib.h>

#include "hz-conversation-item.h"
#include "hz-message-item.h"
#include "hz-preferences-window.h"
#include "ui-test-util.h"

static const char markdown_reply[] =
  "## Borrowing in Rust\n\n"
  "A reference must not outlive its **owner**. Use `&T` to *borrow*:\n\n"
  "```rust\nfn longest<'a>(x: &'a str, y: &'a str) -> &'a str {\n    if x.len() > y.len() { x } else { y }\n}\n```\n\n"
  "| Kind | Syntax |\n|---|---|\n| shared | `&T` |\n| mutable | `&mut T` |\n\n"
  "1. One mutable borrow, or\n2. any number of shared ones.\n\n"
  "The rule in math: $\\forall r: \\text{life}(r) \\subseteq \\text{life}(o)$";

static void
fill_store (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzStore) store = hz_store_open (NULL, &error);
  g_assert_no_error (error);
  const struct { const char *title, *user, *reply; } convs[] = {
    { "Trip to Kyoto", "Plan two days in Kyoto", "Day one: Fushimi Inari early, then Gion." },
    { "Cooking pasta", "How long do I boil pasta?", "Boil dried pasta 9 to 11 minutes, fresh pasta 2 to 3." },
    { "Rust lifetimes", "Explain borrowing", markdown_reply },
  };
  for (guint i = 0; i < G_N_ELEMENTS (convs); i++)
    {
      gint64 c = hz_store_create_conversation (store, convs[i].title, NULL, NULL, &error);
      g_assert_no_error (error);
      gint64 u = hz_store_append_message (store, c, 0, HZ_ROLE_USER, convs[i].user, NULL, TRUE,
                                          &error);
      g_assert_no_error (error);
      hz_store_append_message (store, c, u, HZ_ROLE_ASSISTANT, convs[i].reply, NULL, TRUE, &error);
      g_assert_no_error (error);
    }
}

static GtkWidget *
find_widget (GtkWidget *root, gboolean (*match) (GtkWidget *, gpointer), gpointer data)
{
  if (match (root, data))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget (c, match, data);
      if (found)
        return found;
    }
  return NULL;
}

static gboolean
is_list_of (GtkWidget *w, gpointer model)
{
  if (!GTK_IS_LIST_VIEW (w))
    return FALSE;
  GtkSelectionModel *sel = gtk_list_view_get_model (GTK_LIST_VIEW (w));
  return sel && GTK_IS_NO_SELECTION (sel) &&
         gtk_no_selection_get_model (GTK_NO_SELECTION (sel)) == model;
}

static gboolean
is_search_entry (GtkWidget *w, gpointer data)
{
  return GTK_IS_SEARCH_ENTRY (w);
}

static gboolean
is_spin (GtkWidget *w, gpointer data)
{
  return GTK_IS_SPIN_BUTTON (w);
}

static gboolean
has_results (gpointer window)
{
  return g_list_model_get_n_items (hz_window_get_search_results (window)) > 0;
}

typedef struct {
  HzWindow  *window;
  GtkWidget *found;
} Find;

static gboolean
dialog_shown (gpointer data)
{
  Find *f = data;
  f->found = hz_ui_find_message_dialog (GTK_WINDOW (f->window));
  return f->found != NULL;
}

static gboolean
dialog_gone (gpointer data)
{
  return !dialog_shown (data);
}

static gboolean
prefs_shown (gpointer data)
{
  Find *f = data;
  f->found = hz_ui_find_toplevel (HZ_TYPE_PREFERENCES_WINDOW, GTK_WINDOW (f->window));
  return f->found != NULL;
}

static gboolean
shortcuts_shown (gpointer window)
{
  return hz_ui_find_toplevel (GTK_TYPE_SHORTCUTS_WINDOW, window) != NULL;
}

static gboolean
file_exists (gpointer path)
{
  return g_file_test (path, G_FILE_TEST_EXISTS);
}

static guint
n_conversations (HzWindow *window)
{
  return g_list_model_get_n_items (hz_window_get_conversations (window));
}

static guint
position_of (HzWindow *window, const char *title)
{
  for (guint i = 0; i < n_conversations (window); i++)
    {
      g_autoptr(HzConversationItem) c = g_list_model_get_item (hz_window_get_conversations (window), i);
      if (g_strcmp0 (hz_conversation_item_get_title (c), title) == 0)
        return i;
    }
  g_assert_not_reached ();
}

/* Answer the text dialog that `action` opens with `text`. */
static void
answer_text_dialog (HzWindow *window, const char *action, const char *text)
{
  Find f = { window, NULL };
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), action, NULL));
  g_assert_true (hz_ui_wait_for (dialog_shown, &f, 10));
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  GtkWidget *child = adw_message_dialog_get_extra_child (ADW_MESSAGE_DIALOG (f.found));
  if (GTK_IS_EDITABLE (child))
    gtk_editable_set_text (GTK_EDITABLE (child), text);
  else
    gtk_text_buffer_set_text (gtk_text_view_get_buffer (GTK_TEXT_VIEW (
      gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (child)))), text, -1);
  /* What clicking the button does: respond, then close. */
  adw_message_dialog_response (ADW_MESSAGE_DIALOG (f.found), "apply");
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_destroy (GTK_WINDOW (f.found));
  g_assert_true (hz_ui_wait_for (dialog_gone, &f, 10));
}

static void
script_sidebar (HzApplication *app, HzWindow *window, gpointer data)
{
  HzStore *store = hz_application_get_store (app);
  g_autoptr(GError) error = NULL;

  /* Newest first: the Markdown conversation is on top. */
  g_assert_cmpuint (n_conversations (window), ==, 3);
  hz_window_select_conversation (window, position_of (window, "Rust lifetimes"));
  g_assert_cmpuint (g_list_model_get_n_items (hz_window_get_messages (window)), ==, 2);
  hz_ui_spin (0.5);
  g_autofree char *s1 = hz_ui_screenshot (GTK_WIDGET (window), "markdown");

  /* Search all chats and open a result. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.search", NULL));
  GtkWidget *entry = find_widget (GTK_WIDGET (window), is_search_entry, NULL);
  g_assert_nonnull (entry);
  gtk_editable_set_text (GTK_EDITABLE (entry), "pasta minu");
  g_assert_true (hz_ui_wait_for (has_results, window, 10));
  g_autoptr(HzConversationItem) hit = g_list_model_get_item (hz_window_get_search_results (window), 0);
  g_assert_cmpstr (hz_conversation_item_get_title (hit), ==, "Cooking pasta");
  g_assert_nonnull (strstr (hz_conversation_item_get_snippet (hit), "<b>pasta</b>"));
  g_assert_nonnull (strstr (hz_conversation_item_get_snippet (hit), "<b>minutes</b>"));
  hz_ui_spin (0.3);
  g_autofree char *s2 = hz_ui_screenshot (GTK_WIDGET (window), "search-results");
  GtkWidget *results = find_widget (GTK_WIDGET (window), is_list_of,
                                    hz_window_get_search_results (window));
  g_assert_nonnull (results);
  g_signal_emit_by_name (results, "activate", 0);
  g_autoptr(HzConversation) pasta = hz_store_get_conversation (store,
    hz_window_get_conversation_id (window), &error);
  g_assert_no_error (error);
  g_assert_cmpstr (pasta->title, ==, "Cooking pasta");
  gtk_editable_set_text (GTK_EDITABLE (entry), "");
  hz_ui_spin (0.3);

  /* Rename and pin: stored, and pinned conversations list first. */
  answer_text_dialog (window, "conv.rename", "Italian cooking");
  g_autoptr(HzConversation) renamed = hz_store_get_conversation (store, pasta->id, &error);
  g_assert_cmpstr (renamed->title, ==, "Italian cooking");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "conv.pin", NULL));
  g_autoptr(HzConversation) pinned = hz_store_get_conversation (store, pasta->id, &error);
  g_assert_true (pinned->pinned);
  g_assert_cmpuint (position_of (window, "Italian cooking"), ==, 0);

  /* The system prompt of this conversation. */
  answer_text_dialog (window, "conv.system-prompt", "Answer like an Italian grandmother.");
  g_autoptr(HzConversation) prompted = hz_store_get_conversation (store, pasta->id, &error);
  g_assert_cmpstr (prompted->system_prompt, ==, "Answer like an Italian grandmother.");
  g_assert_cmpstr (hz_window_get_system_prompt (window), ==, "Answer like an Italian grandmother.");
  hz_ui_spin (0.3);
  g_autofree char *s3 = hz_ui_screenshot (GTK_WIDGET (window), "renamed-pinned");

  /* Export as Markdown and JSON. */
  g_autofree char *md_path = g_build_filename (hz_ui_tmpdir, "export.md", NULL);
  g_autofree char *json_path = g_build_filename (hz_ui_tmpdir, "export.json", NULL);
  g_autoptr(GFile) md_file = g_file_new_for_path (md_path);
  g_autoptr(GFile) json_file = g_file_new_for_path (json_path);
  hz_window_export_to_file (window, HZ_EXPORT_MARKDOWN, md_file);
  hz_window_export_to_file (window, HZ_EXPORT_JSON, json_file);
  g_assert_true (hz_ui_wait_for (file_exists, md_path, 10));
  g_assert_true (hz_ui_wait_for (file_exists, json_path, 10));
  hz_ui_spin (0.2);
  g_autofree char *md = NULL;
  g_assert_true (g_file_get_contents (md_path, &md, NULL, NULL));
  g_assert_true (g_str_has_prefix (md, "# Italian cooking\n"));
  g_assert_nonnull (strstr (md, "Answer like an Italian grandmother."));
  g_assert_nonnull (strstr (md, "How long do I boil pasta?"));
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_assert_true (json_parser_load_from_file (parser, json_path, &error));
  g_assert_no_error (error);
  JsonObject *root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member (root, "title"), ==, "Italian cooking");
  JsonArray *msgs = json_object_get_array_member (root, "messages");
  g_assert_cmpuint (json_array_get_length (msgs), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (msgs, 1), "role"),
                   ==, "assistant");
  g_autofree char *s3e = hz_ui_screenshot (GTK_WIDGET (window), "export-done");  /* its notice */

  /* Delete with undo: gone from the list, back after Undo, still stored. */
  gint64 kyoto_id;
  {
    hz_window_select_conversation (window, position_of (window, "Trip to Kyoto"));
    kyoto_id = hz_window_get_conversation_id (window);
  }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "conv.delete", NULL));
  g_assert_cmpuint (n_conversations (window), ==, 2);
  g_assert_cmpint (hz_window_get_conversation_id (window), ==, 0);
  hz_ui_spin (2.5);  /* the export notice (2 s) goes first */
  g_autofree char *s4 = hz_ui_screenshot (GTK_WIDGET (window), "delete-undo-toast");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.undo-delete", "x", kyoto_id));
  g_assert_cmpuint (n_conversations (window), ==, 3);
  hz_ui_spin (0.3);
  g_autofree char *s4u = hz_ui_screenshot (GTK_WIDGET (window), "delete-undone");
  hz_window_commit_deletes (window);
  g_autoptr(HzConversation) kept = hz_store_get_conversation (store, kyoto_id, &error);
  g_assert_no_error (error);
  g_assert_nonnull (kept);

  /* Delete for good (the toast ends without Undo). */
  hz_window_select_conversation (window, position_of (window, "Trip to Kyoto"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "conv.delete", NULL));
  hz_window_commit_deletes (window);
  g_autoptr(HzConversation) gone = hz_store_get_conversation (store, kyoto_id, &error);
  g_assert_null (gone);
  g_assert_error (error, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_cmpuint (n_conversations (window), ==, 2);

  /* Keyboard shortcuts of the issue: new chat, search, regenerate, the shortcuts window
   * (Ctrl+?, which shows it); Esc (stop) is a key binding of the window (test-ui-chat). */
  static const struct { const char *action, *accel; } shortcuts[] = {
    { "win.new-chat", "<Control>n" }, { "win.search", "<Control>k" },
    { "win.search", "<Control>f" }, { "win.regenerate", "<Control>r" },
    { "win.show-help-overlay", "<Control>question" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (shortcuts); i++)
    {
      g_auto(GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                   shortcuts[i].action);
      g_assert_true (g_strv_contains ((const char *const *) accels, shortcuts[i].accel));
    }
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.show-help-overlay", NULL));
  g_assert_true (hz_ui_wait_for (shortcuts_shown, window, 10));
  GtkWidget *help = hz_ui_find_toplevel (GTK_TYPE_SHORTCUTS_WINDOW, GTK_WINDOW (window));
  hz_ui_spin (0.5);
  g_autofree char *s_help = hz_ui_screenshot (help, "shortcuts");
  gtk_window_destroy (GTK_WINDOW (help));

  /* Preferences: the spin buttons write GSettings. */
  Find f = { window, NULL };
  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  g_assert_true (hz_ui_wait_for (prefs_shown, &f, 10));
  GtkWidget *spin = find_widget (f.found, is_spin, NULL);  /* the first: temperature */
  g_assert_nonnull (spin);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 1.25);
  g_assert_cmpfloat_with_epsilon (g_settings_get_double (hz_application_get_settings (app),
                                                         "temperature"), 1.25, 1e-9);
  hz_ui_spin (0.5);
  g_autofree char *s5 = hz_ui_screenshot (f.found, "preferences");
  gtk_window_destroy (GTK_WINDOW (f.found));

  /* A narrow window shows one pane at a time. */
  g_assert_false (hz_window_is_folded (window));
  gtk_window_set_default_size (GTK_WINDOW (window), 420, 640);
  hz_window_select_conversation (window, 0);
  hz_ui_spin (1.0);
  g_test_message ("window %d x %d, folded: %d", gtk_widget_get_width (GTK_WIDGET (window)),
                  gtk_widget_get_height (GTK_WIDGET (window)), hz_window_is_folded (window));
  if (gtk_widget_get_width (GTK_WIDGET (window)) <= 420)
    g_assert_true (hz_window_is_folded (window));
  g_autofree char *s6 = hz_ui_screenshot (GTK_WIDGET (window), "narrow");
}

static void
test_sidebar (void)
{
  fill_store ();
  hz_ui_run_app (NULL, script_sidebar, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/sidebar/search-rename-pin-export-delete-prefs", test_sidebar);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
