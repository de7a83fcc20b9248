/* engine/cpu/moe.c — mixture-of-experts feed-forward block on the CPU (see moe.h). */
#include "cpu/moe.h"

#include <math.h>
#include <string.h>
#include "cpu/ops.h"
#include "hanzo/engine-error.h"

struct _HzCpuMoe {
  guint    n_batch;
  int32_t  n_expert, n_used;
  int64_t  d, ff_max;      /* n_embd; max (n_ff_exp, n_ff_shexp) */
  float   *logits;         /* [n_batch][n_expert]: router logits, then probabilities */
  int32_t *ids;            /* [n_batch][n_used]: selected experts of each row */
  float   *weights;        /* [n_batch][n_used]: their mixing weights */
  int32_t *offset;         /* [n_expert + 1]: start of each expert's slots in `order` */
  int32_t *order;          /* [n_batch * n_used]: slots t * n_used + j grouped by expert */
  int32_t *active;         /* [n_expert]: experts with rows, by decreasing row count */
  int32_t *owner;          /* [n_expert]: thread of each active expert (expert-parallel) */
  /* per worker slot w < n_slots (slot 0 alone on the matmul-parallel path): */
  guint        n_slots;
  HzCpuMatmul **slot_mm;   /* single-threaded matmuls of the expert-parallel path */
  float   *xe;             /* [n_slots][n_batch][d]: the rows routed to one expert, gathered */
  float   *gate, *up;      /* [n_slots][n_batch][ff_max] */
  float   *ye;             /* [n_slots][n_batch][d]: one expert's (or the shared expert's) output */
  float   *eo;             /* [n_batch * n_used][d]: output of each (row, slot) */
};

/* llama.cpp clamps the sum of the selected probabilities to the smallest normal float16
 * before dividing (build_moe_ffn, "avoid division by zero") */
#define HZ_MOE_MIN_WEIGHT_SUM 6.103515625e-5

HzCpuMoe *
hz_cpu_moe_new (const HzHparams *hp, guint n_batch, guint n_threads, GError **error)
{
  g_return_val_if_fail (hp->n_expert > 0 && hp->n_expert_used > 0, NULL);
  g_autoptr (HzCpuMoe) m = g_new0 (HzCpuMoe, 1);
  m->n_batch = n_batch;
  m->n_expert = hp->n_expert;
  m->n_used = hp->n_expert_used;
  m->d = hp->n_embd;
  m->ff_max = MAX (hp->n_ff_exp, hp->n_ff_shexp);
  m->n_slots = MAX (n_threads, 1);
  const gsize slots = (gsize) n_batch * m->n_used, ns = m->n_slots;
  const gsize floats = (gsize) n_batch * m->n_expert + slots +
                       ns * n_batch * (m->d * 2 + m->ff_max * 2) + slots * m->d;
  m->logits = g_try_new (float, (gsize) n_batch * m->n_expert);
  m->weights = g_try_new (float, slots);
  m->ids = g_try_new (int32_t, slots);
  m->order = g_try_new (int32_t, slots);
  m->offset = g_try_new (int32_t, m->n_expert + 1);
  m->active = g_try_new (int32_t, m->n_expert);
  m->owner = g_try_new (int32_t, m->n_expert);
  m->xe = g_try_new (float, ns * n_batch * m->d);
  m->ye = g_try_new (float, ns * n_batch * m->d);
  m->gate = g_try_new (float, ns * n_batch * m->ff_max);
  m->up = g_try_new (float, ns * n_batch * m->ff_max);
  m->eo = g_try_new (float, slots * m->d);
  m->slot_mm = g_new0 (HzCpuMatmul *, ns);
  for (gsize w = 0; w < ns; w++)
    m->slot_mm[w] = hz_cpu_matmul_new (NULL, 1);
  if (!m->logits || !m->weights || !m->ids || !m->order || !m->offset || !m->active ||
      !m->owner || !m->xe || !m->ye || !m->gate || !m->up || !m->eo)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "out of memory allocating %" G_GSIZE_FORMAT " MiB of mixture-of-experts "
                   "scratch", floats * sizeof (float) >> 20);
      return NULL;
    }
  return g_steal_pointer (&m);
}

void
hz_cpu_moe_free (HzCpuMoe *m)
{
  if (m == NULL)
    return;
  g_free (m->logits);
  g_free (m->weights);
  g_free (m->ids);
  g_free (m->order);
  g_free (m->offset);
  g_free (m->active);
  g_free (m->owner);
  for (guint w = 0; m->slot_mm && w < m->n_slots; w++)
    hz_cpu_matmul_free (m->slot_mm[w]);
  g_free (m->slot_mm);
  g_free (m->xe);
  g_free (m->ye);
  g_free (m->gate);
  g_free (m->up);
  g_free (m->eo);
  g_free (m);
}

