/* learner/sft.c — supervised LoRA fine-tuning steps (see sft.h). */
#include <math.h>
#include <string.h>
#include "sft.h"
#ifdef HZ_LEARN_GPU
#include "gpu-train.h"
#endif

struct _HzSftTrainer {
  const HzLlm      *llm;
  HzLora           *lora;
  HzSftParams       p;
  int64_t           max_tokens;
  HzTrainGraph_f32 *graph;
  HzAdamW          *opt;
  float            *example_grad;   /* DP-SGD: one example's gradient [n_params] */
#ifdef HZ_LEARN_GPU
  HzGpuTrainer     *gpu;            /* NULL: the CPU graph */
  gboolean          opt_on_gpu;     /* the AdamW moments live on the device (opt's stale) */
#endif
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
  p->gpu_max_seqs = 4;
}

#ifdef HZ_LEARN_GPU
/* Leave the GPU after a device error: the moments come back to the host if they can. */
static void
gpu_abandon (HzSftTrainer *t, GError *error)
{
  g_warning ("GPU training failed (%s); continuing on the CPU", error ? error->message : "?");
  if (t->opt_on_gpu && !hz_gpu_trainer_get_optimizer (t->gpu, t->opt, NULL))
    g_warning ("the optimiser state on the GPU was lost; its moments restart from the last copy");
  t->opt_on_gpu = FALSE;
  g_clear_pointer (&t->gpu, hz_gpu_trainer_free);
}

/* Forward (and with grads, backward adding weight x the gradient of the summed loss into
 * the device gradients) of examples[0..n) in passes of up to gpu_max_seqs sequences, each
 * pass padded to its longest example with masked targets. Returns the summed loss. */
static gboolean
gpu_run (HzSftTrainer *t, const HzSftExample *ex, int n, double weight, gboolean grads,
         double *loss, int64_t *n_valid, GError **error)
{
  const int per = MAX (1, t->p.gpu_max_seqs);
  *loss = 0;
  if (n_valid)
    *n_valid = 0;
  for (int i0 = 0; i0 < n; i0 += per)
    {
      const int k = MIN (per, n - i0);
      int64_t T = 1;
      for (int i = 0; i < k; i++)
        T = MAX (T, ex[i0 + i].n);
      g_autofree int32_t *tok = g_new0 (int32_t, k * T);
      g_autofree int32_t *tgt = g_new (int32_t, k * T);
      for (int64_t j = 0; j < k * T; j++)
        tgt[j] = -100;
      for (int i = 0; i < k; i++)
        {
          memcpy (tok + i * T, ex[i0 + i].tokens, ex[i0 + i].n * sizeof (int32_t));
          memcpy (tgt + i * T, ex[i0 + i].targets, ex[i0 + i].n * sizeof (int32_t));
        }
      double l = 0;
      int64_t nv = 0;
      if (!hz_gpu_trainer_sft_step (t->gpu, tok, tgt, k, T, weight, grads, &l, &nv, error))
        return FALSE;
      *loss += l;
      if (n_valid)
        *n_valid += nv;
    }
  return TRUE;
}

/* One optimiser step on the GPU (see hz_sft_trainer_step). FALSE on a device error. */
static gboolean
gpu_step (HzSftTrainer *t, const HzSftExample *batch, int n, int64_t total, double *loss,
          double *grad_norm, GError **error)
{
  const double lr = t->p.adamw.lr * hz_schedule_factor (&t->p.schedule, t->opt->step);
  double norm = 0;
  if (!hz_gpu_trainer_set_params (t->gpu, t->lora->params, error)
      || !hz_gpu_trainer_zero_grad (t->gpu, error)
      || !gpu_run (t, batch, n, 1.0 / total, TRUE, loss, NULL, error)
      || (!t->opt_on_gpu && !hz_gpu_trainer_set_optimizer (t->gpu, t->opt, error)))
    return FALSE;
  t->opt_on_gpu = TRUE;
  if (!hz_gpu_trainer_optimizer_step (t->gpu, &t->p.adamw, lr, t->p.max_grad_norm, &norm, error)
      || !hz_gpu_trainer_get_params (t->gpu, t->lora->params, error)
      || !hz_gpu_trainer_get_grads (t->gpu, t->lora->grads, error))
    return FALSE;
  t->opt->step++;   /* the count on the host; the moments stay on the device */
  if (grad_norm)
    *grad_norm = norm;
  return TRUE;
}
#endif

