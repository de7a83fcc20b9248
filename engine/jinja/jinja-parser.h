/* engine/jinja/jinja-parser.h — Jinja2 3.1's grammar (jinja2/parser.py) over the tokens of
 * jinja-lexer.h, with the statements chat templates use: if/elif/else, for (else, inline
 * if, recursive, loop controls), set (expression, namespace attribute, tuple, block),
 * macro, call, filter, with, print, raw. Other tags ({% generation %}, include, extends,
 * ...) are refused as Jinja2 refuses an unknown tag.
 *
 * Nesting is bounded (HZJ_MAX_NESTING levels of brackets, operators and blocks:
 * jinja-parse-stream.h) so that neither parsing nor evaluating recurses without end. As
 * Jinja2, a filter or test that does not exist is an error at parse time unless it sits
 * inside an {% if %} or an inline if, where it is an error only when reached. */
#pragma once

#include <glib.h>
#include "jinja-ast.h"

G_BEGIN_DECLS

/**
 * hzj_parse:
 * @src: template source (@len bytes of valid UTF-8)
 * @error: HZ_JINJA_ERROR_SYNTAX with Jinja2's message
 *
 * Returns: (transfer full): a BODY node (hzj_node_free()), or NULL.
 */
HzjNode *hzj_parse (const char *src, gsize len, GError **error);

G_END_DECLS
