/* test-ui-window.c — the chat window in the real app under Xvfb (issue 20, item 7):
 *
 * /ui/window/narrow: the window's minimum width (gtk_widget_measure of the window, with a
 * model whose name is long in the header's model button) is at most the width the
 * metainfo promises (<display_length compare="ge"> of data/ai.hanzo.Desktop.metainfo.xml.in),
 * and a window of that width shows the chat folded, with nothing cut.
 * /ui/window/code-paste: a code block pasted into the composer (through the clipboard) and
 * sent keeps its leading indentation in the message and the store; blank lines around it
 * and trailing white space go.
 * /ui/window/first-reply: from sending the first message of a new chat until the reply is
 * done, the empty-state page is never drawn while the chat page shows (no cross-fade of
 * the picture over the first streamed tokens).
 *
 * Uses stories260K and stories-distill Q8_0 from the shared data (skips without them).
 */
#include <hanzo-store.h>
#include <unistd.h>

#include "hz-conversation-item.h"
#include "hz-message-item.h"
#include "ui-test-util.h"

/* hz_ui_find_widget() match: a GtkStack with a page named `name`. */
static gboolean
is_stack_with (GtkWidget *w, gconstpointer name)
{
  return GTK_IS_STACK (w) && gtk_stack_get_child_by_name (GTK_STACK (w), name) != NULL;
}

/* The width the metainfo promises (display_length compare="ge"), in pixels. */
static int
promised_width (void)
{
  const char *src = g_getenv ("HZ_SOURCE_DIR");
  g_autofree char *path = g_build_filename (src ? src : ".", "data",
                                            "ai.hanzo.Desktop.metainfo.xml.in", NULL);
  g_autofree char *xml = NULL;
  g_assert_true (g_file_get_contents (path, &xml, NULL, NULL));
  g_autoptr(GRegex) re = g_regex_new ("<display_length compare=\"ge\">([0-9]+)</display_length>",
                                      0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  g_assert_true (g_regex_match (re, xml, 0, &m));
  g_autofree char *v = g_match_info_fetch (m, 1);
  return (int) g_ascii_strtoll (v, NULL, 10);
}

/* Prints the minimum width of `w` and of its descendants that ask for `floor` or more. */
static void
print_wide (GtkWidget *w, int floor, int depth)
{
  int min = 0;
  if (!gtk_widget_get_visible (w))
    return;
  gtk_widget_measure (w, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  if (min < floor)
    return;
  g_test_message ("%*s%s%s%s: %d px", depth * 2, "", G_OBJECT_TYPE_NAME (w),
                  gtk_widget_get_name (w)[0] ? " " : "",
                  g_str_equal (gtk_widget_get_name (w), G_OBJECT_TYPE_NAME (w))
                  ? "" : gtk_widget_get_name (w), min);
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    print_wide (c, floor, depth + 1);
}

static gboolean
library_loaded (gpointer app)
{
  HzModelLibrary *lib = hz_application_get_model_library (app);
  return hz_model_library_is_loaded (lib) &&
         g_list_model_get_n_items (hz_model_library_get_models (lib)) == 2;
}

static gboolean
width_is (gpointer data)
{
  GtkWidget *w = data;
  return gtk_widget_get_width (w) == GPOINTER_TO_INT (g_object_get_data (G_OBJECT (w), "want"));
}

static void
script_narrow (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  g_assert_true (hz_ui_wait_for (library_loaded, app, 30));
  hz_ui_spin (0.3);
  const int promised = promised_width ();
  /* the window's content: without a compositor (Xvfb) GTK frames a window with a solid
   * border instead of a shadow outside it ("solid-csd"); a screen's width is the content's */
  GtkWidget *content = gtk_window_get_child (GTK_WINDOW (window));
  int min = 0, min_window = 0;
  gtk_widget_measure (content, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  gtk_widget_measure (GTK_WIDGET (window), GTK_ORIENTATION_HORIZONTAL, -1, &min_window, NULL,
                      NULL, NULL);
  g_test_message ("the metainfo promises %d px; the window's content is at least %d px wide "
                  "(the window with its frame here: %d px)", promised, min, min_window);
  print_wide (content, MIN (min, promised) * 3 / 4, 0);
  g_assert_cmpint (min, <=, promised);

  /* at that width: folded (one pane), the content drawn at the width asked */
  gtk_window_set_default_size (GTK_WINDOW (window), promised, 640);
  g_object_set_data (G_OBJECT (content), "want", GINT_TO_POINTER (promised));
  g_assert_true (hz_ui_wait_for (width_is, content, 10));
  hz_ui_spin (0.5);
  g_test_message ("content %d px wide, folded: %s", gtk_widget_get_width (content),
                  hz_window_is_folded (window) ? "yes" : "no");
  g_assert_cmpint (gtk_widget_get_width (content), ==, promised);   /* it stays there */
  g_assert_true (hz_window_is_folded (window));
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "window-narrow");
}

static void
test_narrow (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories-distill/stories-distill-Q8_0.gguf");
  if (path == NULL)
    return;
  /* the model and a quantized copy in the library: the same name, so the header's model
   * button shows it with the file name ("stories-distill-6.5M (stories-distill-Q8_0.gguf)") */
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "hanzo", "models", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_autofree char *link = g_build_filename (dir, "stories-distill-Q8_0.gguf", NULL);
  g_autofree char *link4 = g_build_filename (dir, "stories-distill-Q4_0.gguf", NULL);
  g_autofree char *q4 = hz_test_shared_path ("models/stories-distill/stories-distill-Q4_0.gguf");
  g_assert_nonnull (q4);
  g_assert_cmpint (symlink (path, link), ==, 0);
  g_assert_cmpint (symlink (q4, link4), ==, 0);
  const char *args[] = { "--model", link, NULL };
  hz_ui_run_app (args, script_narrow, NULL);
}

/* ------------------------------------------------------------ a pasted code block */

#define CODE "    def greet(name):\n        return f\"hello {name}\"\n\n    print(greet(\"cat\"))"

static gboolean
buffer_filled (gpointer buffer)
{
  return gtk_text_buffer_get_char_count (buffer) > 0;
}

static void
script_code_paste (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  GtkWidget *composer = GTK_WIDGET (hz_window_get_composer (window));
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (GTK_TEXT_VIEW (composer));
  /* as a user would paste it from an editor: with a blank line before and after */
  gdk_clipboard_set_text (gtk_widget_get_clipboard (composer), "\n" CODE "\n  \n");
  gtk_widget_grab_focus (composer);
  g_signal_emit_by_name (composer, "paste-clipboard");
  g_assert_true (hz_ui_wait_for (buffer_filled, buffer, 10));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));

  g_autoptr(HzMessageItem) sent = g_list_model_get_item (hz_window_get_messages (window), 0);
  g_test_message ("sent: «%s»", hz_message_item_get_text (sent));
  g_assert_cmpstr (hz_message_item_get_text (sent), ==, CODE);
  g_autoptr(GError) error = NULL;
  g_autoptr(HzConversationItem) conv =
    g_list_model_get_item (hz_window_get_conversations (window), 0);
  g_autoptr(GPtrArray) msgs = hz_store_list_messages (hz_application_get_store (app),
                                                      hz_conversation_item_get_id (conv), &error);
  g_assert_no_error (error);
  g_test_message ("stored: «%s»", ((HzMessage *) msgs->pdata[0])->content);
  g_assert_cmpstr (((HzMessage *) msgs->pdata[0])->content, ==, CODE);
  g_autofree char *shot = hz_ui_screenshot (GTK_WIDGET (window), "code-paste");
}

