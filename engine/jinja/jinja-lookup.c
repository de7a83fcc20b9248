/* engine/jinja/jinja-lookup.c — getattr, getitem and attribute paths (see
 * jinja-lookup.h). */
#include "jinja-lookup.h"
#include "jinja-loop.h"
#include "jinja-methods.h"

#include <string.h>

static HzjValue *
missing_attr (HzjValue *obj, const char *name)
{
  g_autofree char *type = hzj_object_type_repr (obj);
  return hzj_undefined_new (g_strdup_printf ("'%s' has no attribute '%s'", type, name), FALSE);
}

/* the attribute proper (a method, a namespace or loop attribute), or NULL when there is
 * none; *unsafe_out when the sandbox refuses it */
static HzjValue *
attribute (HzjCtx *ctx, HzjValue *obj, const char *name, gboolean *unsafe_out)
{
  *unsafe_out = FALSE;
  if (g_str_has_prefix (name, "__"))
    {
      *unsafe_out = TRUE;
      return NULL;
    }
  if (obj->kind == HZJ_NAMESPACE)
    return hzj_ref (hzj_dict_get_str (obj->dict, name, strlen (name)));
  if (obj->kind == HZJ_LOOP)
    return hzj_loop_attr (ctx, obj, name);
  return hzj_method_get (obj, name, unsafe_out);
}

static HzjValue *
unsafe_undefined (HzjValue *obj, const char *name)
{
  return hzj_undefined_new (g_strdup_printf ("access to attribute '%s' of '%s' object is unsafe.",
                                             name, hzj_type_name (obj)), TRUE);
}

HzjValue *
hzj_getattr (HzjCtx *ctx, HzjValue *obj, const char *name)
{
  if (obj->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, obj);
  gboolean unsafe;
  HzjValue *v = attribute (ctx, obj, name, &unsafe);
  if (v || ctx->error)
    return v;
  if (unsafe)
    return unsafe_undefined (obj, name);
  if (obj->kind == HZJ_DICT)
    {
      HzjValue *item = hzj_dict_get_str (obj->dict, name, strlen (name));
      if (item)
        return hzj_ref (item);
    }
  return missing_attr (obj, name);
}

HzjValue *
hzj_getitem (HzjCtx *ctx, HzjValue *obj, HzjValue *key)
{
  if (obj->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, obj);
  if (obj->kind == HZJ_DICT && hzj_hashable (key))
    {
      HzjValue *item = hzj_dict_get (obj->dict, key);
      if (item)
        return hzj_ref (item);
    }
  else if ((obj->kind == HZJ_LIST || obj->kind == HZJ_TUPLE || obj->kind == HZJ_STR) &&
           (key->kind == HZJ_INT || key->kind == HZJ_BOOL))
    {
      const gint64 len = obj->kind == HZJ_STR ? hzj_length (obj) : obj->items->len;
      gint64 k = key->kind == HZJ_INT ? key->i : key->b;
      if (k < 0)
        k += len;
      if (k >= 0 && k < len)
        {
          if (obj->kind != HZJ_STR)
            return hzj_ref (obj->items->pdata[k]);
          const gsize from = hzj_utf8_offset (obj->str.s, obj->str.len, (gsize) k);
          gsize n;
          hzj_utf8_get (obj->str.s + from, obj->str.len - from, &n);
          HzjBuf b;
          hzj_buf_init (&b, G_MAXSIZE);
          hzj_buf_append_slice (&b, obj->str.s, obj->str.runs, obj->str.n_runs, from, from + n);
          return hzj_str_from_buf (&b);
        }
    }
  if (key->kind == HZJ_STR)
    {
      gboolean unsafe;
      g_autofree char *name = g_strndup (key->str.s, key->str.len);
      HzjValue *v = attribute (ctx, obj, name, &unsafe);
      if (v || ctx->error)
        return v;
      if (unsafe)
        return unsafe_undefined (obj, name);
      return missing_attr (obj, name);
    }
  g_autofree char *type = hzj_object_type_repr (obj);
  HzjBuf r;
  hzj_buf_init (&r, 256);
  hzj_repr_append (&r, key);
  HzjValue *u = hzj_undefined_new (g_strdup_printf ("%s has no element %s", type, r.text->str), FALSE);
  hzj_buf_clear (&r);
  return u;
}

HzjValue *
hzj_get_path (HzjCtx *ctx, HzjValue *obj, HzjValue *path)
{
  if (path->kind != HZJ_STR)
    return hzj_getitem (ctx, obj, path);
  g_auto (GStrv) parts = g_strsplit (path->str.s, ".", -1);
  HzjValue *cur = hzj_ref (obj);
  for (int i = 0; parts[i] && cur; i++)
    {
      const char *part = parts[i];
      gboolean digits = *part != '\0';
      for (const char *c = part; *c; c++)
        digits &= g_ascii_isdigit (*c);
      g_autoptr (HzjValue) key = digits ? hzj_int (g_ascii_strtoll (part, NULL, 10)) : hzj_cstr (part);
      HzjValue *next = hzj_getitem (ctx, cur, key);
      hzj_unref (cur);
      cur = next;
    }
  return cur;
}
