/* engine/quant/codec-iq.c — the lattice ("grid") IQ formats: IQ2_XXS, IQ2_XS, IQ2_S,
 * IQ3_XXS, IQ3_S, IQ1_S, IQ1_M. 256-element super-blocks; groups of 8 (or 4) elements are
 * one grid point (iq-tables.c) with separately stored signs; sub-block scales per 16/32.
 *
 * Every format is unpacked into integers for quant-kdot.h:
 *   IQ2_*, IQ3_XXS: q = ±grid byte, sc = 2·ls + 1   (y = d·(0.5 + ls)·{0.25, 0.5}·q,
 *                                                    i.e. post = 0.125 / 0.25)
 *   IQ3_S:          q = ±grid byte, sc = 2·ls + 1   (y = d·(1 + 2·ls)·q)
 *   IQ1_S, IQ1_M:   q = 8·grid ± 1 (the ±1/8 delta), sc = 2·ls + 1, post = 0.125
 * Decoders use ggml's float formulas on the same integers (the sign and the /8 are exact),
 * bit-exact with ggml-quants.c dequantize_row_iq* (llama.cpp c392e509). Dots follow
 * ggml-cpu/quants.c ggml_vec_dot_iq*_q8_K_generic.
 */
#include "quant-kdot.h"

extern const uint64_t hzq_iq2xxs_grid[256], hzq_iq2xs_grid[512], hzq_iq2s_grid[1024];
extern const uint32_t hzq_iq3xxs_grid[256], hzq_iq3s_grid[512];
extern const uint64_t hzq_iq1s_grid[2048];

static inline uint16_t rd16 (const uint8_t *p) { uint16_t v; memcpy (&v, p, 2); return v; }
static inline uint32_t rd32 (const uint8_t *p) { uint32_t v; memcpy (&v, p, 4); return v; }

/** ggml's ksigns_iq2xs: 7 stored sign bits plus an 8th that makes the count even. */
static inline uint8_t ksigns (unsigned i) { return (uint8_t) (i | (unsigned) __builtin_parity (i) << 7); }

/* 8 magnitudes of a grid point times 8 sign bits (bit j set: element j negative) */
static inline void
put8 (int8_t *q, uint64_t grid, uint8_t signs)
{
  for (int j = 0; j < 8; j++)
    {
      const int v = (int) ((grid >> (8 * j)) & 0xff), neg = -((signs >> j) & 1);
      q[j] = (int8_t) ((v ^ neg) - neg);   /* branch-free ±v */
    }
}

/* two 4-element IQ3 grid points */
static inline void
put4x2 (int8_t *q, uint32_t g1, uint32_t g2, uint8_t signs)
{
  put8 (q, (uint64_t) g1 | (uint64_t) g2 << 32, signs);
}

/* IQ1: 8 int8 grid values in {-1,0,1}, scaled by 8, plus the ±1 delta */
static inline void
put8_iq1 (int8_t *q, uint64_t grid, bool neg_delta)
{
  for (int j = 0; j < 8; j++)
    q[j] = (int8_t) (8 * (int8_t) ((grid >> (8 * j)) & 0xff) + 1 - 2 * (int) neg_delta);
}

/* ---- unpack ------------------------------------------------------------------------------ */

