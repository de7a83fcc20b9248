/* test-ui-models.c — the model manager and the model switcher in the real app under Xvfb.
 *
 * Needs no shared data: two small random-weight models are written here with the engine's
 * synthesizer (hz_synth_write) over a byte-level SentencePiece vocabulary written with the
 * GGUF writer; model A has a ChatML template (so the app asks it for a title), B none.
 * HZ_MEMORY_AVAILABLE is set so that the F32 files do not fit while their Q8_0 forms do,
 * and the memory read speed is preset (no benchmark in the test).
 *
 * Script: open the manager (empty), import a text file (error), a GGUF of an unsupported
 * architecture (error), model A dropped on the manager (too large: quantize to Q8_0 from
 * the offer), model B dropped on the chat window (too large: keep); check A's facts and
 * predicted speeds on screen (memory-bound upper limits until a reply is measured); import
 * a larger model
 * as a link, quantize it to Q4_K_M and press Cancel part-way (the bar shows the engine's
 * fraction; no file is left), then remove it; set A as the default
 * (it loads); switch to B and back through the chat's model menu (no reload: the registry
 * kept A); chat with A (its measured speed appears, the other models' predictions are
 * estimated from it, and the title request is answered); A's own settings (preferences while A is in use: A's temperature and
 * context length change, the defaults and B keep theirs; the context is remade at A's
 * size, and B's at the default when switching); import B again with "quantize on import"
 * (only its Q8_0 form is kept); delete A's Q8_0 copy. Screenshots of each step.
 */
#include <glib/gstdio.h>

#include "gguf.h"
#include "hz-model-manager.h"
#include "hz-model-info.h"
#include "hz-conversation-item.h"
#include "hz-model-settings.h"
#include "hz-preferences-window.h"
#include "synth.h"
#include "ui-test-models.h"
#include "ui-test-util.h"

#define BANDWIDTH 20e9  /* preset memory read speed, bytes/s */

typedef struct {
  char *text;     /* not a model */
  char *mamba;    /* unsupported architecture */
  char *a, *b;    /* llama models (A with a chat template) */
  char *big;      /* a larger one, whose quantization takes long enough to watch */
} Files;

static Files files;

/* ------------------------------------------------------------------ test data */

#define SMALL_SHAPE "custom:dim=64,layers=1,heads=4,kv=2,ffn=128,ctx=2048"
#define BIG_SHAPE   "custom:dim=512,layers=8,heads=8,kv=8,ffn=1408,ctx=2048"  /* 100 MB F32 */

static char *
write_mamba (void)
{
  g_autoptr(HzGgufWriter) w = hz_gguf_writer_new ();
  g_autoptr(GError) error = NULL;
  float data[64] = { 0 };
  int64_t ne[2] = { 32, 2 };
  char *path = g_build_filename (hz_ui_tmpdir, "mamba-tiny.gguf", NULL);

  hz_gguf_writer_set_str (w, "general.architecture", "mamba");
  g_assert_true (hz_gguf_writer_add_tensor (w, "token_embd.weight", 0, 2, ne, data,
                                            sizeof data, TRUE, &error));
  g_assert_true (hz_gguf_writer_write_file (w, path, &error));
  return path;
}

/* ------------------------------------------------------------------ helpers */

static void
assert_shows (GtkWidget *manager, const char *part)
{
  g_autofree char *text = hz_ui_collect_text (manager);
  if (strstr (text, part) == NULL)
    g_error ("the model manager does not show “%s”; it shows:\n%s", part, text);
}

/* The first GtkMenuButton under `w` with tooltip `tooltip`, or NULL. */
static GtkWidget *
find_menu_button (GtkWidget *w, const char *tooltip)
{
  if (GTK_IS_MENU_BUTTON (w) && g_strcmp0 (gtk_widget_get_tooltip_text (w), tooltip) == 0)
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_menu_button (c, tooltip);
      if (found != NULL)
        return found;
    }
  return NULL;
}

static gboolean
manager_idle (gpointer manager)
{
  return !hz_model_manager_is_busy (manager);
}

typedef struct {
  GtkWindow *parent;
  GtkWidget *dialog;
} DialogWait;

static gboolean
dialog_shown (gpointer data)
{
  DialogWait *w = data;
  w->dialog = hz_ui_find_message_dialog (w->parent);
  return w->dialog != NULL;
}

