/* engine/quant/quant-simd.h — AVX2 building blocks shared by the vec_dot kernels of
 * engine/quant/codec-*.c. Every helper carries HZ_TARGET_AVX2 and may only be reached from
 * kernels that quant.c selects after a CPUID check. Include after quant-impl.h. */
#pragma once

#include "quant-impl.h"

#if HZ_QUANT_X86
#include <immintrin.h>

/** Horizontal sum of 8 floats. */
HZ_TARGET_AVX2 static inline float
hzq_hsum8 (__m256 v)
{
  __m128 s = _mm_add_ps (_mm256_castps256_ps128 (v), _mm256_extractf128_ps (v, 1));
  s = _mm_add_ps (s, _mm_movehl_ps (s, s));
  s = _mm_add_ss (s, _mm_movehdup_ps (s));
  return _mm_cvtss_f32 (s);
}

/** Horizontal sum of 8 int32. */
HZ_TARGET_AVX2 static inline int
hzq_hsum8_i32 (__m256i v)
{
  __m128i s = _mm_add_epi32 (_mm256_castsi256_si128 (v), _mm256_extracti128_si256 (v, 1));
  s = _mm_add_epi32 (s, _mm_unpackhi_epi64 (s, s));
  s = _mm_add_epi32 (s, _mm_shuffle_epi32 (s, 1));
  return _mm_cvtsi128_si32 (s);
}

/** fp16 -> fp32 with F16C. */
HZ_TARGET_AVX2 static inline float
hzq_f16_avx2 (uint16_t h)
{
  return _mm_cvtss_f32 (_mm_cvtph_ps (_mm_cvtsi32_si128 (h)));
}

/** 16 packed bytes -> 32 bytes: the low nibbles first (elements 0-15), then the high
 *  nibbles (16-31), each in 0..15 — the q4_0/q4_1/iq4_nl order. */
HZ_TARGET_AVX2 static inline __m256i
hzq_nibbles32 (const uint8_t *p)
{
  __m128i t = _mm_loadu_si128 ((const __m128i *) p);
  __m256i b = _mm256_set_m128i (_mm_srli_epi16 (t, 4), t);
  return _mm256_and_si256 (b, _mm256_set1_epi8 (0x0f));
}

/** 32 table lookups: byte k of the result is table[idx byte k] (idx bytes in 0..15). */
HZ_TARGET_AVX2 static inline __m256i
hzq_table16 (const int8_t table[16], __m256i idx)
{
  const __m256i t = _mm256_broadcastsi128_si256 (_mm_loadu_si128 ((const __m128i *) table));
  return _mm256_shuffle_epi8 (t, idx);
}

/** Σ over groups of 4 of u8 a · s8 b into 8 int32 lanes. The int16 pair sums of maddubs
 *  cannot saturate for |a| ≤ 128, |b| ≤ 127. */
HZ_TARGET_AVX2 static inline __m256i
hzq_dot_u8s8 (__m256i a, __m256i b)
{
  return _mm256_madd_epi16 (_mm256_maddubs_epi16 (a, b), _mm256_set1_epi16 (1));
}

/** Σ over groups of 4 of s8 x · s8 y into 8 int32 lanes (sign moved onto y). */
HZ_TARGET_AVX2 static inline __m256i
hzq_dot_s8s8 (__m256i x, __m256i y)
{
  return hzq_dot_u8s8 (_mm256_sign_epi8 (x, x), _mm256_sign_epi8 (y, x));
}

/** As hzq_dot_s8s8, converted to 8 floats. */
HZ_TARGET_AVX2 static inline __m256
hzq_dot_s8s8_ps (__m256i x, __m256i y)
{
  return _mm256_cvtepi32_ps (hzq_dot_s8s8 (x, y));
}

/** AVX-512 VNNI (VL) version of hzq_dot_s8s8: one vpdpbusd instead of maddubs + madd. */
HZ_TARGET_AVX512 static inline __m256i
hzq_dot_s8s8_vnni (__m256i x, __m256i y)
{
  return _mm256_dpbusd_epi32 (_mm256_setzero_si256 (), _mm256_sign_epi8 (x, x),
                              _mm256_sign_epi8 (y, x));
}

HZ_TARGET_AVX512 static inline __m256
hzq_dot_s8s8_ps_vnni (__m256i x, __m256i y)
{
  return _mm256_cvtepi32_ps (hzq_dot_s8s8_vnni (x, y));
}
#endif
