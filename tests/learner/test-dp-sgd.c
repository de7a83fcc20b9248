/* tests/learner/test-dp-sgd.c — DP-SGD in the SFT trainer (issue 8 item 3, dp-sgd.h):
 * Poisson sampling at rate q; every clipped per-example gradient has norm <= C; with C
 * huge and z = 0 a DP-SGD step equals a plain SGD step on the sampled batch; the noise on
 * the summed gradient has standard deviation z C (seeded and getrandom generators); the
 * epsilon of (q, z, steps) is the accountant's (the Opacus vector); GRPO's DP step
 * (a prompt's group is the unit) clips every group and equals the plain step when C is huge
 * and z = 0. All on a random tiny llama, in about a second. */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "grpo-trainer.h"
#include "sft.h"
#include "tiny-llama.h"

#define N_EXAMPLES 16

typedef struct {
  HzTrainBase *base;
  int32_t      tokens[N_EXAMPLES][10], targets[N_EXAMPLES][10];
  HzSftExample ex[N_EXAMPLES];
  int64_t      max_len;
} Fixture;

/* 16 prompt/response pairs, every response 4 tokens (so every example counts 4 targets) */
static void
fixture_init (Fixture *f)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.type = HZ_TYPE_Q8_0;
  f->base = tiny_llama_open (&spec);
  g_autoptr (GRand) rng = g_rand_new_with_seed (77);
  for (int i = 0; i < N_EXAMPLES; i++)
    {
      int32_t prompt[7], resp[4] = { 40, 0, 41, 42 };
      for (int j = 0; j < 7; j++)
        prompt[j] = g_rand_int_range (rng, 3, 36);
      resp[1] = prompt[6];
      f->ex[i] = (HzSftExample) { f->tokens[i], f->targets[i],
                                  hz_sft_example_build (prompt, 7, resp, 4, f->tokens[i],
                                                        f->targets[i]) };
      f->max_len = MAX (f->max_len, f->ex[i].n);
    }
}

static HzLora *
new_lora (const Fixture *f)
{
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.targets = HZ_LORA_TARGETS_ALL;
  HzLora *lora = hz_lora_new (&f->base->llm->hp, &cfg, NULL);
  hz_lora_init_peft (lora, 3);
  /* B = 0 makes the gradients of A zero; give B values so every parameter moves */
  for (gsize k = 0; k < lora->n_params; k++)
    if (lora->params[k] == 0)
      lora->params[k] = 0.05f * sinf ((float) k);
  return lora;
}

static HzSftTrainer *
new_trainer (const Fixture *f, HzLora *lora)
{
  HzSftParams p;
  hz_sft_params_init (&p);
  p.adamw.lr = 1e-2;
  p.max_grad_norm = 0;   /* no global clipping: compare raw steps */
  return hz_sft_trainer_new (f->base->llm, lora, &p, f->max_len);
}

static HzDpSgd *
new_dp (double q, double z, double c, guint32 seed)
{
  HzDpSgdParams p;
  hz_dp_sgd_params_init (&p);
  p.sample_rate = q;
  p.noise_multiplier = z;
  p.clip_norm = c;
  p.test_seed = seed;
  g_autoptr (GError) error = NULL;
  HzDpSgd *dp = hz_dp_sgd_new (&p, &error);
  g_assert_no_error (error);
  return dp;
}

