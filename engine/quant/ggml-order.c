/* engine/quant/ggml-order.c — dot kernels in llama.cpp's CPU summation order (see
 * ggml-order.h for which ggml function each one follows and why).
 *
 * Integer parts are exact in any order; only the float operations are spelled out, each
 * rounded as ggml rounds it: fmaf() where ggml uses an FMA intrinsic (_mm256_fmadd_ps,
 * _mm512_fmadd_ps) or where its scalar tail is contracted by the compiler, separate
 * operations elsewhere. -ffp-contract=off keeps the compiler from fusing anything else. */
#include "ggml-order.h"
#include "quant-impl.h"

#include <math.h>

#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(__SANITIZE_THREAD__)
#define HZG_CLONES __attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#else
#define HZG_CLONES
#endif

/* ---- horizontal sums ------------------------------------------------------------------ */

float
hz_ggml_hsum8 (const float a[8])
{
  /* _mm256_extractf128_ps + _mm_add_ps, then movehl, then movehdup + add_ss */
  const float r0 = a[4] + a[0], r1 = a[5] + a[1], r2 = a[6] + a[2], r3 = a[7] + a[3];
  return (r0 + r2) + (r1 + r3);
}

float
hz_ggml_reduce16 (const float a[16])
{
  /* GCC's _mm512_reduce_add_ps: upper 256 + lower 256, upper 128 + lower 128, then the
   * {2,3,0,1} shuffle, then lanes 0 + 1 */
  float t[8], u[4];
  for (int i = 0; i < 8; i++)
    t[i] = a[i + 8] + a[i];
  for (int i = 0; i < 4; i++)
    u[i] = t[i + 4] + t[i];
  return (u[0] + u[2]) + (u[1] + u[3]);
}

/* ---- F32 ------------------------------------------------------------------------------ */

HZG_CLONES void
hz_ggml_dot_f32 (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const float *x = vx, *y = vy;
  const int np = n & ~63;                      /* GGML_F32_STEP = 64 on AVX-512 */
  float acc[4][16] = { { 0 } };
  for (int i = 0; i < np; i += 64)
    for (int j = 0; j < 4; j++)
      for (int l = 0; l < 16; l++)
        acc[j][l] = fmaf (x[i + 16 * j + l], y[i + 16 * j + l], acc[j][l]);
  /* GGML_F32x16_REDUCE: sum[0] += sum[2], sum[1] += sum[3], sum[0] += sum[1] */
  float r[16];
  for (int l = 0; l < 16; l++)
    r[l] = (acc[0][l] + acc[2][l]) + (acc[1][l] + acc[3][l]);
  float sum = hz_ggml_reduce16 (r);
  for (int i = np; i < n; i++)                 /* "sumf += x[i]*y[i]": not contracted */
    sum += x[i] * y[i];
  *s = sum;
}

HZG_CLONES void
hz_ggml_dot_f32_tb16 (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const float *x = vx, *y = vy;
  float acc[16] = { 0 };
  for (int i = 0; i < n; i += 16)
    for (int l = 0; l < 16; l++)
      acc[l] = fmaf (x[i + l], y[i + l], acc[l]);
  *s = hz_ggml_reduce16 (acc);
}

/* ---- Q4_0 repacked to Q4_0x8 (gemv/gemm_q4_0_8x8_q8_0) ------------------------------------ */

HZG_CLONES static void
q4_0_x8_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ4_0 *x = vx;
  const HzBlockQ8_0 *y = vy;
  float acc = 0.0f;
  for (int b = 0; b < n / 32; b++)
    {
      int isum = 0;
      for (int j = 0; j < 16; j++)
        isum += ((x[b].qs[j] & 0xf) - 8) * y[b].qs[j] + ((x[b].qs[j] >> 4) - 8) * y[b].qs[j + 16];
      const float scale = hzq_fp16_to_fp32 (x[b].d) * hzq_fp16_to_fp32 (y[b].d);
      acc = fmaf ((float) isum, scale, acc);
    }
  *s = acc;
}

