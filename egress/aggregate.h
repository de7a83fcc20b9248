/* egress/aggregate.h — robust aggregation rules of the federation aggregator.
 *
 *  - Coordinate-wise trimmed mean (Yin et al., "Byzantine-Robust Distributed Learning",
 *    ICML 2018), as Flower's FedTrimmedAvg: per coordinate, sort the n client values, cut
 *    floor(beta * n) from each end and take the unweighted mean of the rest.
 *  - Krum and Multi-Krum (Blanchard et al., NeurIPS 2017), as Flower's Krum strategy: the
 *    score of client i is the sum of squared L2 distances to its max(1, n - f - 2) nearest
 *    other clients; Krum returns the client with the lowest score (ties: lowest index),
 *    Multi-Krum the unweighted mean of the m lowest-scoring clients.
 *
 * Updates are float32 vectors of one common dimension `dim`, given as an array of n
 * pointers. Sums are accumulated in double. Pure functions, thread-safe.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Trimmed mean into out[dim]. beta in [0, 0.5): FALSE (out untouched) if 2*cut >= n. */
gboolean hz_agg_trimmed_mean (const float *const *updates, gsize n, gsize dim, double beta,
                              float *out);

/** Krum scores into scores[n] (see above); FALSE if n < 2. */
gboolean hz_agg_krum_scores (const float *const *updates, gsize n, gsize dim, guint f,
                             double *scores);

/** Index of the Krum choice, or -1 if n == 0. */
gssize   hz_agg_krum (const float *const *updates, gsize n, gsize dim, guint f);

/** Multi-Krum: mean of the m best-scoring updates into out[dim]; FALSE if m == 0 or m > n. */
gboolean hz_agg_multi_krum (const float *const *updates, gsize n, gsize dim, guint f, guint m,
                            float *out);

G_END_DECLS
