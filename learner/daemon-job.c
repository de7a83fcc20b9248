/* learner/daemon-job.c — hanzo-learner's nightly job (see daemon-job.h). */
#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include "daemon-job.h"
#include "checkpoint.h"
#include "hanzo/egress-dp.h"
#include "federation.h"
#include "hanzo-store-learner.h"
#include "hanzo/redact-engine.h"
#include "hanzo/redact-gate.h"

void
hz_learner_job_config_init (HzLearnerJobConfig *c)
{
  *c = (HzLearnerJobConfig) { 0 };
  hz_learn_job_params_init (&c->job);
  c->adapters_dir = g_build_filename (g_get_user_data_dir (), "hanzo", "adapters", NULL);
  c->shared_dir = g_build_filename (c->adapters_dir, "shared", NULL);
  c->heldout_fraction = 0.2;
  c->keep = 3;
  c->guard_max_messages = 200;
}

void
hz_learner_job_config_clear (HzLearnerJobConfig *c)
{
  g_clear_pointer (&c->store_path, g_free);
  g_clear_pointer (&c->model_path, g_free);
  g_clear_pointer (&c->adapters_dir, g_free);
  g_clear_pointer (&c->shared_dir, g_free);
  g_clear_pointer (&c->guard_model_path, g_free);
}

/* ------------------------------------------------------------------ redaction gate */

void
hz_learner_gate_report_clear (HzLearnerGateReport *r)
{
  g_clear_pointer (&r->note, g_free);
}

/* A path-valued key of the app's settings, or NULL when empty or not installed. */
static char *
app_settings_path (const char *key)
{
  g_autoptr (GSettings) s = hz_learner_app_settings (key);
  g_autofree char *path = s ? g_settings_get_string (s, key) : NULL;
  return path && *path ? g_steal_pointer (&path) : NULL;
}

char *
hz_learner_guard_model_from_settings (void)
{
  return app_settings_path ("guard-model-path");
}

char *
hz_learner_model_from_settings (void)
{
  return app_settings_path ("model-path");
}

typedef struct {
  gint                *stop;
  HzLearnerJobProgress progress;
  gpointer             user_data;
  double               from, to;   /* this pass's share of the gate's 0..1 */
  double               reported;   /* last fraction passed on */
} GateProgress;

static gboolean
gate_progress (guint done, guint total, gpointer data)
{
  GateProgress *g = data;
  const double f = g->from + (g->to - g->from) * done / MAX (total, 1);
  /* thousands of messages: pass on steps of 1/1000 (each becomes a D-Bus signal) */
  if (g->progress && (done == total || f - g->reported >= 1e-3))
    {
      g->progress (f, g->user_data);
      g->reported = f;
    }
  return g->stop == NULL || !g_atomic_int_get (g->stop);
}

/* One pass of the gate; FALSE on a store error. */
static gboolean
gate_pass (const HzRedactor *r, HzStore *store, HzRedactFlags flags, guint max_messages,
           GateProgress *gp, guint *done, HzLearnerGateReport *report, GError **error)
{
  const HzRedactGateOptions o = {
    .flags = flags, .max_messages = max_messages, .progress = gate_progress, .user_data = gp,
  };
  const gint n = hz_redact_gate_run_full (r, store, &o, error);
  if (n < 0)
    return FALSE;
  *done = (guint) n;
  if (gp->stop && g_atomic_int_get (gp->stop))
    report->stopped = TRUE;
  return TRUE;
}

gboolean
hz_learner_job_redact (const HzLearnerJobConfig *c, HzStore *store, gint *stop,
                       HzLearnerJobProgress progress, gpointer user_data,
                       HzLearnerGateReport *report, GError **error)
{
  *report = (HzLearnerGateReport) { 0 };
  HzRedactor *r = hz_redactor_new (error);
  if (r == NULL)
    return FALSE;
  const gboolean guard = c->guard_model_path && *c->guard_model_path;
  GateProgress gp = { stop, progress, user_data, 0.0, guard ? 0.5 : 1.0, 0.0 };
  gboolean ok = gate_pass (r, store, 0, 0, &gp, &report->redacted, report, error);
  if (ok && guard && !report->stopped)
    {
      /* the model pass: the guard model lives only as long as this pass, before the base
       * model of the training is loaded */
      g_autoptr (GError) why = NULL;
      g_autoptr (HzModel) model = hz_model_load (c->guard_model_path, NULL, &why);
      if (model && hz_redactor_set_engine_model (r, model, c->guard_model_ctx, c->guard_model_tokens,
                                                      &why))
        {
          report->model_used = TRUE;
          gp.from = 0.5;
          gp.to = 1.0;
          ok = gate_pass (r, store, HZ_REDACT_MODEL, c->guard_max_messages, &gp,
                          &report->redacted_model, report, error);
          hz_redactor_set_model (r, NULL, NULL, NULL);   /* its context, before the model */
        }
      else
        report->note = g_strdup_printf ("guard model %s not used (%s): redacted with the "
                                        "rule-based redactor only", c->guard_model_path,
                                        why ? why->message : "no context");
    }
  hz_redactor_free (r);
  if (report->note)
    g_message ("redaction gate: %s", report->note);
  if (report->redacted || report->redacted_model)
    g_message ("redaction gate: %u message(s) redacted, %u with the guard model%s",
               report->redacted, report->redacted_model,
               report->stopped ? " (stopped; the rest waits for the next job)" : "");
  if (ok && progress && !report->stopped)
    progress (1.0, user_data);
  return ok;
}

