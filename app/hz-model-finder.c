/* hz-model-finder.c — HzModelFinder, the Find Models page (hz-model-finder.h).
 *
 * Layout (one scrolled column): the downloads (bound to the hub's list, shown while there
 * are any), then a stack of two pages: the search (entry, Search button, results) and a
 * repository (back button, this computer's memory and read speed, the GGUF files grouped
 * by quantization). The files' rows are rebuilt when the memory read speed or the speed
 * target changes (their predictions and the recommendation depend on both).
 */
#include "hz-model-finder.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hanzo/egress.h"
#include "hz-hub-options.h"
#include "hz-model-hub.h"
#include "hz-model-info.h"
#include "hz-model-rows.h"

struct _HzModelFinder {
  AdwBin          parent_instance;

  HzAppContext   *ctx;
  HzModelHub     *hub;
  GSettings      *settings;

  GtkWidget      *downloads_group;
  GtkListBox     *downloads_list;
  GtkStack       *stack;
  GtkEditable    *search_entry;
  GtkWidget      *search_spinner;
  GtkLabel       *search_status;
  GtkWidget      *results_group;
  GtkListBox     *results_list;
  GtkLabel       *repo_title;
  GtkLabel       *machine_label;
  GtkWidget      *files_spinner;
  GtkLabel       *files_status;
  GtkWidget      *files_group;
  GtkListBox     *files_list;

  GCancellable   *searching;   /* the running search, or NULL */
  GCancellable   *listing;     /* the running listing, or NULL */
  char           *repo;        /* the repository shown, or NULL */
  GPtrArray      *files;       /* its listing (HzHubFile*), or NULL */
  GPtrArray      *options;     /* HzHubOption* over `files`, or NULL */
  gulong          downloads_changed_id;
};

G_DEFINE_FINAL_TYPE (HzModelFinder, hz_model_finder, ADW_TYPE_BIN)

/* ------------------------------------------------------------------ helpers */

static void
list_clear (GtkListBox *list)
{
  for (GtkWidget *c; (c = gtk_widget_get_first_child (GTK_WIDGET (list))); )
    gtk_list_box_remove (list, c);
}

static GtkListBox *
boxed_list (const char *accessible_name)
{
  GtkWidget *list = gtk_list_box_new ();
  gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class (list, "boxed-list");
  gtk_accessible_update_property (GTK_ACCESSIBLE (list), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  accessible_name, -1);
  return GTK_LIST_BOX (list);
}

static GtkLabel *
status_label (void)
{
  GtkWidget *l = gtk_label_new (NULL);
  gtk_label_set_wrap (GTK_LABEL (l), TRUE);
  gtk_label_set_xalign (GTK_LABEL (l), 0);
  gtk_widget_add_css_class (l, "dim-label");
  gtk_widget_set_visible (l, FALSE);
  return GTK_LABEL (l);
}

static void
show_status (GtkLabel *label, const char *text)
{
  gtk_label_set_text (label, text ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (label), text != NULL);
}

static void
set_busy (GtkWidget *spinner, gboolean busy)
{
  gtk_widget_set_visible (spinner, busy);
  gtk_spinner_set_spinning (GTK_SPINNER (spinner), busy);
}

/* ------------------------------------------------------------------ downloads */

