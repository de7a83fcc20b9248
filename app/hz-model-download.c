/* hz-model-download.c — HzModelDownload (hz-model-download.h).
 *
 * A transfer is one GTask thread running hz_hub_download() with its own HzHub and store
 * connection (hz_hub_client_open). Its GCancellable is not the task's (the task
 * always returns what the Hub call returned, so a pause that comes as the last file is
 * renamed still reports success); cancelling makes hz_hub_download stop within one read
 * with HZ_HUB_ERROR_CANCELLED, keeping the .part files, which the thread then deletes when
 * the download was cancelled rather than paused. Progress goes through the object's
 * mutex-guarded fields and at most one main-context callback at a time.
 */
#include "hz-model-download.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "hanzo/egress.h"
#include "hz-hub-client.h"

#define SPEED_WINDOW_US (G_USEC_PER_SEC / 2)   /* speed samples at least this far apart */

struct _HzModelDownload {
  GObject          parent_instance;

  char            *repo, *revision, *dir;
  GPtrArray       *files;          /* HzHubFile*, owned; immutable (read by the thread) */
  char            *key, *quant, *file_name;

  HzDownloadState  state;
  guint64          done, total;
  double           speed;
  char            *message;
  HzModelEntry    *entry;

  /* the running transfer */
  GCancellable    *cancel;         /* NULL when none runs */
  gint             discard;        /* atomic: delete the .part files when it stops */
  gboolean         resume_pending; /* resume once the stopping transfer has stopped */
  char            *endpoint, *store_path;
  HzModelLibrary  *library;

  /* progress posted by a thread (under lock) */
  GMutex           lock;
  guint64          posted_done, posted_total;
  gboolean         posted;

  /* speed */
  gint64           sample_us;
  guint64          sample_done;
};

G_DEFINE_FINAL_TYPE (HzModelDownload, hz_model_download, G_TYPE_OBJECT)

enum { PROP_0, PROP_STATE, PROP_DONE, PROP_TOTAL, PROP_SPEED, PROP_MESSAGE, N_PROPS };
static GParamSpec *props[N_PROPS];

/* ------------------------------------------------------------------ state */

static void
set_state (HzModelDownload *self, HzDownloadState state)
{
  if (self->state == state)
    return;
  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_STATE]);
}

static void
set_message (HzModelDownload *self, const char *message)
{
  if (g_strcmp0 (self->message, message) == 0)
    return;
  g_free (self->message);
  self->message = g_strdup (message);
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_MESSAGE]);
}

static void
set_speed (HzModelDownload *self, double speed)
{
  if (self->speed == speed)
    return;
  self->speed = speed;
  g_object_notify_by_pspec (G_OBJECT (self), props[PROP_SPEED]);
}

/* Main context: take the progress a thread posted. The speed is the bytes over the last
 * half second or more, smoothed (weight 1/2 for the new sample). */
static gboolean
apply_progress (gpointer data)
{
  HzModelDownload *self = data;
  g_mutex_lock (&self->lock);
  guint64 done = self->posted_done, total = self->posted_total;
  self->posted = FALSE;
  g_mutex_unlock (&self->lock);

  gint64 now = g_get_monotonic_time ();
  if (self->state == HZ_DOWNLOAD_RUNNING)
    {
      if (self->sample_us == 0 || done < self->sample_done)
        {
          self->sample_us = now;
          self->sample_done = done;
        }
      else if (now - self->sample_us >= SPEED_WINDOW_US)
        {
          double rate = (double) (done - self->sample_done) * G_USEC_PER_SEC /
                        (double) (now - self->sample_us);
          set_speed (self, self->speed > 0 ? (self->speed + rate) / 2 : rate);
          self->sample_us = now;
          self->sample_done = done;
        }
    }
  g_object_freeze_notify (G_OBJECT (self));
  if (done != self->done)
    {
      self->done = done;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_DONE]);
    }
  if (total != 0 && total != self->total)
    {
      self->total = total;
      g_object_notify_by_pspec (G_OBJECT (self), props[PROP_TOTAL]);
    }
  g_object_thaw_notify (G_OBJECT (self));
  return G_SOURCE_REMOVE;
}

