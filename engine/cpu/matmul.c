/* engine/cpu/matmul.c — quant-agnostic batched matmul over the format table (matmul.h). */
#include "cpu/matmul.h"
#include "ggml-order.h"
#include "repack.h"

#include <stdatomic.h>
#include <string.h>

#define HZ_MATMUL_MAX_OUTS 4
/* Weight rows per tile: the tile stays in L1 while every activation row streams past it,
 * so each weight byte is read from memory once per batch. */
#define HZ_ROW_BLOCK 16
/* Weight rows per call of a tiled kernel (prompt batches): the kernel walks all tokens in
 * passes of 32 (or 8) over these rows, which stay in L2 from one pass to the next. */
#define HZ_TILE_ROWS 64
/* The same for repacked matrices (their Q4_0 tile does 16 rows per vector op, so the
 * per-call work on the activations, their scales and offset sums, is shared by more rows):
 * 128 rows of the widest TinyLlama row (ffn_down, 5632 Q4_0 elements) are 405 KB, still in L2. */
#define HZ_PACKED_TILE_ROWS 128

struct _HzCpuMatmul {
  HzThreadPool *pool;
  guint         n_threads;
  guint8       *qbuf;       /* converted activations, grown on demand (never per token) */
  size_t        qbuf_size;
  gboolean      row_invariant;  /* hz_cpu_matmul_set_row_invariant */
};

typedef struct {
  const float       *x;
  int64_t            n_tok, n_in;
  const HzMatmulOut *outs;
  int                n_outs;
  const void        *act[HZ_MATMUL_MAX_OUTS];     /* per output: activation rows */
  HzGgmlTileFn       tile[HZ_MATMUL_MAX_OUTS];    /* per output: rows x tokens kernel, or NULL */
  const guint8      *tile_w[HZ_MATMUL_MAX_OUTS];  /* the weights `tile` reads (data or packed) */
  size_t             act_stride[HZ_MATMUL_MAX_OUTS];
  int                n_conv;                      /* distinct formats to convert to */
  gboolean           conv_in_region;              /* phase 1 runs in the workers */
  const HzQuantTraits *conv_qt[HZ_MATMUL_MAX_OUTS];
  HzFromFloatFn      conv_fn[HZ_MATMUL_MAX_OUTS];  /* ggml-cpu's activation quantizer */
  guint8            *conv_buf[HZ_MATMUL_MAX_OUTS];
  size_t             conv_stride[HZ_MATMUL_MAX_OUTS];
  int64_t            total_rows;
  int64_t            chunk_rows;                  /* rows per work item (phase 2) */
  _Atomic int64_t    next_chunk;                  /* work-item counter (phase 2) */
  gboolean           row_invariant;
  HzThreadPool      *pool;
} MatmulJob;

HzCpuMatmul *
hz_cpu_matmul_new (HzThreadPool *pool, guint n_threads)
{
  HzCpuMatmul *mm = g_new0 (HzCpuMatmul, 1);
  mm->pool = pool;
  mm->n_threads = pool ? CLAMP (n_threads, 1, hz_threadpool_n_threads (pool)) : 1;
  return mm;
}

void
hz_cpu_matmul_free (HzCpuMatmul *mm)
{
  if (mm == NULL)
    return;
  g_free (mm->qbuf);
  g_free (mm);
}

void
hz_cpu_matmul_set_row_invariant (HzCpuMatmul *mm, gboolean on)
{
  mm->row_invariant = on;
}

guint
hz_cpu_threads_for_work (double work, guint max_threads)
{
  double n = work / HZ_CPU_MIN_WORK_PER_THREAD;
  if (n < 2.0)
    return 1;
  return (guint) MIN ((double) max_threads, n);
}

/* Rows [r0, r1) of output k for all tokens with the per-element kernel: row blocks of
 * HZ_ROW_BLOCK rows (kept in L1 while the tokens stream past), four rows at once where the
 * format has a four-row kernel. */