static char *
clock_text (double seconds)
{
  guint t = (guint) (seconds + 0.5);
  return t >= 3600 ? g_strdup_printf ("%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60)
                   : g_strdup_printf ("%u:%02u", t / 60, t % 60);
}

/* What a download row says under the file name (g_free). */
static char *
download_subtitle (HzModelDownload *d)
{
  guint64 done = hz_model_download_get_done (d), total = hz_model_download_get_total (d);
  g_autofree char *done_s = g_format_size (done);
  g_autofree char *total_s = g_format_size (total);
  const char *repo = hz_model_download_get_repo (d);

  switch (hz_model_download_get_state (d))
    {
    case HZ_DOWNLOAD_RUNNING:
      {
        if (hz_model_download_is_stopping (d))
          return g_strdup_printf (_("%s · stopping…"), repo);
        double speed = hz_model_download_get_speed (d);
        if (speed <= 0 || total == 0)
          /* TRANSLATORS: repository · "12 MB of 800 MB" */
          return g_strdup_printf (_("%s · %s of %s"), repo, done_s, total_s);
        g_autofree char *speed_s = g_format_size ((guint64) speed);
        g_autofree char *left = clock_text ((double) (total - MIN (done, total)) / speed);
        /* TRANSLATORS: repository · "12 MB of 800 MB" · "3.1 MB/s" · "1:20 left" */
        return g_strdup_printf (_("%s · %s of %s · %s/s · %s left"), repo, done_s, total_s,
                                speed_s, left);
      }
    case HZ_DOWNLOAD_PAUSED:
      return g_strdup_printf (_("Paused · %s of %s · %s"), done_s, total_s, repo);
    case HZ_DOWNLOAD_FAILED:
      return g_strdup (hz_model_download_get_message (d));
    case HZ_DOWNLOAD_IMPORTING:
      return g_strdup (_("Verified · adding it to your models…"));
    case HZ_DOWNLOAD_DONE:
      return g_strdup_printf (_("Downloaded and verified (%s) · in your models"), total_s);
    case HZ_DOWNLOAD_CANCELLED:
    default:
      return g_strdup (_("Cancelled"));
    }
}

/* Show the row's download as it is now (its "notify" handler). */
static void
update_download_row (HzModelDownload *d, GParamSpec *pspec, GtkWidget *row)
{
  HzDownloadState st = hz_model_download_get_state (d);
  gboolean stopping = hz_model_download_is_stopping (d);
  guint64 done = hz_model_download_get_done (d), total = hz_model_download_get_total (d);
  GtkWidget *bar = g_object_get_data (G_OBJECT (row), "hz-bar");
  g_autofree char *sub = download_subtitle (d);

  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), sub);
  gtk_widget_set_visible (bar, st == HZ_DOWNLOAD_RUNNING || st == HZ_DOWNLOAD_PAUSED);
  gtk_progress_bar_set_fraction (GTK_PROGRESS_BAR (bar),
                                 total ? (double) MIN (done, total) / (double) total : 0);
  gtk_accessible_update_property (GTK_ACCESSIBLE (bar), GTK_ACCESSIBLE_PROPERTY_VALUE_TEXT,
                                  sub, -1);
  const struct { const char *name; gboolean shown; } buttons[] = {
    { "pause", st == HZ_DOWNLOAD_RUNNING && !stopping },
    { "resume", st == HZ_DOWNLOAD_PAUSED || st == HZ_DOWNLOAD_FAILED },
    { "cancel", st == HZ_DOWNLOAD_RUNNING || st == HZ_DOWNLOAD_PAUSED ||
                st == HZ_DOWNLOAD_FAILED },
    { "open", st == HZ_DOWNLOAD_DONE },
    { "dismiss", st == HZ_DOWNLOAD_DONE },
  };
  for (guint i = 0; i < G_N_ELEMENTS (buttons); i++)
    gtk_widget_set_visible (g_object_get_data (G_OBJECT (row), buttons[i].name),
                            buttons[i].shown);
}

