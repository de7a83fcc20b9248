/* learner/grpo-trainer.c — GRPO sampling and optimiser steps (see grpo-trainer.h). */
#include <math.h>
#include <string.h>
#include "grpo-trainer.h"
#include "train-ops.h"

struct _HzGrpoTrainer {
  const HzLlm        *llm;
  HzModel            *model;     /* nullable */
  HzLora             *lora;
  HzGrpoTrainerParams p;
  int64_t             max_tokens;
  int32_t             eog;
  HzTrainGraph_f32   *graph;
  HzAdamW            *opt;
  guint64             n_sampled; /* completions drawn: seeds each one's sampler */
  /* scratch [max_tokens] */
  int32_t            *seq, *targets;
  float              *logp, *dlogp;
  float              *dp_sum;    /* DP-SGD: the clipped sum [n_params] */
};

void
hz_grpo_trainer_params_init (HzGrpoTrainerParams *p)
{
  hz_grpo_params_init (&p->grpo);
  hz_adamw_params_init (&p->adamw);
  p->schedule = (HzSchedule) { HZ_SCHEDULE_CONSTANT, 0, 1, 0.0 };
  p->max_grad_norm = 1.0;
  p->group_size = 8;
  p->max_new_tokens = 64;
  p->n_iterations = 1;
  hz_sampler_params_init (&p->sampler);
  p->sampler.temperature = 1.0f;
  p->sampler.seed = 1;
  p->recompute = TRUE;
  p->n_threads = 0;
}

/* ------------------------------------------------------------------ groups */

static HzGrpoGroup *
group_alloc (const int32_t *prompt, int64_t n_prompt, int n, int64_t n_tokens)
{
  HzGrpoGroup *g = g_new0 (HzGrpoGroup, 1);
  g->prompt = g_memdup2 (prompt, sizeof (int32_t) * n_prompt);
  g->n_prompt = n_prompt;
  g->n = n;
  g->tokens = g_new (int32_t, MAX (n_tokens, 1));
  g->offsets = g_new0 (int64_t, n + 1);
  g->rewards = g_new0 (double, n);
  g->texts = g_new0 (char *, n + 1);
  return g;
}

HzGrpoGroup *
hz_grpo_group_new (const int32_t *prompt, int64_t n_prompt, int n,
                   const int32_t *const *completions, const int64_t *n_tokens,
                   const double *rewards)
{
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    total += n_tokens[i];
  HzGrpoGroup *g = group_alloc (prompt, n_prompt, n, total);
  for (int i = 0; i < n; i++)
    {
      memcpy (g->tokens + g->offsets[i], completions[i], sizeof (int32_t) * n_tokens[i]);
      g->offsets[i + 1] = g->offsets[i] + n_tokens[i];
      g->rewards[i] = rewards[i];
    }
  return g;
}

void
hz_grpo_group_free (HzGrpoGroup *g)
{
  if (g == NULL)
    return;
  g_free (g->prompt);
  g_free (g->tokens);
  g_free (g->offsets);
  g_free (g->rewards);
  g_strfreev (g->texts);
  g_free (g->logp_old);
  g_free (g->logp_ref);
  g_free (g);
}

double
hz_grpo_group_mean_reward (const HzGrpoGroup *g)
{
  double s = 0;
  for (int i = 0; i < g->n; i++)
    s += g->rewards[i];
  return g->n ? s / g->n : 0;
}

/* ------------------------------------------------------------------ trainer */

HzGrpoTrainer *
hz_grpo_trainer_new (const HzLlm *llm, HzModel *model, HzLora *lora,
                     const HzGrpoTrainerParams *p, int64_t max_tokens)
{
  g_return_val_if_fail (p->group_size >= 1 && p->n_iterations >= 1 && max_tokens >= 2, NULL);
  HzGrpoTrainer *t = g_new0 (HzGrpoTrainer, 1);
  t->llm = llm;
  t->model = model;
  t->lora = lora;
  t->p = *p;
  t->max_tokens = max_tokens;
  t->eog = model ? hz_model_eos (model) : -1;
  t->graph = hz_train_graph_new_f32 (llm, lora, max_tokens, p->recompute);
  hz_train_graph_set_threads_f32 (t->graph, p->n_threads);
  t->opt = hz_adamw_new (lora->n_params, &p->adamw);
  t->seq = g_new (int32_t, max_tokens);
  t->targets = g_new (int32_t, max_tokens);
  t->logp = g_new (float, max_tokens);
  t->dlogp = g_new (float, max_tokens);
  return t;
}

