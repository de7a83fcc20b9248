/* engine/jinja/jinja-builtins.c — the globals of a chat template (see jinja-builtins.h):
 * Jinja2's range (the sandbox's safe_range), namespace and dict, and transformers'
 * raise_exception and strftime_now. */
#include "jinja-builtins.h"
#include "jinja-args.h"
#include "jinja-iter.h"
#include "jinja-scope.h"

#include <locale.h>
#include <string.h>
#include <time.h>

/* jinja2.sandbox.MAX_RANGE */
#define MAX_RANGE 100000

static HzjValue *
g_range (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) self;
  if (args->n_kw)
    return hzj_type_error (ctx, "range() takes no keyword arguments");
  if (args->n_pos < 1 || args->n_pos > 3)
    return hzj_type_error (ctx, "range expected 1 to 3 arguments, got %u", args->n_pos);
  gint64 v[3] = { 0, 0, 1 };
  for (guint i = 0; i < args->n_pos; i++)
    {
      HzjValue *a = args->pos[i];
      if (a->kind != HZJ_INT && a->kind != HZJ_BOOL)
        {
          if (a->kind == HZJ_UNDEFINED)
            return hzj_fail_undefined (ctx, a);
          return hzj_type_error (ctx, "'%s' object cannot be interpreted as an integer", hzj_type_name (a));
        }
      v[args->n_pos == 1 ? 1 : i] = a->kind == HZJ_INT ? a->i : a->b;
    }
  const gint64 start = v[0], stop = v[1], step = v[2];
  if (step == 0)
    return hzj_value_error (ctx, "range() arg 3 must not be zero");
  /* length without overflow */
  guint64 len = 0;
  if (step > 0 && start < stop)
    len = ((guint64) stop - (guint64) start - 1) / (guint64) step + 1;
  else if (step < 0 && start > stop)
    len = ((guint64) start - (guint64) stop - 1) / ((guint64) 0 - (guint64) step) + 1;
  if (len > MAX_RANGE)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "OverflowError",
                     "Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", MAX_RANGE);
  if (!hzj_charge (ctx, len)) /* (Python's range is lazy; this one is a list) */
    return NULL;
  HzjValue *out = hzj_list_new (FALSE);
  for (guint64 k = 0; k < len; k++)
    hzj_list_push (out, hzj_int (start + (gint64) k * step));
  return out;
}

/* dict(*args, **kwargs) into d: a mapping or pairs, then the keywords */
static gboolean
fill_dict (HzjCtx *ctx, HzjValue *d, HzjArgs *args, const char *fname)
{
  if (args->n_pos > 1)
    return hzj_type_error (ctx, "%s expected at most 1 argument, got %u", fname, args->n_pos) != NULL;
  if (args->n_pos == 1)
    {
      HzjValue *src = args->pos[0];
      if (src->kind == HZJ_DICT)
        for (guint i = 0; i < src->dict->keys->len; i++)
          hzj_dict_set (d, hzj_ref (src->dict->keys->pdata[i]), hzj_ref (src->dict->vals->pdata[i]));
      else
        {
          g_autoptr (GPtrArray) items = hzj_iterate (ctx, src);
          if (!items)
            return FALSE;
          for (guint i = 0; i < items->len; i++)
            {
              HzjValue *pair = items->pdata[i];
              if ((pair->kind != HZJ_LIST && pair->kind != HZJ_TUPLE) || pair->items->len != 2)
                return hzj_value_error (ctx, "dictionary update sequence element #%u has the wrong length", i) != NULL;
              if (!hzj_hashable (pair->items->pdata[0]))
                return hzj_type_error (ctx, "unhashable type: '%s'", hzj_type_name (pair->items->pdata[0])) != NULL;
              hzj_dict_set (d, hzj_ref (pair->items->pdata[0]), hzj_ref (pair->items->pdata[1]));
            }
        }
    }
  for (guint i = 0; i < args->n_kw; i++)
    hzj_dict_set (d, hzj_cstr (args->kw_names[i]), hzj_ref (args->kw_vals[i]));
  return TRUE;
}

static HzjValue *
g_dict (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) self;
  HzjValue *d = hzj_dict_new ();
  if (!fill_dict (ctx, d, args, "dict"))
    g_clear_pointer (&d, hzj_unref);
  return d;
}

static HzjValue *
g_namespace (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) self;
  HzjValue *ns = hzj_namespace_new ();
  g_ptr_array_add (ctx->namespaces, hzj_ref (ns)); /* emptied at the end of the render */
  if (!fill_dict (ctx, ns, args, "Namespace"))
    g_clear_pointer (&ns, hzj_unref);
  return ns;
}

static HzjValue *
g_raise_exception (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) self;
  static const char *const names[] = { "message", NULL };
  HzjValue *a[1];
  if (!hzj_args_bind (ctx, "raise_exception", args, names, 1, a))
    return NULL;
  g_autoptr (HzjValue) msg = hzj_to_str (a[0], ctx->max_output);
  return hzj_fail (ctx, HZ_JINJA_ERROR_RAISED, "TemplateError", "%s", msg ? msg->str.s : "(message too long)");
}

/* datetime.now().strftime(fmt): %f is 000000 (whole seconds), %z and %Z are empty (a naive
 * datetime), the rest is C's strftime in the C locale */
static HzjValue *
g_strftime_now (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) self;
  static const char *const names[] = { "format", NULL };
  HzjValue *a[1];
  if (!hzj_args_bind (ctx, "strftime_now", args, names, 1, a))
    return NULL;
  if (a[0]->kind != HZJ_STR)
    return hzj_type_error (ctx, "strftime() argument 1 must be str, not %s", hzj_type_name (a[0]));
  GString *fmt = g_string_new (NULL);
  const char *f = a[0]->str.s;
  for (gsize k = 0; k < a[0]->str.len; k++)
    {
      if (f[k] == '%' && k + 1 < a[0]->str.len)
        {
          const char c = f[++k];
          if (c == 'f')
            g_string_append (fmt, "000000");
          else if (c != 'z' && c != 'Z')
            g_string_append_c (fmt, '%'), g_string_append_c (fmt, c);
          continue;
        }
      g_string_append_c (fmt, f[k]);
    }
  const time_t now = (time_t) ctx->now;
  struct tm tm;
  localtime_r (&now, &tm);
  locale_t c_locale = newlocale (LC_ALL_MASK, "C", (locale_t) 0);
  gsize cap = 64 + fmt->len * 8;
  HzjValue *out = NULL;
  while (!out && cap < 65536)
    {
      g_autofree char *buf = g_malloc (cap);
      const gsize n = strftime_l (buf, cap, fmt->str, &tm, c_locale);
      if (n > 0 || fmt->len == 0)
        out = hzj_str (buf, n, FALSE);
      cap *= 4;
    }
  freelocale (c_locale);
  g_string_free (fmt, TRUE);
  return out ? out : hzj_str ("", 0, FALSE);
}

void
hzj_globals_install (HzjScope *s)
{
  static const struct { const char *name; HzjFn fn; } globals[] = {
    { "range", g_range }, { "dict", g_dict }, { "namespace", g_namespace },
    { "raise_exception", g_raise_exception }, { "strftime_now", g_strftime_now },
  };
  for (guint i = 0; i < G_N_ELEMENTS (globals); i++)
    hzj_scope_set (s, globals[i].name, hzj_func_new (globals[i].fn, NULL, globals[i].name));
}
