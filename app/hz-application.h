/* hz-application.h — HzApplication: the Hanzo Desktop AdwApplication.
 *
 * The top of app/: at startup it opens the app-wide objects (HzAppContext,
 * hz-app-context.h: settings, store, engine worker, learner, model library, Hub, app
 * server, the model in use) and the chats (HzChatSession, hz-chat-session.h), and it makes
 * the windows, handing them those; the getters below read the context. Actions:
 * app.models (Ctrl+M) opens the model manager, app.find-models its Find Models page,
 * app.import-models (as: file URIs) imports files through the model manager (a drop on
 * the chat window), app.privacy, app.preferences, app.serve-settings, app.about, app.quit.
 * Command
 * line: `--model PATH` opens PATH and remembers it (GSettings model-path) once it loads;
 * `--default-model PATH` is opened only when no model is remembered. All functions are
 * for the main thread.
 */
#pragma once

#include <adwaita.h>
#include "hz-app-context.h"
#include "hz-chat-session.h"

G_BEGIN_DECLS

#define HZ_TYPE_APPLICATION (hz_application_get_type ())
G_DECLARE_FINAL_TYPE (HzApplication, hz_application, HZ, APPLICATION, AdwApplication)

/** A new application with id ai.hanzo.Desktop. */
HzApplication  *hz_application_new (void);

/** The app-wide objects (valid after startup). */
HzAppContext   *hz_application_get_context (HzApplication *self);

/** The chats shown by the window (valid after startup). */
HzChatSession  *hz_application_get_session (HzApplication *self);

/** The app's settings (valid after startup). */
GSettings      *hz_application_get_settings (HzApplication *self);

/** The settings of the model in use (hz-model-settings.h: its own values, the app's
 *  settings for the rest), or NULL before a model was opened. Replaced when another model
 *  is opened. */
GSettings      *hz_application_get_model_settings (HzApplication *self);

/** The store, or NULL when it could not be opened (the window then says so and keeps
 *  conversations in memory only). Valid after startup. */
HzStore        *hz_application_get_store (HzApplication *self);

/** The engine worker (valid after startup). */
HzEngineWorker *hz_application_get_worker (HzApplication *self);

/** "Serve to other apps on this computer" (hz-app-server.h; valid after startup). */
HzAppServer    *hz_application_get_app_server (HzApplication *self);

/** The learner daemon's presence and controls (valid after startup). */
HzLearner      *hz_application_get_learner (HzApplication *self);

/** The managed models (valid after startup). */
HzModelLibrary *hz_application_get_model_library (HzApplication *self);

/** Show the model manager (one per application), transient for the active window.
 *  Returns: (transfer none): it */
GtkWindow      *hz_application_show_model_manager (HzApplication *self);

/** The Hub side of the app: search, repository listings, downloads (hz-model-hub.h;
 *  valid after startup). */
HzModelHub     *hz_application_get_model_hub (HzApplication *self);

/** Show the model manager on its Find Models page (action app.find-models; the chat
 *  window's empty state offers it when there is no model). Returns: (transfer none): it */
GtkWindow      *hz_application_show_find_models (HzApplication *self);

/** sha256 (lowercase hex) of the loaded model file, or NULL while it is being computed
 *  (in a worker thread) or when no model is loaded. */
const char     *hz_application_get_model_sha256 (HzApplication *self);

/** Open the model at `path`; with `remember`, store it in GSettings (model-path) once it
 *  has loaded, so that it is opened at the next start (a file that fails to load is not
 *  remembered). Loading happens on the engine thread; the window follows it through the
 *  worker's signals. */
void            hz_application_open_model (HzApplication *self,
                                           const char    *path,
                                           gboolean       remember);

G_END_DECLS