/* Wait for a dialog on `parent` with `heading` and `body_part`, screenshot it, answer it
 * with `response`. */
static void
answer_dialog (GtkWidget *parent, const char *heading, const char *body_part,
               const char *response, const char *shot)
{
  DialogWait w = { GTK_WINDOW (parent), NULL };

  g_assert_true (hz_ui_wait_for (dialog_shown, &w, 60));
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  AdwMessageDialog *d = ADW_MESSAGE_DIALOG (w.dialog);
  g_test_message ("dialog: %s — %s", adw_message_dialog_get_heading (d),
                  adw_message_dialog_get_body (d));
  g_assert_cmpstr (adw_message_dialog_get_heading (d), ==, heading);
  g_assert_nonnull (strstr (adw_message_dialog_get_body (d), body_part));
  hz_ui_spin (0.3);
  if (shot != NULL)
    {
      g_autofree char *path = hz_ui_screenshot (w.dialog, shot);
    }
  adw_message_dialog_response (d, response);  /* as the button does, then it closes */
  G_GNUC_END_IGNORE_DEPRECATIONS
  gtk_window_destroy (GTK_WINDOW (w.dialog));
  hz_ui_spin (0.2);
}

static void
import (GtkWidget *manager, const char *path)
{
  g_autoptr(GFile) file = g_file_new_for_path (path);
  GSList list = { file, NULL };
  hz_model_manager_import_files (HZ_MODEL_MANAGER (manager), &list);
}

/* Import `path` as dropping the file on `target` (the chat window or the manager) does:
 * its GtkDropTarget's "drop" with a GdkFileList. */
static void
drop_file (GtkWidget *target, const char *path)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (target);
  GtkDropTarget *drop = NULL;
  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) c = g_list_model_get_item (controllers, i);
      if (GTK_IS_DROP_TARGET (c))
        drop = GTK_DROP_TARGET (c);
    }
  g_assert_nonnull (drop);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  GValue value = G_VALUE_INIT;
  gboolean handled = FALSE;
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_array (&file, 1));
  g_signal_emit_by_name (drop, "drop", &value, 10.0, 10.0, &handled);
  g_value_unset (&value);
  g_assert_true (handled);
}

typedef struct {
  HzModelLibrary *lib;
  guint           n;
} CountWait;

static gboolean
library_has (gpointer data)
{
  CountWait *c = data;
  return hz_model_library_is_loaded (c->lib) &&
         g_list_model_get_n_items (hz_model_library_get_models (c->lib)) == c->n;
}

static void
wait_models (HzModelLibrary *lib, guint n)
{
  CountWait c = { lib, n };
  g_assert_true (hz_ui_wait_for (library_has, &c, 120));
}

/* The library's entry whose file name is `base`. */
static HzModelEntry *
entry_named (HzModelLibrary *lib, const char *base)
{
  g_autofree char *path = g_build_filename (hz_model_library_get_dir (lib), base, NULL);
  HzModelEntry *e = hz_model_library_find (lib, path);
  g_assert_nonnull (e);
  return e;
}

typedef struct {
  HzWindow   *window;
  const char *path;
} ModelWait;

static gboolean
model_in_use (gpointer data)
{
  ModelWait *m = data;
  HzEngineWorker *worker = hz_application_get_worker (
    HZ_APPLICATION (gtk_window_get_application (GTK_WINDOW (m->window))));
  return hz_window_is_model_ready (m->window) &&
         g_strcmp0 (hz_engine_worker_get_model_path (worker), m->path) == 0;
}

static void
switch_model (HzWindow *window, const char *path)
{
  ModelWait m = { window, path };
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "chat.model", "s", path));
  g_assert_true (hz_ui_wait_for (model_in_use, &m, 60));
}

typedef struct {
  HzEngineWorker *worker;
  guint           n_ctx;
} CtxWait;

static gboolean
context_is (gpointer data)
{
  CtxWait *c = data;
  return hz_engine_worker_get_context_length (c->worker) == c->n_ctx;
}

/* A model is loaded with a context other than c->n_ctx. */
static gboolean
context_is_not (gpointer data)
{
  CtxWait *c = data;
  guint n = hz_engine_worker_get_context_length (c->worker);
  return n != 0 && n != c->n_ctx;
}

