/* mcp-chat.c — the `chat` tool: the local model answers a conversation (mcp-tools.h).
 *
 * The prompt is the model's own chat template's (hz_model_fit_chat(): rendered by
 * hz_model_render_chat() and tokenized by hz_model_tokenize_prompt(), as `hanzo chat` and
 * server/ do): what the client sends is content, never control tokens. A conversation
 * longer than the context keeps its system messages and newest turns (dropped_messages).
 * A thinking model's reasoning is returned apart from the answer. */
#include "mcp-tools.h"

static const char input_schema[] =
  "{\"type\": \"object\", \"additionalProperties\": false, \"properties\": {"
  "\"prompt\": {\"type\": \"string\", \"description\": \"The question, as one user message "
  "(give prompt or messages, not both)\"},"
  "\"messages\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 256, "
  "\"description\": \"The conversation so far, oldest first; the model answers the last "
  "message\", \"items\": {\"type\": \"object\", \"additionalProperties\": false, "
  "\"required\": [\"role\", \"content\"], \"properties\": {"
  "\"role\": {\"type\": \"string\", \"enum\": [\"system\", \"user\", \"assistant\"]},"
  "\"content\": {\"type\": \"string\"}}}},"
  "\"system\": {\"type\": \"string\", \"description\": \"A system message put first\"},"
  "\"max_tokens\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 4096, \"default\": 256, "
  "\"description\": \"Most tokens of the reply\"},"
  "\"temperature\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 2, \"default\": 0.5, "
  "\"description\": \"Sampling temperature; 0 always takes the most likely token\"},"
  "\"seed\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 9007199254740991, "
  "\"description\": \"Seed of the sampler (same seed and arguments, same reply); default "
  "random\"}}}";

static const char output_schema[] =
  "{\"type\": \"object\", \"required\": [\"text\", \"finish_reason\", \"model\", "
  "\"prompt_tokens\", \"completion_tokens\", \"dropped_messages\"], \"properties\": {"
  "\"text\": {\"type\": \"string\", \"description\": \"The model's answer\"},"
  "\"reasoning\": {\"type\": \"string\", \"description\": \"A thinking model's reasoning "
  "before the answer\"},"
  "\"finish_reason\": {\"type\": \"string\", \"enum\": [\"stop\", \"length\"]},"
  "\"model\": {\"type\": \"string\"},"
  "\"prompt_tokens\": {\"type\": \"integer\"},"
  "\"completion_tokens\": {\"type\": \"integer\"},"
  "\"dropped_messages\": {\"type\": \"integer\", \"description\": \"Oldest messages left out "
  "to fit the model's context\"}}}";

/* Progress every PROGRESS_EVERY tokens, from the first. */
#define PROGRESS_EVERY 16

typedef struct {
  HzMcpEnv *env;
  guint     n, total;
} Progress;

static gboolean
on_token (HzToken token, const char *text, gpointer user_data)
{
  Progress *p = user_data;
  if (p->n++ % PROGRESS_EVERY == 0)
    p->env->progress (p->n, p->total, p->env->progress_data);
  return TRUE;
}

