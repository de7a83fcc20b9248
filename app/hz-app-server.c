/* hz-app-server.c — HzAppServer (see hz-app-server.h). */
#include "hz-app-server.h"

#include <glib/gi18n.h>
#include <string.h>

#include "hanzo-server.h"

#define SERVE_HOST "127.0.0.1"
#define IDLE_UNLOAD_S 300   /* the server's copy of the model is dropped after 5 min unused */

struct _HzAppServer {
  GObject           parent_instance;
  GSettings        *settings;
  HzEngineWorker   *worker;
  gulong            worker_handlers[3];
  HzAppServerState  state;
  HzServer         *server;         /* while listening */
  char             *serving_path;   /* the model file it offers */
  char             *serving_key;    /* the key it was started with */
  guint             serving_port;   /* the port asked for */
  char             *address;        /* while listening */
  char             *model_id;       /* while listening */
  char             *message;
  char             *key;            /* once read or made */
  char             *key_note;       /* why it is not in the keyring, or NULL */
  GCancellable     *key_cancellable;  /* a keyring call in flight, or NULL */
  HzModel          *model;          /* the worker's model, one use of it held, or NULL */
  char             *model_path;     /* its file */
  GCancellable     *model_cancellable;  /* hz_engine_worker_acquire_model in flight */
  guint             stopping;       /* stop_server() calls under way (it spins the main context) */
  gboolean          update_due;     /* update() was called during stop_server() */
  guint             update_idle;    /* that update(), once stop_server() is done, or 0 */
};

G_DEFINE_FINAL_TYPE (HzAppServer, hz_app_server, G_TYPE_OBJECT)

enum { SIG_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void update (HzAppServer *self);

/* ------------------------------------------------------------------ the key */

typedef struct {
  char *key;
  char *note;
} KeyResult;

static void
key_result_free (KeyResult *r)
{
  g_free (r->key);
  g_free (r->note);
  g_free (r);
}

/* Thread: the keyring's key (task data NULL) or a new one (task data non-NULL: regenerate),
 * made and kept there when there is none. libsecret blocks on D-Bus, hence the thread. */
static void
key_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  KeyResult *r = g_new0 (KeyResult, 1);
  g_autoptr(GError) error = NULL;

  if (task_data == NULL)
    r->key = hz_server_keyring_key (&error);
  if (r->key == NULL && error == NULL)
    {
      r->key = hz_server_new_key ();
      hz_server_keyring_store_key (r->key, &error);
    }
  if (r->key == NULL)
    r->key = hz_server_new_key ();   /* no keyring: a key for this run */
  if (error != NULL)
    r->note = g_strdup_printf (_("Not kept in the keyring (%s): a new key is made at each "
                                 "start"), error->message);
  g_task_return_pointer (task, r, (GDestroyNotify) key_result_free);
}

static void
key_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  KeyResult *r = g_task_propagate_pointer (G_TASK (result), NULL);
  if (r == NULL)
    return;   /* cancelled: the object is gone or the switch went off */
  HzAppServer *self = HZ_APP_SERVER (source);
  g_clear_object (&self->key_cancellable);
  g_free (self->key);
  g_free (self->key_note);
  self->key = g_steal_pointer (&r->key);
  self->key_note = g_steal_pointer (&r->note);
  key_result_free (r);
  update (self);
}

static void
key_fetch (HzAppServer *self, gboolean regenerate)
{
  if (self->key_cancellable != NULL)
    {
      if (!regenerate)
        return;   /* one is on its way */
      g_cancellable_cancel (self->key_cancellable);
      g_clear_object (&self->key_cancellable);
    }
  self->key_cancellable = g_cancellable_new ();
  g_autoptr(GTask) task = g_task_new (self, self->key_cancellable, key_done, NULL);
  g_task_set_source_tag (task, key_fetch);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_task_data (task, regenerate ? GINT_TO_POINTER (1) : NULL, NULL);
  g_task_run_in_thread (task, key_thread);
}

/* ------------------------------------------------------------------ the model */

typedef struct {
  HzEngineWorker *worker;
  char           *path;
} ModelFetch;

static void
model_fetch_free (ModelFetch *f)
{
  g_object_unref (f->worker);
  g_free (f->path);
  g_free (f);
}