static gboolean
prefs_shown (gpointer window)
{
  return hz_ui_find_toplevel (HZ_TYPE_PREFERENCES_WINDOW, window) != NULL;
}

static GtkWidget *
first_spin (GtkWidget *w)
{
  if (GTK_IS_SPIN_BUTTON (w))
    return w;
  for (GtkWidget *c = gtk_widget_get_first_child (w); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = first_spin (c);
      if (found)
        return found;
    }
  return NULL;
}

/* Per-model settings: with A in use, the preferences change A's own temperature (the
 * defaults keep theirs); A's own context length remakes its context; B, never configured,
 * replies with the defaults and gets the default context when switched to. */
static void
check_model_settings (HzApplication *app, HzWindow *window, HzModelEntry *a, HzModelEntry *b,
                      GSettings *defaults)
{
  HzEngineWorker *worker = hz_application_get_worker (app);
  GSettings *own_a = hz_application_get_model_settings (app);
  guint n_ctx_default = hz_engine_worker_get_context_length (worker);

  g_assert_nonnull (own_a);
  g_assert_false (hz_model_settings_is_own (own_a, "temperature"));
  g_action_group_activate_action (G_ACTION_GROUP (app), "preferences", NULL);
  g_assert_true (hz_ui_wait_for (prefs_shown, window, 10));
  GtkWidget *prefs = hz_ui_find_toplevel (HZ_TYPE_PREFERENCES_WINDOW, GTK_WINDOW (window));
  GtkWidget *spin = first_spin (prefs);  /* temperature */
  g_assert_cmpfloat_with_epsilon (gtk_spin_button_get_value (GTK_SPIN_BUTTON (spin)),
                                  g_settings_get_double (defaults, "temperature"), 1e-9);
  gtk_spin_button_set_value (GTK_SPIN_BUTTON (spin), 1.5);
  g_assert_true (hz_model_settings_is_own (own_a, "temperature"));
  g_assert_cmpfloat_with_epsilon (hz_model_settings_get_double (own_a, defaults, "temperature"),
                                  1.5, 1e-9);
  g_assert_cmpfloat_with_epsilon (g_settings_get_double (defaults, "temperature"), 0.0, 1e-9);
  hz_ui_spin (0.5);
  g_autofree char *shot = hz_ui_screenshot (prefs, "preferences-model");
  gtk_window_destroy (GTK_WINDOW (prefs));

  CtxWait small = { worker, 64 };
  g_settings_set_int (own_a, "context-length", 64);
  g_assert_true (hz_ui_wait_for (context_is, &small, 60));

  /* Compare the settings paths, not the objects: A's GSettings is freed on the switch and
   * B's may be allocated at the same address. */
  g_autofree char *path_a = NULL;
  g_object_get (own_a, "path", &path_a, NULL);
  switch_model (window, hz_model_entry_get_path (b));
  GSettings *own_b = hz_application_get_model_settings (app);
  g_autofree char *path_b = NULL;
  g_assert_nonnull (own_b);
  g_object_get (own_b, "path", &path_b, NULL);
  g_assert_cmpstr (path_b, !=, path_a);
  g_assert_false (hz_model_settings_is_own (own_b, "temperature"));
  g_assert_cmpfloat_with_epsilon (hz_model_settings_get_double (own_b, defaults, "temperature"),
                                  0.0, 1e-9);
  g_assert_true (hz_ui_wait_for (context_is_not, &small, 60));

  /* back to A: its own values again, then reset to the defaults */
  switch_model (window, hz_model_entry_get_path (a));
  own_a = hz_application_get_model_settings (app);
  g_assert_true (hz_ui_wait_for (context_is, &small, 60));
  g_assert_cmpfloat_with_epsilon (hz_model_settings_get_double (own_a, defaults, "temperature"),
                                  1.5, 1e-9);
  for (guint i = 0; hz_model_settings_keys[i] != NULL; i++)
    g_settings_reset (own_a, hz_model_settings_keys[i]);
  CtxWait dflt = { worker, n_ctx_default };
  g_assert_true (hz_ui_wait_for (context_is, &dflt, 60));
}

typedef struct {
  gboolean answered;
  char    *raw;
} TitleWait;

static void
on_title (HzEngineWorker *worker, guint request, const char *text, TitleWait *t)
{
  t->answered = TRUE;
  t->raw = g_strdup (text);
}

