/* engine/jinja/jinja-args.h — the arguments of a built-in (a filter, test, method or
 * global): bound by name as Python binds a call, and integer arguments checked. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/**
 * hzj_args_bind:
 * Binds @args as Python binds a call of `fname(names...)`: positional arguments first,
 * then keywords by name. out[i] gets the argument of names[i] (borrowed) or NULL. The first
 * @n_required names must be given. FALSE (TypeError) for too many arguments, an unknown
 * or repeated keyword, or a missing one.
 */
gboolean hzj_args_bind (HzjCtx *ctx, const char *fname, HzjArgs *args,
                        const char *const *names, guint n_required, HzjValue **out);

/** In a built-in `(HzjCtx *ctx, HzjValue *self, HzjArgs *args)`: binds @args to the
 *  NULL-terminated @names as hzj_args_bind() into a local array `a`, or returns NULL. */
#define HZJ_BIND(fname, names, req)                                                        \
  HzjValue *a[G_N_ELEMENTS (names)];                                                       \
  if (!hzj_args_bind (ctx, fname, args, names, req, a))                                    \
    return NULL

/** An integer argument (int or bool), or a TypeError naming @what. */
gboolean hzj_want_int (HzjCtx *ctx, HzjValue *v, const char *what, gint64 *out);

G_END_DECLS
