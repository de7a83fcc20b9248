/* engine-worker.c — HzEngineWorker: the engine on its own thread (see engine-worker.h).
 *
 * Layout: the GObject (main thread) and the thread share a refcounted `Shared` block: the
 * request queue, the main context to deliver on, a weak reference back to the GObject
 * (so nothing is delivered after it is gone), the cancellables of outstanding generations
 * and a buffer that coalesces streamed text. The thread is detached; it frees the engine
 * and drops its reference to `Shared` when it sees REQ_SHUTDOWN.
 */
#include "engine-worker.h"

#include <glib/gi18n.h>
#include <hanzo/serving.h>
#include <hanzo-store-learner.h>
#include <stdlib.h>
#include <string.h>

typedef enum { REQ_LOAD, REQ_RESIZE, REQ_GENERATE, REQ_TITLE, REQ_ADAPTERS, REQ_SHUTDOWN } RequestKind;

#define TITLE_CTX_TOKENS  512   /* context of a title request (its own KV cache, freed after) */
#define TITLE_MAX_TOKENS  24

typedef struct {
  RequestKind      kind;
  guint            id;
  guint64          seq;             /* order of submission */
  char            *path;            /* REQ_LOAD; REQ_ADAPTERS: personal adapter or NULL */
  char            *base_sha256;     /* REQ_ADAPTERS: the personal adapter's base, or NULL */
  char            *shared;          /* REQ_ADAPTERS: shared base adapter or NULL */
  guint            n_ctx;           /* REQ_LOAD, REQ_RESIZE: context size, 0 = default */
  GPtrArray       *roles;           /* REQ_GENERATE, REQ_TITLE: char* */
  GPtrArray       *contents;        /* REQ_GENERATE, REQ_TITLE: char* */
  HzGenerateParams params;          /* stop_strings points into `stop` */
  char           **stop;
  GCancellable    *cancellable;
} Request;

typedef struct {
  gatomicrefcount refcount;
  GAsyncQueue    *queue;       /* Request*, background (REQ_TITLE) after the rest */
  HzRegistry     *registry;    /* the models, loaded on demand, LRU under a budget */
  GMainContext   *context;     /* where signals are emitted */
  GWeakRef        owner;       /* HzEngineWorker */
  GMutex          lock;        /* guards the fields below */
  GPtrArray      *active;      /* GCancellable* of queued/running generations */
  GString        *pending;     /* streamed answer text not yet delivered */
  GString        *pending_reasoning;  /* streamed reasoning not yet delivered */
  guint           pending_id;  /* request the pending text belongs to */
  guint           pending_n;   /* tokens generated so far by that request (all of them,
                                  also those whose text is still held back) */
  gboolean        flush_queued;
  gulong          token_delay_us;  /* HZ_WORKER_TOKEN_DELAY_US: simulate a slow model */
} Shared;

struct _HzEngineWorker {
  GObject  parent_instance;
  Shared  *shared;
  guint    next_id;
  guint64  next_seq;
  char    *model_path;
  gboolean model_loaded;
  guint    n_ctx_request;   /* context size asked for (0 = the engine's default) */
  guint    n_ctx;           /* context size of the loaded model, 0 = none */
  gboolean shut_down;
  guint64  memory_budget;   /* of the registry, bytes; 0 = unlimited */
  char    *want_personal, *want_sha, *want_shared;  /* adapters asked for (set_adapters) */
  char    *adapter;         /* the adapter serving now ("adapter-changed"), or NULL */
  HzStore *store;           /* follow_learner: where the active adapter's base is read */
};

G_DEFINE_FINAL_TYPE (HzEngineWorker, hz_engine_worker, G_TYPE_OBJECT)

enum { SIG_MODEL_LOADING, SIG_MODEL_LOADED, SIG_MODEL_ERROR, SIG_TOKEN, SIG_REASONING,
       SIG_FINISHED, SIG_ERROR,
       SIG_CONTEXT_CHANGED, SIG_TITLE, SIG_ADAPTER_CHANGED, SIG_ADAPTER_ERROR, SIG_TRIMMED,
       N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_MEMORY_BUDGET };

/* ------------------------------------------------------------------ shared state */

static Shared *
shared_ref (Shared *s)
{
  g_atomic_ref_count_inc (&s->refcount);
  return s;
}

static void
shared_unref (Shared *s)
{
  if (!g_atomic_ref_count_dec (&s->refcount))
    return;
  g_async_queue_unref (s->queue);
  hz_registry_free (s->registry);
  g_main_context_unref (s->context);
  g_weak_ref_clear (&s->owner);
  g_ptr_array_unref (s->active);
  g_string_free (s->pending, TRUE);
  g_string_free (s->pending_reasoning, TRUE);
  g_mutex_clear (&s->lock);
  g_free (s);
}

static void
request_free (Request *r)
{
  g_free (r->path);
  g_free (r->base_sha256);
  g_free (r->shared);
  g_clear_pointer (&r->roles, g_ptr_array_unref);
  g_clear_pointer (&r->contents, g_ptr_array_unref);
  g_strfreev (r->stop);
  g_clear_object (&r->cancellable);
  g_free (r);
}

/* ------------------------------------------------------- delivery to the main context */

typedef enum { EV_MODEL_LOADED, EV_MODEL_ERROR, EV_CONTEXT_CHANGED, EV_FLUSH, EV_FINISHED, EV_ERROR,
               EV_TITLE, EV_ADAPTER_CHANGED, EV_ADAPTER_ERROR, EV_TRIMMED } EventKind;

