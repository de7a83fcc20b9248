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
  GSettings      *settings;
  HzStore        *store;
  GError         *store_error;
  HzEngineWorker *worker;
  char           *model_sha256;
  GCancellable   *hash_cancellable;
  char           *remember_path;   /* saved as model-path once it has loaded */
  HzLearner      *learner;         /* the hanzo-learner daemon on the session bus */
  HzModelLibrary *library;
  HzModelHub     *hub;             /* search and downloads (Find Models) */
  GtkWindow      *model_manager;   /* weak */
  GSettings      *model_settings;  /* the current model's own settings, or NULL */
  char           *model_settings_name;  /* its file name */
  HzAppServer    *app_server;      /* "Serve to other apps on this computer" */
};

G_DEFINE_FINAL_TYPE (HzApplication, hz_application, ADW_TYPE_APPLICATION)

/* ------------------------------------------------------------- model file hash */

static void
hash_file_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *path = task_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(GFileInputStream) in = g_file_read (file, cancellable, &error);
  g_autoptr(GChecksum) sum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree guchar *buf = g_malloc (1 << 20);
  gssize n;

  if (in == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  while ((n = g_input_stream_read (G_INPUT_STREAM (in), buf, 1 << 20, cancellable, &error)) > 0)
    g_checksum_update (sum, buf, n);
  if (n < 0)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, g_strdup (g_checksum_get_string (sum)), g_free);
}

static void
hash_file_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzApplication *self = HZ_APPLICATION (source);
  g_autoptr(GError) error = NULL;
  g_autofree char *sha = g_task_propagate_pointer (G_TASK (result), &error);

  if (sha == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_warning ("cannot hash the model file: %s", error->message);
      return;
    }
  g_free (self->model_sha256);
  self->model_sha256 = g_steal_pointer (&sha);
}

/* The context length the current model asks for (its own, else the default). */
static guint
model_context_length (HzApplication *self)
{
  return (guint) hz_model_settings_get_int (self->model_settings, self->settings,
                                            "context-length");
}

static void
on_context_length_changed (GSettings *settings, const char *key, HzApplication *self)
{
  hz_engine_worker_set_context_length (self->worker, model_context_length (self));
}

/* Follow the settings of the model at `path` (NULL: none). */
static void
use_model_settings (HzApplication *self, const char *path)
{
  g_autofree char *name = path != NULL ? g_path_get_basename (path) : NULL;

  if (self->model_settings != NULL && g_strcmp0 (name, self->model_settings_name) == 0)
    return;  /* the same file name: the same settings */
  if (self->model_settings != NULL)
    g_signal_handlers_disconnect_by_func (self->model_settings, on_context_length_changed, self);
  g_clear_object (&self->model_settings);
  g_free (self->model_settings_name);
  self->model_settings_name = g_steal_pointer (&name);
  self->model_settings = hz_model_settings_new (path);
  if (self->model_settings != NULL)
    g_signal_connect (self->model_settings, "changed::context-length",
                      G_CALLBACK (on_context_length_changed), self);
}

static void
on_model_loading (HzEngineWorker *worker, const char *path, HzApplication *self)
{
  g_cancellable_cancel (self->hash_cancellable);
  g_clear_pointer (&self->model_sha256, g_free);
  use_model_settings (self, path);  /* (loaded some other way than open_model) */
}

static void
on_model_loaded (HzEngineWorker *worker, const char *path, const char *name, HzApplication *self)
{
  g_autoptr(GTask) task = NULL;

  if (g_strcmp0 (path, self->remember_path) == 0)
    {
      g_settings_set_string (self->settings, "model-path", path);
      g_clear_pointer (&self->remember_path, g_free);
    }
  /* also after a failed load, when the model used before serves on */
  use_model_settings (self, path);

  g_cancellable_cancel (self->hash_cancellable);
  g_clear_object (&self->hash_cancellable);
  g_clear_pointer (&self->model_sha256, g_free);

  self->hash_cancellable = g_cancellable_new ();
  task = g_task_new (self, self->hash_cancellable, hash_file_done, NULL);
  g_task_set_source_tag (task, on_model_loaded);
  g_task_set_task_data (task, g_strdup (path), g_free);
  g_task_run_in_thread (task, hash_file_thread);
}

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

GSettings *
hz_application_get_settings (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->settings;
}

HzStore *
hz_application_get_store (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->store;
}

HzEngineWorker *
hz_application_get_worker (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->worker;
}

HzAppServer *
hz_application_get_app_server (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->app_server;
}

HzLearner *
hz_application_get_learner (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->learner;
}

HzModelLibrary *
hz_application_get_model_library (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->library;
}

HzModelHub *
hz_application_get_model_hub (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->hub;
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
      GtkWindow *w = GTK_WINDOW (hz_model_manager_new (self, parent));
      g_set_weak_pointer (&self->model_manager, w);
    }
  gtk_window_present (self->model_manager);
  return self->model_manager;
}

const char *
hz_application_get_model_sha256 (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->model_sha256;
}

void
hz_application_open_model (HzApplication *self, const char *path, gboolean remember)
{
  g_return_if_fail (HZ_IS_APPLICATION (self));
  g_return_if_fail (path != NULL);

  g_free (self->remember_path);
  self->remember_path = remember ? g_strdup (path) : NULL;
  use_model_settings (self, path);
  hz_engine_worker_load_model_full (self->worker, path, model_context_length (self));
}