static GtkWidget *
create_download_row (gpointer item, gpointer data)
{
  HzModelDownload *d = item;
  GtkWidget *row = adw_action_row_new ();
  GVariant *key = g_variant_new_string (hz_model_download_get_key (d));
  const char *title = hz_model_download_get_file_name (d);   /* (it names the quantization) */

  g_variant_ref_sink (key);
  gtk_widget_set_name (row, "download");
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 3);
  g_object_set_data_full (G_OBJECT (row), "hz-key",
                          g_strdup (hz_model_download_get_key (d)), g_free);

  GtkWidget *bar = gtk_progress_bar_new ();
  gtk_widget_set_valign (bar, GTK_ALIGN_CENTER);
  gtk_widget_set_size_request (bar, 80, -1);
  g_autofree char *bar_name = g_strdup_printf (_("Download of %s"),
                                               hz_model_download_get_file_name (d));
  gtk_accessible_update_property (GTK_ACCESSIBLE (bar), GTK_ACCESSIBLE_PROPERTY_LABEL, bar_name,
                                  -1);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), bar);
  g_object_set_data (G_OBJECT (row), "hz-bar", bar);

  const struct { const char *name, *label, *action; } buttons[] = {
    { "pause", N_("_Pause"), "finder.pause" },
    { "resume", N_("_Resume"), "finder.resume" },
    { "cancel", N_("_Cancel"), "finder.cancel" },
    { "open", N_("_Open"), "finder.open" },
    { "dismiss", N_("_Dismiss"), "finder.dismiss" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (buttons); i++)
    {
      GtkWidget *b = hz_model_rows_button (_(buttons[i].label), buttons[i].action, key);
      if (g_str_equal (buttons[i].name, "open"))
        gtk_widget_add_css_class (b, "suggested-action");
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), b);
      g_object_set_data (G_OBJECT (row), buttons[i].name, b);
    }
  g_variant_unref (key);
  g_signal_connect_object (d, "notify", G_CALLBACK (update_download_row), row, 0);
  update_download_row (d, NULL, row);
  return row;
}

static void
on_downloads_changed (GListModel *model, guint pos, guint removed, guint added,
                      HzModelFinder *self)
{
  gtk_widget_set_visible (self->downloads_group, g_list_model_get_n_items (model) > 0);
}

/* The download an action names (its key), or NULL. */
static HzModelDownload *
download_for (HzModelFinder *self, GVariant *param)
{
  return hz_model_hub_find (self->hub, g_variant_get_string (param, NULL));
}

static void
action_pause (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelDownload *d = download_for (HZ_MODEL_FINDER (widget), param);
  if (d != NULL)
    hz_model_download_pause (d);
}

static void
action_resume (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  HzModelDownload *d = download_for (self, param);
  if (d != NULL)
    hz_model_hub_resume (self->hub, d);
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  HzModelDownload *d = download_for (self, param);
  if (d != NULL)
    hz_model_hub_remove (self->hub, d);   /* cancels it: its .part files are deleted */
}

static void
action_dismiss (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  HzModelDownload *d = download_for (self, param);
  if (d != NULL && hz_model_download_get_state (d) == HZ_DOWNLOAD_DONE)
    hz_model_hub_remove (self->hub, d);
}

/* Open the downloaded model for chatting (and remember it), in front of the chat window. */
static void
action_open (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  HzModelDownload *d = download_for (self, param);
  HzModelEntry *entry = d ? hz_model_download_get_entry (d) : NULL;
  if (entry == NULL)
    return;
  GApplication *app = hz_app_context_get_application (self->ctx);
  hz_app_context_open_model (self->ctx, hz_model_entry_get_path (entry), TRUE);
  /* the chat window: the app's one application window (the others are AdwWindows) */
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (app)); l; l = l->next)
    if (GTK_IS_APPLICATION_WINDOW (l->data))
      {
        gtk_window_present (l->data);
        break;
      }
}

/* ------------------------------------------------------------------ search */

