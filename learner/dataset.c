/* learner/dataset.c — SFT records and feedback groups from the store or JSONL, split,
 * tokenization with loss masking (see dataset.h). */
#include <json-glib/json-glib.h>
#include <string.h>
#include "dataset.h"
#include "hanzo-store-learner.h"
#include "lora.h"

/* ------------------------------------------------------------------ records (rc boxes) */

static void
chat_message_free (gpointer p)
{
  HzChatMessage *m = p;
  g_free ((char *) m->role);
  g_free ((char *) m->content);
  g_free (m);
}

static GPtrArray *
context_new (void)
{
  return g_ptr_array_new_with_free_func (chat_message_free);
}

static void
context_add (GPtrArray *ctx, const char *role, const char *content)
{
  HzChatMessage *m = g_new0 (HzChatMessage, 1);
  m->role = g_strdup (role);
  m->content = g_strdup (content);
  g_ptr_array_add (ctx, m);
}

static GPtrArray *
context_copy (const GPtrArray *ctx, guint n)
{
  GPtrArray *c = context_new ();
  for (guint i = 0; i < n; i++)
    {
      const HzChatMessage *m = ctx->pdata[i];
      context_add (c, m->role, m->content);
    }
  return c;
}

static void
record_clear (gpointer p)
{
  HzLearnRecord *r = p;
  g_ptr_array_unref (r->context);
  g_free (r->target);
}

static void
record_release (gpointer p)
{
  g_rc_box_release_full (p, record_clear);
}

static void
group_clear (gpointer p)
{
  HzLearnGroup *g = p;
  g_ptr_array_unref (g->context);
  g_ptr_array_unref (g->replies);
  g_array_unref (g->rewards);
  g_free (g->reference);
  g_free (g->key);
}

static void
group_release (gpointer p)
{
  g_rc_box_release_full (p, group_clear);
}

HzLearnDataset *
hz_learn_dataset_new (void)
{
  HzLearnDataset *d = g_new0 (HzLearnDataset, 1);
  d->records = g_ptr_array_new_with_free_func (record_release);
  d->groups = g_ptr_array_new_with_free_func (group_release);
  return d;
}

void
hz_learn_dataset_free (HzLearnDataset *d)
{
  if (d == NULL)
    return;
  g_ptr_array_unref (d->records);
  g_ptr_array_unref (d->groups);
  g_free (d);
}

static void
add_record (HzLearnDataset *d, GPtrArray *context, const char *target, gint64 source_id)
{
  HzLearnRecord *r = g_rc_box_new0 (HzLearnRecord);
  r->context = context;
  r->target = g_strdup (target);
  r->source_id = source_id;
  g_ptr_array_add (d->records, r);
}

/* The group with `key`, created (owning `context`) when new; else `context` is dropped. */
static HzLearnGroup *
group_for (HzLearnDataset *d, const char *key, GPtrArray *context, gint64 source_id)
{
  for (guint i = 0; i < d->groups->len; i++)
    {
      HzLearnGroup *g = d->groups->pdata[i];
      if (g_str_equal (g->key, key))
        {
          g_ptr_array_unref (context);
          return g;
        }
    }
  HzLearnGroup *g = g_rc_box_new0 (HzLearnGroup);
  g->context = context;
  g->replies = g_ptr_array_new_with_free_func (g_free);
  g->rewards = g_array_new (FALSE, FALSE, sizeof (double));
  g->source_id = source_id;
  g->key = g_strdup (key);
  g_ptr_array_add (d->groups, g);
  return g;
}

static void
group_add_reply (HzLearnGroup *g, const char *reply, double reward)
{
  g_ptr_array_add (g->replies, g_strdup (reply));
  g_array_append_val (g->rewards, reward);
}

/* ------------------------------------------------------------------ JSONL */

static const char *
member_str (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
         ? json_node_get_string (n) : NULL;
}

static gboolean
valid_role (const char *role)
{
  return role && (g_str_equal (role, "system") || g_str_equal (role, "user")
                  || g_str_equal (role, "assistant"));
}

