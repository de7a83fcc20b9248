/* engine/json-in.c — reading JSON files of model folders; see json-in.h. */
#include "json-in.h"
#include "gguf.h"

/* Documented in json-in.h. */
JsonObject *
hz_json_read_object (const char *path, JsonParser **parser_out, gboolean required,
                     GError **error)
{
  JsonParser *p = json_parser_new ();
  if (!json_parser_load_from_file (p, path, error))
    {
      g_object_unref (p);
      if (!required && error && *error && (*error)->domain == G_FILE_ERROR)
        g_clear_error (error);
      return NULL;
    }
  JsonNode *root = json_parser_get_root (p);
  if (!root || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_object_unref (p);
      g_set_error (error, HZ_GGUF_ERROR, HZ_GGUF_ERROR_INVALID, "%s: not a JSON object", path);
      return NULL;
    }
  *parser_out = p;
  return json_node_get_object (root);
}

static JsonNode *
value_member (JsonObject *o, const char *k)
{
  JsonNode *n = o ? json_object_get_member (o, k) : NULL;
  return n && JSON_NODE_HOLDS_VALUE (n) ? n : NULL;
}

/* Documented in json-in.h. */
int64_t
hz_json_int (JsonObject *o, const char *k, int64_t def)
{
  JsonNode *n = value_member (o, k);
  GType t = n ? json_node_get_value_type (n) : G_TYPE_INVALID;
  if (t == G_TYPE_INT64)
    return json_node_get_int (n);
  if (t == G_TYPE_DOUBLE)
    return (int64_t) json_node_get_double (n);
  return def;
}

/* Documented in json-in.h. */
double
hz_json_dbl (JsonObject *o, const char *k, double def)
{
  JsonNode *n = value_member (o, k);
  GType t = n ? json_node_get_value_type (n) : G_TYPE_INVALID;
  if (t == G_TYPE_INT64)
    return (double) json_node_get_int (n);
  if (t == G_TYPE_DOUBLE)
    return json_node_get_double (n);
  return def;
}

/* Documented in json-in.h. */
const char *
hz_json_str (JsonObject *o, const char *k)
{
  JsonNode *n = value_member (o, k);
  return n && json_node_get_value_type (n) == G_TYPE_STRING ? json_node_get_string (n) : NULL;
}

/* Documented in json-in.h. */
gboolean
hz_json_bool (JsonObject *o, const char *k, gboolean def)
{
  JsonNode *n = value_member (o, k);
  return n && json_node_get_value_type (n) == G_TYPE_BOOLEAN ? json_node_get_boolean (n) : def;
}

/* Documented in json-in.h. */
JsonObject *
hz_json_obj (JsonObject *o, const char *k)
{
  JsonNode *n = o ? json_object_get_member (o, k) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

/* Documented in json-in.h. */
JsonArray *
hz_json_arr (JsonObject *o, const char *k)
{
  JsonNode *n = o ? json_object_get_member (o, k) : NULL;
  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}
