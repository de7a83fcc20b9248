/* engine/jinja/jinja-filters.c — Jinja2 3.1's filters (see jinja-filters.h); each follows
 * the function of the same name in jinja2/filters.py. */
#include "jinja-filters.h"
#include "jinja-args.h"
#include "jinja-format.h"
#include "jinja-iter.h"
#include "jinja-json.h"
#include "jinja-lookup.h"
#include "jinja-loop.h"
#include "jinja-methods.h"
#include "jinja-ops.h"
#include "jinja-str.h"
#include "jinja-tests.h"

#include <math.h>
#include <string.h>

/* str(v) (Undefined is ""), NULL past max_output */
static HzjValue *
soft_str (HzjCtx *ctx, HzjValue *v)
{
  HzjValue *s = hzj_to_str (v, ctx->max_output);
  return s ? s : hzj_fail_size (ctx);
}

static HzjValue *
empty_args_call (HzjCtx *ctx, HzjValue *obj, const char *method, HzjValue **pos, guint n_pos)
{
  gboolean unsafe;
  g_autoptr (HzjValue) m = hzj_method_get (obj, method, &unsafe);
  HzjArgs args = { .pos = pos, .n_pos = n_pos };
  return m ? hzj_call (ctx, m, &args) : hzj_type_error (ctx, "no method %s", method);
}

/* Jinja2's ignore_case: strings compare lower-cased unless case_sensitive */
static HzjValue *
sort_key (HzjCtx *ctx, HzjValue *item, HzjValue *attribute, gboolean case_sensitive)
{
  HzjValue *k = attribute ? hzj_get_path (ctx, item, attribute) : hzj_ref (item);
  if (k && k->kind == HZJ_STR && !case_sensitive)
    {
      HzjValue *low = hzj_str_case (k, HZJ_CASE_LOWER);
      hzj_unref (k);
      k = low;
    }
  return k;
}

typedef struct {
  HzjValue *key, *item;
} Keyed;

typedef struct {
  gboolean bad;
  HzjValue *x, *y;
} SortState;

static int
cmp_keyed (gconstpointer pa, gconstpointer pb, gpointer user)
{
  const Keyed *a = *(Keyed *const *) pa, *b = *(Keyed *const *) pb;
  SortState *st = user;
  int c = 0;
  if ((a->key->kind == HZJ_UNDEFINED || b->key->kind == HZJ_UNDEFINED) && !st->bad)
    {
      st->bad = TRUE;
      st->x = a->key;
      st->y = b->key;
    }
  else if (!hzj_compare (a->key, b->key, &c) && !st->bad)
    {
      st->bad = TRUE;
      st->x = a->key;
      st->y = b->key;
    }
  return c;
}

static void
reverse_array (GPtrArray *a)
{
  for (guint i = 0, j = a->len; i + 1 < j; i++, j--)
    {
      gpointer t = a->pdata[i];
      a->pdata[i] = a->pdata[j - 1];
      a->pdata[j - 1] = t;
    }
}

static void
keyed_free (gpointer p)
{
  Keyed *k = p;
  hzj_unref (k->key);
  hzj_unref (k->item);
  g_free (k);
}

/* the items of v keyed (attribute path, case folding), sorted stably; NULL on error */
static GPtrArray *
sorted_keyed (HzjCtx *ctx, GPtrArray *items, HzjValue *attribute, gboolean case_sensitive,
              gboolean reverse)
{
  GPtrArray *keyed = g_ptr_array_new_with_free_func (keyed_free);
  for (guint i = 0; i < items->len; i++)
    {
      Keyed *k = g_new0 (Keyed, 1);
      k->item = hzj_ref (items->pdata[i]);
      g_ptr_array_add (keyed, k);
      if (!(k->key = sort_key (ctx, items->pdata[i], attribute, case_sensitive)))
        {
          g_ptr_array_unref (keyed);
          return NULL;
        }
    }
  SortState st = { 0 };
  if (reverse)
    reverse_array (keyed); /* Python's sorted(reverse=True) keeps equal items in order */
  g_ptr_array_sort_with_data (keyed, cmp_keyed, &st);
  if (reverse)
    reverse_array (keyed);
  if (st.bad && (st.x->kind == HZJ_UNDEFINED || st.y->kind == HZJ_UNDEFINED))
    {
      hzj_fail_undefined (ctx, st.x->kind == HZJ_UNDEFINED ? st.x : st.y);
      g_ptr_array_unref (keyed);
      return NULL;
    }
  if (st.bad)
    {
      hzj_type_error (ctx, "'<' not supported between instances of '%s' and '%s'",
                      hzj_type_name (st.x), hzj_type_name (st.y));
      g_ptr_array_unref (keyed);
      return NULL;
    }
  return keyed;
}

