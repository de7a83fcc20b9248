/* engine/quant/codec-iq4.c — the non-linear 4-bit quantizer shared by IQ4_NL and IQ4_XS,
 * and the IQ4_XS format (256-element super-blocks, 8 sub-blocks of 32 with 6-bit scales,
 * values from kvalues_iq4nl, dotted against Q8_K). IQ4_NL's decoder and dots live with the
 * other 32-element formats in codec-legacy.c.
 *
 * Bit-exact with ggml-quants.c quantize_row_iq4_nl_impl / dequantize_row_iq4_xs
 * (llama.cpp c392e509).
 */
#include "quant-kdot.h"
#include "quant-kunpack.h"

#define GROUP_MAX_EPS 1e-15f

/** Index of the value of the sorted table `val` nearest to x (ties to the upper one),
 *  ggml best_index_int8. */
static inline int
best_index_int8 (int n, const int8_t *val, float x)
{
  if (x <= val[0])
    return 0;
  if (x >= val[n - 1])
    return n - 1;
  int lo = 0, hi = n - 1;
  while (hi - lo > 1)
    {
      const int mid = (lo + hi) / 2;
      if (x < val[mid])
        hi = mid;
      else
        lo = mid;
    }
  return x - val[hi - 1] < val[hi] - x ? hi - 1 : hi;
}

/* Weighted (x²) least-squares error terms of mapping the 32 values xb at inverse scale id
 * onto the table; stores the indices in L when L is non-NULL. */
static inline void
iq4_fit (const float *xb, const float *w, float id, const int8_t *values, uint8_t *L,
         float *sumqx, float *sumq2)
{
  float sx = 0, s2 = 0;
  for (int j = 0; j < 32; j++)
    {
      const int l = best_index_int8 (16, values, id * xb[j]);
      if (L)
        L[j] = (uint8_t) l;
      const float q = values[l];
      sx += w[j] * q * xb[j];
      s2 += w[j] * q * q;
    }
  *sumqx = sx;
  *sumq2 = s2;
}

void
hzq_iq4_quantize (const float *x, int sbs, int ntry, const int8_t values[16], uint16_t *dh,
                  uint8_t *q4, uint16_t *scales_h, uint8_t *scales_l)
{
  uint8_t L[256] = { 0 };  /* ggml leaves the codes of an all-zero block undefined */
  float scales[8], w[32];
  const int nsub = sbs / 32;

  memset (q4, 0, (size_t) sbs / 2);
  *dh = hzq_fp32_to_fp16 (0.f);
  float max_scale = 0, amax_scale = 0;
  for (int ib = 0; ib < nsub; ib++)
    {
      const float *xb = x + 32 * ib;
      uint8_t *Lb = L + 32 * ib;
      for (int j = 0; j < 32; j++)
        w[j] = xb[j] * xb[j];
      float amax = 0, max = 0;
      for (int j = 0; j < 32; j++)
        if (fabsf (xb[j]) > amax)
          {
            amax = fabsf (xb[j]);
            max = xb[j];
          }
      if (amax < GROUP_MAX_EPS)
        {
          scales[ib] = 0;
          continue;
        }
      float d = ntry > 0 ? -max / values[0] : max / values[0];
      float sumqx, sumq2;
      iq4_fit (xb, w, 1 / d, values, Lb, &sumqx, &sumq2);
      d = sumq2 > 0 ? sumqx / sumq2 : 0.f;
      float best = d * sumqx;
      for (int itry = -ntry; itry <= ntry; itry++)
        {
          iq4_fit (xb, w, (float) (itry + values[0]) / max, values, NULL, &sumqx, &sumq2);
          if (sumq2 > 0 && sumqx * sumqx > best * sumq2)
            {
              d = sumqx / sumq2;
              best = d * sumqx;
            }
        }
      scales[ib] = d;
      if (fabsf (d) > amax_scale)
        {
          amax_scale = fabsf (d);
          max_scale = d;
        }
    }

  if (nsub > 1)
    {
      memset (scales_h, 0, sizeof *scales_h * (size_t) ((nsub + 7) / 8));
      const float d = -max_scale / 32;
      *dh = hzq_fp32_to_fp16 (d);
      const float id = d != 0.0f ? 1 / d : 0.f;
      for (int ib = 0; ib < nsub; ib++)
        {
          int l = hzq_nearest_int (id * scales[ib]);
          l = l < -32 ? -32 : l > 31 ? 31 : l;
          const float dl = d * (float) l;
          const float idl = dl != 0.0f ? 1 / dl : 0.f;
          for (int j = 0; j < 32; j++)
            L[32 * ib + j] = (uint8_t) best_index_int8 (16, values, idl * x[32 * ib + j]);
          l += 32;
          if (ib % 2 == 0)
            scales_l[ib / 2] = (uint8_t) (l & 0xf);
          else
            scales_l[ib / 2] |= (uint8_t) ((l & 0xf) << 4);
          scales_h[ib / 8] |= (uint16_t) ((l >> 4) << (2 * (ib % 8)));
        }
    }
  else
    {
      *dh = hzq_fp32_to_fp16 (scales[0]);
      if (ntry > 0)
        {
          const float id = scales[0] != 0.0f ? 1 / scales[0] : 0;
          for (int j = 0; j < sbs; j++)
            L[j] = (uint8_t) best_index_int8 (16, values, id * x[j]);
        }
    }
  for (int i = 0; i < sbs / 32; i++)
    for (int j = 0; j < 16; j++)
      q4[16 * i + j] = (uint8_t) (L[32 * i + j] | L[32 * i + 16 + j] << 4);
}

