/* engine/llm.h — llama-family model description: hyperparameters read from the GGUF
 * `<arch>.*` metadata and the weight tensors bound by name with their shapes checked.
 * Internal to libhzengine (the public face is HzModel in hanzo/engine.h).
 *
 * Supported architectures (names and tensor layout as llama.cpp's llama-arch.cpp):
 *   llama  — Llama 2/3, Mistral, TinyLlama, SmolLM: RoPE "normal" (adjacent pairs),
 *            optional q/k/v/o biases, optional rope_freqs.weight (Llama 3.1 factors).
 *   qwen2  — as llama with q/k/v biases and NeoX RoPE (pairs i, i + n_rot/2).
 *   qwen3  — NeoX RoPE, per-head RMSNorm of q and k (attn_q_norm / attn_k_norm, [head_dim]).
 *   qwen2moe — qwen2 attention; mixture-of-experts FFN plus a shared expert whose output is
 *            scaled by sigmoid(ffn_gate_inp_shexp · x).
 *   qwen3moe — qwen3 attention; mixture-of-experts FFN (no shared expert).
 *   llama with <arch>.expert_count > 0 — Mixtral: llama attention, mixture-of-experts FFN.
 *   gemma2 — NeoX RoPE; embeddings scaled by sqrt(n_embd); post-attention and post-FFN
 *            RMSNorms (attn_post_norm, ffn_post_norm); GeGLU FFN (tanh GELU); q scaled by
 *            attn_scale before q.k; attention and final logits soft-capped
 *            (c * tanh(x / c)); layers alternate sliding-window (even) and global (odd);
 *            the output always reuses token_embd.
 *   gemma3 — as gemma2 with per-head q/k RMSNorms, no attention soft-capping (final
 *            soft-capping only when the key is present), five window layers to one global
 *            (il % 6 == 5 global), and the window layers' own RoPE base (freq_base_swa,
 *            default 10000) and no RoPE scaling on them.
 *   gpt-oss — (llama.cpp src/models/openai-moe.cpp) NeoX RoPE with YaRN scaling; q/k/v/o
 *            biases; a learned logit per head (attn_sinks) in every softmax's denominator;
 *            layers alternate sliding-window (even, window attention.sliding_window) and
 *            full attention (odd); the FFN norm is post_attention_norm; mixture of experts
 *            with a biased router whose top-k logits are softmaxed (the other experts
 *            never enter the softmax), experts with biases and the clamped SwiGLU
 *            out = min(g, L) sigmoid(alpha min(g, L)) (clamp(u, -L, L) + 1), alpha 1.702,
 *            L 7; untied output; the last layer's FFN runs on every row.
 *   Gemma's RMSNorm is x * (1 + w): llama.cpp's converter stores 1 + w in every
 *   *norm.weight tensor (conversion/gemma.py), so the engine multiplies by the stored
 *   weight as for every other architecture.
 *
 * Mixture of experts (llama.cpp llama-graph.cpp build_moe_ffn, softmax gating, SiLU):
 *   p = softmax(ffn_gate_inp · x) over all n_expert experts (float32);
 *   the n_expert_used experts of largest p are selected (descending p, ties to the lower id);
 *   w_j = p_j of the selected, divided by max(Σ selected p, 6.103515625e-5) when
 *   hp.expert_weights_norm (llama/Mixtral and qwen3moe; not qwen2moe);
 *   y = Σ_j w_j · down_j (silu (gate_j x) ⊙ (up_j x)), summed in the order of selection;
 *   qwen2moe adds sigmoid(ffn_gate_inp_shexp · x) · down_sh (silu (gate_sh x) ⊙ (up_sh x)).
 *
 * Shapes use ggml's convention: ne[0] is the contiguous (row) dimension. A matrix
 * W with ne = [n_in, n_out] stores n_out rows of n_in elements and computes y = W x,
 * y[o] = sum_i W[o][i] x[i].
 *
 * Thread safety: an HzLlm is immutable after hz_llm_load() and may be shared freely.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "gguf.h"
#include "quant.h"
#include "ggml-order.h"

G_BEGIN_DECLS

typedef enum {
  HZ_ARCH_LLAMA,
  HZ_ARCH_QWEN2,
  HZ_ARCH_QWEN3,
  HZ_ARCH_QWEN2MOE,
  HZ_ARCH_QWEN3MOE,
  HZ_ARCH_GEMMA2,
  HZ_ARCH_GEMMA3,
  HZ_ARCH_GPT_OSS,
} HzArch;

/* Sanity limit of <arch>.block_count: far above any real model. */
#define HZ_MAX_LAYER 4096

