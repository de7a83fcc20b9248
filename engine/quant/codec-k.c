/* engine/quant/codec-k.c — the K-quants: Q2_K, Q3_K, Q4_K, Q5_K, Q6_K (weights, dotted
 * against Q8_K) and Q8_K (activations). 256-element super-blocks with 16 or 8 sub-block
 * scales.
 *
 * Decoders and reference encoders are bit-exact with ggml-quants.c (dequantize_row_*_K,
 * quantize_row_*_K_ref, llama.cpp c392e509): float operations in ggml's order, each rounded
 * separately. The scale searches (make_qx_quants, make_q3_quants, make_qkx2_quants) are
 * re-implemented from their definitions. Dots go through quant-kdot.h.
 */
#include "quant-kdot.h"
#include "quant-kunpack.h"

#define GROUP_MAX_EPS 1e-15f

static inline uint16_t rd16 (const uint8_t *p) { uint16_t v; memcpy (&v, p, 2); return v; }

/* ---- decoders (the unpackers are in quant-kunpack.h) ---------------------------------- */

/* Decoders: y = (d·sc)·q − dmin·mn per 16 elements, ggml's dequantize_row_q{2..6}_K
 * formula on the unpacked integers (for Q3_K/Q6_K without the min term). */
static inline void
k_to_float (const uint8_t *x, size_t bsize, float *y, int64_t n, bool affine, HzqKUnpackFn unpack)
{
  int8_t q[256];
  int16_t sc[16], mn[16];
  for (; n >= 256; n -= 256, x += bsize, y += 256)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      for (int g = 0; g < 16; g++)
        {
          const float dl = s.d * (float) sc[g];
          const float ml = affine ? s.dmin * (float) mn[g] : 0.0f;
          for (int j = 16 * g; j < 16 * g + 16; j++)
            y[j] = affine ? dl * (float) q[j] - ml : dl * (float) q[j];
        }
    }
}

/** Instantiates <f>_to_float (dequantize_row_<f>) and the scalar dot
 *  (ggml_vec_dot_<f>_q8_K_generic) from unpack_<f>; DOT is HZQ_KDOT (adds the generic
 *  AVX2 dot) or HZQ_KDOT_SCALAR (the format has a fused kernel in codec-k-avx2.c). */
#define HZQ_KQUANT(f, BYTES, AFFINE, DOT)                                                   \
  void                                                                                    \
  f##_to_float (const void *restrict x, float *restrict y, int64_t n)                     \
  { k_to_float (x, BYTES, y, n, AFFINE, unpack_##f); }                                    \
  DOT (f, BYTES, AFFINE, 1.0f)

HZQ_KQUANT (q2_K, 84, true, HZQ_KDOT)
HZQ_KQUANT (q3_K, 110, false, HZQ_KDOT)
HZQ_KQUANT (q4_K, 144, true, HZQ_KDOT_SCALAR)
HZQ_KQUANT (q5_K, 176, true, HZQ_KDOT_SCALAR)
HZQ_KQUANT (q6_K, 210, false, HZQ_KDOT_SCALAR)

/* ---- Q8_K (activations) -------------------------------------------------------------- */

/** Q8_K -> floats: y = d·q (ggml's exported dequantize_row_q8_K). */
void
q8_K_to_float (const void *restrict vx, float *restrict y, int64_t n)
{
  for (const HzBlockQ8_K *x = vx; n >= 256; n -= 256, x++, y += 256)
    {
      const float d = hzq_q8k_d (x);
      for (int j = 0; j < 256; j++)
        y[j] = d * (float) x->qs[j];
    }
}

/** floats -> Q8_K (quantize_row_q8_K_ref): iscale = −127/v (v the signed absmax),
 *  q = min(127, nearest_int(iscale·x)), d = 1/iscale, bsums = Σq per 16. A zero block
 *  gets d = 0, q = 0 and bsums = 0 (ggml leaves bsums unwritten there). */
void
q8_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockQ8_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float amax = 0.0f, max = 0.0f;
      for (int j = 0; j < 256; j++)
        if (fabsf (x[j]) > amax)
          {
            amax = fabsf (x[j]);
            max = x[j];
          }
      memset (y->bsums, 0, sizeof y->bsums);
      if (amax == 0.0f)
        {
          memset (&y->d, 0, 4);
          memset (y->qs, 0, 256);
          continue;
        }
      const float iscale = -127.f / max;
      for (int j = 0; j < 256; j++)
        {
          const int v = hzq_nearest_int (iscale * x[j]);
          y->qs[j] = (int8_t) (v < 127 ? v : 127);
          y->bsums[j / 16] = (int16_t) (y->bsums[j / 16] + y->qs[j]);
        }
      const float d = 1 / iscale;
      memcpy (&y->d, &d, 4);
    }
}