static gboolean
title_answered (gpointer data)
{
  return ((TitleWait *) data)->answered;
}

/* The first widget of `type` under `root` (depth first), or NULL. */
static GtkWidget *
find_widget_of_type (GtkWidget *root, GType type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (root, type))
    return root;
  for (GtkWidget *c = gtk_widget_get_first_child (root); c; c = gtk_widget_get_next_sibling (c))
    {
      GtkWidget *found = find_widget_of_type (c, type);
      if (found)
        return found;
    }
  return NULL;
}

/* A quantization watched through the manager's progress bar: at its first progress the
 * bar is photographed and Cancel pressed (as a user would). */
typedef struct {
  GtkWidget *manager;
  double     fraction;
  char      *text;
  gboolean   cancelled;
  guint      n_updates;
} QuantWatch;

static void
on_progress_fraction (GtkProgressBar *bar, GParamSpec *pspec, QuantWatch *q)
{
  double fraction = gtk_progress_bar_get_fraction (bar);
  q->n_updates++;
  /* on screen (laid out since it was revealed) and part-way */
  if (q->cancelled || fraction <= 0 || fraction >= 1 ||
      gtk_widget_get_height (GTK_WIDGET (bar)) <= 0)
    return;
  const char *text = NULL;
  q->fraction = hz_model_manager_get_progress (HZ_MODEL_MANAGER (q->manager), &text);
  q->text = g_strdup (text);
  g_autofree char *shot = hz_ui_screenshot (q->manager, "models-quantize-progress");
  q->cancelled = TRUE;
  g_assert_true (gtk_widget_activate_action (q->manager, "models.cancel", NULL));
}

/* ------------------------------------------------------------------ the script */

