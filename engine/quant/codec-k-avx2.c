/* engine/quant/codec-k-avx2.c — fused AVX2 dots of the most used K-quants (Q4_K, Q5_K,
 * Q6_K) against Q8_K. The generic path (quant-kdot.h) unpacks a block to bytes first; these
 * read the packed bits straight into registers: per 32 elements one maddubs (unsigned 4-6
 * bit weights × signed activations, no saturation possible: 63·127·2 < 2^15), one madd
 * with the sub-block scale, int32 accumulation per block, one float FMA per block. Mins
 * (Q4_K/Q5_K) and Q6_K's −32 offset go through the activation block sums (bsums).
 * Same sums as ggml_vec_dot_q{4,5,6}_K_q8_K_generic; only float rounding order differs.
 */
#include "quant-kdot.h"

#if HZ_QUANT_X86

/* Σ_j m_j · (bsums[2j] + bsums[2j+1]) */
static inline int
k4_min_sum (const int m[8], const HzBlockQ8_K *y)
{
  int s = 0;
  for (int j = 0; j < 8; j++)
    s += m[j] * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
  return s;
}

/* 32 unsigned weights × 32 activations, weighted by one scale -> 8 int32 */
HZ_TARGET_AVX2 static inline __m256i
scaled_dot32 (__m256i w, const int8_t *a, int scale)
{
  const __m256i p = _mm256_maddubs_epi16 (w, _mm256_loadu_si256 ((const __m256i *) a));
  return _mm256_madd_epi16 (p, _mm256_set1_epi16 ((int16_t) scale));
}

/* as scaled_dot32 with two scales: elements 0-15 and 16-31 */
HZ_TARGET_AVX2 static inline __m256i
scaled_dot16x2 (__m256i w, const int8_t *a, int s0, int s1)
{
  const __m256i p = _mm256_maddubs_epi16 (w, _mm256_loadu_si256 ((const __m256i *) a));
  return _mm256_madd_epi16 (p, _mm256_set_m128i (_mm_set1_epi16 ((int16_t) s1),
                                                 _mm_set1_epi16 ((int16_t) s0)));
}

/* Q4_K / Q5_K: 4 chunks of 64 = low nibbles (sub-block 2c) and high nibbles (2c+1) of 32
 * bytes; Q5_K adds bit 2c / 2c+1 of qh[l] as the 5th bit. */
HZ_TARGET_AVX2 static inline float
k45_dot (int n, const uint8_t *vx, size_t bsize, const HzBlockQ8_K *y, bool q5)
{
  const __m256i m4 = _mm256_set1_epi8 (0x0f), one = _mm256_set1_epi8 (1);
  __m256 acc = _mm256_setzero_ps ();
  float acc_m = 0.0f;
  for (int i = 0; i < n / 256; i++, vx += bsize, y++)
    {
      const uint16_t *dd = (const uint16_t *) vx;
      const uint8_t *scales = vx + 4;
      const uint8_t *qs = vx + (q5 ? 48 : 16);
      int sc[8], m[8];
      for (int j = 0; j < 8; j++)
        hzq_k4_scale_min (scales, j, &sc[j], &m[j]);
      const float yd = hzq_q8k_d (y);
      const __m256i hb = q5 ? _mm256_loadu_si256 ((const __m256i *) (vx + 16)) : _mm256_setzero_si256 ();
      __m256i sumi = _mm256_setzero_si256 ();
      for (int c = 0; c < 4; c++)
        {
          const __m256i b = _mm256_loadu_si256 ((const __m256i *) (qs + 32 * c));
          __m256i lo = _mm256_and_si256 (b, m4);
          __m256i hi = _mm256_and_si256 (_mm256_srli_epi16 (b, 4), m4);
          if (q5)
            {
              lo = _mm256_or_si256 (lo, _mm256_slli_epi16 (_mm256_and_si256 (_mm256_srli_epi16 (hb, 2 * c), one), 4));
              hi = _mm256_or_si256 (hi, _mm256_slli_epi16 (_mm256_and_si256 (_mm256_srli_epi16 (hb, 2 * c + 1), one), 4));
            }
          sumi = _mm256_add_epi32 (sumi, scaled_dot32 (lo, y->qs + 64 * c, sc[2 * c]));
          sumi = _mm256_add_epi32 (sumi, scaled_dot32 (hi, y->qs + 64 * c + 32, sc[2 * c + 1]));
        }
      acc = _mm256_fmadd_ps (_mm256_set1_ps (hzq_f16_avx2 (dd[0]) * yd), _mm256_cvtepi32_ps (sumi), acc);
      acc_m -= (hzq_f16_avx2 (dd[1]) * yd) * (float) k4_min_sum (m, y);
    }
  return hzq_hsum8 (acc) + acc_m;
}

