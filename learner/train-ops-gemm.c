/* learner/train-ops-gemm.c — float matrix products, threads and scratch of the training ops
 * (see train-ops-gemm.h for the method and the determinism argument). */
#include <stdlib.h>
#include <string.h>
#include "train-ops-gemm.h"
#include "hanzo/engine-train.h"
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HZ_GEMM_X86 1
#else
#define HZ_GEMM_X86 0
#endif

/* ------------------------------------------------------------ threads, scratch */

enum { N_SLOTS = 4 };

/* Multiply-adds per thread below which waking another thread does not pay: about 20-50 µs
 * of work, so that on a busy machine (where a woken thread may wait for a core) small ops
 * stay on the calling thread; the training shapes are far above it. */
#define MIN_WORK_PER_THREAD 1048576.0

typedef struct {
  float *p;
  gsize  n;
} Scratch;

struct _HzOpsThreads {
  HzThreadPool *pool;
  guint         n_threads;
  double        min_work;  /* multiply-adds per thread */
  Scratch      *scratch;   /* [n_threads * N_SLOTS] */
};

HzOpsThreads *
hz_ops_threads_new (guint n_threads)
{
  HzOpsThreads *th = g_new0 (HzOpsThreads, 1);
  th->n_threads = n_threads ? n_threads : g_get_num_processors ();
  th->min_work = MIN_WORK_PER_THREAD;
  th->pool = hz_threadpool_new (th->n_threads);
  th->scratch = g_new0 (Scratch, (gsize) th->n_threads * N_SLOTS);
  return th;
}

void
hz_ops_threads_free (HzOpsThreads *th)
{
  if (th == NULL)
    return;
  hz_threadpool_free (th->pool);
  for (guint i = 0; i < th->n_threads * N_SLOTS; i++)
    free (th->scratch[i].p);
  g_free (th->scratch);
  g_free (th);
}

guint
hz_ops_threads_n (const HzOpsThreads *th)
{
  return th->n_threads;
}

void
hz_ops_threads_set_min_work (HzOpsThreads *th, double min_work)
{
  th->min_work = MAX (min_work, 0.0);
}

float *
hz_ops_scratch (HzOpsThreads *th, guint ith, int slot, gsize n)
{
  g_assert (ith < th->n_threads && slot >= 0 && slot < N_SLOTS);
  Scratch *s = &th->scratch[ith * N_SLOTS + slot];
  if (s->n < n)
    {
      free (s->p);
      void *p = NULL;
      if (posix_memalign (&p, 64, MAX (n, 16) * sizeof (float)) != 0)
        g_error ("%s: out of memory (%" G_GSIZE_FORMAT " floats)", G_STRFUNC, n);
      s->p = p;
      s->n = n;
    }
  return s->p;
}


typedef struct {
  HzOpsItemFn fn;
  gpointer    data;
  int64_t     n_items;
  gint        next;
} ParJob;

static void
par_body (guint ith, guint nth, gpointer data)
{
  ParJob *job = data;
  (void) nth;
  for (;;)
    {
      const gint i = g_atomic_int_add (&job->next, 1);
      if (i >= job->n_items)
        break;
      job->fn (i, ith, job->data);
    }
}

void
hz_ops_parallel_for (HzOpsThreads *th, int64_t n_items, double work_per_item, HzOpsItemFn fn,
                     gpointer data)
{
  if (n_items <= 0)
    return;
  g_assert (n_items < G_MAXINT);
  const double want = th->min_work > 0 ? (double) n_items * work_per_item / th->min_work
                                       : (double) th->n_threads;
  guint nth = want < 2.0 ? 1 : (guint) MIN ((double) th->n_threads, want);
  nth = (guint) MIN ((int64_t) nth, n_items);
  ParJob job = { fn, data, n_items, 0 };
  hz_threadpool_run (th->pool, MAX (nth, 1), par_body, &job);
}

