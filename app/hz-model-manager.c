/* hz-model-manager.c — HzModelManager (see hz-model-manager.h).
 *
 * The rows are rebuilt (in an idle, coalesced) whenever something they show changes: the
 * list, a setting (default, guard, bandwidth, speed target), a measured speed or the model
 * in use; which rows are expanded is kept across rebuilds. The model the engine worker has
 * loaded is shown first ("In Use"), also when it was opened from elsewhere (--model, the
 * remembered model) and is not in the list (hz_model_library_lookup_async), so that the
 * window never says there is no model while one is chatting. Predicted speeds follow
 * hz-model-info.h's t = t0 + bytes / B, with t0 from the measured replies
 * (hz_model_library_speed_model); each row's tooltip says how its figure was computed. Long work (import, quantize, bandwidth) runs in
 * GTask threads; Cancel stops it. A quantization shows the engine's progress (the share
 * of the source's tensor bytes done, as a fraction and a percentage); an import, whose
 * copy reports nothing, pulses the bar.
 */
#include "hz-model-manager.h"

#include <glib/gi18n.h>

#include "hz-model-finder.h"
#include "hz-model-rows.h"
#include "membw.h"

#define PULSE_MS 120
#define MEASURE_SECONDS 0.5  /* budget of the bandwidth benchmark */

struct _HzModelManager {
  AdwWindow        parent_instance;

  /* template */
  GtkWidget       *import_button;
  GtkRevealer     *progress_revealer;
  GtkLabel        *progress_label;
  GtkProgressBar  *progress_bar;
  AdwToastOverlay *toast_overlay;
  AdwActionRow    *memory_row;
  AdwActionRow    *bandwidth_row;
  GtkAdjustment   *target_adjustment;
  GtkSwitch       *quantize_switch;
  GtkSwitch       *link_switch;
  GtkStack        *list_stack;
  GtkListBox      *models_list;
  GtkWidget       *in_use_group;
  GtkListBox      *in_use_list;
  AdwViewStack    *view_stack;
  GtkBox          *find_box;
  GtkWidget       *finder;         /* the Find Models page (HzModelFinder) */

  HzAppContext    *ctx;
  HzModelLibrary  *library;
  GSettings       *settings;
  GHashTable      *expanded;       /* paths of the expanded rows */
  guint            rebuild_id;
  gulong           items_changed_id;

  GCancellable    *job;            /* the running import/quantization, or NULL */
  guint            pulse_id;
  GSList          *import_queue;   /* GFile* waiting to be imported */
  GCancellable    *measuring;      /* the running bandwidth measurement, or NULL */
  HzModelEntry    *in_use;         /* the model the engine worker has loaded, or NULL */
  GCancellable    *lookup;         /* the running look-up of the model in use, or NULL */
};

G_DEFINE_FINAL_TYPE (HzModelManager, hz_model_manager, ADW_TYPE_WINDOW)

static void import_next (HzModelManager *self);
static void start_quantize (HzModelManager *self, HzModelEntry *entry, const char *type,
                            gboolean replace);

/* ------------------------------------------------------------------ formatting */

static char *
format_count (guint64 n)
{
  /* TRANSLATORS: parameter counts: thousands, millions, billions */
  if (n >= 1000000000ull)
    return g_strdup_printf (_("%.1fB"), n / 1e9);
  if (n >= 1000000ull)
    return g_strdup_printf (_("%.1fM"), n / 1e6);
  if (n >= 1000ull)
    return g_strdup_printf (_("%.1fK"), n / 1e3);
  return g_strdup_printf ("%" G_GUINT64_FORMAT, n);
}

static double
bandwidth (HzModelManager *self)
{
  return g_settings_get_double (self->settings, "memory-bandwidth");
}

static void
notify_user (HzModelManager *self, const char *text)
{
  AdwToast *t = adw_toast_new (text);
  adw_toast_set_timeout (t, 3);
  adw_toast_overlay_add_toast (self->toast_overlay, t);
}

G_GNUC_BEGIN_IGNORE_DEPRECATIONS
static AdwMessageDialog *
message_dialog (HzModelManager *self, const char *heading, const char *body)
{
  AdwMessageDialog *d = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), heading, body));
  adw_message_dialog_add_response (d, "close", _("_Close"));
  adw_message_dialog_set_default_response (d, "close");
  adw_message_dialog_set_close_response (d, "close");
  return d;
}
G_GNUC_END_IGNORE_DEPRECATIONS

static void
show_error (HzModelManager *self, const char *heading, const char *body)
{
  gtk_window_present (GTK_WINDOW (message_dialog (self, heading, body)));
}

/* ------------------------------------------------------------------ rows */

static GtkWidget *
info_row (const char *title, const char *subtitle)
{
  GtkWidget *row = adw_action_row_new ();
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  gtk_widget_add_css_class (row, "property");
  return row;
}

static void
expander_add_suffix (AdwExpanderRow *row, GtkWidget *widget)
{
#if ADW_CHECK_VERSION (1, 4, 0)
  adw_expander_row_add_suffix (row, widget);
#else
  adw_expander_row_add_action (row, widget);
#endif
}

static void
on_row_expanded (AdwExpanderRow *row, GParamSpec *pspec, HzModelManager *self)
{
  const char *path = g_object_get_data (G_OBJECT (row), "hz-path");
  if (adw_expander_row_get_expanded (row))
    g_hash_table_add (self->expanded, g_strdup (path));
  else
    g_hash_table_remove (self->expanded, path);
}

