/* engine/jinja/jinja-methods.c — Python's str, dict and list methods (see jinja-methods.h). */
#include "jinja-methods.h"
#include "jinja-args.h"
#include "jinja-format.h"
#include "jinja-iter.h"
#include "jinja-str.h"

#include <string.h>

/* ---- str methods ---- */

static gboolean
want_str (HzjCtx *ctx, HzjValue *v, const char *fname)
{
  if (v->kind == HZJ_STR)
    return TRUE;
  if (v->kind == HZJ_UNDEFINED)
    hzj_fail_undefined (ctx, v);
  else
    hzj_type_error (ctx, "%s(): must be str, not %s", fname, hzj_type_name (v));
  return FALSE;
}

static HzjValue *
m_strip (HzjCtx *ctx, HzjValue *self, HzjArgs *args, const char *fname, gboolean l, gboolean r)
{
  static const char *const names[] = { "chars", NULL };
  HZJ_BIND (fname, names, 0);
  if (a[0] && a[0]->kind != HZJ_NONE && !want_str (ctx, a[0], fname))
    return NULL;
  return hzj_str_strip (self, a[0], l, r);
}

HZJ_VARIANT (m_strip_both, m_strip, "strip", TRUE, TRUE)
HZJ_VARIANT (m_lstrip, m_strip, "lstrip", TRUE, FALSE)
HZJ_VARIANT (m_rstrip, m_strip, "rstrip", FALSE, TRUE)

static HzjValue *
m_case (HzjCtx *ctx, HzjValue *self, HzjArgs *args, HzjCase mode)
{
  if (args->n_pos || args->n_kw)
    return hzj_type_error (ctx, "str method takes no arguments");
  return hzj_str_case (self, mode);
}

HZJ_VARIANT (m_upper, m_case, HZJ_CASE_UPPER)
HZJ_VARIANT (m_lower, m_case, HZJ_CASE_LOWER)
HZJ_VARIANT (m_title, m_case, HZJ_CASE_TITLE)
HZJ_VARIANT (m_capitalize, m_case, HZJ_CASE_CAPITALIZE)
HZJ_VARIANT (m_swapcase, m_case, HZJ_CASE_SWAPCASE)

static HzjValue *
m_split_any (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean right)
{
  static const char *const names[] = { "sep", "maxsplit", NULL };
  HZJ_BIND (right ? "rsplit" : "split", names, 0);
  gint64 max = -1;
  if (a[0] && a[0]->kind != HZJ_NONE && !want_str (ctx, a[0], "split"))
    return NULL;
  if (a[1] && !hzj_want_int (ctx, a[1], "maxsplit", &max))
    return NULL;
  return hzj_str_split (ctx, self, a[0], max, right);
}

HZJ_VARIANT (m_split, m_split_any, FALSE)
HZJ_VARIANT (m_rsplit, m_split_any, TRUE)

static HzjValue *
m_splitlines (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  static const char *const names[] = { "keepends", NULL };
  HZJ_BIND ("splitlines", names, 0);
  const gboolean keep = a[0] && hzj_truthy (a[0]);
  HzjValue *out = hzj_list_new (FALSE);
  const char *t = self->str.s;
  const gsize len = self->str.len;
  gsize start = 0;
  for (gsize k = 0; k < len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (t + k, len - k, &n);
      const gboolean brk = c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e) ||
                           c == 0x85 || c == 0x2028 || c == 0x2029;
      if (!brk)
        {
          k += n;
          continue;
        }
      gsize end = k + n;
      if (c == '\r' && end < len && t[end] == '\n')
        end++;
      hzj_list_push (out, hzj_str_sub (self, start, keep ? end : k));
      k = start = end;
    }
  if (start < len)
    hzj_list_push (out, hzj_str_sub (self, start, len));
  return out;
}

