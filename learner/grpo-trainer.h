/* learner/grpo-trainer.h — GRPO training of LoRA adapters: sampling groups of completions
 * from the current policy, scoring them with pluggable rewards, and optimiser steps on the
 * clipped objective with a k3 KL penalty to the reference policy (grpo.h).
 *
 * Per prompt, G completions are sampled with temperature > 0 from the policy = frozen base
 * + the current adapters. Sampling runs the learner's own float training forward
 * (model-train.h; the serving engine cannot apply adapters yet), re-running the whole
 * sequence per new token: O(T^2) per completion, fine for the small models and short
 * completions the nightly job uses; when the engine's scheduler gains adapters, sampling
 * moves there (shared prompt blocks) without changing this API.
 *
 * Log-probabilities are those of the policy at temperature 1 (the sampling temperature
 * only explores). The reference policy is the same base with the adapters off
 * (hz_train_forward with params = NULL), so it costs a forward pass, not a second model.
 * logp_old (the sampling-time policy) is recorded during the first of the n_iterations
 * (mu) passes over a batch, when the parameters still equal the sampling ones; with the
 * default mu = 1 the ratio is therefore exactly 1 and the objective reduces to the
 * policy-gradient form with KL, as in TRL's GRPOTrainer with num_iterations = 1.
 *
 * Loss of a batch of groups: the mean over groups of hz_grpo_loss (grpo.h, "grpo" or
 * "dapo" normalisation), differentiated through hz_op_logprob_bwd and the training graph's
 * backward, then global-norm clipping and AdamW with the schedule (optim.h).
 *
 * Groups of fixed rewards (user feedback): hz_grpo_group_new() builds a group from given
 * completions and rewards — a pairwise preference is a group of two with rewards 1
 * (chosen) and 0 (rejected); thumbs-rated replies to one prompt form a group with rewards
 * +1/-1. A group of one has no group baseline: its advantage is its reward itself
 * (baseline 0), so a lone thumbs-up still pushes its reply up.
 *
 * Thread safety: a trainer and its groups are used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine.h"
#include "grpo.h"
#include "lora.h"
#include "model-train.h"
#include "optim.h"
#include "dp-sgd.h"
#include "reward.h"

G_BEGIN_DECLS

typedef struct {
  HzGrpoParams    grpo;            /* clip eps 0.2, beta 0.04, "grpo" normalisation */
  HzAdamWParams   adamw;           /* AdamW defaults (lr 1e-4) */
  HzSchedule      schedule;        /* constant */
  double          max_grad_norm;   /* 1.0; <= 0 no clipping */
  int             group_size;      /* G, >= 2 (default 8) */
  int             max_new_tokens;  /* per completion (default 64) */
  int             n_iterations;    /* mu: optimiser passes per sampled batch (default 1) */
  HzSamplerParams sampler;         /* temperature 1.0, no top-k/top-p, seed 1 */
  gboolean        recompute;       /* activation recomputation (default TRUE) */
  guint           n_threads;       /* threads of the training ops (default 0: all
                                      processors; results do not depend on it) */
} HzGrpoTrainerParams;

/** Defaults as listed above. */
void hz_grpo_trainer_params_init (HzGrpoTrainerParams *p);

/** One prompt with its completions and rewards. Completion i owns tokens
 *  [offsets[i], offsets[i+1]) of `tokens`. Built by the trainer's sampler or by
 *  hz_grpo_group_new(); the trainer fills the caches during steps. */
typedef struct {
  int32_t *prompt;         /* [n_prompt] */
  int64_t  n_prompt;
  int      n;              /* completions */
  int32_t *tokens;         /* [offsets[n]] completion tokens back to back */
  int64_t *offsets;        /* [n + 1] */
  double  *rewards;        /* [n] */
  char   **texts;          /* [n] detokenized completions, a thinking model's reasoning
                            * markers included (NULL entries without tokenizer) */
  /*< private >*/
  double  *logp_old;       /* [offsets[n]] filled at the first iteration */
  double  *logp_ref;       /* [offsets[n]] reference log-probs (beta > 0) */
  gboolean have_old, have_ref;
} HzGrpoGroup;

