/* learner/sft.h — supervised fine-tuning steps of LoRA adapters on token sequences.
 *
 * One optimiser step over a batch of examples: every example runs forward and backward
 * through the float training graph (model-train.h), gradients accumulate over the batch
 * with weight 1 / (tokens counted in the whole batch), so the step minimises the
 * batch-mean token cross-entropy exactly as torch's cross_entropy(reduction="mean") over
 * the concatenated batch; then global-norm clipping, then AdamW with the scheduled
 * learning rate (optim.h).
 *
 * Dataset loading from the store, chat templates and the nightly job are not here: this
 * module takes token ids.
 *
 * Thread safety: a trainer is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "lora.h"
#include "model-train.h"
#include "optim.h"
#include "dp-sgd.h"

G_BEGIN_DECLS

/** One training sequence: tokens [n] and the expected next tokens targets [n] (negative =
 *  not trained on, e.g. prompt tokens). Both borrowed. */
typedef struct {
  const int32_t *tokens;
  const int32_t *targets;
  int64_t        n;
} HzSftExample;

/** Build an example from a prompt and a response: the sequence prompt ++ response without
 *  its last token is the input, and the loss covers the response tokens only
 *  (targets[t] = seq[t + 1] when seq[t + 1] belongs to the response, else -100). Writes
 *  n_prompt + n_response - 1 ids into tokens and targets (caller-allocated). Returns that
 *  length (0 when the response is empty). */
int64_t hz_sft_example_build (const int32_t *prompt, int64_t n_prompt, const int32_t *response,
                              int64_t n_response, int32_t *tokens, int32_t *targets);

typedef struct {
  HzAdamWParams adamw;
  HzSchedule    schedule;
  double        max_grad_norm;  /* <= 0: no clipping (default 1.0) */
  gboolean      recompute;      /* activation recomputation per layer (default TRUE) */
  guint         n_threads;      /* threads of the training ops (default 0: all processors;
                                   results do not depend on it) */
  int           gpu_max_seqs;   /* GPU builds: sequences per device pass (a batch runs in
                                   passes of up to this many, gradients accumulated; device
                                   memory grows with it; default 4) */
} HzSftParams;

/** Defaults: AdamW defaults (lr 1e-4), constant schedule without warmup, clipping at 1,
 *  recomputation, all processors. */
void hz_sft_params_init (HzSftParams *p);

typedef struct _HzSftTrainer HzSftTrainer;

/** A trainer of `lora` (borrowed, updated in place) over the frozen `llm` (borrowed) for
 *  sequences of up to max_tokens tokens. In a build with the GPU backend the steps run on
 *  the GPU (learner/gpu-train.h) when a device is present and HZ_DEVICE is not "cpu"
 *  (logged either way); the AdamW moments then live on the device and are copied to the
 *  host by hz_sft_trainer_optimizer. A device failure during a step falls back to the CPU
 *  (logged). */
HzSftTrainer *hz_sft_trainer_new (const HzLlm *llm, HzLora *lora, const HzSftParams *p,
                                  int64_t max_tokens);
void          hz_sft_trainer_free (HzSftTrainer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzSftTrainer, hz_sft_trainer_free)

/** One optimiser step over batch[0..n): returns the batch-mean loss (nats per counted
 *  token) before the update; *grad_norm (nullable) gets the gradient norm before
 *  clipping. A batch without counted tokens leaves the adapters unchanged and returns 0. */
double hz_sft_trainer_step (HzSftTrainer *t, const HzSftExample *batch, int n,
                            double *grad_norm);

/** Per-step diagnostics of hz_sft_trainer_step_dp(). */
typedef struct {
  int    n_examples;    /* examples in the batch (Poisson-sampled by the caller) */
  int    n_clipped;     /* of those, how many had ||g_i|| > C */
  double *norms;        /* nullable, [n_examples]: ||g_i|| before clipping */
  double *clipped_norms;/* nullable, [n_examples]: ||g_i|| after clipping (<= C) */
} HzDpSgdStepInfo;

/** One DP-SGD step (dp-sgd.h) over an already Poisson-sampled batch[0..n) (n may be 0):
 *  per-example gradients of each example's mean token loss, each clipped to dp's C, summed,
 *  noised with N(0, (z C)^2) from `dp`, divided by `expected_batch` (q N, > 0), then AdamW
 *  with the scheduled learning rate. The trainer's max_grad_norm is NOT applied (the
 *  per-example clipping replaces it). After the call lora->grads holds the gradient given
 *  to the optimiser. Returns the mean of the examples' losses (0 for an empty batch) or NaN
 *  with *error set (the secure generator failed: HZ_LEARN_ERROR_INVALID; nothing updated).
 *  `info` (nullable) gets diagnostics; its arrays, when given, must hold n values. */
double hz_sft_trainer_step_dp (HzSftTrainer *t, HzDpSgd *dp, const HzSftExample *batch, int n,
                               double expected_batch, HzDpSgdStepInfo *info, GError **error);

/** Mean loss per counted token over examples[0..n) with the current adapters (no
 *  gradients): the held-out metric. */
double hz_sft_trainer_evaluate (HzSftTrainer *t, const HzSftExample *examples, int n);

/** Whether the steps run on the GPU (FALSE in builds without the GPU backend). */
gboolean hz_sft_trainer_on_gpu (const HzSftTrainer *t);
/** Device memory in use (bytes, the runtime's total − free, so the runtime's own context
 *  included) when the trainer runs on the GPU; 0 on the CPU. All device buffers are made
 *  at creation: after a step this is the run's peak. */
size_t   hz_sft_trainer_device_bytes (HzSftTrainer *t);

/** Optimiser steps taken so far. */
int64_t hz_sft_trainer_steps (const HzSftTrainer *t);

/** The trainer's AdamW state (moments and step count), for checkpoints (checkpoint.h). */
HzAdamW *hz_sft_trainer_optimizer (HzSftTrainer *t);

G_END_DECLS