static void
test_params_invalid (void)
{
  HzDpSgdParams p;
  hz_dp_sgd_params_init (&p);
  g_autoptr (GError) error = NULL;
  g_assert_null (hz_dp_sgd_new (&p, &error));   /* q = 0 */
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
  g_clear_error (&error);
  p.sample_rate = 0.1;
  p.clip_norm = 0;
  g_assert_null (hz_dp_sgd_new (&p, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
}

static void
test_poisson_rate (void)
{
  for (int secure = 0; secure < 2; secure++)
    {
      g_autoptr (HzDpSgd) dp = new_dp (0.1, 1, 1, secure ? 0 : 5);
      g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
      const guint n = 20000;
      g_assert_true (hz_dp_sgd_sample (dp, n, idx, NULL));
      /* binomial(20000, 0.1): mean 2000, sd 42.4; 5 sd */
      g_test_message ("%s: %u of %u sampled at q = 0.1", secure ? "getrandom" : "seeded",
                      idx->len, n);
      g_assert_cmpfloat (fabs ((double) idx->len - 2000), <, 5 * 42.43);
      for (guint i = 1; i < idx->len; i++)
        g_assert_cmpuint (g_array_index (idx, guint, i - 1), <, g_array_index (idx, guint, i));
    }
  /* q = 1 takes everything; seeded runs repeat */
  g_autoptr (HzDpSgd) all = new_dp (1.0, 1, 1, 9);
  g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
  g_assert_true (hz_dp_sgd_sample (all, 100, idx, NULL));
  g_assert_cmpuint (idx->len, ==, 100);
  g_autoptr (HzDpSgd) a = new_dp (0.3, 1, 1, 11), b = new_dp (0.3, 1, 1, 11);
  g_autoptr (GArray) ia = g_array_new (FALSE, FALSE, sizeof (guint));
  g_autoptr (GArray) ib = g_array_new (FALSE, FALSE, sizeof (guint));
  g_assert_true (hz_dp_sgd_sample (a, 500, ia, NULL) && hz_dp_sgd_sample (b, 500, ib, NULL));
  g_assert_cmpmem (ia->data, ia->len * sizeof (guint), ib->data, ib->len * sizeof (guint));
}

static void
test_clip_bound (void)
{
  Fixture f = { 0 };
  fixture_init (&f);
  g_autoptr (HzLora) lora = new_lora (&f);
  g_autoptr (HzSftTrainer) tr = new_trainer (&f, lora);
  const double C = 0.05;
  g_autoptr (HzDpSgd) dp = new_dp (0.5, 0, C, 21);
  double norms[N_EXAMPLES], clipped[N_EXAMPLES];
  HzDpSgdStepInfo info = { .norms = norms, .clipped_norms = clipped };
  g_autoptr (GError) error = NULL;
  const double loss = hz_sft_trainer_step_dp (tr, dp, f.ex, N_EXAMPLES, 8.0, &info, &error);
  g_assert_no_error (error);
  g_assert_true (isfinite (loss) && loss > 0);
  g_assert_cmpint (info.n_examples, ==, N_EXAMPLES);
  g_assert_cmpint (info.n_clipped, >, 0);
  double sum_bound = 0;
  for (int i = 0; i < N_EXAMPLES; i++)
    {
      g_assert_cmpfloat (norms[i], >, 0);
      g_assert_cmpfloat (clipped[i], <=, C * (1 + 1e-6));
      g_assert_cmpfloat (fabs (clipped[i] - MIN (norms[i], C)), <=, 1e-4 * C);
      sum_bound += clipped[i];
    }
  g_test_message ("per-example norms %.4f .. ; %d of %d clipped to %.2f", norms[0],
                  info.n_clipped, N_EXAMPLES, C);
  /* z = 0: the optimiser's gradient is the sum of clipped gradients / 8, so its norm is at
   * most sum_i ||clipped g_i|| / 8 (triangle inequality) */
  g_assert_cmpfloat (hz_grad_global_norm (lora->grads, lora->n_params), <=,
                     sum_bound / 8.0 * (1 + 1e-5));
  hz_train_base_free (f.base);
}

static void
test_equals_sgd (void)
{
  Fixture f = { 0 };
  fixture_init (&f);
  g_autoptr (HzLora) a = new_lora (&f), b = new_lora (&f);
  g_autoptr (HzSftTrainer) plain = new_trainer (&f, a), dptr = new_trainer (&f, b);
  g_autoptr (HzDpSgd) dp = new_dp (0.4, 0, 1e9, 31);
  for (int step = 0; step < 3; step++)
    {
      g_autoptr (GArray) idx = g_array_new (FALSE, FALSE, sizeof (guint));
      g_assert_true (hz_dp_sgd_sample (dp, N_EXAMPLES, idx, NULL));
      g_assert_cmpuint (idx->len, >, 0);
      HzSftExample batch[N_EXAMPLES];
      for (guint i = 0; i < idx->len; i++)
        batch[i] = f.ex[g_array_index (idx, guint, i)];
      /* plain SGD's batch-mean token loss over equal-length targets = mean of per-example
       * means; DP-SGD divides the sum by the batch size given (here the realised one) */
      const double l1 = hz_sft_trainer_step (plain, batch, idx->len, NULL);
      HzDpSgdStepInfo info = { 0 };
      const double l2 = hz_sft_trainer_step_dp (dptr, dp, batch, idx->len, idx->len, &info, NULL);
      g_assert_cmpint (info.n_clipped, ==, 0);
      g_assert_cmpfloat (fabs (l1 - l2), <=, 1e-6 * fabs (l1));
      double diff = 0, ref = 0;
      for (gsize k = 0; k < a->n_params; k++)
        {
          diff = MAX (diff, fabs ((double) a->grads[k] - b->grads[k]));
          ref = MAX (ref, fabs ((double) a->grads[k]));
        }
      g_test_message ("step %d: batch %u, loss %.5f, max |grad diff| %.3g of %.3g", step,
                      idx->len, l1, diff, ref);
      g_assert_cmpfloat (diff, <=, 1e-5 * ref);
      /* AdamW's early steps move every parameter by about lr whatever |g|: a gradient of a
       * few eps (1e-8) whose last bits differ between the two summation orders moves its
       * parameter by a visible fraction of lr, hence the 1e-3 lr (lr = 1e-2) besides 1e-5 */
      for (gsize k = 0; k < a->n_params; k++)
        g_assert_cmpfloat (fabs (a->params[k] - b->params[k]), <=,
                           1e-5 * (1 + fabs (a->params[k])) + 1e-3 * 1e-2);
    }
  hz_train_base_free (f.base);
}

/* An empty Poisson batch still takes a step: the gradient is pure noise N(0,(zC)^2)/(qN). */
static void
check_noise_std (guint32 seed)
{
  Fixture f = { 0 };
  fixture_init (&f);
  g_autoptr (HzLora) lora = new_lora (&f);
  g_autoptr (HzSftTrainer) tr = new_trainer (&f, lora);
  const double z = 1.3, C = 0.7, expected = 4.0;
  g_autoptr (HzDpSgd) dp = new_dp (0.25, z, C, seed);
  double s1 = 0, s2 = 0;
  for (int rep = 0; rep < 4; rep++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_cmpfloat (hz_sft_trainer_step_dp (tr, dp, f.ex, 0, expected, NULL, &error), ==, 0);
      g_assert_no_error (error);
      for (gsize k = 0; k < lora->n_params; k++)
        {
          const double v = lora->grads[k] * expected;
          s1 += v;
          s2 += v * v;
        }
    }
  const double n = 4.0 * lora->n_params, mean = s1 / n, sd = sqrt (s2 / n - mean * mean);
  g_test_message ("%s noise over %.0f values: mean %.4f, sd %.4f (want z C = %.4f)",
                  seed ? "seeded" : "getrandom", n, mean, sd, z * C);
  /* the sample sd's relative error is about 1/sqrt(2n) (< 0.4 % here); allow 5 sigma */
  g_assert_cmpfloat (fabs (sd / (z * C) - 1), <, 5 / sqrt (2 * n));
  g_assert_cmpfloat (fabs (mean), <, 5 * z * C / sqrt (n));
  g_assert_cmpint (hz_sft_trainer_steps (tr), ==, 4);
  hz_train_base_free (f.base);
}

static void
test_noise_std (void)
{
  check_noise_std (41);
  check_noise_std (0);
}

/* Four fixed-reward groups (feedback groups) of three completions each. */
static void
make_groups (HzGrpoGroup **out)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (5);
  for (int j = 0; j < 4; j++)
    {
      int32_t prompt[3], c[3][4];
      const int32_t *comps[3] = { c[0], c[1], c[2] };
      const int64_t lens[3] = { 4, 3, 2 };
      const double rewards[3] = { j % 2, 0.5, 1 - j % 2 };
      for (int k = 0; k < 3; k++)
        prompt[k] = g_rand_int_range (rng, 1, 40);
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++)
          c[i][k] = g_rand_int_range (rng, 1, 40);
      out[j] = hz_grpo_group_new (prompt, 3, 3, comps, lens, rewards);
    }
}

