/* engine/jinja/jinja-loop.h — the `loop` object of a for loop: its state, its attributes
 * (loop.index, first, length, previtem, cycle(), changed(), ...) as Jinja2's LoopContext.
 * The evaluator runs the loop and advances index0; calling a recursive loop runs the
 * evaluator (reached through hzj_call()). */
#pragma once

#include "jinja-ast.h"
#include "jinja-context.h"

G_BEGIN_DECLS

struct _HzjLoop {
  GPtrArray *items;      /* what the loop iterates (owned) */
  guint index0, depth0;  /* the current item; recursion depth of the loop (0: outermost) */
  const HzjNode *node;   /* the for statement */
  HzjScope *scope;       /* where it runs (borrowed); NULL once it has ended */
  HzjValue *changed_last;
};

/** A new loop object over @items (taken) for the FOR @node running in @scope (borrowed). */
HzjValue *hzj_loop_new (GPtrArray *items, guint depth0, const HzjNode *node, HzjScope *scope);
/** The attribute @name of a loop object (index, first, length, cycle, ...): a new
 *  reference, or NULL when the loop has no such attribute. */
HzjValue *hzj_loop_attr (HzjCtx *ctx, HzjValue *loop, const char *name);

G_END_DECLS