/* Q8_0 in the same serial per-block order (AMX build: tinygemm_kernel_vnni<q8_0>) */
HZG_CLONES static void
q8_0_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ8_0 *x = vx;
  const HzBlockQ8_0 *y = vy;
  float acc = 0.0f;
  for (int b = 0; b < n / 32; b++)
    {
      int isum = 0;
      for (int j = 0; j < 32; j++)
        isum += x[b].qs[j] * y[b].qs[j];
      acc = fmaf ((float) isum, hzq_fp16_to_fp32 (x[b].d) * hzq_fp16_to_fp32 (y[b].d), acc);
    }
  *s = acc;
}

/* Q4_1 as tinygemm_kernel_vnni<q8_1, q4_1> (AMX build): per block the integer sum scaled by
 * d_w·d_a, then the min term m_w·s_a, both fused into one accumulator. */
HZG_CLONES static void
q4_1_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ4_1 *x = vx;
  const HzBlockQ8_1 *y = vy;
  float acc = 0.0f;
  for (int b = 0; b < n / 32; b++)
    {
      int isum = 0;
      for (int j = 0; j < 16; j++)
        isum += (x[b].qs[j] & 0xf) * y[b].qs[j] + (x[b].qs[j] >> 4) * y[b].qs[j + 16];
      acc = fmaf ((float) isum, hzq_fp16_to_fp32 (x[b].d) * hzq_fp16_to_fp32 (y[b].d), acc);
      acc = fmaf (hzq_fp16_to_fp32 (x[b].m), hzq_fp16_to_fp32 (y[b].s), acc);
    }
  *s = acc;
}

/* ---- IQ4_NL --------------------------------------------------------------------------- */

/* Lane sums of one 32-element block: lane l = elements 4l..4l+3 (low nibbles are elements
 * 0-15, high nibbles 16-31, as bytes_from_nibbles / the tinyBLAS iq4_nl load lay them out). */
static inline void
iq4_nl_lanes (const HzBlockIQ4_NL *x, const int8_t *y, int32_t lane[8])
{
  int8_t q[32];
  for (int j = 0; j < 16; j++)
    {
      q[j] = hzq_kvalues_iq4nl[x->qs[j] & 0xf];
      q[j + 16] = hzq_kvalues_iq4nl[x->qs[j] >> 4];
    }
  for (int l = 0; l < 8; l++)
    lane[l] = q[4 * l] * y[4 * l] + q[4 * l + 1] * y[4 * l + 1]
              + q[4 * l + 2] * y[4 * l + 2] + q[4 * l + 3] * y[4 * l + 3];
}

/* ggml_vec_dot_iq4_nl_q8_0, AVX2 path: blocks 2k in accum1, 2k+1 in accum2, scalar tail. */
HZG_CLONES static void
iq4_nl_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockIQ4_NL *x = vx;
  const HzBlockQ8_0 *y = vy;
  const int nb = n / 32;
  float acc[2][8] = { { 0 } };
  int32_t lane[8];
  int ib = 0;
  for (; ib + 1 < nb; ib += 2)
    for (int k = 0; k < 2; k++)
      {
        iq4_nl_lanes (&x[ib + k], y[ib + k].qs, lane);
        const float d = hzq_fp16_to_fp32 (y[ib + k].d) * hzq_fp16_to_fp32 (x[ib + k].d);
        for (int l = 0; l < 8; l++)
          acc[k][l] = fmaf (d, (float) lane[l], acc[k][l]);
      }
  float sum8[8];
  for (int l = 0; l < 8; l++)
    sum8[l] = acc[0][l] + acc[1][l];
  float sumf = hz_ggml_hsum8 (sum8);
  for (; ib < nb; ib++)
    {
      iq4_nl_lanes (&x[ib], y[ib].qs, lane);
      int isum = 0;
      for (int l = 0; l < 8; l++)
        isum += lane[l];
      const float d = hzq_fp16_to_fp32 (y[ib].d) * hzq_fp16_to_fp32 (x[ib].d);
      sumf = fmaf (d, (float) isum, sumf);     /* "sumf += d * (sumi1 + sumi2)", contracted */
    }
  *s = sumf;
}