/* ------------------------------------------------------------------ kernels */

enum {
  MR = 6,      /* rows of C per kernel call */
  NR = 16,     /* columns of C per kernel call (one packed panel) */
  KC = 256,    /* reduction slice: fixed, so results do not depend on the split */
  NT_CHUNK = 64,   /* columns of C (source rows) per work item of hz_gemm_nt */
  NN_CHUNK = 64,   /* columns of C per work item of hz_gemm_nn (at least one quant block) */
};

/* c[i][0..nr) += sum_k a[i][k] * bp[k][0..NR) for i < MR, k < kc. bp is a packed panel
 * [kc][NR] (64-byte aligned, zero beyond the source's columns). */
typedef void (*KernelFn) (int64_t kc, const float *const *a, const float *restrict bp,
                          float *const *c, int nr);

static void
kernel_c (int64_t kc, const float *const *a, const float *restrict bp, float *const *c, int nr)
{
  float acc[MR][NR] = { { 0 } };
  for (int64_t k = 0; k < kc; k++)
    {
      const float *b = bp + k * NR;
      for (int i = 0; i < MR; i++)
        {
          const float ai = a[i][k];
          for (int j = 0; j < NR; j++)
            acc[i][j] += ai * b[j];
        }
    }
  for (int i = 0; i < MR; i++)
    for (int j = 0; j < nr; j++)
      c[i][j] += acc[i][j];
}

#if HZ_GEMM_X86
/* The same tile in 12 AVX2 registers with FMA (the classic 6 x 16 Haswell kernel). */
__attribute__ ((target ("avx2,fma"))) static void
kernel_avx2 (int64_t kc, const float *const *a, const float *restrict bp, float *const *c,
             int nr)
{
  const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
  __m256 c00 = _mm256_setzero_ps (), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  for (int64_t k = 0; k < kc; k++, bp += NR)
    {
      const __m256 b0 = _mm256_load_ps (bp), b1 = _mm256_load_ps (bp + 8);
      __m256 t;
      t = _mm256_broadcast_ss (a0 + k);
      c00 = _mm256_fmadd_ps (t, b0, c00);
      c01 = _mm256_fmadd_ps (t, b1, c01);
      t = _mm256_broadcast_ss (a1 + k);
      c10 = _mm256_fmadd_ps (t, b0, c10);
      c11 = _mm256_fmadd_ps (t, b1, c11);
      t = _mm256_broadcast_ss (a2 + k);
      c20 = _mm256_fmadd_ps (t, b0, c20);
      c21 = _mm256_fmadd_ps (t, b1, c21);
      t = _mm256_broadcast_ss (a3 + k);
      c30 = _mm256_fmadd_ps (t, b0, c30);
      c31 = _mm256_fmadd_ps (t, b1, c31);
      t = _mm256_broadcast_ss (a4 + k);
      c40 = _mm256_fmadd_ps (t, b0, c40);
      c41 = _mm256_fmadd_ps (t, b1, c41);
      t = _mm256_broadcast_ss (a5 + k);
      c50 = _mm256_fmadd_ps (t, b0, c50);
      c51 = _mm256_fmadd_ps (t, b1, c51);
    }
  const __m256 acc[MR][2] = { { c00, c01 }, { c10, c11 }, { c20, c21 },
                              { c30, c31 }, { c40, c41 }, { c50, c51 } };
  if (nr == NR)
    for (int i = 0; i < MR; i++)
      {
        _mm256_storeu_ps (c[i], _mm256_add_ps (_mm256_loadu_ps (c[i]), acc[i][0]));
        _mm256_storeu_ps (c[i] + 8, _mm256_add_ps (_mm256_loadu_ps (c[i] + 8), acc[i][1]));
      }
  else
    for (int i = 0; i < MR; i++)
      {
        float tmp[NR];
        _mm256_storeu_ps (tmp, acc[i][0]);
        _mm256_storeu_ps (tmp + 8, acc[i][1]);
        for (int j = 0; j < nr; j++)
          c[i][j] += tmp[j];
      }
}
#endif

