/* engine/cpu/attention-paged.c — attention through a block table (attention-paged.h).
 * Compiled for AVX2/FMA and the baseline like cpu/attention.c (HZ_CPU_CLONES), so that
 * the multiply-adds contract the same way in both. */
#include "cpu/attention-paged.h"

#include <math.h>
#include <string.h>
#include "cpu/ops.h"

void
hz_cpu_attn_head_paged (const float *q, HzKvPool *pool, guint layer, const gint32 *table,
                        int kvh, int64_t n_kv, int hdk, int hdv, float scale, float *scores,
                        float *out)
{
  hz_cpu_attn_head_paged_ext (q, pool, layer, table, kvh, 0, n_kv, hdk, hdv, scale, 0.0f,
                              -INFINITY, scores, out);
}

HZ_CPU_CLONES void
hz_cpu_attn_head_paged_ext (const float *q, HzKvPool *pool, guint layer, const gint32 *table,
                            int kvh, int64_t lo, int64_t n_kv, int hdk, int hdv, float scale,
                            float softcap, float sink, float *scores, float *out)
{
  const int64_t s = hz_kv_pool_block_size (pool);
  guint kv_dim_k, kv_dim_v;
  hz_kv_pool_kv_dims (pool, &kv_dim_k, &kv_dim_v);

  /* scores (scores[j - lo] for position j): block by block, for each key dimension e,
   * s[j] += q[e] * K[e][j] */
  memset (scores, 0, (n_kv - lo) * sizeof (float));
  for (int64_t j0 = lo; j0 < n_kv; j0 = (j0 / s + 1) * s)
    {
      const int64_t nb = MIN ((j0 / s + 1) * s, n_kv) - j0;
      const float *kb = hz_kv_block_k (pool, layer, table[j0 / s]) + (int64_t) kvh * hdk * s + j0 % s;
      float *restrict sc = scores + (j0 - lo);
      for (int e = 0; e < hdk; e++)
        {
          const float qe = q[e];
          const float *restrict row = kb + e * s;
          for (int64_t j = 0; j < nb; j++)
            sc[j] += qe * row[j];
        }
    }

  if (softcap > 0)
    hz_cpu_softcap (scores, n_kv - lo, softcap);
  hz_cpu_softmax_ggml_sink (scores, n_kv - lo, n_kv - lo, scale, sink);  /* no padded cells */

  memset (out, 0, hdv * sizeof (float));
  for (int64_t j0 = lo; j0 < n_kv; j0 = (j0 / s + 1) * s)
    {
      const int64_t nb = MIN ((j0 / s + 1) * s, n_kv) - j0;
      const float *vb = hz_kv_block_v (pool, layer, table[j0 / s]) + (int64_t) (j0 % s) * kv_dim_v
                        + (int64_t) kvh * hdv;
      for (int64_t j = 0; j < nb; j++)
        {
          const float p = scores[j0 - lo + j];
          const float *restrict vj = vb + j * kv_dim_v;
          float *restrict o = out;
          for (int e = 0; e < hdv; e++)
            o[e] += p * vj[e];
        }
    }
}

void
hz_cpu_kv_store_paged (HzKvPool *pool, guint layer, const gint32 *table, guint pos,
                       const float *k, const float *v)
{
  const guint s = hz_kv_pool_block_size (pool);
  guint kv_dim_k, kv_dim_v;
  hz_kv_pool_kv_dims (pool, &kv_dim_k, &kv_dim_v);
  const gint32 b = table[pos / s];
  float *kb = hz_kv_block_k (pool, layer, b) + pos % s;
  for (guint e = 0; e < kv_dim_k; e++)
    kb[(gsize) e * s] = k[e];
  memcpy (hz_kv_block_v (pool, layer, b) + (gsize) (pos % s) * kv_dim_v, v,
          kv_dim_v * sizeof (float));
}
