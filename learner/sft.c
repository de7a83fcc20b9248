/* learner/sft.c — supervised LoRA fine-tuning steps (see sft.h). */
#include <math.h>
#include <string.h>
#include "sft.h"

struct _HzSftTrainer {
  const HzLlm      *llm;
  HzLora           *lora;
  HzSftParams       p;
  HzTrainGraph_f32 *graph;
  HzAdamW          *opt;
  float            *example_grad;   /* DP-SGD: one example's gradient [n_params] */
};

int64_t
hz_sft_example_build (const int32_t *prompt, int64_t n_prompt, const int32_t *response,
                      int64_t n_response, int32_t *tokens, int32_t *targets)
{
  if (n_response <= 0)
    return 0;
  const int64_t n = n_prompt + n_response - 1;
  for (int64_t t = 0; t < n; t++)
    {
      tokens[t] = t < n_prompt ? prompt[t] : response[t - n_prompt];
      const int64_t next = t + 1;
      targets[t] = next < n_prompt ? -100 : response[next - n_prompt];
    }
  return n;
}

void
hz_sft_params_init (HzSftParams *p)
{
  hz_adamw_params_init (&p->adamw);
  p->schedule = (HzSchedule) { HZ_SCHEDULE_CONSTANT, 0, 1, 0.0 };
  p->max_grad_norm = 1.0;
  p->recompute = TRUE;
  p->n_threads = 0;
}

HzSftTrainer *
hz_sft_trainer_new (const HzLlm *llm, HzLora *lora, const HzSftParams *p, int64_t max_tokens)
{
  HzSftTrainer *t = g_new0 (HzSftTrainer, 1);
  t->llm = llm;
  t->lora = lora;
  t->p = *p;
  t->graph = hz_train_graph_new_f32 (llm, lora, max_tokens, p->recompute);
  hz_train_graph_set_threads_f32 (t->graph, p->n_threads);
  t->opt = hz_adamw_new (lora->n_params, &p->adamw);
  return t;
}

void
hz_sft_trainer_free (HzSftTrainer *t)
{
  if (t == NULL)
    return;
  hz_train_graph_free_f32 (t->graph);
  hz_adamw_free (t->opt);
  g_free (t->example_grad);
  g_free (t);
}

int64_t
hz_sft_trainer_steps (const HzSftTrainer *t)
{
  return t->opt->step;
}

HzAdamW *
hz_sft_trainer_optimizer (HzSftTrainer *t)
{
  return t->opt;
}

static int64_t
count_targets (const HzSftExample *e)
{
  int64_t n = 0;
  for (int64_t i = 0; i < e->n; i++)
    n += e->targets[i] >= 0;
  return n;
}

double
hz_sft_trainer_step (HzSftTrainer *t, const HzSftExample *batch, int n, double *grad_norm)
{
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    total += count_targets (&batch[i]);
  if (grad_norm)
    *grad_norm = 0;
  if (total == 0)
    return 0;
  hz_lora_zero_grad (t->lora);
  double loss = 0;
  for (int i = 0; i < n; i++)
    loss += hz_train_sft_step_f32 (t->graph, t->lora->params, t->lora->grads, batch[i].tokens,
                                   batch[i].targets, batch[i].n, 1.0 / total, NULL);
  const double norm = hz_grad_clip (t->lora->grads, t->lora->n_params, t->p.max_grad_norm);
  if (grad_norm)
    *grad_norm = norm;
  const double lr = t->p.adamw.lr * hz_schedule_factor (&t->p.schedule, t->opt->step);
  hz_adamw_step (t->opt, t->lora->params, t->lora->grads, lr);
  return loss / total;
}

double
hz_sft_trainer_step_dp (HzSftTrainer *t, HzDpSgd *dp, const HzSftExample *batch, int n,
                        double expected_batch, HzDpSgdStepInfo *info, GError **error)
{
  g_return_val_if_fail (expected_batch > 0, NAN);
  const gsize np = t->lora->n_params;
  if (t->example_grad == NULL)
    t->example_grad = g_new (float, np);
  float *sum = t->lora->grads;
  hz_lora_zero_grad (t->lora);
  double loss = 0;
  int n_loss = 0, n_clipped = 0;
  for (int i = 0; i < n; i++)
    {
      const int64_t count = count_targets (&batch[i]);
      memset (t->example_grad, 0, np * sizeof (float));
      double norm = 0, clipped = 0;
      if (count > 0)
        {
          loss += hz_train_sft_step_f32 (t->graph, t->lora->params, t->example_grad,
                                         batch[i].tokens, batch[i].targets, batch[i].n,
                                         1.0 / count, NULL) / count;
          n_loss++;
          norm = hz_dp_sgd_accumulate (dp, sum, t->example_grad, np, &clipped);
        }
      n_clipped += norm > hz_dp_sgd_get_params (dp)->clip_norm;
      if (info && info->norms)
        info->norms[i] = norm;
      if (info && info->clipped_norms)
        info->clipped_norms[i] = clipped;
    }
  if (info)
    {
      info->n_examples = n;
      info->n_clipped = n_clipped;
    }
  if (!hz_dp_sgd_finish (dp, sum, np, expected_batch, error))
    {
      hz_lora_zero_grad (t->lora);
      return NAN;
    }
  const double lr = t->p.adamw.lr * hz_schedule_factor (&t->p.schedule, t->opt->step);
  hz_adamw_step (t->opt, t->lora->params, sum, lr);
  return n_loss ? loss / n_loss : 0;
}

double
hz_sft_trainer_evaluate (HzSftTrainer *t, const HzSftExample *examples, int n)
{
  double loss = 0;
  int64_t total = 0;
  for (int i = 0; i < n; i++)
    {
      int64_t nv = 0;
      loss += hz_train_sft_step_f32 (t->graph, t->lora->params, NULL, examples[i].tokens,
                                     examples[i].targets, examples[i].n, 0, &nv);
      total += nv;
    }
  return total ? loss / total : 0;
}
