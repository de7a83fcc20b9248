/* engine/quant/ggml-order.h — dot kernels that sum in exactly the order of llama.cpp's CPU
 * backend, so that the engine reproduces llama.cpp's logits bit for bit.
 *
 * The quant table's vec_dot kernels (quant.h) compute the same exact integer block sums as
 * ggml, but may add the float block terms in another order (within 1e-5). That is enough
 * for perplexity, but not for reproducing greedy token ids over hundreds of steps: a one-ulp
 * difference flips the rounding of an activation quantized to Q8_0 a few layers later, and
 * the difference grows from there. This file is the table, keyed by format like every other
 * format dispatch, of kernels that follow the float order of the reference build
 * (llama.cpp c392e509 / ggml of 2025-02-20, x86-64 built with -march=native on a Xeon with
 * AVX-512 and AMX, the build that produced ../shared/golden; found by matching its logits):
 *
 *   F32 weights   ggml_vec_dot_f32 of the AVX-512 build (4 x 16-lane FMA accumulators per
 *                 64 elements, GGML_F32x16_REDUCE, then the leftovers added in sequence,
 *                 not fused); with >= 2 activation rows llamafile's tinyBLAS<16, __m512>
 *                 (one 16-lane FMA accumulator, _mm512_reduce_add_ps) when n_in % 16 == 0
 *                 and n_out % 4 == 0.
 *   AMX formats   Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS with n_out % 32 == 0 live in
 *                 ggml's AMX buffer (ggml-cpu/amx/mmq.cpp): per block (super-block) the
 *                 exact integer sum, then acc = fma((float) isum, d_w * d_a, acc) serially
 *                 (Q4_1: + fma(m_w, s_a); Q4_K/Q5_K: fnmadd of Σ mins·bsums with
 *                 dmin_w * d_a). The same order for one row (tinygemm_kernel_vnni) and for
 *                 the prompt batches here.
 *   Q4_0          n_out % 8 == 0 (no AMX): the block_q4_0x8 repack (ggml-cpu-aarch64.cpp
 *                 gemv/gemm_q4_0_8x8_q8_0) sums in the same serial order.
 *   IQ4_NL        ggml_vec_dot_iq4_nl_q8_0 (AVX2: even and odd blocks in two accumulators);
 *                 with >= 2 rows tinyBLAS_Q0_AVX (one 8-lane accumulator).
 *   Q2_K, Q3_K, and Q4_K, Q6_K, IQ4_XS without AMX
 *                 ggml_vec_dot_<t>_q8_K of the AVX2 path: 8 int32 lanes (lane l sums the
 *                 elements 4l..4l+3 of every 32), one 8-lane FMA per super-block, the mins
 *                 of Q2_K in the same accumulator and of Q4_K in a 4-lane one.
 *   MXFP4         n_out % 8 == 0: the block_mxfp4x8 repack (gemv/gemm_mxfp4_8x8_q8_0 of
 *                 ggml-cpu/arch/x86/repack.cpp, de3ff81): per block the exact integer sum
 *                 through the doubled FP4 table, then acc = fma((float) isum,
 *                 e8m0_half(e_w) * d_a, acc) serially.
 *   Q5_0, Q5_1, and Q4_0, Q4_1, Q8_0, Q5_K without AMX or repack
 *                 the quant table's AVX2 kernels already sum in ggml's AVX2 order (checked
 *                 against the golden dot results); tinyBLAS_Q0_AVX (Q5_0, Q8_0, Q4_0 with
 *                 >= 2 rows) has the same per-element order as vec_dot.
 *
 * Every other format, and the formats above on a CPU without AVX2 where the table kernel
 * is needed, fall back to the quant table's vec_dot (correct within 1e-5, not bit-exact).
 *
 * Each kernel exists at every SIMD level of quant.h, with bit-identical results: plain C
 * with explicit fmaf() (ggml-order.c: the reference and the fallback; the library is built
 * with -ffp-contract=off so that nothing else is fused), and AVX2 / AVX-512 VNNI versions
 * (ggml-order-x86.inc) that compute the integer block and lane sums with maddubs/madd or
 * dpbusd/dpwssd — exact in any order — and repeat the C version's float operations in the
 * same order (_mm256_fmadd_ps for the lane-wise FMAs, the same horizontal-sum trees). The
 * level is hz_simd_level() (CPUID, capped by HZ_SIMD=scalar|avx2|avx512).
 *
 * The serial kernels also come as tiles of weight rows × activation rows (HzGgmlTileFn,
 * AVX2 and AVX-512 VNNI) for prompt batches: one _mm256_fmadd_ps advances 8 outputs'
 * chains (8 weight rows of one token, or 8 tokens of one row), with each output's float
 * operations those of the one-row kernel in its order, so every element is bit-identical
 * to it (tests/engine/test-ggml-order.c compares them with memcmp, ragged tiles included).
 * Matrices repacked at load into 8-row interleaved groups (repack.h: Q4_0, Q4_K, Q5_K,
 * Q6_K, IQ4_XS in the shapes of their serial kernels) have tiles of their own on that
 * layout, also bit-identical to `one`, which serve decode as well.
 *
 * Thread safety: pure functions.
 */