/** RoPE pairing: NORM rotates (x[2i], x[2i+1]); NEOX rotates (x[i], x[i + n_rot/2]). */
typedef enum { HZ_ROPE_NORM, HZ_ROPE_NEOX } HzRopeMode;

typedef enum {
  HZ_ROPE_SCALING_NONE,
  HZ_ROPE_SCALING_LINEAR,   /* positions divided by the factor (freq_scale = 1/factor) */
  HZ_ROPE_SCALING_YARN,     /* YaRN ramp between interpolation and extrapolation */
  HZ_ROPE_SCALING_LLAMA3,   /* per-frequency factors (rope_freqs.weight or computed) */
} HzRopeScaling;

/** Hyperparameters. Counts are elements/tokens; eps and rope values as in the GGUF. */
typedef struct {
  HzArch   arch;
  int32_t  n_vocab;
  int32_t  n_ctx_train;     /* <arch>.context_length */
  int32_t  n_embd;          /* <arch>.embedding_length */
  int32_t  n_layer;         /* <arch>.block_count */
  int32_t  n_head;          /* <arch>.attention.head_count */
  int32_t  n_head_kv;       /* <arch>.attention.head_count_kv (default n_head) */
  int32_t  head_dim_k;      /* <arch>.attention.key_length (default n_embd / n_head) */
  int32_t  head_dim_v;      /* <arch>.attention.value_length (default head_dim_k) */
  int32_t  n_ff;            /* <arch>.feed_forward_length */
  int32_t  n_rot;           /* <arch>.rope.dimension_count (default head_dim_k) */
  float    norm_eps;        /* <arch>.attention.layer_norm_rms_epsilon (default 1e-5) */
  HzRopeMode rope_mode;
  float    rope_freq_base;  /* <arch>.rope.freq_base (default 10000) */
  HzRopeScaling rope_scaling;
  float    rope_freq_scale; /* 1 / <arch>.rope.scaling.factor (1 when no scaling) */
  int32_t  rope_n_ctx_orig; /* <arch>.rope.scaling.original_context_length (YaRN) */
  float    yarn_ext_factor; /* 1 for YaRN, else 0 */
  float    yarn_attn_factor;/* <arch>.rope.scaling.attn_factor (default 1) */
  float    yarn_beta_fast;  /* 32 (llama.cpp default) */
  float    yarn_beta_slow;  /* 1 */
  /* mixture of experts (all 0 / FALSE for a dense model) */
  int32_t  n_expert;        /* <arch>.expert_count: 0 = dense FFN, else experts per layer */
  int32_t  n_expert_used;   /* <arch>.expert_used_count: experts selected per token (top-k),
                             * 1 <= n_expert_used <= n_expert */
  int32_t  n_ff_exp;        /* width of one expert's FFN: llama (Mixtral): n_ff;
                             * qwen2moe/qwen3moe: <arch>.expert_feed_forward_length, default
                             * n_ff / n_expert_used (llama-model.cpp) */
  int32_t  n_ff_shexp;      /* width of the shared expert (qwen2moe):
                             * <arch>.expert_shared_feed_forward_length, default n_ff;
                             * 0 when the architecture has no shared expert */
  gboolean expert_weights_norm; /* divide the selected experts' probabilities by their sum
                             * (llama/Mixtral, qwen3moe: TRUE; qwen2moe: FALSE) */
  /* Gemma (gemma2, gemma3; every other architecture: the neutral values noted) */
  gboolean gemma;           /* embeddings * sqrt(n_embd), post-norms, GeGLU */
  float    attn_scale;      /* q is multiplied by this before q.k (llama.cpp's
                             * f_attention_scale: 1/sqrt(n_embd / n_head) for the 27B shapes
                             * (gemma2 46 layers, gemma3 62), else 1/sqrt(head_dim_k), as
                             * Gemma's query_pre_attn_scalar); 0: the softmax scales by
                             * 1/sqrt(head_dim_k) instead (every other architecture) */
  float    attn_softcap;    /* <arch>.attn_logit_softcapping (gemma2, default 50): scores
                             * become c * tanh(s / c) before the softmax; 0: none */
  float    final_softcap;   /* <arch>.final_logit_softcapping (gemma2 default 30; gemma3 only
                             * when present): logits become c * tanh(l / c); 0: none */
  int32_t  n_swa;           /* <arch>.attention.sliding_window: a window layer's query at
                             * position p attends to positions p - n_swa < j <= p (gemma2
                             * default 4096; gemma3 without the key: no window layers);
                             * 0: none */
  float    rope_freq_base_swa;  /* window layers' RoPE base (<arch>.rope.freq_base_swa;
                             * gemma2 default rope_freq_base, gemma3 10000) */
  float    rope_freq_scale_swa; /* window layers' freq scale (gemma2: rope_freq_scale;
                             * gemma3: 1, the global layers' linear scaling is not theirs) */
  /* gpt-oss (every other architecture: FALSE / 0) */
  gboolean moe_softmax_selected; /* route on the raw (biased) router logits and softmax the
                             * n_expert_used selected ones (llama.cpp
                             * LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT) */
  float    swiglu_alpha;    /* > 0: the experts' clamped SwiGLU (ggml_swiglu_oai) with this
                             * alpha and swiglu_limit; 0: silu(g) * u */
  float    swiglu_limit;
  gboolean ffn_all_rows;    /* the last layer's FFN runs on every row before the output rows
                             * are taken (llama.cpp's graph for the architecture) */
  uint64_t swa_layers[HZ_MAX_LAYER / 64]; /* bit il: layer il uses the window (hz_layer_swa);
                             * <arch>.attention.sliding_window_pattern as a per-layer bool
                             * array, or N: il % N < N - 1 (gemma2 default 2, gemma3 6) */
} HzHparams;

