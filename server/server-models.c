/* server/server-models.c — models on demand (server-models.h). */
#include "server-models.h"
#include "server-log.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SLOT_UNLOADED, SLOT_LOADING, SLOT_LOADED } SlotState;

typedef struct {
  HzModelsReadyFunc func;
  gpointer          data;
} Waiter;

struct _HzModelSlot {
  char      *name;       /* registry name (the first id of the file) */
  char      *path;
  gint64     mtime;      /* Unix seconds */
  SlotState  state;
  HzModel   *model;      /* acquired from the registry while loaded */
  HzServe   *serve;
  guint      n_users;
  gint64     last_used;  /* monotonic µs */
  GArray    *waiters;    /* Waiter, while loading */
  HzModel   *given;      /* a model the caller loaded (hz_models_add_loaded), or NULL */
  GDestroyNotify release;  /* of `given`, with release_data */
  gpointer   release_data;
};

struct _HzModels {
  HzRegistry     *registry;
  HzServeParams   serve;
  guint           n_threads, idle_unload_s;
  HzServerLogFunc log;
  gpointer        log_data;
  GHashTable     *slots;   /* registry name -> HzModelSlot (owned) */
  GHashTable     *ids;     /* id -> HzModelSlot (ids and aliases) */
  GSource        *idle_timer;
  GMainContext   *context;
  guint           n_loading;
  gboolean        closing;
};

static void
slot_free (HzModelSlot *slot)
{
  if (slot->given && slot->release)
    slot->release (slot->release_data);
  g_free (slot->name);
  g_free (slot->path);
  g_clear_pointer (&slot->waiters, g_array_unref);
  g_free (slot);
}

/* Free a loaded slot's server and give its model back (the registry then unloads it; a
 * given model stays with its owner). */
static void
slot_unload (HzModels *models, HzModelSlot *slot)
{
  g_clear_pointer (&slot->serve, hz_serve_free);
  if (slot->given)
    slot->model = NULL;
  else
    {
      if (slot->model)
        hz_registry_release (models->registry, g_steal_pointer (&slot->model));
      hz_registry_unload (models->registry, slot->name, NULL);
    }
  slot->state = SLOT_UNLOADED;
}

static gboolean
on_idle_timer (gpointer user_data)
{
  HzModels *models = user_data;
  const gint64 now = g_get_monotonic_time ();
  GHashTableIter it;
  HzModelSlot *slot;
  g_hash_table_iter_init (&it, models->slots);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &slot))
    if (slot->state == SLOT_LOADED && slot->n_users == 0 &&
        now - slot->last_used >= (gint64) models->idle_unload_s * G_USEC_PER_SEC)
      {
        slot_unload (models, slot);
        hz_server_say (models->log, models->log_data, "model %s unloaded after %u s unused",
                       slot->name, models->idle_unload_s);
      }
  return G_SOURCE_CONTINUE;
}

HzModels *
hz_models_new (const HzServeParams *serve, guint n_threads, guint idle_unload_s,
               HzServerLogFunc log, gpointer log_data)
{
  HzModels *models = g_new0 (HzModels, 1);
  models->registry = hz_registry_new (0);
  if (serve)
    models->serve = *serve;
  else
    hz_serve_params_init (&models->serve);
  models->n_threads = n_threads;
  models->idle_unload_s = idle_unload_s;
  models->log = log;
  models->log_data = log_data;
  models->slots = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) slot_free);
  models->ids = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  models->context = g_main_context_ref_thread_default ();
  if (idle_unload_s > 0)
    {
      /* checked every second (or every idle period, when shorter) */
      models->idle_timer = g_timeout_source_new (MIN (idle_unload_s * 1000u, 1000u));
      g_source_set_callback (models->idle_timer, on_idle_timer, models, NULL);
      g_source_set_static_name (models->idle_timer, "hz-server-idle-unload");
      g_source_attach (models->idle_timer, models->context);
    }
  return models;
}

void
hz_models_shutdown (HzModels *models)
{
  models->closing = TRUE;
  while (models->n_loading > 0)
    g_main_context_iteration (models->context, TRUE);
  if (models->idle_timer)
    {
      g_source_destroy (models->idle_timer);
      g_clear_pointer (&models->idle_timer, g_source_unref);
    }
  GHashTableIter it;
  HzModelSlot *slot;
  g_hash_table_iter_init (&it, models->slots);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &slot))
    if (slot->state == SLOT_LOADED)
      slot_unload (models, slot);
}