#pragma once

#include "quant.h"
#include "ggml-order-fn.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The dot kernels of a weight matrix of `n_out` rows of `n_in` elements in `type`:
 *  `one` for a single activation row (decode), `batch` for >= 2 rows in one call (prompt
 *  processing); `exact` says whether they reproduce ggml's order (FALSE: the table's
 *  vec_dot). The activations are in the format's vec_dot_type, quantized with
 *  hz_quant_act_from_float() (the SIMD kernels rely on its int8 range −127..127, as
 *  ggml's do). Never NULL for a format with a vec_dot. At the AVX2 and AVX-512 levels,
 *  `tile` exists for the serial kernels (Q4_0, Q4_1, Q8_0, Q4_K, Q5_K, Q6_K, IQ4_XS in the
 *  shapes that select them) and `one_x4` for Q4_0 and Q4_1. */
typedef struct {
  HzVecDotFn   one;
  HzVecDotFn   batch;
  bool         exact;
  HzGgmlDot4Fn one_x4;   /* NULL: none (call `one` per row) */
  HzGgmlTileFn tile;     /* NULL: none (call `batch` per row and activation); for >= 2
                          * activation rows (on one, `one_x4` / `one` measured faster) */
} HzGgmlDots;

HzGgmlDots hz_ggml_order_dots (uint32_t type, int64_t n_out, int64_t n_in);

/** As hz_ggml_order_dots(), with the kernels of one SIMD level instead of hz_simd_level()
 *  (tests compare the levels bit for bit). All fields NULL / FALSE when the CPU lacks
 *  `level` or the format has no vec_dot. For the formats whose exact order is the table's
 *  AVX2 kernel (Q5_0, Q5_1, ...) that kernel is returned at every level if the CPU has
 *  AVX2; other formats without kernels here get the table's vec_dot (`exact` FALSE; at
 *  HZ_SIMD_SCALAR its scalar one). */
HzGgmlDots hz_ggml_order_dots_at (uint32_t type, int64_t n_out, int64_t n_in,
                                  HzSimdLevel level);

/** ggml_vec_dot_f32 of the AVX-512 build, on float32 x and y (see above); any n >= 0.
 *  Runs the kernel of hz_simd_level(). */
void hz_ggml_dot_f32 (int n, float *restrict s, const void *restrict x, const void *restrict y);
/** tinyBLAS<16, __m512> per-element order; n % 16 == 0. Level as hz_ggml_dot_f32(). */
void hz_ggml_dot_f32_tb16 (int n, float *restrict s, const void *restrict x,
                           const void *restrict y);

/** _mm512_reduce_add_ps of 16 floats: ((a_i + a_i+8) + (.. + a_i+4)) pairwise down to one. */
float hz_ggml_reduce16 (const float a[16]);
/** hsum_float_8 of ggml-cpu-quants.c: ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)). */
float hz_ggml_hsum8 (const float a[8]);

#ifdef __cplusplus
}
#endif
