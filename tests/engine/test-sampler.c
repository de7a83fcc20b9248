/* tests/engine/test-sampler.c — HzSampler: greedy, top-k/top-p/min-p supports, seeded
 * determinism, empirical distribution vs softmax, exact penalty arithmetic, non-finite
 * logits. Deterministic: every random choice comes from fixed seeds. */
#include <hanzo/engine.h>
#include "sampler.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Sampler params with every filter off: a plain draw from softmax(logits / temp). */
static HzSamplerParams
plain_params (float temp, guint64 seed)
{
  HzSamplerParams p;
  hz_sampler_params_init (&p);
  p.temperature = temp;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

/* Reference argmax, ties to the lowest id. */
static int32_t
ref_argmax (const float *l, int32_t n)
{
  int32_t best = 0;
  for (int32_t i = 1; i < n; i++)
    if (l[i] > l[best])
      best = i;
  return best;
}

static float *
random_logits (GRand *r, int32_t n, double lo, double hi)
{
  float *l = g_new (float, n);
  for (int32_t i = 0; i < n; i++)
    l[i] = (float) g_rand_double_range (r, lo, hi);
  return l;
}

/* Draw `n_draws` tokens and count them; asserts every draw is in range. */
static guint *
draw_counts (HzSampler *s, const float *logits, int32_t n_vocab, guint n_draws)
{
  guint *counts = g_new0 (guint, n_vocab);
  for (guint i = 0; i < n_draws; i++)
    {
      HzToken t = hz_sampler_sample (s, logits, n_vocab);
      g_assert_cmpint (t, >=, 0);
      g_assert_cmpint (t, <, n_vocab);
      counts[t]++;
    }
  return counts;
}

/* Assert that the set of drawn tokens is exactly { i : expected[i] }. */
static void
assert_support (const guint *counts, const gboolean *expected, int32_t n)
{
  for (int32_t i = 0; i < n; i++)
    {
      if (expected[i] && counts[i] == 0)
        g_error ("token %d should be drawable but was never drawn", i);
      if (!expected[i] && counts[i] != 0)
        g_error ("token %d should be excluded but was drawn %u times", i, counts[i]);
    }
}

/* ------------------------------------------------------------------ greedy */

static void
test_greedy_argmax (void)
{
  HzSamplerParams p = plain_params (0.0f, 1);
  g_autoptr (HzSampler) s = hz_sampler_new (&p);

  const float ties[] = { 1.0f, 3.0f, -2.0f, 3.0f, 2.5f, 3.0f };
  g_assert_cmpint (hz_sampler_sample (s, ties, 6), ==, 1);

  const float neg[] = { -5.0f, -1.5f, -1.5f, -7.0f };
  g_assert_cmpint (hz_sampler_sample (s, neg, 4), ==, 1);

  GRand *r = g_rand_new_with_seed (42);
  for (int rep = 0; rep < 20; rep++)
    {
      g_autofree float *l = random_logits (r, 5000, -10, 10);
      g_assert_cmpint (hz_sampler_sample (s, l, 5000), ==, ref_argmax (l, 5000));
    }
  g_rand_free (r);

  /* Greedy ignores the RNG and every filter: same answer with filters on. */
  HzSamplerParams q;
  hz_sampler_params_init (&q);  /* defaults: greedy with top_k 40, top_p 0.95, min_p 0.05 */
  g_assert_cmpfloat (q.temperature, <=, 0.0f);
  g_autoptr (HzSampler) s2 = hz_sampler_new (&q);
  g_assert_cmpint (hz_sampler_sample (s2, ties, 6), ==, 1);
  g_autoptr (HzSampler) s3 = hz_sampler_new (NULL);
  g_assert_cmpint (hz_sampler_sample (s3, neg, 4), ==, 1);
}

static void
test_top_k1_is_greedy (void)
{
  const float temps[] = { 0.05f, 0.7f, 1.0f, 3.0f, 100.0f };
  GRand *r = g_rand_new_with_seed (7);
  for (guint ti = 0; ti < G_N_ELEMENTS (temps); ti++)
    for (guint64 seed = 0; seed < 4; seed++)
      {
        HzSamplerParams p = plain_params (temps[ti], seed);
        p.top_k = 1;
        g_autoptr (HzSampler) s = hz_sampler_new (&p);
        for (int rep = 0; rep < 25; rep++)
          {
            g_autofree float *l = random_logits (r, 3000, -3, 3);
            if (rep % 5 == 0)
              l[rep * 17] = l[ref_argmax (l, 3000)];  /* a tie with the maximum */
            g_assert_cmpint (hz_sampler_sample (s, l, 3000), ==, ref_argmax (l, 3000));
          }
      }
  g_rand_free (r);
}

/* --------------------------------------------------------------------- RNG */

static void
generate (HzSampler *s, const float *logits, int32_t n_vocab, HzToken *out, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      out[i] = hz_sampler_sample (s, logits, n_vocab);
      hz_sampler_accept (s, out[i]);
    }
}

