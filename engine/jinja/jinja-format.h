/* engine/jinja/jinja-format.h — Python's string formatting of template values: str.format()
 * with the format specification mini-language, and the printf-style % operator. Every
 * string result keeps the tagging of the text it came from. str.format() looks its fields'
 * attributes and items up through the context's environment (ctx->env->getattr, getitem),
 * as Jinja2's SandboxedFormatter uses its environment's. */
#pragma once

#include "jinja-context.h"

G_BEGIN_DECLS

/** Python's str.format(*args, **kwargs) of the format string @fmt. */
HzjValue *hzj_str_format (HzjCtx *ctx, HzjValue *fmt, HzjArgs *args);
/** Python's `fmt % args` (printf-style: %s %r %d %i %f %e %g %x %o %c %%, flags, width,
 *  precision, %(name)s with a dict). */
HzjValue *hzj_str_percent (HzjCtx *ctx, HzjValue *fmt, HzjValue *args);

G_END_DECLS
