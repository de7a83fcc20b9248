/* engine/cpu/attention.c — one attention head (see attention.h).
 *
 * One call per (token, head); heads are small (8..256 dims). Scores: for each key
 * dimension e, s[0..n_kv) += q[e] * Kt[e][0..n_kv) (contiguous, vectorised). Values:
 * out += p_j * v_j, vectorised along the head dimension. Compiled for AVX2/FMA and the
 * baseline (HZ_CPU_CLONES).
 */
#include "cpu/attention.h"

#include <string.h>
#include "cpu/ops.h"

HZ_CPU_CLONES void
hz_cpu_attn_head (const float *q, const float *kt, int64_t kt_stride, const float *v,
                  int64_t v_stride, int64_t n_kv, int hdk, int hdv, float scale,
                  float *scores, float *out)
{
  memset (scores, 0, n_kv * sizeof (float));
  for (int e = 0; e < hdk; e++)
    {
      const float qe = q[e];
      const float *restrict row = kt + e * kt_stride;
      float *restrict s = scores;
      for (int64_t j = 0; j < n_kv; j++)
        s[j] += qe * row[j];
    }

  hz_cpu_softmax (scores, n_kv, scale);

  memset (out, 0, hdv * sizeof (float));
  for (int64_t j = 0; j < n_kv; j++)
    {
      const float p = scores[j];
      const float *restrict vj = v + j * v_stride;
      float *restrict o = out;
      for (int e = 0; e < hdv; e++)
        o[e] += p * vj[e];
    }
}
