/* hz-app-context.h — HzAppContext: the app-wide objects every window of Hanzo Desktop
 * shares, without GTK (issue 26 item 5: the windows take this instead of calling back
 * into HzApplication, which creates them).
 *
 * Opened by hz_app_context_new() (HzApplication's startup): GSettings (ai.hanzo.Desktop),
 * the store on $XDG_DATA_HOME/hanzo/hanzo.db (or the error that kept it closed), the
 * HzEngineWorker (its model registry's memory budget: GSettings model-memory-budget, 0 =
 * three quarters of the RAM), the learner daemon's presence, the model library
 * ($XDG_DATA_HOME/hanzo/models), the Hub side (HzModelHub) and the app server (off by
 * default). It also keeps the model in use: its own settings (hz-model-settings.h), the
 * sha256 of its file (hashed in a thread after each load) and whether to remember it
 * (GSettings model-path) once it has loaded. hz_app_context_shutdown() stops them in the
 * order the app needs (server, worker, store, learner, Hub). Main thread only.
 */
#pragma once

#include <gio/gio.h>
#include <hanzo-store.h>
#include "engine-worker.h"
#include "hz-app-server.h"
#include "hz-learner.h"
#include "hz-model-hub.h"
#include "hz-model-library.h"

G_BEGIN_DECLS

#define HZ_TYPE_APP_CONTEXT (hz_app_context_get_type ())
G_DECLARE_FINAL_TYPE (HzAppContext, hz_app_context, HZ, APP_CONTEXT, GObject)

/** Open the app-wide objects for `app` (not owned: the background redaction attaches to
 *  it, hz-redact-worker.h). A store that cannot be opened leaves the store NULL and its
 *  error in hz_app_context_get_store_error(). */
HzAppContext   *hz_app_context_new (GApplication *app);

/** Stop the app server and the engine worker, close the store, let the learner and the
 *  Hub go (downloads stop, their .part files kept) and write the settings out. The getters
 *  return NULL for the store afterwards. Called once, at the app's shutdown. */
void            hz_app_context_shutdown (HzAppContext *self);

/** The application these objects belong to (not owned). */
GApplication   *hz_app_context_get_application (HzAppContext *self);
GSettings      *hz_app_context_get_settings (HzAppContext *self);
/** The store, or NULL when it could not be opened (then hz_app_context_get_store_error()
 *  says why) or after shutdown. */
HzStore        *hz_app_context_get_store (HzAppContext *self);
const GError   *hz_app_context_get_store_error (HzAppContext *self);
HzEngineWorker *hz_app_context_get_worker (HzAppContext *self);
HzAppServer    *hz_app_context_get_app_server (HzAppContext *self);
HzLearner      *hz_app_context_get_learner (HzAppContext *self);
HzModelLibrary *hz_app_context_get_model_library (HzAppContext *self);
HzModelHub     *hz_app_context_get_model_hub (HzAppContext *self);

/** The settings of the model in use (its own values, the app's settings for the rest), or
 *  NULL before a model was opened. Replaced when another model is opened. */
GSettings      *hz_app_context_get_model_settings (HzAppContext *self);

/** sha256 (lowercase hex) of the loaded model file, or NULL while it is being computed
 *  (in a worker thread) or when no model is loaded. */
const char     *hz_app_context_get_model_sha256 (HzAppContext *self);

/** Open the model at `path` on the engine thread; with `remember`, store it in GSettings
 *  (model-path) once it has loaded (a file that fails to load is not remembered). */
void            hz_app_context_open_model (HzAppContext *self,
                                           const char   *path,
                                           gboolean      remember);

G_END_DECLS
