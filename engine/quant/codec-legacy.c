/* engine/quant/codec-legacy.c — the 32-element block formats dotted against Q8_0 / Q8_1:
 * Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL, MXFP4 (weights) and Q8_1 (activations).
 *
 * Every weight format here is "32 small integers q[j] and a scale d (and for the affine
 * ones a min m)": y = q·d (+ m). Each format therefore only supplies
 *   scale_<f>(block)      -> {d, m}
 *   unpack_<f>(block, q)  -> the 32 integers, element order
 *   load_<f>_avx2(block)  -> the same 32 integers as signed bytes in one __m256i
 * and HZQ_LEGACY() instantiates to_float / vec_dot / vec_dot_avx2 from the shared loops.
 * Encoders are per format.
 *
 * Bit-exact with ggml-quants.c (dequantize_row_*, quantize_row_*_ref; llama.cpp c392e509,
 * MXFP4 from ggml d99724f2): float operations in ggml's order, each rounded separately.
 * Dots follow ggml-cpu/quants.c ggml_vec_dot_*_generic: exact integer sum per block, then
 * sumf += (dx·dy)·sumi (+ m·s for the affine formats, s being Q8_1's fp16 d·Σq).
 */
#include "quant-simd.h"

#include <float.h>

typedef struct { float d, m; } HzqScale;

static inline uint16_t rd16 (const uint8_t *p) { uint16_t v; memcpy (&v, p, 2); return v; }
static inline uint32_t rd32 (const uint8_t *p) { uint32_t v; memcpy (&v, p, 4); return v; }

/* ---- per-format parts ------------------------------------------------------------------ */

/* 16 bytes of nibbles: low nibble = element j, high nibble = element j+16, mapped by f */
#define HZQ_NIBBLES(qs, q, EXPR_LO, EXPR_HI)                                               \
  for (int j = 0; j < 16; j++)                                                            \
    {                                                                                     \
      const int lo = (qs)[j] & 0x0f, hi = (qs)[j] >> 4;                                   \
      (q)[j] = (int8_t) (EXPR_LO);                                                        \
      (q)[j + 16] = (int8_t) (EXPR_HI);                                                   \
    }

static inline HzqScale scale_q4_0 (const uint8_t *b) { return (HzqScale) { hzq_fp16_to_fp32 (rd16 (b)), 0 }; }
static inline void unpack_q4_0 (const uint8_t *b, int8_t q[32]) { HZQ_NIBBLES (b + 2, q, lo - 8, hi - 8); }

static inline HzqScale scale_q4_1 (const uint8_t *b)
{ return (HzqScale) { hzq_fp16_to_fp32 (rd16 (b)), hzq_fp16_to_fp32 (rd16 (b + 2)) }; }
static inline void unpack_q4_1 (const uint8_t *b, int8_t q[32]) { HZQ_NIBBLES (b + 4, q, lo, hi); }

/* Q5: the 5th bit of element j is bit j of the little-endian u32 qh */
#define HZQ_H5(qh, j) ((int) (((qh) >> (j)) & 1u) << 4)
static inline HzqScale scale_q5_0 (const uint8_t *b) { return scale_q4_0 (b); }
static inline void unpack_q5_0 (const uint8_t *b, int8_t q[32])
{
  const uint32_t qh = rd32 (b + 2);
  HZQ_NIBBLES (b + 6, q, (lo | HZQ_H5 (qh, j)) - 16, (hi | HZQ_H5 (qh, j + 16)) - 16);
}

static inline HzqScale scale_q5_1 (const uint8_t *b) { return scale_q4_1 (b); }
static inline void unpack_q5_1 (const uint8_t *b, int8_t q[32])
{
  const uint32_t qh = rd32 (b + 4);
  HZQ_NIBBLES (b + 8, q, lo | HZQ_H5 (qh, j), hi | HZQ_H5 (qh, j + 16));
}

