/* engine/jinja/jinja-args.c — argument binding and integer arguments (see jinja-args.h). */
#include "jinja-args.h"

#include <string.h>

gboolean
hzj_args_bind (HzjCtx *ctx, const char *fname, HzjArgs *args, const char *const *names,
               guint n_required, HzjValue **out)
{
  guint n = 0;
  while (names[n])
    n++;
  for (guint i = 0; i < n; i++)
    out[i] = NULL;
  if (args->n_pos > n)
    {
      hzj_type_error (ctx, "%s() takes at most %u argument%s (%u given)", fname, n, n == 1 ? "" : "s",
                      args->n_pos);
      return FALSE;
    }
  for (guint i = 0; i < args->n_pos; i++)
    out[i] = args->pos[i];
  for (guint k = 0; k < args->n_kw; k++)
    {
      guint i = 0;
      while (i < n && strcmp (names[i], args->kw_names[k]) != 0)
        i++;
      if (i == n)
        {
          hzj_type_error (ctx, "%s() got an unexpected keyword argument '%s'", fname, args->kw_names[k]);
          return FALSE;
        }
      if (out[i])
        {
          hzj_type_error (ctx, "%s() got multiple values for argument '%s'", fname, names[i]);
          return FALSE;
        }
      out[i] = args->kw_vals[k];
    }
  for (guint i = 0; i < n_required; i++)
    if (!out[i])
      {
        hzj_type_error (ctx, "%s() missing required argument '%s'", fname, names[i]);
        return FALSE;
      }
  return TRUE;
}

gboolean
hzj_want_int (HzjCtx *ctx, HzjValue *v, const char *what, gint64 *out)
{
  if (v->kind == HZJ_INT)
    *out = v->i;
  else if (v->kind == HZJ_BOOL)
    *out = v->b;
  else
    {
      if (v->kind == HZJ_UNDEFINED)
        return hzj_fail_undefined (ctx, v) != NULL;
      hzj_type_error (ctx, "%s must be an integer, not '%s'", what, hzj_type_name (v));
      return FALSE;
    }
  return TRUE;
}
