/* tests/fuzz/fuzz-server-request.c — libFuzzer target for what a client of `hanzo serve`
 * sends as a request body (server/server-request.c): the first byte picks the endpoint
 * (even: /v1/chat/completions, odd: /v1/completions), the rest is the body, any bytes.
 *
 * Invariants: a body is either refused with an HZ_API_ERROR and a message, or accepted with
 * every member in its documented range (model named; chat: messages with known roles and
 * valid UTF-8 content; completion: a prompt; temperature 0..2, top_p in (0, 1], min_p 0..1,
 * penalties -2..2, at most 16 non-empty stop strings, at most 20 alternatives per token);
 * hz_api_request_check_served() either passes it or names the member; the tools check
 * (server-tools.h) either refuses with a member named or gives tools that are a JSON array
 * (only the named function for a named tool_choice), and a forced tool_choice a
 * constraint (hz_api_tools_forced(): none for "auto"/"none"); and the replies
 * built from it (the error body with the parser's message and member, a completion and a
 * streamed chunk whose text is the request's own text) are JSON that json-glib reads back
 * to the same strings. Any violation aborts; GLib criticals abort too (tools/fuzz.sh). */
#define FUZZ_NAME "fuzz-server-request"
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#include "server-reply.h"
#include "server-request.h"
#include "server-tools.h"

#include "fuzz-check.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Parse `json` (must succeed) and return its root object's member path a.b (strings). */
static JsonNode *
reparse (const char *json)
{
  g_autoptr (JsonParser) p = json_parser_new ();
  CHECK (json_parser_load_from_data (p, json, -1, NULL));
  CHECK (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (p)));
  return json_parser_steal_root (p);
}

static void
check_error_body (const GError *error, const char *param)
{
  g_autofree char *body = hz_reply_error (error->message, "invalid_request_error",
                                          "invalid_value", param);
  g_autoptr (JsonNode) root = reparse (body);
  JsonObject *e = json_object_get_object_member (json_node_get_object (root), "error");
  CHECK (e != NULL);
  CHECK (g_strcmp0 (json_object_get_string_member (e, "message"), error->message) == 0);
  if (param)
    CHECK (g_strcmp0 (json_object_get_string_member (e, "param"), param) == 0);
}

static void
check_request (const HzApiRequest *r)
{
  CHECK (r->model && *r->model && g_utf8_validate (r->model, -1, NULL));
  static const char *const roles[] = { "system", "user", "assistant", "tool", NULL };
  if (r->kind == HZ_API_CHAT)
    {
      CHECK (r->n_messages >= 1 && r->prompt == NULL);
      for (guint i = 0; i < r->n_messages; i++)
        {
          CHECK (g_strv_contains (roles, r->messages[i].role));
          CHECK (r->messages[i].content && g_utf8_validate (r->messages[i].content, -1, NULL));
        }
    }
  else
    CHECK (r->prompt && r->n_messages == 0 && r->messages == NULL);
  const HzSamplerParams *s = &r->sampler;
  CHECK (s->temperature >= 0 && s->temperature <= 2);
  CHECK (s->top_p > 0 && s->top_p <= 1);
  CHECK (s->min_p >= 0 && s->min_p <= 1);
  CHECK (s->top_k >= 0);
  CHECK (s->presence_penalty >= -2 && s->presence_penalty <= 2);
  CHECK (s->frequency_penalty >= -2 && s->frequency_penalty <= 2);
  CHECK (r->max_tokens == -1 || (r->max_tokens >= 1 && r->max_tokens <= G_MAXINT32));
  CHECK (r->top_logprobs <= HZ_API_MAX_TOP_LOGPROBS);
  CHECK (r->logprobs || r->top_logprobs == 0);
  guint n_stop = r->stop ? g_strv_length (r->stop) : 0;
  CHECK (n_stop <= HZ_API_MAX_STOP && (r->stop == NULL || n_stop > 0));
  for (guint i = 0; i < n_stop; i++)
    CHECK (r->stop[i][0] != '\0');
}

