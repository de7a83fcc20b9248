/* egress/dp.h — differentially private releases of LoRA deltas and the privacy budget.
 *
 * The release mechanism (user level, issue 8): the WHOLE delta x (all tensors as one
 * vector) is clipped to L2 norm C_u, x' = x * min(1, C_u / ||x||), then every coordinate
 * gets independent Gaussian noise N(0, (z_u C_u)^2) in f32 (egress/noise.c: the exact
 * discrete Gaussian of Canonne-Kamath-Steinke 2020 from getrandom(2) on a grid of sigma/2^16),
 * and only then is every value rounded to bf16 (post-processing, free in privacy).
 * Adding or removing the user's whole contribution changes the released vector's mean by
 * at most C_u in L2 (it is clipped), so one release is the Gaussian mechanism with
 * sensitivity C_u and noise multiplier z_u (user-level DP).
 *
 * Accounting:
 *  - one release alone: the exact (eps, delta) curve of the Gaussian mechanism (analytic
 *    Gaussian, Balle and Wang 2018), hz_analytic_gaussian_epsilon(z_u, delta, 1);
 *  - all releases inside the budget period: Rényi DP composition (Mironov 2017, Prop. 1:
 *    RDP adds up) of alpha / (2 z_i^2) per release, converted with hz_rdp_to_epsilon() at the
 *    budget's delta (default orders). Because every release is a full-participation Gaussian
 *    mechanism, the composition is also exactly a Gaussian mechanism with
 *    z_eff = (sum z_i^-2)^(-1/2) (Gaussian DP, Dong, Roth and Su 2019, Cor. 3.3), whose
 *    analytic-Gaussian epsilon is also valid; the smaller of the two is reported (both are
 *    upper bounds; for one release it is the analytic value).
 *  - the budget (default eps 8 at delta 1e-6 per 365 days, HZ_DP_BUDGET_DEFAULT) caps the
 *    composed release epsilon; a release that would exceed it is refused (HZ_DP_ERROR_BUDGET)
 *    and its noised values are wiped, never serialised.
 * Sample-level DP-SGD of the learner (issue 7) is recorded with hz_dp_record_training()
 * and composed across nights the same way (RDP of the Poisson-subsampled Gaussian,
 * hz_rdp_compute()), reported by hz_dp_spent(.., HZ_PRIVACY_MECH_DP_SGD, ..). Sample-level
 * and user-level guarantees protect different neighbouring datasets, so they are accounted
 * separately; the budget applies to what leaves the device (releases).
 *
 * Privacy invariant 1: HzDpRelease is opaque and hz_dp_release() is its only constructor,
 * which always clips, noises and writes the ledger row (in the transaction that checks the
 * budget) before returning. egress/egress.h's upload function accepts nothing else.
 *
 * Thread safety: functions are reentrant; an HzStore is used by one thread at a time
 * (hanzo-store.h); an HzDpRelease is immutable and may be read from any thread.
 */
#pragma once

#include <glib.h>
#include "lora-delta.h"
#include "hanzo-store-privacy.h"

G_BEGIN_DECLS

#define HZ_DP_ERROR (hz_dp_error_quark ())
/** Error domain of this header. */
GQuark hz_dp_error_quark (void);
typedef enum {
  HZ_DP_ERROR_INVALID,  /* bad parameter or delta (non-finite values, clip/noise <= 0) */
  HZ_DP_ERROR_BUDGET,   /* the release would exceed the privacy budget: refused */
  HZ_DP_ERROR_NOISE,    /* the secure random generator failed */
  HZ_DP_ERROR_STORE,    /* the ledger could not be read or written (message has why) */
} HzDpError;

/** A privacy budget: at most `epsilon` at `delta` over any window of `period_us`. */
typedef struct {
  double epsilon;    /* > 0 */
  double delta;      /* in (0, 1) */
  gint64 period_us;  /* > 0 */
} HzDpBudget;

/** eps 8 at delta 1e-6 per 365 days (issue 8). */
#define HZ_DP_BUDGET_DEFAULT \
  ((HzDpBudget) { 8.0, 1e-6, G_GINT64_CONSTANT (365) * 24 * 3600 * G_USEC_PER_SEC })

/** Defaults of the learner's releases (learner/federation.h, shown by the privacy page):
 *  the whole adapter clipped to L2 norm 10 and noise multiplier 4.5, about eps 1.0 per
 *  release at delta 1e-6 (hz_dp_release_epsilon (4.5, 1e-6)). */
#define HZ_DP_RELEASE_DEFAULT_CLIP_NORM 10.0
#define HZ_DP_RELEASE_DEFAULT_NOISE_MULTIPLIER 4.5

typedef struct _HzDpRelease HzDpRelease;

