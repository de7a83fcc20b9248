/* engine/cpu/forward.c — llama-family forward pass on the CPU (see forward.h). */
#include "cpu/forward.h"

#include <math.h>
#include <string.h>
#include "cpu/attention.h"
#include "cpu/matmul.h"
#include "cpu/moe.h"
#include "cpu/ops.h"
#include "hanzo/engine-error.h"

struct _HzCpuForward {
  const HzLlm  *llm;
  guint         n_ctx, n_batch, n_threads;
  HzThreadPool *pool;        /* NULL when single-threaded */
  HzCpuMatmul  *mm;
  HzCpuMoe     *moe;         /* mixture-of-experts scratch, or NULL for a dense model */
  HzRope        rope;
  HzRope        rope_swa;    /* the window layers' (gemma); = rope otherwise */

  float *k_cache, *v_cache;  /* layer il's K: [cells[il]][kv_dim_k] at k_off[il]; V:
                              * [kv_dim_v][cells[il]] at v_off[il] (llama.cpp's layout
                              * without flash attention) */
  int64_t kv_dim_k, kv_dim_v;
  /* cells per layer: n_ctx, or for a window layer a ring of n_swa + n_batch - 1 cells
   * (position p in cell p % cells) when that is smaller; hi: one past the newest position
   * written, the rings holding positions [hi - cells, hi) */
  int64_t *cells, *k_off, *v_off;
  guint    hi;
  float   *ring_scratch;      /* [pool threads][ring_scratch_n]: a wrapped window in order */
  gsize    ring_scratch_n;

  /* scratch, [n_batch][...] */
  float *x, *h, *q, *k, *v, *att, *tmp, *gate, *up, *rope_cs;  /* gate, up: dense FFN only */
  float *rope_cs_swa;        /* [n_batch][n_rot]: the window layers' table, or NULL */
  float *scores;             /* [pool threads][n_ctx] */
  float *scratch;            /* hz_cpu_forward_scratch */
  gsize  scratch_n;

  /* LoRA adapters (hz_cpu_forward_set_lora, hz_cpu_forward_eval_hooked_lora) */
  const HzLoraStack        *lora_all;    /* every row, or NULL */
  const HzLoraStack *const *lora_rows;   /* [n] per row during a hooked pass, or NULL */
  float *lora_u;             /* [pool threads][lora_u_cap]: A x of one row */
  gsize  lora_u_cap;
};

static float *
alloc_floats (gsize n_rows, gsize n_cols, GError **error)
{
  if (n_rows != 0 && n_cols > G_MAXSIZE / sizeof (float) / n_rows)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "buffer of %" G_GSIZE_FORMAT " x %" G_GSIZE_FORMAT " floats is too large",
                   n_rows, n_cols);
      return NULL;
    }
  float *p = g_try_malloc0 (n_rows * n_cols * sizeof (float));
  if (p == NULL && n_rows * n_cols > 0)
    g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                 "out of memory allocating %" G_GSIZE_FORMAT " MiB",
                 n_rows * n_cols * sizeof (float) >> 20);
  return p;
}

