/* learner/lora.c — LoRA adapter sets (see lora.h). */
#include "lora.h"

#include <math.h>
#include <string.h>
#include "hanzo/engine.h"
#include "train-ops.h"

G_DEFINE_QUARK (hz-learn-error-quark, hz_learn_error)

HzLora *
hz_lora_new (const HzHparams *hp, const HzLoraConfig *cfg, GError **error)
{
  GError *local = NULL;
  HzLora *lora = hz_lora_alloc (hp, cfg, TRUE, &local);
  if (lora == NULL)
    {
      hz_learn_error_from_engine (local);
      g_propagate_error (error, local);
    }
  return lora;
}

void
hz_learn_error_from_engine (GError *error)
{
  if (error == NULL || error->domain != HZ_ENGINE_ERROR)
    return;
  switch (error->code)
    {
    case HZ_ENGINE_ERROR_BAD_ADAPTER: error->code = HZ_LEARN_ERROR_FORMAT; break;
    case HZ_ENGINE_ERROR_ADAPTER_MISMATCH: error->code = HZ_LEARN_ERROR_MISMATCH; break;
    case HZ_ENGINE_ERROR_INVALID_ARGUMENT: error->code = HZ_LEARN_ERROR_INVALID; break;
    default: return;
    }
  error->domain = HZ_LEARN_ERROR;
}

void
hz_lora_init_peft (HzLora *lora, guint32 seed)
{
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  const double a = sqrt (5.0);
  const double gain = sqrt (2.0 / (1.0 + a * a));
  for (int32_t il = 0; il < lora->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        const HzLoraSlot *s = hz_lora_slot (lora, il, t);
        if (s == NULL)
          continue;
        const double bound = gain * sqrt (3.0 / (double) s->n_in);   /* = 1/sqrt(n_in) */
        float *A = lora->params + s->off_a;
        for (gsize i = 0; i < (gsize) lora->config.r * s->n_in; i++)
          A[i] = (float) g_rand_double_range (rng, -bound, bound);
        memset (lora->params + s->off_b, 0, (gsize) s->n_out * lora->config.r * sizeof (float));
      }
}

void
hz_lora_zero_grad (HzLora *lora)
{
  memset (lora->grads, 0, lora->n_params * sizeof (float));
}

void
hz_lora_apply (const HzLora *lora, int32_t layer, HzLoraTarget t, const HzMatrix *W,
               const float *bias, const float *x, int64_t T, float *y)
{
  const HzLoraSlot *s = hz_lora_slot (lora, layer, t);
  if (s == NULL)
    {
      hz_op_linear_fwd_f32 (y, NULL, x, T, W, bias, NULL, NULL, 0, 0);
      return;
    }
  g_assert (s->n_in == W->n_in && s->n_out == W->n_out);
  g_autofree float *u = g_new (float, T * lora->config.r);
  hz_op_linear_fwd_f32 (y, u, x, T, W, bias, lora->params + s->off_a,
                        lora->params + s->off_b, lora->config.r, lora->scaling);
}

double *
hz_lora_params_f64 (const HzLora *lora)
{
  double *p = g_new (double, lora->n_params);
  for (gsize i = 0; i < lora->n_params; i++)
    p[i] = lora->params[i];
  return p;
}
