/* engine/jinja/jinja-ops.h — Python's operators on template values: arithmetic, ordering,
 * membership, slicing; each raises what Python raises (TypeError "can only concatenate str
 * (not \"dict\") to str", ZeroDivisionError, ...) and an operation on Undefined raises
 * UndefinedError, as in Jinja2. Integers are 64-bit: where Python would grow a big integer
 * the result is an OverflowError instead. */
#pragma once

#include "jinja-ast.h"
#include "jinja-context.h"

G_BEGIN_DECLS

/** a op b (a new reference, NULL after an error). */
HzjValue *hzj_op_binary (HzjCtx *ctx, HzjBinop op, HzjValue *a, HzjValue *b);
/** -a (@neg) or +a. */
HzjValue *hzj_op_unary (HzjCtx *ctx, gboolean neg, HzjValue *a);
/** a op b for a comparison or membership operator: 1 true, 0 false, -1 error. */
int hzj_op_compare (HzjCtx *ctx, HzjCmpop op, HzjValue *a, HzjValue *b);
/** obj[start:stop:step] of a list, tuple or string (each bound NULL or None when left
 *  out); strings keep their tagging. Anything else raises, as Python's subscription. */
HzjValue *hzj_op_slice (HzjCtx *ctx, HzjValue *obj, HzjValue *start, HzjValue *stop,
                        HzjValue *step);

G_END_DECLS