typedef struct {
  gint                *stop;
  HzLearnerJobProgress progress;
  gpointer             user_data;
} ProgressCtx;

static gboolean
on_step (int64_t step, int64_t total, double loss, gpointer data)
{
  (void) loss;
  ProgressCtx *p = data;
  if (p->progress)
    p->progress (HZ_LEARNER_JOB_REDACT_SHARE
                 + (1.0 - HZ_LEARNER_JOB_REDACT_SHARE) * step / MAX (total, 1), p->user_data);
  return !g_atomic_int_get (p->stop);
}

/* The gate's 0..1 as the first HZ_LEARNER_JOB_REDACT_SHARE of the job. */
static void
gate_share_progress (double fraction, gpointer data)
{
  ProgressCtx *p = data;
  if (p->progress)
    p->progress (HZ_LEARNER_JOB_REDACT_SHARE * fraction, p->user_data);
}

static void
remove_adapter_dir (const char *dir)
{
  static const char *const files[] = {
    "adapter_model.safetensors", "adapter_config.json", "adapter.gguf",
  };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autofree char *p = g_build_filename (dir, files[i], NULL);
      g_unlink (p);
    }
  g_rmdir (dir);
}

/* Keep the newest `keep` adapters and the active one; forget and delete the rest. */
static gboolean
prune (HzStore *store, guint keep, GError **error)
{
  g_autoptr (GPtrArray) all = hz_store_adapter_list (store, error);
  if (all == NULL)
    return FALSE;
  for (guint i = keep; i < all->len; i++)
    {
      const HzLearnerAdapter *a = all->pdata[i];
      if (a->active)
        continue;
      if (!hz_store_adapter_delete (store, a->id, error))
        return FALSE;
      remove_adapter_dir (a->path);
    }
  return TRUE;
}