static HzjValue *
list_of_items (GPtrArray *keyed)
{
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < keyed->len; i++)
    hzj_list_push (out, hzj_ref (((Keyed *) keyed->pdata[i])->item));
  return out;
}

/* ---- filters ---- */

static HzjValue *
f_abs (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  if (v->kind == HZJ_INT || v->kind == HZJ_BOOL)
    {
      const gint64 i = v->kind == HZJ_INT ? v->i : v->b;
      if (i == G_MININT64)
        return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "OverflowError", "integer result does not fit in 64 bits");
      return hzj_int (i < 0 ? -i : i);
    }
  if (v->kind == HZJ_FLOAT)
    return hzj_float (fabs (v->f));
  return hzj_type_error (ctx, "bad operand type for abs(): '%s'", hzj_type_name (v));
}

static HzjValue *
f_attr (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "name", NULL };
  HZJ_BIND ("attr", names, 1);
  if (a[0]->kind != HZJ_STR || v->kind == HZJ_DICT)
    return hzj_undefined ();
  if (v->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, v);
  return hzj_getattr (ctx, v, a[0]->str.s);
}

static HzjValue *
f_batch (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "linecount", "fill_with", NULL };
  HZJ_BIND ("batch", names, 1);
  gint64 n;
  if (!hzj_want_int (ctx, a[0], "linecount", &n))
    return NULL;
  if (n <= 0)
    return hzj_value_error (ctx, "batch size must be positive");
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  HzjValue *out = hzj_list_new (FALSE), *row = NULL;
  for (guint i = 0; i < items->len; i++)
    {
      if (!row)
        row = hzj_list_new (FALSE);
      hzj_list_push (row, hzj_ref (items->pdata[i]));
      if ((gint64) row->items->len == n)
        hzj_list_push (out, g_steal_pointer (&row));
    }
  if (row)
    {
      while (a[1] && (gint64) row->items->len < n)
        hzj_list_push (row, hzj_ref (a[1]));
      hzj_list_push (out, row);
    }
  return out;
}

static HzjValue *
f_case (HzjCtx *ctx, HzjValue *v, HzjArgs *args, HzjCase mode)
{
  if (args->n_pos || args->n_kw)
    return hzj_type_error (ctx, "the filter takes no arguments");
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  return s ? hzj_str_case (s, mode) : NULL;
}

HZJ_VARIANT (f_capitalize, f_case, HZJ_CASE_CAPITALIZE)
HZJ_VARIANT (f_lower, f_case, HZJ_CASE_LOWER)
HZJ_VARIANT (f_upper, f_case, HZJ_CASE_UPPER)

static HzjValue *
f_center (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "width", NULL };
  HZJ_BIND ("center", names, 0);
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  g_autoptr (HzjValue) w = a[0] ? hzj_ref (a[0]) : hzj_int (80);
  return s ? empty_args_call (ctx, s, "center", &w, 1) : NULL;
}

static HzjValue *
f_default (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "default_value", "boolean", NULL };
  HZJ_BIND ("default", names, 0);
  if (v->kind == HZJ_UNDEFINED || (a[1] && hzj_truthy (a[1]) && !hzj_truthy (v)))
    return a[0] ? hzj_ref (a[0]) : hzj_str ("", 0, FALSE);
  return hzj_ref (v);
}

static HzjValue *
f_dictsort (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "case_sensitive", "by", "reverse", NULL };
  HZJ_BIND ("dictsort", names, 0);
  if (v->kind != HZJ_DICT)
    return hzj_type_error (ctx, "dictsort() needs a mapping, not %s", hzj_type_name (v));
  int pos = 0;
  if (a[1])
    {
      if (a[1]->kind == HZJ_STR && !strcmp (a[1]->str.s, "value"))
        pos = 1;
      else if (a[1]->kind != HZJ_STR || strcmp (a[1]->str.s, "key"))
        return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError",
                         "You can only sort by either \"key\" or \"value\"");
    }
  g_autoptr (GPtrArray) pairs = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  for (guint i = 0; i < v->dict->keys->len; i++)
    {
      HzjValue *pair = hzj_list_new (TRUE);
      hzj_list_push (pair, hzj_ref (v->dict->keys->pdata[i]));
      hzj_list_push (pair, hzj_ref (v->dict->vals->pdata[i]));
      g_ptr_array_add (pairs, pair);
    }
  g_autoptr (HzjValue) index = hzj_int (pos);
  g_autoptr (GPtrArray) keyed = sorted_keyed (ctx, pairs, index, a[0] && hzj_truthy (a[0]),
                                              a[2] && hzj_truthy (a[2]));
  return keyed ? list_of_items (keyed) : NULL;
}