HzCpuForward *
hz_cpu_forward_new (const HzLlm *llm, guint n_ctx, guint n_batch, guint n_threads,
                    GError **error)
{
  const HzHparams *hp = &llm->hp;

  if (n_ctx == 0 || n_batch == 0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "context size and batch size must be positive");
      return NULL;
    }
  g_autoptr (HzCpuForward) f = g_new0 (HzCpuForward, 1);
  f->llm = llm;
  f->n_ctx = n_ctx;
  f->n_batch = n_batch = MIN (n_batch, n_ctx);
  if (n_threads == 0)
    n_threads = g_get_num_processors ();
  f->n_threads = n_threads;
  f->pool = n_threads > 1 ? hz_threadpool_new (n_threads) : NULL;
  f->mm = hz_cpu_matmul_new (f->pool, n_threads);
  hz_cpu_rope_init (&f->rope, hp, llm->rope_freqs);
  hz_cpu_rope_init_swa (&f->rope_swa, hp, llm->rope_freqs);

  f->kv_dim_k = (int64_t) hp->n_head_kv * hp->head_dim_k;
  f->kv_dim_v = (int64_t) hp->n_head_kv * hp->head_dim_v;
  f->cells = g_new (int64_t, hp->n_layer);
  f->k_off = g_new (int64_t, hp->n_layer);
  f->v_off = g_new (int64_t, hp->n_layer);
  gsize kv_rows = 0;
  gboolean ring = FALSE;
  for (int il = 0; il < hp->n_layer; il++)
    {
      f->cells[il] = hz_layer_swa (hp, il) ? MIN ((int64_t) n_ctx, (int64_t) hp->n_swa + n_batch - 1)
                                           : (int64_t) n_ctx;
      ring = ring || f->cells[il] < (int64_t) n_ctx;
      f->k_off[il] = (int64_t) kv_rows * f->kv_dim_k;
      f->v_off[il] = (int64_t) kv_rows * f->kv_dim_v;
      kv_rows += (gsize) f->cells[il];
    }
  /* a wrapped window copied in order: its keys and transposed values, padded to 32 cells */
  f->ring_scratch_n = ring ? ((gsize) hp->n_swa + n_batch + 31)
                             * (gsize) (hp->head_dim_k + hp->head_dim_v) : 0;
  const int64_t dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;
  if (!(f->k_cache = alloc_floats (kv_rows, f->kv_dim_k, error)) ||
      !(f->v_cache = alloc_floats (kv_rows, f->kv_dim_v, error)) ||
      !(f->x = alloc_floats (n_batch, hp->n_embd, error)) ||
      !(f->h = alloc_floats (n_batch, hp->n_embd, error)) ||
      !(f->tmp = alloc_floats (n_batch, hp->n_embd, error)) ||
      !(f->q = alloc_floats (n_batch, dq, error)) ||
      !(f->k = alloc_floats (n_batch, f->kv_dim_k, error)) ||
      !(f->v = alloc_floats (n_batch, f->kv_dim_v, error)) ||
      !(f->att = alloc_floats (n_batch, dov, error)) ||
      (hp->n_expert == 0 && !(f->gate = alloc_floats (n_batch, hp->n_ff, error))) ||
      (hp->n_expert == 0 && !(f->up = alloc_floats (n_batch, hp->n_ff, error))) ||
      (hp->n_expert > 0 && !(f->moe = hz_cpu_moe_new (hp, n_batch, n_threads, error))) ||
      !(f->rope_cs = alloc_floats (n_batch, hp->n_rot, error)) ||
      (hp->n_swa > 0 && !(f->rope_cs_swa = alloc_floats (n_batch, hp->n_rot, error))) ||
      !(f->scores = alloc_floats (MAX (n_threads, 1), n_ctx, error)) ||
      (ring && !(f->ring_scratch = alloc_floats (MAX (n_threads, 1), f->ring_scratch_n, error))))
    return NULL;
  return g_steal_pointer (&f);
}

void
hz_cpu_forward_free (HzCpuForward *f)
{
  if (f == NULL)
    return;
  hz_cpu_matmul_free (f->mm);
  hz_cpu_moe_free (f->moe);
  hz_threadpool_free (f->pool);
  g_free (f->k_cache);
  g_free (f->v_cache);
  g_free (f->cells);
  g_free (f->k_off);
  g_free (f->v_off);
  g_free (f->ring_scratch);
  g_free (f->x);
  g_free (f->h);
  g_free (f->tmp);
  g_free (f->q);
  g_free (f->k);
  g_free (f->v);
  g_free (f->att);
  g_free (f->gate);
  g_free (f->up);
  g_free (f->rope_cs);
  g_free (f->rope_cs_swa);
  g_free (f->scores);
  g_free (f->scratch);
  g_free (f->lora_u);
  g_free (f);
}

float *
hz_cpu_forward_scratch (HzCpuForward *f, gsize n)
{
  if (n > f->scratch_n)
    {
      g_free (f->scratch);
      f->scratch = g_new (float, n);
      f->scratch_n = n;
    }
  return f->scratch;
}

