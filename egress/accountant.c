/* egress/accountant.c — RDP accountant for the sampled Gaussian mechanism and the analytic
 * Gaussian mechanism. Formulas and sources: see accountant.h. */
#include "accountant.h"

#include <math.h>

#define LOG_ZERO (-INFINITY)

/* log(exp(a) + exp(b)) */
static double
log_add (double a, double b)
{
  double hi = fmax (a, b), lo = fmin (a, b);
  if (hi == -INFINITY)
    return -INFINITY;
  return hi + log1p (exp (lo - hi));
}

/* log(exp(a) - exp(b)) for a >= b; -inf when equal or when b > a (underflowed series). */
static double
log_sub (double a, double b)
{
  if (b == -INFINITY)
    return a;
  if (b >= a)
    return -INFINITY;
  return a + log1p (-exp (b - a));
}

/* log(erfc(x)), accurate also where erfc underflows (asymptotic series, A&S 7.1.23). */
static double
log_erfc (double x)
{
  if (x < 25.0)
    return log (erfc (x));
  double x2 = x * x;
  double series = 1.0 - 1.0 / (2.0 * x2) + 3.0 / (4.0 * x2 * x2) - 15.0 / (8.0 * x2 * x2 * x2);
  return -x2 - log (x) - 0.5 * log (G_PI) + log (series);
}

/* log A_alpha for integer alpha: exact binomial expansion (Mironov et al. 2019, Sec. 3.3). */
static double
log_a_int (double q, double sigma, guint64 alpha)
{
  double log_a = LOG_ZERO;
  double log_q = log (q), log_1q = log1p (-q);
  for (guint64 i = 0; i <= alpha; i++)
    {
      double log_coef = lgamma ((double) alpha + 1) - lgamma ((double) i + 1)
                        - lgamma ((double) (alpha - i) + 1);
      double di = (double) i;
      double s = log_coef + di * log_q + (double) (alpha - i) * log_1q
                 + (di * di - di) / (2.0 * sigma * sigma);
      log_a = log_add (log_a, s);
    }
  return log_a;
}

/* log A_alpha for fractional alpha: two-sided series with erfc terms (ibid., Sec. 3.3). */
static double
log_a_frac (double q, double sigma, double alpha)
{
  double log_a0 = LOG_ZERO, log_a1 = LOG_ZERO;
  double z0 = sigma * sigma * log (1.0 / q - 1.0) + 0.5;
  double log_q = log (q), log_1q = log1p (-q);
  /* generalised binomial coefficient binom(alpha, i) by the product recurrence,
   * tracked as log|c| and its sign */
  double log_abs_coef = 0.0;
  int sign = 1;
  for (guint i = 0; i < 100000; i++)
    {
      if (i > 0)
        {
          double f = (alpha - (double) i + 1.0) / (double) i;
          if (f == 0.0)
            break;           /* coefficient becomes exactly 0 (integer alpha) */
          if (f < 0)
            sign = -sign;
          log_abs_coef += log (fabs (f));
        }
      double di = (double) i, j = alpha - di;
      double log_t0 = log_abs_coef + di * log_q + j * log_1q;
      double log_t1 = log_abs_coef + j * log_q + di * log_1q;
      double log_e0 = log (0.5) + log_erfc ((di - z0) / (G_SQRT2 * sigma));
      double log_e1 = log (0.5) + log_erfc ((z0 - j) / (G_SQRT2 * sigma));
      double log_s0 = log_t0 + (di * di - di) / (2.0 * sigma * sigma) + log_e0;
      double log_s1 = log_t1 + (j * j - j) / (2.0 * sigma * sigma) + log_e1;
      if (sign > 0)
        {
          log_a0 = log_add (log_a0, log_s0);
          log_a1 = log_add (log_a1, log_s1);
        }
      else
        {
          log_a0 = log_sub (log_a0, log_s0);
          log_a1 = log_sub (log_a1, log_s1);
        }
      if (fmax (log_s0, log_s1) < -30.0)
        break;
    }
  return log_add (log_a0, log_a1);
}

