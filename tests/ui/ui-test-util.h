/* tests/ui/ui-test-util.h — drive the real Hanzo Desktop app in-process (header-only).
 *
 * hz_ui_test_init() points XDG_DATA_HOME/XDG_CONFIG_HOME/XDG_CACHE_HOME at a throwaway
 * directory and GSettings at the build's compiled schema (keyfile backend), before GLib
 * caches any of them. hz_ui_run_app() runs HzApplication with a command line and calls a
 * test script once the window is up; the script drives the UI by iterating the main
 * context (hz_ui_wait_for) and ends by quitting the app. Main thread only.
 */
#pragma once

#include <glib/gstdio.h>
#include <gtk/gtk.h>

#include "hz-application.h"
#include "hz-window.h"
#include "hz-test-util.h"

static char *hz_ui_tmpdir;

/** Call first in main(), before g_test_init(): sets up the throwaway environment. */
static inline void
hz_ui_test_init (void)
{
  hz_ui_tmpdir = g_dir_make_tmp ("hanzo-ui-XXXXXX", NULL);
  g_assert_nonnull (hz_ui_tmpdir);
  g_autofree char *data = g_build_filename (hz_ui_tmpdir, "data", NULL);
  g_autofree char *config = g_build_filename (hz_ui_tmpdir, "config", NULL);
  g_autofree char *cache = g_build_filename (hz_ui_tmpdir, "cache", NULL);
  g_setenv ("XDG_DATA_HOME", data, TRUE);
  g_setenv ("XDG_CONFIG_HOME", config, TRUE);
  g_setenv ("XDG_CACHE_HOME", cache, TRUE);
  g_setenv ("GSETTINGS_BACKEND", "keyfile", TRUE);
  const char *build = g_getenv ("HZ_BUILD_DIR");
  if (build != NULL)
    {
      g_autofree char *schemas = g_build_filename (build, "data", NULL);
      g_setenv ("GSETTINGS_SCHEMA_DIR", schemas, TRUE);
    }
  /* Xvfb has no GPU: the cairo renderer is the reliable one there. */
  g_setenv ("GSK_RENDERER", "cairo", FALSE);
  g_setenv ("NO_AT_BRIDGE", "1", TRUE);
  g_setenv ("GTK_A11Y", "none", FALSE);
}

static inline void
hz_ui_rm_rf (GFile *file)
{
  g_autoptr(GFileEnumerator) e =
    g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                               G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  GFileInfo *info;
  GFile *child;

  while (e != NULL && g_file_enumerator_iterate (e, &info, &child, NULL, NULL) && info)
    hz_ui_rm_rf (child);
  g_file_delete (file, NULL, NULL);
}

/** Remove the throwaway directory (set HZ_KEEP_TMP to keep it for debugging). */
static inline void
hz_ui_test_cleanup (void)
{
  if (hz_ui_tmpdir == NULL || g_getenv ("HZ_KEEP_TMP") != NULL)
    return;
  g_autoptr(GFile) dir = g_file_new_for_path (hz_ui_tmpdir);
  hz_ui_rm_rf (dir);
}

/** Iterate the default main context until cond(data) holds or `timeout_s` passes.
 *  Returns whether cond held. */
static inline gboolean
hz_ui_wait_for (gboolean (*cond) (gpointer), gpointer data, double timeout_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) (timeout_s * G_USEC_PER_SEC);
  while (!cond (data))
    {
      if (g_get_monotonic_time () > deadline)
        return FALSE;
      if (!g_main_context_iteration (NULL, FALSE))
        g_usleep (2000);
    }
  return TRUE;
}

static inline gboolean
hz_ui_false (gpointer data)
{
  return FALSE;
}

/** Let the main loop run for `seconds` (layout, drawing). */
static inline void
hz_ui_spin (double seconds)
{
  hz_ui_wait_for (hz_ui_false, NULL, seconds);
}

typedef void (*HzUiScript) (HzApplication *app, HzWindow *window, gpointer data);

typedef struct {
  HzUiScript script;
  gpointer   data;
  gboolean   scheduled;
  gboolean   ran;
} HzUiRun;

static void
hz_ui_run_script (gpointer user_data)
{
  HzUiRun *run = user_data;
  GApplication *app = g_application_get_default ();
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (app));

  g_assert_true (HZ_IS_WINDOW (window));
  hz_ui_spin (0.2);  /* first frames */
  run->script (HZ_APPLICATION (app), HZ_WINDOW (window), run->data);
  run->ran = TRUE;
  g_action_group_activate_action (G_ACTION_GROUP (app), "quit", NULL);
}

