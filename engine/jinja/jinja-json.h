/* engine/jinja/jinja-json.h — JSON in and out of template values: the render variables
 * from json-glib nodes, and the tojson filter as transformers defines it,
 * json.dumps(x, ensure_ascii=False, indent=..., separators=..., sort_keys=...), byte for
 * byte (Python's float repr, its escapes, its default separators ", " and ": ", or ","
 * and ": " with an indent). */
#pragma once

#include <json-glib/json-glib.h>
#include "jinja-context.h"

G_BEGIN_DECLS

/**
 * hzj_from_json:
 * @node: a JSON value
 * @data: whether its strings (object keys included) are caller data
 * @error: HZ_JINJA_ERROR_INPUT when @node nests deeper than HZJ_MAX_VALUE_DEPTH
 *
 * Returns: (transfer full): objects as dicts in member order, arrays as lists, integers
 * as int, other numbers as float, null as None; NULL on error.
 */
HzjValue *hzj_from_json (JsonNode *node, gboolean data, GError **error);

/**
 * hzj_tojson:
 * @indent: (nullable): the indentation string (Python's indent=N is N spaces), NULL for
 *   none
 * @item_sep, @key_sep: the separators (NULL: Python's defaults for @indent)
 *
 * Appends json.dumps(@v) to @out. The text is data as a whole when any string inside @v
 * is. FALSE with ctx's error set for what Python refuses (Undefined, a namespace or
 * macro: "Object of type Undefined is not JSON serializable"; keys that cannot be
 * compared with sort_keys) or for a text past max_output.
 */
gboolean hzj_tojson (HzjCtx *ctx, HzjValue *v, const char *indent, const char *item_sep,
                     const char *key_sep, gboolean sort_keys, gboolean ensure_ascii, HzjBuf *out);

G_END_DECLS
