/* engine/quant/ggml-order.c — dot kernels in llama.cpp's CPU summation order (see
 * ggml-order.h for which ggml function each one follows and why).
 *
 * Integer parts are exact in any order; only the float operations are spelled out, each
 * rounded as ggml rounds it: fmaf() where ggml uses an FMA intrinsic (_mm256_fmadd_ps,
 * _mm512_fmadd_ps) or where its scalar tail is contracted by the compiler, separate
 * operations elsewhere. -ffp-contract=off keeps the compiler from fusing anything else.
 *
 * These plain C kernels are the reference of the SIMD ones (ggml-order-x86.inc, which must
 * give the same bits) and the fallback of CPUs without AVX2 or with HZ_SIMD=scalar. The
 * K-quant kernels share the unpackers of the codecs (quant-kunpack.h) and two loops: the
 * 8-lane one of ggml's AVX2 path and the serial one of its AMX path. The end of the file
 * picks a level's kernels per format and shape. */
#include "ggml-order.h"
#include "ggml-order-impl.h"
#include "quant-kunpack.h"

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

HZG_CLONES static void
f32_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
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

HZG_CLONES static void
f32_dot_tb16 (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
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

/* MXFP4 repacked to block_mxfp4x8 (gemv/gemm_mxfp4_8x8_q8_0 of ggml-cpu/arch/x86/repack.cpp):
 * per block acc = fma((float) isum, e8m0_half(e_w) * d_a, acc), the values through the
 * doubled FP4 table */
HZG_CLONES static void
mxfp4_serial_dot (int n, float *restrict s, const void *restrict vx, const void *restrict vy)
{
  const HzBlockMXFP4 *x = vx;
  const HzBlockQ8_0 *y = vy;
  float acc = 0.0f;
  for (int b = 0; b < n / 32; b++)
    {
      int isum = 0;
      for (int j = 0; j < 16; j++)
        isum += hzq_kvalues_fp4[x[b].qs[j] & 0xf] * y[b].qs[j] +
                hzq_kvalues_fp4[x[b].qs[j] >> 4] * y[b].qs[j + 16];
      acc = fmaf ((float) isum, hzq_e8m0_half (x[b].e) * hzq_fp16_to_fp32 (y[b].d), acc);
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

/* ---- 256-element super-blocks against Q8_K -------------------------------------------- */

/* The 8 int32 lanes of one super-block unpacked by quant-kunpack.h: lane l sums
 * sc * q * y over the elements 4l..4l+3 of every 32 (what maddubs + madd with the shuffled
 * scales leave in lane l of sumi in ggml's AVX2 loops). */
static inline void
k_lanes (const int8_t q[256], const int16_t sc[16], const int8_t *y, int32_t lane[8])
{
  for (int l = 0; l < 8; l++)
    lane[l] = 0;
  for (int c = 0; c < 8; c++)
    for (int l = 0; l < 8; l++)
      {
        const int e = 32 * c + 4 * l;
        lane[l] += sc[e / 16] * (q[e] * y[e] + q[e + 1] * y[e + 1] + q[e + 2] * y[e + 2]
                                 + q[e + 3] * y[e + 3]);
      }
}

/* ggml_vec_dot_<t>_q8_K of the AVX2 path: per super-block one 8-lane FMA with d_w·d_a. */
__attribute__ ((always_inline)) static inline float
k_lanes_dot (int n, const uint8_t *x, size_t bsize, const HzBlockQ8_K *y, HzqKUnpackFn unpack,
             HzgMins mins)
{
  float acc[8] = { 0 }, acc_m[4] = { 0 };
  int8_t q[256];
  int16_t sc[16], mn[16];
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++, x += bsize, y++)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      const float yd = hzq_q8k_d (y);
      const float d = yd * s.d;
      const float dmin = -yd * s.dmin;
      if (mins == HZG_MINS_LANES8)
        for (int l = 0; l < 8; l++)
          acc[l] = fmaf (dmin, (float) (mn[2 * l] * y->bsums[2 * l]
                                        + mn[2 * l + 1] * y->bsums[2 * l + 1]), acc[l]);
      else if (mins == HZG_MINS_LANES4)
        for (int l = 0; l < 4; l++)
          {
            const int s0 = y->bsums[4 * l] + y->bsums[4 * l + 1];
            const int s1 = y->bsums[4 * l + 2] + y->bsums[4 * l + 3];
            acc_m[l] = fmaf (dmin, (float) (mn[4 * l] * s0 + mn[4 * l + 2] * s1), acc_m[l]);
          }
      k_lanes (q, sc, y->qs, lane);
      for (int l = 0; l < 8; l++)
        acc[l] = fmaf (d, (float) lane[l], acc[l]);
    }
  /* acc_m (Q4_K): movehl + add, movehdup + add_ss */
  const float m = mins == HZG_MINS_LANES4 ? (acc_m[0] + acc_m[2]) + (acc_m[1] + acc_m[3]) : 0.0f;
  return mins == HZG_MINS_LANES4 ? hz_ggml_hsum8 (acc) + m : hz_ggml_hsum8 (acc);
}

/* tinygemm_kernel_vnni<q8_K, t> of the AMX build: per super-block
 * acc = fma(Σ sc·q·y, d_w·d_a, acc), then for Q4_K/Q5_K acc = fnmadd(Σ mn·bsum,
 * dmin_w·d_a, acc). */
__attribute__ ((always_inline)) static inline float
k_serial_dot (int n, const uint8_t *x, size_t bsize, const HzBlockQ8_K *y, HzqKUnpackFn unpack,
              bool affine)
{
  float acc = 0.0f;
  int8_t q[256];
  int16_t sc[16], mn[16];
  int32_t lane[8];
  for (int i = 0; i < n / 256; i++, x += bsize, y++)
    {
      const HzqKScale s = unpack (x, q, sc, mn);
      k_lanes (q, sc, y->qs, lane);
      int32_t isum = 0;
      for (int l = 0; l < 8; l++)
        isum += lane[l];
      const float yd = hzq_q8k_d (y);
      acc = fmaf ((float) isum, s.d * yd, acc);
      if (affine)
        acc = fmaf (-(float) hzq_kdot_mins (mn, y), s.dmin * yd, acc);
    }
  return acc;
}

#define K_LANES(f, MINS)                                                                    \
  HZG_CLONES static void                                                                  \
  f##_lanes_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)  \
  { *s = k_lanes_dot (n, x, sizeof (HzBlock_##f), y, unpack_##f, MINS); }
#define K_SERIAL(f, AFFINE)                                                                 \
  HZG_CLONES static void                                                                  \
  f##_serial_dot (int n, float *restrict s, const void *restrict x, const void *restrict y) \
  { *s = k_serial_dot (n, x, sizeof (HzBlock_##f), y, unpack_##f, AFFINE); }

K_LANES (q2_K, HZG_MINS_LANES8)
K_LANES (q3_K, HZG_MINS_NONE)
K_LANES (q4_K, HZG_MINS_LANES4)
K_LANES (q6_K, HZG_MINS_NONE)
K_LANES (iq4_xs, HZG_MINS_NONE)
K_SERIAL (q4_K, true)
K_SERIAL (q5_K, true)
K_SERIAL (q6_K, false)
K_SERIAL (iq4_xs, false)

/* ---- the tables ------------------------------------------------------------------------- */

const HzVecDotFn hzg_kernels_scalar[HZG_N_KERNELS] = {
  [HZG_F32] = f32_dot,
  [HZG_F32_TB16] = f32_dot_tb16,
  [HZG_Q4_0_SERIAL] = q4_0_x8_dot,
  [HZG_Q4_1_SERIAL] = q4_1_serial_dot,
  [HZG_Q8_0_SERIAL] = q8_0_serial_dot,
  [HZG_IQ4_NL] = iq4_nl_dot,
  [HZG_IQ4_NL_TB] = iq4_nl_dot_tinyblas,
  [HZG_Q2_K_LANES] = q2_K_lanes_dot,
  [HZG_Q3_K_LANES] = q3_K_lanes_dot,
  [HZG_Q4_K_LANES] = q4_K_lanes_dot,
  [HZG_Q6_K_LANES] = q6_K_lanes_dot,
  [HZG_IQ4_XS_LANES] = iq4_xs_lanes_dot,
  [HZG_Q4_K_SERIAL] = q4_K_serial_dot,
  [HZG_Q5_K_SERIAL] = q5_K_serial_dot,
  [HZG_Q6_K_SERIAL] = q6_K_serial_dot,
  [HZG_IQ4_XS_SERIAL] = iq4_xs_serial_dot,
  [HZG_MXFP4_SERIAL] = mxfp4_serial_dot,
};

/* The kernel table of a SIMD level (NULL: the CPU lacks it). */
static const HzVecDotFn *
kernels_at (HzSimdLevel level)
{
  if (!hz_simd_supported (level))
    return NULL;
  switch (level)
    {
#if HZ_QUANT_X86
    case HZ_SIMD_AVX512:
      return hzg_kernels_avx512;
    case HZ_SIMD_AVX2:
      return hzg_kernels_avx2;
#endif
    case HZ_SIMD_SCALAR:
      return hzg_kernels_scalar;
    default:
      return NULL;
    }
}

/* The four-row version of kernel `id` at `level`, or NULL. */
static HzGgmlDot4Fn
x4_at (HzSimdLevel level, HzgKernel id)
{
  switch (level)
    {
#if HZ_QUANT_X86
    case HZ_SIMD_AVX512:
      return hzg_kernels_x4_avx512[id];
    case HZ_SIMD_AVX2:
      return hzg_kernels_x4_avx2[id];
#endif
    default:
      return NULL;
    }
}

/* The tiled version of kernel `id` at `level`, or NULL. */
static HzGgmlTileFn
tile_at (HzSimdLevel level, HzgKernel id)
{
  switch (level)
    {
#if HZ_QUANT_X86
    case HZ_SIMD_AVX512:
      return hzg_kernels_tile_avx512[id];
    case HZ_SIMD_AVX2:
      return hzg_kernels_tile_avx2[id];
#endif
    default:
      return NULL;
    }
}

/* Per format: kernels for one and for several activation rows, used when n_out % rows_mult
 * == 0 and n_in % in_mult == 0 (the AMX / repack / tinyBLAS conditions), else the `_else`
 * pair (HZG_N_KERNELS: the table's vec_dot, which for table_exact formats is ggml's order at
 * AVX2). Rows with one = 0 (HZG_F32) and table_exact FALSE have no kernels here. */
typedef struct {
  HzgKernel one, batch;
  int       rows_mult, in_mult;
  HzgKernel one_else, batch_else;
  bool      table_exact;   /* the quant table's AVX2 kernel sums in ggml's order */
} OrderRow;

#define NONE HZG_N_KERNELS
static const OrderRow order_rows[HZ_TYPE_COUNT_] = {
  [HZ_TYPE_F32]    = { HZG_F32, HZG_F32_TB16, 4, 16, HZG_F32, HZG_F32, false },
  [HZ_TYPE_Q4_0]   = { HZG_Q4_0_SERIAL, HZG_Q4_0_SERIAL, 8, 8, NONE, NONE, true },
  [HZ_TYPE_Q4_1]   = { HZG_Q4_1_SERIAL, HZG_Q4_1_SERIAL, 32, 1, NONE, NONE, true },
  [HZ_TYPE_Q5_0]   = { NONE, NONE, 1, 1, NONE, NONE, true },
  [HZ_TYPE_Q5_1]   = { NONE, NONE, 1, 1, NONE, NONE, true },
  [HZ_TYPE_Q8_0]   = { HZG_Q8_0_SERIAL, HZG_Q8_0_SERIAL, 32, 1, NONE, NONE, true },
  [HZ_TYPE_Q5_K]   = { HZG_Q5_K_SERIAL, HZG_Q5_K_SERIAL, 32, 1, NONE, NONE, true },
  [HZ_TYPE_IQ4_NL] = { HZG_IQ4_NL, HZG_IQ4_NL_TB, 1, 1, NONE, NONE, false },
  [HZ_TYPE_Q2_K]   = { HZG_Q2_K_LANES, HZG_Q2_K_LANES, 1, 1, NONE, NONE, false },
  [HZ_TYPE_Q3_K]   = { HZG_Q3_K_LANES, HZG_Q3_K_LANES, 1, 1, NONE, NONE, false },
  [HZ_TYPE_Q4_K]   = { HZG_Q4_K_SERIAL, HZG_Q4_K_SERIAL, 32, 1, HZG_Q4_K_LANES, HZG_Q4_K_LANES,
                       false },
  [HZ_TYPE_Q6_K]   = { HZG_Q6_K_SERIAL, HZG_Q6_K_SERIAL, 32, 1, HZG_Q6_K_LANES, HZG_Q6_K_LANES,
                       false },
  [HZ_TYPE_IQ4_XS] = { HZG_IQ4_XS_SERIAL, HZG_IQ4_XS_SERIAL, 32, 1, HZG_IQ4_XS_LANES,
                       HZG_IQ4_XS_LANES, false },
  [HZ_TYPE_MXFP4]  = { HZG_MXFP4_SERIAL, HZG_MXFP4_SERIAL, 8, 1, NONE, NONE, false },
};

static bool
order_row_used (uint32_t type)
{
  /* designated initializers leave the other rows zeroed: one = HZG_F32 with rows_mult 0 */
  return type < HZ_TYPE_COUNT_ && order_rows[type].rows_mult != 0;
}

HzGgmlDots
hz_ggml_order_dots_at (uint32_t type, int64_t n_out, int64_t n_in, HzSimdLevel level)
{
  const HzQuantTraits *t = hz_quant_traits (type);
  const HzVecDotFn *k = kernels_at (level);
  HzGgmlDots d = { NULL, NULL, false };
  if (t == NULL || t->vec_dot == NULL || k == NULL)
    return d;
  if (order_row_used (type))
    {
      const OrderRow *r = &order_rows[type];
      if (r->one != NONE && n_out % r->rows_mult == 0 && n_in % r->in_mult == 0)
        return (HzGgmlDots) { k[r->one], k[r->batch], true, x4_at (level, r->one),
                              r->one == r->batch ? tile_at (level, r->batch) : NULL };
      if (r->one_else != NONE)
        return (HzGgmlDots) { k[r->one_else], k[r->batch_else], true };
      /* the table's AVX2 kernel is ggml's order for table_exact rows: used at every level
       * (also when HZ_SIMD caps the table lower) as long as the CPU has AVX2 */
      if (r->table_exact && hz_simd_supported (HZ_SIMD_AVX2))
        {
          HzVecDotFn avx2 = hz_quant_vec_dot_at (type, HZ_SIMD_AVX2);
          if (avx2)
            return (HzGgmlDots) { avx2, avx2, true };
        }
    }
  d.one = d.batch = level == HZ_SIMD_SCALAR ? hz_quant_vec_dot_at (type, HZ_SIMD_SCALAR)
                                            : t->vec_dot;
  return d;
}
#undef NONE

HzGgmlDots
hz_ggml_order_dots (uint32_t type, int64_t n_out, int64_t n_in)
{
  return hz_ggml_order_dots_at (type, n_out, n_in, hz_simd_level ());
}

/* ---- F32 entry points (attention calls them per key / per output) ------------------------ */

static const HzVecDotFn *
kernels_now (void)
{
  static const HzVecDotFn *cached;   /* one pointer, written once with the same value */
  const HzVecDotFn *k = __atomic_load_n (&cached, __ATOMIC_ACQUIRE);
  if (k == NULL)
    {
      k = kernels_at (hz_simd_level ());
      __atomic_store_n (&cached, k, __ATOMIC_RELEASE);
    }
  return k;
}

void
hz_ggml_dot_f32 (int n, float *restrict s, const void *restrict x, const void *restrict y)
{
  kernels_now ()[HZG_F32] (n, s, x, y);
}

void
hz_ggml_dot_f32_tb16 (int n, float *restrict s, const void *restrict x, const void *restrict y)
{
  kernels_now ()[HZG_F32_TB16] (n, s, x, y);
}