/* Any thread: post `done` of `total` bytes to the main context. */
static void
post_progress (HzModelDownload *self, guint64 done, guint64 total)
{
  g_mutex_lock (&self->lock);
  self->posted_done = done;
  self->posted_total = total;
  gboolean schedule = !self->posted;
  self->posted = TRUE;
  g_mutex_unlock (&self->lock);
  if (schedule)
    g_main_context_invoke_full (NULL, G_PRIORITY_DEFAULT, apply_progress, g_object_ref (self),
                                g_object_unref);
}

/* ------------------------------------------------------------------ file work (threads) */

static guint64
expected_total (GPtrArray *files)
{
  guint64 total = 0;
  for (guint i = 0; i < files->len; i++)
    total += ((HzHubFile *) files->pdata[i])->size;
  return total;
}

/* Delete the .part files of the set (a thread). */
static void
delete_parts (const char *dir, GPtrArray *files)
{
  for (guint i = 0; i < files->len; i++)
    {
      g_autofree char *part = hz_hub_part_path (dir, ((HzHubFile *) files->pdata[i])->path);
      if (g_unlink (part) != 0 && errno != ENOENT)
        g_warning ("downloads: cannot delete %s: %s", part, g_strerror (errno));
    }
}

static void
delete_parts_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  HzModelDownload *self = source;
  delete_parts (self->dir, self->files);
  g_task_return_boolean (task, TRUE);
}

static void
parts_deleted (GObject *source, GAsyncResult *result, gpointer data)
{
  set_state (HZ_MODEL_DOWNLOAD (source), HZ_DOWNLOAD_CANCELLED);
}

/* Post what the .part files hold (a thread): what a stopped download has, exactly (the
 * Hub's progress reports come at most every 100 ms). */
static void
post_parts (HzModelDownload *self)
{
  guint64 have = 0;
  for (guint i = 0; i < self->files->len; i++)
    {
      const HzHubFile *f = self->files->pdata[i];
      g_autofree char *part = hz_hub_part_path (self->dir, f->path);
      GStatBuf st;
      if (g_stat (part, &st) == 0)
        have += MIN ((guint64) st.st_size, f->size ? f->size : (guint64) st.st_size);
    }
  post_progress (self, have, expected_total (self->files));
}

static void
count_parts_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  post_parts (source);
  g_task_return_boolean (task, TRUE);
}

/* ------------------------------------------------------------------ the transfer (thread) */

typedef struct {
  char         *endpoint, *store_path;
  GCancellable *cancel;
} RunData;

static void
run_data_free (gpointer p)
{
  RunData *d = p;
  g_free (d->endpoint);
  g_free (d->store_path);
  g_clear_object (&d->cancel);
  g_free (d);
}

static void
on_hub_progress (guint64 done, guint64 total, const char *file, gpointer data)
{
  post_progress (data, done, total);
}

static gboolean
transfer (HzModelDownload *self, RunData *d, GError **error)
{
  g_autoptr(GPtrArray) refs =
    g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_ref_free);
  for (guint i = 0; i < self->files->len; i++)
    {
      const HzHubFile *f = self->files->pdata[i];
      HzHubFileRef *ref = hz_hub_file_ref_new (self->repo, self->revision, f->path, error);
      if (ref == NULL)
        return FALSE;
      g_ptr_array_add (refs, ref);
      if (!hz_hub_file_ref_set_expected (ref, f->size, f->sha256, f->git_oid, error))
        return FALSE;
    }
  if (g_mkdir_with_parents (self->dir, 0700) != 0)
    {
      int e = errno;
      g_set_error (error, HZ_HUB_ERROR, HZ_HUB_ERROR_IO, "%s: %s", self->dir, g_strerror (e));
      return FALSE;
    }
  g_autoptr(HzStore) store = NULL;
  g_autoptr(HzHub) hub = hz_hub_client_open (d->endpoint, d->store_path, &store, error);
  if (hub == NULL)
    return FALSE;
  GError *local = NULL;
  gboolean ok = hz_hub_download (hub, refs, self->dir, on_hub_progress, self, NULL, d->cancel,
                                 &local);
  if (!ok && hz_credentials_hub_token_after_refusal (hub, local))
    {
      g_clear_error (&local);
      ok = hz_hub_download (hub, refs, self->dir, on_hub_progress, self, NULL, d->cancel, &local);
    }
  if (!ok)
    g_propagate_error (error, local);
  return ok;
}

