/* tests/learner/test-model-grad.c — the full training graph of a random 2-layer model:
 * LoRA gradients on all seven projections against central finite differences in double
 * precision (f64 backward: relative error < 1e-4; f32 backward: < 1e-2), for llama (GQA,
 * normal RoPE), qwen2 (q/k/v biases, NeoX RoPE), qwen3 (q/k norms) and a Q8_0 base;
 * activation recomputation gives the same gradients; accumulation over micro-batches
 * equals the whole batch; the training forward matches the engine's serving forward; the
 * float graph gives bit-identical logits, loss and gradients on 1, 2 and 3 threads. */
#include <glib.h>
#include <string.h>
#include "model-train.h"
#include "train-ops.h"
#include "cpu/forward.h"
#include "grad-check.h"
#include "tiny-llama.h"

typedef struct {
  HzTrainGraph_f64 *g;
  double *params;
  const int32_t *tok, *tgt;
  int64_t T;
  double weight;
} ModelCase;

static double
model_loss (gpointer p)
{
  ModelCase *c = p;
  return c->weight * hz_train_sft_step_f64 (c->g, c->params, NULL, c->tok, c->tgt, c->T, 0, NULL);
}

/* random adapters: B must be non-zero or the gradient of A vanishes */
static void
randomize_lora (HzLora *lora, guint32 seed)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  hz_lora_init_peft (lora, seed);
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s)
          for (int64_t i = 0; i < s->n_out * lora->config.r; i++)
            lora->params[s->off_b + i] = (float) g_rand_double_range (rng, -0.3, 0.3);
      }
}

static void
check_model (const char *arch, HzType type, int r)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.arch = arch;
  spec.type = type;
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = r;
  cfg.alpha = 16;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
  g_assert_no_error (error);
  randomize_lora (lora, 77);

  enum { T = 7 };
  const int32_t tok[T] = { 1, 5, 9, 33, 2, 47, 12 };
  const int32_t tgt[T] = { -100, 9, 33, -100, 47, 12, 3 };
  g_autofree double *params = hz_lora_params_f64 (lora);
  HzTrainGraph_f64 *g = hz_train_graph_new_f64 (base->llm, lora, T, FALSE);
  int64_t nv = 0;
  g_autofree double *grads = g_new0 (double, lora->n_params);
  hz_train_sft_step_f64 (g, params, NULL, tok, tgt, T, 0, &nv);
  g_assert_cmpint (nv, ==, 5);
  const double loss = hz_train_sft_step_f64 (g, params, grads, tok, tgt, T, 1.0 / nv, NULL) / nv;
  g_assert_true (isfinite (loss) && loss > 0);

  /* f32 path */
  HzTrainGraph_f32 *gf = hz_train_graph_new_f32 (base->llm, lora, T, FALSE);
  hz_lora_zero_grad (lora);
  const double loss32 = hz_train_sft_step_f32 (gf, lora->params, lora->grads, tok, tgt, T,
                                               1.0 / nv, NULL) / nv;
  g_assert_cmpfloat (fabs (loss32 - loss), <, 1e-4 * loss);
  g_autofree double *grads32 = to_f64 (lora->grads, lora->n_params);

  /* indices: a few entries of every A and B of every layer and target */
  GArray *idx = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr (GRand) rng = g_rand_new_with_seed (5);
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        for (int k = 0; k < 3; k++)
          {
            gsize ia = s->off_a + g_rand_int_range (rng, 0, (gint32) (r * s->n_in));
            gsize ib = s->off_b + g_rand_int_range (rng, 0, (gint32) (r * s->n_out));
            g_array_append_val (idx, ia);
            g_array_append_val (idx, ib);
          }
      }
  ModelCase c = { g, params, tok, tgt, T, 1.0 / nv };
  g_autofree char *what = g_strdup_printf ("%s %s r%d: LoRA params", arch,
                                           hz_quant_traits (type)->name, r);
  grad_check (what, model_loss, &c, params, lora->n_params, (gsize *) idx->data, idx->len,
              grads, grads32, 1e-5, 1e-4, 1e-2);
  g_array_free (idx, TRUE);

  /* activation recomputation: bit-identical gradients */
  HzTrainGraph_f64 *gr = hz_train_graph_new_f64 (base->llm, lora, T, TRUE);
  g_autofree double *grads_r = g_new0 (double, lora->n_params);
  const double loss_r = hz_train_sft_step_f64 (gr, params, grads_r, tok, tgt, T, 1.0 / nv, NULL) / nv;
  g_assert_cmpfloat (loss_r, ==, loss);
  g_assert_cmpmem (grads_r, lora->n_params * sizeof (double), grads, lora->n_params * sizeof (double));

  hz_train_graph_free_f64 (gr);
  hz_train_graph_free_f64 (g);
  hz_train_graph_free_f32 (gf);
}