static KernelFn kernel_chosen;

static gpointer
kernel_choose (gpointer unused)
{
  (void) unused;
  kernel_chosen = kernel_c;
#if HZ_GEMM_X86
  __builtin_cpu_init ();
  /* HZ_SIMD=scalar caps the engine's kernels to plain C (quant.h); it caps this one too */
  if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")
      && g_strcmp0 (g_getenv ("HZ_SIMD"), "scalar") != 0)
    kernel_chosen = kernel_avx2;
#endif
  return NULL;
}

static KernelFn
kernel_get (void)
{
  static GOnce once = G_ONCE_INIT;
  g_once (&once, kernel_choose, NULL);
  return kernel_chosen;
}

/* C[m0..m1) x panel columns += A[m0..m1) (from column k0, kc long) x bp: the rows in groups of
 * MR; a short last group repeats its last row of A and drops the surplus rows of C into
 * `sink` (so every element takes the kernel's one code path). */
static void
rows_times_panel (KernelFn kernel, const float *A, int64_t lda, int64_t k0, int64_t kc,
                  int64_t m0, int64_t m1, const float *bp, float *C, int64_t ldc, int nr,
                  float *sink)
{
  for (int64_t m = m0; m < m1; m += MR)
    {
      const float *a[MR];
      float *c[MR];
      for (int i = 0; i < MR; i++)
        {
          const int64_t row = MIN (m + i, m1 - 1);
          a[i] = A + row * lda + k0;
          c[i] = m + i < m1 ? C + (m + i) * ldc : sink;
        }
      kernel (kc, a, bp, c, nr);
    }
}

HzGemmSrc
hz_gemm_src_quant (const HzMatrix *W)
{
  return (HzGemmSrc) { W, NULL, 0, W->n_out, W->n_in };
}

HzGemmSrc
hz_gemm_src_float (const float *f, int64_t rows, int64_t cols, int64_t ld)
{
  return (HzGemmSrc) { NULL, f, ld, rows, cols };
}

/* Pointer to row `row` of S from column `col` (n columns) as float: float sources are read
 * in place, quantized ones converted into buf (col and n multiples of the block size). */
static const float *
src_row (const HzGemmSrc *S, int64_t row, int64_t col, int64_t n, float *buf)
{
  if (S->q == NULL)
    return S->f + row * S->ld + col;
  const HzQuantTraits *qt = S->q->qt;
  const guint8 *p = (const guint8 *) S->q->data + (gsize) row * S->q->row_bytes
                    + (gsize) (col / qt->block_elems) * qt->block_bytes;
  qt->to_float (p, buf, n);
  return buf;
}

typedef struct {
  HzOpsThreads    *th;
  KernelFn         kernel;
  float           *C;
  int64_t          ldc;
  const float     *A;
  int64_t          lda, M;
  const HzGemmSrc *S;
  int64_t          chunk;      /* columns of C per item */
  int64_t          n_chunks;   /* along the columns of C */
  int64_t          m_step;     /* rows of C per item */
  HzGemmMask       mask;
} GemmJob;

