/* tests/gpu/test-moe.c — the mixture-of-experts ops of kernels/moe.hip against their CPU
 * twins and against the dense GPU products they reuse, on fresh random inputs:
 *
 *   hzk_moe_route     ids equal to hz_cpu_moe_route's (engine/cpu/moe.c) exactly, weights
 *                     within 1e-6 relative (expf vs ggml's vectorised exp), for 8..128
 *                     experts, k 1..8, normalised or not; all-equal logits select ids
 *                     0..k-1 (ties to the lower id)
 *   hzk_moe_matvec    each slot's output bit-identical to the dense decode matvec
 *                     (hz_gpu_matvec_act) of the selected expert on the same int8 activations
 *                     (the same qmatvec_core body), shared and per-slot activations; and
 *                     within 2e-2 of the fp64 product of the decoded weights and fp32
 *                     activations (int8 activation rounding)
 *   hzk_moe_plan      a permutation of the (token, slot) pairs, experts ascending
 *   hzk_moe_matmul    every sorted row bit-identical to the dense prefill product
 *                     (hz_gpu_matmul_act: the same qmmq_core / qmmf_core tile body) of the
 *                     pair's expert and token, gathered (token rows) and in place (sorted
 *                     rows)
 *   hzk_moe_combine   the CPU's weighted sum in its order (+ sigmoid-gated shared
 *                     expert), within 1e-6 relative
 * Formats: Q4_0, Q8_0, Q4_K, Q6_K, Q5_K, F16 (the float path). TAP; exit 77 (skip) without
 * a GPU.
 */
#include "cpu/moe.h"
#include "gpu-test-util.h"
#include "hz-gpu.h"
#include "hzk.h"
#include "hanzo/engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static GtuTap tap;
static HzGpu *gpu;
static GRand *rng;

static double
rel_err (const float *a, const double *ref, int64_t n)
{
  double se = 0, sr = 0;
  for (int64_t i = 0; i < n; i++)
    {
      se += (a[i] - ref[i]) * (a[i] - ref[i]);
      sr += ref[i] * ref[i];
    }
  const double e = sqrt (se / (sr > 0 ? sr : 1));
  return isfinite (e) ? e : INFINITY;
}

#define CHECK(call) g_assert_cmpint ((call), ==, 0)

/* ---- routing ---------------------------------------------------------------------------- */
static void
test_route (int n_expert, int k, gboolean norm, gboolean ties)
{
  const int nt = 37;
  HzHparams hp = { 0 };
  hp.n_expert = n_expert;
  hp.n_expert_used = k;
  hp.expert_weights_norm = norm;
  float *lg = gtu_randn (rng, (int64_t) nt * n_expert, 2.0);
  if (ties)
    for (int i = 0; i < nt * n_expert; i++)
      lg[i] = 0.25f;
  float *lgd = gtu_up (gpu, lg, sizeof (float) * nt * n_expert);
  int *idd = gtu_up (gpu, NULL, sizeof (int) * nt * k);
  float *wd = gtu_up (gpu, NULL, sizeof (float) * nt * k);
  CHECK (hzk_moe_route (lgd, n_expert, n_expert, nt, k, norm, idd, wd, hz_gpu_stream (gpu)));
  int *ig = g_new (int, nt * k);
  float *wg = g_new (float, nt * k);
  gtu_down (gpu, ig, idd, sizeof (int) * nt * k);
  gtu_down (gpu, wg, wd, sizeof (float) * nt * k);
  int32_t *ic = g_new (int32_t, k);
  float *wc = g_new (float, k);
  gboolean ids_eq = TRUE;
  double se = 0, sr = 0;
  for (int t = 0; t < nt; t++)
    {
      hz_cpu_moe_route (&hp, lg + (size_t) t * n_expert, ic, wc);
      for (int j = 0; j < k; j++)
        {
          ids_eq = ids_eq && ig[t * k + j] == ic[j] && (!ties || ic[j] == j);
          se += ((double) wg[t * k + j] - wc[j]) * ((double) wg[t * k + j] - wc[j]);
          sr += (double) wc[j] * wc[j];
        }
    }
  const double ew = sqrt (se / sr);
  gtu_report (&tap, ids_eq && ew <= 1e-6, "route %d experts, k %d%s%s: ids %s, weights %.2e (< 1e-6)",
          n_expert, k, norm ? ", normalised" : "", ties ? ", all tied" : "",
          ids_eq ? "equal" : "DIFFER", ew);
  hz_gpu_free (gpu, lgd), hz_gpu_free (gpu, idd), hz_gpu_free (gpu, wd);
  g_free (lg), g_free (ig), g_free (wg), g_free (ic), g_free (wc);
}

