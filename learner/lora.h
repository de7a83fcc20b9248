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
#include "model.h"   /* engine: HzHparams, HzMatrix, HzArch */

G_BEGIN_DECLS

#define HZ_LEARN_ERROR (hz_learn_error_quark ())
GQuark hz_learn_error_quark (void);
typedef enum {
  HZ_LEARN_ERROR_INVALID,     /* bad configuration or argument */
  HZ_LEARN_ERROR_MISMATCH,    /* adapter does not fit the model (shapes, architecture) */
  HZ_LEARN_ERROR_FORMAT,      /* malformed adapter file or config */
} HzLearnError;

/** The projections that can carry an adapter, in PEFT order. */
typedef enum {
  HZ_LORA_Q, HZ_LORA_K, HZ_LORA_V, HZ_LORA_O, HZ_LORA_GATE, HZ_LORA_UP, HZ_LORA_DOWN,
  HZ_LORA_N_TARGETS
} HzLoraTarget;

#define HZ_LORA_BIT(t) (1u << (t))
#define HZ_LORA_TARGETS_ALL ((1u << HZ_LORA_N_TARGETS) - 1)

/** PEFT module name: "q_proj", ..., "down_proj". */
const char *hz_lora_target_peft_name (HzLoraTarget t);
/** Parent module in the HF llama model: "self_attn" (q, k, v, o) or "mlp". */
const char *hz_lora_target_peft_parent (HzLoraTarget t);
/** GGUF tensor stem: "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
 *  "ffn_down". */
const char *hz_lora_target_gguf_name (HzLoraTarget t);
/** Target from a PEFT ("q_proj") or GGUF ("attn_q") name; FALSE if neither. */
gboolean    hz_lora_target_from_name (const char *name, HzLoraTarget *out);

/** Hyperparameters of an adapter set. */
typedef struct {
  int32_t  r;           /* rank, >= 1 (default 8) */
  float    alpha;       /* lora_alpha (default 8) */
  gboolean use_rslora;  /* scaling alpha / sqrt(r) instead of alpha / r (default FALSE) */
  guint32  targets;     /* HZ_LORA_BIT mask (default q and v, as PEFT for llama) */
} HzLoraConfig;

/** PEFT defaults: r 8, alpha 8, no rsLoRA, targets q_proj and v_proj. */
void   hz_lora_config_init (HzLoraConfig *c);
/** alpha / r, or alpha / sqrt(r) with use_rslora. */
double hz_lora_config_scaling (const HzLoraConfig *c);

/** Where one adapter lives in the flat arrays; n_in == 0 when the target has none. */
typedef struct {
  int64_t n_in, n_out;
  gsize   off_a;   /* A: [r, n_in] at params + off_a */
  gsize   off_b;   /* B: [n_out, r] at params + off_b */
} HzLoraSlot;

typedef struct {
  HzLoraConfig config;
  float        scaling;     /* hz_lora_config_scaling (config) */
  int32_t      n_layer;
  HzArch       arch;        /* of the model it was made for (q/k row order, see above) */
  int32_t      n_head, n_head_kv, head_dim_k;
  HzLoraSlot  *slots;       /* [n_layer * HZ_LORA_N_TARGETS] */
  gsize        n_params;
  float       *params;      /* [n_params] float32 masters */
  float       *grads;       /* [n_params] */
} HzLora;

/** Allocate adapters for every layer of a model with hyperparameters `hp` on the targets
 *  of `cfg`, with all parameters and gradients zero. Shapes: q [n_embd -> n_head*hdk],
 *  k [n_embd -> n_head_kv*hdk], v [n_embd -> n_head_kv*hdv], o [n_head*hdv -> n_embd],
 *  gate/up [n_embd -> n_ff], down [n_ff -> n_embd].
 *  Errors: HZ_LEARN_ERROR_INVALID (r < 1, alpha not finite and > 0, no target). */
HzLora *hz_lora_new (const HzHparams *hp, const HzLoraConfig *cfg, GError **error);
void    hz_lora_free (HzLora *lora);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLora, hz_lora_free)

/** The slot of (layer, target), or NULL when that projection has no adapter. */
const HzLoraSlot *hz_lora_slot (const HzLora *lora, int32_t layer, HzLoraTarget t);

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
