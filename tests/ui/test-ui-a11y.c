/* test-ui-a11y.c — accessibility of the real app under Xvfb, with GTK's test accessibility
 * backend (GTK_A11Y=test: the properties, states and relations GTK would give a screen
 * reader, read back with gtk_test_accessible_*).
 *
 * Every control (buttons, toggles, switches, check buttons, entries, text views, spin
 * buttons, drop-downs, scales, level and progress bars) in the main window, showing a
 * conversation with Markdown replies, and in the model manager (its Library and Find Models
 * pages), with a model imported, must
 * have an accessible name: an accessible label, a labelled-by relation, or (buttons, check
 * buttons) a text label inside. The test walks the widget trees (what is not hidden: hidden
 * widgets are not in the accessibility tree) and lists every control that has none. Then a reply streams in: its row is busy while it is written and, when it
 * ends, its accessible label and description say who wrote it and what, as plain text
 * (Markdown rendered: no "**" read out) (how a finished reply reaches a screen reader with
 * GTK before 4.14, which has no announcements).
 * Screenshots: a11y-reply, a11y-model-manager.
 */
#include <hanzo-store.h>

#include "hz-message-item.h"
#include "hz-message-row.h"
#include "hz-model-manager.h"
#include "ui-test-util.h"

/* ------------------------------------------------------------------ the walk */

static gboolean
is_control (GtkWidget *w)
{
  return GTK_IS_BUTTON (w) || GTK_IS_MENU_BUTTON (w) || GTK_IS_SWITCH (w) ||
         GTK_IS_CHECK_BUTTON (w) || GTK_IS_ENTRY (w) || GTK_IS_SEARCH_ENTRY (w) ||
         GTK_IS_PASSWORD_ENTRY (w) || GTK_IS_TEXT_VIEW (w) || GTK_IS_SPIN_BUTTON (w) ||
         GTK_IS_DROP_DOWN (w) || GTK_IS_SCALE (w) || GTK_IS_LEVEL_BAR (w) ||
         GTK_IS_PROGRESS_BAR (w);
}

/* Whether a label under `w` shows some text (a button's name comes from its content). */
static gboolean
has_text_inside (GtkWidget *w)
{
  if (GTK_IS_LABEL (w) && *gtk_label_get_text (GTK_LABEL (w)) != '\0')
    return TRUE;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    if (has_text_inside (c))
      return TRUE;
  return FALSE;
}

static gboolean
has_name (GtkWidget *w)
{
  GtkAccessible *a = GTK_ACCESSIBLE (w);
  if (gtk_test_accessible_has_property (a, GTK_ACCESSIBLE_PROPERTY_LABEL) ||
      gtk_test_accessible_has_relation (a, GTK_ACCESSIBLE_RELATION_LABELLED_BY))
    return TRUE;
  /* name from content: a button or check button with a text label */
  return (GTK_IS_BUTTON (w) || GTK_IS_MENU_BUTTON (w) || GTK_IS_CHECK_BUTTON (w)) &&
         has_text_inside (w);
}

/* A control that is part of another one, which is the one named: the toggle inside a
 * GtkMenuButton, the text and +/- buttons of a spin button or entry. */
static gboolean
is_part_of_control (GtkWidget *w)
{
  for (GtkWidget *p = gtk_widget_get_parent (w); p != NULL; p = gtk_widget_get_parent (p))
    if (GTK_IS_MENU_BUTTON (p) || GTK_IS_SPIN_BUTTON (p) || GTK_IS_ENTRY (p) ||
        GTK_IS_SEARCH_ENTRY (p) || GTK_IS_PASSWORD_ENTRY (p) || GTK_IS_DROP_DOWN (p))
      return TRUE;
  return FALSE;
}

/* A short description of `w` for the failure message: its type, CSS classes, tooltip and
 * the types of its ancestors up to the window. */
static void
describe (GtkWidget *w, GString *out)
{
  g_auto(GStrv) classes = gtk_widget_get_css_classes (w);
  g_autofree char *cls = g_strjoinv (".", classes);
  const char *tip = gtk_widget_get_tooltip_text (w);
  g_string_append_printf (out, "  %s.%s%s%s%s in", G_OBJECT_TYPE_NAME (w), cls,
                          tip ? " (tooltip “" : "", tip ? tip : "", tip ? "”)" : "");
  for (GtkWidget *p = gtk_widget_get_parent (w); p != NULL; p = gtk_widget_get_parent (p))
    g_string_append_printf (out, " < %s", G_OBJECT_TYPE_NAME (p));
  g_string_append_c (out, '\n');
}

/* Walk `root`: count the controls and describe those without an accessible name. Hidden
 * widgets (and what they hold) are not in the accessibility tree: skipped. */
