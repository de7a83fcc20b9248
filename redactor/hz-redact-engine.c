/* hz-redact-engine.c — the redactor's model-based pass on the local engine (see
 * hanzo/redact-engine.h): chat template, tokenizer and greedy generation of libhzengine. */
#include "hanzo/redact-engine.h"

typedef struct {
  GMutex lock;       /* one generation at a time on the shared context */
  HzContext *ctx;
  gint n_predict;
} EngineModel;

static void
engine_model_free (gpointer p)
{
  EngineModel *em = p;
  g_mutex_clear (&em->lock);
  hz_context_free (em->ctx);
  g_free (em);
}

char *
hz_redact_engine_ask (HzContext *ctx, const char *prompt, gint n_predict, GError **error)
{
  g_return_val_if_fail (ctx != NULL && prompt != NULL, NULL);
  HzModel *model = hz_context_model (ctx);
  HzChatMessage msg = { "user", prompt };
  /* the prompt holds the text being redacted: content, never control tokens (issue 20) */
  g_autoptr (HzPrompt) rendered = hz_model_render_chat (model, &msg, 1, TRUE, error);
  if (rendered == NULL)
    return NULL;
  gsize n = 0;
  g_autofree HzToken *ids = hz_model_tokenize_prompt (model, rendered, TRUE, &n);
  HzGenerateParams gp;
  hz_generate_params_init (&gp); /* greedy sampler */
  gp.n_predict = n_predict > 0 ? n_predict : 256;
  static const char *const stops[] = { "\n\n\n", NULL };
  gp.stop_strings = stops;
  /* the answer must fit after the prompt; otherwise the rule-based result stands */
  if (n + (gsize) gp.n_predict > hz_context_n_ctx (ctx))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL,
                   "redactor prompt of %" G_GSIZE_FORMAT " tokens plus %d answer tokens does not fit "
                   "the context of %u tokens", n, gp.n_predict, hz_context_n_ctx (ctx));
      return NULL;
    }
  return hz_context_generate (ctx, ids, n, &gp, NULL, NULL, NULL, NULL, NULL, error);
}

static char *
engine_model_func (const char *prompt, gpointer user_data, GError **error)
{
  EngineModel *em = user_data;
  g_mutex_lock (&em->lock);
  char *answer = hz_redact_engine_ask (em->ctx, prompt, em->n_predict, error);
  g_mutex_unlock (&em->lock);
  return answer;
}

gboolean
hz_redactor_set_engine_model (HzRedactor *self, HzModel *model, guint n_ctx, gint n_predict,
                              GError **error)
{
  g_return_val_if_fail (self != NULL && model != NULL, FALSE);
  HzContextParams cp;
  hz_context_params_init (&cp);
  cp.n_ctx = n_ctx;
  HzContext *ctx = hz_context_new (model, &cp, error);
  if (!ctx)
    return FALSE;
  EngineModel *em = g_new0 (EngineModel, 1);
  g_mutex_init (&em->lock);
  em->ctx = ctx;
  em->n_predict = n_predict > 0 ? n_predict : 256;
  hz_redactor_set_model (self, engine_model_func, em, engine_model_free);
  return TRUE;
}