static gboolean
load_line (HzLearnDataset *d, JsonObject *o, gint64 line, GError **error)
{
  const char *prompt = member_str (o, "prompt"), *system = member_str (o, "system");
  JsonNode *msgs = json_object_get_member (o, "messages");
  if (msgs && JSON_NODE_HOLDS_ARRAY (msgs))
    {
      JsonArray *a = json_node_get_array (msgs);
      g_autoptr (GPtrArray) ctx = context_new ();
      for (guint i = 0; i < json_array_get_length (a); i++)
        {
          JsonNode *mn = json_array_get_element (a, i);
          JsonObject *m = JSON_NODE_HOLDS_OBJECT (mn) ? json_node_get_object (mn) : NULL;
          const char *role = m ? member_str (m, "role") : NULL;
          const char *content = m ? member_str (m, "content") : NULL;
          if (!valid_role (role) || content == NULL)
            {
              g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                           "line %" G_GINT64_FORMAT ": message %u needs a role "
                           "(system/user/assistant) and a content string", line, i);
              return FALSE;
            }
          if (g_str_equal (role, "assistant") && ctx->len > 0)
            add_record (d, context_copy (ctx, ctx->len), content, line * 1000 + i);
          context_add (ctx, role, content);
        }
      return TRUE;
    }
  if (prompt == NULL)
    {
      g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                   "line %" G_GINT64_FORMAT ": expected \"messages\" or \"prompt\"", line);
      return FALSE;
    }
  GPtrArray *ctx = context_new ();
  if (system)
    context_add (ctx, "system", system);
  context_add (ctx, "user", prompt);
  const char *response = member_str (o, "response"), *chosen = member_str (o, "chosen");
  const char *rejected = member_str (o, "rejected"), *completion = member_str (o, "completion");
  if (response)
    add_record (d, ctx, response, line);
  else if (chosen && rejected)
    {
      g_autofree char *key = g_strdup_printf ("line:%" G_GINT64_FORMAT, line);
      HzLearnGroup *g = group_for (d, key, ctx, line);
      group_add_reply (g, chosen, 1.0);
      group_add_reply (g, rejected, 0.0);
    }
  else if (completion && json_object_has_member (o, "rating"))
    {
      const double rating = json_object_get_double_member (o, "rating");
      g_autofree char *key = g_strdup_printf ("prompt:%s\x1f%s", system ? system : "", prompt);
      group_add_reply (group_for (d, key, ctx, line), completion, rating);
    }
  else
    {
      g_autofree char *key = g_strdup_printf ("line:%" G_GINT64_FORMAT, line);
      HzLearnGroup *g = group_for (d, key, ctx, line);
      g->reference = g_strdup (member_str (o, "answer"));
    }
  return TRUE;
}

