/* engine/cpu/ops.c — float32 kernels of the CPU backend (see ops.h for the formulas). */
#include "cpu/ops.h"

#include <math.h>
#include <string.h>

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

/* exp(x) for float32, branch-free so that loops calling it vectorise: x = n ln2 + r with
 * n = round(x / ln2) (Cody-Waite split of ln2), exp(r) by its degree-6 Taylor/minimax
 * polynomial on |r| <= ln2/2 (relative error < 2e-7), times 2^n built in the exponent
 * bits. Inputs below -87.3 give 0 (as expf underflows), above 88 are clamped. */
static inline float
fast_expf (float x)
{
  x = x < -87.3f ? -87.3f : (x > 88.0f ? 88.0f : x);
  const float shift = 12582912.0f;               /* 1.5 * 2^23: rounds to an integer */
  const float n = (x * 1.44269504088896341f + shift) - shift;
  const float r = (x - n * 0.693145751953125f) - n * 1.42860682030941723e-6f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  union { float f; int32_t i; } scale = { .i = ((int32_t) n + 127) << 23 };
  return x <= -87.3f ? 0.0f : p * scale.f;
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

HZ_CPU_CLONES void
hz_cpu_softmax (float *x, int64_t n_valid, float scale)
{
  /* eight lanes for the max and the sum: vectorisable, as accurate as a serial float sum */
  float lmax[8] = { -INFINITY, -INFINITY, -INFINITY, -INFINITY,
                    -INFINITY, -INFINITY, -INFINITY, -INFINITY };
  int64_t i = 0;
  for (; i + 8 <= n_valid; i += 8)
    for (int l = 0; l < 8; l++)
      {
        x[i + l] *= scale;
        lmax[l] = x[i + l] > lmax[l] ? x[i + l] : lmax[l];
      }
  for (; i < n_valid; i++)
    {
      x[i] *= scale;
      lmax[0] = x[i] > lmax[0] ? x[i] : lmax[0];
    }
  float max = lmax[0];
  for (int l = 1; l < 8; l++)
    max = lmax[l] > max ? lmax[l] : max;

  float part[8] = { 0 };
  for (i = 0; i + 8 <= n_valid; i += 8)
    for (int l = 0; l < 8; l++)
      {
        x[i + l] = fast_expf (x[i + l] - max);
        part[l] += x[i + l];
      }
  for (; i < n_valid; i++)
    {
      x[i] = fast_expf (x[i] - max);
      part[0] += x[i];
    }
  const double sum = ((double) part[0] + part[4]) + ((double) part[1] + part[5]) +
                     ((double) part[2] + part[6]) + ((double) part[3] + part[7]);
  const float inv = (float) (1.0 / sum);
  for (int64_t j = 0; j < n_valid; j++)
    x[j] *= inv;
}

HZ_CPU_CLONES void
hz_cpu_swiglu (float *restrict gate, const float *restrict up, int64_t n)
{
  for (int64_t i = 0; i < n; i++)
    {
      const float g = gate[i];
      gate[i] = (g / (1.0f + fast_expf (-g))) * up[i];
    }
}

/* ---- RoPE (YaRN-capable), after ggml's rope_yarn / ggml_rope_yarn_corr_dims ---- */

/* The dimension index at which a frequency completes n_rot_turns rotations over the
 * original context: n_dims * log(n_ctx_orig / (turns * 2 pi)) / (2 log base). */
static float
yarn_corr_dim (int n_dims, int n_ctx_orig, float turns, float base)
{
  return n_dims * logf (n_ctx_orig / (turns * 2.0f * (float) G_PI)) / (2.0f * logf (base));
}

void
hz_cpu_rope_init (HzRope *r, const HzHparams *hp, const float *freq_factors)
{
  memset (r, 0, sizeof *r);
  r->n_rot = hp->n_rot;
  r->mode = hp->rope_mode;
  r->theta_scale = powf (hp->rope_freq_base, -2.0f / hp->n_rot);
  r->freq_scale = hp->rope_freq_scale;
  r->ext_factor = hp->yarn_ext_factor;
  r->attn_factor = hp->yarn_attn_factor;
  r->freq_factors = freq_factors;
  float start = floorf (yarn_corr_dim (hp->n_rot, hp->rope_n_ctx_orig, hp->yarn_beta_fast,
                                       hp->rope_freq_base));
  float end = ceilf (yarn_corr_dim (hp->n_rot, hp->rope_n_ctx_orig, hp->yarn_beta_slow,
                                    hp->rope_freq_base));
  r->corr_dims[0] = MAX (0.0f, start);
  r->corr_dims[1] = MIN ((float) (hp->n_rot - 1), end);
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
            v[i0] = x0 * c - x1 * s;
            v[i0 + 1] = x0 * s + x1 * c;
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