static void
compute_rows_dot (const MatmulJob *job, int k, int64_t r0, int64_t r1)
{
  const HzMatmulOut *o = &job->outs[k];
  const HzMatrix *w = o->w;
  /* llama.cpp's kernel choice: vec_dot / gemv for one row, tinyBLAS / gemm for more */
  const HzVecDotFn vec_dot = job->n_tok > 1 && !job->row_invariant ? w->dot_batch : w->dot_one;
  const guint8 *wdata = w->data;
  const guint8 *act = job->act[k];
  const size_t astride = job->act_stride[k];
  const int n_in = (int) job->n_in;

  for (int64_t rb = r0; rb < r1; rb += HZ_ROW_BLOCK)
    {
      const int64_t re = MIN (rb + HZ_ROW_BLOCK, r1);
      for (int64_t t = 0; t < job->n_tok; t++)
        {
          const void *xa = act + t * astride;
          float *y = o->y + t * w->n_out;
          int64_t r = rb;
          if (vec_dot == w->dot_one && w->dot_one_x4)   /* same bits, four chains at once */
            for (; r + 4 <= re; r += 4)
              w->dot_one_x4 (n_in, &y[r], wdata + r * w->row_bytes, w->row_bytes, xa);
          for (; r < re; r++)
            vec_dot (n_in, &y[r], wdata + r * w->row_bytes, xa);
        }
    }
}

static void
compute_rows (const MatmulJob *job, int k, int64_t r0, int64_t r1)
{
  const HzMatmulOut *o = &job->outs[k];
  const HzMatrix *w = o->w;

  const int64_t tile_rows = w->packed && job->tile_w[k] == w->packed ? HZ_PACKED_TILE_ROWS
                                                                    : HZ_TILE_ROWS;
  if (job->tile[k])   /* the same bits, each weight block unpacked once per tile */
    for (int64_t rb = r0; rb < r1; rb += tile_rows)
      job->tile[k] ((int) job->n_in, (int) (MIN (rb + tile_rows, r1) - rb),
                    (int) job->n_tok, o->y + rb, w->n_out,
                    job->tile_w[k] + rb * w->row_bytes, w->row_bytes, job->act[k],
                    job->act_stride[k]);
  else
    compute_rows_dot (job, k, r0, r1);
  if (o->bias)
    for (int64_t t = 0; t < job->n_tok; t++)
      {
        float *y = o->y + t * w->n_out;
        for (int64_t r = r0; r < r1; r++)
          y[r] += o->bias[r];
      }
}

static void
matmul_worker (guint ith, guint nth, gpointer data)
{
  MatmulJob *job = data;

  /* phase 1: convert the activations, rows split across threads */
  if (job->conv_in_region)
    {
      const int64_t t0 = job->n_tok * ith / nth, t1 = job->n_tok * (ith + 1) / nth;
      for (int c = 0; c < job->n_conv; c++)
        for (int64_t t = t0; t < t1; t++)
          job->conv_fn[c] (job->x + t * job->n_in, job->conv_buf[c] + t * job->conv_stride[c],
                            job->n_in);
      if (nth > 1)
        hz_threadpool_barrier (job->pool);
    }

  /* phase 2: work items of chunk_rows concatenated output rows, taken from a shared
   * counter, so a thread that runs late (descheduled on a busy machine) does less and
   * nobody waits for it. Each output element is one vec_dot whatever thread computes it,
   * so results do not depend on the split. */
  const int64_t n_chunks = (job->total_rows + job->chunk_rows - 1) / job->chunk_rows;
  for (;;)
    {
      const int64_t c = atomic_fetch_add_explicit (&job->next_chunk, 1, memory_order_relaxed);
      if (c >= n_chunks)
        break;
      const int64_t g0 = c * job->chunk_rows, g1 = MIN (g0 + job->chunk_rows, job->total_rows);
      int64_t base = 0;
      for (int k = 0; k < job->n_outs && base < g1; k++)
        {
          const int64_t n = job->outs[k].w->n_out;
          const int64_t r0 = MAX (g0, base) - base, r1 = MIN (g1, base + n) - base;
          if (r0 < r1)
            compute_rows (job, k, r0, r1);
          base += n;
        }
    }
}