/* ---- experts ------------------------------------------------------------------------------ */
typedef struct {
  const HzQuantTraits *qt;
  int           ne;
  int64_t       rows, k;
  uint8_t     **host;    /* [ne] ggml-layout matrices */
  HzGpuTensor **t;       /* [ne] */
  void        **ptr;     /* device array of base pointers */
  uint32_t      type;    /* device type */
} Experts;

static void
experts_make (Experts *E, const HzQuantTraits *qt, const uint8_t *pool, int ne, int64_t rows,
              int64_t k)
{
  GError *error = NULL;
  E->qt = qt;
  E->ne = ne;
  E->rows = rows;
  E->k = k;
  E->host = g_new (uint8_t *, ne);
  E->t = g_new (HzGpuTensor *, ne);
  void **p = g_new (void *, ne);
  for (int e = 0; e < ne; e++)
    {
      /* pool blocks in a different sequence per expert (a kernel reading the wrong expert
       * gets different data) */
      const size_t bb = qt->block_bytes, nb = (size_t) rows * (k / qt->block_elems);
      E->host[e] = g_malloc (nb * bb);
      for (size_t j = 0; j < nb; j++)
        memcpy (E->host[e] + j * bb, pool + ((j * 2654435761u + 7919u * (e + 1)) % GPU_TEST_POOL) * bb, bb);
      E->t[e] = hz_gpu_tensor_upload (gpu, qt->type, rows, k, E->host[e], &error);
      g_assert_no_error (error);
      p[e] = (void *) hz_gpu_tensor_data (E->t[e]);
    }
  E->type = hz_gpu_tensor_device_type (E->t[0]);
  E->ptr = gtu_up (gpu, p, sizeof (void *) * ne);
  g_free (p);
}

static void
experts_free (Experts *E)
{
  for (int e = 0; e < E->ne; e++)
    {
      hz_gpu_tensor_free (E->t[e]);
      g_free (E->host[e]);
    }
  hz_gpu_free (gpu, E->ptr);
  g_free (E->t), g_free (E->host);
}

static gboolean
is_float (uint32_t type)
{
  return hzk_ops (type)->is_float;
}

/* fp64 reference of row r of expert e · x */
static double
ref_dot (const Experts *E, int e, int64_t r, const float *x, float *row)
{
  E->qt->to_float (E->host[e] + (size_t) r * hz_quant_row_size (E->qt->type, E->k), row, E->k);
  double s = 0;
  for (int64_t i = 0; i < E->k; i++)
    s += (double) row[i] * x[i];
  return s;
}

