/* learner/grpo.c — the GRPO objective (see grpo.h). */
#include "grpo.h"

#include <math.h>
#include <string.h>

void
hz_grpo_params_init (HzGrpoParams *p)
{
  p->clip_eps = 0.2;
  p->beta = 0.04;
  p->norm = HZ_GRPO_NORM_SEQUENCE;
}

const char *
hz_grpo_norm_name (HzGrpoNorm n)
{
  return n == HZ_GRPO_NORM_TOKEN ? "dapo" : "grpo";
}

gboolean
hz_grpo_norm_from_name (const char *name, HzGrpoNorm *out)
{
  if (g_strcmp0 (name, "grpo") == 0)
    *out = HZ_GRPO_NORM_SEQUENCE;
  else if (g_strcmp0 (name, "dapo") == 0)
    *out = HZ_GRPO_NORM_TOKEN;
  else
    return FALSE;
  return TRUE;
}

void
hz_grpo_advantages (const double *rewards, int n, double *adv)
{
  if (n < 2)
    {
      for (int i = 0; i < n; i++)
        adv[i] = 0;
      return;
    }
  double mean = 0;
  for (int i = 0; i < n; i++)
    mean += rewards[i];
  mean /= n;
  double ss = 0;
  for (int i = 0; i < n; i++)
    ss += (rewards[i] - mean) * (rewards[i] - mean);
  const double sd = sqrt (ss / (n - 1));
  for (int i = 0; i < n; i++)
    adv[i] = (rewards[i] - mean) / (sd + 1e-4);
}

double
hz_grpo_k3 (double logp, double logp_ref)
{
  const double x = logp_ref - logp;
  return exp (x) - x - 1.0;
}

double
hz_grpo_clipped_objective (double ratio, double adv, double eps, double *dJ_dlogp)
{
  const double unclipped = ratio * adv;
  const double clipped = CLAMP (ratio, 1.0 - eps, 1.0 + eps) * adv;
  /* ties (ratio inside the range) take the unclipped branch, whose gradient torch's
   * clamp passes through as well */
  const gboolean take_unclipped = unclipped <= clipped;
  if (dJ_dlogp)
    *dJ_dlogp = take_unclipped ? unclipped : 0.0;   /* d(rho A)/d logp = rho A */
  return take_unclipped ? unclipped : clipped;
}

double
hz_grpo_loss (const HzGrpoParams *p, int n_seq, const int64_t *offsets, const double *logp,
              const double *logp_old, const double *logp_ref, const double *adv, double *dlogp)
{
  g_return_val_if_fail (p->beta == 0 || logp_ref != NULL, NAN);
  int64_t n_tok = 0;
  int n_nonempty = 0;
  for (int i = 0; i < n_seq; i++)
    {
      n_tok += offsets[i + 1] - offsets[i];
      n_nonempty += offsets[i + 1] > offsets[i];
    }
  double loss = 0;
  for (int i = 0; i < n_seq; i++)
    {
      const int64_t len = offsets[i + 1] - offsets[i];
      if (len <= 0)
        continue;
      const double w = p->norm == HZ_GRPO_NORM_TOKEN ? 1.0 / n_tok
                                                    : 1.0 / ((double) n_nonempty * len);
      for (int64_t t = offsets[i]; t < offsets[i + 1]; t++)
        {
          double dJ, dk3 = 0, k3 = 0;
          const double J = hz_grpo_clipped_objective (exp (logp[t] - logp_old[t]), adv[i],
                                                      p->clip_eps, &dJ);
          if (p->beta != 0)
            {
              k3 = hz_grpo_k3 (logp[t], logp_ref[t]);
              dk3 = 1.0 - exp (logp_ref[t] - logp[t]);
            }
          loss += w * -(J - p->beta * k3);
          if (dlogp)
            dlogp[t] = w * -(dJ - p->beta * dk3);
        }
    }
  return loss;
}
