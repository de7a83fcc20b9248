/* engine/cpu/forward-paged.c — paged K/V hook of the forward pass (forward-paged.h). */
#include "cpu/forward-paged.h"

#include <math.h>
#include "cpu/attention-paged.h"
#include "cpu/matmul.h"
#include "hanzo/engine-error.h"

typedef struct {
  HzKvPool          *pool;
  const HzPagedRows *rows;
  const HzHparams   *hp;
  const HzLlm       *llm;
  int   n_head, n_head_kv, hdk, hdv;
  guint max_kv;          /* longest attention span of the batch (positions) */
  float *scores;         /* [threads][max_kv] */
  guint  n_scores_threads;
  /* per layer call */
  int          il;
  const float *q;
  float       *att;
} PagedAttn;

/* (row, head) tasks dealt round-robin: the cost grows with the position, so neighbours
 * go to different threads. */
static void
paged_attn_worker (guint ith, guint nth, gpointer data)
{
  const PagedAttn *pa = data;
  const HzPagedRows *rows = pa->rows;
  const int group = pa->n_head / pa->n_head_kv;
  const int64_t dq = (int64_t) pa->n_head * pa->hdk, dov = (int64_t) pa->n_head * pa->hdv;
  const HzCpuAttnLayer al = hz_cpu_attn_layer (pa->hp, pa->il);
  const HzLayer *L = &pa->llm->layers[pa->il];
  float *scores = pa->scores + (gsize) ith * pa->max_kv;
  const int64_t n_tasks = (int64_t) rows->n * pa->n_head;

  for (int64_t task = ith; task < n_tasks; task += nth)
    {
      const int64_t t = task / pa->n_head;
      const int h = (int) (task % pa->n_head);
      hz_cpu_attn_head_paged_ext (pa->q + t * dq + (int64_t) h * pa->hdk, pa->pool, pa->il,
                                  rows->tables[t], h / group,
                                  hz_cpu_attn_first (al.window, rows->pos[t]),
                                  (int64_t) rows->pos[t] + 1, pa->hdk, pa->hdv, al.scale,
                                  al.softcap, hz_cpu_attn_sink (L, h), scores, pa->att + t * dov + (int64_t) h * pa->hdv);
    }
}

static void
paged_attend (gpointer data, HzThreadPool *tp, guint n_threads, int il, guint n,
              const float *q, const float *k, const float *v, float *att)
{
  PagedAttn *pa = data;
  const HzPagedRows *rows = pa->rows;
  guint kv_dim_k, kv_dim_v;
  hz_kv_pool_kv_dims (pa->pool, &kv_dim_k, &kv_dim_v);

  /* all rows' K/V first: rows of a prompt chunk attend to the earlier rows of the chunk */
  for (guint t = 0; t < n; t++)
    hz_cpu_kv_store_paged (pa->pool, (guint) il, rows->tables[t], rows->pos[t],
                           k + (gsize) t * kv_dim_k, v + (gsize) t * kv_dim_v);
  pa->il = il;
  pa->q = q;
  pa->att = att;

  double work = 0;
  for (guint t = 0; t < n; t++)
    work += (double) (rows->pos[t] + 1) * pa->n_head * (pa->hdk + pa->hdv);
  guint nth = tp ? MIN (hz_cpu_threads_for_work (work, n_threads), pa->n_scores_threads) : 1;
  if (nth <= 1)
    paged_attn_worker (0, 1, pa);
  else
    hz_threadpool_run (tp, nth, paged_attn_worker, pa);
}

gboolean
hz_cpu_forward_paged (HzCpuForward *f, const HzLlm *llm, HzKvPool *pool,
                      const HzPagedRows *rows, float *logits, GError **error)
{
  const HzHparams *hp = &llm->hp;
  guint kv_dim_k, kv_dim_v;
  hz_kv_pool_kv_dims (pool, &kv_dim_k, &kv_dim_v);
  if (kv_dim_k != (guint) (hp->n_head_kv * hp->head_dim_k) ||
      kv_dim_v != (guint) (hp->n_head_kv * hp->head_dim_v) ||
      hz_kv_pool_bytes_per_token (pool) == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "the KV pool's shape does not match the model");
      return FALSE;
    }
  PagedAttn pa = { .pool = pool, .rows = rows, .hp = hp, .llm = llm, .n_head = hp->n_head,
                   .n_head_kv = hp->n_head_kv, .hdk = hp->head_dim_k, .hdv = hp->head_dim_v };
  for (guint t = 0; t < rows->n; t++)
    pa.max_kv = MAX (pa.max_kv, rows->pos[t] + 1);
  pa.n_scores_threads = MAX (hz_cpu_forward_get_threads (f), 1);
  pa.scores = hz_cpu_forward_scratch (f, (gsize) pa.n_scores_threads * pa.max_kv);

  const HzCpuKvHook hook = { paged_attend, &pa };
  return hz_cpu_forward_eval_hooked_lora (f, rows->tokens, rows->n, rows->pos, &hook,
                                          rows->lora, rows->out_rows, rows->n_out, logits,
                                          error);
}
