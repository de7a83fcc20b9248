/* learner/daemon-job.h — the nightly job of hanzo-learner: run the redaction gate over the
 * store (hz_learner_job_redact(): every complete message gets its redacted copy, with the
 * guard model's pass when one is set), read the store's redacted samples (dataset.h),
 * split off the held-out set, fine-tune (job.h) starting from the
 * active adapter with checkpoints, and promote the result only if the held-out loss
 * improves: write it to <adapters_dir>/run-<id>/, record it in the store (adapters), make
 * it active, and prune to the newest `keep` adapters (the active one is never pruned).
 * Every job is recorded in learner_runs (hanzo-store-learner.h).
 *
 * Starting point: hz_learner_pick_start_adapter() (federation.h) — the federation's shared
 * adapter when it is newer than the active one, else the active adapter of this base.
 * With job.dp_sgd (adapters that may be released) the steps run are recorded as a "dp-sgd"
 * row of the privacy ledger (hz_dp_record_training(): q, z, C, steps, delta), whatever the
 * outcome, so that hz_dp_spent(.., HZ_PRIVACY_MECH_DP_SGD, ..) composes all nights.
 *
 * Thread safety: hz_learner_job_run() runs on a worker thread with its own HzStore and
 * HzModel; `stop` is read atomically (set from any thread to interrupt, which checkpoints).
 */
#pragma once

#include <glib.h>
#include "job.h"
#include "dataset.h"
#include "hanzo-store.h"
#include "federation.h"

G_BEGIN_DECLS

/** Called by hz_learner_job_run() with the records it is about to train and evaluate on
 *  (after the split, before tokenization; on the job's thread): for logging and tests. */
typedef void (*HzLearnerJobDatasetFunc) (const HzLearnDataset *train,
                                         const HzLearnDataset *heldout, gpointer user_data);

typedef struct {
  char            *store_path;      /* NULL = default */
  char            *model_path;      /* base GGUF (learner.ini model=, else the app's model,
                                     * hz_learner_model_from_settings()) */
  char            *adapters_dir;    /* $XDG_DATA_HOME/hanzo/adapters */
  HzLearnJobParams job;
  double           heldout_fraction;/* default 0.2 */
  guint            keep;            /* adapters kept (default 3) */
  gboolean         include_unrated; /* see HzLearnStoreOptions */
  char            *shared_dir;      /* the federation's shared base adapter (federation.h);
                                     * default <adapters_dir>/shared */
  char            *guard_model_path;/* GGUF of the redactor's model pass (the app's guard model
                                     * slot, hz_learner_guard_model_from_settings()); NULL or
                                     * "" = the rule-based redactor alone */
  guint            guard_max_messages; /* copies made with the guard model per job (default
                                     * 200; the rest wait for the next job); 0 = no limit */
  gint             guard_model_tokens; /* answer tokens per message (<= 0: 256, see
                                     * hz_redactor_set_engine_model()) */
  guint            guard_model_ctx; /* its context in tokens (0: min(its training context,
                                     * 4096)); a message whose prompt does not fit keeps
                                     * the rule-based spans */
  HzLearnerJobDatasetFunc on_dataset; /* may be NULL */
  gpointer         on_dataset_data;
} HzLearnerJobConfig;

void hz_learner_job_config_init (HzLearnerJobConfig *c);
void hz_learner_job_config_clear (HzLearnerJobConfig *c);

typedef enum {
  HZ_LEARNER_JOB_PROMOTED,
  HZ_LEARNER_JOB_REJECTED,
  HZ_LEARNER_JOB_INTERRUPTED,
  HZ_LEARNER_JOB_NOTHING,     /* no training data */
} HzLearnerJobOutcome;

/** Progress of a job, 0..1: the redaction gate takes the first HZ_LEARNER_JOB_REDACT_SHARE
 *  (its rule-based pass the first half of it, the guard model's pass the second), training
 *  the rest (by optimiser steps). */
