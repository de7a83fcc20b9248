/* engine/quant/quant-types.h — the ground floor of the formats, shared by the CPU engine
 * (C) and the GPU kernels (HIP C++, nvcc), as ggml-common.h is for ggml: the format ids
 * (HzType, generated from formats.def), the packed block layouts, and the codec function
 * types and SIMD levels that the format table (quant.h) is made of. Nothing here has code;
 * every file of engine/quant/ and kernels/qdec.h may include it.
 *
 * Block layouts follow ggml-common.h (llama.cpp c392e509, ggml d99724f2 for MXFP4/NVFP4/
 * Q1_0/Q2_0): packed little-endian structs, sizes checked by static asserts against the
 * block_bytes column of formats.def. Half-precision
 * fields are stored as raw uint16_t bits, so the same structs are valid C and C++ and
 * device code reads them with offsetof().
 */
#pragma once

#include <stdint.h>

#if defined(__cplusplus)
#define HZ_QUANT_STATIC_ASSERT static_assert
#else
#define HZ_QUANT_STATIC_ASSERT _Static_assert
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, ...) HZ_TYPE_##NAME = id,
#include "formats.def"
#undef HZ_QUANT
  HZ_TYPE_COUNT_ = 64  /* ids are < 64 (ggml's GGML_TYPE_COUNT is 40) */
} HzType;

/** Dequantize `n` elements (n a multiple of block_elems) from packed blocks `x` to `y`. */
typedef void (*HzToFloatFn) (const void *restrict x, float *restrict y, int64_t n);
/** Reference-quantize `n` floats (multiple of block_elems) into packed blocks (ggml's
 *  quantize_row_*_ref, bit-exact). */
typedef void (*HzFromFloatFn) (const float *restrict x, void *restrict y, int64_t n);
/** *s = dot(x, y) over n elements: x in this format, y in the format's vec_dot_type.
 *  n is a multiple of both block sizes. Accumulation order follows ggml's scalar path
 *  (SIMD variants selected at run time agree within the tolerances of the golden data). */
typedef void (*HzVecDotFn) (int n, float *restrict s, const void *restrict x,
                            const void *restrict y);

/** SIMD levels of the vec_dot kernels. The level in use is the highest one that both the
 *  CPU supports (CPUID via __builtin_cpu_supports) and the format implements; the
 *  environment variable HZ_SIMD=scalar|avx2|avx512 caps it (read once, at first use). */
typedef enum {
  HZ_SIMD_SCALAR = 0,   /* plain C, always available, the reference */
  HZ_SIMD_AVX2,         /* AVX2 + FMA + F16C */
  HZ_SIMD_AVX512,       /* AVX-512 F/BW/VL + VNNI */
  HZ_SIMD_LEVELS
} HzSimdLevel;

#define HZ_QK_K 256   /* super-block size of the K-, IQ- and TQ-quants */

/* ---- block layouts --------------------------------------------------------------- */
typedef struct { uint16_t d; uint8_t qs[16]; }                       HzBlockQ4_0;
typedef struct { uint16_t d, m; uint8_t qs[16]; }                    HzBlockQ4_1;
typedef struct { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; }        HzBlockQ5_0;
typedef struct { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; }     HzBlockQ5_1;
typedef struct { uint16_t d; int8_t qs[32]; }                        HzBlockQ8_0;
typedef struct { uint16_t d, s; int8_t qs[32]; }                     HzBlockQ8_1;
typedef struct { uint8_t scales[16]; uint8_t qs[64]; uint16_t d, dmin; } HzBlockQ2_K;
typedef struct { uint8_t hmask[32]; uint8_t qs[64]; uint8_t scales[12]; uint16_t d; } HzBlockQ3_K;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qs[128]; } HzBlockQ4_K;
typedef struct { uint16_t d, dmin; uint8_t scales[12]; uint8_t qh[32]; uint8_t qs[128]; } HzBlockQ5_K;
typedef struct { uint8_t ql[128]; uint8_t qh[64]; int8_t scales[16]; uint16_t d; } HzBlockQ6_K;
typedef struct { float d; int8_t qs[256]; int16_t bsums[16]; }       HzBlockQ8_K;
typedef struct { uint16_t d; uint16_t qs[32]; }                      HzBlockIQ2_XXS;
typedef struct { uint16_t d; uint16_t qs[32]; uint8_t scales[8]; }   HzBlockIQ2_XS;
typedef struct { uint16_t d; uint8_t qs[64]; uint8_t qh[8]; uint8_t scales[8]; } HzBlockIQ2_S;
typedef struct { uint16_t d; uint8_t qs[96]; }                       HzBlockIQ3_XXS;
typedef struct { uint16_t d; uint8_t qs[64]; uint8_t qh[8]; uint8_t signs[32]; uint8_t scales[4]; } HzBlockIQ3_S;
typedef struct { uint16_t d; uint8_t qs[32]; uint16_t qh[8]; }       HzBlockIQ1_S;
typedef struct { uint8_t qs[32]; uint8_t qh[16]; uint8_t scales[8]; } HzBlockIQ1_M;
typedef struct { uint16_t d; uint8_t qs[16]; }                       HzBlockIQ4_NL;
typedef struct { uint16_t d; uint16_t scales_h; uint8_t scales_l[4]; uint8_t qs[128]; } HzBlockIQ4_XS;
typedef struct { uint8_t qs[48]; uint8_t qh[4]; uint16_t d; }        HzBlockTQ1_0;
typedef struct { uint8_t qs[64]; uint16_t d; }                       HzBlockTQ2_0;
typedef struct { uint8_t e; uint8_t qs[16]; }                        HzBlockMXFP4;
typedef struct { uint8_t d[4]; uint8_t qs[32]; }                     HzBlockNVFP4;
typedef struct { uint16_t d; uint8_t qs[16]; }                       HzBlockQ1_0;
typedef struct { uint16_t d; uint8_t qs[16]; }                       HzBlockQ2_0;

HZ_QUANT_STATIC_ASSERT (sizeof (HzBlockQ4_0) == 18 && sizeof (HzBlockQ4_1) == 20
                && sizeof (HzBlockQ5_0) == 22 && sizeof (HzBlockQ5_1) == 24
                && sizeof (HzBlockQ8_0) == 34 && sizeof (HzBlockQ8_1) == 36
                && sizeof (HzBlockQ2_K) == 84 && sizeof (HzBlockQ3_K) == 110
                && sizeof (HzBlockQ4_K) == 144 && sizeof (HzBlockQ5_K) == 176
                && sizeof (HzBlockQ6_K) == 210 && sizeof (HzBlockQ8_K) == 292
                && sizeof (HzBlockIQ2_XXS) == 66 && sizeof (HzBlockIQ2_XS) == 74
                && sizeof (HzBlockIQ2_S) == 82 && sizeof (HzBlockIQ3_XXS) == 98
                && sizeof (HzBlockIQ3_S) == 110 && sizeof (HzBlockIQ1_S) == 50
                && sizeof (HzBlockIQ1_M) == 56 && sizeof (HzBlockIQ4_NL) == 18
                && sizeof (HzBlockIQ4_XS) == 136 && sizeof (HzBlockTQ1_0) == 54
                && sizeof (HzBlockTQ2_0) == 66 && sizeof (HzBlockMXFP4) == 17
                && sizeof (HzBlockNVFP4) == 36 && sizeof (HzBlockQ1_0) == 18
                && sizeof (HzBlockQ2_0) == 18,
                "block layouts must be packed exactly as in ggml-common.h");

#ifdef __cplusplus
}
#endif