void
hz_cpu_moe_route (const HzHparams *hp, float *p, int32_t *ids, float *w)
{
  const int32_t ne = hp->n_expert, k = hp->n_expert_used;

  /* gpt-oss selects on the logits themselves (softmax only over the selected, below) */
  if (!hp->moe_softmax_selected)
    hz_cpu_softmax_ggml (p, ne, ne, 1.0f);
  /* top-k by repeated selection (k and n_expert are small); strict '>' keeps the lower id
   * on ties, and a NaN row still selects valid, distinct ids */
  for (int32_t j = 0; j < k; j++)
    {
      int32_t best = -1;
      for (int32_t e = 0; e < ne; e++)
        {
          gboolean taken = FALSE;
          for (int32_t i = 0; i < j && !taken; i++)
            taken = ids[i] == e;
          if (!taken && (best < 0 || p[e] > p[best]))
            best = e;
        }
      ids[j] = best;
      w[j] = p[best];
    }
  if (hp->moe_softmax_selected)   /* ggml_soft_max of the k selected logits */
    hz_cpu_softmax_ggml (w, k, k, 1.0f);
  if (hp->expert_weights_norm)
    {
      double sum = 0;   /* ggml_sum_rows accumulates in ggml_float (double) */
      for (int32_t j = 0; j < k; j++)
        sum += w[j];
      const float s = (float) MAX (sum, HZ_MOE_MIN_WEIGHT_SUM);
      for (int32_t j = 0; j < k; j++)
        w[j] /= s;
    }
}

/* ------------------------------------------------------------ row stages */

/* One row of an expert's activation: SwiGLU, or gpt-oss's clamped variant. */
static inline void
moe_glu (const HzHparams *hp, float *gate, const float *up, int64_t n)
{
  if (hp->swiglu_alpha > 0)
    hz_cpu_swiglu_oai (gate, up, n, hp->swiglu_alpha, hp->swiglu_limit);
  else
    hz_cpu_swiglu (gate, up, n);
}

typedef enum {
  STAGE_ROUTE,     /* logits[t] -> probabilities, ids[t], weights[t] */
  STAGE_SWIGLU,    /* gate[r] = silu(gate[r]) * up[r], width `ff` */
  STAGE_COMBINE,   /* y[t] = Σ_j weights[t][j] * eo[t][j] */
  STAGE_SHARED,    /* y[t] += sigmoid(gate_inp_shexp · x[t]) * ye[t] */
} Stage;

typedef struct {
  HzCpuMoe        *m;
  const HzHparams *hp;
  const HzLayer   *L;
  const float     *x;
  float           *y;
  Stage            stage;
  int64_t          ff;
  guint            n;
} Job;

static void
stage_row (const Job *j, guint t)
{
  HzCpuMoe *m = j->m;
  const int64_t d = m->d;
  const int32_t k = m->n_used;

  switch (j->stage)
    {
    case STAGE_ROUTE:
      if (j->L->ffn_gate_inp_b)   /* gpt-oss's router bias (ggml_add) */
        hz_cpu_add_f32 (m->logits + (gsize) t * m->n_expert, j->L->ffn_gate_inp_b, m->n_expert);
      hz_cpu_moe_route (j->hp, m->logits + (gsize) t * m->n_expert, m->ids + (gsize) t * k,
                        m->weights + (gsize) t * k);
      break;
    case STAGE_SWIGLU:
      moe_glu (j->hp, m->gate + (gsize) t * j->ff, m->up + (gsize) t * j->ff, j->ff);
      break;
    case STAGE_COMBINE:
      {
        /* as ggml: each expert's output scaled by its weight (ggml_mul), then the views
         * added one after the other (ggml_add) */
        float *y = j->y + (gsize) t * d;
        const float *w = m->weights + (gsize) t * k;
        const float *eo = m->eo + (gsize) t * k * d;
        for (int64_t i = 0; i < d; i++)
          y[i] = w[0] * eo[i];
        for (int32_t s = 1; s < k; s++)
          {
            const float ws = w[s], *e = eo + (gsize) s * d;
            for (int64_t i = 0; i < d; i++)
              {
                const float v = ws * e[i];
                y[i] += v;
              }
          }
      }
      break;
    case STAGE_SHARED:
      {
        const float *x = j->x + (gsize) t * d, *sh = m->ye + (gsize) t * d;
        float *y = j->y + (gsize) t * d;
        const float logit = hz_cpu_dot_f32 (j->L->ffn_gate_inp_shexp, x, d);
        const float g = 1.0f / (1.0f + expf (-logit));
        for (int64_t i = 0; i < d; i++)
          {
            const float v = sh[i] * g;
            y[i] += v;
          }
      }
      break;
    }
}