/* code point index -> byte offset, Python's negative indices and clamping */
static gsize
cp_bound (HzjValue *s, HzjValue *v, gsize dflt)
{
  if (!v || v->kind == HZJ_NONE || (v->kind != HZJ_INT && v->kind != HZJ_BOOL))
    return dflt;
  const gint64 n = (gint64) hzj_utf8_count (s->str.s, s->str.len);
  gint64 i = v->kind == HZJ_INT ? v->i : v->b;
  if (i < 0)
    i = MAX (0, i + n);
  return hzj_utf8_offset (s->str.s, s->str.len, (gsize) MIN (i, n));
}

static HzjValue *
m_affix (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean end)
{
  static const char *const names[] = { "prefix", "start", "end", NULL };
  HZJ_BIND (end ? "endswith" : "startswith", names, 1);
  const gsize from = cp_bound (self, a[1], 0), to = MAX (from, cp_bound (self, a[2], self->str.len));
  GPtrArray one = { .pdata = (gpointer *) &a[0], .len = 1 };
  GPtrArray *cands = a[0]->kind == HZJ_TUPLE ? a[0]->items : &one;
  for (guint i = 0; i < cands->len; i++)
    {
      HzjValue *p = cands->pdata[i];
      if (p->kind != HZJ_STR)
        return hzj_type_error (ctx, "%s first arg must be str or a tuple of str, not %s",
                               end ? "endswith" : "startswith", hzj_type_name (p));
      if (p->str.len <= to - from &&
          memcmp (self->str.s + (end ? to - p->str.len : from), p->str.s, p->str.len) == 0)
        return hzj_bool (TRUE);
    }
  return hzj_bool (FALSE);
}

HZJ_VARIANT (m_startswith, m_affix, FALSE)
HZJ_VARIANT (m_endswith, m_affix, TRUE)

static HzjValue *
m_replace (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  static const char *const names[] = { "old", "new", "count", NULL };
  HZJ_BIND ("replace", names, 2);
  gint64 count = -1;
  if (!want_str (ctx, a[0], "replace") || !want_str (ctx, a[1], "replace") ||
      (a[2] && !hzj_want_int (ctx, a[2], "count", &count)))
    return NULL;
  return hzj_str_replace (ctx, self, a[0], a[1], count);
}

/* find / rfind / index / rindex / count */
static HzjValue *
m_search (HzjCtx *ctx, HzjValue *self, HzjArgs *args, const char *fname)
{
  static const char *const names[] = { "sub", "start", "end", NULL };
  HZJ_BIND (fname, names, 1);
  if (!want_str (ctx, a[0], fname))
    return NULL;
  const gsize from = cp_bound (self, a[1], 0), to = MAX (from, cp_bound (self, a[2], self->str.len));
  const char *t = self->str.s;
  const gsize n = a[0]->str.len;
  const gboolean right = fname[0] == 'r';
  if (!strcmp (fname, "count"))
    {
      gint64 c = 0;
      if (n == 0)
        return hzj_int ((gint64) hzj_utf8_count (t + from, to - from) + 1);
      for (gsize k = from; k + n <= to;)
        if (memcmp (t + k, a[0]->str.s, n) == 0)
          c++, k += n;
        else
          k++;
      return hzj_int (c);
    }
  gssize hit = -1;
  if (n <= to - from)
    {
      if (right)
        {
          for (gssize k = (gssize) (to - n); k >= (gssize) from && hit < 0; k--)
            if (memcmp (t + k, a[0]->str.s, n) == 0)
              hit = k;
        }
      else
        {
          const char *h = hzj_bytes_find (t + from, to - from, a[0]->str.s, n);
          hit = h ? h - t : -1;
        }
    }
  if (hit < 0 && strstr (fname, "index"))
    return hzj_value_error (ctx, "substring not found");
  return hzj_int (hit < 0 ? -1 : (gint64) hzj_utf8_count (t, (gsize) hit));
}

HZJ_VARIANT (m_find, m_search, "find")
HZJ_VARIANT (m_rfind, m_search, "rfind")
HZJ_VARIANT (m_index, m_search, "index")
HZJ_VARIANT (m_rindex, m_search, "rindex")
HZJ_VARIANT (m_count, m_search, "count")

