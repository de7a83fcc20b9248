/* engine/jinja/jinja-scope.h — the variables of a render: scopes as Jinja2 nests them.
 *
 * Each iteration of a for loop, each macro call and each with block gets a scope of its
 * own (assignments there vanish at its end: that is what namespace() is for); if blocks do
 * not. A macro keeps the scope it was defined in (hzj_scope_capture()) and sees it as it is
 * when called; the macro and that scope may hold each other, a cycle hzj_scopes_release()
 * breaks at the end of the render. Scopes are reference counted, not atomically: one
 * render, one thread. */
#pragma once

#include <glib.h>
#include "jinja-context.h"

G_BEGIN_DECLS

/** A new empty scope whose lookups fall back to @parent (a reference taken; may be NULL). */
HzjScope *hzj_scope_new (HzjCtx *ctx, HzjScope *parent);
void hzj_scope_unref (HzjScope *s);
/** Binds @name to @v (reference taken) in @s itself. @name is not copied: it must last
 *  as long as the render (a name of the template, of the variables, or a literal). */
void hzj_scope_set (HzjScope *s, const char *name, HzjValue *v);
/** @name's value in @s or its parents (borrowed), or NULL. */
HzjValue *hzj_scope_lookup (HzjScope *s, const char *name);
/** Drops every variable of @s itself (for a loop's next iteration). */
void hzj_scope_clear (HzjScope *s);
/** Binds each of the NULL-terminated @names (may be NULL) to Undefined: the names Jinja2
 *  starts as Undefined in a frame (jinja-symbols.h). */
void hzj_scope_shadow (HzjScope *s, char **names);
/** Whether something besides its creator holds @s (a macro, a nested scope): then it may
 *  not be cleared for reuse. */
gboolean hzj_scope_in_use (HzjScope *s);
/** Takes a reference to @s for a macro defined in it, and records it in the context for
 *  hzj_scopes_release(). Returns @s. */
HzjScope *hzj_scope_capture (HzjScope *s);

/** Ends a render: empties the scopes macros captured and the namespaces still alive,
 *  breaking the reference cycles between them, then lets go. */
void hzj_scopes_release (HzjCtx *ctx);

G_END_DECLS
