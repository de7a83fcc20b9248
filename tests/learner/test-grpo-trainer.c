/* tests/learner/test-grpo-trainer.c — the GRPO trainer: rewards, fixed-reward groups, the
 * gradient of the whole objective against finite differences, and learning: with a
 * verifiable reward, 50 GRPO steps raise the mean reward on a random tiny llama (reward:
 * the completion contains a given token) and on stories260K (../shared; reward: the
 * completion's text contains a given word; skipped when absent). */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "hanzo/engine.h"
#include "model-private.h"
#include "grpo-trainer.h"
#include "hz-test-util.h"
#include "thinking-model.h"
#include "tiny-llama.h"

static void
test_rewards (void)
{
  g_autoptr (GError) error = NULL;
  const int32_t toks[4] = { 5, 9, 3, 2 };
  HzRewardInput in = { "Q", " 42 ", "The answer is #### 42", toks, 4, TRUE };
  g_autoptr (HzReward) re = hz_reward_new_regex ("answer\\s+is", FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (hz_reward_score (re, &in), ==, 1.0);
  g_autoptr (HzReward) fmt = hz_reward_new_regex ("answer\\s+is", TRUE, &error);
  g_assert_cmpfloat (hz_reward_score (fmt, &in), ==, 0.0);
  g_autoptr (HzReward) ex = hz_reward_new_exact ("####\\s*(\\S+)", &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (hz_reward_score (ex, &in), ==, 1.0);
  in.reference = "43";
  g_assert_cmpfloat (hz_reward_score (ex, &in), ==, 0.0);
  g_autoptr (HzReward) ends = hz_reward_new_token (3, HZ_REWARD_TOKEN_ENDS_WITH, 2);
  g_assert_cmpfloat (hz_reward_score (ends, &in), ==, 1.0);   /* EOG 2 skipped */
  g_autoptr (HzReward) has = hz_reward_new_token (9, HZ_REWARD_TOKEN_CONTAINS, -1);
  g_assert_cmpfloat (hz_reward_score (has, &in), ==, 1.0);
  g_autoptr (HzReward) sum = hz_reward_parse ("token:9&&contains:#### 4&&ends-token:5", 2, &error);
  g_assert_no_error (error);
  g_assert_cmpfloat (hz_reward_score (sum, &in), ==, 2.0);
  g_assert_null (hz_reward_parse ("bogus:1", -1, &error));
  g_assert_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID);
}

/* The trainer's gradient (one iteration, mu = 1, beta > 0, both normalisations) equals a
 * central finite difference of its loss; exercised through a fixed-reward group. */
static void
check_gradient (HzGrpoNorm norm)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 4;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLora) lora = hz_lora_new (&base->llm->hp, &cfg, &error);
  hz_lora_init_peft (lora, 7);
  for (gsize i = 0; i < lora->n_params; i++)   /* B != 0: policy differs from reference */
    lora->params[i] += 0.05f * sinf ((float) i);
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  p.grpo.norm = norm;
  p.max_grad_norm = 0;
  p.adamw.lr = 0;   /* keep the parameters: only the gradient is inspected */
  g_autoptr (HzGrpoTrainer) t = hz_grpo_trainer_new (base->llm, NULL, lora, &p, 16);
  const int32_t prompt[3] = { 1, 4, 9 }, c0[3] = { 5, 6, 7 }, c1[2] = { 8, 3 }, c2[4] = { 2, 2, 11, 12 };
  const int32_t *comps[3] = { c0, c1, c2 };
  const int64_t lens[3] = { 3, 2, 4 };
  const double rewards[3] = { 1, 0, 0.5 };
  g_autoptr (HzGrpoGroup) g = hz_grpo_group_new (prompt, 3, 3, comps, lens, rewards);
  HzGrpoGroup *gs[1] = { g };
  hz_grpo_trainer_step (t, gs, 1, NULL);
  g_autofree float *grad = g_memdup2 (lora->grads, sizeof (float) * lora->n_params);
  /* loss as a function of the params at the fixed logp_old and logp_ref: */
  double max_rel = 0;
  for (int k = 0; k < 12; k++)
    {
      const gsize idx = (gsize) g_test_rand_int_range (0, (gint32) lora->n_params);
      const float save = lora->params[idx], h = 1e-2f;
      HzGrpoStepStats sp, sm;
      lora->params[idx] = save + h;
      hz_grpo_trainer_step (t, gs, 1, &sp);
      lora->params[idx] = save - h;
      hz_grpo_trainer_step (t, gs, 1, &sm);
      lora->params[idx] = save;
      const double fd = (sp.loss - sm.loss) / (2 * h);
      const double rel = fabs (fd - grad[idx]) / MAX (1e-3, fabs (fd) + fabs (grad[idx]));
      max_rel = MAX (max_rel, rel);
    }
  g_test_message ("%s: max relative gradient error %.2e", hz_grpo_norm_name (norm), max_rel);
  g_assert_cmpfloat (max_rel, <, 1e-2);
}