static HzjValue *
m_join (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  static const char *const names[] = { "iterable", NULL };
  HZJ_BIND ("join", names, 1);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, a[0]);
  return items ? hzj_str_join (ctx, self, items, FALSE) : NULL;
}

static HzjValue *
m_format (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  return hzj_str_format (ctx, self, args);
}

/* isdigit, isalpha, ...: every character passes (and there is at least one) */
static HzjValue *
m_is (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean (*pred) (gunichar))
{
  if (args->n_pos || args->n_kw)
    return hzj_type_error (ctx, "str method takes no arguments");
  if (self->str.len == 0)
    return hzj_bool (FALSE);
  for (gsize k = 0; k < self->str.len;)
    {
      gsize n;
      if (!pred (hzj_utf8_get (self->str.s + k, self->str.len - k, &n)))
        return hzj_bool (FALSE);
      k += n;
    }
  return hzj_bool (TRUE);
}

static gboolean is_alnum (gunichar c) { return g_unichar_isalnum (c); }
static gboolean is_alpha (gunichar c) { return g_unichar_isalpha (c); }
static gboolean is_digit (gunichar c) { return g_unichar_isdigit (c); }
static gboolean is_space (gunichar c) { return hzj_unichar_is_py_space (c); }
HZJ_VARIANT (m_isalnum, m_is, is_alnum)
HZJ_VARIANT (m_isalpha, m_is, is_alpha)
HZJ_VARIANT (m_isdigit, m_is, is_digit)
HZJ_VARIANT (m_isspace, m_is, is_space)

/* isupper / islower: some cased character, none of the other case */
static HzjValue *
m_iscase (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean upper)
{
  (void) ctx;
  (void) args;
  gboolean cased = FALSE;
  for (gsize k = 0; k < self->str.len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (self->str.s + k, self->str.len - k, &n);
      if ((upper && (g_unichar_islower (c) || g_unichar_istitle (c))) ||
          (!upper && (g_unichar_isupper (c) || g_unichar_istitle (c))))
        return hzj_bool (FALSE);
      cased |= hzj_unichar_is_cased (c);
      k += n;
    }
  return hzj_bool (cased);
}

HZJ_VARIANT (m_isupper, m_iscase, TRUE)
HZJ_VARIANT (m_islower, m_iscase, FALSE)

static HzjValue *
m_affix_remove (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean suffix)
{
  static const char *const names[] = { "affix", NULL };
  HZJ_BIND (suffix ? "removesuffix" : "removeprefix", names, 1);
  if (!want_str (ctx, a[0], suffix ? "removesuffix" : "removeprefix"))
    return NULL;
  const gsize n = a[0]->str.len, len = self->str.len;
  if (n == 0 || n > len || memcmp (self->str.s + (suffix ? len - n : 0), a[0]->str.s, n) != 0)
    return hzj_ref (self);
  return suffix ? hzj_str_sub (self, 0, len - n) : hzj_str_sub (self, n, len);
}

HZJ_VARIANT (m_removeprefix, m_affix_remove, FALSE)
HZJ_VARIANT (m_removesuffix, m_affix_remove, TRUE)

static HzjValue *
m_partition_any (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean right)
{
  static const char *const names[] = { "sep", NULL };
  HZJ_BIND (right ? "rpartition" : "partition", names, 1);
  if (!want_str (ctx, a[0], "partition"))
    return NULL;
  if (a[0]->str.len == 0)
    return hzj_value_error (ctx, "empty separator");
  g_autoptr (HzjValue) parts = hzj_str_split (ctx, self, a[0], 1, right);
  HzjValue *out = hzj_list_new (TRUE);
  if (parts->items->len == 2)
    {
      hzj_list_push (out, hzj_ref (parts->items->pdata[0]));
      hzj_list_push (out, hzj_ref (a[0]));
      hzj_list_push (out, hzj_ref (parts->items->pdata[1]));
    }
  else
    {
      HzjValue *empty = hzj_str ("", 0, FALSE);
      hzj_list_push (out, right ? hzj_ref (empty) : hzj_ref (self));
      hzj_list_push (out, hzj_ref (empty));
      hzj_list_push (out, right ? hzj_ref (self) : hzj_ref (empty));
      hzj_unref (empty);
    }
  return out;
}