static inline HzqScale scale_q8_0 (const uint8_t *b) { return scale_q4_0 (b); }
static inline void unpack_q8_0 (const uint8_t *b, int8_t q[32]) { memcpy (q, b + 2, 32); }

static inline HzqScale scale_iq4_nl (const uint8_t *b) { return scale_q4_0 (b); }
static inline void unpack_iq4_nl (const uint8_t *b, int8_t q[32])
{ HZQ_NIBBLES (b + 2, q, hzq_kvalues_iq4nl[lo], hzq_kvalues_iq4nl[hi]); }

static inline HzqScale scale_mxfp4 (const uint8_t *b) { return (HzqScale) { hzq_e8m0_half (b[0]), 0 }; }
static inline void unpack_mxfp4 (const uint8_t *b, int8_t q[32])
{ HZQ_NIBBLES (b + 1, q, hzq_kvalues_fp4[lo], hzq_kvalues_fp4[hi]); }

/* ---- shared loops ---------------------------------------------------------------------- */
typedef HzqScale (*HzqScaleFn) (const uint8_t *);
typedef void (*HzqUnpackFn) (const uint8_t *, int8_t q[32]);

/** Blocks -> floats: y = q·d, or q·d + m for affine formats. */
static inline void
legacy_to_float (const uint8_t *x, size_t bsize, float *y, int64_t n, bool affine,
                 HzqScaleFn scale, HzqUnpackFn unpack)
{
  int8_t q[32];
  for (int64_t i = 0; i < n / 32; i++, x += bsize, y += 32)
    {
      const HzqScale s = scale (x);
      unpack (x, q);
      for (int j = 0; j < 32; j++)
        y[j] = affine ? (float) q[j] * s.d + s.m : (float) q[j] * s.d;
    }
}

/* Activation block layouts: Q8_0 = {d, qs[32]} (34 bytes); Q8_1 = {d, s, qs[32]} (36). */
#define HZQ_ACT_BYTES(affine) ((affine) ? 36u : 34u)
#define HZQ_ACT_QS(affine)    ((affine) ? 4u : 2u)

/** Scalar dot against Q8_0 (symmetric formats) or Q8_1 (affine formats). */
__attribute__ ((always_inline)) static inline float
legacy_vec_dot (int n, const uint8_t *x, size_t bsize, const uint8_t *y, bool affine,
                HzqScaleFn scale, HzqUnpackFn unpack)
{
  int8_t q[32];
  float sumf = 0.0f;
  for (int i = 0; i < n / 32; i++, x += bsize, y += HZQ_ACT_BYTES (affine))
    {
      const HzqScale s = scale (x);
      const int8_t *a = (const int8_t *) (y + HZQ_ACT_QS (affine));
      unpack (x, q);
      int sumi = 0;
      for (int j = 0; j < 32; j++)
        sumi += q[j] * a[j];
      const float dd = s.d * hzq_fp16_to_fp32 (rd16 (y));
      sumf += affine ? dd * (float) sumi + s.m * hzq_fp16_to_fp32 (rd16 (y + 2))
                     : dd * (float) sumi;
    }
  return sumf;
}

#if HZ_QUANT_X86
typedef __m256i (*HzqLoadAvx2Fn) (const uint8_t *);
typedef __m256 (*HzqDotPsFn) (__m256i, __m256i);

/** AVX2 dot: per block the 32 weight bytes (signed) against the activation bytes -> 8
 *  int32 lanes -> floats, times dx·dy into an FMA accumulator; the affine m·s terms are
 *  summed separately in float. `dot` is the int8 dot primitive (AVX2 or VNNI). */