HzSftTrainer *
hz_sft_trainer_new (const HzLlm *llm, HzLora *lora, const HzSftParams *p, int64_t max_tokens)
{
  HzSftTrainer *t = g_new0 (HzSftTrainer, 1);
  t->llm = llm;
  t->lora = lora;
  t->p = *p;
  t->max_tokens = max_tokens;
  t->graph = hz_train_graph_new_f32 (llm, lora, max_tokens, p->recompute);
  hz_train_graph_set_threads_f32 (t->graph, p->n_threads);
  t->opt = hz_adamw_new (lora->n_params, &p->adamw);
#ifdef HZ_LEARN_GPU
  if (hz_gpu_train_wanted ())
    {
      g_autoptr (GError) error = NULL;
      t->gpu = hz_gpu_trainer_new (llm, lora, MAX (1, p->gpu_max_seqs), max_tokens, &error);
      if (t->gpu)
        g_message ("learner: training on the GPU, %s", hz_gpu_trainer_describe (t->gpu));
      else
        g_message ("learner: training on the CPU (%s)", error->message);
    }
  else
    g_message ("learner: training on the CPU (HZ_DEVICE=cpu)");
#endif
  return t;
}

size_t
hz_sft_trainer_device_bytes (HzSftTrainer *t)
{
#ifdef HZ_LEARN_GPU
  if (t->gpu)
    return hz_gpu_trainer_device_bytes (t->gpu);
#endif
  return 0;
}

gboolean
hz_sft_trainer_on_gpu (const HzSftTrainer *t)
{
#ifdef HZ_LEARN_GPU
  return t->gpu != NULL;
#else
  return FALSE;
#endif
}

void
hz_sft_trainer_free (HzSftTrainer *t)
{
  if (t == NULL)
    return;
  hz_train_graph_free_f32 (t->graph);
#ifdef HZ_LEARN_GPU
  hz_gpu_trainer_free (t->gpu);
#endif
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
#ifdef HZ_LEARN_GPU
  /* the caller may read or replace the moments: the host copy becomes the reference */
  g_autoptr (GError) error = NULL;
  if (t->opt_on_gpu && !hz_gpu_trainer_get_optimizer (t->gpu, t->opt, &error))
    gpu_abandon (t, error);
  t->opt_on_gpu = FALSE;
#endif
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
#ifdef HZ_LEARN_GPU
  if (t->gpu)
    {
      g_autoptr (GError) error = NULL;
      double loss = 0;
      if (gpu_step (t, batch, n, total, &loss, grad_norm, &error))
        return loss / total;
      gpu_abandon (t, error);
    }
#endif
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
#ifdef HZ_LEARN_GPU
  {
    g_autoptr (GError) gerr = NULL;
    if (t->gpu && !hz_gpu_trainer_set_params (t->gpu, t->lora->params, &gerr))
      gpu_abandon (t, gerr);
  }
#endif
  double loss = 0;
  int n_loss = 0, n_clipped = 0;
  for (int i = 0; i < n; i++)
    {
      const int64_t count = count_targets (&batch[i]);
      memset (t->example_grad, 0, np * sizeof (float));
      double norm = 0, clipped = 0;
      if (count > 0)
        {
          double l = 0;
#ifdef HZ_LEARN_GPU
          g_autoptr (GError) gerr = NULL;
          if (t->gpu && !(hz_gpu_trainer_zero_grad (t->gpu, &gerr)
                          && gpu_run (t, &batch[i], 1, 1.0 / count, TRUE, &l, NULL, &gerr)
                          && hz_gpu_trainer_get_grads (t->gpu, t->example_grad, &gerr)))
            {
              gpu_abandon (t, gerr);
              memset (t->example_grad, 0, np * sizeof (float));
            }
          if (!t->gpu)
#endif
          l = hz_train_sft_step_f32 (t->graph, t->lora->params, t->example_grad,
                                     batch[i].tokens, batch[i].targets, batch[i].n,
                                     1.0 / count, NULL);
          loss += l / count;
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
  hz_adamw_step (hz_sft_trainer_optimizer (t), t->lora->params, sum, lr);
  return n_loss ? loss / n_loss : 0;
}

double
hz_sft_trainer_evaluate (HzSftTrainer *t, const HzSftExample *examples, int n)
{
  double loss = 0;
  int64_t total = 0;
#ifdef HZ_LEARN_GPU
  if (t->gpu)
    {
      g_autoptr (GError) error = NULL;
      if (hz_gpu_trainer_set_params (t->gpu, t->lora->params, &error)
          && gpu_run (t, examples, n, 0, FALSE, &loss, &total, &error))
        return total ? loss / total : 0;
      gpu_abandon (t, error);
      loss = 0;
      total = 0;
    }
#endif
  for (int i = 0; i < n; i++)
    {
      int64_t nv = 0;
      loss += hz_train_sft_step_f32 (t->graph, t->lora->params, NULL, examples[i].tokens,
                                     examples[i].targets, examples[i].n, 0, &nv);
      total += nv;
    }
  return total ? loss / total : 0;
}
