/* engine/jinja/jinja-context.h — one render's context (HzjCtx): the first error, the bounds
 * (steps, output size, macro depth) and how every module fails or counts its work; calling
 * a callable; and the environment (HzjEnv) that the evaluator installs, through which the
 * floors below it reach what sits above them.
 *
 * The environment is dependency inversion, as in Jinja2 itself: a filter that calls a
 * macro goes through Context.call, the sandbox's str.format looks fields up with its
 * environment's getattr and getitem (SandboxedFormatter), and the `filter` test asks the
 * environment's filters. One HzjCtx per render, on one thread. */
#pragma once

#include <glib.h>
#include "jinja-error.h"
#include "jinja-value.h"

G_BEGIN_DECLS

/**
 * HzjEnv:
 * @call: calls a macro or a recursive loop (the evaluator's; hzj_call() passes them on)
 * @getattr: obj.name with the sandbox's rules (jinja-lookup.h)
 * @getitem: obj[key] with the sandbox's rules (jinja-lookup.h)
 * @filter_exists: whether a filter of that name exists (jinja-filters.h)
 *
 * What the evaluator installs in the context (hzj_render()) for the floors below it.
 * Each returns as the function it stands for.
 */
typedef struct {
  HzjValue *(*call) (HzjCtx *ctx, HzjValue *callee, HzjArgs *args);
  HzjValue *(*getattr) (HzjCtx *ctx, HzjValue *obj, const char *name);
  HzjValue *(*getitem) (HzjCtx *ctx, HzjValue *obj, HzjValue *key);
  gboolean (*filter_exists) (const char *name);
} HzjEnv;

struct _HzjCtx {
  const HzjEnv *env;    /* set by hzj_render() */
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

/** The string a builder made (@b is cleared), or the size error when it overflowed. */
HzjValue *hzj_buf_finish (HzjCtx *ctx, HzjBuf *b);

/** Calls a built-in function or bound method, or (through ctx->env->call) a macro or a
 *  recursive loop: a new reference, NULL after an error (calling Undefined raises its
 *  error; anything else is not callable, a TypeError). */
HzjValue *hzj_call (HzjCtx *ctx, HzjValue *callee, HzjArgs *args);

/** Defines the built-in @name as @fn with extra arguments (for the families of methods
 *  and filters that differ by a flag: lstrip / rstrip, upper / lower, ...). */
#define HZJ_VARIANT(name, fn, ...)                                                         \
  static HzjValue *name (HzjCtx *ctx_, HzjValue *self_, HzjArgs *args_)                    \
  {                                                                                        \
    return fn (ctx_, self_, args_, __VA_ARGS__);                                           \
  }

G_END_DECLS