/* tinyBLAS_Q0_AVX<block_iq4_nl, block_q8_0>: one 8-lane accumulator per output. */
HZG_CLONES static void
iq4_nl_dot_tinyblas (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockIQ4_NL *x = vx;
  const HzBlockQ8_0 *y = vy;
  float acc[8] = { 0 };
  int32_t lane[8];
  for (int ib = 0; ib < n / 32; ib++)
    {
      iq4_nl_lanes (&x[ib], y[ib].qs, lane);
      const float d = hzq_fp16_to_fp32 (x[ib].d) * hzq_fp16_to_fp32 (y[ib].d);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  *s = hz_ggml_hsum8 (acc);
}

/* ---- 256-element super-blocks against Q8_K (AVX2 paths of ggml_vec_dot_*_q8_K) ----------- */

/* One super-block in the shape every AVX2 K-quant loop reduces it to: the integer value of
 * each element and an integer scale per 16 elements. */
typedef struct {
  int8_t  q[256];
  int16_t sc[16];
} KBlock;

/* The 8 int32 lanes: lane l sums sc * q * y over the elements 4l..4l+3 of every 32 (what
 * maddubs + madd with the shuffled scales leave in lane l of sumi). */
static inline void
k_lanes (const KBlock *k, const int8_t *y, int32_t lane[8])
{
  for (int l = 0; l < 8; l++)
    lane[l] = 0;
  for (int c = 0; c < 8; c++)
    for (int l = 0; l < 8; l++)
      {
        const int e = 32 * c + 4 * l;
        lane[l] += k->sc[e / 16] * (k->q[e] * y[e] + k->q[e + 1] * y[e + 1]
                                    + k->q[e + 2] * y[e + 2] + k->q[e + 3] * y[e + 3]);
      }
}

static inline float
q8k_d (const HzBlockQ8_K *y)
{
  float d;
  memcpy (&d, &y->d, 4);
  return d;
}

/* Q2_K and Q3_K lay out element 128h + 32s + l as bits 2s..2s+1 of qs[32h + l]. */
static inline void
k_2bit (const uint8_t qs[64], KBlock *k)
{
  for (int h = 0; h < 2; h++)
    for (int sh = 0; sh < 4; sh++)
      for (int l = 0; l < 32; l++)
        k->q[128 * h + 32 * sh + l] = (int8_t) ((qs[32 * h + l] >> (2 * sh)) & 3);
}

HZG_CLONES static void
q2_K_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ2_K *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc[8] = { 0 };
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      const float yd = q8k_d (&y[i]);
      const float d = yd * hzq_fp16_to_fp32 (x[i].d);
      const float dmin = -yd * hzq_fp16_to_fp32 (x[i].dmin);
      /* mins: madd of the 16 mins with the 16 bsums -> 8 lanes, fused into acc first */
      for (int l = 0; l < 8; l++)
        {
          const int prod = (x[i].scales[2 * l] >> 4) * y[i].bsums[2 * l]
                           + (x[i].scales[2 * l + 1] >> 4) * y[i].bsums[2 * l + 1];
          acc[l] = fmaf (dmin, (float) prod, acc[l]);
        }
      k_2bit (x[i].qs, &k);
      for (int g = 0; g < 16; g++)
        k.sc[g] = x[i].scales[g] & 0xf;
      k_lanes (&k, y[i].qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  *s = hz_ggml_hsum8 (acc);
}

HZG_CLONES static void
q3_K_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ3_K *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc[8] = { 0 };
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      const float d = q8k_d (&y[i]) * hzq_fp16_to_fp32 (x[i].d);
      k_2bit (x[i].qs, &k);
      /* minus 4 where the high bit (bit 4h + s of hmask[l]) is clear */
      for (int h = 0; h < 2; h++)
        for (int sh = 0; sh < 4; sh++)
          for (int l = 0; l < 32; l++)
            k.q[128 * h + 32 * sh + l] -= ((x[i].hmask[l] >> (4 * h + sh)) & 1) ? 0 : 4;
      /* 6-bit scales: low 4 bits from nibbles of scales[0..7], high 2 from scales[8..11] */
      for (int g = 0; g < 16; g++)
        {
          const int lo = g < 8 ? x[i].scales[g] & 0xf : x[i].scales[g - 8] >> 4;
          const int hi = (x[i].scales[8 + g % 4] >> (2 * (g / 4))) & 3;
          k.sc[g] = (int16_t) ((lo | hi << 4) - 32);
        }
      k_lanes (&k, y[i].qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  *s = hz_ggml_hsum8 (acc);
}

/* IQ4_XS super-block -> KBlock: kvalues per nibble, 6-bit scale per 32 minus 32. */
static inline void
iq4_xs_unpack (const HzBlockIQ4_XS *xb, KBlock *kb)
{
  for (int ib = 0; ib < 8; ib++)
    {
      const int ls = ((xb->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf)
                     | ((xb->scales_h >> (2 * ib)) & 3) << 4;
      kb->sc[2 * ib] = kb->sc[2 * ib + 1] = (int16_t) (ls - 32);
      for (int j = 0; j < 16; j++)
        {
          kb->q[32 * ib + j] = hzq_kvalues_iq4nl[xb->qs[16 * ib + j] & 0xf];
          kb->q[32 * ib + 16 + j] = hzq_kvalues_iq4nl[xb->qs[16 * ib + j] >> 4];
        }
    }
}

HZG_CLONES static void
q4_K_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ4_K *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc[8] = { 0 }, acc_m[4] = { 0 };
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      const float yd = q8k_d (&y[i]);
      const float d = yd * hzq_fp16_to_fp32 (x[i].d);
      const float dmin = -yd * hzq_fp16_to_fp32 (x[i].dmin);
      int sc[8], mn[8];
      for (int j = 0; j < 8; j++)
        hzq_k4_scale_min (x[i].scales, j, &sc[j], &mn[j]);
      /* mins: bsums summed in pairs (hadd) -> one per 32, madd with the mins -> 4 lanes */
      for (int l = 0; l < 4; l++)
        {
          const int s0 = y[i].bsums[4 * l] + y[i].bsums[4 * l + 1];
          const int s1 = y[i].bsums[4 * l + 2] + y[i].bsums[4 * l + 3];
          acc_m[l] = fmaf (dmin, (float) (mn[2 * l] * s0 + mn[2 * l + 1] * s1), acc_m[l]);
        }
      for (int c = 0; c < 4; c++)
        for (int l = 0; l < 32; l++)
          {
            k.q[64 * c + l] = (int8_t) (x[i].qs[32 * c + l] & 0xf);
            k.q[64 * c + 32 + l] = (int8_t) (x[i].qs[32 * c + l] >> 4);
          }
      for (int g = 0; g < 16; g++)
        k.sc[g] = (int16_t) sc[g / 2];
      k_lanes (&k, y[i].qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  /* acc_m: movehl + add, movehdup + add_ss */
  *s = hz_ggml_hsum8 (acc) + ((acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]));
}

/* Q6_K super-block -> KBlock. 128-element half h: chunks of 32 take the low nibbles of
 * ql[64h..+31], of ql[64h+32..+63], then their high nibbles, each with 2 bits of qh[32h+l]. */
static inline void
q6_K_unpack (const HzBlockQ6_K *xb, KBlock *kb)
{
  for (int h = 0; h < 2; h++)
    for (int l = 0; l < 32; l++)
      {
        const uint8_t a = xb->ql[64 * h + l], b = xb->ql[64 * h + 32 + l];
        const uint8_t hb = xb->qh[32 * h + l];
        kb->q[128 * h + l] = (int8_t) (((a & 0xf) | (hb & 3) << 4) - 32);
        kb->q[128 * h + 32 + l] = (int8_t) (((b & 0xf) | ((hb >> 2) & 3) << 4) - 32);
        kb->q[128 * h + 64 + l] = (int8_t) (((a >> 4) | ((hb >> 4) & 3) << 4) - 32);
        kb->q[128 * h + 96 + l] = (int8_t) (((b >> 4) | ((hb >> 6) & 3) << 4) - 32);
      }
  for (int g = 0; g < 16; g++)
    kb->sc[g] = xb->scales[g];
}

HZG_CLONES static void
q6_K_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ6_K *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc[8] = { 0 };
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      const float d = q8k_d (&y[i]) * hzq_fp16_to_fp32 (x[i].d);
      q6_K_unpack (&x[i], &k);
      k_lanes (&k, y[i].qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  *s = hz_ggml_hsum8 (acc);
}

/* Q6_K as the AMX build's tinygemm_kernel_vnni<q8_K, q6_K> sums it: the whole super-block
 * in one int32 (Σ_g scale_g Σ (q-32)·y), then one FMA per super-block with d_w·d_a. */
HZG_CLONES static void
q6_K_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockQ6_K *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc = 0.0f;
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      q6_K_unpack (&x[i], &k);
      k_lanes (&k, y[i].qs, lane);
      int32_t isum = 0;
      for (int l = 0; l < 8; l++)
        isum += lane[l];
      acc = fmaf ((float) isum, hzq_fp16_to_fp32 (x[i].d) * q8k_d (&y[i]), acc);
    }
  *s = acc;
}