void
hz_cpu_forward_set_threads (HzCpuForward *f, guint n_threads)
{
  guint max = f->pool ? hz_threadpool_n_threads (f->pool) : 1;
  f->n_threads = CLAMP (n_threads, 1, max);
  hz_cpu_matmul_free (f->mm);
  f->mm = hz_cpu_matmul_new (f->pool, f->n_threads);
}

guint
hz_cpu_forward_get_threads (HzCpuForward *f)
{
  return f->pool ? f->n_threads : 1;
}

/* ---------------------------------------------------------------- attention */

typedef struct {
  HzCpuForward *f;
  int           il;
  guint         n, pos0;
} AttnJob;

/* One (token, head) pair per task; tasks are dealt round-robin so that the cost, which
 * grows with the position (causal mask), is balanced between threads. */
static void
attn_worker (guint ith, guint nth, gpointer data)
{
  const AttnJob *job = data;
  HzCpuForward *f = job->f;
  const HzHparams *hp = &f->llm->hp;
  const int hdk = hp->head_dim_k, hdv = hp->head_dim_v;
  const int group = hp->n_head / hp->n_head_kv;
  const int64_t dq = (int64_t) hp->n_head * hdk, dov = (int64_t) hp->n_head * hdv;
  const float *kc = f->k_cache + f->k_off[job->il];
  const float *vc = f->v_cache + f->v_off[job->il];
  const int64_t R = f->cells[job->il];
  const HzCpuAttnLayer al = hz_cpu_attn_layer (hp, job->il);
  float *scores = f->scores + (int64_t) ith * f->n_ctx;
  float *wk = f->ring_scratch ? f->ring_scratch + ith * f->ring_scratch_n : NULL;
  const int64_t n_tasks = (int64_t) job->n * hp->n_head;
  /* llama.cpp's n_kv: the used cells rounded up to 32 (llama_kv_cache_get_padding) */
  const int64_t n_pad = MIN ((int64_t) f->n_ctx, ((int64_t) job->pos0 + job->n + 31) / 32 * 32);

  for (int64_t task = ith; task < n_tasks; task += nth)
    {
      const int64_t t = task / hp->n_head;
      const int h = (int) (task % hp->n_head);
      const int kvh = h / group;
      const int64_t n_kv = job->pos0 + t + 1;   /* causal: positions 0..pos0+t */
      /* a window layer: positions lo..pos0+t only (the cells before are not passed) */
      const int64_t lo = hz_cpu_attn_first (al.window, n_kv - 1);
      const float *qh = f->q + t * dq + (int64_t) h * hdk;
      float *out = f->att + t * dov + (int64_t) h * hdv;

      const float sink = hz_cpu_attn_sink (&f->llm->layers[job->il], h);
      const int64_t c0 = lo % R, m = n_pad - lo;
      if (c0 + m <= R)   /* the cells in order (a ring's window that does not wrap) */
        hz_cpu_attn_head_ext (qh, kc + c0 * f->kv_dim_k + (int64_t) kvh * hdk, f->kv_dim_k,
                              vc + (int64_t) kvh * hdv * R + c0, R, n_kv - lo, m, hdk, hdv,
                              al.scale, al.softcap, sink, job->n > 1, scores, out);
      else
        {
          /* a wrapped ring: the window's keys and values copied in position order, the
           * padding cells zero (their probability is 0: only their count matters) */
          float *ks = wk, *vs = wk + m * hdk;
          memset (wk, 0, (gsize) m * (hdk + hdv) * sizeof (float));
          for (int64_t j = lo; j < n_kv; j++)
            memcpy (ks + (j - lo) * hdk, kc + (j % R) * f->kv_dim_k + (int64_t) kvh * hdk,
                    hdk * sizeof (float));
          for (int e = 0; e < hdv; e++)
            for (int64_t j = lo; j < n_kv; j++)
              vs[e * m + (j - lo)] = vc[((int64_t) kvh * hdv + e) * R + j % R];
          hz_cpu_attn_head_ext (qh, ks, hdk, vs, m, n_kv - lo, m, hdk, hdv, al.scale,
                                al.softcap, sink, job->n > 1, scores, out);
        }
    }
}

