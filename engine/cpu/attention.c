/* engine/cpu/attention.c — one attention head in llama.cpp's order (see attention.h). */
#include "cpu/attention.h"

#include <math.h>
#include "cpu/ops.h"
#include "ggml-order.h"

void
hz_cpu_attn_head (const float *q, const float *k, int64_t k_stride, const float *vt,
                  int64_t vt_stride, int64_t n_valid, int64_t n_pad, int hdk, int hdv,
                  float scale, gboolean batch, float *scores, float *out)
{
  hz_cpu_attn_head_ext (q, k, k_stride, vt, vt_stride, n_valid, n_pad, hdk, hdv, scale, 0.0f,
                        -INFINITY, batch, scores, out);
}

void
hz_cpu_attn_head_ext (const float *q, const float *k, int64_t k_stride, const float *vt,
                      int64_t vt_stride, int64_t n_valid, int64_t n_pad, int hdk, int hdv,
                      float scale, float softcap, float sink, gboolean batch, float *scores,
                      float *out)
{
  if (hdk < 64)
    /* below GGML_F32_STEP ggml_vec_dot_f32 is its scalar tail alone: a plain serial sum
     * (inlined here: one call per key costs more than the dot) */
    for (int64_t j = 0; j < n_valid; j++)
      {
        const float *kj = k + j * k_stride;
        float s = 0.0f;
        for (int e = 0; e < hdk; e++)
          s += kj[e] * q[e];
        scores[j] = s;
      }
  else
    for (int64_t j = 0; j < n_valid; j++)
      hz_ggml_dot_f32 (hdk, &scores[j], k + j * k_stride, q);

  if (softcap > 0)
    hz_cpu_softcap (scores, n_valid, softcap);
  hz_cpu_softmax_ggml_sink (scores, n_valid, n_pad, scale, sink);

  const gboolean tb = batch && n_pad % 16 == 0 && hdv % 4 == 0;
  for (int e = 0; e < hdv; e++)
    (tb ? hz_ggml_dot_f32_tb16 : hz_ggml_dot_f32) ((int) n_pad, &out[e], vt + e * vt_stride,
                                                    scores);
}
