/* engine/jinja/jinja-iter.c — iteration (see jinja-iter.h). */
#include "jinja-iter.h"

GPtrArray *
hzj_iterate (HzjCtx *ctx, HzjValue *v)
{
  if (v->kind == HZJ_LIST || v->kind == HZJ_TUPLE)
    return g_ptr_array_ref (v->items); /* lists never change: share the array */
  GPtrArray *items = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  switch (v->kind)
    {
    case HZJ_DICT:
      if (!hzj_charge (ctx, v->dict->keys->len))
        break;
      for (guint i = 0; i < v->dict->keys->len; i++)
        g_ptr_array_add (items, hzj_ref (v->dict->keys->pdata[i]));
      return items;
    case HZJ_STR:
      /* a string's characters are new values: charged before they are made */
      if (!hzj_charge (ctx, v->str.len))
        break;
      for (gsize k = 0; k < v->str.len;)
        {
          gsize n;
          hzj_utf8_get (v->str.s + k, v->str.len - k, &n);
          HzjBuf b;
          hzj_buf_init (&b, G_MAXSIZE);
          hzj_buf_append_slice (&b, v->str.s, v->str.runs, v->str.n_runs, k, k + n);
          g_ptr_array_add (items, hzj_str_from_buf (&b));
          k += n;
        }
      return items;
    case HZJ_UNDEFINED:
      if (v->undef.unsafe)
        break;
      return items;
    default:
      break;
    }
  g_ptr_array_unref (items);
  if (ctx->error)
    return NULL;
  if (v->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, v);
  return hzj_type_error (ctx, "'%s' object is not iterable", hzj_type_name (v));
}
