/* engine/backend-hip/forward-gpu.h — llama-family inference on the GPU (issue 4): the
 * CPU forward pass of engine/cpu/forward.h (llama, qwen2, qwen3) as one device-resident
 * decode step, captured once as a graph (CUDA graph / hipGraph) and replayed, and a
 * prefill pass that runs a batch of prompt tokens at once.
 *
 * Step (one token; all buffers on the device; pos and the token id are device int32s):
 *   x = embed(tok)                                    (format decoder, hzk embed)
 *   per layer: h = rms_norm(x (+= previous residual)) · attn_norm, quantized to int8
 *              qkv = [Wq|Wk|Wv] h                     (one matvec when the types agree)
 *              q, k = (bias, q/k norm) RoPE(pos); K/V cache[pos] = k, v
 *              a = flash-decode attention (split-K over positions 0..pos, GQA)
 *              y = Wo a;  h = rms_norm(x += y (+bo)) · ffn_norm
 *              gu = [Wgate|Wup] h;  s = silu(g)·u;  y = Wdown s
 *   logits = Wout rms_norm(x += y) · output_norm;  tok = argmax(logits) (or a draw,
   hzk_sample);  pos += 1
 * Prefill (hz_gpu_forward_eval with n > 1; up to 512 tokens per pass): the same ops on n
 * rows — embedding of n tokens, norms and SwiGLU per row (each row quantized as the CPU
 * quantizes it), every matrix through the tiled int8 matmul qmmq_core (kernels/qmmq.hip),
 * RoPE and cache append of n positions, causal tiled attention (hzk_attn_prefill) — and
 * the logits of the last row only (or of every row when asked). HZ_GPU_PREFILL=0 runs
 * the prompt as n decode steps instead.
 * Mixture of experts (qwen2moe, qwen3moe, llama with experts = Mixtral; engine/llm.h):
 * the FFN of each layer is then router logits = Wr h (matvec / matmul), softmax and top-k
 * on the device (hzk_moe_route: ids and weights stay in device memory), the k selected
 * experts' gate|up and down through the decode matvec's body with per-expert weight base
 * pointers read from a device array indexed by the device-side ids (hzk_moe_matvec: the
 * step stays one captured graph), SwiGLU of the k rows, the weighted sum in the CPU's
 * order (+ qwen2moe's shared expert scaled by sigmoid(gate · h)). Prefill sorts the
 * (token, expert) pairs by expert on the device (hzk_moe_plan) and runs every expert's
 * rows through the prefill matmul's tile body once per pass, one launch for all experts
 * (hzk_moe_matmul). Experts are uploaded one tensor per expert (gate and up stacked).
 * Gemma (gemma2, gemma3; engine/llm.h): the embedding rows × √n_embd, each layer's own
 * RoPE table (the window layers' base and scale), the window layers' attention over their
 * window and gemma2's score soft-capping (HzkAttnMask; q·k scaled by attn_scale), the
 * post-attention / post-FFN RMSNorms of the block outputs before the residual adds (into
 * yn / pyn), GeGLU through the CPU's fp16 GELU table, the final logit soft-cap; the paged
 * serving hook (forward-gpu-paged.c) reads the window layers' table and masks the same way.
 * KV cache: [n_layer][n_ctx][n_head_kv·head_dim] for K and for V (not transposed), fp32
 * (default; the CPU's precision) or fp16 (HZ_GPU_KV=f16). RoPE: a table of
 * hz_cpu_rope_cache rows for every position, made on the host at creation, so every RoPE
 * variant of the CPU (YaRN, Llama 3 factors) is exact.
 *
 * Weights stay in their GGUF formats (kernels/qdec.h decoders; formats without one are
 * converted to F16 at upload, hz-gpu.h).
 * Activations feeding a matvec are quantized as the CPU quantizes them for that weight
 * format (Q8_0 / Q8_1 / Q8_K, kernels/hzk.h HZK_ACT_*).
 * Environment: HZ_GPU_KV=f16 (fp16 KV cache), HZ_GPU_GRAPH=0 (launch the kernels directly
 * instead of replaying the graph), HZ_GPU_ACT=per32 (K-quant activations on per-32 fp32
 * scales instead of the CPU's Q8_K: faster, not bit-compatible).
 *
 * Thread safety: one HzGpuForward per context, used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine.h"
#include "llm.h"
#include "hz-gpu.h"

G_BEGIN_DECLS

typedef struct _HzGpuForward HzGpuForward;

/** Open GPU 0 and upload `llm` (which must outlive the result) with a KV cache of n_ctx
 *  positions. Errors: HZ_GPU_ERROR_NO_DEVICE (no GPU: the message says why),
 *  HZ_GPU_ERROR_UNSUPPORTED (a shape the kernels do not take: head dims above 256, …),
 *  HZ_GPU_ERROR_RUNTIME (out of device memory, …). */
HzGpuForward *hz_gpu_forward_new (const HzLlm *llm, guint n_ctx, GError **error);
void hz_gpu_forward_free (HzGpuForward *f);
/** "NVIDIA H200 (cuda, …), 1.2 GB of weights, KV f32" */
const char *hz_gpu_forward_describe (const HzGpuForward *f);

/** Same contract as hz_cpu_forward_eval (forward.h): n tokens at positions pos0.., float
 *  logits of every row (all_logits) or of the last (logits NULL: none). Token ids are
 *  checked. n == 1 replays the decode graph; n > 1 runs the prefill pass in chunks of up
 *  to 512 tokens (its buffers are allocated at the first one). */
gboolean hz_gpu_forward_eval (HzGpuForward *f, const int32_t *tokens, guint n, guint pos0,
                              gboolean all_logits, float *logits, GError **error);

