/* engine/cpu/ops.c — float32 kernels of the CPU backend (see ops.h for the formulas). */
#include "cpu/ops.h"

#include <math.h>
#include <string.h>
#include "ggml-order.h"
#include "quant.h"

/* 8-lane float vector via GCC/Clang vector extensions: compiles to whatever SIMD the target
 * has (two SSE registers on baseline x86-64), no intrinsics or run-time dispatch needed. */
typedef float hz_v8f __attribute__ ((vector_size (32)));

/* Unaligned load of 8 floats (a macro: returning vectors by value is an ABI hazard). */
#define LOAD8(v, p) memcpy (&(v), (p), sizeof (hz_v8f))

float
hz_cpu_dot_f32 (const float *a, const float *b, int64_t n)
{
  hz_v8f acc0 = { 0 }, acc1 = { 0 };
  int64_t i = 0;
  hz_v8f va, vb, vc, vd;
  for (; i + 16 <= n; i += 16)
    {
      LOAD8 (va, a + i);
      LOAD8 (vb, b + i);
      LOAD8 (vc, a + i + 8);
      LOAD8 (vd, b + i + 8);
      acc0 += va * vb;
      acc1 += vc * vd;
    }
  for (; i + 8 <= n; i += 8)
    {
      LOAD8 (va, a + i);
      LOAD8 (vb, b + i);
      acc0 += va * vb;
    }
  acc0 += acc1;
  float s = ((acc0[0] + acc0[4]) + (acc0[1] + acc0[5])) + ((acc0[2] + acc0[6]) + (acc0[3] + acc0[7]));
  for (; i < n; i++)
    s += a[i] * b[i];
  return s;
}

void
hz_cpu_axpy_f32 (float *restrict y, float a, const float *restrict x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] += a * x[i];
}

void
hz_cpu_add_f32 (float *restrict y, const float *restrict x, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    y[i] += x[i];
}

static inline float
rms_scale (const float *x, int64_t n, float eps)
{
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++)
    sum += (double) (x[i] * x[i]);
  const float mean = (float) (sum / n);
  return 1.0f / sqrtf (mean + eps);
}

void
hz_cpu_rms_norm (float *x, const float *w, int64_t n, float eps)
{
  hz_cpu_rms_norm_to (x, x, w, n, eps);
}

void
hz_cpu_rms_norm_to (float *y, const float *x, const float *w, int64_t n, float eps)
{
  const float scale = rms_scale (x, n, eps);
  if (w)
    for (int64_t i = 0; i < n; i++)
      y[i] = (x[i] * scale) * w[i];
  else
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] * scale;
}

/* ggml_v_expf of the AVX-512 build (ggml-cpu.c, "adapted from arm limited optimized
 * routine"), one lane: n = round(x / ln2) by the 1.5*2^23 shift, b = x - n ln2 in two FMA
 * steps, a degree-5 polynomial in b evaluated with FMAs, then _mm512_scalef_ps(j, n); |n| >
 * 192 gives 0 or inf. Bit-exact with the vector code. */
