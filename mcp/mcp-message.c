/* mcp-message.c — JSON-RPC 2.0 lines of the MCP stdio transport (mcp-message.h). */
#include "mcp-message.h"

#include <string.h>

static HzMcpMessage *
invalid (HzMcpMessage *m, int code, const char *fmt, ...) G_GNUC_PRINTF (3, 4);

static HzMcpMessage *
invalid (HzMcpMessage *m, int code, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  m->kind = HZ_MCP_MSG_INVALID;
  m->error_code = code;
  g_autofree char *text = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_free (m->error_message);
  /* json-glib's parse errors quote the input, which may be a bad escape ("\ud83]") */
  m->error_message = g_utf8_make_valid (text, -1);
  m->method = NULL;
  m->params = NULL;
  return m;
}

/* TRUE when the arrays and objects of the JSON text nest at most `max` deep (brackets in
 * strings do not count). Run before json-glib, whose parser recurses. *nul: whether a
 * string holds the escape \u0000, where json-glib would end that string (the rest lost). */
static gboolean
depth_ok (const char *s, gsize len, guint max, gboolean *nul)
{
  guint depth = 0;
  gboolean in_string = FALSE, escaped = FALSE;
  *nul = FALSE;
  for (gsize i = 0; i < len; i++)
    {
      const char c = s[i];
      if (in_string)
        {
          if (escaped)
            {
              escaped = FALSE;
              if (c == 'u' && len - i > 4 && memcmp (s + i + 1, "0000", 4) == 0)
                *nul = TRUE;
            }
          else if (c == '\\')
            escaped = TRUE;
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if (c == '[' || c == '{')
        {
          if (++depth > max)
            return FALSE;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return TRUE;
}

/* An id MCP takes: a string or an integer (RequestId; JSON-RPC's null is refused). */
static gboolean
id_ok (JsonNode *id)
{
  if (!JSON_NODE_HOLDS_VALUE (id))
    return FALSE;
  const GType t = json_node_get_value_type (id);
  return t == G_TYPE_STRING || t == G_TYPE_INT64;
}

HzMcpMessage *
hz_mcp_message_from_node (JsonNode *node)
{
  HzMcpMessage *m = g_new0 (HzMcpMessage, 1);
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return invalid (m, HZ_MCP_INVALID_REQUEST, "a message is a JSON object");
  JsonObject *o = json_node_get_object (node);
  JsonNode *id = json_object_get_member (o, "id");
  if (id && id_ok (id))
    m->id = json_node_copy (id);
  JsonNode *v = json_object_get_member (o, "jsonrpc");
  if (!v || !JSON_NODE_HOLDS_VALUE (v) || json_node_get_value_type (v) != G_TYPE_STRING ||
      strcmp (json_node_get_string (v), "2.0") != 0)
    return invalid (m, HZ_MCP_INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\"");
  if (id && !m->id)
    return invalid (m, HZ_MCP_INVALID_REQUEST, "\"id\" must be a string or an integer");
  JsonNode *method = json_object_get_member (o, "method");
  if (method == NULL)
    {
      if (m->id && (json_object_has_member (o, "result") || json_object_has_member (o, "error")))
        {
          m->kind = HZ_MCP_MSG_RESPONSE;
          return m;
        }
      return invalid (m, HZ_MCP_INVALID_REQUEST, "a request needs a \"method\"");
    }
  if (!JSON_NODE_HOLDS_VALUE (method) || json_node_get_value_type (method) != G_TYPE_STRING)
    return invalid (m, HZ_MCP_INVALID_REQUEST, "\"method\" must be a string");
  JsonNode *params = json_object_get_member (o, "params");
  if (params && JSON_NODE_HOLDS_OBJECT (params))
    m->params = json_node_get_object (params);
  else if (params && JSON_NODE_HOLDS_ARRAY (params))
    m->params_invalid = TRUE;
  else if (params)
    return invalid (m, HZ_MCP_INVALID_REQUEST, "\"params\" must be an object");
  m->method = json_node_get_string (method);
  m->kind = m->id ? HZ_MCP_MSG_REQUEST : HZ_MCP_MSG_NOTIFICATION;
  return m;
}

HzMcpMessage *
hz_mcp_message_parse (const char *line, gsize len)
{
  if (len > 0 && line[len - 1] == '\r')
    len--;
  gsize blank = 0;
  while (blank < len && g_ascii_isspace (line[blank]))
    blank++;
  if (blank == len)
    {
      HzMcpMessage *m = g_new0 (HzMcpMessage, 1);
      m->kind = HZ_MCP_MSG_EMPTY;
      return m;
    }
  if (!g_utf8_validate_len (line, len, NULL))
    return invalid (g_new0 (HzMcpMessage, 1), HZ_MCP_PARSE_ERROR,
                    "parse error: the message is not UTF-8 text");
  gboolean nul = FALSE;
  if (!depth_ok (line, len, HZ_MCP_MAX_DEPTH, &nul))
    return invalid (g_new0 (HzMcpMessage, 1), HZ_MCP_INVALID_REQUEST,
                    "arrays and objects nest deeper than %d levels", HZ_MCP_MAX_DEPTH);
  g_autoptr (JsonParser) parser = json_parser_new_immutable ();
  g_autoptr (GError) error = NULL;
  if (!json_parser_load_from_data (parser, line, (gssize) len, &error))
    return invalid (g_new0 (HzMcpMessage, 1), HZ_MCP_PARSE_ERROR, "parse error: %s",
                    error->message);
  if (json_parser_has_assignment (parser, NULL) || json_parser_get_root (parser) == NULL)
    return invalid (g_new0 (HzMcpMessage, 1), HZ_MCP_PARSE_ERROR,
                    "parse error: not a JSON value");
  JsonNode *root = json_parser_steal_root (parser);
  if (JSON_NODE_HOLDS_ARRAY (root))
    {
      HzMcpMessage *m = g_new0 (HzMcpMessage, 1);
      m->root = root;
      JsonArray *a = json_node_get_array (root);
      if (json_array_get_length (a) == 0)
        return invalid (m, HZ_MCP_INVALID_REQUEST, "an empty batch");
      if (nul)
        return invalid (m, HZ_MCP_INVALID_REQUEST,
                        "a string of the batch holds \\u0000 (U+0000), which this server "
                        "cannot take");
      m->kind = HZ_MCP_MSG_BATCH;
      m->batch = g_ptr_array_new ();
      for (guint i = 0; i < json_array_get_length (a); i++)
        g_ptr_array_add (m->batch, json_array_get_element (a, i));
      return m;
    }
  HzMcpMessage *m = hz_mcp_message_from_node (root);
  m->root = root;
  if (nul && (m->kind == HZ_MCP_MSG_REQUEST || m->kind == HZ_MCP_MSG_NOTIFICATION))
    return invalid (m, HZ_MCP_INVALID_REQUEST,
                    "a string holds \\u0000 (U+0000), which this server cannot take: the "
                    "text after it would be lost");
  return m;
}

void
hz_mcp_message_free (HzMcpMessage *msg)
{
  if (!msg)
    return;
  g_clear_pointer (&msg->id, json_node_unref);
  g_clear_pointer (&msg->root, json_node_unref);
  g_clear_pointer (&msg->batch, g_ptr_array_unref);
  g_free (msg->error_message);
  g_free (msg);
}

static JsonBuilder *
begin_response (JsonNode *id)
{
  JsonBuilder *b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "jsonrpc");
  json_builder_add_string_value (b, "2.0");
  json_builder_set_member_name (b, "id");
  if (id)
    json_builder_add_value (b, json_node_copy (id));
  else
    json_builder_add_null_value (b);
  return b;
}

static JsonNode *
end_response (JsonBuilder *b)
{
  json_builder_end_object (b);
  JsonNode *n = json_builder_get_root (b);
  g_object_unref (b);
  return n;
}

JsonNode *
hz_mcp_response_result (JsonNode *id, JsonNode *result)
{
  JsonBuilder *b = begin_response (id);
  json_builder_set_member_name (b, "result");
  json_builder_add_value (b, result);
  return end_response (b);
}

JsonNode *
hz_mcp_response_error (JsonNode *id, int code, const char *message)
{
  JsonBuilder *b = begin_response (id);
  json_builder_set_member_name (b, "error");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "code");
  json_builder_add_int_value (b, code);
  json_builder_set_member_name (b, "message");
  json_builder_add_string_value (b, message);
  json_builder_end_object (b);
  return end_response (b);
}

char *
hz_mcp_to_line (JsonNode *node)
{
  g_autoptr (JsonGenerator) g = json_generator_new ();
  json_generator_set_root (g, node);
  return json_generator_to_data (g, NULL);
}
