/* engine-worker.h — HzEngineWorker: the engine on its own thread.
 *
 * One HzEngineWorker owns the engine's model registry (HzRegistry, hanzo/serving.h) and
 * the context of the model in use on one GThread that it starts at construction. Loading a
 * model switches through the registry: the model used before is released but stays loaded
 * until the memory budget needs its room (least recently used first), so switching back
 * to it costs no load; loading happens on the thread, never on the caller's. Every request (load a model, generate a reply, cancel, shut down) is a
 * non-blocking call from the main thread that pushes a message onto a GAsyncQueue; the
 * results come back as signals emitted on the GMainContext that was the thread-default
 * one when the worker was created (the main context in the app). Nothing here ever waits
 * for the engine on the calling thread.
 *
 * Signals (all emitted on the worker's main context):
 *   model-loading (path)               emitted at once by hz_engine_worker_load_model(),
 *                                      before the worker thread sees the request (a
 *                                      handler can let go of the model used so far, e.g.
 *                                      hz_engine_worker_release_model(), before the new
 *                                      one is fitted into the memory budget)
 *   model-loaded (path, name)          a model finished loading and is ready
 *   model-error  (path, GError)        a model could not be loaded; the model in use
 *                                      before (if any) serves on: "model-loaded" follows
 *                                      for it, and hz_engine_worker_get_model_path() names
 *                                      it again (unless another load was asked for); else
 *                                      no model is loaded now
 *   context-changed (n_ctx)            the context was remade with another size
 *                                      (hz_engine_worker_set_context_length())
 *   reasoning    (request, text, n_generated)  new reasoning of a thinking model's reply
 *                                      (what it writes inside "<think>…</think>" or on
 *                                      harmony's analysis channel; engine/reasoning.c
 *                                      splits it from the answer as it streams, markers
 *                                      and the white space around it left out), as
 *                                      "token" below; emitted before the "token" of the
 *                                      same moment and before "finished"
 *   token        (request, text, n_generated)  new answer text: everything generated since
 *                                      the last emission (may be several tokens, never
 *                                      splits a UTF-8 character); n_generated (guint): how
 *                                      many tokens the request had generated when this
 *                                      text was taken (a token whose text is still held
 *                                      back, part of a character or of a possible stop
 *                                      string, may be counted before its text comes);
 *                                      emitted before "finished"
 *   finished     (request, text, stats) the reply is complete (also after a cancel, with
 *                                      the partial text); text: its answer (without the
 *                                      reasoning); stats: const HzGenerateStats *,
 *                                      valid during the emission only
 *   trimmed      (request, n_dropped)  the conversation is longer than the context: the
 *                                      reply is written from the system prompt and the
 *                                      newest whole turns that fit, the n_dropped oldest
 *                                      messages after the system prompt left out; emitted
 *                                      before the first "token", only when n_dropped > 0
 *   error        (request, GError)     generation failed (HZ_ENGINE_ERROR_CONTEXT_FULL when
 *                                      the last message alone does not fit the context, the
 *                                      message says how many tokens it has); no "finished"
 *                                      follows
 *   title        (request, text)       answer to hz_engine_worker_generate_title(): the
 *                                      model's raw answer (its reasoning left out), or
 *                                      NULL when there is none (base model without a chat
 *                                      template, no model, interrupted, still thinking)
 *   adapter-changed (path)             the LoRA adapter the replies use now changed (NULL:
 *                                      the base model); see hz_engine_worker_set_adapters()
 *   adapter-error (path, GError)       an adapter could not be used (unreadable, NaN,
 *                                      wrong shapes): the base model serves; emitted once
 *                                      per path until the adapters are set again
 *
 * Debugging: the environment variable HZ_WORKER_TOKEN_DELAY_US (read when a worker is
 * created) makes the worker sleep that many microseconds after each token, to see and
 * test streaming, Stop and the periodic saving with a model that is otherwise too fast.
 */
#pragma once

#include <gio/gio.h>
#include <hanzo/engine.h>
#include <hanzo-store.h>
#include "hz-learner.h"

G_BEGIN_DECLS

#define HZ_TYPE_ENGINE_WORKER (hz_engine_worker_get_type ())
G_DECLARE_FINAL_TYPE (HzEngineWorker, hz_engine_worker, HZ, ENGINE_WORKER, GObject)

/**
 * hz_engine_worker_new:
 *
 * Create a worker and start its thread. Signals are delivered on the thread-default main
 * context of the caller. Call from the thread that runs that context (the main thread).
 *
 * Returns: (transfer full): a new worker
 */
HzEngineWorker *hz_engine_worker_new (void);