/** TRUE when layer il attends through the sliding window (hp->n_swa > 0 and its bit set). */
static inline gboolean
hz_layer_swa (const HzHparams *hp, int il)
{
  return hp->n_swa > 0 && il >= 0 && il < HZ_MAX_LAYER &&
         ((hp->swa_layers[il / 64] >> (il % 64)) & 1) != 0;
}

/** KV cells layer il needs for a context of n_ctx tokens: min(n_ctx, n_swa) for a window
 *  layer, n_ctx otherwise (the window rule of hz_model_kv_bytes_per_token). */
static inline int64_t
hz_layer_kv_cells (const HzHparams *hp, int il, int64_t n_ctx)
{
  return hz_layer_swa (hp, il) ? MIN (n_ctx, (int64_t) hp->n_swa) : n_ctx;
}

/** A weight matrix in any format of the quant table: n_out rows of n_in elements, each row
 *  `row_bytes` bytes of packed blocks of `qt`'s format, rows contiguous. */
typedef struct {
  const char          *name;      /* tensor name (owned by the HzLlm) */
  const void          *data;      /* in the GGUF mapping */
  const HzQuantTraits *qt;
  int64_t              n_in;      /* ne[0] */
  int64_t              n_out;     /* ne[1] */
  size_t               row_bytes;
  /* dots in llama.cpp's summation order for this shape (ggml-order.h): one activation row,
   * several rows in one call */
  HzVecDotFn           dot_one, dot_batch;
  HzGgmlDot4Fn         dot_one_x4;  /* four rows of dot_one at once, or NULL */
  /* the CPU matmul's copy of `data` repacked at load (hz_cpu_matrix_repack, quant/repack.h)
   * and its kernel, bit-identical to dot_one; NULL: none. `data` stays the original for
   * every other reader (GPU upload, LoRA, learner, embedding rows). */
  const void          *packed;
  HzGgmlTileFn         packed_tile;
} HzMatrix;

