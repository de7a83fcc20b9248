/* common/hanzo/json-scan.h — the brackets of JSON text found without parsing it: where an
 * object or array ends in a stream of text, and how deep a text nests, before json-glib
 * (whose parser recurses per level) reads it. Used by the engine's tool-call parser and
 * the server's request reader.
 *
 * Thread safety: a pure function of its arguments. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/** Scan `len` bytes of JSON text for its brackets, strings and their escapes skipped (the
 *  text need not be valid JSON; json-glib reads it after). Returns the offset just after
 *  the bracket that closes the object or array opened at s[0], or 0 when s[0] opens none
 *  or it is not closed within `len`. With `max_depth` (nullable) the whole text is scanned
 *  and *max_depth is its deepest nesting (a closing bracket at depth 0 is ignored): what
 *  the server checks before json-glib, whose parser recurses per level. */
gsize hz_json_bracket_scan (const char *s, gsize len, guint *max_depth);

G_END_DECLS