/** AVX2 Q4_K·Q8_K. */
HZ_TARGET_AVX2 void
q4_K_vec_dot_avx2 (int n, float *restrict s, const void *restrict x, const void *restrict y)
{
  *s = k45_dot (n, x, sizeof (HzBlockQ4_K), y, false);
}

/** AVX2 Q5_K·Q8_K. */
HZ_TARGET_AVX2 void
q5_K_vec_dot_avx2 (int n, float *restrict s, const void *restrict x, const void *restrict y)
{
  *s = k45_dot (n, x, sizeof (HzBlockQ5_K), y, true);
}

/** AVX2 Q6_K·Q8_K: per half of 128, four 32-element rows built from ql nibbles and qh
 *  2-bit pairs (0..63); the −32 offset is subtracted as 32·Σ sc·bsums. */
HZ_TARGET_AVX2 void
q6_K_vec_dot_avx2 (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ6_K *x = vx;
  const HzBlockQ8_K *y = vy;
  const __m256i m4 = _mm256_set1_epi8 (0x0f), m2 = _mm256_set1_epi8 (3);
  float sumf = 0.0f;
  for (int i = 0; i < n / 256; i++, x++, y++)
    {
      const int8_t *sc = x->scales;
      __m256i sumi = _mm256_setzero_si256 ();
      for (int h = 0; h < 2; h++)
        {
          const __m256i l0 = _mm256_loadu_si256 ((const __m256i *) (x->ql + 64 * h));
          const __m256i l1 = _mm256_loadu_si256 ((const __m256i *) (x->ql + 64 * h + 32));
          const __m256i qh = _mm256_loadu_si256 ((const __m256i *) (x->qh + 32 * h));
          const __m256i w[4] = {
            _mm256_or_si256 (_mm256_and_si256 (l0, m4), _mm256_slli_epi16 (_mm256_and_si256 (qh, m2), 4)),
            _mm256_or_si256 (_mm256_and_si256 (l1, m4), _mm256_slli_epi16 (_mm256_and_si256 (_mm256_srli_epi16 (qh, 2), m2), 4)),
            _mm256_or_si256 (_mm256_and_si256 (_mm256_srli_epi16 (l0, 4), m4), _mm256_slli_epi16 (_mm256_and_si256 (_mm256_srli_epi16 (qh, 4), m2), 4)),
            _mm256_or_si256 (_mm256_and_si256 (_mm256_srli_epi16 (l1, 4), m4), _mm256_slli_epi16 (_mm256_and_si256 (_mm256_srli_epi16 (qh, 6), m2), 4)),
          };
          for (int k = 0; k < 4; k++)
            {
              const int g = 8 * h + 2 * k;
              sumi = _mm256_add_epi32 (sumi, scaled_dot16x2 (w[k], y->qs + 128 * h + 32 * k, sc[g], sc[g + 1]));
            }
        }
      int off = 0;
      for (int g = 0; g < 16; g++)
        off += sc[g] * y->bsums[g];
      const int isum = hzq_hsum8_i32 (sumi) - 32 * off;
      sumf += (hzq_f16_avx2 (x->d) * hzq_q8k_d (y)) * (float) isum;
    }
  *s = sumf;
}
#endif
