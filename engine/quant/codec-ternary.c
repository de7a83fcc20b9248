/* engine/quant/codec-ternary.c — the ternary formats TQ1_0 (base-3 packed, 1.69 bpw) and
 * TQ2_0 (2 bits per trit), 256-element blocks with one fp16 scale, dotted against Q8_K
 * through quant-kdot.h (every 16-element scale is 1).
 *
 * Bit-exact with ggml-quants.c dequantize_row_tq{1,2}_0 / quantize_row_tq{1,2}_0_ref
 * (llama.cpp c392e509).
 */
#include "quant-kdot.h"

static const uint8_t pow3[6] = { 1, 3, 9, 27, 81, 243 };

/** Trit n (0 = most significant) of a byte holding 5 trits as a base-3 fraction:
 *  byte·3^n keeps the lower digits in [0, 256), the next digit is (v·3) >> 8. */
static inline int
trit (uint8_t byte, int n)
{
  const uint8_t v = (uint8_t) (byte * pow3[n]);
  return ((uint16_t) v * 3) >> 8;
}

/* TQ1_0 element order: qs[0..31] hold 5 trits each for elements 32n+m (n = trit, m =
 * byte); qs[32..47] elements 160 + 16n + m; qh[0..3] 4 trits for elements 240 + 4n + j. */
static inline void
tq1_codes (const HzBlockTQ1_0 *x, int8_t q[256])
{
  for (int n = 0; n < 5; n++)
    for (int m = 0; m < 32; m++)
      q[32 * n + m] = (int8_t) (trit (x->qs[m], n) - 1);
  for (int n = 0; n < 5; n++)
    for (int m = 0; m < 16; m++)
      q[160 + 16 * n + m] = (int8_t) (trit (x->qs[32 + m], n) - 1);
  for (int n = 0; n < 4; n++)
    for (int j = 0; j < 4; j++)
      q[240 + 4 * n + j] = (int8_t) (trit (x->qh[j], n) - 1);
}

/* TQ2_0 element 128h + 32l + m is bits 2l of qs[32h + m]. */
static inline void
tq2_codes (const HzBlockTQ2_0 *x, int8_t q[256])
{
  for (int h = 0; h < 2; h++)
    for (int s = 0; s < 4; s++)
      for (int m = 0; m < 32; m++)
        q[128 * h + 32 * s + m] = (int8_t) (((x->qs[32 * h + m] >> (2 * s)) & 3) - 1);
}

static inline HzqKScale
unpack_tq1_0 (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockTQ1_0 *x = (const HzBlockTQ1_0 *) b;
  tq1_codes (x, q);
  for (int g = 0; g < 16; g++)
    sc[g] = 1;
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

static inline HzqKScale
unpack_tq2_0 (const uint8_t *b, int8_t q[256], int16_t sc[16], int16_t mn[16])
{
  const HzBlockTQ2_0 *x = (const HzBlockTQ2_0 *) b;
  tq2_codes (x, q);
  for (int g = 0; g < 16; g++)
    sc[g] = 1;
  return (HzqKScale) { hzq_fp16_to_fp32 (x->d), 0 };
}

/* y = (q − 1)·d for both; the unpack already subtracted 1 */
static inline void
ternary_to_float (const uint8_t *x, size_t bsize, float *y, int64_t n,
                  HzqKScale (*unpack) (const uint8_t *, int8_t *, int16_t *, int16_t *))
{
  int8_t q[256];
  int16_t sc[16], mn[16];
  for (; n >= 256; n -= 256, x += bsize, y += 256)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      for (int e = 0; e < 256; e++)
        y[e] = (float) q[e] * s.d;
    }
}

/** TQ1_0 -> floats (dequantize_row_tq1_0). */
void tq1_0_to_float (const void *restrict x, float *restrict y, int64_t n)
{ ternary_to_float (x, 54, y, n, unpack_tq1_0); }

/** TQ2_0 -> floats (dequantize_row_tq2_0). */
void tq2_0_to_float (const void *restrict x, float *restrict y, int64_t n)
{ ternary_to_float (x, 66, y, n, unpack_tq2_0); }

/* ggml_vec_dot_tq{1,2}_0_q8_K_generic */
HZQ_KDOT (tq1_0, 54, false, 1.0f)
HZQ_KDOT (tq2_0, 66, false, 1.0f)

/* trit codes 0/1/2 = round(x/absmax) + 1, with d = absmax */
static inline float
ternary_codes (const float *x, uint8_t c[256])
{
  const float d = hzq_absmax (x, 256);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  for (int j = 0; j < 256; j++)
    c[j] = (uint8_t) (lroundf (x[j] * id) + 1);
  return d;
}

/* pack trits c[0..k) (first = most significant) into a byte as a base-3 fraction of 256,
 * rounded up, after scaling a 4-trit group to 5 digits */
static inline uint8_t
pack_trits (const uint8_t *c, int stride, int k)
{
  unsigned v = 0;
  for (int n = 0; n < k; n++)
    v = v * 3 + c[n * stride];
  for (int n = k; n < 5; n++)
    v *= 3;
  return (uint8_t) ((v * 256 + 242) / 243);
}

/** floats -> TQ1_0 (quantize_row_tq1_0_ref). */
void
tq1_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t c[256];
  for (HzBlockTQ1_0 *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      y->d = hzq_fp32_to_fp16 (ternary_codes (x, c));
      for (int m = 0; m < 32; m++)
        y->qs[m] = pack_trits (c + m, 32, 5);
      for (int m = 0; m < 16; m++)
        y->qs[32 + m] = pack_trits (c + 160 + m, 16, 5);
      for (int j = 0; j < 4; j++)
        y->qh[j] = pack_trits (c + 240 + j, 4, 4);
    }
}

/** floats -> TQ2_0 (quantize_row_tq2_0_ref). */
void
tq2_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t c[256];
  for (HzBlockTQ2_0 *y = vy; n >= 256; n -= 256, x += 256, y++)
    {
      y->d = hzq_fp32_to_fp16 (ternary_codes (x, c));
      memset (y->qs, 0, 64);
      for (int e = 0; e < 256; e++)
        y->qs[32 * (e / 128) + e % 32] |= (uint8_t) ((c[e] & 3) << (2 * ((e % 128) / 32)));
    }
}
