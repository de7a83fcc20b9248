/* tests/gpu/test-qmatvec.c — every weight format of the table through the GPU matvec
 * (hz_gpu_matvec) against the CPU, at the decode shapes of a 7B model.
 *
 * For each format with a CPU vec_dot (kinds W and WI of formats.def), shapes (rows x K)
 * 4096x4096, 11008x4096, 4096x11008, 32000x4096 and batches 1..8 (all on the first shape,
 * 1 and 8 on the others), on 257 sampled rows (first and last included) of each output:
 *
 *  emul  the GPU's own arithmetic redone on the CPU in fp64: dequantized weights (the
 *        CPU to_float; for the F16 fallback, rounded to fp16) times the activations
 *        quantized exactly as hzk_quantize_act does (int8 per 32, d = amax/127,
 *        q = round(x/d)); float formats use x itself. Any decoding error shows here.
 *        Threshold 1e-4 (integer formats: fp32 accumulation of d·d_a·Σ + m·s_a terms),
 *        1e-5 (float formats).
 *  cpu   the CPU table's vec_dot with x quantized to the format's vec_dot_type (what the
 *        CPU backend computes). Thresholds: F32 1e-5; F16 2e-3 and BF16 1e-2 (the CPU
 *        rounds x to 16 bits); integer formats 3e-2 (both sides quantize x to int8, the
 *        K-quants' Q8_K with one scale per 256, the GPU per 32).
 *  Errors are norm-wise: ||y_gpu − y_ref|| / ||y_ref|| over the sampled rows and columns.
 *
 * matmul  the product of several tokens (hz_gpu_matmul_act: qmmq_core, float formats
 *         qmmf_core) of 1000x4096 against 77 tokens (and 200x4128 against 9 where the
 *         format takes K % 256 != 0), output rows 3 floats wider than the matrix: the same
 *         two references and thresholds on 61 sampled rows and every token (the prefill
 *         reads activations quantized per token exactly as the matvec does).
 *         With --mm (matmul checks only): 1000x4096 against 1, 2, 3, 5, 8, 9, 16, 17, 31,
 *         32, 33, 48, 64, 65, 128 and 512 tokens (the split-K products of up to 64 tokens,
 *         both tensor-core tiles, their token tails) and the K tail against 1, 9, 40 and
 *         64; and, up to 64 tokens, row invariance: the first and the last token's outputs
 *         bit-identical to a product of that token alone (the serving step's row-invariant
 *         mode relies on it).
 * TAP output; exit 77 (skip) without a GPU. HZ_GPU_TEST_FORMATS=q4_0,q8_0 restricts the
 * formats, HZ_GPU_TEST_QUICK=1 runs the first shape only, HZ_GPU_TEST_MM_ONLY=1 the matmul
 * checks only (at the default token counts).
 */
#include "hz-gpu.h"
#include "gpu-test-util.h"
#include "hzk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int64_t rows, k; } Shape;
static const Shape shapes[] = { { 4096, 4096 }, { 11008, 4096 }, { 4096, 11008 }, { 32000, 4096 } };
#define N_SAMPLE 257

static int n_test, n_fail;

static gboolean
wanted (const char *name)
{
  const char *f = g_getenv ("HZ_GPU_TEST_FORMATS");
  if (!f || !*f)
    return TRUE;
  gchar **v = g_strsplit (f, ",", -1);
  gboolean yes = FALSE;
  for (gchar **p = v; *p && !yes; p++)
    yes = g_ascii_strcasecmp (*p, name) == 0;
  g_strfreev (v);
  return yes;
}

/* x quantized as the GPU does (hzk_quantize_act), dequantized in double */
static void
emulate_act (const float *x, int64_t k, double *out)
{
  for (int64_t b = 0; b < k; b += 32)
    {
      float amax = 0;
      for (int j = 0; j < 32; j++)
        amax = fmaxf (amax, fabsf (x[b + j]));
      const float d = amax / 127.0f;
      for (int j = 0; j < 32; j++)
        out[b + j] = amax == 0.0f ? 0.0 : (double) roundf (x[b + j] / d) * (double) d;
    }
}

