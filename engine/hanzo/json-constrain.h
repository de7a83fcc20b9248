/* hanzo/json-constrain.h — constrained JSON output: what a generation's text must be
 * (any JSON object, or a value that a JSON schema describes), as an HzJsonSchema that a
 * serving request carries (hanzo/serving.h, HzRequestParams.json).
 *
 * The engine then samples only tokens whose bytes continue a valid JSON text (RFC 8259)
 * of that shape, allows end-of-generation only once the value is complete, and closes the
 * value before the request's token budget runs out where the vocabulary allows (every
 * remaining closing byte counted as one token). Internals: engine/json-constrain.h.
 *
 * The schema subset (anything else is refused with HZ_JSON_SCHEMA_ERROR_UNSUPPORTED and
 * the keyword named):
 *   type            "object", "array", "string", "number", "integer", "boolean", "null",
 *                   or an array of them; absent: what the other keywords say, else any
 *                   JSON value
 *   properties      member schemas, generated in the order given (at most 64)
 *   required        names of properties that must appear (the others may be left out)
 *   additionalProperties  true, false or a schema: members not in properties are never
 *                   generated, so the output satisfies each
 *   items, minItems, maxItems   an array's element schema and bounds
 *   enum, const     string, number, boolean or null values (at most 64), written as
 *                   json-glib writes them compactly
 *   anyOf, oneOf    branches that a value's first byte tells apart: at most one allowing
 *                   objects and one allowing arrays (Pydantic's Optional: a type or null),
 *                   or all of them enum / const (their values joined)
 *   $ref            "#/..." JSON pointers into the same document (Pydantic's "$defs",
 *                   "definitions"), each compiled once; a reference that leads back to
 *                   itself (a recursive schema) and other documents are refused
 *   annotations     title, description, default, examples, $schema, $id, $comment,
 *                   deprecated, readOnly, writeOnly: ignored
 * Nesting: at most HZ_JSON_MAX_DEPTH arrays and objects in a schema and in any output.
 * Whitespace: runs of at most 24 bytes inside the value, 2 before and after it, each with
 * at most one newline (no carriage return). Numbers:
 * at most 15 digits before the point, 15 after it, 2 in the exponent. Strings: valid
 * UTF-8, \u surrogates only in pairs. Tokens longer than 1024 bytes are never sampled.
 *
 * Thread safety: an HzJsonSchema is immutable and refcounted (atomic): share it freely.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Most arrays and objects open at once in a constrained output (and in a schema). */
#define HZ_JSON_MAX_DEPTH 32

#define HZ_JSON_SCHEMA_ERROR (hz_json_schema_error_quark ())
GQuark hz_json_schema_error_quark (void);
typedef enum {
  HZ_JSON_SCHEMA_ERROR_INVALID,      /* not JSON, or not a valid schema (a wrong type of
                                        value, required naming no property, min > max) */
  HZ_JSON_SCHEMA_ERROR_UNSUPPORTED,  /* a valid schema using a keyword outside the subset */
} HzJsonSchemaError;

typedef struct _HzJsonSchema HzJsonSchema;

/** Any JSON object (OpenAI's response_format {"type": "json_object"}). Never fails. */
HzJsonSchema *hz_json_schema_new_object (void);

/**
 * hz_json_schema_compile:
 * @json: a JSON schema as JSON text (UTF-8), @len bytes (-1: NUL-terminated)
 * @keyword: (out) (optional): on HZ_JSON_SCHEMA_ERROR_UNSUPPORTED, the keyword refused
 *   (g_free); NULL otherwise
 * @error: HZ_JSON_SCHEMA_ERROR_INVALID or _UNSUPPORTED; the message names the keyword and
 *   where it is, as a JSON pointer ("'pattern' at /properties/name is not supported ...")
 *
 * Compiles the subset described above. The schema `{}` (or `true`) is any JSON value.
 * Returns: (transfer full): the schema, or NULL with @error set.
 */
HzJsonSchema *hz_json_schema_compile (const char *json, gssize len, char **keyword,
                                      GError **error);

/**
 * hz_json_schema_new_framed:
 * @prefixes: (array length=n): @n literal UTF-8 texts, none empty, none a prefix of another
 * @values: (array length=n): the schema of the JSON value after each prefix (referenced)
 * @n: 1 to 64 alternatives
 * @suffix: text after each value ("" for none)
 * @separator: (nullable): when given, further prefix-value-suffix texts may follow, each
 *   after this text; NULL: exactly one
 * @end_token: the only end-of-generation token allowed after the last suffix (an id of
 *   the model the constraint is used with), or -1 for any
 * @error: HZ_JSON_SCHEMA_ERROR_INVALID (the message says which argument)
 *
 * A text of the shape PREFIX_i VALUE_i SUFFIX [SEPARATOR PREFIX_j VALUE_j SUFFIX]...: a
 * tool call forced in a chat template family's own markup (server/ builds the prefixes
 * from engine/hanzo/tool-calls.h's hz_tool_call_frame()). Generation may end only after
 * a suffix. No whitespace is allowed around the prefixes and suffixes (the value itself
 * may start with a few bytes of it, as any JSON value inside a container).
 * Returns: (transfer full): the schema, or NULL with @error set.
 */
HzJsonSchema *hz_json_schema_new_framed (const char *const *prefixes, HzJsonSchema *const *values,
                                         guint n, const char *suffix, const char *separator,
                                         gint32 end_token, GError **error);

HzJsonSchema *hz_json_schema_ref (HzJsonSchema *schema);
void          hz_json_schema_unref (HzJsonSchema *schema);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (HzJsonSchema, hz_json_schema_unref)

/** The fewest bytes a JSON text of @schema takes (e.g. 2 for any object: "{}"). */
guint hz_json_schema_min_bytes (const HzJsonSchema *schema);

G_END_DECLS