static void
check_names (GtkWidget *root, guint *n_controls, GString *unnamed)
{
  if (!gtk_widget_get_visible (root))
    return;
  if (is_control (root) && !is_part_of_control (root))
    {
      (*n_controls)++;
      if (!has_name (root))
        describe (root, unnamed);
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    check_names (c, n_controls, unnamed);
}

static void
assert_all_named (GtkWidget *root, const char *what, guint min_controls)
{
  guint n = 0;
  g_autoptr(GString) unnamed = g_string_new (NULL);
  check_names (root, &n, unnamed);
  g_test_message ("%s: %u controls checked", what, n);
  if (unnamed->len > 0)
    g_error ("%s: controls without an accessible name:\n%s", what, unnamed->str);
  g_assert_cmpuint (n, >=, min_controls);
}

/* ------------------------------------------------------------------ main window */

static void
fill_store (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HzStore) store = hz_store_open (NULL, &error);
  g_assert_no_error (error);
  gint64 conv = hz_store_create_conversation (store, "Accessible chat", NULL, NULL, &error);
  g_assert_no_error (error);
  gint64 q = hz_store_append_message (store, conv, 0, HZ_ROLE_USER, "Show me some code",
                                      NULL, TRUE, &error);
  g_assert_no_error (error);
  hz_store_append_message (store, conv, q, HZ_ROLE_ASSISTANT,
                           "Here it is:\n\n```c\nint main (void) { return 0; }\n```\n\n"
                           "| a | b |\n|---|---|\n| 1 | 2 |\n\nDone.", NULL, TRUE, &error);
  g_assert_no_error (error);
}

/* The row showing `item` under `root`, or NULL. */
static GtkWidget *
find_row (GtkWidget *root, HzMessageItem *item)
{
  if (HZ_IS_MESSAGE_ROW (root) && hz_message_row_get_item (HZ_MESSAGE_ROW (root)) == item)
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_row (c, item);
      if (found)
        return found;
    }
  return NULL;
}

static void
assert_accessible (const char *failure)
{
  if (failure != NULL)
    g_error ("accessibility: %s", failure);
}

static void
script_main (HzApplication *app, HzWindow *window, gpointer data)
{
  hz_window_select_conversation (window, 0);
  hz_ui_spin (0.5);
  GListModel *messages = hz_window_get_messages (window);
  g_assert_cmpuint (g_list_model_get_n_items (messages), ==, 2);
  assert_all_named (GTK_WIDGET (window), "main window", 10);

  /* A reply streams in: its row is busy and says it is being written; at the end its
   * label and description carry the reply, and it is no longer busy. */
  g_autoptr(HzMessageItem) reply = g_list_model_get_item (messages, 1);
  GtkWidget *row = find_row (GTK_WIDGET (window), reply);
  g_assert_nonnull (row);
  hz_message_item_set_text (reply, "");
  hz_message_item_set_streaming (reply, TRUE);
  hz_message_item_append_text (reply, "The answer ");
  hz_ui_spin (0.1);
  g_autofree char *busy = gtk_test_accessible_check_state (GTK_ACCESSIBLE (row),
                                                          GTK_ACCESSIBLE_STATE_BUSY, TRUE);
  assert_accessible (busy);
  g_autofree char *writing = gtk_test_accessible_check_property (
    GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, "Assistant, writing");
  assert_accessible (writing);
  hz_message_item_append_text (reply, "is **42**.");
  hz_message_item_set_streaming (reply, FALSE);
  hz_ui_spin (0.2);
  g_autofree char *idle = gtk_test_accessible_check_state (GTK_ACCESSIBLE (row),
                                                          GTK_ACCESSIBLE_STATE_BUSY, FALSE);
  assert_accessible (idle);
  g_autofree char *label = gtk_test_accessible_check_property (
    GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_LABEL, "Assistant");
  assert_accessible (label);
  g_autofree char *desc = gtk_test_accessible_check_property (
    GTK_ACCESSIBLE (row), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, "The answer is 42.");
  assert_accessible (desc);
  assert_all_named (GTK_WIDGET (window), "main window after a reply", 10);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "a11y-reply");
}

static void
test_main_window (void)
{
  fill_store ();
  hz_ui_run_app (NULL, script_main, NULL);
}

/* ------------------------------------------------------------------ model manager */

static gboolean
manager_idle (gpointer manager)
{
  return !hz_model_manager_is_busy (HZ_MODEL_MANAGER (manager));
}

static gboolean
has_one_model (gpointer lib)
{
  return hz_model_library_is_loaded (lib) &&
         g_list_model_get_n_items (hz_model_library_get_models (lib)) == 1;
}

static void
script_manager (HzApplication *app, HzWindow *window, gpointer data)
{
  const char *model = data;
  HzModelLibrary *lib = hz_application_get_model_library (app);
  GtkWidget *manager = GTK_WIDGET (hz_application_show_model_manager (app));
  gtk_window_set_default_size (GTK_WINDOW (manager), 640, 900);
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 60));

  g_autoptr(GFile) file = g_file_new_for_path (model);
  GSList list = { file, NULL };
  hz_model_manager_import_files (HZ_MODEL_MANAGER (manager), &list);
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 60));
  g_assert_true (hz_ui_wait_for (has_one_model, lib, 60));
  hz_ui_spin (0.5);
  assert_all_named (manager, "model manager", 5);
  g_autofree char *shot = hz_ui_screenshot (manager, "a11y-model-manager");
  gtk_window_destroy (GTK_WINDOW (manager));
}

static void
test_model_manager (void)
{
  g_autofree char *model = hz_test_shared_path ("models/stories260K.gguf");
  if (model == NULL)
    return;
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "memory-bandwidth", 20e9);  /* no benchmark here */
  hz_ui_run_app (NULL, script_manager, model);
}

int
main (int argc, char *argv[])
{
  g_setenv ("GTK_A11Y", "test", TRUE);  /* before GTK starts: the test AT context */
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/a11y/main-window", test_main_window);
  g_test_add_func ("/ui/a11y/model-manager", test_model_manager);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