HZ_TARGET_AVX2 __attribute__ ((always_inline)) static inline float
legacy_vec_dot_avx2 (int n, const uint8_t *x, size_t bsize, const uint8_t *y, bool affine,
                     HzqScaleFn scale, HzqLoadAvx2Fn load, HzqDotPsFn dot)
{
  __m256 acc = _mm256_setzero_ps ();
  float summs = 0.0f;
  for (int i = 0; i < n / 32; i++, x += bsize, y += HZQ_ACT_BYTES (affine))
    {
      const HzqScale s = scale (x);
      const __m256i qy = _mm256_loadu_si256 ((const __m256i *) (y + HZQ_ACT_QS (affine)));
      const __m256 dd = _mm256_set1_ps (s.d * hzq_f16_avx2 (rd16 (y)));
      acc = _mm256_fmadd_ps (dd, dot (load (x), qy), acc);
      if (affine)
        summs += s.m * hzq_f16_avx2 (rd16 (y + 2));
    }
  return hzq_hsum8 (acc) + summs;
}

/** Byte k of the result is 0xFF when bit k of `bits` is set, else 0. */
HZ_TARGET_AVX2 static inline __m256i
hzq_bits_to_bytes (uint32_t bits)
{
  const __m256i spread = _mm256_set_epi64x (0x0303030303030303ll, 0x0202020202020202ll,
                                            0x0101010101010101ll, 0);
  __m256i v = _mm256_shuffle_epi8 (_mm256_set1_epi32 ((int) bits), spread);
  /* each byte ORed with "all bits but bit (k % 8)": all ones iff that bit was set */
  v = _mm256_or_si256 (v, _mm256_set1_epi64x (0x7fbfdfeff7fbfdfell));
  return _mm256_cmpeq_epi8 (v, _mm256_set1_epi64x (-1));
}

HZ_TARGET_AVX2 static inline __m256i load_q4_0_avx2 (const uint8_t *b)
{ return _mm256_sub_epi8 (hzq_nibbles32 (b + 2), _mm256_set1_epi8 (8)); }
HZ_TARGET_AVX2 static inline __m256i load_q4_1_avx2 (const uint8_t *b)
{ return hzq_nibbles32 (b + 4); }
HZ_TARGET_AVX2 static inline __m256i load_q5_0_avx2 (const uint8_t *b)
{
  __m256i h = _mm256_and_si256 (hzq_bits_to_bytes (rd32 (b + 2)), _mm256_set1_epi8 (0x10));
  return _mm256_sub_epi8 (_mm256_or_si256 (hzq_nibbles32 (b + 6), h), _mm256_set1_epi8 (16));
}
HZ_TARGET_AVX2 static inline __m256i load_q5_1_avx2 (const uint8_t *b)
{
  __m256i h = _mm256_and_si256 (hzq_bits_to_bytes (rd32 (b + 4)), _mm256_set1_epi8 (0x10));
  return _mm256_or_si256 (hzq_nibbles32 (b + 8), h);
}
HZ_TARGET_AVX2 static inline __m256i load_q8_0_avx2 (const uint8_t *b)
{ return _mm256_loadu_si256 ((const __m256i *) (b + 2)); }
HZ_TARGET_AVX2 static inline __m256i load_iq4_nl_avx2 (const uint8_t *b)
{ return hzq_table16 (hzq_kvalues_iq4nl, hzq_nibbles32 (b + 2)); }
HZ_TARGET_AVX2 static inline __m256i load_mxfp4_avx2 (const uint8_t *b)
{ return hzq_table16 (hzq_kvalues_fp4, hzq_nibbles32 (b + 1)); }

/* The AVX2 kernel and, from the same loop with the VNNI primitive, the AVX-512 one. */
#define HZQ_LEGACY_AVX2(f, BYTES, AFFINE)                                                    \
  HZ_TARGET_AVX2 void                                                                     \
  f##_vec_dot_avx2 (int n, float *restrict s, const void *restrict x, const void *restrict y) \
  { *s = legacy_vec_dot_avx2 (n, x, BYTES, y, AFFINE, scale_##f, load_##f##_avx2,          \
                              hzq_dot_s8s8_ps); }                                         \
  HZ_TARGET_AVX512 void                                                                   \
  f##_vec_dot_avx512 (int n, float *restrict s, const void *restrict x, const void *restrict y) \
  { *s = legacy_vec_dot_avx2 (n, x, BYTES, y, AFFINE, scale_##f, load_##f##_avx2,          \
                              hzq_dot_s8s8_ps_vnni); }