static GtkWidget *
result_row (const HzHubModel *m)
{
  GtkWidget *row = adw_action_row_new ();
  GString *sub = g_string_new (NULL);

  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), m->id);
  if (m->downloads >= 0)
    {
      g_autofree char *n = g_strdup_printf ("%" G_GINT64_FORMAT, m->downloads);
      g_string_append_printf (sub, ngettext ("%s download last month", "%s downloads last month",
                                             (gulong) m->downloads), n);
    }
  if (m->likes >= 0)
    {
      g_autofree char *n = g_strdup_printf ("%" G_GINT64_FORMAT, m->likes);
      if (sub->len)
        g_string_append (sub, " · ");
      g_string_append_printf (sub, ngettext ("%s like", "%s likes", (gulong) m->likes), n);
    }
  if (m->last_modified != NULL && strlen (m->last_modified) >= 10)
    {
      g_autofree char *day = g_strndup (m->last_modified, 10);
      if (sub->len)
        g_string_append (sub, " · ");
      g_string_append_printf (sub, _("updated %s"), day);
    }
  if (m->gated != NULL)
    {
      if (sub->len)
        g_string_append (sub, " · ");
      g_string_append (sub, _("gated: needs an access token"));
    }
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), sub->str);
  g_string_free (sub, TRUE);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row),
                             gtk_image_new_from_icon_name ("go-next-symbolic"));
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "finder.open-repo");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (row), g_variant_new_string (m->id));
  return row;
}

static void
search_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelFinder) self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) models = hz_model_hub_search_finish (HZ_MODEL_HUB (source), result,
                                                            &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED) || self->hub == NULL)
    return;
  g_clear_object (&self->searching);
  set_busy (self->search_spinner, FALSE);
  if (models == NULL)
    {
      g_autofree char *text = hz_hub_client_error_text (error);
      show_status (self->search_status, text);
      return;
    }
  for (guint i = 0; i < models->len; i++)
    gtk_list_box_append (self->results_list, result_row (models->pdata[i]));
  gtk_widget_set_visible (self->results_group, models->len > 0);
  show_status (self->search_status,
               models->len ? NULL : _("No GGUF model has that in its name."));
}

static void
action_search (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  g_autofree char *query = g_strstrip (g_strdup (gtk_editable_get_text (self->search_entry)));

  if (*query == '\0')
    return;
  if (self->searching != NULL)
    g_cancellable_cancel (self->searching);
  g_clear_object (&self->searching);
  self->searching = g_cancellable_new ();
  list_clear (self->results_list);
  gtk_widget_set_visible (self->results_group, FALSE);
  show_status (self->search_status, NULL);
  set_busy (self->search_spinner, TRUE);
  hz_model_hub_search_async (self->hub, query, self->searching, search_done,
                             g_object_ref (self));
}

/* ------------------------------------------------------------------ a repository */

static void
update_machine (HzModelFinder *self)
{
  double bw = g_settings_get_double (self->settings, "memory-bandwidth");
  g_autofree char *avail = g_format_size (hz_memory_available ());
  g_autofree char *text = NULL;
  if (bw > 0)
    {
      g_autofree char *bws = g_format_size ((guint64) bw);
      /* TRANSLATORS: "12 GB of memory available · memory read speed 20 GB/s" */
      text = g_strdup_printf (_("This computer: %s of memory available · memory read speed "
                                "%s/s"), avail, bws);
    }
  else
    text = g_strdup_printf (_("This computer: %s of memory available · memory read speed "
                              "not measured yet"), avail);
  gtk_label_set_text (self->machine_label, text);
}