/* The tools check, and a whole reply and a chunk carrying a call. */
static void
check_tools (const HzApiRequest *r)
{
  HzApiTools t;
  g_autofree char *param = NULL;
  g_autoptr (GError) error = NULL;
  if (!hz_api_tools_check (r, &t, &param, &error))
    {
      CHECK (g_error_matches (error, HZ_API_ERROR, HZ_API_ERROR_INVALID_VALUE) && param);
      check_error_body (error, param);
      return;
    }
  if (t.tools_json)
    {
      g_autoptr (JsonParser) p = json_parser_new ();
      CHECK (json_parser_load_from_data (p, t.tools_json, -1, NULL));
      CHECK (JSON_NODE_HOLDS_ARRAY (json_parser_get_root (p)));
      const guint n = json_array_get_length (json_node_get_array (json_parser_get_root (p)));
      CHECK (n >= 1 && n <= HZ_API_MAX_TOOLS);
      CHECK (t.choice != HZ_API_TOOL_CHOICE_NAMED || n == 1);
    }
  CHECK ((t.choice == HZ_API_TOOL_CHOICE_NONE) == (t.tools_json == NULL));
  /* a forced choice gives a constraint (or is refused as unsupported: too many tools) */
  const gboolean forcing = t.choice == HZ_API_TOOL_CHOICE_REQUIRED ||
                           t.choice == HZ_API_TOOL_CHOICE_NAMED;
  g_autoptr (GError) ferr = NULL;
  g_autoptr (HzJsonSchema) forced =
    t.tools_json ? hz_api_tools_forced (r, &t, HZ_TOOL_FORMAT_HERMES, NULL, NULL, &ferr) : NULL;
  CHECK (forced ? forcing && ferr == NULL
                : !forcing || g_error_matches (ferr, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED));
  if (forced)
    CHECK (hz_json_schema_min_bytes (forced) > strlen ("<tool_call>"));
  /* a call named after the request's model, with its text as arguments, reads back */
  g_autoptr (GPtrArray) calls = g_ptr_array_new_with_free_func ((GDestroyNotify) hz_tool_call_free);
  HzToolCall *c = g_new0 (HzToolCall, 1);
  c->name = g_strdup (r->model);
  c->arguments = g_strdup (r->kind == HZ_API_CHAT ? r->messages[0].content : r->prompt);
  g_ptr_array_add (calls, c);
  hz_api_tool_calls_set_ids (calls);
  const HzReplyInfo info = { HZ_API_CHAT, "id-1", 1, r->model, NULL };
  const HzReplyUsage u = { 1, 2, 0 };
  g_autofree char *whole = hz_reply_completion (&info, "", calls, "tool_calls", NULL, 0, &u);
  g_autoptr (JsonNode) w = reparse (whole);
  g_autofree char *chunk = hz_reply_chunk_calls (&info, calls, TRUE);
  CHECK (strchr (chunk, '\n') == NULL);
  g_autoptr (JsonNode) k = reparse (chunk);
  hz_api_tools_clear (&t);
}

/* The request's own text in a whole reply and in a chunk: read back unchanged. */
static void
check_replies (const HzApiRequest *r)
{
  const char *text = r->kind == HZ_API_CHAT ? r->messages[r->n_messages - 1].content : r->prompt;
  const HzReplyInfo info = { r->kind, "id-1", 1, r->model, NULL };
  const HzReplyUsage u = { 1, 2, 0 };
  g_autofree char *whole = hz_reply_completion (&info, text, NULL, "stop", NULL, 0, &u);
  g_autoptr (JsonNode) w = reparse (whole);
  JsonObject *c = json_array_get_object_element (
    json_object_get_array_member (json_node_get_object (w), "choices"), 0);
  const char *got = r->kind == HZ_API_CHAT
                      ? json_object_get_string_member (json_object_get_object_member (c, "message"),
                                                       "content")
                      : json_object_get_string_member (c, "text");
  CHECK (g_strcmp0 (got, text) == 0);
  CHECK (g_strcmp0 (json_object_get_string_member (json_node_get_object (w), "model"), r->model) == 0);
  g_autofree char *chunk = hz_reply_chunk (&info, FALSE, text, NULL, NULL, 0, 0, NULL,
                                           r->include_usage);
  CHECK (strchr (chunk, '\n') == NULL);   /* one server-sent event line */
  g_autoptr (JsonNode) k = reparse (chunk);
  CHECK (k != NULL);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  fuzz_check_init ();
  if (size == 0)
    return 0;
  const HzApiKind kind = data[0] % 2 ? HZ_API_COMPLETION : HZ_API_CHAT;
  g_autoptr (GError) error = NULL;
  g_autofree char *param = NULL;
  g_autoptr (HzApiRequest) r = hz_api_request_parse (kind, (const char *) data + 1, size - 1,
                                                     &param, &error);
  if (r == NULL)
    {
      CHECK (error && error->domain == HZ_API_ERROR && error->message[0] != '\0');
      check_error_body (error, param);
      return 0;
    }
  CHECK (error == NULL && param == NULL);
  CHECK (r->kind == kind);
  check_request (r);
  g_autofree char *served_param = NULL;
  if (!hz_api_request_check_served (r, &served_param, &error))
    {
      CHECK (g_error_matches (error, HZ_API_ERROR, HZ_API_ERROR_UNSUPPORTED));
      CHECK (served_param != NULL);
      check_error_body (error, served_param);
    }
  else
    CHECK (served_param == NULL && error == NULL);
  check_tools (r);
  check_replies (r);
  return 0;
}