#else
#define HZQ_LEGACY_AVX2(f, BYTES, AFFINE)
#endif

/** Instantiates <f>_to_float, <f>_vec_dot and <f>_vec_dot_avx2 for a 32-element format of
 *  BYTES bytes per block; AFFINE formats (with a min) dot against Q8_1, others Q8_0. */
#define HZQ_LEGACY(f, BYTES, AFFINE)                                                         \
  void                                                                                    \
  f##_to_float (const void *restrict x, float *restrict y, int64_t n)                     \
  { legacy_to_float (x, BYTES, y, n, AFFINE, scale_##f, unpack_##f); }                   \
  void                                                                                    \
  f##_vec_dot (int n, float *restrict s, const void *restrict x, const void *restrict y)  \
  { *s = legacy_vec_dot (n, x, BYTES, y, AFFINE, scale_##f, unpack_##f); }                \
  HZQ_LEGACY_AVX2 (f, BYTES, AFFINE)

/* Decoders (dequantize_row_<f>), scalar dots (ggml_vec_dot_<f>_q8_{0,1}_generic) and AVX2
 * dots of the seven weight formats. */
HZQ_LEGACY (q4_0, 18, false)
HZQ_LEGACY (q4_1, 20, true)
HZQ_LEGACY (q5_0, 22, false)
HZQ_LEGACY (q5_1, 24, true)
HZQ_LEGACY (q8_0, 34, false)
HZQ_LEGACY (iq4_nl, 18, false)
HZQ_LEGACY (mxfp4, 17, false)

/* ---- encoders (quantize_row_<f>_ref) ------------------------------------------------ */

/** The element of largest magnitude (the first one on ties), signed; 0 for a zero block. */
static inline float
signed_absmax (const float *x, int n)
{
  float amax = 0.0f, max = 0.0f;
  for (int j = 0; j < n; j++)
    if (amax < fabsf (x[j]))
      {
        amax = fabsf (x[j]);
        max = x[j];
      }
  return max;
}

static inline void
minmax (const float *x, int n, float *mn, float *mx)
{
  *mn = FLT_MAX;
  *mx = -FLT_MAX;
  for (int j = 0; j < n; j++)
    {
      if (x[j] < *mn) *mn = x[j];
      if (x[j] > *mx) *mx = x[j];
    }
}

/** Symmetric 4/5-bit: d = max/−2^(bits−1), q = min(2^bits−1, (int)(x/d + 2^(bits−1) + 0.5)).
 *  Writes d and the 32 codes; shared by Q4_0 and Q5_0. */
static inline void
quant_sym (const float *x, int bits, uint16_t *dh, uint8_t q[32])
{
  const int half = 1 << (bits - 1), top = (1 << bits) - 1;
  const float d = signed_absmax (x, 32) / (float) -half;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *dh = hzq_fp32_to_fp16 (d);
  for (int j = 0; j < 32; j++)
    {
      /* x·id is in [−half, half], so the truncation is in range */
      const int v = (int) (x[j] * id + ((float) half + 0.5f));
      q[j] = (uint8_t) (v < top ? v : top);
    }
}

/** Affine 4/5-bit: d = (max − min)/(2^bits − 1), m = min, q = (int)((x − min)/d + 0.5),
 *  clamped to 2^bits − 1. Shared by Q4_1 and Q5_1. */
static inline void
quant_affine (const float *x, int bits, uint16_t *dh, uint16_t *mh, uint8_t q[32])
{
  float mn, mx;
  minmax (x, 32, &mn, &mx);
  const float d = (mx - mn) / (float) ((1 << bits) - 1);
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  *dh = hzq_fp32_to_fp16 (d);
  *mh = hzq_fp32_to_fp16 (mn);
  for (int j = 0; j < 32; j++)
    {
      const int v = (int) ((x[j] - mn) * id + 0.5f);
      q[j] = (uint8_t) (v < (1 << bits) - 1 ? v : (1 << bits) - 1);
    }
}

/* pack 32 codes: low 4 bits as nibbles (j | j+16 << 4), bit 4 into the u32 qh */
static inline void
pack_nibbles (const uint8_t q[32], uint8_t qs[16])
{
  for (int j = 0; j < 16; j++)
    qs[j] = (uint8_t) ((q[j] & 0x0f) | (q[j + 16] & 0x0f) << 4);
}

static inline void
pack_qh (const uint8_t q[32], uint8_t qh[4])
{
  uint32_t h = 0;
  for (int j = 0; j < 32; j++)
    h |= (uint32_t) (q[j] >> 4 & 1u) << j;
  memcpy (qh, &h, 4);
}

/** floats -> Q4_0 (quantize_row_q4_0_ref). */
void
q4_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t q[32];
  for (HzBlockQ4_0 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_sym (x, 4, &y->d, q);
      pack_nibbles (q, y->qs);
    }
}

/** floats -> Q4_1 (quantize_row_q4_1_ref). */
void
q4_1_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t q[32];
  for (HzBlockQ4_1 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_affine (x, 4, &y->d, &y->m, q);
      pack_nibbles (q, y->qs);
    }
}

/** floats -> Q5_0 (quantize_row_q5_0_ref). */
void
q5_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t q[32];
  for (HzBlockQ5_0 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_sym (x, 5, &y->d, q);
      pack_nibbles (q, y->qs);
      pack_qh (q, y->qh);
    }
}

/** floats -> Q5_1 (quantize_row_q5_1_ref). */
void
q5_1_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  uint8_t q[32];
  for (HzBlockQ5_1 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_affine (x, 5, &y->d, &y->m, q);
      pack_nibbles (q, y->qs);
      pack_qh (q, y->qh);
    }
}

