/* hz-application.c — HzApplication (see hz-application.h). */
#include "hz-application.h"

#include <glib/gi18n.h>

#include "hz-app-server.h"
#include "hz-config.h"
#include "hz-learner.h"
#include "hz-model-hub.h"
#include "hz-model-info.h"
#include "hz-model-manager.h"
#include "hz-model-settings.h"
#include "hz-preferences-window.h"
#include "hz-privacy-window.h"
#include "hz-resources.h"
#include "hz-window.h"

struct _HzApplication {
  AdwApplication  parent_instance;
  HzAppContext   *context;         /* the app-wide objects (after startup) */
  HzChatSession  *session;         /* the chats the window shows (after startup) */
  GtkWindow      *model_manager;   /* weak */
};

G_DEFINE_FINAL_TYPE (HzApplication, hz_application, ADW_TYPE_APPLICATION)

/* ------------------------------------------------------------------ public API */

HzApplication *
hz_application_new (void)
{
  return g_object_new (HZ_TYPE_APPLICATION,
                       "application-id", HZ_APP_ID,
                       "flags", G_APPLICATION_HANDLES_COMMAND_LINE,
                       "resource-base-path", "/ai/hanzo/Desktop",
                       NULL);
}

HzAppContext *
hz_application_get_context (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context;
}

HzChatSession *
hz_application_get_session (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->session;
}

GSettings *
hz_application_get_settings (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_settings (self->context) : NULL;
}

HzStore *
hz_application_get_store (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_store (self->context) : NULL;
}

HzEngineWorker *
hz_application_get_worker (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_worker (self->context) : NULL;
}

HzAppServer *
hz_application_get_app_server (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_app_server (self->context) : NULL;
}

HzLearner *
hz_application_get_learner (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_learner (self->context) : NULL;
}

HzModelLibrary *
hz_application_get_model_library (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_model_library (self->context) : NULL;
}

HzModelHub *
hz_application_get_model_hub (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_model_hub (self->context) : NULL;
}

GtkWindow *
hz_application_show_find_models (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  GtkWindow *manager = hz_application_show_model_manager (self);
  hz_model_manager_show_find (HZ_MODEL_MANAGER (manager));
  return manager;
}

GtkWindow *
hz_application_show_model_manager (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  if (self->model_manager == NULL)
    {
      GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
      GtkWindow *w = GTK_WINDOW (hz_model_manager_new (self->context, parent));
      g_set_weak_pointer (&self->model_manager, w);
    }
  gtk_window_present (self->model_manager);
  return self->model_manager;
}

const char *
hz_application_get_model_sha256 (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_model_sha256 (self->context) : NULL;
}

void
hz_application_open_model (HzApplication *self, const char *path, gboolean remember)
{
  g_return_if_fail (HZ_IS_APPLICATION (self));
  g_return_if_fail (path != NULL);
  hz_app_context_open_model (self->context, path, remember);
}

GSettings *
hz_application_get_model_settings (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->context ? hz_app_context_get_model_settings (self->context) : NULL;
}

/* ------------------------------------------------------------------ actions */

static void
action_about (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));
  const char *developers[] = { _("The Hanzo Desktop developers"), NULL };

#if ADW_CHECK_VERSION (1, 5, 0)
  AdwDialog *about = adw_about_dialog_new ();
#define ABOUT(x) ADW_ABOUT_DIALOG (x)
#define about_set(what, ...) adw_about_dialog_set_##what (__VA_ARGS__)
#else
  GtkWidget *about = adw_about_window_new ();
#define ABOUT(x) ADW_ABOUT_WINDOW (x)
#define about_set(what, ...) adw_about_window_set_##what (__VA_ARGS__)
#endif
  about_set (application_name, ABOUT (about), _("Hanzo"));
  about_set (application_icon, ABOUT (about), HZ_APP_ID);
  about_set (version, ABOUT (about), HZ_VERSION);
  about_set (developer_name, ABOUT (about), _("The Hanzo Desktop developers"));
  about_set (developers, ABOUT (about), developers);
  about_set (license_type, ABOUT (about), GTK_LICENSE_GPL_3_0);
  about_set (website, ABOUT (about), "https://hanzo.ai");
  about_set (comments, ABOUT (about),
             _("Chat with a language model that runs privately on this computer."));
  about_set (translator_credits, ABOUT (about), _("translator-credits"));