static void
test_matvec (const char *fmt, int per_slot)
{
  const HzQuantTraits *qt = hz_quant_traits_by_name (fmt);
  uint8_t *pool = gtu_block_pool (qt, rng);
  const int ne = 6, k = 4;
  const int64_t rows = 1536, K = 2048;
  const int ids[4] = { 5, 0, 3, 0 };   /* a repeated expert, the last and the first */
  Experts E;
  experts_make (&E, qt, pool, ne, rows, K);
  void *st = hz_gpu_stream (gpu);
  const int b = per_slot ? k : 1;
  float *x = gtu_randn (rng, K * b, 1.0);
  float *xd = gtu_up (gpu, x, sizeof (float) * K * b);
  void *act = gtu_up (gpu, NULL, hzk_act_bytes (K, b));
  int *idd = gtu_up (gpu, ids, sizeof ids);
  float *yd = gtu_up (gpu, NULL, sizeof (float) * k * rows), *yr = gtu_up (gpu, NULL, sizeof (float) * rows);
  CHECK (hzk_quantize_act (xd, K, b, act, st));
  const gboolean fl = is_float (E.type);
  CHECK (hzk_moe_matvec_fn (E.type) ((const void *const *) E.ptr, ne, rows, K, idd, k,
                                     fl ? NULL : hzk_act_q (act, K, b),
                                     fl ? NULL : hzk_act_m (act, K, b), xd, per_slot, yd, rows,
                                     st));
  float *yg = g_new (float, k * rows), *yrow = g_new (float, rows), *w = g_new (float, K);
  double *ref = g_new (double, rows);
  gtu_down (gpu, yg, yd, sizeof (float) * k * rows);
  gboolean exact = TRUE;
  double worst = 0;
  for (int s = 0; s < k; s++)
    {
      GError *error = NULL;
      /* the dense matvec of the slot's expert on the slot's activations (batch 1) */
      void *a1 = gtu_up (gpu, NULL, hzk_act_bytes (K, 1));
      const float *xs = xd + (per_slot ? (size_t) s * K : 0);
      CHECK (hzk_quantize_act (xs, K, 1, a1, st));
      g_assert_true (hz_gpu_matvec_act (gpu, E.t[ids[s]], xs, fl ? NULL : a1, yr, &error));
      gtu_down (gpu, yrow, yr, sizeof (float) * rows);
      exact = exact && memcmp (yrow, yg + (size_t) s * rows, sizeof (float) * rows) == 0;
      for (int64_t r = 0; r < rows; r++)
        ref[r] = ref_dot (&E, ids[s], r, x + (per_slot ? (size_t) s * K : 0), w);
      worst = MAX (worst, rel_err (yg + (size_t) s * rows, ref, rows));
      hz_gpu_free (gpu, a1);
    }
  gtu_report (&tap, exact && worst <= 2e-2,
          "moe matvec %s (%s activations): slots %s the dense matvec, vs fp64 %.2e (< 2e-2)",
          fmt, per_slot ? "per-slot" : "shared", exact ? "bit-identical to" : "DIFFER from",
          worst);
  hz_gpu_free (gpu, xd), hz_gpu_free (gpu, act), hz_gpu_free (gpu, idd);
  hz_gpu_free (gpu, yd), hz_gpu_free (gpu, yr);
  experts_free (&E);
  g_free (pool), g_free (x), g_free (yg), g_free (yrow), g_free (w), g_free (ref);
}

/* Grouped prefill: routing of nt random tokens to k of ne experts, the plan, then the
 * grouped product against each expert's dense product over all tokens. */
