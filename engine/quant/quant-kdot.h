/* engine/quant/quant-kdot.h — the shared dot product of the 256-element super-block
 * formats (K-quants, IQ-quants, TQ) against Q8_K activations.
 *
 * A format supplies one "unpack" function that turns a block into
 *   q[256]   the integer value of each element (signed, fits int8),
 *   sc[16]   an integer scale per 16 elements,
 *   mn[16]   an integer min multiplier per 16 elements (affine formats only),
 * and returns the float factors {d, dmin}, so that the block's dot with a Q8_K block y is
 *   (d·y.d)·Σ_g sc[g]·Σ_{j in g} q[j]·y.qs[j]  −  (dmin·y.d)·Σ_g mn[g]·y.bsums[g]
 * which is how ggml-cpu/quants.c ggml_vec_dot_*_q8_K_generic computes it (exact integer
 * sums, float factors per block). A per-format constant `post` scales the final sum
 * (ggml's 0.125 / 0.25 factors of the IQ2/IQ3 formats).
 *
 * The scalar and AVX2 loops share the unpack; in the AVX2 instantiation the unpack is
 * inlined into the target("avx2") function and vectorized by the compiler.
 */
#pragma once

#include "quant-simd.h"

typedef struct { float d, dmin; } HzqKScale;
typedef HzqKScale (*HzqKUnpackFn) (const uint8_t *blk, int8_t q[256], int16_t sc[16],
                                   int16_t mn[16]);

static inline float
hzq_q8k_d (const HzBlockQ8_K *y)
{
  float d;
  memcpy (&d, &y->d, 4);
  return d;
}

static inline int
hzq_kdot_mins (const int16_t mn[16], const HzBlockQ8_K *y)
{
  int m = 0;
  for (int g = 0; g < 16; g++)
    m += mn[g] * y->bsums[g];
  return m;
}

/** Scalar super-block dot (see the file comment). Always inlined, so that `unpack` is a
 *  known function in every instantiation and is inlined too. */
__attribute__ ((always_inline)) static inline float
hzq_kdot (int n, const uint8_t *x, size_t bsize, const void *vy, bool affine, float post,
          HzqKUnpackFn unpack)
{
  const HzBlockQ8_K *y = vy;
  int8_t q[256];
  int16_t sc[16], mn[16];
  float sumf = 0.0f;
  for (int i = 0; i < n / 256; i++, x += bsize, y++)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      int isum = 0;
      for (int g = 0; g < 16; g++)
        {
          int t = 0;
          for (int j = 16 * g; j < 16 * g + 16; j++)
            t += q[j] * y->qs[j];
          isum += sc[g] * t;
        }
      const float yd = hzq_q8k_d (y);
      sumf += affine ? (s.d * yd) * (float) isum - (s.dmin * yd) * (float) hzq_kdot_mins (mn, y)
                     : (s.d * yd) * (float) isum;
    }
  return post * sumf;
}

#if HZ_QUANT_X86
/** AVX2 super-block dot: the same sums, 32 elements per step (two scale groups). */
HZ_TARGET_AVX2 __attribute__ ((always_inline)) static inline float
hzq_kdot_avx2 (int n, const uint8_t *x, size_t bsize, const void *vy, bool affine, float post,
               HzqKUnpackFn unpack)
{
  const HzBlockQ8_K *y = vy;
  int8_t q[256] __attribute__ ((aligned (32)));
  int16_t sc[16], mn[16];
  float sumf = 0.0f;
  for (int i = 0; i < n / 256; i++, x += bsize, y++)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      __m256i acc = _mm256_setzero_si256 ();
      for (int g = 0; g < 8; g++)
        {
          const __m256i qx = _mm256_load_si256 ((const __m256i *) (q + 32 * g));
          const __m256i qy = _mm256_loadu_si256 ((const __m256i *) (y->qs + 32 * g));
          /* 16 int16 pair sums: lanes 0-7 are elements 0-15, lanes 8-15 elements 16-31 */
          const __m256i p = _mm256_maddubs_epi16 (_mm256_sign_epi8 (qx, qx),
                                                  _mm256_sign_epi8 (qy, qx));
          const __m256i scv = _mm256_set_m128i (_mm_set1_epi16 (sc[2 * g + 1]),
                                                _mm_set1_epi16 (sc[2 * g]));
          acc = _mm256_add_epi32 (acc, _mm256_madd_epi16 (p, scv));
        }
      const int isum = hzq_hsum8_i32 (acc);
      const float yd = hzq_q8k_d (y);
      sumf += affine ? (s.d * yd) * (float) isum - (s.dmin * yd) * (float) hzq_kdot_mins (mn, y)
                     : (s.d * yd) * (float) isum;
    }
  return post * sumf;
}

#define HZQ_KDOT_AVX2(f, BYTES, AFFINE, POST)                                               \
  HZ_TARGET_AVX2 void                                                                     \
  f##_vec_dot_avx2 (int n, float *restrict s, const void *restrict x, const void *restrict y) \
  { *s = hzq_kdot_avx2 (n, x, BYTES, y, AFFINE, POST, unpack_##f); }
#else
#define HZQ_KDOT_AVX2(f, BYTES, AFFINE, POST)
#endif

/** Instantiates <f>_vec_dot (scalar) from unpack_<f>, for formats with a fused AVX2
 *  kernel of their own. */
#define HZQ_KDOT_SCALAR(f, BYTES, AFFINE, POST)                                             \
  void                                                                                    \
  f##_vec_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)  \
  { *s = hzq_kdot (n, x, BYTES, y, AFFINE, POST, unpack_##f); }

/** Instantiates <f>_vec_dot (scalar) and <f>_vec_dot_avx2 from unpack_<f>. */
#define HZQ_KDOT(f, BYTES, AFFINE, POST)                                                    \
  HZQ_KDOT_SCALAR (f, BYTES, AFFINE, POST)                                                \
  HZQ_KDOT_AVX2 (f, BYTES, AFFINE, POST)