static void
test_grpo (void)
{
  Fixture f = { 0 };
  fixture_init (&f);
  g_autoptr (HzLora) a = new_lora (&f), b = new_lora (&f), c = new_lora (&f);
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  p.max_grad_norm = 0;
  p.adamw.lr = 1e-2;
  g_autoptr (HzGrpoTrainer) plain = hz_grpo_trainer_new (f.base->llm, NULL, a, &p, 16);
  g_autoptr (HzGrpoTrainer) dptr = hz_grpo_trainer_new (f.base->llm, NULL, b, &p, 16);
  g_autoptr (HzGrpoTrainer) clipt = hz_grpo_trainer_new (f.base->llm, NULL, c, &p, 16);
  HzGrpoGroup *ga[4], *gb[4], *gc[4];
  make_groups (ga);
  make_groups (gb);
  make_groups (gc);
  /* C huge, z = 0, expected batch = 4: the plain step (groups weighted 1/4) */
  g_autoptr (HzDpSgd) dp = new_dp (0.5, 0, 1e9, 51);
  g_autoptr (GError) error = NULL;
  const double l1 = hz_grpo_trainer_step (plain, ga, 4, NULL);
  int n_clipped = -1;
  const double l2 = hz_grpo_trainer_step_dp (dptr, dp, gb, 4, 4.0, &n_clipped, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n_clipped, ==, 0);
  g_assert_cmpfloat (fabs (l1 - l2), <=, 1e-6 * MAX (1, fabs (l1)));
  double diff = 0, ref = 0;
  for (gsize k = 0; k < a->n_params; k++)
    {
      diff = MAX (diff, fabs ((double) a->grads[k] - b->grads[k]));
      ref = MAX (ref, fabs ((double) a->grads[k]));
    }
  g_test_message ("GRPO: max |grad diff| %.3g of %.3g", diff, ref);
  g_assert_cmpfloat (ref, >, 0);
  g_assert_cmpfloat (diff, <=, 1e-5 * ref);
  /* a small C clips every group: the step's gradient norm is at most 4 C / 4 */
  g_autoptr (HzDpSgd) small = new_dp (0.5, 0, 1e-3, 52);
  hz_grpo_trainer_step_dp (clipt, small, gc, 4, 4.0, &n_clipped, &error);
  g_assert_no_error (error);
  g_assert_cmpint (n_clipped, ==, 4);
  g_assert_cmpfloat (hz_grad_global_norm (c->grads, c->n_params), <=, 1e-3 * (1 + 1e-5));
  /* several iterations on one sample are refused */
  HzGrpoTrainerParams p2 = p;
  p2.n_iterations = 2;
  g_autoptr (HzGrpoTrainer) multi = hz_grpo_trainer_new (f.base->llm, NULL, c, &p2, 16);
  g_assert_true (isnan (hz_grpo_trainer_step_dp (multi, small, gc, 4, 4.0, NULL, &error)));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
  for (int j = 0; j < 4; j++)
    {
      hz_grpo_group_free (ga[j]);
      hz_grpo_group_free (gb[j]);
      hz_grpo_group_free (gc[j]);
    }
  hz_train_base_free (f.base);
}