static inline HzqKScale
unpack_iq2_xxs (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ2_XXS *x = (const HzBlockIQ2_XXS *) b;
  const uint8_t *qs = b + 2;
  for (int ib = 0; ib < 8; ib++)
    {
      const uint32_t idx = rd32 (qs + 8 * ib), aux = rd32 (qs + 8 * ib + 4);
      sc[2 * ib] = sc[2 * ib + 1] = (int16_t) (2 * (aux >> 28) + 1);
      for (int l = 0; l < 4; l++)
        put8 (q + 32 * ib + 8 * l, hzq_iq2xxs_grid[(idx >> (8 * l)) & 0xff], ksigns ((aux >> (7 * l)) & 127));
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq2_xs (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ2_XS *x = (const HzBlockIQ2_XS *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      sc[2 * ib] = (int16_t) (2 * (x->scales[ib] & 0xf) + 1);
      sc[2 * ib + 1] = (int16_t) (2 * (x->scales[ib] >> 4) + 1);
      for (int l = 0; l < 4; l++)
        {
          const uint16_t v = rd16 (b + 2 + 2 * (4 * ib + l));
          put8 (q + 32 * ib + 8 * l, hzq_iq2xs_grid[v & 511], ksigns (v >> 9));
        }
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq2_s (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ2_S *x = (const HzBlockIQ2_S *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      sc[2 * ib] = (int16_t) (2 * (x->scales[ib] & 0xf) + 1);
      sc[2 * ib + 1] = (int16_t) (2 * (x->scales[ib] >> 4) + 1);
      for (int l = 0; l < 4; l++)
        {
          const int idx = x->qs[4 * ib + l] | ((x->qh[ib] << (8 - 2 * l)) & 0x300);
          put8 (q + 32 * ib + 8 * l, hzq_iq2s_grid[idx], x->qs[32 + 4 * ib + l]);
        }
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq3_xxs (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ3_XXS *x = (const HzBlockIQ3_XXS *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      const uint32_t aux = rd32 (x->qs + 64 + 4 * ib);
      sc[2 * ib] = sc[2 * ib + 1] = (int16_t) (2 * (aux >> 28) + 1);
      for (int l = 0; l < 4; l++)
        put4x2 (q + 32 * ib + 8 * l, hzq_iq3xxs_grid[x->qs[8 * ib + 2 * l]],
                hzq_iq3xxs_grid[x->qs[8 * ib + 2 * l + 1]], ksigns ((aux >> (7 * l)) & 127));
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq3_s (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ3_S *x = (const HzBlockIQ3_S *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      sc[2 * ib] = sc[2 * ib + 1] = (int16_t) (1 + 2 * ((x->scales[ib / 2] >> (4 * (ib % 2))) & 0xf));
      const int qh = x->qh[ib];
      const uint8_t *qs = x->qs + 8 * ib;
      for (int l = 0; l < 4; l++)
        put4x2 (q + 32 * ib + 8 * l, hzq_iq3s_grid[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)],
                hzq_iq3s_grid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)], x->signs[4 * ib + l]);
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq1_s (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ1_S *x = (const HzBlockIQ1_S *) b;
  for (int ib = 0; ib < 8; ib++)
    {
      const uint16_t qh = rd16 (b + 34 + 2 * ib);
      sc[2 * ib] = sc[2 * ib + 1] = (int16_t) (2 * ((qh >> 12) & 7) + 1);
      for (int l = 0; l < 4; l++)
        put8_iq1 (q + 32 * ib + 8 * l, hzq_iq1s_grid[x->qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8],
                  qh & 0x8000);
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_iq1_m (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockIQ1_M *x = (const HzBlockIQ1_M *) b;
  uint16_t s[4];
  for (int k = 0; k < 4; k++)
    s[k] = rd16 (x->scales + 2 * k);
  /* the fp16 super-scale is spread over the top nibbles of the four scale words */
  const uint16_t dh = (uint16_t) ((s[0] >> 12) | ((s[1] >> 8) & 0x00f0) | ((s[2] >> 4) & 0x0f00) | (s[3] & 0xf000));
  for (int ib = 0; ib < 8; ib++)
    {
      sc[2 * ib] = (int16_t) (2 * ((s[ib / 2] >> (6 * (ib % 2))) & 7) + 1);
      sc[2 * ib + 1] = (int16_t) (2 * ((s[ib / 2] >> (6 * (ib % 2) + 3)) & 7) + 1);
      for (int l = 0; l < 4; l++)
        {
          const uint8_t h = x->qh[2 * ib + l / 2];
          const int hi = l % 2 ? h >> 4 : h & 0xf;   /* 3 index bits + the delta sign */
          put8_iq1 (q + 32 * ib + 8 * l, hzq_iq1s_grid[x->qs[4 * ib + l] | (hi & 7) << 8], hi & 8);
        }
    }
  return (HzqKScale) { hzq_fp16_to_fp32 (dh), 0 };
}

/* ---- decoders: ggml's per-group scale formulas, y = db·q (IQ1: db·(q·1/8)) -------------- */
static inline float db_iq2 (float d, int sc) { return d * (0.5f + (float) (sc >> 1)) * 0.25f; }
static inline float db_iq3xxs (float d, int sc) { return d * (0.5f + (float) (sc >> 1)) * 0.5f; }
static inline float db_odd (float d, int sc) { return d * (float) sc; }

static inline void
iq_to_float (const uint8_t *x, size_t bsize, float *y, int64_t n, HzqKUnpackFn unpack,
             float (*db) (float, int), bool eighths)
{
  int8_t q[256];
  int16_t sc[16], mn[16];
  for (; n >= 256; n -= 256, x += bsize, y += 256)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      for (int g = 0; g < 16; g++)
        {
          const float dl = db (s.d, sc[g]);
          for (int j = 16 * g; j < 16 * g + 16; j++)
            y[j] = eighths ? dl * ((float) q[j] * 0.125f) : dl * (float) q[j];
        }
    }
}

#define HZQ_IQ(f, BYTES, DB, EIGHTHS, POST)                                                   \
  void                                                                                    \
  f##_to_float (const void *restrict x, float *restrict y, int64_t n)                     \
  { iq_to_float (x, BYTES, y, n, unpack_##f, DB, EIGHTHS); }                              \
  HZQ_KDOT (f, BYTES, false, POST)

/** Decoders (dequantize_row_iq*) and Q8_K dots (ggml_vec_dot_iq*_q8_K_generic). */
HZQ_IQ (iq2_xxs, 66, db_iq2, false, 0.125f)
HZQ_IQ (iq2_xs, 74, db_iq2, false, 0.125f)
HZQ_IQ (iq2_s, 82, db_iq2, false, 0.125f)
HZQ_IQ (iq3_xxs, 98, db_iq3xxs, false, 0.25f)
HZQ_IQ (iq3_s, 110, db_odd, false, 1.0f)
HZQ_IQ (iq1_s, 50, db_odd, true, 0.125f)
HZQ_IQ (iq1_m, 56, db_odd, true, 0.125f)
