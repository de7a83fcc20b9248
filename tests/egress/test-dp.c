/* The DP release: clip + noise + bf16 + ledger, and the budget (issue 8). Statistical bounds
 * are 5 standard errors (a correct implementation fails with probability < 1e-6). */
#include <glib.h>
#include <math.h>
#include <string.h>
#include "accountant.h"
#include "dp.h"

#define BASE "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static HzStore *
tmp_store (void)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("hz-dp-XXXXXX", &error);
  g_assert_no_error (error);
  g_autofree char *path = g_build_filename (dir, "hanzo.db", NULL);
  HzStore *store = hz_store_open (path, &error);
  g_assert_no_error (error);
  return store;
}

static HzDeltaConfig *
config_of (gsize n)
{
  HzDeltaConfig *cfg = hz_delta_config_new (4, 8);
  const int64_t a[2] = { 4, (int64_t) n / 8 }, b[2] = { (int64_t) n / 8, 4 };
  g_assert_true (hz_delta_config_add_tensor (cfg, "w.lora_A.weight", 2, a, NULL));
  g_assert_true (hz_delta_config_add_tensor (cfg, "w.lora_B.weight", 2, b, NULL));
  g_assert_cmpuint (hz_delta_config_n_elements (cfg), ==, n);
  return cfg;
}

static guint
ledger_len (HzStore *store)
{
  g_autoptr (GPtrArray) rows = hz_store_list_privacy_ledger (store, 0, NULL);
  g_assert_nonnull (rows);
  return rows->len;
}

