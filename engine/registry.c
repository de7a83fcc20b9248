/* engine/registry.c — HzRegistry: named models loaded on demand under a memory budget
 * (hanzo/serving.h).
 *
 * Each entry is UNLOADED, LOADING or LOADED. hz_registry_acquire loads outside the lock
 * (a model load reads and validates a whole GGUF): the entry is marked LOADING and other
 * acquirers of it wait on `cond`. Room for a load is made first, under the lock, by
 * unloading idle (use count 0) loaded models, least recently used first; the bytes of a
 * load in progress count against the budget from the start, so concurrent loads cannot
 * overshoot it together. Locks are pthread ones (visible to ThreadSanitizer).
 */
#include "hanzo/serving.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <string.h>

typedef enum { UNLOADED, LOADING, LOADED } EntryState;

typedef struct {
  char         *name, *path;
  HzModelParams params;
  EntryState    state;
  HzModel      *model;
  guint         users;
  guint64       bytes;      /* file size, set when loading starts */
  guint64       last_used;  /* registry clock at the last acquire / release */
} Entry;

struct _HzRegistry {
  pthread_mutex_t lock;
  pthread_cond_t  cond;
  guint64         budget, loaded_bytes, clock;
  guint           n_loads;
  GHashTable     *entries;  /* name -> Entry (owned) */
  GHashTable     *aliases;  /* alias -> name (owned strings) */
};

static void
entry_free (Entry *e)
{
  hz_model_free (e->model);
  g_free (e->name);
  g_free (e->path);
  g_free (e);
}

HzRegistry *
hz_registry_new (guint64 budget_bytes)
{
  HzRegistry *reg = g_new0 (HzRegistry, 1);
  pthread_mutex_init (&reg->lock, NULL);
  pthread_cond_init (&reg->cond, NULL);
  reg->budget = budget_bytes;
  reg->entries = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                        (GDestroyNotify) entry_free);
  reg->aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  return reg;
}

void
hz_registry_free (HzRegistry *reg)
{
  if (reg == NULL)
    return;
  GHashTableIter it;
  Entry *e;
  g_hash_table_iter_init (&it, reg->entries);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &e))
    if (e->users > 0)
      g_critical ("model '%s' is still in use (%u) while the registry is freed", e->name,
                  e->users);
  g_hash_table_unref (reg->entries);
  g_hash_table_unref (reg->aliases);
  pthread_mutex_destroy (&reg->lock);
  pthread_cond_destroy (&reg->cond);
  g_free (reg);
}

/* Entry of a name or alias; lock held. */
static Entry *
lookup (HzRegistry *reg, const char *name, GError **error)
{
  const char *target = g_hash_table_lookup (reg->aliases, name);
  Entry *e = g_hash_table_lookup (reg->entries, target ? target : name);
  if (e == NULL)
    g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_NOT_FOUND,
                 "no model named '%s' is registered", name);
  return e;
}

gboolean
hz_registry_add (HzRegistry *reg, const char *name, const char *path,
                 const HzModelParams *params, GError **error)
{
  g_return_val_if_fail (name != NULL && path != NULL, FALSE);
  pthread_mutex_lock (&reg->lock);
  if (g_hash_table_contains (reg->entries, name) || g_hash_table_contains (reg->aliases, name))
    {
      pthread_mutex_unlock (&reg->lock);
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS,
                   "a model or alias named '%s' is registered already", name);
      return FALSE;
    }
  Entry *e = g_new0 (Entry, 1);
  e->name = g_strdup (name);
  e->path = g_strdup (path);
  if (params)
    e->params = *params;
  else
    hz_model_params_init (&e->params);
  g_hash_table_insert (reg->entries, e->name, e);
  pthread_mutex_unlock (&reg->lock);
  return TRUE;
}

gboolean
hz_registry_alias (HzRegistry *reg, const char *alias, const char *name, GError **error)
{
  pthread_mutex_lock (&reg->lock);
  gboolean ok = FALSE;
  if (g_hash_table_contains (reg->entries, alias))
    g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS,
                 "'%s' is the name of a registered model", alias);
  else if (!g_hash_table_contains (reg->entries, name))
    g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_NOT_FOUND,
                 "no model named '%s' is registered", name);
  else
    {
      g_hash_table_insert (reg->aliases, g_strdup (alias), g_strdup (name));
      ok = TRUE;
    }
  pthread_mutex_unlock (&reg->lock);
  return ok;
}

/* Unload idle models, least recently used first, until `need` more bytes fit; lock held.
 * FALSE (nothing unloaded beyond what was needed) when the idle ones do not suffice. */
static gboolean
make_room (HzRegistry *reg, guint64 need, const Entry *except)
{
  if (reg->budget == 0)
    return TRUE;
  while (reg->loaded_bytes + need > reg->budget)
    {
      Entry *victim = NULL, *e;
      GHashTableIter it;
      g_hash_table_iter_init (&it, reg->entries);
      while (g_hash_table_iter_next (&it, NULL, (gpointer *) &e))
        if (e != except && e->state == LOADED && e->users == 0 &&
            (victim == NULL || e->last_used < victim->last_used))
          victim = e;
      if (victim == NULL)
        return FALSE;
      g_clear_pointer (&victim->model, hz_model_free);
      victim->state = UNLOADED;
      reg->loaded_bytes -= victim->bytes;
    }
  return TRUE;
}

