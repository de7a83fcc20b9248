/* tests/learner/test-optim.c — AdamW against hand-computed steps, global-norm clipping,
 * gradient scaling and the learning-rate schedules. */
#include <glib.h>
#include <math.h>
#include "optim.h"

/* lr 0.1, betas (0.9, 0.999), eps 1e-8, weight decay 0.01.
 * Step 1, p = 1, g = 0.5: p <- 1 * (1 - 0.1 * 0.01) = 0.999; m = 0.05, v = 0.00025;
 *   m^ = 0.05 / 0.1 = 0.5, v^ = 0.00025 / 0.001 = 0.25; p <- 0.999 - 0.1 * 0.5 / (0.5 + 1e-8)
 *   = 0.8990000020.  p = -2, g = -1: -1.998 + 0.1 / (1 + 1e-8) = -1.8980000010.
 *   p = 0.5, g = 0: only the decay, 0.4995.
 * Step 2 with g = (-0.25, 2, 1e-3), same formulas (t = 2, m^ = m / 0.19, v^ = v / 0.001999):
 *   0.8714672987, -1.9327123535, 0.4245878697. */
static void
test_adamw_hand_computed (void)
{
  HzAdamWParams p;
  hz_adamw_params_init (&p);
  g_assert_cmpfloat (p.beta1, ==, 0.9);
  g_assert_cmpfloat (p.beta2, ==, 0.999);
  g_assert_cmpfloat (p.eps, ==, 1e-8);
  p.lr = 0.1;
  p.weight_decay = 0.01;
  g_autoptr (HzAdamW) opt = hz_adamw_new (3, &p);
  float params[3] = { 1.0f, -2.0f, 0.5f };
  const float g1[3] = { 0.5f, -1.0f, 0.0f }, g2[3] = { -0.25f, 2.0f, 1e-3f };
  hz_adamw_step (opt, params, g1, p.lr);
  g_assert_cmpint (opt->step, ==, 1);
  g_assert_cmpfloat_with_epsilon (params[0], 0.8990000020, 1e-6);
  g_assert_cmpfloat_with_epsilon (params[1], -1.8980000010, 1e-6);
  g_assert_cmpfloat_with_epsilon (params[2], 0.4995, 1e-6);
  hz_adamw_step (opt, params, g2, p.lr);
  g_assert_cmpfloat_with_epsilon (params[0], 0.8714672987, 1e-6);
  g_assert_cmpfloat_with_epsilon (params[1], -1.9327123535, 1e-6);
  g_assert_cmpfloat_with_epsilon (params[2], 0.4245878697, 1e-6);
}

/* the first bias-corrected step moves every parameter with a non-zero gradient by lr
 * against the sign of its gradient (|m^| / sqrt(v^) = 1), whatever the gradient scale */
static void
test_adamw_first_step_sign (void)
{
  HzAdamWParams p;
  hz_adamw_params_init (&p);
  p.weight_decay = 0;
  p.lr = 1e-3;
  g_autoptr (HzAdamW) opt = hz_adamw_new (4, &p);
  float params[4] = { 0, 0, 0, 0 };
  const float g[4] = { 1e-3f, -50.0f, 7.0f, -1e-2f };
  hz_adamw_step (opt, params, g, p.lr);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat_with_epsilon (params[i], g[i] > 0 ? -1e-3 : 1e-3, 1e-8);
}

static void
test_clip (void)
{
  float g[2] = { 3.0f, 4.0f };
  g_assert_cmpfloat_with_epsilon (hz_grad_global_norm (g, 2), 5.0, 1e-12);
  /* torch.nn.utils.clip_grad_norm_: coef = max_norm / (norm + 1e-6) */
  const double n = hz_grad_clip (g, 2, 1.0);
  g_assert_cmpfloat_with_epsilon (n, 5.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (g[0], 3.0 / (5.0 + 1e-6), 1e-7);
  g_assert_cmpfloat_with_epsilon (g[1], 4.0 / (5.0 + 1e-6), 1e-7);
  /* below the threshold nothing changes */
  float h[2] = { 0.3f, 0.4f };
  hz_grad_clip (h, 2, 1.0);
  g_assert_cmpfloat (h[0], ==, 0.3f);
  g_assert_cmpfloat (h[1], ==, 0.4f);
  /* max_norm <= 0: no clipping */
  float k[1] = { 10.0f };
  g_assert_cmpfloat (hz_grad_clip (k, 1, 0), ==, 10.0);
  g_assert_cmpfloat (k[0], ==, 10.0f);
  /* accumulation helper */
  hz_grad_scale (k, 1, 0.25);
  g_assert_cmpfloat (k[0], ==, 2.5f);
}

static void
test_schedules (void)
{
  HzSchedule cos_s = { HZ_SCHEDULE_COSINE, 10, 110, 0.0 };
  g_assert_cmpfloat (hz_schedule_factor (&cos_s, 0), ==, 0.0);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 5), 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 10), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 60), 0.5, 1e-12);
  /* 0.5 (1 + cos(pi/4)) at a quarter of the decay */
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 35), 0.5 * (1 + sqrt (0.5)), 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 110), 0.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&cos_s, 500), 0.0, 1e-12);

  HzSchedule lin = { HZ_SCHEDULE_LINEAR, 4, 24, 0.0 };
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&lin, 2), 0.5, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&lin, 4), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&lin, 9), 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&lin, 24), 0.0, 1e-12);

  HzSchedule floor_s = { HZ_SCHEDULE_COSINE, 0, 100, 0.1 };
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&floor_s, 0), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&floor_s, 100), 0.1, 1e-12);
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&floor_s, 50), 0.55, 1e-12);

  HzSchedule c = { HZ_SCHEDULE_CONSTANT, 2, 10, 0.0 };
  g_assert_cmpfloat_with_epsilon (hz_schedule_factor (&c, 1), 0.5, 1e-12);
  g_assert_cmpfloat (hz_schedule_factor (&c, 9), ==, 1.0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/learner/optim/adamw-hand-computed", test_adamw_hand_computed);
  g_test_add_func ("/learner/optim/adamw-first-step", test_adamw_first_step_sign);
  g_test_add_func ("/learner/optim/clip", test_clip);
  g_test_add_func ("/learner/optim/schedules", test_schedules);
  return g_test_run ();
}