typedef struct {
  Shared         *shared;
  EventKind       kind;
  guint           id;
  char           *path;
  char           *name;
  char           *text;
  GError         *error;
  guint           n_ctx;
  char           *kept;           /* EV_MODEL_ERROR: the model that serves on, or NULL */
  guint           n_ctx_request;  /* EV_MODEL_ERROR with `kept`: its context size asked for */
  guint           n_dropped;   /* EV_TRIMMED */
  HzGenerateStats stats;
} Event;

static void
event_free (gpointer data)
{
  Event *ev = data;
  shared_unref (ev->shared);
  g_free (ev->path);
  g_free (ev->name);
  g_free (ev->text);
  g_free (ev->kept);
  g_clear_error (&ev->error);
  g_free (ev);
}

/* The contents of `buf` (NULL when empty), which is emptied. Under the lock. */
static char *
take_pending (GString *buf)
{
  if (buf->len == 0)
    return NULL;
  char *text = g_strndup (buf->str, buf->len);
  g_string_truncate (buf, 0);
  return text;
}

/* Main context: emit the reasoning, then the answer text collected since the last flush,
 * if any. */
static void
flush_pending (HzEngineWorker *self, Shared *s)
{
  g_autofree char *text = NULL, *reasoning = NULL;
  guint id, n_generated;

  g_mutex_lock (&s->lock);
  s->flush_queued = FALSE;
  id = s->pending_id;
  n_generated = s->pending_n;
  reasoning = take_pending (s->pending_reasoning);
  text = take_pending (s->pending);
  g_mutex_unlock (&s->lock);

  if (reasoning != NULL && self != NULL)
    g_signal_emit (self, signals[SIG_REASONING], 0, id, reasoning, n_generated);
  if (text != NULL && self != NULL)
    g_signal_emit (self, signals[SIG_TOKEN], 0, id, text, n_generated);
}

static gboolean
dispatch_event (gpointer data)
{
  Event *ev = data;
  g_autoptr(HzEngineWorker) self = g_weak_ref_get (&ev->shared->owner);

  if (ev->kind == EV_FLUSH || ev->kind == EV_FINISHED || ev->kind == EV_ERROR)
    flush_pending (self, ev->shared);
  if (self == NULL || self->shut_down)
    return G_SOURCE_REMOVE;

  switch (ev->kind)
    {
    case EV_MODEL_LOADED:
      if (g_strcmp0 (self->model_path, ev->path) == 0)
        {
          self->model_loaded = TRUE;
          self->n_ctx = ev->n_ctx;
        }
      g_signal_emit (self, signals[SIG_MODEL_LOADED], 0, ev->path, ev->name);
      break;
    case EV_MODEL_ERROR:
      {
        gboolean current = g_strcmp0 (self->model_path, ev->path) == 0;
        if (current)
          {
            self->model_loaded = FALSE;
            self->n_ctx = 0;
          }
        g_signal_emit (self, signals[SIG_MODEL_ERROR], 0, ev->path, ev->error);
        /* the model used before serves on, unless another load was asked for meanwhile
         * (also by a handler of the error) */
        if (current && ev->kept != NULL && !self->shut_down &&
            g_strcmp0 (self->model_path, ev->path) == 0)
          {
            g_free (self->model_path);
            self->model_path = g_strdup (ev->kept);
            self->model_loaded = TRUE;
            self->n_ctx = ev->n_ctx;
            self->n_ctx_request = ev->n_ctx_request;
            g_signal_emit (self, signals[SIG_MODEL_LOADED], 0, ev->kept, ev->name);
          }
      }
      break;
    case EV_CONTEXT_CHANGED:
      self->n_ctx = ev->n_ctx;
      g_signal_emit (self, signals[SIG_CONTEXT_CHANGED], 0, ev->n_ctx);
      break;
    case EV_FLUSH:
      break;
    case EV_FINISHED:
      g_signal_emit (self, signals[SIG_FINISHED], 0, ev->id, ev->text, &ev->stats);
      break;
    case EV_ERROR:
      g_signal_emit (self, signals[SIG_ERROR], 0, ev->id, ev->error);
      break;
    case EV_TITLE:
      g_signal_emit (self, signals[SIG_TITLE], 0, ev->id, ev->text);
      break;
    case EV_ADAPTER_CHANGED:
      g_free (self->adapter);
      self->adapter = g_strdup (ev->path);
      g_signal_emit (self, signals[SIG_ADAPTER_CHANGED], 0, ev->path);
      break;
    case EV_ADAPTER_ERROR:
      g_signal_emit (self, signals[SIG_ADAPTER_ERROR], 0, ev->path, ev->error);
      break;
    case EV_TRIMMED:
      g_signal_emit (self, signals[SIG_TRIMMED], 0, ev->id, ev->n_dropped);
      break;
    }
  return G_SOURCE_REMOVE;
}

/* Worker thread: hand `ev` to the main context. Takes ownership. Always through a
 * source attached to that context (never g_main_context_invoke(), which would run the
 * callback right here on the worker thread when nobody owns the main context). */
static void
post_event (Shared *s, Event *ev)
{
  GSource *source = g_idle_source_new ();

  ev->shared = shared_ref (s);
  g_source_set_priority (source, G_PRIORITY_DEFAULT);
  g_source_set_callback (source, dispatch_event, ev, event_free);
  g_source_set_static_name (source, "[hanzo] engine worker event");
  g_source_attach (source, s->context);
  g_source_unref (source);
}