#if ADW_CHECK_VERSION (1, 5, 0)
  adw_dialog_present (about, parent ? GTK_WIDGET (parent) : NULL);
#else
  if (parent)
    gtk_window_set_transient_for (GTK_WINDOW (about), parent);
  gtk_window_present (GTK_WINDOW (about));
#endif
#undef ABOUT
#undef about_set
}

/* The preferences window, shown (on its "Other Apps" page for app.serve-settings). */
static void
action_preferences (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));

  HzAppContext *ctx = self->context;
  const char *path = hz_engine_worker_get_model_path (hz_app_context_get_worker (ctx));
  g_autofree char *name = path != NULL ? g_path_get_basename (path) : NULL;
  HzModelEntry *entry = path != NULL
    ? hz_model_library_find (hz_app_context_get_model_library (ctx), path) : NULL;

  GtkWidget *prefs = hz_preferences_window_new_for_model (
    hz_app_context_get_settings (ctx), hz_app_context_get_model_settings (ctx),
    entry ? hz_model_entry_get_name (entry) : name, parent);
  hz_preferences_window_set_app_server (HZ_PREFERENCES_WINDOW (prefs),
                                        hz_app_context_get_app_server (ctx));
  if (g_strcmp0 (g_action_get_name (G_ACTION (action)), "serve-settings") == 0)
    hz_preferences_window_show_other_apps (HZ_PREFERENCES_WINDOW (prefs));
  gtk_window_present (GTK_WINDOW (prefs));
}

static void
action_privacy (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));

  gtk_window_present (GTK_WINDOW (hz_privacy_window_new (self->context, self->session, parent)));
}

/* GGUF files dropped on the chat window (as: their URIs) go to the model manager's import. */
static void
action_import_models (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  g_autofree const char **uris = g_variant_get_strv (param, NULL);
  GSList *files = NULL;

  for (guint i = 0; uris[i] != NULL; i++)
    files = g_slist_prepend (files, g_file_new_for_uri (uris[i]));
  files = g_slist_reverse (files);
  GtkWindow *manager = hz_application_show_model_manager (self);
  hz_model_manager_import_files (HZ_MODEL_MANAGER (manager), files);
  g_slist_free_full (files, g_object_unref);
}

static void
action_models (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  hz_application_show_model_manager (HZ_APPLICATION (user_data));
}

static void
action_find_models (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  hz_application_show_find_models (HZ_APPLICATION (user_data));
}

static void
action_quit (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  GList *windows = gtk_application_get_windows (GTK_APPLICATION (self));

  /* Destroying the windows saves any reply in progress, then the app ends. */
  while (windows != NULL)
    {
      gtk_window_destroy (windows->data);
      windows = gtk_application_get_windows (GTK_APPLICATION (self));
    }
  g_application_quit (G_APPLICATION (self));
}

static const GActionEntry app_actions[] = {
  { .name = "about", .activate = action_about },
  { .name = "preferences", .activate = action_preferences },
  { .name = "serve-settings", .activate = action_preferences },
  { .name = "privacy", .activate = action_privacy },
  { .name = "models", .activate = action_models },
  { .name = "find-models", .activate = action_find_models },
  { .name = "import-models", .parameter_type = "as", .activate = action_import_models },
  { .name = "quit", .activate = action_quit },
};

/* ------------------------------------------------------------------ GApplication */

