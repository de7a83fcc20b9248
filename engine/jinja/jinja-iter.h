/* engine/jinja/jinja-iter.h — iterating a value as Python's `for` does. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** The items of an iterable as Python iterates them (a list's items, a dict's keys, a
 *  string's characters, nothing for Undefined): an array of references, to read only (a
 *  list's own array is shared); unref it. NULL (TypeError) when @v is not iterable. */
GPtrArray *hzj_iterate (HzjCtx *ctx, HzjValue *v);

G_END_DECLS
