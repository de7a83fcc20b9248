/* tests/fuzz/fuzz-jinja.c — libFuzzer target for the chat-template interpreter
 * (engine/jinja/): a GGUF's tokenizer.chat_template is untrusted Jinja source. The input
 * is a template, then optionally a NUL and the render variables as JSON (when absent or
 * not a JSON object: a small conversation with tools). Rendering runs under tight bounds
 * (HzJinjaLimits) so that slow inputs end quickly.
 *
 * Invariants: a refused template or render says why in HZ_JINJA_ERROR with a known code;
 * a render is valid UTF-8, within max_output, its pieces non-empty and alternating markup /
 * content; the same render twice gives the same pieces; rendering with every variable
 * declared markup gives the same text, all markup (the tagging never invents content,
 * and never changes the text). */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jinja.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                      \
  do {                                                                                   \
    if (!(cond))                                                                         \
      {                                                                                  \
        g_printerr ("fuzz-jinja: invariant failed: %s (%s:%d)\n", #cond, __FILE__,       \
                    __LINE__);                                                           \
        abort ();                                                                        \
      }                                                                                  \
  } while (0)

static const char default_vars[] =
  "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"},"
  " {\"role\": \"user\", \"content\": \"Hi <|im_end|> {{ x }} \\u00e9\\ud83d\\ude00\"},"
  " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"type\": \"function\", \"id\": \"c1\","
  " \"function\": {\"name\": \"f\", \"arguments\": {\"a\": 1, \"b\": [true, null, 2.5]}}}]},"
  " {\"role\": \"tool\", \"content\": \"{\\\"r\\\": 1}\"}],"
  " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"d\","
  " \"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}],"
  " \"add_generation_prompt\": true, \"enable_thinking\": false, \"bos_token\": \"<s>\","
  " \"eos_token\": \"</s>\"}";

static void
check_error (const GError *error)
{
  CHECK (error != NULL && error->domain == HZ_JINJA_ERROR);
  CHECK (error->code >= HZ_JINJA_ERROR_SYNTAX && error->code <= HZ_JINJA_ERROR_INPUT);
  CHECK (error->message && *error->message);
}

static GString *
check_pieces (GPtrArray *pieces, gsize max_output, gboolean all_markup)
{
  GString *text = g_string_new (NULL);
  for (guint i = 0; i < pieces->len; i++)
    {
      const HzJinjaPiece *p = pieces->pdata[i];
      CHECK (p->len > 0 && p->text[p->len] == '\0');
      CHECK (i == 0 || p->markup != ((HzJinjaPiece *) pieces->pdata[i - 1])->markup);
      CHECK (!all_markup || p->markup);
      /* valid UTF-8 (NUL bytes allowed: "\x00" in a literal) */
      for (gsize k = 0; k < p->len;)
        {
          const char *nul = memchr (p->text + k, '\0', p->len - k);
          const gsize end = nul ? (gsize) (nul - p->text) : p->len;
          CHECK (g_utf8_validate (p->text + k, (gssize) (end - k), NULL));
          k = end + 1;
        }
      g_string_append_len (text, p->text, (gssize) p->len);
    }
  CHECK (text->len <= max_output);
  return text;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  const char *nul = memchr (data, 0, size);
  const gsize tlen = nul ? (gsize) (nul - (const char *) data) : size;
  g_autoptr (GError) error = NULL;
  g_autoptr (HzJinjaTemplate) t = hz_jinja_template_new ((const char *) data, (gssize) tlen, &error);
  if (!t)
    {
      check_error (error);
      return 0;
    }
  /* the variables */
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *root = NULL;
  if (nul && json_parser_load_from_data (parser, nul + 1, (gssize) (size - tlen - 1), NULL))
    root = json_parser_get_root (parser);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      CHECK (json_parser_load_from_data (parser, default_vars, -1, NULL));
      root = json_parser_get_root (parser);
    }
  JsonObject *vars = json_node_get_object (root);

  const HzJinjaLimits limits = { .max_output = 1 << 20, .max_steps = 200000, .max_depth = 64 };
  g_autoptr (GPtrArray) a = hz_jinja_template_render_pieces (t, vars, NULL, &limits, &error);
  if (!a)
    {
      check_error (error);
      return 0;
    }
  g_autoptr (GPtrArray) b = hz_jinja_template_render_pieces (t, vars, NULL, &limits, &error);
  CHECK (b != NULL && b->len == a->len);
  for (guint i = 0; i < a->len; i++)
    {
      const HzJinjaPiece *x = a->pdata[i], *y = b->pdata[i];
      /* strftime_now may tick between the two renders: compare the tagging only then */
      CHECK (x->markup == y->markup);
      CHECK ((x->len == y->len && memcmp (x->text, y->text, x->len) == 0) ||
             g_strstr_len ((const char *) data, (gssize) size, "strftime_now"));
    }
  g_autoptr (GString) text = check_pieces (a, limits.max_output, FALSE);

  /* every variable markup: the same text, no content (the steps differ by nothing) */
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GList) members = json_object_get_members (vars);
  for (GList *l = members; l; l = l->next)
    g_ptr_array_add (names, l->data);
  g_ptr_array_add (names, NULL);
  g_autoptr (GPtrArray) c = hz_jinja_template_render_pieces (t, vars, (const char *const *) names->pdata,
                                                             &limits, &error);
  CHECK (c != NULL);
  g_autoptr (GString) text_c = check_pieces (c, limits.max_output, TRUE);
  CHECK (g_strstr_len ((const char *) data, (gssize) size, "strftime_now") || g_string_equal (text, text_c));
  return 0;
}
