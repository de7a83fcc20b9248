/* learner/dp-sgd.c — DP-SGD sampling, clipping, noise and accounting (see dp-sgd.h). */
#include <math.h>
#include <string.h>
#include "dp-sgd.h"
#include "hanzo/egress-dp.h"
#include "lora.h"         /* HZ_LEARN_ERROR */
#include "optim.h"

struct _HzDpSgd {
  HzDpSgdParams p;
  HzNoise      *rng;
  guint64       threshold;   /* include an example when u < threshold, u uniform in [0, 2^53) */
  float        *buf;         /* noise chunk */
};

#define UNIFORM_BITS 53
#define NOISE_CHUNK 65536

void
hz_dp_sgd_params_init (HzDpSgdParams *p)
{
  *p = (HzDpSgdParams) { .sample_rate = 0, .noise_multiplier = 1.0, .clip_norm = 1.0,
                         .delta = 1e-6, .test_seed = 0 };
}

HzDpSgd *
hz_dp_sgd_new (const HzDpSgdParams *p, GError **error)
{
  if (!(p->sample_rate > 0 && p->sample_rate <= 1) || !(p->noise_multiplier >= 0)
      || !isfinite (p->noise_multiplier) || !(p->clip_norm > 0) || !isfinite (p->clip_norm)
      || !(p->delta > 0 && p->delta < 1))
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "DP-SGD needs q in (0, 1], z >= 0, C > 0 and delta in (0, 1) "
                   "(got q %g, z %g, C %g, delta %g)", p->sample_rate, p->noise_multiplier,
                   p->clip_norm, p->delta);
      return NULL;
    }
  HzDpSgd *dp = g_new0 (HzDpSgd, 1);
  dp->p = *p;
  dp->rng = p->test_seed ? hz_noise_new_insecure_for_tests (p->test_seed) : hz_noise_new ();
  dp->threshold = (guint64) llround (ldexp (p->sample_rate, UNIFORM_BITS));
  return dp;
}

void
hz_dp_sgd_free (HzDpSgd *dp)
{
  if (dp == NULL)
    return;
  hz_noise_free (dp->rng);
  if (dp->buf)
    explicit_bzero (dp->buf, NOISE_CHUNK * sizeof (float));
  g_free (dp->buf);
  g_free (dp);
}

const HzDpSgdParams *
hz_dp_sgd_get_params (const HzDpSgd *dp)
{
  return &dp->p;
}

static void
rng_error (GError **error, GError *local)
{
  g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID, "DP-SGD randomness: %s",
               local->message);
  g_error_free (local);
}

gboolean
hz_dp_sgd_sample (HzDpSgd *dp, guint n, GArray *indices, GError **error)
{
  const unsigned __int128 bound = (unsigned __int128) 1 << UNIFORM_BITS;
  for (guint i = 0; i < n; i++)
    {
      unsigned __int128 u;
      GError *local = NULL;
      if (!hz_noise_uniform (dp->rng, bound, &u, &local))
        {
          rng_error (error, local);
          return FALSE;
        }
      if ((guint64) u < dp->threshold)
        g_array_append_val (indices, i);
    }
  return TRUE;
}

double
hz_dp_sgd_clip (const HzDpSgd *dp, float *g, gsize n)
{
  return hz_grad_clip (g, n, dp->p.clip_norm);
}

gboolean
hz_dp_sgd_add_noise (HzDpSgd *dp, float *sum, gsize n, GError **error)
{
  const double sigma = dp->p.noise_multiplier * dp->p.clip_norm;
  if (sigma == 0)
    return TRUE;
  if (dp->buf == NULL)
    dp->buf = g_new (float, NOISE_CHUNK);
  for (gsize k0 = 0; k0 < n; k0 += NOISE_CHUNK)
    {
      const gsize m = MIN ((gsize) NOISE_CHUNK, n - k0);
      GError *local = NULL;
      if (!hz_noise_gaussian_grid (dp->rng, sigma, dp->buf, m, &local))
        {
          rng_error (error, local);
          return FALSE;
        }
      for (gsize k = 0; k < m; k++)
        sum[k0 + k] += dp->buf[k];
    }
  return TRUE;
}

double
hz_dp_sgd_accumulate (const HzDpSgd *dp, float *sum, float *g, gsize n, double *clipped_norm)
{
  const double norm = hz_dp_sgd_clip (dp, g, n);
  if (clipped_norm)
    *clipped_norm = hz_grad_global_norm (g, n);
  for (gsize k = 0; k < n; k++)
    sum[k] += g[k];
  return norm;
}

gboolean
hz_dp_sgd_finish (HzDpSgd *dp, float *sum, gsize n, double expected_batch, GError **error)
{
  g_return_val_if_fail (expected_batch > 0, FALSE);
  if (!hz_dp_sgd_add_noise (dp, sum, n, error))
    return FALSE;
  hz_grad_scale (sum, n, 1.0 / expected_batch);
  return TRUE;
}

double
hz_dp_sgd_epsilon (double q, double noise_multiplier, guint64 steps, double delta,
                   double *best_order)
{
  if (best_order)
    *best_order = 0;
  if (steps == 0)
    return 0;
  if (!(noise_multiplier > 0))
    return INFINITY;
  gsize n_orders;
  const double *orders = hz_rdp_default_orders (&n_orders);
  g_autofree double *rdp = g_new (double, n_orders);
  hz_rdp_compute (q, noise_multiplier, steps, orders, n_orders, rdp);
  return hz_rdp_to_epsilon (orders, rdp, n_orders, delta, best_order);
}