static void
test_llama (void)
{
  check_model ("llama", HZ_TYPE_F32, 4);
}

static void
test_qwen2 (void)
{
  check_model ("qwen2", HZ_TYPE_F32, 3);
}

static void
test_qwen3 (void)
{
  check_model ("qwen3", HZ_TYPE_F32, 2);
}

static void
test_q8_0_base (void)
{
  check_model ("llama", HZ_TYPE_Q8_0, 4);
}

/* Gradients accumulated over two micro-batches with weight 1/(total tokens) equal the
 * gradient of the mean loss over both sequences; zero_grad resets. */
static void
test_accumulation (void)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, NULL);
  randomize_lora (lora, 3);
  const int32_t t1[4] = { 4, 8, 15, 16 }, y1[4] = { 8, 15, 16, 23 };
  const int32_t t2[6] = { 42, 4, 8, 15, 16, 23 }, y2[6] = { -100, 8, 15, 16, 23, 42 };
  const double w = 1.0 / (4 + 5);
  HzTrainGraph_f64 *g = hz_train_graph_new_f64 (base->llm, lora, 6, TRUE);
  g_autofree double *p = hz_lora_params_f64 (lora);
  g_autofree double *acc = g_new0 (double, lora->n_params);
  g_autofree double *g1 = g_new0 (double, lora->n_params), *g2 = g_new0 (double, lora->n_params);
  const double l1 = hz_train_sft_step_f64 (g, p, acc, t1, y1, 4, w, NULL);
  const double l2 = hz_train_sft_step_f64 (g, p, acc, t2, y2, 6, w, NULL);
  hz_train_sft_step_f64 (g, p, g1, t1, y1, 4, w, NULL);
  hz_train_sft_step_f64 (g, p, g2, t2, y2, 6, w, NULL);
  double max_abs = 0;
  for (gsize i = 0; i < lora->n_params; i++)
    {
      g_assert_cmpfloat_with_epsilon (acc[i], g1[i] + g2[i], 1e-14);
      max_abs = MAX (max_abs, fabs (acc[i]));
    }
  g_assert_cmpfloat (max_abs, >, 1e-6);
  g_assert_true (isfinite (l1 + l2));
  hz_train_graph_free_f64 (g);
}

/* The training forward with adapters off reproduces the engine's serving logits, and
 * hz_lora_apply matches the op. */
static void
check_serving (HzType type, double tol)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.type = type;
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  const HzLlm *llm = base->llm;
  enum { T = 9 };
  const int32_t tok[T] = { 1, 2, 3, 40, 41, 42, 7, 7, 0 };
  const int64_t V = llm->hp.n_vocab;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzCpuForward) f = hz_cpu_forward_new (llm, 64, 16, 1, &error);
  g_assert_no_error (error);
  g_autofree float *ref = g_new (float, T * V);
  g_assert_true (hz_cpu_forward_eval (f, tok, T, 0, TRUE, ref, &error));
  HzTrainGraph_f32 *g = hz_train_graph_new_f32 (llm, NULL, T, FALSE);
  const float *logits = hz_train_forward_f32 (g, NULL, tok, T);
  double max_err = 0, max_ref = 0;
  for (int64_t i = 0; i < T * V; i++)
    {
      max_err = MAX (max_err, fabs (logits[i] - ref[i]));
      max_ref = MAX (max_ref, fabs (ref[i]));
    }
  g_test_message ("%s base, training vs serving logits: max abs diff %.2e (max |logit| %.2f)",
                  hz_quant_traits (type)->name, max_err, max_ref);
  g_assert_cmpfloat (max_err, <, tol * max_ref);
  hz_train_graph_free_f32 (g);
}