static void
run_thread (GTask *task, gpointer source, gpointer data, GCancellable *unused)
{
  HzModelDownload *self = source;
  GError *error = NULL;

  if (transfer (self, data, &error))
    g_task_return_boolean (task, TRUE);
  else
    {
      if (g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED) &&
          g_atomic_int_get (&self->discard))
        delete_parts (self->dir, self->files);
      else
        post_parts (self);
      g_task_return_error (task, error);
    }
}

static void
import_done (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr(HzModelDownload) self = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(HzModelEntry) entry = hz_model_library_import_finish (HZ_MODEL_LIBRARY (source),
                                                                  result, &error);
  if (entry == NULL)
    {
      g_autofree char *text = g_strdup_printf (
        _("Downloaded, but it cannot be used: %s The file stays in Hanzo’s models folder."),
        error->message);
      set_message (self, text);
      set_state (self, HZ_DOWNLOAD_FAILED);
      return;
    }
  g_set_object (&self->entry, entry);
  set_state (self, HZ_DOWNLOAD_DONE);
}

static void start_transfer (HzModelDownload *self);

static void
run_done (GObject *source, GAsyncResult *result, gpointer data)
{
  HzModelDownload *self = HZ_MODEL_DOWNLOAD (source);
  g_autoptr(GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);

  g_clear_object (&self->cancel);
  self->sample_us = 0;
  set_speed (self, 0);
  apply_progress (self);   /* the last posted figures, before the state says it stopped */
  if (ok)
    {
      g_autofree char *path = g_build_filename (self->dir, self->file_name, NULL);
      g_autoptr(GFile) file = g_file_new_for_path (path);
      set_message (self, NULL);
      set_state (self, HZ_DOWNLOAD_IMPORTING);
      hz_model_library_import_async (self->library, file, FALSE, NULL, import_done,
                                     g_object_ref (self));
      return;
    }
  if (g_error_matches (error, HZ_HUB_ERROR, HZ_HUB_ERROR_CANCELLED))
    set_state (self, g_atomic_int_get (&self->discard) ? HZ_DOWNLOAD_CANCELLED
                                                       : HZ_DOWNLOAD_PAUSED);
  else
    {
      g_autofree char *text = hz_hub_client_error_text (error);
      set_message (self, text);
      set_state (self, HZ_DOWNLOAD_FAILED);
    }
  if (self->resume_pending && self->state != HZ_DOWNLOAD_CANCELLED)
    start_transfer (self);
  self->resume_pending = FALSE;
}

static void
start_transfer (HzModelDownload *self)
{
  RunData *d = g_new0 (RunData, 1);
  d->endpoint = g_strdup (self->endpoint);
  d->store_path = g_strdup (self->store_path);
  d->cancel = g_cancellable_new ();
  self->cancel = g_object_ref (d->cancel);
  self->resume_pending = FALSE;
  self->sample_us = 0;
  set_message (self, NULL);
  set_state (self, HZ_DOWNLOAD_RUNNING);

  g_autoptr(GTask) task = g_task_new (self, NULL, run_done, NULL);
  g_task_set_source_tag (task, start_transfer);
  g_task_set_task_data (task, d, run_data_free);
  g_task_run_in_thread (task, run_thread);
}

/* ------------------------------------------------------------------ public API */

static HzHubFile *
file_copy (const HzHubFile *f)
{
  HzHubFile *c = g_new0 (HzHubFile, 1);
  c->path = g_strdup (f->path);
  c->size = f->size;
  c->sha256 = g_strdup (f->sha256);
  c->git_oid = g_strdup (f->git_oid);
  return c;
}