static void
attention (HzCpuForward *f, int il, guint n, guint pos0)
{
  const HzHparams *hp = &f->llm->hp;
  AttnJob job = { f, il, n, pos0 };
  const int32_t window = hz_cpu_attn_layer (hp, il).window;
  const double span = window > 0 ? MIN (pos0 + n / 2.0 + 1, (double) window) : pos0 + n / 2.0 + 1;
  const double work = (double) n * hp->n_head * span * (hp->head_dim_k + hp->head_dim_v);
  guint nth = f->pool ? hz_cpu_threads_for_work (work, f->n_threads) : 1;

  if (nth == 1)
    attn_worker (0, 1, &job);
  else
    hz_threadpool_run (f->pool, nth, attn_worker, &job);
}

/* ------------------------------------------------------------------ forward */

/* ------------------------------------------------------- per-token row stages */

/* The element-wise and per-row work between the matmuls (norms, RoPE, SwiGLU, residual
 * adds) for a batch of tokens, split by token across the pool when the batch is large
 * enough (prompt processing): every row is computed by the same code whatever thread
 * runs it, so results do not depend on the split. */
typedef enum {
  STAGE_ATTN_NORM,   /* h[t] = rms_norm(x[t]) * attn_norm */
  STAGE_QK_ROPE,     /* optional q/k head norms, then RoPE of q[t] and k[t] (the layer's
                      * table), then q[t] *= attn_scale (gemma) */
  STAGE_FFN_IN,      /* (gemma: tmp[t] = rms_norm(tmp[t]) * attn_post_norm) x[t] += tmp[t]
                      * (attention output); for t >= first:
                      * h[t - first] = rms_norm(x[t]) * ffn_norm */
  STAGE_SWIGLU,      /* gate[t] = silu(gate[t]) * up[t]; gemma: gelu_tanh(gate[t]) * up[t] */
  STAGE_FFN_OUT,     /* (gemma: tmp[t] = rms_norm(tmp[t]) * ffn_post_norm)
                      * x[first + t] += tmp[t] (feed-forward output) */
} RowStage;

typedef struct {
  HzCpuForward  *f;
  const HzLayer *L;
  RowStage       stage;
  guint          n, first;
  gboolean       swa;       /* the layer attends through the window: its RoPE table */
} RowJob;

static void
row_stage (const RowJob *j, guint t)
{
  HzCpuForward *f = j->f;
  const HzHparams *hp = &f->llm->hp;
  const HzLayer *L = j->L;
  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k;

  switch (j->stage)
    {
    case STAGE_ATTN_NORM:
      hz_cpu_rms_norm_to (f->h + t * d, f->x + t * d, L->attn_norm, d, hp->norm_eps);
      break;
    case STAGE_QK_ROPE:
      {
        float *qt = f->q + t * dq, *kt = f->k + t * f->kv_dim_k;
        const float *cs = (j->swa ? f->rope_cs_swa : f->rope_cs) + (int64_t) t * hp->n_rot;
        if (L->q_norm)
          for (int hh = 0; hh < hp->n_head; hh++)
            hz_cpu_rms_norm (qt + (int64_t) hh * hp->head_dim_k, L->q_norm, hp->head_dim_k, hp->norm_eps);
        if (L->k_norm)
          for (int hh = 0; hh < hp->n_head_kv; hh++)
            hz_cpu_rms_norm (kt + (int64_t) hh * hp->head_dim_k, L->k_norm, hp->head_dim_k, hp->norm_eps);
        const HzRope *rope = j->swa ? &f->rope_swa : &f->rope;
        hz_cpu_rope_apply (rope, cs, qt, hp->n_head, hp->head_dim_k);
        hz_cpu_rope_apply (rope, cs, kt, hp->n_head_kv, hp->head_dim_k);
        if (hp->attn_scale > 0)
          hz_cpu_scale (qt, dq, hp->attn_scale);
      }
      break;
    case STAGE_FFN_IN:
      if (L->attn_post_norm)
        hz_cpu_rms_norm (f->tmp + t * d, L->attn_post_norm, d, hp->norm_eps);
      hz_cpu_add_f32 (f->x + t * d, f->tmp + t * d, d);
      if (t >= j->first)
        hz_cpu_rms_norm_to (f->h + (t - j->first) * d, f->x + t * d, L->ffn_norm, d, hp->norm_eps);
      break;
    case STAGE_SWIGLU:
      (hp->gemma ? hz_cpu_geglu : hz_cpu_swiglu) (f->gate + (int64_t) t * hp->n_ff,
                                                  f->up + (int64_t) t * hp->n_ff, hp->n_ff);
      break;
    case STAGE_FFN_OUT:
      if (L->ffn_post_norm)
        hz_cpu_rms_norm (f->tmp + t * d, L->ffn_post_norm, d, hp->norm_eps);
      hz_cpu_add_f32 (f->x + (j->first + t) * d, f->tmp + t * d, d);
      break;
    }
}