GSettings *
hz_application_get_model_settings (HzApplication *self)
{
  g_return_val_if_fail (HZ_IS_APPLICATION (self), NULL);
  return self->model_settings;
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

  const char *path = hz_engine_worker_get_model_path (self->worker);
  g_autofree char *name = path != NULL ? g_path_get_basename (path) : NULL;
  HzModelEntry *entry = path != NULL ? hz_model_library_find (self->library, path) : NULL;

  GtkWidget *prefs = hz_preferences_window_new_for_model (
    self->settings, self->model_settings, entry ? hz_model_entry_get_name (entry) : name, parent);
  hz_preferences_window_set_app_server (HZ_PREFERENCES_WINDOW (prefs), self->app_server);
  if (g_strcmp0 (g_action_get_name (G_ACTION (action)), "serve-settings") == 0)
    hz_preferences_window_show_other_apps (HZ_PREFERENCES_WINDOW (prefs));
  gtk_window_present (GTK_WINDOW (prefs));
}

static void
action_privacy (GSimpleAction *action, GVariant *param, gpointer user_data)
{
  HzApplication *self = user_data;
  GtkWindow *parent = gtk_application_get_active_window (GTK_APPLICATION (self));

  gtk_window_present (GTK_WINDOW (hz_privacy_window_new (self, parent)));
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
  { .name = "quit", .activate = action_quit },
};

/* ------------------------------------------------------------------ GApplication */

static void
hz_application_startup (GApplication *app)
{
  HzApplication *self = HZ_APPLICATION (app);
  g_autofree char *store_path = NULL;

  G_APPLICATION_CLASS (hz_application_parent_class)->startup (app);

  gtk_window_set_default_icon_name (HZ_APP_ID);

  self->settings = g_settings_new (HZ_APP_ID);
  store_path = hz_store_default_path ();
  self->store = hz_store_open (store_path, &self->store_error);
  if (self->store == NULL)
    g_message ("cannot open the store %s: %s", store_path, self->store_error->message);

  self->learner = hz_learner_new ();
  guint64 budget = g_settings_get_uint64 (self->settings, "model-memory-budget");
  if (budget == 0)
    budget = hz_memory_total () / 4 * 3;
  self->worker = hz_engine_worker_new_full (budget);
  hz_engine_worker_follow_learner (self->worker, self->learner, self->store);  /* LoRA hot-load */
  self->library = hz_model_library_new (NULL);
  self->hub = hz_model_hub_new (self->library, self->settings, store_path);
  hz_engine_worker_set_context_length (self->worker,
                                       (guint) g_settings_get_int (self->settings, "context-length"));
  g_signal_connect (self->settings, "changed::context-length",
                    G_CALLBACK (on_context_length_changed), self);
  g_signal_connect (self->worker, "model-loading", G_CALLBACK (on_model_loading), self);
  g_signal_connect (self->worker, "model-loaded", G_CALLBACK (on_model_loaded), self);
  self->app_server = hz_app_server_new (self->settings, self->worker);  /* off by default */

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
      window = GTK_WINDOW (hz_window_new (self));
      if (self->store == NULL)
        {
          g_autofree char *body = g_strdup_printf (
            _("Your conversations are kept in memory only until Hanzo closes. "
              "The database file was left untouched.\n\n%s"), self->store_error->message);
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
  g_autofree char *remembered = g_settings_get_string (self->settings, "model-path");

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
  else if (*remembered != '\0' && hz_engine_worker_get_model_path (self->worker) == NULL)
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

  g_cancellable_cancel (self->hash_cancellable);
  if (self->app_server != NULL)
    g_object_run_dispose (G_OBJECT (self->app_server));  /* stops listening */
  if (self->worker != NULL)
    hz_engine_worker_shutdown (self->worker);
  g_clear_pointer (&self->store, hz_store_close);
  if (self->learner != NULL)
    g_object_run_dispose (G_OBJECT (self->learner));  /* stops watching, resumes it */
  if (self->hub != NULL)
    g_object_run_dispose (G_OBJECT (self->hub));  /* downloads stop, .part files kept */
  g_settings_sync ();  /* the unfinished downloads are remembered for the next start */

  G_APPLICATION_CLASS (hz_application_parent_class)->shutdown (app);
}

static void
hz_application_finalize (GObject *object)
{
  HzApplication *self = HZ_APPLICATION (object);

  if (self->model_settings != NULL)
    g_signal_handlers_disconnect_by_func (self->model_settings, on_context_length_changed, self);
  g_clear_object (&self->model_settings);
  g_clear_pointer (&self->model_settings_name, g_free);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->store, hz_store_close);
  g_clear_error (&self->store_error);
  g_clear_object (&self->app_server);
  g_clear_object (&self->worker);
  g_clear_object (&self->learner);
  g_clear_object (&self->hub);
  g_clear_object (&self->library);
  g_clear_weak_pointer (&self->model_manager);
  g_clear_object (&self->hash_cancellable);
  g_free (self->model_sha256);
  g_free (self->remember_path);
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
