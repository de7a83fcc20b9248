/* hz-model-library.c — HzModelLibrary and HzModelEntry (see hz-model-library.h). */
#include "hz-model-library.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "quantize.h"

G_DEFINE_QUARK (hz-model-library-error-quark, hz_model_library_error)

#define MEASUREMENTS_FILE "measurements.ini"
#define MIN_MEASURED_TOKENS 8

/* ------------------------------------------------------------------ HzModelEntry */

struct _HzModelEntry {
  GObject      parent_instance;
  HzModelInfo *info;
  double       measured;
};

G_DEFINE_FINAL_TYPE (HzModelEntry, hz_model_entry, G_TYPE_OBJECT)

enum { ENTRY_PROP_0, ENTRY_PROP_NAME, ENTRY_PROP_PATH, ENTRY_PROP_MEASURED, N_ENTRY_PROPS };
static GParamSpec *entry_props[N_ENTRY_PROPS];

static HzModelEntry *
hz_model_entry_new (HzModelInfo *info)
{
  HzModelEntry *self = g_object_new (HZ_TYPE_MODEL_ENTRY, NULL);
  self->info = info;
  return self;
}

const HzModelInfo *
hz_model_entry_get_info (HzModelEntry *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (self), NULL);
  return self->info;
}

const char *
hz_model_entry_get_name (HzModelEntry *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (self), NULL);
  return self->info->name;
}

const char *
hz_model_entry_get_path (HzModelEntry *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (self), NULL);
  return self->info->path;
}

double
hz_model_entry_get_measured_tokens_per_s (HzModelEntry *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (self), 0);
  return self->measured;
}

static void
entry_set_measured (HzModelEntry *self, double value)
{
  if (self->measured == value)
    return;
  self->measured = value;
  g_object_notify_by_pspec (G_OBJECT (self), entry_props[ENTRY_PROP_MEASURED]);
}

