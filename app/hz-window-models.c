/* hz-window-models.c — HzWindow's model switcher (the shared struct is in
 * hz-window-private.h).
 *
 * Switcher: a menu button in the chat header lists the models of the application's
 * HzModelLibrary as radio items of the stateful action chat.model (s: path), then Open
 * Model… and Manage Models…; its label (the model in use) is ellipsized, and on a folded
 * (narrow) window it stands in for the header's open button, so that the window fits the
 * width the metainfo promises. Choosing
 * one asks the engine worker to switch (through its model registry: a model used earlier
 * and still loaded comes back without loading); the action's state follows the worker,
 * so the check mark always shows the model in use, also when it was opened otherwise.
 *
 * With no model in use, the empty chat page lists the library's models (a row opens one as
 * the switcher does) next to Find a Model… and Open Model File….
 *
 * GGUF files dropped on the window are imported through the model manager (the application's
 * action app.import-models).
 */
#include "hz-window-private.h"

#include <glib/gi18n.h>


/* ------------------------------------------------------------------ switcher */

/* The entry's name, with its file name when another model has the same name (a model and
 * its quantized copy share general.name). g_free. */
static char *
entry_label (GListModel *models, HzModelEntry *entry)
{
  const char *name = hz_model_entry_get_name (entry);
  guint n = g_list_model_get_n_items (models), same = 0;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelEntry) e = g_list_model_get_item (models, i);
      same += g_strcmp0 (hz_model_entry_get_name (e), name) == 0;
    }
  if (same <= 1)
    return g_strdup (name);
  g_autofree char *base = g_path_get_basename (hz_model_entry_get_path (entry));
  return g_strdup_printf ("%s (%s)", name, base);
}

static void
rebuild_menu (HzWindow *self)
{
  HzModelLibrary *lib = hz_app_context_get_model_library (self->ctx);
  GListModel *models = hz_model_library_get_models (lib);
  guint n = g_list_model_get_n_items (models);
  g_autoptr(GMenu) list = g_menu_new ();

  g_menu_remove_all (self->model_menu);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelEntry) e = g_list_model_get_item (models, i);
      g_autofree char *label = entry_label (models, e);
      g_auto(GStrv) parts = g_strsplit (label, "_", -1);
      g_autofree char *escaped = g_strjoinv ("__", parts);  /* no mnemonics in names */
      g_autoptr(GMenuItem) item = g_menu_item_new (escaped, NULL);
      g_menu_item_set_action_and_target_value (item, "chat.model",
        g_variant_new_string (hz_model_entry_get_path (e)));
      g_menu_append_item (list, item);
    }
  g_menu_append_section (self->model_menu, NULL, G_MENU_MODEL (list));
  g_autoptr(GMenu) manage = g_menu_new ();
  g_menu_append (manage, _("_Open Model…"), "win.open-model");
  g_menu_append (manage, _("_Manage Models…"), "app.models");
  g_menu_append_section (self->model_menu, NULL, G_MENU_MODEL (manage));
  gtk_widget_set_visible (GTK_WIDGET (self->model_button), n > 0);
  hz_window_models_update_header (self);
}

void
hz_window_models_update_header (HzWindow *self)
{
  gtk_widget_set_visible (GTK_WIDGET (self->open_model_button),
                          !hz_window_folded (self) ||
                          !gtk_widget_get_visible (GTK_WIDGET (self->model_button)));
}

void
hz_window_models_sync (HzWindow *self)
{
  const char *path = hz_engine_worker_get_model_path (self->worker);
  HzModelLibrary *lib = hz_app_context_get_model_library (self->ctx);
  HzModelEntry *entry = hz_model_library_find (lib, path);
  g_autofree char *label = entry ? entry_label (hz_model_library_get_models (lib), entry)
                         : path ? g_path_get_basename (path) : g_strdup (_("No Model"));

  g_simple_action_set_state (self->model_action, g_variant_new_string (path ? path : ""));
  gtk_label_set_text (self->model_label, label);
}

static void
on_library_changed (GListModel *models, guint pos, guint removed, guint added, HzWindow *self)
{
  rebuild_menu (self);
  hz_window_models_sync (self);
  /* (the empty page's offer of models follows in hz-window.c) */
}

