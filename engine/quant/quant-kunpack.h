/* engine/quant/quant-kunpack.h — the unpackers of the 256-element super-block formats that
 * more than one file needs: Q2_K … Q6_K (codec-k.c) and IQ4_XS (codec-iq4.c) for their
 * decoders and table dots (quant-kdot.h), and ggml-order.c for its scalar reference dots.
 *
 * Every unpacker has the HzqKUnpackFn shape (quant-kdot.h) and writes one layout:
 *   q[256]  the integer value of element e (Q3_K: −4..3, Q6_K: −32..31, IQ4_XS: the
 *           kvalues_iq4nl entry, others 0..2^bits−1), in element order,
 *   sc[16]  the integer scale of elements 16g..16g+15 (repeated per 16 for the formats
 *           with one scale per 32),
 *   mn[16]  the integer min multiplier per 16 (Q2_K, Q4_K, Q5_K; left alone otherwise),
 * and returns {d, dmin} as floats (exact fp16 conversions). Bit layouts follow
 * ggml-common.h / dequantize_row_*_K (llama.cpp c392e509). Pure functions.
 */
#pragma once

#include "quant-kdot.h"

/** The 16 6-bit scales of Q3_K, minus 32 (low 4 bits from the nibbles of s[0..7], high 2
 *  from s[8..11]). */
static inline void
hzq_q3_scales (const uint8_t s[12], int sc[16])
{
  for (int j = 0; j < 16; j++)
    {
      int lo = j < 8 ? s[j] & 0xf : s[j - 8] >> 4;
      sc[j] = (lo | ((s[8 + j % 4] >> (2 * (j / 4))) & 3) << 4) - 32;
    }
}

static inline HzqKScale
unpack_q2_K (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockQ2_K *x = (const HzBlockQ2_K *) b;
  /* element 128h + 32s + l: bits 2s of qs[32h + l] */
  for (int h = 0; h < 2; h++)
    for (int s = 0; s < 4; s++)
      for (int l = 0; l < 32; l++)
        q[128 * h + 32 * s + l] = (int8_t) ((x->qs[32 * h + l] >> (2 * s)) & 3);
  for (int g = 0; g < 16; g++)
    {
      sc[g] = x->scales[g] & 0xf;
      mn[g] = x->scales[g] >> 4;
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), hzq_fp16_to_fp32 (x->dmin) };
}

static inline HzqKScale
unpack_q3_K (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockQ3_K *x = (const HzBlockQ3_K *) b;
  int s[16];
  hzq_q3_scales (x->scales, s);
  for (int g = 0; g < 16; g++)
    sc[g] = (int16_t) s[g];
  /* as Q2_K, minus 4 unless the high bit (bit 4h+s of hmask[l]) is set */
  for (int h = 0; h < 2; h++)
    for (int s = 0; s < 4; s++)
      for (int l = 0; l < 32; l++)
        q[128 * h + 32 * s + l] = (int8_t) (((x->qs[32 * h + l] >> (2 * s)) & 3) - 4
                                            + 4 * ((x->hmask[l] >> (4 * h + s)) & 1));
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

/** Q4_K/Q5_K scales and mins (6 bits, one per 32 elements) repeated per 16. */
static inline void
hzq_k4_scales (const uint8_t scales[12], int16_t sc[16], int16_t mn[16])
{
  for (int j = 0; j < 8; j++)
    {
      int s, m;
      hzq_k4_scale_min (scales, j, &s, &m);
      sc[2 * j] = sc[2 * j + 1] = (int16_t) s;
      mn[2 * j] = mn[2 * j + 1] = (int16_t) m;
    }
}

static inline HzqKScale
unpack_q4_K (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockQ4_K *x = (const HzBlockQ4_K *) b;
  hzq_k4_scales (x->scales, sc, mn);
  /* 64-element chunk c: low nibbles of qs[32c..32c+31], then the high nibbles */
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++)
      {
        q[64 * c + l] = (int8_t) (x->qs[32 * c + l] & 0xf);
        q[64 * c + 32 + l] = (int8_t) (x->qs[32 * c + l] >> 4);
      }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), hzq_fp16_to_fp32 (x->dmin) };
}

static inline HzqKScale
unpack_q5_K (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockQ5_K *x = (const HzBlockQ5_K *) b;
  hzq_k4_scales (x->scales, sc, mn);
  /* as Q4_K; the 5th bit of element 32k + l is bit k of qh[l] */
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++)
      {
        q[64 * c + l] = (int8_t) ((x->qs[32 * c + l] & 0xf) | ((x->qh[l] >> (2 * c)) & 1) << 4);
        q[64 * c + 32 + l] = (int8_t) ((x->qs[32 * c + l] >> 4) | ((x->qh[l] >> (2 * c + 1)) & 1) << 4);
      }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), hzq_fp16_to_fp32 (x->dmin) };
}

static inline HzqKScale
unpack_q6_K (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockQ6_K *x = (const HzBlockQ6_K *) b;
  for (int g = 0; g < 16; g++)
    sc[g] = x->scales[g];
  /* half h, l < 32: elements l, l+32, l+64, l+96 take the low/high nibbles of ql[64h+l]
   * and ql[64h+32+l] and 2-bit pairs 0..3 of qh[32h+l]; values minus 32 */
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++)
      {
        const uint8_t lo0 = x->ql[64 * h + l], lo1 = x->ql[64 * h + 32 + l], hb = x->qh[32 * h + l];
        q[128 * h + l]      = (int8_t) (((lo0 & 0xf) | (hb & 3) << 4) - 32);
        q[128 * h + 32 + l] = (int8_t) (((lo1 & 0xf) | ((hb >> 2) & 3) << 4) - 32);
        q[128 * h + 64 + l] = (int8_t) (((lo0 >> 4) | ((hb >> 4) & 3) << 4) - 32);
        q[128 * h + 96 + l] = (int8_t) (((lo1 >> 4) | ((hb >> 6) & 3) << 4) - 32);
      }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

/** The scale of sub-block ib (of 8) of an IQ4_XS super-block, minus 32. */
static inline int
hzq_iq4xs_scale (const HzBlockIQ4_XS *x, int ib)
{
  return (((x->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf) | ((x->scales_h >> (2 * ib)) & 3) << 4) - 32;
}

static inline HzqKScale
unpack_iq4_xs (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ4_XS *x = (const HzBlockIQ4_XS *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      sc[2 * ib] = sc[2 * ib + 1] = (int16_t) hzq_iq4xs_scale (x, ib);
      for (int j = 0; j < 16; j++)
        {
          q[32 * ib + j] = hzq_kvalues_iq4nl[x->qs[16 * ib + j] & 0xf];
          q[32 * ib + j + 16] = hzq_kvalues_iq4nl[x->qs[16 * ib + j] >> 4];
        }
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}