static void
hz_application_startup (GApplication *app)
{
  HzApplication *self = HZ_APPLICATION (app);

  G_APPLICATION_CLASS (hz_application_parent_class)->startup (app);

  gtk_window_set_default_icon_name (HZ_APP_ID);

  self->context = hz_app_context_new (app);
  self->session = hz_chat_session_new (self->context);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_actions,
                                   G_N_ELEMENTS (app_actions), self);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit",
                                         (const char *[]) { "<Control>q", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.new-chat",
                                         (const char *[]) { "<Control>n", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.open-model",
                                         (const char *[]) { "<Control>o", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.search",
                                         (const char *[]) { "<Control>k", "<Control>f", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "win.regenerate",
                                         (const char *[]) { "<Control>r", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.models",
                                         (const char *[]) { "<Control>m", NULL });
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.preferences",
                                         (const char *[]) { "<Control>comma", NULL });
}

static void
hz_application_activate (GApplication *app)
{
  HzApplication *self = HZ_APPLICATION (app);
  GtkWindow *window = gtk_application_get_active_window (GTK_APPLICATION (self));

  if (window == NULL)
    {
      window = GTK_WINDOW (hz_window_new (GTK_APPLICATION (self), self->context, self->session));
      if (hz_app_context_get_store (self->context) == NULL)
        {
          g_autofree char *body = g_strdup_printf (
            _("Your conversations are kept in memory only until Hanzo closes. "
              "The database file was left untouched.\n\n%s"), hz_app_context_get_store_error (self->context)->message);
          gtk_window_present (window);
          hz_window_show_error (HZ_WINDOW (window), _("Conversations Cannot Be Saved"), body);
        }
    }
  gtk_window_present (window);
}

static int
hz_application_command_line (GApplication *app, GApplicationCommandLine *cmdline)
{
  HzApplication *self = HZ_APPLICATION (app);
  GVariantDict *options = g_application_command_line_get_options_dict (cmdline);
  const char *model = NULL, *default_model = NULL;
  g_autofree char *model_abs = NULL, *default_abs = NULL;
  g_autofree char *remembered = g_settings_get_string (hz_application_get_settings (self),
                                                              "model-path");

  if (g_variant_dict_lookup (options, "model", "^&ay", &model) && *model)
    {
      g_autoptr(GFile) f = g_application_command_line_create_file_for_arg (cmdline, model);
      model_abs = g_file_get_path (f);
    }
  if (g_variant_dict_lookup (options, "default-model", "^&ay", &default_model) && *default_model)
    {
      g_autoptr(GFile) f = g_application_command_line_create_file_for_arg (cmdline, default_model);
      default_abs = g_file_get_path (f);
    }

  if (model_abs != NULL)
    hz_application_open_model (self, model_abs, TRUE);
  else if (*remembered == '\0' && default_abs != NULL)
    hz_application_open_model (self, default_abs, FALSE);
  else if (*remembered != '\0' && hz_engine_worker_get_model_path (hz_application_get_worker (self)) == NULL)
    hz_application_open_model (self, remembered, FALSE);

  g_application_activate (app);
  return 0;
}

static void
hz_application_shutdown (GApplication *app)
{
  HzApplication *self = HZ_APPLICATION (app);
  GList *windows;

  /* Windows save what they show before the store closes. */
  while ((windows = gtk_application_get_windows (GTK_APPLICATION (self))) != NULL)
    gtk_window_destroy (windows->data);

  if (self->session != NULL)
    g_object_run_dispose (G_OBJECT (self->session));  /* its reply saved, before the store */
  if (self->context != NULL)
    hz_app_context_shutdown (self->context);

  G_APPLICATION_CLASS (hz_application_parent_class)->shutdown (app);
}

static void
hz_application_finalize (GObject *object)
{
  HzApplication *self = HZ_APPLICATION (object);

  g_clear_object (&self->session);
  g_clear_object (&self->context);
  g_clear_weak_pointer (&self->model_manager);
  G_OBJECT_CLASS (hz_application_parent_class)->finalize (object);
}

static void
hz_application_class_init (HzApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->finalize = hz_application_finalize;
  app_class->startup = hz_application_startup;
  app_class->activate = hz_application_activate;
  app_class->command_line = hz_application_command_line;
  app_class->shutdown = hz_application_shutdown;

  hz_register_resource ();
}

static void
hz_application_init (HzApplication *self)
{
  static const GOptionEntry entries[] = {
    { "model", 'm', 0, G_OPTION_ARG_FILENAME, NULL,
      N_("Open the GGUF model file PATH and remember it"), N_("PATH") },
    { "default-model", 0, 0, G_OPTION_ARG_FILENAME, NULL,
      N_("Open PATH when no model has been chosen yet"), N_("PATH") },
    { NULL }
  };

  g_application_add_main_option_entries (G_APPLICATION (self), entries);
  g_application_set_option_context_summary (G_APPLICATION (self),
                                            _("Private AI chat that runs on your computer"));
}