/* Q4_K / Q5_K super-block -> KBlock (values 0..15 / 0..31, scale per 32) and the 8 mins. */
static inline void
k45_unpack (const uint8_t scales[12], const uint8_t *qs, const uint8_t *qh, KBlock *kb, int mn[8])
{
  for (int j = 0; j < 8; j++)
    {
      int sc;
      hzq_k4_scale_min (scales, j, &sc, &mn[j]);
      kb->sc[2 * j] = kb->sc[2 * j + 1] = (int16_t) sc;
    }
  for (int c = 0; c < 4; c++)
    for (int l = 0; l < 32; l++)
      {
        const int hi0 = qh ? ((qh[l] >> (2 * c)) & 1) << 4 : 0;
        const int hi1 = qh ? ((qh[l] >> (2 * c + 1)) & 1) << 4 : 0;
        kb->q[64 * c + l] = (int8_t) ((qs[32 * c + l] & 0xf) | hi0);
        kb->q[64 * c + 32 + l] = (int8_t) ((qs[32 * c + l] >> 4) | hi1);
      }
}

/* tinygemm_kernel_vnni<q8_K, q4_K / q5_K> (AMX build): per super-block
 * acc = fma(Σ sc·q·y, d_w·d_a, acc), then acc = fnmadd(Σ mn·bsum, dmin_w·d_a, acc). */