HZJ_VARIANT (m_partition, m_partition_any, FALSE)
HZJ_VARIANT (m_rpartition, m_partition_any, TRUE)

/* center / ljust / rjust / zfill */
static HzjValue *
m_pad (HzjCtx *ctx, HzjValue *self, HzjArgs *args, char how)
{
  static const char *const names[] = { "width", "fillchar", NULL };
  HZJ_BIND (how == 'c' ? "center" : how == 'l' ? "ljust" : how == 'r' ? "rjust" : "zfill", names, 1);
  gint64 width;
  if (!hzj_want_int (ctx, a[0], "width", &width))
    return NULL;
  const char *fill = " ";
  gsize fill_len = 1;
  if (a[1])
    {
      if (a[1]->kind != HZJ_STR || hzj_utf8_count (a[1]->str.s, a[1]->str.len) != 1)
        return hzj_type_error (ctx, "The fill character must be exactly one character long");
      fill = a[1]->str.s;
      fill_len = a[1]->str.len;
    }
  const gint64 len = (gint64) hzj_utf8_count (self->str.s, self->str.len);
  if (width <= len)
    return hzj_ref (self);
  if ((guint64) width > ctx->max_output)
    return hzj_fail_size (ctx);
  const gint64 pad = width - len;
  gint64 left = how == 'l' ? 0 : how == 'c' ? pad / 2 + (pad & width & 1) : pad;
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  gsize body = 0;
  if (how == 'z')
    {
      fill = "0";
      if (self->str.len && (self->str.s[0] == '+' || self->str.s[0] == '-'))
        {
          hzj_buf_append_slice (&b, self->str.s, self->str.runs, self->str.n_runs, 0, 1);
          body = 1;
        }
    }
  for (gint64 i = 0; i < left; i++)
    hzj_buf_append (&b, fill, fill_len, FALSE);
  hzj_buf_append_slice (&b, self->str.s, self->str.runs, self->str.n_runs, body, self->str.len);
  for (gint64 i = left; i < pad; i++)
    hzj_buf_append (&b, fill, fill_len, FALSE);
  return hzj_str_from_buf (&b);
}

HZJ_VARIANT (m_center, m_pad, 'c')
HZJ_VARIANT (m_ljust, m_pad, 'l')
HZJ_VARIANT (m_rjust, m_pad, 'r')
HZJ_VARIANT (m_zfill, m_pad, 'z')

/* ---- dict and list methods ---- */

static HzjValue *
d_view (HzjCtx *ctx, HzjValue *self, HzjArgs *args, char which)
{
  if (args->n_pos || args->n_kw)
    return hzj_type_error (ctx, "dict method takes no arguments");
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < self->dict->keys->len; i++)
    {
      HzjValue *k = self->dict->keys->pdata[i], *v = self->dict->vals->pdata[i];
      if (which == 'i')
        {
          HzjValue *pair = hzj_list_new (TRUE);
          hzj_list_push (pair, hzj_ref (k));
          hzj_list_push (pair, hzj_ref (v));
          hzj_list_push (out, pair);
        }
      else
        hzj_list_push (out, hzj_ref (which == 'k' ? k : v));
    }
  return out;
}

HZJ_VARIANT (d_items, d_view, 'i')
HZJ_VARIANT (d_keys, d_view, 'k')
HZJ_VARIANT (d_values, d_view, 'v')

static HzjValue *
d_get (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  static const char *const names[] = { "key", "default", NULL };
  HZJ_BIND ("get", names, 1);
  if (!hzj_hashable (a[0]))
    return hzj_type_error (ctx, "unhashable type: '%s'", hzj_type_name (a[0]));
  HzjValue *v = hzj_dict_get (self->dict, a[0]);
  return hzj_ref (v ? v : a[1] ? a[1] : hzj_none ());
}

