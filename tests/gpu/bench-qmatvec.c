/* tests/gpu/bench-qmatvec.c — GB/s of the GPU decode matvec against the device's copy
 * bandwidth (run by tools/bench-gpu.sh; prints a Markdown table).
 *
 * Copy bandwidth: best of 10 device-to-device copies of 1 GiB, counted as 2·bytes per
 * copy (read + write). Matvec: per format and decode shape (rows x K), enough uploaded
 * copies of the weight matrix to rotate through > 4x the L2 size, 200 matvecs cycling
 * through them captured in one graph, best of 3 replays; GB/s = weight bytes (the ggml
 * size of the matrix) / seconds per matvec. "kernel" times the matvec alone on already
 * quantized activations; "+act" includes hzk_quantize_act. Batch 8 is shown too (GB/s of
 * weight bytes; each byte feeds 8 outputs).
 *
 * Usage: bench-qmatvec [format,...]   (default q4_0,q8_0,q4_K,q6_K and the other native ones)
 *        bench-qmatvec --variants [format,...]   batch-1 GB/s of each launch geometry
 *                                                (hzk_matvec_variant) instead
 *        bench-qmatvec --mm [format,...]         the prefill matmul (qmmq) at the 7B
 *                                                prefill shapes x 512 tokens (ms, TOPS)
 *                                                and x 16 tokens (us, TOPS, GB/s)
 *        bench-qmatvec --rows [format,...]       the small-batch products of the serving
 *                                                step: 1..64 rows at the 7B decode shapes
 *                                                through the batched matvec (up to 8) and
 *                                                through hz_gpu_matmul_act (us, GB/s)
 */
#include "hz-gpu.h"
#include "gpu-test-util.h"
#include "hzk.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct { int64_t rows, k; } Shape;
static const Shape shapes[] = { { 4096, 4096 }, { 11008, 4096 }, { 4096, 11008 }, { 32000, 4096 } };
#define REPS 200

/* Seconds per product: REPS calls of launch (ctx, i) for i = 0..REPS-1, each enqueuing one
 * product on stream st, captured in one graph; the graph replayed 4 times and the best of
 * the last 3 counted (as hz_gpu_bench_matvec). */
static double
time_graph (void *st, void (*launch) (void *ctx, int i), void *ctx)
{
  void *graph = NULL, *e0 = NULL, *e1 = NULL;
  g_assert_cmpint (hzk_graph_begin (st), ==, 0);
  for (int i = 0; i < REPS; i++)
    launch (ctx, i);
  g_assert_cmpint (hzk_graph_end (st, &graph), ==, 0);
  hzk_event_create (&e0);
  hzk_event_create (&e1);
  float best = 0;
  for (int it = 0; it < 4; it++)
    {
      float ms = 0;
      hzk_event_record (e0, st);
      hzk_graph_launch (graph, st);
      hzk_event_record (e1, st);
      hzk_event_elapsed_ms (e0, e1, &ms);
      if (it > 0 && (best == 0 || ms < best))
        best = ms;
    }
  hzk_graph_destroy (graph);
  hzk_event_destroy (e0);
  hzk_event_destroy (e1);
  return best * 1e-3 / REPS;
}

/* One batch-1 matvec of variant fn on the weight copy t[i % n]. */
typedef struct {
  HzkMatvecFn    fn;
  HzGpuTensor  **t;
  int            n;
  int64_t        rows, k;
  const int8_t  *aq;
  const void    *am;
  const float   *xd;
  float         *yd;
  void          *st;
} VariantLaunch;

static void
variant_launch (void *ctx, int i)
{
  const VariantLaunch *v = ctx;
  v->fn (hz_gpu_tensor_data (v->t[i % v->n]), v->rows, v->k, v->aq, v->am, v->xd, v->yd, v->st);
}

/* Seconds per batch-1 matvec of variant fn cycling through t[0..n) (time_graph), or -1
 * when its first launch fails. */
