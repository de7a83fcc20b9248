/* learner/train-ops-gemm.h — float matrix products and the parallel loop of the training ops
 * (internal to learner/train-ops-*.c; the public face is train-ops.h's HzOpsThreads).
 *
 * The products of the training graph are C += A S^T (forward: x W^T) and C += A S
 * (backward: dy W), where S, the "source", is a row-major matrix given either as float rows
 * or as a frozen base matrix in any quant-table format (HzMatrix). A quantized source is
 * never dequantized as a whole: each thread converts the part it needs (a block of 64 rows
 * for C += A S^T; a block of 256 rows by one column chunk for C += A S) with the format's
 * to_float into a small per-thread buffer, packs it into 16-column panels and reuses it for
 * all rows of A (the T tokens of a sequence) before moving on. The inner kernel computes a
 * 6 x 16 tile of C in registers over a 256-long slice of the reduction (AVX2 + FMA when the
 * CPU has it, else plain C; chosen once at run time), as in the GotoBLAS/BLIS layering
 * (Goto & van de Geijn, "Anatomy of high-performance matrix multiplication", ACM TOMS 2008).
 *
 * Determinism: each element of C is C + the sum over fixed 256-long reduction slices, each
 * accumulated in index order in one register lane; the split of C into threads, row groups
 * and column panels never changes that order, so results are bit-identical for any thread
 * count (and do not depend on which thread takes which piece).
 *
 * Thread safety: a call uses `th`'s pool and scratch: one call at a time per HzOpsThreads.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "hanzo/engine-train.h"
#include "train-ops.h"

G_BEGIN_DECLS

/** A row-major source matrix [rows, cols] for the products: quantized rows `q` (rows =
 *  q->n_out, cols = q->n_in), or float rows `f` with row stride `ld` (floats) when q is NULL. */
typedef struct {
  const HzMatrix *q;
  const float    *f;
  int64_t         ld;
  int64_t         rows, cols;
} HzGemmSrc;

/** Source over a quant-table matrix (any format). */
HzGemmSrc hz_gemm_src_quant (const HzMatrix *W);
/** Source over float rows [rows, cols] with row stride ld. */
HzGemmSrc hz_gemm_src_float (const float *f, int64_t rows, int64_t cols, int64_t ld);

/** C[M, S.rows] += A[M, S.cols] S^T. A has row stride lda, C row stride ldc (floats);
 *  C must not alias A or S. */
void hz_gemm_nt (HzOpsThreads *th, float *C, int64_t ldc, const float *A, int64_t lda,
                 int64_t M, const HzGemmSrc *S);

/** C[M, S.cols] += A[M, S.rows] S. Same conventions as hz_gemm_nt. */
void hz_gemm_nn (HzOpsThreads *th, float *C, int64_t ldc, const float *A, int64_t lda,
                 int64_t M, const HzGemmSrc *S);

/** Triangular structure that lets a product skip work (attention's causal mask):
 *  HZ_GEMM_LOWER: in hz_gemm_*_on (nt), only C[m][n] with n <= m is needed (the rest is
 *  computed partly and must be ignored by the caller); in nn, A[m][k] == 0 for k > m.
 *  HZ_GEMM_UPPER (nn only): A[m][k] == 0 for k < m. The skipped terms are exact zeros, so
 *  the needed elements are the same as without the mask up to the sign of a zero. */
typedef enum { HZ_GEMM_FULL, HZ_GEMM_LOWER, HZ_GEMM_UPPER } HzGemmMask;

/** hz_gemm_nt on the calling thread only, which is thread `ith` of th's current region (or
 *  of none: ith 0); uses ith's scratch slots 0-2 (slot 3 stays the caller's). For products
 *  inside a parallel item (one attention head). */
void hz_gemm_nt_on (HzOpsThreads *th, guint ith, float *C, int64_t ldc, const float *A,
                    int64_t lda, int64_t M, const HzGemmSrc *S, HzGemmMask mask);
/** hz_gemm_nn on the calling thread only (as hz_gemm_nt_on). */
void hz_gemm_nn_on (HzOpsThreads *th, guint ith, float *C, int64_t ldc, const float *A,
                    int64_t lda, int64_t M, const HzGemmSrc *S, HzGemmMask mask);

/** Body of hz_ops_parallel_for: process item `item` on thread `ith`. */
typedef void (*HzOpsItemFn) (int64_t item, guint ith, gpointer data);

/** Run fn(item, ith, data) for every item in [0, n_items) on up to hz_ops_threads_n(th)
 *  threads (fewer when n_items * work_per_item, in multiply-adds, is too small to pay for
 *  waking threads: hz_cpu_threads_for_work); items are handed out from a shared counter.
 *  Deterministic as long as items write disjoint outputs. */
void hz_ops_parallel_for (HzOpsThreads *th, int64_t n_items, double work_per_item,
                          HzOpsItemFn fn, gpointer data);

/** Scratch of thread ith (< hz_ops_threads_n), slot in [0, 4): at least n floats, 64-byte
 *  aligned, contents undefined, valid until the next call for the same (ith, slot). */
float *hz_ops_scratch (HzOpsThreads *th, guint ith, int slot, gsize n);

G_END_DECLS
