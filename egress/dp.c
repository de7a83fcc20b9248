/* egress/dp.c — the DP release (clip, noise, bf16, ledger) and budget accounting.
 * Mechanism and sources: dp.h. */
#include "dp.h"

#include <math.h>
#include <string.h>
#include "accountant.h"
#include "noise.h"

G_DEFINE_QUARK (hz-dp-error-quark, hz_dp_error)

struct _HzDpRelease {
  char        *id;
  guint64      round_id;
  double       epsilon, total_epsilon, delta, clip_norm, noise_multiplier;
  HzLoraDelta *values;
  GBytes      *payload;
  char        *payload_sha256;
};

void
hz_dp_release_free (HzDpRelease *r)
{
  if (!r)
    return;
  g_free (r->id);
  hz_lora_delta_free (r->values);
  g_clear_pointer (&r->payload, g_bytes_unref);
  g_free (r->payload_sha256);
  g_free (r);
}

const char *hz_dp_release_get_id (const HzDpRelease *r) { return r->id; }
guint64 hz_dp_release_get_round_id (const HzDpRelease *r) { return r->round_id; }
double hz_dp_release_get_epsilon (const HzDpRelease *r) { return r->epsilon; }
double hz_dp_release_get_total_epsilon (const HzDpRelease *r) { return r->total_epsilon; }
double hz_dp_release_get_delta (const HzDpRelease *r) { return r->delta; }
double hz_dp_release_get_clip_norm (const HzDpRelease *r) { return r->clip_norm; }
double hz_dp_release_get_noise_multiplier (const HzDpRelease *r) { return r->noise_multiplier; }
GBytes *hz_dp_release_get_payload (const HzDpRelease *r) { return r->payload; }
const char *hz_dp_release_get_payload_sha256 (const HzDpRelease *r) { return r->payload_sha256; }
const HzLoraDelta *hz_dp_release_get_values (const HzDpRelease *r) { return r->values; }

double
hz_dp_release_epsilon (double noise_multiplier, double delta)
{
  return hz_analytic_gaussian_epsilon (noise_multiplier, delta, 1.0);
}

double
hz_dp_release_norm_bound (gsize n_elements, double clip_norm, double noise_multiplier)
{
  if (n_elements == 0 || !(clip_norm > 0) || !isfinite (clip_norm) ||
      !(noise_multiplier > 0) || !isfinite (noise_multiplier))
    return NAN;
  const double t = 40.0, n = (double) n_elements;
  const double chi = sqrt (n + 2.0 * sqrt (t * n) + 2.0 * t);
  return (clip_norm + noise_multiplier * clip_norm * chi) * (1.0 + 1.0 / 256.0);
}

/* ================================================================= accounting */

static gboolean
check_budget_params (const HzDpBudget *b, GError **error)
{
  if (b->epsilon > 0 && isfinite (b->epsilon) && b->delta > 0 && b->delta < 1 && b->period_us > 0)
    return TRUE;
  g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID,
               "privacy budget needs epsilon > 0, delta in (0,1) and a period > 0");
  return FALSE;
}

/* Running composition of ledger rows. */
typedef struct {
  gsize   n_orders;
  const double *orders;
  double *rdp;          /* summed curve */
  double  inv_z2;       /* sum of z^-2 over full-participation single-step Gaussian rows */
  gboolean all_gaussian;
  guint   n;
} Composition;

static void
composition_init (Composition *c)
{
  c->orders = hz_rdp_default_orders (&c->n_orders);
  c->rdp = g_new0 (double, c->n_orders);
  c->inv_z2 = 0;
  c->all_gaussian = TRUE;
  c->n = 0;
}

static void
composition_add (Composition *c, double q, double z, guint64 steps)
{
  g_autofree double *curve = g_new (double, c->n_orders);
  hz_rdp_compute (q, z, steps, c->orders, c->n_orders, curve);
  for (gsize i = 0; i < c->n_orders; i++)
    c->rdp[i] += curve[i];
  if (q == 1.0)
    c->inv_z2 += (double) steps / (z * z);  /* `steps` Gaussians of multiplier z */
  else
    c->all_gaussian = FALSE;
  c->n++;
}

static double
composition_epsilon (const Composition *c, double delta, double *best_order)
{
  double order = 0;
  if (c->n == 0)
    {
      if (best_order)
        *best_order = 0;
      return 0.0;
    }
  double eps = hz_rdp_to_epsilon (c->orders, c->rdp, c->n_orders, delta, &order);
  if (c->all_gaussian && c->inv_z2 > 0)
    {
      double gdp = hz_analytic_gaussian_epsilon (1.0 / sqrt (c->inv_z2), delta, 1.0);
      if (gdp < eps)
        {
          eps = gdp;
          order = 0;
        }
    }
  if (best_order)
    *best_order = order;
  return eps;
}

static void
composition_clear (Composition *c)
{
  g_clear_pointer (&c->rdp, g_free);
}