static void
script_models (HzApplication *app, HzWindow *window, gpointer data)
{
  HzModelLibrary *lib = hz_application_get_model_library (app);
  HzEngineWorker *worker = hz_application_get_worker (app);
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");

  wait_models (lib, 0);
  GtkWidget *manager = GTK_WIDGET (hz_application_show_model_manager (app));
  g_assert_true (HZ_IS_MODEL_MANAGER (manager));
  gtk_window_set_default_size (GTK_WINDOW (manager), 640, 1500);  /* the rows in the shots */
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 30));
  hz_ui_spin (0.3);
  assert_shows (manager, "No Imported Models");
  assert_shows (manager, "20.0\xc2\xa0GB per second");  /* preset; g_format_size: SI, no-break space */
  g_autofree char *s1 = hz_ui_screenshot (manager, "models-empty");

  /* not a GGUF; an architecture the engine lacks: clear errors, nothing imported */
  import (manager, files.text);
  answer_dialog (manager, "Cannot Import Model", "is not a GGUF model file", "close",
                 "models-not-gguf");
  import (manager, files.mamba);
  answer_dialog (manager, "Cannot Import Model", "mamba", "close", "models-unsupported");
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 30));
  wait_models (lib, 0);

  /* A: too large for the (pretended) memory: take the offered Q8_0 */
  drop_file (manager, files.a);  /* dropped on the manager */
  answer_dialog (manager, "Model Too Large for Memory", "Q8_0", "quantize",
                 "models-too-large");
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 120));
  wait_models (lib, 2);
  HzModelEntry *a = entry_named (lib, "model-a.gguf");
  HzModelEntry *a8 = entry_named (lib, "model-a-Q8_0.gguf");
  g_assert_true (g_file_test (hz_model_entry_get_path (a), G_FILE_TEST_IS_REGULAR));
  g_assert_cmpstr (hz_model_entry_get_info (a8)->file_type, ==, "Q8_0");
  g_assert_cmpuint (hz_model_entry_get_info (a8)->weight_bytes, <,
                    hz_model_entry_get_info (a)->weight_bytes);

  /* B: too large as well: keep it as it is */
  drop_file (GTK_WIDGET (window), files.b);  /* dropped on the chat window */
  answer_dialog (manager, "Model Too Large for Memory", "Q8_0", "keep", NULL);
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 60));
  wait_models (lib, 3);
  HzModelEntry *b = entry_named (lib, "model-b.gguf");

  /* what the rows show: facts, memory, speed per format, the recommendation */
  hz_ui_spin (0.5);
  assert_shows (manager, "llama · F32");
  assert_shows (manager, "2048 tokens");         /* context length */
  assert_shows (manager, "Too large: needs about");
  assert_shows (manager, "At most ");            /* no reply measured yet: the bound */
  assert_shows (manager, " · at most ");
  assert_shows (manager, "tokens/s");
  assert_shows (manager, "Q4_0");
  assert_shows (manager, "Recommended");
  g_autofree char *s2 = hz_ui_screenshot (manager, "models-imported");

  /* a larger model (linked: no copy; too large in any format here: still imported),
   * quantized to Q4_K_M: the bar shows the engine's progress; Cancel part-way stops it and
   * leaves no file */
  g_settings_set_boolean (settings, "import-as-link", TRUE);
  import (manager, files.big);
  answer_dialog (manager, "Model Too Large for Memory", "would not fit", "close", NULL);
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 60));
  wait_models (lib, 4);
  g_settings_set_boolean (settings, "import-as-link", FALSE);
  HzModelEntry *big = entry_named (lib, "model-big.gguf");
  GtkWidget *bar = find_widget_of_type (manager, GTK_TYPE_PROGRESS_BAR);
  g_assert_nonnull (bar);
  /* (no reveal animation: the bar is on screen from the first frame) */
  GtkWidget *revealer = gtk_widget_get_ancestor (bar, GTK_TYPE_REVEALER);
  gtk_revealer_set_transition_type (GTK_REVEALER (revealer), GTK_REVEALER_TRANSITION_TYPE_NONE);
  QuantWatch qw = { manager, 0, NULL, FALSE, 0 };
  gulong qh = g_signal_connect (bar, "notify::fraction", G_CALLBACK (on_progress_fraction), &qw);
  g_assert_cmpfloat (hz_model_manager_get_progress (HZ_MODEL_MANAGER (manager), NULL), ==, -1);
  g_assert_true (gtk_widget_activate_action (manager, "models.quantize", "(ss)",
                                             hz_model_entry_get_path (big), "Q4_K_M"));
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 120));
  g_signal_handler_disconnect (bar, qh);
  g_test_message ("quantize progress: %u updates, cancelled at %.3f (%s)", qw.n_updates,
                  qw.fraction, qw.text);
  g_assert_true (qw.cancelled);
  g_assert_cmpfloat (qw.fraction, >, 0);
  g_assert_cmpfloat (qw.fraction, <, 1);
  g_assert_true (g_str_has_suffix (qw.text, "%"));
  g_free (qw.text);
  /* nothing left: neither the result nor the engine's temporary file */
  g_autoptr(GDir) dir = g_dir_open (hz_model_library_get_dir (lib), 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    g_assert_null (strstr (name, "Q4_K_M"));
  g_assert_true (hz_model_library_delete (lib, big, NULL));  /* the link only */
  g_assert_true (g_file_test (files.big, G_FILE_TEST_IS_REGULAR));
  wait_models (lib, 3);

  /* default: remembered and loaded */
  g_assert_true (gtk_widget_activate_action (manager, "models.set-default", "s",
                                             hz_model_entry_get_path (a)));
  g_autofree char *def = g_settings_get_string (settings, "model-path");
  g_assert_cmpstr (def, ==, hz_model_entry_get_path (a));
  ModelWait ma = { window, hz_model_entry_get_path (a) };
  g_assert_true (hz_ui_wait_for (model_in_use, &ma, 60));
  g_assert_cmpuint (hz_engine_worker_get_n_loads (worker), ==, 1);
  hz_ui_spin (0.3);
  assert_shows (manager, "Default");

  /* guard slot */
  g_assert_true (gtk_widget_activate_action (manager, "models.set-guard", "s",
                                             hz_model_entry_get_path (a8)));
  g_autofree char *guard = g_settings_get_string (settings, "guard-model-path");
  g_assert_cmpstr (guard, ==, hz_model_entry_get_path (a8));

  /* switch to B and back through the chat's model menu: A is still loaded */
  gtk_window_present (GTK_WINDOW (window));
  switch_model (window, hz_model_entry_get_path (b));
  g_assert_cmpuint (hz_engine_worker_get_n_loads (worker), ==, 2);
  hz_ui_spin (0.3);
  g_autofree char *s3 = hz_ui_screenshot (GTK_WIDGET (window), "models-switched");
  switch_model (window, hz_model_entry_get_path (a));
  g_assert_cmpuint (hz_engine_worker_get_n_loads (worker), ==, 2);

  /* the menu lists the three models (same name: with their file names) and the manager */
  GtkWidget *button = find_menu_button (GTK_WIDGET (window), "Switch Model");
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_get_visible (button));
  GMenuModel *menu = gtk_menu_button_get_menu_model (GTK_MENU_BUTTON (button));
  g_autoptr(GMenuModel) models_section =
    g_menu_model_get_item_link (menu, 0, G_MENU_LINK_SECTION);
  g_assert_cmpint (g_menu_model_get_n_items (models_section), ==, 3);
  g_autofree char *label = NULL;
  g_assert_true (g_menu_model_get_item_attribute (models_section, 0, G_MENU_ATTRIBUTE_LABEL,
                                                  "s", &label));
  g_assert_nonnull (strstr (label, ".gguf)"));
  g_assert_nonnull (strstr (label, "Q8__0"));  /* underscores escaped (no mnemonic) */
  GtkWidget *label_widget = find_widget_of_type (button, GTK_TYPE_LABEL);   /* ellipsized */
  g_assert_nonnull (label_widget);
  g_autofree char *button_label = g_strdup (gtk_label_get_text (GTK_LABEL (label_widget)));
  g_assert_nonnull (strstr (button_label, "model-a.gguf"));
  gtk_menu_button_popup (GTK_MENU_BUTTON (button));
  hz_ui_spin (0.5);
  GtkPopover *popover = gtk_menu_button_get_popover (GTK_MENU_BUTTON (button));
  g_autofree char *s3b = hz_ui_screenshot (GTK_WIDGET (popover), "models-switch-menu");
  gtk_menu_button_popdown (GTK_MENU_BUTTON (button));
  g_assert_cmpuint (hz_engine_worker_get_loaded_bytes (worker), >=,
                    hz_model_entry_get_info (a)->file_size +
                    hz_model_entry_get_info (b)->file_size);

  /* chat with A: its speed is measured; the title request is answered */
  TitleWait tw = { FALSE, NULL };
  gulong h = g_signal_connect (worker, "title", G_CALLBACK (on_title), &tw);
  GtkTextBuffer *buffer = gtk_text_view_get_buffer (hz_window_get_composer (window));
  gtk_text_buffer_set_text (buffer, "tell me a story about a cat", -1);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "win.send", NULL));
  g_assert_true (hz_ui_wait_for (hz_ui_reply_done, window, 120));
  g_assert_true (hz_ui_wait_for (title_answered, &tw, 120));
  g_signal_handler_disconnect (worker, h);
  hz_ui_spin (0.3);
  g_autoptr(HzConversationItem) conv =
    g_list_model_get_item (hz_window_get_conversations (window), 0);
  const char *title = hz_conversation_item_get_title (conv);
  g_test_message ("title answer: %s; title: %s", tw.raw ? tw.raw : "(none)", title);
  g_assert_nonnull (title);
  g_assert_null (strchr (title, '\n'));
  g_assert_cmpint (g_utf8_strlen (title, -1), <=, 60);
  g_free (tw.raw);
  g_assert_cmpfloat (hz_model_entry_get_measured_tokens_per_s (a), >, 0);
  hz_ui_spin (0.5);
  assert_shows (manager, "Measured ");           /* A */
  assert_shows (manager, ", estimated from the replies of");   /* the others, from A's */
  assert_shows (manager, "In Use");
  g_autofree char *s4 = hz_ui_screenshot (manager, "models-measured");

  check_model_settings (app, window, a, b, settings);

  /* quantize on import: B again is stored as Q8_0 only (the full-size copy goes) */
  g_settings_set_boolean (settings, "quantize-on-import", TRUE);
  import (manager, files.b);
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 120));
  wait_models (lib, 4);
  HzModelEntry *b2 = entry_named (lib, "model-b-2-Q8_0.gguf");
  g_assert_cmpstr (hz_model_entry_get_info (b2)->file_type, ==, "Q8_0");
  g_autofree char *b2_full = g_build_filename (hz_model_library_get_dir (lib), "model-b-2.gguf",
                                               NULL);
  g_assert_false (g_file_test (b2_full, G_FILE_TEST_EXISTS));
  g_assert_null (hz_model_library_find (lib, b2_full));
  g_settings_set_boolean (settings, "quantize-on-import", FALSE);

  /* delete the Q8_0 copy (the guard): asked first, then gone, the slot cleared */
  g_autofree char *a8_path = g_strdup (hz_model_entry_get_path (a8));
  g_assert_true (gtk_widget_activate_action (manager, "models.delete", "s", a8_path));
  g_autofree char *heading = g_strdup_printf ("Delete “%s”?", hz_model_entry_get_name (a8));
  answer_dialog (manager, heading, "removed", "delete", "models-delete");
  wait_models (lib, 3);
  g_assert_false (g_file_test (a8_path, G_FILE_TEST_EXISTS));
  g_autofree char *guard2 = g_settings_get_string (settings, "guard-model-path");
  g_assert_cmpstr (guard2, ==, "");
  hz_ui_spin (0.3);
  g_autofree char *s5 = hz_ui_screenshot (manager, "models-deleted");
  gtk_window_destroy (GTK_WINDOW (manager));
}