/* Thread: one use of the worker's model. */
static void
model_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ModelFetch *f = task_data;
  GError *error = NULL;
  HzModel *model = hz_engine_worker_acquire_model (f->worker, f->path, &error);
  if (model == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, model, NULL);
}

static void
model_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  HzAppServer *self = HZ_APP_SERVER (source);
  ModelFetch *f = g_task_get_task_data (G_TASK (result));
  const char *path = f->path;
  g_autoptr(GError) error = NULL;
  HzModel *model = g_task_propagate_pointer (G_TASK (result), &error);
  const gboolean current = g_task_get_cancellable (G_TASK (result)) == self->model_cancellable;

  if (model != NULL && (!current || self->worker == NULL))
    {
      /* not wanted any more (the switch went off, another model, or disposed) */
      hz_engine_worker_release_model (f->worker, model);
      return;
    }
  if (!current)
    return;
  g_clear_object (&self->model_cancellable);
  if (model == NULL)
    {
      g_message ("serve to other apps: the model %s: %s", path, error->message);
      g_free (self->message);
      self->message = g_strdup_printf (_("Not serving: %s"), error->message);
      self->state = HZ_APP_SERVER_FAILED;
      g_signal_emit (self, signals[SIG_CHANGED], 0);
      return;
    }
  self->model = model;
  self->model_path = g_strdup (path);
  update (self);
}

/* Stop any server (it uses the model), then give the model back to the worker. */
static void stop_server (HzAppServer *self);

static void
model_drop (HzAppServer *self)
{
  stop_server (self);
  if (self->model_cancellable != NULL)
    g_cancellable_cancel (self->model_cancellable);
  g_clear_object (&self->model_cancellable);
  if (self->model != NULL)
    hz_engine_worker_release_model (self->worker, g_steal_pointer (&self->model));
  g_clear_pointer (&self->model_path, g_free);
}

static void
model_fetch (HzAppServer *self, const char *path)
{
  model_drop (self);
  self->model_cancellable = g_cancellable_new ();
  g_autoptr(GTask) task = g_task_new (self, self->model_cancellable, model_done, NULL);
  ModelFetch *f = g_new0 (ModelFetch, 1);
  f->worker = g_object_ref (self->worker);
  f->path = g_strdup (path);
  g_task_set_source_tag (task, model_fetch);
  /* a cancelled fetch still hands its model over, to be given back (model_done) */
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, f, (GDestroyNotify) model_fetch_free);
  g_task_run_in_thread (task, model_thread);
}

/* ------------------------------------------------------------------ the server */

static void
server_log (const char *line, gpointer user_data)
{
  g_debug ("serve: %s", line);
}

/* The race this guards against: hz_server_free() iterates this thread's main context (to
 * end the server's jobs and drop its connections), so key_done(), model_done() or a settings
 * signal can run inside it.  Their update() once started a new server there, whose fields the
 * rest of stop_server() then cleared, and hz_app_server_regenerate_key() then set STARTING
 * over the ON state with nothing left to change it (STARTING for ever, under CPU load).  So
 * the old server is forgotten before it is freed, and an update() asked for while a
 * stop_server() is under way runs from an idle once it is done. */
static gboolean update_idle (gpointer data);

static void
stop_server (HzAppServer *self)
{
  HzServer *srv = g_steal_pointer (&self->server);
  g_clear_pointer (&self->serving_path, g_free);
  g_clear_pointer (&self->serving_key, g_free);
  g_clear_pointer (&self->address, g_free);
  g_clear_pointer (&self->model_id, g_free);
  self->serving_port = 0;
  self->stopping++;
  g_clear_pointer (&srv, hz_server_free);   /* before the model goes */
  if (--self->stopping == 0 && self->update_due)
    {
      self->update_due = FALSE;
      if (self->update_idle == 0)
        self->update_idle = g_idle_add (update_idle, self);   /* removed in dispose */
    }
}

static gboolean
update_idle (gpointer data)
{
  HzAppServer *self = data;
  self->update_idle = 0;
  update (self);
  return G_SOURCE_REMOVE;
}