static void
test_gradient_grpo (void)
{
  check_gradient (HZ_GRPO_NORM_SEQUENCE);
}

static void
test_gradient_dapo (void)
{
  check_gradient (HZ_GRPO_NORM_TOKEN);
}

/* 50 GRPO steps over `n_prompts` prompts; returns the mean reward of the first and last
 * 10 steps. */
static void
run_grpo (const HzLlm *llm, HzModel *model, int32_t eog, const int32_t *const *prompts,
          const int64_t *n_prompts, const char *const *texts, int n_prompts_total,
          const HzReward *reward, const HzGrpoTrainerParams *p, double *first, double *last)
{
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  cfg.r = 8;
  cfg.alpha = 16;
  cfg.targets = HZ_LORA_TARGETS_ALL;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzLora) lora = hz_lora_new (&llm->hp, &cfg, &error);
  g_assert_no_error (error);
  hz_lora_init_peft (lora, 42);
  int64_t max_prompt = 0;
  for (int i = 0; i < n_prompts_total; i++)
    max_prompt = MAX (max_prompt, n_prompts[i]);
  g_autoptr (HzGrpoTrainer) t = hz_grpo_trainer_new (llm, model, lora, p,
                                                      max_prompt + p->max_new_tokens);
  if (model == NULL)
    hz_grpo_trainer_set_eog (t, eog);
  const int n_steps = 50, per_step = 2;
  *first = *last = 0;
  for (int s = 0; s < n_steps; s++)
    {
      HzGrpoGroup *gs[2];
      for (int j = 0; j < per_step; j++)
        {
          const int k = (s * per_step + j) % n_prompts_total;
          gs[j] = hz_grpo_trainer_sample (t, prompts[k], n_prompts[k], texts ? texts[k] : NULL,
                                          NULL, reward);
        }
      HzGrpoStepStats st;
      hz_grpo_trainer_step (t, gs, per_step, &st);
      if (s < 5)
        *first += st.mean_reward / 5;
      if (s >= n_steps - 10)
        *last += st.mean_reward / 10;
      if (s % 10 == 0 || s == n_steps - 1)
        g_test_message ("step %2d reward %.3f kl %.4f loss %+.4f len %.1f |g| %.3f", s,
                        st.mean_reward, st.mean_kl, st.loss, st.mean_length, st.grad_norm);
      for (int j = 0; j < per_step; j++)
        hz_grpo_group_free (gs[j]);
    }
  g_test_message ("mean reward: first 5 steps %.3f, last 10 steps %.3f", *first, *last);
}

static void
test_learns_tiny (void)
{
  TinyLlamaSpec spec;
  tiny_llama_spec_init (&spec);
  spec.n_vocab = 64;
  g_autoptr (HzTrainBase) base = tiny_llama_open (&spec);
  const int32_t p0[3] = { 1, 10, 20 }, p1[3] = { 1, 30, 40 }, p2[2] = { 1, 50 };
  const int32_t *prompts[3] = { p0, p1, p2 };
  const int64_t np[3] = { 3, 3, 2 };
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  p.group_size = 8;
  p.max_new_tokens = 8;
  /* The random model's distribution is peaked: reward the token whose base rate of
   * occurring in a completion is closest to 25%, measured on 48 samples. */
  int32_t token = -1;
  {
    HzLoraConfig cfg;
    hz_lora_config_init (&cfg);
    g_autoptr (HzLora) probe = hz_lora_new (&base->llm->hp, &cfg, NULL);
    g_autoptr (HzGrpoTrainer) t = hz_grpo_trainer_new (base->llm, NULL, probe, &p, 16);
    g_autoptr (HzReward) none = hz_reward_new_token (-1, HZ_REWARD_TOKEN_CONTAINS, -1);
    g_autofree int *count = g_new0 (int, spec.n_vocab);
    for (int k = 0; k < 6; k++)
      {
        g_autoptr (HzGrpoGroup) g = hz_grpo_trainer_sample (t, prompts[k % 3], np[k % 3], NULL,
                                                             NULL, none);
        for (int i = 0; i < g->n; i++)
          {
            g_autofree gboolean *seen = g_new0 (gboolean, spec.n_vocab);
            for (int64_t j = g->offsets[i]; j < g->offsets[i + 1]; j++)
              seen[g->tokens[j]] = TRUE;
            for (int v = 0; v < spec.n_vocab; v++)
              count[v] += seen[v];
          }
      }
    for (int v = 3; v < spec.n_vocab; v++)
      if (token < 0 || fabs (count[v] / 48.0 - 0.25) < fabs (count[token] / 48.0 - 0.25))
        token = v;
    g_test_message ("rewarded token %d, base rate %.2f", token, count[token] / 48.0);
  }
  g_autoptr (HzReward) reward = hz_reward_new_token (token, HZ_REWARD_TOKEN_CONTAINS, 2);
  p.adamw.lr = 5e-3;
  p.adamw.weight_decay = 0;
  double first, last;
  run_grpo (base->llm, NULL, 2, prompts, np, NULL, 3, reward, &p, &first, &last);
  g_assert_cmpfloat (last, >, first + 0.2);
}

