/* mcp-search.c — the `search_conversations` tool: full-text search of the app's
 * conversations (hz_store_search_messages() on a store opened read-only), every text
 * redacted before it leaves (mcp-tools.h). */
#include "mcp-tools.h"

/* Longest text of one result, in code points (the message's beginning). */
#define MAX_RESULT_CHARS 2000

static const char input_schema[] =
  "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"query\"], "
  "\"properties\": {"
  "\"query\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 1000, \"description\": "
  "\"Words to find (all of them; the last one may be the start of a word)\"},"
  "\"limit\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 50, \"default\": 10, "
  "\"description\": \"Most messages to return, best match first\"}}}";

static const char output_schema[] =
  "{\"type\": \"object\", \"required\": [\"results\"], \"properties\": {"
  "\"results\": {\"type\": \"array\", \"items\": {\"type\": \"object\", \"required\": "
  "[\"conversation_id\", \"conversation_title\", \"message_id\", \"role\", \"created\", "
  "\"text\", \"truncated\"], \"properties\": {"
  "\"conversation_id\": {\"type\": \"integer\"},"
  "\"conversation_title\": {\"type\": \"string\", \"description\": \"Redacted\"},"
  "\"message_id\": {\"type\": \"integer\"},"
  "\"role\": {\"type\": \"string\", \"enum\": [\"system\", \"user\", \"assistant\"]},"
  "\"created\": {\"type\": \"string\", \"description\": \"ISO 8601, UTC\"},"
  "\"text\": {\"type\": \"string\", \"description\": \"The message, its personal data "
  "replaced ([PERSON_1], the same name the same number in one answer)\"},"
  "\"truncated\": {\"type\": \"boolean\", \"description\": \"Only the message's first "
  "2000 characters are given\"}}}}}}";

/* `text` with its personal data replaced by `scrubber`'s placeholders (g_free). */
static char *
scrub (HzRedactor *r, HzScrubber *scrubber, const char *text)
{
  HzRedaction *red = hz_redactor_analyze (r, text, -1, HZ_REDACT_UTF8_REPLACE, NULL);
  char *out = hz_scrubber_scrub (scrubber, red);   /* (valid UTF-8 never fails) */
  hz_redaction_free (red);
  return out;
}

static void
add_result (JsonBuilder *b, HzStore *store, HzRedactor *r, HzScrubber *scrubber,
            const HzSearchHit *hit)
{
  g_autoptr (HzMessage) m = hz_store_get_message (store, hit->message_id, NULL);
  g_autoptr (HzConversation) c = hz_store_get_conversation (store, hit->conversation_id, NULL);
  if (!m || !c)
    return;   /* deleted between the search and now */
  /* redacted whole, then cut: a name or number is never cut in two before the redactor
   * sees it */
  g_autofree char *text = scrub (r, scrubber, m->content);
  g_autofree char *title = scrub (r, scrubber, c->title);
  const gboolean truncated = g_utf8_strlen (text, -1) > MAX_RESULT_CHARS;
  if (truncated)
    *g_utf8_offset_to_pointer (text, MAX_RESULT_CHARS) = '\0';
  g_autoptr (GDateTime) t = g_date_time_new_from_unix_utc (m->created_us / G_USEC_PER_SEC);
  g_autofree char *created = t ? g_date_time_format_iso8601 (t) : g_strdup ("");

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "conversation_id");
  json_builder_add_int_value (b, c->id);
  json_builder_set_member_name (b, "conversation_title");
  json_builder_add_string_value (b, title);
  json_builder_set_member_name (b, "message_id");
  json_builder_add_int_value (b, m->id);
  json_builder_set_member_name (b, "role");
  json_builder_add_string_value (b, hz_role_to_string (m->role));
  json_builder_set_member_name (b, "created");
  json_builder_add_string_value (b, created);
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text);
  json_builder_set_member_name (b, "truncated");
  json_builder_add_boolean_value (b, truncated);
  json_builder_end_object (b);
}

static JsonNode *
search (HzMcpEnv *env, JsonObject *args, GError **error)
{
  HzRedactor *r = hz_mcp_env_redactor (env, error);
  if (!r)
    return NULL;
  g_autoptr (GError) local = NULL;
  HzStore *store = hz_mcp_env_store (env, &local);
  if (!store && g_error_matches (local, HZ_STORE_ERROR, HZ_STORE_ERROR_NOT_FOUND))
    {
      g_set_error (error, HZ_MCP_ERROR, HZ_MCP_ERROR_FAILED,
                   "no conversations are stored yet (%s)", local->message);
      return NULL;
    }
  if (!store)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return NULL;
    }
  g_autoptr (GPtrArray) hits = hz_store_search_messages (store, hz_mcp_arg_string (args, "query", ""),
                                                         (int) hz_mcp_arg_int (args, "limit", 10),
                                                         error);
  if (!hits)
    return NULL;
  HzScrubber *scrubber = hz_scrubber_new (HZ_SCRUB_NUMBERED, 0);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "results");
  json_builder_begin_array (b);
  for (guint i = 0; i < hits->len; i++)
    add_result (b, store, r, scrubber, hits->pdata[i]);
  json_builder_end_array (b);
  json_builder_end_object (b);
  hz_scrubber_free (scrubber);
  return json_builder_get_root (b);
}

const HzMcpTool hz_mcp_tool_search = {
  .name = "search_conversations",
  .title = "Search my conversations",
  .description = "Full-text search of the conversations kept by Hanzo Desktop on this "
                 "computer (read only). Personal data in the results is replaced by "
                 "placeholders such as [PERSON_1] or [EMAIL_1].",
  .input_schema = input_schema,
  .output_schema = output_schema,
  .idempotent = TRUE,
  .call = search,
};
