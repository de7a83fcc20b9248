/* engine/cpu/moe.h — mixture-of-experts feed-forward block on the CPU.
 *
 * Computes, for each row x[t] (the FFN-normed hidden state), llama.cpp's build_moe_ffn with
 * softmax gating and SiLU experts (llama-graph.cpp), as described in llm.h:
 *   p = softmax(ffn_gate_inp x)                      (ggml soft_max, bit for bit)
 *   S = the n_expert_used largest p, descending (ties to the lower expert id)
 *   w_j = p_j, / max(Σ_S p, 6.103515625e-5) when hp->expert_weights_norm
 *   y = Σ_{j in S, in that order} w_j · down_j (silu (gate_j x) ⊙ up_j x)
 *   qwen2moe: y += sigmoid(ffn_gate_inp_shexp · x) · down_sh (silu (gate_sh x) ⊙ up_sh x)
 * gpt-oss (hp->moe_softmax_selected, LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT, and
 * LLM_FFN_SWIGLU_OAI_MOE):
 *   l = ffn_gate_inp x + ffn_gate_inp_b; S = the n_expert_used largest l (as above);
 *   w = softmax(l_S) (ggml soft_max of the k selected logits);
 *   y = Σ_j w_j · (down_j swiglu_oai (gate_j x + bg_j, up_j x + bu_j) + bd_j), with
 *   swiglu_oai (hz_cpu_swiglu_oai) clamping the gate at 7 and the up at ±7.
 *
 * Batches are grouped by expert: the rows routed to expert e are gathered and go through
 * e's matrices in one hz_cpu_matmul call each, so every selected expert's weights stream
 * from memory once per batch (a grouped GEMM through the ordinary quantized kernels). With
 * at least as many active experts as threads (decode), whole experts are dealt to the
 * threads in one parallel region (balanced by rows); otherwise each expert's matmul rows
 * are split over the pool by hz_cpu_matmul. Results do not depend on the split. In the
 * matmul's
 * row-invariant mode (the serving path) a row's result does not depend on which other rows
 * share its experts.
 *
 * Thread safety: an HzCpuMoe (scratch memory) is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "cpu/matmul.h"
#include "llm.h"

G_BEGIN_DECLS

typedef struct _HzCpuMoe HzCpuMoe;

/** Scratch for MoE layers of `hp` (hp->n_expert > 0), batches of up to n_batch rows and up
 *  to n_threads threads (the pool's size: one scratch slot and single-threaded matmul per
 *  thread for the expert-parallel path). Errors: HZ_ENGINE_ERROR_INVALID_ARGUMENT when the
 *  scratch cannot be allocated. */
HzCpuMoe *hz_cpu_moe_new (const HzHparams *hp, guint n_batch, guint n_threads, GError **error);
void      hz_cpu_moe_free (HzCpuMoe *moe);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzCpuMoe, hz_cpu_moe_free)

/** Row-invariant mode of the per-thread matmuls, to be set together with that of the `mm`
 *  given to hz_cpu_moe_ffn (hz_cpu_matmul_set_row_invariant: the serving path). */
void hz_cpu_moe_set_row_invariant (HzCpuMoe *moe, gboolean on);

/** y[t] = MoE FFN of layer L applied to x[t], for t < n (n <= the n_batch of
 *  hz_cpu_moe_new); x and y are [n][n_embd] float32 and must not overlap. `mm` does the
 *  matmuls (its pool and thread count); `pool` (nullable) and n_threads run the per-row
 *  stages (routing, SwiGLU, weighted sums). */
void hz_cpu_moe_ffn (HzCpuMoe *moe, HzCpuMatmul *mm, HzThreadPool *pool, guint n_threads,
                     const HzHparams *hp, const HzLayer *L, const float *x, guint n, float *y);

/** The routing of one row: probs[0..n_expert) = softmax(logits) (in place over `logits`),
 *  ids[0..n_used) the selected experts in descending probability (ties to the lower id),
 *  weights[0..n_used) their mixing weights (renormalised when hp->expert_weights_norm).
 *  Exposed for tests. */
void hz_cpu_moe_route (const HzHparams *hp, float *logits, int32_t *ids, float *weights);

G_END_DECLS
