/* Aggregation rules against Flower's own test vectors (issue 8) and Byzantine inputs. */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include "aggregate.h"

static void
test_trimmed_mean_flower (void)
{
  const float c0[] = { .5f, .5f, .5f, .5f }, c1[] = { 1, .2f, .5f, 1 },
              c2[] = { .2f, .5f, 1, .2f }, c3[] = { .5f, 1, .2f, .5f };
  const float *u[] = { c0, c1, c2, c3 };
  float out[4];
  g_assert_true (hz_agg_trimmed_mean (u, 4, 4, 0.25, out));
  for (int j = 0; j < 4; j++)
    g_assert_cmpfloat_with_epsilon (out[j], 0.5, 1e-7);

  const float s0[] = { 0.5f }, s1[] = { 1 }, s2[] = { 2 }, s3[] = { 100 };
  const float *s[] = { s0, s1, s2, s3 };
  g_assert_true (hz_agg_trimmed_mean (s, 4, 1, 0.25, out));
  g_assert_cmpfloat_with_epsilon (out[0], 1.5, 1e-7);
  /* beta 0 is the plain mean; too much trimming is refused */
  g_assert_true (hz_agg_trimmed_mean (s, 4, 1, 0.0, out));
  g_assert_cmpfloat_with_epsilon (out[0], 103.5 / 4, 1e-5);
  const float *two[] = { s0, s1 };
  g_assert_true (hz_agg_trimmed_mean (two, 2, 1, 0.49, out));  /* cut = floor(0.98) = 0 */
  g_assert_false (hz_agg_trimmed_mean (s, 0, 1, 0.25, out));
}

static void
test_krum_flower (void)
{
  const float a[] = { 0.2f }, b[] = { 0.7f }, c[] = { 1.0f };
  const float *u[] = { a, b, c };
  g_assert_cmpint (hz_agg_krum (u, 3, 1, 1), ==, 1);  /* picks 0.7 */
  const float d[] = { 0.2f }, e[] = { 0.5f }, f[] = { 1.0f };
  const float *v[] = { d, e, f };
  float out[1];
  g_assert_true (hz_agg_multi_krum (v, 3, 1, 1, 2, out));
  g_assert_cmpfloat_with_epsilon (out[0], 0.35, 1e-7);
  g_assert_false (hz_agg_multi_krum (v, 3, 1, 1, 4, out));
}

static void
test_byzantine (void)
{
  /* 8 honest clients near 1.0, 2 attackers far away: both rules stay near the honest mean */
  enum { N = 10, D = 16 };
  float data[N][D];
  const float *u[N];
  GRand *r = g_rand_new_with_seed (7);
  for (int i = 0; i < N; i++)
    {
      for (int j = 0; j < D; j++)
        data[i][j] = i < 8 ? 1.0f + (float) g_rand_double_range (r, -0.05, 0.05) : 1e6f;
      u[i] = data[i];
    }
  g_rand_free (r);
  float out[D];
  g_assert_true (hz_agg_trimmed_mean (u, N, D, 0.2, out));
  for (int j = 0; j < D; j++)
    g_assert_cmpfloat (fabsf (out[j] - 1.0f), <, 0.05f);
  gssize k = hz_agg_krum (u, N, D, 2);
  g_assert_cmpint (k, <, 8);
  g_assert_true (hz_agg_multi_krum (u, N, D, 2, 6, out));
  for (int j = 0; j < D; j++)
    g_assert_cmpfloat (fabsf (out[j] - 1.0f), <, 0.05f);
}

static int
cmp_f (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* The selection-based trimmed mean equals the sort-based definition on random data with
 * ties, for many client counts and betas (and dims that are not multiples of the tile). */
static void
test_trimmed_mean_matches_sort (void)
{
  GRand *r = g_rand_new_with_seed (11);
  for (gsize n = 1; n <= 41; n += 4)
    for (int b = 0; b < 4; b++)
      {
        double beta = b * 0.12;
        gsize cut = (gsize) (beta * n), dim = 300;
        if (2 * cut >= n)
          continue;
        g_autofree float *data = g_new (float, n * dim);
        g_autofree const float **u = g_new (const float *, n);
        for (gsize i = 0; i < n * dim; i++)
          data[i] = (float) g_rand_int_range (r, -5, 6);  /* many ties */
        for (gsize i = 0; i < n; i++)
          u[i] = data + i * dim;
        g_autofree float *out = g_new (float, dim);
        g_assert_true (hz_agg_trimmed_mean (u, n, dim, beta, out));
        g_autofree float *col = g_new (float, n);
        for (gsize j = 0; j < dim; j++)
          {
            for (gsize i = 0; i < n; i++)
              col[i] = u[i][j];
            qsort (col, n, sizeof (float), cmp_f);
            double s = 0;
            for (gsize i = cut; i < n - cut; i++)
              s += col[i];
            g_assert_cmpfloat (out[j], ==, (float) (s / (n - 2 * cut)));
          }
      }
  g_rand_free (r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/aggregate/trimmed-mean-flower", test_trimmed_mean_flower);
  g_test_add_func ("/aggregate/krum-flower", test_krum_flower);
  g_test_add_func ("/aggregate/trimmed-mean-matches-sort", test_trimmed_mean_matches_sort);
  g_test_add_func ("/aggregate/byzantine", test_byzantine);
  return g_test_run ();
}
