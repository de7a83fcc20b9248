/* engine/synth.h — random-weight GGUF models with real architecture shapes, so benchmarks
 * and format tests need no downloads (`hanzo synth`).
 *
 * Weights (float32 before quantization, Gaussian from a seeded xoshiro256** + Box-Muller):
 *   - every matrix [n_in] -> [n_out]: N(0, 1/sqrt(n_in)), so each output element of a
 *     unit-variance input has unit variance and activations stay O(1) through the layers;
 *   - token_embd and output: N(0, 1/sqrt(n_embd)) (logits of std ~1);
 *   - RMSNorm weights (attn_norm, ffn_norm, output_norm, qwen3 attn_q/k_norm): 1.0;
 *   - qwen2 q/k/v biases: N(0, 0.02);
 *   - gemma2/gemma3 norm weights (attn_norm, ffn_norm, output_norm, gemma3's attn_q/k_norm):
 *     1 + N(0, 0.1), the stored 1 + w of llama.cpp's converter, different per tensor so that
 *     a norm applied in the wrong place shows; post_attention_norm and post_ffw_norm
 *     4 + N(0, 0.1), so that the blocks' outputs outweigh the embedding (RMS 1 after the
 *     sqrt(n_embd) scale), which with the tied output would make the model repeat its
 *     input token.
 * Gemma shapes also write <arch>.attention.sliding_window, attention.key_length /
 * value_length, gemma3's rope.freq_base_swa and linear rope.scaling (type, factor) of the
 * global layers, gemma2's attn_logit_softcapping (50) and final_logit_softcapping (30), and
 * no output.weight (the output reuses token_embd, as in every Gemma).
 * gpt-oss shapes write llama.cpp's openai-moe tensors: q/k/v/o biases N(0, 0.1),
 * attn_sinks [n_head] N(0, 1), post_attention_norm (its FFN norm) and the other norms
 * 1 + N(0, 0.1), the router's bias [n_expert] and the experts' biases
 * ffn_{gate,up}_exps.bias [n_ff_exp, n_expert], ffn_down_exps.bias [n_embd, n_expert]
 * N(0, 0.1), an untied output; and <arch>.attention.sliding_window, key_length,
 * value_length, expert_feed_forward_length and YaRN scaling (rope.scaling.type yarn,
 * factor, original_context_length).
 * Mixture-of-experts shapes (n_expert > 0) write llama.cpp's MoE tensors instead of the dense
 * FFN: blk.N.ffn_gate_inp [n_embd, n_expert] (router, N(0, 1/sqrt(n_embd)), kept F32 as
 * llama-quantize does), ffn_gate_exps / ffn_up_exps [n_embd, n_ff_exp, n_expert] and
 * ffn_down_exps [n_ff_exp, n_embd, n_expert]; qwen2moe also the shared expert
 * (ffn_gate_inp_shexp [n_embd], ffn_gate/up_shexp [n_embd, n_ff_shexp], ffn_down_shexp)
 * and metadata <arch>.expert_count, expert_used_count, expert_feed_forward_length
 * (qwen2moe/qwen3moe) and expert_shared_feed_forward_length (qwen2moe).
 * Each tensor is generated in fixed chunks of rows, each with its own RNG stream derived
 * from (seed, tensor name, chunk), so the file is the same for any thread count. Matrices
 * are then quantized through the format table with llama-quantize's per-tensor rules for
 * the chosen file type (engine/quantize.h); 1-D tensors stay F32.
 *
 * Vocabulary: every `tokenizer.*` key is copied from a given GGUF; n_vocab is the length of
 * its tokenizer.ggml.tokens (the shape's own vocabulary size is then ignored).
 *
 * Thread safety: reentrant.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "quantize.h"

G_BEGIN_DECLS

typedef struct {
  char    name[48];     /* "tinyllama-1.1b", "custom" */
  char    arch[16];     /* default architecture: "llama", "qwen2", "qwen3", "qwen2moe",
                         * "qwen3moe" (MoE "llama" = Mixtral) */
  int32_t n_embd, n_layer, n_head, n_head_kv;
  int32_t head_dim;     /* 0: n_embd / n_head */
  int32_t n_ff;
  int32_t n_vocab;      /* of the original model (informational; the vocab GGUF decides) */
  int32_t n_ctx;
  float   rope_base, norm_eps;
  gboolean tied;        /* no output.weight: the output reuses token_embd */
  int32_t n_expert, n_expert_used;  /* MoE: experts per layer and per token (0: dense) */
  int32_t n_ff_exp;     /* MoE: width of one expert (0: n_ff for llama, n_ff / n_expert_used
                         * for qwen2moe/qwen3moe, as llama.cpp) */
  int32_t n_ff_shexp;   /* qwen2moe: width of the shared expert (0: n_ff) */
  /* gemma2 / gemma3 (0 for the others) */
  int32_t n_swa;        /* <arch>.attention.sliding_window (0: key not written) */
  float   rope_base_swa;/* gemma3: <arch>.rope.freq_base_swa (0: key not written) */
  float   rope_linear;  /* gemma3: linear RoPE scaling factor of the global layers (0: none) */
  /* gpt-oss (0 for the others) */
  float   rope_yarn;    /* YaRN factor (rope.scaling.type yarn, rope.scaling.factor) */
  int32_t yarn_orig_ctx;/* rope.scaling.original_context_length */
} HzSynthShape;

