/* learner/dp-sgd.h — DP-SGD (Abadi et al. 2016, arXiv 1607.00133) for adapters that may be
 * released (issue 8, item 3, sample level).
 *
 * One DP-SGD step, as Opacus implements it (Yousefpour et al. 2021, arXiv 2109.12298):
 *   1. Poisson sampling: every example of the N training examples joins the step's batch
 *      independently with probability q (so batch sizes vary, and may be 0);
 *   2. per-example gradients g_i of the example's own loss (its mean token cross-entropy)
 *      with respect to ALL LoRA parameters, each clipped to L2 norm C:
 *      g_i <- g_i * min(1, C / ||g_i||);
 *   3. Gaussian noise N(0, (z C)^2 I) added once to the sum of the clipped gradients;
 *   4. the result divided by the EXPECTED batch size q N (Opacus' convention for Poisson
 *      sampling; dividing by the realised size would leak it), then the optimiser step.
 * The privacy of `steps` such steps is that of the Poisson-subsampled Gaussian mechanism
 * with rate q and noise multiplier z composed `steps` times, accounted by RDP
 * (egress/accountant.h; hz_dp_sgd_epsilon()).
 *
 * Randomness. Sampling and noise both come from egress/noise.c (HzNoise): uniform integers
 * and the exact discrete Gaussian of Canonne, Kamath and Steinke 2020 on a grid of
 * sigma/2^16, read from getrandom(2). We reuse egress' sampler rather than a learner-side
 * one so that there is ONE audited secure sampler for every DP noise in the product; it is
 * pure computation in libhzdp (egress/meson.build), which links neither libsoup nor any
 * socket code, so the learner still cannot reach the network. A seeded, insecure generator
 * exists for tests only (HzDpSgdParams.test_seed).
 *
 * Thread safety: an HzDpSgd is used by one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/** DP-SGD hyperparameters. */
typedef struct {
  double  sample_rate;       /* q in (0, 1]; <= 0 in a job: batch / N (capped at 1) */
  double  noise_multiplier;  /* z >= 0 (0 = no noise: no privacy, tests only) */
  double  clip_norm;         /* per-example L2 bound C > 0 (default 1) */
  double  delta;             /* delta of the reported epsilon (default 1e-6) */
  guint32 test_seed;         /* 0: getrandom (secure); else a seeded GRand (tests only) */
} HzDpSgdParams;

/** Defaults: q 0 (from the batch size), z 1.0, C 1.0, delta 1e-6, secure randomness. */
void hz_dp_sgd_params_init (HzDpSgdParams *p);

typedef struct _HzDpSgd HzDpSgd;

/** A sampler for `p` (copied). Errors: HZ_LEARN_ERROR_INVALID (q outside (0, 1], z < 0,
 *  C <= 0 or not finite). */
HzDpSgd *hz_dp_sgd_new (const HzDpSgdParams *p, GError **error);
void     hz_dp_sgd_free (HzDpSgd *dp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzDpSgd, hz_dp_sgd_free)

const HzDpSgdParams *hz_dp_sgd_get_params (const HzDpSgd *dp);

/** Poisson sampling of one batch from n examples: appends to `indices` (a GArray of guint)
 *  every i in [0, n) drawn with probability q, in increasing order (possibly none).
 *  Errors: HZ_LEARN_ERROR_INVALID when the secure generator fails (message says why). */
gboolean hz_dp_sgd_sample (HzDpSgd *dp, guint n, GArray *indices, GError **error);

/** Clip g[0..n) to L2 norm C in place; returns the norm before clipping. */
double hz_dp_sgd_clip (const HzDpSgd *dp, float *g, gsize n);

/** sum[k] += N(0, (z C)^2) for k < n (nothing when z == 0). Errors: as hz_dp_sgd_sample. */
gboolean hz_dp_sgd_add_noise (HzDpSgd *dp, float *sum, gsize n, GError **error);

/** One example's contribution: clip g[0..n) to C in place, then sum[k] += g[k]. Returns
 *  the norm before clipping; *clipped_norm (nullable) gets the norm after (<= C). */
double hz_dp_sgd_accumulate (const HzDpSgd *dp, float *sum, float *g, gsize n,
                             double *clipped_norm);

/** Close a step's gradient: sum += N(0, (z C)^2) noise, then sum /= expected_batch (q N,
 *  > 0). Errors: as hz_dp_sgd_sample (sum is then unspecified). */
gboolean hz_dp_sgd_finish (HzDpSgd *dp, float *sum, gsize n, double expected_batch,
                           GError **error);

/** Epsilon at `delta` of `steps` DP-SGD steps with rate q and noise multiplier z > 0: the
 *  RDP of the Poisson-subsampled Gaussian (hz_rdp_compute()) at hz_rdp_default_orders(),
 *  converted by hz_rdp_to_epsilon() — the same computation hz_dp_spent() does for the
 *  ledger's "dp-sgd" rows. *best_order (nullable) gets the minimising order. Returns
 *  +inf for z == 0, 0 for steps == 0. Pure, thread-safe. */
double hz_dp_sgd_epsilon (double q, double noise_multiplier, guint64 steps, double delta,
                          double *best_order);

G_END_DECLS