static void
test_seed_determinism (void)
{
  enum { N = 300, V = 64 };
  GRand *r = g_rand_new_with_seed (3);
  g_autofree float *l = random_logits (r, V, -1, 1);
  g_rand_free (r);

  HzSamplerParams p = plain_params (1.0f, 1234);
  p.top_k = 50;
  p.top_p = 0.98f;
  p.repeat_penalty = 1.1f;
  g_autoptr (HzSampler) a = hz_sampler_new (&p);
  g_autoptr (HzSampler) b = hz_sampler_new (&p);
  HzToken sa[N], sb[N], sc[N], sr[N];
  generate (a, l, V, sa, N);
  generate (b, l, V, sb, N);
  g_assert_cmpmem (sa, sizeof sa, sb, sizeof sb);

  /* After a reset the sampler replays the same sequence. */
  hz_sampler_reset (a);
  generate (a, l, V, sr, N);
  g_assert_cmpmem (sa, sizeof sa, sr, sizeof sr);

  /* A different seed gives a different sequence (300 draws over ~50 tokens: the chance of
   * equality is nil, and the seeds are fixed, so this is deterministic). */
  p.seed = 1235;
  g_autoptr (HzSampler) c = hz_sampler_new (&p);
  generate (c, l, V, sc, N);
  guint same = 0;
  for (guint i = 0; i < N; i++)
    same += sa[i] == sc[i];
  g_assert_cmpuint (same, <, N / 4);
}

/* ------------------------------------------------------------ distribution */

/* Pearson chi-square of counts against probabilities. */
static double
chi_square (const guint *counts, const double *probs, guint k, guint n)
{
  double x2 = 0.0;
  for (guint i = 0; i < k; i++)
    {
      double e = probs[i] * n;
      x2 += (counts[i] - e) * (counts[i] - e) / e;
    }
  return x2;
}

static void
softmax_ref (const float *l, guint n, double temp, double *out)
{
  double m = -INFINITY, z = 0.0;
  for (guint i = 0; i < n; i++)
    m = MAX (m, l[i] / temp);
  for (guint i = 0; i < n; i++)
    z += out[i] = exp (l[i] / temp - m);
  for (guint i = 0; i < n; i++)
    out[i] /= z;
}

static void
test_distribution_matches_softmax (void)
{
  enum { V = 5, DRAWS = 20000 };
  const float logits[V] = { 1.0f, 2.0f, 0.5f, -1.0f, 1.7f };
  const float temps[] = { 1.0f, 0.6f, 2.5f };
  /* 4 degrees of freedom: P(X2 > 18.47) = 0.001. */
  const double critical = 18.47;
  for (guint ti = 0; ti < G_N_ELEMENTS (temps); ti++)
    {
      HzSamplerParams p = plain_params (temps[ti], 99 + ti);
      g_autoptr (HzSampler) s = hz_sampler_new (&p);
      g_autofree guint *counts = draw_counts (s, logits, V, DRAWS);
      double probs[V];
      softmax_ref (logits, V, temps[ti], probs);
      double x2 = chi_square (counts, probs, V, DRAWS);
      g_test_message ("temperature %.2f: chi-square %.3f (critical %.2f)", temps[ti], x2,
                      critical);
      g_assert_cmpfloat (x2, <, critical);
    }

  /* The test has power: the same counts are far from the wrong (temperature-1)
   * distribution when drawn at temperature 2.5. */
  HzSamplerParams p = plain_params (2.5f, 5);
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  g_autofree guint *counts = draw_counts (s, logits, V, DRAWS);
  double wrong[V];
  softmax_ref (logits, V, 1.0, wrong);
  g_assert_cmpfloat (chi_square (counts, wrong, V, DRAWS), >, 10 * critical);
}

/* ----------------------------------------------------------------- filters */