gboolean
hz_learner_job_run (const HzLearnerJobConfig *c, gint *stop, HzLearnerJobProgress progress,
                    gpointer user_data, HzLearnerJobOutcome *outcome, char **adapter_path,
                    gint64 *run_id, GError **error)
{
  *adapter_path = NULL;
  *run_id = 0;
  g_autoptr (HzStore) store = hz_store_open (c->store_path, error);
  if (store == NULL)
    return FALSE;
  ProgressCtx pc = { stop, progress, user_data };
  /* every message gets its redacted copy before the dataset is read from the copies */
  HzLearnerGateReport gate;
  const gboolean gated = hz_learner_job_redact (c, store, stop, gate_share_progress, &pc, &gate,
                                                error);
  g_autofree char *gate_note = g_steal_pointer (&gate.note);
  if (!gated)
    {
      g_prefix_error (error, "redaction gate: ");
      return FALSE;
    }
  if (gate.stopped)
    {
      *outcome = HZ_LEARNER_JOB_INTERRUPTED;
      return TRUE;
    }
  g_autoptr (HzLearnDataset) all = hz_learn_dataset_new ();
  const HzLearnStoreOptions opt = { .include_unrated = c->include_unrated };
  if (!hz_learn_dataset_add_from_store (all, store, &opt, error))
    return FALSE;
  if (all->records->len == 0)
    {
      *outcome = HZ_LEARNER_JOB_NOTHING;
      return TRUE;
    }
  HzLearnDataset *tr, *ho;
  hz_learn_dataset_split (all, c->heldout_fraction, 1, &tr, &ho);
  g_autoptr (HzLearnDataset) train = tr, held = ho;
  if (c->on_dataset)
    c->on_dataset (train, held, c->on_dataset_data);
  g_autoptr (HzModel) model = hz_model_load (c->model_path, NULL, error);
  if (model == NULL)
    return FALSE;
  const char *sha = hz_model_sha256 (model);
  /* start from the active adapter if it belongs to this base */
  g_autoptr (GError) none = NULL;
  g_autoptr (HzLearnerAdapter) active = hz_store_adapter_get_active (store, &none);
  g_autofree char *init = hz_learner_pick_start_adapter (
    active && g_str_equal (active->base_sha256, sha)
    && g_file_test (active->path, G_FILE_TEST_IS_DIR) ? active->path : NULL,
    c->shared_dir, sha);
  const gint64 id = hz_store_learner_run_begin (store, "sft", sha, error);
  if (id == 0)
    return FALSE;
  *run_id = id;
  if (g_mkdir_with_parents (c->adapters_dir, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, g_file_error_from_errno (errno),
                   "cannot create %s", c->adapters_dir);
      return FALSE;
    }
  g_autofree char *ckpt = g_build_filename (c->adapters_dir, "checkpoint", NULL);
  HzLearnJobResult res;
  g_autoptr (GError) local = NULL;
  if (!hz_learn_job_run_sft (model, train, held, &c->job, init, ckpt, on_step, &pc, &res, &local))
    {
      hz_store_learner_run_update (store, id, HZ_LEARNER_RUN_FAILED, 0, NAN, NAN, NAN, -1,
                                   local->message, NULL);
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  if (c->job.dp_sgd && res.dp_steps_run > 0 && c->job.dp.noise_multiplier > 0
      && hz_dp_record_training (store, res.dp_q, c->job.dp.noise_multiplier,
                                c->job.dp.clip_norm, (guint64) res.dp_steps_run,
                                c->job.dp.delta, error) == 0)
    {
      hz_learn_job_result_clear (&res);
      return FALSE;
    }
  HzLearnerRunStatus status;
  gint64 adapter_id = -1;
  gboolean ok = TRUE;
  if (res.interrupted)
    {
      status = HZ_LEARNER_RUN_INTERRUPTED;
      *outcome = HZ_LEARNER_JOB_INTERRUPTED;
    }
  else if (!hz_learn_job_improved (&res))
    {
      status = HZ_LEARNER_RUN_REJECTED;
      *outcome = HZ_LEARNER_JOB_REJECTED;
    }
  else
    {
      g_autofree char *name = g_strdup_printf ("run-%" G_GINT64_FORMAT, id);
      g_autofree char *dir = g_build_filename (c->adapters_dir, name, NULL);
      ok = hz_learn_save_adapter (res.lora, dir, hz_model_name (model), error)
           && (adapter_id = hz_store_adapter_add (store, dir, sha, id, res.heldout_after,
                                                  error)) != 0
           && hz_store_adapter_set_active (store, adapter_id, error)
           && prune (store, c->keep, error);
      status = ok ? HZ_LEARNER_RUN_PROMOTED : HZ_LEARNER_RUN_FAILED;
      *outcome = HZ_LEARNER_JOB_PROMOTED;
      if (ok)
        *adapter_path = g_steal_pointer (&dir);
    }
  const gboolean rec = hz_store_learner_run_update (store, id, status, res.steps, res.train_loss,
                                                    res.heldout_before, res.heldout_after,
                                                    adapter_id, ok ? gate_note : "saving the adapter failed",
                                                    ok ? error : NULL);
  hz_learn_job_result_clear (&res);
  return ok && rec;
}

gboolean
hz_learner_job_maybe_federate (const HzLearnerJobConfig *c, HzLearnerJobOutcome outcome,
                               const char *adapter, const HzFedParams *params,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data)
{
  if (outcome != HZ_LEARNER_JOB_PROMOTED || adapter == NULL || !c->job.dp_sgd
      || !hz_learner_federation_enabled ())
    return FALSE;
  hz_learner_federate_async (params, c->store_path, adapter, c->shared_dir, cancellable,
                             callback, user_data);
  return TRUE;
}

char *
hz_learner_job_rollback (const char *store_path, GError **error)
{
  g_autoptr (HzStore) store = hz_store_open (store_path, error);
  if (store == NULL)
    return NULL;
  g_autoptr (GPtrArray) all = hz_store_adapter_list (store, error);   /* newest first */
  if (all == NULL)
    return NULL;
  guint i = 0;
  while (i < all->len && !((HzLearnerAdapter *) all->pdata[i])->active)
    i++;
  const HzLearnerAdapter *prev = i + 1 < all->len ? all->pdata[i + 1] : NULL;
  if (i == all->len)   /* none active: nothing to roll back */
    prev = NULL;
  if (!hz_store_adapter_set_active (store, prev ? prev->id : 0, error))
    return NULL;
  return g_strdup (prev ? prev->path : "");
}