void
hz_grpo_trainer_free (HzGrpoTrainer *t)
{
  if (t == NULL)
    return;
  hz_train_graph_free_f32 (t->graph);
  hz_adamw_free (t->opt);
  g_free (t->seq);
  g_free (t->targets);
  g_free (t->logp);
  g_free (t->dlogp);
  g_free (t->dp_sum);
  g_free (t);
}

void
hz_grpo_trainer_set_eog (HzGrpoTrainer *t, int32_t eog)
{
  t->eog = eog;
}

int64_t
hz_grpo_trainer_steps (const HzGrpoTrainer *t)
{
  return t->opt->step;
}

HzAdamW *
hz_grpo_trainer_optimizer (HzGrpoTrainer *t)
{
  return t->opt;
}

static gboolean
is_eog (const HzGrpoTrainer *t, int32_t tok)
{
  return t->model ? hz_model_is_eog (t->model, tok) : tok == t->eog;
}

HzGrpoGroup *
hz_grpo_trainer_sample (HzGrpoTrainer *t, const int32_t *prompt, int64_t n_prompt,
                        const char *prompt_text, const char *reference, const HzReward *reward)
{
  g_return_val_if_fail (n_prompt >= 1 && n_prompt < t->max_tokens, NULL);
  const int G = t->p.group_size;
  const int64_t max_new = MIN ((int64_t) t->p.max_new_tokens, t->max_tokens - n_prompt);
  const int32_t V = t->llm->hp.n_vocab;
  HzGrpoGroup *g = group_alloc (prompt, n_prompt, G, G * max_new);
  const gboolean opened = t->model && hz_model_reasoning_opened (t->model, prompt, n_prompt);
  memcpy (t->seq, prompt, sizeof (int32_t) * n_prompt);
  for (int i = 0; i < G; i++)
    {
      /* a fresh stream per completion (a reset sampler would repeat its draws) */
      HzSamplerParams sp = t->p.sampler;
      sp.seed = t->p.sampler.seed * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) + t->n_sampled++;
      g_autoptr (HzSampler) sampler = hz_sampler_new (&sp);
      for (int64_t k = 0; k < n_prompt; k++)
        hz_sampler_accept (sampler, prompt[k]);
      int64_t len = n_prompt;
      gboolean finished = FALSE;
      while (len < n_prompt + max_new && !finished)
        {
          const float *logits = hz_train_forward_f32 (t->graph, t->lora->params, t->seq, len);
          const int32_t tok = hz_sampler_sample (sampler, logits + (len - 1) * (int64_t) V, V);
          hz_sampler_accept (sampler, tok);
          t->seq[len++] = tok;
          finished = is_eog (t, tok);
        }
      const int64_t nc = len - n_prompt;
      int32_t *out = g->tokens + g->offsets[i];
      memcpy (out, t->seq + n_prompt, sizeof (int32_t) * nc);
      g->offsets[i + 1] = g->offsets[i] + nc;
      /* a thinking model's reasoning is not its answer: the reward judges the answer */
      g_autofree char *answer = NULL;
      if (t->model)
        {
          g->texts[i] = hz_model_detokenize (t->model, out, nc - (finished ? 1 : 0),
                                             hz_model_reasoning_special (t->model));
          hz_reasoning_split (hz_model_reasoning_format (t->model), opened, g->texts[i], -1,
                              NULL, &answer);
        }
      const HzRewardInput in = { prompt_text, reference, answer, out, nc, finished };
      g->rewards[i] = hz_reward_score (reward, &in);
    }
  return g;
}

/* Forward of prompt ++ completion i (without its last token); fills t->logp[0..nc) with
 * the completion tokens' log-probabilities, t->targets for the backward. Returns the
 * logits [T, V] and T in *T_out. */