static void
rows_worker (guint ith, guint nth, gpointer data)
{
  const RowJob *j = data;
  for (guint t = (guint) ((guint64) j->n * ith / nth); t < (guint64) j->n * (ith + 1) / nth; t++)
    row_stage (j, t);
}

/* Run `stage` for tokens [0, n); `work` estimates the operations per token. */
static void
rows_run (HzCpuForward *f, const HzLayer *L, RowStage stage, guint n, guint first, double work)
{
  RowJob j = { f, L, stage, n, first, hz_layer_swa (&f->llm->hp, (int) (L - f->llm->layers)) };
  guint nth = f->pool ? MIN (hz_cpu_threads_for_work (work * n, f->n_threads), n) : 1;
  if (nth <= 1)
    rows_worker (0, 1, &j);
  else
    hz_threadpool_run (f->pool, nth, rows_worker, &j);
}

/* ------------------------------------------------------------------- LoRA */

void
hz_cpu_forward_set_lora (HzCpuForward *f, const HzLoraStack *stack)
{
  f->lora_all = stack && stack->n > 0 ? stack : NULL;
}

typedef struct {
  HzCpuForward *f;
  int           il;
  HzLoraTarget  target;
  const float  *x;          /* [n][n_in] */
  float        *y;          /* [n][n_out] */
  int64_t       n_in, n_out;
  guint         n, row0;    /* x/y row t is batch row row0 + t (its adapters) */
} LoraJob;

/* dot product of two short float vectors (the rank r of B (A x)): four partial sums, a
 * fixed order, inlined (hz_cpu_dot_f32's call costs more than r = 8..64 products) */
static inline float
dot_short (const float *a, const float *b, int32_t n)
{
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t k = 0;
  for (; k + 4 <= n; k += 4)
    {
      s0 += a[k] * b[k];
      s1 += a[k + 1] * b[k + 1];
      s2 += a[k + 2] * b[k + 2];
      s3 += a[k + 3] * b[k + 3];
    }
  for (; k < n; k++)
    s0 += a[k] * b[k];
  return (s0 + s1) + (s2 + s3);
}

static inline const HzLoraStack *
row_lora (const HzCpuForward *f, guint row)
{
  return f->lora_rows ? f->lora_rows[row] : f->lora_all;
}

/* y[t] += scale * B (A x[t]) for the terms of each row's stack; rows split over threads
 * (each row is computed by the same code whatever thread runs it). */
static void
lora_worker (guint ith, guint nth, gpointer data)
{
  const LoraJob *j = data;
  float *u = j->f->lora_u + (gsize) ith * j->f->lora_u_cap;
  for (guint t = (guint) ((guint64) j->n * ith / nth); t < (guint64) j->n * (ith + 1) / nth; t++)
    {
      const HzLoraStack *st = row_lora (j->f, j->row0 + t);
      if (st == NULL)
        continue;
      const float *x = j->x + (gsize) t * j->n_in;
      float *y = j->y + (gsize) t * j->n_out;
      for (guint i = 0; i < st->n; i++)
        {
          const HzLoraTerm *term = &st->terms[i];
          const HzLoraSlot *s = term->scale != 0 ? hz_lora_slot (term->lora, j->il, j->target)
                                                 : NULL;
          if (s == NULL)
            continue;
          const int32_t r = term->lora->config.r;
          const float *A = term->lora->params + s->off_a, *B = term->lora->params + s->off_b;
          for (int32_t k = 0; k < r; k++)
            u[k] = hz_cpu_dot_f32 (A + (gsize) k * j->n_in, x, j->n_in);
          for (int64_t o = 0; o < j->n_out; o++)
            y[o] += term->scale * dot_short (B + (gsize) o * r, u, r);
        }
    }
}