/** Greedy decoding on the device without host round trips: from `token` at position pos,
 *  n_steps graph replays, each feeding its argmax to the next; out_ids[i] = the token
 *  chosen after step i. Stops early at the context end (returns the count in *n_done). */
gboolean hz_gpu_forward_greedy (HzGpuForward *f, int32_t token, guint pos, guint n_steps,
                                int32_t *out_ids, guint *n_done, GError **error);

/** Device sampling (kernels/sample.hip, hzk_sample): the parameters of later
 *  hz_gpu_forward_sample calls, and the device RNG re-seeded from p->seed exactly as
 *  hz_sampler_new seeds the CPU's (xoshiro256** via splitmix64). The draw follows
 *  hz_sampler_sample's chain (top-k -> temperature -> top-p -> min-p -> draw) without
 *  penalties: HZ_GPU_ERROR_UNSUPPORTED when p asks for a repeat, frequency or presence
 *  penalty (sample on the host then). Synchronous. */
gboolean hz_gpu_forward_set_sampler (HzGpuForward *f, const HzSamplerParams *p, GError **error);
/** As hz_gpu_forward_greedy, each step drawing its token on the device with the
 *  parameters and RNG of hz_gpu_forward_set_sampler (its own captured graph; the
 *  parameters are read from device memory, so a new set_sampler needs no new capture).
 *  HZ_GPU_ERROR_INVALID before any set_sampler. */
gboolean hz_gpu_forward_sample (HzGpuForward *f, int32_t token, guint pos, guint n_steps,
                                int32_t *out_ids, guint *n_done, GError **error);

/** Weight bytes one decode step reads (matrices in their device formats + the embedding
 *  row), for GB/s figures. */
uint64_t hz_gpu_forward_step_bytes (const HzGpuForward *f);

/** Weight tensors kept as F16 because their format has no device decoder yet. */
guint hz_gpu_forward_n_converted (const HzGpuForward *f);

/** Time one pass op by op with events between the launches (no graph: launch gaps
 *  included): n == 1 a decode step of tokens[0] at pos, 1 < n <= 512 a prefill pass of n
 *  tokens from pos (the last row's logits). ms[c] = milliseconds of category c,
 *  (*names)[c] its name, *n_cat categories (at most 16). The pass's effects are those of a
 *  real one (KV cache rows written). HZ_ENGINE_ERROR_INVALID_ARGUMENT for n or pos out of
 *  range or bad token ids. */
gboolean hz_gpu_forward_profile (HzGpuForward *f, const int32_t *tokens, guint n, guint pos,
                                 double *ms, const char *const **names, int *n_cat,
                                 GError **error);

/* ---- paged serving (forward-gpu-paged.h, issue 5) ------------------------------------ */

/** Attention of one layer for hz_gpu_forward_rows, in place of the contiguous cache's
 *  RoPE + KV append + attention: from qkv [n][n_head·hdk + 2·n_head_kv·hd] (the q|k|v
 *  product of the n rows, device; bqkv / q_norm / k_norm the layer's bias and q/k norms,
 *  device, nullable) write att [n][n_head·hdv] (device). Enqueued on the HzGpu's stream. */
typedef gboolean (*HzGpuAttnHook) (gpointer data, int il, guint n, const float *qkv,
                                   const float *bqkv, const float *q_norm, const float *k_norm,
                                   float *att, GError **error);

/** The weights of `llm` on GPU 0 without a KV cache (the paged pool is the caller's):
 *  only hz_gpu_forward_rows runs on it (eval / greedy / sample / profile fail with
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT). n_ctx: positions of the RoPE table; max_rows: rows
 *  per hz_gpu_forward_rows call. Errors as hz_gpu_forward_new. */
HzGpuForward *hz_gpu_forward_new_weights (const HzLlm *llm, guint n_ctx, guint max_rows,
                                          GError **error);
/** The device and the RoPE table (device, [n_ctx][n_rot] cos/sin pairs, hz_cpu_rope_cache
 *  rows) of f. */
HzGpu *hz_gpu_forward_gpu (HzGpuForward *f);
const float *hz_gpu_forward_rope_table (const HzGpuForward *f);
/** The window layers' RoPE table (their own base and scale; as hz_gpu_forward_rope_table),
 *  or NULL when the model has no window layers. */
const float *hz_gpu_forward_rope_table_swa (const HzGpuForward *f);

/** One pass of n rows (1..max_rows; tokens host int32s) through every layer, `attn` doing
 *  each layer's attention (the rows may belong to many sequences: the hook knows their
 *  positions): the prefill pass's ops on n rows, each matrix streamed once per 8 rows by
 *  the decode matvec (batches of up to HZK_MAX_BATCH) when n <= mv_rows, once by qmmq
 *  otherwise (mv_rows 0: always qmmq, whose rows do not depend on the other rows of the
 *  pass; the matvec's differ from qmmq's in rounding). Then the logits of
 *  the n_out rows out_rows_dev[i] (device int32s, < n) into logits [n_out][n_vocab] (host;
 *  synchronous then). A pass whose every row gives logits (n_out == n: decode steps) is
 *  captured as a graph at the first pass of n rows and replayed after (HZ_GPU_GRAPH=0:
 *  never), so for a given n the hook must enqueue the same launches on the same buffers
 *  (positions, tables and the like read from device memory). Errors:
 *  HZ_ENGINE_ERROR_INVALID_ARGUMENT (row counts, token ids), the hook's,
 *  HZ_GPU_ERROR_RUNTIME. */
gboolean hz_gpu_forward_rows (HzGpuForward *f, const int32_t *tokens, guint n,
                              HzGpuAttnHook attn, gpointer attn_data, guint mv_rows,
                              const int *out_rows_dev, guint n_out, float *logits,
                              GError **error);

G_END_DECLS