void
hz_models_free (HzModels *models)
{
  if (models == NULL)
    return;
  hz_models_shutdown (models);
  g_hash_table_unref (models->ids);
  g_hash_table_unref (models->slots);
  hz_registry_free (models->registry);
  g_main_context_unref (models->context);
  g_free (models);
}

gboolean
hz_models_add (HzModels *models, const char *id, const char *path, GError **error)
{
  GStatBuf st;
  if (g_stat (path, &st) != 0)
    {
      int e = errno;
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (e), "%s: %s", path,
                   g_strerror (e));
      return FALSE;
    }
  if (g_hash_table_contains (models->ids, id))
    {
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS,
                   "the model id '%s' is given twice", id);
      return FALSE;
    }
  /* the same file under another id: one model, two names */
  g_autofree char *canon = g_canonicalize_filename (path, NULL);
  GHashTableIter it;
  HzModelSlot *slot = NULL, *s;
  g_hash_table_iter_init (&it, models->slots);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &s))
    if (strcmp (s->path, canon) == 0)
      slot = s;
  if (slot == NULL)
    {
      HzModelParams mp;
      hz_model_params_init (&mp);
      mp.n_threads = models->n_threads;
      if (!hz_registry_add (models->registry, id, canon, &mp, error))
        return FALSE;
      slot = g_new0 (HzModelSlot, 1);
      slot->name = g_strdup (id);
      slot->path = g_steal_pointer (&canon);
      slot->mtime = (gint64) st.st_mtime;
      g_hash_table_insert (models->slots, slot->name, slot);
    }
  g_hash_table_insert (models->ids, g_strdup (id), slot);
  return TRUE;
}

gboolean
hz_models_add_loaded (HzModels *models, const char *id, const char *path, HzModel *model,
                      GDestroyNotify release, gpointer release_data, GError **error)
{
  GStatBuf st;
  if (g_hash_table_contains (models->ids, id))
    {
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS,
                   "the model id '%s' is given twice", id);
      return FALSE;
    }
  HzModelSlot *slot = g_new0 (HzModelSlot, 1);
  slot->name = g_strdup (id);
  slot->path = g_canonicalize_filename (path, NULL);
  slot->mtime = g_stat (path, &st) == 0 ? (gint64) st.st_mtime : 0;
  slot->given = model;
  slot->release = release;
  slot->release_data = release_data;
  g_hash_table_insert (models->slots, slot->name, slot);
  g_hash_table_insert (models->ids, g_strdup (id), slot);
  return TRUE;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

char **
hz_models_ids (HzModels *models, gint64 **created)
{
  g_autofree const char **keys = (const char **) g_hash_table_get_keys_as_array (models->ids, NULL);
  const guint n = g_hash_table_size (models->ids);
  qsort (keys, n, sizeof (char *), cmp_str);
  char **ids = g_new0 (char *, n + 1);
  gint64 *t = g_new0 (gint64, n + 1);
  for (guint i = 0; i < n; i++)
    {
      ids[i] = g_strdup (keys[i]);
      t[i] = ((HzModelSlot *) g_hash_table_lookup (models->ids, keys[i]))->mtime;
    }
  if (created)
    *created = t;
  else
    g_free (t);
  return ids;
}

HzModelSlot *
hz_models_lookup (HzModels *models, const char *id)
{
  return g_hash_table_lookup (models->ids, id);
}

guint
hz_models_n_loaded (HzModels *models)
{
  guint n = 0;
  GHashTableIter it;
  HzModelSlot *slot;
  g_hash_table_iter_init (&it, models->slots);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &slot))
    n += slot->state == SLOT_LOADED;
  return n;
}

/* ------------------------------------------------------------------ loading */

typedef struct {
  HzModels    *models;
  HzModelSlot *slot;
  HzModel     *model;
  HzServe     *serve;
  double       seconds;
} Load;

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  Load *ld = task_data;
  GError *error = NULL;
  const gint64 t0 = g_get_monotonic_time ();
  ld->model = ld->slot->given ? ld->slot->given
                              : hz_registry_acquire (ld->models->registry, ld->slot->name, &error);
  if (ld->model)
    {
      HzServeParams sp = ld->models->serve;
      sp.n_threads = ld->models->n_threads;
      ld->serve = hz_serve_new (ld->model, &sp, &error);
      if (ld->serve)
        hz_serve_start (ld->serve);
      else if (ld->slot->given)
        ld->model = NULL;
      else
        {
          hz_registry_release (ld->models->registry, g_steal_pointer (&ld->model));
          hz_registry_unload (ld->models->registry, ld->slot->name, NULL);
        }
    }
  ld->seconds = (g_get_monotonic_time () - t0) / 1e6;
  if (error)
    g_task_return_error (task, error);
  else
    g_task_return_boolean (task, TRUE);
}