/* ---- scale searches (ggml-quants.c) ---------------------------------------------------- */

static inline int clampi (int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/** make_qx_quants with rmse_type 1 (weights x²) and no importance: symmetric codes
 *  L in [0, 2·nmax) around nmax; tries 18 scale perturbations; returns the scale. */
static float
make_qx_quants_w1 (int n, int nmax, const float *x, int8_t *L)
{
  float max = 0, amax = 0;
  for (int i = 0; i < n; i++)
    if (fabsf (x[i]) > amax)
      {
        amax = fabsf (x[i]);
        max = x[i];
      }
  if (amax < GROUP_MAX_EPS)
    {
      memset (L, 0, (size_t) n);
      return 0.f;
    }
  float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++)
    {
      const int l = clampi (hzq_nearest_int (iscale * x[i]), -nmax, nmax - 1);
      L[i] = (int8_t) (l + nmax);
      const float w = x[i] * x[i];
      sumlx += w * x[i] * (float) l;
      suml2 += w * (float) l * (float) l;
    }
  float scale = suml2 != 0.0f ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; is++)
    {
      if (is == 0)
        continue;
      iscale = -((float) nmax + 0.1f * (float) is) / max;
      sumlx = suml2 = 0;
      for (int i = 0; i < n; i++)
        {
          const int l = clampi (hzq_nearest_int (iscale * x[i]), -nmax, nmax - 1);
          const float w = x[i] * x[i];
          sumlx += w * x[i] * (float) l;
          suml2 += w * (float) l * (float) l;
        }
      if (suml2 > 0 && sumlx * sumlx > best * suml2)
        {
          for (int i = 0; i < n; i++)
            L[i] = (int8_t) (nmax + clampi (hzq_nearest_int (iscale * x[i]), -nmax, nmax - 1));
          scale = sumlx / suml2;
          best = scale * sumlx;
        }
    }
  return scale;
}

/** make_q3_quants with do_rmse: codes in [−nmax, nmax), then up to 5 rounds of greedy
 *  per-element improvement of the weighted (x²) least-squares fit; returns the scale and
 *  leaves L offset by +nmax. */
static float
make_q3_quants_rmse (int n, int nmax, const float *x, int8_t *L)
{
  float max = 0, amax = 0;
  for (int i = 0; i < n; i++)
    if (fabsf (x[i]) > amax)
      {
        amax = fabsf (x[i]);
        max = x[i];
      }
  if (amax < GROUP_MAX_EPS)
    {
      memset (L, 0, (size_t) n);
      return 0.f;
    }
  const float iscale = -nmax / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; i++)
    {
      const int l = clampi (hzq_nearest_int (iscale * x[i]), -nmax, nmax - 1);
      L[i] = (int8_t) l;
      const float w = x[i] * x[i];
      sumlx += w * x[i] * (float) l;
      suml2 += w * (float) l * (float) l;
    }
  for (int itry = 0; itry < 5; itry++)
    {
      int changed = 0;
      for (int i = 0; i < n; i++)
        {
          const float w = x[i] * x[i];
          float slx = sumlx - w * x[i] * (float) L[i];
          if (slx > 0)
            {
              float sl2 = suml2 - w * (float) L[i] * (float) L[i];
              const int nl = clampi (hzq_nearest_int (x[i] * sl2 / slx), -nmax, nmax - 1);
              if (nl != L[i])
                {
                  slx += w * x[i] * (float) nl;
                  sl2 += w * (float) nl * (float) nl;
                  if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2)
                    {
                      L[i] = (int8_t) nl;
                      sumlx = slx;
                      suml2 = sl2;
                      changed++;
                    }
                }
            }
        }
      if (!changed)
        break;
    }
  for (int i = 0; i < n; i++)
    L[i] = (int8_t) (L[i] + nmax);
  return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