static void
test_models (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "memory-bandwidth", BANDWIDTH);
  g_settings_set_double (settings, "temperature", 0.0);
  g_settings_set_int (settings, "max-tokens", 24);
  g_settings_sync ();
  hz_ui_run_app (NULL, script_models, NULL);
}

/* With no speed stored, opening the manager measures it (once: it is kept). */
static void
script_measure (HzApplication *app, HzWindow *window, gpointer data)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  GtkWidget *manager = GTK_WIDGET (hz_application_show_model_manager (app));

  g_assert_true (hz_model_manager_is_busy (HZ_MODEL_MANAGER (manager)));
  assert_shows (manager, "Measuring…");
  g_assert_true (hz_ui_wait_for (manager_idle, manager, 60));
  double bw = g_settings_get_double (settings, "memory-bandwidth");
  g_test_message ("measured memory read speed: %.2f GB/s", bw / 1e9);
  g_assert_cmpfloat (bw, >, 100e6);
  hz_ui_spin (0.2);
  assert_shows (manager, "per second");

  /* closed in the middle of an import: the import completes, nothing touches the window
   * (the test runs with fatal criticals) */
  import (manager, files.b);
  g_assert_true (hz_model_manager_is_busy (HZ_MODEL_MANAGER (manager)));
  gtk_window_destroy (GTK_WINDOW (manager));
  HzModelLibrary *lib = hz_application_get_model_library (app);
  wait_models (lib, 1);
  hz_ui_spin (0.3);
  g_autoptr(GError) error = NULL;
  g_assert_true (hz_model_library_delete (lib, entry_named (lib, "model-b.gguf"), &error));
  wait_models (lib, 0);
}