static double
time_variant (HzGpu *gpu, HzkMatvecFn fn, HzGpuTensor **t, int n, const void *act,
              const float *xd, float *yd)
{
  void *st = hz_gpu_stream (gpu);
  const int64_t rows = hz_gpu_tensor_rows (t[0]), k = hz_gpu_tensor_k (t[0]);
  VariantLaunch v = { fn, t, n, rows, k, hzk_act_q (act, k, 1), hzk_act_m (act, k, 1), xd, yd, st };
  if (fn (hz_gpu_tensor_data (t[0]), rows, k, v.aq, v.am, xd, yd, st) || hzk_stream_sync (st))
    return -1;
  return time_graph (st, variant_launch, &v);
}

static int
variants (HzGpu *gpu, double copy, const char *list)
{
  GError *error = NULL;
  gchar **names = g_strsplit (list, ",", -1);
  GRand *rng = g_rand_new_with_seed (7);
  printf ("| format | rows x K | variant | b1 kernel us | GB/s | %% of copy |\n|---|---|---|---:|---:|---:|\n");
  for (gchar **nm = names; *nm; nm++)
    {
      const HzQuantTraits *qt = hz_quant_traits_by_name (*nm);
      if (!qt || !qt->vec_dot)
        continue;
      uint8_t *pool = gtu_block_pool (qt, rng);
      for (size_t si = 0; si < G_N_ELEMENTS (shapes); si++)
        {
          const Shape s = shapes[si];
          uint8_t *w = gtu_matrix (qt, pool, s.rows, s.k);
          const size_t bytes = (size_t) s.rows * hz_quant_row_size (qt->type, s.k);
          int n = CLAMP ((int) ((4 * hz_gpu_l2_bytes (gpu)) / bytes) + 1, 2, 64);
          HzGpuTensor **t = g_new0 (HzGpuTensor *, n);
          for (int i = 0; i < n; i++)
            if (!(t[i] = hz_gpu_tensor_upload (gpu, qt->type, s.rows, s.k, w, &error)))
              g_error ("%s", error->message);
          float *x = g_malloc (sizeof (float) * s.k);
          for (int64_t i = 0; i < s.k; i++)
            x[i] = (float) gtu_normal (rng);
          float *xd = hz_gpu_alloc (gpu, sizeof (float) * s.k, &error);
          float *yd = hz_gpu_alloc (gpu, sizeof (float) * s.rows, &error);
          void *act = hz_gpu_alloc (gpu, hzk_act_bytes (s.k, 1), &error);
          if (!xd || !yd || !act || !hz_gpu_upload (gpu, xd, x, sizeof (float) * s.k, &error)
              || hzk_quantize_act (xd, s.k, 1, act, hz_gpu_stream (gpu)))
            g_error ("variants: setup failed");
          const char *vn = NULL;
          HzkMatvecFn fn;
          for (int v = 0; (fn = hzk_matvec_variant (qt->type, v, &vn)) || v == 0; v++)
            {
              if (!fn)
                continue;
              const double sec = time_variant (gpu, fn, t, n, act, xd, yd);
              const double gbps = bytes / sec / 1e9;
              printf ("| %s | %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " | %s | %.1f | %.0f | %.1f%% |\n",
                      qt->name, s.rows, s.k, vn, sec * 1e6, gbps, 100.0 * gbps / copy);
              fflush (stdout);
            }
          for (int i = 0; i < n; i++)
            hz_gpu_tensor_free (t[i]);
          g_free (t);
          hz_gpu_free (gpu, xd);
          hz_gpu_free (gpu, yd);
          hz_gpu_free (gpu, act);
          g_free (x);
          g_free (w);
        }
      g_free (pool);
    }
  g_strfreev (names);
  g_rand_free (rng);
  return 0;
}

/* --mm: the prefill matmul (hz_gpu_matmul_act: the qmmq kernels) at the 7B prefill shapes
 * (q|k|v, o, gate|up, down) against MM_TOK tokens, activations quantized once beforehand:
 * ms per product (best of 5 after a warm-up) and TOPS = 2·rows·K·tokens / s; then against
 * MM_FEW tokens (the serving step of 16 sequences): µs per product cycling through enough
 * copies of the matrix to rotate through > 4x the L2 size (REPS products in one graph,
 * best of 3 replays, as the matvec's columns), TOPS and GB/s of weight bytes. */
