/* engine/cpu/forward.h — llama-family forward pass on the CPU (llama, qwen2, qwen3).
 *
 * Per block (llama.cpp's build_llama / build_qwen2 / build_qwen3 graphs):
 *   h  = rms_norm(x) * attn_norm
 *   q,k,v = h Wq^T (+bq), h Wk^T (+bk), h Wv^T (+bv)
 *   qwen3: q,k = per-head rms_norm(q) * q_norm, rms_norm(k) * k_norm
 *   q,k = rope(q, pos), rope(k, pos)            (NORM or NEOX pairing)
 *   K/V cache[pos] = k, v
 *   a_h = softmax(q_h . K_{g(h)}^T / sqrt(head_dim_k), causal) V_{g(h)}  (GQA: g(h) = h /
 *         (n_head / n_head_kv))
 *   x += a Wo^T (+bo)
 *   h  = rms_norm(x) * ffn_norm
 *   x += (silu(h Wgate^T) * (h Wup^T)) Wdown^T
 * then logits = (rms_norm(x) * output_norm) Wout^T for the rows that need them.
 *
 * Gemma (gemma2, gemma3; llama.cpp's build graphs of src/models/gemma2.cpp, gemma3.cpp):
 *   x  = embedding * sqrt(n_embd)
 *   q, k (gemma3: after their head norms) roped with the layer's RoPE (window layers:
 *   rope_freq_base_swa / rope_freq_scale_swa), then q *= attn_scale
 *   a_h = softmax(softcap(q_h . k_j)) over the layer's cells (window layers: j > p - n_swa),
 *   softcap(s) = c tanh(s / c) with c = attn_softcap (gemma2), none when 0
 *   x += rms_norm(a Wo^T) * attn_post_norm
 *   h  = rms_norm(x) * ffn_norm
 *   x += rms_norm((gelu_tanh(h Wgate^T) * (h Wup^T)) Wdown^T) * ffn_post_norm
 *   logits = softcap(..., final_softcap) when final_softcap > 0.
 *
 * gpt-oss (src/models/openai-moe.cpp): q/k/v/o biases; YaRN RoPE on every layer; each
 * head's softmax has its sink logit in the denominator (hz_cpu_softmax_ggml_sink); even
 * layers attend through the window; the FFN norm is post_attention_norm, the FFN the MoE of
 * cpu/moe.h; the last layer's FFN runs on every row (its graph takes the output rows after
 * it, not before).
 *
 * KV cache: contiguous float32 as llama.cpp lays it out without flash attention: per layer
 * K [n_ctx][n_head_kv * head_dim_k], V transposed [n_head_kv * head_dim_v][n_ctx]; a
 * sliding-window layer (Gemma) keeps a ring of n_swa + n_batch - 1 cells instead (when
 * fewer than n_ctx; position p in cell p % cells), enough for the windows of every row of
 * a batch, and attends to a window that wraps around the ring through a copy in position
 * order (the same values, order and padding count: the same floats). So the cache holds
 * the bytes of the window rule (hz_hparams_kv_bytes) plus n_batch - 1 positions per window
 * layer; going back more than n_batch positions (hz_cpu_forward_can_resume) needs a
 * recompute.
 * Every float operation follows llama.cpp's CPU backend (ggml-order.h, ops.h, attention.h),
 * so logits are bit-identical to llama.cpp c392e509 on x86-64 with AVX2.
 * All buffers are allocated at creation (sized for n_batch tokens); a forward pass
 * allocates nothing.
 *
 * Thread safety: one HzCpuForward per context, used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <math.h>
#include <stdint.h>
#include "lora-adapter.h"
#include "llm.h"
#include "threadpool.h"

G_BEGIN_DECLS

typedef struct _HzCpuForward HzCpuForward;

/** How layer il attends (from HzHparams): the scale of q.k inside the softmax (1 when the
 *  architecture scales q itself: hp->attn_scale > 0; else 1/sqrt(head_dim_k)), the
 *  soft-cap of the scores (0: none) and the sliding window (0: all earlier positions). */
typedef struct {
  float   scale;
  float   softcap;
  int32_t window;
} HzCpuAttnLayer;

static inline HzCpuAttnLayer
hz_cpu_attn_layer (const HzHparams *hp, int il)
{
  HzCpuAttnLayer a;
  a.scale = hp->attn_scale > 0 ? 1.0f : 1.0f / sqrtf ((float) hp->head_dim_k);
  a.softcap = hp->attn_softcap;
  a.window = hz_layer_swa (hp, il) ? hp->n_swa : 0;
  return a;
}

/** Head h's attention sink logit of layer L (gpt-oss), -INFINITY when the layer has none. */
static inline float
hz_cpu_attn_sink (const HzLayer *L, int h)
{
  return L->attn_sinks ? L->attn_sinks[h] : -INFINITY;
}

/** The first position a query at `pos` attends to under `window` (0: none). */
static inline int64_t
hz_cpu_attn_first (int32_t window, int64_t pos)
{
  return window > 0 && pos + 1 > window ? pos + 1 - window : 0;
}

