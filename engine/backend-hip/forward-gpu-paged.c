/* engine/backend-hip/forward-gpu-paged.c — the serving step on the GPU; see
 * forward-gpu-paged.h. */
#include "forward-gpu-paged.h"

#include <math.h>
#include <string.h>
#include "forward-gpu.h"
#include "hanzo/engine.h"
#include "hz-gpu.h"
#include "hzk.h"

/* Splits of every row's positions in the row-invariant mode (HZ_GPU_SERVE_MV=0): a row's
 * attention then sums in an order that depends on its own length only. */
#define ROW_INVARIANT_SPLITS 32

struct _HzGpuPaged {
  const HzLlm  *llm;
  HzKvPool     *pool;
  HzGpuForward *f;
  HzGpu        *gpu;
  guint         s, P, max_rows, max_seq_len, tab_stride;
  int64_t       dk, dv;
  guint         part_rows;       /* rows × splits the partials hold */
  guint         mv_rows;         /* passes of up to this many rows use the batched matvec */
  int           n_sm;
  float        *k_pool, *v_pool; /* [n_layer][P][s][dk], [n_layer][P][s][dv] */
  float        *q, *kst, *vst, *cs_rows, *part;
  float        *cs_rows_swa;     /* the window layers' RoPE rows (Gemma), or NULL */
  int          *d_pos, *d_seq, *d_tables, *d_out, *d_zero;
  /* host staging of one pass */
  int          *h_pos, *h_seq, *h_tables, *h_out;
  /* the current pass (read by the layer hook) */
  guint         n;
  int           n_split;
  char          desc[400];
};

static gboolean
rt (int err, const char *what, GError **error)
{
  if (err == 0)
    return TRUE;
  g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_RUNTIME, "%s: %s", what, hzk_error_string (err));
  return FALSE;
}

static gsize
layer_floats (const HzGpuPaged *g, int64_t dim)
{
  return (gsize) g->P * g->s * dim;
}

/* Copy-on-write of the pool (kv-paged.c): the first n_slots slots of every layer. */
static void
copy_block (gint32 dst, gint32 src, guint n_slots, gpointer data)
{
  HzGpuPaged *g = data;
  void *st = hz_gpu_stream (g->gpu);
  for (int il = 0; il < g->llm->hp.n_layer; il++)
    {
      float *k = g->k_pool + il * layer_floats (g, g->dk);
      float *v = g->v_pool + il * layer_floats (g, g->dv);
      const int ek = hzk_memcpy_d2d (k + (gsize) dst * g->s * g->dk, k + (gsize) src * g->s * g->dk,
                                     sizeof (float) * n_slots * g->dk, st);
      const int ev = hzk_memcpy_d2d (v + (gsize) dst * g->s * g->dv, v + (gsize) src * g->s * g->dv,
                                     sizeof (float) * n_slots * g->dv, st);
      if (ek || ev)  /* the hook cannot fail: the next forward's sync reports the error */
        g_warning ("GPU KV copy-on-write: %s", hzk_error_string (ek ? ek : ev));
    }
}

void
hz_gpu_paged_free (HzGpuPaged *g)
{
  if (g == NULL)
    return;
  hz_kv_pool_set_copy_func (g->pool, NULL, NULL);
  if (g->f)
    {
      void *bufs[] = { g->k_pool, g->v_pool, g->q, g->kst, g->vst, g->cs_rows, g->cs_rows_swa, g->part,
                       g->d_pos, g->d_seq, g->d_tables, g->d_out, g->d_zero };
      hz_gpu_sync (g->gpu, NULL);
      for (gsize i = 0; i < G_N_ELEMENTS (bufs); i++)
        hz_gpu_free (g->gpu, bufs[i]);
      hz_gpu_forward_free (g->f);
    }
  g_free (g->h_pos);
  g_free (g->h_seq);
  g_free (g->h_tables);
  g_free (g->h_out);
  g_free (g);
}