static void
test_learns_stories260k (void)
{
  g_autofree char *path = hz_test_shared_path ("models/stories260K.gguf");
  if (path == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  const char *texts[3] = { "Once upon a time", "One day, a little girl", "Tom and his dog" };
  int32_t *prompts[3];
  int64_t np[3];
  for (int i = 0; i < 3; i++)
    {
      gsize n;
      prompts[i] = hz_model_tokenize (model, texts[i], -1, TRUE, FALSE, &n);
      np[i] = (int64_t) n;
    }
  /* "ball" appears in some of the base model's stories but not most. */
  g_autoptr (HzReward) reward = hz_reward_new_regex ("\\bball\\b", FALSE, &error);
  g_assert_no_error (error);
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  p.group_size = 8;
  p.max_new_tokens = 24;
  p.adamw.lr = 5e-3;   /* at 1e-2 the policy rises, then may collapse (KL > 5 nats) depending
                          on float rounding (summation order) */
  p.adamw.weight_decay = 0;
  double first, last;
  run_grpo (hz_model_get_llm (model), model, -1, (const int32_t *const *) prompts, np,
            texts, 3, reward, &p, &first, &last);
  g_assert_cmpfloat (last, >, first + 0.15);
  for (int i = 0; i < 3; i++)
    g_free (prompts[i]);
}

/* A thinking model's completions are rewarded for their answers (issue 23): the scripted
 * Qwen3 model (tests/thinking-model.h) writes "<think>Let me think</think>\n\nHello!";
 * an exact-answer reward sees "Hello!", while the completion's text keeps the reasoning. */
static void
test_reward_sees_answer (void)
{
  static const char *const script[] = { "<think>", "Let", " me", " think", "</think>", "\n\n",
                                        "Hello", "!", NULL };
  g_autofree char *dir = g_dir_make_tmp ("hz-grpo-XXXXXX", NULL);
  g_autofree char *src = hz_test_source_file (QWEN3_TEMPLATE);
  g_autofree char *path = hz_scripted_model_write (dir, "scripted", src, "\n", script);
  if (path == NULL)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  g_unlink (path);
  g_rmdir (dir);
  const HzChatMessage msgs[] = { { "user", "Say hello" } };
  HzChatFit fit;
  g_autofree HzToken *prompt = hz_model_fit_chat (model, msgs, 1, 256, 0, &fit, &error);
  g_assert_no_error (error);
  HzLoraConfig cfg;
  hz_lora_config_init (&cfg);
  g_autoptr (HzLora) lora = hz_lora_new (&hz_model_get_llm (model)->hp, &cfg, &error);
  g_assert_no_error (error);
  hz_lora_init_peft (lora, 1);   /* B = 0: the base model's completions */
  HzGrpoTrainerParams p;
  hz_grpo_trainer_params_init (&p);
  p.group_size = 2;
  p.max_new_tokens = 16;
  g_autoptr (HzGrpoTrainer) t = hz_grpo_trainer_new (hz_model_get_llm (model), model, lora, &p,
                                                      fit.n_tokens + p.max_new_tokens);
  g_autoptr (HzReward) exact = hz_reward_new_exact (NULL, &error);
  g_assert_no_error (error);
  g_autoptr (HzGrpoGroup) g = hz_grpo_trainer_sample (t, prompt, fit.n_tokens, "Say hello",
                                                      "Hello!", exact);
  for (int i = 0; i < g->n; i++)
    {
      g_assert_cmpstr (g->texts[i], ==, "<think>Let me think</think>\n\nHello!");
      g_assert_cmpfloat (g->rewards[i], ==, 1.0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/grpo-trainer/rewards", test_rewards);
  g_test_add_func ("/learner/grpo-trainer/reward-sees-answer", test_reward_sees_answer);
  g_test_add_func ("/learner/grpo-trainer/gradient-grpo", test_gradient_grpo);
  g_test_add_func ("/learner/grpo-trainer/gradient-dapo", test_gradient_dapo);
  g_test_add_func ("/learner/grpo-trainer/learns-tiny", test_learns_tiny);
  g_test_add_func ("/learner/grpo-trainer/learns-stories260k", test_learns_stories260k);
  return g_test_run ();
}