static Event *
event_new (EventKind kind, guint id)
{
  Event *ev = g_new0 (Event, 1);
  ev->kind = kind;
  ev->id = id;
  return ev;
}

/* ------------------------------------------------------------- the worker thread */

typedef struct {
  Shared            *shared;
  guint              id;
  guint              n_generated;  /* tokens generated so far */
  HzReasoningStream *split;        /* the reply's reasoning apart from its answer */
  gsize              n_fed;        /* bytes of the reply fed to it */
  GString           *reasoning;    /* the split's output for the piece at hand */
  GString           *answer;       /* all of the answer so far */
} TokenCtx;

/* Feed `text` of the reply to the splitter (final: the reply is complete) and queue what it
 * decided for the main context: reasoning for "reasoning", answer for "token". */
static void
deliver (TokenCtx *tc, const char *text, gboolean final)
{
  Shared *s = tc->shared;
  gboolean queue_flush = FALSE;
  const gsize answer_was = tc->answer->len;

  g_string_truncate (tc->reasoning, 0);
  hz_reasoning_stream_push (tc->split, text, -1, tc->reasoning, tc->answer);
  if (final)
    hz_reasoning_stream_finish (tc->split, tc->reasoning, tc->answer);
  tc->n_fed += text ? strlen (text) : 0;
  g_mutex_lock (&s->lock);
  s->pending_id = tc->id;
  s->pending_n = tc->n_generated;
  /* a token without text yet (held back) is counted with the next text delivered */
  if (tc->reasoning->len > 0 || tc->answer->len > answer_was)
    {
      g_string_append_len (s->pending_reasoning, tc->reasoning->str, tc->reasoning->len);
      g_string_append_len (s->pending, tc->answer->str + answer_was,
                           tc->answer->len - answer_was);
      if (!s->flush_queued)
        s->flush_queued = queue_flush = TRUE;
    }
  g_mutex_unlock (&s->lock);

  if (queue_flush)
    post_event (s, event_new (EV_FLUSH, tc->id));
}

static gboolean
on_token (HzToken token, const char *text, gpointer user_data)
{
  TokenCtx *tc = user_data;

  tc->n_generated++;
  deliver (tc, text, FALSE);
  if (tc->shared->token_delay_us > 0)
    g_usleep (tc->shared->token_delay_us);
  return TRUE;
}

/* Tokens of the prompt for `r` (g_free) in a context of n_ctx tokens that keeps `reserve`
 * for the reply: the model's chat template over the newest whole turns that fit
 * (hz_model_fit_chat: what users wrote is never control tokens); base models without a
 * template complete the user's last message. NULL with HZ_ENGINE_ERROR_CONTEXT_FULL when
 * the last message alone does not fit. */
static HzToken *
build_prompt (HzModel *model, Request *r, guint n_ctx, guint reserve, HzChatFit *fit,
              GError **error)
{
  const gboolean chat = hz_model_is_chat (model);
  const guint n = r->contents->len;
  g_autofree HzChatMessage *msgs = g_new0 (HzChatMessage, n + 1);
  for (guint i = 0; i < n; i++)
    {
      msgs[i].role = r->roles->pdata[i];
      msgs[i].content = r->contents->pdata[i];
    }
  if (!chat && n > 0)
    return hz_model_fit_chat (model, msgs + n - 1, 1, n_ctx, reserve, fit, error);
  return hz_model_fit_chat (model, msgs, n, n_ctx, reserve, fit, error);
}

static void
run_generate (Shared *s, HzContext *ctx, Request *r)
{
  g_autoptr(GError) error = NULL;
  HzGenerateStats stats = { 0 };
  Event *ev;

  if (ctx == NULL)
    {
      ev = event_new (EV_ERROR, r->id);
      ev->error = g_error_new_literal (HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                                       _("No model is loaded"));
      post_event (s, ev);
      return;
    }

  HzChatFit fit;
  const guint reserve = r->params.n_predict >= 0 ? (guint) r->params.n_predict : G_MAXUINT;
  g_autofree HzToken *prompt = build_prompt (hz_context_model (ctx), r, hz_context_n_ctx (ctx),
                                             reserve, &fit, &error);
  if (prompt == NULL)
    {
      ev = event_new (EV_ERROR, r->id);
      ev->error = g_steal_pointer (&error);
      post_event (s, ev);
      return;
    }
  const gsize n_prompt = fit.n_tokens;
  if (fit.n_dropped > 0)
    {
      ev = event_new (EV_TRIMMED, r->id);
      ev->n_dropped = (guint) MIN (fit.n_dropped, G_MAXUINT);
      post_event (s, ev);
    }
  /* a thinking model: its reasoning goes to "reasoning", the answer to "token" */
  HzModel *model = hz_context_model (ctx);
  HzGenerateParams params = r->params;
  params.special = hz_model_reasoning_special (model);
  g_autoptr(HzReasoningStream) split =
    hz_reasoning_stream_new (hz_model_reasoning_format (model),
                             hz_model_reasoning_opened (model, prompt, n_prompt));
  g_autoptr(GString) reasoning = g_string_new (NULL), answer = g_string_new (NULL);
  TokenCtx tc = { s, r->id, 0, split, 0, reasoning, answer };
  g_autofree char *text = NULL;

  if (g_cancellable_is_cancelled (r->cancellable))
    {
      text = g_strdup ("");
      stats.stop_reason = HZ_STOP_CANCELLED;
    }
  else
    {
      text = hz_context_generate (ctx, prompt, n_prompt, &params, on_token, &tc,
                                  r->cancellable, NULL, &stats, &error);
    }

  if (text == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      /* Cancelled before the first token (e.g. during the prompt): an empty reply. */
      text = g_strdup ("");
      stats.stop_reason = HZ_STOP_CANCELLED;
      g_clear_error (&error);
    }

  if (text == NULL)
    {
      ev = event_new (EV_ERROR, r->id);
      ev->error = error ? g_steal_pointer (&error)
                        : g_error_new_literal (HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_FAILED,
                                               _("Generation failed"));
      post_event (s, ev);
      return;
    }

  /* the text never passed to on_token (held back until a stop), then the split's rest */
  deliver (&tc, text + MIN (tc.n_fed, strlen (text)), TRUE);
  ev = event_new (EV_FINISHED, r->id);
  ev->text = g_strndup (answer->str, answer->len);
  ev->stats = stats;
  post_event (s, ev);
}

