/* hz-model-rows.c — shared row widgets of the model manager (hz-model-rows.h). */
#include "hz-model-rows.h"

#include <glib/gi18n.h>

char *
hz_model_rows_format_speed (double tokens_per_s)
{
  if (tokens_per_s >= 100)
    return g_strdup_printf (_("%.0f tokens/s"), tokens_per_s);
  return g_strdup_printf (_("%.1f tokens/s"), tokens_per_s);
}

GtkWidget *
hz_model_rows_tag (const char *text)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_widget_set_valign (label, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (label, "caption-heading");
  gtk_widget_add_css_class (label, "accent");
  return label;
}

GtkWidget *
hz_model_rows_button (const char *label, const char *action, GVariant *target)
{
  GtkWidget *b = gtk_button_new_with_mnemonic (label);
  gtk_widget_set_valign (b, GTK_ALIGN_CENTER);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (b), action);
  if (target != NULL)
    gtk_actionable_set_action_target_value (GTK_ACTIONABLE (b), target);
  return b;
}
