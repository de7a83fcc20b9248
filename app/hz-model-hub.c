/* hz-model-hub.c — HzModelHub (hz-model-hub.h). */
#include "hz-model-hub.h"

#include <glib/gi18n.h>

#include "hanzo/egress.h"

#define DOWNLOADS_KEY "model-downloads"

struct _HzModelHub {
  GObject         parent_instance;
  HzModelLibrary *library;
  GSettings      *settings;
  char           *store_path;
  GListStore     *downloads;   /* HzModelDownload*, newest first */
};

G_DEFINE_FINAL_TYPE (HzModelHub, hz_model_hub, G_TYPE_OBJECT)

char *
hz_model_hub_get_endpoint (HzModelHub *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_HUB (self), NULL);
  g_autofree char *set = g_settings_get_string (self->settings, "hub-endpoint");
  return *set != '\0' ? g_steal_pointer (&set) : hz_hub_default_endpoint ();
}

/* ------------------------------------------------------------------ search and listing */

/* One request of the channel that returns an array (a thread). */
typedef GPtrArray *(*HubCall) (HzHub *hub, const char *arg, GCancellable *cancellable,
                               GError **error);

typedef struct {
  char   *endpoint, *store_path, *arg;
  HubCall call;
} CallData;

static void
call_data_free (gpointer p)
{
  CallData *d = p;
  g_free (d->endpoint);
  g_free (d->store_path);
  g_free (d->arg);
  g_free (d);
}

static GPtrArray *
call_search (HzHub *hub, const char *query, GCancellable *cancellable, GError **error)
{
  return hz_hub_search (hub, query, HZ_MODEL_HUB_SEARCH_LIMIT, cancellable, error);
}

static GPtrArray *
call_list_files (HzHub *hub, const char *repo, GCancellable *cancellable, GError **error)
{
  return hz_hub_list_files (hub, repo, NULL, cancellable, error);
}

static void
call_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  CallData *d = data;
  GError *error = NULL;
  g_autoptr(HzStore) store = NULL;
  g_autoptr(HzHub) hub = hz_hub_client_open (d->endpoint, d->store_path, &store, &error);
  GPtrArray *result = hub ? d->call (hub, d->arg, cancellable, &error) : NULL;

  if (result == NULL && hub != NULL && hz_credentials_hub_token_after_refusal (hub, error))
    {
      g_clear_error (&error);
      result = d->call (hub, d->arg, cancellable, &error);
    }
  g_clear_pointer (&hub, hz_hub_free);   /* before its store */
  if (result != NULL)
    g_task_return_pointer (task, result, (GDestroyNotify) g_ptr_array_unref);
  else
    g_task_return_error (task, error);
}

static void
run_call (HzModelHub *self, HubCall call, const char *arg, gpointer tag,
          GCancellable *cancellable, GAsyncReadyCallback callback, gpointer data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, data);
  CallData *d = g_new0 (CallData, 1);
  d->endpoint = hz_model_hub_get_endpoint (self);
  d->store_path = g_strdup (self->store_path);
  d->arg = g_strdup (arg);
  d->call = call;
  g_task_set_source_tag (task, tag);
  g_task_set_task_data (task, d, call_data_free);
  g_task_run_in_thread (task, call_thread);
}

void
hz_model_hub_search_async (HzModelHub *self, const char *query, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer data)
{
  g_return_if_fail (HZ_IS_MODEL_HUB (self));
  run_call (self, call_search, query, hz_model_hub_search_async, cancellable, callback, data);
}

GPtrArray *
hz_model_hub_search_finish (HzModelHub *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

void
hz_model_hub_list_files_async (HzModelHub *self, const char *repo, GCancellable *cancellable,
                               GAsyncReadyCallback callback, gpointer data)
{
  g_return_if_fail (HZ_IS_MODEL_HUB (self));
  run_call (self, call_list_files, repo, hz_model_hub_list_files_async, cancellable, callback,
            data);
}

GPtrArray *
hz_model_hub_list_files_finish (HzModelHub *self, GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------ downloads */

/* Remember the downloads that are not finished (GSettings model-downloads). */
static void
save (HzModelHub *self)
{
  GVariantBuilder b;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->downloads));

  g_variant_builder_init (&b, G_VARIANT_TYPE ("a(ssa(stss))"));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelDownload) d = g_list_model_get_item (G_LIST_MODEL (self->downloads), i);
      HzDownloadState st = hz_model_download_get_state (d);
      if (st != HZ_DOWNLOAD_DONE && st != HZ_DOWNLOAD_CANCELLED)
        g_variant_builder_add_value (&b, hz_model_download_serialize (d));
    }
  g_settings_set_value (self->settings, DOWNLOADS_KEY, g_variant_builder_end (&b));
}

static void
take_off_list (HzModelHub *self, HzModelDownload *download)
{
  guint pos;
  if (g_list_store_find (self->downloads, download, &pos))
    g_list_store_remove (self->downloads, pos);
}

static void
on_state (HzModelDownload *download, GParamSpec *pspec, HzModelHub *self)
{
  if (hz_model_download_get_state (download) == HZ_DOWNLOAD_CANCELLED)
    take_off_list (self, download);
  save (self);
}

static void
add (HzModelHub *self, HzModelDownload *download, gboolean first)
{
  g_signal_connect_object (download, "notify::state", G_CALLBACK (on_state), self, 0);
  if (first)
    g_list_store_insert (self->downloads, 0, download);
  else
    g_list_store_append (self->downloads, download);
}

