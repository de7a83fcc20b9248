/* test-ui-find.c — Find Models (issue 27) in the real app under Xvfb, against the loopback
 * Hugging Face Hub of tests/egress/hub-server.c (its recorded reply shapes; the CDN on
 * another port, as on the real Hub), named in the GSettings key hub-endpoint.
 *
 * The repository bartowski/Llama-3.2-1B-Instruct-GGUF serves one small random-weight llama
 * model written here in three file types (F32, Q8_0, Q4_K_M: real GGUF files the engine
 * loads) and a README; HZ_MEMORY_AVAILABLE is set so that the F32 file does not fit and the
 * others do, the memory read speed is preset, and the CDN is throttled so that a download
 * can be watched and paused.
 *
 * First run (no model remembered, empty library): the chat window's empty state offers
 * Find a Model; it opens the manager's Find Models page; search "llama" (Enter in the
 * entry): the five results; open the repository (its row): the files grouped by
 * quantization with sizes, fits / too large, "at most N tokens/s", Q4_K_M recommended,
 * the README not listed; download Q4_K_M: progress, verified, imported into the library,
 * Open loads it for chatting; download Q8_0 and pause at a fifth or more: its .part holds
 * what the row says; download F32 and cancel: no .part, no file; quit.
 * Second run (a restart): Q8_0 is back, paused, with its .part's bytes; Resume continues
 * with "Range: bytes=N-" and it is imported, byte for byte the served file; the egress log
 * has every request the server saw, with its purpose; the privacy page shows them as
 * "Model search “llama”", "File list of …", "Model file …/….gguf", never a "round".
 * Screenshots: find-first-run, find-results, find-files, find-downloading, find-paused,
 * find-downloaded, find-resumed, find-privacy.
 */
#include <glib/gstdio.h>

#include "hub-server.h"
#include "hz-model-finder.h"
#include "hz-model-hub.h"
#include "hz-model-info.h"
#include "hz-model-manager.h"
#include "hz-privacy-window.h"
#include "ui-test-models.h"
#include "ui-test-util.h"

#define REPO "bartowski/Llama-3.2-1B-Instruct-GGUF"
#define STEM "Llama-3.2-1B-Instruct"
#define SHAPE "custom:dim=256,layers=2,heads=4,kv=2,ffn=512,ctx=2048"
#define BANDWIDTH 20e9   /* preset memory read speed, bytes/s */

typedef struct {
  const char *quant;
  HzFtype     ftype;
  char       *path;    /* the file served */
  gsize       size;
} Served;

static Served served[] = {
  { "F32", HZ_FTYPE_ALL_F32 },
  { "Q8_0", HZ_FTYPE_Q8_0 },
  { "Q4_K_M", HZ_FTYPE_Q4_K_M },
};
enum { F32, Q8, Q4 };

static HztHub *hub;

/* ------------------------------------------------------------------ helpers */

static char *
file_name (int i)
{
  return g_strdup_printf (STEM "-%s.gguf", served[i].quant);
}

static char *
key_of (int i)
{
  g_autofree char *name = file_name (i);
  return g_strdup_printf (REPO "/%s", name);
}

static void
assert_text (GtkWidget *root, const char *part, gboolean present)
{
  g_autofree char *text = hz_ui_collect_text (root);
  if ((strstr (text, part) != NULL) != present)
    g_error ("“%s” is %sshown; the text is:\n%s", part, present ? "not " : "", text);
}

static gboolean
finder_idle (gpointer finder)
{
  return !hz_model_finder_is_busy (finder);
}

static guint
n_rows (GtkListBox *list)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child (GTK_WIDGET (list)); c;
       c = gtk_widget_get_next_sibling (c))
    n += GTK_IS_LIST_BOX_ROW (c);
  return n;
}

static gboolean
is_find_button (GtkWidget *w, gconstpointer data)
{
  return GTK_IS_BUTTON (w) &&
         g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (w)), data) == 0;
}

static gboolean
has_path (GtkWidget *w, gconstpointer path)
{
  return g_strcmp0 (g_object_get_data (G_OBJECT (w), "hz-path"), path) == 0;
}

static gboolean
has_key (GtkWidget *w, gconstpointer key)
{
  return g_strcmp0 (g_object_get_data (G_OBJECT (w), "hz-key"), key) == 0;
}

typedef struct {
  HzModelDownload *d;
  HzDownloadState  state;
  double           fraction;   /* and at least this share done */
} StateWait;

