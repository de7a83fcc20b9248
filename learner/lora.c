/* learner/lora.c — LoRA adapter sets (see lora.h). */
#include "lora.h"

#include <math.h>
#include <string.h>
#include "ops.h"

G_DEFINE_QUARK (hz-learn-error-quark, hz_learn_error)

static const struct {
  const char *peft, *parent, *gguf;
} target_names[HZ_LORA_N_TARGETS] = {
  [HZ_LORA_Q] = { "q_proj", "self_attn", "attn_q" },
  [HZ_LORA_K] = { "k_proj", "self_attn", "attn_k" },
  [HZ_LORA_V] = { "v_proj", "self_attn", "attn_v" },
  [HZ_LORA_O] = { "o_proj", "self_attn", "attn_output" },
  [HZ_LORA_GATE] = { "gate_proj", "mlp", "ffn_gate" },
  [HZ_LORA_UP] = { "up_proj", "mlp", "ffn_up" },
  [HZ_LORA_DOWN] = { "down_proj", "mlp", "ffn_down" },
};

const char *
hz_lora_target_peft_name (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].peft;
}

const char *
hz_lora_target_peft_parent (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].parent;
}

const char *
hz_lora_target_gguf_name (HzLoraTarget t)
{
  g_return_val_if_fail (t < HZ_LORA_N_TARGETS, NULL);
  return target_names[t].gguf;
}

gboolean
hz_lora_target_from_name (const char *name, HzLoraTarget *out)
{
  for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
    if (g_strcmp0 (name, target_names[t].peft) == 0 || g_strcmp0 (name, target_names[t].gguf) == 0)
      {
        *out = t;
        return TRUE;
      }
  return FALSE;
}

void
hz_lora_config_init (HzLoraConfig *c)
{
  c->r = 8;
  c->alpha = 8.0f;
  c->use_rslora = FALSE;
  c->targets = HZ_LORA_BIT (HZ_LORA_Q) | HZ_LORA_BIT (HZ_LORA_V);
}

double
hz_lora_config_scaling (const HzLoraConfig *c)
{
  return c->use_rslora ? c->alpha / sqrt ((double) c->r) : (double) c->alpha / c->r;
}

/* in/out sizes of a target's base matrix */
static void
target_shape (const HzHparams *hp, HzLoraTarget t, int64_t *n_in, int64_t *n_out)
{
  const int64_t d = hp->n_embd, ff = hp->n_ff;
  switch (t)
    {
    case HZ_LORA_Q: *n_in = d; *n_out = (int64_t) hp->n_head * hp->head_dim_k; break;
    case HZ_LORA_K: *n_in = d; *n_out = (int64_t) hp->n_head_kv * hp->head_dim_k; break;
    case HZ_LORA_V: *n_in = d; *n_out = (int64_t) hp->n_head_kv * hp->head_dim_v; break;
    case HZ_LORA_O: *n_in = (int64_t) hp->n_head * hp->head_dim_v; *n_out = d; break;
    case HZ_LORA_GATE:
    case HZ_LORA_UP: *n_in = d; *n_out = ff; break;
    case HZ_LORA_DOWN: *n_in = ff; *n_out = d; break;
    default: g_assert_not_reached ();
    }
}

HzLora *
hz_lora_new (const HzHparams *hp, const HzLoraConfig *cfg, GError **error)
{
  if (cfg->r < 1 || !isfinite (cfg->alpha) || cfg->alpha <= 0 ||
      (cfg->targets & HZ_LORA_TARGETS_ALL) == 0 || (cfg->targets & ~HZ_LORA_TARGETS_ALL))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "invalid LoRA configuration (r %d, alpha %g, targets 0x%x)",
                   cfg->r, cfg->alpha, cfg->targets);
      return NULL;
    }
  HzLora *lora = g_new0 (HzLora, 1);
  lora->config = *cfg;
  lora->scaling = (float) hz_lora_config_scaling (cfg);
  lora->n_layer = hp->n_layer;
  lora->arch = hp->arch;
  lora->n_head = hp->n_head;
  lora->n_head_kv = hp->n_head_kv;
  lora->head_dim_k = hp->head_dim_k;
  lora->slots = g_new0 (HzLoraSlot, (gsize) hp->n_layer * HZ_LORA_N_TARGETS);

  gsize off = 0;
  for (int32_t il = 0; il < hp->n_layer; il++)
    for (int t = 0; t < HZ_LORA_N_TARGETS; t++)
      {
        if (!(cfg->targets & HZ_LORA_BIT (t)))
          continue;
        HzLoraSlot *s = &lora->slots[(gsize) il * HZ_LORA_N_TARGETS + t];
        target_shape (hp, t, &s->n_in, &s->n_out);
        s->off_a = off;
        off += (gsize) cfg->r * s->n_in;
        s->off_b = off;
        off += (gsize) s->n_out * cfg->r;
      }
  lora->n_params = off;
  lora->params = g_new0 (float, off);
  lora->grads = g_new0 (float, off);
  return lora;
}

void
hz_lora_free (HzLora *lora)
{
  if (lora == NULL)
    return;
  g_free (lora->slots);
  g_free (lora->params);
  g_free (lora->grads);
  g_free (lora);
}

const HzLoraSlot *
hz_lora_slot (const HzLora *lora, int32_t layer, HzLoraTarget t)
{
  g_return_val_if_fail (layer >= 0 && layer < lora->n_layer && t < HZ_LORA_N_TARGETS, NULL);
  const HzLoraSlot *s = &lora->slots[(gsize) layer * HZ_LORA_N_TARGETS + t];
  return s->n_in > 0 ? s : NULL;
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
