/* server/server-format.c — response_format as a JSON constraint (server-format.h). */
#include "server-format.h"

#include <string.h>
#include "hanzo/json-out.h"

static const char *
string_member (JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member (o, name);
  return n && JSON_NODE_HOLDS_VALUE (n) && json_node_get_value_type (n) == G_TYPE_STRING
           ? json_node_get_string (n) : NULL;
}

/* The schema node compiled; NULL or JSON null: any JSON value. */
static HzJsonSchema *
compile (JsonNode *schema, const char *where, GError **error)
{
  g_autofree char *text = schema && !JSON_NODE_HOLDS_NULL (schema)
                            ? hz_json_node_to_string (schema, FALSE) : g_strdup ("{}");
  g_autoptr (GError) local = NULL;
  HzJsonSchema *s = hz_json_schema_compile (text, -1, NULL, &local);
  if (s == NULL)
    g_set_error (error, HZ_JSON_SCHEMA_ERROR, local->code, "'%s': %s", where, local->message);
  return s;
}

gboolean
hz_server_response_format (JsonNode *format, HzJsonSchema **schema, GError **error)
{
  *schema = NULL;
  JsonObject *o = format && JSON_NODE_HOLDS_OBJECT (format) ? json_node_get_object (format) : NULL;
  const char *type = o ? string_member (o, "type") : NULL;
  if (type == NULL || strcmp (type, "text") == 0)
    return TRUE;
  JsonNode *direct = json_object_get_member (o, "schema");
  if (strcmp (type, "json_object") == 0)
    {
      *schema = direct ? compile (direct, "response_format.schema", error)
                       : hz_json_schema_new_object ();
      return *schema != NULL;
    }
  if (strcmp (type, "json_schema") != 0)
    {
      g_set_error (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                   "'response_format.type' must be \"text\", \"json_object\" or "
                   "\"json_schema\", not \"%s\"", type);
      return FALSE;
    }
  JsonNode *js = json_object_get_member (o, "json_schema");
  if (js && !JSON_NODE_HOLDS_OBJECT (js))
    {
      g_set_error_literal (error, HZ_JSON_SCHEMA_ERROR, HZ_JSON_SCHEMA_ERROR_INVALID,
                           "'response_format.json_schema' must be an object with a "
                           "\"schema\"");
      return FALSE;
    }
  JsonNode *inner = js ? json_object_get_member (json_node_get_object (js), "schema") : NULL;
  *schema = inner || !direct ? compile (inner, "response_format.json_schema.schema", error)
                             : compile (direct, "response_format.schema", error);
  return *schema != NULL;
}
