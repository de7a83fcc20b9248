/* engine/quant/codec-float.c — the float formats F32, F16 and BF16 (one element per
 * "block"). Each is dotted against itself (ggml CPU type traits).
 *
 * Scalar dots follow ggml-cpu/vec.cpp ggml_vec_dot_{f32,f16,bf16} without SIMD: each
 * product is rounded to float, then summed in double (ggml_float). The AVX2 kernels keep
 * four 8-lane float accumulators with FMA, like ggml's SIMD path; they agree with the
 * scalar result within the golden tolerances (≈1e-6 relative).
 */
#include "quant-simd.h"

/* ---- F32 ---------------------------------------------------------------------------- */
/** F32 -> F32: a copy. */
void f32_to_float (const void *restrict x, float *restrict y, int64_t n)
{ memcpy (y, x, (size_t) n * sizeof (float)); }

/** F32 -> F32: a copy (ggml's from_float for f32 is a copy as well). */
void f32_from_float (const float *restrict x, void *restrict y, int64_t n)
{ memcpy (y, x, (size_t) n * sizeof (float)); }

/** Σ x[i]·y[i], products rounded to float, summed in double (ggml_vec_dot_f32 scalar). */
void
f32_vec_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const float *x = vx, *y = vy;
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += (double) (x[i] * y[i]);
  *s = (float) sum;
}

/* ---- 16-bit floats: shared loops, instantiated with the element converter ----------- */
typedef float    (*HzqHalfToF32) (uint16_t);
typedef uint16_t (*HzqF32ToHalf) (float);

static inline void
half_to_float (const uint16_t *x, float *y, int64_t n, HzqHalfToF32 cvt)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = cvt (x[i]);
}

static inline void
half_from_float (const float *x, uint16_t *y, int64_t n, HzqF32ToHalf cvt)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = cvt (x[i]);
}

static inline float
half_dot (int n, const uint16_t *x, const uint16_t *y, HzqHalfToF32 cvt)
{
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += (double) (cvt (x[i]) * cvt (y[i]));
  return (float) sum;
}

/** F16 (IEEE binary16) -> F32, exact. */
void f16_to_float (const void *restrict x, float *restrict y, int64_t n)
{ half_to_float (x, y, n, hzq_fp16_to_fp32); }

/** F32 -> F16, round to nearest even (ggml_fp32_to_fp16_row). */
void f16_from_float (const float *restrict x, void *restrict y, int64_t n)
{ half_from_float (x, y, n, hzq_fp32_to_fp16); }

/** F16·F16 dot (ggml_vec_dot_f16 scalar: float products, double sum). */
void f16_vec_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)
{ *s = half_dot (n, x, y, hzq_fp16_to_fp32); }

/** BF16 -> F32, exact (the top 16 bits of a binary32). */
void bf16_to_float (const void *restrict x, float *restrict y, int64_t n)
{ half_to_float (x, y, n, hzq_bf16_to_fp32); }

/** F32 -> BF16, round to nearest even, NaN quiet (ggml_fp32_to_bf16_row_ref). */
void bf16_from_float (const float *restrict x, void *restrict y, int64_t n)
{ half_from_float (x, y, n, hzq_fp32_to_bf16); }

/** BF16·BF16 dot (ggml_vec_dot_bf16 scalar: float products, double sum). */
void bf16_vec_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)
{ *s = half_dot (n, x, y, hzq_bf16_to_fp32); }

/* ---- AVX2 ----------------------------------------------------------------------------
 * One loop for the three formats: load 8 elements as 8 floats (a per-format loader),
 * 4 independent FMA accumulators (32 elements per iteration), scalar tail in float. */
#if HZ_QUANT_X86
HZ_TARGET_AVX2 static inline __m256 ld_f32 (const void *p, int i)
{ return _mm256_loadu_ps ((const float *) p + i); }
HZ_TARGET_AVX2 static inline __m256 ld_f16 (const void *p, int i)
{ return _mm256_cvtph_ps (_mm_loadu_si128 ((const __m128i *) ((const uint16_t *) p + i))); }
HZ_TARGET_AVX2 static inline __m256 ld_bf16 (const void *p, int i)
{
  __m256i w = _mm256_cvtepu16_epi32 (_mm_loadu_si128 ((const __m128i *) ((const uint16_t *) p + i)));
  return _mm256_castsi256_ps (_mm256_slli_epi32 (w, 16));
}

#define HZQ_FLOAT_DOT_AVX2(codec, LOAD, CVT, ELEM_T)                                         \
  HZ_TARGET_AVX2 void                                                                     \
  codec##_vec_dot_avx2 (int n, float *restrict s, const void *restrict x,                 \
                        const void *restrict y)                                           \
  {                                                                                       \
    __m256 acc[4] = { _mm256_setzero_ps (), _mm256_setzero_ps (), _mm256_setzero_ps (),   \
                      _mm256_setzero_ps () };                                             \
    int i = 0;                                                                            \
    for (; i + 32 <= n; i += 32)                                                          \
      for (int k = 0; k < 4; k++)                                                         \
        acc[k] = _mm256_fmadd_ps (LOAD (x, i + 8 * k), LOAD (y, i + 8 * k), acc[k]);      \
    for (; i + 8 <= n; i += 8)                                                            \
      acc[0] = _mm256_fmadd_ps (LOAD (x, i), LOAD (y, i), acc[0]);                        \
    float sum = hzq_hsum8 (_mm256_add_ps (_mm256_add_ps (acc[0], acc[1]),                     \
                                      _mm256_add_ps (acc[2], acc[3])));                   \
    for (; i < n; i++)                                                                    \
      sum += CVT (((const ELEM_T *) x)[i]) * CVT (((const ELEM_T *) y)[i]);              \
    *s = sum;                                                                             \
  }

static inline float id_f32 (float f) { return f; }

/** AVX2+FMA dot of F32 rows. */
HZQ_FLOAT_DOT_AVX2 (f32, ld_f32, id_f32, float)
/** AVX2+FMA+F16C dot of F16 rows. */
HZQ_FLOAT_DOT_AVX2 (f16, ld_f16, hzq_fp16_to_fp32, uint16_t)
/** AVX2+FMA dot of BF16 rows. */
HZQ_FLOAT_DOT_AVX2 (bf16, ld_bf16, hzq_bf16_to_fp32, uint16_t)
#endif