void
hz_cpu_matmul (HzCpuMatmul *mm, const float *x, int64_t n_tok, int64_t n_in,
               const HzMatmulOut *outs, int n_outs)
{
  MatmulJob job = { .x = x, .n_tok = n_tok, .n_in = n_in, .outs = outs, .n_outs = n_outs,
                    .row_invariant = mm->row_invariant,
                    .pool = mm->pool };
  size_t need = 0;
  double work = 0;

  g_assert (n_outs > 0 && n_outs <= HZ_MATMUL_MAX_OUTS);
  /* plan the activation formats: F32 is used in place, others converted once each */
  for (int k = 0; k < n_outs; k++)
    {
      const HzMatrix *w = outs[k].w;
      g_assert (w->n_in == n_in);
      const HzQuantTraits *vt = hz_quant_traits (w->qt->vec_dot_type);
      job.total_rows += w->n_out;
      job.tile_w[k] = w->data;
      if (w->packed)
        {
          /* repacked at load: bit-identical to dot_one (= dot_batch for these kernels) for
           * any batch, so also in row-invariant mode */
          job.tile[k] = w->packed_tile;
          job.tile_w[k] = w->packed;
        }
      else if (n_tok > 1)
        {
          /* the tiled kernel when it is the kernel compute_rows would run per element
           * (on one token the four-row kernels are faster: measured tg CPU time) */
          const HzGgmlDots d = hz_ggml_order_dots (w->qt->type, w->n_out, w->n_in);
          const HzVecDotFn used = mm->row_invariant ? w->dot_one : w->dot_batch;
          job.tile[k] = d.tile && d.batch == used ? d.tile : NULL;
        }
      work += (double) w->n_out * n_in * n_tok;
      if (vt->type == HZ_TYPE_F32)
        {
          job.act[k] = x;
          job.act_stride[k] = n_in * sizeof (float);
          continue;
        }
      int c;
      for (c = 0; c < job.n_conv; c++)
        if (job.conv_qt[c] == vt)
          break;
      if (c == job.n_conv)
        {
          job.conv_qt[c] = vt;
          job.conv_fn[c] = hz_quant_act_from_float (vt->type);
          job.conv_stride[c] = hz_quant_row_size (vt->type, n_in);
          need += job.conv_stride[c] * n_tok;
          job.n_conv++;
        }
      job.act_stride[k] = job.conv_stride[c];
    }
  if (need > mm->qbuf_size)
    {
      g_free (mm->qbuf);
      mm->qbuf = g_malloc (need);
      mm->qbuf_size = need;
    }
  size_t off = 0;
  for (int c = 0; c < job.n_conv; c++)
    {
      job.conv_buf[c] = mm->qbuf + off;
      off += job.conv_stride[c] * n_tok;
    }
  for (int k = 0; k < n_outs; k++)
    if (job.act[k] == NULL)
      {
        const HzQuantTraits *vt = hz_quant_traits (outs[k].w->qt->vec_dot_type);
        for (int c = 0; c < job.n_conv; c++)
          if (job.conv_qt[c] == vt)
            job.act[k] = job.conv_buf[c];
      }

  guint nth = mm->pool ? hz_cpu_threads_for_work (work, mm->n_threads) : 1;
  /* about 8 work items per thread (load balance) but at least one row block each */
  job.chunk_rows = nth == 1 ? job.total_rows
                            : MAX (HZ_ROW_BLOCK, (job.total_rows / (8 * nth) + HZ_ROW_BLOCK - 1) /
                                                  HZ_ROW_BLOCK * HZ_ROW_BLOCK);
  /* Fewer activation rows than threads (decode): the conversion, one thread's work anyway,
   * is done here before the region, which then needs no barrier between the phases (a
   * barrier per matmul is a measurable part of a decoded token's time). */
  job.conv_in_region = job.n_conv > 0 && n_tok >= nth;
  if (job.n_conv > 0 && !job.conv_in_region)
    for (int c = 0; c < job.n_conv; c++)
      for (int64_t t = 0; t < n_tok; t++)
        job.conv_fn[c] (x + t * n_in, job.conv_buf[c] + t * job.conv_stride[c], n_in);
  if (nth == 1)
    matmul_worker (0, 1, &job);
  else
    hz_threadpool_run (mm->pool, nth, matmul_worker, &job);
}

