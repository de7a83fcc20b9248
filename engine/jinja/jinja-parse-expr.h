/* engine/jinja/jinja-parse-expr.h — Jinja2 3.1's expression grammar (jinja2/parser.py:
 * parse_expression and below): conditional expressions, or/and/not, comparisons,
 * arithmetic, filters and tests, calls, subscripts, literals. Each returns a sealed node
 * (jinja-parse-stream.h), or NULL with the syntax error set in the parser. */
#pragma once

#include "jinja-parse-stream.h"

G_BEGIN_DECLS

/** parse_expression: a whole expression (with an inline if unless !@with_condexpr). */
HzjNode *hzj_parse_expression (HzjParser *p, gboolean with_condexpr);
/** parse_tuple: an expression or a tuple of them without parentheses (@simplified: of
 *  primaries only), up to a token of @extra_end (a name) or the end of the block. */
HzjNode *hzj_parse_tuple (HzjParser *p, gboolean simplified, gboolean with_condexpr,
                          const char *extra_end, gboolean explicit_parens);
/** parse_filter: the filters applied to @node (`|name(args)` ...); with @start_inline,
 *  the first without its `|` (a filter block's). */
HzjNode *hzj_parse_filter (HzjParser *p, HzjNode *node, gboolean start_inline);

G_END_DECLS