HzModelDownload *
hz_model_download_new (const char *repo, const char *revision, GPtrArray *files,
                       const char *dir)
{
  g_return_val_if_fail (files != NULL && files->len > 0 && dir != NULL, NULL);
  if (revision == NULL)
    revision = "main";
  for (guint i = 0; i < files->len; i++)
    {
      g_autoptr(HzHubFileRef) ref = hz_hub_file_ref_new (repo, revision,
                                                         ((HzHubFile *) files->pdata[i])->path,
                                                         NULL);
      if (ref == NULL)
        return NULL;
    }
  HzModelDownload *self = g_object_new (HZ_TYPE_MODEL_DOWNLOAD, NULL);
  const HzHubFile *first = files->pdata[0];
  self->repo = g_strdup (repo);
  self->revision = g_strdup (revision);
  self->dir = g_strdup (dir);
  self->files = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  for (guint i = 0; i < files->len; i++)
    g_ptr_array_add (self->files, file_copy (files->pdata[i]));
  self->key = g_strconcat (repo, "/", first->path, NULL);
  self->quant = hz_hub_quant_tag (first->path);
  self->file_name = g_path_get_basename (first->path);
  self->total = expected_total (self->files);
  return self;
}

HzModelDownload *
hz_model_download_new_from_variant (GVariant *v, const char *dir)
{
  if (v == NULL || !g_variant_is_of_type (v, G_VARIANT_TYPE ("(ssa(stss))")))
    return NULL;
  const char *repo, *revision;
  g_autoptr(GVariantIter) iter = NULL;
  g_variant_get (v, "(&s&sa(stss))", &repo, &revision, &iter);
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_hub_file_free);
  const char *path, *sha256, *oid;
  guint64 size;
  while (g_variant_iter_next (iter, "(&st&s&s)", &path, &size, &sha256, &oid))
    {
      HzHubFile f = { (char *) path, size, *sha256 ? (char *) sha256 : NULL,
                      *oid ? (char *) oid : NULL };
      g_ptr_array_add (files, file_copy (&f));
    }
  if (files->len == 0)
    return NULL;
  HzModelDownload *self = hz_model_download_new (repo, revision, files, dir);
  if (self == NULL)
    return NULL;
  g_autoptr(GTask) task = g_task_new (self, NULL, NULL, NULL);
  g_task_set_source_tag (task, hz_model_download_new_from_variant);
  g_task_run_in_thread (task, count_parts_thread);
  return self;
}

GVariant *
hz_model_download_serialize (HzModelDownload *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_DOWNLOAD (self), NULL);
  GVariantBuilder b;
  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(stss)"));
  for (guint i = 0; i < self->files->len; i++)
    {
      const HzHubFile *f = self->files->pdata[i];
      g_variant_builder_add (&b, "(stss)", f->path, f->size, f->sha256 ? f->sha256 : "",
                             f->git_oid ? f->git_oid : "");
    }
  return g_variant_new ("(ssa(stss))", self->repo, self->revision, &b);
}

void
hz_model_download_resume (HzModelDownload *self, const HzDownloadTarget *target)
{
  g_return_if_fail (HZ_IS_MODEL_DOWNLOAD (self));
  g_return_if_fail (target != NULL && HZ_IS_MODEL_LIBRARY (target->library));
  if (g_atomic_int_get (&self->discard) || self->state == HZ_DOWNLOAD_DONE ||
      self->state == HZ_DOWNLOAD_IMPORTING || self->state == HZ_DOWNLOAD_CANCELLED)
    return;
  g_free (self->endpoint);
  self->endpoint = g_strdup (target->endpoint);
  g_free (self->store_path);
  self->store_path = g_strdup (target->store_path);
  g_set_object (&self->library, target->library);
  if (self->cancel != NULL)
    {
      /* still running (resume pressed twice) or still stopping after a pause */
      self->resume_pending = g_cancellable_is_cancelled (self->cancel);
      return;
    }
  start_transfer (self);
}

void
hz_model_download_pause (HzModelDownload *self)
{
  g_return_if_fail (HZ_IS_MODEL_DOWNLOAD (self));
  self->resume_pending = FALSE;
  if (self->cancel != NULL)
    g_cancellable_cancel (self->cancel);   /* run_done says PAUSED once it stopped */
}

