/* mcp-redact.c — the `redact` tool: a text with its personal data replaced, by the
 * redactor's public API (hanzo/redact.h; mcp-tools.h). */
#include "mcp-tools.h"

#include <string.h>

static const char input_schema[] =
  "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"text\"], "
  "\"properties\": {"
  "\"text\": {\"type\": \"string\", \"maxLength\": 1048576, \"description\": \"The text to "
  "redact\"},"
  "\"mode\": {\"type\": \"string\", \"enum\": [\"mask\", \"numbered\", \"pseudonym\"], "
  "\"default\": \"numbered\", \"description\": \"mask: [EMAIL]; numbered: [PERSON_1], the "
  "same name the same number; pseudonym: realistic fakes of the same kind\"}}}";

static const char output_schema[] =
  "{\"type\": \"object\", \"required\": [\"text\", \"entities\"], \"properties\": {"
  "\"text\": {\"type\": \"string\", \"description\": \"The text with personal data "
  "replaced; every other character kept\"},"
  "\"entities\": {\"type\": \"array\", \"description\": \"What was replaced, in order: its "
  "kind and where it was in the input (Unicode code points, end exclusive)\", "
  "\"items\": {\"type\": \"object\", \"required\": [\"type\", \"start\", \"end\"], "
  "\"properties\": {\"type\": {\"type\": \"string\"}, \"start\": {\"type\": \"integer\"}, "
  "\"end\": {\"type\": \"integer\"}}}}}}";

static HzScrubMode
scrub_mode (const char *name)
{
  if (strcmp (name, "mask") == 0)
    return HZ_SCRUB_MASK;
  if (strcmp (name, "pseudonym") == 0)
    return HZ_SCRUB_PSEUDONYM;
  return HZ_SCRUB_NUMBERED;
}

static JsonNode *
redact (HzMcpEnv *env, JsonObject *args, GError **error)
{
  HzRedactor *r = hz_mcp_env_redactor (env, error);
  if (!r)
    return NULL;
  const char *text = hz_mcp_arg_string (args, "text", "");
  HzRedaction *red = hz_redactor_analyze (r, text, -1, HZ_REDACT_UTF8_REPLACE, error);
  if (!red)
    return NULL;
  HzScrubber *scrubber = hz_scrubber_new (scrub_mode (hz_mcp_arg_string (args, "mode", "numbered")),
                                          ((guint64) g_random_int () << 32) | g_random_int ());
  g_autofree char *scrubbed = hz_scrubber_scrub (scrubber, red);
  hz_scrubber_free (scrubber);

  g_autoptr (JsonBuilder) b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, scrubbed);
  json_builder_set_member_name (b, "entities");
  json_builder_begin_array (b);
  for (guint i = 0; i < red->n_spans; i++)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "type");
      json_builder_add_string_value (b, hz_entity_type_name (red->spans[i].type));
      json_builder_set_member_name (b, "start");
      json_builder_add_int_value (b, (gint64) red->spans[i].start_cp);
      json_builder_set_member_name (b, "end");
      json_builder_add_int_value (b, (gint64) red->spans[i].end_cp);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  hz_redaction_free (red);
  return json_builder_get_root (b);
}

const HzMcpTool hz_mcp_tool_redact = {
  .name = "redact",
  .title = "Redact personal data",
  .description = "Return the text with its personal data (names, e-mail addresses, phone "
                 "numbers, IBANs, card and identity numbers, addresses, secrets, ...) replaced "
                 "by placeholders or pseudonyms, found by Hanzo Desktop's on-device redactor.",
  .input_schema = input_schema,
  .output_schema = output_schema,
  .idempotent = FALSE,
  .call = redact,
};