/**
 * hz_engine_worker_new_full:
 * @memory_budget: most bytes of loaded models in the registry (0 = unlimited); a model
 *   that does not fit even alone gives "model-error" (HZ_SERVE_ERROR_BUDGET)
 *
 * As hz_engine_worker_new(), with a memory budget (construct property "memory-budget").
 *
 * Returns: (transfer full): a new worker
 */
HzEngineWorker *hz_engine_worker_new_full (guint64 memory_budget);

/**
 * hz_engine_worker_load_model:
 * @self: the worker
 * @path: a GGUF file
 *
 * Queue switching to @path through the registry (@path is the model's name there): the
 * model used before (if any) is released first (it stays loaded while the memory budget
 * allows), and @path is loaded unless it still is. After a "model-error" the model used
 * before serves on (followed by its "model-loaded"), or no model when there was none or it
 * cannot be used again; @path is forgotten by the registry, so a fixed file can be
 * retried. Emits "model-loaded" or "model-error". Main thread; returns at once.
 */
void hz_engine_worker_load_model (HzEngineWorker *self, const char *path);

/**
 * hz_engine_worker_load_model_full:
 * @self: the worker
 * @path: a GGUF file
 * @n_ctx: context size in tokens for @path and later loads (as
 *   hz_engine_worker_set_context_length(), without remaking the context of the model
 *   being left)
 *
 * As hz_engine_worker_load_model(), with the context size of the model (a model's own
 * setting). Main thread; returns at once.
 */
void hz_engine_worker_load_model_full (HzEngineWorker *self, const char *path, guint n_ctx);

/**
 * hz_engine_worker_generate:
 * @self: the worker
 * @messages: (array length=n_messages): the conversation so far, oldest first, ending with
 *   the user's message; copied
 * @n_messages: number of messages
 * @params: sampling and length (stop_strings are copied)
 *
 * Queue the generation of the assistant's reply. Models with a chat template get the
 * conversation rendered with it, as much as fits: the system prompt and the newest whole
 * turns, with room left for the reply (params->n_predict, at most half the context;
 * hz_model_fit_chat(), "trimmed" says how many messages were left out); what the
 * messages say is tokenized as text, only the template's markup becomes control tokens.
 * Base models without a template (e.g. stories260K) get a plain completion of the last
 * message's text. Emits "token" signals and then "finished", or "error". Main thread;
 * returns at once.
 *
 * Returns: the request id (> 0) that the signals carry
 */
guint hz_engine_worker_generate (HzEngineWorker         *self,
                                 const HzChatMessage    *messages,
                                 gsize                   n_messages,
                                 const HzGenerateParams *params);

/**
 * hz_engine_worker_generate_title:
 * @self: the worker
 * @prompt: the user turn asking for a title (hz_title_prompt()); copied
 *
 * Queue a low-priority request for a conversation title, answered by "title". It runs on
 * its own context of at most 512 tokens, made for it and freed after (the chat's KV cache
 * is kept; a longer prompt answers NULL), greedy, at most 24 tokens, only
 * when nothing else is queued, and stops (answering NULL) as soon as another request
 * arrives, so it never delays a reply. Main thread; returns at once.
 *
 * Returns: the request id (> 0) that "title" carries
 */
guint hz_engine_worker_generate_title (HzEngineWorker *self, const char *prompt);

/**
 * hz_engine_worker_get_n_loads:
 * @self: the worker
 *
 * Returns: model loads performed by the registry so far (cold starts and reloads; a
 *   switch back to a model still loaded does not count). Any thread.
 */
guint hz_engine_worker_get_n_loads (HzEngineWorker *self);

/**
 * hz_engine_worker_get_loaded_bytes:
 * @self: the worker
 *
 * Returns: bytes of the models loaded now (file sizes). Any thread.
 */
guint64 hz_engine_worker_get_loaded_bytes (HzEngineWorker *self);

/**
 * hz_engine_worker_acquire_model:
 * @self: the worker
 * @path: a model file, as given to hz_engine_worker_load_model()
 * @error: HZ_SERVE_ERROR_NOT_FOUND when the worker's registry does not know @path, or
 *   hz_registry_acquire()'s errors
 *
 * The worker's own HzModel for @path (the same weights its replies use; never a second
 * load), with a use count + 1 in its registry, so that the registry does not unload it:
 * give it back with hz_engine_worker_release_model(). A model the registry unloaded
 * meanwhile is loaded again, so call this off the main thread (the app's server does it
 * in a GTask thread, right after "model-loaded"). Any thread.
 *
 * Returns: (transfer none) (nullable): the model, or NULL with @error
 */
HzModel *hz_engine_worker_acquire_model (HzEngineWorker *self, const char *path, GError **error);