static void
load_done (GObject *source, GAsyncResult *res, gpointer user_data)
{
  Load *ld = g_task_get_task_data (G_TASK (res));
  HzModels *models = ld->models;
  HzModelSlot *slot = ld->slot;
  g_autoptr (GError) error = NULL;
  g_task_propagate_boolean (G_TASK (res), &error);
  models->n_loading--;
  if (error == NULL && models->closing)
    {
      slot->model = g_steal_pointer (&ld->model);
      slot->serve = g_steal_pointer (&ld->serve);
      slot_unload (models, slot);
      error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED, "the server is stopping");
    }
  else if (error == NULL)
    {
      slot->model = g_steal_pointer (&ld->model);
      slot->serve = g_steal_pointer (&ld->serve);
      slot->state = SLOT_LOADED;
      hz_server_say (models->log, models->log_data, "model %s loaded in %.2f s (%s, %s)",
                     slot->name, ld->seconds, hz_model_arch (slot->model),
                     hz_model_type_name (slot->model));
    }
  else
    {
      slot->state = SLOT_UNLOADED;
      hz_server_say (models->log, models->log_data, "model %s: cannot load '%s': %s", slot->name,
                     slot->path, error->message);
    }
  g_autoptr (GArray) waiters = g_steal_pointer (&slot->waiters);
  if (error)
    slot->n_users -= waiters->len;
  slot->last_used = g_get_monotonic_time ();
  for (guint i = 0; i < waiters->len; i++)
    {
      const Waiter *w = &g_array_index (waiters, Waiter, i);
      w->func (slot->model, slot->serve, error, w->data);
    }
}

/* A loaded slot's waiter, called from the main loop (never from within hz_models_use). */
typedef struct {
  HzModelSlot *slot;
  Waiter       w;
} Ready;

static gboolean
ready_now (gpointer user_data)
{
  Ready *r = user_data;
  if (r->slot->state == SLOT_LOADED)
    {
      r->w.func (r->slot->model, r->slot->serve, NULL, r->w.data);
      return G_SOURCE_REMOVE;
    }
  /* unloaded meanwhile (the server is stopping) */
  g_autoptr (GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                  "the server is stopping");
  r->slot->n_users--;
  r->w.func (NULL, NULL, error, r->w.data);
  return G_SOURCE_REMOVE;
}

void
hz_models_use (HzModels *models, HzModelSlot *slot, HzModelsReadyFunc ready, gpointer user_data)
{
  slot->n_users++;
  slot->last_used = g_get_monotonic_time ();
  const Waiter w = { ready, user_data };
  if (slot->state == SLOT_LOADED || models->closing)
    {
      Ready *r = g_new (Ready, 1);
      *r = (Ready) { slot, w };
      GSource *idle = g_idle_source_new ();
      g_source_set_callback (idle, ready_now, r, g_free);
      g_source_set_priority (idle, G_PRIORITY_DEFAULT);
      g_source_attach (idle, models->context);
      g_source_unref (idle);
      return;
    }
  if (slot->waiters == NULL)
    slot->waiters = g_array_new (FALSE, FALSE, sizeof (Waiter));
  g_array_append_val (slot->waiters, w);
  if (slot->state == SLOT_LOADING)
    return;
  slot->state = SLOT_LOADING;
  models->n_loading++;
  Load *ld = g_new0 (Load, 1);
  ld->models = models;
  ld->slot = slot;
  GTask *task = g_task_new (NULL, NULL, load_done, NULL);
  g_task_set_task_data (task, ld, g_free);
  g_task_set_name (task, "hz-server-load-model");
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
}

void
hz_models_unuse (HzModels *models, HzModelSlot *slot)
{
  g_return_if_fail (slot->n_users > 0);
  slot->n_users--;
  slot->last_used = g_get_monotonic_time ();
}