static void
hz_model_entry_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  HzModelEntry *self = HZ_MODEL_ENTRY (object);

  switch (id)
    {
    case ENTRY_PROP_NAME:
      g_value_set_string (value, self->info->name);
      break;
    case ENTRY_PROP_PATH:
      g_value_set_string (value, self->info->path);
      break;
    case ENTRY_PROP_MEASURED:
      g_value_set_double (value, self->measured);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
hz_model_entry_finalize (GObject *object)
{
  hz_model_info_free (HZ_MODEL_ENTRY (object)->info);
  G_OBJECT_CLASS (hz_model_entry_parent_class)->finalize (object);
}

static void
hz_model_entry_class_init (HzModelEntryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_model_entry_get_property;
  object_class->finalize = hz_model_entry_finalize;
  entry_props[ENTRY_PROP_NAME] =
    g_param_spec_string ("name", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  entry_props[ENTRY_PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  entry_props[ENTRY_PROP_MEASURED] =
    g_param_spec_double ("measured-tokens-per-s", NULL, NULL, 0, G_MAXDOUBLE, 0,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_ENTRY_PROPS, entry_props);
}

static void
hz_model_entry_init (HzModelEntry *self)
{
}

/* ------------------------------------------------------------------ HzModelLibrary */

struct _HzModelLibrary {
  GObject       parent_instance;
  char         *dir;
  GListStore   *models;         /* HzModelEntry, by name */
  GHashTable   *outside;        /* canonical path -> HzModelEntry of a file outside dir */
  GKeyFile     *measurements;   /* [measurement_key()] tokens-per-s */
  gboolean      loaded;
  GCancellable *cancellable;    /* of the folder reads and saves */
};

G_DEFINE_FINAL_TYPE (HzModelLibrary, hz_model_library, G_TYPE_OBJECT)

enum { LIB_PROP_0, LIB_PROP_LOADED, N_LIB_PROPS };
static GParamSpec *lib_props[N_LIB_PROPS];

static int
compare_entries (gconstpointer a, gconstpointer b, gpointer data)
{
  const HzModelInfo *ia = HZ_MODEL_ENTRY ((gpointer) a)->info;
  const HzModelInfo *ib = HZ_MODEL_ENTRY ((gpointer) b)->info;
  int c = g_utf8_collate (ia->name, ib->name);
  return c != 0 ? c : g_strcmp0 (ia->path, ib->path);
}

/* The group of measurements.ini for the model at `path`: its file name when it is in the
 * folder, else "outside-" and the SHA-1 of its canonical path (a path may hold characters
 * that a key file's group name cannot). g_free. */
static char *
measurement_key (const char *dir, const char *path)
{
  g_autofree char *parent = g_path_get_dirname (path);
  g_autofree char *parent_canon = g_canonicalize_filename (parent, NULL);
  g_autofree char *dir_canon = g_canonicalize_filename (dir, NULL);
  if (g_str_equal (parent_canon, dir_canon))
    return g_path_get_basename (path);
  g_autofree char *canon = g_canonicalize_filename (path, NULL);
  g_autofree char *sum = g_compute_checksum_for_string (G_CHECKSUM_SHA1, canon, -1);
  return g_strconcat ("outside-", sum, NULL);
}

static void
apply_measurement (HzModelLibrary *self, HzModelEntry *entry)
{
  g_autofree char *key = measurement_key (self->dir, entry->info->path);
  double v = g_key_file_get_double (self->measurements, key, "tokens-per-s", NULL);
  entry_set_measured (entry, v > 0 ? v : 0);
}

static HzModelEntry *
add_info (HzModelLibrary *self, HzModelInfo *info)
{
  HzModelEntry *entry = hz_model_entry_new (info);
  apply_measurement (self, entry);
  g_list_store_insert_sorted (self->models, entry, compare_entries, NULL);
  return entry;
}

/* ---- reading the folder (thread) ---- */

typedef struct {
  GPtrArray *infos;   /* HzModelInfo* */
  GKeyFile  *measurements;
} ScanResult;

static void
scan_result_free (gpointer p)
{
  ScanResult *r = p;
  g_ptr_array_unref (r->infos);
  g_key_file_unref (r->measurements);
  g_free (r);
}

static void
scan_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const char *dir = task_data;
  ScanResult *r = g_new0 (ScanResult, 1);
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  r->infos = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_model_info_free);
  r->measurements = g_key_file_new ();
  g_autofree char *mpath = g_build_filename (dir, MEASUREMENTS_FILE, NULL);
  g_key_file_load_from_file (r->measurements, mpath, G_KEY_FILE_NONE, NULL);
  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      if (!g_str_has_suffix (name, ".gguf") || name[0] == '.')
        continue;
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_autoptr(GError) error = NULL;
      HzModelInfo *info = hz_model_info_read (path, &error);
      if (info != NULL)
        g_ptr_array_add (r->infos, info);
      else
        g_message ("models: skipping %s: %s", path, error->message);
    }
  g_task_return_pointer (task, r, scan_result_free);
}

static void
scan_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(GError) error = NULL;
  ScanResult *r = g_task_propagate_pointer (G_TASK (result), &error);

  if (r == NULL)
    return;  /* cancelled: the library is gone */
  HzModelLibrary *self = HZ_MODEL_LIBRARY (source);
  g_key_file_unref (self->measurements);
  self->measurements = g_key_file_ref (r->measurements);
  g_list_store_remove_all (self->models);
  for (guint i = 0; i < r->infos->len; i++)
    g_object_unref (add_info (self, g_steal_pointer (&r->infos->pdata[i])));
  GHashTableIter iter;
  gpointer entry;
  g_hash_table_iter_init (&iter, self->outside);
  while (g_hash_table_iter_next (&iter, NULL, &entry))
    apply_measurement (self, entry);
  g_ptr_array_set_free_func (r->infos, NULL);
  scan_result_free (r);
  if (!self->loaded)
    {
      self->loaded = TRUE;
      g_object_notify_by_pspec (G_OBJECT (self), lib_props[LIB_PROP_LOADED]);
    }
}

