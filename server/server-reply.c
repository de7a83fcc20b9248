/* server/server-reply.c — JSON bodies of the API (server-reply.h). */
#include "server-reply.h"

#include <string.h>
#include "hanzo/json-out.h"
#include "server-tools.h"

static char *
finish (JsonBuilder *b)
{
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  return hz_json_node_to_string (root, FALSE);
}

static void
set_str (JsonBuilder *b, const char *name, const char *value)
{
  json_builder_set_member_name (b, name);
  if (value)
    json_builder_add_string_value (b, value);
  else
    json_builder_add_null_value (b);
}

static void
set_int (JsonBuilder *b, const char *name, gint64 value)
{
  json_builder_set_member_name (b, name);
  json_builder_add_int_value (b, value);
}

static void
set_null (JsonBuilder *b, const char *name)
{
  json_builder_set_member_name (b, name);
  json_builder_add_null_value (b);
}

char *
hz_reply_error (const char *message, const char *type, const char *code, const char *param)
{
  /* messages may quote what a client sent: only UTF-8 goes into the reply */
  g_autofree char *valid_message = g_utf8_make_valid (message, -1);
  g_autofree char *valid_param = param ? g_utf8_make_valid (param, -1) : NULL;
  message = valid_message;
  param = valid_param;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "error");
  json_builder_begin_object (b);
  set_str (b, "message", message);
  set_str (b, "type", type);
  set_str (b, "param", param);
  set_str (b, "code", code);
  json_builder_end_object (b);
  json_builder_end_object (b);
  return finish (b);
}

void
hz_reply_send_error (SoupServerMessage *msg, guint status, const char *code, const char *param,
                     const char *message)
{
  const char *type = status >= 500   ? "server_error"
                     : status == 401 ? "authentication_error"
                     : status == 429 ? "rate_limit_error"
                                     : "invalid_request_error";
  char *body = hz_reply_error (message, type, code, param);
  soup_server_message_set_status (msg, status, NULL);
  soup_server_message_set_response (msg, "application/json", SOUP_MEMORY_TAKE, body,
                                    strlen (body));
}

/* ------------------------------------------------------------------ logprobs */

/* A token's text (valid UTF-8: a byte token's lone byte becomes U+FFFD) and its bytes. */
static char *
token_text (HzModel *m, HzToken t, char **raw, gsize *n_raw)
{
  *raw = hz_model_detokenize (m, &t, 1, FALSE);
  *n_raw = strlen (*raw);
  return g_utf8_make_valid (*raw, (gssize) *n_raw);
}

/* {"token", "logprob", "bytes"} and, for the chosen token, "top_logprobs". */
static void
add_chat_token (JsonBuilder *b, HzModel *m, const HzTokenLogprob *t, const HzReplyLogprob *tops)
{
  g_autofree char *raw = NULL;
  gsize n_raw = 0;
  g_autofree char *text = token_text (m, t->token, &raw, &n_raw);
  json_builder_begin_object (b);
  set_str (b, "token", text);
  json_builder_set_member_name (b, "logprob");
  json_builder_add_double_value (b, t->logprob);
  json_builder_set_member_name (b, "bytes");
  json_builder_begin_array (b);
  for (gsize i = 0; i < n_raw; i++)
    json_builder_add_int_value (b, (guchar) raw[i]);
  json_builder_end_array (b);
  if (tops)
    {
      json_builder_set_member_name (b, "top_logprobs");
      json_builder_begin_array (b);
      for (guint k = 0; k < tops->n_top; k++)
        add_chat_token (b, m, &tops->top[k], NULL);
      json_builder_end_array (b);
    }
  json_builder_end_object (b);
}

/* Chat: {"content": [...], "refusal": null}. Completion (legacy): {"tokens",
 * "token_logprobs", "top_logprobs", "text_offset"}. */
static void
add_logprobs (JsonBuilder *b, const HzReplyInfo *info, const HzReplyLogprob *lp, guint n,
              gsize text_offset)
{
  json_builder_set_member_name (b, "logprobs");
  if (lp == NULL)
    {
      json_builder_add_null_value (b);
      return;
    }
  json_builder_begin_object (b);
  if (info->kind == HZ_API_CHAT)
    {
      json_builder_set_member_name (b, "content");
      json_builder_begin_array (b);
      for (guint i = 0; i < n; i++)
        add_chat_token (b, info->tokens, &lp[i].chosen, &lp[i]);
      json_builder_end_array (b);
      set_null (b, "refusal");
      json_builder_end_object (b);
      return;
    }
  g_autoptr (GPtrArray) texts = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GArray) offsets = g_array_new (FALSE, FALSE, sizeof (gsize));
  for (guint i = 0; i < n; i++)
    {
      g_autofree char *raw = NULL;
      gsize n_raw = 0;
      g_ptr_array_add (texts, token_text (info->tokens, lp[i].chosen.token, &raw, &n_raw));
      g_array_append_val (offsets, text_offset);
      text_offset += n_raw;
    }
  json_builder_set_member_name (b, "tokens");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_string_value (b, texts->pdata[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "token_logprobs");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_double_value (b, lp[i].chosen.logprob);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "top_logprobs");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      json_builder_begin_object (b);
      for (guint k = 0; k < lp[i].n_top; k++)
        {
          g_autofree char *raw = NULL;
          gsize n_raw = 0;
          g_autofree char *t = token_text (info->tokens, lp[i].top[k].token, &raw, &n_raw);
          json_builder_set_member_name (b, t);
          json_builder_add_double_value (b, lp[i].top[k].logprob);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "text_offset");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    json_builder_add_int_value (b, (gint64) g_array_index (offsets, gsize, i));
  json_builder_end_array (b);
  json_builder_end_object (b);
}

