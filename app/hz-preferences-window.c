/* hz-preferences-window.c — HzPreferencesWindow (see hz-preferences-window.h). */
#include "hz-preferences-window.h"

struct _HzPreferencesWindow {
  AdwPreferencesWindow parent_instance;
  GtkAdjustment       *temperature_adjustment;
  GtkAdjustment       *top_p_adjustment;
  GtkAdjustment       *max_tokens_adjustment;
  GtkAdjustment       *context_length_adjustment;
  GtkButton           *reset_button;
  GSettings           *settings;
};

G_DEFINE_FINAL_TYPE (HzPreferencesWindow, hz_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

static const char *const keys[] = { "temperature", "top-p", "max-tokens", "context-length" };

static void
on_reset (GtkButton *button, HzPreferencesWindow *self)
{
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    g_settings_reset (self->settings, keys[i]);
}

GtkWidget *
hz_preferences_window_new (GSettings *settings, GtkWindow *parent)
{
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);

  HzPreferencesWindow *self = g_object_new (HZ_TYPE_PREFERENCES_WINDOW,
                                            "transient-for", parent,
                                            "modal", parent != NULL,
                                            NULL);
  GtkAdjustment *adjustments[] = { self->temperature_adjustment, self->top_p_adjustment,
                                   self->max_tokens_adjustment,
                                   self->context_length_adjustment };

  self->settings = g_object_ref (settings);
  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    g_settings_bind (settings, keys[i], adjustments[i], "value", G_SETTINGS_BIND_DEFAULT);
  g_signal_connect (self->reset_button, "clicked", G_CALLBACK (on_reset), self);
  return GTK_WIDGET (self);
}

static void
hz_preferences_window_dispose (GObject *object)
{
  HzPreferencesWindow *self = HZ_PREFERENCES_WINDOW (object);

  g_clear_object (&self->settings);
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
  gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow, temperature_adjustment);
  gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow, top_p_adjustment);
  gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow, max_tokens_adjustment);
  gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow,
                                        context_length_adjustment);
  gtk_widget_class_bind_template_child (widget_class, HzPreferencesWindow, reset_button);
}

static void
hz_preferences_window_init (HzPreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