/* The row of one model: its file, size, fit and speed; Recommended; Download. */
static GtkWidget *
option_row (HzModelFinder *self, const HzHubOption *o, const char *title)
{
  GtkWidget *row = adw_action_row_new ();
  g_autofree char *base = g_path_get_basename (o->path);
  g_autofree char *size = g_format_size (o->size);
  g_autofree char *need = g_format_size (hz_memory_needed (o->size));
  g_autofree char *avail = g_format_size (hz_memory_available ());
  GString *sub = g_string_new (NULL);

  gtk_widget_set_name (row, "hub-file");
  g_object_set_data_full (G_OBJECT (row), "hz-path", g_strdup (o->path), g_free);
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (!g_str_equal (title, base))
    g_string_append_printf (sub, "%s · ", base);
  g_string_append (sub, size);
  if (o->files->len > 1)
    g_string_append_printf (sub, ngettext (" in %u file", " in %u files", o->files->len),
                            o->files->len);
  g_string_append (sub, o->fits ? _(" · fits in memory") : _(" · too large for this memory"));
  if (o->tokens_per_s > 0)
    {
      g_autofree char *tps = hz_model_rows_format_speed (o->tokens_per_s);
      /* TRANSLATORS: appended; an upper bound of the decode speed */
      g_string_append_printf (sub, _(" · at most %s"), tps);
    }
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), sub->str);
  g_string_free (sub, TRUE);
  g_autofree char *tip = g_strdup_printf (
    _("Needs about %s of memory (the file, 10 %% and 512 MB more); %s is available. Its speed "
      "is at most the memory read speed ÷ its size: each token reads the whole model once, "
      "and takes some fixed time besides, which a first reply measures."), need, avail);
  gtk_widget_set_tooltip_text (row, tip);

  if (o->recommended)
    {
      GtkWidget *tag = hz_model_rows_tag (_("Recommended"));
      gtk_widget_set_tooltip_text (tag, hz_hub_options_rule ());
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), tag);
    }
  GtkWidget *b = hz_model_rows_button (_("_Download"), "finder.download",
                                       g_variant_new_string (o->path));
  g_autofree char *b_name = g_strdup_printf (_("Download %s"), base);
  gtk_accessible_update_property (GTK_ACCESSIBLE (b), GTK_ACCESSIBLE_PROPERTY_LABEL, b_name, -1);
  if (o->recommended)
    gtk_widget_add_css_class (b, "suggested-action");
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), b);
  return row;
}

/* One row per quantization: the model itself, or an expander of the models sharing it. */
static void
rebuild_files (HzModelFinder *self)
{
  list_clear (self->files_list);
  g_clear_pointer (&self->options, g_ptr_array_unref);
  update_machine (self);
  if (self->files == NULL)
    return;
  self->options = hz_hub_options_new (self->files, hz_memory_available (),
                                      g_settings_get_double (self->settings, "memory-bandwidth"),
                                      g_settings_get_double (self->settings, "speed-target"));
  for (guint i = 0; i < self->options->len; )
    {
      const HzHubOption *o = self->options->pdata[i];
      guint n = 1;
      while (i + n < self->options->len &&
             g_strcmp0 (((HzHubOption *) self->options->pdata[i + n])->quant, o->quant) == 0)
        n++;
      const char *quant = o->quant ? o->quant : _("Other");
      if (n == 1)
        gtk_list_box_append (self->files_list, option_row (self, o, quant));
      else
        {
          GtkWidget *exp = adw_expander_row_new ();
          gboolean has_rec = FALSE;
          adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (exp), FALSE);
          adw_preferences_row_set_title (ADW_PREFERENCES_ROW (exp), quant);
          g_autofree char *sub = g_strdup_printf (ngettext ("%u model", "%u models", n), n);
          adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (exp), sub);
          for (guint k = 0; k < n; k++)
            {
              const HzHubOption *ok = self->options->pdata[i + k];
              g_autofree char *base = g_path_get_basename (ok->path);
              adw_expander_row_add_row (ADW_EXPANDER_ROW (exp), option_row (self, ok, base));
              has_rec |= ok->recommended;
            }
          adw_expander_row_set_expanded (ADW_EXPANDER_ROW (exp), has_rec);
          gtk_list_box_append (self->files_list, exp);
        }
      i += n;
    }
  gtk_widget_set_visible (self->files_group, self->options->len > 0);
  if (self->options->len == 0)
    show_status (self->files_status, _("This repository has no GGUF model file."));
}

static void
list_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelFinder) self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) files = hz_model_hub_list_files_finish (HZ_MODEL_HUB (source), result,
                                                               &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
      g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED) || self->hub == NULL)
    return;
  g_clear_object (&self->listing);
  set_busy (self->files_spinner, FALSE);
  if (files == NULL)
    {
      g_autofree char *text = hz_hub_client_error_text (error);
      show_status (self->files_status, text);
      return;
    }
  self->files = g_steal_pointer (&files);
  rebuild_files (self);
}

