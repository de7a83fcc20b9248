/* server/server-models.h — the models a server offers (private to server/): ids, files,
 * and for each loaded model one HzServe (hanzo/serving.h) that every client of that
 * model shares (continuous batching, prefix cache).
 *
 * Models are registered in an HzRegistry and loaded on the first request that names them,
 * on a worker thread (the main loop keeps serving meanwhile; requests that arrive during
 * the load wait for it). A model nobody used for idle_unload seconds is unloaded (its
 * HzServe freed, the registry's copy dropped) and loads again on the next request. A file
 * named twice (two ids) is one model: the second id is an alias.
 *
 * Everything here is called on the server's main context, except that the loads run on
 * GTask worker threads. */
#pragma once

#include "hanzo/serving.h"
#include "hanzo-server.h"

G_BEGIN_DECLS

typedef struct _HzModels HzModels;
typedef struct _HzModelSlot HzModelSlot;

/** `serve` (copied; NULL: defaults) sizes each model's HzServe; n_threads is the compute
 *  threads per model (0: all cores); idle_unload_s 0 keeps models loaded. `log` may be
 *  NULL. */
HzModels *hz_models_new (const HzServeParams *serve, guint n_threads, guint idle_unload_s,
                         HzServerLogFunc log, gpointer log_data);
/** Waits for loads in progress, then frees every model's HzServe: requests still running
 *  on them end as cancelled (their on_done runs; what they queue for the main context is
 *  left to the caller to dispatch). Later uses fail. */
void      hz_models_shutdown (HzModels *models);
/** hz_models_shutdown() if not done, then frees everything. */
void      hz_models_free (HzModels *models);

/** Offer `path` as `id`. Errors: G_FILE_ERROR_NOENT (no such file), HZ_SERVE_ERROR_EXISTS
 *  (the id is taken). */
gboolean  hz_models_add (HzModels *models, const char *id, const char *path, GError **error);
/** Offer `model`, loaded by the caller from `path`, as `id`: its HzServe is made on the
 *  first request (and freed after idle_unload_s), the model itself is never loaded nor
 *  unloaded here; `release` (nullable) gets `release_data` when the slot is freed
 *  (hz_models_free), after which the model is not touched. Errors: HZ_SERVE_ERROR_EXISTS. */
gboolean  hz_models_add_loaded (HzModels *models, const char *id, const char *path,
                                HzModel *model, GDestroyNotify release, gpointer release_data,
                                GError **error);
/** The ids, sorted (g_strfreev), and in *created (nullable, g_free) each file's
 *  modification time in Unix seconds. */
char    **hz_models_ids (HzModels *models, gint64 **created);
/** The slot of an id, or NULL. */
HzModelSlot *hz_models_lookup (HzModels *models, const char *id);

/** Called on the main context when the model of a slot is ready (model and serve set,
 *  error NULL) or failed to load (error set). */
typedef void (*HzModelsReadyFunc) (HzModel *model, HzServe *serve, const GError *error,
                                   gpointer user_data);

/** Count one user of `slot` (it stays loaded until hz_models_unuse()) and call `ready`
 *  once it is loaded (loading it first if needed; never from within this call). After a
 *  failed load the use is already uncounted. */
void hz_models_use (HzModels *models, HzModelSlot *slot, HzModelsReadyFunc ready,
                    gpointer user_data);
void hz_models_unuse (HzModels *models, HzModelSlot *slot);

/** Number of models loaded now. */
guint hz_models_n_loaded (HzModels *models);

G_END_DECLS
