/* engine/chat-render.c — a model's prompts in its own chat template (issue 23 item 2).
 *
 * The GGUF's tokenizer.chat_template (parsed once at load, engine.c) is rendered by the
 * Jinja2 interpreter (engine/jinja/) as transformers' apply_chat_template() would, with
 * the model's BOS and EOS texts; its pieces become the HzPrompt's (the template's markup,
 * the roles and the special-token texts stay markup; every byte of a message's content
 * stays content). The built-in renderers of chat-template.c stand in only for a GGUF that
 * has no template, and that is said once per model. */
#include "hanzo/engine-error.h"

#include <string.h>
#include "jinja.h"
#include "model.h"
#include "reasoning-private.h"
#include "tokenizer.h"

/* The roles an application may pass: a role is markup (some templates make it a token,
 * "<|" + role + "|>"), so it must come from this fixed set, never from what a user typed. */
static const char *const chat_roles[] = { "system", "user", "assistant", "tool", NULL };

static gboolean
known_role (const char *role)
{
  return g_strv_contains (chat_roles, role);
}

/* The special-token text of `id`, or NULL when there is none. */
static const char *
token_text (const HzTokenizer *tok, HzToken id)
{
  return id >= 0 ? hz_tokenizer_token_text (tok, id) : NULL;
}

/* The render variables: messages, add_generation_prompt, bos_token, eos_token. */
static JsonObject *
render_vars (const HzModel *m, const HzChatMessage *msgs, gsize n, gboolean add_generation_prompt)
{
  JsonObject *vars = json_object_new ();
  JsonArray *arr = json_array_sized_new ((guint) n);
  for (gsize i = 0; i < n; i++)
    {
      JsonObject *msg = json_object_new ();
      json_object_set_string_member (msg, "role", msgs[i].role ? msgs[i].role : "user");
      json_object_set_string_member (msg, "content", msgs[i].content ? msgs[i].content : "");
      json_array_add_object_element (arr, msg);
    }
  json_object_set_array_member (vars, "messages", arr);
  json_object_set_boolean_member (vars, "add_generation_prompt", add_generation_prompt);
  const HzTokenizer *tok = hz_model_get_tokenizer (m);
  const char *bos = token_text (tok, hz_tokenizer_bos (tok));
  const char *eos = token_text (tok, hz_tokenizer_eos (tok));
  if (bos)
    json_object_set_string_member (vars, "bos_token", bos);
  if (eos)
    json_object_set_string_member (vars, "eos_token", eos);
  return vars;
}

HzPrompt *
hz_model_render_chat (const HzModel *m, const HzChatMessage *msgs, gsize n,
                      gboolean add_generation_prompt, GError **error)
{
  g_return_val_if_fail (m != NULL && (msgs != NULL || n == 0), NULL);
  for (gsize i = 0; i < n; i++)
    if (msgs[i].role && !known_role (msgs[i].role))
      {
        g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                     "message %" G_GSIZE_FORMAT " has the role '%s': a chat role is one of "
                     "system, user, assistant, tool", i + 1, msgs[i].role);
        return NULL;
      }
  /* earlier replies go to the template without their reasoning, whatever it does */
  g_autoptr (GPtrArray) stripped = g_ptr_array_new_with_free_func (g_free);
  msgs = hz_reasoning_strip_messages (m, msgs, n, stripped);
  const GError *parse_error = NULL;
  const HzJinjaTemplate *t = hz_model_get_chat_jinja (m, &parse_error);
  if (parse_error)
    {
      g_set_error (error, parse_error->domain, parse_error->code,
                   "the chat template of %s does not parse: %s", hz_model_name (m),
                   parse_error->message);
      return NULL;
    }
  if (t == NULL)
    {
      const HzChatTemplate b = hz_model_chat_template (m);
      if (hz_model_first_builtin_render (m))
        g_message (b == HZ_CHAT_TEMPLATE_NONE
                     ? "%s has no chat template (tokenizer.chat_template): plain completion, "
                       "the messages' contents concatenated"
                     : "%s has no Jinja chat template (tokenizer.chat_template): using the "
                       "built-in '%s' format",
                   hz_model_name (m), hz_chat_template_name (b));
      return hz_chat_template_render (b, msgs, n, add_generation_prompt);
    }
  g_autoptr (JsonObject) vars = render_vars (m, msgs, n, add_generation_prompt);
  g_autoptr (GError) local = NULL;
  g_autoptr (GPtrArray) pieces = hz_jinja_template_render_pieces (t, vars, NULL, NULL, &local);
  if (pieces == NULL)
    {
      g_set_error (error, local->domain, local->code, "the chat template of %s: %s",
                   hz_model_name (m), local->message);
      return NULL;
    }
  HzPrompt *p = hz_prompt_new ();
  for (guint i = 0; i < pieces->len; i++)
    {
      const HzJinjaPiece *pc = pieces->pdata[i];
      hz_prompt_append (p, pc->text, (gssize) pc->len, pc->markup);
    }
  return p;
}

gboolean
hz_model_is_chat (const HzModel *m)
{
  const GError *parse_error = NULL;
  return hz_model_get_chat_jinja (m, &parse_error) != NULL || parse_error != NULL ||
         hz_model_chat_template (m) != HZ_CHAT_TEMPLATE_NONE;
}
