/* tests/engine/test-perplexity.c — perplexity by llama-perplexity's method
 * (engine/perplexity.h).
 *
 * Shared tests (../shared, skipped when absent):
 *   - stories-distill files on golden/stories-distill/eval.txt with n_ctx 128 against
 *     llama.cpp's table in golden/stories-distill/README.md (within 0.5%). By default F32 only
 *     (time on the shared 2-core machine); HZ_TEST_SLOW=1 runs all 13.
 *     Q4_0 and Q4_1 are exceptions: llama.cpp's values there come from batched kernels that
 *     disagree with its own one-token logits (see test_distill).
 *   - stories260K quantized here to Q8_0, Q4_0 and Q4_K_M (64-wide rows, 172-wide ffn_down
 *     through the F16 fallback): perplexity on the same text within a sane bound of F32.
 *   - the batch size does not change the result; too-short texts are refused.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hanzo/engine.h"
#include "perplexity.h"
#include "quantize.h"
#include "../hz-test-util.h"

/* llama.cpp b4748, `llama-perplexity -f eval.txt -c 128` (golden/stories-distill/README.md) */
static const struct { const char *type; double ppl; gboolean fast; } table[] = {
  { "F32", 4.4453, TRUE }, { "IQ4_NL", 4.4571, FALSE }, { "IQ4_XS", 4.4579, FALSE },
  { "Q2_K", 4.5708, FALSE }, { "Q3_K_M", 4.4721, FALSE }, { "Q4_0", 5.1660, FALSE },
  { "Q4_1", 5.2015, FALSE }, { "Q4_K_M", 4.4576, FALSE }, { "Q5_0", 4.4489, FALSE },
  { "Q5_1", 4.4467, FALSE }, { "Q5_K_M", 4.4503, FALSE }, { "Q6_K", 4.4488, FALSE },
  { "Q8_0", 4.4459, FALSE },
};

static char *
eval_text (gsize *len)
{
  g_autofree char *path = hz_test_shared_path ("golden/stories-distill/eval.txt");
  if (!path)
    return NULL;
  char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, len, NULL));
  return text;
}