/* Add every ledger row of `mech` since `since_us` to `c`. */
static gboolean
compose_ledger (HzStore *store, gint64 since_us, HzPrivacyMechanism mech, Composition *c,
                GError **error)
{
  GError *local = NULL;
  g_autoptr (GPtrArray) rows = hz_store_list_privacy_ledger (store, since_us, &local);
  if (!rows)
    {
      g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_STORE, "reading the privacy ledger: %s",
                   local->message);
      g_error_free (local);
      return FALSE;
    }
  for (guint i = 0; i < rows->len; i++)
    {
      const HzPrivacyLedgerEntry *e = rows->pdata[i];
      if (e->mechanism == mech)
        composition_add (c, e->q, e->noise_multiplier, (guint64) e->steps);
    }
  return TRUE;
}

gboolean
hz_dp_spent (HzStore *store, const HzDpBudget *budget, HzPrivacyMechanism mech,
             HzDpSpent *out, GError **error)
{
  HzDpBudget b = budget ? *budget : HZ_DP_BUDGET_DEFAULT;
  if (!check_budget_params (&b, error))
    return FALSE;
  Composition c;
  composition_init (&c);
  gboolean ok = compose_ledger (store, g_get_real_time () - b.period_us, mech, &c, error);
  if (ok)
    {
      out->epsilon = composition_epsilon (&c, b.delta, &out->best_order);
      out->n_entries = c.n;
    }
  composition_clear (&c);
  return ok;
}

/* A ledger row for (q, z, steps) with its curve at the default orders. */
static HzPrivacyLedgerEntry *
ledger_entry_new (HzPrivacyMechanism mech, double q, double z, double clip, guint64 steps,
                  double delta)
{
  HzPrivacyLedgerEntry *e = g_new0 (HzPrivacyLedgerEntry, 1);
  const double *orders = hz_rdp_default_orders (&e->n_orders);
  e->mechanism = mech;
  e->q = q;
  e->noise_multiplier = z;
  e->clip_norm = clip;
  e->steps = (gint64) steps;
  e->orders = g_memdup2 (orders, e->n_orders * sizeof (double));
  e->rdp = g_new (double, e->n_orders);
  hz_rdp_compute (q, z, steps, orders, e->n_orders, e->rdp);
  e->delta = delta;
  e->epsilon = hz_rdp_to_epsilon (orders, e->rdp, e->n_orders, delta, NULL);
  if (q == 1.0 && steps == 1)
    e->epsilon = MIN (e->epsilon, hz_dp_release_epsilon (z, delta));
  return e;
}

static gboolean
store_error (GError **error, GError *local, const char *what)
{
  g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_STORE, "%s: %s", what, local->message);
  g_error_free (local);
  return FALSE;
}

gint64
hz_dp_record_training (HzStore *store, double q, double noise_multiplier, double clip_norm,
                       guint64 steps, double delta, GError **error)
{
  if (!(q > 0 && q <= 1) || !(noise_multiplier > 0) || !isfinite (noise_multiplier) ||
      !(clip_norm > 0) || !isfinite (clip_norm) || steps < 1 || steps > G_MAXINT64 ||
      !(delta > 0 && delta < 1))
    {
      g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID,
                   "DP-SGD record needs q in (0,1], z > 0, C > 0, steps >= 1, delta in (0,1)");
      return 0;
    }
  g_autoptr (HzPrivacyLedgerEntry) e = ledger_entry_new (HZ_PRIVACY_MECH_DP_SGD, q,
                                                         noise_multiplier, clip_norm, steps,
                                                         delta);
  GError *local = NULL;
  gint64 id = hz_store_add_privacy_ledger_entry (store, e, &local);
  if (!id)
    store_error (error, local, "recording DP-SGD in the privacy ledger");
  return id;
}

/* ================================================================= the release */

/* Clip `x` (n values) to L2 norm `clip` in place. */
static void
clip_l2 (float *x, gsize n, double clip)
{
  double s = 0;
  for (gsize k = 0; k < n; k++)
    s += (double) x[k] * x[k];
  double norm = sqrt (s);
  if (norm <= clip)
    return;
  float scale = (float) (clip / norm);
  for (gsize k = 0; k < n; k++)
    x[k] *= scale;
}

/* x += N(0, sigma^2) iid, from getrandom, in chunks. */
static gboolean
add_noise (float *x, gsize n, double sigma, GError **error)
{
  enum { CHUNK = 65536 };
  g_autoptr (HzNoise) rng = hz_noise_new ();
  g_autofree float *buf = g_new (float, CHUNK);
  GError *local = NULL;
  for (gsize k0 = 0; k0 < n; k0 += CHUNK)
    {
      gsize m = MIN ((gsize) CHUNK, n - k0);
      if (!hz_noise_gaussian_grid (rng, sigma, buf, m, &local))
        {
          g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_NOISE, "noise: %s", local->message);
          g_error_free (local);
          return FALSE;
        }
      for (gsize k = 0; k < m; k++)
        x[k0 + k] += buf[k];
    }
  explicit_bzero (buf, CHUNK * sizeof (float));
  return TRUE;
}

