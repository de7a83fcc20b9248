/* Test vectors for the RDP accountant and the analytic Gaussian mechanism (issue 8). The
 * expected values are the ones the issue lists (computed with TensorFlow Privacy / Opacus
 * and Balle and Wang's reference code). */
#include <glib.h>
#include <math.h>
#include "accountant.h"

static void
assert_rel (double got, double want, double tol)
{
  double rel = fabs (got - want) / fabs (want);
  if (!(rel <= tol))
    g_error ("got %.10g, want %.10g (relative error %.3g > %.3g)", got, want, rel, tol);
}

static void
test_default_orders (void)
{
  gsize n;
  const double *o = hz_rdp_default_orders (&n);
  g_assert_cmpuint (n, ==, 99 + 52);
  g_assert_cmpfloat_with_epsilon (o[0], 1.1, 1e-12);
  g_assert_cmpfloat_with_epsilon (o[98], 10.9, 1e-12);
  g_assert_cmpfloat (o[99], ==, 12.0);
  g_assert_cmpfloat (o[n - 1], ==, 63.0);
}

static void
test_eps_default_orders (void)
{
  /* q = 0.04, z = 1.5, 2250 steps, delta = 1e-5 -> eps = 7.32911117 */
  gsize n;
  const double *orders = hz_rdp_default_orders (&n);
  double rdp[n];
  hz_rdp_compute (0.04, 1.5, 2250, orders, n, rdp);
  double eps = hz_rdp_to_epsilon (orders, rdp, n, 1e-5, NULL);
  assert_rel (eps, 7.32911117, 1e-8);
}

static void
test_eps_integer_orders (void)
{
  /* q = 0.01, z = 1.1, 1000 steps, delta = 1e-5, orders 2..256 -> 1.725290818 at order 9 */
  double orders[255], rdp[255], best;
  for (int i = 0; i < 255; i++)
    orders[i] = i + 2;
  hz_rdp_compute (0.01, 1.1, 1000, orders, 255, rdp);
  double eps = hz_rdp_to_epsilon (orders, rdp, 255, 1e-5, &best);
  assert_rel (eps, 1.725290818, 1e-8);
  g_assert_cmpfloat (best, ==, 9.0);
}

static void
test_rdp_values (void)
{
  /* q = 0.01, z = 2.5, 50 steps at orders 5, 50, 100 */
  const double orders[] = { 5, 50, 100 };
  const double want[] = { 2.18075656e-3, 2.38460375e-2, 1.67416308e2 };
  double rdp[3];
  hz_rdp_compute (0.01, 2.5, 50, orders, 3, rdp);
  for (int i = 0; i < 3; i++)
    assert_rel (rdp[i], want[i], 1e-7);
}

static void
test_eps_full_batch (void)
{
  /* q = 1, z = 4.530877117, delta = 1e-6, orders 1..100 step 0.001 -> eps = 1.0
   * (order 1 itself is excluded: the conversion needs a > 1) */
  gsize n = 99001;
  g_autofree double *orders = g_new (double, n);
  g_autofree double *rdp = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    orders[i] = 1.0 + i * 0.001;
  for (gsize i = 0; i < n; i++)
    rdp[i] = orders[i] > 1.0 ? hz_rdp_sampled_gaussian (1.0, 4.530877117, orders[i]) : NAN;
  double eps = hz_rdp_to_epsilon (orders, rdp, n, 1e-6, NULL);
  assert_rel (eps, 1.0, 1e-6);
}

static void
test_fractional_matches_integer_limit (void)
{
  /* The fractional series must agree with the exact integer expansion near an integer. */
  double a = hz_rdp_sampled_gaussian (0.02, 1.3, 8.0);
  double b = hz_rdp_sampled_gaussian (0.02, 1.3, 8.0 + 1e-9);
  assert_rel (b, a, 1e-6);
  /* and RDP grows with the order */
  g_assert_cmpfloat (hz_rdp_sampled_gaussian (0.02, 1.3, 2.5), <, a);
}

static void
test_edge_cases (void)
{
  g_assert_cmpfloat (hz_rdp_sampled_gaussian (0.0, 1.0, 4.0), ==, 0.0);
  g_assert_true (isinf (hz_rdp_sampled_gaussian (0.1, 0.0, 4.0)));
  g_assert_cmpfloat_with_epsilon (hz_rdp_sampled_gaussian (1.0, 2.0, 4.0), 4.0 / 8.0, 1e-15);
}

static void
test_analytic_gaussian (void)
{
  /* eps = 1, delta = 0.78760074, sensitivity 1 -> sigma = 1/3 */
  assert_rel (hz_analytic_gaussian_sigma (1.0, 0.78760074, 1.0), 1.0 / 3.0, 1e-7);
  /* eps = 1, delta = 1e-5 -> sigma = 3.7306316 */
  assert_rel (hz_analytic_gaussian_sigma (1.0, 1e-5, 1.0), 3.7306316, 1e-7);
  /* sigma scales linearly with the sensitivity */
  assert_rel (hz_analytic_gaussian_sigma (1.0, 1e-5, 2.5), 2.5 * 3.7306316, 1e-7);
  /* and the delta of the calibrated sigma is the requested one */
  double s = hz_analytic_gaussian_sigma (0.5, 1e-6, 1.0);
  assert_rel (hz_gaussian_delta (s, 0.5, 1.0), 1e-6, 1e-6);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/accountant/default-orders", test_default_orders);
  g_test_add_func ("/accountant/eps-default-orders", test_eps_default_orders);
  g_test_add_func ("/accountant/eps-integer-orders", test_eps_integer_orders);
  g_test_add_func ("/accountant/rdp-values", test_rdp_values);
  g_test_add_func ("/accountant/eps-full-batch", test_eps_full_batch);
  g_test_add_func ("/accountant/fractional-vs-integer", test_fractional_matches_integer_limit);
  g_test_add_func ("/accountant/edge-cases", test_edge_cases);
  g_test_add_func ("/accountant/analytic-gaussian", test_analytic_gaussian);
  return g_test_run ();
}