static inline float
k45_serial (int n, const uint8_t *x, size_t bsize, const HzBlockQ8_K *y, bool five)
{
  float acc = 0.0f;
  KBlock k;
  int mn[8];
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++, x += bsize)
    {
      const uint16_t *dd = (const uint16_t *) (const void *) x;   /* d, dmin lead both */
      const uint8_t *scales = x + 4;
      k45_unpack (scales, five ? x + 48 : x + 16, five ? x + 16 : NULL, &k, mn);
      k_lanes (&k, y[i].qs, lane);
      int32_t isum = 0, msum = 0;
      for (int l = 0; l < 8; l++)
        isum += lane[l];
      for (int j = 0; j < 8; j++)
        msum += mn[j] * (y[i].bsums[2 * j] + y[i].bsums[2 * j + 1]);
      const float yd = q8k_d (&y[i]);
      acc = fmaf ((float) isum, hzq_fp16_to_fp32 (dd[0]) * yd, acc);
      acc = fmaf (-(float) msum, hzq_fp16_to_fp32 (dd[1]) * yd, acc);
    }
  return acc;
}

HZG_CLONES static void
q4_K_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  *s = k45_serial (n, vx, sizeof (HzBlockQ4_K), vy, false);
}

HZG_CLONES static void
q5_K_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  *s = k45_serial (n, vx, sizeof (HzBlockQ5_K), vy, true);
}

/* tinygemm_kernel_vnni<q8_K, iq4_xs> (AMX build): one FMA per super-block with d_w·d_a. */
HZG_CLONES static void
iq4_xs_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockIQ4_XS *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc = 0.0f;
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      iq4_xs_unpack (&x[i], &k);
      k_lanes (&k, y[i].qs, lane);
      int32_t isum = 0;
      for (int l = 0; l < 8; l++)
        isum += lane[l];
      acc = fmaf ((float) isum, hzq_fp16_to_fp32 (x[i].d) * q8k_d (&y[i]), acc);
    }
  *s = acc;
}

