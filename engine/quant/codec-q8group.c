/* engine/quant/codec-q8group.c — formats whose blocks span several Q8_0 blocks: NVFP4
 * (64 elements, four UE4M3 scales per 16), Q1_0 (128 elements, sign bits) and Q2_0 (64
 * elements, 2-bit codes), all upstream ggml since 2025/2026 (golden/quant-new).
 *
 * Each format supplies unpack_<f>(block, q, gs): the integer value of every element and a
 * float scale per 16 elements; y = q·gs. The shared dot sums Σ q·a exactly per 16 elements
 * and adds (gs·dy)·sumi per group, as ggml-cpu/quants.c does per sub-block (NVFP4) or per
 * Q8_0 block (Q1_0, Q2_0, whose groups share one scale).
 *
 * Bit-exact with ggml-quants.c (ggml d99724f2) dequantize_row_* / quantize_row_*_ref.
 */
#include "quant-simd.h"

static inline uint16_t rd16 (const uint8_t *p) { uint16_t v; memcpy (&v, p, 2); return v; }

/** UE4M3 scale byte -> half its value (ggml_ue4m3_to_fp32): bit 7 ignored, 0x00 and 0x7F
 *  give 0. */
static inline float
ue4m3_half (uint8_t x)
{
  if (x == 0 || x == 0x7f)
    return 0.0f;
  const int exp = (x >> 3) & 0xf, man = x & 7;
  /* man·2^-9 or (1 + man/8)·2^(exp−7), both exact (ggml uses ldexpf; same values) */
  const float raw = exp == 0 ? (float) man * 0x1p-9f
                             : hzq_bits_f32 ((uint32_t) (exp - 7 + 127) << 23 | (uint32_t) man << 20);
  return raw * 0.5f;
}

/** float -> UE4M3 (ggml_fp32_to_ue4m3): clamps to 448, subnormals rounded half up,
 *  normals rounded half up on the 4th mantissa bit. */
static inline uint8_t
fp32_to_ue4m3 (float x)
{
  if (!(x > 0.0f))
    return 0;
  if (x > 448.0f)
    x = 448.0f;
  const uint32_t bits = hzq_f32_bits (x);
  int e = (int) ((bits >> 23) & 0xff) - 127 + 7;
  if (e <= 0)
    {
      int m = (int) (x * 512.0f + 0.5f);
      m = m > 7 ? 7 : m;
      return m < 1 ? 0 : (uint8_t) m;
    }
  if (e >= 15)
    return 0x7e;
  int m = (int) ((bits >> 20) & 7) + (int) ((bits >> 19) & 1);
  if (m > 7)
    {
      m = 0;
      if (++e >= 15)
        return 0x7e;
    }
  return (uint8_t) (e << 3 | m);
}

/* ---- unpack ------------------------------------------------------------------------------ */
static inline void
unpack_nvfp4 (const uint8_t *b, int8_t q[64], float gs[4])
{
  const HzBlockNVFP4 *x = (const HzBlockNVFP4 *) b;
  for (int s = 0; s < 4; s++)
    {
      gs[s] = ue4m3_half (x->d[s]);
      for (int j = 0; j < 8; j++)
        {
          q[16 * s + j] = hzq_kvalues_fp4[x->qs[8 * s + j] & 0xf];
          q[16 * s + j + 8] = hzq_kvalues_fp4[x->qs[8 * s + j] >> 4];
        }
    }
}

static inline void
unpack_q1_0 (const uint8_t *b, int8_t q[128], float gs[8])
{
  const HzBlockQ1_0 *x = (const HzBlockQ1_0 *) b;
  const float d = hzq_fp16_to_fp32 (x->d);
  for (int g = 0; g < 8; g++)
    gs[g] = d;
  for (int j = 0; j < 128; j++)
    q[j] = (int8_t) (2 * ((x->qs[j / 8] >> (j % 8)) & 1) - 1);   /* branch-free ±1 */
}

static inline void
unpack_q2_0 (const uint8_t *b, int8_t q[64], float gs[4])
{
  const HzBlockQ2_0 *x = (const HzBlockQ2_0 *) b;
  const float d = hzq_fp16_to_fp32 (x->d);
  for (int g = 0; g < 4; g++)
    gs[g] = d;
  for (int j = 0; j < 64; j++)
    q[j] = (int8_t) (((x->qs[j / 4] >> (2 * (j % 4))) & 3) - 1);
}

/* ---- shared loops ------------------------------------------------------------------------ */
typedef void (*HzqGroupUnpackFn) (const uint8_t *, int8_t *, float *);

static inline void
group_to_float (const uint8_t *x, int be, size_t bsize, float *y, int64_t n, HzqGroupUnpackFn unpack)
{
  int8_t q[128];
  float gs[8];
  for (; n >= be; n -= be, x += bsize, y += be)
    {
      unpack (x, q, gs);
      for (int j = 0; j < be; j++)
        y[j] = (float) q[j] * gs[j / 16];
    }
}

__attribute__ ((always_inline)) static inline float
group_vec_dot (int n, const uint8_t *x, int be, size_t bsize, const void *vy, HzqGroupUnpackFn unpack)
{
  const HzBlockQ8_0 *y = vy;
  int8_t q[128];
  float gs[8], sumf = 0.0f;
  for (int i = 0; i < n / be; i++, x += bsize)
    {
      unpack (x, q, gs);
      for (int g = 0; g < be / 16; g++)
        {
          const HzBlockQ8_0 *yb = &y[(i * be + 16 * g) / 32];
          const int8_t *a = yb->qs + (16 * g) % 32;
          int sumi = 0;
          for (int j = 0; j < 16; j++)
            sumi += q[16 * g + j] * a[j];
          sumf += (gs[g] * hzq_fp16_to_fp32 (yb->d)) * (float) sumi;
        }
    }
  return sumf;
}