static gboolean
download_reached (gpointer data)
{
  StateWait *w = data;
  guint64 total = hz_model_download_get_total (w->d);
  return hz_model_download_get_state (w->d) == w->state &&
         !hz_model_download_is_stopping (w->d) &&
         (w->fraction <= 0 ||
          (total > 0 && hz_model_download_get_done (w->d) >= w->fraction * (double) total));
}

static void
wait_download (HzModelDownload *d, HzDownloadState state, double fraction)
{
  StateWait w = { d, state, fraction };
  if (!hz_ui_wait_for (download_reached, &w, 30))
    g_error ("download %s: state %d, %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
             " bytes (%s); waited for state %d at %.2f", hz_model_download_get_key (d),
             hz_model_download_get_state (d), hz_model_download_get_done (d),
             hz_model_download_get_total (d),
             hz_model_download_get_message (d) ? hz_model_download_get_message (d) : "",
             state, fraction);
}

static gboolean
download_has_speed (gpointer d)
{
  return hz_model_download_get_speed (d) > 0;
}

/* Press the button `name` ("pause", "resume", "cancel", "open") of the download row of `key`. */
static void
press (HzModelFinder *finder, const char *key, const char *name)
{
  GtkWidget *row = hz_ui_find_widget (GTK_WIDGET (hz_model_finder_get_downloads (finder)),
                                      has_key, key);
  g_assert_nonnull (row);
  GtkWidget *button = g_object_get_data (G_OBJECT (row), name);
  g_assert_true (gtk_widget_get_visible (button));
  g_signal_emit_by_name (button, "clicked");   /* (activate would click 250 ms later) */
}

static gboolean
manager_shown (gpointer window)
{
  return hz_ui_find_toplevel (HZ_TYPE_MODEL_MANAGER, window) != NULL;
}

static GtkWidget *
open_find_models (HzWindow *window)
{
  g_assert_true (hz_ui_wait_for (manager_shown, window, 10));
  GtkWidget *manager = hz_ui_find_toplevel (HZ_TYPE_MODEL_MANAGER, GTK_WINDOW (window));
  HzModelFinder *finder = hz_model_manager_get_finder (HZ_MODEL_MANAGER (manager));
  hz_ui_spin (0.3);
  g_assert_true (gtk_widget_get_mapped (GTK_WIDGET (finder)));   /* the page shown */
  return manager;
}

static char *
part_of (HzModelLibrary *lib, int i)
{
  g_autofree char *name = file_name (i);
  return g_strconcat (hz_model_library_get_dir (lib), "/", name, ".part", NULL);
}