/* ---- IQ4_XS ------------------------------------------------------------------------------ */

/** IQ4_XS -> floats (dequantize_row_iq4_xs): y = (d·(ls−32))·kvalues[q]. */
void
iq4_xs_to_float (const void *restrict vx, float *restrict y, int64_t n)
{
  int8_t q[256];
  int16_t sc[16], mn[16];
  for (const HzBlockIQ4_XS *x = vx; n >= 256; n -= 256, x++, y += 256)
    {
      const HzqKScale s = unpack_iq4_xs ((const uint8_t *) x, q, sc, mn);
      for (int e = 0; e < 256; e++)
        y[e] = (s.d * (float) sc[e / 16]) * (float) q[e];
    }
}

/** floats -> IQ4_XS (quantize_row_iq4_xs_ref = quantize_iq4_xs without imatrix: ntry 7). */
void
iq4_xs_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockIQ4_XS *y = vy; n >= 256; n -= 256, x += 256, y++)
    hzq_iq4_quantize (x, 256, 7, hzq_kvalues_iq4nl, &y->d, y->qs, &y->scales_h, y->scales_l);
}

/* ggml_vec_dot_iq4_xs_q8_K_generic */
HZQ_KDOT_SCALAR (iq4_xs, 136, false, 1.0f)

#if HZ_QUANT_X86
/** AVX2 IQ4_XS·Q8_K, fused: per 32 elements the nibbles are looked up in kvalues with one
 *  shuffle, dotted with the activations (int16 pairs), weighted by the sub-block scale
 *  (ls − 32) in one madd; int32 accumulation per block, one float multiply-add per block. */
HZ_TARGET_AVX2 void
iq4_xs_vec_dot_avx2 (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockIQ4_XS *x = vx;
  const HzBlockQ8_K *y = vy;
  float sumf = 0.0f;
  for (int i = 0; i < n / 256; i++, x++, y++)
    {
      __m256i sumi = _mm256_setzero_si256 ();
      for (int ib = 0; ib < 8; ib++)
        {
          const __m256i w = hzq_table16 (hzq_kvalues_iq4nl, hzq_nibbles32 (x->qs + 16 * ib));
          const __m256i a = _mm256_loadu_si256 ((const __m256i *) (y->qs + 32 * ib));
          const __m256i p = _mm256_maddubs_epi16 (_mm256_sign_epi8 (w, w), _mm256_sign_epi8 (a, w));
          sumi = _mm256_add_epi32 (sumi, _mm256_madd_epi16 (p, _mm256_set1_epi16 ((int16_t) hzq_iq4xs_scale (x, ib))));
        }
      sumf += (hzq_f16_avx2 (x->d) * hzq_q8k_d (y)) * (float) hzq_hsum8_i32 (sumi);
    }
  *s = sumf;
}
#endif