/* One item of C += A S^T: columns [n0, n0 + nn) of C = rows of S, rows [m0, m1) of C. */
static void
nt_item (int64_t item, guint ith, gpointer data)
{
  const GemmJob *j = data;
  const HzGemmSrc *S = j->S;
  const int64_t K = S->cols;
  const int64_t n0 = (item % j->n_chunks) * j->chunk, nn = MIN (j->chunk, S->rows - n0);
  const int64_t m0 = (item / j->n_chunks) * j->m_step, m1 = MIN (m0 + j->m_step, j->M);
  const int64_t n_panels = (nn + NR - 1) / NR;
  float *bp = hz_ops_scratch (j->th, ith, 0, (gsize) n_panels * K * NR);
  float *rows = S->q ? hz_ops_scratch (j->th, ith, 1, (gsize) nn * K) : NULL;
  float *sink = hz_ops_scratch (j->th, ith, 2, NR);

  /* the source rows (dequantized together: rows are contiguous), packed transposed:
   * panel p holds bp[p][k][jj] = S[n0 + p NR + jj][k], zero beyond the last row */
  if (S->q)
    S->q->qt->to_float ((const guint8 *) S->q->data + (gsize) n0 * S->q->row_bytes, rows,
                        nn * K);
  for (int64_t p = 0; p < n_panels; p++)
    {
      const float *r[NR];
      const int nr = (int) MIN (NR, nn - p * NR);
      for (int jj = 0; jj < NR; jj++)
        r[jj] = jj < nr ? (S->q ? rows + (p * NR + jj) * K : S->f + (n0 + p * NR + jj) * S->ld)
                        : NULL;
      float *dst = bp + p * K * NR;
      for (int64_t k = 0; k < K; k++)
        for (int jj = 0; jj < NR; jj++)
          dst[k * NR + jj] = jj < nr ? r[jj][k] : 0.0f;
    }
  for (int64_t k0 = 0; k0 < K; k0 += KC)
    {
      const int64_t kc = MIN (KC, K - k0);
      for (int64_t p = 0; p < n_panels; p++)
        {
          /* LOWER: rows above the panel's first column need none of it */
          const int64_t ms = j->mask == HZ_GEMM_LOWER ? MAX (m0, n0 + p * NR) : m0;
          rows_times_panel (j->kernel, j->A, j->lda, k0, kc, ms, m1, bp + (p * K + k0) * NR,
                            j->C + n0 + p * NR, j->ldc, (int) MIN (NR, nn - p * NR), sink);
        }
    }
}

/* One item of C += A S: columns [n0, n0 + nn) of C = columns of S, rows [m0, m1) of C; the
 * source is read KC rows at a time. */
static void
nn_item (int64_t item, guint ith, gpointer data)
{
  const GemmJob *j = data;
  const HzGemmSrc *S = j->S;
  const int64_t K = S->rows;
  const int64_t n0 = (item % j->n_chunks) * j->chunk, nn = MIN (j->chunk, S->cols - n0);
  const int64_t m0 = (item / j->n_chunks) * j->m_step, m1 = MIN (m0 + j->m_step, j->M);
  const int64_t n_panels = (nn + NR - 1) / NR;
  float *bp = hz_ops_scratch (j->th, ith, 0, (gsize) n_panels * KC * NR);
  float *buf = S->q ? hz_ops_scratch (j->th, ith, 1, (gsize) nn) : NULL;
  float *sink = hz_ops_scratch (j->th, ith, 2, NR);

  for (int64_t k0 = 0; k0 < K; k0 += KC)
    {
      const int64_t kc = MIN (KC, K - k0);
      for (int64_t k = 0; k < kc; k++)
        {
          const float *r = src_row (S, k0 + k, n0, nn, buf);
          for (int64_t p = 0; p < n_panels; p++)
            {
              float *dst = bp + (p * KC + k) * NR;
              const int nr = (int) MIN (NR, nn - p * NR);
              memcpy (dst, r + p * NR, nr * sizeof (float));
              for (int jj = nr; jj < NR; jj++)
                dst[jj] = 0.0f;
            }
        }
      /* rows whose A is zero on this whole reduction slice skip it */
      const int64_t ms = j->mask == HZ_GEMM_LOWER ? MAX (m0, k0) : m0;
      const int64_t me = j->mask == HZ_GEMM_UPPER ? MIN (m1, k0 + kc) : m1;
      for (int64_t p = 0; p < n_panels; p++)
        rows_times_panel (j->kernel, j->A, j->lda, k0, kc, ms, me, bp + p * KC * NR,
                          j->C + n0 + p * NR, j->ldc, (int) MIN (NR, nn - p * NR), sink);
    }
}