/** The experts' matrices of one projection of a MoE layer: a 3-D tensor
 *  ne = [n_in, n_out, n_expert] holding n_expert matrices one after the other, expert e's
 *  n_out rows starting at byte e * expert_bytes. `mat` describes expert 0 (data, format,
 *  row_bytes, dots: the same for every expert; mat.name is the 3-D tensor's name). */
typedef struct {
  HzMatrix mat;           /* expert 0: [n_in] -> [n_out] */
  size_t   expert_bytes;  /* bytes of one expert's matrix (n_out * mat.row_bytes) */
  int32_t  n_expert;      /* ne[2] */
} HzExpertMatrix;

/** Expert e's matrix (0 <= e < x->n_expert) as an ordinary HzMatrix (a view; no copy).
 *  A repacked copy (mat.packed) must hold all n_expert matrices in the same layout, expert
 *  e's at byte e * expert_bytes (the repacked layouts keep every row group at its byte
 *  offset); the view then points into it. */
static inline HzMatrix
hz_expert_matrix (const HzExpertMatrix *x, int e)
{
  HzMatrix m = x->mat;
  m.data = (const uint8_t *) x->mat.data + (size_t) e * x->expert_bytes;
  if (x->mat.packed)
    m.packed = (const uint8_t *) x->mat.packed + (size_t) e * x->expert_bytes;
  return m;
}

/** Weights of one transformer block. Vectors are float32 [n] (converted at load when the
 *  file stores them in another format); optional ones are NULL when absent. */
typedef struct {
  const float *attn_norm;   /* [n_embd] */
  HzMatrix     wq;          /* [n_embd] -> [n_head * head_dim_k] */
  HzMatrix     wk;          /* [n_embd] -> [n_head_kv * head_dim_k] */
  HzMatrix     wv;          /* [n_embd] -> [n_head_kv * head_dim_v] */
  HzMatrix     wo;          /* [n_head * head_dim_v] -> [n_embd] */
  const float *bq, *bk, *bv, *bo;   /* biases (qwen2 has q/k/v; optional for llama) */
  const float *q_norm, *k_norm;     /* [head_dim_k] (qwen3, gemma3) */
  const float *attn_post_norm;      /* [n_embd] (gemma): rms_norm of the attention output */
  const float *ffn_post_norm;       /* [n_embd] (gemma): rms_norm of the FFN output */
  const float *attn_sinks;  /* [n_head] (gpt-oss): logit of a virtual key in each head's
                             * softmax denominator (its value is zero), or NULL */
  const float *ffn_norm;    /* [n_embd] */
  HzMatrix     w_gate;      /* [n_embd] -> [n_ff] */
  HzMatrix     w_up;        /* [n_embd] -> [n_ff] */
  HzMatrix     w_down;      /* [n_ff] -> [n_embd] */
  /* mixture of experts (hp.n_expert > 0; w_gate/w_up/w_down are then absent, data NULL).
   * Field names are llama.cpp's tensor names (blk.N.<name>.weight). */
  HzMatrix       ffn_gate_inp;    /* router: [n_embd] -> [n_expert] logits */
  HzExpertMatrix ffn_gate_exps;   /* per expert [n_embd] -> [n_ff_exp] */
  HzExpertMatrix ffn_up_exps;     /* per expert [n_embd] -> [n_ff_exp] */
  HzExpertMatrix ffn_down_exps;   /* per expert [n_ff_exp] -> [n_embd] */
  /* biases of the router and the experts (gpt-oss; NULL otherwise): [n_expert],
   * [n_expert][n_ff_exp], [n_expert][n_ff_exp], [n_expert][n_embd] */
  const float   *ffn_gate_inp_b, *ffn_gate_exps_b, *ffn_up_exps_b, *ffn_down_exps_b;
  /* shared expert (qwen2moe; data NULL / pointer NULL when the architecture has none) */
  const float   *ffn_gate_inp_shexp; /* [n_embd]: shared output scaled by sigmoid(this · x) */
  HzMatrix       ffn_gate_shexp;  /* [n_embd] -> [n_ff_shexp] */
  HzMatrix       ffn_up_shexp;    /* [n_embd] -> [n_ff_shexp] */
  HzMatrix       ffn_down_shexp;  /* [n_ff_shexp] -> [n_embd] */
} HzLayer;