static HzContext *
new_context (HzModel *model, guint n_ctx, GError **error)
{
  HzContextParams params;

  hz_context_params_init (&params);
  params.n_ctx = n_ctx;
  return hz_context_new (model, &params, error);
}

/* Title requests stop as soon as anything else is waiting: a reply never waits for one. */
static gboolean
on_title_token (HzToken token, const char *text, gpointer user_data)
{
  Shared *s = user_data;
  return g_async_queue_length (s->queue) <= 0;
}

/* The model's answer to the title request r (its one user turn), or NULL (base models
 * without a chat template cannot follow the instruction: the app keeps its own title). */
static char *
run_title (HzModel *model, Shared *s, Request *r)
{
  g_autoptr(GError) error = NULL;

  if (model == NULL || !hz_model_is_chat (model))
    return NULL;
  /* Its own small context, so the chat's KV cache (the conversation's prefix) is kept;
   * freed right after, so it costs memory only while a title is written. */
  guint n_ctx = TITLE_CTX_TOKENS;
  if (hz_model_n_ctx_train (model) > 0)
    n_ctx = MIN (n_ctx, (guint) hz_model_n_ctx_train (model));
  g_autoptr(HzContext) title_ctx = new_context (model, n_ctx, &error);
  if (title_ctx == NULL)
    {
      g_message ("title: no context: %s", error->message);
      return NULL;
    }
  /* the prompt is the single user turn built by the app (hz_title_prompt) */
  g_autoptr(GPtrArray) roles = g_ptr_array_new ();
  g_autoptr(GPtrArray) contents = g_ptr_array_new ();
  g_ptr_array_add (roles, (gpointer) "user");
  g_ptr_array_add (contents, r->contents->pdata[r->contents->len - 1]);
  Request q = { .roles = roles, .contents = contents };
  HzChatFit fit;
  g_autofree HzToken *prompt = build_prompt (model, &q, hz_context_n_ctx (title_ctx),
                                             TITLE_MAX_TOKENS, &fit, NULL);
  const gsize n_prompt = fit.n_tokens;
  if (prompt == NULL || n_prompt + TITLE_MAX_TOKENS > hz_context_n_ctx (title_ctx))
    return NULL;
  HzGenerateParams params;
  hz_generate_params_init (&params);  /* greedy */
  params.n_predict = TITLE_MAX_TOKENS;
  HzGenerateStats stats = { 0 };
  params.special = hz_model_reasoning_special (model);
  g_autofree char *text = hz_context_generate (title_ctx, prompt, n_prompt, &params,
                                               on_title_token, s, r->cancellable, NULL, &stats,
                                               &error);
  if (text == NULL || stats.stop_reason == HZ_STOP_CALLBACK)
    return NULL;  /* interrupted: a half title is no title */
  /* a thinking model's title is its answer (none when it was still thinking) */
  char *answer = NULL;
  hz_reasoning_split (hz_model_reasoning_format (model),
                      hz_model_reasoning_opened (model, prompt, n_prompt), text, -1, NULL,
                      &answer);
  if (*answer == '\0')
    g_clear_pointer (&answer, g_free);
  return answer;
}

/* The worker thread's LoRA adapters (hot-loaded between replies). */
typedef struct {
  char       *personal, *personal_sha, *shared;  /* asked for (REQ_ADAPTERS) */
  HzAdapter  *applied;    /* loaded for the current model, set on its context; or NULL */
  GHashTable *reported;   /* paths whose failure was shown already (once each) */
} Adapters;

static void
adapters_clear (Adapters *as)
{
  g_free (as->personal);
  g_free (as->personal_sha);
  g_free (as->shared);
  g_clear_pointer (&as->applied, hz_adapter_unref);
  g_clear_pointer (&as->reported, g_hash_table_unref);
}

static const char *
nonempty (const char *p)
{
  return p && *p ? p : NULL;
}

/* Make ctx serve the adapter asked for (the personal one, else the shared one; see
 * hz_engine_worker_set_adapters) or the base. Runs between requests only, so a reply
 * keeps the adapter it started with. Failures keep the base model: adapters trained on
 * another model are only logged; anything else is posted once per path. */