static void
stage_worker (guint ith, guint nth, gpointer data)
{
  const Job *j = data;
  for (guint t = (guint) ((guint64) j->n * ith / nth); t < (guint64) j->n * (ith + 1) / nth; t++)
    stage_row (j, t);
}

/* Run a stage over rows [0, n); `work` estimates the operations per row. */
static void
stage_run (Job *j, Stage stage, guint n, double work, HzThreadPool *pool, guint n_threads)
{
  j->stage = stage;
  j->n = n;
  guint nth = pool ? MIN (hz_cpu_threads_for_work (work * n, n_threads), n) : 1;
  if (nth <= 1)
    stage_worker (0, 1, j);
  else
    hz_threadpool_run (pool, nth, stage_worker, j);
}

void
hz_cpu_moe_set_row_invariant (HzCpuMoe *m, gboolean on)
{
  for (guint w = 0; w < m->n_slots; w++)
    hz_cpu_matmul_set_row_invariant (m->slot_mm[w], on);
}

/* ------------------------------------------------------------------ experts */

/* Expert e over its rows with the scratch of worker slot w: gather, gate/up, SwiGLU, down,
 * scatter into eo. `mm` does the matmuls (multi-threaded on the matmul-parallel path, the
 * slot's single-threaded one on the expert-parallel path); `job` (nullable) runs the
 * SwiGLU rows over the pool on the former. */
static void
run_expert (HzCpuMoe *m, HzCpuMatmul *mm, guint w, const HzHparams *hp, const HzLayer *L,
            const float *x, int32_t e, Job *job, HzThreadPool *pool, guint n_threads)
{
  const int64_t d = m->d, fe = hp->n_ff_exp;
  const int32_t k = m->n_used, s0 = m->offset[e], c = m->offset[e + 1] - s0;
  float *xe = m->xe + (gsize) w * m->n_batch * d, *ye = m->ye + (gsize) w * m->n_batch * d;
  float *gate = m->gate + (gsize) w * m->n_batch * m->ff_max;
  float *up = m->up + (gsize) w * m->n_batch * m->ff_max;

  for (int32_t r = 0; r < c; r++)
    memcpy (xe + (gsize) r * d, x + (gsize) (m->order[s0 + r] / k) * d, d * sizeof (float));
  const HzMatrix g = hz_expert_matrix (&L->ffn_gate_exps, e);
  const HzMatrix u = hz_expert_matrix (&L->ffn_up_exps, e);
  const HzMatrix dn = hz_expert_matrix (&L->ffn_down_exps, e);
  /* gpt-oss: each expert's biases (ggml_add_id), added to the products as one rounding */
  const float *gb = L->ffn_gate_exps_b ? L->ffn_gate_exps_b + (gsize) e * fe : NULL;
  const float *ub = L->ffn_up_exps_b ? L->ffn_up_exps_b + (gsize) e * fe : NULL;
  const float *db = L->ffn_down_exps_b ? L->ffn_down_exps_b + (gsize) e * d : NULL;
  const HzMatmulOut gu[2] = { { &g, gate, gb }, { &u, up, ub } };
  hz_cpu_matmul (mm, xe, c, d, gu, 2);
  if (job)
    stage_run (job, STAGE_SWIGLU, (guint) c, 12.0 * fe, pool, n_threads);
  else
    for (int32_t r = 0; r < c; r++)
      moe_glu (hp, gate + (gsize) r * fe, up + (gsize) r * fe, fe);
  const HzMatmulOut down[1] = { { &dn, ye, db } };
  hz_cpu_matmul (mm, gate, c, fe, down, 1);
  for (int32_t r = 0; r < c; r++)
    memcpy (m->eo + (gsize) m->order[s0 + r] * d, ye + (gsize) r * d, d * sizeof (float));
}

typedef struct {
  HzCpuMoe        *m;
  const HzHparams *hp;
  const HzLayer   *L;
  const float     *x;
  int32_t          n_active;
} ExpertJob;

static void
expert_worker (guint ith, guint nth, gpointer data)
{
  const ExpertJob *j = data;
  (void) nth;
  for (int32_t a = 0; a < j->n_active; a++)
    if (j->m->owner[a] == (int32_t) ith)
      run_expert (j->m, j->m->slot_mm[ith], ith, j->hp, j->L, j->x, j->m->active[a], NULL,
                  NULL, 1);
}

