/* Statistical tests of the exact discrete Gaussian sampler (seeded GRand for reproducibility;
 * the getrandom path is exercised too). Bounds are ~5 standard errors, so a correct sampler
 * fails with probability < 1e-6 per check. */
#include <glib.h>
#include <math.h>
#include "noise.h"

static void
test_bernoulli_exp (void)
{
  g_autoptr (HzNoise) n = hz_noise_new_insecure_for_tests (1);
  const struct { guint num, den; } cases[] = { { 0, 1 }, { 1, 2 }, { 1, 1 }, { 5, 2 }, { 7, 3 } };
  const int N = 40000;
  for (guint c = 0; c < G_N_ELEMENTS (cases); c++)
    {
      int hits = 0;
      for (int i = 0; i < N; i++)
        {
          gboolean b;
          g_assert_true (hz_noise_bernoulli_exp (n, cases[c].num, cases[c].den, &b, NULL));
          hits += b;
        }
      double p = exp (-(double) cases[c].num / cases[c].den);
      double se = sqrt (p * (1 - p) / N) + 1e-9;
      g_test_message ("exp(-%u/%u): %.4f vs %.4f", cases[c].num, cases[c].den, (double) hits / N, p);
      g_assert_cmpfloat (fabs ((double) hits / N - p), <=, 5 * se + 1e-12);
    }
}

static void
test_discrete_gaussian_pmf (void)
{
  /* sigma^2 = 1: P(k) = exp(-k^2/2) / sum_j exp(-j^2/2) */
  g_autoptr (HzNoise) n = hz_noise_new_insecure_for_tests (2);
  const int N = 60000;
  int counts[11] = { 0 };
  for (int i = 0; i < N; i++)
    {
      int64_t z;
      g_assert_true (hz_noise_discrete_gaussian (n, 1, 1, &z, NULL));
      if (z >= -5 && z <= 5)
        counts[z + 5]++;
    }
  double norm = 0;
  for (int k = -30; k <= 30; k++)
    norm += exp (-k * k / 2.0);
  for (int k = -3; k <= 3; k++)
    {
      double p = exp (-k * k / 2.0) / norm, f = (double) counts[k + 5] / N;
      g_assert_cmpfloat (fabs (f - p), <=, 5 * sqrt (p * (1 - p) / N));
    }
}

static void
test_discrete_gaussian_moments (void)
{
  g_autoptr (HzNoise) n = hz_noise_new_insecure_for_tests (3);
  const double s2 = 12345.678;  /* non-integer variance as a rational */
  const int N = 40000;
  double sum = 0, sq = 0;
  for (int i = 0; i < N; i++)
    {
      int64_t z;
      g_assert_true (hz_noise_discrete_gaussian (n, (uint64_t) (s2 * 1000), 1000, &z, NULL));
      sum += z;
      sq += (double) z * z;
    }
  double mean = sum / N, var = sq / N - mean * mean;
  g_assert_cmpfloat (fabs (mean), <, 5 * sqrt (s2 / N));
  g_assert_cmpfloat (fabs (var / s2 - 1), <, 5 * sqrt (2.0 / N));
}

static void
test_grid_and_secure (void)
{
  g_autoptr (HzNoise) n = hz_noise_new ();   /* getrandom */
  const int N = 20000;
  g_autofree float *v = g_new (float, N);
  g_autoptr (GError) err = NULL;
  g_assert_true (hz_noise_gaussian_grid (n, 0.01, v, N, &err));
  g_assert_no_error (err);
  double sq = 0;
  for (int i = 0; i < N; i++)
    sq += (double) v[i] * v[i];
  g_assert_cmpfloat (fabs (sqrt (sq / N) / 0.01 - 1), <, 0.05);
  g_assert_false (hz_noise_gaussian_grid (n, 0.0, v, 1, &err));
  g_assert_error (err, HZ_NOISE_ERROR, HZ_NOISE_ERROR_RANGE);
  g_clear_error (&err);
  g_assert_false (hz_noise_discrete_gaussian (n, 1, 4, (int64_t[1]) { 0 }, &err));
  g_assert_error (err, HZ_NOISE_ERROR, HZ_NOISE_ERROR_RANGE);
}

static void
test_uniform_unbiased (void)
{
  g_autoptr (HzNoise) n = hz_noise_new_insecure_for_tests (4);
  int counts[3] = { 0 };
  const int N = 30000;
  for (int i = 0; i < N; i++)
    {
      unsigned __int128 u;
      g_assert_true (hz_noise_uniform (n, 3, &u, NULL));
      g_assert_true (u < 3);
      counts[(int) u]++;
    }
  for (int k = 0; k < 3; k++)
    g_assert_cmpfloat (fabs ((double) counts[k] / N - 1.0 / 3), <, 5 * sqrt (2.0 / 9 / N));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/noise/uniform", test_uniform_unbiased);
  g_test_add_func ("/noise/bernoulli-exp", test_bernoulli_exp);
  g_test_add_func ("/noise/discrete-gaussian-pmf", test_discrete_gaussian_pmf);
  g_test_add_func ("/noise/discrete-gaussian-moments", test_discrete_gaussian_moments);
  g_test_add_func ("/noise/grid-and-getrandom", test_grid_and_secure);
  return g_test_run ();
}