/* The model id of a file: its name without ".gguf" (as `hanzo serve`). */
static char *
model_id_of (const char *path)
{
  char *id = g_path_get_basename (path);
  if (g_str_has_suffix (id, ".gguf") && strlen (id) > 5)
    id[strlen (id) - 5] = '\0';
  return id;
}

/* Listen on `port` with self->model (its file `path`); FALSE with `error`. */
static gboolean
start_server (HzAppServer *self, const char *path, guint port, GError **error)
{
  HzServerOptions o;
  hz_server_options_init (&o);
  o.host = SERVE_HOST;
  o.port = port;
  o.api_key = self->key;
  o.idle_unload = IDLE_UNLOAD_S;
  o.log = server_log;
  g_autoptr(HzServer) srv = hz_server_new (&o, error);
  g_autofree char *id = model_id_of (path);
  /* the worker's model itself: the server frees its HzServe before stop_server() returns,
   * and model_drop() gives the model back only after that */
  if (srv == NULL || !hz_server_add_loaded_model (srv, id, path, self->model, NULL, NULL, error) ||
      !hz_server_listen (srv, error))
    return FALSE;
  self->server = g_steal_pointer (&srv);
  self->serving_path = g_strdup (path);
  self->serving_key = g_strdup (self->key);
  self->serving_port = port;
  self->model_id = g_steal_pointer (&id);
  self->address = g_strdup_printf ("http://%s:%u/v1", SERVE_HOST, hz_server_get_port (self->server));
  return TRUE;
}

static void
set_state (HzAppServer *self, HzAppServerState state, char *message)
{
  g_free (self->message);
  self->message = message;
  self->state = state;
  g_signal_emit (self, signals[SIG_CHANGED], 0);
}

/* Make what runs match the switch, the port, the key and the model in use. */
static void
update (HzAppServer *self)
{
  if (self->stopping > 0)
    {
      /* inside hz_server_free(): see stop_server().  Not an idle source yet, as
       * hz_server_free() spins the main context until nothing is pending. */
      self->update_due = TRUE;
      return;
    }
  if (self->worker == NULL)
    return;   /* disposed */
  const gboolean on = g_settings_get_boolean (self->settings, "serve-enabled");
  const guint port = (guint) g_settings_get_int (self->settings, "serve-port");
  const char *path = hz_engine_worker_is_model_loaded (self->worker)
                     ? hz_engine_worker_get_model_path (self->worker) : NULL;

  if (!on)
    {
      if (self->key_cancellable != NULL)
        g_cancellable_cancel (self->key_cancellable);
      g_clear_object (&self->key_cancellable);
      model_drop (self);
      set_state (self, HZ_APP_SERVER_OFF, g_strdup (_("Off")));
      return;
    }
  if (self->key == NULL || self->key_cancellable != NULL)
    {
      key_fetch (self, FALSE);
      stop_server (self);
      set_state (self, HZ_APP_SERVER_STARTING, g_strdup (_("Starting…")));
      return;
    }
  if (path == NULL)
    {
      model_drop (self);
      set_state (self, HZ_APP_SERVER_NO_MODEL,
                 g_strdup (_("Waiting for a model: open one to serve it")));
      return;
    }
  if (g_strcmp0 (self->model_path, path) != 0)
    {
      if (self->model_cancellable == NULL)
        model_fetch (self, path);
      set_state (self, HZ_APP_SERVER_STARTING, g_strdup (_("Starting…")));
      return;
    }
  if (self->server != NULL && g_strcmp0 (self->serving_path, path) == 0 &&
      self->serving_port == port && g_strcmp0 (self->serving_key, self->key) == 0)
    return;   /* serving as asked */

  stop_server (self);
  g_autoptr(GError) error = NULL;
  if (!start_server (self, path, port, &error))
    {
      g_message ("serve to other apps: %s", error->message);
      set_state (self, HZ_APP_SERVER_FAILED, g_strdup_printf (_("Not serving: %s"), error->message));
      return;
    }
  /* TRANSLATORS: "Serving MODEL at ADDRESS" */
  set_state (self, HZ_APP_SERVER_ON,
             g_strdup_printf (_("Serving %s at %s"), self->model_id, self->address));
}

static void
on_setting_changed (GSettings *settings, const char *key, HzAppServer *self)
{
  update (self);
}