/* HZ_REPACK=0: no repacked copies (benchmarks of the unrepacked kernels). */
static gboolean
repack_enabled (void)
{
  return g_strcmp0 (g_getenv ("HZ_REPACK"), "0") != 0;
}

gboolean
hz_cpu_matrix_repack (HzMatrix *m, GPtrArray *owned)
{
  if (!repack_enabled () || m->data == NULL || m->packed != NULL)
    return FALSE;
  const HzGgmlTileFn tile = hz_repack_tile (m->qt->type, m->n_out, m->n_in);
  if (tile == NULL)
    return FALSE;
  guint8 *buf = g_malloc ((gsize) m->n_out * m->row_bytes);
  if (!hz_repack_rows (m->qt->type, m->n_out, m->n_in, m->data, buf))
    {
      g_free (buf);
      return FALSE;
    }
  g_ptr_array_add (owned, buf);
  m->packed_tile = tile;   /* the tile before the pointer that selects it */
  m->packed = buf;
  return TRUE;
}

/* The n_expert matrices of `x` as one repacked copy (each expert's rows are whole 8-row
 * groups, so expert e stays at byte e * expert_bytes; hz_expert_matrix points into it). */
static gboolean
expert_matrix_repack (HzExpertMatrix *x, GPtrArray *owned)
{
  HzMatrix *m = &x->mat;
  if (m->data == NULL || m->packed != NULL || x->n_expert <= 0 ||
      x->expert_bytes != (size_t) m->n_out * m->row_bytes || !repack_enabled ())
    return FALSE;
  const HzGgmlTileFn tile = hz_repack_tile (m->qt->type, m->n_out, m->n_in);
  if (tile == NULL)
    return FALSE;
  guint8 *buf = g_malloc (x->expert_bytes * (gsize) x->n_expert);
  if (!hz_repack_rows (m->qt->type, m->n_out * x->n_expert, m->n_in, m->data, buf))
    {
      g_free (buf);
      return FALSE;
    }
  g_ptr_array_add (owned, buf);
  m->packed_tile = tile;   /* the tile before the pointer that selects it */
  m->packed = buf;
  return TRUE;
}

void
hz_cpu_llm_prepare (const HzLlm *llm)
{
  HzLlm *w = (HzLlm *) llm;   /* the repacked copies are the only CPU-side mutable state */
  if (g_once_init_enter (&w->cpu_prepared))
    {
      hz_cpu_llm_repack (w);
      g_once_init_leave (&w->cpu_prepared, 1);
    }
}

guint
hz_cpu_llm_repack (HzLlm *llm)
{
  guint n = 0;
  for (int il = 0; il < llm->hp.n_layer; il++)
    {
      HzLayer *L = &llm->layers[il];
      n += expert_matrix_repack (&L->ffn_gate_exps, llm->owned);
      n += expert_matrix_repack (&L->ffn_up_exps, llm->owned);
      n += expert_matrix_repack (&L->ffn_down_exps, llm->owned);
      HzMatrix *const mats[] = { &L->wq, &L->wk, &L->wv, &L->wo, &L->w_gate, &L->w_up,
                                 &L->w_down, &L->ffn_gate_inp, &L->ffn_gate_shexp,
                                 &L->ffn_up_shexp, &L->ffn_down_shexp };
      for (gsize i = 0; i < G_N_ELEMENTS (mats); i++)
        n += hz_cpu_matrix_repack (mats[i], llm->owned);
    }
  /* tied output: only the output copy (tok_embd's rows are read with to_float) */
  n += hz_cpu_matrix_repack (&llm->output, llm->owned);
  return n;
}
