/* learner/reward.h — pluggable rewards for the GRPO trainer (grpo-trainer.h).
 *
 * A reward scores one completion of a prompt. Verifiable rewards (used by tests and for
 * tasks with a checkable answer) look at the completion's text or tokens: a regular
 * expression (anywhere, or the whole completion: a format check), an exact answer
 * (optionally extracted by a regex capture group), a token contained in / ending the
 * completion. Rewards combine as weighted sums. User feedback enters GRPO differently: a
 * thumbs rating or a pairwise preference is a reward attached to a stored completion, not a
 * function of fresh samples, so those become offline groups with fixed rewards (see
 * hz_grpo_group_new_rated() in grpo-trainer.h and dataset.h's preference records).
 *
 * Scores are plain doubles (1 = success, 0 = failure for the verifiable rewards). Only
 * differences within a group matter to GRPO (advantages are standardised per group).
 *
 * Thread safety: an HzReward is immutable after creation and may be scored from several
 * threads at once if its function is reentrant (all built-in ones are). Reference counted.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

G_BEGIN_DECLS

/** What a reward sees of one completion. Strings are UTF-8 (may be NULL when the trainer
 *  has no tokenizer: then only token rewards apply). */
typedef struct {
  const char    *prompt;      /* the prompt text as given to the trainer (nullable) */
  const char    *reference;   /* the prompt's expected answer, if the task has one (nullable) */
  const char    *completion;  /* detokenized completion without the end-of-generation token,
                                 a thinking model's answer only (its reasoning left out:
                                 engine/reasoning.c) (nullable) */
  const int32_t *tokens;      /* completion token ids, [n_tokens] (EOG token included when
                                 the completion stopped on it) */
  int64_t        n_tokens;
  gboolean       finished;    /* stopped on end-of-generation (not on the length limit) */
} HzRewardInput;

typedef double (*HzRewardFunc) (const HzRewardInput *in, gpointer user_data);

typedef struct _HzReward HzReward;

/** A reward from a function (user_data freed with `destroy`, nullable, at the last unref).
 *  `name` is for logs ("regex:...", "thumbs"). */
HzReward *hz_reward_new (const char *name, HzRewardFunc func, gpointer user_data,
                         GDestroyNotify destroy);
HzReward *hz_reward_ref (HzReward *r);
void      hz_reward_unref (HzReward *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzReward, hz_reward_unref)

const char *hz_reward_name (const HzReward *r);
/** Score one completion. */
double      hz_reward_score (const HzReward *r, const HzRewardInput *in);

/** 1 if `pattern` (PCRE, GRegex syntax) matches the completion text — anywhere, or with
 *  `full_match` the whole text (a format reward) — else 0. No text: 0.
 *  Errors: G_REGEX_ERROR for a bad pattern. */
HzReward *hz_reward_new_regex (const char *pattern, gboolean full_match, GError **error);

/** 1 if the answer equals in->reference after trimming whitespace on both, else 0. With
 *  `extract` (nullable, a regex with one capture group, e.g. "####\\s*(\\S+)") the answer is
 *  the first match's group 1 (no match: 0). Errors: G_REGEX_ERROR. */
HzReward *hz_reward_new_exact (const char *extract, GError **error);

typedef enum {
  HZ_REWARD_TOKEN_CONTAINS,   /* the token occurs anywhere in the completion */
  HZ_REWARD_TOKEN_ENDS_WITH,  /* the last non-EOG token of the completion is the token */
} HzRewardTokenMode;

/** 1 if `token` occurs in (or ends) the completion's tokens, else 0. `eog` is the
 *  end-of-generation id ignored by ENDS_WITH (-1: none). */
HzReward *hz_reward_new_token (int32_t token, HzRewardTokenMode mode, int32_t eog);

/** sum_i weights[i] * parts[i] (each part referenced). */
HzReward *hz_reward_new_sum (HzReward *const *parts, const double *weights, guint n);

/** Parse a command-line reward spec: "regex:PAT", "format:PAT" (full match), "exact",
 *  "exact:EXTRACT_REGEX", "contains:TEXT" (literal text), "token:ID", "ends-token:ID";
 *  several specs joined by "&&" add up (weight 1 each). Errors: HZ_LEARN_ERROR_INVALID, G_REGEX_ERROR. */
HzReward *hz_reward_parse (const char *spec, int32_t eog, GError **error);

G_END_DECLS