/* The adapters of projection `target` of layer il over n rows (batch rows row0..). */
static void
lora_add (HzCpuForward *f, int il, HzLoraTarget target, const float *x, int64_t n_in,
          float *y, int64_t n_out, guint n, guint row0)
{
  if (f->lora_all == NULL && f->lora_rows == NULL)
    return;
  gsize max_r = 0;
  double work = 0;
  for (guint t = 0; t < n; t++)
    {
      const HzLoraStack *st = row_lora (f, row0 + t);
      for (guint i = 0; st && i < st->n; i++)
        if (st->terms[i].scale != 0 && hz_lora_slot (st->terms[i].lora, il, target))
          {
            max_r = MAX (max_r, (gsize) st->terms[i].lora->config.r);
            work += 2.0 * st->terms[i].lora->config.r * (n_in + n_out);
          }
    }
  if (max_r == 0)
    return;
  const guint pool_threads = f->pool ? hz_threadpool_n_threads (f->pool) : 1;
  if (max_r > f->lora_u_cap)
    {
      g_free (f->lora_u);
      f->lora_u = g_new (float, (gsize) pool_threads * max_r);
      f->lora_u_cap = max_r;
    }
  LoraJob j = { f, il, target, x, y, n_in, n_out, n, row0 };
  guint nth = f->pool ? MIN (hz_cpu_threads_for_work (work, f->n_threads), n) : 1;
  if (nth <= 1)
    lora_worker (0, 1, &j);
  else
    hz_threadpool_run (f->pool, nth, lora_worker, &j);
}

/* Rows [first, n) go through the feed-forward block; llama.cpp drops the rows whose logits
 * are not needed before the last layer's FFN (ggml_get_rows(cur, inp_out_ids)), which
 * changes the kernels (one row: vec_dot/gemv instead of tinyBLAS/gemm). */
static void
layer_forward (HzCpuForward *f, int il, guint n, guint pos0, guint first,
               const HzCpuKvHook *hook)
{
  const HzHparams *hp = &f->llm->hp;
  const HzLayer *L = &f->llm->layers[il];
  const int64_t d = hp->n_embd, dq = (int64_t) hp->n_head * hp->head_dim_k;
  const int64_t dov = (int64_t) hp->n_head * hp->head_dim_v;

  /* attention block */
  rows_run (f, L, STAGE_ATTN_NORM, n, 0, 4.0 * d);
  const HzMatmulOut qkv[3] = {
    { &L->wq, f->q, L->bq }, { &L->wk, f->k, L->bk }, { &L->wv, f->v, L->bv },
  };
  hz_cpu_matmul (f->mm, f->h, n, d, qkv, 3);
  lora_add (f, il, HZ_LORA_Q, f->h, d, f->q, dq, n, 0);
  lora_add (f, il, HZ_LORA_K, f->h, d, f->k, f->kv_dim_k, n, 0);
  lora_add (f, il, HZ_LORA_V, f->h, d, f->v, f->kv_dim_v, n, 0);

  rows_run (f, L, STAGE_QK_ROPE, n, 0, 4.0 * (dq + f->kv_dim_k));

  if (hook)  /* the caller's K/V (hz_cpu_forward_eval_hooked) */
    hook->attend (hook->data, f->pool, f->n_threads, il, n, f->q, f->k, f->v, f->att);
  else
    {
  /* append to the cache as llama.cpp lays it out: K by position, V transposed
   * ([kv_dim_v][cells]); a window layer's ring: position p in cell p % cells */
  const int64_t R = f->cells[il];
  float *kc = f->k_cache + f->k_off[il];
  float *vc = f->v_cache + f->v_off[il];
  for (guint t = 0; t < n; t++)
    {
      const int64_t c = ((int64_t) pos0 + t) % R;
      memcpy (kc + c * f->kv_dim_k, f->k + t * f->kv_dim_k, f->kv_dim_k * sizeof (float));
      for (int64_t e = 0; e < f->kv_dim_v; e++)
        vc[e * R + c] = f->v[t * f->kv_dim_v + e];
    }

  attention (f, il, n, pos0);
    }

  const HzMatmulOut o[1] = { { &L->wo, f->tmp, L->bo } };
  hz_cpu_matmul (f->mm, f->att, n, dov, o, 1);
  lora_add (f, il, HZ_LORA_O, f->att, dov, f->tmp, d, n, 0);

  /* feed-forward block (residual add and norm fused per row) */
  const guint m = n - first;
  rows_run (f, L, STAGE_FFN_IN, n, first, 5.0 * d);
  if (f->moe)
    {
      /* mixture of experts (cpu/moe.h); LoRA adapters have no expert projections */
      hz_cpu_moe_ffn (f->moe, f->mm, f->pool, f->n_threads, hp, L, f->h, m, f->tmp);
      rows_run (f, L, STAGE_FFN_OUT, m, first, 1.0 * d);
      return;
    }
  const HzMatmulOut gu[2] = { { &L->w_gate, f->gate, NULL }, { &L->w_up, f->up, NULL } };
  hz_cpu_matmul (f->mm, f->h, m, d, gu, 2);
  lora_add (f, il, HZ_LORA_GATE, f->h, d, f->gate, hp->n_ff, m, first);
  lora_add (f, il, HZ_LORA_UP, f->h, d, f->up, hp->n_ff, m, first);
  rows_run (f, L, STAGE_SWIGLU, m, 0, 12.0 * hp->n_ff);
  const HzMatmulOut down[1] = { { &L->w_down, f->tmp, NULL } };
  hz_cpu_matmul (f->mm, f->gate, m, hp->n_ff, down, 1);
  lora_add (f, il, HZ_LORA_DOWN, f->gate, hp->n_ff, f->tmp, d, m, first);
  rows_run (f, L, STAGE_FFN_OUT, m, first, 1.0 * d);
}

