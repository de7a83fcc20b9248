/* engine/quant/quant-impl.h — internal to engine/quant/: codec prototypes (generated from
 * formats.def), fp16/bf16 inline conversions and small shared helpers. The block layouts
 * are on the ground floor, quant-types.h, shared with the GPU kernels. */
#pragma once

#include "quant-types.h"

#include <stdbool.h>
#include <stddef.h>

#include <math.h>
#include <string.h>

/* ---- codec prototypes, one set per table row ----------------------------------------
 * <codec>_to_float / _from_float / _vec_dot follow HzToFloatFn / HzFromFloatFn /
 * HzVecDotFn. Prototypes of functions a row does not have (per its kind/simd columns) are
 * declared but never referenced. */
#define HZ_QUANT(NAME, id, elems, bytes, vdt, codec, ...)                                   \
  void codec##_to_float (const void *restrict x, float *restrict y, int64_t n);            \
  void codec##_from_float (const float *restrict x, void *restrict y, int64_t n);          \
  void codec##_from_float_chunk (const float *restrict x, void *restrict y, int64_t n);    \
  void codec##_from_float_act (const float *restrict x, void *restrict y, int64_t n);      \
  void codec##_vec_dot (int n, float *restrict s, const void *restrict x,                  \
                        const void *restrict y);                                           \
  void codec##_vec_dot_avx2 (int n, float *restrict s, const void *restrict x,             \
                             const void *restrict y);                                      \
  void codec##_vec_dot_avx512 (int n, float *restrict s, const void *restrict x,           \
                               const void *restrict y);
#include "formats.def"
#undef HZ_QUANT

/* ---- SIMD attributes --------------------------------------------------------------
 * The library is built for baseline x86-64; SIMD kernels carry a target attribute and are
 * only called after hz_simd_supported() said yes (quant.c). */
#if defined(__x86_64__) || defined(__i386__)
#define HZ_QUANT_X86 1
#define HZ_TARGET_AVX2   __attribute__((target ("avx2,fma,f16c")))
#define HZ_TARGET_AVX512 __attribute__((target ("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define HZ_QUANT_X86 0
#endif

/* ---- fp16 / bf16 (bit-exact with ggml-impl.h) ---------------------------------------- */
static inline uint32_t hzq_f32_bits (float f) { uint32_t u; memcpy (&u, &f, 4); return u; }
static inline float hzq_bits_f32 (uint32_t u) { float f; memcpy (&f, &u, 4); return f; }

/** IEEE binary16 -> binary32, exact for every input (NaN payloads kept). */
static inline float
hzq_fp16_to_fp32 (uint16_t h)
{
  uint32_t sign = (uint32_t) (h & 0x8000u) << 16;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f)
    return hzq_bits_f32 (sign | 0x7f800000u | (m << 13));
  if (e == 0)
    {
      float v = (float) m * 0x1p-24f;        /* exact: m < 2^10 */
      return sign ? -v : v;
    }
  return hzq_bits_f32 (sign | ((e + 112u) << 23) | (m << 13));
}

/** binary32 -> binary16, round to nearest even; overflow gives inf; NaN gives a quiet NaN
 *  0x7E00 with the sign (what ggml's software fp32_to_fp16 produces). */