static void
test_top_k_support (void)
{
  enum { V = 12, DRAWS = 6000 };
  /* The four largest are ids 9, 2, 5 and 7 (7 ties with 11 at 0.8: lower id wins). */
  const float l[V] = { 0.1f, -0.3f, 1.0f, 0.2f, -2.0f, 0.95f, 0.0f, 0.8f, 0.3f, 1.1f, 0.4f,
                       0.8f };
  HzSamplerParams p = plain_params (1.0f, 11);
  p.top_k = 4;
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  g_autofree guint *counts = draw_counts (s, l, V, DRAWS);
  gboolean expected[V] = { 0 };
  expected[9] = expected[2] = expected[5] = expected[7] = TRUE;
  assert_support (counts, expected, V);

  /* Large vocabulary, all logits equal: top-k keeps exactly the k lowest ids. */
  enum { BIG = 151936, K = 40 };
  g_autofree float *flat = g_new0 (float, BIG);
  HzSamplerParams q = plain_params (0.8f, 12);
  q.top_k = K;
  g_autoptr (HzSampler) s2 = hz_sampler_new (&q);
  g_autofree guint *c2 = draw_counts (s2, flat, BIG, 4000);
  g_autofree gboolean *e2 = g_new0 (gboolean, BIG);
  for (int i = 0; i < K; i++)
    e2[i] = TRUE;
  assert_support (c2, e2, BIG);

  /* Large random vocabulary: every draw is among the k largest. */
  GRand *r = g_rand_new_with_seed (8);
  g_autofree float *rl = random_logits (r, BIG, -20, 20);
  g_rand_free (r);
  g_autofree float *sorted = g_memdup2 (rl, BIG * sizeof (float));
  for (int i = 0; i < K; i++)  /* K-th largest by partial selection sort */
    {
      int best = i;
      for (int j = i + 1; j < BIG; j++)
        if (sorted[j] > sorted[best])
          best = j;
      float t = sorted[i];
      sorted[i] = sorted[best];
      sorted[best] = t;
    }
  const float kth = sorted[K - 1];
  HzSamplerParams q3 = plain_params (5.0f, 13);
  q3.top_k = K;
  g_autoptr (HzSampler) s3 = hz_sampler_new (&q3);
  for (int i = 0; i < 500; i++)
    {
      HzToken t = hz_sampler_sample (s3, rl, BIG);
      g_assert_cmpfloat (rl[t], >=, kth);
    }
}

static void
test_top_p_support (void)
{
  enum { V = 6, DRAWS = 8000 };
  /* Probabilities 0.30 (id 4), 0.25 (id 0), 0.20 (id 3), 0.12 (id 5), 0.08 (id 1), 0.05
   * (id 2). top_p 0.72: 0.30+0.25 = 0.55 < 0.72, +0.20 = 0.75 >= 0.72 -> {4, 0, 3}. */
  const double pr[V] = { 0.25, 0.08, 0.05, 0.20, 0.30, 0.12 };
  float l[V];
  for (int i = 0; i < V; i++)
    l[i] = (float) log (pr[i]);
  HzSamplerParams p = plain_params (1.0f, 21);
  p.top_p = 0.72f;
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  g_autofree guint *counts = draw_counts (s, l, V, DRAWS);
  const gboolean expected[V] = { TRUE, FALSE, FALSE, TRUE, TRUE, FALSE };
  assert_support (counts, expected, V);

  /* Top-p is applied after temperature: at temperature 3 the distribution flattens and the
   * 0.72 nucleus grows (the expected set is computed by the reference below). */
  double pt[V];
  softmax_ref (l, V, 3.0, pt);
  int order[V] = { 0, 1, 2, 3, 4, 5 };
  for (int i = 0; i < V; i++)
    for (int j = i + 1; j < V; j++)
      if (pt[order[j]] > pt[order[i]])
        {
          int t = order[i];
          order[i] = order[j];
          order[j] = t;
        }
  gboolean e3[V] = { 0 };
  double cum = 0.0;
  for (int i = 0; i < V && cum < 0.72; i++)
    {
      cum += pt[order[i]];
      e3[order[i]] = TRUE;
    }
  HzSamplerParams p3 = plain_params (3.0f, 22);
  p3.top_p = 0.72f;
  g_autoptr (HzSampler) s3 = hz_sampler_new (&p3);
  g_autofree guint *c3 = draw_counts (s3, l, V, DRAWS);
  assert_support (c3, e3, V);

  /* Larger vocabulary whose nucleus is longer than the first sorted prefix (64): 300 "high"
   * tokens at logit 0 scattered among 3796 at logit -3. With equal logits the order is by
   * id, so the nucleus is the lowest-id high tokens up to the mass. */
  enum { BIG = 4096, HIGH = 300 };
  g_autofree float *bl = g_new (float, BIG);
  g_autofree gboolean *is_high = g_new0 (gboolean, BIG);
  for (int i = 0; i < BIG; i++)
    bl[i] = -3.0f;
  GRand *r = g_rand_new_with_seed (23);
  for (int placed = 0; placed < HIGH;)
    {
      int i = g_rand_int_range (r, 0, BIG);
      if (!is_high[i])
        {
          is_high[i] = TRUE;
          bl[i] = 0.0f;
          placed++;
        }
    }
  g_rand_free (r);
  const double z = HIGH + (BIG - HIGH) * exp (-3.0);
  const double top_p = 0.5;
  g_assert_cmpfloat (HIGH / z, >, top_p);  /* the nucleus lies within the high tokens */
  g_autofree gboolean *eb = g_new0 (gboolean, BIG);
  cum = 0.0;
  for (int i = 0; i < BIG && cum < top_p * z; i++)  /* z-scaled: each high token weighs 1 */
    if (is_high[i])
      {
        eb[i] = TRUE;
        cum += 1.0;
      }
  HzSamplerParams pb = plain_params (1.0f, 24);
  pb.top_p = (float) top_p;
  g_autoptr (HzSampler) sb = hz_sampler_new (&pb);
  g_autofree guint *cb = draw_counts (sb, bl, BIG, 30000);
  assert_support (cb, eb, BIG);
}