static void schedule_rebuild (HzModelManager *self);

/* A new measured speed: show it (the handler lives as long as the row). */
static void
on_entry_changed (HzModelEntry *entry, GParamSpec *pspec, GtkWidget *row)
{
  GtkRoot *root = gtk_widget_get_root (row);
  if (HZ_IS_MODEL_MANAGER (root))
    schedule_rebuild (HZ_MODEL_MANAGER (root));
}

/* Whether `path` is the model the engine worker has loaded. */
static gboolean
is_in_use (HzModelManager *self, const char *path)
{
  HzEngineWorker *worker = hz_app_context_get_worker (self->ctx);
  const char *loaded = worker ? hz_engine_worker_get_model_path (worker) : NULL;
  if (loaded == NULL || path == NULL || !hz_engine_worker_is_model_loaded (worker))
    return FALSE;
  g_autofree char *a = g_canonicalize_filename (loaded, NULL);
  g_autofree char *b = g_canonicalize_filename (path, NULL);
  return g_str_equal (a, b);
}

/* The "Reply speed" row's text and tooltip (g_free) for `cur`, the file as it is. */
static void
speed_texts (HzModelEntry *entry, const HzQuantOption *cur, const HzSpeedModel *speed,
             HzModelEntry *from, char **text, char **tooltip)
{
  const HzModelInfo *info = hz_model_entry_get_info (entry);
  double measured = hz_model_entry_get_measured_tokens_per_s (entry);
  g_autofree char *per_token = g_format_size (info->active_bytes);
  g_autofree char *bw = g_format_size ((guint64) speed->bandwidth);
  g_autofree char *pred = cur->tokens_per_s > 0 ? hz_model_rows_format_speed (cur->tokens_per_s)
                                                 : NULL;

  *tooltip = NULL;
  if (measured > 0)
    {
      g_autofree char *meas = hz_model_rows_format_speed (measured);
      *text = g_strdup_printf (_("Measured %s (mean of its replies)"), meas);
    }
  else if (pred != NULL && from != NULL)
    *text = g_strdup_printf (_("About %s, estimated from the replies of “%s”"), pred,
                             hz_model_entry_get_name (from));
  else if (pred != NULL)
    *text = g_strdup_printf (_("At most %s until a reply is measured"), pred);
  else
    {
      *text = g_strdup (_("Unknown until the memory read speed is measured"));
      return;
    }
  if (from != NULL)
    *tooltip = g_strdup_printf (
      _("Estimated as 1 ÷ (t₀ + bytes per token ÷ memory read speed): t₀ = %.2f ms, the time "
        "of a token besides reading the weights, from the replies of “%s”; %s per token at "
        "%s per second."),
      speed->overhead_s * 1e3, hz_model_entry_get_name (from), per_token, bw);
  else
    *tooltip = g_strdup_printf (
      _("Memory read speed ÷ bytes per token (%s per second ÷ %s): an upper bound, since each "
        "token also takes some fixed time, which the first measured reply tells."),
      bw, per_token);
}

/* The "Use" row of the model at `path`: default, guard, delete; or, for a model opened from
 * elsewhere, import (then the rest applies). */
static GtkWidget *
use_row (const char *path, gboolean in_library, gboolean is_default, gboolean is_guard)
{
  GtkWidget *actions = adw_action_row_new ();
  AdwActionRow *a = ADW_ACTION_ROW (actions);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (actions), _("Use"));
  if (!in_library)
    {
      adw_action_row_set_subtitle (a, _("Opened from its own file, not kept in Hanzo’s folder"));
      adw_action_row_add_suffix (a, hz_model_rows_button (_("_Import"), "models.import-path",
                                                          g_variant_new_string (path)));
      return actions;
    }
  GtkWidget *def = hz_model_rows_button (_("Set as _Default"), "models.set-default",
                                         g_variant_new_string (path));
  gtk_widget_set_sensitive (def, !is_default);
  adw_action_row_add_suffix (a, def);
  adw_action_row_add_suffix (a, hz_model_rows_button (is_guard ? _("Clear _Guard")
                                                               : _("Use as _Guard"),
                                                      "models.set-guard",
                                                      g_variant_new_string (is_guard ? "" : path)));
  GtkWidget *del = hz_model_rows_button (_("_Delete"), "models.delete",
                                         g_variant_new_string (path));
  gtk_widget_add_css_class (del, "destructive-action");
  adw_action_row_add_suffix (a, del);
  return actions;
}