void
hz_model_library_reload (HzModelLibrary *self)
{
  g_return_if_fail (HZ_IS_MODEL_LIBRARY (self));
  g_autoptr(GTask) task = g_task_new (self, self->cancellable, scan_done, NULL);
  g_task_set_source_tag (task, hz_model_library_reload);
  g_task_set_task_data (task, g_strdup (self->dir), g_free);
  g_task_run_in_thread (task, scan_thread);
}

/* ---- public ---- */

HzModelLibrary *
hz_model_library_new (const char *dir)
{
  HzModelLibrary *self = g_object_new (HZ_TYPE_MODEL_LIBRARY, NULL);
  self->dir = dir ? g_strdup (dir)
                  : g_build_filename (g_get_user_data_dir (), "hanzo", "models", NULL);
  hz_model_library_reload (self);
  return self;
}

const char *
hz_model_library_get_dir (HzModelLibrary *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), NULL);
  return self->dir;
}

GListModel *
hz_model_library_get_models (HzModelLibrary *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), NULL);
  return G_LIST_MODEL (self->models);
}

gboolean
hz_model_library_is_loaded (HzModelLibrary *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), FALSE);
  return self->loaded;
}

HzModelEntry *
hz_model_library_find (HzModelLibrary *self, const char *path)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), NULL);
  if (path == NULL || *path == '\0')
    return NULL;
  g_autofree char *want = g_canonicalize_filename (path, NULL);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->models));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelEntry) e = g_list_model_get_item (G_LIST_MODEL (self->models), i);
      g_autofree char *have = g_canonicalize_filename (e->info->path, NULL);
      if (g_str_equal (want, have))
        return e;  /* the store keeps its reference */
    }
  return NULL;
}