static void
stop_listing (HzModelFinder *self)
{
  if (self->listing != NULL)
    g_cancellable_cancel (self->listing);
  g_clear_object (&self->listing);
  set_busy (self->files_spinner, FALSE);
}

static void
action_open_repo (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  const char *repo = g_variant_get_string (param, NULL);

  stop_listing (self);
  g_free (self->repo);
  self->repo = g_strdup (repo);
  g_clear_pointer (&self->files, g_ptr_array_unref);
  rebuild_files (self);
  gtk_label_set_text (self->repo_title, repo);
  gtk_widget_set_visible (self->files_group, FALSE);
  show_status (self->files_status, NULL);
  gtk_stack_set_visible_child_name (self->stack, "repo");
  self->listing = g_cancellable_new ();
  set_busy (self->files_spinner, TRUE);
  hz_model_hub_list_files_async (self->hub, repo, self->listing, list_done, g_object_ref (self));
}

static void
action_back (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  stop_listing (self);
  g_clear_pointer (&self->repo, g_free);
  gtk_stack_set_visible_child_name (self->stack, "search");
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

static void
action_download (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelFinder *self = HZ_MODEL_FINDER (widget);
  const char *path = g_variant_get_string (param, NULL);

  for (guint i = 0; self->options != NULL && i < self->options->len; i++)
    {
      const HzHubOption *o = self->options->pdata[i];
      if (g_str_equal (o->path, path))
        {
          hz_model_hub_download (self->hub, self->repo, o->files);
          return;
        }
    }
}

/* ------------------------------------------------------------------ building */

static GtkWidget *
build_search_page (HzModelFinder *self)
{
  GtkWidget *page = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *entry = gtk_search_entry_new ();
  GtkWidget *go = gtk_button_new_with_mnemonic (_("_Search"));
  g_autofree char *endpoint = hz_model_hub_get_endpoint (self->hub);

  self->search_entry = GTK_EDITABLE (entry);
  gtk_widget_set_hexpand (entry, TRUE);
  g_object_set (entry, "placeholder-text", _("Search GGUF models, e.g. llama 1b"), NULL);
  gtk_accessible_update_property (GTK_ACCESSIBLE (entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Search models on Hugging Face"), -1);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (go), "finder.search");
  gtk_widget_add_css_class (go, "suggested-action");
  gtk_box_append (GTK_BOX (bar), entry);
  gtk_box_append (GTK_BOX (bar), go);
  gtk_box_append (GTK_BOX (page), bar);

  GtkLabel *note = status_label ();
  g_autofree char *note_text = g_strdup_printf (
    _("Searches %s for models in GGUF format. Only the words you search for and the names of "
      "the repositories and files you choose are sent; every request is listed on the "
      "privacy page."), endpoint);
  show_status (note, note_text);
  gtk_box_append (GTK_BOX (page), GTK_WIDGET (note));

  self->search_spinner = gtk_spinner_new ();
  set_busy (self->search_spinner, FALSE);
  gtk_box_append (GTK_BOX (page), self->search_spinner);
  self->search_status = status_label ();
  gtk_box_append (GTK_BOX (page), GTK_WIDGET (self->search_status));

  self->results_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->results_group), _("Results"));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (self->results_group),
                                         _("Most downloaded first. Choose one to see its files."));
  self->results_list = boxed_list (_("Search results"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->results_group),
                             GTK_WIDGET (self->results_list));
  gtk_widget_set_visible (self->results_group, FALSE);
  gtk_box_append (GTK_BOX (page), self->results_group);
  return page;
}