void
hz_model_download_cancel (HzModelDownload *self)
{
  g_return_if_fail (HZ_IS_MODEL_DOWNLOAD (self));
  if (self->state == HZ_DOWNLOAD_DONE || self->state == HZ_DOWNLOAD_IMPORTING ||
      self->state == HZ_DOWNLOAD_CANCELLED)
    return;
  g_atomic_int_set (&self->discard, TRUE);
  self->resume_pending = FALSE;
  if (self->cancel != NULL)
    {
      g_cancellable_cancel (self->cancel);   /* the thread deletes the .part files */
      return;
    }
  /* CANCELLED (and off the hub's list) once the files are gone, so that a new download of
   * the same file cannot start before then */
  g_autoptr(GTask) task = g_task_new (self, NULL, parts_deleted, NULL);
  g_task_set_source_tag (task, hz_model_download_cancel);
  g_task_run_in_thread (task, delete_parts_thread);
}

HzDownloadState
hz_model_download_get_state (HzModelDownload *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_DOWNLOAD (self), HZ_DOWNLOAD_FAILED);
  return self->state;
}

gboolean
hz_model_download_is_stopping (HzModelDownload *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_DOWNLOAD (self), FALSE);
  return self->cancel != NULL && g_cancellable_is_cancelled (self->cancel);
}

guint64 hz_model_download_get_done (HzModelDownload *self) { return self->done; }
guint64 hz_model_download_get_total (HzModelDownload *self) { return self->total; }
double hz_model_download_get_speed (HzModelDownload *self) { return self->speed; }
const char *hz_model_download_get_message (HzModelDownload *self) { return self->message; }
const char *hz_model_download_get_repo (HzModelDownload *self) { return self->repo; }
const char *hz_model_download_get_key (HzModelDownload *self) { return self->key; }
const char *hz_model_download_get_quant (HzModelDownload *self) { return self->quant; }
const char *hz_model_download_get_file_name (HzModelDownload *self) { return self->file_name; }
HzModelEntry *hz_model_download_get_entry (HzModelDownload *self) { return self->entry; }

const char *
hz_model_download_get_path (HzModelDownload *self)
{
  return ((HzHubFile *) self->files->pdata[0])->path;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_model_download_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  HzModelDownload *self = HZ_MODEL_DOWNLOAD (object);
  switch (id)
    {
    case PROP_STATE: g_value_set_int (value, self->state); break;
    case PROP_DONE: g_value_set_uint64 (value, self->done); break;
    case PROP_TOTAL: g_value_set_uint64 (value, self->total); break;
    case PROP_SPEED: g_value_set_double (value, self->speed); break;
    case PROP_MESSAGE: g_value_set_string (value, self->message); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
hz_model_download_finalize (GObject *object)
{
  HzModelDownload *self = HZ_MODEL_DOWNLOAD (object);
  g_free (self->repo);
  g_free (self->revision);
  g_free (self->dir);
  g_clear_pointer (&self->files, g_ptr_array_unref);
  g_free (self->key);
  g_free (self->quant);
  g_free (self->file_name);
  g_free (self->message);
  g_clear_object (&self->entry);
  g_clear_object (&self->cancel);
  g_free (self->endpoint);
  g_free (self->store_path);
  g_clear_object (&self->library);
  g_mutex_clear (&self->lock);
  G_OBJECT_CLASS (hz_model_download_parent_class)->finalize (object);
}

static void
hz_model_download_class_init (HzModelDownloadClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->get_property = hz_model_download_get_property;
  object_class->finalize = hz_model_download_finalize;
  const GParamFlags flags = G_PARAM_READABLE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY;
  props[PROP_STATE] = g_param_spec_int ("state", NULL, NULL, HZ_DOWNLOAD_RUNNING,
                                        HZ_DOWNLOAD_CANCELLED, HZ_DOWNLOAD_PAUSED, flags);
  props[PROP_DONE] = g_param_spec_uint64 ("done", NULL, NULL, 0, G_MAXUINT64, 0, flags);
  props[PROP_TOTAL] = g_param_spec_uint64 ("total", NULL, NULL, 0, G_MAXUINT64, 0, flags);
  props[PROP_SPEED] = g_param_spec_double ("speed", NULL, NULL, 0, G_MAXDOUBLE, 0, flags);
  props[PROP_MESSAGE] = g_param_spec_string ("message", NULL, NULL, NULL, flags);
  g_object_class_install_properties (object_class, N_PROPS, props);
}

static void
hz_model_download_init (HzModelDownload *self)
{
  g_mutex_init (&self->lock);
  self->state = HZ_DOWNLOAD_PAUSED;
}