static void
test_min_p_support (void)
{
  enum { V = 6, DRAWS = 8000 };
  /* min_p 0.25 of p_max 0.40 = 0.10: keeps 0.40, 0.20, 0.16, 0.10(+), drops 0.09, 0.05. */
  const double pr[V] = { 0.09, 0.40, 0.16, 0.05, 0.20, 0.10 };
  float l[V];
  for (int i = 0; i < V; i++)
    l[i] = (float) log (pr[i]);
  l[5] += 1e-4f;  /* keep 0.10 clear of the threshold's rounding */
  HzSamplerParams p = plain_params (1.0f, 31);
  p.min_p = 0.25f;
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  g_autofree guint *counts = draw_counts (s, l, V, DRAWS);
  const gboolean expected[V] = { FALSE, TRUE, TRUE, FALSE, TRUE, TRUE };
  assert_support (counts, expected, V);

  /* Chained with top-k 3: top-k keeps ids {1, 4, 2} (0.40, 0.20, 0.16); min-p 0.45 then
   * keeps 1 and 4 (0.20/0.40 = 0.5 >= 0.45) and drops 2 (0.16/0.40 = 0.4). */
  HzSamplerParams q = plain_params (1.0f, 32);
  q.top_k = 3;
  q.min_p = 0.45f;
  g_autoptr (HzSampler) s2 = hz_sampler_new (&q);
  g_autofree guint *c2 = draw_counts (s2, l, V, DRAWS);
  const gboolean e2[V] = { FALSE, TRUE, FALSE, FALSE, TRUE, FALSE };
  assert_support (c2, e2, V);
}

/* --------------------------------------------------------------- penalties */