#if HZ_QUANT_X86
/** AVX2: per Q8_0 block, 32 products -> 8 int32 lanes (lanes 0-3: first 16 elements,
 *  4-7: second 16) -> floats times the two group scales · dy. */
HZ_TARGET_AVX2 __attribute__ ((always_inline)) static inline float
group_vec_dot_avx2 (int n, const uint8_t *x, int be, size_t bsize, const void *vy,
                    HzqGroupUnpackFn unpack)
{
  const HzBlockQ8_0 *y = vy;
  int8_t q[128] __attribute__ ((aligned (32)));
  float gs[8];
  __m256 acc = _mm256_setzero_ps ();
  for (int i = 0; i < n / be; i++, x += bsize)
    {
      unpack (x, q, gs);
      for (int k = 0; k < be / 32; k++)
        {
          const HzBlockQ8_0 *yb = &y[i * be / 32 + k];
          const float dy = hzq_f16_avx2 (yb->d);
          const __m256 sc = _mm256_set_m128 (_mm_set1_ps (gs[2 * k + 1] * dy),
                                             _mm_set1_ps (gs[2 * k] * dy));
          const __m256i qx = _mm256_load_si256 ((const __m256i *) (q + 32 * k));
          const __m256i qy = _mm256_loadu_si256 ((const __m256i *) yb->qs);
          acc = _mm256_fmadd_ps (sc, hzq_dot_s8s8_ps (qx, qy), acc);
        }
    }
  return hzq_hsum8 (acc);
}

#define HZQ_GROUP_AVX2(f, BE, BYTES)                                                         \
  HZ_TARGET_AVX2 void                                                                     \
  f##_vec_dot_avx2 (int n, float *restrict s, const void *restrict x, const void *restrict y) \
  { *s = group_vec_dot_avx2 (n, x, BE, BYTES, y, unpack_##f); }
#else
#define HZQ_GROUP_AVX2(f, BE, BYTES)
#endif

/** Instantiates <f>_to_float, <f>_vec_dot, <f>_vec_dot_avx2 for a BE-element block. */
#define HZQ_GROUP(f, BE, BYTES)                                                              \
  void                                                                                    \
  f##_to_float (const void *restrict x, float *restrict y, int64_t n)                     \
  { group_to_float (x, BE, BYTES, y, n, unpack_##f); }                                   \
  void                                                                                    \
  f##_vec_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)  \
  { *s = group_vec_dot (n, x, BE, BYTES, y, unpack_##f); }                                \
  HZQ_GROUP_AVX2 (f, BE, BYTES)

HZQ_GROUP (nvfp4, 64, 36)
HZQ_GROUP (q1_0, 128, 18)
HZQ_GROUP (q2_0, 64, 18)

/* ---- encoders ---------------------------------------------------------------------------- */

/** floats -> NVFP4 (quantize_row_nvfp4_ref): per 16 elements d = UE4M3(absmax/6), codes
 *  nearest FP4 value at half(d). */
void
nvfp4_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockNVFP4 *y = vy; n >= 64; n -= 64, x += 64, y++)
    for (int s = 0; s < 4; s++)
      {
        const float *xb = x + 16 * s;
        y->d[s] = fp32_to_ue4m3 (hzq_absmax (xb, 16) / 6.0f);
        const float d = ue4m3_half (y->d[s]);
        for (int j = 0; j < 8; j++)
          y->qs[8 * s + j] = (uint8_t) (hzq_fp4_best_index (xb[j], d)
                                        | hzq_fp4_best_index (xb[j + 8], d) << 4);
      }
}

/** floats -> Q1_0 (quantize_row_q1_0_ref): d = (Σ|x|)/128 summed in order; bit = x ≥ 0. */
void
q1_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockQ1_0 *y = vy; n >= 128; n -= 128, x += 128, y++)
    {
      float sum = 0.0f;
      for (int j = 0; j < 128; j++)
        sum += fabsf (x[j]);
      y->d = hzq_fp32_to_fp16 (sum / 128);
      memset (y->qs, 0, 16);
      for (int j = 0; j < 128; j++)
        if (x[j] >= 0.0f)
          y->qs[j / 8] |= (uint8_t) (1u << (j % 8));
    }
}

/** floats -> Q2_0 (quantize_row_q2_0_ref): d = absmax, q = clamp(roundf(x/d) + 1, 0, 3). */
void
q2_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockQ2_0 *y = vy; n >= 64; n -= 64, x += 64, y++)
    {
      const float d = hzq_absmax (x, 64);
      const float id = d > 0.0f ? 1.0f / d : 0.0f;
      y->d = hzq_fp32_to_fp16 (d);
      memset (y->qs, 0, 16);
      for (int j = 0; j < 64; j++)
        {
          int q = (int) roundf (x[j] * id) + 1;
          q = q < 0 ? 0 : q > 3 ? 3 : q;
          y->qs[j / 4] |= (uint8_t) (q << (2 * (j % 4)));
        }
    }
}