static gint64
file_size (const char *path)
{
  GStatBuf st;
  return g_stat (path, &st) == 0 ? (gint64) st.st_size : -1;
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

/* ------------------------------------------------------------------ first run */

static void
script_first_run (HzApplication *app, HzWindow *window, gpointer data)
{
  HzModelHub *mh = hz_application_get_model_hub (app);
  HzModelLibrary *lib = hz_application_get_model_library (app);

  /* the empty state offers Find a Model */
  GtkWidget *find = hz_ui_find_widget (GTK_WIDGET (window), is_find_button, "app.find-models");
  g_assert_nonnull (find);
  g_assert_true (gtk_widget_is_visible (find));
  g_autofree char *s0 = hz_ui_screenshot (GTK_WIDGET (window), "find-first-run");
  gtk_widget_activate (find);
  GtkWidget *manager = open_find_models (window);
  HzModelFinder *finder = hz_model_manager_get_finder (HZ_MODEL_MANAGER (manager));

  /* search: Enter in the entry */
  GtkEditable *search = hz_model_finder_get_search_entry (finder);
  gtk_editable_set_text (search, "llama");
  g_signal_emit_by_name (search, "activate");
  g_assert_true (hz_model_finder_is_busy (finder));
  g_assert_true (hz_ui_wait_for (finder_idle, finder, 20));
  GtkListBox *results = hz_model_finder_get_results (finder);
  g_assert_cmpuint (n_rows (results), ==, 5);
  assert_text (GTK_WIDGET (results), REPO, TRUE);
  assert_text (GTK_WIDGET (results), "112873 downloads last month", TRUE);
  assert_text (GTK_WIDGET (results), "gated: needs an access token", TRUE);  /* gemma */
  hz_ui_spin (0.3);
  g_autofree char *s1 = hz_ui_screenshot (manager, "find-results");

  /* open the repository: its row */
  GtkWidget *row = gtk_widget_get_first_child (GTK_WIDGET (results));
  g_assert_cmpstr (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (row)), ==, REPO);
  gtk_widget_activate (row);
  g_assert_cmpstr (hz_model_finder_get_repo (finder), ==, REPO);
  g_assert_true (hz_ui_wait_for (finder_idle, finder, 20));
  GtkWidget *files = GTK_WIDGET (hz_model_finder_get_files (finder));
  g_assert_cmpuint (n_rows (GTK_LIST_BOX (files)), ==, 3);   /* one per quantization */
  for (int i = 0; i < 3; i++)
    {
      g_autofree char *name = file_name (i);
      g_autofree char *size = g_format_size (served[i].size);
      GtkWidget *r = hz_ui_find_widget (files, has_path, name);
      g_assert_nonnull (r);
      g_assert_cmpstr (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (r)), ==,
                       served[i].quant);
      g_autofree char *sub = g_strdup (adw_action_row_get_subtitle (ADW_ACTION_ROW (r)));
      g_test_message ("%s: %s", served[i].quant, sub);
      g_assert_nonnull (strstr (sub, size));
      g_assert_nonnull (strstr (sub, i == F32 ? "too large for this memory" : "fits in memory"));
      g_assert_nonnull (strstr (sub, "at most "));
      g_assert_nonnull (strstr (sub, "tokens/s"));
      g_autofree char *text = hz_ui_collect_text (r);
      g_assert_true ((strstr (text, "Recommended") != NULL) == (i == Q4));
    }
  assert_text (files, "README", FALSE);
  assert_text (manager, "This computer: ", TRUE);
  hz_ui_spin (0.3);
  g_autofree char *s2 = hz_ui_screenshot (manager, "find-files");

  /* download the recommended file: progress, verified, in the library, Open loads it */
  g_autofree char *q4_name = file_name (Q4);
  g_autofree char *q4_key = key_of (Q4);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (finder), "finder.download", "s",
                                             q4_name));
  HzModelDownload *q4 = hz_model_hub_find (mh, q4_key);
  g_assert_nonnull (q4);
  wait_download (q4, HZ_DOWNLOAD_DONE, 0);
  HzModelEntry *entry = hz_model_download_get_entry (q4);
  g_assert_nonnull (entry);
  g_assert_true (hz_model_library_find (lib, hz_model_entry_get_path (entry)) == entry);
  g_assert_cmpint (file_size (hz_model_entry_get_path (entry)), ==, (gint64) served[Q4].size);
  g_assert_cmpstr (hz_model_entry_get_info (entry)->file_type, ==, "Q4_K_M");
  g_autofree char *q4_path = g_strdup (hz_model_entry_get_path (entry));
  press (finder, q4_key, "open");
  ModelWait mw = { window, q4_path };
  g_assert_true (hz_ui_wait_for (model_in_use, &mw, 60));

  /* Q8_0: pause at a fifth or more; its .part holds what the row says */
  g_autofree char *q8_name = file_name (Q8);
  g_autofree char *q8_key = key_of (Q8);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (finder), "finder.download", "s",
                                             q8_name));
  HzModelDownload *q8 = hz_model_hub_find (mh, q8_key);
  wait_download (q8, HZ_DOWNLOAD_RUNNING, 0.2);
  press (finder, q8_key, "pause");
  wait_download (q8, HZ_DOWNLOAD_PAUSED, 0);
  g_autofree char *q8_part = part_of (lib, Q8);
  guint64 paused_at = hz_model_download_get_done (q8);
  g_test_message ("Q8_0 paused at %" G_GUINT64_FORMAT " of %zu bytes", paused_at,
                  served[Q8].size);
  g_assert_cmpuint (paused_at, <, served[Q8].size);
  g_assert_cmpint (file_size (q8_part), ==, (gint64) paused_at);
  assert_text (GTK_WIDGET (hz_model_finder_get_downloads (finder)), "Paused · ", TRUE);
  hz_ui_spin (0.3);
  g_autofree char *s4 = hz_ui_screenshot (manager, "find-paused");

  /* F32: cancel part-way: no .part, no file, off the list */
  g_autofree char *f32_name = file_name (F32);
  g_autofree char *f32_key = key_of (F32);
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (finder), "finder.download", "s",
                                             f32_name));
  HzModelDownload *f32 = g_object_ref (hz_model_hub_find (mh, f32_key));
  wait_download (f32, HZ_DOWNLOAD_RUNNING, 0.05);
  g_assert_true (hz_ui_wait_for (download_has_speed, f32, 10));   /* a speed sample */
  assert_text (GTK_WIDGET (hz_model_finder_get_downloads (finder)), "/s · ", TRUE);
  assert_text (GTK_WIDGET (hz_model_finder_get_downloads (finder)), " left", TRUE);
  g_autofree char *s3 = hz_ui_screenshot (manager, "find-downloading");
  press (finder, f32_key, "cancel");
  wait_download (f32, HZ_DOWNLOAD_CANCELLED, 0);
  g_object_unref (f32);
  g_assert_null (hz_model_hub_find (mh, f32_key));
  g_autofree char *f32_part = part_of (lib, F32);
  g_autofree char *f32_file = g_build_filename (hz_model_library_get_dir (lib), f32_name, NULL);
  g_assert_false (g_file_test (f32_part, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (f32_file, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (g_list_model_get_n_items (hz_model_library_get_models (lib)), ==, 1);
  hz_ui_spin (0.3);
  g_autofree char *s5 = hz_ui_screenshot (manager, "find-downloaded");
}

/* ------------------------------------------------------------------ after a restart */

static gboolean
privacy_shown (gpointer window)
{
  return hz_ui_find_toplevel (HZ_TYPE_PRIVACY_WINDOW, window) != NULL;
}

/* A privacy page row of a model file download. */
static gboolean
is_download_row (GtkWidget *w, gconstpointer data)
{
  return ADW_IS_ACTION_ROW (w) &&
         g_str_has_prefix (adw_action_row_get_subtitle (ADW_ACTION_ROW (w)), "Model file ");
}

static void
script_restart (HzApplication *app, HzWindow *window, gpointer data)
{
  HzModelHub *mh = hz_application_get_model_hub (app);
  HzModelLibrary *lib = hz_application_get_model_library (app);
  g_autofree char *q8_key = key_of (Q8);
  g_autofree char *q8_part = part_of (lib, Q8);
  gint64 part = file_size (q8_part);

  /* Q8_0 is back, paused, with what its .part holds */
  HzModelDownload *q8 = hz_model_hub_find (mh, q8_key);
  g_assert_nonnull (q8);
  g_assert_cmpuint (g_list_model_get_n_items (hz_model_hub_get_downloads (mh)), ==, 1);
  g_assert_cmpint (part, >, 0);
  wait_download (q8, HZ_DOWNLOAD_PAUSED, ((double) part - 0.5) / (double) served[Q8].size);
  g_assert_cmpuint (hz_model_download_get_done (q8), ==, (guint64) part);

  g_action_group_activate_action (G_ACTION_GROUP (app), "find-models", NULL);
  GtkWidget *manager = open_find_models (window);
  HzModelFinder *finder = hz_model_manager_get_finder (HZ_MODEL_MANAGER (manager));
  assert_text (GTK_WIDGET (hz_model_finder_get_downloads (finder)), "Paused · ", TRUE);
  g_autoptr(GPtrArray) before = hzt_hub_requests (hub);
  press (finder, q8_key, "resume");
  wait_download (q8, HZ_DOWNLOAD_DONE, 0);

  /* it went on from the .part */
  g_autoptr(GPtrArray) after = hzt_hub_requests (hub);
  g_autofree char *range = g_strdup_printf ("bytes=%" G_GINT64_FORMAT "-", part);
  gboolean ranged = FALSE;
  for (guint i = before->len; i < after->len; i++)
    {
      const HztRequest *r = after->pdata[i];
      ranged |= r->cdn && g_strcmp0 (r->range, range) == 0;
    }
  g_assert_true (ranged);
  HzModelEntry *entry = hz_model_download_get_entry (q8);
  g_autofree char *got = NULL, *want = NULL;
  gsize got_len = 0, want_len = 0;
  g_assert_true (g_file_get_contents (hz_model_entry_get_path (entry), &got, &got_len, NULL));
  g_assert_true (g_file_get_contents (served[Q8].path, &want, &want_len, NULL));
  g_assert_cmpmem (got, got_len, want, want_len);
  g_assert_false (g_file_test (q8_part, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (g_list_model_get_n_items (hz_model_library_get_models (lib)), ==, 2);
  hz_ui_spin (0.3);
  g_autofree char *s6 = hz_ui_screenshot (manager, "find-resumed");

  /* nothing is remembered any more; Dismiss takes it off the list */
  g_autoptr(GVariant) pending = g_settings_get_value (hz_application_get_settings (app),
                                                      "model-downloads");
  g_assert_cmpuint (g_variant_n_children (pending), ==, 0);
  press (finder, q8_key, "dismiss");
  g_assert_null (hz_model_hub_find (mh, q8_key));

  /* every request is in the egress log, with what it was for; the privacy page says it */
  g_autoptr(GError) error = NULL;
  g_autoptr(HzStore) store = hz_store_open (NULL, &error);
  g_assert_no_error (error);
  hzt_hub_assert_log (hub, store);
  gtk_window_present (GTK_WINDOW (window));
  hz_ui_spin (0.2);
  /* the page is transient for the application's active window (action_privacy), which
   * need not be `window` yet after present() on a loaded X server: the finder window may
   * still be the active one (the test waited for a page under `window` for ever) */
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (app));
  g_test_message ("privacy page opened from the %s", parent == GTK_WINDOW (window)
                  ? "chat window" : parent ? G_OBJECT_TYPE_NAME (parent) : "(no window)");
  g_action_group_activate_action (G_ACTION_GROUP (app), "privacy", NULL);
  g_assert_true (hz_ui_wait_for (privacy_shown, parent, 10));
  GtkWidget *privacy = hz_ui_find_toplevel (HZ_TYPE_PRIVACY_WINDOW, parent);
  hz_ui_spin (0.5);
  g_autoptr(GPtrArray) reqs = hzt_hub_requests (hub);
  g_assert_cmpuint (hz_privacy_window_get_n_egress_rows (HZ_PRIVACY_WINDOW (privacy)), ==,
                    reqs->len);
  g_autofree char *q8_name = file_name (Q8);
  assert_text (privacy, "Model search “llama” · ", TRUE);
  assert_text (privacy, "File list of " REPO " · ", TRUE);
  g_autofree char *q8_row = g_strdup_printf ("Model file " REPO "/%s · ", q8_name);
  assert_text (privacy, q8_row, TRUE);
  assert_text (privacy, "round", FALSE);
  /* the egress log's list, where the rows are (further down the page) */
  GtkWidget *row = hz_ui_find_widget (privacy, is_download_row, NULL);
  g_assert_nonnull (row);
  g_autofree char *s7 = hz_ui_screenshot (gtk_widget_get_ancestor (row, GTK_TYPE_LIST_BOX),
                                          "find-privacy");
  gtk_window_destroy (GTK_WINDOW (privacy));
}

static void
test_find (void)
{
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_settings_set_double (settings, "memory-bandwidth", BANDWIDTH);
  g_settings_sync ();
  hz_ui_run_app (NULL, script_first_run, NULL);
  hz_ui_run_app (NULL, script_restart, NULL);
}

int
main (int argc, char *argv[])
{
  hz_ui_test_init ();
  hub = hzt_hub_new ();
  for (guint i = 0; i < G_N_ELEMENTS (served); i++)
    {
      g_autofree char *name = file_name (i);
      g_autofree char *data = NULL;
      served[i].path = hz_ui_write_model (name, TRUE, 7, SHAPE, served[i].ftype);
      g_assert_true (g_file_get_contents (served[i].path, &data, &served[i].size, NULL));
      hzt_hub_add_file (hub, REPO, name, g_bytes_new_take (g_steal_pointer (&data),
                                                           served[i].size), HZT_LFS, 0);
    }
  const char readme[] = "# Llama 3.2 1B Instruct GGUF\n";
  hzt_hub_add_file (hub, REPO, "README.md", g_bytes_new_static (readme, sizeof readme - 1), 0, 0);
  /* memory for the Q8_0 and Q4_K_M files but not for the F32 one (before any thread) */
  g_autofree char *mem = g_strdup_printf ("%" G_GUINT64_FORMAT,
                                          hz_memory_needed (served[Q8].size) +
                                          (served[F32].size - served[Q8].size) / 2);
  g_setenv ("HZ_MEMORY_AVAILABLE", mem, TRUE);
  /* about 0.8 MB/s: a download takes long enough to be watched and paused (Q8_0: 1.8 s) */
  hzt_hub_set_throttle (hub, 8 * 1024, 10);
  hzt_hub_start (hub);

  gtk_test_init (&argc, &argv, NULL);
  /* the app's setting (else $HF_ENDPOINT, else huggingface.co) */
  g_autoptr(GSettings) settings = g_settings_new ("ai.hanzo.Desktop");
  g_autofree char *url = hzt_hub_url (hub);
  g_settings_set_string (settings, "hub-endpoint", url);
  g_settings_sync ();
  g_test_add_func ("/ui/find/search-download-pause-resume", test_find);
  int ret = g_test_run ();
  hzt_hub_free (hub);
  hz_ui_test_cleanup ();
  return ret;
}