/** 8-bit symmetric: d = absmax/127, q = roundf(x·(1/d)); returns Σq. Shared by Q8_0/Q8_1. */
static inline int
quant_q8 (const float *x, float *d_out, int8_t q[32])
{
  const float d = hzq_absmax (x, 32) / 127;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  int sum = 0;
  for (int j = 0; j < 32; j++)
    sum += q[j] = (int8_t) roundf (x[j] * id);
  *d_out = d;
  return sum;
}

/** floats -> Q8_0 (quantize_row_q8_0_ref). */
void
q8_0_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  float d;
  for (HzBlockQ8_0 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_q8 (x, &d, y->qs);
      y->d = hzq_fp32_to_fp16 (d);
    }
}

/** floats -> Q8_1 (quantize_row_q8_1_ref): as Q8_0 plus s = fp16(Σq · d). */
void
q8_1_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  float d;
  for (HzBlockQ8_1 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      const int sum = quant_q8 (x, &d, y->qs);
      y->d = hzq_fp32_to_fp16 (d);
      y->s = hzq_fp32_to_fp16 ((float) sum * d);
    }
}

/** 8-bit symmetric as ggml-cpu's x86 quantize_row_q8_{0,1}: d = absmax/127 stored, but
 *  the multiplier is 127/absmax and rounding is to nearest even; returns Σq. */
static inline int
quant_q8_act (const float *x, float *d_out, int8_t q[32])
{
  const float amax = hzq_absmax (x, 32);
  const float id = amax != 0.0f ? 127.f / amax : 0.0f;
  int sum = 0;
  for (int j = 0; j < 32; j++)
    sum += q[j] = (int8_t) rintf (x[j] * id);   /* default rounding mode: half to even */
  *d_out = amax / 127.f;
  return sum;
}

