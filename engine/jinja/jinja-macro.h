/* engine/jinja/jinja-macro.h — macro values: a {% macro %} (or the body of a {% call %}
 * block, Jinja2's `caller`) bound to the scope it was defined in. Calling one runs the
 * evaluator (jinja-eval.c's Macro.__call__, reached through hzj_call()); this floor makes
 * them, names them and lets go of them. */
#pragma once

#include "jinja-ast.h"
#include "jinja-context.h"

G_BEGIN_DECLS

/** A new macro value for the MACRO or CALL_BLOCK @node (owned by the template) that keeps
 *  @scope (hzj_scope_capture()). */
HzjValue *hzj_macro_new (const HzjNode *node, HzjScope *scope);
/** The name of a macro value ("caller" for a call block's body). */
const char *hzj_macro_name (HzjValue *macro);

G_END_DECLS