static HzjValue *
f_escape (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  if (!s)
    return NULL;
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  for (gsize k = 0; k < s->str.len; k++)
    {
      const char c = s->str.s[k];
      const char *e = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '"' ? "&#34;"
                      : c == '\'' ? "&#39;" : NULL;
      if (e)
        hzj_buf_append (&b, e, strlen (e), hzj_runs_is_data (s->str.runs, s->str.n_runs, k));
      else
        hzj_buf_append_slice (&b, s->str.s, s->str.runs, s->str.n_runs, k, k + 1);
    }
  return hzj_buf_finish (ctx, &b);
}

static HzjValue *
f_first_last (HzjCtx *ctx, HzjValue *v, HzjArgs *args, gboolean last)
{
  (void) args;
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  if (items->len == 0)
    return hzj_undefined_new (g_strdup (last ? "No last item, sequence was empty."
                                             : "No first item, sequence was empty."), FALSE);
  return hzj_ref (items->pdata[last ? items->len - 1 : 0]);
}

HZJ_VARIANT (f_first, f_first_last, FALSE)
HZJ_VARIANT (f_last, f_first_last, TRUE)

/* Python's float(str): surrounding white space, "inf", "nan", underscores between digits */
static gboolean
parse_float (HzjValue *s, double *out)
{
  g_autoptr (HzjValue) t = hzj_str_strip (s, NULL, TRUE, TRUE);
  GString *g = g_string_new (NULL);
  for (gsize k = 0; k < t->str.len; k++)
    if (t->str.s[k] != '_' || (k > 0 && k + 1 < t->str.len && g_ascii_isdigit (t->str.s[k - 1]) &&
                               g_ascii_isdigit (t->str.s[k + 1])))
      g_string_append_c (g, t->str.s[k]);
  char *end = NULL;
  const gboolean hexish = strchr (g->str, 'x') || strchr (g->str, 'X');
  *out = g_ascii_strtod (g->str, &end);
  const gboolean ok = g->len > 0 && end && *end == '\0' && !hexish;
  g_string_free (g, TRUE);
  return ok;
}

static HzjValue *
f_float (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "default", NULL };
  HZJ_BIND ("float", names, 0);
  double x;
  if (v->kind == HZJ_UNDEFINED) /* float(Undefined) raises */
    return hzj_fail_undefined (ctx, v);
  switch (v->kind)
    {
    case HZJ_FLOAT:
      return hzj_ref (v);
    case HZJ_INT:
      return hzj_float ((double) v->i);
    case HZJ_BOOL:
      return hzj_float (v->b);
    case HZJ_STR:
      if (parse_float (v, &x))
        return hzj_float (x);
      break;
    default:
      break;
    }
  return a[0] ? hzj_ref (a[0]) : hzj_float (0.0);
}

static HzjValue *
f_int (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "default", "base", NULL };
  HZJ_BIND ("int", names, 0);
  gint64 base = 10;
  if (a[1] && !hzj_want_int (ctx, a[1], "base", &base))
    return NULL;
  double x;
  if (v->kind == HZJ_UNDEFINED) /* int(Undefined) raises */
    return hzj_fail_undefined (ctx, v);
  switch (v->kind)
    {
    case HZJ_INT:
      return hzj_ref (v);
    case HZJ_BOOL:
      return hzj_int (v->b);
    case HZJ_FLOAT:
      if (isfinite (v->f) && fabs (v->f) < 9.2e18)
        return hzj_int ((gint64) v->f);
      return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "OverflowError", "cannot convert float to integer");
    case HZJ_STR:
      {
        /* int(s, base): white space, sign, underscores, a 0x/0o/0b prefix matching base */
        g_autoptr (HzjValue) t = hzj_str_strip (v, NULL, TRUE, TRUE);
        const char *p = t->str.s;
        gboolean neg = FALSE;
        if (*p == '+' || *p == '-')
          neg = *p++ == '-';
        gint64 b = base;
        if (p[0] == '0' && p[1] && strchr ("xXoObB", p[1]))
          {
            const char k = g_ascii_tolower (p[1]);
            const gint64 pb = k == 'x' ? 16 : k == 'o' ? 8 : 2;
            if (b == pb || b == 0)
              b = pb, p += 2;
          }
        if (b == 0)
          b = 10;
        gboolean ok = *p != '\0' && b >= 2 && b <= 36 && (gsize) (p - t->str.s) + strlen (p) == t->str.len;
        guint64 acc = 0;
        for (const char *c = p; ok && *c; c++)
          {
            if (*c == '_' && c > p && c[1] && c[1] != '_')
              continue;
            const int d = g_ascii_isdigit (*c) ? *c - '0' : g_ascii_isalpha (*c) ? g_ascii_tolower (*c) - 'a' + 10 : 99;
            if (d >= b || acc > ((guint64) G_MAXINT64 - (guint64) d) / (guint64) b)
              ok = FALSE;
            else
              acc = acc * (guint64) b + (guint64) d;
          }
        if (ok)
          return hzj_int (neg ? -(gint64) acc : (gint64) acc);
        if (parse_float (v, &x) && isfinite (x) && fabs (x) < 9.2e18)
          return hzj_int ((gint64) x);
        break;
      }
    default:
      break;
    }
  return a[0] ? hzj_ref (a[0]) : hzj_int (0);
}