static void
check_one (HzGpu *gpu, const HzQuantTraits *qt, const uint8_t *pool, Shape s, const int *batches,
           int n_batches, GRand *rng)
{
  GError *error = NULL;
  const int64_t rows = s.rows, k = s.k;
  const size_t rs = hz_quant_row_size (qt->type, k);
  uint8_t *w = gtu_matrix (qt, pool, rows, k);
  HzGpuTensor *t = hz_gpu_tensor_upload (gpu, qt->type, rows, k, w, &error);
  if (!t)
    {
      printf ("not ok %d - %s %" G_GINT64_FORMAT "x%" G_GINT64_FORMAT ": upload: %s\n", ++n_test,
              qt->name, rows, k, error->message);
      n_fail++;
      g_clear_error (&error);
      g_free (w);
      return;
    }
  const uint32_t dt = hz_gpu_tensor_device_type (t);
  const gboolean fallback = dt != qt->type;
  const HzkOps *ops = hzk_ops (dt);
  const gboolean is_float = ops->is_float;
  const HzQuantTraits *vt = hz_quant_traits (qt->vec_dot_type);

  /* sampled rows, dequantized once (fp16-rounded for the fallback) */
  int64_t sample[N_SAMPLE];
  float *wf = g_malloc (sizeof (float) * N_SAMPLE * k);
  for (int i = 0; i < N_SAMPLE; i++)
    {
      sample[i] = i == N_SAMPLE - 1 ? rows - 1 : (int64_t) i * rows / (N_SAMPLE - 1);
      qt->to_float (w + (size_t) sample[i] * rs, wf + (size_t) i * k, k);
      if (fallback)
        for (int64_t j = 0; j < k; j++)
          wf[(size_t) i * k + j] = hz_fp16_to_fp32 (hz_fp32_to_fp16 (wf[(size_t) i * k + j]));
    }

  const int max_b = 8;
  float *x = g_malloc (sizeof (float) * max_b * k), *y = g_malloc (sizeof (float) * max_b * rows);
  double *xe = g_malloc (sizeof (double) * k);
  uint8_t *xa = g_malloc (hz_quant_row_size (vt->type, k));
  float *xd = hz_gpu_alloc (gpu, sizeof (float) * max_b * k, &error);
  float *yd = hz_gpu_alloc (gpu, sizeof (float) * max_b * rows, &error);
  g_assert_no_error (error);

  for (int bi = 0; bi < n_batches; bi++)
    {
      const int batch = batches[bi];
      for (int64_t i = 0; i < (int64_t) batch * k; i++)
        x[i] = (float) gtu_normal (rng);
      double se_e = 0, sr_e = 0, se_c = 0, sr_c = 0;
      gboolean ok = hz_gpu_upload (gpu, xd, x, sizeof (float) * batch * k, &error)
                    && hz_gpu_matvec (gpu, t, xd, yd, batch, &error)
                    && hz_gpu_download (gpu, y, yd, sizeof (float) * batch * rows, &error);
      for (int c = 0; ok && c < batch; c++)
        {
          const float *xc = x + (size_t) c * k;
          if (is_float)
            for (int64_t j = 0; j < k; j++)
              xe[j] = xc[j];
          else
            emulate_act (xc, k, xe);
          vt->from_float (xc, xa, k);
          for (int i = 0; i < N_SAMPLE; i++)
            {
              double ref = 0;
              const float *wr = wf + (size_t) i * k;
              for (int64_t j = 0; j < k; j++)
                ref += (double) wr[j] * xe[j];
              float cpu = 0;
              qt->vec_dot ((int) k, &cpu, w + (size_t) sample[i] * rs, xa);
              const double g = y[(size_t) c * rows + sample[i]];
              se_e += (g - ref) * (g - ref);
              sr_e += ref * ref;
              se_c += (g - cpu) * (g - cpu);
              sr_c += (double) cpu * cpu;
            }
        }
      if (!ok)
        {
          printf ("not ok %d - %s: %s\n", ++n_test, qt->name, error->message);
          n_fail++;
          g_clear_error (&error);
          break;
        }
      const double e_emul = sqrt (se_e / (sr_e > 0 ? sr_e : 1)), e_cpu = sqrt (se_c / (sr_c > 0 ? sr_c : 1));
      const double t_emul = is_float ? 1e-5 : 1e-4;
      const double t_cpu = qt->type == HZ_TYPE_F32 ? 1e-5 : qt->type == HZ_TYPE_F16 ? 2e-3
                           : qt->type == HZ_TYPE_BF16 ? 1e-2 : 3e-2;
      const gboolean pass = e_emul <= t_emul && e_cpu <= t_cpu && isfinite (e_emul) && isfinite (e_cpu);
      printf ("%s %d - %-7s %5" G_GINT64_FORMAT "x%-5" G_GINT64_FORMAT " b%d  emul %.2e (< %.0e)  cpu %.2e (< %.0e)  [%s]\n",
              pass ? "ok" : "not ok", ++n_test, qt->name, rows, k, batch, e_emul, t_emul, e_cpu,
              t_cpu, fallback ? "f16 fallback" : "native");
      n_fail += !pass;
    }
  fflush (stdout);
  hz_gpu_free (gpu, xd);
  hz_gpu_free (gpu, yd);
  hz_gpu_tensor_free (t);
  g_free (x);
  g_free (y);
  g_free (xe);
  g_free (xa);
  g_free (wf);
  g_free (w);
}

