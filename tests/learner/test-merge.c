/* tests/learner/test-merge.c — `hanzo learn merge`'s core: the merged model's logits equal
 * the base + adapter logits (F32 merge: to float rounding; Q8_0 re-quantization: within the
 * format's error), for a llama (q/k row order) and a qwen2 model. */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include "merge.h"
#include "tiny-llama.h"

static double
max_logit_diff (const char *arch, HzType base_type, int merge_type, double *scale)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.arch = arch;
  spec.type = base_type;
  g_autofree char *path = tiny_llama_write (&spec);
  g_autoptr (GError) error = NULL;
  g_autoptr (HzTrainBase) base = hz_train_base_open (path, &error);
  g_assert_no_error (error);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 4;
  cfg.alpha = 8;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
  hz_lora_init_peft (lora, 3);
  for (gsize i = 0; i < lora->n_params; i++)   /* B != 0 */
    lora->params[i] += 0.1f * sinf (0.37f * (float) i);
  g_autofree char *out = g_strdup_printf ("%s.merged.gguf", path);
  g_assert_true (hz_lora_merge_gguf (path, lora, merge_type, out, &error));
  g_assert_no_error (error);
  g_autoptr (HzTrainBase) merged = hz_train_base_open (out, &error);
  g_assert_no_error (error);
  const int32_t toks[8] = { 1, 5, 9, 13, 2, 40, 7, 3 };
  const int64_t T = 8, V = base->llm->hp.n_vocab;
  HzTrainGraph_f32 *ga = hz_train_graph_new_f32 (base->llm, lora, T, FALSE);
  HzTrainGraph_f32 *gb = hz_train_graph_new_f32 (merged->llm, lora, T, FALSE);
  const float *la = hz_train_forward_f32 (ga, lora->params, toks, T);
  const float *lb = hz_train_forward_f32 (gb, NULL, toks, T);
  double diff = 0, s = 0;
  for (int64_t i = 0; i < T * V; i++)
    {
      diff = MAX (diff, fabs (la[i] - lb[i]));
      s = MAX (s, fabs (la[i]));
    }
  *scale = s;
  hz_train_graph_free_f32 (ga);
  hz_train_graph_free_f32 (gb);
  g_unlink (path);
  g_unlink (out);
  return diff;
}

static void
test_merge_f32 (void)
{
  const char *arches[2] = { "llama", "qwen2" };
  for (int a = 0; a < 2; a++)
    {
      double scale;
      const double d = max_logit_diff (arches[a], HZ_TYPE_F32, -1, &scale);
      g_test_message ("%s F32 merge: max |logit diff| %.2e (max |logit| %.2f)", arches[a], d, scale);
      g_assert_cmpfloat (d, <, 1e-4 * MAX (1.0, scale));
    }
}

static void
test_merge_q8_0 (void)
{
  double scale;
  const double d = max_logit_diff ("llama", HZ_TYPE_Q8_0, HZ_TYPE_Q8_0, &scale);
  g_test_message ("Q8_0 base, Q8_0 merge: max |logit diff| %.2e (max |logit| %.2f)", d, scale);
  g_assert_cmpfloat (d, <, 2e-2 * MAX (1.0, scale));
}

static void
test_merge_mismatch (void)
{
  TinyLlamaSpec spec, other;
  tiny_llama_spec_init (&spec);
  other = spec;
  other.n_ff = 96;
  g_autofree char *path = tiny_llama_write (&spec);
  g_autoptr (HzTrainBase) b2 = tiny_llama_open (&other);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.targets = HZ_LORA_BIT (HZ_LORA_UP);
  g_autoptr (HzLora) lora = hz_lora_new (&b2->llm->hp, &cfg, NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char *out = g_strdup_printf ("%s.bad.gguf", path);
  g_assert_false (hz_lora_merge_gguf (path, lora, -1, out, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_MISMATCH);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/merge/f32", test_merge_f32);
  g_test_add_func ("/learner/merge/q8_0", test_merge_q8_0);
  g_test_add_func ("/learner/merge/mismatch", test_merge_mismatch);
  return g_test_run ();
}
