/* engine/jinja/jinja-eval.h — the tree-walking evaluator: statements, expressions, macro
 * calls (caller, varargs, kwargs) and for loops (loop.*, recursive), as Jinja2's compiled
 * code runs them, over the scopes of jinja-scope.h. It installs the context's environment
 * (jinja-context.h), through which the filters, tests, methods and formatting below it
 * call macros and loops and look things up. One HzjCtx per render, on one thread. */
#pragma once

#include <glib.h>
#include "jinja-ast.h"
#include "jinja-context.h"

G_BEGIN_DECLS

/**
 * hzj_render:
 * Renders the BODY @root with the variables of @vars (its parent holds the globals)
 * into @out, after installing the evaluator's environment in @ctx (ctx->env). FALSE with
 * ctx->error set on error.
 */
gboolean hzj_render (HzjCtx *ctx, const HzjNode *root, HzjScope *vars, HzjBuf *out);

G_END_DECLS