/* The prefill matmul (hz_gpu_matmul_act -> qmmq_core / qmmf_core) of `rows` x k against
 * n_tok tokens, output rows ldy = rows + 3 apart (checks the stride), against the same two
 * references as the matvec on N_MM_SAMPLE sampled rows and every token. */
#define N_MM_SAMPLE 61
static void
check_mm (HzGpu *gpu, const HzQuantTraits *qt, const uint8_t *pool, int64_t rows, int64_t k,
          int n_tok, gboolean invariance, GRand *rng)
{
  GError *error = NULL;
  const size_t rs = hz_quant_row_size (qt->type, k);
  const int64_t ldy = rows + 3;
  uint8_t *w = gtu_matrix (qt, pool, rows, k);
  HzGpuTensor *t = hz_gpu_tensor_upload (gpu, qt->type, rows, k, w, &error);
  g_assert_no_error (error);
  const uint32_t dt = hz_gpu_tensor_device_type (t);
  const gboolean fallback = dt != qt->type, is_float = hzk_ops (dt)->is_float;
  const HzQuantTraits *vt = hz_quant_traits (qt->vec_dot_type);
  float *x = g_malloc (sizeof (float) * n_tok * k), *y = g_malloc (sizeof (float) * n_tok * ldy);
  for (int64_t i = 0; i < (int64_t) n_tok * k; i++)
    x[i] = (float) gtu_normal (rng);
  float *xd = hz_gpu_alloc (gpu, sizeof (float) * n_tok * k, &error);
  float *yd = hz_gpu_alloc (gpu, sizeof (float) * n_tok * ldy, &error);
  g_assert_no_error (error);
  gboolean ok = hz_gpu_upload (gpu, xd, x, sizeof (float) * n_tok * k, &error)
                && hz_gpu_matmul_act (gpu, t, xd, NULL, n_tok, yd, ldy, &error)
                && hz_gpu_download (gpu, y, yd, sizeof (float) * n_tok * ldy, &error);
  /* row invariance: token c alone gives the same outputs, bit for bit */
  int n_diff = -1;
  if (ok && invariance && n_tok <= 64)
    {
      float *y1 = g_malloc (sizeof (float) * rows);
      n_diff = 0;
      for (int c = 0; ok && c < n_tok; c += n_tok > 1 ? n_tok - 1 : 1)
        {
          ok = hz_gpu_matmul_act (gpu, t, xd + (size_t) c * k, NULL, 1, yd, rows, &error)
               && hz_gpu_download (gpu, y1, yd, sizeof (float) * rows, &error);
          for (int64_t r = 0; ok && r < rows; r++)
            n_diff += memcmp (&y1[r], &y[(size_t) c * ldy + r], sizeof (float)) != 0;
        }
      g_free (y1);
    }
  double se_e = 0, sr_e = 0, se_c = 0, sr_c = 0;
  float *wf = g_malloc (sizeof (float) * k);
  double *xe = g_malloc (sizeof (double) * n_tok * k);
  uint8_t *xa = g_malloc (hz_quant_row_size (vt->type, k) * n_tok);
  const size_t xas = hz_quant_row_size (vt->type, k);
  for (int c = 0; ok && c < n_tok; c++)
    {
      const float *xc = x + (size_t) c * k;
      if (is_float)
        for (int64_t j = 0; j < k; j++)
          xe[(size_t) c * k + j] = xc[j];
      else
        emulate_act (xc, k, xe + (size_t) c * k);
      vt->from_float (xc, xa + (size_t) c * xas, k);
    }
  for (int i = 0; ok && i < N_MM_SAMPLE; i++)
    {
      const int64_t r = i == N_MM_SAMPLE - 1 ? rows - 1 : (int64_t) i * rows / (N_MM_SAMPLE - 1);
      qt->to_float (w + (size_t) r * rs, wf, k);
      if (fallback)
        for (int64_t j = 0; j < k; j++)
          wf[j] = hz_fp16_to_fp32 (hz_fp32_to_fp16 (wf[j]));
      for (int c = 0; c < n_tok; c++)
        {
          double ref = 0;
          for (int64_t j = 0; j < k; j++)
            ref += (double) wf[j] * xe[(size_t) c * k + j];
          float cpu = 0;
          qt->vec_dot ((int) k, &cpu, w + (size_t) r * rs, xa + (size_t) c * xas);
          const double g = y[(size_t) c * ldy + r];
          se_e += (g - ref) * (g - ref);
          sr_e += ref * ref;
          se_c += (g - cpu) * (g - cpu);
          sr_c += (double) cpu * cpu;
        }
    }
  if (!ok)
    {
      printf ("not ok %d - matmul %s: %s\n", ++n_test, qt->name, error->message);
      n_fail++;
      g_clear_error (&error);
    }
  else
    {
      const double e_emul = sqrt (se_e / (sr_e > 0 ? sr_e : 1)), e_cpu = sqrt (se_c / (sr_c > 0 ? sr_c : 1));
      const double t_emul = is_float ? 1e-5 : 1e-4;
      const double t_cpu = qt->type == HZ_TYPE_F32 ? 1e-5 : qt->type == HZ_TYPE_F16 ? 2e-3
                           : qt->type == HZ_TYPE_BF16 ? 1e-2 : 3e-2;
      const gboolean pass = e_emul <= t_emul && e_cpu <= t_cpu && isfinite (e_emul) && isfinite (e_cpu)
                            && n_diff <= 0;
      printf ("%s %d - matmul %-7s %5" G_GINT64_FORMAT "x%-5" G_GINT64_FORMAT " %3d tokens  emul %.2e (< %.0e)  cpu %.2e (< %.0e)  [%s]",
              pass ? "ok" : "not ok", ++n_test, qt->name, rows, k, n_tok, e_emul, t_emul, e_cpu,
              t_cpu, fallback ? "f16 fallback" : "native");
      if (n_diff >= 0)
        printf ("  single-token outputs differing: %d", n_diff);
      printf ("\n");
      n_fail += !pass;
    }
  fflush (stdout);
  hz_gpu_free (gpu, xd);
  hz_gpu_free (gpu, yd);
  hz_gpu_tensor_free (t);
  g_free (x), g_free (y), g_free (wf), g_free (xe), g_free (xa), g_free (w);
}

