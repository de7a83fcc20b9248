/* common/hanzo/json-out.h — JSON text from json-glib, valid by RFC 8259 whatever its version.
 *
 * json-glib up to at least 1.6.6 (Debian 12) leaves the control character U+001F raw in
 * string literals (its escaper tests `c < 0x1f`), and RFC 8259 §7 requires every code
 * point below U+0020 in a string to be escaped: strict parsers (Python's json.loads,
 * jq, browsers' JSON.parse) refuse such output; it also writes the double 1e-35 as
 * "1e-35.0". Every JSON writer of the project generates
 * through these functions, which pass json-glib's output through
 * hz_json_escape_controls(). Plain functions of their arguments: thread-safe as long as
 * one JsonGenerator / JsonNode is not used by two threads at once. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/**
 * hz_json_escape_controls:
 * @json: JSON text (as json-glib generates it: strings are valid UTF-8), @len bytes
 * @len: its length in bytes, or -1 when NUL-terminated
 * @out_len: (out) (optional): the length of the result in bytes
 *
 * Rewrites every raw byte below 0x20 inside a string literal of @json as `\u00XX`
 * (lower-case hex, as json-glib writes the other escapes), and drops the ".0" that
 * json-glib 1.6 appends to a double written with an exponent and no point ("1e-35.0",
 * not JSON, becomes "1e-35"). Bytes outside string literals
 * (the newlines and indentation of pretty-printed output) are kept. Text that needs no
 * change comes back as an identical copy.
 * Returns: (transfer full): the NUL-terminated result.
 */
char *hz_json_escape_controls (const char *json, gssize len, gsize *out_len);

/**
 * hz_json_generator_to_data:
 * The drop-in for json_generator_to_data(): @gen's root as JSON text with every control
 * character escaped (hz_json_escape_controls()). @length (optional) gets its length.
 * Returns: (transfer full): the text.
 */
char *hz_json_generator_to_data (JsonGenerator *gen, gsize *length);

/**
 * hz_json_node_to_string:
 * The drop-in for json_to_string(): @node (pretty-printed when @pretty, two-space
 * indentation as json-glib's default) as JSON text with every control character escaped.
 * Returns: (transfer full): the text.
 */
char *hz_json_node_to_string (JsonNode *node, gboolean pretty);

G_END_DECLS