/* Compose the releases in the window plus `r`; sets r->total_epsilon, and an
 * HZ_DP_ERROR_BUDGET error when over budget. */
static gboolean
check_budget (HzStore *store, const HzDpBudget *b, HzDpRelease *r, GError **error)
{
  Composition c;
  composition_init (&c);
  gboolean ok = compose_ledger (store, g_get_real_time () - b->period_us,
                                HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, &c, error);
  if (ok)
    {
      double before = composition_epsilon (&c, b->delta, NULL);
      guint n_before = c.n;
      composition_add (&c, 1.0, r->noise_multiplier, 1);
      r->total_epsilon = composition_epsilon (&c, b->delta, NULL);
      if (!(r->total_epsilon <= b->epsilon))
        {
          g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_BUDGET,
                       "release refused: it would raise the privacy spent in the last %.0f days "
                       "to epsilon %.3f at delta %g, over the budget of %g (already spent %.3f "
                       "in %u release%s; this release alone costs %.3f)",
                       b->period_us / (86400.0 * G_USEC_PER_SEC), r->total_epsilon, b->delta,
                       b->epsilon, before, n_before, n_before == 1 ? "" : "s", r->epsilon);
          ok = FALSE;
        }
    }
  composition_clear (&c);
  return ok;
}

/* Check the budget and append the ledger row in one transaction. */
static gboolean
commit_to_ledger (HzStore *store, const HzDpBudget *b, HzDpRelease *r, GError **error)
{
  GError *local = NULL;
  if (!hz_store_begin (store, &local))
    return store_error (error, local, "starting the ledger transaction");
  gboolean ok = check_budget (store, b, r, error);
  if (ok)
    {
      g_autoptr (HzPrivacyLedgerEntry) e =
        ledger_entry_new (HZ_PRIVACY_MECH_GAUSSIAN_RELEASE, 1.0, r->noise_multiplier,
                          r->clip_norm, 1, b->delta);
      e->release_id = g_strdup (r->id);
      e->payload_sha256 = g_strdup (r->payload_sha256);
      e->round_id = (gint64) r->round_id;
      if (!hz_store_add_privacy_ledger_entry (store, e, &local))
        ok = store_error (error, local, "writing the privacy ledger");
      else if (!hz_store_commit (store, &local))
        return store_error (error, local, "committing the privacy ledger");
    }
  if (!ok)
    hz_store_rollback (store);
  return ok;
}

HzDpRelease *
hz_dp_release (const HzLoraDelta *delta, double clip_norm, double noise_multiplier,
               guint64 round_id, HzStore *store, const HzDpBudget *budget, GError **error)
{
  HzDpBudget b = budget ? *budget : HZ_DP_BUDGET_DEFAULT;
  if (!check_budget_params (&b, error))
    return NULL;
  if (!(clip_norm > 0) || !isfinite (clip_norm) || !(noise_multiplier > 0) ||
      !isfinite (noise_multiplier) || round_id < 1 || round_id > G_MAXINT64 || !store)
    {
      g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID,
                   "a release needs a clip norm > 0, a noise multiplier > 0, a round id >= 1 "
                   "and a store for the ledger");
      return NULL;
    }
  GError *local = NULL;
  if (!hz_lora_delta_validate (delta, hz_lora_delta_get_config (delta), &local))
    {
      g_set_error (error, HZ_DP_ERROR, HZ_DP_ERROR_INVALID, "delta refused: %s", local->message);
      g_error_free (local);
      return NULL;
    }

  g_autoptr (HzDpRelease) r = g_new0 (HzDpRelease, 1);
  r->id = g_uuid_string_random ();
  r->round_id = round_id;
  r->delta = b.delta;
  r->clip_norm = clip_norm;
  r->noise_multiplier = noise_multiplier;
  r->epsilon = hz_dp_release_epsilon (noise_multiplier, b.delta);

  /* Cheap pre-check so a hopeless release does not spend seconds on noise; the
   * authoritative check is repeated under the write lock in commit_to_ledger(). */
  if (!check_budget (store, &b, r, error))
    return NULL;

  r->values = hz_lora_delta_copy (delta);
  float *x = hz_lora_delta_data (r->values);
  gsize n = hz_delta_config_n_elements (hz_lora_delta_get_config (delta));
  clip_l2 (x, n, clip_norm);
  if (!add_noise (x, n, noise_multiplier * clip_norm, error))
    return NULL;
  hz_lora_round_bf16 (x, n);
  r->payload = hz_lora_delta_to_wire (r->values, round_id, r->epsilon);
  r->payload_sha256 = hz_sha256_hex (r->payload);

  if (!commit_to_ledger (store, &b, r, error))
    {
      explicit_bzero (x, n * sizeof (float));
      return NULL;
    }
  return g_steal_pointer (&r);
}