#define MM_TOK 512
#define MM_FEW 16
static const Shape mm_shapes[] = { { 12288, 4096 }, { 4096, 4096 }, { 22016, 4096 }, { 4096, 11008 } };

/* One product of n_tok tokens with the weight copy t[i % n]. */
typedef struct {
  HzGpu         *gpu;
  HzGpuTensor  **t;
  int            n;
  const float   *xd;
  const void    *act;
  int            n_tok;
  float         *yd;
  int64_t        rows;
} MatmulLaunch;

static void
matmul_launch (void *ctx, int i)
{
  const MatmulLaunch *m = ctx;
  hz_gpu_matmul_act (m->gpu, m->t[i % m->n], m->xd, m->act, m->n_tok, m->yd, m->rows, NULL);
}

/* Seconds per product of n_tok tokens cycling through t[0..n) (time_graph). */
static double
time_matmul (HzGpu *gpu, HzGpuTensor **t, int n, const float *xd, const void *act, int n_tok,
             float *yd)
{
  GError *error = NULL;
  const int64_t rows = hz_gpu_tensor_rows (t[0]);
  if (!hz_gpu_matmul_act (gpu, t[0], xd, act, n_tok, yd, rows, &error) || !hz_gpu_sync (gpu, &error))
    g_error ("matmul bench: %s", error->message);
  MatmulLaunch m = { gpu, t, n, xd, act, n_tok, yd, rows };
  return time_graph (hz_gpu_stream (gpu), matmul_launch, &m);
}

static int
matmul_bench (HzGpu *gpu, const char *list)
{
  GError *error = NULL;
  void *st = hz_gpu_stream (gpu), *e0 = NULL, *e1 = NULL;
  gchar **names = g_strsplit (list, ",", -1);
  GRand *rng = g_rand_new_with_seed (7);
  hzk_event_create (&e0);
  hzk_event_create (&e1);
  printf ("| format | rows x K | %d tok ms | %d tok TOPS | %d tok us | %d tok TOPS | %d tok GB/s |\n"
          "|---|---|---:|---:|---:|---:|---:|\n", MM_TOK, MM_TOK, MM_FEW, MM_FEW, MM_FEW);
  for (gchar **nm = names; *nm; nm++)
    {
      const HzQuantTraits *qt = hz_quant_traits_by_name (*nm);
      if (!qt || !qt->vec_dot)
        continue;
      uint8_t *pool = gtu_block_pool (qt, rng);
      for (size_t si = 0; si < G_N_ELEMENTS (mm_shapes); si++)
        {
          const Shape s = mm_shapes[si];
          uint8_t *w = gtu_matrix (qt, pool, s.rows, s.k);
          const size_t bytes = (size_t) s.rows * hz_quant_row_size (qt->type, s.k);
          const int n = CLAMP ((int) ((4 * hz_gpu_l2_bytes (gpu)) / bytes) + 1, 2, 16);
          HzGpuTensor **t = g_new0 (HzGpuTensor *, n);
          for (int i = 0; i < n; i++)
            if (!(t[i] = hz_gpu_tensor_upload (gpu, qt->type, s.rows, s.k, w, &error)))
              g_error ("matmul bench: %s", error->message);
          float *x = g_malloc (sizeof (float) * MM_TOK * s.k);
          for (int64_t i = 0; i < MM_TOK * s.k; i++)
            x[i] = (float) gtu_normal (rng);
          float *xd = hz_gpu_alloc (gpu, sizeof (float) * MM_TOK * s.k, &error);
          float *yd = hz_gpu_alloc (gpu, sizeof (float) * MM_TOK * s.rows, &error);
          void *act = hz_gpu_alloc (gpu, hzk_act_bytes (s.k, MM_TOK), &error);
          void *act16 = hz_gpu_alloc (gpu, hzk_act_bytes (s.k, MM_FEW), &error);
          if (!xd || !yd || !act || !act16
              || !hz_gpu_upload (gpu, xd, x, sizeof (float) * MM_TOK * s.k, &error)
              || hzk_quantize_act (xd, s.k, MM_TOK, act, st)
              || hzk_quantize_act (xd, s.k, MM_FEW, act16, st)
              || !hz_gpu_matmul_act (gpu, t[0], xd, act, MM_TOK, yd, s.rows, &error)
              || !hz_gpu_sync (gpu, &error))
            g_error ("matmul bench: %s", error ? error->message : "setup failed");
          float best = 0;
          for (int it = 0; it < 5; it++)
            {
              float ms = 0;
              hzk_event_record (e0, st);
              hz_gpu_matmul_act (gpu, t[0], xd, act, MM_TOK, yd, s.rows, &error);
              hzk_event_record (e1, st);
              hzk_event_elapsed_ms (e0, e1, &ms);
              if (best == 0 || ms < best)
                best = ms;
            }
          const double few = time_matmul (gpu, t, n, xd, act16, MM_FEW, yd);
          const double ops = 2.0 * s.rows * s.k;
          printf ("| %s | %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " | %.3f | %.1f | %.1f | %.1f | %.0f |\n",
                  qt->name, s.rows, s.k, best, ops * MM_TOK / (best * 1e-3) / 1e12, few * 1e6,
                  ops * MM_FEW / few / 1e12, bytes / few / 1e9);
          fflush (stdout);
          for (int i = 0; i < n; i++)
            hz_gpu_tensor_free (t[i]);
          g_free (t);
          hz_gpu_free (gpu, xd), hz_gpu_free (gpu, yd), hz_gpu_free (gpu, act);
          hz_gpu_free (gpu, act16);
          g_free (x), g_free (w);
        }
      g_free (pool);
    }
  hzk_event_destroy (e0);
  hzk_event_destroy (e1);
  g_strfreev (names);
  g_rand_free (rng);
  return 0;
}