/* ------------------------------------------------------------------ objects */

static void
begin_object (JsonBuilder *b, const HzReplyInfo *info, gboolean chunk)
{
  json_builder_begin_object (b);
  set_str (b, "id", info->id);
  set_str (b, "object", info->kind == HZ_API_COMPLETION ? "text_completion"
                        : chunk ? "chat.completion.chunk" : "chat.completion");
  set_int (b, "created", info->created);
  set_str (b, "model", info->model);
  set_str (b, "system_fingerprint", "hanzo");
}

/* The object's shared members, then "choices": [{"index": 0, ... (left open). */
static void
begin_choice (JsonBuilder *b, const HzReplyInfo *info, gboolean chunk)
{
  begin_object (b, info, chunk);
  json_builder_set_member_name (b, "choices");
  json_builder_begin_array (b);
  json_builder_begin_object (b);
  set_int (b, "index", 0);
}

static void
add_usage (JsonBuilder *b, const HzReplyUsage *u)
{
  json_builder_set_member_name (b, "usage");
  json_builder_begin_object (b);
  set_int (b, "prompt_tokens", u->prompt);
  set_int (b, "completion_tokens", u->completion);
  set_int (b, "total_tokens", (gint64) u->prompt + u->completion);
  json_builder_set_member_name (b, "prompt_tokens_details");
  json_builder_begin_object (b);
  set_int (b, "cached_tokens", u->cached);
  json_builder_end_object (b);
  json_builder_end_object (b);
}

char *
hz_reply_completion (const HzReplyInfo *info, const char *text, const GPtrArray *calls,
                     const char *finish_reason, const HzReplyLogprob *lp, guint n_lp,
                     const HzReplyUsage *usage)
{
  const gboolean with_calls = calls && calls->len > 0;
  g_autoptr (JsonBuilder) b = json_builder_new ();
  begin_choice (b, info, FALSE);
  if (info->kind == HZ_API_CHAT)
    {
      json_builder_set_member_name (b, "message");
      json_builder_begin_object (b);
      set_str (b, "role", "assistant");
      set_str (b, "content", with_calls && *text == '\0' ? NULL : text);
      set_null (b, "refusal");
      if (with_calls)
        hz_api_tool_calls_add_json (b, calls, FALSE);
      json_builder_end_object (b);
    }
  else
    set_str (b, "text", text);
  add_logprobs (b, info, lp, n_lp, 0);
  set_str (b, "finish_reason", finish_reason);
  json_builder_end_object (b);
  json_builder_end_array (b);
  add_usage (b, usage);
  json_builder_end_object (b);
  return finish (b);
}

char *
hz_reply_chunk (const HzReplyInfo *info, gboolean role, const char *text,
                const char *finish_reason, const HzReplyLogprob *lp, guint n_lp,
                gsize text_offset, const HzReplyUsage *usage, gboolean with_usage_null)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  begin_object (b, info, TRUE);
  json_builder_set_member_name (b, "choices");
  json_builder_begin_array (b);
  if (usage == NULL)
    {
      json_builder_begin_object (b);
      set_int (b, "index", 0);
      if (info->kind == HZ_API_CHAT)
        {
          json_builder_set_member_name (b, "delta");
          json_builder_begin_object (b);
          if (role)
            set_str (b, "role", "assistant");
          if (role || text)
            set_str (b, "content", text ? text : "");
          json_builder_end_object (b);
        }
      else
        set_str (b, "text", text ? text : "");
      add_logprobs (b, info, lp, n_lp, text_offset);
      set_str (b, "finish_reason", finish_reason);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  if (usage)
    add_usage (b, usage);
  else if (with_usage_null)
    set_null (b, "usage");
  json_builder_end_object (b);
  return finish (b);
}

/* A chunk whose delta holds "tool_calls": whole calls, or pieces of forced ones. */
static char *
chunk_tool_calls (const HzReplyInfo *info, const GPtrArray *calls, const GPtrArray *deltas,
                  gboolean with_usage_null)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  begin_choice (b, info, TRUE);
  json_builder_set_member_name (b, "delta");
  json_builder_begin_object (b);
  if (calls)
    hz_api_tool_calls_add_json (b, calls, TRUE);
  else
    hz_api_tool_deltas_add_json (b, deltas);
  json_builder_end_object (b);
  set_null (b, "logprobs");
  set_null (b, "finish_reason");
  json_builder_end_object (b);
  json_builder_end_array (b);
  if (with_usage_null)
    set_null (b, "usage");
  json_builder_end_object (b);
  return finish (b);
}

char *
hz_reply_chunk_calls (const HzReplyInfo *info, const GPtrArray *calls, gboolean with_usage_null)
{
  return chunk_tool_calls (info, calls, NULL, with_usage_null);
}

char *
hz_reply_chunk_call_pieces (const HzReplyInfo *info, const GPtrArray *deltas,
                            gboolean with_usage_null)
{
  return chunk_tool_calls (info, NULL, deltas, with_usage_null);
}

static void
add_model (JsonBuilder *b, const char *id, gint64 created)
{
  json_builder_begin_object (b);
  set_str (b, "id", id);
  set_str (b, "object", "model");
  set_int (b, "created", created);
  set_str (b, "owned_by", "hanzo");
  json_builder_end_object (b);
}

char *
hz_reply_models (const char *const *ids, const gint64 *created)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  set_str (b, "object", "list");
  json_builder_set_member_name (b, "data");
  json_builder_begin_array (b);
  for (guint i = 0; ids[i]; i++)
    add_model (b, ids[i], created[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  return finish (b);
}

char *
hz_reply_model (const char *id, gint64 created)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  add_model (b, id, created);
  return finish (b);
}