/* A row of the empty page's list: the model's name, its file and size; activating it opens
 * the model as the switcher does (chat.model). */
static GtkWidget *
status_row (gpointer item, gpointer data)
{
  HzWindow *self = data;
  HzModelEntry *e = item;
  GListModel *models = hz_model_library_get_models (hz_app_context_get_model_library (self->ctx));
  const char *path = hz_model_entry_get_path (e);
  const HzModelInfo *info = hz_model_entry_get_info (e);
  g_autofree char *label = entry_label (models, e);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *size = info ? g_format_size (info->file_size) : NULL;
  g_autofree char *subtitle = size ? g_strdup_printf ("%s · %s", base, size) : g_strdup (base);
  GtkWidget *row = adw_action_row_new ();

  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), label);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), gtk_image_new_from_icon_name ("go-next-symbolic"));
  gtk_widget_set_tooltip_text (row, path);
  gtk_list_box_row_set_activatable (GTK_LIST_BOX_ROW (row), TRUE);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (row), "chat.model");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (row), g_variant_new_string (path));
  return row;
}

gboolean
hz_window_models_offer (HzWindow *self, gboolean offer)
{
  guint n = self->ctx != NULL
    ? g_list_model_get_n_items (hz_model_library_get_models (hz_app_context_get_model_library (self->ctx)))
    : 0;
  gtk_widget_set_visible (GTK_WIDGET (self->status_models), offer && n > 0);
  return n > 0;
}

static void
on_model_activated (GSimpleAction *action, GVariant *param, gpointer data)
{
  HzWindow *self = data;
  const char *path = g_variant_get_string (param, NULL);

  if (*path == '\0' || g_strcmp0 (path, hz_engine_worker_get_model_path (self->worker)) == 0)
    return;
  if (hz_chat_session_is_generating (self->session))
    {
      hz_window_notify (self, _("Wait for the reply to finish before switching models"));
      return;
    }
  hz_app_context_open_model (self->ctx, path, FALSE);
}

/* GGUF files dropped on the chat window go to the model manager's import. */
static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, HzWindow *self)
{
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  g_autoptr(GPtrArray) uris = g_ptr_array_new_with_free_func (g_free);
  for (GSList *l = g_value_get_boxed (value); l != NULL; l = l->next)
    g_ptr_array_add (uris, g_file_get_uri (l->data));
  g_ptr_array_add (uris, NULL);
  return gtk_widget_activate_action (GTK_WIDGET (self), "app.import-models", "^as",
                                     (char **) uris->pdata);
}

void
hz_window_models_attach (HzWindow *self)
{
  GListModel *models = hz_model_library_get_models (hz_app_context_get_model_library (self->ctx));
  g_autoptr(GSimpleActionGroup) group = g_simple_action_group_new ();

  self->model_action = g_simple_action_new_stateful ("model", G_VARIANT_TYPE_STRING,
                                                     g_variant_new_string (""));
  g_signal_connect (self->model_action, "activate", G_CALLBACK (on_model_activated), self);
  g_action_map_add_action (G_ACTION_MAP (group), G_ACTION (self->model_action));
  gtk_widget_insert_action_group (GTK_WIDGET (self), "chat", G_ACTION_GROUP (group));

  self->model_menu = g_menu_new ();
  gtk_menu_button_set_menu_model (self->model_button, G_MENU_MODEL (self->model_menu));
  self->library_changed_id = g_signal_connect (models, "items-changed",
                                               G_CALLBACK (on_library_changed), self);
  gtk_list_box_bind_model (self->status_models, models, status_row, self, NULL);
  rebuild_menu (self);
  hz_window_models_sync (self);

  GtkDropTarget *drop = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (drop, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (drop));
}

void
hz_window_models_dispose (HzWindow *self)
{
  if (self->ctx != NULL && self->library_changed_id != 0)
    g_clear_signal_handler (&self->library_changed_id,
      hz_model_library_get_models (hz_app_context_get_model_library (self->ctx)));
  g_clear_object (&self->model_action);
  g_clear_object (&self->model_menu);
}
