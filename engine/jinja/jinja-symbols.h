/* engine/jinja/jinja-symbols.h — Jinja2's static scoping, reproduced (jinja2/idtracking.py).
 *
 * Jinja2 compiles each frame (the template, a for body, a macro, a set or filter block, a
 * with block) to a Python function whose local names are decided before it runs: a name
 * the frame assigns before it reads it, and that no enclosing frame knows, starts as
 * Undefined for the whole frame, hiding a render variable of the same name from the inner
 * frames that read it before the assignment ("{% for %}{{ y }}{% endfor %}{% set y = 5 %}"
 * prints nothing even when y was passed). An assignment made in only some branches of an
 * {% if %} does not count. The evaluator's scopes are dynamic; this pass lists, on each
 * frame node, the names to bind to Undefined when the frame starts, so the two agree. */
#pragma once

#include "jinja-ast.h"

G_BEGIN_DECLS

/** Sets `shadow` (and a FOR's `shadow2`) on every frame node under the BODY @root. */
void hzj_symbols_analyze (HzjNode *root);

G_END_DECLS