static HzjValue *
copy (HzjCtx *ctx, HzjValue *self, HzjArgs *args)
{
  (void) ctx;
  (void) args;
  if (self->kind == HZJ_DICT)
    {
      HzjValue *out = hzj_dict_new ();
      for (guint i = 0; i < self->dict->keys->len; i++)
        hzj_dict_set (out, hzj_ref (self->dict->keys->pdata[i]), hzj_ref (self->dict->vals->pdata[i]));
      return out;
    }
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < self->items->len; i++)
    hzj_list_push (out, hzj_ref (self->items->pdata[i]));
  return out;
}

static HzjValue *
l_search (HzjCtx *ctx, HzjValue *self, HzjArgs *args, gboolean index)
{
  static const char *const names[] = { "value", NULL };
  HZJ_BIND (index ? "index" : "count", names, 1);
  gint64 count = 0;
  for (guint i = 0; i < self->items->len; i++)
    if (hzj_equal (self->items->pdata[i], a[0]))
      {
        if (index)
          return hzj_int (i);
        count++;
      }
  if (index)
    return hzj_value_error (ctx, "value is not in %s", hzj_type_name (self));
  return hzj_int (count);
}

HZJ_VARIANT (l_index, l_search, TRUE)
HZJ_VARIANT (l_count, l_search, FALSE)

typedef struct {
  const char *name;
  HzjFn fn; /* NULL: exists, refused by the sandbox */
} Method;

static const Method str_methods[] = {
  { "strip", m_strip_both }, { "lstrip", m_lstrip }, { "rstrip", m_rstrip },
  { "upper", m_upper }, { "lower", m_lower }, { "title", m_title },
  { "capitalize", m_capitalize }, { "swapcase", m_swapcase }, { "casefold", m_lower },
  { "split", m_split }, { "rsplit", m_rsplit }, { "splitlines", m_splitlines },
  { "startswith", m_startswith }, { "endswith", m_endswith }, { "replace", m_replace },
  { "find", m_find }, { "rfind", m_rfind }, { "index", m_index }, { "rindex", m_rindex },
  { "count", m_count }, { "join", m_join }, { "format", m_format },
  { "isalnum", m_isalnum }, { "isalpha", m_isalpha }, { "isdigit", m_isdigit },
  { "isdecimal", m_isdigit }, { "isnumeric", m_isdigit }, { "isspace", m_isspace },
  { "isupper", m_isupper }, { "islower", m_islower },
  { "removeprefix", m_removeprefix }, { "removesuffix", m_removesuffix },
  { "partition", m_partition }, { "rpartition", m_rpartition },
  { "center", m_center }, { "ljust", m_ljust }, { "rjust", m_rjust }, { "zfill", m_zfill },
  { NULL, NULL }
};

static const Method dict_methods[] = {
  { "items", d_items }, { "keys", d_keys }, { "values", d_values }, { "get", d_get },
  { "copy", copy },
  { "clear", NULL }, { "pop", NULL }, { "popitem", NULL }, { "setdefault", NULL }, { "update", NULL },
  { NULL, NULL }
};

static const Method list_methods[] = {
  { "index", l_index }, { "count", l_count }, { "copy", copy },
  { "append", NULL }, { "clear", NULL }, { "pop", NULL }, { "reverse", NULL }, { "insert", NULL },
  { "sort", NULL }, { "extend", NULL }, { "remove", NULL },
  { NULL, NULL }
};

static const Method tuple_methods[] = {
  { "index", l_index }, { "count", l_count },
  { NULL, NULL }
};

HzjValue *
hzj_method_get (HzjValue *obj, const char *name, gboolean *unsafe)
{
  *unsafe = FALSE;
  const Method *table = obj->kind == HZJ_STR ? str_methods : obj->kind == HZJ_DICT ? dict_methods
                        : obj->kind == HZJ_LIST ? list_methods : obj->kind == HZJ_TUPLE ? tuple_methods
                        : NULL;
  for (const Method *m = table; m && m->name; m++)
    if (!strcmp (m->name, name))
      {
        if (!m->fn)
          {
            *unsafe = TRUE;
            return NULL;
          }
        return hzj_func_new (m->fn, obj, name);
      }
  return NULL;
}