static GtkWidget *
create_row (gpointer item, gpointer data)
{
  HzModelManager *self = data;
  HzModelEntry *entry = item;
  const HzModelInfo *info = hz_model_entry_get_info (entry);
  const char *path = info->path;
  g_autofree char *default_path = g_settings_get_string (self->settings, "model-path");
  g_autofree char *guard_path = g_settings_get_string (self->settings, "guard-model-path");
  gboolean is_default = g_strcmp0 (default_path, path) == 0;
  gboolean is_guard = g_strcmp0 (guard_path, path) == 0;
  gboolean in_library = hz_model_library_find (self->library, path) == entry;
  double bw = bandwidth (self);
  guint64 avail = hz_memory_available ();
  double target = g_settings_get_double (self->settings, "speed-target");
  HzSpeedModel speed;
  HzModelEntry *from = NULL;
  hz_model_library_speed_model (self->library, entry, bw, &speed, &from);
  g_autoptr(GArray) opts = hz_model_info_quant_options (info, &speed, avail, target);
  HzQuantOption *cur = &g_array_index (opts, HzQuantOption, 0);
  g_autofree char *size = g_format_size (info->file_size);
  g_autofree char *params = format_count (info->n_params);

  AdwExpanderRow *row = ADW_EXPANDER_ROW (adw_expander_row_new ());
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), info->name);
  /* TRANSLATORS: architecture · format · file size · parameter count */
  g_autofree char *subtitle = g_strdup_printf (_("%s · %s · %s · %s parameters"), info->arch,
                                               info->file_type ? info->file_type : info->quant,
                                               size, params);
  adw_expander_row_set_subtitle (row, subtitle);
  g_object_set_data_full (G_OBJECT (row), "hz-path", g_strdup (path), g_free);
  gtk_widget_set_name (GTK_WIDGET (row), in_library ? "model-row" : "model-row-outside");
  if (is_in_use (self, path))
    expander_add_suffix (row, hz_model_rows_tag (_("In Use")));
  if (!in_library)
    expander_add_suffix (row, hz_model_rows_tag (_("Not Imported")));
  if (is_default)
    expander_add_suffix (row, hz_model_rows_tag (_("Default")));
  if (is_guard)
    expander_add_suffix (row, hz_model_rows_tag (_("Guard")));
  if (!cur->fits)
    expander_add_suffix (row, hz_model_rows_tag (_("Too large")));

  /* facts */
  g_autofree char *ctx = info->n_ctx_train
    ? g_strdup_printf (ngettext ("%u token", "%u tokens", info->n_ctx_train), info->n_ctx_train)
    : g_strdup (_("Unknown"));
  adw_expander_row_add_row (row, info_row (_("Architecture"), info->arch));
  adw_expander_row_add_row (row, info_row (_("Quantization"), info->quant));
  adw_expander_row_add_row (row, info_row (_("Context length"), ctx));
  adw_expander_row_add_row (row, info_row (_("File"), path));

  g_autofree char *need = g_format_size (hz_memory_needed (cur->weight_bytes));
  g_autofree char *have = g_format_size (avail);
  g_autofree char *memory = cur->fits
    ? g_strdup_printf (_("Fits: needs about %s, %s available"), need, have)
    : g_strdup_printf (_("Too large: needs about %s, only %s available"), need, have);
  adw_expander_row_add_row (row, info_row (_("Memory"), memory));

  g_autofree char *speed_text = NULL, *speed_tooltip = NULL;
  speed_texts (entry, cur, &speed, from, &speed_text, &speed_tooltip);
  GtkWidget *speed_row = info_row (_("Reply speed"), speed_text);
  gtk_widget_set_name (speed_row, "reply-speed");
  gtk_widget_set_tooltip_text (speed_row, speed_tooltip);
  adw_expander_row_add_row (row, speed_row);

  /* one row per storage format */
  for (guint i = 0; i < opts->len; i++)
    {
      HzQuantOption *o = &g_array_index (opts, HzQuantOption, i);
      g_autofree char *title = o->is_current
        ? g_strdup_printf (_("%s (as stored)"), info->file_type ? info->file_type : info->quant)
        : g_strdup (o->name);
      g_autofree char *mem = g_format_size (o->weight_bytes);
      g_autofree char *tps = o->tokens_per_s > 0 ? hz_model_rows_format_speed (o->tokens_per_s) : NULL;
      GString *sub = g_string_new (NULL);
      g_string_printf (sub, _("%s in memory"), mem);
      if (tps != NULL && from != NULL)
        /* TRANSLATORS: appended to "1.2 GB in memory" */
        g_string_append_printf (sub, _(" · about %s"), tps);
      else if (tps != NULL)
        /* TRANSLATORS: appended to "1.2 GB in memory"; an upper bound of the speed */
        g_string_append_printf (sub, _(" · at most %s"), tps);
      if (!o->fits)
        g_string_append (sub, _(" · does not fit"));
      GtkWidget *r = info_row (title, sub->str);
      g_string_free (sub, TRUE);
      gtk_widget_set_tooltip_text (r, speed_tooltip);
      if (o->recommended)
        adw_action_row_add_suffix (ADW_ACTION_ROW (r), hz_model_rows_tag (_("Recommended")));
      if (!o->is_current)
        adw_action_row_add_suffix (ADW_ACTION_ROW (r),
          hz_model_rows_button (_("_Quantize"), "models.quantize",
                                g_variant_new ("(ss)", path, o->name)));
      adw_expander_row_add_row (row, r);
    }

  adw_expander_row_add_row (row, use_row (path, in_library, is_default, is_guard));

  adw_expander_row_set_expanded (row, g_hash_table_contains (self->expanded, path));
  g_signal_connect (row, "notify::expanded", G_CALLBACK (on_row_expanded), self);
  g_signal_connect_object (entry, "notify::measured-tokens-per-s",
                           G_CALLBACK (on_entry_changed), row, 0);
  return GTK_WIDGET (row);
}

static void
update_machine (HzModelManager *self)
{
  g_autofree char *avail = g_format_size (hz_memory_available ());
  g_autofree char *total = g_format_size (hz_memory_total ());
  g_autofree char *mem = g_strdup_printf (_("%s of %s"), avail, total);
  adw_action_row_set_subtitle (self->memory_row, mem);

  double bw = bandwidth (self);
  g_autofree char *bws = NULL;
  if (self->measuring != NULL)
    bws = g_strdup (_("Measuring…"));
  else if (bw > 0)
    {
      g_autofree char *per = g_format_size ((guint64) bw);
      /* TRANSLATORS: %s is a size such as "12.3 GB" */
      bws = g_strdup_printf (_("%s per second"), per);
    }
  else
    bws = g_strdup (_("Not measured yet"));
  adw_action_row_set_subtitle (self->bandwidth_row, bws);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.measure", self->measuring == NULL);
}