static void
on_model_changed (HzEngineWorker *worker, const char *path, gpointer arg, HzAppServer *self)
{
  update (self);
}

/* Another model is asked for: give back the one served before the worker fits the new one
 * into its memory budget (a model in use cannot be unloaded to make room). */
static void
on_model_loading (HzEngineWorker *worker, const char *path, HzAppServer *self)
{
  if (g_strcmp0 (self->model_path, path) == 0 ||
      (self->model_path == NULL && self->model_cancellable == NULL))
    return;   /* the same model, or none held */
  model_drop (self);
  if (self->state != HZ_APP_SERVER_OFF)
    set_state (self, HZ_APP_SERVER_NO_MODEL, g_strdup (_("Waiting for the model to load")));
}

/* ------------------------------------------------------------------ public API */

HzAppServer *
hz_app_server_new (GSettings *settings, HzEngineWorker *worker)
{
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (worker), NULL);

  HzAppServer *self = g_object_new (HZ_TYPE_APP_SERVER, NULL);
  self->settings = g_object_ref (settings);
  self->worker = g_object_ref (worker);
  g_signal_connect (settings, "changed::serve-enabled", G_CALLBACK (on_setting_changed), self);
  g_signal_connect (settings, "changed::serve-port", G_CALLBACK (on_setting_changed), self);
  /* model-error is followed by model-loaded of the model that serves on, if any */
  self->worker_handlers[0] = g_signal_connect (worker, "model-loaded",
                                               G_CALLBACK (on_model_changed), self);
  self->worker_handlers[1] = g_signal_connect (worker, "model-error",
                                               G_CALLBACK (on_model_changed), self);
  self->worker_handlers[2] = g_signal_connect (worker, "model-loading",
                                               G_CALLBACK (on_model_loading), self);
  update (self);
  return self;
}

HzAppServerState
hz_app_server_get_state (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), HZ_APP_SERVER_OFF);
  return self->state;
}

const char *
hz_app_server_get_address (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), NULL);
  return self->address;
}

const char *
hz_app_server_get_model_id (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), NULL);
  return self->model_id;
}

const char *
hz_app_server_get_key (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), NULL);
  return self->key;
}

const char *
hz_app_server_get_key_note (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), NULL);
  return self->key_note;
}

const char *
hz_app_server_get_message (HzAppServer *self)
{
  g_return_val_if_fail (HZ_IS_APP_SERVER (self), "");
  return self->message ? self->message : "";
}

void
hz_app_server_regenerate_key (HzAppServer *self)
{
  g_return_if_fail (HZ_IS_APP_SERVER (self));
  key_fetch (self, TRUE);
  if (self->state != HZ_APP_SERVER_OFF)
    {
      stop_server (self);
      set_state (self, HZ_APP_SERVER_STARTING, g_strdup (_("Starting…")));
    }
}

/* ------------------------------------------------------------------ GObject */

static void
hz_app_server_dispose (GObject *object)
{
  HzAppServer *self = HZ_APP_SERVER (object);

  if (self->key_cancellable != NULL)
    g_cancellable_cancel (self->key_cancellable);
  g_clear_object (&self->key_cancellable);
  if (self->worker != NULL)
    model_drop (self);
  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  for (guint i = 0; i < G_N_ELEMENTS (self->worker_handlers); i++)
    g_clear_signal_handler (&self->worker_handlers[i], self->worker);
  g_clear_object (&self->settings);
  g_clear_object (&self->worker);
  g_clear_handle_id (&self->update_idle, g_source_remove);
  G_OBJECT_CLASS (hz_app_server_parent_class)->dispose (object);
}

static void
hz_app_server_finalize (GObject *object)
{
  HzAppServer *self = HZ_APP_SERVER (object);

  g_free (self->message);
  g_free (self->key);
  g_free (self->key_note);
  G_OBJECT_CLASS (hz_app_server_parent_class)->finalize (object);
}

static void
hz_app_server_class_init (HzAppServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = hz_app_server_dispose;
  object_class->finalize = hz_app_server_finalize;
  signals[SIG_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
hz_app_server_init (HzAppServer *self)
{
  self->state = HZ_APP_SERVER_OFF;
}
