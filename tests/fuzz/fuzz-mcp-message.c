/* tests/fuzz/fuzz-mcp-message.c — libFuzzer target for what an MCP client sends `hanzo mcp`
 * (mcp/mcp-message.c): the input is one line, any bytes.
 *
 * Invariants: a line is EMPTY, INVALID with a JSON-RPC code (-32700 or -32600) and a UTF-8
 * message, a REQUEST (a method, an id that is a string or an integer), a NOTIFICATION (a
 * method, no id), a RESPONSE, or a BATCH of at least one element, each of which classifies
 * the same way (never as a batch); the reply made for it (an error with the message, a
 * result echoing the request's params) is one line of JSON that json-glib reads back with
 * the same id and message; a request's "arguments", checked against a schema that uses
 * every keyword mcp-schema.c knows, either passes — and then the readers give values in the
 * schema's ranges — or fails with HZ_MCP_ERROR_INVALID_ARGS and a UTF-8 message. Any
 * violation aborts; GLib criticals and warnings abort too. */
#include <json-glib/json-glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-glib.h"
#include "mcp-message.h"
#include "mcp-schema.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond))                                                                             \
      {                                                                                      \
        g_printerr ("fuzz-mcp-message: invariant failed: %s (%s:%d)\n", #cond, __FILE__,      \
                    __LINE__);                                                               \
        abort ();                                                                            \
      }                                                                                      \
  } while (0)

static const char schema_text[] =
  "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"text\"], "
  "\"properties\": {"
  "\"text\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 64},"
  "\"mode\": {\"type\": \"string\", \"enum\": [\"mask\", \"numbered\"]},"
  "\"n\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 4096},"
  "\"t\": {\"type\": \"number\", \"minimum\": 0, \"maximum\": 2},"
  "\"flag\": {\"type\": \"boolean\"},"
  "\"list\": {\"type\": \"array\", \"minItems\": 1, \"maxItems\": 4, \"items\": {"
  "\"type\": \"object\", \"required\": [\"role\"], \"additionalProperties\": false, "
  "\"properties\": {\"role\": {\"type\": \"string\", \"enum\": [\"user\", \"system\"]}}}}}}";

static JsonNode *schema;

static void
check_args (JsonNode *args)
{
  g_autoptr (GError) error = NULL;
  if (!hz_mcp_schema_check (schema, args, "arguments", &error))
    {
      CHECK (g_error_matches (error, HZ_MCP_ERROR, HZ_MCP_ERROR_INVALID_ARGS));
      CHECK (g_utf8_validate (error->message, -1, NULL) && error->message[0]);
      return;
    }
  CHECK (error == NULL && JSON_NODE_HOLDS_OBJECT (args));
  JsonObject *o = json_node_get_object (args);
  const char *text = hz_mcp_arg_string (o, "text", NULL);
  CHECK (text && g_utf8_strlen (text, -1) >= 1 && g_utf8_strlen (text, -1) <= 64);
  const char *mode = hz_mcp_arg_string (o, "mode", "mask");
  CHECK (strcmp (mode, "mask") == 0 || strcmp (mode, "numbered") == 0);
  const gint64 n = hz_mcp_arg_int (o, "n", 1);
  CHECK (n >= 1 && n <= 4096);
  const double t = hz_mcp_arg_double (o, "t", 0);
  CHECK (t >= 0 && t <= 2);
}

/* The reply for `m`, written and read back: one line, same id, same message. */
static void
check_reply (const HzMcpMessage *m)
{
  g_autoptr (JsonNode) reply = NULL;
  if (m->kind == HZ_MCP_MSG_INVALID)
    reply = hz_mcp_response_error (m->id, m->error_code, m->error_message);
  else if (m->kind == HZ_MCP_MSG_REQUEST)
    reply = hz_mcp_response_result (m->id, m->params
                                             ? json_node_init_object (json_node_alloc (), m->params)
                                             : json_node_new (JSON_NODE_NULL));
  else
    return;
  g_autofree char *line = hz_mcp_to_line (reply);
  CHECK (strchr (line, '\n') == NULL);
  g_autoptr (HzMcpMessage) back = hz_mcp_message_parse (line, strlen (line));
  CHECK (back->kind == HZ_MCP_MSG_RESPONSE || (back->kind == HZ_MCP_MSG_INVALID && m->id == NULL));
  JsonObject *o = json_node_get_object (back->root);
  JsonNode *id = json_object_get_member (o, "id");
  if (m->id)
    CHECK (id && json_node_equal (id, m->id));
  else
    CHECK (id && JSON_NODE_HOLDS_NULL (id));
  if (m->kind == HZ_MCP_MSG_INVALID)
    {
      JsonObject *e = json_object_get_object_member (o, "error");
      CHECK (json_object_get_int_member (e, "code") == m->error_code);
      CHECK (strcmp (json_object_get_string_member (e, "message"), m->error_message) == 0);
    }
}

static void
check_message (const HzMcpMessage *m, gboolean element)
{
  switch (m->kind)
    {
    case HZ_MCP_MSG_EMPTY:
      CHECK (!element);
      break;
    case HZ_MCP_MSG_INVALID:
      CHECK (m->error_code == HZ_MCP_PARSE_ERROR || m->error_code == HZ_MCP_INVALID_REQUEST);
      CHECK (!element || m->error_code == HZ_MCP_INVALID_REQUEST);
      CHECK (m->error_message && m->error_message[0] && g_utf8_validate (m->error_message, -1, NULL));
      CHECK (m->method == NULL && m->params == NULL);
      break;
    case HZ_MCP_MSG_REQUEST:
    case HZ_MCP_MSG_NOTIFICATION:
      CHECK (m->method && g_utf8_validate (m->method, -1, NULL));
      CHECK ((m->kind == HZ_MCP_MSG_REQUEST) == (m->id != NULL));
      CHECK (!(m->params && m->params_invalid));
      if (m->id)
        CHECK (json_node_get_value_type (m->id) == G_TYPE_STRING ||
               json_node_get_value_type (m->id) == G_TYPE_INT64);
      if (m->params && json_object_has_member (m->params, "arguments"))
        check_args (json_object_get_member (m->params, "arguments"));
      break;
    case HZ_MCP_MSG_RESPONSE:
      CHECK (m->id != NULL);
      break;
    case HZ_MCP_MSG_BATCH:
      CHECK (!element && m->batch && m->batch->len >= 1);
      for (guint i = 0; i < m->batch->len; i++)
        {
          g_autoptr (HzMcpMessage) one = hz_mcp_message_from_node (m->batch->pdata[i]);
          check_message (one, TRUE);
        }
      break;
    }
  check_reply (m);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (!schema)
    {
      g_log_set_writer_func (fuzz_abort_on_critical, NULL, NULL);
      schema = json_from_string (schema_text, NULL);
      CHECK (schema != NULL);
    }
  g_autoptr (HzMcpMessage) m = hz_mcp_message_parse ((const char *) data, size);
  check_message (m, FALSE);
  return 0;
}