/* A path in `dir` named `stem` + `suffix` + ".gguf" that does not exist yet (g_free). */
static char *
free_name (const char *dir, const char *stem, const char *suffix)
{
  for (guint i = 1; i < 10000; i++)
    {
      g_autofree char *name = i == 1 ? g_strdup_printf ("%s%s.gguf", stem, suffix)
                                     : g_strdup_printf ("%s%s-%u.gguf", stem, suffix, i);
      char *path = g_build_filename (dir, name, NULL);
      if (!g_file_test (path, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        return path;
      g_free (path);
    }
  return NULL;
}

static char *
file_stem (const char *path)
{
  char *base = g_path_get_basename (path);
  if (g_str_has_suffix (base, ".gguf"))
    base[strlen (base) - 5] = '\0';
  return base;
}

static gboolean
check_supported (const HzModelInfo *info, GError **error)
{
  g_autofree char *reason = hz_model_info_unsupported_reason (info);
  g_autofree char *base = g_path_get_basename (info->path);

  if (reason == NULL)
    return TRUE;
  g_set_error (error, HZ_MODEL_LIBRARY_ERROR, HZ_MODEL_LIBRARY_ERROR_UNSUPPORTED,
               /* TRANSLATORS: %s: a file name, then the reason */
               _("Hanzo cannot run “%s”. %s"), base, reason);
  return FALSE;
}

/* ---- import (thread) ---- */

/* Return the HzModelInfo of `path` from `task` (its error when the header is unusable). */
static void
task_return_info (GTask *task, const char *path)
{
  GError *error = NULL;
  HzModelInfo *info = hz_model_info_read (path, &error);
  if (info == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, info, (GDestroyNotify) hz_model_info_free);
}

typedef struct {
  char    *source;
  char    *dir;
  gboolean link;
} ImportData;

static void
import_data_free (gpointer p)
{
  ImportData *d = p;
  g_free (d->source);
  g_free (d->dir);
  g_free (d);
}

static void
import_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ImportData *d = task_data;
  GError *error = NULL;
  g_autoptr(HzModelInfo) info = hz_model_info_read (d->source, &error);

  if (info == NULL || !check_supported (info, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  g_autofree char *src_dir = g_path_get_dirname (d->source);
  g_autofree char *src_canon = g_canonicalize_filename (src_dir, NULL);
  g_autofree char *dir_canon = g_canonicalize_filename (d->dir, NULL);
  if (g_str_equal (src_canon, dir_canon))
    {
      g_task_return_pointer (task, g_steal_pointer (&info), (GDestroyNotify) hz_model_info_free);
      return;
    }
  if (g_mkdir_with_parents (d->dir, 0700) != 0)
    {
      int e = errno;
      g_task_return_new_error (task, G_IO_ERROR, g_io_error_from_errno (e), "%s: %s",
                               d->dir, g_strerror (e));
      return;
    }

  g_autofree char *stem = file_stem (d->source);
  g_autofree char *dest = free_name (d->dir, stem, "");
  g_autoptr(GFile) src = g_file_new_for_path (d->source);
  g_autoptr(GFile) dst = g_file_new_for_path (dest);
  gboolean ok;
  if (d->link)
    {
      g_autofree char *abs = g_canonicalize_filename (d->source, NULL);
      ok = g_file_make_symbolic_link (dst, abs, cancellable, &error);
    }
  else
    {
      /* copy under a hidden name, then rename: the folder never shows half a file */
      g_autofree char *tmp_name = g_strdup_printf (".importing-%s.gguf", stem);
      g_autofree char *tmp_path = g_build_filename (d->dir, tmp_name, NULL);
      g_autoptr(GFile) tmp = g_file_new_for_path (tmp_path);
      ok = g_file_copy (src, tmp, G_FILE_COPY_OVERWRITE, cancellable, NULL, NULL, &error) &&
           g_file_move (tmp, dst, G_FILE_COPY_NONE, cancellable, NULL, NULL, &error);
      if (!ok)
        g_file_delete (tmp, NULL, NULL);
    }
  if (!ok)
    {
      g_task_return_error (task, error);
      return;
    }
  task_return_info (task, dest);
}

void
hz_model_library_import_async (HzModelLibrary *self, GFile *file, gboolean link,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer data)
{
  g_return_if_fail (HZ_IS_MODEL_LIBRARY (self));
  g_return_if_fail (G_IS_FILE (file));

  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, data);
  g_task_set_source_tag (task, hz_model_library_import_async);
  char *path = g_file_get_path (file);
  if (path == NULL)
    {
      g_autofree char *uri = g_file_get_uri (file);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                               _("“%s” is not a local file."), uri);
      return;
    }
  ImportData *d = g_new0 (ImportData, 1);
  d->source = path;
  d->dir = g_strdup (self->dir);
  d->link = link;
  g_task_set_task_data (task, d, import_data_free);
  g_task_run_in_thread (task, import_thread);
}

/* Add the info a task returned (replacing an entry of the same path). */
static HzModelEntry *
finish_with_info (HzModelLibrary *self, GAsyncResult *result, GError **error)
{
  HzModelInfo *info = g_task_propagate_pointer (G_TASK (result), error);
  if (info == NULL)
    return NULL;
  HzModelEntry *old = hz_model_library_find (self, info->path);
  guint pos;
  if (old != NULL && g_list_store_find (self->models, old, &pos))
    g_list_store_remove (self->models, pos);
  return add_info (self, info);
}

HzModelEntry *
hz_model_library_import_finish (HzModelLibrary *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return finish_with_info (self, result, error);
}

/* ---- progress from a worker thread to the caller's main context ---- */

/* Shared by the worker (which posts fractions) and the main context (which shows them);
 * `finished` is set on the main context before the task's callback runs. */
typedef struct {
  gatomicrefcount      ref;
  GMutex               lock;
  double               fraction;
  gboolean             queued;    /* a dispatch is waiting in `context` */
  gboolean             finished;  /* main context only */
  GMainContext        *context;
  HzModelProgressFunc  func;
  gpointer             func_data;
  GAsyncReadyCallback  callback;  /* the caller's */
  gpointer             callback_data;
} ProgressRelay;

static ProgressRelay *
progress_relay_new (HzModelProgressFunc func, gpointer func_data,
                    GAsyncReadyCallback callback, gpointer callback_data)
{
  ProgressRelay *r = g_new0 (ProgressRelay, 1);
  g_atomic_ref_count_init (&r->ref);
  g_mutex_init (&r->lock);
  r->context = g_main_context_ref_thread_default ();
  r->func = func;
  r->func_data = func_data;
  r->callback = callback;
  r->callback_data = callback_data;
  return r;
}

static ProgressRelay *
progress_relay_ref (ProgressRelay *r)
{
  g_atomic_ref_count_inc (&r->ref);
  return r;
}

static void
progress_relay_unref (gpointer p)
{
  ProgressRelay *r = p;
  if (!g_atomic_ref_count_dec (&r->ref))
    return;
  g_mutex_clear (&r->lock);
  g_main_context_unref (r->context);
  g_free (r);
}

static gboolean
progress_relay_dispatch (gpointer p)
{
  ProgressRelay *r = p;
  g_mutex_lock (&r->lock);
  double fraction = r->fraction;
  r->queued = FALSE;
  g_mutex_unlock (&r->lock);
  if (!r->finished && r->func != NULL)
    r->func (fraction, NULL, r->func_data);
  return G_SOURCE_REMOVE;
}

/* The engine's progress callback (worker thread). */
static void
progress_relay_post (double fraction, gpointer p)
{
  ProgressRelay *r = p;
  g_mutex_lock (&r->lock);
  r->fraction = fraction;
  gboolean schedule = !r->queued;
  r->queued = TRUE;
  g_mutex_unlock (&r->lock);
  if (schedule)
    g_main_context_invoke_full (r->context, G_PRIORITY_DEFAULT, progress_relay_dispatch,
                                progress_relay_ref (r), progress_relay_unref);
}

/* The task's callback: no progress after it, then the caller's callback. */
static void
progress_relay_done (GObject *source, GAsyncResult *result, gpointer p)
{
  ProgressRelay *r = p;
  r->finished = TRUE;
  if (r->callback != NULL)
    r->callback (source, result, r->callback_data);
  progress_relay_unref (r);
}

/* ---- quantize (thread) ---- */

typedef struct {
  char          *source;
  char          *type;
  char          *dir;
  ProgressRelay *relay;
} QuantData;

static void
quant_data_free (gpointer p)
{
  QuantData *d = p;
  g_free (d->source);
  g_free (d->type);
  g_free (d->dir);
  progress_relay_unref (d->relay);
  g_free (d);
}

static void
quantize_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  QuantData *d = task_data;
  GError *error = NULL;

  if (g_mkdir_with_parents (d->dir, 0700) != 0)
    {
      int e = errno;
      g_set_error (&error, G_IO_ERROR, g_io_error_from_errno (e), "%s: %s", d->dir,
                   g_strerror (e));
      if (g_task_set_return_on_cancel (task, FALSE))
        g_task_return_error (task, error);
      else
        g_error_free (error);
      return;
    }
  g_autofree char *stem = file_stem (d->source);
  g_autofree char *suffix = g_strconcat ("-", d->type, NULL);
  g_autofree char *dest = free_name (d->dir, stem, suffix);
  HzQuantizeParams p;
  hz_quantize_params_init (&p);
  p.ftype = hz_ftype_from_name (d->type)->ftype;
  p.cancellable = cancellable;   /* Cancel stops the engine at the next tensor */
  p.progress = progress_relay_post;
  p.progress_data = d->relay;
  /* the writer renames "<dest>.tmp" into place: the folder never shows half a file */
  gboolean ok = hz_quantize_file (d->source, dest, &p, NULL, &error);

  if (!g_task_set_return_on_cancel (task, FALSE))
    {
      /* Already returned G_IO_ERROR_CANCELLED: drop what the engine made. */
      if (ok)
        g_unlink (dest);
      g_clear_error (&error);
      return;
    }
  if (!ok)
    {
      g_task_return_error (task, error);
      return;
    }
  /* From here a cancel no longer returns at once: hz_model_library_quantize_finish sees
   * the result and removes the file (GTask would only drop the info). */
  g_task_set_check_cancellable (task, FALSE);
  HzModelInfo *info = hz_model_info_read (dest, &error);
  if (info == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, info, (GDestroyNotify) hz_model_info_free);
}

