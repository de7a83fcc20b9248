/* server/server-format.h — a request's response_format as the engine's JSON constraint
 * (hanzo/json-constrain.h), private to server/.
 *
 *   {"type": "text"} or absent       free text (no schema)
 *   {"type": "json_object"}          any JSON object; with "schema" (llama-server's
 *                                    extension) that schema instead
 *   {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}
 *                                    a value of "schema" (absent: any JSON value); "strict"
 *                                    changes nothing: the output always follows the schema
 *                                    (a "schema" directly in response_format, as
 *                                    llama-server accepts, is read too)
 *
 * Thread safety: a plain function of its arguments. */
#pragma once

#include <json-glib/json-glib.h>
#include "hanzo/json-constrain.h"

G_BEGIN_DECLS

/**
 * hz_server_response_format:
 * @format: (nullable): the request's response_format as sent (an object with a "type")
 * @schema: (out): the constraint (hz_json_schema_unref), or NULL for free text
 * @error: HZ_JSON_SCHEMA_ERROR_INVALID (a type other than text, json_object and
 *   json_schema, a json_schema that is not an object, a schema that is not valid) or
 *   _UNSUPPORTED (a schema keyword outside the subset, named in the message: "the schema
 *   keyword 'pattern' at /properties/name is not supported ...")
 *
 * Returns: FALSE with @error set when the format cannot be served.
 */
gboolean hz_server_response_format (JsonNode *format, HzJsonSchema **schema, GError **error);

G_END_DECLS
