/* hz-preferences-window.c — HzPreferencesWindow (see hz-preferences-window.h). */
#include "hz-preferences-window.h"

#include <glib/gi18n.h>

#include "hz-app-server.h"
#include "hz-model-settings.h"

struct _HzPreferencesWindow {
  AdwPreferencesWindow parent_instance;
  AdwPreferencesGroup *sampling_group;
  GtkAdjustment       *temperature_adjustment;
  GtkAdjustment       *top_p_adjustment;
  GtkAdjustment       *max_tokens_adjustment;
  GtkAdjustment       *context_length_adjustment;
  GtkButton           *reset_button;
  /* Other Apps (hz-app-server.h) */
  GtkWidget           *serve_page;
  AdwActionRow        *serve_row;
  GtkSwitch           *serve_switch;
  AdwActionRow        *serve_address_row;
  AdwActionRow        *serve_key_row;
  GtkButton           *serve_copy_address_button;
  GtkButton           *serve_copy_key_button;
  GtkButton           *serve_regenerate_button;
  GtkAdjustment       *serve_port_adjustment;
  HzAppServer         *app_server;
  GSettings           *settings;
  GSettings           *model;      /* the model's own settings, or NULL: edit the defaults */
  gboolean             syncing;    /* showing values, not the user changing them */
};

G_DEFINE_FINAL_TYPE (HzPreferencesWindow, hz_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

/* hz_model_settings_keys, in the order of adjustments() */
#define N_KEYS 4

static void
adjustments (HzPreferencesWindow *self, GtkAdjustment *out[N_KEYS])
{
  out[0] = self->temperature_adjustment;
  out[1] = self->top_p_adjustment;
  out[2] = self->max_tokens_adjustment;
  out[3] = self->context_length_adjustment;
}

/* Show the model's values (its own, else the defaults). */
static void
sync_from_model (HzPreferencesWindow *self)
{
  GtkAdjustment *adj[N_KEYS];

  adjustments (self, adj);
  self->syncing = TRUE;
  for (guint i = 0; i < N_KEYS; i++)
    {
      g_autoptr(GVariant) v = hz_model_settings_get_value (self->model, self->settings,
                                                           hz_model_settings_keys[i]);
      gtk_adjustment_set_value (adj[i], g_variant_is_of_type (v, G_VARIANT_TYPE_DOUBLE)
                                        ? g_variant_get_double (v) : g_variant_get_int32 (v));
    }
  self->syncing = FALSE;
}

/* The user changed a value: it becomes the model's own. */
static void
on_model_value_changed (GtkAdjustment *adj, HzPreferencesWindow *self)
{
  const char *key = g_object_get_data (G_OBJECT (adj), "hz-key");

  if (self->syncing)
    return;
  g_autoptr(GVariant) now = g_settings_get_value (self->model, key);
  double value = gtk_adjustment_get_value (adj);
  if (g_variant_is_of_type (now, G_VARIANT_TYPE_DOUBLE))
    g_settings_set_double (self->model, key, value);
  else
    g_settings_set_int (self->model, key, (int) (value + (value < 0 ? -0.5 : 0.5)));
}

static void
on_reset (GtkButton *button, HzPreferencesWindow *self)
{
  GSettings *target = self->model != NULL ? self->model : self->settings;

  for (guint i = 0; i < N_KEYS; i++)
    g_settings_reset (target, hz_model_settings_keys[i]);
  if (self->model != NULL)
    sync_from_model (self);
}

/* Show the server's state: the switch row says what runs (or why not), the address and
 * key rows are shown while the switch is on. */
static void
on_server_changed (HzAppServer *server, HzPreferencesWindow *self)
{
  const gboolean on = hz_app_server_get_state (server) != HZ_APP_SERVER_OFF;
  const char *address = hz_app_server_get_address (server);
  const char *key = hz_app_server_get_key (server);
  const char *note = hz_app_server_get_key_note (server);

  adw_action_row_set_subtitle (self->serve_row, hz_app_server_get_message (server));
  if (hz_app_server_get_state (server) == HZ_APP_SERVER_FAILED)
    gtk_widget_add_css_class (GTK_WIDGET (self->serve_row), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->serve_row), "error");
  gtk_widget_set_visible (GTK_WIDGET (self->serve_address_row), on);
  gtk_widget_set_visible (GTK_WIDGET (self->serve_key_row), on);
  adw_action_row_set_subtitle (self->serve_address_row, address ? address : _("Not listening"));
  gtk_widget_set_sensitive (GTK_WIDGET (self->serve_copy_address_button), address != NULL);
  g_autofree char *key_text = key && note ? g_strdup_printf ("%s\n%s", key, note) : NULL;
  adw_action_row_set_subtitle (self->serve_key_row,
                               key_text ? key_text : key ? key : _("Reading the keyring…"));
  gtk_widget_set_sensitive (GTK_WIDGET (self->serve_copy_key_button), key != NULL);
}

static void
copy_text (GtkWidget *widget, const char *text)
{
  if (text == NULL)
    return;
  gdk_clipboard_set_text (gtk_widget_get_clipboard (widget), text);
  adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (gtk_widget_get_root (widget)),
                                    adw_toast_new (_("Copied")));
}

static void
on_copy_address (GtkButton *button, HzPreferencesWindow *self)
{
  copy_text (GTK_WIDGET (button), hz_app_server_get_address (self->app_server));
}