void
hz_model_library_quantize_async (HzModelLibrary *self, HzModelEntry *entry,
                                 const char *type_name, GCancellable *cancellable,
                                 HzModelProgressFunc progress, gpointer progress_data,
                                 GAsyncReadyCallback callback, gpointer data)
{
  g_return_if_fail (HZ_IS_MODEL_LIBRARY (self));
  g_return_if_fail (HZ_IS_MODEL_ENTRY (entry));
  g_return_if_fail (type_name != NULL);

  ProgressRelay *relay = progress_relay_new (progress, progress_data, callback, data);
  g_autoptr(GTask) task = g_task_new (self, cancellable, progress_relay_done, relay);
  g_task_set_source_tag (task, hz_model_library_quantize_async);
  const HzFtypeInfo *ft = hz_ftype_from_name (type_name);
  if (ft == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               _("Unknown quantization “%s”."), type_name);
      return;
    }
  QuantData *d = g_new0 (QuantData, 1);
  d->source = g_strdup (entry->info->path);
  d->type = g_strdup (ft->name);
  d->dir = g_strdup (self->dir);
  d->relay = progress_relay_ref (relay);
  g_task_set_task_data (task, d, quant_data_free);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, quantize_thread);
}

HzModelEntry *
hz_model_library_quantize_finish (HzModelLibrary *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  /* Cancelled after the engine finished (the result was on its way): the file it made
   * goes too, so that a cancelled quantization never leaves anything behind. */
  GCancellable *cancellable = g_task_get_cancellable (G_TASK (result));
  if (cancellable != NULL && g_cancellable_is_cancelled (cancellable))
    {
      g_autoptr(GError) ignored = NULL;
      HzModelInfo *info = g_task_propagate_pointer (G_TASK (result), &ignored);
      if (info != NULL)
        {
          g_unlink (info->path);
          hz_model_info_free (info);
        }
      g_cancellable_set_error_if_cancelled (cancellable, error);
      return NULL;
    }
  return finish_with_info (self, result, error);
}