static void
hz_ui_on_activate (GApplication *app, HzUiRun *run)
{
  if (run->scheduled)
    return;
  run->scheduled = TRUE;
  g_idle_add_once (hz_ui_run_script, run);
}

static inline gboolean
hz_ui_no_app (gpointer data)
{
  return g_application_get_default () == NULL;
}

/** Run the real app with `args` (NULL-terminated, without argv[0]); `script` is called
 *  once its window is shown and must not quit the app itself. Asserts a clean exit. */
static inline void
hz_ui_run_app (const char *const *args, HzUiScript script, gpointer data)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  HzUiRun run = { script, data, FALSE, FALSE };

  /* an app run before may still be held by a task of its own that ends in the main loop
   * (the model file's hash, cancelled at quit): the new one must become the default */
  g_assert_true (hz_ui_wait_for (hz_ui_no_app, NULL, 30));

  g_ptr_array_add (argv, (gpointer) "hanzo-desktop");
  for (; args && *args; args++)
    g_ptr_array_add (argv, (gpointer) *args);
  g_ptr_array_add (argv, NULL);

  g_autoptr(HzApplication) app = hz_application_new ();
  g_application_set_flags (G_APPLICATION (app),
                           g_application_get_flags (G_APPLICATION (app)) |
                           G_APPLICATION_NON_UNIQUE);
  g_signal_connect_after (app, "activate", G_CALLBACK (hz_ui_on_activate), &run);
  int status = g_application_run (G_APPLICATION (app), argv->len - 1, (char **) argv->pdata);
  g_assert_cmpint (status, ==, 0);
  g_assert_true (run.ran);
}

/** Run the app with `--model` and the shared model `rel` (e.g. "models/stories260K.gguf"),
 *  as hz_ui_run_app(); skips the test (g_test_skip) when the shared data lacks it. */
static inline void
hz_ui_run_with_shared_model (const char *rel, HzUiScript script, gpointer data)
{
  g_autofree char *path = hz_test_shared_path (rel);
  if (path == NULL)
    return;
  const char *args[] = { "--model", path, NULL };
  hz_ui_run_app (args, script, data);
}

/** hz_ui_wait_for() conditions on an HzWindow: its model is loaded; no reply is being
 *  generated. */
static inline gboolean
hz_ui_model_ready (gpointer window)
{
  return hz_window_is_model_ready (window);
}

static inline gboolean
hz_ui_reply_done (gpointer window)
{
  return !hz_window_is_generating (window);
}

typedef struct {
  gboolean done;
  char    *text;
} HzUiClipRead;

static inline void
hz_ui_clip_read_done (GObject *source, GAsyncResult *res, gpointer data)
{
  HzUiClipRead *c = data;
  c->text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), res, NULL);
  c->done = TRUE;
}

static inline gboolean
hz_ui_clip_read_ready (gpointer data)
{
  return ((HzUiClipRead *) data)->done;
}

/** The text on `clipboard` (g_free; NULL when none), read while the main loop runs
 *  (asserts it is read within 10 s). */
static inline char *
hz_ui_clipboard_text (GdkClipboard *clipboard)
{
  HzUiClipRead c = { FALSE, NULL };
  gdk_clipboard_read_text_async (clipboard, NULL, hz_ui_clip_read_done, &c);
  g_assert_true (hz_ui_wait_for (hz_ui_clip_read_ready, &c, 10));
  return c.text;
}

/** Type `text` into the composer and send it (win.send). */
static inline void
hz_ui_type_and_send (HzWindow *window, const char *text)
{
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  gtk_text_buffer_set_text (buffer, text, -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
}

/** The first widget under `root` (itself included, depth first) for which
 *  match(widget, data) holds, or NULL. */
static inline GtkWidget *
hz_ui_find_widget (GtkWidget *root, gboolean (*match) (GtkWidget *, gconstpointer),
                   gconstpointer data)
{
  if (match (root, data))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = hz_ui_find_widget (c, match, data);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/** Render `widget` to `<build>/tests/ui/artifacts/<name>.png` and print the path.
 *  Returns the path (g_free). */
static inline char *
hz_ui_screenshot (GtkWidget *widget, const char *name)
{
  int width = gtk_widget_get_width (widget);
  int height = gtk_widget_get_height (widget);
  g_assert_cmpint (width, >, 0);
  g_assert_cmpint (height, >, 0);

  /* A widget whose layout is being redone (text streaming in) gives no node: retry. */
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  g_autoptr(GskRenderNode) node = NULL;
  gint64 deadline = g_get_monotonic_time () + 5 * G_USEC_PER_SEC;
  while (node == NULL && g_get_monotonic_time () < deadline)
    {
      GtkSnapshot *snapshot = gtk_snapshot_new ();
      gdk_paintable_snapshot (paintable, snapshot, width, height);
      node = gtk_snapshot_free_to_node (snapshot);
      if (node == NULL)
        g_main_context_iteration (NULL, FALSE);
    }
  g_assert_nonnull (node);
  GskRenderer *renderer = gtk_native_get_renderer (gtk_widget_get_native (widget));
  g_autoptr(GdkTexture) texture =
    gsk_renderer_render_texture (renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));

  const char *build = g_getenv ("HZ_BUILD_DIR");
  g_autofree char *dir = g_build_filename (build ? build : ".", "tests", "ui", "artifacts", NULL);
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  g_autofree char *file = g_strconcat (name, ".png", NULL);
  char *path = g_build_filename (dir, file, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s", path);
  return path;
}

/** The visible toplevel of `type` transient for `window`, or NULL. */
static inline GtkWidget *
hz_ui_find_toplevel (GType type, GtkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();  /* transfer none */
  guint n = g_list_model_get_n_items (toplevels);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);
      if (G_TYPE_CHECK_INSTANCE_TYPE (w, type) && gtk_widget_get_visible (GTK_WIDGET (w)) &&
          gtk_window_get_transient_for (w) == window)
        return GTK_WIDGET (w);
    }
  return NULL;
}