HzModel *
hz_registry_acquire (HzRegistry *reg, const char *name, GError **error)
{
  pthread_mutex_lock (&reg->lock);
  Entry *e = lookup (reg, name, error);
  while (e && e->state == LOADING)
    {
      pthread_cond_wait (&reg->cond, &reg->lock);
      e = lookup (reg, name, error);  /* it may have been removed meanwhile */
    }
  if (e == NULL)
    {
      pthread_mutex_unlock (&reg->lock);
      return NULL;
    }
  if (e->state == LOADED)
    {
      e->users++;
      e->last_used = ++reg->clock;
      HzModel *m = e->model;
      pthread_mutex_unlock (&reg->lock);
      return m;
    }

  /* cold start: reserve the bytes, load without the lock */
  GStatBuf st;
  if (g_stat (e->path, &st) != 0)
    {
      pthread_mutex_unlock (&reg->lock);
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                   "cannot read model '%s' at %s: %s", e->name, e->path, g_strerror (errno));
      return NULL;
    }
  if (!make_room (reg, (guint64) st.st_size, e))
    {
      pthread_mutex_unlock (&reg->lock);
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_BUDGET,
                   "model '%s' (%" G_GUINT64_FORMAT " MiB) does not fit the memory budget of "
                   "%" G_GUINT64_FORMAT " MiB next to the models in use", e->name,
                   (guint64) st.st_size >> 20, reg->budget >> 20);
      return NULL;
    }
  e->state = LOADING;
  e->bytes = (guint64) st.st_size;
  reg->loaded_bytes += e->bytes;
  char *path = g_strdup (e->path);
  HzModelParams params = e->params;
  pthread_mutex_unlock (&reg->lock);

  HzModel *m = hz_model_load (path, &params, error);
  g_free (path);

  pthread_mutex_lock (&reg->lock);
  reg->n_loads++;
  if (m == NULL)
    {
      e->state = UNLOADED;
      reg->loaded_bytes -= e->bytes;
    }
  else
    {
      e->state = LOADED;
      e->model = m;
      e->users = 1;
      e->last_used = ++reg->clock;
    }
  pthread_cond_broadcast (&reg->cond);
  pthread_mutex_unlock (&reg->lock);
  return m;
}

void
hz_registry_release (HzRegistry *reg, HzModel *model)
{
  pthread_mutex_lock (&reg->lock);
  GHashTableIter it;
  Entry *e;
  g_hash_table_iter_init (&it, reg->entries);
  while (g_hash_table_iter_next (&it, NULL, (gpointer *) &e))
    if (e->model == model && e->users > 0)
      {
        e->users--;
        e->last_used = ++reg->clock;
        break;
      }
  pthread_mutex_unlock (&reg->lock);
}

/* Unload (and with `remove`, unregister) a model; lock held. */
static gboolean
unload_locked (HzRegistry *reg, const char *name, gboolean remove, GError **error)
{
  Entry *e = lookup (reg, name, error);
  while (e && e->state == LOADING)
    {
      pthread_cond_wait (&reg->cond, &reg->lock);
      e = lookup (reg, name, error);
    }
  if (e == NULL)
    return FALSE;
  if (e->users > 0)
    {
      g_set_error (error, HZ_SERVE_ERROR, HZ_SERVE_ERROR_BUSY,
                   "model '%s' is in use (%u users)", e->name, e->users);
      return FALSE;
    }
  if (e->state == LOADED)
    {
      g_clear_pointer (&e->model, hz_model_free);
      e->state = UNLOADED;
      reg->loaded_bytes -= e->bytes;
    }
  if (remove)
    {
      GHashTableIter it;
      const char *target;
      g_hash_table_iter_init (&it, reg->aliases);
      while (g_hash_table_iter_next (&it, NULL, (gpointer *) &target))
        if (strcmp (target, e->name) == 0)
          g_hash_table_iter_remove (&it);
      g_hash_table_remove (reg->entries, e->name);
    }
  return TRUE;
}

gboolean
hz_registry_unload (HzRegistry *reg, const char *name, GError **error)
{
  pthread_mutex_lock (&reg->lock);
  gboolean ok = unload_locked (reg, name, FALSE, error);
  pthread_mutex_unlock (&reg->lock);
  return ok;
}

gboolean
hz_registry_remove (HzRegistry *reg, const char *name, GError **error)
{
  pthread_mutex_lock (&reg->lock);
  gboolean ok = unload_locked (reg, name, TRUE, error);
  pthread_mutex_unlock (&reg->lock);
  return ok;
}

gboolean
hz_registry_is_loaded (HzRegistry *reg, const char *name)
{
  pthread_mutex_lock (&reg->lock);
  Entry *e = lookup (reg, name, NULL);
  gboolean loaded = e && e->state == LOADED;
  pthread_mutex_unlock (&reg->lock);
  return loaded;
}

guint64
hz_registry_loaded_bytes (HzRegistry *reg)
{
  pthread_mutex_lock (&reg->lock);
  guint64 b = reg->loaded_bytes;
  pthread_mutex_unlock (&reg->lock);
  return b;
}

guint
hz_registry_n_loads (HzRegistry *reg)
{
  pthread_mutex_lock (&reg->lock);
  guint n = reg->n_loads;
  pthread_mutex_unlock (&reg->lock);
  return n;
}

static gint
cmp_names (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

char **
hz_registry_list (HzRegistry *reg)
{
  pthread_mutex_lock (&reg->lock);
  GPtrArray *names = g_ptr_array_new ();
  GHashTableIter it;
  const char *name;
  g_hash_table_iter_init (&it, reg->entries);
  while (g_hash_table_iter_next (&it, (gpointer *) &name, NULL))
    g_ptr_array_add (names, g_strdup (name));
  pthread_mutex_unlock (&reg->lock);
  g_ptr_array_sort (names, cmp_names);
  g_ptr_array_add (names, NULL);
  return (char **) g_ptr_array_free (names, FALSE);
}
