/* engine/cpu/ops.h — element-wise and row-wise float32 kernels of the CPU backend.
 *
 * Formulas follow ggml's CPU ops (ggml/src/ggml-cpu/ops.cpp and vec.h of llama.cpp
 * c392e509) so that results agree with llama.cpp within float rounding:
 *   rms_norm: y = x * (1 / sqrtf(mean(x^2) + eps)), the sum of squares in double;
 *   softmax:  ggml_compute_forward_soft_max_f32 with ggml_vec_soft_max_f32 of the AVX-512
 *             build, bit for bit (ggml_v_expf per 16 lanes, each 16 reduced and added in
 *             double);
 *   silu:     ggml_vec_silu_f32 of the AVX-512 build, bit for bit (x / (1 + ggml_v_expf(-x))
 *             per 16 lanes, libm expf for the tail of a row);
 *   geglu:    ggml_vec_geglu_f32 with GGML_GELU_FP16 (the default build): gate <= -10 gives
 *             0, gate >= 10 gives gate * up, else the tanh GELU of gate rounded to fp16,
 *             looked up in a table of fp16 results, times up;
 *   softcap:  ggml_scale(1/c), ggml_tanh (tanhf), ggml_scale(c) as Gemma's graphs chain them;
 *   rope:     ggml_rope_ext with YaRN (rope_yarn), theta_p,i = p * base^(-2i/n_rot) / ff_i.
 * All pointers are float32, contiguous; no aliasing unless stated. Pure functions of their
 * arguments: thread-safe.
 */
#pragma once

#include <glib.h>
#include <stdint.h>
#include "llm.h"

G_BEGIN_DECLS

/* Hot loops are compiled twice on x86-64 — for x86-64-v3 (AVX2, FMA) and the baseline —
 * and the loader picks one at run time (GCC/Clang function multi-versioning, ifunc); not
 * under ThreadSanitizer, whose runtime is not up yet when ifunc resolvers run, nor with clang
 * before 16 (clang 14 names the ifunc NAME.ifunc, so calls from other files do not link:
 * the fuzzing build, tools/fuzz.sh). */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__) && !defined(__SANITIZE_THREAD__) \
    && !(defined(__clang__) && __clang_major__ < 16)
#define HZ_CPU_CLONES __attribute__ ((target_clones ("arch=x86-64-v3", "default")))
#else
#define HZ_CPU_CLONES
#endif

/** dot(a, b) over n floats (vectorised; summation order differs from a serial loop). */
float hz_cpu_dot_f32 (const float *a, const float *b, int64_t n);

/** y[i] += a * x[i]. */
void  hz_cpu_axpy_f32 (float *y, float a, const float *x, int64_t n);

/** y[i] += x[i] (y and x may not overlap). */
void  hz_cpu_add_f32 (float *y, const float *x, int64_t n);

/** In place: x = (x * 1/sqrt(mean(x^2) + eps)) * w, for one row of n floats (w may be
 *  NULL: no weight). */
void  hz_cpu_rms_norm (float *x, const float *w, int64_t n, float eps);

/** y = rms_norm(x) * w (out of place, one row). */
void  hz_cpu_rms_norm_to (float *y, const float *x, const float *w, int64_t n, float eps);

/** In place, one row of llama.cpp's soft_max_ext(kq, mask, scale): x[0..n_valid) are the
 *  scores; cells [n_valid, n_pad) are masked (-inf). Afterwards x[0..n_pad) holds the
 *  probabilities (0 in the masked cells). Bit-exact with ggml (see above); n_pad is
 *  llama.cpp's padded n_kv, which decides the 16-lane chunks. */
void  hz_cpu_softmax_ggml (float *x, int64_t n_valid, int64_t n_pad, float scale);

/** As hz_cpu_softmax_ggml with an attention sink (gpt-oss; ggml_soft_max_add_sinks): a
 *  logit `sink` (not scaled) that joins the maximum and adds expf(sink - max) (libm) to the
 *  denominator, as if a key with a zero value were attended. sink = -INFINITY: none,
 *  identical to hz_cpu_softmax_ggml. */
void  hz_cpu_softmax_ggml_sink (float *x, int64_t n_valid, int64_t n_pad, float scale,
                                float sink);

/** In place: gate[i] = silu(gate[i]) * up[i] (SwiGLU, llama.cpp LLM_FFN_SILU + PAR) for ONE
 *  row of n = n_ff elements (the 16-lane chunks restart at every row, as in ggml). */
void  hz_cpu_swiglu (float *gate, const float *up, int64_t n);

/** In place: gpt-oss's clamped SwiGLU (ggml_swiglu_oai, scalar, libm expf): with
 *  g = min(gate[i], limit) and u = clamp(up[i], -limit, limit),
 *  gate[i] = (g / (1 + expf(alpha * -g))) * (u + 1), n elements. */
void  hz_cpu_swiglu_oai (float *gate, const float *up, int64_t n, float alpha, float limit);

/** In place: gate[i] = gelu_tanh(gate[i]) * up[i] (GeGLU, llama.cpp LLM_FFN_GELU + PAR:
 *  ggml_geglu_split), gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2)))
 *  through ggml's fp16 table (see above) for n elements. */
void  hz_cpu_geglu (float *gate, const float *up, int64_t n);
/** ggml's fp16 GELU table that hz_cpu_geglu looks up: [65536] fp16 bits, entry i = the
 *  tanh-approximated GELU of fp16 value i, computed in float and rounded to fp16 (built
 *  once, thread-safe; the GPU's GeGLU uploads it, kernels/hzk.h hzk_geglu_rows). */
const uint16_t *hz_cpu_gelu_table (void);

/** In place: x[i] = c * tanhf(x[i] * (1/c)) (Gemma's logit soft-capping), n elements. */
void  hz_cpu_softcap (float *x, int64_t n, float c);

/** In place: x[i] *= s (ggml_vec_scale_f32: one rounding per element). */
void  hz_cpu_scale (float *x, int64_t n, float s);

/** RoPE parameters derived from HzHparams (see hz_cpu_rope_init). */
typedef struct {
  int32_t     n_rot;
  HzRopeMode  mode;
  float       theta_scale;   /* base^(-2/n_rot) */
  float       freq_scale;
  float       ext_factor;
  float       attn_factor;
  float       corr_dims[2];  /* YaRN correction range (ggml_rope_yarn_corr_dims) */
  const float *freq_factors; /* [n_rot/2] or NULL */
} HzRope;

/** Fill `r` from the model's hyperparameters and optional frequency factors. */
void  hz_cpu_rope_init (HzRope *r, const HzHparams *hp, const float *freq_factors);

/** As hz_cpu_rope_init with the window layers' base and scale (rope_freq_base_swa,
 *  rope_freq_scale_swa; the YaRN correction dims from that base, as llama.cpp passes
 *  freq_base_l to ggml_rope_ext). */
void  hz_cpu_rope_init_swa (HzRope *r, const HzHparams *hp, const float *freq_factors);

/** cos/sin table for position `pos`: cs[2i] = cos theta_i * mscale, cs[2i+1] = sin ...,
 *  i in [0, n_rot/2). */
void  hz_cpu_rope_cache (const HzRope *r, int64_t pos, float *cs);

/** Rotate the first n_rot dims of each of n_heads heads of size head_dim in x
 *  ([n_heads][head_dim], in place) with the table from hz_cpu_rope_cache. */
void  hz_cpu_rope_apply (const HzRope *r, const float *cs, float *x, int32_t n_heads,
                         int32_t head_dim);

G_END_DECLS