int
main (int argc, char **argv)
{
  HzGpu *gpu = gtu_open_or_skip ();
  GRand *rng = g_rand_new_with_seed (20250204);
  const gboolean quick = g_getenv ("HZ_GPU_TEST_QUICK") != NULL;
  const gboolean mm_sweep = argc > 1 && strcmp (argv[1], "--mm") == 0;
  const gboolean mm_only = mm_sweep || g_getenv ("HZ_GPU_TEST_MM_ONLY") != NULL;
  /* --mm: token counts around the tiles' and the split-K path's edges */
  static const int mm_tok[] = { 1, 2, 3, 5, 8, 9, 16, 17, 31, 32, 33, 48, 64, 65, 128, 512 };
  static const int mm_tail_tok[] = { 1, 9, 40, 64 };
  const int all_b[] = { 1, 2, 3, 4, 5, 6, 7, 8 }, some_b[] = { 1, 8 };
  GString *fallbacks = g_string_new (NULL);
  for (size_t i = 0; i < hz_quant_n_formats (); i++)
    {
      const HzQuantTraits *qt = hz_quant_format (i);
      if (!qt->vec_dot || !wanted (qt->name))
        continue;                      /* activation-only formats */
      if (!hzk_ops (qt->type)->available)
        g_string_append_printf (fallbacks, " %s", qt->name);
      uint8_t *pool = gtu_block_pool (qt, rng);
      for (size_t si = 0; si < G_N_ELEMENTS (shapes) && (si == 0 || !quick) && !mm_only; si++)
        check_one (gpu, qt, pool, shapes[si], si == 0 ? all_b : some_b, si == 0 ? 8 : 2, rng);
      /* prefill matmul: row and token tails; a K tail (not a whole 256-element tile) where
       * the format allows one */
      const HzkOps *dops = hzk_ops (hzk_ops (qt->type)->available ? qt->type : HZ_TYPE_F16);
      const gboolean k_tail = 4128 % dops->k_multiple == 0 && 4128 % qt->block_elems == 0;
      if (mm_sweep)
        {
          for (size_t j = 0; j < G_N_ELEMENTS (mm_tok); j++)
            check_mm (gpu, qt, pool, 1000, 4096, mm_tok[j], TRUE, rng);
          for (size_t j = 0; k_tail && j < G_N_ELEMENTS (mm_tail_tok); j++)
            check_mm (gpu, qt, pool, 200, 4128, mm_tail_tok[j], TRUE, rng);
        }
      else
        {
          check_mm (gpu, qt, pool, 1000, 4096, 77, FALSE, rng);
          if (k_tail)
            check_mm (gpu, qt, pool, 200, 4128, 9, TRUE, rng);
        }
      g_free (pool);
    }
  printf ("# formats on the F16 fallback (no device decoder yet):%s\n", fallbacks->str);
  printf ("1..%d\n", n_test);
  g_string_free (fallbacks, TRUE);
  g_rand_free (rng);
  hz_gpu_close (gpu);
  return n_fail ? 1 : 0;
}