static gboolean
rebuild (gpointer data)
{
  HzModelManager *self = data;
  GListModel *models = hz_model_library_get_models (self->library);

  self->rebuild_id = 0;
  update_machine (self);
  for (GtkWidget *c; (c = gtk_widget_get_first_child (GTK_WIDGET (self->in_use_list))); )
    gtk_list_box_remove (self->in_use_list, c);
  if (self->in_use != NULL)
    gtk_list_box_append (self->in_use_list, create_row (self->in_use, self));
  gtk_widget_set_visible (self->in_use_group, self->in_use != NULL);
  gtk_list_box_bind_model (self->models_list, models, create_row, self, NULL);
  gtk_stack_set_visible_child_name (self->list_stack,
                                    g_list_model_get_n_items (models) ? "list" : "empty");
  return G_SOURCE_REMOVE;
}

static void
schedule_rebuild (HzModelManager *self)
{
  if (self->rebuild_id == 0)
    self->rebuild_id = g_idle_add (rebuild, self);
}

/* ------------------------------------------------------------------ progress */

static gboolean
pulse (gpointer data)
{
  gtk_progress_bar_pulse (GTK_PROGRESS_BAR (data));
  return G_SOURCE_CONTINUE;
}

/* Start a job shown with `text`: `measured` TRUE when it reports its progress
 * (job_progress), else the bar pulses. */
static GCancellable *
job_begin (HzModelManager *self, const char *text, gboolean measured)
{
  g_assert (self->job == NULL);
  self->job = g_cancellable_new ();
  gtk_label_set_text (self->progress_label, text);
  gtk_revealer_set_reveal_child (self->progress_revealer, TRUE);
  gtk_progress_bar_set_fraction (self->progress_bar, 0);
  gtk_progress_bar_set_show_text (self->progress_bar, measured);
  gtk_progress_bar_set_text (self->progress_bar, measured ? "0 %" : NULL);
  if (!measured)
    self->pulse_id = g_timeout_add (PULSE_MS, pulse, self->progress_bar);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.import", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.quantize", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.cancel", TRUE);
  return self->job;
}

static void
job_end (HzModelManager *self)
{
  g_clear_object (&self->job);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  gtk_revealer_set_reveal_child (self->progress_revealer, FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.import", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.quantize", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.cancel", FALSE);
}

/* The running job's progress (HzModelProgressFunc; `data` is the manager). */
static void
job_progress (double fraction, const char *detail, gpointer data)
{
  HzModelManager *self = data;

  if (self->job == NULL || g_cancellable_is_cancelled (self->job))
    return;
  fraction = CLAMP (fraction, 0.0, 1.0);
  /* TRANSLATORS: progress of a quantization, e.g. "42 %" (use your language's spacing) */
  g_autofree char *percent = g_strdup_printf (_("%.0f %%"), 100.0 * fraction);
  g_autofree char *text = detail ? g_strdup_printf ("%s · %s", percent, detail)
                                 : g_strdup (percent);
  gtk_progress_bar_set_text (self->progress_bar, text);
  gtk_progress_bar_set_fraction (self->progress_bar, fraction);
  /* (the bar sets its accessible value itself; say it as the bar shows it) */
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->progress_bar),
                                  GTK_ACCESSIBLE_PROPERTY_VALUE_TEXT, text, -1);
}

double
hz_model_manager_get_progress (HzModelManager *self, const char **text)
{
  g_return_val_if_fail (HZ_IS_MODEL_MANAGER (self), -1);
  if (text != NULL)
    *text = self->job ? gtk_progress_bar_get_text (self->progress_bar) : NULL;
  return self->job ? gtk_progress_bar_get_fraction (self->progress_bar) : -1;
}

/* ------------------------------------------------------------------ quantize */

typedef struct {
  HzModelManager *self;
  char           *source;   /* remove it after success (quantize on import), or NULL */
} QuantizeJob;

static void
quantize_done (GObject *source, GAsyncResult *result, gpointer data)
{
  QuantizeJob *job = data;
  g_autoptr(HzModelManager) self = job->self;
  g_autofree char *replace = job->source;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModelEntry) entry = hz_model_library_quantize_finish (HZ_MODEL_LIBRARY (source),
                                                                    result, &error);
  g_free (job);

  if (self->library == NULL)
    return;  /* the window was closed meanwhile */
  job_end (self);
  if (entry == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        notify_user (self, _("Quantization cancelled"));
      else
        show_error (self, _("Cannot Quantize Model"), error->message);
      import_next (self);
      return;
    }
  g_hash_table_add (self->expanded, g_strdup (hz_model_entry_get_path (entry)));
  g_autofree char *msg = g_strdup_printf (_("Made “%s”"), hz_model_entry_get_name (entry));
  notify_user (self, msg);
  HzModelEntry *old = replace ? hz_model_library_find (self->library, replace) : NULL;
  if (old != NULL)
    {
      g_autoptr(GError) del_error = NULL;
      if (!hz_model_library_delete (self->library, old, &del_error))
        g_warning ("models: cannot remove the full-size copy: %s", del_error->message);
    }
  import_next (self);
}