/* ---- delete, measurements ---- */

/* GCompareDataFunc over HzModelEntry** by the overhead their measurement implies. */
static int
compare_overheads (gconstpointer a, gconstpointer b, gpointer data)
{
  const double bandwidth = *(const double *) data;
  const HzModelEntry *ea = *(HzModelEntry *const *) a, *eb = *(HzModelEntry *const *) b;
  double oa = hz_speed_overhead_from_measurement (ea->info->active_bytes, bandwidth, ea->measured);
  double ob = hz_speed_overhead_from_measurement (eb->info->active_bytes, bandwidth, eb->measured);
  return (oa > ob) - (oa < ob);
}

gboolean
hz_model_library_delete (HzModelLibrary *self, HzModelEntry *entry, GError **error)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), FALSE);
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (entry), FALSE);
  guint pos;

  if (!g_list_store_find (self->models, entry, &pos))
    {
      g_set_error (error, HZ_MODEL_LIBRARY_ERROR, HZ_MODEL_LIBRARY_ERROR_NOT_FOUND,
                   _("“%s” is not in the model library."), entry->info->name);
      return FALSE;
    }
  g_autoptr(GFile) file = g_file_new_for_path (entry->info->path);
  g_autoptr(GError) local = NULL;
  if (!g_file_delete (file, NULL, &local) &&
      !g_error_matches (local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  g_autofree char *key = measurement_key (self->dir, entry->info->path);
  g_key_file_remove_group (self->measurements, key, NULL);
  g_list_store_remove (self->models, pos);
  return TRUE;
}

static void
save_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(GError) error = NULL;
  if (!g_file_replace_contents_finish (G_FILE (source), result, NULL, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_warning ("models: cannot save the measurements: %s", error->message);
}

void
hz_model_library_record_speed (HzModelLibrary *self, const char *path, double tokens_per_s,
                               gint64 n_tokens)
{
  g_return_if_fail (HZ_IS_MODEL_LIBRARY (self));

  if (path == NULL || *path == '\0' || n_tokens < MIN_MEASURED_TOKENS || !(tokens_per_s > 0))
    return;
  g_autofree char *key = measurement_key (self->dir, path);
  double old = g_key_file_get_double (self->measurements, key, "tokens-per-s", NULL);
  double v = old > 0 ? old + (tokens_per_s - old) / 8 : tokens_per_s;
  g_key_file_set_double (self->measurements, key, "tokens-per-s", v);
  HzModelEntry *entry = hz_model_library_find (self, path);
  if (entry == NULL)
    {
      g_autofree char *canon = g_canonicalize_filename (path, NULL);
      entry = g_hash_table_lookup (self->outside, canon);
    }
  if (entry != NULL)
    entry_set_measured (entry, v);

  if (g_mkdir_with_parents (self->dir, 0700) != 0)
    {
      g_warning ("models: cannot save the measurements: %s: %s", self->dir, g_strerror (errno));
      return;
    }
  gsize len;
  g_autofree char *data = g_key_file_to_data (self->measurements, &len, NULL);
  g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&data), len);
  g_autofree char *mpath = g_build_filename (self->dir, MEASUREMENTS_FILE, NULL);
  g_autoptr(GFile) file = g_file_new_for_path (mpath);
  g_file_replace_contents_bytes_async (file, bytes, NULL, FALSE, G_FILE_CREATE_PRIVATE,
                                       self->cancellable, save_done, NULL);
}