HzGpuPaged *
hz_gpu_paged_new (const HzLlm *llm, HzKvPool *pool, guint max_rows, guint max_seq_len,
                  GError **error)
{
  const HzHparams *hp = &llm->hp;
  guint kv_dim_k, kv_dim_v;
  hz_kv_pool_kv_dims (pool, &kv_dim_k, &kv_dim_v);
  if (kv_dim_k != (guint) (hp->n_head_kv * hp->head_dim_k)
      || kv_dim_v != (guint) (hp->n_head_kv * hp->head_dim_v) || max_rows == 0
      || max_seq_len == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "GPU paged forward: the KV pool's shape does not match the model "
                   "(or no rows / positions asked for)");
      return NULL;
    }
  HzGpuForward *f = hz_gpu_forward_new_weights (llm, max_seq_len, max_rows, error);
  if (!f)
    return NULL;
  HzGpuPaged *g = g_new0 (HzGpuPaged, 1);
  g->llm = llm;
  g->pool = pool;
  g->f = f;
  g->gpu = hz_gpu_forward_gpu (f);
  g->s = hz_kv_pool_block_size (pool);
  g->P = hz_kv_pool_n_blocks (pool);
  g->max_rows = max_rows;
  g->max_seq_len = max_seq_len;
  g->tab_stride = (max_seq_len + g->s - 1) / g->s;
  g->dk = kv_dim_k;
  g->dv = kv_dim_v;
  g->n_sm = hz_gpu_n_sm (g->gpu);
  const char *mv = g_getenv ("HZ_GPU_SERVE_MV");
  g->mv_rows = mv ? (guint) g_ascii_strtoull (mv, NULL, 10) : HZK_MAX_BATCH;
  /* splits: about two blocks per multiprocessor when few rows are in the batch; the
   * row-invariant mode always takes ROW_INVARIANT_SPLITS */
  g->part_rows = g->mv_rows == 0 ? max_rows * ROW_INVARIANT_SPLITS
                                 : max_rows + (guint) (2 * g->n_sm / MAX (hp->n_head, 1)) + 32;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const gsize pool_bytes = sizeof (float) * (gsize) hp->n_layer
                           * (layer_floats (g, g->dk) + layer_floats (g, g->dv));
  const size_t r = max_rows, fl = sizeof (float), in = sizeof (int);
  gboolean ok = (g->k_pool = hz_gpu_alloc (g->gpu, fl * hp->n_layer * layer_floats (g, g->dk), error))
    && (g->v_pool = hz_gpu_alloc (g->gpu, fl * hp->n_layer * layer_floats (g, g->dv), error))
    && (g->q = hz_gpu_alloc (g->gpu, fl * r * dq, error))
    && (g->kst = hz_gpu_alloc (g->gpu, fl * r * g->dk, error))
    && (g->vst = hz_gpu_alloc (g->gpu, fl * r * g->dv, error))
    && (g->cs_rows = hz_gpu_alloc (g->gpu, fl * r * MAX (hp->n_rot, 1), error))
    && (!hz_gpu_forward_rope_table_swa (f)
        || (g->cs_rows_swa = hz_gpu_alloc (g->gpu, fl * r * MAX (hp->n_rot, 1), error)))
    && (g->part = hz_gpu_alloc (g->gpu, hzk_attn_paged_part_bytes ((int) g->part_rows, hp->n_head,
                                                                    hp->head_dim_v, 1), error))
    && (g->d_pos = hz_gpu_alloc (g->gpu, in * r, error))
    && (g->d_seq = hz_gpu_alloc (g->gpu, in * r, error))
    && (g->d_tables = hz_gpu_alloc (g->gpu, in * r * g->tab_stride, error))
    && (g->d_out = hz_gpu_alloc (g->gpu, in * r, error))
    && (g->d_zero = hz_gpu_alloc (g->gpu, in, error))
    && rt (hzk_memset (g->d_zero, 0, in, hz_gpu_stream (g->gpu)), "clear", error)
    && hz_gpu_sync (g->gpu, error);
  if (!ok)
    {
      hz_gpu_paged_free (g);
      return NULL;
    }
  g->h_pos = g_new (int, r);
  g->h_seq = g_new (int, r);
  g->h_tables = g_new0 (int, r * g->tab_stride);
  g->h_out = g_new (int, r);
  hz_kv_pool_set_copy_func (pool, copy_block, g);
  g_snprintf (g->desc, sizeof g->desc, "%s, paged KV %u blocks of %u (%.2f GB)",
              hz_gpu_forward_describe (f), g->P, g->s, pool_bytes / 1e9);
  return g;
}

const char *
hz_gpu_paged_describe (const HzGpuPaged *g)
{
  return g->desc;
}

/* The layer hook of hz_gpu_forward_rows: RoPE at each row's position (a window layer's
 * own table), K/V into the rows' slots, attention through the block tables (under the
 * layer's window and soft-capping: Gemma). */
static gboolean
attend (gpointer data, int il, guint n, const float *qkv, const float *bqkv, const float *q_norm,
        const float *k_norm, float *att, GError **error)
{
  HzGpuPaged *g = data;
  const HzHparams *hp = &g->llm->hp;
  void *st = hz_gpu_stream (g->gpu);
  float *kp = g->k_pool + il * layer_floats (g, g->dk);
  float *vp = g->v_pool + il * layer_floats (g, g->dv);
  const float scale = hp->attn_scale > 0 ? hp->attn_scale : 1.0f / sqrtf ((float) hp->head_dim_k);
  const gboolean swa = hz_layer_swa (hp, il);
  const HzkAttnMask mask = { swa ? hp->n_swa : 0, hp->attn_softcap };
  return rt (hzk_qkv_rope (qkv, bqkv, q_norm, k_norm, hp->norm_eps,
                           swa ? g->cs_rows_swa : g->cs_rows, g->d_zero, (int) n,
                           hp->n_head, hp->n_head_kv, hp->head_dim_k, hp->head_dim_v, hp->n_rot,
                           hp->rope_mode == HZ_ROPE_NEOX, g->q, g->kst, g->vst, 0, st), "rope", error)
         && rt (hzk_paged_kv_store (g->kst, g->vst, g->dk, g->dv, g->d_pos, g->d_seq, g->d_tables,
                                    (int) g->tab_stride, (int) g->s, (int) n, kp, vp, st),
                "paged KV store", error)
         && rt (hzk_attn_paged_ext (g->q, kp, vp, g->d_pos, g->d_seq, g->d_tables,
                                    (int) g->tab_stride, (int) g->s, (int) n, hp->n_head,
                                    hp->n_head_kv, hp->head_dim_k, hp->head_dim_v, scale, mask,
                                    g->n_split, g->part, att, st),
                "paged attention", error);
}