/* --rows: per format and decode shape, the product of n = 1, 2, 4, ... 64 activation rows
 * (already quantized) two ways, each cycling through copies of the matrix (> 4x the L2,
 * REPS products in one graph, best of 3 replays): the batched matvec (HzkOps.matvec[n-1],
 * n <= 8; the serving step's path up to HZ_GPU_SERVE_MV rows) and hz_gpu_matmul_act (the
 * qmmq kernels). GB/s = weight bytes / time; % of the copy bandwidth of the faster. */
static const int rows_n[] = { 1, 2, 4, 8, 16, 32, 64 };
static const Shape rows_shapes[] = { { 4096, 4096 }, { 11008, 4096 }, { 4096, 11008 } };

/* One batched matvec of n columns on the weight copy t[i % n]. */
typedef struct {
  HzkMatvecFn    fn;
  HzGpuTensor  **t;
  int            n;
  int64_t        rows, k;
  const int8_t  *aq;
  const void    *am;
  float         *yd;
  void          *st;
} RowsMv;

static void
rows_mv_launch (void *ctx, int i)
{
  const RowsMv *m = ctx;
  m->fn (hz_gpu_tensor_data (m->t[i % m->n]), m->rows, m->k, m->aq, m->am, NULL, m->yd, m->st);
}

