/* learner/reward.c — pluggable GRPO rewards (see reward.h). */
#include <string.h>
#include "reward.h"
#include "lora.h"   /* HZ_LEARN_ERROR */

struct _HzReward {
  gint           ref;
  char          *name;
  HzRewardFunc   func;
  gpointer       user_data;
  GDestroyNotify destroy;
};

HzReward *
hz_reward_new (const char *name, HzRewardFunc func, gpointer user_data, GDestroyNotify destroy)
{
  HzReward *r = g_new0 (HzReward, 1);
  r->ref = 1;
  r->name = g_strdup (name);
  r->func = func;
  r->user_data = user_data;
  r->destroy = destroy;
  return r;
}

HzReward *
hz_reward_ref (HzReward *r)
{
  g_atomic_int_inc (&r->ref);
  return r;
}

void
hz_reward_unref (HzReward *r)
{
  if (r == NULL || !g_atomic_int_dec_and_test (&r->ref))
    return;
  if (r->destroy)
    r->destroy (r->user_data);
  g_free (r->name);
  g_free (r);
}

const char *
hz_reward_name (const HzReward *r)
{
  return r->name;
}

double
hz_reward_score (const HzReward *r, const HzRewardInput *in)
{
  return r->func (in, r->user_data);
}

/* ------------------------------------------------------------------ regex / format */

static double
regex_score (const HzRewardInput *in, gpointer data)
{
  return in->completion && g_regex_match (data, in->completion, 0, NULL) ? 1.0 : 0.0;
}

HzReward *
hz_reward_new_regex (const char *pattern, gboolean full_match, GError **error)
{
  g_autofree char *anchored = full_match ? g_strdup_printf ("\\A(?:%s)\\z", pattern)
                                         : g_strdup (pattern);
  GRegex *re = g_regex_new (anchored, G_REGEX_OPTIMIZE, 0, error);
  if (re == NULL)
    return NULL;
  g_autofree char *name = g_strdup_printf ("%s:%s", full_match ? "format" : "regex", pattern);
  return hz_reward_new (name, regex_score, re, (GDestroyNotify) g_regex_unref);
}

/* ------------------------------------------------------------------ exact answer */

static double
exact_score (const HzRewardInput *in, gpointer data)
{
  if (in->completion == NULL || in->reference == NULL)
    return 0;
  g_autofree char *answer = NULL;
  if (data != NULL)
    {
      g_autoptr (GMatchInfo) mi = NULL;
      if (!g_regex_match (data, in->completion, 0, &mi))
        return 0;
      answer = g_match_info_fetch (mi, 1);
    }
  else
    answer = g_strdup (in->completion);
  g_autofree char *want = g_strdup (in->reference);
  return answer && g_str_equal (g_strstrip (answer), g_strstrip (want)) ? 1.0 : 0.0;
}

HzReward *
hz_reward_new_exact (const char *extract, GError **error)
{
  GRegex *re = NULL;
  if (extract != NULL && (re = g_regex_new (extract, G_REGEX_OPTIMIZE, 0, error)) == NULL)
    return NULL;
  if (re != NULL && g_regex_get_capture_count (re) < 1)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
                   "exact-answer extractor %s has no capture group", extract);
      g_regex_unref (re);
      return NULL;
    }
  g_autofree char *name = g_strdup_printf ("exact%s%s", extract ? ":" : "", extract ? extract : "");
  /* (without an extractor there is no regex to free) */
  return hz_reward_new (name, exact_score, re, re ? (GDestroyNotify) g_regex_unref : NULL);
}

/* ------------------------------------------------------------------ tokens */

typedef struct {
  int32_t           token, eog;
  HzRewardTokenMode mode;
} TokenReward;

static double
token_score (const HzRewardInput *in, gpointer data)
{
  const TokenReward *t = data;
  int64_t n = in->n_tokens;
  if (t->mode == HZ_REWARD_TOKEN_ENDS_WITH)
    {
      if (n > 0 && t->eog >= 0 && in->tokens[n - 1] == t->eog)
        n--;
      return n > 0 && in->tokens[n - 1] == t->token ? 1.0 : 0.0;
    }
  for (int64_t i = 0; i < n; i++)
    if (in->tokens[i] == t->token)
      return 1.0;
  return 0.0;
}