/** Parses a shape: a name (tinyllama-1.1b, llama2-7b, llama3-8b, qwen2.5-0.5b, qwen3-0.6b,
 *  moe-30b-a3b (Qwen3-30B-A3B), tiny-qwen3moe, tiny-mixtral, tiny-qwen2moe, gemma3-1b,
 *  gemma3-12b, gemma2-2b, tiny-gemma3, tiny-gemma2, gpt-oss-20b, gpt-oss-120b,
 *  tiny-gpt-oss, mid-gpt-oss) or
 *  "custom:dim=128,layers=2,heads=4,kv=2,ffn=384[,head_dim=D][,ctx=N][,tied=0|1]
 *  [,rope_base=F][,eps=F][,experts=E,experts_used=K[,ffn_exp=F][,ffn_shexp=F]]
 *  [,window=W][,rope_base_swa=B][,rope_linear=F][,yarn=F[,yarn_ctx=N]]".
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT naming the bad field (values above 2^24, more
 *  than 4096 layers, heads not a multiple of kv, ...). */
gboolean hz_synth_shape_parse (const char *spec, HzSynthShape *out, GError **error);

/** Names of the built-in shapes, NULL-terminated (static). */
const char *const *hz_synth_shape_names (void);

typedef struct {
  const char  *arch;        /* "llama", "qwen2", "qwen3", "qwen2moe", "qwen3moe", "gemma2",
                             * "gemma3" (dense shapes only), "gpt-oss" (its MoE shapes
                             * only); NULL = the
                             * shape's. A MoE shape needs llama or a *moe arch, and the
                             * *moe archs need a MoE shape. */
  HzSynthShape shape;
  HzFtype      ftype;       /* file type (mix rules as llama-quantize) */
  gboolean     pure;        /* every matrix at the default type (fallback still applies) */
  int32_t      matrix_type; /* >= 0: every quantizable matrix in this ggml type instead of the
                             * file type's mix (tests of single formats; its block must divide
                             * the rows); -1: use ftype. Zero-initialised params mean F32.
                             * The formats without an encoder (hz_synth_random_blocks) get
                             * random blocks instead of quantized Gaussian weights. */
  int32_t      expert_type; /* > 0: the experts' 3-D tensors (ffn_{gate,up,down}_exps) in this
                             * ggml type (MXFP4 for gpt-oss as released); 0: as the other
                             * matrices */
  guint64      seed;
  const char  *vocab_gguf;  /* required: tokenizer source */
  const char  *chat_template; /* nullable: written as tokenizer.chat_template (instead of
                             * the vocabulary GGUF's, if any) */
  guint        n_threads;   /* 0 = cores */
  gboolean     fast;        /* benchmark files: only the first chunk of rows of each tensor
                             * (about 1M elements) is generated and quantized; every later
                             * row is a copy of one of its rows, chosen by the chunk's RNG
                             * stream (same bytes per row, so speed is unchanged; a model
                             * many times faster to write, e.g. a 30B MoE in seconds per
                             * GB instead of quantizing 30 B floats). Not for accuracy tests:
                             * the weights repeat. Still deterministic for any thread count. */
} HzSynthParams;

/** TRUE for the weight formats whose ggml quantizer needs an importance matrix, which the
 *  quant table cannot encode (IQ2_XXS, IQ2_XS, IQ1_S): synth writes them as random blocks,
 *  every byte drawn from the seeded RNG except the leading float16 super-block scale d,
 *  which is set per block so that the block's decoded values have the RMS the Gaussian
 *  would have (N(0, 1/sqrt(n_in))). The weights are then not Gaussian but are valid
 *  blocks of the format with the same scale, which is what format and speed tests need. */
gboolean hz_synth_random_blocks (uint32_t type);

/** Writes the model to `out` (atomically). Before any weight is generated, the tensor
 *  data's size (each tensor padded to the 32-byte alignment; the metadata comes on top) is
 *  checked against the free space of `out`'s file system (hz_atomic_file_check_space()).
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT (bad shape, a MoE shape with a dense-only arch
 *  or the reverse, a format the quant table cannot encode),
 *  HZ_ENGINE_ERROR_UNSUPPORTED_ARCH, G_FILE_ERROR_NOSPC (not enough free space; nothing is
 *  written), HZ_GGUF_ERROR_* for the vocab file or the output. */
gboolean hz_synth_write (const HzSynthParams *p, const char *out, GError **error);

G_END_DECLS