static int
rows_bench (HzGpu *gpu, double copy, const char *list)
{
  GError *error = NULL;
  void *st = hz_gpu_stream (gpu);
  gchar **names = g_strsplit (list, ",", -1);
  GRand *rng = g_rand_new_with_seed (7);
  const int max_n = rows_n[G_N_ELEMENTS (rows_n) - 1];
  printf ("| format | rows x K | MB | n | matvec us | matvec GB/s | matmul us | matmul GB/s | %% of copy (faster) |\n"
          "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (gchar **nm = names; *nm; nm++)
    {
      const HzQuantTraits *qt = hz_quant_traits_by_name (*nm);
      if (!qt || !qt->vec_dot)
        continue;
      uint8_t *pool = gtu_block_pool (qt, rng);
      for (size_t si = 0; si < G_N_ELEMENTS (rows_shapes); si++)
        {
          const Shape s = rows_shapes[si];
          uint8_t *w = gtu_matrix (qt, pool, s.rows, s.k);
          const size_t bytes = (size_t) s.rows * hz_quant_row_size (qt->type, s.k);
          const int n = CLAMP ((int) ((4 * hz_gpu_l2_bytes (gpu)) / bytes) + 1, 2, 64);
          HzGpuTensor **t = g_new0 (HzGpuTensor *, n);
          for (int i = 0; i < n; i++)
            if (!(t[i] = hz_gpu_tensor_upload (gpu, qt->type, s.rows, s.k, w, &error)))
              g_error ("rows bench: %s", error->message);
          const HzkOps *o = hzk_ops (hz_gpu_tensor_device_type (t[0]));
          float *x = g_malloc (sizeof (float) * max_n * s.k);
          for (int64_t i = 0; i < max_n * s.k; i++)
            x[i] = (float) gtu_normal (rng);
          float *xd = hz_gpu_alloc (gpu, sizeof (float) * max_n * s.k, &error);
          float *yd = hz_gpu_alloc (gpu, sizeof (float) * max_n * s.rows, &error);
          if (!xd || !yd || !hz_gpu_upload (gpu, xd, x, sizeof (float) * max_n * s.k, &error))
            g_error ("rows bench: %s", error ? error->message : "setup failed");
          for (size_t ni = 0; ni < G_N_ELEMENTS (rows_n); ni++)
            {
              const int nr = rows_n[ni];
              void *act = hz_gpu_alloc (gpu, hzk_act_bytes (s.k, nr), &error);
              if (!act || hzk_quantize_act (xd, s.k, nr, act, st))
                g_error ("rows bench: activations");
              double mv = 0;
              if (nr <= HZK_MAX_BATCH && o->matvec[nr - 1])
                {
                  RowsMv m = { o->matvec[nr - 1], t, n, s.rows, s.k, hzk_act_q (act, s.k, nr),
                               hzk_act_m (act, s.k, nr), yd, st };
                  if (m.fn (hz_gpu_tensor_data (t[0]), s.rows, s.k, m.aq, m.am, NULL, yd, st)
                      || hzk_stream_sync (st))
                    g_error ("rows bench: matvec");
                  mv = time_graph (st, rows_mv_launch, &m);
                }
              const double mm = time_matmul (gpu, t, n, xd, act, nr, yd);
              const double best = mv > 0 && mv < mm ? mv : mm;
              char mvs[64] = "—", mvg[64] = "—";
              if (mv > 0)
                {
                  g_snprintf (mvs, sizeof mvs, "%.1f", mv * 1e6);
                  g_snprintf (mvg, sizeof mvg, "%.0f", bytes / mv / 1e9);
                }
              printf ("| %s | %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " | %.1f | %d | %s | %s | %.1f | %.0f | %.1f%% |\n",
                      qt->name, s.rows, s.k, bytes / 1e6, nr, mvs, mvg, mm * 1e6, bytes / mm / 1e9,
                      100.0 * bytes / best / 1e9 / copy);
              fflush (stdout);
              hz_gpu_free (gpu, act);
            }
          for (int i = 0; i < n; i++)
            hz_gpu_tensor_free (t[i]);
          g_free (t);
          hz_gpu_free (gpu, xd), hz_gpu_free (gpu, yd);
          g_free (x), g_free (w);
        }
      g_free (pool);
    }
  g_strfreev (names);
  g_rand_free (rng);
  return 0;
}

int
main (int argc, char **argv)
{
  GError *error = NULL;
  HzGpu *gpu = hz_gpu_open (0, &error);
  if (!gpu)
    {
      fprintf (stderr, "bench-qmatvec: %s\n", error->message);
      return 77;
    }
  double copy = 0;
  if (!hz_gpu_bench_copy (gpu, (size_t) 1 << 30, 10, &copy, &error))
    g_error ("%s", error->message);
  printf ("device: %s\n", hz_gpu_describe (gpu));
  printf ("copy bandwidth (device-to-device, 1 GiB, read+write): %.0f GB/s\n\n", copy);
  if (argc > 1 && strcmp (argv[1], "--mm") == 0)
    {
      const int rc = matmul_bench (gpu, argc > 2 ? argv[2] : "q4_0,q8_0,q4_K,q6_K");
      hz_gpu_close (gpu);
      return rc;
    }
  if (argc > 1 && strcmp (argv[1], "--rows") == 0)
    {
      const int rc = rows_bench (gpu, copy, argc > 2 ? argv[2] : "q4_0,q4_K,q8_0");
      hz_gpu_close (gpu);
      return rc;
    }
  if (argc > 1 && strcmp (argv[1], "--variants") == 0)
    {
      const int rc = variants (gpu, copy, argc > 2 ? argv[2] : "q4_0,q4_K,q8_0,q6_K");
      hz_gpu_close (gpu);
      return rc;
    }
  printf ("| format | rows x K | MB | b1 kernel us | b1 GB/s | %% of copy | b1 +act us | b1 +act GB/s | b8 kernel us | b8 GB/s |\n");
  printf ("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const char *list = argc > 1 ? argv[1]
                     : "q4_0,q8_0,q4_K,q6_K,q4_1,q5_0,q5_1,q2_K,q5_K,iq4_nl,mxfp4,f16,bf16,f32";
  gchar **names = g_strsplit (list, ",", -1);
  GRand *rng = g_rand_new_with_seed (7);
  for (gchar **nm = names; *nm; nm++)
    {
      const HzQuantTraits *qt = hz_quant_traits_by_name (*nm);
      if (!qt || !qt->vec_dot)
        {
          fprintf (stderr, "bench-qmatvec: skipping %s (unknown or not a weight format)\n", *nm);
          continue;
        }
      uint8_t *pool = gtu_block_pool (qt, rng);
      for (size_t si = 0; si < G_N_ELEMENTS (shapes); si++)
        {
          const Shape s = shapes[si];
          uint8_t *w = gtu_matrix (qt, pool, s.rows, s.k);
          const size_t bytes = (size_t) s.rows * hz_quant_row_size (qt->type, s.k);
          int n = (int) ((4 * hz_gpu_l2_bytes (gpu)) / bytes) + 1;
          n = CLAMP (n, 2, 64);
          HzGpuTensor **t = g_new0 (HzGpuTensor *, n);
          for (int i = 0; i < n; i++)
            if (!(t[i] = hz_gpu_tensor_upload (gpu, qt->type, s.rows, s.k, w, &error)))
              g_error ("%s", error->message);
          const size_t rbytes = hz_gpu_tensor_bytes (t[0]);
          float *x = g_malloc (sizeof (float) * 8 * s.k);
          for (int64_t i = 0; i < 8 * s.k; i++)
            x[i] = (float) gtu_normal (rng);
          float *xd = hz_gpu_alloc (gpu, sizeof (float) * 8 * s.k, &error);
          float *yd = hz_gpu_alloc (gpu, sizeof (float) * 8 * s.rows, &error);
          if (!xd || !yd || !hz_gpu_upload (gpu, xd, x, sizeof (float) * 8 * s.k, &error))
            g_error ("%s", error->message);
          double t1 = 0, t1a = 0, t8 = 0;
          if (!hz_gpu_bench_matvec (gpu, t, n, xd, yd, 1, REPS, FALSE, &t1, &error)
              || !hz_gpu_bench_matvec (gpu, t, n, xd, yd, 1, REPS, TRUE, &t1a, &error)
              || !hz_gpu_bench_matvec (gpu, t, n, xd, yd, 8, REPS, FALSE, &t8, &error))
            g_error ("%s", error->message);
          const double g1 = rbytes / t1 / 1e9;
          printf ("| %s%s | %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT " | %.1f | %.1f | %.0f | %.1f%% | %.1f | %.0f | %.1f | %.0f |\n",
                  qt->name, hz_gpu_tensor_device_type (t[0]) != qt->type ? " (f16 fallback)" : "",
                  s.rows, s.k, rbytes / 1e6, t1 * 1e6, g1, 100.0 * g1 / copy, t1a * 1e6,
                  rbytes / t1a / 1e9, t8 * 1e6, rbytes / t8 / 1e9);
          fflush (stdout);
          for (int i = 0; i < n; i++)
            hz_gpu_tensor_free (t[i]);
          g_free (t);
          hz_gpu_free (gpu, xd);
          hz_gpu_free (gpu, yd);
          g_free (x);
          g_free (w);
        }
      g_free (pool);
    }
  g_strfreev (names);
  g_rand_free (rng);
  hz_gpu_close (gpu);
  return 0;
}
