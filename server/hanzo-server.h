/* server/hanzo-server.h — the public API of libhzserver: a local OpenAI-compatible HTTP
 * server over the engine (`hanzo serve`). The only code of the project that listens for
 * connections; it cannot connect anywhere (tests/egress/test-no-network.sh checks both).
 *
 * Endpoints: GET /health; GET /v1/models, GET /v1/models/{id}; POST /v1/chat/completions
 * and POST /v1/completions, streamed as server-sent events ("data: {...}\n\n", ending with
 * "data: [DONE]") or whole. Requests name a model by id; each model is loaded on its first
 * request (hanzo/serving.h's HzRegistry), and all requests for it share one HzServe
 * (continuous batching, prefix cache). Prompts of chat requests are rendered by the model's
 * own chat template (hz_model_render_chat()): what clients send is content, never control
 * tokens. Bodies and errors follow OpenAI's API reference; errors are
 * {"error": {"message", "type", "param", "code"}} with a 4xx status for bad requests.
 *
 * Safety: only a loopback address is served without an API key (hz_server_new refuses
 * another); with a key every /v1/ request needs "Authorization: Bearer KEY". Without a key,
 * requests must name the loopback host in Host (no DNS rebinding) and POST bodies must be
 * application/json (a web page cannot send one without a CORS preflight, which is not
 * answered). Bodies are limited in size, slow clients cut (server-guard.h), and a client
 * that disconnects stops its generation at the next token. Nothing a client sends is
 * stored: the server links neither the store nor the learner.
 *
 * Users: `hanzo serve` (tools/hanzo-serve.c) and the app's "Serve to other apps on this
 * computer" (app/hz-app-server.c: the app's loaded model through
 * hz_server_add_loaded_model(), its key in the keyring).
 *
 * Threads: create, listen and free on one thread; the server runs on that thread's
 * thread-default GMainContext (iterate it, e.g. with a GMainLoop). Generation runs on each
 * model's HzServe thread. */
#pragma once

#include <gio/gio.h>
#include "hanzo/engine.h"

G_BEGIN_DECLS

#define HZ_SERVER_ERROR (hz_server_error_quark ())
GQuark hz_server_error_quark (void);
typedef enum {
  HZ_SERVER_ERROR_ADDRESS,    /* the host is not an IP address (or "localhost") */
  HZ_SERVER_ERROR_NEEDS_KEY,  /* a non-loopback address without an API key */
  HZ_SERVER_ERROR_LISTEN,     /* the address/port cannot be bound */
  HZ_SERVER_ERROR_MODEL,      /* a model file or folder that cannot be offered */
} HzServerError;

/** Receives one line (no newline) per request served and per model loaded or unloaded,
 *  on the server's thread. */
typedef void (*HzServerLogFunc) (const char *line, gpointer user_data);

typedef struct {
  const char     *host;          /* an IP address or "localhost"; NULL: 127.0.0.1 */
  guint           port;          /* 0: any free port (hz_server_get_port()) */
  const char     *api_key;       /* NULL or "": none (loopback only) */
  gsize           max_body;      /* request body bytes; 0: 8 MiB */
  guint           io_timeout;    /* seconds a client may stall sending or taking data;
                                    0: 30 */
  guint           idle_unload;   /* seconds until an unused model is unloaded; 0: never */
  guint           n_threads;     /* compute threads per model; 0: all cores */
  guint           max_seqs;      /* sequences one model runs at once; 0: 64 */
  guint           kv_mib;        /* KV cache per model, MiB; 0: the engine's default (256 MiB,
                                    4 GiB on a GPU; a longer prompt than fits is refused) */
  guint           max_requests;  /* generation requests open at once (more: 429); 0: 256 */
  HzServerLogFunc log;           /* NULL: no log */
  gpointer        log_data;
} HzServerOptions;

/** Zeroes `o` (every default above). */
void hz_server_options_init (HzServerOptions *o);

typedef struct _HzServer HzServer;

/** A server with no models, not listening yet. `o` is copied. Errors:
 *  HZ_SERVER_ERROR_ADDRESS, HZ_SERVER_ERROR_NEEDS_KEY. */
HzServer *hz_server_new (const HzServerOptions *o, GError **error);
/** Stops listening, cancels the requests in progress and unloads the models. */
void      hz_server_free (HzServer *srv);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzServer, hz_server_free)

/** Offer the GGUF file (or Hugging Face folder) `path` as model `id` (NULL: the file name
 *  without ".gguf"). Not loaded until requested. Errors: HZ_SERVER_ERROR_MODEL (no such
 *  file, id taken or empty). */
gboolean hz_server_add_model (HzServer *srv, const char *id, const char *path, GError **error);
/** Offer `model`, already loaded by the caller from `path` (e.g. the app's engine worker's
 *  model), as `id`, without loading it again: the server makes its own HzServe on it
 *  (hanzo/serving.h; its own KV cache and scheduler) at the first request and frees that
 *  after idle_unload seconds unused; the model is never unloaded here. `model` must stay
 *  valid until `release(release_data)` (nullable) is called: when the server is freed, or
 *  at once when this fails. Errors: HZ_SERVER_ERROR_MODEL (id taken or empty). */
gboolean hz_server_add_loaded_model (HzServer *srv, const char *id, const char *path,
                                     HzModel *model, GDestroyNotify release,
                                     gpointer release_data, GError **error);
/** Offer every *.gguf file of `dir` under its file name. Returns how many, or -1 with
 *  `error` (the folder cannot be read, or an id is taken). */
int      hz_server_add_models_dir (HzServer *srv, const char *dir, GError **error);
/** The model id of a -m argument: "PATH:ALIAS" (when PATH is an existing file or folder
 *  and ALIAS has no '/') gives *path PATH and ALIAS, else the whole argument is the path
 *  and the id its file name without ".gguf". Both g_free. */
void     hz_server_parse_model_arg (const char *arg, char **path, char **id);

/** Start listening. Errors: HZ_SERVER_ERROR_LISTEN. */
gboolean hz_server_listen (HzServer *srv, GError **error);
/** The port listened on (after hz_server_listen). */
guint    hz_server_get_port (HzServer *srv);
/** TRUE when the address is not a loopback one (reachable from other computers). */
gboolean hz_server_is_public (HzServer *srv);

/** The API key kept in the keyring for `hanzo serve` (libsecret schema
 *  "ai.hanzo.Desktop.ServerKey", attribute purpose = "api-key"; e.g. stored with
 *  `secret-tool store --label "Hanzo server API key" purpose api-key`), or NULL when there
 *  is none or no keyring answers (then `error`, nullable, says why). g_free. */
char    *hz_server_keyring_key (GError **error);
/** Keep `key` in the keyring as the one hz_server_keyring_key() returns (replacing any
 *  before; the app's "Serve to other apps" keeps its key there). Blocks on D-Bus: call it
 *  off the main thread. FALSE with `error` when no keyring answers. */
gboolean hz_server_keyring_store_key (const char *key, GError **error);
/** A new random API key: "hz-" and 48 hex digits (24 bytes from getrandom(2)). g_free.
 *  Any thread. */
char    *hz_server_new_key (void);

G_END_DECLS