static void
adapters_apply (Shared *s, Adapters *as, HzModel *model, HzContext *ctx, gboolean reload)
{
  g_autofree char *had = as->applied ? g_strdup (hz_adapter_path (as->applied)) : NULL;
  if (reload)   /* another model, or files that may have been rewritten in place */
    g_clear_pointer (&as->applied, hz_adapter_unref);
  if (model == NULL || ctx == NULL)
    return;
  const char *want = nonempty (as->personal) ? as->personal : nonempty (as->shared);
  g_autoptr(GError) error = NULL;

  if (want != NULL && (as->applied == NULL || g_strcmp0 (had, want) != 0))
    {
      g_clear_pointer (&as->applied, hz_adapter_unref);
      const char *sha = want == as->personal ? nonempty (as->personal_sha) : NULL;
      if (sha != NULL && g_strcmp0 (sha, hz_model_sha256 (model)) != 0)
        g_set_error (&error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH,
                     "%s was trained on another model (base sha256 %.12s...)", want, sha);
      else
        as->applied = hz_adapter_load (model, want, &error);
    }
  HzAdapter *list[1] = { as->applied };
  if (error == NULL && want != NULL &&
      !hz_context_set_adapters (ctx, list, NULL, 1, &error))
    g_clear_pointer (&as->applied, hz_adapter_unref);
  if (error != NULL || want == NULL)
    {
      g_clear_pointer (&as->applied, hz_adapter_unref);
      hz_context_set_adapters (ctx, NULL, NULL, 0, NULL);   /* the base model */
    }
  if (error != NULL)
    {
      if (g_error_matches (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_ADAPTER_MISMATCH))
        g_message ("adapter not used with %s: %s", hz_model_name (model), error->message);
      else if (g_hash_table_add (as->reported, g_strdup (want)))
        {
          g_message ("adapter %s: %s (the base model serves)", want, error->message);
          Event *ev = event_new (EV_ADAPTER_ERROR, 0);
          ev->path = g_strdup (want);
          ev->error = g_steal_pointer (&error);
          post_event (s, ev);
        }
    }
  const char *now = as->applied ? hz_adapter_path (as->applied) : NULL;
  if (g_strcmp0 (now, had) != 0)
    {
      Event *ev = event_new (EV_ADAPTER_CHANGED, 0);
      ev->path = g_strdup (now);
      post_event (s, ev);
    }
}

/* The worker thread's model in use and its context. */
typedef struct {
  HzModel   *model;
  HzContext *ctx;
  char      *path;    /* the model's name in the registry, NULL when none */
  guint      n_ctx;   /* the context size asked for (0 = the engine's default) */
} InUse;

/* Drop the context and hand the model back to the registry (it stays loaded, idle, while
 * the memory budget allows); `path` and `n_ctx` stay, to come back to. */
static void
in_use_release (Shared *s, InUse *use)
{
  g_clear_pointer (&use->ctx, hz_context_free);
  if (use->model != NULL)
    hz_registry_release (s->registry, g_steal_pointer (&use->model));
}

/* Release the model in use and switch to `path` with a context of `n_ctx` (through the
 * registry: a model still loaded costs no load). FALSE: nothing is in use, and a file
 * that failed to load is forgotten by the registry (it may be fixed and retried). */
static gboolean
in_use_switch (Shared *s, InUse *use, const char *path, guint n_ctx, GError **error)
{
  GError *local = NULL;
  HzModel *model = NULL;
  HzContext *ctx = NULL;

  in_use_release (s, use);
  g_clear_pointer (&use->path, g_free);
  if (!hz_registry_add (s->registry, path, path, NULL, &local) &&
      g_error_matches (local, HZ_SERVE_ERROR, HZ_SERVE_ERROR_EXISTS))
    g_clear_error (&local);
  if (local == NULL)
    model = hz_registry_acquire (s->registry, path, &local);
  if (model != NULL)
    ctx = new_context (model, n_ctx, &local);
  if (ctx == NULL)
    {
      if (model != NULL)
        hz_registry_release (s->registry, model);
      hz_registry_remove (s->registry, path, NULL);
      if (local == NULL)
        local = g_error_new_literal (HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_FAILED, _("Unknown error"));
      g_propagate_error (error, local);
      return FALSE;
    }
  use->model = model;
  use->ctx = ctx;
  use->path = g_strdup (path);
  use->n_ctx = n_ctx;
  return TRUE;
}

/* REQ_LOAD: switch to r->path. When it cannot be loaded, the model used before (if any,
 * and another file) serves on: EV_MODEL_ERROR then names it in `kept`. */
static void
load_model (Shared *s, InUse *use, Adapters *adapters, Request *r)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *before = g_strdup (use->path);
  const guint before_n_ctx = use->n_ctx;
  Event *ev;

  if (in_use_switch (s, use, r->path, r->n_ctx, &error))
    {
      ev = event_new (EV_MODEL_LOADED, 0);
      ev->path = g_strdup (r->path);
      ev->name = g_strdup (hz_model_name (use->model));
      ev->n_ctx = hz_context_n_ctx (use->ctx);
    }
  else
    {
      ev = event_new (EV_MODEL_ERROR, 0);
      ev->path = g_strdup (r->path);
      ev->error = g_steal_pointer (&error);
      /* normally still loaded (released just now, idle): back at once, without a load */
      if (before != NULL && strcmp (before, r->path) != 0)
        {
          if (in_use_switch (s, use, before, before_n_ctx, &error))
            {
              ev->kept = g_steal_pointer (&before);
              ev->name = g_strdup (hz_model_name (use->model));
              ev->n_ctx = hz_context_n_ctx (use->ctx);
              ev->n_ctx_request = before_n_ctx;
            }
          else
            g_message ("the model used before %s cannot be used again: %s", r->path,
                       error->message);
        }
    }
  post_event (s, ev);
  /* adapters are loaded for each model anew (after "model-loaded") */
  adapters_apply (s, adapters, use->model, use->ctx, TRUE);
}

