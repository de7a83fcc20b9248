/* mcp-schema.h — tools' arguments checked against their JSON input schema (the schema a
 * client sees in tools/list is the one the server enforces), and read once checked.
 *
 * The JSON Schema keywords the tools use, with their 2020-12 meaning: type ("object",
 * "array", "string", "integer" — a number without a fraction, "number", "boolean"),
 * properties, required, additionalProperties (false only), items, enum (of strings),
 * minimum, maximum, minLength, maxLength (code points), minItems, maxItems. A schema with
 * another keyword is a programming error (g_critical at check time). Thread-safe. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define HZ_MCP_ERROR (hz_mcp_error_quark ())
GQuark hz_mcp_error_quark (void);
typedef enum {
  HZ_MCP_ERROR_INVALID_ARGS,  /* a tool's arguments do not fit its schema or its rules */
  HZ_MCP_ERROR_FAILED,        /* the tool ran and failed (answered as isError: true) */
} HzMcpError;

/** Check `value` against `schema` (an object node). `where` names the value in the
 *  message ("arguments"): "arguments.messages[1].role: must be one of system, user,
 *  assistant". Errors: HZ_MCP_ERROR_INVALID_ARGS. */
gboolean hz_mcp_schema_check (JsonNode *schema, JsonNode *value, const char *where,
                              GError **error);

/** Members of a checked arguments object, or `fallback` when absent. */
const char *hz_mcp_arg_string (JsonObject *args, const char *name, const char *fallback);
gint64      hz_mcp_arg_int (JsonObject *args, const char *name, gint64 fallback);
double      hz_mcp_arg_double (JsonObject *args, const char *name, double fallback);

G_END_DECLS
