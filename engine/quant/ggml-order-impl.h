/* engine/quant/ggml-order-impl.h — internal to ggml-order*.c: the list of exact-order
 * kernels and the per-SIMD-level tables that hold them.
 *
 * Every kernel exists once as plain C (ggml-order.c, the reference and the fallback) and
 * once per x86 SIMD level (ggml-order-x86.c, instantiated from ggml-order-x86.inc). The
 * SIMD versions compute the integer block/lane sums with AVX2 maddubs/madd or AVX-512 VNNI
 * dpbusd/dpwssd (exact in any order) and do every float operation of the C version in the
 * same order with the same rounding, so all levels give bit-identical results
 * (tests/engine/test-ggml-order.c). */
#pragma once

#include "ggml-order-fn.h"
#include "quant-impl.h"

/* The repacked Q4_0 layout of repack.h (HZ_REPACK_Q4_0X8): rows per interleaved group and
 * bytes per group and block; the C (repack.c) and x86 (ggml-order-x86.inc) kernels read it. */
#define HZ_REPACK_Q4_0X8_ROWS  8
#define HZ_REPACK_Q4_0X8_BLOCK 144

/* Kernel ids; the comment names the ggml code whose float order it follows. */
typedef enum {
  HZG_F32,            /* ggml_vec_dot_f32, AVX-512 build */
  HZG_F32_TB16,       /* tinyBLAS<16, __m512> */
  HZG_Q4_0_SERIAL,    /* gemv/gemm_q4_0_8x8_q8_0 (repack), AMX q4_0 */
  HZG_Q4_1_SERIAL,    /* AMX tinygemm_kernel_vnni<q8_1, q4_1> */
  HZG_Q8_0_SERIAL,    /* AMX tinygemm_kernel_vnni<q8_0> */
  HZG_IQ4_NL,         /* ggml_vec_dot_iq4_nl_q8_0, AVX2 */
  HZG_IQ4_NL_TB,      /* tinyBLAS_Q0_AVX<block_iq4_nl> */
  HZG_Q2_K_LANES,     /* ggml_vec_dot_<t>_q8_K, AVX2 (8 float lanes) */
  HZG_Q3_K_LANES,
  HZG_Q4_K_LANES,
  HZG_Q6_K_LANES,
  HZG_IQ4_XS_LANES,
  HZG_Q4_K_SERIAL,    /* AMX tinygemm_kernel_vnni<q8_K, t> (one FMA per super-block) */
  HZG_Q5_K_SERIAL,
  HZG_Q6_K_SERIAL,
  HZG_IQ4_XS_SERIAL,
  HZG_MXFP4_SERIAL,   /* gemv/gemm_mxfp4_8x8_q8_0 (repack, AVX2) */
  HZG_N_KERNELS
} HzgKernel;

/** The kernels of one SIMD level, indexed by HzgKernel; filled completely (a level without
 *  a kernel of its own repeats a lower level's). The x86 tables exist only on x86 builds
 *  and may only be used after hz_simd_supported() said yes. */
extern const HzVecDotFn hzg_kernels_scalar[HZG_N_KERNELS];
extern const HzVecDotFn hzg_kernels_avx2[HZG_N_KERNELS];
extern const HzVecDotFn hzg_kernels_avx512[HZG_N_KERNELS];
/** Four-row versions (HzGgmlDot4Fn) of the compute-bound serial 32-element kernels (Q4_0,
 *  Q4_1), indexed by HzgKernel, NULL elsewhere; x86 levels only. */
extern const HzGgmlDot4Fn hzg_kernels_x4_avx2[HZG_N_KERNELS];
extern const HzGgmlDot4Fn hzg_kernels_x4_avx512[HZG_N_KERNELS];
/** Tiled versions (HzGgmlTileFn: rows × tokens) of the same serial kernels, indexed by
 *  HzgKernel, NULL elsewhere; x86 levels only. */
extern const HzGgmlTileFn hzg_kernels_tile_avx2[HZG_N_KERNELS];
extern const HzGgmlTileFn hzg_kernels_tile_avx512[HZG_N_KERNELS];
/** The same tiles on weights repacked at load (repack.h), indexed by HzgKernel, NULL where
 *  the kernel has no repacked layout; x86 levels only (the C one lives in repack.c). */
extern const HzGgmlTileFn hzg_kernels_packed_avx2[HZG_N_KERNELS];
extern const HzGgmlTileFn hzg_kernels_packed_avx512[HZG_N_KERNELS];

/* Where the 8-lane K-quant kernels (ggml_vec_dot_<t>_q8_K, AVX2) put the mins term
 * Σ mn·bsums scaled by −dmin_w·d_a. */
typedef enum {
  HZG_MINS_NONE,    /* Q3_K, Q6_K, IQ4_XS */
  HZG_MINS_LANES8,  /* Q2_K: madd of the 16 mins with the 16 bsums, FMA'd into acc first */
  HZG_MINS_LANES4,  /* Q4_K: bsums added in pairs, madd with the 8 mins, own 4-lane acc */
} HzgMins;

/* The 32-element formats of the row-per-lane tiles (ggml-order-x86.inc). */
typedef enum { HZG_RL_Q4_0, HZG_RL_Q4_1, HZG_RL_Q8_0 } HzgRowLanes;

/* Block types named after the codecs, for the kernel-instantiating macros. */
typedef HzBlockQ2_K HzBlock_q2_K;
typedef HzBlockQ3_K HzBlock_q3_K;
typedef HzBlockQ4_K HzBlock_q4_K;
typedef HzBlockQ5_K HzBlock_q5_K;
typedef HzBlockQ6_K HzBlock_q6_K;
typedef HzBlockIQ4_XS HzBlock_iq4_xs;