GListModel *
hz_model_hub_get_downloads (HzModelHub *self)
{
  g_return_val_if_fail (HZ_IS_MODEL_HUB (self), NULL);
  return G_LIST_MODEL (self->downloads);
}

HzModelDownload *
hz_model_hub_find (HzModelHub *self, const char *key)
{
  g_return_val_if_fail (HZ_IS_MODEL_HUB (self), NULL);
  guint n = g_list_model_get_n_items (G_LIST_MODEL (self->downloads));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelDownload) d = g_list_model_get_item (G_LIST_MODEL (self->downloads), i);
      if (g_strcmp0 (hz_model_download_get_key (d), key) == 0)
        return d;   /* the list keeps it */
    }
  return NULL;
}

void
hz_model_hub_resume (HzModelHub *self, HzModelDownload *download)
{
  g_return_if_fail (HZ_IS_MODEL_HUB (self));
  g_autofree char *endpoint = hz_model_hub_get_endpoint (self);
  HzDownloadTarget target = { endpoint, self->store_path, self->library };
  hz_model_download_resume (download, &target);
  save (self);
}

HzModelDownload *
hz_model_hub_download (HzModelHub *self, const char *repo, GPtrArray *files)
{
  g_return_val_if_fail (HZ_IS_MODEL_HUB (self), NULL);
  g_return_val_if_fail (files != NULL && files->len > 0, NULL);
  g_autofree char *key = g_strconcat (repo, "/", ((HzHubFile *) files->pdata[0])->path, NULL);
  HzModelDownload *known = hz_model_hub_find (self, key);
  if (known != NULL)
    {
      hz_model_hub_resume (self, known);
      return known;
    }
  g_autoptr(HzModelDownload) d = hz_model_download_new (repo, NULL, files,
                                                        hz_model_library_get_dir (self->library));
  if (d == NULL)
    return NULL;
  add (self, d, TRUE);
  hz_model_hub_resume (self, d);
  return d;
}

void
hz_model_hub_remove (HzModelHub *self, HzModelDownload *download)
{
  g_return_if_fail (HZ_IS_MODEL_HUB (self));
  switch (hz_model_download_get_state (download))
    {
    case HZ_DOWNLOAD_RUNNING:
    case HZ_DOWNLOAD_PAUSED:
    case HZ_DOWNLOAD_FAILED:
      hz_model_download_cancel (download);   /* → CANCELLED: on_state takes it off */
      break;
    case HZ_DOWNLOAD_DONE:
    case HZ_DOWNLOAD_CANCELLED:
      take_off_list (self, download);
      save (self);
      break;
    case HZ_DOWNLOAD_IMPORTING:
      break;   /* a moment: its files are being read */
    }
}

/* The downloads remembered by the last run, paused. */
static void
restore (HzModelHub *self)
{
  g_autoptr(GVariant) list = g_settings_get_value (self->settings, DOWNLOADS_KEY);
  GVariantIter iter;
  GVariant *v;

  g_variant_iter_init (&iter, list);
  while ((v = g_variant_iter_next_value (&iter)) != NULL)
    {
      g_autoptr(HzModelDownload) d =
        hz_model_download_new_from_variant (v, hz_model_library_get_dir (self->library));
      if (d == NULL)
        {
          g_autofree char *text = g_variant_print (v, FALSE);
          g_warning ("downloads: forgetting a remembered download that is not valid: %s", text);
        }
      else if (hz_model_hub_find (self, hz_model_download_get_key (d)) == NULL)
        add (self, d, FALSE);
      g_variant_unref (v);
    }
}

HzModelHub *
hz_model_hub_new (HzModelLibrary *library, GSettings *settings, const char *store_path)
{
  g_return_val_if_fail (HZ_IS_MODEL_LIBRARY (library), NULL);
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);
  HzModelHub *self = g_object_new (HZ_TYPE_MODEL_HUB, NULL);
  self->library = g_object_ref (library);
  self->settings = g_object_ref (settings);
  self->store_path = g_strdup (store_path);
  restore (self);
  return self;
}

/* ------------------------------------------------------------------ GObject */

static void
hz_model_hub_dispose (GObject *object)
{
  HzModelHub *self = HZ_MODEL_HUB (object);
  guint n = self->downloads ? g_list_model_get_n_items (G_LIST_MODEL (self->downloads)) : 0;

  /* running transfers stop (their .part kept: they resume at the next start) */
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(HzModelDownload) d = g_list_model_get_item (G_LIST_MODEL (self->downloads), i);
      g_signal_handlers_disconnect_by_data (d, self);
      hz_model_download_pause (d);
    }
  g_clear_object (&self->downloads);
  g_clear_object (&self->library);
  g_clear_object (&self->settings);
  G_OBJECT_CLASS (hz_model_hub_parent_class)->dispose (object);
}

static void
hz_model_hub_finalize (GObject *object)
{
  HzModelHub *self = HZ_MODEL_HUB (object);
  g_free (self->store_path);
  G_OBJECT_CLASS (hz_model_hub_parent_class)->finalize (object);
}

static void
hz_model_hub_class_init (HzModelHubClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = hz_model_hub_dispose;
  object_class->finalize = hz_model_hub_finalize;
}

static void
hz_model_hub_init (HzModelHub *self)
{
  self->downloads = g_list_store_new (HZ_TYPE_MODEL_DOWNLOAD);
}