static void
start_quantize (HzModelManager *self, HzModelEntry *entry, const char *type, gboolean replace)
{
  g_autofree char *text = g_strdup_printf (_("Quantizing “%s” to %s…"),
                                           hz_model_entry_get_name (entry), type);
  GCancellable *c = job_begin (self, text, TRUE);
  QuantizeJob *job = g_new0 (QuantizeJob, 1);
  job->self = g_object_ref (self);
  job->source = replace ? g_strdup (hz_model_entry_get_path (entry)) : NULL;
  /* job_progress is never called after quantize_done, which holds `self` until then */
  hz_model_library_quantize_async (self->library, entry, type, c, job_progress, self,
                                   quantize_done, job);
}

/* ------------------------------------------------------------------ import */

static const HzQuantOption *
recommended (GArray *opts)
{
  for (guint i = 0; i < opts->len; i++)
    if (g_array_index (opts, HzQuantOption, i).recommended)
      return &g_array_index (opts, HzQuantOption, i);
  return NULL;
}

typedef struct {
  HzModelManager *self;
  HzModelEntry   *entry;
  char           *type;
} OfferData;

static void
on_offer_response (GObject *dialog, const char *response, gpointer data)
{
  OfferData *d = data;
  g_signal_handlers_disconnect_by_data (dialog, d);  /* one answer only */
  if (d->self->library == NULL)
    ;  /* the window was closed meanwhile */
  else if (g_strcmp0 (response, "quantize") == 0 && d->self->job == NULL)
    start_quantize (d->self, d->entry, d->type, FALSE);
  else
    import_next (d->self);
  g_object_unref (d->self);
  g_object_unref (d->entry);
  g_free (d->type);
  g_free (d);
}

/* After an import: quantize on import, or say that it does not fit. TRUE when it took over
 * (a dialog or a quantization continues the queue). */
static gboolean
after_import (HzModelManager *self, HzModelEntry *entry)
{
  const HzModelInfo *info = hz_model_entry_get_info (entry);
  guint64 avail = hz_memory_available ();
  HzSpeedModel speed;
  hz_model_library_speed_model (self->library, entry, bandwidth (self), &speed, NULL);
  g_autoptr(GArray) opts =
    hz_model_info_quant_options (info, &speed, avail,
                                 g_settings_get_double (self->settings, "speed-target"));
  const HzQuantOption *cur = &g_array_index (opts, HzQuantOption, 0);
  const HzQuantOption *rec = recommended (opts);

  if (g_settings_get_boolean (self->settings, "quantize-on-import") && rec != NULL &&
      !rec->is_current)
    {
      start_quantize (self, entry, rec->name, TRUE);
      return TRUE;
    }
  if (cur->fits)
    return FALSE;

  g_autofree char *need = g_format_size (hz_memory_needed (cur->weight_bytes));
  g_autofree char *have = g_format_size (avail);
  if (rec == NULL)
    {
      g_autofree char *body = g_strdup_printf (
        _("“%s” needs about %s of memory, and %s is available. Even its smallest format "
          "would not fit: close other programs or choose a smaller model."),
        info->name, need, have);
      show_error (self, _("Model Too Large for Memory"), body);
      return FALSE;
    }
  g_autofree char *rec_mem = g_format_size (rec->weight_bytes);
  g_autofree char *body = g_strdup_printf (
    _("“%s” needs about %s of memory, and %s is available. Stored as %s it takes %s."),
    info->name, need, have, rec->name, rec_mem);
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  AdwMessageDialog *d = ADW_MESSAGE_DIALOG (
    adw_message_dialog_new (GTK_WINDOW (self), _("Model Too Large for Memory"), body));
  g_autofree char *label = g_strdup_printf (_("_Quantize to %s"), rec->name);
  adw_message_dialog_add_response (d, "keep", _("_Keep as Is"));
  adw_message_dialog_add_response (d, "quantize", label);
  adw_message_dialog_set_response_appearance (d, "quantize", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (d, "quantize");
  adw_message_dialog_set_close_response (d, "keep");
  G_GNUC_END_IGNORE_DEPRECATIONS
  OfferData *od = g_new0 (OfferData, 1);
  od->self = g_object_ref (self);
  od->entry = g_object_ref (entry);
  od->type = g_strdup (rec->name);
  g_signal_connect (d, "response", G_CALLBACK (on_offer_response), od);
  gtk_window_present (GTK_WINDOW (d));
  return TRUE;
}

static void
import_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelManager) self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModelEntry) entry = hz_model_library_import_finish (HZ_MODEL_LIBRARY (source),
                                                                  result, &error);

  if (self->library == NULL)
    return;  /* the window was closed meanwhile */
  job_end (self);
  if (entry == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        notify_user (self, _("Import cancelled"));
      else
        show_error (self, _("Cannot Import Model"), error->message);
      import_next (self);
      return;
    }
  g_hash_table_add (self->expanded, g_strdup (hz_model_entry_get_path (entry)));
  g_autofree char *msg = g_strdup_printf (_("Imported “%s”"), hz_model_entry_get_name (entry));
  notify_user (self, msg);
  if (!after_import (self, entry))
    import_next (self);
}

/* Start the next queued import, unless a job runs. */
static void
import_next (HzModelManager *self)
{
  if (self->job != NULL || self->import_queue == NULL)
    return;
  GFile *file = self->import_queue->data;
  self->import_queue = g_slist_delete_link (self->import_queue, self->import_queue);
  g_autofree char *base = g_file_get_basename (file);
  g_autofree char *text = g_strdup_printf (_("Importing “%s”…"), base);
  GCancellable *c = job_begin (self, text, FALSE);
  hz_model_library_import_async (self->library, file,
                                 g_settings_get_boolean (self->settings, "import-as-link"),
                                 c, import_done, g_object_ref (self));
  g_object_unref (file);
}