static void
test_measure (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_reset (settings, "memory-bandwidth");
  g_settings_sync ();
  hz_ui_run_app (NULL, script_measure, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  files.text = g_build_filename (hz_ui_tmpdir, "shopping-list.gguf", NULL);
  g_assert_true (g_file_set_contents (files.text, "eggs\nmilk\nbread\n", -1, NULL));
  files.mamba = write_mamba ();
  files.a = hz_ui_write_model ("model-a.gguf", TRUE, 1, SMALL_SHAPE, HZ_FTYPE_ALL_F32);
  files.b = hz_ui_write_model ("model-b.gguf", FALSE, 2, SMALL_SHAPE, HZ_FTYPE_ALL_F32);
  files.big = hz_ui_write_model ("model-big.gguf", FALSE, 3, BIG_SHAPE, HZ_FTYPE_ALL_F32);

  /* memory for the Q8_0 forms but not for the F32 files (set before any thread) */
  g_autoptr(HzModelInfo) info = hz_model_info_read (files.a, NULL);
  g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT,
                                          hz_memory_needed (info->weight_bytes) - 1);
  g_setenv ("HZ_MEMORY_AVAILABLE", mem, TRUE);

  gtk_test_init (&argc, &argv, NULL);
  g_test_add_func ("/ui/models/measure-bandwidth", test_measure);
  g_test_add_func ("/ui/models/import-switch-delete", test_models);
  int ret = g_test_run ();
  hz_ui_test_cleanup ();
  return ret;
}