/**
 * hz_engine_worker_release_model:
 * @self: the worker
 * @model: a model of hz_engine_worker_acquire_model()
 *
 * Give back one use of @model. Call it before the worker is finalized (its registry goes
 * with it). Any thread.
 */
void hz_engine_worker_release_model (HzEngineWorker *self, HzModel *model);

/**
 * hz_engine_worker_cancel:
 * @self: the worker
 *
 * Cancel every queued and running generation. The running one stops within one token
 * and emits "finished" with its partial text (stop reason HZ_STOP_CANCELLED). Any thread.
 */
void hz_engine_worker_cancel (HzEngineWorker *self);

/**
 * hz_engine_worker_set_context_length:
 * @self: the worker
 * @n_ctx: context size in tokens (KV cache), 0 = the engine's default (the model's
 *   context length, at most 4096)
 *
 * Use @n_ctx for models loaded from now on and, when a model is loaded, remake its
 * context with that size after the requests already queued ("context-changed" follows;
 * if the new size cannot be allocated the old context stays and a warning is logged).
 * Main thread; returns at once.
 */
void hz_engine_worker_set_context_length (HzEngineWorker *self, guint n_ctx);

/**
 * hz_engine_worker_get_context_length:
 * @self: the worker
 *
 * Returns: the context size of the loaded model in tokens, 0 when none is loaded
 *   (main thread)
 */
guint hz_engine_worker_get_context_length (HzEngineWorker *self);

/**
 * hz_engine_worker_is_model_loaded:
 * @self: the worker
 *
 * Returns: whether the last "model-loaded"/"model-error" emitted was "model-loaded"
 *   (main thread)
 */
gboolean hz_engine_worker_is_model_loaded (HzEngineWorker *self);

/**
 * hz_engine_worker_get_model_path:
 * @self: the worker
 *
 * Returns: (nullable): the path of the loaded model, or of the one being loaded, or NULL
 *   (main thread)
 */
const char *hz_engine_worker_get_model_path (HzEngineWorker *self);

/**
 * hz_engine_worker_set_adapters:
 * @self: the worker
 * @personal: (nullable): the active personal LoRA adapter (a PEFT folder as the learner
 *   writes it, or a GGUF LoRA file), NULL or "" for none
 * @personal_base_sha256: (nullable): sha256 of the model it was trained on (the store's
 *   adapters.base_sha256); when given, the adapter is used only with that model; NULL:
 *   any model of the same shapes
 * @shared: (nullable): the federation's shared base adapter folder, NULL or "" for none
 *
 * Queue a change of adapters, applied to the current model (and to every model loaded
 * later) between replies, never during one: requests run one after another on the
 * worker thread. The replies use the personal adapter when there is one, else the shared
 * one: the learner trains each night's personal adapter starting from the shared adapter
 * when that is newer (learner/README.md, "Precedence"), so the personal adapter already
 * contains it and stacking both would count the shared update twice. A failure keeps the
 * base model: "adapter-error" once per path (adapters of another model are only logged),
 * "adapter-changed" whenever the adapter in use changes. Titles
 * (hz_engine_worker_generate_title()) are written by the base model. Main thread;
 * returns at once.
 */
void hz_engine_worker_set_adapters (HzEngineWorker *self, const char *personal,
                                   const char *personal_base_sha256, const char *shared);

/**
 * hz_engine_worker_get_adapter:
 * @self: the worker
 *
 * Returns: (nullable): the adapter the replies use (as last announced by
 *   "adapter-changed"), or NULL for the base model (main thread)
 */
const char *hz_engine_worker_get_adapter (HzEngineWorker *self);

/**
 * hz_engine_worker_follow_learner:
 * @self: the worker
 * @learner: the learner daemon's proxy
 * @store: (nullable): the app's store, which must outlive the worker: the active adapter
 *   and its base model are read from it now and when @learner announces a new one
 *
 * Serve the learner's adapters: now the store's active adapter and the shared adapter in
 * $XDG_DATA_HOME/hanzo/adapters/shared (when it holds one), then whatever @learner's
 * "active-adapter-changed" (promotion, rollback) and "shared-adapter-changed" announce
 * (hz_engine_worker_set_adapters()). Main thread.
 */
void hz_engine_worker_follow_learner (HzEngineWorker *self, HzLearner *learner,
                                      HzStore *store);

/**
 * hz_engine_worker_shutdown:
 * @self: the worker
 *
 * Cancel everything and ask the thread to free the engine and exit. Does not wait: the
 * thread finishes on its own (within one token) and no signal is emitted afterwards.
 * Called by dispose; safe to call twice. Main thread.
 */
void hz_engine_worker_shutdown (HzEngineWorker *self);

G_END_DECLS
