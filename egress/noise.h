/* egress/noise.h — cryptographically secure noise for differentially private releases.
 *
 * Method: the discrete Gaussian N_Z(0, sigma^2) of Canonne, Kamath and Steinke, "The
 * Discrete Gaussian for Differential Privacy" (NeurIPS 2020), Algorithms 1-3: exact
 * Bernoulli(exp(-gamma)) for rational gamma, a discrete Laplace proposal with integer scale
 * t = floor(sigma) + 1, and rejection with probability exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)).
 * All arithmetic is on integers (128-bit), driven by uniform integers from getrandom(2), so
 * no floating-point artefacts leak information (Mironov 2012's attack on textbook
 * floating-point samplers does not apply).
 *
 * A real-valued release uses a fine grid: value = g * Z with Z ~ N_Z(0, (sigma/g)^2); with
 * sigma/g >= 2^10 the discrete Gaussian's RDP is at most that of the continuous Gaussian
 * of the same sigma (CKS20, Theorem 4 and Prop. 5) so the continuous accountant applies.
 *
 * Thread safety: an HzNoise is used from one thread at a time.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

#define HZ_NOISE_ERROR (hz_noise_error_quark ())
GQuark hz_noise_error_quark (void);
typedef enum {
  HZ_NOISE_ERROR_ENTROPY,  /* getrandom failed */
  HZ_NOISE_ERROR_RANGE,    /* sigma out of the supported range */
} HzNoiseError;

typedef struct _HzNoise HzNoise;

/** A sampler reading the kernel CSPRNG (getrandom). Deterministic seeding is only possible
 *  through hz_noise_new_insecure_for_tests(). */
HzNoise *hz_noise_new (void);
/** A sampler driven by GRand(seed): reproducible, NOT secure; tests only. */
HzNoise *hz_noise_new_insecure_for_tests (guint32 seed);
void     hz_noise_free (HzNoise *n);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzNoise, hz_noise_free)

/** Uniform integer in [0, bound), bound >= 1, by rejection (no modulo bias). */
gboolean hz_noise_uniform (HzNoise *n, unsigned __int128 bound, unsigned __int128 *out,
                           GError **error);
/** Exact Bernoulli(exp(-num/den)), num >= 0, den >= 1 (CKS20 Algorithm 1). */
gboolean hz_noise_bernoulli_exp (HzNoise *n, unsigned __int128 num, unsigned __int128 den,
                                 gboolean *out, GError **error);
/** Discrete Laplace with integer scale t >= 1: P(x) proportional to exp(-|x|/t)
 *  (CKS20 Algorithm 2). */
gboolean hz_noise_discrete_laplace (HzNoise *n, uint64_t t, int64_t *out, GError **error);
/** Discrete Gaussian with variance parameter sigma^2 = num/den (CKS20 Algorithm 3).
 *  sigma must be in [1, 2^40]. */
gboolean hz_noise_discrete_gaussian (HzNoise *n, uint64_t sigma2_num, uint64_t sigma2_den,
                                     int64_t *out, GError **error);
/** Fill out[k] with g * Z_k, Z_k iid discrete Gaussian of standard deviation sigma/g, where
 *  the grid g = sigma / 2^16 (so sigma/g = 65536). sigma > 0. Values are in the caller's
 *  units (same as sigma). */
gboolean hz_noise_gaussian_grid (HzNoise *n, double sigma, float *out, gsize count,
                                 GError **error);

G_END_DECLS