static double
ppl_of (const char *model_path, const char *text, gsize len, guint n_ctx, guint n_batch)
{
  g_autoptr (GError) error = NULL;
  HzModelParams mp;
  hz_model_params_init (&mp);
  mp.n_threads = 1;  /* a loaded shared machine: spinning workers would only wait */
  g_autoptr (HzModel) m = hz_model_load (model_path, &mp, &error);
  g_assert_no_error (error);
  HzPerplexityParams pp;
  hz_perplexity_params_init (&pp);
  pp.n_ctx = n_ctx;
  pp.n_batch = n_batch;
  HzPerplexityResult r;
  g_assert_true (hz_perplexity (m, text, (gssize) len, &pp, NULL, NULL, &r, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (r.n_scored, ==, r.n_chunks * (n_ctx - n_ctx / 2 - 1));
  g_assert_true (isfinite (r.ppl) && r.ppl > 1.0);
  return r.ppl;
}

static void
test_distill (gconstpointer data)
{
  const int i = GPOINTER_TO_INT (data);
  if (!table[i].fast && !g_getenv ("HZ_TEST_SLOW"))
    {
      g_test_skip ("slow on the shared machine; set HZ_TEST_SLOW=1 to run every file");
      return;
    }
  g_autofree char *rel = g_strdup_printf ("models/stories-distill/stories-distill-%s.gguf", table[i].type);
  g_autofree char *model = hz_test_shared_path (rel);
  if (!model)
    return;
  gsize len;
  g_autofree char *text = eval_text (&len);
  if (!text)
    return;
  double ppl = ppl_of (model, text, len, 128, 128);
  double rel_err = fabs (ppl - table[i].ppl) / table[i].ppl;
  g_test_message ("stories-distill %s: PPL %.4f, llama.cpp %.4f (%+.3f%%)", table[i].type, ppl,
                  table[i].ppl, 100 * (ppl - table[i].ppl) / table[i].ppl);
  if (strcmp (table[i].type, "Q4_0") == 0 || strcmp (table[i].type, "Q4_1") == 0)
    {
      /* llama.cpp's table values for these two files come from its batched kernels, which
       * for Q4_0/Q4_1 disagree with its own one-token path by up to 4.9 logits
       * (golden/stories-distill/Q4_0|Q4_1/logits_kv_f32_consistency.txt: "whole-sequence-
       * one-batch" max_abs_diff 4.87 / 4.73, against 0 to 0.09 for every other type). Our
       * logits follow the one-token path (the greedy goldens), so our PPL is the
       * consistent one: assert it is sane (close to F32) instead of matching the table. */
      if (rel_err > 0.005)
        g_test_message ("  (llama.cpp's %s value is an outlier; not asserted)", table[i].type);
      g_assert_cmpfloat (ppl, <, table[0].ppl * 1.05);
      return;
    }
  g_assert_cmpfloat (rel_err, <=, 0.005);
}

static void
test_stories260k_quantized (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories260K.gguf");
  if (!src)
    return;
  gsize len;
  g_autofree char *text = eval_text (&len);
  if (!text)
    return;
  /* stories260K's GGUF says context 128; the eval text is its own samples */
  const double f32 = ppl_of (src, text, len, 128, 128);
  g_test_message ("stories260K F32: PPL %.4f", f32);
  /* Bounds on PPL(type) / PPL(F32). Measured (hanzo perplexity -c 128 on eval.txt, also via
   * --isq, which gives bit-identical logits: tests/engine/test-load.c): F32 4.3479, Q8_0
   * 4.3480 (+0.002%), Q4_K_M 4.4277 (+1.8%), Q4_0 4.6453 (+6.8%). Q8_0 keeps 8 bits per
   * weight (relative error ~1/254 of each block's max) and changes perplexity by far less
   * than 1% on any model reported for llama.cpp; 4-bit formats cost a few percent, more on
   * a model this small (64-wide rows, 172-wide ffn_down through the F16/Q5_0 fallback), so
   * 10% (K-quants) and 25% (Q4_0, which loses most here as in llama.cpp's stories-distill
   * table) flag a broken quantizer while leaving room for the format's own loss. No type
   * may be "better" than F32 by more than 3% (sampling noise of 8064 scored tokens). */
  static const struct { HzFtype ft; double bound; } q[] = {
    { HZ_FTYPE_Q8_0, 1.01 }, { HZ_FTYPE_Q4_0, 1.25 }, { HZ_FTYPE_Q4_K_M, 1.10 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (q); i++)
    {
      g_autoptr (GError) error = NULL;
      g_autofree char *out = g_strdup_printf ("%s/hz-test-ppl-%d.gguf", g_get_tmp_dir (), (int) getpid ());
      HzQuantizeParams p;
      hz_quantize_params_init (&p);
      p.ftype = q[i].ft;
      g_assert_true (hz_quantize_file (src, out, &p, NULL, &error));
      g_assert_no_error (error);
      double v = ppl_of (out, text, len, 128, 128);
      g_test_message ("stories260K %s: PPL %.4f (%+.2f%% vs F32)", hz_ftype_info (q[i].ft)->name, v,
                      100 * (v - f32) / f32);
      g_assert_cmpfloat (v, <=, f32 * q[i].bound);
      g_assert_cmpfloat (v, >=, f32 * 0.97);
      g_unlink (out);
    }
}

static void
test_batch_invariance (void)
{
  g_autofree char *src = hz_test_shared_path ("models/stories260K.gguf");
  if (!src)
    return;
  gsize len;
  g_autofree char *text = eval_text (&len);
  if (!text)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) m = hz_model_load (src, NULL, &error);
  g_assert_no_error (error);
  HzPerplexityParams pp;
  hz_perplexity_params_init (&pp);
  pp.n_ctx = 64;
  pp.n_chunks = 6;
  HzPerplexityResult a, b;
  pp.n_batch = 64;
  g_assert_true (hz_perplexity (m, text, (gssize) len, &pp, NULL, NULL, &a, NULL, &error));
  pp.n_batch = 7;  /* batches that straddle the scored half */
  g_assert_true (hz_perplexity (m, text, (gssize) len, &pp, NULL, NULL, &b, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (a.n_chunks, ==, 6);
  g_assert_cmpuint (a.n_scored, ==, 6 * 31);
  g_assert_cmpfloat (fabs (a.ppl - b.ppl), <=, 1e-4 * a.ppl);

  /* too short: fewer than 2 * n_ctx tokens */
  HzPerplexityResult r;
  pp.n_ctx = 128;
  g_assert_false (hz_perplexity (m, "Once upon a time.", -1, &pp, NULL, NULL, &r, NULL, &error));
  g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/perplexity/batch-invariance", test_batch_invariance);
  g_test_add_func ("/perplexity/stories260K-quantized", test_stories260k_quantized);
  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    {
      g_autofree char *path = g_strdup_printf ("/perplexity/stories-distill/%s", table[i].type);
      g_test_add_data_func (path, GINT_TO_POINTER ((int) i), test_distill);
    }
  return g_test_run ();
}
