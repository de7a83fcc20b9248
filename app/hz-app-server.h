/* hz-app-server.h — HzAppServer: Preferences → "Serve to other apps on this computer".
 *
 * While the GSettings key "serve-enabled" is on (off by default) and the app has a model
 * loaded, an OpenAI-compatible server (server/hanzo-server.h, libhzserver: the only code
 * of the project that listens) answers on http://127.0.0.1:PORT/v1 (PORT: the key
 * "serve-port") with that model, under its file name without ".gguf" as the model id.
 * Every /v1/ request needs "Authorization: Bearer KEY": the key is made once
 * (hz_server_new_key()) and kept in the keyring (hz_server_keyring_store_key(), the same
 * item `hanzo serve` reads); without a keyring the key lives until the app quits (the
 * "key-note" says so). Regenerating it restarts the server with a new key.
 *
 * The server offers the app's model itself: the engine worker's HzModel, followed through
 * "model-loaded" and held with hz_engine_worker_acquire_model() (never loaded twice; given
 * back on "model-loading" of another model, before the worker fits that one into its
 * memory budget). The server runs its own HzServe on it (hz_server_add_loaded_model():
 * its own KV cache and continuous-batching scheduler, freed after 5 minutes unused), so
 * API requests batch with each other; the app's own chat runs beside them on the worker's
 * context, not yet in the same batch.
 *
 * Turning the switch off stops listening at once (requests in progress are cancelled);
 * disposing the object (the app quits) does the same. A port in use, or any other failure
 * to listen, is the state HZ_APP_SERVER_FAILED with its message (the switch stays on;
 * changing the port retries). Main thread only; "changed" is emitted whenever the state,
 * address, key or message change.
 */
#pragma once

#include <gio/gio.h>

#include "engine-worker.h"

G_BEGIN_DECLS

typedef enum {
  HZ_APP_SERVER_OFF,       /* the switch is off: nothing listens */
  HZ_APP_SERVER_STARTING,  /* on, the key is being read from the keyring */
  HZ_APP_SERVER_NO_MODEL,  /* on, but no model is loaded: nothing listens */
  HZ_APP_SERVER_ON,        /* listening (hz_app_server_get_address()) */
  HZ_APP_SERVER_FAILED,    /* on, but it cannot listen (hz_app_server_get_message()) */
} HzAppServerState;

#define HZ_TYPE_APP_SERVER (hz_app_server_get_type ())
G_DECLARE_FINAL_TYPE (HzAppServer, hz_app_server, HZ, APP_SERVER, GObject)

/** Follow `settings` (schema ai.hanzo.Desktop: serve-enabled, serve-port) and the model of
 *  `worker`; starts serving at once when the switch is on and a model is loaded. */
HzAppServer *hz_app_server_new (GSettings *settings, HzEngineWorker *worker);

HzAppServerState hz_app_server_get_state (HzAppServer *self);
/** "http://127.0.0.1:PORT/v1" while HZ_APP_SERVER_ON, else NULL. */
const char *hz_app_server_get_address (HzAppServer *self);
/** The model id clients name while HZ_APP_SERVER_ON, else NULL. */
const char *hz_app_server_get_model_id (HzAppServer *self);
/** The API key once read or made (NULL before; kept after the switch goes off). */
const char *hz_app_server_get_key (HzAppServer *self);
/** Why the key is not in the keyring, or NULL when it is. */
const char *hz_app_server_get_key_note (HzAppServer *self);
/** The state in words for a preferences row ("Serving stories260K at …", "Cannot listen on
 *  …: Address already in use", "Waiting for a model"); never NULL. */
const char *hz_app_server_get_message (HzAppServer *self);
/** Make a new key, keep it in the keyring and restart the server with it (clients must
 *  use the new one). Returns at once; "changed" follows. */
void        hz_app_server_regenerate_key (HzAppServer *self);

G_END_DECLS