static void
test_analytic_epsilon (void)
{
  /* inverse of the analytic-Gaussian vectors */
  g_assert_cmpfloat_with_epsilon (hz_analytic_gaussian_epsilon (3.7306316, 1e-5, 1), 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (hz_analytic_gaussian_epsilon (1.0 / 3, 0.78760074, 1), 1.0, 1e-6);
  g_assert_cmpfloat_with_epsilon (hz_analytic_gaussian_epsilon (7.4612632, 1e-5, 2), 1.0, 1e-6);
  /* huge and tiny noise stay finite and monotone */
  double e_small = hz_analytic_gaussian_epsilon (0.001, 1e-6, 1);
  g_assert_true (isfinite (e_small) && e_small > 1e5);
  g_assert_cmpfloat (hz_analytic_gaussian_epsilon (1000, 1e-6, 1), <, 0.01);
  g_assert_cmpfloat (hz_dp_release_epsilon (1.0, 1e-6), >, hz_dp_release_epsilon (2.0, 1e-6));
}

/* Clipping: a delta of norm 100 released with negligible noise comes out at norm C. */
static void
test_clip (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  const gsize n = 10000;
  g_autoptr (HzDeltaConfig) cfg = config_of (n);
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  for (gsize k = 0; k < n; k++)
    hz_lora_delta_data (d)[k] = 1.0f;
  HzDpBudget loose = { 1e9, 1e-6, G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC };
  g_autoptr (GError) error = NULL;
  g_autoptr (HzDpRelease) r = hz_dp_release (d, 1.0, 0.001, 1, store, &loose, &error);
  g_assert_no_error (error);
  const float *x = hz_lora_delta_const_data (hz_dp_release_get_values (r));
  double mean = 0;
  for (gsize k = 0; k < n; k++)
    mean += x[k];
  mean /= n;
  /* clipped coordinates are C / sqrt(n) = 0.01; noise sd 0.001 -> mean's SE 1e-5; bf16
   * rounding of 0.01 is within 2^-9 relative */
  g_test_message ("mean %.6f, norm %.5f", mean, hz_lora_delta_l2_norm (hz_dp_release_get_values (r)));
  g_assert_cmpfloat (fabs (mean - 0.01), <, 0.01 / 256 + 5e-5);
  g_assert_cmpfloat (fabs (hz_lora_delta_l2_norm (hz_dp_release_get_values (r)) - sqrt (1.01)), <, 0.01);
  /* the input delta is left untouched */
  g_assert_cmpfloat (hz_lora_delta_const_data (d)[0], ==, 1.0f);
  /* a delta already inside the ball is not scaled up */
  for (gsize k = 0; k < n; k++)
    hz_lora_delta_data (d)[k] = (k % 2 ? 1 : -1) * 0.001f;  /* norm 0.1 */
  g_autoptr (HzDpRelease) r2 = hz_dp_release (d, 1.0, 0.0001, 2, store, &loose, &error);
  g_assert_no_error (error);
  double dot = 0;
  x = hz_lora_delta_const_data (hz_dp_release_get_values (r2));
  for (gsize k = 0; k < n; k++)
    dot += x[k] * (k % 2 ? 1 : -1) * 0.001;
  g_assert_cmpfloat (fabs (dot - 0.01), <, 0.0005);   /* <x', x> = ||x||^2 = 0.01 */
}

/* Noise: zero delta, N(0, (zC)^2) per coordinate; payload = values; ledger row written. */
static void
test_noise_payload_ledger (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  const gsize n = 40000;
  g_autoptr (HzDeltaConfig) cfg = config_of (n);
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  g_autoptr (GError) error = NULL;
  const double C = 2.0, z = 1.5, sigma = 3.0;
  g_autoptr (HzDpRelease) r = hz_dp_release (d, C, z, 17, store, NULL, &error);
  g_assert_no_error (error);
  const float *x = hz_lora_delta_const_data (hz_dp_release_get_values (r));
  double s = 0, s2 = 0;
  gsize within = 0;
  for (gsize k = 0; k < n; k++)
    {
      s += x[k];
      s2 += (double) x[k] * x[k];
      within += fabs (x[k]) <= sigma;
    }
  double mean = s / n, sd = sqrt (s2 / n - mean * mean), frac = (double) within / n;
  g_test_message ("mean %.4f sd %.4f P(|x|<=sigma) %.4f", mean, sd, frac);
  g_assert_cmpfloat (fabs (mean), <, 5 * sigma / sqrt (n));
  g_assert_cmpfloat (fabs (sd - sigma), <, 5 * sigma / sqrt (2.0 * n) + sigma / 256);
  g_assert_cmpfloat (fabs (frac - 0.682689), <, 5 * sqrt (0.2166 / n) + 0.005);

  /* the payload is the wire form of exactly these values */
  g_autoptr (HzLoraDelta) back = hz_lora_delta_from_wire (hz_dp_release_get_payload (r), cfg,
                                                          NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (hz_lora_delta_const_data (back), n * 4, x, n * 4);
  guint64 round;
  double eps;
  g_autoptr (HzLoraDelta) back2 = hz_lora_delta_from_wire (hz_dp_release_get_payload (r), cfg,
                                                           &round, &eps, NULL);
  g_assert_cmpuint (round, ==, 17);
  g_assert_cmpfloat (eps, ==, hz_dp_release_get_epsilon (r));
  g_assert_cmpfloat_with_epsilon (eps, hz_analytic_gaussian_epsilon (z, 1e-6, 1), 1e-12);
  g_autofree char *sha = hz_sha256_hex (hz_dp_release_get_payload (r));
  g_assert_cmpstr (sha, ==, hz_dp_release_get_payload_sha256 (r));

  /* the ledger row, same release id and payload hash */
  g_autoptr (HzPrivacyLedgerEntry) e = hz_store_get_privacy_release (store, hz_dp_release_get_id (r),
                                                                    &error);
  g_assert_no_error (error);
  g_assert_cmpint (e->mechanism, ==, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE);
  g_assert_cmpfloat (e->q, ==, 1);
  g_assert_cmpfloat (e->noise_multiplier, ==, z);
  g_assert_cmpfloat (e->clip_norm, ==, C);
  g_assert_cmpint (e->steps, ==, 1);
  g_assert_cmpint (e->round_id, ==, 17);
  g_assert_cmpstr (e->payload_sha256, ==, sha);
  g_assert_cmpfloat_with_epsilon (e->epsilon, eps, 1e-12);
  /* its RDP curve is alpha / (2 z^2) */
  for (gsize i = 0; i < e->n_orders; i++)
    g_assert_cmpfloat_with_epsilon (e->rdp[i], e->orders[i] / (2 * z * z), 1e-9 * e->orders[i]);
}

/* The server's bound on an honest release's norm holds for real releases (clip active and
 * not), is not loose (within 15 % of the typical norm zC sqrt(n) + C at n = 4096), and
 * refuses bad parameters. */
static void
test_norm_bound (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  const gsize n = 4096;
  g_autoptr (HzDeltaConfig) cfg = config_of (n);
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  HzDpBudget loose = { 1e9, 1e-6, G_GINT64_CONSTANT (3600) * G_USEC_PER_SEC };
  const double C = 10, z = 4.5;
  const double bound = hz_dp_release_norm_bound (n, C, z);
  g_assert_true (isfinite (bound));
  g_assert_cmpfloat (bound, <, 1.15 * (C + z * C * sqrt ((double) n)));
  for (guint round = 1; round <= 8; round++)
    {
      /* norms 0.1 C .. 1000 C: the larger ones are clipped */
      for (gsize k = 0; k < n; k++)
        hz_lora_delta_data (d)[k] = (float) (pow (10, round / 2.0 - 1) * C / sqrt ((double) n));
      g_autoptr (GError) error = NULL;
      g_autoptr (HzDpRelease) r = hz_dp_release (d, C, z, round, store, &loose, &error);
      g_assert_no_error (error);
      double norm = hz_lora_delta_l2_norm (hz_dp_release_get_values (r));
      g_test_message ("round %u: released norm %.2f, bound %.2f", round, norm, bound);
      g_assert_cmpfloat (norm, <=, bound);
      g_assert_cmpfloat (norm, >, 0.8 * z * C * sqrt ((double) n));
    }
  g_assert_true (isnan (hz_dp_release_norm_bound (0, C, z)));
  g_assert_true (isnan (hz_dp_release_norm_bound (n, 0, z)));
  g_assert_true (isnan (hz_dp_release_norm_bound (n, C, -1)));
  g_assert_true (isnan (hz_dp_release_norm_bound (n, C, INFINITY)));
}

/* Releases compose until the budget refuses; a refused release writes nothing. */
static void
test_budget (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  g_autoptr (HzDeltaConfig) cfg = config_of (64);
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  g_autoptr (GError) error = NULL;
  const double z = hz_analytic_gaussian_sigma (3.0, 1e-6, 1.0);   /* one release: eps 3 */
  gsize n_orders;
  const double *orders = hz_rdp_default_orders (&n_orders);
  double last = 0;
  guint k;
  for (k = 1; k < 20; k++)
    {
      g_autoptr (HzDpRelease) r = hz_dp_release (d, 1.0, z, k, store, NULL, &error);
      if (!r)
        break;
      double total = hz_dp_release_get_total_epsilon (r);
      /* k Gaussians of multiplier z compose exactly to one of z / sqrt(k) (GDP) ... */
      double gdp = hz_analytic_gaussian_epsilon (z / sqrt (k), 1e-6, 1);
      /* ... which beats the RDP bound of the same composition */
      g_autofree double *rdp = g_new (double, n_orders);
      hz_rdp_compute (1.0, z, k, orders, n_orders, rdp);
      double rdp_eps = hz_rdp_to_epsilon (orders, rdp, n_orders, 1e-6, NULL);
      g_test_message ("release %u: total eps %.4f (GDP %.4f, RDP %.4f)", k, total, gdp, rdp_eps);
      g_assert_cmpfloat_with_epsilon (total, MIN (gdp, rdp_eps), 1e-9);
      g_assert_cmpfloat (total, >, last);
      g_assert_cmpfloat (total, <=, 8.0);
      g_assert_cmpfloat_with_epsilon (hz_dp_release_get_epsilon (r), 3.0, 1e-6);
      last = total;
    }
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_BUDGET);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, "over the budget of 8"));
  g_assert_cmpuint (k, >=, 4);
  g_assert_cmpuint (ledger_len (store), ==, k - 1);   /* the refused one wrote nothing */
  HzDpSpent spent;
  g_assert_true (hz_dp_spent (store, NULL, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, &spent, NULL));
  g_assert_cmpuint (spent.n_entries, ==, k - 1);
  g_assert_cmpfloat_with_epsilon (spent.epsilon, last, 1e-9);
  g_clear_error (&error);

  /* a configurable budget: the same release fits a larger one */
  HzDpBudget big = HZ_DP_BUDGET_DEFAULT;
  big.epsilon = 100;
  g_autoptr (HzDpRelease) more = hz_dp_release (d, 1.0, z, 99, store, &big, &error);
  g_assert_no_error (error);

  /* rows older than the period do not count */
  HzDpBudget week = { 8.0, 1e-6, G_GINT64_CONSTANT (7) * 86400 * G_USEC_PER_SEC };
  g_autoptr (HzStore) other = tmp_store ();
  g_autofree double *old_rdp = g_new (double, n_orders);
  hz_rdp_compute (1.0, z, 1, orders, n_orders, old_rdp);
  HzPrivacyLedgerEntry old = {
    .time_us = g_get_real_time () - G_GINT64_CONSTANT (8) * 86400 * G_USEC_PER_SEC,
    .mechanism = HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, .q = 1, .noise_multiplier = z,
    .clip_norm = 1, .steps = 1, .n_orders = n_orders, .orders = (double *) orders,
    .rdp = old_rdp, .epsilon = 3, .delta = 1e-6, .release_id = (char *) "old",
    .payload_sha256 = (char *) "00",
  };
  g_assert_cmpint (hz_store_add_privacy_ledger_entry (other, &old, &error), >, 0);
  g_assert_true (hz_dp_spent (other, &week, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, &spent, &error));
  g_assert_cmpuint (spent.n_entries, ==, 0);
  g_assert_cmpfloat (spent.epsilon, ==, 0);
  g_assert_true (hz_dp_spent (other, NULL, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, &spent, &error));
  g_assert_cmpuint (spent.n_entries, ==, 1);
  g_assert_cmpfloat_with_epsilon (spent.epsilon, 3.0, 1e-6);

  /* one release alone over budget is refused before any noise is drawn */
  g_autoptr (HzDpRelease) greedy = hz_dp_release (d, 1.0, 0.2, 5, other, NULL, &error);
  g_assert_null (greedy);
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_BUDGET);
  g_clear_error (&error);
  g_assert_cmpuint (ledger_len (other), ==, 1);
}