void
hz_model_manager_import_files (HzModelManager *self, GSList *files)
{
  g_return_if_fail (HZ_IS_MODEL_MANAGER (self));
  for (GSList *l = files; l != NULL; l = l->next)
    self->import_queue = g_slist_append (self->import_queue, g_object_ref (l->data));
  import_next (self);
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, HzModelManager *self)
{
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  hz_model_manager_import_files (self, g_value_get_boxed (value));
  return TRUE;
}

#if GTK_CHECK_VERSION (4, 10, 0)
static void
on_open_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelManager) self = data;
  g_autoptr(GListModel) files = gtk_file_dialog_open_multiple_finish (GTK_FILE_DIALOG (source),
                                                                      result, NULL);
  GSList *list = NULL;
  for (guint i = 0; files && i < g_list_model_get_n_items (files); i++)
    list = g_slist_append (list, g_list_model_get_item (files, i));
  hz_model_manager_import_files (self, list);
  g_slist_free_full (list, g_object_unref);
}
#else
static void
on_chooser_response (GtkNativeDialog *dialog, int response, gpointer data)
{
  HzModelManager *self = data;
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GListModel) files = gtk_file_chooser_get_files (GTK_FILE_CHOOSER (dialog));
      GSList *list = NULL;
      for (guint i = 0; i < g_list_model_get_n_items (files); i++)
        list = g_slist_append (list, g_list_model_get_item (files, i));
      hz_model_manager_import_files (self, list);
      g_slist_free_full (list, g_object_unref);
    }
  g_object_unref (dialog);
}
#endif

static void
action_import (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  g_autoptr(GtkFileFilter) gguf = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) all = gtk_file_filter_new ();
  gtk_file_filter_set_name (gguf, _("GGUF Models"));
  gtk_file_filter_add_suffix (gguf, "gguf");
  gtk_file_filter_set_name (all, _("All Files"));
  gtk_file_filter_add_pattern (all, "*");

#if GTK_CHECK_VERSION (4, 10, 0)
  g_autoptr(GtkFileDialog) dialog = gtk_file_dialog_new ();
  g_autoptr(GListStore) filters = g_list_store_new (GTK_TYPE_FILE_FILTER);
  g_list_store_append (filters, gguf);
  g_list_store_append (filters, all);
  gtk_file_dialog_set_title (dialog, _("Import Models"));
  gtk_file_dialog_set_filters (dialog, G_LIST_MODEL (filters));
  gtk_file_dialog_set_default_filter (dialog, gguf);
  gtk_file_dialog_open_multiple (dialog, GTK_WINDOW (self), NULL, on_open_done,
                                 g_object_ref (self));
#else
  GtkFileChooserNative *native =
    gtk_file_chooser_native_new (_("Import Models"), GTK_WINDOW (self),
                                 GTK_FILE_CHOOSER_ACTION_OPEN, _("_Import"), _("_Cancel"));
  gtk_file_chooser_set_select_multiple (GTK_FILE_CHOOSER (native), TRUE);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), gguf);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (native), all);
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (native), TRUE);
  g_signal_connect (native, "response", G_CALLBACK (on_chooser_response), self);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (native));
#endif
}

static void
action_cancel (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  g_slist_free_full (g_steal_pointer (&self->import_queue), g_object_unref);
  if (self->job != NULL)
    g_cancellable_cancel (self->job);
}

/* ------------------------------------------------------------------ bandwidth */

static void
measure_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  GError *error = NULL;
  double bw = hz_measure_read_bandwidth (0, 0, MEASURE_SECONDS, &error);
  if (bw > 0)
    g_task_return_pointer (task, g_memdup2 (&bw, sizeof bw), g_free);
  else
    g_task_return_error (task, error);
}

static void
measure_done (GObject *source, GAsyncResult *result, gpointer data)
{
  HzModelManager *self = HZ_MODEL_MANAGER (source);
  g_autoptr(GError) error = NULL;
  g_autofree double *bw = g_task_propagate_pointer (G_TASK (result), &error);

  g_clear_object (&self->measuring);
  if (self->settings == NULL)
    return;  /* the window was closed */
  if (bw != NULL)
    g_settings_set_double (self->settings, "memory-bandwidth", *bw);
  else
    g_warning ("models: cannot measure the memory read speed: %s", error->message);
  update_machine (self);
}

static void
start_measuring (HzModelManager *self)
{
  if (self->measuring != NULL)
    return;
  self->measuring = g_cancellable_new ();
  g_autoptr(GTask) task = g_task_new (self, self->measuring, measure_done, NULL);
  g_task_set_source_tag (task, start_measuring);
  g_task_run_in_thread (task, measure_thread);
  update_machine (self);
}

static void
action_measure (GtkWidget *widget, const char *name, GVariant *param)
{
  start_measuring (HZ_MODEL_MANAGER (widget));
}

/* ------------------------------------------------------------------ the model in use */

static void
in_use_found (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelManager) self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModelEntry) entry = hz_model_library_lookup_finish (HZ_MODEL_LIBRARY (source),
                                                                  result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->library == NULL)
    return;
  g_clear_object (&self->lookup);
  if (entry == NULL)
    g_warning ("models: cannot read the model in use: %s", error->message);
  else if (is_in_use (self, hz_model_entry_get_path (entry)))
    {
      g_set_object (&self->in_use, entry);
      schedule_rebuild (self);
    }
}