static void
test_matches_engine (void)
{
  /* F32: same math up to float rounding. Q8_0: the engine dots the weights against
   * Q8_0-quantized activations (as ggml); we use float activations, so the difference is
   * the activation quantization error. */
  check_serving (HZ_TYPE_F32, 1e-4);
  check_serving (HZ_TYPE_Q8_0, 0.05);

  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  const HzLlm *llm = base->llm;

  /* hz_lora_apply == the linear op with the adapter */
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) lora = hz_lora_new (&llm->hp, &cfg, NULL);
  randomize_lora (lora, 11);
  const HzLoraSlot *s = hz_lora_slot (lora, 1, HZ_LORA_V);
  const HzMatrix *W = &llm->layers[1].wv;
  g_autofree float *x = g_new (float, 2 * W->n_in), *y = g_new (float, 2 * W->n_out);
  g_autofree float *wd = g_new (float, W->n_in * W->n_out);
  W->qt->to_float (W->data, wd, W->n_in * W->n_out);
  for (int64_t i = 0; i < 2 * W->n_in; i++)
    x[i] = (float) sin (i);
  hz_lora_apply (lora, 1, HZ_LORA_V, W, NULL, x, 2, y);
  const float *A = lora->params + s->off_a, *B = lora->params + s->off_b;
  for (int t = 0; t < 2; t++)
    for (int64_t o = 0; o < W->n_out; o++)
      {
        double want = 0;
        for (int64_t i = 0; i < W->n_in; i++)
          want += (double) wd[o * W->n_in + i] * x[t * W->n_in + i];
        for (int j = 0; j < cfg.r; j++)
          {
            double ax = 0;
            for (int64_t i = 0; i < W->n_in; i++)
              ax += (double) A[j * W->n_in + i] * x[t * W->n_in + i];
            want += lora->scaling * B[o * cfg.r + j] * ax;
          }
        g_assert_cmpfloat_with_epsilon (y[t * W->n_out + o], want, 1e-4);
      }
}

/* One f32 SFT step (forward + backward with recomputation) on `n_threads` threads with every
 * op split across all of them: logits (first T * V), then the gradients. */
static float *
threaded_step (HzTrainBase *base, HzLora *lora, guint n_threads, const int32_t *tok,
               const int32_t *tgt, int64_t T, double *loss)
{
  const int64_t V = base->llm->hp.n_vocab;
  HzTrainGraph_f32 *g = hz_train_graph_new_f32 (base->llm, lora, T, TRUE);
  hz_train_graph_set_threads_f32 (g, n_threads);
  g_assert_cmpuint (hz_train_graph_n_threads_f32 (g), ==, n_threads);
  hz_ops_threads_set_min_work (hz_train_graph_threads_f32 (g), 0);
  hz_lora_zero_grad (lora);
  *loss = hz_train_sft_step_f32 (g, lora->params, lora->grads, tok, tgt, T, 1.0 / T, NULL);
  float *out = g_new (float, T * V + lora->n_params);
  memcpy (out, hz_train_forward_f32 (g, lora->params, tok, T), T * V * sizeof (float));
  memcpy (out + T * V, lora->grads, lora->n_params * sizeof (float));
  hz_train_graph_free_f32 (g);
  return out;
}

static void
test_threads (void)
{
  static const char *const archs[] = { "llama", "qwen3" };
  for (guint a = 0; a < G_N_ELEMENTS (archs); a++)
    {
      TinyLlamaSpec spec;
      tiny_llama_spec_init (&spec);
      spec.arch = archs[a];
      spec.type = a == 0 ? HZ_TYPE_Q8_0 : HZ_TYPE_F32;
      g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
      HzLoraConfig cfg;
      hz_lora_config_init (&cfg);
      cfg.r = 3;
      cfg.alpha = 6;
      cfg.targets = HZ_LORA_TARGETS_ALL;
      g_autoptr (GError) error = NULL;
      g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
      g_assert_no_error (error);
      randomize_lora (lora, 91);
      enum { T = 41 };
      int32_t tok[T], tgt[T];
      g_autoptr (GRand) rng = g_rand_new_with_seed (17);
      for (int t = 0; t < T; t++)
        {
          tok[t] = g_rand_int_range (rng, 0, spec.n_vocab);
          tgt[t] = t % 5 == 0 ? -100 : g_rand_int_range (rng, 0, spec.n_vocab);
        }
      const gsize n = T * spec.n_vocab + lora->n_params;
      double loss1 = 0;
      g_autofree float *ref = threaded_step (base, lora, 1, tok, tgt, T, &loss1);
      g_assert_true (isfinite (loss1) && loss1 > 0);
      for (guint nth = 2; nth <= 3; nth++)
        {
          double loss = 0;
          g_autofree float *out = threaded_step (base, lora, nth, tok, tgt, T, &loss);
          g_assert_cmpfloat (loss, ==, loss1);
          g_assert_cmpmem (out, n * sizeof (float), ref, n * sizeof (float));
        }
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/model-grad/llama-gqa", test_llama);
  g_test_add_func ("/learner/model-grad/qwen2-bias-neox", test_qwen2);
  g_test_add_func ("/learner/model-grad/qwen3-qk-norm", test_qwen3);
  g_test_add_func ("/learner/model-grad/q8_0-base", test_q8_0_base);
  g_test_add_func ("/learner/model-grad/accumulation", test_accumulation);
  g_test_add_func ("/learner/model-grad/matches-engine", test_matches_engine);
  g_test_add_func ("/learner/model-grad/threads", test_threads);
  return g_test_run ();
}