/** floats -> Q8_0 activations as ggml's CPU mul_mat quantizes them (x86 SIMD path). */
void
q8_0_from_float_act (const float *restrict x, void *restrict vy, int64_t n)
{
  float d;
  for (HzBlockQ8_0 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      quant_q8_act (x, &d, y->qs);
      y->d = hzq_fp32_to_fp16 (d);
    }
}

/** floats -> Q8_1 activations as ggml's CPU mul_mat quantizes them (x86 SIMD path). */
void
q8_1_from_float_act (const float *restrict x, void *restrict vy, int64_t n)
{
  float d;
  for (HzBlockQ8_1 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      const int sum = quant_q8_act (x, &d, y->qs);
      y->d = hzq_fp32_to_fp16 (d);
      y->s = hzq_fp32_to_fp16 (d * (float) sum);
    }
}

/** Q8_1 -> floats: y = fp16(d)·q (ggml has no Q8_1 dequantizer; the golden data uses this
 *  formula). */
void
q8_1_to_float (const void *restrict vx, float *restrict y, int64_t n)
{
  for (const HzBlockQ8_1 *x = vx; n >= 32; n -= 32, x++, y += 32)
    {
      const float d = hzq_fp16_to_fp32 (x->d);
      for (int j = 0; j < 32; j++)
        y[j] = d * (float) x->qs[j];
    }
}

/** floats -> IQ4_NL (quantize_row_iq4_nl_ref: ntry = −1; see codec-iq4.c). */
void
iq4_nl_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockIQ4_NL *y = vy; n >= 32; n -= 32, x += 32, y++)
    hzq_iq4_quantize (x, 32, -1, hzq_kvalues_iq4nl, &y->d, y->qs, NULL, NULL);
}

/** floats -> IQ4_NL as ggml_quantize_chunk / llama-quantize write it (quantize_iq4_nl
 *  without imatrix: ntry = 7). */
void
iq4_nl_from_float_chunk (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockIQ4_NL *y = vy; n >= 32; n -= 32, x += 32, y++)
    hzq_iq4_quantize (x, 32, 7, hzq_kvalues_iq4nl, &y->d, y->qs, NULL, NULL);
}

/** Index of the FP4 value nearest to x at scale d (ties to the lower index, like ggml's
 *  best_index_mxfp4; the "−0" code 8 is never chosen). Shared with NVFP4. */
int
hzq_fp4_best_index (float x, float d)
{
  int best = 0;
  float err = fabsf ((float) hzq_kvalues_fp4[0] * d - x);
  for (int i = 1; i < 16; i++)
    {
      const float e = fabsf ((float) hzq_kvalues_fp4[i] * d - x);
      if (e < err)
        {
          best = i;
          err = e;
        }
    }
  return best;
}

/** floats -> MXFP4 (quantize_row_mxfp4_ref): e = floor(log2f(absmax)) − 2 + 127 (libm
 *  log2f on purpose: ggml's rounding of log2f decides the exponent at 2^k boundaries). */
void
mxfp4_from_float (const float *restrict x, void *restrict vy, int64_t n)
{
  for (HzBlockMXFP4 *y = vy; n >= 32; n -= 32, x += 32, y++)
    {
      const float amax = hzq_absmax (x, 32);
      const float ef = amax > 0.0f ? floorf (log2f (amax)) - 2 + 127 : 0.0f;
      /* ggml casts a negative value (amax < 2^-125) to uint8_t (undefined); clamp */
      y->e = (uint8_t) (ef < 0.0f ? 0.0f : ef > 255.0f ? 255.0f : ef);
      const float d = hzq_e8m0_half (y->e);
      for (int j = 0; j < 16; j++)
        y->qs[j] = (uint8_t) (hzq_fp4_best_index (x[j], d) | hzq_fp4_best_index (x[j + 16], d) << 4);
    }
}
