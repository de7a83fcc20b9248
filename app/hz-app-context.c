/* hz-app-context.c — HzAppContext (see hz-app-context.h). */
#include "hz-app-context.h"

#include "hz-config.h"
#include "hz-model-info.h"
#include "hz-model-settings.h"

struct _HzAppContext {
  GObject         parent_instance;
  GApplication   *app;             /* not owned */
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
  GSettings      *model_settings;  /* the current model's own settings, or NULL */
  char           *model_settings_name;  /* its file name */
  HzAppServer    *app_server;      /* "Serve to other apps on this computer" */
};

G_DEFINE_FINAL_TYPE (HzAppContext, hz_app_context, G_TYPE_OBJECT)

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
  HzAppContext *self = HZ_APP_CONTEXT (source);
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
model_context_length (HzAppContext *self)
{
  return (guint) hz_model_settings_get_int (self->model_settings, self->settings,
                                            "context-length");
}

static void
on_context_length_changed (GSettings *settings, const char *key, HzAppContext *self)
{
  hz_engine_worker_set_context_length (self->worker, model_context_length (self));
}

/* Follow the settings of the model at `path` (NULL: none). */
static void
use_model_settings (HzAppContext *self, const char *path)
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
on_model_loading (HzEngineWorker *worker, const char *path, HzAppContext *self)
{
  g_cancellable_cancel (self->hash_cancellable);
  g_clear_pointer (&self->model_sha256, g_free);
  use_model_settings (self, path);  /* (loaded some other way than open_model) */
}

static void
on_model_loaded (HzEngineWorker *worker, const char *path, const char *name, HzAppContext *self)
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

HzAppContext *
hz_app_context_new (GApplication *app)
{
  g_return_val_if_fail (G_IS_APPLICATION (app), NULL);
  HzAppContext *self = g_object_new (HZ_TYPE_APP_CONTEXT, NULL);
  g_autofree char *store_path = hz_store_default_path ();

  self->app = app;
  self->settings = g_settings_new (HZ_APP_ID);
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
  return self;
}

void
hz_app_context_shutdown (HzAppContext *self)
{
  g_return_if_fail (HZ_IS_APP_CONTEXT (self));

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
}

#define GETTER(type, name, field)                                   \
  type                                                              \
  hz_app_context_get_##name (HzAppContext *self)                    \
  {                                                                 \
    g_return_val_if_fail (HZ_IS_APP_CONTEXT (self), NULL);          \
    return self->field;                                             \
  }

GETTER (GApplication *, application, app)
GETTER (GSettings *, settings, settings)
GETTER (HzStore *, store, store)
GETTER (const GError *, store_error, store_error)
GETTER (HzEngineWorker *, worker, worker)
GETTER (HzAppServer *, app_server, app_server)
GETTER (HzLearner *, learner, learner)
GETTER (HzModelLibrary *, model_library, library)
GETTER (HzModelHub *, model_hub, hub)
GETTER (GSettings *, model_settings, model_settings)
GETTER (const char *, model_sha256, model_sha256)
#undef GETTER

void
hz_app_context_open_model (HzAppContext *self, const char *path, gboolean remember)
{
  g_return_if_fail (HZ_IS_APP_CONTEXT (self));
  g_return_if_fail (path != NULL);

  g_free (self->remember_path);
  self->remember_path = remember ? g_strdup (path) : NULL;
  use_model_settings (self, path);
  hz_engine_worker_load_model_full (self->worker, path, model_context_length (self));
}

/* ------------------------------------------------------------------ GObject */

static void
hz_app_context_finalize (GObject *object)
{
  HzAppContext *self = HZ_APP_CONTEXT (object);

  if (self->model_settings != NULL)
    g_signal_handlers_disconnect_by_func (self->model_settings, on_context_length_changed, self);
  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_func (self->settings, on_context_length_changed, self);
  if (self->worker != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->worker, on_model_loading, self);
      g_signal_handlers_disconnect_by_func (self->worker, on_model_loaded, self);
    }
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
  g_clear_object (&self->hash_cancellable);
  g_free (self->model_sha256);
  g_free (self->remember_path);
  G_OBJECT_CLASS (hz_app_context_parent_class)->finalize (object);
}

static void
hz_app_context_class_init (HzAppContextClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = hz_app_context_finalize;
}

static void
hz_app_context_init (HzAppContext *self)
{
}