/* Row t of x: the embedding of tokens[t] (gemma: times sqrt(n_embd), ggml_scale), and the
 * RoPE tables of position pos[t] (pos NULL: pos0 + t). */
static void
embed_rows (HzCpuForward *f, const int32_t *tokens, guint n, guint pos0, const guint *pos)
{
  const HzHparams *hp = &f->llm->hp;
  const HzMatrix *e = &f->llm->tok_embd;
  const int64_t d = hp->n_embd;
  for (guint t = 0; t < n; t++)
    {
      const int64_t p = pos ? pos[t] : (int64_t) pos0 + t;
      e->qt->to_float ((const guint8 *) e->data + (gsize) tokens[t] * e->row_bytes, f->x + t * d, d);
      if (hp->gemma)
        hz_cpu_scale (f->x + t * d, d, sqrtf ((float) d));
      hz_cpu_rope_cache (&f->rope, p, f->rope_cs + (int64_t) t * hp->n_rot);
      if (f->rope_cs_swa)
        hz_cpu_rope_cache (&f->rope_swa, p, f->rope_cs_swa + (int64_t) t * hp->n_rot);
    }
}

/* logits [n_rows][n_vocab] of the final-normed rows h[0..n_rows), soft-capped when the
 * model says (gemma). */
static void
output_logits (HzCpuForward *f, const float *h, guint n_rows, float *logits)
{
  const HzLlm *llm = f->llm;
  const HzMatmulOut out[1] = { { &llm->output, logits, NULL } };
  if (n_rows == 0)
    return;
  hz_cpu_matmul (f->mm, h, n_rows, llm->hp.n_embd, out, 1);
  if (llm->hp.final_softcap > 0)
    hz_cpu_softcap (logits, (int64_t) n_rows * llm->hp.n_vocab, llm->hp.final_softcap);
}