static JsonNode *
chat (HzMcpEnv *env, JsonObject *args, GError **error)
{
  const char *prompt = hz_mcp_arg_string (args, "prompt", NULL);
  JsonArray *list = json_object_has_member (args, "messages")
                      ? json_object_get_array_member (args, "messages") : NULL;
  if ((prompt == NULL) == (list == NULL))
    {
      g_set_error_literal (error, HZ_MCP_ERROR, HZ_MCP_ERROR_INVALID_ARGS,
                           "arguments: give either \"prompt\" or \"messages\"");
      return NULL;
    }
  HzContext *ctx = hz_mcp_env_context (env, error);
  if (!ctx)
    return NULL;
  HzModel *model = hz_context_model (ctx);

  g_autoptr (GArray) msgs = g_array_new (FALSE, FALSE, sizeof (HzChatMessage));
  const char *system = hz_mcp_arg_string (args, "system", NULL);
  if (system)
    g_array_append_val (msgs, ((HzChatMessage) { "system", system }));
  if (prompt)
    g_array_append_val (msgs, ((HzChatMessage) { "user", prompt }));
  for (guint i = 0; list && i < json_array_get_length (list); i++)
    {
      JsonObject *m = json_array_get_object_element (list, i);
      g_array_append_val (msgs, ((HzChatMessage) { json_object_get_string_member (m, "role"),
                                                   json_object_get_string_member (m, "content") }));
    }
  const gint64 max_tokens = hz_mcp_arg_int (args, "max_tokens", 256);
  HzChatFit fit = { 0 };
  gsize n = 0;
  g_autofree HzToken *tokens = hz_model_fit_chat (model, (const HzChatMessage *) (void *) msgs->data,
                                                  msgs->len, hz_context_n_ctx (ctx),
                                                  (guint) max_tokens, &fit, error);
  if (!tokens)
    return NULL;
  n = fit.n_tokens;

  HzGenerateParams gp;
  hz_generate_params_init (&gp);
  gp.sampler.temperature = (float) hz_mcp_arg_double (args, "temperature", 0.5);
  gp.sampler.seed = json_object_has_member (args, "seed")
                      ? (guint64) hz_mcp_arg_int (args, "seed", 0)
                      : ((guint64) g_random_int () << 32) | g_random_int ();
  gp.n_predict = (int32_t) max_tokens;
  gp.special = hz_model_reasoning_special (model);
  /* the context keeps the last call's tokens: a prompt that starts the same is computed
   * only from where it differs, with the logits and seeded tokens of a fresh context
   * (hz_context_generate()), so the same seed and arguments give the same reply */
  HzGenerateStats stats = { 0 };
  Progress progress = { env, 0, (guint) max_tokens };
  g_autofree char *text = hz_context_generate (ctx, tokens, n, &gp,
                                               env->progress ? on_token : NULL, &progress,
                                               env->cancellable, NULL, &stats, error);
  if (!text)
    return NULL;
  if (stats.stop_reason == HZ_STOP_CANCELLED)   /* the client's notifications/cancelled */
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the call was cancelled");
      return NULL;
    }
  g_autofree char *reasoning = NULL, *answer = NULL;
  hz_reasoning_split (hz_model_reasoning_format (model), hz_model_reasoning_opened (model, tokens, n),
                      text, -1, &reasoning, &answer);

  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "text");
  g_autofree char *answer_ok = g_utf8_make_valid (answer, -1);   /* a reply cut in a character */
  json_builder_add_string_value (b, answer_ok);
  if (reasoning && *reasoning)
    {
      json_builder_set_member_name (b, "reasoning");
      g_autofree char *reasoning_ok = g_utf8_make_valid (reasoning, -1);
      json_builder_add_string_value (b, reasoning_ok);
    }
  json_builder_set_member_name (b, "finish_reason");
  json_builder_add_string_value (b, stats.stop_reason == HZ_STOP_LENGTH ||
                                      stats.stop_reason == HZ_STOP_CONTEXT_FULL ? "length" : "stop");
  json_builder_set_member_name (b, "model");
  g_autofree char *name = g_utf8_make_valid (hz_model_name (model), -1);   /* the file's bytes */
  json_builder_add_string_value (b, name);
  json_builder_set_member_name (b, "prompt_tokens");
  json_builder_add_int_value (b, stats.n_prompt);
  json_builder_set_member_name (b, "completion_tokens");
  json_builder_add_int_value (b, stats.n_generated);
  json_builder_set_member_name (b, "dropped_messages");
  json_builder_add_int_value (b, (gint64) fit.n_dropped);
  json_builder_end_object (b);
  return json_builder_get_root (b);
}

const HzMcpTool hz_mcp_tool_chat = {
  .name = "chat",
  .title = "Ask the local model",
  .description = "Ask the private language model running on this computer (Hanzo Desktop's "
                 "engine). Nothing leaves the machine. Give a prompt, or a conversation as "
                 "messages; returns the model's answer.",
  .input_schema = input_schema,
  .output_schema = output_schema,
  .idempotent = FALSE,
  .call = chat,
};