static HzjValue *
f_format (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  if (args->n_pos && args->n_kw)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError",
                     "can't handle positional and keyword arguments at the same time");
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  if (!s)
    return NULL;
  g_autoptr (HzjValue) params = args->n_kw ? hzj_dict_new () : hzj_list_new (TRUE);
  for (guint i = 0; i < args->n_kw; i++)
    hzj_dict_set (params, hzj_cstr (args->kw_names[i]), hzj_ref (args->kw_vals[i]));
  for (guint i = 0; i < args->n_pos; i++)
    hzj_list_push (params, hzj_ref (args->pos[i]));
  return hzj_str_percent (ctx, s, params);
}

/* Python's str.splitlines() of s, through the str method */
static HzjValue *
splitlines (HzjCtx *ctx, HzjValue *s)
{
  return empty_args_call (ctx, s, "splitlines", NULL, 0);
}

static HzjValue *
f_indent (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "width", "first", "blank", NULL };
  HZJ_BIND ("indent", names, 0);
  g_autoptr (HzjValue) ind = NULL;
  if (a[0] && a[0]->kind == HZJ_STR)
    ind = hzj_ref (a[0]);
  else
    {
      gint64 w = 4;
      if (a[0] && !hzj_want_int (ctx, a[0], "width", &w))
        return NULL;
      g_autoptr (HzjValue) sp = hzj_cstr (" ");
      g_autoptr (HzjValue) n = hzj_int (w);
      if (!(ind = hzj_op_binary (ctx, HZJ_OP_MUL, sp, n)))
        return NULL;
    }
  /* s += "\n" (the quirk that makes splitlines keep a last empty line): a string only */
  if (v->kind == HZJ_UNDEFINED)
    return hzj_fail_undefined (ctx, v);
  if (v->kind != HZJ_STR)
    return hzj_type_error (ctx, "unsupported operand type(s) for +=: '%s' and 'str'", hzj_type_name (v));
  HzjValue *s = v;
  HzjBuf t;
  hzj_buf_init (&t, G_MAXSIZE);
  hzj_buf_append_str (&t, s);
  hzj_buf_append (&t, "\n", 1, FALSE);
  g_autoptr (HzjValue) s2 = hzj_str_from_buf (&t);
  g_autoptr (HzjValue) lines = splitlines (ctx, s2);
  if (!lines)
    return NULL;
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  const gboolean blank = a[2] && hzj_truthy (a[2]);
  if (a[1] && hzj_truthy (a[1]))
    hzj_buf_append_str (&b, ind);
  for (guint i = 0; i < lines->items->len; i++)
    {
      HzjValue *line = lines->items->pdata[i];
      if (i)
        {
          hzj_buf_append (&b, "\n", 1, FALSE);
          if (blank || line->str.len)
            hzj_buf_append_str (&b, ind);
        }
      hzj_buf_append_str (&b, line);
    }
  return hzj_buf_finish (ctx, &b);
}

static HzjValue *
f_items (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  if (v->kind == HZJ_UNDEFINED)
    return hzj_list_new (FALSE);
  if (v->kind != HZJ_DICT)
    return hzj_type_error (ctx, "Can only get item pairs from a mapping.");
  return empty_args_call (ctx, v, "items", NULL, 0);
}