typedef struct {
  HzHparams    hp;
  HzMatrix     tok_embd;    /* [n_embd] x n_vocab rows (rows read with to_float) */
  const float *output_norm; /* [n_embd] */
  HzMatrix     output;      /* [n_embd] -> [n_vocab]; tok_embd when output.weight absent */
  gboolean     tied_output;
  const float *rope_freqs;  /* [n_rot/2] frequency divisors, or NULL */
  HzLayer     *layers;      /* [n_layer] */
  uint64_t     n_params;    /* elements of all tensors */
  uint64_t     weight_bytes;/* bytes of all tensors */
  const char  *type_name;   /* most common matrix format by bytes ("Q4_0", "F32", ...) */
  /*< private >*/
  GPtrArray   *owned;       /* converted vectors, names */
  gsize        cpu_prepared;/* g_once flag of hz_cpu_llm_prepare (cpu/matmul.h) */
} HzLlm;

/** Architecture of a general.architecture string; FALSE if unsupported. */
gboolean hz_arch_from_name (const char *name, HzArch *out);
/** The general.architecture names the engine runs, in the table's order, joined by ", "
 *  ("llama, qwen2, qwen3, ..."): for messages that list them. Free with g_free. Pure. */
char *hz_arch_list (void);
/** The general.architecture string of `arch` ("llama", "gemma3", ...; "unknown" for a value
 *  outside the enum). Static. */
const char *hz_arch_name (HzArch arch);

/** Read and validate the hyperparameters of `arch` from the GGUF metadata.
 *  Errors: HZ_ENGINE_ERROR_BAD_MODEL naming the missing or invalid key. */
gboolean hz_hparams_load (HzHparams *hp, const HzGguf *g, HzArch arch, GError **error);

/** Read the hyperparameters and bind every tensor of the architecture, checking each
 *  tensor's presence, format (in the quant table; rows a whole number of blocks) and
 *  shape. `g` must outlive the HzLlm (weights are used in place). Errors:
 *  HZ_ENGINE_ERROR_UNSUPPORTED_ARCH, HZ_ENGINE_ERROR_BAD_MODEL (the message names the
 *  tensor and the expected and actual shapes). */
HzLlm *hz_llm_load (const HzGguf *g, GError **error);
/** FALSE with HZ_ENGINE_ERROR_INVALID_ARGUMENT ("token id X is outside the vocabulary
 *  [0, n_vocab)") when any of the n `tokens` is not a token of `llm`. Thread-safe. */
gboolean hz_llm_check_tokens (const HzLlm *llm, const int32_t *tokens, gsize n, GError **error);
/** Checks the architecture and hyperparameters only (no tensors), with hz_llm_load's
 *  errors: lets a loader refuse a model before converting its weights. */
gboolean hz_llm_check_metadata (const HzGguf *g, GError **error);
/** The architecture's hyperparameters from general.architecture and the metadata (no
 *  tensors; n_vocab stays 0), with hz_llm_load's errors. */
gboolean hz_hparams_read (HzHparams *hp, const HzGguf *g, GError **error);
/** Bytes of K and V that the layers keep for a context of n_ctx tokens at elem_bytes bytes
 *  per element (4: the CPU cache's float32; 2: f16), under the window rule: a window
 *  layer keeps min(n_ctx, n_swa) positions, the others n_ctx (hz_layer_kv_cells), each
 *  n_head_kv * (head_dim_k + head_dim_v) elements. Pure. */
uint64_t hz_hparams_kv_bytes (const HzHparams *hp, int64_t n_ctx, guint elem_bytes);
/** As hz_llm_load, with the tensors taken from `tensors` (char* name -> const HzGgufTensor*,
 *  e.g. converted at load by hz_isq_load) instead of g's; g supplies the metadata only. Both
 *  must outlive the HzLlm. `tensors` NULL: g's tensors. */
HzLlm *hz_llm_load_tensors (const HzGguf *g, GHashTable *tensors, GError **error);
void   hz_llm_free (HzLlm *llm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzLlm, hz_llm_free)

G_END_DECLS
