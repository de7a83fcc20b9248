/* learner/optim.c — AdamW, clipping and schedules (see optim.h). */
#include "optim.h"

#include <math.h>

void
hz_adamw_params_init (HzAdamWParams *p)
{
  p->lr = 1e-4;
  p->beta1 = 0.9;
  p->beta2 = 0.999;
  p->eps = 1e-8;
  p->weight_decay = 0.01;
}

HzAdamW *
hz_adamw_new (gsize n, const HzAdamWParams *p)
{
  HzAdamW *opt = g_new0 (HzAdamW, 1);
  opt->p = *p;
  opt->n = n;
  opt->m = g_new0 (float, MAX (n, 1));
  opt->v = g_new0 (float, MAX (n, 1));
  return opt;
}

void
hz_adamw_free (HzAdamW *opt)
{
  if (opt == NULL)
    return;
  g_free (opt->m);
  g_free (opt->v);
  g_free (opt);
}

void
hz_adamw_step (HzAdamW *opt, float *params, const float *grads, double lr)
{
  const HzAdamWParams *p = &opt->p;
  opt->step++;
  const double bc1 = 1.0 - pow (p->beta1, (double) opt->step);
  const double bc2 = 1.0 - pow (p->beta2, (double) opt->step);
  const double step_size = lr / bc1, sqrt_bc2 = sqrt (bc2);
  const double decay = 1.0 - lr * p->weight_decay;

  for (gsize i = 0; i < opt->n; i++)
    {
      const double g = grads[i];
      const float m = opt->m[i] = (float) (p->beta1 * opt->m[i] + (1.0 - p->beta1) * g);
      const float v = opt->v[i] = (float) (p->beta2 * opt->v[i] + (1.0 - p->beta2) * g * g);
      const double pi = (double) params[i] * decay;
      params[i] = (float) (pi - step_size * m / (sqrt ((double) v) / sqrt_bc2 + p->eps));
    }
}

double
hz_grad_global_norm (const float *g, gsize n)
{
  double ss = 0;
  for (gsize i = 0; i < n; i++)
    ss += (double) g[i] * g[i];
  return sqrt (ss);
}

void
hz_grad_scale (float *g, gsize n, double s)
{
  for (gsize i = 0; i < n; i++)
    g[i] = (float) (g[i] * s);
}

double
hz_grad_clip (float *g, gsize n, double max_norm)
{
  const double norm = hz_grad_global_norm (g, n);
  if (max_norm > 0)
    {
      const double coef = max_norm / (norm + 1e-6);
      if (coef < 1.0)
        hz_grad_scale (g, n, coef);
    }
  return norm;
}

double
hz_schedule_factor (const HzSchedule *s, int64_t step)
{
  if (step < s->warmup_steps)
    return (double) step / (double) MAX (1, s->warmup_steps);
  double p = (double) (step - s->warmup_steps) / (double) MAX (1, s->total_steps - s->warmup_steps);
  p = CLAMP (p, 0.0, 1.0);
  double v;
  switch (s->kind)
    {
    case HZ_SCHEDULE_LINEAR: v = 1.0 - p; break;
    case HZ_SCHEDULE_COSINE: v = 0.5 * (1.0 + cos (G_PI * p)); break;
    case HZ_SCHEDULE_CONSTANT:
    default: v = 1.0; break;
    }
  return s->min_ratio + (1.0 - s->min_ratio) * v;
}