/* ---- any model file, in the folder or not ---- */

static void
lookup_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  task_return_info (task, task_data);
}

void
hz_model_library_lookup_async (HzModelLibrary *self, const char *path,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer data)
{
  g_return_if_fail (HZ_IS_MODEL_LIBRARY (self));
  g_return_if_fail (path != NULL);

  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, data);
  g_task_set_source_tag (task, hz_model_library_lookup_async);
  g_autofree char *canon = g_canonicalize_filename (path, NULL);
  HzModelEntry *known = hz_model_library_find (self, path);
  if (known == NULL)
    known = g_hash_table_lookup (self->outside, canon);
  if (known != NULL)
    {
      g_task_return_pointer (task, g_object_ref (known), g_object_unref);
      return;
    }
  g_task_set_task_data (task, g_steal_pointer (&canon), g_free);
  g_task_run_in_thread (task, lookup_thread);
}

HzModelEntry *
hz_model_library_lookup_finish (HzModelLibrary *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  GTask *task = G_TASK (result);
  const char *canon = g_task_get_task_data (task);
  if (canon == NULL)
    return g_task_propagate_pointer (task, error);  /* known already */
  HzModelInfo *info = g_task_propagate_pointer (task, error);
  if (info == NULL)
    return NULL;
  /* meanwhile imported, or looked up twice: keep the first entry */
  HzModelEntry *known = hz_model_library_find (self, canon);
  if (known == NULL)
    known = g_hash_table_lookup (self->outside, canon);
  if (known != NULL)
    {
      hz_model_info_free (info);
      return g_object_ref (known);
    }
  HzModelEntry *entry = hz_model_entry_new (info);
  apply_measurement (self, entry);
  g_hash_table_insert (self->outside, g_strdup (canon), g_object_ref (entry));
  return entry;
}