/** A group of given completions (token arrays completions[i] of lengths n_tokens[i]) with
 *  fixed rewards, e.g. from user feedback. All arrays are copied. */
HzGrpoGroup *hz_grpo_group_new (const int32_t *prompt, int64_t n_prompt, int n,
                                const int32_t *const *completions, const int64_t *n_tokens,
                                const double *rewards);
void         hz_grpo_group_free (HzGrpoGroup *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzGrpoGroup, hz_grpo_group_free)

/** Mean reward of a group. */
double hz_grpo_group_mean_reward (const HzGrpoGroup *g);

typedef struct _HzGrpoTrainer HzGrpoTrainer;

/** A trainer of `lora` (borrowed, updated in place) over the frozen `llm` (borrowed) for
 *  sequences of up to max_tokens tokens (prompt + completion). `model` (nullable,
 *  borrowed) supplies the tokenizer for text rewards and the end-of-generation tokens;
 *  without it completions stop at max_new_tokens or at `eog` of
 *  hz_grpo_trainer_set_eog(). */
HzGrpoTrainer *hz_grpo_trainer_new (const HzLlm *llm, HzModel *model, HzLora *lora,
                                    const HzGrpoTrainerParams *p, int64_t max_tokens);
void           hz_grpo_trainer_free (HzGrpoTrainer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzGrpoTrainer, hz_grpo_trainer_free)

/** End-of-generation token for trainers without a model (-1: none). */
void hz_grpo_trainer_set_eog (HzGrpoTrainer *t, int32_t eog);

/** Sample params->group_size completions of `prompt` from the current policy and score
 *  them with `reward` (prompt_text and reference are passed to the reward, nullable).
 *  n_prompt + max_new_tokens is capped at max_tokens. */
HzGrpoGroup *hz_grpo_trainer_sample (HzGrpoTrainer *t, const int32_t *prompt, int64_t n_prompt,
                                     const char *prompt_text, const char *reference,
                                     const HzReward *reward);

typedef struct {
  double loss;           /* objective of the first iteration (before any update) */
  double mean_reward;    /* over all completions of the batch */
  double mean_kl;        /* mean k3 per completion token (first iteration) */
  double clip_fraction;  /* tokens on the clipped branch (last iteration) */
  double grad_norm;      /* before clipping (last iteration) */
  double mean_length;    /* completion tokens */
} HzGrpoStepStats;

/** params->n_iterations optimiser steps on groups[0..n). Groups whose advantages are all
 *  zero (equal rewards) contribute only their KL term. stats nullable. Returns the loss. */
double hz_grpo_trainer_step (HzGrpoTrainer *t, HzGrpoGroup *const *groups, int n,
                             HzGrpoStepStats *stats);

/** One DP-SGD step (dp-sgd.h) on an already Poisson-sampled set of groups[0..n) (n may be
 *  0): the privacy unit is a prompt, so each group's gradient (its GRPO objective with
 *  weight 1: the group's loss as in hz_grpo_trainer_step() with n = 1) is clipped to dp's
 *  C, the clipped gradients are summed, N(0, (z C)^2) is added, the sum is divided by
 *  `expected_batch` (q N), then one AdamW step (the trainer's max_grad_norm is not
 *  applied). Requires params->n_iterations == 1 (reusing a sample for several steps would
 *  not be the subsampled mechanism the accountant assumes): returns NaN with
 *  HZ_LEARN_ERROR_INVALID otherwise, or when the secure generator fails. *n_clipped
 *  (nullable) gets how many groups were clipped. Returns the loss (sum of the groups'
 *  losses / expected_batch) before the update. */
double hz_grpo_trainer_step_dp (HzGrpoTrainer *t, HzDpSgd *dp, HzGrpoGroup *const *groups,
                                int n, double expected_batch, int *n_clipped, GError **error);

/** Optimiser steps taken so far; the optimiser state (for checkpoints). */
int64_t  hz_grpo_trainer_steps (const HzGrpoTrainer *t);
HzAdamW *hz_grpo_trainer_optimizer (HzGrpoTrainer *t);

G_END_DECLS