gboolean
hz_cpu_forward_eval (HzCpuForward *f, const int32_t *tokens, guint n, guint pos0,
                     gboolean all_logits, float *logits, GError **error)
{
  const HzLlm *llm = f->llm;
  const HzHparams *hp = &llm->hp;
  const int64_t d = hp->n_embd;

  if (n == 0 || n > f->n_batch || pos0 > f->n_ctx || n > f->n_ctx - pos0)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "cannot evaluate %u tokens at position %u (batch %u, context %u)",
                   n, pos0, f->n_batch, f->n_ctx);
      return FALSE;
    }
  if (!hz_llm_check_tokens (llm, tokens, n, error))
    return FALSE;
  if (!hz_cpu_forward_can_resume (f, pos0))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "cannot evaluate at position %u: the sliding-window layers' cache no longer "
                   "holds the window before it (it holds positions up to %u)", pos0, f->hi);
      return FALSE;
    }

  /* embeddings and RoPE tables of this batch */
  embed_rows (f, tokens, n, pos0, NULL);

  /* final norm and logits for the rows asked for */
  const guint first = all_logits ? 0 : n - 1;
  for (int il = 0; il < hp->n_layer; il++)
    layer_forward (f, il, n, pos0, il == hp->n_layer - 1 && !hp->ffn_all_rows ? first : 0, NULL);

  for (guint t = first; t < n; t++)
    hz_cpu_rms_norm_to (f->h + t * d, f->x + t * d, llm->output_norm, d, hp->norm_eps);
  output_logits (f, f->h + first * d, n - first, logits);
  f->hi = pos0 + n;
  return TRUE;
}

gboolean
hz_cpu_forward_can_resume (const HzCpuForward *f, guint pos)
{
  const HzHparams *hp = &f->llm->hp;
  if (hp->n_swa <= 0 || pos == 0 || pos >= f->hi)
    return TRUE;
  /* the window before pos, [pos - n_swa + 1, pos), must be among [hi - cells, hi) */
  for (int il = 0; il < hp->n_layer; il++)
    if (f->cells[il] < (int64_t) f->n_ctx
        && MAX ((int64_t) pos - hp->n_swa + 1, 0) < (int64_t) f->hi - f->cells[il])
      return FALSE;
  return TRUE;
}

gboolean
hz_cpu_forward_eval_hooked (HzCpuForward *f, const int32_t *tokens, guint n, const guint *pos,
                            const HzCpuKvHook *hook, const guint *out_rows, guint n_out,
                            float *logits, GError **error)
{
  return hz_cpu_forward_eval_hooked_lora (f, tokens, n, pos, hook, NULL, out_rows, n_out,
                                          logits, error);
}

gboolean
hz_cpu_forward_eval_hooked_lora (HzCpuForward *f, const int32_t *tokens, guint n,
                                 const guint *pos, const HzCpuKvHook *hook,
                                 const HzLoraStack *const *row_lora_in,
                                 const guint *out_rows, guint n_out, float *logits,
                                 GError **error)
{
  const HzLlm *llm = f->llm;
  const HzHparams *hp = &llm->hp;
  const int64_t d = hp->n_embd;

  if (n == 0 || n > f->n_batch || n_out > n)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "cannot evaluate %u rows with %u logit rows (batch %u)", n, n_out, f->n_batch);
      return FALSE;
    }
  if (!hz_llm_check_tokens (llm, tokens, n, error))
    return FALSE;
  for (guint i = 0; i < n_out; i++)
    if (out_rows[i] >= n || (i > 0 && out_rows[i] <= out_rows[i - 1]))
      {
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                     "logit rows must be increasing and below %u", n);
        return FALSE;
      }

  embed_rows (f, tokens, n, 0, pos);
  hz_cpu_matmul_set_row_invariant (f->mm, TRUE);
  if (f->moe)
    hz_cpu_moe_set_row_invariant (f->moe, TRUE);
  f->lora_rows = row_lora_in;
  for (int il = 0; il < hp->n_layer; il++)
    layer_forward (f, il, n, 0, 0, hook);
  f->lora_rows = NULL;
  /* final norm of the wanted rows, packed at the start of h, then the output matmul */
  for (guint i = 0; i < n_out; i++)
    hz_cpu_rms_norm_to (f->h + i * d, f->x + out_rows[i] * d, llm->output_norm, d, hp->norm_eps);
  output_logits (f, f->h, n_out, logits);
  hz_cpu_matmul_set_row_invariant (f->mm, FALSE);
  if (f->moe)
    hz_cpu_moe_set_row_invariant (f->moe, FALSE);
  return TRUE;
}