static void
on_copy_key (GtkButton *button, HzPreferencesWindow *self)
{
  copy_text (GTK_WIDGET (button), hz_app_server_get_key (self->app_server));
}

static void
on_regenerate (GtkButton *button, HzPreferencesWindow *self)
{
  hz_app_server_regenerate_key (self->app_server);
}

void
hz_preferences_window_set_app_server (HzPreferencesWindow *self, HzAppServer *server)
{
  g_return_if_fail (HZ_IS_PREFERENCES_WINDOW (self));
  g_return_if_fail (HZ_IS_APP_SERVER (server));
  g_return_if_fail (self->app_server == NULL);

  self->app_server = g_object_ref (server);
  g_settings_bind (self->settings, "serve-enabled", self->serve_switch, "active",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "serve-port", self->serve_port_adjustment, "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_signal_connect_object (server, "changed", G_CALLBACK (on_server_changed), self, 0);
  g_signal_connect (self->serve_copy_address_button, "clicked", G_CALLBACK (on_copy_address), self);
  g_signal_connect (self->serve_copy_key_button, "clicked", G_CALLBACK (on_copy_key), self);
  g_signal_connect (self->serve_regenerate_button, "clicked", G_CALLBACK (on_regenerate), self);
#if ADW_CHECK_VERSION (1, 3, 0)
  adw_action_row_set_subtitle_selectable (self->serve_address_row, TRUE);
  adw_action_row_set_subtitle_selectable (self->serve_key_row, TRUE);
#endif
  on_server_changed (server, self);
  gtk_widget_set_visible (self->serve_page, TRUE);
}

void
hz_preferences_window_show_other_apps (HzPreferencesWindow *self)
{
  g_return_if_fail (HZ_IS_PREFERENCES_WINDOW (self));
  g_return_if_fail (self->app_server != NULL);
  adw_preferences_window_set_visible_page (ADW_PREFERENCES_WINDOW (self),
                                           ADW_PREFERENCES_PAGE (self->serve_page));
}

GtkSwitch *
hz_preferences_window_get_serve_switch (HzPreferencesWindow *self)
{
  g_return_val_if_fail (HZ_IS_PREFERENCES_WINDOW (self), NULL);
  return self->serve_switch;
}

GtkWidget *
hz_preferences_window_new (GSettings *settings, GtkWindow *parent)
{
  return hz_preferences_window_new_for_model (settings, NULL, NULL, parent);
}

GtkWidget *
hz_preferences_window_new_for_model (GSettings *settings, GSettings *model,
                                     const char *model_name, GtkWindow *parent)
{
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);
  g_return_val_if_fail (model == NULL || G_IS_SETTINGS (model), NULL);

  HzPreferencesWindow *self = g_object_new (HZ_TYPE_PREFERENCES_WINDOW,
                                            "transient-for", parent,
                                            "modal", parent != NULL,
                                            NULL);
  GtkAdjustment *adj[N_KEYS];

  G_STATIC_ASSERT (N_KEYS == 4);
  g_assert (hz_model_settings_keys[N_KEYS] == NULL);
  adjustments (self, adj);
  self->settings = g_object_ref (settings);
  if (model == NULL)
    {
      for (guint i = 0; i < N_KEYS; i++)
        g_settings_bind (settings, hz_model_settings_keys[i], adj[i], "value",
                         G_SETTINGS_BIND_DEFAULT);
    }
  else
    {
      self->model = g_object_ref (model);
      sync_from_model (self);
      for (guint i = 0; i < N_KEYS; i++)
        {
          g_object_set_data (G_OBJECT (adj[i]), "hz-key", (gpointer) hz_model_settings_keys[i]);
          g_signal_connect (adj[i], "value-changed", G_CALLBACK (on_model_value_changed), self);
        }
      if (model_name != NULL)
        {
          /* TRANSLATORS: %s is the name of a model */
          g_autofree char *desc = g_strdup_printf (
            _("How %s picks each next word. These settings are for this model only."),
            model_name);
          adw_preferences_group_set_description (self->sampling_group, desc);
        }
    }
  g_signal_connect (self->reset_button, "clicked", G_CALLBACK (on_reset), self);
  return GTK_WIDGET (self);
}

static void
hz_preferences_window_dispose (GObject *object)
{
  HzPreferencesWindow *self = HZ_PREFERENCES_WINDOW (object);

  g_clear_object (&self->settings);
  g_clear_object (&self->model);
  g_clear_object (&self->app_server);
  gtk_widget_dispose_template (GTK_WIDGET (self), HZ_TYPE_PREFERENCES_WINDOW);
  G_OBJECT_CLASS (hz_preferences_window_parent_class)->dispose (object);
}

static void
hz_preferences_window_class_init (HzPreferencesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = hz_preferences_window_dispose;
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/ai/hanzo/Desktop/hz-preferences-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow, name)
  CHILD (sampling_group);
  CHILD (temperature_adjustment);
  CHILD (top_p_adjustment);
  CHILD (max_tokens_adjustment);
  CHILD (context_length_adjustment);
  CHILD (reset_button);
  CHILD (serve_page);
  CHILD (serve_row);
  CHILD (serve_switch);
  CHILD (serve_address_row);
  CHILD (serve_key_row);
  CHILD (serve_copy_address_button);
  CHILD (serve_copy_key_button);
  CHILD (serve_regenerate_button);
  CHILD (serve_port_adjustment);
#undef CHILD
}

static void
hz_preferences_window_init (HzPreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