/* Split C [M, N] into items: column chunks, and row blocks too when there are too few column
 * chunks to keep every thread busy (a row block re-reads its chunk of the source). */
static void
gemm_run (HzOpsThreads *th, GemmJob *j, int64_t N, int64_t K, HzOpsItemFn fn)
{
  if (j->M <= 0 || N <= 0 || K <= 0)
    return;
  j->kernel = kernel_get ();
  j->n_chunks = (N + j->chunk - 1) / j->chunk;
  const guint nth = hz_ops_threads_n (th);
  int64_t m_blocks = 1;
  if (nth > 1 && j->n_chunks < 4 * (int64_t) nth)
    m_blocks = MIN ((j->M + 4 * MR - 1) / (4 * MR), (4 * (int64_t) nth + j->n_chunks - 1) / j->n_chunks);
  j->m_step = (j->M + m_blocks - 1) / m_blocks;
  const int64_t n_items = j->n_chunks * ((j->M + j->m_step - 1) / j->m_step);
  hz_ops_parallel_for (th, n_items, (double) j->M * N * K / n_items, fn, j);
}

void
hz_gemm_nt (HzOpsThreads *th, float *C, int64_t ldc, const float *A, int64_t lda, int64_t M,
            const HzGemmSrc *S)
{
  GemmJob j = { .th = th, .C = C, .ldc = ldc, .A = A, .lda = lda, .M = M, .S = S,
                .chunk = NT_CHUNK };
  gemm_run (th, &j, S->rows, S->cols, nt_item);
}

void
hz_gemm_nn (HzOpsThreads *th, float *C, int64_t ldc, const float *A, int64_t lda, int64_t M,
            const HzGemmSrc *S)
{
  int64_t chunk = NN_CHUNK;
  if (S->q)   /* whole quant blocks per chunk */
    {
      const int64_t be = S->q->qt->block_elems;
      chunk = be >= NN_CHUNK ? be : NN_CHUNK / be * be;
      g_assert (chunk % be == 0);
    }
  GemmJob j = { .th = th, .C = C, .ldc = ldc, .A = A, .lda = lda, .M = M, .S = S,
                .chunk = chunk };
  gemm_run (th, &j, S->cols, S->rows, nn_item);
}

/* The whole product as one item on the calling thread. */
static void
gemm_on (HzOpsThreads *th, guint ith, GemmJob *j, int64_t N, int64_t K, HzOpsItemFn fn)
{
  if (j->M <= 0 || N <= 0 || K <= 0)
    return;
  j->kernel = kernel_get ();
  j->chunk = (N + NR - 1) / NR * NR;
  j->n_chunks = 1;
  j->m_step = j->M;
  fn (0, ith, j);
}

void
hz_gemm_nt_on (HzOpsThreads *th, guint ith, float *C, int64_t ldc, const float *A,
               int64_t lda, int64_t M, const HzGemmSrc *S, HzGemmMask mask)
{
  g_assert (mask != HZ_GEMM_UPPER);
  GemmJob j = { .th = th, .C = C, .ldc = ldc, .A = A, .lda = lda, .M = M, .S = S,
                .mask = mask };
  gemm_on (th, ith, &j, S->rows, S->cols, nt_item);
}

void
hz_gemm_nn_on (HzOpsThreads *th, guint ith, float *C, int64_t ldc, const float *A,
               int64_t lda, int64_t M, const HzGemmSrc *S, HzGemmMask mask)
{
  g_assert (S->q == NULL);   /* whole rows: any chunk is fine for float sources */
  GemmJob j = { .th = th, .C = C, .ldc = ldc, .A = A, .lda = lda, .M = M, .S = S,
                .mask = mask };
  gemm_on (th, ith, &j, S->cols, S->rows, nn_item);
}
