/* learner/daemon-job.h — the nightly job of hanzo-learner: read the store's redacted
 * samples (dataset.h), split off the held-out set, fine-tune (job.h) starting from the
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
#include "federation.h"

G_BEGIN_DECLS

typedef struct {
  char            *store_path;      /* NULL = default */
  char            *model_path;      /* base GGUF */
  char            *adapters_dir;    /* $XDG_DATA_HOME/hanzo/adapters */
  HzLearnJobParams job;
  double           heldout_fraction;/* default 0.2 */
  guint            keep;            /* adapters kept (default 3) */
  gboolean         include_unrated; /* see HzLearnStoreOptions */
  char            *shared_dir;      /* the federation's shared base adapter (federation.h);
                                     * default <adapters_dir>/shared */
} HzLearnerJobConfig;

void hz_learner_job_config_init (HzLearnerJobConfig *c);
void hz_learner_job_config_clear (HzLearnerJobConfig *c);

typedef enum {
  HZ_LEARNER_JOB_PROMOTED,
  HZ_LEARNER_JOB_REJECTED,
  HZ_LEARNER_JOB_INTERRUPTED,
  HZ_LEARNER_JOB_NOTHING,     /* no training data */
} HzLearnerJobOutcome;

typedef void (*HzLearnerJobProgress) (double fraction, gpointer user_data);

/** Run one job. On success returns TRUE with *outcome, *adapter_path (promoted adapter's
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
char *hz_learner_rollback (const char *store_path, GError **error);

G_END_DECLS