double
hz_rdp_sampled_gaussian (double q, double noise_multiplier, double alpha)
{
  g_return_val_if_fail (q >= 0.0 && q <= 1.0, NAN);
  g_return_val_if_fail (alpha > 1.0, NAN);
  if (q == 0.0)
    return 0.0;
  if (!(noise_multiplier > 0.0))
    return INFINITY;
  if (isinf (noise_multiplier))
    return 0.0;
  if (q == 1.0)
    return alpha / (2.0 * noise_multiplier * noise_multiplier);
  if (isinf (alpha))
    return INFINITY;
  double log_a;
  if (alpha == floor (alpha) && alpha < 1e6)
    log_a = log_a_int (q, noise_multiplier, (guint64) alpha);
  else
    log_a = log_a_frac (q, noise_multiplier, alpha);
  return log_a / (alpha - 1.0);
}

void
hz_rdp_compute (double q, double noise_multiplier, guint64 steps,
                const double *orders, gsize n_orders, double *out)
{
  for (gsize i = 0; i < n_orders; i++)
    out[i] = (double) steps * hz_rdp_sampled_gaussian (q, noise_multiplier, orders[i]);
}

double
hz_rdp_to_epsilon (const double *orders, const double *rdp, gsize n_orders,
                   double delta, double *best_order)
{
  g_return_val_if_fail (delta > 0.0 && delta < 1.0, NAN);
  double best = INFINITY, best_a = NAN;
  for (gsize i = 0; i < n_orders; i++)
    {
      double a = orders[i];
      if (!(a > 1.0) || isnan (rdp[i]))
        continue;
      double eps = rdp[i] + log ((a - 1.0) / a) - (log (delta) + log (a)) / (a - 1.0);
      if (eps < best)
        {
          best = eps;
          best_a = a;
        }
    }
  if (best_order)
    *best_order = best_a;
  return fmax (best, 0.0);
}

const double *
hz_rdp_default_orders (gsize *n)
{
  static double orders[99 + 52];
  static gsize count;
  if (g_once_init_enter (&count))
    {
      gsize k = 0;
      for (int i = 11; i <= 109; i++)
        orders[k++] = i / 10.0;
      for (int i = 12; i <= 63; i++)
        orders[k++] = i;
      g_once_init_leave (&count, k);
    }
  *n = count;
  return orders;
}

/* standard normal CDF */
static double
phi (double x)
{
  return 0.5 * erfc (-x / G_SQRT2);
}

double
hz_gaussian_delta (double sigma, double eps, double sensitivity)
{
  double a = sensitivity / (2.0 * sigma), b = eps * sigma / sensitivity;
  /* e^eps Phi(-a-b) in the log domain: for large eps, e^eps overflows while Phi underflows */
  double log_tail = log (0.5) + log_erfc ((a + b) / G_SQRT2);
  return phi (a - b) - exp (eps + log_tail);
}

double
hz_analytic_gaussian_sigma (double eps, double delta, double sensitivity)
{
  g_return_val_if_fail (eps > 0.0 && delta > 0.0 && delta < 1.0 && sensitivity > 0, NAN);
  /* delta(sigma) decreases monotonically from 1 (sigma -> 0) to 0 (sigma -> inf):
   * bisect on log sigma. */
  double lo = log (1e-8 * sensitivity), hi = log (1e8 * sensitivity);
  for (int it = 0; it < 200 && hi - lo > 1e-13; it++)
    {
      double mid = 0.5 * (lo + hi);
      if (hz_gaussian_delta (exp (mid), eps, sensitivity) > delta)
        lo = mid;
      else
        hi = mid;
    }
  return exp (hi);
}

double
hz_analytic_gaussian_epsilon (double sigma, double delta, double sensitivity)
{
  g_return_val_if_fail (sigma > 0 && delta > 0 && delta < 1 && sensitivity > 0, NAN);
  /* delta(eps) decreases monotonically in eps (Theorem 8's curve is a privacy profile). */
  if (hz_gaussian_delta (sigma, 0.0, sensitivity) <= delta)
    return 0.0;
  double lo = 0.0, hi = 1.0;
  while (hz_gaussian_delta (sigma, hi, sensitivity) > delta && hi < 1e6)
    hi *= 2.0;
  for (int it = 0; it < 200 && hi - lo > 1e-12; it++)
    {
      double mid = 0.5 * (lo + hi);
      if (hz_gaussian_delta (sigma, mid, sensitivity) > delta)
        lo = mid;
      else
        hi = mid;
    }
  return hi;
}
