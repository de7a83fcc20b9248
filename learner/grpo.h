/* learner/grpo.h — the GRPO objective: group-relative advantages, the clipped ratio
 * surrogate, the k3 KL estimator and the token-level loss normalisations.
 *
 * Sources: DeepSeekMath (Shao et al. 2024, arXiv 2402.03300) section 4.1, eq. (3)-(4);
 * PPO's clipped surrogate (Schulman et al. 2017, arXiv 1707.06347); the k3 estimator of
 * KL[pi || pi_ref] from J. Schulman, "Approximating KL Divergence" (2020);
 * DAPO (Yu et al. 2025, arXiv 2503.14476) for token-level normalisation.
 *
 * Per completion i of a group of G (one prompt) with reward r_i and tokens t of o_i:
 *   A_i      = (r_i - mean r) / (std r + 1e-4), std the sample standard deviation (N - 1)
 *   rho_it   = exp(logp_it - logp_old_it)
 *   J_it     = min(rho_it A_i, clip(rho_it, 1 - eps, 1 + eps) A_i)      (eps = 0.2)
 *   k3_it    = exp(logp_ref_it - logp_it) - (logp_ref_it - logp_it) - 1
 *   l_it     = -(J_it - beta k3_it)                                     (beta = 0.04)
 *   loss     = "grpo": (1/G) sum_i (1/|o_i|) sum_t l_it   (per-sequence mean)
 *              "dapo": (1 / sum_i |o_i|) sum_i sum_t l_it  (per-token mean)
 * d J / d logp = rho A on the unclipped branch (when rho A <= clip(rho) A), else 0;
 * d k3 / d logp = 1 - exp(logp_ref - logp).
 *
 * Thread safety: pure functions (reentrant).
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

typedef enum {
  HZ_GRPO_NORM_SEQUENCE,   /* "grpo": mean over each sequence's tokens, then over sequences */
  HZ_GRPO_NORM_TOKEN,      /* "dapo": mean over all tokens of the group */
} HzGrpoNorm;

typedef struct {
  double     clip_eps;     /* epsilon of the clipped ratio (default 0.2) */
  double     beta;         /* KL coefficient (default 0.04; 0: no reference needed) */
  HzGrpoNorm norm;         /* default HZ_GRPO_NORM_SEQUENCE */
} HzGrpoParams;

/** Defaults: clip_eps 0.2, beta 0.04, "grpo" normalisation. */
void hz_grpo_params_init (HzGrpoParams *p);

/** Name of a normalisation ("grpo" / "dapo") and back (FALSE for an unknown name). */
const char *hz_grpo_norm_name (HzGrpoNorm n);
gboolean    hz_grpo_norm_from_name (const char *name, HzGrpoNorm *out);

/** Group-relative advantages adv[i] = (r[i] - mean) / (std + 1e-4) over n >= 2 rewards,
 *  std with Bessel's correction (N - 1). n == 1 gives 0 (no group signal). */
void hz_grpo_advantages (const double *rewards, int n, double *adv);

/** k3 estimate of KL[pi || pi_ref] at one token: exp(lr - l) - (lr - l) - 1 with
 *  l = logp, lr = logp_ref (natural logs). Always >= 0. */
double hz_grpo_k3 (double logp, double logp_ref);

/** The clipped surrogate J = min(rho A, clip(rho, 1 - eps, 1 + eps) A) of one token with
 *  ratio rho = exp(logp - logp_old); *dJ_dlogp (nullable) receives its derivative with
 *  respect to logp (rho A on the unclipped branch, 0 when the clipped branch is the
 *  minimum). */
double hz_grpo_clipped_objective (double ratio, double adv, double eps, double *dJ_dlogp);

/** The GRPO loss of one group of n_seq completions whose response tokens are laid out
 *  back to back: sequence i owns tokens [offsets[i], offsets[i+1]) of the flat arrays
 *  logp / logp_old / logp_ref [offsets[n_seq]] (log-probabilities of the sampled tokens
 *  under the current, sampling-time and reference policies; logp_ref may be NULL when
 *  beta = 0). adv [n_seq] from hz_grpo_advantages. Returns the loss; dlogp (nullable,
 *  [offsets[n_seq]]) receives d loss / d logp per token (written, not accumulated).
 *  Sequences without tokens contribute nothing (and are not counted by "grpo"). */
double hz_grpo_loss (const HzGrpoParams *p, int n_seq, const int64_t *offsets,
                     const double *logp, const double *logp_old, const double *logp_ref,
                     const double *adv, double *dlogp);

G_END_DECLS
