/* engine/jinja/jinja-context.c — failing, counting work and calling within one render
 * (see jinja-context.h). */
#include "jinja-context.h"

#include <stdarg.h>

gpointer
hzj_fail (HzjCtx *ctx, int code, const char *pyclass, const char *fmt, ...)
{
  if (ctx->error)
    return NULL;
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  hzj_error_set (&ctx->error, code, pyclass, ctx->line, "%s", msg);
  return NULL;
}

gpointer
hzj_fail_undefined (HzjCtx *ctx, HzjValue *u)
{
  if (u->undef.unsafe)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "SecurityError", "%s", u->undef.hint);
  return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "UndefinedError", "%s",
                   u->undef.hint ? u->undef.hint : "value is undefined");
}

gboolean
hzj_step (HzjCtx *ctx)
{
  return hzj_charge (ctx, 1);
}

gboolean
hzj_charge (HzjCtx *ctx, guint64 units)
{
  if (ctx->error)
    return FALSE;
  ctx->steps += units;
  if (ctx->steps > ctx->max_steps)
    {
      hzj_limit_error (ctx, "the template ran more than %" G_GUINT64_FORMAT " steps "
                       "(an endless or far too long loop)", ctx->max_steps);
      return FALSE;
    }
  return TRUE;
}

gpointer
hzj_fail_size (HzjCtx *ctx)
{
  return hzj_limit_error (ctx, "the output or a string passed %" G_GSIZE_FORMAT " bytes",
                          ctx->max_output);
}

HzjValue *
hzj_buf_finish (HzjCtx *ctx, HzjBuf *b)
{
  if (b->overflow)
    {
      hzj_buf_clear (b);
      return hzj_fail_size (ctx);
    }
  return hzj_str_from_buf (b);
}

HzjValue *
hzj_call (HzjCtx *ctx, HzjValue *callee, HzjArgs *args)
{
  switch (callee->kind)
    {
    case HZJ_FUNC:
      return callee->func.fn (ctx, callee->func.self, args);
    case HZJ_MACRO:
    case HZJ_LOOP:
      return ctx->env->call (ctx, callee, args);
    case HZJ_UNDEFINED:
      return hzj_fail_undefined (ctx, callee);
    default:
      return hzj_type_error (ctx, "'%s' object is not callable", hzj_type_name (callee));
    }
}