static gpointer
worker_thread (gpointer data)
{
  Shared *s = data;
  InUse use = { NULL };
  gboolean running = TRUE;
  Adapters adapters = { .reported = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL) };

  while (running)
    {
      Request *r = g_async_queue_pop (s->queue);

      switch (r->kind)
        {
        case REQ_LOAD:
          load_model (s, &use, &adapters, r);
          break;

        case REQ_RESIZE:
          if (use.model != NULL)
            {
              g_autoptr(GError) error = NULL;
              HzContext *fresh = new_context (use.model, r->n_ctx, &error);
              if (fresh == NULL)
                {
                  /* Keep the context there is; say so in the log. */
                  g_warning ("cannot make a context of %u tokens: %s", r->n_ctx, error->message);
                }
              else
                {
                  Event *ev = event_new (EV_CONTEXT_CHANGED, 0);
                  hz_context_free (use.ctx);
                  use.ctx = fresh;
                  use.n_ctx = r->n_ctx;
                  ev->n_ctx = hz_context_n_ctx (use.ctx);
                  post_event (s, ev);
                  adapters_apply (s, &adapters, use.model, use.ctx, FALSE);
                }
            }
          break;

        case REQ_GENERATE:
          run_generate (s, use.ctx, r);
          g_mutex_lock (&s->lock);
          g_ptr_array_remove (s->active, r->cancellable);
          g_mutex_unlock (&s->lock);
          break;

        case REQ_TITLE:
          {
            Event *ev = event_new (EV_TITLE, r->id);
            ev->text = run_title (use.model, s, r);
            post_event (s, ev);
            g_mutex_lock (&s->lock);
            g_ptr_array_remove (s->active, r->cancellable);
            g_mutex_unlock (&s->lock);
          }
          break;

        case REQ_ADAPTERS:
          g_free (adapters.personal);
          g_free (adapters.personal_sha);
          g_free (adapters.shared);
          adapters.personal = g_strdup (r->path);
          adapters.personal_sha = g_strdup (r->base_sha256);
          adapters.shared = g_strdup (r->shared);
          /* a file written anew under a path may load now: report its failure again */
          g_hash_table_remove_all (adapters.reported);
          adapters_apply (s, &adapters, use.model, use.ctx, TRUE);
          break;

        case REQ_SHUTDOWN:
          running = FALSE;
          break;
        }
      request_free (r);
    }

  in_use_release (s, &use);
  g_free (use.path);
  adapters_clear (&adapters);
  shared_unref (s);
  return NULL;
}

/* ------------------------------------------------------------------ public API */

HzEngineWorker *
hz_engine_worker_new (void)
{
  return hz_engine_worker_new_full (0);
}

HzEngineWorker *
hz_engine_worker_new_full (guint64 memory_budget)
{
  return g_object_new (HZ_TYPE_ENGINE_WORKER, "memory-budget", memory_budget, NULL);
}

/* Queue order: background requests (titles) after everything else, else first come
 * first served. */
static gint
compare_requests (gconstpointer a, gconstpointer b, gpointer data)
{
  const Request *ra = a, *rb = b;
  gboolean bga = ra->kind == REQ_TITLE, bgb = rb->kind == REQ_TITLE;

  if (bga != bgb)
    return bga ? 1 : -1;
  return ra->seq < rb->seq ? -1 : ra->seq > rb->seq;
}

static void
push (HzEngineWorker *self, Request *r)
{
  r->seq = ++self->next_seq;
  g_async_queue_push_sorted (self->shared->queue, r, compare_requests, NULL);
}

void
hz_engine_worker_load_model (HzEngineWorker *self, const char *path)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  hz_engine_worker_load_model_full (self, path, self->n_ctx_request);
}

void
hz_engine_worker_load_model_full (HzEngineWorker *self, const char *path, guint n_ctx)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  g_return_if_fail (path != NULL);
  g_return_if_fail (!self->shut_down);

  self->n_ctx_request = n_ctx;
  Request *r = g_new0 (Request, 1);
  r->kind = REQ_LOAD;
  r->path = g_strdup (path);
  r->n_ctx = self->n_ctx_request;
  g_free (self->model_path);
  self->model_path = g_strdup (r->path);  /* `path` may have been self->model_path */
  self->model_loaded = FALSE;
  self->n_ctx = 0;
  /* first the handlers (they may give back a use of the model being left), then the
   * thread: it fits the new model into the memory budget */
  g_signal_emit (self, signals[SIG_MODEL_LOADING], 0, self->model_path);
  push (self, r);
}

guint
hz_engine_worker_generate (HzEngineWorker         *self,
                           const HzChatMessage    *messages,
                           gsize                   n_messages,
                           const HzGenerateParams *params)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), 0);
  g_return_val_if_fail (messages != NULL || n_messages == 0, 0);
  g_return_val_if_fail (params != NULL, 0);
  g_return_val_if_fail (!self->shut_down, 0);

  Request *r = g_new0 (Request, 1);
  r->kind = REQ_GENERATE;
  r->id = ++self->next_id;
  r->roles = g_ptr_array_new_with_free_func (g_free);
  r->contents = g_ptr_array_new_with_free_func (g_free);
  for (gsize i = 0; i < n_messages; i++)
    {
      g_ptr_array_add (r->roles, g_strdup (messages[i].role));
      g_ptr_array_add (r->contents, g_strdup (messages[i].content ? messages[i].content : ""));
    }
  r->params = *params;
  r->stop = g_strdupv ((char **) params->stop_strings);
  r->params.stop_strings = (const char *const *) r->stop;
  r->cancellable = g_cancellable_new ();

  g_mutex_lock (&self->shared->lock);
  g_ptr_array_add (self->shared->active, g_object_ref (r->cancellable));
  g_mutex_unlock (&self->shared->lock);

  guint id = r->id;
  push (self, r);  /* the worker owns (and may already have freed) `r` from here on */
  return id;
}