static void
test_penalties_exact (void)
{
  enum { V = 6 };
  const float base[V] = { 2.0f, -1.0f, 0.5f, 3.0f, 0.0f, 1.25f };
  HzSamplerParams p = plain_params (0.0f, 0);
  p.repeat_penalty = 1.5f;
  p.frequency_penalty = 0.25f;
  p.presence_penalty = 0.1f;
  p.repeat_last_n = 64;
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  const HzToken hist[] = { 0, 1, 0, 2, 4, 0, -7, 999 };  /* -7 and 999: out of range */
  for (guint i = 0; i < G_N_ELEMENTS (hist); i++)
    hz_sampler_accept (s, hist[i]);

  float l[V];
  memcpy (l, base, sizeof l);
  hz_sampler_apply_penalties (s, l, V);
  /* count(0) = 3, count(1) = 1, count(2) = 1, count(4) = 1. */
  const float want[V] = {
    2.0f / 1.5f - (3 * 0.25f + 0.1f),   /* positive: divided */
    -1.0f * 1.5f - (1 * 0.25f + 0.1f),  /* negative: multiplied */
    0.5f / 1.5f - (1 * 0.25f + 0.1f),
    3.0f,                               /* not in the window */
    0.0f * 1.5f - (1 * 0.25f + 0.1f),   /* zero: multiplied (stays 0) */
    1.25f,
  };
  for (int i = 0; i < V; i++)
    g_assert_cmpfloat_with_epsilon (l[i], want[i], 1e-6);

  /* Applying twice penalises twice: the function is a pure stage on its input. */
  hz_sampler_apply_penalties (s, l, V);
  g_assert_cmpfloat (l[3], ==, 3.0f);
  g_assert_cmpfloat_with_epsilon (l[0], want[0] / 1.5f - (3 * 0.25f + 0.1f), 1e-6);

  /* Greedy sampling sees the same numbers. Token 3 (3.0, not in the window) wins; accepted
   * twice it scores 3.0/1.5 - (2*0.25 + 0.1) = 1.4, still above token 5's 1.25; accepted a
   * third time 2.0 - (3*0.25 + 0.1) = 1.15, and token 5 wins. */
  g_assert_cmpint (hz_sampler_sample (s, base, V), ==, 3);
  hz_sampler_accept (s, 3);
  hz_sampler_accept (s, 3);
  g_assert_cmpint (hz_sampler_sample (s, base, V), ==, 3);
  hz_sampler_accept (s, 3);
  g_assert_cmpint (hz_sampler_sample (s, base, V), ==, 5);

  /* After a reset nothing is penalised. */
  hz_sampler_reset (s);
  memcpy (l, base, sizeof l);
  hz_sampler_apply_penalties (s, l, V);
  g_assert_cmpmem (l, sizeof l, base, sizeof base);
}

static void
test_penalty_window (void)
{
  enum { V = 4 };
  const float base[V] = { 1.0f, 1.0f, 1.0f, 1.0f };
  float l[V];

  /* Window of 2: after 0, 1, 2 only 1 and 2 count. */
  HzSamplerParams p = plain_params (0.0f, 0);
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 2;
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  for (HzToken t = 0; t < 3; t++)
    hz_sampler_accept (s, t);
  memcpy (l, base, sizeof l);
  hz_sampler_apply_penalties (s, l, V);
  const float want[V] = { 1.0f, 0.5f, 0.5f, 1.0f };
  g_assert_cmpmem (l, sizeof l, want, sizeof want);

  /* Window 0: penalties off. */
  p.repeat_last_n = 0;
  g_autoptr (HzSampler) s0 = hz_sampler_new (&p);
  hz_sampler_accept (s0, 1);
  memcpy (l, base, sizeof l);
  hz_sampler_apply_penalties (s0, l, V);
  g_assert_cmpmem (l, sizeof l, base, sizeof base);

  /* Unbounded window (< 0): 1000 accepts of token 3 all count for the frequency penalty. */
  HzSamplerParams u = plain_params (0.0f, 0);
  u.repeat_last_n = -1;
  u.frequency_penalty = 0.01f;
  g_autoptr (HzSampler) su = hz_sampler_new (&u);
  for (int i = 0; i < 1000; i++)
    hz_sampler_accept (su, 3);
  memcpy (l, base, sizeof l);
  hz_sampler_apply_penalties (su, l, V);
  g_assert_cmpfloat_with_epsilon (l[3], 1.0f - 1000 * 0.01f, 1e-5);
  g_assert_cmpfloat (l[0], ==, 1.0f);
}

/* ---------------------------------------------------------------- bad input */

