/* learner/lora.h — a set of LoRA adapters over the projections of a llama-family model.
 *
 * LoRA (Hu et al. 2021, arXiv 2106.09685): a frozen weight W [n_out, n_in] gets a
 * trainable low-rank update, y = W x + scaling * B (A x), with A [r, n_in], B [n_out, r]
 * (row-major, the layout of PEFT's lora_A.weight / lora_B.weight and of llama.cpp's
 * lora_a / lora_b). scaling = alpha / r, or alpha / sqrt(r) with rsLoRA (Kalajdzievski
 * 2023, arXiv 2312.03732). The base may be in any quant format of the table and stays
 * quantized (QLoRA, Dettmers et al. 2023, arXiv 2305.14314): the adapters and their
 * gradients are float32 masters.
 *
 * Row order of q/k: adapters are kept in the layout of the GGUF the engine serves (for
 * `llama`, llama.cpp's converter permuted the rows of Wq/Wk for its adjacent-pair RoPE;
 * B rows follow). adapter-io.c converts to and from the Hugging Face order for PEFT files.
 *
 * All parameters live in one flat float array (`params`, n_params elements) and their
 * gradients in another of the same layout (`grads`), so that the optimiser and gradient
 * clipping work on flat vectors; HzLoraSlot gives the offsets of each A and B.
 *
 * Thread safety: an HzLora is plain data; concurrent reads are safe, writes need the
 * caller's exclusion.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"

G_BEGIN_DECLS

#define HZ_LEARN_ERROR (hz_learn_error_quark ())
GQuark hz_learn_error_quark (void);
typedef enum {
  HZ_LEARN_ERROR_INVALID,     /* bad configuration or argument */
  HZ_LEARN_ERROR_MISMATCH,    /* adapter does not fit the model (shapes, architecture) */
  HZ_LEARN_ERROR_FORMAT,      /* malformed adapter file or config */
} HzLearnError;

/* HzLoraTarget, HzLoraConfig, HzLoraSlot, HzLora (params, grads), hz_lora_slot() and
 * hz_lora_free() are the engine's (engine/lora-adapter.h): the served and the trained
 * adapters are one type. */

/** Allocate adapters for every layer of a model with hyperparameters `hp` on the targets
 *  of `cfg`, with all parameters and gradients zero (hz_lora_alloc with gradients; shapes
 *  there). Errors: HZ_LEARN_ERROR_INVALID (r < 1, alpha not finite and > 0, no target). */
HzLora *hz_lora_new (const HzHparams *hp, const HzLoraConfig *cfg, GError **error);

/** Turn an engine error of the adapter code (HZ_ENGINE_ERROR_BAD_ADAPTER,
 *  _ADAPTER_MISMATCH, _INVALID_ARGUMENT) into the learner's HZ_LEARN_ERROR_FORMAT,
 *  _MISMATCH, _INVALID, in place; other errors are left alone. NULL is ignored. */
void    hz_learn_error_from_engine (GError *error);

/** PEFT's default initialisation (peft/tuners/lora/layer.py reset_lora_parameters with
 *  init_lora_weights=True): A ~ torch.nn.init.kaiming_uniform_(a = sqrt(5)), i.e. uniform
 *  in [-bound, bound] with gain = sqrt(2 / (1 + a^2)) = sqrt(1/3) and
 *  bound = gain * sqrt(3 / fan_in) = 1 / sqrt(n_in); B = 0. Draws from a GRand seeded with
 *  `seed` (deterministic; not torch's generator: the PyTorch reference loads our values). */
void hz_lora_init_peft (HzLora *lora, guint32 seed);

/** Set all gradients to zero. */
void hz_lora_zero_grad (HzLora *lora);

/** y [T, W->n_out] = x W^T + bias + scaling * (x A^T) B^T with the adapter of
 *  (layer, t) (none: the plain base). x [T, W->n_in] float32; W in any quant format.
 *  Asserts that W's shape matches the slot. */
void hz_lora_apply (const HzLora *lora, int32_t layer, HzLoraTarget t, const HzMatrix *W,
                    const float *bias, const float *x, int64_t T, float *y);

/** Copy of the parameters (or gradients) widened to double, for the f64 training path
 *  (g_free). */
double *hz_lora_params_f64 (const HzLora *lora);

G_END_DECLS
