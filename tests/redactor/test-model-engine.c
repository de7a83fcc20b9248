/* tests/redactor/test-model-engine.c — the model-based pass on the real engine
 * (hanzo/redact-engine.h) with the tiny shared models: they answer with junk, so the test
 * proves that whatever the model says, the redactor keeps only spans that are in the text,
 * keeps the rule-based identifiers and never crashes. Skips without ../shared/models. */
#include <string.h>

#include "hanzo/redact-engine.h"
#include "hz-test-util.h"

/* Every span is in bounds, on character boundaries, sorted and disjoint, and a span of the
 * model is text that occurs in the input. */
static void
assert_spans_valid (const HzRedaction *res)
{
  gsize prev_end = 0;
  for (guint i = 0; i < res->n_spans; i++)
    {
      const HzSpan *s = &res->spans[i];
      g_assert_cmpuint (s->start_byte, <, s->end_byte);
      g_assert_cmpuint (s->end_byte, <=, res->len);
      g_assert_cmpuint (s->start_byte, >=, prev_end);
      g_assert_true (g_utf8_validate (res->text + s->start_byte, (gssize) (s->end_byte - s->start_byte), NULL));
      g_assert_cmpuint (s->start_cp, ==, (gsize) g_utf8_strlen (res->text, (gssize) s->start_byte));
      prev_end = s->end_byte;
    }
}

static void
run_model (const char *rel)
{
  g_autofree char *path = hz_test_shared_path (rel);
  if (!path)
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzModel) model = hz_model_load (path, NULL, &error);
  g_assert_no_error (error);
  HzRedactor *r = hz_redactor_new (&error);
  g_assert_no_error (error);
  g_assert_true (hz_redactor_set_engine_model (r, model, 0, 32, &error));
  g_assert_no_error (error);

  /* the engine answers (junk from a story model, but an answer) */
  {
    HzContextParams cp;
    hz_context_params_init (&cp);
    g_autoptr (HzContext) ctx = hz_context_new (model, &cp, &error);
    g_assert_no_error (error);
    g_autofree char *prompt = hz_redactor_model_prompt ("Mail Ann at ann@example.org.");
    g_autofree char *answer = hz_redact_engine_ask (ctx, prompt, 24, &error);
    if (!answer)
      {
        /* a context too small for the prompt is reported as such */
        g_assert_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_CONTEXT_FULL);
        g_clear_error (&error);
      }
    else
      g_test_message ("%s answers: %s", rel, answer);
  }

  const char *texts[] = {
    "Mail Ann at ann@example.org or call +1 415 555 0100.",
    "Once upon a time Lily met Tom in the park.",
    "",
    "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80 Zo\xc3\xab wrote from 10.0.0.1",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      HzRedaction *plain = hz_redactor_analyze (r, texts[i], -1, 0, &error);
      g_assert_no_error (error);
      HzRedaction *res = hz_redactor_analyze (r, texts[i], -1, HZ_REDACT_MODEL, &error);
      g_assert_no_error (error);
      assert_spans_valid (res);
      /* validated and pattern identifiers of the rules are kept whatever the model says */
      for (guint k = 0; k < plain->n_spans; k++)
        {
          const HzSpan *p = &plain->spans[k];
          if (p->type != HZ_ENTITY_EMAIL && p->type != HZ_ENTITY_PHONE && p->type != HZ_ENTITY_IP_ADDRESS)
            continue;
          gboolean kept = FALSE;
          for (guint j = 0; j < res->n_spans && !kept; j++)
            kept = res->spans[j].start_byte == p->start_byte && res->spans[j].end_byte == p->end_byte
                   && res->spans[j].type == p->type;
          g_assert_true (kept);
        }
      hz_redaction_free (plain);
      hz_redaction_free (res);
    }
  hz_redactor_free (r);
}

static void
test_stories260k (void)
{
  run_model ("models/stories260K.gguf");
}

static void
test_stories_distill (void)
{
  run_model ("models/stories-distill/stories-distill-Q4_0.gguf");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/redact/model-engine/stories260k", test_stories260k);
  g_test_add_func ("/redact/model-engine/stories-distill", test_stories_distill);
  return g_test_run ();
}