static GtkWidget *
build_repo_page (HzModelFinder *self)
{
  GtkWidget *page = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  GtkWidget *head = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *back = gtk_button_new_from_icon_name ("go-previous-symbolic");
  GtkWidget *title = gtk_label_new (NULL);

  gtk_actionable_set_action_name (GTK_ACTIONABLE (back), "finder.back");
  gtk_widget_set_tooltip_text (back, _("Back to the search results"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (back), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Back to the search results"), -1);
  self->repo_title = GTK_LABEL (title);
  gtk_label_set_ellipsize (self->repo_title, PANGO_ELLIPSIZE_MIDDLE);
  gtk_label_set_xalign (self->repo_title, 0);
  gtk_label_set_selectable (self->repo_title, TRUE);
  gtk_widget_set_hexpand (title, TRUE);
  gtk_widget_add_css_class (title, "title-4");
  gtk_box_append (GTK_BOX (head), back);
  gtk_box_append (GTK_BOX (head), title);
  gtk_box_append (GTK_BOX (page), head);

  self->machine_label = status_label ();
  gtk_widget_set_visible (GTK_WIDGET (self->machine_label), TRUE);
  gtk_box_append (GTK_BOX (page), GTK_WIDGET (self->machine_label));
  self->files_spinner = gtk_spinner_new ();
  set_busy (self->files_spinner, FALSE);
  gtk_box_append (GTK_BOX (page), self->files_spinner);
  self->files_status = status_label ();
  gtk_box_append (GTK_BOX (page), GTK_WIDGET (self->files_status));

  self->files_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->files_group),
                                   _("GGUF Files by Quantization"));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (self->files_group),
    _("Smaller quantizations are faster and take less memory; larger ones are closer to the "
      "original model. Speeds are upper bounds until a first reply is measured."));
  gtk_widget_set_tooltip_text (self->files_group, hz_hub_options_rule ());
  self->files_list = boxed_list (_("GGUF files"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->files_group),
                             GTK_WIDGET (self->files_list));
  gtk_widget_set_visible (self->files_group, FALSE);
  gtk_box_append (GTK_BOX (page), self->files_group);
  return page;
}

static void
on_entry_activate (GtkSearchEntry *entry, HzModelFinder *self)
{
  gtk_widget_activate_action (GTK_WIDGET (self), "finder.search", NULL);
}

static void
build (HzModelFinder *self)
{
  GtkWidget *scroller = gtk_scrolled_window_new ();
  GtkWidget *clamp = adw_clamp_new ();
  GtkWidget *column = gtk_box_new (GTK_ORIENTATION_VERTICAL, 24);

  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  adw_clamp_set_maximum_size (ADW_CLAMP (clamp), 720);
  gtk_widget_set_margin_start (column, 12);
  gtk_widget_set_margin_end (column, 12);
  gtk_widget_set_margin_top (column, 24);
  gtk_widget_set_margin_bottom (column, 24);

  self->downloads_group = adw_preferences_group_new ();
  adw_preferences_group_set_title (ADW_PREFERENCES_GROUP (self->downloads_group),
                                   _("Downloads"));
  adw_preferences_group_set_description (ADW_PREFERENCES_GROUP (self->downloads_group),
    _("Each file is checked against its SHA-256 before it joins your models. A paused "
      "download continues where it stopped, also after Hanzo restarts."));
  self->downloads_list = boxed_list (_("Downloads"));
  adw_preferences_group_add (ADW_PREFERENCES_GROUP (self->downloads_group),
                             GTK_WIDGET (self->downloads_list));
  GListModel *downloads = hz_model_hub_get_downloads (self->hub);
  gtk_list_box_bind_model (self->downloads_list, downloads, create_download_row, self, NULL);
  self->downloads_changed_id = g_signal_connect (downloads, "items-changed",
                                                 G_CALLBACK (on_downloads_changed), self);
  on_downloads_changed (downloads, 0, 0, 0, self);
  gtk_box_append (GTK_BOX (column), self->downloads_group);

  self->stack = GTK_STACK (gtk_stack_new ());
  gtk_stack_set_vhomogeneous (self->stack, FALSE);
  gtk_stack_set_hhomogeneous (self->stack, FALSE);
  gtk_stack_set_transition_type (self->stack, GTK_STACK_TRANSITION_TYPE_CROSSFADE);
  gtk_stack_add_named (self->stack, build_search_page (self), "search");
  gtk_stack_add_named (self->stack, build_repo_page (self), "repo");
  gtk_box_append (GTK_BOX (column), GTK_WIDGET (self->stack));
  g_signal_connect (self->search_entry, "activate", G_CALLBACK (on_entry_activate), self);

  adw_clamp_set_child (ADW_CLAMP (clamp), column);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), clamp);
  adw_bin_set_child (ADW_BIN (self), scroller);
}

