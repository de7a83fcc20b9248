/* engine/chat-fit.c — fitting a conversation into a context: hz_model_fit_chat()
 * (hanzo/engine.h, "prompts"), the leading system messages kept and the oldest turns
 * dropped until the rendered prompt fits. Above the renderer (chat-render.c) and the
 * model (model-context.c), so that prompt.c, the pieces of a prompt, stays on a low floor. */
#include "hanzo/engine.h"

#include <string.h>

/* ------------------------------------------------------------ fitting a context */

/* A conversation being fitted: the leading system messages msgs[0..n_sys) stay, turns
 * start at starts[] (newest first). */
typedef struct {
  const HzModel       *m;
  const HzChatMessage *msgs;
  gsize                n, n_sys;
  GArray              *starts;   /* gsize */
  guint                budget;
} Fitting;

/* Tokens of the system messages followed by the turns from starts[i] on, rendered with the
 * generation prompt into *tokens (g_free); FALSE when the template refuses them. */
static gboolean
render_from (const Fitting *f, gsize i, HzToken **tokens, gsize *n_tokens, GError **error)
{
  const gsize start = i < f->starts->len ? g_array_index (f->starts, gsize, i) : f->n;
  g_autofree HzChatMessage *kept = g_new (HzChatMessage, f->n_sys + (f->n - start) + 1);
  memcpy (kept, f->msgs, f->n_sys * sizeof *f->msgs);
  memcpy (kept + f->n_sys, f->msgs + start, (f->n - start) * sizeof *f->msgs);
  g_autoptr (HzPrompt) p = hz_model_render_chat (f->m, kept, f->n_sys + (f->n - start), TRUE,
                                                  error);
  if (p == NULL)
    return FALSE;
  *tokens = hz_model_tokenize_prompt (f->m, p, TRUE, n_tokens);
  return TRUE;
}

/* Keeping the turns from starts[i] on: when they fit the budget, they replace *best.
 * A template that refuses them (one that needs a conversation to start with a user turn,
 * say) counts as not fitting: fewer turns are tried. */
static gboolean
try_turns (const Fitting *f, gsize i, HzToken **best, gsize *best_n)
{
  gsize nt = 0;
  HzToken *tok = NULL;
  if (!render_from (f, i, &tok, &nt, NULL) || nt > f->budget)
    {
      g_free (tok);
      return FALSE;
    }
  g_free (*best);
  *best = tok;
  *best_n = nt;
  return TRUE;
}

static gboolean
is_role (const HzChatMessage *msg, const char *role)
{
  return g_strcmp0 (msg->role ? msg->role : "user", role) == 0;
}

HzToken *
hz_model_fit_chat (const HzModel *m, const HzChatMessage *msgs, gsize n, guint n_ctx,
                   guint n_reserve, HzChatFit *fit, GError **error)
{
  g_return_val_if_fail (m != NULL && (msgs != NULL || n == 0), NULL);
  HzChatFit dummy;
  if (fit == NULL)
    fit = &dummy;
  memset (fit, 0, sizeof *fit);
  fit->n_budget = n_ctx - MIN (n_reserve, n_ctx / 2);

  /* the leading system messages stay; turns start at user messages after them (the
   * first message after them and the last message are starts whatever their roles):
   * starts[0] is the newest */
  gsize n_sys = 0;
  while (n_sys + 1 < n && is_role (&msgs[n_sys], "system"))
    n_sys++;
  g_autoptr (GArray) starts = g_array_new (FALSE, FALSE, sizeof (gsize));
  for (gsize i = n; i-- > n_sys;)
    if (i == n - 1 || i == n_sys || is_role (&msgs[i], "user"))
      g_array_append_val (starts, i);
  const Fitting f = { m, msgs, n, n_sys, starts, fit->n_budget };
  gsize best_n = 0;
  HzToken *best = NULL;
  if (!render_from (&f, 0, &best, &best_n, error))
    return NULL;
  if (starts->len == 0)
    {
      fit->n_tokens = best_n;
      return best;
    }
  if (best_n > n_ctx)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL,
                   n_sys > 0 ? "the message is too long: with the system prompt it takes %"
                               G_GSIZE_FORMAT " tokens, and the model's context holds %u"
                             : "the message is too long: it takes %" G_GSIZE_FORMAT
                               " tokens, and the model's context holds %u",
                   best_n, n_ctx);
      g_free (best);
      return NULL;
    }

  /* Exponential then binary search for the most turns within the budget (token counts grow
   * with the turns kept): turns from starts[k] on fit, from starts[bad] on do not (or
   * there are no more). */
  gsize k = 0, bad = starts->len;
  if (best_n <= f.budget)
    {
      for (gsize step = 1; k + 1 < starts->len; step *= 2)
        {
          const gsize next = MIN (k + step, starts->len - 1);
          if (!try_turns (&f, next, &best, &best_n))
            {
              bad = next;
              break;
            }
          k = next;
        }
      while (bad - k > 1)
        {
          const gsize mid = k + (bad - k) / 2;
          if (try_turns (&f, mid, &best, &best_n))
            k = mid;
          else
            bad = mid;
        }
    }
  fit->n_tokens = best_n;
  fit->n_dropped = g_array_index (starts, gsize, k) - n_sys;
  return best;
}