/** How many visible toplevels of `type` are transient for `window`. */
static inline guint
hz_ui_count_toplevels (GType type, GtkWindow *window)
{
  GListModel *toplevels = gtk_window_get_toplevels ();  /* transfer none */
  guint n = g_list_model_get_n_items (toplevels), count = 0;
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GtkWindow) w = g_list_model_get_item (toplevels, i);
      count += G_TYPE_CHECK_INSTANCE_TYPE (w, type) && gtk_widget_get_visible (GTK_WIDGET (w)) &&
               gtk_window_get_transient_for (w) == window;
    }
  return count;
}

static inline void
hz_ui_collect_text_into (GtkWidget *w, GString *out)
{
  if (ADW_IS_PREFERENCES_ROW (w))
    g_string_append_printf (out, "%s\n", adw_preferences_row_get_title (ADW_PREFERENCES_ROW (w)));
  if (ADW_IS_ACTION_ROW (w) && adw_action_row_get_subtitle (ADW_ACTION_ROW (w)))
    g_string_append_printf (out, "%s\n", adw_action_row_get_subtitle (ADW_ACTION_ROW (w)));
  if (ADW_IS_EXPANDER_ROW (w) && adw_expander_row_get_subtitle (ADW_EXPANDER_ROW (w)))
    g_string_append_printf (out, "%s\n", adw_expander_row_get_subtitle (ADW_EXPANDER_ROW (w)));
  if (GTK_IS_LABEL (w))
    g_string_append_printf (out, "%s\n", gtk_label_get_label (GTK_LABEL (w)));
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    hz_ui_collect_text_into (c, out);
}

/** All the text under `root` (row titles and subtitles, labels), one item a line, hidden
 *  widgets included (g_free). */
static inline char *
hz_ui_collect_text (GtkWidget *root)
{
  GString *s = g_string_new (NULL);
  hz_ui_collect_text_into (root, s);
  return g_string_free (s, FALSE);
}

/** The visible AdwMessageDialog transient for `window`, or NULL. */
static inline GtkWidget *
hz_ui_find_message_dialog (GtkWindow *window)
{
  return hz_ui_find_toplevel (ADW_TYPE_MESSAGE_DIALOG, window);
}

static inline GtkSingleSelection *
hz_ui_find_selection_of (GtkWidget *root, GListModel *model)
{
  if (GTK_IS_LIST_VIEW (root))
    {
      GtkSelectionModel *sel = gtk_list_view_get_model (GTK_LIST_VIEW (root));
      if (GTK_IS_SINGLE_SELECTION (sel) &&
          gtk_single_selection_get_model (GTK_SINGLE_SELECTION (sel)) == model)
        return GTK_SINGLE_SELECTION (sel);
    }
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkSingleSelection *found = hz_ui_find_selection_of (c, model);
      if (found != NULL)
        return found;
    }
  return NULL;
}

/** Choose conversation `position` in the sidebar's list as a click does (through the list
 *  view's selection): unlike hz_window_select_conversation(), the messages are read in the
 *  background and arrive after this returns. */
static inline void
hz_ui_click_conversation (HzWindow *window, guint position)
{
  GtkSingleSelection *sel = hz_ui_find_selection_of (GTK_WIDGET (window),
                                                     hz_window_get_conversations (window));
  g_assert_nonnull (sel);
  gtk_single_selection_set_selected (sel, position);
}
