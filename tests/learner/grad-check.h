/* tests/learner/grad-check.h — central finite-difference gradient checks (header-only).
 *
 * For a scalar function f of a double vector x, the numeric gradient
 * (f(x + h e_i) - f(x - h e_i)) / 2h is compared with analytic gradients from the f64 and
 * f32 instantiations of the code under test. The error is normalised by the largest
 * numeric gradient component: rel = max_i |g_i - num_i| / max_i |num_i|. The check also
 * asserts that the gradient is not trivially zero. */
#pragma once

#include <glib.h>
#include <math.h>

typedef double (*GradLossFn) (gpointer ctx);

static inline float *
to_f32 (const double *x, gsize n)
{
  float *y = g_new (float, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    y[i] = (float) x[i];
  return y;
}

static inline double *
to_f64 (const float *x, gsize n)
{
  double *y = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    y[i] = x[i];
  return y;
}

static inline void
fill_uniform (GRand *rng, double *x, gsize n, double lo, double hi)
{
  for (gsize i = 0; i < n; i++)
    x[i] = g_rand_double_range (rng, lo, hi);
}

/** Check d f / d x at the indices idx[0..n_idx) (NULL: all n). g64 / g32: analytic
 *  gradients [n] (g32 nullable). tol64 / tol32: bounds on the relative errors. Returns
 *  the f64 relative error. */
static inline double
grad_check (const char *what, GradLossFn f, gpointer ctx, double *x, gsize n,
            const gsize *idx, gsize n_idx, const double *g64, const double *g32, double h,
            double tol64, double tol32)
{
  double num_max = 0, e64 = 0, e32 = 0;
  if (idx == NULL)
    n_idx = n;
  for (gsize k = 0; k < n_idx; k++)
    {
      const gsize i = idx ? idx[k] : k;
      g_assert_cmpuint (i, <, n);
      const double xi = x[i];
      x[i] = xi + h;
      const double lp = f (ctx);
      x[i] = xi - h;
      const double lm = f (ctx);
      x[i] = xi;
      const double num = (lp - lm) / (2 * h);
      num_max = MAX (num_max, fabs (num));
      e64 = MAX (e64, fabs (num - g64[i]));
      if (g32)
        e32 = MAX (e32, fabs (num - g32[i]));
    }
  g_assert_cmpfloat (num_max, >, 1e-8);
  const double r64 = e64 / num_max, r32 = e32 / num_max;
  g_test_message ("%-28s %4" G_GSIZE_FORMAT " checked  max|grad| %.3e  rel err f64 %.2e%s%.2e",
                  what, n_idx, num_max, r64, g32 ? "  f32 " : "", g32 ? r32 : 0.0);
  g_assert_cmpfloat (r64, <, tol64);
  if (g32)
    g_assert_cmpfloat (r32, <, tol32);
  return r64;
}
