/* learner/gpu-train.h — LoRA training steps on the GPU (issue 7, the GPU half): the graph of
 * model-train.h (llama/qwen2/qwen3 forward, hand-written backward, LoRA on any of the seven
 * projections over a frozen base that stays in its quant format) run by the device ops of
 * kernels/train.hip, with the adapters, their gradients and the AdamW moments in device
 * memory.
 *
 * Differences from the CPU graph, by design:
 *  - a call takes n_seq sequences of the same length T at once (rows n_seq·T of every
 *    matrix product; attention per sequence), so a batch is one pass. Shorter sequences are
 *    padded by the caller with masked targets (a causal model's earlier positions do not see
 *    the padding, so the loss and gradients are those of the unpadded sequences);
 *  - activation recomputation within a memory budget: each layer's input [n_layer + 1]
 *    [n_seq·T][n_embd] is kept, and the whole forward cache of as many layers as fit in
 *    HZ_GPU_TRAIN_KEEP_MIB (default 1536 MiB, at most half the free device memory); the
 *    other layers' forwards are recomputed during the backward (one more layer's cache);
 *  - the base products y = x W^T and dx = dy W read W in bfloat16 decoded tile by tile from
 *    the quantized tensor (fp32 accumulation), everything else is fp32: losses agree with
 *    the CPU trainer to about 1e-3 relative (tests/gpu/test-train.c asserts 1e-2).
 *
 * Memory (device), besides the weights (their GGUF size): about
 *   4·R·((n_layer + 1)·d + 12·d + 6·n_ff + 2·V) + 8·n_seq·n_head·T² + 16·n_params bytes,
 * R = n_seq·T rows, d = n_embd, V = n_vocab (logits and their gradient share a buffer),
 * plus 2·R·max(d, n_ff) bytes (the bf16 copy of a forward product's input), plus per kept
 * layer about 4·R·(6·d + 3·n_ff + 7·r) + 4·n_seq·n_head·T² bytes (within the
 * budget above; r = the LoRA rank).
 *
 * Environment: HZ_GPU_TRAIN_PROFILE=1 records an event on the stream between the ops and
 * logs, when the trainer is freed, the device seconds spent in base products (forward and
 * backward apart), LoRA products, attention and the other ops (for finding where a step's
 * time goes; an idle gap before an op counts to that op's kind). HZ_GPU_TRAIN_KEEP_MIB: the
 * budget for kept layer caches (above).
 * Thread safety: an HzGpuTrainer is used by one thread at a time.
 * Errors: GError in HZ_GPU_ERROR (engine/backend-hip/hz-gpu.h): NO_DEVICE when the build
 * has no GPU backend or the machine no device, UNSUPPORTED for a model the device path does
 * not take (mixture of experts, shapes), RUNTIME for device failures (out of memory, …).
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"
#include "lora.h"
#include "optim.h"

G_BEGIN_DECLS

typedef struct _HzGpuTrainer HzGpuTrainer;

/** Whether the learner should train on the GPU: the build has the GPU backend and
 *  HZ_DEVICE is not "cpu". (Whether a device is present is known from
 *  hz_gpu_trainer_new.) */
gboolean hz_gpu_train_wanted (void);

/** Upload the frozen `llm` (borrowed, must outlive the trainer) and room for up to
 *  max_seqs sequences of up to max_tokens tokens, adapters laid out as `lora` (borrowed,
 *  must outlive the trainer: its shapes and scaling, and its params and grads arrays are
 *  page-locked while the trainer lives, for fast copies; NULL: no adapters, forward and
 *  loss only). Parameters start at zero: hz_gpu_trainer_set_params. Errors: see above. */
HzGpuTrainer *hz_gpu_trainer_new (const HzLlm *llm, const HzLora *lora, int max_seqs,
                                  int64_t max_tokens, GError **error);
void          hz_gpu_trainer_free (HzGpuTrainer *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzGpuTrainer, hz_gpu_trainer_free)

/** "NVIDIA H200 (cuda, …)". */
const char *hz_gpu_trainer_describe (const HzGpuTrainer *t);

/** Copy lora->n_params floats of adapter parameters to the device / from it. */
gboolean hz_gpu_trainer_set_params (HzGpuTrainer *t, const float *params, GError **error);
gboolean hz_gpu_trainer_get_params (HzGpuTrainer *t, float *params, GError **error);
/** Zero the device gradients / copy them to the host (n_params floats). */
gboolean hz_gpu_trainer_zero_grad (HzGpuTrainer *t, GError **error);
gboolean hz_gpu_trainer_get_grads (HzGpuTrainer *t, float *grads, GError **error);

/** One supervised micro-step over n_seq sequences of T tokens (tokens and targets
 *  [n_seq][T] row-major; targets[s][t] = the token expected after tokens[s][t], negative =
 *  masked), as hz_train_sft_step_f32 for each sequence: forward, cross-entropy summed over
 *  the counted tokens into *loss_sum (nats), their count into *n_valid (nullable), and with
 *  `backward` the gradient of weight × that sum ADDED to the device gradients. Token ids
 *  must be in [0, n_vocab) and targets below n_vocab (HZ_GPU_ERROR_INVALID otherwise, as
 *  are n_seq or T above the trainer's maxima). Synchronous (returns with the loss). */
gboolean hz_gpu_trainer_sft_step (HzGpuTrainer *t, const int32_t *tokens, const int32_t *targets,
                                  int n_seq, int64_t T, double weight, gboolean backward,
                                  double *loss_sum, int64_t *n_valid, GError **error);

/** On the device: global-norm clipping of the gradients at max_grad_norm (<= 0: none; the
 *  norm before clipping into *grad_norm, nullable), then one AdamW update with learning
 *  rate lr and the hyperparameters of p (optim.h's formula, the moments in device memory).
 *  Increments the trainer's step count. */
gboolean hz_gpu_trainer_optimizer_step (HzGpuTrainer *t, const HzAdamWParams *p, double lr,
                                        double max_grad_norm, double *grad_norm, GError **error);
/** Copy the AdamW state to the host optimiser `opt` (n = n_params; m, v and step) or from
 *  it to the device. */
gboolean hz_gpu_trainer_get_optimizer (HzGpuTrainer *t, HzAdamW *opt, GError **error);
gboolean hz_gpu_trainer_set_optimizer (HzGpuTrainer *t, const HzAdamW *opt, GError **error);

/** Device memory in use now (the runtime's total − free: weights, buffers, the runtime's
 *  own context); the trainer allocates everything at creation, so after one step this is
 *  the peak of a training run. */
size_t hz_gpu_trainer_device_bytes (HzGpuTrainer *t);

G_END_DECLS