/* The worker loaded a model (or failed to): show it, or nothing, under "In Use". */
static void
follow_model_in_use (HzModelManager *self)
{
  HzEngineWorker *worker = hz_app_context_get_worker (self->ctx);
  const char *path = hz_engine_worker_get_model_path (worker);

  if (self->lookup != NULL)
    g_cancellable_cancel (self->lookup);
  g_clear_object (&self->lookup);
  if (self->in_use != NULL && is_in_use (self, hz_model_entry_get_path (self->in_use)))
    return;
  g_clear_object (&self->in_use);
  schedule_rebuild (self);
  if (path == NULL || !hz_engine_worker_is_model_loaded (worker))
    return;
  self->lookup = g_cancellable_new ();
  hz_model_library_lookup_async (self->library, path, self->lookup, in_use_found,
                                 g_object_ref (self));
}

static void
action_import_path (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  g_autoptr(GFile) file = g_file_new_for_path (g_variant_get_string (param, NULL));
  GSList list = { file, NULL };
  hz_model_manager_import_files (self, &list);
}

/* ------------------------------------------------------------------ per-model actions */

static HzModelEntry *
entry_for (HzModelManager *self, GVariant *param)
{
  return hz_model_library_find (self->library, g_variant_get_string (param, NULL));
}

static void
action_set_default (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  HzModelEntry *entry = entry_for (self, param);
  if (entry == NULL)
    return;
  g_settings_set_string (self->settings, "model-path", hz_model_entry_get_path (entry));
  hz_app_context_open_model (self->ctx, hz_model_entry_get_path (entry), TRUE);
}

static void
action_set_guard (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  const char *path = g_variant_get_string (param, NULL);
  if (*path != '\0' && entry_for (self, param) == NULL)
    return;
  g_settings_set_string (self->settings, "guard-model-path", path);
}

static void
on_delete_response (GObject *dialog, const char *response, gpointer data)
{
  g_autoptr(HzModelManager) self = g_object_ref (g_object_get_data (dialog, "hz-manager"));
  g_autofree char *path = g_strdup (data);
  g_autoptr(GError) error = NULL;

  /* one answer only (this frees `data`) */
  g_signal_handlers_disconnect_by_func (dialog, on_delete_response, data);
  if (g_strcmp0 (response, "delete") != 0 || self->library == NULL)
    return;
  HzModelEntry *entry = hz_model_library_find (self->library, path);
  if (entry == NULL)
    return;
  g_autofree char *name = g_strdup (hz_model_entry_get_name (entry));
  if (!hz_model_library_delete (self->library, entry, &error))
    {
      show_error (self, _("Cannot Delete Model"), error->message);
      return;
    }
  const char *keys[] = { "model-path", "guard-model-path" };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *v = g_settings_get_string (self->settings, keys[i]);
      if (g_strcmp0 (v, path) == 0)
        g_settings_reset (self->settings, keys[i]);
    }
  g_hash_table_remove (self->expanded, path);
  g_autofree char *msg = g_strdup_printf (_("Deleted “%s”"), name);
  notify_user (self, msg);
}

static void
action_delete (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  HzModelEntry *entry = entry_for (self, param);
  if (entry == NULL)
    return;
  gboolean link = g_file_test (hz_model_entry_get_path (entry), G_FILE_TEST_IS_SYMLINK);
  g_autofree char *heading = g_strdup_printf (_("Delete “%s”?"), hz_model_entry_get_name (entry));
  const char *body = link ? _("The link in Hanzo’s models folder is removed; the file it "
                              "points to stays.")
                          : _("The model file is removed from this computer.");
  G_GNUC_BEGIN_IGNORE_DEPRECATIONS
  AdwMessageDialog *d = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_WINDOW (self), heading, body));
  adw_message_dialog_add_response (d, "cancel", _("_Cancel"));
  adw_message_dialog_add_response (d, "delete", _("_Delete"));
  adw_message_dialog_set_response_appearance (d, "delete", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_default_response (d, "cancel");
  adw_message_dialog_set_close_response (d, "cancel");
  G_GNUC_END_IGNORE_DEPRECATIONS
  g_object_set_data_full (G_OBJECT (d), "hz-manager", g_object_ref (self), g_object_unref);
  g_signal_connect_data (d, "response", G_CALLBACK (on_delete_response),
                         g_strdup (hz_model_entry_get_path (entry)),
                         (GClosureNotify) (void (*) (void)) g_free, 0);
  gtk_window_present (GTK_WINDOW (d));
}

static void
action_quantize (GtkWidget *widget, const char *name, GVariant *param)
{
  HzModelManager *self = HZ_MODEL_MANAGER (widget);
  const char *path, *type;
  g_variant_get (param, "(&s&s)", &path, &type);
  HzModelEntry *entry = hz_model_library_find (self->library, path);
  if (entry != NULL && self->job == NULL)
    start_quantize (self, entry, type, FALSE);
}

/* ------------------------------------------------------------------ public API */