static void
test_matmul (const char *fmt, int nt, int ne, int k)
{
  const HzQuantTraits *qt = hz_quant_traits_by_name (fmt);
  uint8_t *pool = gtu_block_pool (qt, rng);
  const int64_t rows = 320, K = 1024;
  const int np = nt * k;
  void *st = hz_gpu_stream (gpu);
  GError *error = NULL;
  Experts E;
  experts_make (&E, qt, pool, ne, rows, K);
  const gboolean fl = is_float (E.type);

  /* routing from random logits, with a skew so that some experts get many tokens (more
   * than one tile) and some none */
  float *lg = gtu_randn (rng, (int64_t) nt * ne, 1.0);
  for (int t = 0; t < nt; t++)
    lg[t * ne + 1] += 3.0f;
  float *lgd = gtu_up (gpu, lg, sizeof (float) * nt * ne), *wd = gtu_up (gpu, NULL, sizeof (float) * np);
  int *idd = gtu_up (gpu, NULL, sizeof (int) * np);
  void *plan = gtu_up (gpu, NULL, hzk_moe_plan_bytes (np, ne));
  CHECK (hzk_moe_route (lgd, ne, ne, nt, k, 1, idd, wd, st));
  CHECK (hzk_moe_plan (idd, np, k, ne, plan, st));
  int *ids = g_new (int, np), *pos = g_new (int, np), *inv = g_new (int, np);
  gtu_down (gpu, ids, idd, sizeof (int) * np);
  gtu_down (gpu, pos, hzk_moe_plan_pos (plan, np, ne), sizeof (int) * np);
  gboolean perm = TRUE;
  for (int i = 0; i < np; i++)
    inv[i] = -1;
  for (int i = 0; i < np && perm; i++)
    {
      perm = pos[i] >= 0 && pos[i] < np && inv[pos[i]] < 0;
      if (perm)
        inv[pos[i]] = i;
    }
  for (int p = 1; p < np && perm; p++)
    perm = ids[inv[p - 1]] <= ids[inv[p]];
  int max_cnt = 0;
  for (int e = 0; e < ne; e++)
    {
      int c = 0;
      for (int i = 0; i < np; i++)
        c += ids[i] == e;
      max_cnt = MAX (max_cnt, c);
    }

  /* gathered: token rows of x */
  float *x = gtu_randn (rng, K * nt, 1.0);
  float *xd = gtu_up (gpu, x, sizeof (float) * K * nt);
  void *act = gtu_up (gpu, NULL, hzk_act_bytes (K, nt));
  CHECK (hzk_quantize_act (xd, K, nt, act, st));
  float *yd = gtu_up (gpu, NULL, sizeof (float) * np * rows);
  HzkMoeMatmulFn mm = hzk_moe_matmul_fn (E.type);
  CHECK (mm ((const void *const *) E.ptr, ne, rows, K, plan, np, 1,
             fl ? NULL : hzk_act_q (act, K, nt), fl ? NULL : hzk_act_m (act, K, nt), xd, yd,
             rows, st));
  /* in place: the sorted rows x[token of p] */
  float *xs = g_new (float, K * np);
  for (int p = 0; p < np && perm; p++)
    memcpy (xs + (size_t) p * K, x + (size_t) (inv[p] / k) * K, sizeof (float) * K);
  float *xsd = gtu_up (gpu, xs, sizeof (float) * K * np);
  void *acts = gtu_up (gpu, NULL, hzk_act_bytes (K, np));
  CHECK (hzk_quantize_act (xsd, K, np, acts, st));
  float *ysd = gtu_up (gpu, NULL, sizeof (float) * np * rows);
  CHECK (mm ((const void *const *) E.ptr, ne, rows, K, plan, np, 0,
             fl ? NULL : hzk_act_q (acts, K, np), fl ? NULL : hzk_act_m (acts, K, np), xsd, ysd,
             rows, st));
  float *yg = g_new (float, np * rows), *ysg = g_new (float, np * rows);
  gtu_down (gpu, yg, yd, sizeof (float) * np * rows);
  gtu_down (gpu, ysg, ysd, sizeof (float) * np * rows);
  /* dense products of each expert over all tokens */
  float *dd = gtu_up (gpu, NULL, sizeof (float) * nt * rows), *dense = g_new (float, nt * rows);
  gboolean exact_g = perm, exact_s = perm;
  for (int e = 0; e < ne && perm; e++)
    {
      g_assert_true (hz_gpu_matmul_act (gpu, E.t[e], xd, fl ? NULL : act, nt, dd, rows, &error));
      gtu_down (gpu, dense, dd, sizeof (float) * nt * rows);
      for (int i = 0; i < np; i++)
        if (ids[i] == e)
          {
            const float *want = dense + (size_t) (i / k) * rows;
            exact_g = exact_g && memcmp (yg + (size_t) pos[i] * rows, want, 4 * rows) == 0;
            exact_s = exact_s && memcmp (ysg + (size_t) pos[i] * rows, want, 4 * rows) == 0;
          }
    }
  gtu_report (&tap, perm && exact_g && exact_s,
          "moe grouped matmul %s, %d tokens x %d of %d experts (largest group %d): plan %s, "
          "gathered %s, sorted rows %s", fmt, nt, k, ne, max_cnt,
          perm ? "a grouped permutation" : "BROKEN", exact_g ? "bit-identical" : "DIFFER",
          exact_s ? "bit-identical" : "DIFFER");
  void *bufs[] = { lgd, wd, idd, plan, xd, act, yd, xsd, acts, ysd, dd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  experts_free (&E);
  g_free (pool), g_free (lg), g_free (ids), g_free (pos), g_free (inv), g_free (x);
  g_free (xs), g_free (yg), g_free (ysg), g_free (dense);
}

/* ---- weighted sum --------------------------------------------------------------------------- */
static void
test_combine (int nt, int k, int64_t n, gboolean shared)
{
  const int np = nt * k;
  float *ys = gtu_randn (rng, np * n, 1.0), *w = gtu_randn (rng, np, 0.3), *sh = gtu_randn (rng, nt * n, 1.0);
  float *g = gtu_randn (rng, nt, 2.0);
  int *pos = g_new (int, np);
  for (int i = 0; i < np; i++)
    pos[i] = i;
  for (int i = np - 1; i > 0; i--)    /* a random permutation */
    {
      const int j = g_rand_int_range (rng, 0, i + 1), t = pos[i];
      pos[i] = pos[j];
      pos[j] = t;
    }
  float *ysd = gtu_up (gpu, ys, 4 * np * n), *wd = gtu_up (gpu, w, 4 * np), *shd = gtu_up (gpu, sh, 4 * nt * n);
  float *gd = gtu_up (gpu, g, 4 * nt), *od = gtu_up (gpu, NULL, 4 * nt * n);
  int *posd = gtu_up (gpu, pos, sizeof (int) * np);
  CHECK (hzk_moe_combine (ysd, n, wd, posd, nt, k, n, shared ? shd : NULL, shared ? gd : NULL,
                          od, hz_gpu_stream (gpu)));
  float *o = g_new (float, nt * n);
  double *ref = g_new (double, nt * n);
  gtu_down (gpu, o, od, 4 * nt * n);
  for (int t = 0; t < nt; t++)
    {
      const float sg = 1.0f / (1.0f + expf (-g[t]));
      for (int64_t i = 0; i < n; i++)
        {
          /* engine/cpu/moe.c's order: w0·e0, then + w_j·e_j, then + sigmoid·shared */
          volatile float acc = w[t * k] * ys[(size_t) pos[t * k] * n + i];
          for (int j = 1; j < k; j++)
            {
              volatile float v = w[t * k + j] * ys[(size_t) pos[t * k + j] * n + i];
              acc = acc + v;
            }
          if (shared)
            {
              volatile float v = sh[(size_t) t * n + i] * sg;
              acc = acc + v;
            }
          ref[(size_t) t * n + i] = acc;
        }
    }
  const double e = rel_err (o, ref, nt * n);
  gtu_report (&tap, e <= 1e-6, "moe combine %d tokens x %d%s: %.2e (< 1e-6)", nt, k,
          shared ? " + shared expert" : "", e);
  void *bufs[] = { ysd, wd, shd, gd, od, posd };
  for (size_t i = 0; i < G_N_ELEMENTS (bufs); i++)
    hz_gpu_free (gpu, bufs[i]);
  g_free (ys), g_free (w), g_free (sh), g_free (g), g_free (pos), g_free (o), g_free (ref);
}

int
main (void)
{
  gpu = gtu_open_or_skip ();
  rng = g_rand_new_with_seed (9090);

  test_route (8, 2, TRUE, FALSE);     /* Mixtral */
  test_route (60, 4, FALSE, FALSE);   /* qwen2moe (Qwen1.5-MoE) */
  test_route (128, 8, TRUE, FALSE);   /* qwen3moe 30B-A3B */
  test_route (128, 1, FALSE, FALSE);
  test_route (16, 4, TRUE, TRUE);
  const char *fmts[] = { "q4_0", "q8_0", "q4_K", "q5_K", "q6_K", "f16" };
  for (size_t i = 0; i < G_N_ELEMENTS (fmts); i++)
    for (int per_slot = 0; per_slot < 2; per_slot++)
      test_matvec (fmts[i], per_slot);
  for (size_t i = 0; i < G_N_ELEMENTS (fmts); i++)
    test_matmul (fmts[i], 77, 8, 2);
  test_matmul ("q4_K", 200, 16, 4);
  test_matmul ("q4_K", 1, 128, 8);
  test_combine (1, 8, 2048, FALSE);
  test_combine (33, 4, 1000, TRUE);

  printf ("1..%d\n", tap.n_test);
  g_rand_free (rng);
  hz_gpu_close (gpu);
  return tap.n_fail ? 1 : 0;
}