static HzjValue *
f_join (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "d", "attribute", NULL };
  HZJ_BIND ("join", names, 0);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  g_autoptr (HzjValue) sep = a[0] ? soft_str (ctx, a[0]) : hzj_str ("", 0, FALSE);
  if (!sep)
    return NULL;
  if (a[1])
    {
      /* each item looked up by Jinja2's attribute path */
      GPtrArray *found = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
      for (guint i = 0; i < items->len; i++)
        {
          HzjValue *it = hzj_get_path (ctx, items->pdata[i], a[1]);
          if (!it)
            {
              g_ptr_array_unref (found);
              return NULL;
            }
          g_ptr_array_add (found, it);
        }
      g_ptr_array_unref (items);
      items = found;
    }
  return hzj_str_join (ctx, sep, items, TRUE);
}

static HzjValue *
f_length (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  if (v->kind == HZJ_LOOP)
    return hzj_loop_attr (ctx, v, "length");
  const gssize n = hzj_length (v);
  if (n < 0)
    return hzj_type_error (ctx, "object of type '%s' has no len()", hzj_type_name (v));
  return hzj_int (n);
}

static HzjValue *
f_list (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < items->len; i++)
    hzj_list_push (out, hzj_ref (items->pdata[i]));
  return out;
}

static HzjValue *
f_map (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  if (!hzj_truthy (v)) /* Jinja2: `if value:` before iterating */
    return hzj_list_new (FALSE);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  HzjValue *attribute = NULL, *dflt = NULL;
  for (guint i = 0; i < args->n_kw; i++)
    if (!strcmp (args->kw_names[i], "attribute"))
      attribute = args->kw_vals[i];
    else if (!strcmp (args->kw_names[i], "default"))
      dflt = args->kw_vals[i];
  if (!attribute && (args->n_pos == 0 || args->pos[0]->kind != HZJ_STR))
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError", "map requires a filter argument");
  HzjArgs rest = { args->n_pos ? args->pos + 1 : NULL, args->n_pos ? args->n_pos - 1 : 0,
                   args->kw_names, args->kw_vals, attribute ? 0 : args->n_kw };
  g_autofree char *fname = attribute ? NULL : g_strndup (args->pos[0]->str.s, args->pos[0]->str.len);
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < items->len; i++)
    {
      HzjValue *r;
      if (attribute)
        {
          r = hzj_get_path (ctx, items->pdata[i], attribute);
          if (r && r->kind == HZJ_UNDEFINED && dflt)
            {
              hzj_unref (r);
              r = hzj_ref (dflt);
            }
        }
      else
        r = hzj_filter_apply (ctx, fname, items->pdata[i], &rest);
      if (!r)
        {
          hzj_unref (out);
          return NULL;
        }
      hzj_list_push (out, r);
    }
  return out;
}

static HzjValue *
f_minmax (HzjCtx *ctx, HzjValue *v, HzjArgs *args, gboolean max)
{
  static const char *const names[] = { "case_sensitive", "attribute", NULL };
  HZJ_BIND (max ? "max" : "min", names, 0);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  if (items->len == 0)
    return hzj_undefined_new (g_strdup ("No aggregated item, sequence was empty."), FALSE);
  g_autoptr (GPtrArray) keyed = sorted_keyed (ctx, items, a[1], a[0] && hzj_truthy (a[0]), FALSE);
  if (!keyed)
    return NULL;
  /* min: the first of the smallest; max: the first of the largest */
  guint at = 0;
  if (max)
    {
      at = keyed->len - 1;
      while (at > 0 && hzj_equal (((Keyed *) keyed->pdata[at - 1])->key, ((Keyed *) keyed->pdata[at])->key))
        at--;
    }
  return hzj_ref (((Keyed *) keyed->pdata[at])->item);
}

HZJ_VARIANT (f_max, f_minmax, TRUE)
HZJ_VARIANT (f_min, f_minmax, FALSE)

/* select / reject / selectattr / rejectattr */
static HzjValue *
select_or_reject (HzjCtx *ctx, HzjValue *v, HzjArgs *args, gboolean modfunc, gboolean lookup_attr)
{
  if (!hzj_truthy (v)) /* Jinja2: `if value:` before iterating */
    return hzj_list_new (FALSE);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  guint off = 0;
  HzjValue *attribute = NULL;
  if (lookup_attr)
    {
      if (args->n_pos == 0)
        return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError", "Missing parameter for attribute name");
      attribute = args->pos[off++];
    }
  g_autofree char *test = NULL;
  if (off < args->n_pos)
    {
      HzjValue *t = args->pos[off++];
      if (t->kind != HZJ_STR)
        return hzj_type_error (ctx, "a test name must be a string");
      test = g_strndup (t->str.s, t->str.len);
    }
  HzjArgs rest = { off < args->n_pos ? args->pos + off : NULL, args->n_pos - off, args->kw_names,
                   args->kw_vals, args->n_kw };
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < items->len; i++)
    {
      g_autoptr (HzjValue) item = attribute ? hzj_get_path (ctx, items->pdata[i], attribute)
                                            : hzj_ref (items->pdata[i]);
      const int t = !item ? -1 : test ? hzj_test_apply (ctx, test, item, &rest) : hzj_truthy (item);
      if (t < 0)
        {
          hzj_unref (out);
          return NULL;
        }
      if ((t > 0) == modfunc)
        hzj_list_push (out, hzj_ref (items->pdata[i]));
    }
  return out;
}