/** make_qkx2_quants: affine fit x ≈ scale·L − min with L in [0, nmax], weighted; tries
 *  nstep+1 scales (rmin + rdelta·is + nmax)/(max − min) and keeps the smallest weighted
 *  error (|diff| when use_mad, else diff²). Returns the scale, *the_min = −min ≥ 0. */
static float
make_qkx2_quants (int n, int nmax, const float *x, const float *w, uint8_t *L,
                  float *the_min, float rmin, float rdelta, int nstep, bool use_mad)
{
  uint8_t Laux[32];
  float min = x[0], max = x[0];
  float sum_w = w[0], sum_x = sum_w * x[0];
  for (int i = 1; i < n; i++)
    {
      if (x[i] < min) min = x[i];
      if (x[i] > max) max = x[i];
      sum_w += w[i];
      sum_x += w[i] * x[i];
    }
  if (min > 0)
    min = 0;
  if (max == min)
    {
      memset (L, 0, (size_t) n);
      *the_min = -min;
      return 0.f;
    }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; i++)
    {
      L[i] = (uint8_t) clampi (hzq_nearest_int (iscale * (x[i] - min)), 0, nmax);
      float diff = scale * (float) L[i] + min - x[i];
      diff = use_mad ? fabsf (diff) : diff * diff;
      best_error += w[i] * diff;
    }
  for (int is = 0; is <= nstep; is++)
    {
      iscale = (rmin + rdelta * (float) is + (float) nmax) / (max - min);
      float sum_l = 0, sum_l2 = 0, sum_xl = 0;
      for (int i = 0; i < n; i++)
        {
          const int l = clampi (hzq_nearest_int (iscale * (x[i] - min)), 0, nmax);
          Laux[i] = (uint8_t) l;
          sum_l += w[i] * (float) l;
          sum_l2 += w[i] * (float) l * (float) l;
          sum_xl += w[i] * (float) l * x[i];
        }
      const float D = sum_w * sum_l2 - sum_l * sum_l;
      if (D > 0)
        {
          float this_scale = (sum_w * sum_xl - sum_x * sum_l) / D;
          float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / D;
          if (this_min > 0)
            {
              this_min = 0;
              this_scale = sum_xl / sum_l2;
            }
          float cur_error = 0;
          for (int i = 0; i < n; i++)
            {
              float diff = this_scale * (float) Laux[i] + this_min - x[i];
              diff = use_mad ? fabsf (diff) : diff * diff;
              cur_error += w[i] * diff;
            }
          if (cur_error < best_error)
            {
              memcpy (L, Laux, (size_t) n);
              best_error = cur_error;
              scale = this_scale;
              min = this_min;
            }
        }
    }
  *the_min = -min;
  return scale;
}

/* ---- encoders (quantize_row_*_K_ref) ----------------------------------------------------- */

/* pack 2-bit codes L[256] into qs[64] in the Q2_K/Q3_K order */
static void
pack_q2 (const uint8_t *L, uint8_t qs[64])
{
  for (int j = 0; j < 256; j += 128)
    for (int l = 0; l < 32; l++)
      qs[j / 4 + l] = (uint8_t) (L[j + l] | L[j + l + 32] << 2 | L[j + l + 64] << 4 | L[j + l + 96] << 6);
}

/** floats -> Q2_K (quantize_row_q2_K_ref). */
void
q2_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t L[256];
  float w[16], mins[16], scales[16];
  const float q4scale = 15.f;
  for (HzBlockQ2_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float max_scale = 0, max_min = 0;
      for (int j = 0; j < 16; j++)
        {
          for (int l = 0; l < 16; l++)
            w[l] = fabsf (x[16 * j + l]);
          scales[j] = make_qkx2_quants (16, 3, x + 16 * j, w, L + 16 * j, &mins[j], -0.5f, 0.1f, 15, true);
          if (scales[j] > max_scale) max_scale = scales[j];
          if (mins[j] > max_min) max_min = mins[j];
        }
      if (max_scale > 0)
        {
          const float iscale = q4scale / max_scale;
          for (int j = 0; j < 16; j++)
            y->scales[j] = (uint8_t) hzq_nearest_int (iscale * scales[j]);
          y->d = hzq_fp32_to_fp16 (max_scale / q4scale);
        }
      else
        {
          memset (y->scales, 0, 16);
          y->d = hzq_fp32_to_fp16 (0.f);
        }
      if (max_min > 0)
        {
          const float iscale = q4scale / max_min;
          for (int j = 0; j < 16; j++)
            y->scales[j] |= (uint8_t) (hzq_nearest_int (iscale * mins[j]) << 4);
          y->dmin = hzq_fp32_to_fp16 (max_min / q4scale);
        }
      else
        y->dmin = hzq_fp32_to_fp16 (0.f);
      for (int j = 0; j < 16; j++)
        {
          const float d = hzq_fp16_to_fp32 (y->d) * (float) (y->scales[j] & 0xf);
          if (d == 0.0f)
            continue;
          const float dm = hzq_fp16_to_fp32 (y->dmin) * (float) (y->scales[j] >> 4);
          for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] = (uint8_t) clampi (hzq_nearest_int ((x[16 * j + ii] + dm) / d), 0, 3);
        }
      pack_q2 (L, y->qs);
    }
}