guint
hz_engine_worker_generate_title (HzEngineWorker *self, const char *prompt)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), 0);
  g_return_val_if_fail (prompt != NULL, 0);
  g_return_val_if_fail (!self->shut_down, 0);

  Request *r = g_new0 (Request, 1);
  r->kind = REQ_TITLE;
  r->id = ++self->next_id;
  r->roles = g_ptr_array_new_with_free_func (g_free);
  r->contents = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (r->roles, g_strdup ("user"));
  g_ptr_array_add (r->contents, g_strdup (prompt));
  r->cancellable = g_cancellable_new ();
  g_mutex_lock (&self->shared->lock);
  g_ptr_array_add (self->shared->active, g_object_ref (r->cancellable));
  g_mutex_unlock (&self->shared->lock);

  guint id = r->id;
  push (self, r);
  return id;
}

guint
hz_engine_worker_get_n_loads (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), 0);
  return hz_registry_n_loads (self->shared->registry);
}

guint64
hz_engine_worker_get_loaded_bytes (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), 0);
  return hz_registry_loaded_bytes (self->shared->registry);
}

HzModel *
hz_engine_worker_acquire_model (HzEngineWorker *self, const char *path, GError **error)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  return hz_registry_acquire (self->shared->registry, path, error);
}

void
hz_engine_worker_release_model (HzEngineWorker *self, HzModel *model)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  g_return_if_fail (model != NULL);
  hz_registry_release (self->shared->registry, model);
}

void
hz_engine_worker_cancel (HzEngineWorker *self)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  Shared *s = self->shared;

  g_mutex_lock (&s->lock);
  for (guint i = 0; i < s->active->len; i++)
    g_cancellable_cancel (s->active->pdata[i]);
  g_mutex_unlock (&s->lock);
}

void
hz_engine_worker_set_context_length (HzEngineWorker *self, guint n_ctx)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  g_return_if_fail (!self->shut_down);

  if (self->n_ctx_request == n_ctx)
    return;
  self->n_ctx_request = n_ctx;
  if (self->model_path == NULL)
    return;  /* applies to the next load */
  Request *r = g_new0 (Request, 1);
  r->kind = REQ_RESIZE;
  r->n_ctx = n_ctx;
  push (self, r);
}

guint
hz_engine_worker_get_context_length (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), 0);
  return self->n_ctx;
}

gboolean
hz_engine_worker_is_model_loaded (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), FALSE);
  return self->model_loaded;
}

const char *
hz_engine_worker_get_model_path (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), NULL);
  return self->model_path;
}

void
hz_engine_worker_set_adapters (HzEngineWorker *self, const char *personal,
                               const char *personal_base_sha256, const char *shared)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  g_return_if_fail (!self->shut_down);

  personal = nonempty (personal);
  shared = nonempty (shared);
  g_free (self->want_personal);
  g_free (self->want_sha);
  g_free (self->want_shared);
  self->want_personal = g_strdup (personal);
  self->want_sha = g_strdup (nonempty (personal_base_sha256));
  self->want_shared = g_strdup (shared);
  Request *r = g_new0 (Request, 1);
  r->kind = REQ_ADAPTERS;
  r->path = g_strdup (personal);
  r->base_sha256 = g_strdup (self->want_sha);
  r->shared = g_strdup (shared);
  push (self, r);
}

const char *
hz_engine_worker_get_adapter (HzEngineWorker *self)
{
  g_return_val_if_fail (HZ_IS_ENGINE_WORKER (self), NULL);
  return self->adapter;
}

/* The store's active adapter when it is `path` (its base model's sha256), else NULL. */
static char *
store_base_of (HzStore *store, const char *path)
{
  if (store == NULL || path == NULL)
    return NULL;
  g_autoptr(HzLearnerAdapter) active = hz_store_adapter_get_active (store, NULL);
  return active && g_strcmp0 (active->path, path) == 0 ? g_strdup (active->base_sha256) : NULL;
}

static void
on_active_adapter_changed (HzLearner *learner, const char *path, HzEngineWorker *self)
{
  g_autofree char *sha = store_base_of (self->store, nonempty (path));
  g_autofree char *shared = g_strdup (self->want_shared);
  hz_engine_worker_set_adapters (self, path, sha, shared);
}

static void
on_shared_adapter_changed (HzLearner *learner, const char *path, guint64 round,
                           HzEngineWorker *self)
{
  g_autofree char *personal = g_strdup (self->want_personal);
  g_autofree char *sha = g_strdup (self->want_sha);
  hz_engine_worker_set_adapters (self, personal, sha, path);
}