/* ------------------------------------------------------------------ block */

void
hz_cpu_moe_ffn (HzCpuMoe *m, HzCpuMatmul *mm, HzThreadPool *pool, guint n_threads,
                const HzHparams *hp, const HzLayer *L, const float *x, guint n, float *y)
{
  const int64_t d = m->d, fe = hp->n_ff_exp;
  const int32_t ne = m->n_expert, k = m->n_used;
  Job job = { m, hp, L, x, y, STAGE_ROUTE, 0, 0 };

  g_assert (n <= m->n_batch && hp->n_expert == ne && hp->n_expert_used == k);

  /* router logits, then softmax and top-k per row */
  const HzMatmulOut router[1] = { { &L->ffn_gate_inp, m->logits, NULL } };
  hz_cpu_matmul (mm, x, n, d, router, 1);
  stage_run (&job, STAGE_ROUTE, n, 16.0 * ne + (double) k * ne, pool, n_threads);

  /* group the (row, slot) pairs by expert: counting sort, rows ascending within an expert */
  memset (m->offset, 0, sizeof (int32_t) * (ne + 1));
  for (guint s = 0; s < n * (guint) k; s++)
    m->offset[m->ids[s] + 1]++;
  for (int32_t e = 0; e < ne; e++)
    m->offset[e + 1] += m->offset[e];
  int32_t *fill = g_newa (int32_t, ne);
  memcpy (fill, m->offset, sizeof (int32_t) * ne);
  for (guint s = 0; s < n * (guint) k; s++)
    m->order[fill[m->ids[s]]++] = (int32_t) s;

  /* the experts with rows, most rows first (insertion sort: stable, n_expert is small) */
  int32_t n_active = 0;
  for (int32_t e = 0; e < ne; e++)
    if (m->offset[e + 1] > m->offset[e])
      {
        const int32_t c = m->offset[e + 1] - m->offset[e];
        int32_t a = n_active++;
        for (; a > 0 && m->offset[m->active[a - 1] + 1] - m->offset[m->active[a - 1]] < c; a--)
          m->active[a] = m->active[a - 1];
        m->active[a] = e;
      }

  /* each selected expert once over its rows. With at least as many active experts as
   * threads (decode: n_expert_used of them), whole experts go to threads in one parallel
   * region, each thread's single-threaded matmuls streaming its experts' weights (fewer
   * synchronisations than splitting each small matmul); otherwise each expert's matmuls
   * are split over the threads. Either way every output element is the same kernel's. */
  const guint nth = pool ? MIN (n_threads, m->n_slots) : 1;
  const double work = 6.0 * (double) d * fe * n * k;
  if (nth > 1 && (guint) n_active >= nth && hz_cpu_threads_for_work (work, nth) > 1)
    {
      /* greedy balance by rows: each expert to the least loaded thread */
      gint64 *load = g_newa (gint64, nth);
      memset (load, 0, sizeof (gint64) * nth);
      for (int32_t a = 0; a < n_active; a++)
        {
          guint best = 0;
          for (guint t = 1; t < nth; t++)
            if (load[t] < load[best])
              best = t;
          m->owner[a] = (int32_t) best;
          load[best] += m->offset[m->active[a] + 1] - m->offset[m->active[a]] + 1;
        }
      ExpertJob ej = { m, hp, L, x, n_active };
      hz_threadpool_run (pool, nth, expert_worker, &ej);
    }
  else
    {
      job.ff = fe;
      for (int32_t a = 0; a < n_active; a++)
        run_expert (m, mm, 0, hp, L, x, m->active[a], &job, pool, n_threads);
    }
  stage_run (&job, STAGE_COMBINE, n, 2.0 * k * d, pool, n_threads);

  /* qwen2moe's shared expert, gated per row */
  if (L->ffn_gate_inp_shexp)
    {
      const int64_t fs = hp->n_ff_shexp;
      const HzMatmulOut gu[2] = { { &L->ffn_gate_shexp, m->gate, NULL },
                                  { &L->ffn_up_shexp, m->up, NULL } };
      hz_cpu_matmul (mm, x, n, d, gu, 2);
      job.ff = fs;
      stage_run (&job, STAGE_SWIGLU, n, 12.0 * fs, pool, n_threads);
      const HzMatmulOut down[1] = { { &L->ffn_down_shexp, m->ye, NULL } };
      hz_cpu_matmul (mm, m->gate, n, fs, down, 1);
      stage_run (&job, STAGE_SHARED, n, 4.0 * d, pool, n_threads);
    }
}