static void
test_code_paste (void)
{
  hz_ui_run_with_shared_model ("models/stories260K.gguf", script_code_paste, NULL);
}

/* ------------------------------------------------------------ the first reply */

typedef struct {
  HzWindow  *window;
  GtkStack  *stack;
  GtkWidget *status;
  guint      frames_chat;     /* iterations with the chat page shown */
  guint      frames_overlap;  /* ... while the empty state was still drawn */
  gboolean   saw_text;        /* the reply had text (tokens arrived) */
} FirstReply;

static gboolean
watch_first_reply (gpointer data)
{
  FirstReply *f = data;
  if (g_strcmp0 (gtk_stack_get_visible_child_name (f->stack), "chat") == 0)
    {
      f->frames_chat++;
      if (gtk_widget_get_mapped (f->status) && gtk_widget_get_child_visible (f->status))
        f->frames_overlap++;
    }
  GListModel *msgs = hz_window_get_messages (f->window);
  if (g_list_model_get_n_items (msgs) >= 2)
    {
      g_autoptr(HzMessageItem) reply = g_list_model_get_item (msgs, 1);
      f->saw_text |= *hz_message_item_get_text (reply) != '\0';
    }
  return !hz_window_is_generating (f->window) && f->saw_text;
}

static void
script_first_reply (HzApplication *app, HzWindow *window, gpointer data)
{
  g_assert_true (hz_ui_wait_for (hz_ui_model_ready, window, 60));
  hz_ui_spin (0.3);
  FirstReply f = { window,
                   GTK_STACK (hz_ui_find_widget (GTK_WIDGET (window), is_stack_with, "status")),
                   NULL, 0, 0, FALSE };
  g_assert_nonnull (f.stack);
  f.status = gtk_stack_get_child_by_name (f.stack, "status");
  g_assert_cmpstr (gtk_stack_get_visible_child_name (f.stack), ==, "status");   /* empty chat */
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  gtk_text_buffer_set_text (buffer, "Once upon a time", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (watch_first_reply, &f, 120));
  g_test_message ("main-loop iterations with the chat shown: %u; with the empty state still "
                  "drawn over it: %u", f.frames_chat, f.frames_overlap);
  g_assert_cmpuint (f.frames_chat, >, 0);
  g_assert_cmpuint (f.frames_overlap, ==, 0);
}

static void
test_first_reply (void)
{
  hz_ui_run_with_shared_model ("models/stories260K.gguf", script_first_reply, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/window/narrow", test_narrow);
  g_test_add_func ("/ui/window/code-paste", test_code_paste);
  g_test_add_func ("/ui/window/first-reply", test_first_reply);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
