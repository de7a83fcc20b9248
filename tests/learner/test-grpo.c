/* tests/learner/test-grpo.c — the GRPO unit vectors of issue 7 and the loss gradient. */
#include <glib.h>
#include <math.h>
#include "grpo.h"

static void
test_advantages (void)
{
  /* mean 0.5, sample std sqrt(1/3) = 0.5773503: 0.5 / (0.5773503 + 1e-4) = 0.8658754 */
  const double r[4] = { 1, 0, 0, 1 };
  double a[4];
  hz_grpo_advantages (r, 4, a);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (a[i], r[i] > 0 ? 0.8658754 : -0.8658754, 5e-8);
  /* equal rewards carry no signal */
  const double same[3] = { 2, 2, 2 };
  double z[3];
  hz_grpo_advantages (same, 3, z);
  for (int i = 0; i < 3; i++)
    g_assert_cmpfloat (z[i], ==, 0);
  double one;
  hz_grpo_advantages (r, 1, &one);
  g_assert_cmpfloat (one, ==, 0);
}

static void
test_k3 (void)
{
  /* exp(-0.5) + 0.5 - 1 = 0.1065307 */
  g_assert_cmpfloat_with_epsilon (hz_grpo_k3 (-1.0, -1.5), 0.1065307, 5e-8);
  g_assert_cmpfloat (hz_grpo_k3 (-2.0, -2.0), ==, 0);
  g_assert_cmpfloat (hz_grpo_k3 (-0.3, -4.0), >, 0);
}

static void
test_clipped_objective (void)
{
  double d = -1;
  /* ratio 1.3, A = +1: clipped to 1.2, no gradient */
  g_assert_cmpfloat_with_epsilon (hz_grpo_clipped_objective (1.3, 1.0, 0.2, &d), 1.2, 1e-12);
  g_assert_cmpfloat (d, ==, 0);
  /* ratio 0.7, A = -1: clipped to -0.8, no gradient */
  g_assert_cmpfloat_with_epsilon (hz_grpo_clipped_objective (0.7, -1.0, 0.2, &d), -0.8, 1e-12);
  g_assert_cmpfloat (d, ==, 0);
  /* ratio 0.7, A = +1: 0.7 with gradient rho A = 0.7 */
  g_assert_cmpfloat_with_epsilon (hz_grpo_clipped_objective (0.7, 1.0, 0.2, &d), 0.7, 1e-12);
  g_assert_cmpfloat_with_epsilon (d, 0.7, 1e-12);
  /* inside the range: unclipped */
  g_assert_cmpfloat_with_epsilon (hz_grpo_clipped_objective (1.1, -2.0, 0.2, &d), -2.2, 1e-12);
  g_assert_cmpfloat_with_epsilon (d, -2.2, 1e-12);
}

/* the loss and its per-token gradient (finite differences), both normalisations */
static void
check_loss (HzGrpoNorm norm)
{
  HzGrpoParams p;
  hz_grpo_params_init (&p);
  g_assert_cmpfloat (p.clip_eps, ==, 0.2);
  g_assert_cmpfloat (p.beta, ==, 0.04);
  p.norm = norm;
  const int64_t off[4] = { 0, 3, 3, 8 };   /* lengths 3, 0 (empty), 5 */
  double logp[8] = { -1.0, -0.5, -2.0, -0.1, -3.0, -1.2, -0.7, -0.2 };
  const double old[8] = { -1.1, -0.9, -1.6, -0.1, -2.5, -1.25, -0.65, -0.6 };
  const double ref[8] = { -1.3, -0.4, -2.2, -0.3, -2.9, -1.0, -0.9, -0.25 };
  const double adv[3] = { 0.9, 0.0, -0.7 };
  double grad[8];
  const double loss = hz_grpo_loss (&p, 3, off, logp, old, ref, adv, grad);

  /* direct evaluation */
  double want = 0;
  for (int i = 0; i < 3; i++)
    for (int64_t t = off[i]; t < off[i + 1]; t++)
      {
        const double rho = exp (logp[t] - old[t]);
        const double J = MIN (rho * adv[i], CLAMP (rho, 0.8, 1.2) * adv[i]);
        const double k3 = exp (ref[t] - logp[t]) - (ref[t] - logp[t]) - 1;
        const double w = norm == HZ_GRPO_NORM_TOKEN ? 1.0 / 8 : 1.0 / (2.0 * (off[i + 1] - off[i]));
        want += w * -(J - 0.04 * k3);
      }
  g_assert_cmpfloat_with_epsilon (loss, want, 1e-12);

  double nz = 0;
  for (int t = 0; t < 8; t++)
    {
      const double h = 1e-6, x = logp[t];
      logp[t] = x + h;
      const double lp = hz_grpo_loss (&p, 3, off, logp, old, ref, adv, NULL);
      logp[t] = x - h;
      const double lm = hz_grpo_loss (&p, 3, off, logp, old, ref, adv, NULL);
      logp[t] = x;
      g_assert_cmpfloat_with_epsilon (grad[t], (lp - lm) / (2 * h), 1e-7);
      nz = MAX (nz, fabs (grad[t]));
    }
  g_assert_cmpfloat (nz, >, 0.01);
  /* token 1 of sequence 0: ratio exp(0.4) = 1.49 > 1.2 with A > 0 -> only the KL term */
  g_assert_cmpfloat_with_epsilon (grad[1], (norm == HZ_GRPO_NORM_TOKEN ? 1.0 / 8 : 1.0 / 6) *
                                           0.04 * (1 - exp (-0.4 + 0.5)), 1e-12);
}

static void
test_loss_grpo (void)
{
  check_loss (HZ_GRPO_NORM_SEQUENCE);
}

static void
test_loss_dapo (void)
{
  check_loss (HZ_GRPO_NORM_TOKEN);
  HzGrpoNorm n;
  g_assert_true (hz_grpo_norm_from_name ("dapo", &n) && n == HZ_GRPO_NORM_TOKEN);
  g_assert_true (hz_grpo_norm_from_name ("grpo", &n) && n == HZ_GRPO_NORM_SEQUENCE);
  g_assert_false (hz_grpo_norm_from_name ("ppo", &n));
  g_assert_cmpstr (hz_grpo_norm_name (HZ_GRPO_NORM_TOKEN), ==, "dapo");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/grpo/advantages", test_advantages);
  g_test_add_func ("/learner/grpo/k3", test_k3);
  g_test_add_func ("/learner/grpo/clipped-objective", test_clipped_objective);
  g_test_add_func ("/learner/grpo/loss-grpo", test_loss_grpo);
  g_test_add_func ("/learner/grpo/loss-dapo", test_loss_dapo);
  return g_test_run ();
}