HZJ_VARIANT (f_select, select_or_reject, TRUE, FALSE)
HZJ_VARIANT (f_reject, select_or_reject, FALSE, FALSE)
HZJ_VARIANT (f_selectattr, select_or_reject, TRUE, TRUE)
HZJ_VARIANT (f_rejectattr, select_or_reject, FALSE, TRUE)

static HzjValue *
f_replace (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "old", "new", "count", NULL };
  HZJ_BIND ("replace", names, 2);
  gint64 count = -1;
  if (a[2] && a[2]->kind != HZJ_NONE && !hzj_want_int (ctx, a[2], "count", &count))
    return NULL;
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  g_autoptr (HzjValue) old = s ? soft_str (ctx, a[0]) : NULL;
  g_autoptr (HzjValue) new_ = old ? soft_str (ctx, a[1]) : NULL;
  return new_ ? hzj_str_replace (ctx, s, old, new_, count) : NULL;
}

static HzjValue *
f_reverse (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  g_autoptr (HzjValue) step = hzj_int (-1);
  if (v->kind == HZJ_STR || v->kind == HZJ_LIST || v->kind == HZJ_TUPLE)
    {
      HzjValue *r = hzj_op_slice (ctx, v, NULL, NULL, step);
      if (r && r->kind == HZJ_TUPLE)
        r->kind = HZJ_LIST;
      return r;
    }
  if (v->kind != HZJ_DICT && v->kind != HZJ_UNDEFINED)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError", "argument must be iterable");
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = items->len; i-- > 0;)
    hzj_list_push (out, hzj_ref (items->pdata[i]));
  return out;
}

static HzjValue *
f_round (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "precision", "method", NULL };
  HZJ_BIND ("round", names, 0);
  gint64 p = 0;
  if (a[0] && !hzj_want_int (ctx, a[0], "precision", &p))
    return NULL;
  const char *method = a[1] && a[1]->kind == HZJ_STR ? a[1]->str.s : "common";
  if (strcmp (method, "common") && strcmp (method, "ceil") && strcmp (method, "floor"))
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "FilterArgumentError", "method must be common, ceil or floor");
  if ((v->kind == HZJ_INT || v->kind == HZJ_BOOL) && !strcmp (method, "common") && p >= 0)
    return hzj_int (v->kind == HZJ_INT ? v->i : v->b);
  if (v->kind != HZJ_INT && v->kind != HZJ_FLOAT && v->kind != HZJ_BOOL)
    return hzj_type_error (ctx, "type %s doesn't define __round__ method", hzj_type_name (v));
  const double x = v->kind == HZJ_FLOAT ? v->f : v->kind == HZJ_INT ? (double) v->i : v->b;
  if (!isfinite (x))
    return hzj_float (x);
  if (strcmp (method, "common"))
    {
      const double scale = pow (10, (double) p);
      return hzj_float ((!strcmp (method, "ceil") ? ceil (x * scale) : floor (x * scale)) / scale);
    }
  if (p >= 0 && p <= 300)
    {
      /* correctly rounded, ties to even on the exact binary value (as Python's round) */
      char fmt[16], buf[512];
      g_snprintf (fmt, sizeof fmt, "%%.%" G_GINT64_FORMAT "f", p);
      if (fabs (x) < 1e300)
        {
          g_ascii_formatd (buf, sizeof buf, fmt, x);
          return hzj_float (g_ascii_strtod (buf, NULL));
        }
      return hzj_float (x);
    }
  const double scale = pow (10, (double) -p);
  return hzj_float (nearbyint (x / scale) * scale);
}

static HzjValue *
f_safe (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  return soft_str (ctx, v);
}

static HzjValue *
f_sort (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "reverse", "case_sensitive", "attribute", NULL };
  HZJ_BIND ("sort", names, 0);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  g_autoptr (GPtrArray) keyed = sorted_keyed (ctx, items, a[2], a[1] && hzj_truthy (a[1]),
                                              a[0] && hzj_truthy (a[0]));
  return keyed ? list_of_items (keyed) : NULL;
}

