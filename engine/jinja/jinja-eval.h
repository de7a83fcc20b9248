/* engine/jinja/jinja-eval.h — the tree-walking evaluator and what the filters, methods and
 * globals need from it: the render context (errors, bounds), attribute and item lookup
 * with Jinja2's sandbox rules, calls, iteration and argument binding.
 *
 * Scoping follows Jinja2: each iteration of a for loop, each macro call and each with
 * block gets a scope of its own (assignments there vanish at its end: that is what
 * namespace() is for); if blocks do not. Macros see their defining scope as it is when
 * called. One HzjCtx per render, on one thread. */
#pragma once

#include <glib.h>
#include "jinja.h"
#include "jinja-ast.h"
#include "jinja-value.h"

G_BEGIN_DECLS

struct _HzjCtx {
  GError *error;        /* the first error; evaluation stops once set */
  int line;             /* template line of the node being evaluated */
  gsize max_output;     /* bytes of the output and of any string */
  guint64 steps, max_steps;
  guint depth, max_depth;  /* macro calls */
  guint eval_depth;        /* nested evaluations (C recursion) */
  gint64 now;              /* strftime_now's time: Unix seconds */
  GHashTable *live_scopes; /* the scopes macros captured (cycles are broken at the end) */
  GPtrArray *namespaces;   /* every namespace made (references; emptied at the end) */
};

/** Sets the render's error (the first one wins): HZ_JINJA_ERROR code @code, Python
 *  exception class @pyclass, at the current line. Returns NULL for `return hzj_fail (...)`. */
gpointer hzj_fail (HzjCtx *ctx, int code, const char *pyclass, const char *fmt, ...)
  G_GNUC_PRINTF (4, 5);
#define hzj_type_error(ctx, ...) hzj_fail ((ctx), HZ_JINJA_ERROR_RUNTIME, "TypeError", __VA_ARGS__)
#define hzj_value_error(ctx, ...) hzj_fail ((ctx), HZ_JINJA_ERROR_RUNTIME, "ValueError", __VA_ARGS__)
#define hzj_limit_error(ctx, ...) hzj_fail ((ctx), HZ_JINJA_ERROR_LIMIT, "LimitError", __VA_ARGS__)
/** Raises what an operation on the undefined value @u raises (UndefinedError with its
 *  hint, or SecurityError for a refused attribute). Returns NULL. */
gpointer hzj_fail_undefined (HzjCtx *ctx, HzjValue *u);
/** Counts one evaluation step; FALSE (error set) past max_steps. */
gboolean hzj_step (HzjCtx *ctx);
/** Counts @units steps at once (the work of building a big value, charged before it is
 *  built); FALSE (error set) past max_steps. */
gboolean hzj_charge (HzjCtx *ctx, guint64 units);
/** The error for a string that would pass max_output bytes. Returns NULL. */
gpointer hzj_fail_size (HzjCtx *ctx);

/** Defines the built-in @name as @fn with extra arguments (for the families of methods
 *  and filters that differ by a flag: lstrip / rstrip, upper / lower, ...). */
#define HZJ_VARIANT(name, fn, ...)                                                         \
  static HzjValue *name (HzjCtx *ctx_, HzjValue *self_, HzjArgs *args_)                    \
  {                                                                                        \
    return fn (ctx_, self_, args_, __VA_ARGS__);                                           \
  }

/** The string a builder made (@b is cleared), or the size error when it overflowed. */
HzjValue *hzj_buf_finish (HzjCtx *ctx, HzjBuf *b);

/* -- scopes -- */
HzjScope *hzj_scope_new (HzjCtx *ctx, HzjScope *parent);
void hzj_scope_unref (HzjScope *s);
/** Binds @name to @v (reference taken) in @s itself. @name is not copied: it must last
 *  as long as the render (a name of the template, of the variables, or a literal). */
void hzj_scope_set (HzjScope *s, const char *name, HzjValue *v);
/** @name's value in @s or its parents (borrowed), or NULL. */
HzjValue *hzj_scope_lookup (HzjScope *s, const char *name);
/** Frees what the loop object holds (from hzj_unref). */
void hzj_loop_free (HzjLoop *loop);
/** The attribute @name of a loop object (index, first, length, cycle, ...): a new
 *  reference, or NULL when the loop has no such attribute. */
HzjValue *hzj_loop_attr (HzjCtx *ctx, HzjValue *loop, const char *name);
/** The name of a macro value. */
const char *hzj_macro_name (HzjValue *macro);

/* -- lookups and calls (each returns a new reference, NULL after an error) -- */
/** obj.name with Jinja2's sandboxed getattr: a method or attribute first, then the item. */
HzjValue *hzj_getattr (HzjCtx *ctx, HzjValue *obj, const char *name);
/** obj[key] with Jinja2's getitem: the item first, then (for a string key) the attribute;
 *  what is missing is Undefined. */
HzjValue *hzj_getitem (HzjCtx *ctx, HzjValue *obj, HzjValue *key);
/** Calls a function, method, macro or recursive loop. */
HzjValue *hzj_call (HzjCtx *ctx, HzjValue *callee, HzjArgs *args);
/** The items of an iterable as Python iterates them (a list's items, a dict's keys, a
 *  string's characters, nothing for Undefined): an array of references, to read only (a
 *  list's own array is shared); unref it. NULL (TypeError) when @v is not iterable. */
GPtrArray *hzj_iterate (HzjCtx *ctx, HzjValue *v);
/** Jinja2's attribute path of filters (map, selectattr, sort, ...): "a.b.0" looked up
 *  part by part with getitem. */
HzjValue *hzj_get_path (HzjCtx *ctx, HzjValue *obj, HzjValue *path);

/**
 * hzj_args_bind:
 * Binds @args as Python binds a call of `fname(names...)`: positional arguments first,
 * then keywords by name. out[i] gets the argument of names[i] (borrowed) or NULL. The first
 * @n_required names must be given. FALSE (TypeError) for too many arguments, an unknown
 * or repeated keyword, or a missing one.
 */
gboolean hzj_args_bind (HzjCtx *ctx, const char *fname, HzjArgs *args,
                        const char *const *names, guint n_required, HzjValue **out);

/**
 * hzj_render:
 * Renders the BODY @root with the variables of @vars (its parent holds the globals)
 * into @out. FALSE with ctx->error set on error.
 */
gboolean hzj_render (HzjCtx *ctx, const HzjNode *root, HzjScope *vars, HzjBuf *out);

/** Ends a render: breaks the reference cycles of scopes and namespaces still alive. */
void hzj_ctx_finish (HzjCtx *ctx);

G_END_DECLS