HzReward *
hz_reward_new_token (int32_t token, HzRewardTokenMode mode, int32_t eog)
{
  TokenReward *t = g_new (TokenReward, 1);
  *t = (TokenReward) { token, eog, mode };
  g_autofree char *name = g_strdup_printf ("%s:%d", mode == HZ_REWARD_TOKEN_ENDS_WITH
                                                    ? "ends-token" : "token", token);
  return hz_reward_new (name, token_score, t, g_free);
}

/* ------------------------------------------------------------------ sums */

typedef struct {
  GPtrArray *parts;
  double    *weights;
} SumReward;

static double
sum_score (const HzRewardInput *in, gpointer data)
{
  const SumReward *s = data;
  double total = 0;
  for (guint i = 0; i < s->parts->len; i++)
    total += s->weights[i] * hz_reward_score (s->parts->pdata[i], in);
  return total;
}

static void
sum_free (gpointer data)
{
  SumReward *s = data;
  g_ptr_array_unref (s->parts);
  g_free (s->weights);
  g_free (s);
}

HzReward *
hz_reward_new_sum (HzReward *const *parts, const double *weights, guint n)
{
  SumReward *s = g_new0 (SumReward, 1);
  s->parts = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_reward_unref);
  s->weights = g_new (double, MAX (n, 1));
  GString *name = g_string_new ("sum(");
  for (guint i = 0; i < n; i++)
    {
      g_ptr_array_add (s->parts, hz_reward_ref (parts[i]));
      s->weights[i] = weights ? weights[i] : 1.0;
      g_string_append_printf (name, "%s%g*%s", i ? "," : "", s->weights[i], parts[i]->name);
    }
  g_string_append_c (name, ')');
  HzReward *r = hz_reward_new (name->str, sum_score, s, sum_free);
  g_string_free (name, TRUE);
  return r;
}

/* ------------------------------------------------------------------ specs */

static HzReward *
parse_one (const char *spec, int32_t eog, GError **error)
{
  const char *colon = strchr (spec, ':');
  g_autofree char *kind = colon ? g_strndup (spec, colon - spec) : g_strdup (spec);
  const char *arg = colon ? colon + 1 : NULL;
  if (g_str_equal (kind, "regex") && arg)
    return hz_reward_new_regex (arg, FALSE, error);
  if (g_str_equal (kind, "format") && arg)
    return hz_reward_new_regex (arg, TRUE, error);
  if (g_str_equal (kind, "exact"))
    return hz_reward_new_exact (arg, error);
  if (g_str_equal (kind, "contains") && arg)
    {
      g_autofree char *quoted = g_regex_escape_string (arg, -1);
      return hz_reward_new_regex (quoted, FALSE, error);
    }
  if ((g_str_equal (kind, "token") || g_str_equal (kind, "ends-token")) && arg)
    {
      guint64 id;
      if (g_ascii_string_to_unsigned (arg, 10, 0, G_MAXINT32, &id, NULL))
        return hz_reward_new_token ((int32_t) id, kind[0] == 'e' ? HZ_REWARD_TOKEN_ENDS_WITH
                                                                 : HZ_REWARD_TOKEN_CONTAINS, eog);
    }
  g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_INVALID,
               "unknown reward spec \"%s\" (regex:PAT, format:PAT, exact[:RE], contains:TEXT, "
               "token:ID, ends-token:ID)", spec);
  return NULL;
}

HzReward *
hz_reward_parse (const char *spec, int32_t eog, GError **error)
{
  g_auto (GStrv) items = g_strsplit (spec, "&&", -1);
  const guint n = g_strv_length (items);
  if (n == 1)
    return parse_one (items[0], eog, error);
  g_autoptr (GPtrArray) parts = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_reward_unref);
  for (guint i = 0; i < n; i++)
    {
      HzReward *r = parse_one (items[i], eog, error);
      if (r == NULL)
        return NULL;
      g_ptr_array_add (parts, r);
    }
  return hz_reward_new_sum ((HzReward *const *) parts->pdata, NULL, n);
}