static void
test_invalid (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  g_autoptr (HzDeltaConfig) cfg = config_of (64);
  g_autoptr (HzLoraDelta) d = hz_lora_delta_new (cfg, BASE);
  g_autoptr (GError) error = NULL;
  hz_lora_delta_data (d)[3] = NAN;
  g_assert_null (hz_dp_release (d, 1.0, 2.0, 1, store, NULL, &error));
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID);
  g_clear_error (&error);
  hz_lora_delta_data (d)[3] = 0;
  g_assert_null (hz_dp_release (d, 0.0, 2.0, 1, store, NULL, &error));
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (hz_dp_release (d, 1.0, -1.0, 1, store, NULL, &error));
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID);
  g_clear_error (&error);
  g_assert_null (hz_dp_release (d, 1.0, 2.0, 0, store, NULL, &error));
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID);
  g_clear_error (&error);
  /* inside a caller's transaction the ledger cannot be written atomically: refused */
  g_assert_true (hz_store_begin (store, NULL));
  g_assert_null (hz_dp_release (d, 1.0, 2.0, 1, store, NULL, &error));
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_STORE);
  hz_store_rollback (store);
  g_assert_cmpuint (ledger_len (store), ==, 0);
}

/* The learner's API: DP-SGD nights compose by RDP. */
static void
test_training (void)
{
  g_autoptr (HzStore) store = tmp_store ();
  g_autoptr (GError) error = NULL;
  gint64 id = hz_dp_record_training (store, 0.01, 1.1, 1.0, 1000, 1e-5, &error);
  g_assert_no_error (error);
  g_assert_cmpint (id, >, 0);
  g_autoptr (GPtrArray) rows = hz_store_list_privacy_ledger (store, 0, &error);
  const HzPrivacyLedgerEntry *e = rows->pdata[0];
  /* issue vector: 1.725290818 at integer orders 2..256 (order 9); the default orders
   * include 9 and finer fractional ones, so the value is at most that */
  g_test_message ("one night: eps %.9f", e->epsilon);
  g_assert_cmpfloat (e->epsilon, <=, 1.725290818 + 1e-8);
  g_assert_cmpfloat (e->epsilon, >, 1.70);
  g_assert_cmpint (hz_dp_record_training (store, 0.01, 1.1, 1.0, 1000, 1e-5, &error), >, id);
  HzDpBudget b = { 8, 1e-5, G_GINT64_CONSTANT (365) * 86400 * G_USEC_PER_SEC };
  HzDpSpent spent;
  g_assert_true (hz_dp_spent (store, &b, HZ_PRIVACY_MECH_DP_SGD, &spent, &error));
  gsize n_orders;
  const double *orders = hz_rdp_default_orders (&n_orders);
  g_autofree double *rdp = g_new (double, n_orders);
  hz_rdp_compute (0.01, 1.1, 2000, orders, n_orders, rdp);
  double want = hz_rdp_to_epsilon (orders, rdp, n_orders, 1e-5, NULL);
  g_test_message ("two nights: eps %.6f (order %g)", spent.epsilon, spent.best_order);
  g_assert_cmpuint (spent.n_entries, ==, 2);
  g_assert_cmpfloat_with_epsilon (spent.epsilon, want, 1e-9);
  g_assert_cmpfloat (spent.epsilon, <, 2 * e->epsilon);   /* RDP beats naive composition */
  /* training rows do not count against the release budget */
  g_assert_true (hz_dp_spent (store, &b, HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, &spent, &error));
  g_assert_cmpuint (spent.n_entries, ==, 0);
  g_assert_cmpint (hz_dp_record_training (store, 0, 1.1, 1.0, 1000, 1e-5, &error), ==, 0);
  g_assert_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/egress/dp/analytic-epsilon", test_analytic_epsilon);
  g_test_add_func ("/egress/dp/clip", test_clip);
  g_test_add_func ("/egress/dp/noise-payload-ledger", test_noise_payload_ledger);
  g_test_add_func ("/egress/dp/budget", test_budget);
  g_test_add_func ("/egress/dp/norm-bound", test_norm_bound);
  g_test_add_func ("/egress/dp/invalid", test_invalid);
  g_test_add_func ("/egress/dp/training", test_training);
  return g_test_run ();
}