static inline float
ggml_v_expf1 (float x)
{
  const float r = 0x1.8p23f;
  const float z = fmaf (x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = fmaf (-n, 0x1.7f7d1cp-20f, fmaf (-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j = fmaf (fmaf (fmaf (0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                              fmaf (0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                        u, fmaf (0x1.ffffecp-1f, b, 1.0f));
  if (fabsf (n) > 192.0f)
    return n <= 0.0f ? 0.0f : INFINITY;
  if (n >= -125.0f && n <= 127.0f)
    {
      /* j * 2^n is exact here: j is about 1, so the product is a normal number */
      union { float f; int32_t i; } p2 = { .i = ((int32_t) n + 127) << 23 };
      return j * p2.f;
    }
  return ldexpf (j, (int) n);     /* subnormal results, rounded once as scalef does */
}

void
hz_cpu_softmax_ggml (float *x, int64_t n_valid, int64_t n_pad, float scale)
{
  hz_cpu_softmax_ggml_sink (x, n_valid, n_pad, scale, -INFINITY);
}

HZ_CPU_CLONES void
hz_cpu_softmax_ggml_sink (float *x, int64_t n_valid, int64_t n_pad, float scale, float sink)
{
  /* ggml_vec_scale_f32, then the mask (0 or -inf: x + 1*0 is exact), ggml_vec_max_f32 */
  float max = -INFINITY;
  for (int64_t i = 0; i < n_valid; i++)
    {
      x[i] *= scale;
      max = x[i] > max ? x[i] : max;
    }
  for (int64_t i = n_valid; i < n_pad; i++)
    x[i] = -INFINITY;
  const gboolean has_sink = sink > -INFINITY;
  if (has_sink)   /* "make a correction as if they were included in the softmax" */
    max = MAX (max, sink);
  /* ggml_vec_soft_max_f32, AVX-512: 16 lanes of ggml_v_expf, _mm512_reduce_add_ps of each
   * 16 added to a double; the rest with libm expf */
  double sum = 0.0;
  int64_t i = 0;
  for (; i + 16 <= n_pad; i += 16)
    {
      float v[16];
      for (int l = 0; l < 16; l++)
        x[i + l] = v[l] = ggml_v_expf1 (x[i + l] - max);
      sum += (double) hz_ggml_reduce16 (v);
    }
  for (; i < n_pad; i++)
    {
      x[i] = expf (x[i] - max);
      sum += (double) x[i];
    }
  if (has_sink)
    sum += (double) expf (sink - max);
  sum = 1.0 / sum;
  const float inv = (float) sum;     /* ggml_vec_scale_f32 takes a float */
  for (int64_t j = 0; j < n_pad; j++)
    x[j] *= inv;
}

void
hz_cpu_swiglu_oai (float *restrict gate, const float *restrict up, int64_t n, float alpha,
                   float limit)
{
  for (int64_t k = 0; k < n; k++)
    {
      /* std::min and std::clamp as written (a NaN passes through) */
      const float x = limit < gate[k] ? limit : gate[k];
      const float y = up[k] < -limit ? -limit : limit < up[k] ? limit : up[k];
      const float glu = x / (1.0f + expf (alpha * (-x)));
      gate[k] = glu * (y + 1.0f);
    }
}

HZ_CPU_CLONES void
hz_cpu_swiglu (float *restrict gate, const float *restrict up, int64_t n)
{
  /* ggml_vec_silu_f32 of the AVX-512 build: ggml_v_silu = x / (1 + ggml_v_expf(0 - x)) per
   * 16 lanes, ggml_silu_f32 with libm expf for the tail; then ggml_vec_mul_f32 */
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int l = 0; l < 16; l++)
      {
        const float g = gate[i + l];
        gate[i + l] = (g / (1.0f + ggml_v_expf1 (0.0f - g))) * up[i + l];
      }
  for (; i < n; i++)
    gate[i] = (gate[i] / (1.0f + expf (-gate[i]))) * up[i];
}

/* ggml's GELU table: for every fp16 value, its tanh GELU computed in float and rounded to
 * fp16 (ggml_cpu_init fills ggml_table_gelu_f16 the same way). Built once. */
static uint16_t gelu_table[1 << 16];

static gpointer
gelu_table_init (gpointer unused)
{
  (void) unused;
  const float sqrt_2_over_pi = 0.79788456080286535587989211986876f, coef_a = 0.044715f;
  for (guint i = 0; i < G_N_ELEMENTS (gelu_table); i++)
    {
      const float x = hz_fp16_to_fp32 ((uint16_t) i);
      gelu_table[i] = hz_fp32_to_fp16 (0.5f * x * (1.0f + tanhf (sqrt_2_over_pi * x * (1.0f + coef_a * x * x))));
    }
  return NULL;
}

const uint16_t *
hz_cpu_gelu_table (void)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, gelu_table_init, NULL);
  return gelu_table;
}

void
hz_cpu_geglu (float *restrict gate, const float *restrict up, int64_t n)
{
  (void) hz_cpu_gelu_table ();
  for (int64_t i = 0; i < n; i++)
    {
      const float x = gate[i];
      if (x <= -10.0f)
        gate[i] = 0.0f;
      else if (x >= 10.0f)
        gate[i] = x * up[i];
      else
        gate[i] = hz_fp16_to_fp32 (gelu_table[hz_fp32_to_fp16 (x)]) * up[i];
    }
}

void
hz_cpu_softcap (float *x, int64_t n, float c)
{
  const float inv = 1.0f / c;
  for (int64_t i = 0; i < n; i++)
    x[i] = tanhf (x[i] * inv) * c;
}

void
hz_cpu_scale (float *x, int64_t n, float s)
{
  for (int64_t i = 0; i < n; i++)
    x[i] *= s;
}

/* ---- RoPE (YaRN-capable), after ggml's rope_yarn / ggml_rope_yarn_corr_dims ---- */

/* The dimension index at which a frequency completes n_rot_turns rotations over the
 * original context: n_dims * log(n_ctx_orig / (turns * 2 pi)) / (2 log base). */
static float
yarn_corr_dim (int n_dims, int n_ctx_orig, float turns, float base)
{
  return n_dims * logf (n_ctx_orig / (turns * 2.0f * (float) G_PI)) / (2.0f * logf (base));
}

static void
rope_init (HzRope *r, const HzHparams *hp, const float *freq_factors, float base, float scale)
{
  memset (r, 0, sizeof *r);
  r->n_rot = hp->n_rot;
  r->mode = hp->rope_mode;
  r->theta_scale = powf (base, -2.0f / hp->n_rot);
  r->freq_scale = scale;
  r->ext_factor = hp->yarn_ext_factor;
  r->attn_factor = hp->yarn_attn_factor;
  r->freq_factors = freq_factors;
  float start = floorf (yarn_corr_dim (hp->n_rot, hp->rope_n_ctx_orig, hp->yarn_beta_fast, base));
  float end = ceilf (yarn_corr_dim (hp->n_rot, hp->rope_n_ctx_orig, hp->yarn_beta_slow, base));
  r->corr_dims[0] = MAX (0.0f, start);
  r->corr_dims[1] = MIN ((float) (hp->n_rot - 1), end);
}

void
hz_cpu_rope_init (HzRope *r, const HzHparams *hp, const float *freq_factors)
{
  rope_init (r, hp, freq_factors, hp->rope_freq_base, hp->rope_freq_scale);
}

void
hz_cpu_rope_init_swa (HzRope *r, const HzHparams *hp, const float *freq_factors)
{
  rope_init (r, hp, freq_factors, hp->rope_freq_base_swa, hp->rope_freq_scale_swa);
}

static inline float
yarn_ramp (float low, float high, int i0)
{
  const float y = (i0 / 2 - low) / MAX (0.001f, high - low);
  return 1.0f - MIN (1.0f, MAX (0.0f, y));
}

void
hz_cpu_rope_cache (const HzRope *r, int64_t pos, float *cs)
{
  float theta = (float) pos;
  for (int i0 = 0; i0 < r->n_rot; i0 += 2)
    {
      const float ff = r->freq_factors ? r->freq_factors[i0 / 2] : 1.0f;
      const float theta_extrap = theta / ff;
      const float theta_interp = r->freq_scale * theta_extrap;
      float th = theta_interp, mscale = r->attn_factor;
      if (r->ext_factor != 0.0f)
        {
          const float mix = yarn_ramp (r->corr_dims[0], r->corr_dims[1], i0) * r->ext_factor;
          th = theta_interp * (1 - mix) + theta_extrap * mix;
          mscale *= 1.0f + 0.1f * logf (1.0f / r->freq_scale);
        }
      cs[i0] = cosf (th) * mscale;
      cs[i0 + 1] = sinf (th) * mscale;
      theta *= r->theta_scale;
    }
}

void
hz_cpu_rope_apply (const HzRope *r, const float *cs, float *x, int32_t n_heads, int32_t head_dim)
{
  const int half = r->n_rot / 2;
  for (int32_t h = 0; h < n_heads; h++)
    {
      float *v = x + (int64_t) h * head_dim;
      if (r->mode == HZ_ROPE_NORM)
        for (int i0 = 0; i0 < r->n_rot; i0 += 2)
          {
            const float c = cs[i0], s = cs[i0 + 1];
            const float x0 = v[i0], x1 = v[i0 + 1];
            /* ggml's "x0*cos_theta - x1*sin_theta" and "x0*sin_theta + x1*cos_theta" as the
             * reference build compiled them: the first product fused (contracted) */
            v[i0] = fmaf (x0, c, -(x1 * s));
            v[i0 + 1] = fmaf (x0, s, x1 * c);
          }
      else
        for (int i = 0; i < half; i++)
          {
            const float c = cs[2 * i], s = cs[2 * i + 1];
            const float x0 = v[i], x1 = v[i + half];
            v[i] = x0 * c - x1 * s;
            v[i + half] = x0 * s + x1 * c;
          }
    }
}
