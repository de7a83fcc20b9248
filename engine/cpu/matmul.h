/* engine/cpu/matmul.h — quant-agnostic matrix multiplication on the CPU.
 *
 * y[t][o] = sum_i W[o][i] * x[t][i] (+ bias[o]) for a batch of n_tok activation rows, for
 * weights W in any format of the quant table. Method (as ggml's CPU mul_mat): the float
 * activations are converted once per call to the weight format's vec_dot_type with
 * ggml-cpu's activation quantizer (hz_quant_act_from_float: e.g. Q8_0 for Q4_0/Q8_0
 * weights; F32 stays as is), then every output element is one dot of a weight row against
 * an activation row, with the kernel llama.cpp would use for this shape (HzMatrix.dot_one
 * for one row, dot_batch for several; ggml-order.h), so results are bit-identical to it. Several matrices
 * that read the same input (q/k/v, gate/up) are computed in one call, sharing the converted
 * activations and one parallel region. Loops are tiled so each weight row block is read
 * from memory once per batch. Where the format's kernel has a tiled version
 * (HzGgmlDots.tile: the serial kernels of Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS) and
 * the batch has several rows, blocks of 64 weight rows × all tokens go to it:
 * the same bits per element, each weight block unpacked once per 8 rows or tokens.
 * Matrices repacked at load (hz_cpu_matrix_repack) always go to the repacked tile, for one
 * token (decode) as for many.
 *
 * Threading: work below a threshold runs on the calling thread (waking workers costs more
 * than a tiny matmul); above it, rows are split across the pool's threads.
 * Thread safety: an HzCpuMatmul is used by one thread at a time (it owns scratch memory).
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "llm.h"
#include "threadpool.h"

G_BEGIN_DECLS

/** One output of hz_cpu_matmul: y [n_tok][w->n_out] = x W^T (+ bias [w->n_out]). */
typedef struct {
  const HzMatrix *w;
  float          *y;
  const float    *bias;   /* nullable */
} HzMatmulOut;

typedef struct _HzCpuMatmul HzCpuMatmul;

/** Scratch and threading state for matmuls. `pool` (borrowed, may be NULL = single thread)
 *  must outlive it; `n_threads` caps the threads used per call. */
HzCpuMatmul *hz_cpu_matmul_new (HzThreadPool *pool, guint n_threads);
void         hz_cpu_matmul_free (HzCpuMatmul *mm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzCpuMatmul, hz_cpu_matmul_free)

/** Compute every output in `outs` (n_outs <= 4, all with w->n_in == n_in) from the same
 *  input x [n_tok][n_in] (float32, contiguous). Outputs must not alias x or each other.
 *  Shapes are validated at model load (llm.c); here they are only asserted. */
void hz_cpu_matmul (HzCpuMatmul *mm, const float *x, int64_t n_tok, int64_t n_in,
                    const HzMatmulOut *outs, int n_outs);

/** Row-invariant mode (the serving path, cpu/forward-paged.h): always the one-row kernel
 *  (dot_one), so a row's result does not depend on how many rows share the call. */
void hz_cpu_matmul_set_row_invariant (HzCpuMatmul *mm, gboolean on);

/** Repack `m` for the CPU kernels where its format and shape have a repacked layout
 *  (quant/repack.h: Q4_0 with n_out % 8 == 0; Q4_K, Q5_K, Q6_K, IQ4_XS with n_out % 32 == 0): sets m->packed (a new buffer of
 *  n_out · row_bytes bytes, appended to `owned`, whose free function must be g_free) and
 *  m->packed_tile; hz_cpu_matmul then reads only the repacked copy, with bit-identical
 *  results. m->data is left as it is (other readers use the original). FALSE when nothing
 *  was done (no layout, already repacked, or HZ_REPACK=0 in the environment). Call at
 *  load, before the matrix is shared between threads. */
gboolean hz_cpu_matrix_repack (HzMatrix *m, GPtrArray *owned);

/** hz_cpu_matrix_repack() on every matrix that hz_cpu_matmul multiplies: the layers'
 *  projections, the output (not tok_embd, whose rows are read as they are) and the experts
 *  of MoE layers (all n_expert matrices of a projection in one copy, so that
 *  hz_expert_matrix() views stay valid); returns how many were repacked. Not thread-safe:
 *  call it through hz_cpu_llm_prepare(). */
guint hz_cpu_llm_repack (HzLlm *llm);

/** Prepare `llm` for CPU inference: hz_cpu_llm_repack() once per model (later calls return
 *  at once), so a model that runs on the GPU never pays the repacked copies' host memory
 *  and load time. Called by hz_context_new() for a context without a GPU and by HzServe's
 *  CPU path. Thread-safe (g_once); a CPU matmul already running on the same model from a
 *  GPU context's fallback meanwhile computes the same bits from the original rows. */
void hz_cpu_llm_prepare (const HzLlm *llm);

/** Threads that a job of `work` multiply-adds should use given `max_threads`: 1 below the
 *  threshold HZ_CPU_MIN_WORK_PER_THREAD, then one more thread per threshold's worth. */
guint hz_cpu_threads_for_work (double work, guint max_threads);

/** Multiply-adds per thread below which adding a thread does not pay off. */
#define HZ_CPU_MIN_WORK_PER_THREAD 65536.0

G_END_DECLS