static void
test_non_finite_logits (void)
{
  enum { V = 6 };
  const float with_inf[V] = { 1.0f, NAN, INFINITY, -INFINITY, INFINITY, 1e30f };
  HzSamplerParams g = plain_params (0.0f, 0);
  g_autoptr (HzSampler) greedy = hz_sampler_new (&g);
  g_assert_cmpint (hz_sampler_sample (greedy, with_inf, V), ==, 2);

  /* Sampling: uniform among the +inf tokens. */
  HzSamplerParams p = plain_params (1.0f, 41);
  g_autoptr (HzSampler) s = hz_sampler_new (&p);
  g_autofree guint *c = draw_counts (s, with_inf, V, 2000);
  const gboolean e[V] = { FALSE, FALSE, TRUE, FALSE, TRUE, FALSE };
  assert_support (c, e, V);
  g_assert_cmpuint (c[2], >, 800);
  g_assert_cmpuint (c[4], >, 800);

  /* NaN is never drawn; -inf never drawn. */
  const float with_nan[V] = { NAN, 0.0f, NAN, -INFINITY, 0.5f, NAN };
  g_autofree guint *c2 = draw_counts (s, with_nan, V, 2000);
  const gboolean e2[V] = { FALSE, TRUE, FALSE, FALSE, TRUE, FALSE };
  assert_support (c2, e2, V);
  g_assert_cmpint (hz_sampler_sample (greedy, with_nan, V), ==, 4);

  /* Nothing above -inf: token 0, in both modes. */
  const float none[V] = { NAN, -INFINITY, NAN, NAN, -INFINITY, NAN };
  g_assert_cmpint (hz_sampler_sample (greedy, none, V), ==, 0);
  g_assert_cmpint (hz_sampler_sample (s, none, V), ==, 0);

  /* Invalid rows. */
  g_assert_cmpint (hz_sampler_sample (s, NULL, V), ==, -1);
  g_assert_cmpint (hz_sampler_sample (s, with_nan, 0), ==, -1);
  g_assert_cmpint (hz_sampler_sample (s, with_nan, -3), ==, -1);

  /* Extreme values and parameters never crash and stay in range. */
  const float huge[V] = { FLT_MAX, -FLT_MAX, FLT_MAX, 0.0f, -FLT_MAX, 1.0f };
  const float temps[] = { 1e-30f, 1e-45f, 1.0f, 1e30f, INFINITY, NAN };
  const float top_ps[] = { 0.0f, -1.0f, NAN, 0.5f, INFINITY };
  const float min_ps[] = { 1.0f, 2.0f, INFINITY, NAN, -1.0f };
  for (guint i = 0; i < G_N_ELEMENTS (temps); i++)
    for (guint j = 0; j < G_N_ELEMENTS (top_ps); j++)
      {
        HzSamplerParams q = plain_params (temps[i], i * 10 + j);
        q.top_p = top_ps[j];
        q.min_p = min_ps[j];
        q.top_k = (int32_t) j - 1;
        q.repeat_penalty = j == 0 ? 0.0f : (j == 1 ? NAN : -2.0f);
        q.presence_penalty = j == 2 ? INFINITY : 0.5f;
        q.frequency_penalty = j == 3 ? NAN : 0.1f;
        g_autoptr (HzSampler) x = hz_sampler_new (&q);
        hz_sampler_accept (x, 0);
        hz_sampler_accept (x, 2);
        for (int k = 0; k < 20; k++)
          {
            HzToken t = hz_sampler_sample (x, (k & 1) ? huge : with_inf, V);
            g_assert_cmpint (t, >=, 0);
            g_assert_cmpint (t, <, V);
            hz_sampler_accept (x, t);
          }
      }

  /* At a tiny temperature sampling becomes the argmax (no overflow to +inf ties). */
  const float close[V] = { 1.0f, 1.001f, 0.999f, -5.0f, 1.0005f, 0.0f };
  HzSamplerParams cold = plain_params (1e-6f, 43);
  g_autoptr (HzSampler) sc = hz_sampler_new (&cold);
  for (int k = 0; k < 100; k++)
    g_assert_cmpint (hz_sampler_sample (sc, close, V), ==, 1);

  /* The vocabulary may change size between calls (buffers grow). */
  g_autofree float *big = g_new0 (float, 70000);
  big[65000] = 5.0f;
  g_assert_cmpint (hz_sampler_sample (greedy, with_nan, V), ==, 4);
  g_assert_cmpint (hz_sampler_sample (greedy, big, 70000), ==, 65000);
  g_assert_cmpint (hz_sampler_sample (greedy, with_nan, V), ==, 4);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sampler/greedy-argmax", test_greedy_argmax);
  g_test_add_func ("/sampler/top-k1-is-greedy", test_top_k1_is_greedy);
  g_test_add_func ("/sampler/seed-determinism", test_seed_determinism);
  g_test_add_func ("/sampler/distribution-matches-softmax", test_distribution_matches_softmax);
  g_test_add_func ("/sampler/top-k-support", test_top_k_support);
  g_test_add_func ("/sampler/top-p-support", test_top_p_support);
  g_test_add_func ("/sampler/min-p-support", test_min_p_support);
  g_test_add_func ("/sampler/penalties-exact", test_penalties_exact);
  g_test_add_func ("/sampler/penalty-window", test_penalty_window);
  g_test_add_func ("/sampler/non-finite-logits", test_non_finite_logits);
  return g_test_run ();
}