/** Release `delta` for federation round `round_id` (>= 1): validate (finite values),
 *  clip to L2 norm `clip_norm` (C_u > 0), add N(0, (noise_multiplier * clip_norm)^2) from
 *  getrandom, round to bf16, serialise to the wire format (lora-delta.h) with the release's
 *  epsilon in the metadata, and — in ONE store transaction — check the composed epsilon of
 *  all releases in the last budget->period_us plus this one against `budget` (NULL =
 *  HZ_DP_BUDGET_DEFAULT) and append the ledger row (mechanism "gaussian-release", q 1,
 *  steps 1, RDP curve, release id, payload sha256).
 *  Cost: O(n) noise samples (about 1 µs each) before the transaction; the write lock is
 *  held only for the ledger read/write. Must not be called inside hz_store_begin().
 *  Errors: HZ_DP_ERROR_INVALID, _BUDGET (nothing written), _NOISE, _STORE. */
HzDpRelease *hz_dp_release (const HzLoraDelta *delta, double clip_norm,
                            double noise_multiplier, guint64 round_id, HzStore *store,
                            const HzDpBudget *budget, GError **error);

void hz_dp_release_free (HzDpRelease *release);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzDpRelease, hz_dp_release_free)

/** Unique id of the release (a random UUID; the ledger's release_id). */
const char        *hz_dp_release_get_id (const HzDpRelease *release);
guint64            hz_dp_release_get_round_id (const HzDpRelease *release);
/** Epsilon of this release alone at the budget's delta (analytic Gaussian). */
double             hz_dp_release_get_epsilon (const HzDpRelease *release);
/** Composed epsilon of all releases in the budget period including this one. */
double             hz_dp_release_get_total_epsilon (const HzDpRelease *release);
/** The DP delta (the budget's) at which the epsilons are stated. */
double             hz_dp_release_get_delta (const HzDpRelease *release);
double             hz_dp_release_get_clip_norm (const HzDpRelease *release);
double             hz_dp_release_get_noise_multiplier (const HzDpRelease *release);
/** The wire bytes (BF16 safetensors); the same object on every call. */
GBytes            *hz_dp_release_get_payload (const HzDpRelease *release);
/** Lowercase hex sha256 of the payload. */
const char        *hz_dp_release_get_payload_sha256 (const HzDpRelease *release);
/** The released values (clipped, noised, bf16-exact) — what the server will see. */
const HzLoraDelta *hz_dp_release_get_values (const HzDpRelease *release);

/** Epsilon of ONE Gaussian release with noise multiplier z at `delta` (analytic
 *  Gaussian). z > 0, delta in (0, 1). Pure, thread-safe. */
double hz_dp_release_epsilon (double noise_multiplier, double delta);

/** Upper bound on the L2 norm of an honest release of `n_elements` values with clip norm
 *  C = `clip_norm` and noise multiplier z = `noise_multiplier`, for a server's update check
 *  (hanzo-aggregator --release-clip/--release-noise). The release is x + g with ||x|| <= C
 *  and g ~ N(0, (zC)^2 I_n), rounded to bf16, so
 *    ||release|| <= (C + zC sqrt(n + 2 sqrt(t n) + 2 t)) (1 + 2^-8),
 *  with t = 40: by Laurent and Massart 2000 (Lemma 1, chi-square tail)
 *  P(||g||^2 >= (zC)^2 (n + 2 sqrt(t n) + 2t)) <= e^-t (about 4e-18, the chance that an
 *  honest client is refused); 2^-8 bounds bf16 round-to-nearest's relative error.
 *  Returns the bound, or NAN for n_elements == 0 or a clip/noise that is not finite > 0.
 *  Pure, thread-safe. */
double hz_dp_release_norm_bound (gsize n_elements, double clip_norm, double noise_multiplier);

/** What a mechanism's ledger rows in the window [now - period, now] compose to. */
typedef struct {
  double epsilon;      /* composed epsilon at budget->delta (0 when n_entries == 0) */
  double best_order;   /* RDP order attaining it (0 when the GDP bound was smaller) */
  guint  n_entries;    /* ledger rows counted */
} HzDpSpent;

/** Compose the ledger rows of `mech` in the budget's window (see the top of this header:
 *  RDP of each row recomputed from its q, z and steps at hz_rdp_default_orders(), summed,
 *  converted; for releases also the Gaussian-DP bound, the smaller kept). budget NULL =
 *  default. Errors: HZ_DP_ERROR_STORE. */
gboolean hz_dp_spent (HzStore *store, const HzDpBudget *budget, HzPrivacyMechanism mech,
                      HzDpSpent *out, GError **error);

/** For the learner (issue 7): record one night of DP-SGD — Poisson sampling rate q in
 *  (0, 1], noise multiplier z > 0 (noise sd z*C on the summed clipped per-example
 *  gradients), per-example clip norm C > 0, `steps` >= 1 — as a "dp-sgd" ledger row with
 *  its RDP curve at the default orders and its stand-alone epsilon at `delta`. Composition
 *  across nights: hz_dp_spent(store, budget, HZ_PRIVACY_MECH_DP_SGD, ...). Returns the
 *  ledger row id (> 0) or 0: HZ_DP_ERROR_INVALID, _STORE. */
gint64 hz_dp_record_training (HzStore *store, double q, double noise_multiplier,
                              double clip_norm, guint64 steps, double delta, GError **error);

G_END_DECLS