HZG_CLONES static void
iq4_xs_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockIQ4_XS *x = vx;
  const HzBlockQ8_K *y = vy;
  float acc[8] = { 0 };
  KBlock k;
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++)
    {
      const float d = hzq_fp16_to_fp32 (x[i].d) * q8k_d (&y[i]);
      iq4_xs_unpack (&x[i], &k);
      k_lanes (&k, y[i].qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  *s = hz_ggml_hsum8 (acc);
}

/* ---- the table -------------------------------------------------------------------------- */

/* Per format: kernels for one and for several activation rows, used when n_out % rows_mult
 * == 0 and n_in % in_mult == 0 (the repack / tinyBLAS conditions), else the `_else` pair
 * (NULL: the table's vec_dot, which for table_exact formats is ggml's order at AVX2). */
typedef struct {
  HzVecDotFn one, batch;
  int        rows_mult, in_mult;
  HzVecDotFn one_else, batch_else;
  bool       table_exact;   /* the quant table's AVX2 kernel sums in ggml's order */
} OrderRow;

static const OrderRow order_rows[HZ_TYPE_COUNT_] = {
  [HZ_TYPE_F32]    = { hz_ggml_dot_f32, hz_ggml_dot_f32_tb16, 4, 16,
                       hz_ggml_dot_f32, hz_ggml_dot_f32, false },
  [HZ_TYPE_Q4_0]   = { q4_0_x8_dot, q4_0_x8_dot, 8, 8, NULL, NULL, true },
  [HZ_TYPE_Q4_1]   = { q4_1_serial_dot, q4_1_serial_dot, 32, 1, NULL, NULL, true },
  [HZ_TYPE_Q5_0]   = { .table_exact = true },
  [HZ_TYPE_Q5_1]   = { .table_exact = true },
  [HZ_TYPE_Q8_0]   = { q8_0_serial_dot, q8_0_serial_dot, 32, 1, NULL, NULL, true },
  [HZ_TYPE_Q5_K]   = { q5_K_serial_dot, q5_K_serial_dot, 32, 1, NULL, NULL, true },
  [HZ_TYPE_IQ4_NL] = { iq4_nl_dot, iq4_nl_dot_tinyblas, 1, 1 },
  [HZ_TYPE_Q2_K]   = { q2_K_dot, q2_K_dot, 1, 1 },
  [HZ_TYPE_Q3_K]   = { q3_K_dot, q3_K_dot, 1, 1 },
  [HZ_TYPE_Q4_K]   = { q4_K_serial_dot, q4_K_serial_dot, 32, 1, q4_K_dot, q4_K_dot },
  [HZ_TYPE_Q6_K]   = { q6_K_serial_dot, q6_K_serial_dot, 32, 1, q6_K_dot, q6_K_dot },
  [HZ_TYPE_IQ4_XS] = { iq4_xs_serial_dot, iq4_xs_serial_dot, 32, 1, iq4_xs_dot, iq4_xs_dot },
};

HzGgmlDots
hz_ggml_order_dots (uint32_t type, int64_t n_out, int64_t n_in)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  HzGgmlDots d = { NULL, NULL, false };
  if (t == NULL || t->vec_dot == NULL)
    return d;
  const OrderRow *r = &order_rows[type];
  if (r->one && n_out % r->rows_mult == 0 && n_in % r->in_mult == 0)
    return (HzGgmlDots) { r->one, r->batch, true };
  if (r->one_else)
    return (HzGgmlDots) { r->one_else, r->batch_else, true };
  /* the table's AVX2 kernel is ggml's order for table_exact rows */
  HzVecDotFn avx2 = r->table_exact && hz_simd_supported (HZ_SIMD_AVX2)
                      ? hz_quant_vec_dot_at (type, HZ_SIMD_AVX2) : NULL;
  d.one = d.batch = avx2 ? avx2 : t->vec_dot;
  d.exact = avx2 != NULL;
  return d;
}