/* One device pass over rows [r0, r1) of `rows`; its out rows from index *k_out on. */
static gboolean
pass (HzGpuPaged *g, const HzPagedRows *rows, guint r0, guint r1, guint *k_out, float *logits,
      GError **error)
{
  const HzHparams *hp = &g->llm->hp;
  const guint n = r1 - r0;
  guint n_seq = 0;
  for (guint t = r0; t < r1; t++)
    {
      const guint pos = rows->pos[t];
      if (pos >= g->max_seq_len)
        {
          g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                       "GPU paged forward: position %u beyond the %u of the RoPE table", pos,
                       g->max_seq_len);
          return FALSE;
        }
      if (t == r0 || rows->tables[t] != rows->tables[t - 1])
        n_seq++;
      const guint si = n_seq - 1;
      g->h_pos[t - r0] = (int) pos;
      g->h_seq[t - r0] = (int) si;
      /* the table up to this row's block (rows of a sequence ascend: the last one wins) */
      for (guint b = 0; b <= pos / g->s; b++)
        {
          const gint32 blk = rows->tables[t][b];
          if (blk < 0 || (guint) blk >= g->P)
            {
              g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                           "GPU paged forward: block id %d outside the pool of %u", blk, g->P);
              return FALSE;
            }
          g->h_tables[(gsize) si * g->tab_stride + b] = blk;
        }
    }
  guint n_out = 0;
  while (*k_out + n_out < rows->n_out && rows->out_rows[*k_out + n_out] < r1)
    {
      g->h_out[n_out] = (int) (rows->out_rows[*k_out + n_out] - r0);
      n_out++;
    }
  /* splits per row: about two blocks per multiprocessor when the rows are few; a function
   * of n only, so that a captured pass of n rows replays at any position (empty shares of
   * short rows cost one early exit) */
  const guint want = (2 * (guint) g->n_sm + n * hp->n_head - 1) / (n * hp->n_head);
  g->n_split = g->mv_rows == 0 ? ROW_INVARIANT_SPLITS
                               : (int) MIN (CLAMP (want, 1, 32), MAX (g->part_rows / n, 1));
  g->n = n;
  void *st = hz_gpu_stream (g->gpu);
  const size_t in = sizeof (int);
  if (!hz_gpu_upload (g->gpu, g->d_pos, g->h_pos, in * n, error)
      || !hz_gpu_upload (g->gpu, g->d_seq, g->h_seq, in * n, error)
      || !hz_gpu_upload (g->gpu, g->d_tables, g->h_tables, in * (gsize) n_seq * g->tab_stride, error)
      || (n_out > 0 && !hz_gpu_upload (g->gpu, g->d_out, g->h_out, in * n_out, error))
      || (hp->n_rot > 0
          && (!rt (hzk_gather_rows (hz_gpu_forward_rope_table (g->f), hp->n_rot, g->d_pos, (int) n,
                                    hp->n_rot, g->cs_rows, st), "RoPE rows", error)
              || (g->cs_rows_swa
                  && !rt (hzk_gather_rows (hz_gpu_forward_rope_table_swa (g->f), hp->n_rot,
                                           g->d_pos, (int) n, hp->n_rot, g->cs_rows_swa, st),
                          "RoPE rows", error)))))
    return FALSE;
  if (!hz_gpu_forward_rows (g->f, rows->tokens + r0, n, attend, g, g->mv_rows, g->d_out, n_out,
                            logits + (gsize) *k_out * hp->n_vocab, error))
    return FALSE;
  *k_out += n_out;
  return TRUE;
}

gboolean
hz_gpu_paged_forward (HzGpuPaged *g, const HzPagedRows *rows, float *logits, GError **error)
{
  if (rows->lora)
    for (guint t = 0; t < rows->n; t++)
      if (rows->lora[t])
        {
          g_set_error (error, HZ_GPU_ERROR, HZ_GPU_ERROR_UNSUPPORTED,
                       "the GPU serving step applies no LoRA adapters");
          return FALSE;
        }
  if (rows->n == 0 || rows->n_out > rows->n)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "GPU paged forward: %u rows, %u with logits", rows->n, rows->n_out);
      return FALSE;
    }
  guint k_out = 0;
  for (guint r0 = 0; r0 < rows->n; r0 += g->max_rows)
    if (!pass (g, rows, r0, MIN (rows->n, r0 + g->max_rows), &k_out, logits, error))
      return FALSE;
  return hz_gpu_sync (g->gpu, error);
}
