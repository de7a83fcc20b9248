/* engine/chat-render.c — a model's prompts in its own chat template (issue 23 item 2).
 *
 * The GGUF's tokenizer.chat_template (parsed once at load, model-context.c) is rendered by the
 * Jinja2 interpreter (engine/jinja/) as transformers' apply_chat_template() would, with
 * the model's BOS and EOS texts; its pieces become the HzPrompt's (the template's markup,
 * the roles and the special-token texts stay markup; every byte of a message's content
 * stays content). The built-in renderers of chat-template.c stand in only for a GGUF that
 * has no template, and that is said once per model. Tools (hz_model_render_chat_tools())
 * go to the template as transformers passes them: `tools`, and `tool_calls`,
 * `tool_call_id` and `name` on the messages. */
#include "hanzo/engine-error.h"

#include <string.h>
#include "jinja.h"
#include "model-private.h"
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

/* The JSON array of `json` (NULL: none), or NULL with `error` naming `what`. */
static JsonArray *
parse_array (const char *json, const char *what, GError **error)
{
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) local = NULL;
  if (!json_parser_load_from_data (parser, json, -1, &local) ||
      !JSON_NODE_HOLDS_ARRAY (json_parser_get_root (parser)))
    {
      g_set_error (error, HZ_ENGINE_ERROR, HZ_ENGINE_ERROR_INVALID_ARGUMENT,
                   "%s must be a JSON array%s%s", what, local ? ": " : "",
                   local ? local->message : "");
      return NULL;
    }
  return json_array_ref (json_node_get_array (json_parser_get_root (parser)));
}

/* Each call's function.arguments as a JSON object when it is the text of one: OpenAI sends
 * a string, the templates read an object (`arguments | tojson`, `arguments | items`). */
static void
arguments_as_objects (JsonArray *calls)
{
  for (guint i = 0; i < json_array_get_length (calls); i++)
    {
      JsonNode *c = json_array_get_element (calls, i);
      JsonObject *co = JSON_NODE_HOLDS_OBJECT (c) ? json_node_get_object (c) : NULL;
      JsonNode *f = co && json_object_has_member (co, "function")
                      ? json_object_get_member (co, "function") : NULL;
      JsonObject *fo = f && JSON_NODE_HOLDS_OBJECT (f) ? json_node_get_object (f) : NULL;
      JsonNode *a = fo && json_object_has_member (fo, "arguments")
                      ? json_object_get_member (fo, "arguments") : NULL;
      if (a == NULL || !JSON_NODE_HOLDS_VALUE (a) || json_node_get_value_type (a) != G_TYPE_STRING)
        continue;
      g_autoptr (JsonParser) parser = json_parser_new_immutable ();
      if (json_parser_load_from_data (parser, json_node_get_string (a), -1, NULL) &&
          JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        json_object_set_member (fo, "arguments", json_node_copy (json_parser_get_root (parser)));
    }
}

/* The render variables: messages, tools, add_generation_prompt, bos_token, eos_token. NULL
 * with `error` when tools or a message's tool_calls are not JSON arrays. */
static JsonObject *
render_vars (const HzModel *m, const HzChatMessage *msgs, gsize n, const char *tools,
             gboolean add_generation_prompt, GError **error)
{
  g_autoptr (JsonObject) vars = json_object_new ();
  JsonArray *arr = json_array_sized_new ((guint) n);
  json_object_set_array_member (vars, "messages", arr);
  for (gsize i = 0; i < n; i++)
    {
      JsonObject *msg = json_object_new ();
      json_array_add_object_element (arr, msg);
      json_object_set_string_member (msg, "role", msgs[i].role ? msgs[i].role : "user");
      json_object_set_string_member (msg, "content", msgs[i].content ? msgs[i].content : "");
      if (msgs[i].tool_calls)
        {
          g_autofree char *what = g_strdup_printf ("the tool_calls of message %" G_GSIZE_FORMAT,
                                                   i + 1);
          JsonArray *calls = parse_array (msgs[i].tool_calls, what, error);
          if (calls == NULL)
            return NULL;
          arguments_as_objects (calls);
          json_object_set_array_member (msg, "tool_calls", calls);
        }
      if (msgs[i].tool_call_id)
        json_object_set_string_member (msg, "tool_call_id", msgs[i].tool_call_id);
      if (msgs[i].name)
        json_object_set_string_member (msg, "name", msgs[i].name);
    }
  if (tools)
    {
      JsonArray *t = parse_array (tools, "the tools", error);
      if (t == NULL)
        return NULL;
      json_object_set_array_member (vars, "tools", t);
    }
  json_object_set_boolean_member (vars, "add_generation_prompt", add_generation_prompt);
  const HzTokenizer *tok = hz_model_get_tokenizer (m);
  const char *bos = token_text (tok, hz_tokenizer_bos (tok));
  const char *eos = token_text (tok, hz_tokenizer_eos (tok));
  if (bos)
    json_object_set_string_member (vars, "bos_token", bos);
  if (eos)
    json_object_set_string_member (vars, "eos_token", eos);
  return g_steal_pointer (&vars);
}

HzPrompt *
hz_model_render_chat (const HzModel *m, const HzChatMessage *msgs, gsize n,
                      gboolean add_generation_prompt, GError **error)
{
  return hz_model_render_chat_tools (m, msgs, n, NULL, add_generation_prompt, error);
}

HzPrompt *
hz_model_render_chat_tools (const HzModel *m, const HzChatMessage *msgs, gsize n,
                            const char *tools_json, gboolean add_generation_prompt,
                            GError **error)
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
  g_autoptr (JsonObject) vars = render_vars (m, msgs, n, tools_json, add_generation_prompt,
                                             error);
  if (vars == NULL)
    return NULL;
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