/** floats -> Q3_K (quantize_row_q3_K_ref). */
void
q3_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  int8_t L[256];
  float scales[16];
  for (HzBlockQ3_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float max_scale = 0, amax = 0;
      for (int j = 0; j < 16; j++)
        {
          scales[j] = make_q3_quants_rmse (16, 4, x + 16 * j, L + 16 * j);
          if (fabsf (scales[j]) > amax)
            {
              amax = fabsf (scales[j]);
              max_scale = scales[j];
            }
        }
      memset (y->scales, 0, 12);
      if (max_scale != 0.0f)
        {
          const float iscale = -32.f / max_scale;
          for (int j = 0; j < 16; j++)
            {
              const int l = clampi ((int8_t) hzq_nearest_int (iscale * scales[j]), -32, 31) + 32;
              if (j < 8)
                y->scales[j] = (uint8_t) (l & 0xf);
              else
                y->scales[j - 8] |= (uint8_t) ((l & 0xf) << 4);
              y->scales[j % 4 + 8] |= (uint8_t) ((l >> 4) << (2 * (j / 4)));
            }
          y->d = hzq_fp32_to_fp16 (1 / iscale);
        }
      else
        y->d = hzq_fp32_to_fp16 (0.f);

      int sc[16];
      hzq_q3_scales (y->scales, sc);
      for (int j = 0; j < 16; j++)
        {
          const float d = hzq_fp16_to_fp32 (y->d) * (float) sc[j];
          if (d == 0.0f)
            continue;
          for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] = (int8_t) (clampi (hzq_nearest_int (x[16 * j + ii] / d), -4, 3) + 4);
        }
      /* high bit of element e -> bit (e/32) of hmask[e%32]; the low 2 bits stay in L */
      memset (y->hmask, 0, 32);
      uint8_t Lu[256];
      for (int e = 0; e < 256; e++)
        {
          if (L[e] > 3)
            y->hmask[e % 32] |= (uint8_t) (1u << (e / 32));
          Lu[e] = (uint8_t) (L[e] & 3);
        }
      pack_q2 (Lu, y->qs);
    }
}

/* Q4_K/Q5_K share everything but the bit width and the search parameters. */
static void
quant_k45 (const float *x, int nmax, float rmin, int nstep, uint16_t *dh, uint16_t *dminh,
           uint8_t scales_out[12], uint8_t L[256])
{
  float w[32], mins[8], scales[8];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; j++)
    {
      float sum_x2 = 0;
      for (int l = 0; l < 32; l++)
        sum_x2 += x[32 * j + l] * x[32 * j + l];
      const float av_x = sqrtf (sum_x2 / 32);
      for (int l = 0; l < 32; l++)
        w[l] = av_x + fabsf (x[32 * j + l]);
      scales[j] = make_qkx2_quants (32, nmax, x + 32 * j, w, L + 32 * j, &mins[j], rmin, 0.1f, nstep, false);
      if (scales[j] > max_scale) max_scale = scales[j];
      if (mins[j] > max_min) max_min = mins[j];
    }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; j++)
    {
      uint8_t ls = (uint8_t) hzq_nearest_int (inv_scale * scales[j]);
      uint8_t lm = (uint8_t) hzq_nearest_int (inv_min * mins[j]);
      ls = ls < 63 ? ls : 63;
      lm = lm < 63 ? lm : 63;
      if (j < 4)
        {
          scales_out[j] = ls;
          scales_out[j + 4] = lm;
        }
      else
        {
          scales_out[j + 4] = (uint8_t) ((ls & 0xf) | (lm & 0xf) << 4);
          scales_out[j - 4] |= (uint8_t) ((ls >> 4) << 6);
          scales_out[j] |= (uint8_t) ((lm >> 4) << 6);
        }
    }
  *dh = hzq_fp32_to_fp16 (max_scale / 63.f);
  *dminh = hzq_fp32_to_fp16 (max_min / 63.f);
  for (int j = 0; j < 8; j++)
    {
      int sc, m;
      hzq_k4_scale_min (scales_out, j, &sc, &m);
      const float d = hzq_fp16_to_fp32 (*dh) * (float) sc;
      if (d == 0.0f)
        continue;
      const float dm = hzq_fp16_to_fp32 (*dminh) * (float) m;
      for (int ii = 0; ii < 32; ii++)
        L[32 * j + ii] = (uint8_t) clampi (hzq_nearest_int ((x[32 * j + ii] + dm) / d), 0, nmax);
    }
}