gboolean
hz_learn_dataset_load_jsonl (HzLearnDataset *d, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, error))
    return FALSE;
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);
  g_autoptr (JsonParser) parser = json_parser_new ();
  for (gint64 i = 0; lines[i]; i++)
    {
      g_strstrip (lines[i]);
      if (lines[i][0] == '\0')
        continue;
      g_autoptr (GError) local = NULL;
      if (!json_parser_load_from_data (parser, lines[i], -1, &local)
          || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        {
          g_set_error (error, HZ_LEARN_ERROR, HZ_LEARN_ERROR_FORMAT,
                       "%s:%" G_GINT64_FORMAT ": not a JSON object%s%s", path, i + 1,
                       local ? ": " : "", local ? local->message : "");
          return FALSE;
        }
      if (!load_line (d, json_node_get_object (json_parser_get_root (parser)), i + 1, error))
        {
          g_prefix_error (error, "%s: ", path);
          return FALSE;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------ store */

/* Context of a message: the redacted chain of its ancestors, oldest first; NULL when one
 * of them has no (current) redacted copy. */
static GPtrArray *
store_context (GHashTable *by_id, const HzLearnerSample *s)
{
  g_autoptr (GPtrArray) chain = g_ptr_array_new ();
  guint guard = 0;
  for (gint64 p = s->parent_id; p != 0; guard++)
    {
      const HzLearnerSample *a = g_hash_table_lookup (by_id, &p);
      if (a == NULL || guard > 100000)
        return NULL;
      g_ptr_array_add (chain, (gpointer) a);
      p = a->parent_id;
    }
  if (chain->len == 0)
    return NULL;
  GPtrArray *ctx = context_new ();
  for (guint i = chain->len; i-- > 0;)
    {
      const HzLearnerSample *a = chain->pdata[i];
      context_add (ctx, hz_role_to_string (a->role), a->redacted);
    }
  return ctx;
}

gboolean
hz_learn_dataset_add_from_store (HzLearnDataset *d, HzStore *store,
                                 const HzLearnStoreOptions *options, GError **error)
{
  g_autoptr (GPtrArray) samples = hz_store_list_learner_samples (store, error);
  if (samples == NULL)
    return FALSE;
  g_autoptr (GHashTable) by_id = g_hash_table_new (g_int64_hash, g_int64_equal);
  for (guint i = 0; i < samples->len; i++)
    {
      HzLearnerSample *s = samples->pdata[i];
      g_hash_table_insert (by_id, &s->message_id, s);
    }
  const gboolean unrated = options && options->include_unrated;
  for (guint i = 0; i < samples->len; i++)
    {
      const HzLearnerSample *s = samples->pdata[i];
      if (s->role != HZ_ROLE_ASSISTANT || s->redacted[0] == '\0')
        continue;
      GPtrArray *ctx = store_context (by_id, s);
      if (ctx == NULL)
        continue;
      if (s->rating != 0)
        {
          g_autofree char *key = g_strdup_printf ("parent:%" G_GINT64_FORMAT, s->parent_id);
          group_add_reply (group_for (d, key, context_copy (ctx, ctx->len), s->parent_id),
                           s->redacted, s->rating);
        }
      if (s->rating > 0 || s->user_written || (unrated && s->rating == 0))
        add_record (d, ctx, s->redacted, s->message_id);
      else
        g_ptr_array_unref (ctx);
    }
  return TRUE;
}

/* ------------------------------------------------------------------ split */

void
hz_learn_dataset_split (const HzLearnDataset *d, double fraction, guint32 seed,
                        HzLearnDataset **train, HzLearnDataset **heldout)
{
  HzLearnDataset *tr = hz_learn_dataset_new (), *ho = hz_learn_dataset_new ();
  const guint n = d->records->len;
  g_autofree double *u = g_new (double, MAX (n, 1));
  guint best_lo = 0, best_hi = 0;
  for (guint i = 0; i < n; i++)
    {
      const HzLearnRecord *r = d->records->pdata[i];
      guint64 h = (guint64) r->source_id * G_GUINT64_CONSTANT (0x9E3779B97F4A7C15) ^ seed;
      h ^= h >> 31; h *= G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9); h ^= h >> 29;
      u[i] = (h >> 11) * (1.0 / 9007199254740992.0);
      if (u[i] < u[best_lo]) best_lo = i;
      if (u[i] > u[best_hi]) best_hi = i;
    }
  for (guint i = 0; i < n; i++)
    {
      gboolean held = u[i] < fraction;
      if (n >= 2 && i == best_lo) held = TRUE;    /* at least one held out ... */
      if (n >= 2 && i == best_hi) held = FALSE;   /* ... and one kept */
      g_ptr_array_add (held ? ho->records : tr->records,
                       g_rc_box_acquire (d->records->pdata[i]));
    }
  for (guint i = 0; i < d->groups->len; i++)
    g_ptr_array_add (tr->groups, g_rc_box_acquire (d->groups->pdata[i]));
  *train = tr;
  *heldout = ho;
}

/* ------------------------------------------------------------------ tokenization */

void
hz_learn_tokenized_free (HzLearnTokenized *t)
{
  if (t == NULL)
    return;
  g_array_unref (t->examples);
  g_ptr_array_unref (t->bufs);
  g_free (t);
}

/* The context (and the reply, when given) in the model's template, as markup and content
 * pieces: what users and the model wrote is tokenized as text (issue 20), so a typed
 * "<|im_end|>" cannot forge a turn the nightly run would learn. */
static HzPrompt *
render (HzModel *model, const GPtrArray *ctx, const char *reply, gboolean gen_prompt,
        GError **error)
{
  const guint n = ctx->len + (reply ? 1 : 0);
  g_autofree HzChatMessage *msgs = g_new (HzChatMessage, MAX (n, 1));
  for (guint i = 0; i < ctx->len; i++)
    msgs[i] = *(const HzChatMessage *) ctx->pdata[i];
  if (reply)
    msgs[ctx->len] = (HzChatMessage) { "assistant", reply };
  return hz_model_render_chat (model, msgs, n, gen_prompt, error);
}

int32_t *
hz_learn_context_tokens (HzModel *model, const GPtrArray *context, int64_t *n, char **text,
                         GError **error)
{
  g_autoptr (HzPrompt) prompt = render (model, context, NULL, TRUE, error);
  if (prompt == NULL)
    return NULL;
  gsize nt = 0;
  int32_t *toks = hz_model_tokenize_prompt (model, prompt, TRUE, &nt);
  if (toks == NULL)
    toks = g_new0 (int32_t, 1);   /* an empty prompt is still a result */
  *n = (int64_t) nt;
  if (text)
    *text = g_strdup (hz_prompt_text (prompt, NULL));
  return toks;
}

/* Tokens of a reply in `context`: the rest of the full rendering after the prompt
 * rendering (template end-of-turn included, pieces keeping their kinds); plain text + EOS
 * without a template, or when the template's prompt is not a prefix of its full
 * rendering. A thinking model's reasoning is never a target: only the answer is
 * (hz_reasoning_strip(); what the template writes for an answer, e.g. Qwen3's empty
 * "<think>\n\n</think>\n\n", stays). NULL when the template refuses the conversation. */
static int32_t *
reply_tokens (HzModel *model, const GPtrArray *context, const char *raw_reply, int64_t *n,
              GError **error)
{
  g_autofree char *reply = hz_reasoning_strip (hz_model_reasoning_format (model), raw_reply, -1);
  g_autoptr (HzPrompt) prompt = render (model, context, NULL, TRUE, error);
  g_autoptr (HzPrompt) full = prompt ? render (model, context, reply, FALSE, error) : NULL;
  if (full == NULL)
    return NULL;
  const gboolean none = !hz_model_is_chat (model);
  gsize plen = 0;
  const char *ptext = hz_prompt_text (prompt, &plen);
  g_autoptr (HzPrompt) rest = NULL;
  if (!none && g_str_has_prefix (hz_prompt_text (full, NULL), ptext))
    rest = hz_prompt_tail (full, plen);
  else
    {
      rest = hz_prompt_new ();
      hz_prompt_append (rest, reply, -1, FALSE);
    }
  gsize nt = 0;
  g_autofree int32_t *toks = hz_model_tokenize_prompt (model, rest, FALSE, &nt);
  const int32_t eos = hz_model_eos (model);
  const gboolean add_eos = none && eos >= 0;
  int32_t *out = g_new (int32_t, nt + 1);
  memcpy (out, toks, sizeof (int32_t) * nt);
  if (add_eos)
    out[nt++] = eos;
  *n = (int64_t) nt;
  return out;
}

HzLearnTokenized *
hz_learn_dataset_tokenize (const HzLearnDataset *d, HzModel *model, int64_t max_tokens,
                           GError **error)
{
  HzLearnTokenized *t = g_new0 (HzLearnTokenized, 1);
  t->examples = g_array_new (FALSE, FALSE, sizeof (HzSftExample));
  t->bufs = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < d->records->len; i++)
    {
      const HzLearnRecord *r = d->records->pdata[i];
      int64_t np, nr;
      g_autofree int32_t *prompt = hz_learn_context_tokens (model, r->context, &np, NULL, error);
      g_autofree int32_t *reply = prompt ? reply_tokens (model, r->context, r->target, &nr, error)
                                         : NULL;
      if (reply == NULL)
        {
          g_prefix_error (error, "record %u: ", i + 1);
          hz_learn_tokenized_free (t);
          return NULL;
        }
      if (nr == 0)
        continue;
      nr = MIN (nr, max_tokens);                     /* cut an over-long reply */
      const int64_t keep = MIN (np, max_tokens + 1 - nr);  /* n = np + nr - 1 <= max */
      const int32_t *p = prompt + (np - keep);
      int32_t *tok = g_new (int32_t, keep + nr), *tgt = g_new (int32_t, keep + nr);
      HzSftExample e = { tok, tgt, hz_sft_example_build (p, keep, reply, nr, tok, tgt) };
      g_ptr_array_add (t->bufs, tok);
      g_ptr_array_add (t->bufs, tgt);
      if (e.n <= 0)
        continue;
      for (int64_t k = 0; k < e.n; k++)
        t->n_target_tokens += tgt[k] >= 0;
      t->max_len = MAX (t->max_len, e.n);
      g_array_append_val (t->examples, e);
    }
  return t;
}

GPtrArray *
hz_learn_dataset_feedback_groups (const HzLearnDataset *d, HzModel *model, int64_t max_tokens,
                                  GError **error)
{
  GPtrArray *out = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_grpo_group_free);
  for (guint i = 0; i < d->groups->len; i++)
    {
      const HzLearnGroup *g = d->groups->pdata[i];
      const guint n = g->replies->len;
      if (n == 0)
        continue;
      int64_t np;
      g_autofree int32_t *prompt = hz_learn_context_tokens (model, g->context, &np, NULL, error);
      g_autoptr (GPtrArray) toks = g_ptr_array_new_with_free_func (g_free);
      g_autofree int64_t *lens = g_new (int64_t, n);
      int64_t longest = 0;
      for (guint k = 0; k < n && prompt; k++)
        {
          int32_t *rt = reply_tokens (model, g->context, g->replies->pdata[k], &lens[k], error);
          if (rt == NULL)
            break;
          g_ptr_array_add (toks, rt);
          longest = MAX (longest, lens[k]);
        }
      if (toks->len < n)
        {
          g_prefix_error (error, "feedback group %u: ", i + 1);
          g_ptr_array_unref (out);
          return NULL;
        }
      if (np + longest - 1 > max_tokens || np == 0)
        continue;
      g_ptr_array_add (out, hz_grpo_group_new (prompt, np, (int) n,
                                               (const int32_t *const *) toks->pdata, lens,
                                               (const double *) g->rewards->data));
    }
  return out;
}