static HzjValue *
f_string (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  return soft_str (ctx, v);
}

static HzjValue *
f_sum (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "attribute", "start", NULL };
  HZJ_BIND ("sum", names, 0);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  HzjValue *acc = a[1] ? hzj_ref (a[1]) : hzj_int (0);
  for (guint i = 0; acc && i < items->len; i++)
    {
      g_autoptr (HzjValue) it = a[0] ? hzj_get_path (ctx, items->pdata[i], a[0]) : hzj_ref (items->pdata[i]);
      HzjValue *next = it ? hzj_op_binary (ctx, HZJ_OP_ADD, acc, it) : NULL;
      hzj_unref (acc);
      acc = next;
    }
  return acc;
}

/* Jinja2's do_title: words split at [-\s({\[<]+, each capitalised */
static HzjValue *
f_title (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  if (!s)
    return NULL;
  HzjBuf b;
  hzj_buf_init (&b, G_MAXSIZE);
  gboolean start = TRUE;
  for (gsize k = 0; k < s->str.len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s->str.s + k, s->str.len - k, &n);
      const gboolean sep = hzj_unichar_is_py_space (c) || (c < 0x80 && strchr ("-({[<", (int) c) && c);
      g_autoptr (HzjValue) ch = hzj_str (s->str.s + k, n, hzj_runs_is_data (s->str.runs, s->str.n_runs, k));
      g_autoptr (HzjValue) mapped = sep ? hzj_ref (ch) : hzj_str_case (ch, start ? HZJ_CASE_UPPER : HZJ_CASE_LOWER);
      hzj_buf_append_str (&b, mapped);
      start = sep;
      k += n;
    }
  return hzj_str_from_buf (&b);
}

static HzjValue *
f_tojson (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "ensure_ascii", "indent", "separators", "sort_keys", NULL };
  HZJ_BIND ("tojson", names, 0);
  g_autofree char *indent = NULL;
  if (a[1] && a[1]->kind != HZJ_NONE)
    {
      if (a[1]->kind == HZJ_STR)
        indent = g_strndup (a[1]->str.s, a[1]->str.len);
      else
        {
          gint64 n;
          if (!hzj_want_int (ctx, a[1], "indent", &n))
            return NULL;
          if (n > 1000)
            return hzj_fail_size (ctx);
          indent = g_strnfill ((gsize) MAX (n, 0), ' ');
        }
    }
  g_autofree char *item_sep = NULL, *key_sep = NULL;
  if (a[2] && a[2]->kind != HZJ_NONE)
    {
      if ((a[2]->kind != HZJ_TUPLE && a[2]->kind != HZJ_LIST) || a[2]->items->len != 2 ||
          ((HzjValue *) a[2]->items->pdata[0])->kind != HZJ_STR ||
          ((HzjValue *) a[2]->items->pdata[1])->kind != HZJ_STR)
        return hzj_value_error (ctx, "separators must be a pair of strings");
      item_sep = g_strdup (((HzjValue *) a[2]->items->pdata[0])->str.s);
      key_sep = g_strdup (((HzjValue *) a[2]->items->pdata[1])->str.s);
    }
  HzjBuf b;
  hzj_buf_init (&b, ctx->max_output);
  if (!hzj_tojson (ctx, v, indent, item_sep, key_sep, a[3] && hzj_truthy (a[3]), a[0] && hzj_truthy (a[0]), &b))
    {
      hzj_buf_clear (&b);
      return NULL;
    }
  return hzj_str_from_buf (&b);
}

static HzjValue *
f_trim (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "chars", NULL };
  HZJ_BIND ("trim", names, 0);
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  return s ? hzj_str_strip (s, a[0], TRUE, TRUE) : NULL;
}