/** floats -> Q4_K (quantize_row_q4_K_ref). */
void
q4_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t L[256];
  for (HzBlockQ4_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      memset (y->scales, 0, 12);
      quant_k45 (x, 15, -1.f, 20, &y->d, &y->dmin, y->scales, L);
      for (int e = 0; e < 256; e++)
        if ((e / 32) & 1)
          y->qs[32 * (e / 64) + e % 32] |= (uint8_t) (L[e] << 4);
        else
          y->qs[32 * (e / 64) + e % 32] = L[e];
    }
}

/** floats -> Q5_K (quantize_row_q5_K_ref). */
void
q5_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t L[256];
  for (HzBlockQ5_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      memset (y->scales, 0, 12);
      memset (y->qh, 0, 32);
      quant_k45 (x, 31, -0.5f, 15, &y->d, &y->dmin, y->scales, L);
      for (int e = 0; e < 256; e++)
        {
          const int i = 32 * (e / 64) + e % 32;
          if (L[e] > 15)
            y->qh[e % 32] |= (uint8_t) (1u << (e / 32));
          if ((e / 32) & 1)
            y->qs[i] |= (uint8_t) ((L[e] & 0xf) << 4);
          else
            y->qs[i] = L[e] & 0xf;
        }
    }
}

/** floats -> Q6_K (quantize_row_q6_K_ref). */
void
q6_K_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  int8_t L[256];
  float scales[16];
  for (HzBlockQ6_K *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      float max_scale = 0, max_abs_scale = 0;
      for (int ib = 0; ib < 16; ib++)
        {
          scales[ib] = make_qx_quants_w1 (16, 32, x + 16 * ib, L + 16 * ib);
          if (fabsf (scales[ib]) > max_abs_scale)
            {
              max_abs_scale = fabsf (scales[ib]);
              max_scale = scales[ib];
            }
        }
      if (max_abs_scale < GROUP_MAX_EPS)
        {
          memset (y, 0, sizeof *y);
          continue;
        }
      const float iscale = -128.f / max_scale;
      y->d = hzq_fp32_to_fp16 (1 / iscale);
      for (int ib = 0; ib < 16; ib++)
        {
          const int v = hzq_nearest_int (iscale * scales[ib]);
          y->scales[ib] = (int8_t) (v < 127 ? v : 127);
        }
      for (int j = 0; j < 16; j++)
        {
          const float d = hzq_fp16_to_fp32 (y->d) * (float) y->scales[j];
          if (d == 0.0f)
            continue;
          for (int ii = 0; ii < 16; ii++)
            L[16 * j + ii] = (int8_t) (clampi (hzq_nearest_int (x[16 * j + ii] / d), -32, 31) + 32);
        }
      memset (y->ql, 0, 128);
      memset (y->qh, 0, 64);
      for (int e = 0; e < 256; e++)
        {
          const int h = e / 128, l = e % 32, k = (e % 128) / 32;
          y->ql[64 * h + l + 32 * (k & 1)] |= (uint8_t) ((L[e] & 0xf) << (4 * (k >> 1)));
          y->qh[32 * h + l] |= (uint8_t) ((L[e] >> 4) << (2 * k));
        }
    }
}
