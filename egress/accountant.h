/* egress/accountant.h — privacy accounting for Hanzo's federation releases.
 *
 *  - Rényi DP (RDP) of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang,
 *    "Rényi Differential Privacy of the Sampled Gaussian Mechanism", arXiv 1908.10530),
 *    computed as in TensorFlow Privacy / Opacus (`compute_rdp`): for integer orders the
 *    exact binomial expansion, for fractional orders the two-sided erfc series.
 *  - Conversion RDP -> (epsilon, delta) with the improved bound of Balle et al. 2020
 *    ("Hypothesis testing interpretations and Rényi DP", Prop. 12), as Opacus does:
 *        eps = min_a [ RDP(a) + log((a-1)/a) - (log delta + log a) / (a-1) ].
 *  - The analytic Gaussian mechanism (Balle and Wang, "Improving the Gaussian Mechanism
 *    for Differential Privacy", ICML 2018, Alg. 1): the smallest sigma for (eps, delta).
 *
 * All functions are pure, reentrant and thread-safe. Orders (alpha) must be > 1.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** RDP at order `alpha` (> 1) of ONE step of the sampled Gaussian mechanism with sampling
 *  rate q in [0,1] and noise multiplier z = sigma / sensitivity (> 0). Returns +inf for
 *  z <= 0 with q > 0, 0 for q == 0. Natural-log units (nats). */
double hz_rdp_sampled_gaussian (double q, double noise_multiplier, double alpha);

/** RDP over `steps` compositions at each of `n_orders` orders: out[i] = steps * rdp(orders[i]).
 *  `out` has n_orders elements. */
void hz_rdp_compute (double q, double noise_multiplier, guint64 steps,
                     const double *orders, gsize n_orders, double *out);

/** (eps, delta) conversion: the minimum over the orders of the bound above. `rdp[i]` is the
 *  RDP at `orders[i]`. Returns eps (>= 0, +inf if every order is infinite) and, when
 *  `best_order` is not NULL, the order that attains it. delta must be in (0, 1). */
double hz_rdp_to_epsilon (const double *orders, const double *rdp, gsize n_orders,
                          double delta, double *best_order);

/** The default orders (as Opacus' DEFAULT_ALPHAS: 1.1..10.9 step 0.1, then 12..63).
 *  Returns a static array; *n receives its length. */
const double *hz_rdp_default_orders (gsize *n);

/** Analytic Gaussian mechanism: the smallest sigma such that adding N(0, sigma^2) to a query
 *  of L2 sensitivity `sensitivity` is (eps, delta)-DP (Balle and Wang 2018, Theorem 8,
 *  solved by bisection to 1e-12 relative). eps > 0, delta in (0, 1). */
double hz_analytic_gaussian_sigma (double eps, double delta, double sensitivity);

/** delta(eps) of the Gaussian mechanism with noise sigma and sensitivity (Theorem 8):
 *  Phi(s/(2 sigma) - eps sigma/s) - e^eps Phi(-s/(2 sigma) - eps sigma/s). */
double hz_gaussian_delta (double sigma, double eps, double sensitivity);

/** Inverse of the above in eps: the smallest eps >= 0 with hz_gaussian_delta(sigma, eps,
 *  sensitivity) <= delta, i.e. the exact (eps, delta) curve of ONE Gaussian release
 *  (Balle and Wang 2018, Theorem 8), by bisection to 1e-12 absolute. delta in (0, 1),
 *  sigma > 0, sensitivity > 0; returns 0 when even eps = 0 meets delta. */
double hz_analytic_gaussian_epsilon (double sigma, double delta, double sensitivity);

G_END_DECLS