static inline uint16_t
hzq_fp32_to_fp16 (float f)
{
  uint32_t x = hzq_f32_bits (f);
  uint16_t sign = (uint16_t) ((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return sign | 0x7e00u;
  if (ax >= 0x477ff000u)                     /* >= 65520 rounds to inf */
    return sign | 0x7c00u;
  if (ax < 0x38800000u)                      /* below 2^-14: binary16 subnormal or zero */
    {
      if (ax <= 0x33000000u)                 /* <= 2^-25 rounds (to even) to zero */
        return sign;
      uint32_t e = ax >> 23, m = (ax & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126u - e;             /* value * 2^24 = m >> shift; 14..25 */
      uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
      if (rem > half || (rem == half && (q & 1u)))
        q++;
      return sign | (uint16_t) q;
    }
  uint32_t h = ((ax >> 23) - 112u) << 10 | ((ax >> 13) & 0x3ffu);
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    h++;                                     /* a carry into the exponent is correct */
  return sign | (uint16_t) h;
}

static inline float hzq_bf16_to_fp32 (uint16_t h) { return hzq_bits_f32 ((uint32_t) h << 16); }

/** binary32 -> bfloat16, round to nearest even, NaN made quiet (ggml_compute_fp32_to_bf16). */
static inline uint16_t
hzq_fp32_to_bf16 (float f)
{
  uint32_t u = hzq_f32_bits (f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t) ((u >> 16) | 64u);
  return (uint16_t) ((u + (0x7fffu + ((u >> 16) & 1u))) >> 16);
}

/* ---- shared scalar helpers ----------------------------------------------------------- */
/** The 6-bit scale and min of sub-block j (of 8) of a Q4_K/Q5_K super-block, from its
 *  12 packed scale bytes (ggml-quants.c get_scale_min_k4). */
static inline void
hzq_k4_scale_min (const uint8_t s[12], int j, int *sc, int *mn)
{
  if (j < 4)
    {
      *sc = s[j] & 63;
      *mn = s[j + 4] & 63;
    }
  else
    {
      *sc = (s[j + 4] & 0xf) | (s[j - 4] >> 6) << 4;
      *mn = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

/** Round to nearest, ties to even, for |f| < 2^22 (ggml-quants.c nearest_int: the
 *  12582912 magic-number trick). */
static inline int
hzq_nearest_int (float f)
{
  float v = f + 12582912.f;
  int32_t i;
  memcpy (&i, &v, 4);
  return (i & 0x007fffff) - 0x00400000;
}

/** Largest |x[i]| over n floats (0 for n = 0); ignores NaN like ggml's MAX loops. */
static inline float
hzq_absmax (const float *x, int n)
{
  float amax = 0.0f;
  for (int i = 0; i < n; i++)
    {
      float a = fabsf (x[i]);
      if (a > amax)
        amax = a;
    }
  return amax;
}

/* ---- helpers shared between codec files ------------------------------------------------ */
/** ggml's kvalues_iq4nl and kvalues_fp4 (doubled E2M1) tables (iq-tables.c). */
extern const int8_t hzq_kvalues_iq4nl[16];
extern const int8_t hzq_kvalues_fp4[16];

/** E8M0 exponent e -> 2^(e−128), half the MXFP4 scale (ggml_e8m0_to_fp32_half): the FP4
 *  table is doubled. e < 2 gives the subnormals 2^-128 and 2^-127. */
static inline float
hzq_e8m0_half (uint8_t e)
{
  return hzq_bits_f32 (e < 2 ? 0x00200000u << e : (uint32_t) (e - 1) << 23);
}

/** Index of the FP4 value nearest to x at (half) scale d, ties to the lower index
 *  (ggml best_index_mxfp4); MXFP4 and NVFP4. */
int hzq_fp4_best_index (float x, float d);

/** ggml's quantize_row_iq4_nl_impl without importance weights: one super-block of
 *  `sbs` floats (32 for IQ4_NL, 256 for IQ4_XS) in sub-blocks of 32; ntry = −1 for
 *  quantize_row_iq4_nl_ref, 7 for IQ4_XS and for llama-quantize's IQ4_NL path. Writes the
 *  fp16 super scale, the sbs/2 nibble bytes and, when sbs > 32, the 6-bit sub-block scales
 *  (scales_h/scales_l; NULL otherwise). codec-iq4.c. */
void hzq_iq4_quantize (const float *x, int sbs, int ntry, const int8_t values[16],
                       uint16_t *dh, uint8_t *q4, uint16_t *scales_h, uint8_t *scales_l);