typedef void (*HzLearnerJobProgress) (double fraction, gpointer user_data);

#define HZ_LEARNER_JOB_REDACT_SHARE 0.1

/** What hz_learner_job_redact() did. Clear with hz_learner_gate_report_clear(). */
typedef struct {
  guint    redacted;         /* messages given a redacted copy by the rule-based pass */
  guint    redacted_model;   /* messages redacted (again) with the guard model's pass */
  gboolean model_used;       /* the guard model was loaded and its pass ran */
  gboolean stopped;          /* `stop` was set: the gate stopped between two messages */
  char    *note;             /* for the job log: why the guard model was not used, or NULL */
} HzLearnerGateReport;

void hz_learner_gate_report_clear (HzLearnerGateReport *r);

/** The redaction gate of a job (hanzo/redact-gate.h) on `store` (the job's own
 *  connection): first the rule-based redactor over every complete message without a
 *  current copy (new, edited, or made by an older gate), then, when c->guard_model_path is
 *  set, the same with the guard model's pass (hz_redactor_set_engine_model(): every span it
 *  returns is verified against the text) over up to c->guard_max_messages messages whose
 *  copy was made without it, oldest first. A guard model that cannot be loaded leaves the
 *  rule-based copies; report->note says so (and it is logged): redaction is never skipped.
 *  Resumable and cancellable: each message is committed on its own (the gate skips what
 *  has a current copy), and `stop` (read atomically, may be NULL) is checked between
 *  messages. `progress` gets 0..1 over both passes. Returns FALSE with `error` on a store
 *  error (HZ_STORE_ERROR_*); report is filled in either case. */
gboolean hz_learner_job_redact (const HzLearnerJobConfig *c, HzStore *store, gint *stop,
                                HzLearnerJobProgress progress, gpointer user_data,
                                HzLearnerGateReport *report, GError **error);

/** The guard model slot of the app: GSettings ai.hanzo.Desktop guard-model-path (set by
 *  the model manager), or NULL when it is empty or the schema is not installed. */
char *hz_learner_guard_model_from_settings (void);

/** The model the app opens at start: GSettings ai.hanzo.Desktop model-path (the model last
 *  opened from a file, a download or the command line, or made the default in the model
 *  manager), or NULL when it is empty or the schema is not installed. The learner trains
 *  this model unless learner.ini names another (model=): the app serves an adapter only
 *  on the model it was trained on (its base SHA-256), so this is the one it helps. */
char *hz_learner_model_from_settings (void);

/** Run one job: the redaction gate (hz_learner_job_redact(); a `stop` during it ends the
 *  job as INTERRUPTED before a run is recorded; the guard model's note goes into the run's
 *  message), the dataset from the redacted copies, training. On success returns TRUE with *outcome, *adapter_path (promoted adapter's
 *  directory, g_free, else NULL) and *run_id. Errors: store, model, training I/O. */
gboolean hz_learner_job_run (const HzLearnerJobConfig *c, gint *stop,
                             HzLearnerJobProgress progress, gpointer user_data,
                             HzLearnerJobOutcome *outcome, char **adapter_path,
                             gint64 *run_id, GError **error);

/** The daemon's step after a job (federation.h): when `outcome` is PROMOTED, the job trained
 *  with DP-SGD (c->job.dp_sgd) and federation is enabled (hz_learner_federation_enabled()),
 *  start hz_learner_federate_async() for `adapter` with c's store and shared_dir and return
 *  TRUE (`callback` will be called); otherwise send nothing and return FALSE. */
gboolean hz_learner_job_maybe_federate (const HzLearnerJobConfig *c, HzLearnerJobOutcome outcome,
                                        const char *adapter, const HzFedParams *params,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);

/** Make the adapter before the active one active (none if there is none): returns the new
 *  active path ("" for none; g_free) or NULL on error. */
char *hz_learner_job_rollback (const char *store_path, GError **error);

G_END_DECLS