/* ------------------------------------------------------------------ public API */

GtkWidget *
hz_model_finder_new (HzAppContext *ctx)
{
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  HzModelFinder *self = g_object_new (HZ_TYPE_MODEL_FINDER, NULL);
  self->ctx = ctx;
  self->hub = g_object_ref (hz_app_context_get_model_hub (ctx));
  self->settings = g_object_ref (hz_app_context_get_settings (ctx));
  build (self);
  g_signal_connect_object (self->settings, "changed::memory-bandwidth",
                           G_CALLBACK (rebuild_files), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->settings, "changed::speed-target",
                           G_CALLBACK (rebuild_files), self, G_CONNECT_SWAPPED);
  return GTK_WIDGET (self);
}

void
hz_model_finder_focus_search (HzModelFinder *self)
{
  g_return_if_fail (HZ_IS_MODEL_FINDER (self));
  gtk_widget_grab_focus (GTK_WIDGET (self->search_entry));
}

gboolean
hz_model_finder_is_busy (HzModelFinder *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_FINDER (self), FALSE);
  return self->searching != NULL || self->listing != NULL;
}

const char *
hz_model_finder_get_repo (HzModelFinder *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_FINDER (self), NULL);
  return self->repo;
}

GtkEditable *hz_model_finder_get_search_entry (HzModelFinder *self) { return self->search_entry; }
GtkListBox *hz_model_finder_get_results (HzModelFinder *self) { return self->results_list; }
GtkListBox *hz_model_finder_get_files (HzModelFinder *self) { return self->files_list; }
GtkListBox *hz_model_finder_get_downloads (HzModelFinder *self) { return self->downloads_list; }

/* ------------------------------------------------------------------ GObject */

static void
hz_model_finder_dispose (GObject *object)
{
  HzModelFinder *self = HZ_MODEL_FINDER (object);

  if (self->searching != NULL)
    g_cancellable_cancel (self->searching);
  g_clear_object (&self->searching);
  if (self->listing != NULL)
    g_cancellable_cancel (self->listing);
  g_clear_object (&self->listing);
  if (self->hub != NULL)
    {
      g_clear_signal_handler (&self->downloads_changed_id, hz_model_hub_get_downloads (self->hub));
      if (self->downloads_list != NULL)
        gtk_list_box_bind_model (self->downloads_list, NULL, NULL, NULL, NULL);
    }
  g_clear_object (&self->hub);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->options, g_ptr_array_unref);
  g_clear_pointer (&self->files, g_ptr_array_unref);
  g_clear_pointer (&self->repo, g_free);
  G_OBJECT_CLASS (hz_model_finder_parent_class)->dispose (object);
}

static void
hz_model_finder_class_init (HzModelFinderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_model_finder_dispose;
  gtk_widget_class_install_action (widget_class, "finder.search", NULL, action_search);
  gtk_widget_class_install_action (widget_class, "finder.open-repo", "s", action_open_repo);
  gtk_widget_class_install_action (widget_class, "finder.back", NULL, action_back);
  gtk_widget_class_install_action (widget_class, "finder.download", "s", action_download);
  gtk_widget_class_install_action (widget_class, "finder.pause", "s", action_pause);
  gtk_widget_class_install_action (widget_class, "finder.resume", "s", action_resume);
  gtk_widget_class_install_action (widget_class, "finder.cancel", "s", action_cancel);
  gtk_widget_class_install_action (widget_class, "finder.open", "s", action_open);
  gtk_widget_class_install_action (widget_class, "finder.dismiss", "s", action_dismiss);
}

static void
hz_model_finder_init (HzModelFinder *self)
{
}
