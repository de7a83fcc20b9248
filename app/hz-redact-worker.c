/* hz-redact-worker.c — HzRedactWorker (see hz-redact-worker.h). */
#include "hz-redact-worker.h"

#include <hanzo/redact-gate.h>

#define APP_DATA_KEY     "hz-redact-worker"
#define BUSY_RETRY_S     1

struct _HzRedactWorker {
  GObject       parent_instance;
  char         *store_path;
  GMainContext *context;       /* where "finished" is emitted */
  GThreadPool  *pool;          /* one thread; NULL once stopped */
  GCancellable *cancellable;
  gint          requested;     /* atomic: a pass is queued and has not started yet */
  gint          running;       /* atomic: passes started and not yet reported */
  gboolean      stopped;       /* main thread */
  GSource      *retry;         /* main thread: a retry after HZ_STORE_ERROR_BUSY */
  /* the pool thread's own state (one pass at a time, so never touched concurrently) */
  HzStore      *store;
  HzRedactor   *redactor;
};

G_DEFINE_FINAL_TYPE (HzRedactWorker, hz_redact_worker, G_TYPE_OBJECT)

enum { SIGNAL_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ------------------------------------------------------------------ the pass */

typedef struct {
  HzRedactWorker *self;   /* strong */
  guint           n;
  char           *error_message;
  gboolean        busy;
} PassResult;

static void
pass_result_free (gpointer data)
{
  PassResult *r = data;
  g_object_unref (r->self);
  g_free (r->error_message);
  g_free (r);
}

static gboolean
retry_timeout (gpointer data)
{
  HzRedactWorker *self = data;
  g_clear_pointer (&self->retry, g_source_unref);
  hz_redact_worker_queue (self);
  return G_SOURCE_REMOVE;
}

static void
cancel_retry (HzRedactWorker *self)
{
  if (self->retry)
    g_source_destroy (self->retry);
  g_clear_pointer (&self->retry, g_source_unref);
}

/* Main thread: report a finished pass. */
static gboolean
pass_finished_main (gpointer data)
{
  PassResult *r = data;
  HzRedactWorker *self = r->self;
  g_atomic_int_add (&self->running, -1);
  if (self->stopped)
    return G_SOURCE_REMOVE;
  if (r->busy && self->retry == NULL)
    {
      self->retry = g_timeout_source_new_seconds (BUSY_RETRY_S);
      g_source_set_callback (self->retry, retry_timeout, self, NULL);
      g_source_attach (self->retry, self->context);
    }
  g_signal_emit (self, signals[SIGNAL_FINISHED], 0, r->n, r->error_message);
  return G_SOURCE_REMOVE;
}

/* Pool thread: one pass of the gate over everything pending. */
static void
run_pass (gpointer job, gpointer user_data)
{
  (void) job;
  HzRedactWorker *self = user_data;
  g_atomic_int_inc (&self->running);
  /* from here on a new request gets a pass of its own */
  g_atomic_int_set (&self->requested, 0);
  g_autoptr (GError) error = NULL;
  gint n = -1;
  if (!g_cancellable_is_cancelled (self->cancellable))
    {
      if (self->store == NULL)
        self->store = hz_store_open (self->store_path, &error);
      if (self->store && self->redactor == NULL)
        self->redactor = hz_redactor_new (&error);
      if (self->store && self->redactor)
        {
          const HzRedactGateOptions o = { .cancellable = self->cancellable };
          n = hz_redact_gate_run_full (self->redactor, self->store, &o, &error);
        }
    }
  if (g_cancellable_is_cancelled (self->cancellable))
    {
      g_atomic_int_add (&self->running, -1);
      return;   /* stopping: nobody listens */
    }
  PassResult *r = g_new0 (PassResult, 1);
  r->self = g_object_ref (self);
  r->n = n > 0 ? (guint) n : 0;
  if (error)
    {
      r->error_message = g_strdup (error->message);
      r->busy = g_error_matches (error, HZ_STORE_ERROR, HZ_STORE_ERROR_BUSY);
      g_message ("redaction gate: %s%s", error->message,
                 r->busy ? " (retrying)" : " (the messages stay pending)");
    }
  /* a source of its own rather than g_main_context_invoke(), which would run the callback
   * right here when the context is the process's default and nobody holds it right now */
  GSource *idle = g_idle_source_new ();
  g_source_set_callback (idle, pass_finished_main, r, pass_result_free);
  g_source_attach (idle, self->context);
  g_source_unref (idle);
}

/* ------------------------------------------------------------------ public API */

HzRedactWorker *
hz_redact_worker_new (const char *store_path)
{
  g_return_val_if_fail (store_path != NULL, NULL);
  HzRedactWorker *self = g_object_new (HZ_TYPE_REDACT_WORKER, NULL);
  self->store_path = g_strdup (store_path);
  return self;
}

void
hz_redact_worker_queue (HzRedactWorker *self)
{
  g_return_if_fail (HZ_IS_REDACT_WORKER (self));
  if (self->stopped)
    return;
  if (g_atomic_int_compare_and_exchange (&self->requested, 0, 1))
    g_thread_pool_push (self->pool, GINT_TO_POINTER (1), NULL);
}

gboolean
hz_redact_worker_is_busy (HzRedactWorker *self)
{
  g_return_val_if_fail (HZ_IS_REDACT_WORKER (self), FALSE);
  return g_atomic_int_get (&self->requested) || g_atomic_int_get (&self->running) > 0;
}

void
hz_redact_worker_stop (HzRedactWorker *self)
{
  g_return_if_fail (HZ_IS_REDACT_WORKER (self));
  if (self->stopped)
    return;
  self->stopped = TRUE;
  cancel_retry (self);
  g_cancellable_cancel (self->cancellable);
  /* drop a queued pass, wait for the running one (it stops between two messages) */
  g_thread_pool_free (g_steal_pointer (&self->pool), TRUE, TRUE);
  g_atomic_int_set (&self->requested, 0);
  g_clear_pointer (&self->store, hz_store_close);
  g_clear_pointer (&self->redactor, hz_redactor_free);
}

/* ------------------------------------------------------------------ the application's */

static void
on_app_shutdown (GApplication *app, HzRedactWorker *self)
{
  (void) app;
  hz_redact_worker_stop (self);
}

HzRedactWorker *
hz_redact_worker_get_for_application (GApplication *app)
{
  g_return_val_if_fail (G_IS_APPLICATION (app), NULL);
  return g_object_get_data (G_OBJECT (app), APP_DATA_KEY);
}

void
hz_redact_worker_notify (GApplication *app, HzStore *store)
{
  g_return_if_fail (G_IS_APPLICATION (app));
  if (store == NULL)
    return;
  HzRedactWorker *self = hz_redact_worker_get_for_application (app);
  if (self == NULL)
    {
      self = hz_redact_worker_new (hz_store_get_path (store));
      g_object_set_data_full (G_OBJECT (app), APP_DATA_KEY, self, g_object_unref);
      g_signal_connect_object (app, "shutdown", G_CALLBACK (on_app_shutdown), self, 0);
    }
  hz_redact_worker_queue (self);
}

/* ------------------------------------------------------------------ GObject */

static void
hz_redact_worker_dispose (GObject *object)
{
  HzRedactWorker *self = HZ_REDACT_WORKER (object);
  hz_redact_worker_stop (self);
  G_OBJECT_CLASS (hz_redact_worker_parent_class)->dispose (object);
}

static void
hz_redact_worker_finalize (GObject *object)
{
  HzRedactWorker *self = HZ_REDACT_WORKER (object);
  g_free (self->store_path);
  g_clear_object (&self->cancellable);
  g_main_context_unref (self->context);
  G_OBJECT_CLASS (hz_redact_worker_parent_class)->finalize (object);
}

static void
hz_redact_worker_class_init (HzRedactWorkerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = hz_redact_worker_dispose;
  object_class->finalize = hz_redact_worker_finalize;

  signals[SIGNAL_FINISHED] = g_signal_new ("finished", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                           G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
}

static void
hz_redact_worker_init (HzRedactWorker *self)
{
  self->context = g_main_context_ref_thread_default ();
  self->cancellable = g_cancellable_new ();
  /* one non-exclusive thread: created when a pass is pushed, gone when idle */
  self->pool = g_thread_pool_new (run_pass, self, 1, FALSE, NULL);
}