static void
test_epsilon (void)
{
  double order;
  /* the Opacus vector: q 0.04, z 1.5, 2250 steps, delta 1e-5 -> 7.32911117 */
  const double eps = hz_dp_sgd_epsilon (0.04, 1.5, 2250, 1e-5, &order);
  g_test_message ("eps(q 0.04, z 1.5, 2250 steps, delta 1e-5) = %.8f at order %g", eps, order);
  g_assert_cmpfloat (fabs (eps - 7.32911117), <, 1e-6);
  g_assert_cmpfloat (hz_dp_sgd_epsilon (0.04, 1.5, 0, 1e-5, NULL), ==, 0);
  g_assert_true (isinf (hz_dp_sgd_epsilon (0.04, 0, 10, 1e-5, NULL)));
  /* more steps, more epsilon */
  g_assert_cmpfloat (hz_dp_sgd_epsilon (0.04, 1.5, 100, 1e-5, NULL), <, eps);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/dp-sgd/params-invalid", test_params_invalid);
  g_test_add_func ("/learner/dp-sgd/poisson-rate", test_poisson_rate);
  g_test_add_func ("/learner/dp-sgd/clip-bound", test_clip_bound);
  g_test_add_func ("/learner/dp-sgd/equals-sgd", test_equals_sgd);
  g_test_add_func ("/learner/dp-sgd/noise-std", test_noise_std);
  g_test_add_func ("/learner/dp-sgd/grpo", test_grpo);
  g_test_add_func ("/learner/dp-sgd/epsilon", test_epsilon);
  return g_test_run ();
}