void
hz_engine_worker_follow_learner (HzEngineWorker *self, HzLearner *learner, HzStore *store)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  g_return_if_fail (HZ_IS_LEARNER (learner));

  self->store = store;
  g_autoptr(HzLearnerAdapter) active = store ? hz_store_adapter_get_active (store, NULL) : NULL;
  g_autofree char *shared = g_build_filename (g_get_user_data_dir (), "hanzo", "adapters",
                                              "shared", NULL);
  g_autofree char *shared_cfg = g_build_filename (shared, "adapter_config.json", NULL);
  const gboolean have_shared = g_file_test (shared_cfg, G_FILE_TEST_IS_REGULAR);
  if (active != NULL || have_shared)
    hz_engine_worker_set_adapters (self, active ? active->path : NULL,
                                   active ? active->base_sha256 : NULL,
                                   have_shared ? shared : NULL);
  g_signal_connect_object (learner, "active-adapter-changed",
                           G_CALLBACK (on_active_adapter_changed), self, 0);
  g_signal_connect_object (learner, "shared-adapter-changed",
                           G_CALLBACK (on_shared_adapter_changed), self, 0);
}

void
hz_engine_worker_shutdown (HzEngineWorker *self)
{
  g_return_if_fail (HZ_IS_ENGINE_WORKER (self));
  if (self->shut_down)
    return;
  self->shut_down = TRUE;
  hz_engine_worker_cancel (self);
  Request *r = g_new0 (Request, 1);
  r->kind = REQ_SHUTDOWN;
  push (self, r);
}

/* ------------------------------------------------------------------ GObject */

static void
hz_engine_worker_dispose (GObject *object)
{
  HzEngineWorker *self = HZ_ENGINE_WORKER (object);

  hz_engine_worker_shutdown (self);
  G_OBJECT_CLASS (hz_engine_worker_parent_class)->dispose (object);
}

static void
hz_engine_worker_finalize (GObject *object)
{
  HzEngineWorker *self = HZ_ENGINE_WORKER (object);

  shared_unref (self->shared);
  g_free (self->model_path);
  g_free (self->want_personal);
  g_free (self->want_sha);
  g_free (self->want_shared);
  g_free (self->adapter);
  G_OBJECT_CLASS (hz_engine_worker_parent_class)->finalize (object);
}

static void
hz_engine_worker_set_property (GObject *object, guint id, const GValue *value,
                               GParamSpec *pspec)
{
  HzEngineWorker *self = HZ_ENGINE_WORKER (object);

  switch (id)
    {
    case PROP_MEMORY_BUDGET:
      self->memory_budget = g_value_get_uint64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

static void
hz_engine_worker_get_property (GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
  HzEngineWorker *self = HZ_ENGINE_WORKER (object);

  switch (id)
    {
    case PROP_MEMORY_BUDGET:
      g_value_set_uint64 (value, self->memory_budget);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, id, pspec);
    }
}

/* The registry needs the budget (a construct property): the thread starts here. */
static void
hz_engine_worker_constructed (GObject *object)
{
  HzEngineWorker *self = HZ_ENGINE_WORKER (object);

  G_OBJECT_CLASS (hz_engine_worker_parent_class)->constructed (object);
  self->shared->registry = hz_registry_new (self->memory_budget);
  GThread *thread = g_thread_new ("hz-engine", worker_thread, shared_ref (self->shared));
  g_thread_unref (thread);
}

static void
hz_engine_worker_class_init (HzEngineWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = hz_engine_worker_dispose;
  object_class->finalize = hz_engine_worker_finalize;
  object_class->set_property = hz_engine_worker_set_property;
  object_class->get_property = hz_engine_worker_get_property;
  object_class->constructed = hz_engine_worker_constructed;

  g_object_class_install_property (object_class, PROP_MEMORY_BUDGET,
    g_param_spec_uint64 ("memory-budget", NULL, NULL, 0, G_MAXUINT64, 0,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  signals[SIG_MODEL_LOADING] =
    g_signal_new ("model-loading", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIG_MODEL_LOADED] =
    g_signal_new ("model-loaded", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_STRING);
  signals[SIG_MODEL_ERROR] =
    g_signal_new ("model-error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_ERROR);
  signals[SIG_CONTEXT_CHANGED] =
    g_signal_new ("context-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_UINT);
  signals[SIG_TOKEN] =
    g_signal_new ("token", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_STRING, G_TYPE_UINT);
  signals[SIG_REASONING] =
    g_signal_new ("reasoning", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_STRING, G_TYPE_UINT);
  signals[SIG_FINISHED] =
    g_signal_new ("finished", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_UINT, G_TYPE_STRING,
                  G_TYPE_POINTER);
  signals[SIG_TITLE] =
    g_signal_new ("title", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
  signals[SIG_ERROR] =
    g_signal_new ("error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_ERROR);
  signals[SIG_ADAPTER_CHANGED] =
    g_signal_new ("adapter-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIG_ADAPTER_ERROR] =
    g_signal_new ("adapter-error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_STRING, G_TYPE_ERROR);
  signals[SIG_TRIMMED] =
    g_signal_new ("trimmed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_UINT);
}

static void
hz_engine_worker_init (HzEngineWorker *self)
{
  Shared *s = g_new0 (Shared, 1);

  g_atomic_ref_count_init (&s->refcount);
  s->queue = g_async_queue_new_full ((GDestroyNotify) request_free);
  s->context = g_main_context_ref_thread_default ();
  g_weak_ref_init (&s->owner, self);
  g_mutex_init (&s->lock);
  s->active = g_ptr_array_new_with_free_func (g_object_unref);
  s->pending = g_string_new (NULL);
  s->pending_reasoning = g_string_new (NULL);
  const char *delay = g_getenv ("HZ_WORKER_TOKEN_DELAY_US");
  s->token_delay_us = delay ? strtoul (delay, NULL, 10) : 0;
  self->shared = s;
}
