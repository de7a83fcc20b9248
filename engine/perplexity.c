/* engine/perplexity.c — llama-perplexity's method over the public engine API (see
 * perplexity.h). Reference (read, not copied): llama.cpp tools/perplexity/perplexity.cpp,
 * functions perplexity(), process_logits() and log_softmax(). */
#include "perplexity.h"

#include <math.h>
#include <string.h>

void
hz_perplexity_params_init (HzPerplexityParams *p)
{
  memset (p, 0, sizeof *p);
  p->n_ctx = 512;
  p->n_batch = 512;
  p->n_chunks = -1;
}

/* -log p(tok | logits): float maximum, double sum of expf, as llama.cpp's log_softmax. */
static double
nll_of (const float *logits, int32_t n_vocab, HzToken tok)
{
  float max = logits[0];
  for (int32_t i = 1; i < n_vocab; i++)
    max = MAX (max, logits[i]);
  double sum = 0.0;
  for (int32_t i = 0; i < n_vocab; i++)
    sum += expf (logits[i] - max);
  return -(logits[tok] - max - log (sum));
}

gboolean
hz_perplexity (HzModel *model, const char *text, gssize len, const HzPerplexityParams *params,
               HzPerplexityChunkFunc func, gpointer user_data, HzPerplexityResult *result,
               GCancellable *cancellable, GError **error)
{
  HzPerplexityParams def;
  if (!params)
    {
      hz_perplexity_params_init (&def);
      params = &def;
    }
  const guint n_ctx = params->n_ctx ? params->n_ctx : 512;
  const guint n_batch = MIN (params->n_batch ? params->n_batch : 512, n_ctx);
  const int32_t n_vocab = hz_model_n_vocab (model);
  gint64 t0 = g_get_monotonic_time ();

  if (n_ctx < 4)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "perplexity: n_ctx %u is too small (at least 4)", n_ctx);
      return FALSE;
    }
  gsize n_tok = 0;
  g_autofree HzToken *tokens = hz_model_tokenize (model, text, len, TRUE, FALSE, &n_tok);
  if (n_tok < 2 * (gsize) n_ctx)
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "the text has %" G_GSIZE_FORMAT " tokens (BOS included); at least "
                   "2 * n_ctx = %u are needed", n_tok, 2 * n_ctx);
      return FALSE;
    }
  guint n_chunk = (guint) (n_tok / n_ctx);
  if (params->n_chunks == 0)
    {
      /* no chunk, no score: the estimate would be 0/0 (NaN) */
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "perplexity: n_chunks must be < 0 (all) or >= 1, not 0");
      return FALSE;
    }
  if (params->n_chunks >= 0)
    n_chunk = MIN (n_chunk, (guint) params->n_chunks);

  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = n_ctx;
  cp.n_batch = n_batch;
  cp.n_threads = params->n_threads;
  g_autoptr (HzContext) ctx = hz_context_new (model, &cp, error);
  if (!ctx)
    return FALSE;

  const HzToken bos = hz_model_bos (model);
  const gboolean add_bos = bos >= 0 && tokens[0] == bos;
  const guint first = n_ctx / 2;
  double nll = 0.0, nll2 = 0.0;
  guint count = 0, done = 0;
  g_autofree HzToken *chunk = g_new (HzToken, n_ctx);

  for (guint c = 0; c < n_chunk; c++)
    {
      const gsize start = (gsize) c * n_ctx;
      memcpy (chunk, tokens + start, n_ctx * sizeof *chunk);
      if (add_bos)
        chunk[0] = bos;
      hz_context_truncate (ctx, 0);
      for (guint b = 0; b < n_ctx; b += n_batch)
        {
          const guint nb = MIN (n_batch, n_ctx - b);
          if (!hz_context_eval (ctx, chunk + b, nb, TRUE, cancellable, error))
            return FALSE;
          /* score positions j in [first, n_ctx - 1) that lie in this batch */
          for (guint j = MAX (b, first); j < b + nb && j + 1 < n_ctx; j++)
            {
              const float *lg = hz_context_logits (ctx, (gint) (j - b));
              /* the target is the original text token (position 0 never is one) */
              const double v = nll_of (lg, n_vocab, tokens[start + j + 1]);
              nll += v;
              nll2 += v * v;
              count++;
            }
        }
      done = c + 1;
      if (func && !func (c + 1, n_chunk, exp (nll / count), user_data))
        break;
    }

  const double mean = nll / count;
  double var = nll2 / count - mean * mean;
  const double ppl = exp (mean);
  if (result)
    {
      result->ppl = ppl;
      result->ppl_error = var > 0 && count > 1 ? sqrt (var / (count - 1)) * ppl : 0.0;
      result->mean_nll = mean;
      result->n_tokens = (guint) n_tok;
      result->n_chunks = done;
      result->n_scored = count;
      result->seconds = (g_get_monotonic_time () - t0) / 1e6;
    }
  return TRUE;
}