HzModelManager *
hz_model_manager_new (HzAppContext *ctx, GtkWindow *parent)
{
  g_return_val_if_fail (HZ_IS_APP_CONTEXT (ctx), NULL);
  HzModelManager *self = g_object_new (HZ_TYPE_MODEL_MANAGER,
                                       "application", hz_app_context_get_application (ctx),
                                       "transient-for", parent,
                                       NULL);
  self->ctx = ctx;
  self->library = g_object_ref (hz_app_context_get_model_library (ctx));
  self->settings = g_object_ref (hz_app_context_get_settings (ctx));

  g_settings_bind (self->settings, "speed-target", self->target_adjustment, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "quantize-on-import", self->quantize_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "import-as-link", self->link_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  const char *keys[] = { "changed::model-path", "changed::guard-model-path",
                         "changed::memory-bandwidth", "changed::speed-target" };
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    g_signal_connect_object (self->settings, keys[i], G_CALLBACK (schedule_rebuild), self,
                             G_CONNECT_SWAPPED);
  self->items_changed_id = g_signal_connect_swapped (hz_model_library_get_models (self->library),
                                                     "items-changed",
                                                     G_CALLBACK (schedule_rebuild), self);
  HzEngineWorker *worker = hz_app_context_get_worker (ctx);
  g_signal_connect_object (worker, "model-loaded", G_CALLBACK (follow_model_in_use), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (worker, "model-error", G_CALLBACK (follow_model_in_use), self,
                           G_CONNECT_SWAPPED);
  self->finder = hz_model_finder_new (ctx);
  gtk_widget_set_vexpand (self->finder, TRUE);
  gtk_box_append (self->find_box, self->finder);
  follow_model_in_use (self);
  rebuild (self);
  if (bandwidth (self) <= 0)
    start_measuring (self);  /* once per computer: the value is kept in GSettings */
  return self;
}

gboolean
hz_model_manager_is_busy (HzModelManager *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_MANAGER (self), FALSE);
  return self->job != NULL || self->measuring != NULL || self->import_queue != NULL;
}

GtkListBox *
hz_model_manager_get_list (HzModelManager *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_MANAGER (self), NULL);
  return self->models_list;
}

void
hz_model_manager_show_find (HzModelManager *self)
{
  g_return_if_fail (HZ_IS_MODEL_MANAGER (self));
  adw_view_stack_set_visible_child_name (self->view_stack, "find");
  hz_model_finder_focus_search (HZ_MODEL_FINDER (self->finder));
}

HzModelFinder *
hz_model_manager_get_finder (HzModelManager *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_MANAGER (self), NULL);
  return HZ_MODEL_FINDER (self->finder);
}

static void
action_find (GtkWidget *widget, const char *name, GVariant *param)
{
  hz_model_manager_show_find (HZ_MODEL_MANAGER (widget));
}

GtkListBox *
hz_model_manager_get_in_use_list (HzModelManager *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_MANAGER (self), NULL);
  return self->in_use_list;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_model_manager_dispose (GObject *object)
{
  HzModelManager *self = HZ_MODEL_MANAGER (object);

  if (self->job != NULL)
    g_cancellable_cancel (self->job);
  if (self->measuring != NULL)
    g_cancellable_cancel (self->measuring);
  if (self->lookup != NULL)
    g_cancellable_cancel (self->lookup);
  g_clear_object (&self->lookup);
  g_clear_object (&self->in_use);
  g_slist_free_full (g_steal_pointer (&self->import_queue), g_object_unref);
  g_clear_handle_id (&self->rebuild_id, g_source_remove);
  g_clear_handle_id (&self->pulse_id, g_source_remove);
  if (self->library != NULL)
    g_clear_signal_handler (&self->items_changed_id, hz_model_library_get_models (self->library));
  g_clear_object (&self->library);
  g_clear_object (&self->settings);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_MODEL_MANAGER);
  G_OBJECT_CLASS (hz_model_manager_parent_class)->dispose (object);
}

static void
hz_model_manager_finalize (GObject *object)
{
  HzModelManager *self = HZ_MODEL_MANAGER (object);

  g_clear_object (&self->job);
  g_clear_object (&self->measuring);
  g_hash_table_unref (self->expanded);
  G_OBJECT_CLASS (hz_model_manager_parent_class)->finalize (object);
}

static void
hz_model_manager_class_init (HzModelManagerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_model_manager_dispose;
  object_class->finalize = hz_model_manager_finalize;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/ai/hanzo/Desktop/hz-model-manager.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, HzModelManager, name)
  CHILD (import_button);
  CHILD (progress_revealer);
  CHILD (progress_label);
  CHILD (progress_bar);
  CHILD (toast_overlay);
  CHILD (memory_row);
  CHILD (bandwidth_row);
  CHILD (target_adjustment);
  CHILD (quantize_switch);
  CHILD (link_switch);
  CHILD (list_stack);
  CHILD (models_list);
  CHILD (in_use_group);
  CHILD (in_use_list);
  CHILD (view_stack);
  CHILD (find_box);
#undef CHILD

  gtk_widget_class_install_action (widget_class, "models.import", NULL, action_import);
  gtk_widget_class_install_action (widget_class, "models.cancel", NULL, action_cancel);
  gtk_widget_class_install_action (widget_class, "models.measure", NULL, action_measure);
  gtk_widget_class_install_action (widget_class, "models.set-default", "s", action_set_default);
  gtk_widget_class_install_action (widget_class, "models.set-guard", "s", action_set_guard);
  gtk_widget_class_install_action (widget_class, "models.delete", "s", action_delete);
  gtk_widget_class_install_action (widget_class, "models.quantize", "(ss)", action_quantize);
  gtk_widget_class_install_action (widget_class, "models.import-path", "s", action_import_path);
  gtk_widget_class_install_action (widget_class, "models.find", NULL, action_find);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_o, GDK_CONTROL_MASK,
                                       "models.import", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
hz_model_manager_init (HzModelManager *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->expanded = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "models.cancel", FALSE);

  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}