static const float *
completion_logp (HzGrpoTrainer *t, const HzGrpoGroup *g, int i, const float *params,
                 int64_t *T_out)
{
  const int64_t nc = g->offsets[i + 1] - g->offsets[i], np = g->n_prompt;
  const int64_t T = MIN (np + nc - 1, t->max_tokens);
  g_assert (T == np + nc - 1);   /* completions were sampled within max_tokens */
  memcpy (t->seq, g->prompt, sizeof (int32_t) * np);
  memcpy (t->seq + np, g->tokens + g->offsets[i], sizeof (int32_t) * (nc - 1));
  for (int64_t k = 0; k < T; k++)
    t->targets[k] = k + 1 < np ? -100 : g->tokens[g->offsets[i] + k + 1 - np];
  const int64_t V = t->llm->hp.n_vocab;
  const float *logits = hz_train_forward_f32 (t->graph, params, t->seq, T);
  hz_op_logprob_fwd_mt_f32 (hz_train_graph_threads_f32 (t->graph), t->dlogp, logits,
                            t->targets, T, V);
  memcpy (t->logp, t->dlogp + (np - 1), sizeof (float) * nc);
  *T_out = T;
  return logits;
}

/* Fill the reference log-probs of a group (adapters off). */
static void
group_reference (HzGrpoTrainer *t, HzGrpoGroup *g)
{
  g->logp_ref = g_new (double, MAX (g->offsets[g->n], 1));
  for (int i = 0; i < g->n; i++)
    {
      const int64_t nc = g->offsets[i + 1] - g->offsets[i];
      if (nc == 0)
        continue;
      int64_t T;
      completion_logp (t, g, i, NULL, &T);
      for (int64_t k = 0; k < nc; k++)
        g->logp_ref[g->offsets[i] + k] = t->logp[k];
    }
  g->have_ref = TRUE;
}

typedef struct {
  double loss, kl, clipped;
  int64_t tokens;
} PassTotals;

/* Forward + backward of every completion of `g`, adding weight x d loss / d params into
 * the adapter gradients. */
static void
group_pass (HzGrpoTrainer *t, HzGrpoGroup *g, double weight, PassTotals *tot)
{
  const HzGrpoParams *gp = &t->p.grpo;
  const int64_t V = t->llm->hp.n_vocab, np = g->n_prompt;
  g_autofree double *adv = g_new (double, g->n);
  if (g->n == 1)
    adv[0] = g->rewards[0];   /* no group baseline: baseline 0 (grpo-trainer.h) */
  else
    hz_grpo_advantages (g->rewards, g->n, adv);
  int n_nonempty = 0;
  for (int i = 0; i < g->n; i++)
    n_nonempty += g->offsets[i + 1] > g->offsets[i];
  const int64_t n_tok = g->offsets[g->n];
  if (n_nonempty == 0)
    return;
  const gboolean first = !g->have_old;
  if (first)
    g->logp_old = g_new (double, MAX (n_tok, 1));
  for (int i = 0; i < g->n; i++)
    {
      const int64_t off = g->offsets[i], nc = g->offsets[i + 1] - off;
      if (nc == 0)
        continue;
      int64_t T;
      const float *logits = completion_logp (t, g, i, t->lora->params, &T);
      g_autofree double *lp = g_new (double, nc), *dl = g_new (double, nc);
      for (int64_t k = 0; k < nc; k++)
        {
          lp[k] = t->logp[k];
          if (first)
            g->logp_old[off + k] = lp[k];
        }
      const int64_t offs[2] = { 0, nc };
      const double seq_loss = hz_grpo_loss (gp, 1, offs, lp, g->logp_old + off,
                                            g->logp_ref ? g->logp_ref + off : NULL,
                                            adv + i, dl);
      /* hz_grpo_loss of one sequence is its token mean under either normalisation; the
       * group's loss weights it 1/G' ("grpo") or nc/N ("dapo"). */
      const double w = weight * (gp->norm == HZ_GRPO_NORM_SEQUENCE
                                 ? 1.0 / n_nonempty : (double) nc / n_tok);
      tot->loss += w * seq_loss;
      memset (t->dlogp, 0, sizeof (float) * T);
      for (int64_t k = 0; k < nc; k++)
        {
          t->dlogp[np - 1 + k] = (float) (w * dl[k]);
          const double ratio = exp (lp[k] - g->logp_old[off + k]);
          double dj;
          hz_grpo_clipped_objective (ratio, adv[i], gp->clip_eps, &dj);
          tot->clipped += dj == 0 && adv[i] != 0;
          if (g->logp_ref)
            tot->kl += hz_grpo_k3 (lp[k], g->logp_ref[off + k]);
        }
      tot->tokens += nc;
      hz_op_logprob_bwd_mt_f32 (hz_train_graph_threads_f32 (t->graph),
                                hz_train_dlogits_f32 (t->graph), t->dlogp, logits, t->targets,
                                T, V);
      hz_train_backward_f32 (t->graph, t->lora->params, t->lora->grads);
    }
  if (first)
    g->have_old = TRUE;
}