gboolean
hz_model_library_speed_model (HzModelLibrary *self, HzModelEntry *entry, double bandwidth,
                              HzSpeedModel *speed, HzModelEntry **from)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (self), FALSE);
  g_return_val_if_fail (HZ_IS_MODEL_ENTRY (entry), FALSE);

  speed->bandwidth = bandwidth;
  speed->overhead_s = 0;
  if (from != NULL)
    *from = NULL;
  if (!(bandwidth > 0))
    return FALSE;
  HzModelEntry *source = entry->measured > 0 ? entry : NULL;
  if (source == NULL)
    {
      /* the measured file of the same shape whose overhead is the median */
      g_autoptr(GPtrArray) measured = g_ptr_array_new ();
      guint n = g_list_model_get_n_items (G_LIST_MODEL (self->models));
      for (guint i = 0; i < n; i++)
        {
          HzModelEntry *e = g_list_model_get_item (G_LIST_MODEL (self->models), i);
          if (e->measured > 0 && hz_model_info_same_shape (e->info, entry->info))
            g_ptr_array_add (measured, e);
          g_object_unref (e);  /* the store keeps its reference */
        }
      GHashTableIter iter;
      gpointer e;
      g_hash_table_iter_init (&iter, self->outside);
      while (g_hash_table_iter_next (&iter, NULL, &e))
        if (HZ_MODEL_ENTRY (e)->measured > 0 &&
            hz_model_info_same_shape (HZ_MODEL_ENTRY (e)->info, entry->info))
          g_ptr_array_add (measured, e);
      if (measured->len == 0)
        return FALSE;
      g_ptr_array_sort_with_data (measured, compare_overheads, &bandwidth);
      source = measured->pdata[measured->len / 2];
    }
  speed->overhead_s = hz_speed_overhead_from_measurement (source->info->active_bytes, bandwidth,
                                                          source->measured);
  if (from != NULL)
    *from = source;
  return TRUE;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_model_library_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  HzModelLibrary *self = HZ_MODEL_LIBRARY (object);

  switch (id)
    {
    case LIB_PROP_LOADED:
      g_value_set_boolean (value, self->loaded);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
hz_model_library_dispose (GObject *object)
{
  HzModelLibrary *self = HZ_MODEL_LIBRARY (object);

  g_cancellable_cancel (self->cancellable);
  G_OBJECT_CLASS (hz_model_library_parent_class)->dispose (object);
}

static void
hz_model_library_finalize (GObject *object)
{
  HzModelLibrary *self = HZ_MODEL_LIBRARY (object);

  g_free (self->dir);
  g_clear_object (&self->models);
  g_clear_pointer (&self->outside, g_hash_table_unref);
  g_clear_object (&self->cancellable);
  g_key_file_unref (self->measurements);
  G_OBJECT_CLASS (hz_model_library_parent_class)->finalize (object);
}

static void
hz_model_library_class_init (HzModelLibraryClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = hz_model_library_get_property;
  object_class->dispose = hz_model_library_dispose;
  object_class->finalize = hz_model_library_finalize;
  lib_props[LIB_PROP_LOADED] =
    g_param_spec_boolean ("loaded", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_LIB_PROPS, lib_props);
}

static void
hz_model_library_init (HzModelLibrary *self)
{
  self->models = g_list_store_new (HZ_TYPE_MODEL_ENTRY);
  self->outside = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->measurements = g_key_file_new ();
  self->cancellable = g_cancellable_new ();
}