static HzjValue *
f_truncate (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "length", "killwords", "end", "leeway", NULL };
  HZJ_BIND ("truncate", names, 0);
  gint64 length = 255, leeway = 5;
  if ((a[0] && !hzj_want_int (ctx, a[0], "length", &length)) ||
      (a[3] && a[3]->kind != HZJ_NONE && !hzj_want_int (ctx, a[3], "leeway", &leeway)))
    return NULL;
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  g_autoptr (HzjValue) end = a[2] ? soft_str (ctx, a[2]) : hzj_cstr ("...");
  if (!s || !end)
    return NULL;
  const gint64 end_len = hzj_length (end);
  if (length < end_len || leeway < 0)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "AssertionError", "expected length >= %" G_GINT64_FORMAT
                     " and leeway >= 0", end_len);
  if (hzj_length (s) <= length + leeway)
    return hzj_ref (s);
  g_autoptr (HzjValue) stop = hzj_int (length - end_len);
  g_autoptr (HzjValue) head = hzj_op_slice (ctx, s, NULL, stop, NULL);
  g_autoptr (HzjValue) kept = NULL;
  if (a[1] && hzj_truthy (a[1]))
    kept = hzj_ref (head);
  else
    {
      g_autoptr (HzjValue) space = hzj_cstr (" ");
      g_autoptr (HzjValue) parts = hzj_str_split (ctx, head, space, 1, TRUE);
      kept = hzj_ref (parts->items->pdata[0]);
    }
  return hzj_op_binary (ctx, HZJ_OP_ADD, kept, end);
}

static HzjValue *
f_unique (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  static const char *const names[] = { "case_sensitive", "attribute", NULL };
  HZJ_BIND ("unique", names, 0);
  g_autoptr (GPtrArray) items = hzj_iterate (ctx, v);
  if (!items)
    return NULL;
  g_autoptr (GPtrArray) seen = g_ptr_array_new_with_free_func ((GDestroyNotify) hzj_unref);
  HzjValue *out = hzj_list_new (FALSE);
  for (guint i = 0; i < items->len; i++)
    {
      HzjValue *key = sort_key (ctx, items->pdata[i], a[1], a[0] && hzj_truthy (a[0]));
      if (!key)
        {
          hzj_unref (out);
          return NULL;
        }
      gboolean dup = FALSE;
      for (guint j = 0; j < seen->len && !dup; j++)
        dup = hzj_equal (seen->pdata[j], key);
      if (dup)
        hzj_unref (key);
      else
        {
          g_ptr_array_add (seen, key);
          hzj_list_push (out, hzj_ref (items->pdata[i]));
        }
    }
  return out;
}

static HzjValue *
f_wordcount (HzjCtx *ctx, HzjValue *v, HzjArgs *args)
{
  (void) args;
  g_autoptr (HzjValue) s = soft_str (ctx, v);
  if (!s)
    return NULL;
  gint64 words = 0;
  gboolean in_word = FALSE;
  for (gsize k = 0; k < s->str.len;)
    {
      gsize n;
      const gunichar c = hzj_utf8_get (s->str.s + k, s->str.len - k, &n);
      const gboolean w = g_unichar_isalnum (c) || c == '_';
      words += w && !in_word;
      in_word = w;
      k += n;
    }
  return hzj_int (words);
}

typedef struct {
  const char *name;
  HzjFn fn;
} Filter;

static const Filter filters[] = {
  { "abs", f_abs }, { "attr", f_attr }, { "batch", f_batch }, { "capitalize", f_capitalize },
  { "center", f_center }, { "count", f_length }, { "d", f_default }, { "default", f_default },
  { "dictsort", f_dictsort }, { "e", f_escape }, { "escape", f_escape }, { "first", f_first },
  { "float", f_float }, { "forceescape", f_escape }, { "format", f_format }, { "indent", f_indent },
  { "int", f_int }, { "items", f_items }, { "join", f_join }, { "last", f_last },
  { "length", f_length }, { "list", f_list }, { "lower", f_lower }, { "map", f_map },
  { "max", f_max }, { "min", f_min }, { "reject", f_reject }, { "rejectattr", f_rejectattr },
  { "replace", f_replace }, { "reverse", f_reverse }, { "round", f_round }, { "safe", f_safe },
  { "select", f_select }, { "selectattr", f_selectattr }, { "sort", f_sort }, { "string", f_string },
  { "sum", f_sum }, { "title", f_title }, { "tojson", f_tojson }, { "trim", f_trim },
  { "truncate", f_truncate }, { "unique", f_unique }, { "upper", f_upper },
  { "wordcount", f_wordcount },
};

static HzjFn
filter_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (filters); i++)
    if (!strcmp (filters[i].name, name))
      return filters[i].fn;
  return NULL;
}

gboolean
hzj_filter_exists (const char *name)
{
  return filter_lookup (name) != NULL;
}

HzjValue *
hzj_filter_apply (HzjCtx *ctx, const char *name, HzjValue *value, HzjArgs *args)
{
  if (!hzj_step (ctx))
    return NULL;
  const HzjFn fn = filter_lookup (name);
  if (!fn)
    return hzj_fail (ctx, HZ_JINJA_ERROR_RUNTIME, "TemplateRuntimeError", "No filter named '%s' found.", name);
  return fn (ctx, value, args);
}