double
hz_grpo_trainer_step (HzGrpoTrainer *t, HzGrpoGroup *const *groups, int n,
                      HzGrpoStepStats *stats)
{
  HzGrpoStepStats st = { 0 };
  int64_t n_comp = 0, n_tok = 0;
  for (int j = 0; j < n; j++)
    {
      for (int i = 0; i < groups[j]->n; i++)
        st.mean_reward += groups[j]->rewards[i];
      n_comp += groups[j]->n;
      n_tok += groups[j]->offsets[groups[j]->n];
      if (t->p.grpo.beta > 0 && !groups[j]->have_ref)
        group_reference (t, groups[j]);
    }
  st.mean_reward /= MAX (n_comp, 1);
  st.mean_length = (double) n_tok / MAX (n_comp, 1);
  for (int it = 0; it < t->p.n_iterations; it++)
    {
      PassTotals tot = { 0 };
      hz_lora_zero_grad (t->lora);
      for (int j = 0; j < n; j++)
        group_pass (t, groups[j], 1.0 / n, &tot);
      st.grad_norm = hz_grad_clip (t->lora->grads, t->lora->n_params, t->p.max_grad_norm);
      const double lr = t->p.adamw.lr * hz_schedule_factor (&t->p.schedule, t->opt->step);
      hz_adamw_step (t->opt, t->lora->params, t->lora->grads, lr);
      st.clip_fraction = tot.tokens ? tot.clipped / tot.tokens : 0;
      if (it == 0)
        {
          st.loss = tot.loss;
          st.mean_kl = tot.tokens ? tot.kl / tot.tokens : 0;
        }
    }
  if (stats)
    *stats = st;
  return st.loss;
}

double
hz_grpo_trainer_step_dp (HzGrpoTrainer *t, HzDpSgd *dp, HzGrpoGroup *const *groups, int n,
                         double expected_batch, int *n_clipped, GError **error)
{
  if (t->p.n_iterations != 1 || !(expected_batch > 0))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "DP-SGD GRPO needs n_iterations = 1 and an expected batch > 0");
      return NAN;
    }
  const gsize np = t->lora->n_params;
  if (t->dp_sum == NULL)
    t->dp_sum = g_new (float, np);
  memset (t->dp_sum, 0, np * sizeof (float));
  double loss = 0;
  int clipped = 0;
  for (int j = 0; j < n; j++)
    {
      if (t->p.grpo.beta > 0 && !groups[j]->have_ref)
        group_reference (t, groups[j]);
      PassTotals tot = { 0 };
      hz_lora_zero_grad (t->lora);
      group_pass (t, groups[j], 1.0, &tot);
      loss += tot.loss;
      clipped += hz_dp_sgd_accumulate (dp, t->dp_sum, t->lora->grads, np, NULL)
                 > hz_dp_sgd_get_params (dp)->clip_norm;
    }
  if (n_clipped)
    *n_clipped = clipped;
  if (!hz_dp_sgd_finish (dp, t->dp_sum, np, expected_batch, error))
    return NAN;
  memcpy (t->lora->grads, t->dp_sum, np * sizeof (float));
  const double lr = t->p.adamw.lr * hz_schedule_factor (&t->p.schedule, t->opt->step);
  hz_adamw_step (t->opt, t->lora->params, t->lora->grads, lr);
  return loss / expected_batch;
}
