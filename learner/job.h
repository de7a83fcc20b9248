/* learner/job.h — one SFT training job end to end, shared by `hanzo learn sft` and the
 * hanzo-learner daemon: tokenize the train and held-out sets, start from a given adapter or
 * a fresh PEFT initialisation, train with checkpoints every N steps (resuming a matching
 * checkpoint), evaluate the held-out loss before and after, and say whether the result
 * improved.
 *
 * The held-out loss "before" is that of the starting adapter (the active one, or the bare
 * base for a fresh start: a fresh adapter has B = 0 and equals the base); the job's adapter
 * is worth promoting only when "after" is lower (hz_learn_job_improved()).
 *
 * Thread safety: a job runs on the calling thread; the progress callback is called on it.
 * The model is only read.
 */
#pragma once

#include <glib.h>
#include "hanzo/engine.h"
#include "dataset.h"
#include "lora.h"
#include "sft.h"

G_BEGIN_DECLS

typedef struct {
  HzLoraConfig lora;            /* r 8, alpha 16, targets q,k,v,o,gate,up,down */
  HzSftParams  sft;             /* lr 2e-4, cosine schedule to 10%, warmup 5% */
  int64_t      steps;           /* optimiser steps (default 100) */
  int          batch;           /* examples per step (default 4) */
  int64_t      max_tokens;      /* per example (default 512) */
  int64_t      checkpoint_every;/* steps between checkpoints (default 20; 0 = never) */
  guint32      seed;            /* adapter initialisation (default 1) */
  gboolean     dp_sgd;          /* train with DP-SGD (dp-sgd.h) instead of plain SFT steps:
                                 * adapters that may be released (default FALSE) */
  HzDpSgdParams dp;             /* its q (<= 0: batch / N), z, C, delta */
} HzLearnJobParams;

void hz_learn_job_params_init (HzLearnJobParams *p);

/** Called after every step; return FALSE to stop the job (it checkpoints first). */
typedef gboolean (*HzLearnProgressFunc) (int64_t step, int64_t total, double loss,
                                         gpointer user_data);

typedef struct {
  HzLora  *lora;            /* the trained adapter (owned by the result) */
  int64_t  steps;           /* optimiser steps done in total (resumed ones included) */
  double   train_loss;      /* loss of the last step (NaN if none) */
  double   heldout_before;  /* NaN when there is no held-out data */
  double   heldout_after;
  gboolean interrupted;     /* stopped by the callback before `steps` */
  gboolean resumed;         /* continued from a checkpoint */
  /* DP-SGD (params->dp_sgd): the sampling rate used, the steps run by THIS call (what a
   * ledger row for this run must cover), and the epsilon at dp.delta of all `steps` steps
   * of the adapter's training (hz_dp_sgd_epsilon (dp_q, z, steps, delta)); 0 without it */
  double   dp_q;
  int64_t  dp_steps_run;
  double   dp_epsilon;
} HzLearnJobResult;

void hz_learn_job_result_clear (HzLearnJobResult *r);

/** Run an SFT job on `model`. With params->dp_sgd each step Poisson-samples the training
 *  set with rate q (batch is then only used for q = batch / N when dp.sample_rate <= 0)
 *  and takes a DP-SGD step (hz_sft_trainer_step_dp(), divided by q N). Starting from an
 *  adapter that was itself trained on the same data makes the accounting of this job
 *  alone incomplete: the caller records every run (dp_steps_run) in the ledger, where runs
 *  compose. (its bound weights are the frozen base). `init_adapter`
 *  (nullable): a PEFT directory to start from (its r/alpha/targets replace params->lora).
 *  `checkpoint_dir` (nullable): where to checkpoint and what to resume from; the
 *  checkpoint's tag covers the base, the data and the parameters. Errors:
 *  HZ_LEARN_ERROR_INVALID (no training examples, model without weights), adapter and
 *  checkpoint I/O errors. */
gboolean hz_learn_job_run_sft (HzModel *model, const HzLearnDataset *train,
                               const HzLearnDataset *heldout, const HzLearnJobParams *params,
                               const char *init_adapter, const char *checkpoint_dir,
                               HzLearnProgressFunc progress, gpointer user_data,
                               HzLearnJobResult *result, GError **error);

/** Whether the job's held-out loss improved on its starting point (or, without held-out
 *  data, whether it finished). */
gboolean hz_learn_job_improved (const HzLearnJobResult *r);

/** Write an adapter as the learner ships it: `dir`/adapter_model.safetensors (BF16, PEFT
 *  names) + adapter_config.json, and `dir`/adapter.gguf (llama.cpp LoRA, F32); `dir` is
 *  created when missing. The files are written into a staging folder inside `dir` and
 *  renamed into place only when all are complete: on any error (G_FILE_ERROR_*,
 *  HZ_SAFETENSORS_ERROR_*, HZ_GGUF_ERROR_*) an adapter already in `dir` is left whole and
 *  no staging folder remains. Refuses (G_IO_ERROR_INVALID_DATA, nothing written) an
 *  adapter holding NaN/Inf values. */
gboolean hz_learn_save_adapter (const HzLora *lora, const char *dir, const char *base_name,
                                GError **error);

G_END_DECLS