/** Allocate the KV cache for n_ctx tokens and scratch for n_batch tokens per pass, with a
 *  pool of n_threads threads (1: no worker threads). `llm` must outlive it.
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT when the sizes are zero or the cache would
 *  not fit in the address space. */
HzCpuForward *hz_cpu_forward_new (const HzLlm *llm, guint n_ctx, guint n_batch,
                                  guint n_threads, GError **error);
void          hz_cpu_forward_free (HzCpuForward *f);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzCpuForward, hz_cpu_forward_free)

/** Threads used for compute (at most the pool size). */
void  hz_cpu_forward_set_threads (HzCpuForward *f, guint n_threads);
guint hz_cpu_forward_get_threads (HzCpuForward *f);

/** Scratch of at least `n` floats owned by `f`, grown on demand and kept between calls
 *  (contents undefined; valid until the next call or hz_cpu_forward_free). For callers
 *  that need per-step scratch (the paged attention scores) without allocating per token.
 *  Aborts on out-of-memory like g_malloc. */
float *hz_cpu_forward_scratch (HzCpuForward *f, gsize n);

/** Evaluate n (1..n_batch) tokens at positions pos0..pos0+n-1 (pos0 + n <= n_ctx; the
 *  cache must hold positions < pos0). Writes float32 logits [n_vocab] of every row
 *  (all_logits: logits[i * n_vocab], i < n) or of the last row only (logits[0..n_vocab)).
 *  Token ids must be in [0, n_vocab): checked, HZ_ENGINE_ERROR_INVALID_ARGUMENT otherwise
 *  (nothing is written to the cache then). */
gboolean hz_cpu_forward_eval (HzCpuForward *f, const int32_t *tokens, guint n, guint pos0,
                              gboolean all_logits, float *logits, GError **error);

/** Whether an evaluation may start at position pos: TRUE unless a sliding-window layer's
 *  ring (see the top) has overwritten part of the window before pos (a step back of more
 *  than n_batch positions from the newest one written); hz_cpu_forward_eval refuses such
 *  a position with HZ_ENGINE_ERROR_INVALID_ARGUMENT. Position 0 always may. */
gboolean hz_cpu_forward_can_resume (const HzCpuForward *f, guint pos);

/* LoRA stacks (HzLoraTerm, HzLoraStack): lora-adapter.h. */

/** Apply `stack` (NULL: none) to every row of the following hz_cpu_forward_eval /
 *  hz_cpu_forward_eval_hooked calls, until changed. `stack` and its adapters must stay
 *  valid while set; the caller checks that the adapters fit the model
 *  (hz_lora_check_model). A term whose scale is 0 is skipped, so the result is then
 *  bit-identical to the base. The KV cache is not touched: positions computed with other
 *  adapters stay as they were (the caller truncates). */
void hz_cpu_forward_set_lora (HzCpuForward *f, const HzLoraStack *stack);

/** K/V storage and attention supplied by the caller instead of the contiguous cache (the
 *  paged KV cache of cpu/forward-paged.h). Per layer, after q/k/v of the n rows are
 *  computed and RoPE'd — q [n][n_head * head_dim_k], k [n][n_head_kv * head_dim_k],
 *  v [n][n_head_kv * head_dim_v] — attend() stores k/v and writes att
 *  [n][n_head * head_dim_v]. `pool` (NULL: single thread) and n_threads are the forward
 *  pass's, for its own parallel regions. */
typedef struct {
  void   (*attend) (gpointer data, HzThreadPool *pool, guint n_threads, int il, guint n,
                    const float *q, const float *k, const float *v, float *att);
  gpointer data;
} HzCpuKvHook;

/** Evaluate n (1..n_batch) rows, row t at position pos[t] (rows may belong to different
 *  sequences: the hook knows), with the hook's K/V; the logits of rows out_rows[0..n_out)
 *  go to logits[i * n_vocab]. Matmuls run row-invariant (hz_cpu_matmul_set_row_invariant)
 *  and every row passes every layer, so a row's logits do not depend on the other rows.
 *  Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT (row count, token id, out_rows). */
gboolean hz_cpu_forward_eval_hooked (HzCpuForward *f, const int32_t *tokens, guint n,
                                     const guint *pos, const HzCpuKvHook *hook,
                                     const guint *out_rows, guint n_out, float *logits,
                                     GError **error);

/** As hz_cpu_forward_eval_hooked, with adapters per row: row t uses row_lora[t] (NULL:
 *  the base), whatever hz_cpu_forward_set_lora set. row_lora NULL: the stack set by
 *  hz_cpu_forward_set_lora for every row. Rows stay independent of each other (a row's
 *  logits depend only on its own adapters). */
gboolean hz_cpu_forward_eval_hooked_lora (HzCpuForward *f, const int32_t *tokens, guint n,
                                          const guint *pos, const HzCpuKvHook *hook,
                                          const HzLoraStack *const *row_lora,
                                          const guint *out_rows, guint n_out, float *logits,
                                          GError **error);

G_END_DECLS
